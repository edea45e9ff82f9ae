"""The I/O engines end to end: the real wearmond on a real loop device with
each engine (io_uring, with and without SQPOLL, libaio, sync, null), the
same rows and checks from each, ioengine = auto's choice in the log, the
campaign across an engine change, and the shipped unit's system call
filter letting io_uring run. Rows read back with the sqlite3 CLI."""

import os
import re
import shutil
import signal
import subprocess

import pytest

from conftest import (MiB, REPO, WEARMOND, engine_line, query, run_wearmond, spawn, stop,
                      target_conf, wait_for, write_conf)
from service_helper import NotifyListener

QD = 8
DEFAULTS = {
    "sizes": "8M",
    "fill": "yes",  # every sector stamped, so the read-back checks them all
    "workload": "randwrite",
    "block_size": "16k",
    "queue_depth": str(QD),
    "amount": "2x",
    "cycles": "1",
    "sample_interval": "0.2s",
    "verify": "crc32c",
    "verify_phase": "yes",
}


def io_uring_here():
    """Whether this kernel lets a process set up io_uring."""
    try:
        with open("/proc/sys/kernel/io_uring_disabled") as f:
            return f.read().strip() == "0"
    except FileNotFoundError:
        return os.path.exists("/proc/sys/kernel")  # older kernels: no such switch


@pytest.mark.parametrize("engine,sqpoll", [("io_uring", "no"), ("io_uring", "yes"),
                                           ("libaio", "no"), ("sync", "no"), ("null", "no")])
def test_every_engine_measures_and_verifies(workdir, make_loop, engine, sqpoll):
    """Each engine writes the amount, reads it back verified without a bad
    sector, and keeps the queue it can: the queued engines most of the
    queue depth (their I/Os count as in flight until reaped, whatever the
    machine's speed), sync at most one. The start line names the engine."""
    if engine == "io_uring" and not io_uring_here():
        pytest.skip("io_uring disabled on this machine")
    loop = make_loop(16 * MiB)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(db, loop.dev, DEFAULTS, ioengine=engine,
                                                      io_uring_sqpoll=sqpoll))
    p = run_wearmond(conf, timeout=300)
    assert p.returncode == 0, p.stderr
    line = engine_line(p.stderr)
    assert line.startswith(engine), line
    if engine == "io_uring":
        assert line == f"io_uring, registered file, registered buffers, SQPOLL " \
                       f"{'on' if sqpoll == 'yes' else 'off'}", line
    rows = query(db, "SELECT phase, status, bytes, mean_depth, verify_errors FROM iterations"
                     " ORDER BY id")
    assert [r["phase"] for r in rows] == ["measure", "verify"], rows
    for r in rows:
        assert r["status"] == "done", r
        assert r["verify_errors"] in (0, None), r
    assert rows[0]["bytes"] == 16 * MiB
    depth = rows[0]["mean_depth"]
    if engine == "sync":
        assert 0 < depth <= 1.0 + 1e-9, rows
    elif engine != "null":
        assert 0.5 * QD <= depth <= QD * (1 + 1e-9), rows
    events = query(db, "SELECT kind FROM events WHERE kind = 'null-engine'")
    assert bool(events) == (engine == "null"), events


def test_auto_takes_io_uring_and_says_why(workdir, make_loop):
    """ioengine = auto (the default, here said explicitly so a test run's
    own engine does not replace it) runs io_uring where the kernel allows
    it and says so in one line at start."""
    if not io_uring_here():
        pytest.skip("io_uring disabled on this machine")
    loop = make_loop(16 * MiB)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(db, loop.dev, DEFAULTS, ioengine="auto"))
    p = run_wearmond(conf, timeout=300)
    assert p.returncode == 0, p.stderr
    assert engine_line(p.stderr) == ("io_uring, registered file, registered buffers, "
                                     "SQPOLL off (ioengine = auto: io_uring_setup works here)")
    assert len(re.findall(r"I/O engine", p.stderr)) == 1, p.stderr


def test_engine_change_keeps_or_starts_a_campaign(workdir, make_loop):
    """The queued engines send the drive the same I/Os: moving a target from
    libaio to io_uring (or to the default auto) continues its campaign;
    moving it to sync, one I/O at a time, starts a new one."""
    loop = make_loop(16 * MiB)
    db = workdir / "w.db"
    # engine, cycles (of the campaign), the campaign's first cycle after it
    steps = [("libaio", 1, 1), ("io_uring", 2, 1), ("auto", 3, 1), ("sync", 1, 4)]
    for engine, n, first in steps:
        conf = write_conf(workdir / "w.conf", target_conf(db, loop.dev, DEFAULTS,
                                                          ioengine=engine, cycles=str(n)))
        p = run_wearmond(conf, timeout=300)
        assert p.returncode == 0, p.stderr
        t = query(db, "SELECT campaign_first_cycle, campaign_key FROM targets")[0]
        assert t["campaign_first_cycle"] == first, (engine, t, p.stderr)
        assert "\nioengine=" + ("sync" if engine == "sync" else "libaio") + "\n" in \
            "\n" + t["campaign_key"], t
    cycles = query(db, "SELECT number, status FROM cycles ORDER BY number")
    assert [c["status"] for c in cycles] == ["done"] * 4, cycles


@pytest.fixture
def listener(workdir):
    n = NotifyListener(workdir)
    try:
        yield n
    finally:
        n.close()


def test_reload_keeps_the_engine_and_its_sqpoll(workdir, make_loop, listener):
    """The engines are made at start: a reload that changes ioengine or
    io_uring_sqpoll is refused, naming the key's line and the value the
    target runs with, and the running configuration stays."""
    loop = make_loop(16 * MiB)
    db = workdir / "w.db"
    path = workdir / "w.conf"
    good = target_conf(db, loop.dev, DEFAULTS, ioengine="io_uring", cycles="0",
                       verify="none", verify_phase="no", fill="no", pause="0.2s")
    write_conf(path, good)
    proc = spawn([WEARMOND, "--foreground", "-c", path],
                 env=dict(os.environ, NOTIFY_SOCKET=listener.path))
    try:
        assert listener.wait_for(lambda a: "READY=1" in a, 30)
        write_conf(path, good + "io_uring_sqpoll = yes\n")
        proc.send_signal(signal.SIGHUP)
        assert listener.wait_for(lambda a: a.count("READY=1") >= 2, 30)
        write_conf(path, good.replace("ioengine = io_uring", "ioengine = libaio"))
        proc.send_signal(signal.SIGHUP)
        assert listener.wait_for(lambda a: a.count("READY=1") >= 3, 30)
        assert wait_for(lambda: query(db, "SELECT 1 FROM iterations WHERE status = 'done'"), 60)
        rc, _, err = stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert rc == 0, err
    lines = good.splitlines()
    sqpoll_line = len(lines) + 1
    engine_line_no = 1 + next(i for i, x in enumerate(lines) if x.startswith("ioengine"))
    assert (f"{path}:{sqpoll_line}: io_uring_sqpoll: target lab1 runs with it off; changing "
            "it needs a restart") in err, err
    assert (f"{path}:{engine_line_no}: ioengine: target lab1 runs with ioengine = io_uring; "
            "changing it to libaio needs a restart") in err, err
    assert err.count("refused; keeping the running configuration") == 2, err
    assert len(re.findall(r"I/O engine io_uring, .*SQPOLL off", err)) == 1, err


def syscalls_of(group, seen=None):
    """The system calls a systemd syscall group (or a single call) names,
    groups inside it expanded, as the installed systemd defines them."""
    seen = set() if seen is None else seen
    if not group.startswith("@"):
        return {group}
    if group in seen:
        return set()
    seen.add(group)
    p = subprocess.run(["systemd-analyze", "syscall-filter", group], capture_output=True,
                       text=True, check=True)
    out = set()
    for line in p.stdout.splitlines()[1:]:
        word = line.strip()
        if word and not word.startswith("#"):
            out |= syscalls_of(word, seen)
    return out


def test_unit_filter_lets_io_uring_run():
    """The shipped unit's SystemCallFilter= lines, expanded by the installed
    systemd, allow io_uring's three calls and libaio's: ioengine = auto
    takes io_uring under the unit as outside it."""
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze missing")
    allowed, denied = set(), set()
    for line in (REPO / "systemd/wearmon.service").read_text().splitlines():
        if not line.startswith("SystemCallFilter="):
            continue
        value = line.split("=", 1)[1]
        deny = value.startswith("~")
        for g in value.lstrip("~").split():
            (denied if deny else allowed).update(syscalls_of(g))
    for call in ("io_uring_setup", "io_uring_enter", "io_uring_register", "io_setup",
                 "io_submit", "io_getevents", "pwrite64", "pread64"):
        assert call in allowed and call not in denied, call
