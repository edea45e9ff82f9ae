"""Bad input: each case exits 78 with FILE:LINE: key in the message, writes
nothing to the device and creates no database."""

import contextlib
import re
import subprocess

import pytest

from conftest import MiB, run_wearmond, write_conf


def base(db, dev):
    return [
        "[wearmon]",
        f"database = {db}",
        "",
        "[target lab1]",
        f"device = {dev}",
        "allow_destroy = yes",
        "sizes = 8M 16M",
        "cycles = 1",
    ]


# (id, edit(lines) -> lines, expected regexp on stderr)
CASES = [
    ("unknown-key", lambda L: L + ["blocksize = 4k"], r"w\.conf:9: blocksize: unknown key"),
    ("unknown-section", lambda L: L + ["[targets x]", "device = /dev/null"],
     r"w\.conf:9: \[targets x\]"),
    ("bad-unit", lambda L: L + ["block_size = 12Q"], r"w\.conf:9: block_size: .*12Q"),
    ("bad-number", lambda L: L + ["queue_depth = lots"], r"w\.conf:9: queue_depth: "),
    ("out-of-range", lambda L: L + ["compressibility = 101"], r"w\.conf:9: compressibility: "),
    ("sizes-outside-region", lambda L: L + ["region_size = 12M"], r"w\.conf:7: sizes: "),
    ("region-past-end", lambda L: L + ["region_offset = 48M", "region_size = 32M"],
     r"w\.conf:(9|10): region_(offset|size): "),
    ("misaligned-size", lambda L: [l if not l.startswith("sizes") else "sizes = 8M 1000000"
                                   for l in L], r"w\.conf:7: sizes: "),
    ("misaligned-offset", lambda L: L + ["region_offset = 1000"], r"w\.conf:9: region_offset: "),
    ("no-allow-destroy", lambda L: [l for l in L if not l.startswith("allow_destroy")],
     r"w\.conf:\d+: allow_destroy: refusing to write to block device /dev/loop\d+"),
    ("missing-device", lambda L: [l if not l.startswith("device") else
                                  "device = /dev/wearmon-no-such-disk" for l in L],
     r"w\.conf:5: device: /dev/wearmon-no-such-disk: no such device"),
    ("device-is-directory", lambda L: [l if not l.startswith("device") else "device = /etc"
                                       for l in L],
     r"w\.conf:5: device: /etc is neither a block device nor a regular file"),
]


@pytest.mark.parametrize("name,edit,pattern", CASES, ids=[c[0] for c in CASES])
def test_bad_config_refused(workdir, make_loop, name, edit, pattern):
    loop = make_loop(64 * MiB)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", "\n".join(edit(base(db, loop.dev))) + "\n")
    before = loop.checksum()
    p = run_wearmond(conf)
    assert p.returncode == 78, p.stderr
    assert re.search(pattern, p.stderr), p.stderr
    assert loop.checksum() == before
    assert not db.exists()


def test_database_directory_missing(workdir, make_loop):
    loop = make_loop(32 * MiB)
    conf = write_conf(workdir / "w.conf", "\n".join(base(workdir / "nope" / "w.db", loop.dev)))
    before = loop.checksum()
    p = run_wearmond(conf)
    assert p.returncode == 78
    assert re.search(r"w\.conf:2: database: .*nope", p.stderr), p.stderr
    assert loop.checksum() == before


def test_database_directory_not_writable(workdir, make_loop):
    """A directory that only a person can make writable (immutable) is
    final (78); a read-only filesystem may be remounted, so that start is
    tried again (1), naming the filesystem."""
    loop = make_loop(32 * MiB)
    before = loop.checksum()
    locked = workdir / "locked"
    locked.mkdir()
    subprocess.run(["chattr", "+i", locked], check=True)
    try:
        conf = write_conf(workdir / "w.conf", "\n".join(base(locked / "w.db", loop.dev)))
        p = run_wearmond(conf)
        assert p.returncode == 78, p.stderr
        assert re.search(r"w\.conf:2: database: database directory .*locked is not writable",
                         p.stderr), p.stderr
    finally:
        subprocess.run(["chattr", "-i", locked])
    ro = workdir / "ro"
    ro.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "wearmon-test", ro], check=True)
    try:
        conf = write_conf(workdir / "w.conf", "\n".join(base(ro / "w.db", loop.dev)))
        p = run_wearmond(conf)
        assert p.returncode == 1, p.stderr
        assert re.search(rf"w\.conf:2: database: .*its filesystem {ro} \(tmpfs on wearmon-test\)"
                         r": .* free of .*, read-only", p.stderr), p.stderr
        assert loop.checksum() == before
    finally:
        subprocess.run(["umount", ro])


@contextlib.contextmanager
def loop_on(dev):
    """A loop device whose backing file is the block device dev, detached
    on leaving."""
    upper = subprocess.run(["losetup", "--show", "-f", dev], check=True, capture_output=True,
                           text=True).stdout.strip()
    try:
        yield upper
    finally:
        subprocess.run(["losetup", "-d", upper], capture_output=True)


@contextlib.contextmanager
def mounted(dev, mnt):
    """A new ext4 on dev mounted read-only on mnt (made here), unmounted on
    leaving."""
    subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0",
                    dev], check=True)
    mnt.mkdir()
    subprocess.run(["mount", "-o", "ro", dev, mnt], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", mnt])


def test_mounted_device_refused(workdir, make_loop):
    loop = make_loop(64 * MiB)
    with mounted(loop.dev, workdir / "mnt") as mnt:
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf", "\n".join(base(db, loop.dev)))
        subprocess.run(["sync"])
        before = loop.checksum()
        p = run_wearmond(conf)
        assert p.returncode == 78
        assert re.search(r"device: refusing /dev/loop\d+: .* is mounted on " + str(mnt), p.stderr), \
            p.stderr
        subprocess.run(["sync"])
        assert loop.checksum() == before


def test_backing_device_of_a_loop_device_refused(workdir, make_loop):
    """A loop device on the target does not hold it (no holders entry, no
    exclusive claim), so only the guard stands between a run and the
    filesystem mounted from that loop device."""
    loop = make_loop(64 * MiB)
    with loop_on(loop.dev) as upper, mounted(upper, workdir / "mnt"):
        conf = write_conf(workdir / "w.conf", "\n".join(base(workdir / "w.db", loop.dev)))
        subprocess.run(["sync"])
        before = loop.checksum()
        for args in (("--check",), ()):
            p = run_wearmond(conf, *args)
            assert p.returncode == 78, p.stderr
            assert re.search(rf"w\.conf:5: device: refusing {loop.dev}: {loop.dev} is the "
                             rf"backing device of {upper}; detach that loop device "
                             rf"\(losetup -d {upper}\)", p.stderr), p.stderr
        subprocess.run(["sync"])
        assert loop.checksum() == before


def test_loop_device_on_a_mounted_device_refused(workdir, make_loop):
    """Writing a loop device on a block device writes that device: the
    target's checks apply to it too."""
    loop = make_loop(64 * MiB)
    with mounted(loop.dev, workdir / "mnt") as mnt, loop_on(loop.dev) as upper:
        conf = write_conf(workdir / "w.conf", "\n".join(base(workdir / "w.db", upper)))
        subprocess.run(["sync"])
        before = loop.checksum()
        p = run_wearmond(conf)
        assert p.returncode == 78, p.stderr
        assert re.search(rf"w\.conf:5: device: refusing {upper}: it is a loop device on "
                         rf"{loop.dev}, and {loop.dev} is mounted on {mnt}; unmount it",
                         p.stderr), p.stderr
        subprocess.run(["sync"])
        assert loop.checksum() == before


def test_missing_config_file(workdir):
    p = run_wearmond(workdir / "absent.conf")
    assert p.returncode == 78
    assert "absent.conf" in p.stderr


def test_usage_errors():
    from conftest import WEARMOND
    p = subprocess.run([str(WEARMOND), "--bogus"], capture_output=True, text=True)
    assert p.returncode == 2
    p = subprocess.run([str(WEARMOND)], capture_output=True, text=True)
    assert p.returncode == 2 and "-c FILE" in p.stderr
    p = subprocess.run([str(WEARMOND), "--version"], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.startswith("wearmond ")
