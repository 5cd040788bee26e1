/*
 * Sign-bit packing of activation rows, AVX2: compares and vmovmskps / vpmovmskb give
 * 8 or 32 bits at a time. Whole words are vectorized; the partial last word is
 * finished in scalar code, so no read goes past k.
 */
#include <immintrin.h>

#include "pack.h"

void gemmi8_binarize_f32__avx2(size_t rows, size_t k, const void* x, size_t x_stride,
                               uint8_t zero_point, uint64_t* out, size_t out_stride)
{
  (void) zero_point;
  const __m256 vzero = _mm256_setzero_ps();
  for (size_t r = 0; r < rows; r++) {
    const float* row = (const float*) ((const uint8_t*) x + r * x_stride);
    uint64_t* o = out + r * out_stride;
    size_t w0 = 0;
    for (; w0 + 64 <= k; w0 += 64) {
      uint64_t word = 0;
      for (size_t j = 0; j < 64; j += 8) {
        /* ordered less-than: NaN and -0.0f give +1 (bit clear), as in C */
        const __m256 v = _mm256_cmp_ps(_mm256_loadu_ps(row + w0 + j), vzero, _CMP_LT_OQ);
        word |= (uint64_t) (uint32_t) _mm256_movemask_ps(v) << j;
      }
      o[w0 / 64] = word;
    }
    if (w0 < k) {
      uint64_t word = 0;
      for (size_t j = 0; w0 + j < k; j++) word |= (uint64_t) (row[w0 + j] < 0.0f) << j;
      o[w0 / 64] = word;
    }
  }
}

/* Bit j set when byte j of the 64 at p, as uint8 after xor-ing with flip, is below
 * limit (also xor-ed): an unsigned compare built from the signed one. */
static inline uint64_t below64(const uint8_t* p, __m256i vlimit, __m256i vflip)
{
  const __m256i lo = _mm256_xor_si256(_mm256_loadu_si256((const __m256i*) p), vflip);
  const __m256i hi = _mm256_xor_si256(_mm256_loadu_si256((const __m256i*) (p + 32)), vflip);
  const uint32_t mlo = (uint32_t) _mm256_movemask_epi8(_mm256_cmpgt_epi8(vlimit, lo));
  const uint32_t mhi = (uint32_t) _mm256_movemask_epi8(_mm256_cmpgt_epi8(vlimit, hi));
  return (uint64_t) mlo | ((uint64_t) mhi << 32);
}

void gemmi8_binarize_s8__avx2(size_t rows, size_t k, const void* x, size_t x_stride,
                              uint8_t zero_point, uint64_t* out, size_t out_stride)
{
  (void) zero_point;
  for (size_t r = 0; r < rows; r++) {
    const int8_t* row = (const int8_t*) x + r * x_stride;
    uint64_t* o = out + r * out_stride;
    size_t w0 = 0;
    for (; w0 + 64 <= k; w0 += 64) {
      /* the sign bits are the bits */
      const __m256i lo = _mm256_loadu_si256((const __m256i*) (row + w0));
      const __m256i hi = _mm256_loadu_si256((const __m256i*) (row + w0 + 32));
      o[w0 / 64] = (uint64_t) (uint32_t) _mm256_movemask_epi8(lo) |
                   ((uint64_t) (uint32_t) _mm256_movemask_epi8(hi) << 32);
    }
    if (w0 < k) {
      uint64_t word = 0;
      for (size_t j = 0; w0 + j < k; j++) word |= (uint64_t) (row[w0 + j] < 0) << j;
      o[w0 / 64] = word;
    }
  }
}

void gemmi8_binarize_u8__avx2(size_t rows, size_t k, const void* x, size_t x_stride,
                              uint8_t zero_point, uint64_t* out, size_t out_stride)
{
  const __m256i vflip = _mm256_set1_epi8((char) 0x80);
  const __m256i vlimit = _mm256_set1_epi8((char) (zero_point ^ 0x80));
  for (size_t r = 0; r < rows; r++) {
    const uint8_t* row = (const uint8_t*) x + r * x_stride;
    uint64_t* o = out + r * out_stride;
    size_t w0 = 0;
    for (; w0 + 64 <= k; w0 += 64) o[w0 / 64] = below64(row + w0, vlimit, vflip);
    if (w0 < k) {
      uint64_t word = 0;
      for (size_t j = 0; w0 + j < k; j++) word |= (uint64_t) (row[w0 + j] < zero_point) << j;
      o[w0 / 64] = word;
    }
  }
}
