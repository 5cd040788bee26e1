#!/usr/bin/python3
"""Train the two example networks on sklearn's 8x8 digits and write digits.g8d.

    /usr/bin/python3 examples/digits/train.py

numpy only (sklearn only loads the data).  Fixed seeds and a single BLAS
thread: two runs write byte-identical files.  See README.md for the networks
and the file format; check.py re-reads the file and recomputes the accuracies.
"""
import os

# One thread: the run is meant for one core, and the float sums then come out
# in the same order every time.
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import struct
import sys
import time

import numpy as np
from sklearn.datasets import load_digits

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True   # no __pycache__ next to the example
import check  # noqa: E402  (the file-only reference forward)

F32 = np.float32


# ---------------------------------------------------------------------------
# im2col / col2im for NHWC, kernel k x k, given stride and padding
# pad = (top, bottom, left, right).  Column order is (ky, kx, c), which is the
# OHWI weight layout flattened per output channel.

def out_size(n, k, stride, p0, p1):
    return (n + p0 + p1 - k) // stride + 1


def im2col(x, k, stride, pad):
    n, h, w, c = x.shape
    t, b, l, r = pad
    oh = out_size(h, k, stride, t, b)
    ow = out_size(w, k, stride, l, r)
    xp = np.zeros((n, h + t + b, w + l + r, c), x.dtype)
    xp[:, t:t + h, l:l + w, :] = x
    cols = np.empty((n, oh, ow, k, k, c), x.dtype)
    for ky in range(k):
        for kx in range(k):
            cols[:, :, :, ky, kx, :] = xp[:, ky:ky + stride * (oh - 1) + 1:stride,
                                          kx:kx + stride * (ow - 1) + 1:stride, :]
    return cols.reshape(n, oh, ow, k * k * c)


def col2im(dcols, xshape, k, stride, pad):
    n, h, w, c = xshape
    t, b, l, r = pad
    oh, ow = dcols.shape[1], dcols.shape[2]
    d = dcols.reshape(n, oh, ow, k, k, c)
    dxp = np.zeros((n, h + t + b, w + l + r, c), dcols.dtype)
    for ky in range(k):
        for kx in range(k):
            dxp[:, ky:ky + stride * (oh - 1) + 1:stride,
                kx:kx + stride * (ow - 1) + 1:stride, :] += d[:, :, :, ky, kx, :]
    return dxp[:, t:t + h, l:l + w, :]


PAD_SAME = (1, 1, 1, 1)      # 3x3 stride 1: pad 1 on every side
PAD_DOWN = (1, 0, 1, 0)      # 3x3 stride 2: pad 1 top/left, 0 bottom/right


def softmax_xent(logits, y):
    """Mean cross-entropy and its gradient with respect to the logits."""
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    n = logits.shape[0]
    loss = -np.mean(np.log(p[np.arange(n), y] + 1e-30))
    d = p.copy()
    d[np.arange(n), y] -= 1
    return loss, (d / n).astype(logits.dtype)


def sign(v):
    return np.where(v >= 0, 1, -1).astype(v.dtype)


# ---------------------------------------------------------------------------
# the layers both networks have: conv1, a real 3x3 stride 1 convolution of the
# image (c1w [C, 9], c1b [C]), and fc on the flattened NHWC activations
# (fcw [10, H*W*C], fcb [10])

def conv1_forward(p, x):
    """conv1's im2col columns [n,8,8,9] and its sums [n,8,8,C]."""
    cols1 = im2col(x, 3, 1, PAD_SAME)
    return cols1, cols1 @ p["c1w"].T + p["c1b"]


def conv1_backward(g, cols1, ds1):
    """conv1's gradients into g, from ds1 = d loss / d its sums."""
    g["c1w"] = ds1.reshape(-1, ds1.shape[-1]).T @ cols1.reshape(-1, 9)
    g["c1b"] = ds1.sum((0, 1, 2))


def fc_forward(p, h):
    """fc's input h flattened [n, H*W*C] and the logits [n, 10]."""
    f = h.reshape(h.shape[0], -1)
    return f, f @ p["fcw"].T + p["fcb"]


def fc_backward(p, f, logits, y, shape):
    """The loss of the logits against labels y and fc's backward step: (the
    loss, the gradients dict holding fc's, d loss / d fc's input reshaped to
    shape)."""
    loss, dl = softmax_xent(logits, y)
    g = {}
    g["fcw"] = dl.T @ f
    g["fcb"] = dl.sum(0)
    return loss, g, (dl @ p["fcw"]).reshape(shape)


# ---------------------------------------------------------------------------
# cnn: conv1 3x3 1->16 ReLU, dw 3x3/2 ReLU, pw 1x1 16->32 ReLU, fc 512->10
# Parameters (training layout):
#   c1w [16, 9]  (out, ky*3+kx)         c1b [16]
#   dww [9, 16]  (ky*3+kx, channel)     dwb [16]
#   pww [32, 16] (out, in)              pwb [32]
#   fcw [10, 512]                       fcb [10]

def cnn_init(rng):
    def he(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(F32)
    return {
        "c1w": he((16, 9), 9), "c1b": np.zeros(16, F32),
        "dww": he((9, 16), 9), "dwb": np.zeros(16, F32),
        "pww": he((32, 16), 16), "pwb": np.zeros(32, F32),
        "fcw": he((10, 512), 512) * F32(0.5), "fcb": np.zeros(10, F32),
    }


def cnn_loss_grad(p, x, y, want_grad=True):
    n = x.shape[0]
    cols1, s1 = conv1_forward(p, x)                        # n,8,8,16
    h1 = np.maximum(s1, 0)
    cols2 = im2col(h1, 3, 2, PAD_DOWN).reshape(n, 4, 4, 9, 16)
    s2 = np.einsum("nhwkc,kc->nhwc", cols2, p["dww"]) + p["dwb"]
    h2 = np.maximum(s2, 0)                                 # n,4,4,16
    s3 = h2 @ p["pww"].T + p["pwb"]                        # n,4,4,32
    h3 = np.maximum(s3, 0)
    f, logits = fc_forward(p, h3)                          # f: n,512
    if not want_grad:
        return logits
    loss, g, dh3 = fc_backward(p, f, logits, y, h3.shape)  # n,4,4,32
    ds3 = dh3 * (s3 > 0)
    g["pww"] = ds3.reshape(-1, 32).T @ h2.reshape(-1, 16)
    g["pwb"] = ds3.sum((0, 1, 2))
    dh2 = ds3 @ p["pww"]
    ds2 = dh2 * (s2 > 0)
    g["dww"] = np.einsum("nhwkc,nhwc->kc", cols2, ds2)
    g["dwb"] = ds2.sum((0, 1, 2))
    dcols2 = ds2[:, :, :, None, :] * p["dww"]              # n,4,4,9,16
    dh1 = col2im(dcols2.reshape(n, 4, 4, 144), h1.shape, 3, 2, PAD_DOWN)
    conv1_backward(g, cols1, dh1 * (s1 > 0))
    return loss, logits, g


def cnn_export(p):
    return [
        ("cnn.conv1.w", p["c1w"].reshape(16, 3, 3, 1)),
        ("cnn.conv1.b", p["c1b"]),
        ("cnn.dw.w", p["dww"].T.reshape(16, 3, 3, 1)),
        ("cnn.dw.b", p["dwb"]),
        ("cnn.pw.w", p["pww"].reshape(32, 1, 1, 16)),
        ("cnn.pw.b", p["pwb"]),
        ("cnn.fc.w", p["fcw"]),
        ("cnn.fc.b", p["fcb"]),
    ]


# ---------------------------------------------------------------------------
# bnn: conv1 3x3 1->32 real + sign, b2 binary 3x3 32->32 + scale/shift + sign,
# b3 binary 3x3/2 32->64 + scale/shift, fc 1024->10.
# Parameters (training layout):
#   c1w [32, 9]  c1b [32]
#   w2 [32, 288] latent real weights, (out, (ky*3+kx)*32 + c); m2 [32], a2 [32]
#   w3 [64, 288] latent;  m3 [64], a3 [64]
#   fcw [10, 1024], fcb [10]
# With binarize=False every sign is replaced by clip(v, -1, 1); the exact
# gradient of that surrogate equals the straight-through estimator used when
# binarize=True, which is how the backward pass is checked numerically.

def bnn_init(rng):
    def u(shape, a):
        return rng.uniform(-a, a, shape).astype(F32)
    return {
        "c1w": u((32, 9), 1.0), "c1b": u(32, 0.5),
        "w2": u((32, 288), 0.1), "m2": np.full(32, 1 / np.sqrt(288), F32),
        "a2": np.zeros(32, F32),
        "w3": u((64, 288), 0.1), "m3": np.full(64, 1 / np.sqrt(288), F32),
        "a3": np.zeros(64, F32),
        "fcw": (rng.standard_normal((10, 1024)) / np.sqrt(1024)).astype(F32),
        "fcb": np.zeros(10, F32),
    }


def bnn_loss_grad(p, x, y, want_grad=True, binarize=True):
    if binarize:
        q = sign
    else:
        def q(v):
            return np.clip(v, -1, 1)
    cols1, s1 = conv1_forward(p, x)                        # n,8,8,32
    a1 = q(s1)
    b2 = q(p["w2"])
    cols2 = im2col(a1, 3, 1, PAD_SAME)                     # n,8,8,288
    acc2 = cols2 @ b2.T                                    # n,8,8,32
    z2 = acc2 * p["m2"] + p["a2"]
    h2 = q(z2)
    b3 = q(p["w3"])
    cols3 = im2col(h2, 3, 2, PAD_DOWN)                     # n,4,4,288
    acc3 = cols3 @ b3.T                                    # n,4,4,64
    z3 = acc3 * p["m3"] + p["a3"]
    f, logits = fc_forward(p, z3)                          # f: n,1024
    if not want_grad:
        return logits
    loss, g, dz3 = fc_backward(p, f, logits, y, z3.shape)  # n,4,4,64
    g["m3"] = (dz3 * acc3).sum((0, 1, 2))
    g["a3"] = dz3.sum((0, 1, 2))
    dacc3 = dz3 * p["m3"]
    g["w3"] = (dacc3.reshape(-1, 64).T @ cols3.reshape(-1, 288)) * (np.abs(p["w3"]) <= 1)
    dh2 = col2im(dacc3 @ b3, h2.shape, 3, 2, PAD_DOWN)
    dz2 = dh2 * (np.abs(z2) <= 1)
    g["m2"] = (dz2 * acc2).sum((0, 1, 2))
    g["a2"] = dz2.sum((0, 1, 2))
    dacc2 = dz2 * p["m2"]
    g["w2"] = (dacc2.reshape(-1, 32).T @ cols2.reshape(-1, 288)) * (np.abs(p["w2"]) <= 1)
    da1 = col2im(dacc2 @ b2, a1.shape, 3, 1, PAD_SAME)
    conv1_backward(g, cols1, da1 * (np.abs(s1) <= 1))
    return loss, logits, g


def center_thresholds(mul, add, max_acc):
    """Move each channel's sign threshold halfway between two integers.

    acc2 is an integer in [-max_acc, max_acc], so sign(acc * mul + add) only
    depends on which integer the threshold -add/mul lies above.  A trained add
    can put that threshold a hair away from an integer, where a different
    order of float operations (an FMA, a C compiler) could flip the sign.
    Replacing add by -mul * (k - 0.5), k the first integer on the positive
    side, keeps every output sign identical (checked exhaustively below, in
    float32 as check.py computes it) and leaves a margin of |mul| / 2.
    """
    accs = np.arange(-max_acc, max_acc + 1, dtype=F32)[:, None]
    before = (accs * mul + add) >= 0                      # [2*max_acc+1, C]
    new_add = add.copy()
    for c in range(len(mul)):
        pos = before[:, c]
        if pos.all() or not pos.any() or mul[c] == 0:
            continue                                       # constant channel
        if mul[c] > 0:
            k = accs[np.argmax(pos), 0]                    # first positive
            thr = k - F32(0.5)
        else:
            k = accs[len(pos) - 1 - np.argmax(pos[::-1]), 0]  # last positive
            thr = k + F32(0.5)
        new_add[c] = F32(-mul[c] * thr)
    after = (accs * mul + new_add) >= 0
    assert np.array_equal(before, after)
    return new_add.astype(F32)


def bnn_export(p):
    return [
        ("bnn.conv1.w", p["c1w"].reshape(32, 3, 3, 1)),
        ("bnn.conv1.b", p["c1b"]),
        ("bnn.b2.w", sign(p["w2"]).reshape(32, 3, 3, 32)),
        ("bnn.b2.mul", p["m2"]),
        ("bnn.b2.add", center_thresholds(p["m2"], p["a2"], 288)),
        ("bnn.b3.w", sign(p["w3"]).reshape(64, 3, 3, 32)),
        ("bnn.b3.mul", p["m3"]),
        ("bnn.b3.add", p["a3"]),
        ("bnn.fc.w", p["fcw"]),
        ("bnn.fc.b", p["fcb"]),
    ]


# ---------------------------------------------------------------------------
# training loop: Adam, cosine learning-rate decay, decoupled weight decay

def shift_batch(x, rng):
    """Random translation by -1, 0 or +1 pixel in each direction (zero fill)."""
    n = x.shape[0]
    out = np.zeros_like(x)
    dy = rng.integers(-1, 2, n)
    dx = rng.integers(-1, 2, n)
    for i in range(n):
        sy, sx = dy[i], dx[i]
        src = x[i, max(0, -sy):8 - max(0, sy), max(0, -sx):8 - max(0, sx)]
        out[i, max(0, sy):max(0, sy) + src.shape[0],
            max(0, sx):max(0, sx) + src.shape[1]] = src
    return out


def train(name, params, loss_grad, x, y, xt, yt, rng, epochs, lr, wd, lr_of,
          clip_keys=(), batch=32, shift=True):
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v2 = {k: np.zeros_like(v) for k, v in params.items()}
    b1, b2, eps = 0.9, 0.999, 1e-8
    step = 0
    n = x.shape[0]
    steps_per_epoch = (n + batch - 1) // batch
    total = epochs * steps_per_epoch
    t0 = time.time()
    for ep in range(epochs):
        order = rng.permutation(n)
        tot_loss = 0.0
        for s in range(steps_per_epoch):
            idx = order[s * batch:(s + 1) * batch]
            xb = x[idx]
            if shift:
                xb = shift_batch(xb, rng)
            loss, _, g = loss_grad(params, xb, y[idx])
            tot_loss += loss * len(idx)
            step += 1
            frac = 0.5 * (1 + np.cos(np.pi * (step - 1) / total))
            c1 = 1 - b1 ** step
            c2 = 1 - b2 ** step
            for k in params:
                gk = g[k].astype(F32)
                m[k] = F32(b1) * m[k] + F32(1 - b1) * gk
                v2[k] = F32(b2) * v2[k] + F32(1 - b2) * gk * gk
                rate = F32(lr * lr_of.get(k, 1.0) * frac)
                upd = (m[k] / F32(c1)) / (np.sqrt(v2[k] / F32(c2)) + F32(eps))
                if k in wd:
                    params[k] = params[k] * F32(1 - rate * wd[k])
                params[k] = (params[k] - rate * upd).astype(F32)
                if k in clip_keys:
                    params[k] = np.clip(params[k], -1, 1)
        if (ep + 1) % 10 == 0 or ep == epochs - 1:
            logits = loss_grad(params, xt, yt, want_grad=False)
            acc = np.mean(np.argmax(logits, 1) == yt)
            print("%s epoch %3d  loss %.4f  test acc %.4f  (%.0f s)"
                  % (name, ep + 1, tot_loss / n, acc, time.time() - t0), flush=True)
    return params


# ---------------------------------------------------------------------------
# file writer

def write_g8d(path, tensors):
    out = [b"GEMMI8DG", struct.pack("<II", 1, len(tensors))]
    for name, arr in tensors:
        arr = np.ascontiguousarray(arr)
        if arr.dtype == np.float32:
            dtype, raw = 0, arr.astype("<f4").tobytes()
        elif arr.dtype == np.uint8:
            dtype, raw = 1, arr.tobytes()
        elif arr.dtype == np.int8:
            dtype, raw = 2, arr.tobytes()
        else:
            raise TypeError("%s: %s" % (name, arr.dtype))
        assert 1 <= arr.ndim <= 4 and len(name) < 24
        dims = list(arr.shape) + [1] * (4 - arr.ndim)
        out.append(name.encode("ascii").ljust(24, b"\0"))
        out.append(struct.pack("<6I", dtype, arr.ndim, *dims))
        out.append(raw)
        out.append(b"\0" * (-len(raw) % 4))
    data = b"".join(out)
    with open(path, "wb") as f:
        f.write(data)
    return len(data)


def main():
    t_start = time.time()
    digits = load_digits()
    images = digits.images.astype(np.uint8)                # 1797 x 8 x 8, 0..16
    labels = digits.target.astype(np.int64)
    assert images.shape == (1797, 8, 8) and images.max() == 16

    rng = np.random.default_rng(0)
    perm = rng.permutation(1797)
    train_idx, test_idx = perm[:1437], perm[1437:]
    calib_idx = train_idx[:200]

    pix = images[:, :, :, None]                            # NHWC, uint8
    x_all = (pix.astype(F32) / F32(16.0))
    xtr, ytr = x_all[train_idx], labels[train_idx]
    xte, yte = x_all[test_idx], labels[test_idx]

    cnn = train("cnn", cnn_init(np.random.default_rng(1)), cnn_loss_grad,
                xtr, ytr, xte, yte, np.random.default_rng(2),
                epochs=120, lr=3e-3, wd={"c1w": 1e-4, "dww": 1e-4, "pww": 1e-4,
                                        "fcw": 1e-4},
                lr_of={})
    bnn = train("bnn", bnn_init(np.random.default_rng(3)), bnn_loss_grad,
                xtr, ytr, xte, yte, np.random.default_rng(4),
                epochs=150, lr=3e-3, wd={"fcw": 1e-4, "c1w": 1e-4},
                lr_of={"w2": 3.0, "w3": 3.0}, clip_keys=("w2", "w3"))

    tensors = cnn_export(cnn) + bnn_export(bnn)
    tensors = [(k, np.ascontiguousarray(v, dtype=F32)) for k, v in tensors]
    signs = ("bnn.b2.w", "bnn.b3.w")                       # +1/-1, stored as int8
    test_x = pix[test_idx]
    test_y = labels[test_idx].astype(np.uint8)
    tensors += [("calib.x", np.ascontiguousarray(pix[calib_idx])),
                ("test.x", np.ascontiguousarray(test_x)),
                ("test.y", test_y)]

    # The stored accuracies come from the same file-only forward as check.py,
    # run on exactly the float32 tensors that go into the file.
    t = dict(tensors)
    tensors = [(k, v.astype(np.int8) if k in signs else v) for k, v in tensors]
    accs = {}
    for net, fwd in (("cnn", check.cnn_forward), ("bnn", check.bnn_forward)):
        logits = fwd(t, test_x)
        correct = int(np.sum(np.argmax(logits, 1) == test_y))
        accs[net] = np.float32(correct) / np.float32(len(test_y))
        print("%s: exported test accuracy %.6f (%d/%d)"
              % (net, accs[net], correct, len(test_y)))
    tensors += [("acc.cnn", np.array([accs["cnn"]], F32)),
                ("acc.bnn", np.array([accs["bnn"]], F32))]

    path = os.path.join(HERE, "digits.g8d")
    size = write_g8d(path, tensors)
    print("wrote %s (%d bytes) in %.0f s" % (path, size, time.time() - t_start))


if __name__ == "__main__":
    main()
