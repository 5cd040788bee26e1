/*
 * 4-bit weights for rows quantized at run time: gemmi8_qd8_pack_q4_size, _pack_q4,
 * _pack_q4_alloc, and gemmi8_qd8_gemm_f32 / gemmi8_qdu8_gemm_f32 (plain and _ex) and
 * the two linear layers over such weights, against a reference written from
 * include/gemmi8.h (int8 or uint8 rows):
 *   acc_b = sum over the depths of block b of (A[m][k] - a_zp[m]) * (q - zp)
 *           (int64, must fit int32; qc4w, block 0: one block of all K)
 *   f = +0.0f; for each block in order: f = f + (float) acc_b * scale[n][b]
 *           (the product rounded, then the sum)
 *   v = f * a_scale[m];  v = v + bias[n];  the clamp as the header writes it
 * compared bit for bit; the linear layers through ref_quantize_row_s8 / _u8 first.
 *
 * One input is one call, of:
 *   gemm    pack (exact size, larger, allocated, a copy; block 0, 32, 64, 128 or 256;
 *           signed nibbles or zero points), then gemmi8_qd8_gemm_f32 or, the same rows
 *           as uint8 (each byte and zero point plus 128), gemmi8_qdu8_gemm_f32, or their
 *           _ex variants
 *           (NULL, a shuffled parallel-for, gemmi8's pool): shapes small, medium (several
 *           blocks), deep (K at and below GEMMI8_QD8_MAX_K, values at their extremes),
 *           tall (M past 1024, row sums past the stack) or big enough to split; K any,
 *           not a multiple of the block or of 8 (the pad nibble of an odd K random);
 *           strides and offsets; scales and biases ordinary, +-0, negative, denormal,
 *           huge (products overflow, NaN where infinities meet); row zero points over
 *           their range; clamps none, one-sided, a window, a point, +-0;
 *   linear  gemmi8_qd8_linear_f32 or gemmi8_qdu8_linear_f32 with the workspace given
 *           (exact, larger) or NULL;
 *   pack    gemmi8_qd8_pack_q4 / _pack_q4_alloc, every valid result then run through
 *           a small GEMM against the reference of the arguments it was given;
 *   sizes   gemmi8_qd8_pack_q4_size, sizes and blocks small, edgy or near SIZE_MAX;
 * and zero, one or two mutations of it: null pointers (the weights struct, its b and
 * scale, every argument); zero sizes; sizes and strides near SIZE_MAX, PTRDIFF_MAX,
 * 2^32 or at the largest extent that fits; short nibble strides; M = 1 with strides
 * near SIZE_MAX (valid); N or K other than the packed ones, K past the limit; a block
 * size not listed, or another listed one (valid when the arrays hold its count); a
 * zero point above 15; a scale or bias NaN or infinite, at any block; a row scale NaN
 * or infinite; a row zero point out of range; clamps with a NaN or min > max;
 * misaligned or short packed buffers and workspaces; packed weights of another type
 * (qs8, qu8s8, qu8, bin, qdu8; or qd8 int8 weights of the same shape, which the call
 * accepts) or of another 4-bit shape, or damaged (header bytes flipped, in place or
 * in a copy; N or K flipped with a call that agrees); weights or the bias tail
 * flipped (not checksummed: the call must run and stay in its buffers); the weights
 * passed to gemmi8_qs8_gemm_s32 (which must refuse them); a parallel-for that is NULL or claims too many threads; NaN or
 * infinity in a row of the linear layer (invalid), in a gap (valid), a row whose range
 * overflows float (invalid).
 *
 * The expected status comes from the header's rules (a model written here); inputs
 * are exact-size blocks at the extent each call describes (nibble rows of ceil(k / 2)
 * bytes, n * blocks scales and zero points, n biases, A rows of k bytes, m row scales
 * and zero points, x rows of k floats); outputs carry a canary and poisoned guards; on
 * failure nothing is written (C, the workspace, the packed buffer, *packed, *size);
 * packed weights never change; packing at another stride gives the same bytes.
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

/* ---- sizes that make trouble (as fuzz-qd8.c) ------------------------------------- */

/* ceil(n / q) without wrapping. */
static size_t div_up(size_t n, size_t q)
{
  return n / q + (n % q != 0);
}

/* ---- blocks ----------------------------------------------------------------------- */

static const size_t listed_blocks[] = { 0, 32, 64, 128, 256 };

static int block_listed(size_t block)
{
  for (size_t i = 0; i < sizeof(listed_blocks) / sizeof(listed_blocks[0]); i++) {
    if (block == listed_blocks[i]) return 1;
  }
  return 0;
}

static size_t decode_block(struct fuzz_reader* r)
{
  return listed_blocks[fuzz_u8(r) % 5];
}

/* A block size the header does not list: near the listed ones, or edgy. */
static size_t bad_block(struct fuzz_reader* r)
{
  static const size_t menu[] = { 1, 8, 16, 31, 33, 48, 63, 96, 100, 127, 129, 255, 257, 512, 1024 };
  size_t b;
  switch (fuzz_u8(r) % 4) {
    case 0:
    case 1: b = menu[fuzz_u8(r) % (sizeof(menu) / sizeof(menu[0]))]; break;
    case 2: b = fuzz_edgy_size(r, 256); break;
    default: b = (size_t) fuzz_u64(r); break;
  }
  return block_listed(b) ? b + 1 : b;
}

/* Scales (and zero points) a row of k depths has with this block. */
static size_t blocks_of(size_t k, size_t block)
{
  return block != 0 ? div_up(k, block) : 1;
}

/* ---- floats --------------------------------------------------------------------- */

/* ---- weights ---------------------------------------------------------------------- */

/* 4-bit weights as the caller gives them (every array an exact-size block), and their
 * values q - zp, -15..15, for the reference. */
struct weights {
  size_t n, k, block, blocks, row_bytes, stride;
  uint8_t* b; /* n rows of row_bytes at stride */
  void* b_block;
  size_t b_bytes;
  float* scale; /* n * blocks */
  void* scale_block;
  uint8_t* zp; /* n * blocks values 0..15, or NULL: signed nibbles */
  void* zp_block;
  float* bias; /* n, or NULL */
  void* bias_block;
  int8_t* value; /* n x k */
};

static gemmi8_q4_weights q4_of(const struct weights* w)
{
  const gemmi8_q4_weights q = { w->b, w->stride, w->block, w->scale, w->zp, w->bias };
  return q;
}

/* The values q - zp of element (j, kk), from the header's definition. */
static void weights_values(struct weights* w)
{
  w->value = malloc(w->n * w->k);
  if (w->value == NULL) fuzz_fail("out of memory");
  for (size_t j = 0; j < w->n; j++) {
    for (size_t kk = 0; kk < w->k; kk++) {
      const uint8_t byte = w->b[j * w->stride + kk / 2];
      const int nibble = kk % 2 ? byte >> 4 : byte & 15;
      int v;
      if (w->zp != NULL) {
        v = nibble - w->zp[j * w->blocks + (w->block != 0 ? kk / w->block : 0)];
      } else {
        v = nibble >= 8 ? nibble - 16 : nibble; /* two's complement */
      }
      w->value[j * w->k + kk] = (int8_t) v;
    }
  }
}

/* How the nibbles are filled: random, all 0, all 15, all -8 / all 8 (0x88), all 7,
 * two values, a constant byte, or each column at one extreme (with zero points: 15
 * against zero point 0, 0 against 15; signed: -8). With an odd K the unused high
 * nibble of each row's last byte is random whatever the fill. */
static void fill_b(struct fuzz_reader* r, struct weights* w, unsigned kind, uint8_t constant)
{
  for (size_t j = 0; j < w->n; j++) {
    uint8_t* row = w->b + j * w->stride;
    for (size_t x = 0; x < w->row_bytes; x++) {
      switch (kind) {
        case 1: row[x] = 0x00; break;
        case 2: row[x] = 0xFF; break;
        case 3: row[x] = 0x88; break;
        case 4: row[x] = 0x77; break;
        case 5: row[x] = (fuzz_random(r) & 1) ? 0xFF : 0x00; break;
        case 6: row[x] = constant; break;
        case 7: row[x] = w->zp != NULL ? (j % 2 ? 0xFF : 0x00) : 0x88; break;
        default: break; /* random, as generated */
      }
    }
    if (w->k % 2) {
      row[w->row_bytes - 1] = (uint8_t) ((row[w->row_bytes - 1] & 15) | (fuzz_random(r) & 0xF0));
    }
  }
}

static void weights_init(struct fuzz_reader* r, struct weights* w, size_t n, size_t k,
                         size_t block, int extremes)
{
  memset(w, 0, sizeof(*w));
  w->n = n;
  w->k = k;
  w->block = block;
  w->blocks = blocks_of(k, block);
  w->row_bytes = div_up(k, 2);
  const uint8_t s = fuzz_u8(r);
  w->stride = w->row_bytes + fuzz_extra(r, 64);
  w->b_bytes = (n - 1) * w->stride + w->row_bytes;
  w->b = fuzz_exact(r, w->b_bytes, 0, &w->b_block);
  const size_t count = n * w->blocks;
  if ((s & 1) || extremes) {
    w->zp = fuzz_exact(r, count, 0, &w->zp_block);
    const uint8_t kind = fuzz_u8(r) % 6, constant = fuzz_u8(r) % 16;
    for (size_t i = 0; i < count; i++) {
      switch (extremes ? 6 : kind) {
        case 0: w->zp[i] = 0; break;
        case 1: w->zp[i] = 15; break;
        case 2: w->zp[i] = 8; break;
        case 3: w->zp[i] = constant; break;
        case 6: w->zp[i] = (uint8_t) (i / w->blocks % 2 ? 0 : 15); break;
        default: w->zp[i] = (uint8_t) (fuzz_random(r) % 16); break;
      }
    }
  }
  fill_b(r, w, extremes ? 7 : (s >> 1) % 8, fuzz_u8(r));
  w->scale = fuzz_exact(r, count * sizeof(float), 0, &w->scale_block);
  fuzz_fill_scales(r, w->scale, count, -12, 0, 1);
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
  weights_values(w);
}

static void weights_free(struct weights* w)
{
  free(w->b_block);
  free(w->scale_block);
  free(w->zp_block);
  free(w->bias_block);
  free(w->value);
}

/* ---- the reference ---------------------------------------------------------------- */

/* C[i][j] for the row (k bytes: int8, or uint8 with u8), its zero point and scale: block sums in int64
 * (each must fit int32), then the header's float steps, each rounded, in its order.
 * Kept out of the coverage feedback (as test/ref.c is): it says nothing about the
 * library. */
__attribute__((no_sanitize("coverage"))) static float ref_q4(const struct weights* w, int u8,
                                                             const void* row_bytes, int32_t a_zp,
                                                             float a_scale, size_t j, float lo,
                                                             float hi)
{
  const int8_t* row = row_bytes;
  const uint8_t* urow = row_bytes;
  const int8_t* v = w->value + j * w->k;
  const size_t step = w->block != 0 ? w->block : w->k;
  float f = +0.0f;
  for (size_t k0 = 0, b = 0; k0 < w->k; k0 += step, b++) {
    const size_t k1 = k0 + step < w->k ? k0 + step : w->k;
    int64_t acc = 0;
    for (size_t kk = k0; kk < k1; kk++) {
      acc += ((u8 ? (int64_t) urow[kk] : (int64_t) row[kk]) - a_zp) * v[kk];
    }
    if (acc < INT32_MIN || acc > INT32_MAX) fuzz_fail("acc %lld leaves int32", (long long) acc);
    const float product = (float) (int32_t) acc * w->scale[j * w->blocks + b];
    f = f + product;
  }
  float out = f * a_scale;
  out = out + (w->bias != NULL ? w->bias[j] : 0.0f);
  out = lo > out ? lo : out;
  out = hi < out ? hi : out;
  return out;
}

/* m x n reference outputs for rows a (a_stride apart; uint8 with u8). */
static float* ref_gemm(const struct weights* w, int u8, size_t m, const int8_t* a, size_t a_stride,
                       const float* a_scale, const int32_t* a_zp, float lo, float hi)
{
  float* ref = malloc(m * w->n * sizeof(float));
  if (ref == NULL) fuzz_fail("out of memory");
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < w->n; j++) {
      ref[i * w->n + j] = ref_q4(w, u8, a + i * a_stride, a_zp[i], a_scale[i], j, lo, hi);
    }
  }
  return ref;
}

/* ---- packing ------------------------------------------------------------------------ */

/* How the packed weights reach the GEMM. */
enum pack_how { pack_exact, pack_larger, pack_alloc, pack_copy };
static const char* const pack_name[] = { "exact", "larger", "alloc", "copy" };

/* A valid packing (it must succeed) of w, as `how` says; *size: the packed size. The
 * result is freed with free() (an allocated one is copied into an aligned block). */
static void* pack_valid(struct fuzz_reader* r, const struct weights* w, enum pack_how how,
                        size_t* size)
{
  gemmi8_status s = gemmi8_qd8_pack_q4_size(w->n, w->k, w->block, size);
  fuzz_expect_status(s, OK, "pack_q4_size (valid)");
  if (*size <= FUZZ_HEADER || *size % GEMMI8_PACK_ALIGNMENT != 0) {
    fuzz_fail("pack_q4_size(%zu, %zu, %zu) = %zu: not a multiple of %d past the header", w->n,
              w->k, w->block, *size, GEMMI8_PACK_ALIGNMENT);
  }
  const gemmi8_q4_weights q = q4_of(w);
  if (how == pack_alloc) {
    void* got = NULL;
    s = gemmi8_qd8_pack_q4_alloc(w->n, w->k, &q, &got);
    fuzz_expect_status(s, OK, "pack_q4_alloc (valid)");
    if ((uintptr_t) got % GEMMI8_PACK_ALIGNMENT != 0) {
      fuzz_fail("pack_q4_alloc: %p misaligned", got);
    }
    void* p = fuzz_aligned(*size);
    memcpy(p, got, *size);
    gemmi8_packed_free(got);
    return p;
  }
  const size_t have = *size + (how == pack_larger ? 1 + fuzz_u8(r) : 0);
  void* p = fuzz_aligned(have);
  fuzz_fill_random(r, p, have);
  s = gemmi8_qd8_pack_q4(w->n, w->k, &q, p, have);
  fuzz_expect_status(s, OK, "pack_q4 (valid)");
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
  int matches;     /* the contract accepts it for the call's n0 and k0 */
  int unchecked;   /* accepted, results not checked (damaged weights, int8 weights) */
  int foreign;     /* packed by another family's packer */
  int rows_type;   /* foreign 8-bit weights the rows' GEMMs accept: 1 qd8's, 2 qdu8's */
  int agree_field; /* 1: n, 2: k damaged in the header, the call saying `agree` */
  size_t agree;
  char text[200];
};

/* Weights of another type packed for the same shape from random int8 values: qs8,
 * qu8s8, qu8, bin (random bits), qdu8 (int8 weights the uint8 rows' calls accept,
 * *valid = 2), or qd8 (those of the int8 rows' calls, *valid = 1). NULL when K is past
 * that type's limit. */
static void* pack_foreign(struct fuzz_reader* r, size_t n, size_t k, unsigned kind,
                          const char** name, size_t* size, int* valid)
{
  int8_t* b = malloc(n * k);
  float* scale = malloc(n * sizeof(float));
  if (b == NULL || scale == NULL) fuzz_fail("out of memory");
  fuzz_fill_random(r, b, n * k);
  for (size_t j = 0; j < n; j++) scale[j] = fabsf(fuzz_useful(r, -12, -4));
  void* p = NULL;
  gemmi8_status s;
  *valid = 0;
  switch (kind) {
    case 0:
      *name = "qs8";
      s = gemmi8_qs8_pack_alloc(n, k, b, k, GEMMI8_B_NK, 0, NULL, &p);
      gemmi8_qs8_pack_size(n, k, size);
      break;
    case 1:
      *name = "qu8s8";
      s = gemmi8_qu8s8_pack_alloc(n, k, b, k, GEMMI8_B_NK, 0, NULL, &p);
      gemmi8_qu8s8_pack_size(n, k, size);
      break;
    case 2: {
      const uint8_t zp = fuzz_u8(r);
      *name = "qu8";
      s = gemmi8_qu8_pack_alloc(n, k, (const uint8_t*) b, k, GEMMI8_B_NK, 0, &zp, 0, NULL, &p);
      gemmi8_qu8_pack_size(n, k, size);
      break;
    }
    case 3: {
      const size_t words = fuzz_words(k);
      uint64_t* bits = malloc(n * words * sizeof(uint64_t));
      if (bits == NULL) fuzz_fail("out of memory");
      fuzz_fill_random(r, bits, n * words * sizeof(uint64_t));
      *name = "bin";
      s = gemmi8_bin_pack_alloc(n, k, bits, words, GEMMI8_B_NK, &p);
      gemmi8_bin_pack_size(n, k, size);
      free(bits);
      break;
    }
    case 4:
      *name = "qdu8";
      s = gemmi8_qdu8_pack_alloc(n, k, b, k, GEMMI8_B_NK, scale, NULL, &p);
      gemmi8_qdu8_pack_size(n, k, size);
      *valid = 2;
      break;
    default:
      *name = "qd8 (int8 weights)";
      s = gemmi8_qd8_pack_alloc(n, k, b, k, GEMMI8_B_NK, scale, NULL, &p);
      gemmi8_qd8_pack_size(n, k, size);
      *valid = 1;
      break;
  }
  free(b);
  free(scale);
  /* K past another type's limit (qu8's is lower) cannot be packed: no foreign buffer */
  if (s == gemmi8_status_unsupported_parameter) return NULL;
  fuzz_expect_status(s, OK, "foreign pack (valid)");
  return p;
}

/* The packed argument for a call on w (valid buffer `valid` of `size` bytes). */
static void spoil_packed(struct fuzz_reader* r, const struct weights* w, void* valid, size_t size,
                         unsigned how, struct packed_arg* p)
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
    case 2: { /* bytes past the header flipped: weights (their pairs, scales, nibbles)
               * or the bias tail (the last bytes): not checksummed, the call must run
               * within its buffers */
      uint8_t* q = fuzz_aligned(size);
      memcpy(q, valid, size);
      p->owned = q;
      p->ptr = q;
      p->unchecked = 1;
      const size_t flips = fuzz_range(r, 1, 8);
      const int tail = fuzz_u8(r) & 1;
      const size_t body = size - FUZZ_HEADER;
      for (size_t i = 0; i < flips; i++) {
        const size_t span = tail ? (body < 4 * w->n + 64 ? body : 4 * w->n + 64) : body;
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
      int accepted = 0;
      void* q = pack_foreign(r, w->n, w->k, fuzz_u8(r) % 6, &name, &foreign_size, &accepted);
      if (q == NULL) break; /* stays valid */
      p->allocated = q;
      p->ptr = q;
      p->size = foreign_size;
      p->foreign = 1;
      p->rows_type = accepted;
      p->matches = accepted != 0; /* by the calls of its rows' type only */
      p->unchecked = accepted != 0;
      snprintf(p->text, sizeof(p->text), "packed for %s", name);
      break;
    }
    case 4: { /* 4-bit weights of another shape (any block) */
      struct weights other;
      const uint8_t s = fuzz_u8(r);
      size_t n = (s & 1) ? fuzz_range(r, 1, 80) : w->n;
      size_t k = (s & 2) ? fuzz_range(r, 1, 300) : w->k;
      if (n == w->n && k == w->k) k = k == 1 ? 2 : k - 1;
      weights_init(r, &other, n, k, decode_block(r), 0);
      size_t other_size;
      p->owned = pack_valid(r, &other, pack_exact, &other_size);
      weights_free(&other);
      p->ptr = p->owned;
      p->size = other_size;
      p->matches = 0;
      snprintf(p->text, sizeof(p->text), "packed for n %zu k %zu block %zu", n, k, other.block);
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

static void fill_zero_points(struct fuzz_reader* r, int32_t* zp, size_t m)
{
  const uint8_t kind = fuzz_u8(r) % 5;
  const int32_t constant = fuzz_range_s32(r, -128, 127);
  for (size_t i = 0; i < m; i++) {
    switch (kind) {
      case 0: zp[i] = -128; break;
      case 1: zp[i] = 127; break;
      case 2: zp[i] = (fuzz_random(r) & 1) ? 127 : -128; break;
      case 3: zp[i] = constant; break;
      default: zp[i] = -128 + (int32_t) (fuzz_random(r) % 256); break;
    }
  }
}

/* A rows: random, lowest, highest, two values, a constant, or each row at the extreme
 * opposite its zero point (with the weights at theirs: the largest block sums). */
static void fill_rows(struct fuzz_reader* r, int8_t* a, size_t m, size_t k, size_t stride,
                      const int32_t* zp, unsigned kind, uint8_t constant)
{
  for (size_t i = 0; i < m; i++) {
    int8_t* row = a + i * stride;
    switch (kind) {
      case 1: memset(row, 0x80, k); break;
      case 2: memset(row, 0x7f, k); break;
      case 3: fuzz_fill_two(r, (uint8_t*) row, k, 0x80, 0x7f); break;
      case 4: memset(row, constant, k); break;
      case 5: memset(row, zp[i] == -128 ? 0x7f : 0x80, k); break;
      default: break; /* random, as generated */
    }
  }
}

/* ---- calls ---------------------------------------------------------------------------- */

/* Which entry point a GEMM call goes to: the qd8 or the qdu8 GEMM (int8 or uint8 rows),
 * or one that must refuse 4-bit weights (the qs8 int32 GEMM). */
enum entry { entry_qd8, entry_qdu8, entry_qs8_s32 };

static gemmi8_status gemm_call(enum entry entry, const struct fuzz_ex* e, size_t m, size_t n,
                               size_t k, const int8_t* a, size_t a_stride, const float* a_scale,
                               const int32_t* a_zp, const void* packed, float lo, float hi,
                               float* c, size_t c_stride)
{
  if (entry == entry_qs8_s32) {
    return gemmi8_qs8_gemm_s32(m, n, k, a, a_stride, packed, (int32_t*) (void*) c, c_stride);
  }
  const uint8_t* au = (const uint8_t*) a;
  if (e->run == fuzz_run_plain) {
    return entry == entry_qdu8
               ? gemmi8_qdu8_gemm_f32(m, n, k, au, a_stride, a_scale, a_zp, packed, lo, hi, c,
                                      c_stride)
               : gemmi8_qd8_gemm_f32(m, n, k, a, a_stride, a_scale, a_zp, packed, lo, hi, c,
                                     c_stride);
  }
  return entry == entry_qdu8
             ? gemmi8_qdu8_gemm_f32_ex(m, n, k, au, a_stride, a_scale, a_zp, packed, lo, hi, c,
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
    case 0: /* small: every tile height and column remainder, a few blocks of 32 */
      *m = fuzz_range(r, 1, 16), *n = fuzz_range(r, 1, 64), *k = fuzz_range(r, 1, 80);
      break;
    case 1: /* medium: several blocks of every size */
      *m = fuzz_range(r, 1, 40), *n = fuzz_range(r, 1, 100), *k = fuzz_range(r, 1, 800);
      break;
    case 2: { /* deep: at and just below the limit (values at their extremes), or below */
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
    case 3: /* tall: row pairs past the stack, several row chunks */
      *m = fuzz_range(r, 900, 1400), *n = fuzz_range(r, 1, 4), *k = fuzz_range(r, 1, 100);
      break;
    default: /* big enough for the _ex entry points to split the work */
      *m = fuzz_range(r, 96, 200), *n = fuzz_range(r, 96, 200), *k = fuzz_range(r, 96, 200);
      break;
  }
  while ((uint64_t) *m * *n * *k > WORK_BUDGET && *m > 1) *m /= 2;
}

struct gemm_call {
  size_t m, n, k, a_stride, c_stride;
  const int8_t* a;
  const float* a_scale;
  const int32_t* a_zp;
  int null_packed, null_c;
  float lo, hi;
  enum entry entry;
};

static const char* const entry_name[] = { "qd8_gemm_f32", "qdu8_gemm_f32", "qs8_gemm_s32" };

static void run_gemm(struct fuzz_reader* r)
{
  const uint8_t f = fuzz_u8(r);
  size_t m0, n0, k0;
  int extremes;
  decode_shape(r, &m0, &n0, &k0, (f & 7) % 5, &extremes);
  const enum pack_how how = (enum pack_how)((f >> 3) & 3);
  const size_t block0 = decode_block(r);
  struct fuzz_ex e;
  const uint8_t t = fuzz_u8(r);
  fuzz_ex_init(r, &e, (enum fuzz_run)(t & 3), t >> 4);

  struct weights w;
  weights_init(r, &w, n0, k0, block0, extremes);
  size_t size0;
  void* valid = pack_valid(r, &w, how, &size0);

  struct gemm_call c = { .m = m0, .n = n0, .k = k0, .entry = entry_qd8 };
  const int u8 = (fuzz_u8(r) & 1) != 0; /* uint8 rows: the qdu8 GEMM */
  if (u8) c.entry = entry_qdu8;
  c.a_stride = k0 + fuzz_extra(r, 300);
  c.c_stride = n0 + fuzz_extra(r, 300);
  const uint8_t offsets = fuzz_u8(r);
  const size_t a_offset = (offsets & 1) ? fuzz_range(r, 0, 63) : 0;
  const size_t c_offset = (offsets & 2) ? 4 * fuzz_range(r, 0, 15) : 0;
  const size_t a_have = (m0 - 1) * c.a_stride + k0;
  const size_t c_have = ((m0 - 1) * c.c_stride + n0) * sizeof(float);
  void *a_block = NULL, *scale_block = NULL, *zp_block = NULL;
  int8_t* a = fuzz_exact(r, a_have, a_offset, &a_block);
  float* a_scale = fuzz_exact(r, m0 * sizeof(float), 0, &scale_block);
  int32_t* a_zp = fuzz_exact(r, m0 * sizeof(int32_t), 0, &zp_block);
  fuzz_fill_scales(r, a_scale, m0, -10, 0, 1);
  fill_zero_points(r, a_zp, m0);
  const uint8_t a_fill = fuzz_u8(r), a_const = fuzz_u8(r);
  fill_rows(r, a, m0, k0, c.a_stride, a_zp, extremes ? 5 : a_fill % 8, a_const);
  if (u8) {
    /* the same values as uint8 rows: each byte and zero point plus 128 */
    for (size_t i = 0; i < m0; i++) {
      for (size_t kk = 0; kk < k0; kk++) a[i * c.a_stride + kk] ^= (int8_t) 0x80;
      a_zp[i] += 128;
    }
  }
  fuzz_decode_clamp(r, &c.lo, &c.hi);
  c.a = a;
  c.a_scale = a_scale;
  c.a_zp = a_zp;

  struct packed_arg p;
  spoil_packed(r, &w, valid, size0, 99, &p);
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
        const int32_t bad[] = { -129, 128, INT32_MIN, INT32_MAX, -129 - d, 128 + d };
        a_zp[row] = bad[fuzz_u8(r) % 6];
        if (u8 && a_zp[row] > INT32_MIN + 128 && a_zp[row] < INT32_MAX - 128) a_zp[row] += 128;
        break;
      }
      case 13: fuzz_spoil_clamp(r, &c.lo, &c.hi); break;
      case 14:
      case 15:
      case 16:
        /* (not with another entry point: weights of its type would fit it) */
        if (p.ptr == valid && p.matches && c.entry != entry_qs8_s32) {
          const unsigned spoil = mu == 14 ? fuzz_u8(r) % 2 : (unsigned) mu - 13;
          packed_arg_free(&p);
          spoil_packed(r, &w, valid, size0, spoil, &p);
          if (mu == 16 && (fuzz_u8(r) & 1)) {
            packed_arg_free(&p);
            spoil_packed(r, &w, valid, size0, 4, &p);
          }
        }
        break;
      case 17: fuzz_ex_spoil(r, &e); break;
      case 18: /* 4-bit weights where they are not accepted (not foreign ones) */
        if (!p.foreign) c.entry = entry_qs8_s32;
        break;
      default: /* one row at strides near SIZE_MAX: valid */
        c.m = 1;
        c.a_stride = (fuzz_u8(r) & 1) ? SIZE_MAX - fuzz_u8(r) % 4 : (size_t) PTRDIFF_MAX;
        c.c_stride = (fuzz_u8(r) & 1) ? SIZE_MAX - fuzz_u8(r) % 4 : (size_t) PTRDIFF_MAX / 4;
        break;
    }
  }
  if (p.agree_field == 1) c.n = p.agree;
  if (p.agree_field == 2) c.k = p.agree;
  const int rows_ok = p.rows_type == 0 || p.rows_type == (c.entry == entry_qdu8 ? 2 : 1);
  const int matches = p.matches && rows_ok && c.n == n0 && c.k == k0 && c.entry != entry_qs8_s32;

  /* the model */
  unsigned want = 0;
  int early = 0; /* invalid for a reason that needs no read of the row arrays */
  size_t a_bytes = 0, c_bytes = 0;
  if (c.a == NULL || c.null_packed || c.null_c) want |= INV, early = 1;
  if (c.entry != entry_qs8_s32 && (c.a_scale == NULL || c.a_zp == NULL)) want |= INV, early = 1;
  const int a_extent = fuzz_extent(c.m, c.k, c.a_stride, 1, &a_bytes);
  const int c_extent = fuzz_extent(c.m, c.n, c.c_stride, sizeof(float), &c_bytes);
  if (!a_extent || !c_extent) want |= INV, early = 1;
  if (c.k > MAX_K) want |= UNS, early = 1;
  if (!matches) want |= INV, early = 1;
  if (e.invalid && c.entry != entry_qs8_s32) want |= INV, early = 1;
  const int rows_backed = c.m <= m0;
  if (c.entry != entry_qs8_s32) {
    if (!fuzz_clamp_ok(c.lo, c.hi)) want |= INV;
    if (rows_backed && c.a_scale != NULL && c.a_zp != NULL) {
      for (size_t i = 0; i < c.m; i++) {
        const int32_t lo = c.entry == entry_qdu8 ? 0 : -128;
        if (!fuzz_is_finite(c.a_scale[i]) || c.a_zp[i] < lo || c.a_zp[i] > lo + 255) want |= INV;
      }
    }
  }
  if (want == 0) want = OK;
  const int runnable =
      want == OK ? (a_bytes <= a_have && rows_backed && c_bytes <= CAP) : (early || rows_backed);
  fuzz_describe(
      "gemm %s M=%zu N=%zu K=%zu (packed %zu x %zu block %zu, %s, %s stride %zu) a_stride=%zu "
      "c_stride=%zu a+%zu c+%zu scale[0]=%a zp[0]=%d bias %s clamp [%a, %a]%s %s %s: "
      "mutations %s",
      entry_name[c.entry], c.m, c.n, c.k, n0, k0, w.block,
      w.zp != NULL ? "zero points" : "signed nibbles", pack_name[how], w.stride, c.a_stride,
      c.c_stride, a_offset, c_offset, (double) a_scale[0], (int) a_zp[0], w.bias ? "set" : "NULL",
      (double) c.lo, (double) c.hi, extremes ? " extremes" : "", p.text, e.text, what);
  if (!runnable) goto done;

  /* exact-size inputs at the extent the call describes */
  void *a_copy_block = NULL, *scale_copy_block = NULL, *zp_copy_block = NULL;
  const int8_t* a_arg = c.a;
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
  if (want == OK && !p.unchecked) {
    ref = ref_gemm(&w, c.entry == entry_qdu8, c.m, a_arg, c.a_stride, scale_arg, zp_arg, c.lo,
                   c.hi);
  }
  struct fuzz_out out;
  fuzz_out_init(&out, r, c_extent && c_bytes <= CAP ? c_bytes : c_have, c_offset);
  uint8_t* packed_saved = malloc(p.size);
  if (packed_saved == NULL) fuzz_fail("out of memory");
  memcpy(packed_saved, p.ptr, p.size);
  const void* packed_arg = c.null_packed ? NULL : p.ptr;
  float* c_arg = c.null_c ? NULL : (float*) (void*) out.data;
  const gemmi8_status s = gemm_call(c.entry, &e, c.m, c.n, c.k, a_arg, c.a_stride, scale_arg,
                                    zp_arg, packed_arg, c.lo, c.hi, c_arg, c.c_stride);
  fuzz_ex_check(&e);
  fuzz_expect_status(s, want, entry_name[c.entry]);
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
  int null_packed, null_c, qdu8;
  float lo, hi;
  int ws_null;
  size_t ws_offset, ws_size;
};

static void run_linear(struct fuzz_reader* r)
{
  const uint8_t f = fuzz_u8(r);
  size_t m0, n0, k0;
  switch (f % 4) {
    case 0: m0 = fuzz_range(r, 1, 16), n0 = fuzz_range(r, 1, 64), k0 = fuzz_range(r, 1, 80); break;
    case 1:
      m0 = fuzz_range(r, 1, 40), n0 = fuzz_range(r, 1, 100), k0 = fuzz_range(r, 1, 600);
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
  const size_t block0 = decode_block(r);
  struct fuzz_ex e;
  const uint8_t t = fuzz_u8(r);
  /* the linear layer has one entry point: plain is the _ex one with NULL */
  fuzz_ex_init(r, &e, (t & 3) == fuzz_run_plain ? fuzz_run_ex_null : (enum fuzz_run)(t & 3),
               t >> 4);

  struct weights w;
  weights_init(r, &w, n0, k0, block0, 0);
  size_t size0;
  void* valid = pack_valid(r, &w, how, &size0);

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
  const uint8_t ws_how = fuzz_u8(r);
  c.ws_null = ws_how % 3 == 0;
  c.ws_size = ws_need0 + (ws_how % 3 == 2 ? fuzz_range(r, 1, 200) : 0);
  const size_t ws_have = c.ws_size; /* bytes the workspace really has */

  struct packed_arg p;
  spoil_packed(r, &w, valid, size0, 99, &p);
  const int mutations = fuzz_mutation_count(r);
  char what[64] = "";
  for (int i = 0; i < mutations; i++) {
    const uint8_t mu = (uint8_t) fuzz_mutation(r, 19, what, sizeof(what));
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
          spoil_packed(r, &w, valid, size0, spoil, &p);
          if (mu == 15 && (fuzz_u8(r) & 1)) {
            packed_arg_free(&p);
            spoil_packed(r, &w, valid, size0, 4, &p);
          }
        }
        break;
      case 16: fuzz_ex_spoil(r, &e); break;
      case 17: /* the uint8 rows' linear layer */
        c.qdu8 = !c.qdu8;
        break;
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
  const int rows_ok = p.rows_type == 0 || p.rows_type == (c.qdu8 ? 2 : 1);
  const int matches = p.matches && rows_ok && c.n == n0 && c.k == k0;

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
      "%s_linear_f32 M=%zu N=%zu K=%zu (packed %zu x %zu block %zu, %s, %s) x_stride=%zu "
      "c_stride=%zu x+%zu c+%zu values=%u unit=2^%d bias %s clamp [%a, %a] workspace %s+%zu "
      "size %zu (needs %zu, has %zu) %s %s: mutations %s",
      c.qdu8 ? "qdu8" : "qd8", c.m, c.n, c.k, n0, k0, w.block,
      w.zp != NULL ? "zero points" : "signed nibbles", pack_name[how], c.x_stride, c.c_stride,
      x_offset, c_offset, values, exponent, w.bias ? "set" : "NULL", (double) c.lo, (double) c.hi,
      c.ws_null ? "NULL" : "given", c.ws_offset, c.ws_size, ws_need0, ws_have, p.text, e.text,
      what);
  if (!runnable) goto done;

  void* x_copy_block = NULL;
  const float* x_arg = c.x;
  if (c.x != NULL && x_backed) {
    x_arg =
        fuzz_exact_copy(r, c.x, x_bytes / sizeof(float), sizeof(float), x_offset, &x_copy_block);
  }
  float* ref = NULL;
  if (want == OK && !p.unchecked) {
    ref = malloc(c.m * c.n * sizeof(float));
    int8_t* q = malloc(c.k);
    if (ref == NULL || q == NULL) fuzz_fail("out of memory");
    for (size_t i = 0; i < c.m; i++) {
      float scale;
      int32_t zp;
      if (c.qdu8) {
        ref_quantize_row_u8(c.k, x_arg + i * c.x_stride, (uint8_t*) q, &scale, &zp);
      } else {
        ref_quantize_row_s8(c.k, x_arg + i * c.x_stride, q, &scale, &zp);
      }
      for (size_t j = 0; j < c.n; j++) {
        ref[i * c.n + j] = ref_q4(&w, c.qdu8, q, zp, scale, j, c.lo, c.hi);
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
      c.qdu8 ? gemmi8_qdu8_linear_f32(c.m, c.n, c.k, x_arg, c.x_stride, packed_arg, c.lo, c.hi,
                                      c_arg, c.c_stride, ws_arg, c.ws_size, e.par)
             : gemmi8_qd8_linear_f32(c.m, c.n, c.k, x_arg, c.x_stride, packed_arg, c.lo, c.hi,
                                     c_arg, c.c_stride, ws_arg, c.ws_size, e.par);
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

/* Packed weights (n x k, as `w` describes them) run through a GEMM of 1 to 3 rows,
 * checked against the reference: a packing of mutated but valid arguments (another
 * stride, K, N, block, no bias or zero points) holds what they said. */
static void check_packed(struct fuzz_reader* r, struct weights* w, const void* packed)
{
  const size_t m = 1 + fuzz_random(r) % 3;
  if ((uint64_t) m * w->n * w->k > WORK_BUDGET) return;
  int8_t* a = malloc(m * w->k);
  float a_scale[3];
  int32_t a_zp[3];
  float* c = malloc(m * w->n * sizeof(float));
  if (a == NULL || c == NULL) fuzz_fail("out of memory");
  fuzz_fill_random(r, a, m * w->k);
  for (size_t i = 0; i < m; i++) {
    a_scale[i] = fabsf(fuzz_useful(r, -8, 0));
    a_zp[i] = -128 + (int32_t) (fuzz_random(r) % 256);
  }
  weights_values(w);
  float* ref = ref_gemm(w, 0, m, a, w->k, a_scale, a_zp, -INFINITY, INFINITY);
  const gemmi8_status s = gemmi8_qd8_gemm_f32(m, w->n, w->k, a, w->k, a_scale, a_zp, packed,
                                              -INFINITY, INFINITY, c, w->n);
  fuzz_expect_status(s, OK, "qd8_gemm_f32 on the packing");
  for (size_t i = 0; i < m * w->n; i++) {
    if (fuzz_bits_of(c[i]) != fuzz_bits_of(ref[i])) {
      fuzz_fail("a GEMM on the packing: C[%zu][%zu] = %a (0x%08x), expected %a (0x%08x)",
                i / w->n, i % w->n, (double) c[i], (unsigned) fuzz_bits_of(c[i]), (double) ref[i],
                (unsigned) fuzz_bits_of(ref[i]));
    }
  }
  free(ref);
  free(a);
  free(c);
  free(w->value);
  w->value = NULL;
}

struct pack_args {
  size_t n, k, block, stride, packed_size;
  int null_w, null_packed;
  const uint8_t* b;
  const float* scale;
  const uint8_t* zp;
  const float* bias;
  size_t misalign;
};

static void run_pack(struct fuzz_reader* r, int alloc)
{
  const uint8_t f = fuzz_u8(r);
  const size_t block0 = decode_block(r);
  const size_t n0 = fuzz_range(r, 1, 64);
  const size_t k0 = (f & 1) ? MAX_K - fuzz_range(r, 0, 40) : fuzz_range(r, 1, 600);
  struct weights w;
  weights_init(r, &w, (f & 1) ? 1 + n0 % 3 : n0, k0, block0, 0);
  size_t size0;
  void* reference = pack_valid(r, &w, pack_exact, &size0);

  struct pack_args c = {
    .n = w.n,
    .k = k0,
    .block = w.block,
    .stride = w.stride,
    .packed_size = size0 + ((f & 2) ? fuzz_range(r, 1, 200) : 0),
    .b = w.b,
    .scale = w.scale,
    .zp = w.zp,
    .bias = w.bias,
  };
  const size_t have = c.packed_size; /* bytes the buffer really has */
  const size_t count0 = w.n * w.blocks; /* scales and zero points the arrays hold */
  const int mutations = fuzz_mutation_count(r);
  int same_arrays = 1;
  float *bad_scale = NULL, *bad_bias = NULL; /* copies with a value NaN or infinite */
  uint8_t* bad_zp = NULL;                    /* a copy with a value above 15 */
  char what[64] = "";
  for (int i = 0; i < mutations; i++) {
    const uint8_t mu = (uint8_t) fuzz_mutation(r, 18, what, sizeof(what));
    switch (mu) {
      case 0: c.null_w = 1; break;
      case 1: c.b = NULL; break;
      case 2: c.scale = NULL; break;
      case 3: c.null_packed = 1; break;
      case 4: c.n = fuzz_mutate_size(r, w.n); break;
      case 5: c.k = fuzz_mutate_size(r, k0); break;
      case 6: /* just past the limit, with a stride that holds the rows */
        c.k = MAX_K + 1 + fuzz_range(r, 0, 2);
        if (c.stride < div_up(c.k, 2)) c.stride = div_up(c.k, 2);
        break;
      case 7: /* rows enough to overflow the extent or the packed size */
        c.n = fuzz_boundary_rows(r, div_up(c.k, 2), c.stride, 1, w.n);
        break;
      case 8: c.stride = fuzz_mutate_stride(r, c.n, div_up(c.k, 2), 1); break;
      case 9: c.block = (fuzz_u8(r) & 1) ? decode_block(r) : bad_block(r); break;
      case 10: c.misalign = fuzz_range(r, 1, 63); break;
      case 11:
        c.packed_size = (fuzz_u8(r) & 1) ? 0 : size0 - 1 - fuzz_range(r, 0, size0 - 1);
        break;
      case 12: c.packed_size = fuzz_edgy_size(r, size0); break; /* a claim */
      case 13:
        if (bad_scale == NULL) {
          bad_scale = malloc(count0 * sizeof(float));
          if (bad_scale == NULL) fuzz_fail("out of memory");
          memcpy(bad_scale, w.scale, count0 * sizeof(float));
          bad_scale[fuzz_range(r, 0, count0 - 1)] = fuzz_nonfinite(r);
          if (c.scale != NULL) c.scale = bad_scale;
          same_arrays = 0;
        }
        break;
      case 14:
        if (bad_bias == NULL) {
          bad_bias = calloc(w.n, sizeof(float));
          if (bad_bias == NULL) fuzz_fail("out of memory");
          if (w.bias != NULL) memcpy(bad_bias, w.bias, w.n * sizeof(float));
          bad_bias[fuzz_range(r, 0, w.n - 1)] = fuzz_nonfinite(r);
          c.bias = bad_bias;
          same_arrays = 0;
        }
        break;
      case 15:
        if (bad_zp == NULL) {
          bad_zp = malloc(count0);
          if (bad_zp == NULL) fuzz_fail("out of memory");
          if (w.zp != NULL) {
            memcpy(bad_zp, w.zp, count0);
          } else {
            memset(bad_zp, 8, count0);
          }
          bad_zp[fuzz_range(r, 0, count0 - 1)] = (uint8_t) (16 + fuzz_u8(r) % 240);
          c.zp = bad_zp;
          same_arrays = 0;
        }
        break;
      case 16:
        c.bias = NULL;
        same_arrays &= w.bias == NULL;
        break;
      default:
        c.zp = NULL;
        same_arrays &= w.zp == NULL;
        break;
    }
  }
  /* the model */
  const size_t row_bytes = div_up(c.k, 2);
  const int listed = block_listed(c.block);
  const size_t count = listed && c.k != 0 ? c.n * blocks_of(c.k, c.block) : 0;
  size_t extent = 0, need = 0;
  unsigned want = 0;
  int early = 0; /* invalid for a reason that needs no read of scale, zero_point, bias */
  if (c.null_w || c.b == NULL || c.scale == NULL || (alloc && c.null_packed)) {
    want |= INV, early = 1;
  }
  if (c.n == 0 || c.k == 0 || !listed) want |= INV, early = 1;
  const int extent_ok = fuzz_extent(c.n, row_bytes, c.stride, 1, &extent);
  if (!extent_ok) want |= INV, early = 1;
  if (c.k > MAX_K) want |= UNS, early = 1;
  const int size_known = c.n != 0 && c.k != 0 && c.k <= MAX_K && listed;
  if (size_known && gemmi8_qd8_pack_q4_size(c.n, c.k, c.block, &need) != gemmi8_status_success) {
    want |= UNS, early = 1;
    need = 0;
  }
  if (!alloc) {
    if (c.null_packed || c.misalign != 0) want |= INV;
    if (size_known && need != 0 && c.packed_size < need) want |= INV;
  }
  /* the arrays are read flat: n * blocks scales and zero points, n biases */
  const int arrays_backed = size_known && count <= count0 && c.n <= w.n;
  if (arrays_backed && c.scale != NULL) {
    for (size_t x = 0; x < count; x++) {
      if (!fuzz_is_finite(c.scale[x]) || (c.zp != NULL && c.zp[x] > 15)) want |= INV;
    }
    for (size_t j = 0; c.bias != NULL && j < c.n; j++) {
      if (!fuzz_is_finite(c.bias[j])) want |= INV;
    }
  }
  if (want == 0) want = OK;
  /* the nibble rows are remade at the call's stride from w's: rows and bytes w has */
  const int b_backed = extent_ok && c.n <= w.n && row_bytes <= w.row_bytes && extent <= CAP;
  const int runnable = want == OK ? (b_backed && arrays_backed && (alloc || c.packed_size <= have))
                                  : (early || arrays_backed);
  /* the weights of the reference packing: its bytes must come out whatever the stride */
  const int same_weights = c.n == w.n && c.k == k0 && c.block == w.block && same_arrays;
  fuzz_describe(
      "pack_q4%s n %zu k %zu block %zu (valid %zu x %zu block %zu) stride %zu (was %zu) "
      "packed_size %zu (needs %zu, has %zu) misalign %zu w %s scale %s zero_point %s bias %s: "
      "mutations %s",
      alloc ? "_alloc" : "", c.n, c.k, c.block, w.n, k0, w.block, c.stride, w.stride,
      c.packed_size, size0, have, c.misalign, c.null_w ? "NULL" : "set", c.scale ? "set" : "NULL",
      c.zp ? "set" : "NULL", c.bias ? "set" : "NULL", what);
  if (!runnable) goto done;

  /* exact-size arguments: the nibble rows at the call's stride (the gaps and an odd K's
   * pad nibble random), the arrays at the count the call describes */
  void *b_copy = NULL, *scale_copy = NULL, *zp_copy = NULL, *bias_copy = NULL;
  const uint8_t* b_arg = c.b;
  if (c.b != NULL && b_backed) {
    uint8_t* nb = fuzz_exact(r, extent, 0, &b_copy);
    for (size_t j = 0; j < c.n; j++) {
      memcpy(nb + j * c.stride, w.b + j * w.stride, row_bytes);
      if (c.k % 2) nb[j * c.stride + row_bytes - 1] ^= (uint8_t) (fuzz_random(r) & 0xF0);
    }
    b_arg = nb;
  }
  const float* scale_arg = c.scale;
  const uint8_t* zp_arg = c.zp;
  const float* bias_arg = c.bias;
  if (arrays_backed) {
    scale_arg = fuzz_exact_copy(r, c.scale, count, sizeof(float), 0, &scale_copy);
    zp_arg = fuzz_exact_copy(r, c.zp, count, 1, 0, &zp_copy);
    bias_arg = fuzz_exact_copy(r, c.bias, c.n, sizeof(float), 0, &bias_copy);
  }
  const gemmi8_q4_weights q = { b_arg, c.stride, c.block, scale_arg, zp_arg, bias_arg };
  const gemmi8_q4_weights* q_arg = c.null_w ? NULL : &q;
  /* what the call describes, for a GEMM on its result */
  struct weights view = {
    .n = c.n, .k = c.k, .block = c.block, .blocks = blocks_of(c.k, c.block),
    .row_bytes = row_bytes, .stride = c.stride, .b = (uint8_t*) b_arg,
    .scale = (float*) scale_arg, .zp = (uint8_t*) zp_arg, .bias = (float*) bias_arg,
  };
  if (alloc) {
    struct fuzz_out slot;
    fuzz_out_init(&slot, r, sizeof(void*), 0);
    void** sp = c.null_packed ? NULL : (void**) (void*) slot.data;
    const gemmi8_status s = gemmi8_qd8_pack_q4_alloc(c.n, c.k, q_arg, sp);
    fuzz_expect_status(s, want, "pack_q4_alloc");
    fuzz_out_check_guards(&slot, "*packed");
    if (s != gemmi8_status_success) {
      fuzz_out_check_untouched(&slot, "*packed");
    } else {
      void* got;
      memcpy(&got, slot.data, sizeof(got));
      if ((uintptr_t) got % GEMMI8_PACK_ALIGNMENT != 0) {
        fuzz_fail("pack_q4_alloc: %p misaligned", got);
      }
      if (same_weights && memcmp(got, reference, size0) != 0) {
        fuzz_fail("pack_q4_alloc with stride %zu packed other bytes than stride %zu", c.stride,
                  w.stride);
      }
      check_packed(r, &view, got);
      gemmi8_packed_free(got);
    }
    fuzz_out_free(&slot);
  } else {
    struct fuzz_out out;
    fuzz_out_init(&out, r, have, c.misalign);
    const gemmi8_status s =
        gemmi8_qd8_pack_q4(c.n, c.k, q_arg, c.null_packed ? NULL : out.data, c.packed_size);
    fuzz_expect_status(s, want, "pack_q4");
    fuzz_out_check_guards(&out, "packed");
    if (s != gemmi8_status_success) {
      fuzz_out_check_untouched(&out, "packed");
    } else {
      if (same_weights && memcmp(out.data, reference, size0) != 0) {
        fuzz_fail("pack_q4 with stride %zu into %zu bytes gave other bytes than stride %zu into "
                  "%zu",
                  c.stride, c.packed_size, w.stride, size0);
      }
      /* bytes past the packed size are the caller's */
      fuzz_out_check_range(&out, need, have, "packed past its size");
      check_packed(r, &view, out.data);
    }
    fuzz_out_free(&out);
  }
  free(b_copy);
  free(scale_copy);
  free(zp_copy);
  free(bias_copy);
done:
  free(bad_scale);
  free(bad_bias);
  free(bad_zp);
  free(reference);
  weights_free(&w);
}

/* ---- sizes ------------------------------------------------------------------------ */

/* gemmi8_qd8_pack_q4_size. The packed buffer holds at least the nibbles and, per
 * channel, a scale and a zero point per block and a bias (n * ceil(k / 2) + 12 n
 * bytes): a size whose lower bound overflows must be refused (unsupported_parameter),
 * one far from overflowing (n <= 2^40) served, above its lower bound. */
static void run_sizes(struct fuzz_reader* r)
{
  const uint8_t f = fuzz_u8(r);
  size_t n = (f & 2) ? fuzz_edgy_size(r, 64) : fuzz_range(r, 1, 300);
  size_t k = (f & 4) ? fuzz_edgy_size(r, MAX_K) : fuzz_range(r, 1, 1000);
  if ((f & 0x18) == 0x08) k = MAX_K + fuzz_range(r, 0, 3) - 1;
  if ((f & 0x18) == 0x10) n = (size_t) 1 << fuzz_range(r, 30, 63);
  const size_t block = (f & 0x20) ? bad_block(r) : decode_block(r);
  const int null_size = (f & 0xc0) == 0x40;
  const int listed = block_listed(block);
  size_t nibbles = 0, per_channel = 0, low = 0;
  const int low_fits = !__builtin_mul_overflow(n, div_up(k, 2), &nibbles) &&
                       !__builtin_mul_overflow(n, (size_t) 12, &per_channel) &&
                       !__builtin_add_overflow(nibbles, per_channel, &low);
  unsigned want = 0;
  if (null_size || n == 0 || k == 0 || !listed) want |= INV;
  if (k > MAX_K) want |= UNS;
  if (n != 0 && k != 0 && k <= MAX_K && listed) {
    if (!low_fits) {
      want |= UNS;
    } else if (n > ((size_t) 1 << 40)) {
      want |= OK | UNS;
    }
  }
  if (want == 0) want = OK;
  fuzz_describe("qd8_pack_q4_size(n %zu, k %zu, block %zu, %s)", n, k, block,
                null_size ? "NULL" : "size");
  struct fuzz_out out;
  fuzz_out_init(&out, r, sizeof(size_t), 0);
  size_t* arg = null_size ? NULL : (size_t*) (void*) out.data;
  const gemmi8_status s = gemmi8_qd8_pack_q4_size(n, k, block, arg);
  fuzz_expect_status(s, want, "pack_q4_size");
  if (s != gemmi8_status_success) {
    fuzz_out_check_untouched(&out, "size");
  } else {
    fuzz_out_check_guards(&out, "size");
    size_t got;
    memcpy(&got, out.data, sizeof(got));
    if (got < low) fuzz_fail("size %zu, below the %zu bytes it must hold", got, low);
    if (got % GEMMI8_PACK_ALIGNMENT != 0 || got <= FUZZ_HEADER) {
      fuzz_fail("packed size %zu: not a multiple of %d past the header", got,
                GEMMI8_PACK_ALIGNMENT);
    }
    size_t again = 0;
    const gemmi8_status s2 = gemmi8_qd8_pack_q4_size(n, k, block, &again);
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
  switch (fuzz_u8(&r) % 8) {
    case 0:
    case 1:
    case 2: run_gemm(&r); break;
    case 3:
    case 4: run_linear(&r); break;
    case 5: run_pack(&r, 0); break;
    case 6: run_pack(&r, 1); break;
    default: run_sizes(&r); break;
  }
  return 0;
}
