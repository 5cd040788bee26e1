/*
 * gemmi8-bench: gemmi8's own cases.
 *
 *   qu8      uint8 A (zero point 119) x uint8 B (zero point 131) + int32 bias,
 *            fixed-point requantization with per-channel multipliers and shifts
 *            from gemmi8_quantize_multipliers, output zero point 128, clamp 0..255.
 *   qu8s32   the same operands, int32 accumulator output.
 *   qs8      int8 A (zero point -7) x symmetric int8 B + bias, per-channel
 *            fixed-point requantization, output zero point 5, clamp -128..127.
 *   qs8s32   the same operands, int32 output.
 *   qu8fp32, qs8fp32  as qu8 and qs8 with the fp32 requantization mode (float
 *            scales, round half to even: the rounding of oneDNN, XNNPACK, PyTorch).
 *   qu8s8, qu8s8fp32  uint8 A (zero point 119) x symmetric int8 B + bias, per-channel
 *            fixed-point / fp32 requantization, output zero point 128; ...pt: one
 *            multiplier or scale for the tensor; qu8s8s32 the int32 output.
 *   qs8pt, qs8fp32pt  qs8 with one multiplier / scale for the tensor.
 *            These run on the best kernel set only, against oneDNN's matching
 *            matmul configurations (the like-for-like table of the report);
 *            qu8s8 and qu8s8fp32 also on gemmi8's pool of GEMMI8_BENCH_THREADS
 *            threads (gemmi8@2/...).
 *   bin      +1/-1 bits, K = Depth bits; A bit-packed by gemmi8_bin_pack_rows_s8
 *            in setup, int32 output.
 * Each runs on one kernel set, forced with gemmi8_isa_force() before packing and
 * again before each timed loop. Weights are packed in setup, never timed. Every
 * case reports its packed weight bytes (counters weight_bytes and GBps).
 * qu8, qs8, qu8fp32 and qs8fp32 also run on the fully-connected shapes: qu8 and qs8
 * on the best kernel set and avx2, the fp32 modes on the best one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "gemmi8.h"
#include "isa.h"

typedef enum g8_kind {
  G8_QU8,
  G8_QU8_S32,
  G8_QS8,
  G8_QS8_S32,
  G8_BIN,
  G8_QU8_FP32,
  G8_QS8_FP32,
  G8_QU8S8,
  G8_QU8S8_S32,
  G8_QU8S8_FP32,
  G8_QU8S8_PT,
  G8_QU8S8_FP32_PT,
  G8_QS8_PT,
  G8_QS8_FP32_PT,
} g8_kind;

typedef struct g8_state {
  char isa[32];
  size_t m, n, k;
  void* a; /* M x K uint8 / int8, or M rows of bits */
  size_t a_stride;
  void* packed;
  size_t packed_bytes;
  void* c; /* M x N uint8 / int8 / int32 */
  size_t c_stride;
  int32_t* multiplier;
  int32_t* shift;
  float* scale;
  int per_tensor; /* one multiplier / scale for every channel */
  gemmi8_requant rq;
  /* threaded cases: gemmi8's pool of bench_threads threads, else NULL */
  gemmi8_parallel par;
  const gemmi8_parallel* parallel;
  int caller; /* BENCH_CALLER_*: gemmi8's pool or a caller's parallel-for */
} g8_state;

/* The threaded cases' parallel-for (bench_caller_parallel), else NULL. */
static const char* g8_parallel(g8_state* s)
{
  s->parallel = NULL;
  if (bench_threads <= 1) return NULL;
  const char* err = bench_caller_parallel(s->caller, bench_threads, &s->par);
  if (err == NULL) s->parallel = &s->par;
  return err;
}

/* Zero points and output windows: nonzero and off-centre, as trained models have. */
#define QU8_A_ZP 119
#define QU8_B_ZP 131
#define QU8_C_ZP 128
#define QS8_A_ZP (-7)
#define QS8_C_ZP 5

size_t bench_gemmi8_isas(const char** names, size_t cap)
{
  size_t count = 0;
  for (const char* const* isa = gemmi8_isa_compiled(); *isa != NULL; isa++) {
    if (gemmi8_isa_supported(*isa)) {
      if (count < cap) {
        names[count] = *isa;
      }
      count++;
    }
  }
  return count;
}

static const char* select_isa(const char* isa)
{
  if (gemmi8_isa_force(isa) != 0) {
    return bench_error("gemmi8_isa_force(\"%s\") failed", isa);
  }
  if (strcmp(gemmi8_isa_name(), isa) != 0) {
    return bench_error("asked for kernel set %s, gemmi8 uses %s", isa, gemmi8_isa_name());
  }
  return NULL;
}

static void g8_teardown(void* opaque)
{
  g8_state* s = opaque;
  if (s == NULL) {
    return;
  }
  bench_free(s->a);
  bench_free(s->packed);
  bench_free(s->c);
  bench_free(s->multiplier);
  bench_free(s->shift);
  bench_free(s->scale);
  free(s);
}

static const char* g8_prepare(void* opaque)
{
  g8_state* s = opaque;
  return select_isa(s->isa);
}

static const char* status_error(const char* what, gemmi8_status status)
{
  return bench_error("%s: %s", what, gemmi8_status_string(status));
}

/* Per-channel requantization that maps the accumulator's spread (about
 * sqrt(K) * sd_a * sd_b around the bias) onto most of the 8-bit range. */
static const char* make_requant(g8_state* s, bench_rng* rng, gemmi8_requant_mode mode,
                                double sd_a, double sd_b, int32_t zero_point, int32_t min,
                                int32_t max)
{
  s->multiplier = bench_alloc(s->n * sizeof(int32_t));
  s->shift = bench_alloc(s->n * sizeof(int32_t));
  s->scale = bench_alloc(s->n * sizeof(float));
  double* scale = malloc(s->n * sizeof(double));
  if (s->multiplier == NULL || s->shift == NULL || s->scale == NULL || scale == NULL) {
    free(scale);
    return "out of memory";
  }
  double spread = sqrt((double) s->k) * sd_a * sd_b;
  for (size_t i = 0; i < s->n; i++) {
    scale[i] = s->per_tensor && i > 0 ? scale[0] : 48.0 / spread * bench_rng_real(rng, 0.5, 1.5);
    s->scale[i] = (float) scale[i];
  }
  gemmi8_status st = gemmi8_quantize_multipliers(s->n, scale, s->multiplier, s->shift);
  free(scale);
  if (st != gemmi8_status_success) {
    return status_error("gemmi8_quantize_multipliers", st);
  }
  s->rq.mode = mode;
  s->rq.per_channel = !s->per_tensor;
  s->rq.multiplier = s->multiplier;
  s->rq.shift = s->shift;
  s->rq.scale = s->scale;
  s->rq.zero_point = zero_point;
  s->rq.min = min;
  s->rq.max = max;
  return NULL;
}

static int32_t* make_bias(bench_rng* rng, size_t n)
{
  int32_t* bias = bench_alloc(n * sizeof(int32_t));
  if (bias != NULL) {
    for (size_t i = 0; i < n; i++) {
      bias[i] = bench_rng_int(rng, -20000, 20000);
    }
  }
  return bias;
}

/* Standard deviation of a uniform integer in [lo, hi]. */
static double uniform_sd(int lo, int hi)
{
  double width = (double) (hi - lo + 1);
  return sqrt((width * width - 1.0) / 12.0);
}

/* requant: 0 for int32 output, else the requantization mode + 1 */
static const char* setup_qu8(g8_state* s, bench_rng* rng, int requant)
{
  const uint8_t a_zp = QU8_A_ZP, b_zp = QU8_B_ZP;
  size_t size = 0;
  s->a_stride = s->k;
  s->a = bench_alloc(bench_mul(s->m, s->k));
  uint8_t* b = bench_alloc(bench_mul(s->n, s->k));
  int32_t* bias = make_bias(rng, s->n);
  const char* err = NULL;
  if (s->a == NULL || b == NULL || bias == NULL) {
    err = "out of memory";
    goto done;
  }
  bench_fill_u8(rng, s->a, s->m * s->k);
  bench_fill_u8(rng, b, s->n * s->k);
  gemmi8_status st = gemmi8_qu8_pack_size(s->n, s->k, &size);
  if (st != gemmi8_status_success) {
    err = status_error("gemmi8_qu8_pack_size", st);
    goto done;
  }
  s->packed = bench_alloc(size);
  s->packed_bytes = size;
  if (s->packed == NULL) {
    err = "out of memory";
    goto done;
  }
  st = gemmi8_qu8_pack(s->n, s->k, b, s->k, GEMMI8_B_NK, a_zp, &b_zp, 0, bias, s->packed,
                       size);
  if (st != gemmi8_status_success) {
    err = status_error("gemmi8_qu8_pack", st);
    goto done;
  }
  s->c_stride = s->n;
  s->c = bench_alloc(bench_mul(bench_mul(s->m, s->n), requant ? 1 : sizeof(int32_t)));
  if (s->c == NULL) {
    err = "out of memory";
    goto done;
  }
  if (requant) {
    err = make_requant(s, rng, (gemmi8_requant_mode) (requant - 1), uniform_sd(0, 255),
                       uniform_sd(0, 255), QU8_C_ZP, 0, 255);
  }
done:
  bench_free(b);
  bench_free(bias);
  return err;
}

/* Symmetric int8 weights: qs8 (int8 A, zero point -7; int8 output, zero point 5) or,
 * with a_unsigned, qu8s8 (uint8 A, zero point 119; uint8 output, zero point 128). */
static const char* setup_s8_weights(g8_state* s, bench_rng* rng, int requant, int a_unsigned)
{
  size_t size = 0;
  s->a_stride = s->k;
  s->a = bench_alloc(bench_mul(s->m, s->k));
  int8_t* b = bench_alloc(bench_mul(s->n, s->k));
  int32_t* bias = make_bias(rng, s->n);
  const char* err = NULL;
  if (s->a == NULL || b == NULL || bias == NULL) {
    err = "out of memory";
    goto done;
  }
  if (a_unsigned) {
    bench_fill_u8(rng, s->a, s->m * s->k);
  } else {
    bench_fill_s8(rng, s->a, s->m * s->k, -128, 127);
  }
  bench_fill_s8(rng, b, s->n * s->k, -127, 127);
  gemmi8_status st = a_unsigned ? gemmi8_qu8s8_pack_size(s->n, s->k, &size)
                                : gemmi8_qs8_pack_size(s->n, s->k, &size);
  if (st != gemmi8_status_success) {
    err = status_error("pack_size", st);
    goto done;
  }
  s->packed = bench_alloc(size);
  s->packed_bytes = size;
  if (s->packed == NULL) {
    err = "out of memory";
    goto done;
  }
  st = a_unsigned ? gemmi8_qu8s8_pack(s->n, s->k, b, s->k, GEMMI8_B_NK, QU8_A_ZP, bias, s->packed,
                                      size)
                  : gemmi8_qs8_pack(s->n, s->k, b, s->k, GEMMI8_B_NK, QS8_A_ZP, bias, s->packed,
                                    size);
  if (st != gemmi8_status_success) {
    err = status_error(a_unsigned ? "gemmi8_qu8s8_pack" : "gemmi8_qs8_pack", st);
    goto done;
  }
  s->c_stride = s->n;
  s->c = bench_alloc(bench_mul(bench_mul(s->m, s->n), requant ? 1 : sizeof(int32_t)));
  if (s->c == NULL) {
    err = "out of memory";
    goto done;
  }
  if (requant) {
    err = make_requant(s, rng, (gemmi8_requant_mode) (requant - 1),
                       a_unsigned ? uniform_sd(0, 255) : uniform_sd(-128, 127),
                       uniform_sd(-127, 127), a_unsigned ? QU8_C_ZP : QS8_C_ZP,
                       a_unsigned ? 0 : -128, a_unsigned ? 255 : 127);
  }
done:
  bench_free(b);
  bench_free(bias);
  return err;
}

static const char* setup_bin(g8_state* s, bench_rng* rng)
{
  const size_t words = GEMMI8_BIN_WORDS(s->k);
  size_t size = 0;
  size_t rows = s->m > s->n ? s->m : s->n;
  int8_t* values = bench_alloc(bench_mul(rows, s->k)); /* A, then B, before bit packing */
  uint64_t* b = bench_alloc(bench_mul(bench_mul(s->n, words), sizeof(uint64_t)));
  s->a_stride = words;
  s->a = bench_alloc(bench_mul(bench_mul(s->m, words), sizeof(uint64_t)));
  const char* err = NULL;
  if (values == NULL || b == NULL || s->a == NULL) {
    err = "out of memory";
    goto done;
  }
  bench_fill_s8(rng, values, s->m * s->k, -128, 127);
  gemmi8_status st = gemmi8_bin_pack_rows_s8(s->m, s->k, values, s->k, s->a, words);
  if (st != gemmi8_status_success) {
    err = status_error("gemmi8_bin_pack_rows_s8 (A)", st);
    goto done;
  }
  bench_fill_s8(rng, values, s->n * s->k, -128, 127);
  st = gemmi8_bin_pack_rows_s8(s->n, s->k, values, s->k, b, words);
  if (st != gemmi8_status_success) {
    err = status_error("gemmi8_bin_pack_rows_s8 (B)", st);
    goto done;
  }
  st = gemmi8_bin_pack_size(s->n, s->k, &size);
  if (st != gemmi8_status_success) {
    err = status_error("gemmi8_bin_pack_size", st);
    goto done;
  }
  s->packed = bench_alloc(size);
  s->packed_bytes = size;
  if (s->packed == NULL) {
    err = "out of memory";
    goto done;
  }
  st = gemmi8_bin_pack(s->n, s->k, b, words, GEMMI8_B_NK, s->packed, size);
  if (st != gemmi8_status_success) {
    err = status_error("gemmi8_bin_pack", st);
    goto done;
  }
  s->c_stride = s->n;
  s->c = bench_alloc(bench_mul(bench_mul(s->m, s->n), sizeof(int32_t)));
  if (s->c == NULL) {
    err = "out of memory";
  }
done:
  bench_free(values);
  bench_free(b);
  return err;
}

static const char* run_qu8(void* opaque)
{
  const g8_state* s = opaque;
  gemmi8_status st = gemmi8_qu8_gemm_ex(s->m, s->n, s->k, s->a, s->a_stride, s->packed, &s->rq,
                                     s->c, s->c_stride, s->parallel);
  return st == gemmi8_status_success ? NULL : status_error("gemmi8_qu8_gemm", st);
}

static const char* run_qu8s32(void* opaque)
{
  const g8_state* s = opaque;
  gemmi8_status st =
      gemmi8_qu8_gemm_s32_ex(s->m, s->n, s->k, s->a, s->a_stride, s->packed, s->c, s->c_stride, s->parallel);
  return st == gemmi8_status_success ? NULL : status_error("gemmi8_qu8_gemm_s32", st);
}

static const char* run_qs8(void* opaque)
{
  const g8_state* s = opaque;
  gemmi8_status st = gemmi8_qs8_gemm_ex(s->m, s->n, s->k, s->a, s->a_stride, s->packed, &s->rq,
                                     s->c, s->c_stride, s->parallel);
  return st == gemmi8_status_success ? NULL : status_error("gemmi8_qs8_gemm", st);
}

static const char* run_qs8s32(void* opaque)
{
  const g8_state* s = opaque;
  gemmi8_status st =
      gemmi8_qs8_gemm_s32_ex(s->m, s->n, s->k, s->a, s->a_stride, s->packed, s->c, s->c_stride, s->parallel);
  return st == gemmi8_status_success ? NULL : status_error("gemmi8_qs8_gemm_s32", st);
}

static const char* run_qu8s8(void* opaque)
{
  const g8_state* s = opaque;
  gemmi8_status st = gemmi8_qu8s8_gemm_ex(s->m, s->n, s->k, s->a, s->a_stride, s->packed, &s->rq,
                                       s->c, s->c_stride, s->parallel);
  return st == gemmi8_status_success ? NULL : status_error("gemmi8_qu8s8_gemm", st);
}

static const char* run_qu8s8s32(void* opaque)
{
  const g8_state* s = opaque;
  gemmi8_status st =
      gemmi8_qu8s8_gemm_s32_ex(s->m, s->n, s->k, s->a, s->a_stride, s->packed, s->c, s->c_stride, s->parallel);
  return st == gemmi8_status_success ? NULL : status_error("gemmi8_qu8s8_gemm_s32", st);
}

static const char* run_bin(void* opaque)
{
  const g8_state* s = opaque;
  gemmi8_status st =
      gemmi8_bin_gemm_s32_ex(s->m, s->n, s->k, s->a, s->a_stride, s->packed, s->c, s->c_stride, s->parallel);
  return st == gemmi8_status_success ? NULL : status_error("gemmi8_bin_gemm_s32", st);
}

static const char* g8_setup_on(const bench_shape* shape, const char* isa, g8_kind kind,
                               int caller, void** state);
static const char* g8_setup(const bench_shape* shape, const char* isa, g8_kind kind, void** state)
{
  return g8_setup_on(shape, isa, kind, BENCH_CALLER_GEMMI8_POOL, state);
}
static const char* g8_setup_on(const bench_shape* shape, const char* isa, g8_kind kind,
                               int caller, void** state)
{
  static const char* const salts[] = {
      "gemmi8-qu8",   "gemmi8-qu8",   "gemmi8-qs8",   "gemmi8-qs8", "gemmi8-bin",
      "gemmi8-qu8",   "gemmi8-qs8",   "gemmi8-qu8s8", "gemmi8-qu8s8", "gemmi8-qu8s8",
      "gemmi8-qu8s8", "gemmi8-qu8s8", "gemmi8-qs8",   "gemmi8-qs8"};
  static const char* (*const runs[])(void*) = {
      run_qu8,   run_qu8s32,   run_qs8,   run_qs8s32, run_bin, run_qu8, run_qs8,
      run_qu8s8, run_qu8s8s32, run_qu8s8, run_qu8s8,  run_qu8s8, run_qs8, run_qs8};
  if (isa == NULL || strlen(isa) >= sizeof(((g8_state*) NULL)->isa)) {
    return "gemmi8 case without a kernel set";
  }
  g8_state* s = calloc(1, sizeof(*s));
  if (s == NULL) {
    return "out of memory";
  }
  strcpy(s->isa, isa);
  s->caller = caller;
  s->m = shape->col;
  s->n = shape->row;
  s->k = shape->depth;
  bench_rng rng;
  /* The same data for a shape on every kernel set. */
  bench_rng_seed(&rng, shape, salts[kind]);
  const char* err = select_isa(isa);
  if (err == NULL) err = g8_parallel(s);
  if (err == NULL) {
    switch (kind) {
      case G8_QU8:
      case G8_QU8_S32:
      case G8_QU8_FP32:
        err = setup_qu8(s, &rng, kind == G8_QU8_S32 ? 0 : kind == G8_QU8 ? 1 : 2);
        break;
      case G8_QS8:
      case G8_QS8_S32:
      case G8_QS8_FP32:
        err = setup_s8_weights(s, &rng, kind == G8_QS8_S32 ? 0 : kind == G8_QS8 ? 1 : 2, 0);
        break;
      case G8_BIN:
        err = setup_bin(s, &rng);
        break;
      case G8_QU8S8:
      case G8_QU8S8_S32:
      case G8_QU8S8_FP32:
      case G8_QU8S8_PT:
      case G8_QU8S8_FP32_PT:
        s->per_tensor = kind == G8_QU8S8_PT || kind == G8_QU8S8_FP32_PT;
        err = setup_s8_weights(s, &rng,
                               kind == G8_QU8S8_S32                      ? 0
                               : kind == G8_QU8S8 || kind == G8_QU8S8_PT ? 1
                                                                         : 2,
                               1);
        break;
      case G8_QS8_PT:
      case G8_QS8_FP32_PT:
        s->per_tensor = 1;
        err = setup_s8_weights(s, &rng, kind == G8_QS8_PT ? 1 : 2, 0);
        break;
    }
  }
  if (err == NULL) {
    err = runs[kind](s); /* checks the call and warms caches */
  }
  if (err != NULL) {
    g8_teardown(s);
    return err;
  }
  *state = s;
  return NULL;
}

static const char* setup_qu8_requant(const bench_shape* shape, const char* isa, void** state)
{
  return g8_setup(shape, isa, G8_QU8, state);
}
static const char* setup_qu8_s32(const bench_shape* shape, const char* isa, void** state)
{
  return g8_setup(shape, isa, G8_QU8_S32, state);
}
static const char* setup_qs8_requant(const bench_shape* shape, const char* isa, void** state)
{
  return g8_setup(shape, isa, G8_QS8, state);
}
static const char* setup_qs8_s32(const bench_shape* shape, const char* isa, void** state)
{
  return g8_setup(shape, isa, G8_QS8_S32, state);
}
static const char* setup_qu8_fp32(const bench_shape* shape, const char* isa, void** state)
{
  return g8_setup(shape, isa, G8_QU8_FP32, state);
}
static const char* setup_qs8_fp32(const bench_shape* shape, const char* isa, void** state)
{
  return g8_setup(shape, isa, G8_QS8_FP32, state);
}
#define G8_SETUP(name, kind)                                                                \
  static const char* name(const bench_shape* shape, const char* isa, void** state) {        \
    return g8_setup(shape, isa, kind, state);                                               \
  }
G8_SETUP(setup_qu8s8_fixed, G8_QU8S8)
G8_SETUP(setup_qu8s8_s32, G8_QU8S8_S32)
G8_SETUP(setup_qu8s8_fp32, G8_QU8S8_FP32)
G8_SETUP(setup_qu8s8_fixed_pt, G8_QU8S8_PT)
G8_SETUP(setup_qu8s8_fp32_pt, G8_QU8S8_FP32_PT)
G8_SETUP(setup_qs8_fixed_pt, G8_QS8_PT)
G8_SETUP(setup_qs8_fp32_pt, G8_QS8_FP32_PT)

/* fp32 qu8s8 on a caller's parallel-for (threaded runs only) */
static const char* setup_qu8s8_fp32_pthreadpool(const bench_shape* shape, const char* isa,
                                                void** state)
{
  return g8_setup_on(shape, isa, G8_QU8S8_FP32, BENCH_CALLER_PTHREADPOOL, state);
}
static const char* setup_qu8s8_fp32_openmp(const bench_shape* shape, const char* isa,
                                           void** state)
{
  return g8_setup_on(shape, isa, G8_QU8S8_FP32, BENCH_CALLER_OPENMP, state);
}

static const char* setup_bin_s32(const bench_shape* shape, const char* isa, void** state)
{
  return g8_setup(shape, isa, G8_BIN, state);
}

static double g8_bytes(const void* opaque)
{
  const g8_state* s = opaque;
  return (double) s->packed_bytes;
}

/* The avx512bw level adds binary kernels and keeps avx2's int8 ones, the
 * avx512vpopcnt level adds binary kernels and keeps avx512vnni's (src/init.c):
 * benchmarking the same int8 kernels again would only cost time. */
static const char* const int8_skip_isas[] = {"avx512bw", "avx512vpopcnt", NULL};

#define GEMMI8_CASE(variant_name, more_flags, skip, setup_fn, run_fn) \
  {                                                                   \
      .library = "gemmi8",                                            \
      .variant = variant_name,                                        \
      .flags = BENCH_CASE_GEMMI8_ISA | (more_flags),                  \
      .skip_isas = skip,                                              \
      .unavailable = NULL,                                            \
      .setup = setup_fn,                                              \
      .prepare = g8_prepare,                                          \
      .run = run_fn,                                                  \
      .teardown = g8_teardown,                                        \
      .bytes = g8_bytes,                                              \
  }

#define FC_BEST (BENCH_CASE_FC | BENCH_CASE_FC_BEST_ISA)

const bench_case bench_gemmi8_qu8 =
    GEMMI8_CASE("qu8", BENCH_CASE_FC, int8_skip_isas, setup_qu8_requant, run_qu8);
const bench_case bench_gemmi8_qu8s32 =
    GEMMI8_CASE("qu8s32", 0, int8_skip_isas, setup_qu8_s32, run_qu8s32);
const bench_case bench_gemmi8_qs8 =
    GEMMI8_CASE("qs8", BENCH_CASE_FC, int8_skip_isas, setup_qs8_requant, run_qs8);
const bench_case bench_gemmi8_qs8s32 =
    GEMMI8_CASE("qs8s32", 0, int8_skip_isas, setup_qs8_s32, run_qs8s32);
const bench_case bench_gemmi8_qu8fp32 =
    GEMMI8_CASE("qu8fp32", FC_BEST, int8_skip_isas, setup_qu8_fp32, run_qu8);
const bench_case bench_gemmi8_qs8fp32 =
    GEMMI8_CASE("qs8fp32", FC_BEST, int8_skip_isas, setup_qs8_fp32, run_qs8);
/* The like-for-like configurations (bench/README.md): on the best kernel set only. */
#define BEST (BENCH_CASE_BEST_ISA_ONLY)
const bench_case bench_gemmi8_qu8s8 = GEMMI8_CASE(
    "qu8s8", BEST | BENCH_CASE_FC | BENCH_CASE_THREADS, int8_skip_isas, setup_qu8s8_fixed, run_qu8s8);
const bench_case bench_gemmi8_qu8s8s32 =
    GEMMI8_CASE("qu8s8s32", BEST, int8_skip_isas, setup_qu8s8_s32, run_qu8s8s32);
const bench_case bench_gemmi8_qu8s8fp32 = GEMMI8_CASE(
    "qu8s8fp32", BEST | FC_BEST | BENCH_CASE_THREADS, int8_skip_isas, setup_qu8s8_fp32, run_qu8s8);
#define CALLER (BEST | FC_BEST | BENCH_CASE_THREADS | BENCH_CASE_THREADS_ONLY)
const bench_case bench_gemmi8_qu8s8fp32_pthreadpool = GEMMI8_CASE(
    "qu8s8fp32-pthreadpool", CALLER, int8_skip_isas, setup_qu8s8_fp32_pthreadpool, run_qu8s8);
const bench_case bench_gemmi8_qu8s8fp32_openmp = GEMMI8_CASE(
    "qu8s8fp32-openmp", CALLER, int8_skip_isas, setup_qu8s8_fp32_openmp, run_qu8s8);
const bench_case bench_gemmi8_qu8s8_pt =
    GEMMI8_CASE("qu8s8pt", BEST, int8_skip_isas, setup_qu8s8_fixed_pt, run_qu8s8);
const bench_case bench_gemmi8_qu8s8fp32_pt =
    GEMMI8_CASE("qu8s8fp32pt", BEST, int8_skip_isas, setup_qu8s8_fp32_pt, run_qu8s8);
const bench_case bench_gemmi8_qs8_pt =
    GEMMI8_CASE("qs8pt", BEST, int8_skip_isas, setup_qs8_fixed_pt, run_qs8);
const bench_case bench_gemmi8_qs8fp32_pt =
    GEMMI8_CASE("qs8fp32pt", BEST, int8_skip_isas, setup_qs8_fp32_pt, run_qs8);
/* The avx512vnni level keeps avx512bw's binary kernels. */
static const char* const bin_skip_isas[] = {"avx512vnni", NULL};
const bench_case bench_gemmi8_bin = GEMMI8_CASE("bin", 0, bin_skip_isas, setup_bin_s32, run_bin);

/* ---- weight size for the read-bandwidth loop ------------------------------------ */

/* The kernel set gemmi8 picked by itself, recorded before any case forces one. */
static char default_isa[32];

static void g8_init(void)
{
  const char* name = gemmi8_isa_name();
  if (name != NULL && strlen(name) < sizeof(default_isa)) {
    strcpy(default_isa, name);
  }
}

size_t bench_gemmi8_weight_bytes(size_t n, size_t k)
{
  if (default_isa[0] == '\0' || select_isa(default_isa) != NULL) {
    return 0;
  }
  size_t qu8 = 0, qs8 = 0;
  if (gemmi8_qu8_pack_size(n, k, &qu8) != gemmi8_status_success ||
      gemmi8_qs8_pack_size(n, k, &qs8) != gemmi8_status_success) {
    return 0;
  }
  return qu8 > qs8 ? qu8 : qs8;
}

/* ---- library ----------------------------------------------------------------- */

static void g8_context(bench_context_fn add, void* ctx)
{
  char list[256];
  add(ctx, "gemmi8_version", gemmi8_version());
  add(ctx, "gemmi8_isa_default", gemmi8_isa_name());
  list[0] = '\0';
  for (const char* const* isa = gemmi8_isa_compiled(); *isa != NULL; isa++) {
    size_t used = strlen(list);
    /* "name" or "name(unsupported)", comma separated */
    const char* note = gemmi8_isa_supported(*isa) ? "" : "(unsupported)";
    if (used + strlen(*isa) + strlen(note) + 2 < sizeof(list)) {
      strcat(list, used == 0 ? "" : ",");
      strcat(list, *isa);
      strcat(list, note);
    }
  }
  add(ctx, "gemmi8_isas", list);
}

const bench_library bench_library_gemmi8 = {"gemmi8", g8_init, g8_context};
