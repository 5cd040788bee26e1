/*
 * Binary GEMM microkernels, 4x8 (words of depth), AVX2.
 *
 * Packed weights: for each 64-bit word of depth, 8 words (one per column). vacc<i>x<j>
 * (ymm, 4 x 64-bit lanes) counts the differing bits of row i against columns
 * 4j..4j+3: a row's word is broadcast, xor-ed with the column words, and counted by
 * two vpshufb nibble lookups summed into the lanes by vpsadbw. The last depth word
 * of a is masked to the real k bits. acc = k - 2 * count; outputs int32, float
 * (acc * scale + bias, two roundings) or the sign bits of that float.
 * Rows past mr alias row mr - 1; columns past nr are computed and not stored.
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

/* Writes acc = k - 2 * count for the MR x NR tile into out (row-major int32). */
static inline void accumulate(size_t mr, size_t k, const uint64_t* a, size_t a_stride,
                              const uint64_t* w, int32_t out[MR][NR])
{
  const __m256i vlut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1,
                                        1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i vnibble = _mm256_set1_epi8(0x0F);
  const uint64_t* a0 = a;
  const uint64_t* a1 = mr > 1 ? a0 + a_stride : a0;
  const uint64_t* a2 = mr > 2 ? a1 + a_stride : a1;
  const uint64_t* a3 = mr > 3 ? a2 + a_stride : a2;
  __m256i vacc0x0 = _mm256_setzero_si256(), vacc0x1 = _mm256_setzero_si256();
  __m256i vacc1x0 = _mm256_setzero_si256(), vacc1x1 = _mm256_setzero_si256();
  __m256i vacc2x0 = _mm256_setzero_si256(), vacc2x1 = _mm256_setzero_si256();
  __m256i vacc3x0 = _mm256_setzero_si256(), vacc3x1 = _mm256_setzero_si256();
  const size_t words = GEMMI8_BIN_WORDS(k);
  const uint64_t last = (k % 64) ? (UINT64_C(1) << (k % 64)) - 1 : ~UINT64_C(0);
  for (size_t kw = 0; kw < words; kw++) {
    const uint64_t mask = kw + 1 == words ? last : ~UINT64_C(0);
    const __m256i vw0 = _mm256_load_si256((const __m256i*) w);
    const __m256i vw1 = _mm256_load_si256((const __m256i*) (w + 4));
    w += NR;
    __m256i va = _mm256_set1_epi64x((long long) (a0[kw] & mask));
    vacc0x0 = _mm256_add_epi64(vacc0x0, popcnt64(_mm256_xor_si256(va, vw0), vlut, vnibble));
    vacc0x1 = _mm256_add_epi64(vacc0x1, popcnt64(_mm256_xor_si256(va, vw1), vlut, vnibble));
    va = _mm256_set1_epi64x((long long) (a1[kw] & mask));
    vacc1x0 = _mm256_add_epi64(vacc1x0, popcnt64(_mm256_xor_si256(va, vw0), vlut, vnibble));
    vacc1x1 = _mm256_add_epi64(vacc1x1, popcnt64(_mm256_xor_si256(va, vw1), vlut, vnibble));
    va = _mm256_set1_epi64x((long long) (a2[kw] & mask));
    vacc2x0 = _mm256_add_epi64(vacc2x0, popcnt64(_mm256_xor_si256(va, vw0), vlut, vnibble));
    vacc2x1 = _mm256_add_epi64(vacc2x1, popcnt64(_mm256_xor_si256(va, vw1), vlut, vnibble));
    va = _mm256_set1_epi64x((long long) (a3[kw] & mask));
    vacc3x0 = _mm256_add_epi64(vacc3x0, popcnt64(_mm256_xor_si256(va, vw0), vlut, vnibble));
    vacc3x1 = _mm256_add_epi64(vacc3x1, popcnt64(_mm256_xor_si256(va, vw1), vlut, vnibble));
  }
  const __m256i vacc[MR][2] = {
      {vacc0x0, vacc0x1}, {vacc1x0, vacc1x1}, {vacc2x0, vacc2x1}, {vacc3x0, vacc3x1}};
  const __m128i vk = _mm_set1_epi32((int32_t) k);
  /* 64-bit counts (< 2^31) to 32 bits: the low dwords of each lane */
  const __m256i vlow = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  for (size_t i = 0; i < MR; i++) {
    for (size_t j = 0; j < 2; j++) {
      const __m128i vcount =
          _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(vacc[i][j], vlow));
      const __m128i vresult = _mm_sub_epi32(vk, _mm_add_epi32(vcount, vcount));
      _mm_storeu_si128((__m128i*) &out[i][4 * j], vresult);
    }
  }
}

void gemmi8_bin_gemm_s32_ukernel_4x8__avx2(size_t mr, size_t nr, size_t k, const uint64_t* a,
                                           size_t a_stride, const void* w, void* c,
                                           size_t c_stride, const struct gemmi8_bparams* p)
{
  (void) p;
  int32_t acc[MR][NR];
  accumulate(mr, k, a, a_stride, w, acc);
  for (size_t i = 0; i < mr; i++) {
    int32_t* ci = (int32_t*) ((uint8_t*) c + i * c_stride);
    if (nr == NR) {
      _mm256_storeu_si256((__m256i*) ci, _mm256_loadu_si256((const __m256i*) acc[i]));
    } else {
      for (size_t j = 0; j < nr; j++) ci[j] = acc[i][j];
    }
  }
}

void gemmi8_bin_gemm_f32_ukernel_4x8__avx2(size_t mr, size_t nr, size_t k, const uint64_t* a,
                                           size_t a_stride, const void* w, void* c,
                                           size_t c_stride, const struct gemmi8_bparams* p)
{
  int32_t acc[MR][NR];
  accumulate(mr, k, a, a_stride, w, acc);
  const __m256 vscale = p->scale && nr == NR ? _mm256_loadu_ps(p->scale) : _mm256_set1_ps(1.0f);
  const __m256 vbias = p->bias && nr == NR ? _mm256_loadu_ps(p->bias) : _mm256_setzero_ps();
  for (size_t i = 0; i < mr; i++) {
    float* ci = (float*) ((uint8_t*) c + i * c_stride);
    if (nr == NR) {
      const __m256 vacc = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i*) acc[i]));
      _mm256_storeu_ps(ci, _mm256_add_ps(_mm256_mul_ps(vacc, vscale), vbias));
    } else {
      for (size_t j = 0; j < nr; j++) ci[j] = gemmi8_bin_affine1(acc[i][j], p, j);
    }
  }
}

void gemmi8_bin_gemm_bits_ukernel_4x8__avx2(size_t mr, size_t nr, size_t k, const uint64_t* a,
                                            size_t a_stride, const void* w, void* c,
                                            size_t c_stride, const struct gemmi8_bparams* p)
{
  int32_t acc[MR][NR];
  accumulate(mr, k, a, a_stride, w, acc);
  const unsigned offset = (unsigned) (p->n0 % 64);
  const uint64_t field = ((UINT64_C(1) << nr) - 1) << offset; /* NR | 64: one word */
  for (size_t i = 0; i < mr; i++) {
    uint64_t bits = 0;
    for (size_t j = 0; j < nr; j++) {
      bits |= (uint64_t) (gemmi8_bin_affine1(acc[i][j], p, j) < 0.0f) << j;
    }
    uint64_t* word = (uint64_t*) ((uint8_t*) c + i * c_stride) + p->n0 / 64;
    *word = (*word & ~field) | (bits << offset);
  }
}
