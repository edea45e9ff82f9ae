"""Compact samples (schema 16): a schema-15 database moved in place by the
real wearmond, in batches a kill -9 interrupts and a restart finishes,
every sample equal through the view; the rollup of old samples into
minutes after sample_retention, every byte still counted."""

import random
import signal
import sqlite3

from conftest import (REPO, query, run_wearmon, spawn, wait_for, write_conf, WEARMOND,
                      two_cycle_file_db)

FIXTURE = REPO / "tests/unit/fixtures/schema-v15.sql"
COLS = ["iteration_id", "phase", "t_ms", "mibps", "iops", "lat_p50_us", "lat_p99_us",
        "lat_max_us", "lat_p90_us", "lat_p999_us", "lat_p9999_us", "mibps_min_1s",
        "duration_ms", "bytes", "host_stall_ms"]
LAT = [c for c in COLS if c.startswith("lat_")]


def engine_sample(rnd, ns, kind):
    """One sample's columns as schema 15's writer computed them from
    integers (common/io/engine.c, make_sample; common/db/db_iter.c)."""
    secs = ns / 1e9
    nbytes = rnd.randrange(1, 1 << 33)
    ops = rnd.randrange(1, 1 << 20)
    lat = {c: rnd.randrange(0, 1 << 34) / 1e3 for c in LAT}
    row = {"mibps": nbytes / 1048576.0 / secs, "iops": ops / secs, **lat,
           "mibps_min_1s": None, "duration_ms": secs * 1e3, "bytes": nbytes,
           "host_stall_ms": None}
    if kind == 1:    # before schema 10: no length nor bytes; before 4: no p90...
        row.update(duration_ms=None, bytes=None, lat_p90_us=None, lat_p999_us=None,
                   lat_p9999_us=None)
    elif kind == 2:  # a stall and a 1-second minimum
        row.update(host_stall_ms=rnd.randrange(1, ns) / 1e6, mibps_min_1s=rnd.random() * 900)
    elif kind == 3:  # jobs > 1: a length that is no whole nanosecond
        secs = (ns + rnd.random()) / 1e9
        row.update(mibps=nbytes / 1048576.0 / secs, iops=ops / secs, duration_ms=secs * 1e3)
    return row


def schema15_db(path, copies, seed=1):
    """The fixture (a real schema-15 campaign) plus `copies` more
    iterations of synthetic samples of every kind the old table held."""
    rnd = random.Random(seed)
    c = sqlite3.connect(path)
    c.executescript(FIXTURE.read_text())
    icols = [r[1] for r in c.execute("PRAGMA table_info(iterations)") if r[1] != "id"]
    first = c.execute("SELECT id FROM iterations ORDER BY id LIMIT 1").fetchone()[0]
    for k in range(copies):
        sel = ", ".join(f"number + {100 * (k + 1)}" if n == "number" else n for n in icols)
        cur = c.execute(f"INSERT INTO iterations ({', '.join(icols)})"
                        f" SELECT {sel} FROM iterations WHERE id = ?", (first,))
        for phase, n in (("fill", 3), ("measure", 70)):
            for t in range(1, n + 1):
                row = engine_sample(rnd, 1000000000 if t < n else rnd.randrange(1, 10 ** 9),
                                    k % 4)
                row.update(iteration_id=cur.lastrowid, phase=phase, t_ms=t * 1000)
                c.execute(f"INSERT INTO samples ({', '.join(COLS)}) VALUES"
                          f" ({', '.join('?' * len(COLS))})", [row[x] for x in COLS])
    c.commit()
    c.close()


def rows(db, where=""):
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return c.execute(f"SELECT {', '.join(COLS)} FROM samples {where}"
                         " ORDER BY iteration_id, phase, t_ms").fetchall()
    finally:
        c.close()


def same(a, b, rel=1e-12):
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and abs(a - b) <= rel * max(1.0, abs(a))
    return a == b


def assert_same_samples(old, new):
    """Equal: exactly what has integers behind it; a length, and the rates
    over it, to the nanosecond it is stored to (a relative 0.5 ns / the
    length, where the old length was no whole nanosecond)."""
    assert len(old) == len(new) > 0
    dur = COLS.index("duration_ms")
    for o, n in zip(old, new):
        per_ns = 0.6e-6 / o[dur] if o[dur] else 0
        for i, col in enumerate(COLS):
            if col in LAT or col in ("iteration_id", "phase", "t_ms", "bytes"):
                assert o[i] == n[i], (col, o, n)
            elif col in ("mibps", "iops", "duration_ms"):
                assert same(o[i], n[i], 1e-12 + per_ns), (col, o, n)
            else:
                assert same(o[i], n[i]), (col, o, n)


def legacy_left(db):
    return query(db, "SELECT count(*) AS n FROM sqlite_master"
                     " WHERE name = 'samples_v15'")[0]["n"]


def daemon_conf(workdir, db, **extra):
    keys = "".join(f"{k} = {v}\n" for k, v in extra.items())
    return write_conf(workdir / "w.conf", f"[wearmon]\ndatabase = {db}\n{keys}\n"
                      f"[target n1]\ndevice = {workdir}/n1.img\nfile_size = 64M\n"
                      "ioengine = null\nsizes = 50% 100%\nfill = no\ncycles = 0\n"
                      "pause = 0.5s\n")


def start(conf, workdir, name):
    return spawn([WEARMOND, "--foreground", "-c", conf],
                 stderr=open(workdir / name, "w"), stdout=open("/dev/null", "w"))


def test_migration_keeps_every_sample_and_resumes_after_kill(workdir):
    db = workdir / "w.db"
    schema15_db(db, copies=400)
    old = rows(db)
    last_old = max(r[0] for r in old)
    conf = daemon_conf(workdir, db, sample_retention="forever")

    p = start(conf, workdir, "first.log")
    # killed once some batches are in and others are not
    assert wait_for(lambda: query(db, "SELECT count(*) AS n FROM sample_data"
                                      f" WHERE iteration_id <= {last_old}")[0]["n"] > 0, 60)
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=30)
    assert legacy_left(db) == 1, "the move ended before the kill: nothing to resume"
    assert query(db, "PRAGMA user_version")[0]["user_version"] >= 16
    # half moved, every sample is still there once through the view
    assert_same_samples(old, rows(db, f"WHERE iteration_id <= {last_old}"))

    p = start(conf, workdir, "second.log")
    assert wait_for(lambda: legacy_left(db) == 0, 120)
    assert wait_for(lambda: "migrating samples: done" in (workdir / "second.log").read_text(),
                    30)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=60)
    log = (workdir / "first.log").read_text() + (workdir / "second.log").read_text()
    assert "migrating samples: " in log and " of 404 iterations" in log
    assert_same_samples(old, rows(db, f"WHERE iteration_id <= {last_old}"))
    # what the daemon wrote meanwhile went to the compact table
    assert query(db, "SELECT count(*) AS n FROM sample_data"
                     f" WHERE iteration_id > {last_old}")[0]["n"] > 0


def test_new_samples_read_as_before(tmp_path):
    """The daemon's figures through the view: the rate is bytes over the
    length, IOPS ops over it, every byte of a phase in its samples."""
    db = two_cycle_file_db(tmp_path)
    assert query(db, "SELECT count(*) AS n FROM samples")[0]["n"] > 0
    bad = query(db, """SELECT s.* FROM samples s WHERE s.duration_ms <= 0
                       OR abs(s.mibps - s.bytes / 1048576.0 / (s.duration_ms / 1e3))
                          > 1e-9 * s.mibps
                       OR s.phase NOT IN ('fill', 'measure') OR s.iops IS NULL""")
    assert bad == []
    miss = query(db, """SELECT i.id FROM iterations i WHERE i.status = 'done'
                        AND i.bytes <> (SELECT sum(bytes) FROM samples s
                                        WHERE s.iteration_id = i.id AND phase = 'measure')""")
    assert miss == []


def run_until_rolled_up(workdir, iterations):
    """wearmond with sample_retention = 2s on a null-engine file target
    (iterations of 100 s at 1000 MiB/s), stopped once the samples of that
    many iterations are rolled up into minutes. Returns the database."""
    db = workdir / "w.db"
    conf = write_conf(workdir / "w.conf", f"[wearmon]\ndatabase = {db}\n"
                      "sample_retention = 2s\n\n"
                      f"[target n1]\ndevice = {workdir}/n1.img\nfile_size = 1G\n"
                      "ioengine = null\nsizes = 100%\namount = 100x\nfill = yes\n"
                      "cycles = 0\npause = 0.5s\n")
    p = start(conf, workdir, "d.log")
    assert wait_for(lambda: query(db, "SELECT count(DISTINCT iteration_id) AS n"
                                      " FROM sample_minute_data")[0]["n"] >= iterations, 120)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=60)
    return db


def test_old_samples_rolled_up_into_minutes(workdir):
    """sample_retention = 2s: the samples of iterations that ended more than
    2 s ago become minutes, with every byte of the phase."""
    db = run_until_rolled_up(workdir, 2)
    rolled = query(db, """SELECT i.id, i.bytes, i.fill_bytes, i.mibps_avg,
                            (SELECT sum(bytes) FROM sample_minutes m WHERE m.iteration_id
                             = i.id AND m.phase = 'measure') AS measure,
                            (SELECT sum(bytes) FROM sample_minutes m WHERE m.iteration_id
                             = i.id AND m.phase = 'fill') AS fill,
                            (SELECT sum(samples) FROM sample_minutes m
                             WHERE m.iteration_id = i.id) AS n,
                            (SELECT count(*) FROM samples s WHERE s.iteration_id = i.id) AS left
                          FROM iterations i WHERE i.id IN
                            (SELECT iteration_id FROM sample_minute_data)""")
    assert len(rolled) >= 2
    for r in rolled:
        assert r["left"] == 0                      # the 1-second rows are gone
        assert r["measure"] == r["bytes"] and r["fill"] == r["fill_bytes"], r
        assert r["n"] >= 100                       # 100 s measured at 1000 MiB/s
    minutes = query(db, "SELECT * FROM sample_minutes ORDER BY iteration_id, phase, minute")
    assert [m["minute"] for m in minutes if m["iteration_id"] == rolled[0]["id"]
            and m["phase"] == "measure"] == [0, 1]
    for m in minutes:
        assert m["mibps_min"] <= m["mibps_avg"] * (1 + 1e-9)
        assert m["mibps_avg"] <= m["mibps_max"] * (1 + 1e-9)
        assert m["lat_p50_us"] <= m["lat_max_us"] and m["duration_ms"] > 0
    # the newest iterations still have their samples (within 2 s, or not
    # yet visited): the rollup never touches a running one
    assert query(db, "SELECT count(*) AS n FROM sample_data s JOIN iterations i"
                     " ON i.id = s.iteration_id WHERE i.status = 'running'")[0]["n"] == 0


def test_merge_converts_a_schema15_input(workdir):
    """wearmon merge of a schema-15 database: its samples arrive compact,
    equal through the view (ids renumbered, in the same order)."""
    src = workdir / "v15.db"
    schema15_db(src, copies=8, seed=2)
    out = workdir / "out.db"
    p = run_wearmon("merge", "-o", out, src)
    assert p.returncode == 0, p.stderr
    old, new = rows(src), rows(out)
    assert_same_samples([(0,) + o[1:] for o in old], [(0,) + n[1:] for n in new])
    assert query(out, "SELECT count(*) AS n FROM sample_data")[0]["n"] == len(old)


def test_plot_and_report_read_rolled_up_minutes(workdir):
    """An iteration past sample_retention has no 1-second samples left: its
    samples chart and the report's samples table show its minute rows and
    say so (common/db/query/query_charts.c, QC_POINTS)."""
    db = run_until_rolled_up(workdir, 1)
    it = query(db, "SELECT min(iteration_id) AS id FROM sample_minute_data")[0]["id"]
    minutes = query(db, f"SELECT phase, bytes FROM sample_minutes WHERE iteration_id = {it}")
    row = query(db, f"SELECT bytes, fill_bytes FROM iterations WHERE id = {it}")[0]
    assert sum(m["bytes"] for m in minutes if m["phase"] == "measure") == row["bytes"]
    assert sum(m["bytes"] for m in minutes if m["phase"] == "fill") == row["fill_bytes"]
    svg = workdir / "s.svg"
    run_wearmon("plot", "--kind", "samples", "--iteration", it, "-o", svg, db=db, check=0)
    text = svg.read_text()
    assert "per-minute rollup: min/avg/max" in text and "no samples" not in text
    html = workdir / "r.html"
    run_wearmon("report", "-o", html, db=db, check=0)
    text = html.read_text()
    cap = f"Samples of iteration {it} (a row: per-minute rollup: min/avg/max)"
    assert cap in text, text[-3000:]
    # one table row per minute row
    part = text[text.index(cap):]
    part = part[:part.index("</table>")]
    assert part.count("<tr><td") == len(minutes)
    # the minute's lowest and highest rate next to its average
    assert part.count(" / ") >= 2 * len(minutes)
