"""Benchmark methodology end to end on real loop devices: every workload and
preset, block size mixes, several measured phases and repeats per size,
latency QoS columns, and CRC-32C verification catching a block the test
corrupts in the loop device's backing file."""

import math
import re

from conftest import MiB, query, run_wearmond, target_conf, write_conf

SECTOR = 512


DEFAULTS = {
        "sizes": "8M 16M",
        "fill": "yes",
        "fill_block_size": "128k",
        "fill_queue_depth": "8",
        "workload": "randwrite",
        "block_size": "4k",
        "queue_depth": "16",
        "amount": "1x",
        "cycles": "1",
        "sample_interval": "0.1s",
}


def conf_text(db, dev, **over):
    return target_conf(db, dev, DEFAULTS, **over)


def run(workdir, loop, name="w", check=True, **over):
    db = workdir / f"{name}.db"
    conf = write_conf(workdir / f"{name}.conf", conf_text(db, loop.dev, **over))
    p = run_wearmond(conf)
    if check:
        assert p.returncode == 0, p.stderr
    return db, p


PHASES = ["fill", "seqread", "backread", "strideread", "rewrite", "randrw", "seqrw",
          "database", "fileserver", "webserver", "workstation", "streaming"]


def test_every_workload_as_a_measured_phase(workdir, make_loop):
    loop = make_loop(32 * MiB)
    # measure= holds at most 8 phases: two runs cover all of them
    for k, part in enumerate([PHASES[:6], PHASES[6:]]):
        db, _ = run(workdir, loop, name=f"w{k}", measure=",".join(part), stride="4",
                    amount="0.5x")
        rows = query(db, """SELECT size_index, number, workload, phase, more_rows, status,
                                   block_size, block_sizes, read_percent, random_percent,
                                   bytes, fill_bytes, lat_p50_us, lat_p90_us, lat_p99_us,
                                   lat_p999_us, lat_p9999_us, lat_max_us, repeat_index
                            FROM iterations ORDER BY number""")
        assert len(rows) == 2 * len(part)
        assert [r["workload"] for r in rows] == part * 2
        assert [r["number"] for r in rows] == list(range(1, len(rows) + 1))
        for i, r in enumerate(rows):
            assert r["status"] == "done"
            assert r["size_index"] == i // len(part)
            assert r["more_rows"] == (0 if i % len(part) == len(part) - 1 else 1)
            assert r["repeat_index"] == 1
            assert r["lat_p50_us"] <= r["lat_p90_us"] <= r["lat_p99_us"] <= \
                r["lat_p999_us"] <= r["lat_p9999_us"] <= r["lat_max_us"]
            assert r["bytes"] > 0
            # a measured fill replaces the preconditioning fill, which
            # otherwise runs once per size, before its first row
            first = i % len(part) == 0
            assert (r["fill_bytes"] is not None) == (first and "fill" not in part)
        by = {r["workload"]: r for r in rows}
        if "fill" in by:
            assert by["fill"]["phase"] == "fill" and by["fill"]["read_percent"] == 0
            # schema.md, samples.bytes: the `measure` samples sum to `bytes`
            # (a measured fill has no preconditioning fill: fill_bytes NULL)
            for r in rows:
                if r["workload"] != "fill":
                    continue
                s = query(db, "SELECT phase, sum(bytes) AS b FROM samples WHERE"
                              " iteration_id = (SELECT id FROM iterations WHERE"
                              f" number = {r['number']}) GROUP BY phase")
                assert s == [{"phase": "measure", "b": r["bytes"]}], (r, s)
        if "fileserver" in by:
            f = by["fileserver"]
            assert (f["read_percent"], f["random_percent"]) == (80, 100)
            assert f["block_sizes"].startswith("512:10 1024:5 2048:5 4096:60")
            assert f["block_size"] == 65536
        if "database" in by:
            assert (by["database"]["read_percent"], by["database"]["block_size"]) == (67, 8192)
            assert by["database"]["block_sizes"] is None
        if "workstation" in by:
            assert by["workstation"]["random_percent"] == 80
        if "randrw" in by:
            assert (by["randrw"]["read_percent"], by["randrw"]["random_percent"]) == (50, 100)
        if "seqread" in by:
            assert by["seqread"]["read_percent"] == 100
            assert by["seqread"]["phase"] == "measure"
        samples = query(db, """SELECT count(*) AS n, min(lat_p90_us <= lat_p999_us) AS ordered,
                                      count(mibps_min_1s) AS with_min
                               FROM samples WHERE phase = 'measure'""")[0]
        assert samples["n"] > 0 and samples["ordered"] == 1
        assert samples["with_min"] == 0   # 0.1 s samples have no 1-second window


def test_mix_overrides_and_read_percent(workdir, make_loop):
    loop = make_loop(32 * MiB)
    db, _ = run(workdir, loop, workload="randrw", read_percent="25", random_percent="50",
                block_sizes="4k:3 64k:1", amount="2x")
    rows = query(db, "SELECT workload, read_percent, random_percent, block_sizes, block_size,"
                     " errors, status FROM iterations")
    assert len(rows) == 2
    for r in rows:
        assert (r["workload"], r["read_percent"], r["random_percent"]) == ("randrw", 25, 50)
        assert (r["block_sizes"], r["block_size"]) == ("4096:3 65536:1", 65536)
        assert (r["errors"], r["status"]) == (0, "done")


def test_repeat_stores_every_run_and_mean(workdir, make_loop):
    loop = make_loop(32 * MiB)
    db, _ = run(workdir, loop, measure="randwrite,randread", repeat="3", sizes="8M")
    rows = query(db, """SELECT workload, repeat_index, more_rows, mibps_avg, iops_avg,
                               mibps_repeat_mean, mibps_repeat_stddev, iops_repeat_mean,
                               iops_repeat_stddev, status, fill_bytes
                        FROM iterations ORDER BY number""")
    assert [(r["workload"], r["repeat_index"]) for r in rows] == \
        [("randwrite", 1), ("randwrite", 2), ("randwrite", 3),
         ("randread", 1), ("randread", 2), ("randread", 3)]
    assert [r["more_rows"] for r in rows] == [1, 1, 1, 1, 1, 0]
    # only the first row ran the preconditioning fill
    assert [r["fill_bytes"] is not None for r in rows] == [True] + [False] * 5
    for g in (rows[:3], rows[3:]):
        v = [r["mibps_avg"] for r in g]
        mean = sum(v) / 3
        sd = (sum((x - mean) ** 2 for x in v) / 2) ** 0.5
        assert g[0]["mibps_repeat_mean"] is None and g[1]["mibps_repeat_mean"] is None
        assert abs(g[2]["mibps_repeat_mean"] - mean) <= 1e-6 * mean
        assert abs(g[2]["mibps_repeat_stddev"] - sd) <= 1e-6 * max(sd, 1)
        iops = [r["iops_avg"] for r in g]
        assert abs(g[2]["iops_repeat_mean"] - sum(iops) / 3) <= 1e-6 * sum(iops)


def corrupt(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0xA5]))


def integrity_events(db):
    return query(db, "SELECT kind, severity, message, value, message_id,"
                     " json_extract(data, '$.offset') AS offset FROM events"
                     " WHERE kind = 'data-integrity' ORDER BY id")


def test_verify_clean_readback(workdir, make_loop):
    loop = make_loop(32 * MiB)
    db, _ = run(workdir, loop, verify="crc32c", verify_phase="yes", workload="randwrite",
                measure="randwrite,randread,backread", compressibility="50")
    rows = query(db, "SELECT workload, phase, verify, verify_errors, status, more_rows"
                     " FROM iterations ORDER BY number")
    assert [r["workload"] for r in rows] == ["randwrite", "randread", "backread", "verify"] * 2
    assert all(r["verify"] == "crc32c" and r["verify_errors"] == 0 and r["status"] == "done"
               for r in rows)
    assert [r["more_rows"] for r in rows] == [1, 1, 1, 0] * 2
    assert integrity_events(db) == []


def write_then_corrupt(workdir, loop, offset):
    # cycle 1 writes the whole 8 MiB with headers (fill + sequential writes)
    run(workdir, loop, name="write", verify="crc32c", workload="seqwrite", sizes="8M")
    corrupt(loop.backing, offset)


def test_verify_names_corrupted_offset_and_stops(workdir, make_loop):
    loop = make_loop(32 * MiB)
    bad = 5 * MiB + 37 * SECTOR
    write_then_corrupt(workdir, loop, bad + 200)
    db, p = run(workdir, loop, name="read", check=False, verify="crc32c", fill="no",
                workload="seqread", sizes="8M", queue_depth="1", block_size="64k")
    assert p.returncode == 1, p.stderr
    ev = integrity_events(db)
    assert len(ev) == 1
    assert ev[0]["severity"] == "err" and ev[0]["offset"] == bad and ev[0]["value"] == bad
    assert str(bad) in ev[0]["message"] and "checksum" in ev[0]["message"]
    # the data-integrity alert, with its fixed MESSAGE_ID (systemd/wearmon.catalog)
    assert ev[0]["message_id"] == "8f621bcd43e94192945b60775fe6ccf6"
    kinds = [a["kind"] for a in query(db, "SELECT kind FROM alerts ORDER BY event_id")]
    assert kinds[0] == "data-integrity" and kinds.count("data-integrity") == 1
    assert re.search(rf"offset {bad}\b", p.stderr)
    it = query(db, "SELECT status, error, verify_errors FROM iterations")
    assert len(it) == 1
    assert it[0]["status"] == "failed" and str(bad) in it[0]["error"]
    assert it[0]["verify_errors"] == 1


def test_verify_continue_keeps_going(workdir, make_loop):
    loop = make_loop(32 * MiB)
    bad = 3 * MiB + 5 * SECTOR
    write_then_corrupt(workdir, loop, bad + 40)
    db, p = run(workdir, loop, name="read", verify="crc32c", fill="no", workload="seqread",
                sizes="8M", on_verify_error="continue", amount="2x")
    it = query(db, "SELECT status, verify_errors, bytes FROM iterations")
    # read twice over: the bad sector is found on both passes, the phase completes
    assert it[0]["status"] == "done" and it[0]["verify_errors"] == 2
    assert it[0]["bytes"] == 16 * MiB
    ev = integrity_events(db)
    assert len(ev) == 2 and all(e["offset"] == bad for e in ev)


def test_bad_method_keys_rejected(workdir, make_loop):
    loop = make_loop(32 * MiB)
    cases = [
        ({"block_sizes": "4k:60 3000:40"}, "block_sizes", "multiple of 512"),
        ({"block_sizes": "4k 64M"}, "block_sizes", "smallest size"),
        ({"read_percent": "101", "workload": "randrw"}, "read_percent", "out of range"),
        ({"workload": "strideread", "stride": "10000"}, "stride", "larger than"),
        ({"measure": "fill,randwrite,bogus"}, "measure", "bogus"),
        ({"verify": "md5"}, "verify", "crc32c"),
        ({"repeat": "0"}, "repeat", "out of range"),
        ({"dedupe_percent": "101"}, "dedupe_percent", "out of range"),
        ({"dedupe_percent": "20", "verify": "crc32c"}, "dedupe_percent", "with verify"),
        ({"access": "zoned:50/5:30/15"}, "access", "add up to 80%"),
        ({"access": "zipf:0"}, "access", "theta above 0"),
        ({"block_align": "1000"}, "block_align", "multiple of 512"),
    ]
    for over, key, text in cases:
        db = workdir / "bad.db"
        conf = write_conf(workdir / "bad.conf", conf_text(db, loop.dev, **over))
        before = loop.checksum()
        p = run_wearmond(conf)
        assert p.returncode == 78, (over, p.stderr)
        assert re.search(rf"bad\.conf:\d+: {key}: .*{text}", p.stderr), (over, p.stderr)
        assert loop.checksum() == before


def window_figures(y):
    """The SNIA PTS window of the last 5 values: mean, range, excursion."""
    w = y[-5:]
    n = len(w)
    mean = sum(w) / n
    xm = (n - 1) / 2
    slope = sum((i - xm) * (v - mean) for i, v in enumerate(w)) / \
        sum((i - xm) ** 2 for i in range(n))
    return mean, max(w) - min(w), abs(slope) * (n - 1)


def test_steady_state_rounds(workdir, make_loop):
    loop = make_loop(32 * MiB)
    db, p = run(workdir, loop, steady_state="snia", max_rounds="8", sizes="8M",
                measure="randwrite,seqwrite", amount="0.5x")
    rows = query(db, """SELECT workload, round_index, more_rows, mibps_avg, status,
                               steady_reached, steady_round, steady_mean_mibps,
                               steady_range_mibps, steady_range_pct,
                               steady_excursion_mibps, steady_excursion_pct, fill_bytes
                        FROM iterations ORDER BY number""")
    assert all(r["status"] == "done" for r in rows)
    assert rows[0]["fill_bytes"] is not None
    assert all(r["fill_bytes"] is None for r in rows[1:])
    for k, wl in enumerate(["randwrite", "seqwrite"]):
        ph = [r for r in rows if r["workload"] == wl]
        n = len(ph)
        assert 5 <= n <= 8
        assert [r["round_index"] for r in ph] == list(range(1, n + 1))
        # every round but the phase's last says more rows follow; the very
        # last row of the size says none do
        assert [r["more_rows"] for r in ph] == [1] * (n - 1) + [1 - k]
        assert all(r["steady_reached"] is None for r in ph[:-1])
        last = ph[-1]
        mean, rng, exc = window_figures([r["mibps_avg"] for r in ph])
        assert abs(last["steady_mean_mibps"] - mean) <= 1e-6 * mean
        assert abs(last["steady_range_mibps"] - rng) <= 1e-6 * mean
        assert abs(last["steady_excursion_mibps"] - exc) <= 1e-6 * mean
        assert abs(last["steady_range_pct"] - 100 * rng / mean) <= 1e-6
        assert abs(last["steady_excursion_pct"] - 100 * exc / mean) <= 1e-6
        ok = rng <= 0.20 * mean * (1 + 1e-9) and exc <= 0.10 * mean * (1 + 1e-9)
        if last["steady_reached"] == 1:
            assert ok and last["steady_round"] == n
            # and no earlier window was steady (the phase stops at the first)
            for m in range(5, n):
                e_mean, e_rng, e_exc = window_figures([r["mibps_avg"] for r in ph[:m]])
                assert e_rng > 0.20 * e_mean or e_exc > 0.10 * e_mean
        else:
            assert last["steady_reached"] == 0 and n == 8 and not ok
            assert last["steady_round"] is None
    view = query(db, "SELECT workload, rounds, steady_reached FROM steady_state ORDER BY iteration")
    assert [v["workload"] for v in view] == ["randwrite", "seqwrite"]
    assert "steady state" in p.stderr


def test_steady_state_excludes_repeat(workdir, make_loop):
    loop = make_loop(32 * MiB)
    db = workdir / "bad.db"
    conf = write_conf(workdir / "bad.conf",
                      conf_text(db, loop.dev, steady_state="snia", repeat="3"))
    p = run_wearmond(conf)
    assert p.returncode == 78, p.stderr
    assert re.search(r"bad\.conf:\d+: repeat: .*steady_state", p.stderr), p.stderr
    for over, key in (({"max_rounds": "4"}, "max_rounds"), ({"steady_state": "fio"}, "steady_state")):
        conf = write_conf(workdir / "bad.conf", conf_text(db, loop.dev, **over))
        p = run_wearmond(conf)
        assert p.returncode == 78 and f"{key}:" in p.stderr, p.stderr


def test_jobs_sum_into_one_row(workdir, make_loop):
    loop = make_loop(32 * MiB)
    db, _ = run(workdir, loop, jobs="4", measure="randwrite,seqwrite,randread",
                amount="12x", sizes="8M", sample_interval="0.1s")
    rows = query(db, """SELECT id, workload, jobs, amount_bytes, bytes, ops, iops_avg,
                               mibps_avg, seconds, status, fill_bytes, lat_max_us
                        FROM iterations ORDER BY number""")
    assert [r["workload"] for r in rows] == ["randwrite", "seqwrite", "randread"]
    for r in rows:
        assert r["status"] == "done" and r["jobs"] == 4
        # one row per phase: the four jobs' shares add up to the amount
        assert r["amount_bytes"] == 96 * MiB
        assert r["bytes"] == r["amount_bytes"]
        assert r["ops"] == r["bytes"] // 4096
        assert abs(r["mibps_avg"] - r["bytes"] / MiB / r["seconds"]) <= 1e-6 * r["mibps_avg"]
        assert abs(r["iops_avg"] - r["ops"] / r["seconds"]) <= 1e-6 * r["iops_avg"]
        smp = query(db, f"""SELECT t_ms, iops FROM samples
                            WHERE iteration_id = {r["id"]} AND phase = 'measure'
                            ORDER BY t_ms""")
        assert len(smp) >= 1
        # the samples hold the summed operations of every job: all of them
        # but a trailing part shorter than half an interval
        prev, ops = 0, 0.0
        for x in smp:
            ops += x["iops"] * (x["t_ms"] - prev) / 1000
            prev = x["t_ms"]
        assert r["ops"] * 0.5 <= ops <= r["ops"] * 1.02, (ops, r["ops"], smp)
    db1, _ = run(workdir, loop, name="one", measure="randwrite", amount="3x", sizes="8M")
    one = query(db1, "SELECT jobs, bytes, ops FROM iterations")[0]
    assert (one["jobs"], one["bytes"], one["ops"]) == (1, 24 * MiB, 6 * 1024)


def zstd_level1():
    """ZSTD_compress at level 1 from the libzstd wearmond links, via ctypes."""
    import ctypes
    import ctypes.util
    lib = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    lib.ZSTD_compressBound.restype = ctypes.c_size_t
    lib.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
    lib.ZSTD_compress.restype = ctypes.c_size_t
    lib.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p,
                                  ctypes.c_size_t, ctypes.c_int]

    def size(data):
        cap = lib.ZSTD_compressBound(len(data))
        out = ctypes.create_string_buffer(cap)
        return lib.ZSTD_compress(out, cap, data, len(data), 1)
    return size


def measured_on_disk(path, span, bs):
    """Compressibility of what is on the backing file as a page-compressing
    controller sees it: zstd level 1 per block, per 4 KiB page for smaller
    blocks (test_datagen_stream.py judges the whole stream too). Returns the
    overall figure and the lowest and highest unit."""
    size = zstd_level1()
    unit = max(bs, 4096)
    with open(path, "rb") as f:
        data = f.read(span)
    per = [100 * (1 - size(data[o:o + unit]) / unit) for o in range(0, span, unit)]
    return 100 * (1 - sum((1 - p / 100) * unit for p in per) / span), min(per), max(per)


def test_compressibility_on_disk(workdir, make_loop):
    loop = make_loop(32 * MiB)
    for bs, level, workload in [("512", 50, "seqwrite"), ("4k", 75, "seqwrite"),
                                ("4k", 2, "seqwrite"), ("64k", 25, "seqwrite"),
                                ("4k", 98, "seqwrite"), ("1M", 100, "seqwrite")]:
        n = int(bs[:-1]) * (1024 if bs[-1] == "k" else MiB) if bs[-1] in "kM" else int(bs)
        run(workdir, loop, name=f"c{bs}{level}", fill="no", workload=workload,
            block_size=bs, sizes="8M", compressibility=str(level), queue_depth="32")
        got, lo, hi = measured_on_disk(loop.backing, 8 * MiB, n)
        assert abs(got - level) <= 3, (bs, level, got)
        assert abs(lo - level) <= 3 and abs(hi - level) <= 3, (bs, level, lo, hi)


def duplicate_share(path, span, bs=4096):
    """Share of bs-blocks in the first span bytes equal to an earlier one."""
    seen, dups = set(), 0
    with open(path, "rb") as f:
        for _ in range(span // bs):
            block = f.read(bs)
            if block in seen:
                dups += 1
            seen.add(block)
    return dups / (span // bs)


def test_dedupe_percent_repeats_that_share_of_blocks(workdir, make_loop):
    loop = make_loop(32 * MiB)
    span = 16 * MiB
    for pct in (0, 50):
        db, _ = run(workdir, loop, name=f"d{pct}", sizes="16M", fill="no", workload="seqwrite",
                    queue_depth="8", compressibility="50", dedupe_percent=str(pct))
        share = duplicate_share(loop.backing, span)
        assert query(db, "SELECT dedupe_percent FROM iterations") == [{"dedupe_percent": pct}]
        if pct == 0:
            assert share == 0
        else:
            # each of the 8 slots' first block cannot repeat anything
            assert abs(share * 100 - pct) <= 5, share


# JESD219's enterprise workload: sizes (bytes) and their percent, and its
# zones (percent of the writes, percent of the span)
JESD_SIZES = {512: 4, 1024: 1, 1536: 1, 2048: 1, 2560: 1, 3072: 1, 3584: 1,
              4096: 67, 8192: 10, 16384: 7, 32768: 3, 65536: 3}
JESD_ZONES = [(50, 5), (30, 15), (20, 80)]
UNIT = 65536   # the largest size: the units the zones are cut in
CELL = 4096    # the written map's unit (common/base/wmap.h)


def cell_touch_share():
    """For one write of the mix into a 64 KiB unit, the chance that it
    touches each 4 KiB cell of the unit: sizes under 4 KiB start on any
    512 bytes, the others on 4 KiB, uniformly over the places that keep
    the write inside the unit."""
    q = [0.0] * (UNIT // CELL)
    for size, pct in JESD_SIZES.items():
        step = 512 if size < 4096 else 4096
        starts = range(0, UNIT - size + 1, step)
        for o in starts:
            for c in range(o // CELL, (o + size - 1) // CELL + 1):
                q[c] += pct / 100 / len(starts)
    return q


def test_jesd219_writes_its_zones(workdir, make_loop):
    """The jesd219 preset on a 256 MiB loop device, 0.25x written: the
    stored row names its twelve sizes and only random writes, and the map
    of what its writes completed (mapped_extents) covers each zone as the
    preset's shares predict: the first 5 % of the span nearly whole, the
    last 80 % thinly (uniform writes would cover each about alike)."""
    loop = make_loop(256 * MiB)
    db, _ = run(workdir, loop, workload="jesd219", sizes="256M", fill="no", amount="0.25x")
    rows = query(db, "SELECT workload, block_sizes, block_size, reads, writes, random_ios,"
                     " region_offset, size_bytes, errors, status FROM iterations")
    assert len(rows) == 1
    it = rows[0]
    assert (it["workload"], it["status"], it["errors"], it["reads"]) == \
        ("jesd219", "done", 0, 0)
    assert it["block_sizes"] == " ".join(f"{s}:{p}" for s, p in JESD_SIZES.items())
    assert it["block_size"] == UNIT
    # random: only a write that happens to follow the one before counts
    # as sequential
    assert it["writes"] > 8000 and it["random_ios"] >= 0.99 * it["writes"]
    n_units = it["size_bytes"] // UNIT
    edges, cum = [0], 0
    for _, lba in JESD_ZONES:
        cum += lba
        edges.append(n_units * cum // 100)
    base = it["region_offset"]
    extents = query(db, "SELECT start_byte, end_byte FROM mapped_extents")
    q = cell_touch_share()
    for z, (io, _) in enumerate(JESD_ZONES):
        lo, hi = base + edges[z] * UNIT, base + edges[z + 1] * UNIT
        got = sum(max(0, min(e["end_byte"], hi) - max(e["start_byte"], lo))
                  for e in extents) / (hi - lo)
        per_unit = it["writes"] * io / 100 / (edges[z + 1] - edges[z])
        want = sum(1 - math.exp(-per_unit * qc) for qc in q) / len(q)
        print(f"zone {z + 1}: {io} % of {it['writes']} writes over "
              f"{(hi - lo) / MiB:.2f} MiB: {100 * got:.2f} % written, model {100 * want:.2f} %")
        # wide against the spread from run to run (about a point here),
        # narrow against uniform writes, which would cover about 24 % of
        # every zone
        assert abs(got - want) <= max(0.02, 0.1 * want), (z, got, want)

