#!/usr/bin/env python3
"""Writes a one-node ONNX model: QLinearConv, uint8 in and out, int8 weights.

    python3 bench/net/qconv_model.py LAYER OUT.onnx

LAYER is either a directory written by qconv-compare (layer.txt and raw files, below)
or a .npz file with the same names as arrays (the scalars as 0-d or 1-element arrays).

layer.txt holds one `key value...` a line:
    input N C H W          the input tensor, NCHW (N may be 1 or more)
    output_channels M
    group G
    kernel KH KW
    strides SH SW
    pads TOP LEFT BOTTOM RIGHT
    dilations DH DW
    x_scale S              floats in any form float() reads, hexadecimal (0x1.8p-7)
    x_zero_point Z         included: C's %a writes them exactly
    y_scale S
    y_zero_point Z
and the raw files, little-endian, no header:
    w.bin        int8  M x C/G x KH x KW (OIHW)
    w_scale.bin  float32, M values (per output channel) or 1 (per tensor)
    bias.bin     int32, M values (absent: no bias)

The model: input "x" (uint8, N x C x H x W), output "y" (uint8), everything else an
initializer: x_scale, x_zero_point (uint8), w, w_scale, w_zero_point (int8 zeros of
w_scale's length: symmetric weights), y_scale, y_zero_point, bias. QLinearConv has
one version (opset 10), which takes per-output-channel w_scale; the model imports
opset 13.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def parse_number(text):
    """A float from decimal or C's hexadecimal notation, or an int."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    if text.lstrip("+-").lower().startswith("0x"):
        return float.fromhex(text)
    return float(text)


def read_layer_dir(path):
    """The layer written by qconv-compare: layer.txt and raw arrays."""
    layer = {}
    with open(os.path.join(path, "layer.txt"), encoding="ascii") as f:
        for line in f:
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            values = [parse_number(v) for v in fields[1:]]
            layer[fields[0]] = values if len(values) > 1 else values[0]
    layer["w"] = np.fromfile(os.path.join(path, "w.bin"), dtype="<i1")
    layer["w_scale"] = np.fromfile(os.path.join(path, "w_scale.bin"), dtype="<f4")
    bias_path = os.path.join(path, "bias.bin")
    layer["bias"] = np.fromfile(bias_path, dtype="<i4") if os.path.exists(bias_path) else None
    return layer


def read_layer_npz(path):
    """The same names as arrays of a .npz file."""
    data = np.load(path)
    layer = {}
    for key in data.files:
        value = data[key]
        if key in ("w", "w_scale", "bias"):
            layer[key] = value
        elif value.size == 1:
            layer[key] = value.reshape(()).item()
        else:
            layer[key] = [v.item() for v in value.reshape(-1)]
    layer.setdefault("bias", None)
    return layer


def make_model(layer):
    n, c, h, w = (int(v) for v in layer["input"])
    m = int(layer["output_channels"])
    group = int(layer["group"])
    kh, kw = (int(v) for v in layer["kernel"])
    if c % group != 0 or m % group != 0:
        raise ValueError(f"group {group} divides neither C = {c} nor M = {m}")
    weights = np.asarray(layer["w"], dtype=np.int8).reshape(m, c // group, kh, kw)
    w_scale = np.asarray(layer["w_scale"], dtype=np.float32).reshape(-1)
    if w_scale.size not in (1, m):
        raise ValueError(f"w_scale has {w_scale.size} values, not 1 or {m}")

    def scalar(name, value, dtype):
        return numpy_helper.from_array(np.array(value, dtype=dtype), name)

    initializers = [
        scalar("x_scale", layer["x_scale"], np.float32),
        scalar("x_zero_point", layer["x_zero_point"], np.uint8),
        numpy_helper.from_array(weights, "w"),
        # A 1-D w_scale of M values is per output channel; a scalar is per tensor.
        numpy_helper.from_array(w_scale if w_scale.size == m and m > 1 else w_scale.reshape(()),
                                "w_scale"),
        numpy_helper.from_array(np.zeros(w_scale.shape if w_scale.size == m and m > 1 else (),
                                         dtype=np.int8), "w_zero_point"),
        scalar("y_scale", layer["y_scale"], np.float32),
        scalar("y_zero_point", layer["y_zero_point"], np.uint8),
    ]
    inputs = ["x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale",
              "y_zero_point"]
    if layer.get("bias") is not None:
        bias = np.asarray(layer["bias"], dtype=np.int32).reshape(m)
        initializers.append(numpy_helper.from_array(bias, "bias"))
        inputs.append("bias")

    top, left, bottom, right = (int(v) for v in layer["pads"])
    sh, sw = (int(v) for v in layer["strides"])
    dh, dw = (int(v) for v in layer["dilations"])
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (w + left + right - dw * (kw - 1) - 1) // sw + 1
    node = helper.make_node(
        "QLinearConv", inputs, ["y"], name="qconv",
        group=group,
        kernel_shape=[kh, kw],
        strides=[sh, sw],
        # ONNX orders pads as all the begins, then all the ends.
        pads=[top, left, bottom, right],
        dilations=[dh, dw],
    )
    graph = helper.make_graph(
        [node], "qconv",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [n, c, h, w])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [n, m, oh, ow])],
        initializer=initializers,
    )
    model = helper.make_model(graph, producer_name="gemmi8-bench",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    # An IR version every ONNX Runtime since 1.10 reads, whatever this onnx writes.
    model.ir_version = min(model.ir_version, 8)
    onnx.checker.check_model(model)
    return model


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    source, out = argv[1], argv[2]
    layer = read_layer_npz(source) if source.endswith(".npz") else read_layer_dir(source)
    onnx.save(make_model(layer), out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
