"""service_helper: what the service tests need around wearmond, each part
cleaning up after itself even when a test fails:

    NotifyListener(dir)    an AF_UNIX datagram socket standing in for systemd's
                           NOTIFY_SOCKET; .messages() lists what arrived.
    PrivateJournald(root)  a real systemd-journald in a private mount namespace:
                           temporary directories are bind-mounted over
                           /run/systemd and /run/log (and /var/log/journal and
                           journald.conf) inside that namespace only, so the
                           host's journal, sockets and files are never touched.
                           .cmd(argv) runs argv inside it (nsenter); the journal
                           files land in root/run/log/journal, readable from
                           outside with journalctl -D or --root.
    Throttle(dev)          a write-bandwidth limit on one block device for the
                           processes of a cgroup created for the test (cgroup v2
                           io.max when the io controller is on there, else the
                           v1 blkio controller's throttle).
"""

import json
import os
import signal
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

JOURNALD = Path("/lib/systemd/systemd-journald")

JOURNALD_CONF = """[Journal]
Storage=volatile
ReadKMsg=no
ForwardToSyslog=no
ForwardToKMsg=no
ForwardToConsole=no
ForwardToWall=no
RateLimitIntervalSec=0
"""


class NotifyListener:
    """Collects sd_notify datagrams sent to path (in a thread)."""

    def __init__(self, directory):
        self.path = str(Path(directory) / "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.2)
        self._msgs = []
        self._lock = threading.Lock()
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            with self._lock:
                self._msgs.append((time.monotonic(), data.decode()))

    def messages(self):
        """Every datagram so far, in order, as text."""
        with self._lock:
            return [m for _, m in self._msgs]

    def assignments(self):
        """Every VAR=value line so far, in order."""
        return [line for m in self.messages() for line in m.split("\n") if line]

    def wait_for(self, pred, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred(self.assignments()):
                return True
            time.sleep(0.05)
        return pred(self.assignments())

    def close(self):
        self._stop = True
        self._thread.join(2)
        self.sock.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


class PrivateJournald:
    """A systemd-journald of our own; see the module doc."""

    def __init__(self, root):
        self.root = Path(root)
        self.holder = None
        self.journald = None

    @staticmethod
    def unavailable():
        """Why a private journald cannot run here, or None."""
        if os.geteuid() != 0:
            return "needs root"
        if not JOURNALD.exists():
            return f"{JOURNALD} missing"
        for tool in ("unshare", "nsenter", "journalctl"):
            if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode:
                return f"{tool} missing"
        for d in ("/run/systemd", "/run/log"):
            if not Path(d).is_dir():
                # binding over it would first need a directory created on the host
                return f"{d} does not exist"
        return None

    @property
    def journal_dir(self):
        return self.root / "run/log/journal"

    def _namespace_script(self):
        r = self.root
        return f"""set -e
mount --bind {r}/run/systemd /run/systemd
mount --bind {r}/run/log /run/log
if [ -f /etc/systemd/journald.conf ]; then
  mount --bind {r}/journald.conf /etc/systemd/journald.conf
fi
for d in /etc/systemd/journald.conf.d /usr/lib/systemd/journald.conf.d \
         /usr/local/lib/systemd/journald.conf.d; do
  if [ -d "$d" ]; then mount --bind {r}/empty "$d"; fi
done
if [ -d /var/log/journal ]; then mount --bind {r}/empty /var/log/journal; fi
echo ready
exec sleep 1000000
"""

    def start(self):
        """Start the namespace holder and journald; on any failure both are
        stopped before the error is raised (a context manager's __exit__
        does not run when __enter__ raises)."""
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self):
        for d in ("run/systemd", "run/log", "empty"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        (self.root / "journald.conf").write_text(JOURNALD_CONF)
        # The holder keeps the namespace; when it and everything entered into
        # it are gone, the namespace and its mounts vanish with them.
        self.holder = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
             self._namespace_script()],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.holder.stdout.readline().strip()
        if line != "ready":
            err = self.holder.stderr.read() if self.holder.poll() is not None else ""
            raise RuntimeError(f"private mount namespace failed: {line} {err}")
        self.journald = subprocess.Popen(self.cmd([str(JOURNALD)]), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sock = self.root / "run/systemd/journal/socket"
        end = time.monotonic() + 10
        while not sock.exists() and time.monotonic() < end:
            time.sleep(0.05)
        if not sock.exists():
            raise RuntimeError("systemd-journald did not create its socket")
        return self

    def cmd(self, argv):
        """argv run inside the namespace (it sees the private journal)."""
        return ["nsenter", "--target", str(self.holder.pid), "--mount", "--"] + [str(a) for a in argv]

    def as_unit(self, argv, identifier="wearmond"):
        """argv run as systemd runs a service with StandardError=journal:
        inside the namespace, stdout and stderr connected to a journal stream
        (systemd-cat) and JOURNAL_STREAM=DEVICE:INODE naming that stream, as
        systemd.exec(5) sets it. The process keeps argv's pid (every step
        execs)."""
        wrapper = ('JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2); '
                   'export JOURNAL_STREAM; exec "$@"')
        return self.cmd(["systemd-cat", "-t", identifier, "sh", "-c", wrapper, "sh",
                         *[str(a) for a in argv]])

    def entries(self, *match):
        """Journal entries (dicts) matching journalctl match arguments."""
        p = subprocess.run(["journalctl", "-D", str(self.journal_dir), "-o", "json",
                            "--no-pager", *match], capture_output=True, text=True)
        return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]

    def explain(self, catalog_root, *match):
        """`journalctl -x` output for match, with the catalog index built
        under catalog_root (journalctl --root=... --update-catalog). -x reads
        only /var/lib/systemd/catalog/database, so that directory is replaced
        inside the namespace, never on the host."""
        db_dir = Path(catalog_root) / "var/lib/systemd/catalog"
        subprocess.run(self.cmd(["mount", "--bind", db_dir, "/var/lib/systemd/catalog"]),
                       check=True, capture_output=True)
        p = subprocess.run(self.cmd(["journalctl", "-D", self.journal_dir, "-x", "--no-pager",
                                     *match]), capture_output=True, text=True, check=True)
        return p.stdout

    def stop(self):
        for proc in (self.journald, self.holder):
            if proc and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self.holder:
            self.holder.stdout.close()
            self.holder.stderr.close()
        self.journald = self.holder = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _mounts():
    """(fstype, mount point, super options) of every mount."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ", 1)
            fstype, _, sopts = right.split()[:3]
            out.append((fstype, left.split()[4], sopts))
    return out


def _majmin(dev):
    st = os.stat(dev)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


class Throttle:
    """Limit writes to dev for the processes put in our cgroup."""

    def __init__(self, dev):
        self.majmin = _majmin(dev)
        self.kind, self.base = self.find()
        if not self.kind:
            raise RuntimeError(self.base)
        self.dir = Path(self.base) / f"wearmon-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.dir.mkdir()

    @staticmethod
    def find():
        """("v2"|"v1", cgroup mount), or (None, why not)."""
        if os.geteuid() != 0:
            return None, "needs root"
        mounts = _mounts()
        for fstype, mnt, _ in mounts:
            if fstype == "cgroup2":
                ctl = Path(mnt) / "cgroup.subtree_control"
                if ctl.exists() and "io" in ctl.read_text().split():
                    return "v2", mnt
        for fstype, mnt, sopts in mounts:
            if fstype == "cgroup" and "blkio" in sopts.split(","):
                if (Path(mnt) / "blkio.throttle.write_bps_device").exists():
                    return "v1", mnt
        return None, "neither cgroup v2 io.max nor v1 blkio throttling is available"

    @property
    def procs(self):
        return self.dir / "cgroup.procs"

    def wrap(self, argv):
        """argv started inside the cgroup."""
        return ["sh", "-c", f'echo $$ > {self.procs} && exec "$@"', "sh"] + [str(a) for a in argv]

    def limit(self, bytes_per_s):
        if self.kind == "v2":
            (self.dir / "io.max").write_text(f"{self.majmin} wbps={int(bytes_per_s)}\n")
        else:
            (self.dir / "blkio.throttle.write_bps_device").write_text(
                f"{self.majmin} {int(bytes_per_s)}\n")

    def lift(self):
        if self.kind == "v2":
            (self.dir / "io.max").write_text(f"{self.majmin} wbps=max\n")
        else:
            (self.dir / "blkio.throttle.write_bps_device").write_text(f"{self.majmin} 0\n")

    def remove(self):
        """Lift the limit, hand any process left back to the root cgroup, rmdir."""
        try:
            self.lift()
        except OSError:
            pass
        try:
            for pid in self.procs.read_text().split():
                try:
                    (Path(self.base) / "cgroup.procs").write_text(pid + "\n")
                except OSError:
                    pass
        except OSError:
            pass
        for _ in range(50):
            try:
                self.dir.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)
