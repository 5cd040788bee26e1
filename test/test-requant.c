/*
 * Requantization:
 *  - test_reference_self: the reference's own steps on hand-computed values, so
 *    that a wrong reference cannot make wrong kernels pass;
 *  - test_quantize_multiplier: gemmi8_quantize_multiplier(s) against hand-computed
 *    values (rounding, the 2^31 carry, flush and saturation edges), against the
 *    reference on random scales, and its bad inputs;
 *  - test_requant, through the public GEMM with K = 1 (or 37), A equal to its zero
 *    point so every product of row 0 is 0, and bias = the wanted accumulator:
 *      fixed-point ties at every shift, ties of the doubling high multiply,
 *      saturating left shifts, INT32_MIN / INT32_MAX, multipliers 0 and 2^31 - 1,
 *      zero point + result beyond int32; fp32 ties, the int32-to-float and product
 *      roundings, results beyond int32 and infinite;
 *    every shift from -31 to 30 on random data; and every element within 1 of the
 *    float result round(acc * real_scale) + zero_point on random data.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qtest.h"
#include "ref.h"
#include "test.h"

#define Q31_HALF (INT32_C(1) << 30)

/* ---- the reference itself -------------------------------------------------------- */

static void self_int(const char* what, int32_t got, int32_t want)
{
  t_expect(got == want, "reference", "%s = %" PRId32 ", expected %" PRId32, what, got, want);
}

void test_reference_self(void)
{
  self_int("wrap(2^31)", ref_wrap_s32(INT64_C(2147483648)), INT32_MIN);
  self_int("wrap(-2^31 - 1)", ref_wrap_s32(INT64_C(-2147483649)), INT32_MAX);
  self_int("wrap(2^32 + 5)", ref_wrap_s32(INT64_C(4294967301)), 5);

  self_int("sls(2^30, 1)", ref_saturating_left_shift(Q31_HALF, 1), INT32_MAX);
  self_int("sls(-2^30, 1)", ref_saturating_left_shift(-Q31_HALF, 1), INT32_MIN);
  self_int("sls(-2^30 - 1, 1)", ref_saturating_left_shift(-Q31_HALF - 1, 1), INT32_MIN);
  self_int("sls(3, 30)", ref_saturating_left_shift(3, 30), INT32_MAX);
  self_int("sls(-1, 30)", ref_saturating_left_shift(-1, 30), -Q31_HALF);
  self_int("sls(5, 0)", ref_saturating_left_shift(5, 0), 5);

  /* SRDHM rounds 0.5 up and -0.5 toward zero (the nudge 1 - 2^30, then truncation). */
  self_int("srdhm(1, 2^30)", ref_srdhm(1, Q31_HALF), 1);
  self_int("srdhm(-1, 2^30)", ref_srdhm(-1, Q31_HALF), 0);
  self_int("srdhm(3, 2^30)", ref_srdhm(3, Q31_HALF), 2);
  self_int("srdhm(-3, 2^30)", ref_srdhm(-3, Q31_HALF), -1);
  self_int("srdhm(-4, 2^30)", ref_srdhm(-4, Q31_HALF), -2);
  self_int("srdhm(MAX, MAX)", ref_srdhm(INT32_MAX, INT32_MAX), 2147483646);
  self_int("srdhm(MIN, MAX)", ref_srdhm(INT32_MIN, INT32_MAX), -2147483647);
  self_int("srdhm(-2^30, MAX)", ref_srdhm(-Q31_HALF, INT32_MAX), -1073741823);
  self_int("srdhm(2^30, MAX)", ref_srdhm(Q31_HALF, INT32_MAX), 1073741824);
  self_int("srdhm(x, 0)", ref_srdhm(-123456, 0), 0);

  self_int("rdbpot(5, 1)", ref_rounding_divide_by_pot(5, 1), 3);
  self_int("rdbpot(-5, 1)", ref_rounding_divide_by_pot(-5, 1), -3);
  self_int("rdbpot(-6, 2)", ref_rounding_divide_by_pot(-6, 2), -2);
  self_int("rdbpot(6, 2)", ref_rounding_divide_by_pot(6, 2), 2);
  self_int("rdbpot(-5, 2)", ref_rounding_divide_by_pot(-5, 2), -1);
  self_int("rdbpot(-2, 2)", ref_rounding_divide_by_pot(-2, 2), -1);
  self_int("rdbpot(1, 2)", ref_rounding_divide_by_pot(1, 2), 0);
  self_int("rdbpot(MIN, 31)", ref_rounding_divide_by_pot(INT32_MIN, 31), -1);
  self_int("rdbpot(MAX, 31)", ref_rounding_divide_by_pot(INT32_MAX, 31), 1);
  self_int("rdbpot(2^30, 31)", ref_rounding_divide_by_pot(Q31_HALF, 31), 1);
  self_int("rdbpot(2^30 - 1, 31)", ref_rounding_divide_by_pot(Q31_HALF - 1, 31), 0);
  self_int("rdbpot(-2^30, 31)", ref_rounding_divide_by_pot(-Q31_HALF, 31), -1);

  self_int("requant(100, 2^30, 1)", ref_requantize_fixedpoint(100, Q31_HALF, 1), 100);
  self_int("requant(-1, 2^30, 0)", ref_requantize_fixedpoint(-1, Q31_HALF, 0), 0);
  self_int("requant(-3 * 2^5, 2^30, -5)", ref_requantize_fixedpoint(-96, Q31_HALF, -5), -2);
  self_int("requant(MIN, 2^30, -31)", ref_requantize_fixedpoint(INT32_MIN, Q31_HALF, -31), -1);
  self_int("requant(3, 200, 30)", ref_requantize_fixedpoint(3, 200, 30), 200);
  self_int("requant(1, 200, 30)", ref_requantize_fixedpoint(1, 200, 30), 100);
  /* r = 2^31 - 2 (and -(2^31 - 1)): r + zero_point wraps in int32, as in gemmlowp */
  self_int("out(MAX, MAX, 30, 127)",
           ref_output_fixedpoint(INT32_MAX, INT32_MAX, 30, 127, -128, 127), -128);
  self_int("out(MIN, MAX, 30, -128)",
           ref_output_fixedpoint(INT32_MIN, INT32_MAX, 30, -128, -128, 127), 127);
  self_int("out(MAX, MAX, 30, 1)",
           ref_output_fixedpoint(INT32_MAX, INT32_MAX, 30, 1, 0, 255), 255);
  self_int("out(MAX, MAX, 30, 2)",
           ref_output_fixedpoint(INT32_MAX, INT32_MAX, 30, 2, 0, 255), 0);

  self_int("fp32(5, 0.5)", (int32_t) ref_requantize_fp32(5, 0.5f), 2);
  self_int("fp32(3, 0.5)", (int32_t) ref_requantize_fp32(3, 0.5f), 2);
  self_int("fp32(-5, 0.5)", (int32_t) ref_requantize_fp32(-5, 0.5f), -2);
  self_int("fp32(-3, 0.5)", (int32_t) ref_requantize_fp32(-3, 0.5f), -2);
  self_int("fp32(7, 1/3)", (int32_t) ref_requantize_fp32(7, 1.0f / 3.0f), 2);
  self_int("fp32(41943041, 2^-24)", (int32_t) ref_requantize_fp32(41943041, 0x1p-24f), 2);
  self_int("fp32(16777217, 2^-25)", (int32_t) ref_requantize_fp32(16777217, 0x1p-25f), 0);
  self_int("fp32(50331647, 2^-25)", (int32_t) ref_requantize_fp32(50331647, 0x1p-25f), 2);
  self_int("out fp32(2, FLT_MAX)", ref_output_fp32(2, FLT_MAX, 0, 0, 255), 255);
  self_int("out fp32(-2, FLT_MAX)", ref_output_fp32(-2, FLT_MAX, 0, 0, 255), 0);
  self_int("out fp32(MAX, 2, 255)", ref_output_fp32(INT32_MAX, 2.0f, 255, 0, 255), 255);

  int32_t m = -1, s = -1;
  ref_quantize_multiplier(0.1, &m, &s);
  self_int("qm(0.1).multiplier", m, 1717986918);
  self_int("qm(0.1).shift", s, -3);
  ref_quantize_multiplier(0.5 + 0x1p-32, &m, &s);
  self_int("qm(0.5 + 2^-32).multiplier", m, Q31_HALF + 1);
  ref_quantize_multiplier(0x1p-32 * (1.0 - 0x1p-40), &m, &s);
  self_int("qm(2^-32 - tiny).shift", s, -31);
  t_expect(ref_quantize_multiplier(-1.0, &m, &s) != 0 && ref_quantize_multiplier(NAN, &m, &s) != 0,
           "reference", "ref_quantize_multiplier accepted -1 or NaN");

  uint64_t row[2] = {UINT64_C(0x8000000000000001), UINT64_C(0x1)};
  self_int("bin value 0", ref_bin_value(row, 0), -1);
  self_int("bin value 1", ref_bin_value(row, 1), 1);
  self_int("bin value 63", ref_bin_value(row, 63), -1);
  self_int("bin value 64", ref_bin_value(row, 64), -1);
  int32_t acc = 0;
  uint64_t b[2] = {UINT64_C(0x1), UINT64_C(0x0)};
  ref_bin_acc(1, 1, 65, row, 2, b, 2, 0, &acc);
  self_int("bin acc", acc, 65 - 2 * 2);
  float scale = -0.5f, bias = 1.5f;
  t_expect(ref_bin_f32(3, &scale, &bias, 0) == 0.0f, "reference", "bin f32(3, -0.5, 1.5)");
}

/* ---- gemmi8_quantize_multiplier --------------------------------------------------- */

typedef struct qm_case {
  double scale;
  int32_t multiplier, shift;
} qm_case;

static const qm_case qm_cases[] = {
    {1.0, Q31_HALF, 1},
    {0.5, Q31_HALF, 0},
    {0.25, Q31_HALF, -1},
    {0.75, 1610612736, 0},
    {3.0, 1610612736, 2},
    {0.1, 1717986918, -3},
    {1.0 / 3.0, 1431655765, -1},
    {2.0 / 3.0, 1431655765, 0},
    {0x1p-31, Q31_HALF, -30},
    {0x1p-32, Q31_HALF, -31},                   /* smallest shift */
    {0x1p-33, 0, 0},                            /* e = -32: flushed */
    {0x1.8p-33, 0, 0},                          /* 0.75 * 2^-32 */
    {0x1p-32 * (1.0 - 0x1p-40), Q31_HALF, -31}, /* carries into e = -31: not flushed */
    {0x1p29, Q31_HALF, 30},
    {0x1p30 - 0.5, INT32_MAX, 30},             /* largest exact */
    {0x1p30, INT32_MAX, 30},                   /* e = 31: saturated */
    {0x1p30 * (1.0 - 0x1p-40), INT32_MAX, 30}, /* carries into e = 31: saturated */
    {1e10, INT32_MAX, 30},
    {DBL_MAX, INT32_MAX, 30},
    {0.5 + 0x1p-32, Q31_HALF + 1, 0},   /* q * 2^31 = 2^30 + 0.5: away from zero */
    {0.5 + 0x1p-33, Q31_HALF, 0},       /* + 0.25 */
    {0.5 + 0x1.8p-32, Q31_HALF + 1, 0}, /* + 0.75 */
    {1.0 - 0x1p-33, Q31_HALF, 1},       /* rounds to 2^31: carry */
    {1.0 - 0x1p-32, Q31_HALF, 1},       /* 2^31 - 0.5: away, carry */
    {1.0 - 0x1p-31, INT32_MAX, 0},
    {0.0, 0, 0},
    {DBL_MIN, 0, 0},
    {DBL_TRUE_MIN, 0, 0},
    {1234.5678, 1294538165, 11},
};

static void qm_one(double scale, int32_t want_m, int32_t want_s, const char* source)
{
  int32_t m = INT32_MIN + 7, s = INT32_MIN + 7;
  gemmi8_status st = gemmi8_quantize_multiplier(scale, &m, &s);
  t_expect(st == gemmi8_status_success && m == want_m && s == want_s, "gemmi8_quantize_multiplier",
           "scale %a (%.17g): status \"%s\", multiplier %" PRId32 ", shift %" PRId32
           "; expected multiplier %" PRId32 ", shift %" PRId32 " (%s)",
           scale, scale, gemmi8_status_string(st), m, s, want_m, want_s, source);
}

static double random_scale(void)
{
  switch (t_below(3)) {
    case 0: /* any exponent the function handles, and beyond */
      return ldexp(0.5 + 0.5 * t_unit(), (int) t_range(-40, 40));
    case 1: { /* q * 2^31 exactly at a tie */
      int64_t j = t_range(INT64_C(1) << 30, (INT64_C(1) << 31) - 1);
      return ldexp((double) (2 * j + 1), (int) t_range(-64, -2));
    }
    default: /* near 1 */
      return 0.01 + 100.0 * t_unit();
  }
}

static void qm_bad(double scale, int null_multiplier, int null_shift)
{
  int32_t m = 0x5A5A5A5A, s = 0x3C3C3C3C;
  gemmi8_status st =
      gemmi8_quantize_multiplier(scale, null_multiplier ? NULL : &m, null_shift ? NULL : &s);
  t_expect(st == gemmi8_status_invalid_parameter && m == 0x5A5A5A5A && s == 0x3C3C3C3C,
           "gemmi8_quantize_multiplier",
           "scale %g, multiplier %s, shift %s: status \"%s\" (expected \"invalid parameter\"), "
           "outputs %s",
           scale, null_multiplier ? "NULL" : "given", null_shift ? "NULL" : "given",
           gemmi8_status_string(st), m == 0x5A5A5A5A && s == 0x3C3C3C3C ? "untouched" : "written");
}

void test_quantize_multiplier(void)
{
  for (size_t i = 0; i < T_COUNT(qm_cases); i++) {
    const qm_case* c = &qm_cases[i];
    qm_one(c->scale, c->multiplier, c->shift, "table");
    /* the reference must agree with the table too */
    int32_t m = -1, s = -1;
    ref_quantize_multiplier(c->scale, &m, &s);
    t_expect(m == c->multiplier && s == c->shift, "reference",
             "ref_quantize_multiplier(%a) = %" PRId32 ", %" PRId32 "; table %" PRId32 ", %" PRId32,
             c->scale, m, s, c->multiplier, c->shift);
  }

  /* Random scales against the reference, and the meaning of the result. */
  size_t count = t_quick ? 2000 : 20000;
  size_t bad = 0;
  double bad_scale = 0;
  int32_t bad_m = 0, bad_s = 0, want_m = 0, want_s = 0;
  for (size_t i = 0; i < count; i++) {
    double scale = random_scale();
    int32_t m = -1, s = -1, rm = -2, rs = -2;
    gemmi8_status st = gemmi8_quantize_multiplier(scale, &m, &s);
    ref_quantize_multiplier(scale, &rm, &rs);
    int ok = st == gemmi8_status_success && m == rm && s == rs;
    /* independent of the reference: within half a Q31 unit where representable */
    if (ok && scale >= 0x1p-32 && scale < 0x1p30 - 0.5) {
      double approx = ldexp((double) m, s - 31);
      ok = fabs(approx - scale) <= ldexp(0.5, s - 31);
    }
    if (!ok && bad++ == 0) {
      bad_scale = scale;
      bad_m = m;
      bad_s = s;
      want_m = rm;
      want_s = rs;
    }
  }
  t_expect(bad == 0, "gemmi8_quantize_multiplier",
           "%zu of %zu random scales wrong; first: scale %a (%.17g) gave %" PRId32 ", %" PRId32
           ", reference %" PRId32 ", %" PRId32,
           bad, count, bad_scale, bad_scale, bad_m, bad_s, want_m, want_s);

  /* Bad inputs: invalid_parameter and nothing written. */
  qm_bad(-1.0, 0, 0);
  qm_bad(-DBL_TRUE_MIN, 0, 0);
  qm_bad(-DBL_MAX, 0, 0);
  qm_bad(INFINITY, 0, 0);
  qm_bad(-INFINITY, 0, 0);
  qm_bad(NAN, 0, 0);
  qm_bad(-NAN, 0, 0);
  qm_bad(0.5, 1, 0);
  qm_bad(0.5, 0, 1);
  qm_bad(0.5, 1, 1);

  /* gemmi8_quantize_multipliers: the table at once, then bad inputs. */
  enum { n = (int) T_COUNT(qm_cases) };
  double scales[n];
  int32_t ms[n], ss[n];
  for (size_t i = 0; i < n; i++) {
    scales[i] = qm_cases[i].scale;
    ms[i] = ss[i] = -77;
  }
  gemmi8_status st = gemmi8_quantize_multipliers(n, scales, ms, ss);
  int same = st == gemmi8_status_success;
  size_t first = 0;
  for (size_t i = 0; same && i < n; i++) {
    same = ms[i] == qm_cases[i].multiplier && ss[i] == qm_cases[i].shift;
    first = i;
  }
  t_expect(same, "gemmi8_quantize_multipliers",
           "%d scales: status \"%s\"; first bad index %zu (scale %a): %" PRId32 ", %" PRId32, n,
           gemmi8_status_string(st), first, scales[first], ms[first], ss[first]);

  static const double bad_values[] = {-1.0, NAN, INFINITY, -INFINITY};
  for (size_t v = 0; v < T_COUNT(bad_values); v++) {
    for (size_t at = 0; at < n; at += n - 1) {
      double sc[n];
      memcpy(sc, scales, sizeof(sc));
      sc[at] = bad_values[v];
      int32_t m2[n], s2[n];
      memset(m2, 0x5A, sizeof(m2));
      memset(s2, 0x5A, sizeof(s2));
      int32_t m2_copy[n], s2_copy[n];
      memcpy(m2_copy, m2, sizeof(m2));
      memcpy(s2_copy, s2, sizeof(s2));
      st = gemmi8_quantize_multipliers(n, sc, m2, s2);
      t_expect(st == gemmi8_status_invalid_parameter && memcmp(m2, m2_copy, sizeof(m2)) == 0 &&
                   memcmp(s2, s2_copy, sizeof(s2)) == 0,
               "gemmi8_quantize_multipliers",
               "scale[%zu] = %g of %d: status \"%s\" (expected \"invalid parameter\"), outputs %s",
               at, bad_values[v], n, gemmi8_status_string(st),
               memcmp(m2, m2_copy, sizeof(m2)) == 0 && memcmp(s2, s2_copy, sizeof(s2)) == 0
                   ? "untouched"
                   : "written");
    }
  }
  int32_t m1 = 0x5A5A5A5A, s1 = 0x5A5A5A5A;
  double one = 0.5;
  st = gemmi8_quantize_multipliers(1, NULL, &m1, &s1);
  t_expect(st == gemmi8_status_invalid_parameter && m1 == 0x5A5A5A5A && s1 == 0x5A5A5A5A,
           "gemmi8_quantize_multipliers", "NULL scale: status \"%s\"", gemmi8_status_string(st));
  st = gemmi8_quantize_multipliers(1, &one, NULL, &s1);
  t_expect(st == gemmi8_status_invalid_parameter && s1 == 0x5A5A5A5A, "gemmi8_quantize_multipliers",
           "NULL multiplier: status \"%s\"", gemmi8_status_string(st));
  st = gemmi8_quantize_multipliers(1, &one, &m1, NULL);
  t_expect(st == gemmi8_status_invalid_parameter && m1 == 0x5A5A5A5A, "gemmi8_quantize_multipliers",
           "NULL shift: status \"%s\"", gemmi8_status_string(st));
  /* A count whose arrays cannot exist, with a bad first scale: rejected either way. */
  double negative = -1.0;
  st = gemmi8_quantize_multipliers(SIZE_MAX / 2, &negative, &m1, &s1);
  t_expect(st == gemmi8_status_invalid_parameter && m1 == 0x5A5A5A5A && s1 == 0x5A5A5A5A,
           "gemmi8_quantize_multipliers", "count SIZE_MAX / 2, scale[0] = -1: status \"%s\"",
           gemmi8_status_string(st));
  /* count 0: the header does not say; accept success or invalid_parameter, no write. */
  st = gemmi8_quantize_multipliers(0, &one, &m1, &s1);
  t_expect((st == gemmi8_status_success || st == gemmi8_status_invalid_parameter) &&
               m1 == 0x5A5A5A5A && s1 == 0x5A5A5A5A,
           "gemmi8_quantize_multipliers", "count 0: status \"%s\", outputs %s",
           gemmi8_status_string(st),
           m1 == 0x5A5A5A5A && s1 == 0x5A5A5A5A ? "untouched" : "written");
}

/* ---- GEMMs with chosen accumulators ----------------------------------------------- */

typedef struct out_config {
  int32_t zero_point, min, max;
} out_config;

static const out_config s8_configs[] = {
    {0, -128, 127}, {127, -128, 127}, {-128, -128, 127}, {-1, -100, 100}};
static const out_config u8_configs[] = {{128, 0, 255}, {0, 0, 255}, {255, 0, 255}, {1, 2, 254}};

/*
 * One GEMM problem whose row 0 accumulators are exactly acc[j] (K products of 0 and
 * bias = acc), row 1 acc[j] + 1 and row 2 acc[j] - 1 (wrapping), checked with the
 * requantization in r under every output configuration.
 */
static void run_chosen(int is_signed, size_t k, size_t n, const int32_t* acc, qrq* r,
                       const char* what)
{
  qproblem p;
  q_alloc(&p, is_signed, 3, n, k, k + 3, k, 0, n + 5);
  p.a_zp = is_signed ? -3 : 200;
  int32_t b_zp = is_signed ? 0 : 3;
  for (size_t j = 0; j < n; j++) {
    p.b_zp[j] = b_zp;
    p.bias[j] = acc[j];
    p.b[j * k] = (uint8_t) (b_zp + 1);
    for (size_t q = 1; q < k; q++) p.b[j * k + q] = (uint8_t) t_below(256);
  }
  for (size_t i = 0; i < 3; i++)
    for (size_t q = 0; q < k; q++) p.a[i * p.a_stride + q] = (uint8_t) p.a_zp;
  p.a[1 * p.a_stride] = (uint8_t) (p.a_zp + 1);
  p.a[2 * p.a_stride] = (uint8_t) (p.a_zp - 1);
  if (q_prepare(&p, what)) {
    const out_config* configs = is_signed ? s8_configs : u8_configs;
    size_t count = is_signed ? T_COUNT(s8_configs) : T_COUNT(u8_configs);
    for (size_t c = 0; c < count; c++) {
      r->rq.zero_point = configs[c].zero_point;
      r->rq.min = configs[c].min;
      r->rq.max = configs[c].max;
      qrq_describe(r);
      q_check_requant(&p, r);
    }
  }
  q_free(&p);
}

typedef struct fixed_case {
  int32_t acc, multiplier, shift;
} fixed_case;

typedef struct fixed_list {
  fixed_case* v;
  size_t count, capacity;
} fixed_list;

static void fixed_add(fixed_list* l, int64_t acc, int32_t multiplier, int32_t shift)
{
  if (acc < INT32_MIN || acc > INT32_MAX) return;
  if (l->count == l->capacity) {
    l->capacity = l->capacity ? 2 * l->capacity : 256;
    fixed_case* v = t_alloc(l->capacity * sizeof(fixed_case));
    if (l->count) memcpy(v, l->v, l->count * sizeof(fixed_case));
    free(l->v);
    l->v = v;
  }
  l->v[l->count++] = (fixed_case){(int32_t) acc, multiplier, shift};
}

static void fixed_point_traps(void)
{
  fixed_list l = {NULL, 0, 0};
  static const int64_t odd[] = {1, 3, 5, 11, 1001};
  /* Exact ties of the final rounding at every right shift. With multiplier 2^30
   * (one half) and an even acc, the high multiply is exact: acc / 2. */
  for (int e = 1; e <= 31; e++) {
    for (size_t j = 0; j < T_COUNT(odd); j++) {
      fixed_add(&l, odd[j] << e, Q31_HALF, -e);
      fixed_add(&l, -(odd[j] << e), Q31_HALF, -e);
      /* multiplier 2^31 - 1 keeps |x| <= 2^30 as it is */
      if ((odd[j] << (e - 1)) <= Q31_HALF) {
        fixed_add(&l, odd[j] << (e - 1), INT32_MAX, -e);
        fixed_add(&l, -(odd[j] << (e - 1)), INT32_MAX, -e);
      }
    }
  }
  fixed_add(&l, INT32_MIN, Q31_HALF, -31); /* -0.5 exactly: -1 */
  /* Ties of the doubling high multiply (0.5 goes up, -0.5 toward zero). */
  static const int64_t srdhm_accs[] = {1,    -1,        3,         -3,           5, -5, 255,
                                       -255, INT32_MAX, INT32_MIN, INT32_MIN + 1};
  for (size_t i = 0; i < T_COUNT(srdhm_accs); i++) {
    fixed_add(&l, srdhm_accs[i], Q31_HALF, 0);
    fixed_add(&l, srdhm_accs[i], Q31_HALF / 2, 0);
    fixed_add(&l, srdhm_accs[i], 3 * (Q31_HALF / 2), 0);
    fixed_add(&l, 2 * srdhm_accs[i], Q31_HALF / 2, 0);
  }
  /* Left shifts at and past the int32 limit; small multipliers keep the saturated
   * value visible in the output range. */
  static const int32_t left_mults[] = {0, 1, 3, 100, Q31_HALF, INT32_MAX};
  for (int s = 1; s <= 30; s++) {
    int64_t edge = INT64_C(1) << (31 - s);
    const int64_t accs[] = {edge,      -edge, edge - 1, -edge - 1, edge + 1, INT32_MAX,
                            INT32_MIN, 3,     -3,       1,         -1,       0};
    for (size_t a = 0; a < T_COUNT(accs); a++)
      for (size_t mi = 0; mi < T_COUNT(left_mults); mi++) fixed_add(&l, accs[a], left_mults[mi], s);
  }
  /* The extreme accumulators at every shift. */
  static const int32_t extreme_mults[] = {0, 1, Q31_HALF, INT32_MAX};
  for (int s = -31; s <= 30; s++)
    for (size_t mi = 0; mi < T_COUNT(extreme_mults); mi++) {
      fixed_add(&l, INT32_MIN, extreme_mults[mi], s);
      fixed_add(&l, INT32_MAX, extreme_mults[mi], s);
      fixed_add(&l, INT32_MIN + 1, extreme_mults[mi], s);
    }
  /* Random. */
  for (int i = 0; i < 500; i++)
    fixed_add(&l, t_range(INT32_MIN, INT32_MAX), (int32_t) t_range(0, INT32_MAX),
              (int32_t) t_range(-31, 30));

  /* Per channel, in chunks of 61 channels (not a multiple of any tile). */
  size_t chunk = 61;
  for (size_t start = 0; start < l.count; start += chunk) {
    size_t n = l.count - start < chunk ? l.count - start : chunk;
    int32_t* acc = t_alloc(n * sizeof(int32_t));
    for (int is_signed = 0; is_signed <= 1; is_signed++) {
      qrq r;
      qrq_alloc(&r, gemmi8_requant_fixedpoint, 1, n);
      for (size_t j = 0; j < n; j++) {
        acc[j] = l.v[start + j].acc;
        r.multiplier[j] = l.v[start + j].multiplier;
        r.shift[j] = l.v[start + j].shift;
      }
      size_t k = (start / chunk) % 3 == 2 ? 37 : 1;
      run_chosen(is_signed, k, n, acc, &r, "fixed-point traps,");
      qrq_free(&r);
    }
    free(acc);
  }
  free(l.v);

  /* Per tensor: at every shift, ties and extremes in one call. */
  for (int s = -31; s <= 30; s++) {
    int32_t acc[24];
    size_t n = 0;
    int e = s < 0 ? -s : 1;
    for (size_t j = 0; j < T_COUNT(odd) && n + 2 <= 20; j++) {
      int64_t v = odd[j] << e;
      if (v > INT32_MAX) continue;
      acc[n++] = (int32_t) v;
      acc[n++] = (int32_t) -v;
    }
    acc[n++] = INT32_MIN;
    acc[n++] = INT32_MAX;
    acc[n++] = 0;
    acc[n++] = (int32_t) t_range(INT32_MIN, INT32_MAX);
    static const int32_t mults[] = {Q31_HALF, INT32_MAX};
    for (size_t mi = 0; mi < T_COUNT(mults); mi++) {
      for (int is_signed = 0; is_signed <= 1; is_signed++) {
        qrq r;
        qrq_alloc(&r, gemmi8_requant_fixedpoint, 0, n);
        r.multiplier[0] = mults[mi];
        r.shift[0] = s;
        run_chosen(is_signed, 1, n, acc, &r, "fixed-point per-tensor ties,");
        qrq_free(&r);
      }
    }
  }
}

/* round half to even of a float value (the test's own copy, for trap searches) */
static double round_half_even_of_float(float f)
{
  return nearbyint((double) f); /* default rounding mode: to nearest, ties to even */
}

typedef struct fp32_case {
  int32_t acc;
  float scale;
} fp32_case;

/* A scale for which (float) acc * scale rounds to the tie `target` while the exact
 * product is on the side where rounding it directly would give another result. */
static int find_product_trap(int32_t acc, double target, float* out)
{
  float center = (float) (target / (double) acc);
  float up = center, down = center;
  for (int i = 0; i < 256; i++) {
    float tries[2] = {up, down};
    for (int t = 0; t < 2; t++) {
      float s = tries[t];
      double exact = (double) (float) acc * (double) s;
      if ((double) (float) exact == target && exact != target) {
        double direct = floor(exact + 0.5); /* exact is not a tie */
        if (direct != ref_requantize_fp32(acc, s)) {
          *out = s;
          return 1;
        }
      }
    }
    up = nextafterf(up, INFINITY);
    down = nextafterf(down, 0.0f);
  }
  return 0;
}

static void fp32_traps(void)
{
  fp32_case v[600];
  size_t n = 0;
  static const int32_t half_accs[] = {1, 3, 5, 7, 9, 255, 257};
  for (size_t i = 0; i < T_COUNT(half_accs); i++) {
    v[n++] = (fp32_case){half_accs[i], 0.5f};
    v[n++] = (fp32_case){-half_accs[i], 0.5f};
    v[n++] = (fp32_case){2 * half_accs[i], 0.25f};
    v[n++] = (fp32_case){-2 * half_accs[i], 0.25f};
  }
  for (int32_t j = 0; j < 6; j++) {
    v[n++] = (fp32_case){(2 * j + 1) << 9, 0x1p-10f};
    v[n++] = (fp32_case){-((2 * j + 1) << 9), 0x1p-10f};
    v[n++] = (fp32_case){(2 * j + 1) << 19, 0x1p-20f};
    v[n++] = (fp32_case){-((2 * j + 1) << 19), 0x1p-20f};
  }
  /* The int32-to-float conversion rounds first: e.g. (float) (2^24 + 1) = 2^24, times
   * 5 * 2^-25 is the tie 2.5 (to 2), where the exact product 2.50000015 gives 3.
   * (With a power-of-two scale both orders agree, so those catch nothing.) */
  size_t conversions = 0;
  static const int64_t big_accs[] = {16777217, 16777219,  33554434,   33554438,
                                     50331651, 100663301, 1073741825, 2147483647};
  for (size_t a = 0; a < T_COUNT(big_accs); a++)
    for (int odd = 3; odd <= 15; odd += 2)
      for (int e = 20; e <= 40; e++) {
        float s = (float) ldexp(odd, -e);
        int32_t acc = (int32_t) big_accs[a];
        double want = ref_requantize_fp32(acc, s);
        double exact_first = round_half_even_of_float((float) ((double) acc * (double) s));
        if (fabs(want) <= 200.0 && want != exact_first && n + 2 < 200) {
          v[n++] = (fp32_case){acc, s};
          v[n++] = (fp32_case){-acc, s};
          conversions++;
        }
      }
  t_expect(conversions >= 5, "test setup", "only %zu conversion-rounding traps found", conversions);
  /* The product rounds to a tie. */
  static const int32_t trap_accs[] = {3, 7, 11, 13, 100003, 12345679, -3, -7, -100003};
  static const double targets[] = {1.5, 2.5, 10.5, 99.5, -3.5, -0.5, 0.5};
  size_t found = 0;
  for (size_t a = 0; a < T_COUNT(trap_accs); a++)
    for (size_t t = 0; t < T_COUNT(targets); t++) {
      float s;
      if ((targets[t] < 0) == (trap_accs[a] < 0) &&
          find_product_trap(trap_accs[a], targets[t], &s)) {
        v[n++] = (fp32_case){trap_accs[a], s};
        found++;
      }
    }
  t_expect(found >= 5, "test setup", "only %zu product-rounding traps found", found);
  /* Results beyond int32, infinite, and tiny. */
  v[n++] = (fp32_case){INT32_MAX, 2.0f};
  v[n++] = (fp32_case){INT32_MIN, 2.0f};
  v[n++] = (fp32_case){1 << 30, 100.0f};
  v[n++] = (fp32_case){-(1 << 30), 100.0f};
  v[n++] = (fp32_case){INT32_MAX, 1e10f};
  v[n++] = (fp32_case){2, FLT_MAX};
  v[n++] = (fp32_case){-2, FLT_MAX};
  v[n++] = (fp32_case){1, FLT_MAX};
  v[n++] = (fp32_case){INT32_MIN, FLT_MAX};
  v[n++] = (fp32_case){INT32_MAX, FLT_TRUE_MIN};
  v[n++] = (fp32_case){INT32_MIN, FLT_TRUE_MIN};
  v[n++] = (fp32_case){INT32_MAX, 1e-10f};
  v[n++] = (fp32_case){0, FLT_MAX};
  /* Random. */
  while (n < 400) {
    int32_t acc =
        t_below(2) ? (int32_t) t_range(INT32_MIN, INT32_MAX) : (int32_t) t_range(-300, 300);
    float s = t_below(2) ? (float) exp2(t_unit() * 50.0 - 40.0) : (float) (0.3 + 3.0 * t_unit());
    v[n++] = (fp32_case){acc, s};
  }

  size_t chunk = 53;
  for (size_t start = 0; start < n; start += chunk) {
    size_t cn = n - start < chunk ? n - start : chunk;
    int32_t acc[64];
    for (int is_signed = 0; is_signed <= 1; is_signed++) {
      qrq r;
      qrq_alloc(&r, gemmi8_requant_fp32, 1, cn);
      for (size_t j = 0; j < cn; j++) {
        acc[j] = v[start + j].acc;
        r.scale[j] = v[start + j].scale;
      }
      run_chosen(is_signed, start % 2 ? 37 : 1, cn, acc, &r, "fp32 traps,");
      qrq_free(&r);
    }
  }
  /* Per tensor ties. */
  static const float tie_scales[] = {0.5f, 0.25f, 0x1p-10f};
  for (size_t si = 0; si < T_COUNT(tie_scales); si++) {
    int32_t acc[16];
    int32_t unit = (int32_t) (0.5f / tie_scales[si]);
    size_t cn = 0;
    for (int32_t j = 0; j < 7; j++) {
      acc[cn++] = (2 * j + 1) * unit;
      acc[cn++] = -(2 * j + 1) * unit;
    }
    acc[cn++] = INT32_MIN;
    acc[cn++] = INT32_MAX;
    for (int is_signed = 0; is_signed <= 1; is_signed++) {
      qrq r;
      qrq_alloc(&r, gemmi8_requant_fp32, 0, cn);
      r.scale[0] = tie_scales[si];
      run_chosen(is_signed, 1, cn, acc, &r, "fp32 per-tensor ties,");
      qrq_free(&r);
    }
  }
}

/* ---- every shift on random data ------------------------------------------------------ */

/* A byte of the type within 1 of v. */
static uint8_t near(int is_signed, int32_t v)
{
  int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  v += (int32_t) t_range(-1, 1);
  v = v < lo ? lo : v > hi ? hi : v;
  return (uint8_t) (v & 0xFF);
}

static void shift_sweep(void)
{
  for (int s = -31; s <= 30; s++) {
    for (int is_signed = 0; is_signed <= 1; is_signed++) {
      size_t n = 13, m = 5, k = 1 + t_below(20);
      qrq r;
      qrq_alloc(&r, gemmi8_requant_fixedpoint, 1, n);
      for (size_t j = 0; j < n; j++) {
        r.multiplier[j] = j == 0   ? 0
                          : j == 1 ? INT32_MAX
                          : j == 2 ? Q31_HALF
                                   : (int32_t) t_range(Q31_HALF, INT32_MAX);
        r.shift[j] = s;
      }
      /* Accumulators of about 150 / real scale, so outputs cover the range. */
      double real = ldexp((double) r.multiplier[3], s - 31);
      double target = 150.0 / real;
      if (target > 0x1p31 - 0x1p22) target = 0x1p31 - 0x1p22;
      qproblem p;
      q_alloc(&p, is_signed, m, n, k, k + 1, k, 0, n + 2);
      q_fill_random(&p);
      if (p.bias == NULL) p.bias = t_alloc(n * sizeof(int32_t));
      if (target < 0x1p17) {
        /* small accumulators: data next to the zero points */
        for (size_t i = 0; i < m; i++)
          for (size_t q = 0; q < k; q++) p.a[i * p.a_stride + q] = near(is_signed, p.a_zp);
        for (size_t j = 0; j < n; j++)
          for (size_t q = 0; q < k; q++) p.b[j * k + q] = near(is_signed, p.b_zp[j]);
      }
      for (size_t j = 0; j < n; j++)
        p.bias[j] = (int32_t) t_range(-(int64_t) target, (int64_t) target);
      char what[40];
      snprintf(what, sizeof(what), "shift %d,", s);
      if (q_prepare(&p, what)) {
        r.rq.zero_point = is_signed ? 0 : 128;
        r.rq.min = q_min(&p);
        r.rq.max = q_max(&p);
        qrq_describe(&r);
        q_check_requant(&p, &r);
        /* the same shift per tensor */
        qrq pt;
        qrq_alloc(&pt, gemmi8_requant_fixedpoint, 0, n);
        pt.multiplier[0] = r.multiplier[3];
        pt.shift[0] = s;
        pt.rq.zero_point = r.rq.zero_point;
        pt.rq.min = r.rq.min;
        pt.rq.max = r.rq.max;
        qrq_describe(&pt);
        q_check_requant(&p, &pt);
        qrq_free(&pt);
      }
      q_free(&p);
      qrq_free(&r);
    }
  }
}

/* ---- against a float reference ---------------------------------------------------------- */

static double round_half_away(double v)
{
  return v < 0 ? -floor(-v + 0.5) : floor(v + 0.5);
}

static void float_reference_case(int is_signed, gemmi8_requant_mode mode, int per_channel)
{
  static const size_t ks[] = {1, 3, 16, 17, 64, 129, 311, 1000};
  size_t m = 1 + t_below(40), n = 1 + t_below(70), k = T_PICK(ks);
  qproblem p;
  q_alloc(&p, is_signed, m, n, k, k + t_below(5), k, 0, n + t_below(5));
  q_fill_random(&p);
  if (p.bias != NULL) /* no wrap-around here: the float reference has none */
    for (size_t j = 0; j < n; j++) p.bias[j] = (int32_t) t_range(-(1 << 20), 1 << 20);
  if (!q_prepare(&p, "float reference,")) {
    q_free(&p);
    return;
  }
  size_t count = per_channel ? n : 1;
  double* real = t_alloc(count * sizeof(double));
  for (size_t c = 0; c < count; c++) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < m; i++)
      for (size_t j = per_channel ? c : 0; j < (per_channel ? c + 1 : n); j++) {
        int64_t v = p.acc[i * n + j];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
    double range = hi > lo ? (double) (hi - lo) : 1.0;
    real[c] =
        t_below(4) ? 255.0 / range * exp2(4.0 * t_unit() - 2.0) : exp2(42.0 * t_unit() - 34.0);
  }
  qrq r;
  qrq_alloc(&r, mode, per_channel, n);
  int ok = 1;
  if (mode == gemmi8_requant_fixedpoint) {
    gemmi8_status st = gemmi8_quantize_multipliers(count, real, r.multiplier, r.shift);
    ok = t_expect(st == gemmi8_status_success, "gemmi8_quantize_multipliers",
                  "%zu scales: status \"%s\"", count, gemmi8_status_string(st));
  } else {
    for (size_t c = 0; c < count; c++) r.scale[c] = (float) real[c];
  }
  r.rq.zero_point = (int32_t) t_range(q_min(&p), q_max(&p));
  r.rq.min = q_min(&p);
  r.rq.max = q_max(&p);
  qrq_describe(&r);
  if (ok) {
    uint8_t* c = t_alloc(m * p.c_stride);
    gemmi8_status st =
        is_signed ? gemmi8_qs8_gemm(m, n, k, (const int8_t*) p.a, p.a_stride, p.packed, &r.rq,
                                    (int8_t*) c, p.c_stride)
                  : gemmi8_qu8_gemm(m, n, k, p.a, p.a_stride, p.packed, &r.rq, c, p.c_stride);
    const char* func = is_signed ? "gemmi8_qs8_gemm" : "gemmi8_qu8_gemm";
    if (st != gemmi8_status_success) {
      t_fail(func, "%s, %s: status \"%s\"", p.desc, r.desc, gemmi8_status_string(st));
    } else {
      size_t bad_i = SIZE_MAX, bad_j = 0;
      double want = 0, got = 0;
      for (size_t i = 0; i < m && bad_i == SIZE_MAX; i++)
        for (size_t j = 0; j < n; j++) {
          double a = (double) p.acc[i * n + j] * real[per_channel ? j : 0];
          double e = round_half_away(a) + r.rq.zero_point;
          e = e < r.rq.min ? r.rq.min : e > r.rq.max ? r.rq.max : e;
          uint8_t byte = c[i * p.c_stride + j];
          double g = is_signed && byte >= 128 ? (double) byte - 256.0 : (double) byte;
          if (fabs(g - e) > 1.0) {
            bad_i = i;
            bad_j = j;
            want = e;
            got = g;
            break;
          }
        }
      t_expect(bad_i == SIZE_MAX, func,
               "%s, %s: C[%zu][%zu] = %.0f, more than 1 from the float result %.0f (acc %" PRId32
               ", real scale %.17g)",
               p.desc, r.desc, bad_i, bad_j, got, want,
               bad_i == SIZE_MAX ? 0 : p.acc[bad_i * n + bad_j], real[per_channel ? bad_j : 0]);
    }
    free(c);
  }
  qrq_free(&r);
  free(real);
  q_free(&p);
}

static void float_reference(void)
{
  size_t cases = t_quick ? 8 : 40;
  for (size_t i = 0; i < cases; i++) {
    int is_signed = (int) (i % 2);
    int per_channel = (int) (i / 2 % 2);
    float_reference_case(is_signed, gemmi8_requant_fixedpoint, per_channel);
    float_reference_case(is_signed, gemmi8_requant_fp32, per_channel);
  }
}

void test_requant(void)
{
  fixed_point_traps();
  fp32_traps();
  shift_sweep();
  float_reference();
}
