"""wearmon status while real daemons run: sizes and cycles counted from the
configuration, progress and ETA that honour duration, a sensible display
from the first second, the daemon state with two daemons on one database,
and the same as JSON."""

import json
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from conftest import WEARMON, query, start_wearmond, stop, wait_for, write_conf


def status(db, *args):
    p = subprocess.run([str(WEARMON), "-d", str(db), "status", *args], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout


def conf(db, name, path, **over):
    keys = {"device": path, "file_size": "64M", "sizes": "25% 50% 75% 100%", "fill": "no",
            "duration": "4s", "amount": "200x", "cycles": "2", "sample_interval": "0.5s"}
    keys.update(over)
    body = "\n".join(f"{k} = {v}" for k, v in keys.items())
    return f"[wearmon]\ndatabase = {db}\n\n[target {name}]\n{body}\n"


FIRST_SIZE = r"now         cycle 1 of 2, size 1 of 4 \(16\.0 MiB\)"
PERCENT = r"progress    (\d+)% of the measure phase"


def seen_enough(outs):
    text = "\n".join(outs)
    return re.search(FIRST_SIZE, text) and any(int(m) >= 50 for m in re.findall(PERCENT, text))


def test_status_counts_the_configuration_and_honours_duration(workdir):
    db = workdir / "w.db"
    c = write_conf(workdir / "a.conf", conf(db, "a", workdir / "a.img"))
    proc = start_wearmond(c)
    outs = []
    try:
        assert wait_for(lambda: db.exists() and query(db, "SELECT 1 FROM runs"), 60)
        # until the first size and the second half of a measured phase have
        # been seen (however slowly status answers), not for a fixed time
        end = time.monotonic() + 120
        while time.monotonic() < end and proc.poll() is None and not seen_enough(outs):
            outs.append(status(db))
            time.sleep(0.3)
        js = json.loads(status(db, "--format", "json"))
    finally:
        rc, _, err = stop(proc, signal.SIGTERM)
    assert rc == 0, err
    text = "\n".join(outs)
    # never the first-second oddities of before
    for bad in ("phase       unknown", "ETA -", "not known until the iteration ends",
                "size 1 of 1 "):
        assert bad not in text, bad
    # four sizes and two cycles as configured, from the first size on
    assert re.search(FIRST_SIZE, text), text
    # the measured phase ends at duration (4 s), long before 200x the size:
    # the ETA never exceeds it, and the percentage follows the time
    etas = [int(m) for m in re.findall(r"% of the measure phase, ETA (\d+) s", text)]
    assert etas and max(etas) <= 4, etas
    pct = [int(m) for m in re.findall(PERCENT, text)]
    assert max(pct) >= 50, pct
    assert js["daemon"]["state"] == "running" and js["daemon"]["live"][0]["pid"] == proc.pid
    t = js["targets"][0]
    assert t["name"] == "a" and t["iteration"]["nsizes"] == 4
    assert t["iteration"]["cycles_cfg"] == 2
    # phase None only in the moment a new iteration starts, before its first row
    assert t["progress"]["phase"] in ("measure", "start", None)
    assert t["progress"]["running_seconds"] >= 0


def test_status_with_a_dead_run_and_a_live_daemon(workdir):
    """A daemon killed with -9 leaves its run row open; the next daemon on
    the same database (one at a time: the database lock) runs on. status
    reports the live one, never "gone" or "stopped" because of the dead
    row, and "stopped" once the live one has stopped."""
    db = workdir / "w.db"
    conf_a = write_conf(workdir / "a.conf", conf(db, "a", workdir / "a.img", cycles="0",
                                                 duration="1s"))
    first = start_wearmond(conf_a)
    assert wait_for(lambda: db.exists() and query(db, "SELECT 1 FROM progress"), 30)
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=30)
    live = start_wearmond(conf_a)
    try:
        assert wait_for(lambda: len(query(db, "SELECT id FROM runs")) == 2, 30)
        runs = query(db, "SELECT pid, ended_at FROM runs ORDER BY id")
        assert runs[0]["pid"] == first.pid and not runs[0]["ended_at"]
        assert runs[1]["pid"] == live.pid and not runs[1]["ended_at"]
        out = status(db)
        assert re.search(r"^wearmond: running since .* \(pid %d\)" % live.pid, out, re.M), out
        assert "stopped" not in out.splitlines()[0]
        js = json.loads(status(db, "--format", "json"))
        assert js["daemon"]["state"] == "running"
        assert [r["pid"] for r in js["daemon"]["live"]] == [live.pid]
    finally:
        rc, _, err = stop(live, signal.SIGTERM)
    assert rc == 0, err
    assert status(db).startswith("wearmond: stopped ")
    assert json.loads(status(db, "--format", "json"))["daemon"]["state"] == "stopped"


def test_status_format_csv_is_refused(workdir):
    p = subprocess.run([str(WEARMON), "-d", str(workdir / "x.db"), "status", "--format",
                        "csv"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "--format is table or json" in p.stderr


def test_status_counts_cycles_within_the_campaign(workdir):
    """After --new-campaign the cycle numbers go on (3, 4) while cycles = 2
    counts the new campaign's: status says where the cycle stands in its
    campaign ("cycle 3 (1 of 2 in this campaign)"), never "cycle 3 of 2",
    and plans the campaign's time left by that place."""
    db = workdir / "w.db"
    quick = dict(sizes="50% 100%", duration="0.3s", sample_interval="0.1s", ioengine="null")
    c = write_conf(workdir / "a.conf", conf(db, "a", workdir / "a.img", **quick))
    p = subprocess.run([str(WEARMON.parent / "wearmond"), "--foreground", "-c", str(c)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "cycle 2 of 2," in status(db)
    # the second campaign, stopped in its first cycle
    slow = {k: v for k, v in quick.items() if k != "ioengine"}
    c = write_conf(workdir / "a.conf", conf(db, "a", workdir / "a.img",
                                            **dict(slow, duration="60s")))
    proc = start_wearmond(c, "--new-campaign", "a")
    try:
        assert wait_for(lambda: query(db, "SELECT cycle FROM progress WHERE cycle = 3 AND "
                                          "phase = 'measure'"), 60), query(db, "SELECT * FROM progress")
        out = status(db)
        js = json.loads(status(db, "--format", "json"))
    finally:
        rc, _, err = stop(proc, signal.SIGTERM)
    assert rc == 0, err
    assert "now         cycle 3 (1 of 2 in this campaign), size 1 of 2" in out, out
    for m in re.finditer(r"cycle (\d+) of (\d+)", out):
        assert int(m.group(1)) <= int(m.group(2)), out
    it = js["targets"][0]["iteration"]
    assert (it["cycle"], it["campaign_cycle"], it["cycles_cfg"]) == (3, 1, 2), it
    out = status(db)    # stopped: the last iteration, same words
    assert "last        cycle 3 (1 of 2 in this campaign)" in out, out


def test_status_help_explains_every_line(workdir):
    """`wearmon status --help` is status's own usage with a legend of every
    line status prints and what its baseline is; every other command's
    --help is its own too (merge's was the global text)."""
    p = subprocess.run([str(WEARMON), "status", "--help"], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 0
    legend = p.stdout
    assert legend.startswith("Usage: wearmon [-d DB] status")
    for label in ("now, last", "phase", "progress", "MiB/s", "plan", "last done", "cycle",
                  "last alert", "state", "Baseline:", "Units:"):
        assert re.search(rf"^ *{re.escape(label)}", legend, re.M), label
    assert "earliest done iteration of the same target, size,\nworkload and block size" in legend
    # each line label a status prints is in the legend
    db = workdir / "w.db"
    c = write_conf(workdir / "a.conf", conf(db, "a", workdir / "a.img", sizes="50% 100%",
                                            duration="0.3s", ioengine="null"))
    subprocess.run([str(WEARMON.parent / "wearmond"), "--foreground", "-c", str(c)],
                   capture_output=True, text=True, timeout=120, check=True)
    for line in status(db).splitlines()[2:]:
        label = line[2:13].strip()
        assert label in ("last", "now") or re.search(rf"^  {re.escape(label)} ", legend, re.M), line
    for cmd in ("history", "show", "alerts", "plot", "report", "export", "merge", "check"):
        p = subprocess.run([str(WEARMON), cmd, "--help"], capture_output=True, text=True,
                           timeout=30)
        assert p.returncode == 0 and re.match(rf"Usage: wearmon .*{cmd}", p.stdout), (cmd, p.stdout)


def test_a_reader_who_is_not_root_sees_the_daemon_running():
    """wearmon run by an ordinary user (the unit's group may read the
    history) on the database of a daemon running as root: it cannot look
    into root's descriptors, yet it sees the daemon running, from the lock
    /proc/locks lists on the file and the process's name, and after the
    stop it sees it stopped."""
    # a directory of its own that others may enter, as /var/lib/wearmon
    # (the run's temporary directory is root's and closed), removed at the end
    d = Path(tempfile.mkdtemp(prefix="wearmon-test-reader-", dir="/var/tmp"))
    proc = None
    try:
        d.chmod(0o755)
        proc = reader_sees_running_then_stopped(d)
    finally:
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        shutil.rmtree(d)


def reader_sees_running_then_stopped(d):
    nobody = pwd.getpwnam("nobody").pw_uid
    db = d / "w.db"
    c = write_conf(d / "w.conf", conf(db, "lab1", d / "t.img", cycles="0"))
    c.chmod(0o600)
    as_nobody = ["setpriv", f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups",
                 str(WEARMON), "-d", str(db), "status"]
    proc = start_wearmond(c)
    assert wait_for(lambda: query(db, "SELECT 1 FROM iterations LIMIT 1"), 60)
    p = subprocess.run(as_nobody, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert re.search(rf"wearmond: running since .* \(pid {proc.pid}\)", p.stdout), p.stdout
    assert "stalled" not in p.stdout, p.stdout
    rc, _, err = stop(proc)
    assert rc == 0, err
    p = subprocess.run(as_nobody, capture_output=True, text=True, timeout=60)
    assert re.search(r"wearmond: stopped ", p.stdout), p.stdout
    return proc
