/*
 * Kernel-level tests: every microkernel of every family table compiled in (each
 * tile height of each kernel set, each output kind), called directly as the
 * drivers call it, against the independent reference (ref.c).
 *
 * Cases are named <family>/<set>/<tile>/<output>/<case>, e.g.
 * qu8/avx512vnni/1x48c4/fixedpoint/k_lt_kr; the seed of a case is derived from its
 * name, so a case gives the same data when it is run alone (GEMMI8_TEST_FILTER=
 * a substring of the names). Quantized cases: k equal to, below, above and a
 * multiple of KR; m below MR; n below, equal to and above NR (several packed blocks,
 * one call per block, as the driver does); prime strides of A and C; zero points 0,
 * 128, 255 and the signed extremes, per tensor and per channel; every output kind
 * with per-tensor and per-channel requantization, positive shifts, narrow clamps; a
 * long K at the exact-int32 limit with extreme values. Binary cases: the three
 * outputs, k not a multiple of 64 with garbage padding bits in A, scale and bias
 * present or not, bit outputs at every column offset the driver passes.
 * C is pre-filled with a sentinel inside guard bytes (t_out); A is allocated to its
 * exact extent. Tables the CPU cannot run are printed and counted as skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "isa.h"
#include "ref.h"
#include "test.h"

static const char* filter;
static uint64_t base_seed;
static unsigned long cases_run;

static uint64_t fnv1a(const char* s)
{
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (; *s != '\0'; s++) h = (h ^ (unsigned char) *s) * UINT64_C(0x100000001b3);
  return h;
}

/* 1 if the case runs (filter); seeds the generator from its name. */
static int begin_case(const char* name)
{
  if (filter != NULL && strstr(name, filter) == NULL) return 0;
  t_seed(base_seed ^ fnv1a(name));
  cases_run++;
  return 1;
}

/* ---- quantized ---------------------------------------------------------------------- */

enum { out_s32, out_fixedpoint, out_fp32 };
static const char* const out_names[] = {"s32", "fixedpoint", "fp32"};

typedef struct qcase {
  char tag[48];
  size_t m, n, k;
  size_t a_pad, c_pad; /* stride beyond the row */
  int a_zp_fixed, a_zp;
  int b_zp_mode; /* 0: random per tensor, 1: random per channel, 2: b_zp per tensor */
  int b_zp;
  int per_channel;   /* requantization */
  int left_shift;    /* scales above 1 (positive shifts) */
  int narrow_clamp;
  int extreme;       /* long K: the largest accumulators of the type */
} qcase;

static int32_t rand_a_zp(int is_signed)
{
  return is_signed ? (int32_t) t_range(-128, 127) : (int32_t) t_range(0, 255);
}

/* Runs one kernel on one case; one check. */
static void run_qcase(const struct gemmi8_qgemm_config* cfg, int is_signed, size_t r, int output,
                      gemmi8_qgemm_ukernel_fn fn, const qcase* cs, const char* name)
{
  const size_t m = cs->m, n = cs->n, k = cs->k;
  const size_t a_stride = k + cs->a_pad, c_stride = n + cs->c_pad;
  const size_t a_bytes = (m - 1) * a_stride + k;
  uint8_t* a = t_alloc(a_bytes);
  uint8_t* b = t_alloc(n * k);
  int32_t* b_zp = t_alloc(n * sizeof(int32_t));
  int32_t* bias = t_alloc(n * sizeof(int32_t));
  int32_t* acc = t_alloc(m * n * sizeof(int32_t));
  int32_t a_zp = cs->a_zp_fixed ? cs->a_zp : rand_a_zp(is_signed);
  if (cs->extreme) {
    /* qu8: (0 - 255) * (255 - 0); qs8: (-128 - 127) * (-128): K * 255 * 255 or
     * K * 255 * 128, the limits the header promises exact */
    memset(a, is_signed ? 0x80 : 0x00, a_bytes);
    memset(b, is_signed ? 0x80 : 0xFF, n * k);
    a_zp = is_signed ? 127 : 255;
    for (size_t j = 0; j < n; j++) b_zp[j] = 0, bias[j] = 0;
  } else {
    t_fill_random(a, a_bytes);
    t_fill_random(b, n * k);
    const int32_t zp0 = cs->b_zp_mode == 2 ? cs->b_zp : (int32_t) t_range(0, 255);
    for (size_t j = 0; j < n; j++) {
      b_zp[j] = is_signed ? 0 : (cs->b_zp_mode == 1 ? (int32_t) t_range(0, 255) : zp0);
      bias[j] = (int32_t) t_range(-100000, 100000);
    }
  }
  ref_q8_acc(is_signed, m, n, k, a, a_stride, a_zp, b, k, 0, b_zp, bias, acc);

  /* pack as pack/qpack.c does: blocks, then the header's row-sum flags */
  const size_t blocks = gemmi8_divide_round_up(n, cfg->nr);
  const size_t block_bytes = gemmi8_qblock_bytes(cfg, k);
  uint8_t* packed = t_alloc_aligned(blocks * block_bytes);
  const struct gemmi8_qpack_source src = {b, k, 0, is_signed};
  cfg->pack(cfg, n, k, &src, a_zp, is_signed ? NULL : b_zp, bias, block_bytes, packed);
  const int32_t delta = cfg->xor_weights ? (is_signed ? -128 : 128) : 0;
  const int32_t coef0 = delta - b_zp[0];
  int uniform = 1;
  for (size_t j = 1; j < n; j++) uniform &= delta - b_zp[j] == coef0;
  const int no_row_sum = cfg->column_bytes != 8 || (uniform && coef0 == 0);
  int32_t* row_sums = NULL;
  if (cfg->row_sum != NULL && !no_row_sum) {
    row_sums = t_alloc(m * sizeof(int32_t));
    for (size_t i = 0; i < m; i++) {
      int32_t s = 0;
      for (size_t kk = 0; kk < k; kk++) {
        const uint8_t v = a[i * a_stride + kk];
        s += is_signed ? (int32_t) (int8_t) v : (int32_t) v;
      }
      row_sums[i] = s;
    }
  }

  /* requantization: scales from the accumulator range, outputs across the range */
  const size_t channels = cs->per_channel ? n : 1;
  int32_t* multiplier = t_alloc(channels * sizeof(int32_t));
  int32_t* shift = t_alloc(channels * sizeof(int32_t));
  float* scale = t_alloc(channels * sizeof(float));
  const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  int32_t zp = (int32_t) t_range(lo + 64, hi - 64), qmin = lo, qmax = hi;
  if (cs->narrow_clamp) {
    qmin = zp - (int32_t) t_range(1, 40);
    qmax = zp + (int32_t) t_range(1, 40);
  }
  int left_shift = 0;
  for (size_t c = 0; c < channels; c++) {
    double range = 1.0;
    for (size_t i = 0; i < m; i++) {
      for (size_t j = cs->per_channel ? c : 0; j < (cs->per_channel ? c + 1 : n); j++) {
        const double v = (double) acc[i * n + j] < 0 ? -(double) acc[i * n + j] : acc[i * n + j];
        if (v > range) range = v;
      }
    }
    double s = 100.0 / range * (0.5 + t_unit());
    if (cs->left_shift) s = 1.0 + 30.0 * t_unit();
    scale[c] = (float) s;
    gemmi8_quantize_multiplier(s, &multiplier[c], &shift[c]);
    left_shift |= shift[c] > 0;
  }

  t_out out;
  t_out_init(&out, output == out_s32 ? T_S32 : (is_signed ? T_S8 : T_U8), m, n, c_stride);
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      const int32_t x = acc[i * n + j];
      const size_t ch = cs->per_channel ? j : 0;
      int32_t y = x;
      if (output == out_fixedpoint) {
        y = ref_output_fixedpoint(x, multiplier[ch], shift[ch], zp, qmin, qmax);
      } else if (output == out_fp32) {
        y = ref_output_fp32(x, scale[ch], zp, qmin, qmax);
      }
      if (output == out_s32) {
        memcpy(t_out_want(&out, i, j), &y, 4);
      } else {
        const uint8_t byte = (uint8_t) y;
        memcpy(t_out_want(&out, i, j), &byte, 1);
      }
    }
  }
  const size_t c_size = output == out_s32 ? 4 : 1;
  for (size_t bl = 0; bl < blocks; bl++) {
    const size_t n0 = gemmi8_qblock_start(cfg, n, bl);
    const size_t n1 = bl + 1 < blocks ? gemmi8_qblock_start(cfg, n, bl + 1) : n;
    struct gemmi8_qparams p;
    memset(&p, 0, sizeof(p));
    p.channel_stride = cs->per_channel ? 1 : 0;
    if (output == out_fixedpoint) {
      p.multiplier = multiplier + n0 * p.channel_stride;
      p.shift = shift + n0 * p.channel_stride;
      p.left_shift = left_shift;
    } else if (output == out_fp32) {
      p.scale = scale + n0 * p.channel_stride;
    }
    p.zero_point = zp;
    p.min = qmin;
    p.max = qmax;
    p.row_sum = row_sums;
    p.row_sum_uniform = row_sums != NULL && cfg->scaled_row_sum && uniform;
    p.row_sum_coef = coef0;
    fn(m, n1 - n0, k, a, a_stride, packed + bl * block_bytes,
       (uint8_t*) out.body + n0 * c_size, c_stride * c_size, &p);
  }
  char msg[256];
  size_t bad_row, bad_col;
  if (t_out_same(&out, msg, sizeof(msg), &bad_row, &bad_col)) {
    t_pass();
  } else {
    t_fail("ukernel", "%s (MR %zu, M x N x K = %zu x %zu x %zu, a_zp %d): %s", name, r, m, n, k,
           (int) a_zp, msg);
  }
  t_out_free(&out);
  free(a), free(b), free(b_zp), free(bias), free(acc), free(packed), free(row_sums);
  free(multiplier), free(shift), free(scale);
}

/* The named cases of one kernel (tile height r of a table). */
static size_t qcases(const struct gemmi8_qgemm_config* cfg, int is_signed, size_t r, qcase* cs,
                     size_t max)
{
  const size_t NR = cfg->nr, KR = cfg->kr;
  size_t c = 0;
#define ADD(...)                                                    \
  do {                                                              \
    if (c < max) {                                                  \
      memset(&cs[c], 0, sizeof(cs[c]));                             \
      cs[c].m = r, cs[c].n = NR, cs[c].k = 3 * KR + 1;              \
      __VA_ARGS__;                                                  \
      c++;                                                          \
    }                                                               \
  } while (0)
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "k_eq_kr"); cs[c].k = KR);
  if (KR > 1) ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "k_lt_kr"); cs[c].k = KR - 1);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "k_1"); cs[c].k = 1);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "k_gt_kr"); cs[c].k = KR + 1);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "k_gt_2kr"); cs[c].k = 2 * KR + 3);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "k_div_kr"); cs[c].k = 16 * KR);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "k_long_odd"); cs[c].k = t_quick ? 211 : 1031);
  for (size_t m = 1; m < r; m++) {
    ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "m_lt_mr/m%zu", m); cs[c].m = m);
  }
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "n_1"); cs[c].n = 1);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "n_lt_nr"); cs[c].n = NR / 2 + 1);
  if (NR > 2) ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "n_nr_minus_1"); cs[c].n = NR - 1);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "n_gt_nr"); cs[c].n = NR + 1);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "n_nr_plus_group");
      cs[c].n = NR + (cfg->group ? cfg->group : 3));
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "n_3nr_plus_5"); cs[c].n = 3 * NR + 5);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "strides_prime"); cs[c].a_pad = 13;
      cs[c].c_pad = 11; cs[c].n = NR + 7);
  static const int u8_zps[] = {0, 128, 255};
  static const int s8_zps[] = {-128, 0, 127};
  for (size_t z = 0; z < 3; z++) {
    const int zp = is_signed ? s8_zps[z] : u8_zps[z];
    ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "a_zp_%d", zp); cs[c].a_zp_fixed = 1;
        cs[c].a_zp = zp);
    if (!is_signed) {
      ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "b_zp_%d", u8_zps[z]); cs[c].b_zp_mode = 2;
          cs[c].b_zp = u8_zps[z]);
    }
  }
  if (!is_signed) {
    ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "b_zp_per_channel"); cs[c].b_zp_mode = 1;
        cs[c].n = 2 * NR + 3);
  }
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "rq_per_channel"); cs[c].per_channel = 1;
      cs[c].n = 2 * NR + 3);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "rq_left_shift"); cs[c].left_shift = 1);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "rq_left_shift_per_channel");
      cs[c].left_shift = 1; cs[c].per_channel = 1);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "clamp_narrow"); cs[c].narrow_clamp = 1);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "k_max_extreme"); cs[c].extreme = 1;
      cs[c].k = is_signed ? GEMMI8_QS8_MAX_K : GEMMI8_QU8_MAX_K; cs[c].n = NR + 1);
#undef ADD
  return c;
}

static void test_qtables(uint32_t type, unsigned long* skipped)
{
  const int is_signed = type == gemmi8_type_qs8;
  const char* family = is_signed ? "qs8" : "qu8";
  int supported;
  for (size_t t = 0;; t++) {
    const struct gemmi8_qgemm_config* cfg = gemmi8_qgemm_config_at(type, t, &supported);
    if (cfg == NULL) break;
    for (size_t r = 1; r <= GEMMI8_MAX_MR; r++) {
      const struct gemmi8_qgemm_ukernels* u = &cfg->gemm[r - 1];
      if (u->s32 == NULL) continue;
      char tile[32];
      snprintf(tile, sizeof(tile), "%zux%uc%u", r, (unsigned) cfg->nr, (unsigned) cfg->kr);
      if (!supported) {
        char prefix[96];
        snprintf(prefix, sizeof(prefix), "%s/%s/%s", family, cfg->isa, tile);
        if (filter == NULL || strstr(prefix, filter) != NULL) {
          printf("   skipped: %s (not supported on this CPU)\n", prefix);
          (*skipped)++;
        }
        continue;
      }
      qcase cs[64];
      const size_t count = qcases(cfg, is_signed, r, cs, T_COUNT(cs));
      for (int o = 0; o < 3; o++) {
        const gemmi8_qgemm_ukernel_fn fn =
            o == out_s32 ? u->s32 : (o == out_fixedpoint ? u->fixedpoint : u->fp32);
        for (size_t i = 0; i < count; i++) {
          if ((cs[i].left_shift || cs[i].narrow_clamp) && o == out_s32) continue;
          char name[320];
          snprintf(name, sizeof(name), "%s/%.31s/%.31s/%s/%.47s", family, cfg->isa, tile, out_names[o],
                   cs[i].tag);
          if (!begin_case(name)) continue;
          run_qcase(cfg, is_signed, r, o, fn, &cs[i], name);
        }
      }
    }
  }
}

/* ---- binary ------------------------------------------------------------------------- */

enum { bout_s32, bout_f32, bout_bits };
static const char* const bout_names[] = {"s32", "f32", "bits"};

typedef struct bcase {
  char tag[48];
  size_t m, n, k;
  size_t a_pad, c_pad;
  int no_scale, no_bias;
} bcase;

static void run_bcase(const struct gemmi8_bgemm_config* cfg, size_t r, int output,
                      gemmi8_bgemm_ukernel_fn fn, const bcase* cs, const char* name)
{
  const size_t m = cs->m, n = cs->n, k = cs->k, words = GEMMI8_BIN_WORDS(k);
  const size_t a_stride = words + cs->a_pad;
  uint64_t* a = t_alloc(((m - 1) * a_stride + words) * 8);
  uint64_t* b = t_alloc(n * words * 8);
  /* random bits, padding bits of A included (they never count) */
  t_fill_random(a, ((m - 1) * a_stride + words) * 8);
  t_fill_random(b, n * words * 8);
  int32_t* acc = t_alloc(m * n * sizeof(int32_t));
  ref_bin_acc(m, n, k, a, a_stride, b, words, 0, acc);
  float* scale = cs->no_scale ? NULL : t_alloc(n * sizeof(float));
  float* bias = cs->no_bias ? NULL : t_alloc(n * sizeof(float));
  for (size_t j = 0; j < n; j++) {
    if (scale) scale[j] = (float) ((t_unit() - 0.3) * 4.0);
    if (bias) bias[j] = (float) ((t_unit() - 0.5) * (double) k * 0.5);
  }
  const size_t blocks = gemmi8_divide_round_up(n, cfg->nr);
  const size_t block_bytes = gemmi8_round_up(words * cfg->nr * 8, 64);
  uint8_t* packed = t_alloc_aligned(blocks * block_bytes);
  cfg->pack(cfg->nr, n, k, b, words, 0, block_bytes, packed);

  const size_t cols = output == bout_bits ? GEMMI8_BIN_WORDS(n) : n;
  const size_t c_stride = cols + cs->c_pad;
  t_out out;
  t_out_init(&out, output == bout_bits ? T_U64 : (output == bout_f32 ? T_F32 : T_S32), m, cols,
             c_stride);
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      const int32_t x = acc[i * n + j];
      if (output == bout_s32) {
        memcpy(t_out_want(&out, i, j), &x, 4);
      } else if (output == bout_f32) {
        const float f = ref_bin_f32(x, scale, bias, j);
        memcpy(t_out_want(&out, i, j), &f, 4);
      } else {
        uint64_t w;
        memcpy(&w, t_out_want(&out, i, j / 64), 8);
        const uint64_t bit = UINT64_C(1) << (j % 64);
        w = ref_bin_f32(x, scale, bias, j) < 0.0f ? w | bit : w & ~bit;
        memcpy(t_out_want(&out, i, j / 64), &w, 8);
      }
    }
  }
  const size_t c_size = output == bout_bits ? 8 : 4;
  for (size_t bl = 0; bl < blocks; bl++) {
    const size_t n0 = bl * cfg->nr, nr = gemmi8_min(cfg->nr, n - n0);
    const struct gemmi8_bparams p = {scale ? scale + n0 : NULL, bias ? bias + n0 : NULL, n0};
    uint8_t* c = (uint8_t*) out.body + (output == bout_bits ? 0 : n0 * c_size);
    fn(m, nr, k, a, a_stride, packed + bl * block_bytes, c, c_stride * c_size, &p);
  }
  if (output == bout_bits && n % 64 != 0) {
    /* bits past n in the last word are the driver's to clear */
    const uint64_t keep = (UINT64_C(1) << (n % 64)) - 1;
    for (size_t i = 0; i < m; i++) {
      uint64_t got, want;
      memcpy(&got, (uint8_t*) out.body + (i * c_stride + n / 64) * 8, 8);
      memcpy(&want, t_out_want(&out, i, n / 64), 8);
      want = (want & keep) | (got & ~keep);
      memcpy(t_out_want(&out, i, n / 64), &want, 8);
    }
  }
  char msg[256];
  size_t bad_row, bad_col;
  if (t_out_same(&out, msg, sizeof(msg), &bad_row, &bad_col)) {
    t_pass();
  } else {
    t_fail("ukernel", "%s (MR %zu, M x N x K = %zu x %zu x %zu): %s", name, r, m, n, k, msg);
  }
  t_out_free(&out);
  free(a), free(b), free(acc), free(scale), free(bias), free(packed);
}

static size_t bcases(const struct gemmi8_bgemm_config* cfg, size_t r, bcase* cs, size_t max)
{
  const size_t NR = cfg->nr;
  size_t c = 0;
#define ADD(...)                                                    \
  do {                                                              \
    if (c < max) {                                                  \
      memset(&cs[c], 0, sizeof(cs[c]));                             \
      cs[c].m = r, cs[c].n = NR, cs[c].k = 200;                     \
      __VA_ARGS__;                                                  \
      c++;                                                          \
    }                                                               \
  } while (0)
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "k_64"); cs[c].k = 64);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "k_1"); cs[c].k = 1);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "k_63"); cs[c].k = 63);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "k_65"); cs[c].k = 65);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "k_long"); cs[c].k = t_quick ? 1000 : 4099);
  for (size_t m = 1; m < r; m++) {
    ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "m_lt_mr/m%zu", m); cs[c].m = m);
  }
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "n_1"); cs[c].n = 1);
  if (NR > 1) ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "n_lt_nr"); cs[c].n = NR - 1);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "n_gt_nr"); cs[c].n = NR + 1);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "n_crosses_words"); cs[c].n = 64 + NR + 3);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "n_130"); cs[c].n = 130);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "strides_prime"); cs[c].a_pad = 3; cs[c].c_pad = 5;
      cs[c].n = 2 * NR + 1);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "no_scale"); cs[c].no_scale = 1; cs[c].n = 2 * NR);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "no_bias"); cs[c].no_bias = 1; cs[c].n = 2 * NR);
  ADD(snprintf(cs[c].tag, sizeof(cs[c].tag), "no_scale_no_bias"); cs[c].no_scale = 1;
      cs[c].no_bias = 1);
#undef ADD
  return c;
}

static void test_btables(unsigned long* skipped)
{
  int supported;
  for (size_t t = 0;; t++) {
    const struct gemmi8_bgemm_config* cfg = gemmi8_bgemm_config_at(t, &supported);
    if (cfg == NULL) break;
    for (size_t r = 1; r <= GEMMI8_MAX_MR; r++) {
      const struct gemmi8_bgemm_ukernels* u = &cfg->gemm[r - 1];
      if (u->s32 == NULL) continue;
      char tile[32];
      snprintf(tile, sizeof(tile), "%zux%u", r, (unsigned) cfg->nr);
      if (!supported) {
        char prefix[96];
        snprintf(prefix, sizeof(prefix), "bin/%s/%s", cfg->isa, tile);
        if (filter == NULL || strstr(prefix, filter) != NULL) {
          printf("   skipped: %s (not supported on this CPU)\n", prefix);
          (*skipped)++;
        }
        continue;
      }
      bcase cs[48];
      const size_t count = bcases(cfg, r, cs, T_COUNT(cs));
      for (int o = 0; o < 3; o++) {
        const gemmi8_bgemm_ukernel_fn fn =
            o == bout_s32 ? u->s32 : (o == bout_f32 ? u->f32 : u->bits);
        for (size_t i = 0; i < count; i++) {
          if ((cs[i].no_scale || cs[i].no_bias) && o == bout_s32) continue;
          char name[320];
          snprintf(name, sizeof(name), "bin/%.31s/%.31s/%s/%.47s", cfg->isa, tile, bout_names[o],
                   cs[i].tag);
          if (!begin_case(name)) continue;
          run_bcase(cfg, r, o, fn, &cs[i], name);
        }
      }
    }
  }
}

unsigned long test_ukernel(uint64_t seed)
{
  const char* f = getenv("GEMMI8_TEST_FILTER");
  filter = f != NULL && *f != '\0' ? f : NULL;
  base_seed = seed;
  cases_run = 0;
  unsigned long skipped = 0;
  test_qtables(gemmi8_type_qu8, &skipped);
  test_qtables(gemmi8_type_qs8, &skipped);
  test_btables(&skipped);
  printf("   %lu kernel cases run%s%s%s\n", cases_run, filter ? " (GEMMI8_TEST_FILTER=" : "",
         filter ? filter : "", filter ? ")" : "");
  return skipped;
}
