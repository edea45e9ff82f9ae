"""wearmond on real NVMe, SATA and SCSI controllers, emulated by QEMU.

One guest boot serves every test here: the host creates five raw image
files (an NVMe namespace, a SATA disk, a SCSI disk behind virtio-scsi, one
behind an LSI MegaRAID SAS controller, a results disk), writes wearmond's
configurations, builds the guest's initramfs from the installed Debian
packages (tools/qemu/mkinitramfs.sh) and boots it (tools/qemu/run-guest.sh).
Inside, tests/devices/guest.sh runs each step; the guest's init then writes
/results (the database, logs, device checks) as a tar archive to the results
disk, which the host reads after QEMU exits. The assertions run on the host
with the sqlite3 CLI.

Safety: the only files written are the image files and the temporary
directory made here, removed at the end (kept for a look with
WEARMON_QEMU_KEEP=1); QEMU is killed if it outlives its time."""

import json
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("WEARMON_BUILD", REPO / "build"))
WEARMOND = BUILD / "wearmond"
QEMU_TOOLS = REPO / "tools" / "qemu"
GUEST_SCRIPT = Path(__file__).resolve().parent / "guest.sh"

MiB = 1 << 20
DISK_BYTES = 64 * MiB
REGION_BYTES = 16 * MiB
# seconds for the whole guest run, boot included: a bound for a guest that
# hangs, far above the ~110 s a TCG guest takes on a loaded 2-core machine
GUEST_TIMEOUT = 300

NVME_SERIAL = "WMNVME0001"
SATA_SERIAL = "WMSATA0001"
RESULTS_SERIAL = "WMRESULTS01"
# Longer than the 16 characters of the SCSI INQUIRY product field (and the
# 4 of its revision) that sysfs shows: only ATA IDENTIFY reports them whole.
SATA_MODEL = "WEARMON EMULATED SATA DISK"
SATA_FIRMWARE = "WM1.2345"
NVME = "/dev/wm-nvme"
SATA = "/dev/wm-sata"
# SCSI disks (scsi-hd): INQUIRY's vendor (8), product (16) and revision (4)
# at their full widths; the MegaRAID one also has a WWN (an NAA designator
# in its Device Identification page).
VSCSI_SERIAL = "WMVSCSI0001"
MEGASAS_SERIAL = "WMMEGAS0001"
VSCSI_ID = ("WEARMONV", "EMULATED SAS SSD", "R123")
MEGASAS_ID = ("WEARMONM", "MEGARAID SAS SSD", "M456")
MEGASAS_WWN = "5000c500a1b2c3d4"
VSCSI = "/dev/wm-vscsi"
MEGASAS = "/dev/wm-megasas"

COMMON = {
    "allow_destroy": "yes",
    "region_size": "16M",
    "sizes": "4M 8M",
    "fill": "yes",
    "workload": "randwrite",
    "block_size": "4k",
    "queue_depth": "16",
    "amount": "1x",
    "cycles": "1",
    "between_cycles": "none",
}

# Each step: its targets, each with its own keys over COMMON.
STEPS = {
    "basic": {
        "nvme_basic": {"device": NVME, "expect_serial": NVME_SERIAL},
        "sata_basic": {"device": SATA, "expect_serial": SATA_SERIAL},
    },
    "nvme_wrong_serial": {
        "nvme_wrong": {"device": NVME, "expect_serial": "WRONGSERIAL1"},
    },
    "sata_wrong_serial": {
        "sata_wrong": {"device": SATA, "expect_serial": "WRONGSERIAL2"},
    },
    "nvme_format": {
        "nvme_format": {"device": NVME, "expect_serial": NVME_SERIAL, "sizes": "8M",
                        "between_cycles": "secure-erase", "secure_erase": "nvme-format"},
    },
    "nvme_sanitize_stop": {
        "nvme_san_stop": {"device": NVME, "sizes": "4M", "cycles": "2",
                          "between_cycles": "secure-erase",
                          "secure_erase": "nvme-sanitize-block", "on_action_error": "stop"},
    },
    "nvme_sanitize_continue": {
        "nvme_san_cont": {"device": NVME, "sizes": "4M", "cycles": "2",
                          "between_cycles": "secure-erase",
                          "secure_erase": "nvme-sanitize-block",
                          "on_action_error": "continue"},
    },
    # one target name moved from the NVMe drive to the SATA disk: refused
    # until adopt_new_device = yes, which records both drives
    "adopt_first": {
        "moved": {"device": NVME, "sizes": "4M"},
    },
    "adopt_second": {
        "moved": {"device": SATA, "sizes": "4M", "adopt_new_device": "yes"},
    },
    "sata_erase": {
        "sata_erase": {"device": SATA, "expect_serial": SATA_SERIAL, "sizes": "4M",
                       "between_cycles": "secure-erase", "secure_erase": "ata",
                       "on_action_error": "stop"},
    },
    "scsi_trim": {
        "vscsi_trim": {"device": VSCSI, "expect_serial": VSCSI_SERIAL, "sizes": "4M",
                       "cycles": "2", "between_cycles": "trim"},
        "megasas_trim": {"device": MEGASAS, "expect_serial": MEGASAS_SERIAL, "sizes": "4M",
                         "cycles": "2", "between_cycles": "trim"},
    },
    "scsi_erase": {
        "vscsi_sanitize": {"device": VSCSI, "sizes": "4M", "between_cycles": "secure-erase",
                           "secure_erase": "scsi-sanitize-block",
                           "on_action_error": "continue"},
        "megasas_format": {"device": MEGASAS, "sizes": "4M", "between_cycles": "secure-erase",
                           "secure_erase": "scsi-format", "on_action_error": "continue"},
    },
    "vscsi_format": {
        "vscsi_format": {"device": VSCSI, "sizes": "4M", "between_cycles": "secure-erase",
                         "secure_erase": "scsi-format"},
    },
    "sata_scsi_erase": {
        "sata_scsi_erase": {"device": SATA, "sizes": "4M", "between_cycles": "secure-erase",
                            "secure_erase": "scsi-sanitize-crypto"},
    },
}

# The NVMe SMART/Health log fields (common/device/nvme.h) the snapshot must keep.
NVME_LOG_FIELDS = {
    "critical_warning", "available_spare", "spare_threshold", "percentage_used",
    "data_units_read", "data_units_written", "host_read_commands",
    "host_write_commands", "power_on_hours", "unsafe_shutdowns", "media_errors",
    "error_log_entries",
}
# QEMU's ide-hd SMART table (hw/ide/core.c): ids, and raw values fixed there.
SATA_ATTR_IDS = {1, 3, 4, 5, 9, 12, 190}
SATA_FIXED_RAW = {3: 0x10, 4: 0x64, 190: 0x1F1F001F}


def sql_literal(v):
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return str(int(v))


def scsi_props(serial, ident):
    vendor, product, rev = ident
    return f"{serial},vendor={vendor},product={product},ver={rev}"


def write_config(path, targets):
    lines = ["[wearmon]", "database = /results/wearmon.db", ""]
    for name, keys in targets.items():
        lines.append(f"[target {name}]")
        for k, v in {**COMMON, **keys}.items():
            lines.append(f"{k} = {v}")
        lines.append("")
    path.write_text("\n".join(lines))


class Guest:
    """What came back from the guest: the results directory and the console."""

    def __init__(self, results, console, boot_seconds, total_seconds):
        self.results = results
        self.console = console
        self.boot_seconds = boot_seconds
        self.total_seconds = total_seconds
        self.db = results / "wearmon.db"

    def text(self, name):
        p = self.results / name
        assert p.exists(), f"the guest left no {name}; its log:\n{self.log()}"
        return p.read_text().strip()

    def rc(self, step):
        return int(self.text(f"{step}.rc"))

    def log(self, step="guest"):
        p = self.results / f"{step}.log"
        return p.read_text() if p.exists() else "(none)"

    def query(self, sql, *args):
        """Rows as dicts, from the real sqlite3 CLI. Parameters are bound
        with .param so the SQL holds no quoting of ours."""
        script = "".join(f".param set ?{i + 1} {sql_literal(a)}\n" for i, a in enumerate(args))
        p = subprocess.run(["sqlite3", "-readonly", "-json", str(self.db)],
                           input=script + sql + ";\n", capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        out = p.stdout.strip()
        return json.loads(out) if out else []

    def target(self, name):
        rows = self.query("SELECT * FROM targets WHERE name = ?1", name)
        assert len(rows) == 1, f"no target {name}; wearmond said:\n{self.all_logs()}"
        return rows[0]

    def cycles(self, name):
        return self.query("SELECT c.* FROM cycles c JOIN targets t ON t.id = c.target_id"
                          " WHERE t.name = ?1 ORDER BY c.number", name)

    def health(self, name):
        rows = self.query("SELECT h.* FROM health h JOIN targets t ON t.id = h.target_id"
                          " WHERE t.name = ?1 ORDER BY h.id", name)
        for r in rows:
            r["data"] = json.loads(r["data"]) if r["data"] else {}
        return rows

    def all_logs(self):
        return "\n".join(f"--- {p.name}\n{p.read_text()}"
                         for p in sorted(self.results.glob("*.log")))


def require_tools():
    missing = [t for t in ("qemu-system-x86_64", "busybox", "cpio", "modprobe", "sqlite3")
               if not shutil.which(t)]
    if not (shutil.which("hdparm") or Path("/usr/sbin/hdparm").exists()):
        missing.append("hdparm")
    if missing:
        pytest.fail("missing " + ", ".join(missing) + ": run tools/install-deps.sh as root")
    if not os.access(WEARMOND, os.X_OK):
        pytest.fail(f"{WEARMOND} is not built: run make")


def boot(tmp, initrd, images):
    """Run the guest to its power-off; returns (console, boot s, total s)."""
    args = [str(QEMU_TOOLS / "run-guest.sh"), str(initrd)]
    for kind, img, serial in images:
        args += [f"--{kind}", str(img), serial]
    lines = []
    booted = []
    t0 = time.monotonic()
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)

    def read():
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            lines.append(line)
            if not booted and "wearmon-guest: running" in line:
                booted.append(time.monotonic() - t0)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=GUEST_TIMEOUT)
    except subprocess.TimeoutExpired:
        pass
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            reader.join(5)
            pytest.fail(f"the guest did not power off within {GUEST_TIMEOUT} s; console:\n"
                        + "\n".join(lines[-60:]))
    reader.join(5)
    console = "\n".join(lines)
    (tmp / "console.log").write_text(console)
    assert proc.returncode == 0, f"QEMU exited {proc.returncode}:\n{console[-4000:]}"
    return console, booted[0] if booted else None, time.monotonic() - t0


@pytest.fixture(scope="module")
def guest():
    require_tools()
    tmp = Path(tempfile.mkdtemp(prefix="wearmon-qemu-", dir=os.environ.get("WEARMON_TEST_TMP", "/var/tmp")))
    try:
        t0 = time.monotonic()
        payload = tmp / "payload"
        payload.mkdir()
        shutil.copy(GUEST_SCRIPT, payload / "run.sh")
        (payload / "params.sh").write_text(
            f"NVME={NVME}\nSATA={SATA}\nVSCSI={VSCSI}\nMEGASAS={MEGASAS}\n"
            f"REGION_BYTES={REGION_BYTES}\n")
        (payload / "disks").write_text(
            f"nvme {NVME_SERIAL} {NVME}\nata {SATA_SERIAL} {SATA}\n"
            f"scsi {VSCSI_SERIAL} {VSCSI}\nscsi {MEGASAS_SERIAL} {MEGASAS}\n"
            f"ata {RESULTS_SERIAL} /dev/wm-results\n")
        for step, targets in STEPS.items():
            write_config(payload / f"{step}.conf", targets)
        images = []
        for kind, name, serial in (
                ("nvme", "nvme.img", NVME_SERIAL),
                ("sata", "sata.img", f"{SATA_SERIAL},model={SATA_MODEL},ver={SATA_FIRMWARE}"),
                ("vscsi", "vscsi.img", scsi_props(VSCSI_SERIAL, VSCSI_ID)),
                ("megasas", "megasas.img",
                 scsi_props(MEGASAS_SERIAL, MEGASAS_ID) + f",wwn=0x{MEGASAS_WWN}"),
                ("sata", "results.img", RESULTS_SERIAL)):
            img = tmp / name
            with open(img, "wb") as f:
                f.truncate(DISK_BYTES)
            images.append((kind, img, serial))
        initrd = tmp / "initrd.gz"
        subprocess.run([str(QEMU_TOOLS / "mkinitramfs.sh"), str(initrd), str(WEARMOND),
                        str(payload)], check=True)
        console, boot_s, _ = boot(tmp, initrd, images)
        results = tmp / "results"
        results.mkdir()
        try:
            with tarfile.open(tmp / "results.img", "r:") as tar:
                if hasattr(tarfile, "data_filter"):
                    tar.extractall(results, filter="data")
                else:
                    tar.extractall(results)
        except tarfile.ReadError as e:
            pytest.fail(f"no results archive on the results disk ({e}); console:\n"
                        + console[-4000:])
        g = Guest(results, console, boot_s, time.monotonic() - t0)
        print(f"\nguest: booted to its test in {boot_s:.1f} s, "
              f"{g.total_seconds:.1f} s in all")
        yield g
    finally:
        if os.environ.get("WEARMON_QEMU_KEEP"):
            print(f"\nguest files kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def test_guest_ran_every_step(guest):
    assert guest.rc("guest") == 0, guest.log()
    for step in STEPS:
        assert (guest.results / f"{step}.rc").exists(), f"step {step} did not run:\n{guest.log()}"
    # each step's seconds in the guest, printed for the record: the device
    # stage must stay short
    times = {}
    for line in guest.text("steps.time").splitlines():
        step, t0, t1 = line.split()
        times[step] = float(t1) - float(t0)
    assert set(times) == set(STEPS)
    scsi = sum(times[s] for s in ("scsi_trim", "scsi_erase", "vscsi_format", "sata_scsi_erase"))
    print(f"\nsteps: {sum(times.values()):.1f} s in all, of which SCSI {scsi:.1f} s")


# ---- A short measured cycle on each controller ----

@pytest.mark.parametrize("name", ["nvme_basic", "sata_basic"])
def test_measured_cycle_end_to_end(guest, name):
    assert guest.rc("basic") == 0, guest.log("basic")
    cycles = guest.cycles(name)
    assert [(c["number"], c["status"]) for c in cycles] == [(1, "done")]
    its = guest.query("SELECT i.* FROM iterations i JOIN targets t ON t.id = i.target_id"
                      " WHERE t.name = ?1 ORDER BY i.number", name)
    assert [i["size_bytes"] for i in its] == [4 * MiB, 8 * MiB]
    for i in its:
        assert i["status"] == "done", i
        assert i["fill_bytes"] == i["size_bytes"]          # the fill wrote the size
        assert i["bytes"] == i["size_bytes"]               # amount = 1x
        assert i["ops"] == i["size_bytes"] // 4096
        assert i["errors"] == 0
        assert i["mibps_avg"] > 0 and i["lat_p99_us"] > 0
        samples = guest.query("SELECT count(*) AS n FROM samples WHERE iteration_id = ?1",
                              i["id"])
        assert samples[0]["n"] >= 1


def test_measured_cycle_wrote_the_nvme_region(guest):
    # The fill's data is on the namespace: the erase test below starts from
    # a region that does not read as zeroes.
    assert guest.text("nvme_after_basic.cmp") == "1"


# ---- Identity ----

def test_nvme_identity_from_identify_controller(guest):
    t = guest.target("nvme_basic")
    assert t["serial"] == NVME_SERIAL
    assert t["model"] == "QEMU NVMe Ctrl"
    assert t["firmware"] and t["firmware"] == guest.text("sysfs_nvme_firmware_rev")
    assert t["model"] == guest.text("sysfs_nvme_model")
    assert t["kind"] == "block" and t["capacity_bytes"] == DISK_BYTES


def test_sata_identity_from_ata_identify(guest):
    t = guest.target("sata_basic")
    assert (t["serial"], t["model"], t["firmware"]) == (SATA_SERIAL, SATA_MODEL, SATA_FIRMWARE)
    # sysfs only has the SCSI INQUIRY view, cut short: the identity above
    # can only have come from ATA IDENTIFY.
    assert guest.text("sysfs_sata_model") != SATA_MODEL
    assert guest.text("sysfs_sata_rev") != SATA_FIRMWARE
    assert t["capacity_bytes"] == DISK_BYTES


@pytest.mark.parametrize("kind,device,expected,found", [
    ("nvme", NVME, "WRONGSERIAL1", NVME_SERIAL),
    ("sata", SATA, "WRONGSERIAL2", SATA_SERIAL),
])
def test_wrong_expect_serial_is_refused(guest, kind, device, expected, found):
    step = f"{kind}_wrong_serial"
    log = guest.log(step)
    assert guest.rc(step) == 78, log
    refusal = [line for line in log.splitlines() if expected in line]
    assert refusal, log
    assert device in refusal[0] and found in refusal[0] and "expect_serial" in refusal[0], log
    assert guest.text(f"{kind}_before_wrong_serial.md5") == \
        guest.text(f"{kind}_after_wrong_serial.md5")
    assert not guest.query("SELECT c.id FROM cycles c JOIN targets t ON t.id = c.target_id"
                           " WHERE t.name = ?1", f"{kind}_wrong")


# ---- Health snapshots ----

def section(data, name):
    """The part of a snapshot's JSON that a source filled in."""
    return data.get(name, data)


def test_adopted_device_event_names_both_drives(guest):
    """A target moved to another drive with adopt_new_device = yes: the
    device-replaced event names the serial and model of the drive recorded
    before and of the one adopted, in its message and its data."""
    assert guest.rc("adopt_first") == 0 and guest.rc("adopt_second") == 0, guest.log("adopt_second")
    nvme = guest.target("nvme_basic")
    ev = guest.query("SELECT e.message, e.data FROM events e JOIN targets t ON t.id = e.target_id"
                     " WHERE t.name = 'moved' AND e.kind = 'device-replaced'")
    assert len(ev) == 1, ev
    data = json.loads(ev[0]["data"])
    assert data == {"old_serial": NVME_SERIAL, "old_model": nvme["model"],
                    "new_serial": SATA_SERIAL, "new_model": SATA_MODEL}, data
    msg = ev[0]["message"]
    assert (f"was serial '{NVME_SERIAL}' model '{nvme['model']}', now serial '{SATA_SERIAL}'"
            f" model '{SATA_MODEL}'") in msg, msg
    assert guest.target("moved")["serial"] == SATA_SERIAL


def test_nvme_health_snapshot_holds_the_smart_log(guest):
    # one cycle, no action: a snapshot at its start and one at its end
    snaps = guest.health("nvme_basic")
    assert [s["point"] for s in snaps] == ["cycle-start", "cycle-end"]
    assert snaps[1]["host_bytes_delta"] is not None and snaps[1]["host_bytes_delta"] > 0
    h = snaps[0]
    assert h["source"] == "nvme"
    for col in ("percentage_used", "data_units_read", "data_units_written", "media_errors",
                "available_spare", "temperature_c", "critical_warning", "power_on_hours"):
        assert h[col] is not None, col
    log = section(h["data"], "nvme")
    assert NVME_LOG_FIELDS <= set(log), sorted(NVME_LOG_FIELDS - set(log))
    for col in ("percentage_used", "data_units_read", "data_units_written", "media_errors",
                "available_spare", "critical_warning", "power_on_hours"):
        assert h[col] == log[col], col
    # The controller reports Kelvin; QEMU's composite temperature is 323 K.
    assert log.get("temperature_k", h["temperature_c"] + 273) == h["temperature_c"] + 273
    assert 0 < h["temperature_c"] < 100
    assert h["media_errors"] == 0 and h["critical_warning"] == 0


def test_nvme_iterations_carry_the_drives_evidence(guest):
    """Each iteration on the emulated NVMe drive stores what the drive
    counted over it (wearmond(8), "Device evidence"): its host writes from
    the SMART/Health log cover the fill and the measured writes, its
    temperature (QEMU's composite is 323 K), its spare; QEMU serves no OCP
    C0h log, so the media bytes and the write amplification stay NULL."""
    its = guest.query("SELECT i.* FROM iterations i JOIN targets t ON t.id = i.target_id"
                      " WHERE t.name = 'nvme_basic' ORDER BY i.number")
    assert its
    for i in its:
        # data units of 512 000 bytes, counted per command and rounded up
        assert i["device_host_bytes"] >= i["fill_bytes"] + i["bytes"] - 512000, i
        assert 0 < i["device_peak_temp_c"] < 100, i
        assert i["device_spare_pct"] is not None and i["device_media_errors"] == 0, i
        assert i["device_throttle_seconds"] == 0, i
        assert i["device_media_bytes"] is None and i["device_wa"] is None, i


def test_nvme_health_follows_the_writes(guest):
    # nvme_san_cont ran two cycles: a snapshot at the start and end of
    # each and after each action; the first cycle's 8 MiB of writes show in
    # the second cycle's start.
    snaps = guest.health("nvme_san_cont")
    assert {s["source"] for s in snaps} == {"nvme"}
    starts = [s for s in snaps if s["point"] == "cycle-start"]
    assert len(starts) == 2 and sum(s["point"] == "cycle-end" for s in snaps) == 2
    a, b = (section(s["data"], "nvme") for s in starts)
    assert b["data_units_written"] - a["data_units_written"] >= (8 * MiB) // 512000
    assert b["host_write_commands"] > a["host_write_commands"]


def test_sata_health_snapshot_holds_the_smart_attributes(guest):
    snaps = guest.health("sata_basic")
    assert [s["point"] for s in snaps] == ["cycle-start", "cycle-end"]
    h = snaps[0]
    assert h["source"] == "ata"
    attrs = section(h["data"], "ata").get("attributes")
    assert attrs, h["data"]
    by_id = {a["id"]: a for a in attrs}
    assert SATA_ATTR_IDS <= set(by_id), sorted(by_id)
    for a in attrs:
        assert {"current", "worst", "raw"} <= set(a), a
        assert 1 <= a["current"] <= 253 and 1 <= a["worst"] <= 253, a
    for attr_id, raw in SATA_FIXED_RAW.items():
        assert by_id[attr_id]["raw"] == raw, (attr_id, by_id[attr_id])
    assert h["power_on_hours"] == by_id[9]["raw"] & 0xFFFFFFFF


# ---- Erase between cycles ----

def test_nvme_format_erases_the_region(guest):
    assert guest.rc("nvme_format") == 0, guest.log("nvme_format")
    (c,) = guest.cycles("nvme_format")
    assert c["status"] == "done"
    assert (c["action"], c["action_outcome"], c["action_error"]) == ("secure-erase", "ok", None)
    assert c["action_started_at"] and c["action_seconds"] > 0
    assert c["action_bytes"] == DISK_BYTES
    its = guest.query("SELECT fill_bytes FROM iterations i JOIN targets t"
                      " ON t.id = i.target_id WHERE t.name = 'nvme_format'")
    assert its == [{"fill_bytes": 8 * MiB}]
    assert guest.text("nvme_after_format.cmp") == "0", "the region does not read as zeroes"
    assert guest.target("nvme_format")["host_bytes_since_erase"] == 0


def sanitize_outcome(cycle):
    assert (cycle["action"], cycle["action_outcome"]) == ("secure-erase", "unsupported"), cycle
    assert "sanitize" in cycle["action_error"].lower(), cycle


def test_nvme_sanitize_unsupported_stops_the_target(guest):
    assert guest.rc("nvme_sanitize_stop") == 1, guest.log("nvme_sanitize_stop")
    cycles = guest.cycles("nvme_san_stop")
    assert len(cycles) == 1, "on_action_error = stop ran another cycle"
    sanitize_outcome(cycles[0])
    assert cycles[0]["status"] == "failed"


def test_nvme_sanitize_unsupported_continue_runs_the_next_cycle(guest):
    assert guest.rc("nvme_sanitize_continue") == 0, guest.log("nvme_sanitize_continue")
    cycles = guest.cycles("nvme_san_cont")
    assert [c["number"] for c in cycles] == [1, 2]
    for c in cycles:
        sanitize_outcome(c)
    done = guest.query("SELECT c.number FROM iterations i JOIN cycles c ON c.id = i.cycle_id"
                       " JOIN targets t ON t.id = i.target_id"
                       " WHERE t.name = 'nvme_san_cont' AND i.status = 'done'"
                       " ORDER BY c.number")
    assert [d["number"] for d in done] == [1, 2]


# ---- SCSI disks: virtio-scsi and the MegaRAID SAS controller ----

SCSI = {  # target of the TRIM step: its device, serial, INQUIRY identity
    "vscsi_trim": ("vscsi", VSCSI, VSCSI_SERIAL, VSCSI_ID),
    "megasas_trim": ("megasas", MEGASAS, MEGASAS_SERIAL, MEGASAS_ID),
}


def scsi_lines(log, name, marker):
    return [line for line in log.splitlines() if f"target {name}:" in line and marker in line]


@pytest.mark.parametrize("name", sorted(SCSI))
def test_scsi_identity_from_inquiry(guest, name):
    """A native SCSI disk's identity is INQUIRY's: the Unit Serial Number
    page, the product (the model, as sysfs shows it) and the revision; its
    vendor, WWN and what it advertises for UNMAP are logged at start and
    kept in every health snapshot."""
    kind, device, serial, (vendor, product, rev) = SCSI[name]
    assert guest.rc("scsi_trim") == 0, guest.log("scsi_trim")
    t = guest.target(name)
    assert (t["serial"], t["model"], t["firmware"]) == (serial, product, rev)
    assert (t["kind"], t["capacity_bytes"]) == ("block", DISK_BYTES)
    assert (guest.text(f"sysfs_{kind}_model"), guest.text(f"sysfs_{kind}_rev")) == (product, rev)
    wwn = f"naa.{MEGASAS_WWN}" if kind == "megasas" else None
    (line,) = scsi_lines(guest.log("scsi_trim"), name, "SCSI disk:")
    assert f'vendor "{vendor}", product "{product}", revision "{rev}", serial "{serial}"' in line
    assert (f"WWN {wwn}" in line) == (wwn is not None), line
    # QEMU's Block Limits and Logical Block Provisioning pages (DEVICE_LOGS.md)
    assert "discard advertised: UNMAP (at most 2097152 blocks a command, granularity 8)" in line
    assert line.endswith("the kernel discards with unmap"), line
    for h in guest.health(name):
        assert h["source"] == "scsi", h
        d = section(h["data"], "scsi")
        assert (d["vendor"], d["product"], d["revision"], d["serial"], d["wwn"]) == \
            (vendor, product, rev, serial, wwn)
        assert d["lbp"]["lbpu"] == 1 and d["block_limits"]["unmap_granularity"] == 8, d
        assert d["provisioning_mode"] == guest.text(f"sysfs_{kind}_provisioning_mode") == "unmap"


@pytest.mark.parametrize("name", sorted(SCSI))
def test_scsi_unmap_between_cycles(guest, name):
    """between_cycles = trim on a SCSI disk is the kernel's discard, sent
    as UNMAP: each cycle's action covers the region, and the region, which
    every cycle filled with data, reads back as zeroes after the last
    (QEMU passes UNMAP down to the image as holes)."""
    kind = SCSI[name][0]
    cycles = guest.cycles(name)
    assert [(c["number"], c["status"]) for c in cycles] == [(1, "done"), (2, "done")]
    for c in cycles:
        assert (c["action"], c["action_outcome"], c["action_error"]) == ("trim", "ok", None), c
        assert c["action_bytes"] == REGION_BYTES
    its = guest.query("SELECT fill_bytes, status FROM iterations i JOIN targets t"
                      " ON t.id = i.target_id WHERE t.name = ?1", name)
    assert its == [{"fill_bytes": 4 * MiB, "status": "done"}] * 2
    assert guest.text(f"{kind}_after_trim.cmp") == "0", "the region does not read as zeroes"
    points = [h["point"] for h in guest.health(name)]
    assert points == ["cycle-start", "cycle-end", "after-action"] * 2, points


@pytest.mark.parametrize("name", sorted(SCSI))
def test_scsi_evidence_null_with_a_reason(guest, name):
    """QEMU's scsi-hd has no LOG SENSE: every evidence column is NULL, and
    the log says why, once for the whole run (two cycles of polls)."""
    its = guest.query("SELECT i.* FROM iterations i JOIN targets t ON t.id = i.target_id"
                      " WHERE t.name = ?1", name)
    assert len(its) == 2
    for i in its:
        for col in ("device_host_bytes", "device_media_bytes", "device_wa", "device_peak_temp_c",
                    "device_throttle_seconds", "device_media_errors", "device_spare_pct"):
            assert i[col] is None, (col, i)
    lines = scsi_lines(guest.log("scsi_trim"), name, "evidence lacks figures")
    assert len(lines) == 1, lines
    assert ("host bytes, temperature, media errors: LOG SENSE page 00h: ILLEGAL REQUEST, "
            "ASC/ASCQ 20h/00h (invalid command operation code); media bytes, throttle time, "
            "spare: no standard SCSI log page has them") in lines[0]
    for h in guest.health(name):
        for col in ("temperature_c", "percentage_used", "media_errors", "power_on_hours",
                    "host_bytes_written"):
            assert h[col] is None, (col, h)
        d = section(h["data"], "scsi")
        assert d["log_sense"] is False and d["log_pages"] == []
        assert "invalid command operation code" in d["log_sense_error"]


def test_scsi_sanitize_refused_as_unsupported(guest):
    """virtio-scsi's disk has neither REPORT SUPPORTED OPERATION CODES nor
    SANITIZE: the sanitize is sent, refused as an invalid operation code,
    and recorded as unsupported; the data stay."""
    assert guest.rc("scsi_erase") == 0, guest.log("scsi_erase")
    (c,) = guest.cycles("vscsi_sanitize")
    assert (c["action"], c["action_outcome"]) == ("secure-erase", "unsupported"), c
    assert c["action_error"] == ("SCSI SANITIZE (block erase) not supported by this drive: "
                                 "ILLEGAL REQUEST, ASC/ASCQ 20h/00h (invalid command "
                                 "operation code)")
    assert c["action_bytes"] == 0
    assert guest.target("vscsi_sanitize")["host_bytes_since_erase"] > 0


def test_scsi_format_refused_by_the_raid_controller(guest):
    """QEMU's MegaRAID controller fails FORMAT UNIT with HARDWARE ERROR
    (internal target failure): a failure, with the sense data, not
    'unsupported'; on_action_error = continue goes on."""
    (c,) = guest.cycles("megasas_format")
    assert (c["action"], c["action_outcome"]) == ("secure-erase", "failed"), c
    assert c["action_error"] == ("SCSI FORMAT UNIT: HARDWARE ERROR, ASC/ASCQ 44h/00h "
                                 "(internal target failure)")
    assert c["action_bytes"] == 0
    assert "on_action_error = continue" in guest.log("scsi_erase")


def test_scsi_format_completes_on_virtio(guest):
    """FORMAT UNIT behind virtio-scsi completes (QEMU does not erase the
    image: DEVICE_LOGS.md), and TEST UNIT READY after it finds the disk
    ready: an erase recorded as done."""
    assert guest.rc("vscsi_format") == 0, guest.log("vscsi_format")
    (c,) = guest.cycles("vscsi_format")
    assert (c["action"], c["action_outcome"], c["action_error"]) == ("secure-erase", "ok", None)
    assert c["action_bytes"] == DISK_BYTES
    assert guest.target("vscsi_format")["host_bytes_since_erase"] == 0
    assert "SCSI FORMAT UNIT of /dev/wm-vscsi started" in guest.log("vscsi_format")


def test_scsi_erase_refused_on_an_ata_drive(guest):
    log = guest.log("sata_scsi_erase")
    assert guest.rc("sata_scsi_erase") == 78, log
    assert ("secure_erase: refusing /dev/wm-sata: secure_erase = scsi-sanitize-crypto needs a "
            "disk that speaks SCSI natively (SAS); it is an ATA drive: use ata or "
            "ata-enhanced") in log
    assert not guest.query("SELECT id FROM targets WHERE name = 'sata_scsi_erase'")


# ---- Why SATA and NVMe evidence is NULL under QEMU ----

def test_sata_evidence_absence_is_logged(guest):
    """QEMU's AHCI disk answers SMART (without attribute 241) but aborts
    READ LOG EXT of the Device Statistics log: the iterations' evidence is
    NULL, and the log says which log and attribute are missing, once."""
    its = guest.query("SELECT i.* FROM iterations i JOIN targets t ON t.id = i.target_id"
                      " WHERE t.name = 'sata_basic'")
    assert its
    for i in its:
        for col in ("device_host_bytes", "device_media_bytes", "device_peak_temp_c",
                    "device_throttle_seconds", "device_media_errors", "device_spare_pct"):
            assert i[col] is None, (col, i)
    lines = scsi_lines(guest.log("basic"), "sata_basic", "evidence lacks figures")
    assert len(lines) == 1, lines
    for part in ("host bytes: ATA READ LOG EXT log 0x04 page 0x01: ",
                 "no SMART attribute 241 (generic table)",
                 "temperature: ATA READ LOG EXT log 0x04 page 0x05: ",
                 "throttle time: ", "media errors, spare: no ATA log wearmon reads has them"):
        assert part in lines[0], lines[0]


def test_nvme_media_bytes_absence_is_logged(guest):
    lines = scsi_lines(guest.log("basic"), "nvme_basic", "evidence lacks figures")
    assert len(lines) == 1, lines
    assert "media bytes: no OCP extended SMART log: NVMe Get Log Page 0xc0: " in lines[0]


def identify_word(text, n):
    """Word n of an `hdparm --Istdout` dump (8 hex words per line)."""
    words = [w for line in text.splitlines() for w in line.split()
             if len(w) == 4 and all(ch in "0123456789abcdef" for ch in w)]
    assert len(words) >= 256, text
    return int(words[n], 16)


def test_sata_secure_erase_refused_and_nothing_locked(guest):
    assert guest.rc("sata_erase") == 1, guest.log("sata_erase")
    (c,) = guest.cycles("sata_erase")
    assert (c["action"], c["action_outcome"]) == ("secure-erase", "unsupported"), c
    assert "security" in c["action_error"].lower(), c
    assert c["action_bytes"] == 0
    w128 = identify_word(guest.text("sata_identify_after_erase.txt"), 128)
    assert not w128 & 0x2, "security enabled (a password is set)"
    assert not w128 & 0x4, "the drive is locked"
    assert guest.text("sata_read_after_erase.rc") == "0", "the disk cannot be read"
