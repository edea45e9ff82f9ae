"""The QEMU accelerator is chosen by what works (tools/qemu/accel.sh).

A /dev/kvm that exists and is writable but cannot run a guest (nested
virtualization on lab VMs and CI runners) must not make the device tests
hang: the probe boot either shows the kernel's first line under KVM within
its time limit, or the guest runs under TCG and the reason is printed. Each
case here makes the probe fail in one of the two ways it fails in the field
and checks the fallback, its message and that it is bounded in time."""

import os
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ACCEL = REPO / "tools" / "qemu" / "accel.sh"


def accel(tmp_path, **env):
    """Run accel.sh with env on top of ours; (stdout, stderr, seconds)."""
    e = dict(os.environ)
    e.pop("WEARMON_QEMU_ACCEL", None)
    e.update(env)
    t0 = time.monotonic()
    p = subprocess.run([str(ACCEL)], capture_output=True, text=True, env=e, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip(), p.stderr.strip(), time.monotonic() - t0


def fake_kvm(tmp_path):
    """A writable file standing in for /dev/kvm: present, usable-looking."""
    f = tmp_path / "kvm"
    f.write_bytes(b"")
    return str(f)


def test_no_kvm_device_means_tcg(tmp_path):
    out, err, _ = accel(tmp_path, WEARMON_KVM_DEVICE=str(tmp_path / "absent"))
    assert out == "tcg"
    assert "missing or not writable" in err


def test_guest_that_prints_nothing_falls_back_within_the_limit(tmp_path):
    # The probe guest runs but never prints the marker: the probe must give
    # up after its limit (3 s here), kill QEMU and choose TCG.
    out, err, secs = accel(tmp_path, WEARMON_KVM_DEVICE=fake_kvm(tmp_path),
                           WEARMON_KVM_PROBE_ACCEL="tcg",
                           WEARMON_KVM_PROBE_MARKER="wearmon: a line no kernel prints",
                           WEARMON_KVM_PROBE_SECONDS="3")
    assert out == "tcg"
    assert "KVM cannot run a guest here" in err and "within 3 s" in err
    assert 2.5 < secs < 30, secs


def test_qemu_refusing_kvm_falls_back(tmp_path):
    # The probe's QEMU cannot start its guest at all (as QEMU aborts on a
    # KVM that fails to set up the vCPU; here an accelerator QEMU does not
    # have): QEMU exits at once and the probe must not wait out its limit.
    out, err, secs = accel(tmp_path, WEARMON_KVM_DEVICE=fake_kvm(tmp_path),
                           WEARMON_KVM_PROBE_ACCEL="kvm-that-does-not-exist",
                           WEARMON_KVM_PROBE_SECONDS="60")
    assert out == "tcg"
    assert "exited after" in err
    assert secs < 30, secs


def test_forced_accelerator_is_used_without_probe(tmp_path):
    out, err, secs = accel(tmp_path, WEARMON_QEMU_ACCEL="tcg")
    assert out == "tcg" and "WEARMON_QEMU_ACCEL" in err
    assert secs < 5


def test_this_machine_choice_is_explained(tmp_path):
    # Whatever this machine has, the choice comes with its reason, and kvm
    # is only chosen after a probe boot printed the kernel's first line.
    out, err, _ = accel(tmp_path)
    assert out in ("kvm", "tcg")
    if out == "kvm":
        assert "probe boot printed" in err
    else:
        assert "tcg" in err and ("missing" in err or "cannot run a guest" in err)
