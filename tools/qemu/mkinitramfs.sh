#!/bin/sh
# mkinitramfs.sh: build the device-test guest's initramfs at test time from
# the installed Debian packages: busybox-static, the kernel's NVMe, AHCI,
# virtio-scsi and MegaRAID SAS modules (with sd_mod for the SCSI disks),
# wearmond with the shared libraries ldd lists, hdparm, and the
# test's own payload. Nothing is downloaded; the result goes to OUT only.
# Usage: tools/qemu/mkinitramfs.sh OUT.cpio.gz WEARMOND PAYLOAD_DIR
#   PAYLOAD_DIR is copied to /test in the guest; /test/run.sh is run by init.
#   KVER (environment) picks the kernel; default: tools/qemu/kernel.sh.
set -eu

if [ $# -ne 3 ]; then
	echo "usage: $0 OUT.cpio.gz WEARMOND PAYLOAD_DIR" >&2
	exit 2
fi
out=$1
wearmond=$2
payload=$3
here=$(cd "$(dirname "$0")" && pwd)
kver=${KVER:-$("$here/kernel.sh" version)}
moddir=/lib/modules/$kver

die() {
	echo "mkinitramfs.sh: $*" >&2
	exit 1
}

[ -x "$wearmond" ] || die "$wearmond is not an executable (run make first)"
[ -d "$payload" ] || die "$payload is not a directory"
[ -d "$moddir/kernel" ] || die "no modules in $moddir (install linux-image-amd64)"
busybox=$(command -v busybox) || die "busybox not found (install busybox-static)"
# The guest has no libc of its own for busybox: it must be the static build.
if ldd "$busybox" >/dev/null 2>&1; then
	die "$busybox is dynamically linked; install busybox-static"
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/wearmon-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT INT TERM
mkdir -p "$root/bin" "$root/sbin" "$root/dev" "$root/proc" "$root/sys" \
	"$root/tmp" "$root/run" "$root/results" "$root/lib/modules" "$root/test"

cp "$busybox" "$root/bin/busybox"
cp "$here/init" "$root/init"
chmod 0755 "$root/init"

# A program and every shared library it loads, at the paths ldd reports.
add_program() {
	src=$1
	dst=$2
	cp -L "$src" "$root$dst"
	chmod 0755 "$root$dst"
	ldd "$src" | awk '/=> \// { print $3 } /^[[:space:]]*\// { print $1 }' |
		while read -r lib; do
			[ -e "$root$lib" ] && continue
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
}
add_program "$wearmond" /sbin/wearmond
hdparm=$(command -v hdparm || true)
[ -n "$hdparm" ] || hdparm=/usr/sbin/hdparm
[ -x "$hdparm" ] || hdparm=/sbin/hdparm
[ -x "$hdparm" ] || die "hdparm not found (install hdparm)"
add_program "$hdparm" /sbin/hdparm

# Modules in dependency order, as modprobe would load them; each once.
deps=$root/deps
for m in nvme ahci sd_mod virtio_pci virtio_scsi megaraid_sas; do
	modprobe -S "$kver" --show-depends "$m" >>"$deps" ||
		die "modprobe cannot resolve $m for kernel $kver"
done
awk '$1 == "insmod" && !seen[$2]++ { print $2 }' "$deps" >"$deps.order"
: >"$root/lib/modules/order"
while read -r ko; do
	base=$(basename "$ko")
	cp "$ko" "$root/lib/modules/$base"
	echo "$base" >>"$root/lib/modules/order"
done <"$deps.order"
rm -f "$deps" "$deps.order"
[ -s "$root/lib/modules/order" ] || die "no modules found for nvme, ahci, sd_mod, virtio_scsi, megaraid_sas"

cp -R "$payload/." "$root/test/"

mkdir -p "$(dirname "$out")"
(cd "$root" && find . -print | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
