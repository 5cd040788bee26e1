#!/bin/sh
# Builds qconv-compare against the repository's libgemmi8.a and runs the comparison
# with ONNX Runtime end to end:
#   sh bench/net/build.sh [qconv-compare options] [LAYER...]
# Steps: make (libgemmi8.a); cc qconv-compare.c ort.c into build/net/; a python3 with
# onnx and numpy (Debian's python3-onnx and python3-numpy, installed by bench/deps.sh
# when run as root and missing); ONNX Runtime's library through ort-fetch.sh into
# build/ort/; then build/net/qconv-compare, its output also kept in
# build/net/qconv-compare.txt and the layers and models in build/net/work/.
# Without ONNX Runtime (no npm registry, no binary for this machine) the comparison
# is skipped: the script says so and exits 0, or 1 with GEMMI8_NET_REQUIRE_ORT=1.
# Environment: CC (default cc), GEMMI8_ORT_LIB (a library to use instead of
# fetching one), GEMMI8_NET_PYTHON (the python3 to use), GEMMI8_ISA (gemmi8's kernel
# set, as everywhere).
# Exit status: qconv-compare's (0 equal bytes everywhere, 1 some differ, 2 an error).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/net
cc=${CC:-cc}
mkdir -p "$out"

echo "+ make -C $root -j2" >&2
make -C "$root" -j2 >&2

echo "+ $cc ... -o $out/qconv-compare" >&2
"$cc" -std=c11 -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
  -ffp-contract=off -D_GNU_SOURCE -I"$root/include" \
  "$here/qconv-compare.c" "$here/ort.c" "$root/libgemmi8.a" \
  -lpthread -lm -ldl -o "$out/qconv-compare"

# A python3 that has onnx and numpy: the one asked for, else the first on PATH, else
# Debian's (a PATH may put another python3 first, without Debian's packages).
has_onnx() {
  "$1" -c 'import onnx, numpy' >/dev/null 2>&1
}
python=
for p in ${GEMMI8_NET_PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && has_onnx "$p"; then
    python=$p
    break
  fi
done
if [ -z "$python" ]; then
  sh "$root/bench/deps.sh" python3-onnx python3-numpy >&2
  python=/usr/bin/python3
  has_onnx "$python" || { echo "build.sh: $python still lacks onnx or numpy" >&2; exit 2; }
fi

lib=${GEMMI8_ORT_LIB:-}
if [ -z "$lib" ]; then
  if ! lib=$(sh "$here/ort-fetch.sh" "$root/build/ort"); then
    echo "build.sh: no ONNX Runtime library: the comparison is skipped" >&2
    [ "${GEMMI8_NET_REQUIRE_ORT:-0}" = 1 ] && exit 1
    exit 0
  fi
fi

echo "+ $out/qconv-compare -l $lib -p $python -s $here/qconv_model.py -w $out/work $*" >&2
status=0
"$out/qconv-compare" -l "$lib" -p "$python" -s "$here/qconv_model.py" -w "$out/work" "$@" \
  > "$out/qconv-compare.txt" || status=$?
cat "$out/qconv-compare.txt"
echo "build.sh: wrote $out/qconv-compare.txt; qconv-compare exit status $status" >&2
exit "$status"
