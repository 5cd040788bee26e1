/*
 * Dynamic row quantization (gemmi8_quantize_rows_u8 / _s8): the parameters of a row
 * from its minimum and maximum, and the quantization of one value, as the public
 * header writes them out. Every kernel set computes the parameters with these scalar
 * functions and quantizes with the same float operations in its vectors (a division
 * for u8, a multiplication for s8, then the clamp, then rounding to nearest even), so
 * that all sets give the same bytes. Inputs are finite (the entry points check).
 */
#ifndef GEMMI8_QROWS_H
#define GEMMI8_QROWS_H

#include <string.h>

#include "common.h"

/* A row's check before it is quantized, in one pass over the bits, 16 values at a
 * time (GCC / Clang vector extensions: SSE2, NEON): 1 if every value is finite and,
 * when `range` is set, max(x, 0) - min(x, 0) is too (else the row's scale would be
 * infinite). Signed int32 maxima of the bits and of the bits with the sign flipped
 * are the largest positive value's and the largest negative value's magnitude (a
 * NaN or an infinity exceeds 0x7f800000 in one of them). */
typedef int32_t gemmi8_qrow_v4 __attribute__((vector_size(16)));

static inline gemmi8_qrow_v4 gemmi8_qrow_vmax(gemmi8_qrow_v4 a, gemmi8_qrow_v4 b)
{
  const gemmi8_qrow_v4 gt = a > b;
  return (a & gt) | (b & ~gt);
}

static inline int gemmi8_qrow_valid(size_t k, const float* x, int range)
{
  const gemmi8_qrow_v4 sign = {INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN};
  gemmi8_qrow_v4 p[4] = {{0}}, n[4] = {{0}};
  size_t i = 0;
  for (; i + 16 <= k; i += 16) {
    for (int j = 0; j < 4; j++) {
      gemmi8_qrow_v4 v;
      memcpy(&v, x + i + 4 * j, sizeof(v));
      p[j] = gemmi8_qrow_vmax(p[j], v);
      n[j] = gemmi8_qrow_vmax(n[j], v ^ sign);
    }
  }
  int32_t pos = 0, neg = 0;
  for (int j = 0; j < 4; j++) {
    for (int l = 0; l < 4; l++) {
      pos = p[j][l] > pos ? p[j][l] : pos;
      neg = n[j][l] > neg ? n[j][l] : neg;
    }
  }
  for (; i < k; i++) {
    int32_t bits;
    memcpy(&bits, x + i, sizeof(bits));
    pos = bits > pos ? bits : pos;
    neg = (int32_t) ((uint32_t) bits ^ 0x80000000u) > neg ? (int32_t) ((uint32_t) bits ^ 0x80000000u) : neg;
  }
  if (pos >= 0x7f800000 || neg >= 0x7f800000) return 0;
  if (!range) return 1;
  float hi, lo;
  memcpy(&hi, &pos, sizeof(hi));
  memcpy(&lo, &neg, sizeof(lo));
  return hi - -lo <= 3.40282347e+38f;
}

/* gemmi8_qrow_valid(count, x, 0) out of line (src/quantize-rows.c): 1 if none of the
 * count floats is NaN or infinite; for the scales and biases the drivers check. */
GEMMI8_INTERNAL int gemmi8_floats_finite(size_t count, const float* x);

/* The parameters of a row: what the vector loops need and what is reported. */
struct gemmi8_qrow_params {
  float scale; /* reported (u8: also the divisor) */
  float inv;   /* s8: the multiplier (u8: unused) */
  float lower; /* lowest q before rounding: qmin - zp */
  float upper; /* highest: qmax - zp */
  int32_t zp;
};

/* Round to nearest, ties to even, for |v| < 2^22 (here |v| <= 255): adding and
 * subtracting 1.5 * 2^23 leaves the integer the default rounding mode picks. */
static inline float gemmi8_qrow_rne(float v)
{
  return (v + 12582912.0f) - 12582912.0f;
}

/* max then min, a NaN taking the lower bound (as x86 maxps / AArch64 fmaxnm do with
 * the bound as second operand). */
static inline float gemmi8_qrow_clamp(float q, float lower, float upper)
{
  q = q > lower ? q : lower;
  return q < upper ? q : upper;
}

/* ONNX Runtime's uint8 parameters from the row's minimum lo and maximum hi. */
static inline struct gemmi8_qrow_params gemmi8_qrow_params_u8(float lo, float hi)
{
  struct gemmi8_qrow_params p;
  const float rmin = lo < 0.0f ? lo : 0.0f;
  const float rmax = hi > 0.0f ? hi : 0.0f;
  p.scale = rmax == rmin ? 1.0f : (rmax - rmin) / 255.0f;
  float z = 0.0f - rmin / p.scale;
  z = z < 255.0f ? z : 255.0f; /* std::min(255, z) */
  z = 0.0f < z ? z : 0.0f;     /* std::max(0, z) */
  p.zp = (int32_t) gemmi8_qrow_rne(z);
  p.inv = 0.0f;
  p.lower = (float) (0 - p.zp);
  p.upper = (float) (255 - p.zp);
  return p;
}

/* XNNPACK's qd8 (int8) parameters from the row's minimum lo and maximum hi. */
static inline struct gemmi8_qrow_params gemmi8_qrow_params_s8(float lo, float hi)
{
  struct gemmi8_qrow_params p;
  const float rmin = lo < 0.0f ? lo : 0.0f;
  const float rmax = hi > 0.0f ? hi : 0.0f;
  const float inv = rmin == rmax ? 1.0f : 255.0f / (rmax - rmin);
  const float dmin = rmin * inv;
  const float dmax = rmax * inv;
  float z = (-128.0f + dmin) + (127.0f + dmax) > 0.0f ? -128.0f - dmin : 127.0f - dmax;
  z = -128.0f < z ? z : -128.0f;
  z = 127.0f < z ? 127.0f : z;
  p.zp = (int32_t) gemmi8_qrow_rne(z);
  p.inv = inv;
  p.scale = 1.0f / inv;
  p.lower = (float) (-128 - p.zp);
  p.upper = (float) (127 - p.zp);
  return p;
}

/* One value, scalar: the tails of the vector loops and the generic kernels. */
static inline int32_t gemmi8_qrow_u8(float x, const struct gemmi8_qrow_params* p)
{
  return (int32_t) gemmi8_qrow_rne(gemmi8_qrow_clamp(x / p->scale, p->lower, p->upper)) + p->zp;
}

static inline int32_t gemmi8_qrow_s8(float x, const struct gemmi8_qrow_params* p)
{
  return (int32_t) gemmi8_qrow_rne(gemmi8_qrow_clamp(x * p->inv, p->lower, p->upper)) + p->zp;
}

/* Minimum and maximum of k > 0 finite floats, scalar. */
static inline void gemmi8_qrow_minmax(size_t k, const float* x, float* lo, float* hi)
{
  float mn = x[0], mx = x[0];
  for (size_t i = 1; i < k; i++) {
    mn = x[i] < mn ? x[i] : mn;
    mx = x[i] > mx ? x[i] : mx;
  }
  *lo = mn;
  *hi = mx;
}

/* The kernels (kernels/qu8.inc, qs8.inc: role quantize_rows): rows of k floats at
 * x_stride bytes to rows of k bytes at y_stride bytes, scale and zero point per row. */
typedef void (*gemmi8_quantize_rows_fn)(size_t rows, size_t k, const float* x, size_t x_stride,
                                        void* y, size_t y_stride, float* scale,
                                        int32_t* zero_point);

/* The portable kernels (src/quantize-rows.c), used where a set lists none. */
GEMMI8_INTERNAL void gemmi8_qu8_quantize_rows__generic(size_t rows, size_t k, const float* x,
                                                       size_t x_stride, void* y, size_t y_stride,
                                                       float* scale, int32_t* zero_point);
GEMMI8_INTERNAL void gemmi8_qs8_quantize_rows__generic(size_t rows, size_t k, const float* x,
                                                       size_t x_stride, void* y, size_t y_stride,
                                                       float* scale, int32_t* zero_point);

#endif
