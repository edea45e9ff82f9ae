"""The history a person reads: the wearmon CLI on a database from a real
wearmond run (3 cycles over 3 sizes with TRIM between them, on a loop device
this module creates), on an empty, a foreign, an old and a missing database;
its plots rendered to PNG; the README's queries; the man pages."""

import csv
import functools
import io
import json
import math
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import (TEST_TMP, REPO, WEARMON, run_wearmon, MiB, query, run_wearmond, sh,
                      start_wearmond, stop, wait_for, write_conf)

SIZES = [8 * MiB, 16 * MiB, 32 * MiB]
CYCLES = 3
SVG_NS = "{http://www.w3.org/2000/svg}"


def conf_text(db, dev, **over):
    keys = {
        "device": dev,
        "allow_destroy": "yes",
        "sizes": "8M 16M 32M",
        "fill": "yes",
        "fill_queue_depth": "8",
        "workload": "randwrite",
        "block_size": "4k",
        "queue_depth": "16",
        "amount": "64x",          # the duration ends each measured phase
        "duration": "0.4s",
        "cycles": str(CYCLES),
        "between_cycles": "trim",
        "sample_interval": "0.1s",
    }
    keys.update(over)
    body = "\n".join(f"{k} = {v}" for k, v in keys.items())
    return f"[wearmon]\ndatabase = {db}\n\n[target lab1]\n{body}\n"


wearmon = functools.partial(run_wearmon, timeout=60)


@pytest.fixture(scope="module")
def moddir():
    d = Path(tempfile.mkdtemp(prefix="wearmon-cli-", dir=TEST_TMP))
    try:
        yield d
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", str(d)])


@pytest.fixture(scope="module")
def db(moddir):
    """A database from one real run, made once for the module. The loop
    device is attached here to a file created here, and detached after."""
    img = moddir / "disk.img"
    with open(img, "wb") as f:
        f.truncate(64 * MiB)
    dev = sh("losetup", "--show", "-f", img).stdout.strip()
    try:
        path = moddir / "history.db"
        conf = write_conf(moddir / "w.conf", conf_text(path, dev))
        p = run_wearmond(conf, timeout=120)
        assert p.returncode == 0, p.stderr
        yield path
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)
        img.unlink()


@pytest.fixture(scope="module")
def iterations(db):
    return query(db, "SELECT * FROM iterations ORDER BY id")


def test_the_run_is_what_the_tests_expect(db, iterations):
    assert len(iterations) == CYCLES * len(SIZES)
    assert all(i["status"] == "done" for i in iterations)
    cycles = query(db, "SELECT number, action, action_outcome FROM cycles ORDER BY number")
    assert [(c["number"], c["action"], c["action_outcome"]) for c in cycles] == \
        [(n, "trim", "ok") for n in range(1, CYCLES + 1)]


# ---- status ---------------------------------------------------------------

def test_status_of_a_finished_run(db, iterations):
    out = wearmon("status", db=db, check=0).stdout
    last = iterations[-1]
    assert re.search(r"^wearmond: stopped .* \(exit status 0", out, re.M), out
    assert re.search(r"^lab1  /dev/loop\d+ \(block, 64\.0 MiB\)$", out, re.M), out
    assert (f"cycle {CYCLES} of {CYCLES}, size 3 of 3 (32.0 MiB), iteration 3, "
            "randwrite 4.00 KiB QD16") in out
    assert f"  last done   {last['mibps_avg']:.1f} MiB/s average at 32.0 MiB, cycle {CYCLES}" in out
    assert f"  cycle       {CYCLES} done, then trim: ok" in out
    # the baseline as the query found it: its MiB/s, cycle and iteration, and the rule
    assert re.search(r"% of its baseline [0-9.]+ MiB/s, cycle 1 iteration \d+: the first done "
                     r"run of this size, workload and block size in the campaign", out), out
    assert wearmon("status", "--target", "lab1", db=db, check=0).stdout == out


def test_status_while_the_daemon_writes(workdir, make_loop, db):
    """Readers work beside the writer (WAL): status shows the running
    iteration, history the committed ones."""
    loop = make_loop(64 * MiB)
    live = workdir / "live.db"
    # Phases of 3 s: the daemon publishes a running phase's MiB/s once a
    # second, and a status that a loaded machine takes a second to answer
    # must still find one running (with 1 s phases it often found none).
    conf = write_conf(workdir / "live.conf",
                      conf_text(live, loop.dev, duration="3s", cycles="0"))
    proc = start_wearmond(conf)
    try:
        # into cycle 2, so each size has an earlier run to estimate from
        assert wait_for(lambda: live.exists() and query(
            live, "SELECT count(*) AS n FROM iterations WHERE status = 'done'")[0]["n"] >= 3,
            timeout=180)
        # the daemon publishes each running phase's bytes and MiB/s once a second
        out = wait_for(lambda: (lambda o: o if re.search(r"MiB/s +now [0-9.]+ ", o) else None)(
            wearmon("status", db=live, check=0).stdout), timeout=180)
        assert out
        assert re.search(r"^wearmond: running since .* \(pid %d\)" % proc.pid, out, re.M), out
        assert re.search(r"^  now         cycle \d+, size \d of 3", out, re.M), out
        assert re.search(r"^  phase       (fill|measure), running for", out, re.M), out
        assert re.search(r"^  progress    \d+% of the (fill|measure) phase, ETA", out, re.M), out
        live_row = query(live, "SELECT phase, mibps, phase_bytes FROM progress")[0]
        assert live_row["phase"] in ("fill", "measure", "pause", "none")
        hist = json.loads(wearmon("history", "--format", "json", db=live, check=0).stdout)
        assert sum(h["status"] == "done" for h in hist) >= 1
    finally:
        rc, _, err = stop(proc, signal.SIGTERM)
    assert rc == 0, err
    out = wearmon("status", db=live, check=0).stdout
    assert "wearmond: stopped" in out
    last = query(live, "SELECT status FROM iterations ORDER BY id DESC LIMIT 1")[0]
    assert last["status"] != "interrupted" or "  state       interrupted" in out


# ---- history --------------------------------------------------------------

def test_history_table_lists_every_iteration(db, iterations):
    lines = wearmon("history", db=db, check=0).stdout.splitlines()
    assert lines[0].split()[:6] == ["ID", "TARGET", "CYCLE", "IT", "SIZE", "WORKLOAD"]
    rows = [line.split() for line in lines[1:]]
    assert [int(r[0]) for r in rows] == [i["id"] for i in iterations]
    assert [r[1] for r in rows] == ["lab1"] * len(iterations)
    assert [(int(r[2]), int(r[3])) for r in rows] == \
        [(c, n) for c in range(1, CYCLES + 1) for n in (1, 2, 3)]
    assert [r[4] + " " + r[5] for r in rows] == ["8.00 MiB", "16.0 MiB", "32.0 MiB"] * CYCLES
    # the first cycle has nothing earlier to compare with; the next ones
    # compare with it (baseline = first)
    assert [r[-1] for r in rows[:3]] == ["-"] * 3
    assert all(r[-1].endswith("%") for r in rows[3:])


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(float(a), float(b),
                                                                rel_tol=1e-12)
    return a == b


def test_history_csv_equals_the_iterations_table(db, iterations):
    out = wearmon("history", "--format", "csv", db=db, check=0).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == len(iterations)
    skip = {"id", "number", "cycle_id", "run_id", "target_id"}
    cols = [c for c in iterations[0] if c not in skip]
    for row, it in zip(rows, iterations):
        assert int(row["id"]) == it["id"] and int(row["iteration"]) == it["number"]
        for c in cols:
            v = it[c]
            if v is None:
                assert row[c] == "", c
            elif isinstance(v, (int, float)):
                assert same(float(row[c]), float(v)), (c, row[c], v)
            else:
                assert row[c] == v, c


def test_history_json_has_every_column_and_the_baseline(db, iterations):
    rows = json.loads(wearmon("history", "--format", "json", db=db, check=0).stdout)
    assert [r["id"] for r in rows] == [i["id"] for i in iterations]
    for r, it in zip(rows, iterations):
        for c, v in it.items():
            if c not in ("id", "number", "cycle_id", "run_id", "target_id"):
                assert same(r[c], v), (c, r[c], v)
    deg = {d["iteration_id"]: d for d in query(db, "SELECT * FROM degradation")}
    for r in rows:
        d = deg[r["id"]]
        first = r["cycle"] == 1
        assert same(r["ratio"], d["ratio"]) and r["baseline_cycle"] == d["baseline_cycle"] == \
            (None if first else 1)
        assert same(r["baseline_mibps"], d["baseline_mibps"])
        assert r["baseline"] == d["baseline"] == "first"


def test_history_filters(db, iterations):
    rows = json.loads(wearmon("history", "--cycle", "2", "--format", "json", db=db,
                              check=0).stdout)
    assert [r["cycle"] for r in rows] == [2, 2, 2]
    rows = json.loads(wearmon("history", "--target", "lab1", "--since", "1d",
                              "--format", "json", db=db, check=0).stdout)
    assert len(rows) == len(iterations)
    since = iterations[4]["started_at"]
    rows = json.loads(wearmon("history", "--since", since, "--format", "json", db=db,
                              check=0).stdout)
    assert [r["id"] for r in rows] == [i["id"] for i in iterations[4:]]
    assert wearmon("history", "--since", "2999-01-01", db=db, check=0).stdout == \
        "no iterations match\n"
    assert wearmon("history", "--since", "2999-01-01", "--format", "json", db=db,
                   check=0).stdout == "[]\n"
    out = wearmon("history", "--cycle", "99", "--format", "csv", db=db, check=0).stdout
    assert out.splitlines()[0].startswith("id,target,cycle,iteration,")
    assert len(out.splitlines()) == 1


# ---- show and alerts ------------------------------------------------------

def test_show_one_iteration(db, iterations):
    it = iterations[4]  # cycle 2, iteration 2, 16 MiB
    out = wearmon("show", it["id"], db=db, check=0).stdout
    assert out.startswith(f"iteration {it['id']}: target lab1, cycle 2, iteration 2 "
                          "(size 2 of 3)\n")
    assert "  status      done\n" in out
    assert "  workload    randwrite, block 4.00 KiB, queue depth 16" in out
    assert f"avg {it['mibps_avg']:.1f}, min {it['mibps_min']:.1f}" in out
    base = query(db, f"SELECT * FROM degradation WHERE iteration_id = {it['id']}")[0]
    assert f"  baseline    {base['baseline_mibps']:.1f} MiB/s (cycle 1" in out
    n = query(db, f"SELECT count(*) AS n FROM samples WHERE iteration_id = {it['id']}"
                  " AND phase = 'measure'")[0]["n"]
    assert re.search(rf"^  measure     {n} over ", out, re.M), out
    for section in ("samples", "health", "events"):
        assert f"\n{section}\n" in out


def test_show_unknown_iteration(db):
    p = wearmon("show", "999999", db=db, check=1)
    assert "no iteration with ID 999999" in p.stderr and str(db) in p.stderr


def test_alerts_match_the_view(db):
    view = query(db, "SELECT * FROM alerts")
    rows = json.loads(wearmon("alerts", "--format", "json", db=db, check=0).stdout)
    assert [r["id"] for r in rows] == [v["event_id"] for v in view]
    out = wearmon("alerts", db=db, check=0).stdout
    if not view:
        assert out == "no alerts\n"
    else:
        assert len(out.splitlines()) == len(view) + 1
    assert wearmon("alerts", "--since", "2999-01-01", db=db, check=0).stdout == \
        "no alerts in that time\n"


# ---- plots ----------------------------------------------------------------

def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


@pytest.mark.parametrize("kind, series, legend", [
    ("sizes", ["cycle 1", "cycle 2", "cycle 3"], 3),
    ("cycles", ["highest sample", "average of the sizes", "lowest sample"], 3),
    ("samples", ["fill", "measure"], 2),
    ("wear", ["size 8.00 MiB", "size 16.0 MiB", "size 32.0 MiB"], 3),
    ("latency", ["p50", "p99", "p99.9", "p99.99"], 4),
    ("latency-trace", ["p50", "p99", "p99.9", "p99.99"], 4),
])
def test_plot_renders(db, iterations, moddir, kind, series, legend):
    svg = moddir / f"{kind}.svg"
    extra = ["--iteration", iterations[4]["id"]] if kind in ("samples", "latency-trace") else []
    wearmon("plot", "--kind", kind.replace("-trace", ""), "-o", svg, *extra, db=db, check=0)
    root = ET.parse(svg).getroot()
    assert root.tag == SVG_NS + "svg"
    groups = [g for g in root.iter(SVG_NS + "g") if "data-series" in g.attrib]
    assert [g.attrib["data-series"] for g in groups] == series
    for g in groups:   # every series has its points
        assert len([e for e in g.iter() if e.get("class") == "pt"]) >= 1
    legends = [g for g in root.iter(SVG_NS + "g") if "data-legend" in g.attrib]
    assert [g.attrib["data-legend"] for g in legends] == series[:legend]
    texts = "".join(t.text or "" for t in root.iter(SVG_NS + "text"))
    assert "lab1" in texts and ("latency" if "latency" in kind else "MiB/s") in texts
    if kind in ("cycles", "wear", "latency"):   # one dashed line per TRIM
        marks = next(g for g in root.iter(SVG_NS + "g") if g.get("class") == "marks")
        assert len(list(marks.iter(SVG_NS + "line"))) == CYCLES
    png = moddir / f"{kind}.png"
    sh("rsvg-convert", "-o", png, svg)
    assert png_size(png) == (960, 560)
    assert png.stat().st_size > 15000   # axes, text and lines, not a blank page


PLOT_TOP = 96   # top of the plot area in wearmon_svg.c


def path_points(d):
    """The polylines of an SVG path of M/L commands: lists of (x, y)."""
    lines, cur = [], None
    for cmd, x, y in re.findall(r"([ML])([-\d.]+) ([-\d.]+)", d):
        if cmd == "M":
            cur = []
            lines.append(cur)
        cur.append((float(x), float(y)))
    return lines


def chart(db, kind, path, *extra):
    wearmon("plot", "--kind", kind, "-o", path, *extra, db=db, check=0)
    return ET.parse(path).getroot()


@pytest.mark.parametrize("kind", ["sizes", "cycles", "wear", "latency"])
def test_plot_series_stay_apart(db, moddir, kind):
    """Series that overlap still differ by marker shape and dash (not only
    by colour, which greyscale and colour blindness lose); every point and
    line lies in the plot area, under the strip where mark labels go."""
    root = chart(db, kind, moddir / f"apart-{kind}.svg")
    legends = [g for g in root.iter(SVG_NS + "g") if "data-legend" in g.attrib]
    styles = set()
    for g in legends:
        line = g.find(SVG_NS + "line")
        marker = next(e for e in g.iter() if e.get("class") == "pt")
        styles.add((line.get("stroke-dasharray"), marker.tag, marker.get("d", "")[:1]))
    assert len(styles) == len(legends) >= 3
    for g in root.iter(SVG_NS + "g"):
        if "data-series" not in g.attrib:
            continue
        for e in g.iter():
            if e.get("class") == "pt":
                y = float(e.get("cy") or e.get("y") or re.findall(r"[-\d.]+", e.get("d"))[1])
                assert y >= PLOT_TOP - 6, (kind, e.attrib)
    labels = [t for t in root.iter(SVG_NS + "text") if t.get("class") == "mark-label"]
    assert (kind == "sizes" or labels) and all(float(t.get("y")) < PLOT_TOP for t in labels)


def test_plot_lines_do_not_cross_actions(db, moddir):
    """The wear and latency charts lift the pen at every action: the drive
    before and after a TRIM are two states, not a trend between them."""
    for kind in ("wear", "latency"):
        root = chart(db, kind, moddir / f"cross-{kind}.svg")
        marks = next(g for g in root.iter(SVG_NS + "g") if g.get("class") == "marks")
        xs = [float(l.get("x1")) for l in marks.iter(SVG_NS + "line")]
        assert len(xs) == CYCLES
        for g in root.iter(SVG_NS + "g"):
            if "data-series" not in g.attrib:
                continue
            for pl in path_points(g.find(SVG_NS + "path").get("d")):
                for (x0, _), (x1, _) in zip(pl, pl[1:]):
                    assert not any(x0 <= m < x1 for m in xs), (kind, x0, x1, xs)


def test_plot_one_definition_per_axis_label(db, moddir):
    root = chart(db, "cycles", moddir / "def-cycles.svg")
    ylabel = next(t for t in root.iter(SVG_NS + "text") if "rotate(-90)" in
                  (t.get("transform") or ""))
    assert ylabel.text == "MiB/s"


def test_plot_colours_are_okabe_ito(db, moddir):
    root = chart(db, "sizes", moddir / "col-sizes.svg")
    okabe = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}
    cols = [g.get("stroke") for g in root.iter(SVG_NS + "g") if "data-series" in g.attrib]
    assert len(set(cols)) == len(cols) and set(cols) <= okabe


def test_plot_to_stdout_and_target_checks(db, iterations):
    p = wearmon("plot", "--kind", "cycles", "-o", "-", db=db, check=0)
    assert p.stdout.startswith("<?xml") and p.stdout.rstrip().endswith("</svg>")
    p = wearmon("plot", "--kind", "sizes", "--target", "nope", "-o", "-", db=db, check=1)
    assert "no target named 'nope'" in p.stderr and "lab1" in p.stderr
    p = wearmon("plot", "--kind", "samples", "--iteration", "999999", "-o", "-", db=db,
                check=1)
    assert "no iteration with ID 999999" in p.stderr


# ---- other databases ------------------------------------------------------

@pytest.fixture
def empty_db(db, workdir):
    """A wearmon database as a fresh daemon leaves it: schema, no rows."""
    path = workdir / "empty.db"
    sh("sqlite3", db, f".backup '{path}'")
    tables = [r["name"] for r in query(path, "SELECT name FROM sqlite_master WHERE"
                                              " type = 'table'")]
    # children before parents (foreign keys)
    order = ["samples", "events", "wear", "health", "mapped_extents", "iterations",
             "cycles", "runs", "targets"]
    stmts = [f"DELETE FROM {t};" for t in order if t in tables]
    stmts += [f"DELETE FROM {t};" for t in tables if t not in order]
    sh("sqlite3", path, "".join(stmts))
    return path


@pytest.mark.parametrize("args, out", [
    (["status"], "wearmond: has not run on {db} yet\nno iterations yet\n"),
    (["history"], "no iterations yet\n"),
    (["history", "--format", "json"], "[]\n"),
    (["alerts"], "no iterations yet\n"),
    (["plot", "--kind", "sizes", "-o", "{dir}/x.svg"], "no iterations yet: nothing to plot\n"),
])
def test_empty_database(empty_db, args, out):
    args = [a.format(dir=empty_db.parent) for a in args]
    p = wearmon(*args, db=empty_db, check=0)
    assert p.stdout == out.format(db=empty_db)
    assert not (empty_db.parent / "x.svg").exists()


@pytest.mark.parametrize("args", [["status"], ["history"], ["show", "1"], ["alerts"],
                                  ["plot", "--kind", "wear", "-o", "x.svg"]])
def test_missing_database(workdir, args):
    missing = workdir / "nowhere" / "wearmon.db"
    p = wearmon(*args, db=missing, check=1)
    assert p.stdout == ""
    assert p.stderr == f"wearmon: database {missing} does not exist (wearmond creates it;" \
                       " choose another with -d DB)\n"


def test_default_database_path(workdir):
    # the daemon's default; nothing of ours is there on a test machine
    if Path("/var/lib/wearmon/wearmon.db").exists():
        pytest.skip("a real /var/lib/wearmon/wearmon.db exists")
    p = wearmon("history", check=1)
    assert "/var/lib/wearmon/wearmon.db" in p.stderr


def test_not_a_wearmon_database(workdir):
    foreign = workdir / "notes.db"
    sh("sqlite3", foreign, "CREATE TABLE notes (t TEXT)")
    p = wearmon("status", db=foreign, check=1)
    assert p.stderr == f"wearmon: {foreign} is not a wearmon database" \
                       " (tables but no schema version); choose another database path\n"
    text = workdir / "notes.txt"
    text.write_text("not a database\n" * 200)
    p = wearmon("history", db=text, check=1)
    assert p.stderr == f"wearmon: {text} is not a SQLite database\n"


def test_version_1_database(workdir):
    """A file of the first schema (no views, fewer columns) reads the same;
    the reader migrates nothing."""
    old = workdir / "v1.db"
    sh("sqlite3", old, ".read " + str(REPO / "tests/unit/fixtures/schema-v1.sql"))
    sh("sqlite3", old, """PRAGMA user_version = 1;
        INSERT INTO targets (name, device, kind, capacity_bytes, logical_block_size)
          VALUES ('old', '/dev/sdz', 'block', 1073741824, 512);
        INSERT INTO runs (pid, version, ended_at, exit_status, exit_reason)
          VALUES (1, '0.1.0', '2026-01-01T01:00:00.000Z', 0, 'cycles done');
        INSERT INTO cycles (target_id, run_id, number, status, action, action_outcome)
          VALUES (1, 1, 1, 'done', 'trim', 'ok'), (1, 1, 2, 'done', NULL, NULL);
        INSERT INTO iterations (cycle_id, run_id, target_id, number, size_index, size_bytes,
          region_offset, workload, block_size, queue_depth, compressibility, amount_bytes,
          started_at, mibps_min, mibps_avg, mibps_max, status) VALUES
          (1, 1, 1, 1, 0, 1048576, 0, 'randwrite', 4096, 32, 0, 1048576,
           '2026-01-01T00:00:00.000Z', 90, 100, 110, 'done'),
          (2, 1, 1, 1, 0, 1048576, 0, 'randwrite', 4096, 32, 0, 1048576,
           '2026-01-01T00:30:00.000Z', 40, 50, 60, 'done');""")
    rows = json.loads(wearmon("history", "--format", "json", db=old, check=0).stdout)
    # the baseline the migration to schema 9 would store: the first rule
    assert [(r["cycle"], r["mibps_avg"], r["ratio"]) for r in rows] == \
        [(1, 100, None), (2, 50, 0.5)]
    assert "phase" not in rows[0]
    assert "cycle       2 done" in wearmon("status", db=old, check=0).stdout
    wearmon("plot", "--kind", "cycles", "-o", workdir / "old.svg", db=old, check=0)
    assert query(old, "PRAGMA user_version")[0]["user_version"] == 1


# The degradation view as schema 9 to 13 define it, written out here as the
# independent reference for a database from before the view iteration_baseline.
DEGRADATION_V9 = """
CREATE VIEW degradation AS
  SELECT t.name AS target, c.number AS cycle, i.number AS iteration,
         i.size_bytes, i.workload, i.block_size, i.mibps_avg,
         b.mibps_avg AS baseline_mibps, bc.number AS baseline_cycle,
         i.mibps_avg / b.mibps_avg AS ratio, i.started_at,
         i.id AS iteration_id, i.baseline,
         b.number AS baseline_iteration, b.id AS baseline_iteration_id
  FROM iterations i
  JOIN cycles c ON c.id = i.cycle_id
  JOIN targets t ON t.id = i.target_id
  LEFT JOIN iterations b ON b.id = i.baseline_iteration_id
  LEFT JOIN cycles bc ON bc.id = b.cycle_id
  WHERE i.status = 'done';"""


def baselines(db, *args):
    rows = json.loads(wearmon("history", "--format", "json", *args, db=db, check=0).stdout)
    return {r["id"]: (r["baseline_mibps"], r["baseline_cycle"], r["ratio"]) for r in rows}


def test_cli_reads_the_view_and_old_schemas_alike(db, iterations, workdir):
    """One definition of an iteration's baseline: the CLI's figures are the
    degradation view's on this database (v14), and on a copy turned back
    into schema 13 (no view iteration_baseline, degradation as v9 wrote it)
    the CLI, which never migrates, still shows the same ones."""
    assert query(db, "PRAGMA user_version")[0]["user_version"] >= 14
    now = baselines(db)
    deg = {d["iteration_id"]: (d["baseline_mibps"], d["baseline_cycle"], d["ratio"])
           for d in query(db, "SELECT * FROM degradation")}
    assert now == deg and sum(v[0] is not None for v in now.values()) == 6
    old = workdir / "v13.db"
    shutil.copy(db, old)
    sh("sqlite3", old, "DROP VIEW degradation; DROP VIEW iteration_baseline;" + DEGRADATION_V9 +
       " PRAGMA user_version = 13;")
    deg13 = {d["iteration_id"]: (d["baseline_mibps"], d["baseline_cycle"], d["ratio"])
             for d in query(old, "SELECT * FROM degradation")}
    assert baselines(old) == deg13 == now
    it = iterations[4]
    assert f"  baseline    {now[it['id']][0]:.1f} MiB/s (cycle 1" in \
        wearmon("show", it["id"], db=old, check=0).stdout
    assert query(old, "PRAGMA user_version")[0]["user_version"] == 13
    assert query(old, "SELECT count(*) AS n FROM sqlite_master"
                      " WHERE name = 'iteration_baseline'")[0]["n"] == 0


# ---- usage ----------------------------------------------------------------

@pytest.mark.parametrize("args", [
    [],
    ["frobnicate"],
    ["--bogus", "status"],
    ["status", "--bogus"],
    ["status", "extra"],
    ["history", "--format", "xml"],
    ["history", "--cycle", "0"],
    ["history", "--cycle", "two"],
    ["history", "--since", "2026-02-30"],
    ["history", "--since", "300"],
    ["history", "--since", "last tuesday"],
    ["history", "--target"],
    ["show"],
    ["show", "abc"],
    ["show", "1", "2"],
    ["alerts", "--cycle", "1"],
    ["plot", "-o", "x.svg"],
    ["plot", "--kind", "pie", "-o", "x.svg"],
    ["plot", "--kind", "sizes"],
    ["plot", "--kind", "samples", "-o", "x.svg"],
    ["plot", "--kind", "sizes", "--iteration", "1", "-o", "x.svg"],
])
def test_usage_errors(db, args):
    # checked before the database is opened: a missing one changes nothing
    for d in (db, "/nonexistent/wearmon.db"):
        p = wearmon(*args, db=d, check=2)
        assert p.stdout == ""
        assert p.stderr.startswith("wearmon: ") and p.stderr.endswith(
            "Try 'wearmon --help'.\n"), p.stderr


def test_help_and_version():
    out = wearmon("--help", check=0).stdout
    for cmd in ("status", "history", "show ITERATION", "alerts", "plot --kind", "report -o"):
        assert cmd in out
    # a command's --help is its own usage (test_status.py checks each)
    hist = wearmon("history", "--help", check=0).stdout
    assert hist.startswith("Usage: wearmon [-d DB] history") and "VS BASE" in hist, hist
    assert re.fullmatch(r"wearmon \d+\.\d+\.\d+\n", wearmon("--version", check=0).stdout)


# ---- the README's queries -------------------------------------------------

def readme_sql():
    """(sql, must_return_rows) for every ```sql block of README.md and of
    tools/README-querying.md (the README's further queries). Blocks of the
    README's "Querying the history" section and every block of
    tools/README-querying.md must return rows unless they say "may be
    empty"; other blocks only have to run."""
    blocks = []
    for path, whole in ((REPO / "README.md", False),
                        (REPO / "tools" / "README-querying.md", True)):
        text = path.read_text()
        m = re.search(r"^## Querying the history\n(.*?)(?=^## |\Z)", text, re.M | re.S)
        section = text if whole else (m.group(1) if m else "")
        blocks += [(sql, sql in section and "may be empty" not in sql)
                   for sql in re.findall(r"```sql\n(.*?)```", text, re.S)]
    return blocks


def test_readme_queries_run_on_a_real_database(db):
    blocks = readme_sql()
    assert len(blocks) >= 12 and sum(rows for _, rows in blocks) >= 6
    for sql, want_rows in blocks:
        p = subprocess.run(["sqlite3", "-readonly", "-json", str(db)], input=sql,
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0 and not p.stderr, f"{sql}\n{p.stderr}"
        rows = json.loads(p.stdout) if p.stdout.strip() else []
        assert rows or not want_rows, f"no rows from:\n{sql}"


# ---- man pages ------------------------------------------------------------

MANPAGES = ["tools/wearmon/wearmon.1", "daemon/wearmond.8", "conf/wearmon.conf.5"]


@pytest.mark.parametrize("page", MANPAGES)
def test_man_page_lints_clean(page):
    path = REPO / page
    tools = [t for t in ("mandoc", "groff") if shutil.which(t)]
    assert tools, "neither mandoc nor groff is installed"
    if "mandoc" in tools:   # style level: stricter than warnings
        p = subprocess.run(["mandoc", "-T", "lint", "-W", "style", str(path)],
                           capture_output=True, text=True)
        assert p.returncode == 0 and not p.stdout and not p.stderr, p.stdout + p.stderr
    if "groff" in tools:
        p = subprocess.run(["groff", "-ww", "-z", "-man", str(path)], capture_output=True,
                           text=True)
        assert p.returncode == 0 and not p.stderr, p.stderr


def test_config_page_covers_every_key():
    """The key table of common/config/cfg_keys.c is the truth; each key has an entry."""
    keys = re.findall(r'\[K_[A-Z0-9_]+\]\s*=\s*\{\s*"([a-z0-9_]+)"',
                      (REPO / "common/config/cfg_keys.c").read_text())
    assert len(keys) >= 20
    page = (REPO / "conf/wearmon.conf.5").read_text()
    entries = set(re.findall(r"^\.TP\n\.B ([a-z0-9_]+)", page, re.M))
    assert sorted(set(keys) - entries) == []


# ---- what the CLI links ---------------------------------------------------

# Device and config code: the actions (secure erase among them), the ATA,
# SCSI and NVMe commands, opening a target, filesystem mode, the config
# parser. The read-only CLI must contain none of it. act_outcome_name is only a name
# table (common/config/names.c), which the database stores outcomes with.
DEVICE_SYMBOL = re.compile(
    r"^(act_(?!outcome_name$)|ata_|nvme_|scsi_|devnote_|fsmode_|tgt_open$|cfg_load$)")
DEVICE_LIBS = ("libblkid", "libinih", "libaio", "liburing")


def test_cli_links_no_device_code():
    assert shutil.which("nm") and shutil.which("ldd"), "nm (binutils) and ldd are needed"
    p = subprocess.run(["nm", "--defined-only", str(WEARMON)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    names = [line.split()[-1] for line in p.stdout.splitlines() if len(line.split()) == 3]
    assert "db_open" in names       # the symbols are there to look at
    assert sorted(n for n in names if DEVICE_SYMBOL.match(n)) == []
    p = subprocess.run(["ldd", str(WEARMON)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "libsqlite3" in p.stdout
    assert [lib for lib in DEVICE_LIBS if lib in p.stdout] == []
