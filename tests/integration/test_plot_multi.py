"""wearmon plot --target a,b: several targets of a fleet database (from
wearmon merge, targets named HOST/NAME) in one chart, from real wearmond
runs on two loop devices, run twice so each target has a second campaign;
every chart rendered by rsvg-convert and read back as SVG."""

import functools
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import TEST_TMP, run_wearmon, WEARMON, MiB, query, run_wearmond, sh, write_conf

pytestmark = pytest.mark.skipif(shutil.which("rsvg-convert") is None,
                                reason="rsvg-convert missing")
NS = "{http://www.w3.org/2000/svg}"


wearmon = functools.partial(run_wearmon, check=0)


def target(name, dev):
    return (f"[target {name}]\ndevice = {dev}\nallow_destroy = yes\nsizes = 8M 16M\n"
            "fill = no\nworkload = randwrite\nblock_size = 4k\nqueue_depth = 4\n"
            "duration = 0.4s\nsample_interval = 0.2s\ncycles = 2\nbetween_cycles = trim\n")


@pytest.fixture(scope="module")
def fleet():
    """Two targets on loop devices, two campaigns each (the second run
    after the first's two cycles were done), merged into a fleet database."""
    d = Path(tempfile.mkdtemp(prefix="wearmon-multiplot-", dir=TEST_TMP))
    loops = []
    try:
        for n in ("a", "b"):
            with open(d / f"{n}.img", "wb") as f:
                f.truncate(32 * MiB)
            loops.append(sh("losetup", "--show", "-f", d / f"{n}.img").stdout.strip())
        db = d / "w.db"
        conf = write_conf(d / "w.conf", f"[wearmon]\ndatabase = {db}\n\n"
                          + target("lab1", loops[0]) + target("lab2", loops[1]))
        for extra in ([], ["--new-campaign", "all"]):
            p = run_wearmond(conf, *extra, timeout=300)
            assert p.returncode == 0, p.stderr
        out = d / "fleet.db"
        p = subprocess.run([str(WEARMON), "merge", "-o", str(out), str(db)], capture_output=True,
                           text=True, timeout=120)
        # one source with two targets (merge once failed on a second target
        # with "database table is locked")
        assert p.returncode == 0, p.stderr
        assert ": host " in p.stdout and ", 2 targets, 8 cycles," in p.stdout, p.stdout
        names = sorted(r["name"] for r in query(out, "SELECT name FROM targets"))
        yield d, out, names
    finally:
        for dev in loops:
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        subprocess.run(["rm", "-rf", "--one-file-system", str(d)])


def chart(path):
    """The series (label -> (stroke, dash)) and the mark labels of an SVG."""
    root = ET.parse(path).getroot()
    series = {}
    for g in root.iter(NS + "g"):
        if "data-series" in g.attrib:
            dash = [p.get("stroke-dasharray") for p in g.iter(NS + "path")]
            series[g.get("data-series")] = (g.get("stroke"), dash[0] if dash else None)
    marks = [t.text for t in root.iter(NS + "text") if t.get("class") == "mark-label"]
    return series, marks


@pytest.mark.parametrize("kind", ["sizes", "cycles", "wear", "latency"])
def test_plot_several_targets_in_one_chart(fleet, kind):
    d, db, names = fleet
    assert len(names) == 2 and all("/" in n for n in names), names
    camps = query(db, "SELECT DISTINCT campaign_first_cycle AS f FROM cycles"
                      " WHERE campaign_first_cycle IS NOT NULL ORDER BY f")
    assert [r["f"] for r in camps] == [1, 3], camps
    svg = d / f"{kind}.svg"
    wearmon("plot", "--kind", kind, "--target", ",".join(names), "-o", svg, db=db)
    sh("rsvg-convert", "-o", d / f"{kind}.png", svg)
    assert (d / f"{kind}.png").stat().st_size > 1000
    series, marks = chart(svg)
    by_target = {n: {k: v for k, v in series.items() if k.startswith(n + ": ")}
                 for n in names}
    assert all(by_target.values()), series
    assert sum(map(len, by_target.values())) == len(series), series
    # a target's series share its colour, the other target's are another
    colours = [{v[0] for v in by_target[n].values()} for n in names]
    assert all(len(c) == 1 for c in colours) and colours[0] != colours[1], colours
    # and no two series look the same (colour, dash)
    assert len(set(series.values())) == len(series) or kind == "sizes", series
    root = ET.parse(svg).getroot()
    assert ", ".join(names) in root.find(NS + "title").text
    if kind == "sizes":   # the x axis is the size: no campaign to mark
        assert not [m for m in marks if "campaign" in m], marks
    else:
        assert sorted(m for m in marks if "campaign" in m) == \
            [f"{n} campaign 2" for n in names], marks


def test_plot_one_target_is_unchanged(fleet):
    """--target with one name draws that target as before: its own
    colours, no name prefix; its later campaign marked without one
    (test_plot_campaigns.py checks where)."""
    d, db, names = fleet
    svg = d / "one.svg"
    wearmon("plot", "--kind", "cycles", "--target", names[0], "-o", svg, db=db)
    series, marks = chart(svg)
    assert set(series) == {"highest sample", "average of the sizes",
                           "lowest sample"}, series
    assert [m for m in marks if "campaign" in m] == ["campaign 2"], marks


def test_plot_unknown_target_in_list(fleet):
    d, db, names = fleet
    out = d / "bad.svg"
    p = wearmon("plot", "--kind", "cycles", "--target", f"{names[0]},nope", "-o", out,
                db=db, check=1)
    assert f"no target named 'nope' in {db}" in p.stderr, p.stderr
    assert names[1] in p.stderr   # the known ones listed
    assert not out.exists()
    p = wearmon("plot", "--kind", "cycles", "--target", f"{names[0]},,{names[1]}", "-o",
                out, db=db, check=2)
    assert "empty or too long name" in p.stderr, p.stderr
    p = wearmon("plot", "--kind", "samples", "--iteration", "1", "--target",
                ",".join(names), "-o", out, db=db, check=2)
    assert "several names" in p.stderr, p.stderr
    assert not out.exists()
