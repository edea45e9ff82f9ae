"""The database's integrity without reading it whole at start: wearmond is
ready after a cheap check (root and edge pages of each table), checks the
whole file in a background thread (wm-integrity) and stops on damage;
`wearmon check` reads it whole on demand. Read bytes are compared with the
file's size (ratios within one run), never with the clock."""

import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from conftest import (REPO, SLOW, query, run_wearmon, run_wearmond, sh, spawn, start_wearmond,
                      stop, target_conf, wait_for, write_conf, WEARMOND)
from service_helper import NotifyListener

MiB = 1 << 20
BALLAST_MIB = 96


@pytest.fixture
def listener(workdir):
    n = NotifyListener(workdir)
    try:
        yield n
    finally:
        n.close()


def conf_for(workdir, db, **over):
    keys = {**SLOW, "file_size": "16M", **over}
    return write_conf(workdir / "w.conf", target_conf(db, workdir / "t.img", keys, name="f1"))


def history_db(workdir):
    """A real history (one short run) grown by a ballast table of
    BALLAST_MIB MiB, the size a long history has without its rows."""
    db = workdir / "w.db"
    conf = conf_for(workdir, db, cycles="1", sizes="1M")
    p = run_wearmond(conf, timeout=120)
    assert p.returncode == 0, p.stderr
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE test_ballast (id INTEGER PRIMARY KEY, x BLOB)")
    c.execute("WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < ?)"
              " INSERT INTO test_ballast (x) SELECT randomblob(1000) FROM n",
              (BALLAST_MIB * 1000,))
    c.commit()
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    assert db.stat().st_size > BALLAST_MIB * 1000 * 1000
    return db, conf_for(workdir, db)  # endless from now on


def middle_leaf(db):
    """A leaf page of test_ballast far from both edges: what the cheap
    check at open does not read."""
    rows = query(db, "SELECT pageno FROM dbstat WHERE name = 'test_ballast'"
                     " AND pagetype = 'leaf' ORDER BY path")
    return rows[len(rows) // 2]["pageno"]


def damage(db, pageno):
    page = query(db, "PRAGMA page_size")[0]["page_size"]
    with open(db, "r+b") as f:
        f.seek((pageno - 1) * page)
        f.write(b"\xa5" * 64)


def io_read(pid, exclude_comm=None):
    """rchar of the process, less that of its threads named exclude_comm."""
    def rchar(path):
        for line in Path(path).read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
        return 0
    total = rchar(f"/proc/{pid}/io")
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if exclude_comm and (task / "comm").read_text().strip() == exclude_comm:
                total -= rchar(task / "io")
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def test_ready_without_reading_the_whole_file(workdir, listener):
    db, conf = history_db(workdir)
    size = db.stat().st_size
    env = {**os.environ, "NOTIFY_SOCKET": listener.path}
    proc = spawn([WEARMOND, "--foreground", "-c", conf], env=env)
    try:
        assert listener.wait_for(lambda a: "READY=1" in a, 60), listener.assignments()
        read = io_read(proc.pid, exclude_comm="wm-integrity")
        # then the background check reads it whole, and says so
        found = wait_for(lambda: query(db, "SELECT message FROM events"
                                           " WHERE kind = 'integrity-check'"), 300)
    finally:
        code, _, err = stop(proc)
    assert found, err
    assert code == 0, err
    assert read < size / 10, (read, size)
    ev = query(db, "SELECT severity, value, message FROM events WHERE kind = 'integrity-check'")
    assert ev[0]["severity"] == "info" and ev[0]["value"] == 0, ev
    assert "integrity check ok" in ev[0]["message"] and str(db) in ev[0]["message"]
    assert "integrity check ok" in err


def test_background_check_finds_damage_and_stops(workdir):
    db, conf = history_db(workdir)
    damage(db, middle_leaf(db))
    proc = start_wearmond(conf)
    try:
        proc.wait(timeout=120)
    finally:
        code, _, err = stop(proc)
    assert code == 1, err
    assert "is damaged" in err and str(db) in err and "stopping" in err, err
    ev = query(db, "SELECT severity, value FROM events WHERE kind = 'integrity-check'")
    assert ev and ev[0]["severity"] == "crit" and ev[0]["value"] >= 1, ev
    assert query(db, "SELECT exit_reason FROM runs ORDER BY id DESC LIMIT 1") == \
        [{"exit_reason": "database damaged"}]


def test_wearmon_check(workdir):
    db, _ = history_db(workdir)
    good = run_wearmon("check", db=db, check=0)
    assert good.stdout == f"database {db}: ok (PRAGMA integrity_check)\n"
    bad = workdir / "copy.db"
    shutil.copy(db, bad)
    damage(bad, middle_leaf(bad))
    p = run_wearmon("check", db=bad, check=3)
    assert p.stderr.startswith(f"wearmon: database {bad} is damaged: "), p.stderr
    assert "PRAGMA integrity_check" in p.stderr
    assert "Page " in p.stderr or "malformed" in p.stderr, p.stderr
    # the original is untouched, and check never writes
    before = db.stat().st_mtime_ns
    run_wearmon("check", db=db, check=0)
    assert db.stat().st_mtime_ns == before
    run_wearmon("check", db=workdir / "none.db", check=1)


def test_extend_timeout_before_a_migration(workdir, listener):
    db = workdir / "old.db"
    sh("sqlite3", db, ".read " + str(REPO / "tests/unit/fixtures/schema-v1.sql"))
    sh("sqlite3", db, "PRAGMA user_version = 1")
    conf = conf_for(workdir, db, cycles="1", sizes="1M")
    env = {**os.environ, "NOTIFY_SOCKET": listener.path}
    proc = spawn([WEARMOND, "--foreground", "-c", conf], env=env)
    try:
        assert listener.wait_for(lambda a: any(x.startswith("EXTEND_TIMEOUT_USEC=") for x in a)
                                 and "READY=1" in a, 60), listener.assignments()
    finally:
        stop(proc)
    a = listener.assignments()
    ext = next(i for i, x in enumerate(a) if x.startswith("EXTEND_TIMEOUT_USEC="))
    assert ext < a.index("READY=1")
    assert int(a[ext].split("=")[1]) >= 60 * 1000000
