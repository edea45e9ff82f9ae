"""The endurance forecast against a simulated SSD run to the end of its
rated life: the simulator wears out (endurance, accelerated wear) and
knows the host bytes written when its wear indicator first reached 100 %;
the forecast made at 10 %, 30 % and 60 % of that life (wearmon show of the
first iteration after the indicator got there: the forecast as it stood
then) is compared with it. The workload is steady, so the wear rate is:
the comparison is in host bytes, which the machine's speed does not
change; the times are printed. status, the report and the metrics file
say the same."""

import json
import re

import pytest

import simssd_helper
from conftest import (query, run_wearmon, stop, start_wearmond, two_cycle_file_db, wait_for,
                      write_conf)

pytestmark = simssd_helper.needs_sim

# 16 MiB, fast flash: 64 KiB random writes wear it 1 % in about half a
# second of writing (erase counts x 10 against an endurance of 3000).
DRIVE = dict(capacity="16M", page="4k", erase_block="64k", spare=7, channels=4,
             t_prog="100us", t_read="20us", t_erase="500us", cache="512k",
             endurance=3000, wear_accel=10)


def conf_text(db, dev, metrics):
    keys = {"device": dev, "allow_destroy": "yes", "sizes": "100%", "fill": "no",
            "workload": "randwrite", "block_size": "64k", "queue_depth": "8",
            "amount": "1x", "sample_interval": "0.5s", "cycles": "0",
            "rated_tbw": "1GB", "warranty_years": "1", "warranty_start": "2026-01-15"}
    body = "\n".join(f"{k} = {v}" for k, v in keys.items())
    return (f"[wearmon]\ndatabase = {db}\nmetrics_file = {metrics}\n\n"
            f"[target sim]\n{body}\n")


def forecast_at(db, pct):
    """The forecast as it stood at the first iteration that started once
    the wear indicator read pct: wearmon show's endurance member."""
    rows = query(db, "SELECT min(id) AS id FROM iterations WHERE started_at >"
                     f" (SELECT min(at) FROM health WHERE percentage_used >= {pct})")
    assert rows and rows[0]["id"], f"no iteration after {pct} %"
    p = run_wearmon("show", "--format", "json", rows[0]["id"], db=db, check=0)
    return json.loads(p.stdout)["endurance"]


def metric(text, name):
    m = re.search(rf"^{name}{{[^}}]*}} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def test_forecast_from_30_percent_lands_within_10_percent_of_the_end(workdir):
    db = workdir / "f.db"
    (workdir / "textfile").mkdir()
    metrics = workdir / "textfile" / "wearmon.prom"
    with simssd_helper.sim_drive(**DRIVE) as d:
        conf = write_conf(workdir / "f.conf", conf_text(db, d.loop, metrics))
        p = start_wearmond(conf)
        try:
            # wait on the drive: its indicator past 100 % in a snapshot
            assert wait_for(lambda: query(
                db, "SELECT 1 AS y FROM health WHERE percentage_used >= 101"), timeout=1200), \
                d.stats()
        finally:
            rc, _, err = stop(p)
        assert rc == 0, err
        st = d.stats()
    truth = st["life_end_host_bytes"]
    assert truth > 0, st
    end_at = query(db, "SELECT (julianday(min(at)) - 2440587.5) * 86400 AS t FROM health"
                       " WHERE percentage_used >= 100")[0]["t"]
    start_at = query(db, "SELECT (julianday(min(at)) - 2440587.5) * 86400 AS t"
                         " FROM health")[0]["t"]
    got = {}
    for pct in (10, 30, 60):
        e = forecast_at(db, pct)
        assert e["status"] == "ok", e
        got[pct] = e
        err = (e["end_host_bytes"] - truth) / truth
        print(f"from {pct} %: {e['end_host_bytes'] / 1e9:.3f} GB"
              f" [{e['end_host_bytes_lo'] / 1e9:.3f}, {e['end_host_bytes_hi'] / 1e9:.3f}]"
              f" against {truth / 1e9:.3f} GB ({100 * err:+.1f} %); end"
              f" {e['end_unix'] - start_at:.1f} s [{e['end_unix_lo'] - start_at:.1f},"
              f" {e['end_unix_hi'] - start_at:.1f}] against {end_at - start_at:.1f} s"
              f" (first snapshot at 100 %)")
    e = got[30]
    assert abs(e["end_host_bytes"] - truth) <= 0.10 * truth
    assert e["end_host_bytes_lo"] <= truth <= e["end_host_bytes_hi"]
    # the later forecast knows more: no wider
    assert (got[60]["end_host_bytes_hi"] - got[60]["end_host_bytes_lo"]
            <= e["end_host_bytes_hi"] - e["end_host_bytes_lo"])
    # 1 GB rated, the drive lasted about 1.5: the ratio says so
    assert e["rated_ratio"] == pytest.approx(e["end_host_bytes"] / 1e9)

    # status: the drive reached its end, as observed
    s = json.loads(run_wearmon("status", "--format", "json", db=db, check=0).stdout)
    now = s["targets"][0]["endurance"]
    assert now["status"] == "reached", now
    assert "reached 100 % used" in now["words"]
    assert now["end_host_bytes_lo"] <= truth <= now["end_host_bytes_hi"]
    text = run_wearmon("status", db=db, check=0).stdout
    assert "endurance   The drive reached 100 % used" in text, text
    # the metrics file written at exit: the same forecast
    m = metrics.read_text()
    assert metric(m, "wearmon_endurance_end_timestamp_seconds") == \
        pytest.approx(now["end_unix"], abs=1e-3)
    assert metric(m, "wearmon_endurance_host_written_bytes_at_end") == \
        pytest.approx(now["end_host_bytes"], rel=1e-9)
    assert metric(m, "wearmon_endurance_days_left") < 0   # reached: in the past

    # the report: the section, its chart and the same sentence
    run_wearmon("report", "-o", workdir / "r.html", db=db, check=0)
    html = (workdir / "r.html").read_text()
    sec = html[html.index('<section id="endurance">'):]
    sec = sec[:sec.index("</section>")]
    assert "<svg" in sec and "Wear indicator against time" in sec
    assert "reached 100 % used" in sec and "rated 1.00 GBW" in sec


def test_a_file_has_no_forecast_and_status_says_nothing_of_it(workdir):
    """A regular file reports no wear indicator: JSON says so, the table
    and show leave the line out, the report's section says it in words."""
    db = two_cycle_file_db(workdir)
    s = json.loads(run_wearmon("status", "--format", "json", db=db, check=0).stdout)
    e = s["targets"][0]["endurance"]
    assert e["status"] == "no-indicator" and e["end_unix"] is None, e
    assert "endurance" not in run_wearmon("status", db=db, check=0).stdout
    assert "endurance" not in run_wearmon("show", 1, db=db, check=0).stdout
    run_wearmon("report", "-o", workdir / "r.html", db=db, check=0)
    html = (workdir / "r.html").read_text()
    assert "The drive reports no wear indicator (percentage used): no forecast." in html
