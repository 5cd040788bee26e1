/* The float output of rows quantized at run time (gemmi8_output_f32) for a tile of
 * int32 accumulators that a kernel of the set stored (acc_stride elements between
 * rows), AArch64 Advanced SIMD, 4 columns a step: mls for the zero-point term (modulo
 * 2^32), scvtf, fmul by the row scale, fmul by the column scale, fadd the bias (three
 * roundings, no fmla: the vector unit rounds, flushes and propagates NaNs by FPCR as
 * the scalar one does), then the clamp by fcmgt / bsl, not fmax / fmin (which return
 * a NaN bound and order -0 below +0): v = out_min > v ? out_min : v, then
 * v = out_max < v ? out_max : v, a NaN v kept. The last nr % 4 columns are copied in
 * and stored 2 and 1 lanes: no read or write past nr. */
#include <arm_neon.h>
#include <string.h>

#include "microkernel.h"

static inline float32x4_t output4(int32x4_t vacc, int32x4_t vsum, float32x4_t vscale,
                                  float32x4_t vbias, int32_t zero_point, float row_scale,
                                  float32x4_t vmin, float32x4_t vmax)
{
  const int32x4_t vt = vmlsq_s32(vacc, vdupq_n_s32(zero_point), vsum);
  float32x4_t v = vmulq_f32(vcvtq_f32_s32(vt), vdupq_n_f32(row_scale));
  v = vmulq_f32(v, vscale);
  v = vaddq_f32(v, vbias);
  v = vbslq_f32(vcgtq_f32(vmin, v), vmin, v);
  return vbslq_f32(vcltq_f32(vmax, v), vmax, v);
}

void gemmi8_q8_store_f32__neon(size_t mr, size_t nr, const int32_t* acc, size_t acc_stride, void* c,
                               size_t c_stride, const struct gemmi8_qparams* p)
{
  const float32x4_t vmin = vdupq_n_f32(p->out_min), vmax = vdupq_n_f32(p->out_max);
  size_t j = 0;
  for (; j + 4 <= nr; j += 4) {
    const int32x4_t vsum = vld1q_s32(p->col_sum + j);
    const float32x4_t vscale = vld1q_f32(p->scale + j);
    const float32x4_t vbias = vld1q_f32(p->col_bias + j);
    for (size_t i = 0; i < mr; i++) {
      const int32x4_t vacc = vld1q_s32(acc + i * acc_stride + j);
      const float32x4_t v = output4(vacc, vsum, vscale, vbias, p->row_zero_point[i],
                                    p->row_scale[i], vmin, vmax);
      vst1q_f32((float*) ((uint8_t*) c + i * c_stride) + j, v);
    }
  }
  if (j < nr) {
    const size_t n = nr - j;
    int32_t sum[4] = {0, 0, 0, 0}, a[4] = {0, 0, 0, 0};
    float scale[4] = {0, 0, 0, 0}, bias[4] = {0, 0, 0, 0};
    memcpy(sum, p->col_sum + j, n * sizeof(int32_t));
    memcpy(scale, p->scale + j, n * sizeof(float));
    memcpy(bias, p->col_bias + j, n * sizeof(float));
    const int32x4_t vsum = vld1q_s32(sum);
    const float32x4_t vscale = vld1q_f32(scale), vbias = vld1q_f32(bias);
    for (size_t i = 0; i < mr; i++) {
      memcpy(a, acc + i * acc_stride + j, n * sizeof(int32_t));
      const float32x4_t v = output4(vld1q_s32(a), vsum, vscale, vbias, p->row_zero_point[i],
                                    p->row_scale[i], vmin, vmax);
      float* ci = (float*) ((uint8_t*) c + i * c_stride) + j;
      float32x2_t vlo = vget_low_f32(v);
      if (n & 2) {
        vst1_f32(ci, vlo);
        ci += 2;
        vlo = vget_high_f32(v);
      }
      if (n & 1) vst1_lane_f32(ci, vlo, 0);
    }
  }
}
