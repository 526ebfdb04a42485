#!/usr/bin/env bash
# deploy/setup.sh - install what tapestry needs on Debian 12, then build it.
#
# Idempotent: installs only the packages that are missing (apt-get update once,
# only when something is missing), regenerates the build system, configures
# into build/ and builds. Run as root (or with sudo available).
#   deploy/setup.sh            install + build
#   deploy/setup.sh --no-build install only
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

sudo=
if [ "$(id -u)" != 0 ]; then sudo=sudo; fi

missing=()
while read -r pkg; do
	case "$pkg" in ''|'#'*) continue ;; esac
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] || missing+=("$pkg")
done < deploy/packages.txt

if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -q
	$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
else
	echo "setup: all $(grep -cv -e '^#' -e '^$' deploy/packages.txt) packages present"
fi

[ "${1:-}" = "--no-build" ] && exit 0

if [ ! -x configure ] || [ configure.ac -nt configure ] || \
   [ -n "$(find . -name '*.am' -newer configure -print -quit)" ]; then
	autoreconf -fi
fi
mkdir -p build
cd build
if [ ! -f Makefile ] || [ ../configure -nt config.status ]; then
	../configure --enable-werror ${TAPESTRY_CONFIGURE_FLAGS:-}
fi
make -j"$(nproc)"
echo "setup: built in $top/build"
