"""wearmond end to end on the simulated SSD: the drive degrades when it is
rewritten without TRIM, an erase brings it back, and the daemon's alerts say
so; a fault mid-iteration is recorded and alerted while another target runs
on."""

import time

import pytest

import simssd_helper
from conftest import MiB, query, run_wearmond, start_wearmond, wait_for, write_conf

pytestmark = simssd_helper.needs_sim

# A small drive: fresh random writes ~20 MiB/s, a full one several times slower.
DRIVE = dict(capacity="32M", page="4k", erase_block="128k", spare=7, channels=4,
             t_prog="800us", t_read="50us", t_erase="2ms", cache="512k")


def target(name, dev, **over):
    keys = {"device": dev, "allow_destroy": "yes", "sizes": "50% 100%", "fill": "yes",
            "fill_block_size": "128k", "fill_queue_depth": "8", "workload": "randwrite",
            "block_size": "4k", "queue_depth": "16", "duration": "3s",
            "sample_interval": "0.5s"}
    keys.update(over)
    return f"[target {name}]\n" + "\n".join(f"{k} = {v}" for k, v in keys.items()) + "\n"


# For the crash and the recovery: slow enough that every random 4k write
# costs more flash time (2 channels, 3 ms: ~670 writes a second) than FUSE
# and the loop driver need to pass it on even while other work keeps the
# CPUs busy, so that the fresh and the recovered cycles are both set by the
# flash and compare with each other. On DRIVE (~5000 a second) a busy
# machine made cycle 3 0.71 of cycle 1 though the drive was as new.
SLOW_DRIVE = dict(DRIVE, capacity="16M", channels=2, t_prog="3ms")


def test_crash_erase_recovery(workdir):
    with simssd_helper.sim_drive(**SLOW_DRIVE) as d:
        erase = d.erase_script(workdir)
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf", f"[wearmon]\ndatabase = {db}\n\n" + target(
            "sim", d.loop, cycles=3, between_cycles="none secure-erase none",
            secure_erase="command", secure_erase_command=erase))
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
        wa = d.stats()["write_amplification"]

    rows = query(db, "SELECT cycle, size_bytes, mibps_avg FROM history ORDER BY iteration_id")
    first = {r["size_bytes"]: r["mibps_avg"] for r in rows if r["cycle"] == 1}
    by_cycle = {(r["cycle"], r["size_bytes"]): r["mibps_avg"] for r in rows}
    half = 8 * MiB
    print(f"\n{half // MiB} MiB: cycle 1 {first[half]:.2f}, cycle 2 {by_cycle[(2, half)]:.2f}, "
          f"cycle 3 {by_cycle[(3, half)]:.2f} MiB/s")
    # cycle 2 runs on a drive still full from cycle 1: the half size crashes
    assert by_cycle[(2, half)] < 0.5 * first[half]
    # after the erase, cycle 3 is back near the first
    assert by_cycle[(3, half)] > 0.9 * first[half]
    assert wa > 1.2

    alerts = query(db, "SELECT kind, severity, cycle, value, baseline, message_id FROM alerts"
                       " ORDER BY event_id")
    kinds = [(a["kind"], a["cycle"]) for a in alerts]
    assert ("throughput-crash", 2) in kinds
    assert ("throughput-recovered", 3) in kinds
    crash = next(a for a in alerts if a["kind"] == "throughput-crash")
    assert crash["severity"] in ("warning", "crit")
    assert crash["value"] < 0.5 * crash["baseline"]
    assert len(crash["message_id"]) == 32
    rec = next(a for a in alerts if a["kind"] == "throughput-recovered")
    assert rec["severity"] == "notice"
    act = query(db, "SELECT number, action, action_outcome FROM cycles ORDER BY number")
    assert [(c["action"], c["action_outcome"]) for c in act] == [
        ("none", "skipped"), ("secure-erase", "ok"), ("none", "skipped")]
    # the health snapshots carry the drive's own write amplification
    h = query(db, "SELECT source, write_amplification FROM health ORDER BY id")
    assert all(x["source"] == "simssd" for x in h)
    assert h[1]["write_amplification"] is not None and h[1]["write_amplification"] >= 1.0


@pytest.mark.parametrize("fault", ["ioerror 0 32M write", "vanish"])
def test_io_error_mid_iteration_other_target_runs_on(workdir, make_loop, fault):
    """A range that fails writes, or the whole drive gone (every I/O fails):
    that target fails with an io-error alert naming the offset, exit 1, and
    the other target completes its cycles."""
    other = make_loop(32 * MiB)
    with simssd_helper.sim_drive(**DRIVE) as d:
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf", f"[wearmon]\ndatabase = {db}\n\n"
                          + target("sim", d.loop, cycles=2, fill="no", duration="60s",
                                   amount="1000x")
                          + target("plain", other.dev, cycles=3, fill="no", duration="1s"))
        proc = start_wearmond(conf)
        try:
            # once the simulated drive takes the first measured phase's writes
            # (without a fill, wearmond writes nothing else to it), fail them;
            # the phase would run a minute, so it is caught on any machine
            assert wait_for(lambda: d.stats()["host_bytes_written"] > 0, 120)
            d.control(f"fault {fault}")
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 1, err
    sim = query(db, "SELECT i.status, i.error, i.errors FROM iterations i JOIN targets t"
                    " ON t.id = i.target_id WHERE t.name = 'sim' ORDER BY i.id")
    assert sim[-1]["status"] == "failed"
    assert "I/O error" in sim[-1]["error"] and "offset" in sim[-1]["error"]
    ev = query(db, "SELECT e.kind, e.severity, e.message_id FROM events e JOIN targets t"
                   " ON t.id = e.target_id WHERE t.name = 'sim' AND e.kind = 'io-error'")
    assert ev and ev[0]["severity"] in ("err", "crit") and ev[0]["message_id"]
    plain = query(db, "SELECT c.number, c.status FROM cycles c JOIN targets t"
                      " ON t.id = c.target_id WHERE t.name = 'plain' ORDER BY c.number")
    assert [(c["number"], c["status"]) for c in plain] == [(1, "done"), (2, "done"), (3, "done")]


def test_measured_throughput_is_the_drives_bytes_over_the_phase(workdir):
    """The numbers are right, judged from what no machine's speed moves: on
    a fresh simulated drive wearmond's iteration moved exactly the bytes the
    drive counted (its own host_bytes_written, and the row's
    device_host_bytes), its MiB/s is those bytes over the phase's seconds
    (less any host stall), the samples add up to the bytes and to the
    phase, and the phase lasted at least as long as the drive's flash
    needed for them (the drive holds every write until its flash work is
    done, but for its write cache) and no longer than the daemon ran. How
    close wearmond's rate comes to fio's on the same drive depends on the
    CPU left to FUSE and the loop driver: `make bench` prints it
    (tools/bench/bench_sim.py, "wearmond against fio")."""
    amount = 24 * MiB
    with simssd_helper.sim_drive(**DRIVE) as d:
        implied = d.expected_fresh_run(amount)
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf", f"[wearmon]\ndatabase = {db}\n\n" + target(
            "sim", d.loop, cycles=1, sizes="24M", fill="no", workload="seqwrite",
            block_size="128k", queue_depth="8", duration="0", sample_interval="0.25s"))
        before = d.stats()
        t0 = time.monotonic()
        p = run_wearmond(conf, timeout=600)
        lifetime = time.monotonic() - t0
        assert p.returncode == 0, p.stderr
        after = d.stats()
    it = query(db, "SELECT bytes, seconds, mibps_avg, mibps_min, mibps_max, device_host_bytes,"
                   " host_stall_seconds FROM iterations")[0]
    s = query(db, "SELECT sum(bytes) AS b, sum(mibps * duration_ms / 1000) AS mib,"
                  " sum(duration_ms) AS ms, sum(coalesce(host_stall_ms, 0)) AS stall_ms"
                  " FROM samples WHERE phase = 'measure'")[0]
    print(f"wearmond {it['mibps_avg']:.2f} MiB/s over {it['seconds']:.3f} s (the daemon ran "
          f"{lifetime:.1f} s), the drive's options allow {implied / MiB:.2f}")
    assert it["bytes"] == amount
    assert after["host_bytes_written"] - before["host_bytes_written"] == amount
    assert it["device_host_bytes"] == amount, it
    ran = it["seconds"] - s["stall_ms"] / 1000
    assert it["mibps_avg"] == pytest.approx(amount / MiB / ran, rel=1e-6), (it, s)
    # the samples add up to the bytes moved and their lengths to the phase
    assert s["b"] == amount, s
    assert abs(s["mib"] * MiB / amount - 1) <= 0.001, s
    assert s["ms"] / 1000 == pytest.approx(it["seconds"], abs=0.002), (s, it)
    assert it["mibps_min"] <= it["mibps_avg"] <= it["mibps_max"], it
    # no faster than the drive allows, no longer than the daemon lived
    assert amount / implied * 0.99 <= it["seconds"] <= lifetime, (it, implied, lifetime)
