"""Statistics that add up (min, average and max of a row; samples that sum
to its bytes), end to end: the real
wearmond on a real loop device, rows read back with the sqlite3 CLI."""

import signal
import subprocess
import time

from conftest import (MiB, WEARMON, query, run_wearmond, start_wearmond, stop, target_conf,
                      wait_for, write_conf)


DEFAULTS = {
        "region_size": "100%",
        "fill": "yes",
        "fill_block_size": "128k",
        "fill_queue_depth": "4",
        "workload": "randwrite",
        "block_size": "4k",
        "queue_depth": "4",
        "cycles": "1",
        "sample_interval": "0.1s",
}


def test_samples_add_up_and_min_avg_max(workdir, make_loop):
    """Phases of 0.235 s with 0.1 s samples: the part after the last whole
    interval (35 ms and the drain of the I/Os in flight, which a loaded
    machine stretches) is folded into the sample before. Every done row has
    min <= avg <= max, the samples of each phase sum to its bytes and span
    its seconds, one per whole interval of the row's own seconds, the last
    one has its real length."""
    loop = make_loop(64 * MiB)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(
        db, loop.dev, DEFAULTS, sizes="8M 16M 32M", amount="1000x", duration="235ms"))
    p = run_wearmond(conf)
    assert p.returncode == 0, p.stderr

    rows = query(db, "SELECT id, status, bytes, seconds, mibps_avg, mibps_min, mibps_max,"
                     " mibps_stddev, fill_bytes FROM iterations ORDER BY id")
    assert len(rows) == 3 and all(r["status"] == "done" for r in rows)
    for r in rows:
        assert r["mibps_min"] <= r["mibps_avg"] <= r["mibps_max"], r
        assert r["mibps_stddev"] >= 0
        s = query(db, f"SELECT count(*) AS n, sum(bytes) AS b, sum(duration_ms) AS ms,"
                      f" max(t_ms) AS last FROM samples"
                      f" WHERE iteration_id = {r['id']} AND phase = 'measure'")[0]
        # samples are cut every 0.1 s of the phase: one per whole interval,
        # the rest (under an interval) folded into the last; 0.235 s at least
        whole = int(r["seconds"] / 0.1)
        assert whole >= 2 and s["n"] == whole, (s, r)
        assert s["b"] == r["bytes"], (s, r)
        assert abs(s["ms"] - r["seconds"] * 1000) < 1.0, (s, r)
        durations = [x["duration_ms"] for x in query(
            db, f"SELECT duration_ms FROM samples WHERE iteration_id = {r['id']}"
                f" AND phase = 'measure' ORDER BY t_ms")]
        assert all(abs(d - 100) < 1.0 for d in durations[:-1]), durations
        # the last: an interval and the rest, its real length
        rest = r["seconds"] * 1000 - 100 * (whole - 1)
        assert 100 <= durations[-1] < 200 and abs(durations[-1] - rest) < 1.0, (durations, r)
        f = query(db, f"SELECT sum(bytes) AS b FROM samples"
                      f" WHERE iteration_id = {r['id']} AND phase = 'fill'")[0]
        assert f["b"] == r["fill_bytes"]
    # the view and the CLI read the same figures
    hist = query(db, "SELECT mibps_min, mibps_avg, mibps_max FROM history")
    assert all(h["mibps_min"] <= h["mibps_avg"] <= h["mibps_max"] for h in hist)
    # the database refuses a row that breaks the rule
    bad = subprocess.run(["sqlite3", str(db), f"UPDATE iterations SET mibps_min ="
                          f" mibps_avg + 1 WHERE id = {rows[0]['id']}"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "mibps_min <= mibps_avg <= mibps_max" in bad.stderr


def test_short_phase_has_no_spread(workdir, make_loop):
    """A phase shorter than two samples stores NULL min, max and stddev, not
    figures from one sample; its average is still there."""
    loop = make_loop(64 * MiB)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(
        db, loop.dev, DEFAULTS, sizes="8M", amount="1000x", duration="150ms", fill="no"))
    p = run_wearmond(conf)
    assert p.returncode == 0, p.stderr
    r = query(db, "SELECT id, bytes, mibps_avg, mibps_min, mibps_max, mibps_stddev"
                  " FROM iterations")[0]
    assert r["mibps_avg"] > 0
    assert r["mibps_min"] is None and r["mibps_max"] is None and r["mibps_stddev"] is None
    s = query(db, f"SELECT count(*) AS n, sum(bytes) AS b FROM samples"
                  f" WHERE iteration_id = {r['id']}")[0]
    assert s["n"] == 1 and s["b"] == r["bytes"]  # shorter than two intervals
    # the cycle's figures count such a size by its average
    c = query(db, "SELECT mibps_min, mibps_avg, mibps_max FROM cycle_summary")[0]
    assert c["mibps_min"] == c["mibps_avg"] == c["mibps_max"] == r["mibps_avg"]
    show = subprocess.run([str(WEARMON), "-d", str(db), "show", str(r["id"])],
                          capture_output=True, text=True)
    assert show.returncode == 0, show.stderr
    assert "min -, max -, stddev -" in show.stdout, show.stdout


def test_interrupted_row_has_null_figures(workdir, make_loop):
    """SIGTERM inside a measured phase: the row is 'interrupted' with NULL
    rates and latencies (not 0.0), keeps its bytes and seconds; history,
    show and the samples chart do not present a 0.0 average."""
    loop = make_loop(64 * MiB)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(
        db, loop.dev, DEFAULTS, sizes="8M 16M", amount="1000x", duration="8s", fill="no"))
    proc = start_wearmond(conf)
    try:
        assert wait_for(lambda: db.exists() and query(
            db, "SELECT 1 FROM iterations WHERE number = 1 AND status = 'running'"), 30)
        time.sleep(0.8)
        rc, _, err = stop(proc, signal.SIGTERM)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rc == 0, err
    r = query(db, "SELECT * FROM iterations WHERE number = 1")[0]
    assert r["status"] == "interrupted"
    for col in ("mibps_avg", "mibps_min", "mibps_max", "mibps_stddev", "iops_avg",
                "lat_mean_us", "lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p999_us",
                "lat_p9999_us", "lat_max_us"):
        assert r[col] is None, (col, r[col])
    assert r["bytes"] > 0 and 0 < r["seconds"] < 8
    s = query(db, f"SELECT sum(bytes) AS b FROM samples WHERE iteration_id = {r['id']}")[0]
    assert s["b"] == r["bytes"]
    assert "0.0 MiB/s" not in err and "no figures (interrupted" in err, err
    hist = query(db, "SELECT mibps_avg FROM history WHERE iteration = 1")[0]
    assert hist["mibps_avg"] is None
    show = subprocess.run([str(WEARMON), "-d", str(db), "show", str(r["id"])],
                          capture_output=True, text=True)
    assert show.returncode == 0, show.stderr
    assert "avg -," in show.stdout and "0.0" not in show.stdout.split("MiB/s", 1)[1][:60]
    svg = workdir / "s.svg"
    plot = subprocess.run([str(WEARMON), "-d", str(db), "plot", "--kind", "samples", "--iteration", str(r["id"]),
                           "-o", str(svg)], capture_output=True, text=True)
    assert plot.returncode == 0, plot.stderr
    text = svg.read_text()
    assert "measured average" not in text and "interrupted" in text
