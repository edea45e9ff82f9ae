"""Device identity, safety refusals, actions between cycles and the
over-provisioning state, on real loop devices the tests create."""

import os
import re
import subprocess

import pytest

import simssd_helper
from conftest import MiB, mounts_of, query, run_wearmond, target_conf, unique_name, write_conf


DEFAULTS = {
    "sizes": "8M 16M", "fill": "yes", "workload": "randwrite", "block_size": "4k",
    "queue_depth": "16", "fill_queue_depth": "8", "cycles": "1", "sample_interval": "0.1s",
}


def conf(db, dev, **over):
    return target_conf(db, dev, DEFAULTS, **over)


def mkfs_ext4(dev):
    subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0",
                    dev], check=True)


def test_signature_without_allow_destroy_refused(workdir, make_loop):
    loop = make_loop(64 * MiB)
    mkfs_ext4(loop.dev)
    subprocess.run(["sync"])
    before = loop.checksum()
    text = conf(workdir / "w.db", loop.dev).replace("allow_destroy = yes\n", "")
    p = run_wearmond(write_conf(workdir / "w.conf", text))
    assert p.returncode == 78
    assert re.search(r"w\.conf:\d+: allow_destroy: refusing to write to block device "
                     r"/dev/loop\d+: it holds a ext4 filesystem", p.stderr), p.stderr
    assert loop.checksum() == before
    assert not (workdir / "w.db").exists()


def test_signature_with_allow_destroy_recorded(workdir, make_loop):
    loop = make_loop(64 * MiB)
    mkfs_ext4(loop.dev)
    db = workdir / "w.db"
    p = run_wearmond(write_conf(workdir / "w.conf", conf(db, loop.dev, sizes="8M")))
    assert p.returncode == 0, p.stderr
    ev = query(db, "SELECT severity, kind, message FROM events WHERE kind = 'signature-overwritten'")
    assert len(ev) == 1 and ev[0]["severity"] == "warning"
    assert "ext4 filesystem" in ev[0]["message"]


def device_digest(dev):
    """The SHA-256 of a device's bytes."""
    return subprocess.run(["sha256sum", dev], check=True, capture_output=True,
                          text=True).stdout.split()[0]


@simssd_helper.needs_sim
def test_expect_serial_mismatch_refused(workdir):
    """A drive that reports another serial than expect_serial is refused
    before anything is written: the device names may have moved."""
    with simssd_helper.sim_drive(capacity="32M") as d:
        before = device_digest(d.loop)
        db = workdir / "w.db"
        p = run_wearmond(write_conf(workdir / "w.conf", conf(db, d.loop, sizes="8M",
                                                             expect_serial="S3X9NX0K")))
        assert p.returncode == 78, p.stderr
        assert re.search(r"expect_serial: refusing /dev/loop\d+: it reports serial "
                         r"\"SIM[0-9]+\", expected \"S3X9NX0K\"; the device names may have "
                         r"moved", p.stderr), p.stderr
        assert device_digest(d.loop) == before
        assert not db.exists()


def test_loop_identity_reports_backing_file(workdir, make_loop):
    loop = make_loop(32 * MiB)
    db = workdir / "w.db"
    assert run_wearmond(write_conf(workdir / "w.conf", conf(db, loop.dev, sizes="8M"))).returncode == 0
    t = query(db, "SELECT kind, backing_file, serial, capacity_bytes FROM targets")[0]
    assert t == {"kind": "block", "backing_file": str(loop.backing), "serial": None,
                 "capacity_bytes": 32 * MiB}


def test_mapped_and_effective_op_follow_writes_trims_and_restarts(workdir, make_loop):
    loop = make_loop(64 * MiB)
    db = workdir / "w.db"
    # Region of half the device: 50% configured over-provisioning.
    c1 = write_conf(workdir / "a.conf", conf(db, loop.dev, region_size="32M",
                                             sizes="16M 32M"))
    assert run_wearmond(c1).returncode == 0
    rows = query(db, "SELECT size_bytes, op_configured, mapped_bytes, op_effective,"
                     " host_bytes_written, host_bytes_total FROM overprovisioning"
                     " ORDER BY iteration_id")
    # fill + 1x random writes: each iteration wrote 2x its size
    assert [(r["size_bytes"], r["mapped_bytes"], r["host_bytes_written"]) for r in rows] == [
        (16 * MiB, 16 * MiB, 32 * MiB), (32 * MiB, 32 * MiB, 64 * MiB)]
    assert all(r["op_configured"] == 0.5 for r in rows)
    assert rows[1]["op_effective"] == 0.5
    assert rows[1]["host_bytes_total"] == 96 * MiB

    # A restart with other sizes (a new campaign) keeps the state; a trim
    # after its cycle clears it.
    c2 = write_conf(workdir / "b.conf", conf(db, loop.dev, region_size="32M", sizes="8M",
                                             between_cycles="trim"))
    assert run_wearmond(c2).returncode == 0
    r = query(db, "SELECT mapped_bytes, host_bytes_total FROM overprovisioning"
                  " ORDER BY iteration_id DESC LIMIT 1")[0]
    assert r == {"mapped_bytes": 32 * MiB, "host_bytes_total": 112 * MiB}
    assert query(db, "SELECT start_byte, end_byte FROM mapped_extents") == []

    # Next run starts from nothing mapped.
    c3 = write_conf(workdir / "c.conf", conf(db, loop.dev, region_size="32M", sizes="8M"))
    assert run_wearmond(c3).returncode == 0
    r = query(db, "SELECT mapped_bytes, op_effective FROM overprovisioning"
                  " ORDER BY iteration_id DESC LIMIT 1")[0]
    assert r == {"mapped_bytes": 8 * MiB, "op_effective": 1 - 8 / 64}


def test_discard_all_erases_region(workdir, make_loop):
    loop = make_loop(64 * MiB)
    db = workdir / "w.db"
    p = run_wearmond(write_conf(workdir / "w.conf", conf(
        db, loop.dev, sizes="32M", between_cycles="secure-erase", secure_erase="discard-all")))
    assert p.returncode == 0, p.stderr
    c = query(db, "SELECT action, action_outcome, action_bytes FROM cycles")[0]
    assert c == {"action": "secure-erase", "action_outcome": "ok", "action_bytes": 64 * MiB}
    assert loop.blocks_bytes() <= 1 * MiB
    with open(loop.backing, "rb") as f:
        assert f.read(32 * MiB) == bytes(32 * MiB)
    assert query(db, "SELECT host_bytes_since_erase FROM targets") == [{"host_bytes_since_erase": 0}]


def test_blksecdiscard_unsupported_on_loop(workdir, make_loop):
    loop = make_loop(32 * MiB)
    db = workdir / "w.db"
    # continue: the outcome is recorded and the next cycle runs
    p = run_wearmond(write_conf(workdir / "w.conf", conf(
        db, loop.dev, sizes="8M", cycles="2", between_cycles="secure-erase",
        secure_erase="blksecdiscard", on_action_error="continue")))
    assert p.returncode == 0, p.stderr
    cyc = query(db, "SELECT number, status, action_outcome, action_error FROM cycles ORDER BY number")
    assert [(c["number"], c["status"], c["action_outcome"]) for c in cyc] == [
        (1, "done", "unsupported"), (2, "done", "unsupported")]
    assert "not supported" in cyc[0]["action_error"]
    ev = query(db, "SELECT severity FROM events WHERE kind = 'action-failed'")
    assert ev and ev[0]["severity"] == "err"

    # stop (the default): the target stops after the first cycle, exit 1
    db2 = workdir / "w2.db"
    p = run_wearmond(write_conf(workdir / "w2.conf", conf(
        db2, loop.dev, sizes="8M", cycles="2", between_cycles="secure-erase",
        secure_erase="blksecdiscard")))
    assert p.returncode == 1
    assert query(db2, "SELECT number, status FROM cycles") == [{"number": 1, "status": "failed"}]


def test_idle_and_command_actions(workdir, make_loop):
    loop = make_loop(32 * MiB)
    db = workdir / "w.db"
    p = run_wearmond(write_conf(workdir / "w.conf", conf(
        db, loop.dev, sizes="8M", between_cycles="idle", idle="0.5s")))
    assert p.returncode == 0, p.stderr
    c = query(db, "SELECT action, action_outcome, action_seconds FROM cycles")[0]
    assert c["action"] == "idle" and c["action_outcome"] == "ok"
    assert c["action_seconds"] >= 0.5

    marker = workdir / "erased-args"
    script = workdir / "erase.sh"
    script.write_text(f"#!/bin/sh\necho \"$@\" > {marker}\n")
    script.chmod(0o755)
    db2 = workdir / "w2.db"
    p = run_wearmond(write_conf(workdir / "w2.conf", conf(
        db2, loop.dev, sizes="8M", between_cycles="secure-erase", secure_erase="command",
        secure_erase_command=script)))
    assert p.returncode == 0, p.stderr
    assert marker.read_text().strip() == os.path.realpath(loop.dev)
    assert query(db2, "SELECT action_outcome FROM cycles") == [{"action_outcome": "ok"}]


def test_fitrim_on_ext4_reports_trimmed_bytes(workdir, make_loop):
    loop = make_loop(128 * MiB)
    db = workdir / "w.db"
    p = run_wearmond(write_conf(workdir / "w.conf", conf(
        db, loop.dev, filesystem="ext4", sizes="8M 16M", between_cycles="fitrim",
        mkfs_options="-E nodiscard", name=unique_name("fs"))))
    assert p.returncode == 0, p.stderr
    c = query(db, "SELECT action, action_outcome, action_bytes FROM cycles")[0]
    assert c["action"] == "fitrim" and c["action_outcome"] == "ok"
    assert c["action_bytes"] > 16 * MiB   # the free space of a 128 MiB filesystem
    rows = query(db, "SELECT size_bytes, status, bytes FROM iterations ORDER BY number")
    assert [(r["size_bytes"], r["status"]) for r in rows] == [(8 * MiB, "done"), (16 * MiB, "done")]
    # in filesystem mode mapped bytes are the test file's allocation
    w = query(db, "SELECT mapped_bytes FROM wear ORDER BY iteration_id")
    assert w[-1]["mapped_bytes"] >= 16 * MiB
    # the mount point is gone and nothing is mounted from the loop device
    assert mounts_of(loop.dev) == []


def test_format_each_size_runs_mkfs_before_each_size(workdir, make_loop):
    loop = make_loop(128 * MiB)
    db = workdir / "w.db"
    p = run_wearmond(write_conf(workdir / "w.conf", conf(
        db, loop.dev, filesystem="ext4", sizes="8M 16M 24M", format_each_size="yes",
        name=unique_name("fs"))))
    assert p.returncode == 0, p.stderr
    assert len(re.findall(r"made ext4 on /dev/loop\d+", p.stderr)) == 3
    assert len(query(db, "SELECT id FROM iterations WHERE status = 'done'")) == 3


def test_health_snapshot_per_cycle(workdir, make_loop):
    loop = make_loop(32 * MiB)
    db = workdir / "w.db"
    p = run_wearmond(write_conf(workdir / "w.conf", conf(db, loop.dev, sizes="8M", cycles="2")))
    assert p.returncode == 0, p.stderr
    h = query(db, "SELECT h.source, h.sectors_written, h.point, c.number FROM health h"
                  " JOIN cycles c ON c.id = h.cycle_id ORDER BY h.id")
    # at the start and end of every cycle, the last one included (no action)
    assert [(r["number"], r["point"]) for r in h] == [
        (1, "cycle-start"), (1, "cycle-end"), (2, "cycle-start"), (2, "cycle-end")]
    assert all(r["source"] == "sysfs" for r in h)
    # each cycle wrote 8 MiB of fill and 8 MiB of random writes between its snapshots
    for start, end in ((h[0], h[1]), (h[2], h[3])):
        assert end["sectors_written"] - start["sectors_written"] >= 16 * MiB // 512


def test_config_combinations_rejected(workdir, make_loop):
    loop = make_loop(32 * MiB)
    cases = [
        ({"between_cycles": "secure-erase"}, r"secure_erase: between_cycles = secure-erase needs"),
        ({"between_cycles": "fitrim"}, r"between_cycles: fitrim needs a filesystem"),
        ({"filesystem": "ext4", "between_cycles": "trim"}, r"between_cycles: trim would discard"),
        ({"format_each_size": "yes"}, r"format_each_size: needs filesystem"),
        ({"secure_erase": "command", "between_cycles": "secure-erase"},
         r"secure_erase_command: secure_erase = command needs"),
    ]
    for over, pattern in cases:
        p = run_wearmond(write_conf(workdir / "w.conf", conf(workdir / "w.db", loop.dev, **over)))
        assert p.returncode == 78, (over, p.stderr)
        assert re.search(pattern, p.stderr), (over, p.stderr)


def test_swap_device_refused(workdir, make_loop):
    loop = make_loop(32 * MiB)
    subprocess.run(["mkswap", "-q", loop.dev], check=True, capture_output=True)
    if subprocess.run(["swapon", loop.dev], capture_output=True).returncode != 0:
        pytest.skip("swapon is not permitted in this environment")
    try:
        before = loop.checksum()
        p = run_wearmond(write_conf(workdir / "w.conf", conf(workdir / "w.db", loop.dev)))
        assert p.returncode == 78
        assert re.search(r"device: refusing /dev/loop\d+: /dev/loop\d+ is in use as swap",
                         p.stderr), p.stderr
        assert loop.checksum() == before
    finally:
        subprocess.run(["swapoff", loop.dev])


def test_device_mapper_holder_refused(workdir, make_loop):
    loop = make_loop(32 * MiB)
    name = f"wearmon-test-{os.getpid()}"
    sectors = 32 * MiB // 512
    made = subprocess.run(["dmsetup", "create", name, "--table",
                           f"0 {sectors} linear {loop.dev} 0"], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip("this kernel has no device-mapper: " + made.stderr.splitlines()[0])
    try:
        before = loop.checksum()
        p = run_wearmond(write_conf(workdir / "w.conf", conf(workdir / "w.db", loop.dev)))
        assert p.returncode == 78
        assert re.search(r"device: refusing /dev/loop\d+: /dev/loop\d+ is held by dm-\d+",
                         p.stderr), p.stderr
        assert loop.checksum() == before
    finally:
        subprocess.run(["dmsetup", "remove", name], capture_output=True)


def test_action_list_taken_in_turn(workdir, make_loop):
    loop = make_loop(32 * MiB)
    db = workdir / "w.db"
    p = run_wearmond(write_conf(workdir / "w.conf", conf(
        db, loop.dev, sizes="8M", cycles="4", between_cycles="none, trim")))
    assert p.returncode == 0, p.stderr
    rows = query(db, "SELECT number, action, action_outcome FROM cycles ORDER BY number")
    assert [(r["number"], r["action"], r["action_outcome"]) for r in rows] == [
        (1, "none", "skipped"), (2, "trim", "ok"), (3, "none", "skipped"), (4, "trim", "ok")]


def test_device_erase_on_a_regular_file_is_unsupported(workdir):
    """NVMe and ATA commands do not apply to a file target: a recorded
    'unsupported' outcome, not a crash."""
    db = workdir / "w.db"
    img = workdir / "t.img"
    for method in ("nvme-format", "ata"):
        text = target_conf(db, img, DEFAULTS, sizes="4M", file_size="8M",
                           between_cycles="secure-erase", secure_erase=method,
                           on_action_error="continue")
        p = run_wearmond(write_conf(workdir / "w.conf", text))
        assert p.returncode == 0, p.stderr
    rows = query(db, "SELECT action, action_outcome, action_error FROM cycles ORDER BY number")
    assert [(r["action"], r["action_outcome"]) for r in rows] == [
        ("secure-erase", "unsupported"), ("secure-erase", "unsupported")]
    assert all(r["action_error"] for r in rows)
