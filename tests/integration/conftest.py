"""Fixtures for wearmon's integration tests: real loop devices on files the
test creates, the real wearmond binary and the real sqlite3 CLI.

Safety: every device a test writes to is a loop device attached here to a
backing file created here, and both are removed in a finally block.

The tests run in parallel (pytest-xdist, tests/README.md): nothing global
may be fixed. Files go under TEST_TMP (workdir), ports are asked of the
kernel (bind to port 0), loop devices come from `losetup -f`, and a name
others could see (a target in filesystem mode, whose mount points are
/run/wearmon-NAME-*; a cgroup; a unit) comes from unique_name(). Marks
(registered below): `slow` leaves a test out of `make check-quick`;
`alone` runs it after the parallel part with nothing beside it (a test
that times the machine). A test using a fixture of its module's scope
runs on one worker with the module's other such tests (xdist_group), so
that the fixture is made once."""

import hashlib
import json
import os
import re
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("WEARMON_BUILD", REPO / "build"))
WEARMOND = BUILD / "wearmond"
WEARMON = BUILD / "wearmon"

MiB = 1 << 20
# Where tests make their files: a disk-backed directory (O_DIRECT works
# there, unlike on some tmpfs), one per `make check` run (tools/run-check.sh
# sets it, to find what a test left behind).
TEST_TMP = os.environ.get("WEARMON_TEST_TMP", "/var/tmp")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: longer than a developer's loop wants; "
                            "left out of make check-quick")
    config.addinivalue_line("markers", "alone: times the machine (a rate against a model "
                            "or another program): run after the parallel part, alone")


# Tests of more than about 8 s (with their share of a module's fixture)
# on the loaded 2-CPU build machine, left out of `make check-quick`: whole
# files, and single tests (every parameter) of other files. A new test
# marks itself (@pytest.mark.slow); this list spares old files an edit.
SLOW_FILES = {"test_bench", "test_cause", "test_device_evidence", "test_figures",
              "test_fio_agree", "test_firstrun", "test_forecast_sim", "test_hir",
              "test_hoststall", "test_killstorm", "test_layers_sql", "test_plot_campaigns",
              "test_plot_multi", "test_pts_report", "test_report", "test_scale",
              "test_scalegen_day", "test_sim_e2e", "test_simssd", "test_wear_sim"}
SLOW_TESTS = {
    "test_campaign": {"test_locked_database_during_action"},
    "test_core": {"test_every_iteration_has_its_wear_row", "test_sigterm_then_restart_resumes"},
    "test_datagen_stream": {"test_stream_compressibility"},
    "test_episodes": {"test_disk_full_failure_records_the_run_end_once_freed"},
    "test_fsmode": {"test_resume_reformats_a_filesystem_it_cannot_use"},
    "test_guard": {"test_locked_database_is_waited_for_and_nothing_is_lost",
                   "test_database_disk_full_says_so",
                   "test_kill_9_campaign_resumes_to_one_done_row_per_size",
                   "test_stop_while_the_database_is_locked_ends_in_time",
                   "test_check_reports_block_device_held_by_another_wearmond"},
    "test_integrity": {"test_ready_without_reading_the_whole_file"},
    "test_prometheus": {"test_prometheus_scrapes_wearmond_through_a_crash",
                        "test_metrics_file_during_and_after_a_run",
                        "test_every_short_measured_phase_shows_its_ratio"},
    "test_pts": {"test_iops_matrix_rounds_to_steady_state",
                 "test_stop_and_restart_runs_the_cycles_tests_again",
                 "test_dirth_sweep_then_histograms_at_chosen_points"},
    "test_quiet": {"test_demo_ends_with_where_everything_is"},
    "test_resume_rows": {"test_kill_in_a_phase_stores_each_row_once",
                         "test_kill_in_the_read_back_on_a_filesystem_made_per_size"},
    "test_samples": {"test_migration_keeps_every_sample_and_resumes_after_kill",
                     "test_old_samples_rolled_up_into_minutes"},
    "test_service": {"test_throttle_crash_and_recovery_in_journal",
                     "test_notify_ready_status_watchdog_stopping"},
    "test_status": {"test_status_counts_the_configuration_and_honours_duration"},
    "test_status_instant": {"test_campaign_eta_after_a_restart_is_the_time_the_rest_takes"},
    "test_stop": {"test_stop_during_format", "test_stop_during_health_snapshot",
                  "test_stop_during_trim_on_a_slow_drive", "test_stop_during_io",
                  "test_stop_during_fitrim", "test_stop_during_host_idle_recovery"},
    "test_wear_mapped": {"test_fill_killed_counts_what_it_completed"},
}


# tryfirst: xdist's worker reads the groups in its own hook of this name,
# registered after this file was loaded (so otherwise called before it).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Marks slow the tests SLOW_FILES and SLOW_TESTS name. A test that
    uses a fixture of its module's (or class's) scope joins that fixture's
    xdist group: with --dist loadgroup one worker makes the fixture once,
    instead of every worker making its own copy."""
    for item in items:
        module = item.nodeid.split("::")[0]
        stem = Path(module).stem
        name = getattr(item, "originalname", item.name)
        if stem in SLOW_FILES or name in SLOW_TESTS.get(stem, ()):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("xdist_group"):
            continue
        defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        shared = sorted(name for name, fds in defs.items()
                        if any(fd.scope != "function" and fd.baseid.startswith(module)
                               for fd in fds))
        if shared:
            item.add_marker(pytest.mark.xdist_group(f"{module}::{shared[0]}"))


def unique_name(prefix="t"):
    """A name no other test running beside this one uses: a target name in
    filesystem mode (the daemon sweeps /run/wearmon-NAME-* of its targets
    at start), a cgroup, a unit."""
    return prefix + uuid.uuid4().hex[:8]


def mounts_of(dev):
    """Mount points of exactly dev in this namespace (/dev/loop1 is not
    /dev/loop12)."""
    with open("/proc/self/mounts") as f:
        return [line.split()[1] for line in f if line.split()[0] == str(dev)]


def sh(*args, check=True, **kw):
    """Run a command, return CompletedProcess with text output."""
    return subprocess.run([str(a) for a in args], check=check, capture_output=True, text=True, **kw)


class Loop:
    """A loop device on a sparse backing file that this test owns."""

    def __init__(self, path, dev):
        self.backing = Path(path)
        self.dev = dev

    def checksum(self):
        h = hashlib.sha256()
        with open(self.backing, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()

    def blocks_bytes(self):
        """Bytes allocated to the backing file (st_blocks)."""
        return os.stat(self.backing).st_blocks * 512


# Every long-running process a test starts through spawn() (wearmond, most
# of all): killed at teardown if the test did not stop it, before its loop
# devices are detached and its directory removed, so a failed test leaves
# nothing running.
_started = []


def spawn(argv, **kw):
    """subprocess.Popen(argv, **kw), killed at the end of the test if still
    running. Defaults: text pipes for stdout and stderr."""
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    kw.setdefault("text", True)
    p = subprocess.Popen([str(a) for a in argv], **kw)
    _started.append(p)
    return p


def reap_started():
    """Kill and wait for whatever spawn() started that still runs."""
    while _started:
        p = _started.pop()
        if p.poll() is None:
            p.kill()
            try:
                p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                pass


@pytest.fixture
def workdir():
    d = tempfile.mkdtemp(prefix="wearmon-test-", dir=TEST_TMP)
    try:
        yield Path(d)
    finally:
        reap_started()
        subprocess.run(["umount", "-R", "-q", d], capture_output=True)
        subprocess.run(["rm", "-rf", "--one-file-system", d])


@pytest.fixture
def make_loop(workdir):
    """make_loop(size_bytes) -> Loop; all detached and deleted at teardown."""
    made = []

    def make(size, name=None):
        path = workdir / (name or f"disk{len(made)}.img")
        with open(path, "wb") as f:
            f.truncate(size)
        dev = sh("losetup", "--show", "-f", path).stdout.strip()
        loop = Loop(path, dev)
        made.append(loop)
        return loop

    try:
        yield make
    finally:
        reap_started()
        for loop in made:
            subprocess.run(["umount", "-q", loop.dev], capture_output=True)
            subprocess.run(["losetup", "-d", loop.dev], capture_output=True)
            try:
                loop.backing.unlink()
            except FileNotFoundError:
                pass


# A slow, endless target on a regular file: 1 s phases on sizes well below
# the file's end, so the daemon stays in its cycles and its own writes never
# move the end of the file.
SLOW = {
    "sizes": "1M 2M",
    "fill": "no",
    "workload": "randwrite",
    "block_size": "4k",
    "queue_depth": "1",
    "amount": "1000x",
    "duration": "1s",
    "cycles": "0",
    "pause": "0.2s",
    "sample_interval": "0.1s",
}


def target_conf(db, dev, defaults, name="lab1", **over):
    """A configuration with one [target name] on dev: defaults, then over."""
    keys = {"device": dev, "allow_destroy": "yes", **defaults}
    keys.update(over)
    body = "\n".join(f"{k} = {v}" for k, v in keys.items())
    return f"[wearmon]\ndatabase = {db}\n\n[target {name}]\n{body}\n"


# The engine a test run's targets use where a test names none
# (ioengine's default, auto, otherwise): WEARMON_TEST_IOENGINE=libaio runs
# the suite on libaio, =io_uring on io_uring, so that each engine passes it.
TEST_IOENGINE = os.environ.get("WEARMON_TEST_IOENGINE", "")


def with_test_ioengine(text, engine=None):
    """text with `ioengine = engine` (TEST_IOENGINE by default) in every
    [target] section that sets no ioengine; text itself without one. The
    line takes the place of the blank line that ends the section, or goes
    at the end of the file, so that the lines a test counts keep their
    numbers; a section followed at once by another (no blank line to take)
    keeps the default engine."""
    engine = TEST_IOENGINE if engine is None else engine
    if not engine:
        return text
    out, section = [], []

    def flush(final):
        if section and re.match(r"\[target\s", section[0].strip()) and not any(
                line.split("=")[0].strip() == "ioengine" for line in section):
            last = max(i for i, line in enumerate(section) if line.strip())
            if final:
                section.insert(last + 1, f"ioengine = {engine}")
            elif last + 1 < len(section):
                section[last + 1] = f"ioengine = {engine}"  # the blank line before the next
        out.extend(section)

    for line in text.split("\n"):
        if line.strip().startswith("["):
            flush(False)
            section = []
        section.append(line)
    flush(True)
    return "\n".join(out)


def write_conf(path, text):
    Path(path).write_text(with_test_ioengine(text))
    return Path(path)


def run_wearmond(conf, *extra, timeout=300, check=False):
    """Run wearmond --foreground to completion."""
    p = subprocess.run([str(WEARMOND), "--foreground", "-c", str(conf), *extra],
                       capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"wearmond exited {p.returncode}:\n{p.stderr}")
    return p


def two_cycle_file_db(d):
    """A finished history in directory d: target f1, a 32 MiB file, two
    sizes, two cycles of half-second phases. Returns the database's path."""
    conf = write_conf(d / "w.conf", f"[wearmon]\ndatabase = {d}/w.db\n\n[target f1]\n"
                      f"device = {d}/f1.img\nfile_size = 32M\nsizes = 50% 100%\nfill = no\n"
                      "duration = 0.5s\ncycles = 2\nsample_interval = 0.25s\n")
    p = run_wearmond(conf, timeout=120)
    assert p.returncode == 0, p.stderr
    return d / "w.db"


def run_wearmon(*args, db=None, check=None, timeout=120):
    """Run the wearmon CLI (with -d db when given) to completion; check: the
    exit status it must have."""
    argv = [str(WEARMON)] + (["-d", str(db)] if db else []) + [str(a) for a in args]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check is not None:
        assert p.returncode == check, f"{argv} exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
    return p


def start_wearmond(conf, *extra):
    return spawn([WEARMOND, "--foreground", "-c", conf, *extra])


def query(db, sql):
    """Rows of a query run by the sqlite3 CLI, as a list of dicts. It waits
    out a lock as any patient reader would (a daemon starting after a kill
    recovers the log it left, and a reader arriving then is told to wait)."""
    p = sh("sqlite3", "-readonly", "-json", "-cmd", ".timeout 30000", db, sql)
    out = p.stdout.strip()
    return json.loads(out) if out else []


def device_free(dev):
    """Whether dev can be opened exclusively (no mount, no holder). After a
    kill -9 of a daemon on io_uring the kernel tears its ring down after
    the process is gone, and holds the target until then: a test that
    restarts at once waits for this first."""
    try:
        os.close(os.open(dev, os.O_RDONLY | os.O_EXCL))
        return True
    except OSError:
        return False


def wait_for(pred, timeout, step=0.1):
    """Poll pred until truthy. A database the daemon is still creating may
    fail to query for a moment: that counts as not yet."""
    def attempt():
        try:
            return pred()
        except (subprocess.CalledProcessError, json.JSONDecodeError):
            return None

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = attempt()
        if v:
            return v
        time.sleep(step)
    return attempt()


def threads_of(pid):
    """Each thread of pid as the kernel sees it: name, state, where it
    waits and its kernel stack (what a stop that has not ended waits on)."""
    out = []
    for task in sorted(Path(f"/proc/{pid}/task").glob("*")):
        def read(name):
            try:
                return (task / name).read_text(errors="replace").strip()
            except OSError:
                return "?"
        state = read("stat").rpartition(")")[2].split()[:1]
        out.append(f"thread {task.name} {read('comm')} state {''.join(state)} wchan "
                   f"{read('wchan')}\n  " + read("stack").replace("\n", "\n  "))
    return "\n".join(out)


def engine_line(stderr, target="lab1"):
    """What wearmond's log says of target's I/O engine: its name, then how
    it runs ("io_uring, registered file, ...")."""
    m = re.search(rf"^wearmond: info: target {target}: I/O engine (.+)$", stderr, re.M)
    assert m, stderr
    return m.group(1)


def watch_exit(proc, t0, timeout):
    """Read proc's stderr until it ends, looking every LOOK_S whether it
    still runs; returns (stderr, alive, gap). alive: the last look, in
    seconds after t0, that found the process running, so it outlived t0 by
    at least that much; gap: the longest time between two looks. A test
    the machine does not schedule looks late: its clock then runs on after
    the process has gone, and only a look that finds it running counts
    against it. A process still seen running past timeout is killed, and
    what its threads waited on is added to stderr."""
    alive, gap, last, err = 0.0, 0.0, t0, None
    while err is None:
        look = time.monotonic()
        gap, last = max(gap, look - last), look
        if proc.returncode is not None or \
                os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            _, err = proc.communicate(timeout=timeout)
            break
        alive = look - t0
        if alive > timeout:
            where = threads_of(proc.pid)
            proc.kill()
            _, err = proc.communicate()
            err += f"\n[test] still there {timeout} s after the signal:\n{where}\n"
            break
        try:
            _, err = proc.communicate(timeout=LOOK_S)
        except subprocess.TimeoutExpired:
            pass
    if gap > 1.0:
        err += (f"\n[test] last seen running {alive:.2f} s after the signal, seen gone "
                f"{time.monotonic() - t0:.2f} s after it; this test went {gap:.2f} s "
                f"without looking (it was not scheduled)\n")
    return err, alive, gap


LOOK_S = 0.02


def stop(proc, sig=signal.SIGTERM, timeout=10):
    """Send sig and wait; returns (returncode, seconds, stderr). seconds is
    how long after the signal the process was last seen running
    (watch_exit): a test that is scheduled late does not lengthen it. A
    process still running after timeout is killed, and what its threads
    waited on then is added to stderr."""
    proc.send_signal(sig)
    err, alive, _ = watch_exit(proc, time.monotonic(), timeout)
    return proc.returncode, alive, err


def _devnull():
    st = os.stat("/dev/null")
    return st.st_mode, st.st_rdev


@pytest.fixture(autouse=True)
def devnull_untouched():
    """Every test leaves /dev/null as it found it: a character device
    anyone can write. (A test that replaced or chmod'ed it would break
    every ordinary user's shell on the machine, and the first run that
    replays the README as one.)"""
    before = _devnull()
    yield
    assert _devnull() == before, f"/dev/null changed: mode {_devnull()[0]:o}, was {before[0]:o}"
