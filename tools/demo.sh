#!/bin/bash
# demo.sh: `make demo`: wearmond on a simulated SSD that degrades, with an
# embedded configuration: three cycles over growing sizes, no TRIM after the
# first (the drive stays full, the second cycle crashes), a secure erase
# after the second (the third recovers). Leaves the history in
# BUILD/demo.db, plots in BUILD/demo-*.svg, the report in
# BUILD/demo-report.html, and prints how to query them.
# Touches nothing but the files and the loop device it creates.
# Usage: tools/demo.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
if [ "$(id -u)" -ne 0 ]; then
	echo "demo.sh: needs root (a FUSE mount and a loop device): sudo make demo" >&2
	exit 1
fi

work=$(mktemp -d /var/tmp/wearmon-demo-XXXXXX)
mnt="$work/ssd"
loop=""
sim_pid=""
cleanup() {
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null || true
	if mountpoint -q "$mnt" 2>/dev/null; then
		fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
	fi
	[ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

# The simulated drive: 64 MiB, 4 channels, 7% factory spare. Flash times
# are scaled so a fresh drive writes ~20 MiB/s and the demo takes minutes.
mkdir -p "$mnt"
"$build/simssd" "$mnt" -f -o capacity=64M,page=4k,erase_block=128k,spare=7,channels=4,t_prog=800us,t_read=50us,t_erase=2ms,cache=512k &
sim_pid=$!
for _ in $(seq 50); do
	[ -e "$mnt/disk.img" ] && break
	sleep 0.1
done
[ -e "$mnt/disk.img" ] || { echo "demo.sh: the simulated SSD did not start" >&2; exit 1; }
loop=$(losetup --direct-io=on --show -f "$mnt/disk.img")

# The secure erase: the simulated drive's own command, through its control file.
cat > "$work/erase.sh" <<ERASE
#!/bin/sh
echo secure-erase > "$mnt/control"
ERASE
chmod 0755 "$work/erase.sh"

db="$build/demo.db"
rm -f "$db" "$db-wal" "$db-shm"
cat > "$work/demo.conf" <<CONF
[wearmon]
database = $db

[target simssd]
device = $loop
allow_destroy = yes
sizes = 25%:100%:25%
fill = yes
fill_block_size = 128k
fill_queue_depth = 8
workload = randwrite
block_size = 4k
queue_depth = 16
amount = 1x
duration = 6s
cycles = 3
; no TRIM after cycle 1, a secure erase after cycle 2, nothing after 3
between_cycles = none secure-erase none
secure_erase = command
secure_erase_command = $work/erase.sh
sample_interval = 1s
CONF

echo "demo: simulated SSD (64 MiB, fresh ~20 MiB/s) on $loop; running 3 cycles over 4 sizes"
echo "demo: configuration:"
sed 's/^/    /' "$work/demo.conf"
"$build/wearmond" --foreground -c "$work/demo.conf"

echo
echo "demo: history (wearmon history -d $db):"
"$build/wearmon" -d "$db" history
echo
echo "demo: alerts (wearmon alerts -d $db):"
"$build/wearmon" -d "$db" alerts
"$build/wearmon" -d "$db" plot --kind sizes -o "$build/demo-sizes.svg"
"$build/wearmon" -d "$db" plot --kind cycles -o "$build/demo-cycles.svg"
"$build/wearmon" -d "$db" report -o "$build/demo-report.html"
echo
echo "demo: write amplification reported by the simulated drive:"
grep -E '^(host_bytes_written|flash_bytes_written|write_amplification) ' "$mnt/stats" | sed 's/^/    /'
# Where everything is and what to try next, with paths as typed from here.
rel() { realpath --relative-to="$PWD" "$1"; }
b=$(rel "$build")
cat <<DONE

demo: done in $((SECONDS / 60)) min $((SECONDS % 60)) s. What it left:
    report    $b/demo-report.html  (open it in a browser, or print it to PDF)
    database  $b/demo.db
    charts    $b/demo-sizes.svg, $b/demo-cycles.svg
Next:
    $b/wearmon -d $b/demo.db status
    $b/wearmon -d $b/demo.db history --sort -mibps_avg
    $b/wearmon -d $b/demo.db plot --kind wear -o wear.svg
    sqlite3 -readonly -header -column $b/demo.db 'SELECT * FROM cycle_summary'
    your own drive: README.md, "A first run on your own device"
DONE
