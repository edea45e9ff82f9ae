"""The PTS tests as presets (pts =): each runs end to end on the simulated
SSD with shortened cells, every cell a row saying its test, round and
cell; the steady-state verdict each stores is checked against a hand
computation from the stored rows (the five-round window, both criteria);
the demand-intensity sweep's chosen points and their histograms, the
cross-stimulus recovery's access groups and the write saturation's bytes
are checked from the rows too."""

import json
import signal

import pytest

import simssd_helper
from conftest import (query, run_wearmond, start_wearmond, stop, target_conf, wait_for,
                      write_conf)

# A quick drive: each cell of a fraction of a second moves enough I/O to
# measure, and steady state can come within a few rounds.
DRIVE = dict(capacity="32M", page="4k", erase_block="64k", spare=20, channels=4,
             t_prog="200us", t_read="50us", t_erase="1ms", cache="1M")

BASE = {"fill": "yes", "fill_block_size": "128k", "fill_queue_depth": "8",
        "sample_interval": "0.1s", "cycles": "1", "pts_cell": "0.1s",
        "pts_threads": "1", "pts_queue_depth": "4", "max_rounds": "6",
        "device_poll_interval": "0.1s"}

IOPS_MIXES = [100, 95, 65, 50, 35, 5, 0]
IOPS_BS = [1024 << 10, 128 << 10, 64 << 10, 32 << 10, 16 << 10, 8 << 10, 4 << 10, 512]


def hand_steady(y):
    """The five-round window ending at the last value of y, judged by hand:
    (range <= 20% of the mean, |slope| * 4 <= 10% of the mean) over exactly
    five rounds; returns (steady, mean, range %, excursion %)."""
    w = y[-5:]
    n = len(w)
    mean = sum(w) / n
    xs = range(n)
    xbar = sum(xs) / n
    sxx = sum((x - xbar) ** 2 for x in xs)
    slope = sum((x - xbar) * (v - mean) for x, v in zip(xs, w)) / sxx if sxx else 0.0
    rng = (max(w) - min(w)) / mean * 100
    exc = abs(slope) * (n - 1) / mean * 100
    return (n == 5 and rng <= 20 + 1e-9 and exc <= 10 + 1e-9), mean, rng, exc


def run_pts(workdir, test, **keys):
    """Run one cycle of pts = test on a fresh simulated drive; returns the
    database's path and wearmond's log."""
    with simssd_helper.sim_drive(**DRIVE) as d:
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf",
                          target_conf(db, d.loop, {**BASE, "pts": test, **keys}))
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
    return db, p.stderr


def cells(db, test):
    return query(db, "SELECT * FROM iterations WHERE pts_test = '%s' ORDER BY number" % test)


def check_verdict(rows, track, value):
    """Each tracking row's stored window against the hand computation over
    the tracking values up to its round; the test ended at the first round
    where every tracking variable was steady, or at the round limit."""
    series = {}
    for r in rows:
        if not track(r):
            continue
        key = (r["block_size"], r["read_percent"])
        series.setdefault(key, []).append(value(r))
        y = series[key]
        assert r["pts_round"] == len(y), r
        steady, mean, rng, exc = hand_steady(y)
        assert r["pts_ss_reached"] == int(steady), (y, r)
        assert r["pts_ss_mean"] == pytest.approx(mean, rel=1e-9)
        assert r["pts_ss_range_pct"] == pytest.approx(rng, rel=1e-6, abs=1e-9)
        assert r["pts_ss_excursion_pct"] == pytest.approx(exc, rel=1e-6, abs=1e-9)
        assert r["pts_ss_first_round"] == max(1, len(y) - 4), r
    return series


@simssd_helper.needs_sim
def test_iops_matrix_rounds_to_steady_state(workdir):
    db, log = run_pts(workdir, "iops")
    rows = cells(db, "iops")
    assert rows and all(r["status"] == "done" for r in rows), rows[-1:]
    rounds = max(r["pts_round"] for r in rows)
    assert len(rows) == 56 * rounds
    # one round: every mix by every block size, in the specification's order
    first = [(r["read_percent"], r["block_size"]) for r in rows if r["pts_round"] == 1]
    assert first == [(m, b) for m in IOPS_MIXES for b in IOPS_BS]
    assert all(r["pts_cell"] == i % 56 + 1 for i, r in enumerate(rows))
    assert all(r["random_percent"] == 100 and r["jobs"] == 1 and r["queue_depth"] == 4
               and r["pts_variant"] == "enterprise" and r["pts_active_pct"] == 100
               and r["amount_bytes"] == 0 for r in rows), rows[0]
    # a cell's tail latency is at least its p99; a 0.1 s cell that a busy
    # machine let complete no I/O has neither (NULL), not a made-up figure
    assert all(r["lat_p99999_us"] >= r["lat_p99_us"] if r["ops"] else
               r["lat_p99999_us"] is None and r["lat_p99_us"] is None for r in rows), \
        [r for r in rows if not r["ops"] or r["lat_p99999_us"] is None][:3]
    # the tracking variable: 4 KiB random writes
    track = [r for r in rows if r["pts_tracking"]]
    assert [(r["block_size"], r["read_percent"]) for r in track] == [(4096, 0)] * rounds
    series = check_verdict(rows, lambda r: r["pts_tracking"], lambda r: r["iops_avg"])
    y = series[(4096, 0)]
    steady = hand_steady(y)[0]
    # rounds ran until the window was steady, or to the limit
    assert steady or rounds == 6, y
    assert not any(hand_steady(y[:k])[0] for k in range(5, rounds)), y
    print("iops: rounds", rounds, "steady", steady, "4 KiB write IOPS", [round(v) for v in y])
    # the preconditioning fill: twice the active range, before the first cell
    assert rows[0]["fill_bytes"] == 2 * rows[0]["size_bytes"], rows[0]
    assert all(r["fill_bytes"] is None for r in rows[1:])
    assert rows[-1]["more_rows"] == 0 and all(r["more_rows"] == 1 for r in rows[:-1])
    assert "PTS iops: steady state" in log, log


def assert_ended_when_steady(rows, series, limit):
    """The rounds stopped at the first round where every tracking
    variable was steady by hand, or at the limit."""
    rounds = max(r["pts_round"] for r in rows)
    per_round = [all(hand_steady(y[:k])[0] for y in series.values())
                 for k in range(1, rounds + 1)]
    assert not any(per_round[:-1]), series
    assert per_round[-1] or rounds == limit, series
    return rounds


@simssd_helper.needs_sim
def test_throughput_each_block_size_to_steady_state(workdir):
    db, log = run_pts(workdir, "throughput")
    rows = cells(db, "throughput")
    assert rows and all(r["status"] == "done" and r["random_percent"] == 0 for r in rows)
    for bs in (128 << 10, 1024 << 10):
        mine = [r for r in rows if r["block_size"] == bs]
        # rounds of one write cell then one read cell, both tracking
        assert [r["read_percent"] for r in mine] == [0, 100] * (len(mine) // 2), mine
        assert all(r["pts_tracking"] == 1 for r in mine)
        series = check_verdict(mine, lambda r: True, lambda r: r["mibps_avg"])
        assert sorted(series) == [(bs, 0), (bs, 100)]
        n = assert_ended_when_steady(mine, series, 6)
        print("throughput", bs >> 10, "KiB: rounds", n,
              {k[1]: [round(v, 1) for v in y] for k, y in series.items()})
    assert rows[0]["block_size"] == 128 << 10 and rows[-1]["block_size"] == 1024 << 10
    assert log.count("PTS throughput: steady state") == 2, log


@simssd_helper.needs_sim
def test_throughput_client_variant_runs_1m_over_75_percent(workdir):
    db, _ = run_pts(workdir, "throughput", pts_variant="client", max_rounds="5")
    rows = cells(db, "throughput")
    assert rows and {r["block_size"] for r in rows} == {1024 << 10}
    assert all(r["pts_variant"] == "client" and r["pts_active_pct"] == 75 for r in rows)
    # 75% of the 32 MiB region, whole MiB
    assert {r["size_bytes"] for r in rows} == {24 << 20}


@simssd_helper.needs_sim
def test_latency_one_thread_depth_one_with_five_nines(workdir):
    db, log = run_pts(workdir, "latency")
    rows = cells(db, "latency")
    assert rows and all(r["status"] == "done" for r in rows)
    first = [(r["read_percent"], r["block_size"]) for r in rows if r["pts_round"] == 1]
    assert first == [(m, b) for m in (100, 65, 0) for b in (512, 4096, 8192)]
    assert all(r["jobs"] == 1 and r["queue_depth"] == 1 for r in rows)
    # mean <= five nines <= max per cell, five nines at or above p99.99
    for r in rows:
        assert r["lat_mean_us"] <= r["lat_p99999_us"] <= r["lat_max_us"] + 1e-6, r
        assert r["lat_p99999_us"] >= r["lat_p9999_us"] - 1e-6, r
    series = check_verdict(rows, lambda r: r["pts_tracking"], lambda r: r["lat_mean_us"])
    assert list(series) == [(4096, 0)]
    n = assert_ended_when_steady(rows, series, 6)
    print("latency: rounds", n, "4 KiB write mean us", [round(v, 1) for v in series[(4096, 0)]])


@simssd_helper.needs_sim
def test_wsat_writes_its_amount_in_cells(workdir):
    db, _ = run_pts(workdir, "wsat", pts_wsat_amount="1x")
    rows = cells(db, "wsat")
    assert rows and all(r["block_size"] == 4096 and r["read_percent"] == 0
                        and r["random_percent"] == 100 for r in rows)
    assert [r["pts_cell"] for r in rows] == list(range(1, len(rows) + 1))
    size = rows[0]["size_bytes"]
    written = [sum(r["bytes"] for r in rows[:k]) for k in range(1, len(rows) + 1)]
    # the last cell reached the amount, none before it did
    assert written[-1] >= size and all(w < size for w in written[:-1]), written
    assert all(r["pts_ss_reached"] is None for r in rows)


@simssd_helper.needs_sim
def test_xsr_three_access_groups_in_order(workdir):
    db, _ = run_pts(workdir, "xsr", pts_xsr_segment="0.5s")
    rows = cells(db, "xsr")
    parts = [(r["pts_round"], r["pts_part"], r["block_size"], r["random_percent"])
             for r in rows]
    want = [(1, "seq-before", 1 << 20, 0)] * 5 + [(2, "random", 8192, 100)] * 5 + \
        [(3, "seq-after", 1 << 20, 0)] * 5
    assert parts == want, parts
    assert all(r["read_percent"] == 0 and r["status"] == "done" for r in rows)


@simssd_helper.needs_sim
def test_dirth_sweep_then_histograms_at_chosen_points(workdir):
    db, log = run_pts(workdir, "dirth", pts_threads="4")
    rows = cells(db, "dirth")
    sweep = [r for r in rows if r["pts_part"] == "sweep"]
    rounds = max(r["pts_round"] for r in sweep)
    grid = [(t, q) for t in (4, 2, 1) for q in (4, 2, 1)]
    assert [(r["jobs"], r["queue_depth"]) for r in sweep] == grid * rounds
    assert all(r["block_size"] == 8192 and r["read_percent"] == 65 for r in sweep)
    series = check_verdict(sweep, lambda r: r["pts_tracking"], lambda r: r["iops_avg"])
    assert list(series) == [(8192, 65)]
    assert all(r["jobs"] == 4 and r["queue_depth"] == 4 for r in sweep if r["pts_tracking"])
    n = assert_ended_when_steady(sweep, series, 6)
    print("dirth: rounds", n, "T4Q4 IOPS", [round(v) for v in series[(8192, 65)]])
    # the chosen points from the last round of the sweep, by hand
    last = [r for r in sweep if r["pts_round"] == rounds]
    hi = max(last, key=lambda r: r["iops_avg"])
    lo = next(r for r in last if r["jobs"] == 1 and r["queue_depth"] == 1)
    half = (hi["iops_avg"] + lo["iops_avg"]) / 2
    rest = [r for r in last if r is not hi and r is not lo]
    mid = min(rest, key=lambda r: abs(r["iops_avg"] - half))
    points = [r for r in rows if r["pts_part"] != "sweep"]
    want = [("max", hi), ("mid", mid)] + ([("min", lo)] if lo is not hi else [])
    assert [(r["pts_part"], r["jobs"], r["queue_depth"]) for r in points] == \
        [(p, w["jobs"], w["queue_depth"]) for p, w in want]
    assert all(r["pts_round"] == rounds + 1 for r in points)
    for r in points:
        h = json.loads(r["pts_lat_hist"])
        lows = [b[0] for b in h["bins"]]
        assert lows == sorted(lows) and sum(b[1] for b in h["bins"]) == r["ops"], h
    assert all(r["pts_lat_hist"] is None for r in sweep)
    assert rows[-1]["more_rows"] == 0


@simssd_helper.needs_sim
def test_stop_and_restart_runs_the_cycles_tests_again(workdir):
    """A stop ends the cell in progress (its row interrupted); the restart
    runs the cycle's tests again from their first round, in new rows."""
    with simssd_helper.sim_drive(**DRIVE) as d:
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf",
                          target_conf(db, d.loop, {**BASE, "pts": "latency throughput",
                                                   "max_rounds": "5"}))
        proc = start_wearmond(conf)
        try:
            seen = wait_for(lambda: query(db, "SELECT id FROM iterations"
                                              " WHERE pts_test = 'throughput'"), 300)
        finally:
            rc, _, err = stop(proc, signal.SIGTERM, timeout=60)
        assert seen and rc == 0, err
        first = query(db, "SELECT max(id) AS id FROM iterations")[0]["id"]
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
    before = query(db, "SELECT * FROM iterations WHERE id <= %d ORDER BY id" % first)
    after = query(db, "SELECT * FROM iterations WHERE id > %d ORDER BY id" % first)
    assert before[-1]["status"] in ("interrupted", "done"), before[-1]
    # the restart began again with the latency test's first round, after
    # the preconditioning fill, and ran both tests to their end
    assert after[0]["pts_test"] == "latency" and after[0]["pts_round"] == 1
    assert after[0]["fill_bytes"] == 2 * after[0]["size_bytes"], after[0]
    assert {r["pts_test"] for r in after} == {"latency", "throughput"}
    assert all(r["status"] == "done" for r in after) and after[-1]["more_rows"] == 0
    check_verdict([r for r in after if r["pts_test"] == "latency"],
                  lambda r: r["pts_tracking"], lambda r: r["lat_mean_us"])
    cyc = query(db, "SELECT number, status FROM cycles")
    assert cyc == [{"number": 1, "status": "done"}], cyc


def test_steady_state_reached_where_the_rates_hold(workdir):
    """On the null engine (a simulated device of constant speed: wearmon.conf(5),
    ioengine) every tracking variable is steady as soon as the window is
    full: each test's rounds end at round 5, its tracking rows of round 5
    say reached, those before not, as the hand computation has it."""
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(
        db, workdir / "f.img", {**BASE, "file_size": "64M", "ioengine": "null",
                                "pts": "iops throughput latency dirth", "max_rounds": "25",
                                "pts_threads": "2"}))
    p = run_wearmond(conf, timeout=600)
    assert p.returncode == 0, p.stderr
    for test, value in (("iops", "iops_avg"), ("throughput", "mibps_avg"),
                        ("latency", "lat_mean_us"), ("dirth", "iops_avg")):
        rows = [r for r in cells(db, test) if r["pts_part"] in (None, "sweep")]
        series = check_verdict(rows, lambda r: r["pts_tracking"], lambda r: r[value])
        for y in series.values():
            assert len(y) == 5 and hand_steady(y)[0], (test, y)
        track = [r for r in rows if r["pts_tracking"]]
        assert all(r["pts_ss_reached"] == (r["pts_round"] == 5) for r in track), test
        assert p.stderr.count(f"PTS {test}: steady state reached after 5 rounds") == \
            (2 if test == "throughput" else 1), p.stderr


def test_check_lists_the_tests_in_words_and_json(workdir):
    """wearmond --check says what a cycle of tests does, in text and JSON,
    and refuses bad keys naming file, line and key."""
    conf = write_conf(workdir / "w.conf", target_conf(
        workdir / "w.db", workdir / "f.img",
        {"file_size": "64M", "pts": "iops hir xsr", "pts_variant": "client"}))
    p = run_wearmond(conf, "--check")
    assert p.returncode == 0, p.stderr
    assert "the PTS tests (client variant) over the active range, 48.00 MiB (75% of" \
        " the region)" in p.stdout, p.stdout
    assert "1. iops: 56 cells of 60s a round at 2 thread(s) of depth 16, until steady" \
        " state or 25 rounds" in p.stdout
    assert "3. hir: host idle recovery" in p.stdout and "2. xsr: 3 access groups" in p.stdout
    p = run_wearmond(conf, "--check", "--json")
    pts = json.loads(p.stdout)["targets"][0]["pts"]
    assert pts["variant"] == "client" and pts["active_range_bytes"] == 48 << 20
    assert [t["test"] for t in pts["tests"]] == ["iops", "xsr", "hir"]
    bad = write_conf(workdir / "b.conf", target_conf(
        workdir / "w.db", workdir / "f.img", {"file_size": "64M", "pts": "iops wsat iops"}))
    p = run_wearmond(bad, "--check")
    assert p.returncode == 78
    assert f"{bad}:8: pts: \"iops\" is listed twice" in p.stderr, p.stderr
