/*
 * The operators between the convolutions (ops.c): plain C loops, each over a range of
 * its rows so that it can be split over a gemmi8_parallel (ops_parallel).
 *
 * Tensors are NHWC, batch 1, each pixel's channels contiguous (pixel stride =
 * channels).
 */
#ifndef GNET_OPS_H
#define GNET_OPS_H

#include <stddef.h>
#include <stdint.h>

#include <gemmi8.h>

/* Runs fn(args, begin, end) over [0, n) in chunks of at least grain rows: on the
 * calling thread when parallel is NULL, has one thread or n is small; else over
 * parallel's parallel-for, a few chunks a thread. */
typedef void (*ops_range_fn)(const void* args, size_t begin, size_t end);
void ops_parallel(const gemmi8_parallel* parallel, size_t n, size_t grain, ops_range_fn fn,
                  const void* args);

/* ---- uint8 (the ONNX Runtime operators) ---------------------------------------------- */

/* QLinearAdd: y = a + b requantized, ONNX Runtime's arithmetic (ops.c says which).
 * n elements. ops_qadd_prepare computes the two ratios and the constant term once. */
typedef struct ops_qadd {
  const uint8_t* a;
  const uint8_t* b;
  uint8_t* y;
  float ratio_a, ratio_b, base;
  int small; /* |t| < 2^21 for every a and b (ops.c): the loop that vectorizes */
} ops_qadd;
void ops_qadd_prepare(ops_qadd* p, float a_scale, int32_t a_zero_point, float b_scale,
                      int32_t b_zero_point, float y_scale, int32_t y_zero_point);
void ops_qadd_range(const void* args, size_t begin, size_t end);

/* Max pooling of uint8 pixels: padding taps are skipped (as -infinity). Rows are the
 * output rows. yf NULL: uint8 out in y; else float out in yf, each maximum
 * dequantized, (float) (max - zero_point) * scale, as gnet_dequantize would. */
typedef struct ops_maxpool {
  const uint8_t* x;
  uint8_t* y;
  size_t in_h, in_w, channels, out_h, out_w;
  size_t kernel, stride, pad;
  float* yf;
  float scale;
  int32_t zero_point;
} ops_maxpool;
void ops_maxpool_range(const void* args, size_t begin, size_t end);

/* QLinearGlobalAveragePool: per channel, the sum over the pixels requantized, ONNX
 * Runtime's arithmetic (ops.c). Rows are channels. ops_qgap_prepare reads pixels: set
 * it first. */
typedef struct ops_qgap {
  const uint8_t* x;
  uint8_t* y;
  size_t pixels, channels;
  int32_t bias;  /* -x_zero_point * pixels */
  float scale;   /* x_scale / (y_scale * (float) pixels) */
  int32_t y_zero_point;
} ops_qgap;
void ops_qgap_prepare(ops_qgap* p, float x_scale, int32_t x_zero_point, float y_scale,
                      int32_t y_zero_point);
void ops_qgap_range(const void* args, size_t begin, size_t end);

/* ---- float (the binary network) ------------------------------------------------------ */

/* y = (float) (x - zero_point) * scale, over n elements (u8) */
typedef struct ops_dequant_u8 {
  const uint8_t* x;
  float* y;
  float scale;
  int32_t zero_point;
} ops_dequant_u8;
void ops_dequant_u8_range(const void* args, size_t begin, size_t end);

/* y[p][c] = (float) x[p][c] * scale[c], over pixels (int32 accumulators of a
 * convolution, its scales x_scale * w_scale[c]) */
typedef struct ops_dequant_s32 {
  const int32_t* x;
  float* y;
  const float* scale;
  size_t channels;
} ops_dequant_s32;
void ops_dequant_s32_range(const void* args, size_t begin, size_t end);

/* y = clamp(round_half_even(x / scale) + zero_point, 0, 255), over n elements */
typedef struct ops_quant_f32 {
  const float* x;
  uint8_t* y;
  float scale;
  int32_t zero_point;
} ops_quant_f32;
void ops_quant_f32_range(const void* args, size_t begin, size_t end);

/* y = a + b, over n elements */
typedef struct ops_add_f32 {
  const float* a;
  const float* b;
  float* y;
} ops_add_f32;
void ops_add_f32_range(const void* args, size_t begin, size_t end);

/* Average pooling without padding (kernel k, stride s), rows are output rows. */
typedef struct ops_avgpool_f32 {
  const float* x;
  float* y;
  size_t in_w, channels, out_w;
  size_t kernel, stride;
} ops_avgpool_f32;
void ops_avgpool_f32_range(const void* args, size_t begin, size_t end);

/* Global average pooling, rows are channels: y[c] = (sum_p x[p][c]) * (1 / pixels). */
typedef struct ops_gap_f32 {
  const float* x;
  float* y;
  size_t pixels, channels;
} ops_gap_f32;
void ops_gap_f32_range(const void* args, size_t begin, size_t end);

/* Sign binarization of pixels (rows) of channels floats into packed bits, through
 * gemmi8_bin_pack_rows_f32 (x < 0.0f: a set bit, -1). */
typedef struct ops_binarize {
  const float* x;
  uint64_t* y;
  size_t channels;
} ops_binarize;
void ops_binarize_range(const void* args, size_t begin, size_t end);

#endif /* GNET_OPS_H */
