"""scale.py: what the scale test (tests/integration/test_scale.py) and the
year-scale bench (tools/bench/bench.py --scale) share: building a database
with build/scalegen, the CLI's reads of a long history run with build/sqltrace.so
(the SQL they prepare and the SQLite steps they take), their query plans,
the README queries, and peak RSS. Nothing here asserts or judges speed.
tools/scalegen/README.md describes scalegen."""

import os
import re
import resource
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLOT_KINDS = ("sizes", "cycles", "samples", "wear", "latency")
# Tables whose full scan grows with the whole history: iterations and the
# samples, whatever table holds them (a samples view over integer rows or
# per-minute rollups names them sample...).
BIG_TABLES = (r"samples?\w*", "iterations")
# Words that can follow a table name in FROM/JOIN and are no alias.
_NOT_ALIAS = {"where", "join", "on", "left", "inner", "cross", "group", "order", "limit",
              "using", "natural", "window", "union", "as", "and", "or", "outer", "full",
              "right", "having", "except", "intersect", "indexed", "not"}


def generate(build, targets, days, out, seed=1, extra=()):
    """Run scalegen (extra: more of its options); returns (seconds, the
    line it printed)."""
    t = time.monotonic()
    p = subprocess.run([str(Path(build) / "scalegen"), "--targets", str(targets), "--days",
                        str(days), "--out", str(out), "--seed", str(seed), *extra],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"scalegen failed: {p.stderr}")
    return time.monotonic() - t, p.stdout.strip()


def sqlite(db, *args, timeout=3600):
    """The sqlite3 CLI's stdout (read-only)."""
    return subprocess.run(["sqlite3", "-readonly", str(db), *args], check=True,
                          capture_output=True, text=True, timeout=timeout).stdout


def checkpoint(db):
    """Fold the WAL into the file, so its size is the history's."""
    subprocess.run(["sqlite3", str(db), "PRAGMA wal_checkpoint(TRUNCATE);"], check=True,
                   capture_output=True)


def size_per_target_day(db, targets, days):
    """The file's MiB per target-day."""
    return os.stat(db).st_size / (1 << 20) / targets / days


def latest_iteration(db, target):
    return int(sqlite(db, "SELECT max(i.id) FROM iterations i JOIN targets t "
                      f"ON t.id = i.target_id WHERE t.name = '{target}' AND i.status = 'done'"))


def cli_reads(db, out_dir, target="ssd1"):
    """The CLI's reads of one target of a long history (status, history,
    show, alerts, every plot, the report): (name, argv after -d DB);
    db None: the names only (show and plot --kind samples get no ID)."""
    it = latest_iteration(db, target) if db else 0
    reads = [("status", ["status"]),
             (f"status --target {target}", ["status", "--target", target]),
             (f"history --target {target} --since 1d",
              ["history", "--target", target, "--since", "1d"]),
             (f"show {target}'s latest", ["show", str(it)]),
             (f"alerts --target {target}", ["alerts", "--target", target])]
    for kind in PLOT_KINDS:
        extra = ["--iteration", str(it)] if kind == "samples" else ["--target", target]
        reads.append((f"plot --kind {kind}",
                      ["plot", "--kind", kind, *extra, "-o", str(Path(out_dir) / f"{kind}.svg")]))
    reads.append((f"report --target {target}",
                  ["report", "--target", target, "-o", str(Path(out_dir) / "report.html")]))
    return reads


def _limit_memory(limit):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def run_traced(build, db, argv, mem_limit=None, timeout=None):
    """Run wearmon -d db argv with build/sqltrace.so (killed after timeout
    seconds when given: rc 124). Returns a dict: rc, seconds, rss (peak,
    bytes), out (bytes written to stdout), sql (the statements it prepared,
    in order), vm and scan (SQLite's virtual machine steps and full-scan
    steps, summed over its statements), stderr."""
    with tempfile.NamedTemporaryFile(prefix="wearmon-sqltrace-", suffix=".sql") as tr:
        env = dict(os.environ, LD_PRELOAD=str(Path(build).resolve() / "sqltrace.so"),
                   WEARMON_SQLTRACE=tr.name)
        t = time.monotonic()
        with tempfile.TemporaryFile() as errf:
            limit = ["timeout", "-s", "KILL", str(timeout)] if timeout else []
            proc = subprocess.Popen([*limit, str(Path(build) / "wearmon"), "-d", str(db), *argv],
                                    stdout=subprocess.PIPE, stderr=errf, env=env,
                                    preexec_fn=_limit_memory(mem_limit) if mem_limit else None)
            out = 0
            while True:
                chunk = proc.stdout.read(1 << 20)
                if not chunk:
                    break
                out += len(chunk)
            _, status, ru = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            if timeout and proc.returncode in (124, 137, -9):
                proc.returncode = 124
            errf.seek(0)
            err = errf.read().decode(errors="replace")
        secs = time.monotonic() - t
        text = Path(tr.name).read_text(errors="replace")
    steps = re.findall(r"^-- steps (\d+) (\d+)$", text, re.M)
    body = re.sub(r"^-- steps .*$", "", text, flags=re.M)
    sql = [s.strip() for s in body.split("\n-- end\n") if s.strip()]
    return {"rc": proc.returncode, "seconds": secs, "rss": ru.ru_maxrss * 1024, "out": out,
            "sql": sql, "vm": sum(int(a) for a, _ in steps),
            "scan": sum(int(b) for _, b in steps), "stderr": err}


def _aliases(sql):
    """Names under which sql (a statement or view) reads a big table."""
    names = {}
    pat = r"\b(?:from|join)\s+(" + "|".join(BIG_TABLES) + r")\b(?:\s+(?:as\s+)?(\w+))?"
    for m in re.finditer(pat, sql, re.I):
        table, alias = m.group(1), m.group(2)
        names[table] = table
        if alias and alias.lower() not in _NOT_ALIAS:
            names[alias] = table
    return names


def view_sql(db):
    return sqlite(db, "SELECT group_concat(sql, ';') FROM sqlite_master WHERE type = 'view'")


def plan(db, sql):
    """EXPLAIN QUERY PLAN's lines for sql (its parameters unbound)."""
    return sqlite(db, f"EXPLAIN QUERY PLAN {sql}").splitlines()


def full_scans(db, sql, views=None):
    """The plan lines of sql that scan samples or iterations in full (a SCAN,
    with or without an index, of one of them under any alias its text or a
    view it reads gives them)."""
    names = _aliases(sql)
    names.update(_aliases(views if views is not None else view_sql(db)))
    bad = []
    for line in plan(db, sql):
        m = re.search(r"\bSCAN (\w+)", line)
        if m and m.group(1) in names:
            bad.append(line.strip())
    return bad


def is_read(sql):
    """A statement worth a plan: a SELECT or WITH that is not the CLI's own
    look at the schema."""
    s = sql.lstrip().lower()
    return (s.startswith("select") or s.startswith("with")) and "sqlite_master" not in s \
        and "pragma_table_info" not in s


def readme_queries():
    """The README's and tools/README-querying.md's SQL blocks: (where, sql)."""
    out = []
    for rel in ("README.md", "tools/README-querying.md"):
        text = (REPO / rel).read_text()
        for k, m in enumerate(re.finditer(r"```sql\n(.*?)```", text, re.S), 1):
            out.append((f"{rel} query {k}", m.group(1).strip()))
    return out


def query_run(db, sql, timeout=3600):
    """(seconds, virtual machine steps, rows returned) of sql in the sqlite3
    CLI; (None, None, None) when it took longer than timeout."""
    t = time.monotonic()
    try:
        out = sqlite(db, ".stats on", sql, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, None, None
    secs = time.monotonic() - t
    m = re.findall(r"Virtual Machine Steps:\s+(\d+)", out)
    # the statistics follow each statement's rows, from "Memory Used:"
    rows = sum(1 for ln in re.split(r"^Memory Used:.*?(?=^Memory Used:|\Z)", out,
                                    flags=re.M | re.S)[0].splitlines() if ln.strip())
    return secs, sum(int(x) for x in m), rows


def query_steps(db, sql, timeout=3600):
    """(seconds, virtual machine steps) of sql in the sqlite3 CLI; (None,
    None) when it took longer than timeout."""
    secs, steps, _ = query_run(db, sql, timeout)
    return secs, steps
