#!/usr/bin/python3
"""bench.py: wearmond against fio, engine for engine (wearmond io_uring
against fio io_uring, wearmond libaio against fio libaio), side by side in
one run, on RAM-backed loop devices (a file in /dev/shm) with and without
`losetup --direct-io=on`. Not a test: it asserts nothing and only reports.
With --results DIR it also writes what it printed to a new file in DIR
named for the time and the machine (`make bench` passes
tools/bench/results; tools/bench/README.md describes the method).

Each case and engine runs its repeats alternating four runners (wearmond,
fio at its defaults, fio with tuned batching, and the tuned fio again),
rotating their order every repeat, after one warm-up round; fio runs with
the engine's best options (io_uring: registered buffers and files, SQ
polling as wearmond's, no polled completions). It prints per case, loop
mode and engine each runner's median IOPS and MiB/s, its CPU seconds per
GiB moved, the mean number of I/Os it kept in flight (wearmond's
iterations.mean_depth; fio's by Little's law, its IOPS times its mean
total latency), at QD1 the p50 completion latency; then wearmond's ratio
to the better fio setting (the one with the higher median rate) as the
median of the per-repeat ratios with their min and max, a spread that
crosses the goal flagged "inconclusive"; beside it the machine's own
spread, the tuned fio against itself in the same rounds; and, from one
more run of each under `perf stat`, what each spends per I/O (CPU time,
cycles and instructions where the machine counts them, system calls,
context switches). Equal work: fio refills its buffers before every write
(--refill_buffers) as wearmond writes fresh data, unless --no-refill.

Then: `jobs = 2` against one job, the database's growth per target-day at
one sample per second, the time wearmond spends storing each iteration
(its --debug log line), and the data generator's throughput on one core
next to its ceiling, the same buffers written by plain stores.

Then the simulated SSD (bench_sim.py): the rates fio and wearmond see on
it against the drive's model and each other; and the year scale
(bench_scale.py).

Usage: tools/bench/bench.py BUILD_DIR [--seconds S] [--repeats N] [--size-mib M]
                           [--cases NAME...] [--loop buffered|direct ...]
                           [--engines io_uring|libaio ...] [--sqpoll] [--quick]
                           [--sim-only] [--scale-only] [--results DIR]"""

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = [
    # name, workload (wearmond), rw (fio), block size, queue depth,
    # compressibility (None: both tools' defaults, wearmond writing fresh
    # random data and fio refilling its buffers with random data per write)
    ("4k randwrite QD1", "randwrite", "randwrite", "4k", 1, None),
    ("4k randwrite QD8", "randwrite", "randwrite", "4k", 8, None),
    ("4k randwrite QD32", "randwrite", "randwrite", "4k", 32, None),
    ("4k randwrite QD128", "randwrite", "randwrite", "4k", 128, None),
    ("4k randread QD32", "randread", "randread", "4k", 32, None),
    ("1M seqwrite QD8", "seqwrite", "write", "1M", 8, None),
    # Fresh data on both sides: fio refills every buffer before each write,
    # (100-p)% random then zeros per 4 KiB chunk, as wearmond lays it out.
    ("1M seqwrite p0 fresh", "seqwrite", "write", "1M", 8, 0),
    ("1M seqwrite p50 fresh", "seqwrite", "write", "1M", 8, 50),
]
# What a run without --cases measures: the engine comparison's cases.
DEFAULT_CASES = ("4k randwrite QD1", "4k randwrite QD32", "4k randwrite QD128",
                 "1M seqwrite QD8")
# CPU per GiB against fio's: the goal where the tools' own work shows (a
# deep queue of small blocks, large blocks of fresh data), parity elsewhere.
CPU_GOAL = {"4k randwrite QD32": 0.80, "1M seqwrite QD8": 0.80}

LOOP_MODES = {"buffered": "off", "direct": "on"}
ENGINES = ("io_uring", "libaio")
# The tuned fio twice: its second run against its first is the machine's
# own spread, in the same rounds as the comparison.
RUNNERS = ("wearmond", "fio", "fio-tuned", "fio-again")
GIB = 1 << 30
MIB = 1 << 20


def fio_data_args(compress, rw, refill=True):
    """fio options that match wearmond's compressibility = compress: fresh
    data in every write (refill, the default) or fio's buffers filled once."""
    if compress is None:
        return ["--refill_buffers=1"] if refill and "write" in rw else []
    return ["--refill_buffers=1", f"--buffer_compress_percentage={compress}",
            "--buffer_compress_chunk=4k"]


def fio_engine_args(engine, sqpoll):
    """fio's engine at its best for this comparison: io_uring with the
    buffers and the file registered (as wearmond registers them) and SQ
    polling exactly when wearmond has it, completions by interrupt
    (hipri=0: wearmond does not poll); libaio as it is."""
    if engine == "io_uring":
        return ["--ioengine=io_uring", "--fixedbufs=1", "--registerfiles=1",
                f"--sqthread_poll={1 if sqpoll else 0}", "--hipri=0"]
    return ["--ioengine=libaio"]


def fio_tuned_args(qd):
    """fio's tuned batching: submit up to N at once (N = the queue depth, at
    most 8), reap from 1 up to the whole queue per call."""
    n = min(qd, 8)
    return [f"--iodepth_batch_submit={n}", "--iodepth_batch_complete_min=1",
            f"--iodepth_batch_complete_max={qd}"]


def read_first(path, default="?"):
    """The first line of a small sysfs file, or default."""
    try:
        with open(path) as f:
            return f.readline().strip() or default
    except OSError:
        return default


class Tee:
    """stdout that also keeps a copy of everything printed, for the results
    file."""

    def __init__(self, out):
        self.out, self.lines = out, []

    def write(self, text):
        self.lines.append(text)
        return self.out.write(text)

    def flush(self):
        self.out.flush()


def results_path(directory, started):
    """A new file in directory named for the UTC start time and the machine:
    2026-12-05T0312Z-HOST.md (HOST cut to letters, digits, '-' and '.'),
    with -2, -3... when two runs start in the same minute."""
    host = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname()) or "host"
    stem = time.strftime("%Y-%m-%dT%H%MZ", time.gmtime(started)) + f"-{host}"
    path, n = directory / f"{stem}.md", 1
    while path.exists():
        n += 1
        path = directory / f"{stem}-{n}.md"
    return path


def write_results(directory, started, argv, printed, failed):
    """Store one run as written by the bench, never edited by hand: a title,
    the command line, and everything it printed, as one fenced block."""
    directory.mkdir(parents=True, exist_ok=True)
    path = results_path(directory, started)
    head = (f"# make bench, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}, "
            f"{socket.gethostname()}\n\n"
            "Written by tools/bench/bench.py at the end of the run; not edited by hand. "
            "tools/bench/README.md describes the method and how to read the lines.\n\n"
            f"Command: `tools/bench/bench.py {' '.join(argv)}`"
            + ("\n\n**The run failed before the end; what it printed is below.**" if failed
               else "") + "\n\n")
    path.write_text(head + "```\n" + "".join(printed).rstrip("\n") + "\n```\n")
    print(f"bench: results written to {path}", file=sys.stderr)
    return path


def machine_line():
    """CPU model with family/model/stepping (two VMs both named "AMD EPYC"
    can be different CPUs), cores, kernel, cpuidle driver, THP mode, load."""
    cpu = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            if not line.strip():
                break  # the first CPU's block
            k, _, v = line.partition(":")
            cpu.setdefault(k.strip(), v.strip())
    thp = read_first("/sys/kernel/mm/transparent_hugepage/enabled")
    thp = next((w[1:-1] for w in thp.split() if w.startswith("[")), thp)
    idle = read_first("/sys/devices/system/cpu/cpuidle/current_driver", "none")
    return (f"machine: {cpu.get('model name', '?')} (family {cpu.get('cpu family', '?')} "
            f"model {cpu.get('model', '?')} stepping {cpu.get('stepping', '?')}), "
            f"{os.cpu_count()} cores, kernel {os.uname().release}, cpuidle {idle}, THP {thp}, "
            f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")


def generator_rates(build, repeats):
    """The data generator's GiB/s on one core (tools/bench/dgen_bench.c), by case:
    a list of (cpu, wall) pairs, one per run of dgen_bench."""
    rates = {}
    for _ in range(repeats):
        out = subprocess.run([str(build / "dgen_bench"), "1"], check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            head, _, val = line.rpartition(": ")
            v = val.split()
            rates.setdefault(head, []).append((float(v[0]), float(v[3])))
    return rates


def print_generator(build, device_mibps, repeats):
    """One line per generator case, medians of the runs of dgen_bench, with
    the ratio to the device's rate: GiB per second of the generator thread's
    CPU time (one core's worth, whatever else the machine runs), and per
    wall-clock second. The "stores alone" lines are the ceiling: the same
    buffers written by non-temporal stores (the generator's kind) of a
    constant, no generator; "of stores" is a case's rate over that ceiling
    for its block size, per run (the two measured seconds apart), median
    [min .. max] of the runs; on a stores-alone line that column is the
    ceiling's own range over the runs."""
    dev_gib = device_mibps / 1024
    rates = generator_rates(build, repeats)
    block = {case: re.search(r"block (\d+)", case).group(1) for case in rates}
    ceiling = {block[c]: runs for c, runs in rates.items() if c.endswith("stores alone")}
    runs_text = f"{repeats} runs" if repeats != 1 else "1 run"
    print(f"data generator, one core, medians of {runs_text} of 1 s "
          f"(goal: >= 10x the device's 1M seqwrite {dev_gib:.2f} GiB/s)")
    print(f"  {'case':<58} {'GiB/s cpu':>9} {'ratio':>6} {'GiB/s wall':>10}  of stores")
    for case, runs in rates.items():
        cpu = statistics.median(r[0] for r in runs)
        wall = statistics.median(r[1] for r in runs)
        top = ceiling.get(block[case])
        share = ""
        if case.endswith("stores alone"):
            share = f"[{min(r[0] for r in runs):.2f} .. {max(r[0] for r in runs):.2f}] GiB/s"
        elif top:
            q = [r[0] / t[0] for r, t in zip(runs, top) if t[0] > 0]
            if q:
                share = f"{statistics.median(q):.2f} [{min(q):.2f} .. {max(q):.2f}]"
        print(f"  {case:<58} {cpu:>9.2f} {cpu / dev_gib:>5.1f}x {wall:>10.2f}  {share}")


def run_measured(argv):
    """Run argv to completion; returns (stdout, stderr, CPU seconds) of that
    process and the children it waited for (wait4's rusage)."""
    with tempfile.TemporaryFile(mode="w+") as errf:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errf, text=True)
        out = proc.stdout.read()
        _, status, ru = os.wait4(proc.pid, 0)
        errf.seek(0)
        err = errf.read()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{argv[0]} exited {code}: {err}")
    return out, err, ru.ru_utime + ru.ru_stime


def sql_json(db, query):
    out = subprocess.run(["sqlite3", "-json", str(db), query], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out) if out.strip() else []


def remove_db(db):
    for ext in ("", "-wal", "-shm"):
        Path(str(db) + ext).unlink(missing_ok=True)


def wearmond_conf(path, db, dev, case, seconds, size_mib, jobs=1, engine="auto",
                  sqpoll=False):
    _, wl, _, bs, qd, compress = case
    path.write_text(f"""[wearmon]
database = {db}

[target bench]
device = {dev}
ioengine = {engine}
io_uring_sqpoll = {"yes" if sqpoll else "no"}
allow_destroy = yes
sizes = {size_mib}M
fill = no
workload = {wl}
block_size = {bs}
queue_depth = {qd}
jobs = {jobs}
amount = 100000x
duration = {seconds}s
sample_interval = 1s
cycles = 1
""" + ("" if compress is None else f"compressibility = {compress}\n"))


def db_store_ms(err):
    """The iteration store times wearmond --debug logged, in ms."""
    return [float(m) for m in re.findall(r"stored in ([0-9.]+) ms", err)]


def wearmond_argv(ctx, dev, case, jobs=1, build=None, engine="auto"):
    """The command line of one wearmond run (its configuration written)."""
    work, build = ctx["work"], build or ctx["build"]
    db, conf = work / "bench.db", work / "bench.conf"
    remove_db(db)
    wearmond_conf(conf, db, dev, case, ctx["seconds"], ctx["size_mib"], jobs, engine,
                  ctx.get("sqpoll", False))
    return [*ctx["pin"], str(build / "wearmond"), "--foreground", "--debug", "-c", str(conf)]


def run_wearmond(ctx, dev, case, jobs=1, keep_db=False, build=None, engine="auto"):
    """One wearmond run: a dict of bytes, ops, seconds, cpu, p50 (µs) and the
    ms its iteration store took; the database is removed unless keep_db."""
    db = ctx["work"] / "bench.db"
    _, err, cpu = run_measured(wearmond_argv(ctx, dev, case, jobs, build, engine))
    row = sql_json(db, "SELECT bytes, ops, seconds, lat_p50_us, lat_mean_us, iops_avg"
                   " FROM iterations")[0]
    try:  # a build from before schema 17: Little's law from the row
        depth = sql_json(db, "SELECT mean_depth FROM iterations")[0]["mean_depth"]
    except subprocess.CalledProcessError:
        depth = row["iops_avg"] * row["lat_mean_us"] / 1e6
    if not keep_db:
        remove_db(db)
    return {"bytes": row["bytes"], "ops": row["ops"], "seconds": row["seconds"],
            "cpu": cpu, "p50": row["lat_p50_us"], "store_ms": db_store_ms(err),
            "depth": depth}


def fio_argv(ctx, dev, case, tuned, jobs=1, engine="libaio"):
    """The command line of one fio run."""
    _, _, rw, bs, qd, compress = case
    argv = [*ctx["pin"], "fio", "--name=bench", f"--filename={dev}",
            *fio_engine_args(engine, ctx.get("sqpoll", False)),
            "--direct=1", f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}",
            f"--size={ctx['size_mib']}M", f"--runtime={ctx['seconds']}", "--time_based",
            "--randrepeat=0", "--norandommap", "--output-format=json",
            "--lat_percentiles=1", *fio_data_args(compress, rw, ctx.get("refill", True))]
    if tuned:
        argv += fio_tuned_args(qd)
    if jobs > 1:
        argv += [f"--numjobs={jobs}", "--group_reporting"]
    return argv


def run_fio(ctx, dev, case, tuned, jobs=1, engine="libaio"):
    _, _, rw, _, _, _ = case
    out, _, cpu = run_measured(fio_argv(ctx, dev, case, tuned, jobs, engine))
    job = json.loads(out)["jobs"][0]
    d = job["read" if rw.endswith("read") else "write"]
    p50 = d["lat_ns"].get("percentile", {}).get("50.000000")
    return {"bytes": d["io_bytes"], "ops": d["total_ios"], "seconds": d["runtime"] / 1000.0,
            "cpu": cpu, "p50": p50 / 1000.0 if p50 else None, "store_ms": [],
            "depth": d["lat_ns"]["mean"] / 1e9 * d["iops"]}


def run_one(ctx, dev, case, runner, engine):
    if runner == "wearmond":
        return run_wearmond(ctx, dev, case, engine=engine)
    if runner == "baseline":
        return run_wearmond(ctx, dev, case, build=ctx["baseline"], engine=engine)
    return run_fio(ctx, dev, case, tuned=runner != "fio", engine=engine)


def rate(s, mib):
    return s["bytes"] / MIB / s["seconds"] if mib else s["ops"] / s["seconds"]


def cpu_per_gib(s):
    return s["cpu"] / (s["bytes"] / GIB) if s["bytes"] else float("inf")


def run_case(ctx, dev, case, engine):
    """Warm-up round, then the repeats, runners alternating in a rotating
    order. Returns {runner: [per-repeat dicts]}."""
    runners = ctx["runners"]
    res = {r: [] for r in runners}
    for n in range(0 if ctx.get("warmup", True) else 1, ctx["repeats"] + 1):
        k = n % len(runners)
        order = runners[k:] + runners[:k]
        for runner in order:
            s = run_one(ctx, dev, case, runner, engine)
            if n:
                res[runner].append(s)
    return res


def spread(vals, goal=1.0):
    """(median, min, max) and the flag for a ratio whose spread crosses the
    goal."""
    med, lo, hi = statistics.median(vals), min(vals), max(vals)
    return med, lo, hi, "inconclusive" if lo < goal < hi else ""


def bound(x):
    """A ratio's min or max to 2 decimals, or more where 2 would show 1.00
    for a figure on one side of it (the verdict's side must be readable)."""
    for digits in (2, 3, 4):
        text = f"{x:.{digits}f}"
        if x == 1.0 or float(text) != 1.0:
            break
    return text


def ratio_text(vals, goal=None, above=True):
    """median [min .. max] of per-round ratios, the median with as many
    decimals as its bounds (rounded alike, the three keep their order: 1.00
    would read below a min of 1.002), and the verdict against goal."""
    med, lo, hi, flag = spread(vals, goal if goal is not None else 1.0)
    lo_t, hi_t = bound(lo), bound(hi)
    digits = max(len(t.split(".")[1]) for t in (lo_t, hi_t))
    text = f"{med:>5.{digits}f} [{lo_t} .. {hi_t}]"
    if goal is None:
        return text
    ok = (med >= goal) if above else (med <= goal)
    side = flag or ("goal met" if ok else "goal missed")
    return f"{text} (goal {'>=' if above else '<='} {goal:.2f}) {side}"


def best_fio(res, is_mib):
    """The fio setting with the higher median rate."""
    return max(("fio", "fio-tuned"),
               key=lambda r: statistics.median(rate(x, is_mib) for x in res[r]))


def print_case(name, mode, engine, res, is_mib, qd):
    """Rows per runner, then wearmond's ratio to the better fio setting and,
    beside it, the machine's own spread: the tuned fio against itself."""
    unit = "MiB/s" if is_mib else "IOPS"
    head = f"{'':<22} {mode:<8} {engine:<8}"
    for runner in res:
        v = res[runner]
        lat = statistics.median(x["p50"] for x in v) if qd == 1 else None
        print(f"{name:<22} {mode:<8} {engine:<8} {runner:<9} "
              f"{statistics.median(rate(x, False) for x in v):>10.0f} "
              f"{statistics.median(rate(x, True) for x in v):>9.1f} "
              f"{statistics.median(cpu_per_gib(x) for x in v):>9.3f} "
              f"{statistics.median(x['depth'] for x in v):>7.2f} "
              f"{'' if lat is None else f'{lat:.1f}':>9}")
    best = best_fio(res, is_mib)
    pairs = list(zip(res["wearmond"], res[best]))
    figs = [("rate " + unit, [rate(w, is_mib) / rate(f, is_mib) for w, f in pairs], 1.0, True),
            ("CPU/GiB", [cpu_per_gib(w) / cpu_per_gib(f) for w, f in pairs],
             CPU_GOAL.get(name, 1.0), False)]
    if qd == 1:
        figs.append(("p50 latency", [w["p50"] / f["p50"] for w, f in pairs], 1.0, False))
    for what, vals, goal, above in figs:
        print(f"{head} ratio vs {best:<9} {what:<12} {ratio_text(vals, goal, above)}")
    if "baseline" in res:
        b = [rate(w, is_mib) / rate(x, is_mib) for w, x in zip(res["wearmond"], res["baseline"])]
        print(f"{head} ratio vs baseline  {'rate ' + unit:<12} {ratio_text(b, 1.0)}")
    again = list(zip(res["fio-again"], res["fio-tuned"]))
    own = [rate(a, is_mib) / rate(t, is_mib) for a, t in again]
    own_cpu = [cpu_per_gib(a) / cpu_per_gib(t) for a, t in again]
    print(f"{head} own spread fio-tuned again / fio-tuned: {'rate ' + unit} "
          f"{ratio_text(own)}, CPU/GiB {ratio_text(own_cpu)}")
    return best


# ---- what each tool spends per I/O: perf stat ----

PERF_SOFT = ["task-clock", "context-switches", "raw_syscalls:sys_enter"]


def perf_events():
    """The events perf stat counts here: cycles and instructions when the
    machine has the counters (a VM often has none), then the software
    ones. None when perf is missing or counts nothing."""
    try:
        p = subprocess.run(["perf", "stat", "-x,", "-e", ",".join(["cycles", "instructions",
                                                                   *PERF_SOFT]), "true"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    counted = [e for e, v in perf_values(p.stderr).items() if v is not None]
    return counted or None


def perf_values(text):
    """{event: count or None (not counted)} from perf stat -x, output."""
    vals = {}
    for line in text.splitlines():
        f = line.split(",")
        if len(f) >= 3 and f[2] and not line.startswith("#"):
            try:
                vals[f[2]] = float(f[0])
            except ValueError:
                vals[f[2]] = None
    return vals


def perf_line(ctx, dev, case, engine, best):
    """One more run of wearmond and of the better fio setting under perf
    stat; prints their counts per I/O."""
    mode_head = f"{'':<22} {ctx['mode']:<8} {engine:<8}"
    parts = []
    for runner in ("wearmond", best):
        with tempfile.NamedTemporaryFile(mode="r", suffix=".perf") as out:
            wrap = ["perf", "stat", "-x,", "-o", out.name, "-e", ",".join(ctx["perf"]), "--"]
            r = run_one(dict(ctx, pin=[*wrap, *ctx["pin"]]), dev, case, runner, engine)
            vals = perf_values(out.read())
        ops = r["ops"] or 1
        fig = []
        # task-clock comes in ms: x 1000 gives us per I/O
        for ev, label, scale, fmt in (("task-clock", "us CPU", 1e3, ".2f"),
                                      ("cycles", "cycles", 1, ".0f"),
                                      ("instructions", "instructions", 1, ".0f"),
                                      ("raw_syscalls:sys_enter", "syscalls", 1, ".3f"),
                                      ("context-switches", "context switches", 1, ".3f")):
            if vals.get(ev) is not None:
                fig.append(f"{vals[ev] * scale / ops:{fmt}} {label}")
        parts.append(f"{runner} " + ", ".join(fig))
    print(f"{mode_head} per I/O (perf stat): " + "; ".join(parts))


def make_loop(img, direct):
    return subprocess.run(["losetup", "--show", "-f", f"--direct-io={direct}", str(img)],
                          check=True, capture_output=True, text=True).stdout.strip()


def jobs_scaling(ctx, dev, mode):
    """wearmond and fio at jobs = 2 against one job, 4k randwrite QD32, on
    the first engine of the run."""
    case = next(c for c in CASES if c[0] == "4k randwrite QD32")
    engine = ctx["engines"][0]
    one, two, fone, ftwo = [], [], [], []
    for _ in range(max(1, ctx["repeats"] // 2)):
        one.append(rate(run_wearmond(ctx, dev, case, 1, engine=engine), False))
        two.append(rate(run_wearmond(ctx, dev, case, 2, engine=engine), False))
        fone.append(rate(run_fio(ctx, dev, case, True, 1, engine), False))
        ftwo.append(rate(run_fio(ctx, dev, case, True, 2, engine), False))
    m = statistics.median
    print(f"jobs = 2 vs 1, 4k randwrite QD32 each job, {mode}, {engine}: wearmond "
          f"{m(two):.0f} / {m(one):.0f} IOPS = {m(two) / m(one):.2f}x; "
          f"fio tuned numjobs=2 {m(ftwo):.0f} / {m(fone):.0f} IOPS = "
          f"{m(ftwo) / m(fone):.2f}x")


def db_growth(ctx, dev):
    """Database bytes per sample at sample_interval = 1s, from the pages the
    samples' table (sample_data since schema 16) and its indexes use after a run of known length (dbstat),
    extrapolated to a target-day of measuring (86400 samples); and the time
    wearmond took to store each iteration."""
    case = next(c for c in CASES if c[0] == "4k randwrite QD32")
    secs = max(20, 5 * ctx["seconds"])
    s = run_wearmond(dict(ctx, seconds=secs), dev, case, keep_db=True)
    db = ctx["work"] / "bench.db"
    subprocess.run(["sqlite3", str(db), "PRAGMA wal_checkpoint(TRUNCATE);"], check=True,
                   capture_output=True)
    used = sql_json(db, "SELECT sum(pgsize - unused) AS b FROM dbstat WHERE name IN "
                    "(SELECT name FROM sqlite_master WHERE tbl_name IN ('samples', 'sample_data'))")[0]["b"]
    n = sql_json(db, "SELECT count(*) AS n FROM samples")[0]["n"]
    total = db.stat().st_size
    remove_db(db)
    per = used / n
    print(f"database growth at sample_interval = 1s: {per:.0f} bytes per sample (table and "
          f"indexes, {n} samples after {s['seconds']:.1f} s; whole file {total} bytes) = "
          f"{per * 86400 / MIB:.1f} MiB per target-day (goal < 12)")
    store = s["store_ms"]
    if store:
        print(f"SQLite per iteration (wearmond --debug: one transaction storing the "
              f"iteration and its {n} samples): {statistics.median(store):.2f} ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--cases", nargs="*", default=[],
                    help="run the cases whose name contains one of these (default: "
                    + ", ".join(DEFAULT_CASES) + "; 'all' for every case)")
    ap.add_argument("--engines", nargs="*", default=list(ENGINES), choices=list(ENGINES),
                    help="the engines compared, each against fio's same engine")
    ap.add_argument("--sqpoll", action="store_true",
                    help="io_uring with a submission thread on both sides "
                    "(io_uring_sqpoll = yes, fio --sqthread_poll=1)")
    ap.add_argument("--loop", nargs="*", default=list(LOOP_MODES), choices=list(LOOP_MODES))
    ap.add_argument("--no-extras", action="store_true",
                    help="skip jobs scaling, database growth and generator lines")
    ap.add_argument("--baseline", metavar="BUILD2",
                    help="also run BUILD2's wearmond in the rotation (an engine change "
                    "against the build before it); its rate ratio is printed")
    ap.add_argument("--pin", metavar="CPU",
                    help="run both tools on this CPU only (taskset -c CPU), so that a "
                    "QD1 latency does not depend on which CPU the loop worker wakes on")
    ap.add_argument("--no-refill", action="store_true",
                    help="fio fills its write buffers once (less work than wearmond's "
                    "fresh data per write) instead of --refill_buffers")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: 1 repeat of 1 s on 256 MiB, no warm-up round")
    ap.add_argument("--scale-targets", type=int,
                    default=int(os.environ.get("BENCH_SCALE_TARGETS", "8")),
                    help="year scale: targets of the history (BENCH_SCALE_TARGETS, 8)")
    ap.add_argument("--scale-days", type=int,
                    default=int(os.environ.get("BENCH_SCALE_DAYS", "365")),
                    help="year scale: days of the history (BENCH_SCALE_DAYS, 365; "
                    "0 skips the section)")
    ap.add_argument("--scale-dir", default=os.environ.get("BENCH_SCALE_DIR", "/var/tmp"),
                    help="year scale: where its databases go (BENCH_SCALE_DIR, /var/tmp)")
    ap.add_argument("--scale-only", action="store_true",
                    help="run the year-scale section alone (tools/bench/bench_scale.py)")
    ap.add_argument("--sim-only", action="store_true",
                    help="run the simulated SSD section alone (tools/bench/bench_sim.py), "
                    "--repeats times")
    ap.add_argument("--results", metavar="DIR",
                    help="also write what the run prints to a new file in DIR, named "
                    "for the time and the machine (make bench: tools/bench/results)")
    a = ap.parse_args()
    if not a.results:
        return run(a)
    started, tee, failed = time.time(), Tee(sys.stdout), True
    sys.stdout = tee
    try:
        rc = run(a)
        failed = rc != 0
        return rc
    finally:
        sys.stdout = tee.out
        write_results(Path(a.results), started, sys.argv[1:], tee.lines, failed)


def run(a):
    """One bench run with the parsed options a; prints as it goes: the
    engine against fio, then the simulated SSD and the year scale (neither
    with --quick)."""
    if a.quick:
        a.seconds, a.repeats, a.size_mib = 1, 1, 256
    if a.sim_only:
        print(machine_line())
    elif not a.scale_only:
        run_fio_section(a)
    if a.sim_only or not (a.quick or a.scale_only):
        import bench_sim
        bench_sim.run(a.build, a.repeats)
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if a.scale_days > 0 and not a.quick and not a.sim_only:
        import bench_scale
        bench_scale.run(a.build, a.scale_targets, a.scale_days, a.scale_dir)
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


def selected(name, cases):
    """Whether case name runs: the default cases without --cases, every
    case with 'all', else those named exactly, or whose name contains one
    of cases that names no case exactly ("QD1" is QD1 and QD128)."""
    if not cases:
        return name in DEFAULT_CASES
    names = {c[0] for c in CASES}
    return "all" in cases or any(c == name or (c not in names and c in name) for c in cases)


def run_fio_section(a):
    """wearmond against fio, and the extras."""
    ctx = {"build": Path(a.build).resolve(), "seconds": a.seconds, "repeats": a.repeats,
           "size_mib": a.size_mib, "pin": ["taskset", "-c", a.pin] if a.pin else [],
           "runners": RUNNERS + (("baseline",) if a.baseline else ()),
           "baseline": Path(a.baseline).resolve() if a.baseline else None,
           "refill": not a.no_refill, "engines": a.engines, "sqpoll": a.sqpoll,
           "perf": perf_events(), "warmup": not a.quick}
    ctx["work"] = Path(tempfile.mkdtemp(prefix="wearmon-bench-", dir="/var/tmp"))
    img = Path(tempfile.mkstemp(prefix="wearmon-bench-", suffix=".img", dir="/dev/shm")[1])
    devs = {}
    try:
        with open(img, "wb") as f:
            f.truncate(a.size_mib << 20)
        for mode in a.loop:
            devs[mode] = make_loop(img, LOOP_MODES[mode])
        # Warm-up: allocate the tmpfs pages so neither tool pays for that.
        subprocess.run(["dd", "if=/dev/zero", f"of={next(iter(devs.values()))}", "bs=1M",
                        f"count={a.size_mib}", "oflag=direct", "status=none"], check=True)
        print(machine_line())
        for mode, dev in devs.items():
            print(f"loop: {dev} --direct-io={LOOP_MODES[mode]} ({mode}) on {img} "
                  f"({a.size_mib} MiB in /dev/shm)")
        print(f"method: per case, loop mode and engine, "
              f"{'no' if a.quick else 'one'} warm-up round then {a.repeats} "
              f"repeats of {a.seconds:g} s, wearmond / fio defaults / fio tuned batching / "
              f"fio tuned again alternating in rotating order, wearmond and fio on the same "
              f"engine (io_uring: fio --fixedbufs --registerfiles --sqthread_poll="
              f"{1 if a.sqpoll else 0} --hipri=0, wearmond io_uring_sqpoll = "
              f"{'yes' if a.sqpoll else 'no'}); medians; ratios per repeat against the better "
              f"fio setting; fio "
              f"{'fills its buffers once' if a.no_refill else 'refills every write buffer'}"
              + (f"; both tools pinned to CPU {a.pin}" if a.pin else ""))
        print("perf stat: " + (f"counts {', '.join(ctx['perf'])}" if ctx["perf"] else
                               "not available here; no per-I/O counts")
              + ("" if ctx["perf"] and "cycles" in ctx["perf"] else
                 " (cycles and instructions are not counted on this machine: no PMU; "
                 "CPU time per I/O stands for them)"))
        print(f"{'case':<22} {'loop':<8} {'engine':<8} {'tool':<9} {'IOPS':>10} {'MiB/s':>9} "
              f"{'CPU s/GiB':>9} {'depth':>7} {'p50 us':>9}")
        device_mibps = None
        for case in CASES:
            name, _, _, bs, qd, _ = case
            if not selected(name, a.cases):
                continue
            for mode, dev in devs.items():
                for engine in a.engines:
                    res = run_case(ctx, dev, case, engine)
                    best = print_case(name, mode, engine, res, bs == "1M", qd)
                    if ctx["perf"]:
                        perf_line(dict(ctx, mode=mode), dev, case, engine, best)
                    sys.stdout.flush()
                    if name == "1M seqwrite QD8":
                        device_mibps = max(device_mibps or 0, max(
                            statistics.median(rate(x, True) for x in res[r]) for r in res))
        if not a.no_extras:
            for mode, dev in devs.items():
                jobs_scaling(ctx, dev, mode)
            db_growth(ctx, next(iter(devs.values())))
            if device_mibps:
                print_generator(ctx["build"], device_mibps, a.repeats)
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        for dev in devs.values():
            subprocess.run(["losetup", "-d", dev])
        img.unlink(missing_ok=True)
        subprocess.run(["rm", "-rf", str(ctx["work"])])


if __name__ == "__main__":
    sys.exit(main())
