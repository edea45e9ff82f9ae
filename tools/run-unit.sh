#!/bin/sh
# run-unit.sh: run each unit-test binary (cmocka), then print one line with
# the number of test cases passed and failed across all of them.
# Usage: tools/run-unit.sh BIN...
pass=0
fail=0
bad=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$@"; do
	"$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	# a binary may run several groups (test_engine: one per engine): all count
	p=$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {if (NR) print s}')
	f=$(sed -n 's/.*\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {if (NR) print s}')
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0}))
	if [ "$rc" -ne 0 ]; then
		echo "FAILED: $t (exit $rc)" >&2
		bad=$((bad + 1))
		[ -z "$f" ] && fail=$((fail + 1))
	fi
done
echo "unit: $pass passed, $fail failed"
[ "$bad" -eq 0 ]
