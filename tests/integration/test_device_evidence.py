"""The drive's own evidence per iteration: on the simulated SSD,
whose counters file is the truth, every iteration stores the host and
media bytes the drive counted over it and their ratio, and the rows'
ratios weighted by their host bytes are the drive's own; a loop device
without counters stores none of it (NULL, never 0)."""

import json
import re

import pytest

import simssd_helper
from conftest import MiB, query, run_wearmon, run_wearmond, target_conf, write_conf

# A small drive (tests/integration/test_wear_sim.py's): a full rewrite of it
# garbage-collects, so the rows' write amplification differs.
DRIVE = dict(capacity="32M", page="4k", erase_block="128k", spare=7, channels=4,
             t_prog="800us", t_read="50us", t_erase="2ms", cache="512k")

KEYS = {"allow_destroy": "yes", "fill": "yes", "fill_block_size": "128k",
        "fill_queue_depth": "8", "workload": "randwrite", "block_size": "4k",
        "queue_depth": "16", "duration": "2s", "sample_interval": "0.5s"}

DEVICE_COLUMNS = ("device_host_bytes", "device_media_bytes", "device_wa", "device_peak_temp_c",
                  "device_throttle_seconds", "device_media_errors", "device_spare_pct")


@simssd_helper.needs_sim
def test_iteration_write_amplification_adds_up_to_the_drives(workdir):
    with simssd_helper.sim_drive(**DRIVE) as d:
        before = d.stats()
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf", target_conf(
            db, d.loop, KEYS, sizes="50% 100%", cycles="2"))
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
        st = d.stats()
    rows = query(db, "SELECT number, status, " + ", ".join(DEVICE_COLUMNS)
                 + " FROM iterations ORDER BY id")
    assert len(rows) == 4 and all(r["status"] == "done" for r in rows), rows
    for r in rows:
        assert r["device_host_bytes"] > 0 and r["device_media_bytes"] > 0, r
        assert r["device_wa"] == pytest.approx(
            r["device_media_bytes"] / r["device_host_bytes"], rel=1e-9)
        assert r["device_wa"] >= 1.0, r
    host = sum(r["device_host_bytes"] for r in rows)
    weighted = sum(r["device_wa"] * r["device_host_bytes"] for r in rows) / host
    d_host = st["host_bytes_written"] - before["host_bytes_written"]
    d_flash = st["flash_bytes_written"] - before["flash_bytes_written"]
    print("per-iteration WA", [round(r["device_wa"], 3) for r in rows],
          "host MiB", [round(r["device_host_bytes"] / MiB, 1) for r in rows],
          f"weighted {weighted:.4f} drive {d_flash / d_host:.4f}",
          f"rows' host bytes {host} of the drive's {d_host}")
    # every host write of the run is inside an iteration (fill included):
    # the rows hold the drive's bytes and its ratio exactly
    assert host == d_host
    assert sum(r["device_media_bytes"] for r in rows) == d_flash
    assert weighted == pytest.approx(d_flash / d_host, rel=1e-9)
    # the second cycle rewrites a full drive: more garbage collection
    assert rows[3]["device_wa"] > rows[0]["device_wa"], rows


def test_no_counters_no_evidence(workdir, make_loop):
    """A plain loop device reports nothing of its own: NULL, not 0."""
    loop = make_loop(16 * MiB)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(
        db, loop.dev, dict(KEYS, fill="no"), sizes="8M", cycles="1", duration="1s"))
    p = run_wearmond(conf, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = query(db, "SELECT " + ", ".join(DEVICE_COLUMNS) + " FROM iterations")
    assert rows and all(v is None for r in rows for v in r.values()), rows
    # show says so, in words and as JSON nulls; the report has no evidence
    out = run_wearmon("show", "1", db=db, check=0).stdout
    drive = out.split("drive (")[1].split("samples\n")[0]
    assert drive.count("not reported by the drive") == len(DEVICE_COLUMNS), out
    assert "why it slowed" not in out
    shown = json.loads(run_wearmon("show", "1", "--format", "json", db=db, check=0).stdout)
    assert all(shown["iteration"][c] is None for c in DEVICE_COLUMNS), shown["iteration"]
    assert shown["evidence"] == []
    view = query(db, "SELECT device_wa, device_peak_temp_c, device_throttle_seconds FROM history")
    assert view and all(v is None for r in view for v in r.values()), view
    run_wearmon("report", "-o", workdir / "r.html", db=db, check=0)
    html = (workdir / "r.html").read_text()
    assert 'id="evidence"' not in html and 'href="#evidence"' not in html


# Heats fast (its steady state at the fresh rate is far above the throttle
# temperature) and cools within seconds; throttled, it writes 256 KiB/s.
# Throttling at 40 C, it averages about (40 - 35) / thermal_rise = 0.5 MiB/s
# (tools/simssd/README.md, "Temperature and thermal throttling").
HOT = dict(DRIVE, thermal_rise=10, thermal_tau="2s", throttle_rate="256k")


def run_hot(workdir, name, **sim):
    """One 8 MiB iteration of 4k random writes on a simulated drive with
    options sim: (its iteration row, the drive's stats after the run)."""
    with simssd_helper.sim_drive(**sim) as d:
        db = workdir / f"{name}.db"
        conf = write_conf(workdir / f"{name}.conf", target_conf(
            db, d.loop, dict(KEYS, fill="no"), sizes="8M", cycles="1", duration="4s"))
        p = run_wearmond(conf, timeout=300)
        assert p.returncode == 0, p.stderr
        st = d.stats()
    rows = query(db, "SELECT mibps_avg, device_peak_temp_c, device_throttle_seconds,"
                     " device_host_bytes FROM iterations")
    assert len(rows) == 1, rows
    return rows[0], st


@simssd_helper.needs_sim
def test_thermal_throttle_is_in_the_iteration(workdir):
    """The same drive with and without a throttle temperature: both heat
    well above it while writing; the throttled one counts throttle time in
    its iteration and its stats, and writes far slower."""
    cool, cool_st = run_hot(workdir, "free", **HOT)
    hot, hot_st = run_hot(workdir, "throttled", **HOT, throttle_temp=40)
    print(f"no throttle: {cool['mibps_avg']:.2f} MiB/s, peak {cool['device_peak_temp_c']} C;"
          f" throttle at 40 C: {hot['mibps_avg']:.2f} MiB/s, peak {hot['device_peak_temp_c']} C,"
          f" throttled {hot['device_throttle_seconds']} s of the row,"
          f" {hot_st['throttle_seconds']:.2f} s in all")
    assert cool["device_peak_temp_c"] > 40, cool
    assert cool["device_throttle_seconds"] == 0 and cool_st["throttle_seconds"] == 0
    assert hot["device_peak_temp_c"] > 36, hot  # heated, held near 40 C
    assert hot["device_throttle_seconds"] >= 1, hot
    assert hot_st["throttle_seconds"] >= hot["device_throttle_seconds"]
    # throttled it writes about 0.5 MiB/s, free some MiB/s
    assert hot["mibps_avg"] < 0.5 * cool["mibps_avg"], (hot, cool)


def crash_causes(db):
    """(cycle, CAUSE, evidence) of every crash alert stored, from events."""
    return [(r["cycle"], r["cause"], r) for r in query(
        db, "SELECT a.cycle, json_extract(e.data, '$.cause') AS cause,"
            " json_extract(e.data, '$.device_wa') AS wa,"
            " json_extract(e.data, '$.baseline_device_wa') AS base_wa,"
            " json_extract(e.data, '$.throttle_seconds') AS throttled,"
            " json_extract(e.data, '$.peak_temp_c') AS peak,"
            " json_extract(e.data, '$.before') AS before, e.message"
            " FROM alerts a JOIN events e ON e.id = a.event_id"
            " WHERE a.kind = 'throughput-crash' ORDER BY e.id")]


@simssd_helper.needs_sim
def test_crash_cause_thermal(workdir):
    """Two cycles of the same 4 MiB size on a drive that cools slowly: the
    first warms it, the second reaches the throttle temperature and
    throttles; its crash names the thermal cause with its evidence."""
    # each 40 MiB iteration heats the drive at most 10 C (40 x 15 / 60): the
    # first ends below 45 C, the second passes 46 C early on; throttled it
    # writes 2 MiB/s, which keeps it above the end of the hysteresis
    sim = dict(DRIVE, thermal_rise=15, thermal_tau="60s", throttle_temp=46,
               throttle_rate="2M")
    with simssd_helper.sim_drive(**sim) as d:
        db = workdir / "t.db"
        conf = write_conf(workdir / "t.conf", target_conf(
            db, d.loop, dict(KEYS, fill="no", amount="10x", duration="0"), sizes="4M",
            cycles="2"))
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
    rows = query(db, "SELECT mibps_avg, device_peak_temp_c, device_throttle_seconds"
                     " FROM iterations ORDER BY id")
    causes = crash_causes(db)
    print(rows, causes)
    # the iterations end at their amount, whatever the machine's speed
    assert rows[0]["device_throttle_seconds"] == 0 and rows[1]["device_throttle_seconds"] >= 2
    assert [(c, cause) for c, cause, _ in causes][:1] == [(2, "thermal")], causes
    ev = causes[0][2]
    # low from the start of its phase: the dip is the whole measured phase
    # (no fill), judged against the baseline iteration's; to the millisecond
    ms = query(db, "SELECT device_throttle_ms AS ms, device_throttle_res_ms AS res"
                   " FROM iterations ORDER BY id")[1]
    assert ms["res"] == 1 and ms["ms"] // 1000 == rows[1]["device_throttle_seconds"]
    assert ev["throttled"] == pytest.approx(ms["ms"] / 1000, abs=1e-9)
    assert ev["peak"] == rows[1]["device_peak_temp_c"] >= 44
    assert "likely cause: thermal" in ev["message"]
    assert check_evidence_everywhere(workdir, db)[0] == "thermal"


@simssd_helper.needs_sim
def test_crash_cause_wear(workdir):
    """A full drive rewritten without an action: the second cycle's crash
    names wear, its device write amplification well above the baseline's."""
    with simssd_helper.sim_drive(**DRIVE) as d:
        db = workdir / "w.db"
        conf = write_conf(workdir / "w.conf", target_conf(
            db, d.loop, KEYS, sizes="50% 100%", cycles="2"))
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
    causes = crash_causes(db)
    print(causes)
    assert causes and all(c == 2 and cause == "wear" for c, cause, _ in causes), causes
    for _, _, ev in causes:
        assert ev["wa"] >= 1.25 * ev["base_wa"], ev
        assert ev["throttled"] == 0 and ev["before"] == "baseline", ev
    assert "wear" in check_evidence_everywhere(workdir, db)


def table_rows(html, caption_start):
    """The rows (lists of cell texts) of the report's table whose caption
    starts with caption_start."""
    table = html.split("<caption>" + caption_start, 1)[1].split("</table>", 1)[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row)
            for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1])]


def fmt(v, decimals):
    """A figure as show and the report print it; None as each says it."""
    return None if v is None else f"{v:.{decimals}f}"


def check_dip(db, it, data):
    """The evidence an alert stored is what the drive's readings of the
    iteration (device_series) give between the dip's bounds: its throttle
    time, its write amplification (over a MiB or more), its peak."""
    rows = query(db, f"SELECT t_ms, host_bytes, media_bytes, temp_c, throttle_ms"
                     f" FROM device_series WHERE iteration_id = {it} AND phase = 1"
                     f" ORDER BY t_ms")
    assert len(rows) >= 2, rows
    by_t = {r["t_ms"]: r for r in rows}
    a = by_t[round(data["dip_start_s"] * 1000)]
    b = by_t[round(data["dip_end_s"] * 1000)]
    assert data["throttle_seconds"] == pytest.approx(
        (b["throttle_ms"] - a["throttle_ms"]) / 1000, abs=1e-9), (data, a, b)
    host = b["host_bytes"] - a["host_bytes"]
    if host >= MiB:
        assert data["device_wa"] == pytest.approx(
            (b["media_bytes"] - a["media_bytes"]) / host, abs=1e-4), (data, a, b)
    inside = [r["temp_c"] for r in rows if a["t_ms"] <= r["t_ms"] <= b["t_ms"]]
    assert data["peak_temp_c"] == max(inside), (data, inside)


def check_evidence_everywhere(workdir, db):
    """show, show --format json and the report give every crash and
    collapse alert the cause and figures its event stored, and each row's
    device figures as the iterations table holds them. Returns the causes."""
    alerts = query(db, "SELECT e.id, e.kind, e.iteration_id, e.data, c.number AS cycle,"
                       " i.number AS iteration FROM events e JOIN cycles c ON c.id = e.cycle_id"
                       " JOIN iterations i ON i.id = e.iteration_id WHERE e.kind IN"
                       " ('throughput-crash', 'throughput-collapse') ORDER BY e.at, e.id")
    assert alerts, "no crash or collapse alert"
    report = workdir / "evidence.html"
    run_wearmon("report", "-o", report, db=db, check=0)
    html = report.read_text()
    assert 'href="#evidence"' in html and 'id="evidence"' in html
    causes = table_rows(html, "Throughput crash and collapse alerts")
    assert len(causes) == len(alerts), causes
    device = table_rows(html, "Device counters over each iteration")
    rows = query(db, "SELECT i.id, c.number AS cycle, i.number, " + ", ".join(DEVICE_COLUMNS)
                 + " FROM iterations i JOIN cycles c ON c.id = i.cycle_id ORDER BY i.id")
    assert len(device) == len(rows), device
    for cells, r in zip(device, rows):
        assert cells[:2] == [str(r["cycle"]), str(r["number"])], (cells, r)
        assert cells[7] == fmt(r["device_wa"], 3), (cells, r)
        assert cells[8] == fmt(r["device_peak_temp_c"], 0), (cells, r)
        assert cells[9] == fmt(r["device_throttle_seconds"], 0), (cells, r)
    for a, cells in zip(alerts, causes):
        data = json.loads(a["data"])
        it = a["iteration_id"]
        shown = json.loads(run_wearmon("show", it, "--format", "json", db=db, check=0).stdout)
        ev = [x for x in shown["evidence"] if x["event_id"] == a["id"]]
        assert len(ev) == 1, shown["evidence"]
        for key in ("cause", "device_wa", "baseline_device_wa", "throttle_seconds",
                    "peak_temp_c", "host_stall_seconds"):
            assert ev[0][key] == data[key], (key, ev[0], data)
        row = query(db, f"SELECT {', '.join(DEVICE_COLUMNS)} FROM iterations WHERE id = {it}")
        assert {c: shown["iteration"][c] for c in DEVICE_COLUMNS} == row[0]
        # the alert's evidence is the drive's readings over the dip
        check_dip(db, it, data)
        text = run_wearmon("show", it, db=db, check=0).stdout
        unknown = "unknown"
        line = (f"{a['kind']}: cause {data['cause']}; in the dip device WA "
                f"{fmt(data['device_wa'], 3) or unknown} against "
                f"{fmt(data['baseline_device_wa'], 3) or unknown} before it, throttled "
                f"{fmt(data['throttle_seconds'], 3) or unknown} s, peak "
                f"{fmt(data['peak_temp_c'], 0) or unknown} °C")
        assert line in text, (line, text)
        assert f"peak temp.    {fmt(row[0]['device_peak_temp_c'], 0)} °C" in text, text
        assert cells[1:5] == [a["kind"], str(a["cycle"]), str(a["iteration"]), data["cause"]]
        assert cells[5] == (fmt(data["device_wa"], 3) or "–"), cells
        assert cells[7:9] == [fmt(data["throttle_seconds"], 3) or "–",
                              fmt(data["peak_temp_c"], 0) or "–"], cells
    # the history view and `wearmon history` carry the same figures
    view = query(db, "SELECT iteration_id, device_wa, device_peak_temp_c,"
                     " device_throttle_seconds FROM history ORDER BY iteration_id")
    hist = json.loads(run_wearmon("history", "--format", "json", db=db, check=0).stdout)
    by_id = {r["id"]: r for r in hist}
    for v, r in zip(view, rows):
        assert v["iteration_id"] == r["id"]
        for c in ("device_wa", "device_peak_temp_c", "device_throttle_seconds"):
            assert v[c] == r[c] == by_id[r["id"]][c], (c, v, r)
    print("causes in the report:", [c[4] for c in causes])
    return [c[4] for c in causes]
