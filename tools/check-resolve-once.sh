#!/bin/sh
# check-resolve-once.sh: the rows of a size read the target's plan
# (common/config/plan.h), resolved once at start-up and at reload; the
# object that runs them (daemon/iter.c) must not call any cfg_ function,
# and its source must read no key of the target's raw configuration
# (struct cfg_target) but its name, which the log lines carry.
# Usage: tools/check-resolve-once.sh build/daemon/iter.o [daemon/iter.c]
obj=${1:?usage: check-resolve-once.sh OBJECT [SOURCE]}
src=$2
calls=$(nm -u "$obj" | awk '{ print $NF }' | grep '^cfg_') || true
if [ -n "$calls" ]; then
	echo "resolve once: $obj calls $(echo $calls | tr ' ' ','); read the plan instead" >&2
	exit 1
fi
if [ -n "$src" ]; then
	reads=$(grep -nE -e '->t->[a-z_]+' -e 'struct cfg_target' "$src" | grep -vE -e '->t->name\b' -e '^[0-9]+:[[:space:]]*(/?\*|//)') || true
	if [ -n "$reads" ]; then
		echo "resolve once: $src reads the raw configuration; read the plan instead:" >&2
		echo "$reads" >&2
		exit 1
	fi
	echo "resolve once: $obj calls no cfg_ function; $src reads no key but the target's name"
	exit 0
fi
echo "resolve once: $obj calls no cfg_ function"
