"""What wearmon shows of long texts and the numbers people use: alerts whole
with the cycle and iteration numbers of history (and the ID for show), show
with the health JSON whole, and show as JSON. The database comes from a
real wearmond run; one long alert is added with the sqlite3 CLI, worded as
wearmond words a crash."""

import functools
import json
import re
import subprocess

import pytest

from conftest import REPO, query, run_wearmon, sh, two_cycle_file_db

LONG = ("throughput crash on f1: cycle 2 iteration 1 (16.00 MiB randwrite bs 4096 QD32) "
        "ran at 12.3 MiB/s, which is 11% of the first baseline 111.8 MiB/s of cycle 1")


wearmon = functools.partial(run_wearmon, timeout=60)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = two_cycle_file_db(tmp_path_factory.mktemp("formats"))
    it = query(path, "SELECT i.id, i.cycle_id, i.target_id FROM iterations i JOIN cycles c"
                     " ON c.id = i.cycle_id WHERE c.number = 2 AND i.number = 1")[0]
    assert it["id"] != 1   # the row id differs from the iteration number
    sh("sqlite3", path, "INSERT INTO events (target_id, cycle_id, iteration_id, severity,"
       f" kind, message, value, baseline) VALUES ({it['target_id']}, {it['cycle_id']},"
       f" {it['id']}, 'warning', 'throughput-crash', '{LONG}', 12.3, 111.8)")
    return path, it["id"]


def test_alerts_whole_with_the_numbers_of_history(db):
    path, it_id = db
    assert len(LONG) > 120
    out = wearmon("-d", path, "alerts", check=0).stdout
    # the run itself may have raised an alert (a loaded machine's dip): the
    # row added here is the one whose message is LONG
    head, rows = out.splitlines()[0], out.splitlines()[1:]
    assert head.split()[5:9] == ["CYCLE", "IT", "ID", "MESSAGE"], head
    row = [r for r in rows if LONG in r]
    assert len(row) == 1, out
    row = row[0]
    assert row.endswith(LONG), row          # whole, the key number at the end
    fields = row.split()
    assert fields[5:8] == ["2", "1", str(it_id)], row
    js = json.loads(wearmon("-d", path, "alerts", "--format", "json", check=0).stdout)
    ours = [a for a in js if a["message"] == LONG]
    assert len(ours) == 1, js
    assert (ours[0]["cycle"], ours[0]["iteration"], ours[0]["iteration_id"]) == (2, 1, it_id)
    # history's numbers are the same ones
    hist = json.loads(wearmon("-d", path, "history", "--format", "json", check=0).stdout)
    h = next(r for r in hist if r["id"] == it_id)
    assert (h["cycle"], h["iteration"]) == (2, 1)


def test_show_prints_long_texts_whole_and_speaks_json(db):
    path, it_id = db
    out = wearmon("-d", path, "show", it_id, check=0).stdout
    data = query(path, f"SELECT data FROM health WHERE cycle_id = (SELECT cycle_id FROM"
                       f" iterations WHERE id = {it_id})")[0]["data"]
    assert f"  data                   {data}\n" in out
    assert LONG in out
    js = json.loads(wearmon("-d", path, "show", it_id, "--format", "json", check=0).stdout)
    assert js["iteration"]["id"] == it_id and js["iteration"]["cycle"] == 2
    assert js["iteration"]["number"] == 1
    n = query(path, f"SELECT count(*) AS n FROM samples WHERE iteration_id = {it_id}")[0]["n"]
    assert len(js["samples"]) == n > 0
    assert js["health"][0]["data"] == data and json.loads(data)
    # the one added here, whole (the run itself may have raised an alert on
    # the same iteration: a loaded machine's dip)
    assert [e["message"] for e in js["events"] if e["message"].startswith(LONG[:40])] == [LONG]
    p = wearmon("-d", path, "show", it_id, "--format", "csv", check=2)
    assert "--format is table or json" in p.stderr


def test_readme_queries_show_no_action_that_did_not_run(db):
    """On a run whose cycles had no action between them (action 'none',
    outcome 'skipped'), the README's queries about actions return no row
    for them."""
    path, _ = db
    assert {(c["action"], c["action_outcome"]) for c in query(
        path, "SELECT action, action_outcome FROM cycles")} == {("none", "skipped")}
    text = (REPO / "README.md").read_text()
    blocks = [b for b in re.findall(r"```sql\n(.*?)```", text, re.S) if "action" in b]
    assert len(blocks) >= 3
    for sql in blocks:
        p = subprocess.run(["sqlite3", "-readonly", "-json", str(path)], input=sql,
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0 and not p.stderr, p.stderr
        rows = json.loads(p.stdout) if p.stdout.strip() else []
        if "gain" in sql or "action_bytes / 1073741824.0" in sql:   # about actions only
            assert rows == [], f"{sql}\n{rows}"


def test_history_names_each_column_once(db):
    """history's csv and json carry every column of iterations once: the
    stored ratio (iterations.ratio) is not repeated beside the computed one,
    and it is the same figure (the ratio to the row's baseline)."""
    path, _ = db
    head = wearmon("-d", path, "history", "--format", "csv", check=0).stdout.splitlines()[0]
    names = head.split(",")
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    assert names[-3:] == ["baseline_mibps", "baseline_cycle", "ratio"], names[-3:]

    def no_repeats(pairs):
        keys = [k for k, _ in pairs]
        assert len(keys) == len(set(keys)), [k for k in keys if keys.count(k) > 1]
        return dict(pairs)

    rows = json.loads(wearmon("-d", path, "history", "--format", "json", check=0).stdout,
                      object_pairs_hook=no_repeats)
    stored = {r["id"]: r["ratio"] for r in query(path, "SELECT id, ratio FROM iterations")}
    assert any(r["ratio"] is not None for r in rows), rows
    for r in rows:
        if stored[r["id"]] is None:
            assert r["ratio"] is None, r
        else:
            assert abs(r["ratio"] - stored[r["id"]]) < 1e-9, (r, stored[r["id"]])
