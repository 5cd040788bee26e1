/*
 * What net.c shares with the network tables (resnet18.c, mobilenetv2.c,
 * bin-resnet18.c): the tensors, the layers and the builders that append them.
 *
 * A network is built front to back, one builder call a layer. Each builder allocates
 * the layer's output tensor, draws the layer's weights, chooses its quantization from
 * the data that reaches it (net.c: "Calibration"), creates and sets up its operator and
 * runs it once, so that the next layer is calibrated on real activations. Builders
 * return the index of their output tensor. A failure is kept in the network (the
 * message printed once) and turns every later builder into a no-op, so a table reads
 * without error checks; gnet_create looks at it at the end.
 */
#ifndef GNET_NET_IMPL_H
#define GNET_NET_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "net.h"
#include "ops.h"

typedef enum gnet_type {
  GNET_T_U8,   /* uint8, a scale and a zero point */
  GNET_T_F32,
  GNET_T_S32,  /* int32 accumulators of a convolution, with per-channel scales */
  GNET_T_BITS, /* packed signs, GEMMI8_BIN_WORDS(c) words a pixel */
} gnet_type;

/* What follows a convolution or an add, folded into its output quantization. */
typedef enum gnet_act {
  GNET_LINEAR, /* nothing: scale and zero point from the calibration range */
  GNET_RELU,   /* zero point 0: the clamp at 0 is the ReLU */
  GNET_RELU6,  /* zero point 0 and scale 6/255: the clamp at 255 is the 6 */
} gnet_act;

typedef struct gnet_tensor {
  char name[48];
  gnet_type type;
  size_t h, w, c;
  float scale;        /* GNET_T_U8 */
  int32_t zero_point; /* GNET_T_U8 */
  float* scales;      /* GNET_T_S32: c dequantization scales, x_scale * w_scale[c] */
  void* data;         /* 64-byte aligned, h * w pixels of c elements (words for bits) */
  size_t bytes;
} gnet_tensor;

typedef enum gnet_op {
  GNET_OP_CONV,
  GNET_OP_DWCONV,
  GNET_OP_BCONV,
  GNET_OP_ADD,
  GNET_OP_MAXPOOL,
  GNET_OP_AVGPOOL,
  GNET_OP_GAP,
  GNET_OP_FC,
  GNET_OP_BINARIZE,
  GNET_OP_QUANTIZE,
  GNET_OP_DEQUANTIZE,
} gnet_op;

typedef struct gnet_layer {
  gnet_op op;
  char name[48];
  size_t in, in2, out; /* tensors (in2: the add's second input) */
  double seconds;
  /* conv, dwconv, bconv: the operator; fc: the packed weights and requantization */
  gemmi8_convolution* conv;
  gemmi8_conv_geometry geometry;
  void* packed;
  gemmi8_requant rq;
  /* int8 weights and quantization, kept for the export: OHWI weights, w_scale and
   * bias per output channel, the requantization scales (x_scale * w_scale[c]) /
   * y_scale */
  int8_t* weights;
  float* w_scale;
  int32_t* bias;
  float* rq_scale;
  /* pooling (maxpool, avgpool) */
  size_t kernel, stride, pad;
  /* the ops.c operators: their arguments, row count and grain */
  union {
    ops_qadd qadd;
    ops_maxpool maxpool;
    ops_qgap qgap;
    ops_dequant_u8 dequant_u8;
    ops_dequant_s32 dequant_s32;
    ops_quant_f32 quant;
    ops_add_f32 add_f32;
    ops_avgpool_f32 avgpool;
    ops_gap_f32 gap_f32;
    ops_binarize binarize;
  } args;
  ops_range_fn fn;
  size_t rows, grain;
} gnet_layer;

struct gnet {
  gnet_kind kind;
  const char* name;
  gnet_tensor* tensors;
  size_t tensor_count, tensor_cap;
  gnet_layer* layers;
  size_t layer_count, layer_cap;
  size_t input, output;
  int timing;
  int failed;
  uint64_t rng;
  /* one arena for every tensor (gnet_create): tensor i at arena + plan[i]; NULL when
   * each has its own buffer */
  size_t* plan;
  size_t plan_count;
  uint8_t* arena;
  size_t arena_bytes;
};

/* The three tables. */
void gnet_build_resnet18(gnet* net);
void gnet_build_mobilenetv2(gnet* net);
void gnet_build_bin_resnet18(gnet* net);

/* ---- builders (net.c) --------------------------------------------------------------- */

/* The network's input, h x w x c uint8 with the given quantization, filled from the
 * network's random stream. */
size_t gnet_input_tensor(gnet* net, size_t h, size_t w, size_t c, float scale,
                         int32_t zero_point);

/* k x k convolution of a uint8 tensor, stride s, padding (k - 1) / 2 on every side,
 * groups groups (1; or the input's channels: depthwise), cout output channels, uint8
 * out with act folded into its quantization; kind "conv" or "dwconv". */
size_t gnet_conv(gnet* net, size_t x, size_t cout, size_t k, size_t s, size_t groups,
                 gnet_act act, const char* name_format, ...)
    __attribute__((format(printf, 8, 9)));

/* The same with int32 output (gemmi8_qu8s8_convolution_create_s32), groups 1: the
 * accumulators and their per-channel dequantization scales. */
size_t gnet_conv_s32(gnet* net, size_t x, size_t cout, size_t k, size_t s,
                     const char* name_format, ...) __attribute__((format(printf, 6, 7)));

/* QLinearAdd of two uint8 tensors of one shape: a + b, act folded. */
size_t gnet_qadd(gnet* net, size_t a, size_t b, gnet_act act, const char* name_format, ...)
    __attribute__((format(printf, 5, 6)));

/* Max pooling of a uint8 tensor, k x k, stride s, padding pad. */
size_t gnet_maxpool(gnet* net, size_t x, size_t k, size_t s, size_t pad,
                    const char* name_format, ...) __attribute__((format(printf, 6, 7)));

/* The same with float out: each maximum dequantized with x's scale and zero point
 * (the bytes of gnet_maxpool then gnet_dequantize, in one pass). */
size_t gnet_maxpool_f32(gnet* net, size_t x, size_t k, size_t s, size_t pad,
                        const char* name_format, ...) __attribute__((format(printf, 6, 7)));

/* Global average pooling: uint8 (QLinearGlobalAveragePool) or float. */
size_t gnet_gap(gnet* net, size_t x, const char* name_format, ...)
    __attribute__((format(printf, 3, 4)));

/* Classifier: uint8 1 x 1 x cin to uint8 1 x 1 x cout, a qu8s8 GEMM. */
size_t gnet_fc(gnet* net, size_t x, size_t cout, const char* name_format, ...)
    __attribute__((format(printf, 4, 5)));

/* Float <-> uint8 and int32 -> float. quantize chooses its scale and zero point by
 * calibration; dequantize takes a uint8 tensor's or an int32 tensor's scales. */
size_t gnet_quantize(gnet* net, size_t x, const char* name_format, ...)
    __attribute__((format(printf, 3, 4)));
size_t gnet_dequantize(gnet* net, size_t x, const char* name_format, ...)
    __attribute__((format(printf, 3, 4)));

/* Float: sign binarization, the binary convolution (k x k, stride s, padding
 * (k - 1) / 2, zero padding; float out with a folded batch norm), the sum of two
 * tensors, average pooling k x k stride k. */
size_t gnet_binarize(gnet* net, size_t x, const char* name_format, ...)
    __attribute__((format(printf, 3, 4)));
size_t gnet_bconv(gnet* net, size_t x, size_t cout, size_t k, size_t s,
                  const char* name_format, ...) __attribute__((format(printf, 6, 7)));
/* The same with the result added to the float tensor residual (of the output's shape),
 * in place (gemmi8_bin_output_f32_add): returns residual, which then holds the sum. */
size_t gnet_bconv_add(gnet* net, size_t x, size_t residual, size_t cout, size_t k, size_t s,
                      const char* name_format, ...) __attribute__((format(printf, 7, 8)));
size_t gnet_add_f32(gnet* net, size_t a, size_t b, const char* name_format, ...)
    __attribute__((format(printf, 4, 5)));
size_t gnet_avgpool(gnet* net, size_t x, size_t k, const char* name_format, ...)
    __attribute__((format(printf, 4, 5)));

/* The channels of a tensor. */
size_t gnet_channels(const gnet* net, size_t t);

#endif /* GNET_NET_IMPL_H */
