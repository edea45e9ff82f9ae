"""Agreement with fio: fio and wearmond run the same workload,
block size and queue depth on the same device, alternately, a few times
each, fio on the I/O engine wearmond chose (io_uring where the kernel
allows it, as wearmond's log says); the medians must agree (a miss is
measured once more, with as many runs again, and must then hold on the
medians of all of them). wearmond's latency runs from just before the
submission to the reap of the completion, which is fio's total latency
(lat_ns with --lat_percentiles=1), not clat_ns (from after the submit
returned).
Random reads, so that every run sees the same device state.

Two devices: the simulated SSD (tools/simssd), whose service time is
deterministic (t_read per page on its channel): there wearmond's figures
must be no worse than fio's (MiB/s by at most 5 %, p50 and p99 by at most
10 %, or no worse than fio's worst run of the same test) and no better
than the channel allows (check, no_worse and the test below); on a busy
machine the simulator's threads and each tool get a different share of
the CPU in each run (MiB/s of one tool 1.7 to 3.0 in five runs under two
CPU loads), which moves both tools' figures away from the channel's but
not past it. And a loop device on a file, where a 4 KiB read takes ~15 us and
the load of a shared machine moves MiB/s and p99 by tens of percent
between runs of the same tool: there the median latency is checked. The
figures measured are printed (pytest -s); the method is in wearmond(8),
METHOD (daemon/wearmond.8), and the figures of earlier runs are in
tools/bench/results/2026-12-04-fio-agreement.md."""

import json
import os
import shutil
import statistics
import subprocess

import pytest

import simssd_helper
from conftest import WEARMOND, MiB, engine_line, query, target_conf, write_conf

# Two programs' rates on one device compared: other tests running beside
# them would take a different share of the CPU from each run.
pytestmark = pytest.mark.alone

RUNS = 5            # of each tool, alternating
SECONDS = 3         # per run
# The machine is shared and loaded: both tools (and the simulator's threads)
# run at the same raised priority so that wake-up delays of other work do
# not land in microsecond figures of one tool more than of the other.
NICE = ["nice", "-n", "-10"]


def renice(pid, nice=-10):
    """Set the nice value of every thread of a process we started (the
    simulator); threads it starts later inherit it."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        os.setpriority(os.PRIO_PROCESS, int(tid), nice)


def wearmond_run(workdir, dev, n, bs, qd, seconds=SECONDS, pin=()):
    """One measured random-read phase by wearmond: its row (mibps_avg,
    lat_p50_us, lat_p99_us, and the region: region_offset, size_bytes).
    pin: a command prefix (taskset) both tools run under, or none."""
    db = workdir / f"agree{n}.db"
    conf = write_conf(workdir / f"agree{n}.conf", target_conf(db, dev, {
        "region_size": "100%", "sizes": "100%", "fill": "no", "workload": "randread",
        "block_size": bs, "queue_depth": str(qd), "amount": "1000x",
        "duration": f"{seconds}s", "cycles": "1", "sample_interval": "1s"}))
    p = subprocess.run([*pin, *NICE, str(WEARMOND), "--foreground", "-c", str(conf)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    r = query(db, "SELECT mibps_avg, lat_p50_us, lat_p99_us, region_offset, size_bytes,"
                  " status FROM iterations")[0]
    assert r["status"] == "done"
    engine = engine_line(p.stderr).split(",")[0]
    assert engine in FIO_ENGINE, p.stderr
    r["fio_engine"] = FIO_ENGINE[engine]
    return r


# fio's name of the engine wearmond ran (it says which in its log): each
# tool is compared with the other on the same engine
FIO_ENGINE = {"io_uring": "io_uring", "libaio": "libaio", "sync": "psync"}


def fio_run(dev, bs, qd, offset, size, engine, seconds=SECONDS, pin=()):
    """The same phase by fio on engine: mibps_avg, total-latency lat_p50_us
    and lat_p99_us, and the completion latency clat_p50_us."""
    p = subprocess.run([*pin, *NICE, "fio", "--name=agree", f"--filename={dev}", f"--ioengine={engine}",
                        "--direct=1", "--rw=randread", f"--bs={bs}", f"--iodepth={qd}",
                        f"--offset={offset}", f"--size={size}", f"--runtime={seconds}",
                        "--time_based", "--norandommap", "--randrepeat=0",
                        "--lat_percentiles=1", "--output-format=json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    rd = json.loads(p.stdout)["jobs"][0]["read"]
    pct = rd["lat_ns"]["percentile"]
    return {"mibps_avg": rd["bw_bytes"] / MiB, "lat_p50_us": pct["50.000000"] / 1e3,
            "lat_p99_us": pct["99.000000"] / 1e3,
            "clat_p50_us": rd["clat_ns"]["percentile"]["50.000000"] / 1e3}


def runs(workdir, dev, bs, qd, tag, ours, theirs):
    """RUNS more of each tool, alternating, appended to ours and theirs."""
    for _ in range(RUNS):
        w = wearmond_run(workdir, dev, f"{tag}{len(ours)}", bs, qd)
        ours.append(w)
        theirs.append(fio_run(dev, bs, qd, w["region_offset"], w["size_bytes"],
                              w["fio_engine"]))


def medians(ours, theirs, tag, bs, qd):
    med = {}
    for who, rs in (("wearmond", ours), ("fio", theirs)):
        med[who] = {k: statistics.median(r[k] for r in rs)
                    for k in ("mibps_avg", "lat_p50_us", "lat_p99_us")}
    med["fio"]["clat_p50_us"] = statistics.median(r["clat_p50_us"] for r in theirs)
    # how far fio's own runs spread: the noise of the machine
    for who, rs in (("wearmond", ours), ("fio", theirs)):
        for k in ("mibps_avg", "lat_p50_us", "lat_p99_us"):
            med[who][f"{k}_runs"] = sorted(r[k] for r in rs)
    print(f"\n{tag} {bs} QD{qd} ({len(ours)} runs each): wearmond {med['wearmond']}\n"
          f"{tag} {bs} QD{qd} ({len(theirs)} runs each): fio      {med['fio']}")
    return med


def compare(workdir, dev, bs, qd, tag):
    """Alternate the tools; return their medians."""
    ours, theirs = [], []
    runs(workdir, dev, bs, qd, tag, ours, theirs)
    return medians(ours, theirs, tag, bs, qd)


def agree(workdir, dev, bs, qd, tag, mibps_tol, lat_tol):
    """compare, then check. A miss on the first RUNS of each tool (a burst
    of load on a shared machine can take 6 % off one tool's median) is
    measured again: RUNS more of each, and the bounds must hold on the
    medians of all of them. Returns the medians that passed."""
    ours, theirs = [], []
    runs(workdir, dev, bs, qd, tag, ours, theirs)
    med = medians(ours, theirs, tag, bs, qd)
    try:
        check(med, mibps_tol, lat_tol)
        return med
    except AssertionError as e:
        print(f"{tag} QD{qd}: first {RUNS} runs missed ({e}); {RUNS} more of each")
    runs(workdir, dev, bs, qd, tag, ours, theirs)
    med = medians(ours, theirs, tag, bs, qd)
    check(med, mibps_tol, lat_tol)
    return med


def off(a, b):
    return abs(a - b) / b


def no_worse(w, f, key, tol, higher_is_better):
    """wearmond's median of key no worse than fio's by more than tol, or
    no worse than fio's worst run of this test. On a busy machine the tool
    that needs more CPU per I/O loses more to the other work (fio's median
    fell 15 % below wearmond's under two CPU loads, and outside wearmond's
    runs), so the other side is held to the channel instead: the test
    bounds what no load can move (at most 4 KiB per t_read, p50 at least
    QD x t_read). Between the two, a wearmond that reports less than the
    drive did fails here, one that reports more fails there; on an idle
    machine fio reaches the channel and the bracket is tight."""
    runs = f[f"{key}_runs"]
    if higher_is_better:
        return w[key] >= f[key] * (1 - tol) or w[key] >= runs[0]
    return w[key] <= f[key] * (1 + tol) or w[key] <= runs[-1]


def check(med, mibps_tol, lat_tol):
    """MiB/s, p50 and p99 no worse than fio's (no_worse, above)."""
    w, f = med["wearmond"], med["fio"]
    assert no_worse(w, f, "mibps_avg", mibps_tol, True), med
    assert no_worse(w, f, "lat_p50_us", lat_tol, False), med
    assert no_worse(w, f, "lat_p99_us", lat_tol, False), med


needs_sim = simssd_helper.needs_sim

# One channel, 1 ms per page read. With several reads queued the channel
# serves them back to back on its own clock, so a read's latency is QD x 1 ms
# whatever the scheduling delays of FUSE and the loop driver (those only
# show in the tail): the rate is known, 4 KiB per ms, and p50 is exact.
SIM = dict(capacity="16M", page="4k", erase_block="64k", spare=10, channels=1,
           t_prog="0", t_read="1ms", t_erase="0", cache="0")


@needs_sim
@pytest.mark.parametrize("qd", [4, 8])
def test_agree_on_simulated_ssd(workdir, qd):
    with simssd_helper.sim_drive(**SIM) as d:
        renice(d.proc.pid)
        # map every page so that every read costs t_read
        simssd_helper.fio(d.loop, rw="write", bs="1M", size="16M", iodepth=4)
        med = agree(workdir, d.loop, "4k", qd, "simssd", 0.05, 0.10)
    # Rate and p50 are held to be no worse than fio's in the same run (agree,
    # above). Against the channel, what no load can break: it serves at most
    # 4 KiB per t_read, and with QD reads always in flight a read waits for
    # the QD - 1 ahead of it, so the latency is at least QD x 1 ms (Little's law; less
    # by up to a read's worth of the one in service when it arrives mid-way
    # through it: with one io_submit per I/O the second of two reads
    # submitted together is stamped when the first's call has returned,
    # 7962 us at QD8 once, fio's clat p50 of the same runs). A busy machine
    # adds the delays of FUSE and the loop driver on top (4817 us at QD4,
    # 2.5 MiB/s, under stress-ng), which both tools see.
    rate = 4096 / 1e-3 / MiB
    assert med["wearmond"]["mibps_avg"] <= 1.02 * rate, med
    assert med["wearmond"]["lat_p50_us"] >= qd * 1000 * 0.98, med


# On the loop device both tools run on the same CPU: which one the loop
# worker's wake-up lands on otherwise moves a QD1 median by 2x run to run.
PIN = ["taskset", "-c", "0"]
LOOP_PAIRS = 8      # adjacent runs of each tool, then as many again on a miss
LOOP_SECONDS = 2


def position(w, f):
    """Where wearmond's p50 lies, in one adjacent pair of runs, between
    fio's completion-latency p50 (0) and its total-latency p50 (1); None
    when fio's two figures do not differ."""
    gap = f["lat_p50_us"] - f["clat_p50_us"]
    return (w["lat_p50_us"] - f["clat_p50_us"]) / gap if gap > 0 else None


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_agree_on_loop_device(workdir, make_loop):
    """Which latency wearmond reports: fio's total latency, not its
    completion latency. On a loop device over a cached file a 4 KiB read at
    QD1 takes ~10 us after io_submit returns, and io_submit itself another
    ~10 us, which clat does not count: wearmond's p50 must lie nearer fio's
    lat p50 than its clat p50.

    Both are medians of microsecond figures on a shared machine, where a
    burst of load doubles them from one run to the next (once wearmond
    71.2 us, fio lat 87.6 and clat 68.1 in the same 5 runs of 3 s each): so
    each wearmond run is set against the fio run right after it, on the same
    CPU, and the median of those pairs decides (8 pairs, 8 more on a miss).

    MiB/s and p99 move by tens of percent from run to run here, so the
    strict bounds are those on the simulated SSD; the QD1 latency against
    fio at its best belongs to `make bench`."""
    loop = make_loop(64 * MiB)
    simssd_helper.fio(loop.dev, rw="write", bs="1M", size="64M", iodepth=4)
    ours, theirs = [], []
    for _ in range(2):
        for _ in range(LOOP_PAIRS):
            w = wearmond_run(workdir, loop.dev, f"loop{len(ours)}", "4k", 1, LOOP_SECONDS, PIN)
            ours.append(w)
            theirs.append(fio_run(loop.dev, "4k", 1, w["region_offset"], w["size_bytes"],
                                  w["fio_engine"],
                                  LOOP_SECONDS, PIN))
        pos = [x for x in (position(w, f) for w, f in zip(ours, theirs)) if x is not None]
        for w, f in zip(ours, theirs):
            print(f"loop 4k QD1 p50: wearmond {w['lat_p50_us']:.1f} us, fio lat"
                  f" {f['lat_p50_us']:.1f} us, clat {f['clat_p50_us']:.1f} us")
        print(f"loop 4k QD1: {len(pos)} informative pairs, median position"
              f" {statistics.median(pos):.2f} (0 = fio clat, 1 = fio lat)")
        for k in ("mibps_avg", "lat_p50_us", "lat_p99_us"):
            rat = sorted(w[k] / f[k] for w, f in zip(ours, theirs))
            print(f"loop 4k QD1 {k} wearmond/fio per pair: median {statistics.median(rat):.3f}"
                  f" {[round(x, 2) for x in rat]}")
        if statistics.median(pos) > 0.5:
            break
    assert statistics.median(pos) > 0.5, (ours, theirs)
