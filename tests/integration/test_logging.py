"""Where wearmond's messages go (systemd.exec(5)'s JOURNAL_STREAM convention).

A person who runs wearmond by hand on a machine where systemd-journald runs
(every lab machine) must see its errors on the terminal; run as the unit
runs it (stderr connected to the journal, JOURNAL_STREAM naming that stream)
the same messages land in the journal with their structured fields. Both are
checked against a real systemd-journald, private to the test (a mount
namespace of its own, service_helper.PrivateJournald)."""

import os
import re
import signal
import subprocess

import pytest

from conftest import WEARMOND, MiB, query, run_wearmond, wait_for
from service_helper import PrivateJournald
from test_service import conf_text, line_of, write_conf


@pytest.fixture
def journald(workdir):
    why = PrivateJournald.unavailable()
    if why:
        pytest.skip(f"private journald: {why}")
    with PrivateJournald(workdir / "journal-root") as jd:
        yield jd


def bad_conf(workdir, loop):
    """A configuration whose one error is a bad value of queue_depth."""
    conf = write_conf(workdir / "bad.conf", conf_text(workdir / "w.db", loop.dev,
                                                      queue_depth="lots"))
    return conf, line_of(conf.read_text(), "queue_depth")


def run(argv, **kw):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, **kw)


def test_by_hand_errors_reach_the_terminal(workdir, make_loop, journald):
    # The journal's socket exists in this namespace, as on a lab machine.
    assert (journald.root / "run/systemd/journal/socket").exists()
    loop = make_loop(32 * MiB)
    conf, line = bad_conf(workdir, loop)
    env = {k: v for k, v in os.environ.items() if k != "JOURNAL_STREAM"}
    p = run(journald.cmd([WEARMOND, "-c", conf]), env=env)
    assert p.returncode == 78, p.stderr
    assert f"{conf}:{line}: queue_depth" in p.stderr
    # A JOURNAL_STREAM inherited from a parent whose stderr was the journal
    # does not count: our stderr is a pipe here, so the terminal still wins.
    p = run(journald.cmd([WEARMOND, "-c", conf]), env=dict(env, JOURNAL_STREAM="8:12345"))
    assert p.returncode == 78 and f"{conf}:{line}: queue_depth" in p.stderr
    assert not journald.entries("SYSLOG_IDENTIFIER=wearmond")


def test_check_always_prints(workdir, make_loop, journald):
    loop = make_loop(32 * MiB)
    conf, line = bad_conf(workdir, loop)
    p = run(journald.cmd([WEARMOND, "--check", "-c", conf]))
    assert p.returncode == 78
    assert f"{conf}:{line}: queue_depth" in p.stderr


def test_journal_option_still_prints_startup_refusals(workdir, make_loop, journald):
    # --journal from a terminal: the refusal goes to the journal with its
    # fields, and to stderr too, because the person is waiting for it.
    loop = make_loop(32 * MiB)
    conf = write_conf(workdir / "w.conf", conf_text(workdir / "w.db", loop.dev,
                                                    allow_destroy="no"))
    p = run(journald.cmd([WEARMOND, "--journal", "-c", conf]))
    assert p.returncode == 78
    assert "allow_destroy" in p.stderr
    msgs = [e["MESSAGE"] for e in journald.entries("SYSLOG_IDENTIFIER=wearmond")]
    assert any("allow_destroy" in m for m in msgs), msgs


def test_as_the_unit_runs_it_messages_go_to_the_journal(workdir, make_loop, journald):
    loop = make_loop(32 * MiB)
    conf, line = bad_conf(workdir, loop)
    p = run(journald.as_unit([WEARMOND, "-c", conf]))
    assert p.returncode == 78
    assert p.stderr == ""                 # stderr is the journal stream
    entries = journald.entries("SYSLOG_IDENTIFIER=wearmond", "-p", "err")
    assert any(f"{conf}:{line}: queue_depth" in e["MESSAGE"] for e in entries), entries
    # Sent with sd_journal_send, not as a line of the stream: the priority
    # is wearmond's own and the stream's fields are absent.
    e = next(e for e in entries if "queue_depth" in e["MESSAGE"])
    assert e["PRIORITY"] == "3"
    assert "_STREAM_ID" not in e

    # A good configuration run the same way: the start message carries the
    # structured fields of a real run.
    good = write_conf(workdir / "good.conf", conf_text(workdir / "w.db", loop.dev,
                                                       sizes="16M", cycles="1"))
    p = run(journald.as_unit([WEARMOND, "-c", good]))
    assert p.returncode == 0
    started = journald.entries("SYSLOG_IDENTIFIER=wearmond", "-g", "started")
    assert started and started[0]["PRIORITY"] == "6" and "_STREAM_ID" not in started[0]
    fielded = [e for e in journald.entries("SYSLOG_IDENTIFIER=wearmond")
               if e.get("TARGET") == "lab1"]
    assert fielded and all(e.get("DEVICE") == loop.dev for e in fielded if "DEVICE" in e)


def test_debug_logs_each_iteration_store_time(workdir, make_loop):
    """--debug adds one line per stored iteration with the milliseconds its
    database transaction took (what `make bench` reports); without it,
    no debug line."""
    loop = make_loop(32 * MiB)
    conf = write_conf(workdir / "d.conf", conf_text(workdir / "d.db", loop.dev,
                                                    cycles="1", duration="0.3s"))
    p = run_wearmond(conf, "--debug", check=True)
    lines = re.findall(r"iteration (\d+) stored in ([0-9.]+) ms \((\d+) samples\)", p.stderr)
    # sizes 16M 32M, one cycle: two iterations, each with its samples
    assert [int(n) for n, _, _ in lines] == [1, 2], p.stderr
    assert all(float(ms) > 0 and int(k) >= 1 for _, ms, k in lines)
    (workdir / "d.db").unlink()
    p = run_wearmond(conf, check=True)
    assert "stored in" not in p.stderr


def test_clean_start_run_stop_logs_nothing_at_warning(workdir, make_loop, journald):
    """Only real alerts are warning or worse, so that `journalctl -p warning`
    lists alerts alone: a run that starts, measures, is asked to stop in the
    middle of an iteration and stops cleanly logs nothing at warning or
    above; the interrupted iteration and the stop are notice or info.
    Alerts are off here: on a busy machine a loop device's rate may really
    collapse for a moment, and that alert would rightly be a warning."""
    loop = make_loop(64 * MiB)
    conf = write_conf(workdir / "w.conf", conf_text(workdir / "w.db", loop.dev,
                                                    duration="30s", cycles="0",
                                                    alert_below="0", sample_crash_below="0"))
    proc = subprocess.Popen(journald.as_unit([WEARMOND, "-c", conf]), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: (workdir / "w.db").exists() and query(
            workdir / "w.db", "SELECT 1 FROM samples LIMIT 1"), 120), "no sample stored"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    entries = journald.entries("SYSLOG_IDENTIFIER=wearmond")
    assert any("interrupted" in e["MESSAGE"] for e in entries), entries
    interrupted = next(e for e in entries if "[interrupted]" in e["MESSAGE"])
    assert interrupted["PRIORITY"] == "5", interrupted          # notice
    loud = journald.entries("SYSLOG_IDENTIFIER=wearmond", "-p", "warning")
    assert not loud, [(e["PRIORITY"], e["MESSAGE"]) for e in loud]
