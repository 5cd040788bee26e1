#!/bin/sh
# Runs the convolution benchmark the way its numbers are meant to be read, then
# reports: sh bench/conv/run.sh ./build/gemmi8-conv-bench [more Google Benchmark options]
# Every benchmark runs GEMMI8_BENCH_REPS times (default 3), the repetitions of all
# libraries randomly interleaved, one thread; build/conv.json keeps every repetition
# and bench/conv/report.py turns it into build/conv.md (per-layer and per-network
# tables, like-for-like ratios, percent of the vpdpbusd peak, buffer sizes; the
# depthwise layers apart, against the bytes they move at the read bandwidth of L2 and
# DRAM measured in the same run; the binary layers against gemmi8's int8 cases on the
# same layers and the vpopcntq peaks measured in the same run).
# Environment: GEMMI8_BENCH_REPS, GEMMI8_BENCH_MIN_TIME (seconds per repetition,
# default 0.1), GEMMI8_BENCH_FILTER, GEMMI8_BENCH_OUT (default build),
# GEMMI8_BENCH_CONV_LAYERS (default bench/conv/layers.txt), GEMMI8_BENCH_REPORT (0:
# only conv.json, no report).
set -eu
if [ "$#" -lt 1 ]; then
  echo "usage: sh bench/conv/run.sh BENCH_BINARY [benchmark options]" >&2
  exit 2
fi
bin=$1
shift
here=$(dirname "$0")
export OMP_NUM_THREADS=1
reps=${GEMMI8_BENCH_REPS:-3}
min_time=${GEMMI8_BENCH_MIN_TIME:-0.1}
filter=${GEMMI8_BENCH_FILTER:-.}
out=${GEMMI8_BENCH_OUT:-build}
export GEMMI8_BENCH_CONV_LAYERS="${GEMMI8_BENCH_CONV_LAYERS:-$here/layers.txt}"
mkdir -p "$out"
set -- "$bin" \
  --benchmark_filter="$filter" \
  --benchmark_repetitions="$reps" \
  --benchmark_enable_random_interleaving=true \
  --benchmark_display_aggregates_only=true \
  --benchmark_min_time="$min_time" \
  --benchmark_counters_tabular=true \
  --benchmark_out="$out/conv.json" \
  --benchmark_out_format=json \
  "$@"
echo "+ GEMMI8_BENCH_CONV_LAYERS=$GEMMI8_BENCH_CONV_LAYERS $*"
start=$(date +%s)
status=0
"$@" || status=$?
echo "benchmark: $(($(date +%s) - start)) s, exit status $status"
if [ ! -s "$out/conv.json" ]; then
  echo "bench/conv/run.sh: no $out/conv.json written" >&2
  exit 1
fi
if [ "${GEMMI8_BENCH_REPORT:-1}" = 0 ]; then
  exit "$status"
fi
python3 "$here/report.py" "$out/conv.json" "$GEMMI8_BENCH_CONV_LAYERS" > "$out/conv.md"
echo "wrote $out/conv.md"
exit "$status"
