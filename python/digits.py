"""The digits networks (examples/digits/) through the Python module: the pipeline of
examples/digits/digits.c, step for step, with gemmi8.py for the quantized parts and
numpy for the float ones.

    GEMMI8_LIBRARY=$PWD/libgemmi8.so /usr/bin/python3 python/digits.py \
        [-p percentile] [-r rounds] [-e expected.txt] [-c gemmi8-digits] [digits.g8d]

The float cnn's activations over the 200 calibration images feed four
gemmi8.Calibration (one a tensor); their ranges give the activations' scales and zero
points (gemmi8.choose_qparams); the weights are quantized symmetric per output channel
from each row's min and max (choose_qparams, quantize_f32), the biases with
quantize_bias, the requantizations with requant_scales. Then, for each of the 360 test
images, at batch 1, as digits.c:

  cnn float             numpy, in C's order of float operations (below)
  cnn int8 fixed-point  TFLite's scheme: quantize_f32, three qu8s8 Convolution
                        (fixed-point requantization, the ReLU as its clamp), the
                        classifier as qu8s8_gemm_s32, logits acc * scale
  cnn int8 fp32         ONNX's scheme, fp32 requantization
  bnn float             numpy
  bnn binary            int8 first layer with int32 output, its sign packed by
                        bin_pack_rows_s8, two binary Convolution with zero padding
                        (bit then float output), qd8_linear_f32

The table has each row's accuracy, the microseconds an image (batch 1, one module
call a layer, best of -r rounds) and an FNV-1a hash of every test image's ten float32
logits, as bytes: the same hash as digits.c's when the logits are the same bits.
The float rows reproduce digits.c's float arithmetic exactly: each output is
0.0f + p0*q0 + p1*q1 + ... in C's order of taps and channels (taps outside the image
skipped: here an added -0.0, which leaves every float as it is), each product and
sum rounded to float32 (np.add.accumulate is a sequential sum), then the bias; C's
build has -ffp-contract=off, so no fused multiply-add on either side.

-e FILE   compares each accuracy with FILE's figure (as digits.c's -e) and exits 1
          when one moves by more than 2 images.
-c PATH   runs the C program PATH (-r 1, same percentile and file) and exits 1 unless
          every int8 and binary row has the same accuracy and logits hash in both;
          reports whether the float rows' hashes agree too.
"""

import argparse
import os
import struct
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import gemmi8  # noqa: E402

F32 = np.float32
MARGIN_IMAGES = 2
CHUNK = 16  # images a step of the vectorised float forward (memory: b2 ~ 40 MB)

# ---- the weights file ---------------------------------------------------------------


def load(path):
    """name -> array: float32 (the int8 tensors too, as digits.c) or uint8."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"GEMMI8DG" or struct.unpack_from("<I", data, 8)[0] != 1:
        raise SystemExit("digits.py: %s: not a version 1 digits file" % path)
    count = struct.unpack_from("<I", data, 12)[0]
    pos = 16
    tensors = {}
    for _ in range(count):
        name = data[pos:pos + 24].rstrip(b"\0").decode("ascii")
        dtype, ndim, *dims = struct.unpack_from("<6I", data, pos + 24)
        pos += 48
        dt = {0: np.dtype("<f4"), 1: np.dtype("u1"), 2: np.dtype("i1")}[dtype]
        n = int(np.prod(dims))
        a = np.frombuffer(data, dt, n, pos).reshape(dims[:ndim])
        tensors[name] = a.astype(F32 if dtype != 1 else np.uint8)  # native order, a copy
        pos += (n * dt.itemsize + 3) // 4 * 4
    return tensors


# ---- float reference, in digits.c's order of operations -----------------------------


def conv_f32(x, w, bias, stride, pt, pl, oh, ow, groups=1):
    """digits.c's conv_f32 on a batch: x (N, H, W, groups * ci) float32, w OHWI
    (groups * co, k, k, ci) -> (N, oh, ow, groups * co). Each output: acc = 0.0f, then
    acc += p[c] * q[c] over the taps inside the image (y, x, c order), then + bias."""
    n, h, wd, cin = x.shape
    oc, k, _, ci = w.shape
    co = oc // groups
    taps = k * k * ci
    # the input padded so that every tap indexes it; taps outside the image masked
    pb = max(0, (oh - 1) * stride + k - pt - h)
    pr = max(0, (ow - 1) * stride + k - pl - wd)
    xp = np.zeros((n, pt + h + pb, pl + wd + pr, cin), F32)
    xp[:, pt:pt + h, pl:pl + wd, :] = x
    rows = np.arange(oh)[:, None] * stride + np.arange(k)[None, :]  # (oh, k), in xp
    cols = np.arange(ow)[:, None] * stride + np.arange(k)[None, :]  # (ow, k)
    inside_y = (rows >= pt) & (rows < pt + h)
    inside_x = (cols >= pl) & (cols < pl + wd)
    # (oh, ow, k, k) -> (oh, ow, 1, 1, taps): the mask of each (y, x, c) term
    mask = inside_y[:, None, :, None] & inside_x[None, :, None, :]
    mask = np.repeat(mask.reshape(oh, ow, k * k), ci, axis=-1).reshape(oh, ow, 1, 1, taps)
    # patches (N, oh, ow, k, k, groups, ci) -> (N, oh, ow, groups, 1, taps)
    p = xp[:, rows[:, None, :, None], cols[None, :, None, :], :]
    p = p.reshape(n, oh, ow, k, k, groups, ci).transpose(0, 1, 2, 5, 3, 4, 6)
    p = p.reshape(n, oh, ow, groups, 1, taps)
    q = w.reshape(groups, co, taps)
    terms = np.empty((n, oh, ow, groups, co, taps + 1), F32)
    terms[..., 0] = 0.0
    np.multiply(p, q, out=terms[..., 1:])
    # a skipped tap adds -0.0: acc + -0.0 == acc for every acc, +0.0 and -0.0 included
    np.copyto(terms[..., 1:], F32(-0.0), where=~mask)
    acc = np.add.accumulate(terms, axis=-1)[..., -1].reshape(n, oh, ow, oc)
    return acc if bias is None else acc + bias


def relu(x):
    return np.where(x > 0, x, F32(0))


def fc_f32(x, w, b):
    """digits.c's fc_f32: acc = 0.0f; acc += x[i] * w[j][i] for i in order; + b[j]."""
    n, k = x.shape
    terms = np.empty((n, w.shape[0], k + 1), F32)
    terms[..., 0] = 0.0
    np.multiply(x[:, None, :], w[None, :, :], out=terms[..., 1:])
    return np.add.accumulate(terms, axis=-1)[..., -1] + b


def in_chunks(fn, pixels):
    return np.concatenate([fn(pixels[i:i + CHUNK]) for i in range(0, len(pixels), CHUNK)])


def pixels_f32(pixels):
    """(float) pixels[i] / 16.0f"""
    return pixels.astype(F32) / F32(16)


def cnn_forward(t, pixels):
    """The float cnn on (N, 8, 8, 1) pixels: (logits, [a0, a1, a2, a3])."""
    a0 = pixels_f32(pixels)
    a1 = relu(conv_f32(a0, t["cnn.conv1.w"], t["cnn.conv1.b"], 1, 1, 1, 8, 8))
    a2 = relu(conv_f32(a1, t["cnn.dw.w"], t["cnn.dw.b"], 2, 1, 1, 4, 4, groups=16))
    a3 = relu(conv_f32(a2, t["cnn.pw.w"], t["cnn.pw.b"], 1, 0, 0, 4, 4))
    logits = fc_f32(a3.reshape(len(a3), 512), t["cnn.fc.w"], t["cnn.fc.b"])
    return logits, (a0, a1, a2, a3)


def sign(v):
    """v < 0.0f ? -1.0f : 1.0f"""
    return np.where(v < 0, F32(-1), F32(1))


def bnn_forward(t, pixels):
    x = pixels_f32(pixels)
    a1 = sign(conv_f32(x, t["bnn.conv1.w"], t["bnn.conv1.b"], 1, 1, 1, 8, 8))
    acc2 = conv_f32(a1, t["bnn.b2.w"], None, 1, 1, 1, 8, 8)  # exact integers
    a2 = sign(acc2 * t["bnn.b2.mul"] + t["bnn.b2.add"])
    acc3 = conv_f32(a2, t["bnn.b3.w"], None, 2, 1, 1, 4, 4)
    z3 = acc3 * t["bnn.b3.mul"] + t["bnn.b3.add"]
    return fc_f32(z3.reshape(len(z3), 1024), t["bnn.fc.w"], t["bnn.fc.b"])


# ---- quantization with the helpers -----------------------------------------------


def act_params(scheme, cal, percentile):
    """An activation's (scale, zero point), float32 and int32 arrays of one."""
    lo, hi = cal.range(percentile)
    return gemmi8.choose_qparams(lo, hi, "u8", scheme)


def quantize_weights(scheme, w):
    """int8 weights, symmetric per output channel (the first dimension), from each
    row's min and max (digits.c's scan: v < lo ? v : lo in index order)."""
    rows = w.reshape(w.shape[0], -1)
    lo = rows[:, 0].copy()
    hi = rows[:, 0].copy()
    for c in range(1, rows.shape[1]):
        v = rows[:, c]
        lo = np.where(v < lo, v, lo)
        hi = np.where(v > hi, v, hi)
    wscale, zp = gemmi8.choose_qparams(lo, hi, "s8_symmetric", scheme)
    wq = gemmi8.quantize_f32(w, wscale, zp, "s8_symmetric", scheme, axis="row")
    return wq, wscale


class Layer:
    """A qu8s8 layer: int8 weights, int32 bias and (when out is given) the
    requantization to out, its ReLU as the clamp [zero point, 255]."""

    def __init__(self, scheme, w, b, act_in, act_out=None):
        self.w, self.wscale = quantize_weights(scheme, w)
        in_scale = float(act_in[0][0])
        self.bias = gemmi8.quantize_bias(b, in_scale, self.wscale, scheme)
        self.rq = None
        if act_out is None:
            return
        out_scale, out_zp = float(act_out[0][0]), int(act_out[1][0])
        rscale, mult, shift = gemmi8.requant_scales(in_scale, self.wscale, out_scale, scheme)
        if scheme == "tflite":
            self.rq = gemmi8.Requant(zero_point=out_zp, min=out_zp, max=255,
                                     mode="fixedpoint", multiplier=mult, shift=shift)
        else:
            self.rq = gemmi8.Requant(rscale, zero_point=out_zp, min=out_zp, max=255,
                                     mode="fp32")


class CnnQ8:
    """The int8 cnn: qu8s8 convolutions and the classifier, with its buffers (one
    image) made once, as digits.c's struct cnn_q8."""

    def __init__(self, scheme, t, cals, percentile):
        self.scheme = scheme
        act = [act_params(scheme, c, percentile) for c in cals]
        self.in_scale, self.in_zp = act[0]
        azp = [int(a[1][0]) for a in act]
        l1 = Layer(scheme, t["cnn.conv1.w"], t["cnn.conv1.b"], act[0], act[1])
        self.conv1 = gemmi8.Convolution("qu8s8", l1.w, stride=1, padding=(1, 1, 1, 1),
                                        a_zero_point=azp[0], bias=l1.bias, requant=l1.rq)
        ld = Layer(scheme, t["cnn.dw.w"], t["cnn.dw.b"], act[1], act[2])
        self.dw = gemmi8.Convolution("qu8s8", ld.w, groups=16, stride=2,
                                     padding=(1, 1, 0, 0), a_zero_point=azp[1],
                                     bias=ld.bias, requant=ld.rq)
        lp = Layer(scheme, t["cnn.pw.w"], t["cnn.pw.b"], act[2], act[3])
        self.pw = gemmi8.Convolution("qu8s8", lp.w, padding=0, a_zero_point=azp[2],
                                     bias=lp.bias, requant=lp.rq)
        lf = Layer(scheme, t["cnn.fc.w"], t["cnn.fc.b"], act[3])
        self.fc = gemmi8.pack_qu8s8(lf.w, azp[3], bias=lf.bias)
        self.fc_scale = act[3][0][0] * lf.wscale  # float32 * float32
        # one image's buffers, set up once (as digits.c's setup calls)
        self.x = np.empty((1, 64), F32)
        self.xq = np.empty((1, 64), np.uint8)
        self.xq4 = self.xq.reshape(1, 8, 8, 1)
        self.a1 = np.empty((1, 8, 8, 16), np.uint8)
        self.a2 = np.empty((1, 4, 4, 16), np.uint8)
        self.a3 = np.empty((1, 4, 4, 32), np.uint8)
        self.a3f = self.a3.reshape(1, 512)
        self.acc = np.empty((1, 10), np.int32)
        self.conv1.setup(self.xq4, self.a1)
        self.dw.setup(self.a1, self.a2)
        self.pw.setup(self.a2, self.a3)
        self._addresses = (
            ({"onnx": 0, "tflite": 1}[scheme], 0, 0, 1, 64, self.x.ctypes.data,
             self.in_scale.ctypes.data, self.in_zp.ctypes.data, self.xq.ctypes.data),
            self.conv1._handle(), self.dw._handle(), self.pw._handle(),
            (1, 10, 512, self.a3.ctypes.data, 512, self.fc.address, self.acc.ctypes.data, 10))

    def forward(self, pixels):
        """One image (8, 8, 1) uint8 -> logits (10,) float32."""
        np.divide(pixels.reshape(1, 64), F32(16), out=self.x, dtype=F32)
        gemmi8.quantize_f32(self.x, self.in_scale, self.in_zp, "u8", self.scheme,
                            out=self.xq)
        self.conv1.run(self.xq4, out=self.a1)
        self.dw.run(self.a1, out=self.a2)
        self.pw.run(self.a2, out=self.a3)
        gemmi8.qu8s8_gemm_s32(self.a3f, self.fc, out=self.acc)
        return self.acc[0].astype(F32) * self.fc_scale

    def forward_ctypes(self, pixels):
        """forward() through the module's bare ctypes prototypes (gemmi8._f), every
        argument made beforehand: the Python cost without the wrappers' checks."""
        f, a = gemmi8._f, self._addresses
        np.divide(pixels.reshape(1, 64), F32(16), out=self.x, dtype=F32)
        st = f.quantize_f32(*a[0]) or f.convolution_run(a[1], None) or \
            f.convolution_run(a[2], None) or f.convolution_run(a[3], None) or \
            f.qu8s8_gemm_s32(*a[4])
        if st:
            raise gemmi8.Error("digits.py: forward_ctypes", st)
        return self.acc[0].astype(F32) * self.fc_scale

    def forward_batch(self, pixels):
        """Every image in one call a layer (new buffers): logits (N, 10)."""
        n = len(pixels)
        x = pixels_f32(pixels.reshape(n, 64))
        xq = gemmi8.quantize_f32(x, self.in_scale, self.in_zp, "u8", self.scheme)
        a1 = self.conv1.run(xq.reshape(n, 8, 8, 1), out=np.empty((n, 8, 8, 16), np.uint8))
        a2 = self.dw.run(a1, out=np.empty((n, 4, 4, 16), np.uint8))
        a3 = self.pw.run(a2, out=np.empty((n, 4, 4, 32), np.uint8))
        acc = gemmi8.qu8s8_gemm_s32(a3.reshape(n, 512), self.fc)
        return acc.astype(F32) * self.fc_scale


def pack_signs(w):
    """+1/-1 filters (float32, co x k x k x ci, ci <= 64) to bit taps: one uint64 word a
    tap, bit c set for -1 (digits.c's pack_signs)."""
    co, kh, kw, ci = w.shape
    neg = (w.reshape(co * kh * kw, ci) < 0).astype(np.uint64)
    words = np.bitwise_or.reduce(neg << np.arange(ci, dtype=np.uint64), axis=1)
    return np.ascontiguousarray(words.reshape(co, kh, kw, 1))


class BnnBin:
    """The binary network: int8 first layer with int32 output, its sign bit-packed,
    two binary convolutions (zero padding), a qd8 linear classifier."""

    def __init__(self, t, cal_in, percentile):
        scheme = self.scheme = "onnx"
        act = act_params(scheme, cal_in, percentile)
        self.in_scale, self.in_zp = act
        l1 = Layer(scheme, t["bnn.conv1.w"], t["bnn.conv1.b"], act)
        self.conv1 = gemmi8.Convolution("qu8s8", l1.w, padding=(1, 1, 1, 1),
                                        a_zero_point=int(self.in_zp[0]), bias=l1.bias)
        self.mul2, self.add2 = t["bnn.b2.mul"], t["bnn.b2.add"]
        self.mul3, self.add3 = t["bnn.b3.mul"], t["bnn.b3.add"]
        self.b2 = gemmi8.Convolution("bin", pack_signs(t["bnn.b2.w"]), input_channels=32,
                                     padding=(1, 1, 1, 1), output="bits",
                                     multiplier=self.mul2, bias=self.add2,
                                     zero_padding=True)
        self.b3 = gemmi8.Convolution("bin", pack_signs(t["bnn.b3.w"]), input_channels=32,
                                     stride=2, padding=(1, 1, 0, 0), output="f32",
                                     multiplier=self.mul3, bias=self.add3,
                                     output_min=-np.inf, output_max=np.inf,
                                     zero_padding=True)
        wq, wscale = quantize_weights(scheme, t["bnn.fc.w"])
        self.fc = gemmi8.pack_qd8(wq, wscale, bias=t["bnn.fc.b"])
        self.workspace = gemmi8.linear_workspace(1, 1024)
        self.x = np.empty((1, 64), F32)
        self.xq = np.empty((1, 64), np.uint8)
        self.xq4 = self.xq.reshape(1, 8, 8, 1)
        self.acc1 = np.empty((1, 8, 8, 32), np.int32)
        self.sign1 = np.empty((64, 32), np.int8)
        self.bits1 = np.empty((64, 1), np.uint64)
        self.bits1_4 = self.bits1.reshape(1, 8, 8, 1)
        self.bits2 = np.empty((1, 8, 8, 1), np.uint64)
        self.z3 = np.empty((1, 4, 4, 64), F32)
        self.z3f = self.z3.reshape(1, 1024)
        self.logits = np.empty((1, 10), F32)
        self.conv1.setup(self.xq4, self.acc1)
        self.b2.setup(self.bits1_4, self.bits2)
        self.b3.setup(self.bits2, self.z3)

    def forward(self, pixels):
        np.divide(pixels.reshape(1, 64), F32(16), out=self.x, dtype=F32)
        gemmi8.quantize_f32(self.x, self.in_scale, self.in_zp, "u8", self.scheme,
                            out=self.xq)
        self.conv1.run(self.xq4, out=self.acc1)
        # acc1[i] < 0 ? -1 : 1
        np.copyto(self.sign1, np.where(self.acc1.reshape(64, 32) < 0, -1, 1),
                  casting="unsafe")
        gemmi8.bin_pack_rows_s8(self.sign1, out=self.bits1)
        self.b2.run(self.bits1_4, out=self.bits2)
        self.b3.run(self.bits2, out=self.z3)
        gemmi8.qd8_linear_f32(self.z3f, self.fc, out=self.logits, workspace=self.workspace)
        return self.logits[0].copy()


# ---- scoring ------------------------------------------------------------------------

ROWS = [("cnn", "float", "cnn-float"), ("cnn", "int8 fixed-point", "cnn-int8-fixedpoint"),
        ("cnn", "int8 fp32", "cnn-int8-fp32"), ("bnn", "float", "bnn-float"),
        ("bnn", "binary", "bnn-binary")]


def fnv1a(logits):
    """FNV-1a 32-bit over the float32 logits' bytes, little-endian, image by image."""
    h = 2166136261
    for byte in np.ascontiguousarray(logits, "<f4").tobytes():
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return h


def expected_accuracy(path, key):
    value = None
    with open(path) as f:
        for line in f:
            parts = line.split()
            if line.startswith("#") or len(parts) < 2 or parts[0] != key:
                continue
            try:
                value = float(parts[1])
            except ValueError:
                pass
    if value is None:
        print("digits.py: no figure for %s in %s" % (key, path), file=sys.stderr)
        sys.exit(2)
    return value


def best_us(fn, images, rounds):
    """Microseconds an image of fn(image) over images, best of rounds."""
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for p in images:
            fn(p)
        best = min(best, time.perf_counter() - t0)
    return 1e6 * best / len(images)


def c_table(exe, path, percentile):
    """Runs the C program once (-r 1): (rows (net, arithmetic) -> (correct, hash), its
    us / image by row)."""
    cmd = [exe, "-r", "1", "-p", percentile, path]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if r.returncode not in (0, 1):
        print("digits.py: %s exited %d\n%s" % (" ".join(cmd), r.returncode, r.stderr),
              file=sys.stderr)
        sys.exit(1)
    rows = {}
    for line in r.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] in ("cnn", "bnn"):
            rows[(cells[0], cells[1])] = (cells[3], cells[5], cells[4])
    return rows, r.stdout


def main(argv):
    ap = argparse.ArgumentParser(description="The digits networks through gemmi8.py, "
                                 "as examples/digits/digits.c.")
    ap.add_argument("path", nargs="?",
                    default=os.path.join(ROOT, "examples", "digits", "digits.g8d"))
    ap.add_argument("-p", dest="percentile", default="100",
                    help="calibration percentile (default 100)")
    ap.add_argument("-r", dest="rounds", type=int, default=3,
                    help="timing rounds, the best kept (default 3)")
    ap.add_argument("-e", dest="expected", help="expected accuracies (expected.txt)")
    ap.add_argument("-c", dest="c_program",
                    help="the C program gemmi8-digits, to compare hashes with")
    args = ap.parse_args(argv[1:])
    percentile = float(args.percentile)
    rounds = max(args.rounds, 1)

    t = load(args.path)
    calib = t["calib.x"]
    test_x, test_y = t["test.x"], t["test.y"]
    ntest = len(test_x)
    file_acc = (float(t["acc.cnn"][0]), float(t["acc.bnn"][0]))

    # calibration: the float cnn's activations, image by image as digits.c
    cals = [gemmi8.Calibration(1) for _ in range(4)]
    acts = [np.concatenate(a) for a in
            zip(*[cnn_forward(t, calib[i:i + CHUNK])[1] for i in range(0, len(calib), CHUNK)])]
    for i in range(len(calib)):
        for c, a in zip(cals, acts):
            c.update(a[i])
    fixed = CnnQ8("tflite", t, cals, percentile)
    fp32 = CnnQ8("onnx", t, cals, percentile)
    binary = BnnBin(t, cals[0], percentile)

    def cnn_f(p):
        return cnn_forward(t, p[None])[0][0]

    def bnn_f(p):
        return bnn_forward(t, p[None])[0]

    forwards = [cnn_f, fixed.forward, fp32.forward, bnn_f, binary.forward]

    print("digits.py: %d test images, %d calibration images, percentile %g, kernels %s, "
          "through %s\n" % (ntest, len(calib), percentile, gemmi8.isa_name(),
                            os.path.basename(gemmi8.library_path)))
    print("| network | arithmetic | accuracy | correct | us / image | logits hash |")
    print("|---|---|---:|---:|---:|---|")
    results = []
    preds = []
    failed = False
    exp_path = args.expected or os.path.join(ROOT, "examples", "digits", "expected.txt")
    compare = []
    for v, ((net, arith, key), fwd) in enumerate(zip(ROWS, forwards)):
        logits = np.stack([fwd(p) for p in test_x])
        pred = np.argmax(logits, axis=1)  # the first of equal maxima, as digits.c
        preds.append(pred)
        correct = int(np.sum(pred == test_y))
        h = fnv1a(logits)
        us = best_us(fwd, test_x, rounds)
        accuracy = correct / ntest
        results.append((net, arith, correct, h, us, logits))
        print("| %s | %s | %.2f%% | %d / %d | %.2f | %08x |"
              % (net, arith, 100.0 * accuracy, correct, ntest, us, h), flush=True)
        if os.path.exists(exp_path):
            want = expected_accuracy(exp_path, key)
            moved = (accuracy - want) * ntest
            compare.append("%s %+d" % (key, int(round(moved))))
            if args.expected and abs(moved) > MARGIN_IMAGES + 0.5:
                print("digits.py: %s accuracy %.4f, expected %.4f (margin %d images)"
                      % (key, accuracy, want, MARGIN_IMAGES), file=sys.stderr)
                failed = True
        if arith == "float":
            want = file_acc[net == "bnn"]
            if abs(accuracy - want) * ntest > MARGIN_IMAGES + 0.5:
                print("digits.py: %s accuracy %.4f, the training script measured %.4f"
                      % (key, accuracy, want), file=sys.stderr)
                failed = True

    print("\nint8 predictions equal to the float cnn's: fixed-point %d / %d, fp32 %d / %d"
          % (np.sum(preds[1] == preds[0]), ntest, np.sum(preds[2] == preds[0]), ntest))
    print("float accuracies measured by train.py: cnn %.2f%%, bnn %.2f%%"
          % (100.0 * file_acc[0], 100.0 * file_acc[1]))
    if compare:
        print("accuracies against %s (images gained or lost): %s"
              % (os.path.relpath(exp_path), ", ".join(compare)))

    # the int8 cnn (fixed-point) other ways: the same calls through the bare ctypes
    # prototypes, and every test image in one call a layer
    same_c = fnv1a(np.stack([fixed.forward_ctypes(p) for p in test_x])) == results[1][3]
    us_ctypes = best_us(fixed.forward_ctypes, test_x, rounds)
    same_b = fnv1a(fixed.forward_batch(test_x)) == results[1][3]
    us_batch = best_us(lambda _: fixed.forward_batch(test_x), [None], rounds) / ntest
    print("int8 cnn (fixed-point), us / image: %.2f through the module one image a call "
          "(the table's), %.2f through bare ctypes (logits %s), %.2f through the module "
          "with the %d images as one batch (logits %s)"
          % (results[1][4], us_ctypes, "the same" if same_c else "DIFFERENT", us_batch,
             ntest, "the same" if same_b else "DIFFERENT"))
    if not (same_c and same_b):
        failed = True

    if args.c_program:
        rows, out = c_table(args.c_program, args.path, args.percentile)
        bad = []
        floats = []
        for net, arith, correct, h, us, _ in results:
            c = rows.get((net, arith))
            ok = c is not None and c[0] == "%d / %d" % (correct, ntest) and \
                c[1] == "%08x" % h
            if arith == "float":
                floats.append("%s %s" % (net, "same" if ok else "differs"))
            elif not ok:
                bad.append("%s %s" % (net, arith))
        print("\nC program %s:\n%s" % (args.c_program, out.rstrip()))
        print("\nagainst C: int8 and binary rows %s; float rows' hashes: %s"
              % ("all the same (accuracy and logits hash)" if not bad
                 else "DIFFER: " + ", ".join(bad), ", ".join(floats)))
        for net, arith, _, _, us, _ in results:
            c = rows.get((net, arith))
            if c is not None:
                print("  %s %-16s us / image: Python %8.2f, C %8.2f" % (net, arith, us,
                                                                       float(c[2])))
        if bad:
            failed = True

    if args.expected or args.c_program:
        print("check: %s" % ("FAILED" if failed else "ok"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
