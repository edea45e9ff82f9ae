"""wearmon merge on databases from real wearmond runs: two machines (the
second one's host name set with the sqlite3 CLI, as the test has only this
machine) with a target of the same name; every row arrives under
HOST/NAME, the hosts and device identities are kept, merging again changes
nothing, and unknown schemas are refused."""

import functools
import shutil

import pytest

from conftest import run_wearmon, query, run_wearmond, sh, write_conf

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
    p = wearmon("merge", out, a, b, check=0)
    assert f"{a}: host {host_a}, 1 target, 2 cycles, 4 iterations" in p.stdout
    assert f"{b}: host m2, 1 target, 3 cycles, 6 iterations" in p.stdout
    names = {t["name"]: t for t in query(out, "SELECT * FROM targets")}
    assert set(names) == {f"{host_a}/lab1", "m2/lab1"}
    # each target brings every row of its machine, and the same history
    for src, name in ((a, f"{host_a}/lab1"), (b, "m2/lab1")):
        assert counts(out, names[name]["id"]) == counts(src)
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
    wearmon("merge", out, a, b, check=0)
    assert {t: query(out, f"SELECT count(*) AS n FROM {t}")[0]["n"]
            for t in TABLES + ["runs", "targets"]} == before
    assert history(out, "m2/lab1") == hist
    # the views and the other commands work on the merged database
    assert wearmon("-d", out, "status", check=0).stdout.count("/lab1  ") == 2
    assert query(out, "SELECT count(*) AS n FROM degradation")[0]["n"] == 10


def test_merge_refuses_unknown_schemas(machines, tmp_path):
    a, _, _ = machines
    out = tmp_path / "lab.db"
    wearmon("merge", out, a, check=0)
    before = counts(out)
    newer = tmp_path / "newer.db"
    shutil.copy(a, newer)
    sh("sqlite3", newer, "PRAGMA user_version = 99")
    p = wearmon("merge", out, newer, check=1)
    assert f"{newer}: schema version 99 is newer than this wearmon knows" in p.stderr
    foreign = tmp_path / "foreign.db"
    sh("sqlite3", foreign, "CREATE TABLE t (x); PRAGMA user_version = 3")
    p = wearmon("merge", out, foreign, check=1)
    assert f"{foreign}: not a wearmon database" in p.stderr
    assert counts(out) == before
    p = wearmon("merge", out, out, check=1)
    assert "is the output database itself" in p.stderr
    p = wearmon("merge", out, tmp_path / "missing.db", check=1)
    assert "missing.db" in p.stderr
    p = wearmon("merge", out, check=2)
    assert "wants OUT.db and at least one IN.db" in p.stderr
