/*
 * Dynamic row quantization, AVX2 (src/qrows.h): vminps / vmaxps over 16 floats a step
 * for the row's range, the parameters in scalar code, then 32 values a step: vdivps
 * (u8) or vmulps (s8), vmaxps with the lower bound first (a NaN takes it, as the
 * scalar clamp), vminps, vcvtps2dq (nearest even), + zero point, packed to bytes. The
 * last k % 32 values take the scalar path of the same operations; no read or write
 * goes past k.
 */
#include <immintrin.h>

#include "microkernel.h"
#include "qrows.h"

static void minmax_avx2(size_t k, const float* x, float* lo, float* hi)
{
  size_t i = 0;
  float mn = x[0], mx = x[0];
  if (k >= 16) {
    __m256 vmin0 = _mm256_loadu_ps(x), vmin1 = _mm256_loadu_ps(x + 8);
    __m256 vmax0 = vmin0, vmax1 = vmin1;
    for (i = 16; i + 16 <= k; i += 16) {
      const __m256 vx0 = _mm256_loadu_ps(x + i);
      const __m256 vx1 = _mm256_loadu_ps(x + i + 8);
      vmin0 = _mm256_min_ps(vmin0, vx0);
      vmin1 = _mm256_min_ps(vmin1, vx1);
      vmax0 = _mm256_max_ps(vmax0, vx0);
      vmax1 = _mm256_max_ps(vmax1, vx1);
    }
    vmin0 = _mm256_min_ps(vmin0, vmin1);
    vmax0 = _mm256_max_ps(vmax0, vmax1);
    __m128 vmin = _mm_min_ps(_mm256_castps256_ps128(vmin0), _mm256_extractf128_ps(vmin0, 1));
    __m128 vmax = _mm_max_ps(_mm256_castps256_ps128(vmax0), _mm256_extractf128_ps(vmax0, 1));
    vmin = _mm_min_ps(vmin, _mm_movehl_ps(vmin, vmin));
    vmax = _mm_max_ps(vmax, _mm_movehl_ps(vmax, vmax));
    vmin = _mm_min_ss(vmin, _mm_shuffle_ps(vmin, vmin, 1));
    vmax = _mm_max_ss(vmax, _mm_shuffle_ps(vmax, vmax, 1));
    mn = _mm_cvtss_f32(vmin);
    mx = _mm_cvtss_f32(vmax);
  }
  for (; i < k; i++) {
    mn = x[i] < mn ? x[i] : mn;
    mx = x[i] > mx ? x[i] : mx;
  }
  *lo = mn;
  *hi = mx;
}

/* 32 values to int32 lanes in order 0-7, 8-15, 16-23, 24-31 after the packs' lane
 * interleave is undone by the final permute. */
#define QUANTIZE_32(OP, vfactor)                                                   \
  const __m256 vq0 = OP(_mm256_loadu_ps(row + i), vfactor);                        \
  const __m256 vq1 = OP(_mm256_loadu_ps(row + i + 8), vfactor);                    \
  const __m256 vq2 = OP(_mm256_loadu_ps(row + i + 16), vfactor);                   \
  const __m256 vq3 = OP(_mm256_loadu_ps(row + i + 24), vfactor);                   \
  const __m256i vi0 = _mm256_add_epi32(                                            \
      _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(vq0, vlower), vupper)), vzp); \
  const __m256i vi1 = _mm256_add_epi32(                                            \
      _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(vq1, vlower), vupper)), vzp); \
  const __m256i vi2 = _mm256_add_epi32(                                            \
      _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(vq2, vlower), vupper)), vzp); \
  const __m256i vi3 = _mm256_add_epi32(                                            \
      _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(vq3, vlower), vupper)), vzp); \
  const __m256i vw01 = _mm256_packs_epi32(vi0, vi1);                               \
  const __m256i vw23 = _mm256_packs_epi32(vi2, vi3);

#if GEMMI8_KERNELS_qu8
void gemmi8_qu8_quantize_rows__avx2(size_t rows, size_t k, const float* x, size_t x_stride, void* y,
                                    size_t y_stride, float* scale, int32_t* zero_point)
{
  const __m256i vperm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (size_t r = 0; r < rows; r++) {
    const float* row = (const float*) ((const uint8_t*) x + r * x_stride);
    uint8_t* out = (uint8_t*) y + r * y_stride;
    float lo, hi;
    minmax_avx2(k, row, &lo, &hi);
    const struct gemmi8_qrow_params p = gemmi8_qrow_params_u8(lo, hi);
    const __m256 vscale = _mm256_set1_ps(p.scale);
    const __m256 vlower = _mm256_set1_ps(p.lower);
    const __m256 vupper = _mm256_set1_ps(p.upper);
    const __m256i vzp = _mm256_set1_epi32(p.zp);
    size_t i = 0;
    for (; i + 32 <= k; i += 32) {
      QUANTIZE_32(_mm256_div_ps, vscale)
      const __m256i vb = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(vw01, vw23), vperm);
      _mm256_storeu_si256((__m256i*) (out + i), vb);
    }
    for (; i < k; i++) out[i] = (uint8_t) gemmi8_qrow_u8(row[i], &p);
    scale[r] = p.scale;
    zero_point[r] = p.zp;
  }
}
#endif

#if GEMMI8_KERNELS_qs8
void gemmi8_qs8_quantize_rows__avx2(size_t rows, size_t k, const float* x, size_t x_stride, void* y,
                                    size_t y_stride, float* scale, int32_t* zero_point)
{
  const __m256i vperm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (size_t r = 0; r < rows; r++) {
    const float* row = (const float*) ((const uint8_t*) x + r * x_stride);
    int8_t* out = (int8_t*) y + r * y_stride;
    float lo, hi;
    minmax_avx2(k, row, &lo, &hi);
    const struct gemmi8_qrow_params p = gemmi8_qrow_params_s8(lo, hi);
    const __m256 vinv = _mm256_set1_ps(p.inv);
    const __m256 vlower = _mm256_set1_ps(p.lower);
    const __m256 vupper = _mm256_set1_ps(p.upper);
    const __m256i vzp = _mm256_set1_epi32(p.zp);
    size_t i = 0;
    for (; i + 32 <= k; i += 32) {
      QUANTIZE_32(_mm256_mul_ps, vinv)
      const __m256i vb = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(vw01, vw23), vperm);
      _mm256_storeu_si256((__m256i*) (out + i), vb);
    }
    for (; i < k; i++) out[i] = (int8_t) gemmi8_qrow_s8(row[i], &p);
    scale[r] = p.scale;
    zero_point[r] = p.zp;
  }
}
#endif
