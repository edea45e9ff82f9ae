"""Why it slowed, on simulated drives shaped like real ones (a 20-character
serial, a 40-character model, 8 of firmware): every catalogued field of a
crash alert reaches a real journald (started by the test) and the alert
hook's environment; the cause is judged from the dip, with faults injected
into the simulated SSD while an iteration runs (a latency fault, a heat
spike, a full drive's wear, a stopped daemon), alone and in pairs; the
peak temperature catches a 2-second spike; the drive's readings are stored
beside the samples.

Safety: the only devices written are loop devices on simulated drives
(tools/simssd) this file starts and stops; journald runs in a private
mount namespace (service_helper.PrivateJournald)."""

import re
import signal
import subprocess
import time

import pytest

import simssd_helper
from conftest import (REPO, WEARMOND, query, spawn, start_wearmond, stop, target_conf,
                      wait_for, write_conf)
from service_helper import PrivateJournald
from test_service import IDS, read_alerts, write_alert_script

CATALOG = REPO / "systemd/wearmon.catalog"

# A small drive (tests/integration/test_device_evidence.py's): 4 channels
# of 800 us pages, about 20 MiB/s fresh; a full rewrite garbage-collects.
DRIVE = dict(capacity="32M", page="4k", erase_block="128k", spare=7, channels=4,
             t_prog="800us", t_read="50us", t_erase="2ms", cache="512k")

KEYS = {"allow_destroy": "yes", "fill": "no", "fill_block_size": "128k",
        "fill_queue_depth": "8", "workload": "randwrite", "block_size": "4k",
        "queue_depth": "16", "sample_interval": "1s", "sample_crash_below": "30%",
        "device_poll_interval": "0.5s", "amount": "1000x"}

pytestmark = simssd_helper.needs_sim


def catalog_fields(message_id):
    """The fields the catalog's entry for message_id lists ("Fields: ...")."""
    entry = CATALOG.read_text().split(f"\n-- {message_id}\n", 1)[1].split("\n-- ", 1)[0]
    para = entry.split("\nFields: ", 1)[1].split("\n\n", 1)[0]
    return sorted(set(re.findall(r"\b[A-Z][A-Z_]{2,}\b", para)))


def alerts(db, kind):
    """The events of kind with their data's evidence, oldest first."""
    return query(db, "SELECT e.id, c.number AS cycle, i.number AS iteration,"
                     " json_extract(e.data, '$.cause') AS cause,"
                     " json_extract(e.data, '$.before') AS before,"
                     " json_extract(e.data, '$.device_wa') AS wa,"
                     " json_extract(e.data, '$.baseline_device_wa') AS before_wa,"
                     " json_extract(e.data, '$.throttle_seconds') AS throttled,"
                     " json_extract(e.data, '$.dip_start_s') AS dip_start,"
                     " json_extract(e.data, '$.dip_end_s') AS dip_end, e.message"
                     " FROM events e JOIN cycles c ON c.id = e.cycle_id"
                     " JOIN iterations i ON i.id = e.iteration_id"
                     f" WHERE e.kind = '{kind}' ORDER BY e.id")


# ---- every field reaches the journal ---------------------------------------

def test_every_catalogued_field_reaches_the_journal(workdir):
    """A thermal crash on a drive with the longest identity the schema
    allows, wearmond run as the unit runs it: the journal entry carries
    every field the catalog lists for it, with the drive's identity and
    CAUSE=; the alert hook gets the same in WEARMON_*."""
    why = PrivateJournald.unavailable()
    if why:
        pytest.skip(f"private journald: {why}")
    # test_device_evidence.py's thermal crash: the second cycle reaches the
    # throttle temperature early and is throttled to 2 MiB/s
    sim = dict(DRIVE, thermal_rise=15, thermal_tau="60s", throttle_temp=46,
               throttle_rate="2M")
    script, out = write_alert_script(workdir)
    with simssd_helper.sim_drive(**sim) as d:
        ident = d.identity()
        assert (len(ident["serial"]), len(ident["model"]), len(ident["firmware"])) == \
            (20, 40, 8), ident
        db = workdir / "t.db"
        conf = write_conf(workdir / "t.conf", target_conf(
            db, d.loop, dict(KEYS, amount="10x", duration="0", alert_command=script),
            sizes="4M", cycles="2"))
        with PrivateJournald(workdir / "journal-root") as jd:
            p = subprocess.run(jd.as_unit([WEARMOND, "-c", conf]), capture_output=True,
                               text=True, timeout=600, stdin=subprocess.DEVNULL)
            assert p.returncode == 0, p.stderr
            entries = jd.entries(f"MESSAGE_ID={IDS['throughput-crash']}")
            lost = jd.entries("SYSLOG_IDENTIFIER=wearmond", "-g", "could not be written")
    assert query(db, "SELECT serial, model, firmware FROM targets") == [ident]
    assert entries, "no crash alert in the journal"
    e = entries[0]
    fields = catalog_fields(IDS["throughput-crash"])
    assert "CAUSE" in fields and "DIP_DEVICE_WA" in fields and "MODEL" in fields, fields
    missing = [f for f in fields if f not in e]
    assert not missing, (missing, e)
    assert lost == [], lost
    assert (e["SERIAL"], e["MODEL"], e["FIRMWARE"]) == \
        (ident["serial"], ident["model"], ident["firmware"])
    assert e["CAUSE"] == "thermal" and e["BEFORE"] == "baseline", e
    # every figure the simulated SSD reports is there, to the millisecond
    for f in ("DIP_START_S", "DIP_END_S", "DIP_DEVICE_WA", "DIP_THROTTLE_MS",
              "DIP_PEAK_TEMP_C", "DIP_HOST_STALL_MS", "BEFORE_ITERATION_ID",
              "BEFORE_DEVICE_WA", "BEFORE_THROTTLE_MS", "BEFORE_PEAK_TEMP_C"):
        assert e[f] != "", (f, e)
    assert e["THROTTLE_RESOLUTION_MS"] == "1"
    assert int(e["DIP_THROTTLE_MS"]) >= 1000 and int(e["BEFORE_THROTTLE_MS"]) == 0, e
    # the hook saw the same alert with the same evidence
    calls = [c for c in read_alerts(out) if c["WEARMON_KIND"] == "throughput-crash"]
    assert calls, read_alerts(out)
    c = calls[0]
    assert c["WEARMON_CAUSE"] == "thermal"
    assert (c["WEARMON_SERIAL"], c["WEARMON_MODEL"], c["WEARMON_FIRMWARE"]) == \
        (ident["serial"], ident["model"], ident["firmware"])
    for f in fields:
        if f not in ("MESSAGE_ID",):
            assert c[f"WEARMON_{f}"] == e[f], (f, c, e)


# ---- the cause judged from the dip: the fault matrix -----------------------

def progress(db):
    rows = query(db, "SELECT cycle, phase, phase_seconds FROM progress")
    return rows[0] if rows else None


def in_measure(db, cycle, seconds):
    """The measured phase of cycle has run for seconds."""
    r = progress(db)
    return r and r["cycle"] == cycle and r["phase"] == "measure" and \
        (r["phase_seconds"] or 0) >= seconds


def stop_daemon(proc, seconds):
    """SIGSTOP the whole daemon for seconds: the host stalls."""
    proc.send_signal(signal.SIGSTOP)
    time.sleep(seconds)
    proc.send_signal(signal.SIGCONT)


def run_case(workdir, name, sim, keys, cycles, inject):
    """Run wearmond on a simulated drive with options sim; once the (first)
    measured phase of the last cycle has run 4 s, inject(drive, proc).
    Returns the database."""
    with simssd_helper.sim_drive(**sim) as d:
        db = workdir / f"{name}.db"
        conf = write_conf(workdir / f"{name}.conf", target_conf(
            db, d.loop, dict(KEYS, **dict({"sizes": "100%"}, **keys)), cycles=str(cycles)))
        proc = start_wearmond(conf)
        try:
            if inject:
                assert wait_for(lambda: in_measure(db, cycles, 4), 300), progress(db)
                inject(d, proc)
            assert wait_for(lambda: proc.poll() is not None, 600)
            rc, _, err = stop(proc)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
        assert rc == 0, err
    return db


def latency(d, proc):
    # 16 in flight, each 200 ms late: about 0.3 MiB/s for some 5 s
    d.fault_latency(200, 400)


def quicker_latency(d, proc):
    # 16 in flight, each 100 ms late: about 0.6 MiB/s for some 5 s, so the
    # dip the alert judges (its first three one-second samples) carries
    # some 1.9 MiB of host writes, and the drive's write amplification in it
    # is known (it takes CAUSE_WA_MIN_BYTES, 1 MiB: daemon/cause.h)
    d.fault_latency(100, 800)


def heat(d, proc):
    # 40 C hotter for 4 s: past throttle_temp (60 C), back below it after
    d.control("fault heat 40 4")


def latency_and_heat(d, proc):
    latency(d, proc)
    heat(d, proc)


def stall(d, proc):
    stop_daemon(proc, 4.0)


HOT = dict(throttle_temp=60, throttle_rate="256k")
# A drive large enough that 12 s of random writes never garbage-collect:
# its write amplification stays 1.0 (on the small one it climbs as the
# drive fills, a change of its own in the middle of the phase).
ROOMY = dict(DRIVE, capacity="256M")

# The small drive with pages programmed four times as fast: full, it still
# garbage-collects (its WA stays far above 1.5) but writes some 4 MiB/s, so
# a dip long enough to carry more than CAUSE_WA_MIN_BYTES stays under 30%
# of the iteration's average.
QUICK_GC = dict(DRIVE, t_prog="200us")

# A full drive's wear (test_device_evidence.py's): each cycle fills half the
# drive, then all of it; the second cycle's half is rewritten on a full
# drive, garbage-collecting, against the first's on a fresh one.
WORN = dict(fill="yes", sizes="50% 100%")

# name: drive options, keys, cycles, injection, the alert and cause expected
# ("none": no crash or collapse at all, the host's stall is its own alert)
CASES = {
    "latency": (ROOMY, dict(duration="12s"), 1, latency, "throughput-collapse", "unknown"),
    "latency on a drive whose WA was already high": (
        QUICK_GC, dict(fill="yes", duration="20s"), 1, quicker_latency, "throughput-collapse",
        "unknown"),
    "heat": (dict(ROOMY, **HOT), dict(duration="12s"), 1, heat, "throughput-collapse",
             "thermal"),
    "wear": (DRIVE, dict(WORN, duration="4s"), 2, None, "throughput-crash", "wear"),
    "heat and wear": (dict(DRIVE, **HOT), dict(WORN, duration="12s"), 2, heat,
                      "throughput-crash", "thermal"),
    "latency and heat": (dict(ROOMY, **HOT), dict(duration="12s"), 1, latency_and_heat,
                         "throughput-collapse", "thermal"),
    "stalled host": (ROOMY, dict(duration="12s"), 1, stall, None, "none"),
    "stalled host and wear": (DRIVE, dict(WORN, duration="12s"), 2, stall,
                              "throughput-crash", "wear"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_fault_matrix(workdir, case):
    sim, keys, cycles, inject, kind, want = CASES[case]
    db = run_case(workdir, re.sub(r"\W+", "-", case), sim, keys, cycles, inject)
    rows = query(db, "SELECT c.number AS cycle, i.number, i.mibps_avg, i.device_wa,"
                     " i.device_throttle_ms, i.host_stall_seconds FROM iterations i"
                     " JOIN cycles c ON c.id = i.cycle_id WHERE i.phase = 'measure'"
                     " ORDER BY i.id")
    drive = alerts(db, "throughput-crash") + alerts(db, "throughput-collapse")
    print(case, rows, [(a["cycle"], a["cause"], a["message"]) for a in drive])
    assert query(db, "SELECT count(*) AS n FROM device_series")[0]["n"] > 0
    if kind is None:
        assert drive == [], drive
        hs = query(db, "SELECT value FROM events WHERE kind = 'host-stall'")
        assert hs and hs[0]["value"] >= 3, hs
        return
    found = [a for a in alerts(db, kind) if a["cycle"] == cycles and a["iteration"] == 1]
    assert found, (kind, drive)
    a = found[0]
    assert a["cause"] == want, a
    if case == "latency on a drive whose WA was already high":
        # the drive garbage-collected before the dip as much as in it
        # (a busy host may leave the window before the dip without two
        # readings of the drive: then it has no WA, and still no wear)
        assert a["before"] == "iteration" and a["wa"] >= 1.5, a
        if a["before_wa"] is not None:
            assert a["before_wa"] >= 1.5 and a["wa"] < 1.25 * a["before_wa"], a
    if want == "thermal":
        assert a["throttled"] >= 0.4, a
    if want == "wear":
        assert a["wa"] >= 1.25 * a["before_wa"], a


# ---- thermal evidence at the source's resolution -----------------------------

def test_two_second_heat_spike_is_caught(workdir):
    """A drive 30 C hotter for 2 s in the middle of an iteration (no
    throttle): polled every second, its peak temperature is in the row and
    the readings show the spike begin and end."""
    with simssd_helper.sim_drive(**DRIVE) as d:
        db = workdir / "spike.db"
        conf = write_conf(workdir / "spike.conf", target_conf(
            db, d.loop, dict(KEYS, duration="10s", device_poll_interval="1s"),
            sizes="100%", cycles="1"))
        proc = start_wearmond(conf)
        try:
            assert wait_for(lambda: in_measure(db, 1, 3), 300), progress(db)
            before = d.stats()["temperature_c"]
            d.control("fault heat 30 2")
            assert wait_for(lambda: proc.poll() is not None, 300)
            rc, _, err = stop(proc)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert rc == 0, err
    row = query(db, "SELECT id, device_peak_temp_c FROM iterations")[0]
    temps = [r["temp_c"] for r in query(db, f"SELECT temp_c FROM device_series WHERE"
                                             f" iteration_id = {row['id']} ORDER BY t_ms")]
    print(f"before the spike {before:.1f} C; readings {temps}")
    assert row["device_peak_temp_c"] >= before + 25, (row, before)
    hot = [i for i, t in enumerate(temps) if t >= before + 25]
    assert hot and hot[0] > 0 and hot[-1] < len(temps) - 1, temps
    assert len(hot) <= 3, temps  # 2 s at one reading a second (and the edges)


def test_throttle_time_to_the_millisecond(workdir):
    """A heat spike of 1.5 s past the throttle temperature: the row stores
    the throttle time in milliseconds (the simulated SSD's unit, which it
    names), the whole seconds beside it."""
    with simssd_helper.sim_drive(**dict(DRIVE, **HOT)) as d:
        db = workdir / "ms.db"
        conf = write_conf(workdir / "ms.conf", target_conf(
            db, d.loop, dict(KEYS, duration="8s"), sizes="100%", cycles="1"))
        proc = start_wearmond(conf)
        try:
            assert wait_for(lambda: in_measure(db, 1, 3), 300), progress(db)
            d.control("fault heat 40 1.5")
            assert wait_for(lambda: proc.poll() is not None, 300)
            rc, _, err = stop(proc)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert rc == 0, err
        total = d.stats()["throttle_ms"]
    r = query(db, "SELECT device_throttle_ms AS ms, device_throttle_res_ms AS res,"
                  " device_throttle_seconds AS s FROM iterations")[0]
    print(r, "drive total", total)
    assert r["res"] == 1 and r["s"] == r["ms"] // 1000
    # the only throttle of the drive's life, all of it inside the row
    assert r["ms"] == total and r["ms"] >= 1000, r
