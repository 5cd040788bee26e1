/*
 * Reference implementations written from the definitions in include/gemmi8.h and
 * DESIGN.md, not from the library: plain loops, int64 accumulation, the fixed-point
 * requantization written out step by step, +1/-1 integers for binary.
 */
#ifndef GEMMI8_TEST_REF_H
#define GEMMI8_TEST_REF_H

#include <stddef.h>
#include <stdint.h>

/* v modulo 2^32, as a two's complement int32. */
int32_t ref_wrap_s32(int64_t v);

/*
 * acc[i * n + j] = bias[j] + sum_k (A[i][k] - a_zp) * (B[j][k] - b_zp[j]) mod 2^32.
 * a, b hold uint8 (is_signed == 0) or int8 (is_signed == 1) bytes. B is N x K
 * (b_kn == 0, B[j][k] = b[j * b_stride + k]) or K x N (B[j][k] = b[k * b_stride + j]).
 * b_zp holds n values; bias holds n values or is NULL.
 */
void ref_q8_acc(int is_signed, size_t m, size_t n, size_t k, const uint8_t* a, size_t a_stride,
                int32_t a_zp, const uint8_t* b, size_t b_stride, int b_kn, const int32_t* b_zp,
                const int32_t* bias, int32_t* acc);

/* The same with A and B of their own signedness (qu8s8: uint8 A, int8 B). */
void ref_q8_acc_mixed(int a_signed, int b_signed, size_t m, size_t n, size_t k, const uint8_t* a,
                      size_t a_stride, int32_t a_zp, const uint8_t* b, size_t b_stride, int b_kn,
                      const int32_t* b_zp, const int32_t* bias, int32_t* acc);

/* A convolution from its definition (include/gemmi8.h "Convolution"): NHWC input of
 * batch x ih x iw pixels (pixel stride in_stride bytes), weights [groups][co][kh][kw]
 * [ci]; a tap in the padding reads a_zp. acc holds batch * oh * ow rows of groups * co
 * values (oh, ow: the output size the caller computed). b_zp: groups * co values, or
 * NULL for 0. */
struct ref_conv {
  int a_signed, w_signed;
  size_t batch, ih, iw, in_stride;
  size_t kh, kw, sh, sw, dh, dw, pt, pl;
  size_t groups, ci, co;
  size_t oh, ow;
};
void ref_conv_acc(const struct ref_conv* c, const uint8_t* in, const uint8_t* w, int32_t a_zp,
                  const int32_t* b_zp, const int32_t* bias, int32_t* acc);

/* The three steps of the fixed-point requantization. */
int32_t ref_saturating_left_shift(int32_t x, int32_t shift);     /* shift in 0..31 */
int32_t ref_srdhm(int32_t x, int32_t multiplier);                /* header's formula */
int32_t ref_rounding_divide_by_pot(int32_t x, int32_t exponent); /* half away from 0 */

/* requantize(acc) in fixed-point mode (before zero point and clamp). */
int32_t ref_requantize_fixedpoint(int32_t acc, int32_t multiplier, int32_t shift);
/* requantize(acc) in fp32 mode: an integral value, possibly huge or infinite. */
double ref_requantize_fp32(int32_t acc, float scale);

/* clamp(zero_point + requantize(acc), min, max): the fixed-point sum wraps around
 * int32 as gemmlowp's does; the fp32 one is exact. */
int32_t ref_output_fixedpoint(int32_t acc, int32_t multiplier, int32_t shift, int32_t zero_point,
                              int32_t min, int32_t max);
int32_t ref_output_fp32(int32_t acc, float scale, int32_t zero_point, int32_t min, int32_t max);

/* TFLite's QuantizeMultiplier as documented. Returns 0, or -1 for a negative,
 * infinite or NaN scale (nothing written). */
int ref_quantize_multiplier(double scale, int32_t* multiplier, int32_t* shift);

/* Element j of a packed bit row as +1 or -1 (set bit = -1). */
int ref_bin_value(const uint64_t* row, size_t j);

/* acc[i * n + j] = sum_k A[i][k] * B[j][k] over +1/-1 values. a: m rows of k bits
 * (stride in words). B: n rows of k bits (b_kn == 0) or k rows of n bits. */
void ref_bin_acc(size_t m, size_t n, size_t k, const uint64_t* a, size_t a_stride,
                 const uint64_t* b, size_t b_stride, int b_kn, int32_t* acc);

/* (float) acc * scale + bias, two float roundings; NULL scale is 1, NULL bias 0. */
float ref_bin_f32(int32_t acc, const float* scale, const float* bias, size_t channel);

/* Bit-packing helpers: rows x k values into rows of ceil(k/64) words at out_stride.
 * Writes exactly those words (padding bits 0). */
void ref_bin_pack_f32(size_t rows, size_t k, const float* x, size_t x_stride, uint64_t* out,
                      size_t out_stride);
void ref_bin_pack_s8(size_t rows, size_t k, const int8_t* x, size_t x_stride, uint64_t* out,
                     size_t out_stride);
void ref_bin_pack_u8(size_t rows, size_t k, const uint8_t* x, size_t x_stride, uint8_t zero_point,
                     uint64_t* out, size_t out_stride);

/* One row of k finite floats quantized as gemmi8_quantize_rows_u8 (ONNX Runtime's
 * DynamicQuantizeLinear) / _s8 (XNNPACK's qd8) define it: y[0..k), the scale and the
 * zero point. */
void ref_quantize_row_u8(size_t k, const float* x, uint8_t* y, float* scale, int32_t* zero_point);
void ref_quantize_row_s8(size_t k, const float* x, int8_t* y, float* scale, int32_t* zero_point);

#endif
