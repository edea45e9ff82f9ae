"""wearmond as a systemd service: the notify protocol on a socket the test
binds, alerts in a real (private) systemd-journald and in the events table
while the test throttles a loop device, SIGHUP reloads, alert_command, and
the unit file and journal catalog checked with systemd's own tools.

Safety: the only devices written are loop devices on backing files this
file creates (in /dev/shm for stable throughput, or via conftest.make_loop);
journald runs in a private mount namespace (service_helper.PrivateJournald)
and the throttle lives in a cgroup created and removed here."""

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import (REPO, TEST_IOENGINE, WEARMOND, MiB, query, spawn, stop, wait_for,
                      write_conf)
from service_helper import NotifyListener, PrivateJournald, Throttle

CATALOG = REPO / "systemd/wearmon.catalog"
UNIT = REPO / "systemd/wearmon.service"


def message_ids():
    """kind -> MESSAGE_ID, from the table in daemon/alert.c."""
    src = (REPO / "daemon/alert.c").read_text()
    return dict(re.findall(r'\{ "([a-z-]+)", "([0-9a-f]{32})" \}', src))


IDS = message_ids()


def conf_text(db, dev, **over):
    keys = {
        "device": dev,
        "allow_destroy": "yes",
        "sizes": "16M 32M",
        "fill": "no",
        "workload": "seqwrite",
        "block_size": "1M",
        "queue_depth": "4",
        "amount": "1000x",
        "duration": "1s",
        "sample_interval": "0.25s",
        "cycles": "2",
    }
    keys.update(over)
    body = "\n".join(f"{k} = {v}" for k, v in keys.items())
    return f"[wearmon]\ndatabase = {db}\n\n[target lab1]\n{body}\n"


def poll(db, sql):
    """Rows of sql, or [] while the database is missing or not yet migrated
    (the file appears a moment before its tables)."""
    try:
        return query(db, sql) if Path(db).exists() else []
    except subprocess.CalledProcessError:
        return []


def line_of(text, key):
    """Line number of the first "key = ..." line of text."""
    for n, line in enumerate(text.splitlines(), 1):
        if line.split("=", 1)[0].strip() == key:
            return n
    raise KeyError(key)


@pytest.fixture
def listener(workdir):
    n = NotifyListener(workdir)
    try:
        yield n
    finally:
        n.close()


@pytest.fixture
def shm_loop():
    """A loop device on a /dev/shm file (steady throughput); removed after."""
    made = []

    def make(size):
        path = Path(f"/dev/shm/wearmon-test-{os.getpid()}-{len(made)}.img")
        with open(path, "wb") as f:
            f.truncate(size)
        made.append([path, None])
        made[-1][1] = subprocess.run(["losetup", "--show", "-f", str(path)], check=True,
                                     capture_output=True, text=True).stdout.strip()
        return made[-1][1]

    try:
        yield make
    finally:
        for path, dev in made:
            if dev:
                subprocess.run(["losetup", "-d", dev], capture_output=True)
            path.unlink(missing_ok=True)


def start(argv, env=None):
    return spawn(argv, env=env)


def notify_env(listener, **extra):
    env = dict(os.environ, NOTIFY_SOCKET=listener.path)
    env.update(extra)
    return env


# ---- (1) the notify protocol ----------------------------------------------

def test_notify_ready_status_watchdog_stopping(workdir, make_loop, listener):
    loop = make_loop(64 * MiB)
    db = workdir / "w.db"
    # phases of 3 s: each publishes its rate (once a second) in a STATUS
    # however loaded the machine (1.2 s phases sometimes published none)
    conf = write_conf(workdir / "w.conf", conf_text(db, loop.dev, duration="3s"))
    proc = start([WEARMOND, "--foreground", "-c", conf],
                 env=notify_env(listener, WATCHDOG_USEC="1000000"))
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    lines = listener.assignments()
    names = [line.split("=", 1)[0] for line in lines]
    assert names.count("READY") == 1, lines
    assert names.count("STOPPING") == 1, lines
    assert names.index("READY") < names.index("STOPPING")
    # READY only once the database exists and the target is open
    ready_at = names.index("READY")
    assert "STATUS=checking targets" in lines[:ready_at]
    # WATCHDOG=1 every half WATCHDOG_USEC (0.5 s) over a run of 12 s or more
    assert lines.count("WATCHDOG=1") >= 6, lines
    status = [line[len("STATUS="):] for line in lines if line.startswith("STATUS=")]
    progress = r"lab1: cycle (\d+) size (\d)/2 \((16|32)\.00 MiB\) measure \d+\.\d MiB/s"
    assert any(re.fullmatch(progress, s) for s in status), status
    # cycle 2 has a baseline from cycle 1: the ratio shows
    assert any(re.fullmatch(progress + r" \d+% of baseline", s) and s.startswith("lab1: cycle 2")
               for s in status), status
    # the last words: done and stopping
    assert names[-1] == "STOPPING" or "STOPPING=1" in lines[-3:], lines[-5:]


def test_notify_config_error_never_ready(workdir, make_loop, listener):
    loop = make_loop(32 * MiB)
    conf = write_conf(workdir / "w.conf", conf_text(workdir / "w.db", loop.dev, sizes="1G"))
    proc = start([WEARMOND, "--foreground", "-c", conf], env=notify_env(listener))
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 78, err
    # The datagrams were sent before the exit; the listener's thread may
    # read the last one a moment after communicate() returns.
    assert listener.wait_for(lambda a: "STATUS=configuration error" in a, 30), \
        listener.assignments()
    assert "READY=1" not in listener.assignments()


# ---- (3) SIGHUP reloads -----------------------------------------------------

def block_sizes_by_cycle(db):
    rows = query(db, "SELECT c.number AS cycle, group_concat(DISTINCT i.block_size) AS bs"
                     " FROM iterations i JOIN cycles c ON c.id = i.cycle_id"
                     " WHERE i.status = 'done' GROUP BY c.number ORDER BY c.number")
    return [(r["cycle"], str(r["bs"])) for r in rows]


def test_sighup_bad_config_kept_good_config_next_cycle(workdir, make_loop, listener):
    loop = make_loop(64 * MiB)
    db = workdir / "w.db"
    path = workdir / "w.conf"
    good = conf_text(db, loop.dev, workload="randwrite", block_size="4k", queue_depth="8",
                     amount="1x", duration="0", sizes="8M 16M", cycles="0", pause="0.3s")
    write_conf(path, good)
    proc = start([WEARMOND, "--foreground", "-c", path], env=notify_env(listener))
    try:
        assert wait_for(lambda: poll(
            db, "SELECT 1 FROM cycles WHERE status = 'done'"), 30)
        # 1. a syntax error and an unknown key: refused, the old one runs on
        write_conf(path, good.replace("queue_depth = 8", "queue_depth = 0") + "speed = max\n")
        proc.send_signal(signal.SIGHUP)
        assert listener.wait_for(lambda a: a.count("READY=1") >= 2, 60)
        # 2. parses, but sizes no longer fit the open device: refused as well
        write_conf(path, good.replace("sizes = 8M 16M", "sizes = 8M 128M"))
        proc.send_signal(signal.SIGHUP)
        assert listener.wait_for(lambda a: a.count("READY=1") >= 3, 60)
        # 3. a device change needs a restart: refused
        write_conf(path, good.replace(f"device = {loop.dev}", "device = /dev/null"))
        proc.send_signal(signal.SIGHUP)
        assert listener.wait_for(lambda a: a.count("READY=1") >= 4, 60)
        # 3b. a deeper queue than the engines were sized for at start: refused
        write_conf(path, good.replace("queue_depth = 8", "queue_depth = 64"))
        proc.send_signal(signal.SIGHUP)
        assert listener.wait_for(lambda a: a.count("READY=1") >= 5, 60)
        # 3c. another I/O engine than the one made at start: refused
        write_conf(path, good + "ioengine = null\n")
        proc.send_signal(signal.SIGHUP)
        assert listener.wait_for(lambda a: a.count("READY=1") >= 6, 60)
        time.sleep(1.0)
        assert proc.poll() is None
        assert all(bs == "4096" for _, bs in block_sizes_by_cycle(db))
        # 4. a good change: applied from the next cycle, never inside one
        n_before = len(block_sizes_by_cycle(db))
        write_conf(path, good.replace("block_size = 4k", "block_size = 64k")
                   + "\n[target lab2]\ndevice = /dev/null\n")
        proc.send_signal(signal.SIGHUP)
        assert wait_for(lambda: "65536" in dict(block_sizes_by_cycle(db)).values(), 30)
        rc, waited, err = stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert rc == 0, err
    lines = listener.assignments()
    assert lines.count("RELOADING=1") == 6, lines
    assert "STOPPING=1" in lines
    reload_usec = [line for line in lines if line.startswith("MONOTONIC_USEC=")]
    assert len(reload_usec) == 6
    by_cycle = block_sizes_by_cycle(db)
    assert all(bs in ("4096", "65536") for _, bs in by_cycle), by_cycle   # never mixed
    first_new = min(c for c, bs in by_cycle if bs == "65536")
    assert first_new >= n_before
    assert all(bs == "65536" for c, bs in by_cycle if c >= first_new)
    # the errors name file:line and key, at LOG_ERR
    bad = good + "speed = max\n"
    assert (f"wearmond: err: {path}:{line_of(good, 'queue_depth')}: queue_depth: \"0\" is out "
            "of range 1..1024") in err
    assert f"{path}:{line_of(bad, 'speed')}: speed: unknown key" in err
    assert (f"{path}:{line_of(good, 'sizes')}: sizes: size 134217728 bytes (128.00 MiB) is "
            "larger than the region") in err
    assert f"{path}:{line_of(good, 'device')}: device: target lab1 runs on {loop.dev}" in err
    header = good.splitlines().index("[target lab1]") + 1
    assert (f"{path}:{header}: queue_depth: target lab1: a queue "
            "depth, block size or jobs above what this process allocated at start") in err
    # the engine as configured: the default, or the one this test run names
    assert (f"{path}:{line_of(good + 'ioengine = null', 'ioengine')}: ioengine: target lab1 "
            f"runs with ioengine = {TEST_IOENGINE or 'auto'}; changing it to null needs a "
            "restart") in err
    assert err.count("refused; keeping the running configuration") == 5
    assert "reload: target lab2 is new; it starts at the next restart" in err
    assert "reloaded configuration in effect" in err


# ---- (5) alert_command ------------------------------------------------------

ALERT_SCRIPT = """#!/bin/sh
# records the WEARMON_* environment of each call, one file per call
n=$(ls {out} | wc -l)
env | grep '^WEARMON_' | sort > {out}/$n.env.tmp
echo "ARGS=$*" >> {out}/$n.env.tmp
mv {out}/$n.env.tmp {out}/$n.env
"""


def write_alert_script(workdir):
    out = workdir / "alerts"
    out.mkdir()
    script = workdir / "alert.sh"
    script.write_text(ALERT_SCRIPT.format(out=out))
    script.chmod(0o755)
    return script, out


def read_alerts(out):
    calls = []
    for f in sorted(out.glob("*.env"), key=lambda p: int(p.name.split(".")[0])):
        calls.append(dict(line.split("=", 1) for line in f.read_text().splitlines()))
    return calls


def test_alert_command_gets_environment(workdir, make_loop):
    """An I/O error (the test makes its own loop device read-only under the
    running target) raises io-error; the command sees WEARMON_*."""
    loop = make_loop(64 * MiB)
    db = workdir / "w.db"
    script, out = write_alert_script(workdir)
    conf = write_conf(workdir / "w.conf", conf_text(
        db, loop.dev, cycles="0", duration="0.5s", alert_command=script))
    proc = start([WEARMOND, "--foreground", "-c", conf])
    try:
        assert wait_for(lambda: poll(
            db, "SELECT 1 FROM iterations WHERE status = 'done'"), 30)
        subprocess.run(["blockdev", "--setro", loop.dev], check=True)
        _, err = proc.communicate(timeout=30)
    finally:
        subprocess.run(["blockdev", "--setrw", loop.dev])
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, err
    assert wait_for(lambda: read_alerts(out), 60)
    calls = read_alerts(out)
    io = [c for c in calls if c["WEARMON_KIND"] == "io-error"]
    assert len(io) == 1, calls
    c = io[0]
    assert c["WEARMON_TARGET"] == "lab1"
    assert c["WEARMON_DEVICE"] == loop.dev
    assert c["WEARMON_SEVERITY"] == "err"
    assert c["WEARMON_MESSAGE_ID"] == IDS["io-error"]
    assert c["WEARMON_MESSAGE"].startswith("target lab1: io-error: iteration ")
    assert int(c["WEARMON_CYCLE"]) >= 1
    for k in ("WEARMON_SERIAL", "WEARMON_ITERATION", "WEARMON_SIZE_BYTES", "WEARMON_MIBPS",
              "WEARMON_BASELINE_MIBPS"):
        assert k in c
    assert c["ARGS"] == "io-error"
    ev = query(db, "SELECT kind, severity, message_id FROM events WHERE kind = 'io-error'")
    assert ev == [{"kind": "io-error", "severity": "err", "message_id": IDS["io-error"]}]


def test_alert_command_must_be_executable(workdir, make_loop):
    loop = make_loop(32 * MiB)
    conf = write_conf(workdir / "w.conf", conf_text(
        workdir / "w.db", loop.dev, alert_command=workdir / "missing.sh"))
    p = subprocess.run([str(WEARMOND), "--foreground", "-c", str(conf)], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 78
    line = line_of(conf.read_text(), "alert_command")
    assert f"{conf}:{line}: alert_command: {workdir}/missing.sh is not executable" in p.stderr


# ---- (2) crash and recovery alerts in a real journald -----------------------

def wait_event(db, kind, timeout):
    return wait_for(lambda: poll(db, f"SELECT * FROM events WHERE kind = '{kind}'"), timeout,
                    step=0.25)


def test_throttle_crash_and_recovery_in_journal(workdir, shm_loop):
    why = PrivateJournald.unavailable()
    if why:
        pytest.skip(f"private journald: {why}")
    kind, why = Throttle.find()
    if not kind:
        pytest.skip(why)
    dev = shm_loop(128 * MiB)
    db = workdir / "w.db"
    script, out = write_alert_script(workdir)
    # Alert thresholds well away from the noise of a loop device: the
    # throttle cuts writes to about 4% of the slowest baseline.
    conf = write_conf(workdir / "w.conf", conf_text(
        db, dev, cycles="0", duration="1.5s", between_cycles="trim", alert_below="30%",
        alert_critical="15%", recovered_above="30%", alert_command=script))
    throttle = Throttle(dev)
    proc = None
    try:
        with PrivateJournald(workdir / "journal-root") as jd:
            proc = start(jd.as_unit(throttle.wrap([WEARMOND, "-c", conf])))
            assert wait_for(lambda: poll(
                db, "SELECT 1 FROM cycles WHERE status = 'done'"), 60), proc.stderr
            slowest = query(db, "SELECT min(mibps_avg) AS m FROM iterations"
                                " WHERE status = 'done'")[0]["m"]
            throttle.limit(max(slowest * MiB * 0.04, 4 * MiB))
            crash = wait_event(db, "throughput-crash", 60)
            assert crash, "no throughput-crash event while throttled"
            throttle.lift()
            recovered = wait_event(db, "throughput-recovered", 90)
            assert recovered, "no throughput-recovered event after the throttle was lifted"
            rc, _, err = stop(proc)
            assert rc == 0, err
            assert err == ""          # everything went to the journal
            check_crash_entry(jd, db, dev)
            check_recovery_entry(jd, db)
            check_catalog_explains(jd)
            assert jd.entries("SYSLOG_IDENTIFIER=wearmond", "-p", "warning")
            started = jd.entries("SYSLOG_IDENTIFIER=wearmond", "-g", "started")
            assert started and started[0]["PRIORITY"] == "6"
    finally:
        if proc and proc.poll() is None:
            proc.kill()
            proc.communicate()
        throttle.remove()
    calls = read_alerts(out)
    crash_calls = [c for c in calls if c["WEARMON_KIND"] == "throughput-crash"]
    assert crash_calls, calls
    c = crash_calls[0]
    assert c["WEARMON_DEVICE"] == dev and c["WEARMON_MESSAGE_ID"] == IDS["throughput-crash"]
    assert c["WEARMON_SEVERITY"] in ("crit", "warning")
    assert float(c["WEARMON_MIBPS"]) < 0.3 * float(c["WEARMON_BASELINE_MIBPS"])
    assert int(c["WEARMON_SIZE_BYTES"]) in (16 * MiB, 32 * MiB)
    assert int(c["WEARMON_ITERATION"]) >= 1 and int(c["WEARMON_CYCLE"]) >= 2


def check_crash_entry(jd, db, dev):
    entries = jd.entries(f"MESSAGE_ID={IDS['throughput-crash']}")
    assert entries, "no crash alert in the journal"
    e = entries[0]
    for field in ("TARGET", "DEVICE", "CYCLE", "ITERATION", "SIZE_BYTES", "MIBPS",
                  "BASELINE_MIBPS", "CAUSE", "MESSAGE"):
        assert field in e, (field, e)
    assert e["TARGET"] == "lab1" and e["DEVICE"] == dev
    # a loop device over /dev/shm reports nothing of its own (wearmond(8), ALERTS)
    assert e["CAUSE"] == "unknown" and "likely cause: unknown" in e["MESSAGE"], e
    assert e["PRIORITY"] in ("2", "4") and e["SYSLOG_IDENTIFIER"] == "wearmond"
    assert float(e["MIBPS"]) < 0.3 * float(e["BASELINE_MIBPS"])
    # the same alert in the events table, with the same id and figures
    ev = query(db, """SELECT e.message_id, e.severity, e.value, e.baseline, e.message,
                             c.number AS cycle, i.number AS iteration, i.size_bytes
                      FROM events e JOIN iterations i ON i.id = e.iteration_id
                      JOIN cycles c ON c.id = e.cycle_id
                      WHERE e.kind = 'throughput-crash' ORDER BY e.id""")[0]
    assert ev["message_id"] == IDS["throughput-crash"]
    assert ev["severity"] == {"2": "crit", "4": "warning"}[e["PRIORITY"]]
    assert (str(ev["cycle"]), str(ev["iteration"]), str(ev["size_bytes"])) == \
        (e["CYCLE"], e["ITERATION"], e["SIZE_BYTES"])
    assert abs(ev["value"] - float(e["MIBPS"])) < 0.01
    assert abs(ev["baseline"] - float(e["BASELINE_MIBPS"])) < 0.01
    assert ev["message"] == e["MESSAGE"]


def check_recovery_entry(jd, db):
    entries = jd.entries(f"MESSAGE_ID={IDS['throughput-recovered']}")
    assert entries, "no recovery notice in the journal"
    e = entries[0]
    assert e["PRIORITY"] == "5"
    assert "after trim" in e["MESSAGE"]
    assert float(e["MIBPS"]) >= 0.3 * float(e["BASELINE_MIBPS"])
    crash = jd.entries(f"MESSAGE_ID={IDS['throughput-crash']}")[0]
    assert int(e["CYCLE"]) > int(crash["CYCLE"])
    ev = query(db, "SELECT message_id, severity, data FROM events"
                   " WHERE kind = 'throughput-recovered'")[0]
    assert ev["message_id"] == IDS["throughput-recovered"] and ev["severity"] == "notice"
    assert '"action":"trim"' in ev["data"]


def check_catalog_explains(jd):
    """journalctl -x shows the catalog text with the entry's fields."""
    root = jd.root / "catalog-root"
    cat = root / "usr/lib/systemd/catalog"
    cat.mkdir(parents=True)
    shutil.copy(CATALOG, cat / "wearmon.catalog")
    subprocess.run(["journalctl", f"--root={root}", "--update-catalog"], check=True)
    if not Path("/var/lib/systemd/catalog").is_dir():
        return      # nothing to bind over without creating it on the host
    out = jd.explain(root, f"MESSAGE_ID={IDS['throughput-crash']}")
    crash = jd.entries(f"MESSAGE_ID={IDS['throughput-crash']}")[0]
    assert (f"Subject: Throughput crash on lab1: {crash['MIBPS']} MiB/s against a baseline "
            f"of {crash['BASELINE_MIBPS']} MiB/s") in out, out
    assert "Defined-By: wearmon" in out
    assert f"What happened: iteration {crash['ITERATION']} of cycle {crash['CYCLE']}" in out
    assert "What to do:" in out


# ---- (4) the unit and the catalog -------------------------------------------

def test_unit_verifies_and_is_hardened(workdir):
    """make install-systemd puts the unit where systemd looks, with ExecStart
    rewritten for PREFIX; systemd-analyze verify passes on it."""
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze missing")
    prefix = workdir / "prefix"
    # DESTDIR=/ stages into the real root at PREFIX (a temporary directory),
    # so the rewritten ExecStart names a file that exists; a DESTDIR also
    # keeps the host's catalog index untouched.
    subprocess.run(["make", "-s", "-C", str(REPO), "install-systemd", "DESTDIR=/",
                    f"PREFIX={prefix}"], check=True, capture_output=True)
    unit = prefix / "lib/systemd/system/wearmon.service"
    assert (prefix / "lib/systemd/catalog/wearmon.catalog").read_text() == CATALOG.read_text()
    text = unit.read_text()
    assert f"ExecStart={prefix}/sbin/wearmond -c /etc/wearmon/wearmon.conf" in text
    (prefix / "sbin").mkdir()
    shutil.copy(WEARMOND, prefix / "sbin/wearmond")
    man = man_tree(workdir)
    args = ["systemd-analyze", "verify"] + ([] if man else ["--man=no"]) + [str(unit)]
    env = dict(os.environ, MANPATH=str(man)) if man else None
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    assert p.returncode == 0 and p.stderr.strip() == "", p.stderr
    for line in ("Type=notify", "ExecReload=/bin/kill -HUP $MAINPID", "Restart=on-failure",
                 "RestartPreventExitStatus=78", "StateDirectory=wearmon",
                 "ConfigurationDirectory=wearmon", "PrivateNetwork=yes",
                 "ProtectSystem=strict", "DeviceAllow=block-* rw"):
        assert line in text.splitlines(), line
    assert re.search(r"^WatchdogSec=\d+", text, re.M)


def man_tree(workdir):
    """A MANPATH holding the pages the unit documents, or None if the repo
    does not have them (then verify skips its man check)."""
    pages = {"man8/wearmond.8": REPO / "daemon/wearmond.8",
             "man5/wearmon.conf.5": REPO / "conf/wearmon.conf.5"}
    if not all(p.exists() for p in pages.values()) or not shutil.which("man"):
        return None
    root = workdir / "man"
    for dest, src in pages.items():
        (root / dest).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, root / dest)
    return root


def test_security_exposure_at_most_4():
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze missing")
    p = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager",
                        str(UNIT)], capture_output=True, text=True)
    m = re.search(r"Overall exposure level for wearmon.service: (\d+\.\d+)", p.stdout)
    assert m, p.stdout + p.stderr
    assert float(m.group(1)) <= 4.0, p.stdout
    # SECURITY.md reports the same number
    assert f"{m.group(1)}" in (REPO / "systemd/SECURITY.md").read_text()


def test_catalog_parses_into_a_root(workdir):
    root = workdir / "root"
    (root / "usr/lib/systemd/catalog").mkdir(parents=True)
    shutil.copy(CATALOG, root / "usr/lib/systemd/catalog/wearmon.catalog")
    p = subprocess.run(["journalctl", f"--root={root}", "--update-catalog"],
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert (root / "var/lib/systemd/catalog/database").stat().st_size > 0
    listed = subprocess.run(["journalctl", f"--root={root}", "--list-catalog", "--no-pager"],
                            capture_output=True, text=True, check=True).stdout
    ids = {line.split()[0] for line in listed.splitlines() if line.strip()}
    assert ids == set(IDS.values()), listed
    assert len(IDS) == 11
    for mid in IDS.values():
        text = subprocess.run(["journalctl", f"--root={root}", "--dump-catalog", mid,
                               "--no-pager"], capture_output=True, text=True, check=True).stdout
        for part in ("Subject: ", "Defined-By: wearmon", "Documentation: man:",
                     "What happened:", "Likely cause:", "What to do:"):
            assert part in text, (mid, part)


def test_make_install_into_destdir(workdir):
    """make install (PREFIX, DESTDIR) stages binaries, unit, catalog,
    example configuration, man pages and bash completion, and nothing
    outside DESTDIR."""
    root = workdir / "root"
    # make install installs no package: an apt-get or apt it ran would
    # leave its mark here.
    trap = workdir / "trap"
    trap.mkdir()
    for tool in ("apt-get", "apt", "dpkg"):
        (trap / tool).write_text(f"#!/bin/sh\necho {tool} >> {trap}/called\nexit 1\n")
        (trap / tool).chmod(0o755)
    env = dict(os.environ, PATH=f"{trap}:{os.environ['PATH']}")
    subprocess.run(["make", "-s", "-C", str(REPO), "install", f"DESTDIR={root}",
                    "PREFIX=/usr"], check=True, capture_output=True, env=env)
    assert not (trap / "called").exists(), (trap / "called").read_text()
    want = ["usr/sbin/wearmond", "usr/bin/wearmon", "usr/lib/systemd/system/wearmon.service",
            "usr/lib/systemd/catalog/wearmon.catalog", "etc/wearmon/wearmon.conf.example",
            "usr/share/man/man8/wearmond.8", "usr/share/man/man5/wearmon.conf.5",
            "usr/share/man/man1/wearmon.1"]
    # bash completion, where bash-completion's pkg-config file says
    comp = subprocess.run(["pkg-config", "--variable=completionsdir", "bash-completion"],
                          capture_output=True, text=True).stdout.strip()
    comp = (comp or "/usr/share/bash-completion/completions").lstrip("/")
    want += [f"{comp}/wearmon", f"{comp}/wearmond"]
    for rel in want:
        assert (root / rel).is_file(), rel
    assert os.access(root / "usr/sbin/wearmond", os.X_OK)
    unit = (root / "usr/lib/systemd/system/wearmon.service").read_text()
    assert "ExecStart=/usr/sbin/wearmond -c /etc/wearmon/wearmon.conf" in unit
    staged = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert staged == sorted(want)
    # The state directory, with the mode of the unit's StateDirectory=, so
    # the man page's first step reports the example's real problem (its
    # device), not a missing /var/lib/wearmon.
    state = root / "var/lib/wearmon"
    assert state.is_dir() and (state.stat().st_mode & 0o7777) == 0o755
    example = (root / "etc/wearmon/wearmon.conf.example").read_text()
    conf = workdir / "wearmon.conf"
    conf.write_text(example.replace("/var/lib/wearmon/", f"{state}/"))
    p = subprocess.run([str(WEARMOND), "--check", "-c", str(conf)], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 78
    assert "database" not in p.stderr, p.stderr
    assert "device" in p.stderr, p.stderr
