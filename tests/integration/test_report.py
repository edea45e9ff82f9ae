"""wearmon report as a person sees it: the HTML report of a real wearmond run
on the simulated SSD (three cycles, a crash on a full drive, a secure erase,
the recovery) and of a database with two targets, steady-state rounds, an
interrupted iteration and two campaigns; printed to PDF and screenshotted by
headless Chromium, its charts rendered by rsvg-convert, its text read back
with pdftotext, its links and sources checked."""

import functools
import html.parser
import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

import simssd_helper
from conftest import (TEST_TMP, MiB, run_wearmon, query, run_wearmond, sh, start_wearmond,
                      stop, wait_for, write_conf)

TOOLS = ("chromium", "pdftotext", "pdfinfo", "pdftoppm", "rsvg-convert")
pytestmark = pytest.mark.skipif(
    simssd_helper.missing_prerequisites() is not None or
    any(shutil.which(t) is None for t in TOOLS),
    reason=f"{simssd_helper.missing_prerequisites()} or one of {TOOLS} missing")

SECTIONS = ["Summary", "Device under test", "Test conditions", "Results per cycle",
            "Throughput against size", "Wear: throughput against host bytes written",
            "Latency", "Steady state", "Alerts and events", "Data"]
DRIVE = dict(capacity="32M", page="4k", erase_block="128k", spare=7, channels=4,
             t_prog="800us", t_read="50us", t_erase="2ms", cache="512k")
SVG_NS = "http://www.w3.org/2000/svg"


def target(name, dev, **over):
    keys = {"device": dev, "allow_destroy": "yes", "sizes": "50% 100%", "fill": "yes",
            "fill_block_size": "128k", "fill_queue_depth": "8", "workload": "randwrite",
            "block_size": "4k", "queue_depth": "16", "duration": "3s",
            "sample_interval": "0.5s"}
    keys.update(over)
    return f"[target {name}]\n" + "\n".join(f"{k} = {v}" for k, v in keys.items()) + "\n"


wearmon = functools.partial(run_wearmon, check=0)


@pytest.fixture(scope="module")
def moddir():
    d = Path(tempfile.mkdtemp(prefix="wearmon-report-", dir=TEST_TMP))
    try:
        yield d
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", str(d)])


@pytest.fixture(scope="module")
def sim_db(moddir):
    """The demo's story on a small simulated SSD: no TRIM after cycle 1 (the
    drive stays full, cycle 2 crashes), a secure erase after cycle 2."""
    with simssd_helper.sim_drive(**DRIVE) as d:
        erase = d.erase_script(moddir)
        db = moddir / "sim.db"
        conf = write_conf(moddir / "sim.conf", f"[wearmon]\ndatabase = {db}\n\n" + target(
            "sim", d.loop, cycles=3, between_cycles="none secure-erase none",
            secure_erase="command", secure_erase_command=erase))
        p = run_wearmond(conf, timeout=600)
        assert p.returncode == 0, p.stderr
    return db


class Loop:
    def __init__(self, path):
        with open(path, "wb") as f:
            f.truncate(32 * MiB)
        self.path = path
        self.dev = sh("losetup", "--show", "-f", path).stdout.strip()


@pytest.fixture(scope="module")
def multi_db(moddir):
    """Two targets on loop devices: lab1 measured in SNIA rounds, lab2 cut
    short by SIGTERM mid-iteration (its phases last their 1.5 s duration, so
    the stop lands inside one) and resumed; then a second campaign."""
    loops = []
    try:
        loops = [Loop(moddir / "a.img"), Loop(moddir / "b.img")]
        db = moddir / "multi.db"
        conf = write_conf(moddir / "multi.conf", f"[wearmon]\ndatabase = {db}\n\n"
                          + target("lab1", loops[0].dev, sizes="8M", fill="no",
                                   steady_state="snia", max_rounds="6", amount="0.5x",
                                   duration="0", cycles="2", between_cycles="trim")
                          + target("lab2", loops[1].dev, sizes="8M 16M", fill="no",
                                   amount="1000x", duration="1.5s", cycles="2",
                                   between_cycles="trim"))
        proc = start_wearmond(conf)
        running = wait_for(lambda: query(db, "SELECT i.id FROM iterations i JOIN targets t"
                                             " ON t.id = i.target_id WHERE t.name = 'lab2'"
                                             " AND i.status = 'running'"), timeout=60)
        assert running, "lab2 never started an iteration"
        rc, _, err = stop(proc, signal.SIGTERM, timeout=30)
        assert rc == 0, err
        for extra in ([], ["--new-campaign", "all"]):   # resume the campaign, then a second
            p = run_wearmond(conf, *extra, timeout=300)
            assert p.returncode == 0, p.stderr
        yield db
    finally:
        for lp in loops:
            subprocess.run(["losetup", "-d", lp.dev], capture_output=True)


def report(db, out, *args, check=0):
    return wearmon("report", "-o", out, *args, db=db, check=check)


VOID = {"meta", "br", "link", "img", "hr", "input", "col", "wbr",
        # SVG elements written self-closed
        "line", "circle", "rect", "path"}
# where HTML allows a tag: (child, allowed parents)
PARENTS = {"td": {"tr"}, "th": {"tr"}, "tr": {"thead", "tbody"}, "li": {"ol", "ul"},
           "dt": {"dl"}, "dd": {"dl"}, "figcaption": {"figure"}, "caption": {"table"}}


class Page(html.parser.HTMLParser):
    """Tags, ids and references of an HTML document; problems in its
    nesting (unclosed or stray tags, a cell outside a row)."""

    def __init__(self):
        super().__init__()
        self.ids, self.refs, self.tags, self.attrs = [], [], [], []
        self.stack, self.problems = [], []

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs, closed=True)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:]} at {self.getpos()}")
        else:
            self.stack.pop()

    def handle_starttag(self, tag, attrs, closed=False):
        if tag in PARENTS and (not self.stack or self.stack[-1] not in PARENTS[tag]):
            self.problems.append(f"<{tag}> inside {self.stack[-1:]} at {self.getpos()}")
        if not closed and tag not in VOID:
            self.stack.append(tag)
        self.tags.append(tag)
        for k, v in attrs:
            self.attrs.append((tag, k, v or ""))
            if k == "id":
                self.ids.append(v)
            if k in ("href", "src", "xlink:href", "action", "srcset"):
                self.refs.append(v or "")


def parse(path):
    p = Page()
    p.feed(path.read_text())
    return p


def chromium(url_path, out, *mode):
    with tempfile.TemporaryDirectory(prefix="wearmon-chromium-") as prof:
        p = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                            "--disable-quic", "--no-first-run",
                            "--disable-background-networking", "--disable-component-update",
                            "--disable-sync", f"--user-data-dir={prof}", *mode,
                            f"file://{url_path}"], capture_output=True, text=True,
                           timeout=180)
    assert out.exists() and out.stat().st_size > 0, p.stderr[-2000:]
    return out


def to_pdf(html_path):
    pdf = html_path.with_suffix(".pdf")
    return chromium(html_path, pdf, "--no-pdf-header-footer", f"--print-to-pdf={pdf}")


def pdf_pages(pdf):
    return int(re.search(r"^Pages:\s+(\d+)", sh("pdfinfo", pdf).stdout, re.M).group(1))


def pdf_text(pdf):
    return sh("pdftotext", "-layout", pdf, "-").stdout


@pytest.fixture(scope="module")
def sim_report(sim_db, moddir):
    out = moddir / "sim.html"
    report(sim_db, out)
    return out


# ---- the demo-like report ---------------------------------------------------

def test_pdf_has_every_section_on_a_sensible_number_of_pages(sim_report):
    pdf = to_pdf(sim_report)
    text = pdf_text(pdf)
    for title in SECTIONS:
        assert re.search(rf"^\s*{re.escape(title)}\s*$", text, re.M), title
    assert 4 <= pdf_pages(pdf) <= 14
    # the first page carries the title and the summary, not only a heading
    first = sh("pdftotext", "-f", "1", "-l", "1", pdf, "-").stdout
    assert "Endurance and recovery report: sim" in first
    assert "worst drop against the baseline" in first


def test_screenshot_renders(sim_report):
    png = sim_report.with_suffix(".png")
    chromium(sim_report, png, "--window-size=1200,1600", f"--screenshot={png}")
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 30000   # text and charts, not a blank page


def test_every_chart_renders_with_rsvg(sim_report, moddir):
    text = sim_report.read_text()
    svgs = re.findall(r"<svg\b.*?</svg>", text, re.S)
    # cycles, sizes, wear, latency and one or two sample traces (the first
    # with three samples, the worst)
    # and each trace's latency percentiles over time
    traces = text.count("<figcaption>Samples of iteration")
    assert 1 <= traces <= 2 and len(svgs) == 4 + 2 * traces
    assert text.count("<figcaption>Latency percentiles of iteration") == traces
    for n, svg in enumerate(svgs):
        assert f'xmlns="{SVG_NS}"' in svg
        src = moddir / f"chart{n}.svg"
        src.write_text(svg)
        png = moddir / f"chart{n}.png"
        sh("rsvg-convert", "-o", png, src)
        assert png.stat().st_size > 10000, n


def test_self_contained_no_broken_references(sim_report):
    page = parse(sim_report)
    text = sim_report.read_text()
    assert "script" not in page.tags
    # the only URL is the SVG namespace name, which is never fetched
    urls = set(re.findall(r"(?:https?|ftp)://[^\s\"'<>)]+", text))
    assert urls == {SVG_NS}
    assert not re.search(r"url\(|@import|<link|<img|<iframe|<object", text)
    assert len(page.ids) == len(set(page.ids)), "duplicate ids"
    assert page.problems == [] and page.stack == [], (page.problems, page.stack)
    assert page.refs and all(r.startswith("#") for r in page.refs)
    assert all(r[1:] in page.ids for r in page.refs)


def test_figures_are_those_of_the_database(sim_db, sim_report):
    text = sim_report.read_text()
    worst = query(sim_db, "SELECT cycle, size_bytes, mibps_avg, ratio, baseline_mibps"
                          " FROM degradation WHERE ratio IS NOT NULL ORDER BY ratio LIMIT 1")[0]
    assert (f"The worst drop against the baseline was to {worst['ratio'] * 100:.0f}%:"
            f" {worst['mibps_avg']:.1f} MiB/s") in text
    assert f"in cycle {worst['cycle']}, against {worst['baseline_mibps']:.1f} MiB/s" in text
    assert "After the secure-erase that followed cycle 2 (ok), cycle 3 ran at" in text
    # every iteration's figures are in the data table
    data = text[text.index('<section id="data"'):]
    for it in query(sim_db, "SELECT id, mibps_avg, lat_p99_us FROM iterations"):
        row = re.search(rf"<tr><td>{it['id']}</td>.*?</tr>", data)
        assert row and f"<td>{it['mibps_avg']:.1f}</td>" in row.group(0), it["id"]
        assert f"<td>{it['lat_p99_us']:.0f}</td>" in row.group(0)
    # the conditions come from the run row: config, kernel, host
    run = query(sim_db, "SELECT config, kernel, hostname FROM runs")[0]
    assert "between_cycles = none secure-erase none" in run["config"]
    assert "between_cycles = none secure-erase none" in text
    assert run["kernel"] == " ".join(os.uname()[i] for i in (0, 2, 4))
    assert run["kernel"] in text and run["hostname"] in text
    # the campaign's WA: flash bytes over host bytes over all its snapshots
    wa = query(sim_db, "SELECT sum(nand_bytes_delta) * 1.0 / sum(host_bytes_delta) AS wa"
                       " FROM health WHERE nand_bytes_delta IS NOT NULL"
                       " AND host_bytes_delta IS NOT NULL")[0]
    assert wa["wa"] and wa["wa"] > 1
    assert (f"Write amplification over the campaign (flash bytes over host bytes, from the"
            f" drive&#39;s counters) was {wa['wa']:.2f}.") in text
    alerts = query(sim_db, "SELECT severity FROM alerts")
    crit = sum(a["severity"] in ("crit", "err") for a in alerts)
    assert f"Alerts: {crit} critical or error" in text


def test_samples_chart_goes_logarithmic_when_the_fill_is_5x_faster(sim_db, moddir):
    """The trace's y axis is logarithmic exactly when the fill's average and
    the measured phase's differ five times or more."""
    rows = query(sim_db, "SELECT iteration_id AS id, avg(CASE phase WHEN 'fill' THEN mibps"
                         " END) AS fill, avg(CASE phase WHEN 'measure' THEN mibps END)"
                         " AS meas FROM samples GROUP BY iteration_id")
    assert rows
    for r in rows:
        svg = moddir / f"trace{r['id']}.svg"
        wearmon("plot", "--kind", "samples", "--iteration", r["id"], "-o", svg, db=sim_db)
        want = max(r["fill"], r["meas"]) / min(r["fill"], r["meas"]) >= 5
        assert ("(log scale)" in svg.read_text()) == want, r


def test_database_text_is_escaped(sim_db, moddir):
    db = moddir / "evil.db"
    shutil.copy(sim_db, db)
    sh("sqlite3", db, "INSERT INTO events (target_id, cycle_id, severity, kind, message)"
       " VALUES (1, (SELECT max(id) FROM cycles), 'warning', 'x<y>',"
       " '<script>alert(1)</script> & \"q\"');"
       " UPDATE targets SET model = '<b>Evil & Co</b>'")
    out = moddir / "evil.html"
    report(db, out)
    text = out.read_text()
    assert "<script" not in text and "<b>Evil" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot;" in text
    assert "&lt;b&gt;Evil &amp; Co&lt;/b&gt;" in text


# ---- two targets, steady state, an interrupted iteration, campaigns ---------

def test_several_targets_need_target(multi_db, moddir):
    p = report(multi_db, moddir / "x.html", check=2)
    assert "several targets (lab1, lab2)" in p.stderr
    assert not (moddir / "x.html").exists()
    p = report(multi_db, moddir / "x.html", "--target", "nope", check=1)
    assert "nope" in p.stderr
    p = report(multi_db, moddir / "x.html", "--target", "lab1", "--campaign", "3", check=1)
    assert "has 2 campaigns, not 3" in p.stderr


def test_steady_state_section(multi_db, moddir):
    out = moddir / "lab1.html"
    report(multi_db, out, "--target", "lab1", "--campaign", "1")
    verdicts = query(multi_db, "SELECT steady_reached, steady_range_pct,"
                               " steady_excursion_pct, rounds FROM steady_state"
                               " WHERE target = 'lab1' AND cycle <= 2 ORDER BY iteration_id")
    assert len(verdicts) == 2
    text = out.read_text()
    sect = text[text.index('<section id="steady">'):text.index('<section id="events">')]
    rows = re.findall(r"<tr><td>.*?</tr>", sect)
    assert len(rows) == len(verdicts)
    for v, row in zip(verdicts, rows):
        assert ("NOT reached" in row) == (v["steady_reached"] == 0)
        for val, limit in ((v["steady_range_pct"], 20), (v["steady_excursion_pct"], 10)):
            assert f"{val:.1f}% {'met' if val <= limit else 'not met'}</td>" in row
    reached = sum(v["steady_reached"] for v in verdicts)
    assert (f"SNIA steady state was reached in {reached} of {len(verdicts)} phases"
            " measured in rounds.") in text
    charts = re.findall(r"<svg\b.*?</svg>", sect, re.S)
    assert len(charts) == 2
    for c in charts:   # the rounds, the window's least-squares line, its band
        assert 'data-series="MiB/s of each round"' in c
        assert 'data-series="least-squares line over the window"' in c
        assert 'class="band"' in c and "window mean" in c
    pdf = to_pdf(out)
    assert "SNIA PTS steady state" in pdf_text(pdf)


def test_interrupted_iteration_and_campaigns(multi_db, moddir):
    cut = query(multi_db, "SELECT i.id, c.number AS cycle FROM iterations i JOIN cycles c"
                          " ON c.id = i.cycle_id JOIN targets t ON t.id = i.target_id"
                          " WHERE t.name = 'lab2' AND i.status = 'interrupted'")
    assert len(cut) == 1
    camps = query(multi_db, "SELECT c.campaign_first_cycle AS f, min(number) AS lo,"
                            " max(number) AS hi FROM cycles c JOIN targets t ON"
                            " t.id = c.target_id WHERE t.name = 'lab2' GROUP BY 1 ORDER BY 1")
    assert [(c["lo"], c["hi"]) for c in camps] == [(1, 2), (3, 4)]
    one, two = moddir / "lab2-1.html", moddir / "lab2-2.html"
    report(multi_db, one, "--target", "lab2", "--campaign", "1")
    report(multi_db, two, "--target", "lab2")          # the latest
    t1, t2 = one.read_text(), two.read_text()
    assert "Campaign 1 of 2 (cycles 1–2)" in t1 and "Campaign 2 of 2 (cycles 3–4)" in t2
    data = t1[t1.index('<section id="data"'):]
    assert re.search(rf"<tr><td>{cut[0]['id']}</td>[^\n]*interrupted", data)
    summary = re.compile(r'<p class="summary">(.*?)</p>', re.S)
    assert "1 was cut short" in summary.search(t1).group(1)
    assert "cut short" not in summary.search(t2).group(1)
    # the charts keep to the campaign: the sizes chart of campaign 2 has its cycles
    sizes = re.search(r'<section id="sizes">.*?</section>', t2, re.S).group(0)
    assert re.findall(r'data-series="(cycle \d+)"', sizes) == ["cycle 3", "cycle 4"]
    assert "cycles 3-4;" in sizes
    for path in (one, two):
        pdf = to_pdf(path)
        assert 3 <= pdf_pages(pdf) <= 14
        txt = pdf_text(pdf)
        assert all(re.search(rf"^\s*{re.escape(s)}\s*$", txt, re.M) for s in SECTIONS)


def test_report_to_stdout(sim_db, sim_report):
    p = wearmon("report", "-o", "-", db=sim_db)
    strip = re.compile(r"Generated [^.]* UTC")
    assert strip.sub("", p.stdout) == strip.sub("", sim_report.read_text())


def test_missing_database_and_usage(moddir):
    db = moddir / "missing.db"
    p = wearmon("report", "-o", moddir / "e.html", db=db, check=1)
    assert str(db) in p.stderr and not (moddir / "e.html").exists()
    p = wearmon("report", db=db, check=2)
    assert "missing -o FILE.html" in p.stderr
    p = wearmon("report", "-o", "x", "--campaign", "0", db=db, check=2)
    assert "--campaign wants a campaign number" in p.stderr


def test_steady_window_of_a_phase_resumed_after_a_stop(workdir):
    """A stop in the middle of a phase's rounds: on resume the phase starts
    its rounds again, and the report's window is drawn from the rounds of
    the resumed phase only (it once mixed both runs: "rounds 2-1")."""
    db = workdir / "w.db"
    conf = workdir / "w.conf"
    conf.write_text(f"""[wearmon]
database = {db}
[target alpha]
device = {workdir}/a.img
file_size = 64M
sizes = 8M
fill = no
workload = randwrite
block_size = 4k
queue_depth = 8
amount = 100x
duration = 1s
steady_state = snia
max_rounds = 25
cycles = 1
""")
    proc = start_wearmond(conf)
    assert wait_for(lambda: db.exists() and query(
        db, "SELECT 1 FROM iterations WHERE round_index >= 3 AND status = 'done'"), 60)
    rc, _, err = stop(proc, signal.SIGTERM)
    assert rc == 0, err
    run_wearmond(conf, check=True)
    assert query(db, "SELECT count(*) AS n FROM iterations WHERE status = 'interrupted'")[0]["n"] == 1
    verdict = query(db, "SELECT rounds, steady_round FROM steady_state")[0]
    out = workdir / "r.html"
    report(db, out)
    windows = re.findall(r"window: rounds (\d+)-(\d+)", out.read_text())
    assert len(windows) == 1, windows
    first, last = map(int, windows[0])
    # the window ends at the round steady state held (else the last round)
    # and spans the five rounds before it, all of the resumed phase
    want_last = verdict["steady_round"] or verdict["rounds"]
    assert (first, last) == (max(1, want_last - 4), want_last), (windows, verdict)
