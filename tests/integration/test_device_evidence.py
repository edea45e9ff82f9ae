"""The drive's own evidence per iteration (issue 33): on the simulated SSD,
whose counters file is the truth, every iteration stores the host and
media bytes the drive counted over it and their ratio, and the rows'
ratios weighted by their host bytes are the drive's own; a loop device
without counters stores none of it (NULL, never 0)."""

import pytest

import simssd_helper
from conftest import MiB, query, run_wearmond, target_conf, write_conf

# A small drive (tests/integration/test_wear_sim.py's): a full rewrite of it
# garbage-collects, so the rows' write amplification differs.
DRIVE = dict(capacity="32M", page="4k", erase_block="128k", spare=7, channels=4,
             t_prog="800us", t_read="50us", t_erase="2ms", cache="512k")

KEYS = {"allow_destroy": "yes", "fill": "yes", "fill_block_size": "128k",
        "fill_queue_depth": "8", "workload": "randwrite", "block_size": "4k",
        "queue_depth": "16", "duration": "2s", "sample_interval": "0.5s"}

DEVICE_COLUMNS = ("device_host_bytes", "device_media_bytes", "device_wa", "device_peak_temp_c",
                  "device_throttle_seconds", "device_media_errors", "device_spare_pct")


@simssd_helper.needs_sim
def test_iteration_write_amplification_adds_up_to_the_drives(workdir):
    with simssd_helper.sim_drive(**DRIVE) as d:
        before = d.stats()
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf", target_conf(
            db, d.loop, KEYS, sizes="50% 100%", cycles="2"))
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
        st = d.stats()
    rows = query(db, "SELECT number, status, " + ", ".join(DEVICE_COLUMNS)
                 + " FROM iterations ORDER BY id")
    assert len(rows) == 4 and all(r["status"] == "done" for r in rows), rows
    for r in rows:
        assert r["device_host_bytes"] > 0 and r["device_media_bytes"] > 0, r
        assert r["device_wa"] == pytest.approx(
            r["device_media_bytes"] / r["device_host_bytes"], rel=1e-9)
        assert r["device_wa"] >= 1.0, r
    host = sum(r["device_host_bytes"] for r in rows)
    weighted = sum(r["device_wa"] * r["device_host_bytes"] for r in rows) / host
    d_host = st["host_bytes_written"] - before["host_bytes_written"]
    d_flash = st["flash_bytes_written"] - before["flash_bytes_written"]
    print("per-iteration WA", [round(r["device_wa"], 3) for r in rows],
          "host MiB", [round(r["device_host_bytes"] / MiB, 1) for r in rows],
          f"weighted {weighted:.4f} drive {d_flash / d_host:.4f}",
          f"rows' host bytes {host} of the drive's {d_host}")
    # every host write of the run is inside an iteration (fill included):
    # the rows hold the drive's bytes and its ratio exactly
    assert host == d_host
    assert sum(r["device_media_bytes"] for r in rows) == d_flash
    assert weighted == pytest.approx(d_flash / d_host, rel=1e-9)
    # the second cycle rewrites a full drive: more garbage collection
    assert rows[3]["device_wa"] > rows[0]["device_wa"], rows


def test_no_counters_no_evidence(workdir, make_loop):
    """A plain loop device reports nothing of its own: NULL, not 0."""
    loop = make_loop(16 * MiB)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(
        db, loop.dev, dict(KEYS, fill="no"), sizes="8M", cycles="1", duration="1s"))
    p = run_wearmond(conf, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = query(db, "SELECT " + ", ".join(DEVICE_COLUMNS) + " FROM iterations")
    assert rows and all(v is None for r in rows for v in r.values()), rows


# Heats fast (its steady state at the fresh rate is far above the throttle
# temperature) and cools within seconds; throttled, it writes 256 KiB/s.
# Throttling at 40 C, it averages about (40 - 35) / thermal_rise = 0.5 MiB/s
# (tools/simssd/README.md, "Temperature and thermal throttling").
HOT = dict(DRIVE, thermal_rise=10, thermal_tau="2s", throttle_rate="256k")


def run_hot(workdir, name, **sim):
    """One 8 MiB iteration of 4k random writes on a simulated drive with
    options sim: (its iteration row, the drive's stats after the run)."""
    with simssd_helper.sim_drive(**sim) as d:
        db = workdir / f"{name}.db"
        conf = write_conf(workdir / f"{name}.conf", target_conf(
            db, d.loop, dict(KEYS, fill="no"), sizes="8M", cycles="1", duration="4s"))
        p = run_wearmond(conf, timeout=300)
        assert p.returncode == 0, p.stderr
        st = d.stats()
    rows = query(db, "SELECT mibps_avg, device_peak_temp_c, device_throttle_seconds,"
                     " device_host_bytes FROM iterations")
    assert len(rows) == 1, rows
    return rows[0], st


@simssd_helper.needs_sim
def test_thermal_throttle_is_in_the_iteration(workdir):
    """The same drive with and without a throttle temperature: both heat
    well above it while writing; the throttled one counts throttle time in
    its iteration and its stats, and writes far slower."""
    cool, cool_st = run_hot(workdir, "free", **HOT)
    hot, hot_st = run_hot(workdir, "throttled", **HOT, throttle_temp=40)
    print(f"no throttle: {cool['mibps_avg']:.2f} MiB/s, peak {cool['device_peak_temp_c']} C;"
          f" throttle at 40 C: {hot['mibps_avg']:.2f} MiB/s, peak {hot['device_peak_temp_c']} C,"
          f" throttled {hot['device_throttle_seconds']} s of the row,"
          f" {hot_st['throttle_seconds']:.2f} s in all")
    assert cool["device_peak_temp_c"] > 40, cool
    assert cool["device_throttle_seconds"] == 0 and cool_st["throttle_seconds"] == 0
    assert hot["device_peak_temp_c"] > 36, hot  # heated, held near 40 C
    assert hot["device_throttle_seconds"] >= 1, hot
    assert hot_st["throttle_seconds"] >= hot["device_throttle_seconds"]
    # throttled it writes about 0.5 MiB/s, free some MiB/s
    assert hot["mibps_avg"] < 0.5 * cool["mibps_avg"], (hot, cool)


def crash_causes(db):
    """(cycle, CAUSE, evidence) of every crash alert stored, from events."""
    return [(r["cycle"], r["cause"], r) for r in query(
        db, "SELECT a.cycle, json_extract(e.data, '$.cause') AS cause,"
            " json_extract(e.data, '$.device_wa') AS wa,"
            " json_extract(e.data, '$.baseline_device_wa') AS base_wa,"
            " json_extract(e.data, '$.throttle_seconds') AS throttled,"
            " json_extract(e.data, '$.peak_temp_c') AS peak, e.message"
            " FROM alerts a JOIN events e ON e.id = a.event_id"
            " WHERE a.kind = 'throughput-crash' ORDER BY e.id")]


@simssd_helper.needs_sim
def test_crash_cause_thermal(workdir):
    """Two cycles of the same 4 MiB size on a drive that cools slowly: the
    first warms it, the second reaches the throttle temperature and
    throttles; its crash names the thermal cause with its evidence."""
    # each 40 MiB iteration heats the drive at most 10 C (40 x 15 / 60): the
    # first ends below 45 C, the second passes 46 C early on; throttled it
    # writes 2 MiB/s, which keeps it above the end of the hysteresis
    sim = dict(DRIVE, thermal_rise=15, thermal_tau="60s", throttle_temp=46,
               throttle_rate="2M")
    with simssd_helper.sim_drive(**sim) as d:
        db = workdir / "t.db"
        conf = write_conf(workdir / "t.conf", target_conf(
            db, d.loop, dict(KEYS, fill="no", amount="10x", duration="0"), sizes="4M",
            cycles="2"))
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
    rows = query(db, "SELECT mibps_avg, device_peak_temp_c, device_throttle_seconds"
                     " FROM iterations ORDER BY id")
    causes = crash_causes(db)
    print(rows, causes)
    # the iterations end at their amount, whatever the machine's speed
    assert rows[0]["device_throttle_seconds"] == 0 and rows[1]["device_throttle_seconds"] >= 2
    assert [(c, cause) for c, cause, _ in causes][:1] == [(2, "thermal")], causes
    ev = causes[0][2]
    assert ev["throttled"] == rows[1]["device_throttle_seconds"]
    assert ev["peak"] == rows[1]["device_peak_temp_c"] >= 44
    assert "likely cause: thermal" in ev["message"]


@simssd_helper.needs_sim
def test_crash_cause_wear(workdir):
    """A full drive rewritten without an action: the second cycle's crash
    names wear, its device write amplification well above the baseline's."""
    with simssd_helper.sim_drive(**DRIVE) as d:
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf", target_conf(
            db, d.loop, KEYS, sizes="50% 100%", cycles="2"))
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
    causes = crash_causes(db)
    print(causes)
    assert causes and all(c == 2 and cause == "wear" for c, cause, _ in causes), causes
    for _, _, ev in causes:
        assert ev["wa"] >= 1.25 * ev["base_wa"], ev
        assert ev["throttled"] == 0
