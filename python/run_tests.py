"""Runs python/test_gemmi8.py: one line per test, then the skipped tests on a line
of their own and, last, "N passed, N failed". Exits 1 on any failure or error.

    GEMMI8_LIBRARY=$PWD/libgemmi8.so /usr/bin/python3 python/run_tests.py [-v] [pattern]

A pattern (a substring of a test's id) runs only the matching tests.
"""

import os
import sys
import time
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class _Result(unittest.TestResult):
    def __init__(self, verbose):
        super().__init__()
        self.verbose = verbose
        self.passed = []
        self._t0 = 0.0

    def startTest(self, test):
        super().startTest(test)
        self._t0 = time.perf_counter()

    def _line(self, test, what):
        if self.verbose or what != "ok":
            print("%-4s %s (%.2f s)" % (what, test.id(), time.perf_counter() - self._t0),
                  flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed.append(test)
        self._line(test, "ok")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(test, "FAIL")
        print(self.failures[-1][1], flush=True)

    def addError(self, test, err):
        super().addError(test, err)
        self._line(test, "ERROR")
        print(self.errors[-1][1], flush=True)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(test, "skip")
        print("     (%s)" % reason, flush=True)


def _flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _flatten(t)
        else:
            yield t


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    verbose = "-v" in argv
    patterns = [a for a in argv if not a.startswith("-")]
    import gemmi8
    import test_gemmi8
    print("gemmi8 %s (%s), kernels %s, types %s" % (
        gemmi8.version(), gemmi8.library_path, gemmi8.isa_name(),
        " ".join(gemmi8.types_compiled())), flush=True)
    suite = unittest.defaultTestLoader.loadTestsFromModule(test_gemmi8)
    tests = [t for t in _flatten(suite) if not patterns or any(p in t.id() for p in patterns)]
    result = _Result(verbose)
    t0 = time.perf_counter()
    unittest.TestSuite(tests).run(result)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print("%.1f s" % (time.perf_counter() - t0))
    print("%d skipped" % len(result.skipped))
    print("%d passed, %d failed" % (len(result.passed), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
