"""The charts and the report do work in proportion to the history, not to its
square: a real wearmond history (a file target, three cycles with a TRIM
after each) is replicated with SQL into D and 3D days of it, and every
`wearmon plot` kind and `wearmon report` run on both. The work is counted as
SQLite VM steps (WEARMON_VM_STEPS, see wearmon(1)), which do not depend on
the machine's speed; 3x the history may cost at most 4x the steps. A
correlated sum per action cycle (the wear marks before) grew 6.7x here."""

import os
import re
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import TEST_TMP, WEARMON, run_wearmond, write_conf

DAYS = 12  # copies of the base history in the smaller database; 3x in the larger
KINDS = ["sizes", "cycles", "wear", "latency"]

# Columns that carry a row id or a cycle number, per table, and how each
# copy k moves them; every other column is copied as it is.
TIMES = ("started_at", "ended_at", "action_started_at", "action_ended_at", "at")


@pytest.fixture(scope="module")
def moddir():
    d = Path(tempfile.mkdtemp(prefix="wearmon-growth-", dir=TEST_TMP))
    try:
        yield d
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", str(d)])


@pytest.fixture(scope="module")
def base(moddir):
    d = moddir
    conf = write_conf(d / "w.conf", f"[wearmon]\ndatabase = {d}/w.db\n\n[target f1]\n"
                      f"device = {d}/f1.img\nfile_size = 32M\nsizes = 50% 100%\n"
                      "fill = yes\nduration = 0.5s\ncycles = 3\nbetween_cycles = trim\n"
                      "sample_interval = 0.25s\n")
    p = run_wearmond(conf, timeout=300)
    assert p.returncode == 0, p.stderr
    (d / "f1.img").unlink()
    yield d / "w.db"


def columns(c, table):
    return [r[1] for r in c.execute(f"PRAGMA table_info({table})")]


def copy_rows(c, table, moves, k, where="1"):
    """Copy table's base rows once more as copy k (moves: column -> SQL)."""
    cols = columns(c, table)
    exprs = []
    for col in cols:
        if col in moves:
            exprs.append(moves[col])
        elif col in TIMES:
            exprs.append(f"CASE WHEN {col} IS NULL THEN NULL ELSE"
                         f" strftime('%Y-%m-%dT%H:%M:%fZ', {col}, '+{k} days') END")
        else:
            exprs.append(col)
    c.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {', '.join(exprs)}"
              f" FROM {table} WHERE {where}")


def replicate(src, dst, days):
    """dst: src's history followed by days - 1 more copies of it, one a day,
    ids and cycle numbers moved past the ones before; every copy keeps the
    baseline rows of the first (one campaign, as a long run would)."""
    dst.write_bytes(src.read_bytes())
    c = sqlite3.connect(dst)
    mx = {t: c.execute(f"SELECT max(id) FROM {t}").fetchone()[0] or 0
          for t in ("cycles", "iterations", "health", "events")}
    ncy = c.execute("SELECT max(number) FROM cycles").fetchone()[0]
    with c:
        for k in range(1, days):
            co, io, ho, eo = (k * mx["cycles"], k * mx["iterations"], k * mx["health"],
                              k * mx["events"])
            base_cy, base_it = f"id <= {mx['cycles']}", f"id <= {mx['iterations']}"
            copy_rows(c, "cycles", {"id": f"id + {co}", "number": f"number + {k * ncy}"}, k,
                      base_cy)
            copy_rows(c, "iterations", {"id": f"id + {io}", "cycle_id": f"cycle_id + {co}"},
                      k, base_it)
            copy_rows(c, "samples", {"iteration_id": f"iteration_id + {io}"}, k,
                      f"iteration_id <= {mx['iterations']}")
            copy_rows(c, "wear", {"iteration_id": f"iteration_id + {io}"}, k,
                      f"iteration_id <= {mx['iterations']}")
            copy_rows(c, "health", {"id": f"id + {ho}", "cycle_id": f"cycle_id + {co}"}, k,
                      f"id <= {mx['health']}")
            copy_rows(c, "events", {"id": f"id + {eo}",
                                    "cycle_id": f"cycle_id + {co}",
                                    "iteration_id": f"iteration_id + {io}"}, k,
                      f"id <= {mx['events']}")
    c.close()
    return dst


def steps(db, *args):
    p = subprocess.run([str(WEARMON), "-d", str(db)] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "WEARMON_VM_STEPS": "1"})
    assert p.returncode == 0, p.stderr
    m = re.search(r"wearmon: (\d+) SQLite VM steps", p.stderr)
    assert m, p.stderr
    return int(m.group(1))


def commands(db, out):
    """Every plot kind and the report, as argument lists for db."""
    last = sqlite3.connect(db).execute(
        "SELECT max(id) FROM iterations WHERE status = 'done'").fetchone()[0]
    cmds = {k: ["plot", "--kind", k, "-o", out / f"{k}.svg"] for k in KINDS}
    cmds["samples"] = ["plot", "--kind", "samples", "--iteration", last, "-o",
                       out / "samples.svg"]
    cmds["latency-trace"] = ["plot", "--kind", "latency", "--iteration", last, "-o",
                             out / "trace.svg"]
    cmds["report"] = ["report", "-o", out / "report.html"]
    return cmds


def test_work_grows_linearly_with_the_history(base, moddir):
    tmp_path = moddir
    small = replicate(base, tmp_path / "d1.db", DAYS)
    large = replicate(base, tmp_path / "d3.db", 3 * DAYS)
    n = [sqlite3.connect(db).execute("SELECT count(*) FROM iterations").fetchone()[0]
         for db in (small, large)]
    assert n[1] == 3 * n[0]
    ratios = {}
    for name, args in commands(small, tmp_path).items():
        a = steps(small, *args)
        b = steps(large, *commands(large, tmp_path)[name])
        ratios[name] = (a, b, b / a)
    for name, (a, b, r) in ratios.items():
        print(f"{name}: {a} -> {b} VM steps for 3x the history ({r:.2f}x)")
    bad = {k: v for k, v in ratios.items() if v[2] > 4}
    assert not bad, f"work grows faster than the history: {bad}"
    # the history is read: the charts over it do more work on more of it
    for name in KINDS + ["report"]:
        assert ratios[name][2] > 1.5, (name, ratios[name])
    # one iteration's charts do not depend on the history around it
    for name in ("samples", "latency-trace"):
        assert ratios[name][2] < 1.5, (name, ratios[name])
