#!/bin/sh
# accel.sh: choose QEMU's accelerator by what works, not by what exists.
# A writable /dev/kvm does not mean KVM can run a guest (nested
# virtualization often cannot: QEMU aborts or the guest prints nothing), so
# KVM is used only when a probe boot of the test kernel under KVM prints its
# first line within a bounded time; otherwise TCG. Prints the accelerator
# (kvm or tcg) on stdout and the reason on stderr.
# Environment:
#   WEARMON_QEMU_ACCEL        kvm or tcg: use it, no probe
#   WEARMON_KVM_PROBE_SECONDS how long the probe may take (default 15)
#   WEARMON_KVM_PROBE_MARKER  the line that proves the guest runs (default
#                             "Linux version"); a test sets one that never
#                             appears to exercise the fallback
#   WEARMON_KVM_DEVICE        the device node to look for (default /dev/kvm)
#   WEARMON_KVM_PROBE_ACCEL   what the probe boots with (default kvm; the
#                             tests boot it with tcg and a marker that never
#                             appears to exercise a guest that hangs)
#   KERNEL                    the kernel image (default tools/qemu/kernel.sh)
# Usage: tools/qemu/accel.sh
set -u

here=$(cd "$(dirname "$0")" && pwd)
say() { echo "accel.sh: $*" >&2; }

case ${WEARMON_QEMU_ACCEL:-} in
kvm | tcg)
	say "${WEARMON_QEMU_ACCEL} (set by WEARMON_QEMU_ACCEL)"
	echo "$WEARMON_QEMU_ACCEL"
	exit 0
	;;
"") ;;
*)
	say "WEARMON_QEMU_ACCEL=$WEARMON_QEMU_ACCEL: expected kvm or tcg"
	exit 2
	;;
esac

kvm=${WEARMON_KVM_DEVICE:-/dev/kvm}
if [ ! -r "$kvm" ] || [ ! -w "$kvm" ]; then
	say "tcg ($kvm missing or not writable)"
	echo tcg
	exit 0
fi

kernel=${KERNEL:-$("$here/kernel.sh" image)} || exit 1
secs=${WEARMON_KVM_PROBE_SECONDS:-15}
marker=${WEARMON_KVM_PROBE_MARKER:-Linux version}
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# The probe guest has no disk and no init: it only has to start the kernel.
# accel=kvm alone (no tcg fallback), so a KVM that cannot start fails here.
qemu-system-x86_64 -machine pc,accel=${WEARMON_KVM_PROBE_ACCEL:-kvm} -cpu max -m 256 -nographic \
	-no-reboot -nodefaults -serial stdio -monitor none \
	-kernel "$kernel" -append "console=ttyS0 panic=-1" \
	</dev/null >"$out" 2>"$err" &
qpid=$!
ok=0
i=0
exited=0
while [ "$i" -lt $((secs * 10)) ]; do
	if grep -aqF "$marker" "$out"; then
		ok=1
		break
	fi
	kill -0 "$qpid" 2>/dev/null || { exited=1; break; }
	sleep 0.1
	i=$((i + 1))
done
kill -KILL "$qpid" 2>/dev/null
wait "$qpid" 2>/dev/null

if [ "$ok" -eq 1 ]; then
	say "kvm (a probe boot printed \"$marker\" after $((i / 10)).$((i % 10)) s)"
	echo kvm
else
	why=$(grep -a -m1 -iE 'error|fail|assert' "$err" | tr -d '\r' | cut -c1-160)
	if [ "$exited" -eq 1 ]; then
		how="QEMU under KVM exited after $((i / 10)).$((i % 10)) s"
	else
		how="no \"$marker\" from the guest within $secs s"
	fi
	say "tcg: $kvm is present but KVM cannot run a guest here ($how${why:+: $why})"
	echo tcg
fi
