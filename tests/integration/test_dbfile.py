"""The database file and what surrounds it: one daemon per database FILE
whatever the path (a hard link, a symlink, a bind mount), the names SQLite
may create beside it refused as targets, a full or read-only database
filesystem at start retried (exit 1) rather than final (78), and --check
refusing what a start refuses, with the same exit status and cause.

Safety: every file is made under the test's directory; the small
filesystems are ext4 on loop devices on backing files made here, mounted
under the test's directory and unmounted on leaving, failures too."""

import contextlib
import os
import re
import subprocess

import pytest

from conftest import (SLOW, MiB, query, run_wearmon, run_wearmond, sh, start_wearmond, stop, target_conf,
                      wait_for, write_conf)

# A short run of a small file target: one cycle of two sizes.
QUICK = {"sizes": "50% 100%", "fill": "no", "workload": "randwrite", "block_size": "4k",
         "queue_depth": "4", "duration": "0.2s", "cycles": "1", "sample_interval": "0.1s"}


def file_conf(path, db, img, keys=None, name="f1", size="16M"):
    return write_conf(path, target_conf(db, img, {**(keys or SLOW), "file_size": size},
                                        name=name))


def done_iterations(db):
    return query(db, "SELECT count(*) AS n FROM iterations WHERE status = 'done'")[0]["n"]


def quick_check(db):
    return sh("sqlite3", "-readonly", db, "PRAGMA quick_check").stdout.strip()


@contextlib.contextmanager
def bind_mounted(src, dst):
    """src bind-mounted on dst (a file made here), unmounted on leaving."""
    sh("mount", "--bind", src, dst)
    try:
        yield dst
    finally:
        subprocess.run(["umount", dst], capture_output=True)


@contextlib.contextmanager
def small_fs(make_loop, mnt, size=16 * MiB):
    """A new ext4 on a loop device made here, mounted on mnt (made here)."""
    loop = make_loop(size)
    sh("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", loop.dev)
    mnt.mkdir()
    sh("mount", loop.dev, mnt)
    try:
        yield loop
    finally:
        subprocess.run(["umount", mnt], capture_output=True)


def fill(mnt):
    """Write mnt/fill as root until the filesystem takes no more (the
    blocks reserved for root too), then sync: df shows nothing available."""
    subprocess.run(["dd", "if=/dev/zero", f"of={mnt}/fill", "bs=64k"], capture_output=True)
    sh("sync")
    assert os.statvfs(mnt).f_bavail == 0, "the filesystem did not fill up"


# ---- one daemon per database file ---------------------------------------


def other_name(kind, workdir, db, stack):
    """Another path to db's file: a hard link, a symlink or a bind mount of
    the file, in another directory."""
    other = workdir / "b"
    other.mkdir()
    path = other / "w.db"
    if kind == "hardlink":
        os.link(db, path)
    elif kind == "symlink":
        os.symlink(db, path)
    else:
        path.write_bytes(b"")
        stack.enter_context(bind_mounted(db, path))
    return path


@pytest.mark.parametrize("kind", ["hardlink", "symlink", "bindmount"])
def test_second_daemon_by_another_path_is_refused(workdir, kind):
    """The lock is the file's: a second daemon reaching the running one's
    database by another path is refused naming the holder's pid, writes
    nothing (no log beside the other name, no target file), and the first
    daemon goes on; the file is intact afterwards."""
    (workdir / "a").mkdir()
    db = workdir / "a" / "w.db"
    first = start_wearmond(file_conf(workdir / "one.conf", db, workdir / "a" / "t.img"))
    with contextlib.ExitStack() as stack:
        try:
            assert wait_for(lambda: done_iterations(db) >= 1, 60), "first daemon never ran"
            # a checkpoint: the refusal must not hang on WAL frames being there
            sh("sqlite3", db, "PRAGMA wal_checkpoint(TRUNCATE)")
            path = other_name(kind, workdir, db, stack)
            img2 = workdir / "b" / "t2.img"
            conf2 = file_conf(workdir / "two.conf", path, img2, name="f2")
            for args in (("--check",), ()):
                p = run_wearmond(conf2, *args, timeout=120)
                assert f"in use by wearmond pid {first.pid}" in p.stderr, p.stderr
                assert "damaged" not in p.stderr, p.stderr
                if kind == "symlink" and args:
                    # the same file by the same resolved path (SQLite follows
                    # the link to the same -wal): --check of the database a
                    # running daemon writes, a notice (wearmond(8))
                    assert p.returncode == 0, p.stdout + p.stderr
                    continue
                assert p.returncode == 78, p.stdout + p.stderr
                if kind != "symlink":
                    assert f"which opened the same file as {db}" in p.stderr, p.stderr
            assert not img2.exists()
            assert not (workdir / "b" / "w.db-wal").exists()
            n = done_iterations(db)
            assert wait_for(lambda: done_iterations(db) > n, 60), "the first daemon stopped"
            assert first.poll() is None
        finally:
            rc, _, err = stop(first)
    assert rc == 0, err
    assert quick_check(db) == "ok"
    assert [r["pid"] for r in query(db, "SELECT pid FROM runs")] == [first.pid]


def test_readers_are_not_locked_out(workdir):
    """The lock is no SQLite lock: the sqlite3 CLI and wearmon read (and
    the CLI may even write a scratch table) while the daemon runs."""
    db = workdir / "w.db"
    first = start_wearmond(file_conf(workdir / "w.conf", db, workdir / "t.img"))
    try:
        assert wait_for(lambda: done_iterations(db) >= 1, 60)
        sh("sqlite3", "-cmd", ".timeout 30000", db, "CREATE TABLE scratch(x); DROP TABLE scratch;")
        assert quick_check(db) == "ok"
        p = run_wearmon("status", db=db, check=0)
        assert re.search(r"\brunning\b", p.stdout), p.stdout
    finally:
        rc, _, err = stop(first)
    assert rc == 0, err


def killed_with_a_log(workdir, db):
    """A daemon on db killed with -9 once it has stored an iteration: its
    history is (partly) in db-wal only. Returns the done rows then."""
    proc = start_wearmond(file_conf(workdir / "one.conf", db, db.parent / "t.img"))
    try:
        assert wait_for(lambda: done_iterations(db) >= 2, 60), "the daemon never ran"
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert os.path.getsize(f"{db}-wal") > 0
    return done_iterations(db)


@pytest.mark.parametrize("kind", ["hardlink", "bindmount"])
def test_log_beside_another_name_is_folded_in(workdir, kind):
    """A daemon killed while writing through a/w.db, the next started
    through another name of the file: SQLite would not read a/w.db-wal
    (it looks beside the name it opens), so the start folds it into the
    file first; the history is whole by either name and the campaign
    goes on where it was (no cycle begun twice)."""
    (workdir / "a").mkdir()
    db = workdir / "a" / "w.db"
    done = killed_with_a_log(workdir, db)
    with contextlib.ExitStack() as stack:
        path = other_name(kind, workdir, db, stack)
        conf = file_conf(workdir / "two.conf", path, workdir / "a" / "t.img",
                         {**SLOW, "cycles": "1"})
        p = run_wearmond(conf, timeout=120)
        assert p.returncode == 0, p.stderr
        assert f"folded {db}-wal" in p.stderr, p.stderr
        for name in (path, db):
            assert query(name, "SELECT number FROM cycles GROUP BY target_id, number"
                               " HAVING count(*) > 1") == []
            assert quick_check(name) == "ok"
            assert len(query(name, "SELECT id FROM runs")) == 2
            assert done_iterations(name) >= done
        assert not os.path.exists(f"{db}-wal") or os.path.getsize(f"{db}-wal") == 0


def test_log_beside_a_moved_database_is_refused(workdir):
    """Killed, then moved without its log: the start refuses (78), naming
    the log left behind and where it belongs; moved too, it starts and
    keeps the whole history."""
    (workdir / "a").mkdir()
    (workdir / "c").mkdir()
    db, moved = workdir / "a" / "w.db", workdir / "c" / "w.db"
    done = killed_with_a_log(workdir, db)
    os.rename(db, moved)
    conf = file_conf(workdir / "two.conf", moved, workdir / "a" / "t.img",
                     {**SLOW, "cycles": "1"})
    p = run_wearmond(conf, timeout=120)
    assert p.returncode == 78, p.stderr
    assert f"database {moved} was last written as {db}, and {db}-wal" in p.stderr, p.stderr
    assert f"move that file beside it as {moved}-wal" in p.stderr, p.stderr
    os.rename(f"{db}-wal", f"{moved}-wal")
    p = run_wearmond(conf, timeout=120)
    assert p.returncode == 0, p.stderr
    assert quick_check(moved) == "ok"
    assert len(query(moved, "SELECT id FROM runs")) == 2
    assert done_iterations(moved) >= done


# ---- the names SQLite may create beside the database ---------------------


SIDE = [
    ("-journal", "the database's rollback journal"),
    ("-wal", "the database's write-ahead log"),
    ("-shm", "the database's shared-memory index"),
    (".lock", "the database's lock"),
    ("-mj0A1B2C9D3", "a file SQLite may keep beside the database"),
]


@pytest.mark.parametrize("suffix,what", SIDE, ids=[s for s, _ in SIDE])
def test_files_beside_the_database_are_refused_as_targets(workdir, suffix, what):
    """Named directly and through a symlinked directory, whether the file
    exists yet or not: refused at --check and at a start, and nothing is
    created."""
    db = workdir / "w.db"
    p = run_wearmond(file_conf(workdir / "w.conf", db, workdir / "t.img", QUICK, size="4M"))
    assert p.returncode == 0, p.stderr
    os.symlink(workdir, workdir / "dirlink")
    real = workdir / f"w.db{suffix}"
    existed = real.exists()
    for device in (real, workdir / "dirlink" / f"w.db{suffix}"):
        conf = file_conf(workdir / "c.conf", db, device, QUICK, name="side", size="4M")
        for args in (("--check",), ()):
            p = run_wearmond(conf, *args)
            assert p.returncode == 78, p.stdout + p.stderr
            verb = "is" if existed else "would be created as"
            assert f"device: refusing {device}: it {verb} {what} {real}; a target must not " \
                   f"be one of wearmon's own files" in p.stderr, p.stderr
            assert real.exists() == existed
    assert query(db, "SELECT count(*) AS n FROM runs") == [{"n": 1}]


# ---- a full or read-only database filesystem ----------------------------


def test_full_database_filesystem_at_first_start_is_retried(workdir, make_loop):
    """No database yet, a file target beside it: exit 1 naming the
    filesystem and its free space, never the allow_destroy refusal, and
    nothing left behind; once there is room, the start runs, and a restart
    on a full filesystem again exits 1."""
    mnt = workdir / "fs"
    with small_fs(make_loop, mnt):
        db, img = mnt / "w.db", mnt / "t.img"
        conf = file_conf(workdir / "w.conf", db, img, QUICK, size="4M")
        fill(mnt)
        for args in (("--check",), (), ()):
            p = run_wearmond(conf, *args)
            assert p.returncode == 1, p.stdout + p.stderr
            assert f"filesystem {mnt} (ext4 on " in p.stderr, p.stderr
            assert "free of" in p.stderr and "allow_destroy" not in p.stderr, p.stderr
            assert not db.exists() and not img.exists()
        os.unlink(mnt / "fill")
        p = run_wearmond(conf)
        assert p.returncode == 0, p.stderr
        fill(mnt)
        for args in (("--check",), ()):
            p = run_wearmond(conf, *args, "--new-campaign", "all")
            assert p.returncode == 1, p.stdout + p.stderr
            assert f"filesystem {mnt} (ext4 on " in p.stderr, p.stderr
            assert "allow_destroy" not in p.stderr, p.stderr
        assert query(db, "SELECT count(*) AS n FROM runs") == [{"n": 1}]


def test_read_only_database_filesystem_is_retried(workdir, make_loop):
    mnt = workdir / "fs"
    with small_fs(make_loop, mnt):
        db = mnt / "w.db"
        conf = file_conf(workdir / "w.conf", db, workdir / "t.img", QUICK, size="4M")
        assert run_wearmond(conf).returncode == 0
        sh("mount", "-o", "remount,ro", mnt)
        for args in (("--check",), ()):
            p = run_wearmond(conf, *args, "--new-campaign", "all")
            assert p.returncode == 1, p.stdout + p.stderr
            assert f"filesystem {mnt} (ext4 on " in p.stderr and "read-only" in p.stderr, \
                p.stderr
        sh("mount", "-o", "remount,rw", mnt)
        assert quick_check(db) == "ok"


# ---- --check refuses what a start refuses --------------------------------


def case_directory(workdir, make_loop, stack):
    db = workdir / "w.db"
    db.mkdir()
    return db, 78, "is not a regular file (a directory)"


def case_fifo(workdir, make_loop, stack):
    db = workdir / "w.db"
    os.mkfifo(db)
    return db, 78, "is not a regular file (a FIFO)"


def case_device(workdir, make_loop, stack):
    loop = make_loop(4 * MiB)
    return loop.dev, 78, "is not a regular file (a block device)"


def case_full(workdir, make_loop, stack):
    mnt = workdir / "fs"
    stack.enter_context(small_fs(make_loop, mnt))
    fill(mnt)
    return mnt / "w.db", 1, f"its filesystem {mnt} (ext4 on "


def case_read_only(workdir, make_loop, stack):
    mnt = workdir / "fs"
    stack.enter_context(small_fs(make_loop, mnt))
    sh("mount", "-o", "remount,ro", mnt)
    return mnt / "w.db", 1, "read-only"


def case_lock_by_hard_link(workdir, make_loop, stack):
    (workdir / "a").mkdir()
    db = workdir / "a" / "w.db"
    first = start_wearmond(file_conf(workdir / "one.conf", db, workdir / "a" / "t.img"))
    stack.callback(stop, first)
    assert wait_for(lambda: done_iterations(db) >= 1, 60), "first daemon never ran"
    os.link(db, workdir / "w.db")
    return workdir / "w.db", 78, f"in use by wearmond pid {first.pid}"


CASES = [case_directory, case_fifo, case_device, case_full, case_read_only,
         case_lock_by_hard_link]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__[5:] for c in CASES])
def test_check_agrees_with_the_start(workdir, make_loop, case):
    """The same case given to --check and to a start: the same exit status
    (1: retried, 78: final) and a message naming the same cause."""
    with contextlib.ExitStack() as stack:
        db, status, cause = case(workdir, make_loop, stack)
        conf = file_conf(workdir / "w.conf", db, workdir / "t.img", QUICK, size="4M")
        for args in (("--check",), ()):
            p = run_wearmond(conf, *args, timeout=120)
            assert p.returncode == status, (args, p.stdout + p.stderr)
            assert cause in p.stderr, (args, p.stderr)
            assert "configuration" not in p.stdout or "OK" not in p.stdout
        assert not (workdir / "t.img").exists()
