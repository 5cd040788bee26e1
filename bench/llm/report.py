#!/usr/bin/env python3
"""Turns gemmi8-llm-bench's JSON into build/llm.md:

    python3 bench/llm/report.py build/llm.json [--markdown build/llm.md] [--headline]

Absolute numbers are the best of the rounds (the VM's speed moves between two levels
for tens of seconds at a time: the fastest slice is the machine's own speed). Ratios
are medians over the rounds of the ratio of two slices of the same round and cell,
measured a fraction of a second apart. A ratio "x / y" in time is y's time over x's:
above 1.00, x is faster.

Tables: one per thread count (every series' GOPS per layer and M, gemmi8's series
against the best peer); M = 1 (the weights' bytes per second of gemmi8's series
against the read loop over the same bytes, weights larger than the L2 marked); M >= 16
on one thread (percent of the vpdpbusd peak); the issue's targets, met or missed; the
implementations the peers picked. What a series is (gemmi8's or a peer, its weights'
type, its targets) comes from the JSON: a new series needs nothing here.
--headline prints the targets' summary only (make bench-llm and make bench end with it).

Python 3 standard library only.
"""

import argparse
import json
import statistics
import sys
from collections import defaultdict

# A round in which other processes took this share of the CPUs or more is loaded.
LOADED = 0.10


def fmt_gops(v):
    if v is None:
        return ""
    return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 1 else "%.2f" % v


def fmt_ratio(v):
    return "" if v is None else "%.2f" % v


def fmt_bytes(b):
    if b >= 1 << 20:
        return "%.1f MiB" % (b / (1 << 20))
    return "%.0f KiB" % (b / 1024)


def fmt_us(s):
    us = s * 1e6
    return "%.0f" % us if us >= 100 else "%.1f" % us


class Results:
    def __init__(self, doc):
        self.ctx = doc["context"]
        self.series = doc["series"]
        self.by_name = {s["name"]: s for s in self.series}
        self.layers = doc["layers"]
        self.failures = doc.get("failures", [])
        self.l2 = int(self.ctx.get("l2_cache_bytes", 0))
        self.peak_ops = float(self.ctx.get("peak_ops_per_call", 0))
        # Rounds in which other processes took at least LOADED of the CPUs are left
        # out of a layer's numbers when it has rounds below that (the VM is shared).
        load = defaultdict(dict)
        for layer, rnd, share in doc.get("round_others", []):
            load[layer][rnd] = share
        self.rounds_used = {}
        for layer, rounds in load.items():
            quiet = {r for r, share in rounds.items() if 0 <= share < LOADED}
            self.rounds_used[layer] = quiet if quiet else set(rounds)
        self.round_load = load
        # (layer, m, threads, series) -> {round: seconds}
        self.t = defaultdict(dict)
        for layer, m, threads, series, rnd, seconds, _calls in doc["samples"]:
            if layer in self.rounds_used and rnd not in self.rounds_used[layer]:
                continue
            self.t[(layer, m, threads, series)][rnd] = seconds
        self.ms = sorted({k[1] for k in self.t})
        self.threads = sorted({k[2] for k in self.t})
        self.gemmi8 = [s["name"] for s in self.series if s["role"] == "gemmi8"]
        self.peers = [s["name"] for s in self.series if s["role"] == "peer"]

    def best(self, layer, m, threads, series):
        v = self.t.get((layer, m, threads, series))
        return min(v.values()) if v else None

    def gops(self, layer, m, threads, series):
        t = self.best(layer, m, threads, series)
        if t is None:
            return None
        L = self.layers[layer]
        return 2.0 * m * L["n"] * L["k"] / t / 1e9

    def ratio(self, layer, m, threads, slow, fast):
        """Median over rounds of time(slow) / time(fast): how many times fast is faster."""
        a = self.t.get((layer, m, threads, slow), {})
        b = self.t.get((layer, m, threads, fast), {})
        rs = [a[r] / b[r] for r in a if r in b and b[r] > 0]
        return statistics.median(rs) if rs else None

    def best_peer(self, layer, m, threads):
        cands = [(self.best(layer, m, threads, p), p) for p in self.peers]
        cands = [c for c in cands if c[0] is not None]
        return min(cands)[1] if cands else None

    def read_series(self, layer, series):
        b = self.layers[layer]["weight_bytes"].get(series)
        if b is None:
            return None, None
        rounded = (int(b) + 63) // 64 * 64
        return "peak/read-bw/%d" % rounded, b

    def peak_gops(self, layer, m):
        t = self.best(layer, m, 1, "peak/vpdpbusd-zmm")
        return self.peak_ops / t / 1e9 if t and self.peak_ops else None

    def peak_fraction(self, layer, m, series):
        """Median over rounds of the series' GOPS / the peak loop's GOPS (one thread)."""
        a = self.t.get((layer, m, 1, series), {})
        p = self.t.get((layer, m, 1, "peak/vpdpbusd-zmm"), {})
        L = self.layers[layer]
        ops = 2.0 * m * L["n"] * L["k"]
        rs = [(ops / a[r]) / (self.peak_ops / p[r]) for r in a if r in p and self.peak_ops]
        return statistics.median(rs) if rs else None


def short(name):
    return name.split("/", 1)[1] if "/" in name else name


def shape_name(L):
    return "%d x %d" % (L["n"], L["k"])


def thread_table(R, threads, out):
    title = "one thread" if threads == 1 else "%d threads" % threads
    out.append("## GOPS, %s" % title)
    out.append("")
    out.append("2 x M x N x K / best time / 1e9 (N x K: the weights, output features x input "
               "features). `qd8 / peer`: the best peer's time over gemmi8/qd8's, median over "
               "the rounds (>= 1.00: gemmi8 faster; target 1.00, *missed* below); `peer` is the "
               "peer with the best time on that cell. gemmi8's columns first, then the peers'.")
    out.append("")
    cols = [s for s in R.gemmi8 + R.peers]
    head = ["N x K", "M", "qd8 us"] + [c for c in cols] + ["best peer", "qd8 / peer",
                                                         "qd8-linear / peer"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|---|---:|" + "---:|" * (1 + len(cols)) + "---|---:|---:|")
    for li, L in enumerate(R.layers):
        for m in R.ms:
            t = R.best(li, m, threads, "gemmi8/qd8")
            row = [shape_name(L), str(m), fmt_us(t) if t else ""]
            for c in cols:
                row.append(fmt_gops(R.gops(li, m, threads, c)))
            peer = R.best_peer(li, m, threads)
            row.append(peer or "")
            r = R.ratio(li, m, threads, peer, "gemmi8/qd8") if peer else None
            cell = fmt_ratio(r)
            if r is not None and r < 1.0:
                cell = "*%s missed*" % cell
            row.append(cell)
            row.append(fmt_ratio(R.ratio(li, m, threads, peer, "gemmi8/qd8-linear")
                                 if peer else None))
            out.append("| " + " | ".join(row) + " |")
    out.append("")


def bandwidth_table(R, out, summary):
    out.append("## M = 1: the weights' bytes per second against the read loop")
    out.append("")
    out.append("Packed weight bytes / best time, and the read loop (%s) over a 64-byte aligned "
               "buffer of the same bytes, in the same cell (on two threads, its halves on "
               "gemmi8's pool); `%%` is the median over the rounds of the series' bytes per "
               "second over the read loop's. Weights larger than the L2 (%s, %s; on two "
               "threads, than two L2s: each thread streams its half) are marked `> L2` (the "
               "bytes and the mark are gemmi8/qd8's; a series whose own weights fit is marked "
               "`(fits)`): there the target applies (int8 >= 90%%, 4-bit >= 85%%; *missed* "
               "below)."
               % (R.ctx.get("read_loop", "?"), fmt_bytes(R.l2), R.ctx.get("l2_cache_source", "?")))
    out.append("")
    bw = [s for s in R.gemmi8 if R.by_name[s]["bandwidth_target"] > 0]
    head = ["N x K", "threads", "bytes", "vs L2", "read loop GB/s"]
    for s in bw:
        head += ["%s GB/s" % short(s), "%s %%" % short(s)]
    out.append("| " + " | ".join(head) + " |")
    out.append("|---|---:|---:|---|---:|" + "---:|---:|" * len(bw))
    for threads in R.threads:
        for li, L in enumerate(R.layers):
            read, b0 = R.read_series(li, "gemmi8/qd8")
            if b0 is None:
                continue
            rt = R.best(li, 1, threads, read)
            if rt is None:
                continue
            # on t threads each streams its share through its own L2
            large = b0 > threads * R.l2 > 0
            row = [shape_name(L), str(threads), fmt_bytes(b0),
                   ("> L2" if threads == 1 else "> %d L2" % threads) if large else "fits",
                   "%.1f" % (b0 / rt / 1e9)]
            for s in bw:
                rs, b = R.read_series(li, s)
                t = R.best(li, 1, threads, s)
                if t is None or b is None:
                    row += ["", ""]
                    continue
                frac = R.ratio(li, 1, threads, rs, s)
                target = R.by_name[s]["bandwidth_target"]
                cell = "%.0f%%" % (100 * frac) if frac is not None else ""
                # the series' own bytes decide (4-bit weights are half of int8's)
                own_large = b > threads * R.l2 > 0
                if large and not own_large:
                    cell += " (fits)"
                if own_large and frac is not None:
                    met = frac >= target
                    cell += "" if met else " *missed*"
                    if threads == 1:
                        summary["bandwidth"][s].append((shape_name(L), frac, met))
                row += ["%.1f" % (b / t / 1e9), cell]
            out.append("| " + " | ".join(row) + " |")
    out.append("")
    out.append("Peers at M = 1 for comparison (their weights' bytes per second; oneDNN's "
               "reordered int8 weights, OpenBLAS's float ones):")
    out.append("")
    peers = [p for p in R.peers]
    out.append("| N x K | threads | " + " | ".join("%s GB/s" % p for p in peers) + " |")
    out.append("|---|---:|" + "---:|" * len(peers))
    for threads in R.threads:
        for li, L in enumerate(R.layers):
            row = [shape_name(L), str(threads)]
            for p in peers:
                t = R.best(li, 1, threads, p)
                b = L["weight_bytes"].get(p)
                row.append("%.1f" % (b / t / 1e9) if t and b else "")
            out.append("| " + " | ".join(row) + " |")
    out.append("")


def peak_table(R, out, summary):
    ms = [m for m in R.ms if m >= 16]
    if not ms or not R.peak_ops:
        out.append("## M >= 16: percent of the vpdpbusd peak")
        out.append("")
        out.append("Not measured (%s)." % R.ctx.get("peak_loop", "no M >= 16 or no peak loop"))
        out.append("")
        return
    out.append("## M >= 16, one thread: percent of the vpdpbusd peak")
    out.append("")
    out.append("The peak: the register-only loop of bench/cases-peak.c (%s), one slice in each "
               "cell; `%%` is the median over the rounds of the series' GOPS over the peak "
               "loop's in the same round. Target at K >= 768: int8 >= 90%%, 4-bit >= 80%%."
               % R.ctx.get("peak_loop", "?"))
    out.append("")
    ps = [s for s in R.gemmi8 if R.by_name[s]["peak_target"] > 0]
    head = ["N x K", "M", "peak GOPS"]
    for s in ps:
        head += ["%s GOPS" % short(s), "%s %%" % short(s)]
    out.append("| " + " | ".join(head) + " |")
    out.append("|---|---:|---:|" + "---:|---:|" * len(ps))
    for li, L in enumerate(R.layers):
        for m in ms:
            pk = R.peak_gops(li, m)
            row = [shape_name(L), str(m), fmt_gops(pk)]
            for s in ps:
                g = R.gops(li, m, 1, s)
                frac = R.peak_fraction(li, m, s)
                cell = "%.0f%%" % (100 * frac) if frac is not None else ""
                if frac is not None and L["k"] >= 768:
                    met = frac >= R.by_name[s]["peak_target"]
                    cell += "" if met else " *missed*"
                    summary["peak"][s].append(("%s M=%d" % (shape_name(L), m), frac, met))
                row += [fmt_gops(g), cell]
            out.append("| " + " | ".join(row) + " |")
    out.append("")


def targets(R, summary):
    """The issue's targets, one line each."""
    out = ["## Targets", ""]
    out.append("| target | series | cells | met | worst |")
    out.append("|---|---|---:|---:|---|")
    for s, rows in summary["bandwidth"].items():
        target = R.by_name[s]["bandwidth_target"]
        worst = min(rows, key=lambda r: r[1]) if rows else None
        out.append("| M = 1, weights > L2: >= %.0f%% of the read loop (one thread) | %s | %d | %d | %s |"
                   % (100 * target, s, len(rows), sum(r[2] for r in rows),
                      "%s: %.0f%%" % (worst[0], 100 * worst[1]) if worst else "-"))
    for s, rows in summary["peak"].items():
        target = R.by_name[s]["peak_target"]
        worst = min(rows, key=lambda r: r[1]) if rows else None
        out.append("| M >= 16, K >= 768: >= %.0f%% of the vpdpbusd peak (one thread) | %s | %d | %d | %s |"
                   % (100 * target, s, len(rows), sum(r[2] for r in rows),
                      "%s: %.0f%%" % (worst[0], 100 * worst[1]) if worst else "-"))
    for s in ["gemmi8/qd8", "gemmi8/qdu8", "gemmi8/qd8-linear", "gemmi8/qdu8-linear"]:
        if s not in R.by_name:
            continue
        for threads in R.threads:
            rows = []
            for li, L in enumerate(R.layers):
                for m in R.ms:
                    peer = R.best_peer(li, m, threads)
                    r = R.ratio(li, m, threads, peer, s) if peer else None
                    if r is not None:
                        rows.append(("%s M=%d (%s)" % (shape_name(L), m, peer), r, r >= 1.0))
            if not rows:
                continue
            worst = min(rows, key=lambda r: r[1])
            out.append("| >= 1.00x the best peer (time), %s | %s | %d | %d | %s |"
                       % ("one thread" if threads == 1 else "%d threads" % threads, s,
                          len(rows), sum(r[2] for r in rows), "%s: %.2f" % (worst[0], worst[1])))
    out.append("")
    out.append("The target of the issue is on gemmi8/qd8 (the dynamically quantized int8 path); "
               "the other gemmi8 series are shown against the same peers.")
    out.append("")
    return out


def implementations(R, out):
    out.append("## The peers' implementations")
    out.append("")
    seen = defaultdict(lambda: defaultdict(list))
    for li, L in enumerate(R.layers):
        for key, impl in L.get("labels", {}).items():
            series, m, threads = key.split("|")
            seen[series][impl].append("%s M=%s t=%s" % (shape_name(L), m, threads))
    if not seen:
        out.append("None reported.")
    for series in sorted(seen):
        for impl, where in seen[series].items():
            out.append("- %s: `%s` on %d cells (e.g. %s)" % (series, impl, len(where), where[0]))
    out.append("")


def report(doc, headline_only):
    R = Results(doc)
    summary = {"bandwidth": defaultdict(list), "peak": defaultdict(list)}
    body = []
    for threads in R.threads:
        thread_table(R, threads, body)
    bandwidth_table(R, body, summary)
    peak_table(R, body, summary)
    head = targets(R, summary)
    loaded = [shape_name(L) for li, L in enumerate(R.layers)
              if R.round_load.get(li) and all(v >= LOADED for v in R.round_load[li].values())]
    if loaded:
        head.append("**Other processes took %.0f%% or more of the CPUs in every round of %s**: "
                    "those numbers are not the machine's (two-thread ones least of all)."
                    % (100 * LOADED, ", ".join(loaded)))
        head.append("")
    elif not R.round_load and R.ctx.get("other_processes_cpu_share", 0) >= LOADED:
        head.append("**Other processes took %.0f%% of the CPUs during this run**: the numbers "
                    "are not the machine's." % (100 * R.ctx["other_processes_cpu_share"]))
        head.append("")
    if headline_only:
        return "\n".join(head)
    c = R.ctx
    out = ["# gemmi8 llm benchmark", ""]
    out.append("Transformer linear layers (N x K weights, M tokens): gemmi8's dynamically "
               "quantized GEMMs against OpenBLAS sgemm and oneDNN's int8 matmul with float "
               "output, all interleaved in one run (bench/llm/README.md).")
    out.append("")
    out.append("- date: %s; host: %s; CPU: %s, %s online" % (c.get("date"), c.get("host"),
                                                              c.get("cpu"), c.get("cpus_online")))
    out.append("- gemmi8 kernel set: %s; OpenBLAS: %s" % (c.get("gemmi8_isa"), c.get("openblas")))
    out.append("- oneDNN: %s" % c.get("onednn"))
    out.append("- L2: %s (%s); read loop: %s; peak loop: %s" % (
        fmt_bytes(R.l2), c.get("l2_cache_source"), c.get("read_loop"), c.get("peak_loop")))
    out.append("- layers: %s; M: %s; threads: %s; %s rounds of slices of %s s at least; "
               "the run: %s s, peak RSS %.2f GB" % (
                   c.get("shapes_file"), c.get("m"), c.get("threads"), c.get("rounds"),
                   c.get("slice_seconds"), c.get("run_seconds"),
                   float(c.get("peak_rss_bytes", 0)) / 1e9))
    others = c.get("other_processes_cpu_share")
    if others is not None and others >= 0:
        per = ", ".join("%.0f%%" % (100 * o) for o in c.get("other_processes_cpu_share_per_layer", []))
        out.append("- other processes took %.0f%% of the CPUs during the run (per layer: %s)"
                   % (100 * others, per))
    if R.round_load:
        parts = []
        for li, L in enumerate(R.layers):
            rounds = R.round_load.get(li, {})
            used = R.rounds_used.get(li, set())
            loaded = len(used) == len(rounds) and any(v >= LOADED for v in rounds.values())
            parts.append("%s: %d of %d%s" % (shape_name(L), len(used), len(rounds),
                                             " (all loaded)" if loaded else ""))
        out.append("- rounds used (those in which other processes took under %.0f%% of the "
                   "CPUs, when a layer has any): %s" % (100 * LOADED, "; ".join(parts)))
    if c.get("skipped", "none") != "none":
        out.append("- skipped: %s" % c.get("skipped"))
    out.append("")
    out.append("Series:")
    out.append("")
    for s in R.series:
        out.append("- `%s` (%s weights): %s" % (s["name"], s["weights"], s["description"]))
    out.append("")
    out.append("Work that differs: gemmi8's qd8 and qdu8 take a scale and a zero point per row; "
               "oneDNN's matmul takes one src scale for the tensor (common scales only), so its "
               "like-for-like series get the tensor quantized as one row, and the per-row "
               "parameters are gemmi8's extra work. oneDNN's scales and zero point are fixed "
               "when its primitive is created (the most favourable case: with run-time scales "
               "oneDNN 2.6 falls back to gemm:jit). OpenBLAS adds no bias. The quantization of "
               "the rows is timed only in gemmi8's -linear series.")
    out.append("")
    if R.failures:
        out.append("**Failures:**")
        out.append("")
        for f in R.failures:
            out.append("- %s" % f)
        out.append("")
    out += head
    out += body
    implementations(R, out)
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--markdown")
    ap.add_argument("--headline", action="store_true")
    args = ap.parse_args()
    with open(args.json) as f:
        doc = json.load(f)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(report(doc, False) + "\n")
    if args.headline:
        print(report(doc, True))
    elif not args.markdown:
        print(report(doc, False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
