/*
 * Dynamic row quantization, AVX-512 F/BW (src/qrows.h): vminps / vmaxps over 32
 * floats a step for the row's range (a masked last step), the parameters in scalar
 * code, then 16 values a step: vdivps (u8) or vmulps (s8), vmaxps with the lower
 * bound first (a NaN takes it, as the scalar clamp), vminps, vcvtps2dq (nearest
 * even), + zero point, vpmov(u)sdb to bytes. The last k % 16 values go through masked
 * loads and stores, so no read or write goes past k.
 */
#include <immintrin.h>

#include "microkernel.h"
#include "qrows.h"

static void minmax_avx512(size_t k, const float* x, float* lo, float* hi)
{
  __m512 vmin = _mm512_set1_ps(x[0]), vmax = vmin;
  size_t i = 0;
  for (; i + 16 <= k; i += 16) {
    const __m512 vx = _mm512_loadu_ps(x + i);
    vmin = _mm512_min_ps(vmin, vx);
    vmax = _mm512_max_ps(vmax, vx);
  }
  if (i < k) {
    /* lanes past k load x[0]'s broadcast, which is already in the range */
    const __mmask16 m = (__mmask16) ((1u << (k - i)) - 1);
    const __m512 vx = _mm512_mask_loadu_ps(_mm512_set1_ps(x[0]), m, x + i);
    vmin = _mm512_min_ps(vmin, vx);
    vmax = _mm512_max_ps(vmax, vx);
  }
  *lo = _mm512_reduce_min_ps(vmin);
  *hi = _mm512_reduce_max_ps(vmax);
}

#define QUANTIZE_16(vx, OP, vfactor) \
  _mm512_add_epi32(                  \
      _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(OP(vx, vfactor), vlower), vupper)), vzp)

#if GEMMI8_KERNELS_qu8
void gemmi8_qu8_quantize_rows__avx512bw(size_t rows, size_t k, const float* x, size_t x_stride,
                                        void* y, size_t y_stride, float* scale, int32_t* zero_point)
{
  for (size_t r = 0; r < rows; r++) {
    const float* row = (const float*) ((const uint8_t*) x + r * x_stride);
    uint8_t* out = (uint8_t*) y + r * y_stride;
    float lo, hi;
    minmax_avx512(k, row, &lo, &hi);
    const struct gemmi8_qrow_params p = gemmi8_qrow_params_u8(lo, hi);
    const __m512 vscale = _mm512_set1_ps(p.scale);
    const __m512 vlower = _mm512_set1_ps(p.lower);
    const __m512 vupper = _mm512_set1_ps(p.upper);
    const __m512i vzp = _mm512_set1_epi32(p.zp);
    size_t i = 0;
    for (; i + 16 <= k; i += 16) {
      const __m512i vi = QUANTIZE_16(_mm512_loadu_ps(row + i), _mm512_div_ps, vscale);
      _mm_storeu_si128((__m128i*) (out + i), _mm512_cvtusepi32_epi8(vi));
    }
    if (i < k) {
      const __mmask16 m = (__mmask16) ((1u << (k - i)) - 1);
      const __m512i vi = QUANTIZE_16(_mm512_maskz_loadu_ps(m, row + i), _mm512_div_ps, vscale);
      _mm_mask_storeu_epi8(out + i, m, _mm512_cvtusepi32_epi8(vi));
    }
    scale[r] = p.scale;
    zero_point[r] = p.zp;
  }
}
#endif

#if GEMMI8_KERNELS_qs8
void gemmi8_qs8_quantize_rows__avx512bw(size_t rows, size_t k, const float* x, size_t x_stride,
                                        void* y, size_t y_stride, float* scale, int32_t* zero_point)
{
  for (size_t r = 0; r < rows; r++) {
    const float* row = (const float*) ((const uint8_t*) x + r * x_stride);
    int8_t* out = (int8_t*) y + r * y_stride;
    float lo, hi;
    minmax_avx512(k, row, &lo, &hi);
    const struct gemmi8_qrow_params p = gemmi8_qrow_params_s8(lo, hi);
    const __m512 vinv = _mm512_set1_ps(p.inv);
    const __m512 vlower = _mm512_set1_ps(p.lower);
    const __m512 vupper = _mm512_set1_ps(p.upper);
    const __m512i vzp = _mm512_set1_epi32(p.zp);
    size_t i = 0;
    for (; i + 16 <= k; i += 16) {
      const __m512i vi = QUANTIZE_16(_mm512_loadu_ps(row + i), _mm512_mul_ps, vinv);
      _mm_storeu_si128((__m128i*) (out + i), _mm512_cvtsepi32_epi8(vi));
    }
    if (i < k) {
      const __mmask16 m = (__mmask16) ((1u << (k - i)) - 1);
      const __m512i vi = QUANTIZE_16(_mm512_maskz_loadu_ps(m, row + i), _mm512_mul_ps, vinv);
      _mm_mask_storeu_epi8(out + i, m, _mm512_cvtsepi32_epi8(vi));
    }
    scale[r] = p.scale;
    zero_point[r] = p.zp;
  }
}
#endif
