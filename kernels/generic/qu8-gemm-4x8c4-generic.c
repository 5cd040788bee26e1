/*
 * qu8 GEMM microkernels, 4x8c4, portable C: the reference every ISA must equal.
 *   acc[i][j] = bias'[j] + sum_k a[i][k] * w[k][j] + coef[j] * sum_k a[i][k]  (mod 2^32)
 * with coef = -b_zp, then int32 out, fixed-point or fp32 requantization.
 * Block: int32 bias'[8], int32 coef[8], weights in k groups of 4: [k/4][8][4].
 */
#include "requant.h"

#define MR 4
#define NR 8
#define KR 4

static void accumulate(size_t mr, size_t k, const uint8_t* a, size_t a_stride,
                       const uint8_t* w, int32_t acc[MR][NR])
{
  const int32_t* bias = (const int32_t*) w;
  const int32_t* coef = bias + NR;
  const uint8_t* wk = (const uint8_t*) (coef + NR);
  uint32_t sum[MR][NR];
  uint32_t row_sum[MR];
  for (size_t i = 0; i < mr; i++) {
    row_sum[i] = 0;
    for (size_t j = 0; j < NR; j++) sum[i][j] = (uint32_t) bias[j];
  }
  for (size_t kk = 0; kk < k; kk++) {
    const uint8_t* wg = wk + (kk / KR) * NR * KR + kk % KR;
    for (size_t i = 0; i < mr; i++) {
      const uint32_t va = a[i * a_stride + kk];
      row_sum[i] += va;
      for (size_t j = 0; j < NR; j++) sum[i][j] += va * (uint32_t) wg[j * KR];
    }
  }
  for (size_t i = 0; i < mr; i++) {
    for (size_t j = 0; j < NR; j++) {
      acc[i][j] = (int32_t) (sum[i][j] + (uint32_t) coef[j] * row_sum[i]);
    }
  }
}

void gemmi8_qu8_gemm_s32_ukernel_4x8c4__generic(size_t mr, size_t nr, size_t k,
                                                const void* a, size_t a_stride, const void* w,
                                                void* c, size_t c_stride,
                                                const struct gemmi8_qparams* params)
{
  (void) params;
  int32_t acc[MR][NR];
  accumulate(mr, k, a, a_stride, w, acc);
  for (size_t i = 0; i < mr; i++) {
    int32_t* ci = (int32_t*) ((uint8_t*) c + i * c_stride);
    for (size_t j = 0; j < nr; j++) ci[j] = acc[i][j];
  }
}

void gemmi8_qu8_gemm_fixedpoint_ukernel_4x8c4__generic(size_t mr, size_t nr, size_t k,
                                                  const void* a, size_t a_stride, const void* w,
                                                  void* c, size_t c_stride,
                                                  const struct gemmi8_qparams* p)
{
  int32_t acc[MR][NR];
  accumulate(mr, k, a, a_stride, w, acc);
  for (size_t i = 0; i < mr; i++) {
    uint8_t* ci = (uint8_t*) c + i * c_stride;
    for (size_t j = 0; j < nr; j++) {
      ci[j] = (uint8_t) gemmi8_output_fixedpoint(acc[i][j], p->multiplier[j * p->channel_stride],
                                             p->shift[j * p->channel_stride], p->zero_point,
                                             p->min, p->max);
    }
  }
}

void gemmi8_qu8_gemm_fp32_ukernel_4x8c4__generic(size_t mr, size_t nr, size_t k,
                                                 const void* a, size_t a_stride, const void* w,
                                                 void* c, size_t c_stride,
                                                 const struct gemmi8_qparams* p)
{
  int32_t acc[MR][NR];
  accumulate(mr, k, a, a_stride, w, acc);
  for (size_t i = 0; i < mr; i++) {
    uint8_t* ci = (uint8_t*) c + i * c_stride;
    for (size_t j = 0; j < nr; j++) {
      ci[j] = (uint8_t) gemmi8_requantize_fp32(acc[i][j], p->scale[j * p->channel_stride],
                                               p->zero_point, p->min, p->max);
    }
  }
}
