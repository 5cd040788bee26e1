/*
 * Bad inputs of every entry point in gemmi8.h: each returns the documented status
 * and leaves every output (C, packed buffer, *packed, *size, multiplier/shift) byte
 * for byte as it was. Also status strings, the version and the ISA name.
 *
 * Where the header does not decide between two statuses (noted at the call), either
 * is accepted, but never success and never a write.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa.h"
#include "test.h"

/* ---- watched outputs ---------------------------------------------------------------- */

enum { max_watched = 4 };
static struct {
  void* ptr;
  size_t size;
  unsigned char* copy;
} watched[max_watched];
static size_t n_watched = 0;

static void watch(void* p, size_t size)
{
  watched[n_watched].ptr = p;
  watched[n_watched].size = size;
  watched[n_watched].copy = t_dup(p, size);
  n_watched++;
}

static void unwatch_all(void)
{
  for (size_t i = 0; i < n_watched; i++) free(watched[i].copy);
  n_watched = 0;
}

/* 1 if every watched buffer is as it was; then restores them all. */
static int untouched_then_restore(void)
{
  int same = 1;
  for (size_t i = 0; i < n_watched; i++) {
    if (memcmp(watched[i].ptr, watched[i].copy, watched[i].size) != 0) same = 0;
    memcpy(watched[i].ptr, watched[i].copy, watched[i].size);
  }
  return same;
}

static const char* name(gemmi8_status s)
{
  const char* n = gemmi8_status_string(s);
  return n != NULL ? n : "(NULL)";
}

/* The call must return want (or want2, when the header allows both) and, unless it
 * succeeded, write nothing. */
static void expect2(const char* func, const char* what, gemmi8_status got, gemmi8_status want,
                    gemmi8_status want2)
{
  int same = untouched_then_restore();
  int status_ok = got == want || got == want2;
  int ok = status_ok && (same || got == gemmi8_status_success);
  if (want == want2)
    t_expect(ok, func, "%s: status \"%s\", expected \"%s\"%s", what, name(got), name(want),
             same || got == gemmi8_status_success ? "" : "; an output was written");
  else
    t_expect(ok, func, "%s: status \"%s\", expected \"%s\" or \"%s\"%s", what, name(got),
             name(want), name(want2),
             same || got == gemmi8_status_success ? "" : "; an output was written");
}

static void expect(const char* func, const char* what, gemmi8_status got, gemmi8_status want)
{
  expect2(func, what, got, want, want);
}

#define INVALID gemmi8_status_invalid_parameter
#define UNSUPPORTED gemmi8_status_unsupported_parameter
#define SUCCESS gemmi8_status_success
#define HUGE_SIZE (SIZE_MAX / 2)

/* ---- shapes used throughout ------------------------------------------------------------ */

enum { M = 3, N = 5, K = 130 }; /* K: 3 words of bits; N < K to tell NK and KN apart */

typedef struct fixture {
  uint8_t a[M * K];
  uint8_t b[N * K];
  uint8_t b_zp[N];
  int32_t bias[N];
  uint64_t a_bits[M * 3];
  uint64_t b_bits[N * 3];
  size_t qu8_size, qs8_size, bin_size;
  void* qu8; /* packed, N x K */
  void* qs8;
  void* qu8s8;
  void* bin;
} fixture;

static int fixture_make(fixture* f)
{
  memset(f, 0, sizeof(*f));
  t_fill_random(f->a, sizeof(f->a));
  t_fill_random(f->b, sizeof(f->b));
  t_fill_random(f->b_zp, sizeof(f->b_zp));
  t_fill_random(f->a_bits, sizeof(f->a_bits));
  t_fill_random(f->b_bits, sizeof(f->b_bits));
  for (size_t j = 0; j < N; j++) f->bias[j] = (int32_t) t_range(-1000, 1000);
  gemmi8_status s1 = gemmi8_qu8_pack_size(N, K, &f->qu8_size);
  gemmi8_status s2 = gemmi8_qs8_pack_size(N, K, &f->qs8_size);
  gemmi8_status s3 = gemmi8_bin_pack_size(N, K, &f->bin_size);
  if (!t_expect(s1 == SUCCESS && s2 == SUCCESS && s3 == SUCCESS, "gemmi8_*_pack_size",
                "N %d, K %d: statuses \"%s\" \"%s\" \"%s\"", N, K, name(s1), name(s2), name(s3)))
    return 0;
  f->qu8 = t_alloc_aligned(f->qu8_size);
  f->qs8 = t_alloc_aligned(f->qs8_size);
  f->bin = t_alloc_aligned(f->bin_size);
  s1 = gemmi8_qu8_pack(N, K, f->b, K, GEMMI8_B_NK, 128, f->b_zp, 1, f->bias, f->qu8, f->qu8_size);
  s2 = gemmi8_qs8_pack(N, K, (const int8_t*) f->b, K, GEMMI8_B_NK, 0, f->bias, f->qs8, f->qs8_size);
  s3 = gemmi8_bin_pack(N, K, f->b_bits, 3, GEMMI8_B_NK, f->bin, f->bin_size);
  if (s1 == SUCCESS)
    s1 = gemmi8_qu8s8_pack_alloc(N, K, (const int8_t*) f->b, K, GEMMI8_B_NK, 128, f->bias, &f->qu8s8);
  return t_expect(s1 == SUCCESS && s2 == SUCCESS && s3 == SUCCESS, "gemmi8_*_pack",
                  "N %d, K %d: statuses \"%s\" \"%s\" \"%s\"", N, K, name(s1), name(s2), name(s3));
}

static void fixture_free(fixture* f)
{
  free(f->qu8);
  free(f->qs8);
  free(f->bin);
  gemmi8_packed_free(f->qu8s8);
}

/* ---- quantized GEMM ------------------------------------------------------------------------ */

typedef enum qfunc { QU8, QS8, QU8_S32, QS8_S32, QU8S8, QU8S8_S32 } qfunc;
static const char* const qfunc_names[] = {"gemmi8_qu8_gemm",     "gemmi8_qs8_gemm",
                                          "gemmi8_qu8_gemm_s32", "gemmi8_qs8_gemm_s32",
                                          "gemmi8_qu8s8_gemm",   "gemmi8_qu8s8_gemm_s32"};

static gemmi8_status call_q(qfunc f, size_t m, size_t n, size_t k, const void* a, size_t a_stride,
                            const void* packed, const gemmi8_requant* rq, void* c,
                            size_t c_stride)
{
  switch (f) {
    case QU8:
      return gemmi8_qu8_gemm(m, n, k, a, a_stride, packed, rq, c, c_stride);
    case QS8:
      return gemmi8_qs8_gemm(m, n, k, a, a_stride, packed, rq, c, c_stride);
    case QU8_S32:
      return gemmi8_qu8_gemm_s32(m, n, k, a, a_stride, packed, c, c_stride);
    case QS8_S32:
      return gemmi8_qs8_gemm_s32(m, n, k, a, a_stride, packed, c, c_stride);
    case QU8S8:
      return gemmi8_qu8s8_gemm(m, n, k, a, a_stride, packed, rq, c, c_stride);
    case QU8S8_S32:
      return gemmi8_qu8s8_gemm_s32(m, n, k, a, a_stride, packed, c, c_stride);
  }
  return SUCCESS;
}

static void qgemm_errors(const fixture* fx)
{
  int32_t c[M * N + 16]; /* big enough for either output type */
  int32_t mult1 = INT32_C(1) << 30, shift1 = -3;
  for (int fi = QU8; fi <= QU8S8_S32; fi++) {
    qfunc f = (qfunc) fi;
    const char* fn = qfunc_names[f];
    int is_signed = f == QS8 || f == QS8_S32;
    int mixed = f == QU8S8 || f == QU8S8_S32;
    const void* packed = is_signed ? fx->qs8 : (mixed ? fx->qu8s8 : fx->qu8);
    const void* other_type = is_signed ? fx->qu8 : (mixed ? fx->qu8 : fx->qu8s8);
    gemmi8_requant rq = {gemmi8_requant_fixedpoint,
                         0,
                         &mult1,
                         &shift1,
                         NULL,
                         is_signed ? 0 : 128,
                         is_signed ? -128 : 0,
                         is_signed ? 127 : 255};
    const gemmi8_requant* r = &rq;
    t_fill_random(c, sizeof(c));
    watch(c, sizeof(c));
    expect(fn, "valid call", call_q(f, M, N, K, fx->a, K, packed, r, c, N), SUCCESS);
    expect(fn, "a NULL", call_q(f, M, N, K, NULL, K, packed, r, c, N), INVALID);
    expect(fn, "packed_b NULL", call_q(f, M, N, K, fx->a, K, NULL, r, c, N), INVALID);
    expect(fn, "c NULL", call_q(f, M, N, K, fx->a, K, packed, r, NULL, N), INVALID);
    if (f == QU8 || f == QS8 || f == QU8S8)
      expect(fn, "rq NULL", call_q(f, M, N, K, fx->a, K, packed, NULL, c, N), INVALID);
    expect(fn, "m 0", call_q(f, 0, N, K, fx->a, K, packed, r, c, N), INVALID);
    expect(fn, "n 0", call_q(f, M, 0, K, fx->a, K, packed, r, c, N), INVALID);
    expect(fn, "k 0", call_q(f, M, N, 0, fx->a, K, packed, r, c, N), INVALID);
    expect(fn, "a_stride k - 1", call_q(f, M, N, K, fx->a, K - 1, packed, r, c, N), INVALID);
    expect(fn, "c_stride n - 1", call_q(f, M, N, K, fx->a, K, packed, r, c, N - 1), INVALID);
    expect(fn, "m SIZE_MAX / 2 (m * a_stride overflows)",
           call_q(f, HUGE_SIZE, N, K, fx->a, K, packed, r, c, N), INVALID);
    expect(fn, "a_stride SIZE_MAX / 2 (overflows over 3 rows)",
           call_q(f, M, N, K, fx->a, HUGE_SIZE, packed, r, c, N), INVALID);
    expect(fn, "c_stride SIZE_MAX / 2 (overflows over 3 rows)",
           call_q(f, M, N, K, fx->a, K, packed, r, c, HUGE_SIZE), INVALID);
    expect(fn, "n + 1 (not the packed n)", call_q(f, M, N + 1, K, fx->a, K, packed, r, c, N + 1),
           INVALID);
    expect(fn, "n - 1 (not the packed n)", call_q(f, M, N - 1, K, fx->a, K, packed, r, c, N),
           INVALID);
    expect(fn, "k + 1 (not the packed k)", call_q(f, M, N, K + 1, fx->a, K + 1, packed, r, c, N),
           INVALID);
    expect(fn, "k - 1 (not the packed k)", call_q(f, M, N, K - 1, fx->a, K, packed, r, c, N),
           INVALID);
    expect(fn, is_signed || mixed ? "qu8 weights" : "qu8s8 weights",
           call_q(f, M, N, K, fx->a, K, other_type, r, c, N), INVALID);
    if (!is_signed)
      expect(fn, "qs8 weights", call_q(f, M, N, K, fx->a, K, fx->qs8, r, c, N), INVALID);
    expect(fn, "binary weights", call_q(f, M, N, K, fx->a, K, fx->bin, r, c, N), INVALID);
    unwatch_all();
  }
}

/* Requantization parameters of the two requantizing GEMMs. */
static void requant_errors(const fixture* fx)
{
  int8_t c[M * N + 16];
  for (int fi = QU8; fi <= QS8; fi++) {
    qfunc f = (qfunc) fi;
    const char* fn = qfunc_names[f];
    int is_signed = f == QS8;
    const void* packed = is_signed ? fx->qs8 : fx->qu8;
    int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
    int32_t mult[N], shift[N];
    float scale[N];
    for (size_t j = 0; j < N; j++) {
      mult[j] = INT32_C(1) << 30;
      shift[j] = -2;
      scale[j] = 0.25f;
    }
    const gemmi8_requant base = {
        gemmi8_requant_fixedpoint, 0, mult, shift, NULL, (lo + hi) / 2, lo, hi};
    gemmi8_requant fp = base;
    fp.mode = gemmi8_requant_fp32;
    fp.multiplier = NULL;
    fp.shift = NULL;
    fp.scale = scale;
    gemmi8_requant r;
    char what[96];
    t_fill_random(c, sizeof(c));
    watch(c, sizeof(c));
#define RUN(rq) call_q(f, M, N, K, fx->a, K, packed, (rq), c, N)
    expect(fn, "fixed-point, scale NULL (ignored)", RUN(&base), SUCCESS);
    expect(fn, "fp32, multiplier and shift NULL (ignored)", RUN(&fp), SUCCESS);
    r = base;
    r.zero_point = lo;
    r.min = hi - 10;
    expect(fn, "zero point outside the clamp window (valid)", RUN(&r), SUCCESS);
    r = base;
    r.min = r.max = lo + 3;
    expect(fn, "min == max (valid)", RUN(&r), SUCCESS);
    /* zero point and clamp out of the type's range, min > max */
    const int32_t outside[] = {lo - 1, hi + 1, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < T_COUNT(outside); i++) {
      r = base;
      r.zero_point = outside[i];
      snprintf(what, sizeof(what), "zero_point %d", (int) outside[i]);
      expect(fn, what, RUN(&r), INVALID);
      r = base;
      r.min = outside[i];
      if (r.min > r.max) r.max = r.min;
      snprintf(what, sizeof(what), "min %d, max %d", (int) r.min, (int) r.max);
      expect(fn, what, RUN(&r), INVALID);
      r = base;
      r.max = outside[i];
      if (r.max < r.min) r.min = r.max;
      snprintf(what, sizeof(what), "min %d, max %d", (int) r.min, (int) r.max);
      expect(fn, what, RUN(&r), INVALID);
    }
    r = base;
    r.min = lo + 11;
    r.max = lo + 10;
    expect(fn, "min > max", RUN(&r), INVALID);
    /* fixed-point parameters, per tensor and in channels 0, 2 (scanned four at a time)
     * and the last of N (the scalar tail) */
    const int32_t bad_mult[] = {-1, INT32_MIN};
    const int32_t bad_shift[] = {31, -32, INT32_MAX, INT32_MIN};
    static const size_t channels_at[] = {0, 0, 2, N - 1};
    for (size_t variant = 0; variant < T_COUNT(channels_at); variant++) {
      const int per_channel = variant != 0;
      const size_t at = channels_at[variant];
      for (size_t i = 0; i < T_COUNT(bad_mult); i++) {
        r = base;
        r.per_channel = per_channel;
        mult[at] = bad_mult[i];
        snprintf(what, sizeof(what), "%s multiplier[%zu] = %d",
                 per_channel ? "per-channel" : "per-tensor", at, (int) bad_mult[i]);
        expect(fn, what, RUN(&r), INVALID);
        mult[at] = INT32_C(1) << 30;
      }
      for (size_t i = 0; i < T_COUNT(bad_shift); i++) {
        r = base;
        r.per_channel = per_channel;
        shift[at] = bad_shift[i];
        snprintf(what, sizeof(what), "%s shift[%zu] = %d",
                 per_channel ? "per-channel" : "per-tensor", at, (int) bad_shift[i]);
        expect(fn, what, RUN(&r), INVALID);
        shift[at] = -2;
      }
      const float bad_scale[] = {0.0f, -0.0f, -1.0f, NAN, INFINITY, -INFINITY, -FLT_TRUE_MIN};
      for (size_t i = 0; i < T_COUNT(bad_scale); i++) {
        r = fp;
        r.per_channel = per_channel;
        scale[at] = bad_scale[i];
        snprintf(what, sizeof(what), "fp32 %s scale[%zu] = %g",
                 per_channel ? "per-channel" : "per-tensor", at, (double) bad_scale[i]);
        expect(fn, what, RUN(&r), INVALID);
        scale[at] = 0.25f;
      }
      r = fp;
      r.per_channel = per_channel;
      scale[at] = FLT_TRUE_MIN;
      expect(fn, "fp32 smallest subnormal scale (positive: valid)", RUN(&r), SUCCESS);
      scale[at] = FLT_MAX;
      expect(fn, "fp32 scale FLT_MAX (valid)", RUN(&r), SUCCESS);
      scale[at] = 0.25f;
    }
    r = base;
    r.multiplier = NULL;
    expect(fn, "fixed-point, multiplier NULL", RUN(&r), INVALID);
    r = base;
    r.shift = NULL;
    expect(fn, "fixed-point, shift NULL", RUN(&r), INVALID);
    r = fp;
    r.scale = NULL;
    expect(fn, "fp32, scale NULL", RUN(&r), INVALID);
    r = base;
    r.mode = (gemmi8_requant_mode) 7;
    /* an unknown mode: invalid, or "valid but not implemented" */
    expect2(fn, "mode 7", RUN(&r), INVALID, UNSUPPORTED);
#undef RUN
    unwatch_all();
  }
}

/* ---- weight packing ---------------------------------------------------------------------- */

static gemmi8_status pack_q(int is_signed, size_t n, size_t k, const uint8_t* b, size_t b_stride,
                            uint32_t flags, const uint8_t* b_zp, void* packed, size_t packed_size)
{
  if (is_signed)
    return gemmi8_qs8_pack(n, k, (const int8_t*) b, b_stride, flags, -3, NULL, packed, packed_size);
  return gemmi8_qu8_pack(n, k, b, b_stride, flags, 7, b_zp, 1, NULL, packed, packed_size);
}

static gemmi8_status pack_q_alloc(int is_signed, size_t n, size_t k, const uint8_t* b,
                                  size_t b_stride, uint32_t flags, const uint8_t* b_zp,
                                  void** packed)
{
  if (is_signed)
    return gemmi8_qs8_pack_alloc(n, k, (const int8_t*) b, b_stride, flags, -3, NULL, packed);
  return gemmi8_qu8_pack_alloc(n, k, b, b_stride, flags, 7, b_zp, 1, NULL, packed);
}

static void qpack_errors(const fixture* fx)
{
  for (int is_signed = 0; is_signed <= 1; is_signed++) {
    const char* fn = is_signed ? "gemmi8_qs8_pack" : "gemmi8_qu8_pack";
    const char* fn_alloc = is_signed ? "gemmi8_qs8_pack_alloc" : "gemmi8_qu8_pack_alloc";
    const char* fn_size = is_signed ? "gemmi8_qs8_pack_size" : "gemmi8_qu8_pack_size";
    size_t max_k = is_signed ? GEMMI8_QS8_MAX_K : GEMMI8_QU8_MAX_K;
    size_t size = is_signed ? fx->qs8_size : fx->qu8_size;
    const uint8_t* b = fx->b;
    const uint8_t* zp = fx->b_zp;

    /* pack_size */
    size_t out = 0x5A5A5A;
    watch(&out, sizeof(out));
    gemmi8_status (*size_fn)(size_t, size_t, size_t*) =
        is_signed ? gemmi8_qs8_pack_size : gemmi8_qu8_pack_size;
    expect(fn_size, "size NULL", size_fn(N, K, NULL), INVALID);
    expect(fn_size, "n 0", size_fn(0, K, &out), INVALID);
    expect(fn_size, "k 0", size_fn(N, 0, &out), INVALID);
    expect(fn_size, "k above the exact limit", size_fn(N, max_k + 1, &out), UNSUPPORTED);
    expect(fn_size, "n SIZE_MAX / 2 (size overflows)", size_fn(HUGE_SIZE, K, &out), UNSUPPORTED);
    expect(fn_size, "n SIZE_MAX (size overflows)", size_fn(SIZE_MAX, 1, &out), UNSUPPORTED);
    unwatch_all();
    out = 0;
    gemmi8_status st = size_fn(N, max_k, &out);
    t_expect(st == SUCCESS && out >= (size_t) N * max_k, fn_size,
             "k at the exact limit: status \"%s\", size %zu", name(st), out);
    st = size_fn(N, K, &out);
    t_expect(st == SUCCESS && out == size && out >= (size_t) N * K, fn_size,
             "repeated query: status \"%s\", size %zu (first %zu)", name(st), out, size);

    /* pack into caller memory */
    size_t cap = size + 2 * GEMMI8_PACK_ALIGNMENT;
    unsigned char* buf = t_alloc_aligned(cap);
    t_fill_random(buf, cap);
    watch(buf, cap);
    expect(fn, "valid call", pack_q(is_signed, N, K, b, K, GEMMI8_B_NK, zp, buf, size), SUCCESS);
    expect(fn, "packed_size larger than needed (valid)",
           pack_q(is_signed, N, K, b, K, GEMMI8_B_NK, zp, buf, cap), SUCCESS);
    expect(fn, "B K x N with b_stride n (valid)",
           pack_q(is_signed, N, K, b, N, GEMMI8_B_KN, zp, buf, size), SUCCESS);
    expect(fn, "n 0", pack_q(is_signed, 0, K, b, K, GEMMI8_B_NK, zp, buf, size), INVALID);
    expect(fn, "k 0", pack_q(is_signed, N, 0, b, K, GEMMI8_B_NK, zp, buf, size), INVALID);
    expect(fn, "b NULL", pack_q(is_signed, N, K, NULL, K, GEMMI8_B_NK, zp, buf, size), INVALID);
    if (!is_signed)
      expect(fn, "b_zero_point NULL", pack_q(0, N, K, b, K, GEMMI8_B_NK, NULL, buf, size), INVALID);
    expect(fn, "packed NULL", pack_q(is_signed, N, K, b, K, GEMMI8_B_NK, zp, NULL, size), INVALID);
    expect(fn, "N x K, b_stride k - 1",
           pack_q(is_signed, N, K, b, K - 1, GEMMI8_B_NK, zp, buf, size), INVALID);
    expect(fn, "N x K, b_stride n (< k)", pack_q(is_signed, N, K, b, N, GEMMI8_B_NK, zp, buf, size),
           INVALID);
    expect(fn, "K x N, b_stride n - 1",
           pack_q(is_signed, N, K, b, N - 1, GEMMI8_B_KN, zp, buf, size), INVALID);
    const uint32_t bad_flags[] = {2u, 3u, 0x80000000u};
    for (size_t i = 0; i < T_COUNT(bad_flags); i++) {
      char what[48];
      snprintf(what, sizeof(what), "flags 0x%x", (unsigned) bad_flags[i]);
      expect(fn, what, pack_q(is_signed, N, K, b, K, bad_flags[i], zp, buf, size), INVALID);
    }
    const size_t offsets[] = {1, 4, 8, 32};
    for (size_t i = 0; i < T_COUNT(offsets); i++) {
      char what[48];
      snprintf(what, sizeof(what), "packed misaligned by %zu bytes", offsets[i]);
      expect(fn, what, pack_q(is_signed, N, K, b, K, GEMMI8_B_NK, zp, buf + offsets[i], size),
             INVALID);
    }
    expect(fn, "packed_size one byte short",
           pack_q(is_signed, N, K, b, K, GEMMI8_B_NK, zp, buf, size - 1), INVALID);
    expect(fn, "packed_size 0", pack_q(is_signed, N, K, b, K, GEMMI8_B_NK, zp, buf, 0), INVALID);
    /* Overflowing sizes: the header lists neither status for pack; the buffer is too
     * small (invalid) and the size overflows (pack_size says unsupported). */
    expect2(fn, "n SIZE_MAX / 2", pack_q(is_signed, HUGE_SIZE, K, b, K, GEMMI8_B_NK, zp, buf, cap),
            INVALID, UNSUPPORTED);
    expect2(fn, "b_stride SIZE_MAX / 2 (overflows over n rows)",
            pack_q(is_signed, N, K, b, HUGE_SIZE, GEMMI8_B_NK, zp, buf, cap), INVALID, UNSUPPORTED);
    unwatch_all();
    free(buf);

    /* K above the exact limit, with a buffer that would be large enough. */
    size_t big_k = max_k + 1;
    uint8_t* big_b = t_alloc(big_k);
    memset(big_b, 1, big_k);
    size_t big_cap = (size_t) 8 << 20;
    unsigned char* big = t_alloc_aligned(big_cap);
    memset(big, 0xA5, big_cap);
    watch(big, big_cap);
    expect(fn, "k above the exact limit",
           pack_q(is_signed, 1, big_k, big_b, big_k, GEMMI8_B_NK, zp, big, big_cap), UNSUPPORTED);
    unwatch_all();
    free(big);

    /* allocating variant */
    void* sentinel = (void*) &out;
    void* packed = sentinel;
    watch(&packed, sizeof(packed));
    expect(fn_alloc, "packed NULL", pack_q_alloc(is_signed, N, K, b, K, GEMMI8_B_NK, zp, NULL),
           INVALID);
    expect(fn_alloc, "n 0", pack_q_alloc(is_signed, 0, K, b, K, GEMMI8_B_NK, zp, &packed), INVALID);
    expect(fn_alloc, "k 0", pack_q_alloc(is_signed, N, 0, b, K, GEMMI8_B_NK, zp, &packed), INVALID);
    expect(fn_alloc, "b NULL", pack_q_alloc(is_signed, N, K, NULL, K, GEMMI8_B_NK, zp, &packed),
           INVALID);
    if (!is_signed)
      expect(fn_alloc, "b_zero_point NULL", pack_q_alloc(0, N, K, b, K, GEMMI8_B_NK, NULL, &packed),
             INVALID);
    expect(fn_alloc, "b_stride k - 1",
           pack_q_alloc(is_signed, N, K, b, K - 1, GEMMI8_B_NK, zp, &packed), INVALID);
    expect(fn_alloc, "K x N, b_stride n - 1",
           pack_q_alloc(is_signed, N, K, b, N - 1, GEMMI8_B_KN, zp, &packed), INVALID);
    expect(fn_alloc, "flags 2", pack_q_alloc(is_signed, N, K, b, K, 2u, zp, &packed), INVALID);
    expect(fn_alloc, "k above the exact limit",
           pack_q_alloc(is_signed, 1, big_k, big_b, big_k, GEMMI8_B_NK, zp, &packed), UNSUPPORTED);
    expect2(fn_alloc, "n SIZE_MAX / 2 (size overflows)",
            pack_q_alloc(is_signed, HUGE_SIZE, K, b, K, GEMMI8_B_NK, zp, &packed), INVALID,
            UNSUPPORTED);
    unwatch_all();
    free(big_b);
    st = pack_q_alloc(is_signed, N, K, b, K, GEMMI8_B_NK, zp, &packed);
    t_expect(st == SUCCESS && packed != sentinel && packed != NULL &&
                 (uintptr_t) packed % GEMMI8_PACK_ALIGNMENT == 0,
             fn_alloc, "valid call: status \"%s\", packed %p", name(st), packed);
    if (st == SUCCESS) gemmi8_packed_free(packed);
  }
  gemmi8_packed_free(NULL);
  t_pass(); /* gemmi8_packed_free(NULL) returned */
}

/* ---- binary ------------------------------------------------------------------------------- */

typedef enum bpfunc { BP_F32, BP_S8, BP_U8 } bpfunc;
static const char* const bpfunc_names[] = {"gemmi8_bin_pack_rows_f32", "gemmi8_bin_pack_rows_s8",
                                           "gemmi8_bin_pack_rows_u8"};

static gemmi8_status call_bp(bpfunc f, size_t rows, size_t k, const void* x, size_t x_stride,
                             uint64_t* out, size_t out_stride)
{
  switch (f) {
    case BP_F32:
      return gemmi8_bin_pack_rows_f32(rows, k, x, x_stride, out, out_stride);
    case BP_S8:
      return gemmi8_bin_pack_rows_s8(rows, k, x, x_stride, out, out_stride);
    case BP_U8:
      return gemmi8_bin_pack_rows_u8(rows, k, x, x_stride, 128, out, out_stride);
  }
  return SUCCESS;
}

static void bin_pack_rows_errors(void)
{
  enum { rows = 3, k = 70, words = 2 };
  float x[rows * k];
  for (size_t i = 0; i < rows * k; i++) x[i] = (float) t_range(-5, 5);
  uint64_t out[rows * words + 8];
  t_fill_random(out, sizeof(out));
  for (int fi = BP_F32; fi <= BP_U8; fi++) {
    bpfunc f = (bpfunc) fi;
    const char* fn = bpfunc_names[f];
    watch(out, sizeof(out));
    expect(fn, "valid call", call_bp(f, rows, k, x, k, out, words), SUCCESS);
    expect(fn, "rows 0", call_bp(f, 0, k, x, k, out, words), INVALID);
    expect(fn, "k 0", call_bp(f, rows, 0, x, k, out, words), INVALID);
    expect(fn, "x NULL", call_bp(f, rows, k, NULL, k, out, words), INVALID);
    expect(fn, "out NULL", call_bp(f, rows, k, x, k, NULL, words), INVALID);
    expect(fn, "x_stride k - 1", call_bp(f, rows, k, x, k - 1, out, words), INVALID);
    expect(fn, "out_stride words - 1", call_bp(f, rows, k, x, k, out, words - 1), INVALID);
    expect(fn, "rows SIZE_MAX / 2", call_bp(f, HUGE_SIZE, k, x, k, out, words), INVALID);
    expect(fn, "x_stride SIZE_MAX / 2", call_bp(f, rows, k, x, HUGE_SIZE, out, words), INVALID);
    expect(fn, "out_stride SIZE_MAX / 2", call_bp(f, rows, k, x, k, out, HUGE_SIZE), INVALID);
    unwatch_all();
  }
}

static void bin_pack_errors(const fixture* fx)
{
  const char* fn = "gemmi8_bin_pack";
  size_t out = 0x5A5A5A;
  watch(&out, sizeof(out));
  expect("gemmi8_bin_pack_size", "size NULL", gemmi8_bin_pack_size(N, K, NULL), INVALID);
  expect("gemmi8_bin_pack_size", "n 0", gemmi8_bin_pack_size(0, K, &out), INVALID);
  expect("gemmi8_bin_pack_size", "k 0", gemmi8_bin_pack_size(N, 0, &out), INVALID);
  expect("gemmi8_bin_pack_size", "k GEMMI8_BIN_MAX_K + 1",
         gemmi8_bin_pack_size(N, GEMMI8_BIN_MAX_K + 1, &out), UNSUPPORTED);
  expect("gemmi8_bin_pack_size", "n SIZE_MAX / 2 (size overflows)",
         gemmi8_bin_pack_size(HUGE_SIZE, 640, &out), UNSUPPORTED);
  unwatch_all();

  size_t size = fx->bin_size;
  size_t cap = size + 2 * GEMMI8_PACK_ALIGNMENT;
  unsigned char* buf = t_alloc_aligned(cap);
  t_fill_random(buf, cap);
  const uint64_t* b = fx->b_bits; /* N rows of 3 words; as K x N: 1 word a row */
  uint64_t b_kn[K];
  t_fill_random(b_kn, sizeof(b_kn));
  watch(buf, cap);
  expect(fn, "valid call", gemmi8_bin_pack(N, K, b, 3, GEMMI8_B_NK, buf, size), SUCCESS);
  expect(fn, "K x N, b_stride 1 word (valid)",
         gemmi8_bin_pack(N, K, b_kn, 1, GEMMI8_B_KN, buf, size), SUCCESS);
  expect(fn, "packed_size larger than needed (valid)",
         gemmi8_bin_pack(N, K, b, 3, GEMMI8_B_NK, buf, cap), SUCCESS);
  expect(fn, "n 0", gemmi8_bin_pack(0, K, b, 3, GEMMI8_B_NK, buf, size), INVALID);
  expect(fn, "k 0", gemmi8_bin_pack(N, 0, b, 3, GEMMI8_B_NK, buf, size), INVALID);
  expect(fn, "b NULL", gemmi8_bin_pack(N, K, NULL, 3, GEMMI8_B_NK, buf, size), INVALID);
  expect(fn, "packed NULL", gemmi8_bin_pack(N, K, b, 3, GEMMI8_B_NK, NULL, size), INVALID);
  expect(fn, "N x K, b_stride words(k) - 1", gemmi8_bin_pack(N, K, b, 2, GEMMI8_B_NK, buf, size),
         INVALID);
  expect(fn, "K x N, b_stride 0 (< words(n))",
         gemmi8_bin_pack(N, K, b_kn, 0, GEMMI8_B_KN, buf, size), INVALID);
  expect(fn, "flags 2", gemmi8_bin_pack(N, K, b, 3, 2u, buf, size), INVALID);
  expect(fn, "packed misaligned by 8 bytes",
         gemmi8_bin_pack(N, K, b, 3, GEMMI8_B_NK, buf + 8, size), INVALID);
  expect(fn, "packed_size one byte short", gemmi8_bin_pack(N, K, b, 3, GEMMI8_B_NK, buf, size - 1),
         INVALID);
  /* K too large: no real B exists; the library must not read it. Which check comes
   * first (K or the buffer size) is not specified. */
  size_t huge_k = GEMMI8_BIN_MAX_K + 1;
  expect2(fn, "k GEMMI8_BIN_MAX_K + 1",
          gemmi8_bin_pack(1, huge_k, b, GEMMI8_BIN_WORDS(huge_k), GEMMI8_B_NK, buf, cap),
          UNSUPPORTED, INVALID);
  expect2(fn, "n SIZE_MAX / 2", gemmi8_bin_pack(HUGE_SIZE, K, b, 3, GEMMI8_B_NK, buf, cap), INVALID,
          UNSUPPORTED);
  unwatch_all();
  free(buf);

  void* sentinel = &out;
  void* packed = sentinel;
  fn = "gemmi8_bin_pack_alloc";
  watch(&packed, sizeof(packed));
  expect(fn, "packed NULL", gemmi8_bin_pack_alloc(N, K, b, 3, GEMMI8_B_NK, NULL), INVALID);
  expect(fn, "n 0", gemmi8_bin_pack_alloc(0, K, b, 3, GEMMI8_B_NK, &packed), INVALID);
  expect(fn, "k 0", gemmi8_bin_pack_alloc(N, 0, b, 3, GEMMI8_B_NK, &packed), INVALID);
  expect(fn, "b NULL", gemmi8_bin_pack_alloc(N, K, NULL, 3, GEMMI8_B_NK, &packed), INVALID);
  expect(fn, "b_stride words(k) - 1", gemmi8_bin_pack_alloc(N, K, b, 2, GEMMI8_B_NK, &packed),
         INVALID);
  expect(fn, "flags 3", gemmi8_bin_pack_alloc(N, K, b, 3, 3u, &packed), INVALID);
  expect(fn, "k GEMMI8_BIN_MAX_K + 1",
         gemmi8_bin_pack_alloc(1, huge_k, b, GEMMI8_BIN_WORDS(huge_k), GEMMI8_B_NK, &packed),
         UNSUPPORTED);
  expect2(fn, "n SIZE_MAX / 2", gemmi8_bin_pack_alloc(HUGE_SIZE, K, b, 3, GEMMI8_B_NK, &packed),
          INVALID, UNSUPPORTED);
  unwatch_all();
}

typedef enum bfunc { B_S32, B_F32, B_BITS } bfunc;
static const char* const bfunc_names[] = {"gemmi8_bin_gemm_s32", "gemmi8_bin_gemm_f32",
                                          "gemmi8_bin_gemm_bits"};

static gemmi8_status call_b(bfunc f, size_t m, size_t n, size_t k, const uint64_t* a,
                            size_t a_stride, const void* packed, void* c, size_t c_stride)
{
  static const float scale[N + 1] = {1, -1, 0.5f, 0, 2, 3};
  static const float bias[N + 1] = {0, 1, -1, 0.5f, -0.5f, 9};
  switch (f) {
    case B_S32:
      return gemmi8_bin_gemm_s32(m, n, k, a, a_stride, packed, c, c_stride);
    case B_F32:
      return gemmi8_bin_gemm_f32(m, n, k, a, a_stride, packed, scale, bias, c, c_stride);
    case B_BITS:
      return gemmi8_bin_gemm_bits(m, n, k, a, a_stride, packed, scale, bias, c, c_stride);
  }
  return SUCCESS;
}

static void bin_gemm_errors(const fixture* fx)
{
  uint64_t c[M * N + 8]; /* big enough for every output kind */
  const uint64_t* a = fx->a_bits;
  for (int fi = B_S32; fi <= B_BITS; fi++) {
    bfunc f = (bfunc) fi;
    const char* fn = bfunc_names[f];
    size_t cs = f == B_BITS ? 1 : N; /* smallest c_stride */
    t_fill_random(c, sizeof(c));
    watch(c, sizeof(c));
    expect(fn, "valid call", call_b(f, M, N, K, a, 3, fx->bin, c, cs), SUCCESS);
    if (f == B_F32)
      expect(fn, "scale and bias NULL (valid)",
             gemmi8_bin_gemm_f32(M, N, K, a, 3, fx->bin, NULL, NULL, (float*) c, N), SUCCESS);
    if (f == B_BITS)
      expect(fn, "scale and bias NULL (valid)",
             gemmi8_bin_gemm_bits(M, N, K, a, 3, fx->bin, NULL, NULL, c, 1), SUCCESS);
    expect(fn, "a NULL", call_b(f, M, N, K, NULL, 3, fx->bin, c, cs), INVALID);
    expect(fn, "packed_b NULL", call_b(f, M, N, K, a, 3, NULL, c, cs), INVALID);
    expect(fn, "c NULL", call_b(f, M, N, K, a, 3, fx->bin, NULL, cs), INVALID);
    expect(fn, "m 0", call_b(f, 0, N, K, a, 3, fx->bin, c, cs), INVALID);
    expect(fn, "n 0", call_b(f, M, 0, K, a, 3, fx->bin, c, cs), INVALID);
    expect(fn, "k 0", call_b(f, M, N, 0, a, 3, fx->bin, c, cs), INVALID);
    expect(fn, "a_stride words(k) - 1", call_b(f, M, N, K, a, 2, fx->bin, c, cs), INVALID);
    expect(fn, f == B_BITS ? "c_stride 0 words" : "c_stride n - 1",
           call_b(f, M, N, K, a, 3, fx->bin, c, cs - 1), INVALID);
    expect(fn, "m SIZE_MAX / 2", call_b(f, HUGE_SIZE, N, K, a, 3, fx->bin, c, cs), INVALID);
    expect(fn, "a_stride SIZE_MAX / 2", call_b(f, M, N, K, a, HUGE_SIZE, fx->bin, c, cs), INVALID);
    expect(fn, "c_stride SIZE_MAX / 2", call_b(f, M, N, K, a, 3, fx->bin, c, HUGE_SIZE), INVALID);
    expect(fn, "n + 1 (not the packed n)",
           call_b(f, M, N + 1, K, a, 3, fx->bin, c, f == B_BITS ? 1 : N + 1), INVALID);
    expect(fn, "k + 1 (same words, not the packed k)", call_b(f, M, N, K + 1, a, 3, fx->bin, c, cs),
           INVALID);
    expect(fn, "k - 1 (not the packed k)", call_b(f, M, N, K - 1, a, 3, fx->bin, c, cs), INVALID);
    expect(fn, "qu8 weights", call_b(f, M, N, K, a, 3, fx->qu8, c, cs), INVALID);
    expect(fn, "qs8 weights", call_b(f, M, N, K, a, 3, fx->qs8, c, cs), INVALID);
    unwatch_all();
  }
}

/* ---- rows quantized at run time (qd8, qdu8) ---------------------------------------------- */

typedef gemmi8_status (*qd_pack_fn)(size_t, size_t, const int8_t*, size_t, uint32_t, const float*,
                                    const float*, void*, size_t);
typedef gemmi8_status (*qd_pack_alloc_fn)(size_t, size_t, const int8_t*, size_t, uint32_t,
                                          const float*, const float*, void**);
typedef gemmi8_status (*qd_linear_fn)(size_t, size_t, size_t, const float*, size_t, const void*,
                                      float, float, float*, size_t, void*, size_t,
                                      const gemmi8_parallel*);

static void parallel_nothing(void* context, gemmi8_task_fn task, void* task_context, size_t count)
{
  (void) context;
  for (size_t i = 0; i < count; i++) task(task_context, i);
}

/* gemmi8_qd*_pack_size, _pack, _pack_alloc. */
static void qd_pack_errors(int u8, const fixture* fx)
{
  const char* fn = u8 ? "gemmi8_qdu8_pack" : "gemmi8_qd8_pack";
  const char* fn_alloc = u8 ? "gemmi8_qdu8_pack_alloc" : "gemmi8_qd8_pack_alloc";
  const char* fn_size = u8 ? "gemmi8_qdu8_pack_size" : "gemmi8_qd8_pack_size";
  gemmi8_status (*size_fn)(size_t, size_t, size_t*) =
      u8 ? gemmi8_qdu8_pack_size : gemmi8_qd8_pack_size;
  const qd_pack_fn pack = u8 ? gemmi8_qdu8_pack : gemmi8_qd8_pack;
  const qd_pack_alloc_fn pack_alloc = u8 ? gemmi8_qdu8_pack_alloc : gemmi8_qd8_pack_alloc;
  const int8_t* b = (const int8_t*) fx->b; /* N x K */
  float scale[N], bias[N];
  for (size_t j = 0; j < N; j++) {
    scale[j] = (float) (0.01 * (1 + j));
    bias[j] = (float) j - 2.0f;
  }

  size_t out = 0x5A5A5A;
  watch(&out, sizeof(out));
  expect(fn_size, "size NULL", size_fn(N, K, NULL), INVALID);
  expect(fn_size, "n 0", size_fn(0, K, &out), INVALID);
  expect(fn_size, "k 0", size_fn(N, 0, &out), INVALID);
  expect(fn_size, "k GEMMI8_QD8_MAX_K + 1", size_fn(N, GEMMI8_QD8_MAX_K + 1, &out), UNSUPPORTED);
  expect(fn_size, "k SIZE_MAX", size_fn(N, SIZE_MAX, &out), UNSUPPORTED);
  expect(fn_size, "n SIZE_MAX / 2 (size overflows)", size_fn(HUGE_SIZE, K, &out), UNSUPPORTED);
  expect(fn_size, "n SIZE_MAX (size overflows)", size_fn(SIZE_MAX, 1, &out), UNSUPPORTED);
  expect(fn_size, "n SIZE_MAX / 12 + 1 (the per-channel tail overflows)",
         size_fn(SIZE_MAX / 12 + 1, 1, &out), UNSUPPORTED);
  unwatch_all();
  size_t size = 0;
  gemmi8_status st = size_fn(N, GEMMI8_QD8_MAX_K, &out);
  t_expect(st == SUCCESS && out >= (size_t) N * GEMMI8_QD8_MAX_K + 8 * N, fn_size,
           "k at the exact limit: status \"%s\", size %zu", name(st), out);
  st = size_fn(N, K, &size);
  t_expect(st == SUCCESS && size >= (size_t) N * K + 8 * N && size % GEMMI8_PACK_ALIGNMENT == 0,
           fn_size, "N %d K %d: status \"%s\", size %zu", N, K, name(st), size);
  if (st != SUCCESS) return;

  size_t cap = size + 2 * GEMMI8_PACK_ALIGNMENT;
  unsigned char* buf = t_alloc_aligned(cap);
  t_fill_random(buf, cap);
  watch(buf, cap);
  expect(fn, "valid call", pack(N, K, b, K, GEMMI8_B_NK, scale, bias, buf, size), SUCCESS);
  expect(fn, "bias NULL (valid)", pack(N, K, b, K, GEMMI8_B_NK, scale, NULL, buf, size), SUCCESS);
  expect(fn, "packed_size larger than needed (valid)",
         pack(N, K, b, K, GEMMI8_B_NK, scale, bias, buf, cap), SUCCESS);
  expect(fn, "B K x N with b_stride n (valid)",
         pack(N, K, b, N, GEMMI8_B_KN, scale, bias, buf, size), SUCCESS);
  expect(fn, "n 0", pack(0, K, b, K, GEMMI8_B_NK, scale, bias, buf, size), INVALID);
  expect(fn, "k 0", pack(N, 0, b, K, GEMMI8_B_NK, scale, bias, buf, size), INVALID);
  expect(fn, "b NULL", pack(N, K, NULL, K, GEMMI8_B_NK, scale, bias, buf, size), INVALID);
  expect(fn, "scale NULL", pack(N, K, b, K, GEMMI8_B_NK, NULL, bias, buf, size), INVALID);
  expect(fn, "packed NULL", pack(N, K, b, K, GEMMI8_B_NK, scale, bias, NULL, size), INVALID);
  expect(fn, "N x K, b_stride k - 1", pack(N, K, b, K - 1, GEMMI8_B_NK, scale, bias, buf, size),
         INVALID);
  expect(fn, "N x K, b_stride n (< k)", pack(N, K, b, N, GEMMI8_B_NK, scale, bias, buf, size),
         INVALID);
  expect(fn, "K x N, b_stride n - 1", pack(N, K, b, N - 1, GEMMI8_B_KN, scale, bias, buf, size),
         INVALID);
  const uint32_t bad_flags[] = { 2u, 3u, 0x80000000u };
  for (size_t i = 0; i < T_COUNT(bad_flags); i++) {
    char what[48];
    snprintf(what, sizeof(what), "flags 0x%x", (unsigned) bad_flags[i]);
    expect(fn, what, pack(N, K, b, K, bad_flags[i], scale, bias, buf, size), INVALID);
  }
  const size_t offsets[] = { 1, 4, 8, 32 };
  for (size_t i = 0; i < T_COUNT(offsets); i++) {
    char what[48];
    snprintf(what, sizeof(what), "packed misaligned by %zu bytes", offsets[i]);
    expect(fn, what, pack(N, K, b, K, GEMMI8_B_NK, scale, bias, buf + offsets[i], size), INVALID);
  }
  expect(fn, "packed_size one byte short",
         pack(N, K, b, K, GEMMI8_B_NK, scale, bias, buf, size - 1), INVALID);
  expect(fn, "packed_size 0", pack(N, K, b, K, GEMMI8_B_NK, scale, bias, buf, 0), INVALID);
  expect2(fn, "n SIZE_MAX / 2", pack(HUGE_SIZE, K, b, K, GEMMI8_B_NK, scale, bias, buf, cap),
          INVALID, UNSUPPORTED);
  expect2(fn, "b_stride SIZE_MAX / 2 (overflows over n rows)",
          pack(N, K, b, HUGE_SIZE, GEMMI8_B_NK, scale, bias, buf, cap), INVALID, UNSUPPORTED);
  /* scales and biases: any finite value, NaN and infinities refused, at any channel */
  const float fine[] = { 0.0f, -0.0f, -1.0f, FLT_TRUE_MIN, -FLT_MAX, FLT_MAX };
  const float bad[] = { NAN, -NAN, INFINITY, -INFINITY };
  static const size_t at[] = { 0, 2, N - 1 };
  for (size_t a = 0; a < T_COUNT(at); a++) {
    char what[64];
    for (size_t i = 0; i < T_COUNT(fine); i++) {
      scale[at[a]] = fine[i];
      bias[at[a]] = fine[T_COUNT(fine) - 1 - i];
      snprintf(what, sizeof(what), "scale[%zu] %g, bias %g (valid)", at[a], (double) fine[i],
               (double) fine[T_COUNT(fine) - 1 - i]);
      expect(fn, what, pack(N, K, b, K, GEMMI8_B_NK, scale, bias, buf, size), SUCCESS);
    }
    scale[at[a]] = 0.5f;
    bias[at[a]] = 0.5f;
    for (size_t i = 0; i < T_COUNT(bad); i++) {
      scale[at[a]] = bad[i];
      snprintf(what, sizeof(what), "scale[%zu] %g", at[a], (double) bad[i]);
      expect(fn, what, pack(N, K, b, K, GEMMI8_B_NK, scale, bias, buf, size), INVALID);
      scale[at[a]] = 0.5f;
      bias[at[a]] = bad[i];
      snprintf(what, sizeof(what), "bias[%zu] %g", at[a], (double) bad[i]);
      expect(fn, what, pack(N, K, b, K, GEMMI8_B_NK, scale, bias, buf, size), INVALID);
      bias[at[a]] = 0.5f;
    }
  }
  unwatch_all();
  free(buf);

  /* K above the exact limit, with a buffer that would be large enough */
  const size_t big_k = GEMMI8_QD8_MAX_K + 1;
  int8_t* big_b = t_alloc(big_k);
  memset(big_b, 1, big_k);
  const size_t big_cap = (size_t) 8 << 20;
  unsigned char* big = t_alloc_aligned(big_cap);
  memset(big, 0xA5, big_cap);
  watch(big, big_cap);
  expect(fn, "k above the exact limit",
         pack(1, big_k, big_b, big_k, GEMMI8_B_NK, scale, NULL, big, big_cap), UNSUPPORTED);
  unwatch_all();
  free(big);

  void* sentinel = (void*) &out;
  void* packed = sentinel;
  watch(&packed, sizeof(packed));
  expect(fn_alloc, "packed NULL", pack_alloc(N, K, b, K, GEMMI8_B_NK, scale, bias, NULL), INVALID);
  expect(fn_alloc, "n 0", pack_alloc(0, K, b, K, GEMMI8_B_NK, scale, bias, &packed), INVALID);
  expect(fn_alloc, "k 0", pack_alloc(N, 0, b, K, GEMMI8_B_NK, scale, bias, &packed), INVALID);
  expect(fn_alloc, "b NULL", pack_alloc(N, K, NULL, K, GEMMI8_B_NK, scale, bias, &packed), INVALID);
  expect(fn_alloc, "scale NULL", pack_alloc(N, K, b, K, GEMMI8_B_NK, NULL, bias, &packed), INVALID);
  expect(fn_alloc, "b_stride k - 1", pack_alloc(N, K, b, K - 1, GEMMI8_B_NK, scale, bias, &packed),
         INVALID);
  expect(fn_alloc, "K x N, b_stride n - 1",
         pack_alloc(N, K, b, N - 1, GEMMI8_B_KN, scale, bias, &packed), INVALID);
  expect(fn_alloc, "flags 2", pack_alloc(N, K, b, K, 2u, scale, bias, &packed), INVALID);
  expect(fn_alloc, "k above the exact limit",
         pack_alloc(1, big_k, big_b, big_k, GEMMI8_B_NK, scale, NULL, &packed), UNSUPPORTED);
  expect2(fn_alloc, "n SIZE_MAX / 2 (size overflows)",
          pack_alloc(HUGE_SIZE, K, b, K, GEMMI8_B_NK, scale, bias, &packed), INVALID, UNSUPPORTED);
  scale[1] = NAN;
  expect(fn_alloc, "scale[1] NaN", pack_alloc(N, K, b, K, GEMMI8_B_NK, scale, bias, &packed),
         INVALID);
  scale[1] = 0.5f;
  bias[N - 1] = -INFINITY;
  expect(fn_alloc, "bias[N - 1] -inf", pack_alloc(N, K, b, K, GEMMI8_B_NK, scale, bias, &packed),
         INVALID);
  bias[N - 1] = 0.5f;
  unwatch_all();
  free(big_b);
  st = pack_alloc(N, K, b, K, GEMMI8_B_NK, scale, bias, &packed);
  t_expect(st == SUCCESS && packed != sentinel && packed != NULL &&
               (uintptr_t) packed % GEMMI8_PACK_ALIGNMENT == 0,
           fn_alloc, "valid call: status \"%s\", packed %p", name(st), packed);
  if (st == SUCCESS) gemmi8_packed_free(packed);
}

/* A call of the qd8 or qdu8 float GEMM (u8), and one with the rows' scales and zero
 * points of the test (a_scale, a_zp) and no clamp, for the two functions below. */
#define QD(m_, n_, k_, a_, as_, sc_, zp_, pk_, mn_, mx_, c_, cs_)                               \
  (u8 ? gemmi8_qdu8_gemm_f32(m_, n_, k_, a_, as_, sc_, zp_, pk_, mn_, mx_, c_, cs_)             \
      : gemmi8_qd8_gemm_f32(m_, n_, k_, (const int8_t*) (a_), as_, sc_, zp_, pk_, mn_, mx_, c_, \
                            cs_))
#define RUN(m_, n_, k_, a_, as_, pk_, c_, cs_) \
  QD(m_, n_, k_, a_, as_, a_scale, a_zp, pk_, -INFINITY, INFINITY, c_, cs_)

/* The argument checks the float GEMMs on rows quantized at run time share (int8 rows,
 * or uint8 ones with u8; packed holds int8 or 4-bit weights for N x K, a M rows of K):
 * NULLs, zero and overflowing sizes and strides, N or K other than the packed ones. */
static void qd_gemm_arg_errors(const char* fn, int u8, const void* a, const float* a_scale,
                               const int32_t* a_zp, const void* packed, float* c)
{
  expect(fn, "a NULL", RUN(M, N, K, NULL, K, packed, c, N), INVALID);
  expect(fn, "packed_b NULL", RUN(M, N, K, a, K, NULL, c, N), INVALID);
  expect(fn, "c NULL", RUN(M, N, K, a, K, packed, NULL, N), INVALID);
  expect(fn, "a_scale NULL", QD(M, N, K, a, K, NULL, a_zp, packed, -INFINITY, INFINITY, c, N),
         INVALID);
  expect(fn, "a_zero_point NULL",
         QD(M, N, K, a, K, a_scale, NULL, packed, -INFINITY, INFINITY, c, N), INVALID);
  expect(fn, "m 0", RUN(0, N, K, a, K, packed, c, N), INVALID);
  expect(fn, "n 0", RUN(M, 0, K, a, K, packed, c, N), INVALID);
  expect(fn, "k 0", RUN(M, N, 0, a, K, packed, c, N), INVALID);
  expect(fn, "a_stride k - 1", RUN(M, N, K, a, K - 1, packed, c, N), INVALID);
  expect(fn, "c_stride n - 1", RUN(M, N, K, a, K, packed, c, N - 1), INVALID);
  expect(fn, "m SIZE_MAX / 2 (m * a_stride overflows)", RUN(HUGE_SIZE, N, K, a, K, packed, c, N),
         INVALID);
  expect(fn, "m SIZE_MAX", RUN(SIZE_MAX, N, K, a, K, packed, c, N), INVALID);
  expect(fn, "a_stride SIZE_MAX / 2 (overflows over 3 rows)",
         RUN(M, N, K, a, HUGE_SIZE, packed, c, N), INVALID);
  expect(fn, "c_stride SIZE_MAX / 2 (overflows over 3 rows)",
         RUN(M, N, K, a, K, packed, c, HUGE_SIZE), INVALID);
  expect(fn, "c_stride SIZE_MAX / 8 (the float extent overflows)",
         RUN(M, N, K, a, K, packed, c, SIZE_MAX / 8), INVALID);
  expect(fn, "n + 1 (not the packed n)", RUN(M, N + 1, K, a, K, packed, c, N + 1), INVALID);
  expect(fn, "n - 1 (not the packed n)", RUN(M, N - 1, K, a, K, packed, c, N), INVALID);
  expect(fn, "k + 1 (not the packed k)", RUN(M, N, K + 1, a, K + 1, packed, c, N), INVALID);
  expect(fn, "k - 1 (not the packed k)", RUN(M, N, K - 1, a, K, packed, c, N), INVALID);
}

/* gemmi8_qd*_gemm_f32 and _ex, gemmi8_qd*_linear_f32, gemmi8_qd8_linear_workspace_size. */
static void qd_gemm_errors(int u8, const fixture* fx)
{
  const char* fn = u8 ? "gemmi8_qdu8_gemm_f32" : "gemmi8_qd8_gemm_f32";
  const char* fn_ex = u8 ? "gemmi8_qdu8_gemm_f32_ex" : "gemmi8_qd8_gemm_f32_ex";
  const char* fn_lin = u8 ? "gemmi8_qdu8_linear_f32" : "gemmi8_qd8_linear_f32";
  const int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
  float scale[N], bias[N];
  for (size_t j = 0; j < N; j++) scale[j] = 0.01f, bias[j] = (float) j;
  void *packed = NULL, *other = NULL;
  gemmi8_status st = (u8 ? gemmi8_qdu8_pack_alloc : gemmi8_qd8_pack_alloc)(
      N, K, (const int8_t*) fx->b, K, GEMMI8_B_NK, scale, bias, &packed);
  gemmi8_status st2 = (u8 ? gemmi8_qd8_pack_alloc : gemmi8_qdu8_pack_alloc)(
      N, K, (const int8_t*) fx->b, K, GEMMI8_B_NK, scale, bias, &other);
  if (!t_expect(st == SUCCESS && st2 == SUCCESS, fn, "packing the fixture: \"%s\" \"%s\"", name(st),
                name(st2))) {
    gemmi8_packed_free(packed);
    gemmi8_packed_free(other);
    return;
  }
  const void* a = fx->a;
  float a_scale[M];
  int32_t a_zp[M];
  for (size_t i = 0; i < M; i++) a_scale[i] = 0.05f, a_zp[i] = lo + (int32_t) i * 7;
  float c[M * N + 16];
  t_fill_random(c, sizeof(c));
  watch(c, sizeof(c));
  expect(fn, "valid call", RUN(M, N, K, a, K, packed, c, N), SUCCESS);
  qd_gemm_arg_errors(fn, u8, a, a_scale, a_zp, packed, c);
  /* K past the limit with weights of another K: the header gives no order */
  expect2(fn, "k GEMMI8_QD8_MAX_K + 1",
          RUN(1, N, GEMMI8_QD8_MAX_K + 1, a, GEMMI8_QD8_MAX_K + 1, packed, c, N), INVALID,
          UNSUPPORTED);
  expect(fn, u8 ? "qd8 weights" : "qdu8 weights", RUN(M, N, K, a, K, other, c, N), INVALID);
  expect(fn, "qs8 weights", RUN(M, N, K, a, K, fx->qs8, c, N), INVALID);
  expect(fn, "qu8s8 weights", RUN(M, N, K, a, K, fx->qu8s8, c, N), INVALID);
  expect(fn, "qu8 weights", RUN(M, N, K, a, K, fx->qu8, c, N), INVALID);
  expect(fn, "binary weights", RUN(M, N, K, a, K, fx->bin, c, N), INVALID);
  expect(fn, "packed misaligned", RUN(M, N, K, a, K, (const uint8_t*) packed + 64 / 2, c, N),
         INVALID);
  /* the weights to the GEMMs of their kernels' family */
  expect(u8 ? "gemmi8_qu8s8_gemm_s32" : "gemmi8_qs8_gemm_s32", u8 ? "qdu8 weights" : "qd8 weights",
         u8 ? gemmi8_qu8s8_gemm_s32(M, N, K, fx->a, K, packed, (int32_t*) c, N)
            : gemmi8_qs8_gemm_s32(M, N, K, (const int8_t*) fx->a, K, packed, (int32_t*) c, N),
         INVALID);
  /* per row: any finite scale, zero points within the type's range, at every row */
  char what[96];
  for (size_t i = 0; i < M; i++) {
    const float fine[] = { 0.0f, -0.0f, -2.0f, FLT_TRUE_MIN, FLT_MAX };
    for (size_t f = 0; f < T_COUNT(fine); f++) {
      a_scale[i] = fine[f];
      snprintf(what, sizeof(what), "a_scale[%zu] %g (valid)", i, (double) fine[f]);
      expect(fn, what, RUN(M, N, K, a, K, packed, c, N), SUCCESS);
    }
    const float bad[] = { NAN, -NAN, INFINITY, -INFINITY };
    for (size_t f = 0; f < T_COUNT(bad); f++) {
      a_scale[i] = bad[f];
      snprintf(what, sizeof(what), "a_scale[%zu] %g", i, (double) bad[f]);
      expect(fn, what, RUN(M, N, K, a, K, packed, c, N), INVALID);
    }
    a_scale[i] = 0.05f;
    const int32_t zp_fine[] = { lo, hi };
    for (size_t z = 0; z < T_COUNT(zp_fine); z++) {
      a_zp[i] = zp_fine[z];
      snprintf(what, sizeof(what), "a_zero_point[%zu] %d (valid)", i, (int) zp_fine[z]);
      expect(fn, what, RUN(M, N, K, a, K, packed, c, N), SUCCESS);
    }
    const int32_t zp_bad[] = { lo - 1, hi + 1, INT32_MIN, INT32_MAX };
    for (size_t z = 0; z < T_COUNT(zp_bad); z++) {
      a_zp[i] = zp_bad[z];
      snprintf(what, sizeof(what), "a_zero_point[%zu] %d", i, (int) zp_bad[z]);
      expect(fn, what, RUN(M, N, K, a, K, packed, c, N), INVALID);
    }
    a_zp[i] = lo + (int32_t) i * 7;
  }
  /* the clamp */
  static const struct {
    float min, max;
    int valid;
    const char* what;
  } clamps[] = {
    { 1.0f, -1.0f, 0, "min > max" },
    { NAN, 1.0f, 0, "min NaN" },
    { -1.0f, NAN, 0, "max NaN" },
    { NAN, NAN, 0, "min and max NaN" },
    { INFINITY, -INFINITY, 0, "min inf, max -inf" },
    { 0.5f, 0.5f, 1, "min == max (valid)" },
    { -0.0f, 0.0f, 1, "-0, +0 (valid)" },
    { 0.0f, -0.0f, 1, "+0, -0 (valid: equal)" },
    { INFINITY, INFINITY, 1, "inf, inf (valid)" },
    { -FLT_MAX, FLT_MAX, 1, "-FLT_MAX, FLT_MAX (valid)" },
  };
  for (size_t i = 0; i < T_COUNT(clamps); i++) {
    expect(fn, clamps[i].what,
           QD(M, N, K, a, K, a_scale, a_zp, packed, clamps[i].min, clamps[i].max, c, N),
           clamps[i].valid ? SUCCESS : INVALID);
  }
  /* _ex: the parallel argument */
  const gemmi8_parallel no_fn = { NULL, NULL, 2 };
  const gemmi8_parallel too_many = { parallel_nothing, NULL, GEMMI8_MAX_THREADS + 1 };
  const gemmi8_parallel fine_par = { parallel_nothing, NULL, 3 };
#define QD_EX(par_, c_)                                                                           \
  (u8 ? gemmi8_qdu8_gemm_f32_ex(M, N, K, a, K, a_scale, a_zp, packed, -1.0f, 1.0f, c_, N, par_)   \
      : gemmi8_qd8_gemm_f32_ex(M, N, K, (const int8_t*) a, K, a_scale, a_zp, packed, -1.0f, 1.0f, \
                               c_, N, par_))
  expect(fn_ex, "parallel NULL (valid)", QD_EX(NULL, c), SUCCESS);
  expect(fn_ex, "a parallel-for of 3 threads (valid)", QD_EX(&fine_par, c), SUCCESS);
  expect(fn_ex, "parallel_for NULL", QD_EX(&no_fn, c), INVALID);
  expect(fn_ex, "GEMMI8_MAX_THREADS + 1 threads", QD_EX(&too_many, c), INVALID);
  expect(fn_ex, "c NULL", QD_EX(NULL, NULL), INVALID);
#undef QD_EX
#undef RUN
#undef QD
  unwatch_all();

  /* the linear layer: C and the workspace untouched on failure */
  const qd_linear_fn linear = u8 ? gemmi8_qdu8_linear_f32 : gemmi8_qd8_linear_f32;
  enum { XS = K + 3 }; /* x_stride with a gap */
  float x[M * XS];
  for (size_t i = 0; i < M * XS; i++) x[i] = (float) t_range(-50, 50) / 8.0f;
  size_t ws_size = 0;
  st = gemmi8_qd8_linear_workspace_size(M, K, &ws_size);
  t_expect(st == SUCCESS && ws_size >= (size_t) M * K + 8 * M, "gemmi8_qd8_linear_workspace_size",
           "M %d K %d: status \"%s\", size %zu", M, K, name(st), ws_size);
  const size_t ws_cap = ws_size + 128;
  unsigned char* ws = t_alloc_aligned(ws_cap);
  t_fill_random(ws, ws_cap);
  t_fill_random(c, sizeof(c));
  watch(c, sizeof(c));
#define LIN(m_, n_, k_, x_, xs_, pk_, mn_, mx_, c_, cs_, ws_, wss_, par_) \
  linear(m_, n_, k_, x_, xs_, pk_, mn_, mx_, c_, cs_, ws_, wss_, par_)
#define L(m_, n_, k_, x_, xs_, pk_, c_, cs_, ws_, wss_) \
  LIN(m_, n_, k_, x_, xs_, pk_, -2.0f, 2.0f, c_, cs_, ws_, wss_, NULL)
  expect(fn_lin, "valid call, workspace given", L(M, N, K, x, XS, packed, c, N, ws, ws_size),
         SUCCESS);
  expect(fn_lin, "valid call, workspace NULL", L(M, N, K, x, XS, packed, c, N, NULL, 0), SUCCESS);
  watch(ws, ws_cap); /* the workspace is the library's only in a call that succeeds */
  expect(fn_lin, "x NULL", L(M, N, K, NULL, XS, packed, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "packed_b NULL", L(M, N, K, x, XS, NULL, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "c NULL", L(M, N, K, x, XS, packed, NULL, N, ws, ws_size), INVALID);
  expect(fn_lin, "m 0", L(0, N, K, x, XS, packed, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "n 0", L(M, 0, K, x, XS, packed, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "k 0", L(M, N, 0, x, XS, packed, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "x_stride k - 1", L(M, N, K, x, K - 1, packed, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "c_stride n - 1", L(M, N, K, x, XS, packed, c, N - 1, ws, ws_size), INVALID);
  expect(fn_lin, "m SIZE_MAX / 2", L(HUGE_SIZE, N, K, x, XS, packed, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "m SIZE_MAX / 2, workspace NULL", L(HUGE_SIZE, N, K, x, XS, packed, c, N, NULL, 0),
         INVALID);
  expect(fn_lin, "x_stride SIZE_MAX / 8 (the float extent overflows)",
         L(M, N, K, x, SIZE_MAX / 8, packed, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "c_stride SIZE_MAX / 2", L(M, N, K, x, XS, packed, c, HUGE_SIZE, ws, ws_size),
         INVALID);
  expect(fn_lin, "n + 1 (not the packed n)", L(M, N + 1, K, x, XS, packed, c, N + 1, ws, ws_size),
         INVALID);
  expect(fn_lin, "k - 1 (not the packed k)", L(M, N, K - 1, x, XS, packed, c, N, ws, ws_size),
         INVALID);
  expect(fn_lin, u8 ? "qd8 weights" : "qdu8 weights", L(M, N, K, x, XS, other, c, N, ws, ws_size),
         INVALID);
  expect(fn_lin, "qs8 weights", L(M, N, K, x, XS, fx->qs8, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "binary weights", L(M, N, K, x, XS, fx->bin, c, N, NULL, 0), INVALID);
  expect(fn_lin, "workspace_size one byte short", L(M, N, K, x, XS, packed, c, N, ws, ws_size - 1),
         INVALID);
  expect(fn_lin, "workspace_size 0", L(M, N, K, x, XS, packed, c, N, ws, 0), INVALID);
  for (size_t off = 1; off < 64; off *= 2) {
    snprintf(what, sizeof(what), "workspace misaligned by %zu bytes", off);
    expect(fn_lin, what, L(M, N, K, x, XS, packed, c, N, ws + off, ws_size), INVALID);
  }
  expect(fn_lin, "min > max", LIN(M, N, K, x, XS, packed, 1.0f, -1.0f, c, N, ws, ws_size, NULL),
         INVALID);
  expect(fn_lin, "max NaN", LIN(M, N, K, x, XS, packed, -1.0f, NAN, c, N, ws, ws_size, NULL),
         INVALID);
  const gemmi8_parallel no_fn2 = { NULL, NULL, 2 };
  expect(fn_lin, "parallel_for NULL",
         LIN(M, N, K, x, XS, packed, -1.0f, 1.0f, c, N, ws, ws_size, &no_fn2), INVALID);
  /* x: NaN or infinite in a row (any row, any place) is invalid, in the gap between rows
   * it is never read; a row whose range overflows float would quantize to an infinite
   * scale, which the GEMM refuses: refused before anything is written */
  const float bad_x[] = { NAN, INFINITY, -INFINITY };
  static const size_t cells[][2] = { { 0, 0 }, { 1, K / 2 }, { M - 1, K - 1 } };
  for (size_t v = 0; v < T_COUNT(bad_x); v++) {
    for (size_t p = 0; p < T_COUNT(cells); p++) {
      const size_t at = cells[p][0] * XS + cells[p][1];
      const float keep = x[at];
      x[at] = bad_x[v];
      snprintf(what, sizeof(what), "x[%zu][%zu] %g", cells[p][0], cells[p][1], (double) bad_x[v]);
      expect(fn_lin, what, L(M, N, K, x, XS, packed, c, N, ws, ws_size), INVALID);
      expect(fn_lin, what, L(M, N, K, x, XS, packed, c, N, NULL, 0), INVALID);
      x[at] = keep;
    }
  }
  const float keep0 = x[XS], keep1 = x[XS + 7];
  x[XS] = FLT_MAX;
  x[XS + 7] = -FLT_MAX;
  expect(fn_lin, "row 1 from -FLT_MAX to FLT_MAX (its range overflows)",
         L(M, N, K, x, XS, packed, c, N, ws, ws_size), INVALID);
  x[XS + 7] = -0x1p100f;
  unwatch_all();
  t_fill_random(c, sizeof(c));
  watch(c, sizeof(c));
  /* valid calls: the gap, and ranges that do not overflow */
  expect(fn_lin, "row 1 from -2^100 to FLT_MAX (valid)", L(M, N, K, x, XS, packed, c, N, NULL, 0),
         SUCCESS);
  x[XS] = keep0;
  x[XS + 7] = keep1;
  x[K + 1] = NAN;
  x[2 * XS - 1] = INFINITY;
  expect(fn_lin, "NaN and infinity in the gaps between rows (valid)",
         L(M, N, K, x, XS, packed, c, N, ws, ws_size), SUCCESS);
#undef L
#undef LIN
  unwatch_all();
  free(ws);

  const char* fn_ws = "gemmi8_qd8_linear_workspace_size";
  size_t out = 0x5A5A5A;
  watch(&out, sizeof(out));
  expect(fn_ws, "size NULL", gemmi8_qd8_linear_workspace_size(M, K, NULL), INVALID);
  expect(fn_ws, "m 0", gemmi8_qd8_linear_workspace_size(0, K, &out), INVALID);
  expect(fn_ws, "k 0", gemmi8_qd8_linear_workspace_size(M, 0, &out), INVALID);
  expect(fn_ws, "m * k overflows", gemmi8_qd8_linear_workspace_size(HUGE_SIZE, 3, &out), INVALID);
  expect(fn_ws, "m SIZE_MAX, k SIZE_MAX",
         gemmi8_qd8_linear_workspace_size(SIZE_MAX, SIZE_MAX, &out), INVALID);
  expect(fn_ws, "m * k just below SIZE_MAX (its rounding overflows)",
         gemmi8_qd8_linear_workspace_size(1, SIZE_MAX - 1, &out), INVALID);
  expect(fn_ws, "m SIZE_MAX / 8 + 1 (8 bytes a row overflow)",
         gemmi8_qd8_linear_workspace_size(SIZE_MAX / 8 + 1, 1, &out), INVALID);
  expect(fn_ws, "m, k 2^32 - 1 (the rows fit, rows and 8 bytes a row do not)",
         gemmi8_qd8_linear_workspace_size(UINT32_MAX, UINT32_MAX, &out), INVALID);
#if SIZE_MAX > UINT32_MAX
  expect(fn_ws, "m 2^32, k 2^32 - 1",
         gemmi8_qd8_linear_workspace_size((size_t) 1 << 32, UINT32_MAX, &out), INVALID);
#endif
  unwatch_all();
  gemmi8_packed_free(packed);
  gemmi8_packed_free(other);
}

/* ---- 4-bit weights (qd8 rows) ------------------------------------------------------------- */

/* The fixture's B bytes as N rows of ceil(K / 2) nibble bytes; block 32 (K = 130 is not
 * a multiple of it: 5 blocks, the last of 2 depths), a scale and a zero point a block. */
enum { Q4_ROW = (K + 1) / 2, Q4_BLOCKS = (K + 31) / 32 };

/* gemmi8_qd8_pack_q4_size, _pack_q4, _pack_q4_alloc. */
static void q4_pack_errors(const fixture* fx)
{
  const char* fn = "gemmi8_qd8_pack_q4";
  const char* fn_alloc = "gemmi8_qd8_pack_q4_alloc";
  const char* fn_size = "gemmi8_qd8_pack_q4_size";
  float scale[N * Q4_BLOCKS], bias[N];
  uint8_t zp[N * Q4_BLOCKS];
  for (size_t x = 0; x < N * Q4_BLOCKS; x++) {
    scale[x] = 0.01f * (float) (1 + x % 7);
    zp[x] = (uint8_t) (x % 16);
  }
  for (size_t j = 0; j < N; j++) bias[j] = (float) j - 2.0f;
  const gemmi8_q4_weights w = { fx->b, Q4_ROW, 32, scale, zp, bias };
  static const size_t listed[] = { 0, 32, 64, 128, 256 };
  static const size_t unlisted[] = { 1, 8, 16, 31, 33, 48, 96, 255, 257, 512, SIZE_MAX };
  char what[96];

  size_t out = 0x5A5A5A;
  watch(&out, sizeof(out));
  expect(fn_size, "size NULL", gemmi8_qd8_pack_q4_size(N, K, 32, NULL), INVALID);
  expect(fn_size, "n 0", gemmi8_qd8_pack_q4_size(0, K, 32, &out), INVALID);
  expect(fn_size, "k 0", gemmi8_qd8_pack_q4_size(N, 0, 32, &out), INVALID);
  for (size_t i = 0; i < T_COUNT(unlisted); i++) {
    snprintf(what, sizeof(what), "block %zu", unlisted[i]);
    expect(fn_size, what, gemmi8_qd8_pack_q4_size(N, K, unlisted[i], &out), INVALID);
  }
  /* a block not listed and K past the limit: the header gives no order */
  expect2(fn_size, "block 48, k GEMMI8_QD8_MAX_K + 1",
          gemmi8_qd8_pack_q4_size(N, GEMMI8_QD8_MAX_K + 1, 48, &out), INVALID, UNSUPPORTED);
  expect(fn_size, "k GEMMI8_QD8_MAX_K + 1",
         gemmi8_qd8_pack_q4_size(N, GEMMI8_QD8_MAX_K + 1, 32, &out), UNSUPPORTED);
  expect(fn_size, "k SIZE_MAX, block 0", gemmi8_qd8_pack_q4_size(N, SIZE_MAX, 0, &out),
         UNSUPPORTED);
  expect(fn_size, "n SIZE_MAX / 2 (size overflows)",
         gemmi8_qd8_pack_q4_size(HUGE_SIZE, K, 32, &out), UNSUPPORTED);
  expect(fn_size, "n SIZE_MAX, k 1 (size overflows)", gemmi8_qd8_pack_q4_size(SIZE_MAX, 1, 0, &out),
         UNSUPPORTED);
  expect(fn_size, "n SIZE_MAX / 4 + 1, k 1 (the bias tail alone overflows too)",
         gemmi8_qd8_pack_q4_size(SIZE_MAX / 4 + 1, 1, 256, &out), UNSUPPORTED);
  expect(fn_size, "n SIZE_MAX / 16, k 1 (blocks and bias tail overflow together)",
         gemmi8_qd8_pack_q4_size(SIZE_MAX / 16, 1, 0, &out), UNSUPPORTED);
  unwatch_all();
  size_t size_of[T_COUNT(listed)], most = 0;
  for (size_t i = 0; i < T_COUNT(listed); i++) {
    const size_t blocks = listed[i] ? (K + listed[i] - 1) / listed[i] : 1;
    size_of[i] = 0;
    gemmi8_status st = gemmi8_qd8_pack_q4_size(N, K, listed[i], &size_of[i]);
    t_expect(st == SUCCESS && size_of[i] >= (size_t) N * Q4_ROW + 8 * N * blocks + 4 * N &&
                 size_of[i] % GEMMI8_PACK_ALIGNMENT == 0,
             fn_size, "N %d K %d block %zu: status \"%s\", size %zu", N, K, listed[i], name(st),
             size_of[i]);
    most = size_of[i] > most ? size_of[i] : most;
    size_t at_limit = 0;
    st = gemmi8_qd8_pack_q4_size(N, GEMMI8_QD8_MAX_K, listed[i], &at_limit);
    t_expect(st == SUCCESS && at_limit >= (size_t) N * ((GEMMI8_QD8_MAX_K + 1) / 2), fn_size,
             "k at the exact limit, block %zu: status \"%s\", size %zu", listed[i], name(st),
             at_limit);
  }
  const size_t size = size_of[1]; /* block 32 */
  if (size == 0 || most == 0) return;

  const size_t cap = most + 2 * GEMMI8_PACK_ALIGNMENT;
  unsigned char* buf = t_alloc_aligned(cap);
  t_fill_random(buf, cap);
  watch(buf, cap);
  gemmi8_q4_weights x = w;
  expect(fn, "valid call", gemmi8_qd8_pack_q4(N, K, &w, buf, size), SUCCESS);
  x.bias = NULL;
  expect(fn, "bias NULL (valid)", gemmi8_qd8_pack_q4(N, K, &x, buf, size), SUCCESS);
  x = w, x.zero_point = NULL;
  expect(fn, "zero_point NULL: signed nibbles (valid)", gemmi8_qd8_pack_q4(N, K, &x, buf, size),
         SUCCESS);
  x = w, x.b_stride = Q4_ROW + 3;
  expect(fn, "b_stride ceil(k / 2) + 3 (valid)", gemmi8_qd8_pack_q4(N, K, &x, buf, size), SUCCESS);
  expect(fn, "packed_size larger than needed (valid)", gemmi8_qd8_pack_q4(N, K, &w, buf, cap),
         SUCCESS);
  for (size_t i = 0; i < T_COUNT(listed); i++) {
    x = w, x.block = listed[i];
    snprintf(what, sizeof(what), "block %zu (valid)", listed[i]);
    expect(fn, what, gemmi8_qd8_pack_q4(N, K, &x, buf, size_of[i]), SUCCESS);
    snprintf(what, sizeof(what), "block %zu, packed_size one byte short", listed[i]);
    expect(fn, what, gemmi8_qd8_pack_q4(N, K, &x, buf, size_of[i] - 1), INVALID);
  }
  /* qc4w reads n zero points: what lies past them is not the call's */
  uint8_t zp_wide[N * Q4_BLOCKS];
  memset(zp_wide, 200, sizeof(zp_wide));
  for (size_t j = 0; j < N; j++) zp_wide[j] = (uint8_t) (15 - j);
  x = w, x.block = 0, x.zero_point = zp_wide;
  expect(fn, "block 0: n zero points in range, 200 past them (valid)",
         gemmi8_qd8_pack_q4(N, K, &x, buf, size_of[0]), SUCCESS);
  x.zero_point = zp_wide + 1; /* the last one read is 200 */
  expect(fn, "block 0: zero_point[n - 1] 200", gemmi8_qd8_pack_q4(N, K, &x, buf, size_of[0]),
         INVALID);
  expect(fn, "n 0", gemmi8_qd8_pack_q4(0, K, &w, buf, size), INVALID);
  expect(fn, "k 0", gemmi8_qd8_pack_q4(N, 0, &w, buf, size), INVALID);
  expect(fn, "w NULL", gemmi8_qd8_pack_q4(N, K, NULL, buf, size), INVALID);
  x = w, x.b = NULL;
  expect(fn, "b NULL", gemmi8_qd8_pack_q4(N, K, &x, buf, size), INVALID);
  x = w, x.scale = NULL;
  expect(fn, "scale NULL", gemmi8_qd8_pack_q4(N, K, &x, buf, size), INVALID);
  expect(fn, "packed NULL", gemmi8_qd8_pack_q4(N, K, &w, NULL, size), INVALID);
  x = w, x.b_stride = Q4_ROW - 1;
  expect(fn, "b_stride ceil(k / 2) - 1", gemmi8_qd8_pack_q4(N, K, &x, buf, size), INVALID);
  x.b_stride = Q4_ROW; /* k + 1 = 131 depths take 66 bytes */
  expect(fn, "k odd, b_stride k / 2 (the last nibble's byte left out)",
         gemmi8_qd8_pack_q4(N, K + 1, &x, buf, cap), INVALID);
  x.b_stride = 0;
  expect(fn, "b_stride 0", gemmi8_qd8_pack_q4(N, K, &x, buf, size), INVALID);
  for (size_t i = 0; i < T_COUNT(unlisted); i++) {
    x = w, x.block = unlisted[i];
    snprintf(what, sizeof(what), "block %zu", unlisted[i]);
    expect(fn, what, gemmi8_qd8_pack_q4(N, K, &x, buf, cap), INVALID);
  }
  const size_t offsets[] = { 1, 4, 8, 32 };
  for (size_t i = 0; i < T_COUNT(offsets); i++) {
    snprintf(what, sizeof(what), "packed misaligned by %zu bytes", offsets[i]);
    expect(fn, what, gemmi8_qd8_pack_q4(N, K, &w, buf + offsets[i], size), INVALID);
  }
  expect(fn, "packed_size 0", gemmi8_qd8_pack_q4(N, K, &w, buf, 0), INVALID);
  expect2(fn, "n SIZE_MAX / 2", gemmi8_qd8_pack_q4(HUGE_SIZE, K, &w, buf, cap), INVALID,
          UNSUPPORTED);
  x = w, x.b_stride = HUGE_SIZE;
  expect2(fn, "b_stride SIZE_MAX / 2 (overflows over n rows)",
          gemmi8_qd8_pack_q4(N, K, &x, buf, cap), INVALID, UNSUPPORTED);
  /* zero points 0..15, scales and biases any finite value, at any block */
  static const size_t at[] = { 0, Q4_BLOCKS - 1, Q4_BLOCKS, N * Q4_BLOCKS / 2, N * Q4_BLOCKS - 1 };
  const float fine[] = { 0.0f, -0.0f, -1.0f, FLT_TRUE_MIN, -FLT_MAX, FLT_MAX };
  const float bad[] = { NAN, -NAN, INFINITY, -INFINITY };
  const uint8_t zp_bad[] = { 16, 17, 128, 255 };
  for (size_t a = 0; a < T_COUNT(at); a++) {
    const size_t i = at[a];
    const uint8_t keep_zp = zp[i];
    zp[i] = 15;
    snprintf(what, sizeof(what), "zero_point[%zu] 15 (valid)", i);
    expect(fn, what, gemmi8_qd8_pack_q4(N, K, &w, buf, size), SUCCESS);
    for (size_t z = 0; z < T_COUNT(zp_bad); z++) {
      zp[i] = zp_bad[z];
      snprintf(what, sizeof(what), "zero_point[%zu] %u", i, (unsigned) zp_bad[z]);
      expect(fn, what, gemmi8_qd8_pack_q4(N, K, &w, buf, size), INVALID);
    }
    zp[i] = keep_zp;
    for (size_t f = 0; f < T_COUNT(fine); f++) {
      scale[i] = fine[f];
      snprintf(what, sizeof(what), "scale[%zu] %g (valid)", i, (double) fine[f]);
      expect(fn, what, gemmi8_qd8_pack_q4(N, K, &w, buf, size), SUCCESS);
    }
    for (size_t f = 0; f < T_COUNT(bad); f++) {
      scale[i] = bad[f];
      snprintf(what, sizeof(what), "scale[%zu] %g", i, (double) bad[f]);
      expect(fn, what, gemmi8_qd8_pack_q4(N, K, &w, buf, size), INVALID);
    }
    scale[i] = 0.5f;
  }
  for (size_t j = 0; j < N; j += N - 1) {
    for (size_t f = 0; f < T_COUNT(fine); f++) {
      bias[j] = fine[f];
      snprintf(what, sizeof(what), "bias[%zu] %g (valid)", j, (double) fine[f]);
      expect(fn, what, gemmi8_qd8_pack_q4(N, K, &w, buf, size), SUCCESS);
    }
    for (size_t f = 0; f < T_COUNT(bad); f++) {
      bias[j] = bad[f];
      snprintf(what, sizeof(what), "bias[%zu] %g", j, (double) bad[f]);
      expect(fn, what, gemmi8_qd8_pack_q4(N, K, &w, buf, size), INVALID);
    }
    bias[j] = 0.5f;
  }
  unwatch_all();
  free(buf);

  /* K above the exact limit, with rows and a buffer that would be large enough */
  const size_t big_k = GEMMI8_QD8_MAX_K + 1;
  uint8_t* big_b = t_alloc((big_k + 1) / 2);
  memset(big_b, 0x11, (big_k + 1) / 2);
  const gemmi8_q4_weights big_w = { big_b, (big_k + 1) / 2, 0, scale, NULL, NULL };
  const size_t big_cap = (size_t) 8 << 20;
  unsigned char* big = t_alloc_aligned(big_cap);
  memset(big, 0xA5, big_cap);
  watch(big, big_cap);
  expect(fn, "k above the exact limit", gemmi8_qd8_pack_q4(1, big_k, &big_w, big, big_cap),
         UNSUPPORTED);
  unwatch_all();
  free(big);

  void* sentinel = (void*) &out;
  void* packed = sentinel;
  watch(&packed, sizeof(packed));
  expect(fn_alloc, "packed NULL", gemmi8_qd8_pack_q4_alloc(N, K, &w, NULL), INVALID);
  expect(fn_alloc, "n 0", gemmi8_qd8_pack_q4_alloc(0, K, &w, &packed), INVALID);
  expect(fn_alloc, "k 0", gemmi8_qd8_pack_q4_alloc(N, 0, &w, &packed), INVALID);
  expect(fn_alloc, "w NULL", gemmi8_qd8_pack_q4_alloc(N, K, NULL, &packed), INVALID);
  x = w, x.b = NULL;
  expect(fn_alloc, "b NULL", gemmi8_qd8_pack_q4_alloc(N, K, &x, &packed), INVALID);
  x = w, x.scale = NULL;
  expect(fn_alloc, "scale NULL", gemmi8_qd8_pack_q4_alloc(N, K, &x, &packed), INVALID);
  x = w, x.b_stride = Q4_ROW - 1;
  expect(fn_alloc, "b_stride ceil(k / 2) - 1", gemmi8_qd8_pack_q4_alloc(N, K, &x, &packed),
         INVALID);
  x = w, x.block = 48;
  expect(fn_alloc, "block 48", gemmi8_qd8_pack_q4_alloc(N, K, &x, &packed), INVALID);
  expect(fn_alloc, "k above the exact limit", gemmi8_qd8_pack_q4_alloc(1, big_k, &big_w, &packed),
         UNSUPPORTED);
  expect2(fn_alloc, "n SIZE_MAX / 2 (size overflows)",
          gemmi8_qd8_pack_q4_alloc(HUGE_SIZE, K, &w, &packed), INVALID, UNSUPPORTED);
  zp[N * Q4_BLOCKS - 1] = 16;
  expect(fn_alloc, "zero_point[n * blocks - 1] 16", gemmi8_qd8_pack_q4_alloc(N, K, &w, &packed),
         INVALID);
  zp[N * Q4_BLOCKS - 1] = 3;
  scale[1] = NAN;
  expect(fn_alloc, "scale[1] NaN", gemmi8_qd8_pack_q4_alloc(N, K, &w, &packed), INVALID);
  scale[1] = 0.5f;
  bias[N - 1] = -INFINITY;
  expect(fn_alloc, "bias[N - 1] -inf", gemmi8_qd8_pack_q4_alloc(N, K, &w, &packed), INVALID);
  bias[N - 1] = 0.5f;
  unwatch_all();
  free(big_b);
  const gemmi8_status st = gemmi8_qd8_pack_q4_alloc(N, K, &w, &packed);
  t_expect(st == SUCCESS && packed != sentinel && packed != NULL &&
               (uintptr_t) packed % GEMMI8_PACK_ALIGNMENT == 0,
           fn_alloc, "valid call: status \"%s\", packed %p", name(st), packed);
  if (st == SUCCESS) gemmi8_packed_free(packed);
}

/* gemmi8_qd8_gemm_f32, _ex and gemmi8_qd8_linear_f32 on 4-bit weights; the qdu8 ones on
 * them too; the entry points that must refuse them. */
static void q4_gemm_errors(const fixture* fx)
{
  const char* fn = "gemmi8_qd8_gemm_f32 (4-bit)";
  const char* fn_ex = "gemmi8_qd8_gemm_f32_ex (4-bit)";
  const char* fn_lin = "gemmi8_qd8_linear_f32 (4-bit)";
  float scale[N * Q4_BLOCKS], bias[N];
  uint8_t zp[N * Q4_BLOCKS];
  for (size_t x = 0; x < N * Q4_BLOCKS; x++) scale[x] = 0.01f, zp[x] = (uint8_t) (x % 16);
  for (size_t j = 0; j < N; j++) bias[j] = (float) j;
  const gemmi8_q4_weights w = { fx->b, Q4_ROW, 32, scale, zp, bias };
  const gemmi8_q4_weights wc = { fx->b, Q4_ROW, 0, scale, NULL, NULL };
  const gemmi8_q4_weights wk = { fx->b, Q4_ROW, 32, scale, zp, bias }; /* for K - 1 */
  void *packed = NULL, *packed_c = NULL, *other_k = NULL;
  gemmi8_status st = gemmi8_qd8_pack_q4_alloc(N, K, &w, &packed);
  gemmi8_status st2 = gemmi8_qd8_pack_q4_alloc(N, K, &wc, &packed_c);
  gemmi8_status st3 = gemmi8_qd8_pack_q4_alloc(N, K - 1, &wk, &other_k);
  if (!t_expect(st == SUCCESS && st2 == SUCCESS && st3 == SUCCESS, fn,
                "packing the fixture: \"%s\" \"%s\" \"%s\"", name(st), name(st2), name(st3))) {
    gemmi8_packed_free(packed);
    gemmi8_packed_free(packed_c);
    gemmi8_packed_free(other_k);
    return;
  }
  const int8_t* a = (const int8_t*) fx->a;
  float a_scale[M];
  int32_t a_zp[M];
  for (size_t i = 0; i < M; i++) a_scale[i] = 0.05f, a_zp[i] = -128 + (int32_t) i * 90;
  float c[M * N + 16];
  t_fill_random(c, sizeof(c));
  watch(c, sizeof(c));
#define QD(m_, n_, k_, a_, as_, sc_, zp_, pk_, mn_, mx_, c_, cs_) \
  gemmi8_qd8_gemm_f32(m_, n_, k_, a_, as_, sc_, zp_, pk_, mn_, mx_, c_, cs_)
#define RUN(m_, n_, k_, a_, as_, pk_, c_, cs_) \
  QD(m_, n_, k_, a_, as_, a_scale, a_zp, pk_, -INFINITY, INFINITY, c_, cs_)
  expect(fn, "valid call", RUN(M, N, K, a, K, packed, c, N), SUCCESS);
  expect(fn, "valid call, qc4w", RUN(M, N, K, a, K, packed_c, c, N), SUCCESS);
  expect(fn, "valid call, K - 1", RUN(M, N, K - 1, a, K, other_k, c, N), SUCCESS);
  qd_gemm_arg_errors(fn, 0, a, a_scale, a_zp, packed, c);
  expect(fn, "weights packed for k - 1", RUN(M, N, K, a, K, other_k, c, N), INVALID);
  expect2(fn, "k GEMMI8_QD8_MAX_K + 1",
          RUN(1, N, GEMMI8_QD8_MAX_K + 1, a, GEMMI8_QD8_MAX_K + 1, packed, c, N), INVALID,
          UNSUPPORTED);
  expect(fn, "packed misaligned", RUN(M, N, K, a, K, (const uint8_t*) packed + 32, c, N), INVALID);
  /* the header damaged, in a copy: every fourth byte (the block size too, under the
   * checksum) */
  char what[96];
  size_t size = 0;
  gemmi8_qd8_pack_q4_size(N, K, 32, &size);
  unsigned char* copy = t_alloc_aligned(size);
  for (size_t byte = 0; byte < 64; byte += 4) {
    memcpy(copy, packed, size);
    copy[byte] ^= 0x20;
    snprintf(what, sizeof(what), "header byte %zu ^ 0x20", byte);
    expect(fn, what, RUN(M, N, K, a, K, copy, c, N), INVALID);
  }
  free(copy);
  /* the uint8 rows' GEMMs take them too (zero points 0..255: the int8 ones are out
   * of range there) */
  int32_t u8_zp[M];
  for (size_t i = 0; i < M; i++) u8_zp[i] = a_zp[i] + 128;
  expect("gemmi8_qdu8_gemm_f32", "4-bit weights, int8 rows' zero points",
         gemmi8_qdu8_gemm_f32(M, N, K, fx->a, K, a_scale, a_zp, packed, -INFINITY, INFINITY, c, N),
         INVALID);
  expect("gemmi8_qdu8_gemm_f32", "4-bit weights",
         gemmi8_qdu8_gemm_f32(M, N, K, fx->a, K, a_scale, u8_zp, packed, -INFINITY, INFINITY, c, N),
         SUCCESS);
  expect("gemmi8_qdu8_gemm_f32_ex", "4-bit weights",
         gemmi8_qdu8_gemm_f32_ex(M, N, K, fx->a, K, a_scale, u8_zp, packed_c, -INFINITY, INFINITY,
                                 c, N, NULL),
         SUCCESS);
  /* 4-bit weights where they are not accepted */
  expect("gemmi8_qs8_gemm_s32", "4-bit weights",
         gemmi8_qs8_gemm_s32(M, N, K, a, K, packed, (int32_t*) c, N), INVALID);
  expect("gemmi8_qu8s8_gemm_s32", "4-bit weights",
         gemmi8_qu8s8_gemm_s32(M, N, K, fx->a, K, packed_c, (int32_t*) c, N), INVALID);
  /* per row: any finite scale, zero points -128..127, at every row */
  for (size_t i = 0; i < M; i++) {
    const float fine[] = { 0.0f, -0.0f, -2.0f, FLT_TRUE_MIN, FLT_MAX };
    for (size_t f = 0; f < T_COUNT(fine); f++) {
      a_scale[i] = fine[f];
      snprintf(what, sizeof(what), "a_scale[%zu] %g (valid)", i, (double) fine[f]);
      expect(fn, what, RUN(M, N, K, a, K, packed, c, N), SUCCESS);
    }
    const float bad[] = { NAN, -NAN, INFINITY, -INFINITY };
    for (size_t f = 0; f < T_COUNT(bad); f++) {
      a_scale[i] = bad[f];
      snprintf(what, sizeof(what), "a_scale[%zu] %g", i, (double) bad[f]);
      expect(fn, what, RUN(M, N, K, a, K, packed, c, N), INVALID);
    }
    a_scale[i] = 0.05f;
    const int32_t zp_fine[] = { -128, 127 };
    for (size_t z = 0; z < T_COUNT(zp_fine); z++) {
      a_zp[i] = zp_fine[z];
      snprintf(what, sizeof(what), "a_zero_point[%zu] %d (valid)", i, (int) zp_fine[z]);
      expect(fn, what, RUN(M, N, K, a, K, packed_c, c, N), SUCCESS);
    }
    const int32_t zp_bad[] = { -129, 128, 255, INT32_MIN, INT32_MAX };
    for (size_t z = 0; z < T_COUNT(zp_bad); z++) {
      a_zp[i] = zp_bad[z];
      snprintf(what, sizeof(what), "a_zero_point[%zu] %d", i, (int) zp_bad[z]);
      expect(fn, what, RUN(M, N, K, a, K, packed, c, N), INVALID);
    }
    a_zp[i] = -128 + (int32_t) i * 90;
  }
  /* the clamp */
  static const struct {
    float min, max;
    int valid;
    const char* what;
  } clamps[] = {
    { 1.0f, -1.0f, 0, "min > max" },
    { NAN, 1.0f, 0, "min NaN" },
    { -1.0f, NAN, 0, "max NaN" },
    { INFINITY, -INFINITY, 0, "min inf, max -inf" },
    { 0.5f, 0.5f, 1, "min == max (valid)" },
    { 0.0f, -0.0f, 1, "+0, -0 (valid: equal)" },
    { -INFINITY, -INFINITY, 1, "-inf, -inf (valid)" },
  };
  for (size_t i = 0; i < T_COUNT(clamps); i++) {
    expect(fn, clamps[i].what,
           QD(M, N, K, a, K, a_scale, a_zp, packed, clamps[i].min, clamps[i].max, c, N),
           clamps[i].valid ? SUCCESS : INVALID);
  }
  /* _ex: the parallel argument */
  const gemmi8_parallel no_fn = { NULL, NULL, 2 };
  const gemmi8_parallel too_many = { parallel_nothing, NULL, GEMMI8_MAX_THREADS + 1 };
  const gemmi8_parallel fine_par = { parallel_nothing, NULL, 3 };
#define QD_EX(par_, c_) \
  gemmi8_qd8_gemm_f32_ex(M, N, K, a, K, a_scale, a_zp, packed, -1.0f, 1.0f, c_, N, par_)
  expect(fn_ex, "parallel NULL (valid)", QD_EX(NULL, c), SUCCESS);
  expect(fn_ex, "a parallel-for of 3 threads (valid)", QD_EX(&fine_par, c), SUCCESS);
  expect(fn_ex, "parallel_for NULL", QD_EX(&no_fn, c), INVALID);
  expect(fn_ex, "GEMMI8_MAX_THREADS + 1 threads", QD_EX(&too_many, c), INVALID);
  expect(fn_ex, "c NULL", QD_EX(NULL, NULL), INVALID);
#undef QD_EX
#undef RUN
#undef QD
  unwatch_all();

  /* the linear layer: C and the workspace untouched on failure */
  enum { XS = K + 3 }; /* x_stride with a gap */
  float x[M * XS];
  for (size_t i = 0; i < M * XS; i++) x[i] = (float) t_range(-50, 50) / 8.0f;
  size_t ws_size = 0;
  st = gemmi8_qd8_linear_workspace_size(M, K, &ws_size);
  const size_t ws_cap = ws_size + 128;
  unsigned char* ws = t_alloc_aligned(ws_cap);
  t_fill_random(ws, ws_cap);
  t_fill_random(c, sizeof(c));
  watch(c, sizeof(c));
#define LIN(m_, n_, k_, x_, xs_, pk_, mn_, mx_, c_, cs_, ws_, wss_, par_) \
  gemmi8_qd8_linear_f32(m_, n_, k_, x_, xs_, pk_, mn_, mx_, c_, cs_, ws_, wss_, par_)
#define L(m_, n_, k_, x_, xs_, pk_, c_, cs_, ws_, wss_) \
  LIN(m_, n_, k_, x_, xs_, pk_, -2.0f, 2.0f, c_, cs_, ws_, wss_, NULL)
  expect(fn_lin, "valid call, workspace given", L(M, N, K, x, XS, packed, c, N, ws, ws_size),
         SUCCESS);
  expect(fn_lin, "valid call, workspace NULL, qc4w", L(M, N, K, x, XS, packed_c, c, N, NULL, 0),
         SUCCESS);
  watch(ws, ws_cap); /* the workspace is the library's only in a call that succeeds */
  expect(fn_lin, "x NULL", L(M, N, K, NULL, XS, packed, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "packed_b NULL", L(M, N, K, x, XS, NULL, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "c NULL", L(M, N, K, x, XS, packed, NULL, N, ws, ws_size), INVALID);
  expect(fn_lin, "m 0", L(0, N, K, x, XS, packed, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "n 0", L(M, 0, K, x, XS, packed, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "k 0", L(M, N, 0, x, XS, packed, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "x_stride k - 1", L(M, N, K, x, K - 1, packed, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "c_stride n - 1", L(M, N, K, x, XS, packed, c, N - 1, ws, ws_size), INVALID);
  expect(fn_lin, "m SIZE_MAX / 2", L(HUGE_SIZE, N, K, x, XS, packed, c, N, NULL, 0), INVALID);
  expect(fn_lin, "x_stride SIZE_MAX / 8 (the float extent overflows)",
         L(M, N, K, x, SIZE_MAX / 8, packed, c, N, ws, ws_size), INVALID);
  expect(fn_lin, "n + 1 (not the packed n)", L(M, N + 1, K, x, XS, packed, c, N + 1, ws, ws_size),
         INVALID);
  expect(fn_lin, "k - 1 (not the packed k)", L(M, N, K - 1, x, XS, packed, c, N, ws, ws_size),
         INVALID);
  expect(fn_lin, "weights packed for k - 1", L(M, N, K, x, XS, other_k, c, N, ws, ws_size),
         INVALID);
  expect2(fn_lin, "k GEMMI8_QD8_MAX_K + 1",
          L(1, N, GEMMI8_QD8_MAX_K + 1, x, GEMMI8_QD8_MAX_K + 1, packed, c, N, NULL, 0), INVALID,
          UNSUPPORTED);
  expect(fn_lin, "workspace_size one byte short", L(M, N, K, x, XS, packed, c, N, ws, ws_size - 1),
         INVALID);
  expect(fn_lin, "workspace misaligned by 16 bytes",
         L(M, N, K, x, XS, packed, c, N, ws + 16, ws_size), INVALID);
  expect(fn_lin, "min > max", LIN(M, N, K, x, XS, packed, 1.0f, -1.0f, c, N, ws, ws_size, NULL),
         INVALID);
  expect(fn_lin, "min NaN", LIN(M, N, K, x, XS, packed, NAN, 1.0f, c, N, ws, ws_size, NULL),
         INVALID);
  expect(fn_lin, "parallel_for NULL",
         LIN(M, N, K, x, XS, packed, -1.0f, 1.0f, c, N, ws, ws_size, &no_fn), INVALID);
  expect("gemmi8_qdu8_linear_f32", "4-bit weights, workspace given",
         gemmi8_qdu8_linear_f32(M, N, K, x, XS, packed, -2.0f, 2.0f, c, N, ws, ws_size, NULL),
         SUCCESS);
  expect("gemmi8_qdu8_linear_f32", "4-bit weights, workspace NULL",
         gemmi8_qdu8_linear_f32(M, N, K, x, XS, packed_c, -2.0f, 2.0f, c, N, NULL, 0, NULL),
         SUCCESS);
  const float keep = x[XS + 5];
  x[XS + 5] = NAN;
  expect(fn_lin, "x[1][5] NaN", L(M, N, K, x, XS, packed, c, N, ws, ws_size), INVALID);
  x[XS + 5] = FLT_MAX;
  x[XS + 9] = -FLT_MAX;
  expect(fn_lin, "row 1 from -FLT_MAX to FLT_MAX (its range overflows)",
         L(M, N, K, x, XS, packed, c, N, NULL, 0), INVALID);
  x[XS + 5] = keep;
  x[XS + 9] = 1.0f;
  unwatch_all();
  t_fill_random(c, sizeof(c));
  watch(c, sizeof(c));
  x[K + 1] = NAN;
  expect(fn_lin, "NaN in the gap between rows (valid)",
         L(M, N, K, x, XS, packed, c, N, ws, ws_size), SUCCESS);
#undef L
#undef LIN
  unwatch_all();
  free(ws);
  gemmi8_packed_free(packed);
  gemmi8_packed_free(packed_c);
  gemmi8_packed_free(other_k);
}

/* The quantization helpers: gemmi8_choose_qparams, gemmi8_quantize_f32,
 * gemmi8_dequantize_f32, gemmi8_quantize_bias, gemmi8_requant_scales and the
 * calibration object (test-qhelp.c goes through every status in detail). */
static void qhelp_errors(void)
{
  const gemmi8_qscheme onnx = gemmi8_qscheme_onnx, bad_scheme = (gemmi8_qscheme) 7;
  const gemmi8_qrange u8 = gemmi8_qrange_u8, bad_range = (gemmi8_qrange) 7;
  const gemmi8_qaxis tensor = gemmi8_qaxis_tensor, bad_axis = (gemmi8_qaxis) 7;
  const float x[4] = {1.0f, -2.0f, 0.5f, 3.0f}, lo[2] = {-1.0f, 0.0f}, hi[2] = {1.0f, 2.0f};
  const float one[2] = {1.0f, 1.0f}, nan_one[2] = {1.0f, NAN};
  const int32_t zero[2] = {0, 0}, zp_256[2] = {0, 256};
  uint8_t y[8];
  float f[8];
  int32_t z[8], m[8];
  memset(y, 0x5a, sizeof(y));
  memset(f, 0x5a, sizeof(f));
  memset(z, 0x5a, sizeof(z));
  memset(m, 0x5a, sizeof(m));
  watch(y, sizeof(y));
  watch(f, sizeof(f));
  watch(z, sizeof(z));
  watch(m, sizeof(m));
  const char* fn = "gemmi8_choose_qparams";
  expect(fn, "valid call", gemmi8_choose_qparams(onnx, u8, 2, lo, hi, f, z), SUCCESS);
  expect(fn, "min NULL", gemmi8_choose_qparams(onnx, u8, 2, NULL, hi, f, z), INVALID);
  expect(fn, "scale NULL", gemmi8_choose_qparams(onnx, u8, 2, lo, hi, NULL, z), INVALID);
  expect(fn, "count 0", gemmi8_choose_qparams(onnx, u8, 0, lo, hi, f, z), INVALID);
  expect(fn, "count SIZE_MAX", gemmi8_choose_qparams(onnx, u8, SIZE_MAX, lo, hi, f, z), INVALID);
  expect(fn, "scheme 7", gemmi8_choose_qparams(bad_scheme, u8, 2, lo, hi, f, z), INVALID);
  expect(fn, "range 7", gemmi8_choose_qparams(onnx, bad_range, 2, lo, hi, f, z), INVALID);
  expect(fn, "min > max", gemmi8_choose_qparams(onnx, u8, 2, hi, lo, f, z), INVALID);
  expect(fn, "max NaN", gemmi8_choose_qparams(onnx, u8, 2, lo, nan_one, f, z), INVALID);
  fn = "gemmi8_quantize_f32";
  expect(fn, "valid call", gemmi8_quantize_f32(onnx, u8, tensor, 2, 2, x, one, zero, y), SUCCESS);
  expect(fn, "x NULL", gemmi8_quantize_f32(onnx, u8, tensor, 2, 2, NULL, one, zero, y), INVALID);
  expect(fn, "y NULL", gemmi8_quantize_f32(onnx, u8, tensor, 2, 2, x, one, zero, NULL), INVALID);
  expect(fn, "rows 0", gemmi8_quantize_f32(onnx, u8, tensor, 0, 2, x, one, zero, y), INVALID);
  expect(fn, "rows x cols overflows", gemmi8_quantize_f32(onnx, u8, tensor, HUGE_SIZE, 4, x, one, zero, y), INVALID);
  expect(fn, "axis 7", gemmi8_quantize_f32(onnx, u8, bad_axis, 2, 2, x, one, zero, y), INVALID);
  expect(fn, "scheme 7", gemmi8_quantize_f32(bad_scheme, u8, tensor, 2, 2, x, one, zero, y), INVALID);
  expect(fn, "scale[1] NaN (per row)", gemmi8_quantize_f32(onnx, u8, gemmi8_qaxis_row, 2, 2, x, nan_one, zero, y), INVALID);
  expect(fn, "zero_point[1] 256 (per column)", gemmi8_quantize_f32(onnx, u8, gemmi8_qaxis_column, 2, 2, x, one, zp_256, y), INVALID);
  fn = "gemmi8_dequantize_f32";
  expect(fn, "valid call", gemmi8_dequantize_f32(u8, tensor, 2, 2, y, one, zero, f), SUCCESS);
  expect(fn, "q NULL", gemmi8_dequantize_f32(u8, tensor, 2, 2, NULL, one, zero, f), INVALID);
  expect(fn, "cols 0", gemmi8_dequantize_f32(u8, tensor, 2, 0, y, one, zero, f), INVALID);
  expect(fn, "rows x cols overflows", gemmi8_dequantize_f32(u8, tensor, 4, HUGE_SIZE, y, one, zero, f), INVALID);
  expect(fn, "range 7", gemmi8_dequantize_f32(bad_range, tensor, 2, 2, y, one, zero, f), INVALID);
  expect(fn, "zero_point[1] 256, symmetric", gemmi8_dequantize_f32(gemmi8_qrange_s8_symmetric, gemmi8_qaxis_row, 2, 2, y, one, zp_256, f), INVALID);
  fn = "gemmi8_quantize_bias";
  expect(fn, "valid call", gemmi8_quantize_bias(onnx, 2, x, 0.5f, one, 1, m), SUCCESS);
  expect(fn, "bias NULL", gemmi8_quantize_bias(onnx, 2, NULL, 0.5f, one, 1, m), INVALID);
  expect(fn, "count 0", gemmi8_quantize_bias(onnx, 0, x, 0.5f, one, 1, m), INVALID);
  expect(fn, "count SIZE_MAX", gemmi8_quantize_bias(onnx, SIZE_MAX, x, 0.5f, one, 0, m), INVALID);
  expect(fn, "a_scale 0", gemmi8_quantize_bias(onnx, 2, x, 0.0f, one, 1, m), INVALID);
  expect(fn, "w_scale[1] NaN", gemmi8_quantize_bias(onnx, 2, x, 0.5f, nan_one, 1, m), INVALID);
  expect(fn, "bias[1] NaN", gemmi8_quantize_bias(onnx, 2, nan_one, 0.5f, one, 1, m), INVALID);
  fn = "gemmi8_requant_scales";
  expect(fn, "valid call", gemmi8_requant_scales(onnx, 2, 0.5f, one, 0.25f, f, m, z), SUCCESS);
  expect(fn, "count 0", gemmi8_requant_scales(onnx, 0, 0.5f, one, 0.25f, f, m, z), INVALID);
  expect(fn, "w_scale NULL", gemmi8_requant_scales(onnx, 2, 0.5f, NULL, 0.25f, f, m, z), INVALID);
  expect(fn, "shift NULL", gemmi8_requant_scales(onnx, 2, 0.5f, one, 0.25f, f, m, NULL), INVALID);
  expect(fn, "outputs NULL", gemmi8_requant_scales(onnx, 2, 0.5f, one, 0.25f, NULL, NULL, NULL), INVALID);
  expect(fn, "c_scale -1", gemmi8_requant_scales(onnx, 2, 0.5f, one, -1.0f, f, m, z), INVALID);
  expect(fn, "w_scale[1] NaN", gemmi8_requant_scales(gemmi8_qscheme_tflite, 2, 0.5f, nan_one, 0.25f, f, m, z), INVALID);
  unwatch_all();
  gemmi8_calibration* cal = (gemmi8_calibration*) (uintptr_t) 0x40;
  watch(&cal, sizeof(cal));
  fn = "gemmi8_calibration_create";
  expect(fn, "channels 0", gemmi8_calibration_create(0, &cal), INVALID);
  expect(fn, "channels SIZE_MAX", gemmi8_calibration_create(SIZE_MAX, &cal), INVALID);
  expect(fn, "cal NULL", gemmi8_calibration_create(1, NULL), INVALID);
  unwatch_all();
  if (gemmi8_calibration_create(2, &cal) != SUCCESS) {
    t_fail(fn, "a valid create failed");
    return;
  }
  fn = "gemmi8_calibration_update";
  expect(fn, "valid call", gemmi8_calibration_update(cal, 4, x), SUCCESS);
  expect(fn, "cal NULL", gemmi8_calibration_update(NULL, 4, x), INVALID);
  expect(fn, "x NULL", gemmi8_calibration_update(cal, 4, NULL), INVALID);
  expect(fn, "count 0", gemmi8_calibration_update(cal, 0, x), INVALID);
  expect(fn, "count 3 (channels 2)", gemmi8_calibration_update(cal, 3, x), INVALID);
  expect(fn, "count SIZE_MAX - 1", gemmi8_calibration_update(cal, SIZE_MAX - 1, x), INVALID);
  expect(fn, "a NaN", gemmi8_calibration_update(cal, 2, nan_one), INVALID);
  fn = "gemmi8_calibration_range";
  watch(f, sizeof(f));
  watch(z, sizeof(z));
  expect(fn, "valid call", gemmi8_calibration_range(cal, 99.0, f, f + 2), SUCCESS);
  expect(fn, "cal NULL", gemmi8_calibration_range(NULL, 99.0, f, f + 2), INVALID);
  expect(fn, "max NULL", gemmi8_calibration_range(cal, 99.0, f, NULL), INVALID);
  expect(fn, "percentile 49", gemmi8_calibration_range(cal, 49.0, f, f + 2), INVALID);
  expect(fn, "percentile NaN", gemmi8_calibration_range(cal, NAN, f, f + 2), INVALID);
  expect(fn, "percentile 101", gemmi8_calibration_range(cal, 101.0, f, f + 2), INVALID);
  unwatch_all();
  gemmi8_calibration_destroy(cal);
}

void test_errors(void)
{
  fixture fx;
  if (fixture_make(&fx)) {
    qgemm_errors(&fx);
    requant_errors(&fx);
    qpack_errors(&fx);
    bin_pack_rows_errors();
    bin_pack_errors(&fx);
    bin_gemm_errors(&fx);
    for (int u8 = 0; u8 <= 1; u8++) {
      qd_pack_errors(u8, &fx);
      qd_gemm_errors(u8, &fx);
    }
    q4_pack_errors(&fx);
    q4_gemm_errors(&fx);
  }
  fixture_free(&fx);
  qhelp_errors();
}

/* ---- status strings, version, ISA -------------------------------------------------------- */

void test_misc(void)
{
  const gemmi8_status all[] = {gemmi8_status_success, gemmi8_status_invalid_parameter,
                               gemmi8_status_unsupported_parameter, gemmi8_status_out_of_memory,
                               gemmi8_status_unsupported_hardware};
  for (size_t i = 0; i < T_COUNT(all); i++) {
    const char* s = gemmi8_status_string(all[i]);
    int distinct = 1;
    for (size_t j = 0; s != NULL && j < i; j++) {
      const char* o = gemmi8_status_string(all[j]);
      if (o != NULL && strcmp(o, s) == 0) distinct = 0;
    }
    t_expect(s != NULL && *s != '\0' && strcmp(s, "unknown status") != 0 && distinct,
             "gemmi8_status_string", "status %d: \"%s\"%s", (int) all[i], s ? s : "(NULL)",
             distinct ? "" : " (same as another status)");
  }
  const char* inv = gemmi8_status_string(gemmi8_status_invalid_parameter);
  t_expect(inv != NULL && strcmp(inv, "invalid parameter") == 0, "gemmi8_status_string",
           "invalid_parameter: \"%s\", expected \"invalid parameter\"", inv ? inv : "(NULL)");
  const gemmi8_status unknown[] = {(gemmi8_status) 5, (gemmi8_status) 99,
                                   (gemmi8_status) 0x7FFFFFFF};
  for (size_t i = 0; i < T_COUNT(unknown); i++) {
    const char* s = gemmi8_status_string(unknown[i]);
    t_expect(s != NULL && strcmp(s, "unknown status") == 0, "gemmi8_status_string",
             "status %d: \"%s\", expected \"unknown status\"", (int) unknown[i], s ? s : "(NULL)");
  }

  /* Each family takes its own best kernel set: a CPU with AVX-512BW but no VNNI
   * (the features of level avx512bw) runs the AVX-512BW binary kernels. */
  static const struct {
    const char *level, *qu8, *qs8, *bin;
  } plans[] = {
      {"generic", "generic", "generic", "generic"},
#if defined(__x86_64__)
      {"avx2", "avx2", "avx2", "avx2"},
      {"avx512bw", "avx2", "avx2", "avx512bw"},
      {"avx512vnni", "avx512vnni", "avx512vnni", "avx512bw"},
      {"avx512vpopcnt", "avx512vnni", "avx512vnni", "avx512vpopcnt"},
#elif defined(__aarch64__)
      {"neon", "neon", "neon", "neon"},
      {"neondot", "neondot", "neondot", "neon"},
      {"i8mm", "i8mm", "i8mm", "neon"},
#elif defined(__arm__)
      {"armv7neon", "armv7neon", "armv7neon", "armv7neon"},
#endif
  };
  for (size_t i = 0; i < T_COUNT(plans); i++) {
    const char *qu8 = "", *qs8 = "", *bin = "";
    const int r = gemmi8_isa_plan(plans[i].level, &qu8, &qs8, &bin);
    t_expect(r == 0 && strcmp(qu8, plans[i].qu8) == 0 && strcmp(qs8, plans[i].qs8) == 0 &&
                 strcmp(bin, plans[i].bin) == 0,
             "gemmi8_isa_plan", "level %s: qu8 %s, qs8 %s, bin %s; expected %s, %s, %s",
             plans[i].level, qu8, qs8, bin, plans[i].qu8, plans[i].qs8, plans[i].bin);
  }
  const char* none = NULL;
  t_expect(gemmi8_isa_plan("avx9", &none, &none, &none) == -1 && none == NULL,
           "gemmi8_isa_plan", "an unknown level is -1");

  char want[32];
  snprintf(want, sizeof(want), "%d.%d.%d", GEMMI8_VERSION_MAJOR, GEMMI8_VERSION_MINOR,
           GEMMI8_VERSION_PATCH);
  const char* v = gemmi8_version();
  t_expect(v != NULL && strcmp(v, want) == 0, "gemmi8_version", "\"%s\", expected \"%s\"",
           v ? v : "(NULL)", want);
  t_expect(GEMMI8_VERSION ==
               GEMMI8_VERSION_MAJOR * 10000 + GEMMI8_VERSION_MINOR * 100 + GEMMI8_VERSION_PATCH,
           "GEMMI8_VERSION", "%d", GEMMI8_VERSION);

  const char* isa = gemmi8_isa_name();
  t_expect(isa != NULL && strcmp(isa, t_isa_level()) == 0, "gemmi8_isa_name",
           "\"%s\" after forcing \"%s\"", isa ? isa : "(NULL)", t_isa_level());
  t_expect(!gemmi8_isa_supported("no-such-isa") && gemmi8_isa_force("no-such-isa") == -1,
           "gemmi8_isa_force", "accepted an unknown name");
  isa = gemmi8_isa_name();
  t_expect(isa != NULL && strcmp(isa, t_isa_level()) == 0, "gemmi8_isa_name",
           "\"%s\" after a refused force, expected \"%s\" to stay", isa ? isa : "(NULL)",
           t_isa_level());
}
