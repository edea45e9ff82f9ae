#!/bin/sh
# guest.sh: the device test's steps inside the QEMU guest (run as
# /test/run.sh by tools/qemu/init). Each step runs wearmond with the
# configuration the host wrote (/test/STEP.conf) and leaves STEP.log and
# STEP.rc in /results; checks of the devices themselves (zeroes after an
# erase, checksums around a refusal, IDENTIFY after a failed ATA erase)
# leave small files there too. The host reads everything from the database
# and these files. /test/params.sh sets NVME, SATA, VSCSI, MEGASAS and
# REGION_BYTES.

# shellcheck source=/dev/null
. /test/params.sh
R=/results

say() {
	echo "wearmon-guest: $*"
	echo "wearmon-guest: $*" >/dev/console
}

# Reads must see the device, not pages cached before a format.
fresh() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# step NAME: run wearmond on NAME.conf; its seconds go to steps.time.
step() {
	t0=$(cut -d' ' -f1 /proc/uptime)
	wearmond --foreground -c "/test/$1.conf" >"$R/$1.log" 2>&1
	echo $? >"$R/$1.rc"
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "$1 $t0 $t1" >>"$R/steps.time"
	say "step $1: wearmond exited $(cat "$R/$1.rc")"
}

# zero_check DEV NAME: 0 in NAME.cmp when the region reads back as zeroes.
zero_check() {
	fresh
	cmp -s -n "$REGION_BYTES" "$1" /dev/zero
	echo $? >"$R/$2.cmp"
	say "$2: cmp with zeroes over $REGION_BYTES bytes: $(cat "$R/$2.cmp")"
}

# digest DEV NAME: md5 of the region into NAME.md5.
digest() {
	fresh
	dd if="$1" bs=1M count=$((REGION_BYTES / 1048576)) 2>/dev/null | md5sum |
		cut -d' ' -f1 >"$R/$2.md5"
}

# What sysfs says, to compare with the identity wearmond read by command.
nvme_ctrl=/sys/block/$(basename "$(readlink -f "$NVME")")/device
sata_dev=/sys/block/$(basename "$(readlink -f "$SATA")")/device
for f in serial model firmware_rev; do
	tr -d '\n' <"$nvme_ctrl/$f" >"$R/sysfs_nvme_$f"
done
for f in model rev; do
	tr -d '\n' <"$sata_dev/$f" >"$R/sysfs_sata_$f"
done
# The SCSI disks: what sysfs shows, and the command the kernel chose for
# their discards from their VPD pages.
for pair in "vscsi $VSCSI" "megasas $MEGASAS"; do
	d=${pair%% *}
	dev=${pair#* }
	sys=/sys/block/$(basename "$(readlink -f "$dev")")/device
	for f in vendor model rev; do
		tr -d '\n' <"$sys/$f" >"$R/sysfs_${d}_$f"
	done
	cat "$sys"/scsi_disk/*/provisioning_mode | tr -d '\n' >"$R/sysfs_${d}_provisioning_mode"
done

step basic
zero_check "$NVME" nvme_after_basic

# wrong_serial NAME DEV: the refused run must leave the device as it was.
wrong_serial() {
	digest "$2" "$1_before_wrong_serial"
	step "$1_wrong_serial"
	digest "$2" "$1_after_wrong_serial"
}
wrong_serial nvme "$NVME"
wrong_serial sata "$SATA"

step nvme_format
zero_check "$NVME" nvme_after_format

step nvme_sanitize_stop
step nvme_sanitize_continue

# SCSI disks: two cycles with a TRIM (UNMAP) of the region after each; the
# images pass UNMAP down as holes, so the region then reads as zeroes.
step scsi_trim
zero_check "$VSCSI" vscsi_after_trim
zero_check "$MEGASAS" megasas_after_trim
step scsi_erase
step vscsi_format
step sata_scsi_erase
step adopt_first
step adopt_second

step sata_erase
# A drive left locked by a failed erase would refuse reads and show the
# security bits in IDENTIFY word 128.
hdparm --Istdout "$SATA" >"$R/sata_identify_after_erase.txt" 2>&1
fresh
dd if="$SATA" of=/dev/null bs=1M count=$((REGION_BYTES / 1048576)) 2>/dev/null
echo $? >"$R/sata_read_after_erase.rc"
say "sata_erase: reading the disk afterwards: $(cat "$R/sata_read_after_erase.rc")"
exit 0
