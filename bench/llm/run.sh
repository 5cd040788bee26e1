#!/bin/sh
# make bench-llm: runs gemmi8-llm-bench the way its numbers are meant to be read, then
# the report:
#   sh bench/llm/run.sh ./build/gemmi8-llm-bench [more options for the binary]
#
# Writes $GEMMI8_BENCH_OUT/llm.json (every slice) and llm.md (bench/llm/report.py),
# prints the targets' table and the report's path. OpenBLAS gets the core bench/run.sh
# gives it (SkylakeX on AVX-512 x86, Haswell on AVX2; GEMMI8_BENCH_OPENBLAS_CORE
# chooses another), chosen before it loads; the binary sets every library's thread
# count itself (OpenBLAS, oneDNN's OpenMP, gemmi8's pool).
#
# Environment:
#   GEMMI8_LLM_SHAPES   layers, "N K" a line (default bench/llm/shapes.txt)
#   GEMMI8_LLM_M        the Ms (default 1,4,16,64,512)
#   GEMMI8_LLM_THREADS  the thread counts (default 1,2)
#   GEMMI8_LLM_ROUNDS   rounds (default 5)
#   GEMMI8_LLM_SLICE    seconds per slice, at least (default 0.02)
#   GEMMI8_LLM_SERIES   regex of the series to run (default all; peak/read-bw and
#                       peak/vpdpbusd-zmm are the read and peak loops)
#   GEMMI8_BENCH_OUT    output directory (default build)
#   DNNL_MAX_CPU_ISA    oneDNN's own: AVX512_CORE_VNNI keeps it off AMX
# Exit status 2 if a series failed (llm.md lists it).
set -eu

if [ "$#" -lt 1 ]; then
  echo "usage: sh bench/llm/run.sh LLM_BENCH_BINARY [options]" >&2
  exit 2
fi
bin=$1
shift
here=$(dirname "$0")
if [ ! -x "$bin" ]; then
  echo "bench/llm/run.sh: $bin is not an executable (make build/gemmi8-llm-bench)" >&2
  exit 1
fi

script=bench/llm/run.sh
. "$here/../openblas-core.sh"

out=${GEMMI8_BENCH_OUT:-build}
mkdir -p "$out"
threads=${GEMMI8_LLM_THREADS:-1,2}
# OpenBLAS sizes its pool from OPENBLAS_NUM_THREADS when it loads: the most asked for.
OPENBLAS_NUM_THREADS=$(echo "$threads" | tr ',' '\n' | sort -n | tail -n 1)
export OPENBLAS_NUM_THREADS
unset OMP_NUM_THREADS

set -- "$bin" \
  --shapes="${GEMMI8_LLM_SHAPES:-$here/shapes.txt}" \
  --m="${GEMMI8_LLM_M:-1,4,16,64,512}" \
  --threads="$threads" \
  --rounds="${GEMMI8_LLM_ROUNDS:-5}" \
  --slice="${GEMMI8_LLM_SLICE:-0.02}" \
  --series="${GEMMI8_LLM_SERIES:-.}" \
  --out="$out/llm.json" \
  "$@"
echo "+ OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-} $*"
status=0
"$@" || status=$?
if [ ! -s "$out/llm.json" ]; then
  echo "bench/llm/run.sh: no $out/llm.json written" >&2
  exit 1
fi
python3 "$here/report.py" "$out/llm.json" --markdown "$out/llm.md" --headline || status=1
echo "every llm table: $out/llm.md; results: $out/llm.json"
exit "$status"
