/*
 * Scalar requantization: the definition every kernel must equal (kernels/generic
 * use it; SIMD kernels use it for their scalar tails).
 */
#ifndef GEMMI8_REQUANT_H
#define GEMMI8_REQUANT_H

#include "microkernel.h"

static inline int32_t gemmi8_requantize_fixedpoint(int32_t acc, int32_t multiplier, int32_t shift)
{
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = shift > 0 ? 0 : -shift;
  int64_t x = (int64_t) acc * ((int64_t) 1 << left);
  if (x > INT32_MAX) x = INT32_MAX;
  if (x < INT32_MIN) x = INT32_MIN;
  /* SaturatingRoundingDoublingHighMul; multiplier >= 0 so it cannot overflow. */
  const int64_t product = x * (int64_t) multiplier;
  const int64_t nudge = product >= 0 ? (INT64_C(1) << 30) : 1 - (INT64_C(1) << 30);
  const int32_t high = (int32_t) ((product + nudge) / (INT64_C(1) << 31));
  if (right == 0) return high;
  /* RoundingDivideByPOT: half away from zero. */
  const int32_t mask = (int32_t) ((UINT32_C(1) << right) - 1);
  const int32_t remainder = high & mask;
  const int32_t threshold = (mask >> 1) + (high < 0);
  return (high >> right) + (remainder > threshold);
}

/* Fixed-point output: the zero point added modulo 2^32 (gemmlowp's and TFLite's
 * int32 addition wraps: with a large accumulator and a scale near or above 1, r is
 * near INT32_MAX and r + zero_point turns negative), then the clamp. */
static inline int32_t gemmi8_output_fixedpoint(int32_t acc, int32_t multiplier, int32_t shift,
                                               int32_t zero_point, int32_t min, int32_t max)
{
  const int32_t r = gemmi8_requantize_fixedpoint(acc, multiplier, shift);
  const int32_t y = (int32_t) ((uint32_t) r + (uint32_t) zero_point);
  return y < min ? min : (y > max ? max : y);
}

/* fp32 mode: the product rounded to float once, clamped to the output window
 * (relative to the zero point), rounded half to even. */
static inline int32_t gemmi8_requantize_fp32(int32_t acc, float scale, int32_t zero_point,
                                             int32_t min, int32_t max)
{
  float x = (float) acc * scale;
  const float lo = (float) (min - zero_point);
  const float hi = (float) (max - zero_point);
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  /* |x| <= 510: adding 1.5 * 2^23 rounds to an integer, half to even. */
  const float magic = 12582912.0f;
  const float rounded = (x + magic) - magic;
  return (int32_t) rounded + zero_point;
}

/* The float output of rows quantized at run time (the qd8 GEMMs), element (i, j)
 * of a tile: the exact accumulator over a - a_zp (the kernel's acc is over a alone:
 * the zero point's term, zp * colsum, is taken off modulo 2^32), then three roundings
 * in this order and the clamp (a NaN stays NaN):
 *   v = (float) (acc - zp[i] * col_sum[j]) * row_scale[i];  v = v * scale[j];
 *   v = v + col_bias[j];  v = out_min > v ? out_min : v;  v = out_max < v ? out_max : v */
static inline float gemmi8_output_f32(int32_t acc, const struct gemmi8_qparams* p, size_t i,
                                      size_t j)
{
  const int32_t t =
      (int32_t) ((uint32_t) acc - (uint32_t) p->row_zero_point[i] * (uint32_t) p->col_sum[j]);
  float v = (float) t * p->row_scale[i];
  v = v * p->scale[j];
  v = v + p->col_bias[j];
  v = p->out_min > v ? p->out_min : v;
  v = p->out_max < v ? p->out_max : v;
  return v;
}

/* Binary float output of column j of a tile: (float) acc * scale + bias, two
 * roundings; a NULL scale is 1, a NULL bias 0. */
static inline float gemmi8_bin_affine1(int32_t acc, const struct gemmi8_bparams* p, size_t j)
{
  const float scale = p->scale ? p->scale[j] : 1.0f;
  const float bias = p->bias ? p->bias[j] : 0.0f;
  const float product = (float) acc * scale;
  return product + bias;
}

/* The binary convolution's float output of column j: (float) acc * scale + bias, two
 * roundings, with p->add the output's value before (old) added, a third, then clamped
 * (a NaN stays NaN). */
static inline float gemmi8_bin_conv_f32(int32_t acc, const struct gemmi8_bcparams* p, size_t j,
                                        float old)
{
  const float scale = p->scale ? p->scale[j] : 1.0f;
  const float bias = p->bias ? p->bias[j] : 0.0f;
  const float product = (float) acc * scale;
  float v = product + bias;
  if (p->add) v = old + v;
  v = p->out_min > v ? p->out_min : v;
  v = p->out_max < v ? p->out_max : v;
  return v;
}

/* The binary convolution's bit of column j: (acc XOR flip) < threshold. */
static inline int gemmi8_bin_conv_bit(int32_t acc, const struct gemmi8_bcparams* p, size_t j)
{
  return (acc ^ p->flip[j]) < p->threshold[j];
}

#endif
