"""wearmon plot of one target marks where each of its later campaigns
starts, as the chart of several targets does: a database from three real
wearmond runs on a loop device (three campaigns of two cycles), and a copy
taken after the first run (one campaign, nothing to mark). Every chart is
rendered by rsvg-convert and read back as SVG."""

import functools
import math
import shutil
import xml.etree.ElementTree as ET

import pytest

from conftest import MiB, query, run_wearmon, run_wearmond, sh, target_conf, write_conf

pytestmark = pytest.mark.skipif(shutil.which("rsvg-convert") is None,
                                reason="rsvg-convert missing")
NS = "{http://www.w3.org/2000/svg}"
TIME_KINDS = ["cycles", "wear", "latency"]   # the charts whose x axis runs in time
DEFAULTS = {"sizes": "8M 16M", "fill": "no", "workload": "randwrite", "block_size": "4k",
            "queue_depth": 4, "duration": "0.4s", "sample_interval": "0.2s", "cycles": 2,
            "between_cycles": "trim"}

wearmon = functools.partial(run_wearmon, check=0)


@pytest.fixture
def campaigns(workdir, make_loop):
    """(three-campaign database, one-campaign copy, workdir)."""
    loop = make_loop(32 * MiB)
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", target_conf(db, loop.dev, DEFAULTS))
    one = workdir / "one.db"
    for run in range(3):    # each run after the first asks for a new campaign
        p = run_wearmond(conf, *(["--new-campaign", "all"] if run else []), timeout=300)
        assert p.returncode == 0, p.stderr
        if run == 0:
            sh("sqlite3", db, f".backup {one}")
    return db, one, workdir


def marks(svg):
    """The vertical marks of a chart: (label, data-at, stroke, dash), in
    order, and the legend texts of the marks."""
    root = ET.parse(svg).getroot()
    group = next(g for g in root.iter(NS + "g") if g.get("class") == "marks")
    lines = [ln for ln in group.iter(NS + "line") if ln.get("x1") == ln.get("x2")]
    labels = [t.text for t in group.iter(NS + "text") if t.get("class") == "mark-label"]
    assert len(lines) == len(labels), (lines, labels)
    legend = [" ".join("".join(g.itertext()).split()) for g in root.iter(NS + "g")
              if g.get("data-legend-mark")]
    return ([(lab, float(ln.get("data-at", "nan")), ln.get("stroke"),
              ln.get("stroke-dasharray")) for lab, ln in zip(labels, lines)], legend)


def plot(db, d, kind, *extra):
    svg = d / f"{db.stem}-{kind}.svg"
    wearmon("plot", "--kind", kind, *extra, "-o", svg, db=db)
    sh("rsvg-convert", "-o", svg.with_suffix(".png"), svg)
    assert svg.with_suffix(".png").stat().st_size > 1000
    return svg


def expected_at(db, kind, first):
    """Where the campaign starting at cycle `first` belongs on the chart."""
    if kind == "cycles":   # between the last cycle before it and its first
        return first - 0.5
    before = f"(SELECT number FROM cycles WHERE id = cycle_id) < {first}"
    if kind == "latency":  # after the last iteration ID of earlier campaigns
        return query(db, "SELECT coalesce(max(id), 0) AS n FROM iterations"
                         f" WHERE {before}")[0]["n"] + 0.5
    # wear: the host bytes written by then (randwrite: all of bytes), in MiB
    return query(db, "SELECT sum(coalesce(fill_bytes, 0) + coalesce(bytes, 0)"
                     f" * (100 - read_percent) / 100.0) AS b FROM iterations WHERE {before}"
                 )[0]["b"] / MiB


def test_one_target_marks_its_campaigns(campaigns):
    db, _, d = campaigns
    starts = [r["f"] for r in query(db, "SELECT DISTINCT campaign_first_cycle AS f"
                                        " FROM cycles ORDER BY f")]
    assert starts == [1, 3, 5], starts
    for kind in TIME_KINDS:
        for extra in ((), ("--target", "lab1")):
            found, legend = marks(plot(db, d, kind, *extra))
            camp = [m for m in found if "campaign" in m[0]]
            assert [m[0] for m in camp] == ["campaign 2", "campaign 3"], (kind, found)
            for (_, at, stroke, dash), first in zip(camp, starts[1:]):
                want = expected_at(db, kind, first)
                assert math.isclose(at, want, rel_tol=1e-4), (kind, first, at, want)
                assert (stroke, dash) == ("#000000", "10 4"), (kind, found)
            # the actions keep their own marks and legend, the campaigns add one
            assert any(m[3] == "4 3" for m in found), (kind, found)
            assert "start of a campaign" in legend, (kind, legend)


def test_one_campaign_has_no_mark(campaigns):
    db, one, d = campaigns
    assert query(one, "SELECT count(*) AS n FROM cycles")[0]["n"] == 2
    for kind in TIME_KINDS + ["sizes"]:
        found, legend = marks(plot(one, d, kind))
        assert not [m for m in found if "campaign" in m[0]], (kind, found)
        assert "start of a campaign" not in legend, (kind, legend)
    # sizes has no time axis: no campaign to mark, even with three
    found, _ = marks(plot(db, d, "sizes"))
    assert not [m for m in found if "campaign" in m[0]], found


def test_report_of_one_campaign_has_no_mark(campaigns):
    """A report's charts show one campaign: no other campaign's start in
    them."""
    db, _, d = campaigns
    out = d / "r.html"
    wearmon("report", "--target", "lab1", "--campaign", "2", "-o", out, db=db)
    html = out.read_text()
    assert 'class="mark-label"' in html   # its charts have marks (the trims)
    assert "campaign 2<" not in html and "start of a campaign" not in html
