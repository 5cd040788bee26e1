/*
 * Binary GEMM microkernels, 4x4 (64-bit words), portable C.
 *   acc[i][j] = k - 2 * popcount(a[i] XOR w[j]) over the k real bits; the padding
 *   bits of a's last word are masked off (the packed weights' padding is 0).
 * Outputs: int32; float acc * scale + bias (two roundings); sign bits of that float.
 * Block: for each 64-bit word of depth, 4 words, one per column.
 */
#include "requant.h"

#define MR 4
#define NR 4

static void accumulate(size_t mr, size_t k, const uint64_t* a, size_t a_stride,
                       const uint64_t* w, int32_t acc[MR][NR])
{
  const size_t words = GEMMI8_BIN_WORDS(k);
  const uint64_t last_mask = (k % 64) ? (UINT64_C(1) << (k % 64)) - 1 : ~UINT64_C(0);
  int64_t count[MR][NR] = {{0}};
  for (size_t kw = 0; kw < words; kw++) {
    const uint64_t mask = kw + 1 == words ? last_mask : ~UINT64_C(0);
    for (size_t i = 0; i < mr; i++) {
      const uint64_t va = a[i * a_stride + kw] & mask;
      for (size_t j = 0; j < NR; j++) count[i][j] += __builtin_popcountll(va ^ w[kw * NR + j]);
    }
  }
  for (size_t i = 0; i < mr; i++) {
    for (size_t j = 0; j < NR; j++) acc[i][j] = (int32_t) ((int64_t) k - 2 * count[i][j]);
  }
}

void gemmi8_bin_gemm_s32_ukernel_4x4__generic(size_t mr, size_t nr, size_t k, const uint64_t* a,
                                              size_t a_stride, const void* w, void* c,
                                              size_t c_stride, const struct gemmi8_bparams* p)
{
  (void) p;
  int32_t acc[MR][NR];
  accumulate(mr, k, a, a_stride, w, acc);
  for (size_t i = 0; i < mr; i++) {
    int32_t* ci = (int32_t*) ((uint8_t*) c + i * c_stride);
    for (size_t j = 0; j < nr; j++) ci[j] = acc[i][j];
  }
}

void gemmi8_bin_gemm_f32_ukernel_4x4__generic(size_t mr, size_t nr, size_t k, const uint64_t* a,
                                              size_t a_stride, const void* w, void* c,
                                              size_t c_stride, const struct gemmi8_bparams* p)
{
  int32_t acc[MR][NR];
  accumulate(mr, k, a, a_stride, w, acc);
  for (size_t i = 0; i < mr; i++) {
    float* ci = (float*) ((uint8_t*) c + i * c_stride);
    for (size_t j = 0; j < nr; j++) ci[j] = gemmi8_bin_affine1(acc[i][j], p, j);
  }
}

void gemmi8_bin_gemm_bits_ukernel_4x4__generic(size_t mr, size_t nr, size_t k, const uint64_t* a,
                                               size_t a_stride, const void* w, void* c,
                                               size_t c_stride, const struct gemmi8_bparams* p)
{
  int32_t acc[MR][NR];
  accumulate(mr, k, a, a_stride, w, acc);
  for (size_t i = 0; i < mr; i++) {
    uint64_t* ci = (uint64_t*) ((uint8_t*) c + i * c_stride);
    for (size_t j = 0; j < nr; j++) {
      const size_t bit = p->n0 + j;
      const uint64_t one = UINT64_C(1) << (bit % 64);
      if (gemmi8_bin_affine1(acc[i][j], p, j) < 0.0f) {
        ci[bit / 64] |= one;
      } else {
        ci[bit / 64] &= ~one;
      }
    }
  }
}
