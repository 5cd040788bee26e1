/*
 * gemmi8_quantize_rows_u8 / _s8 against a reference written from the formulas of
 * include/gemmi8.h (ONNX Runtime's DynamicQuantizeLinear, XNNPACK's qd8), on every
 * kernel set (the suite runs this group once per set): row lengths 1..300 and a few
 * long ones, strides, constant rows, one-signed rows, tiny and huge magnitudes,
 * subnormals, ties, -0.0; outputs in guarded buffers; then the bad-input contract
 * (nothing written).
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "test.h"

/* ---- inputs ------------------------------------------------------------------- */

enum kind {
  K_RANDOM,   /* uniform in a random interval around or beside 0, random magnitude */
  K_ZERO,     /* all +0.0 */
  K_NEGZERO,  /* -0.0 and +0.0 */
  K_CONST,    /* one non-zero value */
  K_NEGATIVE, /* only negative values */
  K_POSITIVE, /* only positive values */
  K_TINY,     /* subnormal and near FLT_MIN */
  K_HUGE,     /* near FLT_MAX, both signs: the range overflows */
  K_TIES,     /* values landing on n + 0.5 after scaling */
  K_EDGES,    /* mixtures of all the above */
  K_COUNT
};
static const char* const kind_names[K_COUNT] = { "random",   "zero", "-0.0", "constant", "negative",
                                                 "positive", "tiny", "huge", "ties",     "edges" };

static float pow2f(int e)
{
  float v = 1.0f;
  for (; e > 0; e--) v *= 2.0f;
  for (; e < 0; e++) v *= 0.5f;
  return v;
}

static float random_in(float lo, float hi)
{
  return lo + (float) t_unit() * (hi - lo);
}

static void fill_row(enum kind kind, size_t k, float* x)
{
  const float mag = pow2f((int) t_range(-30, 30));
  const float c = (t_below(2) ? -1.0f : 1.0f) * mag * random_in(0.5f, 2.0f);
  /* ties: a row spanning [0, 255 * s] or [-127.5 * s, 127.5 * s] has scale s (and inv
   * 1 / s) exactly for s a power of two, so multiples of s / 2 land on halves */
  const float s = pow2f((int) t_range(-8, 4));
  const int ties_signed = (int) t_below(2);
  for (size_t i = 0; i < k; i++) {
    float v;
    switch (kind) {
      case K_ZERO: v = 0.0f; break;
      case K_NEGZERO: v = t_below(2) ? -0.0f : 0.0f; break;
      case K_CONST: v = c; break;
      case K_NEGATIVE: v = -mag * random_in(0.001f, 1.0f); break;
      case K_POSITIVE: v = mag * random_in(0.001f, 1.0f); break;
      case K_TINY: {
        static const float tiny[] = { 1e-45f,  -1e-45f, 3e-45f,   -7e-44f, 1e-40f,
                                      -2e-39f, FLT_MIN, -FLT_MIN, 0.0f,    -0.0f };
        v = T_PICK(tiny);
        break;
      }
      case K_HUGE: {
        static const float huge[] = { FLT_MAX, -FLT_MAX, 3e38f, -2e38f, 1e38f, 1.0f, 0.0f };
        v = T_PICK(huge);
        break;
      }
      case K_TIES:
        if (i == 0) {
          v = ties_signed ? -127.5f * s : 0.0f;
        } else if (i == 1) {
          v = ties_signed ? 127.5f * s : 255.0f * s;
        } else {
          const int32_t h = ties_signed ? (int32_t) t_range(-255, 255) : (int32_t) t_range(0, 510);
          v = (float) h * s * 0.5f;
        }
        break;
      case K_EDGES: {
        static const float edges[] = { 0.0f,   -0.0f, 1.0f,   -1.0f,  0.5f,   -0.5f,
                                       1e-45f, 1e30f, -1e30f, 127.5f, 255.0f, -128.0f };
        v = t_below(3) ? T_PICK(edges) : random_in(-2.0f, 2.0f);
        break;
      }
      default: v = random_in(-1.0f, 1.0f) * mag + (t_below(4) ? 0.0f : c); break;
    }
    x[i] = v;
  }
}

/* ---- one case ------------------------------------------------------------------- */

static int check_case(int s8, size_t rows, size_t k, size_t x_stride, size_t y_stride,
                      enum kind kind)
{
  const char* func = s8 ? "gemmi8_quantize_rows_s8" : "gemmi8_quantize_rows_u8";
  float* x = t_alloc(((rows - 1) * x_stride + k) * sizeof(float));
  for (size_t r = 0; r < rows; r++) {
    fill_row(kind == K_EDGES && t_below(2) ? (enum kind) t_below(K_EDGES) : kind, k,
             x + r * x_stride);
  }
  t_out out;
  t_out_init(&out, s8 ? T_S8 : T_U8, rows, k, y_stride);
  float* scale = t_alloc((rows + 2) * sizeof(float));
  int32_t* zp = t_alloc((rows + 2) * sizeof(int32_t));
  float* want_scale = t_alloc(rows * sizeof(float));
  int32_t* want_zp = t_alloc(rows * sizeof(int32_t));
  memset(scale, 0xA5, (rows + 2) * sizeof(float));
  memset(zp, 0xA5, (rows + 2) * sizeof(int32_t));
  for (size_t r = 0; r < rows; r++) {
    void* y = t_out_want(&out, r, 0);
    if (s8) {
      ref_quantize_row_s8(k, x + r * x_stride, y, &want_scale[r], &want_zp[r]);
    } else {
      ref_quantize_row_u8(k, x + r * x_stride, y, &want_scale[r], &want_zp[r]);
    }
  }
  const gemmi8_status st =
      s8 ? gemmi8_quantize_rows_s8(rows, k, x, x_stride, out.body, y_stride, scale + 1, zp + 1)
         : gemmi8_quantize_rows_u8(rows, k, x, x_stride, out.body, y_stride, scale + 1, zp + 1);
  int ok = t_expect(st == gemmi8_status_success, func, "%s rows %zu k %zu: status %d",
                    kind_names[kind], rows, k, (int) st);
  if (ok) {
    char msg[256];
    size_t row, col;
    if (!t_out_same(&out, msg, sizeof(msg), &row, &col)) {
      t_fail(func, "%s rows %zu k %zu x_stride %zu y_stride %zu: %s (x = %a)", kind_names[kind],
             rows, k, x_stride, y_stride, msg,
             row < rows && col < k ? (double) x[row * x_stride + col] : 0.0);
      ok = 0;
    }
    for (size_t r = 0; ok && r < rows; r++) {
      if (memcmp(&scale[r + 1], &want_scale[r], sizeof(float)) != 0 || zp[r + 1] != want_zp[r]) {
        t_fail(func, "%s rows %zu k %zu row %zu: scale %a zero point %d, want %a %d",
               kind_names[kind], rows, k, r, (double) scale[r + 1], (int) zp[r + 1],
               (double) want_scale[r], (int) want_zp[r]);
        ok = 0;
      }
    }
    uint32_t guard[2], sentinel;
    memset(&sentinel, 0xA5, sizeof(sentinel));
    memcpy(&guard[0], &scale[0], 4);
    memcpy(&guard[1], &scale[rows + 1], 4);
    if (ok && (guard[0] != sentinel || guard[1] != sentinel || (uint32_t) zp[0] != sentinel ||
               (uint32_t) zp[rows + 1] != sentinel)) {
      t_fail(func, "rows %zu k %zu: wrote outside scale[] / zero_point[]", rows, k);
      ok = 0;
    }
    if (ok) t_pass();
  }
  free(want_zp);
  free(want_scale);
  free(zp);
  free(scale);
  t_out_free(&out);
  free(x);
  return ok;
}

/* ---- the bad-input contract ------------------------------------------------------ */

static gemmi8_status call(int s8, size_t rows, size_t k, const float* x, size_t x_stride, void* y,
                          size_t y_stride, float* scale, int32_t* zp)
{
  return s8 ? gemmi8_quantize_rows_s8(rows, k, x, x_stride, y, y_stride, scale, zp)
            : gemmi8_quantize_rows_u8(rows, k, x, x_stride, y, y_stride, scale, zp);
}

static void check_bad_inputs(int s8)
{
  const char* func = s8 ? "gemmi8_quantize_rows_s8" : "gemmi8_quantize_rows_u8";
  enum { R = 3, K = 40 };
  float x[R * K];
  for (size_t i = 0; i < R * K; i++) x[i] = (float) i - 50.0f;
  uint8_t y[R * K], y0[R * K];
  float scale[R];
  int32_t zp[R];
  memset(y0, 0x5A, sizeof(y0));
  const size_t big = (size_t) 1 << (sizeof(size_t) * 8 - 2);
  struct {
    const char* what;
    size_t rows, k, xs, ys;
    int null;      /* 1 x, 2 y, 3 scale, 4 zero_point */
    int bad_value; /* 1 NaN, 2 +inf, 3 -inf, 4 a NaN with payload, in the last row */
  } cases[] = {
    { "x NULL", R, K, K, K, 1, 0 },
    { "y NULL", R, K, K, K, 2, 0 },
    { "scale NULL", R, K, K, K, 3, 0 },
    { "zero_point NULL", R, K, K, K, 4, 0 },
    { "rows 0", 0, K, K, K, 0, 0 },
    { "k 0", R, 0, K, K, 0, 0 },
    { "x_stride < k", R, K, K - 1, K, 0, 0 },
    { "y_stride < k", R, K, K, K - 1, 0, 0 },
    { "x extent overflows", 2, K, big, K, 0, 0 },
    { "y extent overflows", 2, K, K, SIZE_MAX, 0, 0 },
    { "rows overflow", SIZE_MAX, K, K, K, 0, 0 },
    { "NaN", R, K, K, K, 0, 1 },
    { "+inf", R, K, K, K, 0, 2 },
    { "-inf", R, K, K, K, 0, 3 },
    { "NaN payload", R, K, K, K, 0, 4 },
  };
  for (size_t c = 0; c < T_COUNT(cases); c++) {
    float xs[R * K];
    memcpy(xs, x, sizeof(xs));
    if (cases[c].bad_value) {
      static const uint32_t bits[] = { 0x7fc00000u, 0x7f800000u, 0xff800000u, 0xffa00001u };
      memcpy(&xs[(R - 1) * K + K - 1 - (size_t) t_below(K)], &bits[cases[c].bad_value - 1], 4);
    }
    memcpy(y, y0, sizeof(y));
    memset(scale, 0x5A, sizeof(scale));
    memset(zp, 0x5A, sizeof(zp));
    const gemmi8_status st =
        call(s8, cases[c].rows, cases[c].k, cases[c].null == 1 ? NULL : xs, cases[c].xs,
             cases[c].null == 2 ? NULL : y, cases[c].ys, cases[c].null == 3 ? NULL : scale,
             cases[c].null == 4 ? NULL : zp);
    uint8_t p0[sizeof(scale) + sizeof(zp)], p1[sizeof(scale) + sizeof(zp)];
    memset(p0, 0x5A, sizeof(p0));
    memcpy(p1, scale, sizeof(scale));
    memcpy(p1 + sizeof(scale), zp, sizeof(zp));
    t_expect(st == gemmi8_status_invalid_parameter && memcmp(y, y0, sizeof(y)) == 0 &&
                 memcmp(p0, p1, sizeof(p0)) == 0,
             func, "%s: status %d (want invalid_parameter), outputs untouched %d", cases[c].what,
             (int) st, memcmp(y, y0, sizeof(y)) == 0 && memcmp(p0, p1, sizeof(p0)) == 0);
  }
}

/* Worked examples: the ONNX operator's own (its documentation: range [-3, 2], scale
 * 5 / 255, zero point 153), and a small row worked by hand for both. */
static void check_examples(void)
{
  const float onnx[6] = { 0.0f, 2.0f, -3.0f, -2.5f, 1.34f, 0.5f };
  const uint8_t onnx_y[6] = { 153, 255, 0, 26, 221, 179 };
  uint8_t u[6];
  float scale;
  int32_t zp;
  gemmi8_status st = gemmi8_quantize_rows_u8(1, 6, onnx, 6, u, 6, &scale, &zp);
  t_expect(st == gemmi8_status_success && memcmp(u, onnx_y, 6) == 0 && zp == 153 &&
               scale == 5.0f / 255.0f,
           "gemmi8_quantize_rows_u8", "ONNX's example: zero point %d scale %a, y %u %u %u %u %u %u",
           (int) zp, (double) scale, u[0], u[1], u[2], u[3], u[4], u[5]);
  /* {-1, 0, 1, 2}: u8 scale 3 / 255, zero point rne(85.0) = 85, y = 0 85 170 255;
   * s8 inv 85, dmin -85, dmax 170, (-213) + 297 > 0 so z = -128 + 85 = -43,
   * y = -128 -43 42 127, scale 1 / 85 */
  const float row[4] = { -1.0f, 0.0f, 1.0f, 2.0f };
  const uint8_t want_u[4] = { 0, 85, 170, 255 };
  const int8_t want_s[4] = { -128, -43, 42, 127 };
  st = gemmi8_quantize_rows_u8(1, 4, row, 4, u, 4, &scale, &zp);
  t_expect(st == gemmi8_status_success && memcmp(u, want_u, 4) == 0 && zp == 85 &&
               scale == 3.0f / 255.0f,
           "gemmi8_quantize_rows_u8", "{-1, 0, 1, 2}: zero point %d, y %u %u %u %u", (int) zp, u[0],
           u[1], u[2], u[3]);
  int8_t s[4];
  st = gemmi8_quantize_rows_s8(1, 4, row, 4, s, 4, &scale, &zp);
  t_expect(st == gemmi8_status_success && memcmp(s, want_s, 4) == 0 && zp == -43 &&
               scale == 1.0f / 85.0f,
           "gemmi8_quantize_rows_s8", "{-1, 0, 1, 2}: zero point %d, y %d %d %d %d", (int) zp, s[0],
           s[1], s[2], s[3]);
  /* a row of zeros: u8 scale 1, zero point 0, bytes 0; s8 scale 1, and as
   * (-128 + 0) + (127 + 0) > 0 is false, zero point 127 - 0 = 127, bytes 127 */
  const float zeros[3] = { 0.0f, -0.0f, 0.0f };
  st = gemmi8_quantize_rows_u8(1, 3, zeros, 3, u, 3, &scale, &zp);
  t_expect(st == gemmi8_status_success && u[0] == 0 && u[1] == 0 && u[2] == 0 && zp == 0 &&
               scale == 1.0f,
           "gemmi8_quantize_rows_u8", "zeros: zero point %d scale %a", (int) zp, (double) scale);
  st = gemmi8_quantize_rows_s8(1, 3, zeros, 3, s, 3, &scale, &zp);
  t_expect(st == gemmi8_status_success && s[0] == 127 && s[1] == 127 && s[2] == 127 && zp == 127 &&
               scale == 1.0f,
           "gemmi8_quantize_rows_s8", "zeros: zero point %d scale %a", (int) zp, (double) scale);
}

void test_quantize_rows(void)
{
  check_examples();
  for (int s8 = 0; s8 <= 1; s8++) {
    /* every length 1..300 (every fifth under GEMMI8_TEST_QUICK), each kind in turn */
    for (size_t k = 1; k <= 300; k += t_quick ? 5 : 1) {
      const size_t rows = 1 + t_below(3);
      const size_t xs = k + (t_below(2) ? 0 : t_below(7));
      const size_t ys = k + (t_below(2) ? 0 : t_below(9));
      check_case(s8, rows, k, xs, ys, (enum kind)(k % K_COUNT));
    }
    /* every kind at lengths around the vector widths and a few long rows */
    static const size_t lengths[] = { 1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1000, 4099 };
    for (int kind = 0; kind < K_COUNT; kind++) {
      for (size_t i = 0; i < T_COUNT(lengths); i++) {
        check_case(s8, 1 + t_below(4), lengths[i], lengths[i] + t_below(3), lengths[i],
                   (enum kind) kind);
      }
    }
    check_case(s8, 2, t_quick ? 20011 : 65543, t_quick ? 20011 : 65543, t_quick ? 20011 : 65543,
               K_RANDOM);
    check_case(s8, 64, 384, 400, 384, K_RANDOM);
    check_bad_inputs(s8);
  }
}
