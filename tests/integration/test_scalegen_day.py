"""build/scalegen writes what wearmond writes: a generated day against a
real day of wearmond with ioengine = null (tools/scalegen/README.md), table
by table.

The daemon's day: one target on a 512 GiB loop device (a sparse file, the
size of scalegen's drive), scalegen's campaign (8 sizes from 16 to 128 GiB,
each filled then measured for 900 s at QD32, one sample a second, a trim
between cycles, cycles = 0), stopped once its phases add up to a day. The
null engine simulates a drive of 1000 MiB/s on a clock of its own, so a day
takes seconds; its 4k random writes would take ten minutes of CPU, so both
sides measure with 1 MiB blocks (scalegen --rate 1000 --block-size 1M: the
same campaign on a drive that does not wear, at the null engine's rate).

"A day" on each side is 86,400 s of phases (fill and measure seconds), so
a daemon stopped a little later than a day compares per day all the same.
What a loop device cannot report (SMART counters, serial, the drive's own
evidence per row) and what only a loop device has (its backing file) are
left out of the column comparison and named below (the readings of the
drive's counters, device_series, out of every comparison); the null
engine's own event and the progress row's figures of the moment the
daemon stopped too."""

import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import (BUILD, TEST_TMP, query, sh, spawn, reap_started, stop, wait_for,
                      write_conf, WEARMOND)

pytestmark = pytest.mark.slow

DAY = 86400.0
TOLERANCE = 0.05
GIB = 1 << 30

# Columns a drive reports and a loop device does not (or the other way
# round): they say which device the history was taken on, not how rows
# are written. scalegen writes them as an NVMe drive with the OCP log does.
DEVICE_COLUMNS = {
    "targets": {"serial", "model", "firmware", "backing_dev", "backing_file", "backing_ino"},
    "health": {"data", "sectors_read", "sectors_written", "percentage_used", "data_units_read",
               "data_units_written", "media_errors", "available_spare", "temperature_c",
               "critical_warning", "power_on_hours", "nand_bytes_written",
               "host_bytes_written", "write_amplification", "host_bytes_delta",
               "nand_bytes_delta", "level_edge"},
    "iterations": {"device_host_bytes", "device_media_bytes", "device_wa",
                   "device_peak_temp_c", "device_throttle_seconds", "device_media_errors",
                   "device_spare_pct", "device_throttle_ms", "device_throttle_res_ms"},
}
# Tables of the drive's own readings: a loop device reports none, so the
# daemon's day has no rows there; scalegen's are an NVMe drive's.
DEVICE_TABLES = {"device_series"}
# The progress row says what the daemon was doing the moment it stopped
# (a trim has no rate, a phase just begun no bytes): its figures of that
# moment are not compared, its plan (cycle, sizes, duration) is.
MOMENT_COLUMNS = {"progress": {"mibps", "phase_bytes", "phase_seconds", "iteration_seconds",
                               "stage", "remaining_seconds"}}
# Rows that only the null engine writes (each run says its figures are
# simulated).
NOT_COMPARED = {"events": "kind <> 'null-engine'"}
# Tables whose rows come with the target or the run, not with the days.
PER_RUN = {"targets", "runs", "progress", "mapped_extents", "events"}


def null_conf(db, dev):
    sizes = " ".join(f"{16 * k}G" for k in range(1, 9))
    return (f"[wearmon]\ndatabase = {db}\n\n[target ssd1]\ndevice = {dev}\n"
            "allow_destroy = yes\nioengine = null\n"
            f"sizes = {sizes}\nfill = yes\nfill_block_size = 1M\n"
            "workload = randwrite\nblock_size = 1M\nqueue_depth = 32\n"
            "duration = 900s\namount = 100000x\ncycles = 0\nbetween_cycles = trim\n"
            "sample_interval = 1s\n")


PHASE_SECONDS = ("SELECT coalesce(sum(coalesce(seconds, 0) + coalesce(fill_seconds, 0)), 0)"
                 " AS s FROM iterations WHERE status = 'done'")


@pytest.fixture(scope="module")
def days():
    """{"daemon": db, "scalegen": db, "daemon_days": phase-days, ...}; the
    loop device, its file and both databases removed after."""
    d = Path(tempfile.mkdtemp(prefix="wearmon-scalegen-day-", dir=TEST_TMP))
    img, dev = d / "ssd1.img", None
    try:
        with open(img, "wb") as f:
            f.truncate(512 * GIB)
        dev = sh("losetup", "--show", "-f", img).stdout.strip()
        db = d / "daemon.db"
        proc = spawn([WEARMOND, "--foreground", "-c", write_conf(d / "w.conf",
                                                                   null_conf(db, dev))])
        done = wait_for(lambda: db.exists() and query(db, PHASE_SECONDS)[0]["s"] >= DAY,
                        timeout=1200, step=0.5)
        rc, _, err = stop(proc, signal.SIGTERM, timeout=120)
        assert done, f"the null-engine day did not end in time:\n{err}"
        assert rc == 0, err
        gen = d / "scalegen.db"
        p = subprocess.run([str(BUILD / "scalegen"), "--targets", "1", "--days", "1", "--rate",
                            "1000", "--block-size", str(1 << 20), "--out", str(gen)],
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        print(f"\n{p.stdout.strip()}")
        yield {"daemon": db, "scalegen": gen, "dir": d,
               "daemon_days": query(db, PHASE_SECONDS)[0]["s"] / DAY,
               "scalegen_days": query(gen, PHASE_SECONDS)[0]["s"] / DAY}
    finally:
        reap_started()
        if dev:
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        subprocess.run(["rm", "-rf", "--one-file-system", str(d)])


def tables(db, all_tables=False):
    """The tables compared (all of them with all_tables)."""
    names = [r["name"] for r in query(db, "SELECT name FROM sqlite_master WHERE type = 'table'"
                                      " AND name NOT LIKE 'sqlite%' ORDER BY name")]
    return names if all_tables else [t for t in names if t not in DEVICE_TABLES]


def filled(db, table):
    """(columns with a value in some row, columns with a value other than 0
    or '' in some row) of the table's compared rows."""
    cols = [r["name"] for r in query(db, f"SELECT name FROM pragma_table_info('{table}')")]
    where = NOT_COMPARED.get(table, "1")
    tests = ", ".join(f"max(\"{c}\" IS NOT NULL) AS \"n_{c}\", "
                      f"max(\"{c}\" IS NOT NULL AND \"{c}\" NOT IN (0, '')) AS \"v_{c}\""
                      for c in cols)
    row = query(db, f"SELECT {tests} FROM \"{table}\" WHERE {where}")[0]
    skip = DEVICE_COLUMNS.get(table, set()) | MOMENT_COLUMNS.get(table, set())
    return ({c for c in cols if row[f"n_{c}"] and c not in skip},
            {c for c in cols if row[f"v_{c}"] and c not in skip})


def count(db, table):
    where = NOT_COMPARED.get(table, "1")
    return query(db, f"SELECT count(*) AS n FROM \"{table}\" WHERE {where}")[0]["n"]


def test_generated_day_fills_the_columns_the_daemon_fills(days):
    """Every table: the columns the daemon gives a value (and a value other
    than 0) are those scalegen gives one, apart from what the device
    reports."""
    assert tables(days["daemon"], True) == tables(days["scalegen"], True)
    diff = {}
    for t in [t for t in tables(days["daemon"]) if t not in DEVICE_TABLES]:
        a, b = filled(days["daemon"], t), filled(days["scalegen"], t)
        for what, x, y in (("non-NULL", a[0], b[0]), ("non-zero", a[1], b[1])):
            if x != y:
                diff[f"{t} {what}"] = {"daemon only": sorted(x - y),
                                      "scalegen only": sorted(y - x)}
    assert not diff, diff


def test_generated_day_has_the_daemon_rows_per_day(days):
    """Rows per day of every table within 5 % (a row either way for a
    table of a few rows a day, such as the cycles); the tables that come
    with the run or the target hold as many rows."""
    bad = {}
    for t in [t for t in tables(days["daemon"]) if t not in DEVICE_TABLES]:
        a, b = count(days["daemon"], t), count(days["scalegen"], t)
        if t not in PER_RUN:
            a, b = a / days["daemon_days"], b / days["scalegen_days"]
        print(f"{t}: {a:.1f} (daemon) against {b:.1f} (scalegen) rows"
              f"{'' if t in PER_RUN else ' a day'}")
        if abs(a - b) > max(TOLERANCE * max(a, b), 1.0):
            bad[t] = (a, b)
    assert not bad, bad


def comparable(db, out):
    """A copy of db without what the device reports or the null engine
    adds (DEVICE_COLUMNS emptied, DEVICE_TABLES and NOT_COMPARED rows
    deleted), vacuumed. The null engine's figures are often whole numbers
    (exactly 1000 MiB/s, the same latency every I/O), a real drive's never
    are, and SQLite stores a whole REAL in fewer bytes than a fraction:
    every REAL value on both sides gets a fraction, so that the bytes
    compare the rows' layout, not how round the simulated figures are."""
    sql = [f"DELETE FROM \"{t}\" WHERE NOT ({w});" for t, w in NOT_COMPARED.items()]
    for t in tables(db):
        for c in query(db, f"SELECT name FROM pragma_table_info('{t}') WHERE type = 'REAL'"):
            sql.append(f"UPDATE \"{t}\" SET \"{c['name']}\" = \"{c['name']}\" + 0.318309886"
                       f" WHERE \"{c['name']}\" = round(\"{c['name']}\");")
    sql += [f"DELETE FROM \"{t}\";" for t in sorted(DEVICE_TABLES)]
    for t, cols in DEVICE_COLUMNS.items():
        have = {r["name"] for r in query(db, f"SELECT name FROM pragma_table_info('{t}')")}
        sets = ", ".join(f"\"{c}\" = NULL" for c in sorted(cols & have))
        sql.append(f"UPDATE \"{t}\" SET {sets};")
    sh("sqlite3", db, f".backup '{out}'")
    sh("sqlite3", out, "".join(sql) + "VACUUM;")
    return out


def pages(db, what="pgsize"):
    """Bytes of each table with its indexes by table name: the pages it
    holds (dbstat pgsize), or with what="payload" the bytes of its rows
    alone, which a table of a few dozen pages needs: one page more or
    less is already 5 % of it."""
    rows = query(db, f"SELECT coalesce(m.tbl_name, s.name) AS t, sum(s.{what}) AS b"
                 " FROM dbstat s LEFT JOIN sqlite_master m ON m.name = s.name GROUP BY 1")
    return {r["t"]: r["b"] for r in rows}


def test_generated_day_has_the_daemon_bytes_per_day(days):
    """The database's bytes per day within 5 %, and the bytes of the rows
    of each table holding more than 1 % of them, both vacuumed without what
    the device reports."""
    a = pages(comparable(days["daemon"], days["dir"] / "daemon-cmp.db"))
    b = pages(comparable(days["scalegen"], days["dir"] / "scalegen-cmp.db"))
    per_a = {t: v / days["daemon_days"] for t, v in a.items()}
    per_b = {t: v / days["scalegen_days"] for t, v in b.items()}
    total_a, total_b = sum(per_a.values()), sum(per_b.values())
    print(f"\nbytes a day: daemon {total_a / (1 << 20):.2f} MiB, scalegen "
          f"{total_b / (1 << 20):.2f} MiB")
    assert abs(total_a - total_b) <= TOLERANCE * total_a
    rows_a = pages(days["dir"] / "daemon-cmp.db", "payload")
    rows_b = pages(days["dir"] / "scalegen-cmp.db", "payload")
    for t in sorted(set(per_a) | set(per_b)):
        x, y = per_a.get(t, 0), per_b.get(t, 0)
        if max(x, y) > 0.01 * total_a:
            x = rows_a.get(t, 0) / days["daemon_days"]
            y = rows_b.get(t, 0) / days["scalegen_days"]
            print(f"{t}: {x / 1024:.0f} KiB of rows (daemon) against {y / 1024:.0f} KiB a day")
            assert abs(x - y) <= TOLERANCE * x, t
