"""`make` and `make demo` read like a demo: a quiet build (one line per
program linked, nothing per object; `make V=1` shows every command), and
a demo that ends saying where the report, the database and the charts are
and which commands come next."""

import os
import re
import subprocess

from conftest import BUILD, REPO, spawn


def make(*args, timeout=900):
    return subprocess.run(["make", "--no-print-directory", "-C", str(REPO), *args],
                          capture_output=True, text=True, timeout=timeout)


def test_build_prints_one_line_per_program(workdir):
    out = workdir / "b"
    p = make(f"BUILD={out}", f"{out}/simssd")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout == f"  LINK  {out}/simssd\n", p.stdout
    assert p.stderr == ""
    # up to date: nothing at all
    p = make(f"BUILD={out}", f"{out}/simssd")
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "", p.stdout
    # V=1: the commands themselves, no summary lines
    os.unlink(out / "simssd")
    (out / "tools" / "simssd" / "ftl.o").unlink()
    p = make(f"BUILD={out}", "V=1", f"{out}/simssd")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert any(re.match(r"\S*cc .* -c -o \S*/ftl\.o tools/simssd/ftl\.c$", ln) for ln in lines)
    assert any(f"-o {out}/simssd " in ln for ln in lines)
    assert not any(ln.startswith("  LINK") for ln in lines)


def test_demo_ends_with_where_everything_is(workdir):
    # the demo's files go beside the programs: a directory of links to them
    d = workdir / "demo"
    d.mkdir()
    for prog in ("wearmond", "wearmon", "simssd"):
        os.symlink(BUILD / prog, d / prog)
    p = spawn([REPO / "tools" / "demo.sh", d], cwd=workdir)
    out, err = p.communicate(timeout=1800)
    assert p.returncode == 0, out + err
    tail = out[out.index("\ndemo: done in "):]
    assert re.search(r"demo: done in \d+ min \d+ s\. What it left:", tail)
    for what, path in (("report", "demo/demo-report.html"), ("database", "demo/demo.db")):
        assert f"    {what:9} {path}" in tail
        assert (workdir / path).stat().st_size > 0
    assert "    charts    demo/demo-sizes.svg, demo/demo-cycles.svg" in tail
    assert "Next:\n    demo/wearmon -d demo/demo.db status\n" in tail
    assert 'your own drive: README.md, "A first run on your own device"' in tail
    # the next commands work as printed, from where the demo ran
    for line in tail.split("Next:\n")[1].splitlines():
        cmd = line.strip()
        if cmd.startswith("demo/wearmon") and "-o" not in cmd:
            r = subprocess.run(cmd, shell=True, cwd=workdir, capture_output=True, text=True,
                               timeout=120)
            assert r.returncode == 0, cmd + r.stderr
