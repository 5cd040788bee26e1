#!/usr/bin/python3
"""Reference reader and forward pass for digits.g8d, numpy only.

Reads the weights and test images from the file alone, runs both networks in
float32 and prints the test accuracy of each, the number of test images
classified correctly, and the logits of test image 0.

    /usr/bin/python3 examples/digits/check.py [path/to/digits.g8d]

The forward pass is written as plain loops over output pixels and kernel taps
so that it can be compared line by line with a C port.  Layout is NHWC for
activations and OHWI for weights.  Convolutions are cross-correlations: output
pixel (oy, ox), tap (ky, kx) reads input pixel
    (stride*oy - pad_top + ky, stride*ox - pad_left + kx)
and a tap that falls outside the image contributes 0.
"""
import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import struct
import sys

import numpy as np

MAGIC = b"GEMMI8DG"
VERSION = 1
DTYPES = {0: np.dtype("<f4"), 1: np.dtype("u1"), 2: np.dtype("i1")}


def load_g8d(path):
    """Return an ordered dict name -> numpy array (float32 or uint8)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != MAGIC:
        raise ValueError("%s: bad magic" % path)
    version, count = struct.unpack_from("<II", data, 8)
    if version != VERSION:
        raise ValueError("%s: version %d, expected %d" % (path, version, VERSION))
    pos = 16
    tensors = {}
    for _ in range(count):
        name = data[pos:pos + 24].rstrip(b"\0").decode("ascii")
        dtype, ndim, d0, d1, d2, d3 = struct.unpack_from("<6I", data, pos + 24)
        pos += 48
        dims = (d0, d1, d2, d3)[:ndim]
        dt = DTYPES[dtype]
        n = int(np.prod(dims))
        nbytes = n * dt.itemsize
        arr = np.frombuffer(data, dtype=dt, count=n, offset=pos).reshape(dims)
        # int8 tensors (the +1/-1 signs of the binary filters) are read as float32
        tensors[name] = arr.astype(np.float32 if dtype == 2 else dt.newbyteorder("="))
        pos += (nbytes + 3) // 4 * 4
    if pos != len(data):
        raise ValueError("%s: %d trailing bytes" % (path, len(data) - pos))
    return tensors


def sign(v):
    """+1 where v >= 0, -1 where v < 0 (0 maps to +1)."""
    return np.where(v >= 0, np.float32(1), np.float32(-1)).astype(np.float32)


def conv_loops(x, w, stride, pad_top, pad_left, out_h, out_w, out_c, tap):
    """The loop nest of both convolutions, no bias.

    x: [N, H, W, C] float32, w: [O, KH, KW, I] float32 -> [N, out_h, out_w, out_c].
    Output pixel (oy, ox) is the sum over the taps (ky, kx) inside the input of
    tap(x[:, iy, ix, :], w[:, ky, kx, :]), an [N, out_c] array; taps outside the
    input contribute 0 (zero padding).
    """
    n, h, wd, c = x.shape
    kh, kw = w.shape[1], w.shape[2]
    out = np.zeros((n, out_h, out_w, out_c), np.float32)
    for oy in range(out_h):
        for ox in range(out_w):
            acc = np.zeros((n, out_c), np.float32)
            for ky in range(kh):
                iy = stride * oy - pad_top + ky
                if iy < 0 or iy >= h:
                    continue
                for kx in range(kw):
                    ix = stride * ox - pad_left + kx
                    if ix < 0 or ix >= wd:
                        continue
                    acc += tap(x[:, iy, ix, :], w[:, ky, kx, :])
            out[:, oy, ox, :] = acc
    return out


def conv2d(x, w, stride, pad_top, pad_left, out_h, out_w):
    """Dense convolution, no bias.

    x: [N, H, W, C] float32, w: [O, KH, KW, C] float32 -> [N, out_h, out_w, O].
    Each tap adds pixel [N, C] @ weights[O, C].T.
    """
    assert w.shape[3] == x.shape[3]
    return conv_loops(x, w, stride, pad_top, pad_left, out_h, out_w, w.shape[0],
                      lambda pixel, weights: pixel @ weights.T)


def depthwise_conv2d(x, w, stride, pad_top, pad_left, out_h, out_w):
    """Depthwise convolution, no bias.

    x: [N, H, W, C] float32, w: [C, KH, KW, 1] float32 -> [N, out_h, out_w, C].
    Each tap adds pixel [N, C] * weights[C, 0], channel by channel.
    """
    assert w.shape[0] == x.shape[3] and w.shape[3] == 1
    return conv_loops(x, w, stride, pad_top, pad_left, out_h, out_w, x.shape[3],
                      lambda pixel, weights: pixel * weights[:, 0])


def relu(v):
    return np.maximum(v, np.float32(0))


def cnn_forward(t, pixels):
    """pixels: [N, 8, 8, 1] uint8 0..16 -> logits [N, 10] float32."""
    x = pixels.astype(np.float32) / np.float32(16.0)
    # conv1: 3x3, 1 -> 16, stride 1, pad 1 all sides, bias, ReLU -> 8x8x16
    h = relu(conv2d(x, t["cnn.conv1.w"], 1, 1, 1, 8, 8) + t["cnn.conv1.b"])
    # dw: depthwise 3x3, stride 2, pad 1 top/left, 0 bottom/right, bias, ReLU -> 4x4x16
    h = relu(depthwise_conv2d(h, t["cnn.dw.w"], 2, 1, 1, 4, 4) + t["cnn.dw.b"])
    # pw: 1x1, 16 -> 32, bias, ReLU -> 4x4x32
    h = relu(conv2d(h, t["cnn.pw.w"], 1, 0, 0, 4, 4) + t["cnn.pw.b"])
    # fc: flatten NHWC, index (h*4 + w)*32 + c, 512 -> 10
    f = h.reshape(h.shape[0], 4 * 4 * 32)
    return f @ t["cnn.fc.w"].T + t["cnn.fc.b"]


def bnn_forward(t, pixels):
    """pixels: [N, 8, 8, 1] uint8 0..16 -> logits [N, 10] float32."""
    x = pixels.astype(np.float32) / np.float32(16.0)
    # conv1: real 3x3, 1 -> 32, stride 1, pad 1 (zeros), bias, sign -> 8x8x32 of +-1
    a1 = sign(conv2d(x, t["bnn.conv1.w"], 1, 1, 1, 8, 8) + t["bnn.conv1.b"])
    # b2: binary 3x3, 32 -> 32, stride 1, pad 1 all sides with zeros.
    # acc2 is an integer (sum of +-1 products over taps inside the image).
    acc2 = conv2d(a1, t["bnn.b2.w"], 1, 1, 1, 8, 8)
    a2 = sign(acc2 * t["bnn.b2.mul"] + t["bnn.b2.add"])
    # b3: binary 3x3, 32 -> 64, stride 2, pad 1 top/left, 0 bottom/right, zeros.
    acc3 = conv2d(a2, t["bnn.b3.w"], 2, 1, 1, 4, 4)
    z3 = acc3 * t["bnn.b3.mul"] + t["bnn.b3.add"]
    # fc: flatten NHWC, index (h*4 + w)*64 + c, 1024 -> 10
    f = z3.reshape(z3.shape[0], 4 * 4 * 64)
    return f @ t["bnn.fc.w"].T + t["bnn.fc.b"]


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    path = argv[1] if len(argv) > 1 else os.path.join(here, "digits.g8d")
    t = load_g8d(path)
    for name in ("bnn.b2.w", "bnn.b3.w"):
        assert np.all(np.abs(t[name]) == 1), name
    x, y = t["test.x"], t["test.y"].astype(np.int64)
    ok = True
    for net, fwd in (("cnn", cnn_forward), ("bnn", bnn_forward)):
        logits = fwd(t, x)
        correct = int(np.sum(np.argmax(logits, axis=1) == y))
        acc = np.float32(correct) / np.float32(len(y))
        stored = t["acc." + net][0]
        match = acc == stored
        ok = ok and match
        print("%s: test accuracy %.6f (%d/%d correct), stored %.6f %s"
              % (net, acc, correct, len(y), stored, "ok" if match else "MISMATCH"))
        print("%s: logits of test image 0 (label %d): %s"
              % (net, y[0], " ".join("%.6g" % v for v in logits[0])))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
