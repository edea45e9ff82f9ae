#!/bin/sh
# kernel.sh: name the installed Debian kernel the device-test guest boots:
# the newest /boot/vmlinuz-VERSION whose modules are in /lib/modules/VERSION.
# Usage: tools/qemu/kernel.sh version|image
set -eu

best=""
for img in /boot/vmlinuz-*; do
	[ -e "$img" ] || continue
	v=${img#/boot/vmlinuz-}
	[ -d "/lib/modules/$v/kernel" ] || continue
	best="$best$v
"
done
kver=$(printf '%s' "$best" | sort -V | tail -n 1)
if [ -z "$kver" ]; then
	echo "kernel.sh: no /boot/vmlinuz-* with modules (install linux-image-amd64)" >&2
	exit 1
fi
case "${1:-}" in
version) echo "$kver" ;;
image) echo "/boot/vmlinuz-$kver" ;;
*)
	echo "usage: $0 version|image" >&2
	exit 2
	;;
esac
