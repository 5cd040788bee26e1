#!/bin/sh
# Before and after: two gemmi8-bench (or gemmi8-conv-bench) binaries run in turn,
# A B A B ..., ROUNDS times each (default 3), on the same benchmarks, so that the VM's
# slow phases hit both alike. Prints per benchmark the median GOPS of each and the
# ratio B / A, and the run-to-run spread of A (its rounds against each other), and
# per group (library/variant) the median ratio and its range:
#   sh bench/ab.sh OLD_BINARY NEW_BINARY [benchmark filter regex]
# Environment: GEMMI8_AB_ROUNDS (3), GEMMI8_AB_MIN_TIME (0.1 s), GEMMI8_BENCH_SHAPES /
# GEMMI8_BENCH_FC_SHAPES / GEMMI8_BENCH_CONV_LAYERS as for the binaries, GEMMI8_AB_OUT
# (build/ab).
set -eu
if [ "$#" -lt 2 ]; then
  echo "usage: sh bench/ab.sh OLD_BINARY NEW_BINARY [filter]" >&2
  exit 2
fi
old=$1 new=$2 filter=${3:-^gemmi8}
rounds=${GEMMI8_AB_ROUNDS:-3}
min_time=${GEMMI8_AB_MIN_TIME:-0.1}
out=${GEMMI8_AB_OUT:-build/ab}
mkdir -p "$out"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
r=1
while [ "$r" -le "$rounds" ]; do
  for side in a b; do
    if [ "$side" = a ]; then bin=$old; else bin=$new; fi
    "$bin" --benchmark_filter="$filter" --benchmark_min_time="$min_time" \
      --benchmark_out="$out/$side$r.json" --benchmark_out_format=json > /dev/null
  done
  echo "round $r of $rounds done"
  r=$((r + 1))
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys, re
out, rounds = sys.argv[1], int(sys.argv[2])
def load(side):
    runs = []
    for r in range(1, rounds + 1):
        d = json.load(open(f"{out}/{side}{r}.json"))
        runs.append({b["name"]: b.get("GOPS", 0.0) for b in d["benchmarks"]
                     if b.get("run_type", "iteration") == "iteration" and b.get("GOPS")})
    return runs
a, b = load("a"), load("b")
names = [n for n in a[0] if all(n in x for x in a + b)]
groups = {}
print("| benchmark | A GOPS | B GOPS | B / A | A spread |")
print("|---|---:|---:|---:|---:|")
for n in names:
    ga = statistics.median(x[n] for x in a)
    gb = statistics.median(x[n] for x in b)
    sa = max(x[n] for x in a) / min(x[n] for x in a) - 1
    print(f"| {n} | {ga:.1f} | {gb:.1f} | {gb / ga:.3f} | {100 * sa:.1f}% |")
    g = re.sub(r"/[^/]*$", "", re.sub(r"/real_time$", "", n))
    groups.setdefault(g, []).append((gb / ga, sa))
print()
print("| group | benchmarks | median B / A | min | max | median A spread |")
print("|---|---:|---:|---:|---:|---:|")
for g, v in groups.items():
    rs = [x[0] for x in v]
    print(f"| {g} | {len(v)} | {statistics.median(rs):.3f} | {min(rs):.3f} | {max(rs):.3f} | "
          f"{100 * statistics.median(x[1] for x in v):.1f}% |")
PY
