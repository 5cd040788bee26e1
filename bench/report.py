#!/usr/bin/env python3
"""Turns gemmi8-bench's Google Benchmark JSON into a markdown table.

    python3 bench/report.py build/bench.json [--markdown build/bench.md]
                            [--data build/bench.dat]

Rows are the shapes (Row x Col x Depth = N x M x K), in the order they were
registered; columns are every <library>/<variant> series, in registration order,
holding the median GOPS over the repetitions; then the derived columns listed in
DERIVED (ratios). A last row gives each column's geometric mean over the shapes.
--data writes the same medians as a tab-separated table for bench/chart.gp.

Python 3 standard library only.

Extending it (issue 3): a ratio to the best peer is one more DERIVED entry, e.g.
    Ratio("gemmi8 qu8 / best peer", best("gemmi8", "qu8"), best_other_than("gemmi8"))
and a percent of a measured peak can read the peak benchmarks' medians from
Results.peaks (series whose library is in PEAK_LIBRARIES are kept out of the
table and collected there).
"""

import argparse
import json
import math
import statistics
import sys

# Series whose library is listed here are measurements of a machine limit (a
# register-only loop), not GEMMs: they are collected in Results.peaks.
PEAK_LIBRARIES = ("peak",)


class Results:
    """Median GOPS per (series, shape), from one benchmark JSON file."""

    def __init__(self, doc):
        self.context = doc.get("context", {})
        self.series = []  # (library, variant), in registration order
        self.shapes = []  # "RowxColxDepth", in registration order
        self.gops = {}  # (series, shape) -> median GOPS
        self.reps = {}  # (series, shape) -> repetitions found
        self.errors = {}  # (series, shape) -> message
        self.peaks = {}  # variant -> median GOPS of a peak benchmark

        samples = {}  # key -> list of GOPS, one per repetition
        medians = {}  # key -> median aggregate (used if no repetition is kept)
        order = {}  # key -> family index (registration order)
        for run in doc.get("benchmarks", []):
            key = split_name(run.get("run_name") or run.get("name", ""))
            if key is None:
                continue
            order.setdefault(key, run.get("family_index", len(order)))
            if run.get("error_occurred"):
                self.errors[key] = run.get("error_message", "error")
                continue
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
            if shape not in self.shapes:
                self.shapes.append(shape)
            if value is not None:
                self.gops[((library, variant), shape)] = value
                self.reps[((library, variant), shape)] = count

    def row(self, shape):
        """{series: median GOPS} for one shape (series without a result left out)."""
        return {s: self.gops[(s, shape)] for s in self.series if (s, shape) in self.gops}


def split_name(name):
    """'gemmi8/qu8-avx2/500x500x500[/real_time]' -> ('gemmi8', 'qu8-avx2', '500x500x500')."""
    parts = [p for p in name.split("/") if p not in ("real_time", "manual_time")]
    if len(parts) != 3:
        return None
    return tuple(parts)


# ---- derived columns ------------------------------------------------------------
# A selector takes a row {(library, variant): GOPS} and returns (GOPS, label) or
# None; a Ratio divides two selectors.


def exact(library, variant):
    def select(row):
        value = row.get((library, variant))
        return None if value is None else (value, variant)

    return select


def best(library, base):
    """Best of library's variants named base or base-<isa> (e.g. qu8-avx512vnni)."""

    def select(row):
        found = [
            (v, variant)
            for (lib, variant), v in row.items()
            if lib == library and (variant == base or variant.startswith(base + "-"))
        ]
        return max(found) if found else None

    return select


def best_other_than(library):
    """Best series of any other library (peers), labelled library/variant."""

    def select(row):
        found = [(v, lib + "/" + variant) for (lib, variant), v in row.items() if lib != library]
        return max(found) if found else None

    return select


class Ratio:
    def __init__(self, header, numerator, denominator):
        self.header = header
        self.numerator = numerator
        self.denominator = denominator

    def value(self, row):
        num, den = self.numerator(row), self.denominator(row)
        if num is None or den is None or den[0] <= 0:
            return None, None
        return num[0] / den[0], num[1]

    def cell(self, row):
        ratio, label = self.value(row)
        if ratio is None:
            return "-"
        return "%.2f (%s)" % (ratio, label) if label else "%.2f" % ratio


DERIVED = [
    Ratio("gemmi8 best qu8 / openblas sgemm", best("gemmi8", "qu8"), exact("openblas", "sgemm")),
]


# ---- output ---------------------------------------------------------------------


def fmt_gops(value):
    if value is None:
        return "-"
    return "%.1f" % value if value >= 100 else "%.2f" % value


def shape_label(shape):
    return shape.replace("x", " x ")


def geomean(values):
    values = [v for v in values if v is not None and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def markdown(results):
    ctx = results.context
    lines = ["# gemmi8 benchmark", ""]
    lines.append(
        "Median GOPS (2 * M * N * K / s / 1e9, single thread) over the repetitions of"
        " each benchmark, all libraries interleaved in one run. Shapes are"
        " Row x Col x Depth = N (output channels) x M (pixels) x K (depth; bits for bin)."
    )
    lines.append("")
    reps = sorted({r for r in results.reps.values() if r is not None})
    facts = [
        ("date", ctx.get("date")),
        ("host", ctx.get("host_name")),
        ("CPUs", "%s x %s MHz" % (ctx.get("num_cpus", "?"), ctx.get("mhz_per_cpu", "?"))),
        ("repetitions", ", ".join(str(r) for r in reps) if reps else None),
        ("gemmi8", "%s; kernel sets %s (default %s)"
         % (ctx.get("gemmi8_version", "?"), ctx.get("gemmi8_isas", "?"),
            ctx.get("gemmi8_isa_default", "?"))),
        ("OpenBLAS", "core %s (OPENBLAS_CORETYPE=%s), %s thread(s); %s"
         % (ctx.get("openblas_core", "?"), ctx.get("openblas_coretype_env", "?"),
            ctx.get("openblas_threads", "?"), ctx.get("openblas_config", "?"))),
        ("skipped", ctx.get("skipped_cases")),
        ("Google Benchmark build", ctx.get("library_build_type")),
    ]
    for key, value in facts:
        if value is not None:
            lines.append("- %s: %s" % (key, value))
    lines.append("")

    headers = ["Row x Col x Depth"] + ["%s %s" % s for s in results.series]
    headers += [d.header for d in DERIVED]
    lines.append("| " + " | ".join(headers) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(headers) - 1)) + "|")
    for shape in results.shapes:
        row = results.row(shape)
        cells = [shape_label(shape)]
        for s in results.series:
            failed = (s[0], s[1], shape) in results.errors and s not in row
            cells.append("error" if failed else fmt_gops(row.get(s)))
        cells += [d.cell(row) for d in DERIVED]
        lines.append("| " + " | ".join(cells) + " |")
    rows = [results.row(shape) for shape in results.shapes]
    cells = ["geometric mean"]
    cells += [fmt_gops(geomean([r.get(s) for r in rows])) for s in results.series]
    for d in DERIVED:
        mean = geomean([d.value(r)[0] for r in rows])
        cells.append("-" if mean is None else "%.2f" % mean)
    lines.append("| " + " | ".join(cells) + " |")

    if results.errors:
        lines.append("")
        lines.append("Failed:")
        for (library, variant, shape), message in sorted(results.errors.items()):
            lines.append("- %s/%s/%s: %s" % (library, variant, shape, message))
    return "\n".join(lines) + "\n"


def data_table(results):
    """Tab-separated medians for gnuplot: a header line, then one line per shape."""
    lines = ["shape\t" + "\t".join("%s/%s" % s for s in results.series)]
    for shape in results.shapes:
        row = results.row(shape)
        values = ["%.4f" % row[s] if s in row else "NaN" for s in results.series]
        lines.append(shape + "\t" + "\t".join(values))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("json", help="Google Benchmark JSON (--benchmark_out)")
    parser.add_argument("--markdown", help="also write the markdown table here")
    parser.add_argument("--data", help="write a tab-separated table for gnuplot here")
    args = parser.parse_args()

    with open(args.json) as f:
        results = Results(json.load(f))
    if not results.series:
        print("report.py: no benchmark results in %s" % args.json, file=sys.stderr)
        return 1
    text = markdown(results)
    sys.stdout.write(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    if args.data:
        with open(args.data, "w") as f:
            f.write(data_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
