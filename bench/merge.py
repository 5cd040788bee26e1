#!/usr/bin/env python3
"""Merges Google Benchmark JSON files of one benchmark binary into one:

    python3 bench/merge.py OUT.json IN.json [IN.json ...]

make bench (bench/headline.sh) runs the binary once per group (a shape, a layer),
each with its own JSON file; bench/report.py and bench/conv/report.py read one. The
context is the first file's; the benchmarks are every file's in order, their
family_index offset so that they stay distinct and in the order they ran (report.py
orders its series by it). Python 3 standard library only.
"""

import json
import sys


def main():
    if len(sys.argv) < 3:
        print("usage: python3 bench/merge.py OUT.json IN.json [IN.json ...]", file=sys.stderr)
        return 2
    merged = None
    offset = 0
    for path in sys.argv[2:]:
        with open(path) as f:
            doc = json.load(f)
        runs = doc.get("benchmarks", [])
        top = -1
        for run in runs:
            if "family_index" in run:
                top = max(top, run["family_index"])
                run["family_index"] += offset
        offset += top + 1
        if merged is None:
            merged = doc
        else:
            merged["benchmarks"].extend(runs)
    merged["context"]["merged_files"] = str(len(sys.argv) - 2)
    with open(sys.argv[1], "w") as f:
        json.dump(merged, f, indent=2)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
