/*
 * qu8 / qs8 / qu8s8 GEMMs against the independent reference (test/ref.c).
 *
 * One input is one GEMM: type (qu8, qs8, qu8s8), B layout (NK, KN), M, N, K (small; or
 * K at and just below the type's exact limit (GEMMI8_*_MAX_K) with M, N tiny; or M past the
 * 1024 rows whose sums live on the stack), strides with extra elements, pointer
 * offsets, zero points over their whole ranges (per-tensor or per-channel for qu8),
 * biases up to INT32_MIN / INT32_MAX, and the output: int32, fixed-point (multipliers
 * and shifts over their whole ranges, or from a scale as TFLite's QuantizeMultiplier)
 * or fp32 (scales tiny, denormal, huge or ordinary), any zero point and clamp window.
 * Matrix contents come from the generator, as random bytes or extreme patterns.
 *
 * A, B and the per-channel arrays are exact-size blocks (AddressSanitizer reports any
 * read past them); the packed buffer is exactly gemmi8_*_pack_size bytes, or larger,
 * or from the allocating packer, or a copy made after the original was freed. C is
 * compared element by element; the bytes between its rows and guards around it must
 * keep their canary; the packed buffer must not change.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ref.h"

enum type { type_qu8, type_qs8, type_qu8s8 };
static const char* const type_name[] = {"qu8", "qs8", "qu8s8"};

enum output { out_s32, out_fixedpoint, out_fp32 };
static const char* const output_name[] = {"s32", "fixedpoint", "fp32"};

/* How the packed weights reach the GEMM. */
enum pack_how { pack_exact, pack_larger, pack_alloc, pack_copy };
static const char* const pack_name[] = {"exact", "larger", "alloc", "copy"};

/* How the GEMM runs: the plain entry point, or the _ex one with no parallel-for, a
 * shuffled one on the calling thread, or gemmi8's pool of 2 threads. */
enum run_how { run_plain, run_ex_null, run_shuffled, run_pool };
static const char* const run_name[] = {"plain", "ex(NULL)", "ex(shuffled)", "ex(pool)"};

/* How a matrix is filled. */
enum fill { fill_random, fill_low, fill_high, fill_two, fill_const };

struct qcase {
  enum type type;
  int a_signed, b_signed; /* also: C is int8 when A is */
  int kn;
  enum output output;
  enum pack_how pack;
  size_t m, n, k;
  size_t a_stride, b_stride, c_stride; /* elements */
  size_t a_offset, b_offset, c_offset; /* bytes past a 64-byte boundary */
  int32_t a_zp;
  int b_zp_per_channel;
  int bias_kind;
  enum fill a_fill, b_fill;
  uint8_t a_const, b_const;
  int per_channel;
  int32_t zero_point, min, max;
  enum run_how run;
  size_t threads; /* claimed by the shuffled parallel-for */
};

/* Keeps the reference (M * N * K multiply-adds) to a few milliseconds a run. */
#define WORK_BUDGET (UINT64_C(4) << 20)

static void decode_shape(struct fuzz_reader* r, struct qcase* q, unsigned mode)
{
  const size_t max_k = q->type == type_qu8   ? GEMMI8_QU8_MAX_K
                       : q->type == type_qs8 ? GEMMI8_QS8_MAX_K
                                             : GEMMI8_QU8S8_MAX_K;
  switch (mode) {
    case 0: /* small: every tile height and column remainder */
      q->m = fuzz_range(r, 1, 16);
      q->n = fuzz_range(r, 1, 64);
      q->k = fuzz_range(r, 1, 64);
      break;
    case 1: /* medium */
      q->m = fuzz_range(r, 1, 100);
      q->n = fuzz_range(r, 1, 100);
      q->k = fuzz_range(r, 1, 100);
      break;
    case 2: /* deep: at and just below the exact limit, or anywhere below it */
      q->m = fuzz_range(r, 1, 3);
      q->n = fuzz_range(r, 1, 3);
      {
        const uint8_t s = fuzz_u8(r);
        q->k = (s & 1) ? max_k - fuzz_range(r, 0, 70) : fuzz_range(r, 100, max_k);
        if (s & 2) { /* rows enough for several L2 chunks of A at this depth */
          q->m = fuzz_range(r, 1, 40);
          q->n = 1;
        }
      }
      break;
    default: /* tall: row sums past the stack, several row chunks */
      q->m = fuzz_range(r, 900, 1400);
      q->n = fuzz_range(r, 1, 4);
      q->k = fuzz_range(r, 1, 8);
      break;
  }
  while ((uint64_t) q->m * q->n * q->k > WORK_BUDGET && q->m > 1) q->m /= 2;
}

static enum fill decode_fill(struct fuzz_reader* r, uint8_t* constant)
{
  const uint8_t s = fuzz_u8(r);
  *constant = fuzz_u8(r);
  switch (s % 8) {
    case 0: return fill_low;
    case 1: return fill_high;
    case 2: return fill_two;
    case 3: return fill_const;
    default: return fill_random;
  }
}

/* rows x cols bytes at stride; the gaps keep their random bytes. */
static void fill_matrix(struct fuzz_reader* r, uint8_t* p, size_t rows, size_t cols,
                        size_t stride, int is_signed, enum fill f, uint8_t constant)
{
  const uint8_t low = is_signed ? 0x80 : 0x00, high = is_signed ? 0x7f : 0xff;
  for (size_t i = 0; i < rows; i++) {
    uint8_t* row = p + i * stride;
    switch (f) {
      case fill_low: memset(row, low, cols); break;
      case fill_high: memset(row, high, cols); break;
      case fill_const: memset(row, constant, cols); break;
      case fill_two: fuzz_fill_two(r, row, cols, low, high); break;
      case fill_random: break; /* already random */
    }
  }
}

static int32_t decode_bias(struct fuzz_reader* r, int kind)
{
  switch (kind) {
    case 1: return (int32_t) (uint32_t) fuzz_random(r);
    case 2: return fuzz_s32_edgy(r);
    case 3: return INT32_MAX;
    case 4: return INT32_MIN;
    default: return (int32_t) ((int64_t) (fuzz_random(r) % 2001) - 1000);
  }
}

/* Multiplier and shift of one channel. */
static void decode_fixedpoint(struct fuzz_reader* r, int32_t* multiplier, int32_t* shift)
{
  switch (fuzz_u8(r) % 6) {
    case 0: { /* from a scale, as QuantizeMultiplier */
      const double scale = ldexp(1.0 + (double) fuzz_u32(r) / 4294967296.0,
                                 (int) fuzz_range(r, 0, 80) - 50);
      if (ref_quantize_multiplier(scale, multiplier, shift) != 0) fuzz_fail("bad test scale");
      return;
    }
    case 1: /* the useful range: a Q31 multiplier in [0.5, 1), right shifts */
      *multiplier = (int32_t) fuzz_range(r, (size_t) 1 << 30, INT32_MAX);
      *shift = fuzz_range_s32(r, -20, 0);
      return;
    case 2: { /* edges */
      static const int32_t multipliers[] = {0, 1, 2, INT32_C(1) << 30, (INT32_C(1) << 30) + 1,
                                            INT32_MAX - 1, INT32_MAX};
      static const int32_t shifts[] = {-31, -30, -1, 0, 1, 29, 30};
      *multiplier = multipliers[fuzz_u8(r) % 7];
      *shift = shifts[fuzz_u8(r) % 7];
      return;
    }
    default: /* anything in range */
      *multiplier = (int32_t) fuzz_range(r, 0, INT32_MAX);
      *shift = fuzz_range_s32(r, -31, 30);
      return;
  }
}

static void decode_window(struct fuzz_reader* r, struct qcase* q)
{
  const int32_t lo = q->a_signed ? -128 : 0, hi = q->a_signed ? 127 : 255;
  const uint8_t s = fuzz_u8(r);
  q->zero_point = (s & 1) ? fuzz_range_s32(r, lo, hi) : (q->a_signed ? 0 : 128);
  if (s & 2) {
    q->min = fuzz_range_s32(r, lo, hi);
    q->max = fuzz_range_s32(r, lo, hi);
    if (q->min > q->max) {
      const int32_t t = q->min;
      q->min = q->max;
      q->max = t;
    }
  } else {
    q->min = lo;
    q->max = hi;
  }
}

static gemmi8_status pack_size(enum type t, size_t n, size_t k, size_t* size)
{
  switch (t) {
    case type_qu8: return gemmi8_qu8_pack_size(n, k, size);
    case type_qs8: return gemmi8_qs8_pack_size(n, k, size);
    default: return gemmi8_qu8s8_pack_size(n, k, size);
  }
}

/* Into caller memory (slot NULL) or allocated into *slot. */
static gemmi8_status pack(const struct qcase* q, const uint8_t* b, const uint8_t* b_zp,
                          const int32_t* bias, void** slot, void* packed, size_t packed_size)
{
  const uint32_t flags = q->kn ? GEMMI8_B_KN : GEMMI8_B_NK;
  const int8_t* sb = (const int8_t*) b;
  switch (q->type) {
    case type_qu8:
      return slot ? gemmi8_qu8_pack_alloc(q->n, q->k, b, q->b_stride, flags, (uint8_t) q->a_zp,
                                          b_zp, q->b_zp_per_channel, bias, slot)
                  : gemmi8_qu8_pack(q->n, q->k, b, q->b_stride, flags, (uint8_t) q->a_zp, b_zp,
                                    q->b_zp_per_channel, bias, packed, packed_size);
    case type_qs8:
      return slot ? gemmi8_qs8_pack_alloc(q->n, q->k, sb, q->b_stride, flags, (int8_t) q->a_zp,
                                          bias, slot)
                  : gemmi8_qs8_pack(q->n, q->k, sb, q->b_stride, flags, (int8_t) q->a_zp, bias,
                                    packed, packed_size);
    default:
      return slot ? gemmi8_qu8s8_pack_alloc(q->n, q->k, sb, q->b_stride, flags,
                                            (uint8_t) q->a_zp, bias, slot)
                  : gemmi8_qu8s8_pack(q->n, q->k, sb, q->b_stride, flags, (uint8_t) q->a_zp,
                                      bias, packed, packed_size);
  }
}

/* The requantizing GEMM (rq set) or the int32 one, on par when run is not plain. */
static gemmi8_status gemm(const struct qcase* q, const uint8_t* a, const void* packed,
                          const gemmi8_requant* rq, uint8_t* c, const gemmi8_parallel* par)
{
  const int8_t* sa = (const int8_t*) a;
  int32_t* c32 = (int32_t*) (void*) c;
  if (q->run != run_plain) {
    switch (q->type) {
      case type_qu8:
        return rq ? gemmi8_qu8_gemm_ex(q->m, q->n, q->k, a, q->a_stride, packed, rq, c,
                                       q->c_stride, par)
                  : gemmi8_qu8_gemm_s32_ex(q->m, q->n, q->k, a, q->a_stride, packed, c32,
                                           q->c_stride, par);
      case type_qs8:
        return rq ? gemmi8_qs8_gemm_ex(q->m, q->n, q->k, sa, q->a_stride, packed, rq,
                                       (int8_t*) c, q->c_stride, par)
                  : gemmi8_qs8_gemm_s32_ex(q->m, q->n, q->k, sa, q->a_stride, packed, c32,
                                           q->c_stride, par);
      default:
        return rq ? gemmi8_qu8s8_gemm_ex(q->m, q->n, q->k, a, q->a_stride, packed, rq, c,
                                         q->c_stride, par)
                  : gemmi8_qu8s8_gemm_s32_ex(q->m, q->n, q->k, a, q->a_stride, packed, c32,
                                             q->c_stride, par);
    }
  }
  switch (q->type) {
    case type_qu8:
      return rq ? gemmi8_qu8_gemm(q->m, q->n, q->k, a, q->a_stride, packed, rq, c, q->c_stride)
                : gemmi8_qu8_gemm_s32(q->m, q->n, q->k, a, q->a_stride, packed, c32, q->c_stride);
    case type_qs8:
      return rq ? gemmi8_qs8_gemm(q->m, q->n, q->k, sa, q->a_stride, packed, rq, (int8_t*) c,
                                  q->c_stride)
                : gemmi8_qs8_gemm_s32(q->m, q->n, q->k, sa, q->a_stride, packed, c32,
                                      q->c_stride);
    default:
      return rq ? gemmi8_qu8s8_gemm(q->m, q->n, q->k, a, q->a_stride, packed, rq, c, q->c_stride)
                : gemmi8_qu8s8_gemm_s32(q->m, q->n, q->k, a, q->a_stride, packed, c32,
                                        q->c_stride);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  struct fuzz_reader r;
  fuzz_reader_init(&r, data, size);
  struct qcase q;
  memset(&q, 0, sizeof(q));

  const uint8_t head = fuzz_u8(&r);
  const uint8_t type = fuzz_u8(&r);
  q.type = (head & 1) ? type_qs8 : ((type & 1) ? type_qu8s8 : type_qu8);
  q.a_signed = q.type == type_qs8;
  q.b_signed = q.type != type_qu8;
  q.kn = (head >> 1) & 1;
  q.output = (enum output) (((head >> 2) & 3) % 3);
  decode_shape(&r, &q, (head >> 4) & 3);
  q.run = (enum run_how) ((type >> 1) & 3);
  if (type & 8) { /* big enough for the _ex entry points to split the work */
    q.m = fuzz_range(&r, 96, 200);
    q.n = fuzz_range(&r, 96, 200);
    q.k = fuzz_range(&r, 96, 200);
    while ((uint64_t) q.m * q.n * q.k > WORK_BUDGET) q.m /= 2;
  }
  q.threads = type >> 4; /* 0 and 1: no parallel_for call allowed */
  q.pack = (enum pack_how) ((head >> 6) & 3);

  q.a_stride = q.k + fuzz_extra(&r, 300);
  q.b_stride = (q.kn ? q.n : q.k) + fuzz_extra(&r, 300);
  q.c_stride = q.n + fuzz_extra(&r, 300);
  const uint8_t offsets = fuzz_u8(&r);
  q.a_offset = (offsets & 1) ? fuzz_range(&r, 0, 63) : 0;
  q.b_offset = (offsets & 2) ? fuzz_range(&r, 0, 63) : 0;
  q.c_offset = (offsets & 4) ? fuzz_range(&r, 0, 63) : 0;
  if (q.output == out_s32) q.c_offset &= ~(size_t) 3; /* int32 alignment */

  q.a_zp = q.a_signed ? (int8_t) fuzz_u8(&r) : fuzz_u8(&r);
  q.b_zp_per_channel = q.type == type_qu8 && (offsets & 8);
  q.bias_kind = fuzz_u8(&r) % 6; /* 5: no bias */
  q.a_fill = decode_fill(&r, &q.a_const);
  q.b_fill = decode_fill(&r, &q.b_const);
  q.per_channel = (offsets & 16) != 0;
  decode_window(&r, &q);

  /* per-channel arrays: n values or one, exact size */
  const size_t channels = q.per_channel ? q.n : 1;
  void *mult_block = NULL, *shift_block = NULL, *scale_block = NULL;
  int32_t* multiplier = fuzz_exact(&r, channels * sizeof(int32_t), 0, &mult_block);
  int32_t* shift = fuzz_exact(&r, channels * sizeof(int32_t), 0, &shift_block);
  float* scale = fuzz_exact(&r, channels * sizeof(float), 0, &scale_block);
  const uint8_t same = fuzz_u8(&r) & 1; /* every channel the same parameters */
  for (size_t j = 0; j < channels; j++) {
    if (j > 0 && same) {
      multiplier[j] = multiplier[0];
      shift[j] = shift[0];
      scale[j] = scale[0];
      continue;
    }
    decode_fixedpoint(&r, &multiplier[j], &shift[j]);
    scale[j] = fuzz_f32_positive(&r);
  }

  int32_t* b_zp = malloc(q.n * sizeof(int32_t)); /* the reference's form: n int32 */
  uint8_t* b_zp_bytes = NULL;
  void* b_zp_block = NULL;
  int32_t* bias = NULL;
  void* bias_block = NULL;
  if (b_zp == NULL) fuzz_fail("out of memory");
  if (q.type == type_qu8) {
    const size_t count = q.b_zp_per_channel ? q.n : 1;
    b_zp_bytes = fuzz_exact(&r, count, 0, &b_zp_block);
    const uint8_t zp0 = fuzz_u8(&r);
    const int zp_kind = fuzz_u8(&r) % 4;
    for (size_t j = 0; j < count; j++) {
      if (zp_kind == 0) b_zp_bytes[j] = zp0;
      if (zp_kind == 1) b_zp_bytes[j] = (j & 1) ? 0 : 255;
    }
    for (size_t j = 0; j < q.n; j++) b_zp[j] = b_zp_bytes[q.b_zp_per_channel ? j : 0];
  } else {
    for (size_t j = 0; j < q.n; j++) b_zp[j] = 0;
  }
  if (q.bias_kind != 5) {
    bias = fuzz_exact(&r, q.n * sizeof(int32_t), 0, &bias_block);
    for (size_t j = 0; j < q.n; j++) bias[j] = decode_bias(&r, q.bias_kind);
  }

  fuzz_describe(
      "%s %s M=%zu N=%zu K=%zu a_stride=%zu b_stride=%zu c_stride=%zu offsets a+%zu b+%zu c+%zu "
      "a_zp=%d b_zp[0]=%d%s bias=%d out=%s per_channel=%d mult[0]=%d shift[0]=%d scale[0]=%a "
      "zp=%d window=[%d,%d] fills a=%d/%u b=%d/%u pack=%s run=%s threads=%zu",
      type_name[q.type], q.kn ? "KN" : "NK", q.m, q.n, q.k, q.a_stride, q.b_stride,
      q.c_stride, q.a_offset, q.b_offset, q.c_offset, (int) q.a_zp, (int) b_zp[0],
      q.b_zp_per_channel ? " (per channel)" : "", q.bias_kind, output_name[q.output],
      q.per_channel, (int) multiplier[0], (int) shift[0], (double) scale[0], (int) q.zero_point,
      (int) q.min, (int) q.max, (int) q.a_fill, q.a_const, (int) q.b_fill, q.b_const,
      pack_name[q.pack], run_name[q.run], q.threads);

  /* A and B: exact size */
  const size_t a_bytes = (q.m - 1) * q.a_stride + q.k;
  const size_t b_rows = q.kn ? q.k : q.n, b_cols = q.kn ? q.n : q.k;
  const size_t b_bytes = (b_rows - 1) * q.b_stride + b_cols;
  void *a_block = NULL, *b_block = NULL;
  uint8_t* a = fuzz_exact(&r, a_bytes, q.a_offset, &a_block);
  uint8_t* b = fuzz_exact(&r, b_bytes, q.b_offset, &b_block);
  fill_matrix(&r, a, q.m, q.k, q.a_stride, q.a_signed, q.a_fill, q.a_const);
  fill_matrix(&r, b, b_rows, b_cols, q.b_stride, q.b_signed, q.b_fill, q.b_const);

  /* pack */
  size_t packed_size = 0;
  gemmi8_status s = pack_size(q.type, q.n, q.k, &packed_size);
  fuzz_expect_status(s, FUZZ_BIT(gemmi8_status_success), "pack_size");
  if (packed_size <= GEMMI8_PACK_ALIGNMENT) {
    fuzz_fail("pack_size %zu: no room past the header", packed_size);
  }
  void* packed = NULL;
  if (q.pack == pack_alloc) {
    s = pack(&q, b, b_zp_bytes, bias, &packed, NULL, 0);
    fuzz_expect_status(s, FUZZ_BIT(gemmi8_status_success), "pack_alloc");
  } else {
    const size_t buffer_size = packed_size + (q.pack == pack_larger ? 1 + fuzz_u8(&r) : 0);
    packed = fuzz_aligned(buffer_size);
    fuzz_fill_random(&r, packed, buffer_size);
    s = pack(&q, b, b_zp_bytes, bias, NULL, packed, buffer_size);
    fuzz_expect_status(s, FUZZ_BIT(gemmi8_status_success), "pack");
    if (q.pack == pack_copy) {
      /* the packed form holds no pointers: a copy works once the original is gone */
      void* copy = fuzz_aligned(packed_size);
      memcpy(copy, packed, packed_size);
      free(packed);
      packed = copy;
    }
  }
  /* the exact accumulators, then the sources go: the packed buffer is self-contained */
  int32_t* acc = malloc(q.m * q.n * sizeof(int32_t));
  if (acc == NULL) fuzz_fail("out of memory");
  ref_q8_acc_mixed(q.a_signed, q.b_signed, q.m, q.n, q.k, a, q.a_stride, q.a_zp, b, q.b_stride,
                   q.kn, b_zp, bias, acc);
  free(b_zp_block);
  free(bias_block);
  free(b_block);
  void* packed_saved = malloc(packed_size);
  if (packed_saved == NULL) fuzz_fail("out of memory");
  memcpy(packed_saved, packed, packed_size);

  /* GEMM */
  const size_t c_elem = q.output == out_s32 ? sizeof(int32_t) : 1;
  const size_t c_count = (q.m - 1) * q.c_stride + q.n;
  struct fuzz_out c;
  fuzz_out_init(&c, &r, c_count * c_elem, q.c_offset);
  const gemmi8_requant rq = {
      .mode = q.output == out_fp32 ? gemmi8_requant_fp32 : gemmi8_requant_fixedpoint,
      .per_channel = q.per_channel,
      .multiplier = q.output == out_fp32 ? NULL : multiplier,
      .shift = q.output == out_fp32 ? NULL : shift,
      .scale = q.output == out_fp32 ? scale : NULL,
      .zero_point = q.zero_point,
      .min = q.min,
      .max = q.max,
  };
  struct fuzz_parallel shuffled;
  fuzz_parallel_init(&shuffled, &r, q.threads);
  const gemmi8_parallel* par = q.run == run_shuffled ? &shuffled.parallel
                               : q.run == run_pool   ? fuzz_parallel_pool()
                                                     : NULL;
  s = gemm(&q, a, packed, q.output == out_s32 ? NULL : &rq, c.data, par);
  if (q.run == run_shuffled) {
    fuzz_describe_more(" (parallel_for calls %zu, tasks %zu)", shuffled.calls, shuffled.tasks);
  }
  if (q.run == run_shuffled && q.threads <= 1 && shuffled.calls != 0) {
    fuzz_fail("parallel_for called %zu times for %zu threads", shuffled.calls, q.threads);
  }
  fuzz_expect_status(s, FUZZ_BIT(gemmi8_status_success), "gemm");
  fuzz_out_check_guards(&c, "C");
  fuzz_out_check_gaps(&c, q.m, q.n * c_elem, q.c_stride * c_elem, "C between rows");
  if (memcmp(packed, packed_saved, packed_size) != 0) {
    fuzz_fail("the GEMM wrote its packed weights");
  }

  for (size_t i = 0; i < q.m; i++) {
    for (size_t j = 0; j < q.n; j++) {
      const size_t ch = q.per_channel ? j : 0;
      const int32_t x = acc[i * q.n + j];
      int32_t want, got;
      const size_t at = i * q.c_stride + j;
      switch (q.output) {
        case out_s32:
          want = x;
          memcpy(&got, c.data + at * sizeof(int32_t), sizeof(got));
          break;
        case out_fixedpoint:
          want = ref_output_fixedpoint(x, multiplier[ch], shift[ch], q.zero_point, q.min, q.max);
          got = q.a_signed ? (int8_t) c.data[at] : c.data[at];
          break;
        default:
          want = ref_output_fp32(x, scale[ch], q.zero_point, q.min, q.max);
          got = q.a_signed ? (int8_t) c.data[at] : c.data[at];
          break;
      }
      if (got != want) {
        fuzz_fail("C[%zu][%zu] = %d, expected %d (acc %d, multiplier %d, shift %d, scale %a)", i,
                  j, (int) got, (int) want, (int) x, (int) multiplier[ch], (int) shift[ch],
                  (double) scale[ch]);
      }
    }
  }

  free(packed_saved);
  if (q.pack == pack_alloc) {
    gemmi8_packed_free(packed);
  } else {
    free(packed);
  }
  fuzz_out_free(&c);
  free(a_block);
  free(b_zp);
  free(acc);
  free(mult_block);
  free(shift_block);
  free(scale_block);
  return 0;
}
