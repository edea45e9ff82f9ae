"""wearmon export: every table and view of a database from a real wearmond
run, as CSV and JSON, read back and compared with what the sqlite3 CLI
returns for the same rows; the errors a user can make."""

import csv
import functools
import io
import json

import pytest

from conftest import query, run_wearmon, two_cycle_file_db


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
