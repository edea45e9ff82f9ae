"""mapped_bytes is what the drive holds: the union of the ranges the host's
writes completed since the last erase or TRIM of them, checked against the
simulated SSD's own count of valid pages; a fill cut short by kill -9
counts what it completed, not its span; after a TRIM the metrics file and
the after-action health row say the same over-provisioning."""

import math
import re
import signal

import pytest

import simssd_helper
from conftest import MiB, query, run_wearmond, start_wearmond, wait_for, write_conf

pytestmark = simssd_helper.needs_sim

DRIVE = dict(capacity="32M", page="4k", erase_block="128k", spare=7, channels=4,
             t_prog="800us", t_read="50us", t_erase="2ms", cache="512k")


def target(name, dev, **over):
    keys = {"device": dev, "allow_destroy": "yes", "sizes": "100%", "fill": "no",
            "fill_block_size": "128k", "fill_queue_depth": "8", "workload": "randwrite",
            "block_size": "4k", "queue_depth": "16", "sample_interval": "0.5s"}
    keys.update(over)
    return f"[target {name}]\n" + "\n".join(f"{k} = {v}" for k, v in keys.items()) + "\n"


def valid_bytes(d):
    d.drain()
    st = d.stats()
    return st["valid_pages"] * simssd_helper.parse_size(DRIVE["page"])


@pytest.mark.parametrize("jobs", [1, 4])
def test_random_tenth_after_secure_erase_maps_what_the_drive_holds(workdir, jobs):
    """Cycle 1 writes 0.1x at random, the secure erase after it clears
    everything, cycle 2 writes 0.1x at random again: its wear row maps the
    unique 4 KiB blocks written (about 1 - e^-0.1 of the region), within 5 %
    of the valid pages the drive reports, not the region; with several
    jobs too (they mark one map)."""
    with simssd_helper.sim_drive(**DRIVE) as d:
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf", f"[wearmon]\ndatabase = {db}\n\n" + target(
            "sim", d.loop, cycles=2, amount="0.1x", between_cycles="secure-erase none",
            jobs=jobs,
            secure_erase="command", secure_erase_command=d.erase_script(workdir)))
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
        valid = valid_bytes(d)
    wear = query(db, "SELECT c.number AS cycle, w.mapped_bytes, w.op_effective, w.region_bytes,"
                     " w.capacity_bytes, w.host_bytes_written FROM wear w"
                     " JOIN iterations i ON i.id = w.iteration_id"
                     " JOIN cycles c ON c.id = i.cycle_id ORDER BY w.iteration_id")
    health = query(db, "SELECT c.number AS cycle, h.point, h.mapped_bytes, h.op_effective"
                       " FROM health h JOIN cycles c ON c.id = h.cycle_id ORDER BY h.id")
    assert [w["cycle"] for w in wear] == [1, 2]
    assert query(db, "SELECT DISTINCT jobs FROM iterations") == [{"jobs": jobs}]
    last = wear[-1]
    region = last["region_bytes"]
    expected = region * (1 - math.exp(-last["host_bytes_written"] / region))
    print(f"jobs {jobs}: mapped {last['mapped_bytes'] / MiB:.3f} MiB, drive valid {valid / MiB:.3f} MiB, "
          f"model {expected / MiB:.3f} MiB, region {region / MiB:.1f} MiB, "
          f"op_effective {last['op_effective']:.4f}")
    assert abs(last["mapped_bytes"] - valid) <= 0.05 * valid
    assert last["mapped_bytes"] < 0.2 * region
    assert abs(last["mapped_bytes"] - expected) <= 0.05 * expected
    assert last["op_effective"] == 1 - last["mapped_bytes"] / last["capacity_bytes"]
    # the erase left nothing mapped; cycle 2's end holds what it wrote
    after = [h for h in health if h["point"] == "after-action"]
    assert [(h["cycle"], h["mapped_bytes"], h["op_effective"]) for h in after] == [(1, 0, 1.0)]
    end2 = [h for h in health if h["point"] == "cycle-end" and h["cycle"] == 2]
    assert end2[0]["mapped_bytes"] == last["mapped_bytes"]
    assert query(db, "SELECT count(*) AS n FROM written_extents") == [{"n": 0}]


def test_fill_killed_counts_what_it_completed(workdir):
    """kill -9 in the middle of a fill of the 16 MiB region: at the next
    start the killed row maps the prefix its last progress row counted, no
    more than the drive holds and far from the span; the size then runs
    again and maps the whole region."""
    slow = dict(DRIVE, t_prog="6ms")   # about 2.5 MiB/s: the fill lasts seconds
    with simssd_helper.sim_drive(**slow) as d:
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf", f"[wearmon]\ndatabase = {db}\n\n" + target(
            "sim", d.loop, cycles=1, sizes="16M", fill="yes", amount="64k"))
        proc = start_wearmond(conf)
        got = wait_for(lambda: query(db, "SELECT phase, phase_bytes FROM progress"
                                         " WHERE phase = 'fill' AND phase_bytes >= 2097152"),
                       timeout=120, step=0.05)
        assert got, "the fill never reached 2 MiB"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        held = valid_bytes(d)
        counted = query(db, "SELECT phase_bytes FROM progress")[0]["phase_bytes"]
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
    rows = query(db, "SELECT i.status, i.region_offset, w.mapped_bytes, w.region_bytes"
                     " FROM wear w JOIN iterations i ON i.id = w.iteration_id"
                     " ORDER BY w.iteration_id")
    print(f"killed at {counted / MiB:.2f} MiB counted, drive held {held / MiB:.2f} MiB; "
          f"wear rows {[(r['status'], round(r['mapped_bytes'] / MiB, 2)) for r in rows]}")
    assert [r["status"] for r in rows] == ["interrupted", "done"]
    killed, done = rows
    assert killed["mapped_bytes"] == counted
    assert 2 * MiB <= killed["mapped_bytes"] <= held
    assert killed["mapped_bytes"] < 16 * MiB
    assert done["mapped_bytes"] == 16 * MiB


def test_metrics_file_agrees_with_the_after_action_row_after_trim(workdir):
    """A filled region, then a TRIM of it: the metrics file's effective
    over-provisioning is the after-action health row's (the drive's state
    now), not the last wear row's from before the TRIM."""
    with simssd_helper.sim_drive(**DRIVE) as d:
        db = workdir / "w.db"
        prom = workdir / "wearmon.prom"
        conf = write_conf(workdir / "w.conf", f"[wearmon]\ndatabase = {db}\n"
                          f"metrics_file = {prom}\n\n" + target(
                              "sim", d.loop, cycles=1, sizes="24M", fill="yes", amount="1M",
                              between_cycles="trim"))
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
        valid = valid_bytes(d)
    text = prom.read_text()
    m = re.search(r'^wearmon_overprovisioning_effective_ratio\{[^}]*target="sim"[^}]*\} (\S+)$',
                  text, re.M)
    assert m, text
    after = query(db, "SELECT h.mapped_bytes, h.op_effective FROM health h"
                      " WHERE h.point = 'after-action'")
    wear = query(db, "SELECT mapped_bytes, op_effective FROM wear ORDER BY iteration_id")
    print(f"metrics {m.group(1)}, after-action {after}, last wear row {wear[-1]}, "
          f"drive valid {valid}")
    assert len(after) == 1
    assert wear[-1]["mapped_bytes"] == 24 * MiB      # before the TRIM
    assert after[0]["mapped_bytes"] == 0 == valid
    assert float(m.group(1)) == after[0]["op_effective"] == 1.0
