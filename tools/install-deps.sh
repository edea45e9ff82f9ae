#!/bin/sh
# install-deps.sh: install the Debian packages wearmon needs to build, test,
# benchmark and run its demo. Installs only what is missing; safe to re-run.
# Usage: tools/install-deps.sh [--check]   (--check: list missing, install nothing)
set -eu

PACKAGES="
build-essential pkg-config clang
libaio-dev libsqlite3-dev libinih-dev libsystemd-dev
zlib1g-dev libzstd-dev libblkid-dev libfuse3-dev fuse3
libcmocka-dev python3-pytest sqlite3
fio util-linux e2fsprogs xfsprogs systemd dmsetup
librsvg2-bin mandoc
qemu-system-x86 linux-image-amd64 busybox-static hdparm cpio kmod
"

missing=""
for p in $PACKAGES; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done

if [ -z "$missing" ]; then
	exit 0
fi

if [ "${1:-}" = "--check" ]; then
	echo "missing packages:$missing"
	exit 1
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: missing Debian packages:$missing" >&2
	echo "install-deps.sh: run as root (sudo make ...) to install them with apt-get" >&2
	exit 1
fi

echo "install-deps.sh: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
