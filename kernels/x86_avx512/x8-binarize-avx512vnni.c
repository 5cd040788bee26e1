/*
 * Sign-bit packing of activation rows, AVX-512BW: a compare (or the byte sign bits)
 * gives the 64 bits of a word directly. Tails use masked loads: no read past k.
 */
#include <immintrin.h>

#include "common.h"

static inline __mmask64 tail_mask(size_t n) { return _bzhi_u64(~UINT64_C(0), (unsigned) n); }

void gemmi8_binarize_f32__avx512vnni(size_t k, const void* row, uint8_t zero_point,
                                     uint64_t* out)
{
  (void) zero_point;
  const float* x = row;
  const __m512 vzero = _mm512_setzero_ps();
  for (size_t w0 = 0; w0 < k; w0 += 64) {
    uint64_t word = 0;
    for (size_t j = 0; j < 64 && w0 + j < k; j += 16) {
      const size_t n = gemmi8_min(16, k - w0 - j);
      const __mmask16 valid = (__mmask16) tail_mask(n);
      const __m512 v = _mm512_maskz_loadu_ps(valid, x + w0 + j);
      /* ordered less-than: NaN and -0.0f give +1, as in C */
      word |= (uint64_t) _mm512_mask_cmp_ps_mask(valid, v, vzero, _CMP_LT_OQ) << j;
    }
    out[w0 / 64] = word;
  }
}

void gemmi8_binarize_s8__avx512vnni(size_t k, const void* row, uint8_t zero_point,
                                    uint64_t* out)
{
  (void) zero_point;
  const int8_t* x = row;
  size_t w0 = 0;
  for (; w0 + 64 <= k; w0 += 64) out[w0 / 64] = _mm512_movepi8_mask(_mm512_loadu_si512(x + w0));
  if (w0 < k) out[w0 / 64] = _mm512_movepi8_mask(_mm512_maskz_loadu_epi8(tail_mask(k - w0), x + w0));
}

void gemmi8_binarize_u8__avx512vnni(size_t k, const void* row, uint8_t zero_point,
                                    uint64_t* out)
{
  const uint8_t* x = row;
  const __m512i vzp = _mm512_set1_epi8((char) zero_point);
  size_t w0 = 0;
  for (; w0 + 64 <= k; w0 += 64) {
    out[w0 / 64] = _mm512_cmplt_epu8_mask(_mm512_loadu_si512(x + w0), vzp);
  }
  if (w0 < k) {
    const __mmask64 valid = tail_mask(k - w0);
    out[w0 / 64] = _mm512_mask_cmplt_epu8_mask(valid, _mm512_maskz_loadu_epi8(valid, x + w0), vzp);
  }
}
