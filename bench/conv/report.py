#!/usr/bin/env python3
"""Tables from gemmi8-conv-bench's JSON:
    python3 bench/conv/report.py conv.json layers.txt [--headline]

Per network: each layer's median GOPS per case, the like-for-like ratios (gemmi8
against the peer configuration doing the same work) and gemmi8's best against the
best peer in any configuration, for the dense layers and, apart, for the depthwise
ones (kernel "<k>dw" in layers.txt), whose third table sets each layer's time against
what bounds it: the multiplies at the vpdpbusd peak, the bytes it moves at the read
bandwidth measured in the run (L2 and DRAM); the network sums (time weighted by each
layer's count: every layer, the dense ones, the depthwise ones); percent of the
vpdpbusd peak; the indirection buffer against an im2col copy; the targets of the
convolution issue. The binary layers (kernel "<k>b") have a section of their own:
their times against gemmi8's int8 cases on the layer of the same geometry, and
against the vpopcntq peaks measured in the run. The headline, first: per network, the
whole network's time, gemmi8's best against the best peer and like for like; with
--headline only that is printed.
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
BINARY = ["gemmi8/bin-f32", "gemmi8/bin-bits", "gemmi8/bin-f32-zeropad"]
# the binary layers' targets: int8 / binary on every layer with at least this many
# input channels, and percent of the vpopcntq peak over those layers together
BIN_MIN_CIN, BIN_RATIO, BIN_PEAK_PCT = 128, 4.0, 70.0
SHOWN = ["gemmi8/qu8s8", "onednn/u8s8u8", "onednn/u8s8u8-fast", "gemmi8/qc8", "xnnpack/qc8",
         "onednn/s8s8s8", "onednn/s8s8s8-fast", "gemmi8/qu8", "xnnpack/qu8", "gemmi8/qs8",
         "xnnpack/qs8", "gemmi8/qu8-fixedpoint", "gemmi8/im2col-qu8s8"]


def read_layers(path):
    """The layers of a layers.txt; kernel "3" is a 3x3 convolution, "3dw" a 3x3
    depthwise one (groups = channels), "3b" a 3x3 binary one."""
    layers = []
    for line in open(path):
        line = line.split("#")[0].split()
        if len(line) != 10:
            continue
        net, name, count, kernel, s, p, ih, iw, cin, cout = line
        dw = kernel.endswith("dw")
        binary = kernel.endswith("b")
        k = int(kernel[:-2] if dw else kernel[:-1] if binary else kernel)
        s, p, ih, iw, cin, cout = map(int, (s, p, ih, iw, cin, cout))
        gin = 1 if dw else cin  # input channels of a group
        oh = (ih + 2 * p - k) // s + 1
        ow = (iw + 2 * p - k) // s + 1
        layers.append(dict(net=net, name=name, count=int(count), k=k, s=s, p=p, ih=ih, iw=iw,
                           cin=cin, cout=cout, oh=oh, ow=ow, dw=dw, binary=binary,
                           ops=2.0 * oh * ow * cout * k * k * gin, depth=k * k * gin,
                           read=ih * iw * cin + cout * k * k * gin, written=oh * ow * cout))
    return layers


def main():
    args = [a for a in sys.argv[1:] if a != "--headline"]
    data = json.load(open(args[0]))
    every_layer = read_layers(args[1])
    layers = [L for L in every_layer if not L["binary"]]
    binary_layers = [L for L in every_layer if L["binary"]]
    times, counters, errors, labels = {}, {}, {}, {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"] if "run_name" in b else b["name"]
        if b.get("error_occurred"):
            errors[name] = b.get("error_message", "error")
            continue
        unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
        times.setdefault(name, []).append(b["real_time"] * unit)
        for key in ("ind_bytes", "work_bytes", "im2col_bytes", "GOPS", "GBps", "bytes", "Gbitmacs"):
            if key in b:
                counters.setdefault(name, {})[key] = b[key]
        if b.get("label"):
            labels[name] = b["label"]
    med = {name: statistics.median(v) for name, v in times.items()}
    peak = counters.get("peak/vpdpbusd-zmm/all/peak", {}).get("GOPS")
    # the binary peaks, bit-MACs per second / 1e9
    popcnt_peak = counters.get("peak/vpopcntq-alone-zmm/all/peak", {}).get("Gbitmacs")
    triple_peak = counters.get("peak/xor-popcnt-add-zmm/all/peak", {}).get("Gbitmacs")
    bw = {}  # read bandwidth, bytes per second, and the buffer's size
    for level in ("l2", "dram"):
        name = "peak/read-bw/all/" + level
        t = med.get(name)
        size = counters.get(name, {}).get("bytes")
        if t and size:
            bw[level] = (size / t, size)
    ctx = data.get("context", {})
    out = []
    w = out.append
    w("# gemmi8 convolution benchmark\n")
    w("Median GOPS (2 x output pixels x output channels x taps x input channels of a group "
      "/ s / 1e9; a depthwise layer has one input channel a group), "
      "one thread, batch 1, 224 x 224 inputs, NHWC; all libraries interleaved in %s.\n"
      % ("one run" if "merged_files" not in ctx else
         "one run per layer (%s runs, merged by bench/merge.py)" % ctx["merged_files"]))
    w("- date: %s; host: %s; gemmi8 kernel set: %s; layers: %s" %
      (ctx.get("date", "?"), ctx.get("host_name", "?"), ctx.get("gemmi8_isa", "?"), ctx.get("layers", "?")))
    w("- vpdpbusd zmm peak (register-only loop): %s GOPS" % ("%.0f" % peak if peak else "not measured"))
    if binary_layers:
        w("- binary peaks (register-only loops, bit-MACs / s / 1e9): vpopcntq zmm alone %s; "
          "vpxorq + vpopcntq + vpaddq zmm %s" % (
              "%.0f" % popcnt_peak if popcnt_peak else "not measured",
              "%.0f" % triple_peak if triple_peak else "not measured"))
    if bw:
        w("- read bandwidth (a loop summing a 64-byte aligned buffer): " + "; ".join(
            "%s, %s buffer: %.1f GB/s" % (level.upper(), size_text(size), rate / 1e9)
            for level, (rate, size) in bw.items()))
    w("- pairs doing the same work (zero points, scales per tensor or per channel, "
      "signedness): " + "; ".join("%s vs %s" % p for p in PAIRS if "-fast" not in p[1]))
    w("- against oneDNN's fastest configuration (no zero points, one scale: less work "
      "than gemmi8's): " + "; ".join("%s vs %s" % p for p in PAIRS if "-fast" in p[1]))
    if errors:
        w("- failed or skipped: " + "; ".join("%s: %s" % (k, v) for k, v in sorted(errors.items())))
    w("")
    head_at = len(out)  # the headline goes here, once the sums are known

    def time(case, L):
        return med.get("%s/%s/%s" % (case, L["net"], L["name"]))

    def gops(case, L):
        t = time(case, L)
        return L["ops"] / t / 1e9 if t else None

    def fmt(x, spec="%.0f"):
        return spec % x if x is not None else "-"

    peers = sorted(set(n.rsplit("/", 2)[0] for n in med if not n.startswith(("gemmi8/", "peak/"))))

    def best(cases, L):
        """the fastest of the cases on layer L: (case, seconds), or (None, None)"""
        ts = [(time(c, L), c) for c in cases if time(c, L)]
        return (min(ts)[1], min(ts)[0]) if ts else (None, None)

    def like_for_like(title, nl):
        w("## %s\n" % title)
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

    def implementations(nl):
        """the implementations the peers picked for the layers nl (their labels)"""
        impls = {}
        for L in nl:
            for c in peers:
                label = labels.get("%s/%s/%s" % (c, L["net"], L["name"]))
                if label:
                    impls.setdefault(c, set()).add(label)
        if impls:
            w("\nThe peers' implementations (their labels): " + "; ".join(
                "%s: %s" % (c, ", ".join(sorted(v))) for c, v in sorted(impls.items())) + ".")

    def sums_of(nl):
        """per case, the time of the layers nl (weighted by their counts), if it ran all"""
        sums = {}
        for case in sorted(set(n.rsplit("/", 2)[0] for n in med if not n.startswith("peak/"))):
            ts = [time(case, L) for L in nl]
            if nl and all(ts):
                sums[case] = sum(t * L["count"] for t, L in zip(ts, nl))
        return sums

    targets = []
    for net in sorted(set(L["net"] for L in layers), key=lambda n: [L["net"] for L in layers].index(n)):
        nl = [L for L in layers if L["net"] == net]
        dense = [L for L in nl if not L["dw"]]
        dws = [L for L in nl if L["dw"]]
        if dense:
            w("## %s: per layer (median GOPS)\n" % net)
            cols = [c for c in SHOWN if any(gops(c, L) for L in dense)]
            w("| layer | x | kernel | in | out | K | " + " | ".join(cols) +
              " | gemmi8 best / best peer | % peak (qu8s8) |")
            w("|---|---:|---|---|---|---:|" + "---:|" * len(cols) + "---:|---:|")
            for L in dense:
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
            implementations(dense)
            w("")
            like_for_like("%s: like for like, per layer (gemmi8 / peer)" % net, dense)
        if dws:
            w("## %s: depthwise layers, per layer (median GOPS)\n" % net)
            w("Depthwise: groups = channels, one input and one output channel a group; "
              "in and out are H x W x channels, taps k x k.\n")
            cols = [c for c in SHOWN if any(gops(c, L) for L in dws)]
            w("| layer | x | kernel | in | out | taps | " + " | ".join(cols) + " | gemmi8 best / best peer |")
            w("|---|---:|---|---|---|---:|" + "---:|" * len(cols) + "---:|")
            for L in dws:
                g_best = max([g for g in (gops(c, L) for c in GEMMI8) if g], default=None)
                p_best = max([g for g in (gops(c, L) for c in peers) if g], default=None)
                w("| %s | %d | %dx%ddw/%d | %dx%dx%d | %dx%dx%d | %d | %s | %s |" % (
                    L["name"], L["count"], L["k"], L["k"], L["s"], L["ih"], L["iw"], L["cin"], L["oh"],
                    L["ow"], L["cout"], L["depth"], " | ".join(fmt(gops(c, L), "%.1f") for c in cols),
                    fmt(g_best / p_best if g_best and p_best else None, "%.2f")))
            implementations(dws)
            w("")
            like_for_like("%s: depthwise layers, like for like (gemmi8 / peer)" % net, dws)
            w("## %s: depthwise layers, what bounds them\n" % net)
            w("reads: the input and the k x k x C filter, once; writes: the output. Floors: the "
              "operations at the vpdpbusd peak (ops / peak), the bytes read and written at the "
              "measured read bandwidth of the L2 cache (bytes / L2) and of DRAM (bytes / DRAM); "
              "bound: the larger of ops / peak and bytes / L2 (each layer runs in a loop, its "
              "bytes in the L2 cache). Times in microseconds; best: the fastest gemmi8 case "
              "(of %s) and the fastest peer case, each with its percent of the vpdpbusd peak.\n"
              % ", ".join(c.split("/")[1] for c in GEMMI8))
            w("| layer | x | reads (B) | writes (B) | ops / peak | bytes / L2 | bytes / DRAM | bound | "
              "gemmi8 best | % peak | best peer | % peak | best peer / floor |")
            w("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|")
            for L in dws:
                moved = L["read"] + L["written"]
                t_ops = L["ops"] / (peak * 1e9) if peak else None
                t_l2 = moved / bw["l2"][0] if "l2" in bw else None
                t_dram = moved / bw["dram"][0] if "dram" in bw else None
                bound = None
                if t_ops and t_l2:
                    bound = "bytes" if t_l2 > t_ops else "multiplies"
                g_case, g_t = best(GEMMI8, L)
                p_case, p_t = best(peers, L)

                def pct(t):
                    return fmt(L["ops"] / t / 1e9 / peak * 100 if t and peak else None, "%.1f%%")

                floor = max(t_ops, t_l2) if t_ops and t_l2 else None
                us = lambda t: fmt(t * 1e6 if t else None, "%.1f")
                w("| %s | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    L["name"], L["count"], L["read"], L["written"], us(t_ops), us(t_l2), us(t_dram),
                    bound or "-", us(g_t), pct(g_t), us(p_t), pct(p_t),
                    fmt(p_t / floor if p_t and floor else None, "%.1f")))
            w("")
        # network sums: time weighted by the layer counts
        total_ops = sum(L["ops"] * L["count"] for L in nl)
        sums = sums_of(nl)
        best_peer = min([t for c, t in sums.items() if not c.startswith("gemmi8/")], default=None)
        if dense and dws:
            parts = [("dense", sums_of(dense)), ("depthwise", sums_of(dws))]
            w("## %s: whole network (every layer times its count), and its dense and depthwise "
              "layers apart\n" % net)
            w("| case | ms | GOPS | vs best peer | dense ms | vs best peer | depthwise ms | vs best peer |")
            w("|---|---:|---:|---:|---:|---:|---:|---:|")
            part_best = [min([t for c, t in ps.items() if not c.startswith("gemmi8/")], default=None)
                         for _, ps in parts]
            cases = set(sums) | set(parts[0][1]) | set(parts[1][1])
            order = sorted(cases, key=lambda c: (c not in sums, sums.get(c) or parts[0][1].get(c) or 0))
            for case in order:
                t = sums.get(case)
                cells = ["%.3f" % (t * 1e3) if t else "-", fmt(total_ops / t / 1e9 if t else None),
                         fmt(best_peer / t if best_peer and t else None, "%.2f")]
                for (_, ps), pb in zip(parts, part_best):
                    pt = ps.get(case)
                    cells += ["%.3f" % (pt * 1e3) if pt else "-", fmt(pb / pt if pb and pt else None, "%.2f")]
                w("| %s | %s |" % (case, " | ".join(cells)))
        else:
            if dws:
                w("## %s: the depthwise layers (each times its count; the network's only layers "
                  "listed)\n" % net)
            else:
                w("## %s: whole network (every layer, times its count)\n" % net)
            w("| case | ms | GOPS | vs best peer |")
            w("|---|---:|---:|---:|")
            for case, t in sorted(sums.items(), key=lambda x: x[1]):
                w("| %s | %.3f | %.0f | %s |" % (case, t * 1e3, total_ops / t / 1e9,
                                                 fmt(best_peer / t if best_peer else None, "%.2f")))
        g_best = min([t for c, t in sums.items() if c in GEMMI8], default=None)
        if dense and g_best and best_peer:
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
    r3 = [L for L in layers if L["net"] == "resnet18" and L["k"] == 3 and L["s"] == 1 and not L["dw"]]
    ts = [time("gemmi8/qu8s8", L) for L in r3]
    if r3 and all(ts) and peak:
        g = sum(L["ops"] * L["count"] for L in r3) / sum(t * L["count"] for t, L in zip(ts, r3)) / 1e9
        targets.append(("resnet18 3x3 stride-1 layers, gemmi8 qu8s8: %% of the vpdpbusd peak >= 85 "
                        "(%.0f GOPS)" % g, g / peak * 100, 85.0))
    if binary_layers:
        binary_section(w, binary_layers, layers, time, best, fmt, peak, popcnt_peak, triple_peak)
    w("## Targets\n")
    w("| target | measured | met |")
    w("|---|---:|---|")
    for what, value, goal in targets:
        w("| %s | %.2f | %s |" % (what, value, "yes" if value >= goal else "**no**"))
    head = headline(layers, binary_layers, sums_of, time, best)
    out[head_at:head_at] = head
    print("\n".join(head if "--headline" in sys.argv[1:] else out))


def headline(layers, binary_layers, sums_of, time, best):
    """Per network, the whole network's time (each layer times its count): gemmi8's
    fastest case against the fastest peer case, and each like-for-like pair; the binary
    network against gemmi8's int8 cases on the layers of the same geometry."""
    out = ["## Headline: whole networks, one thread\n",
           "Milliseconds: each layer's median time times its count, summed over the network's "
           "layers in layers.txt. gemmi8 best: the fastest of %s; best peer: the fastest peer "
           "case; like for like: peer / gemmi8 for the pairs doing the same work (> 1: gemmi8 "
           "is faster).\n" % ", ".join(c.split("/")[1] for c in GEMMI8),
           "| network | layers | gemmi8 best | ms | best peer | ms | best peer / gemmi8 best "
           "| like for like |",
           "|---|---:|---|---:|---|---:|---:|---|"]
    nets = []
    for L in layers:
        if L["net"] not in nets:
            nets.append(L["net"])
    for net in nets:
        nl = [L for L in layers if L["net"] == net]
        sums = sums_of(nl)
        g = min(((t, c) for c, t in sums.items() if c in GEMMI8), default=None)
        p = min(((t, c) for c, t in sums.items() if not c.startswith("gemmi8/")), default=None)
        like = ["%s vs %s %.2f" % (a.split("/")[1], b, sums[b] / sums[a])
                for a, b in PAIRS if "-fast" not in b and a in sums and b in sums]
        out.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
            net, len(nl), g[1].split("/")[1] if g else "-", "%.3f" % (g[0] * 1e3) if g else "-",
            p[1] if p else "-", "%.3f" % (p[0] * 1e3) if p else "-",
            "%.2f" % (p[0] / g[0]) if g and p else "-", "; ".join(like) or "-"))
    for net in sorted(set(L["net"] for L in binary_layers)):
        bl = [L for L in binary_layers if L["net"] == net]
        key = lambda M: (M["k"], M["s"], M["p"], M["ih"], M["iw"], M["cin"], M["cout"])
        t_bin = [time("gemmi8/bin-f32", L) for L in bl]
        t_int8 = []
        for L in bl:
            twin = [M for M in layers if not M["dw"] and key(M) == key(L)]
            t_int8.append(best(GEMMI8, twin[0])[1] if twin else None)
        if all(t_bin):
            tb = sum(t * L["count"] for t, L in zip(t_bin, bl))
            ti = sum(t * L["count"] for t, L in zip(t_int8, bl)) if all(t_int8) else None
            out.append("| %s | %d | bin-f32 | %.3f | (gemmi8 best int8, same layers) | %s | %s | - |"
                       % (net, len(bl), tb * 1e3, "%.3f" % (ti * 1e3) if ti else "-",
                          "%.2f" % (ti / tb) if ti else "-"))
    out.append("")
    return out


def binary_section(w, bl, layers, time, best, fmt, peak, popcnt_peak, triple_peak):
    """The binary layers against gemmi8's int8 cases on the layer of the same geometry
    and against the binary peaks; the sums over the layers of BIN_MIN_CIN input channels
    or more (each layer times its count) and the binary targets."""
    def twin(L):
        """the int8 layer of L's geometry, preferring one of L's name"""
        key = lambda M: (M["k"], M["s"], M["p"], M["ih"], M["iw"], M["cin"], M["cout"])
        same = [M for M in layers if not M["dw"] and key(M) == key(L)]
        same.sort(key=lambda M: M["name"] != L["name"])
        return same[0] if same else None

    def ms(t):
        return fmt(t * 1e3 if t else None, "%.3f")

    def pct(bitmacs, t, rate):
        return bitmacs / t / 1e9 / rate * 100 if t and rate else None

    w("## Binary convolution\n")
    w("gemmi8_bin_convolution_create, batch 1, one thread, the input bit-packed "
      "(GEMMI8_BIN_WORDS(channels) words a pixel). bin f32: float output acc x multiplier "
      "+ bias (a folded batch norm), one padding (LCE's default); bin bits: the same "
      "accumulators as packed bits for the next binary layer; zero pad: bin f32 with zero "
      "padding. best int8: the fastest of gemmi8's fp32-mode int8 cases (%s) on the "
      "layer of the same geometry (%s), in the same run. bit-MACs: output pixels x "
      "output channels x 9 x input channels; %% of a peak: bin f32's bit-MACs per second "
      "against the register-only loop of vpopcntq zmm alone (%s G bit-MACs/s) and of "
      "vpxorq + vpopcntq + vpaddq zmm (%s G bit-MACs/s), 512 bit-MACs an instruction or "
      "triple. Times: medians, milliseconds.\n" % (
          ", ".join(c.split("/")[1] for c in GEMMI8),
          ", ".join(sorted(set(M["net"] for M in map(twin, bl) if M))) or "none",
          fmt(popcnt_peak), fmt(triple_peak)))
    w("| layer | x | stride | in | out | bit-MACs (M) | bin f32 | bin bits | zero pad | "
      "best int8 | int8 type | int8 / bin f32 | % vpopcntq peak | % xor+popcnt+add peak |")
    w("|---|---:|---:|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    big = []  # (layer, bin f32 s, best int8 s) of the layers with >= BIN_MIN_CIN inputs
    targets = []
    for L in bl:
        bitmacs = L["ops"] / 2
        t_bin = time("gemmi8/bin-f32", L)
        M = twin(L)
        i_case, i_t = best(GEMMI8, M) if M else (None, None)
        ratio = i_t / t_bin if i_t and t_bin else None
        w("| %s | %d | %d | %dx%dx%d | %dx%dx%d | %.1f | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            L["name"], L["count"], L["s"], L["ih"], L["iw"], L["cin"], L["oh"], L["ow"], L["cout"],
            bitmacs / 1e6, ms(t_bin), ms(time("gemmi8/bin-bits", L)),
            ms(time("gemmi8/bin-f32-zeropad", L)), ms(i_t), i_case.split("/")[1] if i_case else "-",
            fmt(ratio, "%.2f"), fmt(pct(bitmacs, t_bin, popcnt_peak), "%.1f%%"),
            fmt(pct(bitmacs, t_bin, triple_peak), "%.1f%%")))
        if L["cin"] >= BIN_MIN_CIN:
            big.append((L, t_bin, i_t))
            if ratio is not None:
                targets.append(("%s %s (%d input channels): int8 / bin f32 >= %g" %
                                (L["net"], L["name"], L["cin"], BIN_RATIO), ratio, BIN_RATIO))
    w("")
    if big and all(t for _, t, _ in big):
        w("The layers with %d or more input channels, each times its count:\n" % BIN_MIN_CIN)
        bitmacs = sum(L["ops"] / 2 * L["count"] for L, _, _ in big)
        t_bin = sum(t * L["count"] for L, t, _ in big)
        i_t = sum(t * L["count"] for L, _, t in big) if all(t for _, _, t in big) else None
        p_pop = pct(bitmacs, t_bin, popcnt_peak)
        w("| layers | bit-MACs (M) | bin f32 ms | best int8 ms | int8 / bin f32 | G bit-MACs/s | "
          "% vpopcntq peak | % xor+popcnt+add peak |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|")
        w("| %s | %.1f | %s | %s | %s | %.0f | %s | %s |" % (
            ", ".join(L["name"] for L, _, _ in big), bitmacs / 1e6, ms(t_bin), ms(i_t),
            fmt(i_t / t_bin if i_t else None, "%.2f"), bitmacs / t_bin / 1e9, fmt(p_pop, "%.1f%%"),
            fmt(pct(bitmacs, t_bin, triple_peak), "%.1f%%")))
        w("")
        if p_pop is not None:
            targets.append(("the layers with %d or more input channels together: %% of the "
                            "vpopcntq peak >= %g" % (BIN_MIN_CIN, BIN_PEAK_PCT), p_pop, BIN_PEAK_PCT))
    if popcnt_peak and triple_peak:
        w("Ceilings from the peaks: a kernel doing vpxorq + vpopcntq + vpaddq per 512 bits "
          "reaches at most %.1f%% of the vpopcntq peak (the two loops' ratio)%s.\n" % (
              triple_peak / popcnt_peak * 100,
              "; at that peak, against int8 at the vpdpbusd peak (%.0f G MACs/s), int8 / binary "
              "would be %.2f (%.2f against the vpopcntq peak)" % (
                  peak / 2, triple_peak / (peak / 2), popcnt_peak / (peak / 2)) if peak else ""))
    w("Binary targets:\n")
    w("| target | measured | met |")
    w("|---|---:|---|")
    for what, value, goal in targets:
        w("| %s | %.2f | %s |" % (what, value, "yes" if value >= goal else "**no**"))
    if not targets:
        w("| (no layer with %d or more input channels measured) | - | - |" % BIN_MIN_CIN)
    w("")


def size_text(size):
    """512 KiB, 256 MiB"""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return "%g %s" % (size / (1 << shift), unit)
    return "%d B" % size


if __name__ == "__main__":
    main()
