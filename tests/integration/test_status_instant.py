"""wearmon status right at every instant, with real daemons:
liveness from the database's lock (a killed daemon, not yet reaped, is not
"running"), a new iteration's progress that owes nothing to the one before,
the campaign ETA after a restart against the time the rest really took in
the same run, "size 2 of 3" from the plan in show and status, durations by
the daemon's monotonic clock when the wall clock jumps, the metrics file's
last word after a stop, and the hosts of a merged fleet database."""

import json
import os
import re
import signal
import sqlite3
import subprocess
import time

from conftest import (WEARMON, query, run_wearmon, run_wearmond, sh, start_wearmond, stop,
                      wait_for, write_conf)


def status(db, *args, env=None):
    p = subprocess.run([str(WEARMON), "-d", str(db), "status", *args], capture_output=True,
                       text=True, timeout=30, env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout


def status_json(db, env=None):
    return json.loads(status(db, "--format", "json", env=env))


def conf(d, name="a", **over):
    keys = {"device": d / f"{name}.img", "file_size": "48M", "sizes": "30% 60% 90%",
            "fill": "no", "duration": "1s", "amount": "200x", "cycles": "1",
            "sample_interval": "0.5s"}
    keys.update(over)
    body = "\n".join(f"{k} = {v}" for k, v in keys.items())
    return write_conf(d / f"{name}.conf",
                      f"[wearmon]\ndatabase = {d}/w.db\n\n[target {name}]\n{body}\n")


def running_row(db, size_index=None):
    sql = "SELECT * FROM iterations WHERE status = 'running'"
    if size_index is not None:
        sql += f" AND size_index = {size_index}"
    rows = query(db, sql + " ORDER BY id DESC LIMIT 1")
    return rows[0] if rows else None


def proc_state(pid):
    """The state letter of /proc/PID/stat (Z: a zombie nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def test_killed_daemon_is_not_running_before_it_is_reaped(workdir):
    """kill -9 leaves the run open and, until its parent waits for it, a
    zombie whose /proc entry still says wearmond: status goes by the lock."""
    db = workdir / "w.db"
    proc = start_wearmond(conf(workdir, cycles="0"))
    assert wait_for(lambda: db.exists() and running_row(db), 30)
    assert wait_for(lambda: query(db, "SELECT 1 FROM progress"), 30)
    assert status_json(db)["daemon"]["state"] == "running"
    os.kill(proc.pid, signal.SIGKILL)
    assert wait_for(lambda: proc_state(proc.pid) == "Z", 30), proc_state(proc.pid)
    out = status(db)
    js = status_json(db)
    assert proc_state(proc.pid) == "Z"  # still not reaped while status ran
    proc.communicate(timeout=30)
    first = out.splitlines()[0]
    assert "running" not in first.replace("not running", ""), out
    m = re.match(r"wearmond: not running, dead since about (\S+ \S+) UTC .*\(pid %d\) "
                 r"recorded no stop" % proc.pid, first)
    assert m, out
    assert js["daemon"]["state"] == "gone" and js["daemon"]["live"] == []
    host = js["daemon"]["hosts"][0]
    assert host["state"] == "gone" and host["pid"] == proc.pid
    # since when: its last sign of life, after it started, and the text says it
    last = query(db, "SELECT max(updated_at) AS u FROM progress")[0]["u"]
    assert host["last_seen"] == last and host["last_seen"] >= host["started_at"]
    assert m.group(1).replace(" ", "T") == last[:19]
    assert js["targets"][0]["daemon_state"] == "gone"
    assert "stalled: wearmond stopped during this iteration" in out


def test_a_new_iteration_shows_nothing_of_the_previous_one(workdir):
    """Read status as fast as it goes across iteration boundaries: the
    phase's progress never claims more time than the iteration has run
    (the previous iteration's "99 %, ETA 0 s" would)."""
    db = workdir / "w.db"
    proc = start_wearmond(conf(workdir, sizes="20% 40% 60% 80%", duration="1.5s"))
    seen, iterations, starts = [], set(), 0
    try:
        assert wait_for(lambda: db.exists() and running_row(db), 30)
        while proc.poll() is None:
            js = status_json(db)
            t = js["targets"][0]
            p = t["progress"]
            if p is None:
                continue
            iterations.add(t["iteration"]["number"])
            starts += p["phase"] in ("start", None)
            if p["phase"] == "measure" and p["fraction"] is not None:
                seen.append((t["iteration"]["number"], p["fraction"], p["eta_seconds"],
                             p["running_seconds"]))
    finally:
        rc, _, err = stop(proc, signal.SIGTERM)
    assert rc == 0, err
    assert len(iterations) >= 3 and len(seen) >= 10, (iterations, len(seen))
    duration = 1.5
    for number, fraction, eta, running in seen:
        # the phase began after the iteration: its share of the duration is
        # at most the time the iteration has run (0.3 s for rounding)
        assert fraction * duration <= running + 0.3, (number, fraction, eta, running)
        assert eta is None or eta + running >= duration - 0.3, (number, fraction, eta, running)


def test_campaign_eta_after_a_restart_is_the_time_the_rest_takes(workdir):
    """Three sizes of a 1.5 s phase, three cycles; killed in the middle of
    the second and started again after longer than a cycle takes (the time
    between must count nothing): the ETA status gives then is within a
    quarter of what the rest of the campaign takes at this run's pace. The
    ETA is judged against the first cycle's time stored in this run, so a
    machine that slows down afterwards moves nothing."""
    db = workdir / "w.db"
    c = conf(workdir, duration="1.5s", cycles="3")
    first = start_wearmond(c)
    try:
        # killed while cycle 2 runs a later size than its first: wait for
        # that row, not for the first size's end (the next row comes after)
        assert wait_for(lambda: db.exists() and query(
            db, "SELECT 1 FROM iterations i JOIN cycles c ON c.id = i.cycle_id"
                " WHERE c.number = 2 AND i.status = 'running' AND i.size_index > 0"), 120)
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=30)
    wall = query(db, "SELECT (julianday(ended_at) - julianday(started_at)) * 86400 AS s"
                     " FROM cycles WHERE number = 1")[0]["s"]
    time.sleep(wall + 1)
    second = start_wearmond(c)
    try:
        def eta_now():
            js = status_json(db)
            p = js["targets"][0]["progress"]
            live = [r["pid"] for r in js["daemon"]["live"]]
            if live == [second.pid] and p and p["campaign_eta_seconds"] is not None:
                return js
            return None
        js = wait_for(eta_now, 60, step=0.05)
        t0 = time.monotonic()
        assert js, status(db)
        text = status(db)
        rc = second.wait(timeout=180)
        real = time.monotonic() - t0
    finally:
        if second.poll() is None:
            stop(second, signal.SIGTERM)
    assert rc == 0
    eta = js["targets"][0]["progress"]["campaign_eta_seconds"]
    it = js["targets"][0]["iteration"]
    assert it["cycle"] == 2 and it["cycles_cfg"] == 3, it
    print(f"campaign ETA after the restart {eta:.1f} s, the rest took {real:.1f} s; "
          f"cycle 1 took {wall:.1f} s")
    # Judged against what this run stored, not against how fast the
    # machine went on afterwards: the rest is one or two of cycle 2's three
    # sizes and the whole of cycle 3, so between 4/3 and 5/3 of the cycle
    # that ran before, within a quarter. The outage (longer than a cycle)
    # counted would put it beyond that.
    assert 0.75 * wall * 4 / 3 <= eta <= wall * 5 / 3 / 0.75, (eta, wall, real)
    assert re.search(r"campaign of 3 cycles ETA", text), text
    # every cycle done: the campaign as planned
    assert [r["status"] for r in query(db, "SELECT status FROM cycles ORDER BY number")] == \
        ["done"] * 3


def test_size_counts_come_from_the_plan_mid_cycle(workdir):
    """In the middle of the first cycle of a three-size plan, the second
    size is "size 2 of 3" in status and in show (not "of 2", the sizes
    the rows reached)."""
    db = workdir / "w.db"
    proc = start_wearmond(conf(workdir, duration="3s", cycles="2"))
    try:
        row = wait_for(lambda: db.exists() and running_row(db, size_index=1), 60)
        assert row
        out = status(db)
        js = status_json(db)
        shown = run_wearmon("show", row["id"], db=db, check=0).stdout
    finally:
        rc, _, err = stop(proc, signal.SIGTERM)
    assert rc == 0, err
    assert re.search(r"now         cycle 1 of 2, size 2 of 3 ", out), out
    assert js["targets"][0]["iteration"]["nsizes"] == 3
    assert "(size 2 of 3)" in shown.splitlines()[0], shown
    assert query(db, "SELECT nsizes, cycles_planned FROM cycles") == \
        [{"nsizes": 3, "cycles_planned": 2}]


def test_running_time_ignores_a_jump_of_the_wall_clock(workdir):
    """A 6 s phase read by a status whose wall clock jumped two hours ahead
    (WEARMON_TEST_CLOCK_SHIFT, wearmon.1): the running time is the
    daemon's monotonic one, never more than the test has itself waited."""
    db = workdir / "w.db"
    t0 = time.monotonic()
    proc = start_wearmond(conf(workdir, sizes="50%", duration="6s"))
    jumped = dict(os.environ, WEARMON_TEST_CLOCK_SHIFT="7200")
    outs = []
    try:
        assert wait_for(lambda: db.exists() and running_row(db), 30)
        end = time.monotonic() + 4
        while time.monotonic() < end and proc.poll() is None:
            js = status_json(db, env=jumped)
            text = status(db, env=jumped)
            waited = time.monotonic() - t0
            outs.append((js, text, waited))
            time.sleep(0.2)
    finally:
        rc, _, err = stop(proc, signal.SIGTERM)
    assert rc == 0, err
    running = [(js["targets"][0]["progress"], w) for js, _, w in outs
               if js["targets"][0]["progress"]]
    assert len(running) >= 5, outs
    for p, waited in running:
        assert 0 <= p["running_seconds"] <= waited + 0.5, (p, waited)
    assert max(p["running_seconds"] for p, _ in running) >= 1, running
    for js, text, _ in outs:
        m = re.search(r"running for (.*)$", text, re.M)
        assert m and not re.search(r" h$|min", m.group(1)), text
    # the daemon itself is running, whatever the clock
    assert all(js["daemon"]["state"] == "running" for js, _, _ in outs)


def test_metrics_file_says_stopped_after_a_stop_signal(workdir):
    db = workdir / "w.db"
    prom = workdir / "w.prom"
    c = conf(workdir, cycles="0")
    c.write_text(c.read_text().replace("[target", f"metrics_file = {prom}\n\n[target"))
    proc = start_wearmond(c)
    try:
        assert wait_for(lambda: prom.exists() and 'state="running"} 1' in prom.read_text()
                        and db.exists() and running_row(db), 30)
    finally:
        rc, _, err = stop(proc, signal.SIGTERM)
    assert rc == 0, err
    text = prom.read_text()
    states = dict(re.findall(r'^wearmon_daemon_state\{state="(\w+)"\} (\d)$', text, re.M))
    assert states == {"running": "0", "stopping": "0", "stopped": "1"}, text


def test_merged_fleet_database_shows_each_host(workdir):
    """Two machines' databases, one copied while its daemon ran (as a lab
    copies a live one), merged: status names each host's daemon state and
    counts the live copy's sizes from its plan."""
    a, b = workdir / "m1", workdir / "m2"
    a.mkdir()
    b.mkdir()
    p = run_wearmond(conf(a, sizes="50% 100%", duration="0.4s", sample_interval="0.2s"),
                     timeout=120)
    assert p.returncode == 0, p.stderr
    proc = start_wearmond(conf(b, duration="3s", cycles="2"))
    live = b / "copy.db"
    try:
        assert wait_for(lambda: (b / "w.db").exists() and running_row(b / "w.db", 1), 60)
        sh("sqlite3", b / "w.db", f".backup '{live}'")
    finally:
        rc, _, err = stop(proc, signal.SIGTERM)
    assert rc == 0, err
    sh("sqlite3", live, "UPDATE runs SET hostname = 'm2'")
    host_a = query(a / "w.db", "SELECT hostname FROM runs")[0]["hostname"]
    out_db = workdir / "fleet.db"
    run_wearmon("merge", "-o", out_db, a / "w.db", live, check=0)
    out = status(out_db)
    js = status_json(out_db)
    assert re.search(r"^wearmond on %s: stopped " % re.escape(host_a), out, re.M), out
    assert re.search(r"^wearmond on m2: started .* on m2 .*no stop recorded", out, re.M), out
    hosts = {h["hostname"]: h["state"] for h in js["daemon"]["hosts"]}
    assert hosts == {host_a: "stopped", "m2": "elsewhere"}, hosts
    targets = {t["name"]: t for t in js["targets"]}
    assert targets["m2/a"]["daemon_state"] == "elsewhere"
    assert targets[f"{host_a}/a"]["daemon_state"] == "stopped"
    assert targets["m2/a"]["iteration"]["nsizes"] == 3
    assert "of ?" not in out
    assert re.search(r"now         cycle 1 of 2, size 2 of 3 ", out), out
    assert "running on m2 when last recorded" in out


def test_progress_row_without_the_iterations_clock_is_not_its_running_time(workdir):
    """The health phase at a cycle's start publishes a progress row naming
    the iteration to come, before that iteration has a clock; a status
    that meets such a row beside the iteration's fresh row (the daemon
    rewrites it within a nap) reads no running time from it, even with
    the wall clock two hours ahead. The window is held open by stopping
    the daemon (SIGSTOP) and giving its row that shape."""
    db = workdir / "w.db"
    proc = start_wearmond(conf(workdir, sizes="50%", duration="60s"))
    jumped = dict(os.environ, WEARMON_TEST_CLOCK_SHIFT="7200")
    try:
        assert wait_for(lambda: db.exists() and running_row(db)
                        and query(db, "SELECT 1 FROM progress WHERE phase = 'measure'"), 60)
        shaped = False
        deadline = time.monotonic() + 60
        while not shaped and time.monotonic() < deadline:
            os.kill(proc.pid, signal.SIGSTOP)
            con = sqlite3.connect(db, timeout=1)
            try:
                with con:
                    con.execute("UPDATE progress SET phase = 'health', "
                                "iteration_seconds = NULL")
                shaped = True
            except sqlite3.OperationalError:  # stopped inside its own write:
                # let it end that write (it rewrites the row once a second)
                before = query(db, "SELECT updated_at FROM progress")
                os.kill(proc.pid, signal.SIGCONT)
                wait_for(lambda: query(db, "SELECT updated_at FROM progress") != before, 30)
            finally:
                con.close()
        assert shaped
        js = status_json(db, env=jumped)
        text = status(db, env=jumped)
        os.kill(proc.pid, signal.SIGCONT)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        rc, _, err = stop(proc, signal.SIGTERM)
    assert rc == 0, err
    assert js["daemon"]["state"] == "running", js
    p = js["targets"][0]["progress"]
    assert p and 0 <= p["running_seconds"] <= 0.1 + 1e-6, p
    m = re.search(r"running for (.*)$", text, re.M)
    assert m and not re.search(r" h$|min", m.group(1)), text
