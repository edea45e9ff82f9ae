"""Wear and baselines on the simulated SSD, whose own counters are the
truth: health snapshots credit each cycle with its own host and NAND bytes
(the cycle's write amplification) and the action with its own, and they add
up to the drive's overall write amplification; FITRIM in filesystem mode
frees the tested space, and throughput recovers as after TRIM; the alerts,
the degradation view and `wearmon status` name one and the same baseline,
across campaigns."""

import re
import subprocess

import pytest

import simssd_helper
from conftest import BUILD, MiB, query, run_wearmond, write_conf

pytestmark = simssd_helper.needs_sim

# A small drive: fresh random writes ~20 MiB/s, a full one several times slower.
DRIVE = dict(capacity="32M", page="4k", erase_block="128k", spare=7, channels=4,
             t_prog="800us", t_read="50us", t_erase="2ms", cache="512k")


def target(name, dev, **over):
    keys = {"device": dev, "allow_destroy": "yes", "sizes": "50% 100%", "fill": "yes",
            "fill_block_size": "128k", "fill_queue_depth": "8", "workload": "randwrite",
            "block_size": "4k", "queue_depth": "16", "duration": "2s",
            "sample_interval": "0.5s"}
    keys.update(over)
    return f"[target {name}]\n" + "\n".join(f"{k} = {v}" for k, v in keys.items()) + "\n"


def test_per_cycle_write_amplification_adds_up_to_the_drives(workdir):
    with simssd_helper.sim_drive(**DRIVE) as d:
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf", f"[wearmon]\ndatabase = {db}\n\n" + target(
            "sim", d.loop, cycles=3, between_cycles="none trim none"))
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
        st = d.stats()
    h = query(db, "SELECT c.number AS cycle, h.point, h.host_bytes_delta, h.nand_bytes_delta,"
                  " h.write_amplification, h.host_bytes_written, h.nand_bytes_written"
                  " FROM health h JOIN cycles c ON c.id = h.cycle_id ORDER BY h.id")
    # every cycle, the last one included, has its start and end; the
    # action (trim after cycle 2) its own snapshot
    assert [(x["cycle"], x["point"]) for x in h] == [
        (1, "cycle-start"), (1, "cycle-end"), (2, "cycle-start"), (2, "cycle-end"),
        (2, "after-action"), (3, "cycle-start"), (3, "cycle-end")]
    ends = [x for x in h if x["point"] == "cycle-end"]
    for x in ends:
        assert x["host_bytes_delta"] > 0 and x["write_amplification"] >= 1.0, x
        assert x["write_amplification"] == pytest.approx(
            x["nand_bytes_delta"] / x["host_bytes_delta"], rel=1e-9)
    # the last snapshot holds the drive's final counters
    assert h[-1]["host_bytes_written"] == st["host_bytes_written"]
    assert h[-1]["nand_bytes_written"] == st["flash_bytes_written"]
    # the cycles' WA, weighted by their host bytes, plus what the drive
    # wrote outside them (the action, the pauses) is the drive's WA
    host = sum(x["host_bytes_delta"] for x in ends)
    nand_cycles = sum(x["write_amplification"] * x["host_bytes_delta"] for x in ends)
    nand_other = sum(x["nand_bytes_delta"] or 0 for x in h if x["point"] != "cycle-end")
    first = h[0]
    overall = st["flash_bytes_written"] / st["host_bytes_written"]
    print("per-cycle WA", [round(x["write_amplification"], 3) for x in ends],
          "host MiB", [round(x["host_bytes_delta"] / MiB, 1) for x in ends],
          "outside cycles NAND MiB", round(nand_other / MiB, 2),
          f"weighted {nand_cycles / host:.4f} overall {overall:.4f}")
    assert host + first["host_bytes_written"] == st["host_bytes_written"]
    assert (nand_cycles + nand_other + first["nand_bytes_written"]) / st["host_bytes_written"] \
        == pytest.approx(overall, rel=1e-6)
    # nothing was written before the first cycle, so the cycles alone are it
    assert first["host_bytes_written"] == 0
    assert nand_cycles / host == pytest.approx(overall, abs=0.01)
    # cycle 2 rewrote a full drive; cycle 3 ran after the trim
    assert ends[1]["write_amplification"] > ends[2]["write_amplification"]


def run_three_cycles(workdir, name, actions, **over):
    """Three cycles of sizes 12 MiB and 24 MiB on a fresh simulated drive;
    (the 12 MiB size's rows per cycle: mibps_avg and device_wa, the drive's
    flash bytes per host byte over the row as wearmond read them from its
    counters; cycles rows, health rows, stderr). Each measured phase moves
    its size once (no time limit), so the drive does the same work on any
    machine."""
    # slower flash than DRIVE: the fresh rate stays far below what FUSE can
    # pass on a loaded machine
    with simssd_helper.sim_drive(**dict(DRIVE, t_prog="1600us")) as d:
        db = workdir / f"{name}.db"
        conf = write_conf(workdir / f"{name}.conf", f"[wearmon]\ndatabase = {db}\n\n" + target(
            name, d.loop, cycles=3, between_cycles=actions, sizes="12M 24M", duration="0",
            **over))
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
    rows = query(db, "SELECT cycle, mibps_avg, device_wa FROM history WHERE status = 'done'"
                     f" AND size_bytes = {12 * MiB} ORDER BY iteration_id")
    cycles = query(db, "SELECT number, action, action_outcome, action_bytes FROM cycles"
                       " ORDER BY number")
    health = query(db, "SELECT c.number AS cycle, h.point, h.mapped_bytes, h.op_effective"
                       " FROM health h JOIN cycles c ON c.id = h.cycle_id ORDER BY h.id")
    assert [r["cycle"] for r in rows] == [1, 2, 3], rows
    return rows, cycles, health, p.stderr


def test_fitrim_frees_the_test_file_and_throughput_recovers_as_after_trim(workdir):
    """The 12 MiB size of cycle 2 rewrites a drive cycle 1 filled with 24
    MiB (no action between them) and slows down: the drive writes at least
    1.35 bytes of flash per host byte where cycle 1 wrote 1 (measured 1.67
    to 1.71). The FITRIM after it frees and trims the test file, and cycle
    3 is back to cycle 1's work per byte (within 5 %), as with TRIM on the
    raw device: the rate the drive allows is back. The FITRIM after cycle 3
    trims the file cycle 3 wrote, not nothing. Judged from the drive's own
    counters (the rows' device_wa), not from MiB/s minutes apart, which the
    machine's load moves as much as the drive; `make bench` times the
    drive's recovery (tools/bench/bench_sim.py)."""
    fs, fcyc, fhealth, ferr = run_three_cycles(
        workdir, "fs", "none fitrim fitrim", filesystem="ext4",
        mkfs_options="-b 4096 -E lazy_itable_init=0,lazy_journal_init=0")
    raw, rcyc, _, _ = run_three_cycles(workdir, "raw", "none trim trim")
    freed = [int(x) for x in re.findall(r"fitrim: emptied the test file \((\d+) bytes", ferr)]
    print(f"filesystem: MiB/s per cycle {[round(x['mibps_avg'], 2) for x in fs]}, write "
          f"amplification {[round(x['device_wa'], 3) for x in fs]}, FITRIM bytes "
          f"{[c['action_bytes'] for c in fcyc[1:]]} (test file freed first {freed}); raw: "
          f"MiB/s {[round(x['mibps_avg'], 2) for x in raw]}, write amplification "
          f"{[round(x['device_wa'], 3) for x in raw]}, TRIM bytes "
          f"{[c['action_bytes'] for c in rcyc[1:]]}")
    assert [(c["action"], c["action_outcome"]) for c in fcyc] == [
        ("none", "skipped"), ("fitrim", "ok"), ("fitrim", "ok")]
    # each FITRIM trims at least the test file's 24 MiB
    assert all(c["action_bytes"] >= 24 * MiB for c in fcyc[1:]), fcyc
    assert len(freed) == 2 and all(f >= 24 * MiB for f in freed), freed
    # after the action the test file holds nothing: the over-provisioning is back
    after = [h for h in fhealth if h["point"] == "after-action"]
    assert [h["cycle"] for h in after] == [2, 3]
    assert all(h["mapped_bytes"] == 0 and h["op_effective"] == 1.0 for h in after), after
    ends = [h for h in fhealth if h["point"] == "cycle-end"]
    assert all(h["mapped_bytes"] >= 24 * MiB for h in ends), ends
    for rows in (fs, raw):
        wa = [r["device_wa"] for r in rows]
        assert wa[0] == pytest.approx(1.0, abs=0.01), rows   # a fresh drive: no GC
        assert wa[1] >= 1.35 * wa[0], rows                   # degraded without an action
        assert wa[2] <= 1.05 * wa[0], rows                   # recovered after it


def test_one_baseline_for_alerts_view_and_status_across_campaigns(workdir):
    """baseline = best, two campaigns of two cycles (fresh, then degraded,
    then a secure erase). The second campaign starts its own baseline: its
    first cycle has none, and the crash in its second cycle is measured
    against it, not against cycle 1; the alert, the degradation view and
    `wearmon status` name the same iteration and figure."""
    with simssd_helper.sim_drive(**DRIVE) as d:
        erase = d.erase_script(workdir)
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf", f"[wearmon]\ndatabase = {db}\n\n" + target(
            "sim", d.loop, cycles=2, baseline="best", between_cycles="none secure-erase",
            secure_erase="command", secure_erase_command=erase))
        for extra in ([], ["--new-campaign", "sim"]):   # the second start is a new campaign
            p = run_wearmond(conf, *extra, timeout=600)
            assert p.returncode == 0, p.stderr
    deg = query(db, "SELECT cycle, size_bytes, mibps_avg, baseline, baseline_mibps,"
                    " baseline_cycle, baseline_iteration_id, iteration_id FROM degradation"
                    " ORDER BY iteration_id")
    assert [r["cycle"] for r in deg] == [1, 1, 2, 2, 3, 3, 4, 4]
    assert all(r["baseline"] == "best" for r in deg)
    # each campaign's first cycle has nothing earlier in its campaign
    assert [r["baseline_cycle"] for r in deg] == [None, None, 1, 1, None, None, 3, 3]
    crashes = query(db, "SELECT a.cycle, a.value, a.baseline, a.iteration_id,"
                        " json_extract(e.data, '$.baseline_iteration_id') AS base_id,"
                        " json_extract(e.data, '$.baseline') AS rule"
                        " FROM alerts a JOIN events e ON e.id = a.event_id"
                        " WHERE a.kind = 'throughput-crash'")
    assert {c["cycle"] for c in crashes} == {2, 4}
    by_id = {r["iteration_id"]: r for r in deg}
    for c in crashes:
        v = by_id[c["iteration_id"]]
        assert c["rule"] == "best"
        assert c["base_id"] == v["baseline_iteration_id"]
        assert c["baseline"] == pytest.approx(v["baseline_mibps"], rel=1e-9)
        assert c["value"] == pytest.approx(v["mibps_avg"], rel=1e-9)
    # status: the last done measurement against the same baseline
    out = subprocess.run([str(BUILD / "wearmon"), "-d", str(db), "status"],
                         capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"last done +([0-9.]+) MiB/s .*; (\d+)% of its baseline ([0-9.]+) MiB/s, "
                  r"cycle (\d+)",
                  out)
    assert m, out
    last = deg[-1]
    print(f"status: {m.group(0)}; view: {last['mibps_avg']:.1f} vs {last['baseline_mibps']:.1f}"
          f" (cycle {last['baseline_cycle']}); alerts: "
          + ", ".join(f"cycle {c['cycle']} {c['value']:.1f} vs {c['baseline']:.1f}" for c in crashes))
    assert float(m.group(3)) == round(last["baseline_mibps"], 1)
    assert int(m.group(4)) == last["baseline_cycle"] == 3
    assert int(m.group(2)) == round(100 * last["mibps_avg"] / last["baseline_mibps"])
