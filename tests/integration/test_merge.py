"""wearmon merge on databases from real wearmond runs: two machines (the
second one's host name set with the sqlite3 CLI, as the test has only this
machine) with a target of the same name; every row arrives under
HOST/NAME, the hosts and device identities are kept, every view shows each
target as its source does (baselines renumbered), merging again changes
nothing, another database with the same HOST/NAME is refused naming both
(and taken with --rename), OUT must be given and may not be a daemon's
database, and a refused merge leaves no file."""

import fcntl
import functools
import os
import shutil
import struct

import pytest

from conftest import WEARMON, run_wearmon, query, run_wearmond, sh, write_conf

TABLES = ["cycles", "iterations", "samples", "events", "health", "wear", "mapped_extents"]


wearmon = functools.partial(run_wearmon, timeout=120)


def run_machine(d, cycles):
    conf = write_conf(d / "w.conf", f"[wearmon]\ndatabase = {d}/w.db\n\n[target lab1]\n"
                      f"device = {d}/f1.img\nfile_size = 32M\nsizes = 50% 100%\nfill = no\n"
                      f"duration = 0.4s\ncycles = {cycles}\nsample_interval = 0.2s\n")
    p = run_wearmond(conf, timeout=120)
    assert p.returncode == 0, p.stderr
    db = d / "w.db"
    # an alert on the last iteration, as wearmond records one (whether a real
    # run raises one depends on the load of the machine)
    sh("sqlite3", db, "INSERT INTO events (target_id, run_id, cycle_id, iteration_id, severity,"
       " kind, message, value, baseline) SELECT target_id, run_id, cycle_id, id, 'warning',"
       " 'throughput-crash', 'slow', 1, 2 FROM iterations ORDER BY id DESC LIMIT 1")
    return db


@pytest.fixture(scope="module")
def machines(tmp_path_factory):
    a = run_machine(tmp_path_factory.mktemp("m1"), 2)
    b = run_machine(tmp_path_factory.mktemp("m2"), 3)
    sh("sqlite3", b, "UPDATE runs SET hostname = 'm2'")
    host_a = query(a, "SELECT hostname FROM runs")[0]["hostname"]
    return a, b, host_a


def counts(db, target_id=None):
    where = "" if target_id is None else f" WHERE target_id = {target_id}"
    out = {}
    for t in TABLES:
        if t in ("samples", "wear"):
            sql = (f"SELECT count(*) AS n FROM {t} WHERE iteration_id IN (SELECT id FROM"
                   f" iterations{where})")
        else:
            sql = f"SELECT count(*) AS n FROM {t}{where}"
        out[t] = query(db, sql)[0]["n"]
    return out


def history(db, target):
    return [(r["cycle"], r["iteration"], r["size_bytes"], r["mibps_avg"], r["status"])
            for r in query(db, f"SELECT * FROM history WHERE target = '{target}'"
                               " ORDER BY cycle, iteration")]


def test_merge_two_machines_and_again(machines, tmp_path):
    a, b, host_a = machines
    out = tmp_path / "lab.db"
    p = wearmon("merge", "-o", out, a, b, check=0)
    assert f"{a}: host {host_a}, 1 target, 2 cycles, 4 iterations" in p.stdout
    assert f"{b}: host m2, 1 target, 3 cycles, 6 iterations" in p.stdout
    names = {t["name"]: t for t in query(out, "SELECT * FROM targets")}
    assert set(names) == {f"{host_a}/lab1", "m2/lab1"}
    # each target brings every row of its machine, and the same history
    for src, name in ((a, f"{host_a}/lab1"), (b, "m2/lab1")):
        # (the target's rows: run-level events, such as the daemon's
        # integrity-check verdicts, belong to no target and stay behind)
        src_id = query(src, "SELECT id FROM targets")[0]["id"]
        assert counts(out, names[name]["id"]) == counts(src, src_id)
        assert history(out, name) == history(src, "lab1")
        ident = query(src, "SELECT device, kind, capacity_bytes, serial, first_seen"
                           " FROM targets")[0]
        assert {k: names[name][k] for k in ident} == ident
    assert counts(out)["events"] >= 2
    assert query(out, "SELECT count(*) AS n FROM alerts WHERE target LIKE '%/lab1'"
                      " AND cycle IS NOT NULL")[0]["n"] >= 2
    assert sorted(r["hostname"] for r in query(out, "SELECT hostname FROM runs")) == \
        sorted([host_a, "m2"])
    before = {t: query(out, f"SELECT count(*) AS n FROM {t}")[0]["n"]
              for t in TABLES + ["runs", "targets"]}
    hist = history(out, "m2/lab1")
    # again: nothing changes
    wearmon("merge", "-o", out, a, b, check=0)
    assert {t: query(out, f"SELECT count(*) AS n FROM {t}")[0]["n"]
            for t in TABLES + ["runs", "targets"]} == before
    assert history(out, "m2/lab1") == hist
    # the views and the other commands work on the merged database
    assert wearmon("-d", out, "status", check=0).stdout.count("/lab1  ") == 2
    assert query(out, "SELECT count(*) AS n FROM degradation")[0]["n"] == 10


def test_merge_refuses_unknown_schemas(machines, tmp_path):
    a, _, _ = machines
    out = tmp_path / "lab.db"
    wearmon("merge", "-o", out, a, check=0)
    before = counts(out)
    newer = tmp_path / "newer.db"
    shutil.copy(a, newer)
    sh("sqlite3", newer, "PRAGMA user_version = 99")
    p = wearmon("merge", "-o", out, newer, check=1)
    assert f"{newer}: schema version 99 is newer than this wearmon knows" in p.stderr
    foreign = tmp_path / "foreign.db"
    sh("sqlite3", foreign, "CREATE TABLE t (x); PRAGMA user_version = 3")
    p = wearmon("merge", "-o", out, foreign, check=1)
    assert f"{foreign}: not a wearmon database" in p.stderr
    assert counts(out) == before
    p = wearmon("merge", "-o", out, out, check=1)
    assert "is the output database itself" in p.stderr
    p = wearmon("merge", "-o", out, tmp_path / "missing.db", check=1)
    assert "missing.db" in p.stderr
    p = wearmon("merge", "-o", out, check=2)
    assert "wants -o OUT.db" in p.stderr


VIEWS = ["history", "degradation", "cycle_summary", "alerts"]


def view_rows(db, view, target):
    """The view's rows of target, ids and the target name aside, sorted."""
    rows = query(db, f"SELECT * FROM {view} WHERE target = '{target}'")
    keep = [{k: v for k, v in r.items() if k != "target" and k != "id"
             and not k.endswith("_id")} for r in rows]
    return sorted(keep, key=lambda r: sorted((k, str(v)) for k, v in r.items()))


def test_merge_views_equal_their_sources(machines, tmp_path):
    """Every view of every merged target equals its source's (the second
    input's baselines point at its own iterations, not the first's)."""
    a, b, host_a = machines
    out = tmp_path / "lab.db"
    wearmon("merge", "-o", out, a, b, check=0)
    for src, name in ((a, f"{host_a}/lab1"), (b, "m2/lab1")):
        for view in VIEWS:
            assert view_rows(out, view, name) == view_rows(src, view, "lab1"), (view, name)
        # each ratio is the row's rate over its own baseline's, as merged:
        # a baseline taken from the other input would not give it (the
        # rates themselves are the machine's and bound nothing)
        rows = [r for r in query(out, "SELECT ratio, mibps_avg, baseline_mibps FROM degradation"
                                      f" WHERE target = '{name}'") if r["ratio"] is not None]
        assert rows
        assert all(r["ratio"] > 0 and r["ratio"] == pytest.approx(
            r["mibps_avg"] / r["baseline_mibps"], rel=1e-6) for r in rows), rows
    bad = query(out, "SELECT count(*) AS n FROM iterations i JOIN iterations b"
                     " ON b.id = i.baseline_iteration_id WHERE b.target_id != i.target_id")
    assert bad[0]["n"] == 0


def test_merge_same_source_again_or_another_refused(machines, tmp_path):
    a, b, host_a = machines
    out = tmp_path / "lab.db"
    wearmon("merge", "-o", out, a, check=0)
    before = {t: query(out, f"SELECT count(*) AS n FROM {t}")[0]["n"]
              for t in TABLES + ["runs", "targets"]}
    # the same rows again, also from a copy: unchanged
    copy = tmp_path / "copy.db"
    shutil.copy(a, copy)
    p = wearmon("merge", "-o", out, a, copy, check=0)
    assert p.stdout.count("unchanged") == 2
    assert {t: query(out, f"SELECT count(*) AS n FROM {t}")[0]["n"]
            for t in TABLES + ["runs", "targets"]} == before
    # another machine that calls itself the same: refused, naming both
    twin = tmp_path / "twin.db"
    shutil.copy(b, twin)
    sh("sqlite3", twin, f"UPDATE runs SET hostname = '{host_a}'")
    p = wearmon("merge", "-o", out, twin, check=1)
    assert str(twin) in p.stderr and str(a) in p.stderr
    assert f"{host_a}/lab1" in p.stderr and f"--rename {twin}=HOST" in p.stderr
    assert {t: query(out, f"SELECT count(*) AS n FROM {t}")[0]["n"]
            for t in TABLES + ["runs", "targets"]} == before
    # in one command, into a new file, too
    p = wearmon("merge", "-o", tmp_path / "new.db", a, twin, check=1)
    assert str(twin) in p.stderr and str(a) in p.stderr
    # taken under another host name
    p = wearmon("merge", "-o", out, "--rename", f"{twin}=twin", twin, check=0)
    assert f"host {host_a} as twin" in p.stdout
    assert view_rows(out, "history", "twin/lab1") == view_rows(b, "history", "lab1")
    assert view_rows(out, "history", f"{host_a}/lab1") == view_rows(a, "history", "lab1")
    p = wearmon("merge", "-o", out, "--rename", "nothere.db=x", twin, check=2)
    assert "nothere.db is none of the inputs" in p.stderr


def leftovers(path):
    return [p for p in (path, f"{path}-wal", f"{path}-shm", f"{path}-journal")
            if os.path.exists(p)] + [p for p in os.listdir(os.path.dirname(path))
                                     if ".merge-" in p]


def test_merge_out_must_be_given_and_not_a_daemons(machines, tmp_path):
    a, b, _ = machines
    # no OUT: a usage error, and the first input is left as it was
    size = os.path.getsize(a)
    p = wearmon("merge", a, b, check=2)
    assert "wants -o OUT.db" in p.stderr
    assert os.path.getsize(a) == size
    assert query(a, "SELECT count(*) AS n FROM targets")[0]["n"] == 1
    # a daemon's own database: refused
    own = tmp_path / "own.db"
    shutil.copy(a, own)
    p = wearmon("merge", "-o", own, b, check=1)
    assert f"{own} is a daemon's database" in p.stderr and "'lab1'" in p.stderr
    assert query(own, "SELECT count(*) AS n FROM targets")[0]["n"] == 1
    # a merged database whose lock a daemon holds: refused, naming the pid
    out = tmp_path / "lab.db"
    wearmon("merge", "-o", out, b, check=0)
    fd = os.open(out, os.O_RDWR)
    try:
        # the daemon's lock: an OFD write lock on one byte of the database
        # file past SQLite's own (common/db/db_guard.c LOCK_BYTE)
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK,
                    struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0x40000400, 1, 0))
        p = wearmon("merge", "-o", out, a, check=1)
        assert f"{out} is the database of wearmond pid {os.getpid()}" in p.stderr
    finally:
        os.close(fd)
    assert query(out, "SELECT count(*) AS n FROM targets")[0]["n"] == 1


def test_refused_merge_leaves_no_file(machines, tmp_path):
    a, _, _ = machines
    newer = tmp_path / "newer.db"
    shutil.copy(a, newer)
    sh("sqlite3", newer, "PRAGMA user_version = 99")
    d = tmp_path / "out"
    d.mkdir()
    out = d / "lab.db"
    p = wearmon("merge", "-o", out, newer, check=1)
    assert "schema version 99" in p.stderr
    assert leftovers(str(out)) == []
    p = wearmon("merge", "-o", out, a, d / "missing.db", check=1)
    assert leftovers(str(out)) == []
    # one input refused after another was merged: still nothing
    p = wearmon("merge", "-o", out, a, newer, check=1)
    assert leftovers(str(out)) == []
    wearmon("merge", "-o", out, a, check=0)
    assert sorted(os.listdir(d)) == ["lab.db", "lab.db-shm", "lab.db-wal"]
    assert query(out, "SELECT count(*) AS n FROM targets")[0]["n"] == 1
    # an empty OUT that is there (made by mktemp): refused leaves it empty,
    # a merge fills it
    empty = d / "empty.db"
    empty.touch()
    wearmon("merge", "-o", empty, newer, check=1)
    assert os.path.getsize(empty) == 0 and leftovers(str(empty)) == [str(empty)]
    wearmon("merge", "-o", empty, a, check=0)
    assert query(empty, "SELECT count(*) AS n FROM targets")[0]["n"] == 1


def merge_rchar(*args):
    """Run `wearmon merge args` and return (exit status, bytes it read): a
    shell's /proc/PID/io counts the children it has waited for."""
    cmd = " ".join(f"'{a}'" for a in args)
    p = sh("sh", "-c", f"'{WEARMON}' merge {cmd} >/dev/null 2>&1; s=$?; echo status=$s;"
           " cat /proc/$$/io", check=False)
    fields = dict(line.split("=", 1) if "=" in line else line.split(": ", 1)
                  for line in p.stdout.splitlines())
    return int(fields["status"]), int(fields["rchar"])


def test_merge_unchanged_inputs_again_reads_little(machines, tmp_path):
    """The second merge of unchanged inputs recognises them by a fingerprint
    read through indexes: it reads neither the inputs nor OUT whole."""
    a, _, _ = machines
    big = tmp_path / "big.db"
    shutil.copy(a, big)
    # a long history's bulk: 40,000 rows of 1,000 bytes
    sh("sqlite3", big, "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n"
       " WHERE k < 40000) INSERT INTO events (target_id, severity, kind, message)"
       " SELECT 1, 'info', 'test-bulk', hex(randomblob(500)) FROM n")
    out = tmp_path / "out.db"
    first = merge_rchar("-o", out, big)
    again = merge_rchar("-o", out, big)
    assert first[0] == 0 and again[0] == 0
    assert first[1] > 40000 * 1000, first
    assert again[1] * 5 < first[1], (first, again)
    assert "unchanged" in wearmon("merge", "-o", out, big, check=0).stdout
    assert query(out, "SELECT count(*) AS n FROM events WHERE kind = 'test-bulk'") == \
        [{"n": 40000}]
