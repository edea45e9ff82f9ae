#!/bin/sh
# check-resolve-once.sh: the rows of a size read the target's plan
# (common/config/plan.h), resolved once at start-up and at reload; the
# object that runs them (daemon/iter.c) must not call any cfg_ function.
# Usage: tools/check-resolve-once.sh build/daemon/iter.o
obj=${1:?usage: check-resolve-once.sh OBJECT}
calls=$(nm -u "$obj" | awk '{ print $NF }' | grep '^cfg_') || true
if [ -n "$calls" ]; then
	echo "resolve once: $obj calls $(echo $calls | tr ' ' ','); read the plan instead" >&2
	exit 1
fi
echo "resolve once: $obj calls no cfg_ function"
