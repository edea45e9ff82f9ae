"""Commands die with the daemon and are never doubled: a kill -9 during a
slow secure_erase_command (outside systemd, nothing else cleans up) and a
restart. The command's leader dies of its parent-death signal at once;
what it started lives on in its process group until the next start ends
that group, before anything else runs; so no two erase commands ever run
at once, also when the command ignores SIGTERM. Every command's start and
end are stored (table commands) and compared here, and the erase script
checks the same thing on its own with a lock it holds while it runs.

Safety: the target is a loop device on a backing file created here
(conftest.make_loop); the erase command is a script written here that
never touches the device."""

import os
import signal
import time

import pytest

from conftest import MiB, query, run_wearmond, start_wearmond, target_conf, wait_for, write_conf


def erase_script(workdir, ignore_term):
    """The first run sleeps 30 s (in a child: what the kill leaves behind)
    and would then say it zeroed the drive; later runs are quick. A run
    that finds the lock of another one held writes to overlap."""
    s = workdir / "erase.sh"
    s.write_text(f"""#!/bin/sh
{"trap '' TERM" if ignore_term else ""}
exec 9>>{workdir}/erase.lock
flock -n 9 || echo "overlap $$" >> {workdir}/overlap
echo "start $$ $1" >> {workdir}/marks
if [ ! -e {workdir}/first ]; then
    : > {workdir}/first
    sleep 30
fi
echo "zeroed $$ $1" >> {workdir}/marks
""")
    s.chmod(0o755)
    return s


def marks(workdir):
    try:
        return [line.split() for line in (workdir / "marks").read_text().splitlines()]
    except FileNotFoundError:
        return []


def alive(pid):
    """Whether pid is a live process (a zombie's files are closed: not)."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def group_members(pgid):
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = open(f"/proc/{d}/stat").read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(d))
    return found


def no_overlap(rows):
    """Every command ended before the next one started (ISO times sort)."""
    rows = sorted(rows, key=lambda r: r["started_at"])
    assert all(r["ended_at"] for r in rows), rows
    for a, b in zip(rows, rows[1:]):
        assert a["ended_at"] <= b["started_at"], ("overlap", a, b)


@pytest.mark.parametrize("ignore_term", [False, True], ids=["plain", "ignores-sigterm"])
def test_kill9_during_a_slow_erase_never_overlaps(workdir, make_loop, ignore_term):
    loop = make_loop(32 * MiB)
    script = erase_script(workdir, ignore_term)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(db, loop.dev, {
        "sizes": "8M", "fill": "no", "workload": "randwrite", "block_size": "4k",
        "queue_depth": "4", "amount": "1000x", "duration": "0.3s", "cycles": "3",
        "sample_interval": "0.1s", "between_cycles": "secure-erase",
        "secure_erase": "command", "secure_erase_command": script}))
    p = start_wearmond(conf)
    try:
        assert wait_for(lambda: marks(workdir), 120), p.stderr.read() if p.poll() else ""
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    leader = int(marks(workdir)[0][1])
    # the leader dies of its parent-death signal; its child (the sleep)
    # is left in its process group, holding the lock
    assert wait_for(lambda: not alive(leader), 30), f"erase leader {leader} outlived the daemon"
    left = group_members(leader)
    assert left, "nothing of the erase command was left to test with"

    out = run_wearmond(conf, timeout=300)
    assert out.returncode == 0, out.stderr
    assert not group_members(leader), "the leftover's process group outlived the restart"
    assert not (workdir / "overlap").exists(), (workdir / "overlap").read_text()
    # the command cut short never got to zero the drive, after the restart or ever
    assert ["zeroed", str(leader), loop.dev] not in marks(workdir), marks(workdir)

    rows = query(db, "SELECT id, run_id, tag, argv, pid, started_at, ended_at, ended_how, status,"
                     " ended_by_run_id FROM commands ORDER BY id")
    erases = [r for r in rows if "secure_erase_command" in r["tag"]]
    no_overlap(rows)
    first = erases[0]
    assert first["pid"] == leader, (leader, erases)
    assert first["run_id"] == 1 and first["ended_by_run_id"] == 2, erases
    assert first["ended_how"] == "ended at start", erases
    assert first["status"] == (signal.SIGKILL if ignore_term else signal.SIGTERM), erases
    assert first["argv"] == f'["{script}","{loop.dev}"]', erases
    # cycle 1's erase was cut by the crash and is not run again; cycles 2
    # and 3 erase once each, after the leftover ended
    assert [(r["run_id"], r["ended_how"], r["status"]) for r in erases[1:]] == \
        [(2, "exited", 0), (2, "exited", 0)], erases
    ev = query(db, "SELECT kind, severity, message, run_id FROM events"
                   " WHERE kind = 'leftover-command'")
    assert len(ev) == 1 and ev[0]["run_id"] == 2, ev
    assert f"pid {leader}" in ev[0]["message"], ev
    assert ("SIGKILL" in ev[0]["message"]) == ignore_term, ev
    assert "was still running, left by an earlier run" in out.stderr, out.stderr
    cycles = query(db, "SELECT number, status, action_outcome FROM cycles ORDER BY number")
    assert [(c["status"], c["action_outcome"]) for c in cycles] == \
        [("done", "interrupted"), ("done", "ok"), ("done", "ok")], cycles


def test_a_command_gone_before_the_restart_is_closed_quietly(workdir, make_loop):
    """A command whose whole group ended with the daemon (the leader killed
    by its parent-death signal, nothing left behind) is closed at the next
    start as gone, with no event and nothing killed."""
    loop = make_loop(32 * MiB)
    s = workdir / "erase.sh"
    s.write_text(f"""#!/bin/sh
echo "start $$" >> {workdir}/marks
if [ ! -e {workdir}/first ]; then : > {workdir}/first; exec sleep 30; fi
""")
    s.chmod(0o755)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(db, loop.dev, {
        "sizes": "8M", "fill": "no", "duration": "0.3s", "cycles": "2",
        "sample_interval": "0.1s", "between_cycles": "secure-erase",
        "secure_erase": "command", "secure_erase_command": s}))
    p = start_wearmond(conf)
    try:
        assert wait_for(lambda: marks(workdir), 120)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    leader = int(marks(workdir)[0][1])
    assert wait_for(lambda: not group_members(leader), 30), group_members(leader)
    out = run_wearmond(conf, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = query(db, "SELECT pid, ended_how, status, ended_by_run_id FROM commands ORDER BY id")
    assert rows[0] == {"pid": leader, "ended_how": "gone at start", "status": None,
                       "ended_by_run_id": 2}, rows
    assert not query(db, "SELECT id FROM events WHERE kind = 'leftover-command'")
    assert "left by an earlier run" not in out.stderr
