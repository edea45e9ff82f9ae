"""`make bench` (tools/bench/bench.py) in its --quick smoke mode: it runs every
runner on both loop modes and both engines and prints what its README
promises: the machine, each runner's row, ratios against the better fio
setting of the same engine with the min and max over the rounds and a
verdict, the QD1 latency ratio, the machine's own spread (fio against
itself), the counts per I/O under perf stat, jobs = 2 scaling, the
database's growth per target-day, the SQLite time per
iteration and the data generator's rate next to its ceiling (the same
buffers written by stores alone). Asserts the report's content, never a
speed."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD, REPO


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_bench_quick_reports_everything(tmp_path):
    results = tmp_path / "results"
    p = subprocess.run([sys.executable, str(REPO / "tools/bench/bench.py"), str(BUILD), "--quick",
                        "--cases", "4k randwrite QD1", "1M seqwrite QD8", "--results", str(results)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    # the run is kept, as printed, in one new file named for time and machine
    files = list(results.iterdir())
    assert len(files) == 1 and re.fullmatch(r"\d{4}-\d\d-\d\dT\d{4}Z-[A-Za-z0-9.-]+\.md",
                                            files[0].name), files
    kept = files[0].read_text()
    assert "not edited by hand" in kept and out.strip() in kept
    assert re.search(r"^machine: .+ \(family \S+ model \S+ stepping \S+\), \d+ cores, "
                     r"kernel \S+, cpuidle \S+, THP \S+, load average", out, re.M), out
    assert "--direct-io=off (buffered)" in out and "--direct-io=on (direct)" in out
    m = re.search(r"^perf stat: (.+)$", out, re.M)
    assert m, out
    perf = "not available" not in m.group(1)
    for mode in ("buffered", "direct"):
        for engine in ("io_uring", "libaio"):
            for tool in ("wearmond", "fio", "fio-tuned", "fio-again"):
                # IOPS, MiB/s, CPU s/GiB, mean depth and (QD1) the p50 latency
                m = re.search(rf"^4k randwrite QD1 +{mode} +{engine} +{tool} +\d+ +[\d.]+ "
                              rf"+[\d.]+ +([\d.]+) +[\d.]+$", out, re.M)
                assert m, (mode, engine, tool, out)
                assert 0 < float(m.group(1)) <= 1.005, (mode, tool, out)  # at most the QD
            for what in ("rate IOPS", "CPU/GiB", "p50 latency"):
                m = re.search(rf"{mode} +{engine} +ratio vs (fio|fio-tuned) +{what} +([\d.]+) "
                              rf"\[([\d.]+) \.\. ([\d.]+)\] \(goal [<>]= ([\d.]+)\) (.+)$",
                              out, re.M)
                assert m, (mode, engine, what, out)
                med, lo, hi, goal = (float(m.group(i)) for i in (2, 3, 4, 5))
                assert lo <= med <= hi
                verdict = m.group(6)
                assert verdict == ("inconclusive" if lo < goal < hi else verdict)
                assert verdict in ("inconclusive", "goal met", "goal missed")
            # the machine's own spread beside the comparison: fio against itself
            m = re.search(rf"^ +{mode} +{engine} +own spread fio-tuned again / fio-tuned: "
                          rf"rate IOPS +([\d.]+) \[([\d.]+) \.\. ([\d.]+)\], CPU/GiB", out,
                          re.M)
            assert m and float(m.group(2)) <= float(m.group(1)) <= float(m.group(3)), out
            # where the difference comes from: counts per I/O of each tool
            if perf:
                m = re.search(rf"^ +{mode} +{engine} +per I/O \(perf stat\): wearmond "
                              rf"([\d.]+) us CPU, .*([\d.]+) syscalls.*; fio(-tuned)? "
                              rf"[\d.]+ us CPU", out, re.M)
                assert m and float(m.group(1)) > 0, out
        # the 1M case's CPU goal is the engine comparison's: 0.80 of fio's
        assert re.search(rf"^ +{mode} +io_uring +ratio vs \S+ +CPU/GiB .*\(goal <= 0\.80\)",
                         out, re.M), out
    assert re.search(r"^jobs = 2 vs 1, .*buffered, io_uring: wearmond \d+ / \d+ IOPS = [\d.]+x",
                     out, re.M)
    m = re.search(r"database growth .*: (\d+) bytes per sample .* = ([\d.]+) MiB per target-day",
                  out)
    assert m and int(m.group(1)) > 0, out
    assert abs(int(m.group(1)) * 86400 / 2**20 - float(m.group(2))) < 0.1
    assert re.search(r"^SQLite per iteration .*: [\d.]+ ms$", out, re.M), out
    m = re.search(r"^data generator, one core, medians of 1 run of 1 s \(goal: >= 10x the "
                  r"device's 1M seqwrite ([\d.]+) GiB/s\)$", out, re.M)
    assert m and float(m.group(1)) > 0, out
    ceiling = {}
    for bs in ("1048576", "4096"):
        c = re.search(rf"^  no generator, block {bs} qd \d+ stores alone +([\d.]+) +([\d.]+)x "
                      rf"+[\d.]+  \[([\d.]+) \.\. ([\d.]+)\] GiB/s$", out, re.M)
        assert c, (bs, out)
        ceiling[bs] = float(c.group(1))
        assert float(c.group(3)) == ceiling[bs] == float(c.group(4))  # one run
    gen = re.findall(r"^  compressibility (\d+) dedupe (\d+) block (\d+) qd \d+(?: every byte)? +"
                     r"([\d.]+) +([\d.]+)x +[\d.]+  ([\d.]+) \[([\d.]+) \.\. ([\d.]+)\]$",
                     out, re.M)
    assert len(gen) == 7, out
    for p, d, bs, rate, ratio, share, lo, hi in gen:
        # one run: the share is that run's rate over that run's ceiling
        assert lo == share == hi
        assert abs(float(rate) / ceiling[bs] - float(share)) < 0.01, (p, d, bs, out)
        # the ratio is printed to 0.1 and the device's rate to 0.01 GiB/s,
        # whose rounding a 100x ratio magnifies: allow for both
        dev = float(m.group(1))
        slack = 0.05 + float(rate) * 0.005 / (dev * (dev - 0.005)) + 0.01
        assert abs(float(rate) / dev - float(ratio)) <= slack, (p, d, bs, out)


def test_bench_scale_section_reports_everything(tmp_path):
    """The year-scale section on a tiny history (1 target x 1 day, growth 1
    -> 2 days, machine-months of 1 day): every line of a long history's
    figures is printed. Asserts no speed."""
    env = dict(os.environ, BENCH_SCALE_GROWTH="1 2", BENCH_SCALE_MONTH_DAYS="1")
    p = subprocess.run([sys.executable, str(REPO / "tools/bench/bench.py"), str(BUILD),
                        "--scale-only", "--scale-targets", "1", "--scale-days", "1",
                        "--scale-dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=900, env=env)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "built by build/scalegen --retention 30 --replicate" in out, out
    assert re.search(r"size: [\d.]+ GiB = [\d.]+ MiB per target-day; a year x 8 targets "
                     r"[\d.]+ GiB \(goal <= 4 GiB\) goal (met|missed); x 24 targets [\d.]+ GiB "
                     r"\(goal <= 12 GiB\) goal (met|missed)", out), out
    for read in ("status", "history --target ssd1 --since 1d", "show ssd1's latest",
                 "alerts --target ssd1", "report --target ssd1", "export samples --target ssd1",
                 *(f"plot --kind {k}" for k in ("sizes", "cycles", "samples", "wear",
                                                 "latency"))):
        assert re.search(rf"^  {re.escape(read)} +[\d.]+ .*MiB +\d+", out, re.M), read
    assert len(re.findall(r"^  \S*README\S* query \d+ ", out, re.M)) >= 12, out
    assert re.search(r"start-up to READY=1 on it \(null engine\): [\d.]+ s", out), out
    assert re.search(r"^  merge of 10 machine-months .*: [\d.]+ s", out, re.M), out
    assert re.search(r"^  the same merge again of 10 machine-months .*: [\d.]+ s", out, re.M), out
    assert re.search(r"^growth, SQLite virtual machine steps at 2 targets x 1 days -> x 2", out,
                     re.M), out
    assert list(tmp_path.iterdir()) == []  # its databases removed


def test_bench_scale_startup_cleans_up_when_the_bind_fails(tmp_path, monkeypatch):
    """bench_scale.startup() removes its start-up directory on every way out:
    here the notify socket's bind fails before wearmond starts."""
    sys.path.insert(0, str(REPO / "tools/bench"))
    import bench_scale

    made = []

    def mkdtemp(*args, **kwargs):
        made.append(real_mkdtemp(*args, **kwargs))
        return made[-1]

    def bind(self, address):
        raise OSError(98, "Address already in use", address)

    real_mkdtemp = bench_scale.tempfile.mkdtemp
    monkeypatch.setattr(bench_scale.tempfile, "mkdtemp", mkdtemp)
    monkeypatch.setattr(bench_scale.socket.socket, "bind", bind)
    with pytest.raises(OSError, match="Address already in use"):
        bench_scale.startup(BUILD, tmp_path / "wearmon.db", tmp_path)
    assert len(made) == 1 and not os.path.exists(made[0]), made


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_bench_sim_section_reports_everything():
    """The simulated SSD section (tools/bench/bench_sim.py) with one repeat:
    the machine, then one line per case with each of its ratios as median
    [min .. max] (with one repeat, all three the same). Asserts no speed."""
    import simssd_helper
    if simssd_helper.missing_prerequisites():
        pytest.skip(simssd_helper.missing_prerequisites())
    p = subprocess.run([sys.executable, str(REPO / "tools/bench/bench.py"), str(BUILD),
                        "--sim-only", "--repeats", "1"],
                       capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert re.search(r"^machine: .+ load average", out, re.M), out
    assert re.search(r"^simulated SSD \(.*simssd under a loop device with --direct-io=on\): "
                     r"1 repeat, a new drive each", out, re.M), out
    ratio = r"([\d.]+) \[([\d.]+) \.\. ([\d.]+)\]"
    cases = {
        "fresh 1M seqwrite 8 MiB": ["fio / options"],
        "secure-erase, 1M seqwrite 4 MiB": ["after / fresh", "degraded / fresh"],
        "trim, 1M seqwrite 4 MiB": ["after / fresh", "degraded / fresh"],
        "random 4k QD4 on a full drive": [
            "pass 1 / fresh", "pass 2 / pass 1", "flash share fresh", "flash share pass 2",
            "flash share pass 2 / fresh", "80 % / full pass 2"],
        "compression, random 4k QD4": ["98 % / 2 %"],
        "wearmond against fio, 128k seqwrite QD8 24 MiB": [
            "wearmond / fio", "wearmond / options", "fio / options"],
    }
    for case, figures in cases.items():
        line = re.search(rf"^  {re.escape(case)}: (.*)$", out, re.M)
        assert line, (case, out)
        parts = line.group(1).split("; ")
        assert len(parts) == len(figures), (case, parts)
        for part, fig in zip(parts, figures):
            m = re.fullmatch(rf"{re.escape(fig)} {ratio}", part)
            assert m, (case, part)
            med, lo, hi = (float(m.group(i)) for i in (1, 2, 3))
            assert 0 < lo == med == hi, (case, part)
    assert re.search(r"^load average at the end: [\d.]+ [\d.]+ [\d.]+$", out, re.M), out
