"""Actions that never run twice and restarts that resume only what was
asked: a between-cycles action is recorded as started before it runs and as
ended after it, waits out a locked database, and is not run again after a
kill -9 during it; a target whose campaign is complete stays complete across
restarts until a campaign key changes or --new-campaign asks for a new one,
and a reload's keys become the campaign's.

Safety: the devices are loop devices on backing files created here
(conftest.make_loop); the erase command is a script written here that only
appends a line to a file here (it never touches the device); the I/O engine
is null except where a test checks that a complete target's device is left
alone (then real I/O goes to its own loop device)."""

import os
import re
import signal
import sqlite3
import time

from conftest import (REPO, MiB, query, run_wearmond, start_wearmond, target_conf, wait_for,
                      write_conf)

DEFAULTS = {
    "sizes": "8M",
    "fill": "no",
    "workload": "randwrite",
    "block_size": "4k",
    "queue_depth": "4",
    "amount": "1x",
    "cycles": "2",
    "sample_interval": "0.1s",
    "ioengine": "null",
}

BUSY_TIMEOUT_S = 10   # how long a write of wearmond waits for a lock (db_conn.c)


def erase_script(workdir):
    """A secure_erase_command that appends its device to workdir/ran, then
    waits while workdir/hold exists: the test decides when the action ends.
    It never touches the device."""
    s = workdir / "erase.sh"
    s.write_text(f"""#!/bin/sh
echo "$1" >> {workdir}/ran
echo $$ > {workdir}/erase.pid
while [ -e {workdir}/hold ]; do sleep 0.1; done
exit 0
""")
    s.chmod(0o755)
    return s


def erase_keys(workdir):
    return {"between_cycles": "secure-erase", "secure_erase": "command",
            "secure_erase_command": erase_script(workdir)}


def runs_of_erase(workdir):
    """How many times the erase command ran (one line each)."""
    try:
        return len((workdir / "ran").read_text().splitlines())
    except FileNotFoundError:
        return 0


def release(workdir):
    """End the erase command (an orphan after a kill -9 too) and wait for it."""
    try:
        (workdir / "hold").unlink()
    except FileNotFoundError:
        pass
    try:
        pid = int((workdir / "erase.pid").read_text())
    except (FileNotFoundError, ValueError):
        return
    assert wait_for(lambda: not os.path.exists(f"/proc/{pid}") or
                    open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z", 10)


def conf(workdir, dev, name="w.conf", **over):
    db = workdir / "w.db"
    return write_conf(workdir / name, target_conf(db, dev, DEFAULTS, **over)), db


def cycles_of(db, target="lab1"):
    return query(db, "SELECT c.number, c.status, c.action_outcome, c.action_error,"
                     " c.action_started_at IS NOT NULL AS started,"
                     " c.action_ended_at IS NOT NULL AS ended, c.campaign_first_cycle"
                     " FROM cycles c JOIN targets t ON t.id = c.target_id"
                     f" WHERE t.name = '{target}' ORDER BY c.number")


def last_run(db):
    return query(db, "SELECT exit_status, exit_reason FROM runs ORDER BY id DESC LIMIT 1")[0]


def in_action(db):
    """The action has a start and no end in the database."""
    return query(db, "SELECT count(*) AS n FROM cycles WHERE action_started_at IS NOT NULL"
                     " AND action_ended_at IS NULL")[0]["n"] == 1


def test_locked_database_during_action(workdir, make_loop):
    """Another program holds the write lock when the action ends, for longer
    than the busy timeout: the target waits for it and completes, and each
    action is recorded (and run) once."""
    loop = make_loop(32 * MiB)
    (workdir / "hold").touch()
    c, db = conf(workdir, loop.dev, **erase_keys(workdir))
    proc = start_wearmond(c)
    try:
        assert wait_for(lambda: runs_of_erase(workdir) == 1, 60)
        lock = sqlite3.connect(str(db), timeout=30, isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")
        try:
            release(workdir)            # the action ends while the database is locked
            # its write waits BUSY_TIMEOUT_S, then the daemon says why; on a
            # busy machine noticing the command's end and reopening the
            # device take seconds of their own (a loaded make check once
            # released the lock 3 s after the timeout, before the write)
            time.sleep(BUSY_TIMEOUT_S + 10)
            assert proc.poll() is None, proc.communicate()[1]
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        _, err = proc.communicate(timeout=120)
    finally:
        release(workdir)
    assert proc.returncode == 0, err
    assert "the database is locked by another program" in err
    # the first write after the command is its own end (table commands),
    # then the action's: whichever met the lock says it waited
    assert re.search(r"recording the end of (secure-erase|a command): done after the database "
                     r"was locked", err), err
    assert runs_of_erase(workdir) == 2
    assert [(r["number"], r["status"], r["action_outcome"], r["started"], r["ended"])
            for r in cycles_of(db)] == [(1, "done", "ok", 1, 1), (2, "done", "ok", 1, 1)]
    assert last_run(db) == {"exit_status": 0, "exit_reason": "cycles done"}


def test_kill_during_action_not_run_again(workdir, make_loop):
    """kill -9 while the erase runs: the restart records it interrupted (its
    start stored, no end), does not run it again, and ends with exactly the
    configured cycles."""
    loop = make_loop(32 * MiB)
    (workdir / "hold").touch()
    c, db = conf(workdir, loop.dev, **erase_keys(workdir))
    proc = start_wearmond(c)
    try:
        assert wait_for(lambda: runs_of_erase(workdir) == 1, 60)
        assert wait_for(lambda: in_action(db), 60), cycles_of(db)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        release(workdir)
    assert [(r["number"], r["status"], r["started"], r["ended"]) for r in cycles_of(db)] == \
        [(1, "running", 1, 0)]
    p = run_wearmond(c, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "cycle 1: its between-cycles action was cut short by a crash or kill" in p.stderr
    assert "resuming cycle 1" not in p.stderr
    assert runs_of_erase(workdir) == 2        # cycle 1's once, cycle 2's once
    rows = cycles_of(db)
    assert [(r["number"], r["status"], r["action_outcome"], r["ended"]) for r in rows] == \
        [(1, "done", "interrupted", 0), (2, "done", "ok", 1)]
    assert rows[0]["action_error"].startswith("the daemon stopped during the action"), rows
    assert last_run(db) == {"exit_status": 0, "exit_reason": "cycles done"}
    # and it stays that way
    p = run_wearmond(c, timeout=120)
    assert p.returncode == 0, p.stderr
    assert runs_of_erase(workdir) == 2 and len(cycles_of(db)) == 2


def test_complete_target_left_alone_after_crash(workdir, make_loop):
    """Two targets: a completes its one cycle; the daemon is killed while b
    runs. The restart leaves a alone (no new cycle, not one byte of its
    device written), finishes b, and the run ends `cycles done`, exit 0."""
    a, b = make_loop(32 * MiB), make_loop(32 * MiB)
    (workdir / "hold").touch()
    db = workdir / "w.db"
    keys = erase_keys(workdir)
    c = write_conf(workdir / "w.conf", f"""[wearmon]
database = {db}
allow_destroy = yes
sample_interval = 0.1s
sizes = 8M
fill = no
amount = 1x

[target a]
device = {a.dev}
cycles = 1

[target b]
device = {b.dev}
cycles = 2
ioengine = null
between_cycles = secure-erase
secure_erase = command
secure_erase_command = {keys["secure_erase_command"]}
""")
    proc = start_wearmond(c)
    try:
        assert wait_for(lambda: [r["status"] for r in cycles_of(db, "a")] == ["done"] and
                        runs_of_erase(workdir) == 1, 60), query(db, "SELECT * FROM cycles")
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        release(workdir)
    before = a.checksum()
    p = run_wearmond(c, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "target a: campaign complete (1 cycles), nothing to do" in p.stderr
    assert [(r["number"], r["status"]) for r in cycles_of(db, "a")] == [(1, "done")]
    assert a.checksum() == before
    assert [(r["number"], r["status"]) for r in cycles_of(db, "b")] == [(1, "done"), (2, "done")]
    assert last_run(db) == {"exit_status": 0, "exit_reason": "cycles done"}
    assert query(db, "SELECT name FROM targets WHERE campaign_done_at IS NOT NULL"
                     " ORDER BY name") == [{"name": "a"}, {"name": "b"}]


def test_new_campaign_on_key_change_or_request(workdir, make_loop):
    """A complete campaign stays complete across restarts and changes of
    other keys; a changed campaign key begins a new campaign, raising cycles
    extends the current one, and --new-campaign begins one when asked."""
    loop = make_loop(32 * MiB)
    c, db = conf(workdir, loop.dev, cycles="1")

    def run(conf_path, *extra):
        p = run_wearmond(conf_path, *extra, timeout=120)
        assert p.returncode == 0, p.stderr
        assert last_run(db) == {"exit_status": 0, "exit_reason": "cycles done"}
        return p

    def campaigns():
        return [(r["number"], r["status"], r["campaign_first_cycle"]) for r in cycles_of(db)]

    run(c)
    assert campaigns() == [(1, "done", 1)]
    p = run(c)
    assert "target lab1: campaign complete (1 cycles), nothing to do" in p.stderr
    c2, _ = conf(workdir, loop.dev, name="w2.conf", cycles="1", alert_below="30%", pause="1s",
                 block_size="4096")
    run(c2)
    assert campaigns() == [(1, "done", 1)]
    c3, _ = conf(workdir, loop.dev, name="w3.conf", cycles="1", block_size="8k")
    p = run(c3)
    assert "campaign keys changed (block_size): a new campaign begins at cycle 2" in p.stderr
    assert campaigns() == [(1, "done", 1), (2, "done", 2)]
    c4, _ = conf(workdir, loop.dev, name="w4.conf", cycles="2", block_size="8k")
    run(c4)
    assert campaigns() == [(1, "done", 1), (2, "done", 2), (3, "done", 2)]
    run(c4)
    assert len(campaigns()) == 3
    p = run(c4, "--new-campaign", "lab1")
    assert "target lab1: a new campaign begins at cycle 4 (--new-campaign)" in p.stderr
    assert campaigns()[3:] == [(4, "done", 4), (5, "done", 4)]
    run(c4, "--new-campaign", "all")
    assert campaigns()[5:] == [(6, "done", 6), (7, "done", 6)]
    p = run_wearmond(c4, "--new-campaign", "nosuch")
    assert p.returncode == 2, p.stderr
    assert f"--new-campaign nosuch: {c4} has no [target nosuch]" in p.stderr
    assert len(campaigns()) == 7


def test_reload_keeps_the_campaign(workdir, make_loop):
    """A reload (SIGHUP) that changes a campaign key goes on with the
    campaign under way, and its keys become the campaign's: the restart
    after a stop resumes that campaign instead of beginning another."""
    loop = make_loop(32 * MiB)
    c, db = conf(workdir, loop.dev, cycles="3", pause="3s")
    proc = start_wearmond(c)
    try:
        assert wait_for(lambda: query(db, "SELECT phase FROM progress WHERE phase = 'pause'"),
                        60)
        conf(workdir, loop.dev, cycles="3", pause="3s", block_size="8k")
        proc.send_signal(signal.SIGHUP)
        assert wait_for(lambda: "block_size=8192" in (query(
            db, "SELECT campaign_key FROM targets")[0]["campaign_key"] or ""), 30)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    p = run_wearmond(c, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "campaign keys changed" not in p.stderr
    assert [(r["number"], r["status"], r["campaign_first_cycle"]) for r in cycles_of(db)] == \
        [(1, "done", 1), (2, "done", 1), (3, "done", 1)]
    assert last_run(db) == {"exit_status": 0, "exit_reason": "cycles done"}


def test_config_page_says_what_a_later_start_does():
    """wearmon.conf(5) says what test_new_campaign_on_key_change_or_request
    shows: once its cycles are done a campaign stays complete, and only a
    changed campaign key or --new-campaign begins the next one."""
    page = (REPO / "conf/wearmon.conf.5").read_text()
    entry = page[page.index(".TP\n.B cycles\n"):]
    entry = entry[:entry.index("\n.TP\n", 1)]
    assert "a later start begins a new campaign" not in page
    assert "campaign is complete, and it stays complete" in entry, entry
    assert "new-campaign" in entry and "campaign key changes" in entry, entry
