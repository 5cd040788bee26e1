#!/bin/sh
# Runs the benchmark the way its numbers are meant to be read, then reports:
#   sh bench/run.sh ./build/gemmi8-bench [more Google Benchmark options]
#
# The main shapes and then the fully-connected ones (batch 1 and small M) are
# benchmarked by one invocation of the binary, so that all are interleaved.
# Every benchmark runs GEMMI8_BENCH_REPS times (default 3), the repetitions of all
# libraries randomly interleaved (the VM has slow phases), single-threaded; the
# console shows mean/median/stddev/cv; build/bench.json keeps every repetition and
# bench/report.py turns it into build/bench.md (median GOPS per shape and case,
# ratios, percent of peak, targets), build/bench.dat and bench-bin.dat and, with
# gnuplot, the charts build/bench.png (int8) and build/bench-bin.png (binary).
#
# Environment:
#   GEMMI8_BENCH_REPS       repetitions (default 3)
#   GEMMI8_BENCH_MIN_TIME   seconds per repetition, at least (default 0.2)
#   GEMMI8_BENCH_FILTER     regex of benchmark names to run (default all)
#   GEMMI8_BENCH_SHAPES     shape file (default bench/shapes.txt)
#   GEMMI8_BENCH_FC_SHAPES  fully-connected shape file (default bench/shapes-fc.txt,
#                           or bench/shapes-fc-smoke.txt when GEMMI8_BENCH_SHAPES is
#                           a shapes-smoke.txt; none: no fully-connected part)
#   GEMMI8_BENCH_FC_MIN_TIME  seconds per repetition on the fully-connected shapes,
#                           at least (default a quarter of GEMMI8_BENCH_MIN_TIME)
#   GEMMI8_BENCH_ISAS       gemmi8 kernel sets, comma-separated, or best: each case's
#                           best one here (default all here)
#   GEMMI8_BENCH_OUT        output directory (default build)
#   GEMMI8_BENCH_REPORT     0: only bench.json, no report (make bench runs the binary
#                           once per shape and reports on the merged files)
#   GEMMI8_BENCH_OPENBLAS_CORE  OpenBLAS core; default SkylakeX on AVX-512 x86,
#                           Haswell on AVX2 x86 (this overrides OPENBLAS_CORETYPE),
#                           else OpenBLAS's own choice
set -eu

if [ "$#" -lt 1 ]; then
  echo "usage: sh bench/run.sh BENCH_BINARY [benchmark options]" >&2
  exit 2
fi
bin=$1
shift
here=$(dirname "$0")

if [ ! -x "$bin" ]; then
  echo "bench/run.sh: $bin is not an executable (make build/gemmi8-bench)" >&2
  exit 1
fi

script=bench/run.sh
. "$here/openblas-core.sh"
# Single thread everywhere (the binary also calls openblas_set_num_threads(1)).
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

reps=${GEMMI8_BENCH_REPS:-3}
min_time=${GEMMI8_BENCH_MIN_TIME:-0.2}
filter=${GEMMI8_BENCH_FILTER:-.}
out=${GEMMI8_BENCH_OUT:-build}
export GEMMI8_BENCH_SHAPES="${GEMMI8_BENCH_SHAPES:-$here/shapes.txt}"
# The smoke shapes (make bench-smoke) come with the small fully-connected ones.
case "$GEMMI8_BENCH_SHAPES" in
  *shapes-smoke.txt) fc_default=$here/shapes-fc-smoke.txt ;;
  *) fc_default=$here/shapes-fc.txt ;;
esac
export GEMMI8_BENCH_FC_SHAPES="${GEMMI8_BENCH_FC_SHAPES:-$fc_default}"
# 438 fully-connected benchmarks of 2 us to 10 ms a call: a quarter of the main
# minimum time keeps them to about 3 minutes and still runs each hundreds of
# times (at least about 10 at the largest).
fc_min_time=${GEMMI8_BENCH_FC_MIN_TIME:-$(awk -v t="$min_time" 'BEGIN { printf "%g", t / 4 }')}
mkdir -p "$out"

set -- "$bin" \
  --benchmark_filter="$filter" \
  --benchmark_repetitions="$reps" \
  --benchmark_enable_random_interleaving=true \
  --benchmark_display_aggregates_only=true \
  --benchmark_min_time="$min_time" \
  --fc_min_time="$fc_min_time" \
  --benchmark_counters_tabular=true \
  --benchmark_out="$out/bench.json" \
  --benchmark_out_format=json \
  "$@"
echo "+ OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-} OPENBLAS_NUM_THREADS=1" \
  "GEMMI8_BENCH_SHAPES=$GEMMI8_BENCH_SHAPES" \
  "GEMMI8_BENCH_FC_SHAPES=$GEMMI8_BENCH_FC_SHAPES $*"
start=$(date +%s)
status=0
"$@" || status=$?
echo "benchmark: $(($(date +%s) - start)) s, exit status $status"

if [ ! -s "$out/bench.json" ]; then
  echo "bench/run.sh: no $out/bench.json written" >&2
  exit 1
fi
if [ "${GEMMI8_BENCH_REPORT:-1}" = 0 ]; then
  exit "$status"
fi
rm -f "$out/bench.md" "$out/bench.png" "$out/bench-bin.png"
python3 "$here/report.py" "$out/bench.json" --markdown "$out/bench.md" \
  --data "$out/bench.dat" --chart "$out/bench.png" \
  --bin-data "$out/bench-bin.dat" --bin-chart "$out/bench-bin.png"
for f in bench.md bench.png bench-bin.png; do
  if [ -s "$out/$f" ]; then echo "wrote $out/$f"; fi
done
exit "$status"
