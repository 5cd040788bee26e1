/* The float output of rows quantized at run time (gemmi8_output_f32) for a tile of
 * int32 accumulators that a kernel of the set stored (acc_stride elements between
 * rows), 8 columns a step: vpmulld / vpsubd for the zero-point term (modulo 2^32),
 * vcvtdq2ps, vmulps by the row scale, vmulps by the column scale, vaddps the bias
 * (three roundings, no FMA), vmaxps with the lower bound first then vminps with the
 * upper bound first (x86 returns the second operand on a NaN or equal operands: the
 * scalar `out_min > v ? out_min : v`). The last nr % 8 columns go through masked
 * loads and stores (vpmaskmovd / vmaskmovps): no read or write past nr. */
#include <immintrin.h>

#include "microkernel.h"

static inline __m256 output8(__m256i vacc, __m256i vsum, __m256 vscale, __m256 vbias,
                             int32_t zero_point, float row_scale, __m256 vmin, __m256 vmax)
{
  const __m256i vt = _mm256_sub_epi32(vacc, _mm256_mullo_epi32(_mm256_set1_epi32(zero_point), vsum));
  __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(vt), _mm256_set1_ps(row_scale));
  v = _mm256_mul_ps(v, vscale);
  v = _mm256_add_ps(v, vbias);
  v = _mm256_max_ps(vmin, v);
  return _mm256_min_ps(vmax, v);
}

void gemmi8_q8_store_f32__avx2(size_t mr, size_t nr, const int32_t* acc, size_t acc_stride, void* c,
                               size_t c_stride, const struct gemmi8_qparams* p)
{
  const __m256 vmin = _mm256_set1_ps(p->out_min), vmax = _mm256_set1_ps(p->out_max);
  size_t j = 0;
  for (; j + 8 <= nr; j += 8) {
    const __m256i vsum = _mm256_loadu_si256((const __m256i*) (p->col_sum + j));
    const __m256 vscale = _mm256_loadu_ps(p->scale + j);
    const __m256 vbias = _mm256_loadu_ps(p->col_bias + j);
    for (size_t i = 0; i < mr; i++) {
      const __m256i vacc = _mm256_loadu_si256((const __m256i*) (acc + i * acc_stride + j));
      const __m256 v = output8(vacc, vsum, vscale, vbias, p->row_zero_point[i], p->row_scale[i],
                               vmin, vmax);
      _mm256_storeu_ps((float*) ((uint8_t*) c + i * c_stride) + j, v);
    }
  }
  if (j < nr) {
    const __m256i vmask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t) (nr - j)),
                                             _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256i vsum = _mm256_maskload_epi32((const int*) (p->col_sum + j), vmask);
    const __m256 vscale = _mm256_maskload_ps(p->scale + j, vmask);
    const __m256 vbias = _mm256_maskload_ps(p->col_bias + j, vmask);
    for (size_t i = 0; i < mr; i++) {
      const __m256i vacc = _mm256_maskload_epi32((const int*) (acc + i * acc_stride + j), vmask);
      const __m256 v = output8(vacc, vsum, vscale, vbias, p->row_zero_point[i], p->row_scale[i],
                               vmin, vmax);
      _mm256_maskstore_ps((float*) ((uint8_t*) c + i * c_stride) + j, vmask, v);
    }
  }
}
