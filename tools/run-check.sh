#!/bin/bash
# run-check.sh: the stages of `make check`, fastest first: the gcc and clang
# builds, cppcheck, clang-format and the layers (make lint), the unit tests, the same under ASan+UBSan, the integration tests,
# then the QEMU device tests. Every stage runs even when an earlier one
# failed, so one broken stage never hides the others. At the end it checks
# that no test left a process, loop device or mount of its own behind, and
# prints one line counting every test that ran:
#   check: N passed, N failed, N skipped
# Exit status 0 only when every stage passed and nothing was left behind.
# Environment: MAKE and BUILD (set by the Makefile), STAGES to run a subset.
set -uo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
BUILD=${BUILD:-build}
stages=${STAGES:-"build clang lint unit unit-san integration devices"}
log=$(mktemp /tmp/wearmon-check-XXXXXX.log)
trap 'rm -f "$log"' EXIT

# Everything this run starts carries WEARMON_CHECK_ID in its environment,
# and every temporary file of the tests lives under one directory of the
# run, so what was left behind is found without mistaking another run's (or
# a concurrent user's) processes and loop devices for ours.
export WEARMON_CHECK_ID="check-$$-$RANDOM$RANDOM"
run_tmp=$(mktemp -d /var/tmp/wearmon-check-XXXXXX)
export WEARMON_TEST_TMP=$run_tmp TMPDIR=$run_tmp
# Removed at the end unless something is still mounted there (reported).
trap 'rm -f "$log"; [ -n "$(findmnt -rn -o TARGET | grep -F "$run_tmp/")" ] || rm -rf --one-file-system "$run_tmp"' EXIT

failed_stages=""
run_stage() { # NAME COMMAND...
	local name=$1 rc
	shift
	echo "=== check: $name"
	"$@" 2>&1 | tee -a "$log"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -ne 0 ]; then
		failed_stages="$failed_stages $name"
		echo "=== check: $name FAILED (exit $rc)"
	fi
}
pytest_stage() { # NAME DIR
	WEARMON_BUILD=$(realpath "$BUILD") /usr/bin/python3 -m pytest -q -p no:cacheprovider \
		"$2" ${PYTEST_ARGS:-}
}

for s in $stages; do
	case $s in
	build) run_stage build $MAKE --no-print-directory all ;;
	clang) run_stage clang $MAKE --no-print-directory check-clang ;;
	lint) run_stage lint $MAKE --no-print-directory lint ;;
	unit) run_stage unit $MAKE --no-print-directory unit ;;
	unit-san) run_stage unit-san $MAKE --no-print-directory unit-san ;;
	integration) run_stage integration pytest_stage integration tests/integration ;;
	devices) run_stage devices pytest_stage devices tests/devices ;;
	leak-selftest)
		# Only for tests/integration/test_checkrun.py: a stage that leaves a
		# process and a loop device behind, to show they are reported.
		[ "${WEARMON_CHECK_SELFTEST:-}" = 1 ] || { echo "run-check.sh: leak-selftest is for the tests" >&2; exit 2; }
		truncate -s 1M "$run_tmp/leak.img"
		losetup -f "$run_tmp/leak.img"
		setsid sleep 1000000 </dev/null >/dev/null 2>&1 &
		;;
	*) echo "run-check.sh: unknown stage $s" >&2; exit 2 ;;
	esac
done

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
# closing lines ("3 failed, 120 passed, 1 skipped in 80.1s").
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
