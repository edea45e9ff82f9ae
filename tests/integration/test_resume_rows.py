"""A kill -9 during any phase of a size (its fill, its measured phase, its
read-back, the health snapshot after it) and a restart: every row the plan
has is stored `done` exactly once, the rows finished before the kill are
not run again (the resume goes on with the row that was cut), and
cycle_summary counts the planned iterations.

The kill waits on state, never on time: the phase the daemon publishes in
its metrics file (within 50 ms of a phase's start, daemon/wearmond.8) or
the rows in the database. The fill and the read-back use 512-byte blocks
one at a time, so that they last long enough on a loop device for the kill
to land inside them.

Safety: the targets are loop devices on backing files created here
(conftest.make_loop)."""

import re
import signal

import pytest

from conftest import MiB, query, run_wearmond, start_wearmond, target_conf, wait_for, write_conf

BASE = {
    "sizes": "16M 32M",
    "fill": "yes",
    "fill_block_size": "512",
    "fill_queue_depth": "1",
    "workload": "randwrite",
    "block_size": "4k",
    "queue_depth": "4",
    "amount": "1000x",
    "duration": "1s",
    "verify": "crc32c",
    "verify_phase": "yes",
    "cycles": "2",
    "sample_interval": "0.1s",
    "between_cycles": "idle",
    "idle": "0.5s",
}


def conf(workdir, dev, **over):
    db = workdir / "w.db"
    text = target_conf(db, dev, BASE, **over).replace(
        "[wearmon]\n", f"[wearmon]\nmetrics_file = {workdir}/m.prom\n", 1)
    return write_conf(workdir / "w.conf", text), db


def phase_now(workdir):
    """The phase the metrics file says the target is in, or None."""
    try:
        text = (workdir / "m.prom").read_text()
    except FileNotFoundError:
        return None
    m = re.search(r'^wearmon_phase_info\{[^}]*phase="([^"]+)"\} 1$', text, re.M)
    return m.group(1) if m else None


def kill9(p):
    p.send_signal(signal.SIGKILL)
    p.wait()


def rows(db):
    return query(db, "SELECT c.number AS cycle, i.number, i.size_index, i.phase, i.workload,"
                     " i.repeat_index, i.round_index, i.status, i.mibps_avg, i.verify_errors,"
                     " i.mibps_repeat_mean"
                     " FROM iterations i JOIN cycles c ON c.id = i.cycle_id"
                     " ORDER BY c.number, i.number")


def check_once(db, planned_per_size, nsizes=2, cycles=2):
    """Each planned row of each (cycle, size) done exactly once, and the
    views count the plan, not the attempts."""
    done = [r for r in rows(db) if r["status"] == "done"]
    keys = [(r["cycle"], r["size_index"], r["phase"], r["workload"], r["repeat_index"],
             r["round_index"]) for r in done]
    assert len(keys) == len(set(keys)), ("a row stored done twice", rows(db))
    for c in range(1, cycles + 1):
        for s in range(nsizes):
            got = [k[2:] for k in keys if k[0] == c and k[1] == s]
            assert got == planned_per_size, (c, s, got, rows(db))
    summary = query(db, "SELECT cycle, status, iterations, sizes FROM cycle_summary ORDER BY cycle")
    assert [(r["cycle"], r["status"], r["iterations"], r["sizes"]) for r in summary] == \
        [(c, "done", nsizes * len(planned_per_size), nsizes) for c in range(1, cycles + 1)], summary
    assert not [r for r in done if r["phase"] == "verify" and r["verify_errors"]], rows(db)


PLAN = [("measure", "randwrite", 1, None), ("verify", "verify", 1, None)]


@pytest.mark.parametrize("phase", ["fill", "measure", "verify", "health"])
def test_kill_in_a_phase_stores_each_row_once(workdir, make_loop, phase):
    loop = make_loop(64 * MiB)
    c, db = conf(workdir, loop.dev)
    p = start_wearmond(c)
    try:
        if phase == "health":
            # the snapshot after cycle 1's last size: its sizes are done,
            # its action has not begun
            hit = wait_for(lambda: query(db, "SELECT 1 AS x FROM health h JOIN cycles c"
                                             " ON c.id = h.cycle_id WHERE c.number = 1"
                                             " AND h.point = 'cycle-end'"), 120, step=0.01)
        else:
            # the phase in cycle 1's second size, so that a size is done
            # before it: the fill is the start of the measured row
            row = "verify" if phase == "verify" else "measure"
            hit = wait_for(lambda: phase_now(workdir) == phase and query(
                db, "SELECT 1 AS x FROM iterations WHERE size_index = 1 AND status = 'running'"
                    f" AND phase = '{row}'"), 120, step=0.01)
        assert hit, (phase, phase_now(workdir), rows(db))
    finally:
        kill9(p)
    before = [r for r in rows(db) if r["status"] == "done"]
    if phase == "verify":
        # the kill landed after the size's measured row and inside its read-back
        assert before[-1]["phase"] == "measure" and before[-1]["size_index"] == 1, before
    out = run_wearmond(c, timeout=300)
    assert out.returncode == 0, out.stderr
    check_once(db, PLAN)
    if phase == "verify":
        assert "done before the restart, not run again" in out.stderr, out.stderr
        assert "goes on with the row that was cut" in out.stderr, out.stderr
    # the rows done before the kill are the ones kept, unchanged
    after = {(r["cycle"], r["number"]): r for r in rows(db)}
    assert all(after[(r["cycle"], r["number"])] == r for r in before), (before, after)


def test_kill_between_repeats_keeps_the_first_and_their_mean(workdir, make_loop):
    """repeat = 2: a kill in the second run of a phase goes on with that run;
    the mean and stddev the last run stores are over both runs, the one done
    before the restart included."""
    loop = make_loop(64 * MiB)
    c, db = conf(workdir, loop.dev, repeat="2", verify_phase="no", verify="none",
                 fill="no", cycles="1", between_cycles="none", duration="1.5s")
    p = start_wearmond(c)
    try:
        hit = wait_for(lambda: query(db, "SELECT 1 AS x FROM iterations WHERE size_index = 1"
                                         " AND repeat_index = 2 AND status = 'running'"),
                       120, step=0.01)
        assert hit, rows(db)
    finally:
        kill9(p)
    out = run_wearmond(c, timeout=300)
    assert out.returncode == 0, out.stderr
    plan = [("measure", "randwrite", 1, None), ("measure", "randwrite", 2, None)]
    check_once(db, plan, cycles=1)
    done = [r for r in rows(db) if r["status"] == "done" and r["size_index"] == 1]
    mean = (done[0]["mibps_avg"] + done[1]["mibps_avg"]) / 2
    assert done[1]["mibps_repeat_mean"] == pytest.approx(mean, rel=1e-9), done


def test_kill_in_a_steady_state_round_goes_on_with_the_rounds(workdir, make_loop):
    """steady_state = snia: a kill in round 3 goes on with round 3; the
    rounds are numbered on without a gap or a double, and the window the
    last round judges (its steady_mean_mibps) takes in the rounds done
    before the kill."""
    loop = make_loop(64 * MiB)
    c, db = conf(workdir, loop.dev, steady_state="snia", max_rounds="6", verify_phase="no",
                 verify="none", fill="no", sizes="16M", cycles="1", between_cycles="none",
                 duration="0.5s")
    p = start_wearmond(c)
    try:
        hit = wait_for(lambda: query(db, "SELECT 1 AS x FROM iterations WHERE round_index = 3"
                                         " AND status = 'running'"), 120, step=0.01)
        assert hit, rows(db)
    finally:
        kill9(p)
    out = run_wearmond(c, timeout=300)
    assert out.returncode == 0, out.stderr
    done = query(db, "SELECT round_index, mibps_avg, steady_reached, steady_mean_mibps"
                     " FROM iterations WHERE status = 'done' ORDER BY number")
    n = len(done)
    assert 5 <= n <= 6 and [d["round_index"] for d in done] == list(range(1, n + 1)), done
    plan = [("measure", "randwrite", 1, k) for k in range(1, n + 1)]
    check_once(db, plan, nsizes=1, cycles=1)
    assert done[-1]["steady_reached"] is not None, done
    window = [d["mibps_avg"] for d in done[-5:]]
    assert done[-1]["steady_mean_mibps"] == pytest.approx(sum(window) / 5, rel=1e-9), done


def test_kill_in_the_read_back_on_a_filesystem_made_per_size(workdir, make_loop):
    """format_each_size = yes: the read-back cut short goes on on the
    filesystem that holds what the size's measured row wrote, mounted
    again, not made anew (a new one would fail every sector)."""
    loop = make_loop(64 * MiB)
    c, db = conf(workdir, loop.dev, filesystem="ext4", format_each_size="yes",
                 mkfs_options="-E nodiscard,lazy_itable_init=0,lazy_journal_init=0", cycles="1",
                 between_cycles="none")
    p = start_wearmond(c)
    try:
        hit = wait_for(lambda: phase_now(workdir) == "verify" and query(
            db, "SELECT 1 AS x FROM iterations WHERE size_index = 1 AND status = 'running'"
                " AND phase = 'verify'"), 120, step=0.01)
        assert hit, (phase_now(workdir), rows(db))
    finally:
        kill9(p)
    mkfs_before = query(db, "SELECT count(*) AS n FROM commands WHERE tag LIKE '%mkfs%'")[0]["n"]
    out = run_wearmond(c, timeout=300)
    assert out.returncode == 0, out.stderr
    check_once(db, PLAN, cycles=1)
    assert "mounted the ext4 made earlier" in out.stderr, out.stderr
    assert "the cycle goes on within a size" in out.stderr, out.stderr
    # the restart made no filesystem: the read-back read the one it had
    assert query(db, "SELECT count(*) AS n FROM commands WHERE tag LIKE '%mkfs%'")[0]["n"] == \
        mkfs_before
