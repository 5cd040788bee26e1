/*
 * Regression tests of the defects a hostile caller found, one function per defect,
 * named after it (the check names carry the same words):
 *   1. bin_pack_rows_extent_overflow     row extent of the bit-packing helpers
 *   2. bin_words_and_block_count_wrap    GEMMI8_BIN_WORDS and block counts near SIZE_MAX
 *   3. store_past_m_huge_stride          no row pointer formed past M (huge strides)
 *   4. packed_header_damage              every header byte damaged; fields resealed
 *   5. pack_alloc_validates_first        a bad stride is invalid before any allocation
 *   6. pack_size_exact                   the packed size limit is the size_t limit
 *   7. zero_point_add_wraps              gemmlowp's wrapping int32 zero-point addition
 *   8. isa_names_and_env                 gemmi8_isa_available / _compiled / _env_status
 *   9. qd8_pack_tail_padding             qd8 / qdu8 packed bytes depend on the weights alone
 *  10. qd8_linear_range_overflow         a finite row whose scale would be infinite
 *  11. workspace_size_wrapped_write      a refused workspace size is not written
 *  12. qhelp_sizes_near_size_max         the quantization helpers' counts and extents
 * The qd8 / qdu8 entry points (rows quantized at run time) are in 3 to 6 as well, and so
 * are the 4-bit weights (gemmi8_qd8_pack_q4*, the qd8 GEMM and linear layer over them).
 * Every call that must fail is checked for its status and for having written nothing.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"
#include "packed.h"
#include "test.h"

#define INVALID gemmi8_status_invalid_parameter
#define UNSUPPORTED gemmi8_status_unsupported_parameter
#define SUCCESS gemmi8_status_success

static const char* sname(gemmi8_status s) { return gemmi8_status_string(s); }

/* A small output buffer with a random image: the library must leave it as it was. */
typedef struct canary {
  _Alignas(16) unsigned char bytes[1024]; /* also C of int32 and float elements */
  unsigned char copy[1024];
} canary;

static void canary_init(canary* c)
{
  t_fill_random(c->bytes, sizeof(c->bytes));
  memcpy(c->copy, c->bytes, sizeof(c->bytes));
}

static int canary_intact(const canary* c) { return memcmp(c->bytes, c->copy, sizeof(c->bytes)) == 0; }

/* got must be want and the canary intact. */
static void expect_refused(const char* defect, const char* what, gemmi8_status got,
                           gemmi8_status want, const canary* c)
{
  const int intact = c == NULL || canary_intact(c);
  t_expect(got == want && intact, defect, "%s: status \"%s\", expected \"%s\"%s", what, sname(got),
           sname(want), intact ? "" : "; output written");
}

/* ---- 1 --------------------------------------------------------------------------------- */

static void bin_pack_rows_extent_overflow(void)
{
  const char* defect = "defect 1 bin_pack_rows_extent_overflow";
  float x[64] = {0};
  canary out;
  /* k * 4 bytes overflows size_t: the extent check must not wrap */
  static const size_t ks[] = {SIZE_MAX / 4 + 1, SIZE_MAX / 4 + 2, SIZE_MAX / 2, SIZE_MAX - 1,
                              SIZE_MAX};
  for (size_t i = 0; i < T_COUNT(ks); i++) {
    const size_t k = ks[i];
    canary_init(&out);
    char what[96];
    snprintf(what, sizeof(what), "f32 rows 1, k %zu, x_stride k, out_stride words", k);
    expect_refused(defect, what,
                   gemmi8_bin_pack_rows_f32(1, k, x, k, (uint64_t*) out.bytes, GEMMI8_BIN_WORDS(k)),
                   INVALID, &out);
  }
  /* two rows whose stride alone fits, but not in bytes */
  canary_init(&out);
  expect_refused(defect, "f32 rows 2, k 1, x_stride SIZE_MAX / 8 + 1",
                 gemmi8_bin_pack_rows_f32(2, 1, x, SIZE_MAX / 8 + 1, (uint64_t*) out.bytes, 1),
                 INVALID, &out);
  canary_init(&out);
  expect_refused(defect, "s8 rows 2, k 1, out_stride SIZE_MAX / 16 + 1",
                 gemmi8_bin_pack_rows_s8(2, 1, (const int8_t*) x, 1, (uint64_t*) out.bytes,
                                         SIZE_MAX / 16 + 1),
                 INVALID, &out);
  /* the same helpers still work at the edge of a real row */
  float row[130];
  for (size_t j = 0; j < 130; j++) row[j] = (j % 3 == 0) ? -1.0f : 1.0f;
  uint64_t words[3] = {0};
  gemmi8_status s = gemmi8_bin_pack_rows_f32(1, 130, row, 130, words, 3);
  int ok = s == SUCCESS;
  for (size_t j = 0; ok && j < 130; j++) ok = ((words[j / 64] >> (j % 64)) & 1) == (j % 3 == 0);
  t_expect(ok && (words[2] >> 2) == 0, defect, "f32 rows 1, k 130: status \"%s\" or bits wrong",
           sname(s));
}

/* ---- 2 --------------------------------------------------------------------------------- */

static void bin_words_and_block_count_wrap(void)
{
  const char* defect = "defect 2 bin_words_and_block_count_wrap";
  /* the public macro: ceil(k / 64) for every k, no wrap */
  static const size_t ks[] = {0, 1, 63, 64, 65, SIZE_MAX - 64, SIZE_MAX - 63, SIZE_MAX - 62,
                              SIZE_MAX - 1, SIZE_MAX};
  for (size_t i = 0; i < T_COUNT(ks); i++) {
    const size_t k = ks[i];
    const size_t want = k / 64 + (k % 64 != 0 ? 1 : 0);
    t_expect(GEMMI8_BIN_WORDS(k) == want, defect, "GEMMI8_BIN_WORDS(%zu) = %zu, expected %zu", k,
             (size_t) GEMMI8_BIN_WORDS(k), want);
  }
  size_t size = 12345;
  gemmi8_status s = gemmi8_bin_pack_size(SIZE_MAX, 64, &size);
  t_expect(s == UNSUPPORTED && size == 12345, defect,
           "gemmi8_bin_pack_size(SIZE_MAX, 64): status \"%s\", size %zu", sname(s), size);
  s = gemmi8_bin_pack_size(SIZE_MAX - 5, 1, &size);
  t_expect(s == UNSUPPORTED && size == 12345, defect,
           "gemmi8_bin_pack_size(SIZE_MAX - 5, 1): status \"%s\"", sname(s));

  uint64_t b[4] = {0};
  void* packed = t_alloc_aligned(512);
  canary pk;
  canary_init(&pk);
  memcpy(packed, pk.bytes, 512);
  /* K x N rows of n bits: a stride of 1 word is too small for SIZE_MAX columns ... */
  s = gemmi8_bin_pack(SIZE_MAX, 1, b, 1, GEMMI8_B_KN, packed, 64);
  t_expect(s == INVALID && memcmp(packed, pk.copy, 512) == 0, defect,
           "gemmi8_bin_pack(SIZE_MAX, 1, b, 1, KN, packed, 64): status \"%s\"%s", sname(s),
           memcmp(packed, pk.copy, 512) == 0 ? "" : "; packed written");
  /* ... and with a stride that holds them, the packed size overflows */
  s = gemmi8_bin_pack(SIZE_MAX, 1, b, GEMMI8_BIN_WORDS(SIZE_MAX), GEMMI8_B_KN, packed, 64);
  t_expect(s == UNSUPPORTED && memcmp(packed, pk.copy, 512) == 0, defect,
           "gemmi8_bin_pack(SIZE_MAX, 1, b, words, KN, packed, 64): status \"%s\"", sname(s));
  void* alloc = NULL;
  s = gemmi8_bin_pack_alloc(SIZE_MAX, 1, b, GEMMI8_BIN_WORDS(SIZE_MAX), GEMMI8_B_KN, &alloc);
  t_expect(s == UNSUPPORTED && alloc == NULL, defect,
           "gemmi8_bin_pack_alloc(SIZE_MAX, 1, KN): status \"%s\"", sname(s));

  /* a valid packed weight to aim the GEMMs at */
  size_t bsize = 0;
  s = gemmi8_bin_pack_size(5, 130, &bsize);
  void* wb = t_alloc_aligned(bsize > 0 ? bsize : 64);
  uint64_t bits[5 * 3];
  t_fill_random(bits, sizeof(bits));
  if (s == SUCCESS) s = gemmi8_bin_pack(5, 130, bits, 3, GEMMI8_B_NK, wb, bsize);
  t_expect(s == SUCCESS, defect, "packing the 5 x 130 fixture: \"%s\"", sname(s));

  canary c;
  uint64_t a[4] = {0};
  canary_init(&c);
  expect_refused(defect, "gemmi8_bin_gemm_s32(1, 1, SIZE_MAX, a, 0, p, c, 1)",
                 gemmi8_bin_gemm_s32(1, 1, SIZE_MAX, a, 0, wb, (int32_t*) c.bytes, 1), INVALID, &c);
  /* (a row of SIZE_MAX bits at its own stride is a possible object: K is then just
   * too large) */
  canary_init(&c);
  expect_refused(defect, "gemmi8_bin_gemm_s32(1, 1, SIZE_MAX, a, words, p, c, 1)",
                 gemmi8_bin_gemm_s32(1, 1, SIZE_MAX, a, GEMMI8_BIN_WORDS(SIZE_MAX), wb,
                                     (int32_t*) c.bytes, 1),
                 UNSUPPORTED, &c);
  canary_init(&c);
  expect_refused(defect, "gemmi8_bin_gemm_bits(1, SIZE_MAX, 130, a, 3, p, c, 0)",
                 gemmi8_bin_gemm_bits(1, SIZE_MAX, 130, a, 3, wb, NULL, NULL, (uint64_t*) c.bytes, 0),
                 INVALID, &c);
  canary_init(&c);
  expect_refused(defect, "gemmi8_bin_pack_rows_s8(1, SIZE_MAX, x, SIZE_MAX, out, 0)",
                 gemmi8_bin_pack_rows_s8(1, SIZE_MAX, (const int8_t*) a, SIZE_MAX,
                                         (uint64_t*) c.bytes, 0),
                 INVALID, &c);
  canary_init(&c);
  expect_refused(defect, "gemmi8_bin_pack_rows_u8(1, SIZE_MAX - 1, x, SIZE_MAX - 1, 128, out, 1)",
                 gemmi8_bin_pack_rows_u8(1, SIZE_MAX - 1, (const uint8_t*) a, SIZE_MAX - 1, 128,
                                         (uint64_t*) c.bytes, 1),
                 INVALID, &c);
  canary_init(&c);
  expect_refused(defect, "gemmi8_bin_pack_rows_u8(1, SIZE_MAX - 1, x, SIZE_MAX - 1, 128, out, words)",
                 gemmi8_bin_pack_rows_u8(1, SIZE_MAX - 1, (const uint8_t*) a, SIZE_MAX - 1, 128,
                                         (uint64_t*) c.bytes, GEMMI8_BIN_WORDS(SIZE_MAX - 1)),
                 INVALID, &c);
  free(packed);
  free(wb);
}

/* ---- 3 --------------------------------------------------------------------------------- */

/* One row at c_stride = a_stride = SIZE_MAX (legal for M = 1): a kernel whose tile is
 * taller must neither address nor store rows past M (UBSan reports the pointer
 * overflow; natively a store there would fault). Every width across the tiles. */
static void store_past_m_huge_stride(void)
{
  const char* defect = "defect 3 store_past_m_huge_stride";
  enum { K = 8, NMAX = 100 };
  uint8_t a[K], b[NMAX * K];
  t_fill_random(a, sizeof(a));
  t_fill_random(b, sizeof(b));
  const uint8_t b_zp = 3;
  static const size_t ns[] = {1, 7, 8, 16, 17, 32, 48, 49, 64, 96, 100};
  for (int is_signed = 0; is_signed <= 1; is_signed++) {
    for (size_t t = 0; t < T_COUNT(ns); t++) {
      const size_t n = ns[t];
      size_t size = 0;
      gemmi8_status s = is_signed ? gemmi8_qs8_pack_size(n, K, &size) : gemmi8_qu8_pack_size(n, K, &size);
      void* packed = t_alloc_aligned(size > 0 ? size : 64);
      if (s == SUCCESS) {
        s = is_signed ? gemmi8_qs8_pack(n, K, (const int8_t*) b, K, GEMMI8_B_NK, 5, NULL, packed, size)
                      : gemmi8_qu8_pack(n, K, b, K, GEMMI8_B_NK, 7, &b_zp, 0, NULL, packed, size);
      }
      if (!t_expect(s == SUCCESS, defect, "pack n %zu: \"%s\"", n, sname(s))) {
        free(packed);
        continue;
      }
      int32_t acc[NMAX];
      int32_t c32[NMAX];
      uint8_t c8[NMAX];
      s = is_signed ? gemmi8_qs8_gemm_s32(1, n, K, (const int8_t*) a, SIZE_MAX, packed, c32, SIZE_MAX)
                    : gemmi8_qu8_gemm_s32(1, n, K, a, SIZE_MAX, packed, c32, SIZE_MAX);
      memcpy(acc, c32, sizeof(acc));
      t_expect(s == SUCCESS, defect, "%s_gemm_s32 m 1, n %zu, strides SIZE_MAX: \"%s\"",
               is_signed ? "qs8" : "qu8", n, sname(s));
      for (int mode = 0; mode <= 1; mode++) {
        const int32_t mult = 1 << 30, shift = -8;
        const float scale = 1.0f / 512;
        const gemmi8_requant rq = {mode == 0 ? gemmi8_requant_fixedpoint : gemmi8_requant_fp32,
                                   0, &mult, &shift, &scale, is_signed ? -3 : 100,
                                   is_signed ? -128 : 0, is_signed ? 127 : 255};
        memset(c8, 0xA5, sizeof(c8));
        s = is_signed ? gemmi8_qs8_gemm(1, n, K, (const int8_t*) a, SIZE_MAX, packed, &rq,
                                        (int8_t*) c8, SIZE_MAX)
                      : gemmi8_qu8_gemm(1, n, K, a, SIZE_MAX, packed, &rq, c8, SIZE_MAX);
        /* and the same bytes as at ordinary strides */
        uint8_t ref[NMAX];
        gemmi8_status s2 = is_signed ? gemmi8_qs8_gemm(1, n, K, (const int8_t*) a, K, packed, &rq,
                                                       (int8_t*) ref, n)
                                     : gemmi8_qu8_gemm(1, n, K, a, K, packed, &rq, ref, n);
        int tail_ok = 1;
        for (size_t j = n; j < NMAX; j++) tail_ok &= c8[j] == 0xA5;
        t_expect(s == SUCCESS && s2 == SUCCESS && memcmp(c8, ref, n) == 0 && tail_ok, defect,
                 "%s_gemm %s m 1, n %zu, strides SIZE_MAX: \"%s\", bytes %s", is_signed ? "qs8" : "qu8",
                 mode == 0 ? "fixedpoint" : "fp32", n, sname(s),
                 memcmp(c8, ref, n) == 0 && tail_ok ? "same" : "differ");
      }
      free(packed);
    }
  }
  /* rows quantized at run time: the GEMM and the linear layer */
  float scale[NMAX], xrow[K];
  for (size_t j = 0; j < NMAX; j++) scale[j] = 0.01f * (float) (1 + j % 7);
  for (size_t kk = 0; kk < K; kk++) xrow[kk] = (float) kk - 2.5f;
  for (int u8 = 0; u8 <= 1; u8++) {
    const char* type = u8 ? "qdu8" : "qd8";
    for (size_t t = 0; t < T_COUNT(ns); t++) {
      const size_t n = ns[t];
      void* packed = NULL;
      gemmi8_status s = (u8 ? gemmi8_qdu8_pack_alloc : gemmi8_qd8_pack_alloc)(
          n, K, (const int8_t*) b, K, GEMMI8_B_NK, scale, scale, &packed);
      if (!t_expect(s == SUCCESS, defect, "%s pack n %zu: \"%s\"", type, n, sname(s))) continue;
      const float a_scale = 0.125f;
      const int32_t a_zp = u8 ? 200 : -7;
      float cf[NMAX + 8], rf[NMAX];
      for (size_t j = 0; j < NMAX + 8; j++) cf[j] = 42.0f;
      s = u8 ? gemmi8_qdu8_gemm_f32(1, n, K, a, SIZE_MAX, &a_scale, &a_zp, packed, -INFINITY,
                                    INFINITY, cf, SIZE_MAX)
             : gemmi8_qd8_gemm_f32(1, n, K, (const int8_t*) a, SIZE_MAX, &a_scale, &a_zp, packed,
                                   -INFINITY, INFINITY, cf, SIZE_MAX);
      gemmi8_status s2 = u8 ? gemmi8_qdu8_gemm_f32(1, n, K, a, K, &a_scale, &a_zp, packed,
                                                   -INFINITY, INFINITY, rf, n)
                            : gemmi8_qd8_gemm_f32(1, n, K, (const int8_t*) a, K, &a_scale, &a_zp,
                                                  packed, -INFINITY, INFINITY, rf, n);
      int tail_ok = 1;
      for (size_t j = n; j < NMAX + 8; j++) tail_ok &= cf[j] == 42.0f;
      t_expect(s == SUCCESS && s2 == SUCCESS && memcmp(cf, rf, n * sizeof(float)) == 0 && tail_ok,
               defect, "%s_gemm_f32 m 1, n %zu, strides SIZE_MAX: \"%s\", floats %s", type, n,
               sname(s), memcmp(cf, rf, n * sizeof(float)) == 0 && tail_ok ? "same" : "differ");
      for (size_t j = 0; j < NMAX + 8; j++) cf[j] = 42.0f;
      s = (u8 ? gemmi8_qdu8_linear_f32 : gemmi8_qd8_linear_f32)(
          1, n, K, xrow, SIZE_MAX / sizeof(float), packed, -INFINITY, INFINITY, cf, SIZE_MAX, NULL,
          0, NULL);
      s2 = (u8 ? gemmi8_qdu8_linear_f32 : gemmi8_qd8_linear_f32)(
          1, n, K, xrow, K, packed, -INFINITY, INFINITY, rf, n, NULL, 0, NULL);
      tail_ok = 1;
      for (size_t j = n; j < NMAX + 8; j++) tail_ok &= cf[j] == 42.0f;
      t_expect(s == SUCCESS && s2 == SUCCESS && memcmp(cf, rf, n * sizeof(float)) == 0 && tail_ok,
               defect,
               "%s_linear_f32 m 1, n %zu, x_stride SIZE_MAX / 4, c_stride SIZE_MAX: "
               "\"%s\", floats %s",
               type, n, sname(s),
               memcmp(cf, rf, n * sizeof(float)) == 0 && tail_ok ? "same" : "differ");
      gemmi8_packed_free(packed);
    }
  }
  /* 4-bit weights: qc4w and qb4w, signed nibbles and zero points; the GEMM and the
   * linear layer */
  static const uint8_t zps[NMAX];
  for (int form = 0; form < 4; form++) {
    const size_t block = form % 2 ? 32 : 0;
    const gemmi8_q4_weights w = {b, (K + 1) / 2, block, scale, form / 2 ? zps : NULL, scale};
    static const char* const forms[] = { "q4 qc4w", "q4 block 32", "q4 qc4w zp",
                                         "q4 block 32 zp" };
    const char* type = forms[form];
    for (size_t t = 0; t < T_COUNT(ns); t++) {
      const size_t n = ns[t];
      void* packed = NULL;
      gemmi8_status s = gemmi8_qd8_pack_q4_alloc(n, K, &w, &packed);
      if (!t_expect(s == SUCCESS, defect, "%s pack n %zu: \"%s\"", type, n, sname(s))) continue;
      const float a_scale = 0.125f;
      const int32_t a_zp = -7;
      float cf[NMAX + 8], rf[NMAX];
      for (size_t j = 0; j < NMAX + 8; j++) cf[j] = 42.0f;
      s = gemmi8_qd8_gemm_f32(1, n, K, (const int8_t*) a, SIZE_MAX, &a_scale, &a_zp, packed,
                              -INFINITY, INFINITY, cf, SIZE_MAX);
      gemmi8_status s2 = gemmi8_qd8_gemm_f32(1, n, K, (const int8_t*) a, K, &a_scale, &a_zp,
                                             packed, -INFINITY, INFINITY, rf, n);
      int tail_ok = 1;
      for (size_t j = n; j < NMAX + 8; j++) tail_ok &= cf[j] == 42.0f;
      int same = memcmp(cf, rf, n * sizeof(float)) == 0;
      t_expect(s == SUCCESS && s2 == SUCCESS && same && tail_ok, defect,
               "qd8_gemm_f32 (%s) m 1, n %zu, strides SIZE_MAX: \"%s\", floats %s", type, n,
               sname(s), same && tail_ok ? "same" : "differ");
      for (size_t j = 0; j < NMAX + 8; j++) cf[j] = 42.0f;
      s = gemmi8_qd8_linear_f32(1, n, K, xrow, SIZE_MAX / sizeof(float), packed, -INFINITY,
                                INFINITY, cf, SIZE_MAX, NULL, 0, NULL);
      s2 = gemmi8_qd8_linear_f32(1, n, K, xrow, K, packed, -INFINITY, INFINITY, rf, n, NULL, 0,
                                 NULL);
      tail_ok = 1;
      for (size_t j = n; j < NMAX + 8; j++) tail_ok &= cf[j] == 42.0f;
      same = memcmp(cf, rf, n * sizeof(float)) == 0;
      t_expect(s == SUCCESS && s2 == SUCCESS && same && tail_ok, defect,
               "qd8_linear_f32 (%s) m 1, n %zu, x_stride SIZE_MAX / 4, c_stride SIZE_MAX: "
               "\"%s\", floats %s",
               type, n, sname(s), same && tail_ok ? "same" : "differ");
      gemmi8_packed_free(packed);
    }
  }
  /* binary: every output kind */
  uint64_t ab[3], bb[NMAX * 3];
  t_fill_random(ab, sizeof(ab));
  t_fill_random(bb, sizeof(bb));
  for (size_t t = 0; t < T_COUNT(ns); t++) {
    const size_t n = ns[t];
    size_t size = 0;
    gemmi8_status s = gemmi8_bin_pack_size(n, 130, &size);
    void* packed = t_alloc_aligned(size > 0 ? size : 64);
    if (s == SUCCESS) s = gemmi8_bin_pack(n, 130, bb, 3, GEMMI8_B_NK, packed, size);
    int32_t c32[NMAX], r32[NMAX];
    float cf[NMAX], rf[NMAX];
    uint64_t cb[2] = {0, 0}, rb[2] = {0, 0};
    gemmi8_status s1 = gemmi8_bin_gemm_s32(1, n, 130, ab, SIZE_MAX, packed, c32, SIZE_MAX);
    gemmi8_status s2 = gemmi8_bin_gemm_f32(1, n, 130, ab, SIZE_MAX, packed, NULL, NULL, cf, SIZE_MAX);
    gemmi8_status s3 = gemmi8_bin_gemm_bits(1, n, 130, ab, SIZE_MAX, packed, NULL, NULL, cb, SIZE_MAX);
    gemmi8_bin_gemm_s32(1, n, 130, ab, 3, packed, r32, n);
    gemmi8_bin_gemm_f32(1, n, 130, ab, 3, packed, NULL, NULL, rf, n);
    gemmi8_bin_gemm_bits(1, n, 130, ab, 3, packed, NULL, NULL, rb, 2);
    t_expect(s == SUCCESS && s1 == SUCCESS && s2 == SUCCESS && s3 == SUCCESS &&
                 memcmp(c32, r32, n * 4) == 0 && memcmp(cf, rf, n * 4) == 0 &&
                 memcmp(cb, rb, GEMMI8_BIN_WORDS(n) * 8) == 0,
             defect, "bin_gemm m 1, n %zu, strides SIZE_MAX: \"%s\" \"%s\" \"%s\" \"%s\"", n,
             sname(s), sname(s1), sname(s2), sname(s3));
    free(packed);
  }
}

/* ---- 4 --------------------------------------------------------------------------------- */

typedef struct packed_case {
  const char* type;
  void* packed;
  size_t size;
  size_t n, k;
} packed_case;

/* Runs the GEMM of the case's type on a (possibly damaged) packed buffer. */
static gemmi8_status run_case(const packed_case* pc, const void* packed, void* c)
{
  static uint8_t a[3 * 200];
  static uint64_t abits[3 * 3];
  const int32_t mult = 1 << 30, shift = -4;
  const gemmi8_requant rq = {gemmi8_requant_fixedpoint, 0, &mult, &shift, NULL, 0, -128, 127};
  if (strcmp(pc->type, "qu8") == 0) {
    const gemmi8_requant rqu = {gemmi8_requant_fixedpoint, 0, &mult, &shift, NULL, 0, 0, 255};
    return gemmi8_qu8_gemm(3, pc->n, pc->k, a, pc->k, packed, &rqu, c, pc->n);
  }
  if (strcmp(pc->type, "qs8") == 0) {
    return gemmi8_qs8_gemm(3, pc->n, pc->k, (const int8_t*) a, pc->k, packed, &rq, c, pc->n);
  }
  static const float a_scale[3] = { 0.5f, 0.25f, 1.0f };
  static const int32_t a_zp[3] = { 0, 1, 2 };
  if (strcmp(pc->type, "qd8") == 0 || strncmp(pc->type, "q4", 2) == 0) {
    return gemmi8_qd8_gemm_f32(3, pc->n, pc->k, (const int8_t*) a, pc->k, a_scale, a_zp, packed,
                               -INFINITY, INFINITY, c, pc->n);
  }
  if (strcmp(pc->type, "qdu8") == 0) {
    return gemmi8_qdu8_gemm_f32(3, pc->n, pc->k, a, pc->k, a_scale, a_zp, packed, -INFINITY,
                                INFINITY, c, pc->n);
  }
  return gemmi8_bin_gemm_s32(3, pc->n, pc->k, abits, 3, packed, c, pc->n);
}

static void packed_header_damage(void)
{
  const char* defect = "defect 4 packed_header_damage";
  enum { N = 50, K = 130 };
  uint8_t b[N * K];
  uint64_t bits[N * 3];
  uint8_t b_zp[N];
  t_fill_random(b, sizeof(b));
  t_fill_random(bits, sizeof(bits));
  for (size_t j = 0; j < N; j++) b_zp[j] = (uint8_t) (j * 5);
  packed_case cases[8] = { { "qu8", NULL, 0, N, K },           { "qu8", NULL, 0, N, K },
                           { "qs8", NULL, 0, N, K },           { "bin", NULL, 0, N, K },
                           { "qd8", NULL, 0, N, K },           { "qdu8", NULL, 0, N, K },
                           { "q4 block 32 zp", NULL, 0, N, K }, { "q4 qc4w", NULL, 0, N, K } };
  gemmi8_status s[8];
  float scale[N * 5];
  uint8_t q4_zp[N * 5];
  for (size_t j = 0; j < N * 5; j++) {
    scale[j] = 0.001f * (float) (j + 1);
    q4_zp[j] = (uint8_t) (j % 16);
  }
  s[0] = gemmi8_qu8_pack_alloc(N, K, b, K, GEMMI8_B_NK, 128, b_zp, 1, NULL, &cases[0].packed);
  s[1] = gemmi8_qu8_pack_alloc(N, K, b, K, GEMMI8_B_NK, 128, b_zp, 0, NULL, &cases[1].packed);
  s[2] = gemmi8_qs8_pack_alloc(N, K, (const int8_t*) b, K, GEMMI8_B_NK, 0, NULL, &cases[2].packed);
  s[3] = gemmi8_bin_pack_alloc(N, K, bits, 3, GEMMI8_B_NK, &cases[3].packed);
  s[4] =
      gemmi8_qd8_pack_alloc(N, K, (const int8_t*) b, K, GEMMI8_B_NK, scale, NULL, &cases[4].packed);
  s[5] = gemmi8_qdu8_pack_alloc(N, K, (const int8_t*) b, K, GEMMI8_B_NK, scale, scale,
                                &cases[5].packed);
  gemmi8_qu8_pack_size(N, K, &cases[0].size);
  gemmi8_qu8_pack_size(N, K, &cases[1].size);
  gemmi8_qs8_pack_size(N, K, &cases[2].size);
  gemmi8_bin_pack_size(N, K, &cases[3].size);
  gemmi8_qd8_pack_size(N, K, &cases[4].size);
  gemmi8_qdu8_pack_size(N, K, &cases[5].size);
  /* 4-bit: K = 130 is 5 blocks of 32 (the last of 2 depths), one chunk for qc4w */
  const gemmi8_q4_weights w32 = { b, (K + 1) / 2, 32, scale, q4_zp, scale };
  const gemmi8_q4_weights wc = { b, (K + 1) / 2, 0, scale, NULL, NULL };
  s[6] = gemmi8_qd8_pack_q4_alloc(N, K, &w32, &cases[6].packed);
  s[7] = gemmi8_qd8_pack_q4_alloc(N, K, &wc, &cases[7].packed);
  gemmi8_qd8_pack_q4_size(N, K, 32, &cases[6].size);
  gemmi8_qd8_pack_q4_size(N, K, 0, &cases[7].size);
  for (size_t i = 0; i < T_COUNT(cases); i++) {
    const packed_case* pc = &cases[i];
    if (!t_expect(s[i] == SUCCESS, defect, "%s pack: \"%s\"", pc->type, sname(s[i]))) continue;
    /* a copy at another 64-byte boundary works, with the same results */
    unsigned char* copy = t_alloc_aligned(pc->size);
    memcpy(copy, pc->packed, pc->size);
    canary want, got;
    memset(want.bytes, 0, sizeof(want.bytes));
    memset(got.bytes, 0, sizeof(got.bytes));
    gemmi8_status s1 = run_case(pc, pc->packed, want.bytes);
    gemmi8_status s2 = run_case(pc, copy, got.bytes);
    t_expect(s1 == SUCCESS && s2 == SUCCESS && memcmp(want.bytes, got.bytes, sizeof(want.bytes)) == 0,
             defect, "%s: original \"%s\", copy \"%s\" (results %s)", pc->type, sname(s1), sname(s2),
             memcmp(want.bytes, got.bytes, sizeof(want.bytes)) == 0 ? "same" : "differ");
    /* every byte of the header damaged, one at a time, three ways */
    static const unsigned char flips[] = {0x01, 0x80, 0xFF};
    unsigned long refused = 0, total = 0;
    for (size_t byte = 0; byte < GEMMI8_PACKED_HEADER_BYTES; byte++) {
      for (size_t f = 0; f < T_COUNT(flips); f++) {
        memcpy(copy, pc->packed, GEMMI8_PACKED_HEADER_BYTES);
        copy[byte] ^= flips[f];
        canary c;
        canary_init(&c);
        const gemmi8_status st = run_case(pc, copy, c.bytes);
        total++;
        if (st == INVALID && canary_intact(&c)) {
          refused++;
        } else {
          t_fail(defect, "%s: header byte %zu ^ 0x%02x: status \"%s\"%s", pc->type, byte, flips[f],
                 sname(st), canary_intact(&c) ? "" : ", C written");
        }
      }
    }
    t_expect(refused == total, defect, "%s: %lu of %lu damaged headers refused", pc->type,
             refused, total);
    /* fields changed and the checksum recomputed: the fields themselves are checked */
    struct gemmi8_packed_header h0;
    memcpy(&h0, pc->packed, sizeof(h0));
    for (int field = 0; field < 11; field++) {
      struct gemmi8_packed_header h = h0;
      const char* what = "";
      switch (field) {
        case 0: h.block_bytes += 64; what = "block_bytes + 64"; break;
        case 1: h.block_bytes = (uint64_t) 1 << 40; what = "block_bytes 2^40"; break;
        case 2: h.nr *= 2; what = "nr * 2"; break;
        case 3: h.flags |= 4; what = "unknown flag"; break;
        case 4: h.flags = GEMMI8_PACKED_NO_ROW_SUM | GEMMI8_PACKED_UNIFORM_COEF; what = "both flags"; break;
        case 5: h.magic ^= 1; what = "magic ^ 1"; break;
        case 6: h.version += 1; what = "version + 1"; break;
        case 7: h.a_zero_point = 1000; what = "a_zero_point 1000"; break;
        case 8: h.layout ^= 1; what = "layout ^ 1"; break;
        case 9: h.type = h.type == 1 ? 2 : 1; what = "other type"; break;
        case 10:
          h.coef = 7;
          h.flags &= ~GEMMI8_PACKED_UNIFORM_COEF;
          what = "coef without the uniform flag";
          break;
      }
      gemmi8_packed_seal(&h);
      memcpy(copy, &h, sizeof(h));
      canary c;
      canary_init(&c);
      const gemmi8_status st = run_case(pc, copy, c.bytes);
      t_expect(st == INVALID && canary_intact(&c), defect, "%s: %s, resealed: status \"%s\"%s",
               pc->type, what, sname(st), canary_intact(&c) ? "" : ", C written");
    }
    /* 4-bit: the block size (kept where the 8-bit types keep a_zero_point) changed to one
     * not listed, or to a listed one of another layout, resealed */
    if (strncmp(pc->type, "q4", 2) == 0) {
      const int32_t blocks[] = { 48, -32, 512, 1, h0.a_zero_point == 32 ? 64 : 32,
                                 h0.a_zero_point == 32 ? 0 : 128 };
      for (size_t bi = 0; bi < T_COUNT(blocks); bi++) {
        struct gemmi8_packed_header h = h0;
        h.a_zero_point = blocks[bi];
        gemmi8_packed_seal(&h);
        memcpy(copy, &h, sizeof(h));
        canary c;
        canary_init(&c);
        const gemmi8_status st = run_case(pc, copy, c.bytes);
        t_expect(st == INVALID && canary_intact(&c), defect,
                 "%s: block %d -> %d, resealed: status \"%s\"%s", pc->type, (int) h0.a_zero_point,
                 (int) blocks[bi], sname(st), canary_intact(&c) ? "" : ", C written");
      }
    }
    /* N or K damaged and a call that agrees with the damage (found by the errors fuzz
     * target): the checksum covers them, so the buffer is refused, not run with the
     * weights of another shape or read past its end */
    static const struct { size_t byte; unsigned char flip; int dn, dk; } agree[] = {
        {16, 0x01, 1, 0}, {16, 0x03, -1, 0}, {24, 0x02, 0, -2}, {24, 0x01, 0, 1}};
    for (size_t d = 0; d < T_COUNT(agree); d++) {
      memcpy(copy, pc->packed, GEMMI8_PACKED_HEADER_BYTES);
      copy[agree[d].byte] ^= agree[d].flip;
      packed_case damaged = *pc;
      uint64_t n64, k64; /* the header's fields; size_t may be narrower */
      memcpy(&n64, copy + 16, sizeof(n64));
      memcpy(&k64, copy + 24, sizeof(k64));
      damaged.n = (size_t) n64;
      damaged.k = (size_t) k64;
      canary c;
      canary_init(&c);
      const gemmi8_status st = run_case(&damaged, copy, c.bytes);
      t_expect(st == INVALID && canary_intact(&c), defect,
               "%s: header says N %zu, K %zu (byte %zu ^ 0x%02x) and so does the call: "
               "status \"%s\"%s", pc->type, damaged.n, damaged.k, agree[d].byte,
               agree[d].flip, sname(st), canary_intact(&c) ? "" : ", C written");
    }
    free(copy);
    gemmi8_packed_free(pc->packed);
  }
}

/* ---- 5 --------------------------------------------------------------------------------- */

static void pack_alloc_validates_first(void)
{
  const char* defect = "defect 5 pack_alloc_validates_first";
  uint8_t b[64] = {0};
  uint64_t bits[8] = {0};
  const uint8_t zp = 0;
  /* n so large that the packed buffer could never be allocated, stride too small */
  const size_t n = SIZE_MAX / 64, k = 16;
  size_t size = 0;
  t_expect(gemmi8_qu8_pack_size(n, k, &size) == SUCCESS, defect,
           "the packed size of (SIZE_MAX / 64) x 16 fits size_t");
  void* p = NULL;
  expect_refused(defect, "qu8_pack_alloc NK stride k - 1",
                 gemmi8_qu8_pack_alloc(n, k, b, k - 1, GEMMI8_B_NK, 0, &zp, 0, NULL, &p), INVALID, NULL);
  expect_refused(defect, "qu8_pack_alloc KN stride n - 1",
                 gemmi8_qu8_pack_alloc(n, k, b, n - 1, GEMMI8_B_KN, 0, &zp, 0, NULL, &p), INVALID, NULL);
  expect_refused(defect, "qu8_pack_alloc per_channel 2",
                 gemmi8_qu8_pack_alloc(n, k, b, k, GEMMI8_B_NK, 0, &zp, 2, NULL, &p), INVALID, NULL);
  expect_refused(defect, "qs8_pack_alloc NK stride 0",
                 gemmi8_qs8_pack_alloc(n, k, (const int8_t*) b, 0, GEMMI8_B_NK, 0, NULL, &p), INVALID, NULL);
  expect_refused(defect, "qs8_pack_alloc flags 2",
                 gemmi8_qs8_pack_alloc(n, k, (const int8_t*) b, k, 2, 0, NULL, &p), INVALID, NULL);
  expect_refused(defect, "bin_pack_alloc NK stride 0",
                 gemmi8_bin_pack_alloc(n, 640, bits, 0, GEMMI8_B_NK, &p), INVALID, NULL);
  expect_refused(defect, "bin_pack_alloc KN stride words(n) - 1",
                 gemmi8_bin_pack_alloc(n, 640, bits, GEMMI8_BIN_WORDS(n) - 1, GEMMI8_B_KN, &p),
                 INVALID, NULL);
  /* qd8 / qdu8: refused before their n scales are read (the caller passes one) */
  const float scale = 1.0f;
  for (int u8 = 0; u8 <= 1; u8++) {
    gemmi8_status (*alloc)(size_t, size_t, const int8_t*, size_t, uint32_t, const float*,
                           const float*, void**) =
        u8 ? gemmi8_qdu8_pack_alloc : gemmi8_qd8_pack_alloc;
    expect_refused(
        defect, u8 ? "qdu8_pack_alloc NK stride k - 1" : "qd8_pack_alloc NK stride k - 1",
        alloc(n, k, (const int8_t*) b, k - 1, GEMMI8_B_NK, &scale, NULL, &p), INVALID, NULL);
    expect_refused(
        defect, u8 ? "qdu8_pack_alloc KN stride n - 1" : "qd8_pack_alloc KN stride n - 1",
        alloc(n, k, (const int8_t*) b, n - 1, GEMMI8_B_KN, &scale, NULL, &p), INVALID, NULL);
    expect_refused(defect, u8 ? "qdu8_pack_alloc flags 2" : "qd8_pack_alloc flags 2",
                   alloc(n, k, (const int8_t*) b, k, 2, &scale, NULL, &p), INVALID, NULL);
    expect_refused(defect, u8 ? "qdu8_pack_alloc scale NULL" : "qd8_pack_alloc scale NULL",
                   alloc(n, k, (const int8_t*) b, k, GEMMI8_B_NK, NULL, NULL, &p), INVALID, NULL);
  }
  /* 4-bit: refused before the n * blocks scales and zero points are read (the caller
   * passes one of each) */
  t_expect(gemmi8_qd8_pack_q4_size(n, k, 0, &size) == SUCCESS, defect,
           "the 4-bit packed size of (SIZE_MAX / 64) x 16 fits size_t");
  const uint8_t one_zp = 3;
  const gemmi8_q4_weights q4 = { b, (k + 1) / 2, 0, &scale, &one_zp, NULL };
  gemmi8_q4_weights bad = q4;
  bad.b_stride = (k + 1) / 2 - 1;
  expect_refused(defect, "qd8_pack_q4_alloc stride ceil(k / 2) - 1",
                 gemmi8_qd8_pack_q4_alloc(n, k, &bad, &p), INVALID, NULL);
  bad = q4, bad.b_stride = 0;
  expect_refused(defect, "qd8_pack_q4_alloc stride 0", gemmi8_qd8_pack_q4_alloc(n, k, &bad, &p),
                 INVALID, NULL);
  bad = q4, bad.block = 48;
  expect_refused(defect, "qd8_pack_q4_alloc block 48", gemmi8_qd8_pack_q4_alloc(n, k, &bad, &p),
                 INVALID, NULL);
  bad = q4, bad.scale = NULL;
  expect_refused(defect, "qd8_pack_q4_alloc scale NULL", gemmi8_qd8_pack_q4_alloc(n, k, &bad, &p),
                 INVALID, NULL);
  bad = q4, bad.b = NULL;
  expect_refused(defect, "qd8_pack_q4_alloc b NULL", gemmi8_qd8_pack_q4_alloc(n, k, &bad, &p),
                 INVALID, NULL);
  expect_refused(defect, "qd8_pack_q4_alloc w NULL", gemmi8_qd8_pack_q4_alloc(n, k, NULL, &p),
                 INVALID, NULL);
  t_expect(p == NULL, defect, "*packed written by a refused call");
}

/* ---- 6 --------------------------------------------------------------------------------- */

typedef gemmi8_status (*size_fn)(size_t n, size_t k, size_t* size);

/* gemmi8_qd8_pack_q4_size at one block size. */
static gemmi8_status q4_size_qc4w(size_t n, size_t k, size_t* size)
{
  return gemmi8_qd8_pack_q4_size(n, k, 0, size);
}
static gemmi8_status q4_size_32(size_t n, size_t k, size_t* size)
{
  return gemmi8_qd8_pack_q4_size(n, k, 32, size);
}
static gemmi8_status q4_size_256(size_t n, size_t k, size_t* size)
{
  return gemmi8_qd8_pack_q4_size(n, k, 256, size);
}

/* The largest n with a packed size is where one more block would overflow size_t. */
static void pack_size_edge(const char* defect, const char* name, size_fn fn, size_t k)
{
  size_t one = 0;
  if (!t_expect(fn(1, k, &one) == SUCCESS && one > GEMMI8_PACKED_HEADER_BYTES, defect,
                "%s(1, %zu) failed", name, k)) {
    return;
  }
  const size_t block = one - GEMMI8_PACKED_HEADER_BYTES; /* bytes of one block */
  size_t lo = 1, hi = SIZE_MAX; /* fn(lo) succeeds; fn(hi) fails (checked below) */
  size_t size = 0;
  if (!t_expect(fn(hi, k, &size) == UNSUPPORTED, defect, "%s(SIZE_MAX, %zu) succeeded", name, k))
    return;
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (fn(mid, k, &size) == SUCCESS) lo = mid; else hi = mid;
  }
  gemmi8_status s = fn(lo, k, &size);
  /* exact: the accepted size cannot take one more block */
  t_expect(s == SUCCESS && size > SIZE_MAX - block, defect,
           "%s(n, %zu): the largest accepted n %zu has size %zu, %zu below SIZE_MAX with a "
           "block of %zu bytes",
           name, k, lo, size, SIZE_MAX - size, block);
  /* the old bound n <= SIZE_MAX / 4 / k is gone */
  if (SIZE_MAX / 4 / k + 1 < lo) {
    s = fn(SIZE_MAX / 4 / k + 1, k, &size);
    t_expect(s == SUCCESS, defect, "%s(SIZE_MAX / 4 / k + 1, %zu): \"%s\"", name, k, sname(s));
  }
}

static void pack_size_exact(void)
{
  const char* defect = "defect 6 pack_size_exact";
  static const size_t ks[] = {1, 100, 1024, 33025};
  for (size_t i = 0; i < T_COUNT(ks); i++) {
    pack_size_edge(defect, "gemmi8_qu8_pack_size", gemmi8_qu8_pack_size, ks[i]);
    pack_size_edge(defect, "gemmi8_qs8_pack_size", gemmi8_qs8_pack_size, ks[i]);
    pack_size_edge(defect, "gemmi8_bin_pack_size", gemmi8_bin_pack_size, ks[i] * 64);
    pack_size_edge(defect, "gemmi8_qd8_pack_size", gemmi8_qd8_pack_size, ks[i]);
    pack_size_edge(defect, "gemmi8_qdu8_pack_size", gemmi8_qdu8_pack_size, ks[i]);
    pack_size_edge(defect, "gemmi8_qd8_pack_q4_size (block 0)", q4_size_qc4w, ks[i]);
    pack_size_edge(defect, "gemmi8_qd8_pack_q4_size (block 32)", q4_size_32, ks[i]);
    pack_size_edge(defect, "gemmi8_qd8_pack_q4_size (block 256)", q4_size_256, ks[i]);
  }
  size_t size = 0;
  const size_t n = SIZE_MAX / 4096; /* above the old bound SIZE_MAX / 4 / 1024 */
  const gemmi8_status s = gemmi8_qu8_pack_size(n, 1024, &size);
  t_expect(s == SUCCESS && size >= n * 1024, defect,
           "gemmi8_qu8_pack_size(SIZE_MAX / 4096, 1024): \"%s\", size %zu", sname(s), size);
}

/* ---- 7 --------------------------------------------------------------------------------- */

/* multiplier 2^31 - 1, shift 30 (or 0), an accumulator that saturates: r is 2^31 - 2
 * and r + zero_point wraps to a negative int32 (gemmlowp's bytes), clamping to min. */
static void zero_point_add_wraps(void)
{
  const char* defect = "defect 7 zero_point_add_wraps";
  enum { NMAX = 100 };
  static const size_t ns[] = {1, 8, 16, 17, 48, 50, 100};
  uint8_t a[1] = {255};
  uint8_t b[NMAX];
  memset(b, 255, sizeof(b));
  const uint8_t b_zp = 0;
  for (size_t t = 0; t < T_COUNT(ns); t++) {
    const size_t n = ns[t];
    void* packed = NULL;
    gemmi8_status s = gemmi8_qu8_pack_alloc(n, 1, b, 1, GEMMI8_B_NK, 0, &b_zp, 0, NULL, &packed);
    if (!t_expect(s == SUCCESS, defect, "qu8 pack n %zu: \"%s\"", n, sname(s))) continue;
    /* acc = 65025; left shift 30 saturates */
    static const struct { int32_t shift, zp, want; } cases[] = {
        {30, 128, 0}, {30, 1, 255}, {30, 2, 0}, {0, 128, 255}};
    for (size_t i = 0; i < T_COUNT(cases); i++) {
      const int32_t mult = INT32_MAX, shift = cases[i].shift;
      const gemmi8_requant rq = {gemmi8_requant_fixedpoint, 0, &mult, &shift, NULL,
                                 cases[i].zp, 0, 255};
      uint8_t c[NMAX];
      s = gemmi8_qu8_gemm(1, n, 1, a, 1, packed, &rq, c, n);
      int ok = s == SUCCESS;
      for (size_t j = 0; ok && j < n; j++) ok = c[j] == cases[i].want;
      t_expect(ok, defect, "qu8 M 1 N %zu K 1, A = B = 255, mult 2^31-1 shift %d, c_zp %d: "
               "status \"%s\", c[0] %d, expected %d (gemmlowp)", n, shift, cases[i].zp, sname(s),
               c[0], cases[i].want);
    }
    gemmi8_packed_free(packed);
  }
  /* qs8, negative side: acc = -128 * 127 * 2 saturates at INT32_MIN after the left
   * shift; r = -(2^31 - 1) and r + (-2) wraps to a large positive value */
  int8_t as[2] = {-128, -128};
  int8_t bs[NMAX * 2];
  memset(bs, 127, sizeof(bs));
  for (size_t t = 0; t < T_COUNT(ns); t++) {
    const size_t n = ns[t];
    void* packed = NULL;
    gemmi8_status s = gemmi8_qs8_pack_alloc(n, 2, bs, 2, GEMMI8_B_NK, 0, NULL, &packed);
    if (!t_expect(s == SUCCESS, defect, "qs8 pack n %zu: \"%s\"", n, sname(s))) continue;
    static const struct { int32_t zp, want; } cases[] = {{-1, -128}, {-2, 127}, {5, -128}};
    for (size_t i = 0; i < T_COUNT(cases); i++) {
      const int32_t mult = INT32_MAX, shift = 30;
      const gemmi8_requant rq = {gemmi8_requant_fixedpoint, 1, NULL, NULL, NULL, cases[i].zp, -128, 127};
      int32_t mults[NMAX], shifts[NMAX];
      for (size_t j = 0; j < n; j++) mults[j] = mult, shifts[j] = shift;
      gemmi8_requant rqc = rq;
      rqc.multiplier = mults;
      rqc.shift = shifts;
      int8_t c[NMAX];
      s = gemmi8_qs8_gemm(1, n, 2, as, 2, packed, &rqc, c, n);
      int ok = s == SUCCESS;
      for (size_t j = 0; ok && j < n; j++) ok = c[j] == cases[i].want;
      t_expect(ok, defect, "qs8 M 1 N %zu K 2, A = -128, B = 127, per channel mult 2^31-1 "
               "shift 30, c_zp %d: status \"%s\", c[0] %d, expected %d (gemmlowp)", n, cases[i].zp,
               sname(s), c[0], cases[i].want);
    }
    gemmi8_packed_free(packed);
  }
}

/* ---- 8 --------------------------------------------------------------------------------- */

static void isa_names_and_env(void)
{
  const char* defect = "defect 8 isa_names_and_env";
  const char* const* names = gemmi8_isa_compiled();
  int in_list = 0;
  for (size_t i = 0; names != NULL && names[i] != NULL; i++) {
    const gemmi8_status s = gemmi8_isa_available(names[i]);
    const gemmi8_status want = gemmi8_isa_supported(names[i]) ? SUCCESS : gemmi8_status_unsupported_hardware;
    t_expect(s == want, defect, "gemmi8_isa_available(\"%s\"): \"%s\", expected \"%s\"", names[i],
             sname(s), sname(want));
    in_list |= strcmp(names[i], gemmi8_isa_name()) == 0;
  }
  t_expect(in_list, defect, "the level in use, \"%s\", is not in gemmi8_isa_compiled()",
           gemmi8_isa_name());
  t_expect(gemmi8_isa_available("generic") == SUCCESS, defect, "\"generic\" not available");
  static const char* const bad[] = {"", "GENERIC", "avx512", "sse4", "neon ", "x"};
  for (size_t i = 0; i < T_COUNT(bad); i++) {
    t_expect(gemmi8_isa_available(bad[i]) == INVALID, defect,
             "gemmi8_isa_available(\"%s\") is not invalid_parameter", bad[i]);
  }
  t_expect(gemmi8_isa_available(NULL) == INVALID, defect, "gemmi8_isa_available(NULL)");
  /* what GEMMI8_ISA asked of this process (make test runs it unknown, too) */
  const char* env = getenv("GEMMI8_ISA");
  gemmi8_status want = SUCCESS;
  if (env != NULL && *env != '\0') want = gemmi8_isa_available(env);
  t_expect(gemmi8_isa_env_status() == want, defect,
           "GEMMI8_ISA=%s: gemmi8_isa_env_status() \"%s\", expected \"%s\"", env ? env : "(unset)",
           sname(gemmi8_isa_env_status()), sname(want));
}

/* ---- 9 --------------------------------------------------------------------------------- */

/* The per-channel tail of a qd8 / qdu8 packed buffer (column sums, scales, biases: 12
 * bytes a channel) is padded to 64 bytes; the padding was not written, so the packed
 * bytes carried whatever the caller's buffer held (uninitialised memory from
 * *_pack_alloc): two packings of the same weights differed, and a packed file kept
 * stale bytes. Found by the qd8 fuzz target (packing at another stride must give the
 * same bytes). */
static void qd8_pack_tail_padding(void)
{
  const char* defect = "defect 9 qd8_pack_tail_padding";
  enum { NMAX = 70, K = 9 };
  int8_t b[NMAX * K];
  float scale[NMAX], bias[NMAX];
  t_fill_random(b, sizeof(b));
  for (size_t j = 0; j < NMAX; j++) scale[j] = 0.5f, bias[j] = -1.0f;
  static const size_t ns[] = { 1, 2, 5, 6, 15, 16, 17, 47, 48, 53, 70 };
  for (int u8 = 0; u8 <= 1; u8++) {
    for (size_t t = 0; t < T_COUNT(ns); t++) {
      const size_t n = ns[t];
      size_t size = 0;
      gemmi8_status s = (u8 ? gemmi8_qdu8_pack_size : gemmi8_qd8_pack_size)(n, K, &size);
      unsigned char* p1 = t_alloc_aligned(size > 0 ? size : 64);
      unsigned char* p2 = t_alloc_aligned(size > 0 ? size : 64);
      memset(p1, 0x00, size);
      memset(p2, 0xFF, size);
      gemmi8_status s1 = s, s2 = s, s3 = s;
      void* p3 = NULL;
      if (s == SUCCESS) {
        s1 = (u8 ? gemmi8_qdu8_pack : gemmi8_qd8_pack)(n, K, b, K, GEMMI8_B_NK, scale, bias, p1,
                                                       size);
        s2 = (u8 ? gemmi8_qdu8_pack : gemmi8_qd8_pack)(n, K, b, K, GEMMI8_B_NK, scale, bias, p2,
                                                       size);
        s3 = (u8 ? gemmi8_qdu8_pack_alloc : gemmi8_qd8_pack_alloc)(n, K, b, K, GEMMI8_B_NK, scale,
                                                                   bias, &p3);
      }
      size_t first = size;
      for (size_t i = 0; i < size; i++) {
        if (p1[i] != p2[i] || (p3 != NULL && p1[i] != ((unsigned char*) p3)[i])) {
          first = i;
          break;
        }
      }
      t_expect(s1 == SUCCESS && s2 == SUCCESS && s3 == SUCCESS && first == size, defect,
               "%s n %zu k %d: \"%s\" \"%s\" \"%s\"; packings into buffers of 0x00, 0xFF and "
               "the allocated one differ at byte %zu of %zu",
               u8 ? "qdu8" : "qd8", n, K, sname(s1), sname(s2), sname(s3), first, size);
      gemmi8_packed_free(p3);
      free(p1);
      free(p2);
    }
  }
}

/* ---- 10 -------------------------------------------------------------------------------- */

/* A finite row whose range, max(x, 0) - min(x, 0), overflows float quantizes to an
 * infinite scale (gemmi8_quantize_rows_*), which the GEMM refuses: the linear layer,
 * "the same as the two calls", returned invalid_parameter, but after it had quantized
 * into the caller's workspace. It now refuses the row before writing anything; a
 * range just short of overflowing runs, and gives the two calls' bits. Found by the
 * qd8 fuzz target. */
static void qd8_linear_range_overflow(void)
{
  const char* defect = "defect 10 qd8_linear_range_overflow";
  enum { M = 3, N = 20, K = 33 };
  int8_t b[N * K];
  float scale[N], x[M * K];
  t_fill_random(b, sizeof(b));
  for (size_t j = 0; j < N; j++) scale[j] = 1e-3f;
  for (size_t i = 0; i < M * K; i++) x[i] = (float) t_range(-100, 100) / 16.0f;
  size_t ws_size = 0;
  gemmi8_qd8_linear_workspace_size(M, K, &ws_size);
  unsigned char* ws = t_alloc_aligned(ws_size);
  unsigned char* q = t_alloc(M * K);
  static const struct {
    float hi, lo;
    int overflows;
  } ranges[] = { { FLT_MAX, -FLT_MAX, 1 },
                 { 0x1p127f, -0x1p127f, 1 },
                 { FLT_MAX, -0x1p103f, 1 } /* a tie, to even: 2^128 */,
                 { FLT_MAX, -0x1p102f, 0 },
                 { 0x1p127f, -0x1.fffffcp126f, 0 },
                 { FLT_MAX, 0.0f, 0 },
                 { 0.0f, -FLT_MAX, 0 } };
  for (int u8 = 0; u8 <= 1; u8++) {
    const char* type = u8 ? "qdu8" : "qd8";
    void* packed = NULL;
    gemmi8_status s = (u8 ? gemmi8_qdu8_pack_alloc : gemmi8_qd8_pack_alloc)(N, K, b, K, GEMMI8_B_NK,
                                                                            scale, NULL, &packed);
    if (!t_expect(s == SUCCESS, defect, "%s pack: \"%s\"", type, sname(s))) continue;
    for (size_t r = 0; r < T_COUNT(ranges); r++) {
      for (size_t row = 0; row < M; row++) {
        const float keep0 = x[row * K + 3], keep1 = x[row * K + 20];
        x[row * K + 3] = ranges[r].hi;
        x[row * K + 20] = ranges[r].lo;
        /* the two calls */
        float qs[M], c2[M * N];
        int32_t qz[M];
        gemmi8_status s2 = u8 ? gemmi8_quantize_rows_u8(M, K, x, K, q, K, qs, qz)
                              : gemmi8_quantize_rows_s8(M, K, x, K, q, K, qs, qz);
        const int infinite = s2 == SUCCESS && !isfinite(qs[row]);
        if (s2 == SUCCESS) {
          s2 = u8 ? gemmi8_qdu8_gemm_f32(M, N, K, q, K, qs, qz, packed, -INFINITY, INFINITY, c2, N)
                  : gemmi8_qd8_gemm_f32(M, N, K, (const int8_t*) q, K, qs, qz, packed, -INFINITY,
                                        INFINITY, c2, N);
        }
        /* the one call, with a workspace and without */
        canary c, w;
        canary_init(&c);
        t_fill_random(ws, ws_size);
        memcpy(w.bytes, ws, ws_size < sizeof(w.bytes) ? ws_size : sizeof(w.bytes));
        memcpy(w.copy, w.bytes, sizeof(w.copy));
        s = (u8 ? gemmi8_qdu8_linear_f32 : gemmi8_qd8_linear_f32)(
            M, N, K, x, K, packed, -INFINITY, INFINITY, (float*) c.bytes, N, ws, ws_size, NULL);
        const int ws_intact =
            memcmp(ws, w.copy, ws_size < sizeof(w.copy) ? ws_size : sizeof(w.copy)) == 0;
        const gemmi8_status want = ranges[r].overflows ? INVALID : SUCCESS;
        char what[160];
        snprintf(what, sizeof(what), "%s row %zu from %a to %a: scale %s, the two calls \"%s\"",
                 type, row, (double) ranges[r].lo, (double) ranges[r].hi,
                 infinite ? "infinite" : "finite", sname(s2));
        t_expect(infinite == ranges[r].overflows && s2 == want, defect, "%s", what);
        if (want == INVALID) {
          t_expect(s == INVALID && canary_intact(&c) && ws_intact, defect, "%s; linear: \"%s\"%s%s",
                   what, sname(s), canary_intact(&c) ? "" : ", C written",
                   ws_intact ? "" : ", workspace written");
          canary_init(&c);
          s = (u8 ? gemmi8_qdu8_linear_f32 : gemmi8_qd8_linear_f32)(
              M, N, K, x, K, packed, -INFINITY, INFINITY, (float*) c.bytes, N, NULL, 0, NULL);
          expect_refused(defect, "the same, workspace NULL", s, INVALID, &c);
        } else {
          t_expect(s == SUCCESS && memcmp(c.bytes, c2, sizeof(c2)) == 0, defect,
                   "%s; linear: \"%s\", bits %s", what, sname(s),
                   memcmp(c.bytes, c2, sizeof(c2)) == 0 ? "the same" : "differ");
        }
        x[row * K + 3] = keep0;
        x[row * K + 20] = keep1;
      }
    }
    gemmi8_packed_free(packed);
  }
  free(ws);
  free(q);
}

/* ---- 11 -------------------------------------------------------------------------------- */

/* gemmi8_qd8_linear_workspace_size summed the rows' bytes and 8 bytes a row straight
 * into *size: where only that sum overflows, the wrapped value was stored and the call
 * returned invalid_parameter. Found by the qd8 fuzz target (m = k = 2^32 - 1). */
static void workspace_size_wrapped_write(void)
{
  const char* defect = "defect 11 workspace_size_wrapped_write";
  static const size_t sizes[][2] = {
    { UINT32_MAX, UINT32_MAX }, /* m * k fits, + 8 m does not (32-bit: m * k does not) */
#if SIZE_MAX > UINT32_MAX
    { (size_t) 1 << 32, UINT32_MAX },
#endif
    { 8, SIZE_MAX / 8 - 7 }, /* 2^64 - 64 bytes of rows, + 64 */
    { SIZE_MAX / 8, 7 },     /* rows fit; rows + 8 m do not */
  };
  for (size_t i = 0; i < T_COUNT(sizes); i++) {
    size_t size = 0x5A5A5A;
    const gemmi8_status s = gemmi8_qd8_linear_workspace_size(sizes[i][0], sizes[i][1], &size);
    t_expect(s == INVALID && size == 0x5A5A5A, defect,
             "gemmi8_qd8_linear_workspace_size(%zu, %zu): \"%s\", size %zu%s", sizes[i][0],
             sizes[i][1], sname(s), size, size == 0x5A5A5A ? "" : " (written)");
  }
  /* and sizes near the limit that fit are served */
  size_t size = 0;
  const gemmi8_status s = gemmi8_qd8_linear_workspace_size(1, SIZE_MAX - 127, &size);
  t_expect(s == SUCCESS && size >= SIZE_MAX - 127 + 8, defect,
           "gemmi8_qd8_linear_workspace_size(1, SIZE_MAX - 127): \"%s\", size %zu", sname(s), size);
}

/* ---- 12 -------------------------------------------------------------------------------- */

/* The quantization helpers take counts and rows x cols from the caller and read and
 * write arrays of them: a product that wraps (rows x cols beyond SIZE_MAX, or its bytes
 * beyond PTRDIFF_MAX) must be refused before any read past the small buffers given
 * here, and nothing written; so must counts whose arrays cannot exist, and calibration
 * sizes whose histograms or counters would wrap. */
static void qhelp_sizes_near_size_max(void)
{
  const char* defect = "defect 12 qhelp_sizes_near_size_max";
  static const size_t dims[][2] = {
    { SIZE_MAX, SIZE_MAX },
    { SIZE_MAX / 2 + 1, 2 },         /* rows x cols = 2^64: wraps to 0 */
    { (size_t) 1 << (sizeof(size_t) * 4), (size_t) 1 << (sizeof(size_t) * 4) }, /* wraps to 0 */
    { 1, SIZE_MAX / 4 + 1 },         /* elements fit, float bytes do not */
    { 3, (size_t) PTRDIFF_MAX / 8 }, /* float bytes past PTRDIFF_MAX */
  };
  const float x[4] = {1.0f, 2.0f, 3.0f, 4.0f}, one = 1.0f;
  const int32_t zero = 0;
  canary c;
  for (size_t i = 0; i < T_COUNT(dims); i++) {
    char what[96];
    snprintf(what, sizeof(what), "rows %zu cols %zu", dims[i][0], dims[i][1]);
    canary_init(&c);
    expect_refused(defect, what,
                   gemmi8_quantize_f32(gemmi8_qscheme_onnx, gemmi8_qrange_u8, gemmi8_qaxis_tensor,
                                       dims[i][0], dims[i][1], x, &one, &zero, c.bytes),
                   INVALID, &c);
    expect_refused(defect, what,
                   gemmi8_dequantize_f32(gemmi8_qrange_s8, gemmi8_qaxis_tensor, dims[i][0],
                                         dims[i][1], x, &one, &zero, (float*) (void*) c.bytes),
                   INVALID, &c);
  }
  static const size_t counts[] = { SIZE_MAX, SIZE_MAX / 4 + 1, (size_t) PTRDIFF_MAX / 2 };
  for (size_t i = 0; i < T_COUNT(counts); i++) {
    char what[64];
    snprintf(what, sizeof(what), "count %zu", counts[i]);
    canary_init(&c);
    int32_t* out = (int32_t*) (void*) (c.bytes + 512);
    expect_refused(defect, what,
                   gemmi8_choose_qparams(gemmi8_qscheme_tflite, gemmi8_qrange_s8, counts[i], x, x,
                                         (float*) (void*) c.bytes, out),
                   INVALID, &c);
    expect_refused(defect, what,
                   gemmi8_quantize_bias(gemmi8_qscheme_onnx, counts[i], x, 1.0f, x, 0, out),
                   INVALID, &c);
    expect_refused(defect, what,
                   gemmi8_requant_scales(gemmi8_qscheme_tflite, counts[i], 1.0f, x, 1.0f,
                                         (float*) (void*) c.bytes, out, out + 64),
                   INVALID, &c);
  }
  gemmi8_calibration* cal = NULL;
  static const size_t channels[] = { SIZE_MAX, SIZE_MAX / 16384 + 1, (size_t) PTRDIFF_MAX / 16384 };
  for (size_t i = 0; i < T_COUNT(channels); i++) {
    const gemmi8_status st = gemmi8_calibration_create(channels[i], &cal);
    t_expect((st == INVALID || st == gemmi8_status_out_of_memory) && cal == NULL, defect,
             "gemmi8_calibration_create(%zu): \"%s\"%s", channels[i], sname(st),
             cal == NULL ? "" : " (written)");
    if (cal != NULL) {
      gemmi8_calibration_destroy(cal);
      cal = NULL;
    }
  }
  if (gemmi8_calibration_create(1, &cal) == SUCCESS) {
    expect_refused(defect, "calibration_update count SIZE_MAX",
                   gemmi8_calibration_update(cal, SIZE_MAX, x), INVALID, NULL);
    expect_refused(defect, "calibration_update count SIZE_MAX / 4 + 1",
                   gemmi8_calibration_update(cal, SIZE_MAX / 4 + 1, x), INVALID, NULL);
    float lo = 7.0f, hi = 7.0f;
    expect_refused(defect, "calibration_range after refused updates",
                   gemmi8_calibration_range(cal, 100.0, &lo, &hi), INVALID, NULL);
    t_expect(lo == 7.0f && hi == 7.0f, defect, "calibration_range wrote without values");
    gemmi8_calibration_destroy(cal);
  } else {
    t_fail(defect, "gemmi8_calibration_create(1) failed");
  }
}

void test_hardening(void)
{
  bin_pack_rows_extent_overflow();
  bin_words_and_block_count_wrap();
  store_past_m_huge_stride();
  packed_header_damage();
  pack_alloc_validates_first();
  pack_size_exact();
  zero_point_add_wraps();
  isa_names_and_env();
  qd8_pack_tail_padding();
  qd8_linear_range_overflow();
  workspace_size_wrapped_write();
  qhelp_sizes_near_size_max();
}
