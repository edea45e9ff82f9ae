#!/bin/bash
# run-check.sh: the stages of `make check`, fastest first: the gcc and clang
# builds, the unit tests, the same under ASan+UBSan, the integration tests,
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
stages=${STAGES:-"build clang unit unit-san integration devices"}
log=$(mktemp /tmp/wearmon-check-XXXXXX.log)
trap 'rm -f "$log"' EXIT

# What tests may start: a process of that name that was not running before
# the tests and still runs after them was left behind by a test.
OURS='wearmond|simssd|systemd-journald|sleep 1000000|qemu-system|fio|prometheus|node.exporter|chromium'
snapshot() { ps -eo pid=,args= | grep -E "$OURS" | grep -v grep | awk '{print $1}' | sort; }
before=$(snapshot)
loops_before=$(losetup -n -O NAME,BACK-FILE -l 2>/dev/null | sort)

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
	unit) run_stage unit $MAKE --no-print-directory unit ;;
	unit-san) run_stage unit-san $MAKE --no-print-directory unit-san ;;
	integration) run_stage integration pytest_stage integration tests/integration ;;
	devices) run_stage devices pytest_stage devices tests/devices ;;
	*) echo "run-check.sh: unknown stage $s" >&2; exit 2 ;;
	esac
done

# Left behind: new processes of the kinds above, loop devices on backing
# files under the tests' directories, mounts under them.
sleep 1
left=$(comm -13 <(echo "$before") <(snapshot) | while read -r pid; do
	[ -n "$pid" ] && ps -o pid=,args= -p "$pid" 2>/dev/null; done)
loops=$(comm -13 <(echo "$loops_before") <(losetup -n -O NAME,BACK-FILE -l 2>/dev/null | sort) |
	grep -E '/var/tmp/wearmon-|/tmp/wearmon-|/simssd-|/tmp/pytest' || true)
mounts=$(findmnt -rn -o TARGET | grep -E '^/var/tmp/wearmon-|^/tmp/wearmon-|/simssd-' || true)
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
