/*
 * Rows quantized at run time, float output: gemmi8_qd8_* (int8 rows) and gemmi8_qdu8_*
 * (uint8 rows) with int8 weights, every entry point (not yet the 4-bit packers,
 * gemmi8_qd8_pack_q4*), against a reference written from include/gemmi8.h:
 *   acc = sum_k (A[m][k] - a_zero_point[m]) * B[n][k]     (int64, must fit int32)
 *   v = (float) acc * a_scale[m];  v = v * b_scale[n];  v = v + bias[n];  clamp
 * compared bit for bit; the linear layer against ref_quantize_row_s8 / _u8 and then
 * the same formula.
 *
 * One input is one call, of:
 *   gemm    pack (exact size, larger, allocated, a copy), then gemmi8_qd*_gemm_f32 or
 *           its _ex variant (NULL, a shuffled parallel-for, gemmi8's pool): shapes small,
 *           medium, deep (K at and below GEMMI8_QD8_MAX_K, bytes at their extremes),
 *           tall (M past 1024) or big enough to split; strides and offsets; scales and
 *           biases ordinary, zero, -0, negative, denormal, huge (products overflow to
 *           infinity, NaN where an infinity meets a zero scale); row zero points over
 *           their range; clamps none, one-sided, a window, a point, +-0;
 *   linear  gemmi8_qd*_linear_f32 with the workspace given (exact, larger) or NULL,
 *           the rows any finite floats (their gaps any bits, NaN included);
 *   pack    gemmi8_qd*_pack / _pack_alloc;
 *   sizes   gemmi8_qd*_pack_size and gemmi8_qd8_linear_workspace_size, sizes small or
 *           near SIZE_MAX;
 * and zero, one or two mutations of it: null pointers; zero sizes; sizes and strides
 * near SIZE_MAX, PTRDIFF_MAX, 2^32 or at the largest extent that fits; M = 1 with
 * strides near SIZE_MAX (valid); N or K other than the packed ones, K past the limit;
 * a row scale NaN or infinite; a row zero point out of range; clamps with a NaN or
 * min > max; scales and biases NaN or infinite (packing); unknown flags; misaligned
 * or too small packed buffers and workspaces; packed weights of another type (qs8,
 * qu8s8, qu8, bin, the other row type) or shape, or damaged (header bytes flipped, in
 * place or in a copy; N or K flipped with a call that agrees); weights or the
 * per-channel tail flipped (not checksummed: the call must run and stay in its
 * buffers); the weights passed to the qs8 / qu8s8 GEMM; a parallel-for that is NULL
 * or claims too many threads; NaN or infinity in a row of the linear layer (invalid),
 * or in the gap between rows (valid), or a row whose range overflows float (its
 * scale would be infinite: invalid).
 *
 * The expected status comes from the header's rules (a model written here): success
 * or the set of statuses of the rules broken. Inputs are exact-size blocks, remade
 * for each call at the extent it describes (AddressSanitizer reports any read past
 * them: A rows of k bytes, x rows of k floats, m row scales and zero points, n
 * scales and biases); outputs carry a canary and poisoned guards; on failure nothing
 * is written (C, the workspace, the packed buffer, *packed, *size); packed weights
 * never change. A call runs when its buffers hold what it describes, or when it is
 * invalid for a reason that needs no read of them (sizes, pointers, the packed
 * header, the clamp in the linear layer).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ref.h"

#define OK FUZZ_BIT(gemmi8_status_success)
#define INV FUZZ_BIT(gemmi8_status_invalid_parameter)
#define UNS FUZZ_BIT(gemmi8_status_unsupported_parameter)
#define MAX_K ((size_t) GEMMI8_QD8_MAX_K)
/* Keeps the reference (M * N * K multiply-adds) to a few milliseconds a run. */
#define WORK_BUDGET (UINT64_C(4) << 20)
/* Largest output or workspace a run allocates. */
#define CAP ((size_t) 1 << 24)

static const char* const type_name[] = { "qd8", "qdu8" };

/* ---- sizes that make trouble (as fuzz-errors.c) --------------------------------- */

/* ---- floats --------------------------------------------------------------------- */

/* ---- the reference ---------------------------------------------------------------- */

/* The header's output stage, each step rounded to float, the clamp as written. */
static float ref_out(int64_t acc, float a_scale, float b_scale, float bias, float lo, float hi)
{
  if (acc < INT32_MIN || acc > INT32_MAX) fuzz_fail("acc %lld leaves int32", (long long) acc);
  float v = (float) (int32_t) acc;
  v = v * a_scale;
  v = v * b_scale;
  v = v + bias;
  v = lo > v ? lo : v;
  v = hi < v ? hi : v;
  return v;
}

/* ---- weights ---------------------------------------------------------------------- */

struct weights {
  size_t n, k;
  int kn;
  size_t stride;
  int8_t* b; /* exact-size block */
  void* b_block;
  size_t b_bytes;
  float* scale; /* n, exact */
  void* scale_block;
  float* bias; /* n, exact, or NULL */
  void* bias_block;
};

static size_t w_rows(const struct weights* w)
{
  return w->kn ? w->k : w->n;
}
static size_t w_cols(const struct weights* w)
{
  return w->kn ? w->n : w->k;
}

/* How B is filled: random, lowest, highest, two values, a constant, or each column at
 * one extreme (+127 / -128 alternating: with A at its extremes, the largest sums). */
static void fill_b(struct fuzz_reader* r, struct weights* w, unsigned kind, int8_t constant)
{
  for (size_t i = 0; i < w_rows(w); i++) {
    int8_t* row = w->b + i * w->stride;
    for (size_t j = 0; j < w_cols(w); j++) {
      const size_t col = w->kn ? j : i;
      switch (kind) {
        case 1: row[j] = -128; break;
        case 2: row[j] = 127; break;
        case 3: row[j] = (fuzz_random(r) & 1) ? 127 : -128; break;
        case 4: row[j] = constant; break;
        case 5: row[j] = col % 2 ? 127 : -128; break;
        default: break; /* random, as generated */
      }
    }
  }
}

static void weights_init(struct fuzz_reader* r, struct weights* w, size_t n, size_t k, int extremes)
{
  memset(w, 0, sizeof(*w));
  w->n = n;
  w->k = k;
  const uint8_t s = fuzz_u8(r);
  w->kn = s & 1;
  w->stride = w_cols(w) + fuzz_extra(r, 64);
  w->b_bytes = (w_rows(w) - 1) * w->stride + w_cols(w);
  w->b = fuzz_exact(r, w->b_bytes, 0, &w->b_block);
  fill_b(r, w, extremes ? 5 : (s >> 1) % 8, (int8_t) fuzz_u8(r));
  w->scale = fuzz_exact(r, n * sizeof(float), 0, &w->scale_block);
  fuzz_fill_scales(r, w->scale, n, -12, 0, 0);
  const uint8_t bias_kind = fuzz_u8(r) % 5;
  if (bias_kind != 0) {
    w->bias = fuzz_exact(r, n * sizeof(float), 0, &w->bias_block);
    for (size_t j = 0; j < n; j++) {
      switch (bias_kind) {
        case 1: w->bias[j] = (fuzz_random(r) & 1) ? -0.0f : 0.0f; break;
        case 2: w->bias[j] = fuzz_make_finite(fuzz_f32_special_any(r)); break;
        default: w->bias[j] = fuzz_useful(r, -8, 4); break;
      }
    }
  }
}

static void weights_free(struct weights* w)
{
  free(w->b_block);
  free(w->scale_block);
  free(w->bias_block);
}

/* sum_k (row[k] - zp) * B[j][k] over int8 (u8 == 0) or uint8 bytes, in 64 bits. Its
 * loop is kept out of the coverage feedback (as test/ref.c is): it says nothing about
 * the library and took most of the time. */
__attribute__((no_sanitize("coverage"))) static int64_t ref_dot(int u8, const uint8_t* row,
                                                                int32_t zp, const struct weights* w,
                                                                size_t j)
{
  int64_t acc = 0;
  for (size_t kk = 0; kk < w->k; kk++) {
    const int64_t av = u8 ? (int64_t) row[kk] : (int64_t) (int8_t) row[kk];
    const int8_t bv = w->kn ? w->b[kk * w->stride + j] : w->b[j * w->stride + kk];
    acc += (av - zp) * bv;
  }
  return acc;
}

static gemmi8_status pack_size(int u8, size_t n, size_t k, size_t* size)
{
  return u8 ? gemmi8_qdu8_pack_size(n, k, size) : gemmi8_qd8_pack_size(n, k, size);
}

static gemmi8_status pack_call(int u8, size_t n, size_t k, const int8_t* b, size_t stride,
                               uint32_t flags, const float* scale, const float* bias, void* packed,
                               size_t packed_size)
{
  return u8 ? gemmi8_qdu8_pack(n, k, b, stride, flags, scale, bias, packed, packed_size)
            : gemmi8_qd8_pack(n, k, b, stride, flags, scale, bias, packed, packed_size);
}

static gemmi8_status pack_alloc_call(int u8, size_t n, size_t k, const int8_t* b, size_t stride,
                                     uint32_t flags, const float* scale, const float* bias,
                                     void** slot)
{
  return u8 ? gemmi8_qdu8_pack_alloc(n, k, b, stride, flags, scale, bias, slot)
            : gemmi8_qd8_pack_alloc(n, k, b, stride, flags, scale, bias, slot);
}

/* How the packed weights reach the GEMM. */
enum pack_how { pack_exact, pack_larger, pack_alloc, pack_copy };
static const char* const pack_name[] = { "exact", "larger", "alloc", "copy" };

/* A valid packing (it must succeed) of w, as `how` says; *size: the packed size. The
 * result is freed with free() (an allocated one is copied into an aligned block: the
 * allocating packer is checked, then its buffer released). */
static void* pack_valid(struct fuzz_reader* r, int u8, const struct weights* w, enum pack_how how,
                        size_t* size)
{
  gemmi8_status s = pack_size(u8, w->n, w->k, size);
  fuzz_expect_status(s, OK, "pack_size (valid)");
  if (*size <= FUZZ_HEADER || *size % GEMMI8_PACK_ALIGNMENT != 0) {
    fuzz_fail("pack_size(%zu, %zu) = %zu: not a multiple of %d past the header", w->n, w->k, *size,
              GEMMI8_PACK_ALIGNMENT);
  }
  const uint32_t flags = w->kn ? GEMMI8_B_KN : GEMMI8_B_NK;
  if (how == pack_alloc) {
    void* got = NULL;
    s = pack_alloc_call(u8, w->n, w->k, w->b, w->stride, flags, w->scale, w->bias, &got);
    fuzz_expect_status(s, OK, "pack_alloc (valid)");
    if ((uintptr_t) got % GEMMI8_PACK_ALIGNMENT != 0) fuzz_fail("pack_alloc: %p misaligned", got);
    void* p = fuzz_aligned(*size);
    memcpy(p, got, *size);
    gemmi8_packed_free(got);
    return p;
  }
  const size_t have = *size + (how == pack_larger ? 1 + fuzz_u8(r) : 0);
  void* p = fuzz_aligned(have);
  fuzz_fill_random(r, p, have);
  s = pack_call(u8, w->n, w->k, w->b, w->stride, flags, w->scale, w->bias, p, have);
  fuzz_expect_status(s, OK, "pack (valid)");
  if (how == pack_copy) {
    /* the packed form holds no pointers: a copy works once the original is gone */
    void* copy = fuzz_aligned(*size);
    memcpy(copy, p, *size);
    free(p);
    p = copy;
  }
  return p;
}

/* ---- packed arguments ------------------------------------------------------------- */

/* The packed argument of a GEMM or linear call, valid or spoilt. */
struct packed_arg {
  void* owned;     /* freed with free() */
  void* allocated; /* freed with gemmi8_packed_free() */
  const void* ptr;
  size_t size;     /* bytes at ptr */
  int matches;     /* the contract accepts it for the call's type, n0 and k0 */
  int damaged;     /* weights or tail flipped: runs, results not checked */
  int agree_field; /* 1: n, 2: k damaged in the header, the call saying `agree` */
  size_t agree;
  char text[200];
};

/* Weights of another type packed from w's matrix (the same shape): qs8, qu8s8, qu8,
 * bin (random bits), or the other row type. */
static void* pack_foreign(struct fuzz_reader* r, const struct weights* w, int u8, unsigned kind,
                          const char** name, size_t* size)
{
  const uint32_t flags = w->kn ? GEMMI8_B_KN : GEMMI8_B_NK;
  void* p = NULL;
  gemmi8_status s;
  switch (kind) {
    case 0:
      *name = "qs8";
      s = gemmi8_qs8_pack_alloc(w->n, w->k, w->b, w->stride, flags, 0, NULL, &p);
      gemmi8_qs8_pack_size(w->n, w->k, size);
      break;
    case 1:
      *name = "qu8s8";
      s = gemmi8_qu8s8_pack_alloc(w->n, w->k, w->b, w->stride, flags, 0, NULL, &p);
      gemmi8_qu8s8_pack_size(w->n, w->k, size);
      break;
    case 2: {
      const uint8_t zp = fuzz_u8(r);
      *name = "qu8";
      s = gemmi8_qu8_pack_alloc(w->n, w->k, (const uint8_t*) w->b, w->stride, flags, 0, &zp, 0,
                                NULL, &p);
      gemmi8_qu8_pack_size(w->n, w->k, size);
      break;
    }
    case 3: {
      const size_t words = fuzz_words(w->k);
      uint64_t* bits = malloc(w->n * words * sizeof(uint64_t));
      if (bits == NULL) fuzz_fail("out of memory");
      fuzz_fill_random(r, bits, w->n * words * sizeof(uint64_t));
      *name = "bin";
      s = gemmi8_bin_pack_alloc(w->n, w->k, bits, words, GEMMI8_B_NK, &p);
      gemmi8_bin_pack_size(w->n, w->k, size);
      free(bits);
      break;
    }
    default:
      *name = u8 ? "qd8" : "qdu8";
      s = pack_alloc_call(!u8, w->n, w->k, w->b, w->stride, flags, w->scale, w->bias, &p);
      pack_size(!u8, w->n, w->k, size);
      break;
  }
  /* K past another type's limit (qu8's is lower) cannot be packed: no foreign buffer */
  if (s == gemmi8_status_unsupported_parameter) return NULL;
  fuzz_expect_status(s, OK, "foreign pack (valid)");
  return p;
}

/* The packed argument for a call on w (valid buffer `valid` of `size` bytes). */
static void spoil_packed(struct fuzz_reader* r, const struct weights* w, int u8, void* valid,
                         size_t size, unsigned how, struct packed_arg* p)
{
  memset(p, 0, sizeof(*p));
  p->ptr = valid;
  p->size = size;
  p->matches = 1;
  snprintf(p->text, sizeof(p->text), "packed valid");
  switch (how) {
    case 0: { /* a copy at an offset from the alignment */
      const size_t off = fuzz_range(r, 1, 63);
      uint8_t* q = fuzz_aligned(size + off);
      memcpy(q + off, valid, size);
      p->owned = q;
      p->ptr = q + off;
      p->matches = 0;
      snprintf(p->text, sizeof(p->text), "packed misaligned by %zu", off);
      break;
    }
    case 1: { /* the header damaged: the buffer itself, or a copy of it */
      uint8_t* q = valid;
      const uint8_t s = fuzz_u8(r);
      if (s & 1) {
        q = fuzz_aligned(size);
        memcpy(q, valid, size);
        p->owned = q;
        p->ptr = q;
      }
      p->matches = 0;
      const int field = (s & 2) ? 1 + ((s >> 2) & 1) : 0;
      const size_t value = field == 1 ? w->n : w->k;
      const int off = field ? fuzz_header_offset_of(q, value) : -1;
      if (off >= 0) {
        /* N or K damaged, and the call says the damaged value: only a check of the
         * header's integrity can tell */
        uint8_t x = fuzz_u8(r);
        if (x == 0) x = 1;
        q[off] ^= x;
        p->agree_field = field;
        p->agree = value ^ x;
        snprintf(p->text, sizeof(p->text),
                 "packed header byte %d ^= 0x%02x: %s %zu -> %zu, and the call agrees", off, x,
                 field == 1 ? "n" : "k", value, p->agree);
      } else {
        snprintf(p->text, sizeof(p->text), "packed header damaged:");
        fuzz_damage_header(r, q, p->text, sizeof(p->text));
      }
      break;
    }
    case 2: { /* bytes past the header flipped: weights or the per-channel tail (the
               * last bytes): not checksummed, the call must run within its buffers */
      uint8_t* q = fuzz_aligned(size);
      memcpy(q, valid, size);
      p->owned = q;
      p->ptr = q;
      p->damaged = 1;
      const size_t flips = fuzz_range(r, 1, 8);
      const int tail = fuzz_u8(r) & 1;
      const size_t body = size - FUZZ_HEADER;
      for (size_t i = 0; i < flips; i++) {
        const size_t span = tail ? (body < 12 * w->n + 64 ? body : 12 * w->n + 64) : body;
        const size_t at =
            tail ? size - 1 - fuzz_range(r, 0, span - 1) : FUZZ_HEADER + fuzz_range(r, 0, body - 1);
        q[at] ^= (uint8_t) (1 + fuzz_u8(r) % 255);
      }
      snprintf(p->text, sizeof(p->text), "packed %s damaged (%zu bytes)", tail ? "tail" : "weights",
               flips);
      break;
    }
    case 3: { /* another type, same shape */
      const char* name = "";
      size_t foreign_size = 0;
      void* q = pack_foreign(r, w, u8, fuzz_u8(r) % 5, &name, &foreign_size);
      if (q == NULL) break; /* stays valid */
      p->allocated = q;
      p->ptr = q;
      p->size = foreign_size;
      p->matches = 0;
      snprintf(p->text, sizeof(p->text), "packed for %s", name);
      break;
    }
    case 4: { /* the same type, another shape */
      struct weights other;
      const uint8_t s = fuzz_u8(r);
      size_t n = (s & 1) ? fuzz_range(r, 1, 80) : w->n;
      size_t k = (s & 2) ? fuzz_range(r, 1, 200) : w->k;
      if (n == w->n && k == w->k) k = k == 1 ? 2 : k - 1;
      weights_init(r, &other, n, k, 0);
      size_t other_size;
      p->owned = pack_valid(r, u8, &other, pack_exact, &other_size);
      weights_free(&other);
      p->ptr = p->owned;
      p->size = other_size;
      p->matches = 0;
      snprintf(p->text, sizeof(p->text), "packed for n %zu k %zu", n, k);
      break;
    }
    default: break;
  }
}

static void packed_arg_free(struct packed_arg* p)
{
  free(p->owned);
  gemmi8_packed_free(p->allocated);
}

/* ---- threads ---------------------------------------------------------------------- */

/* ---- rows and clamps ------------------------------------------------------------------ */

static int32_t zp_lo(int u8)
{
  return u8 ? 0 : -128;
}
static int32_t zp_hi(int u8)
{
  return u8 ? 255 : 127;
}

static void fill_zero_points(struct fuzz_reader* r, int u8, int32_t* zp, size_t m)
{
  const int32_t lo = zp_lo(u8), hi = zp_hi(u8);
  const uint8_t kind = fuzz_u8(r) % 5;
  const int32_t constant = fuzz_range_s32(r, lo, hi);
  for (size_t i = 0; i < m; i++) {
    switch (kind) {
      case 0: zp[i] = lo; break;
      case 1: zp[i] = hi; break;
      case 2: zp[i] = (fuzz_random(r) & 1) ? hi : lo; break;
      case 3: zp[i] = constant; break;
      default: zp[i] = lo + (int32_t) (fuzz_random(r) % 256); break;
    }
  }
}

/* A rows: random, lowest, highest, two values, a constant, or each row at the extreme
 * opposite its zero point (with B at its extremes: the accumulator's limits). */
static void fill_rows(struct fuzz_reader* r, int u8, uint8_t* a, size_t m, size_t k, size_t stride,
                      const int32_t* zp, unsigned kind, uint8_t constant)
{
  const uint8_t low = u8 ? 0x00 : 0x80, high = u8 ? 0xff : 0x7f;
  for (size_t i = 0; i < m; i++) {
    uint8_t* row = a + i * stride;
    switch (kind) {
      case 1: memset(row, low, k); break;
      case 2: memset(row, high, k); break;
      case 3: fuzz_fill_two(r, row, k, low, high); break;
      case 4: memset(row, constant, k); break;
      case 5: memset(row, zp[i] == zp_lo(u8) ? high : low, k); break;
      default: break; /* random, as generated */
    }
  }
}

/* ---- calls ---------------------------------------------------------------------------- */

static gemmi8_status gemm_call(int u8, const struct fuzz_ex* e, size_t m, size_t n, size_t k,
                               const void* a, size_t a_stride, const float* a_scale,
                               const int32_t* a_zp, const void* packed, float lo, float hi,
                               float* c, size_t c_stride)
{
  if (e->run == fuzz_run_plain) {
    return u8 ? gemmi8_qdu8_gemm_f32(m, n, k, a, a_stride, a_scale, a_zp, packed, lo, hi, c,
                                     c_stride)
              : gemmi8_qd8_gemm_f32(m, n, k, a, a_stride, a_scale, a_zp, packed, lo, hi, c,
                                    c_stride);
  }
  return u8 ? gemmi8_qdu8_gemm_f32_ex(m, n, k, a, a_stride, a_scale, a_zp, packed, lo, hi, c,
                                      c_stride, e->par)
            : gemmi8_qd8_gemm_f32_ex(m, n, k, a, a_stride, a_scale, a_zp, packed, lo, hi, c,
                                     c_stride, e->par);
}

/* ---- gemm ---------------------------------------------------------------------------- */

static void decode_shape(struct fuzz_reader* r, size_t* m, size_t* n, size_t* k, unsigned mode,
                         int* extremes)
{
  *extremes = 0;
  switch (mode) {
    case 0: /* small: every tile height and column remainder */
      *m = fuzz_range(r, 1, 16), *n = fuzz_range(r, 1, 64), *k = fuzz_range(r, 1, 64);
      break;
    case 1: /* medium */
      *m = fuzz_range(r, 1, 100), *n = fuzz_range(r, 1, 100), *k = fuzz_range(r, 1, 100);
      break;
    case 2: { /* deep: at and just below the limit (bytes at their extremes), or below */
      const uint8_t s = fuzz_u8(r);
      *m = fuzz_range(r, 1, 3), *n = fuzz_range(r, 1, 3);
      *k = (s & 1) ? MAX_K - fuzz_range(r, 0, 70) : fuzz_range(r, 100, MAX_K);
      *extremes = (s & 4) != 0;
      if (s & 2) { /* rows enough for several L2 chunks of A at this depth */
        *m = fuzz_range(r, 1, 40);
        *n = 1;
      }
      break;
    }
    case 3: /* tall: row sums past the stack, several row chunks */
      *m = fuzz_range(r, 900, 1400), *n = fuzz_range(r, 1, 4), *k = fuzz_range(r, 1, 8);
      break;
    default: /* big enough for the _ex entry points to split the work */
      *m = fuzz_range(r, 96, 200), *n = fuzz_range(r, 96, 200), *k = fuzz_range(r, 96, 200);
      break;
  }
  while ((uint64_t) *m * *n * *k > WORK_BUDGET && *m > 1) *m /= 2;
}

struct gemm_call {
  size_t m, n, k, a_stride, c_stride;
  const uint8_t* a;
  const float* a_scale;
  const int32_t* a_zp;
  int null_packed, null_c;
  float lo, hi;
  int other_entry; /* the qs8 / qu8s8 int32 GEMM on these weights */
};

static void run_gemm(struct fuzz_reader* r, int u8)
{
  const uint8_t f = fuzz_u8(r);
  size_t m0, n0, k0;
  int extremes;
  decode_shape(r, &m0, &n0, &k0, (f & 7) % 5, &extremes);
  const enum pack_how how = (enum pack_how)((f >> 3) & 3);
  struct fuzz_ex e;
  const uint8_t t = fuzz_u8(r);
  fuzz_ex_init(r, &e, (enum fuzz_run)(t & 3), t >> 4);

  struct weights w;
  weights_init(r, &w, n0, k0, extremes);
  size_t size0;
  void* valid = pack_valid(r, u8, &w, how, &size0);

  struct gemm_call c = { .m = m0, .n = n0, .k = k0 };
  c.a_stride = k0 + fuzz_extra(r, 300);
  c.c_stride = n0 + fuzz_extra(r, 300);
  const uint8_t offsets = fuzz_u8(r);
  const size_t a_offset = (offsets & 1) ? fuzz_range(r, 0, 63) : 0;
  const size_t c_offset = (offsets & 2) ? 4 * fuzz_range(r, 0, 15) : 0;
  const size_t a_have = (m0 - 1) * c.a_stride + k0;
  const size_t c_have = ((m0 - 1) * c.c_stride + n0) * sizeof(float);
  void *a_block = NULL, *scale_block = NULL, *zp_block = NULL;
  uint8_t* a = fuzz_exact(r, a_have, a_offset, &a_block);
  float* a_scale = fuzz_exact(r, m0 * sizeof(float), 0, &scale_block);
  int32_t* a_zp = fuzz_exact(r, m0 * sizeof(int32_t), 0, &zp_block);
  fuzz_fill_scales(r, a_scale, m0, -10, 0, 0);
  fill_zero_points(r, u8, a_zp, m0);
  const uint8_t a_fill = fuzz_u8(r), a_const = fuzz_u8(r);
  fill_rows(r, u8, a, m0, k0, c.a_stride, a_zp, extremes ? 5 : a_fill % 8, a_const);
  fuzz_decode_clamp(r, &c.lo, &c.hi);
  c.a = a;
  c.a_scale = a_scale;
  c.a_zp = a_zp;

  struct packed_arg p;
  spoil_packed(r, &w, u8, valid, size0, 99, &p);
  const int mutations = fuzz_mutation_count(r);
  char what[64] = "";
  for (int i = 0; i < mutations; i++) {
    const uint8_t mu = (uint8_t) fuzz_mutation(r, 20, what, sizeof(what));
    switch (mu) {
      case 0: c.a = NULL; break;
      case 1: c.a_scale = NULL; break;
      case 2: c.a_zp = NULL; break;
      case 3: c.null_packed = 1; break;
      case 4: c.null_c = 1; break;
      case 5: c.m = fuzz_mutate_size(r, m0); break;
      case 6: c.n = fuzz_mutate_size(r, n0); break;
      case 7:
        if (fuzz_u8(r) & 1) {
          c.k = MAX_K + 1 + fuzz_range(r, 0, 2);
          c.a_stride = c.k;
        } else {
          c.k = fuzz_mutate_size(r, k0);
        }
        break;
      case 8:
        c.m = (fuzz_u8(r) & 1) ? fuzz_boundary_rows(r, c.k, c.a_stride, 1, m0)
                               : fuzz_boundary_rows(r, c.n, c.c_stride, sizeof(float), m0);
        break;
      case 9: c.a_stride = fuzz_mutate_stride(r, c.m, c.k, 1); break;
      case 10: c.c_stride = fuzz_mutate_stride(r, c.m, c.n, sizeof(float)); break;
      case 11: {
        const size_t row = fuzz_range(r, 0, m0 - 1);
        a_scale[row] = fuzz_nonfinite(r);
        break;
      }
      case 12: {
        const size_t row = fuzz_range(r, 0, m0 - 1);
        const int32_t d = fuzz_u8(r);
        const int32_t bad[] = { zp_lo(u8) - 1, zp_hi(u8) + 1,     INT32_MIN,
                                INT32_MAX,     zp_lo(u8) - 1 - d, zp_hi(u8) + 1 + d };
        a_zp[row] = bad[fuzz_u8(r) % 6];
        break;
      }
      case 13: fuzz_spoil_clamp(r, &c.lo, &c.hi); break;
      case 14:
      case 15:
      case 16:
        /* (not with the qs8 / qu8s8 entry point: qs8 or qu8s8 weights would fit it) */
        if (p.ptr == valid && p.matches && !c.other_entry) {
          const unsigned spoil = mu == 14 ? fuzz_u8(r) % 2 : (unsigned) mu - 13;
          packed_arg_free(&p);
          spoil_packed(r, &w, u8, valid, size0, spoil, &p);
          if (mu == 16 && (fuzz_u8(r) & 1)) {
            packed_arg_free(&p);
            spoil_packed(r, &w, u8, valid, size0, 4, &p);
          }
        }
        break;
      case 17: fuzz_ex_spoil(r, &e); break;
      case 18: c.other_entry = p.allocated == NULL; break; /* not on foreign weights */
      default: /* one row at strides near SIZE_MAX: valid */
        c.m = 1;
        c.a_stride = (fuzz_u8(r) & 1) ? SIZE_MAX - fuzz_u8(r) % 4 : (size_t) PTRDIFF_MAX;
        c.c_stride = (fuzz_u8(r) & 1) ? SIZE_MAX - fuzz_u8(r) % 4 : (size_t) PTRDIFF_MAX / 4;
        break;
    }
  }
  if (p.agree_field == 1) c.n = p.agree;
  if (p.agree_field == 2) c.k = p.agree;
  const int matches = p.matches && c.n == n0 && c.k == k0 && !c.other_entry;

  /* the model */
  unsigned want = 0;
  int early = 0; /* invalid for a reason that needs no read of the row arrays */
  size_t a_bytes = 0, c_bytes = 0;
  if (c.a == NULL || c.null_packed || c.null_c || c.a_scale == NULL || c.a_zp == NULL) {
    want |= INV, early = 1;
  }
  const int a_extent = fuzz_extent(c.m, c.k, c.a_stride, 1, &a_bytes);
  const int c_extent = fuzz_extent(c.m, c.n, c.c_stride, sizeof(float), &c_bytes);
  if (!a_extent || !c_extent) want |= INV, early = 1;
  if (c.k > MAX_K) want |= UNS, early = 1;
  if (!matches) want |= INV, early = 1;
  if (e.invalid) want |= INV, early = 1;
  const int rows_backed = c.m <= m0;
  if (!fuzz_clamp_ok(c.lo, c.hi)) want |= INV;
  if (rows_backed && c.a_scale != NULL && c.a_zp != NULL) {
    for (size_t i = 0; i < c.m; i++) {
      if (!fuzz_is_finite(c.a_scale[i]) || c.a_zp[i] < zp_lo(u8) || c.a_zp[i] > zp_hi(u8)) {
        want |= INV;
      }
    }
  }
  if (want == 0) want = OK;
  const int runnable =
      want == OK ? (a_bytes <= a_have && rows_backed && c_bytes <= CAP) : (early || rows_backed);
  fuzz_describe(
      "%s gemm M=%zu N=%zu K=%zu (packed %zu x %zu, %s %s stride %zu) a_stride=%zu "
      "c_stride=%zu a+%zu c+%zu scale[0]=%a zp[0]=%d bias %s clamp [%a, %a]%s %s %s: "
      "mutations %s",
      type_name[u8], c.m, c.n, c.k, n0, k0, pack_name[how], w.kn ? "KN" : "NK", w.stride,
      c.a_stride, c.c_stride, a_offset, c_offset, (double) a_scale[0], (int) a_zp[0],
      w.bias ? "set" : "NULL", (double) c.lo, (double) c.hi, extremes ? " extremes" : "", p.text,
      e.text, what);
  if (!runnable) goto done;

  /* exact-size inputs at the extent the call describes */
  void *a_copy_block = NULL, *scale_copy_block = NULL, *zp_copy_block = NULL;
  const uint8_t* a_arg = c.a;
  if (c.a != NULL && a_extent && a_bytes <= a_have) {
    a_arg = fuzz_exact_copy(r, c.a, a_bytes, 1, a_offset, &a_copy_block);
  }
  const float* scale_arg = c.a_scale;
  const int32_t* zp_arg = c.a_zp;
  if (rows_backed) {
    scale_arg = fuzz_exact_copy(r, c.a_scale, c.m, sizeof(float), 0, &scale_copy_block);
    zp_arg = fuzz_exact_copy(r, c.a_zp, c.m, sizeof(int32_t), 0, &zp_copy_block);
  }
  float* ref = NULL;
  if (want == OK && !p.damaged) {
    ref = malloc(c.m * c.n * sizeof(float));
    if (ref == NULL) fuzz_fail("out of memory");
    for (size_t i = 0; i < c.m; i++) {
      for (size_t j = 0; j < c.n; j++) {
        const int64_t acc = ref_dot(u8, a_arg + i * c.a_stride, zp_arg[i], &w, j);
        ref[i * c.n + j] =
            ref_out(acc, scale_arg[i], w.scale[j], w.bias ? w.bias[j] : 0.0f, c.lo, c.hi);
      }
    }
  }
  struct fuzz_out out;
  fuzz_out_init(&out, r, c_extent && c_bytes <= CAP ? c_bytes : c_have, c_offset);
  uint8_t* packed_saved = malloc(p.size);
  if (packed_saved == NULL) fuzz_fail("out of memory");
  memcpy(packed_saved, p.ptr, p.size);
  const void* packed_arg = c.null_packed ? NULL : p.ptr;
  float* c_arg = c.null_c ? NULL : (float*) (void*) out.data;
  gemmi8_status s;
  if (c.other_entry) {
    int32_t* c32 = (int32_t*) (void*) c_arg;
    s = u8 ? gemmi8_qu8s8_gemm_s32(c.m, c.n, c.k, a_arg, c.a_stride, packed_arg, c32, c.c_stride)
           : gemmi8_qs8_gemm_s32(c.m, c.n, c.k, (const int8_t*) a_arg, c.a_stride, packed_arg, c32,
                                 c.c_stride);
    fuzz_describe_more(" (through the %s int32 GEMM)", u8 ? "qu8s8" : "qs8");
  } else {
    s = gemm_call(u8, &e, c.m, c.n, c.k, a_arg, c.a_stride, scale_arg, zp_arg, packed_arg, c.lo,
                  c.hi, c_arg, c.c_stride);
  }
  fuzz_ex_check(&e);
  fuzz_expect_status(s, want, "gemm");
  if (memcmp(packed_saved, p.ptr, p.size) != 0) fuzz_fail("the call wrote its packed weights");
  if (s != gemmi8_status_success) {
    fuzz_out_check_untouched(&out, "C");
  } else {
    fuzz_check_c(&out, ref, c.m, c.n, c.c_stride);
  }
  free(packed_saved);
  fuzz_out_free(&out);
  free(ref);
  free(a_copy_block);
  free(scale_copy_block);
  free(zp_copy_block);
done:
  packed_arg_free(&p);
  free(valid);
  weights_free(&w);
  free(a_block);
  free(scale_block);
  free(zp_block);
}

/* ---- linear ------------------------------------------------------------------------- */

struct linear_call {
  size_t m, n, k, x_stride, c_stride;
  const float* x;
  int null_packed, null_c;
  float lo, hi;
  int ws_null;
  size_t ws_offset, ws_size;
};

static void run_linear(struct fuzz_reader* r, int u8)
{
  const uint8_t f = fuzz_u8(r);
  size_t m0, n0, k0;
  switch (f % 4) {
    case 0: m0 = fuzz_range(r, 1, 16), n0 = fuzz_range(r, 1, 64), k0 = fuzz_range(r, 1, 64); break;
    case 1:
      m0 = fuzz_range(r, 1, 40), n0 = fuzz_range(r, 1, 100), k0 = fuzz_range(r, 1, 300);
      break;
    case 2:
      m0 = fuzz_range(r, 1, 3), n0 = fuzz_range(r, 1, 3), k0 = fuzz_range(r, 300, 20000);
      break;
    default:
      m0 = fuzz_range(r, 96, 160), n0 = fuzz_range(r, 96, 160), k0 = fuzz_range(r, 96, 160);
      break;
  }
  while ((uint64_t) m0 * n0 * k0 > WORK_BUDGET && m0 > 1) m0 /= 2;
  const enum pack_how how = (enum pack_how)((f >> 2) & 3);
  struct fuzz_ex e;
  const uint8_t t = fuzz_u8(r);
  /* the linear layer has one entry point: plain is the _ex one with NULL */
  fuzz_ex_init(r, &e, (t & 3) == fuzz_run_plain ? fuzz_run_ex_null : (enum fuzz_run)(t & 3),
               t >> 4);

  struct weights w;
  weights_init(r, &w, n0, k0, 0);
  size_t size0;
  void* valid = pack_valid(r, u8, &w, how, &size0);

  struct linear_call c = { .m = m0, .n = n0, .k = k0 };
  c.x_stride = k0 + fuzz_extra(r, 100);
  c.c_stride = n0 + fuzz_extra(r, 100);
  const uint8_t offsets = fuzz_u8(r);
  const size_t x_offset = (offsets & 1) ? 4 * fuzz_range(r, 0, 15) : 0;
  const size_t c_offset = (offsets & 2) ? 4 * fuzz_range(r, 0, 15) : 0;
  const size_t x_stride0 = c.x_stride; /* x's own, for the values (a call may say another) */
  const size_t x_count = (m0 - 1) * x_stride0 + k0;
  const size_t x_have = x_count * sizeof(float);
  const size_t c_have = ((m0 - 1) * c.c_stride + n0) * sizeof(float);
  void* x_block = NULL;
  float* x = fuzz_exact(r, x_have, x_offset, &x_block); /* gaps: any bits, NaN too */
  const unsigned values = fuzz_u8(r) % 6;
  const int exponent = (int) fuzz_range(r, 0, 60) - 30;
  const float constant = fuzz_make_finite(fuzz_f32_special(r));
  for (size_t i = 0; i < m0; i++) {
    const int zero_row = (fuzz_random(r) % 8) == 0;
    for (size_t j = 0; j < k0; j++) {
      float* v = &x[i * x_stride0 + j];
      if (zero_row) {
        *v = (fuzz_random(r) & 1) ? -0.0f : 0.0f;
        continue;
      }
      switch (values) {
        case 0: *v = fuzz_make_finite(fuzz_f32_special_any(r)); break;
        case 1: *v = fuzz_make_finite(*v); break; /* any finite bit pattern */
        case 2: *v = ldexpf((float) (int8_t) fuzz_random(r), exponent); break;
        case 3: *v = (fuzz_random(r) & 7) ? constant : 0.0f; break;
        case 4: *v = fuzz_float_of((uint32_t) fuzz_random(r) & 0x807fffffu); break; /* subnormal */
        default: *v = fuzz_useful(r, -8, 8); break;
      }
    }
  }
  fuzz_decode_clamp(r, &c.lo, &c.hi);
  c.x = x;

  size_t ws_need0 = 0;
  fuzz_expect_status(gemmi8_qd8_linear_workspace_size(m0, k0, &ws_need0), OK, "workspace_size");
  if (ws_need0 < m0 * k0 + 8 * m0) {
    fuzz_fail("linear_workspace_size(%zu, %zu) = %zu: no room for the rows", m0, k0, ws_need0);
  }
  const uint8_t ws_how = fuzz_u8(r);
  c.ws_null = ws_how % 3 == 0;
  c.ws_size = ws_need0 + (ws_how % 3 == 2 ? fuzz_range(r, 1, 200) : 0);
  const size_t ws_have = c.ws_size; /* bytes the workspace really has */

  struct packed_arg p;
  spoil_packed(r, &w, u8, valid, size0, 99, &p);
  const int mutations = fuzz_mutation_count(r);
  char what[64] = "";
  for (int i = 0; i < mutations; i++) {
    const uint8_t mu = (uint8_t) fuzz_mutation(r, 18, what, sizeof(what));
    switch (mu) {
      case 0: c.x = NULL; break;
      case 1: c.null_packed = 1; break;
      case 2: c.null_c = 1; break;
      case 3: c.m = fuzz_mutate_size(r, m0); break;
      case 4: c.n = fuzz_mutate_size(r, n0); break;
      case 5:
        if (fuzz_u8(r) & 1) {
          c.k = MAX_K + 1 + fuzz_range(r, 0, 2);
          c.x_stride = c.k;
        } else {
          c.k = fuzz_mutate_size(r, k0);
        }
        break;
      case 6:
        c.m = (fuzz_u8(r) & 1) ? fuzz_boundary_rows(r, c.k, c.x_stride, sizeof(float), m0)
                               : fuzz_boundary_rows(r, c.n, c.c_stride, sizeof(float), m0);
        break;
      case 7: c.x_stride = fuzz_mutate_stride(r, c.m, c.k, sizeof(float)); break;
      case 8: c.c_stride = fuzz_mutate_stride(r, c.m, c.n, sizeof(float)); break;
      case 9:
      case 10:
      case 11: fuzz_spoil_rows_f32(r, x, m0, k0, x_stride0, mu - 9u); break;
      case 12: fuzz_spoil_clamp(r, &c.lo, &c.hi); break;
      case 13:
      case 14:
      case 15:
        if (p.ptr == valid && p.matches) {
          const unsigned spoil = mu == 13 ? fuzz_u8(r) % 2 : (unsigned) mu - 12;
          packed_arg_free(&p);
          spoil_packed(r, &w, u8, valid, size0, spoil, &p);
          if (mu == 15 && (fuzz_u8(r) & 1)) {
            packed_arg_free(&p);
            spoil_packed(r, &w, u8, valid, size0, 4, &p);
          }
        }
        break;
      case 16: fuzz_ex_spoil(r, &e); break;
      default: /* the workspace: misaligned, too small, NULL, a claim */
        switch (fuzz_u8(r) % 4) {
          case 0: c.ws_null = 0, c.ws_offset = fuzz_range(r, 1, 63); break;
          case 1: c.ws_null = 0, c.ws_size = ws_need0 - 1 - fuzz_range(r, 0, ws_need0 - 1); break;
          case 2: c.ws_null = 1, c.ws_size = fuzz_edgy_size(r, ws_need0); break;
          default: c.ws_null = 0, c.ws_size = fuzz_edgy_size(r, ws_need0); break;
        }
        break;
    }
  }
  if (p.agree_field == 1) c.n = p.agree;
  if (p.agree_field == 2) c.k = p.agree;
  const int matches = p.matches && c.n == n0 && c.k == k0;

  /* the model */
  unsigned want = 0;
  int early = 0; /* invalid for a reason that needs no read of x */
  size_t x_bytes = 0, c_bytes = 0, ws_need = 0;
  if (c.x == NULL || c.null_packed || c.null_c) want |= INV, early = 1;
  const int x_extent = fuzz_extent(c.m, c.k, c.x_stride, sizeof(float), &x_bytes);
  const int c_extent = fuzz_extent(c.m, c.n, c.c_stride, sizeof(float), &c_bytes);
  if (!x_extent || !c_extent) want |= INV, early = 1;
  if (!c.ws_null) {
    const int sized = c.m != 0 && c.k != 0 &&
                      gemmi8_qd8_linear_workspace_size(c.m, c.k, &ws_need) == gemmi8_status_success;
    if (c.ws_offset != 0 || !sized || c.ws_size < ws_need) want |= INV, early = 1;
  }
  if (c.k > MAX_K) want |= UNS, early = 1;
  if (!matches) want |= INV, early = 1;
  if (e.invalid) want |= INV, early = 1;
  if (!fuzz_clamp_ok(c.lo, c.hi)) want |= INV, early = 1;
  const int x_backed = x_extent && x_bytes <= x_have;
  if (c.x != NULL && x_backed) {
    for (size_t i = 0; i < c.m; i++) {
      const float* row = c.x + i * c.x_stride;
      for (size_t j = 0; j < c.k; j++) {
        if (!fuzz_is_finite(row[j])) want |= INV;
      }
      if (!(want & INV) && fuzz_range_overflows(row, c.k)) want |= INV;
    }
  }
  if (want == 0) want = OK;
  /* a workspace said to be larger than it is: a valid call cannot run on it (an
   * invalid one must not touch it at all) */
  if (want == OK && !c.ws_null && c.ws_size > ws_have) goto done;
  const int runnable = want == OK ? (x_backed && c_bytes <= CAP) : (early || x_backed);
  fuzz_describe(
      "%s linear M=%zu N=%zu K=%zu (packed %zu x %zu, %s %s) x_stride=%zu c_stride=%zu "
      "x+%zu c+%zu values=%u unit=2^%d bias %s clamp [%a, %a] workspace %s+%zu size %zu "
      "(needs %zu, has %zu) %s %s: mutations %s",
      type_name[u8], c.m, c.n, c.k, n0, k0, pack_name[how], w.kn ? "KN" : "NK", c.x_stride,
      c.c_stride, x_offset, c_offset, values, exponent, w.bias ? "set" : "NULL", (double) c.lo,
      (double) c.hi, c.ws_null ? "NULL" : "given", c.ws_offset, c.ws_size, ws_need0, ws_have,
      p.text, e.text, what);
  if (!runnable) goto done;

  void* x_copy_block = NULL;
  const float* x_arg = c.x;
  if (c.x != NULL && x_backed) {
    x_arg =
        fuzz_exact_copy(r, c.x, x_bytes / sizeof(float), sizeof(float), x_offset, &x_copy_block);
  }
  float* ref = NULL;
  if (want == OK && !p.damaged) {
    ref = malloc(c.m * c.n * sizeof(float));
    int8_t* q = malloc(c.k);
    if (ref == NULL || q == NULL) fuzz_fail("out of memory");
    for (size_t i = 0; i < c.m; i++) {
      float scale;
      int32_t zp;
      if (u8) {
        ref_quantize_row_u8(c.k, x_arg + i * c.x_stride, (uint8_t*) q, &scale, &zp);
      } else {
        ref_quantize_row_s8(c.k, x_arg + i * c.x_stride, q, &scale, &zp);
      }
      for (size_t j = 0; j < c.n; j++) {
        const int64_t acc = ref_dot(u8, (const uint8_t*) q, zp, &w, j);
        ref[i * c.n + j] = ref_out(acc, scale, w.scale[j], w.bias ? w.bias[j] : 0.0f, c.lo, c.hi);
      }
    }
    free(q);
  }
  struct fuzz_out out, ws;
  fuzz_out_init(&out, r, c_extent && c_bytes <= CAP ? c_bytes : c_have, c_offset);
  fuzz_out_init(&ws, r, ws_have, c.ws_offset);
  uint8_t* packed_saved = malloc(p.size);
  if (packed_saved == NULL) fuzz_fail("out of memory");
  memcpy(packed_saved, p.ptr, p.size);
  const void* packed_arg = c.null_packed ? NULL : p.ptr;
  float* c_arg = c.null_c ? NULL : (float*) (void*) out.data;
  void* ws_arg = c.ws_null ? NULL : ws.data;
  const gemmi8_status s =
      u8 ? gemmi8_qdu8_linear_f32(c.m, c.n, c.k, x_arg, c.x_stride, packed_arg, c.lo, c.hi, c_arg,
                                  c.c_stride, ws_arg, c.ws_size, e.par)
         : gemmi8_qd8_linear_f32(c.m, c.n, c.k, x_arg, c.x_stride, packed_arg, c.lo, c.hi, c_arg,
                                 c.c_stride, ws_arg, c.ws_size, e.par);
  fuzz_ex_check(&e);
  fuzz_expect_status(s, want, "linear");
  if (memcmp(packed_saved, p.ptr, p.size) != 0) fuzz_fail("the call wrote its packed weights");
  if (s != gemmi8_status_success) {
    fuzz_out_check_untouched(&out, "C");
    fuzz_out_check_untouched(&ws, "workspace");
  } else {
    fuzz_check_c(&out, ref, c.m, c.n, c.c_stride);
    fuzz_out_check_guards(&ws, "workspace");
    if (c.ws_null) fuzz_out_check_untouched(&ws, "workspace (NULL passed)");
  }
  free(packed_saved);
  fuzz_out_free(&out);
  fuzz_out_free(&ws);
  free(ref);
  free(x_copy_block);
done:
  packed_arg_free(&p);
  free(valid);
  weights_free(&w);
  free(x_block);
}

/* ---- packing ---------------------------------------------------------------------- */

struct pack_args {
  size_t n, k, stride, packed_size;
  const int8_t* b;
  const float* scale;
  const float* bias;
  uint32_t flags;
  int null_packed;
  size_t misalign;
};

static void run_pack(struct fuzz_reader* r, int u8, int alloc)
{
  const uint8_t f = fuzz_u8(r);
  const size_t n0 = fuzz_range(r, 1, 64);
  const size_t k0 = (f & 1) ? MAX_K - fuzz_range(r, 0, 40) : fuzz_range(r, 1, 100);
  struct weights w;
  weights_init(r, &w, (f & 1) ? 1 + n0 % 3 : n0, k0, 0);
  size_t size0;
  void* reference = pack_valid(r, u8, &w, pack_exact, &size0);

  struct pack_args c = {
    .n = w.n,
    .k = k0,
    .stride = w.stride,
    .packed_size = size0 + ((f & 2) ? fuzz_range(r, 1, 200) : 0),
    .b = w.b,
    .scale = w.scale,
    .bias = w.bias,
    .flags = w.kn ? GEMMI8_B_KN : GEMMI8_B_NK,
  };
  const size_t have = c.packed_size; /* bytes the buffer really has */
  const int mutations = fuzz_mutation_count(r);
  int same_bias = 1;
  float *bad_scale = NULL, *bad_bias = NULL; /* copies with a value NaN or infinite */
  char what[64] = "";
  for (int i = 0; i < mutations; i++) {
    const uint8_t mu = (uint8_t) fuzz_mutation(r, 15, what, sizeof(what));
    switch (mu) {
      case 0: c.b = NULL; break;
      case 1: c.scale = NULL; break;
      case 2: c.null_packed = 1; break;
      case 3: c.n = fuzz_mutate_size(r, w.n); break;
      case 4: c.k = fuzz_mutate_size(r, k0); break;
      case 5: /* just past the limit, with a stride that fits it */
        c.k = MAX_K + 1 + fuzz_range(r, 0, 2);
        if (!w.kn) c.stride = c.k;
        break;
      case 6: { /* rows enough to overflow the extent or the packed size */
        const size_t rows = fuzz_boundary_rows(r, w.kn ? c.n : c.k, c.stride, 1, w.n);
        if (w.kn) {
          c.k = rows;
        } else {
          c.n = rows;
        }
        break;
      }
      case 7: c.stride = fuzz_mutate_stride(r, w.kn ? c.k : c.n, w.kn ? c.n : c.k, 1); break;
      case 8:
        c.flags = (fuzz_u8(r) & 1) ? c.flags ^ GEMMI8_B_KN : c.flags | (fuzz_u32(r) & ~1u) | 2u;
        break;
      case 9: c.misalign = fuzz_range(r, 1, 63); break;
      case 10:
        c.packed_size = (fuzz_u8(r) & 1) ? 0 : size0 - 1 - fuzz_range(r, 0, size0 - 1);
        break;
      case 11: c.packed_size = fuzz_edgy_size(r, size0); break; /* a claim */
      case 12:
        if (bad_scale == NULL) {
          bad_scale = malloc(w.n * sizeof(float));
          if (bad_scale == NULL) fuzz_fail("out of memory");
          memcpy(bad_scale, w.scale, w.n * sizeof(float));
          const size_t j = fuzz_range(r, 0, w.n - 1);
          bad_scale[j] = fuzz_nonfinite(r);
          if (c.scale != NULL) c.scale = bad_scale;
        }
        break;
      case 13:
        if (bad_bias == NULL) {
          bad_bias = calloc(w.n, sizeof(float));
          if (bad_bias == NULL) fuzz_fail("out of memory");
          if (w.bias != NULL) memcpy(bad_bias, w.bias, w.n * sizeof(float));
          const size_t j = fuzz_range(r, 0, w.n - 1);
          bad_bias[j] = fuzz_nonfinite(r);
          c.bias = bad_bias;
          same_bias = 0;
        }
        break;
      default:
        c.bias = NULL;
        same_bias = w.bias == NULL;
        break;
    }
  }
  /* the model */
  const size_t rows = (c.flags & GEMMI8_B_KN) ? c.k : c.n;
  const size_t cols = (c.flags & GEMMI8_B_KN) ? c.n : c.k;
  size_t extent = 0, need = 0;
  unsigned want = 0;
  int early = 0; /* invalid for a reason that needs no read of scale and bias */
  if (c.b == NULL || c.scale == NULL || (alloc && c.null_packed)) want |= INV, early = 1;
  if (c.n == 0 || c.k == 0 || (c.flags & ~GEMMI8_B_KN)) want |= INV, early = 1;
  const int extent_ok = fuzz_extent(rows, cols, c.stride, 1, &extent);
  if (!extent_ok) want |= INV, early = 1;
  if (c.k > MAX_K) want |= UNS, early = 1;
  const int size_known = c.n != 0 && c.k != 0 && c.k <= MAX_K;
  if (size_known && pack_size(u8, c.n, c.k, &need) != gemmi8_status_success) {
    want |= UNS, early = 1;
    need = 0;
  }
  if (!alloc) {
    if (c.null_packed || c.misalign != 0) want |= INV;
    if (size_known && need != 0 && c.packed_size < need) want |= INV;
  }
  const int arrays_backed = c.n <= w.n;
  if (arrays_backed && c.scale != NULL) {
    for (size_t j = 0; j < c.n; j++) {
      if (!fuzz_is_finite(c.scale[j]) || (c.bias != NULL && !fuzz_is_finite(c.bias[j]))) {
        want |= INV;
      }
    }
  }
  if (want == 0) want = OK;
  const int runnable =
      want == OK ? (extent <= w.b_bytes && arrays_backed && (alloc || c.packed_size <= have))
                 : (early || arrays_backed);
  /* the same matrix as the reference packing: its bytes must be the same */
  const int same_matrix = c.n == w.n && c.k == k0 &&
                          c.flags == (w.kn ? GEMMI8_B_KN : GEMMI8_B_NK) &&
                          (c.stride == w.stride || rows == 1) && same_bias;
  fuzz_describe(
      "%s_pack%s n %zu k %zu (valid %zu x %zu) stride %zu flags 0x%x packed_size %zu "
      "(needs %zu, has %zu) misalign %zu scale %s bias %s: mutations %s",
      type_name[u8], alloc ? "_alloc" : "", c.n, c.k, w.n, k0, c.stride, (unsigned) c.flags,
      c.packed_size, size0, have, c.misalign, c.scale ? "set" : "NULL", c.bias ? "set" : "NULL",
      what);
  if (!runnable) goto done;

  void *b_copy = NULL, *scale_copy = NULL, *bias_copy = NULL;
  const int8_t* b_arg = c.b;
  if (c.b != NULL && extent_ok && extent <= w.b_bytes)
    b_arg = fuzz_exact_copy(r, c.b, extent, 1, 0, &b_copy);
  const float* scale_arg = c.scale;
  const float* bias_arg = c.bias;
  if (arrays_backed) {
    scale_arg = fuzz_exact_copy(r, c.scale, c.n, sizeof(float), 0, &scale_copy);
    bias_arg = fuzz_exact_copy(r, c.bias, c.n, sizeof(float), 0, &bias_copy);
  }
  if (alloc) {
    struct fuzz_out slot;
    fuzz_out_init(&slot, r, sizeof(void*), 0);
    void** sp = c.null_packed ? NULL : (void**) (void*) slot.data;
    const gemmi8_status s =
        pack_alloc_call(u8, c.n, c.k, b_arg, c.stride, c.flags, scale_arg, bias_arg, sp);
    fuzz_expect_status(s, want, "pack_alloc");
    fuzz_out_check_guards(&slot, "*packed");
    if (s != gemmi8_status_success) {
      fuzz_out_check_untouched(&slot, "*packed");
    } else {
      void* got;
      memcpy(&got, slot.data, sizeof(got));
      if ((uintptr_t) got % GEMMI8_PACK_ALIGNMENT != 0) fuzz_fail("pack_alloc: %p misaligned", got);
      if (same_matrix && memcmp(got, reference, size0) != 0) {
        fuzz_fail("pack_alloc with stride %zu packed other bytes than stride %zu", c.stride,
                  w.stride);
      }
      gemmi8_packed_free(got);
    }
    fuzz_out_free(&slot);
  } else {
    struct fuzz_out out;
    fuzz_out_init(&out, r, have, c.misalign);
    const gemmi8_status s = pack_call(u8, c.n, c.k, b_arg, c.stride, c.flags, scale_arg, bias_arg,
                                      c.null_packed ? NULL : out.data, c.packed_size);
    fuzz_expect_status(s, want, "pack");
    fuzz_out_check_guards(&out, "packed");
    if (s != gemmi8_status_success) {
      fuzz_out_check_untouched(&out, "packed");
    } else if (same_matrix && memcmp(out.data, reference, size0) != 0) {
      fuzz_fail("packing with stride %zu into %zu bytes gave other bytes than stride %zu into %zu",
                c.stride, c.packed_size, w.stride, size0);
    }
    fuzz_out_free(&out);
  }
  free(b_copy);
  free(scale_copy);
  free(bias_copy);
done:
  free(bad_scale);
  free(bad_bias);
  free(reference);
  weights_free(&w);
}

/* ---- sizes ------------------------------------------------------------------------ */

/* pack_size and linear_workspace_size. The packed buffer holds at least the weights
 * and a scale and a bias per channel (n * k + 8 * n bytes), the workspace the rows and
 * a scale and a zero point per row (m * k + 8 * m): a size whose lower bound
 * overflows must be refused (pack_size: unsupported_parameter; the workspace:
 * invalid_parameter, an overflowing size), one far from overflowing (n <= 2^40 for
 * the packing, m * k and m <= 2^56 for the workspace) served, above its lower bound. */
static void run_sizes(struct fuzz_reader* r, int u8)
{
  const uint8_t f = fuzz_u8(r);
  const int workspace = f & 1;
  size_t n = (f & 2) ? fuzz_edgy_size(r, 64) : fuzz_range(r, 1, 300);
  size_t k = (f & 4) ? fuzz_edgy_size(r, MAX_K) : fuzz_range(r, 1, 300);
  if ((f & 0x18) == 0x08) k = MAX_K + fuzz_range(r, 0, 3) - 1;
  if ((f & 0x18) == 0x10) n = (size_t) 1 << fuzz_range(r, 30, 63);
  const int null_size = (f & 0xe0) == 0x20;
  size_t product = 0, per_row = 0, low = 0;
  const int low_fits = !__builtin_mul_overflow(n, k, &product) &&
                       !__builtin_mul_overflow(n, (size_t) 8, &per_row) &&
                       !__builtin_add_overflow(product, per_row, &low);
  unsigned want = 0;
  if (null_size || n == 0 || k == 0) want |= INV;
  if (!workspace && k > MAX_K) want |= UNS;
  if (n != 0 && k != 0 && (workspace || k <= MAX_K)) {
    const unsigned refused = workspace ? INV : UNS;
    const int surely = workspace ? low_fits && low <= ((size_t) 1 << 56) : n <= ((size_t) 1 << 40);
    if (!low_fits) {
      want |= refused;
    } else if (!surely) {
      want |= OK | refused;
    }
  }
  if (want == 0) want = OK;
  fuzz_describe("%s(%s %zu, k %zu, %s)",
                workspace ? "qd8_linear_workspace_size" : (u8 ? "qdu8_pack_size" : "qd8_pack_size"),
                workspace ? "m" : "n", n, k, null_size ? "NULL" : "size");
  struct fuzz_out out;
  fuzz_out_init(&out, r, sizeof(size_t), 0);
  size_t* arg = null_size ? NULL : (size_t*) (void*) out.data;
  const gemmi8_status s =
      workspace ? gemmi8_qd8_linear_workspace_size(n, k, arg) : pack_size(u8, n, k, arg);
  fuzz_expect_status(s, want, workspace ? "linear_workspace_size" : "pack_size");
  if (s != gemmi8_status_success) {
    fuzz_out_check_untouched(&out, "size");
  } else {
    fuzz_out_check_guards(&out, "size");
    size_t got;
    memcpy(&got, out.data, sizeof(got));
    if (got < low) fuzz_fail("size %zu, below the %zu bytes it must hold", got, low);
    if (!workspace && (got % GEMMI8_PACK_ALIGNMENT != 0 || got <= FUZZ_HEADER)) {
      fuzz_fail("packed size %zu: not a multiple of %d past the header", got,
                GEMMI8_PACK_ALIGNMENT);
    }
    size_t again = 0;
    const gemmi8_status s2 =
        workspace ? gemmi8_qd8_linear_workspace_size(n, k, &again) : pack_size(u8, n, k, &again);
    if (s2 != gemmi8_status_success || again != got) {
      fuzz_fail("a second query: %s, %zu (first %zu)", FUZZ_STATUS(s2), again, got);
    }
  }
  fuzz_out_free(&out);
}

/* ---- the entry --------------------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  struct fuzz_reader r;
  fuzz_reader_init(&r, data, size);
  const uint8_t head = fuzz_u8(&r);
  const int u8 = head & 1;
  switch ((head >> 1) % 8) {
    case 0:
    case 1:
    case 2: run_gemm(&r, u8); break;
    case 3:
    case 4: run_linear(&r, u8); break;
    case 5: run_pack(&r, u8, 0); break;
    case 6: run_pack(&r, u8, 1); break;
    default: run_sizes(&r, u8); break;
  }
  return 0;
}
