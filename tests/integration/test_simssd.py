"""End-to-end checks of the simulated SSD (tools/simssd) through a real loop
device and fio: it degrades like the drives in the seed articles (Intel 320,
X25-M), recovers after TRIM or a secure erase, compresses like SandForce,
keeps the data it is given and injects the faults it is told to."""

import errno
import os
import time

import pytest

import simssd_helper as sh

# Rates of the drive compared with its model and across passes minutes
# apart: other tests running beside them would take a different share of
# the CPU from each (FUSE and the loop driver carry every request).
pytestmark = [sh.needs_sim, pytest.mark.alone]

MiB = sh.MiB
CAP = 16 * MiB

# Small and slow on purpose. Real MLC timings on two channels give every
# host request at least 0.5 ms of flash time, well above the ~0.15 ms that
# FUSE plus the loop driver cost per request on this kind of machine, so fio
# measures the FTL and not FUSE; 16 MiB keeps a full random pass ~12 s.
GEOMETRY = dict(capacity="16M", page="4k", erase_block="32k", spare=7,
                channels=2, t_prog="1ms", t_read="100us", t_erase="2ms",
                cache="256k", gc_free=1)

# Random 4k writes keep a few requests in flight so that FUSE's per-request
# cost, which grows when the machine is busy, overlaps flash time even on
# the fresh drive (at queue depth 1 a loaded machine measured FUSE, not flash).
QD = 4

INCOMPRESSIBLE = dict(buffer_compress_percentage=2, buffer_compress_chunk=512,
                      refill_buffers=1)
COMPRESSIBLE = dict(buffer_compress_percentage=98, buffer_compress_chunk=512,
                    refill_buffers=1)


def fresh_rate_from_options(opts=GEOMETRY):
    """channels * page / t_prog, bytes/s (tools/simssd/README.md)."""
    return (int(opts["channels"]) * sh.parse_size(opts["page"])
            / sh.parse_time(opts["t_prog"]))


def expected_run(amount, opts=GEOMETRY):
    """What fio sees writing `amount` to an idle fresh drive: the cache takes
    its size for free, the rest goes at the fresh rate."""
    cache = sh.parse_size(opts["cache"])
    return fresh_rate_from_options(opts) * amount / (amount - cache)


def mib(bw):
    return f"{bw / MiB:.2f} MiB/s"


def test_fresh_sequential_write_matches_options():
    amount = 8 * MiB
    expected = expected_run(amount)
    with sh.sim_drive(**GEOMETRY) as d:
        assert d.expected_fresh_run(amount) == pytest.approx(expected)
        got = sh.fio(d.loop, "write", "1M", size=amount).write_bw
        wa = d.stats()["write_amplification"]
    print(f"fresh sequential write {mib(got)}, options imply {mib(expected)}")
    assert got == pytest.approx(expected, rel=0.10)
    assert wa == pytest.approx(1.0)


@pytest.fixture(scope="module")
def full_drive():
    """Random 4k writes on one drive: fresh (half the drive, so no GC yet),
    then after a sequential fill, two full passes (the Percona test)."""
    with sh.sim_drive(**GEOMETRY) as d:
        start = d.stats()
        fresh = sh.fio(d.loop, "randwrite", "4k", io_size=CAP // 2, iodepth=QD).write_bw
        fresh_end = d.stats()
        d.secure_erase()
        sh.fio(d.loop, "write", "1M")
        before = d.stats()
        pass1 = sh.fio(d.loop, "randwrite", "4k", io_size=CAP, iodepth=QD).write_bw
        middle = d.stats()
        pass2 = sh.fio(d.loop, "randwrite", "4k", io_size=CAP, iodepth=QD).write_bw
        after = d.stats()

    def delta(key, a, b):
        return b[key] - a[key]

    wa = (delta("flash_bytes_written", before, after)
          / delta("host_bytes_written", before, after))
    # What the channels allowed: host bytes per channel-second of flash work.
    flash_bound = (delta("host_bytes_written", middle, after) * after["channels"]
                   / (delta("flash_busy_ns", middle, after) * 1e-9))
    # Flash time per host byte, fresh and in pass 2: how much more work the
    # channels did for each byte once the drive was full.
    def flash_per_byte(a, b):
        return delta("flash_busy_ns", a, b) / delta("host_bytes_written", a, b)

    flash_ratio = flash_per_byte(middle, after) / flash_per_byte(start, fresh_end)
    fresh_bound = after["channels"] / (flash_per_byte(start, fresh_end) * 1e-9)
    print(f"\nfull drive random 4k: fresh {mib(fresh)}, pass 1 {mib(pass1)}, "
          f"pass 2 {mib(pass2)} (flash-bound {mib(flash_bound)}), "
          f"write amplification {wa:.2f}; channels busy {fresh / fresh_bound:.0%} "
          f"fresh, {pass2 / flash_bound:.0%} in pass 2, "
          f"{flash_ratio:.2f} times the flash work per byte")
    return dict(fresh=fresh, pass1=pass1, pass2=pass2, wa=wa,
                flash_bound=flash_bound, fresh_bound=fresh_bound, flash_ratio=flash_ratio)


def test_random_writes_on_a_full_drive_degrade(full_drive):
    """A full drive writes at random at under a third of what the fresh
    drive's flash allowed (its own counters, the same run), and fio sees the
    drop. Not against fio's fresh rate: small random writes at 8 MiB/s take
    ~2000 requests a second through FUSE and the loop driver, more than a
    machine whose CPUs are busy with other work lets through (43 % of the
    flash's rate under stress-ng), while the degraded passes stay
    flash-bound."""
    assert full_drive["pass1"] * 3 <= full_drive["fresh_bound"]
    assert full_drive["pass1"] < 0.6 * full_drive["fresh"]
    assert full_drive["pass2"] <= 1.05 * full_drive["pass1"]
    assert full_drive["wa"] > 2


def test_degraded_throughput_is_set_by_flash_work_not_fuse(full_drive):
    """In pass 2 the flash channels are kept at least as busy as on the fresh
    drive: the rate is what the flash work allows, not what FUSE lets
    through. Both sides come from the same drive in the same run (its
    flash_busy_ns and host_bytes_written counters and the rates fio saw),
    never from a modelled rate. A busy machine adds a cost per request to
    both passes, which weighs less where each request costs more flash
    time, so it can only raise pass 2's share; work in the FUSE path that
    grew with the drive's fill would lower it. Measured: 0.92 to 2.2 times
    the fresh share, idle and with stress-ng keeping both CPUs busy."""
    busy_fresh = full_drive["fresh"] / full_drive["fresh_bound"]
    busy_pass2 = full_drive["pass2"] / full_drive["flash_bound"]
    assert full_drive["flash_ratio"] > 2
    assert busy_pass2 >= 0.8 * busy_fresh, (busy_pass2, busy_fresh)


def test_leaving_20_percent_unused_keeps_random_writes_faster(full_drive):
    span = CAP * 4 // 5 // (64 << 10) * (64 << 10)   # 80%, whole 64k blocks
    with sh.sim_drive(**GEOMETRY) as d:
        sh.fio(d.loop, "write", "64k", size=span)
        passes = [sh.fio(d.loop, "randwrite", "4k", size=span, io_size=span,
                         iodepth=QD).write_bw for _ in range(2)]
        before = d.stats()
        passes.append(sh.fio(d.loop, "randwrite", "4k", size=span, io_size=span,
                             iodepth=QD).write_bw)
        after = d.stats()
        assert after["valid_pages"] <= span // 4096
    wa = ((after["flash_bytes_written"] - before["flash_bytes_written"])
          / (after["host_bytes_written"] - before["host_bytes_written"]))
    flash_bound = ((after["host_bytes_written"] - before["host_bytes_written"])
                   * after["channels"]
                   / ((after["flash_busy_ns"] - before["flash_busy_ns"]) * 1e-9))
    print(f"80% of the drive, random 4k passes: {[mib(p) for p in passes]} "
          f"(last: flash-bound {mib(flash_bound)}, write amplification {wa:.2f}); "
          f"full drive steady {mib(full_drive['pass2'])}")
    assert passes[-1] >= 1.5 * full_drive["pass2"]


@pytest.mark.parametrize("how", ["secure-erase", "trim"])
def test_erase_or_trim_restores_fresh_throughput(how):
    amount = 4 * MiB
    with sh.sim_drive(**GEOMETRY) as d:
        fresh = sh.fio(d.loop, "write", "1M", size=amount).write_bw
        sh.fio(d.loop, "write", "1M")
        sh.fio(d.loop, "randwrite", "4k", io_size=CAP // 2)
        degraded = sh.fio(d.loop, "write", "1M", size=amount).write_bw
        if how == "secure-erase":
            d.secure_erase()
        else:
            d.discard()
            assert d.stats()["trimmed_bytes"] >= CAP
        assert d.stats()["valid_pages"] == 0
        after = sh.fio(d.loop, "write", "1M", size=amount).write_bw
    print(f"{how}: fresh {mib(fresh)}, degraded {mib(degraded)}, after {mib(after)}")
    assert degraded < 0.5 * fresh
    assert after == pytest.approx(fresh, rel=0.10)


def test_compressible_data_writes_faster_and_reads_the_same():
    """Compressible data costs the flash less to write and the same to read,
    as on SandForce drives. The flash work comes from the drive's own
    counters; the rates fio sees are compared with each other in the same
    run. Reads are not compared by rate: at ~60 MiB/s they are bound by the
    CPU that FUSE and the loop driver need, and on a busy machine the two
    kinds of data cost it differently (77 against 54 MiB/s under
    stress-ng), which says nothing about the drive."""
    with sh.sim_drive(compress=1, **GEOMETRY) as d:
        # Steady state for each kind of data: the drive full of it and
        # rewritten once at random, then measured.
        sh.fio(d.loop, "write", "1M", **INCOMPRESSIBLE)
        sh.fio(d.loop, "randwrite", "4k", io_size=CAP, **INCOMPRESSIBLE)
        slow = sh.fio(d.loop, "randwrite", "4k", io_size=CAP // 4, iodepth=QD,
                      **INCOMPRESSIBLE).write_bw
        sh.fio(d.loop, "randwrite", "4k", io_size=CAP, iodepth=QD, **COMPRESSIBLE)
        before = d.stats()
        fast = sh.fio(d.loop, "randwrite", "4k", io_size=CAP // 2, iodepth=QD,
                      **COMPRESSIBLE).write_bw
        after = d.stats()
        # Reads: the first half holds 98%-compressible data, the second 2%.
        half = CAP // 2
        sh.fio(d.loop, "write", "1M", size=half, **COMPRESSIBLE)
        sh.fio(d.loop, "write", "1M", offset=half, size=half, **INCOMPRESSIBLE)
        d.drain()
        # flash ns and host bytes of the reads of each half, and fio's rate
        reads = {98: [0, 0, 0.0], 2: [0, 0, 0.0]}
        for _ in range(2):   # alternate, so drifts in machine load cancel
            for p, offset in ((98, 0), (2, half)):
                s0 = d.stats()
                bw = sh.fio(d.loop, "read", "1M", offset=offset, size=half, iodepth=4,
                            runtime=1).read_bw
                s1 = d.stats()
                reads[p][0] += s1["flash_busy_ns"] - s0["flash_busy_ns"]
                reads[p][1] += s1["host_bytes_read"] - s0["host_bytes_read"]
                reads[p][2] += bw / 2
    flash_ratio = ((after["flash_bytes_written"] - before["flash_bytes_written"])
                   / (after["host_bytes_written"] - before["host_bytes_written"]))
    read_work = {p: ns / nbytes for p, (ns, nbytes, _) in reads.items()}
    print(f"compression: 98% {mib(fast)} vs 2% {mib(slow)} "
          f"({fast / slow:.1f}x, flash/host {flash_ratio:.2f}); "
          f"reads 98% {mib(reads[98][2])} vs 2% {mib(reads[2][2])}, flash ns per "
          f"byte read 98% {read_work[98]:.2f} vs 2% {read_work[2]:.2f}")
    assert flash_ratio < 0.5
    assert fast >= 1.5 * slow
    assert read_work[98] == pytest.approx(read_work[2], rel=0.10)


@pytest.fixture
def drive():
    with sh.sim_drive(**GEOMETRY) as d:
        yield d


def test_data_reads_back_and_trimmed_range_reads_zero(drive):
    data = os.urandom(MiB)
    sh.pwrite_direct(drive.loop, 2 * MiB, data)
    assert sh.pread_direct(drive.loop, 2 * MiB, MiB) == data
    drive.discard(2 * MiB, 512 << 10)
    assert sh.pread_direct(drive.loop, 2 * MiB, 512 << 10) == bytes(512 << 10)
    assert sh.pread_direct(drive.loop, 2 * MiB + (512 << 10), 512 << 10) == data[512 << 10:]
    assert drive.stats()["trimmed_bytes"] == 512 << 10


def test_io_error_fault_fails_reads_at_that_offset(drive):
    data = os.urandom(8192)
    sh.pwrite_direct(drive.loop, MiB, data)
    drive.fault_ioerror(MiB, 4096)
    assert sh.io_errno(sh.pread_direct, drive.loop, MiB, 4096) == errno.EIO
    assert sh.pread_direct(drive.loop, MiB + 4096, 4096) == data[4096:]
    assert sh.io_errno(sh.pwrite_direct, drive.loop, MiB, bytes(4096)) == errno.EIO
    assert drive.stats()["fault_errors"] >= 2
    drive.clear_faults()
    assert sh.pread_direct(drive.loop, MiB, 4096) == data[:4096]


def test_vanish_fault_fails_all_io(drive):
    drive.vanish()
    assert sh.io_errno(sh.pread_direct, drive.loop, 0, 4096) == errno.EIO
    assert sh.io_errno(sh.pread_direct, drive.loop, CAP - 4096, 4096) == errno.EIO
    assert sh.io_errno(sh.pwrite_direct, drive.loop, 8192, bytes(4096)) == errno.EIO
    assert not drive.image.exists()
    drive.clear_faults()
    assert sh.pread_direct(drive.loop, 0, 4096) == bytes(4096)


def test_latency_fault_delays_the_next_requests(drive):
    drive.fault_latency(200, 2)
    t0 = time.monotonic()
    for _ in range(3):
        sh.pread_direct(drive.loop, 0, 4096)
    elapsed = time.monotonic() - t0
    assert 0.4 <= elapsed < 2.0
    assert drive.stats()["fault_delayed"] == 2


def test_control_rejects_unknown_commands_and_stats_has_keys(drive):
    with pytest.raises(OSError) as e:
        drive.control("make it faster")
    assert e.value.errno == errno.EINVAL
    st = drive.stats()
    for key in ("host_bytes_written", "flash_bytes_written", "write_amplification",
                "free_blocks", "valid_pages", "erase_count_min", "erase_count_avg",
                "erase_count_max", "host_bytes_read", "trimmed_bytes"):
        assert key in st
    assert st["capacity"] == CAP
