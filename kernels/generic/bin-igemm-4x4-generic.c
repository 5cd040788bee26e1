/*
 * Binary convolution microkernels (igemm), 4x4 (64-bit words), portable C: the
 * reference for every other set. A is ks taps of 4 row pointers, GEMMI8_BIN_WORDS(kc)
 * words read from each (the bits past kc are 0); the block holds each tap's words, 4
 * words (one per column) a depth word. See gemmi8_bigemm_ukernel_fn.
 */
#include "requant.h"

#define MR 4
#define NR 4

static void accumulate(size_t mr, size_t nr, size_t kc, size_t ks, const uint64_t* const* a,
                       const uint64_t* w, size_t a_offset, const void* zero,
                       const struct gemmi8_bcparams* p, int32_t acc[MR][NR])
{
  const size_t words = GEMMI8_BIN_WORDS(kc);
  int64_t count[MR][NR] = {{0}};
  for (size_t t = 0; t < ks; t++) {
    const uint64_t* ap[MR];
    for (size_t i = 0; i < MR; i++) {
      ap[i] = a[i];
      if ((const void*) ap[i] != zero) {
        ap[i] = (const uint64_t*) ((const uint8_t*) ap[i] + a_offset);
      }
    }
    a += MR;
    for (size_t kw = 0; kw < words; kw++) {
      for (size_t i = 0; i < mr; i++) {
        const uint64_t va = ap[i][kw];
        for (size_t j = 0; j < NR; j++) count[i][j] += __builtin_popcountll(va ^ w[j]);
      }
      w += NR;
    }
  }
  const int64_t k = (int64_t) ks * (int64_t) kc;
  for (size_t i = 0; i < mr; i++) {
    const int32_t* corr = p->corr != NULL ? p->corr[i] : NULL;
    for (size_t j = 0; j < NR; j++) {
      int64_t v = k - 2 * count[i][j];
      if (corr != NULL && j < nr) v -= corr[j]; /* it holds the tile's nr columns */
      acc[i][j] = (int32_t) v;
    }
  }
}

void gemmi8_bin_igemm_s32_ukernel_4x4__generic(size_t mr, size_t nr, size_t kc, size_t ks,
                                               const uint64_t* const* a, const void* w,
                                               void* c, size_t c_stride, size_t a_offset,
                                               const void* zero,
                                               const struct gemmi8_bcparams* p)
{
  int32_t acc[MR][NR];
  accumulate(mr, nr, kc, ks, a, w, a_offset, zero, p, acc);
  for (size_t i = 0; i < mr; i++) {
    int32_t* ci = (int32_t*) ((uint8_t*) c + i * c_stride);
    for (size_t j = 0; j < nr; j++) ci[j] = acc[i][j];
  }
}

void gemmi8_bin_igemm_f32_ukernel_4x4__generic(size_t mr, size_t nr, size_t kc, size_t ks,
                                               const uint64_t* const* a, const void* w,
                                               void* c, size_t c_stride, size_t a_offset,
                                               const void* zero,
                                               const struct gemmi8_bcparams* p)
{
  int32_t acc[MR][NR];
  accumulate(mr, nr, kc, ks, a, w, a_offset, zero, p, acc);
  for (size_t i = 0; i < mr; i++) {
    float* ci = (float*) ((uint8_t*) c + i * c_stride);
    for (size_t j = 0; j < nr; j++) ci[j] = gemmi8_bin_conv_f32(acc[i][j], p, j, p->add ? ci[j] : 0.0f);
  }
}

void gemmi8_bin_igemm_bits_ukernel_4x4__generic(size_t mr, size_t nr, size_t kc, size_t ks,
                                                const uint64_t* const* a, const void* w,
                                                void* c, size_t c_stride, size_t a_offset,
                                                const void* zero,
                                                const struct gemmi8_bcparams* p)
{
  int32_t acc[MR][NR];
  accumulate(mr, nr, kc, ks, a, w, a_offset, zero, p, acc);
  for (size_t i = 0; i < mr; i++) {
    uint64_t* ci = (uint64_t*) ((uint8_t*) c + i * c_stride);
    for (size_t j = 0; j < nr; j++) {
      const size_t bit = p->n0 + j;
      const uint64_t one = UINT64_C(1) << (bit % 64);
      if (gemmi8_bin_conv_bit(acc[i][j], p, j)) {
        ci[bit / 64] |= one;
      } else {
        ci[bit / 64] &= ~one;
      }
    }
  }
}
