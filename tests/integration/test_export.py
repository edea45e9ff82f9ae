"""wearmon export: every table and view of a database from a real wearmond
run, as CSV and JSON, read back and compared with what the sqlite3 CLI
returns for the same rows; the errors a user can make."""

import csv
import functools
import io
import json

import pytest

from conftest import query, run_wearmon, run_wearmond, sh, two_cycle_file_db, write_conf


wearmon = functools.partial(run_wearmon, timeout=60)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return two_cycle_file_db(tmp_path_factory.mktemp("export"))


def same(a, b):
    """Equal, floats to 12 significant digits (sqlite3 prints 15 or 17)."""
    if isinstance(a, float) or isinstance(b, float):
        return b is not None and a is not None and abs(float(a) - float(b)) <= 1e-12 * max(
            1.0, abs(float(a)))
    return a == b


@pytest.mark.parametrize("name", ["history", "cycle_summary", "degradation", "alerts",
                                  "overprovisioning", "samples", "iterations", "cycles",
                                  "targets", "runs", "events", "wear", "health"])
def test_json_export_is_the_table(db, name):
    got = json.loads(wearmon("-d", db, "export", name, "--format", "json", check=0).stdout)
    want = query(db, f"SELECT * FROM {name}")
    assert len(got) == len(want)
    assert len(got) > 0 or name in ("alerts", "events")
    for g, w in zip(got, want):
        assert list(g) == list(w)
        assert all(same(g[k], w[k]) for k in w), (g, w)


def test_csv_export_reads_back(db):
    out = wearmon("-d", db, "export", "cycle_summary", check=0).stdout   # csv by default
    rows = list(csv.DictReader(io.StringIO(out)))
    want = query(db, "SELECT * FROM cycle_summary")
    assert [r["cycle"] for r in rows] == [str(w["cycle"]) for w in want] == ["1", "2"]
    assert list(rows[0]) == list(want[0])
    for r, w in zip(rows, want):
        assert float(r["mibps_avg"]) == pytest.approx(w["mibps_avg"], rel=1e-12)
    # an empty table still names its columns
    out = wearmon("-d", db, "export", "progress", "--format", "csv", check=0).stdout
    assert out.startswith("target_id,updated_at,cycle,")


def test_export_to_a_file(db, tmp_path):
    wearmon("-d", db, "export", "samples", "--format", "json", "-o", tmp_path / "s.json",
            check=0)
    rows = json.loads((tmp_path / "s.json").read_text())
    assert len(rows) == query(db, "SELECT count(*) AS n FROM samples")[0]["n"] > 0


def test_export_errors(db, tmp_path):
    p = wearmon("-d", db, "export", "nosuch", check=1)
    assert "has no table or view named 'nosuch'" in p.stderr and "cycle_summary" in p.stderr
    p = wearmon("-d", db, "export", check=2)
    assert "missing TABLE or VIEW" in p.stderr
    p = wearmon("-d", db, "export", "history", "runs", check=2)
    assert "unexpected argument 'runs'" in p.stderr
    p = wearmon("-d", db, "export", "history", "--format", "table", check=2)
    assert "--format is csv or json" in p.stderr
    p = wearmon("-d", db, "export", "history", "-o", tmp_path / "no" / "x.csv", check=1)
    assert "cannot write" in p.stderr
    # a quote in the name is only ever a name looked up, never SQL
    p = wearmon("-d", db, "export", 'history" WHERE 0 --', check=1)
    assert "no table or view" in p.stderr


@pytest.fixture(scope="module")
def db2(tmp_path_factory):
    """Two targets measured side by side, so a filter has rows to drop."""
    d = tmp_path_factory.mktemp("export2")
    conf = write_conf(d / "w.conf", f"[wearmon]\ndatabase = {d}/w.db\n\n"
                      + "".join(f"[target {t}]\ndevice = {d}/{t}.img\nfile_size = 16M\n"
                                "sizes = 100%\nfill = no\nduration = 0.5s\ncycles = 2\n"
                                "sample_interval = 0.25s\n\n" for t in ("f1", "f2")))
    p = run_wearmond(conf, timeout=120)
    assert p.returncode == 0, p.stderr
    return d / "w.db"


@pytest.mark.parametrize("name", ["samples", "iterations", "cycles", "events"])
def test_export_of_one_target_is_the_filtered_export(db2, name):
    """--target keeps exactly that target's rows, in the same order."""
    ids = {t["name"]: t["id"] for t in query(db2, "SELECT id, name FROM targets")}
    its = {r["id"]: r["target_id"] for r in query(db2, "SELECT id, target_id FROM iterations")}
    every = json.loads(wearmon("export", name, "--format", "json", db=db2, check=0).stdout)
    for t, tid in ids.items():
        one = json.loads(wearmon("export", name, "--target", t, "--format", "json",
                                 db=db2, check=0).stdout)
        want = [r for r in every if r.get("target_id", its.get(r.get("iteration_id"))) == tid]
        assert one == want and (name == "events" or want), (t, name)


def test_export_of_one_target_for_every_table_and_view_that_names_it(db2):
    """Every table and view with a target_id, iteration_id or only a target
    (name) column exports one target's rows: exactly those of the whole
    export that belong to it, each once."""
    ids = {t["name"]: t["id"] for t in query(db2, "SELECT id, name FROM targets")}
    its = {r["id"]: r["target_id"] for r in query(db2, "SELECT id, target_id FROM iterations")}
    names = [r["name"] for r in query(db2, "SELECT name FROM sqlite_master WHERE type IN"
                                      " ('table', 'view') AND name NOT LIKE 'sqlite%'")]
    by_name = []
    for name in names:
        cols = {r["name"] for r in query(db2, f"SELECT name FROM pragma_table_info('{name}')")}
        if not cols & {"target_id", "iteration_id", "target"}:
            p = wearmon("export", name, "--target", "f1", db=db2, check=1)
            assert "no target_id, iteration_id or target (name) column" in p.stderr, name
            continue
        if "target" in cols and "target_id" not in cols:
            by_name.append(name)
        every = json.loads(wearmon("export", name, "--format", "json", db=db2,
                                   check=0).stdout)
        key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
        for t, tid in ids.items():
            one = json.loads(wearmon("export", name, "--target", t, "--format", "json",
                                     db=db2, check=0).stdout)
            if "target_id" in cols:
                want = [r for r in every if r["target_id"] == tid]
            elif "target" in cols:
                want = [r for r in every if r["target"] == t]
            else:
                want = [r for r in every if its.get(r["iteration_id"]) == tid]
            assert sorted(one, key=key) == sorted(want, key=key), (name, t)
    # the views that name their target by name only are among them
    assert "cycle_summary" in by_name and "history" in by_name, by_name


def test_export_of_one_target_reads_no_other(db2):
    """The plan of the per-target samples export finds the rows by index:
    no full scan of sample_data (common/db/query/query.c)."""
    sql = ("SELECT x.* FROM iterations i JOIN \"samples\" x ON x.iteration_id = i.id"
           " WHERE i.target_id = (SELECT id FROM targets WHERE name = 'f1') ORDER BY i.id")
    plan = sh("sqlite3", "-readonly", db2, "EXPLAIN QUERY PLAN " + sql).stdout
    assert "SCAN" not in plan and "USING PRIMARY KEY (iteration_id=?)" in plan, plan


def test_export_target_errors(db2):
    p = wearmon("export", "samples", "--target", "nope", db=db2, check=1)
    assert "nope" in p.stderr
    p = wearmon("export", "targets", "--target", "f1", db=db2, check=1)
    assert "no target_id, iteration_id or target (name) column" in p.stderr
