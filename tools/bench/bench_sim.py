"""bench_sim.py: the simulated SSD section of `make bench`. The rates fio and
wearmond see on the simulated SSD (tools/simssd, through FUSE and a loop
device), set against what the drive's model allows and against each other:
how close they come depends on the CPU the machine leaves to FUSE and the
loop driver, so it is timed here, with its spread over the repeats, and
not in `make check`, whose tests (tests/integration/test_simssd.py,
test_sim_e2e.py) judge the same behaviours from the drive's own counters.
A new drive for every repeat; every figure is a ratio per repeat, printed
as median [min .. max]. It asserts nothing. tools/bench/README.md,
"Simulated SSD", describes the lines."""

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "integration"))
import simssd_helper as sh  # noqa: E402

MIB = sh.MiB
CAP = 16 * MIB
# The drive of tests/integration/test_simssd.py: every host request costs at
# least 0.5 ms of flash time, above what FUSE costs on an idle machine.
GEOMETRY = dict(capacity="16M", page="4k", erase_block="32k", spare=7, channels=2,
                t_prog="1ms", t_read="100us", t_erase="2ms", cache="256k", gc_free=1)
QD = 4
INCOMPRESSIBLE = dict(buffer_compress_percentage=2, buffer_compress_chunk=512,
                      refill_buffers=1)
COMPRESSIBLE = dict(buffer_compress_percentage=98, buffer_compress_chunk=512,
                    refill_buffers=1)
# The drive of tests/integration/test_sim_e2e.py's rate check: ~20 MiB/s fresh.
E2E_DRIVE = dict(capacity="32M", page="4k", erase_block="128k", spare=7, channels=4,
                 t_prog="800us", t_read="50us", t_erase="2ms", cache="512k")
E2E_AMOUNT = 24 * MIB


def flash_bound(a, b):
    """What the channels, all busy, allow for the flash work done between
    two stats snapshots: host bytes/s."""
    host = b["host_bytes_written"] - a["host_bytes_written"]
    return host * a["channels"] / ((b["flash_busy_ns"] - a["flash_busy_ns"]) * 1e-9)


def measured(d, job):
    """fio's rate for job() and the share of the flash bound it reached."""
    a = d.stats()
    bw = job()
    return bw, bw / flash_bound(a, d.stats())


def fresh_write():
    """fio's 1M sequential write of 8 MiB on a fresh drive over the rate the
    options imply for it (the write cache included)."""
    amount = 8 * MIB
    with sh.sim_drive(**GEOMETRY) as d:
        implied = d.expected_fresh_run(amount)
        return {"fio / options": sh.fio(d.loop, "write", "1M", size=amount).write_bw / implied}


def recovery(how):
    """4 MiB written sequentially: fresh, degraded (the drive filled, then
    half rewritten at random), after a secure erase or a TRIM."""
    amount = 4 * MIB
    with sh.sim_drive(**GEOMETRY) as d:
        fresh = sh.fio(d.loop, "write", "1M", size=amount).write_bw
        sh.fio(d.loop, "write", "1M")
        sh.fio(d.loop, "randwrite", "4k", io_size=CAP // 2)
        degraded = sh.fio(d.loop, "write", "1M", size=amount).write_bw
        if how == "secure-erase":
            d.secure_erase()
        else:
            d.discard()
        after = sh.fio(d.loop, "write", "1M", size=amount).write_bw
    return {"after / fresh": after / fresh, "degraded / fresh": degraded / fresh}


def full_drive():
    """Random 4k QD4 writes: fresh (half the drive), then after a sequential
    fill two passes over the whole drive; and the third pass over 80 % of
    another drive, the rest never written."""
    def rand(d, **kw):
        return lambda: sh.fio(d.loop, "randwrite", "4k", iodepth=QD, **kw).write_bw

    with sh.sim_drive(**GEOMETRY) as d:
        fresh, fresh_share = measured(d, rand(d, io_size=CAP // 2))
        d.secure_erase()
        sh.fio(d.loop, "write", "1M")
        pass1, _ = measured(d, rand(d, io_size=CAP))
        pass2, pass2_share = measured(d, rand(d, io_size=CAP))
    span = CAP * 4 // 5 // (64 << 10) * (64 << 10)
    with sh.sim_drive(**GEOMETRY) as d:
        sh.fio(d.loop, "write", "64k", size=span)
        for _ in range(2):
            rand(d, size=span, io_size=span)()
        part = rand(d, size=span, io_size=span)()
    return {"pass 1 / fresh": pass1 / fresh, "pass 2 / pass 1": pass2 / pass1,
            "flash share fresh": fresh_share, "flash share pass 2": pass2_share,
            "flash share pass 2 / fresh": pass2_share / fresh_share,
            "80 % / full pass 2": part / pass2}


def compression():
    """Random 4k QD4 writes in steady state, 98 %- against 2 %-compressible."""
    with sh.sim_drive(compress=1, **GEOMETRY) as d:
        sh.fio(d.loop, "write", "1M", **INCOMPRESSIBLE)
        sh.fio(d.loop, "randwrite", "4k", io_size=CAP, **INCOMPRESSIBLE)
        slow = sh.fio(d.loop, "randwrite", "4k", io_size=CAP // 4, iodepth=QD,
                      **INCOMPRESSIBLE).write_bw
        sh.fio(d.loop, "randwrite", "4k", io_size=CAP, iodepth=QD, **COMPRESSIBLE)
        fast = sh.fio(d.loop, "randwrite", "4k", io_size=CAP // 2, iodepth=QD,
                      **COMPRESSIBLE).write_bw
    return {"98 % / 2 %": fast / slow}


def wearmond_conf(path, db, dev):
    path.write_text(f"""[wearmon]
database = {db}

[target sim]
device = {dev}
allow_destroy = yes
sizes = {E2E_AMOUNT // MIB}M
fill = no
workload = seqwrite
block_size = 128k
queue_depth = 8
duration = 0
sample_interval = 0.25s
cycles = 1
""")


def wearmond_against_fio(build, work):
    """24 MiB of 128k sequential writes at QD8 on a fresh drive (erased
    before each run): fio, wearmond, fio again; wearmond's MiB/s over the
    mean of fio's two, and over the rate the options imply."""
    db, conf = work / "sim.db", work / "sim.conf"
    with sh.sim_drive(**E2E_DRIVE) as d:
        implied = d.expected_fresh_run(E2E_AMOUNT)

        def fio():
            d.secure_erase()
            return sh.fio(d.loop, "write", "128k", size=E2E_AMOUNT, iodepth=8).write_bw

        before = fio()
        d.secure_erase()
        for ext in ("", "-wal", "-shm"):
            Path(f"{db}{ext}").unlink(missing_ok=True)
        wearmond_conf(conf, db, d.loop)
        subprocess.run([str(build / "wearmond"), "--foreground", "-c", str(conf)],
                       check=True, capture_output=True, timeout=600)
        after = fio()
    out = subprocess.run(["sqlite3", str(db), "SELECT mibps_avg FROM iterations"],
                         check=True, capture_output=True, text=True).stdout
    ours = float(out.split()[0]) * MIB
    return {"wearmond / fio": ours / ((before + after) / 2),
            "wearmond / options": ours / implied, "fio / options": before / implied}


def spread(vals):
    """median [min .. max] of a list of ratios."""
    return f"{statistics.median(vals):.2f} [{min(vals):.2f} .. {max(vals):.2f}]"


CASES = [
    ("fresh 1M seqwrite 8 MiB", fresh_write),
    ("secure-erase, 1M seqwrite 4 MiB", lambda: recovery("secure-erase")),
    ("trim, 1M seqwrite 4 MiB", lambda: recovery("trim")),
    ("random 4k QD4 on a full drive", full_drive),
    ("compression, random 4k QD4", compression),
]


def run(build, repeats):
    """Every case, `repeats` times, each on a new drive; prints one line per
    case with each of its ratios as median [min .. max]."""
    build = Path(build).resolve()
    missing = sh.missing_prerequisites()
    if missing:
        print(f"simulated SSD: skipped ({missing})")
        return
    work = Path(tempfile.mkdtemp(prefix="wearmon-bench-sim-", dir="/var/tmp"))
    cases = CASES + [("wearmond against fio, 128k seqwrite QD8 24 MiB",
                      lambda: wearmond_against_fio(build, work))]
    print(f"simulated SSD ({build / 'simssd'} under a loop device with --direct-io=on): "
          f"{repeats} repeat{'s' if repeats != 1 else ''}, a new drive each; ratios per "
          f"repeat, median [min .. max]; \"flash share\" is fio's rate over what the "
          f"channels, all busy, allow for the work the drive did")
    try:
        for name, case in cases:
            runs = [case() for _ in range(repeats)]
            figs = "; ".join(f"{k} {spread([r[k] for r in runs])}" for k in runs[0])
            print(f"  {name}: {figs}")
            sys.stdout.flush()
    finally:
        subprocess.run(["rm", "-rf", str(work)])
