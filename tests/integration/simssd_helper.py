"""simssd_helper: start a simulated SSD (build/simssd), put a loop device on
it, run fio against it, and tear it all down again even when a test fails.

    with simssd_helper.sim_drive(capacity="16M", erase_block="32k") as d:
        d.loop            # "/dev/loopN", the block device to test
        d.stats()         # {"write_amplification": 1.0, ...}
        d.control("fault vanish")
        r = simssd_helper.fio(d.loop, rw="write", bs="1M", size="8M")
        r.write_bw        # bytes/s

The loop device is attached with --direct-io=on (pass loop_direct_io=False
for the buffered path; attach_loop=False for none). Like a real drive, each
has an identity (simssd's identity file, which wearmond reads for a loop
device on it): a serial of 20 characters unique to the drive, a model of
40 and firmware of 8, the longest NVMe and ATA report (serial=, model=,
firmware= override them; "" for none). Options are simssd's
-o options as keywords, see tools/simssd/README.md. Needs root, /dev/fuse,
fusermount3, losetup, blkdiscard and fio (missing_prerequisites() says
what is absent, for pytest.mark.skipif).
"""

import contextlib
import itertools
import json
import mmap
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

MiB = 1 << 20

# Where `make` put the binaries: $WEARMON_BUILD, else the repo's build/.
BUILD = Path(os.environ.get("WEARMON_BUILD",
                            Path(__file__).resolve().parents[2] / "build"))
SIMSSD = BUILD / "simssd"

_SIZE_SUFFIX = {"": 1, "B": 1, "k": 1 << 10, "K": 1 << 10, "KiB": 1 << 10,
                "M": 1 << 20, "MiB": 1 << 20, "G": 1 << 30, "GiB": 1 << 30,
                "T": 1 << 40, "TiB": 1 << 40}
_TIME_SUFFIX = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "": 1e-6}


def parse_size(v):
    """Bytes in "16M", "4k", 4096 (the simulator's syntax, powers of 1024)."""
    if isinstance(v, int):
        return v
    s = str(v).strip()
    num = s.rstrip("KMGTBik")
    return int(float(num) * _SIZE_SUFFIX[s[len(num):]])


def parse_time(v):
    """Seconds in "1ms", "50us", "2s"; bare numbers are microseconds."""
    s = str(v).strip()
    num = s.rstrip("nums")
    return float(num) * _TIME_SUFFIX[s[len(num):]]


# The identity every simulated drive gets unless told otherwise: the longest
# a drive reports (NVMe and ATA serials of 20 characters, models of 40,
# firmware of 8), the serial unique to the drive.
MODEL = "WEARMON SIMSSD FTL MLC 4K PAGE TEST UNIT"
FIRMWARE = "SIM1.0.0"
_serials = itertools.count()


def unique_serial():
    """20 characters, unique to this process and drive."""
    return f"SIM{os.getpid() % 100000:05d}{next(_serials):012d}"


def missing_prerequisites():
    """Why a simulated drive cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (loop devices, FUSE mounts)"
    if not SIMSSD.exists():
        return f"{SIMSSD} not built (make)"
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse"
    for tool in ("fusermount3", "losetup", "blkdiscard", "fio"):
        if not shutil.which(tool):
            return f"{tool} not installed"
    return None


# Skips a test (or, as pytestmark, a file) that needs a simulated drive.
needs_sim = pytest.mark.skipif(missing_prerequisites() is not None,
                               reason=str(missing_prerequisites()))


def _run(cmd, check=True):
    return subprocess.run(cmd, check=check, capture_output=True, text=True,
                          timeout=60)


class SimDrive:
    """One simssd process, its FUSE mount and (optionally) a loop device.

    options: the simulator's -o options as keyword arguments; values are
    passed through as strings ("16M", "1ms", 2). Use sim_drive() or a with
    block so stop() always runs.
    """

    def __init__(self, attach_loop=True, loop_direct_io=True, **options):
        options = dict({"serial": unique_serial(), "model": MODEL, "firmware": FIRMWARE},
                       **options)
        self.options = {k: str(v) for k, v in options.items() if str(v) != "" or
                        k not in ("serial", "model", "firmware")}
        self.attach_loop = attach_loop
        self.loop_direct_io = loop_direct_io
        self.workdir = None
        self.mountpoint = None
        self.proc = None
        self.loop = None
        self._log = None

    # -- lifecycle ---------------------------------------------------------

    def start(self, timeout=10.0):
        """Mount the drive and attach the loop device. Returns self; on
        failure cleans up what it started and raises."""
        try:
            return self._start(timeout)
        except BaseException:
            self.stop()
            raise

    def _start(self, timeout):
        self.workdir = Path(tempfile.mkdtemp(prefix="simssd-"))
        self.mountpoint = self.workdir / "mnt"
        self.mountpoint.mkdir()
        cmd = [str(SIMSSD), str(self.mountpoint), "-f"]
        if self.options:
            cmd += ["-o", ",".join(f"{k}={v}" for k, v in self.options.items())]
        self._log = open(self.workdir / "simssd.log", "w+")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT)
        self._wait_mounted(timeout)
        if self.attach_loop:
            # Direct I/O on: the loop driver then submits asynchronously and
            # keeps a queue's worth of requests in flight to simssd; with it
            # off, every request waits for the one before (measured here:
            # 2k vs 11k 4k-writes/s at queue depth 8 with zero flash time).
            dio = "on" if self.loop_direct_io else "off"
            self.loop = _run(["losetup", f"--direct-io={dio}", "-f", "--show",
                              str(self.image)]).stdout.strip()
        return self

    def _wait_mounted(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"simssd exited {self.proc.returncode}: {self.log()}")
            if os.path.ismount(self.mountpoint) and self.stats_path.exists():
                return
            time.sleep(0.05)
        raise RuntimeError(f"simssd did not mount within {timeout}s: {self.log()}")

    def stop(self):
        """Detach the loop, unmount, stop the process, remove the temp dir.
        Safe to call twice and after a partial start; never raises."""
        if self.loop:
            _run(["losetup", "-d", self.loop], check=False)
            self.loop = None
        if self.mountpoint and os.path.ismount(self.mountpoint):
            if _run(["fusermount3", "-u", str(self.mountpoint)], check=False).returncode:
                # Still busy (a loop that has not let go yet): detach lazily;
                # the kernel finishes once the daemon is gone.
                _run(["umount", "-l", str(self.mountpoint)], check=False)
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        if self._log:
            self._log.close()
            self._log = None
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- files -------------------------------------------------------------

    @property
    def image(self):
        return self.mountpoint / "disk.img"

    @property
    def control_path(self):
        return self.mountpoint / "control"

    @property
    def stats_path(self):
        return self.mountpoint / "stats"

    @property
    def identity_path(self):
        return self.mountpoint / "identity"

    def identity(self):
        """The identity file as {"serial": ..., "model": ..., "firmware": ...}
        (the keys the drive has)."""
        out = {}
        for line in self.identity_path.read_text().splitlines():
            key, _, value = line.partition(" ")
            out[key] = value
        return out

    def log(self):
        """What simssd printed so far."""
        if not self._log:
            return ""
        self._log.flush()
        return Path(self._log.name).read_text(errors="replace")

    # -- control and stats ---------------------------------------------------

    def stats(self):
        """The stats file as {key: int or float}."""
        out = {}
        for line in self.stats_path.read_text().splitlines():
            key, _, value = line.partition(" ")
            out[key] = float(value) if "." in value else int(value)
        return out

    def control(self, command):
        """Send one control command; raises OSError (EINVAL) if rejected."""
        fd = os.open(self.control_path, os.O_WRONLY)
        try:
            os.write(fd, (command + "\n").encode())
        finally:
            os.close(fd)

    def erase_script(self, directory):
        """An executable script in directory that secure-erases this drive
        through its control file: a secure_erase_command for wearmond."""
        script = Path(directory) / "erase.sh"
        script.write_text(f"#!/bin/sh\necho secure-erase > {self.control_path}\n")
        script.chmod(0o755)
        return script

    def secure_erase(self):
        self.control("secure-erase")

    def fault_ioerror(self, offset, length, ops="rw"):
        self.control(f"fault ioerror {offset} {length} {ops}")

    def fault_latency(self, ms, count=1):
        self.control(f"fault latency {ms} {count}")

    def fault_stats_latency(self, ms, count=1):
        """Hold the next count opens of the stats file (0: all, until
        clear_faults) ms milliseconds: a drive slow to answer a health
        query. Reading stats() meanwhile is held too."""
        self.control(f"fault stats-latency {ms} {count}")

    def vanish(self):
        self.control("fault vanish")

    def clear_faults(self):
        self.control("fault clear")

    def discard(self, offset=0, length=None):
        """BLKDISCARD through the loop device (TRIM), default everything."""
        cmd = ["blkdiscard", "-o", str(offset)]
        if length is not None:
            cmd += ["-l", str(length)]
        _run(cmd + [self.loop])

    def drain(self):
        """Wait until queued flash work (the write cache) is done."""
        fd = os.open(self.image, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    # -- what the options imply ------------------------------------------------

    @property
    def capacity(self):
        """Host-visible bytes, as the drive reports them."""
        return self.stats()["capacity"]

    def fresh_write_rate(self):
        """Sustained write rate of a fresh drive, bytes/s:
        channels * page / t_prog (the formula in tools/simssd/README.md)."""
        st = self.stats()
        return st["channels"] * st["page"] / (st["t_prog_ns"] * 1e-9)

    def expected_fresh_run(self, amount):
        """Throughput fio should see writing `amount` bytes to a fresh, idle
        drive: the write cache absorbs its size for free, the rest goes at
        fresh_write_rate(), so rate * amount / (amount - cache)."""
        cache = self.stats()["cache"]
        return self.fresh_write_rate() * amount / max(amount - cache, 1)


@contextlib.contextmanager
def sim_drive(attach_loop=True, loop_direct_io=True, **options):
    """A started SimDrive; stopped and cleaned up however the block exits."""
    d = SimDrive(attach_loop=attach_loop, loop_direct_io=loop_direct_io, **options)
    try:
        d.start()
        yield d
    finally:
        d.stop()


# -- fio -----------------------------------------------------------------------

class FioResult:
    """Bandwidths (bytes/s), IOPS and bytes moved, from fio's JSON."""

    def __init__(self, job):
        self.job = job
        self.read_bw = job["read"]["bw_bytes"]
        self.write_bw = job["write"]["bw_bytes"]
        self.read_iops = job["read"]["iops"]
        self.write_iops = job["write"]["iops"]
        self.read_bytes = job["read"]["io_bytes"]
        self.write_bytes = job["write"]["io_bytes"]
        self.errors = job.get("error", 0)

    def __repr__(self):
        return (f"FioResult(write {self.write_bw / MiB:.2f} MiB/s, "
                f"read {self.read_bw / MiB:.2f} MiB/s)")


def fio(device, rw, bs, size=None, offset=0, io_size=None, iodepth=1,
        runtime=None, **extra):
    """Run one fio job (libaio, O_DIRECT) on device and return a FioResult.
    size/offset bound the region, io_size the amount moved, runtime (s)
    makes the job time-based; extra are more fio options (underscores as in
    fio, e.g. buffer_compress_percentage=98). Raises on fio failure."""
    cmd = ["fio", "--name=simssd", f"--filename={device}", "--ioengine=libaio",
           "--direct=1", f"--rw={rw}", f"--bs={bs}", f"--iodepth={iodepth}",
           f"--offset={offset}", "--output-format=json"]
    if size is not None:
        cmd.append(f"--size={size}")
    if io_size is not None:
        cmd.append(f"--io_size={io_size}")
    if runtime is not None:
        cmd += [f"--runtime={runtime}", "--time_based"]
    if rw.startswith("rand"):
        # Independent draws, like the database workloads in the seed
        # articles (and no fixed seed: every pass is a new pattern).
        cmd += ["--norandommap", "--randrepeat=0"]
    cmd += [f"--{k}={v}" for k, v in extra.items()]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"fio failed ({p.returncode}): {p.stderr}{p.stdout}")
    return FioResult(json.loads(p.stdout)["jobs"][0])


# -- direct I/O from Python ------------------------------------------------------

def _aligned(length):
    return mmap.mmap(-1, length)  # page-aligned, as O_DIRECT needs


def pread_direct(path, offset, length):
    """Read with O_DIRECT (bypassing the page cache); raises OSError."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        buf = _aligned(length)
        n = os.preadv(fd, [buf], offset)
        return bytes(buf[:n])
    finally:
        os.close(fd)


def pwrite_direct(path, offset, data):
    """Write with O_DIRECT; len(data) and offset must be block-aligned."""
    fd = os.open(path, os.O_WRONLY | os.O_DIRECT)
    try:
        buf = _aligned(len(data))
        buf[:] = data
        return os.pwritev(fd, [buf], offset)
    finally:
        os.close(fd)


def io_errno(fn, *args):
    """Run fn(*args); return the OSError errno it raised, or 0."""
    try:
        fn(*args)
    except OSError as e:
        return e.errno
    return 0

