#!/usr/bin/env python3
"""Threads under load: bench/threads/load.sh's JSON files (gemmi8-bench and
gemmi8-conv-bench, idle and with CPU 0 busy, every threaded case at @1 and @2) and
the idle-pool table -> markdown on stdout:  report.py OUT_DIR
For each case: idle, the speedup of two threads over one (1T / 2T time); busy, the
two-thread time over the one-thread time (target <= 1.1). Medians of the
repetitions, wall time; the networks' rows are sums over their layers (each layer
once, as listed in bench/conv/layers.txt)."""
import json, os, re, statistics, sys
from collections import defaultdict

out = sys.argv[1]

def load(path):
    runs = defaultdict(list)
    doc = json.load(open(path))
    for b in doc["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration" or "error_occurred" in b:
            continue
        m = re.match(r"([^@/]+)@(\d+)/([^/]+)/(.+?)(/real_time)?$", b["name"])
        if m:
            runs[(f"{m.group(1)}/{m.group(3)}", m.group(4), int(m.group(2)))].append(b["real_time"])
    return {k: statistics.median(v) for k, v in runs.items()}, doc.get("context", {})

gemm = {p: load(f"{out}/load-{p}.json")[0] for p in ("idle", "busy")}
conv = {p: load(f"{out}/load-conv-{p}.json")[0] for p in ("idle", "busy")}
ctx = load(f"{out}/load-idle.json")[1]

def table(title, data, items_of, group=None):
    idle, busy = data["idle"], data["busy"]
    cases = sorted({k[0] for k in idle})
    print(f"## {title}\n")
    print("| case | items | idle speedup 2T: median | min | busy 2T/1T: median | max | busy > 1.1 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for c in cases:
        sp, br = [], []
        for s in items_of(idle, c):
            if (c, s, 1) in idle and (c, s, 2) in idle:
                sp.append(idle[(c, s, 1)] / idle[(c, s, 2)])
            if (c, s, 1) in busy and (c, s, 2) in busy:
                br.append(busy[(c, s, 2)] / busy[(c, s, 1)])
        f = lambda v, fn: f"{fn(v):.2f}" if v else "-"
        print(f"| {c} | {len(sp)} | {f(sp, statistics.median)} | {f(sp, min)} | "
              f"{f(br, statistics.median)} | {f(br, max)} | {sum(1 for x in br if x > 1.1)} |")
    print()

def items(d, c):
    return sorted({k[1] for k in d if k[0] == c})

def network_sums(data):
    """per case and network: the sum of the layers' medians, as one item"""
    res = {}
    for phase, d in data.items():
        sums = defaultdict(float)
        for (c, item, t), v in d.items():
            sums[(c, item.split("/")[0], t)] += v
        res[phase] = dict(sums)
    return res

print("# Threads under load\n")
print(f"Machine: {ctx.get('num_cpus', '?')} CPUs at {ctx.get('mhz_per_cpu', '?')} MHz; gemmi8 "
      f"{ctx.get('gemmi8_isa_default', '')}. GEMM shapes are Row x Col x Depth = N x M x K. "
      "Idle: the speedup of two threads over one. Busy: a busy loop pinned to CPU 0 for both "
      "thread counts, two-thread time over one-thread time (target <= 1.1). Medians of the "
      "repetitions, wall time.\n")
is_fc = lambda s: int(s.split("x")[1]) <= 8
table("The ten shapes", gemm, lambda d, c: [s for s in items(d, c) if not is_fc(s)])
table("Fully-connected layers, M = 1 to 8", gemm, lambda d, c: [s for s in items(d, c) if is_fc(s)])
table("Convolution layers (ResNet-18 and MobileNetV2), per layer", conv, items)
table("Networks (sum of the convolution layers)", network_sums(conv), items)

print("## Per network, milliseconds\n")
sums = network_sums(conv)
print("| case | network | idle 1T | idle 2T | busy 1T | busy 2T |")
print("|---|---|---:|---:|---:|---:|")
for (c, net, t) in sorted(k for k in sums["idle"] if k[2] == 1):
    g = lambda p, tt: sums[p].get((c, net, tt), float("nan")) / 1000
    print(f"| {c} | {net} | {g('idle', 1):.2f} | {g('idle', 2):.2f} | {g('busy', 1):.2f} | "
          f"{g('busy', 2):.2f} |")
print("\n## An idle pool\n")
print(open(f"{out}/idle-pool.md").read())
def section(name, title, text):
    """a table another program of load.sh wrote, if it wrote one"""
    path = f"{out}/{name}"
    if os.path.exists(path) and os.path.getsize(path) > 0:
        print(f"## {title}\n\n{text}\n" if text else f"## {title}\n")
        print(open(path).read())

section("two-pools.md", "Two pools at once in one process (idle machine)",
        "Each pool of 2 driven by its own thread, against two single threads at once (each "
        "pool's share of the 2 cores): time per call.")
section("split-cost.md", "What the split for two threads costs (idle machine)",
        "The tasks of a GEMM split for two threads, run on one thread, against the unsplit "
        "GEMM (qu8s8 fp32; shapes as M x N x K).")

def paired(name):
    """rows of a paired-load table: (case, parallel-for, 2T / 1T)"""
    path = f"{out}/{name}"
    rows = []
    if os.path.exists(path):
        for line in open(path):
            f = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(f) == 6 and f[0] and not f[0].startswith(("case", "---")):
                rows.append((f[0], f[1], float(f[4])))
    return rows

idle, busy = paired("paired-idle.md"), paired("paired-busy.md")
if idle or busy:
    print("## Alternating blocks of one and two threads (paired-load)\n")
    print("The same cases in blocks of about 10 ms, one thread and two alternating, the "
          "ratio taken within each pair and its median over the pairs: both sides of a "
          "ratio see the same VM speed. gemmi8 qu8s8, fp32 per channel.\n")
    print("| parallel-for | idle: 2T speedup, ten shapes (min / median) | networks | busy: "
          "2T / 1T max | cases > 1.1 | cases |")
    print("|---|---|---|---:|---:|---:|")
    for pf in sorted({r[1] for r in idle + busy}):
        sp = [1 / r[2] for r in idle if r[1] == pf and r[0].startswith("gemm ")]
        nets = ", ".join(f"{r[0].split(',')[0]} {1 / r[2]:.2f}" for r in idle
                         if r[1] == pf and "every layer" in r[0])
        b = [r[2] for r in busy if r[1] == pf]
        sp_text = f"{min(sp):.2f} / {statistics.median(sp):.2f}" if sp else "-"
        b_max = f"{max(b):.3f}" if b else "-"
        print(f"| {pf} | {sp_text} | {nets} | {b_max} | {sum(x > 1.1 for x in b)} | {len(b)} |")
    print()
    section("paired-idle.md", "Idle machine, every case", "")
    section("paired-busy.md", "CPU 0 busy, every case", "")

split = paired("paired-split.md")
if split:
    r = sorted(x[2] for x in split)
    worst = max(split, key=lambda x: x[2])
    print("## What the split costs, every case (paired-load --split-cost, idle machine)\n")
    print("Each case's tasks for two threads run one after another on the calling thread, "
          "in blocks alternating with the unsplit call (one thread): the split's cost alone, "
          "the ratio taken within each pair.\n")
    print("| cases | median | max (case) | cases > 1.02 |\n|---:|---:|---|---:|")
    print(f"| {len(r)} | {statistics.median(r):.3f} | {worst[2]:.3f} ({worst[0]}) | "
          f"{sum(x > 1.02 for x in r)} |\n")
    section("paired-split.md", "The split's cost, every case", "")

