#!/bin/sh
# bench.sh: `make bench` entry: run tools/bench.py as root.
set -eu
if [ "$(id -u)" -ne 0 ]; then
	echo "bench.sh: needs root (loop devices): sudo make bench" >&2
	exit 1
fi
exec /usr/bin/python3 "$(dirname "$0")/bench.py" "$@"
