"""The foreground daemon's status lines: on a terminal, one line per target
rewritten at most once a second (cycle, size, phase and its share, MiB/s
and IOPS now, time left of the phase and the cycle) below the log, which
they never garble; to a pipe, a file or the journal, none of it.

The terminal is a pseudo-terminal opened here (python's pty), 200 columns
wide; the journal a real systemd-journald private to the test
(service_helper.PrivateJournald). The target is a regular file the test
creates; the tests wait on what the daemon prints, never on time."""

import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import time

import pytest

from conftest import WEARMOND, run_wearmond, write_conf
from service_helper import PrivateJournald

# console.c: "NAME  cycle C/N  size I/N BYTES  PHASE P%  ..."
LINE = re.compile(r"^(\S+)  cycle (\d+)(?:/(\d+))?  size (\d+)/(\d+) [0-9.]+ \S+  "
                  r"(fill|measure|verify) (\d+)%")
ESC = "\x1b["


def conf(workdir, **over):
    keys = {"device": workdir / "f1.img", "file_size": "64M", "sizes": "16M 32M",
            "fill": "no", "workload": "randwrite", "block_size": "4k", "queue_depth": "2",
            "amount": "1000x", "duration": "4s", "cycles": "1", "sample_interval": "0.25s"}
    keys.update(over)
    body = "\n".join(f"{k} = {v}" for k, v in keys.items())
    return write_conf(workdir / "w.conf",
                      f"[wearmon]\ndatabase = {workdir}/w.db\n\n[target f1]\n{body}\n")


class Terminal:
    """wearmond --foreground on a pseudo-terminal; .text is all it wrote."""

    def __init__(self, argv, cols=200):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:   # the child: its stdin, stdout and stderr are the pty
            try:
                os.execv(str(argv[0]), [str(a) for a in argv])
            finally:
                os._exit(127)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
        self.raw = b""
        self.status = None

    @property
    def text(self):
        return self.raw.decode(errors="replace")

    def read(self, timeout=0.2):
        """Read what is there; returns False at the end of output."""
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:      # EIO: the child closed its side
            return False
        self.raw += data
        return bool(data)

    def wait_for(self, pred, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred(self.text):
                return True
            if not self.read():
                break
        return pred(self.text)

    def stop(self, timeout=30):
        """SIGTERM, read to the end, wait; returns the exit status."""
        if self.status is None:
            os.kill(self.pid, signal.SIGTERM)
            end = time.monotonic() + timeout
            while time.monotonic() < end and self.read(0.5):
                pass
            _, st = os.waitpid(self.pid, 0)
            self.status = os.waitstatus_to_exitcode(st)
            os.close(self.fd)
        return self.status


def status_lines(text):
    """The status lines the terminal was shown, in order (each drawn line
    follows a clear: ESC[nA ESC[J, or is the first)."""
    return [c for c in re.split(r"\r\n|\x1b\[J|\r", text) if LINE.match(c)]


def two_shares_of_one_phase(text):
    """Two different percentages of the same target, cycle, size and phase."""
    seen = {}
    for line in status_lines(text):
        m = LINE.match(line)
        key = (m.group(1), m.group(2), m.group(4), m.group(6))
        seen.setdefault(key, set()).add(int(m.group(7)))
    return any(len(v) >= 2 for v in seen.values())


def test_terminal_shows_the_line_updating(workdir):
    t = Terminal([WEARMOND, "--foreground", "-c", conf(workdir)])
    try:
        assert t.wait_for(two_shares_of_one_phase, 120), t.text
        assert t.wait_for(lambda s: "iteration 1 size" in s, 120), t.text
    finally:
        rc = t.stop()
    assert rc == 0, t.text
    text = t.text
    # the status line says what it is about: units and the time left
    line = status_lines(text)[-1]
    assert re.search(r"(MiB/s [0-9]+ IOPS|no sample yet)", line) and "left: phase" in line, line
    # every log line is whole: a clear sequence never lands inside one
    for raw in text.split("\r\n"):
        if "wearmond: " in raw:
            log = raw[raw.index("wearmond: "):]
            assert ESC not in log, repr(raw)
    assert "wearmond: info: target f1: cycle 1 iteration 1 size 16.00 MiB randwrite" in text
    # at the end the lines are cleared: the last thing written is the log's
    tail = text.rstrip("\r\n").rsplit("\r\n", 1)[-1]
    assert tail.endswith("after the stop signal") or "wearmond stopped" in tail, repr(tail)
    assert not LINE.match(text.rsplit(ESC + "J", 1)[-1]), repr(text[-300:])


def test_no_status_line_to_a_pipe(workdir):
    p = run_wearmond(conf(workdir, duration="1s"), timeout=120)
    assert p.returncode == 0, p.stderr
    assert "iteration 2 size" in p.stderr
    assert ESC not in p.stderr and not status_lines(p.stderr), p.stderr


def test_none_of_it_in_the_journal(workdir):
    why = PrivateJournald.unavailable()
    if why:
        pytest.skip(f"private journald: {why}")
    with PrivateJournald(workdir / "journal-root") as jd:
        # as the unit runs it: stderr is the journal's stream
        p = subprocess.run(jd.as_unit([WEARMOND, "-c", conf(workdir, duration="1s")]),
                                         capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        entries = jd.entries()
        msgs = [e.get("MESSAGE", "") for e in entries]
        assert any("iteration 2 size" in m for m in msgs if isinstance(m, str)), msgs
        assert not [m for m in msgs if not isinstance(m, str) or ESC in m or LINE.match(m)], msgs
