/* The float output of rows quantized at run time (gemmi8_output_f32) for a tile of
 * int32 accumulators that a kernel of the set stored (acc_stride elements between
 * rows): zero-point term in int32, three float roundings, the clamp. */
#include <immintrin.h>

#include "microkernel.h"

void gemmi8_q8_store_f32__avx512vnni(size_t mr, size_t nr, const int32_t* acc, size_t acc_stride,
                                     void* c, size_t c_stride, const struct gemmi8_qparams* p)
{
  const __m512 vmin = _mm512_set1_ps(p->out_min), vmax = _mm512_set1_ps(p->out_max);
  for (size_t j = 0; j < nr; j += 16) {
    const __mmask16 mask = nr - j >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (nr - j)) - 1);
    const __m512i vsum = _mm512_maskz_loadu_epi32(mask, p->col_sum + j);
    const __m512 vscale = _mm512_maskz_loadu_ps(mask, p->scale + j);
    const __m512 vbias = _mm512_maskz_loadu_ps(mask, p->col_bias + j);
    for (size_t i = 0; i < mr; i++) {
      const __m512i va = _mm512_maskz_loadu_epi32(mask, acc + i * acc_stride + j);
      const __m512i t =
          _mm512_sub_epi32(va, _mm512_mullo_epi32(_mm512_set1_epi32(p->row_zero_point[i]), vsum));
      __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(t), _mm512_set1_ps(p->row_scale[i]));
      v = _mm512_add_ps(_mm512_mul_ps(v, vscale), vbias);
      v = _mm512_min_ps(vmax, _mm512_max_ps(vmin, v));
      _mm512_mask_storeu_ps((float*) ((uint8_t*) c + i * c_stride) + j, mask, v);
    }
  }
}
