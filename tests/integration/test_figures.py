"""One figure, one definition: every figure the report (HTML) and the charts
(SVG) show equals the same figure from the CLI's JSON (history, show,
status, alerts) and from the views (sqlite3), on four databases built by
the real wearmond on loop devices: a demo-like run (fill measured as a
phase, repeats, TRIM then none between cycles), two targets measured in
SNIA steady-state rounds, an iteration cut short by kill -9 mid-phase and
resumed, and a fleet database made by `wearmon merge`. Then every
sentence common/db/schema.md says about a view, one assertion each,
naming the sentence."""

import functools
import json
import math
import re
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import MiB, REPO, TEST_TMP, device_free, query, run_wearmon, run_wearmond, sh, \
    start_wearmond, wait_for, write_conf

SVG = "{http://www.w3.org/2000/svg}"
SCHEMA_MD = (REPO / "common" / "db" / "schema.md").read_text()
wearmon = functools.partial(run_wearmon, check=0)


class Loop:
    """A loop device on a 32 MiB file of this module's directory."""

    def __init__(self, path):
        with open(path, "wb") as f:
            f.truncate(32 * MiB)
        self.path = path
        self.dev = sh("losetup", "--show", "-f", path).stdout.strip()


def target(name, dev, **over):
    keys = {"device": dev, "allow_destroy": "yes", "sizes": "4M 8M", "fill": "yes",
            "fill_block_size": "128k", "fill_queue_depth": "4", "workload": "randwrite",
            "block_size": "4k", "queue_depth": "8", "duration": "0.6s", "amount": "1000x",
            "sample_interval": "0.2s", "cycles": "2"}
    keys.update(over)
    return f"[target {name}]\n" + "\n".join(f"{k} = {v}" for k, v in keys.items()) + "\n"


@pytest.fixture(scope="module")
def dbs():
    """name -> (database, stderr of the runs): the four databases."""
    d = Path(tempfile.mkdtemp(prefix="wearmon-figures-", dir=TEST_TMP))
    loops, out = [], {}
    try:
        loops = [Loop(d / f"d{k}.img") for k in range(4)]
        out["demo"] = build(d, "demo", target("lab1", loops[0].dev, measure="fill,randwrite",
                                               repeat="2", between_cycles="trim none"))
        out["steady"] = build(d, "steady", target(
            "lab1", loops[1].dev, sizes="4M", fill="no", steady_state="snia",
            max_rounds="6", amount="0.5x", duration="0", between_cycles="trim")
            + target("lab2", loops[2].dev, sizes="4M 8M", fill="no", steady_state="snia",
                     max_rounds="5", amount="0.25x", duration="0", between_cycles="none"))
        out["interrupted"] = build_killed(d, loops[3].dev)
        fleet = d / "fleet.db"
        wearmon("merge", "-o", fleet, "--rename", f"{out['demo'][0]}=hosta",
                "--rename", f"{out['interrupted'][0]}=hostb", out["demo"][0],
                out["interrupted"][0])
        out["merged"] = (fleet, "")
        yield out
    finally:
        for lp in loops:
            subprocess.run(["losetup", "-d", lp.dev], capture_output=True)
        subprocess.run(["rm", "-rf", "--one-file-system", str(d)])


def build(d, name, targets):
    db = d / f"{name}.db"
    conf = write_conf(d / f"{name}.conf", f"[wearmon]\ndatabase = {db}\n\n{targets}")
    p = run_wearmond(conf, timeout=600)
    assert p.returncode == 0, p.stderr
    return db, p.stderr


def build_killed(d, dev):
    """kill -9 while a measured phase runs (5 s phases: the kill lands
    inside one however late the test gets the CPU), then a restart that
    measures the cut size again and finishes."""
    db = d / "interrupted.db"
    conf = write_conf(d / "interrupted.conf", f"[wearmon]\ndatabase = {db}\n\n" + target(
        "lab1", dev, duration="5s", cycles="1", between_cycles="trim"))
    proc = start_wearmond(conf)
    running = wait_for(lambda: query(db, "SELECT phase FROM progress"
                                         " WHERE phase = 'measure'"), timeout=120, step=0.05)
    assert running, "no measured phase ever ran"
    time.sleep(0.1)   # inside the 5 s phase (progress is published once a second)
    proc.send_signal(signal.SIGKILL)
    _, first = proc.communicate(timeout=30)
    assert wait_for(lambda: device_free(dev), 30), "the device stayed busy"
    p = run_wearmond(conf, timeout=600)
    assert p.returncode == 0, p.stderr
    cut = query(db, "SELECT count(*) AS n FROM iterations WHERE status = 'interrupted'")
    assert cut[0]["n"] == 1, cut
    return db, first + p.stderr


DB_NAMES = ["demo", "steady", "interrupted", "merged"]


def targets_of(db):
    return [r["name"] for r in query(db, "SELECT name FROM targets ORDER BY name")]


def history(db, tgt):
    return json.loads(wearmon("history", "--target", tgt, "--format", "json", db=db).stdout)


def svg_points(root):
    """series label -> [(x, y)] from the chart's data-x / data-y."""
    pts = {}
    for g in root.iter(SVG + "g"):
        label = g.get("data-series")
        if label is None:
            continue
        pts[label] = [(float(e.get("data-x")), float(e.get("data-y")))
                      for e in g.iter() if e.get("class") == "pt" and e.get("data-x")]
    return pts


def plot(db, tgt, kind, d):
    out = d / f"{kind}-{tgt.replace('/', '_')}.svg"
    wearmon("plot", "--kind", kind, "--target", tgt, "-o", out, db=db)
    return ET.parse(out).getroot()


def report(db, tgt, d):
    out = d / f"report-{tgt.replace('/', '_')}.html"
    wearmon("report", "--target", tgt, "-o", out, db=db)
    return out.read_text()


def close(a, b, rel=1e-9):
    return (a is None and b is None) or (a is not None and b is not None and
                                         math.isclose(a, b, rel_tol=rel, abs_tol=1e-9))


def fig1(v):
    """A figure as the report prints it with one decimal."""
    return "–" if v is None else f"{v:.1f}"


def per_cycle_from_rows(rows):
    """The documented definition, from the CLI's JSON rows: per cycle,
    per size the measure rows' min / mean / max, then over sizes."""
    sizes = {}
    for r in rows:
        if r["status"] != "done" or r["phase"] not in (None, "measure"):
            continue
        sizes.setdefault((r["cycle"], r["size_index"]), []).append(r)
    cycles = {}
    for (c, _), rs in sizes.items():
        lo = min(r["mibps_min"] if r["mibps_min"] is not None else r["mibps_avg"] for r in rs)
        hi = max(r["mibps_max"] if r["mibps_max"] is not None else r["mibps_avg"] for r in rs)
        mean = sum(r["mibps_avg"] for r in rs) / len(rs)
        cycles.setdefault(c, []).append((lo, mean, hi))
    return {c: (min(s[0] for s in v), sum(s[1] for s in v) / len(v), max(s[2] for s in v))
            for c, v in cycles.items()}


def report_cycle_rows(html):
    sec = html[html.index('id="cycles"'):]
    body = sec[sec.index("<tbody>"):sec.index("</tbody>")]
    rows = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", body):
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
        rows[int(cells[0])] = {"min": cells[5], "avg": cells[6], "max": cells[7],
                               "action": cells[9]}
    return rows


@pytest.mark.parametrize("name", DB_NAMES)
def test_cycle_figures_agree_everywhere(dbs, name, tmp_path):
    """The view cycle_summary, the report's "Results per cycle", the cycles
    chart (plot and the report's own) and the definition applied to the
    CLI's JSON rows give the same min / avg / max for every cycle."""
    db = dbs[name][0]
    for tgt in targets_of(db):
        want = per_cycle_from_rows(history(db, tgt))
        assert want, (name, tgt)
        view = {r["cycle"]: r for r in query(
            db, f"SELECT * FROM cycle_summary WHERE target = '{tgt}'")}
        html = report(db, tgt, tmp_path)
        table = report_cycle_rows(html)
        chart = svg_points(plot(db, tgt, "cycles", tmp_path))
        embedded = svg_points(ET.fromstring(
            html[html.index("<svg", html.index('id="cycles"')):
                 html.index("</svg>", html.index('id="cycles"')) + 6]))
        assert set(chart) == {"highest sample", "average of the sizes", "lowest sample"}
        assert chart == embedded, (name, tgt)
        for c, (lo, mean, hi) in want.items():
            v = view[c]
            assert close(v["mibps_min"], lo) and close(v["mibps_avg"], mean) and \
                close(v["mibps_max"], hi), (name, tgt, c, v, lo, mean, hi)
            assert (table[c]["min"], table[c]["avg"], table[c]["max"]) == \
                (fig1(lo), fig1(mean), fig1(hi)), (name, tgt, c, table[c])
            for series, fig in (("lowest sample", lo), ("average of the sizes", mean),
                                ("highest sample", hi)):
                assert any(x == c and close(y, fig) for x, y in chart[series]), \
                    (name, tgt, c, series, chart[series], fig)
        assert sum(len(p) for p in chart.values()) == 3 * len(want)


@pytest.mark.parametrize("name", DB_NAMES)
def test_latency_chart_is_the_rows_at_their_ids(dbs, name, tmp_path):
    """The latency chart plots each done row at its history ID with the
    row's own percentiles, labelled total latency, with a tick between 1
    and 10 ms whenever its axis spans them."""
    db = dbs[name][0]
    for tgt in targets_of(db):
        rows = sorted((r for r in history(db, tgt) if r["status"] == "done"),
                      key=lambda r: r["id"])
        root = plot(db, tgt, "latency", tmp_path)
        texts = ["".join(t.itertext()) for t in root.iter(SVG + "text")]
        ylabel = next(t for t in texts if "latency" in t and "(" in t)
        assert ylabel.startswith("total latency"), ylabel
        scale = 1000 if "(ms)" in ylabel else 1
        pts = svg_points(root)
        for series, col in (("p50", "lat_p50_us"), ("p99", "lat_p99_us"),
                            ("p99.9", "lat_p999_us")):
            assert [x for x, _ in pts[series]] == [r["id"] for r in rows], (name, tgt)
            for (_, y), r in zip(pts[series], rows):
                assert close(y * scale, r[col], 1e-6), (name, tgt, series, y, r[col])
        html = report(db, tgt, tmp_path)
        at = html.index('id="latency"')
        embedded = ET.fromstring(html[html.index("<svg", at):html.index("</svg>", at) + 6])
        assert svg_points(embedded) == pts, (name, tgt, "the report's latency chart")
        ticks = [float(t.text) for t in root.iter(SVG + "text")
                 if t.get("text-anchor") == "end" and re.fullmatch(r"[0-9.]+", t.text or "")]
        ms = [t * scale / 1000 for t in ticks]
        if min(ms) <= 1 and max(ms) >= 10:
            assert any(1 < t < 10 for t in ms), (name, tgt, ms)


@pytest.mark.parametrize("name", DB_NAMES)
def test_show_and_status_equal_history(dbs, name):
    """`show ID` and `status` give a row's figures as `history` does."""
    db = dbs[name][0]
    keys = ("mibps_avg", "mibps_min", "mibps_max", "iops_avg", "lat_p99_us", "lat_p9999_us",
            "bytes", "seconds", "fill_mibps", "status")
    status = json.loads(wearmon("status", "--format", "json", db=db).stdout)
    for tgt in targets_of(db):
        rows = history(db, tgt)
        for r in rows:
            shown = json.loads(wearmon("show", r["id"], "--format", "json", db=db).stdout)
            assert {k: shown["iteration"][k] for k in keys} == {k: r[k] for k in keys}, r["id"]
        last = next(t for t in status["targets"] if t["name"] == tgt).get("iteration")
        by_id = {r["id"]: r for r in rows}
        assert last, (name, tgt, "status names no iteration")
        assert {k: last[k] for k in keys} == {k: by_id[last["id"]][k] for k in keys}


@pytest.mark.parametrize("name", DB_NAMES)
def test_alert_counts_agree(dbs, name, tmp_path):
    """The report's alert counts are the alerts view's and `alerts`' rows
    of the target's cycles, by severity."""
    db = dbs[name][0]
    for tgt in targets_of(db):
        html = report(db, tgt, tmp_path)
        m = re.search(r"Alerts: (\d+) critical or error, (\d+) warning, (\d+) notice", html)
        assert m, (name, tgt)
        cli = [a for a in json.loads(wearmon("alerts", "--target", tgt, "--format", "json",
                                             db=db).stdout) if a["cycle"] is not None]
        view = query(db, f"SELECT severity FROM alerts WHERE target = '{tgt}'"
                         " AND cycle IS NOT NULL")
        assert sorted(a["severity"] for a in cli) == sorted(v["severity"] for v in view)
        bad = sum(a["severity"] in ("emerg", "alert", "crit", "err") for a in cli)
        warn = sum(a["severity"] == "warning" for a in cli)
        notice = sum(a["severity"] == "notice" for a in cli)
        assert tuple(int(g) for g in m.groups()) == (bad, warn, notice), (name, tgt)


LOG = re.compile(r"target (\S+): cycle (\d+) iteration (\d+) size .*?: (?:(\S+) MiB/s \(min (\S+)"
                 r" max (\S+) sd (\S+)\) (\d+) IOPS p99 (\d+) us p99.99 (\d+) us fill (\S+) MiB/s"
                 r"|no figures \((.*?)\)).*?\[(\w+)\]")


def f1(v):
    return "-" if v is None else f"{v:.1f}"


@pytest.mark.parametrize("name", ["demo", "steady", "interrupted"])
def test_log_lines_are_the_rows(dbs, name):
    """Every iteration's log line says the figures its row stores."""
    db, log = dbs[name]
    rows = {(r["target"], r["cycle"], r["iteration"]): r
            for r in query(db, "SELECT * FROM history h JOIN iterations i"
                               " ON i.id = h.iteration_id")}
    seen = 0
    for m in LOG.finditer(log):
        r = rows[(m[1], int(m[2]), int(m[3]))]
        assert m[13] == r["status"], (m[0], r)
        seen += 1
        if m[12] is not None:       # no figures: the row has none either
            assert r["mibps_avg"] is None, (m[0], r)
            continue
        assert (m[4], m[5], m[6], m[7]) == (f"{r['mibps_avg']:.1f}", f1(r["mibps_min"]),
                                            f1(r["mibps_max"]), f1(r["mibps_stddev"])), m[0]
        assert (int(m[8]), int(m[9]), int(m[10])) == (
            round(r["iops_avg"]), round(r["lat_p99_us"]), round(r["lat_p9999_us"])), m[0]
        assert m[11] == f1(r["fill_mibps"]), (m[0], r["fill_mibps"])
    # a row a crash cut short (ended_at NULL) never got its line
    assert seen == sum(r["ended_at"] is not None for r in rows.values()), (seen, len(rows))


# ---- the views against common/db/schema.md ---------------------------------

def sentence(text):
    """The documented sentence (whitespace as in schema.md's wrapping)."""
    flat = " ".join(SCHEMA_MD.split())
    assert " ".join(text.split()) in flat, f"schema.md no longer says: {text}"
    return text


def rows(db, sql):
    return query(db, sql)


def measure_row(r):
    return r["phase"] in (None, "measure")


@pytest.mark.parametrize("name", DB_NAMES)
def test_view_cycle_summary(dbs, name):
    db = dbs[name][0]
    its = rows(db, "SELECT * FROM iterations")
    for v in rows(db, "SELECT * FROM cycle_summary"):
        mine = [r for r in its if r["cycle_id"] == v["cycle_id"]]
        done = [r for r in mine if r["status"] == "done"]
        s = sentence("rows of the cycle with status `done` (every phase: measure, fill, verify)")
        assert v["iterations"] == len(done), (s, v)
        sizes = {}
        for r in done:
            if measure_row(r):
                sizes.setdefault(r["size_index"], []).append(r)
        s = sentence("sizes with a done measure row: the sizes `mibps_avg` averages")
        assert v["sizes"] == len(sizes), (s, v)
        if not sizes:
            continue
        s = sentence("mean over the sizes of each size's mean `mibps_avg`: every size counts"
                     " once, its repeats and steady-state rounds averaged first")
        means = [sum(r["mibps_avg"] for r in rs) / len(rs) for rs in sizes.values()]
        assert close(v["mibps_avg"], sum(means) / len(means)), (s, v)
        s = sentence("lowest sample of the cycle's done measure rows (`phase` `measure`, or"
                     " NULL before v4); a row too short for min/max counts with its average")
        lo = min(r["mibps_min"] if r["mibps_min"] is not None else r["mibps_avg"]
                 for rs in sizes.values() for r in rs)
        assert close(v["mibps_min"], lo), (s, v)
        s = sentence("| mibps_max | MiB/s | highest sample (likewise) |")
        hi = max(r["mibps_max"] if r["mibps_max"] is not None else r["mibps_avg"]
                 for rs in sizes.values() for r in rs)
        assert close(v["mibps_max"], hi), (s, v)
        s = sentence("Fill rows (`phase = 'fill'`) and read-backs (`verify`) are not in"
                     " `mibps_min`, `mibps_avg`, `mibps_max`.")
        kept_apart = [r for r in done if not measure_row(r)]
        assert all(r["id"] not in {x["id"] for rs in sizes.values() for x in rs}
                   for r in kept_apart), s
        fills = {}
        for r in done:
            if r["phase"] == "fill":
                fills.setdefault(r["size_index"], []).append(r["mibps_avg"])
        s = sentence("mean over the sizes of their done `fill` rows (`measure = fill`), kept"
                     " apart from the figures above; NULL without such rows")
        want = [sum(f) / len(f) for f in fills.values()]
        assert close(v["fill_mibps_avg"], sum(want) / len(want) if want else None), (s, v)
        s = sentence("the between-cycles action that followed, and how it ended (as in"
                     " `cycles`)")
        c = rows(db, f"SELECT action, action_outcome, action_seconds, action_bytes FROM"
                     f" cycles WHERE id = {v['cycle_id']}")[0]
        assert {k: v[k] for k in c} == c, (s, v, c)


def test_view_cycle_summary_of_a_cycle_without_done_rows(dbs, tmp_path):
    s = sentence("A cycle without done iterations has `iterations = 0`, `sizes = 0` and NULL"
                 " figures.")
    copy = tmp_path / "copy.db"
    shutil.copy(dbs["interrupted"][0], copy)
    con = sqlite3.connect(copy)
    with con:
        con.execute("INSERT INTO cycles (target_id, run_id, number, started_at, status)"
                    " SELECT target_id, run_id, 99, started_at, 'interrupted' FROM cycles"
                    " LIMIT 1")
    con.close()
    v = query(copy, "SELECT * FROM cycle_summary WHERE cycle = 99")[0]
    assert (v["iterations"], v["sizes"], v["mibps_min"], v["mibps_avg"], v["mibps_max"],
            v["fill_mibps_avg"]) == (0, 0, None, None, None, None), (s, v)


def test_view_cycle_summary_stored_and_read_alike(dbs, tmp_path):
    """The stored view (sqlite3) and the one `wearmon export` reads agree;
    a file with the old text gets the new one at the daemon's open and a
    TEMP one in `wearmon` before that."""
    db = dbs["demo"][0]
    s = sentence("the daemon recreates it when it opens a file whose stored text differs,"
                 " and `wearmon` reading such a file gets the current one as a TEMP view of"
                 " its own connection")
    stored = query(db, "SELECT * FROM cycle_summary ORDER BY cycle_id")
    cli = json.loads(wearmon("export", "cycle_summary", "--format", "json", db=db).stdout)
    assert [{k: r[k] for k in stored[0]} for r in cli] == stored, s
    copy = tmp_path / "old.db"
    shutil.copy(db, copy)
    con = sqlite3.connect(copy)
    with con:   # the definition before this version: every done row averaged
        con.execute("DROP VIEW cycle_summary")
        con.execute("CREATE VIEW cycle_summary AS SELECT t.name AS target, c.number AS"
                    " cycle, avg(i.mibps_avg) AS mibps_avg, c.id AS cycle_id FROM cycles c"
                    " JOIN targets t ON t.id = c.target_id LEFT JOIN iterations i ON"
                    " i.cycle_id = c.id AND i.status = 'done' GROUP BY c.id")
    con.close()
    cli_old = json.loads(wearmon("export", "cycle_summary", "--format", "json",
                                 db=copy).stdout)
    assert [{k: r[k] for k in stored[0]} for r in cli_old] == stored, s
    assert "sizes" not in query(copy, "SELECT * FROM cycle_summary LIMIT 1")[0]


@pytest.mark.parametrize("name", DB_NAMES)
def test_view_history(dbs, name):
    db = dbs[name][0]
    s = sentence("It has no ORDER BY")
    assert "ORDER BY" not in query(db, "SELECT sql FROM sqlite_master WHERE name ="
                                       " 'history'")[0]["sql"], s
    s = sentence("`target, cycle, iteration, size_bytes, mibps_avg, mibps_min, mibps_max,"
                 " iops_avg, lat_p99_us, status`, then `workload, block_size, fill_mibps,"
                 " started_at, iteration_id` (the last one to join `samples` or `events`),"
                 " then (v20) the drive's own figures next to the rate: `device_wa,"
                 " device_peak_temp_c, device_throttle_seconds`")
    cols = [r["name"] for r in query(db, "PRAGMA table_info(history)")]
    assert cols == ["target", "cycle", "iteration", "size_bytes", "mibps_avg", "mibps_min",
                    "mibps_max", "iops_avg", "lat_p99_us", "status", "workload",
                    "block_size", "fill_mibps", "started_at", "iteration_id", "device_wa",
                    "device_peak_temp_c", "device_throttle_seconds"], s
    n = query(db, "SELECT (SELECT count(*) FROM history) AS h,"
                  " (SELECT count(*) FROM iterations) AS i")[0]
    assert n["h"] == n["i"], ("one row per iteration", n)


@pytest.mark.parametrize("name", DB_NAMES)
def test_view_baseline_and_degradation(dbs, name):
    db = dbs[name][0]
    its = {r["id"]: r for r in rows(db, "SELECT i.*, c.number AS cyc FROM iterations i"
                                        " JOIN cycles c ON c.id = i.cycle_id")}
    s = sentence("for each iteration whose `baseline_iteration_id` is set, that row's id,"
                 " iteration number, `mibps_avg` and cycle number")
    ib = rows(db, "SELECT * FROM iteration_baseline")
    assert {r["iteration_id"] for r in ib} == \
        {i for i, r in its.items() if r["baseline_iteration_id"] is not None}, s
    for r in ib:
        b = its[r["baseline_iteration_id"]]
        assert (r["baseline_iteration"], r["baseline_mibps"], r["baseline_cycle"]) == \
            (b["number"], b["mibps_avg"], b["cyc"]), (s, r)
    deg = rows(db, "SELECT * FROM degradation")
    s = sentence("Only done iterations appear")
    assert {r["iteration_id"] for r in deg} == \
        {i for i, r in its.items() if r["status"] == "done"}, s
    for r in deg:
        bid = its[r["iteration_id"]]["baseline_iteration_id"]
        if bid is None:
            s = sentence("one without a baseline (the first of its size, workload and block"
                         " size in a campaign) has NULL baseline columns and ratio")
            assert (r["baseline_mibps"], r["baseline_cycle"], r["ratio"]) == \
                (None, None, None), (s, r)
            continue
        s = sentence("`baseline_mibps` its `mibps_avg`, `baseline_cycle` and"
                     " `baseline_iteration` its cycle and iteration number")
        b = its[bid]
        assert (r["baseline_mibps"], r["baseline_cycle"], r["baseline_iteration"]) == \
            (b["mibps_avg"], b["cyc"], b["number"]), (s, r)
        s = sentence("`ratio = mibps_avg / baseline_mibps`")
        assert close(r["ratio"], r["mibps_avg"] / r["baseline_mibps"]), (s, r)


@pytest.mark.parametrize("name", DB_NAMES)
def test_view_overprovisioning(dbs, name):
    db = dbs[name][0]
    s = sentence("target, cycle, iteration, size_bytes, mibps_avg and every column of `wear`.")
    cols = [r["name"] for r in query(db, "PRAGMA table_info(overprovisioning)")]
    wear = [r["name"] for r in query(db, "PRAGMA table_info(wear)")]
    assert cols[:5] == ["target", "cycle", "iteration", "size_bytes", "mibps_avg"], s
    assert set(wear) - {"iteration_id"} <= set(cols) and "iteration_id" in cols, s
    n = query(db, "SELECT (SELECT count(*) FROM overprovisioning) AS o,"
                  " (SELECT count(*) FROM wear) AS w")[0]
    assert n["o"] == n["w"], (s, n)


def test_view_steady_state(dbs):
    db = dbs["steady"][0]
    its = rows(db, "SELECT * FROM iterations")
    ss = rows(db, "SELECT * FROM steady_state")
    s = sentence("the last round row of each phase measured with `steady_state = snia`"
                 " (`rounds` is its `round_index`: how many rounds ran)")
    assert {r["iteration_id"] for r in ss} == \
        {r["id"] for r in its if r["steady_reached"] is not None}, s
    assert len(ss) >= 4, ss
    for v in ss:
        last = next(r for r in its if r["id"] == v["iteration_id"])
        phase = sorted((r for r in its if r["cycle_id"] == last["cycle_id"] and
                        r["size_index"] == last["size_index"] and
                        r["workload"] == last["workload"] and r["round_index"]),
                       key=lambda r: r["round_index"])
        s = sentence("The rounds themselves are ordinary `iterations` rows with the same"
                     " `cycle_id`, `size_index` and `workload` and `round_index` 1..rounds.")
        assert [r["round_index"] for r in phase] == list(range(1, v["rounds"] + 1)), (s, v)
        y = [r["mibps_avg"] for r in phase[-5:]]
        mean = sum(y) / 5
        slope = sum((k - 2) * (yk - mean) for k, yk in enumerate(y)) / 10
        s = sentence("steady state holds when **both** (a) max(y) − min(y) ≤ 20 % of mean(y)"
                     " and (b) the least-squares line through the window changes by ≤ 10 % of"
                     " mean(y) across it")
        held = max(y) - min(y) <= 0.2 * mean and abs(slope) * 4 <= 0.1 * mean
        # the verdict at the last round: held there, or max_rounds passed
        if held:
            assert v["steady_reached"] == 1, (s, v, y)
        else:
            assert v["steady_reached"] == 0, (s, v, y)


@pytest.mark.parametrize("name", DB_NAMES)
def test_view_alerts(dbs, name):
    db = dbs[name][0]
    s = sentence("the rows of `events` whose severity is `emerg`, `alert`, `crit`, `err`,"
                 " `warning` or `notice` (not `info` nor `debug`)")
    ev = rows(db, "SELECT id FROM events WHERE severity NOT IN ('info', 'debug')")
    al = rows(db, "SELECT * FROM alerts")
    assert sorted(r["event_id"] for r in al) == sorted(r["id"] for r in ev), s
    s = sentence("ordered by `at`")
    assert [r["at"] for r in al] == sorted(r["at"] for r in al), s


@pytest.mark.parametrize("name", DB_NAMES)
def test_samples_add_up_by_phase(dbs, name):
    db = dbs[name][0]
    s = sentence("Σ `bytes` of the `measure` samples = `iterations.bytes`, of the `fill`"
                 " samples = `iterations.fill_bytes`")
    got = rows(db, "SELECT i.id, i.phase, i.bytes, i.fill_bytes,"
                   " (SELECT sum(bytes) FROM samples s WHERE s.iteration_id = i.id AND"
                   "  s.phase = 'measure') AS m,"
                   " (SELECT sum(bytes) FROM samples s WHERE s.iteration_id = i.id AND"
                   "  s.phase = 'fill') AS f FROM iterations i WHERE i.status = 'done'")
    assert got
    for r in got:
        assert (r["m"], r["f"]) == (r["bytes"], r["fill_bytes"]), (s, r)


def test_measured_fill_and_action_none(dbs):
    db = dbs["demo"][0]
    s = sentence("A `measure = fill` row (`iterations.phase = 'fill'`) measures the fill as"
                 " its phase: its samples are `measure` ones")
    fills = rows(db, "SELECT id FROM iterations WHERE phase = 'fill' AND status = 'done'")
    assert fills, "the demo measures its fill"
    for r in fills:
        ph = rows(db, f"SELECT DISTINCT phase FROM samples WHERE iteration_id = {r['id']}")
        assert ph == [{"phase": "measure"}], (s, r, ph)
    s = sentence("`none` when `between_cycles` said `none` for this cycle")
    acts = rows(db, "SELECT number, action, action_outcome FROM cycles ORDER BY number")
    assert [a["action"] for a in acts] == ["trim", "none"], (s, acts)
