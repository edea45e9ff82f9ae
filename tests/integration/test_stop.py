"""Clean stops in every phase: SIGTERM while wearmond fills, measures,
pauses, idles, trims, makes a filesystem, runs the erase command or takes a
health snapshot the drive does not answer exits 0 within 1 s, records the cycle (and the iteration) `interrupted` with no
`action-failed` alert, and a restart resumes where it stopped, action
included, to exactly the configured number of cycles. Also: the erase
command is a child under control (empty signal mask, minimal environment,
own process group, killed at command_timeout).

Safety: the devices written are loop devices on backing files created here
(conftest.make_loop) or the simulated SSD's loop device; slow phases come
from a cgroup write throttle created and removed here (service_helper) or
from the simulator's own timings and held answers (fault stats-latency)."""

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

import simssd_helper
from conftest import (WEARMOND, MiB, mounts_of, query, run_wearmond, start_wearmond, stop,
                      target_conf, unique_name, wait_for, watch_exit, write_conf)
from service_helper import Throttle

DEFAULTS = {
    "region_size": "100%",
    "sizes": "8M 16M",
    "fill": "yes",
    "fill_block_size": "64k",
    "fill_queue_depth": "2",
    "workload": "randwrite",
    "block_size": "4k",
    "queue_depth": "4",
    "amount": "1x",
    "cycles": "2",
    "sample_interval": "0.1s",
}

STOP_LIMIT_S = 1.0   # the promise for SIGTERM: daemon/wearmond.8, SIGNALS
# From outside, the test sees the exit later by its own scheduling (on a
# machine shared by many jobs, seconds): a bound for a stop that hangs.
OUTSIDE_LIMIT_S = 10.0
STOPPED = re.compile(r"wearmond stopped \(signal\), exit status \d+, ([0-9.]+) s after the stop "
                     r"signal")
DRAIN = re.compile(r"stop: .*: waited ([0-9.]+) s for the drive to complete")


def in_time(secs, err, drive_s=0.0):
    """Whether a stop kept the promise: by the daemon's own clock, from its
    signal handler to its last word, less what it says it waited for the
    I/Os already in flight (the drive's to finish), under STOP_LIMIT_S;
    and seen from here under OUTSIDE_LIMIT_S, plus drive_s where a request
    already sent to the drive is held that long (the process ends when
    the drive answers it). The daemon's clock does not count how late this
    test is scheduled to see the exit."""
    m = STOPPED.search(err)
    if not m or secs >= OUTSIDE_LIMIT_S + drive_s:
        return False
    drain = max((float(d) for d in DRAIN.findall(err)), default=0.0)
    return float(m.group(1)) - drain < STOP_LIMIT_S


def conf(workdir, dev, name="w.conf", target="lab1", **over):
    db = workdir / "w.db"
    return write_conf(workdir / name, target_conf(db, dev, DEFAULTS, name=target, **over)), db


def phase_is(db, phase):
    rows = query(db, "SELECT phase FROM progress")
    return rows and rows[0]["phase"] == phase


def pgroup_members(pgid):
    """pids of live processes in process group pgid."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(d.name))
    return found


def stop_in_phase(proc, db, phase, timeout=60, sig=signal.SIGTERM):
    """Wait for phase, send sig; returns (exit status, seconds, stderr)."""
    try:
        seen = wait_for(lambda: phase_is(db, phase), timeout)
    except BaseException:
        proc.kill()
        raise
    if not seen:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"never saw phase {phase}: {query(db, 'SELECT * FROM progress')}\n{err}")
    return stop(proc, sig)


def check_stopped(db, rc, secs, err, action=None):
    """The state a clean stop leaves: exit 0 in time, cycle 1 interrupted,
    nothing failed or running, no action-failed alert."""
    print(f"stopped: exit {rc} after {secs:.2f} s")
    assert rc == 0, err
    assert in_time(secs, err), f"stop took {secs:.2f} s\n{err}"
    cycles = query(db, "SELECT number, status, action, action_outcome FROM cycles ORDER BY number")
    assert cycles[-1]["status"] == "interrupted", cycles
    if action:
        assert cycles[-1]["action"] == action and cycles[-1]["action_outcome"] == "interrupted"
    its = query(db, "SELECT status FROM iterations")
    assert all(i["status"] in ("done", "interrupted") for i in its), its
    assert not query(db, "SELECT kind FROM events WHERE kind = 'action-failed'")
    assert "action-failed" not in err


def check_resumed(db, conf_path, nsizes=2, outcome="ok"):
    """A restart completes exactly cycles = 2, one done row per (cycle, size)."""
    p = run_wearmond(conf_path)
    assert p.returncode == 0, p.stderr
    cycles = query(db, "SELECT number, status, action_outcome FROM cycles ORDER BY number")
    assert [(c["number"], c["status"]) for c in cycles] == [(1, "done"), (2, "done")], cycles
    assert all(c["action_outcome"] == outcome for c in cycles), cycles
    done = query(db, "SELECT c.number AS cycle, i.size_index, count(*) AS n FROM iterations i"
                     " JOIN cycles c ON c.id = i.cycle_id WHERE i.status = 'done'"
                     " GROUP BY c.number, i.size_index")
    assert len(done) == 2 * nsizes and all(d["n"] == 1 for d in done), done
    assert not query(db, "SELECT kind FROM events WHERE kind = 'action-failed'")
    return p


def throttled(dev):
    kind, why = Throttle.find()
    if not kind:
        pytest.skip(why)
    return Throttle(dev)


def start_throttled(throttle, conf_path, rate):
    """wearmond started inside the throttled cgroup (sh execs into it)."""
    throttle.limit(rate)
    return subprocess.Popen(throttle.wrap([WEARMOND, "--foreground", "-c", conf_path]),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("phase", ["fill", "measure"])
def test_stop_during_io(workdir, make_loop, phase):
    loop = make_loop(64 * MiB)
    c, db = conf(workdir, loop.dev, between_cycles="trim")
    throttle = throttled(loop.dev)
    proc = None
    try:
        # 8 MiB of fill, then 8 MiB measured, at 1 MiB/s: several seconds each
        proc = start_throttled(throttle, c, 1 * MiB)
        rc, secs, err = stop_in_phase(proc, db, phase)
    finally:
        if proc and proc.poll() is None:
            proc.kill()
            proc.communicate()
        throttle.remove()
    check_stopped(db, rc, secs, err)
    its = query(db, "SELECT number, status, phase, bytes, ops, seconds, fill_bytes"
                    " FROM iterations ORDER BY number")
    assert its[-1]["status"] == "interrupted", its
    if phase == "fill":
        # schema.md: nothing measured is NULL, not 0; the fill keeps what it wrote
        assert (its[-1]["bytes"], its[-1]["ops"], its[-1]["seconds"]) == (None,) * 3, its
        assert its[-1]["fill_bytes"] > 0, its
    check_resumed(db, c)


def test_stop_during_pause(workdir, make_loop):
    loop = make_loop(32 * MiB)
    c, db = conf(workdir, loop.dev, sizes="8M", pause="60s", between_cycles="idle", idle="0s")
    rc, secs, err = stop_in_phase(start_wearmond(c), db, "pause")
    assert rc == 0 and in_time(secs, err), (secs, err)
    # the cycle had ended before the pause: nothing is interrupted
    assert query(db, "SELECT number, status FROM cycles") == [{"number": 1, "status": "done"}]
    c, _ = conf(workdir, loop.dev, sizes="8M", pause="0s", between_cycles="idle", idle="0s")
    check_resumed(db, c, nsizes=1)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stop_during_idle(workdir, make_loop, sig):
    loop = make_loop(32 * MiB)
    c, db = conf(workdir, loop.dev, between_cycles="idle", idle="60s")
    rc, secs, err = stop_in_phase(start_wearmond(c), db, "idle", sig=sig)
    check_stopped(db, rc, secs, err, action="idle")
    # the restart runs the idle of cycle 1 again, then cycle 2
    c, _ = conf(workdir, loop.dev, between_cycles="idle", idle="0.2s")
    p = check_resumed(db, c)
    assert "resuming cycle 1 at its between-cycles action" in p.stderr, p.stderr


def erase_script(workdir, body):
    """An erase command that records its signal mask, process group and
    environment, then runs body."""
    s = workdir / "erase.sh"
    s.write_text(f"""#!/bin/sh
while read k v rest; do [ "$k" = SigBlk: ] && echo "$v" > {workdir}/sigblk; done < /proc/$$/status
cut -d' ' -f5 /proc/$$/stat > {workdir}/pgid.tmp && mv {workdir}/pgid.tmp {workdir}/pgid
echo $$ > {workdir}/pid
env > {workdir}/env
echo "erase: working on $1"
{body}
""")
    s.chmod(0o755)
    return s


def test_stop_during_erase_command(workdir, make_loop):
    loop = make_loop(32 * MiB)
    script = erase_script(workdir, "sleep 600")
    c, db = conf(workdir, loop.dev, between_cycles="secure-erase", secure_erase="command",
                 secure_erase_command=script)
    proc = start_wearmond(c)
    assert wait_for(lambda: (workdir / "pgid").exists(), 60)
    rc, secs, err = stop_in_phase(proc, db, "secure-erase")
    check_stopped(db, rc, secs, err, action="secure-erase")
    pgid = int((workdir / "pgid").read_text())
    assert pgid == int((workdir / "pid").read_text())     # its own process group
    assert not pgroup_members(pgid), "the erase command's process group outlived the stop"
    assert "erase: working on" in err                   # its output went to the log
    # the restart runs the erase of cycle 1 again (now quick), then cycle 2
    erase_script(workdir, "exit 0")
    check_resumed(db, c)


def test_erase_command_signal_mask_and_environment(workdir, make_loop):
    loop = make_loop(32 * MiB)
    script = erase_script(workdir, "exit 0")
    c, db = conf(workdir, loop.dev, sizes="8M", cycles="1", between_cycles="secure-erase",
                 secure_erase="command", secure_erase_command=script)
    env = dict(os.environ, WEARMON_TEST_SECRET="leaked")
    p = subprocess.run([str(WEARMOND), "--foreground", "-c", str(c)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert int((workdir / "sigblk").read_text(), 16) == 0     # nothing blocked
    names = {line.split("=", 1)[0] for line in (workdir / "env").read_text().splitlines()}
    assert "WEARMON_TEST_SECRET" not in names and "PATH" in names
    assert query(db, "SELECT action_outcome FROM cycles") == [{"action_outcome": "ok"}]


def test_hung_erase_command_killed_at_time_limit(workdir, make_loop):
    loop = make_loop(32 * MiB)
    script = erase_script(workdir, "sleep 600")
    c, db = conf(workdir, loop.dev, sizes="8M", cycles="1", between_cycles="secure-erase",
                 secure_erase="command", secure_erase_command=script, command_timeout="1s")
    t0 = time.monotonic()
    p = run_wearmond(c, timeout=120)
    assert p.returncode == 1, p.stderr          # on_action_error = stop
    row = query(db, "SELECT status, action_outcome, action_error, action_seconds FROM cycles")[0]
    assert row["status"] == "failed" and row["action_outcome"] == "failed", row
    assert "timed out" in row["action_error"], row
    assert 1.0 <= row["action_seconds"] < 10, row
    assert not pgroup_members(int((workdir / "pgid").read_text()))
    assert time.monotonic() - t0 < 60


# A slow-erasing simulated drive: trimming written pages erases blocks at
# t_erase each, two channels in parallel: 16 MiB = 128 blocks of 128 KiB,
# about 4 s, so a single discard of the region takes far over 2 s.
SLOW_TRIM_DRIVE = dict(capacity="64M", page="4k", erase_block="128k", spare=7, channels=2,
                       t_prog="100us", t_read="20us", t_erase="60ms", cache="1M")


@simssd_helper.needs_sim
def test_stop_during_trim_on_a_slow_drive(workdir):
    with simssd_helper.sim_drive(**SLOW_TRIM_DRIVE) as d:
        c, db = conf(workdir, d.loop, sizes="16M", region_size="16M", between_cycles="trim",
                     queue_depth="16", fill_queue_depth="8", fill_block_size="128k")
        rc, secs, err = stop_in_phase(start_wearmond(c), db, "trim", timeout=120)
        check_stopped(db, rc, secs, err, action="trim")
        check_resumed(db, c, nsizes=1)


# mkfs.ext4 discards the whole device first: on this drive, with the first
# size written, that erases blocks for several seconds.
SLOW_DISCARD_DRIVE = dict(capacity="64M", page="4k", erase_block="128k", spare=7, channels=2,
                          t_prog="100us", t_read="20us", t_erase="150ms", cache="1M")


@simssd_helper.needs_sim
def test_stop_during_format(workdir):
    with simssd_helper.sim_drive(**SLOW_DISCARD_DRIVE) as d:
        c, db = conf(workdir, d.loop, sizes="8M 16M", filesystem="ext4", format_each_size="yes",
                     queue_depth="16", fill_queue_depth="8", fill_block_size="128k",
                     target=unique_name("fs"))
        proc = start_wearmond(c)
        # The first mkfs, on an empty drive, discards nothing slowly and is
        # over in some 50 ms; the one after a measured size has blocks to
        # erase (the progress row shows each format within 50 ms).
        if not wait_for(lambda: db.exists() and query(db, "SELECT 1 FROM iterations "
                                                          "WHERE status = 'done'"), 120):
            proc.kill()
            pytest.fail(f"no size measured: {proc.communicate()[1]}")
        rc, secs, err = stop_in_phase(proc, db, "format", timeout=120)
        check_stopped(db, rc, secs, err)
        assert "stop requested while making the filesystem" in err, err
        assert mounts_of(d.loop) == []
        check_resumed(db, c, outcome="skipped")


FAST_DRIVE = dict(capacity="64M", page="4k", erase_block="128k", spare=7, channels=4,
                  t_prog="100us", t_read="20us", t_erase="2ms", cache="1M")


@simssd_helper.needs_sim
def test_stop_during_fitrim(workdir):
    with simssd_helper.sim_drive(**FAST_DRIVE) as d:
        c, db = conf(workdir, d.loop, sizes="8M", filesystem="ext4", mkfs_options="-E nodiscard",
                     between_cycles="fitrim", amount="100x", duration="3s",
                     target=unique_name("fs"))
        proc = start_wearmond(c)
        seen = None
        try:
            assert wait_for(lambda: phase_is(db, "measure"), 60)
            # from now on every request to the drive takes 400 ms longer: the
            # discards FITRIM sends make it last several seconds
            d.fault_latency(400, 0)
            seen = wait_for(lambda: phase_is(db, "fitrim"), 60)
        finally:
            if not seen:
                d.clear_faults()
                proc.kill()
        assert seen, proc.communicate()[1]
        proc.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        d.clear_faults()          # in-flight requests keep their delay
        err, secs, _ = watch_exit(proc, t0, 30)
        check_stopped(db, proc.returncode, secs, err, action="fitrim")
        assert mounts_of(d.loop) == []
        check_resumed(db, c, nsizes=1)


STALL_MS = 5000


@simssd_helper.needs_sim
def test_stall_shows_live_and_stops_cleanly(workdir):
    """A drive that stops answering in the middle of a measured phase: its
    requests take 5 s more. While they hang, the engine's waker (a timer per
    I/O thread that interrupts the wait for completions, common/io/engine_wake.c) still
    closes samples, so the live throughput in the progress table falls to 0
    (the fault holds every request until it is cleared, so the drive
    completes nothing for 5 s at a time; without the waker a sample would
    end only with a completion and never be empty); the wake-up signal
    reaches no other part of the daemon, which neither dies of it nor fails,
    and SIGTERM still ends the run cleanly once the hung requests are back."""
    with simssd_helper.sim_drive(**FAST_DRIVE) as d:
        c, db = conf(workdir, d.loop, sizes="8M", fill="no", amount="1000x", duration="60s",
                     cycles="1", sample_interval="0.2s")
        proc = start_wearmond(c)
        try:
            moving = wait_for(lambda: phase_is(db, "measure") and
                              (query(db, "SELECT mibps FROM progress")[0]["mibps"] or 0) > 0, 60)
            assert moving, query(db, "SELECT * FROM progress")
            d.fault_latency(STALL_MS, 0)
            t0 = time.monotonic()
            hung = wait_for(lambda: query(db, "SELECT mibps FROM progress")[0]["mibps"] == 0, 60)
            seen_after = time.monotonic() - t0
            d.clear_faults()  # the requests already hung keep their delay
            assert hung, query(db, "SELECT * FROM progress")
            print(f"live throughput 0 after {seen_after:.2f} s of a {STALL_MS} ms stall")
            assert proc.poll() is None, proc.communicate()[1]
            rc, secs, err = stop(proc, timeout=30)
        finally:
            if proc.poll() is None:
                d.clear_faults()
                proc.kill()
                proc.communicate()
        assert rc == 0, err
        cycles = query(db, "SELECT status FROM cycles")
        assert cycles == [{"status": "interrupted"}], cycles
        # the stall is in the stored samples too, as samples without bytes
        empty = query(db, "SELECT count(*) AS n FROM samples WHERE bytes = 0")[0]["n"]
        assert empty >= 5, empty


# The health snapshot: the simulated drive holds its health answer (the
# stats file the snapshot reads, as a drive slow to answer SMART would) for
# far longer than the stop may take. Each case arms the hold where the next
# snapshot is the one named: before the start (the cycle's first), during
# the measured phase (its last), during the idle action (after the action).
HELD_HEALTH_S = 30


def held_health(db, min_seconds=1.0):
    """The target has been in the health phase for min_seconds: a held
    snapshot (an answered one takes milliseconds)."""
    rows = query(db, "SELECT cycle, phase, phase_seconds FROM progress")
    return rows and rows[0]["phase"] == "health" and rows[0]["cycle"] == 1 and \
        (rows[0]["phase_seconds"] or 0) >= min_seconds


def check_health_rows(db):
    """Every snapshot stored is whole: its source, its JSON, its point."""
    rows = query(db, "SELECT id, source, point, json_valid(data) AS ok,"
                     " json_extract(data, '$.host_bytes_total') AS host FROM health")
    assert rows and all(r["source"] == "simssd" and r["ok"] == 1 and r["point"]
                        and r["host"] is not None for r in rows), rows
    return rows


@simssd_helper.needs_sim
@pytest.mark.parametrize("point, arm_in", [("cycle-start", None), ("cycle-end", "measure"),
                                           ("after-action", "idle")])
def test_stop_during_health_snapshot(workdir, point, arm_in):
    with simssd_helper.sim_drive(**FAST_DRIVE) as d:
        # a measured phase and an idle of seconds: the progress (once a
        # second) shows them before the hold is armed
        c, db = conf(workdir, d.loop, sizes="8M", between_cycles="idle", idle="3s",
                     amount="100x", duration="3s")
        def hold():
            d.fault_stats_latency(HELD_HEALTH_S * 1000, 0)

        if arm_in is None:
            hold()
        proc = start_wearmond(c)
        seen = None
        try:
            if arm_in:
                assert wait_for(lambda: phase_is(db, arm_in), 60), proc
                hold()
            # the iteration's last reading of the drive waits for the held
            # answers too (one a second is read during the phase): up to
            # two holds before the cycle-end snapshot begins
            seen = wait_for(lambda: held_health(db), 3 * HELD_HEALTH_S + 60)
        finally:
            if not seen:
                d.clear_faults()
                proc.kill()
        assert seen, proc.communicate()[1]
        rc, secs, err = stop(proc)
        print(f"stopped in the {point} snapshot: exit {rc} after {secs:.2f} s")
        assert rc == 0, err
        # the held reading ends when the drive answers, and the process with it
        assert in_time(secs, err, HELD_HEALTH_S), f"stop took {secs:.2f} s\n{err}"
        assert f"abandoned the {point} health snapshot" in err, err
        # the held snapshot is absent, every other one whole
        rows = check_health_rows(db) if point != "cycle-start" else \
            query(db, "SELECT * FROM health")
        assert not [r for r in rows if r["point"] == point], rows
        cycles = query(db, "SELECT number, status, action_outcome FROM cycles ORDER BY number")
        assert [cy["number"] for cy in cycles] == [1], cycles
        if point == "after-action":   # the cycle and its action were over
            assert cycles[0]["status"] == "done" and cycles[0]["action_outcome"] == "ok"
        else:                         # the action runs on restart
            assert cycles[0]["status"] == "interrupted" and cycles[0]["action_outcome"] is None
        its = query(db, "SELECT status FROM iterations")
        assert all(i["status"] in ("done", "interrupted") for i in its), its
        assert not query(db, "SELECT kind FROM events WHERE kind = 'action-failed'")
        # the drive answers again: the restart resumes and finishes (a
        # shorter idle; the campaign keys stay, or a new campaign would begin)
        d.clear_faults()
        c, _ = conf(workdir, d.loop, sizes="8M", between_cycles="idle", idle="0.2s",
                    amount="100x", duration="3s")
        check_resumed(db, c, nsizes=1)
        rows = check_health_rows(db)
        assert {r["point"] for r in rows} == {"cycle-start", "cycle-end", "after-action"}, rows


@simssd_helper.needs_sim
def test_simulated_drive_holds_its_health_answer(workdir):
    """What the test above relies on: the drive holds an open of its stats
    file, lets it go when the opener is signalled (FUSE interrupt) or the
    fault is cleared, and answers late otherwise."""
    with simssd_helper.sim_drive(attach_loop=False, capacity="16M") as d:
        def reader():
            return subprocess.Popen(["cat", str(d.stats_path)], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)

        d.fault_stats_latency(HELD_HEALTH_S * 1000, 0)
        r = reader()
        time.sleep(1.0)
        assert r.poll() is None                      # held
        r.send_signal(signal.SIGTERM)
        _, alive, _ = watch_exit(r, time.monotonic(), HELD_HEALTH_S)
        assert alive < 1.0, f"a signalled opener was not let go: running {alive:.2f} s after"
        r = reader()
        time.sleep(0.5)
        assert r.poll() is None
        d.clear_faults()
        out, _ = r.communicate(timeout=5)
        assert "fault_stats_delayed 2\n" in out, out
        d.fault_stats_latency(700, 1)                # one answer, 0.7 s late
        t0 = time.monotonic()
        out, _ = reader().communicate(timeout=5)
        assert 0.7 <= time.monotonic() - t0 < HELD_HEALTH_S and "host_bytes_written" in out
        assert d.stats()["fault_stats_delayed"] == 3   # the count was used up


def test_wake_signal_from_outside_is_harmless(workdir, make_loop):
    """SIGRTMIN+4, the I/O threads' wake-up signal, has its no-op handler
    from start-up, not from the first phase on: sent from outside it neither
    ends nor disturbs the daemon. The null engine starts no waker, so here
    nothing but start-up could have installed the handler."""
    loop = make_loop(32 * MiB)
    c, db = conf(workdir, loop.dev, ioengine="null", pause="60s")
    proc = start_wearmond(c)
    try:
        assert wait_for(lambda: phase_is(db, "pause"), 60), query(db, "SELECT * FROM progress")
        for _ in range(5):
            proc.send_signal(signal.SIGRTMIN + 4)
            time.sleep(0.05)
        time.sleep(0.3)
        assert proc.poll() is None, f"wearmond ended by the wake-up signal: {proc.returncode}"
        assert phase_is(db, "pause")
    finally:
        rc, secs, err = stop(proc)
    assert rc == 0 and in_time(secs, err), (rc, secs, err)


# Host idle recovery on a small simulated drive (as tests/integration/
# test_hir.py has it): a stop in its precondition, in an idle wait and in a
# burst ends within the limit, and the cycle is interrupted.
HIR_DRIVE = dict(capacity="16M", page="4k", erase_block="64k", spare=20, channels=2,
                 t_prog="1ms", t_read="50us", t_erase="2ms", cache="256k", gc_free=1,
                 bg_gc_free=12, bg_gc_idle="50ms")


def hir_stage_is(db, word):
    rows = query(db, "SELECT phase, stage FROM progress")
    return rows and rows[0]["phase"] == "hir" and word in (rows[0]["stage"] or "")


@simssd_helper.needs_sim
@pytest.mark.parametrize("stage", ["precondition", ": idle", ": burst"])
def test_stop_during_host_idle_recovery(workdir, stage):
    with simssd_helper.sim_drive(**HIR_DRIVE) as d:
        c, db = conf(workdir, d.loop, sizes="100%", region_size="100%", fill_block_size="128k",
                     fill_queue_depth="8", queue_depth="8", duration="1s", amount="100x",
                     sample_interval="0.5s", cycles="1", hir="yes", hir_round="1s",
                     max_rounds="5", hir_wait_states="3s", hir_burst="2s",
                     hir_repetitions="3", hir_baseline="1s")
        proc = start_wearmond(c)
        try:
            seen = wait_for(lambda: proc.poll() is not None or hir_stage_is(db, stage), 180)
        finally:
            if not seen or proc.poll() is not None:
                proc.kill()
        assert seen and proc.returncode is None, proc.communicate()[1]
        rc, secs, err = stop(proc)
        print(f"stopped in host idle recovery ({stage}): exit {rc} after {secs:.2f} s")
        assert rc == 0, err
        assert in_time(secs, err), f"stop took {secs:.2f} s\n{err}"
        cycles = query(db, "SELECT status FROM cycles")
        assert cycles == [{"status": "interrupted"}], cycles
