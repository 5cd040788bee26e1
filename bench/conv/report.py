#!/usr/bin/env python3
"""Tables from gemmi8-conv-bench's JSON: python3 bench/conv/report.py conv.json layers.txt

Per network: each layer's median GOPS per case, the like-for-like ratios (gemmi8
against the peer configuration doing the same work) and gemmi8's best against the
best peer in any configuration; the network sums (time weighted by each layer's
count); percent of the vpdpbusd peak; the indirection buffer against an im2col copy;
the targets of the convolution issue.
"""
import json
import statistics
import sys

# (gemmi8 case, peer case): the same work.
PAIRS = [
    ("gemmi8/qu8s8", "onednn/u8s8u8"),
    ("gemmi8/qu8s8", "onednn/u8s8u8-fast"),
    ("gemmi8/qc8", "xnnpack/qc8"),
    ("gemmi8/qc8", "onednn/s8s8s8"),
    ("gemmi8/qu8", "xnnpack/qu8"),
    ("gemmi8/qs8", "xnnpack/qs8"),
    ("gemmi8/qs8", "onednn/s8s8s8-fast"),
]
GEMMI8 = ["gemmi8/qu8s8", "gemmi8/qc8", "gemmi8/qu8", "gemmi8/qs8"]
SHOWN = ["gemmi8/qu8s8", "onednn/u8s8u8", "onednn/u8s8u8-fast", "gemmi8/qc8", "xnnpack/qc8",
         "onednn/s8s8s8", "onednn/s8s8s8-fast", "gemmi8/qu8", "xnnpack/qu8", "gemmi8/qs8",
         "xnnpack/qs8", "gemmi8/qu8-fixedpoint", "gemmi8/im2col-qu8s8"]


def read_layers(path):
    layers = []
    for line in open(path):
        line = line.split("#")[0].split()
        if len(line) != 10:
            continue
        net, name, count, k, s, p, ih, iw, cin, cout = line
        k, s, p, ih, iw, cin, cout = map(int, (k, s, p, ih, iw, cin, cout))
        oh = (ih + 2 * p - k) // s + 1
        ow = (iw + 2 * p - k) // s + 1
        layers.append(dict(net=net, name=name, count=int(count), k=k, s=s, p=p, ih=ih, iw=iw,
                           cin=cin, cout=cout, oh=oh, ow=ow,
                           ops=2.0 * oh * ow * cout * k * k * cin, depth=k * k * cin))
    return layers


def main():
    data = json.load(open(sys.argv[1]))
    layers = read_layers(sys.argv[2])
    times, counters, errors = {}, {}, {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"] if "run_name" in b else b["name"]
        if b.get("error_occurred"):
            errors[name] = b.get("error_message", "error")
            continue
        unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
        times.setdefault(name, []).append(b["real_time"] * unit)
        for key in ("ind_bytes", "work_bytes", "im2col_bytes", "GOPS"):
            if key in b:
                counters.setdefault(name, {})[key] = b[key]
    med = {name: statistics.median(v) for name, v in times.items()}
    peak = counters.get("peak/vpdpbusd-zmm/all/peak", {}).get("GOPS")
    ctx = data.get("context", {})
    out = []
    w = out.append
    w("# gemmi8 convolution benchmark\n")
    w("Median GOPS (2 x output pixels x output channels x taps x input channels / s / 1e9), "
      "one thread, batch 1, 224 x 224 inputs, NHWC; all libraries interleaved in one run.\n")
    w("- date: %s; host: %s; gemmi8 kernel set: %s; layers: %s" %
      (ctx.get("date", "?"), ctx.get("host_name", "?"), ctx.get("gemmi8_isa", "?"), ctx.get("layers", "?")))
    w("- vpdpbusd zmm peak (register-only loop): %s GOPS" % ("%.0f" % peak if peak else "not measured"))
    w("- pairs doing the same work (zero points, scales per tensor or per channel, "
      "signedness): " + "; ".join("%s vs %s" % p for p in PAIRS if "-fast" not in p[1]))
    w("- against oneDNN's fastest configuration (no zero points, one scale: less work "
      "than gemmi8's): " + "; ".join("%s vs %s" % p for p in PAIRS if "-fast" in p[1]))
    if errors:
        w("- failed or skipped: " + "; ".join("%s: %s" % (k, v) for k, v in sorted(errors.items())))
    w("")

    def gops(case, L):
        t = med.get("%s/%s/%s" % (case, L["net"], L["name"]))
        return L["ops"] / t / 1e9 if t else None

    def fmt(x, spec="%.0f"):
        return spec % x if x is not None else "-"

    targets = []
    for net in sorted(set(L["net"] for L in layers), key=lambda n: [L["net"] for L in layers].index(n)):
        nl = [L for L in layers if L["net"] == net]
        peers = sorted(set(n.rsplit("/", 2)[0] for n in med if not n.startswith(("gemmi8/", "peak/"))))
        w("## %s: per layer (median GOPS)\n" % net)
        cols = [c for c in SHOWN if any(gops(c, L) for L in nl)]
        w("| layer | x | kernel | in | out | K | " + " | ".join(cols) +
          " | gemmi8 best / best peer | % peak (qu8s8) |")
        w("|---|---:|---|---|---|---:|" + "---:|" * len(cols) + "---:|---:|")
        for L in nl:
            g_best = max([g for g in (gops(c, L) for c in GEMMI8) if g], default=None)
            p_best = max([g for g in (gops(c, L) for c in peers) if g], default=None)
            ratio = g_best / p_best if g_best and p_best else None
            q = gops("gemmi8/qu8s8", L)
            w("| %s | %d | %dx%d/%d | %dx%dx%d | %dx%dx%d | %d | %s | %s | %s |" % (
                L["name"], L["count"], L["k"], L["k"], L["s"], L["ih"], L["iw"], L["cin"], L["oh"],
                L["ow"], L["cout"], L["depth"], " | ".join(fmt(gops(c, L)) for c in cols),
                fmt(ratio, "%.2f"), fmt(q / peak * 100 if q and peak else None, "%.0f%%")))
            if L["depth"] >= 64 and ratio is not None:
                targets.append(("%s %s (K = %d): gemmi8 best / best peer >= 1.0" %
                                (net, L["name"], L["depth"]), ratio, 1.0))
        w("")
        w("## %s: like for like, per layer (gemmi8 / peer)\n" % net)
        pairs = [p for p in PAIRS if any(gops(p[0], L) and gops(p[1], L) for L in nl)]
        w("| layer | " + " | ".join("%s / %s" % p for p in pairs) + " |")
        w("|---|" + "---:|" * len(pairs))
        for L in nl:
            cells = []
            for a, b in pairs:
                ga, gb = gops(a, L), gops(b, L)
                cells.append(fmt(ga / gb if ga and gb else None, "%.2f"))
            w("| %s | %s |" % (L["name"], " | ".join(cells)))
        w("")
        # network sums: time weighted by the layer counts
        w("## %s: whole network (every layer, times its count)\n" % net)
        w("| case | ms | GOPS | vs best peer |")
        w("|---|---:|---:|---:|")
        total_ops = sum(L["ops"] * L["count"] for L in nl)
        sums = {}
        for case in sorted(set(n.rsplit("/", 2)[0] for n in med if not n.startswith("peak/"))):
            ts = [med.get("%s/%s/%s" % (case, L["net"], L["name"])) for L in nl]
            if all(ts):
                sums[case] = sum(t * L["count"] for t, L in zip(ts, nl))
        best_peer = min([t for c, t in sums.items() if not c.startswith("gemmi8/")], default=None)
        for case, t in sorted(sums.items(), key=lambda x: x[1]):
            w("| %s | %.3f | %.0f | %s |" % (case, t * 1e3, total_ops / t / 1e9,
                                             fmt(best_peer / t if best_peer else None, "%.2f")))
        g_best = min([t for c, t in sums.items() if c in GEMMI8], default=None)
        if g_best and best_peer:
            targets.append(("%s whole network: gemmi8 best / best peer >= 1.15" % net,
                            best_peer / g_best, 1.15))
        w("")
        w("## %s: indirection buffer and im2col copy (bytes, gemmi8 qu8s8)\n" % net)
        w("indirection: the pointers (none for 1x1 stride-1 layers: the GEMM reads the input); "
          "other: the operator's other setup memory (the padded input copy of merged rows of taps); "
          "ratio: (indirection + other) / im2col.\n")
        w("| layer | indirection | other | im2col | ratio |")
        w("|---|---:|---:|---:|---:|")
        for L in nl:
            c = counters.get("gemmi8/qu8s8/%s/%s" % (net, L["name"]), {})
            ind, work, im = c.get("ind_bytes"), c.get("work_bytes"), c.get("im2col_bytes")
            total = (ind or 0) + (work or 0)
            w("| %s | %s | %s | %s | %s |" % (L["name"], fmt(ind), fmt(work), fmt(im),
                                              fmt(total / im if im else None, "%.3f")))
        w("")
    # ResNet-18's 3x3 stride-1 layers at the peak
    r3 = [L for L in layers if L["net"] == "resnet18" and L["k"] == 3 and L["s"] == 1]
    ts = [med.get("gemmi8/qu8s8/%s/%s" % (L["net"], L["name"])) for L in r3]
    if r3 and all(ts) and peak:
        g = sum(L["ops"] * L["count"] for L in r3) / sum(t * L["count"] for t, L in zip(ts, r3)) / 1e9
        targets.append(("resnet18 3x3 stride-1 layers, gemmi8 qu8s8: %% of the vpdpbusd peak >= 85 "
                        "(%.0f GOPS)" % g, g / peak * 100, 85.0))
    w("## Targets\n")
    w("| target | measured | met |")
    w("|---|---:|---|")
    for what, value, goal in targets:
        w("| %s | %.2f | %s |" % (what, value, "yes" if value >= goal else "**no**"))
    print("\n".join(out))


if __name__ == "__main__":
    main()
