/*
 * Kernel-level tests: every microkernel of every family table compiled in (each
 * tile height gemm[r - 1] of each kernel set, each output), and each table's
 * row-sum function, called directly as the drivers call them (ukernel-tester.c),
 * against the independent reference, byte for byte. Run once per process, not per
 * ISA level: the tables are enumerated with gemmi8_qgemm_config_at() and
 * gemmi8_bgemm_config_at(), so kernels added to a table are tested without a change
 * here. Tables the CPU cannot run are printed and their kernels counted as skipped.
 *
 * The 4-bit weight tables have their own cases in test-ukernel-q4.c, run from here
 * (q4/<set>/<mr>x<nr>/<case>); the float output helpers are <family>/<set>/storef32/...
 *
 * Cases are named <family>/<set>/<tile>/<output>/<case>, e.g.
 *   qu8/avx512vnni/7x48c4/fixedpoint/k_lt_kr      bin/avx2/4x8/bits/n_words
 *   qs8/avx512vnni/rsum/k_sweep                    qu8/generic/pack/header
 * and each is seeded with FNV-1a(name) xor the suite's seed, so that a case gives
 * the same data when run alone: GEMMI8_TEST_FILTER=<substring>, or a glob matching
 * the whole name when it holds * ? or [ (e.g. '*k_max*'). GEMMI8_TEST_LIST=1 prints
 * the names instead of running them. A case is one pass or one failure, whatever
 * the number of kernel calls it makes; the first failing call of a case is printed
 * (case, seed, kernel, M x N x K, parameters, first bad element) and ends it.
 *
 * Quantized cases (every output unless noted):
 *   k_eq_kr, k_lt_kr, k_gt_kr, k_div_kr, k_long (1031), data_extremes (every value
 *   the type's minimum or maximum, long k: no 16-bit intermediate may overflow);
 *   subtile (every m <= MR with every n <= NR), m_lt_mr, n_lt_nr, n_gt_nr, n_div_nr,
 *   n_gt_nr_m_lt_mr: n above NR is packed in several blocks (with the column-group
 *   split of gemmi8_qblock_start) and the kernel is called once per block with that
 *   block's columns, as the driver does; no call gets more than NR columns;
 *   strides_prime (A and C row strides prime), a_row_pages (every row of A ends at
 *   an inaccessible page: no read past a row);
 *   a_zp_0 / a_zp_128 / a_zp_255 (qs8: a_zp_m128 / a_zp_0 / a_zp_127); qu8:
 *   b_zp_0 / b_zp_128 / b_zp_255, b_zp_per_channel, b_zp_per_channel_extremes, and
 *   row_sum_null on tables with a row_sum function (b_zp = 128 on xor layouts, 0 on
 *   plain ones: coef 0, params->row_sum NULL, as the driver passes it);
 *   bias_none, bias_wrap (bias anywhere in int32: results wrap modulo 2^32);
 *   k_max: K = GEMMI8_QU8_MAX_K / GEMMI8_QS8_MAX_K with the extreme products, so
 *   that accumulators reach the exact-int32 limit, of both signs;
 *   requantized outputs only: rq_per_channel, scale_above_1 (fixed-point: positive
 *   shifts, params->left_shift = 1), scale_above_1_per_channel, scale_huge
 *   (saturating left shifts), k_max_saturate (the same on the largest
 *   accumulators), scale_mixed_per_channel (positive and negative shifts in one
 *   call), scale_sweep_per_channel (every shift -31..30, multipliers 0; fp32 scales
 *   2^-40..2^20), ties, clamp_narrow / clamp_relu / clamp_max / clamp_point,
 *   c_zp_min / c_zp_max. Every other case requantizes per tensor with scales from
 *   the accumulator range (negative shifts), outputs across the 8-bit range.
 * Row sums (<family>/<set>/rsum/...): k_sweep, m_sweep, k_max, strides_prime,
 * a_row_pages. Row quantization (<family>/<set>/qrows/fenced, tables with a
 * quantize_rows kernel): equal to the generic kernel in bytes, scales and zero points,
 * every row of x and y ending at an inaccessible page. F32 stores
 * (<family>/<set>/storef32/subtile, random, specials, extremes, subnormals, nan_inputs;
 * tables with a store_f32 helper): equal to gemmi8_q8_store_f32__generic bit for bit,
 * every mr x nr up to the tile, C's gaps and guards untouched, the per-row and
 * per-column arrays ending at an inaccessible page. pack/header (for the tables in use): the row-sum flags this tester
 * derives equal those gemmi8_qu8_pack / gemmi8_qs8_pack write, and the packed blocks
 * equal the table packer's.
 * Binary cases: k_64, k_lt_64, k_gt_64, k_div_64, k_long, subtile, m_lt_mr,
 * n_lt_nr, n_gt_nr, n_words (bit outputs across words: params->n0 at every block
 * offset the driver passes), strides_prime, a_row_pages, pad_ones (padding bits
 * past k random by default, all ones here, in A and in B before packing); float and
 * bit outputs: scale_null, bias_null, scale_bias_null, exact_zeros, neg_zero; bits:
 * nonfinite. Bits outside a tile, and past n, must keep their sentinel.
 */
#include <float.h>
#include <fnmatch.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "isa.h"
#include "qgemm.h"
#include "qrows.h"
#include "ref.h"
#include "test.h"
#include "ukernel-tester.h"

/* ---- cases: names, filter, seeds --------------------------------------------------- */

static const char* filter;
static int list_only;
static uint64_t base_seed;
static unsigned long cases_run;
static char current_case[256];

static uint64_t fnv1a(const char* s)
{
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (; *s != '\0'; s++) h = (h ^ (unsigned char) *s) * UINT64_C(0x100000001b3);
  return h;
}

static int matches(const char* name)
{
  if (filter == NULL) return 1;
  if (strpbrk(filter, "*?[") != NULL) return fnmatch(filter, name, 0) == 0;
  return strstr(name, filter) != NULL;
}

/* Runs one named case (or lists it): one pass or one failure. */
static void run_case(const char* name, int (*run)(const void* kernel), const void* kernel)
{
  if (list_only) {
    printf("%s\n", name);
    return;
  }
  snprintf(current_case, sizeof(current_case), "%s", name);
  uk_case_start(current_case, base_seed ^ fnv1a(name));
  cases_run++;
  if (run(kernel)) t_pass();
  current_case[0] = '\0';
}

static void on_crash(int sig)
{
  /* async-signal-safe: write() only */
  static const char head[] = "\ncrashed in kernel case: ";
  if (write(2, head, sizeof(head) - 1) < 0 ||
      write(2, current_case, strlen(current_case)) < 0 || write(2, "\n", 1) < 0) {
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static size_t next_prime(size_t n)
{
  for (;; n++) {
    int prime = n >= 2;
    for (size_t d = 2; d * d <= n && prime; d++) prime = n % d != 0;
    if (prime) return n;
  }
}

/* Loop steps: every value, or a sample of them with GEMMI8_TEST_QUICK. */
static size_t step(size_t full_count)
{
  return t_quick && full_count > 8 ? 3 : 1;
}

/* ---- quantized cases ------------------------------------------------------------------- */

#define Q_KERNEL const uk_qkernel* kn = kernel
#define Q_DIMS                                                                        \
  const size_t mr = kn->mr, nr = kn->cfg->nr, kr = kn->cfg->kr;                       \
  (void) mr, (void) nr, (void) kr
#define Q_NEW(t) uk_qtest t = uk_qtest_defaults(kn)

static int qc_k_eq_kr(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  Q_NEW(t);
  t.k = kr;
  return uk_qtest_run(kn, &t);
}

static int qc_k_lt_kr(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  for (size_t k = 1; k < kr; k++) {
    Q_NEW(t);
    t.k = k;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static int qc_k_gt_kr(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  for (size_t k = kr + 1; k < 2 * kr + (kr == 1 ? 2 : 0); k++) {
    Q_NEW(t);
    t.k = k;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static int qc_k_div_kr(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  static const size_t factors[] = {2, 3, 5, 8, 16};
  for (size_t f = 0; f < T_COUNT(factors); f++) {
    Q_NEW(t);
    t.k = factors[f] * kr;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static int qc_k_long(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  Q_NEW(t);
  t.k = t_quick ? 259 : 1031;
  t.n = nr + 1;
  return uk_qtest_run(kn, &t);
}

static int qc_data_extremes(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  const size_t ks[] = {kr, 2 * kr + 3, t_quick ? 259 : 1031};
  for (size_t i = 0; i < T_COUNT(ks); i++) {
    Q_NEW(t);
    t.k = ks[i];
    t.data = uk_data_extremes;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

/* Extremes on blocks the packer marks pair-safe (qs8): -128 and 127 everywhere but
 * never -128 at depths d and d + 8 of a group of 16 in one column. */
static int qc_data_unpaired(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  const size_t ks[] = {16, 17, 40, 64, t_quick ? 259 : 1031};
  for (size_t i = 0; i < T_COUNT(ks); i++) {
    Q_NEW(t);
    t.k = ks[i];
    t.n = i % 2 ? nr + 1 : nr;
    t.data = uk_data_unpaired;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static int qc_subtile(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  const size_t ks[] = {1, kr, 2 * kr + 3};
  for (size_t m = 1; m <= mr; m++) {
    for (size_t n = 1; n <= nr; n += step(nr)) {
      Q_NEW(t);
      t.m = m;
      t.n = n;
      t.k = ks[(m + n) % 3];
      if (!uk_qtest_run(kn, &t)) return 0;
    }
  }
  return 1;
}

static int qc_m_lt_mr(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  for (size_t m = 1; m < mr; m++) {
    Q_NEW(t);
    t.m = m;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static int qc_n_lt_nr(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  for (size_t n = 1; n < nr; n += step(nr)) {
    Q_NEW(t);
    t.n = n;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static int qc_n_gt_nr(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  for (size_t n = nr + 1; n < 2 * nr + (nr == 1 ? 2 : 0); n += step(nr)) {
    Q_NEW(t);
    t.n = n;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static int qc_n_div_nr(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  for (size_t f = 2; f <= 3; f++) {
    Q_NEW(t);
    t.n = f * nr;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static int qc_n_gt_nr_m_lt_mr(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  for (size_t m = 1; m <= mr; m++) {
    Q_NEW(t);
    t.m = m;
    t.n = nr + 1 + (m * 7) % (2 * nr);
    t.k = m % 2 ? kr + 1 : 3 * kr;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static int qc_strides_prime(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  const size_t ks[] = {kr, kr + 1, 2 * kr + 3, 37};
  const size_t ns[] = {nr, nr > 1 ? nr - 1 : 1, nr + 5, 2 * nr + 1};
  for (size_t i = 0; i < T_COUNT(ks); i++) {
    Q_NEW(t);
    t.k = ks[i];
    t.n = ns[i];
    t.a_stride = next_prime(t.k + 1 + i * 4);
    t.c_stride = next_prime(t.n + 1 + i * 2);
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static int qc_a_row_pages(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  const size_t ks[] = {1, kr > 1 ? kr - 1 : 2, kr, kr + 1, 2 * kr + 3, 17, 33, 63, 65, 127};
  for (size_t i = 0; i < T_COUNT(ks); i++) {
    Q_NEW(t);
    t.k = ks[i];
    t.a_row_pages = 1;
    if (i % 3 == 2) t.m = 1;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

/* Zero points: a default tile and a longer, wider one. */
static int q_zero_point(const uk_qkernel* kn, int a_given, int32_t a_zp, enum uk_b_zp mode,
                        int32_t b_zp)
{
  Q_DIMS;
  for (int run = 0; run < 2; run++) {
    Q_NEW(t);
    t.a_zp_given = a_given;
    t.a_zp = a_zp;
    t.b_zp_mode = mode;
    t.b_zp = b_zp;
    if (run == 1) {
      t.k = 67;
      t.n = 2 * nr + 3;
    }
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static int qc_a_zp_0(const void* kernel)
{
  return q_zero_point(kernel, 1, 0, uk_bzp_random, 0);
}
static int qc_a_zp_128(const void* kernel)
{
  return q_zero_point(kernel, 1, 128, uk_bzp_random, 0);
}
static int qc_a_zp_255(const void* kernel)
{
  return q_zero_point(kernel, 1, 255, uk_bzp_random, 0);
}
static int qc_a_zp_m128(const void* kernel)
{
  return q_zero_point(kernel, 1, -128, uk_bzp_random, 0);
}
static int qc_a_zp_127(const void* kernel)
{
  return q_zero_point(kernel, 1, 127, uk_bzp_random, 0);
}
static int qc_b_zp_0(const void* kernel)
{
  return q_zero_point(kernel, 0, 0, uk_bzp_tensor, 0);
}
static int qc_b_zp_128(const void* kernel)
{
  return q_zero_point(kernel, 0, 0, uk_bzp_tensor, 128);
}
static int qc_b_zp_255(const void* kernel)
{
  return q_zero_point(kernel, 0, 0, uk_bzp_tensor, 255);
}
static int qc_b_zp_per_channel(const void* kernel)
{
  return q_zero_point(kernel, 0, 0, uk_bzp_channel, 0);
}

static int qc_b_zp_per_channel_extremes(const void* kernel)
{
  Q_KERNEL;
  return q_zero_point(kn, 1, 0, uk_bzp_channel_extremes, 0) &&
         q_zero_point(kn, 1, 255, uk_bzp_channel_extremes, 0);
}

/* The zero point that makes every coef 0: the driver passes no row sums. */
static int qc_row_sum_null(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  for (size_t m = 1; m <= mr; m++) {
    Q_NEW(t);
    t.m = m;
    t.n = m % 2 ? nr : nr + 3;
    t.k = m % 2 ? 2 * kr + 3 : 67;
    t.b_zp_mode = uk_bzp_tensor;
    t.b_zp = (kn->cfg->flags & GEMMI8_QLAYOUT_XOR) ? 128 : 0;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static int qc_bias_none(const void* kernel)
{
  Q_KERNEL;
  Q_NEW(t);
  t.bias = uk_bias_none;
  return uk_qtest_run(kn, &t);
}

static int qc_bias_wrap(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  for (int run = 0; run < 2; run++) {
    Q_NEW(t);
    t.bias = uk_bias_wrap;
    t.data = run ? uk_data_extremes : uk_data_random;
    t.k = run ? 301 : t.k;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

/* K at the exact-int32 limit: run 0 columns of both signs, run 1 one sign per
 * tensor (qu8: b_zp per tensor, uniform coef), run 2 (full runs only) columns of both
 * signs from the other a_zp, in two blocks. */
static int q_k_max(const uk_qkernel* kn, enum uk_scale scale)
{
  Q_DIMS;
  const int sgn = kn->is_signed;
  const int runs = t_quick ? 1 : 3;
  for (int run = 0; run < runs; run++) {
    Q_NEW(t);
    t.k = sgn ? GEMMI8_QS8_MAX_K : GEMMI8_QU8_MAX_K;
    t.data = uk_data_kmax;
    t.bias = uk_bias_none;
    t.scale = scale;
    t.a_zp_given = 1;
    if (sgn) {
      t.a_zp = run == 1 ? -128 : 127;
    } else {
      t.a_zp = run == 0 ? 0 : 255;
      t.b_zp_mode = run == 1 ? uk_bzp_tensor : uk_bzp_channel_extremes;
      t.b_zp = 0;
    }
    if (run == 2) t.n = nr + 1;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static int qc_k_max(const void* kernel)
{
  return q_k_max(kernel, uk_scale_span);
}

static int qc_k_max_saturate(const void* kernel)
{
  return q_k_max(kernel, uk_scale_huge);
}

/* Requantization variants on a default tile and on a wider, longer one. */
static int q_requant(const uk_qkernel* kn, int per_channel, enum uk_scale scale,
                     enum uk_data data, enum uk_clamp clamp, enum uk_c_zp c_zp)
{
  Q_DIMS;
  for (int run = 0; run < 2; run++) {
    Q_NEW(t);
    t.per_channel = per_channel;
    t.scale = scale;
    t.data = data;
    t.clamp = clamp;
    t.c_zp = c_zp;
    if (data == uk_data_small) t.k = run ? 2 * kr + 1 : kr;
    if (run == 1) {
      t.n = 2 * nr + 3;
      if (data != uk_data_small) t.k = 67;
      if (scale == uk_scale_sweep && t.n < 64) t.n = 64;
    } else if (scale == uk_scale_sweep && per_channel) {
      t.n = nr < 62 ? 62 : nr; /* every shift once */
    }
    if (run == 1) t.m = mr > 1 ? mr - 1 : 1;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static int qc_rq_per_channel(const void* kernel)
{
  return q_requant(kernel, 1, uk_scale_span, uk_data_random, uk_clamp_none, uk_czp_span);
}
static int qc_scale_above_1(const void* kernel)
{
  return q_requant(kernel, 0, uk_scale_above_1, uk_data_small, uk_clamp_none, uk_czp_span);
}
static int qc_scale_above_1_per_channel(const void* kernel)
{
  return q_requant(kernel, 1, uk_scale_above_1, uk_data_small, uk_clamp_none, uk_czp_span);
}
static int qc_scale_huge(const void* kernel)
{
  return q_requant(kernel, 0, uk_scale_huge, uk_data_random, uk_clamp_none, uk_czp_span) &&
         q_requant(kernel, 1, uk_scale_huge, uk_data_small, uk_clamp_none, uk_czp_span);
}
static int qc_scale_mixed_per_channel(const void* kernel)
{
  return q_requant(kernel, 1, uk_scale_mixed, uk_data_small, uk_clamp_none, uk_czp_span) &&
         q_requant(kernel, 1, uk_scale_mixed, uk_data_random, uk_clamp_none, uk_czp_span);
}
static int qc_scale_sweep_per_channel(const void* kernel)
{
  return q_requant(kernel, 1, uk_scale_sweep, uk_data_random, uk_clamp_none, uk_czp_span) &&
         q_requant(kernel, 1, uk_scale_sweep, uk_data_small, uk_clamp_none, uk_czp_span);
}
static int qc_ties(const void* kernel)
{
  return q_requant(kernel, 0, uk_scale_ties, uk_data_small, uk_clamp_none, uk_czp_span) &&
         q_requant(kernel, 1, uk_scale_ties, uk_data_small, uk_clamp_none, uk_czp_span);
}
static int qc_clamp_narrow(const void* kernel)
{
  return q_requant(kernel, 0, uk_scale_span, uk_data_random, uk_clamp_narrow, uk_czp_span) &&
         q_requant(kernel, 1, uk_scale_span, uk_data_random, uk_clamp_narrow, uk_czp_span);
}
static int qc_clamp_relu(const void* kernel)
{
  return q_requant(kernel, 0, uk_scale_span, uk_data_random, uk_clamp_relu, uk_czp_span);
}
static int qc_clamp_max(const void* kernel)
{
  return q_requant(kernel, 0, uk_scale_span, uk_data_random, uk_clamp_max, uk_czp_span);
}
static int qc_clamp_point(const void* kernel)
{
  return q_requant(kernel, 0, uk_scale_span, uk_data_random, uk_clamp_point, uk_czp_span);
}
static int qc_c_zp_min(const void* kernel)
{
  return q_requant(kernel, 0, uk_scale_span, uk_data_random, uk_clamp_none, uk_czp_min);
}
static int qc_c_zp_max(const void* kernel)
{
  return q_requant(kernel, 0, uk_scale_span, uk_data_random, uk_clamp_none, uk_czp_max);
}

/* When a case applies. */
enum {
  when_requant = 1u << 0, /* fixedpoint and fp32 outputs */
  when_qu8 = 1u << 1,
  when_qs8 = 1u << 2,
  when_kr2 = 1u << 3,     /* KR > 1 */
  when_mr2 = 1u << 4,     /* tile height > 1 */
  when_nr2 = 1u << 5,     /* NR > 1 */
  when_row_sum = 1u << 6, /* the table has a row_sum function */
  when_f32 = 1u << 7,     /* binary float and bits outputs */
  when_bits = 1u << 8,    /* binary bits output */
  when_igemm = 1u << 9,   /* igemm kernels only */
};

typedef struct qcase {
  const char* name;
  unsigned when;
  int (*run)(const void* kernel);
} qcase;

/* igemm: tap counts from 1 (no padding between taps) to a 7x7 filter, with depths
 * below, at and above KR, some taps at the zero buffer. */
static int qc_i_taps(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  static const size_t tap_counts[] = {1, 2, 3, 4, 9, 25, 49};
  for (size_t i = 0; i < T_COUNT(tap_counts); i++) {
    const size_t ks[] = {1, kr > 1 ? kr - 1 : 2, kr, kr + 1, 2 * kr + 3, 16 * kr + 1};
    for (size_t j = 0; j < T_COUNT(ks); j += tap_counts[i] > 9 ? 2 : 1) {
      Q_NEW(t);
      t.ks = tap_counts[i];
      t.k = ks[j];
      t.m = 1 + (i + j) % mr;
      if (!uk_qtest_run(kn, &t)) return 0;
    }
  }
  return 1;
}

/* Every pointer at the zero buffer (a pixel in the padding everywhere), and none. */
static int qc_i_zero_taps(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  for (int z = 0; z <= 2; z += 2) {
    for (size_t k = 1; k <= 2 * kr + 1; k += kr) {
      Q_NEW(t);
      t.zero_taps = z;
      t.k = k;
      t.ks = 5;
      if (!uk_qtest_run(kn, &t)) return 0;
    }
  }
  return 1;
}

/* Offsets into the pixels (a group's channels), with rows at page ends: the kernel
 * reads kc bytes from pointer + a_offset and no further. */
static int qc_i_a_offset(const void* kernel)
{
  Q_KERNEL;
  Q_DIMS;
  static const size_t offsets[] = {0, 1, 3, 16, 63, 64, 100};
  for (size_t i = 0; i < T_COUNT(offsets); i++) {
    Q_NEW(t);
    t.a_offset = offsets[i];
    t.a_row_pages = i % 2;
    t.k = i % 3 == 0 ? kr + 1 : 3 * kr + i;
    if (!uk_qtest_run(kn, &t)) return 0;
  }
  return 1;
}

static const qcase qcases[] = {
    {"taps", when_igemm, qc_i_taps},
    {"zero_taps", when_igemm, qc_i_zero_taps},
    {"a_offset", when_igemm, qc_i_a_offset},
    {"k_eq_kr", 0, qc_k_eq_kr},
    {"k_lt_kr", when_kr2, qc_k_lt_kr},
    {"k_gt_kr", 0, qc_k_gt_kr},
    {"k_div_kr", 0, qc_k_div_kr},
    {"k_long", 0, qc_k_long},
    {"data_extremes", 0, qc_data_extremes},
    {"data_unpaired", when_qs8, qc_data_unpaired},
    {"subtile", 0, qc_subtile},
    {"m_lt_mr", when_mr2, qc_m_lt_mr},
    {"n_lt_nr", when_nr2, qc_n_lt_nr},
    {"n_gt_nr", 0, qc_n_gt_nr},
    {"n_div_nr", 0, qc_n_div_nr},
    {"n_gt_nr_m_lt_mr", when_mr2, qc_n_gt_nr_m_lt_mr},
    {"strides_prime", 0, qc_strides_prime},
    {"a_row_pages", 0, qc_a_row_pages},
    {"a_zp_0", 0, qc_a_zp_0},
    {"a_zp_128", when_qu8, qc_a_zp_128},
    {"a_zp_255", when_qu8, qc_a_zp_255},
    {"a_zp_m128", when_qs8, qc_a_zp_m128},
    {"a_zp_127", when_qs8, qc_a_zp_127},
    {"b_zp_0", when_qu8, qc_b_zp_0},
    {"b_zp_128", when_qu8, qc_b_zp_128},
    {"b_zp_255", when_qu8, qc_b_zp_255},
    {"b_zp_per_channel", when_qu8, qc_b_zp_per_channel},
    {"b_zp_per_channel_extremes", when_qu8, qc_b_zp_per_channel_extremes},
    {"row_sum_null", when_qu8 | when_row_sum, qc_row_sum_null},
    {"bias_none", 0, qc_bias_none},
    {"bias_wrap", 0, qc_bias_wrap},
    {"k_max", 0, qc_k_max},
    {"k_max_saturate", when_requant, qc_k_max_saturate},
    {"rq_per_channel", when_requant, qc_rq_per_channel},
    {"scale_above_1", when_requant, qc_scale_above_1},
    {"scale_above_1_per_channel", when_requant, qc_scale_above_1_per_channel},
    {"scale_huge", when_requant, qc_scale_huge},
    {"scale_mixed_per_channel", when_requant, qc_scale_mixed_per_channel},
    {"scale_sweep_per_channel", when_requant, qc_scale_sweep_per_channel},
    {"ties", when_requant, qc_ties},
    {"clamp_narrow", when_requant, qc_clamp_narrow},
    {"clamp_relu", when_requant, qc_clamp_relu},
    {"clamp_max", when_requant, qc_clamp_max},
    {"clamp_point", when_requant, qc_clamp_point},
    {"c_zp_min", when_requant, qc_c_zp_min},
    {"c_zp_max", when_requant, qc_c_zp_max},
};

static int q_applies(const uk_qkernel* kn, unsigned when)
{
  if ((when & when_requant) && kn->output == uk_out_s32) return 0;
  if ((when & when_qu8) && kn->is_signed) return 0;
  if ((when & when_qs8) && !kn->is_signed) return 0;
  if ((when & when_kr2) && kn->cfg->kr < 2) return 0;
  if ((when & when_mr2) && kn->mr < 2) return 0;
  if ((when & when_nr2) && kn->cfg->nr < 2) return 0;
  if ((when & when_row_sum) && kn->cfg->row_sum == NULL) return 0;
  if ((when & when_igemm) && kn->ifn == NULL) return 0;
  return 1;
}

/* ---- row sums and packing ------------------------------------------------------------ */

typedef struct qtable {
  const struct gemmi8_qgemm_config* cfg;
  int is_signed;
} qtable;

static int rc_k_sweep(const void* table)
{
  const qtable* q = table;
  for (size_t k = 1; k <= 200; k += t_quick ? 3 : 1) {
    if (!uk_rsum_run(q->cfg, q->is_signed, 1 + k % 8, k, 0, 0, k % 2 ? uk_data_random : uk_data_extremes)) {
      return 0;
    }
  }
  return 1;
}

static int rc_m_sweep(const void* table)
{
  const qtable* q = table;
  for (size_t m = 1; m <= 2 * GEMMI8_MAX_MR + 1; m++) {
    if (!uk_rsum_run(q->cfg, q->is_signed, m, 64 + m, 0, 0, uk_data_random)) return 0;
  }
  return 1;
}

static int rc_k_max(const void* table)
{
  const qtable* q = table;
  const size_t k = q->is_signed ? GEMMI8_QS8_MAX_K : GEMMI8_QU8_MAX_K;
  return uk_rsum_run(q->cfg, q->is_signed, 3, k, 0, 0, uk_data_extremes) &&
         uk_rsum_run(q->cfg, q->is_signed, 2, k, 0, 0, uk_data_random);
}

static int rc_strides_prime(const void* table)
{
  const qtable* q = table;
  static const size_t ks[] = {1, 15, 16, 17, 63, 64, 65, 129};
  for (size_t i = 0; i < T_COUNT(ks); i++) {
    if (!uk_rsum_run(q->cfg, q->is_signed, 5, ks[i], next_prime(ks[i] + 2), 0, uk_data_random)) {
      return 0;
    }
  }
  return 1;
}

static int rc_a_row_pages(const void* table)
{
  const qtable* q = table;
  static const size_t ks[] = {1, 7, 15, 16, 17, 31, 63, 64, 65, 127, 200};
  for (size_t i = 0; i < T_COUNT(ks); i++) {
    if (!uk_rsum_run(q->cfg, q->is_signed, 1 + i % 4, ks[i], 0, 1, uk_data_extremes)) return 0;
  }
  return 1;
}

/* Row sums through pointers: depths below, at and past one 64-byte piece, 1 to 49
 * taps, every row count of the tile, offsets. */
static int rc_indirect(const void* table)
{
  const qtable* q = table;
  static const size_t kcs[] = {1, 3, 4, 15, 21, 63, 64, 65, 130};
  static const size_t taps[] = {1, 2, 3, 9, 49};
  for (size_t i = 0; i < T_COUNT(kcs); i++) {
    for (size_t t = 0; t < T_COUNT(taps); t += t_quick ? 2 : 1) {
      const size_t rows = 1 + (i + t) % q->cfg->mr;
      if (!uk_irsum_run(q->cfg, q->is_signed, rows, kcs[i], taps[t], (i * 7) % 70,
                        (i + t) % 2 ? uk_data_random : uk_data_extremes)) {
        return 0;
      }
    }
  }
  return 1;
}

/* Row quantization: the table's kernel against the generic one, rows of x and y each
 * ending at an inaccessible page (a read or write past k faults), k from 1 to 300 and
 * a few long rows; values of varied magnitude, zeros, ties, subnormals. */
static float qr_value(size_t i, int mode)
{
  static const float special[] = {0.0f, -0.0f, 1e-45f, -3e-44f, 1e-39f, 0.5f, -0.5f,
                                  1.5f, 127.5f, -255.0f, 3e38f, -3e38f};
  switch (mode) {
    case 0: return (float) (t_unit() * 2.0 - 1.0) * (float) (1 << (i % 20));
    case 1: return (float) t_range(-510, 510) * 0.25f; /* ties once scaled */
    case 2: return special[t_below((uint32_t) T_COUNT(special))];
    default: return t_below(4) ? 0.0f : (float) t_unit() * 1e-40f;
  }
}

static int qr_run(const qtable* q, size_t rows, size_t k)
{
  const gemmi8_quantize_rows_fn ref = q->is_signed ? gemmi8_qs8_quantize_rows__generic
                                                   : gemmi8_qu8_quantize_rows__generic;
  t_fence fx, fy;
  float* x = t_fence_init(&fx, rows, k * sizeof(float), 0);
  const int mode = (int) ((rows + k) % 4);
  for (size_t r = 0; r < rows; r++) {
    float* row = (float*) ((unsigned char*) x + r * fx.stride);
    for (size_t i = 0; i < k; i++) row[i] = qr_value(i, mode);
  }
  t_fence_seal(&fx);
  unsigned char* y = t_fence_init(&fy, rows, k, 0);
  t_fence_seal(&fy);
  unsigned char* want = t_alloc(rows * k);
  float* scale = t_alloc(2 * rows * sizeof(float));
  int32_t* zp = t_alloc(2 * rows * sizeof(int32_t));
  ref(rows, k, x, fx.stride, want, k, scale + rows, zp + rows);
  for (size_t r = 0; r < rows; r++) memcpy(t_fence_image(&fy, y + r * fy.stride), want + r * k, k);
  q->cfg->quantize_rows(rows, k, x, fx.stride, y, fy.stride, scale, zp);
  long at = 0;
  int ok = 1;
  if (!t_fence_intact(&fy, &at)) {
    t_fail(current_case, "rows %zu k %zu: y differs from the generic kernel's at byte %ld", rows, k,
           at);
    ok = 0;
  } else if (!t_fence_intact(&fx, &at)) {
    t_fail(current_case, "rows %zu k %zu: x changed at byte %ld", rows, k, at);
    ok = 0;
  } else if (memcmp(scale, scale + rows, rows * sizeof(float)) != 0 ||
             memcmp(zp, zp + rows, rows * sizeof(int32_t)) != 0) {
    t_fail(current_case, "rows %zu k %zu: scales or zero points differ from the generic's", rows,
           k);
    ok = 0;
  }
  free(zp);
  free(scale);
  free(want);
  t_fence_free(&fy);
  t_fence_free(&fx);
  return ok;
}

static int qr_fenced(const void* table)
{
  const qtable* q = table;
  for (size_t k = 1; k <= 300; k += t_quick ? 7 : 1) {
    if (!qr_run(q, 1 + k % 3, k)) return 0;
  }
  static const size_t long_k[] = {1024, 4099, 20000};
  for (size_t i = 0; i < T_COUNT(long_k); i++) {
    if (!qr_run(q, 2, long_k[i])) return 0;
  }
  return 1;
}

/* f32 stores (rows quantized at run time): the table's store_f32 against
 * gemmi8_q8_store_f32__generic, bit for bit. Every mr <= MR with every nr <= NR; acc
 * rows acc_stride >= nr apart, C rows c_stride > 4 nr bytes apart, the bytes between
 * and around them random and checked; the per-row and per-column arrays (and the last
 * row of acc) each end at an inaccessible page. Accumulators random and extreme,
 * zero points at the type's ends (and anywhere in int32), scales and biases from
 * specials (zeros of both signs, subnormals, FLT_MIN, 1e30, FLT_MAX, infinities) and
 * random magnitudes, products and sums that land among the subnormals, NaNs of any
 * payload in one input array at a time, clamps infinite, narrow, equal, reversed,
 * signed zeros, subnormal or NaN. */
enum sf_mode { sf_random, sf_specials, sf_extremes, sf_tiny, sf_cancel, sf_nan, sf_modes };

typedef struct sf_buffers {
  t_fence acc, c, row_scale, row_zp, col_sum, col_scale, col_bias;
} sf_buffers;

static const float sf_special_values[] = {0.0f,     -0.0f,    FLT_MIN, -FLT_MIN, 1e-45f,   -1e-45f,
                                    1e-40f,   -3e-39f,  1e-38f,  1e30f,    -1e30f,   FLT_MAX,
                                    -FLT_MAX, INFINITY, -INFINITY, 1.0f,   -1.0f,    0.5f};

/* Random sign, magnitude in [2^lo, 2^(hi+1)) (subnormal or infinite at the ends). */
static float sf_magnitude(int lo, int hi)
{
  const float v = ldexpf((float) (1.0 + t_unit()), (int) t_range(lo, hi));
  return t_below(2) ? -v : v;
}

static int32_t sf_acc(enum sf_mode mode)
{
  static const int32_t ends[] = {INT32_MIN, INT32_MAX, INT32_MIN + 1, INT32_MAX - 1, 0, 1, -1};
  switch (mode) {
    case sf_extremes: return t_below(4) ? T_PICK(ends) : (int32_t) t_rand64();
    case sf_specials: return t_below(2) ? (int32_t) t_rand64() : (int32_t) t_range(-1000, 1000);
    default: return (int32_t) t_range(-(INT64_C(1) << 24), INT64_C(1) << 24);
  }
}

static int32_t sf_col_sum(enum sf_mode mode)
{
  static const int32_t ends[] = {INT32_MIN, INT32_MAX, 0, 1, -1};
  if (mode == sf_extremes) return t_below(2) ? T_PICK(ends) : (int32_t) t_rand64();
  return (int32_t) t_range(-128 * 4096, 127 * 4096);
}

static int32_t sf_zero_point(enum sf_mode mode, int32_t lo, int32_t hi)
{
  switch (t_below(mode == sf_extremes ? 5 : 4)) {
    case 0: return lo;
    case 1: return hi;
    case 2: return 0;
    case 3: return (int32_t) t_range(lo, hi);
    default: return (int32_t) t_rand64(); /* the helpers are exact for any int32 */
  }
}

/* A row scale (col 0) or a column scale (col 1) or a bias (col 2). */
static float sf_float(enum sf_mode mode, int which)
{
  switch (mode) {
    case sf_random:
    case sf_nan:
      if (which == 2) return t_below(4) ? sf_magnitude(-8, 4) : 0.0f;
      return fabsf(sf_magnitude(which == 0 ? -14 : -10, which == 0 ? -4 : -2));
    case sf_specials:
    case sf_extremes:
      return t_below(2) ? T_PICK(sf_special_values) : sf_magnitude(-149, 127);
    default: /* tiny, cancel: products near and below FLT_MIN */
      if (which == 0) return fabsf(sf_magnitude(-80, -60));
      if (which == 1 && mode == sf_tiny && t_below(8) == 0) return t_below(2) ? INFINITY : -INFINITY;
      if (which == 1) return sf_magnitude(mode == sf_cancel ? -62 : -85, mode == sf_cancel ? -56 : -50);
      switch (t_below(4)) {
        case 0: return 0.0f;
        case 1: return sf_magnitude(-149, -127);
        case 2: return sf_magnitude(-130, -120);
        default: return T_PICK(sf_special_values);
      }
  }
}

/* The clamp: from the unclamped results (count of them) or from the specials. */
static void sf_clamp(struct gemmi8_qparams* p, const float* v, size_t count)
{
  static const float bounds[] = {0.0f,     -0.0f,   1e-45f,    -1e-45f,  1e-39f,  -1e-39f,
                                 FLT_MIN,  -FLT_MIN, 1.0f,     -1.0f,    1e30f,   -1e30f,
                                 FLT_MAX,  -FLT_MAX, INFINITY, -INFINITY, NAN,    -NAN};
  const float a = v[t_below((uint32_t) count)], b = v[t_below((uint32_t) count)];
  switch (t_below(7)) {
    case 0:
      p->out_min = -INFINITY, p->out_max = INFINITY;
      break;
    case 1: /* narrow: between two results */
      p->out_min = a < b ? a : b, p->out_max = a < b ? b : a;
      break;
    case 2: /* min equal to max */
      p->out_min = a, p->out_max = a;
      break;
    case 3: /* reversed */
      p->out_min = a < b ? b : a, p->out_max = a < b ? a : b;
      break;
    case 4: /* relu with either zero */
      p->out_min = t_below(2) ? 0.0f : -0.0f, p->out_max = t_below(2) ? INFINITY : a;
      break;
    default: /* anything, NaN and subnormals included */
      p->out_min = T_PICK(bounds), p->out_max = T_PICK(bounds);
      break;
  }
}

static uint32_t sf_bits(float x)
{
  uint32_t u;
  memcpy(&u, &x, sizeof(u));
  return u;
}

static int sf_run(const qtable* q, sf_buffers* bf, size_t mr, size_t nr, size_t acc_stride,
                  size_t c_stride, enum sf_mode mode)
{
  const int32_t zp_lo = q->is_signed ? -128 : 0, zp_hi = q->is_signed ? 127 : 255;
  int32_t* acc = t_fence_reinit(&bf->acc, T_FENCE_END, mr, nr * 4, acc_stride * 4);
  float* row_scale = t_fence_reinit(&bf->row_scale, T_FENCE_END, 1, mr * 4, 0);
  int32_t* row_zp = t_fence_reinit(&bf->row_zp, T_FENCE_END, 1, mr * 4, 0);
  int32_t* col_sum = t_fence_reinit(&bf->col_sum, T_FENCE_END, 1, nr * 4, 0);
  float* col_scale = t_fence_reinit(&bf->col_scale, T_FENCE_END, 1, nr * 4, 0);
  float* col_bias = t_fence_reinit(&bf->col_bias, T_FENCE_END, 1, nr * 4, 0);
  for (size_t i = 0; i < mr; i++) {
    row_scale[i] = sf_float(mode, 0);
    row_zp[i] = sf_zero_point(mode, zp_lo, zp_hi);
    for (size_t j = 0; j < nr; j++) acc[i * acc_stride + j] = sf_acc(mode);
  }
  for (size_t j = 0; j < nr; j++) {
    col_sum[j] = sf_col_sum(mode);
    col_scale[j] = sf_float(mode, 1);
    col_bias[j] = sf_float(mode, 2);
  }
  if (mode == sf_cancel) {
    /* bias within an ulp or two of -(row 0's product): sums below FLT_MIN, or zero */
    for (size_t j = 0; j < nr; j++) {
      const int32_t t = (int32_t) ((uint32_t) acc[j] - (uint32_t) row_zp[0] * (uint32_t) col_sum[j]);
      const float v = (float) t * row_scale[0] * col_scale[j];
      const float toward = t_below(2) ? INFINITY : -INFINITY;
      col_bias[j] = t_below(3) ? -nextafterf(v, toward) : -v;
    }
  }
  if (mode == sf_nan) {
    /* NaNs of any payload, quiet and signaling, in one of the arrays (so that no
     * operation meets two NaNs: which one it returns is the compiler's choice) */
    const int which = (int) t_below(3);
    float* x = which == 0 ? row_scale : (which == 1 ? col_scale : col_bias);
    const size_t count = which == 0 ? mr : nr;
    for (size_t k = 0; k < count; k++) {
      if (t_below(2)) continue;
      const uint32_t bits = (t_below(2) ? UINT32_C(0x80000000) : 0) | UINT32_C(0x7f800000) |
                            (1 + t_below(0x7fffff));
      memcpy(&x[k], &bits, sizeof(bits));
    }
  }
  struct gemmi8_qparams p;
  memset(&p, 0, sizeof(p));
  p.scale = col_scale;
  p.channel_stride = 1;
  p.row_scale = row_scale;
  p.row_zero_point = row_zp;
  p.col_sum = col_sum;
  p.col_bias = col_bias;
  p.out_min = -INFINITY;
  p.out_max = INFINITY;
  float* want = t_alloc(mr * nr * sizeof(float));
  gemmi8_q8_store_f32__generic(mr, nr, acc, acc_stride, want, nr * sizeof(float), &p);
  sf_clamp(&p, want, mr * nr);
  gemmi8_q8_store_f32__generic(mr, nr, acc, acc_stride, want, nr * sizeof(float), &p);

  unsigned char* c = t_fence_reinit(&bf->c, T_FENCE_END, mr, nr * sizeof(float), c_stride);
  t_fence* inputs[] = {&bf->acc, &bf->row_scale, &bf->row_zp, &bf->col_sum, &bf->col_scale,
                       &bf->col_bias};
  for (size_t f = 0; f < T_COUNT(inputs); f++) t_fence_seal(inputs[f]);
  t_fence_seal(&bf->c);
  for (size_t i = 0; i < mr; i++) {
    memcpy(t_fence_image(&bf->c, c + i * c_stride), want + i * nr, nr * sizeof(float));
  }
  q->cfg->store_f32(mr, nr, acc, acc_stride, c, c_stride, &p);

  int ok = 1;
  long at = 0;
  for (size_t i = 0; i < mr && ok; i++) {
    for (size_t j = 0; j < nr; j++) {
      float got;
      memcpy(&got, c + i * c_stride + j * sizeof(float), sizeof(got));
      if (sf_bits(got) == sf_bits(want[i * nr + j])) continue;
      t_fail(current_case,
             "mr %zu nr %zu acc_stride %zu c_stride %zu: C[%zu][%zu] = %.9g (0x%08x), the generic "
             "store's %.9g (0x%08x); acc %d, zero point %d, col_sum %d, row scale %.9g (0x%08x), "
             "scale %.9g (0x%08x), bias %.9g (0x%08x), clamp [%.9g (0x%08x), %.9g (0x%08x)]",
             mr, nr, acc_stride, c_stride, i, j, got, sf_bits(got), want[i * nr + j],
             sf_bits(want[i * nr + j]), acc[i * acc_stride + j], row_zp[i], col_sum[j],
             row_scale[i], sf_bits(row_scale[i]), col_scale[j], sf_bits(col_scale[j]),
             col_bias[j], sf_bits(col_bias[j]), p.out_min, sf_bits(p.out_min), p.out_max,
             sf_bits(p.out_max));
      ok = 0;
      break;
    }
  }
  if (ok && !t_fence_intact(&bf->c, &at)) {
    t_fail(current_case, "mr %zu nr %zu c_stride %zu: C changed outside the tile at byte %ld", mr,
           nr, c_stride, at);
    ok = 0;
  }
  for (size_t f = 0; f < T_COUNT(inputs) && ok; f++) {
    if (!t_fence_intact(inputs[f], &at)) {
      t_fail(current_case, "mr %zu nr %zu: input %zu changed at byte %ld", mr, nr, f, at);
      ok = 0;
    }
  }
  free(want);
  return ok;
}

static void sf_free(sf_buffers* bf)
{
  t_fence_free(&bf->acc);
  t_fence_free(&bf->c);
  t_fence_free(&bf->row_scale);
  t_fence_free(&bf->row_zp);
  t_fence_free(&bf->col_sum);
  t_fence_free(&bf->col_scale);
  t_fence_free(&bf->col_bias);
}

/* Runs `rounds` calls of the mode (-1: every mode in turn) on every mr x nr sub-tile
 * (rounds 0) or on random ones, the full tile most often. */
static int sf_sweep(const qtable* q, int mode, size_t rounds)
{
  const size_t mr_max = q->cfg->mr, nr_max = q->cfg->nr;
  sf_buffers bf;
  memset(&bf, 0, sizeof(bf));
  int ok = 1;
  const size_t calls = rounds != 0 ? rounds : mr_max * nr_max;
  for (size_t r = 0; r < calls && ok; r++) {
    size_t mr, nr;
    if (rounds == 0) {
      mr = 1 + r / nr_max, nr = 1 + r % nr_max;
    } else if (t_below(2)) {
      mr = mr_max, nr = nr_max;
    } else {
      mr = 1 + t_below((uint32_t) mr_max), nr = 1 + t_below((uint32_t) nr_max);
    }
    const size_t acc_strides[] = {nr, nr_max, nr + 1 + t_below(13)};
    const size_t acc_stride = T_PICK(acc_strides);
    const size_t c_stride = (nr + 1 + t_below(9)) * sizeof(float);
    const enum sf_mode m = mode >= 0 ? (enum sf_mode) mode : (enum sf_mode) (r % sf_modes);
    ok = sf_run(q, &bf, mr, nr, acc_stride, c_stride, m);
  }
  sf_free(&bf);
  return ok;
}

static int sf_subtile(const void* table)
{
  return sf_sweep(table, -1, 0);
}

static int sf_random_data(const void* table)
{
  return sf_sweep(table, sf_random, t_quick ? 16 : 64);
}

static int sf_specials_data(const void* table)
{
  return sf_sweep(table, sf_specials, t_quick ? 64 : 256);
}

static int sf_extremes_data(const void* table)
{
  return sf_sweep(table, sf_extremes, t_quick ? 32 : 128);
}

static int sf_subnormals(const void* table)
{
  return sf_sweep(table, sf_tiny, t_quick ? 64 : 256) &&
         sf_sweep(table, sf_cancel, t_quick ? 64 : 256);
}

static int sf_nan_inputs(const void* table)
{
  return sf_sweep(table, sf_nan, t_quick ? 32 : 128);
}

static const qcase sfcases[] = {
    {"subtile", 0, sf_subtile},        {"random", 0, sf_random_data},
    {"specials", 0, sf_specials_data}, {"extremes", 0, sf_extremes_data},
    {"subnormals", 0, sf_subnormals},  {"nan_inputs", 0, sf_nan_inputs},
};

static const qcase rcases[] = {
    {"k_sweep", 0, rc_k_sweep},
    {"m_sweep", 0, rc_m_sweep},
    {"k_max", 0, rc_k_max},
    {"strides_prime", 0, rc_strides_prime},
    {"a_row_pages", 0, rc_a_row_pages},
};

/* The public packer of the table in use writes the header flags uk_q_header()
 * derives, and the blocks the table's packer writes. */
static int pc_header(const void* table)
{
  const qtable* q = table;
  const struct gemmi8_qgemm_config* cfg = q->cfg;
  /* qu8: per tensor 0, 128, 255; per channel random; per channel all 128 */
  static const int zp_kinds[] = {0, 128, 255, -1, -128};
  const int runs = q->is_signed ? 2 : 2 * (int) T_COUNT(zp_kinds);
  for (int run = 0; run < runs; run++) {
    const size_t n = run % 2 ? (size_t) cfg->nr + 3 : 1, k = 37;
    const int kind = zp_kinds[run / 2];
    const int per_channel = kind < 0;
    uint8_t* b = t_alloc(n * k);
    uint8_t* zps = t_alloc(n);
    int32_t* zp32 = t_alloc(n * sizeof(int32_t));
    int32_t* bias = t_alloc(n * sizeof(int32_t));
    t_fill_random(b, n * k);
    for (size_t j = 0; j < n; j++) {
      zps[j] = (uint8_t) (kind >= 0 ? kind : (kind == -1 ? (int) t_below(256) : 128));
      zp32[j] = zps[j];
      bias[j] = (int32_t) t_range(-100000, 100000);
    }
    const int32_t a_zp = q->is_signed ? (int32_t) t_range(-128, 127) : (int32_t) t_range(0, 255);
    size_t size = 0;
    gemmi8_status s =
        q->is_signed ? gemmi8_qs8_pack_size(n, k, &size) : gemmi8_qu8_pack_size(n, k, &size);
    void* packed = t_alloc_aligned(size);
    if (s == gemmi8_status_success) {
      s = q->is_signed
              ? gemmi8_qs8_pack(n, k, (const int8_t*) b, k, 0, (int8_t) a_zp, bias, packed, size)
              : gemmi8_qu8_pack(n, k, b, k, 0, (uint8_t) a_zp, zps, per_channel, bias, packed,
                                size);
    }
    const size_t block_bytes = gemmi8_qblock_bytes(cfg, k);
    const size_t blocks = gemmi8_divide_round_up(n, cfg->nr);
    uint8_t* mine = t_alloc_aligned(blocks * block_bytes);
    const struct gemmi8_qpack_source src = {b, k, 0, q->is_signed, 0};
    cfg->pack(cfg, n, k, &src, a_zp, q->is_signed ? NULL : zp32, bias, block_bytes, mine);
    uint32_t flags;
    int32_t coef;
    uk_q_header(cfg, q->is_signed, n, q->is_signed ? NULL : zp32, &flags, &coef);
    const struct gemmi8_packed_header* h = packed;
    int ok = s == gemmi8_status_success;
    if (!ok) {
      t_fail(current_case, "public pack returned %s", gemmi8_status_string(s));
    } else if (h->flags != flags || h->coef != coef) {
      ok = 0;
      t_fail(current_case,
             "n %zu, b_zp %s %d: header flags %u coef %d, the tester derives flags %u coef %d",
             n, per_channel ? "per channel, first" : "per tensor", (int) zp32[0],
             (unsigned) h->flags, (int) h->coef, (unsigned) flags, (int) coef);
    } else if (h->block_bytes != block_bytes ||
               memcmp((const uint8_t*) packed + GEMMI8_PACKED_HEADER_BYTES, mine,
                      blocks * block_bytes) != 0) {
      ok = 0;
      t_fail(current_case, "n %zu: the public packer's blocks differ from the table packer's", n);
    }
    free(b);
    free(zps);
    free(zp32);
    free(bias);
    free(packed);
    free(mine);
    if (!ok) return 0;
  }
  return 1;
}

/* ---- binary cases ----------------------------------------------------------------------- */

#define B_KERNEL const uk_bkernel* kn = kernel
#define B_DIMS                                      \
  const size_t mr = kn->mr, nr = kn->cfg->nr;       \
  (void) mr, (void) nr
#define B_NEW(t) uk_btest t = uk_btest_defaults(kn)

static int b_k_list(const uk_bkernel* kn, const size_t* ks, size_t count)
{
  for (size_t i = 0; i < count; i++) {
    B_NEW(t);
    t.k = ks[i];
    if (!uk_btest_run(kn, &t)) return 0;
  }
  return 1;
}

static int bc_k_64(const void* kernel)
{
  static const size_t ks[] = {64};
  return b_k_list(kernel, ks, 1);
}

static int bc_k_lt_64(const void* kernel)
{
  B_KERNEL;
  for (size_t k = 1; k < 64; k += step(64)) {
    B_NEW(t);
    t.k = k;
    if (!uk_btest_run(kn, &t)) return 0;
  }
  return 1;
}

static int bc_k_gt_64(const void* kernel)
{
  B_KERNEL;
  for (size_t k = 65; k < 128; k += step(64)) {
    B_NEW(t);
    t.k = k;
    if (!uk_btest_run(kn, &t)) return 0;
  }
  return 1;
}

static int bc_k_div_64(const void* kernel)
{
  static const size_t ks[] = {128, 192, 256, 512, 1024};
  return b_k_list(kernel, ks, T_COUNT(ks));
}

static int bc_k_long(const void* kernel)
{
  const size_t ks[] = {t_quick ? 1001 : 4099};
  return b_k_list(kernel, ks, 1);
}

/* Every depth from 1 to 200 bits: odd and even word counts, whatever the kernel's
 * group of words; odd depths with rows of A ending at a page. */
static int bc_k_1_200(const void* kernel)
{
  B_KERNEL;
  for (size_t k = 1; k <= 200; k += step(200)) {
    B_NEW(t);
    t.k = k;
    t.a_row_pages = k % 2;
    if (!uk_btest_run(kn, &t)) return 0;
  }
  return 1;
}

/* Depths past the kernels' narrow-counter chunks (the NEON kernels add 16-bit counts
 * for 4095 iterations of one or two words), every product of some row and column
 * different: a missing flush wraps. */
static int bc_k_chunk(const void* kernel)
{
  B_KERNEL;
  static const size_t ks[] = {4096 * 64 + 1, 8194 * 64 - 63, 8195 * 64};
  for (size_t i = 0; i < T_COUNT(ks); i++) {
    B_NEW(t);
    t.k = ks[i];
    t.complement = 1;
    t.a_row_pages = i % 2;
    if (!uk_btest_run(kn, &t)) return 0;
  }
  return 1;
}

static int bc_subtile(const void* kernel)
{
  B_KERNEL;
  B_DIMS;
  static const size_t ks[] = {1, 64, 100};
  for (size_t m = 1; m <= mr; m++) {
    for (size_t n = 1; n <= nr; n += step(nr)) {
      B_NEW(t);
      t.m = m;
      t.n = n;
      t.k = ks[(m + n) % 3];
      if (!uk_btest_run(kn, &t)) return 0;
    }
  }
  return 1;
}

static int bc_m_lt_mr(const void* kernel)
{
  B_KERNEL;
  B_DIMS;
  for (size_t m = 1; m < mr; m++) {
    B_NEW(t);
    t.m = m;
    if (!uk_btest_run(kn, &t)) return 0;
  }
  return 1;
}

static int bc_n_lt_nr(const void* kernel)
{
  B_KERNEL;
  B_DIMS;
  for (size_t n = 1; n < nr; n += step(nr)) {
    B_NEW(t);
    t.n = n;
    if (!uk_btest_run(kn, &t)) return 0;
  }
  return 1;
}

static int bc_n_gt_nr(const void* kernel)
{
  B_KERNEL;
  B_DIMS;
  for (size_t n = nr + 1; n < 2 * nr + (nr == 1 ? 2 : 0); n += step(nr)) {
    B_NEW(t);
    t.n = n;
    if (!uk_btest_run(kn, &t)) return 0;
  }
  return 1;
}

static int bc_n_words(const void* kernel)
{
  B_KERNEL;
  B_DIMS;
  const size_t ns[] = {63, 64, 65, 127, 128, 129, 130, 64 + nr + 3, 200};
  for (size_t i = 0; i < T_COUNT(ns); i++) {
    B_NEW(t);
    t.n = ns[i];
    t.k = i % 2 ? 65 : 130;
    if (i % 3 == 2 && mr > 1) t.m = mr - 1;
    if (!uk_btest_run(kn, &t)) return 0;
  }
  return 1;
}

static int bc_strides_prime(const void* kernel)
{
  B_KERNEL;
  B_DIMS;
  const size_t ks[] = {1, 64, 200, 333};
  const size_t ns[] = {nr, 2 * nr + 1, 70, nr > 1 ? nr - 1 : 1};
  for (size_t i = 0; i < T_COUNT(ks); i++) {
    B_NEW(t);
    t.k = ks[i];
    t.n = ns[i];
    t.a_stride = next_prime(GEMMI8_BIN_WORDS(t.k) + 1 + i);
    const size_t cols = kn->output == uk_bout_bits ? GEMMI8_BIN_WORDS(t.n) : t.n;
    t.c_stride = next_prime(cols + 1 + i);
    if (!uk_btest_run(kn, &t)) return 0;
  }
  return 1;
}

static int bc_a_row_pages(const void* kernel)
{
  B_KERNEL;
  static const size_t ks[] = {1, 63, 64, 65, 200, 1000};
  for (size_t i = 0; i < T_COUNT(ks); i++) {
    B_NEW(t);
    t.k = ks[i];
    t.a_row_pages = 1;
    if (i % 2) t.m = 1;
    if (!uk_btest_run(kn, &t)) return 0;
  }
  return 1;
}

static int bc_pad_ones(const void* kernel)
{
  B_KERNEL;
  static const size_t ks[] = {1, 63, 65, 130, 1001};
  for (size_t i = 0; i < T_COUNT(ks); i++) {
    B_NEW(t);
    t.k = ks[i];
    t.pad_ones = 1;
    if (!uk_btest_run(kn, &t)) return 0;
  }
  return 1;
}

static int b_params(const uk_bkernel* kn, enum uk_bparams params, const size_t* ks, size_t count)
{
  B_DIMS;
  for (size_t i = 0; i < count; i++) {
    B_NEW(t);
    t.k = ks[i];
    t.params = params;
    if (i % 2) t.n = 2 * nr + 1;
    if (!uk_btest_run(kn, &t)) return 0;
  }
  return 1;
}

static const size_t b_param_ks[] = {1, 64, 200};
static const size_t b_zero_ks[] = {2, 4, 7, 64, 65};

static int bc_scale_null(const void* kernel)
{
  return b_params(kernel, uk_bp_no_scale, b_param_ks, T_COUNT(b_param_ks));
}
static int bc_bias_null(const void* kernel)
{
  return b_params(kernel, uk_bp_no_bias, b_param_ks, T_COUNT(b_param_ks));
}
static int bc_scale_bias_null(const void* kernel)
{
  return b_params(kernel, uk_bp_none, b_param_ks, T_COUNT(b_param_ks));
}
static int bc_exact_zeros(const void* kernel)
{
  return b_params(kernel, uk_bp_zeros, b_zero_ks, T_COUNT(b_zero_ks));
}
static int bc_neg_zero(const void* kernel)
{
  return b_params(kernel, uk_bp_neg_zero, b_zero_ks, T_COUNT(b_zero_ks));
}
static int bc_nonfinite(const void* kernel)
{
  return b_params(kernel, uk_bp_nonfinite, b_zero_ks, T_COUNT(b_zero_ks));
}

static const qcase bcases[] = {
    {"k_64", 0, bc_k_64},
    {"k_lt_64", 0, bc_k_lt_64},
    {"k_gt_64", 0, bc_k_gt_64},
    {"k_div_64", 0, bc_k_div_64},
    {"k_long", 0, bc_k_long},
    {"k_1_200", 0, bc_k_1_200},
    {"k_chunk", 0, bc_k_chunk},
    {"subtile", 0, bc_subtile},
    {"m_lt_mr", when_mr2, bc_m_lt_mr},
    {"n_lt_nr", when_nr2, bc_n_lt_nr},
    {"n_gt_nr", 0, bc_n_gt_nr},
    {"n_words", 0, bc_n_words},
    {"strides_prime", 0, bc_strides_prime},
    {"a_row_pages", 0, bc_a_row_pages},
    {"pad_ones", 0, bc_pad_ones},
    {"scale_null", when_f32, bc_scale_null},
    {"bias_null", when_f32, bc_bias_null},
    {"scale_bias_null", when_f32, bc_scale_bias_null},
    {"exact_zeros", when_f32, bc_exact_zeros},
    {"neg_zero", when_f32, bc_neg_zero},
    {"nonfinite", when_bits, bc_nonfinite},
};

static int b_applies(const uk_bkernel* kn, unsigned when)
{
  if ((when & when_f32) && kn->output == uk_bout_s32) return 0;
  if ((when & when_bits) && kn->output != uk_bout_bits) return 0;
  if ((when & when_mr2) && kn->mr < 2) return 0;
  if ((when & when_nr2) && kn->cfg->nr < 2) return 0;
  return 1;
}

/* ---- enumeration ------------------------------------------------------------------------ */

static const char* const q_out_names[] = {"s32", "fixedpoint", "fp32"};
static const char* const b_out_names[] = {"s32", "f32", "bits"};

typedef struct table_tally {
  unsigned long kernels;  /* kernels with a matching case */
  unsigned long not_run;  /* of which skipped (the CPU lacks them) */
  char tiles[160];        /* tiles of a skipped table, for the message */
} table_tally;

static void note_tile(table_tally* tally, const char* tile)
{
  if (strstr(tally->tiles, tile) != NULL) return;
  const size_t used = strlen(tally->tiles);
  snprintf(tally->tiles + used, sizeof(tally->tiles) - used, "%s%s", used ? " " : "", tile);
}

/* ---- depthwise kernels ------------------------------------------------------------------ */

/* A depthwise kernel of a table: its tap count (9, 25, or 0 for any) and output. */
typedef struct dw_kernel {
  const struct gemmi8_dwconv_config* cfg;
  size_t taps;
  int output;
  gemmi8_dwconv_ukernel_fn fn;
  char path[96];
  char name[256];
} dw_kernel;

/* One call's shape and parameters. */
typedef struct dw_test {
  size_t channels, pixels, ks;
  size_t out_extra;  /* output pixel stride past the channels (elements) */
  int zero_taps;     /* 0: none at the zero buffer, 1: some, 2: all */
  size_t offset;     /* input_offset */
  int xor80;         /* int8 input: input_xor 0x80 */
  int per_channel;
  int scale_above_1; /* scales 1..4 (fixed point: positive shifts, params left_shift); 2:
                      * per channel, 2^8..2^30 (float products past int32) for channel
                      * 130 and channels 64..127, 192..255, ..., small for the others */
  int extremes;      /* every input 0 or 255 and weight -128 or 127 */
  size_t width;      /* nonzero: taps of a 3x3 window (pad 1) over an image: output rows
                      * of this width, each input row one run of pixels of c bytes */
  size_t stride;     /* with width: the window's stride (0: 1) */
} dw_test;

/* Inputs read through pointers: each pixel row ends at an inaccessible page, so a read
 * past the call's channels faults; every byte is checked unchanged afterwards. */
static int dw_run(const dw_kernel* kn, const dw_test* t)
{
  const struct gemmi8_dwconv_config* cfg = kn->cfg;
  const size_t c = t->channels, ks = t->ks, pixels = t->pixels;
  const size_t stride = t->stride != 0 ? t->stride : 1;
  const size_t width = t->width != 0 ? stride * t->width : 1;
  const size_t rows =
      t->width != 0 ? stride * ((pixels + t->width - 1) / t->width) : pixels + 3;
  const size_t out_size = kn->output == 0 ? 4 : 1, out_stride = (c + t->out_extra) * out_size;
  t_fence fin, fzero, fout;
  memset(&fin, 0, sizeof(fin));
  memset(&fzero, 0, sizeof(fzero));
  memset(&fout, 0, sizeof(fout));
  uint8_t* in = t_fence_init(&fin, rows, width * c, 0);
  uint8_t* zero = t_fence_init(&fzero, 1, c, c);
  int8_t* w = t_alloc(c * ks);
  int32_t* bias = t_alloc(c * sizeof(int32_t));
  for (size_t r = 0; r < rows; r++) {
    uint8_t* row = in + r * fin.stride;
    for (size_t j = 0; j < width * c; j++) row[j] = t->extremes ? (t_below(2) ? 255 : 0) : (uint8_t) t_below(256);
  }
  memset(zero, (int) t_below(256), c);
  for (size_t i = 0; i < c * ks; i++) w[i] = t->extremes ? (t_below(2) ? 127 : -128) : (int8_t) t_range(-128, 127);
  for (size_t j = 0; j < c; j++) bias[j] = t->extremes ? 0 : (int32_t) t_range(-100000, 100000);
  t_fence_seal(&fin);
  t_fence_seal(&fzero);
  const void** ptrs = t_alloc(pixels * ks * sizeof(void*));
  for (size_t i = 0; i < pixels * ks; i++) {
    const int at_zero = t->zero_taps == 2 || (t->zero_taps == 1 && t_below(3) == 0);
    if (t->width != 0) {
      /* pixel y, x; tap ky, kx (taps past 9 repeat them) */
      const size_t p = i / ks, tp = i % ks, y = p / t->width, x = p % t->width;
      const size_t iy = stride * y + (tp / 3) % 3, ix = stride * x + tp % 3; /* + 1 */
      const int pad = iy == 0 || iy > rows || ix == 0 || ix > width || t->zero_taps == 2;
      ptrs[i] = pad ? (const void*) zero
                    : (const void*) ((uintptr_t) (in + (iy - 1) * fin.stride + (ix - 1) * c) -
                                     t->offset);
      continue;
    }
    ptrs[i] = at_zero ? (const void*) zero
                      : (const void*) ((uintptr_t) (in + t_below((uint32_t) rows) * fin.stride) -
                                       t->offset);
  }
  /* the accumulators from the definition, modulo 2^32 */
  const uint8_t x = t->xor80 ? 0x80 : 0;
  int32_t* acc = t_alloc(pixels * c * sizeof(int32_t));
  int64_t top = 1;
  for (size_t p = 0; p < pixels; p++) {
    for (size_t j = 0; j < c; j++) {
      uint32_t sum = (uint32_t) bias[j];
      for (size_t tp = 0; tp < ks; tp++) {
        const uint8_t* ptr = ptrs[p * ks + tp];
        if (ptr != zero) ptr += t->offset;
        sum += (uint32_t) (ptr[j] ^ x) * (uint32_t) (int32_t) w[j * ks + tp];
      }
      acc[p * c + j] = (int32_t) sum;
      const int64_t v = acc[p * c + j] < 0 ? -(int64_t) acc[p * c + j] : acc[p * c + j];
      if (v > top) top = v;
    }
  }
  /* requantization spanning the 8-bit range (or scales above 1) */
  const size_t nq = t->per_channel ? c : 1;
  double* dscale = t_alloc(nq * sizeof(double));
  float* scale = t_alloc(nq * sizeof(float));
  int32_t* mult = t_alloc(nq * sizeof(int32_t));
  int32_t* shift = t_alloc(nq * sizeof(int32_t));
  int left_shift = 0;
  for (size_t j = 0; j < nq; j++) {
    const int above = t->scale_above_1 == 1 ||
                      (t->scale_above_1 == 2 && ((j / 64) % 2 == 1 || j == 130));
    dscale[j] = t->scale_above_1 == 2 && above ? ldexp(1.0 + t_unit(), 8 + (int) t_below(22))
                : above ? 1.0 + 3.0 * t_unit()
                        : 160.0 / (double) top * (0.5 + 1.5 * t_unit());
    scale[j] = (float) dscale[j];
  }
  gemmi8_quantize_multipliers(nq, dscale, mult, shift);
  for (size_t j = 0; j < nq; j++) left_shift |= shift[j] > 0;
  const int32_t lo = t->xor80 ? -128 : 0;
  const int32_t zp = lo + (int32_t) t_range(64, 191);
  const int32_t qmin = lo + (int32_t) t_range(0, 20), qmax = lo + 255 - (int32_t) t_range(0, 20);
  /* packed weights and prepared constants as the convolution makes them */
  const size_t tiles = (c + cfg->cr - 1) / cfg->cr, tile = gemmi8_dwtile_bytes(cfg, ks);
  void* packed = t_alloc_aligned(tiles * tile);
  cfg->pack(c, ks, w, bias, packed);
  void* prepared = NULL;
  struct gemmi8_dwparams params;
  memset(&params, 0, sizeof(params));
  if (kn->output != 0) {
    params.q.multiplier = mult;
    params.q.shift = shift;
    params.q.scale = scale;
    params.q.channel_stride = t->per_channel ? 1 : 0;
    params.q.zero_point = zp;
    params.q.min = qmin;
    params.q.max = qmax;
    params.q.left_shift = left_shift;
  }
  if (kn->output != 0 && cfg->prepare != NULL) {
    prepared = t_alloc_aligned(tiles * GEMMI8_DWPREPARED_BYTES);
    for (size_t i = 0; i < tiles; i++) {
      struct gemmi8_qparams q = params.q;
      if (kn->output == 1) {
        q.multiplier += i * cfg->cr * q.channel_stride;
        q.shift += i * cfg->cr * q.channel_stride;
      } else {
        q.scale += i * cfg->cr * q.channel_stride;
      }
      cfg->prepare((enum gemmi8_qoutput) kn->output, &q,
                   c - i * cfg->cr < cfg->cr ? c - i * cfg->cr : cfg->cr,
                   (uint8_t*) prepared + i * GEMMI8_DWPREPARED_BYTES);
    }
    params.q.prepared = prepared;
  }
  params.input_xor = x;
  /* an image's rows (microkernel.h): the 3x3 window of each pixel, from row 0 */
  const void** columns = NULL;
  if (t->width != 0 && ks == 9 && stride == 1) {
    /* and the same taps by input column (microkernel.h), of the whole pairs of rows
     * (exactly as many: an overread shows under ASan): pair p, padded column c, the
     * window's row r at padded row 2 p + r */
    const size_t pairs = pixels / (2 * t->width), count = pairs * 4 * (t->width + 2);
    columns = t_alloc(count > 0 ? count * sizeof(void*) : 1);
    for (size_t i = 0; i < count; i++) {
      const size_t iy = 2 * (i / (4 * (t->width + 2))) + i % 4, ix = i / 4 % (t->width + 2);
      const int pad = iy == 0 || iy > rows || ix == 0 || ix > width || t->zero_taps == 2;
      columns[i] = pad ? (const void*) zero
                       : (const void*) ((uintptr_t) (in + (iy - 1) * fin.stride + (ix - 1) * c) -
                                        t->offset);
    }
    params.row_pixels = t->width;
    params.columns = columns;
  }
  uint8_t* out = t_fence_init(&fout, pixels, c * out_size, out_stride);
  t_fence_seal(&fout);
  for (size_t p = 0; p < pixels; p++) {
    for (size_t j = 0; j < c; j++) {
      const int32_t a = acc[p * c + j];
      const size_t q = t->per_channel ? j : 0;
      uint8_t* want = t_fence_image(&fout, out + p * out_stride + j * out_size);
      if (kn->output == 0) {
        memcpy(want, &a, 4);
      } else if (kn->output == 1) {
        *want = (uint8_t) ref_output_fixedpoint(a, mult[q], shift[q], zp, qmin, qmax);
      } else {
        *want = (uint8_t) ref_output_fp32(a, scale[q], zp, qmin, qmax);
      }
    }
  }
  kn->fn(c, pixels, ks, (const void* const*) ptrs, packed, out, out_stride, t->offset, zero,
         &params);
  long offset = 0;
  int ok = 1;
  char what[160];
  if (!t_fence_intact(&fout, &offset)) {
    const long pixel = offset / (long) out_stride;
    snprintf(what, sizeof(what), "output byte %ld wrong (pixel %ld, channel %ld)", offset, pixel,
             (offset - pixel * (long) out_stride) / (long) out_size);
    ok = 0;
  } else if (!t_fence_intact(&fin, &offset) || !t_fence_intact(&fzero, &offset)) {
    snprintf(what, sizeof(what), "an input byte written (offset %ld)", offset);
    ok = 0;
  }
  if (!ok) {
    t_fail(current_case,
           "%s: %s; channels %zu pixels %zu taps %zu offset %zu xor %d per_channel %d "
           "zero_taps %d out stride %zu",
           kn->name, what, c, pixels, ks, t->offset, t->xor80, t->per_channel, t->zero_taps,
           out_stride);
  }
  t_fence_free(&fin);
  t_fence_free(&fzero);
  t_fence_free(&fout);
  free(w);
  free(bias);
  free(ptrs);
  free(columns);
  free(acc);
  free(dscale);
  free(scale);
  free(mult);
  free(shift);
  free(packed);
  free(prepared);
  return ok;
}

/* A test with random parameters around the kernel's tile; the case then sets its own. */
static dw_test dw_base(const dw_kernel* kn)
{
  dw_test t;
  memset(&t, 0, sizeof(t));
  t.channels = kn->cfg->cr;
  t.pixels = 3;
  t.ks = kn->taps != 0 ? kn->taps : (size_t) t_range(1, 30);
  t.zero_taps = (int) t_below(2);
  t.xor80 = (int) t_below(2);
  t.per_channel = (int) t_below(2);
  return t;
}

static int dw_channels_eq(const void* k)
{
  dw_test t = dw_base(k);
  return dw_run(k, &t);
}
static int dw_channels_lt(const void* k)
{
  const dw_kernel* kn = k;
  dw_test t = dw_base(kn);
  t.channels = (size_t) t_range(1, kn->cfg->cr - 1);
  return dw_run(kn, &t);
}
static int dw_channels_gt(const void* k)
{
  const dw_kernel* kn = k;
  dw_test t = dw_base(kn);
  t.channels = kn->cfg->cr + (size_t) t_range(1, kn->cfg->cr - 1);
  return dw_run(kn, &t);
}
static int dw_channels_far(const void* k)
{
  const dw_kernel* kn = k;
  dw_test t = dw_base(kn);
  t.channels = 5 * kn->cfg->cr + (size_t) t_range(0, kn->cfg->cr - 1);
  return dw_run(kn, &t);
}
/* every channel count from 1 to 2 * CR + 1, one pixel each */
static int dw_channels_sweep(const void* k)
{
  const dw_kernel* kn = k;
  for (size_t c = 1; c <= 2u * kn->cfg->cr + 1; c++) {
    dw_test t = dw_base(kn);
    t.channels = c;
    t.pixels = 1;
    if (!dw_run(kn, &t)) return 0;
  }
  return 1;
}
static int dw_pixels_many(const void* k)
{
  dw_test t = dw_base(k);
  t.pixels = 17;
  t.channels = (size_t) t_range(1, 150);
  return dw_run(k, &t);
}
static int dw_slices(const void* k)
{
  dw_test t = dw_base(k);
  t.channels = (size_t) t_range(1, 150);
  t.out_extra = (size_t) t_range(1, 9);
  return dw_run(k, &t);
}
static int dw_zero_all(const void* k)
{
  dw_test t = dw_base(k);
  t.zero_taps = 2;
  return dw_run(k, &t);
}
static int dw_zero_some(const void* k)
{
  dw_test t = dw_base(k);
  t.zero_taps = 1;
  t.channels = (size_t) t_range(1, 150);
  return dw_run(k, &t);
}
static int dw_offset(const void* k)
{
  dw_test t = dw_base(k);
  t.offset = (size_t) t_range(1, 300);
  t.zero_taps = 1;
  t.channels = (size_t) t_range(1, 150);
  return dw_run(k, &t);
}
static int dw_int8_input(const void* k)
{
  dw_test t = dw_base(k);
  t.xor80 = 1;
  return dw_run(k, &t);
}
static int dw_uint8_input(const void* k)
{
  dw_test t = dw_base(k);
  t.xor80 = 0;
  return dw_run(k, &t);
}
static int dw_per_channel(const void* k)
{
  dw_test t = dw_base(k);
  t.per_channel = 1;
  t.channels = (size_t) t_range(1, 150);
  return dw_run(k, &t);
}
static int dw_scale_above_1(const void* k)
{
  dw_test t = dw_base(k);
  t.scale_above_1 = 1;
  t.channels = (size_t) t_range(1, 150);
  if (!dw_run(k, &t)) return 0;
  /* tiles of small scales (the fp32 stage's DW_SMALL on AVX-512) beside larger ones */
  t = dw_base(k);
  t.scale_above_1 = 2;
  t.per_channel = 1;
  t.channels = (size_t) t_range(131, 300);
  return dw_run(k, &t);
}
/* extreme products; on the kernels for any tap count, 1,000 taps */
static int dw_extremes(const void* k)
{
  const dw_kernel* kn = k;
  dw_test t = dw_base(kn);
  t.extremes = 1;
  t.zero_taps = 0;
  if (kn->taps == 0) t.ks = 1000;
  return dw_run(kn, &t);
}
/* taps of a 3x3 window over an image (pad 1; stride 1 or 2): runs of pixels whose taps
 * are 16 or 32 bytes apart (a layer of 16 or 32 channels), adjacent pixels sharing taps
 * (the grouped 3x3 passes of AVX-512; stride 2, its tap columns), pairs of rows
 * (params->row_pixels, stride 1), padding mixed in, rows ending mid-pass */
static int dw_image_stride(const void* k, size_t stride)
{
  static const size_t widths[] = {1, 3, 4, 5, 7, 8, 9, 13, 20, 33};
  for (size_t i = 0; i < 30; i++) {
    dw_test t = dw_base(k);
    static const size_t fixed[] = {16, 32, 64, 128};
    t.channels = i % 3 == 2 ? (size_t) t_range(1, 150)
                            : (i % 3 == 1 ? (size_t) t_range(33, 200) : fixed[i / 3 % 4]);
    t.width = widths[i % T_COUNT(widths)];
    t.stride = stride;
    t.pixels = (size_t) t_range(1, 80);
    t.zero_taps = i % 8 == 7 ? 2 : 0;
    t.offset = t_below(3) == 0 ? (size_t) t_range(1, 300) : 0;
    /* output pixels apart by more than the channels (and, with 16, not 16 apart) */
    t.out_extra = i % 5 == 4 ? (size_t) t_range(1, 20) : 0;
    if (!dw_run(k, &t)) return 0;
  }
  return 1;
}
static int dw_image(const void* k) { return dw_image_stride(k, 1); }
static int dw_image_s2(const void* k) { return dw_image_stride(k, 2); }
/* any tap count: 1, 2, 8, 9, 10, 25, 27, 49 */
static int dw_tap_counts(const void* k)
{
  static const size_t counts[] = {1, 2, 8, 9, 10, 25, 27, 49};
  for (size_t i = 0; i < T_COUNT(counts); i++) {
    dw_test t = dw_base(k);
    t.ks = counts[i];
    t.channels = (size_t) t_range(1, 100);
    if (!dw_run(k, &t)) return 0;
  }
  return 1;
}

static const struct {
  const char* name;
  int (*run)(const void*);
  int any_only; /* only the kernels for any tap count */
  int requant_only; /* only the 8-bit outputs */
} dwcases[] = {
    {"c_eq_cr", dw_channels_eq, 0, 0},       {"c_lt_cr", dw_channels_lt, 0, 0},
    {"c_gt_cr", dw_channels_gt, 0, 0},       {"c_far", dw_channels_far, 0, 0},
    {"c_sweep", dw_channels_sweep, 0, 0},    {"pixels_many", dw_pixels_many, 0, 0},
    {"slices", dw_slices, 0, 0},             {"zero_all", dw_zero_all, 0, 0},
    {"zero_some", dw_zero_some, 0, 0},       {"offset", dw_offset, 0, 0},
    {"input_s8", dw_int8_input, 0, 0},       {"input_u8", dw_uint8_input, 0, 0},
    {"rq_per_channel", dw_per_channel, 0, 0}, {"scale_above_1", dw_scale_above_1, 0, 1},
    {"extremes", dw_extremes, 0, 0},         {"tap_counts", dw_tap_counts, 1, 0},
    {"image", dw_image, 0, 0},               {"image_s2", dw_image_s2, 0, 0},
};

static void dw_tables(unsigned long* skipped)
{
  static const size_t slot_taps[gemmi8_dwtaps_count] = {9, 25, 0};
  static const char* const slot_names[gemmi8_dwtaps_count] = {"9p", "25p", "up"};
  int supported;
  for (size_t i = 0;; i++) {
    const struct gemmi8_dwconv_config* cfg = gemmi8_dwconv_config_at(i, &supported);
    if (cfg == NULL) break;
    table_tally tally;
    memset(&tally, 0, sizeof(tally));
    for (int slot = 0; slot < gemmi8_dwtaps_count; slot++) {
      for (int o = 0; o < 3; o++) {
        const gemmi8_dwconv_ukernel_fn fn = cfg->taps[slot].out[o];
        if (fn == NULL) continue;
        dw_kernel kn;
        memset(&kn, 0, sizeof(kn));
        kn.cfg = cfg;
        kn.taps = slot_taps[slot];
        kn.output = o;
        kn.fn = fn;
        char tile[32];
        snprintf(tile, sizeof(tile), "%s%uc", slot_names[slot], (unsigned) cfg->cr);
        snprintf(kn.path, sizeof(kn.path), "dw/%.24s/%s/%s", cfg->isa, tile, q_out_names[o]);
        const char* symbol = t_kernel_symbol((void (*)(void)) fn);
        snprintf(kn.name, sizeof(kn.name), "%s (dw %s taps[%s] of the %.24s table, CR %u)",
                 symbol != NULL ? symbol : "(not in the kernel lists)", q_out_names[o],
                 slot_names[slot], cfg->isa, (unsigned) cfg->cr);
        int any = 0;
        char name[256];
        for (size_t c = 0; c < T_COUNT(dwcases); c++) {
          if (dwcases[c].any_only && kn.taps != 0) continue;
          if (dwcases[c].requant_only && o == 0) continue;
          snprintf(name, sizeof(name), "%s/%s", kn.path, dwcases[c].name);
          if (!matches(name)) continue;
          any = 1;
          if (supported || list_only) run_case(name, dwcases[c].run, &kn);
        }
        if (any && !supported) tally.not_run++, note_tile(&tally, tile);
      }
    }
    if (tally.not_run != 0 && !list_only) {
      printf("   skipped: dw/%s (not supported on this CPU): %lu kernels (%s)\n", cfg->isa,
             tally.not_run, tally.tiles);
      *skipped += tally.not_run;
    }
  }
}

/* Runs (or counts) the matching cases of one kernel; returns 1 if any matched. */
static int q_kernel(const uk_qkernel* kn, int supported)
{
  int any = 0;
  char name[256];
  for (size_t c = 0; c < T_COUNT(qcases); c++) {
    if (!q_applies(kn, qcases[c].when)) continue;
    snprintf(name, sizeof(name), "%s/%s", kn->path, qcases[c].name);
    if (!matches(name)) continue;
    any = 1;
    if (supported || list_only) run_case(name, qcases[c].run, kn);
  }
  return any;
}

static void q_tables(uint32_t type, unsigned long* skipped)
{
  const int sgn = type == gemmi8_type_qs8;
  const char* family = sgn ? "qs8" : "qu8";
  const struct gemmi8_qgemm_config* in_use = gemmi8_qconfig(type);
  int supported;
  for (size_t i = 0;; i++) {
    const struct gemmi8_qgemm_config* cfg = gemmi8_qgemm_config_at(type, i, &supported);
    if (cfg == NULL) break;
    table_tally tally;
    memset(&tally, 0, sizeof(tally));
    char name[256];
    /* the GEMM slots, the igemm slots (A through row pointers), then the main tile
     * over packed A (kind 2) */
    for (int kind_id = 0; kind_id <= 2; kind_id++) {
      const int indirect = kind_id == 1, packed = kind_id == 2;
      for (size_t r = 1; r <= GEMMI8_MAX_MR; r++) {
        if (packed && (r != cfg->mr || cfg->pack_a == NULL)) continue;
        const struct gemmi8_qgemm_ukernels* u = packed ? &cfg->pgemm : &cfg->gemm[r - 1];
        const struct gemmi8_qigemm_ukernels* iu = &cfg->igemm[r - 1];
        const gemmi8_qgemm_ukernel_fn* fns = u->out;
        const gemmi8_qigemm_ukernel_fn* ifns = iu->out;
        const char* kind = indirect ? "igemm" : (packed ? "pgemm" : "gemm");
        char tile[32];
        snprintf(tile, sizeof(tile), "%zux%uc%u", r, (unsigned) cfg->nr, (unsigned) cfg->kr);
        for (int o = 0; o < 3; o++) {
          if (indirect ? ifns[o] == NULL : fns[o] == NULL) continue;
          uk_qkernel kn;
          memset(&kn, 0, sizeof(kn));
          kn.cfg = cfg;
          kn.is_signed = sgn;
          kn.mr = r;
          kn.output = (enum uk_output) o;
          if (indirect) {
            kn.ifn = ifns[o];
          } else {
            kn.fn = fns[o];
          }
          kn.packed_a = packed;
          snprintf(kn.path, sizeof(kn.path), "%s/%.24s/%s/%s%s", family, cfg->isa, tile,
                   indirect ? "igemm-" : (packed ? "pgemm-" : ""), q_out_names[o]);
          const char* symbol = t_kernel_symbol(
              indirect ? (void (*)(void)) ifns[o] : (void (*)(void)) fns[o]);
          snprintf(kn.name, sizeof(kn.name),
                   "%s (%s %s %s[%zu] of the %.24s table, MR %zu NR %u KR %u)",
                   symbol != NULL ? symbol : "(not in the kernel lists)", family,
                   q_out_names[o], kind, r - 1, cfg->isa, r, (unsigned) cfg->nr,
                   (unsigned) cfg->kr);
          if (q_kernel(&kn, supported)) {
            tally.kernels++;
            if (!supported) tally.not_run++, note_tile(&tally, tile);
          }
        }
      }
    }
    const qtable q = {cfg, sgn};
    if (cfg->row_sum != NULL) {
      int any = 0;
      for (size_t c = 0; c < T_COUNT(rcases); c++) {
        snprintf(name, sizeof(name), "%s/%.24s/rsum/%s", family, cfg->isa, rcases[c].name);
        if (!matches(name)) continue;
        any = 1;
        if (supported || list_only) run_case(name, rcases[c].run, &q);
      }
      if (any && !supported) tally.not_run++, note_tile(&tally, "rsum");
    }
    if (cfg->irow_sum != NULL) {
      snprintf(name, sizeof(name), "%s/%.24s/irsum/indirect", family, cfg->isa);
      if (matches(name)) {
        if (supported || list_only) {
          run_case(name, rc_indirect, &q);
        } else {
          tally.not_run++, note_tile(&tally, "irsum");
        }
      }
    }
    if (cfg->quantize_rows != NULL) {
      snprintf(name, sizeof(name), "%s/%.24s/qrows/fenced", family, cfg->isa);
      if (matches(name)) {
        if (supported || list_only) {
          run_case(name, qr_fenced, &q);
        } else {
          tally.not_run++, note_tile(&tally, "qrows");
        }
      }
    }
    if (cfg->store_f32 != NULL) {
      int any = 0;
      for (size_t c = 0; c < T_COUNT(sfcases); c++) {
        snprintf(name, sizeof(name), "%s/%.24s/storef32/%s", family, cfg->isa, sfcases[c].name);
        if (!matches(name)) continue;
        any = 1;
        if (supported || list_only) run_case(name, sfcases[c].run, &q);
      }
      if (any && !supported) tally.not_run++, note_tile(&tally, "storef32");
    }
    if (cfg == in_use) {
      snprintf(name, sizeof(name), "%s/%.24s/pack/header", family, cfg->isa);
      if (matches(name)) run_case(name, pc_header, &q);
    }
    if (tally.not_run != 0 && !list_only) {
      printf("   skipped: %s/%s (not supported on this CPU): %lu kernels (%s)\n", family, cfg->isa,
             tally.not_run, tally.tiles);
      *skipped += tally.not_run;
    }
  }
}

static void b_tables(unsigned long* skipped)
{
  int supported;
  for (size_t i = 0;; i++) {
    const struct gemmi8_bgemm_config* cfg = gemmi8_bgemm_config_at(i, &supported);
    if (cfg == NULL) break;
    table_tally tally;
    memset(&tally, 0, sizeof(tally));
    for (size_t r = 1; r <= GEMMI8_MAX_MR; r++) {
      const struct gemmi8_bgemm_ukernels* u = &cfg->gemm[r - 1];
      const gemmi8_bgemm_ukernel_fn* fns = u->out;
      char tile[32];
      if (cfg->kr > 1) {
        snprintf(tile, sizeof(tile), "%zux%uc%u", r, (unsigned) cfg->nr, (unsigned) cfg->kr);
      } else {
        snprintf(tile, sizeof(tile), "%zux%u", r, (unsigned) cfg->nr);
      }
      for (int o = 0; o < 3; o++) {
        if (fns[o] == NULL) continue;
        uk_bkernel kn;
        memset(&kn, 0, sizeof(kn));
        kn.cfg = cfg;
        kn.mr = r;
        kn.output = (enum uk_boutput) o;
        kn.fn = fns[o];
        snprintf(kn.path, sizeof(kn.path), "bin/%.24s/%s/%s", cfg->isa, tile, b_out_names[o]);
        const char* symbol = t_kernel_symbol((void (*)(void)) fns[o]);
        snprintf(kn.name, sizeof(kn.name), "%s (bin %s gemm[%zu] of the %.24s table, MR %zu NR %u)",
                 symbol != NULL ? symbol : "(not in the kernel lists)", b_out_names[o], r - 1,
                 cfg->isa, r, (unsigned) cfg->nr);
        int any = 0;
        char name[256];
        for (size_t c = 0; c < T_COUNT(bcases); c++) {
          if (!b_applies(&kn, bcases[c].when)) continue;
          snprintf(name, sizeof(name), "%s/%s", kn.path, bcases[c].name);
          if (!matches(name)) continue;
          any = 1;
          if (supported || list_only) run_case(name, bcases[c].run, &kn);
        }
        if (any && !supported) tally.not_run++, note_tile(&tally, tile);
      }
    }
    if (tally.not_run != 0 && !list_only) {
      printf("   skipped: bin/%s (not supported on this CPU): %lu kernels (%s)\n", cfg->isa,
             tally.not_run, tally.tiles);
      *skipped += tally.not_run;
    }
  }
}

/* ---- binary convolution (igemm) kernels ------------------------------------------------
 *
 * A tile over ks taps of MR row pointers (kc bits each, every row ending at an
 * inaccessible page, the bits past kc 0), some at the zero buffer, the rest
 * offset by a_offset; the weights packed by the set's packer as the binary convolution
 * packs them (each tap's words rounded to KR); corrections per row (NULL or exactly nr
 * values ending at a page), the float parameters and thresholds exactly nr values; the
 * output fenced. Against acc = sum over taps of +1/-1 products - correction, and the
 * scalar definitions of the outputs. */

typedef struct bi_kernel {
  const struct gemmi8_bgemm_config* cfg;
  int output;
  gemmi8_bigemm_ukernel_fn fn;
  char path[96];
  char name[192];
} bi_kernel;

typedef struct bi_test {
  size_t mr, nr, kc, ks, offset, n0, out_extra;
  int zero_taps; /* 0 none, 1 some */
  int corr;      /* corrections on some rows */
  int clamp;     /* f32: a finite clamp */
  int add;       /* f32: the output's values added (params.add) */
} bi_test;

static int bi_bit(const uint64_t* p, size_t c) { return (int) (p[c / 64] >> (c % 64)) & 1; }

static int bi_run(const bi_kernel* kn, const bi_test* t)
{
  const struct gemmi8_bgemm_config* cfg = kn->cfg;
  const size_t MR = cfg->mr, NR = cfg->nr, KR = cfg->kr;
  const size_t mr = t->mr, nr = t->nr, kc = t->kc, ks = t->ks;
  const size_t words = GEMMI8_BIN_WORDS(kc), kcwp = (words + KR - 1) / KR * KR;
  const size_t rows = MR + 3;
  t_fence fin, fzero, fout, fcorr[GEMMI8_MAX_MR];
  memset(fcorr, 0, sizeof(fcorr));
  uint64_t* in = t_fence_init(&fin, rows, words * 8, 0);
  uint64_t* zero = t_fence_init(&fzero, 1, words * 8, words * 8);
  /* random bits, 0 past kc (the driver's copy makes them so) */
  const uint64_t last = kc % 64 ? (UINT64_C(1) << (kc % 64)) - 1 : ~UINT64_C(0);
  for (size_t r = 0; r < rows; r++) {
    uint64_t* p = (uint64_t*) ((uint8_t*) in + r * fin.stride);
    t_fill_random(p, words * 8);
    p[words - 1] &= last;
  }
  t_fill_random(zero, words * 8);
  zero[words - 1] &= last;
  t_fence_seal(&fin);
  t_fence_seal(&fzero);
  /* pointers: rows past mr repeat row mr - 1's, as the driver's */
  const uint64_t** ptrs = t_alloc(ks * MR * sizeof(void*));
  for (size_t tp = 0; tp < ks; tp++) {
    for (size_t i = 0; i < MR; i++) {
      const uint64_t* p;
      if (i >= mr) {
        p = ptrs[tp * MR + mr - 1];
      } else if (t->zero_taps && t_below(3) == 0) {
        p = zero;
      } else {
        p = (const uint64_t*) ((uintptr_t) ((uint8_t*) in + t_below((uint32_t) rows) * fin.stride) -
                               t->offset);
      }
      ptrs[tp * MR + i] = p;
    }
  }
  /* weights: nr columns of ks taps, each kcwp words (the padding words and bits 0) */
  const size_t row = ks * kcwp;
  uint64_t* b = t_alloc(nr * row * sizeof(uint64_t));
  for (size_t j = 0; j < nr; j++) {
    for (size_t tp = 0; tp < ks; tp++) {
      for (size_t w = 0; w < kcwp; w++) {
        uint64_t v = w < words ? t_rand64() : 0;
        if (w + 1 == words) v &= last;
        b[j * row + tp * kcwp + w] = v;
      }
    }
  }
  const size_t block_bytes = (row * NR * 8 + 63) / 64 * 64;
  void* packed = t_alloc_aligned(block_bytes);
  cfg->pack(NR, KR, nr, row * 64, b, row, 0, block_bytes, packed);
  /* corrections: per row, NULL or nr values ending at a page */
  const int32_t* corr[GEMMI8_MAX_MR] = {NULL};
  for (size_t i = 0; i < MR; i++) {
    if (!t->corr || t_below(3) == 0) continue;
    int32_t* v = t_fence_init(&fcorr[i], 1, nr * 4, nr * 4);
    for (size_t j = 0; j < nr; j++) v[j] = (int32_t) t_range(-(int64_t) (ks * kc), (int64_t) (ks * kc));
    t_fence_seal(&fcorr[i]);
    corr[i] = v;
  }
  /* the accumulators */
  int32_t acc[GEMMI8_MAX_MR][64];
  for (size_t i = 0; i < mr; i++) {
    for (size_t j = 0; j < nr; j++) {
      int64_t sum = 0;
      for (size_t tp = 0; tp < ks; tp++) {
        const uint64_t* p = ptrs[tp * MR + i];
        if ((const void*) p != zero) p = (const uint64_t*) ((uintptr_t) p + t->offset);
        for (size_t ch = 0; ch < kc; ch++) {
          sum += bi_bit(p, ch) == bi_bit(b + j * row + tp * kcwp, ch) ? 1 : -1;
        }
      }
      if (corr[i] != NULL) sum -= corr[i][j];
      acc[i][j] = (int32_t) sum;
    }
  }
  /* parameters, exactly nr values each */
  float* scale = t_alloc(nr * sizeof(float));
  float* bias = t_alloc(nr * sizeof(float));
  int32_t* thr = t_alloc(nr * sizeof(int32_t));
  int32_t* flip = t_alloc(nr * sizeof(int32_t));
  for (size_t j = 0; j < nr; j++) {
    scale[j] = (float) ((t_unit() - 0.3) * 4.0);
    bias[j] = (float) ((t_unit() - 0.5) * (double) (ks * kc) * 0.5);
    thr[j] = (int32_t) t_range(-(int64_t) (ks * kc) - 1, (int64_t) (ks * kc) + 1);
    flip[j] = t_below(2) ? -1 : 0;
  }
  if (t_below(4) == 0) thr[t_below((uint32_t) nr)] = t_below(2) ? INT32_MIN : INT32_MAX;
  struct gemmi8_bcparams params = {t_below(5) ? scale : NULL, t_below(5) ? bias : NULL,
                                   -INFINITY, INFINITY, thr, flip, t->n0, NULL, t->add};
  if (t->clamp) {
    params.out_min = (float) ((t_unit() - 0.7) * (double) (ks * kc));
    params.out_max = params.out_min + (float) (t_unit() * (double) (ks * kc));
  }
  if (t->corr) params.corr = corr;
  /* the output */
  const int bits = kn->output == 2;
  const size_t out_words = (t->n0 + nr + 63) / 64;
  const size_t row_bytes = bits ? out_words * 8 : nr * 4;
  const size_t out_stride = row_bytes + t->out_extra * (bits ? 8 : 4);
  uint8_t* out = t_fence_init(&fout, mr, row_bytes, out_stride);
  t_fence_seal(&fout);
  for (size_t i = 0; i < mr; i++) {
    for (size_t j = 0; j < nr; j++) {
      if (kn->output == 0) {
        memcpy(t_fence_image(&fout, out + i * out_stride + j * 4), &acc[i][j], 4);
      } else if (kn->output == 1) {
        const volatile float product = (float) acc[i][j] * (params.scale ? scale[j] : 1.0f);
        float v = product + (params.bias ? bias[j] : 0.0f);
        if (t->add) {
          /* what the output holds: finite values, zeros of both signs, denormals, the
           * negated result (an exact 0) */
          const unsigned pick = t_below(8);
          float y = (float) ((t_unit() - 0.5) * (double) (ks * kc));
          if (pick == 0) y = t_below(2) ? 0.0f : -0.0f;
          if (pick == 1) y = t_below(2) ? 2e-39f : -1e-45f;
          if (pick == 2) y = -v;
          memcpy(out + i * out_stride + j * 4, &y, 4);
          const volatile float sum = y + v;
          v = sum;
        }
        v = params.out_min > v ? params.out_min : v;
        v = params.out_max < v ? params.out_max : v;
        memcpy(t_fence_image(&fout, out + i * out_stride + j * 4), &v, 4);
      } else {
        const size_t bit = t->n0 + j;
        uint64_t* word = t_fence_image(&fout, out + i * out_stride + bit / 64 * 8);
        uint64_t v;
        memcpy(&v, word, 8);
        if ((acc[i][j] ^ flip[j]) < thr[j]) {
          v |= UINT64_C(1) << (bit % 64);
        } else {
          v &= ~(UINT64_C(1) << (bit % 64));
        }
        memcpy(word, &v, 8);
      }
    }
  }
  kn->fn(mr, nr, kc, ks, (const uint64_t* const*) ptrs, packed, out, out_stride, t->offset, zero,
         &params);
  long offset = 0;
  int ok = 1;
  char what[160];
  if (!t_fence_intact(&fout, &offset)) {
    snprintf(what, sizeof(what), "output byte %ld wrong (row %ld)", offset,
             offset / (long) out_stride);
    ok = 0;
  } else if (!t_fence_intact(&fin, &offset) || !t_fence_intact(&fzero, &offset)) {
    snprintf(what, sizeof(what), "an input byte written (offset %ld)", offset);
    ok = 0;
  }
  for (size_t i = 0; ok && i < MR; i++) {
    if (corr[i] != NULL && !t_fence_intact(&fcorr[i], &offset)) {
      snprintf(what, sizeof(what), "a correction written");
      ok = 0;
    }
  }
  if (!ok) {
    t_fail(current_case, "%s: %s; mr %zu nr %zu kc %zu ks %zu offset %zu zero_taps %d corr %d n0 %zu",
           kn->name, what, mr, nr, kc, ks, t->offset, t->zero_taps, t->corr, t->n0);
  }
  t_fence_free(&fin);
  t_fence_free(&fzero);
  t_fence_free(&fout);
  for (size_t i = 0; i < MR; i++) {
    if (corr[i] != NULL) t_fence_free(&fcorr[i]);
  }
  free(ptrs);
  free(b);
  free(packed);
  free(scale);
  free(bias);
  free(thr);
  free(flip);
  return ok;
}

static bi_test bi_base(const bi_kernel* kn)
{
  bi_test t;
  memset(&t, 0, sizeof(t));
  t.mr = kn->cfg->mr;
  t.nr = kn->cfg->nr;
  t.kc = 64;
  t.ks = 9;
  return t;
}

/* Three random instances of a case shape. */
#define BI_CASE(fname, body)                      \
  static int fname(const void* k)                 \
  {                                               \
    const bi_kernel* kn = k;                      \
    int ok = 1;                                   \
    for (int rep = 0; rep < 3 && ok; rep++) {     \
      bi_test t = bi_base(kn);                    \
      body;                                       \
      ok = bi_run(kn, &t);                        \
    }                                             \
    return ok;                                    \
  }

BI_CASE(bi_kc64, (void) 0)
BI_CASE(bi_kc_lt64, t.kc = 1 + t_below(63))
BI_CASE(bi_kc_words, t.kc = 65 + t_below(260); t.ks = 1 + t_below(5))
BI_CASE(bi_kc_whole, t.kc = 64 * (2 + t_below(7)); t.ks = 1 + t_below(4))
BI_CASE(bi_kc_far, t.kc = 1000 + t_below(600); t.ks = 2)
BI_CASE(bi_ks1, t.ks = 1; t.kc = 1 + t_below(300))
BI_CASE(bi_ks25, t.ks = 25; t.kc = 32 + t_below(100))
BI_CASE(bi_mr_lt, t.mr = 1 + t_below((uint32_t) kn->cfg->mr))
BI_CASE(bi_nr_lt, t.nr = 1 + t_below((uint32_t) kn->cfg->nr))
BI_CASE(bi_zero, t.zero_taps = 1; t.kc = 1 + t_below(200))
BI_CASE(bi_offset, t.offset = 8 * (1 + t_below(3)); t.zero_taps = 1; t.kc = 1 + t_below(200))
BI_CASE(bi_corr, t.corr = 1; t.zero_taps = 1; t.kc = 1 + t_below(200);
        t.nr = 1 + t_below((uint32_t) kn->cfg->nr); t.mr = 1 + t_below((uint32_t) kn->cfg->mr))
BI_CASE(bi_n0, t.n0 = t_below(130); t.nr = 1 + t_below((uint32_t) kn->cfg->nr))
BI_CASE(bi_clamp, t.clamp = 1; t.kc = 1 + t_below(200))
BI_CASE(bi_out_stride, t.out_extra = 1 + t_below(3); t.mr = 1 + t_below((uint32_t) kn->cfg->mr))
BI_CASE(bi_add, t.add = 1; t.clamp = (int) t_below(2); t.kc = 1 + t_below(200);
        t.mr = 1 + t_below((uint32_t) kn->cfg->mr); t.nr = 1 + t_below((uint32_t) kn->cfg->nr))

static const struct {
  const char* name;
  int (*run)(const void*);
} bicases[] = {
    {"kc_eq_64", bi_kc64},     {"kc_lt_64", bi_kc_lt64},   {"kc_words", bi_kc_words},
    {"kc_whole", bi_kc_whole}, {"kc_far", bi_kc_far},      {"ks_1", bi_ks1},
    {"ks_25", bi_ks25},        {"mr_lt_MR", bi_mr_lt},     {"nr_lt_NR", bi_nr_lt},
    {"zero_taps", bi_zero},    {"offset", bi_offset},      {"corrections", bi_corr},
    {"bit_offset", bi_n0},     {"clamp", bi_clamp},        {"out_stride", bi_out_stride},
    {"add", bi_add},
};

static void bi_tables(unsigned long* skipped)
{
  int supported;
  for (size_t i = 0;; i++) {
    const struct gemmi8_bgemm_config* cfg = gemmi8_bgemm_config_at(i, &supported);
    if (cfg == NULL) break;
    table_tally tally;
    memset(&tally, 0, sizeof(tally));
    char tile[32];
    if (cfg->kr > 1) {
      snprintf(tile, sizeof(tile), "%ux%uc%u", (unsigned) cfg->mr, (unsigned) cfg->nr,
               (unsigned) cfg->kr);
    } else {
      snprintf(tile, sizeof(tile), "%ux%u", (unsigned) cfg->mr, (unsigned) cfg->nr);
    }
    for (int o = 0; o < 3; o++) {
      const gemmi8_bigemm_ukernel_fn fn = cfg->igemm.out[o];
      if (fn == NULL) continue;
      bi_kernel kn;
      memset(&kn, 0, sizeof(kn));
      kn.cfg = cfg;
      kn.output = o;
      kn.fn = fn;
      snprintf(kn.path, sizeof(kn.path), "bin/%.24s/igemm-%s/%s", cfg->isa, tile, b_out_names[o]);
      const char* symbol = t_kernel_symbol((void (*)(void)) fn);
      snprintf(kn.name, sizeof(kn.name), "%s (bin %s igemm of the %.24s table)",
               symbol != NULL ? symbol : "(not in the kernel lists)", b_out_names[o], cfg->isa);
      int any = 0;
      char name[256];
      for (size_t c = 0; c < T_COUNT(bicases); c++) {
        snprintf(name, sizeof(name), "%s/%s", kn.path, bicases[c].name);
        if (!matches(name)) continue;
        any = 1;
        if (supported || list_only) run_case(name, bicases[c].run, &kn);
      }
      if (any && !supported) tally.not_run++, note_tile(&tally, tile);
    }
    if (tally.not_run != 0 && !list_only) {
      printf("   skipped: bin/%s igemm (not supported on this CPU): %lu kernels (%s)\n",
             cfg->isa, tally.not_run, tally.tiles);
      *skipped += tally.not_run;
    }
  }
}

unsigned long test_ukernel(uint64_t seed)
{
  const char* f = getenv("GEMMI8_TEST_FILTER");
  filter = f != NULL && *f != '\0' ? f : NULL;
  const char* l = getenv("GEMMI8_TEST_LIST");
  list_only = l != NULL && *l != '\0' && strcmp(l, "0") != 0;
  base_seed = seed;
  cases_run = 0;
  unsigned long skipped = 0;
  struct sigaction crash, old_segv, old_bus;
  memset(&crash, 0, sizeof(crash));
  crash.sa_handler = on_crash;
  sigemptyset(&crash.sa_mask);
  sigaction(SIGSEGV, &crash, &old_segv);
  sigaction(SIGBUS, &crash, &old_bus);
  /* the kernel lists this build compiled (make TYPES=...): qu8's serve qu8s8 too */
  if (t_type_built("qu8") || t_type_built("qu8s8")) {
    q_tables(gemmi8_type_qu8, &skipped);
  } else if (!list_only) {
    printf("   skipped: the qu8 kernels (not in this build)\n");
    skipped++;
  }
  if (t_type_built("qs8")) {
    q_tables(gemmi8_type_qs8, &skipped);
  } else if (!list_only) {
    printf("   skipped: the qs8 kernels (not in this build)\n");
    skipped++;
  }
  if (t_type_built("qu8") || t_type_built("qs8") || t_type_built("qu8s8")) {
    dw_tables(&skipped);
  } else if (!list_only) {
    printf("   skipped: the dw kernels (not in this build)\n");
    skipped++;
  }
  if (t_type_built("bin")) {
    b_tables(&skipped);
    bi_tables(&skipped);
  } else if (!list_only) {
    printf("   skipped: the bin kernels (not in this build)\n");
    skipped++;
  }
  skipped += test_ukernel_q4(seed);
  uk_tester_release();
  sigaction(SIGSEGV, &old_segv, NULL);
  sigaction(SIGBUS, &old_bus, NULL);
  if (!list_only) {
    printf("   %lu kernel cases run", cases_run);
    if (filter != NULL) printf(" (GEMMI8_TEST_FILTER=%s)", filter);
    printf(", %lu kernels skipped\n", skipped);
  }
  return skipped;
}
