#!/bin/sh
# Runs every fuzz target for a bounded time under every instruction set this CPU has.
#   sh test/fuzz/run.sh BUILD_DIR SECONDS JOBS TARGET...
# Each run works on a temporary copy of test/fuzz/corpus/<target>/ (the tree's seed
# corpus never grows), with GEMMI8_ISA set before the process starts (the target
# aborts if the library runs another level). Prints one line per run: target, isa,
# executions (libFuzzer's stat::number_of_executed_units), result; exits 1 if any run
# found a defect, after printing what it reported and how to reproduce it.
# FUZZ_ISAS="generic avx2" limits the levels; FUZZ_FLAGS adds libFuzzer options.
set -eu

build=$1 seconds=$2 jobs=$3
shift 3
[ $# -gt 0 ] || { echo "usage: $0 BUILD_DIR SECONDS JOBS TARGET..." >&2; exit 2; }
corpus_root=$(dirname "$0")/corpus

# The levels this build and CPU can run, as the library itself says.
isas=${FUZZ_ISAS:-$(GEMMI8_FUZZ_LIST_ISAS=1 "$build/fuzz-$1")}
[ -n "$isas" ] || { echo "no instruction set listed by $build/fuzz-$1" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/gemmi8-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
logs=$build/fuzz-logs
artifacts=$build/fuzz-artifacts
mkdir -p "$logs" "$artifacts"

# One run: its log in $logs, a crash input in $artifacts, its line in $work/<t>-<isa>.
run_one() {
  t=$1 isa=$2
  dir=$work/corpus-$t-$isa
  mkdir -p "$dir"
  if [ -d "$corpus_root/$t" ]; then cp "$corpus_root/$t"/* "$dir"/ 2>/dev/null || true; fi
  log=$logs/$t-$isa.log
  status=ok
  GEMMI8_ISA=$isa "$build/fuzz-$t" -max_total_time="$seconds" -print_final_stats=1 \
    -max_len=512 -len_control=0 -timeout=30 -artifact_prefix="$artifacts/$t-$isa-" \
    ${FUZZ_FLAGS:-} "$dir" >"$log" 2>&1 || status=FAILED
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  printf '%-10s %-14s %12s  %s\n' "$t" "$isa" "${execs:-?}" "$status" >"$work/$t-$isa"
}

started=$(date +%s)
printf '%-10s %-14s %12s  %s\n' target isa executions result
running=0
for t in "$@"; do
  for isa in $isas; do
    run_one "$t" "$isa" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
      wait
      running=0
    fi
  done
done
wait

failed=0
total=0
for t in "$@"; do
  for isa in $isas; do
    line=$(cat "$work/$t-$isa")
    echo "$line"
    execs=$(echo "$line" | awk '{print $3}')
    case $execs in ''|*[!0-9]*) ;; *) total=$((total + execs)) ;; esac
    case $line in
      *FAILED)
        failed=1
        log=$logs/$t-$isa.log
        echo "---- $t on $isa: $log"
        grep -E -A4 '^==== |ERROR: |runtime error|SUMMARY' "$log" | head -n 40 || tail -n 40 "$log"
        for a in "$artifacts/$t-$isa-"*; do
          [ -e "$a" ] && echo "reproduce: GEMMI8_ISA=$isa $build/fuzz-$t $a"
        done
        echo "----"
        ;;
    esac
  done
done
elapsed=$(($(date +%s) - started))
levels=$(echo $isas | wc -w)
echo "fuzzing: $total executions in $elapsed s ($# targets x $levels instruction sets," \
  "$seconds s each, $jobs at a time)"
exit $failed
