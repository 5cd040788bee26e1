#!/bin/sh
# Threads under load (make bench-load): the threaded cases of gemmi8-bench (gemmi8 on
# its own pool, on pthreadpool and on an OpenMP loop; oneDNN's matmul on OpenMP;
# XNNPACK on pthreadpool; OpenBLAS) at one and two threads, on the ten shapes and the
# fully-connected layers at M = 1 to 8, and those of gemmi8-conv-bench on ResNet-18's
# and MobileNetV2's convolutions (gemmi8 qu8s8 on the same three parallel-fors,
# XNNPACK qc8 on pthreadpool, oneDNN u8s8u8 on OpenMP), first on an idle machine, then
# with a busy loop pinned to CPU 0 (taskset), one and two threads alike under that
# load. Each phase is one run of the
# binary, its repetitions randomly interleaved, so the one- and two-thread times of a
# phase are measured side by side. Then the idle pool's CPU time (idle-pool) and two
# pools at once in one process (two-pools, next to idle-pool) and what the split for two
# threads costs run on one (split-cost, next to it), on the idle machine; last, gemmi8's
# cases again in alternating blocks of one and two threads, idle and busy
# (paired-load, next to it), whose ratios the VM's changes of speed do not reach, and
# in the same blocks every case split for two threads and run on one against no split.
#   sh bench/threads/load.sh BENCH_BINARY CONV_BENCH_BINARY IDLE_POOL_BINARY
# Environment: GEMMI8_BENCH_REPS (3), GEMMI8_BENCH_MIN_TIME (0.1 s; the
# fully-connected shapes take a third of it), GEMMI8_BENCH_FILTER (a regex over the
# threaded names, default all of them), GEMMI8_BENCH_OUT (build).
# Writes $OUT/load-{idle,busy}.json, $OUT/load-conv-{idle,busy}.json, $OUT/load.md.
set -eu
if [ "$#" -lt 3 ]; then
  echo "usage: sh bench/threads/load.sh BENCH_BINARY CONV_BENCH_BINARY IDLE_POOL_BINARY" >&2
  exit 2
fi
bin=$1 conv_bin=$2 idle_pool=$3
here=$(dirname "$0")
reps=${GEMMI8_BENCH_REPS:-3}
min_time=${GEMMI8_BENCH_MIN_TIME:-0.1}
filter=${GEMMI8_BENCH_FILTER:-@[12]/}
out=${GEMMI8_BENCH_OUT:-build}
mkdir -p "$out"
export GEMMI8_BENCH_THREADS=1,2 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -q avx512f /proc/cpuinfo 2>/dev/null; then
  export OPENBLAS_CORETYPE=SkylakeX
fi
fc_min=$(python3 -c "print($min_time / 3)")
export GEMMI8_BENCH_CONV_LAYERS="${GEMMI8_BENCH_CONV_LAYERS:-$here/../conv/layers.txt}"
run() {
  "$bin" --benchmark_filter="$filter" --benchmark_repetitions="$reps" \
    --benchmark_enable_random_interleaving=true --benchmark_display_aggregates_only=true \
    --benchmark_min_time="$min_time" --fc_min_time="$fc_min" \
    --benchmark_out="$out/load-$1.json" --benchmark_out_format=json > /dev/null
  "$conv_bin" --benchmark_filter="$filter" --benchmark_repetitions="$reps" \
    --benchmark_enable_random_interleaving=true --benchmark_display_aggregates_only=true \
    --benchmark_min_time="$min_time" \
    --benchmark_out="$out/load-conv-$1.json" --benchmark_out_format=json > /dev/null
}
echo "idle machine ..."
run idle
echo "CPU 0 busy (taskset -c 0) ..."
taskset -c 0 sh -c 'while :; do :; done' &
busy=$!
trap 'kill $busy 2>/dev/null || true' EXIT
sleep 0.5
run busy
kill $busy
wait $busy 2>/dev/null || true
trap - EXIT
"$idle_pool" 2 > "$out/idle-pool.md"
two_pools="$(dirname "$idle_pool")/two-pools"
if [ -x "$two_pools" ]; then "$two_pools" > "$out/two-pools.md"; else : > "$out/two-pools.md"; fi
split_cost="$(dirname "$idle_pool")/split-cost"
if [ -x "$split_cost" ]; then "$split_cost" > "$out/split-cost.md"; else : > "$out/split-cost.md"; fi
paired="$(dirname "$idle_pool")/paired-load"
if [ -x "$paired" ]; then
  echo "paired blocks, idle and CPU 0 busy ..."
  "$paired" > "$out/paired-idle.md"
  "$paired" --busy > "$out/paired-busy.md"
  echo "paired blocks, the split for two threads run on one ..."
  "$paired" --split-cost --pairs 31 > "$out/paired-split.md"
else
  : > "$out/paired-idle.md"
  : > "$out/paired-busy.md"
  : > "$out/paired-split.md"
fi
python3 "$here/report.py" "$out" > "$out/load.md"
echo "wrote $out/load.md"
