"""One way in to the database, and reads that do not grow with the history:
the CLI's sources hold no SQL (their reads are named queries under
common/db/query/), and `wearmon export samples` and `wearmon history`
print rows as they come, so their peak memory stays the same when the
history grows fourfold. The query plans of the named reads are checked by
tests/unit/test_query.c."""

import re
import subprocess
from pathlib import Path

import pytest

from conftest import WEARMON, query, sh, two_cycle_file_db

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "tools" / "wearmon"

# Files whose reads have not moved to common/db/query/ yet: none.
NOT_YET = set()

STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
# A message may name the pragma it reports on "(PRAGMA integrity_check)":
# that is text for the user, not a statement.
SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|FROM|JOIN|WHERE|(?<!\()PRAGMA|CREATE|GROUP BY|"
                 r"ORDER BY|LIMIT)\b")


def sql_in(path):
    """The string literals of a C file that read as SQL."""
    return [m.group(0) for m in STRING.finditer(path.read_text()) if SQL.search(m.group(0))]


def test_cli_sources_hold_no_sql():
    files = sorted(p for p in CLI.iterdir() if p.suffix in (".c", ".h"))
    assert any(p.name == "wearmon_export.c" for p in files)
    found = {p.name: sql_in(p) for p in files if p.name not in NOT_YET}
    assert {k: v for k, v in found.items() if v} == {}
    # the check sees SQL where there is some
    assert sql_in(ROOT / "common" / "db" / "query" / "query_charts.c")


def test_the_query_layer_holds_the_reads():
    src = "".join(p.read_text() for p in (ROOT / "common" / "db" / "query").glob("*.c"))
    for what in ("FROM samples WHERE iteration_id", "FROM events e", "FROM runs",
                 "baseline_iteration_id"):
        assert what in src


# ---- constant memory ---------------------------------------------------------


def peak_rss_kib(argv):
    """Run argv (output discarded); its peak resident set in KiB, as
    /usr/bin/time reports it (a child forked from this Python would carry
    Python's own high-water mark across exec)."""
    p = subprocess.run(["/usr/bin/time", "-f", "maxrss %M", *[str(a) for a in argv]],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    return int(re.findall(r"^maxrss (\d+)$", p.stderr, re.M)[-1])


def sample_table(db):
    """The table that stores the samples (the samples table, or the table
    behind a samples view) and its columns."""
    kind = query(db, "SELECT type FROM sqlite_master WHERE name = 'samples'")[0]["type"]
    names = ["samples"] if kind == "table" else [
        r["name"] for r in query(db, "SELECT name FROM sqlite_master WHERE type = 'table'"
                                 " AND name LIKE 'sample%' ORDER BY name")]
    for name in names:
        cols = [r["name"] for r in query(db, f"SELECT name FROM pragma_table_info('{name}')")]
        if "iteration_id" in cols:
            return name, cols
    pytest.fail("no table of samples with an iteration_id column")


def grow_samples(db, rows):
    """Copies of the daemon's own sample rows, under iteration ids beyond
    the real ones, until the samples view holds at least rows rows."""
    table, cols = sample_table(db)
    have = query(db, "SELECT count(*) AS n FROM samples")[0]["n"]
    base = query(db, f"SELECT count(*) AS n FROM {table} WHERE iteration_id < 1000000")[0]["n"]
    assert base > 0
    copies = -(-(rows - have) // base)
    first = query(db, f"SELECT coalesce(max(iteration_id), 0) / 1000000 + 1 AS k"
                      f" FROM {table}")[0]["k"]
    rest = ", ".join(f'"{c}"' for c in cols if c != "iteration_id")
    sh("sqlite3", db,
       f"WITH RECURSIVE n(k) AS (SELECT {first} UNION ALL SELECT k + 1 FROM n"
       f" WHERE k < {first + copies - 1})"
       f" INSERT INTO {table} (iteration_id, {rest})"
       f" SELECT s.iteration_id + n.k * 1000000, {rest.replace(chr(34), '')}"
       f" FROM n, (SELECT * FROM {table} WHERE iteration_id < 1000000) s")
    return query(db, "SELECT count(*) AS n FROM samples")[0]["n"]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return two_cycle_file_db(tmp_path_factory.mktemp("layers"))


def test_export_samples_in_constant_memory(db):
    def export_rss():
        return {fmt: peak_rss_kib([WEARMON, "-d", db, "export", "samples", "--format", fmt])
                for fmt in ("csv", "json")}

    small = grow_samples(db, 50000)
    rss_small = export_rss()
    big = grow_samples(db, 4 * small)
    assert big >= 4 * small
    rss_big = export_rss()
    print(f"export samples peak RSS (KiB): {small} rows {rss_small}, {big} rows {rss_big}")
    for fmt in rss_big:
        grown_bytes = (rss_big[fmt] - rss_small[fmt]) * 1024
        # Whole rows kept would cost hundreds of bytes each (about 480
        # before export streamed); SQLite's page cache and allocator noise
        # stay under a few MiB, whatever the row count.
        assert grown_bytes < 24 * (big - small), (fmt, small, rss_small, big, rss_big)


def grow_iterations(db, rows):
    """Copies of the daemon's own iteration rows (same cycles, numbers
    beyond the real ones) until iterations holds at least rows rows."""
    cols = [r["name"] for r in query(db, "SELECT name FROM pragma_table_info('iterations')")
            if r["name"] not in ("id", "number")]
    have = query(db, "SELECT count(*) AS n FROM iterations")[0]["n"]
    base = query(db, "SELECT count(*) AS n FROM iterations WHERE number < 1000000")[0]["n"]
    copies = -(-(rows - have) // base)
    first = query(db, "SELECT max(number) / 1000000 + 1 AS k FROM iterations")[0]["k"]
    names = ", ".join(cols)
    # copies into the same few cycles: schema 21's triggers would recompute
    # a cycle of thousands of rows per row copied (the daemon's cycles hold
    # tens); this test reads history, not the per-cycle figures
    sh("sqlite3", db, "DROP TRIGGER IF EXISTS iterations_figures_insert")
    sh("sqlite3", db,
       f"WITH RECURSIVE n(k) AS (SELECT {first} UNION ALL SELECT k + 1 FROM n"
       f" WHERE k < {first + copies - 1})"
       f" INSERT INTO iterations (number, {names})"
       f" SELECT i.number + n.k * 1000000, {', '.join('i.' + c for c in cols)}"
       f" FROM n, (SELECT * FROM iterations WHERE number < 1000000) i")
    return query(db, "SELECT count(*) AS n FROM iterations")[0]["n"]


def test_history_in_constant_memory(db):
    def history_rss():
        return {fmt: peak_rss_kib([WEARMON, "-d", db, "history", "--format", fmt])
                for fmt in ("table", "csv", "json")}

    small = grow_iterations(db, 10000)
    rss_small = history_rss()
    big = grow_iterations(db, 4 * small)
    assert big >= 4 * small
    rss_big = history_rss()
    print(f"history peak RSS (KiB): {small} rows {rss_small}, {big} rows {rss_big}")
    for fmt in rss_big:
        grown_bytes = (rss_big[fmt] - rss_small[fmt]) * 1024
        # a row of history has about 70 columns: whole rows kept would
        # cost kilobytes each (630 MiB for a year before it streamed)
        assert grown_bytes < 100 * (big - small), (fmt, small, rss_small, big, rss_big)
