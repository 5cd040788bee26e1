/*
 * Binary GEMM and bit packing against the reference (+1/-1 integers multiplied,
 * never XOR/popcount):
 *  - sweeps of M, N and K (K a multiple of 64 and not, 1..4099), random garbage in
 *    every padding bit of A and B, B given N x K and K x N, strides, int32, float and
 *    packed-bit outputs with NULL, zero, negative and exact-zero-result scales and
 *    biases; bit output padding written as 0;
 *  - the bit-packing helpers (f32 with -0.0f, NaN, infinities, subnormals; s8; u8 with
 *    zero points 0..255), round trips between them and through a GEMM, and a bit
 *    output fed to the next binary layer;
 *  - weights packed under another kernel set.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"
#include "ref.h"
#include "test.h"

#define WORDS(k) GEMMI8_BIN_WORDS(k)

static const size_t bin_k_list[] = {
    1,   2,   3,   5,   7,   8,   15,  16,  17,  31,  32,  33,  63,  64,   65,   100,  127,  128,
    129, 191, 192, 193, 255, 256, 257, 300, 311, 511, 512, 513, 640, 1000, 1023, 1024, 1025, 1500};

static size_t word_pad(void)
{
  static const size_t pads[] = {0, 0, 1, 2, 3, 5};
  return T_PICK(pads);
}

static size_t words_bytes(size_t rows, size_t words, size_t stride)
{
  return ((rows - 1) * stride + words) * sizeof(uint64_t);
}

/* Random bits; the padding bits past `bits` in each row get garbage (random or all
 * ones: they must never count). */
static void fill_bits(uint64_t* p, size_t rows, size_t bits, size_t stride)
{
  size_t words = WORDS(bits);
  t_fill_random(p, words_bytes(rows, words, stride));
  if (bits % 64 != 0 && t_below(3) == 0)
    for (size_t r = 0; r < rows; r++) p[r * stride + words - 1] |= ~UINT64_C(0) << (bits % 64);
}

typedef struct bproblem {
  size_t m, n, k, a_stride, b_stride;
  int b_kn;
  uint64_t* a;
  uint64_t* b;
  int32_t* acc;
  void* packed;
  size_t packed_size;
  int packed_by_alloc;
  unsigned char* packed_copy;
  uint64_t* a_copy;
  char desc[200];
} bproblem;

static size_t b_words_total(const bproblem* p)
{
  return p->b_kn ? words_bytes(p->k, WORDS(p->n), p->b_stride)
                 : words_bytes(p->n, WORDS(p->k), p->b_stride);
}

static void bp_free(bproblem* p)
{
  free(p->a);
  free(p->b);
  free(p->acc);
  free(p->a_copy);
  free(p->packed_copy);
  if (p->packed_by_alloc)
    gemmi8_packed_free(p->packed);
  else
    free(p->packed);
  memset(p, 0, sizeof(*p));
}

/* Allocates and fills a random problem, computes the reference, packs. */
static int bp_make(bproblem* p, size_t m, size_t n, size_t k, const char* what)
{
  memset(p, 0, sizeof(*p));
  p->m = m;
  p->n = n;
  p->k = k;
  p->a_stride = WORDS(k) + word_pad();
  p->b_kn = (int) t_below(2);
  p->b_stride = (p->b_kn ? WORDS(n) : WORDS(k)) + word_pad();
  p->a = t_alloc(words_bytes(m, WORDS(k), p->a_stride));
  fill_bits(p->a, m, k, p->a_stride);
  p->b = t_alloc(b_words_total(p));
  if (p->b_kn)
    fill_bits(p->b, k, n, p->b_stride);
  else
    fill_bits(p->b, n, k, p->b_stride);
  p->acc = t_alloc(m * n * sizeof(int32_t));
  ref_bin_acc(m, n, k, p->a, p->a_stride, p->b, p->b_stride, p->b_kn, p->acc);
  p->packed_by_alloc = t_below(4) == 0;
  snprintf(p->desc, sizeof(p->desc),
           "%s bin M x N x K = %zu x %zu x %zu, a_stride %zu, B %s stride %zu, packed by %s", what,
           m, n, k, p->a_stride, p->b_kn ? "KxN" : "NxK", p->b_stride,
           p->packed_by_alloc ? "pack_alloc" : "pack");
  uint64_t* b = t_dup(p->b, b_words_total(p));
  uint32_t flags = p->b_kn ? GEMMI8_B_KN : GEMMI8_B_NK;
  size_t size = 0;
  gemmi8_status st = gemmi8_bin_pack_size(n, k, &size);
  int ok = 1;
  if (st != gemmi8_status_success || size == 0) {
    t_fail("gemmi8_bin_pack_size", "%s: status \"%s\", size %zu", p->desc, gemmi8_status_string(st),
           size);
    ok = 0;
  } else if (p->packed_by_alloc) {
    void* packed = NULL;
    st = gemmi8_bin_pack_alloc(n, k, b, p->b_stride, flags, &packed);
    if (st != gemmi8_status_success || packed == NULL ||
        (uintptr_t) packed % GEMMI8_PACK_ALIGNMENT != 0) {
      t_fail("gemmi8_bin_pack_alloc", "%s: status \"%s\", packed %p", p->desc,
             gemmi8_status_string(st), packed);
      if (st == gemmi8_status_success) gemmi8_packed_free(packed);
      ok = 0;
    } else {
      p->packed = packed;
      p->packed_size = size;
    }
  } else {
    p->packed = t_alloc_aligned(size);
    p->packed_size = size;
    t_fill_random(p->packed, size);
    st = gemmi8_bin_pack(n, k, b, p->b_stride, flags, p->packed, size);
    if (st != gemmi8_status_success) {
      t_fail("gemmi8_bin_pack", "%s: status \"%s\"", p->desc, gemmi8_status_string(st));
      ok = 0;
    }
  }
  t_fill_random(b, b_words_total(p)); /* the packed buffer is self-contained */
  free(b);
  if (ok) {
    p->packed_copy = t_dup(p->packed, p->packed_size);
    p->a_copy = t_dup(p->a, words_bytes(m, WORDS(k), p->a_stride));
  }
  return ok;
}

/* ---- scale and bias ---------------------------------------------------------------- */

typedef struct fold {
  float* scale; /* n values or NULL */
  float* bias;
  char desc[64];
} fold;

static void fold_make(fold* f, size_t n, size_t k)
{
  unsigned kind = t_below(4); /* 0 none, 1 scale, 2 bias, 3 both */
  f->scale = kind & 1 ? t_alloc(n * sizeof(float)) : NULL;
  f->bias = kind & 2 ? t_alloc(n * sizeof(float)) : NULL;
  static const float simple[] = {1.0f, -1.0f, 0.5f, -0.5f, 0.0f, -0.0f, 0.25f, -2.0f};
  double spread = 2.0 * sqrt((double) k) + 1.0;
  for (size_t j = 0; j < n; j++) {
    float s = 1.0f;
    if (f->scale != NULL) {
      unsigned c = t_below(8);
      if (c < 4)
        s = T_PICK(simple);
      else if (c < 7)
        s = (float) ((t_below(2) ? -1.0 : 1.0) * exp2(8.0 * t_unit() - 5.0));
      else
        s = t_below(2) ? FLT_MAX : -FLT_MIN;
      f->scale[j] = s;
    }
    if (f->bias != NULL) {
      unsigned c = t_below(6);
      if (fabs((double) s) > 1e10) s = 1.0f; /* keep the bias finite: no inf - inf */
      if (c == 0)
        f->bias[j] = t_below(2) ? 0.0f : -0.0f;
      else if (c <= 2) /* same parity as K: exact zero results with simple scales */
        f->bias[j] = s * (float) (2 * t_range(-(int64_t) spread / 2, (int64_t) spread / 2) +
                                  (int64_t) (k % 2));
      else if (c <= 4)
        f->bias[j] = (float) ((2.0 * t_unit() - 1.0) * spread * fabs((double) s));
      else
        f->bias[j] = (float) ((2.0 * t_unit() - 1.0) * 1e30);
    }
  }
  snprintf(f->desc, sizeof(f->desc), "scale %s, bias %s", f->scale ? "given" : "NULL",
           f->bias ? "given" : "NULL");
}

static void fold_free(fold* f)
{
  free(f->scale);
  free(f->bias);
}

/* ---- checks ---------------------------------------------------------------------------- */

static void verify(const bproblem* p, const char* func, const char* extra_desc, gemmi8_status st,
                   const t_out* out, const fold* f)
{
  if (st != gemmi8_status_success) {
    t_fail(func, "%s, %s: status \"%s\"", p->desc, extra_desc, gemmi8_status_string(st));
    return;
  }
  if (memcmp(p->a, p->a_copy, words_bytes(p->m, WORDS(p->k), p->a_stride)) != 0) {
    t_fail(func, "%s, %s: A was written", p->desc, extra_desc);
    return;
  }
  if (memcmp(p->packed, p->packed_copy, p->packed_size) != 0) {
    t_fail(func, "%s, %s: the packed weights were written", p->desc, extra_desc);
    return;
  }
  char msg[200];
  size_t row, col;
  if (t_out_same(out, msg, sizeof(msg), &row, &col)) {
    t_pass();
    return;
  }
  char extra[160] = "";
  if (row != SIZE_MAX) {
    size_t j = col;
    if (out->elem == T_U64) { /* first differing bit of the word */
      uint64_t got, want;
      memcpy(&got, (const unsigned char*) out->body + (row * out->stride + col) * 8, 8);
      memcpy(&want, t_out_want(out, row, col), 8);
      uint64_t diff = got ^ want;
      size_t bit = 0;
      while (!((diff >> bit) & 1u)) bit++;
      j = col * 64 + bit;
      if (j >= p->n)
        snprintf(extra, sizeof(extra), "; bit %zu is padding (n = %zu): must be 0", j, p->n);
    }
    if (j < p->n) {
      int32_t acc = p->acc[row * p->n + j];
      char sb[96] = "";
      if (f != NULL)
        snprintf(sb, sizeof(sb), ", scale %.9g, bias %.9g", f->scale ? (double) f->scale[j] : 1.0,
                 f->bias ? (double) f->bias[j] : 0.0);
      snprintf(extra, sizeof(extra), "; column %zu: acc %" PRId32 "%s", j, acc, sb);
    }
  }
  t_fail(func, "%s, %s: %s%s", p->desc, extra_desc, msg, extra);
}

static void check_s32(const bproblem* p)
{
  size_t c_stride = p->n + word_pad();
  t_out out;
  t_out_init(&out, T_S32, p->m, p->n, c_stride);
  for (size_t i = 0; i < p->m; i++)
    for (size_t j = 0; j < p->n; j++) memcpy(t_out_want(&out, i, j), &p->acc[i * p->n + j], 4);
  gemmi8_status st =
      gemmi8_bin_gemm_s32(p->m, p->n, p->k, p->a, p->a_stride, p->packed, out.body, c_stride);
  char d[48];
  snprintf(d, sizeof(d), "c_stride %zu", c_stride);
  verify(p, "gemmi8_bin_gemm_s32", d, st, &out, NULL);
  t_out_free(&out);
}

static void check_f32(const bproblem* p)
{
  size_t c_stride = p->n + word_pad();
  fold f;
  fold_make(&f, p->n, p->k);
  t_out out;
  t_out_init(&out, T_F32, p->m, p->n, c_stride);
  for (size_t i = 0; i < p->m; i++)
    for (size_t j = 0; j < p->n; j++) {
      float v = ref_bin_f32(p->acc[i * p->n + j], f.scale, f.bias, j);
      memcpy(t_out_want(&out, i, j), &v, 4);
    }
  gemmi8_status st = gemmi8_bin_gemm_f32(p->m, p->n, p->k, p->a, p->a_stride, p->packed, f.scale,
                                         f.bias, out.body, c_stride);
  char d[96];
  snprintf(d, sizeof(d), "c_stride %zu, %s", c_stride, f.desc);
  verify(p, "gemmi8_bin_gemm_f32", d, st, &out, &f);
  t_out_free(&out);
  fold_free(&f);
}

static void check_bits(const bproblem* p)
{
  size_t words = WORDS(p->n);
  size_t c_stride = words + word_pad();
  fold f;
  fold_make(&f, p->n, p->k);
  t_out out;
  t_out_init(&out, T_U64, p->m, words, c_stride);
  if (t_below(2)) { /* all ones before: padding bits must be cleared */
    memset(out.mem, 0xFF, out.total);
    memset(out.expect, 0xFF, out.total);
  }
  for (size_t i = 0; i < p->m; i++) {
    for (size_t w = 0; w < words; w++) {
      uint64_t v = 0;
      for (size_t b = 0; b < 64 && w * 64 + b < p->n; b++) {
        size_t j = w * 64 + b;
        if (ref_bin_f32(p->acc[i * p->n + j], f.scale, f.bias, j) < 0.0f) v |= UINT64_C(1) << b;
      }
      memcpy(t_out_want(&out, i, w), &v, 8);
    }
  }
  gemmi8_status st = gemmi8_bin_gemm_bits(p->m, p->n, p->k, p->a, p->a_stride, p->packed, f.scale,
                                          f.bias, out.body, c_stride);
  char d[96];
  snprintf(d, sizeof(d), "c_stride %zu words, %s", c_stride, f.desc);
  verify(p, "gemmi8_bin_gemm_bits", d, st, &out, &f);
  t_out_free(&out);
  fold_free(&f);
}

static void bin_case(size_t m, size_t n, size_t k, const char* what)
{
  bproblem p;
  if (bp_make(&p, m, n, k, what)) {
    check_s32(&p);
    check_f32(&p);
    check_bits(&p);
  }
  bp_free(&p);
}

static void sweeps(void)
{
  size_t step = t_quick ? 4 : 1;
  for (size_t m = 1; m <= 50; m += step)
    bin_case(m, 1 + t_below(70), T_PICK(bin_k_list), "M sweep");
  for (size_t n = 1; n <= 70; n += step)
    bin_case(1 + t_below(50), n, T_PICK(bin_k_list), "N sweep");
  for (size_t i = 0; i < T_COUNT(bin_k_list); i++)
    bin_case(1 + t_below(50), 1 + t_below(70), bin_k_list[i], "K sweep");
  size_t random_cases = t_quick ? 30 : 300;
  for (size_t i = 0; i < random_cases; i++)
    bin_case(1 + t_below(50), 1 + t_below(70), T_PICK(bin_k_list), "random shape");
  if (t_quick) {
    bin_case(97, 130, 193, "large shape");
  } else {
    bin_case(97, 130, 2304, "large shape");
    bin_case(200, 200, 4099, "large shape");
    bin_case(130, 97, 64, "large shape");
    bin_case(13, 200, 1025, "large shape");
  }
}

/* ---- bit-packing helpers ---------------------------------------------------------------- */

static float random_f32(void)
{
  static const float specials[] = {0.0f,         -0.0f,         INFINITY, -INFINITY,
                                   FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MIN,  -FLT_MIN,
                                   FLT_MAX,      -FLT_MAX,      1.0f,     -1.0f};
  switch (t_below(5)) {
    case 0:
      return T_PICK(specials);
    case 1: {
      float nan = NAN;
      return t_below(2) ? nan : -nan;
    }
    default:
      return (float) (4.0 * t_unit() - 2.0);
  }
}

typedef enum src_type { SRC_F32, SRC_S8, SRC_U8 } src_type;

static void pack_helper_case(src_type type, size_t rows, size_t k)
{
  size_t x_stride = k + word_pad() * 3;
  size_t words = WORDS(k);
  size_t out_stride = words + word_pad();
  size_t count = (rows - 1) * x_stride + k;
  t_out out;
  t_out_init(&out, T_U64, rows, words, out_stride);
  if (t_below(2)) {
    memset(out.mem, 0xFF, out.total);
    memset(out.expect, 0xFF, out.total);
  }
  uint64_t* want = (uint64_t*) t_out_want(&out, 0, 0);
  gemmi8_status st;
  const char* func;
  char desc[160];
  if (type == SRC_F32) {
    float* x = t_alloc(count * sizeof(float));
    for (size_t i = 0; i < count; i++) x[i] = random_f32();
    ref_bin_pack_f32(rows, k, x, x_stride, want, out_stride);
    func = "gemmi8_bin_pack_rows_f32";
    st = gemmi8_bin_pack_rows_f32(rows, k, x, x_stride, out.body, out_stride);
    free(x);
    snprintf(desc, sizeof(desc), "rows %zu, k %zu, x_stride %zu, out_stride %zu", rows, k, x_stride,
             out_stride);
  } else if (type == SRC_S8) {
    static const int8_t edges[] = {-128, -1, 0, 1, 127};
    int8_t* x = t_alloc(count);
    for (size_t i = 0; i < count; i++)
      x[i] = t_below(3) == 0 ? T_PICK(edges) : (int8_t) t_range(-128, 127);
    ref_bin_pack_s8(rows, k, x, x_stride, want, out_stride);
    func = "gemmi8_bin_pack_rows_s8";
    st = gemmi8_bin_pack_rows_s8(rows, k, x, x_stride, out.body, out_stride);
    free(x);
    snprintf(desc, sizeof(desc), "rows %zu, k %zu, x_stride %zu, out_stride %zu", rows, k, x_stride,
             out_stride);
  } else {
    static const uint8_t zps[] = {0, 1, 127, 128, 255};
    uint8_t zp = t_below(4) ? T_PICK(zps) : (uint8_t) t_below(256);
    uint8_t* x = t_alloc(count);
    for (size_t i = 0; i < count; i++) {
      int32_t v =
          t_below(3) == 0 ? (int32_t) zp + (int32_t) t_range(-1, 1) : (int32_t) t_below(256);
      x[i] = (uint8_t) (v < 0 ? 0 : v > 255 ? 255 : v);
    }
    ref_bin_pack_u8(rows, k, x, x_stride, zp, want, out_stride);
    func = "gemmi8_bin_pack_rows_u8";
    st = gemmi8_bin_pack_rows_u8(rows, k, x, x_stride, zp, out.body, out_stride);
    free(x);
    snprintf(desc, sizeof(desc), "rows %zu, k %zu, x_stride %zu, zero_point %u, out_stride %zu",
             rows, k, x_stride, (unsigned) zp, out_stride);
  }
  char msg[200];
  size_t r, c;
  if (st != gemmi8_status_success)
    t_fail(func, "%s: status \"%s\"", desc, gemmi8_status_string(st));
  else
    t_expect(t_out_same(&out, msg, sizeof(msg), &r, &c), func, "%s: %s", desc, msg);
  t_out_free(&out);
}

static void pack_helpers(void)
{
  static const size_t rows_list[] = {1, 2, 3, 5, 8, 13};
  for (int type = SRC_F32; type <= SRC_U8; type++) {
    for (size_t i = 0; i < T_COUNT(bin_k_list); i += t_quick ? 3 : 1)
      pack_helper_case((src_type) type, T_PICK(rows_list), bin_k_list[i]);
  }
}

/* +1/-1 values through all three helpers (identical bits, unpacked back to the
 * values) and through a GEMM computed from the values directly. */
static void round_trip(size_t m, size_t n, size_t k)
{
  size_t words = WORDS(k);
  int8_t* va = t_alloc(m * k);
  int8_t* vb = t_alloc(n * k);
  for (size_t i = 0; i < m * k; i++) va[i] = t_below(2) ? 1 : -1;
  for (size_t i = 0; i < n * k; i++) vb[i] = t_below(2) ? 1 : -1;
  float* f = t_alloc(m * k * sizeof(float));
  int8_t* s = t_alloc(m * k);
  uint8_t* u = t_alloc(m * k);
  uint8_t zp = (uint8_t) t_range(1, 255);
  for (size_t i = 0; i < m * k; i++) {
    float mag = (float) (0.001 + 100.0 * t_unit());
    static const float zeros[] = {0.0f, -0.0f};
    f[i] = va[i] > 0 ? (t_below(4) ? mag : T_PICK(zeros)) : -mag;
    s[i] = (int8_t) (va[i] > 0 ? t_range(0, 127) : t_range(-128, -1));
    u[i] = (uint8_t) (va[i] > 0 ? t_range(zp, 255) : t_range(0, zp - 1));
  }
  uint64_t* pf = t_alloc(m * words * 8);
  uint64_t* ps = t_alloc(m * words * 8);
  uint64_t* pu = t_alloc(m * words * 8);
  gemmi8_status st1 = gemmi8_bin_pack_rows_f32(m, k, f, k, pf, words);
  gemmi8_status st2 = gemmi8_bin_pack_rows_s8(m, k, s, k, ps, words);
  gemmi8_status st3 = gemmi8_bin_pack_rows_u8(m, k, u, k, zp, pu, words);
  int ok =
      st1 == gemmi8_status_success && st2 == gemmi8_status_success && st3 == gemmi8_status_success;
  int same = ok && memcmp(pf, ps, m * words * 8) == 0 && memcmp(pf, pu, m * words * 8) == 0;
  size_t bad = SIZE_MAX;
  for (size_t i = 0; same && i < m && bad == SIZE_MAX; i++)
    for (size_t j = 0; j < k; j++)
      if (ref_bin_value(pf + i * words, j) != va[i * k + j]) {
        bad = i * k + j;
        break;
      }
  t_expect(same && bad == SIZE_MAX, "gemmi8_bin_pack_rows_*",
           "round trip %zu x %zu (u8 zero point %u): statuses \"%s\" \"%s\" \"%s\", packings %s, "
           "first value not recovered %zu",
           m, k, (unsigned) zp, gemmi8_status_string(st1), gemmi8_status_string(st2),
           gemmi8_status_string(st3), same ? "agree" : "differ", bad);

  /* B from int8 values, then the GEMM against the values' own dot products. */
  uint64_t* pb = t_alloc(n * words * 8);
  int8_t* sb = t_alloc(n * k);
  for (size_t i = 0; i < n * k; i++) sb[i] = vb[i];
  gemmi8_status st = gemmi8_bin_pack_rows_s8(n, k, sb, k, pb, words);
  void* packed = NULL;
  if (st == gemmi8_status_success)
    st = gemmi8_bin_pack_alloc(n, k, pb, words, GEMMI8_B_NK, &packed);
  int32_t* c = t_alloc(m * n * sizeof(int32_t));
  if (st == gemmi8_status_success) st = gemmi8_bin_gemm_s32(m, n, k, pf, words, packed, c, n);
  size_t bad_i = SIZE_MAX, bad_j = 0;
  int32_t want = 0;
  for (size_t i = 0; st == gemmi8_status_success && i < m && bad_i == SIZE_MAX; i++)
    for (size_t j = 0; j < n; j++) {
      int32_t dot = 0;
      for (size_t q = 0; q < k; q++) dot += va[i * k + q] * vb[j * k + q];
      if (c[i * n + j] != dot) {
        bad_i = i;
        bad_j = j;
        want = dot;
        break;
      }
    }
  t_expect(
      st == gemmi8_status_success && bad_i == SIZE_MAX, "gemmi8_bin_gemm_s32",
      "helpers + pack + GEMM, M x N x K = %zu x %zu x %zu: status \"%s\", C[%zu][%zu] = %" PRId32
      ", expected %" PRId32,
      m, n, k, gemmi8_status_string(st), bad_i, bad_j, bad_i == SIZE_MAX ? 0 : c[bad_i * n + bad_j],
      want);
  gemmi8_packed_free(packed);
  free(c);
  free(pb);
  free(sb);
  free(pf);
  free(ps);
  free(pu);
  free(f);
  free(s);
  free(u);
  free(va);
  free(vb);
}

/* The bit output of one layer is the A of the next. */
static void chain(size_t m, size_t n1, size_t k, size_t n2)
{
  bproblem p;
  if (!bp_make(&p, m, n1, k, "layer 1 of 2,")) {
    bp_free(&p);
    return;
  }
  fold f;
  fold_make(&f, n1, k);
  size_t w1 = WORDS(n1);
  size_t stride = w1 + word_pad();
  uint64_t* bits = t_alloc(words_bytes(m, w1, stride));
  gemmi8_status st =
      gemmi8_bin_gemm_bits(m, n1, k, p.a, p.a_stride, p.packed, f.scale, f.bias, bits, stride);
  /* reference of layer 1 */
  uint64_t* want_bits = t_alloc(m * w1 * 8);
  memset(want_bits, 0, m * w1 * 8);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n1; j++)
      if (ref_bin_f32(p.acc[i * n1 + j], f.scale, f.bias, j) < 0.0f)
        want_bits[i * w1 + j / 64] |= UINT64_C(1) << (j % 64);
  uint64_t* b2 = t_alloc(n2 * w1 * 8);
  fill_bits(b2, n2, n1, w1);
  void* packed2 = NULL;
  if (st == gemmi8_status_success)
    st = gemmi8_bin_pack_alloc(n2, n1, b2, w1, GEMMI8_B_NK, &packed2);
  int32_t* c = t_alloc(m * n2 * sizeof(int32_t));
  int32_t* want = t_alloc(m * n2 * sizeof(int32_t));
  ref_bin_acc(m, n2, n1, want_bits, w1, b2, w1, 0, want);
  if (st == gemmi8_status_success)
    st = gemmi8_bin_gemm_s32(m, n2, n1, bits, stride, packed2, c, n2);
  t_expect(st == gemmi8_status_success && memcmp(c, want, m * n2 * sizeof(int32_t)) == 0,
           "gemmi8_bin_gemm_bits", "%s, %s, then a second layer of %zu channels: status \"%s\", %s",
           p.desc, f.desc, n2, gemmi8_status_string(st),
           st == gemmi8_status_success ? "results differ" : "failed");
  gemmi8_packed_free(packed2);
  free(c);
  free(want);
  free(b2);
  free(bits);
  free(want_bits);
  fold_free(&f);
  bp_free(&p);
}

/* Weights packed under another kernel set: rejected with C untouched, or exact. */
static void cross_isa(void)
{
  const char* here = t_isa();
  const char* const* isas = gemmi8_isa_compiled();
  for (size_t i = 0; isas != NULL && isas[i] != NULL; i++) {
    const char* other = isas[i];
    if (strcmp(other, here) == 0 || !gemmi8_isa_supported(other)) continue;
    gemmi8_isa_force(other);
    char what[64];
    snprintf(what, sizeof(what), "packed under %s, run under %s:", other, here);
    bproblem p;
    int ok = bp_make(&p, 9, 37, 130, what);
    t_isa_return();
    if (ok) {
      t_out out;
      t_out_init(&out, T_S32, p.m, p.n, p.n);
      gemmi8_status st =
          gemmi8_bin_gemm_s32(p.m, p.n, p.k, p.a, p.a_stride, p.packed, out.body, p.n);
      if (st == gemmi8_status_invalid_parameter) {
        t_expect(t_out_untouched(&out), "gemmi8_bin_gemm_s32", "%s: rejected, but C was written",
                 p.desc);
      } else if (st == gemmi8_status_success) {
        for (size_t r = 0; r < p.m; r++)
          for (size_t c = 0; c < p.n; c++) memcpy(t_out_want(&out, r, c), &p.acc[r * p.n + c], 4);
        char msg[200];
        size_t row, col;
        t_expect(t_out_same(&out, msg, sizeof(msg), &row, &col), "gemmi8_bin_gemm_s32", "%s: %s",
                 p.desc, msg);
      } else {
        t_fail("gemmi8_bin_gemm_s32", "%s: status \"%s\", expected success or invalid parameter",
               p.desc, gemmi8_status_string(st));
      }
      t_out_free(&out);
    }
    bp_free(&p);
  }
}

void test_bin(void)
{
  sweeps();
  pack_helpers();
  static const size_t rt[][3] = {{1, 1, 1}, {3, 5, 64}, {7, 9, 65}, {13, 17, 200}, {5, 70, 1000}};
  for (size_t i = 0; i < T_COUNT(rt); i++) round_trip(rt[i][0], rt[i][1], rt[i][2]);
  chain(11, 70, 300, 13);
  chain(5, 64, 64, 3);
  chain(17, 129, 1, 65);
  cross_isa();
}
