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

pytestmark = pytest.mark.skipif(simssd_helper.missing_prerequisites() is not None,
                                reason=str(simssd_helper.missing_prerequisites()))

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
