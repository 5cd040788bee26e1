/*
 * Rows quantized at run time, float output (gemmi8_qd8_* with int8 rows, gemmi8_qdu8_*
 * with uint8 rows) against a reference written from include/gemmi8.h: the exact
 * accumulator over A - a_zp in 64 bits, then (float) acc * a_scale, * b_scale, + bias,
 * the clamp, compared bit for bit, on every kernel set (the suite runs this group
 * once per set): shapes across and beyond the tiles, strides, K x N weights,
 * extreme bytes and zero points at the largest K, extreme and signed scales, -0.0,
 * clamps; threads (a shuffling parallel-for and gemmi8's pool); the linear layer
 * against the two calls it stands for; then bad input (nothing written).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

typedef struct qd_case {
  int u8;         /* 1: qdu8 (uint8 rows) */
  size_t m, n, k;
  size_t a_stride, c_stride, b_stride;
  int kn;         /* B is K x N */
  int extremes;   /* only the byte extremes, zero points at their ends */
  int scales;     /* 0 plain, 1 signed and extreme scales, 2 overflow to infinity */
  float out_min, out_max;
} qd_case;

static float pick_scale(int kind)
{
  if (kind == 0) return (float) (0.001 + 0.01 * t_unit());
  static const float special[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-40f, 3e30f, -2.5f, 1.0f,
                                  FLT_MIN, FLT_MAX};
  if (kind == 2) return t_below(2) ? 1e30f : -1e30f;
  return t_below(3) == 0 ? T_PICK(special) : (float) ((t_unit() - 0.5) * 0.1);
}

/* The reference of element (i, j). */
static float ref_element(const qd_case* tc, const uint8_t* a, const int8_t* b,
                         const float* a_scale, const int32_t* a_zp, const float* b_scale,
                         const float* bias, size_t i, size_t j)
{
  int64_t acc = 0;
  for (size_t kk = 0; kk < tc->k; kk++) {
    const int64_t av = tc->u8 ? (int64_t) a[i * tc->a_stride + kk]
                              : (int64_t) (int8_t) a[i * tc->a_stride + kk];
    const int64_t bv = tc->kn ? b[kk * tc->b_stride + j] : b[j * tc->b_stride + kk];
    acc += (av - a_zp[i]) * bv;
  }
  volatile float v = (float) (int32_t) acc;
  v = v * a_scale[i];
  v = v * b_scale[j];
  v = v + (bias != NULL ? bias[j] : 0.0f);
  float r = v;
  r = tc->out_min > r ? tc->out_min : r;
  r = tc->out_max < r ? tc->out_max : r;
  return r;
}

static void run_case(const qd_case* tc, const gemmi8_parallel* par, const char* what)
{
  const size_t m = tc->m, n = tc->n, k = tc->k;
  uint8_t* a = t_alloc(m * tc->a_stride);
  t_fill_random(a, m * tc->a_stride);
  const size_t b_rows = tc->kn ? k : n;
  int8_t* b = t_alloc(b_rows * tc->b_stride);
  t_fill_random(b, b_rows * tc->b_stride);
  float* a_scale = t_alloc(m * sizeof(float));
  int32_t* a_zp = t_alloc(m * sizeof(int32_t));
  float* b_scale = t_alloc(n * sizeof(float));
  float* bias = t_below(4) == 0 ? NULL : t_alloc(n * sizeof(float));
  const int32_t lo = tc->u8 ? 0 : -128, hi = tc->u8 ? 255 : 127;
  for (size_t i = 0; i < m; i++) {
    a_scale[i] = tc->scales ? pick_scale(tc->scales) : (float) (0.01 + 0.1 * t_unit());
    a_zp[i] = (int32_t) t_range(lo, hi);
    if (tc->extremes) {
      a_zp[i] = t_below(2) ? lo : hi;
      for (size_t kk = 0; kk < k; kk++) {
        /* A - zp at +-255: the row's opposite extreme */
        a[i * tc->a_stride + kk] = (uint8_t) (a_zp[i] == lo ? hi : lo);
      }
    }
  }
  if (tc->extremes) {
    for (size_t r = 0; r < b_rows; r++) {
      for (size_t c = 0; c < (tc->kn ? n : k); c++) {
        const size_t col = tc->kn ? c : r;
        b[r * tc->b_stride + c] = (int8_t) (col % 2 ? 127 : -128);
      }
    }
  }
  for (size_t j = 0; j < n; j++) {
    b_scale[j] = tc->scales ? pick_scale(tc->scales) : (float) (0.001 + 0.01 * t_unit());
    if (bias != NULL) bias[j] = t_below(8) == 0 ? -0.0f : (float) ((t_unit() - 0.5) * 4.0);
  }
  const uint32_t flags = tc->kn ? GEMMI8_B_KN : GEMMI8_B_NK;
  void* packed = NULL;
  gemmi8_status st = tc->u8 ? gemmi8_qdu8_pack_alloc(n, k, b, tc->b_stride, flags, b_scale, bias, &packed)
                            : gemmi8_qd8_pack_alloc(n, k, b, tc->b_stride, flags, b_scale, bias, &packed);
  const char* fn = tc->u8 ? "gemmi8_qdu8_gemm_f32" : "gemmi8_qd8_gemm_f32";
  if (!t_expect(st == gemmi8_status_success, fn, "pack: %s", gemmi8_status_string(st))) goto done;
  t_out out;
  t_out_init(&out, T_F32, m, n, tc->c_stride);
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      const float v = ref_element(tc, a, b, a_scale, a_zp, b_scale, bias, i, j);
      memcpy(t_out_want(&out, i, j), &v, sizeof(v));
    }
  }
  st = tc->u8 ? gemmi8_qdu8_gemm_f32_ex(m, n, k, a, tc->a_stride, a_scale, a_zp, packed,
                                        tc->out_min, tc->out_max, out.body, tc->c_stride, par)
              : gemmi8_qd8_gemm_f32_ex(m, n, k, (const int8_t*) a, tc->a_stride, a_scale, a_zp,
                                       packed, tc->out_min, tc->out_max, out.body, tc->c_stride,
                                       par);
  char msg[256];
  size_t row, col;
  if (t_expect(st == gemmi8_status_success, fn, "%s: %s", what, gemmi8_status_string(st))) {
    t_expect(t_out_same(&out, msg, sizeof(msg), &row, &col), fn,
             "%s m %zu n %zu k %zu a_stride %zu c_stride %zu%s%s scales %d clamp [%g, %g]: %s",
             what, m, n, k, tc->a_stride, tc->c_stride, tc->kn ? " KN" : "",
             tc->extremes ? " extremes" : "", tc->scales, (double) tc->out_min,
             (double) tc->out_max, msg);
  }
  t_out_free(&out);
done:
  gemmi8_packed_free(packed);
  free(a), free(b), free(a_scale), free(a_zp), free(b_scale), free(bias);
}

static qd_case random_case(int u8, size_t m, size_t n, size_t k)
{
  qd_case tc = {.u8 = u8, .m = m, .n = n, .k = k, .out_min = -INFINITY, .out_max = INFINITY};
  tc.a_stride = k + (t_below(2) ? 0 : t_below(9));
  tc.c_stride = n + (t_below(2) ? 0 : t_below(5));
  tc.kn = t_below(4) == 0;
  tc.b_stride = (tc.kn ? n : k) + t_below(3);
  if (t_below(3) == 0) {
    tc.out_min = (float) (-t_unit());
    tc.out_max = (float) t_unit();
  }
  return tc;
}

/* ---- a caller's parallel-for: tasks in reverse order, on the calling thread ------------ */

static void reverse_for(void* context, gemmi8_task_fn task, void* task_context, size_t count)
{
  (void) context;
  for (size_t i = count; i > 0; i--) task(task_context, i - 1);
}

/* ---- the linear layer --------------------------------------------------------------- */

/* q4: 4-bit weights (block q4 - 1: 0 qc4w, or 32..256), else 8-bit ones. */
static void check_linear(int u8, size_t m, size_t n, size_t k, const gemmi8_parallel* par,
                         size_t q4)
{
  float* x = t_alloc(m * k * sizeof(float));
  for (size_t i = 0; i < m * k; i++) x[i] = (float) ((t_unit() - 0.3) * 8.0);
  int8_t* b = t_alloc(n * k);
  t_fill_random(b, n * k);
  float* b_scale = t_alloc(n * sizeof(float));
  float* bias = t_alloc(n * sizeof(float));
  for (size_t j = 0; j < n; j++) {
    b_scale[j] = (float) (0.01 * t_unit());
    bias[j] = (float) (t_unit() - 0.5);
  }
  void* packed = NULL;
  const char* fn = u8 ? "gemmi8_qdu8_linear_f32" : "gemmi8_qd8_linear_f32";
  gemmi8_status st;
  if (q4 != 0) {
    /* the int8 weights' bytes as nibbles (n rows of (k + 1) / 2 of them), a scale a block */
    const size_t block = q4 - 1, blocks = block ? (k + block - 1) / block : 1;
    float* scales = t_alloc(n * blocks * sizeof(float));
    for (size_t s = 0; s < n * blocks; s++) scales[s] = (float) (0.02 * t_unit());
    const gemmi8_q4_weights w = {(const uint8_t*) b, (k + 1) / 2, block, scales, NULL, bias};
    st = gemmi8_qd8_pack_q4_alloc(n, k, &w, &packed);
    free(scales);
  } else {
    st = u8 ? gemmi8_qdu8_pack_alloc(n, k, b, k, 0, b_scale, bias, &packed)
            : gemmi8_qd8_pack_alloc(n, k, b, k, 0, b_scale, bias, &packed);
  }
  if (!t_expect(st == gemmi8_status_success, fn, "pack: %s", gemmi8_status_string(st))) goto done;
  if (q4 != 0) fn = u8 ? "gemmi8_qdu8_linear_f32 (4-bit)" : "gemmi8_qd8_linear_f32 (4-bit)";
  uint8_t* q = t_alloc(m * k);
  float* qs = t_alloc(m * sizeof(float));
  int32_t* qz = t_alloc(m * sizeof(int32_t));
  float* want = t_alloc(m * n * sizeof(float));
  float* got = t_alloc(m * n * sizeof(float));
  float* got2 = t_alloc(m * n * sizeof(float));
  st = u8 ? gemmi8_quantize_rows_u8(m, k, x, k, q, k, qs, qz)
          : gemmi8_quantize_rows_s8(m, k, x, k, q, k, qs, qz);
  if (st == gemmi8_status_success) {
    st = u8 ? gemmi8_qdu8_gemm_f32(m, n, k, q, k, qs, qz, packed, -1.0f, 1.0f, want, n)
            : gemmi8_qd8_gemm_f32(m, n, k, (const int8_t*) q, k, qs, qz, packed, -1.0f, 1.0f,
                                  want, n);
  }
  t_expect(st == gemmi8_status_success, fn, "the two calls: %s", gemmi8_status_string(st));
  size_t ws_size = 0;
  t_expect(gemmi8_qd8_linear_workspace_size(m, k, &ws_size) == gemmi8_status_success &&
               ws_size >= m * k + 8 * m,
           "gemmi8_qd8_linear_workspace_size", "m %zu k %zu: %zu", m, k, ws_size);
  void* ws = t_alloc_aligned(ws_size);
  st = u8 ? gemmi8_qdu8_linear_f32(m, n, k, x, k, packed, -1.0f, 1.0f, got, n, ws, ws_size, par)
          : gemmi8_qd8_linear_f32(m, n, k, x, k, packed, -1.0f, 1.0f, got, n, ws, ws_size, par);
  t_expect(st == gemmi8_status_success && memcmp(got, want, m * n * sizeof(float)) == 0, fn,
           "m %zu n %zu k %zu (workspace given): %s, bits %s the two calls'", m, n, k,
           gemmi8_status_string(st),
           memcmp(got, want, m * n * sizeof(float)) == 0 ? "equal to" : "differ from");
  st = u8 ? gemmi8_qdu8_linear_f32(m, n, k, x, k, packed, -1.0f, 1.0f, got2, n, NULL, 0, par)
          : gemmi8_qd8_linear_f32(m, n, k, x, k, packed, -1.0f, 1.0f, got2, n, NULL, 0, par);
  t_expect(st == gemmi8_status_success && memcmp(got2, want, m * n * sizeof(float)) == 0, fn,
           "m %zu n %zu k %zu (workspace allocated): %s", m, n, k, gemmi8_status_string(st));
  free(ws), free(q), free(qs), free(qz), free(want), free(got), free(got2);
done:
  gemmi8_packed_free(packed);
  free(x), free(b), free(b_scale), free(bias);
}

/* ---- bad input ---------------------------------------------------------------------- */

static void check_bad_inputs(int u8)
{
  const size_t m = 3, n = 5, k = 7;
  int8_t b[5 * 7];
  uint8_t a[3 * 7];
  float b_scale[5] = {1, 1, 1, 1, 1}, a_scale[3] = {1, 1, 1};
  int32_t zp[3] = {0, 0, 0};
  memset(b, 1, sizeof(b));
  memset(a, 2, sizeof(a));
  const char* fn = u8 ? "gemmi8_qdu8_gemm_f32" : "gemmi8_qd8_gemm_f32";
  gemmi8_status (*pack)(size_t, size_t, const int8_t*, size_t, uint32_t, const float*,
                        const float*, void*, size_t) = u8 ? gemmi8_qdu8_pack : gemmi8_qd8_pack;
  size_t size = 0;
  t_expect((u8 ? gemmi8_qdu8_pack_size : gemmi8_qd8_pack_size)(n, k, &size) == gemmi8_status_success,
           fn, "pack_size");
  void* packed = t_alloc_aligned(size);
  /* bad packing arguments write nothing */
  memset(packed, 0x5a, size);
  float nan_scale[5] = {1, 1, NAN, 1, 1}, inf_bias[5] = {0, 0, 0, INFINITY, 0};
  int bad = 0;
  bad |= pack(n, k, b, k, 0, nan_scale, NULL, packed, size) != gemmi8_status_invalid_parameter;
  bad |= pack(n, k, b, k, 0, b_scale, inf_bias, packed, size) != gemmi8_status_invalid_parameter;
  bad |= pack(n, k, b, k, 0, NULL, NULL, packed, size) != gemmi8_status_invalid_parameter;
  bad |= pack(n, k, NULL, k, 0, b_scale, NULL, packed, size) != gemmi8_status_invalid_parameter;
  bad |= pack(n, k, b, k - 1, 0, b_scale, NULL, packed, size) != gemmi8_status_invalid_parameter;
  bad |= pack(n, k, b, k, 4, b_scale, NULL, packed, size) != gemmi8_status_invalid_parameter;
  bad |= pack(n, k, b, k, 0, b_scale, NULL, packed, size - 1) != gemmi8_status_invalid_parameter;
  bad |= pack(0, k, b, k, 0, b_scale, NULL, packed, size) != gemmi8_status_invalid_parameter;
  bad |= pack(n, GEMMI8_QD8_MAX_K + 1, b, GEMMI8_QD8_MAX_K + 1, 0, b_scale, NULL, packed, size) !=
         gemmi8_status_unsupported_parameter;
  bad |= pack(SIZE_MAX, k, b, k, 0, b_scale, NULL, packed, size) == gemmi8_status_success;
  uint8_t first = ((uint8_t*) packed)[0];
  t_expect(!bad && first == 0x5a, fn, "bad packing arguments: statuses or a write");
  t_expect(pack(n, k, b, k, 0, b_scale, NULL, packed, size) == gemmi8_status_success, fn, "pack");
  float c[3 * 5];
  for (size_t i = 0; i < 15; i++) c[i] = 42.0f;
  const float nan_row[3] = {1, NAN, 1};
  const int32_t zp_low[3] = {0, u8 ? -1 : -129, 0}, zp_high[3] = {u8 ? 256 : 128, 0, 0};
#define CALL(m_, a_, as_, sc_, zp_, pk_, lo_, hi_, c_, cs_)                                    \
  (u8 ? gemmi8_qdu8_gemm_f32(m_, n, k, a_, as_, sc_, zp_, pk_, lo_, hi_, c_, cs_)              \
      : gemmi8_qd8_gemm_f32(m_, n, k, (const int8_t*) (a_), as_, sc_, zp_, pk_, lo_, hi_, c_, cs_))
  bad = 0;
  bad |= CALL(m, NULL, k, a_scale, zp, packed, -1.0f, 1.0f, c, n) != gemmi8_status_invalid_parameter;
  bad |= CALL(m, a, k, NULL, zp, packed, -1.0f, 1.0f, c, n) != gemmi8_status_invalid_parameter;
  bad |= CALL(m, a, k, a_scale, NULL, packed, -1.0f, 1.0f, c, n) != gemmi8_status_invalid_parameter;
  bad |= CALL(m, a, k, a_scale, zp, NULL, -1.0f, 1.0f, c, n) != gemmi8_status_invalid_parameter;
  bad |= CALL(m, a, k, a_scale, zp, packed, -1.0f, 1.0f, NULL, n) != gemmi8_status_invalid_parameter;
  bad |= CALL(0, a, k, a_scale, zp, packed, -1.0f, 1.0f, c, n) != gemmi8_status_invalid_parameter;
  bad |= CALL(m, a, k - 1, a_scale, zp, packed, -1.0f, 1.0f, c, n) != gemmi8_status_invalid_parameter;
  bad |= CALL(m, a, k, a_scale, zp, packed, -1.0f, 1.0f, c, n - 1) != gemmi8_status_invalid_parameter;
  bad |= CALL(m, a, k, nan_row, zp, packed, -1.0f, 1.0f, c, n) != gemmi8_status_invalid_parameter;
  bad |= CALL(m, a, k, a_scale, zp_low, packed, -1.0f, 1.0f, c, n) != gemmi8_status_invalid_parameter;
  bad |= CALL(m, a, k, a_scale, zp_high, packed, -1.0f, 1.0f, c, n) != gemmi8_status_invalid_parameter;
  bad |= CALL(m, a, k, a_scale, zp, packed, 1.0f, -1.0f, c, n) != gemmi8_status_invalid_parameter;
  bad |= CALL(m, a, k, a_scale, zp, packed, NAN, 1.0f, c, n) != gemmi8_status_invalid_parameter;
  bad |= CALL(m, a, k, a_scale, zp, packed, -1.0f, NAN, c, n) != gemmi8_status_invalid_parameter;
  bad |= CALL(SIZE_MAX, a, k, a_scale, zp, packed, -1.0f, 1.0f, c, n) != gemmi8_status_invalid_parameter;
  bad |= CALL(m, a, k, a_scale, zp, (const uint8_t*) packed + 1, -1.0f, 1.0f, c, n) !=
         gemmi8_status_invalid_parameter;
  /* weights packed for the other row type, or for the 8-bit GEMMs */
  void* other = NULL;
  (u8 ? gemmi8_qd8_pack_alloc : gemmi8_qdu8_pack_alloc)(n, k, b, k, 0, b_scale, NULL, &other);
  bad |= other == NULL ||
         CALL(m, a, k, a_scale, zp, other, -1.0f, 1.0f, c, n) != gemmi8_status_invalid_parameter;
  gemmi8_packed_free(other);
  other = NULL;
  gemmi8_qs8_pack_alloc(n, k, b, k, 0, 0, NULL, &other);
  bad |= other != NULL &&
         CALL(m, a, k, a_scale, zp, other, -1.0f, 1.0f, c, n) != gemmi8_status_invalid_parameter;
  gemmi8_packed_free(other);
  /* a damaged header */
  ((uint8_t*) packed)[16] ^= 1;
  bad |= CALL(m, a, k, a_scale, zp, packed, -1.0f, 1.0f, c, n) != gemmi8_status_invalid_parameter;
  ((uint8_t*) packed)[16] ^= 1;
  const gemmi8_parallel no_fn = {NULL, NULL, 2};
  bad |= (u8 ? gemmi8_qdu8_gemm_f32_ex(m, n, k, a, k, a_scale, zp, packed, -1.0f, 1.0f, c, n, &no_fn)
             : gemmi8_qd8_gemm_f32_ex(m, n, k, (const int8_t*) a, k, a_scale, zp, packed, -1.0f,
                                      1.0f, c, n, &no_fn)) != gemmi8_status_invalid_parameter;
  /* the linear layer: a non-finite input, a small or misaligned workspace */
  float x[3 * 7];
  for (size_t i = 0; i < 21; i++) x[i] = (float) i;
  gemmi8_status (*linear)(size_t, size_t, size_t, const float*, size_t, const void*, float, float,
                          float*, size_t, void*, size_t, const gemmi8_parallel*) =
      u8 ? gemmi8_qdu8_linear_f32 : gemmi8_qd8_linear_f32;
  size_t ws_size = 0;
  gemmi8_qd8_linear_workspace_size(m, k, &ws_size);
  uint8_t* ws = t_alloc_aligned(ws_size + 64);
  memset(ws, 0x77, ws_size + 64);
  bad |= linear(m, n, k, x, k, packed, -1.0f, 1.0f, c, n, ws, ws_size - 1, NULL) !=
         gemmi8_status_invalid_parameter;
  bad |= linear(m, n, k, x, k, packed, -1.0f, 1.0f, c, n, ws + 1, ws_size, NULL) !=
         gemmi8_status_invalid_parameter;
  bad |= linear(m, n, k, x, k - 1, packed, -1.0f, 1.0f, c, n, ws, ws_size, NULL) !=
         gemmi8_status_invalid_parameter;
  bad |= linear(m, n, k, x, k, packed, 1.0f, -1.0f, c, n, ws, ws_size, NULL) !=
         gemmi8_status_invalid_parameter;
  x[11] = NAN;
  bad |= linear(m, n, k, x, k, packed, -1.0f, 1.0f, c, n, ws, ws_size, NULL) !=
         gemmi8_status_invalid_parameter;
  x[11] = INFINITY;
  bad |= linear(m, n, k, x, k, packed, -1.0f, 1.0f, c, n, NULL, 0, NULL) !=
         gemmi8_status_invalid_parameter;
  int untouched = 1;
  for (size_t i = 0; i < 15; i++) untouched &= c[i] == 42.0f;
  for (size_t i = 0; i < ws_size + 64; i++) untouched &= ws[i] == 0x77;
  t_expect(!bad && untouched, fn, "bad arguments: a status was wrong (%d) or C or the workspace "
           "was written (%d)", bad, !untouched);
  t_expect(gemmi8_qd8_linear_workspace_size(0, k, &ws_size) == gemmi8_status_invalid_parameter &&
               gemmi8_qd8_linear_workspace_size(SIZE_MAX, SIZE_MAX, &ws_size) ==
                   gemmi8_status_invalid_parameter &&
               gemmi8_qd8_linear_workspace_size(m, k, NULL) == gemmi8_status_invalid_parameter,
           "gemmi8_qd8_linear_workspace_size", "bad arguments");
#undef CALL
  free(ws);
  free(packed);
}


/* ---- 4-bit weights ------------------------------------------------------------------- */

typedef struct q4_case {
  size_t m, n, k, block; /* block 0: qc4w */
  int zp;                /* 0: signed nibbles; 1: zero points; 2: zero point 8 everywhere */
  int extremes;
  int u8;                /* uint8 rows (the qdu8 GEMM) */
  size_t a_stride, c_stride, b_stride;
  float out_min, out_max;
} q4_case;

static void run_q4(const q4_case* tc, const gemmi8_parallel* par, const char* what)
{
  const size_t m = tc->m, n = tc->n, k = tc->k, blocks = tc->block ? (k + tc->block - 1) / tc->block : 1;
  int8_t* a = t_alloc(m * tc->a_stride);
  t_fill_random(a, m * tc->a_stride);
  uint8_t* b = t_alloc(n * tc->b_stride);
  t_fill_random(b, n * tc->b_stride);
  float* a_scale = t_alloc(m * sizeof(float));
  int32_t* a_zp = t_alloc(m * sizeof(int32_t));
  float* scale = t_alloc(n * blocks * sizeof(float));
  uint8_t* zp = tc->zp ? t_alloc(n * blocks) : NULL;
  float* bias = t_below(4) == 0 ? NULL : t_alloc(n * sizeof(float));
  const int32_t lo = tc->u8 ? 0 : -128, hi = tc->u8 ? 255 : 127;
  for (size_t i = 0; i < m; i++) {
    a_scale[i] = (float) (0.01 + 0.1 * t_unit());
    a_zp[i] = (int32_t) t_range(lo, hi);
    if (tc->extremes) {
      a_zp[i] = t_below(2) ? lo : hi;
      for (size_t kk = 0; kk < k; kk++) a[i * tc->a_stride + kk] = (int8_t) (a_zp[i] == lo ? hi : lo);
    }
  }
  for (size_t x = 0; x < n * blocks; x++) {
    scale[x] = t_below(16) == 0 ? (t_below(2) ? -0.0f : 0.0f) : (float) ((t_unit() - 0.3) * 0.02);
    if (zp != NULL) zp[x] = (uint8_t) (tc->zp == 2 ? 8 : t_below(16));
  }
  if (tc->extremes) {
    for (size_t j = 0; j < n; j++) {
      for (size_t x = 0; x < tc->b_stride; x++) b[j * tc->b_stride + x] = zp != NULL ? (j % 2 ? 0xFF : 0x00) : (j % 2 ? 0x77 : 0x88);
    }
    for (size_t x = 0; zp != NULL && x < n * blocks; x++) zp[x] = (uint8_t) (x / blocks % 2 ? 0 : 15);
  }
  for (size_t j = 0; bias != NULL && j < n; j++) bias[j] = t_below(8) == 0 ? -0.0f : (float) (t_unit() - 0.5);
  const gemmi8_q4_weights w = {b, tc->b_stride, tc->block, scale, zp, bias};
  void* packed = NULL;
  gemmi8_status st = gemmi8_qd8_pack_q4_alloc(n, k, &w, &packed);
  const char* fn = "gemmi8_qd8_gemm_f32 (4-bit)";
  if (!t_expect(st == gemmi8_status_success, fn, "pack: %s", gemmi8_status_string(st))) goto done;
  t_out out;
  t_out_init(&out, T_F32, m, n, tc->c_stride);
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      volatile float f = 0.0f;
      int64_t total = 0;
      for (size_t bl = 0; bl < blocks; bl++) {
        const size_t k0 = tc->block ? bl * tc->block : 0, k1 = tc->block ? k0 + tc->block : k;
        int64_t acc = 0;
        for (size_t kk = k0; kk < k1 && kk < k; kk++) {
          const uint8_t byte = b[j * tc->b_stride + kk / 2];
          const int nib = kk % 2 ? byte >> 4 : byte & 15;
          const int64_t wv = zp != NULL ? nib - zp[j * blocks + bl] : (nib >= 8 ? nib - 16 : nib);
          const int64_t av = tc->u8 ? (int64_t) (uint8_t) a[i * tc->a_stride + kk]
                                    : (int64_t) a[i * tc->a_stride + kk];
          acc += (av - a_zp[i]) * wv;
        }
        if (tc->block) {
          volatile float product = (float) (int32_t) acc * scale[j * blocks + bl];
          f = f + product;
        } else {
          total += acc;
        }
      }
      if (!tc->block) {
        volatile float product = (float) (int32_t) total * scale[j];
        f = f + product;
      }
      volatile float v = f * a_scale[i];
      v = v + (bias != NULL ? bias[j] : 0.0f);
      float r = v;
      r = tc->out_min > r ? tc->out_min : r;
      r = tc->out_max < r ? tc->out_max : r;
      memcpy(t_out_want(&out, i, j), &r, sizeof(r));
    }
  }
  if (tc->u8) {
    fn = "gemmi8_qdu8_gemm_f32 (4-bit)";
    st = gemmi8_qdu8_gemm_f32_ex(m, n, k, (const uint8_t*) a, tc->a_stride, a_scale, a_zp,
                                 packed, tc->out_min, tc->out_max, out.body, tc->c_stride, par);
  } else {
    st = gemmi8_qd8_gemm_f32_ex(m, n, k, a, tc->a_stride, a_scale, a_zp, packed, tc->out_min,
                                tc->out_max, out.body, tc->c_stride, par);
  }
  char msg[256];
  size_t row, col;
  if (t_expect(st == gemmi8_status_success, fn, "%s: %s", what, gemmi8_status_string(st))) {
    t_expect(t_out_same(&out, msg, sizeof(msg), &row, &col), fn,
             "%s m %zu n %zu k %zu block %zu zp %d%s a_stride %zu c_stride %zu: %s", what, m, n,
             k, tc->block, tc->zp, tc->extremes ? " extremes" : "", tc->a_stride, tc->c_stride,
             msg);
  }
  t_out_free(&out);
done:
  gemmi8_packed_free(packed);
  free(a), free(b), free(a_scale), free(a_zp), free(scale), free(zp), free(bias);
}

static q4_case random_q4(size_t m, size_t n, size_t k, size_t block)
{
  q4_case tc = {.m = m, .n = n, .k = k, .block = block, .out_min = -INFINITY, .out_max = INFINITY};
  tc.zp = (int) t_below(3);
  tc.u8 = (int) t_below(2);
  tc.a_stride = k + (t_below(2) ? 0 : t_below(9));
  tc.c_stride = n + (t_below(2) ? 0 : t_below(5));
  tc.b_stride = (k + 1) / 2 + t_below(3);
  if (t_below(3) == 0) tc.out_min = (float) -t_unit(), tc.out_max = (float) t_unit();
  return tc;
}

static void check_q4_bad(void)
{
  const size_t n = 5, k = 70;
  uint8_t b[5 * 35];
  float scale[5 * 3], bias[5] = {0};
  uint8_t zp[5 * 3];
  memset(b, 0x12, sizeof(b));
  for (size_t i = 0; i < 15; i++) scale[i] = 0.5f, zp[i] = 8;
  gemmi8_q4_weights w = {b, 35, 32, scale, zp, bias};
  size_t size = 0;
  const char* fn = "gemmi8_qd8_pack_q4";
  t_expect(gemmi8_qd8_pack_q4_size(n, k, 32, &size) == gemmi8_status_success, fn, "size");
  uint8_t* packed = t_alloc_aligned(size);
  memset(packed, 0x5a, size);
  int bad = 0;
  gemmi8_q4_weights x = w;
  x.block = 48;
  bad |= gemmi8_qd8_pack_q4(n, k, &x, packed, size) != gemmi8_status_invalid_parameter;
  x = w, x.b_stride = 34;
  bad |= gemmi8_qd8_pack_q4(n, k, &x, packed, size) != gemmi8_status_invalid_parameter;
  x = w, x.scale = NULL;
  bad |= gemmi8_qd8_pack_q4(n, k, &x, packed, size) != gemmi8_status_invalid_parameter;
  x = w, x.b = NULL;
  bad |= gemmi8_qd8_pack_q4(n, k, &x, packed, size) != gemmi8_status_invalid_parameter;
  bad |= gemmi8_qd8_pack_q4(n, k, NULL, packed, size) != gemmi8_status_invalid_parameter;
  bad |= gemmi8_qd8_pack_q4(n, k, &w, packed, size - 1) != gemmi8_status_invalid_parameter;
  bad |= gemmi8_qd8_pack_q4(n, k, &w, packed + 1, size) != gemmi8_status_invalid_parameter;
  bad |= gemmi8_qd8_pack_q4(0, k, &w, packed, size) != gemmi8_status_invalid_parameter;
  bad |= gemmi8_qd8_pack_q4(SIZE_MAX, k, &w, packed, size) == gemmi8_status_success;
  zp[7] = 16;
  bad |= gemmi8_qd8_pack_q4(n, k, &w, packed, size) != gemmi8_status_invalid_parameter;
  zp[7] = 8;
  scale[14] = NAN;
  bad |= gemmi8_qd8_pack_q4(n, k, &w, packed, size) != gemmi8_status_invalid_parameter;
  scale[14] = 0.5f;
  bias[4] = INFINITY;
  bad |= gemmi8_qd8_pack_q4(n, k, &w, packed, size) != gemmi8_status_invalid_parameter;
  bias[4] = 0.0f;
  int untouched = 1;
  for (size_t i = 0; i < size; i++) untouched &= packed[i] == 0x5a;
  t_expect(!bad && untouched, fn, "bad arguments: a status was wrong (%d) or a write (%d)", bad,
           !untouched);
  t_expect(gemmi8_qd8_pack_q4(n, k, &w, packed, size) == gemmi8_status_success, fn, "pack");
  /* the GEMMs of both row types: a damaged header, the wrong shape */
  int8_t a[2 * 70];
  memset(a, 3, sizeof(a));
  float a_scale[2] = {1, 1}, c[2 * 5];
  int32_t a_zp[2] = {0, 0};
  for (size_t i = 0; i < 10; i++) c[i] = 42.0f;
  bad = 0;
  bad |= gemmi8_qd8_gemm_f32(2, n, k + 1, a, 71, a_scale, a_zp, packed, -1, 1, c, n) !=
         gemmi8_status_invalid_parameter;
  bad |= gemmi8_qd8_gemm_f32(2, n + 1, k, a, k, a_scale, a_zp, packed, -1, 1, c, n + 1) !=
         gemmi8_status_invalid_parameter;
  bad |= gemmi8_qdu8_gemm_f32(2, n + 1, k, (const uint8_t*) a, k, a_scale, a_zp, packed, -1, 1,
                              c, n + 1) != gemmi8_status_invalid_parameter;
  a_zp[1] = 256; /* out of the uint8 rows' range */
  bad |= gemmi8_qdu8_gemm_f32(2, n, k, (const uint8_t*) a, k, a_scale, a_zp, packed, -1, 1, c, n) !=
         gemmi8_status_invalid_parameter;
  a_zp[1] = 0;
  for (size_t byte = 0; byte < 64; byte += 7) {
    packed[byte] ^= 0x10;
    bad |= gemmi8_qd8_gemm_f32(2, n, k, a, k, a_scale, a_zp, packed, -1, 1, c, n) !=
           gemmi8_status_invalid_parameter;
    bad |= gemmi8_qdu8_gemm_f32(2, n, k, (const uint8_t*) a, k, a_scale, a_zp, packed, -1, 1, c,
                                n) != gemmi8_status_invalid_parameter;
    packed[byte] ^= 0x10;
  }
  untouched = 1;
  for (size_t i = 0; i < 10; i++) untouched &= c[i] == 42.0f;
  t_expect(!bad && untouched, "gemmi8_qd8_gemm_f32 (4-bit)",
           "bad arguments: a status was wrong (%d) or C written (%d)", bad, !untouched);
  t_expect(gemmi8_qd8_gemm_f32(2, n, k, a, k, a_scale, a_zp, packed, -1, 1, c, n) ==
               gemmi8_status_success,
           "gemmi8_qd8_gemm_f32 (4-bit)", "the intact weights");
  free(packed);
}

static void test_q4(void)
{
  static const size_t blocks[] = {0, 32, 64, 128, 256};
  static const size_t ms[] = {1, 2, 3, 4, 5, 7, 9};
  static const size_t ns[] = {1, 15, 16, 17, 47, 48, 49, 96, 100};
  static const size_t ks[] = {1, 7, 8, 9, 31, 32, 33, 100, 256, 257, 300, 513, 1000};
  for (size_t bi = 0; bi < T_COUNT(blocks); bi++) {
    for (size_t mi = 0; mi < T_COUNT(ms); mi++) {
      for (size_t ni = 0; ni < T_COUNT(ns); ni += t_quick ? 2 : 1) {
        q4_case tc = random_q4(ms[mi], ns[ni], ks[(mi * 5 + ni * 3 + bi) % T_COUNT(ks)], blocks[bi]);
        run_q4(&tc, NULL, "shape");
      }
    }
    for (int u8 = 0; u8 < 2; u8++) {
      q4_case big = random_q4(2, 3, bi == 0 ? GEMMI8_QD8_MAX_K : 4096 + 13, blocks[bi]);
      big.extremes = 1;
      big.u8 = u8;
      run_q4(&big, NULL, "extremes");
    }
  }
  /* the linear layers over 4-bit weights, both row types (qc4w, blocks of 32) */
  const gemmi8_parallel rev = {reverse_for, NULL, 3};
  for (int u8 = 0; u8 < 2; u8++) {
    check_linear(u8, 3, 37, 70, NULL, 1);
    check_linear(u8, 8, 50, 300, &rev, 33);
  }
  /* uint8 rows copied past the stack's 4 KB: M x K over it */
  q4_case wide = random_q4(9, 20, 700, 64);
  wide.u8 = 1;
  run_q4(&wide, NULL, "uint8 rows, allocated copy");
  const gemmi8_parallel reverse = {reverse_for, NULL, 3};
  for (int r = 0; r < (t_quick ? 6 : 20); r++) {
    q4_case tc = random_q4(1 + t_below(40), 1 + t_below(200), 1 + t_below(900), T_PICK(blocks));
    run_q4(&tc, r % 2 ? &reverse : NULL, r % 2 ? "random, reverse parallel-for" : "random");
  }
  check_q4_bad();
}

void test_qd8(void)
{
  static const size_t ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17};
  static const size_t ns[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 64, 65, 96, 97, 145};
  static const size_t ks[] = {1, 2, 3, 4, 5, 8, 15, 16, 17, 31, 32, 33, 64, 65, 127, 300};
  for (int u8 = 0; u8 <= 1; u8++) {
    /* every M and N, K in turn; then random shapes */
    for (size_t mi = 0; mi < T_COUNT(ms); mi++) {
      for (size_t ni = 0; ni < T_COUNT(ns); ni += t_quick ? 3 : 1) {
        qd_case tc = random_case(u8, ms[mi], ns[ni], ks[(mi * 7 + ni) % T_COUNT(ks)]);
        run_case(&tc, NULL, "shape");
      }
    }
    for (int r = 0; r < (t_quick ? 10 : 40); r++) {
      qd_case tc = random_case(u8, 1 + t_below(40), 1 + t_below(200), 1 + t_below(700));
      tc.scales = (int) t_below(3);
      run_case(&tc, NULL, "random");
    }
    /* the largest products at the largest K: the accumulators at the int32 limit */
    qd_case big = random_case(u8, 2, 3, GEMMI8_QD8_MAX_K);
    big.extremes = 1;
    big.scales = 0;
    run_case(&big, NULL, "extremes at GEMMI8_QD8_MAX_K");
    /* packed A where the set packs it (13 rows, 4 blocks, deep) */
    qd_case deep = random_case(u8, 13, 200, 600);
    run_case(&deep, NULL, "deep");
    /* threads: the same bits */
    const gemmi8_parallel reverse = {reverse_for, NULL, 3};
    gemmi8_threadpool* pool = NULL;
    if (gemmi8_threadpool_create(2, NULL, &pool) == gemmi8_status_success) {
      gemmi8_parallel on_pool;
      gemmi8_threadpool_parallel(pool, &on_pool);
      for (int r = 0; r < 4; r++) {
        qd_case tc = random_case(u8, 1 + t_below(70), 1 + t_below(300), 1 + t_below(400));
        run_case(&tc, &reverse, "reverse parallel-for");
        run_case(&tc, &on_pool, "gemmi8's pool");
      }
      check_linear(u8, 5, 70, 130, &on_pool, 0);
      gemmi8_threadpool_destroy(pool);
    }
    check_linear(u8, 1, 33, 64, NULL, 0);
    check_linear(u8, 9, 100, 257, &reverse, 0);
    check_bad_inputs(u8);
  }
  if (t_type_built("q4")) {
    test_q4();
  } else {
    t_skip_type("q4", "qd8 4-bit weights");
  }
}
