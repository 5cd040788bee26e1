/*
 * The quantization helpers against the header's definitions, written out again here
 * with libm (nearbyint = rne, round = rna), and their error contract.
 *
 * One input is one of:
 *   0  gemmi8_choose_qparams: up to 16 ranges, bounds from the special menu (NaN,
 *      infinities, denormals, FLT_MAX...), any bits, or multiples of a power of two;
 *   1  gemmi8_quantize_f32 then gemmi8_dequantize_f32: rows x cols (up to 40 x 70), an
 *      axis, scales (special, positive, or powers of two: ties), zero points in and just
 *      outside the range, values special or n / 2 times the scale;
 *   2  gemmi8_quantize_bias: up to 16 biases, a_scale and w_scale from the menus,
 *      per channel or not (or a w_per_channel of 2);
 *   3  gemmi8_requant_scales: up to 16 channels, any of the outputs NULL;
 *   4  the calibration: 1..4 channels, values given in 1..4 updates (some refused: a
 *      NaN among them), then ranges at several percentiles, compared with one update
 *      of every accepted value and held to the exact extremes and the k-th values.
 * The scheme, range and axis may be unknown values. The expected status comes from
 * the header's rules; on failure every output must keep its canary, on success equal
 * the reference; guards are checked everywhere.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ref.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#define MAX_COUNT 16

static int same_float(float a, float b) { return memcmp(&a, &b, sizeof(a)) == 0; }

static void bounds(int range, int32_t* qmin, int32_t* qmax)
{
  *qmin = range == 0 ? 0 : range == 1 ? -128 : -127;
  *qmax = range == 0 ? 255 : 127;
}

static float decode_value(struct fuzz_reader* r, float unit)
{
  switch (fuzz_u8(r) % 4) {
    case 0: return fuzz_f32_special(r);
    case 1: return fuzz_float_of(fuzz_u32(r));
    case 2: return (float) ((int) fuzz_range(r, 0, 1200) - 600) * 0.5f * unit;
    default: return (float) ((double) fuzz_u16(r) / 65536.0 * 2.0 - 1.0) * unit * 300.0f;
  }
}

static float decode_scale(struct fuzz_reader* r)
{
  switch (fuzz_u8(r) % 4) {
    case 0: return fuzz_f32_special(r);
    case 1: return fuzz_f32_positive(r);
    default: return ldexpf(1.0f, (int) fuzz_range(r, 0, 60) - 30);
  }
}

/* ---- references ---------------------------------------------------------------------- */

static int ref_qparams(int tflite, int range, float lo, float hi, float* scale, int32_t* zp)
{
  int32_t qmin, qmax;
  bounds(range, &qmin, &qmax);
  const float rmin = fminf(lo, 0.0f), rmax = fmaxf(hi, 0.0f);
  float s;
  *zp = 0;
  if (range == 2) {
    const float a = fmaxf(rmax, -rmin);
    s = a == 0.0f ? 1.0f : !tflite ? (a + a) / 254.0f : a / 127.0f;
  } else if (!tflite) {
    s = rmax == rmin ? 1.0f : (rmax - rmin) / (float) (qmax - qmin);
    if (!(s >= FLT_MIN && s <= FLT_MAX)) return 0;
    *zp = (int32_t) nearbyintf(fminf(fmaxf((float) qmin - rmin / s, (float) qmin), (float) qmax));
  } else if (rmax == rmin) {
    s = 1.0f;
  } else {
    const double sd = ((double) rmax - (double) rmin) / ((double) qmax - (double) qmin);
    const double zmin = qmin - rmin / sd, zmax = qmax - rmax / sd;
    const double z = fabs((double) qmin) + fabs(rmin / sd) < fabs((double) qmax) + fabs(rmax / sd)
                         ? zmin
                         : zmax;
    *zp = z < qmin ? qmin : z > qmax ? qmax : (int32_t) round(z);
    s = (float) sd;
  }
  if (!(s >= FLT_MIN && s <= FLT_MAX)) return 0;
  *scale = s;
  return 1;
}

static int32_t ref_quantize(int tflite, int range, float x, float s, int32_t zp)
{
  int32_t qmin, qmax;
  bounds(range, &qmin, &qmax);
  const float q = x / s;
  if (isnan(q)) return qmin;
  const double v = (tflite ? round((double) q) : nearbyint((double) q)) + zp;
  return v < qmin ? qmin : v > qmax ? qmax : (int32_t) v;
}

static int32_t ref_bias(int tflite, float b, float a, float w)
{
  const float s = a * w;
  const double v = tflite ? round((double) (b * (1.0f / s))) : nearbyint((double) (b / s));
  return v > 2147483647.0 ? INT32_MAX : v < -2147483647.0 ? -INT32_MAX : (int32_t) v;
}

static int positive_finite(float v) { return v > 0.0f && v <= FLT_MAX; }

/* ---- the calls ------------------------------------------------------------------------- */

static void run_qparams(struct fuzz_reader* r, int scheme, int range)
{
  const size_t count = fuzz_range(r, 0, MAX_COUNT);
  const float unit = ldexpf(1.0f, (int) fuzz_range(r, 0, 80) - 40);
  float lo[MAX_COUNT], hi[MAX_COUNT], want_s[MAX_COUNT];
  int32_t want_z[MAX_COUNT];
  int invalid = count == 0 || scheme > 1 || range > 2, unsupported = 0;
  for (size_t i = 0; i < count; i++) {
    float a = decode_value(r, unit), b = decode_value(r, unit);
    if ((fuzz_u8(r) & 3) != 0 && a > b) {
      const float t = a;
      a = b;
      b = t;
    }
    lo[i] = a;
    hi[i] = b;
    if (!isfinite(a) || !isfinite(b) || a > b) invalid = 1;
  }
  for (size_t i = 0; !invalid && i < count; i++) {
    if (!ref_qparams(scheme, range, lo[i], hi[i], &want_s[i], &want_z[i])) unsupported = 1;
  }
  fuzz_describe("choose_qparams scheme %d range %d count %zu", scheme, range, count);
  struct fuzz_out s, z;
  fuzz_out_init(&s, r, (count + 1) * sizeof(float), 0);
  fuzz_out_init(&z, r, (count + 1) * sizeof(int32_t), 4);
  const gemmi8_status st =
      gemmi8_choose_qparams((gemmi8_qscheme) scheme, (gemmi8_qrange) range, count,
                            lo, hi, (float*) (void*) s.data,
                            (int32_t*) (void*) z.data);
  if (invalid || unsupported) {
    fuzz_expect_status(st, invalid ? FUZZ_BIT(gemmi8_status_invalid_parameter)
                                   : FUZZ_BIT(gemmi8_status_unsupported_parameter),
                       "choose_qparams (refused)");
    fuzz_out_check_untouched(&s, "scale");
    fuzz_out_check_untouched(&z, "zero_point");
  } else {
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "choose_qparams");
    fuzz_out_check_guards(&s, "scale");
    fuzz_out_check_guards(&z, "zero_point");
    fuzz_out_check_range(&s, count * sizeof(float), (count + 1) * sizeof(float), "scale past count");
    for (size_t i = 0; i < count; i++) {
      float gs;
      int32_t gz;
      memcpy(&gs, s.data + i * sizeof(float), sizeof(gs));
      memcpy(&gz, z.data + i * sizeof(int32_t), sizeof(gz));
      if (!same_float(gs, want_s[i]) || gz != want_z[i]) {
        fuzz_fail("range %zu [%a, %a]: scale %a zp %d, expected %a %d", i, (double) lo[i],
                  (double) hi[i], (double) gs, (int) gz, (double) want_s[i], (int) want_z[i]);
      }
    }
  }
  fuzz_out_free(&s);
  fuzz_out_free(&z);
}

static void run_arrays(struct fuzz_reader* r, int scheme, int range, int axis)
{
  const size_t rows = fuzz_range(r, 0, 40), cols = fuzz_range(r, 0, 70);
  const size_t n = rows * cols;
  const size_t count = axis == 0 ? 1 : axis == 1 ? rows : cols;
  int32_t qmin = 0, qmax = 0;
  bounds(range, &qmin, &qmax);
  int invalid = n == 0 || scheme > 1 || range > 2 || axis > 2;
  void *xb = NULL, *sb = NULL, *zb = NULL;
  const size_t params = count == 0 ? 1 : count;
  float* x = fuzz_exact(r, (n ? n : 1) * sizeof(float), 0, &xb);
  float* scale = fuzz_exact(r, params * sizeof(float), 0, &sb);
  int32_t* zp = fuzz_exact(r, params * sizeof(int32_t), 0, &zb);
  const float unit = ldexpf(1.0f, (int) fuzz_range(r, 0, 40) - 20);
  for (size_t i = 0; i < params; i++) {
    scale[i] = (fuzz_u8(r) & 7) == 0 ? decode_scale(r) : unit;
    const uint8_t zk = fuzz_u8(r);
    zp[i] = range == 2 && (zk & 15) != 0 ? 0
            : (zk & 15) == 0                ? fuzz_s32_edgy(r)
                                            : fuzz_range_s32(r, qmin, qmax);
    if (!invalid && (!positive_finite(scale[i]) || (range == 2 ? zp[i] != 0 : zp[i] < qmin || zp[i] > qmax))) {
      invalid = 1;
    }
  }
  for (size_t i = 0; i < n; i++) x[i] = (fuzz_random(r) & 3) == 0 ? fuzz_f32_special_any(r)
                                                                  : (float) ((int) (fuzz_random(r) % 1201) - 600) * 0.5f * unit;
  fuzz_describe("quantize_f32 scheme %d range %d axis %d rows %zu cols %zu", scheme, range,
                axis, rows, cols);
  struct fuzz_out y, back;
  fuzz_out_init(&y, r, n ? n : 1, fuzz_range(r, 0, 63));
  fuzz_out_init(&back, r, (n ? n : 1) * sizeof(float), 0);
  gemmi8_status st = gemmi8_quantize_f32((gemmi8_qscheme) scheme, (gemmi8_qrange) range,
                                         (gemmi8_qaxis) axis, rows, cols, x, scale, zp, y.data);
  if (invalid) {
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_invalid_parameter), "quantize_f32 (invalid)");
    fuzz_out_check_untouched(&y, "y");
  } else {
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "quantize_f32");
    fuzz_out_check_guards(&y, "y");
    for (size_t i = 0; i < n; i++) {
      const size_t p = axis == 0 ? 0 : axis == 1 ? i / cols : i % cols;
      const int32_t want = ref_quantize(scheme, range, x[i], scale[p], zp[p]);
      const int32_t got = range == 0 ? (int32_t) y.data[i] : (int32_t) (int8_t) y.data[i];
      if (got != want) {
        fuzz_fail("element %zu: x %a scale %a zp %d: %d, expected %d", i, (double) x[i],
                  (double) scale[p], (int) zp[p], (int) got, (int) want);
      }
    }
  }
  fuzz_describe_more(", dequantize");
  /* dequantize takes no scheme: invalid by the other rules alone */
  int other_invalid = n == 0 || range > 2 || axis > 2;
  for (size_t i = 0; !other_invalid && i < count; i++) {
    if (!positive_finite(scale[i]) || (range == 2 ? zp[i] != 0 : zp[i] < qmin || zp[i] > qmax)) {
      other_invalid = 1;
    }
  }
  st = gemmi8_dequantize_f32((gemmi8_qrange) range, (gemmi8_qaxis) axis, rows, cols, y.data,
                             scale, zp, (float*) (void*) back.data);
  if (other_invalid) {
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_invalid_parameter), "dequantize_f32 (invalid)");
    fuzz_out_check_untouched(&back, "x");
  } else {
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "dequantize_f32");
    fuzz_out_check_guards(&back, "x");
    for (size_t i = 0; i < n; i++) {
      const size_t p = axis == 0 ? 0 : axis == 1 ? i / cols : i % cols;
      const int32_t q = range == 0 ? (int32_t) y.data[i] : (int32_t) (int8_t) y.data[i];
      const float want = (float) (q - zp[p]) * scale[p];
      float got;
      memcpy(&got, back.data + i * sizeof(float), sizeof(got));
      if (!same_float(got, want)) {
        fuzz_fail("dequantized %zu: q %d: %a, expected %a", i, (int) q, (double) got, (double) want);
      }
    }
  }
  fuzz_out_free(&y);
  fuzz_out_free(&back);
  free(xb);
  free(sb);
  free(zb);
}

static void run_bias(struct fuzz_reader* r, int scheme)
{
  const size_t count = fuzz_range(r, 0, MAX_COUNT);
  const int per_channel = (int) fuzz_range(r, 0, 2);
  const float a = decode_scale(r);
  float bias[MAX_COUNT], w[MAX_COUNT];
  int invalid = count == 0 || scheme > 1 || per_channel > 1 || !positive_finite(a);
  for (size_t i = 0; i < MAX_COUNT; i++) {
    w[i] = decode_scale(r);
    bias[i] = decode_value(r, ldexpf(1.0f, (int) fuzz_range(r, 0, 60) - 30));
  }
  for (size_t i = 0; !invalid && i < count; i++) {
    const float wi = w[per_channel == 1 ? i : 0];
    const float s = a * wi;
    if (!isfinite(bias[i]) || !positive_finite(wi) || !positive_finite(s) ||
        (scheme == 1 && !isfinite(1.0f / s))) {
      invalid = 1;
    }
  }
  fuzz_describe("quantize_bias scheme %d count %zu per_channel %d a_scale %a", scheme, count,
                per_channel, (double) a);
  struct fuzz_out out;
  fuzz_out_init(&out, r, (count ? count : 1) * sizeof(int32_t), 0);
  const gemmi8_status st = gemmi8_quantize_bias((gemmi8_qscheme) scheme, count, bias, a, w,
                                                per_channel, (int32_t*) (void*) out.data);
  if (invalid) {
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_invalid_parameter), "quantize_bias (invalid)");
    fuzz_out_check_untouched(&out, "out");
  } else {
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "quantize_bias");
    fuzz_out_check_guards(&out, "out");
    for (size_t i = 0; i < count; i++) {
      int32_t got;
      memcpy(&got, out.data + i * sizeof(int32_t), sizeof(got));
      const int32_t want = ref_bias(scheme, bias[i], a, w[per_channel == 1 ? i : 0]);
      if (got != want) {
        fuzz_fail("bias %zu = %a: %d, expected %d", i, (double) bias[i], (int) got, (int) want);
      }
    }
  }
  fuzz_out_free(&out);
}

static void run_requant(struct fuzz_reader* r, int scheme)
{
  const size_t count = fuzz_range(r, 0, MAX_COUNT);
  const uint8_t outs = fuzz_u8(r); /* bit 0: scale, bit 1: multiplier, bit 2: shift */
  const float a = decode_scale(r), c = decode_scale(r);
  float w[MAX_COUNT];
  for (size_t i = 0; i < MAX_COUNT; i++) w[i] = decode_scale(r);
  int invalid = count == 0 || scheme > 1 || ((outs >> 1) & 1) != ((outs >> 2) & 1) ||
                (outs & 7) == 0 || !positive_finite(a) || !positive_finite(c);
  double f[MAX_COUNT];
  for (size_t i = 0; i < count; i++) {
    f[i] = scheme == 0 ? (double) (a * w[i] / c) : (double) a * (double) w[i] / (double) c;
    if (!positive_finite(w[i]) || !positive_finite((float) f[i])) invalid = 1;
  }
  fuzz_describe("requant_scales scheme %d count %zu outputs %d", scheme, count, outs & 7);
  struct fuzz_out s, m, sh;
  const size_t bytes = (count ? count : 1) * sizeof(int32_t);
  fuzz_out_init(&s, r, bytes, 0);
  fuzz_out_init(&m, r, bytes, 0);
  fuzz_out_init(&sh, r, bytes, 0);
  const gemmi8_status st = gemmi8_requant_scales(
      (gemmi8_qscheme) scheme, count, a, w, c, (outs & 1) ? (float*) (void*) s.data : NULL,
      (outs & 2) ? (int32_t*) (void*) m.data : NULL, (outs & 4) ? (int32_t*) (void*) sh.data : NULL);
  if (invalid) {
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_invalid_parameter), "requant_scales (invalid)");
  } else {
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "requant_scales");
  }
  if (invalid || !(outs & 1)) fuzz_out_check_untouched(&s, "scale");
  if (invalid || !(outs & 2)) fuzz_out_check_untouched(&m, "multiplier");
  if (invalid || !(outs & 4)) fuzz_out_check_untouched(&sh, "shift");
  for (size_t i = 0; !invalid && i < count; i++) {
    if (outs & 1) {
      float got;
      memcpy(&got, s.data + i * sizeof(float), sizeof(got));
      if (!same_float(got, (float) f[i])) fuzz_fail("scale %zu: %a, expected %a", i, (double) got, f[i]);
    }
    if (outs & 2) {
      int32_t gm, gs, wm, ws;
      memcpy(&gm, m.data + i * sizeof(int32_t), sizeof(gm));
      memcpy(&gs, sh.data + i * sizeof(int32_t), sizeof(gs));
      ref_quantize_multiplier(f[i], &wm, &ws);
      if (gm != wm || gs != ws) fuzz_fail("multiplier %zu: %d %d, expected %d %d", i, gm, gs, wm, ws);
    }
  }
  if (!invalid) {
    if (outs & 1) fuzz_out_check_guards(&s, "scale");
    if (outs & 2) fuzz_out_check_guards(&m, "multiplier");
    if (outs & 4) fuzz_out_check_guards(&sh, "shift");
  }
  fuzz_out_free(&s);
  fuzz_out_free(&m);
  fuzz_out_free(&sh);
}

static int cmp_float(const void* a, const void* b)
{
  /* -0.0 below 0.0, as the calibration counts them */
  const float x = *(const float*) a, y = *(const float*) b;
  if (x == 0.0f && y == 0.0f) return (signbit(y) != 0) - (signbit(x) != 0);
  return x < y ? -1 : x > y;
}

static void run_calibration(struct fuzz_reader* r)
{
  enum { max_values = 4096 };
  const size_t channels = fuzz_range(r, 1, 4);
  const size_t updates = fuzz_range(r, 1, 4);
  const int exponent = (int) fuzz_range(r, 0, 100) - 50;
  fuzz_describe("calibration channels %zu updates %zu unit 2^%d", channels, updates, exponent);
  float* all = malloc(max_values * sizeof(float));
  if (all == NULL) fuzz_fail("out of memory");
  size_t accepted = 0;
  gemmi8_calibration *cal = NULL, *one = NULL;
  if (gemmi8_calibration_create(channels, &cal) != gemmi8_status_success ||
      gemmi8_calibration_create(channels, &one) != gemmi8_status_success) {
    fuzz_fail("create failed");
  }
  for (size_t u = 0; u < updates; u++) {
    const size_t rows = fuzz_range(r, 0, max_values / 4 / 4);
    const size_t count = rows * channels + ((fuzz_u8(r) & 15) == 0 ? 1 : 0);
    void* block = NULL;
    float* x = fuzz_exact(r, (count ? count : 1) * sizeof(float), 0, &block);
    int finite_all = 1;
    /* magnitudes that grow from update to update (R doubles between them) */
    const float unit = ldexpf(1.0f, exponent + (int) u * (int) fuzz_range(r, 0, 12));
    for (size_t i = 0; i < count; i++) {
      x[i] = (fuzz_random(r) & 63) == 0 ? fuzz_f32_special_any(r)
                                       : (float) ((double) (int32_t) (fuzz_random(r) >> 32) * 0x1p-31) * unit;
      finite_all &= isfinite(x[i]) != 0;
    }
    const int invalid = count == 0 || count % channels != 0 || !finite_all;
    const gemmi8_status st = gemmi8_calibration_update(cal, count, x);
    fuzz_expect_status(st, invalid ? FUZZ_BIT(gemmi8_status_invalid_parameter)
                                   : FUZZ_BIT(gemmi8_status_success),
                       "calibration_update");
    if (!invalid) {
      memcpy(all + accepted, x, count * sizeof(float));
      accepted += count;
    }
    free(block);
  }
  struct fuzz_out lo, hi;
  fuzz_out_init(&lo, r, channels * sizeof(float), 0);
  fuzz_out_init(&hi, r, channels * sizeof(float), 0);
  if (accepted == 0) {
    fuzz_expect_status(gemmi8_calibration_range(cal, 100.0, (float*) (void*) lo.data,
                                                (float*) (void*) hi.data),
                       FUZZ_BIT(gemmi8_status_invalid_parameter), "calibration_range (no values)");
    fuzz_out_check_untouched(&lo, "min");
    fuzz_out_check_untouched(&hi, "max");
  } else {
    if (gemmi8_calibration_update(one, accepted, all) != gemmi8_status_success) {
      fuzz_fail("one update of every accepted value failed");
    }
    const size_t rows = accepted / channels;
    float* col = malloc(rows * sizeof(float));
    if (col == NULL) fuzz_fail("out of memory");
    static const double ps[] = {100.0, 99.99, 99.9, 99.0, 95.0, 50.0};
    for (size_t pi = 0; pi < sizeof(ps) / sizeof(ps[0]); pi++) {
      float l1[4], h1[4];
      const gemmi8_status st = gemmi8_calibration_range(cal, ps[pi], (float*) (void*) lo.data,
                                                        (float*) (void*) hi.data);
      fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "calibration_range");
      fuzz_expect_status(gemmi8_calibration_range(one, ps[pi], l1, h1),
                         FUZZ_BIT(gemmi8_status_success), "calibration_range (one update)");
      fuzz_out_check_guards(&lo, "min");
      fuzz_out_check_guards(&hi, "max");
      for (size_t c = 0; c < channels; c++) {
        float gl, gh;
        memcpy(&gl, lo.data + c * sizeof(float), sizeof(gl));
        memcpy(&gh, hi.data + c * sizeof(float), sizeof(gh));
        if (!same_float(gl, l1[c]) || !same_float(gh, h1[c])) {
          fuzz_fail("channel %zu at %g: [%a, %a] in updates, [%a, %a] in one", c, ps[pi],
                    (double) gl, (double) gh, (double) l1[c], (double) h1[c]);
        }
        for (size_t i = 0; i < rows; i++) col[i] = all[i * channels + c];
        qsort(col, rows, sizeof(float), cmp_float);
        size_t k = (size_t) ceil(ps[pi] * (double) rows / 100.0);
        k = k < 1 ? 1 : k > rows ? rows : k;
        const float amax = fmaxf(fabsf(col[0]), fabsf(col[rows - 1]));
        int e = 0;
        frexp((double) amax, &e);
        const double tol = amax == 0.0f ? 0.0 : fmax(ldexp(1.0, e - 10), 0x1p-149);
        const float ks = col[k - 1], kl = col[rows - k];
        if (gl < col[0] || gh > col[rows - 1] || gh < ks || (double) gh - ks > tol || gl > kl ||
            kl - (double) gl > tol ||
            (ps[pi] == 100.0 && (!same_float(gl, col[0]) || !same_float(gh, col[rows - 1])))) {
          fuzz_fail("channel %zu at %g: [%a, %a]; k-th [%a, %a], extremes [%a, %a]", c, ps[pi],
                    (double) gl, (double) gh, (double) kl, (double) ks, (double) col[0],
                    (double) col[rows - 1]);
        }
      }
    }
    free(col);
  }
  fuzz_out_free(&lo);
  fuzz_out_free(&hi);
  gemmi8_calibration_destroy(cal);
  gemmi8_calibration_destroy(one);
  free(all);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  struct fuzz_reader r;
  fuzz_reader_init(&r, data, size);
  const uint8_t head = fuzz_u8(&r);
  const uint8_t sel = fuzz_u8(&r);
  /* mostly known enums, sometimes 2..7 past them */
  const int scheme = (sel & 0x30) == 0x30 ? (int) (sel & 7) : (int) (sel & 1);
  const int range = (sel & 0xc0) == 0xc0 ? (int) ((sel >> 1) & 7) : (int) ((sel >> 1) % 3);
  const int axis = (sel & 0x08) && (head & 0x80) ? (int) ((head >> 4) & 7) : (int) ((sel >> 2) % 3);
  switch (head % 5) {
    case 0: run_qparams(&r, scheme, range); break;
    case 1: run_arrays(&r, scheme, range, axis); break;
    case 2: run_bias(&r, scheme); break;
    case 3: run_requant(&r, scheme); break;
    default: run_calibration(&r); break;
  }
  return 0;
}
