/*
 * The quantization helpers (gemmi8_choose_qparams, gemmi8_quantize_f32,
 * gemmi8_dequantize_f32, gemmi8_quantize_bias, gemmi8_requant_scales and the
 * calibration object) against:
 *   - the header's definitions, written out again here as plain scalar code with libm
 *     (nearbyint for rne, round for rna, floor, frexp, ldexp, nextafterf), not as the
 *     library writes them;
 *   - the published formulas of the frameworks each scheme follows, each written as its
 *     source writes it and named in a comment: ONNX QuantizeLinear, DequantizeLinear and
 *     DynamicQuantizeLinear (whose bytes must also be gemmi8_quantize_rows_u8's), ONNX
 *     Runtime's quantization tool (compute_scale_zp, quantize bias), ONNX Runtime's
 *     QLinearConv output scale; TFLite's ChooseQuantizationParams, Quantize kernel,
 *     symmetric per-channel weight scales, per-channel bias, QuantizeMultiplier and the
 *     effective scale of a per-channel convolution.
 * Cases built on purpose: ties (x / s exactly n + 1/2, both rounding modes), NaN and
 * infinities, the ends of each range, degenerate ranges (0, all on one side of 0),
 * per-row and per-column scales, the symmetric range's -127, bias saturation; every
 * error status with outputs prefilled with a sentinel and checked untouched; random
 * sweeps from the suite's seed. Calibration: exact min/max at 100, a known distribution,
 * per-channel rows, bins merged as R grows (identical to one update), bad inputs.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define INVALID gemmi8_status_invalid_parameter
#define UNSUPPORTED gemmi8_status_unsupported_parameter
#define SUCCESS gemmi8_status_success

static const gemmi8_qscheme schemes[] = {gemmi8_qscheme_onnx, gemmi8_qscheme_tflite};
static const gemmi8_qrange ranges[] = {gemmi8_qrange_u8, gemmi8_qrange_s8,
                                       gemmi8_qrange_s8_symmetric};
static const gemmi8_qaxis axes[] = {gemmi8_qaxis_tensor, gemmi8_qaxis_row, gemmi8_qaxis_column};
static const char* const scheme_names[] = {"onnx", "tflite"};
static const char* const range_names[] = {"u8", "s8", "s8_symmetric"};
static const char* const axis_names[] = {"tensor", "row", "column"};

static int same_float(float a, float b) { return memcmp(&a, &b, sizeof(a)) == 0; }

static void bounds(gemmi8_qrange range, int32_t* qmin, int32_t* qmax)
{
  *qmin = range == gemmi8_qrange_u8 ? 0 : range == gemmi8_qrange_s8 ? -128 : -127;
  *qmax = range == gemmi8_qrange_u8 ? 255 : 127;
}

static float pow2f(int e) { return ldexpf(1.0f, e); }

/* A float of random magnitude 2^-40 .. 2^40, either sign. */
static float random_value(void)
{
  return (float) ((2.0 * t_unit() - 1.0) * ldexp(1.0, (int) t_range(-40, 40)));
}

/* ---- references: the header's definitions ------------------------------------------- */

/* gemmi8_choose_qparams, one range; 0 where the header says unsupported. */
static int ref_qparams(gemmi8_qscheme scheme, gemmi8_qrange range, float lo, float hi, float* scale,
                       int32_t* zp)
{
  int32_t qmin, qmax;
  bounds(range, &qmin, &qmax);
  const float rmin = fminf(lo, 0.0f), rmax = fmaxf(hi, 0.0f);
  float s;
  *zp = 0;
  if (range == gemmi8_qrange_s8_symmetric) {
    const float a = fmaxf(rmax, -rmin);
    s = a == 0.0f ? 1.0f : scheme == gemmi8_qscheme_onnx ? (a + a) / 254.0f : a / 127.0f;
  } else if (scheme == gemmi8_qscheme_onnx) {
    s = rmax == rmin ? 1.0f : (rmax - rmin) / (float) (qmax - qmin);
    if (!isfinite(s) || s < FLT_MIN) return 0;
    const float z = (float) qmin - rmin / s;
    *zp = (int32_t) nearbyintf(fminf(fmaxf(z, (float) qmin), (float) qmax));
  } else if (rmax == rmin) {
    s = 1.0f;
  } else {
    /* TFLite's ChooseQuantizationParams (tensorflow/lite/kernels/internal/
     * quantization_util.h), as written there: double arithmetic, the zero point from
     * whichever end has the smaller error, nudged by clamping, TfLiteRound (round). */
    const double qmin_double = qmin, qmax_double = qmax;
    const double dmin = rmin, dmax = rmax;
    const double scale_d = (dmax - dmin) / (qmax_double - qmin_double);
    const double zero_point_from_min = qmin_double - dmin / scale_d;
    const double zero_point_from_max = qmax_double - dmax / scale_d;
    const double zero_point_from_min_error = fabs(qmin_double) + fabs(dmin / scale_d);
    const double zero_point_from_max_error = fabs(qmax_double) + fabs(dmax / scale_d);
    const double zero_point_double = zero_point_from_min_error < zero_point_from_max_error
                                         ? zero_point_from_min
                                         : zero_point_from_max;
    if (zero_point_double < qmin_double) {
      *zp = qmin;
    } else if (zero_point_double > qmax_double) {
      *zp = qmax;
    } else {
      *zp = (int32_t) round(zero_point_double);
    }
    s = (float) scale_d;
  }
  if (!isfinite(s) || s < FLT_MIN) return 0;
  *scale = s;
  return 1;
}

/* One quantized value. ONNX QuantizeLinear (onnx/defs/quantization/defs.cc):
 * y = saturate(round(x / y_scale) + y_zero_point), round half to even. TFLite's Quantize
 * (tensorflow/lite/kernels/internal/reference/quantize.h, AffineQuantize):
 * unclamped = (int32) TfLiteRound(val / (float) scale) + zero_point, clamped. The
 * header adds: a NaN gives qmin; infinities saturate (done here in double, where the
 * frameworks' casts would be undefined). */
static int32_t ref_quantize(gemmi8_qscheme scheme, gemmi8_qrange range, float x, float s,
                            int32_t zp)
{
  int32_t qmin, qmax;
  bounds(range, &qmin, &qmax);
  const float q = x / s;
  if (isnan(q)) return qmin;
  const double r = (scheme == gemmi8_qscheme_onnx ? nearbyint((double) q) : round((double) q)) + zp;
  return r < qmin ? qmin : r > qmax ? qmax : (int32_t) r;
}

/* ONNX DequantizeLinear / TFLite Dequantize: (x - zero_point) * scale, in float. */
static float ref_dequantize(int32_t q, float s, int32_t zp) { return (float) (q - zp) * s; }

/* Bias. ONNX Runtime's quantization tool (onnx_quantizer.py, quantize_bias_static):
 * bias_scale = input_scale * weight_scale; quantized = (bias / bias_scale).round() in
 * float32 (numpy: half to even). TFLite (tensorflow/lite/tools/optimize/
 * quantization_utils.cc, SymmetricPerChannelBiasQuantize): scaling_factor =
 * input_scale * weight_scales[i] (float); scaling_factor_inv = 1.0 / scaling_factor
 * (a double division kept as float); TfLiteRound(bias * inv), clamped to
 * [-kScale, kScale], kScale = INT32_MAX. Both saturated as the header says. */
static int32_t ref_bias(gemmi8_qscheme scheme, float bias, float a_scale, float w_scale)
{
  const float s = a_scale * w_scale;
  double r;
  if (scheme == gemmi8_qscheme_onnx) {
    r = nearbyint((double) (bias / s));
  } else {
    const float inv = (float) (1.0 / (double) s);
    r = round((double) (bias * inv));
  }
  return r > 2147483647.0 ? INT32_MAX : r < -2147483647.0 ? -INT32_MAX : (int32_t) r;
}

/* TFLite's QuantizeMultiplier (tensorflow/lite/kernels/internal/quantization_util.cc),
 * with frexp and TfLiteRound, and its shift limits. */
static void ref_quantize_multiplier(double m, int32_t* multiplier, int32_t* shift)
{
  if (m == 0.0) {
    *multiplier = 0;
    *shift = 0;
    return;
  }
  int e;
  const double q = frexp(m, &e);
  int64_t q_fixed = (int64_t) round(q * (double) (1ll << 31));
  if (q_fixed == (1ll << 31)) {
    q_fixed /= 2;
    e++;
  }
  if (e < -31) {
    e = 0;
    q_fixed = 0;
  }
  if (e > 30) {
    e = 30;
    q_fixed = (1ll << 31) - 1;
  }
  *multiplier = (int32_t) q_fixed;
  *shift = e;
}

/* ---- helpers ------------------------------------------------------------------------- */

static const char* sname(gemmi8_status s) { return gemmi8_status_string(s); }

/* A byte pattern for outputs that must stay untouched. */
#define SENTINEL 0xA5

static int all_sentinel(const void* p, size_t bytes)
{
  const unsigned char* b = p;
  for (size_t i = 0; i < bytes; i++) {
    if (b[i] != SENTINEL) return 0;
  }
  return 1;
}

/* ---- gemmi8_choose_qparams -------------------------------------------------------------- */

static void check_qparams(gemmi8_qscheme scheme, gemmi8_qrange range, float lo, float hi,
                          const char* what)
{
  float s = -1.0f, want_s = 0.0f;
  int32_t z = -999, want_z = 0;
  const int ok = ref_qparams(scheme, range, lo, hi, &want_s, &want_z);
  const gemmi8_status st = gemmi8_choose_qparams(scheme, range, 1, &lo, &hi, &s, &z);
  if (ok) {
    t_expect(st == SUCCESS && same_float(s, want_s) && z == want_z, "gemmi8_choose_qparams",
             "%s %s %s [%a, %a]: status %s, scale %a zp %d, expected %a %d", what,
             scheme_names[scheme], range_names[range], (double) lo, (double) hi, sname(st),
             (double) s, (int) z, (double) want_s, (int) want_z);
  } else {
    t_expect(st == UNSUPPORTED && s == -1.0f && z == -999, "gemmi8_choose_qparams",
             "%s %s %s [%a, %a]: status %s, expected unsupported, nothing written", what,
             scheme_names[scheme], range_names[range], (double) lo, (double) hi, sname(st));
  }
}

static void qparams_cases(void)
{
  static const float edges[][2] = {
      {0.0f, 0.0f},        {-0.0f, 0.0f},        {1.0f, 2.0f},        {-3.0f, -1.0f},
      {-1.0f, 1.0f},       {-2.5f, 252.5f},      {-2.5f, 124.5f},     {-127.0f, 128.0f},
      {0.0f, 255.0f},      {-255.0f, 0.0f},      {-1e-30f, 1e-30f},   {-1e-37f, 1e-37f},
      {0.0f, 1e-36f},      {-FLT_MAX, FLT_MAX},  {-FLT_MAX, 0.0f},    {0.0f, FLT_MAX},
      {-1e38f, 1e38f},     {-3e38f, 2e38f},      {FLT_MIN, FLT_MIN},  {-FLT_TRUE_MIN, 0.0f},
      {-0.1f, 0.3f},       {-6.0f, 6.0f},        {-1.0f, 1e-10f},     {-1e-10f, 1.0f},
      {-128.0f, 127.0f},   {-127.5f, 127.5f},    {2.0f, 2.0f},        {-5.0f, -5.0f},
  };
  for (size_t i = 0; i < T_COUNT(edges); i++) {
    for (size_t s = 0; s < T_COUNT(schemes); s++) {
      for (size_t r = 0; r < T_COUNT(ranges); r++) {
        check_qparams(schemes[s], ranges[r], edges[i][0], edges[i][1], "edge");
      }
    }
  }
  /* ties of the zero point, built on purpose: a range of 255 (u8) with scale exactly 1
   * and rmin = -2.5 puts z at 2.5: onnx rne 2, tflite rna 3 */
  {
    const float lo = -2.5f, hi = 252.5f;
    float s;
    int32_t z;
    gemmi8_status st = gemmi8_choose_qparams(gemmi8_qscheme_onnx, gemmi8_qrange_u8, 1, &lo, &hi, &s, &z);
    t_expect(st == SUCCESS && s == 1.0f && z == 2, "gemmi8_choose_qparams",
             "onnx u8 tie [-2.5, 252.5]: scale %a zp %d, expected 1 and 2", (double) s, (int) z);
    st = gemmi8_choose_qparams(gemmi8_qscheme_tflite, gemmi8_qrange_u8, 1, &lo, &hi, &s, &z);
    t_expect(st == SUCCESS && s == 1.0f && z == 3, "gemmi8_choose_qparams",
             "tflite u8 tie [-2.5, 252.5]: scale %a zp %d, expected 1 and 3", (double) s, (int) z);
    /* s8: z = -128 + 3.5 = -124.5: rne -124, rna -125 */
    const float lo8 = -3.5f, hi8 = 251.5f;
    st = gemmi8_choose_qparams(gemmi8_qscheme_onnx, gemmi8_qrange_s8, 1, &lo8, &hi8, &s, &z);
    t_expect(st == SUCCESS && s == 1.0f && z == -124, "gemmi8_choose_qparams",
             "onnx s8 tie [-3.5, 251.5]: scale %a zp %d, expected 1 and -124", (double) s, (int) z);
    st = gemmi8_choose_qparams(gemmi8_qscheme_tflite, gemmi8_qrange_s8, 1, &lo8, &hi8, &s, &z);
    t_expect(st == SUCCESS && s == 1.0f && z == -125, "gemmi8_choose_qparams",
             "tflite s8 tie [-3.5, 251.5]: scale %a zp %d, expected 1 and -125", (double) s, (int) z);
  }
  /* degenerate ranges: the header's values, written out */
  {
    const float zero = 0.0f;
    float s[3];
    int32_t z[3];
    for (size_t r = 0; r < T_COUNT(ranges); r++) {
      gemmi8_status st = gemmi8_choose_qparams(gemmi8_qscheme_onnx, ranges[r], 1, &zero, &zero, s, z);
      const int32_t want = ranges[r] == gemmi8_qrange_s8 ? -128 : 0;
      t_expect(st == SUCCESS && s[0] == 1.0f && z[0] == want, "gemmi8_choose_qparams",
               "onnx %s [0, 0]: scale %a zp %d, expected 1 and %d", range_names[r],
               (double) s[0], (int) z[0], (int) want);
      st = gemmi8_choose_qparams(gemmi8_qscheme_tflite, ranges[r], 1, &zero, &zero, s, z);
      t_expect(st == SUCCESS && s[0] == 1.0f && z[0] == 0, "gemmi8_choose_qparams",
               "tflite %s [0, 0]: scale %a zp %d, expected 1 and 0", range_names[r],
               (double) s[0], (int) z[0]);
    }
    /* a range on one side of 0 is widened to hold it: [1, 2] is [0, 2], [-3, -1] is [-3, 0] */
    const float lo[2] = {1.0f, -3.0f}, hi[2] = {2.0f, -1.0f};
    gemmi8_status st = gemmi8_choose_qparams(gemmi8_qscheme_onnx, gemmi8_qrange_u8, 2, lo, hi, s, z);
    t_expect(st == SUCCESS && s[0] == 2.0f / 255.0f && z[0] == 0 && s[1] == 3.0f / 255.0f &&
                 z[1] == 255,
             "gemmi8_choose_qparams", "onnx u8 [1, 2], [-3, -1]: %a %d, %a %d", (double) s[0],
             (int) z[0], (double) s[1], (int) z[1]);
  }
  /* the symmetric range's scale is the same float in both schemes (a + a finite), and
   * is ONNX Runtime's compute_scale_zp (onnxruntime/python/tools/quantization/
   * quant_utils.py, symmetric: absmax, rmin = -absmax, rmax = absmax, scale =
   * float64(rmax - rmin) / (qmax - qmin) with qmin, qmax = -127, 127, cast to float32,
   * zero point 0) and TFLite's symmetric per-channel weight scale (GetSymmetricScales
   * FromMaxMin in tensorflow/lite/tools/optimize/quantization_utils.cc: range =
   * max(|min|, |max|) as float, scale = range / 127, float) */
  for (int i = 0; i < (t_quick ? 300 : 2000); i++) {
    float lo = random_value(), hi = random_value();
    if (lo > hi) {
      const float t = lo;
      lo = hi;
      hi = t;
    }
    const float absmax = fmaxf(fabsf(fminf(lo, 0.0f)), fabsf(fmaxf(hi, 0.0f)));
    const float ort = (float) ((double) (absmax - -absmax) / (127.0 - -127.0));
    const float tfl = fmaxf(fabsf(lo), fabsf(hi)) / 127;
    const float rmin = fminf(lo, 0.0f), rmax = fmaxf(hi, 0.0f);
    const float tfl_widened = fmaxf(fabsf(rmin), fabsf(rmax)) / 127;
    float s[2];
    int32_t z[2];
    gemmi8_status st0 = gemmi8_choose_qparams(gemmi8_qscheme_onnx, gemmi8_qrange_s8_symmetric,
                                              1, &lo, &hi, &s[0], &z[0]);
    gemmi8_status st1 = gemmi8_choose_qparams(gemmi8_qscheme_tflite, gemmi8_qrange_s8_symmetric,
                                              1, &lo, &hi, &s[1], &z[1]);
    /* TFLite's per-channel weights are taken over the weights themselves, min <= 0 <= max
     * when they hold both signs: the same as the widened range then */
    const int both_signs = lo <= 0.0f && hi >= 0.0f;
    t_expect(st0 == SUCCESS && st1 == SUCCESS && same_float(s[0], ort) &&
                 same_float(s[1], tfl_widened) && same_float(s[0], s[1]) &&
                 (!both_signs || same_float(s[1], tfl)) && z[0] == 0 && z[1] == 0,
             "gemmi8_choose_qparams", "symmetric [%a, %a]: onnx %a, tflite %a, ORT %a, TFLite %a",
             (double) lo, (double) hi, (double) s[0], (double) s[1], (double) ort, (double) tfl);
  }
  /* ONNX DynamicQuantizeLinear (onnx/defs/quantization/defs.cc): x_min = min(0, min(x)),
   * x_max = max(0, max(x)), y_scale = (x_max - x_min) / (qmax - qmin), intermediate_zp
   * = qmin - x_min / y_scale, y_zero_point = cast(round(saturate(intermediate_zp)))
   * with qmin, qmax = 0, 255 and rounding half to even, in float; the bytes are
   * saturate(round(x / y_scale) + y_zero_point). gemmi8_choose_qparams (onnx, u8) then
   * gemmi8_quantize_f32 must give that, and gemmi8_quantize_rows_u8's scale, zero point
   * and bytes (on every kernel set: this group runs once per set). */
  for (int i = 0; i < (t_quick ? 60 : 400); i++) {
    enum { max_k = 80 };
    const size_t k = 1 + t_below(max_k);
    float x[max_k];
    const float mag = pow2f((int) t_range(-20, 20));
    const int kind = (int) t_below(4);
    for (size_t j = 0; j < k; j++) {
      x[j] = kind == 0   ? (float) (2.0 * t_unit() - 1.0) * mag
             : kind == 1 ? (float) t_unit() * mag
             : kind == 2 ? -(float) t_unit() * mag
                         : (float) ((int) t_range(-300, 300)) * mag * 0.5f; /* ties */
    }
    float lo = x[0], hi = x[0];
    for (size_t j = 1; j < k; j++) {
      lo = fminf(lo, x[j]);
      hi = fmaxf(hi, x[j]);
    }
    const float x_min = fminf(0.0f, lo), x_max = fmaxf(0.0f, hi);
    float onnx_scale = (x_max - x_min) / (255.0f - 0.0f);
    if (onnx_scale == 0.0f) onnx_scale = 1.0f; /* the operator's 0 / 0: ONNX Runtime's 1 */
    const float izp = 0.0f - x_min / onnx_scale;
    const int32_t onnx_zp = (int32_t) nearbyintf(fminf(fmaxf(izp, 0.0f), 255.0f));
    uint8_t onnx_y[max_k], got_y[max_k], rows_y[max_k];
    for (size_t j = 0; j < k; j++) {
      const double r = nearbyint((double) (x[j] / onnx_scale)) + onnx_zp;
      onnx_y[j] = (uint8_t) (r < 0 ? 0 : r > 255 ? 255 : r);
    }
    float s, rows_s;
    int32_t z, rows_z;
    gemmi8_status st = gemmi8_choose_qparams(gemmi8_qscheme_onnx, gemmi8_qrange_u8, 1, &lo, &hi, &s, &z);
    if (st == SUCCESS) {
      st = gemmi8_quantize_f32(gemmi8_qscheme_onnx, gemmi8_qrange_u8, gemmi8_qaxis_tensor, 1, k,
                               x, &s, &z, got_y);
    }
    const gemmi8_status st2 = gemmi8_quantize_rows_u8(1, k, x, k, rows_y, k, &rows_s, &rows_z);
    t_expect(st == SUCCESS && st2 == SUCCESS && same_float(s, onnx_scale) && z == onnx_zp &&
                 memcmp(got_y, onnx_y, k) == 0 && same_float(rows_s, s) && rows_z == z &&
                 memcmp(rows_y, got_y, k) == 0,
             "DynamicQuantizeLinear", "k %zu kind %d: scale %a zp %d (rows_u8 %a %d), ONNX %a %d%s",
             k, kind, (double) s, (int) z, (double) rows_s, (int) rows_z, (double) onnx_scale,
             (int) onnx_zp, memcmp(got_y, onnx_y, k) != 0 ? ", bytes differ" : "");
  }
  /* random ranges against the definitions, several at once */
  for (int i = 0; i < (t_quick ? 100 : 600); i++) {
    enum { n = 7 };
    float lo[n], hi[n], s[n], want_s[n];
    int32_t z[n], want_z[n];
    const gemmi8_qscheme scheme = T_PICK(schemes);
    const gemmi8_qrange range = T_PICK(ranges);
    int all_ok = 1;
    for (int j = 0; j < n; j++) {
      float a = random_value(), b = t_below(4) == 0 ? a : random_value();
      if (t_below(5) == 0) a = fabsf(a) * (t_below(2) ? 1.0f : -1.0f);
      lo[j] = fminf(a, b);
      hi[j] = fmaxf(a, b);
      all_ok &= ref_qparams(scheme, range, lo[j], hi[j], &want_s[j], &want_z[j]);
    }
    const gemmi8_status st = gemmi8_choose_qparams(scheme, range, n, lo, hi, s, z);
    int same = st == SUCCESS;
    for (int j = 0; same && j < n; j++) same = same_float(s[j], want_s[j]) && z[j] == want_z[j];
    t_expect(all_ok && same, "gemmi8_choose_qparams", "random %s %s: status %s",
             scheme_names[scheme], range_names[range], sname(st));
  }
}

/* ---- gemmi8_quantize_f32, gemmi8_dequantize_f32 ----------------------------------------- */

/* One call over rows x cols against ref_quantize and then back against ref_dequantize. */
static void check_arrays(gemmi8_qscheme scheme, gemmi8_qrange range, gemmi8_qaxis axis,
                         size_t rows, size_t cols, const float* x, const float* scale,
                         const int32_t* zp, const char* what)
{
  const size_t n = rows * cols;
  uint8_t* y = t_alloc(n + 32);
  float* back = t_alloc((n + 8) * sizeof(float));
  memset(y, SENTINEL, n + 32);
  memset(back, SENTINEL, (n + 8) * sizeof(float));
  gemmi8_status st = gemmi8_quantize_f32(scheme, range, axis, rows, cols, x, scale, zp, y);
  size_t bad = SIZE_MAX;
  for (size_t i = 0; st == SUCCESS && i < n && bad == SIZE_MAX; i++) {
    const size_t p = axis == gemmi8_qaxis_tensor ? 0 : axis == gemmi8_qaxis_row ? i / cols : i % cols;
    const int32_t want = ref_quantize(scheme, range, x[i], scale[p], zp[p]);
    const int32_t got = range == gemmi8_qrange_u8 ? (int32_t) y[i] : (int32_t) (int8_t) y[i];
    if (got != want) bad = i;
  }
  if (!t_expect(st == SUCCESS && bad == SIZE_MAX && all_sentinel(y + n, 32), "gemmi8_quantize_f32",
                "%s %s %s %s %zu x %zu: status %s%s", what, scheme_names[scheme],
                range_names[range], axis_names[axis], rows, cols, sname(st),
                bad != SIZE_MAX ? "; a value differs" : "")) {
    if (bad != SIZE_MAX) {
      const size_t p = axis == gemmi8_qaxis_tensor ? 0 : axis == gemmi8_qaxis_row ? bad / cols : bad % cols;
      printf("   element %zu: x %a scale %a zp %d: got %d, expected %d\n", bad, (double) x[bad],
             (double) scale[p], (int) zp[p],
             range == gemmi8_qrange_u8 ? (int) y[bad] : (int) (int8_t) y[bad],
             (int) ref_quantize(scheme, range, x[bad], scale[p], zp[p]));
    }
    free(y);
    free(back);
    return;
  }
  st = gemmi8_dequantize_f32(range, axis, rows, cols, y, scale, zp, back);
  bad = SIZE_MAX;
  for (size_t i = 0; st == SUCCESS && i < n && bad == SIZE_MAX; i++) {
    const size_t p = axis == gemmi8_qaxis_tensor ? 0 : axis == gemmi8_qaxis_row ? i / cols : i % cols;
    const int32_t q = range == gemmi8_qrange_u8 ? (int32_t) y[i] : (int32_t) (int8_t) y[i];
    if (!same_float(back[i], ref_dequantize(q, scale[p], zp[p]))) bad = i;
  }
  t_expect(st == SUCCESS && bad == SIZE_MAX && all_sentinel(back + n, 8 * sizeof(float)),
           "gemmi8_dequantize_f32", "%s %s %s %zu x %zu: status %s%s", what, range_names[range],
           axis_names[axis], rows, cols, sname(st), bad != SIZE_MAX ? "; a value differs" : "");
  free(y);
  free(back);
}

static float special_value(void)
{
  static const float special[] = {0.0f,     -0.0f,     INFINITY,     -INFINITY,     NAN,
                                  -NAN,     FLT_MAX,   -FLT_MAX,     FLT_MIN,       -FLT_MIN,
                                  1e30f,    -1e30f,    FLT_TRUE_MIN, -FLT_TRUE_MIN, 0.5f,
                                  -0.5f,    2147483648.0f, -2147483648.0f, 255.5f, -128.5f};
  return T_PICK(special);
}

static void arrays_random(void)
{
  static const size_t dims[] = {1, 2, 3, 5, 8, 15, 16, 17, 31, 32, 33, 47, 64, 100};
  const int cases = t_quick ? 150 : 900;
  for (int c = 0; c < cases; c++) {
    const gemmi8_qscheme scheme = T_PICK(schemes);
    const gemmi8_qrange range = T_PICK(ranges);
    const gemmi8_qaxis axis = T_PICK(axes);
    const size_t rows = T_PICK(dims), cols = T_PICK(dims);
    int32_t qmin, qmax;
    bounds(range, &qmin, &qmax);
    const size_t count = axis == gemmi8_qaxis_tensor ? 1 : axis == gemmi8_qaxis_row ? rows : cols;
    float* scale = t_alloc(count * sizeof(float));
    int32_t* zp = t_alloc(count * sizeof(int32_t));
    for (size_t i = 0; i < count; i++) {
      /* powers of two (ties exact), ordinary, tiny and huge scales */
      const int kind = (int) t_below(4);
      scale[i] = kind == 0   ? pow2f((int) t_range(-10, 10))
                 : kind == 1 ? (float) (0.001 + t_unit())
                 : kind == 2 ? pow2f((int) t_range(-140, -120)) * (float) (1.0 + t_unit())
                             : pow2f((int) t_range(100, 127)) * (float) (1.0 + t_unit() * 0.9);
      zp[i] = range == gemmi8_qrange_s8_symmetric ? 0
              : t_below(4) == 0                   ? (t_below(2) ? qmin : qmax)
                                                  : (int32_t) t_range(qmin, qmax);
    }
    float* x = t_alloc(rows * cols * sizeof(float));
    for (size_t i = 0; i < rows * cols; i++) {
      const size_t p = axis == gemmi8_qaxis_tensor ? 0 : axis == gemmi8_qaxis_row ? i / cols : i % cols;
      const int kind = (int) t_below(8);
      if (kind == 0) {
        x[i] = special_value();
      } else if (kind <= 3) {
        /* q = n + 1/2 exactly (or n) when the scale is a power of two */
        x[i] = (float) t_range(-600, 600) * 0.5f * scale[p];
      } else {
        x[i] = (float) (t_unit() * 2.0 - 1.0) * 300.0f * scale[p];
      }
    }
    check_arrays(scheme, range, axis, rows, cols, x, scale, zp, "random");
    free(x);
    free(scale);
    free(zp);
  }
}

static void arrays_cases(void)
{
  /* ties, both modes, written out: scale 1, x = n + 1/2 */
  {
    const float x[8] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, -127.5f};
    const int32_t rne_s8[8] = {0, 2, 2, 0, -2, -2, 126, -127};
    const int32_t rna_s8[8] = {1, 2, 3, -1, -2, -3, 127, -127}; /* symmetric: -128 clamps to -127 */
    const float one = 1.0f;
    const int32_t zero = 0;
    int8_t y[8];
    gemmi8_status st = gemmi8_quantize_f32(gemmi8_qscheme_onnx, gemmi8_qrange_s8_symmetric,
                                           gemmi8_qaxis_tensor, 1, 8, x, &one, &zero, y);
    int same = st == SUCCESS;
    for (int i = 0; i < 8; i++) same &= y[i] == rne_s8[i];
    t_expect(same, "gemmi8_quantize_f32", "onnx ties (rne): status %s", sname(st));
    st = gemmi8_quantize_f32(gemmi8_qscheme_tflite, gemmi8_qrange_s8_symmetric,
                             gemmi8_qaxis_tensor, 1, 8, x, &one, &zero, y);
    same = st == SUCCESS;
    for (int i = 0; i < 8; i++) same &= y[i] == rna_s8[i];
    t_expect(same, "gemmi8_quantize_f32", "tflite ties (rna): status %s", sname(st));
    /* with a zero point: ties are of x / s, before it is added (zp 3, x 2.5: rne 2 + 3) */
    const int32_t z3 = 3;
    uint8_t u[8];
    st = gemmi8_quantize_f32(gemmi8_qscheme_onnx, gemmi8_qrange_u8, gemmi8_qaxis_tensor, 1, 8, x,
                             &one, &z3, u);
    t_expect(st == SUCCESS && u[0] == 3 && u[1] == 5 && u[2] == 5 && u[3] == 3 && u[4] == 1 &&
                 u[5] == 1 && u[6] == 129 && u[7] == 0,
             "gemmi8_quantize_f32", "onnx u8 ties with zp 3: %u %u %u %u %u %u %u %u", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7]);
    st = gemmi8_quantize_f32(gemmi8_qscheme_tflite, gemmi8_qrange_u8, gemmi8_qaxis_tensor, 1, 8,
                             x, &one, &z3, u);
    t_expect(st == SUCCESS && u[0] == 4 && u[1] == 5 && u[2] == 6 && u[3] == 2 && u[4] == 1 &&
                 u[5] == 0 && u[6] == 130 && u[7] == 0,
             "gemmi8_quantize_f32", "tflite u8 ties with zp 3: %u %u %u %u %u %u %u %u", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7]);
  }
  /* NaN gives qmin; infinities saturate; the ends of every range */
  for (size_t r = 0; r < T_COUNT(ranges); r++) {
    int32_t qmin, qmax;
    bounds(ranges[r], &qmin, &qmax);
    const float x[6] = {NAN, -NAN, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX};
    const int32_t want[6] = {qmin, qmin, qmax, qmin, qmax, qmin};
    for (size_t s = 0; s < T_COUNT(schemes); s++) {
      const float sc = 0.25f;
      const int32_t z = ranges[r] == gemmi8_qrange_s8_symmetric ? 0 : (qmin + qmax) / 2;
      uint8_t y[6];
      const gemmi8_status st =
          gemmi8_quantize_f32(schemes[s], ranges[r], gemmi8_qaxis_tensor, 1, 6, x, &sc, &z, y);
      int same = st == SUCCESS;
      for (int i = 0; i < 6; i++) {
        same &= (ranges[r] == gemmi8_qrange_u8 ? (int32_t) y[i] : (int32_t) (int8_t) y[i]) == want[i];
      }
      t_expect(same, "gemmi8_quantize_f32", "%s %s: NaN, inf, FLT_MAX: status %s",
               scheme_names[s], range_names[r], sname(st));
    }
  }
  /* the symmetric range accepts every int8 in dequantization, -128 included */
  {
    int8_t q[4] = {-128, -127, 0, 127};
    const float s = 0.5f;
    const int32_t z = 0;
    float x[4];
    const gemmi8_status st = gemmi8_dequantize_f32(gemmi8_qrange_s8_symmetric, gemmi8_qaxis_tensor,
                                                   1, 4, q, &s, &z, x);
    t_expect(st == SUCCESS && x[0] == -64.0f && x[1] == -63.5f && x[2] == 0.0f && x[3] == 63.5f,
             "gemmi8_dequantize_f32", "symmetric -128..127: status %s", sname(st));
  }
  /* per-row and per-column with different scales and zero points, each a tie pattern */
  {
    enum { R = 3, C = 37 };
    float x[R * C];
    const float rs[R] = {0.5f, 2.0f, 0.125f};
    float cscale[C];
    int32_t rz[R] = {-5, 0, 100}, cz[C];
    for (size_t c = 0; c < C; c++) {
      cscale[c] = pow2f((int) (c % 7) - 3);
      cz[c] = (int32_t) (c * 7 % 256) - 128;
    }
    for (size_t i = 0; i < R * C; i++) x[i] = (float) ((int) (i % 41) - 20) * 0.5f * rs[i / C];
    for (size_t s = 0; s < T_COUNT(schemes); s++) {
      check_arrays(schemes[s], gemmi8_qrange_s8, gemmi8_qaxis_row, R, C, x, rs, rz, "per-row");
      for (size_t i = 0; i < R * C; i++) {
        x[i] = (float) ((int) (i % 53) - 26) * 0.5f * cscale[i % C];
      }
      check_arrays(schemes[s], gemmi8_qrange_s8, gemmi8_qaxis_column, R, C, x, cscale, cz,
                   "per-column");
      for (size_t i = 0; i < R * C; i++) x[i] = (float) ((int) (i % 41) - 20) * 0.5f * rs[i / C];
    }
  }
}

/* ---- gemmi8_quantize_bias -------------------------------------------------------------- */

static void bias_cases(void)
{
  /* ties: s = 2^-4 exactly, bias = (n + 1/2) s */
  {
    const float a = 0.25f, w = 0.25f;
    const float bias[6] = {2.5f / 16, 3.5f / 16, -2.5f / 16, -3.5f / 16, 0.5f / 16, -0.5f / 16};
    const int32_t rne[6] = {2, 4, -2, -4, 0, 0}, rna[6] = {3, 4, -3, -4, 1, -1};
    int32_t out[6];
    gemmi8_status st = gemmi8_quantize_bias(gemmi8_qscheme_onnx, 6, bias, a, &w, 0, out);
    t_expect(st == SUCCESS && memcmp(out, rne, sizeof(out)) == 0, "gemmi8_quantize_bias",
             "onnx ties: status %s, %d %d %d %d %d %d", sname(st), out[0], out[1], out[2], out[3],
             out[4], out[5]);
    st = gemmi8_quantize_bias(gemmi8_qscheme_tflite, 6, bias, a, &w, 0, out);
    t_expect(st == SUCCESS && memcmp(out, rna, sizeof(out)) == 0, "gemmi8_quantize_bias",
             "tflite ties: status %s, %d %d %d %d %d %d", sname(st), out[0], out[1], out[2],
             out[3], out[4], out[5]);
  }
  /* saturation at +-(2^31 - 1), before any conversion */
  {
    const float a = 1.0f, w = 1.0f;
    const float bias[6] = {2147483648.0f, -2147483648.0f, 1e30f, -1e30f, 2147483520.0f,
                           -2147483520.0f};
    const int32_t want[6] = {INT32_MAX, -INT32_MAX, INT32_MAX, -INT32_MAX, 2147483520, -2147483520};
    for (size_t s = 0; s < T_COUNT(schemes); s++) {
      int32_t out[6];
      const gemmi8_status st = gemmi8_quantize_bias(schemes[s], 6, bias, a, &w, 0, out);
      t_expect(st == SUCCESS && memcmp(out, want, sizeof(out)) == 0, "gemmi8_quantize_bias",
               "%s saturation: status %s, %d %d %d %d", scheme_names[s], sname(st), out[0],
               out[1], out[2], out[3]);
    }
    /* a bias over a tiny scale: inf after the division, saturated */
    const float tiny_w = 1e-30f, big = 1e20f;
    int32_t out;
    const gemmi8_status st = gemmi8_quantize_bias(gemmi8_qscheme_onnx, 1, &big, 1e-8f, &tiny_w, 0, &out);
    t_expect(st == SUCCESS && out == INT32_MAX, "gemmi8_quantize_bias",
             "onnx 1e20 / 1e-38: status %s, %d", sname(st), out);
  }
  /* random, per channel and per tensor */
  for (int i = 0; i < (t_quick ? 100 : 500); i++) {
    enum { n = 9 };
    float bias[n], w[n];
    const float a = (float) (t_unit() + 0.001) * pow2f((int) t_range(-12, 4));
    const int per_channel = (int) t_below(2);
    const gemmi8_qscheme scheme = T_PICK(schemes);
    for (int c = 0; c < n; c++) {
      w[c] = t_below(3) == 0 ? pow2f((int) t_range(-12, 0)) : (float) (t_unit() + 0.0001) * 0.1f;
      const int kind = (int) t_below(4);
      bias[c] = kind == 0 ? special_value() : kind == 1 ? (float) t_range(-40, 40) * 0.5f * a * w[c]
                                                        : random_value();
      if (!isfinite(bias[c])) bias[c] = 1.0f;
    }
    int32_t out[n];
    const gemmi8_status st = gemmi8_quantize_bias(scheme, n, bias, a, w, per_channel, out);
    int same = st == SUCCESS;
    for (int c = 0; same && c < n; c++) same = out[c] == ref_bias(scheme, bias[c], a, w[per_channel ? c : 0]);
    t_expect(same, "gemmi8_quantize_bias", "random %s per_channel %d: status %s",
             scheme_names[scheme], per_channel, sname(st));
  }
}

/* ---- gemmi8_requant_scales ------------------------------------------------------------- */

static void requant_cases(void)
{
  for (int i = 0; i < (t_quick ? 100 : 500); i++) {
    enum { n = 8 };
    const gemmi8_qscheme scheme = T_PICK(schemes);
    const float a = (float) (t_unit() + 0.001) * pow2f((int) t_range(-10, 2));
    const float cs = (float) (t_unit() + 0.001) * pow2f((int) t_range(-10, 4));
    float w[n], scale[n];
    int32_t m[n], sh[n];
    for (int c = 0; c < n; c++) w[c] = (float) (t_unit() + 0.001) * pow2f((int) t_range(-12, 0));
    const size_t count = 1 + t_below(n);
    const gemmi8_status st = gemmi8_requant_scales(scheme, count, a, w, cs, scale, m, sh);
    int same = st == SUCCESS;
    for (size_t c = 0; same && c < count; c++) {
      double f;
      if (scheme == gemmi8_qscheme_onnx) {
        /* ONNX Runtime's QLinearConv (onnxruntime/core/providers/cpu/quantization/
         * qlinearconv.cc): output_scales[i] = X_scale * W_scale[i] / Y_scale, float */
        f = (double) (a * w[c] / cs);
      } else {
        /* TFLite's PopulateConvolutionQuantizationParams (tensorflow/lite/kernels/
         * kernel_util.cc): effective_output_scale = (double) input_scale *
         * (double) filter_scale / (double) output_scale, then QuantizeMultiplier */
        f = (double) a * (double) w[c] / (double) cs;
      }
      int32_t want_m, want_sh;
      ref_quantize_multiplier(f, &want_m, &want_sh);
      same = same_float(scale[c], (float) f) && m[c] == want_m && sh[c] == want_sh;
    }
    t_expect(same, "gemmi8_requant_scales", "%s count %zu: status %s", scheme_names[scheme],
             count, sname(st));
  }
  /* only the fp32 scales, only the fixed-point pair */
  {
    const float a = 0.5f, w = 0.25f, c = 0.125f;
    float s = 0.0f;
    int32_t m = 0, sh = 0;
    gemmi8_status st = gemmi8_requant_scales(gemmi8_qscheme_onnx, 1, a, &w, c, &s, NULL, NULL);
    t_expect(st == SUCCESS && s == 1.0f, "gemmi8_requant_scales", "scale only: %s %a", sname(st), (double) s);
    st = gemmi8_requant_scales(gemmi8_qscheme_tflite, 1, a, &w, c, NULL, &m, &sh);
    t_expect(st == SUCCESS && m == 1073741824 && sh == 1, "gemmi8_requant_scales",
             "multiplier only: %s %d %d", sname(st), (int) m, (int) sh);
  }
}

/* ---- errors ---------------------------------------------------------------------------- */

static void expect_refused(const char* func, const char* what, gemmi8_status got,
                           gemmi8_status want, const void* out, size_t bytes)
{
  t_expect(got == want && all_sentinel(out, bytes), func, "%s: status %s, expected %s%s", what,
           sname(got), sname(want), all_sentinel(out, bytes) ? "" : "; an output was written");
}

static void errors(void)
{
  enum { R = 2, C = 3 };
  const float x[R * C] = {0.5f, -1.0f, 2.0f, 3.0f, -4.0f, 0.0f};
  const float one[C] = {1.0f, 1.0f, 1.0f};
  const int32_t zero[C] = {0, 0, 0};
  const gemmi8_qscheme bad_scheme = (gemmi8_qscheme) 7;
  const gemmi8_qrange bad_range = (gemmi8_qrange) 7;
  const gemmi8_qaxis bad_axis = (gemmi8_qaxis) 7;
  unsigned char y[64], f[64], g[64];
#define RESET() (memset(y, SENTINEL, sizeof(y)), memset(f, SENTINEL, sizeof(f)), memset(g, SENTINEL, sizeof(g)))
  const gemmi8_qscheme onnx = gemmi8_qscheme_onnx;
  const gemmi8_qrange u8 = gemmi8_qrange_u8;
  const gemmi8_qaxis tensor = gemmi8_qaxis_tensor;

  /* choose_qparams */
  const char* fn = "gemmi8_choose_qparams";
  float* fs = (float*) (void*) f;
  int32_t* gz = (int32_t*) (void*) g;
  const float lo[2] = {-1.0f, 0.0f}, hi[2] = {1.0f, 2.0f};
  const float nan_lo[1] = {NAN}, inf_hi[1] = {INFINITY}, big[1] = {FLT_MAX}, nbig[1] = {-FLT_MAX};
  const float tiny[1] = {1e-37f}, ntiny[1] = {-1e-37f}, zero_f[1] = {0.0f};
  RESET();
  expect_refused(fn, "min NULL", gemmi8_choose_qparams(onnx, u8, 2, NULL, hi, fs, gz), INVALID, f, 64);
  expect_refused(fn, "max NULL", gemmi8_choose_qparams(onnx, u8, 2, lo, NULL, fs, gz), INVALID, f, 64);
  expect_refused(fn, "scale NULL", gemmi8_choose_qparams(onnx, u8, 2, lo, hi, NULL, gz), INVALID, g, 64);
  expect_refused(fn, "zero_point NULL", gemmi8_choose_qparams(onnx, u8, 2, lo, hi, fs, NULL), INVALID, f, 64);
  expect_refused(fn, "count 0", gemmi8_choose_qparams(onnx, u8, 0, lo, hi, fs, gz), INVALID, f, 64);
  expect_refused(fn, "count SIZE_MAX", gemmi8_choose_qparams(onnx, u8, SIZE_MAX, lo, hi, fs, gz), INVALID, f, 64);
  expect_refused(fn, "count SIZE_MAX / 4 + 1", gemmi8_choose_qparams(onnx, u8, SIZE_MAX / 4 + 1, lo, hi, fs, gz), INVALID, f, 64);
  expect_refused(fn, "scheme 7", gemmi8_choose_qparams(bad_scheme, u8, 2, lo, hi, fs, gz), INVALID, f, 64);
  expect_refused(fn, "range 7", gemmi8_choose_qparams(onnx, bad_range, 2, lo, hi, fs, gz), INVALID, f, 64);
  expect_refused(fn, "min NaN", gemmi8_choose_qparams(onnx, u8, 1, nan_lo, hi, fs, gz), INVALID, f, 64);
  expect_refused(fn, "max inf", gemmi8_choose_qparams(onnx, u8, 1, lo, inf_hi, fs, gz), INVALID, f, 64);
  expect_refused(fn, "min and max inf", gemmi8_choose_qparams(gemmi8_qscheme_tflite, u8, 1, inf_hi, inf_hi, fs, gz), INVALID, f, 64);
  expect_refused(fn, "min > max (second range)", gemmi8_choose_qparams(onnx, u8, 2, hi, lo, fs, gz), INVALID, f, 64);
  expect_refused(fn, "onnx range beyond FLT_MAX", gemmi8_choose_qparams(onnx, u8, 1, nbig, big, fs, gz), UNSUPPORTED, f, 64);
  expect_refused(fn, "onnx symmetric a + a infinite", gemmi8_choose_qparams(onnx, gemmi8_qrange_s8_symmetric, 1, nbig, big, fs, gz), UNSUPPORTED, f, 64);
  expect_refused(fn, "tflite scale below FLT_MIN", gemmi8_choose_qparams(gemmi8_qscheme_tflite, u8, 1, ntiny, tiny, fs, gz), UNSUPPORTED, f, 64);
  expect_refused(fn, "onnx one-sided scale below FLT_MIN", gemmi8_choose_qparams(onnx, gemmi8_qrange_s8, 1, zero_f, tiny, fs, gz), UNSUPPORTED, f, 64);
  {
    /* the first range fine, the second unsupported: nothing written at all */
    const float l2[2] = {-1.0f, -FLT_MAX}, h2[2] = {1.0f, FLT_MAX};
    RESET();
    const gemmi8_status st = gemmi8_choose_qparams(onnx, u8, 2, l2, h2, fs, gz);
    t_expect(st == UNSUPPORTED && all_sentinel(f, 64) && all_sentinel(g, 64), fn,
             "second range unsupported: status %s, outputs %s", sname(st),
             all_sentinel(f, 64) && all_sentinel(g, 64) ? "untouched" : "written");
    /* tflite's double has room where onnx's float overflows */
    const gemmi8_status st2 = gemmi8_choose_qparams(gemmi8_qscheme_tflite, u8, 2, l2, h2, fs, gz);
    t_expect(st2 == SUCCESS, fn, "tflite [-FLT_MAX, FLT_MAX]: status %s", sname(st2));
  }

  /* quantize / dequantize */
  const char* fq = "gemmi8_quantize_f32";
  const char* fd = "gemmi8_dequantize_f32";
  const float bad_scales[] = {0.0f, -0.0f, -1.0f, INFINITY, NAN, -INFINITY};
  RESET();
  expect_refused(fq, "x NULL", gemmi8_quantize_f32(onnx, u8, tensor, R, C, NULL, one, zero, y), INVALID, y, 64);
  expect_refused(fq, "scale NULL", gemmi8_quantize_f32(onnx, u8, tensor, R, C, x, NULL, zero, y), INVALID, y, 64);
  expect_refused(fq, "zero_point NULL", gemmi8_quantize_f32(onnx, u8, tensor, R, C, x, one, NULL, y), INVALID, y, 64);
  expect_refused(fq, "rows 0", gemmi8_quantize_f32(onnx, u8, tensor, 0, C, x, one, zero, y), INVALID, y, 64);
  expect_refused(fq, "cols 0", gemmi8_quantize_f32(onnx, u8, tensor, R, 0, x, one, zero, y), INVALID, y, 64);
  expect_refused(fq, "scheme 7", gemmi8_quantize_f32(bad_scheme, u8, tensor, R, C, x, one, zero, y), INVALID, y, 64);
  expect_refused(fq, "range 7", gemmi8_quantize_f32(onnx, bad_range, tensor, R, C, x, one, zero, y), INVALID, y, 64);
  expect_refused(fq, "axis 7", gemmi8_quantize_f32(onnx, u8, bad_axis, R, C, x, one, zero, y), INVALID, y, 64);
  expect_refused(fq, "rows x cols overflows SIZE_MAX", gemmi8_quantize_f32(onnx, u8, tensor, SIZE_MAX / 2, 3, x, one, zero, y), INVALID, y, 64);
  expect_refused(fq, "rows SIZE_MAX", gemmi8_quantize_f32(onnx, u8, tensor, SIZE_MAX, SIZE_MAX, x, one, zero, y), INVALID, y, 64);
  expect_refused(fq, "rows x cols x 4 beyond PTRDIFF_MAX", gemmi8_quantize_f32(onnx, u8, tensor, 1, SIZE_MAX / 4, x, one, zero, y), INVALID, y, 64);
  expect_refused(fd, "rows x cols overflows SIZE_MAX", gemmi8_dequantize_f32(u8, tensor, SIZE_MAX / 2, 3, y, one, zero, (float*) (void*) f), INVALID, f, 64);
  RESET();
  expect_refused(fd, "q NULL", gemmi8_dequantize_f32(u8, tensor, R, C, NULL, one, zero, (float*) (void*) f), INVALID, f, 64);
  expect_refused(fd, "x NULL", gemmi8_dequantize_f32(u8, tensor, R, C, y, one, zero, NULL), INVALID, y, 64);
  expect_refused(fd, "scale NULL", gemmi8_dequantize_f32(u8, tensor, R, C, y, NULL, zero, (float*) (void*) f), INVALID, f, 64);
  expect_refused(fd, "zero_point NULL", gemmi8_dequantize_f32(u8, tensor, R, C, y, one, NULL, (float*) (void*) f), INVALID, f, 64);
  expect_refused(fd, "rows 0", gemmi8_dequantize_f32(u8, tensor, 0, C, y, one, zero, (float*) (void*) f), INVALID, f, 64);
  expect_refused(fd, "cols 0", gemmi8_dequantize_f32(u8, tensor, R, 0, y, one, zero, (float*) (void*) f), INVALID, f, 64);
  expect_refused(fd, "range 7", gemmi8_dequantize_f32(bad_range, tensor, R, C, y, one, zero, (float*) (void*) f), INVALID, f, 64);
  expect_refused(fd, "axis 7", gemmi8_dequantize_f32(u8, bad_axis, R, C, y, one, zero, (float*) (void*) f), INVALID, f, 64);
  for (size_t a = 0; a < T_COUNT(axes); a++) {
    for (size_t b = 0; b < T_COUNT(bad_scales); b++) {
      /* the bad scale at the last position the axis reads */
      float sc[C] = {1.0f, 1.0f, 1.0f};
      const size_t count = axes[a] == gemmi8_qaxis_tensor ? 1 : axes[a] == gemmi8_qaxis_row ? R : C;
      sc[count - 1] = bad_scales[b];
      char what[96];
      snprintf(what, sizeof(what), "%s scale[%zu] = %a", axis_names[a], count - 1, (double) bad_scales[b]);
      RESET();
      expect_refused(fq, what, gemmi8_quantize_f32(gemmi8_qscheme_tflite, gemmi8_qrange_s8, axes[a], R, C, x, sc, zero, y), INVALID, y, 64);
      expect_refused(fd, what, gemmi8_dequantize_f32(gemmi8_qrange_s8, axes[a], R, C, y, sc, zero, (float*) (void*) f), INVALID, f, 64);
    }
    static const struct {
      gemmi8_qrange range;
      int32_t zp;
    } bad_zp[] = {{gemmi8_qrange_u8, -1}, {gemmi8_qrange_u8, 256}, {gemmi8_qrange_s8, -129},
                  {gemmi8_qrange_s8, 128}, {gemmi8_qrange_s8_symmetric, 1},
                  {gemmi8_qrange_s8_symmetric, -1}, {gemmi8_qrange_u8, INT32_MIN},
                  {gemmi8_qrange_s8, INT32_MAX}};
    for (size_t b = 0; b < T_COUNT(bad_zp); b++) {
      int32_t zz[C] = {0, 0, 0};
      const size_t count = axes[a] == gemmi8_qaxis_tensor ? 1 : axes[a] == gemmi8_qaxis_row ? R : C;
      zz[count - 1] = bad_zp[b].zp;
      char what[96];
      snprintf(what, sizeof(what), "%s %s zero_point[%zu] = %d", axis_names[a],
               range_names[bad_zp[b].range], count - 1, (int) bad_zp[b].zp);
      RESET();
      expect_refused(fq, what, gemmi8_quantize_f32(onnx, bad_zp[b].range, axes[a], R, C, x, one, zz, y), INVALID, y, 64);
      expect_refused(fd, what, gemmi8_dequantize_f32(bad_zp[b].range, axes[a], R, C, y, one, zz, (float*) (void*) f), INVALID, f, 64);
    }
  }

  /* bias */
  const char* fb = "gemmi8_quantize_bias";
  const float bias[3] = {1.0f, -2.0f, 3.0f}, w[3] = {0.5f, 0.25f, 0.125f};
  const float nan_bias[3] = {1.0f, NAN, 3.0f}, inf_bias[3] = {1.0f, 2.0f, -INFINITY};
  const float w_bad[3] = {0.5f, 0.0f, 0.125f};
  const float w_tiny[1] = {1e-30f}, w_huge[1] = {1e30f};
  int32_t* out = (int32_t*) (void*) g;
  RESET();
  expect_refused(fb, "bias NULL", gemmi8_quantize_bias(onnx, 3, NULL, 0.5f, w, 1, out), INVALID, g, 64);
  expect_refused(fb, "w_scale NULL", gemmi8_quantize_bias(onnx, 3, bias, 0.5f, NULL, 1, out), INVALID, g, 64);
  expect_refused(fb, "out NULL", gemmi8_quantize_bias(onnx, 3, bias, 0.5f, w, 1, NULL), INVALID, g, 64);
  expect_refused(fb, "count 0", gemmi8_quantize_bias(onnx, 0, bias, 0.5f, w, 1, out), INVALID, g, 64);
  expect_refused(fb, "count SIZE_MAX", gemmi8_quantize_bias(onnx, SIZE_MAX, bias, 0.5f, w, 0, out), INVALID, g, 64);
  expect_refused(fb, "scheme 7", gemmi8_quantize_bias(bad_scheme, 3, bias, 0.5f, w, 1, out), INVALID, g, 64);
  expect_refused(fb, "w_per_channel 2", gemmi8_quantize_bias(onnx, 3, bias, 0.5f, w, 2, out), INVALID, g, 64);
  expect_refused(fb, "bias NaN", gemmi8_quantize_bias(onnx, 3, nan_bias, 0.5f, w, 1, out), INVALID, g, 64);
  expect_refused(fb, "bias -inf", gemmi8_quantize_bias(gemmi8_qscheme_tflite, 3, inf_bias, 0.5f, w, 1, out), INVALID, g, 64);
  expect_refused(fb, "a_scale 0", gemmi8_quantize_bias(onnx, 3, bias, 0.0f, w, 1, out), INVALID, g, 64);
  expect_refused(fb, "a_scale NaN", gemmi8_quantize_bias(onnx, 3, bias, NAN, w, 1, out), INVALID, g, 64);
  expect_refused(fb, "a_scale -1", gemmi8_quantize_bias(onnx, 3, bias, -1.0f, w, 1, out), INVALID, g, 64);
  expect_refused(fb, "a_scale inf", gemmi8_quantize_bias(onnx, 3, bias, INFINITY, w, 1, out), INVALID, g, 64);
  expect_refused(fb, "w_scale[1] 0", gemmi8_quantize_bias(onnx, 3, bias, 0.5f, w_bad, 1, out), INVALID, g, 64);
  expect_refused(fb, "product 0", gemmi8_quantize_bias(onnx, 1, bias, 1e-30f, w_tiny, 0, out), INVALID, g, 64);
  expect_refused(fb, "product infinite", gemmi8_quantize_bias(onnx, 1, bias, 1e30f, w_huge, 0, out), INVALID, g, 64);
  {
    /* tflite: s = 2^-130 (subnormal, finite): 1 / s is infinite */
    const float a = 0x1p-65f, ws = 0x1p-65f;
    expect_refused(fb, "tflite inverse infinite", gemmi8_quantize_bias(gemmi8_qscheme_tflite, 1, bias, a, &ws, 0, out), INVALID, g, 64);
    const gemmi8_status st = gemmi8_quantize_bias(onnx, 1, bias, a, &ws, 0, out);
    t_expect(st == SUCCESS && out[0] == INT32_MAX, fb, "onnx over s = 2^-130: status %s, %d", sname(st), (int) out[0]);
  }

  /* requant scales */
  const char* fr = "gemmi8_requant_scales";
  int32_t* m = (int32_t*) (void*) y;
  RESET();
  expect_refused(fr, "count 0", gemmi8_requant_scales(onnx, 0, 0.5f, w, 0.25f, fs, m, gz), INVALID, f, 64);
  expect_refused(fr, "count SIZE_MAX", gemmi8_requant_scales(onnx, SIZE_MAX, 0.5f, w, 0.25f, fs, m, gz), INVALID, f, 64);
  expect_refused(fr, "w_scale NULL", gemmi8_requant_scales(onnx, 3, 0.5f, NULL, 0.25f, fs, m, gz), INVALID, f, 64);
  expect_refused(fr, "all outputs NULL", gemmi8_requant_scales(onnx, 3, 0.5f, w, 0.25f, NULL, NULL, NULL), INVALID, f, 64);
  expect_refused(fr, "shift NULL", gemmi8_requant_scales(onnx, 3, 0.5f, w, 0.25f, fs, m, NULL), INVALID, f, 64);
  expect_refused(fr, "multiplier NULL", gemmi8_requant_scales(onnx, 3, 0.5f, w, 0.25f, fs, NULL, gz), INVALID, f, 64);
  expect_refused(fr, "scheme 7", gemmi8_requant_scales(bad_scheme, 3, 0.5f, w, 0.25f, fs, m, gz), INVALID, f, 64);
  expect_refused(fr, "a_scale 0", gemmi8_requant_scales(onnx, 3, 0.0f, w, 0.25f, fs, m, gz), INVALID, f, 64);
  expect_refused(fr, "c_scale NaN", gemmi8_requant_scales(onnx, 3, 0.5f, w, NAN, fs, m, gz), INVALID, f, 64);
  expect_refused(fr, "c_scale -inf", gemmi8_requant_scales(onnx, 3, 0.5f, w, -INFINITY, fs, m, gz), INVALID, f, 64);
  expect_refused(fr, "w_scale[1] 0", gemmi8_requant_scales(onnx, 3, 0.5f, w_bad, 0.25f, fs, m, gz), INVALID, f, 64);
  expect_refused(fr, "f 0 (onnx)", gemmi8_requant_scales(onnx, 1, 1e-30f, w_tiny, 1e30f, fs, m, gz), INVALID, f, 64);
  expect_refused(fr, "(float) f 0 (tflite)", gemmi8_requant_scales(gemmi8_qscheme_tflite, 1, 1e-30f, w_tiny, 1e30f, fs, m, gz), INVALID, f, 64);
  expect_refused(fr, "f infinite", gemmi8_requant_scales(gemmi8_qscheme_tflite, 1, 1e30f, w_huge, 1e-30f, fs, m, gz), INVALID, f, 64);
  t_expect(all_sentinel(y, 64) && all_sentinel(g, 64), fr, "multiplier or shift written on an error");
#undef RESET
}

/* ---- calibration ----------------------------------------------------------------------- */

static int cmp_float(const void* a, const void* b)
{
  /* -0.0 below 0.0, as the calibration counts them */
  const float x = *(const float*) a, y = *(const float*) b;
  if (x == 0.0f && y == 0.0f) return (signbit(y) != 0) - (signbit(x) != 0);
  return x < y ? -1 : x > y;
}

/* The header's histogram reading, independently: R from frexp of the largest |value|,
 * bins by floor, edges by ldexp, held to [min, max] and rounded outward with
 * nextafterf. v: the n values of one channel. */
static void ref_percentile(size_t n, const float* v, double p, float* lo, float* hi)
{
  float mn = v[0], mx = v[0], amax = 0.0f;
  for (size_t i = 0; i < n; i++) {
    mn = cmp_float(&v[i], &mn) < 0 ? v[i] : mn;
    mx = cmp_float(&v[i], &mx) > 0 ? v[i] : mx;
    amax = fmaxf(amax, fabsf(v[i]));
  }
  if (p == 100.0 || amax == 0.0f) {
    *lo = mn;
    *hi = mx;
    return;
  }
  int e;
  frexp((double) amax, &e); /* 2^(e-1) <= amax < 2^e: R = 2^e */
  const double w = ldexp(1.0, e - 10);
  static uint64_t bins[2048];
  memset(bins, 0, sizeof(bins));
  for (size_t i = 0; i < n; i++) bins[(size_t) (floor((double) v[i] / w) + 1024)]++;
  double t = p * (double) n / 100.0;
  uint64_t k = (uint64_t) ceil(t);
  k = k < 1 ? 1 : k > n ? n : k;
  uint64_t sum = 0;
  int up = -1, down = 2048;
  while (sum < k) sum += bins[++up];
  sum = 0;
  while (sum < k) sum += bins[--down];
  const double eh = fmin(fmax(ldexp((double) (up - 1023), e - 10), mn), mx);
  const double el = fmin(fmax(ldexp((double) (down - 1024), e - 10), mn), mx);
  float fh = (float) eh, fl = (float) el;
  if ((double) fh < eh) fh = nextafterf(fh, INFINITY);
  if ((double) fl > el) fl = nextafterf(fl, -INFINITY);
  *lo = fl;
  *hi = fh;
}

static void calibration_cases(void)
{
  const char* fn = "gemmi8_calibration_range";
  /* 0..9999 as floats: exact at 100, within R / 1024 = 16 at 99 */
  {
    enum { n = 10000 };
    float* v = t_alloc(n * sizeof(float));
    for (int i = 0; i < n; i++) v[(i * 7919) % n] = (float) i; /* shuffled */
    gemmi8_calibration* cal = NULL;
    gemmi8_status st = gemmi8_calibration_create(1, &cal);
    if (st == SUCCESS) st = gemmi8_calibration_update(cal, n, v);
    float lo = -1, hi = -1;
    if (st == SUCCESS) st = gemmi8_calibration_range(cal, 100.0, &lo, &hi);
    t_expect(st == SUCCESS && lo == 0.0f && hi == 9999.0f, fn, "0..9999 at 100: %s [%g, %g]",
             sname(st), (double) lo, (double) hi);
    st = gemmi8_calibration_range(cal, 99.0, &lo, &hi);
    /* 99%: the 9900-th smallest is 9899, the 9900-th largest is 100 */
    t_expect(st == SUCCESS && hi >= 9899.0f && hi - 9899.0f < 16.0f && lo <= 100.0f &&
                 100.0f - lo < 16.0f && lo >= 0.0f && hi <= 9999.0f,
             fn, "0..9999 at 99: %s [%g, %g], expected within 16 of [100, 9899]", sname(st),
             (double) lo, (double) hi);
    float rl, rh;
    ref_percentile(n, v, 99.0, &rl, &rh);
    t_expect(lo == rl && hi == rh, fn, "0..9999 at 99: [%g, %g], the bins say [%g, %g]",
             (double) lo, (double) hi, (double) rl, (double) rh);
    st = gemmi8_calibration_range(cal, 50.0, &lo, &hi);
    t_expect(st == SUCCESS && hi >= 4999.0f && hi - 4999.0f < 16.0f && lo <= 5000.0f &&
                 5000.0f - lo < 16.0f,
             fn, "0..9999 at 50: %s [%g, %g]", sname(st), (double) lo, (double) hi);
    gemmi8_calibration_destroy(cal);
    free(v);
  }
  /* per-channel rows, random distributions, pieces versus one update */
  for (int c = 0; c < (t_quick ? 8 : 40); c++) {
    const size_t channels = 1 + t_below(5);
    const size_t rows = 1 + t_below(t_quick ? 300 : 2000);
    const size_t n = rows * channels;
    float* v = t_alloc(n * sizeof(float));
    const int kind = (int) t_below(6);
    for (size_t i = 0; i < n; i++) {
      const size_t ch = i % channels;
      const float mag = pow2f((int) ch * 3 - 4);
      const float growing = (float) (i / channels + 1) * (float) t_unit() * mag;
      v[i] = kind == 5   ? (t_below(2) ? growing : -growing) /* R grows from row to row */
             : kind == 0 ? (float) (2.0 * t_unit() - 1.0) * mag
             : kind == 1 ? (float) t_unit() * mag + 1.0f /* all above 0 */
             : kind == 2 ? (t_below(10) == 0 ? 0.0f : -(float) t_unit() * mag)
             : kind == 3 ? (float) (t_unit() * t_unit() * t_unit()) * mag * 1000.0f
                         : special_value();
      if (!isfinite(v[i])) v[i] = 0.0f;
    }
    /* the values in growing magnitude over several updates, so that R grows */
    gemmi8_calibration *one = NULL, *pieces = NULL;
    gemmi8_status st = gemmi8_calibration_create(channels, &one);
    gemmi8_status st2 = gemmi8_calibration_create(channels, &pieces);
    if (st == SUCCESS) st = gemmi8_calibration_update(one, n, v);
    size_t done = 0;
    while (st2 == SUCCESS && done < rows) {
      const size_t left = rows - done;
      const size_t take = 1 + t_below((uint32_t) (kind == 5 && left > 8 ? left / 8 : left));
      st2 = gemmi8_calibration_update(pieces, take * channels, v + done * channels);
      done += take;
    }
    int ok = st == SUCCESS && st2 == SUCCESS;
    static const double ps[] = {100.0, 99.99, 99.9, 99.0, 90.0, 75.0, 50.0};
    float* col = t_alloc(rows * sizeof(float));
    float* lo = t_alloc(channels * sizeof(float));
    float* hi = t_alloc(channels * sizeof(float));
    float* lo2 = t_alloc(channels * sizeof(float));
    float* hi2 = t_alloc(channels * sizeof(float));
    char why[160] = "";
    for (size_t pi = 0; ok && pi < T_COUNT(ps); pi++) {
      st = gemmi8_calibration_range(one, ps[pi], lo, hi);
      st2 = gemmi8_calibration_range(pieces, ps[pi], lo2, hi2);
      ok = st == SUCCESS && st2 == SUCCESS;
      for (size_t ch = 0; ok && ch < channels; ch++) {
        for (size_t r = 0; r < rows; r++) col[r] = v[r * channels + ch];
        float rl, rh;
        ref_percentile(rows, col, ps[pi], &rl, &rh);
        qsort(col, rows, sizeof(float), cmp_float);
        size_t k = (size_t) ceil(ps[pi] * (double) rows / 100.0);
        k = k < 1 ? 1 : k > rows ? rows : k;
        const float kth_small = col[k - 1], kth_large = col[rows - k];
        float amax = fmaxf(fabsf(col[0]), fabsf(col[rows - 1]));
        int e = 0;
        frexp((double) amax, &e);
        /* R / 1024, or the spacing of floats where that is coarser */
        const double tol = amax == 0.0f ? 0.0 : fmax(ldexp(1.0, e - 10), 0x1p-149);
        if (!same_float(lo[ch], lo2[ch]) || !same_float(hi[ch], hi2[ch])) {
          snprintf(why, sizeof(why), "channel %zu at %g: one update [%a, %a], in pieces [%a, %a]",
                   ch, ps[pi], (double) lo[ch], (double) hi[ch], (double) lo2[ch], (double) hi2[ch]);
          ok = 0;
        } else if (!same_float(lo[ch], rl) || !same_float(hi[ch], rh)) {
          snprintf(why, sizeof(why), "channel %zu at %g: [%a, %a], the bins say [%a, %a]", ch,
                   ps[pi], (double) lo[ch], (double) hi[ch], (double) rl, (double) rh);
          ok = 0;
        } else if (hi[ch] < kth_small || (double) hi[ch] - kth_small > tol ||
                   lo[ch] > kth_large || kth_large - (double) lo[ch] > tol || lo[ch] < col[0] ||
                   hi[ch] > col[rows - 1] ||
                   (ps[pi] == 100.0 && (lo[ch] != col[0] || hi[ch] != col[rows - 1]))) {
          snprintf(why, sizeof(why),
                   "channel %zu at %g: [%a, %a], k-th values [%a, %a], exact [%a, %a]", ch,
                   ps[pi], (double) lo[ch], (double) hi[ch], (double) kth_large,
                   (double) kth_small, (double) col[0], (double) col[rows - 1]);
          ok = 0;
        }
      }
    }
    t_expect(ok, fn, "%zu channels x %zu rows, kind %d: %s%s", channels, rows, kind, why,
             st != SUCCESS || st2 != SUCCESS ? " (a status failed)" : "");
    gemmi8_calibration_destroy(one);
    gemmi8_calibration_destroy(pieces);
    free(v);
    free(col);
    free(lo);
    free(hi);
    free(lo2);
    free(hi2);
  }
  /* R grows by many powers at once (tiny values first, then huge ones): identical to
   * one update, and the tiny values kept their side of 0 */
  {
    const float a[6] = {1e-30f, -1e-30f, 3e-38f, -FLT_TRUE_MIN, 0.0f, -0.0f};
    const float b[4] = {1e30f, -2e30f, 1.0f, -1.0f};
    float all[10];
    memcpy(all, a, sizeof(a));
    memcpy(all + 6, b, sizeof(b));
    gemmi8_calibration *x1 = NULL, *x2 = NULL;
    gemmi8_calibration_create(1, &x1);
    gemmi8_calibration_create(1, &x2);
    gemmi8_status st = gemmi8_calibration_update(x1, 6, a);
    if (st == SUCCESS) st = gemmi8_calibration_update(x1, 4, b);
    if (st == SUCCESS) st = gemmi8_calibration_update(x2, 10, all);
    int same = st == SUCCESS;
    for (double p = 50.0; same && p <= 100.0; p += 2.5) {
      float l1, h1, l2, h2, rl, rh;
      same = gemmi8_calibration_range(x1, p, &l1, &h1) == SUCCESS &&
             gemmi8_calibration_range(x2, p, &l2, &h2) == SUCCESS;
      ref_percentile(10, all, p, &rl, &rh);
      same = same && same_float(l1, l2) && same_float(h1, h2) && same_float(l1, rl) &&
             same_float(h1, rh);
    }
    t_expect(same, fn, "tiny values, then huge: status %s, ranges differ", sname(st));
    /* a value of exactly a power of two: R is the next one (|value| < R) */
    const float p2[3] = {-4.0f, 4.0f, 0.0f};
    gemmi8_calibration* x3 = NULL;
    gemmi8_calibration_create(1, &x3);
    st = gemmi8_calibration_update(x3, 3, p2);
    float l, h;
    if (st == SUCCESS) st = gemmi8_calibration_range(x3, 60.0, &l, &h);
    /* k = ceil(1.8) = 2: 0 from each end, in bin [0, w): R = 8, w = 8 / 1024 (R = 4
     * would give w = 4 / 1024) */
    t_expect(st == SUCCESS && l == 0.0f && h == 0.0078125f, fn,
             "[-4, 0, 4] at 60: %s [%g, %g], expected [0, 1/128]", sname(st), (double) l, (double) h);
    /* signed zeros: -0.0 counts below 0.0, whatever the order they come in */
    const float z1[2] = {0.0f, -0.0f}, z2[2] = {-0.0f, 0.0f};
    gemmi8_calibration *y1 = NULL, *y2 = NULL;
    gemmi8_calibration_create(1, &y1);
    gemmi8_calibration_create(1, &y2);
    float l1 = 1, h1 = 1, l2 = 1, h2 = 1;
    st = gemmi8_calibration_update(y1, 2, z1);
    if (st == SUCCESS) st = gemmi8_calibration_update(y2, 2, z2);
    if (st == SUCCESS) st = gemmi8_calibration_range(y1, 100.0, &l1, &h1);
    if (st == SUCCESS) st = gemmi8_calibration_range(y2, 100.0, &l2, &h2);
    t_expect(st == SUCCESS && same_float(l1, -0.0f) && same_float(h1, 0.0f) &&
                 same_float(l2, -0.0f) && same_float(h2, 0.0f),
             fn, "signed zeros: %s [%a, %a] and [%a, %a], expected [-0, 0]", sname(st),
             (double) l1, (double) h1, (double) l2, (double) h2);
    gemmi8_calibration_destroy(y1);
    gemmi8_calibration_destroy(y2);
    gemmi8_calibration_destroy(x1);
    gemmi8_calibration_destroy(x2);
    gemmi8_calibration_destroy(x3);
  }
  /* invalid inputs: nothing recorded, nothing written */
  {
    const char* fc = "gemmi8_calibration_create";
    const char* fu = "gemmi8_calibration_update";
    gemmi8_calibration* cal = (gemmi8_calibration*) (uintptr_t) 0x1234;
    gemmi8_status st = gemmi8_calibration_create(0, &cal);
    t_expect(st == INVALID && cal == (gemmi8_calibration*) (uintptr_t) 0x1234, fc, "channels 0: %s", sname(st));
    st = gemmi8_calibration_create(SIZE_MAX, &cal);
    t_expect(st == INVALID && cal == (gemmi8_calibration*) (uintptr_t) 0x1234, fc, "channels SIZE_MAX: %s", sname(st));
    st = gemmi8_calibration_create(SIZE_MAX / 16384, &cal);
    t_expect((st == INVALID || st == gemmi8_status_out_of_memory) &&
                 cal == (gemmi8_calibration*) (uintptr_t) 0x1234,
             fc, "channels SIZE_MAX / 16384: %s", sname(st));
    st = gemmi8_calibration_create(2, NULL);
    t_expect(st == INVALID, fc, "cal NULL: %s", sname(st));
    cal = NULL;
    st = gemmi8_calibration_create(2, &cal);
    const float ok[4] = {1.0f, -2.0f, 3.0f, 0.5f};
    const float bad[4] = {1.0f, 2.0f, NAN, 4.0f}, bad2[4] = {1.0f, 2.0f, 3.0f, -INFINITY};
    t_expect(st == SUCCESS && gemmi8_calibration_update(cal, 4, ok) == SUCCESS, fu, "a valid update");
    t_expect(gemmi8_calibration_update(NULL, 4, ok) == INVALID, fu, "cal NULL");
    t_expect(gemmi8_calibration_update(cal, 4, NULL) == INVALID, fu, "x NULL");
    t_expect(gemmi8_calibration_update(cal, 0, ok) == INVALID, fu, "count 0");
    t_expect(gemmi8_calibration_update(cal, 3, ok) == INVALID, fu, "count not a multiple of channels");
    t_expect(gemmi8_calibration_update(cal, SIZE_MAX - 1, ok) == INVALID, fu, "count SIZE_MAX - 1");
    t_expect(gemmi8_calibration_update(cal, 4, bad) == INVALID, fu, "a NaN");
    t_expect(gemmi8_calibration_update(cal, 4, bad2) == INVALID, fu, "-inf");
    float lo[2], hi[2];
    st = gemmi8_calibration_range(cal, 100.0, lo, hi);
    t_expect(st == SUCCESS && lo[0] == 1.0f && hi[0] == 3.0f && lo[1] == -2.0f && hi[1] == 0.5f,
             fu, "refused updates recorded nothing: [%g, %g] [%g, %g]", (double) lo[0],
             (double) hi[0], (double) lo[1], (double) hi[1]);
    static const double bad_p[] = {49.999, 100.0000001, -1.0, 0.0, NAN, INFINITY, 1000.0};
    for (size_t i = 0; i < T_COUNT(bad_p); i++) {
      memset(lo, SENTINEL, sizeof(lo));
      memset(hi, SENTINEL, sizeof(hi));
      st = gemmi8_calibration_range(cal, bad_p[i], lo, hi);
      t_expect(st == INVALID && all_sentinel(lo, sizeof(lo)) && all_sentinel(hi, sizeof(hi)), fn,
               "percentile %g: %s", bad_p[i], sname(st));
    }
    memset(lo, SENTINEL, sizeof(lo));
    memset(hi, SENTINEL, sizeof(hi));
    t_expect(gemmi8_calibration_range(NULL, 99.0, lo, hi) == INVALID && all_sentinel(lo, 8) && all_sentinel(hi, 8), fn, "cal NULL");
    t_expect(gemmi8_calibration_range(cal, 99.0, NULL, hi) == INVALID && all_sentinel(hi, 8), fn, "min NULL");
    t_expect(gemmi8_calibration_range(cal, 99.0, lo, NULL) == INVALID && all_sentinel(lo, 8), fn, "max NULL");
    gemmi8_calibration* empty = NULL;
    gemmi8_calibration_create(1, &empty);
    t_expect(gemmi8_calibration_range(empty, 100.0, lo, hi) == INVALID && all_sentinel(lo, 8) && all_sentinel(hi, 8), fn, "no values yet");
    gemmi8_calibration_destroy(empty);
    gemmi8_calibration_destroy(cal);
    gemmi8_calibration_destroy(NULL);
  }
}

void test_qhelp(void)
{
  qparams_cases();
  arrays_cases();
  arrays_random();
  bias_cases();
  requant_cases();
  errors();
  calibration_cases();
}
