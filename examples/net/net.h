/*
 * gnet: three whole networks built from gemmi8's operators, batch 1, 224 x 224, NHWC,
 * with random weights drawn from a fixed seed:
 *
 *   GNET_RESNET18       ResNet-18 in ONNX Runtime's quantized form (QLinearConv, the
 *                       com.microsoft QLinearAdd and QLinearGlobalAveragePool, MaxPool
 *                       on uint8): uint8 activations with a per-tensor scale and zero
 *                       point, int8 symmetric per-output-channel weights, int32 bias,
 *                       fp32 requantization;
 *   GNET_MOBILENETV2    MobileNetV2 (width 1.0) in the same form;
 *   GNET_BIN_RESNET18   a binary ResNet-18 in the style of Bi-Real Net: int8 stem and
 *                       classifier, every 3x3 convolution of the four stages binary with
 *                       its own real-valued (float) shortcut.
 *
 * The networks are tables of layers (resnet18.c, mobilenetv2.c, bin-resnet18.c); net.c
 * holds what they share and ops.c the operators between the convolutions.
 *
 * One addition to the interface first agreed (nothing of it changed):
 * gnet_layer_tensor_b(), the second input of an "add" layer, for one-node checks of
 * QLinearAdd (gnet_layer_tensors() gives its first input, "a", and its output).
 * And one property to rely on: the int8 networks export every layer, in execution
 * order, so layer i of gnet_layer_*() is entry i of the export's "layers" array.
 */
#ifndef GNET_NET_H
#define GNET_NET_H

#include <stddef.h>
#include <stdint.h>

#include <gemmi8.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gnet gnet;

typedef enum gnet_kind { GNET_RESNET18, GNET_MOBILENETV2, GNET_BIN_RESNET18 } gnet_kind;

/*
 * Builds the network: draws its weights from seed, calibrates its quantization on an
 * input drawn from the same seed (see net.c), creates every operator, places every
 * activation buffer and sets every operator up on them once (buffers never move).
 * The buffers share one arena, as a framework's memory planner lays them out: a tensor
 * takes memory that no tensor alive at the same time uses (alive: from the layer that
 * writes it to the last that reads it; the input and the output, always), so a layer
 * writes where a layer a few steps back wrote, memory still in cache, rather than
 * into a buffer of its own untouched since the last run. The input and the output
 * keep their bytes; the tensors between them do not outlive their readers (gnet_layer_tensors
 * refuses them). GNET_KEEP_TENSORS gives each tensor a buffer of its own instead: after a run
 * every tensor holds the forward pass over the input. Returns 0 on success and sets
 * *net; -1 on failure (a message on stderr says what failed), *net then untouched.
 * Same seed, same bytes, in either layout.
 */
enum { GNET_KEEP_TENSORS = 1 };
int gnet_create(gnet_kind kind, uint64_t seed, gnet** net); /* flags 0 */
int gnet_create_ex(gnet_kind kind, uint64_t seed, unsigned flags, gnet** net);
void gnet_destroy(gnet* net); /* NULL is allowed */

/* The bytes of every activation tensor together, and the arena that holds them (0 with
 * GNET_KEEP_TENSORS). */
size_t gnet_tensor_bytes(const gnet* net, size_t* arena_bytes);

/* "resnet18", "mobilenetv2", "bin-resnet18" */
const char* gnet_name(const gnet* net);

/* The NHWC uint8 input buffer to fill, 1 x 224 x 224 x 3 (*h, *w, *c receive its
 * size); its scale and zero point are in the export. */
uint8_t* gnet_input(gnet* net, size_t* h, size_t* w, size_t* c);

/* One forward pass on the calling thread (parallel NULL) or on several: gemmi8's
 * operators and the operators of ops.c split their work over parallel. The output
 * bytes do not depend on the threads. Returns 0, or -1 when an operator failed. */
int gnet_run(gnet* net, const gemmi8_parallel* parallel);

/* The final uint8 tensor: 1000 logits, quantized (*bytes receives 1000). */
const uint8_t* gnet_output(const gnet* net, size_t* bytes);

/* Per-layer timing, off by default: with it on, gnet_run adds each layer's wall time
 * (CLOCK_MONOTONIC) to the layer's total; gnet_timing_reset sets the totals to 0. */
void gnet_timing(gnet* net, int on);
void gnet_timing_reset(gnet* net);

/* The layers, in execution order. kind: "conv", "dwconv", "bconv", "add", "maxpool",
 * "avgpool", "gap", "fc", "binarize", "quantize", "dequantize". */
size_t gnet_layers(const gnet* net);
const char* gnet_layer_name(const gnet* net, size_t i);
const char* gnet_layer_kind(const gnet* net, size_t i);
/* Seconds accumulated since the last reset (timing on). */
double gnet_layer_seconds(const gnet* net, size_t i);

/* A layer's input and output tensors as computed by the last gnet_run (or by
 * gnet_create) of a network created with GNET_KEEP_TENSORS: 0 and *in, *out set when
 * layer i reads and writes uint8 tensors (the layers of the int8 networks; of the
 * binary one its stem, max pool and classifier); -1 otherwise, and for a network in one
 * arena (nothing written). For "add", *in is its first input, "a". */
int gnet_layer_tensors(const gnet* net, size_t i, const uint8_t** in, const uint8_t** out);
/* The second input, "b", of an "add" layer on uint8 tensors: 0 and *b set, else -1. */
int gnet_layer_tensor_b(const gnet* net, size_t i, const uint8_t** b);

/*
 * Writes the int8 networks' description (json_path) and weights (bin_path); -1 for
 * the binary network or when a file cannot be written, else 0.
 *
 * JSON: {"network": name, "input": {"name": "input", "shape": [1,224,224,3], "scale":
 * f, "zero_point": i}, "output": tensor name, "layers": [...]}, one object a layer in
 * execution order, each with "op" and "name" and:
 *   conv (depthwise too, and the classifier as a conv of kernel [1,1] on a 1x1 map):
 *     "input", "output", "kernel": [kh,kw], "stride": [sh,sw], "dilation": [dh,dw],
 *     "pads": [top,left,bottom,right], "group", "in_channels", "out_channels",
 *     "x_scale", "x_zero_point", "w_offset" (int8, OHWI: [out][kh][kw][in/group]),
 *     "w_scale_offset" (float32 [out]), "bias_offset" (int32 [out]), "y_scale",
 *     "y_zero_point";
 *   add: "a", "b", "output", "a_scale", "a_zero_point", "b_scale", "b_zero_point",
 *     "y_scale", "y_zero_point";
 *   maxpool: "input", "output", "kernel", "stride", "pads";
 *   gap: "input", "output", "x_scale", "x_zero_point", "y_scale", "y_zero_point".
 * Floats are printed with "%.9g" (they read back as the same float32), tensor names
 * are unique, and a layer's output tensor has the layer's name. The .bin holds raw
 * little-endian arrays at the offsets given, each a multiple of 64.
 */
int gnet_export(const gnet* net, const char* json_path, const char* bin_path);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GNET_NET_H */
