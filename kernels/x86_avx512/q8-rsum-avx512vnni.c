/*
 * Row sums of uint8 (qu8) or int8 (qs8) rows, AVX-512BW: vpsadbw against zero adds
 * 8 bytes into each quadword; int8 rows are flipped to uint8 (x ^ 0x80 = x + 128)
 * and corrected by 128 per byte. The tail is a masked load: no read past a row.
 */
#include <immintrin.h>

#include "common.h"

static inline int32_t row_sum_u8(size_t k, const uint8_t* a)
{
  __m512i vsum = _mm512_setzero_si512();
  const __m512i vzero = _mm512_setzero_si512();
  size_t kk = 0;
  for (; kk + 64 <= k; kk += 64) {
    vsum = _mm512_add_epi64(vsum, _mm512_sad_epu8(_mm512_loadu_si512(a + kk), vzero));
  }
  if (kk < k) {
    const __mmask64 tail = _bzhi_u64(~UINT64_C(0), (unsigned) (k - kk));
    vsum = _mm512_add_epi64(vsum, _mm512_sad_epu8(_mm512_maskz_loadu_epi8(tail, a + kk), vzero));
  }
  return (int32_t) _mm512_reduce_add_epi64(vsum);
}

static inline int32_t row_sum_s8(size_t k, const uint8_t* a)
{
  __m512i vsum = _mm512_setzero_si512();
  const __m512i vflip = _mm512_set1_epi8((char) 0x80);
  size_t kk = 0;
  for (; kk + 64 <= k; kk += 64) {
    const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(a + kk), vflip);
    vsum = _mm512_add_epi64(vsum, _mm512_sad_epu8(v, _mm512_setzero_si512()));
  }
  if (kk < k) {
    const __mmask64 tail = _bzhi_u64(~UINT64_C(0), (unsigned) (k - kk));
    /* masked-off bytes become 0x80 after the flip: 128 each, removed below */
    const __m512i v = _mm512_xor_si512(_mm512_maskz_loadu_epi8(tail, a + kk), vflip);
    vsum = _mm512_add_epi64(vsum, _mm512_sad_epu8(v, _mm512_setzero_si512()));
  }
  return (int32_t) (_mm512_reduce_add_epi64(vsum) - 128 * (int64_t) gemmi8_round_up(k, 64));
}

void gemmi8_qu8_rsum__avx512vnni(size_t m, size_t k, const void* a, size_t a_stride,
                                 int32_t* sums)
{
  for (size_t i = 0; i < m; i++) sums[i] = row_sum_u8(k, (const uint8_t*) a + i * a_stride);
}

void gemmi8_qs8_rsum__avx512vnni(size_t m, size_t k, const void* a, size_t a_stride,
                                 int32_t* sums)
{
  for (size_t i = 0; i < m; i++) sums[i] = row_sum_s8(k, (const uint8_t*) a + i * a_stride);
}
