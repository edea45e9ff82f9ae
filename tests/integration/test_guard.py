"""What keeps an unattended daemon's history whole: one
daemon per database, one device per target name, the database file watched,
errors that say something, reloads that free what they replace, --check that
knows what cannot run, and no file root runs that others may change. Real
loop devices and regular files, the real sqlite3 CLI."""

import hashlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import time

from conftest import (SLOW, WEARMON, WEARMOND, MiB, query, run_wearmond, spawn, start_wearmond,
                      stop, target_conf, wait_for, watch_exit, write_conf)


QUICK = {
    "sizes": "4M 8M",
    "fill": "no",
    "workload": "randwrite",
    "block_size": "4k",
    "queue_depth": "8",
    "amount": "1x",
    "cycles": "1",
    "sample_interval": "0.1s",
}


def file_conf(db, img, name="f1", size="16M", **over):
    keys = {**SLOW, "file_size": size, **over}
    return target_conf(db, img, keys, name=name)


def running_iteration(db):
    return query(db, "SELECT id FROM iterations WHERE status = 'running'")


def log_count(path, text):
    try:
        return Path_read(path).count(text)
    except FileNotFoundError:
        return 0


def Path_read(path):
    with open(path, errors="replace") as f:
        return f.read()


# ---- 14.3: one daemon per database --------------------------------------


def test_second_daemon_on_same_database_exits_78_naming_the_pid(workdir):
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", file_conf(db, workdir / "t.img"))
    first = start_wearmond(conf)
    try:
        assert wait_for(lambda: running_iteration(db), 30), "first daemon never ran"
        second = run_wearmond(conf, timeout=60)
        assert second.returncode == 78, second.stderr
        assert f"in use by wearmond pid {first.pid}" in second.stderr
        # the first daemon's running iteration was left alone
        time.sleep(0.5)
        rows = query(db, "SELECT count(*) AS n FROM iterations WHERE status = 'interrupted'")
        assert rows[0]["n"] == 0
        assert first.poll() is None
    finally:
        rc, _, err = stop(first)
    assert rc == 0, err
    dup = query(db, """SELECT cycle_id, size_index, count(*) AS n FROM iterations
                       WHERE status = 'done' GROUP BY cycle_id, size_index HAVING n > 1""")
    assert dup == []
    runs = query(db, "SELECT pid FROM runs")
    assert [r["pid"] for r in runs] == [first.pid]


def test_same_name_other_device_second_config_refused(workdir, make_loop):
    """Two configurations on one database, the same target name on two
    devices: the second daemon is refused before it touches anything."""
    a, b = make_loop(32 * MiB), make_loop(32 * MiB)
    db = workdir / "w.db"
    slow = {**SLOW, "allow_destroy": "yes"}
    conf1 = write_conf(workdir / "one.conf", target_conf(db, a.dev, slow))
    conf2 = write_conf(workdir / "two.conf", target_conf(db, b.dev, slow))
    first = start_wearmond(conf1)
    try:
        assert wait_for(lambda: running_iteration(db), 30)
        before = b.checksum()
        second = run_wearmond(conf2, timeout=60)
        assert second.returncode == 78, second.stderr
        assert f"in use by wearmond pid {first.pid}" in second.stderr
        assert b.checksum() == before
        assert first.poll() is None
    finally:
        rc, _, err = stop(first)
    assert rc == 0, err
    assert query(db, "SELECT device FROM targets") == [{"device": a.dev}]


def test_check_reports_block_device_held_by_another_wearmond(workdir, make_loop):
    loop = make_loop(32 * MiB)
    slow = {**SLOW, "allow_destroy": "yes"}
    db1, db2 = workdir / "one.db", workdir / "two.db"
    conf1 = write_conf(workdir / "one.conf", target_conf(db1, loop.dev, slow))
    conf2 = write_conf(workdir / "two.conf", target_conf(db2, loop.dev, slow, name="b"))
    first = start_wearmond(conf1)
    try:
        assert wait_for(lambda: running_iteration(db1), 30)
        p = run_wearmond(conf2, "--check", timeout=60)
        assert p.returncode == 78, p.stdout + p.stderr
        assert f"{loop.dev} is held by another wearmond (pid {first.pid})" in p.stderr
        run = run_wearmond(conf2, timeout=60)        # and a start says the same
        assert run.returncode == 78, run.stderr
        assert f"{loop.dev} is held by another wearmond (pid {first.pid})" in run.stderr
        assert not db2.exists()
    finally:
        rc, _, err = stop(first)
    assert rc == 0, err


def test_two_targets_on_one_device_refused(workdir, make_loop):
    """A loop device and its backing file; two names (a hard link) of one
    sparse file."""
    loop = make_loop(32 * MiB)
    db = workdir / "w.db"
    body = "\n".join(f"{k} = {v}" for k, v in {**QUICK, "allow_destroy": "yes"}.items())

    def two(a, b):
        return write_conf(workdir / "w.conf", f"""[wearmon]
database = {db}

[target a]
device = {a}
{body}

[target b]
device = {b}
{body}
""")

    p = run_wearmond(two(loop.dev, loop.backing), "--check")
    assert p.returncode == 78, p.stdout + p.stderr
    # the backing file of an attached loop device is refused by itself
    assert f"refusing {loop.backing}: it is the backing file of the attached loop device " \
           f"{loop.dev}" in p.stderr, p.stderr
    img = workdir / "t.img"
    with open(img, "wb") as f:
        f.truncate(32 * MiB)
    os.link(img, workdir / "same.img")
    p = run_wearmond(two(img, workdir / "same.img"), "--check")
    assert p.returncode == 78, p.stdout + p.stderr
    assert "target b is on the same device as target a" in p.stderr
    assert not db.exists()


def test_check_reports_device_held_by_another_wearmond(workdir):
    img = workdir / "t.img"
    db1, db2 = workdir / "one.db", workdir / "two.db"
    conf1 = write_conf(workdir / "one.conf", file_conf(db1, img))
    conf2 = write_conf(workdir / "two.conf", file_conf(db2, img, name="other"))
    first = start_wearmond(conf1)
    try:
        assert wait_for(lambda: running_iteration(db1), 30)
        p = run_wearmond(conf2, "--check", timeout=60)
        assert p.returncode == 78, p.stdout + p.stderr
        assert f"held by another wearmond (pid {first.pid})" in p.stderr
        # the same configuration checked while it runs: a notice, not an error
        same = run_wearmond(conf1, "--check", timeout=60)
        assert same.returncode == 0, same.stderr
        assert f"in use by wearmond pid {first.pid}" in same.stderr
    finally:
        rc, _, err = stop(first)
    assert rc == 0, err


# ---- 14.4: the database deleted under the daemon -------------------------


def test_database_deleted_mid_run_is_noticed(workdir):
    dbdir = workdir / "dbdir"
    dbdir.mkdir()
    db = dbdir / "w.db"
    conf = write_conf(workdir / "w.conf", file_conf(db, workdir / "t.img"))
    proc = start_wearmond(conf)
    try:
        assert wait_for(lambda: running_iteration(db), 30)
        subprocess.run(["rm", "-rf", str(dbdir)], check=True)
        err, waited, _ = watch_exit(proc, time.monotonic(), 30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, err
    assert "was deleted while in use" in err
    assert "crit" in err.lower() or "CRIT" in err
    assert waited < 10


def test_database_replaced_mid_run_is_noticed(workdir):
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", file_conf(db, workdir / "t.img"))
    proc = start_wearmond(conf)
    try:
        assert wait_for(lambda: running_iteration(db), 30)
        other = workdir / "other.db"
        sqlite3.connect(other).close()
        os.replace(other, db)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, err
    assert "was replaced by another file" in err


# ---- 14.5: another device under the same target name ---------------------


def test_other_device_refused_then_adopted(workdir, make_loop):
    a, b = make_loop(32 * MiB), make_loop(32 * MiB)
    db = workdir / "w.db"
    keys = {**QUICK, "allow_destroy": "yes"}
    conf = write_conf(workdir / "w.conf", target_conf(db, a.dev, keys))
    assert run_wearmond(conf).returncode == 0

    write_conf(conf, target_conf(db, b.dev, keys))
    chk = run_wearmond(conf, "--check")
    assert chk.returncode == 78, chk.stdout + chk.stderr
    p = run_wearmond(conf)
    assert p.returncode == 78, p.stderr
    for text in ("recorded in", "backing file", str(a.backing), str(b.backing),
                 "new target name", "adopt_new_device = yes"):
        assert text in p.stderr, (text, p.stderr)
    t = query(db, "SELECT backing_file, campaign_first_cycle FROM targets")
    assert t == [{"backing_file": str(a.backing), "campaign_first_cycle": 1}]
    assert query(db, "SELECT count(*) AS n FROM cycles")[0]["n"] == 1
    assert query(db, "SELECT count(*) AS n FROM runs")[0]["n"] == 1   # refused: nothing written

    old_host = query(db, "SELECT host_bytes_total AS n FROM targets")[0]["n"]
    assert old_host > 0
    write_conf(conf, target_conf(db, b.dev, {**keys, "adopt_new_device": "yes"}))
    p = run_wearmond(conf)
    assert p.returncode == 0, p.stderr
    t = query(db, "SELECT backing_file, campaign_first_cycle FROM targets")
    assert t == [{"backing_file": str(b.backing), "campaign_first_cycle": 2}]
    # wear counted afresh on the new device: one cycle's worth, not two
    assert query(db, "SELECT host_bytes_total AS n FROM targets")[0]["n"] == old_host
    ev = query(db, "SELECT severity, message, data FROM events WHERE kind = 'device-replaced'")
    assert len(ev) == 1 and str(a.backing) in ev[0]["message"]
    # both devices by serial and model (a loop device reports neither; the
    # QEMU test, tests/devices, checks drives that do)
    assert "was serial unknown model unknown, now serial unknown model unknown" in \
        ev[0]["message"], ev
    assert json.loads(ev[0]["data"]) == {"old_serial": None, "old_model": None,
                                         "new_serial": None, "new_model": None}
    cycles = query(db, "SELECT number, status FROM cycles ORDER BY number")
    assert cycles == [{"number": 1, "status": "done"}, {"number": 2, "status": "done"}]


# ---- 14.6: errors, leaks, corrupt databases, FIFOs ----------------------


def vm_rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_reloads_free_what_they_replace(workdir):
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", file_conf(db, workdir / "t.img"))
    log = workdir / "err.log"
    with open(log, "w") as errf:
        proc = subprocess.Popen([str(WEARMOND), "--foreground", "-c", str(conf)],
                                stdout=subprocess.DEVNULL, stderr=errf)
    try:
        assert wait_for(lambda: running_iteration(db), 30)
        done = 0
        base = None
        for n in range(1000):
            proc.send_signal(signal.SIGHUP)
            assert wait_for(lambda: log_count(log, "accepted;") > done, 10, step=0.005), \
                f"reload {n + 1} not accepted"
            done = log_count(log, "accepted;")
            if n == 19:
                base = vm_rss_kb(proc.pid)
        end = vm_rss_kb(proc.pid)
        print(f"VmRSS after 20 reloads {base} kB, after {done} reloads {end} kB")
        assert done >= 1000
        assert end - base <= 1024, (base, end)
    finally:
        rc, _, _ = stop(proc)
    assert rc == 0, Path_read(log)[-2000:]


def test_database_disk_full_says_so(workdir):
    """The database's filesystem fills up: a critical db-write-failed alert,
    exit 1, and every message is SQLite's text, not stack bytes."""
    dbdir = workdir / "small"
    dbdir.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(dbdir)],
                   check=True)
    try:
        db = dbdir / "w.db"
        conf = write_conf(workdir / "w.conf", file_conf(
            db, workdir / "t.img", **{**QUICK, "sizes": "1M 2M", "amount": "4x",
                                      "cycles": "0"}))
        p = run_wearmond(conf, timeout=120)
    finally:
        subprocess.run(["umount", str(dbdir)], check=True)
    assert p.returncode == 1, p.stderr
    assert "crit: target f1: db-write-failed" in p.stderr
    assert "database or disk is full" in p.stderr
    # a caller of db_write logs db_write's own message (which write meets
    # the full disk first depends on the timing: any of them will do)
    assert re.search(rf"[a-z][^:\n]*: database {re.escape(str(db))}: "
                     r"[a-z ]+: database or disk is full", p.stderr), p.stderr
    assert all(c.isprintable() or c == "\n" for c in p.stderr), p.stderr


def test_locked_database_is_waited_for_and_nothing_is_lost(workdir):
    """A sqlite3 session keeps a write transaction open for over a minute
    mid-run (longer than the busy timeout and the retries together): the
    daemon waits, says so, and afterwards stores every iteration and cycle
    as if nothing had happened."""
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", file_conf(db, workdir / "t.img", cycles="3"))
    proc = start_wearmond(conf)
    holder = None
    try:
        assert wait_for(lambda: query(db, "SELECT 1 FROM iterations WHERE status = 'done'"),
                        60), "no iteration done"
        holder = sqlite3.connect(db, timeout=30, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        time.sleep(65)
        holder.execute("ROLLBACK")
        holder.close()
        holder = None
        _, err = proc.communicate(timeout=120)
    finally:
        if holder:
            holder.close()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "the database is locked by another program" in err, err
    assert "nothing was lost" in err, err
    rows = query(db, "SELECT c.number AS cycle, i.size_index AS size, i.status AS status "
                     "FROM iterations i JOIN cycles c ON c.id = i.cycle_id ORDER BY i.id")
    assert [(r["cycle"], r["size"], r["status"]) for r in rows] == \
        [(c, s, "done") for c in (1, 2, 3) for s in (0, 1)], rows
    assert all(r["status"] == "done" for r in query(db, "SELECT status FROM cycles")), err


def test_stop_while_the_database_is_locked_ends_in_time(workdir):
    """SIGTERM while a sqlite3 session holds the write lock: the waits end,
    each last write gives up after half a second instead of ten, and the
    daemon is gone well within systemd's TimeoutStopSec (30 s), saying
    which iteration could not be stored. (Whether the wait's warning came
    first depends on how the main thread's progress writes queue up for
    the same lock: the test above checks it.)"""
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", file_conf(db, workdir / "t.img", cycles="3",
                                                    duration="3s"))
    proc = start_wearmond(conf)
    holder = None
    try:
        assert wait_for(lambda: query(db, "SELECT 1 FROM iterations WHERE status = 'done'"),
                        60), "no iteration done"
        # the next iteration's start is recorded: its store is the next write
        assert wait_for(lambda: running_iteration(db), 30), "no iteration running"
        holder = sqlite3.connect(db, timeout=30, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        time.sleep(16)  # its end (3 s), then the 10 s busy timeout: the target waits
        code, waited, err = stop(proc, timeout=25)
    finally:
        if holder:
            holder.execute("ROLLBACK")
            holder.close()
    assert waited < 25, (waited, err)
    assert code == 1, err  # a row was lost, and the log says which
    assert re.search(r"cannot store iteration \d+: Device or resource busy", err), err


def test_corrupt_database_exits_78(workdir):
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", file_conf(db, workdir / "t.img", **QUICK))
    assert run_wearmond(conf).returncode == 0
    root = query(db, "SELECT rootpage FROM sqlite_master WHERE name = 'iterations'")[0]
    page = query(db, "PRAGMA page_size")[0]["page_size"]
    assert root["rootpage"] > 1
    with open(db, "r+b") as f:          # the iterations b-tree page: garbage
        f.seek((root["rootpage"] - 1) * page)
        f.write(b"\xa5" * 64)
    p = run_wearmond(conf)
    assert p.returncode == 78, p.stderr
    # the cheap check at open reads every table's root and edge pages
    assert "is damaged" in p.stderr and "table iterations" in p.stderr


def test_foreign_database_exits_78(workdir):
    db = workdir / "w.db"
    c = sqlite3.connect(db)
    c.execute("PRAGMA application_id = 1234")
    c.execute("PRAGMA user_version = 3")
    c.execute("CREATE TABLE t (x)")
    c.commit()
    c.close()
    conf = write_conf(workdir / "w.conf", file_conf(db, workdir / "t.img", **QUICK))
    p = run_wearmond(conf)
    assert p.returncode == 78, p.stderr
    assert "not a wearmon database (SQLite application_id 1234" in p.stderr


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_foreign_database_without_application_id_left_unchanged(workdir):
    """Another program's SQLite file with no application_id, at user_version
    0, 5 and 14: refused with 78 before anything writes to it (no WAL
    switch, no -wal or -shm file, no migration)."""
    why = {0: "(tables but no schema version)",
           5: "(schema version 5 but no targets table)",
           14: "(SQLite application_id 0 at schema version 14, where wearmon's is 1464814926)"}
    for version, reason in why.items():
        db = workdir / f"contacts{version}.db"
        c = sqlite3.connect(db)
        c.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
        c.execute("INSERT INTO contacts VALUES ('Ada', '555-0100')")
        c.execute(f"PRAGMA user_version = {version}")
        c.commit()
        c.close()
        before = sha256(db)
        conf = write_conf(workdir / "w.conf", file_conf(db, workdir / "t.img", **QUICK))
        for extra in ((), ("--check",)):
            p = run_wearmond(conf, *extra)
            assert p.returncode == 78, (version, extra, p.stderr)
            assert f"{db} is not a wearmon database {reason}; choose another database path" \
                in p.stderr, (version, extra, p.stderr)
            assert "schema update" not in p.stderr and "cannot record" not in p.stderr
            assert sha256(db) == before, (version, extra)
            for suffix in ("-wal", "-shm", "-journal"):
                assert not os.path.exists(f"{db}{suffix}"), (version, extra, suffix)


def test_cli_refuses_a_fifo(workdir):
    fifo = workdir / "fifo.db"
    os.mkfifo(fifo)
    p = subprocess.run([str(WEARMON), "-d", str(fifo), "status"], capture_output=True,
                       text=True, timeout=10)
    assert p.returncode != 0
    assert "not a regular file (a FIFO)" in p.stderr


# ---- 14.7: --check knows what cannot run --------------------------------


def test_check_refuses_a_phase_that_cannot_run(workdir):
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", file_conf(
        db, workdir / "t.img", **{**QUICK, "sizes": "128k", "measure": "randwrite,streaming"}))
    p = run_wearmond(conf, "--check")
    assert p.returncode == 78, p.stdout + p.stderr
    assert "measure: phase streaming cannot run at size 1" in p.stderr
    assert "smaller than the block size 262144" in p.stderr   # workload_check's reason
    assert not db.exists()


# ---- 14.8: trust ----------------------------------------------------------


def test_world_writable_config_refused(workdir):
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", file_conf(db, workdir / "t.img", **QUICK))
    conf.chmod(0o666)
    for extra in ((), ("--check",)):
        p = run_wearmond(conf, *extra)
        assert p.returncode == 78, p.stderr
        assert f"configuration {conf} is writable by others (mode 0666)" in p.stderr
    assert not db.exists()


def test_group_writable_or_foreign_commands_refused(workdir):
    db = workdir / "w.db"
    script = workdir / "alert.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o775)
    conf = write_conf(workdir / "w.conf", file_conf(
        db, workdir / "t.img", **{**QUICK, "alert_command": script}))
    p = run_wearmond(conf, "--check")
    assert p.returncode == 78, p.stderr
    assert f"alert_command: program {script} is writable by its group (mode 0775)" in p.stderr

    script.chmod(0o755)
    os.chown(script, 1, 1)
    p = run_wearmond(conf, "--check")
    assert p.returncode == 78, p.stderr
    assert f"program {script} is owned by uid 1, not root" in p.stderr

    os.chown(script, 0, 0)
    p = run_wearmond(conf, "--check")
    assert p.returncode == 0, p.stderr

    erase = workdir / "erase.sh"
    erase.write_text("#!/bin/sh\nexit 0\n")
    erase.chmod(0o757)
    write_conf(conf, file_conf(db, workdir / "t.img", **{
        **QUICK, "secure_erase": "command", "secure_erase_command": erase}))
    p = run_wearmond(conf, "--check")
    assert p.returncode == 78, p.stderr
    assert (f"secure_erase_command: program {erase} is writable by others (mode 0757)"
            in p.stderr)


# ---- a bounded fault campaign ---------------------------------------------


def test_kill_9_campaign_resumes_to_one_done_row_per_size(workdir):
    """50 random kill -9s across fill, measurement and the TRIM between
    cycles, then resume to completion: every (cycle, size) has exactly one
    'done' row, every cycle is done once, and the file is intact."""
    import random
    rnd = random.Random(14)
    db = workdir / "w.db"
    keys = {**QUICK, "sizes": "1M 2M 4M", "amount": "48x", "cycles": "3", "fill": "yes",
            "fill_block_size": "128k", "queue_depth": "2", "between_cycles": "trim"}
    conf = write_conf(workdir / "w.conf", file_conf(db, workdir / "t.img", **keys))
    kills, finished = 0, False
    for _ in range(50):
        proc = start_wearmond(conf)
        time.sleep(rnd.uniform(0.15, 0.9))
        if proc.poll() is not None:
            _, err = proc.communicate()
            assert proc.returncode == 0, err
            finished = True     # a further start would find the campaign complete
            break
        proc.kill()
        proc.communicate()
        kills += 1
    if not finished:
        p = run_wearmond(conf, timeout=300)
        assert p.returncode == 0, p.stderr
    cut = query(db, "SELECT count(*) AS n FROM iterations WHERE status = 'interrupted'")[0]["n"]
    print(f"{kills} kill -9s before the final run, {cut} iterations cut short")
    assert kills >= 40 and cut >= 10
    cycles = query(db, "SELECT number, status FROM cycles ORDER BY number")
    assert [(c["number"], c["status"]) for c in cycles] == [(1, "done"), (2, "done"),
                                                           (3, "done")]
    rows = query(db, """SELECT c.number AS cycle, i.size_index, count(*) AS n
                        FROM iterations i JOIN cycles c ON c.id = i.cycle_id
                        WHERE i.status = 'done' GROUP BY c.number, i.size_index
                        ORDER BY c.number, i.size_index""")
    assert [(r["cycle"], r["size_index"], r["n"]) for r in rows] == [
        (c, s, 1) for c in (1, 2, 3) for s in (0, 1, 2)]
    assert query(db, "PRAGMA integrity_check") == [{"integrity_check": "ok"}]
    assert query(db, "SELECT count(*) AS n FROM iterations WHERE status = 'running'")[0]["n"] == 0


def test_reload_meets_the_erase_refusals_of_a_start(workdir, make_loop):
    """A reload that turns on an erase of the whole drive for a target on a
    partition is refused, as the same configuration is refused at start:
    the running configuration stays, and nothing is erased."""
    loop = make_loop(64 * MiB)
    subprocess.run(["sfdisk", "-q", loop.dev], input="start=2048, size=65536\n",
                   text=True, check=True, capture_output=True)
    try:
        reload_refused_on_a_partition(workdir, loop.dev + "p1")
    finally:
        # the partitions' nodes outlive the loop device's detaching otherwise
        subprocess.run(["partx", "-d", loop.dev], capture_output=True)


def reload_refused_on_a_partition(workdir, part):
    if not os.path.exists(part):  # sfdisk's re-read may have added it already
        subprocess.run(["partx", "-a", part[:-2]], capture_output=True)
    assert wait_for(lambda: os.path.exists(part), 30), f"{part} did not appear"
    db = workdir / "w.db"
    safe = target_conf(db, part, SLOW, between_cycles="none")
    erasing = target_conf(db, part, SLOW, between_cycles="secure-erase",
                          secure_erase="ata")
    c = write_conf(workdir / "w.conf", erasing)
    p = run_wearmond(c, "--check")
    assert p.returncode == 78, p.stderr
    assert "it is a partition, and secure_erase = ata" in p.stderr
    write_conf(c, safe)
    log = workdir / "daemon.log"
    with open(log, "w") as err:
        proc = spawn([WEARMOND, "--foreground", "-c", c], stdout=subprocess.DEVNULL, stderr=err)
    try:
        assert wait_for(lambda: running_iteration(db), 60)
        write_conf(c, erasing)
        proc.send_signal(signal.SIGHUP)
        assert wait_for(lambda: "refused; keeping the running configuration" in log.read_text(),
                        60), log.read_text()
        text = log.read_text()
        assert "it is a partition, and secure_erase = ata erases the whole drive" in text
        assert "accepted" not in text
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert proc.returncode == 0
