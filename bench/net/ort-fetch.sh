#!/bin/sh
# Fetches ONNX Runtime's CPU shared library from the npm package onnxruntime-node
# and prints the absolute path of libonnxruntime.so.* on stdout (nothing else goes
# to stdout; progress and errors go to stderr):
#   sh bench/net/ort-fetch.sh [CACHE_DIR]        (default build/ort)
# The package ships the prebuilt library for linux/x64 and linux/arm64 inside its
# tarball, so one `npm install` of a pinned version is all it takes. Its install
# script is skipped (--ignore-scripts): on linux/x64 it would download the CUDA
# execution provider from another registry, which the CPU library does not need.
# A cache that already holds the pinned version is reused without the network.
# Exits 1 with a message on stderr when npm is missing, the registry cannot be
# reached or this machine has no binary in the package: callers then skip.
# Environment: GEMMI8_ORT_VERSION (default below) overrides the pinned version.
set -eu

# ONNX Runtime 1.22.0: C API version 22; the package's binding is N-API 6 (node 20
# loads it), and it holds linux/x64 and linux/arm64 libraries.
version=${GEMMI8_ORT_VERSION:-1.22.0}
cache=${1:-build/ort}

fail() {
  echo "ort-fetch.sh: $*" >&2
  exit 1
}

case $(uname -s) in
  Linux) ;;
  *) fail "no ONNX Runtime library for $(uname -s) here (Linux only)" ;;
esac
case $(uname -m) in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) fail "onnxruntime-node@$version has no Linux binary for $(uname -m) (x86_64 and aarch64 only)" ;;
esac

pkg_dir=node_modules/onnxruntime-node
lib_dir=$pkg_dir/bin/napi-v6/linux/$arch

# The version of the package in the cache, empty when there is none.
cached_version() {
  json="$cache/$pkg_dir/package.json"
  [ -f "$json" ] || return 0
  sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$json" | head -n 1
}

# The library in the cache, empty when there is none.
find_lib() {
  for f in "$cache/$lib_dir"/libonnxruntime.so.*; do
    if [ -f "$f" ]; then
      echo "$f"
      return 0
    fi
  done
}

if [ "$(cached_version)" != "$version" ] || [ -z "$(find_lib)" ]; then
  command -v npm >/dev/null 2>&1 || fail "npm not found: install node and npm (Debian: apt-get install npm)"
  mkdir -p "$cache"
  echo "ort-fetch.sh: npm install onnxruntime-node@$version into $cache" >&2
  # Few retries and a bounded wait, so that a machine without the registry fails in
  # about a minute instead of npm's default several.
  if ! npm install --prefix "$cache" --ignore-scripts --no-audit --no-fund \
      --fetch-retries=1 --fetch-timeout=60000 "onnxruntime-node@$version" >&2; then
    fail "npm install onnxruntime-node@$version failed (is the npm registry reachable?)"
  fi
  got=$(cached_version)
  [ "$got" = "$version" ] || fail "npm installed onnxruntime-node '$got', not $version"
fi

lib=$(find_lib)
[ -n "$lib" ] || fail "onnxruntime-node@$version holds no libonnxruntime.so.* for linux/$arch (looked in $cache/$lib_dir)"
# Absolute, with symbolic links resolved in the directories.
dir=$(cd "$(dirname "$lib")" && pwd -P)
echo "$dir/$(basename "$lib")"
