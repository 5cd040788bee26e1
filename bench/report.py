#!/usr/bin/env python3
"""Turns gemmi8-bench's Google Benchmark JSON into markdown tables and charts.

    python3 bench/report.py build/bench.json [--markdown build/bench.md]
        [--data build/bench.dat] [--chart build/bench.png]
        [--bin-data build/bench-bin.dat] [--bin-chart build/bench-bin.png] [--headline]

Every number is the median GOPS over a benchmark's repetitions (all libraries
interleaved in one run, or in one run per shape from make bench). Shapes are
Row x Col x Depth = N (output channels) x M (pixels) x K (depth; bits for binary
GEMM). First the headline: per shape, gemmi8 qu8 and qs8 against the best
requantized peer, like for like against oneDNN, against OpenBLAS sgemm and the
peak; per fully-connected layer at the smallest M, gemmi8 against the fastest peer
of its type (--headline prints only that). Then the tables:

  1. int8 GOPS: gemmi8 (best kernel set) and every peer variant, OpenBLAS sgemm.
  2. int8 ratios: gemmi8 / best comparable peer, / OpenBLAS sgemm, % of the
     vpdpbusd zmm peak. Comparable: gemmi8's requantized qu8 and qs8 against the
     peers' requantized 8-bit variants (REQUANT_PEERS, uint8 or int8 alike),
     gemmi8's int32 outputs against the peers' int32 variants (S32_PEERS).
  3. gemmi8 per kernel set.
  4. The AVX2 level against gemmlowp's AVX2 kernel and the vpmaddwd ymm peak.
  5. Binary GEMM per kernel set, % of the matching popcount peak loop, ratio to
     gemmi8's best int8 on the same shape.
  6. The peak loops.
  7. Targets of issues 3 and 4 (only for the ten shapes of bench/shapes.txt).
  8. Every series, one row each.
  9. Batch 1 and small M: the fully-connected shapes (bench/shapes-fc.txt), per
     type (qu8, qs8) a row per layer (N x K) with, for each M, gemmi8 on its best
     kernel set, the fastest peer of that type and their ratio; time(M=1) /
     time(M=main tile height) per kernel set; and, for weights larger than the L2
     cache, the packed weights' bytes per second at M=1 against a plain read loop
     over a buffer of the same size (peak/read-bw). Then every series on them.
Rows end with the geometric mean over the shapes.

--data / --chart: grouped bars per shape (bench/chart.gp): gemmi8 qu8 and qs8
(best kernel set), the best requantized variant of each peer, OpenBLAS sgemm, and
the vpdpbusd peak as a line. --bin-data / --bin-chart: binary GEMM per kernel set
with gemmi8's best int8 and the popcount peaks. Charts need gnuplot.

Python 3 standard library only.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

# Series whose library is listed here are measurements of a machine limit (a
# register-only loop), not GEMMs: they are collected in Results.peaks.
PEAK_LIBRARIES = ("peak",)

# Peer variants that produce requantized 8-bit outputs, and int32 outputs.
REQUANT_PEERS = [
    ("gemmlowp", "u8u8"),
    ("onednn", "matmul-u8s8u8"),
    ("onednn", "matmul-s8s8s8"),
    ("xnnpack", "fc-qu8"),
    ("xnnpack", "fc-qs8"),
]
S32_PEERS = [
    ("gemmlowp", "u8s32"),
    ("onednn", "gemm-u8s8s32"),
    ("onednn", "matmul-u8s8s32"),
]
SGEMM = ("openblas", "sgemm")
# oneDNN's fastest configuration (one output scale, no zero points: they are folded
# into the bias), shown beside the like-for-like peers, never among them.
FAST_PEERS = [
    ("onednn", "matmul-u8s8u8-fast"),
    ("onednn", "matmul-s8s8s8-fast"),
]

# Batch 1 and small M: gemmi8 series per type, and the peers of the same input and
# output types (like for like first, then the peer's fastest configuration) with
# their short names in the tables.
FC_TYPES = [
    ("qu8", [("onednn", "matmul-u8s8u8", "dnnl"), ("onednn", "matmul-u8s8u8-fast", "dnnl-fast"),
             ("xnnpack", "fc-qu8", "xnn")]),
    ("qs8", [("onednn", "matmul-s8s8s8", "dnnl"), ("onednn", "matmul-s8s8s8-fast", "dnnl-fast"),
             ("xnnpack", "fc-qs8", "xnn")]),
]
# Like for like on the fully-connected shapes: the gemmi8 series that does the work
# of each peer configuration (fp32 requantization, zero points; per-channel scales
# as oneDNN's, where XNNPACK's are per tensor) and the short names of those peers
# (oneDNN's fastest configuration, without zero points, has no gemmi8 counterpart).
FC_LIKE = {"qu8": ("qu8fp32", ["dnnl", "xnn"]), "qs8": ("qs8fp32", ["dnnl", "xnn"])}
# The main tile height (MR) of each kernel set's int8 GEMM.
MAIN_MR = {"generic": 4, "avx2": 6, "avx512vnni": 7}
# gemmi8's kernel-set levels, lowest first (src/init.c).
ISA_ORDER = ["generic", "avx2", "avx512bw", "avx512vnni", "avx512vpopcnt", "neon", "neondot",
             "i8mm"]
READ_BW = ("peak", "read-bw")

GEMMI8_INT8 = ("qu8", "qs8", "qu8fp32", "qs8fp32", "qu8s32", "qs8s32")
# Binary kernel set -> the peak loop that bounds it.
BIN_PEAK = {
    "generic": "popcnt-r64",
    "avx2": "popcnt-lut-ymm",
    "avx512bw": "popcnt-lut-zmm",
    "avx512vpopcnt": "vpopcntq-zmm",
}
INT8_PEAK = "vpdpbusd-zmm"
AVX2_PEAK = "vpmaddwd-ymm"

# The ten shapes of the GEMMi8 paper's appendix, in bench/shapes.txt's order: the
# targets below number them from 1.
TEN_SHAPES = [
    "500x500x500", "2000x2000x2000", "64x3136x64", "128x784x64", "256x196x2304",
    "512x49x2304", "512x49x4608", "32x12544x27", "1024x49x1024", "128x3136x128",
]


class Results:
    """Median GOPS per (series, shape), from one benchmark JSON file."""

    def __init__(self, doc):
        self.context = doc.get("context", {})
        self.series = []  # (library, variant), in registration order
        self.shapes = []  # "RowxColxDepth", in registration order
        self.gops = {}  # (series, shape) -> median GOPS
        self.reps = {}  # (series, shape) -> repetitions found
        self.errors = {}  # (library, variant, shape) -> message
        self.labels = {}  # (series, shape) -> benchmark label (implementation)
        self.peaks = {}  # variant -> median GOPS of a peak benchmark
        self.gbps = {}  # (series, shape) -> median GBps (weight bytes per second)
        self.weight_bytes = {}  # (series, shape) -> weight bytes one call reads
        # The fully-connected shapes (bench/shapes-fc.txt), in their file's order; they
        # are not among self.shapes, the main ones, unless that file lists them too.
        fc = self.context.get("fc_shapes", "none")
        self.fc_shapes = [] if fc in ("", "none") else fc.split(",")
        main = self.context.get("shapes")  # absent in older files: all the others
        main = None if main is None else [] if main in ("", "none") else main.split(",")

        samples = {}  # key -> list of GOPS, one per repetition
        medians = {}  # key -> median aggregate (used if no repetition is kept)
        bandwidth = {}  # key -> list of GBps, one per repetition
        order = {}  # key -> family index (registration order)
        for run in doc.get("benchmarks", []):
            key = split_name(run.get("run_name") or run.get("name", ""))
            if key is None:
                continue
            order.setdefault(key, run.get("family_index", len(order)))
            if run.get("error_occurred"):
                self.errors[key] = run.get("error_message", "error")
                continue
            if run.get("label"):
                self.labels[((key[0], key[1]), key[2])] = run["label"]
            series_shape = ((key[0], key[1]), key[2])
            if run.get("run_type", "iteration") == "iteration":
                if run.get("weight_bytes") is not None:
                    self.weight_bytes[series_shape] = float(run["weight_bytes"])
                if run.get("GBps") is not None:
                    bandwidth.setdefault(series_shape, []).append(float(run["GBps"]))
            value = run.get("GOPS")
            if value is None:
                continue
            if run.get("run_type", "iteration") == "iteration":
                samples.setdefault(key, []).append(float(value))
            elif run.get("aggregate_name") == "median":
                medians[key] = float(value)

        for key in sorted(order, key=lambda k: order[k]):
            library, variant, shape = key
            if key in samples:
                value, count = statistics.median(samples[key]), len(samples[key])
            elif key in medians:
                value, count = medians[key], None
            elif key in self.errors:
                value, count = None, 0
            else:
                continue
            if library in PEAK_LIBRARIES:
                if value is not None:
                    self.peaks[variant] = value
                continue
            if (library, variant) not in self.series:
                self.series.append((library, variant))
            in_main = shape in main if main is not None else shape not in self.fc_shapes
            if in_main and shape not in self.shapes:
                self.shapes.append(shape)
            if value is not None:
                self.gops[((library, variant), shape)] = value
                self.reps[((library, variant), shape)] = count
        for key, values in bandwidth.items():
            self.gbps[key] = statistics.median(values)
        # Only the fully-connected shapes that have a result.
        found = {shape for (_, shape) in self.gops}
        self.fc_shapes = [s for s in self.fc_shapes if s in found]

    def row(self, shape):
        """{series: median GOPS} for one shape (series without a result left out)."""
        return {s: self.gops[(s, shape)] for s in self.series if (s, shape) in self.gops}

    def isas(self, base):
        """gemmi8 kernel sets that have a series base-<isa>, in registration order."""
        return [v[len(base) + 1:] for (lib, v) in self.series
                if lib == "gemmi8" and v.startswith(base + "-")]


def split_name(name):
    """'gemmi8/qu8-avx2/500x500x500[/min_time:0.050][/real_time]' -> ('gemmi8', 'qu8-avx2',
    '500x500x500'): Google Benchmark appends min_time to the fully-connected shapes."""
    parts = [p for p in name.split("/")
             if p not in ("real_time", "manual_time") and not p.startswith("min_time:")]
    if len(parts) != 3:
        return None
    return tuple(parts)


# ---- selectors: row {(library, variant): GOPS} -> (GOPS, label) or None ----------


def exact(library, variant, label=None):
    def select(row):
        value = row.get((library, variant))
        return None if value is None else (value, label if label is not None else variant)

    return select


def best(library, base):
    """Best of library's variants named base or base-<isa> (e.g. qu8-avx512vnni)."""

    def select(row):
        found = [
            (v, variant[len(base) + 1:] if variant != base else variant)
            for (lib, variant), v in row.items()
            if lib == library and (variant == base or variant.startswith(base + "-"))
        ]
        return max(found) if found else None

    return select


def best_of(series):
    """Best of the listed (library, variant) series, labelled library/variant."""

    def select(row):
        found = [(row[s], "%s/%s" % s) for s in series if s in row]
        return max(found) if found else None

    return select


def best_library(library, variants):
    """Best of one library's listed variants, labelled with the variant."""
    return best_of([(library, v) for v in variants])


def best_gemmi8_int8(row):
    found = []
    for base in GEMMI8_INT8:
        b = best("gemmi8", base)(row)
        if b is not None:
            found.append((b[0], "%s-%s" % (base, b[1])))
    return max(found) if found else None


def constant(value, label):
    def select(row):
        return None if value is None else (value, label)

    return select


# ---- columns ----------------------------------------------------------------------


class Gops:
    """A GOPS column (with the label of the series chosen, if asked)."""

    def __init__(self, header, select, show_label=False):
        self.header = header
        self.select = select
        self.show_label = show_label

    def value(self, row):
        v = self.select(row)
        return (None, None) if v is None else v

    def cell(self, row):
        value, label = self.value(row)
        if value is None:
            return "-"
        return "%s (%s)" % (fmt_gops(value), label) if self.show_label else fmt_gops(value)

    def mean(self, rows):
        return fmt_gops(geomean([self.value(r)[0] for r in rows]))


class Ratio:
    """numerator / denominator, labelled with the denominator's choice if asked."""

    def __init__(self, header, numerator, denominator, show_label=True, percent=False):
        self.header = header
        self.numerator = numerator
        self.denominator = denominator
        self.show_label = show_label
        self.percent = percent

    def value(self, row):
        num, den = self.numerator(row), self.denominator(row)
        if num is None or den is None or den[0] <= 0:
            return None, None
        return num[0] / den[0], den[1]

    def fmt(self, ratio):
        return "%.0f%%" % (100 * ratio) if self.percent else "%.2f" % ratio

    def cell(self, row):
        ratio, label = self.value(row)
        if ratio is None:
            return "-"
        if self.show_label and label:
            return "%s (%s)" % (self.fmt(ratio), label)
        return self.fmt(ratio)

    def mean(self, rows):
        mean = geomean([self.value(r)[0] for r in rows])
        return "-" if mean is None else self.fmt(mean)


# ---- output -----------------------------------------------------------------------


def fmt_gops(value):
    if value is None:
        return "-"
    if value >= 100:
        return "%.0f" % value
    return "%.1f" % value if value >= 10 else "%.2f" % value


def shape_label(shape):
    return shape.replace("x", " x ")


def geomean(values):
    values = [v for v in values if v is not None and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def table(results, columns, title=None, note=None):
    """Shapes as rows, the given columns, a geometric-mean row."""
    lines = []
    if title:
        lines += ["## " + title, ""]
    if note:
        lines += [note, ""]
    headers = ["#", "Row x Col x Depth"] + [c.header for c in columns]
    lines.append("| " + " | ".join(headers) + " |")
    lines.append("|" + "|".join(["---:", "---"] + ["---:"] * len(columns)) + "|")
    rows = []
    for i, shape in enumerate(results.shapes, 1):
        row = results.row(shape)
        rows.append(row)
        cells = [str(i), shape_label(shape)] + [c.cell(row) for c in columns]
        lines.append("| " + " | ".join(cells) + " |")
    cells = ["", "geometric mean"] + [c.mean(rows) for c in columns]
    lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def present(results, series):
    return [s for s in series if s in results.series]


def int8_tables(results):
    lines = []
    peak = results.peaks.get(INT8_PEAK)
    cols = [
        Gops("gemmi8 qu8", best("gemmi8", "qu8")),
        Gops("gemmi8 qs8", best("gemmi8", "qs8")),
        Gops("gemmi8 qu8fp32", best("gemmi8", "qu8fp32")),
        Gops("gemmi8 qs8fp32", best("gemmi8", "qs8fp32")),
        Gops("gemmi8 qu8s32", best("gemmi8", "qu8s32")),
        Gops("gemmi8 qs8s32", best("gemmi8", "qs8s32")),
    ]
    for s in present(results, REQUANT_PEERS + FAST_PEERS + S32_PEERS + [SGEMM]):
        cols.append(Gops("%s %s" % s, exact(*s)))
    lines += table(
        results, cols, "int8 GEMM: median GOPS",
        "gemmi8 columns: its best kernel set on each shape (table 3 has each one). "
        "Requantized 8-bit output: gemmi8 qu8 / qs8 (per-channel fixed-point, TFLite's "
        "rounding), gemmi8 qu8fp32 / qs8fp32 (per-channel fp32 scales, round half to even: "
        "the rounding of oneDNN and XNNPACK), gemmlowp "
        "u8u8 (per-tensor fixed-point), oneDNN matmul-u8s8u8 / matmul-s8s8s8 (per-channel "
        "output scales), XNNPACK fc-qu8 / fc-qs8 (per-tensor fp32); oneDNN's fastest "
        "configuration, matmul-u8s8u8-fast / matmul-s8s8s8-fast (one output scale, zero "
        "points folded into the bias; not counted as like for like). int32 output: gemmi8 "
        "qu8s32 / qs8s32, gemmlowp u8s32, oneDNN gemm-u8s8s32 (packs B on every call) and "
        "matmul-u8s8s32. OpenBLAS sgemm is fp32 (flops).")
    requant = best_of(present(results, REQUANT_PEERS))
    fast = best_of(present(results, FAST_PEERS))
    s32 = best_of(present(results, S32_PEERS))
    peak_sel = constant(peak, INT8_PEAK)
    fast_cols = []
    if present(results, FAST_PEERS):
        fast_cols = [
            Ratio("qu8 / oneDNN fastest config", best("gemmi8", "qu8"), fast),
            Ratio("qs8 / oneDNN fastest config", best("gemmi8", "qs8"), fast),
        ]
    cols = [
        Ratio("qu8 / best requant peer", best("gemmi8", "qu8"), requant),
        Ratio("qs8 / best requant peer", best("gemmi8", "qs8"), requant),
        Ratio("qu8fp32 / best requant peer", best("gemmi8", "qu8fp32"), requant),
        Ratio("qs8fp32 / best requant peer", best("gemmi8", "qs8fp32"), requant),
        Ratio("qu8s32 / best int32 peer", best("gemmi8", "qu8s32"), s32),
        Ratio("qs8s32 / best int32 peer", best("gemmi8", "qs8s32"), s32),
    ] + fast_cols + [
        Ratio("qu8 / sgemm", best("gemmi8", "qu8"), exact(*SGEMM), show_label=False),
        Ratio("qs8 / sgemm", best("gemmi8", "qs8"), exact(*SGEMM), show_label=False),
        Ratio("qu8fp32 / sgemm", best("gemmi8", "qu8fp32"), exact(*SGEMM), show_label=False),
        Ratio("qu8 % peak", best("gemmi8", "qu8"), peak_sel, show_label=False, percent=True),
        Ratio("qs8 % peak", best("gemmi8", "qs8"), peak_sel, show_label=False, percent=True),
        Ratio("qu8fp32 % peak", best("gemmi8", "qu8fp32"), peak_sel, show_label=False,
              percent=True),
        Ratio("best requant peer % peak", requant, peak_sel, show_label=False, percent=True),
    ]
    lines += table(
        results, cols, "int8 GEMM: ratios",
        "Best requant peer: the fastest of %s on that shape (named in brackets); best int32 "
        "peer: the fastest of %s. oneDNN fastest config: the faster of %s (one output "
        "scale, no zero points). %% peak: of the %s register-only loop (%s GOPS, table 6)."
        % (", ".join("%s/%s" % s for s in present(results, REQUANT_PEERS)) or "none",
           ", ".join("%s/%s" % s for s in present(results, S32_PEERS)) or "none",
           ", ".join("%s/%s" % s for s in present(results, FAST_PEERS)) or "none",
           INT8_PEAK, fmt_gops(peak)))
    return lines


# Like for like (issue 11): each gemmi8 configuration against the oneDNN matmul
# configuration that does the same work. gemmi8 runs the same instructions with or
# without zero points (the activation zero point is folded into the packed bias, the
# output zero point added in the epilogue either way), so its zero-point run is
# compared with oneDNN both with zero points and without them.
LIKE_PAIRS = [
    # (gemmi8 variant, oneDNN variant, what both do)
    ("qu8s8fp32", "matmul-u8s8u8", "u8s8, zero points, per-channel scales"),
    ("qu8s8fp32pt", "matmul-u8s8u8-pt", "u8s8, zero points, one scale"),
    ("qu8s8fp32", "matmul-u8s8u8-nozp", "u8s8, per-channel scales (oneDNN: no zero points)"),
    ("qu8s8fp32pt", "matmul-u8s8u8-fast", "u8s8, one scale (oneDNN: no zero points)"),
    ("qs8fp32", "matmul-s8s8s8", "s8s8, zero points, per-channel scales"),
    ("qs8fp32pt", "matmul-s8s8s8-pt", "s8s8, zero points, one scale"),
    ("qs8fp32", "matmul-s8s8s8-nozp", "s8s8, per-channel scales (oneDNN: no zero points)"),
    ("qs8fp32pt", "matmul-s8s8s8-fast", "s8s8, one scale (oneDNN: no zero points)"),
    ("qu8s8s32", "matmul-u8s8s32", "u8s8, zero point, int32 output"),
]
# The fixed-point mode (TFLite's bytes; oneDNN has no such rounding) against the same
# oneDNN configurations.
LIKE_FIXED = [("qu8s8", "matmul-u8s8u8"), ("qu8s8pt", "matmul-u8s8u8-pt"),
              ("qu8s8pt", "matmul-u8s8u8-fast"), ("qs8", "matmul-s8s8s8"),
              ("qs8pt", "matmul-s8s8s8-pt"), ("qs8pt", "matmul-s8s8s8-fast")]


def like_tables(results):
    pairs = [(g, o, what) for (g, o, what) in LIKE_PAIRS
             if results.isas(g) and ("onednn", o) in results.series]
    if not pairs:
        return []
    lines = []
    cols = []
    for g, o, what in pairs:
        cols.append(Ratio("%s / %s" % (g, o), best("gemmi8", g), exact("onednn", o),
                          show_label=False))
    peak = results.peaks.get(INT8_PEAK)
    if results.isas("qu8s8s32") and peak:
        cols.append(Ratio("qu8s8s32 % peak", best("gemmi8", "qu8s8s32"),
                          constant(peak, INT8_PEAK), show_label=False, percent=True))
    if results.isas("qu8s8fp32") and peak:
        cols.append(Ratio("qu8s8fp32 % peak", best("gemmi8", "qu8s8fp32"),
                          constant(peak, INT8_PEAK), show_label=False, percent=True))
    lines += table(
        results, cols, "Like for like: gemmi8 (fp32 mode) / oneDNN matmul, same work",
        "Each column divides a gemmi8 configuration by the oneDNN matmul configuration "
        "that does the same work: " + "; ".join(
            "%s / %s: %s" % (g, o, what) for (g, o, what) in pairs) + ". gemmi8: qu8s8 = "
        "uint8 activations (zero point 119) x int8 weights, qs8 = int8 activations "
        "(zero point -7) x int8 weights, output zero points 128 / 5, best kernel set; "
        "...pt: one output scale. gemmi8 executes the same instructions with zero points "
        "0, so its run with zero points stands for both. oneDNN: matmul primitive, "
        "weights reordered once; -pt one output scale; -nozp / -fast no zero points "
        "(folded into the bias in setup, so the outputs are the same layer's). Target: "
        ">= 1.00 in every column. %% peak: of the %s loop (%s GOPS)."
        % (INT8_PEAK, fmt_gops(peak)))
    fixed = [(g, o) for (g, o) in LIKE_FIXED
             if results.isas(g) and ("onednn", o) in results.series]
    if fixed:
        cols = [Ratio("%s / %s" % (g, o), best("gemmi8", g), exact("onednn", o),
                      show_label=False) for (g, o) in fixed]
        lines += table(
            results, cols, "Like for like: gemmi8 fixed-point mode / oneDNN matmul",
            "gemmi8 in fixed-point mode (TFLite's bytes: a 64-bit product and two exact "
            "roundings per output, which oneDNN does not offer) against the oneDNN "
            "configurations above. Target: >= 0.90 on every shape with K >= 64.")
    return lines


# Threads (issue 12): the cases run again on GEMMI8_BENCH_THREADS threads, as
# <library>@<threads>/<variant>; scaling = GOPS on T threads / GOPS on one.
THREAD_SERIES = [("gemmi8", "qu8s8fp32"), ("gemmi8", "qu8s8"), ("onednn", "matmul-u8s8u8-fast"),
                 ("onednn", "matmul-u8s8u8"), ("openblas", "sgemm")]
# Targets on the ten shapes: scaling (shapes numbered from 1) and gemmi8 / oneDNN at T.
THREAD_SCALING_TARGET = {1: 1.8, 2: 1.8, 5: 1.8, 6: 1.8, 7: 1.8, 9: 1.8, 3: 1.6, 4: 1.6, 10: 1.6}


def thread_count(results):
    counts = sorted({int(lib.split("@")[1]) for (lib, _) in results.series if "@" in lib})
    return counts[-1] if counts else None


def thread_series(results, library, base, t):
    """(1-thread series, t-thread series) for library/base (gemmi8: its best kernel set)."""
    lt = "%s@%d" % (library, t)
    if library == "gemmi8":
        isas = [v[len(base) + 1:] for (lib, v) in results.series
                if lib == lt and v.startswith(base + "-")]
        if not isas:
            return None
        v = "%s-%s" % (base, isas[-1])
        return (library, v), (lt, v)
    if (lt, base) not in results.series:
        return None
    return (library, base), (lt, base)


def threads_tables(results):
    t = thread_count(results)
    if t is None:
        return []
    pairs = [(lib, base, thread_series(results, lib, base, t)) for (lib, base) in THREAD_SERIES]
    pairs = [(lib, base, p) for (lib, base, p) in pairs if p is not None]
    if not pairs:
        return []
    lines = []
    cols = []
    for lib, base, (one, many) in pairs:
        cols.append(Gops("%s %s 1t" % (lib, base), exact(*one)))
        cols.append(Gops("%s %s %dt" % (lib, base, t), exact(*many)))
        cols.append(Ratio("%s %s %dt / 1t" % (lib, base, t), exact(*many), exact(*one),
                          show_label=False))
    g = dict(((lib, base), p) for (lib, base, p) in pairs)
    for gbase, obase in (("qu8s8fp32", "matmul-u8s8u8-fast"), ("qu8s8fp32", "matmul-u8s8u8")):
        if ("gemmi8", gbase) in g and ("onednn", obase) in g:
            cols.append(Ratio("gemmi8 %s / onednn %s, %dt" % (gbase, obase, t),
                              exact(*g[("gemmi8", gbase)][1]), exact(*g[("onednn", obase)][1]),
                              show_label=False))
    lines += table(
        results, cols, "Threads: 1 and %d threads, same run" % t,
        "GOPS on one thread and on %d (gemmi8: its own pool, gemmi8_threadpool, best kernel "
        "set; oneDNN: its OpenMP runtime at %d threads, set before the primitive is created; "
        "OpenBLAS: openblas_set_num_threads(%d)), timed by wall clock, repetitions "
        "interleaved with everything else; a threaded run that follows another library's "
        "waits 150 ms for that library's idle threads to stop spinning. Targets (issue 12): "
        "gemmi8 %dt / 1t >= 1.8 on shapes 1, 2, 5, 6, 7, 9 and >= 1.6 on 3, 4, 10; at %d "
        "threads >= 1.00 x oneDNN where gemmi8 is ahead on one thread." % (t, t, t, t, t))
    # the fully-connected layers (batch 1 and small M) on one thread and on t
    if results.fc_shapes:
        head = ["layer (N x K)", "M"]
        keys = []
        for lib, base, (one, many) in pairs:
            head += ["%s %s 1t" % (lib, base), "%dt" % t, "%dt / 1t" % t]
            keys.append((one, many))
        rows = []
        for shape in results.fc_shapes:
            n, m, k = parse_shape(shape)
            cells = ["%d x %d" % (n, k), str(m)]
            for one, many in keys:
                a, b = results.gops.get((one, shape)), results.gops.get((many, shape))
                cells += [fmt_gops(a), fmt_gops(b), "%.2f" % (b / a) if a and b else "-"]
            rows.append("| " + " | ".join(cells) + " |")
        lines += ["### Threads on the fully-connected layers", "",
                  "The layers of the batch-1 study (below) on one thread and on %d, same "
                  "run, GOPS; a layer too small to gain is not split by gemmi8 (below 2 M "
                  "operations per thread, src/parallel.h)." % t, "",
                  "| " + " | ".join(head) + " |",
                  "|" + "|".join(["---", "---:"] + ["---:"] * (len(head) - 2)) + "|"] + rows + [""]
    # targets, met or missed
    if ("gemmi8", "qu8s8fp32") in g and len(results.shapes) == 10:
        one, many = g[("gemmi8", "qu8s8fp32")]
        rows = []
        for i, shape in enumerate(results.shapes, 1):
            a, b = results.gops.get((one, shape)), results.gops.get((many, shape))
            if a is None or b is None:
                continue
            want = THREAD_SCALING_TARGET.get(i)
            verdict = "-" if want is None else ("met" if b / a >= want else "missed")
            ahead = ""
            if ("onednn", "matmul-u8s8u8-fast") in g:
                o1, ot = g[("onednn", "matmul-u8s8u8-fast")]
                x1, xt = results.gops.get((o1, shape)), results.gops.get((ot, shape))
                if x1 and xt:
                    if a >= x1:
                        ahead = "%.2f (%s)" % (b / xt, "met" if b >= xt else "missed")
                    else:
                        ahead = "%.2f (behind on 1 thread: no target)" % (b / xt)
            rows.append("| %d | %s | %.2f | %s | %s | %s |" % (
                i, shape_label(shape), b / a, "%.1f" % want if want else "-", verdict, ahead))
        if rows:
            lines += ["### Thread targets: gemmi8 qu8s8fp32", "",
                      "| # | Row x Col x Depth | %dt / 1t | target | | gemmi8 / oneDNN-fast at "
                      "%dt |" % (t, t), "|---:|---|---:|---:|---|---|"] + rows + [""]
    return lines


def isa_tables(results):
    lines = []
    cols = []
    for base in GEMMI8_INT8:
        for isa in results.isas(base):
            cols.append(Gops("%s %s" % (base, isa), exact("gemmi8", "%s-%s" % (base, isa))))
    if cols:
        lines += table(results, cols, "gemmi8 int8 per kernel set: median GOPS")
    if "avx2" in results.isas("qu8") or "avx2" in results.isas("qs8"):
        lowp_u8 = exact("gemmlowp", "u8u8", "gemmlowp u8u8")
        lowp_s32 = exact("gemmlowp", "u8s32", "gemmlowp u8s32")
        madd = constant(results.peaks.get(AVX2_PEAK), AVX2_PEAK)
        cols = [
            Gops("qu8 avx2", exact("gemmi8", "qu8-avx2")),
            Gops("qs8 avx2", exact("gemmi8", "qs8-avx2")),
            Gops("qu8s32 avx2", exact("gemmi8", "qu8s32-avx2")),
            Gops("gemmlowp u8u8", exact("gemmlowp", "u8u8")),
            Gops("gemmlowp u8s32", exact("gemmlowp", "u8s32")),
            Ratio("qu8 avx2 / gemmlowp u8u8", exact("gemmi8", "qu8-avx2"), lowp_u8, False),
            Ratio("qs8 avx2 / gemmlowp u8u8", exact("gemmi8", "qs8-avx2"), lowp_u8, False),
            Ratio("qu8s32 avx2 / gemmlowp u8s32", exact("gemmi8", "qu8s32-avx2"), lowp_s32,
                  False),
            Ratio("qu8 avx2 % madd peak", exact("gemmi8", "qu8-avx2"), madd, False, True),
            Ratio("qs8 avx2 % madd peak", exact("gemmi8", "qs8-avx2"), madd, False, True),
        ]
        lines += table(
            results, cols, "AVX2 level (forced) against gemmlowp's AVX2 kernel",
            "gemmlowp runs its AVX2 kernel (context: gemmlowp_kernel). madd peak: the %s "
            "loop (vpmaddwd + vpaddd, %s GOPS), the limit of an exact AVX2 kernel that "
            "widens int8 to 16 bits." % (AVX2_PEAK, fmt_gops(results.peaks.get(AVX2_PEAK))))
    return lines


def bin_tables(results):
    isas = results.isas("bin")
    if not isas:
        return []
    cols = [Gops("bin %s" % isa, exact("gemmi8", "bin-" + isa)) for isa in isas]
    for isa in isas:
        loop = BIN_PEAK.get(isa)
        if loop is None:
            continue
        cols.append(Ratio("%s %% of %s" % (isa, loop), exact("gemmi8", "bin-" + isa),
                          constant(results.peaks.get(loop), loop), False, True))
    cols.append(Gops("gemmi8 best int8", best_gemmi8_int8, show_label=True))
    cols.append(Ratio("best bin / best int8", best("gemmi8", "bin"), best_gemmi8_int8, False))
    note = ("Binary GEMM (+1/-1, K = Depth bits), int32 output, A bit-packed in setup. "
            "GOPS = 2*M*N*K / s. Each kernel set against the register-only loop of its "
            "popcount method (table 6): %s. Best int8: gemmi8's fastest int8 series on the "
            "shape (any output, any kernel set)."
            % ", ".join("%s: %s (%s GOPS)" % (i, BIN_PEAK[i], fmt_gops(results.peaks.get(
                BIN_PEAK[i]))) for i in isas if i in BIN_PEAK))
    return table(results, cols, "Binary GEMM: median GOPS", note)


PEAK_NOTES = {
    "vpdpbusd-zmm": ("vpdpbusd zmm", 128, "int8 (u8 x s8) multiply-adds, AVX-512 VNNI"),
    "vpmaddwd-ymm": ("vpmaddwd ymm + vpaddd ymm", 32,
                     "int8 widened to 16 bits (exact AVX2 kernels)"),
    "vfmadd-zmm": ("vfmadd231ps zmm", 32, "fp32 flops (OpenBLAS sgemm's limit)"),
    "vpopcntq-zmm": ("vpxorq + vpopcntq + vpaddq zmm", 1024, "binary, AVX-512 VPOPCNTDQ"),
    "popcnt-lut-ymm": ("vpxor, vpsrlw, 2 vpand, 2 vpshufb, 2 vpaddb ymm (+ vpsadbw)", 512,
                       "binary, AVX2 nibble lookup"),
    "popcnt-lut-zmm": ("the same on zmm", 1024, "binary, AVX-512BW nibble lookup"),
    "popcnt-r64": ("mov + xor + popcnt + add, 64-bit", 128, "binary, scalar"),
}


def peak_table(results):
    if not results.peaks:
        return []
    lines = ["## Peak loops (register-only, bench/cases-peak.c)", ""]
    lines.append("| loop | one step | ops per step | median GOPS | steps per ns | bounds |")
    lines.append("|---|---|---:|---:|---:|---|")
    for name, gops in results.peaks.items():
        step, ops, what = PEAK_NOTES.get(name, ("?", None, ""))
        rate = "%.2f" % (gops / ops) if ops else "-"
        lines.append("| %s | %s | %s | %s | %s | %s |"
                     % (name, step, ops if ops else "?", fmt_gops(gops), rate, what))
    lines.append("")
    return lines


def targets(results):
    """Issue 3 and 4 targets, evaluated on the ten appendix shapes."""
    if results.shapes != TEN_SHAPES:
        return []
    rows = [results.row(s) for s in results.shapes]
    requant = best_of(present(results, REQUANT_PEERS))
    peak = results.peaks.get(INT8_PEAK)
    lines = ["## Targets (issues 3 and 4; shapes numbered as above)", ""]

    def check(text, numbers, test, value):
        if all(value(rows[i - 1]) is None for i in numbers):
            lines.append("- %s: not run" % text)
            return
        hits, misses = [], []
        for i in numbers:
            v = value(rows[i - 1])
            (hits if v is not None and test(v) else misses).append(
                "%d (%s)" % (i, "-" if v is None else "%.2f" % v))
        verdict = "met" if not misses else "missed on %s" % ", ".join(misses)
        lines.append("- %s: %d/%d, %s" % (text, len(hits), len(numbers), verdict))

    def ratio(num, den):
        def value(row):
            a, b = num(row), den(row)
            return None if a is None or b is None or b[0] <= 0 else a[0] / b[0]

        return value

    all10 = list(range(1, 11))
    for base in ("qu8", "qs8", "qu8fp32", "qs8fp32"):
        check("%s >= 1.0x best requantized peer" % base, all10, lambda v: v >= 1.0,
              ratio(best("gemmi8", base), requant))
        mean = geomean([ratio(best("gemmi8", base), requant)(r) for r in rows])
        lines.append("- %s geometric mean over best requantized peer >= 1.15: %s"
                     % (base, "not run" if mean is None else "%.2f (%s)" % (
                         mean, "met" if mean >= 1.15 else "missed")))
    for base in ("qu8", "qs8", "qu8fp32", "qs8fp32"):
        value = ratio(best("gemmi8", base), exact(*SGEMM))
        if all(value(r) is None for r in rows):
            lines.append("- %s >= 4x OpenBLAS sgemm on at least 8 of 10: not run" % base)
            continue
        n = sum(1 for r in rows if (value(r) or 0) >= 4.0)
        lines.append("- %s >= 4x OpenBLAS sgemm on at least 8 of 10: %d/10 (%s)"
                     % (base, n, "met" if n >= 8 else "missed"))
    if peak:
        for base in ("qu8", "qs8", "qu8fp32", "qs8fp32"):
            check("%s >= 85%% of the vpdpbusd peak (shapes 1, 2, 5, 6, 7, 9; value = fraction)"
                  % base, [1, 2, 5, 6, 7, 9], lambda v: v >= 0.85,
                  ratio(best("gemmi8", base), constant(peak, "")))
    for base in ("qu8", "qs8"):
        check("%s avx2 >= 2x gemmlowp u8u8 (AVX2 kernel)" % base, all10, lambda v: v >= 2.0,
              ratio(exact("gemmi8", base + "-avx2"), exact("gemmlowp", "u8u8")))
    pop = results.peaks.get(BIN_PEAK["avx512vpopcnt"])
    if pop:
        check("bin (best) >= 70%% of the %s peak (shapes 1, 2, 5, 6, 7, 9)"
              % BIN_PEAK["avx512vpopcnt"], [1, 2, 5, 6, 7, 9], lambda v: v >= 0.70,
              ratio(best("gemmi8", "bin"), constant(pop, "")))
    deep = [i for i in all10 if int(TEN_SHAPES[i - 1].split("x")[2]) >= 256]
    check("bin (best) >= 2x gemmi8's best int8 (shapes with K >= 256)", deep,
          lambda v: v >= 2.0, ratio(best("gemmi8", "bin"), best_gemmi8_int8))
    lut = results.peaks.get(BIN_PEAK["avx2"])
    if lut:
        check("bin avx2 >= 60%% of the %s peak (shapes 1, 2, 5, 6, 7, 9)" % BIN_PEAK["avx2"],
              [1, 2, 5, 6, 7, 9], lambda v: v >= 0.60,
              ratio(exact("gemmi8", "bin-avx2"), constant(lut, "")))
    lines.append("")
    return lines


def all_series(results):
    """Every series as a row, shapes as columns."""
    lines = ["## Every series: median GOPS", ""]
    headers = ["series"] + [shape_label(s) for s in results.shapes] + ["geomean"]
    lines.append("| " + " | ".join(headers) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(headers) - 1)) + "|")
    for s in results.series:
        cells = ["%s/%s" % s]
        values = []
        for shape in results.shapes:
            v = results.gops.get((s, shape))
            values.append(v)
            failed = v is None and (s[0], s[1], shape) in results.errors
            cells.append("error" if failed else fmt_gops(v))
        cells.append(fmt_gops(geomean(values)))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    impls = {}
    for (s, shape), label in results.labels.items():
        impls.setdefault("%s/%s" % s, set()).add(label)
    for name in sorted(impls):
        if name.startswith("onednn/matmul"):
            lines.append("- %s implementation: %s" % (name, ", ".join(sorted(impls[name]))))
    if impls:
        lines.append("")
    return lines


# ---- batch 1 and small M ------------------------------------------------------------


def parse_shape(shape):
    """'4096x1x4096' -> (4096, 1, 4096): Row, Col, Depth = N, M, K."""
    return tuple(int(x) for x in shape.split("x"))


def fmt_bytes(value):
    if value is None:
        return "-"
    if value >= 1e6:
        return "%.1f MB" % (value / 1e6)
    return "%.0f kB" % (value / 1e3)


def fc_layers(results):
    """Distinct (N, K) of the fully-connected shapes in file order, and the M values."""
    layers, ms = [], set()
    for shape in results.fc_shapes:
        n, m, k = parse_shape(shape)
        if (n, k) not in layers:
            layers.append((n, k))
        ms.add(m)
    return layers, sorted(ms)


def fc_isas(results, base):
    """gemmi8 kernel sets with a base-<isa> result on a fully-connected shape, lowest
    first (the last is the best one the benchmark ran there)."""
    isas = [isa for isa in results.isas(base)
            if any((("gemmi8", "%s-%s" % (base, isa)), s) in results.gops
                   for s in results.fc_shapes)]
    return sorted(isas, key=lambda i: ISA_ORDER.index(i) if i in ISA_ORDER else len(ISA_ORDER))


def fc_table(results, base, peers, l2):
    """One type's table: a row per layer, columns per M, then the time ratios and the
    weight bandwidth at M=1."""
    isas = fc_isas(results, base)
    if not isas:
        return []
    best_isa = isas[-1]
    gemmi8 = ("gemmi8", "%s-%s" % (base, best_isa))
    peers = [(lib, var, short) for lib, var, short in peers if (lib, var) in results.series]
    layers, ms = fc_layers(results)
    mr_isas = [isa for isa in reversed(isas) if isa in MAIN_MR and MAIN_MR[isa] in ms]

    def gops(series, n, m, k):
        return results.gops.get((series, "%dx%dx%d" % (n, m, k)))

    headers = ["N x K", "packed weights"]
    for m in ms:
        headers += ["M=%d gemmi8" % m, "M=%d best peer" % m, "M=%d ratio" % m]
    headers += ["t(M=1) / t(M=%d) %s" % (MAIN_MR[isa], isa) for isa in mr_isas]
    headers += ["weights GB/s at M=1", "read-bw GB/s", "% of read-bw"]
    columns = [[] for _ in headers[2:]]  # numeric values per column, for the means
    lines = ["### %s: gemmi8 %s-%s against the fastest %s peer" % (base, base, best_isa, base),
             ""]
    lines.append("| " + " | ".join(headers) + " |")
    lines.append("|" + "|".join(["---", "---:"] + ["---:"] * len(columns)) + "|")
    for n, k in layers:
        cells = ["%d x %d" % (n, k)]
        size = None
        for m in ms:
            size = results.weight_bytes.get((gemmi8, "%dx%dx%d" % (n, m, k)), size)
        big = size is not None and l2 > 0 and size > l2
        cells.append(fmt_bytes(size) + (" (> L2)" if big else ""))
        values, texts = [], []
        for m in ms:
            g = gops(gemmi8, n, m, k)
            found = [(gops((lib, var), n, m, k), short) for lib, var, short in peers]
            found = [f for f in found if f[0] is not None]
            peer = max(found) if found else None
            ratio = g / peer[0] if g is not None and peer is not None and peer[0] > 0 else None
            values += [g, peer[0] if peer else None, ratio]
            texts += [fmt_gops(g),
                      "-" if peer is None else "%s (%s)" % (fmt_gops(peer[0]), peer[1]),
                      "-" if ratio is None else "%.2f" % ratio]
        for isa in mr_isas:
            series, mr = ("gemmi8", "%s-%s" % (base, isa)), MAIN_MR[isa]
            g1, gmr = gops(series, n, 1, k), gops(series, n, mr, k)
            # t = 2 M N K / GOPS, so t(1) / t(MR) = GOPS(MR) / (MR * GOPS(1)).
            t = gmr / (mr * g1) if g1 and gmr else None
            values.append(t)
            texts.append("-" if t is None else "%.2f" % t)
        bw = results.gbps.get((gemmi8, "%dx1x%d" % (n, k))) if big else None
        read = results.gbps.get((READ_BW, "%dx0x%d" % (n, k))) if big else None
        pct = bw / read if bw is not None and read else None
        values += [bw, read, pct]
        texts += ["-" if bw is None else "%.1f" % bw, "-" if read is None else "%.1f" % read,
                  "-" if pct is None else "%.0f%%" % (100 * pct)]
        for column, value in zip(columns, values):
            column.append(value)
        lines.append("| " + " | ".join(cells + texts) + " |")
    means = []
    for header, column in zip(headers[2:], columns):
        mean = geomean(column)
        if mean is None or "best peer" in header:
            means.append("")
        elif header.startswith("%"):
            means.append("%.0f%%" % (100 * mean))
        elif "ratio" in header or header.startswith("t("):
            means.append("%.2f" % mean)
        elif "GB/s" in header:
            means.append("%.1f" % mean)
        else:
            means.append(fmt_gops(mean))
    lines.append("| geometric mean | | " + " | ".join(means) + " |")
    lines.append("")
    return lines


def fc_like_table(results, base, peers):
    """gemmi8 against each peer configuration that does the same work, per M."""
    like_base, shorts = FC_LIKE.get(base, (None, []))
    isas = fc_isas(results, like_base) if like_base else []
    peers = [(lib, var, short) for lib, var, short in peers
             if short in shorts and (lib, var) in results.series]
    if not isas or not peers:
        return []
    gemmi8 = ("gemmi8", "%s-%s" % (like_base, isas[-1]))
    layers, ms = fc_layers(results)
    headers = ["N x K"]
    for m in ms:
        headers += ["M=%d / %s" % (m, short) for _, _, short in peers]
    columns = [[] for _ in headers[1:]]
    lines = ["### %s like for like: gemmi8 %s / each peer" % (base, gemmi8[1]), ""]
    lines.append("| " + " | ".join(headers) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * len(columns)) + "|")
    for n, k in layers:
        texts, values = [], []
        for m in ms:
            shape = "%dx%dx%d" % (n, m, k)
            g = results.gops.get((gemmi8, shape))
            for lib, var, _ in peers:
                p = results.gops.get(((lib, var), shape))
                ratio = g / p if g is not None and p else None
                values.append(ratio)
                texts.append("-" if ratio is None else "%.2f" % ratio)
        for column, value in zip(columns, values):
            column.append(value)
        lines.append("| %d x %d | " % (n, k) + " | ".join(texts) + " |")
    means = [geomean(column) for column in columns]
    lines.append("| geometric mean | "
                 + " | ".join("" if v is None else "%.2f" % v for v in means) + " |")
    lines.append("")
    return lines


def fc_all_series(results):
    """Every series that ran on the fully-connected shapes, one column each."""
    series = [s for s in results.series
              if any((s, shape) in results.gops or (s[0], s[1], shape) in results.errors
                     for shape in results.fc_shapes)]
    if not series:
        return []
    lines = ["### Every series on the fully-connected shapes: median GOPS", ""]
    headers = ["Row x Col x Depth"] + ["%s/%s" % s for s in series]
    lines.append("| " + " | ".join(headers) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * len(series)) + "|")
    for shape in results.fc_shapes:
        cells = [shape_label(shape)]
        for s in series:
            v = results.gops.get((s, shape))
            failed = v is None and (s[0], s[1], shape) in results.errors
            cells.append("error" if failed else fmt_gops(v))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def fc_section(results):
    if not results.fc_shapes:
        return []
    ctx = results.context
    try:
        l2 = int(ctx.get("l2_cache_bytes", "0"))
    except ValueError:
        l2 = 0
    _, ms = fc_layers(results)
    read = sorted({label for (series, _), label in results.labels.items() if series == READ_BW})
    lines = ["## Batch 1 and small M: fully-connected layers", ""]
    lines.append(
        "The layers of %s (Row x Col x Depth = N x M x K), each at M = %s, in the same run "
        "as the tables above, at least %s s per repetition (fc_min_time). gemmi8: qu8 / qs8 "
        "with per-channel fixed-point requantization on its best kernel set (every series, "
        "fp32 mode and avx2 too, is in the last table). Best peer: the fastest, on that "
        "shape, of oneDNN matmul with the same types, zero points and per-channel scales "
        "(dnnl), oneDNN's fastest configuration of the layer, one output scale and no zero "
        "points (dnnl-fast), and XNNPACK's fully-connected operator, per-tensor fp32 (xnn); "
        "ratio = gemmi8 / best peer. t(M=1) / t(M=MR): the time of one call at M = 1 over "
        "the time at the kernel set's main tile height MR (avx512vnni 7, avx2 6), both of "
        "the same series: 1/MR if time grows with M, 1.00 if M = 1 costs a whole tile. "
        "For packed weights larger than the L2 cache (%s), the weights' bytes per second "
        "at M = 1 (packed bytes / time of one call) and their percentage of peak/read-bw, "
        "a loop that only reads a buffer of the same size (%s). Medians over the "
        "repetitions, as everywhere."
        % (ctx.get("fc_shapes_file", "?"), ", ".join(str(m) for m in ms),
           ctx.get("fc_min_time", "?"),
           "%d bytes, %s" % (l2, ctx.get("l2_cache_source", "?")) if l2 else "unknown: none",
           "; ".join(read) if read else "not run"))
    lines.append("")
    for base, peers in FC_TYPES:
        lines += fc_table(results, base, peers, l2)
    like = []
    for base, peers in FC_TYPES:
        like += fc_like_table(results, base, peers)
    if like:
        lines.append(
            "Like for like: gemmi8's fp32 requantization mode (%s; per-channel scales, zero "
            "points, fp32 rounding) over each peer configuration that does the same work: "
            "dnnl, oneDNN matmul with zero points and per-channel output scales (int8 "
            "weights: for qu8 the closest it has, with no weight zero point); xnn, "
            "XNNPACK's fully-connected operator (zero points, fp32, one scale per tensor: "
            "slightly less work than gemmi8's per-channel scales). oneDNN's fastest "
            "configuration (dnnl-fast, no zero points) has no counterpart; it is among the "
            "best peers above."
            % ", ".join("%s for %s" % (FC_LIKE[b][0], b) for b, _ in FC_TYPES if b in FC_LIKE))
        lines.append("")
        lines += like
    lines += fc_all_series(results)
    return lines


def headline(results):
    """The headline tables: the ten shapes (gemmi8 against the best peer, like for like,
    OpenBLAS and the peak) and batch 1 (gemmi8 against the fastest peer of its type at
    the smallest M run), each only if it ran."""
    lines = []
    if results.shapes:
        requant = best_of(present(results, REQUANT_PEERS))
        peak = results.peaks.get(INT8_PEAK)
        cols = [Gops("gemmi8 qu8", best("gemmi8", "qu8")),
                Gops("gemmi8 qs8", best("gemmi8", "qs8")),
                Gops("best requant peer", requant, show_label=True),
                Ratio("qu8 / peer", best("gemmi8", "qu8"), requant, show_label=False),
                Ratio("qs8 / peer", best("gemmi8", "qs8"), requant, show_label=False)]
        for g, o in (("qu8s8fp32", "matmul-u8s8u8"), ("qs8fp32", "matmul-s8s8s8")):
            if results.isas(g) and ("onednn", o) in results.series:
                cols.append(Ratio("%s / onednn %s" % (g, o), best("gemmi8", g),
                                  exact("onednn", o), show_label=False))
        if SGEMM in results.series:
            cols.append(Ratio("qu8 / sgemm", best("gemmi8", "qu8"), exact(*SGEMM),
                              show_label=False))
        if peak:
            cols.append(Ratio("qu8 % peak", best("gemmi8", "qu8"), constant(peak, INT8_PEAK),
                              show_label=False, percent=True))
        lines += table(
            results, cols, "Headline: int8 GEMM, one thread (median GOPS and ratios)",
            "gemmi8 on its best kernel set; best requant peer: the fastest 8-bit-output peer "
            "on the shape (%s); qu8s8fp32 / qs8fp32 against the oneDNN matmul doing the same "
            "work (zero points, per-channel scales); %% peak: of the %s loop (%s GOPS)."
            % (", ".join("%s/%s" % p for p in present(results, REQUANT_PEERS)) or "none",
               INT8_PEAK, fmt_gops(peak)))
    if results.fc_shapes:
        layers, ms = fc_layers(results)
        m = ms[0]
        head = ["layer (N x K)"]
        kinds = []
        for base, peers in FC_TYPES:
            isas = fc_isas(results, base)
            if not isas:
                continue
            kinds.append((("gemmi8", "%s-%s" % (base, isas[-1])),
                          [(lib, var, short) for lib, var, short in peers
                           if (lib, var) in results.series]))
            head += ["gemmi8 %s" % base, "best %s peer" % base, "ratio"]
        if kinds:
            lines += ["## Headline: batch %d, fully-connected layers (median GOPS)" % m, "",
                      "gemmi8 qu8 / qs8 on its best kernel set at M = %d against the fastest "
                      "peer of the same type (dnnl: oneDNN matmul, same work; dnnl-fast: its "
                      "fastest configuration; xnn: XNNPACK)." % m, "",
                      "| " + " | ".join(head) + " |",
                      "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
            for n, k in layers:
                shape = "%dx%dx%d" % (n, m, k)
                cells = ["%d x %d" % (n, k)]
                for gemmi8, peers in kinds:
                    g = results.gops.get((gemmi8, shape))
                    found = [(results.gops.get(((lib, var), shape)), short)
                             for lib, var, short in peers]
                    found = [f for f in found if f[0] is not None]
                    peer = max(found) if found else None
                    cells += [fmt_gops(g),
                              "-" if peer is None else "%s (%s)" % (fmt_gops(peer[0]), peer[1]),
                              "%.2f" % (g / peer[0]) if g and peer and peer[0] > 0 else "-"]
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
    return lines


def markdown(results):
    ctx = results.context
    lines = ["# gemmi8 benchmark", ""]
    runs = ("all libraries interleaved in one run" if "merged_files" not in ctx else
            "all libraries interleaved in one run per shape (%s runs, merged by "
            "bench/merge.py)" % ctx["merged_files"])
    lines.append(
        "Median GOPS (2 * M * N * K / s / 1e9, single thread) over the repetitions of"
        " each benchmark, %s. Shapes are"
        " Row x Col x Depth = N (output channels) x M (pixels) x K (depth; bits for bin)."
        % runs)
    lines.append("")
    reps = sorted({r for r in results.reps.values() if r is not None})
    facts = [
        ("date", ctx.get("date")),
        ("host", ctx.get("host_name")),
        ("CPUs", "%s x %s MHz (nominal); features: %s"
         % (ctx.get("num_cpus", "?"), ctx.get("mhz_per_cpu", "?"), ctx.get("cpu_features", "?"))),
        ("repetitions", ", ".join(str(r) for r in reps) if reps else None),
        ("gemmi8", "%s; kernel sets %s (default %s)"
         % (ctx.get("gemmi8_version", "?"), ctx.get("gemmi8_isas", "?"),
            ctx.get("gemmi8_isa_default", "?"))),
        ("OpenBLAS", "core %s (OPENBLAS_CORETYPE=%s), %s thread(s); %s"
         % (ctx.get("openblas_core", "?"), ctx.get("openblas_coretype_env", "?"),
            ctx.get("openblas_threads", "?"), ctx.get("openblas_config", "?"))),
        ("gemmlowp", "kernel %s; %s; %s"
         % (ctx.get("gemmlowp_kernel", "?"), ctx.get("gemmlowp_requant", "?"),
            ctx.get("gemmlowp_threads", "?"))),
        ("oneDNN", "%s; ISA %s; threads %s; matmul on 64x3136x64: %s"
         % (ctx.get("onednn_version", "?"), ctx.get("onednn_isa", "?"),
            ctx.get("onednn_threads", "?"), ctx.get("onednn_matmul_impl_64x3136x64", "?"))),
        ("XNNPACK", "%s; %s; %s"
         % (ctx.get("xnnpack_kernels", "?"), ctx.get("xnnpack_requant", "?"),
            ctx.get("xnnpack_threads", "?"))),
        ("fully-connected shapes", None if not results.fc_shapes else
         "%s, %d shapes; minimum time per repetition %s s (fc_min_time)"
         % (ctx.get("fc_shapes_file", "?"), len(results.fc_shapes), ctx.get("fc_min_time", "?"))),
        ("L2 cache", None if "l2_cache_bytes" not in ctx else "%s bytes (%s)"
         % (ctx.get("l2_cache_bytes"), ctx.get("l2_cache_source", "?"))),
        ("skipped", ctx.get("skipped_cases")),
        ("Google Benchmark build", ctx.get("library_build_type")),
    ]
    for key, value in facts:
        if value is not None:
            lines.append("- %s: %s" % (key, value))
    lines.append("")

    lines += headline(results)
    if results.shapes:
        lines += int8_tables(results)
        lines += like_tables(results)
        lines += threads_tables(results)
        lines += isa_tables(results)
        lines += bin_tables(results)
    lines += peak_table(results)
    if results.shapes:
        lines += targets(results)
        lines += all_series(results)
    lines += fc_section(results)

    if results.errors:
        lines.append("Failed:")
        for (library, variant, shape), message in sorted(results.errors.items()):
            lines.append("- %s/%s/%s: %s" % (library, variant, shape, message))
        lines.append("")
    return "\n".join(lines)


# ---- charts -----------------------------------------------------------------------


def chart_series(results):
    series = [
        ("gemmi8 qu8", best("gemmi8", "qu8")),
        ("gemmi8 qs8", best("gemmi8", "qs8")),
    ]
    for library, title in (("gemmlowp", "gemmlowp"), ("onednn", "oneDNN"),
                           ("xnnpack", "XNNPACK")):
        variants = [v for (lib, v) in present(results, REQUANT_PEERS) if lib == library]
        if variants:
            series.append(("%s best requantized" % title, best_library(library, variants)))
    if SGEMM in results.series:
        series.append(("OpenBLAS sgemm (fp32)", exact(*SGEMM)))
    return series


def bin_chart_series(results):
    series = [("gemmi8 bin %s" % isa, exact("gemmi8", "bin-" + isa))
              for isa in results.isas("bin")]
    series.append(("gemmi8 best int8", best_gemmi8_int8))
    return series


def data_table(results, series):
    """Tab-separated medians for gnuplot: a header line, then one line per shape."""
    lines = ["shape\t" + "\t".join(title for title, _ in series)]
    for shape in results.shapes:
        row = results.row(shape)
        values = []
        for _, select in series:
            v = select(row)
            values.append("NaN" if v is None else "%.4f" % v[0])
        lines.append(shape + "\t" + "\t".join(values))
    return "\n".join(lines) + "\n"


def plot(results, series, datafile, outfile, title, lines):
    """Runs bench/chart.gp; lines: [(GOPS, label)] drawn as horizontal lines."""
    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        print("report.py: gnuplot not installed; no %s" % outfile, file=sys.stderr)
        return False
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "chart.gp")
    lines = [(v, label) for v, label in lines if v]
    values = [v for v, _ in lines]
    for shape in results.shapes:
        row = results.row(shape)
        for _, select in series:
            v = select(row)
            if v is not None and v[0] > 0:
                values.append(v[0])
    if not values:
        return False
    # Log scale from the decade below the smallest bar to a little above the top.
    ymin = 10 ** math.floor(math.log10(min(values)))
    ymax = max(values) * 1.6
    settings = ("datafile='%s'; outfile='%s'; series=%d; nshapes=%d; ymin=%g; ymax=%g; "
                "charttitle='%s'; nlines=%d"
                % (datafile, outfile, len(series), len(results.shapes), ymin, ymax, title,
                   len(lines)))
    for i, (value, label) in enumerate(lines, 1):
        settings += "; line%d=%.4f; linelabel%d='%s'" % (i, value, i, label)
    result = subprocess.run([gnuplot, "-e", settings, script], capture_output=True, text=True)
    if result.returncode != 0:
        print("report.py: gnuplot failed on %s:\n%s" % (outfile, result.stderr),
              file=sys.stderr)
        return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("json", help="Google Benchmark JSON (--benchmark_out)")
    parser.add_argument("--markdown", help="also write the markdown tables here")
    parser.add_argument("--data", help="write the int8 chart's data here (tab-separated)")
    parser.add_argument("--chart", help="draw the int8 chart here (PNG; needs --data)")
    parser.add_argument("--bin-data", help="write the binary chart's data here")
    parser.add_argument("--bin-chart", help="draw the binary chart here (needs --bin-data)")
    parser.add_argument("--headline", action="store_true",
                        help="print only the headline tables (the files are written as asked)")
    args = parser.parse_args()

    with open(args.json) as f:
        results = Results(json.load(f))
    if not results.series:
        print("report.py: no benchmark results in %s" % args.json, file=sys.stderr)
        return 1
    text = markdown(results)
    sys.stdout.write("\n".join(headline(results)) + "\n" if args.headline else text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    # A chart that cannot be drawn (no gnuplot) is reported, not an error.
    if args.data and results.shapes:
        series = chart_series(results)
        with open(args.data, "w") as f:
            f.write(data_table(results, series))
        if args.chart:
            plot(results, series, args.data, args.chart,
                 "int8 GEMM, one thread: median GOPS per shape (Row x Col x Depth = N x M x K)",
                 [(results.peaks.get(INT8_PEAK), "vpdpbusd zmm peak (register-only loop)"),
                  (results.peaks.get("vfmadd-zmm"), "fp32 FMA zmm peak")])
    if args.bin_data and results.shapes and results.isas("bin"):
        series = bin_chart_series(results)
        with open(args.bin_data, "w") as f:
            f.write(data_table(results, series))
        if args.bin_chart:
            plot(results, series, args.bin_data, args.bin_chart,
                 "binary GEMM, one thread: median GOPS per shape (Row x Col x Depth = N x M x K, K in bits)",
                 [(results.peaks.get(BIN_PEAK["avx512vpopcnt"]), "vpopcntq zmm loop"),
                  (results.peaks.get(BIN_PEAK["avx512bw"]), "nibble-lookup zmm loop"),
                  (results.peaks.get(BIN_PEAK["avx2"]), "nibble-lookup ymm loop")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
