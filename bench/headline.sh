#!/bin/sh
# make bench: the headline run, about 8 minutes on a 2-core machine, about 1 GB:
#   sh bench/headline.sh ./build/gemmi8-bench ./build/gemmi8-conv-bench
#
# The ten shapes of bench/shapes.txt, the fully-connected layers of
# bench/shapes-fc.txt at batch 1 (M = 1) and every layer of bench/conv/layers.txt
# (ResNet-18, MobileNetV2, MobileNetV3's depthwise layers, the binary ResNet-18),
# with the series the headline tables, the like-for-like tables and the charts read
# (GEMM_SERIES, CONV_SERIES below): gemmi8 on its best kernel set, each peer in its
# fastest configuration and in the ones that do gemmi8's work, the peak loops. Left
# to make bench-full (bench/run.sh and bench/conv/run.sh alone): the other kernel
# sets, M = 2 to 8, the threaded runs, oneDNN's gemm-u8s8s32, gemmlowp's u8s32,
# gemmi8's qu8-fixedpoint and im2col-qu8s8 convolutions.
#
# The binaries run once per group (a shape, a layer) through bench/run.sh and
# bench/conv/run.sh, the repetitions of a group randomly interleaved: every library
# on a shape is measured side by side, and only one group's cases are set up at a
# time. A line per group says what runs and how far along the run is; the
# benchmarks' console output goes to build/bench-log.txt. Then bench/merge.py joins
# the groups' JSON into build/bench.json and build/conv.json, the reports and charts
# are written as bench/run.sh and bench/conv/run.sh write them (build/bench.md,
# bench.png, bench-bin.png, conv.md), GEMMI8_BENCH_LLM (a command: the llm mode,
# bench/llm/run.sh) and GEMMI8_BENCH_NET (a command: the whole networks) run if set,
# and the run ends with the headline tables, the charts' paths, and each part's wall
# clock and peak resident memory (GNU time's, of each group's process).
#
# Environment: GEMMI8_BENCH_REPS (3), GEMMI8_BENCH_MIN_TIME (seconds per repetition
# on the ten shapes, 0.1), GEMMI8_BENCH_FC_MIN_TIME (on the fully-connected layers,
# 0.05), GEMMI8_BENCH_CONV_MIN_TIME (on the convolutions, 0.05), GEMMI8_BENCH_OUT
# (build), GEMMI8_BENCH_LLM (a command run after the convolutions, its output into the
# log: sh bench/llm/run.sh ./build/gemmi8-llm-bench), GEMMI8_BENCH_LLM_MD (the report it
# writes, whose "## Targets" section is shown; default $GEMMI8_BENCH_OUT/llm.md),
# GEMMI8_BENCH_NET (a command run after that, e.g. make bench-net; its failure is
# reported, not fatal), GEMMI8_BENCH_NET_MD (the report it writes, whose "## Networks"
# section is shown).
# Exit status 2 if a benchmark failed (bench.md, conv.md and llm.md list it), else 0.
set -eu

if [ "$#" -ne 2 ]; then
  echo "usage: sh bench/headline.sh BENCH_BINARY CONV_BENCH_BINARY" >&2
  exit 2
fi
gemm_bin=$1 conv_bin=$2
here=$(dirname "$0")
out=${GEMMI8_BENCH_OUT:-build}
parts=$out/bench-parts
log=$out/bench-log.txt
reps=${GEMMI8_BENCH_REPS:-3}
min_time=${GEMMI8_BENCH_MIN_TIME:-0.1}
fc_min_time=${GEMMI8_BENCH_FC_MIN_TIME:-0.05}
conv_min_time=${GEMMI8_BENCH_CONV_MIN_TIME:-0.05}
shapes=$here/shapes.txt
fc_shapes=$here/shapes-fc.txt
layers=$here/conv/layers.txt
for f in "$gemm_bin" "$conv_bin"; do
  if [ ! -x "$f" ]; then
    echo "bench/headline.sh: $f is not an executable" >&2
    exit 1
  fi
done

# gemmi8: qu8 / qs8 (fixed-point and fp32 requantization, int32 output), the
# uint8 x int8 and per-tensor configurations of the like-for-like tables, binary;
# OpenBLAS sgemm; gemmlowp u8u8; oneDNN matmul in the configurations doing gemmi8's
# work and in its fastest one; XNNPACK's fully-connected operators; the peak loops.
GEMM_SERIES='gemmi8/(qu8|qs8|qu8fp32|qs8fp32|qu8s32|qs8s32|qu8s8|qu8s8fp32|qu8s8pt|qu8s8fp32pt'
GEMM_SERIES=$GEMM_SERIES'|qu8s8s32|qs8pt|qs8fp32pt|bin)-[a-z0-9_-]+|openblas/sgemm|gemmlowp/u8u8'
GEMM_SERIES=$GEMM_SERIES'|onednn/matmul-(u8s8u8|s8s8s8)(-fast|-pt|-nozp)?|onednn/matmul-u8s8s32'
GEMM_SERIES=$GEMM_SERIES'|xnnpack/fc-(qu8|qs8)|peak/[a-z0-9-]+'
# gemmi8's four configurations and their like-for-like peers (oneDNN's fastest
# among them), the binary cases, the peak loops.
CONV_SERIES='gemmi8/(qu8s8|qc8|qu8|qs8|bin-f32|bin-bits|bin-f32-zeropad)'
CONV_SERIES=$CONV_SERIES'|xnnpack/(qu8|qc8|qs8)|onednn/(u8s8u8|s8s8s8)(-fast)?|peak/[a-z0-9-]+'

rm -rf "$parts"
mkdir -p "$parts"
: > "$log"

# GNU time gives each group's wall clock and peak resident memory (KiB).
timer=""
if [ -x /usr/bin/time ] && /usr/bin/time -f '%e %M' -o /dev/null true 2>/dev/null; then
  timer=/usr/bin/time
fi

# timed FILE COMMAND...: runs the command, its wall clock and peak memory into FILE
timed() {
  file=$1
  shift
  if [ -n "$timer" ]; then
    "$timer" -f '%e %M' -o "$file" "$@"
  else
    "$@"
  fi
}

# m:ss from seconds
mmss() {
  awk -v s="$1" 'BEGIN { s = int(s + 0.5); printf "%dm%02ds", s / 60, s % 60 }'
}
# GB from GNU time's KiB
gb() {
  awk -v k="$1" 'BEGIN { printf "%.2f GB", k * 1024 / 1e9 }'
}

# The groups: "phase|label|filter" a line.
groups=$parts/groups.txt
{
  echo "GEMM|peak loops|^peak/[a-z0-9-]+/0x0x0"
  sed 's/#.*//' "$shapes" | awk 'NF == 3 {
    printf "GEMM|%s x %s x %s|^(%s)/%sx%sx%s(/|$)\n", $1, $2, $3, series, $1, $2, $3 }' \
    series="$GEMM_SERIES"
  sed 's/#.*//' "$fc_shapes" | awk 'NF == 3 && $2 == 1 {
    printf "batch 1|%s x 1 x %s|^(%s)/%sx[01]x%s(/|$)\n", $1, $3, series, $1, $3 }' \
    series="$GEMM_SERIES"
  echo "conv|peak loops|^peak/[a-z0-9-]+/all/"
  sed 's/#.*//' "$layers" | awk 'NF == 10 {
    k = $4; kind = k ~ /dw$/ ? " depthwise" : k ~ /b$/ ? " binary" : ""; sub(/[a-z]+$/, "", k)
    name = $2; gsub(/[.]/, "[.]", name)
    printf "conv|%s %s (%sx%s%s, stride %s, %s x %s x %s -> %s)|^(%s)/%s/%s$\n", $1, $2, k, k,
      kind, $5, $7, $8, $9, $10, series, $1, name }' series="$CONV_SERIES"
} > "$groups"

# gemmi8 on its best kernel set, one thread
export GEMMI8_BENCH_ISAS=best GEMMI8_BENCH_REPORT=0
export GEMMI8_BENCH_REPS="$reps" GEMMI8_BENCH_SHAPES="$shapes" GEMMI8_BENCH_FC_SHAPES="$fc_shapes"
export GEMMI8_BENCH_CONV_LAYERS="$layers"

# How many benchmarks each group runs (listed, not run).
count() { # phase filter
  if [ "$1" = conv ]; then
    "$conv_bin" --benchmark_list_tests=true --benchmark_filter="$2" < /dev/null 2>>"$log" |
      wc -l
  else
    GEMMI8_BENCH_THREADS=1 "$gemm_bin" --benchmark_list_tests=true --benchmark_filter="$2" \
      < /dev/null 2>>"$log" | wc -l
  fi
}
: > "$parts/counts.txt"
while IFS='|' read -r phase label filter; do
  echo "$phase|$(count "$phase" "$filter")" >> "$parts/counts.txt"
done < "$groups"
total_of() {
  awk -F'|' -v p="$1" '$1 == p { n += $2 } END { print n + 0 }' "$parts/counts.txt"
}
gemm_total=$(total_of GEMM) fc_total=$(total_of "batch 1") conv_total=$(total_of conv)
echo "make bench: $gemm_total GEMM benchmarks on the ten shapes, $fc_total at batch 1," \
  "$conv_total on the convolution layers${GEMMI8_BENCH_NET:+, then the networks};" \
  "repetitions: $reps of each, interleaved within each group."
echo "The benchmarks' console output: $log. Every kernel set, M and configuration:" \
  "make bench-full."

failed=0
start=$(date +%s)
phase_now="" phase_start=0 phase_done=0 phase_total=0 index=0 groups_in_phase=0
n=0
: > "$parts/usage.txt"
while IFS='|' read -r phase label filter; do
  n=$((n + 1))
  if [ "$phase" != "$phase_now" ]; then
    phase_now=$phase phase_start=$(date +%s) phase_done=0 index=0
    phase_total=$(total_of "$phase")
    groups_in_phase=$(awk -F'|' -v p="$phase" '$1 == p' "$groups" | wc -l)
  fi
  index=$((index + 1))
  benchmarks=$(sed -n "${n}p" "$parts/counts.txt" | cut -d'|' -f2)
  part=$parts/$(printf '%02d' "$n")
  printf '[%s %d/%d] %s: %d benchmarks ...' "$phase" "$index" "$groups_in_phase" "$label" \
    "$benchmarks"
  echo "==== [$phase $index/$groups_in_phase] $label: $filter" >> "$log"
  group_start=$(date +%s)
  status=0
  if [ "$phase" = conv ]; then
    set -- GEMMI8_BENCH_MIN_TIME="$conv_min_time" sh "$here/conv/run.sh" "$conv_bin"
  else
    set -- GEMMI8_BENCH_MIN_TIME="$min_time" GEMMI8_BENCH_FC_MIN_TIME="$fc_min_time" \
      GEMMI8_BENCH_THREADS=1 sh "$here/run.sh" "$gemm_bin"
  fi
  timed "$part.time" env GEMMI8_BENCH_FILTER="$filter" GEMMI8_BENCH_OUT="$part" "$@" \
    < /dev/null >> "$log" 2>&1 || status=$?
  now=$(date +%s)
  seconds=$((now - group_start))
  kb=0
  if [ -s "$part.time" ]; then
    kb=$(tail -n 1 "$part.time" | awk '{ print $2 }')
  fi
  echo "$phase|$seconds|$kb|$benchmarks" >> "$parts/usage.txt"
  phase_done=$((phase_done + benchmarks))
  elapsed=$((now - phase_start))
  left=""
  if [ "$phase_done" -gt 0 ] && [ "$phase_done" -lt "$phase_total" ]; then
    left=", about $(mmss $((elapsed * (phase_total - phase_done) / phase_done))) left"
  fi
  mem=""
  if [ "$kb" -gt 0 ]; then mem=", $(gb "$kb")"; fi
  failure=""
  if [ "$status" -ne 0 ]; then
    failure=", exit status $status (see $log)"
    failed=1
  fi
  printf ' %d s%s%s; %d of %d done, %s%s\n' "$seconds" "$mem" "$failure" "$phase_done" \
    "$phase_total" "$(mmss "$elapsed")" "$left"
done < "$groups"

# One JSON per binary, then the reports and charts.
gemm_parts="" conv_parts=""
n=0
while IFS='|' read -r phase label filter; do
  n=$((n + 1))
  f=$parts/$(printf '%02d' "$n")
  if [ "$phase" = conv ]; then
    [ -s "$f/conv.json" ] && conv_parts="$conv_parts $f/conv.json"
  else
    [ -s "$f/bench.json" ] && gemm_parts="$gemm_parts $f/bench.json"
  fi
done < "$groups"
# shellcheck disable=SC2086 # one word per file
if [ -n "$gemm_parts" ]; then
  python3 "$here/merge.py" "$out/bench.json" $gemm_parts
  rm -f "$out/bench.md" "$out/bench.png" "$out/bench-bin.png"
  python3 "$here/report.py" "$out/bench.json" --markdown "$out/bench.md" \
    --data "$out/bench.dat" --chart "$out/bench.png" \
    --bin-data "$out/bench-bin.dat" --bin-chart "$out/bench-bin.png" --headline \
    > "$parts/headline-gemm.md" 2>>"$log" || failed=1
fi
# shellcheck disable=SC2086
if [ -n "$conv_parts" ]; then
  python3 "$here/merge.py" "$out/conv.json" $conv_parts
  python3 "$here/conv/report.py" "$out/conv.json" "$layers" > "$out/conv.md" || failed=1
  python3 "$here/conv/report.py" "$out/conv.json" "$layers" --headline \
    > "$parts/headline-conv.md" || failed=1
fi

# The llm mode (GEMMI8_BENCH_LLM, e.g. sh bench/llm/run.sh ./build/gemmi8-llm-bench:
# transformer layers at M = 1 to 512, one thread and two), when the command is there;
# its progress lines go to the log, its targets' table to the headline.
llm_md=${GEMMI8_BENCH_LLM_MD:-}
if [ -n "${GEMMI8_BENCH_LLM:-}" ]; then
  llm_md=${llm_md:-$out/llm.md}
  printf '[llm] %s ...' "$GEMMI8_BENCH_LLM"
  echo "==== [llm] $GEMMI8_BENCH_LLM" >> "$log"
  [ -n "$llm_md" ] && rm -f "$llm_md"
  llm_start=$(date +%s)
  status=0
  timed "$parts/llm.time" sh -c "$GEMMI8_BENCH_LLM" >> "$log" 2>&1 || status=$?
  seconds=$(($(date +%s) - llm_start))
  kb=0
  if [ -s "$parts/llm.time" ]; then kb=$(tail -n 1 "$parts/llm.time" | awk '{ print $2 }'); fi
  slices=$(grep -o '^gemmi8-llm-bench: [0-9]* slices' "$log" | tail -n 1 | awk '{ print $2 }')
  echo "llm|$seconds|$kb|${slices:--}" >> "$parts/usage.txt"
  mem=""
  if [ "$kb" -gt 0 ]; then mem=", $(gb "$kb")"; fi
  if [ "$status" -ne 0 ]; then
    echo " $seconds s$mem, exit status $status (see $log)"
    failed=1
  else
    echo " $seconds s$mem"
  fi
fi

# The whole networks, when the command is there; their failure (no ONNX Runtime to
# compare with, say) leaves the rest standing.
net_note=""
net_md=${GEMMI8_BENCH_NET_MD:-}
if [ -n "${GEMMI8_BENCH_NET:-}" ]; then
  printf '[networks] %s ...' "$GEMMI8_BENCH_NET"
  echo "==== [networks] $GEMMI8_BENCH_NET" >> "$log"
  [ -n "$net_md" ] && rm -f "$net_md"
  net_start=$(date +%s)
  status=0
  timed "$parts/net.time" sh -c "$GEMMI8_BENCH_NET" >> "$log" 2>&1 || status=$?
  seconds=$(($(date +%s) - net_start))
  kb=0
  if [ -s "$parts/net.time" ]; then kb=$(tail -n 1 "$parts/net.time" | awk '{ print $2 }'); fi
  echo "networks|$seconds|$kb|-" >> "$parts/usage.txt"
  mem=""
  if [ "$kb" -gt 0 ]; then mem=", $(gb "$kb")"; fi
  if [ "$status" -ne 0 ]; then
    echo " $seconds s$mem, exit status $status (see $log)"
    net_note="networks: '$GEMMI8_BENCH_NET' failed (exit status $status; see $log): skipped,"
    net_note="$net_note the rest stands"
  else
    echo " $seconds s$mem"
  fi
fi

echo
echo "================ make bench: headline ================"
echo
[ -s "$parts/headline-gemm.md" ] && cat "$parts/headline-gemm.md"
[ -s "$parts/headline-conv.md" ] && cat "$parts/headline-conv.md"
# the llm report: its "## Targets" section
if [ -n "$llm_md" ] && [ -s "$llm_md" ]; then
  awk '/^## / { on = ($0 == "## Targets") } on' "$llm_md"
  echo "every llm table: $llm_md"
fi
# the networks' report: its "## Networks" section
if [ -n "$net_md" ] && [ -s "$net_md" ]; then
  awk '/^## / { on = ($0 == "## Networks") } on' "$net_md"
  echo "every network table: $net_md"
fi
for f in bench.png bench-bin.png; do
  [ -s "$out/$f" ] && echo "chart: $out/$f"
done
echo "every table: $out/bench.md, $out/conv.md${llm_md:+, $llm_md}; results: $out/bench.json," \
  "$out/conv.json;" \
  "console output: $log"
[ -n "$net_note" ] && echo "$net_note"
echo
total=$(($(date +%s) - start))
echo "Time and peak resident memory of each part (${timer:-no GNU time: memory not measured}):"
echo
echo "| part | benchmarks | wall clock | peak resident memory |"
echo "|---|---:|---:|---:|"
awk -F'|' '
  { if (!($1 in t)) name[++n] = $1
    t[$1] += $2; if ($3 > m[$1]) m[$1] = $3; if ($4 != "-") b[$1] += $4; else b[$1] = "-"
    if ($3 > top) top = $3 }
  END {
    for (i = 1; i <= n; i++) {
      p = name[i]
      printf "| %s | %s | %dm%02ds | %s |\n", p, b[p], t[p] / 60, t[p] % 60,
        (m[p] > 0 ? sprintf("%.2f GB", m[p] * 1024 / 1e9) : "-")
    }
    printf "| total | | %dm%02ds | %s |\n", total / 60, total % 60,
      (top > 0 ? sprintf("%.2f GB", top * 1024 / 1e9) : "-")
  }' total="$total" "$parts/usage.txt"
echo
if [ "$failed" -ne 0 ]; then
  echo "bench/headline.sh: some benchmarks or reports failed: see $out/bench.md," \
    "$out/conv.md and $log" >&2
  exit 2
fi
