"""Python call overhead of the gemmi8 module on small GEMMs.

For a few small shapes, the microseconds of one gemmi8_qu8s8_gemm call (fp32
requantization, per tensor) made
  C        from C (python/overhead.c, compiled here with cc, loading the same library);
  ctypes   through the module's ctypes prototype, its arguments made once beforehand
           (the lower bound of any call from Python);
  module   through gemmi8.qu8s8_gemm(a, packed, requant) (checks, new output array);
  out=     the same with a preallocated output (gemmi8.qu8s8_gemm(..., out=c));
and each one's excess over C. Best of 5 rounds of about 0.1 s each.

    GEMMI8_LIBRARY=$PWD/libgemmi8.so /usr/bin/python3 python/overhead.py
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import gemmi8  # noqa: E402

SHAPES = [(1, 16, 16), (4, 64, 64), (64, 64, 64)]


def per_call(fn, rounds=5, target=0.1):
    """Best microseconds per call of fn() over rounds of about target seconds."""
    calls = 100
    while True:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - t0 > target / 5:
            break
        calls *= 4
    calls *= 5
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6


def build_c(tmp):
    cc = os.environ.get("CC", "cc")
    exe = os.path.join(tmp, "overhead")
    cmd = [cc, "-std=c11", "-O2", "-D_GNU_SOURCE", "-I", os.path.join(HERE, os.pardir, "include"),
           os.path.join(HERE, "overhead.c"), "-o", exe, "-ldl"]
    subprocess.run(cmd, check=True)
    return exe


def main():
    lib = os.path.abspath(gemmi8.library_path)
    print("gemmi8 %s, %s, kernels %s; Python %s, numpy %s" % (
        gemmi8.version(), lib, gemmi8.isa_name(), sys.version.split()[0], np.__version__))
    tmp = tempfile.mkdtemp(prefix="gemmi8-overhead-")
    try:
        exe = build_c(tmp)
        print("%-14s %9s %9s %9s %9s   %s" % ("M x N x K", "C us", "ctypes us", "module us",
                                              "out= us", "excess over C: ctypes / module / out="))
        rng = np.random.default_rng(1)
        for m, n, k in SHAPES:
            c_us = float(subprocess.run([exe, lib, str(m), str(n), str(k)], check=True,
                                        capture_output=True, text=True).stdout)
            a = rng.integers(0, 256, (m, k), dtype=np.uint8)
            b = rng.integers(-128, 128, (n, k), dtype=np.int8)
            p = gemmi8.pack_qu8s8(b, 128)
            rq = gemmi8.Requant(0.001, 128, mode="fp32")
            c = np.empty((m, n), np.uint8)
            # the raw prototype, every argument made beforehand
            raw = gemmi8._f.qu8s8_gemm
            args = (m, n, k, a.ctypes.data, k, p.address, rq._ptr(n, 0, "x"), c.ctypes.data, n)
            assert raw(*args) == 0
            assert np.array_equal(gemmi8.qu8s8_gemm(a, p, rq), c)
            ctypes_us = per_call(lambda: raw(*args))
            module_us = per_call(lambda: gemmi8.qu8s8_gemm(a, p, rq))
            out_us = per_call(lambda: gemmi8.qu8s8_gemm(a, p, rq, out=c))
            print("%-14s %9.2f %9.2f %9.2f %9.2f   +%.2f / +%.2f / +%.2f" % (
                "%d x %d x %d" % (m, n, k), c_us, ctypes_us, module_us, out_us,
                ctypes_us - c_us, module_us - c_us, out_us - c_us))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
