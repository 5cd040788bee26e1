#!/bin/sh
# Checks that the Debian packages the benchmark needs are installed:
#   sh bench/deps.sh PACKAGE...
# Installs the missing ones when run as root (apt-get, non-interactive); otherwise
# prints the exact command to run and exits 1.
set -eu

if [ "$#" -eq 0 ]; then
  echo "usage: sh bench/deps.sh PACKAGE..." >&2
  exit 2
fi

if ! command -v dpkg >/dev/null 2>&1; then
  echo "bench/deps.sh: dpkg not found (not a Debian system); install the equivalents of:" >&2
  echo "  $*" >&2
  exit 1
fi

missing=""
for pkg in "$@"; do
  # dpkg -s also succeeds for removed packages whose configuration is left: look
  # at the status line.
  if ! dpkg -s "$pkg" 2>/dev/null | grep -q '^Status: install ok installed$'; then
    missing="$missing $pkg"
  fi
done
missing=${missing# }

if [ -z "$missing" ]; then
  exit 0
fi

echo "bench/deps.sh: missing packages: $missing" >&2
if [ "$(id -u)" -eq 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  # shellcheck disable=SC2086 # one word per package
  apt-get install -y $missing
else
  echo "bench/deps.sh: install them with:" >&2
  echo "  sudo apt-get install $missing" >&2
  exit 1
fi
