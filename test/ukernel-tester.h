/*
 * The kernel-level tester: one microkernel from a family table, called directly as
 * the drivers call it, on one problem described by a uk_qtest / uk_btest, against
 * the independent reference (ref.c), byte for byte.
 *
 * A problem starts from uk_qtest_defaults() / uk_btest_defaults() (one full tile:
 * m = MR, n = NR, k = 2 KR + 3 (binary: 200 bits), random data and zero points,
 * outputs spanning the 8-bit range) and a case changes the fields it is about. Problems with n above
 * NR are packed into several blocks and the kernel is called once per block, with
 * the block's columns, as src/qgemm.c and src/bgemm.c do; a single call never gets
 * more than NR columns or more than MR rows (the kernel contract). C is compared
 * after every call, so that a call that writes outside its own tile is named.
 *
 * Around every call: A, the packed weights, the row sums and the per-channel arrays
 * end where an inaccessible page begins (fence.c), with random bytes before and
 * between rows that must stay as they were; a fault in the kernel is caught and
 * reported as a failure of the problem. C is pre-filled with random sentinel
 * bytes, with guard bytes before, after and between rows (t_out) that must stay too.
 */
#ifndef GEMMI8_TEST_UKERNEL_TESTER_H
#define GEMMI8_TEST_UKERNEL_TESTER_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* ---- the kernel under test --------------------------------------------------------- */

enum uk_output { uk_out_s32, uk_out_fixedpoint, uk_out_fp32 };
enum uk_boutput { uk_bout_s32, uk_bout_f32, uk_bout_bits };

typedef struct uk_qkernel {
  const struct gemmi8_qgemm_config* cfg;
  int is_signed; /* 0: qu8, 1: qs8 */
  size_t mr;     /* slot: gemm[mr - 1] */
  enum uk_output output;
  gemmi8_qgemm_ukernel_fn fn;
  /* An igemm kernel (fn NULL): A is given as ks taps of mr row pointers, as the
   * convolution layer gives it (src/conv.c). */
  gemmi8_qigemm_ukernel_fn ifn;
  /* A kernel over packed panels of A (cfg->pgemm): A is packed by cfg->pack_a first. */
  int packed_a;
  char path[96];  /* "qu8/avx512vnni/7x48c4/fixedpoint": the prefix of its cases */
  char name[192]; /* for messages: the function's name by the naming convention, slot */
} uk_qkernel;

typedef struct uk_bkernel {
  const struct gemmi8_bgemm_config* cfg;
  size_t mr;
  enum uk_boutput output;
  gemmi8_bgemm_ukernel_fn fn;
  char path[96];
  char name[192];
} uk_bkernel;

/* ---- cases ----------------------------------------------------------------------------- */

/* Starts a named case: seeds the generator; failures of the problems run until the
 * next call are printed under this name, with the seed. */
void uk_case_start(const char* name, uint64_t seed);

/* Releases what the tester keeps between problems (call after the last case). */
void uk_tester_release(void);

/* ---- quantized problems --------------------------------------------------------------- */

enum uk_data {
  uk_data_random,   /* uniform bytes */
  uk_data_extremes, /* only the type's minimum and maximum */
  uk_data_small,    /* within 2 of the zero points: small accumulators */
  uk_data_unpaired, /* extremes, but no qs8 weight column holds -128 at both depths d
                     * and d + 8 of a group of 16 (of each tap): the blocks the packer
                     * marks pair-safe, at their largest 16-bit pair sums */
  uk_data_kmax,     /* every product at the type's extreme (A - a_zp = +-255, B - b_zp
                     * = +-255 (qu8, with b_zp 0 or 255) or -128 / 127 (qs8)), one sign
                     * per column: with k = GEMMI8_QU8_MAX_K / GEMMI8_QS8_MAX_K the
                     * accumulators reach the int32 limit. a_zp is 0/255 or -128/127
                     * unless given. */
};

enum uk_b_zp {
  uk_bzp_random,           /* one random value per tensor (qu8) */
  uk_bzp_tensor,           /* b_zp, per tensor */
  uk_bzp_channel,          /* random per channel */
  uk_bzp_channel_extremes, /* 0 or 255 per channel */
};

enum uk_bias {
  uk_bias_center, /* random, centering the accumulators around 0 (outputs span) */
  uk_bias_none,   /* NULL to the packer */
  uk_bias_wrap,   /* anywhere in int32: sums wrap modulo 2^32 */
};

enum uk_scale {
  uk_scale_span,    /* from the accumulator range: outputs span the 8-bit range */
  uk_scale_above_1, /* every scale >= 1: positive shifts (saturating left shift) */
  uk_scale_huge,    /* 2^8 .. 2^30: the left shift saturates */
  uk_scale_mixed,   /* per channel: scales above and below 1 alternate */
  uk_scale_sweep,   /* fixed point: every shift from -31 to 30 (per channel, in turn),
                     * multipliers over their whole range; fp32: 2^-40 .. 2^20, the
                     * smallest subnormal and FLT_MAX */
  uk_scale_ties,    /* powers of two 2^-1 .. 2^-4: many results exactly halfway */
};

enum uk_clamp {
  uk_clamp_none,   /* the type's range */
  uk_clamp_narrow, /* a window around the zero point */
  uk_clamp_relu,   /* min = zero point */
  uk_clamp_max,    /* max only, a little above the zero point */
  uk_clamp_point,  /* min = max */
};

enum uk_c_zp { uk_czp_span, uk_czp_min, uk_czp_max };

typedef struct uk_qtest {
  size_t m, n, k;
  size_t a_stride;  /* bytes; 0: see a_row_pages */
  size_t c_stride;  /* elements; 0: n */
  int a_row_pages;  /* with a_stride 0: every row of A ends at an inaccessible page
                     * (else rows are k bytes apart and the last one does) */
  int a_zp_given;   /* else random */
  int32_t a_zp;
  enum uk_b_zp b_zp_mode; /* ignored for qs8 (zero point 0) */
  int32_t b_zp;
  enum uk_data data;
  enum uk_bias bias;
  int per_channel; /* requantization parameters per channel */
  enum uk_scale scale;
  enum uk_clamp clamp;
  enum uk_c_zp c_zp;
  /* igemm kernels: taps (k bytes from each: K = ks * k in all), the offset added to
   * every pointer but the zero buffer's, and which pointers go to the zero buffer
   * (0 none, 1 about a quarter, 2 all). ks is cut to 1 where ks * k would pass the
   * exact limit. Defaults: 3 taps, an offset of 0..5, some zero taps. */
  size_t ks;
  size_t a_offset;
  int zero_taps;
} uk_qtest;

uk_qtest uk_qtest_defaults(const uk_qkernel* kn);

/* Runs one problem (random values from the current seed). 1 if every byte is as
 * expected; else 0, after printing the case, kernel, shape, parameters, call and
 * first bad element with t_fail(). */
int uk_qtest_run(const uk_qkernel* kn, const uk_qtest* t);

/* What src/qgemm.c run() passes for the row-sum term of weights packed by
 * pack/qpack.c pack_into(): the header's flags (GEMMI8_PACKED_*) and coef for n
 * columns of zero points b_zp (NULL: all 0, as for qs8). */
void uk_q_header(const struct gemmi8_qgemm_config* cfg, int is_signed, size_t n,
                 const int32_t* b_zp, uint32_t* flags, int32_t* coef);

/* ---- binary problems ----------------------------------------------------------------- */

enum uk_bparams {
  uk_bp_random,       /* scale of either sign, bias */
  uk_bp_no_scale,     /* scale NULL */
  uk_bp_no_bias,      /* bias NULL */
  uk_bp_none,         /* both NULL */
  uk_bp_zeros,        /* scale +-1, +-0.5, +-2; bias -acc * scale of some row: results
                       * exactly 0 */
  uk_bp_neg_zero,     /* negative scales, bias -0.0f (results -0.0f where acc is 0) or,
                       * half the time, NULL (+0.0f is added: results +0.0f) */
  uk_bp_nonfinite,    /* infinities, NaN and zeros in scale and bias (bits output only:
                       * float outputs may differ in NaN payloads) */
};

typedef struct uk_btest {
  size_t m, n, k;  /* k in bits */
  size_t a_stride; /* words; 0: see a_row_pages */
  size_t c_stride; /* elements (words for bits); 0: n (ceil(n / 64)) */
  int a_row_pages;
  int pad_ones;    /* padding bits past k all ones (else random) in A and B */
  /* B row j the complement of A row j % m: those products all differ, so the
   * kernels' narrow counters grow by the most every word */
  int complement;
  enum uk_bparams params;
} uk_btest;

uk_btest uk_btest_defaults(const uk_bkernel* kn);
int uk_btest_run(const uk_bkernel* kn, const uk_btest* t);

/* ---- row sums ----------------------------------------------------------------------------- */

/* cfg->row_sum on m rows of k bytes (stride a_stride, or 0 with a_row_pages as
 * above) against plain sums. data: random, extremes (each byte the type's minimum
 * or maximum) or kmax (rows all minimum or all maximum). */
int uk_rsum_run(const struct gemmi8_qgemm_config* cfg, int is_signed, size_t m, size_t k,
                size_t a_stride, int a_row_pages, enum uk_data data);

/* cfg->irow_sum on `rows` rows of an igemm row tile (cfg->mr pointers per tap, about a
 * quarter of them at a zero buffer of a random byte), ks taps of kc bytes, a_offset
 * added to every pointer but the zero buffer's, against plain sums; data random or
 * extremes. Every row and the zero buffer end at an inaccessible page. */
int uk_irsum_run(const struct gemmi8_qgemm_config* cfg, int is_signed, size_t rows, size_t kc,
                 size_t ks, size_t a_offset, enum uk_data data);

#endif
