"""Tests of the gemmi8 Python module against independent numpy references.

Run with python/run_tests.py (or this file): Debian's python3 and numpy only.
"""

import math
import os
import re
import sys
import unittest

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemmi8  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
F32 = np.float32
TYPES = set(gemmi8.types_compiled())
HAVE_QHELPERS = all(gemmi8.has_symbol(s) for s in (
    "gemmi8_choose_qparams", "gemmi8_quantize_f32", "gemmi8_dequantize_f32",
    "gemmi8_quantize_bias", "gemmi8_requant_scales", "gemmi8_calibration_create",
    "gemmi8_calibration_update", "gemmi8_calibration_range", "gemmi8_calibration_destroy"))
SKIP_QHELPERS = "the quantization helpers are not exported by %s" % gemmi8.library_path


def need_type(t):
    return unittest.skipUnless(t in TYPES, "type %s is not in this build" % t)


# ---------------------------------------------------------------------------------
# References (from the header's formulas, in numpy)
# ---------------------------------------------------------------------------------


def wrap32(v):
    v = np.asarray(v, np.int64)
    return ((v + 2**31) % 2**32) - 2**31


def ref_acc(a, b, a_zp, b_zp, bias):
    """acc[m][n] = bias[n] + sum_k (a - a_zp) (b[n] - b_zp[n]), modulo 2^32."""
    bz = np.broadcast_to(np.asarray(b_zp, np.int64), (b.shape[0],))
    acc = (a.astype(np.int64) - a_zp) @ (b.astype(np.int64) - bz[:, None]).T
    if bias is not None:
        acc = acc + bias.astype(np.int64)[None, :]
    return wrap32(acc)


def ref_quantize_multiplier(scale):
    if scale == 0.0:
        return 0, 0
    q, e = math.frexp(scale)
    m = math.floor(q * 2**31 + 0.5)  # q > 0: half away from zero
    if m == 2**31:
        m = 2**30
        e += 1
    if e < -31:
        return 0, 0
    if e > 30:
        return 2**31 - 1, 30
    return m, e


def ref_fixedpoint(acc, mult, shift, zp, lo, hi):
    acc = np.asarray(acc, np.int64)
    n = acc.shape[-1]
    mult = np.broadcast_to(np.asarray(mult, np.int64), (n,))
    shift = np.broadcast_to(np.asarray(shift, np.int64), (n,))
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    x = np.clip(acc * (np.int64(1) << left), -2**31, 2**31 - 1)
    ab = x * mult
    nudge = np.where(ab >= 0, np.int64(2**30), np.int64(1 - 2**30))
    q = ab + nudge
    y = np.where(q >= 0, q >> 31, -((-q) >> 31))  # truncated division by 2^31
    mask = (np.int64(1) << right) - 1
    rem = y & mask
    thr = (mask >> 1) + (y < 0)
    r = (y >> right) + (rem > thr)
    return np.clip(wrap32(zp + r), lo, hi)


def ref_fp32(acc, scale, zp, lo, hi):
    n = acc.shape[-1]
    scale = np.broadcast_to(np.asarray(scale, F32), (n,))
    prod = np.asarray(acc, np.int64).astype(F32) * scale  # one float rounding
    r = np.rint(prod).astype(np.int64)  # ties to even
    return np.clip(zp + r, lo, hi)


def bits_of(pm):
    """+1/-1 values (last axis) -> uint64 words, a set bit for -1, LSB first."""
    neg = (np.asarray(pm) < 0)
    k = neg.shape[-1]
    words = (k + 63) // 64
    padded = np.zeros(neg.shape[:-1] + (words * 64,), bool)
    padded[..., :k] = neg
    by = np.packbits(padded, axis=-1, bitorder="little")
    return np.ascontiguousarray(by).view("<u8").astype(np.uint64)


def pm_of(words, k):
    """uint64 words -> +1/-1 int64 values of the first k bits."""
    by = np.ascontiguousarray(words).astype("<u8").view(np.uint8)
    bits = np.unpackbits(by, axis=-1, bitorder="little")[..., :k]
    return 1 - 2 * bits.astype(np.int64)


def out_size(size, kernel, stride, dilation, before, after):
    return (size + before + after - dilation * (kernel - 1) - 1) // stride + 1


def ref_conv(x, w, groups, stride, dilation, pad, pad_value):
    """Direct convolution of int64 values: x (B, H, W, G*ci), w (G*co, KH, KW, ci);
    a tap in the padding reads pad_value. acc (B, OH, OW, G*co) in int64."""
    b, h, wd, c = x.shape
    oc, kh, kw, ci = w.shape
    co = oc // groups
    sh, sw = stride
    dh, dw = dilation
    pt, pl, pb, pr = pad
    oh = out_size(h, kh, sh, dh, pt, pb)
    ow = out_size(wd, kw, sw, dw, pl, pr)
    xp = np.full((b, h + pt + pb, wd + pl + pr, c), pad_value, np.int64)
    xp[:, pt:pt + h, pl:pl + wd, :] = x
    acc = np.zeros((b, oh, ow, oc), np.int64)
    for ky in range(kh):
        for kx in range(kw):
            patch = xp[:, ky * dh:ky * dh + sh * (oh - 1) + 1:sh,
                       kx * dw:kx * dw + sw * (ow - 1) + 1:sw, :]
            for g in range(groups):
                acc[..., g * co:(g + 1) * co] += patch[..., g * ci:(g + 1) * ci] @ \
                    w[g * co:(g + 1) * co, ky, kx, :].astype(np.int64).T
    return acc


def rna(v):
    """Round half away from zero, exactly (the float32 value widened to double)."""
    v = np.asarray(v, np.float64)
    return np.where(v >= 0, np.floor(v + 0.5), -np.floor(-v + 0.5))


class Case(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(sum(map(ord, self.id())) * 7919)

    def u8(self, *shape):
        return self.rng.integers(0, 256, shape, dtype=np.uint8)

    def s8(self, *shape):
        return self.rng.integers(-128, 128, shape, dtype=np.int8)

    def s32(self, lo, hi, *shape):
        return self.rng.integers(lo, hi, shape, dtype=np.int32)

    def assertEqualArrays(self, got, want, msg=None):
        got = np.asarray(got)
        want = np.asarray(want)
        self.assertEqual(got.shape, want.shape, msg)
        if not np.array_equal(got, want):
            bad = np.argwhere(got != want)[0]
            self.fail("%sfirst difference at %s: got %s, want %s (%d differ)" % (
                (msg + ": ") if msg else "", tuple(bad), got[tuple(bad)], want[tuple(bad)],
                int(np.sum(got != want))))

    def assertBitsEqual(self, got, want, msg=None):
        """float32 arrays equal bit for bit."""
        self.assertEqualArrays(np.asarray(got, F32).view(np.uint32),
                               np.asarray(want, F32).view(np.uint32), msg)

    def assertC(self, status_name, fn, *args, **kw):
        with self.assertRaises(gemmi8.Error) as cm:
            fn(*args, **kw)
        self.assertEqual(cm.exception.name, status_name)
        self.assertIn(status_name, str(cm.exception))
        self.assertTrue(str(cm.exception).startswith("gemmi8_"), str(cm.exception))
        return cm.exception


# ---------------------------------------------------------------------------------
# Library information
# ---------------------------------------------------------------------------------


class TestInfo(Case):
    def test_version_matches_header(self):
        text = open(os.path.join(HERE, os.pardir, "include", "gemmi8.h")).read()
        parts = [re.search(r"#define GEMMI8_VERSION_%s (\d+)" % p, text).group(1)
                 for p in ("MAJOR", "MINOR", "PATCH")]
        self.assertEqual(gemmi8.version(), ".".join(parts))

    def test_isa(self):
        compiled = gemmi8.isa_compiled()
        self.assertEqual(compiled[0], "generic")
        self.assertIn(gemmi8.isa_name(), compiled)
        self.assertTrue(gemmi8.isa_available("generic"))
        self.assertTrue(gemmi8.isa_available(gemmi8.isa_name()))
        self.assertC("invalid parameter", gemmi8.isa_available, "no-such-level")
        self.assertIn(gemmi8.isa_env_status(), (0, 1, 4))

    def test_types(self):
        t = gemmi8.types_compiled()
        self.assertTrue(set(t) <= {"qu8", "qs8", "qu8s8", "bin", "q4"})
        self.assertTrue(t)

    @need_type("qu8s8")
    def test_readme_example(self):
        text = open(os.path.join(HERE, "README.md")).read()
        blocks = re.findall(r"```python\n(.*?)```", text, re.S)
        self.assertEqual(len(blocks), 1)
        exec(compile(blocks[0], "python/README.md", "exec"), {})

    @need_type("qu8s8")
    def test_top_readme_example(self):
        # the repository README's Python block: the float layer through the helpers
        text = open(os.path.join(HERE, "..", "README.md")).read()
        blocks = re.findall(r"```python\n(.*?)```", text, re.S)
        self.assertEqual(len(blocks), 1)
        exec(compile(blocks[0], "README.md", "exec"), {})

    def test_types_not_compiled(self):
        # every entry point of a type the build does not hold: unsupported parameter
        calls = {"qu8": lambda: gemmi8.pack_qu8(self.u8(2, 4), 0, 0),
                 "qs8": lambda: gemmi8.pack_qs8(self.s8(2, 4), 0),
                 "qu8s8": lambda: gemmi8.pack_qu8s8(self.s8(2, 4), 0),
                 "bin": lambda: gemmi8.pack_bin(np.zeros((2, 1), np.uint64), 2, 4)}
        for t, call in calls.items():
            if t in TYPES:
                self.assertIsInstance(call(), gemmi8.PackedWeights)
            else:
                e = self.assertC("unsupported parameter", call)
                self.assertIsInstance(e, gemmi8.UnsupportedParameterError)

    def test_status_strings_and_errors(self):
        self.assertEqual(gemmi8.status_string(1), "invalid parameter")
        self.assertEqual(gemmi8.status_string(99), "unknown status")
        e = gemmi8.Error("gemmi8_x", 2)
        self.assertEqual((e.status, e.function), (2, "gemmi8_x"))
        self.assertIn(e.name, str(e))
        self.assertTrue(issubclass(gemmi8.InvalidParameterError, gemmi8.Error))


# ---------------------------------------------------------------------------------
# Requantization
# ---------------------------------------------------------------------------------


class TestRequant(Case):
    SCALES = [0.0, 1e-12, 2.0**-33, 2.0**-32 * 0.75, 0.02, 0.5, 0.75, 1.0, 1.5, 3.0,
              1 - 2.0**-40, 0.99999999999, 2.0**29, 2.0**31, 1e20, 0.0003051, 123.456]

    def test_quantize_multiplier(self):
        scales = self.SCALES + list(self.rng.uniform(1e-6, 4.0, 200))
        for s in scales:
            self.assertEqual(gemmi8.quantize_multiplier(s), ref_quantize_multiplier(s), s)

    def test_quantize_multipliers(self):
        scales = np.array(self.SCALES + list(self.rng.uniform(1e-6, 4.0, 50)))
        m, s = gemmi8.quantize_multipliers(scales)
        self.assertEqual(m.dtype, np.int32)
        for i, sc in enumerate(scales):
            self.assertEqual((int(m[i]), int(s[i])), ref_quantize_multiplier(float(sc)))

    def test_errors(self):
        self.assertC("invalid parameter", gemmi8.quantize_multiplier, -1.0)
        self.assertC("invalid parameter", gemmi8.quantize_multiplier, math.nan)
        self.assertC("invalid parameter", gemmi8.quantize_multipliers, np.array([1.0, math.inf]))
        with self.assertRaises(TypeError):
            gemmi8.quantize_multipliers(np.array([1.0], np.float32))
        with self.assertRaises(TypeError):
            gemmi8.quantize_multiplier("1.0")
        with self.assertRaises(ValueError):
            gemmi8.Requant(0.1, mode="other")
        with self.assertRaises(ValueError):
            gemmi8.Requant(0.1, zero_point=2**40)
        with self.assertRaises(TypeError):
            gemmi8.Requant(np.array([0.1], np.float64), mode="fp32")
        with self.assertRaises(ValueError):
            gemmi8.Requant(multiplier=2**30)  # no shift

    def test_requant_object(self):
        r = gemmi8.Requant(0.02, 128)
        self.assertEqual(r.mode, gemmi8.REQUANT_FIXEDPOINT)
        self.assertEqual((int(r.multiplier[0]), int(r.shift[0])), ref_quantize_multiplier(0.02))
        self.assertFalse(r.per_channel)
        r = gemmi8.Requant(np.array([0.1, 0.2], F32), 3, 0, 100, mode="fp32")
        self.assertTrue(r.per_channel)
        self.assertEqual(r.channels, 2)
        self.assertIn("fp32", repr(r))


# ---------------------------------------------------------------------------------
# 8-bit GEMMs
# ---------------------------------------------------------------------------------

SHAPES = [(1, 1, 1), (1, 16, 16), (3, 7, 13), (5, 33, 64), (17, 40, 100), (64, 64, 64)]
GEMM_TYPES = {
    # per type: (A dtype, B dtype, signed output)
    "qu8": (np.uint8, np.uint8, False),
    "qs8": (np.int8, np.int8, True),
    "qu8s8": (np.uint8, np.int8, False),
}


class TestGemm8(Case):
    def data(self, t, m, n, k, per_channel_bzp=False):
        adt, bdt, signed = GEMM_TYPES[t]
        a = self.s8(m, k) if adt == np.int8 else self.u8(m, k)
        b = self.s8(n, k) if bdt == np.int8 else self.u8(n, k)
        azp = int(self.rng.integers(-128, 128) if signed else self.rng.integers(0, 256))
        if t == "qu8":
            bzp = self.u8(n) if per_channel_bzp else int(self.rng.integers(0, 256))
        else:
            bzp = 0
        bias = self.s32(-50000, 50000, n)
        return a, b, azp, bzp, bias

    def pack(self, t, b, azp, bzp, bias, **kw):
        if t == "qu8":
            return gemmi8.pack_qu8(b, azp, bzp, bias, **kw)
        return getattr(gemmi8, "pack_" + t)(b, azp, bias, **kw)

    def check_type(self, t):
        adt, bdt, signed = GEMM_TYPES[t]
        lo, hi = (-128, 127) if signed else (0, 255)
        gemm = getattr(gemmi8, t + "_gemm")
        gemm_s32 = getattr(gemmi8, t + "_gemm_s32")
        for (m, n, k) in SHAPES:
            for per_bzp in (False, True):
                a, b, azp, bzp, bias = self.data(t, m, n, k, per_bzp)
                p = self.pack(t, b, azp, bzp, bias)
                self.assertEqual((p.kind, p.n, p.k), (t, n, k))
                acc = ref_acc(a, b, azp, bzp, bias)
                self.assertEqualArrays(gemm_s32(a, p), acc, "%s s32 %s" % (t, (m, n, k)))
                zp = int(self.rng.integers(lo, hi + 1))
                cmin = int(self.rng.integers(lo, lo + 20))
                cmax = int(self.rng.integers(hi - 20, hi + 1))
                # fixed point, per tensor and per channel
                spread = 40.0 / (float(acc.std()) + 1.0)  # outputs mostly in the window
                s = float(self.rng.uniform(0.5, 1.5) * spread)
                rq = gemmi8.Requant(s, zp, cmin, cmax)
                want = ref_fixedpoint(acc, rq.multiplier, rq.shift, zp, cmin, cmax)
                got = gemm(a, p, rq)
                self.assertEqual(got.dtype, np.dtype(adt))
                self.assertEqualArrays(got, want, "%s fixedpoint %s" % (t, (m, n, k)))
                sc = self.rng.uniform(0.5, 1.5, n) * spread
                rq = gemmi8.Requant(sc, zp, cmin, cmax)
                want = ref_fixedpoint(acc, rq.multiplier, rq.shift, zp, cmin, cmax)
                self.assertEqualArrays(gemm(a, p, rq), want, "%s fixedpoint/ch" % t)
                # fp32, per tensor and per channel; default clamp window
                rq = gemmi8.Requant(s, zp, mode="fp32")
                self.assertEqualArrays(gemm(a, p, rq), ref_fp32(acc, s, zp, lo, hi),
                                       "%s fp32 %s" % (t, (m, n, k)))
                scf = sc.astype(F32)
                rq = gemmi8.Requant(scf, zp, cmin, cmax, mode="fp32")
                self.assertEqualArrays(gemm(a, p, rq), ref_fp32(acc, scf, zp, cmin, cmax),
                                       "%s fp32/ch" % t)
                if t != "qu8":
                    break

    @need_type("qu8")
    def test_qu8(self):
        self.check_type("qu8")

    @need_type("qs8")
    def test_qs8(self):
        self.check_type("qs8")

    @need_type("qu8s8")
    def test_qu8s8(self):
        self.check_type("qu8s8")

    @need_type("qu8")
    def test_fixedpoint_edges(self):
        # shifts left and right, scales near and above 1, wrapping zero point addition
        m, n, k = 4, 8, 32
        a, b, azp, bzp, bias = self.data("qu8", m, n, k)
        p = self.pack("qu8", b, azp, bzp, bias)
        acc = ref_acc(a, b, azp, bzp, bias)
        for mult, shift in [(2**30, 0), (2**31 - 1, 30), (1518500250, -31), (2**30 + 1, 5),
                            (1073741824, -1), (1, 0), (0, 0), (1932735283, -12)]:
            rq = gemmi8.Requant(multiplier=mult, shift=shift, zero_point=128)
            want = ref_fixedpoint(acc, mult, shift, 128, 0, 255)
            self.assertEqualArrays(gemmi8.qu8_gemm(a, p, rq), want, "%d %d" % (mult, shift))
        mults = self.rng.integers(0, 2**31, n).astype(np.int32)
        shifts = self.rng.integers(-31, 31, n).astype(np.int32)
        rq = gemmi8.Requant(multiplier=mults, shift=shifts, zero_point=7, min=3, max=250)
        self.assertEqualArrays(gemmi8.qu8_gemm(a, p, rq),
                               ref_fixedpoint(acc, mults, shifts, 7, 3, 250))

    @need_type("qu8s8")
    def test_layout_kn_and_strided_views(self):
        m, n, k = 9, 20, 37
        a, b, azp, _, bias = self.data("qu8s8", m, n, k)
        p_nk = gemmi8.pack_qu8s8(b, azp, bias)
        p_kn = gemmi8.pack_qu8s8(np.ascontiguousarray(b.T), azp, bias, layout="kn")
        self.assertEqual((p_kn.n, p_kn.k), (n, k))
        acc = ref_acc(a, b, azp, 0, bias)
        self.assertEqualArrays(gemmi8.qu8s8_gemm_s32(a, p_kn), acc)
        # a row-strided A (a slice of a wider matrix) and a row-strided output
        wide = self.u8(m, k + 11)
        wide[:, 3:3 + k] = a
        aview = wide[:, 3:3 + k]
        outbig = np.full((m, n + 5), -1, np.int32)
        got = gemmi8.qu8s8_gemm_s32(aview, p_nk, out=outbig[:, 2:2 + n])
        self.assertTrue(np.shares_memory(got, outbig))
        self.assertEqualArrays(outbig[:, 2:2 + n], acc)
        self.assertTrue(np.all(outbig[:, :2] == -1) and np.all(outbig[:, 2 + n:] == -1))
        # B as a strided view too
        bwide = self.s8(n, k + 3)
        bwide[:, :k] = b
        p2 = gemmi8.pack_qu8s8(bwide[:, :k], azp, bias)
        self.assertEqual(p2.tobytes(), p_nk.tobytes())
        # every other row of A: stride 2k
        self.assertEqualArrays(gemmi8.qu8s8_gemm_s32(wide[::2, 3:3 + k], p_nk), acc[::2])
        # a read-only A; B and bias freed after packing (the packed buffer is its own)
        ro = a.copy()
        ro.flags.writeable = False
        self.assertEqualArrays(gemmi8.qu8s8_gemm_s32(ro, p_nk), acc)
        p3 = gemmi8.pack_qu8s8(b.copy(), azp, bias.copy())
        import gc
        gc.collect()
        self.assertEqualArrays(gemmi8.qu8s8_gemm_s32(a, p3), acc)
        # an int32 output not aligned to its elements
        raw = np.zeros(m * n * 4 + 4, np.uint8)
        unaligned = raw[1:1 + m * n * 4].view(np.int32).reshape(m, n)
        with self.assertRaises(ValueError):
            gemmi8.qu8s8_gemm_s32(a, p_nk, out=unaligned)

    @need_type("qu8")
    def test_pack_buffer_and_bytes(self):
        m, n, k = 6, 12, 40
        a, b, azp, bzp, bias = self.data("qu8", m, n, k, True)
        size = gemmi8.pack_size("qu8", n, k)
        buf = gemmi8.aligned_empty(size + 64)
        self.assertEqual(buf.ctypes.data % 64, 0)
        p1 = gemmi8.pack_qu8(b, azp, bzp, bias, buffer=buf)
        p2 = gemmi8.pack_qu8(b, azp, bzp, bias)
        self.assertEqual(p1.tobytes(), p2.tobytes())
        self.assertEqual(len(p1.tobytes()), size)
        p3 = gemmi8.PackedWeights.frombytes("qu8", n, k, p2.tobytes())
        del p2
        self.assertEqualArrays(gemmi8.qu8_gemm_s32(a, p3), ref_acc(a, b, azp, bzp, bias))
        self.assertEqualArrays(gemmi8.qu8_gemm_s32(a, p1), ref_acc(a, b, azp, bzp, bias))
        with self.assertRaises(ValueError):
            gemmi8.pack_qu8(b, azp, bzp, bias, buffer=gemmi8.aligned_empty(size - 1))
        with self.assertRaises(ValueError):
            gemmi8.pack_qu8(b, azp, bzp, bias, buffer=gemmi8.aligned_empty(size + 64)[1:])

    @need_type("qu8s8")
    def test_bad_arguments_raise_before_c(self):
        a = self.u8(4, 16)
        b = self.s8(8, 16)
        p = gemmi8.pack_qu8s8(b, 128)
        rq = gemmi8.Requant(0.01, 128)
        with self.assertRaises(TypeError):
            gemmi8.qu8s8_gemm(a.astype(np.int8), p, rq)  # int8 for uint8
        with self.assertRaises(TypeError):
            gemmi8.qu8s8_gemm(a.tolist(), p, rq)
        with self.assertRaises(TypeError):
            gemmi8.pack_qu8s8(b.astype(np.uint8), 128)
        with self.assertRaises(ValueError):
            gemmi8.qu8s8_gemm(self.u8(4, 15), p, rq)  # K mismatch
        with self.assertRaises(ValueError):
            gemmi8.qu8s8_gemm(a.reshape(4, 4, 4), p, rq)
        with self.assertRaises(ValueError):
            gemmi8.qu8s8_gemm(self.u8(4, 32)[:, ::2], p, rq)  # column stride 2
        with self.assertRaises(ValueError):
            gemmi8.qu8s8_gemm(np.asfortranarray(a), p, rq)
        with self.assertRaises(ValueError):
            gemmi8.qu8s8_gemm(a[::-1], p, rq)  # negative row stride
        with self.assertRaises(ValueError):
            gemmi8.qu8s8_gemm(a, p, rq, out=np.empty((4, 9), np.uint8))
        with self.assertRaises(TypeError):
            gemmi8.qu8s8_gemm(a, p, rq, out=np.empty((4, 8), np.int8))
        ro = np.empty((4, 8), np.uint8)
        ro.flags.writeable = False
        with self.assertRaises(ValueError):
            gemmi8.qu8s8_gemm(a, p, rq, out=ro)
        with self.assertRaises(ValueError):
            gemmi8.qu8s8_gemm(a, p, gemmi8.Requant(np.full(7, 0.01), 128))  # 7 channels, N 8
        with self.assertRaises(TypeError):
            gemmi8.qu8s8_gemm(a, b, rq)  # not packed
        if "qs8" in TYPES:
            with self.assertRaises(ValueError):
                gemmi8.qs8_gemm_s32(a.view(np.int8), p)  # packed for qu8s8
        with self.assertRaises(ValueError):
            gemmi8.pack_qu8s8(b, 256)  # a_zero_point out of uint8
        with self.assertRaises(ValueError):
            gemmi8.pack_qu8s8(b, 128, bias=np.zeros(7, np.int32))
        with self.assertRaises(TypeError):
            gemmi8.pack_qu8s8(b, 128, bias=np.zeros(8, np.int64))
        with self.assertRaises(ValueError):
            gemmi8.pack_qu8s8(b, 128, layout="xy")

    @need_type("qu8s8")
    def test_c_errors(self):
        a = self.u8(4, 16)
        b = self.s8(8, 16)
        p = gemmi8.pack_qu8s8(b, 128)
        e = self.assertC("invalid parameter", gemmi8.qu8s8_gemm, a, p,
                         gemmi8.Requant(0.01, 128, 200, 100))  # min > max
        self.assertEqual(e.status, gemmi8.STATUS_INVALID_PARAMETER)
        self.assertIsInstance(e, gemmi8.InvalidParameterError)
        self.assertEqual(str(e), "gemmi8_qu8s8_gemm: invalid parameter")
        self.assertC("invalid parameter", gemmi8.qu8s8_gemm, a, p,
                     gemmi8.Requant(0.01, 300, 0, 255))  # zero point outside 0..255
        self.assertC("invalid parameter", gemmi8.qu8s8_gemm, a, p,
                     gemmi8.Requant(-0.5, 128, mode="fp32"))
        self.assertC("invalid parameter", gemmi8.qu8s8_gemm, a, p,
                     gemmi8.Requant(multiplier=2**30, shift=31))
        self.assertC("invalid parameter", gemmi8.qu8s8_gemm_s32, self.u8(0, 16), p)  # M = 0
        self.assertC("invalid parameter", gemmi8.pack_qu8s8, self.s8(0, 16), 128)
        e = self.assertC("unsupported parameter", gemmi8.pack_qu8s8,
                         self.s8(1, gemmi8.QU8S8_MAX_K + 1), 128)
        self.assertIsInstance(e, gemmi8.UnsupportedParameterError)
        # a damaged packed buffer
        raw = bytearray(p.tobytes())
        raw[5] ^= 0xFF
        bad = gemmi8.PackedWeights.frombytes("qu8s8", 8, 16, bytes(raw))
        self.assertC("invalid parameter", gemmi8.qu8s8_gemm_s32, a, bad)


# ---------------------------------------------------------------------------------
# Rows quantized at run time
# ---------------------------------------------------------------------------------


def ref_rows_range(x):
    """rmin, rmax of each row: its min and max, widened to take in 0."""
    f = F32
    lo = x.min(axis=1)
    hi = x.max(axis=1)
    return np.where(lo < f(0), lo, f(0)).astype(f), np.where(hi > f(0), hi, f(0)).astype(f)


def ref_rows_u8(x):
    f = F32
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rmin, rmax = ref_rows_range(x)
        scale = np.where(rmax == rmin, f(1), (rmax - rmin) / f(255)).astype(f)
        z = (f(0) - rmin / scale).astype(f)
        z = np.where(z < f(255), z, f(255))
        z = np.where(f(0) < z, z, f(0))
        zp = np.rint(z).astype(f)
        q = (x / scale[:, None]).astype(f)
        q = np.where(q > -zp[:, None], q, -zp[:, None])
        q = np.where(q < f(255) - zp[:, None], q, f(255) - zp[:, None])
        y = np.rint(q) + zp[:, None]
    return y.astype(np.uint8), scale, zp.astype(np.int32)


def ref_rows_s8(x):
    f = F32
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rmin, rmax = ref_rows_range(x)
        inv = np.where(rmin == rmax, f(1), f(255) / (rmax - rmin)).astype(f)
        dmin = (rmin * inv).astype(f)
        dmax = (rmax * inv).astype(f)
        z = np.where((f(-128) + dmin) + (f(127) + dmax) > f(0), f(-128) - dmin,
                     f(127) - dmax).astype(f)
        z = np.where(f(-128) < z, z, f(-128))
        z = np.where(f(127) < z, f(127), z)
        zp = np.rint(z).astype(f)
        scale = (f(1) / inv).astype(f)
        q = (x * inv[:, None]).astype(f)
        q = np.where(q > f(-128) - zp[:, None], q, f(-128) - zp[:, None])
        q = np.where(q < f(127) - zp[:, None], q, f(127) - zp[:, None])
        y = np.rint(q) + zp[:, None]
    return y.astype(np.int8), scale, zp.astype(np.int32)


def ref_qd_f32(acc, a_scale, b_scale, bias, lo, hi):
    v = acc.astype(F32) * a_scale[:, None]
    v = v * b_scale[None, :]
    v = v + (np.zeros(acc.shape[1], F32) if bias is None else bias)[None, :]
    v = np.where(F32(lo) > v, F32(lo), v)
    v = np.where(F32(hi) < v, F32(hi), v)
    return v.astype(F32)


class TestQd8(Case):
    def rows(self, m, k):
        x = self.rng.normal(0, 3, (m, k)).astype(F32)
        x[0, :] = 0  # a row of zeros
        if m > 2:
            x[1, :] = np.abs(x[1, :])  # all positive
            x[2, :] = -np.abs(x[2, :]) - 1  # all negative
        return x

    def test_quantize_rows(self):
        for m, k in [(1, 1), (3, 7), (8, 64), (5, 300)]:
            x = self.rows(m, k)
            for fn, ref in ((gemmi8.quantize_rows_u8, ref_rows_u8),
                            (gemmi8.quantize_rows_s8, ref_rows_s8)):
                y, s, z = fn(x)
                wy, ws, wz = ref(x)
                self.assertEqualArrays(y, wy, fn.__name__)
                self.assertBitsEqual(s, ws, fn.__name__)
                self.assertEqualArrays(z, wz, fn.__name__)
        # strided x and out
        x = self.rows(4, 30)
        wide = np.zeros((4, 40), F32)
        wide[:, 5:35] = x
        outw = np.zeros((4, 33), np.uint8)
        y, s, z = gemmi8.quantize_rows_u8(wide[:, 5:35], out=outw[:, 1:31])
        self.assertEqualArrays(outw[:, 1:31], ref_rows_u8(x)[0])
        self.assertC("invalid parameter", gemmi8.quantize_rows_s8,
                     np.array([[1.0, np.nan]], F32))
        with self.assertRaises(TypeError):
            gemmi8.quantize_rows_u8(x.astype(np.float64))

    def check_gemm(self, kind, m, n, k, pool=None):
        signed = kind == "qd8"
        b = self.s8(n, k)
        bscale = self.rng.uniform(0.001, 0.1, n).astype(F32)
        bias = self.rng.normal(0, 1, n).astype(F32)
        pack = gemmi8.pack_qd8 if signed else gemmi8.pack_qdu8
        p = pack(b, bscale, bias)
        p0 = pack(b, bscale)  # no bias
        x = self.rows(m, k)
        y, s, z = (ref_rows_s8 if signed else ref_rows_u8)(x)
        acc = (y.astype(np.int64) - z[:, None]) @ b.astype(np.int64).T
        gemm = gemmi8.qd8_gemm_f32 if signed else gemmi8.qdu8_gemm_f32
        linear = gemmi8.qd8_linear_f32 if signed else gemmi8.qdu8_linear_f32
        want = ref_qd_f32(acc, s, bscale, bias, -np.inf, np.inf)
        self.assertBitsEqual(gemm(y, s, z, p, pool=pool), want, kind)
        self.assertBitsEqual(gemm(y, s, z, p0, pool=pool),
                             ref_qd_f32(acc, s, bscale, None, -np.inf, np.inf), kind)
        want = ref_qd_f32(acc, s, bscale, bias, -0.5, 0.75)
        self.assertBitsEqual(gemm(y, s, z, p, -0.5, 0.75, pool=pool), want, kind + " clamp")
        self.assertBitsEqual(linear(x, p, -0.5, 0.75, pool=pool), want, kind + " linear")
        ws = gemmi8.linear_workspace(m, k)
        self.assertBitsEqual(linear(x, p, -0.5, 0.75, workspace=ws, pool=pool), want)
        return p

    @need_type("qs8")
    def test_qd8(self):
        for m, n, k in [(1, 1, 1), (1, 16, 16), (4, 33, 70), (19, 64, 128)]:
            self.check_gemm("qd8", m, n, k)

    @need_type("qu8s8")
    def test_qdu8(self):
        for m, n, k in [(1, 1, 1), (1, 16, 16), (4, 33, 70), (19, 64, 128)]:
            self.check_gemm("qdu8", m, n, k)

    @need_type("qs8")
    def test_qd8_errors(self):
        b = self.s8(8, 16)
        p = gemmi8.pack_qd8(b, np.ones(8, F32))
        y, s, z = gemmi8.quantize_rows_s8(self.rows(2, 16))
        self.assertC("invalid parameter", gemmi8.qd8_gemm_f32, y, s, z, p, 1.0, 0.0)
        self.assertC("invalid parameter", gemmi8.pack_qd8, b,
                     np.array([1, 1, 1, np.inf, 1, 1, 1, 1], F32))
        with self.assertRaises(ValueError):
            gemmi8.qd8_gemm_f32(y, s[:1], z, p)
        with self.assertRaises(TypeError):
            gemmi8.qd8_gemm_f32(y, s, z.astype(np.int64), p)
        if "qu8s8" in TYPES:
            with self.assertRaises(ValueError):
                gemmi8.qdu8_gemm_f32(y.view(np.uint8), s, z, p)  # packed for qd8
        with self.assertRaises(ValueError):
            gemmi8.qd8_linear_f32(self.rows(2, 16), p, workspace=gemmi8.aligned_empty(64)[1:])

    @need_type("qs8")
    @need_type("q4")
    def test_q4(self):
        for n, k, block, signed in [(5, 64, 0, True), (9, 100, 32, False),
                                    (16, 256, 64, True), (3, 33, 32, True), (7, 128, 128, False)]:
            kb = (k + 1) // 2
            b = self.u8(n, kb)
            if k % 2:
                b[:, -1] &= 0x0F  # the unused high nibble
            blocks = 1 if block == 0 else (k + block - 1) // block
            scale = self.rng.uniform(0.01, 0.2, (n, blocks)).astype(F32)
            zp = None if signed else self.rng.integers(0, 16, (n, blocks)).astype(np.uint8)
            bias = self.rng.normal(0, 1, n).astype(F32)
            p = gemmi8.pack_qd8_q4(b, k, scale, zp, bias, block=block)
            self.assertEqual(p.kind, "qd8")
            # nibbles
            nib = np.zeros((n, k), np.int64)
            nib[:, 0::2] = (b & 0x0F)[:, :(k + 1) // 2]
            nib[:, 1::2] = (b >> 4)[:, :k // 2]
            if signed:
                q = np.where(nib >= 8, nib - 16, nib)
            m = 6
            x = self.rows(m, k)
            y, s, z = ref_rows_s8(x)
            f = np.zeros((m, n), F32)
            bl = k if block == 0 else block
            for j in range(blocks):
                sl = slice(j * bl, min(k, (j + 1) * bl))
                qq = q[:, sl] if signed else nib[:, sl] - zp[:, j:j + 1].astype(np.int64)
                acc = (y[:, sl].astype(np.int64) - z[:, None]) @ qq.T
                f = (f + (acc.astype(F32) * scale[None, :, j]).astype(F32)).astype(F32)
            want = ((f * s[:, None]).astype(F32) + bias[None, :]).astype(F32)
            self.assertBitsEqual(gemmi8.qd8_gemm_f32(y, s, z, p), want,
                                 "q4 %s" % ((n, k, block, signed),))
            self.assertBitsEqual(gemmi8.qd8_linear_f32(x, p), want)
        with self.assertRaises(ValueError):
            gemmi8.pack_qd8_q4(self.u8(4, 8), 17, np.ones((4, 1), F32))  # cols != ceil(k/2)
        self.assertC("invalid parameter", gemmi8.pack_qd8_q4, self.u8(4, 8), 16,
                     np.ones((4, 1), F32), block=48)


# ---------------------------------------------------------------------------------
# Binary
# ---------------------------------------------------------------------------------


class TestBinary(Case):
    def pm(self, *shape):
        return 1 - 2 * self.rng.integers(0, 2, shape).astype(np.int64)

    def test_pack_rows(self):
        for rows, k in [(1, 1), (3, 63), (4, 64), (5, 65), (2, 200)]:
            x = self.rng.normal(0, 1, (rows, k)).astype(F32)
            x[0, 0] = -0.0
            self.assertEqualArrays(gemmi8.bin_pack_rows_f32(x), bits_of(np.where(x < 0, -1, 1)))
            xs = self.s8(rows, k)
            self.assertEqualArrays(gemmi8.bin_pack_rows_s8(xs), bits_of(np.where(xs < 0, -1, 1)))
            xu = self.u8(rows, k)
            self.assertEqualArrays(gemmi8.bin_pack_rows_u8(xu, 100),
                                   bits_of(np.where(xu < 100, -1, 1)))
        x = np.array([[np.nan, -1.0, 1.0]], F32)
        self.assertEqualArrays(gemmi8.bin_pack_rows_f32(x), bits_of([[1, -1, 1]]))
        with self.assertRaises(ValueError):
            gemmi8.bin_pack_rows_u8(xu, 256)

    @need_type("bin")
    def test_gemms(self):
        for m, n, k in [(1, 1, 1), (3, 5, 63), (4, 17, 64), (9, 33, 130), (32, 64, 512)]:
            a = self.pm(m, k)
            b = self.pm(n, k)
            acc = a @ b.T
            p = gemmi8.pack_bin(bits_of(b), n, k)
            self.assertEqual((p.n, p.k), (n, k))
            aw = bits_of(a)
            self.assertEqualArrays(gemmi8.bin_gemm_s32(aw, p), acc)
            scale = self.rng.normal(0, 1, n).astype(F32)
            bias = self.rng.normal(0, 3, n).astype(F32)
            want = (acc.astype(F32) * scale).astype(F32) + bias
            self.assertBitsEqual(gemmi8.bin_gemm_f32(aw, p, scale, bias), want)
            self.assertBitsEqual(gemmi8.bin_gemm_f32(aw, p), acc.astype(F32))
            self.assertEqualArrays(gemmi8.bin_gemm_bits(aw, p, scale, bias),
                                   bits_of(np.where(want < 0, -1, 1)))
            # K x N layout: row k holds bit n of every channel
            pkn = gemmi8.pack_bin(bits_of(np.ascontiguousarray(b.T)), n, k, layout="kn")
            self.assertEqualArrays(gemmi8.bin_gemm_s32(aw, pkn), acc)

    @need_type("bin")
    def test_errors(self):
        b = bits_of(self.pm(8, 100))
        p = gemmi8.pack_bin(b, 8, 100)
        with self.assertRaises(ValueError):
            gemmi8.pack_bin(b, 8, 200)  # words do not match k
        with self.assertRaises(TypeError):
            gemmi8.bin_gemm_s32(b.view(np.int64), p)
        with self.assertRaises(ValueError):
            gemmi8.bin_gemm_s32(np.zeros((2, 3), np.uint64), p)
        with self.assertRaises(ValueError):
            gemmi8.bin_gemm_f32(np.zeros((2, 2), np.uint64), p, scale=np.ones(7, F32))
        self.assertC("invalid parameter", gemmi8.bin_gemm_s32, np.zeros((0, 2), np.uint64), p)

    def test_max_pool(self):
        for (b, h, w, c), pool, stride, pad in [((1, 4, 4, 10), 2, 2, 0),
                                                ((2, 7, 5, 70), (3, 2), (2, 1), (1, 0, 1, 1)),
                                                ((1, 5, 5, 64), 3, 1, 1)]:
            x = self.pm(b, h, w, c)
            got = gemmi8.bin_max_pool(bits_of(x), c, pool, stride, pad)
            ph, pw = (pool, pool) if isinstance(pool, int) else pool
            sh, sw = (stride, stride) if isinstance(stride, int) else stride
            pt, pl, pb, pr = (pad,) * 4 if isinstance(pad, int) else pad
            oh = out_size(h, ph, sh, 1, pt, pb)
            ow = out_size(w, pw, sw, 1, pl, pr)
            xp = np.full((b, h + pt + pb, w + pl + pr, c), -2, np.int64)  # -2: padding
            xp[:, pt:pt + h, pl:pl + w] = x
            want = np.full((b, oh, ow, c), -2, np.int64)
            for y in range(ph):
                for xx in range(pw):
                    want = np.maximum(want, xp[:, y:y + sh * (oh - 1) + 1:sh,
                                               xx:xx + sw * (ow - 1) + 1:sw])
            self.assertEqualArrays(got, bits_of(want))
        self.assertC("invalid parameter", gemmi8.bin_max_pool, bits_of(self.pm(1, 2, 2, 8)), 8,
                     2, 1, 2)  # padding not below the pool side


# ---------------------------------------------------------------------------------
# Convolution
# ---------------------------------------------------------------------------------

GEOMETRIES = [
    # batch, h, w, groups, ci, co, kh, kw, stride, dilation, padding
    (1, 6, 7, 1, 8, 16, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1)),
    (2, 9, 8, 1, 3, 5, 3, 2, (2, 1), (1, 2), (2, 0, 1, 1)),
    (1, 5, 5, 2, 4, 6, 3, 3, (1, 1), (1, 1), (0, 1, 2, 1)),  # groups
    (1, 8, 6, 12, 1, 1, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1)),  # depthwise
    (2, 7, 7, 6, 1, 2, 5, 5, (2, 2), (1, 1), (2, 2, 2, 2)),  # depthwise, multiplier 2
    (1, 4, 5, 1, 20, 7, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0)),  # 1x1
    (1, 1, 1, 1, 16, 4, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0)),
]


class TestConvolution(Case):
    def check(self, t, geo, mode, per_channel_bzp=False, pool=None):
        b, h, w, groups, ci, co, kh, kw, stride, dil, pad = geo
        signed = t == "qs8"
        lo, hi = (-128, 127) if signed else (0, 255)
        oc = groups * co
        x = self.s8(b, h, w, groups * ci) if signed else self.u8(b, h, w, groups * ci)
        wt = self.u8(oc, kh, kw, ci) if t == "qu8" else self.s8(oc, kh, kw, ci)
        azp = int(self.rng.integers(lo, hi + 1))
        bzp = (self.u8(oc) if per_channel_bzp else int(self.rng.integers(0, 256))) \
            if t == "qu8" else 0
        bias = self.s32(-3000, 3000, oc)
        # the reference: (x - azp) conv (w - bzp) with the padding at azp
        bz = np.broadcast_to(np.asarray(bzp, np.int64), (oc,))
        acc = ref_conv(x.astype(np.int64) - azp,
                       wt.astype(np.int64) - bz[:, None, None, None], groups, stride, dil,
                       pad, 0) + bias
        acc = wrap32(acc)
        if mode == "s32":
            rq = None
            want = acc
        elif mode == "fixedpoint":
            spread = 40.0 / (float(acc.std()) + 1.0)  # outputs mostly inside the window
            rq = gemmi8.Requant(self.rng.uniform(0.5, 1.5, oc) * spread, 3 if not signed else -3)
            want = ref_fixedpoint(acc, rq.multiplier, rq.shift, rq.zero_point, lo, hi)
        else:
            s = F32(self.rng.uniform(0.5, 1.5) * 40.0 / (float(acc.std()) + 1.0))
            rq = gemmi8.Requant(float(s), 5, lo + 2, hi - 2, mode="fp32")
            want = ref_fp32(acc, s, 5, lo + 2, hi - 2)
        kw_ = {"b_zero_point": bzp} if t == "qu8" else {}
        op = gemmi8.Convolution(t, wt, groups=groups, stride=stride, dilation=dil,
                                padding=pad, a_zero_point=azp, bias=bias, requant=rq, **kw_)
        self.assertEqual(op.output_shape(b, h, w), want.shape)
        got = op.run(x, pool=pool)
        self.assertEqualArrays(got, want, "%s %s %s" % (t, mode, geo))
        return op, x, got

    def check_all(self, t):
        for geo in GEOMETRIES:
            for mode in ("s32", "fixedpoint", "fp32"):
                self.check(t, geo, mode)
        if t == "qu8":
            self.check(t, GEOMETRIES[2], "fixedpoint", per_channel_bzp=True)
            self.check(t, GEOMETRIES[4], "s32", per_channel_bzp=True)

    @need_type("qu8")
    def test_qu8(self):
        self.check_all("qu8")

    @need_type("qs8")
    def test_qs8(self):
        self.check_all("qs8")

    @need_type("qu8s8")
    def test_qu8s8(self):
        self.check_all("qu8s8")

    @need_type("qu8s8")
    def test_setup_reuse_and_slices(self):
        geo = GEOMETRIES[0]
        op, x, first = self.check("qu8s8", geo, "fixedpoint")
        want = first.copy()
        # the result held by the caller is not overwritten by the next run
        x2 = self.u8(*x.shape)
        second = op.run(x2)
        self.assertFalse(np.shares_memory(first, second))
        self.assertEqualArrays(first, want)
        # in-place change of the input, run without an input: reads the new values
        x2[...] = x
        third = op.run()
        self.assertEqualArrays(third, want)
        # a channel slice of a wider input, and an output slice of a wider output
        wide = self.u8(1, 6, 7, 8 + 5)
        wide[..., 2:10] = x
        outw = np.zeros((1, 6, 7, 16 + 3), np.uint8)
        got = op.run(wide[..., 2:10], out=outw[..., 1:17])
        self.assertTrue(np.shares_memory(got, outw))
        self.assertEqualArrays(outw[..., 1:17], want)
        self.assertTrue(np.all(outw[..., 0] == 0) and np.all(outw[..., 17:] == 0))
        ind, ws = op.memory()
        self.assertGreater(ind, 0)
        self.assertGreaterEqual(ws, 0)
        # a new batch size
        xb = np.concatenate([x, x2, x])
        self.assertEqualArrays(op.run(xb), np.concatenate([want, want, want]))
        # repeated runs on one input without a held result reuse the output
        r1 = op.run(x)
        address = r1.ctypes.data
        del r1
        a1 = op.run(x)
        self.assertEqual(a1.ctypes.data, address)
        self.assertEqualArrays(a1, want)
        # the operator holds the input it was set up with
        xc = x.copy()
        op.run(xc)
        del xc
        self.assertEqualArrays(op.run(), want)
        op.close()
        with self.assertRaises(ValueError):
            op.run(x)

    @need_type("qu8s8")
    def test_errors(self):
        wt = self.s8(4, 3, 3, 8)
        with self.assertRaises(TypeError):
            gemmi8.Convolution("qu8s8", wt.view(np.uint8))
        with self.assertRaises(ValueError):
            gemmi8.Convolution("qu8s8", wt, groups=3)
        with self.assertRaises(ValueError):
            gemmi8.Convolution("qu9", wt)
        with self.assertRaises(ValueError):
            gemmi8.Convolution("qu8s8", np.asfortranarray(wt))
        self.assertC("invalid parameter", gemmi8.Convolution, "qu8s8", wt, stride=0)
        self.assertC("invalid parameter", gemmi8.Convolution, "qu8s8", wt,
                     requant=gemmi8.Requant(0.1, 0, 10, 5))
        op = gemmi8.Convolution("qu8s8", wt, requant=gemmi8.Requant(0.01, 0))
        with self.assertRaises(TypeError):
            op.run(self.s8(1, 5, 5, 8))
        with self.assertRaises(ValueError):
            op.run(self.u8(1, 5, 5, 9))
        with self.assertRaises(ValueError):
            op.run(self.u8(5, 5, 8))
        with self.assertRaises(ValueError):
            op.run(self.u8(1, 10, 5, 8)[:, ::2])  # rows not evenly spaced with the pixels
        self.assertC("invalid parameter", op.run, self.u8(1, 2, 2, 8))  # smaller than 3x3
        self.assertC("invalid parameter", op.memory)  # not set up
        self.assertEqual(op.run(self.u8(1, 3, 3, 8)).shape, (1, 1, 1, 4))

    def bin_case(self, geo, zero_padding, kind):
        b, h, w, groups, ci, co, kh, kw, stride, dil, pad = geo
        oc = groups * co
        x = 1 - 2 * self.rng.integers(0, 2, (b, h, w, groups * ci)).astype(np.int64)
        wt = 1 - 2 * self.rng.integers(0, 2, (oc, kh, kw, ci)).astype(np.int64)
        acc = ref_conv(x, wt, groups, stride, dil, pad, 0 if zero_padding else 1)
        kw_ = {}
        if kind == "s32":
            want = acc
        elif kind in ("f32", "f32_add", "bits"):
            mult = self.rng.normal(1, 0.5, oc).astype(F32)
            bias = self.rng.normal(0, 2, oc).astype(F32)
            v = (acc.astype(F32) * mult).astype(F32) + bias
            kw_ = dict(multiplier=mult, bias=bias)
            if kind == "f32_add":
                shortcut = self.rng.normal(0, 8, acc.shape).astype(F32)
                v = shortcut + v
            if kind in ("f32", "f32_add"):
                kw_.update(output_min=-3.0, output_max=4.0)
                want = np.minimum(np.maximum(v, F32(-3)), F32(4))
            else:
                want = bits_of(np.where(v < 0, -1, 1))
        elif kind == "threshold":
            thr = self.rng.integers(-5, 6, oc).astype(np.int32)
            gt = self.rng.integers(0, 2, oc).astype(np.uint8)
            kw_ = dict(threshold=thr, greater=gt)
            want = bits_of(np.where(np.where(gt > 0, acc > thr, acc < thr), -1, 1))
        else:  # qs8
            rq = gemmi8.Requant(self.rng.uniform(0.05, 0.5, oc), 2, mode="fixedpoint")
            bias = self.s32(-20, 20, oc)
            kw_ = dict(requant=rq, bias=bias)
            want = ref_fixedpoint(acc + bias, rq.multiplier, rq.shift, 2, -128, 127)
        op = gemmi8.Convolution("bin", bits_of(wt), groups=groups, stride=stride,
                                dilation=dil, padding=pad, input_channels=ci, output=kind,
                                zero_padding=zero_padding, **kw_)
        if kind == "f32_add":
            got = op.run(bits_of(x), out=shortcut.copy())
        else:
            got = op.run(bits_of(x))
        if kind in ("f32", "f32_add"):
            self.assertBitsEqual(got, want, "bin %s %s" % (kind, geo))
        else:
            self.assertEqualArrays(got, want, "bin %s %s zero_padding=%s"
                                   % (kind, geo, zero_padding))

    @need_type("bin")
    def test_binary(self):
        geos = [(1, 6, 7, 1, 64, 16, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1)),
                (2, 7, 6, 1, 70, 9, 3, 2, (2, 1), (1, 2), (2, 0, 1, 1)),
                (1, 5, 5, 2, 10, 3, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1)),
                (1, 4, 4, 1, 128, 65, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0))]
        for geo in geos:
            for zp in (False, True):
                self.bin_case(geo, zp, "s32")
            for kind in ("f32", "f32_add", "bits", "threshold", "qs8"):
                self.bin_case(geo, True, kind)
        self.assertC("invalid parameter", gemmi8.Convolution, "bin",
                     np.zeros((4, 3, 3, 1), np.uint64), input_channels=8, output="threshold")
        with self.assertRaises(ValueError):
            gemmi8.Convolution("bin", np.zeros((4, 3, 3, 1), np.uint64), input_channels=65)


# ---------------------------------------------------------------------------------
# Threads: the same bytes as one thread
# ---------------------------------------------------------------------------------


class TestThreads(Case):
    def test_pool_object(self):
        with gemmi8.ThreadPool(3, spin_us=0) as pool:
            self.assertEqual(pool.threads, 3)
            self.assertIn("3", repr(pool))
        self.assertEqual(pool.threads, 0)
        with self.assertRaises(ValueError):
            pool._par()
        pool.close()  # twice: nothing
        self.assertC("invalid parameter", gemmi8.ThreadPool, gemmi8.MAX_THREADS + 1)
        self.assertC("invalid parameter", gemmi8.ThreadPool, 2,
                     spin_us=gemmi8.THREADPOOL_SPIN_US_MAX + 1)
        self.assertGreaterEqual(gemmi8.ThreadPool(0).threads, 1)

    def test_gemms_identical(self):
        m, n, k = 96, 112, 300
        with gemmi8.ThreadPool(4) as pool:
            for t in ("qu8", "qs8", "qu8s8"):
                if t not in TYPES:
                    continue
                signed = t == "qs8"
                a = self.s8(m, k) if signed else self.u8(m, k)
                if t == "qu8":
                    p = gemmi8.pack_qu8(self.u8(n, k), 100, self.u8(n), self.s32(-999, 999, n))
                else:
                    p = getattr(gemmi8, "pack_" + t)(self.s8(n, k), -3 if signed else 120,
                                                     self.s32(-999, 999, n))
                gemm = getattr(gemmi8, t + "_gemm")
                gemm_s32 = getattr(gemmi8, t + "_gemm_s32")
                for rq in (gemmi8.Requant(self.rng.uniform(1e-4, 1e-3, n), 1),
                           gemmi8.Requant(3e-4, -1 if signed else 1, mode="fp32")):
                    one = gemm(a, p, rq)
                    self.assertEqualArrays(gemm(a, p, rq, pool=pool), one, t)
                self.assertEqualArrays(gemm_s32(a, p, pool=pool), gemm_s32(a, p), t)
            for t, kind, quantize_rows in (("qs8", "qd8", gemmi8.quantize_rows_s8),
                                           ("qu8s8", "qdu8", gemmi8.quantize_rows_u8)):
                if t not in TYPES:
                    continue
                x = self.rng.normal(0, 1, (m, k)).astype(F32)
                p = getattr(gemmi8, "pack_" + kind)(self.s8(n, k), np.full(n, 0.01, F32))
                linear = getattr(gemmi8, kind + "_linear_f32")
                gemm_f32 = getattr(gemmi8, kind + "_gemm_f32")
                self.assertBitsEqual(linear(x, p, pool=pool), linear(x, p), kind)
                y, s, z = quantize_rows(x)
                self.assertBitsEqual(gemm_f32(y, s, z, p, pool=pool), gemm_f32(y, s, z, p),
                                     kind)
            if "bin" in TYPES:
                kb = 1000
                a = bits_of(1 - 2 * self.rng.integers(0, 2, (m, kb)))
                p = gemmi8.pack_bin(bits_of(1 - 2 * self.rng.integers(0, 2, (n, kb))), n, kb)
                sc = self.rng.normal(0, 1, n).astype(F32)
                self.assertEqualArrays(gemmi8.bin_gemm_s32(a, p, pool=pool),
                                       gemmi8.bin_gemm_s32(a, p))
                self.assertBitsEqual(gemmi8.bin_gemm_f32(a, p, sc, pool=pool),
                                     gemmi8.bin_gemm_f32(a, p, sc))
                self.assertEqualArrays(gemmi8.bin_gemm_bits(a, p, sc, pool=pool),
                                       gemmi8.bin_gemm_bits(a, p, sc))

    @need_type("qu8s8")
    def test_convolution_identical(self):
        wt = self.s8(32, 3, 3, 16)
        op = gemmi8.Convolution("qu8s8", wt, padding=1, a_zero_point=128,
                                requant=gemmi8.Requant(0.002, 128))
        x = self.u8(2, 20, 20, 16)
        one = op.run(x).copy()
        with gemmi8.ThreadPool(3) as pool:
            self.assertEqualArrays(op.run(x, pool=pool), one)
            with self.assertRaises(TypeError):
                op.run(x, pool=3)


# ---------------------------------------------------------------------------------
# Quantization helpers (new in the header)
# ---------------------------------------------------------------------------------


QR = {"u8": (0, 255), "s8": (-128, 127), "s8_symmetric": (-127, 127)}


def ref_choose(scheme, qrange, lo, hi):
    f = F32
    lo = f(lo)
    hi = f(hi)
    rmin = lo if lo < f(0) else f(0)
    rmax = hi if hi > f(0) else f(0)
    if qrange == "s8_symmetric":
        a = rmax if rmax > -rmin else -rmin
        if a == f(0):
            return f(1), 0
        return (f(a + a) / f(254) if scheme == "onnx" else f(a) / f(127)), 0
    qmin, qmax = QR[qrange]
    if scheme == "onnx":
        scale = f(1) if rmax == rmin else f(rmax - rmin) / f(qmax - qmin)
        z = f(qmin) - rmin / scale
        z = min(max(z, f(qmin)), f(qmax))
        return f(scale), int(np.rint(z))
    if rmax == rmin:
        return f(1), 0
    s = (float(rmax) - float(rmin)) / (qmax - qmin)
    zmin = qmin - float(rmin) / s
    zmax = qmax - float(rmax) / s
    z = zmin if abs(qmin) + abs(float(rmin) / s) < abs(qmax) + abs(float(rmax) / s) else zmax
    z = min(max(z, qmin), qmax)
    return f(s), int(rna(z))


@unittest.skipUnless(HAVE_QHELPERS, SKIP_QHELPERS)
class TestQuantHelpers(Case):
    def test_choose_qparams(self):
        ranges = [(-1.0, 1.0), (0.0, 0.0), (0.0, 6.0), (-3.5, -0.25), (0.1, 0.7),
                  (-0.123, 5.67), (-100.0, 0.001), (-1e-3, 1e-3)]
        ranges += [tuple(sorted(self.rng.normal(0, 4, 2))) for _ in range(40)]
        lo = np.array([r[0] for r in ranges], F32)
        hi = np.array([r[1] for r in ranges], F32)
        for scheme in ("onnx", "tflite"):
            for qr in ("u8", "s8", "s8_symmetric"):
                s, z = gemmi8.choose_qparams(lo, hi, qr, scheme)
                self.assertEqual((s.dtype, z.dtype), (np.dtype(F32), np.dtype(np.int32)))
                for i in range(len(ranges)):
                    ws, wz = ref_choose(scheme, qr, lo[i], hi[i])
                    self.assertEqual((s[i].view(np.uint32), int(z[i])),
                                     (np.float32(ws).view(np.uint32), wz),
                                     "%s %s %s" % (scheme, qr, ranges[i]))
                ss, zz = gemmi8.choose_qparams(-1.0, 2.0, qr, scheme)
                self.assertIsInstance(ss, float)
                self.assertIsInstance(zz, int)
        self.assertC("invalid parameter", gemmi8.choose_qparams, 2.0, 1.0)
        self.assertC("invalid parameter", gemmi8.choose_qparams, math.nan, 1.0)
        self.assertC("invalid parameter", gemmi8.choose_qparams, 0.0, 1.0, 7)
        with self.assertRaises(ValueError):
            gemmi8.choose_qparams(0.0, 1.0, "u4")
        with self.assertRaises(TypeError):
            gemmi8.choose_qparams(np.zeros(2), np.ones(2))  # float64

    def ref_quantize(self, x, s, zp, qr, scheme):
        qmin, qmax = QR[qr]
        f = F32
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            q = (x / s).astype(f)
            lo = (qmin - zp).astype(f)
            hi = (qmax - zp).astype(f)
            q = np.where(q > lo, q, lo)
            q = np.where(q < hi, q, hi)
            r = np.rint(q) if scheme == "onnx" else rna(q)
        y = r.astype(np.int64) + zp
        return y.astype(np.uint8 if qr == "u8" else np.int8)

    def test_quantize_dequantize(self):
        x = (self.rng.normal(0, 2, (6, 5, 7)).astype(F32))
        x[0, 0, :4] = [np.inf, -np.inf, np.nan, 0.5]
        x[1, 0, :3] = [2.5, -2.5, 0.75]
        for scheme in ("onnx", "tflite"):
            for qr in ("u8", "s8", "s8_symmetric"):
                qmin, qmax = QR[qr]
                for axis, count, bshape in (("tensor", 1, (1, 1, 1)), ("row", 6, (6, 1, 1)),
                                            ("column", 7, (1, 1, 7))):
                    s = self.rng.uniform(0.01, 0.5, count).astype(F32)
                    if qr == "s8_symmetric":
                        zp = np.zeros(count, np.int32)
                    else:
                        zp = self.rng.integers(qmin, qmax + 1, count).astype(np.int32)
                    if axis == "tensor":
                        s[0] = 0.5  # exact ties at x = 2.5, -2.5, 0.75
                        args = (float(s[0]), int(zp[0]))
                    else:
                        args = (s, zp)
                    got = gemmi8.quantize_f32(x, *args, qrange=qr, scheme=scheme, axis=axis)
                    want = self.ref_quantize(x, s.reshape(bshape),
                                             zp.astype(np.int64).reshape(bshape), qr, scheme)
                    self.assertEqualArrays(got, want, "%s %s %s" % (scheme, qr, axis))
                    back = gemmi8.dequantize_f32(got, *args, axis=axis,
                                                 qrange=qr if qr == "s8_symmetric" else None)
                    wantb = ((got.astype(np.int64) - zp.reshape(bshape)).astype(F32)
                             * s.reshape(bshape)).astype(F32)
                    self.assertBitsEqual(back, wantb, "dequantize %s %s" % (qr, axis))
        self.assertC("invalid parameter", gemmi8.quantize_f32, x, -1.0)
        self.assertC("invalid parameter", gemmi8.quantize_f32, x, 1.0, 300)
        self.assertC("invalid parameter", gemmi8.quantize_f32, x, 1.0, 3, "s8_symmetric")
        with self.assertRaises(ValueError):
            gemmi8.quantize_f32(x, np.ones(5, F32), axis="row")
        with self.assertRaises(ValueError):
            gemmi8.quantize_f32(x[:, :, ::2], 1.0)
        with self.assertRaises(TypeError):
            gemmi8.dequantize_f32(x, 1.0)
        with self.assertRaises(TypeError):
            gemmi8.dequantize_f32(np.zeros(3, np.uint8), 1.0, qrange="s8")

    def test_quantize_bias(self):
        n = 40
        bias = self.rng.normal(0, 3, n).astype(F32)
        bias[:4] = [0.0, 1e30, -1e30, 0.5]
        a_scale = F32(0.0173)
        ws = self.rng.uniform(1e-3, 0.1, n).astype(F32)
        for scheme in ("onnx", "tflite"):
            for per in (True, False):
                w = ws if per else F32(ws[0])
                got = gemmi8.quantize_bias(bias, float(a_scale), w if per else float(w),
                                           scheme)
                s = (a_scale * (ws if per else np.full(n, w, F32))).astype(F32)
                if scheme == "onnx":
                    r = np.rint((bias / s).astype(F32)).astype(np.float64)
                else:
                    inv = (F32(1) / s).astype(F32)
                    r = rna((bias * inv).astype(F32))
                want = np.clip(r, -2**31 + 1, 2**31 - 1).astype(np.int32)
                self.assertEqualArrays(got, want, "%s per_channel=%s" % (scheme, per))
        self.assertC("invalid parameter", gemmi8.quantize_bias,
                     np.array([np.nan], F32), 1.0, 1.0)
        self.assertC("invalid parameter", gemmi8.quantize_bias, bias, 0.0, 1.0)
        with self.assertRaises(ValueError):
            gemmi8.quantize_bias(bias, 1.0, np.ones(3, F32))

    def test_requant_scales(self):
        n = 30
        ws = self.rng.uniform(1e-3, 0.1, n).astype(F32)
        a, c = F32(0.02), F32(0.07)
        for scheme in ("onnx", "tflite"):
            s, m, sh = gemmi8.requant_scales(float(a), ws, float(c), scheme)
            if scheme == "onnx":
                f = ((a * ws).astype(F32) / c).astype(F32)
                fd = f.astype(np.float64)
            else:
                fd = float(a) * ws.astype(np.float64) / float(c)
                f = fd.astype(F32)
            self.assertBitsEqual(s, f, scheme)
            for i in range(n):
                self.assertEqual((int(m[i]), int(sh[i])), ref_quantize_multiplier(float(fd[i])))
        rq = gemmi8.Requant.from_scales(0.02, ws, 0.07, 128, mode="fixedpoint")
        self.assertTrue(rq.per_channel)
        rq = gemmi8.Requant.from_scales(0.02, 0.05, 0.07, 128, mode="fp32")
        self.assertFalse(rq.per_channel)
        self.assertC("invalid parameter", gemmi8.requant_scales, 0.0, ws, 1.0)
        self.assertC("invalid parameter", gemmi8.requant_scales, 1.0, ws, math.inf)

    @need_type("qu8s8")
    def test_float_layer_end_to_end(self):
        # a float layer quantized with the helpers, run by the GEMM, against float math
        m, n, k = 8, 16, 64
        x = self.rng.normal(0, 1, (m, k)).astype(F32)
        w = self.rng.normal(0, 0.2, (n, k)).astype(F32)
        bias = self.rng.normal(0, 0.1, n).astype(F32)
        xs, xz = gemmi8.choose_qparams(float(x.min()), float(x.max()), "u8")
        wlo, whi = w.min(axis=1).astype(F32), w.max(axis=1).astype(F32)
        wsc, _ = gemmi8.choose_qparams(wlo, whi, "s8_symmetric")
        xq = gemmi8.quantize_f32(x, xs, xz, "u8")
        wq = gemmi8.quantize_f32(w, wsc, 0, "s8_symmetric", axis="row")
        y = x @ w.T + bias
        ys, yz = gemmi8.choose_qparams(float(y.min()), float(y.max()), "u8")
        p = gemmi8.pack_qu8s8(wq, xz, gemmi8.quantize_bias(bias, xs, wsc))
        rq = gemmi8.Requant.from_scales(xs, wsc, ys, yz)
        yq = gemmi8.qu8s8_gemm(xq, p, rq)
        back = gemmi8.dequantize_f32(yq, ys, yz)
        self.assertLess(float(np.max(np.abs(back - y))), 6 * ys)

    def test_calibration(self):
        x = self.rng.normal(0, 2, (50, 8)).astype(F32)
        with gemmi8.Calibration() as cal:
            cal.update(x[:25])
            cal.update(x[25:])
            lo, hi = cal.range()
            self.assertEqual((lo[0], hi[0]), (x.min(), x.max()))
            self.assertC("invalid parameter", cal.update, np.array([1.0, np.nan], F32))
            self.assertEqual(cal.range()[1][0], x.max())  # nothing of that call recorded
            self.assertC("invalid parameter", cal.range, 49.0)
        with self.assertRaises(ValueError):
            cal.range()
        cal = gemmi8.Calibration(8)
        cal.update(x)
        lo, hi = cal.range(100)
        self.assertEqualArrays(lo, x.min(axis=0))
        self.assertEqualArrays(hi, x.max(axis=0))
        self.assertC("invalid parameter", cal.update, np.ones(7, F32))
        # a percentile: to within R / 1024 of the exact quantile, within [min, max]
        big = self.rng.normal(0, 1, 100000).astype(F32)
        big[0] = 40.0  # an outlier
        cal = gemmi8.Calibration(1)
        cal.update(big)
        for p in (99.0, 99.9, 50.0, 90.0):
            lo, hi = cal.range(p)
            srt = np.sort(big)
            cnt = len(srt)
            r = 2.0 ** math.ceil(math.log2(float(np.max(np.abs(big)))))
            vmax = float(srt[math.ceil(p / 100 * cnt) - 1])
            vmin = float(srt[cnt - math.ceil(p / 100 * cnt)])
            self.assertLessEqual(abs(float(hi[0]) - vmax), r / 1024, "max at %g" % p)
            self.assertLessEqual(abs(float(lo[0]) - vmin), r / 1024, "min at %g" % p)
            self.assertTrue(srt[0] <= lo[0] <= hi[0] <= srt[-1])
        self.assertC("invalid parameter", gemmi8.Calibration(2).range)  # no values yet
        self.assertC("invalid parameter", gemmi8.Calibration, 0)


if __name__ == "__main__":
    import run_tests
    sys.exit(run_tests.main())
