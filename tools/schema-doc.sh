#!/bin/sh
# schema-doc.sh: rewrite the "Full schema" SQL block of common/db/schema.md from
# the live schema that wearmond creates (test_db checks the two agree).
# Usage: tools/schema-doc.sh BUILD_DIR
set -eu
build=$(cd "${1:-build}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/w.conf" <<CONF
[wearmon]
database = $tmp/w.db
[target t]
device = $tmp/disk.img
file_size = 4M
sizes = 1M
fill = no
workload = seqwrite
block_size = 64k
queue_depth = 1
cycles = 1
CONF
chmod 0600 "$tmp/w.conf"
"$build/wearmond" --foreground -c "$tmp/w.conf" >/dev/null 2>&1 || true
sqlite3 "$tmp/w.db" "SELECT sql || ';' FROM sqlite_master WHERE sql NOT NULL ORDER BY rowid" \
	>"$tmp/schema.sql"
python3 - "$tmp/schema.sql" common/db/schema.md <<'PY'
import re, sys
schema = open(sys.argv[1]).read().strip()
doc = open(sys.argv[2]).read()
start = doc.index("```sql\nCREATE")
end = doc.index("```", start + 7)
open(sys.argv[2], "w").write(doc[:start] + "```sql\n" + schema + "\n" + doc[end:])
PY
