/*
 * Binary convolution microkernels (igemm), 4x8 (words of depth), AVX2: the layout and
 * the popcounts of the binary GEMM kernels of this set (bin-gemm-4x8-avx2.c), with A
 * read through ks taps of 4 row pointers (a_offset added to those that are not
 * `zero`), GEMMI8_BIN_WORDS(kc) words a tap (the bits past kc 0). The
 * accumulators (ks * kc - 2 * count - the row's correction) go to the output by the
 * scalar definitions (requant.h): the depth loop is the work, 32 outputs a tile.
 */
#include <immintrin.h>

#include "requant.h"

#define MR 4
#define NR 8

static inline __m256i popcnt64(__m256i x, __m256i vlut, __m256i vnibble)
{
  const __m256i vlo = _mm256_shuffle_epi8(vlut, _mm256_and_si256(x, vnibble));
  const __m256i vhi = _mm256_shuffle_epi8(vlut, _mm256_and_si256(_mm256_srli_epi16(x, 4), vnibble));
  return _mm256_sad_epu8(_mm256_add_epi8(vlo, vhi), _mm256_setzero_si256());
}

static void accumulate(size_t nr, size_t kc, size_t ks, const uint64_t* const* a, const uint64_t* w,
                       size_t a_offset, const void* zero, const struct gemmi8_bcparams* p,
                       int32_t out[MR][NR])
{
  const __m256i vlut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1,
                                        1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i vnibble = _mm256_set1_epi8(0x0F);
  __m256i vacc[MR][2];
  for (size_t i = 0; i < MR; i++) vacc[i][0] = vacc[i][1] = _mm256_setzero_si256();
  const size_t words = GEMMI8_BIN_WORDS(kc);
  for (size_t t = 0; t < ks; t++) {
    const uint64_t* ap[MR];
    for (size_t i = 0; i < MR; i++) {
      ap[i] = a[i];
      if ((const void*) ap[i] != zero) ap[i] = (const uint64_t*) ((uintptr_t) ap[i] + a_offset);
    }
    a += MR;
    for (size_t kw = 0; kw < words; kw++) {
      const __m256i vw0 = _mm256_load_si256((const __m256i*) w);
      const __m256i vw1 = _mm256_load_si256((const __m256i*) (w + 4));
      w += NR;
      for (size_t i = 0; i < MR; i++) {
        const __m256i va = _mm256_set1_epi64x((long long) ap[i][kw]);
        vacc[i][0] = _mm256_add_epi64(vacc[i][0], popcnt64(_mm256_xor_si256(va, vw0), vlut, vnibble));
        vacc[i][1] = _mm256_add_epi64(vacc[i][1], popcnt64(_mm256_xor_si256(va, vw1), vlut, vnibble));
      }
    }
  }
  const __m128i vk = _mm_set1_epi32((int32_t) (ks * kc));
  /* 64-bit counts (< 2^31) to 32 bits: the low dwords of each lane */
  const __m256i vlow = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  for (size_t i = 0; i < MR; i++) {
    const int32_t* corr = p->corr != NULL ? p->corr[i] : NULL;
    for (size_t j = 0; j < 2; j++) {
      const __m128i vcount =
          _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(vacc[i][j], vlow));
      _mm_storeu_si128((__m128i*) &out[i][4 * j], _mm_sub_epi32(vk, _mm_add_epi32(vcount, vcount)));
    }
    /* the row's correction holds the tile's nr columns */
    if (corr != NULL) {
      for (size_t j = 0; j < nr; j++) out[i][j] = (int32_t) ((uint32_t) out[i][j] - (uint32_t) corr[j]);
    }
  }
}

void gemmi8_bin_igemm_s32_ukernel_4x8__avx2(size_t mr, size_t nr, size_t kc, size_t ks,
                                            const uint64_t* const* a, const void* w, void* c,
                                            size_t c_stride, size_t a_offset, const void* zero,
                                            const struct gemmi8_bcparams* p)
{
  int32_t acc[MR][NR];
  accumulate(nr, kc, ks, a, w, a_offset, zero, p, acc);
  for (size_t i = 0; i < mr; i++) {
    int32_t* ci = (int32_t*) ((uint8_t*) c + i * c_stride);
    for (size_t j = 0; j < nr; j++) ci[j] = acc[i][j];
  }
}

void gemmi8_bin_igemm_f32_ukernel_4x8__avx2(size_t mr, size_t nr, size_t kc, size_t ks,
                                            const uint64_t* const* a, const void* w, void* c,
                                            size_t c_stride, size_t a_offset, const void* zero,
                                            const struct gemmi8_bcparams* p)
{
  int32_t acc[MR][NR];
  accumulate(nr, kc, ks, a, w, a_offset, zero, p, acc);
  for (size_t i = 0; i < mr; i++) {
    float* ci = (float*) ((uint8_t*) c + i * c_stride);
    for (size_t j = 0; j < nr; j++) ci[j] = gemmi8_bin_conv_f32(acc[i][j], p, j, p->add ? ci[j] : 0.0f);
  }
}

void gemmi8_bin_igemm_bits_ukernel_4x8__avx2(size_t mr, size_t nr, size_t kc, size_t ks,
                                             const uint64_t* const* a, const void* w, void* c,
                                             size_t c_stride, size_t a_offset, const void* zero,
                                             const struct gemmi8_bcparams* p)
{
  int32_t acc[MR][NR];
  accumulate(nr, kc, ks, a, w, a_offset, zero, p, acc);
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
