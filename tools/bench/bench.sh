#!/bin/sh
# bench.sh: `make bench` entry: run tools/bench/bench.py as root, keeping
# what it prints in a new file under tools/bench/results/.
set -eu
if [ "$(id -u)" -ne 0 ]; then
	echo "bench.sh: needs root (loop devices): sudo make bench" >&2
	exit 1
fi
here=$(dirname "$0")
exec /usr/bin/python3 "$here/bench.py" "$@" --results "$here/results"
