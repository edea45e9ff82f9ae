#!/usr/bin/python3
"""bench.py: wearmond against fio, side by side in one run, on the same loop
device backed by a file in /dev/shm. Prints wearmond/fio ratios of IOPS,
MiB/s and CPU seconds per GiB moved. Not a test: it asserts nothing and
only reports; the README quotes its figures.

Also prints the data generator's throughput on one core next to the
device's 1M sequential write rate.

Usage: tools/bench.py BUILD_DIR [--seconds S] [--repeats N] [--size-mib M]
                     [--cases NAME...]"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CASES = [
    # name, workload (wearmond), rw (fio), block size, queue depth,
    # compressibility (None: both tools' defaults; wearmond writes fresh
    # random data, fio fills its buffers once)
    ("4k randwrite QD32", "randwrite", "randwrite", "4k", 32, None),
    ("1M seqwrite QD8", "seqwrite", "write", "1M", 8, None),
    # Fresh data on both sides: fio refills every buffer before each write,
    # (100-p)% random then zeros per 4 KiB chunk, as wearmond lays it out.
    ("1M seqwrite p0 fresh", "seqwrite", "write", "1M", 8, 0),
    ("1M seqwrite p50 fresh", "seqwrite", "write", "1M", 8, 50),
]


def fio_data_args(compress):
    """fio options that match wearmond's compressibility = compress."""
    if compress is None:
        return []
    return ["--refill_buffers=1", f"--buffer_compress_percentage={compress}",
            "--buffer_compress_chunk=4k"]


def generator_rates(build):
    """The data generator's GiB/s on one core (tools/dgen_bench), by case."""
    out = subprocess.run([str(build / "dgen_bench"), "1"], check=True, capture_output=True,
                         text=True).stdout
    rates = {}
    for line in out.splitlines():
        head, _, val = line.rpartition(": ")
        v = val.split()
        rates[head] = (float(v[0]), float(v[3]))
    return rates


def print_generator(build, device_mibps):
    """One line per generator case, with its ratio to the device's rate:
    GiB per second of the generator thread's CPU time (one core's worth,
    whatever else the machine runs), and per wall-clock second."""
    dev_gib = device_mibps / 1024
    print(f"data generator, one core (goal: >= 10x the device's 1M seqwrite "
          f"{dev_gib:.2f} GiB/s)")
    print(f"  {'case':<50} {'GiB/s cpu':>9} {'ratio':>6} {'GiB/s wall':>10}")
    for case, (cpu, wall) in generator_rates(build).items():
        print(f"  {case:<50} {cpu:>9.2f} {cpu / dev_gib:>5.1f}x {wall:>10.2f}")


def run_measured(argv):
    """Run argv to completion; returns (stdout, CPU seconds, peak RSS in KiB)
    of that process and the children it waited for (wait4's rusage)."""
    with tempfile.TemporaryFile(mode="w+") as errf:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errf, text=True)
        out = proc.stdout.read()
        _, status, ru = os.wait4(proc.pid, 0)
        errf.seek(0)
        err = errf.read()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {err}")
    return out, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def run_wearmond(build, dev, work, wl, bs, qd, seconds, size_mib, n, compress=None):
    db = work / f"bench-{n}.db"
    conf = work / f"bench-{n}.conf"
    conf.write_text(f"""[wearmon]
database = {db}

[target bench]
device = {dev}
allow_destroy = yes
sizes = {size_mib}M
fill = no
workload = {wl}
block_size = {bs}
queue_depth = {qd}
amount = 100000x
duration = {seconds}s
cycles = 1
""" + ("" if compress is None else f"compressibility = {compress}\n"))
    _, cpu, rss = run_measured([str(build / "wearmond"), "--foreground", "-c", str(conf)])
    out = subprocess.run(["sqlite3", "-json", str(db),
                          "SELECT bytes, ops, seconds FROM iterations"],
                         check=True, capture_output=True, text=True).stdout
    row = json.loads(out)[0]
    db.unlink()
    for ext in ("-wal", "-shm"):
        Path(str(db) + ext).unlink(missing_ok=True)
    return row["bytes"], row["ops"], row["seconds"], cpu, rss


def run_fio(dev, rw, bs, qd, seconds, size_mib, compress=None):
    out, cpu, rss = run_measured(["fio", "--name=bench", f"--filename={dev}", "--ioengine=libaio",
                          "--direct=1", f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}",
                          f"--size={size_mib}M", f"--runtime={seconds}", "--time_based",
                                  "--randrepeat=0", "--norandommap", "--output-format=json",
                                  *fio_data_args(compress)])
    job = json.loads(out)["jobs"][0]["write"]
    secs = job["runtime"] / 1000.0
    return job["io_bytes"], job["total_ios"], secs, cpu, rss


def summarise(samples):
    b = sum(s[0] for s in samples)
    gib = b / (1 << 30)
    iops = statistics.median(s[1] / s[2] for s in samples)
    mibps = statistics.median(s[0] / (1 << 20) / s[2] for s in samples)
    cpu_per_gib = sum(s[3] for s in samples) / gib
    rss_mib = max(s[4] for s in samples) / 1024
    return iops, mibps, cpu_per_gib, rss_mib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--cases", nargs="*", default=[],
                    help="run only the cases whose name contains one of these")
    a = ap.parse_args()
    build = Path(a.build).resolve()
    work = Path(tempfile.mkdtemp(prefix="wearmon-bench-", dir="/var/tmp"))
    img = Path(tempfile.mkstemp(prefix="wearmon-bench-", suffix=".img", dir="/dev/shm")[1])
    dev = None
    try:
        with open(img, "wb") as f:
            f.truncate(a.size_mib << 20)
        dev = subprocess.run(["losetup", "--show", "-f", str(img)], check=True,
                             capture_output=True, text=True).stdout.strip()
        # Warm-up: allocate the tmpfs pages so neither tool pays for that.
        subprocess.run(["dd", "if=/dev/zero", f"of={dev}", "bs=1M", f"count={a.size_mib}",
                        "oflag=direct", "status=none"], check=True)
        print(f"bench: {dev} on {img} ({a.size_mib} MiB in /dev/shm), "
              f"{a.repeats} alternating repeats of {a.seconds:g} s each")
        print(f"{'case':<20} {'tool':<9} {'IOPS':>10} {'MiB/s':>9} {'CPU s/GiB':>10} "
              f"{'peak RSS MiB':>13}")
        device_mibps = None
        for name, wl, rw, bs, qd, compress in CASES:
            if a.cases and not any(c in name for c in a.cases):
                continue
            res = {"wearmond": [], "fio": []}
            for n in range(a.repeats + 1):
                w = run_wearmond(build, dev, work, wl, bs, qd, a.seconds, a.size_mib, n,
                                 compress)
                f = run_fio(dev, rw, bs, qd, a.seconds, a.size_mib, compress)
                if n == 0:
                    continue  # the first pair is warm-up
                res["wearmond"].append(w)
                res["fio"].append(f)
            sw, sf = summarise(res["wearmond"]), summarise(res["fio"])
            print(f"{name:<20} {'wearmond':<9} {sw[0]:>10.0f} {sw[1]:>9.1f} {sw[2]:>10.3f} "
                  f"{sw[3]:>13.1f}")
            print(f"{name:<20} {'fio':<9} {sf[0]:>10.0f} {sf[1]:>9.1f} {sf[2]:>10.3f} "
                  f"{sf[3]:>13.1f}")
            print(f"{name:<20} {'ratio':<9} {sw[0] / sf[0]:>10.2f} {sw[1] / sf[1]:>9.2f} "
                  f"{sw[2] / sf[2]:>10.2f} {sw[3] / sf[3]:>13.2f}   "
                  "(targets: >= 1.0, >= 1.0, <= 1.0, <= 1.0)")
            if name == "1M seqwrite QD8":
                device_mibps = max(sw[1], sf[1])
        if device_mibps:
            print_generator(build, device_mibps)
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev])
        img.unlink(missing_ok=True)
        subprocess.run(["rm", "-rf", str(work)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
