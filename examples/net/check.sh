#!/bin/sh
# The example networks as CI runs them: each network on the calling thread, on
# gemmi8's pool of two and on pthreadpool (where built in), under the kernel set this
# CPU runs and under the portable one, in one arena and (-k) with a buffer a tensor;
# fails unless every threaded run gives the bytes of the calling thread and every run
# the same output checksum.
#   sh examples/net/check.sh [BUILD_DIR]   (default build)
set -eu
build=${1:-build}
bin=$build/net/gemmi8-net
status=0
for net in resnet18 mobilenetv2 bin-resnet18; do
  sums=""
  for run in default generic default-k; do
    isa=${run%-k}
    keep=
    [ "$run" = default-k ] && keep=-k
    [ "$isa" = default ] && isa=
    out=$(GEMMI8_ISA=$isa "$bin" "$net" -n 2 -t 2 -p $keep 2>&1) || { echo "$out"; exit 1; }
    threaded=$(printf '%s\n' "$out" | grep -c 'threads:' || true)
    same=$(printf '%s\n' "$out" | grep -c 'bytes as on 1 thread' || true)
    sum=$(printf '%s\n' "$out" | sed -n 's/.*checksum \([0-9a-f]*\).*/\1/p')
    printf '%-13s %-10s %s threaded runs, %s with the bytes of one thread, checksum %s\n' \
      "$net" "$run" "$threaded" "$same" "$sum"
    if [ "$threaded" -eq 0 ] || [ "$threaded" -ne "$same" ] || [ -z "$sum" ]; then status=1; fi
    sums="$sums $sum"
  done
  set -- $sums
  if [ "$1" != "$2" ] || [ "$1" != "$3" ]; then
    echo "$net: the output differs between kernel sets or layouts ($1, $2, $3)"
    status=1
  fi
done
exit $status
