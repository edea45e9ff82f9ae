"""Filesystem mode cleans up after itself: the test filesystem is mounted in
wearmond's own mount namespace, so a kill -9 leaves no mount on the host and
the device free; a start removes the empty mount points and the mounts an
earlier wearmond left (only its own names, only this configuration's
devices); a resume mid-cycle mounts the filesystem made at the campaign's
start again instead of reformatting it, and the log says which and why.

Safety: the devices are loop devices on backing files created here
(conftest.make_loop); every directory made under the mount point base is
named after a target name unique to the test, and it and any mount on it
are removed in a finally block."""

import fcntl
import os
import re
import signal
import subprocess
import uuid
from pathlib import Path

from conftest import (MiB, device_free, query, run_wearmond, sh, start_wearmond, stop,
                      target_conf, wait_for, write_conf)

BASE = Path("/run")  # where mount points go outside systemd (common/device/fsmode.c)

DEFAULTS = {
    "filesystem": "ext4",
    "mkfs_options": "-E nodiscard,lazy_itable_init=0,lazy_journal_init=0",
    "sizes": "8M 16M 24M",
    "fill": "no",
    "workload": "randwrite",
    "block_size": "4k",
    "queue_depth": "16",
    "amount": "1000x",
    "duration": "1.5s",
    "cycles": "1",
    "sample_interval": "0.1s",
}


def unique_name():
    """A target name no other test (or developer) uses: the sweep at start
    looks only at mount points named after this configuration's targets."""
    return "fst" + uuid.uuid4().hex[:8]


def conf(workdir, dev, name, **over):
    db = workdir / "w.db"
    return write_conf(workdir / "w.conf", target_conf(db, dev, DEFAULTS, name=name, **over)), db


def fs_uuid(dev):
    """The filesystem UUID blkid reads from the device itself (-p: no cache)."""
    return sh("blkid", "-p", "-o", "value", "-s", "UUID", dev, check=False).stdout.strip()


def host_mounts(name, dev):
    """Mounts in this (the host's) namespace on a mount point of target name
    or of dev."""
    out = sh("findmnt", "-rn", "-o", "TARGET,SOURCE").stdout.splitlines()
    prefix = f"{BASE}/wearmon-{name}-"
    return [line for line in out
            if line.startswith(prefix) or line.split(" ")[-1] == os.path.realpath(dev)]


def leftovers(name):
    return sorted(BASE.glob(f"wearmon-{name}-*"))


def remove_leftovers(name):
    """Unmount and remove every mount point of target name (test cleanup)."""
    for d in leftovers(name):
        subprocess.run(["umount", "-q", str(d)], capture_output=True)
        subprocess.run(["rm", "-rf", "--one-file-system", str(d)], capture_output=True)


def running_iteration(db, number):
    return db.exists() and query(
        db, f"SELECT 1 FROM iterations WHERE number = {number} AND status = 'running'")


def test_kill9_leaves_no_mount_and_restart_resumes(workdir, make_loop):
    loop = make_loop(128 * MiB)
    name = unique_name()
    c, db = conf(workdir, loop.dev, name)
    try:
        proc = start_wearmond(c)
        try:
            assert wait_for(lambda: running_iteration(db, 2), 60), "size 2 never ran"
            made = fs_uuid(loop.dev)
        finally:
            proc.send_signal(signal.SIGKILL)
            _, err = proc.communicate(timeout=30)
        assert made, err
        # the mount lived in the killed process's namespace only
        assert host_mounts(name, loop.dev) == [], err
        assert "own mount namespace" in err, err
        # the device comes free: the kernel tears a killed process's
        # io_uring down after the process is gone (the ring's registered
        # file holds the test file, and so the filesystem, until then)
        assert wait_for(lambda: device_free(loop.dev), 30), "the device stayed busy"
        # the restart is not refused, and resumes
        p = run_wearmond(c)
        assert p.returncode == 0, p.stderr
        assert "resuming cycle 1 at size 2 of 3" in p.stderr, p.stderr
        assert re.search(rf"removed the empty mount point {BASE}/wearmon-{name}-\w{{6}}, "
                         r"left by an earlier wearmond", p.stderr), p.stderr
        assert "made ext4" not in p.stderr, p.stderr
        assert fs_uuid(loop.dev) == made
        rows = query(db, "SELECT number, size_index, status FROM iterations ORDER BY number")
        assert [(r["size_index"], r["status"]) for r in rows] == [
            (0, "done"), (1, "interrupted"), (1, "done"), (2, "done")]
        assert leftovers(name) == []
        assert host_mounts(name, loop.dev) == []
    finally:
        remove_leftovers(name)


def test_resume_mid_cycle_mounts_the_filesystem_again(workdir, make_loop):
    loop = make_loop(128 * MiB)
    name = unique_name()
    c, db = conf(workdir, loop.dev, name)
    try:
        proc = start_wearmond(c)
        try:
            assert wait_for(lambda: running_iteration(db, 2), 60), "size 2 never ran"
        finally:
            rc, _, err = stop(proc, signal.SIGTERM)
        assert rc == 0, err
        made = fs_uuid(loop.dev)
        assert made
        p = run_wearmond(c)
        assert p.returncode == 0, p.stderr
        assert fs_uuid(loop.dev) == made, p.stderr
        assert len(re.findall(r"made ext4 on /dev/loop\d+", err)) == 1, err
        assert "cycle 1 starts the campaign" in err, err
        assert re.search(r"cycle 1: mounted the ext4 made earlier on /dev/loop\d+ again, not "
                         r"reformatted: this configuration makes it only at the start of the "
                         r"campaign; test file", p.stderr), p.stderr
        assert "made ext4" not in p.stderr, p.stderr
        assert fs_uuid(loop.dev) == made
        assert query(db, "SELECT number, status FROM cycles") == [{"number": 1, "status": "done"}]
    finally:
        remove_leftovers(name)


def spoil_by_wipe(dev, workdir):
    sh("wipefs", "-q", "-a", dev)
    return r"reformatting /dev/loop\d+: cannot mount /dev/loop\d+ on \S+ as ext4: "


def spoil_by_foreign_file(dev, workdir):
    mnt = workdir / "mnt"
    mnt.mkdir()
    sh("mount", dev, mnt)
    try:
        (mnt / "notes.txt").write_text("someone else's\n")
    finally:
        sh("umount", mnt)
    return (r"reformatting /dev/loop\d+: the filesystem on /dev/loop\d+ holds notes\.txt, "
            r"which wearmon did not make")


def test_resume_reformats_a_filesystem_it_cannot_use(workdir, make_loop):
    for spoil in (spoil_by_wipe, spoil_by_foreign_file):
        loop = make_loop(128 * MiB)
        name = unique_name()
        d = workdir / spoil.__name__
        d.mkdir()
        c, db = conf(d, loop.dev, name, sizes="8M 16M")
        try:
            proc = start_wearmond(c)
            try:
                assert wait_for(lambda: running_iteration(db, 2), 60), "size 2 never ran"
            finally:
                rc, _, err = stop(proc, signal.SIGTERM)
            assert rc == 0, err
            made = fs_uuid(loop.dev)
            why = spoil(loop.dev, d)
            p = run_wearmond(c)
            assert p.returncode == 0, p.stderr
            assert re.search(r"target \w+: cycle 1: " + why, p.stderr), p.stderr
            assert len(re.findall(r"made ext4 on /dev/loop\d+", p.stderr)) == 1, p.stderr
            assert fs_uuid(loop.dev) not in ("", made)
        finally:
            remove_leftovers(name)


def test_stale_mount_points_removed_at_start(workdir, make_loop):
    """Only empty directories of the pattern fsmode names them by, for this
    configuration's target names, that no running wearmond holds (flock)."""
    loop = make_loop(64 * MiB)
    name, other = unique_name(), unique_name()
    stale = BASE / f"wearmon-{name}-Ab3dE9"
    keep = [BASE / f"wearmon-{name}-Ab3dE9x",    # not mkdtemp's six characters
            BASE / f"wearmon-{name}-full01",     # not empty
            BASE / f"wearmon-{name}-held01",     # held by a running wearmond
            BASE / f"wearmon-{other}-Ab3dE9"]    # another configuration's target
    c, db = conf(workdir, loop.dev, name, sizes="8M", duration="0.3s")
    held = None
    try:
        for d in [stale] + keep:
            d.mkdir()
        (keep[1] / "data").write_text("x")
        held = os.open(keep[2], os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        p = run_wearmond(c)
        assert p.returncode == 0, p.stderr
        assert (f"removed the empty mount point {stale}, left by an earlier wearmond"
                in p.stderr), p.stderr
        assert not stale.exists()
        assert all(d.is_dir() for d in keep), p.stderr
        assert (keep[1] / "data").read_text() == "x"
        assert leftovers(name) == sorted(keep[:3])
    finally:
        if held is not None:
            os.close(held)
        for d in [stale] + keep:
            subprocess.run(["rm", "-rf", "--one-file-system", str(d)], capture_output=True)


def test_stale_host_mount_removed_at_start(workdir, make_loop):
    """What an older wearmond killed outside a namespace of its own left: its
    test filesystem mounted on the host. The start unmounts it and goes on;
    a mount of another device on a name of the pattern stays."""
    loop, foreign = make_loop(128 * MiB), make_loop(32 * MiB)
    name = unique_name()
    stale = BASE / f"wearmon-{name}-Qz81kP"
    theirs = BASE / f"wearmon-{name}-Mn42xY"
    c, db = conf(workdir, loop.dev, name, sizes="8M", duration="0.3s")
    try:
        for dev, d in ((loop.dev, stale), (foreign.dev, theirs)):
            sh("mkfs.ext4", "-q", "-F", dev)
            d.mkdir()
            sh("mount", dev, d)
        p = run_wearmond(c)
        assert p.returncode == 0, p.stderr
        assert re.search(rf"removed the stale mount of /dev/loop\d+ on {stale}, left by an "
                         r"earlier wearmond", p.stderr), p.stderr
        assert f"removed the empty mount point {stale}" in p.stderr, p.stderr
        assert f"leaving {theirs} alone: {foreign.dev} is mounted there" in p.stderr, p.stderr
        assert not stale.exists()
        assert [m.split(" ")[0] for m in host_mounts(name, loop.dev)] == [str(theirs)]
    finally:
        for d in (stale, theirs):
            subprocess.run(["umount", "-q", str(d)], capture_output=True)
        remove_leftovers(name)


def signature_events(db):
    return query(db, "SELECT message FROM events WHERE kind = 'signature-overwritten'")


def test_restarts_on_its_own_filesystem_warn_of_no_foreign_signature(workdir, make_loop):
    """kill -9 and restart, again and again: every restart finds the ext4
    wearmon made (its UUID recorded in made_filesystems) and mounts it again
    or reformats it, but stores no signature-overwritten warning; a
    filesystem wearmon did not make still gets one."""
    loop = make_loop(128 * MiB)
    name = unique_name()
    c, db = conf(workdir, loop.dev, name, sizes="8M 16M 24M 32M", cycles="0")
    try:
        for k in range(4):
            proc = start_wearmond(c)
            try:
                # the next iteration of this run: the filesystem is made
                n = query(db, "SELECT count(*) AS n FROM iterations")[0]["n"] if k else 0
                assert wait_for(lambda: query(
                    db, f"SELECT 1 FROM iterations WHERE id > {n} AND status = 'running'"),
                    60), f"restart {k} never ran"
            finally:
                proc.send_signal(signal.SIGKILL)
                _, err = proc.communicate(timeout=30)
            assert fs_uuid(loop.dev), err
        assert signature_events(db) == []
        made = {r["uuid"] for r in query(db, "SELECT uuid FROM made_filesystems")}
        assert fs_uuid(loop.dev) in made
        # someone else's filesystem on the device: that is a foreign signature
        # (the killed daemon's last I/O may hold the device a moment)
        assert wait_for(lambda: sh("mkfs.ext4", "-q", "-F", loop.dev,
                                   check=False).returncode == 0, 60), "the device stays busy"
        proc = start_wearmond(c)
        try:
            assert wait_for(lambda: signature_events(db), 60), "no warning for a foreign ext4"
        finally:
            stop(proc)
        assert len(signature_events(db)) == 1
    finally:
        remove_leftovers(name)
