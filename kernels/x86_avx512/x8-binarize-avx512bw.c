/*
 * Sign-bit packing of activation rows, AVX-512BW: a compare (or the byte sign bits)
 * gives the bits of a word directly; whole words take four float compares or one
 * byte compare, the tail a masked load (no read past k).
 */
#include <immintrin.h>

#include "pack.h"

static inline __mmask64 tail_mask(size_t n) { return _bzhi_u64(~UINT64_C(0), (unsigned) n); }

/* ordered less-than: NaN and -0.0f give +1 (bit clear), as the C comparison */
static inline uint64_t negative16(const float* x, __mmask16 valid)
{
  return _mm512_mask_cmp_ps_mask(valid, _mm512_maskz_loadu_ps(valid, x), _mm512_setzero_ps(),
                                 _CMP_LT_OQ);
}

void gemmi8_binarize_f32__avx512bw(size_t rows, size_t k, const void* x, size_t x_stride,
                                     uint8_t zero_point, uint64_t* out, size_t out_stride)
{
  (void) zero_point;
  const __m512 vzero = _mm512_setzero_ps();
  for (size_t r = 0; r < rows; r++) {
    const float* row = (const float*) ((const uint8_t*) x + r * x_stride);
    uint64_t* o = out + r * out_stride;
    size_t w0 = 0;
    for (; w0 + 64 <= k; w0 += 64) {
      const uint64_t m0 = _mm512_cmp_ps_mask(_mm512_loadu_ps(row + w0), vzero, _CMP_LT_OQ);
      const uint64_t m1 = _mm512_cmp_ps_mask(_mm512_loadu_ps(row + w0 + 16), vzero, _CMP_LT_OQ);
      const uint64_t m2 = _mm512_cmp_ps_mask(_mm512_loadu_ps(row + w0 + 32), vzero, _CMP_LT_OQ);
      const uint64_t m3 = _mm512_cmp_ps_mask(_mm512_loadu_ps(row + w0 + 48), vzero, _CMP_LT_OQ);
      o[w0 / 64] = m0 | (m1 << 16) | (m2 << 32) | (m3 << 48);
    }
    if (w0 < k) {
      uint64_t word = 0;
      for (size_t j = 0; w0 + j < k; j += 16) {
        word |= negative16(row + w0 + j, (__mmask16) tail_mask(gemmi8_min(16, k - w0 - j))) << j;
      }
      o[w0 / 64] = word;
    }
  }
}

void gemmi8_binarize_s8__avx512bw(size_t rows, size_t k, const void* x, size_t x_stride,
                                    uint8_t zero_point, uint64_t* out, size_t out_stride)
{
  (void) zero_point;
  const __mmask64 tail = tail_mask(k % 64);
  for (size_t r = 0; r < rows; r++) {
    const int8_t* row = (const int8_t*) x + r * x_stride;
    uint64_t* o = out + r * out_stride;
    size_t w0 = 0;
    for (; w0 + 64 <= k; w0 += 64) o[w0 / 64] = _mm512_movepi8_mask(_mm512_loadu_si512(row + w0));
    if (w0 < k) o[w0 / 64] = _mm512_movepi8_mask(_mm512_maskz_loadu_epi8(tail, row + w0));
  }
}

void gemmi8_binarize_u8__avx512bw(size_t rows, size_t k, const void* x, size_t x_stride,
                                    uint8_t zero_point, uint64_t* out, size_t out_stride)
{
  const __m512i vzp = _mm512_set1_epi8((char) zero_point);
  const __mmask64 tail = tail_mask(k % 64);
  for (size_t r = 0; r < rows; r++) {
    const uint8_t* row = (const uint8_t*) x + r * x_stride;
    uint64_t* o = out + r * out_stride;
    size_t w0 = 0;
    for (; w0 + 64 <= k; w0 += 64) {
      o[w0 / 64] = _mm512_cmplt_epu8_mask(_mm512_loadu_si512(row + w0), vzp);
    }
    if (w0 < k) {
      o[w0 / 64] = _mm512_mask_cmplt_epu8_mask(tail, _mm512_maskz_loadu_epi8(tail, row + w0), vzp);
    }
  }
}
