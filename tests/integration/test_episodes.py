"""Every episode leaves a trace: a database that could not be
written for a while (a real small filesystem filled up by a file the test
writes, then freed; database files made read-only) is stored afterwards as
a db-write-failed event, a run that ends by a failure records its exit
status and reason, and a target file whose size changes under the daemon
fails the iteration naming the file and both sizes."""

import errno
import json
import os
import signal
import subprocess
import time

from conftest import (SLOW, WEARMOND, MiB, query, spawn, start_wearmond, stop, target_conf,
                      wait_for, write_conf)



def running_iteration(db):
    return query(db, "SELECT id FROM iterations WHERE status = 'running'")


def done_iterations(db):
    return query(db, "SELECT count(*) AS n FROM iterations WHERE status = 'done'")[0]["n"]


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def start_logged(conf, log):
    """wearmond with its stderr in a file the test reads while it runs."""
    with open(log, "w") as errf:
        return spawn([WEARMOND, "--foreground", "-c", conf], stdout=subprocess.DEVNULL,
                     stderr=errf)


# ---- a target's file that changes size under the daemon ---------------------


def test_target_file_truncated_mid_run_fails_the_iteration(workdir):
    img, db = workdir / "t.img", workdir / "w.db"
    conf = write_conf(workdir / "w.conf",
                      target_conf(db, img, {**SLOW, "file_size": "16M"}, name="f1"))
    proc = start_wearmond(conf)
    assert wait_for(lambda: running_iteration(db), 30), "no iteration ran"
    os.truncate(img, 8 * MiB)
    _, err = proc.communicate(timeout=60)  # a hung daemon: workdir's teardown kills it
    assert proc.returncode == 1, err
    why = (f"target file {img} changed size under wearmond: 16777216 bytes at start, "
           "8388608 bytes now (truncated by another program)")
    assert why in err, err
    rows = query(db, "SELECT status, error FROM iterations WHERE status = 'failed'")
    assert len(rows) == 1 and why in rows[0]["error"], rows
    assert query(db, "SELECT exit_status FROM runs") == [{"exit_status": 1}]


def test_target_file_truncated_between_cycles_fails_before_the_next(workdir):
    """Truncated while the target pauses between cycles: the check before
    the next cycle fails the target before any of its iterations runs."""
    img, db = workdir / "t.img", workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(
        db, img, {**SLOW, "sizes": "1M", "pause": "5s", "file_size": "16M"}, name="f1"))
    proc = start_wearmond(conf)
    assert wait_for(lambda: query(db, "SELECT 1 FROM progress WHERE phase = 'pause'"), 60), \
        "never paused"
    os.truncate(img, 12 * MiB)
    _, err = proc.communicate(timeout=60)  # a hung daemon: workdir's teardown kills it
    assert proc.returncode == 1, err
    assert (f"target file {img} changed size under wearmond: 16777216 bytes at start, "
            "12582912 bytes now (truncated by another program)") in err, err
    assert query(db, "SELECT count(*) AS n FROM iterations WHERE status != 'done'") == \
        [{"n": 0}]
    cycles = query(db, "SELECT number, status FROM cycles ORDER BY number")
    assert cycles == [{"number": 1, "status": "done"}, {"number": 2, "status": "failed"}], cycles


def test_loop_backing_file_extended_mid_run_fails_the_iteration(workdir, make_loop):
    loop = make_loop(32 * MiB)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(db, loop.dev, SLOW, name="l1"))
    proc = start_wearmond(conf)
    assert wait_for(lambda: running_iteration(db), 30), "no iteration ran"
    os.truncate(loop.backing, 48 * MiB)
    _, err = proc.communicate(timeout=60)  # a hung daemon: workdir's teardown kills it
    assert proc.returncode == 1, err
    why = (f"backing file {loop.backing} of loop device {loop.dev} changed size under "
           "wearmond: 33554432 bytes at start, 50331648 bytes now (extended by another "
           "program)")
    assert why in err, err
    rows = query(db, "SELECT error FROM iterations WHERE status = 'failed'")
    assert len(rows) == 1 and why in rows[0]["error"], rows


# ---- a database that cannot be written for a while --------------------------


def fill_up(path):
    """Write path until its filesystem is full (64 KiB, then 4 KiB and 512 B
    writes for the last pages)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (65536, 4096, 512):
            chunk = b"\xa5" * size
            try:
                while True:
                    os.write(fd, chunk)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
    finally:
        os.close(fd)


def small_tmpfs(workdir, size="4m"):
    d = workdir / "small"
    d.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(d)],
                   check=True)
    return d


def spells(db):
    rows = query(db, "SELECT severity, kind, message_id, message, value, data, target_id, "
                     "run_id FROM events WHERE kind = 'db-write-failed'")
    for r in rows:
        r["data"] = json.loads(r["data"])
    return rows


def log_has(log, text):
    return text in read(log)


def check_spell(spell, error, min_seconds):
    d = spell["data"]
    assert spell["severity"] == "crit" and spell["target_id"] is None, spell
    assert spell["message_id"] == "682846020c7040acbf4108a1c3ac1ff3", spell
    assert d["error"] == error, d
    assert d["started_at"] < d["ended_at"], d
    assert d["seconds"] >= min_seconds and abs(spell["value"] - d["seconds"]) < 0.001, d
    assert d["failed_writes"] == sum(w["count"] for w in d["not_written"]) + d["other_writes"]
    assert d["failed_writes"] >= 1, d
    assert f"could not be written for {d['seconds']:.1f} s" in spell["message"], spell
    return {w["what"] for w in d["not_written"]}


def test_disk_full_survived_is_stored_once_writable(workdir):
    """The database's filesystem fills up for a few seconds (a file the test
    writes), then is freed: the daemon goes on, stores the spell as one
    db-write-failed event, and its run ends as stopped by the signal."""
    small = small_tmpfs(workdir)
    try:
        db, log = small / "w.db", workdir / "err.log"
        conf = write_conf(workdir / "w.conf", target_conf(
            db, workdir / "t.img", {**SLOW, "file_size": "16M"}, name="f1"))
        proc = start_logged(conf, log)
        assert wait_for(lambda: done_iterations(db) >= 1, 60), read(log)
        fill_up(small / "filler")
        try:
            assert wait_for(lambda: log_has(log, "database or disk is full"), 30), read(log)
            time.sleep(1)
        finally:
            os.unlink(small / "filler")
        assert wait_for(lambda: log_has(log, "is writable again"), 30), read(log)
        before = done_iterations(db)
        assert wait_for(lambda: done_iterations(db) > before, 30), "no iteration after it"
        rc, _, _ = stop(proc, timeout=30)
        err = read(log)
        assert rc == 0, err
        rows = spells(db)
        assert len(rows) == 1, rows
        whats = check_spell(rows[0], "database or disk is full", 1.0)
        assert whats, rows
        run = query(db, "SELECT id, exit_status, exit_reason, ended_at FROM runs")
        assert [(r["exit_status"], r["exit_reason"]) for r in run] == [(0, "signal")], run
        assert run[0]["ended_at"] and rows[0]["run_id"] == run[0]["id"]
        assert f"{db} is writable again; recorded as a db-write-failed event" in err
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)


def test_disk_full_failure_records_the_run_end_once_freed(workdir):
    """Full long enough for the target to fail: the run's end is retried
    until the test frees the space, then the runs row has exit status 1 and
    the reason, and the spell (with the run end's own failed writes) is an
    event."""
    small = small_tmpfs(workdir)
    filler = small / "filler"
    try:
        db, log = small / "w.db", workdir / "err.log"
        conf = write_conf(workdir / "w.conf", target_conf(
            db, workdir / "t.img", {**SLOW, "file_size": "16M"}, name="f1"))
        proc = start_logged(conf, log)
        assert wait_for(lambda: done_iterations(db) >= 1, 60), read(log)
        fill_up(filler)
        try:
            assert wait_for(lambda: log_has(log, "cannot record the end of the run"), 120), \
                read(log)
            time.sleep(2)
            assert proc.poll() is None, read(log)
        finally:
            os.unlink(filler)
        proc.wait(timeout=30)
        err = read(log)
        assert proc.returncode == 1, err
        assert "trying again each second for up to 60 s" in err, err
        assert "recorded the end of the run" in err, err
        run = query(db, "SELECT exit_status, exit_reason, ended_at FROM runs")
        assert len(run) == 1 and run[0]["exit_status"] == 1 and run[0]["ended_at"], run
        assert run[0]["exit_reason"].startswith("failure: target f1: "), run
        assert "No space left on device" in run[0]["exit_reason"], run
        rows = spells(db)
        assert len(rows) == 1, rows
        whats = check_spell(rows[0], "database or disk is full", 3.0)
        assert "record run end" in whats, whats
        assert whats & {"start iteration", "store iteration results", "start cycle"}, whats
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)


def test_read_only_database_files_survived_is_stored(workdir, make_loop):
    """The database's files refuse writes for a few seconds. A remount
    read-only is what an operator would try, but the kernel refuses it
    while the daemon holds the database open for writing (mount point is
    busy): the test makes the database and its WAL immutable instead
    (chattr +i), which ext4 answers like a read-only filesystem, writes
    failing, then lifts it."""
    loop = make_loop(32 * MiB)
    subprocess.run(["mkfs.ext4", "-q", loop.dev], check=True)
    mnt = workdir / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", loop.dev, str(mnt)], check=True)
    db, log = mnt / "w.db", workdir / "err.log"
    files = [str(db), f"{db}-wal"]
    try:
        conf = write_conf(workdir / "w.conf", target_conf(
            db, workdir / "t.img", {**SLOW, "file_size": "16M"}, name="f1"))
        proc = start_logged(conf, log)
        assert wait_for(lambda: done_iterations(db) >= 1, 60), read(log)
        ro = subprocess.run(["mount", "-o", "remount,ro", str(mnt)], capture_output=True,
                            text=True)
        assert ro.returncode != 0, "the kernel remounted under an open writer"
        subprocess.run(["chattr", "+i", *files], check=True)
        try:
            assert wait_for(lambda: log_has(log, "disk I/O error"), 30), read(log)
            time.sleep(1)
        finally:
            subprocess.run(["chattr", "-i", *files], check=True)
        assert wait_for(lambda: log_has(log, "is writable again"), 30), read(log)
        rc, _, _ = stop(proc, timeout=30)
        err = read(log)
        assert rc == 0, err
        rows = spells(db)
        assert len(rows) == 1, rows
        check_spell(rows[0], "disk I/O error", 1.0)
        run = query(db, "SELECT exit_status, exit_reason, ended_at FROM runs")
        assert [(r["exit_status"], r["exit_reason"]) for r in run] == [(0, "signal")], run
    finally:
        subprocess.run(["chattr", "-i", *files], capture_output=True)
        subprocess.run(["umount", str(mnt)], capture_output=True)
