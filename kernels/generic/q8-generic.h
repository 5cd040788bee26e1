/*
 * Portable C pieces shared by the generic qu8 / qs8 GEMM and igemm microkernels
 * (4x8c4): the depth loop over rows given as pointers, and the three epilogues.
 * Block: int32 bias'[8], int32 coef[8] when COEF (qu8: coef * rowsum(a) is added),
 * then the weights in k groups of 4: [k/4][8][4].
 */
#ifndef GEMMI8_Q8_GENERIC_H
#define GEMMI8_Q8_GENERIC_H

#include <string.h>

#include "requant.h"

#define GEMMI8_GENERIC_MR 4
#define GEMMI8_GENERIC_NR 8
#define GEMMI8_GENERIC_KR 4

/* sum[i][j] += a_i[kk] * w[kk][j] for kk < k and row_sum[i] += a_i[kk], rows i < mr
 * read from a[i]; weights from wk (k rounded up to KR). SIGNED: a and w are int8 (qs8),
 * else a is uint8 and w uint8 (qu8). Modulo 2^32. */
static inline void gemmi8_q8_generic_accumulate(const int is_signed, size_t mr, size_t k,
                                                const uint8_t* const* a, const uint8_t* wk,
                                                uint32_t sum[GEMMI8_GENERIC_MR][GEMMI8_GENERIC_NR],
                                                uint32_t row_sum[GEMMI8_GENERIC_MR])
{
  const size_t NR = GEMMI8_GENERIC_NR, KR = GEMMI8_GENERIC_KR;
  for (size_t kk = 0; kk < k; kk++) {
    const uint8_t* wg = wk + (kk / KR) * NR * KR + kk % KR;
    for (size_t i = 0; i < mr; i++) {
      const uint32_t va = is_signed ? (uint32_t) (int32_t) (int8_t) a[i][kk] : a[i][kk];
      row_sum[i] += va;
      for (size_t j = 0; j < NR; j++) {
        const uint32_t vw = is_signed ? (uint32_t) (int32_t) (int8_t) wg[j * KR] : wg[j * KR];
        sum[i][j] += va * vw;
      }
    }
  }
}

/* The final accumulators: sum, plus coef[j] * row_sum[i] when the block has coefs. */
static inline void gemmi8_q8_generic_finish(const int has_coef, size_t mr, const uint8_t* w,
                                            uint32_t sum[GEMMI8_GENERIC_MR][GEMMI8_GENERIC_NR],
                                            const uint32_t row_sum[GEMMI8_GENERIC_MR],
                                            int32_t acc[GEMMI8_GENERIC_MR][GEMMI8_GENERIC_NR])
{
  const int32_t* coef = (const int32_t*) w + GEMMI8_GENERIC_NR;
  for (size_t i = 0; i < mr; i++) {
    for (size_t j = 0; j < GEMMI8_GENERIC_NR; j++) {
      acc[i][j] = (int32_t) (sum[i][j] + (has_coef ? (uint32_t) coef[j] * row_sum[i] : 0u));
    }
  }
}

static inline void gemmi8_q8_generic_init(size_t mr, const uint8_t* w,
                                          uint32_t sum[GEMMI8_GENERIC_MR][GEMMI8_GENERIC_NR],
                                          uint32_t row_sum[GEMMI8_GENERIC_MR])
{
  const int32_t* bias = (const int32_t*) w;
  for (size_t i = 0; i < mr; i++) {
    row_sum[i] = 0;
    for (size_t j = 0; j < GEMMI8_GENERIC_NR; j++) sum[i][j] = (uint32_t) bias[j];
  }
}

/* Stores the mr x nr tile: OUT 0 int32, 1 fixed-point, 2 fp32 (8-bit outputs signed
 * for qs8, which the requantized value already is). */
static inline void gemmi8_q8_generic_store(const int out, size_t mr, size_t nr, void* c,
                                           size_t c_stride, const struct gemmi8_qparams* p,
                                           int32_t acc[GEMMI8_GENERIC_MR][GEMMI8_GENERIC_NR])
{
  for (size_t i = 0; i < mr; i++) {
    uint8_t* ci = (uint8_t*) c + i * c_stride;
    for (size_t j = 0; j < nr; j++) {
      if (out == 0) {
        memcpy(ci + 4 * j, &acc[i][j], 4);
      } else if (out == 1) {
        ci[j] = (uint8_t) gemmi8_output_fixedpoint(acc[i][j], p->multiplier[j * p->channel_stride],
                                                   p->shift[j * p->channel_stride],
                                                   p->zero_point, p->min, p->max);
      } else {
        ci[j] = (uint8_t) gemmi8_requantize_fp32(acc[i][j], p->scale[j * p->channel_stride],
                                                 p->zero_point, p->min, p->max);
      }
    }
  }
}

/* The GEMM kernel of a type and output: rows a + i * a_stride. */
#define GEMMI8_Q8_GENERIC_GEMM(fn, SIGNED, COEF, OUT)                                        \
  void fn(size_t mr, size_t nr, size_t k, const void* a, size_t a_stride, const void* w,     \
          void* c, size_t c_stride, const struct gemmi8_qparams* params)                     \
  {                                                                                          \
    const uint8_t* rows[GEMMI8_GENERIC_MR];                                                  \
    for (size_t i = 0; i < mr; i++) rows[i] = (const uint8_t*) a + i * a_stride;             \
    uint32_t sum[GEMMI8_GENERIC_MR][GEMMI8_GENERIC_NR], row_sum[GEMMI8_GENERIC_MR];          \
    int32_t acc[GEMMI8_GENERIC_MR][GEMMI8_GENERIC_NR];                                       \
    gemmi8_q8_generic_init(mr, w, sum, row_sum);                                             \
    gemmi8_q8_generic_accumulate(SIGNED, mr, k, rows,                                        \
                                 (const uint8_t*) w + (COEF ? 64 : 32), sum, row_sum);       \
    gemmi8_q8_generic_finish(COEF, mr, w, sum, row_sum, acc);                                \
    gemmi8_q8_generic_store(OUT, mr, nr, c, c_stride, params, acc);                          \
  }

/* The igemm kernel: ks taps of GEMMI8_GENERIC_MR row pointers, kc bytes from each
 * (a_offset added to every pointer but zero), each tap's weights round_up(kc, KR)
 * deep. The row sums run over the kc bytes read, as the driver's do. */
#define GEMMI8_Q8_GENERIC_IGEMM(fn, SIGNED, COEF, OUT)                                       \
  void fn(size_t mr, size_t nr, size_t kc, size_t ks, const void* const* a, const void* w,   \
          void* c, size_t c_stride, size_t a_offset, const void* zero,                       \
          const struct gemmi8_qparams* params)                                               \
  {                                                                                          \
    uint32_t sum[GEMMI8_GENERIC_MR][GEMMI8_GENERIC_NR], row_sum[GEMMI8_GENERIC_MR];          \
    int32_t acc[GEMMI8_GENERIC_MR][GEMMI8_GENERIC_NR];                                       \
    gemmi8_q8_generic_init(mr, w, sum, row_sum);                                             \
    const uint8_t* wk = (const uint8_t*) w + (COEF ? 64 : 32);                               \
    const size_t tap_bytes = gemmi8_round_up(kc, GEMMI8_GENERIC_KR) * GEMMI8_GENERIC_NR;     \
    for (size_t t = 0; t < ks; t++) {                                                        \
      const uint8_t* rows[GEMMI8_GENERIC_MR];                                                \
      for (size_t i = 0; i < mr; i++) {                                                      \
        const uint8_t* p = (const uint8_t*) a[t * GEMMI8_GENERIC_MR + i];                    \
        rows[i] = p == (const uint8_t*) zero ? p : p + a_offset;                             \
      }                                                                                      \
      gemmi8_q8_generic_accumulate(SIGNED, mr, kc, rows, wk, sum, row_sum);                  \
      wk += tap_bytes;                                                                       \
    }                                                                                        \
    gemmi8_q8_generic_finish(COEF, mr, w, sum, row_sum, acc);                                \
    gemmi8_q8_generic_store(OUT, mr, nr, c, c_stride, params, acc);                          \
  }

#endif
