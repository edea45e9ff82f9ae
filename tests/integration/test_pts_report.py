"""Every PTS test (pts =) in one campaign of two cycles on a loop device,
with shortened cells, and the report's page of each: present in the
specification's order, read in headless Chromium (its text and a
screenshot), every chart an SVG that renders, the steady-state verdicts
the ones the rows hold and the trend a point per cycle."""

import re
import shutil
import subprocess
import tempfile

import pytest

from pathlib import Path

from conftest import (TEST_TMP, query, run_wearmon, run_wearmond, sh, target_conf,
                      write_conf)

ALL = "iops throughput latency wsat hir xsr dirth"
KEYS = {"fill": "yes", "fill_block_size": "128k", "fill_queue_depth": "8",
        "sample_interval": "0.1s", "cycles": "2", "pts": ALL, "pts_cell": "0.05s",
        "pts_threads": "2", "pts_queue_depth": "2", "max_rounds": "5",
        "pts_xsr_segment": "0.2s", "pts_wsat_amount": "1x", "device_poll_interval": "0.1s",
        "hir_round": "0.2s", "hir_wait_states": "0.1s", "hir_repetitions": "1",
        "hir_burst": "0.1s", "hir_baseline": "0"}
PAGES = ["pts-iops", "pts-throughput", "pts-latency", "pts-wsat", "hir", "pts-xsr",
         "pts-dirth"]
TITLES = ["PTS IOPS test", "PTS throughput test", "PTS latency test",
          "PTS write saturation (WSAT)", "PTS cross-stimulus recovery (XSR)",
          "PTS demand intensity / response-time histogram (DIRTH)"]
needs_tools = pytest.mark.skipif(not all(shutil.which(t) for t in ("chromium",
                                                                   "rsvg-convert")),
                                 reason="needs chromium and rsvg-convert")


@pytest.fixture(scope="module")
def moddir():
    d = Path(tempfile.mkdtemp(prefix="wearmon-pts-", dir=TEST_TMP))
    try:
        yield d
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", str(d)])


@pytest.fixture(scope="module")
def campaign(moddir):
    """Two cycles of every test on a 48 MiB loop device; the database."""
    img = moddir / "disk.img"
    with open(img, "wb") as f:
        f.truncate(48 << 20)
    dev = sh("losetup", "--show", "-f", img).stdout.strip()
    try:
        db = moddir / "w.db"
        conf = write_conf(moddir / "w.conf", target_conf(db, dev, KEYS))
        p = run_wearmond(conf, timeout=900)
        assert p.returncode == 0, p.stderr
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)
        img.unlink(missing_ok=True)
    return db


def test_every_test_ran_in_both_cycles(campaign):
    got = query(campaign, "SELECT pts_test, count(DISTINCT cycle_id) AS n,"
                          " sum(status <> 'done') AS bad FROM iterations"
                          " WHERE pts_test IS NOT NULL GROUP BY pts_test")
    assert {r["pts_test"]: (r["n"], r["bad"]) for r in got} == {
        t: (2, 0) for t in ALL.split() if t != "hir"}
    # host idle recovery as hir = yes runs it, after the other tests
    hir = query(campaign, "SELECT count(DISTINCT cycle_id) AS n FROM hir_bursts")
    assert hir[0]["n"] == 2
    # the size ends with the last cell of the last test of each cycle
    last = query(campaign, "SELECT pts_test, more_rows FROM iterations i WHERE number ="
                           " (SELECT max(number) FROM iterations j"
                           "  WHERE j.cycle_id = i.cycle_id)")
    assert last == [{"pts_test": "dirth", "more_rows": 0}] * 2


@pytest.fixture(scope="module")
def page(campaign, moddir):
    out = moddir / "pts.html"
    p = run_wearmon("report", "-o", str(out), db=campaign)
    assert p.returncode == 0, p.stderr
    return out


def sections(text):
    return re.findall(r'<section id="([^"]+)">', text)


def section(text, sid):
    return re.search(rf'<section id="{sid}">(.*?)</section>', text, re.S).group(1)


def test_pages_in_the_specification_order(page):
    ids = [s for s in sections(page.read_text()) if s in PAGES]
    assert ids == PAGES, ids


def test_each_page_has_setup_steady_state_results_and_trend(page, campaign):
    text = page.read_text()
    for sid in PAGES:
        if sid == "hir":
            continue
        body = section(text, sid)
        for want in ("active range", "demand intensity", "data pattern", "preconditioning",
                     "Headline figure by cycle", "Trend across cycles"):
            assert want in body, (sid, want)
        steady = sid not in ("pts-wsat", "pts-xsr")
        assert ("Steady-state measurement window" in body) == steady, sid
        assert ("Convergence" in body) == steady, sid
        # the trend has a row per cycle
        assert re.search(r"<tr><td>1</td>", body) and re.search(r"<tr><td>2</td>", body), sid
    # the verdicts the page shows are the rows' own (the last cycle's)
    rows = query(campaign, "SELECT i.pts_test, i.block_size, i.read_percent, i.pts_ss_reached"
                           " FROM iterations i JOIN cycles c ON c.id = i.cycle_id"
                           " WHERE c.number = 2 AND i.pts_tracking = 1"
                           " ORDER BY i.id")
    final = {}
    for r in rows:
        final[(r["pts_test"], r["block_size"], r["read_percent"])] = r["pts_ss_reached"]
    for test in ("iops", "throughput", "latency", "dirth"):
        body = section(text, f"pts-{test}")
        table = body.split("Steady-state measurement window")[1].split("</table>")[0]
        verdicts = re.findall(r"steady state (reached|NOT reached)", table)
        want = sorted("reached" if v else "NOT reached"
                      for (t, _, _), v in final.items() if t == test)
        assert sorted(verdicts) == want, (test, verdicts, want)
    # the IOPS matrix: 8 block sizes by 7 mixes
    iops = section(text, "pts-iops")
    matrix = iops.split("IOPS by block size and R/W mix")[1].split("</table>")[0]
    assert matrix.count("<tr>") == 9 and "0.5 KiB" in matrix and "1024 KiB" in matrix
    # DIRTH: chosen points with their histograms
    dirth = section(text, "pts-dirth")
    assert "Chosen points" in dirth and "Response-time histograms" in dirth


@needs_tools
def test_read_in_chromium_and_every_chart_renders(page, workdir):
    tmp_path = workdir
    with tempfile.TemporaryDirectory(prefix="wearmon-chromium-") as prof:
        p = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                            "--no-first-run", "--disable-background-networking",
                            "--disable-component-update", "--disable-sync",
                            f"--user-data-dir={prof}", "--dump-dom", f"file://{page}"],
                           capture_output=True, text=True, timeout=180)
    dom = p.stdout
    assert dom, p.stderr[-2000:]
    visible = re.sub(r"<[^>]+>", " ", dom)
    for title in TITLES:
        assert title in visible, title
    png = tmp_path / "pts.png"
    with tempfile.TemporaryDirectory(prefix="wearmon-chromium-") as prof:
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        "--no-first-run", f"--user-data-dir={prof}", "--window-size=1200,4000",
                        f"--screenshot={png}", f"file://{page}"], capture_output=True,
                       timeout=180)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 30000
    text = page.read_text()
    n = 0
    for sid in PAGES:
        if sid == "hir":
            continue
        svgs = re.findall(r"<svg\b.*?</svg>", section(text, sid), re.S)
        assert svgs, sid
        for svg in svgs:
            src = tmp_path / f"c{n}.svg"
            src.write_text(svg)
            out = tmp_path / f"c{n}.png"
            sh("rsvg-convert", "-o", out, src)
            assert out.stat().st_size > 5000, (sid, n)
            n += 1
    assert n >= 16, n
