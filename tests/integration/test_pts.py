"""The PTS tests as presets (pts =): each runs end to end on the simulated
SSD with shortened cells, every cell a row saying its test, round and
cell; the steady-state verdict each stores is checked against a hand
computation from the stored rows (the five-round window, both criteria);
the demand-intensity sweep's chosen points and their histograms, the
cross-stimulus recovery's access groups and the write saturation's bytes
are checked from the rows too."""

import json

import pytest

import simssd_helper
from conftest import (query, run_wearmond, target_conf, write_conf)

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
               and r["amount_bytes"] == 0 and r["lat_p99999_us"] >= r["lat_p99_us"]
               for r in rows), rows[0]
    # the tracking variable: 4 KiB random writes
    track = [r for r in rows if r["pts_tracking"]]
    assert [(r["block_size"], r["read_percent"]) for r in track] == [(4096, 0)] * rounds
    series = check_verdict(rows, lambda r: r["pts_tracking"], lambda r: r["iops_avg"])
    y = series[(4096, 0)]
    steady = hand_steady(y)[0]
    # rounds ran until the window was steady, or to the limit
    assert steady or rounds == 6, y
    assert not any(hand_steady(y[:k])[0] for k in range(5, rounds)), y
    # the preconditioning fill: twice the active range, before the first cell
    assert rows[0]["fill_bytes"] == 2 * rows[0]["size_bytes"], rows[0]
    assert all(r["fill_bytes"] is None for r in rows[1:])
    assert rows[-1]["more_rows"] == 0 and all(r["more_rows"] == 1 for r in rows[:-1])
    assert "PTS iops: steady state" in log, log
