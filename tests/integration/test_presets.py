"""The shipped example configuration runs every workload as the workload
defines it: a copy of conf/wearmon.conf, changed only where it
must be (device, database, a small size, a bounded run), runs each workload
on a loop device, and the read and random fractions of the I/O wearmond
actually completed (iterations.reads, writes, random_ios) match the IOMeter
access specification or the pattern within 2 points."""

import re

import pytest

from conftest import REPO, MiB, query, run_wearmond, write_conf

EXAMPLE = REPO / "conf" / "wearmon.conf"

# workload: (percent of I/Os that read, percent of I/Os at a random offset),
# as common/io/workload.c (Tom's Hardware's IOMeter specifications) and the man page
# define them. "Random" is measured as wearmond counts it: an I/O that does
# not continue its job's previous one, so strideread, which jumps stride
# blocks every time, is 100 % non-contiguous although not random.
EXPECTED = {
    "seqwrite": (0, 0),
    "seqread": (100, 0),
    "randwrite": (0, 100),
    "randread": (100, 100),
    "rewrite": (0, 0),
    "backread": (100, 0),
    "strideread": (100, 100),
    "randrw": (50, 100),
    "seqrw": (50, 0),
    "database": (67, 100),
    "fileserver": (80, 100),
    "webserver": (100, 100),
    "workstation": (80, 80),
    "streaming": (100, 0),
}

TOLERANCE = 2.0     # points
MIN_OPS = 800       # the fewest I/Os a run gives (streaming: ~150 KiB each)


def set_key(text, key, value):
    """The example with its one "key = ..." line set to value."""
    new, n = re.subn(rf"^{re.escape(key)}[ \t]*=.*$", f"{key} = {value}", text,
                     flags=re.MULTILINE)
    assert n == 1, f"{EXAMPLE}: {n} lines set {key}"
    return new


def example_for(db, dev, workload):
    """The shipped example, pointed at dev, with a small bounded run. Every
    other line stays as shipped: an override there shows in the figures."""
    text = EXAMPLE.read_text()
    for key, value in {"database": db, "device": dev, "workload": workload,
                       "sizes": "32M", "amount": "4x", "duration": "30s",
                       "cycles": "1", "sample_interval": "0.5s"}.items():
        text = set_key(text, key, value)
    return text


def test_example_sets_no_workload_override():
    """What the example sets is what its comments say: read_percent and
    random_percent are shown commented out, not set."""
    text = EXAMPLE.read_text()
    for key in ("read_percent", "random_percent"):
        assert not re.search(rf"^{key}[ \t]*=", text, flags=re.MULTILINE), key
        assert re.search(rf"^;{key} = ", text, flags=re.MULTILINE), key


@pytest.mark.parametrize("workload", sorted(EXPECTED))
def test_example_runs_the_preset(workdir, make_loop, workload):
    loop = make_loop(64 * MiB)
    db = workdir / "presets.db"
    conf = write_conf(workdir / "wearmon.conf", example_for(db, loop.dev, workload))
    p = run_wearmond(conf)
    assert p.returncode == 0, p.stderr
    rows = query(db, """SELECT workload, status, ops, reads, writes, random_ios,
                               read_percent, random_percent
                        FROM iterations WHERE phase = 'measure'""")
    assert len(rows) == 1, rows
    r = rows[0]
    assert r["workload"] == workload and r["status"] == "done", r
    assert r["ops"] >= MIN_OPS, r
    assert r["reads"] + r["writes"] == r["ops"], r
    read_pct = 100.0 * r["reads"] / r["ops"]
    random_pct = 100.0 * r["random_ios"] / r["ops"]
    want_read, want_random = EXPECTED[workload]
    print(f"{workload}: {r['ops']} I/Os, read {read_pct:.2f}% (want {want_read}), "
          f"random {random_pct:.2f}% (want {want_random})")
    assert abs(read_pct - want_read) <= TOLERANCE, (workload, read_pct, want_read)
    assert abs(random_pct - want_random) <= TOLERANCE, (workload, random_pct, want_random)
