"""A file target is protected like a disk: a file with data that
wearmon did not create, wearmon's own files by any path, the backing file
of an attached (or mounted) loop device, a file another process writes;
a loop device known by its backing file's inode, a detached one named as
such. Each refusal exits 78 at --check and at a real start alike, names
the reason, and leaves the file's bytes, size and mtime as they were (a
missing file is not created). Real files, links, loop devices, a mounted
ext4 and a real writing process."""

import fcntl
import hashlib
import os
import random
import re
import subprocess
import sys

from conftest import (MiB, query, run_wearmond, spawn, target_conf, write_conf)
from test_badinput import mounted

# A short run of a small file: one cycle of two sizes.
QUICK = {"sizes": "50% 100%", "fill": "no", "workload": "randwrite", "block_size": "4k",
         "queue_depth": "4", "duration": "0.2s", "cycles": "1", "sample_interval": "0.1s"}

OWN = "a target must not be one of wearmon's own files"


def conf_text(db, device, allow_destroy=True, name="f1", metrics=None, **over):
    """One [target name] on device; allow_destroy = yes unless told not."""
    text = target_conf(db, device, {**QUICK, **over}, name=name)
    if not allow_destroy:
        text = text.replace("allow_destroy = yes\n", "")
    if metrics:
        text = text.replace("\n\n[target", f"\nmetrics_file = {metrics}\n\n[target", 1)
    return text


def snapshot(path):
    """What a refusal must not change: the bytes, the size, the mtime."""
    st = os.stat(path)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return digest, st.st_size, st.st_mtime_ns


def data_file(path, size=1 * MiB):
    """A file full of data that wearmon did not create."""
    with open(path, "wb") as f:
        f.write(os.urandom(size))
        os.fsync(f.fileno())
    return path


def refused_both_ways(conf, pattern, *files):
    """--check and a real foreground start both exit 78 with pattern in
    stderr, and leave every file in files unchanged."""
    before = [snapshot(f) for f in files]
    for args in (("--check",), ()):
        p = run_wearmond(conf, *args, timeout=60)
        assert p.returncode == 78, (args, p.stdout, p.stderr)
        assert re.search(pattern, p.stderr), (args, p.stderr)
        assert [snapshot(f) for f in files] == before, args
    return p


def test_file_with_data_needs_allow_destroy(workdir):
    img = data_file(workdir / "vm.img")
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", conf_text(db, img, allow_destroy=False))
    refused_both_ways(conf, r"w\.conf:\d+: allow_destroy: refusing to write to file "
                      + re.escape(str(img)) + r": it holds data \(1048576 bytes\) that "
                      r"wearmon did not create; set allow_destroy = yes in \[target f1\]", img)
    assert not db.exists()
    write_conf(conf, conf_text(db, img))
    p = run_wearmond(conf, "--check")
    assert p.returncode == 0, p.stderr


def test_created_and_sparse_files_are_recorded_and_accepted_again(workdir):
    """A file wearmon creates, and a sparse file without data (truncate -s),
    are recorded by device and inode; a restart accepts them with the data
    it wrote, without allow_destroy."""
    db = workdir / "w.db"
    new, sparse = workdir / "new.img", workdir / "sparse.img"
    with open(sparse, "wb") as f:
        f.truncate(4 * MiB)
    for name, img, over in (("made", new, {"file_size": "4M"}), ("sparse", sparse, {})):
        conf = write_conf(workdir / f"{name}.conf",
                          conf_text(db, img, allow_destroy=False, name=name, **over))
        for _ in range(2):
            p = run_wearmond(conf, timeout=120)
            assert p.returncode == 0, p.stderr
        st = os.stat(img)
        assert st.st_blocks > 0
        rows = query(db, f"SELECT dev, ino, path FROM owned_files WHERE target = '{name}'")
        assert rows == [{"dev": st.st_dev, "ino": st.st_ino, "path": str(img)}]
        t = query(db, f"SELECT backing_dev, backing_ino FROM targets WHERE name = '{name}'")
        assert t == [{"backing_dev": st.st_dev, "backing_ino": st.st_ino}]
        assert os.getxattr(img, "user.wearmon.target") == name.encode()
    # the same bytes under another inode are not wearmon's file
    os.rename(new, workdir / "old.img")
    with open(workdir / "old.img", "rb") as src, open(new, "wb") as dst:
        dst.write(src.read())
    conf = workdir / "made.conf"
    refused_both_ways(conf, r"refusing to write to file .*new\.img: it holds data", new)


def test_own_files_refused_by_any_path(workdir):
    """The database, its -wal and -shm, the configuration and the
    metrics file, named directly, through a symbolic link, a hard link or
    /proc: refused even with allow_destroy = yes."""
    db, metrics = workdir / "w.db", workdir / "w.prom"
    conf = write_conf(workdir / "w.conf",
                      conf_text(db, workdir / "t.img", metrics=metrics, file_size="4M"))
    p = run_wearmond(conf, timeout=120)
    assert p.returncode == 0, p.stderr
    for f in ("w.db-wal", "w.db-shm", "w.prom"):
        assert (workdir / f).exists(), f
    os.symlink(db, workdir / "link.db")
    os.link(db, workdir / "hard.db")
    os.symlink(conf, workdir / "conf.link")
    cases = [
        (workdir / "link.db", "the database", db),
        (workdir / "hard.db", "the database", db),
        (f"/proc/{os.getpid()}/root{db}", "the database", db),
        (workdir / "w.db-wal", "the database's write-ahead log", workdir / "w.db-wal"),
        (workdir / "w.db-shm", "the database's shared-memory index", workdir / "w.db-shm"),
        (workdir / "conf.link", "the configuration", conf),
        (metrics, "the metrics file", metrics),
    ]
    for i, (device, what, real) in enumerate(cases):
        c = write_conf(workdir / f"c{i}.conf", conf_text(db, device, metrics=metrics))
        if what == "the configuration":
            os.unlink(workdir / "conf.link")
            os.symlink(c, workdir / "conf.link")
            real = c
        # reading the database maps its -shm: of those two, the database
        # itself must not change (the names beside the database that do not
        # exist yet: tests/integration/test_dbfile.py)
        files = [db] if real == workdir / "w.db-shm" else [db, real]
        refused_both_ways(c, re.escape(f"device: refusing {device}: it is {what} {real}; {OWN}"),
                          *files)
    assert query(db, "SELECT count(*) AS n FROM runs") == [{"n": 1}]


def test_file_that_would_be_created_as_the_database(workdir):
    """Neither file exists yet: the target's path, its directory resolved,
    is the database's. A link to a missing file is not followed either."""
    db = workdir / "w.db"
    (workdir / "sub").mkdir()
    os.symlink(workdir, workdir / "dirlink")
    for device in (workdir / "sub" / ".." / "w.db", workdir / "dirlink" / "w.db"):
        conf = write_conf(workdir / "w.conf", conf_text(db, device, file_size="4M"))
        for args in (("--check",), ()):
            p = run_wearmond(conf, *args)
            assert p.returncode == 78, p.stdout + p.stderr
            assert f"device: refusing {device}: it would be created as the database {db}; " \
                   f"{OWN}" in p.stderr, p.stderr
            assert not db.exists()
    elsewhere = workdir / "elsewhere.img"
    os.symlink(elsewhere, workdir / "dangling.img")
    conf = write_conf(workdir / "w.conf",
                      conf_text(db, workdir / "dangling.img", file_size="4M"))
    for args in (("--check",), ()):
        p = run_wearmond(conf, *args)
        assert p.returncode == 78, p.stdout + p.stderr
        assert "it is a symbolic link to a file that does not exist" in p.stderr, p.stderr
        assert not elsewhere.exists()


def test_backing_file_of_an_attached_loop_device(workdir, make_loop):
    loop = make_loop(16 * MiB)
    conf = write_conf(workdir / "w.conf", conf_text(workdir / "w.db", loop.backing))
    refused_both_ways(conf, re.escape(
        f"device: refusing {loop.backing}: it is the backing file of the attached loop device "
        f"{loop.dev}; detach it (losetup -d {loop.dev})"), loop.backing)


def test_backing_file_of_a_mounted_loop_device(workdir, make_loop):
    loop = make_loop(16 * MiB)
    with mounted(loop.dev, workdir / "mnt"):
        subprocess.run(["sync"])
        os.link(loop.backing, workdir / "other-name.img")
        conf = write_conf(workdir / "w.conf",
                          conf_text(workdir / "w.db", workdir / "other-name.img"))
        refused_both_ways(conf, rf"refusing {workdir}/other-name\.img: it is the backing file "
                          rf"of the attached loop device {loop.dev}", loop.backing)


def test_loop_device_on_the_database(workdir):
    """A loop device (read-only here, so that nothing can write through it)
    whose backing file is the database: refused as wearmon's own file."""
    db = workdir / "w.db"
    first = write_conf(workdir / "first.conf",
                       conf_text(db, workdir / "t.img", file_size="4M"))
    assert run_wearmond(first, timeout=120).returncode == 0
    dev = subprocess.run(["losetup", "-r", "--show", "-f", db], check=True,
                         capture_output=True, text=True).stdout.strip()
    try:
        conf = write_conf(workdir / "w.conf", conf_text(db, dev, sizes="4K 8K"))
        refused_both_ways(conf, re.escape(f"device: refusing {dev}: its backing file {db} is "
                                          f"the database {db}; {OWN}"), db)
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)


def test_file_open_for_writing_elsewhere(workdir):
    img = workdir / "busy.img"
    with open(img, "wb") as f:
        f.truncate(4 * MiB)
    conf = write_conf(workdir / "w.conf", conf_text(workdir / "w.db", img))
    holder = spawn([sys.executable, "-c",
                    "import os, sys, time\n"
                    f"fd = os.open({str(img)!r}, os.O_WRONLY)\n"
                    "print('ready', flush=True)\n"
                    "time.sleep(120)\n"])
    try:
        assert holder.stdout.readline().strip() == "ready"
        comm = open(f"/proc/{holder.pid}/comm").read().strip()
        refused_both_ways(conf, re.escape(f"device: refusing {img}: process {holder.pid} "
                                          f"({comm}) has it open for writing"), img)
    finally:
        holder.kill()
        holder.communicate()
    # a reader alone is no writer
    reader = spawn([sys.executable, "-c",
                    f"f = open({str(img)!r}, 'rb')\nprint('ready', flush=True)\n"
                    "import time; time.sleep(120)\n"])
    try:
        assert reader.stdout.readline().strip() == "ready"
        p = run_wearmond(conf, "--check")
        assert p.returncode == 0, p.stderr
    finally:
        reader.kill()
        reader.communicate()


def test_loop_device_known_by_its_backing_inode(workdir, make_loop):
    """Another file at the loop device's backing path is another device:
    refused (78) unless adopt_new_device; a row from before schema 15 (no
    inode) takes the inode silently."""
    loop = make_loop(32 * MiB)
    db = workdir / "w.db"
    keys = {"sizes": "4M 8M", "ioengine": "null"}
    conf = write_conf(workdir / "w.conf", conf_text(db, loop.dev, **keys))
    assert run_wearmond(conf).returncode == 0
    st = os.stat(loop.backing)
    assert query(db, "SELECT backing_dev, backing_ino FROM targets") == [
        {"backing_dev": st.st_dev, "backing_ino": st.st_ino}]
    # as a database of schema 14 left it: adopted without a word
    subprocess.run(["sqlite3", db, "UPDATE targets SET backing_dev = NULL, backing_ino = NULL"],
                   check=True)
    p = run_wearmond(conf)
    assert p.returncode == 0, p.stderr
    assert "adopting" not in p.stderr
    assert query(db, "SELECT backing_ino FROM targets") == [{"backing_ino": st.st_ino}]

    subprocess.run(["losetup", "-d", loop.dev], check=True)
    copy = workdir / "copy.img"
    subprocess.run(["cp", "--sparse=always", loop.backing, copy], check=True)
    os.replace(copy, loop.backing)
    loop.dev = subprocess.run(["losetup", "--show", "-f", loop.backing], check=True,
                              capture_output=True, text=True).stdout.strip()
    new_ino = os.stat(loop.backing).st_ino
    assert new_ino != st.st_ino
    write_conf(conf, conf_text(db, loop.dev, **keys))
    for args in (("--check",), ()):
        p = run_wearmond(conf, *args)
        assert p.returncode == 78, (args, p.stdout, p.stderr)
        assert f"target f1 is recorded in {db} with another device (backing file identity " \
               f"'{os.major(st.st_dev)}:{os.minor(st.st_dev)} inode {st.st_ino}' -> " \
               f"'{os.major(st.st_dev)}:{os.minor(st.st_dev)} inode {new_ino}')" in p.stderr, \
            p.stderr
    assert query(db, "SELECT count(*) AS n FROM runs") == [{"n": 2}]
    write_conf(conf, conf_text(db, loop.dev, adopt_new_device="yes", **keys))
    p = run_wearmond(conf)
    assert p.returncode == 0, p.stderr
    assert query(db, "SELECT backing_ino FROM targets") == [{"backing_ino": new_ino}]


LOOP_CTL_REMOVE = 0x4C81   # linux/loop.h


def attach_far(backing):
    """Attach backing to a loop device numbered far above the ones in use.
    `losetup -f`, which every other test (and any program on the machine)
    asks for a device, hands out the lowest free one: a low device freed
    here would be taken by the next caller within moments, one numbered in
    the thousands only once every device below it is taken."""
    for _ in range(50):
        n = random.randrange(1000, 5000)
        if os.path.exists(f"/sys/block/loop{n}"):
            continue
        if subprocess.run(["losetup", f"/dev/loop{n}", str(backing)],
                          capture_output=True).returncode == 0:
            return f"/dev/loop{n}"
    raise RuntimeError("no free loop device number between 1000 and 5000")


def backing_of(dev):
    """The backing file of loop device dev, or None when detached."""
    try:
        return open(f"/sys/block/{os.path.basename(dev)}/loop/backing_file").read().strip()
    except OSError:
        return None


def test_detached_loop_device_named(workdir):
    """A loop device attached here and detached. The null engine: should
    another program attach the freed device between the detach and the
    start, nothing is written to it; and it is detached at the end only if
    it is still on this test's file. The device is one that `losetup -f`
    does not hand out while lower ones are free (attach_far), so the runs
    below see it detached; the device is removed at the end."""
    backing = workdir / "detach.img"
    with open(backing, "wb") as f:
        f.truncate(32 * MiB)
    dev = attach_far(backing)
    try:
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf",
                          conf_text(db, dev, sizes="4M 8M", ioengine="null"))
        assert run_wearmond(conf).returncode == 0
        subprocess.run(["losetup", "-d", dev], check=True)
        for args in (("--check",), ()):
            p = run_wearmond(conf, *args)
            assert backing_of(dev) is None, f"another program attached {dev}: {backing_of(dev)}"
            assert p.returncode == 78, (args, p.stdout, p.stderr)
            assert f"device: refusing {dev}: it is a loop device with no backing file " \
                   "(detached)" in p.stderr, p.stderr
            assert "capacity 0" not in p.stderr
    finally:
        if backing_of(dev) == str(backing):
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        if backing_of(dev) is None:   # free: remove it (it fails if another took it)
            fd = os.open("/dev/loop-control", os.O_RDWR)
            try:
                fcntl.ioctl(fd, LOOP_CTL_REMOVE, int(dev.removeprefix("/dev/loop")))
            except OSError:
                pass
            finally:
                os.close(fd)


def test_a_refusal_creates_and_extends_nothing(workdir):
    """Target a would be extended and target c created; target b is refused:
    a keeps its size and mtime, c does not appear. So with a refusal that
    needs the database (another device under a's name)."""
    db = workdir / "w.db"
    a, b, c = workdir / "a.img", data_file(workdir / "b.img"), workdir / "c.img"
    with open(a, "wb") as f:
        f.truncate(1 * MiB)
    body = "\n".join(f"{k} = {v}" for k, v in QUICK.items())
    conf = write_conf(workdir / "w.conf", f"""[wearmon]
database = {db}

[target a]
device = {a}
file_size = 4M
{body}

[target b]
device = {b}
{body}

[target c]
device = {c}
file_size = 4M
{body}
""")
    refused_both_ways(conf, r"refusing to write to file .*b\.img: it holds data", a, b)
    assert not c.exists()
    assert not db.exists()

    # a is recorded as another file's target: refused after the database
    # is read, still before a is extended or c created
    with open(workdir / "x.img", "wb") as f:
        f.truncate(4 * MiB)
    x = write_conf(workdir / "x.conf", conf_text(db, workdir / "x.img", name="a",
                                                 file_size="4M"))
    assert run_wearmond(x, timeout=120).returncode == 0
    conf.write_text(conf.read_text().replace(f"[target b]\ndevice = {b}\n",
                                             f"[target b]\ndevice = {b}\nallow_destroy = yes\n"))
    refused_both_ways(conf, r"target a is recorded in .* with another device \(.*file", a, b)
    assert not c.exists()
