/*
 * Quantization helpers (include/gemmi8.h, "Quantization helpers"): scales and zero
 * points from float ranges, float arrays quantized and dequantized, int32 biases, a
 * layer's requantization from its operands' scales, and calibration histograms, each
 * in the arithmetic of the scheme asked for (onnx: float, ties to even; tflite: double
 * where TFLite uses double, ties away from zero), written as the header writes it.
 *
 * Portable C alone: the array loops are plain loops the compiler vectorises with the
 * same IEEE operations in every lane (a division, max then min, rounding by the
 * 1.5 * 2^23 addition or by truncation and the exact fraction, a conversion), so every
 * machine gives the same bytes. No libm. Every entry point validates all it reads
 * before it writes anything.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "qrows.h"

/* src/ compiles with -Os, which does not vectorise: the array loops ask for -O2, whose
 * cost model (GCC 12 on) vectorises the blocks of 16 below and leaves the scalar tails
 * alone (older GCC vectorises only when asked; Clang vectorises them as they are). */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define QH_VECTORIZE __attribute__((optimize("O2")))
#elif defined(__GNUC__) && !defined(__clang__)
#define QH_VECTORIZE __attribute__((optimize("O2", "tree-vectorize")))
#else
#define QH_VECTORIZE
#endif

/* ---- values ------------------------------------------------------------------------- */

static int finite_f32(float v)
{
  uint32_t bits;
  memcpy(&bits, &v, sizeof(bits));
  return (bits & 0x7f800000u) != 0x7f800000u;
}

static int positive_finite(float v) { return v > 0.0f && v <= FLT_MAX; }

static int scheme_known(gemmi8_qscheme scheme)
{
  return scheme == gemmi8_qscheme_onnx || scheme == gemmi8_qscheme_tflite;
}

/* qmin..qmax of a range; 0 for an unknown one. */
static int range_bounds(gemmi8_qrange range, int32_t* qmin, int32_t* qmax)
{
  switch (range) {
    case gemmi8_qrange_u8: *qmin = 0; *qmax = 255; return 1;
    case gemmi8_qrange_s8: *qmin = -128; *qmax = 127; return 1;
    case gemmi8_qrange_s8_symmetric: *qmin = -127; *qmax = 127; return 1;
  }
  return 0;
}

/* rna of a double |v| < 2^31: the truncation t and the fraction v - t are exact. */
static int32_t rna_double(double v)
{
  const int32_t t = (int32_t) v;
  const double f = v - (double) t;
  return t + (f >= 0.5 ? 1 : 0) - (f <= -0.5 ? 1 : 0);
}

static double abs_double(double v) { return v < 0.0 ? -v : v; }

/* ---- gemmi8_choose_qparams ------------------------------------------------------------ */

static int scale_usable(float s) { return s >= FLT_MIN && s <= FLT_MAX; }

/* The scale and zero point of [lo, hi] (finite, lo <= hi), as the header writes them;
 * 0 when the scale would be infinite or below FLT_MIN. */
static int qparams(gemmi8_qscheme scheme, gemmi8_qrange range, float lo, float hi, float* scale,
                   int32_t* zero_point)
{
  int32_t qmin = 0, qmax = 0;
  range_bounds(range, &qmin, &qmax);
  const float rmin = lo < 0.0f ? lo : 0.0f;
  const float rmax = hi > 0.0f ? hi : 0.0f;
  float s;
  int32_t z;
  if (range == gemmi8_qrange_s8_symmetric) {
    const float a = rmax > -rmin ? rmax : -rmin;
    s = a == 0.0f ? 1.0f : scheme == gemmi8_qscheme_onnx ? (a + a) / 254.0f : a / 127.0f;
    z = 0;
  } else if (scheme == gemmi8_qscheme_onnx) {
    s = rmax == rmin ? 1.0f : (rmax - rmin) / (float) (qmax - qmin);
    if (!scale_usable(s)) return 0;
    float zf = (float) qmin - rmin / s;
    zf = zf < (float) qmax ? zf : (float) qmax;
    zf = zf > (float) qmin ? zf : (float) qmin;
    z = (int32_t) gemmi8_qrow_rne(zf);
  } else if (rmax == rmin) {
    s = 1.0f;
    z = 0;
  } else {
    /* TFLite's ChooseQuantizationParams, in double */
    const double dmin = rmin, dmax = rmax;
    const double sd = (dmax - dmin) / ((double) qmax - (double) qmin);
    const double zmin = (double) qmin - dmin / sd;
    const double zmax = (double) qmax - dmax / sd;
    const double emin = abs_double((double) qmin) + abs_double(dmin / sd);
    const double emax = abs_double((double) qmax) + abs_double(dmax / sd);
    const double zd = emin < emax ? zmin : zmax;
    z = zd < (double) qmin ? qmin : zd > (double) qmax ? qmax : rna_double(zd);
    s = (float) sd;
  }
  if (!scale_usable(s)) return 0;
  *scale = s;
  *zero_point = z;
  return 1;
}

gemmi8_status gemmi8_choose_qparams(gemmi8_qscheme scheme, gemmi8_qrange range, size_t count,
                                    const float* min, const float* max, float* scale,
                                    int32_t* zero_point)
{
  int32_t qmin, qmax;
  size_t bytes;
  if (min == NULL || max == NULL || scale == NULL || zero_point == NULL ||
      !scheme_known(scheme) || !range_bounds(range, &qmin, &qmax) ||
      !gemmi8_extent(1, count, count, sizeof(float), &bytes)) {
    return gemmi8_status_invalid_parameter;
  }
  for (size_t i = 0; i < count; i++) {
    if (!finite_f32(min[i]) || !finite_f32(max[i]) || min[i] > max[i]) {
      return gemmi8_status_invalid_parameter;
    }
  }
  for (size_t i = 0; i < count; i++) {
    float s;
    int32_t z;
    if (!qparams(scheme, range, min[i], max[i], &s, &z)) {
      return gemmi8_status_unsupported_parameter;
    }
  }
  for (size_t i = 0; i < count; i++) qparams(scheme, range, min[i], max[i], &scale[i], &zero_point[i]);
  return gemmi8_status_success;
}

/* ---- gemmi8_quantize_f32, gemmi8_dequantize_f32 --------------------------------------- */

/* Scales and zero points of an axis: how many, for rows x cols values. */
static int axis_count(gemmi8_qaxis axis, size_t rows, size_t cols, size_t* count)
{
  switch (axis) {
    case gemmi8_qaxis_tensor: *count = 1; return 1;
    case gemmi8_qaxis_row: *count = rows; return 1;
    case gemmi8_qaxis_column: *count = cols; return 1;
  }
  return 0;
}

/* Everything but the scheme: pointers, sizes, the range and axis, every scale and zero
 * point. 1 if valid. */
static int arrays_valid(gemmi8_qrange range, gemmi8_qaxis axis, size_t rows, size_t cols,
                        const void* in, const float* scale, const int32_t* zero_point,
                        const void* out, int32_t* qmin, int32_t* qmax)
{
  size_t bytes, count;
  if (in == NULL || scale == NULL || zero_point == NULL || out == NULL ||
      !range_bounds(range, qmin, qmax) || !axis_count(axis, rows, cols, &count) ||
      !gemmi8_extent(rows, cols, cols, sizeof(float), &bytes)) {
    return 0;
  }
  const int symmetric = range == gemmi8_qrange_s8_symmetric;
  for (size_t i = 0; i < count; i++) {
    const int32_t z = zero_point[i];
    if (!positive_finite(scale[i]) || (symmetric ? z != 0 : z < *qmin || z > *qmax)) return 0;
  }
  return 1;
}

/* Rounding of q, |q| <= 255, to an integer, ties away from zero when rna is 1, else to
 * even, in one form for both (rna a loop invariant, so that one loop serves both): the
 * truncation t and the fraction q - t are exact; q lies past t + 1/2 (or before t - 1/2)
 * by the sign of the fraction, and at the tie it goes away when rna or t is odd. */
static GEMMI8_ALWAYS_INLINE int32_t qround(float q, int32_t rna)
{
  const int32_t t = (int32_t) q;
  const float f = q - (float) t;
  const int32_t away = rna | (t & 1);
  const int32_t up = (f > 0.5f ? 1 : 0) | ((f == 0.5f ? 1 : 0) & away);
  const int32_t down = (f < -0.5f ? 1 : 0) | ((f == -0.5f ? 1 : 0) & away);
  return t + up - down;
}

/* One value: divided, clamped to [lo, hi] = [qmin - zp, qmax - zp] (max then min: a
 * NaN takes lo), rounded, zp added; its byte (an int8_t's byte is its uint8_t
 * conversion: the same store serves both types). */
static GEMMI8_ALWAYS_INLINE uint8_t quantize_one(float x, float s, int32_t zp, int32_t qmin,
                                                 int32_t qmax, int32_t rna)
{
  const float lo = (float) (qmin - zp), hi = (float) (qmax - zp);
  float q = x / s;
  q = q > lo ? q : lo;
  q = q < hi ? q : hi;
  return (uint8_t) (qround(q, rna) + zp);
}

/* The loops go 16 values at a time through local arrays (no aliasing to check, a
 * fixed count: whole vectors, no vector epilogue), then value by value. */
enum { qh_block = 16 };

/* n values at one scale and zero point. */
QH_VECTORIZE static void quantize_run(size_t n, const float* x, float s, int32_t zp,
                                      int32_t qmin, int32_t qmax, int32_t rna, uint8_t* y)
{
  size_t i = 0;
  for (; n - i >= qh_block; i += qh_block) {
    float vx[qh_block];
    uint8_t vy[qh_block];
    memcpy(vx, x + i, sizeof(vx));
    for (size_t j = 0; j < qh_block; j++) vy[j] = quantize_one(vx[j], s, zp, qmin, qmax, rna);
    memcpy(y + i, vy, sizeof(vy));
  }
  for (; i < n; i++) y[i] = quantize_one(x[i], s, zp, qmin, qmax, rna);
}

/* n values, value i at scale[i] and zero point zp[i] (a row, per column). */
QH_VECTORIZE static void quantize_cols(size_t n, const float* x, const float* scale,
                                       const int32_t* zp, int32_t qmin, int32_t qmax,
                                       int32_t rna, uint8_t* y)
{
  size_t i = 0;
  for (; n - i >= qh_block; i += qh_block) {
    float vx[qh_block], vs[qh_block];
    int32_t vz[qh_block];
    uint8_t vy[qh_block];
    memcpy(vx, x + i, sizeof(vx));
    memcpy(vs, scale + i, sizeof(vs));
    memcpy(vz, zp + i, sizeof(vz));
    for (size_t j = 0; j < qh_block; j++) {
      vy[j] = quantize_one(vx[j], vs[j], vz[j], qmin, qmax, rna);
    }
    memcpy(y + i, vy, sizeof(vy));
  }
  for (; i < n; i++) y[i] = quantize_one(x[i], scale[i], zp[i], qmin, qmax, rna);
}

gemmi8_status gemmi8_quantize_f32(gemmi8_qscheme scheme, gemmi8_qrange range, gemmi8_qaxis axis,
                                  size_t rows, size_t cols, const float* x, const float* scale,
                                  const int32_t* zero_point, void* y)
{
  int32_t qmin, qmax;
  if (!scheme_known(scheme) ||
      !arrays_valid(range, axis, rows, cols, x, scale, zero_point, y, &qmin, &qmax)) {
    return gemmi8_status_invalid_parameter;
  }
  const int32_t rna = scheme == gemmi8_qscheme_tflite;
  uint8_t* out = y;
  if (axis == gemmi8_qaxis_tensor) {
    quantize_run(rows * cols, x, scale[0], zero_point[0], qmin, qmax, rna, out);
  } else {
    for (size_t r = 0; r < rows; r++) {
      if (axis == gemmi8_qaxis_row) {
        quantize_run(cols, x + r * cols, scale[r], zero_point[r], qmin, qmax, rna,
                     out + r * cols);
      } else {
        quantize_cols(cols, x + r * cols, scale, zero_point, qmin, qmax, rna, out + r * cols);
      }
    }
  }
  return gemmi8_status_success;
}

/* x = (float) (q - zp) * s for a byte q: uint8_t when flip is 0, int8_t when it is
 * 0x80 ((q ^ 0x80) - 128 is the int8_t's value): one loop for both types. */
static GEMMI8_ALWAYS_INLINE float dequantize_one(uint8_t q, int32_t flip, float s, int32_t zp)
{
  return (float) ((int32_t) (q ^ flip) - (zp + flip)) * s;
}

QH_VECTORIZE static void dequantize_run(size_t n, const uint8_t* q, int32_t flip, float s,
                                        int32_t zp, float* x)
{
  size_t i = 0;
  for (; n - i >= qh_block; i += qh_block) {
    uint8_t vq[qh_block];
    float vx[qh_block];
    memcpy(vq, q + i, sizeof(vq));
    for (size_t j = 0; j < qh_block; j++) vx[j] = dequantize_one(vq[j], flip, s, zp);
    memcpy(x + i, vx, sizeof(vx));
  }
  for (; i < n; i++) x[i] = dequantize_one(q[i], flip, s, zp);
}

QH_VECTORIZE static void dequantize_cols(size_t n, const uint8_t* q, int32_t flip,
                                         const float* scale, const int32_t* zp, float* x)
{
  size_t i = 0;
  for (; n - i >= qh_block; i += qh_block) {
    uint8_t vq[qh_block];
    float vs[qh_block], vx[qh_block];
    int32_t vz[qh_block];
    memcpy(vq, q + i, sizeof(vq));
    memcpy(vs, scale + i, sizeof(vs));
    memcpy(vz, zp + i, sizeof(vz));
    for (size_t j = 0; j < qh_block; j++) vx[j] = dequantize_one(vq[j], flip, vs[j], vz[j]);
    memcpy(x + i, vx, sizeof(vx));
  }
  for (; i < n; i++) x[i] = dequantize_one(q[i], flip, scale[i], zp[i]);
}

gemmi8_status gemmi8_dequantize_f32(gemmi8_qrange range, gemmi8_qaxis axis, size_t rows,
                                    size_t cols, const void* q, const float* scale,
                                    const int32_t* zero_point, float* x)
{
  int32_t qmin, qmax;
  if (!arrays_valid(range, axis, rows, cols, q, scale, zero_point, x, &qmin, &qmax)) {
    return gemmi8_status_invalid_parameter;
  }
  const int32_t flip = range == gemmi8_qrange_u8 ? 0 : 0x80;
  const uint8_t* in = q;
  if (axis == gemmi8_qaxis_tensor) {
    dequantize_run(rows * cols, in, flip, scale[0], zero_point[0], x);
  } else {
    for (size_t r = 0; r < rows; r++) {
      if (axis == gemmi8_qaxis_row) {
        dequantize_run(cols, in + r * cols, flip, scale[r], zero_point[r], x + r * cols);
      } else {
        dequantize_cols(cols, in + r * cols, flip, scale, zero_point, x + r * cols);
      }
    }
  }
  return gemmi8_status_success;
}

/* ---- gemmi8_quantize_bias --------------------------------------------------------------- */

/* round(v) saturated to [-2^31 + 1, 2^31 - 1], v not NaN: saturated first, so that the
 * conversion is defined; below 2^31 the truncation t is exact, and so is v - t. */
static int32_t round_saturate(float v, int rna)
{
  if (v >= 2147483648.0f) return INT32_MAX;
  if (v <= -2147483648.0f) return -INT32_MAX;
  int64_t t = (int64_t) v;
  const float f = v - (float) t;
  if (rna) {
    t += (f >= 0.5f ? 1 : 0) - (f <= -0.5f ? 1 : 0);
  } else {
    const int odd = t % 2 != 0;
    t += (f > 0.5f || (f == 0.5f && odd) ? 1 : 0) - (f < -0.5f || (f == -0.5f && odd) ? 1 : 0);
  }
  return (int32_t) (t > INT32_MAX ? INT32_MAX : t < -INT32_MAX ? -INT32_MAX : t);
}

gemmi8_status gemmi8_quantize_bias(gemmi8_qscheme scheme, size_t count, const float* bias,
                                   float a_scale, const float* w_scale, int w_per_channel,
                                   int32_t* out)
{
  size_t bytes;
  if (bias == NULL || w_scale == NULL || out == NULL || !scheme_known(scheme) ||
      (w_per_channel != 0 && w_per_channel != 1) || !positive_finite(a_scale) ||
      !gemmi8_extent(1, count, count, sizeof(float), &bytes)) {
    return gemmi8_status_invalid_parameter;
  }
  const int tflite = scheme == gemmi8_qscheme_tflite;
  for (size_t c = 0; c < count; c++) {
    const float w = w_scale[w_per_channel ? c : 0];
    const float s = a_scale * w;
    if (!finite_f32(bias[c]) || !positive_finite(w) || !positive_finite(s) ||
        (tflite && !finite_f32(1.0f / s))) {
      return gemmi8_status_invalid_parameter;
    }
  }
  for (size_t c = 0; c < count; c++) {
    const float s = a_scale * w_scale[w_per_channel ? c : 0];
    if (tflite) {
      const float inv = 1.0f / s;
      out[c] = round_saturate(bias[c] * inv, 1);
    } else {
      out[c] = round_saturate(bias[c] / s, 0);
    }
  }
  return gemmi8_status_success;
}

/* ---- gemmi8_requant_scales ------------------------------------------------------------- */

static double requant_factor(gemmi8_qscheme scheme, float a_scale, float w_scale, float c_scale)
{
  if (scheme == gemmi8_qscheme_onnx) return (double) (a_scale * w_scale / c_scale);
  return (double) a_scale * (double) w_scale / (double) c_scale;
}

gemmi8_status gemmi8_requant_scales(gemmi8_qscheme scheme, size_t count, float a_scale,
                                    const float* w_scale, float c_scale, float* scale,
                                    int32_t* multiplier, int32_t* shift)
{
  size_t bytes;
  if (w_scale == NULL || (multiplier == NULL) != (shift == NULL) ||
      (scale == NULL && multiplier == NULL) || !scheme_known(scheme) ||
      !positive_finite(a_scale) || !positive_finite(c_scale) ||
      !gemmi8_extent(1, count, count, sizeof(float), &bytes)) {
    return gemmi8_status_invalid_parameter;
  }
  for (size_t c = 0; c < count; c++) {
    if (!positive_finite(w_scale[c]) ||
        !positive_finite((float) requant_factor(scheme, a_scale, w_scale[c], c_scale))) {
      return gemmi8_status_invalid_parameter;
    }
  }
  for (size_t c = 0; c < count; c++) {
    const double f = requant_factor(scheme, a_scale, w_scale[c], c_scale);
    if (scale != NULL) scale[c] = (float) f;
    if (multiplier != NULL) gemmi8_quantize_multiplier(f, &multiplier[c], &shift[c]);
  }
  return gemmi8_status_success;
}

/* ---- calibration ------------------------------------------------------------------------- */

/*
 * Each channel keeps its exact minimum and maximum and a histogram of 2048 bins over
 * [-R, R], R = 2^e the smallest power of two strictly above every |value| of the
 * channel so far (no R while every value is 0). Bin i holds the values v with
 * floor(v * 1024 / R) = i - 1024, i.e. v in [(i - 1024) w, (i - 1023) w), w = R / 1024:
 * every |v| < R lands inside, 0 and -0 in bin 1024 whatever R is. When R grows to
 * R * 2^k, bin i's values all belong to bin 1024 + floor((i - 1024) / 2^k) (bins merge
 * in pairs at each doubling), which is where they would have gone had R been the larger
 * one from the start: the bins never depend on how the values were split into updates.
 */
enum { qh_bins = 2048 };

struct qh_channel {
  float min, max;
  int32_t exponent; /* R = 2^exponent, when has_range */
  int32_t has_range;
  uint64_t bins[qh_bins];
};

struct gemmi8_calibration {
  size_t channels;
  uint64_t count; /* values per channel */
  uint64_t scratch[qh_bins];
  struct qh_channel ch[];
};

/* a < b, with -0.0 below 0.0: the exact extremes do not depend on the order of the
 * values. */
static int below(float a, float b)
{
  uint32_t ba, bb;
  memcpy(&ba, &a, sizeof(ba));
  memcpy(&bb, &b, sizeof(bb));
  return a < b || (a == 0.0f && b == 0.0f && ba > bb);
}

/* e with 2^e the smallest power of two strictly above |v| (v finite, not 0). */
static int32_t exponent_above(float v)
{
  uint32_t bits;
  memcpy(&bits, &v, sizeof(bits));
  bits &= 0x7fffffffu;
  const int32_t biased = (int32_t) (bits >> 23);
  if (biased != 0) return biased - 126; /* |v| in [2^(biased-127), 2^(biased-126)) */
  int32_t e = -149;                     /* subnormal: |v| = m * 2^-149 */
  while (bits != 0) {
    bits >>= 1;
    e++;
  }
  return e;
}

/* 2^e as a double, e in [-300, 300]. */
static double pow2(int32_t e)
{
  double v = 1.0;
  for (; e > 0; e--) v *= 2.0;
  for (; e < 0; e++) v *= 0.5;
  return v;
}

/* The bin of v (|v| < 2^e): v * 2^(10 - e) is exact in double (it is at least 2^-267
 * in magnitude when not 0, and below 1024), then its floor. */
static size_t bin_of(float v, double unit_inverse)
{
  const double t = (double) v * unit_inverse;
  int32_t i = (int32_t) t;
  i -= (double) i > t ? 1 : 0;
  return (size_t) (i + 1024);
}

/* Grows the channel's R to 2^e (e above the present exponent), merging its bins. */
static void grow_range(struct qh_channel* ch, uint64_t* scratch, int32_t e)
{
  const int32_t k = e - ch->exponent;
  memset(scratch, 0, qh_bins * sizeof(uint64_t));
  for (int32_t i = 0; i < qh_bins; i++) {
    if (ch->bins[i] == 0) continue;
    /* floor((i - 1024) / 2^k): i - 1024 >= -1024 > -2^31, an arithmetic shift by hand */
    const int32_t d = i - 1024;
    const int32_t q = k >= 11 ? (d < 0 ? -1 : 0) : (d >= 0 ? d >> k : -((-d - 1) >> k) - 1);
    scratch[q + 1024] += ch->bins[i];
  }
  memcpy(ch->bins, scratch, sizeof(ch->bins));
  ch->exponent = e;
}

gemmi8_status gemmi8_calibration_create(size_t channels, gemmi8_calibration** cal)
{
  if (cal == NULL || channels == 0 ||
      channels > ((size_t) PTRDIFF_MAX - sizeof(gemmi8_calibration)) / sizeof(struct qh_channel)) {
    return gemmi8_status_invalid_parameter;
  }
  gemmi8_calibration* c =
      calloc(1, sizeof(gemmi8_calibration) + channels * sizeof(struct qh_channel));
  if (c == NULL) return gemmi8_status_out_of_memory;
  c->channels = channels;
  *cal = c;
  return gemmi8_status_success;
}

void gemmi8_calibration_destroy(gemmi8_calibration* cal) { free(cal); }

gemmi8_status gemmi8_calibration_update(gemmi8_calibration* cal, size_t count, const float* x)
{
  size_t bytes;
  uint64_t total;
  if (cal == NULL || x == NULL || !gemmi8_extent(1, count, count, sizeof(float), &bytes) ||
      count % cal->channels != 0 ||
      __builtin_add_overflow(cal->count, (uint64_t) (count / cal->channels), &total)) {
    return gemmi8_status_invalid_parameter;
  }
  if (!gemmi8_floats_finite(count, x)) return gemmi8_status_invalid_parameter;
  const size_t channels = cal->channels, rows = count / channels;
  for (size_t c = 0; c < channels; c++) {
    struct qh_channel* ch = &cal->ch[c];
    /* the exact extremes, and the R this update needs */
    float mn = cal->count != 0 ? ch->min : x[c];
    float mx = cal->count != 0 ? ch->max : x[c];
    int32_t e = ch->has_range ? ch->exponent : INT32_MIN;
    for (size_t r = 0; r < rows; r++) {
      const float v = x[r * channels + c];
      mn = below(v, mn) ? v : mn;
      mx = below(mx, v) ? v : mx;
      if (v != 0.0f) {
        const int32_t ev = exponent_above(v);
        e = ev > e ? ev : e;
      }
    }
    ch->min = mn;
    ch->max = mx;
    if (e != INT32_MIN) {
      if (!ch->has_range) {
        ch->exponent = e; /* the zeros so far are in bin 1024, whatever R is */
        ch->has_range = 1;
      } else if (e > ch->exponent) {
        grow_range(ch, cal->scratch, e);
      }
    }
    const double unit_inverse = ch->has_range ? pow2(10 - ch->exponent) : 1.0;
    for (size_t r = 0; r < rows; r++) ch->bins[bin_of(x[r * channels + c], unit_inverse)]++;
  }
  cal->count = total;
  return gemmi8_status_success;
}

/* The float nearest d, toward +infinity (up) or -infinity; d finite and within the
 * float range (it lies between two floats). */
static float to_float_directed(double d, int up)
{
  float f = (float) d;
  if (up ? (double) f < d : (double) f > d) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof(bits));
    if (f == 0.0f) {
      bits = up ? 1u : 0x80000001u;
    } else {
      bits += (f > 0.0f) == (up != 0) ? 1u : (uint32_t) -1;
    }
    memcpy(&f, &bits, sizeof(f));
  }
  return f;
}

gemmi8_status gemmi8_calibration_range(const gemmi8_calibration* cal, double percentile,
                                       float* min, float* max)
{
  if (cal == NULL || min == NULL || max == NULL || cal->count == 0 ||
      !(percentile >= 50.0 && percentile <= 100.0)) {
    return gemmi8_status_invalid_parameter;
  }
  /* k: the rank, from each end, of the value the percentile names:
   * ceil(percentile * n / 100) computed in double, within [1, n]. */
  const uint64_t n = cal->count;
  const double t = percentile * (double) n / 100.0;
  uint64_t k = t >= (double) n ? n : (uint64_t) t;
  k += (double) k < t ? 1 : 0;
  k = k < 1 ? 1 : k > n ? n : k;
  for (size_t c = 0; c < cal->channels; c++) {
    const struct qh_channel* ch = &cal->ch[c];
    float lo = ch->min, hi = ch->max;
    if (percentile < 100.0 && ch->has_range) {
      /* max: the upper edge of the first bin (from below) where the running count
       * reaches k, which is at least the k-th smallest value and within a bin width
       * of it; min: the lower edge of the first bin from above where it reaches k */
      const double w = pow2(ch->exponent - 10);
      size_t up = 0, down = qh_bins - 1;
      for (uint64_t sum = ch->bins[0]; sum < k;) sum += ch->bins[++up];
      for (uint64_t sum = ch->bins[down]; sum < k;) sum += ch->bins[--down];
      double edge_hi = (double) ((int32_t) up - 1023) * w;
      double edge_lo = (double) ((int32_t) down - 1024) * w;
      /* within the exact extremes, rounded outward to floats */
      edge_hi = edge_hi < (double) ch->min ? (double) ch->min : edge_hi;
      edge_hi = edge_hi > (double) ch->max ? (double) ch->max : edge_hi;
      edge_lo = edge_lo < (double) ch->min ? (double) ch->min : edge_lo;
      edge_lo = edge_lo > (double) ch->max ? (double) ch->max : edge_lo;
      hi = to_float_directed(edge_hi, 1);
      lo = to_float_directed(edge_lo, 0);
    }
    min[c] = lo;
    max[c] = hi;
  }
  return gemmi8_status_success;
}
