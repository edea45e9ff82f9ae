#!/bin/sh
# install-deps.sh: the Debian packages wearmon needs, by purpose, and their
# installation with apt-get. Installs only what is missing; safe to re-run.
#
# Usage: tools/install-deps.sh [--check] GROUP...
#   GROUP: build  what compiling the daemon, the CLI and the simulated SSD needs
#          run    what running wearmond, the CLI and `make demo` needs
#          test   what `make check` needs on top (QEMU and a kernel for the
#                 device tests, fio, clang, Prometheus, Chromium, ...)
#   --check  install nothing: list what is missing and exit 1 if anything is,
#            else say that all are installed (exit 0)
#
# `sudo make demo` installs build + run, `sudo make check` build + run + test,
# `make` and `make install` install nothing (they only say what is missing).
set -eu

BUILD_PKGS="
build-essential pkg-config
libaio-dev liburing-dev libsqlite3-dev libinih-dev libsystemd-dev
libzstd-dev libblkid-dev libfuse3-dev
"
# Runtime: the shared libraries come with the -dev packages above; these are
# the programs wearmond, the unit file and the demo call. procps: /bin/kill
# of the unit's ExecReload. sqlite3: the CLI that reads the history.
RUN_PKGS="
util-linux mount e2fsprogs xfsprogs fuse3 procps sqlite3
libaio1 liburing2 libsqlite3-0 libinih1 libsystemd0 libzstd1 libblkid1
"
# Tests only: compilers and libraries of the unit tests, the real programs the
# integration tests drive, the QEMU guest of the device tests, and the tools
# that check docs, charts, metrics and the report (time: GNU time, the peak
# memory of a command for the constant-memory tests; sudo: the README's first
# run replayed as an ordinary user; bash-completion: the completion test;
# fdisk: partition tables on the tests' loop devices; python3-pytest-xdist:
# the integration tests run in parallel).
TEST_PKGS="
clang clang-format cppcheck libcmocka-dev zlib1g-dev python3 python3-pytest
python3-pytest-xdist
systemd fio dmsetup zstd time fdisk sudo bash-completion
librsvg2-bin mandoc poppler-utils chromium fonts-dejavu-core
prometheus prometheus-node-exporter
qemu-system-x86 linux-image-amd64 busybox-static hdparm cpio kmod
"

check_only=0
groups=""
for a in "$@"; do
	case $a in
	--check) check_only=1 ;;
	build | run | test) groups="$groups $a" ;;
	*)
		echo "usage: $0 [--check] build|run|test..." >&2
		exit 2
		;;
	esac
done
[ -n "$groups" ] || { echo "usage: $0 [--check] build|run|test..." >&2; exit 2; }

wanted=""
for g in $groups; do
	case $g in
	build) wanted="$wanted $BUILD_PKGS" ;;
	run) wanted="$wanted $RUN_PKGS" ;;
	test) wanted="$wanted $TEST_PKGS" ;;
	esac
done

missing=""
for p in $wanted; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*"install ok installed"*) ;;
	*) case " $missing " in *" $p "*) ;; *) missing="$missing $p" ;; esac ;;
	esac
done

if [ "$check_only" -eq 1 ]; then
	# a check always answers: what is missing, or that nothing is
	if [ -z "$missing" ]; then
		echo "all $(echo $wanted | tr " " "\n" | sort -u | wc -l) Debian packages of $(echo $groups | tr ' ' '+') are installed"
		exit 0
	fi
	echo "missing Debian packages ($(echo $groups | tr ' ' '+')):$missing"
	echo "install them: sudo tools/install-deps.sh$groups"
	exit 1
fi

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: missing Debian packages:$missing" >&2
	echo "install-deps.sh: run as root to install them: sudo tools/install-deps.sh$groups" >&2
	exit 1
fi

echo "install-deps.sh: installing ($(echo $groups | tr ' ' '+')):$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
