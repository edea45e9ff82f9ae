"""A storm of kill -9, as a careless operator or a crashing host would
send, then restarts as Restart= would: at the end every target has exactly
its planned cycles, each planned row stored `done` once, each
between-cycles action run at most once, no two of its commands ever at
once (their start and end times stored), the database intact, nothing
mounted and nothing of it running.

One daemon runs three targets at once, so that every kill hits three
modes: raw (a loop device, fill, measure and a crc32c read-back, actions
trim, idle and a slow secure_erase_command), filesystem (ext4 made before
every size, the same rows, actions fitrim and secure erase) and the null
engine (repeats, host idle recovery, actions trim and idle).

The kills are seeded (WEARMON_KILLSTORM_SEED replays one; the seed is
printed and named in every failure) and wait on state, never on time: a
phase the daemon publishes in its metrics file or names in its log (the
least hit of all phases is aimed at next), a number of log lines that say
something was done, or a moment of its start-up; then, at most, a short
random delay, so that the moment is random but what the test waits for is
not. When the campaign runs ahead of the kills still to come, the next
kills fall in start-up, so the storm always has its kills: the number
does not depend on the machine's speed.

Safety: the targets are loop devices on backing files created here
(conftest.make_loop); the erase command is a script written here that
never touches the device."""

import os
import queue
import random
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import MiB, WEARMOND, query, run_wearmond, sh, spawn, target_conf, write_conf

KILLS = int(os.environ.get("WEARMON_KILLSTORM_KILLS", 105))
# a safety net for a daemon that hangs (a bug), far beyond any machine's pace
HANG_S = 1200
# a kill aimed at a phase that does not come (the campaign went past it,
# or it comes later) falls after this many lines saying something was
# done: more while a required phase has no kill yet, few after, so that
# the campaign's work spreads over the kills
AIM_LINES = 24
AIM_LINES_AFTER = 4
AIM_LINES_ACTION = 12  # an action comes once a cycle: worth a longer wait
# units of work (rows and actions) the campaign keeps until the last kill:
# a wait never passes more progress lines than leave this many, and with no
# more room than this the kills fall in start-up, at once, costing nothing
# (a wait for a phase that the busy test process catches late, or not at
# all, lets the campaign run on: beside stress-ng one ran to its end at
# kill 92)
RESERVE = 8
ACTIONS = ["idle", "trim", "fitrim", "secure-erase"]

MEASURE_VERIFY = [("measure", "randwrite", 1, None), ("verify", "verify", 1, None)]
REPEATS = [("measure", "randwrite", 1, None), ("measure", "randwrite", 2, None)]
SIZES = 2

# what each target runs: its keys, its cycles, its actions in turn, the rows of each size
TARGETS = {
    "r": {"cycles": 10, "actions": ["idle", "trim", "secure-erase"], "rows": MEASURE_VERIFY},
    "f": {"cycles": 8, "actions": ["fitrim", "secure-erase", "fitrim"], "rows": MEASURE_VERIFY},
    "n": {"cycles": 8, "actions": ["idle", "trim"], "rows": REPEATS},
}
# the phases aimed at, rarest first (ties go to the earlier)
PHASES = ["idle", "trim", "fitrim", "secure-erase", "hir", "format", "verify", "fill",
          "measure", "health"]
# the ones every storm must have hit; health on a loop device lasts a few
# microseconds, so a kill finds it by chance only (counted, not required)
REQUIRED = [p for p in PHASES if p != "health"]
PROGRESS = re.compile(r"\[done\]|: ok, |: made |host idle recovery: |"
                      r"done before the restart")


def erase_script(workdir):
    """A slow erase: it holds a lock per device while it runs (one found
    held is an overlap, written down), sleeps in a child, and notes its
    start and end."""
    s = workdir / "erase.sh"
    s.write_text(f"""#!/bin/sh
exec 9>>{workdir}/erase-$(basename "$1").lock
flock -n 9 || echo "overlap $$ $1" >> {workdir}/overlap
echo "start $$ $1" >> {workdir}/ran
sleep 0.8
echo "end $$ $1" >> {workdir}/ran
""")
    s.chmod(0o755)
    return s


def sections(names, devs, script):
    common = {"allow_destroy": "yes", "sizes": "8M 16M", "workload": "randwrite",
              "block_size": "4k", "queue_depth": "8", "amount": "1000x", "duration": "0.3s",
              "sample_interval": "0.1s", "idle": "0.5s", "secure_erase": "command",
              "secure_erase_command": script}
    checked = {"fill": "yes", "fill_block_size": "64k", "verify": "crc32c",
               "verify_phase": "yes"}
    keys = {
        "r": {**common, **checked},
        "f": {**common, **checked, "filesystem": "ext4", "format_each_size": "yes",
              "mkfs_options": "-E nodiscard,lazy_itable_init=0,lazy_journal_init=0"},
        "n": {**common, "ioengine": "null", "fill": "no", "repeat": "2", "amount": "1x",
              "hir": "yes", "hir_wait_states": "0.2s 0.4s", "hir_burst": "0.1s",
              "hir_repetitions": "2", "hir_baseline": "0", "hir_round": "0.1s",
              "max_rounds": "5"},
    }
    out = []
    for k, name in names.items():
        body = {"device": devs[k], **keys[k], "cycles": str(TARGETS[k]["cycles"]),
                "between_cycles": " ".join(TARGETS[k]["actions"])}
        out.append(f"[target {name}]\n" + "\n".join(f"{a} = {b}" for a, b in body.items()))
    return "\n\n".join(out) + "\n"


class Daemon:
    """One start: its log read as it comes, its published phases."""

    def __init__(self, conf, metrics):
        self.p = spawn([WEARMOND, "--foreground", "-c", conf], stdout=subprocess.DEVNULL)
        self.metrics = metrics
        self.lines = queue.Queue()
        self.log = []
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stderr:
            self.log.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def phases(self):
        """{target: phase} as the metrics file says now."""
        try:
            text = self.metrics.read_text()
        except FileNotFoundError:
            return {}
        return dict(re.findall(r'^wearmon_phase_info\{target="([^"]+)"[^}]*phase="([^"]+)"\} 1$',
                               text, re.M))

    def kill(self):
        self.p.send_signal(signal.SIGKILL)
        self.p.wait()
        self.t.join()


class Storm:
    def __init__(self, seed, conf, db, metrics, names):
        self.rng = random.Random(seed)
        self.seed, self.conf, self.db, self.metrics, self.names = seed, conf, db, metrics, names
        self.kills, self.starts = 0, 0
        self.hits = {p: 0 for p in PHASES}
        self.missed = {p: 0 for p in PHASES}
        self.plans = {"start-up": 0, "resume": 0, "phase": 0, "progress": 0}
        self.total = sum(t["cycles"] * (SIZES * len(t["rows"]) + 1) for t in TARGETS.values())

    def why(self, d=None):
        tail = "".join(d.log[-30:]) if d else ""
        return f"seed {self.seed}, kill {self.kills}, start {self.starts}\n{tail}"

    def done_units(self):
        """Rows done and actions begun: what the campaign has behind it."""
        try:
            return query(self.db, "SELECT (SELECT count(*) FROM iterations WHERE status = 'done')"
                                  " + (SELECT count(*) FROM cycles WHERE action_started_at"
                                  " IS NOT NULL) AS n")[0]["n"]
        except Exception:  # no database yet
            return 0

    def aim(self):
        """The phase to aim at: the least hit that still comes, rarest first."""
        live = [p for p in PHASES if self.missed[p] < 4 or self.hits[p]]
        return min(live, key=lambda p: (self.hits[p], PHASES.index(p))) if live else None

    def wait(self, d, until, lines_max=None):
        """Read d's log and phases until until(line, phases) holds (True),
        d exits (False) or lines_max progress lines passed (None)."""
        seen = 0
        t0 = time.monotonic()
        while True:
            assert time.monotonic() - t0 < HANG_S, f"hung? {self.why(d)}"
            try:
                line = d.lines.get(timeout=0.005)
            except queue.Empty:
                line = ""
            if line is None:
                d.p.wait()
                return False
            if line and PROGRESS.search(line):
                seen += 1
            if until(line, d.phases()):
                return True
            if lines_max is not None and seen >= lines_max:
                return None

    def one_start(self):
        """Start, pick a moment, kill. Returns False when the daemon ended
        by itself (the campaign complete)."""
        try:  # what the next daemon publishes, nothing of the last one's
            self.metrics.unlink()
        except FileNotFoundError:
            pass
        d = Daemon(self.conf, self.metrics)
        self.starts += 1
        # the campaign's work spread over 90% of the kills: the last ones
        # still find something to cut short. Ahead of that, the kill falls
        # in the phase the start resumes (whatever it is), costing no work.
        done = self.done_units()
        room = self.total - done - RESERVE   # progress lines a wait may pass
        ahead = done / self.total > 0.9 * (self.kills + 1) / KILLS
        plan = self.rng.choices(["start-up", "resume", "phase", "progress"],
                                [0.15, 0.85, 0, 0] if ahead else [0.15, 0.1, 0.45, 0.3])[0]
        if room < 2:
            plan = "start-up"
        self.plans[plan] += 1
        if plan == "start-up":  # spawned, or once it says it started
            got = (room < 2 or self.rng.random() < 0.5
                   or self.wait(d, lambda line, ph: "started:" in line))
        elif plan == "resume":
            got = self.wait(d, lambda line, ph: any(v not in ("start", "health", "pause")
                                                    for v in ph.values()), 1 if ahead else room)
            if got:
                time.sleep(self.rng.uniform(0, 0.1))
        elif plan == "phase":
            want = self.aim()
            begins = f": {want} begins"
            bound = (AIM_LINES if want in REQUIRED and not self.hits[want]
                     else AIM_LINES_ACTION if want in ACTIONS else AIM_LINES_AFTER)
            got = self.wait(d, lambda line, ph: begins in line or want in ph.values(),
                            min(bound, room))
            if got:
                self.hits[want] += 1
            elif got is None:
                self.missed[want] += 1
            if got and self.rng.random() < 0.5:
                time.sleep(self.rng.uniform(0, 0.05))  # inside it, at a random point
        else:
            n = min(self.rng.randint(1, 3), room)
            got = self.wait(d, lambda line, ph: False, n)
            if got is None:
                time.sleep(self.rng.uniform(0, 0.25))
        if got is False:  # it ended by itself
            assert d.p.returncode == 0, f"exit {d.p.returncode}: {self.why(d)}"
            return False
        now = d.phases()
        d.kill()
        self.kills += 1
        for ph in set(now.values()):
            if ph in self.hits and plan != "phase":
                self.hits[ph] += 1  # where a kill not aimed at a phase fell
        return True


def test_kill9_storm_ends_with_each_row_action_and_command_once(workdir, make_loop):
    seed = int(os.environ.get("WEARMON_KILLSTORM_SEED", random.SystemRandom().randrange(1 << 31)))
    print(f"kill storm seed {seed} (WEARMON_KILLSTORM_SEED={seed} replays it), {KILLS} kills")
    t0 = time.monotonic()
    script = erase_script(workdir)
    tag = f"ks{os.getpid() % 100000}"
    names = {k: f"{tag}{k}" for k in TARGETS}
    loops = {k: make_loop(64 * MiB) for k in TARGETS}
    db, metrics = workdir / "w.db", workdir / "m.prom"
    conf = write_conf(workdir / "w.conf", f"[wearmon]\ndatabase = {db}\nmetrics_file = {metrics}\n\n"
                      + sections(names, {k: lp.dev for k, lp in loops.items()}, script))
    storm = Storm(seed, conf, db, metrics, names)
    while storm.kills < KILLS:
        if not storm.one_start():
            pytest.fail(f"the campaign ended before {KILLS} kills: {storm.why()}")
    last = run_wearmond(conf, timeout=HANG_S)
    assert last.returncode == 0, (storm.why(), last.stderr)
    secs = time.monotonic() - t0
    print(f"seed {seed}: {storm.kills} kills in {storm.starts + 1} starts, {secs:.0f} s; "
          f"plans {storm.plans}; kills by phase {storm.hits}")
    assert not [p for p in REQUIRED if not storm.hits[p]], (storm.hits, storm.why())

    run = query(db, "SELECT exit_status, exit_reason FROM runs ORDER BY id DESC LIMIT 1")[0]
    assert run == {"exit_status": 0, "exit_reason": "cycles done"}, storm.why()
    assert query(db, "PRAGMA integrity_check") == [{"integrity_check": "ok"}], storm.why()
    assert not (workdir / "overlap").exists(), ((workdir / "overlap").read_text(), storm.why())
    for k, name in names.items():
        check_target(db, k, name, storm.why())

    # once more: complete campaigns stay complete, nothing touches the devices
    before = {k: lp.checksum() for k, lp in loops.items()}
    p = run_wearmond(conf, timeout=HANG_S)
    assert p.returncode == 0 and "campaign complete" in p.stderr, p.stderr
    assert {k: lp.checksum() for k, lp in loops.items()} == before
    mounts = sh("findmnt", "-rn", "-o", "TARGET,SOURCE").stdout.splitlines()
    left = [m for m in mounts if any(f"wearmon-{n}-" in m for n in names.values()) or
            m.split(" ")[-1] in [lp.dev for lp in loops.values()]]
    assert not left, left
    running = running_commands(db)
    assert not running, running


def check_target(db, k, name, why):
    """The rows, actions and commands of one target after the storm."""
    spec = TARGETS[k]
    tid = query(db, f"SELECT id FROM targets WHERE name = '{name}'")[0]["id"]
    cycles = query(db, "SELECT id, number, status, action, action_outcome, action_started_at,"
                       f" action_ended_at FROM cycles WHERE target_id = {tid} ORDER BY number")
    ctx = (why, name, cycles)
    assert [c["number"] for c in cycles] == list(range(1, spec["cycles"] + 1)), ctx
    assert all(c["status"] == "done" for c in cycles), ctx
    for c in cycles:
        assert c["action"] == spec["actions"][(c["number"] - 1) % len(spec["actions"])], ctx
        assert c["action_started_at"] and c["action_outcome"] in ("ok", "interrupted"), ctx

    rows = query(db, "SELECT c.number AS cycle, i.size_index, i.phase, i.workload,"
                     " i.repeat_index, i.round_index FROM iterations i JOIN cycles c"
                     f" ON c.id = i.cycle_id WHERE i.target_id = {tid} AND i.status = 'done'")
    keys = [(r["cycle"], r["size_index"], r["phase"], r["workload"], r["repeat_index"],
             r["round_index"]) for r in rows]
    assert len(keys) == len(set(keys)), ("a row done twice", why, name, sorted(keys))
    for c in range(1, spec["cycles"] + 1):
        for s in range(SIZES):
            got = sorted((x[2:] for x in keys if x[:2] == (c, s)), key=str)
            assert got == sorted(spec["rows"], key=str), (why, name, c, s, got)
    summary = query(db, f"SELECT cycle, iterations, sizes FROM cycle_summary WHERE target = '{name}'"
                        " ORDER BY cycle")
    assert [(r["iterations"], r["sizes"]) for r in summary] == \
        [(SIZES * len(spec["rows"]), SIZES)] * spec["cycles"], (why, name, summary)
    assert not query(db, f"SELECT id FROM iterations WHERE target_id = {tid}"
                         " AND status = 'done' AND verify_errors > 0"), (why, name)

    if k == "n":  # host idle recovery: each burst once, one steady verdict per cycle
        for c in cycles:
            h = query(db, "SELECT kind, wait_state, repetition, steady FROM hir_bursts"
                          f" WHERE cycle_id = {c['id']}")
            bursts = sorted((r["wait_state"], r["repetition"]) for r in h if r["kind"] == "burst")
            assert bursts == [(1, 1), (1, 2), (2, 1), (2, 2)], (why, name, c, h)
            pre = [r["repetition"] for r in h if r["kind"] == "precondition"]
            assert len(pre) == len(set(pre)), (why, name, c, h)

    cmds = query(db, "SELECT id, tag, argv, started_at, ended_at, ended_how, status FROM commands"
                     f" WHERE target_id = {tid} ORDER BY started_at")
    assert all(x["ended_at"] for x in cmds), (why, name, cmds)
    for a, b in zip(cmds, cmds[1:]):
        assert a["ended_at"] <= b["started_at"], ("two commands at once", why, name, a, b)
    erases = [x for x in cmds if "secure_erase_command" in x["tag"]]
    for c in cycles:  # each erase command falls in its own action's time, one at most
        if c["action"] != "secure-erase":
            continue
        nxt = [d["action_started_at"] for d in cycles if d["number"] == c["number"] + 1]
        mine = [x for x in erases if x["started_at"] >= c["action_started_at"] and
                (not nxt or x["started_at"] < nxt[0])]
        assert len(mine) <= 1, ("an erase run twice", why, name, c, mine)
        if c["action_outcome"] == "ok":
            assert [(x["ended_how"], x["status"]) for x in mine] == [("exited", 0)], \
                (why, name, c, mine)
    # an erase that ran to its end is one the database accounts for: a
    # secure-erase action between cycles or a recorded HIR purge (a purge cut
    # by a kill runs again from its start, like a cut row)
    purges = query(db, "SELECT count(*) AS n FROM hir_purges WHERE method = 'secure-erase'"
                       f" AND target_id = {tid}")[0]["n"]
    whole = [x for x in erases if (x["ended_how"], x["status"]) == ("exited", 0)]
    assert len(whole) <= sum(c["action"] == "secure-erase" for c in cycles) + purges, \
        (why, name, purges, erases)


def running_commands(db):
    """Processes still alive of any recorded command's process group."""
    left = []
    for c in query(db, "SELECT pid FROM commands"):
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                stat = open(f"/proc/{d}/stat").read()
            except OSError:
                continue
            f = stat[stat.rindex(")") + 2:].split()
            if int(f[2]) == c["pid"] and f[0] != "Z":
                left.append((c["pid"], int(d)))
    return left


def lines_for(workdir, dev):
    try:
        return sum(1 for line in (workdir / "ran").read_text().splitlines() if line == dev)
    except FileNotFoundError:
        return 0


def lingering_erase_script(workdir):
    """An erase command that leaves something holding the device exclusively
    for a moment after it exits (as an erase tool's helper, or a child's
    copy of wearmond's own descriptor, may): the holder has the device open
    O_EXCL before the command exits, and lets go 1.5 s later."""
    holder = workdir / "holder.py"
    holder.write_text(
        "import os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_EXCL)\n"
        "open(sys.argv[2], 'w').close()\n"
        "time.sleep(1.5)\n")
    s = workdir / "erase-lingering.sh"
    s.write_text(f"""#!/bin/sh
rm -f {workdir}/held
{sys.executable} {holder} "$1" {workdir}/held </dev/null >/dev/null 2>&1 &
i=0
while [ ! -e {workdir}/held ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
[ -e {workdir}/held ] || exit 3
echo "$1" >> {workdir}/ran
exit 0
""")
    s.chmod(0o755)
    return s


@pytest.mark.parametrize("fsmode", [False, True], ids=["raw", "filesystem"])
def test_device_held_after_the_action_is_waited_for(workdir, make_loop, fsmode):
    """The device still held when the action's command has ended: the
    daemon waits for it (bounded, logged) instead of failing the action and
    the cycle."""
    lp = make_loop(64 * MiB)
    script = lingering_erase_script(workdir)
    extra = {"filesystem": "ext4",
             "mkfs_options": "-E nodiscard,lazy_itable_init=0,lazy_journal_init=0"} if fsmode else {}
    conf = write_conf(workdir / "w.conf", target_conf(workdir / "w.db", lp.dev, {
        "sizes": "8M", "fill": "no", "workload": "randwrite", "block_size": "4k",
        "queue_depth": "4", "amount": "1000x", "duration": "0.2s", "cycles": "2",
        "sample_interval": "0.1s", "between_cycles": "secure-erase",
        "secure_erase": "command", "secure_erase_command": script, **extra}))
    p = run_wearmond(conf, timeout=180)
    assert p.returncode == 0, p.stderr
    rows = query(workdir / "w.db", "SELECT number, status, action_outcome, action_error"
                                   " FROM cycles ORDER BY number")
    assert [(r["status"], r["action_outcome"]) for r in rows] == [("done", "ok")] * 2, rows
    assert lines_for(workdir, lp.dev) == 2
    assert f"opening {lp.dev} again: busy; waiting up to" in p.stderr, p.stderr
    assert f"opening {lp.dev} again: done after waiting" in p.stderr, p.stderr
