"""Written data holds its compressibility at every scale: the real wearmond
writes a loop device (sequential and random writes, the fill included),
the test reads the region back and compresses it whole with the zstd CLI
(`zstd -3` and `zstd --long=27`) and chunk by chunk with Python's zlib:
each removes the configured share within 1 point, and no 4 KiB page
repeats."""

import subprocess
import zlib

import pytest

from conftest import MiB, run_wearmond, target_conf, write_conf

SIZE = 8 * MiB

BASE = {
        "region_size": "100%",
        "sizes": "8M",
        "amount": "1x",
        "cycles": "1",
        "queue_depth": "8",
        "sample_interval": "0.5s",
}

# (workload, block size, fill, queue depth): sequential writes at 512 B,
# 4 KiB and 1 MiB (QD2, so each slot buffer is written several times);
# random 4 KiB writes over a 1 MiB-block fill (so every byte of the region
# was written by wearmond, the fill at the same compressibility).
CASES = [
        ("seqwrite", "4k", "no", "8"),
        ("seqwrite", "512", "no", "8"),
        ("seqwrite", "1M", "no", "2"),
        ("randwrite", "4k", "yes", "8"),
]

LEVELS = [0, 2, 50, 98]


def zstd_removed(data, *opts):
    p = subprocess.run(["zstd", "-q", "-c", *opts], input=data, capture_output=True, check=True)
    return 100.0 * (1 - len(p.stdout) / len(data))


def zlib_removed(data, chunk):
    out = sum(len(zlib.compress(data[i:i + chunk], 6)) for i in range(0, len(data), chunk))
    return 100.0 * (1 - out / len(data))


def repeated_pages(data):
    seen, rep = set(), 0
    for i in range(0, len(data), 4096):
        page = data[i:i + 4096]
        rep += page in seen
        seen.add(page)
    return rep


def run_case(workdir, make_loop, workload, bs, fill, qd, level):
    loop = make_loop(SIZE)
    db = workdir / f"{workload}-{bs}-{level}.db"
    conf = write_conf(workdir / f"{workload}-{bs}-{level}.conf", target_conf(
        db, loop.dev, BASE, workload=workload, block_size=bs, fill=fill, queue_depth=qd,
        fill_block_size="1M", compressibility=str(level)))
    p = run_wearmond(conf, timeout=120)
    assert p.returncode == 0, p.stderr
    with open(loop.dev, "rb") as f:
        data = f.read(SIZE)
    assert len(data) == SIZE
    return data


@pytest.mark.parametrize("workload,bs,fill,qd", CASES)
def test_stream_compressibility(workdir, make_loop, workload, bs, fill, qd):
    for level in LEVELS:
        data = run_case(workdir, make_loop, workload, bs, fill, qd, level)
        got = {
                "zstd -3": zstd_removed(data, "-3"),
                "zstd --long=27": zstd_removed(data, "-3", "--long=27"),
                "zlib/64k": zlib_removed(data, 64 * 1024),
        }
        print(f"{workload} {bs} fill={fill} p={level}: " +
              ", ".join(f"{k} {v:.2f}%" for k, v in got.items()))
        for what, v in got.items():
            # At 512 B a block's zeros are one run of p% of 512 bytes (10 at
            # p = 2), and how much of such short runs zstd removes varies
            # with the random bytes around them: 0.98 to 1.91 points of 2
            # over 7 runs (daemon/wearmond.8, METHOD, Data); zlib is steady.
            tol = 1.5 if bs == "512" and what.startswith("zstd") else 1.0
            assert abs(v - level) <= tol, f"{workload} {bs} p={level}: {what} removed {v:.2f}%"
        # fresh content: no 4 KiB page of the region repeats another
        assert repeated_pages(data) == 0


def test_dedupe_share_on_device(workdir, make_loop):
    """dedupe_percent = 30: 30% (within 2 points) of the written 4 KiB pages
    repeat an earlier page; with 0 none does (checked above)."""
    loop = make_loop(SIZE)
    db = workdir / "d.db"
    conf = write_conf(workdir / "d.conf", target_conf(
        db, loop.dev, BASE, workload="seqwrite", block_size="64k", fill="no",
        compressibility="50", dedupe_percent="30"))
    p = run_wearmond(conf, timeout=120)
    assert p.returncode == 0, p.stderr
    with open(loop.dev, "rb") as f:
        data = f.read(SIZE)
    share = 100.0 * repeated_pages(data) / (SIZE // 4096)
    print(f"dedupe 30%: {share:.2f}% of 4 KiB pages repeat")
    assert abs(share - 30) <= 2.0
