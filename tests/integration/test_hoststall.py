"""Host stalls told apart from drive stalls: wearmond stopped with
SIGSTOP in the middle of a measured phase on a real loop device. The stall
is stored as the host's (iteration, samples, an event), left out of the
rates, and raises no drive alert; rows read back with the sqlite3 CLI."""

import json
import signal
import time

import pytest

from conftest import (MiB, query, run_wearmon, start_wearmond, stop, target_conf, wait_for,
                      write_conf)

STOP_S = 6.0       # the stop; hstall.h counts a tick 1 s late as a stall

# The unstalled row must see no stall: another test beside it could hold
# the CPU for a second.
pytestmark = pytest.mark.alone
LOOSE = 4.0        # rates of one run compared within this factor, either way

DEFAULTS = {
        "region_size": "100%",
        "fill": "no",
        "workload": "seqread",
        "block_size": "128k",
        "queue_depth": "4",
        "cycles": "1",
        "sizes": "16M",
        "amount": "10000x",
        "duration": "10s",
        "repeat": "2",                # two rows of one size: the first unstalled
        "sample_interval": "1s",
        # thresholds the stalled row trips on figures that count the stop
        # (a quarter of its rate, samples of 0 MiB/s), and that two rows of
        # one run within LOOSE of each other never trip
        "alert_below": "25%",
        "alert_critical": "0%",
        "sample_crash_below": "5%",
}


def test_sigstop_is_a_host_stall_not_the_drive(workdir, make_loop):
    loop = make_loop(64 * MiB)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(db, loop.dev, DEFAULTS))
    proc = start_wearmond(conf)
    try:
        assert wait_for(lambda: db.exists() and query(
            db, "SELECT 1 FROM iterations WHERE number = 2 AND status = 'running'"), 60)
        time.sleep(1.0)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGSTOP)
        time.sleep(STOP_S)
        proc.send_signal(signal.SIGCONT)
        stopped = time.monotonic() - t0
        assert wait_for(lambda: proc.poll() is not None, 60)
        rc, _, err = stop(proc)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
    assert rc == 0, err

    rows = query(db, "SELECT id, number, status, bytes, seconds, mibps_avg, mibps_min,"
                     " mibps_max, host_stall_seconds, lat_host_stall, lat_max_us"
                     " FROM iterations ORDER BY number")
    assert [r["status"] for r in rows] == ["done", "done"], rows
    calm, hit = rows
    # the unstalled row carries no stall; the stalled one at least 0.8 of it
    assert calm["host_stall_seconds"] is None and calm["lat_host_stall"] is None, calm
    # its latencies say the stall is in them: an I/O in flight waited it out
    assert hit["lat_host_stall"] == 1, hit
    assert hit["lat_max_us"] >= 0.8 * STOP_S * 1e6, hit
    assert hit["host_stall_seconds"] is not None, hit
    assert 0.8 * STOP_S <= hit["host_stall_seconds"] <= stopped + 1.0, (hit, stopped)
    assert hit["mibps_min"] <= hit["mibps_avg"] <= hit["mibps_max"], hit
    # its rate is over the time the host ran: like the unstalled row's
    ratio = hit["mibps_avg"] / calm["mibps_avg"]
    assert 1 / LOOSE < ratio < LOOSE, (ratio, rows)

    samples = query(db, f"SELECT t_ms, duration_ms, bytes, host_stall_ms FROM samples"
                        f" WHERE iteration_id = {hit['id']} ORDER BY t_ms")
    stalled = [s for s in samples if s["host_stall_ms"] is not None]
    assert stalled, samples
    assert all(0 < s["host_stall_ms"] <= s["duration_ms"] + 0.01 for s in stalled), stalled
    assert abs(sum(s["host_stall_ms"] for s in stalled) / 1000
               - hit["host_stall_seconds"]) < 0.01, (stalled, hit)
    # every byte still in exactly one sample
    assert sum(s["bytes"] for s in samples) == hit["bytes"]
    assert not query(db, f"SELECT 1 FROM samples WHERE iteration_id = {calm['id']}"
                         f" AND host_stall_ms IS NOT NULL")

    ev = query(db, f"SELECT severity, value, message, message_id FROM events"
                   f" WHERE kind = 'host-stall' AND iteration_id = {hit['id']}")
    assert len(ev) == 1, ev
    assert ev[0]["severity"] == "warning" and ev[0]["message_id"], ev
    assert abs(ev[0]["value"] - hit["host_stall_seconds"]) < 0.01, ev
    drive = query(db, f"SELECT kind, message FROM events WHERE iteration_id = {hit['id']}"
                      f" AND kind IN ('throughput-crash', 'throughput-collapse')")
    assert drive == [], drive
    assert "host stall" in err, err

    show = run_wearmon("show", hit["id"], db=db, check=0)
    assert "host stall" in show.stdout, show.stdout
    js = json.loads(run_wearmon("show", "--format", "json", hit["id"], db=db,
                                check=0).stdout)
    assert js["iteration"]["host_stall_seconds"] == hit["host_stall_seconds"], js["iteration"]
    assert any(s["host_stall_ms"] for s in js["samples"])
