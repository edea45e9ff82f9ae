"""The default report of a campaign that is still running, or was
interrupted: the cycle not done is marked partial everywhere it shows (the
summary, the table per cycle, the legend of the sizes chart, a labelled
line on the cycles chart), never drawn as if complete; and in every chart
of the report no two text labels overlap.

The database is a real wearmond run on a regular file the test creates:
four sizes, idle between cycles, stopped (SIGTERM) in cycle 3 once two of
its sizes are done, and read again while a daemon runs its next cycle.

Label boxes: each <text> (each <tspan> line) of an inline SVG is a box of
its font size's height and 0.6 em per character, placed by its x, y and
text-anchor (DejaVu Sans, the charts' first font, averages under 0.6 em
for this text); rotated text (the y axis' title) is left out."""

import re
import signal
import xml.etree.ElementTree as ET

from conftest import (WEARMOND, query, run_wearmon, spawn, stop, wait_for, write_conf)

SVG = "{http://www.w3.org/2000/svg}"


def conf(workdir, cycles):
    return write_conf(workdir / "w.conf", f"""[wearmon]
database = {workdir}/w.db

[target f1]
device = {workdir}/f1.img
file_size = 64M
sizes = 25% 50% 75% 100%
fill = no
workload = randwrite
block_size = 4k
queue_depth = 4
amount = 1000x
duration = 0.4s
cycles = {cycles}
sample_interval = 0.1s
between_cycles = idle
idle = 0.1s
""")


def label_boxes(svg):
    """(x0, y0, x1, y1, text) of every unrotated text line of an SVG."""
    out = []

    def walk(el, size):
        size = float(el.get("font-size", size))
        if el.tag == SVG + "text":
            if el.get("transform"):
                return
            x, y = float(el.get("x", 0)), float(el.get("y", 0))
            spans = el.findall(SVG + "tspan")
            lines = []
            for sp in spans:
                y += float(sp.get("dy", 0))
                lines.append((float(sp.get("x", x)), y, "".join(sp.itertext())))
            if not spans:
                lines.append((x, y, "".join(el.itertext())))
            anchor = el.get("text-anchor", "start")
            for lx, ly, text in lines:
                w = len(text) * size * 0.6
                x0 = lx - {"middle": w / 2, "end": w}.get(anchor, 0)
                out.append((x0, ly - size * 0.8, x0 + w, ly + size * 0.2, text))
            return
        for child in el:
            walk(child, size)

    walk(ET.fromstring(svg), 16.0)
    return out


def overlapping(svg):
    b = label_boxes(svg)
    return [(p[4], q[4]) for i, p in enumerate(b) for q in b[i + 1:]
            if p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3]]


def check_report(workdir, name, cycle, status, done_sizes):
    out = workdir / f"{name}.html"
    p = run_wearmon("-d", workdir / "w.db", "report", "-o", out)
    assert p.returncode == 0, p.stderr
    html = out.read_text()
    partial = f"{status}: {done_sizes} of 4 sizes"
    assert f"<td>{cycle}</td><td class=\"l partial\">partial, {partial}</td>" in html, html
    assert (f"Cycle {cycle} is partial ({partial}): its figures are of the sizes it "
            "reached.") in html
    svgs = re.findall(r"<svg.*?</svg>", html, re.S)
    sizes = next(s for s in svgs if "one line per cycle" in s)
    assert f'data-legend="cycle {cycle}, {partial}"' in sizes
    cycles = next(s for s in svgs if "per cycle</title>" in s)
    assert f">cycle {cycle}, {partial}</text>" in cycles
    assert "partial cycle (not done)" in cycles
    for svg in svgs:
        title = re.search(r"<title>(.*?)</title>", svg).group(1)
        assert not overlapping(svg), (title, overlapping(svg))
    # the cycles before it are complete, and not marked
    assert html.count(">partial, ") == 1


def sizes_done(db, cycle):
    return query(db, "SELECT count(*) AS n FROM iterations i JOIN cycles c ON c.id = i.cycle_id"
                     f" WHERE c.number = {cycle} AND i.status = 'done'")[0]["n"]


def test_partial_cycle_marked_and_labels_apart(workdir):
    db = workdir / "w.db"
    proc = spawn([WEARMOND, "--foreground", "-c", conf(workdir, 4)])
    try:
        assert wait_for(lambda: db.exists() and sizes_done(db, 3) >= 2, 180), \
            query(db, "SELECT * FROM progress")
    finally:
        rc, _, err = stop(proc, signal.SIGTERM)
    assert rc == 0, err
    n = sizes_done(db, 3)
    assert n in (2, 3), n
    assert query(db, "SELECT status FROM cycles WHERE number = 3") == [{"status": "interrupted"}]
    check_report(workdir, "interrupted", 3, "interrupted", n)

    # the same campaign running again: its cycle 3 resumed and running
    proc = spawn([WEARMOND, "--foreground", "-c", conf(workdir, 4)])
    try:
        assert wait_for(lambda: query(db, "SELECT 1 FROM progress WHERE cycle = 3"
                                          " AND phase = 'measure'"), 120)
        now = sizes_done(db, 3)
        if now < 4 and query(db, "SELECT status FROM cycles WHERE number = 3")[0]["status"] \
                == "running":
            check_report(workdir, "running", 3, "running", now)
    finally:
        rc, _, err = stop(proc, signal.SIGTERM)
    assert rc == 0, err
