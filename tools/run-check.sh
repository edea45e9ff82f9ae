#!/bin/bash
# run-check.sh: the stages of `make check`. The gcc build comes first, as
# everything else runs what it built; then three lanes at once, because
# they contend little on a small machine: the integration tests (in
# parallel with pytest-xdist, TEST_JOBS workers, a module's shared
# fixture on one worker), the QEMU device tests (a guest that mostly
# waits), and the compiling stages one after the other (the clang build,
# cppcheck, clang-format and the layers (make lint), the unit tests, the
# same under ASan+UBSan). Last, with nothing beside them, the integration
# tests marked `alone` (they time the machine). Every stage runs even when
# an earlier one failed, so one broken stage never hides the others; the
# output of a lane running in the background is printed when it ends. At
# the end it checks that no test left a process, loop device or mount of
# its own behind, and prints one line counting every test that ran:
#   check: N passed, N failed, N skipped
# Exit status 0 only when every stage passed and nothing was left behind.
# Environment: MAKE and BUILD (set by the Makefile), STAGES to run a
# subset, TEST_JOBS (xdist workers, default 4), PYTEST_ARGS.
set -uo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
BUILD=${BUILD:-build}
TEST_JOBS=${TEST_JOBS:-4}
stages=${STAGES:-"build clang lint unit unit-san integration devices"}
state=$(mktemp -d /tmp/wearmon-check-XXXXXX)
log=$state/all.log
trap 'rm -rf "$state"' EXIT

# Everything this run starts carries WEARMON_CHECK_ID in its environment,
# and every temporary file of the tests lives under one directory of the
# run, so what was left behind is found without mistaking another run's (or
# a concurrent user's) processes and loop devices for ours.
export WEARMON_CHECK_ID="check-$$-$RANDOM$RANDOM"
run_tmp=$(mktemp -d /var/tmp/wearmon-check-XXXXXX)
export WEARMON_TEST_TMP=$run_tmp TMPDIR=$run_tmp
# Removed at the end unless something is still mounted there (reported).
trap 'rm -rf "$state"; [ -n "$(findmnt -rn -o TARGET | grep -F "$run_tmp/")" ] || rm -rf --one-file-system "$run_tmp"' EXIT

# A stage's output goes to stdout and to the lane's log (the run's log for
# the foreground); a failed stage adds its name to the file $state/failed,
# which the background lanes share with this shell.
run_stage() { # LOG NAME COMMAND...
	local out=$1 name=$2 rc t0=$SECONDS
	shift 2
	echo "=== check: $name"
	"$@" 2>&1 | tee -a "$out"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -ne 0 ]; then
		echo " $name" >>"$state/failed"
		echo "=== check: $name FAILED (exit $rc, $((SECONDS - t0)) s)"
	else
		echo "=== check: $name passed in $((SECONDS - t0)) s"
	fi
}
pytest_run() { # DIR ARGS...
	local dir=$1
	shift
	WEARMON_BUILD=$(realpath "$BUILD") /usr/bin/python3 -m pytest -q -p no:cacheprovider \
		"$@" "$dir" ${PYTEST_ARGS:-}
}
# The tests marked alone: exit status 5 (none selected) is no failure.
pytest_alone() {
	pytest_run tests/integration -m alone
	local rc=$?
	[ "$rc" -eq 5 ] && return 0
	return "$rc"
}

stage() { # LOG NAME
	local out=$1
	case $2 in
	build) run_stage "$out" build $MAKE --no-print-directory all ;;
	clang) run_stage "$out" clang $MAKE --no-print-directory check-clang ;;
	lint) run_stage "$out" lint $MAKE --no-print-directory lint ;;
	unit) run_stage "$out" unit $MAKE --no-print-directory unit ;;
	unit-san) run_stage "$out" unit-san $MAKE --no-print-directory unit-san ;;
	integration)
		run_stage "$out" integration pytest_run tests/integration -n "$TEST_JOBS" \
			--dist loadgroup -m "not alone"
		;;
	integration-alone) run_stage "$out" integration-alone pytest_alone ;;
	devices) run_stage "$out" devices pytest_run tests/devices ;;
	leak-selftest)
		# Only for tests/integration/test_checkrun.py: a stage that leaves a
		# process and a loop device behind, to show they are reported.
		[ "${WEARMON_CHECK_SELFTEST:-}" = 1 ] || { echo "run-check.sh: leak-selftest is for the tests" >&2; exit 2; }
		truncate -s 1M "$run_tmp/leak.img"
		losetup -f "$run_tmp/leak.img"
		setsid sleep 1000000 </dev/null >/dev/null 2>&1 &
		;;
	esac
}

first="" builds="" devices="" integration=""
for s in $stages; do
	case $s in
	build | leak-selftest) first="$first $s" ;;
	clang | lint | unit | unit-san) builds="$builds $s" ;;
	integration) integration=1 ;;
	devices) devices=1 ;;
	*) echo "run-check.sh: unknown stage $s" >&2; exit 2 ;;
	esac
done
t_start=$SECONDS

for s in $first; do stage "$log" "$s"; done

# The background lanes: their output into files of their own, printed
# (and added to the run's log) when the foreground is done and they are.
pids=""
if [ -n "$builds" ]; then
	(for s in $builds; do stage "$state/builds.log" "$s"; done) >"$state/builds.out" 2>&1 &
	pids="$pids $!"
	echo "=== check:$builds: started in the background"
fi
if [ -n "$devices" ]; then
	stage "$state/devices.log" devices >"$state/devices.out" 2>&1 &
	pids="$pids $!"
	echo "=== check: devices: started in the background"
fi
[ -n "$integration" ] && stage "$log" integration
for p in $pids; do wait "$p"; done
for lane in builds devices; do
	[ -f "$state/$lane.out" ] || continue
	cat "$state/$lane.out"
	cat "$state/$lane.log" >>"$log" 2>/dev/null
done
[ -n "$integration" ] && stage "$log" integration-alone
echo "=== check: all stages done in $((SECONDS - t_start)) s"
failed_stages=""
[ -f "$state/failed" ] && failed_stages=$(tr -d '\n' <"$state/failed")

# Left behind: processes of this run other than this script and the
# commands it runs right now, loop devices on files of the run, mounts there.
sleep 1
ours() {
	for e in /proc/[0-9]*/environ; do
		pid=${e#/proc/}
		pid=${pid%/environ}
		[ "$pid" = $$ ] && continue
		{ tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qx "WEARMON_CHECK_ID=$WEARMON_CHECK_ID" || continue
		args=$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null)
		case $args in
		"" | *run-check.sh* | "sleep 1" | ps\ * | tr\ * | grep\ *) continue ;;
		esac
		# This script's own subshells (command substitutions) are bash.
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = bash ] && [ "$(awk '{print $4}' "/proc/$pid/stat")" = $$ ] && continue
		echo "$pid $args"
	done
}
left=$(ours)
loops=$(losetup -n -O NAME,BACK-FILE -l 2>/dev/null | grep -F "$run_tmp/" || true)
mounts=$(findmnt -rn -o TARGET | grep -F "$run_tmp/" || true)
leftover=0
if [ -n "$left$loops$mounts" ]; then
	leftover=1
	echo "=== check: tests left these behind:"
	[ -n "$left" ] && echo "$left"
	[ -n "$loops" ] && echo "$loops"
	[ -n "$mounts" ] && echo "$mounts"
	failed_stages="$failed_stages leftovers"
else
	echo "=== check: no test process, loop device or mount left behind"
fi

# Counts: run-unit.sh's "unit: P passed, F failed" lines and pytest's
# closing lines ("3 failed, 120 passed, 1 skipped in 80.1s"; with xdist
# the same line, and "N deselected" for the tests of the other part).
unit_pass=$(sed -n 's/^unit: \([0-9]*\) passed.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
unit_fail=$(sed -n 's/^unit: [0-9]* passed, \([0-9]*\) failed.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
pyl=$(grep -E '^(=+ )?[0-9]+ (passed|failed|error|errors|skipped|deselected)' "$log" || true)
py() { echo "$pyl" | grep -oE "[0-9]+ $1" | awk '{s+=$1} END {print s+0}'; }
pass=$((unit_pass + $(py passed)))
fail=$((unit_fail + $(py failed) + $(py 'errors?') + leftover))
skip=$(py skipped)
if [ -n "$failed_stages" ] && [ "$fail" -eq 0 ]; then
	fail=1   # a stage failed without a failed test (a build error): never green
fi
[ -n "$failed_stages" ] && echo "=== check: failed stages:$failed_stages"
echo "check: $pass passed, $fail failed, $skip skipped"
[ -z "$failed_stages" ]
