/*
 * The error contract: valid calls mutated into invalid ones.
 *
 * One input picks an entry point, builds a small valid call to it, then applies one
 * or two mutations: null pointers; zero sizes; sizes and strides near SIZE_MAX,
 * PTRDIFF_MAX, 2^32, or just past the largest extent that fits; small strides;
 * misaligned, too small, foreign (other type or shape) or damaged packed buffers (bytes
 * of the 64-byte header flipped, in the buffer itself or in a copy; flips in the
 * weights, which are not checksummed, must still run); out-of-range zero points,
 * clamps, shifts, multipliers and scales, at any channel; unknown flags, modes and
 * per_channel values; fields the mode ignores set to garbage.
 *
 * The status expected is computed from the header's rules for the mutated arguments
 * (a model of the contract written here, not taken from the library): success, or
 * the set of statuses of the rules broken (a call breaking an invalid_parameter rule
 * and an unsupported_parameter rule may return either). On failure every output
 * buffer (random canary, poisoned guards around) must be untouched; inputs and packed
 * weights are never written. A mutated call that is still valid runs only when the
 * buffers really hold what it describes (e.g. M = 1 with a stride near SIZE_MAX), and
 * its results are then checked against the reference.
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

enum type { type_qu8, type_qs8, type_bin, type_qu8s8 };
static const char* const type_name[] = {"qu8", "qs8", "bin", "qu8s8"};

/* ---- sizes that make trouble ---------------------------------------------------- */

/* 1 when the described matrix fits in `have` bytes (and its extent is valid). */
static int backed(size_t rows, size_t cols, size_t stride, size_t elem, size_t have)
{
  size_t bytes;
  return fuzz_extent(rows, cols, stride, elem, &bytes) && bytes <= have;
}

static int scale_ok(float s) { return s > 0.0f && s <= FLT_MAX; }

static float bad_scale(struct fuzz_reader* r)
{
  static const float bad[] = {0.0f, -0.0f, -1.0f, -FLT_MIN, -FLT_TRUE_MIN, INFINITY, -INFINITY,
                              NAN, -NAN, -FLT_MAX};
  const uint8_t s = fuzz_u8(r);
  if (s < 200) return bad[s % 10];
  /* any NaN */
  uint32_t bits = UINT32_C(0x7f800001) | (fuzz_u32(r) & UINT32_C(0x807fffff));
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

static double bad_double(struct fuzz_reader* r)
{
  static const double bad[] = {-1.0, -DBL_MIN, -DBL_TRUE_MIN, INFINITY, -INFINITY, NAN, -NAN,
                               -DBL_MAX, -0x1p-40};
  return bad[fuzz_u8(r) % 9];
}

static double good_double(struct fuzz_reader* r)
{
  switch (fuzz_u8(r) % 5) {
    case 0: return 0.0;
    case 1: return -0.0; /* "A scale of 0 (or -0.0) gives multiplier 0" */
    case 2: return DBL_TRUE_MIN;
    case 3: return DBL_MAX;
    default: return ldexp(1.0 + fuzz_u16(r) / 65536.0, (int) fuzz_range(r, 0, 80) - 50);
  }
}

/* ---- quantize_multiplier(s) ----------------------------------------------------- */

static void run_quantize(struct fuzz_reader* r)
{
  const uint8_t f = fuzz_u8(r);
  const double scale = (f & 1) ? bad_double(r) : good_double(r);
  const int null_m = (f & 6) == 2, null_s = (f & 6) == 4;
  fuzz_describe("quantize_multiplier(%a, %s, %s)", scale, null_m ? "NULL" : "m",
                null_s ? "NULL" : "s");
  struct fuzz_out m, s;
  fuzz_out_init(&m, r, 4, 0);
  fuzz_out_init(&s, r, 4, 0);
  const unsigned want = (null_m || null_s || (f & 1)) ? INV : OK;
  const gemmi8_status st =
      gemmi8_quantize_multiplier(scale, null_m ? NULL : (int32_t*) (void*) m.data,
                                 null_s ? NULL : (int32_t*) (void*) s.data);
  fuzz_expect_status(st, want, "quantize_multiplier");
  if (st != gemmi8_status_success) {
    fuzz_out_check_untouched(&m, "multiplier");
    fuzz_out_check_untouched(&s, "shift");
  } else {
    fuzz_out_check_guards(&m, "multiplier");
    fuzz_out_check_guards(&s, "shift");
  }
  fuzz_out_free(&m);
  fuzz_out_free(&s);
}

static void run_quantize_array(struct fuzz_reader* r)
{
  const uint8_t f = fuzz_u8(r);
  const size_t have = fuzz_range(r, 1, 12);
  size_t count = have;
  if ((f & 3) == 1) count = 0;
  void* block = NULL;
  double* scale = fuzz_exact(r, have * sizeof(double), 0, &block);
  for (size_t i = 0; i < have; i++) scale[i] = good_double(r);
  int bad_at = -1;
  if (f & 4) {
    bad_at = (int) fuzz_range(r, 0, have - 1);
    scale[bad_at] = bad_double(r);
  }
  const int null_scale = (f & 0x18) == 0x08, null_m = (f & 0x18) == 0x10,
            null_s = (f & 0x18) == 0x18;
  fuzz_describe("quantize_multipliers(count %zu of %zu, bad at %d, null scale %d m %d s %d)",
                count, have, bad_at, null_scale, null_m, null_s);
  struct fuzz_out m, s;
  fuzz_out_init(&m, r, have * 4, 0);
  fuzz_out_init(&s, r, have * 4, 0);
  const unsigned want =
      (count == 0 || null_scale || null_m || null_s || bad_at >= 0) ? INV : OK;
  const gemmi8_status st = gemmi8_quantize_multipliers(
      count, null_scale ? NULL : scale, null_m ? NULL : (int32_t*) (void*) m.data,
      null_s ? NULL : (int32_t*) (void*) s.data);
  fuzz_expect_status(st, want, "quantize_multipliers");
  if (st != gemmi8_status_success) {
    fuzz_out_check_untouched(&m, "multipliers");
    fuzz_out_check_untouched(&s, "shifts");
  } else {
    fuzz_out_check_guards(&m, "multipliers");
    fuzz_out_check_guards(&s, "shifts");
  }
  fuzz_out_free(&m);
  fuzz_out_free(&s);
  free(block);
}

/* ---- packed sizes --------------------------------------------------------------- */

static gemmi8_status pack_size(enum type t, size_t n, size_t k, size_t* size)
{
  switch (t) {
    case type_qu8: return gemmi8_qu8_pack_size(n, k, size);
    case type_qs8: return gemmi8_qs8_pack_size(n, k, size);
    case type_qu8s8: return gemmi8_qu8s8_pack_size(n, k, size);
    default: return gemmi8_bin_pack_size(n, k, size);
  }
}

static size_t max_k_of(enum type t)
{
  switch (t) {
    case type_qu8: return GEMMI8_QU8_MAX_K;
    case type_qs8: return GEMMI8_QS8_MAX_K;
    case type_qu8s8: return GEMMI8_QU8S8_MAX_K;
    default: return GEMMI8_BIN_MAX_K;
  }
}

/* Columns per packed block, learnt once per type from small sizes: the packed size is
 * FUZZ_HEADER + ceil(n / nr) * (bytes of a block at this k). */
static size_t columns_per_block(enum type t)
{
  static size_t nr[4];
  if (nr[t] != 0) return nr[t];
  size_t one, more;
  if (pack_size(t, 1, 1, &one) != gemmi8_status_success) fuzz_fail("pack_size(1, 1) failed");
  for (size_t n = 2; n <= 1024; n++) {
    if (pack_size(t, n, 1, &more) != gemmi8_status_success) fuzz_fail("pack_size(%zu, 1)", n);
    if (more != one) {
      nr[t] = n - 1;
      return nr[t];
    }
  }
  fuzz_fail("%s pack_size: no block boundary below 1024 columns", type_name[t]);
}

/* The packed size the contract implies for (n, k), with k valid: 0 when it does not
 * fit size_t. */
static int model_pack_size(enum type t, size_t n, size_t k, size_t* size)
{
  size_t one;
  if (pack_size(t, 1, k, &one) != gemmi8_status_success) fuzz_fail("pack_size(1, %zu) failed", k);
  if (one <= FUZZ_HEADER) fuzz_fail("pack_size(1, %zu) = %zu: no room for a block", k, one);
  const size_t nr = columns_per_block(t), block = one - FUZZ_HEADER;
  size_t bytes;
  const size_t blocks = n / nr + (n % nr != 0);
  return !__builtin_mul_overflow(blocks, block, &bytes) &&
         !__builtin_add_overflow(bytes, (size_t) FUZZ_HEADER, size);
}

static void run_pack_size(struct fuzz_reader* r)
{
  const uint8_t f = fuzz_u8(r);
  const enum type t = (enum type) (f & 3);
  size_t n = (f & 4) ? fuzz_edgy_size(r, 64) : fuzz_range(r, 1, 300);
  size_t k = (f & 8) ? fuzz_edgy_size(r, max_k_of(t)) : fuzz_range(r, 1, 300);
  if ((f & 0x30) == 0x10) k = max_k_of(t) + fuzz_range(r, 0, 3) - 1;
  const int null_size = (f & 0xc0) == 0x40;
  fuzz_describe("%s_pack_size(n %zu, k %zu, %s)", type_name[t], n, k, null_size ? "NULL" : "size");
  unsigned want = 0;
  size_t model = 0;
  if (null_size || n == 0 || k == 0) want |= INV;
  if (k > max_k_of(t)) want |= UNS;
  if (n != 0 && k != 0 && k <= max_k_of(t) && !model_pack_size(t, n, k, &model)) want |= UNS;
  if (want == 0) want = OK;
  struct fuzz_out out;
  fuzz_out_init(&out, r, sizeof(size_t), 0);
  const gemmi8_status st = pack_size(t, n, k, null_size ? NULL : (size_t*) (void*) out.data);
  fuzz_expect_status(st, want, "pack_size");
  if (st != gemmi8_status_success) {
    fuzz_out_check_untouched(&out, "size");
  } else {
    fuzz_out_check_guards(&out, "size");
    size_t got;
    memcpy(&got, out.data, sizeof(got));
    if (got != model) {
      fuzz_fail("pack_size = %zu; header + ceil(n / %zu) blocks makes %zu", got,
                columns_per_block(t), model);
    }
  }
  fuzz_out_free(&out);
}

/* ---- packing -------------------------------------------------------------------- */

/* A weight matrix and everything its packing needs. */
struct weights {
  enum type t;
  size_t n, k;
  int kn;
  size_t stride;   /* b's, elements (words for bin) */
  void* b;         /* exact-size block */
  void* b_block;
  size_t b_bytes;  /* bytes at b */
  int32_t a_zp;
  uint8_t* b_zp;   /* qu8: 1 or n bytes, exact */
  void* b_zp_block;
  int zp_per_channel;
  int32_t* bias;   /* n values or NULL */
  void* bias_block;
};

static size_t w_rows(const struct weights* w) { return w->kn ? w->k : w->n; }
static size_t w_cols(const struct weights* w)
{
  if (w->t == type_bin) return fuzz_words(w->kn ? w->n : w->k);
  return w->kn ? w->n : w->k;
}
static size_t w_elem(const struct weights* w) { return w->t == type_bin ? 8 : 1; }

static void weights_init(struct fuzz_reader* r, struct weights* w, enum type t, size_t n,
                         size_t k)
{
  memset(w, 0, sizeof(*w));
  w->t = t;
  w->n = n;
  w->k = k;
  w->kn = fuzz_u8(r) & 1;
  w->stride = w_cols(w) + fuzz_extra(r, 16);
  w->b_bytes = ((w_rows(w) - 1) * w->stride + w_cols(w)) * w_elem(w);
  w->b = fuzz_exact(r, w->b_bytes, 0, &w->b_block);
  w->a_zp = t == type_qs8 ? (int8_t) fuzz_u8(r) : fuzz_u8(r);
  if (t == type_qu8) {
    w->zp_per_channel = fuzz_u8(r) & 1;
    w->b_zp = fuzz_exact(r, w->zp_per_channel ? n : 1, 0, &w->b_zp_block);
  }
  if (t != type_bin && (fuzz_u8(r) & 1)) {
    w->bias = fuzz_exact(r, n * sizeof(int32_t), 0, &w->bias_block);
  }
}

static void weights_free(struct weights* w)
{
  free(w->b_block);
  free(w->b_zp_block);
  free(w->bias_block);
}

/* Packs with the library (a valid call that must succeed) into an exact-size aligned
 * block; *size receives its size. */
static void* pack_valid(const struct weights* w, size_t* size)
{
  fuzz_describe("a valid %s pack, n %zu k %zu %s stride %zu", type_name[w->t], w->n, w->k,
                w->kn ? "KN" : "NK", w->stride);
  if (pack_size(w->t, w->n, w->k, size) != gemmi8_status_success) fuzz_fail("pack_size failed");
  void* p = fuzz_aligned(*size);
  const uint32_t flags = w->kn ? GEMMI8_B_KN : GEMMI8_B_NK;
  gemmi8_status s;
  switch (w->t) {
    case type_qu8:
      s = gemmi8_qu8_pack(w->n, w->k, w->b, w->stride, flags, (uint8_t) w->a_zp, w->b_zp,
                          w->zp_per_channel, w->bias, p, *size);
      break;
    case type_qs8:
      s = gemmi8_qs8_pack(w->n, w->k, w->b, w->stride, flags, (int8_t) w->a_zp, w->bias, p,
                          *size);
      break;
    case type_qu8s8:
      s = gemmi8_qu8s8_pack(w->n, w->k, w->b, w->stride, flags, (uint8_t) w->a_zp, w->bias, p,
                            *size);
      break;
    default: s = gemmi8_bin_pack(w->n, w->k, w->b, w->stride, flags, p, *size); break;
  }
  fuzz_expect_status(s, OK, "pack (valid)");
  return p;
}

/* The arguments of one pack call, as mutated. */
struct pack_call {
  size_t n, k, stride, packed_size;
  const void* b;
  uint32_t flags;
  const uint8_t* b_zp;
  int zp_per_channel;
  int null_packed;
  size_t misalign;
};

static gemmi8_status call_pack(const struct weights* w, const struct pack_call* c, int alloc,
                               void* packed, void** slot)
{
  switch (w->t) {
    case type_qu8:
      return alloc ? gemmi8_qu8_pack_alloc(c->n, c->k, c->b, c->stride, c->flags,
                                           (uint8_t) w->a_zp, c->b_zp, c->zp_per_channel, w->bias,
                                           slot)
                   : gemmi8_qu8_pack(c->n, c->k, c->b, c->stride, c->flags, (uint8_t) w->a_zp,
                                     c->b_zp, c->zp_per_channel, w->bias, packed,
                                     c->packed_size);
    case type_qs8:
      return alloc ? gemmi8_qs8_pack_alloc(c->n, c->k, c->b, c->stride, c->flags,
                                           (int8_t) w->a_zp, w->bias, slot)
                   : gemmi8_qs8_pack(c->n, c->k, c->b, c->stride, c->flags, (int8_t) w->a_zp,
                                     w->bias, packed, c->packed_size);
    case type_qu8s8:
      return alloc ? gemmi8_qu8s8_pack_alloc(c->n, c->k, c->b, c->stride, c->flags,
                                             (uint8_t) w->a_zp, w->bias, slot)
                   : gemmi8_qu8s8_pack(c->n, c->k, c->b, c->stride, c->flags, (uint8_t) w->a_zp,
                                       w->bias, packed, c->packed_size);
    default:
      return alloc ? gemmi8_bin_pack_alloc(c->n, c->k, c->b, c->stride, c->flags, slot)
                   : gemmi8_bin_pack(c->n, c->k, c->b, c->stride, c->flags, packed,
                                     c->packed_size);
  }
}

static void run_pack(struct fuzz_reader* r, int alloc)
{
  const uint8_t f = fuzz_u8(r);
  const enum type t = (enum type) (f & 3);
  const size_t n0 = fuzz_range(r, 1, 24), k0 = fuzz_range(r, 1, t == type_bin ? 200 : 48);
  struct weights w;
  weights_init(r, &w, t, n0, k0);
  size_t size0;
  void* reference = pack_valid(&w, &size0);

  struct pack_call c = {
      .n = n0,
      .k = k0,
      .stride = w.stride,
      .packed_size = size0 + ((f & 4) ? fuzz_range(r, 1, 200) : 0),
      .b = w.b,
      .flags = w.kn ? GEMMI8_B_KN : GEMMI8_B_NK,
      .b_zp = w.b_zp,
      .zp_per_channel = w.zp_per_channel,
  };
  const size_t have = c.packed_size; /* bytes the buffer really has */
  const int mutations = 1 + ((f & 0x18) == 0x18);
  char what[160] = "";
  for (int i = 0; i < mutations; i++) {
    const uint8_t m = (uint8_t) fuzz_mutation(r, 13, what, sizeof(what));
    switch (m) {
      case 0: c.b = NULL; break;
      case 1: c.null_packed = 1; break;
      case 2: c.n = (fuzz_u8(r) & 1) ? 0 : fuzz_edgy_size(r, n0); break;
      case 3: c.k = (fuzz_u8(r) & 1) ? 0 : fuzz_edgy_size(r, max_k_of(t)); break;
      case 4: /* a shape just past the exact limit, with a stride that fits it */
        c.k = max_k_of(t) + 1 + fuzz_range(r, 0, 2);
        if (!w.kn) c.stride = t == type_bin ? fuzz_words(c.k) : c.k;
        break;
      case 5: { /* rows enough to overflow the extent or the packed size */
        const size_t rows = fuzz_boundary_rows(r, w_cols(&w), c.stride, w_elem(&w), n0);
        if (w.kn) {
          c.k = rows;
        } else {
          c.n = rows;
        }
        break;
      }
      case 6: {
        const size_t rows = w.kn ? c.k : c.n;
        const size_t cols = t == type_bin ? fuzz_words(w.kn ? c.n : c.k) : (w.kn ? c.n : c.k);
        c.stride = fuzz_mutate_stride(r, rows, cols, w_elem(&w));
        break;
      }
      case 7: /* unknown flag bits, or the other layout */
        c.flags = (fuzz_u8(r) & 1) ? c.flags ^ GEMMI8_B_KN : c.flags | (fuzz_u32(r) & ~1u) | 2u;
        break;
      case 8: c.misalign = fuzz_range(r, 1, 63); break;
      case 9: /* too small */
        c.packed_size = (fuzz_u8(r) & 1) ? 0 : size0 - 1 - fuzz_range(r, 0, size0 - 1);
        break;
      case 10: c.b_zp = NULL; break;
      case 11: c.zp_per_channel = (fuzz_u8(r) & 1) ? -1 : 2 + (int) (fuzz_u32(r) % 1000); break;
      default: c.packed_size = fuzz_edgy_size(r, size0); break; /* claims (valid only if it fits) */
    }
  }
  /* A caller cannot own more than the buffer; a claim past it that the contract would
   * accept cannot be run. */
  const int is_q = t != type_bin;
  const size_t rows = (c.flags & GEMMI8_B_KN) ? c.k : c.n;
  const size_t cols_e = (c.flags & GEMMI8_B_KN) ? c.n : c.k;
  const size_t cols = t == type_bin ? fuzz_words(cols_e) : cols_e;
  size_t extent = 0, need = 0;
  unsigned want = 0;
  if (c.b == NULL || c.null_packed) want |= INV;
  if (c.n == 0 || c.k == 0 || (c.flags & ~GEMMI8_B_KN)) want |= INV;
  if (!fuzz_extent(rows, cols, c.stride, w_elem(&w), &extent)) want |= INV;
  if (t == type_qu8 && (c.b_zp == NULL || (c.zp_per_channel != 0 && c.zp_per_channel != 1))) {
    want |= INV;
  }
  if (c.k > max_k_of(t)) want |= UNS;
  const int size_known = c.n != 0 && c.k != 0 && c.k <= max_k_of(t);
  if (size_known && !model_pack_size(t, c.n, c.k, &need)) want |= UNS;
  if (!alloc) {
    if (c.misalign != 0) want |= INV;
    if (size_known && need != 0 && c.packed_size < need) want |= INV;
  }
  if (want == 0) want = OK;
  /* a valid call runs only on buffers that hold what it describes */
  const int runnable = extent <= w.b_bytes && (!is_q || c.n <= n0) &&
                       (alloc || c.packed_size <= have);
  /* the same matrix as the reference packing: its bytes must be the same */
  const int same_matrix = c.n == n0 && c.k == k0 &&
                          c.flags == (w.kn ? GEMMI8_B_KN : GEMMI8_B_NK) &&
                          (c.stride == w.stride || rows == 1);
  fuzz_describe("%s_pack%s n %zu k %zu (packed %zu x %zu) stride %zu flags 0x%x packed_size %zu "
                "(needs %zu, has %zu) misalign %zu b_zp %s per_channel %d: mutations %s",
                type_name[t], alloc ? "_alloc" : "", c.n, c.k, n0, k0, c.stride,
                (unsigned) c.flags, c.packed_size, size0, have, c.misalign,
                c.b_zp ? "set" : "NULL", c.zp_per_channel, what);
  if (want == OK && !runnable) goto done;

  if (alloc) {
    struct fuzz_out slot;
    fuzz_out_init(&slot, r, sizeof(void*), 0);
    void** p = c.null_packed ? NULL : (void**) (void*) slot.data;
    const gemmi8_status st = call_pack(&w, &c, 1, NULL, p);
    fuzz_expect_status(st, want, "pack_alloc");
    fuzz_out_check_guards(&slot, "*packed");
    if (st != gemmi8_status_success) {
      fuzz_out_check_untouched(&slot, "*packed");
    } else {
      void* got;
      memcpy(&got, slot.data, sizeof(got));
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
    const gemmi8_status st = call_pack(&w, &c, 0, c.null_packed ? NULL : out.data, NULL);
    fuzz_expect_status(st, want, "pack");
    fuzz_out_check_guards(&out, "packed");
    if (st != gemmi8_status_success) {
      fuzz_out_check_untouched(&out, "packed");
    } else if (same_matrix && memcmp(out.data, reference, size0) != 0) {
      fuzz_fail("packing with stride %zu into %zu bytes gave other bytes than stride %zu into %zu",
                c.stride, c.packed_size, w.stride, size0);
    }
    fuzz_out_free(&out);
  }
done:
  free(reference);
  weights_free(&w);
}

/* ---- GEMMs ---------------------------------------------------------------------- */

/* How the packed buffer given to a GEMM was spoilt. */
enum spoil { spoil_none, spoil_misaligned, spoil_header, spoil_weights, spoil_foreign };

/* A packed buffer for a GEMM: the valid one, or a spoilt one. */
struct packed_arg {
  void* owned;     /* what to free */
  const void* ptr; /* what the GEMM gets */
  size_t size;
  enum spoil spoil;
  /* foreign: what it was packed for */
  enum type t;
  size_t n, k;
  /* header damage that agrees with the call: 1 the n field, 2 the k field, now
   * saying `agree` (the call is then made with that n or k) */
  int agree_field;
  size_t agree;
};

/* Builds the packed argument of a GEMM on weights w (valid buffer `valid`). */
static void spoil_packed(struct fuzz_reader* r, const struct weights* w, const void* valid,
                         size_t size, struct packed_arg* p, char* what, size_t what_size)
{
  memset(p, 0, sizeof(*p));
  p->t = w->t;
  p->n = w->n;
  p->k = w->k;
  p->size = size;
  p->ptr = valid;
  const uint8_t s = fuzz_u8(r);
  switch (s % 5) {
    case 1: { /* a copy at an offset from the alignment */
      const size_t off = fuzz_range(r, 1, 63);
      uint8_t* q = fuzz_aligned(size + off);
      memcpy(q + off, valid, size);
      p->owned = q;
      p->ptr = q + off;
      p->spoil = spoil_misaligned;
      snprintf(what, what_size, "packed misaligned by %zu", off);
      break;
    }
    case 2:
    case 3: { /* damaged: the buffer itself, or a copy of it */
      uint8_t* q = (uint8_t*) valid;
      if (s & 0x80) {
        q = fuzz_aligned(size);
        memcpy(q, valid, size);
        p->owned = q;
      }
      const int weights = s % 5 == 3;
      if (weights) {
        /* the weights are not checksummed: the GEMM runs and reads only its buffer */
        const size_t flips = fuzz_range(r, 1, 8);
        for (size_t i = 0; i < flips && size > FUZZ_HEADER; i++) {
          const size_t at = FUZZ_HEADER + fuzz_range(r, 0, size - FUZZ_HEADER - 1);
          q[at] ^= (uint8_t) (1 + fuzz_u8(r) % 255);
        }
        snprintf(what, what_size, "packed weights damaged");
        p->spoil = spoil_weights;
      } else {
        const int field = (s & 0x40) ? 1 + (fuzz_u8(r) & 1) : 0;
        const size_t value = field == 1 ? w->n : w->k;
        const int off = field ? fuzz_header_offset_of(q, value) : -1;
        if (off >= 0) {
          /* N or K damaged, and the call will say the damaged value: only a check of
           * the header's integrity can tell (the contract: damaged is invalid) */
          uint8_t x = fuzz_u8(r);
          if (x == 0 || (value & 0xff) == x) x = (uint8_t) ((value & 0xff) == 1 ? 2 : 1);
          q[off] ^= x;
          p->agree_field = field;
          p->agree = value ^ x;
          snprintf(what, what_size, "packed header damaged: byte %d ^= 0x%02x, %s %zu -> %zu "
                   "and the call agrees", off, x, field == 1 ? "n" : "k", value, p->agree);
        } else {
          const int n = snprintf(what, what_size, "packed header damaged:");
          fuzz_damage_header(r, q, what + n, what_size - (size_t) n);
        }
        p->spoil = spoil_header;
      }
      p->ptr = q;
      break;
    }
    case 4: { /* foreign: another type, or the same type for another shape */
      struct weights other;
      const enum type t = (enum type) (fuzz_u8(r) % 4);
      const uint8_t shape = fuzz_u8(r);
      size_t n = (shape & 1) ? fuzz_range(r, 1, 80) : w->n;
      size_t k = (shape & 2) ? fuzz_range(r, 1, 200) : w->k;
      if (t == w->t && n == w->n && k == w->k) k++;
      weights_init(r, &other, t, n, k);
      size_t other_size;
      p->owned = pack_valid(&other, &other_size);
      weights_free(&other);
      p->ptr = p->owned;
      p->size = other_size;
      p->spoil = spoil_foreign;
      p->t = t;
      p->n = n;
      p->k = k;
      snprintf(what, what_size, "packed for %s n %zu k %zu", type_name[t], n, k);
      break;
    }
    default: snprintf(what, what_size, "packed valid"); break;
  }
}

/* 1 when the contract accepts packed p for a GEMM of type t, n, k. */
static int packed_matches(const struct packed_arg* p, enum type t, size_t n, size_t k)
{
  if (p->spoil == spoil_misaligned || p->spoil == spoil_header) return 0;
  return p->t == t && p->n == n && p->k == k;
}

/* How a GEMM is called: the plain entry point, or the _ex one with a parallel
 * argument that is valid (NULL; a shuffled parallel-for claiming 0 to
 * GEMMI8_MAX_THREADS threads) or not (parallel_for NULL; more threads than
 * GEMMI8_MAX_THREADS). */
struct ex_arg {
  int ex, invalid;
  const gemmi8_parallel* par;
  struct fuzz_parallel shuffled;
  char text[64];
};

static void decode_ex(struct fuzz_reader* r, struct ex_arg* e)
{
  static const size_t fine[] = {0, 1, 2, 3, 16, GEMMI8_MAX_THREADS};
  const uint8_t s = fuzz_u8(r);
  memset(e, 0, sizeof(*e));
  snprintf(e->text, sizeof(e->text), "plain");
  if (s % 6 < 2) return;
  e->ex = 1;
  if (s % 6 == 2) {
    snprintf(e->text, sizeof(e->text), "ex(NULL)");
    return;
  }
  fuzz_parallel_init(&e->shuffled, r, fine[fuzz_u8(r) % 6]);
  e->par = &e->shuffled.parallel;
  if (s % 6 == 4) {
    e->shuffled.parallel.parallel_for = NULL;
    e->invalid = 1;
  } else if (s % 6 == 5) {
    const size_t over[] = {GEMMI8_MAX_THREADS + 1, GEMMI8_MAX_THREADS + 2, SIZE_MAX,
                           (size_t) 1 << 32, fuzz_edgy_size(r, GEMMI8_MAX_THREADS)};
    e->shuffled.parallel.threads = over[fuzz_u8(r) % 5];
    e->invalid = e->shuffled.parallel.threads > GEMMI8_MAX_THREADS;
  }
  snprintf(e->text, sizeof(e->text), "ex(for %s, threads %zu)",
           e->shuffled.parallel.parallel_for ? "set" : "NULL", e->shuffled.parallel.threads);
}

struct qgemm_call {
  size_t m, n, k, a_stride, c_stride;
  const void* a;
  int null_packed, null_c, null_rq;
  gemmi8_requant rq;
  int null_multiplier, null_shift, null_scale;
};

/* The requantization rules of the header; count: values the arrays hold. */
static unsigned model_requant(const gemmi8_requant* rq, size_t n, int is_signed)
{
  const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  unsigned want = 0;
  if (rq->zero_point < lo || rq->zero_point > hi || rq->min < lo || rq->max > hi ||
      rq->min > rq->max) {
    want |= INV;
  }
  if (rq->per_channel != 0 && rq->per_channel != 1) return want | INV;
  const size_t count = rq->per_channel ? n : 1;
  if (rq->mode == gemmi8_requant_fixedpoint) {
    if (rq->multiplier == NULL || rq->shift == NULL) return want | INV;
    for (size_t j = 0; j < count; j++) {
      if (rq->multiplier[j] < 0 || rq->shift[j] < -31 || rq->shift[j] > 30) return want | INV;
    }
    return want;
  }
  if (rq->mode == gemmi8_requant_fp32) {
    if (rq->scale == NULL) return want | INV;
    for (size_t j = 0; j < count; j++) {
      if (!scale_ok(rq->scale[j])) return want | INV;
    }
    return want;
  }
  return want | INV;
}

static void run_qgemm(struct fuzz_reader* r, int requant)
{
  const uint8_t f = fuzz_u8(r);
  const enum type t = (f & 1) ? type_qs8 : ((f & 8) ? type_qu8s8 : type_qu8);
  const int is_signed = t == type_qs8; /* A and C int8 */
  const size_t m0 = fuzz_range(r, 1, 12), n0 = fuzz_range(r, 1, 24), k0 = fuzz_range(r, 1, 48);
  struct weights w;
  weights_init(r, &w, t, n0, k0);
  size_t size0;
  void* valid = pack_valid(&w, &size0);
  const size_t c_elem = requant ? 1 : 4;

  struct qgemm_call c = {.m = m0, .n = n0, .k = k0};
  c.a_stride = k0 + fuzz_extra(r, 16);
  c.c_stride = n0 + fuzz_extra(r, 16);
  const size_t a_have = (m0 - 1) * c.a_stride + k0;
  const size_t c_have = ((m0 - 1) * c.c_stride + n0) * c_elem;
  void* a_block = NULL;
  c.a = fuzz_exact(r, a_have, fuzz_range(r, 0, 7), &a_block);
  const int mode = fuzz_u8(r) & 1;
  c.rq.mode = mode ? gemmi8_requant_fp32 : gemmi8_requant_fixedpoint;
  c.rq.per_channel = fuzz_u8(r) & 1;
  const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  c.rq.zero_point = fuzz_range_s32(r, lo, hi);
  c.rq.min = fuzz_range_s32(r, lo, hi);
  c.rq.max = fuzz_range_s32(r, c.rq.min, hi);

  struct packed_arg p;
  char spoil_text[256];
  spoil_packed(r, &w, valid, size0, &p, spoil_text, sizeof(spoil_text));

  /* argument mutations */
  const int mutations = (f & 6) == 0 ? 0 : 1 + ((f & 6) == 6);
  char what[96] = "";
  int bad_channel_kind = -1; /* value mutations applied once the arrays exist */
  size_t bad_channel = 0;
  for (int i = 0; i < mutations; i++) {
    const uint8_t m = (uint8_t) fuzz_mutation(r, (requant ? 16 : 9), what, sizeof(what));
    switch (m) {
      case 0: c.a = NULL; break;
      case 1: c.null_packed = 1; break;
      case 2: c.null_c = 1; break;
      case 3:
        c.m = (fuzz_u8(r) & 1) ? fuzz_boundary_rows(r, c.k, c.a_stride, 1, m0)
                               : fuzz_boundary_rows(r, c.n, c.c_stride, c_elem, m0);
        break;
      case 4: c.n = (fuzz_u8(r) & 1) ? fuzz_edgy_size(r, n0) : n0 + fuzz_range(r, 0, 4) - 2; break;
      case 5:
        c.k = (fuzz_u8(r) & 1) ? fuzz_edgy_size(r, max_k_of(t)) : k0 + fuzz_range(r, 0, 4) - 2;
        break;
      case 6: c.a_stride = fuzz_mutate_stride(r, c.m, c.k, 1); break;
      case 7: c.c_stride = fuzz_mutate_stride(r, c.m, c.n, c_elem); break;
      case 8: /* one row: any stride is valid */
        c.m = 1;
        if (fuzz_u8(r) & 1) {
          c.a_stride = fuzz_edgy_size(r, c.k);
        } else {
          c.c_stride = fuzz_edgy_size(r, c.n);
        }
        break;
      case 9: c.null_rq = 1; break;
      case 10: { /* an unknown mode */
        const int32_t modes[] = {2, 3, -1, INT32_MAX, INT32_MIN, (int32_t) fuzz_u32(r)};
        int32_t v = modes[fuzz_u8(r) % 6];
        if (v == 0 || v == 1) v = 7;
        memcpy(&c.rq.mode, &v, sizeof(v));
        break;
      }
      case 11: c.rq.per_channel = (fuzz_u8(r) & 1) ? -1 : 2 + (int) (fuzz_u16(r)); break;
      case 12: { /* zero point or clamp outside the type, or min > max */
        const int32_t outside[] = {lo - 1, hi + 1, INT32_MIN, INT32_MAX, lo - 256, hi + 256};
        const int32_t v = outside[fuzz_u8(r) % 6];
        switch (fuzz_u8(r) % 4) {
          case 0: c.rq.zero_point = v; break;
          case 1: c.rq.min = v; break;
          case 2: c.rq.max = v; break;
          default: /* both inside, min > max */
            c.rq.min = fuzz_range_s32(r, lo + 1, hi);
            c.rq.max = fuzz_range_s32(r, lo, c.rq.min - 1);
            break;
        }
        break;
      }
      case 13: /* a bad multiplier, shift or scale at some channel */
        bad_channel_kind = fuzz_u8(r) % 3;
        bad_channel = fuzz_range(r, 0, n0 + 1);
        break;
      case 14: /* a null array: the mode's own (invalid) or the other mode's (ignored) */
        switch (fuzz_u8(r) % 3) {
          case 0: c.null_multiplier = 1; break;
          case 1: c.null_shift = 1; break;
          default: c.null_scale = 1; break;
        }
        break;
      default: /* garbage in the arrays the mode ignores */
        bad_channel_kind = mode ? 3 : 4;
        break;
    }
  }
  if (p.agree_field == 1) c.n = p.agree;
  if (p.agree_field == 2) c.k = p.agree;
  /* per-channel arrays: exactly the values the (mutated) call says they hold */
  const int per_channel = c.rq.per_channel == 1;
  if (per_channel && c.n > n0 + 64) c.rq.per_channel = 0; /* no such array */
  const size_t count = c.rq.per_channel == 1 ? (c.n > 0 ? c.n : 1) : 1;
  void *mb = NULL, *sb = NULL, *fb = NULL;
  int32_t* multiplier = fuzz_exact(r, count * 4, 0, &mb);
  int32_t* shift = fuzz_exact(r, count * 4, 0, &sb);
  float* scale = fuzz_exact(r, count * 4, 0, &fb);
  for (size_t j = 0; j < count; j++) {
    multiplier[j] = (int32_t) fuzz_range(r, 0, INT32_MAX);
    shift[j] = fuzz_range_s32(r, -31, 30);
    scale[j] = fuzz_f32_positive(r);
  }
  if (bad_channel_kind >= 0) {
    const size_t j = bad_channel < count ? bad_channel : count - 1;
    switch (bad_channel_kind) {
      case 0: multiplier[j] = INT32_MIN + (int32_t) fuzz_range(r, 0, INT32_MAX); break;
      case 1: {
        const int32_t by = (int32_t) fuzz_range(r, 0, 1000);
        shift[j] = (fuzz_u8(r) & 1) ? 31 + by : -32 - by;
        if (fuzz_u8(r) % 4 == 0) shift[j] = (fuzz_u8(r) & 1) ? INT32_MIN : INT32_MAX;
        break;
      }
      case 2: scale[j] = bad_scale(r); break;
      case 3: /* fp32 mode: the fixed-point arrays are ignored */
        multiplier[j] = INT32_MIN;
        shift[j] = INT32_MAX;
        break;
      default: scale[j] = NAN; break; /* fixed-point mode ignores scales */
    }
  }
  c.rq.multiplier = c.null_multiplier ? NULL : multiplier;
  c.rq.shift = c.null_shift ? NULL : shift;
  c.rq.scale = c.null_scale ? NULL : scale;

  struct ex_arg call;
  decode_ex(r, &call);

  /* the contract */
  const size_t max_k = max_k_of(t);
  unsigned want = 0;
  size_t bytes;
  if (c.a == NULL || c.null_packed || c.null_c || (requant && c.null_rq) || call.invalid) {
    want |= INV;
  }
  if (!fuzz_extent(c.m, c.k, c.a_stride, 1, &bytes) ||
      !fuzz_extent(c.m, c.n, c.c_stride, c_elem, &bytes)) {
    want |= INV;
  }
  if (c.k > max_k) want |= UNS;
  if (!c.null_packed && !packed_matches(&p, t, c.n, c.k)) want |= INV;
  if (requant && !c.null_rq) want |= model_requant(&c.rq, c.n, is_signed);
  if (want == 0) want = OK;
  const int runnable = c.a != NULL && backed(c.m, c.k, c.a_stride, 1, a_have) &&
                       backed(c.m, c.n, c.c_stride, c_elem, c_have) && p.spoil != spoil_foreign;

  fuzz_describe("%s_gemm%s M %zu N %zu K %zu (packed %zu x %zu, M %zu) a_stride %zu c_stride %zu "
                "null a %d packed %d c %d rq %d mode %d per_channel %d zp %d [%d, %d] bad "
                "channel %d/%zu null arrays %d%d%d; %s; %s; mutations %s",
                type_name[t], requant ? "" : "_s32", c.m, c.n, c.k, n0, k0, m0, c.a_stride,
                c.c_stride, c.a == NULL, c.null_packed, c.null_c, c.null_rq, (int) c.rq.mode,
                c.rq.per_channel, (int) c.rq.zero_point, (int) c.rq.min, (int) c.rq.max,
                bad_channel_kind, bad_channel, c.null_multiplier, c.null_shift, c.null_scale,
                spoil_text, call.text, what);

  if (want != OK || runnable) {
    struct fuzz_out out;
    fuzz_out_init(&out, r, c_have, fuzz_range(r, 0, 15) * c_elem);
    uint8_t* packed_copy = malloc(p.size);
    if (packed_copy == NULL) fuzz_fail("out of memory");
    memcpy(packed_copy, p.ptr, p.size);
    void* cp = c.null_c ? NULL : out.data;
    const void* pp = c.null_packed ? NULL : p.ptr;
    const gemmi8_requant* rq = c.null_rq ? NULL : &c.rq;
    gemmi8_status st;
    const size_t ms = c.m, ns = c.n, ks = c.k, as = c.a_stride, cs = c.c_stride;
    const gemmi8_parallel* par = call.par;
    switch (t * 4 + requant * 2 + call.ex) {
      case type_qu8 * 4 + 0: st = gemmi8_qu8_gemm_s32(ms, ns, ks, c.a, as, pp, cp, cs); break;
      case type_qu8 * 4 + 1:
        st = gemmi8_qu8_gemm_s32_ex(ms, ns, ks, c.a, as, pp, cp, cs, par);
        break;
      case type_qu8 * 4 + 2: st = gemmi8_qu8_gemm(ms, ns, ks, c.a, as, pp, rq, cp, cs); break;
      case type_qu8 * 4 + 3:
        st = gemmi8_qu8_gemm_ex(ms, ns, ks, c.a, as, pp, rq, cp, cs, par);
        break;
      case type_qs8 * 4 + 0: st = gemmi8_qs8_gemm_s32(ms, ns, ks, c.a, as, pp, cp, cs); break;
      case type_qs8 * 4 + 1:
        st = gemmi8_qs8_gemm_s32_ex(ms, ns, ks, c.a, as, pp, cp, cs, par);
        break;
      case type_qs8 * 4 + 2: st = gemmi8_qs8_gemm(ms, ns, ks, c.a, as, pp, rq, cp, cs); break;
      case type_qs8 * 4 + 3:
        st = gemmi8_qs8_gemm_ex(ms, ns, ks, c.a, as, pp, rq, cp, cs, par);
        break;
      case type_qu8s8 * 4 + 0: st = gemmi8_qu8s8_gemm_s32(ms, ns, ks, c.a, as, pp, cp, cs); break;
      case type_qu8s8 * 4 + 1:
        st = gemmi8_qu8s8_gemm_s32_ex(ms, ns, ks, c.a, as, pp, cp, cs, par);
        break;
      case type_qu8s8 * 4 + 2: st = gemmi8_qu8s8_gemm(ms, ns, ks, c.a, as, pp, rq, cp, cs); break;
      default: st = gemmi8_qu8s8_gemm_ex(ms, ns, ks, c.a, as, pp, rq, cp, cs, par); break;
    }
    /* weight damage may or may not change what a kernel computes, never the status */
    fuzz_expect_status(st, want, requant ? "gemm" : "gemm_s32");
    fuzz_out_check_guards(&out, "C");
    if (memcmp(packed_copy, p.ptr, p.size) != 0) fuzz_fail("the GEMM wrote its packed weights");
    free(packed_copy);
    if (st != gemmi8_status_success) {
      fuzz_out_check_untouched(&out, "C");
    } else {
      fuzz_out_check_gaps(&out, c.m, c.n * c_elem, c.c_stride * c_elem, "C between rows");
      if (p.spoil != spoil_weights) {
        /* a valid call on real buffers: the reference on the mutated arguments */
        int32_t* b_zp = malloc(c.n * sizeof(int32_t));
        int32_t* acc = malloc(c.m * c.n * sizeof(int32_t));
        if (b_zp == NULL || acc == NULL) fuzz_fail("out of memory");
        for (size_t j = 0; j < c.n; j++) b_zp[j] = w.b_zp ? w.b_zp[w.zp_per_channel ? j : 0] : 0;
        ref_q8_acc_mixed(is_signed, t != type_qu8, c.m, c.n, c.k, c.a, c.a_stride, w.a_zp, w.b,
                         w.stride, w.kn, b_zp, w.bias, acc);
        for (size_t i = 0; i < c.m; i++) {
          for (size_t j = 0; j < c.n; j++) {
            const size_t ch = c.rq.per_channel ? j : 0;
            const uint8_t* e = out.data + (i * c.c_stride + j) * c_elem;
            int32_t got, expected = acc[i * c.n + j];
            if (!requant) {
              memcpy(&got, e, 4);
            } else {
              got = is_signed ? (int8_t) *e : *e;
              expected = c.rq.mode == gemmi8_requant_fp32
                             ? ref_output_fp32(expected, scale[ch], c.rq.zero_point, c.rq.min,
                                               c.rq.max)
                             : ref_output_fixedpoint(expected, multiplier[ch], shift[ch],
                                                     c.rq.zero_point, c.rq.min, c.rq.max);
            }
            if (got != expected) {
              fuzz_fail("C[%zu][%zu] = %d, expected %d", i, j, (int) got, (int) expected);
            }
          }
        }
        free(b_zp);
        free(acc);
      }
    }
    fuzz_out_free(&out);
  }
  free(mb);
  free(sb);
  free(fb);
  free(p.owned);
  free(valid);
  free(a_block);
  weights_free(&w);
}

enum bin_output { bout_s32, bout_f32, bout_bits };

static void run_bgemm(struct fuzz_reader* r)
{
  const uint8_t f = fuzz_u8(r);
  const enum bin_output out_kind = (enum bin_output) ((f & 3) % 3);
  const size_t m0 = fuzz_range(r, 1, 12), n0 = fuzz_range(r, 1, 70), k0 = fuzz_range(r, 1, 200);
  struct weights w;
  weights_init(r, &w, type_bin, n0, k0);
  size_t size0;
  void* valid = pack_valid(&w, &size0);
  const size_t c_elem = out_kind == bout_bits ? 8 : 4;
  size_t m = m0, n = n0, k = k0;
  size_t a_stride = fuzz_words(k0) + fuzz_extra(r, 8);
  const size_t c_row0 = out_kind == bout_bits ? fuzz_words(n0) : n0;
  size_t c_stride = c_row0 + fuzz_extra(r, 8);
  const size_t a_have = ((m0 - 1) * a_stride + fuzz_words(k0)) * 8;
  const size_t c_have = ((m0 - 1) * c_stride + c_row0) * c_elem;
  void* a_block = NULL;
  const uint64_t* a = fuzz_exact(r, a_have, 0, &a_block);
  int null_a = 0, null_packed = 0, null_c = 0, null_scale = (f & 4) != 0, null_bias = (f & 8) != 0;

  struct packed_arg p;
  char spoil_text[256];
  spoil_packed(r, &w, valid, size0, &p, spoil_text, sizeof(spoil_text));
  const int mutations = (f & 0x30) == 0 ? 0 : 1 + ((f & 0x30) == 0x30);
  char what[64] = "";
  for (int i = 0; i < mutations; i++) {
    const uint8_t mu = (uint8_t) fuzz_mutation(r, 9, what, sizeof(what));
    const size_t c_row = out_kind == bout_bits ? fuzz_words(n) : n;
    switch (mu) {
      case 0: null_a = 1; break;
      case 1: null_packed = 1; break;
      case 2: null_c = 1; break;
      case 3:
        m = (fuzz_u8(r) & 1) ? fuzz_boundary_rows(r, fuzz_words(k), a_stride, 8, m0)
                             : fuzz_boundary_rows(r, c_row, c_stride, c_elem, m0);
        break;
      case 4: n = (fuzz_u8(r) & 1) ? fuzz_edgy_size(r, n0) : n0 + fuzz_range(r, 0, 4) - 2; break;
      case 5:
        k = (fuzz_u8(r) & 1) ? fuzz_edgy_size(r, GEMMI8_BIN_MAX_K) : k0 + fuzz_range(r, 0, 4) - 2;
        break;
      case 6: a_stride = fuzz_mutate_stride(r, m, fuzz_words(k), 8); break;
      case 7: c_stride = fuzz_mutate_stride(r, m, c_row, c_elem); break;
      default:
        m = 1;
        if (fuzz_u8(r) & 1) {
          a_stride = fuzz_edgy_size(r, fuzz_words(k));
        } else {
          c_stride = fuzz_edgy_size(r, c_row);
        }
        break;
    }
  }
  /* scale and bias hold n values, or are NULL */
  if (n == 0 || n > n0 + 64) null_scale = null_bias = 1;
  void *sb = NULL, *bb = NULL;
  const float* scale = NULL;
  const float* bias = NULL;
  if (out_kind != bout_s32 && !null_scale) {
    float* s = fuzz_exact(r, n * 4, 0, &sb);
    for (size_t j = 0; j < n; j++) s[j] = fuzz_f32_special_any(r);
    scale = s;
  }
  if (out_kind != bout_s32 && !null_bias) {
    float* b = fuzz_exact(r, n * 4, 0, &bb);
    for (size_t j = 0; j < n; j++) b[j] = fuzz_f32_special_any(r);
    bias = b;
  }

  if (p.agree_field == 1) n = p.agree;
  if (p.agree_field == 2) k = p.agree;
  if (p.agree_field == 1) scale = bias = NULL; /* (arrays of the old n values) */
  struct ex_arg call;
  decode_ex(r, &call);
  const size_t c_row = out_kind == bout_bits ? fuzz_words(n) : n;
  unsigned want = 0;
  size_t bytes;
  if (null_a || null_packed || null_c || call.invalid) want |= INV;
  if (n == 0 || !fuzz_extent(m, fuzz_words(k), a_stride, 8, &bytes) ||
      !fuzz_extent(m, c_row, c_stride, c_elem, &bytes)) {
    want |= INV;
  }
  if (k > GEMMI8_BIN_MAX_K) want |= UNS;
  if (!null_packed && !packed_matches(&p, type_bin, n, k)) want |= INV;
  if (want == 0) want = OK;
  const int runnable = !null_a && backed(m, fuzz_words(k), a_stride, 8, a_have) &&
                       backed(m, c_row, c_stride, c_elem, c_have) && p.spoil != spoil_foreign;
  static const char* const out_name[] = {"s32", "f32", "bits"};
  fuzz_describe("bin_gemm_%s M %zu N %zu K %zu (packed %zu x %zu, M %zu) a_stride %zu "
                "c_stride %zu null a %d packed %d c %d scale %d bias %d; %s; %s; mutations %s",
                out_name[out_kind], m, n, k, n0, k0, m0, a_stride, c_stride, null_a, null_packed,
                null_c, scale == NULL, bias == NULL, spoil_text, call.text, what);

  if (want != OK || runnable) {
    struct fuzz_out out;
    fuzz_out_init(&out, r, c_have, 0);
    uint8_t* packed_copy = malloc(p.size);
    if (packed_copy == NULL) fuzz_fail("out of memory");
    memcpy(packed_copy, p.ptr, p.size);
    const uint64_t* ap = null_a ? NULL : a;
    const void* pp = null_packed ? NULL : p.ptr;
    gemmi8_status st;
    int32_t* c32 = null_c ? NULL : (int32_t*) (void*) out.data;
    float* cf = null_c ? NULL : (float*) (void*) out.data;
    uint64_t* cb = null_c ? NULL : (uint64_t*) (void*) out.data;
    const gemmi8_parallel* par = call.par;
    switch (out_kind * 2 + call.ex) {
      case bout_s32 * 2: st = gemmi8_bin_gemm_s32(m, n, k, ap, a_stride, pp, c32, c_stride); break;
      case bout_s32 * 2 + 1:
        st = gemmi8_bin_gemm_s32_ex(m, n, k, ap, a_stride, pp, c32, c_stride, par);
        break;
      case bout_f32 * 2:
        st = gemmi8_bin_gemm_f32(m, n, k, ap, a_stride, pp, scale, bias, cf, c_stride);
        break;
      case bout_f32 * 2 + 1:
        st = gemmi8_bin_gemm_f32_ex(m, n, k, ap, a_stride, pp, scale, bias, cf, c_stride, par);
        break;
      case bout_bits * 2:
        st = gemmi8_bin_gemm_bits(m, n, k, ap, a_stride, pp, scale, bias, cb, c_stride);
        break;
      default:
        st = gemmi8_bin_gemm_bits_ex(m, n, k, ap, a_stride, pp, scale, bias, cb, c_stride, par);
        break;
    }
    fuzz_expect_status(st, want, "bin gemm");
    fuzz_out_check_guards(&out, "C");
    if (memcmp(packed_copy, p.ptr, p.size) != 0) fuzz_fail("the GEMM wrote its packed weights");
    free(packed_copy);
    if (st != gemmi8_status_success) {
      fuzz_out_check_untouched(&out, "C");
    } else {
      fuzz_out_check_gaps(&out, m, c_row * c_elem, c_stride * c_elem, "C between rows");
      if (p.spoil != spoil_weights) {
        int32_t* acc = malloc(m * n * sizeof(int32_t));
        if (acc == NULL) fuzz_fail("out of memory");
        ref_bin_acc(m, n, k, a, a_stride, w.b, w.stride, w.kn, acc);
        for (size_t i = 0; i < m; i++) {
          const uint8_t* row = out.data + i * c_stride * c_elem;
          for (size_t j = 0; j < n; j++) {
            const int32_t x = acc[i * n + j];
            if (out_kind == bout_s32) {
              int32_t got;
              memcpy(&got, row + j * 4, 4);
              if (got != x) fuzz_fail("C[%zu][%zu] = %d, expected %d", i, j, (int) got, (int) x);
            } else if (out_kind == bout_f32) {
              float got;
              memcpy(&got, row + j * 4, 4);
              const float e = ref_bin_f32(x, scale, bias, j);
              if (isnan(e) ? !isnan(got) : memcmp(&got, &e, 4) != 0) {
                fuzz_fail("C[%zu][%zu] = %a, expected %a", i, j, (double) got, (double) e);
              }
            } else {
              uint64_t word;
              memcpy(&word, row + (j / 64) * 8, 8);
              const int bit = (int) ((word >> (j % 64)) & 1);
              if (bit != (ref_bin_f32(x, scale, bias, j) < 0.0f)) {
                fuzz_fail("C[%zu] bit %zu = %d, wrong sign", i, j, bit);
              }
            }
          }
          if (out_kind == bout_bits && n % 64 != 0) {
            uint64_t word;
            memcpy(&word, row + (n / 64) * 8, 8);
            if (word >> (n % 64)) fuzz_fail("C row %zu: padding bits set", i);
          }
        }
        free(acc);
      }
    }
    fuzz_out_free(&out);
  }
  free(sb);
  free(bb);
  free(p.owned);
  free(valid);
  free(a_block);
  weights_free(&w);
}

/* ---- bit packing ---------------------------------------------------------------- */

static void run_bitpack(struct fuzz_reader* r)
{
  const uint8_t f = fuzz_u8(r);
  const int el = (f & 3) % 3; /* f32, s8, u8 */
  const size_t elem = el == 0 ? 4 : 1;
  const size_t rows0 = fuzz_range(r, 1, 8), k0 = fuzz_range(r, 1, 200);
  size_t rows = rows0, k = k0;
  size_t x_stride = k0 + fuzz_extra(r, 16);
  size_t out_stride = fuzz_words(k0) + fuzz_extra(r, 4);
  const size_t x_have = ((rows0 - 1) * x_stride + k0) * elem;
  const size_t out_have = ((rows0 - 1) * out_stride + fuzz_words(k0)) * 8;
  void* x_block = NULL;
  const void* x = fuzz_exact(r, x_have, 0, &x_block);
  int null_x = 0, null_out = 0;
  const uint8_t zero_point = fuzz_u8(r);
  const int mutations = (f & 0x0c) == 0 ? 0 : 1 + ((f & 0x0c) == 0x0c);
  char what[64] = "";
  for (int i = 0; i < mutations; i++) {
    const uint8_t mu = (uint8_t) fuzz_mutation(r, 8, what, sizeof(what));
    switch (mu) {
      case 0: null_x = 1; break;
      case 1: null_out = 1; break;
      case 2:
        rows = (fuzz_u8(r) & 1) ? fuzz_boundary_rows(r, k, x_stride, elem, rows0)
                                : fuzz_boundary_rows(r, fuzz_words(k), out_stride, 8, rows0);
        break;
      case 3: k = fuzz_edgy_size(r, k0); break;
      case 4: x_stride = fuzz_mutate_stride(r, rows, k, elem); break;
      case 5: out_stride = fuzz_mutate_stride(r, rows, fuzz_words(k), 8); break;
      case 6: /* a row as long as the extent allows */
        k = (fuzz_u8(r) & 1) ? (size_t) PTRDIFF_MAX / elem + fuzz_range(r, 0, 2) - 1
                             : SIZE_MAX - fuzz_range(r, 0, 63);
        x_stride = k;
        out_stride = fuzz_words(k);
        break;
      default:
        rows = 1;
        if (fuzz_u8(r) & 1) {
          x_stride = fuzz_edgy_size(r, k);
        } else {
          out_stride = fuzz_edgy_size(r, fuzz_words(k));
        }
        break;
    }
  }
  unsigned want = 0;
  size_t bytes;
  if (null_x || null_out || !fuzz_extent(rows, k, x_stride, elem, &bytes) ||
      !fuzz_extent(rows, fuzz_words(k), out_stride, 8, &bytes)) {
    want |= INV;
  }
  if (want == 0) want = OK;
  const int runnable = backed(rows, k, x_stride, elem, x_have) &&
                       backed(rows, fuzz_words(k), out_stride, 8, out_have);
  static const char* const el_name[] = {"f32", "s8", "u8"};
  fuzz_describe("bin_pack_rows_%s rows %zu k %zu (%zu x %zu) x_stride %zu out_stride %zu null x %d "
                "out %d; mutations %s",
                el_name[el], rows, k, rows0, k0, x_stride, out_stride, null_x, null_out, what);
  if (want != OK || runnable) {
    struct fuzz_out out;
    fuzz_out_init(&out, r, out_have, 0);
    const void* xp = null_x ? NULL : x;
    uint64_t* op = null_out ? NULL : (uint64_t*) (void*) out.data;
    gemmi8_status st;
    if (el == 0) {
      st = gemmi8_bin_pack_rows_f32(rows, k, xp, x_stride, op, out_stride);
    } else if (el == 1) {
      st = gemmi8_bin_pack_rows_s8(rows, k, xp, x_stride, op, out_stride);
    } else {
      st = gemmi8_bin_pack_rows_u8(rows, k, xp, x_stride, zero_point, op, out_stride);
    }
    fuzz_expect_status(st, want, "bin_pack_rows");
    fuzz_out_check_guards(&out, "out");
    if (st != gemmi8_status_success) {
      fuzz_out_check_untouched(&out, "out");
    } else {
      const size_t words = fuzz_words(k);
      fuzz_out_check_gaps(&out, rows, words * 8, out_stride * 8, "out between rows");
      uint64_t* expected = calloc(words, 8);
      if (expected == NULL) fuzz_fail("out of memory");
      for (size_t i = 0; i < rows; i++) {
        if (el == 0) {
          ref_bin_pack_f32(1, k, (const float*) x + i * x_stride, k, expected, words);
        } else if (el == 1) {
          ref_bin_pack_s8(1, k, (const int8_t*) x + i * x_stride, k, expected, words);
        } else {
          ref_bin_pack_u8(1, k, (const uint8_t*) x + i * x_stride, k, zero_point, expected, words);
        }
        if (memcmp(out.data + i * out_stride * 8, expected, words * 8) != 0) {
          fuzz_fail("row %zu differs from the reference", i);
        }
      }
      free(expected);
    }
    fuzz_out_free(&out);
  }
  free(x_block);
}

/* ---- names ---------------------------------------------------------------------- */

static void run_names(struct fuzz_reader* r)
{
  const int32_t v = fuzz_s32_edgy(r);
  fuzz_describe("gemmi8_status_string(%d), gemmi8_isa_available", (int) v);
  const char* name = gemmi8_status_string((gemmi8_status) v);
  if (name == NULL) fuzz_fail("gemmi8_status_string(%d) is NULL", (int) v);
  /* (values well past the enumeration: a status added later is not "unknown") */
  if ((v < 0 || v >= 64) && strcmp(name, "unknown status") != 0) {
    fuzz_fail("gemmi8_status_string(%d) = \"%s\", expected \"unknown status\"", (int) v, name);
  }
  /* a name from the input, or a level's name bent by one byte */
  char text[24];
  const size_t len = fuzz_range(r, 0, sizeof(text) - 1);
  for (size_t i = 0; i < len; i++) text[i] = (char) fuzz_u8(r);
  text[len] = '\0';
  const char* const* levels = gemmi8_isa_compiled();
  if (levels == NULL || levels[0] == NULL || strcmp(levels[0], "generic") != 0) {
    fuzz_fail("gemmi8_isa_compiled() does not start with \"generic\"");
  }
  size_t count = 0;
  while (levels[count] != NULL) count++;
  const uint8_t how = fuzz_u8(r);
  if (how & 1) {
    snprintf(text, sizeof(text), "%s", levels[fuzz_range(r, 0, count - 1)]);
    const size_t l = strlen(text);
    if (how & 2) text[fuzz_range(r, 0, l - 1)] ^= (char) (1 + fuzz_u8(r) % 127);
    if (how & 4) text[l - 1] = '\0';
  }
  int known = 0;
  for (size_t i = 0; i < count; i++) known |= strcmp(levels[i], text) == 0;
  fuzz_describe("gemmi8_isa_available(\"%s\")", text);
  const gemmi8_status st = gemmi8_isa_available((how & 8) ? NULL : text);
  fuzz_expect_status(st,
                     (how & 8) || !known ? INV
                                         : OK | FUZZ_BIT(gemmi8_status_unsupported_hardware),
                     "isa_available");
  if (gemmi8_isa_available(gemmi8_isa_name()) != gemmi8_status_success) {
    fuzz_fail("the level in use, %s, is not available", gemmi8_isa_name());
  }

  /* thread pools: bad arguments leave *pool alone; one thread creates no thread */
  const size_t threads = (how & 16) ? fuzz_edgy_size(r, GEMMI8_MAX_THREADS) : 1;
  const int null_pool = (how & 32) != 0;
  /* options: the defaults, a spin out of range or a reserved word set */
  gemmi8_threadpool_options options;
  gemmi8_threadpool_options_init(&options);
  const int bad_options = (how & 64) != 0;
  if (bad_options) {
    if (how & 128) {
      options.spin_us = GEMMI8_THREADPOOL_SPIN_US_MAX + 1 + (uint32_t) fuzz_range(r, 0, 1000);
    } else {
      options.reserved[fuzz_range(r, 0, 6)] = 1;
    }
  }
  fuzz_describe("gemmi8_threadpool_create(%zu, %s options, %s)", threads,
                bad_options ? "bad" : "default", null_pool ? "NULL" : "&pool");
  if (threads != 1 || null_pool || bad_options) {
    struct fuzz_out slot;
    fuzz_out_init(&slot, r, sizeof(void*), 0);
    if (threads > GEMMI8_MAX_THREADS || null_pool || bad_options) {
      const gemmi8_status ts = gemmi8_threadpool_create(
          threads, &options, null_pool ? NULL : (gemmi8_threadpool**) (void*) slot.data);
      fuzz_expect_status(ts, INV, "threadpool_create");
      fuzz_out_check_untouched(&slot, "*pool");
    }
    fuzz_out_free(&slot);
  } else {
    gemmi8_threadpool* pool = NULL;
    fuzz_expect_status(gemmi8_threadpool_create(1, &options, &pool), OK, "threadpool_create");
    gemmi8_parallel par;
    fuzz_expect_status(gemmi8_threadpool_parallel(pool, &par), OK, "threadpool_parallel");
    if (gemmi8_threadpool_threads(pool) != 1 || par.threads != 1) {
      fuzz_fail("a pool of 1 thread says %zu (parallel: %zu)", gemmi8_threadpool_threads(pool),
                par.threads);
    }
    gemmi8_threadpool_destroy(pool);
  }
  if (gemmi8_threadpool_threads(NULL) != 0) fuzz_fail("gemmi8_threadpool_threads(NULL) != 0");
  gemmi8_threadpool_destroy(NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  struct fuzz_reader r;
  fuzz_reader_init(&r, data, size);
  switch (fuzz_u8(&r) % 12) {
    case 0: run_quantize(&r); break;
    case 1: run_quantize_array(&r); break;
    case 2: run_pack_size(&r); break;
    case 3: run_pack(&r, 0); break;
    case 4: run_pack(&r, 1); break;
    case 5:
    case 6: run_qgemm(&r, 1); break;
    case 7: run_qgemm(&r, 0); break;
    case 8:
    case 9: run_bgemm(&r); break;
    case 10: run_bitpack(&r); break;
    default: run_names(&r); break;
  }
  return 0;
}
