#!/bin/sh
# run-guest.sh: boot the device-test guest in QEMU (KVM when a probe boot
# shows it works, else software emulation: tools/qemu/accel.sh) with
# emulated NVMe controllers and AHCI
# SATA disks on raw image files the caller created. The console is this
# process's standard output; the guest powers itself off when done.
# Usage: tools/qemu/run-guest.sh INITRD [--nvme IMG SERIAL]... [--sata IMG SERIAL]...
#   SERIAL may go on with more -device properties: "S1,model=NAME,ver=FW".
#   SATA disks take AHCI ports 0, 1, ... in the order given.
#   KERNEL (environment): the kernel image; default: tools/qemu/kernel.sh image
#   QEMU_MEMORY (MiB, default 768), QEMU_CPUS (default 2)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ]; then
	echo "usage: $0 INITRD [--nvme|--sata|--vscsi|--megasas IMG SERIAL]..." >&2
	exit 2
fi
initrd=$1
shift
kernel=${KERNEL:-$("$here/kernel.sh" image)}

accel=$(KERNEL="$kernel" "$here/accel.sh") || exit 1
echo "run-guest.sh: accelerator: $accel" >&2

set -- "$@" --end
nvme=0
sata=0
vscsi=0
megasas=0
while [ "$1" != --end ]; do
	case $1 in
	--nvme | --sata | --vscsi | --megasas)
		[ $# -ge 4 ] || { echo "$0: $1 needs IMG SERIAL" >&2; exit 2; }
		kind=${1#--}
		img=$2
		serial=$3
		shift 3
		[ -f "$img" ] || { echo "$0: no image file $img" >&2; exit 2; }
		case $kind in
		nvme)
			id=nvme$nvme
			nvme=$((nvme + 1))
			dev="nvme,serial=$serial,drive=$id"
			;;
		sata)
			id=sata$sata
			dev="ide-hd,bus=ahci0.$sata,serial=$serial,drive=$id"
			sata=$((sata + 1))
			;;
		vscsi)
			id=vscsi$vscsi
			[ $vscsi -gt 0 ] || set -- "$@" -device virtio-scsi-pci,id=vscsi
			dev="scsi-hd,bus=vscsi.0,scsi-id=$vscsi,serial=$serial,drive=$id"
			vscsi=$((vscsi + 1))
			;;
		megasas)
			id=megasas$megasas
			[ $megasas -gt 0 ] || set -- "$@" -device megasas-gen2,id=megasas
			dev="scsi-hd,bus=megasas.0,scsi-id=$megasas,serial=$serial,drive=$id"
			megasas=$((megasas + 1))
			;;
		esac
		discard=""
		case $kind in vscsi | megasas) discard=",discard=unmap" ;; esac
		set -- "$@" -drive "file=$img,format=raw,if=none,id=$id,cache=writeback$discard" \
			-device "$dev"
		;;
	*)
		echo "$0: unknown argument $1" >&2
		exit 2
		;;
	esac
done
shift

# -no-reboot: a guest panic (init exiting) ends QEMU instead of looping.
exec qemu-system-x86_64 -machine pc,accel=$accel -cpu max \
	-smp "${QEMU_CPUS:-2}" -m "${QEMU_MEMORY:-768}" \
	-nographic -no-reboot -nodefaults -serial stdio -monitor none \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 quiet loglevel=3" \
	-device ahci,id=ahci0 \
	"$@"
