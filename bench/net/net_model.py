#!/usr/bin/env python3
"""Turns a network exported by gemmi8's examples (gnet_export) into an ONNX model.

    python3 bench/net/net_model.py PREFIX [LAYER_DIR]

reads PREFIX.json and PREFIX.bin and writes PREFIX.onnx: the network as ONNX
Runtime's quantized models have it, uint8 NCHW in and out.

PREFIX.json (execution order; every float printed to round-trip to float32):
    {"network": NAME,
     "input": {"name": N, "shape": [1, H, W, C] (NHWC), "scale": S, "zero_point": Z},
     "output": TENSOR,
     "layers": [{"op": OP, "name": NAME, ...}, ...]}
with the layers
    conv     input, output, kernel [kh, kw], stride [sh, sw], dilation [dh, dw],
             pads [top, left, bottom, right], group, in_channels, out_channels,
             x_scale, x_zero_point, w_offset, w_scale_offset, bias_offset, y_scale,
             y_zero_point (depthwise layers and the classifier, a 1x1 convolution on
             a 1x1 map, included)
    add      a, b, output, a_scale, a_zero_point, b_scale, b_zero_point, y_scale,
             y_zero_point
    maxpool  input, output, kernel, stride, pads
    gap      input, output, x_scale, x_zero_point, y_scale, y_zero_point
and PREFIX.bin the raw little-endian arrays at the offsets: int8 weights
out x kh x kw x in/group (OHWI), float32 w_scale[out], int32 bias[out].

The model: the input as uint8 [1, C, H, W]; conv as QLinearConv (weights OIHW,
per-output-channel w_scale, int8 zero w_zero_point: symmetric weights), add as
com.microsoft QLinearAdd, maxpool as MaxPool on uint8, gap as com.microsoft
QLinearGlobalAveragePool (channels_last 0), each node named after its layer; the
output the last tensor, uint8 [1, classes, 1, 1]. It imports opset 13 and
com.microsoft version 1, the operators' versions in ONNX Runtime.

With LAYER_DIR, every layer is also written alone, as LAYER_DIR/<index>.onnx
(input "x", output "y", both NCHW uint8, the index that of the layer in the JSON), and
LAYER_DIR/layers.txt lists them, one a line:
    index name op C H W OC OH OW
(the input's and the output's channels, height and width): what a comparison of
each layer on the same input needs. An add layer's model takes its two inputs as one,
a then b along the channels (C is twice the channels of each), and splits them
(Split) before its QLinearAdd: a model of one input runs like every other.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
MS_DOMAIN = "com.microsoft"
MS_OPSET = 1


class Net:
    """The exported network: its JSON and its weights' bytes."""

    def __init__(self, prefix):
        with open(prefix + ".json", encoding="utf-8") as f:
            self.spec = json.load(f)
        with open(prefix + ".bin", "rb") as f:
            self.blob = f.read()

    def array(self, offset, dtype, count, what):
        """count values of dtype at byte offset of the .bin, bounds checked."""
        dtype = np.dtype(dtype)
        offset = int(offset)
        end = offset + dtype.itemsize * count
        if offset < 0 or end > len(self.blob):
            raise ValueError(f"{what}: bytes {offset}..{end} outside the {len(self.blob)}"
                             " bytes of the .bin")
        return np.frombuffer(self.blob, dtype=dtype, count=count, offset=offset).copy()


def conv_output(size, kernel, stride, dilation, pad_begin, pad_end):
    return (size + pad_begin + pad_end - dilation * (kernel - 1) - 1) // stride + 1


class Graph:
    """Nodes and initializers of a model under construction."""

    def __init__(self):
        self.nodes = []
        self.initializers = []

    def constant(self, name, value, dtype):
        """An initializer (a scalar unless value is an array) and its name."""
        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def conv(self, net, layer, x, y, shape):
        """QLinearConv; shape (C, H, W) of x; returns that of y."""
        name = layer["name"]
        c, h, w = shape
        group = int(layer["group"])
        cin, cout = int(layer["in_channels"]), int(layer["out_channels"])
        kh, kw = (int(v) for v in layer["kernel"])
        sh, sw = (int(v) for v in layer["stride"])
        dh, dw = (int(v) for v in layer["dilation"])
        top, left, bottom, right = (int(v) for v in layer["pads"])
        if cin != c:
            raise ValueError(f"{name}: in_channels {cin}, its input has {c}")
        if group < 1 or cin % group or cout % group:
            raise ValueError(f"{name}: group {group} does not divide {cin} and {cout}")
        ci = cin // group
        # gemmi8's OHWI, [out][kh][kw][in/group], to ONNX's OIHW.
        weights = net.array(layer["w_offset"], "<i1", cout * kh * kw * ci, name + " weights")
        weights = weights.reshape(cout, kh, kw, ci).transpose(0, 3, 1, 2).copy()
        w_scale = net.array(layer["w_scale_offset"], "<f4", cout, name + " w_scale")
        bias = net.array(layer["bias_offset"], "<i4", cout, name + " bias")
        inputs = [
            x,
            self.constant(name + ".x_scale", layer["x_scale"], np.float32),
            self.constant(name + ".x_zero_point", layer["x_zero_point"], np.uint8),
            self.constant(name + ".w", weights, np.int8),
            # One scale per output channel; a tensor of one channel would read as
            # per-tensor, which is the same thing.
            self.constant(name + ".w_scale", w_scale, np.float32),
            self.constant(name + ".w_zero_point", np.zeros(cout), np.int8),
            self.constant(name + ".y_scale", layer["y_scale"], np.float32),
            self.constant(name + ".y_zero_point", layer["y_zero_point"], np.uint8),
            self.constant(name + ".bias", bias, np.int32),
        ]
        self.nodes.append(helper.make_node(
            "QLinearConv", inputs, [y], name=name, group=group, kernel_shape=[kh, kw],
            strides=[sh, sw], dilations=[dh, dw],
            # ONNX orders pads as all the begins, then all the ends.
            pads=[top, left, bottom, right]))
        return (cout, conv_output(h, kh, sh, dh, top, bottom),
                conv_output(w, kw, sw, dw, left, right))

    def add(self, layer, a, b, y, shape_a, shape_b):
        name = layer["name"]
        if shape_a != shape_b:
            raise ValueError(f"{name}: adds {shape_a} and {shape_b}")
        inputs = [
            a,
            self.constant(name + ".a_scale", layer["a_scale"], np.float32),
            self.constant(name + ".a_zero_point", layer["a_zero_point"], np.uint8),
            b,
            self.constant(name + ".b_scale", layer["b_scale"], np.float32),
            self.constant(name + ".b_zero_point", layer["b_zero_point"], np.uint8),
            self.constant(name + ".y_scale", layer["y_scale"], np.float32),
            self.constant(name + ".y_zero_point", layer["y_zero_point"], np.uint8),
        ]
        self.nodes.append(helper.make_node("QLinearAdd", inputs, [y], name=name,
                                           domain=MS_DOMAIN))
        return shape_a

    def maxpool(self, layer, x, y, shape):
        c, h, w = shape
        kh, kw = (int(v) for v in layer["kernel"])
        sh, sw = (int(v) for v in layer["stride"])
        top, left, bottom, right = (int(v) for v in layer["pads"])
        # MaxPool takes uint8 since opset 12; the padding is never the maximum.
        self.nodes.append(helper.make_node(
            "MaxPool", [x], [y], name=layer["name"], kernel_shape=[kh, kw], strides=[sh, sw],
            pads=[top, left, bottom, right]))
        return (c, conv_output(h, kh, sh, 1, top, bottom), conv_output(w, kw, sw, 1, left, right))

    def gap(self, layer, x, y, shape):
        name = layer["name"]
        inputs = [
            x,
            self.constant(name + ".x_scale", layer["x_scale"], np.float32),
            self.constant(name + ".x_zero_point", layer["x_zero_point"], np.uint8),
            self.constant(name + ".y_scale", layer["y_scale"], np.float32),
            self.constant(name + ".y_zero_point", layer["y_zero_point"], np.uint8),
        ]
        self.nodes.append(helper.make_node("QLinearGlobalAveragePool", inputs, [y], name=name,
                                           domain=MS_DOMAIN, channels_last=0))
        return (shape[0], 1, 1)

    def layer(self, net, layer, names, shapes):
        """Appends layer, reading its inputs' names and shapes from names/shapes (by
        the JSON's tensor names) and returning its output's shape."""
        op = layer["op"]
        if op == "conv":
            return self.conv(net, layer, names(layer["input"]), names(layer["output"]),
                             shapes(layer["input"]))
        if op == "add":
            return self.add(layer, names(layer["a"]), names(layer["b"]), names(layer["output"]),
                            shapes(layer["a"]), shapes(layer["b"]))
        if op == "maxpool":
            return self.maxpool(layer, names(layer["input"]), names(layer["output"]),
                                shapes(layer["input"]))
        if op == "gap":
            return self.gap(layer, names(layer["input"]), names(layer["output"]),
                            shapes(layer["input"]))
        raise ValueError(f"layer {layer.get('name')}: op {op!r} not handled")

    def model(self, graph_name, x, x_shape, y, y_shape):
        """The model of the nodes so far, x and y uint8 NCHW of shapes (C, H, W)."""
        graph = helper.make_graph(
            self.nodes, graph_name,
            [helper.make_tensor_value_info(x, TensorProto.UINT8, [1, *x_shape])],
            [helper.make_tensor_value_info(y, TensorProto.UINT8, [1, *y_shape])],
            initializer=self.initializers)
        model = helper.make_model(graph, producer_name="gemmi8-bench",
                                  opset_imports=[helper.make_opsetid("", OPSET),
                                                 helper.make_opsetid(MS_DOMAIN, MS_OPSET)])
        # An IR version every ONNX Runtime since 1.10 reads, whatever this onnx writes.
        model.ir_version = min(model.ir_version, 8)
        # The checker knows the ONNX operators; com.microsoft's are left to ONNX Runtime.
        onnx.checker.check_model(model)
        return model


def input_shape(spec):
    n, h, w, c = (int(v) for v in spec["input"]["shape"])
    if n != 1:
        raise ValueError(f"input batch {n}: 1 only")
    return (c, h, w)


def network_model(net):
    spec = net.spec
    shapes = {spec["input"]["name"]: input_shape(spec)}
    graph = Graph()
    for layer in spec["layers"]:
        out = layer["output"]
        if out in shapes:
            raise ValueError(f"layer {layer['name']}: tensor {out} written twice")
        shapes[out] = graph.layer(net, layer, lambda t: t, lambda t: shapes[t])
    output = spec["output"]
    return graph.model(spec["network"], spec["input"]["name"], shapes[spec["input"]["name"]],
                       output, shapes[output]), shapes


def write_layers(net, shapes, layer_dir):
    """One model per layer, and their list."""
    os.makedirs(layer_dir, exist_ok=True)
    lines = []
    for index, layer in enumerate(net.spec["layers"]):
        if any(c.isspace() for c in layer["name"]):
            raise ValueError(f"layer {layer['name']!r}: a name with spaces")
        graph = Graph()
        if layer["op"] == "add":
            # a and b, [1, C, H, W] each, arrive as one [1, 2C, H, W] input.
            c, h, w = shapes[layer["a"]]
            x_shape = (2 * c, h, w)
            graph.nodes.append(helper.make_node(
                "Split", ["x", graph.constant(layer["name"] + ".split", [c, c], np.int64)],
                ["a", "b"], name=layer["name"] + ".split", axis=1))
            names = {layer["a"]: "a", layer["b"]: "b", layer["output"]: "y"}
        else:
            x_shape = shapes[layer["input"]]
            names = {layer["input"]: "x", layer["output"]: "y"}
        y_shape = graph.layer(net, layer, lambda t: names[t], lambda t: shapes[t])
        onnx.save(graph.model(layer["name"], "x", x_shape, "y", y_shape),
                  os.path.join(layer_dir, f"{index}.onnx"))
        lines.append(f"{index} {layer['name']} {layer['op']} "
                     f"{' '.join(str(v) for v in (*x_shape, *y_shape))}\n")
    with open(os.path.join(layer_dir, "layers.txt"), "w", encoding="ascii") as f:
        f.writelines(lines)


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    prefix = argv[1]
    net = Net(prefix)
    model, shapes = network_model(net)
    onnx.save(model, prefix + ".onnx")
    if len(argv) == 3:
        write_layers(net, shapes, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
