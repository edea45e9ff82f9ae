"""Host idle recovery (hir = yes), as the SNIA PTS writes it: on the
simulated SSD with background GC while idle (tools/simssd/README.md), the
protocol purges the drive (TRIM, or the configured secure erase) and
records how, stores its precondition rounds, the bursts of every wait state
each followed by its idle wait with the media bytes the drive wrote while
idle, and the returns to baseline, each with the drive's own counters over
it; a stop in the middle and a restart go on with the next burst, nothing
run twice or lost; show and the report chart the bursts and the idle media
bytes against the wait state."""

import json
import re
import signal
import subprocess
import time
from datetime import datetime

import pytest

import simssd_helper
from conftest import (MiB, query, run_wearmon, run_wearmond, start_wearmond, stop,
                      target_conf, wait_for, write_conf)

# Small and slow enough that random writes garbage-collect at once after
# the fill; idle, a channel reclaims blocks up to 12 free within a second.
DRIVE = dict(capacity="16M", page="4k", erase_block="64k", spare=20, channels=2,
             t_prog="1ms", t_read="50us", t_erase="2ms", cache="256k", gc_free=1,
             bg_gc_free=12, bg_gc_idle="50ms")

WAITS = (1.0, 2.0, 4.0)
REPS = 2
KEYS = {"fill": "yes", "fill_block_size": "128k", "fill_queue_depth": "8",
        "workload": "randwrite", "block_size": "4k", "queue_depth": "8",
        "duration": "1s", "sample_interval": "0.5s", "sizes": "100%", "cycles": "1",
        "hir": "yes", "hir_round": "3s", "max_rounds": "6",
        "hir_wait_states": " ".join(f"{w:g}s" for w in WAITS), "hir_burst": "0.25s",
        "hir_repetitions": str(REPS), "hir_baseline": "1s"}


def assert_counted_once(db, rows):
    """targets.host_bytes_total and the newest row's are every iteration's
    wear bytes plus every hir_bursts row's; each row's total is cumulative;
    returns that total."""
    wear = query(db, "SELECT sum(host_bytes_written) AS n FROM wear")[0]["n"]
    total = query(db, "SELECT host_bytes_total AS n FROM targets")[0]["n"]
    assert total == wear + sum(r["bytes"] for r in rows), (total, wear)
    counted = query(db, "SELECT h.host_bytes_total AS t, h.mapped_bytes AS m,"
                        " (SELECT coalesce(sum(w.host_bytes_written), 0) FROM wear w"
                        "  JOIN iterations i ON i.id = w.iteration_id"
                        "  WHERE i.ended_at <= h.started_at)"
                        " + (SELECT sum(x.bytes) FROM hir_bursts x WHERE x.id <= h.id) AS want"
                        " FROM hir_bursts h ORDER BY h.id")
    assert all(c["t"] == c["want"] and c["m"] > 0 for c in counted), counted
    return total


def at(iso):
    """Seconds since the epoch of a stored ISO-8601 UTC time."""
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def assert_burst_then_wait(rows):
    """The PTS order: every burst's idle wait comes after it, before the next
    row of the protocol (a burst, or the return to baseline after the last
    burst of a wait state), and lasts at least the wait state; a stop drops
    only the wait in progress (its columns NULL)."""
    for r, nxt in zip(rows, rows[1:]):
        if r["idle_after_seconds"] is None:
            continue
        assert r["idle_after_seconds"] >= r["wait_seconds"], r
        gap = at(nxt["started_at"]) - (at(r["started_at"]) + r["seconds"])
        # started_at is taken before the engine's start: ms of slack
        assert gap >= r["wait_seconds"] - 0.05, (r, nxt, gap)
        if nxt["kind"] == "burst":
            assert nxt["idle_seconds"] >= r["wait_seconds"], (r, nxt)


@simssd_helper.needs_sim
def test_hir_bursts_per_wait_state_with_a_restart(workdir):
    with simssd_helper.sim_drive(**DRIVE) as d:
        before = d.stats()
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf", target_conf(db, d.loop, KEYS))
        proc = start_wearmond(conf)
        try:
            # stop the daemon once the first burst of the second wait state
            # is stored: in the wait before the next one, or in it
            seen = wait_for(lambda: query(db, "SELECT id FROM hir_bursts WHERE"
                                              " kind = 'burst' AND wait_state = 2"), 120)
        finally:
            rc, _, err = stop(proc, signal.SIGTERM, timeout=30)
        assert seen, err
        assert rc == 0, err
        p = run_wearmond(conf, timeout=300)
        assert p.returncode == 0, p.stderr
        assert "resuming cycle 1 at its host idle recovery" in p.stderr, p.stderr
        assert "host idle recovery resumes at the next burst" in p.stderr, p.stderr
        assert "host idle recovery: purge by trim: ok" in err, err
        assert "purge by" not in p.stderr, p.stderr  # not run again
        st = d.stats()
        d_capacity = d.capacity
    rows = query(db, "SELECT * FROM hir_bursts ORDER BY id")
    bursts = [r for r in rows if r["kind"] == "burst"]
    # every burst of every wait state once, in order, with its wait
    assert [(r["wait_state"], r["repetition"]) for r in bursts] == [
        (s, k) for s in (1, 2, 3) for k in range(1, REPS + 1)], rows
    assert all(r["wait_seconds"] == WAITS[r["wait_state"] - 1] for r in bursts), bursts
    # burst, then wait: the last burst of each wait state has its wait too,
    # before the return to baseline; only the wait the stop cut short (in
    # the second wait state) was dropped
    assert_burst_then_wait(rows)
    dropped = [(r["wait_state"], r["repetition"]) for r in bursts
               if r["idle_after_seconds"] is None]
    assert len(dropped) <= 1 and all(s == 2 for s, _ in dropped), dropped
    # the purge ran first, once (the restart found it), by TRIM of the
    # region: no secure_erase is set, and the simulated SSD discards
    purges = query(db, "SELECT * FROM hir_purges")
    assert [(p["method"], p["erase"], p["outcome"], p["note"]) for p in purges] == [
        ("trim", None, "ok", None)], purges
    assert purges[0]["bytes"] == d_capacity, (purges, d_capacity)
    assert purges[0]["started_at"] < rows[0]["started_at"], (purges, rows[0])
    assert st["trimmed_bytes"] - before["trimmed_bytes"] >= d_capacity, st
    # a return to baseline after each wait state, and one before the burst
    # the restart went on with (the outage was idle time too)
    base = [(r["wait_state"], r["repetition"]) for r in rows if r["kind"] == "baseline"]
    assert sorted(b for b in base if b[1] == 1) == [(1, 1), (2, 1), (3, 1)], base
    assert (2, 0) in base, base
    # and, the next burst being the second of its wait state, the wait the
    # burst before it would have left (the PTS period), counted too
    resumed = [r for r in rows if r["kind"] == "baseline" and r["repetition"] == 0]
    assert [r["wait_state"] for r in resumed] == [2], resumed
    assert resumed[0]["idle_after_seconds"] >= WAITS[1], resumed
    assert resumed[0]["idle_media_bytes"] is not None, resumed
    # one precondition, its last round with the verdict
    pre = [r for r in rows if r["kind"] == "precondition"]
    assert 5 <= len(pre) and pre[-1]["steady"] in (0, 1), pre
    assert [r["steady"] for r in pre].count(None) == len(pre) - 1, pre
    # the drive's own counters: each row's host bytes are what it wrote
    # (every I/O completes inside its row), WA their ratio, none below 1
    for r in rows:
        assert r["device_host_bytes"] == r["bytes"] > 0, r
        assert r["device_wa"] == pytest.approx(r["device_media_bytes"] / r["bytes"], rel=1e-9)
        assert r["device_wa"] >= 1.0 and r["device_peak_temp_c"] is not None, r
    its = query(db, "SELECT device_host_bytes AS h, device_media_bytes AS m FROM iterations")
    d_host = st["host_bytes_written"] - before["host_bytes_written"]
    d_flash = st["flash_bytes_written"] - before["flash_bytes_written"]
    host = sum(r["bytes"] for r in rows) + sum(i["h"] for i in its)
    media = sum(r["device_media_bytes"] for r in rows) + sum(i["m"] for i in its)
    idle = sum(r["idle_media_bytes"] or 0 for r in bursts)
    # the drive counted the rows' writes, and the burst the stop cut short;
    # its media writes are the rows', and background GC's while idle: the
    # waits' share of those is theirs, and nothing was written while idle
    # but by the drive itself
    assert host <= d_host and d_flash - media <= st["bg_gc_bytes_moved"], (host, d_host)
    assert media + idle <= d_flash and idle <= st["bg_gc_bytes_moved"], (media, idle, st)
    assert all(r["idle_host_bytes"] == 0 for r in bursts
               if r["idle_after_seconds"] is not None), bursts
    assert st["bg_gc_erases"] > 0, st
    # every stored row's writes count where the iterations' do: the
    # target's counter and its last row are the iterations' bytes plus
    # the rows', each row's total cumulative (the burst the stop cut short
    # has no row: only the drive counted it)
    assert_counted_once(db, rows)
    # recovery: after the longest wait the drive had reclaimed blocks in
    # the background, so the bursts amplified less than the steady-state
    # precondition's last rounds, where GC ran on demand
    longest = [r for r in bursts if r["wait_state"] == 3]
    wa_long = sum(r["device_media_bytes"] for r in longest) / sum(r["bytes"] for r in longest)
    wa_pre = (sum(r["device_media_bytes"] for r in pre[-3:])
              / sum(r["bytes"] for r in pre[-3:]))
    by_state = query(db, "SELECT wait_state, sum(bytes) / 1048576.0 / sum(seconds) AS mibps,"
                         " 1.0 * sum(device_media_bytes) / sum(bytes) AS wa FROM hir_bursts"
                         " WHERE kind = 'burst' GROUP BY wait_state")
    idle_by_state = {s: sum(r["idle_media_bytes"] or 0 for r in bursts
                            if r["wait_state"] == s) for s in (1, 2, 3)}
    print("precondition WA", round(wa_pre, 3), "bursts per wait state",
          [(s["wait_state"], round(s["mibps"], 2), round(s["wa"], 3)) for s in by_state],
          "idle media MiB per wait state",
          {s: round(b / MiB, 2) for s, b in idle_by_state.items()},
          "bg GC MiB", round(st["bg_gc_bytes_moved"] / MiB, 2))
    assert wa_long < wa_pre, (wa_long, wa_pre)
    # the drive collected garbage while idle, and each wait of the longer
    # wait states has the bytes it wrote doing so (the waits of 1 s too,
    # but a loaded machine may spend a wait's GC reading the counters)
    for s in (2, 3):
        waits = [r for r in bursts if r["wait_state"] == s and r["idle_after_seconds"]]
        assert waits and all(r["idle_media_bytes"] > 0 for r in waits), waits

    # show prints the purge, the wait states and their bars; JSON has
    # them whole, the idle media bytes per wait state with them
    out = run_wearmon("show", "1", db=db, check=0).stdout
    hir = out.split("host idle recovery (cycle 1")[1].split("samples\n")[0]
    assert "purge         trim ok" in hir, hir
    assert "precondition" in hir and "burst MiB/s per wait state" in hir, out
    assert "media MiB written while idle per wait state" in hir, out
    assert all(f"{w:g}s █" in hir or f"{w:g}s ▏" in hir for w in WAITS), hir
    shown = json.loads(run_wearmon("show", "1", "--format", "json", db=db, check=0).stdout)
    states = shown["hir"]["wait_states"]
    assert [s["wait_seconds"] for s in states] == list(WAITS), states
    assert all(s["bursts"] == REPS and s["device_wa"] >= 1 for s in states), states
    assert [s["idle_media_bytes"] or 0 for s in states] == [
        idle_by_state[s] for s in (1, 2, 3)], states
    assert [s["waits"] for s in states] == [
        REPS - sum(1 for d in dropped if d[0] == s) for s in (1, 2, 3)], states
    assert [(p["method"], p["outcome"]) for p in shown["hir"]["purges"]] == [("trim", "ok")]
    # the report: a section with the throughput, idle media bytes and
    # device WA charts, and the purge
    run_wearmon("report", "-o", workdir / "r.html", db=db, check=0)
    html = (workdir / "r.html").read_text()
    assert 'href="#hir"' in html and 'id="hir"' in html
    section = html.split('id="hir"')[1].split("</section>")[0]
    assert section.count("<svg") == 3, section[:500]
    assert "Burst throughput against idle time" in section
    assert "Media bytes written while idle" in section
    assert "Device write amplification of the bursts" in section
    assert "Purges" in section and ">trim</td>" in section, section

    # a merged copy carries the rows, each under its cycle
    run_wearmon("merge", "-o", workdir / "m.db", db, check=0)
    merged = query(workdir / "m.db", "SELECT h.kind, h.wait_state, h.repetition, c.number"
                                     " FROM hir_bursts h JOIN cycles c ON c.id = h.cycle_id"
                                     " ORDER BY h.id")
    assert [(m["kind"], m["wait_state"], m["repetition"]) for m in merged] == [
        (r["kind"], r["wait_state"], r["repetition"]) for r in rows]
    # and merging the same database again finds it unchanged
    again = run_wearmon("merge", "-o", workdir / "m.db", db, check=0)
    assert "unchanged" in again.stdout, again.stdout


def poll_status(db, proc, on_stage, timeout):
    """Run `wearmon status` until proc exits; on_stage(stage, eta, cycle)
    with each host idle recovery stage it shows (JSON), in order."""
    seen = []
    end = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < end:
        p = run_wearmon("status", "--format", "json", db=db)
        try:
            t = json.loads(p.stdout)["targets"][0] if p.returncode == 0 else {}
        except (json.JSONDecodeError, IndexError, KeyError):
            t = {}
        hir, cyc = t.get("hir"), (t.get("cycle") or {}).get("number")
        if hir and (not seen or seen[-1][:2] != (hir["stage"], cyc)):
            seen.append((hir["stage"], cyc, hir["eta_seconds"]))
            on_stage(hir["stage"], cyc)
        time.sleep(0.1)
    return seen


@simssd_helper.needs_sim
def test_hir_status_reload_and_counters(workdir):
    """`wearmon status` names the stage and counts the protocol's time left;
    a reload during it (a hir key and an unrelated one) applies from the next
    cycle, nothing run twice or lost; every write the drive counted is in the
    target's host bytes. With a secure_erase method set, each cycle's purge
    is that secure erase (the drive's, through its control file)."""
    # baselines of 2 s, so that a poll of a busy machine sees some
    keys = dict(KEYS, cycles="2", hir_wait_states="1s 2s", hir_repetitions="1",
                hir_baseline="2s", hir_round="1s", max_rounds="5", secure_erase="command")
    with simssd_helper.sim_drive(**DRIVE) as d:
        before = d.stats()
        erase = workdir / "erase.sh"
        erase.write_text(f"#!/bin/sh\necho \"$1\" >> {workdir}/erased\n"
                         f"echo secure-erase > {d.control_path}\n")
        erase.chmod(0o755)
        keys["secure_erase_command"] = str(erase)
        loop = d.loop
        db = workdir / "w.db"
        conf = workdir / "w.conf"
        write_conf(conf, target_conf(db, d.loop, keys))
        proc = start_wearmond(conf)
        reloaded = []

        def reload_in_a_wait(stage, cycle):
            if cycle == 1 and not reloaded:
                write_conf(conf, target_conf(db, d.loop, dict(
                    keys, hir_wait_states="1s", queue_depth="4")))
                proc.send_signal(signal.SIGHUP)
                reloaded.append(stage)

        try:
            seen = poll_status(db, proc, reload_in_a_wait, 150)
            text = run_wearmon("status", db=db).stdout
        finally:
            rc, _, err = stop(proc, signal.SIGTERM, timeout=30)
        st = d.stats()
    assert reloaded and rc == 0, err
    assert "reloaded configuration in effect from this cycle" in err, err
    stages = [s for s, _, _ in seen]
    print("stages seen", seen)
    # the stages as status named them (a busy machine's polls may step
    # over a short one), each with a time left, less at the end of the
    # protocol than at its start
    assert all(re.fullmatch(r"purge \(auto\)|precondition round [1-5] of at most 5|"
                            r"wait state \d of [12] \([12]s\), repetition 1 of 1:"
                            r" (idle|burst)|baseline after wait state \d of [12]", s)
               for s in stages), seen
    assert {c for s, c, _ in seen if s.startswith("precondition")} == {1, 2}, seen
    assert any(c == 1 and s.startswith("wait state 2 of 2 (2s)") for s, c, _ in seen), seen
    assert any(s.startswith("baseline after") for s in stages), seen
    assert all(eta is not None and eta >= 0 for _, _, eta in seen), seen
    one = [e for s, c, e in seen if c == 1]
    assert one[0] > one[-1], seen
    # cycle 2 ran the reloaded protocol: one wait state, the new queue depth
    assert any(c == 2 and s.startswith("wait state 1 of 1") for s, c, _ in seen), seen
    assert "host idle recovery" not in text, text  # nothing running once it ended
    rows = query(db, "SELECT h.*, c.number AS cycle FROM hir_bursts h"
                     " JOIN cycles c ON c.id = h.cycle_id ORDER BY h.id")
    got = [(r["cycle"], r["kind"], r["wait_state"], r["wait_seconds"]) for r in rows
           if r["kind"] != "precondition"]
    assert reloaded[0].startswith(("purge", "precondition")), reloaded
    assert got == [(1, "burst", 1, 1.0), (1, "baseline", 1, 1.0), (1, "burst", 2, 2.0),
                   (1, "baseline", 2, 2.0), (2, "burst", 1, 1.0), (2, "baseline", 1, 1.0)], got
    qd = query(db, "SELECT c.number AS cycle, i.queue_depth AS qd FROM iterations i"
                   " JOIN cycles c ON c.id = i.cycle_id WHERE i.workload = 'randwrite'")
    assert {(q["cycle"], q["qd"]) for q in qd} == {(1, 8), (2, 4)}, qd
    # no stop cut a row short: the target's host bytes are exactly what the
    # drive counted, iterations and host idle recovery together
    total = assert_counted_once(db, rows)
    assert total == st["host_bytes_written"] - before["host_bytes_written"], (total, st)
    mapped = query(db, "SELECT max(mapped_bytes) AS m FROM hir_bursts")[0]["m"]
    assert 0 < mapped <= 16 * MiB, mapped
    # each cycle purged by the secure erase, before its precondition: the
    # command ran once per cycle on the device, and the erase emptied the
    # mapped extents (the first round after it maps only what it wrote)
    purges = query(db, "SELECT p.*, c.number AS cycle FROM hir_purges p"
                       " JOIN cycles c ON c.id = p.cycle_id ORDER BY p.id")
    assert [(p["cycle"], p["method"], p["erase"], p["outcome"]) for p in purges] == [
        (1, "secure-erase", "command", "ok"), (2, "secure-erase", "command", "ok")], purges
    assert (workdir / "erased").read_text().split() == [loop, loop]
    for p in purges:
        first = [r for r in rows if r["cycle"] == p["cycle"]][0]
        assert first["kind"] == "precondition" and p["started_at"] < first["started_at"]
        assert first["mapped_bytes"] <= first["bytes"], (p, first)


def test_purge_erase_that_ended_before_a_kill_is_not_run_again(workdir, make_loop):
    """A kill that lands after the purge's secure_erase_command exited 0 but
    before its hir_purges row was stored leaves the erase recorded in the
    commands table and no purge row. The restart takes that erase as the
    purge (its row says so) and does not run the command again. The state
    such a kill leaves is made by stopping once the protocol is past its
    purge and removing the cycle's protocol rows."""
    loop = make_loop(64 * MiB)
    erase = workdir / "erase.sh"
    erased = workdir / "erased"
    erase.write_text(f"#!/bin/sh\necho \"$1\" >> {erased}\n")
    erase.chmod(0o755)
    keys = dict(KEYS, fill_block_size="1M", hir_wait_states="1s", hir_repetitions="1",
                hir_baseline="1s", hir_round="1s", max_rounds="5", hir_burst="0.25s",
                secure_erase="command", secure_erase_command=str(erase))
    db, conf = workdir / "w.db", workdir / "w.conf"
    write_conf(conf, target_conf(db, loop.dev, keys))
    proc = start_wearmond(conf)
    try:
        assert wait_for(lambda: proc.poll() is not None or (db.exists() and query(
            db, "SELECT id FROM hir_bursts WHERE kind = 'precondition'")), 120)
    finally:
        rc, _, err = stop(proc, signal.SIGTERM, timeout=30)
    assert rc == 0, err
    assert erased.read_text().split() == [loop.dev]
    cmds = query(db, "SELECT ended_how, status FROM commands WHERE tag LIKE '%secure_erase%'")
    assert cmds == [{"ended_how": "exited", "status": 0}], cmds
    # what a kill between the erase's end and its row leaves
    subprocess.run(["sqlite3", str(db), "DELETE FROM hir_purges; DELETE FROM hir_bursts"],
                   check=True)

    p = run_wearmond(conf, timeout=300)
    assert p.returncode == 0, p.stderr
    assert erased.read_text().split() == [loop.dev], p.stderr  # not run again
    purges = query(db, "SELECT method, erase, outcome, note FROM hir_purges")
    assert len(purges) == 1, purges
    assert (purges[0]["method"], purges[0]["erase"], purges[0]["outcome"]) == \
        ("secure-erase", "command", "ok"), purges
    assert "ran to its end" in purges[0]["note"] and "not run again" in purges[0]["note"], purges
    cmds = query(db, "SELECT ended_how, status FROM commands WHERE tag LIKE '%secure_erase%'")
    assert cmds == [{"ended_how": "exited", "status": 0}], cmds
    assert query(db, "SELECT count(*) AS n FROM hir_bursts WHERE kind = 'burst'")[0]["n"] == 1
