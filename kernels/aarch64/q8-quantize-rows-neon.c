/*
 * Dynamic row quantization, AArch64 Advanced SIMD (src/qrows.h): fmin / fmax over 8
 * floats a step for the row's range, the parameters in scalar code, then 16 values a
 * step: fdiv (u8) or fmul (s8), fmaxnm with the lower bound (a NaN takes it, as the
 * scalar clamp), fminnm, fcvtns (nearest even), + zero point, saturating narrows to
 * bytes. The last k % 16 values take the scalar path of the same operations; no read
 * or write goes past k.
 */
#include <arm_neon.h>

#include "microkernel.h"
#include "qrows.h"

static void minmax_neon(size_t k, const float* x, float* lo, float* hi)
{
  size_t i = 0;
  float mn = x[0], mx = x[0];
  if (k >= 8) {
    float32x4_t vmin0 = vld1q_f32(x), vmin1 = vld1q_f32(x + 4);
    float32x4_t vmax0 = vmin0, vmax1 = vmin1;
    for (i = 8; i + 8 <= k; i += 8) {
      const float32x4_t vx0 = vld1q_f32(x + i);
      const float32x4_t vx1 = vld1q_f32(x + i + 4);
      vmin0 = vminq_f32(vmin0, vx0);
      vmin1 = vminq_f32(vmin1, vx1);
      vmax0 = vmaxq_f32(vmax0, vx0);
      vmax1 = vmaxq_f32(vmax1, vx1);
    }
    mn = vminvq_f32(vminq_f32(vmin0, vmin1));
    mx = vmaxvq_f32(vmaxq_f32(vmax0, vmax1));
  }
  for (; i < k; i++) {
    mn = x[i] < mn ? x[i] : mn;
    mx = x[i] > mx ? x[i] : mx;
  }
  *lo = mn;
  *hi = mx;
}

/* Four int32 vectors of 16 values: q clamped, rounded, + zero point. */
#define QUANTIZE_16(OP, vfactor)                                                          \
  int32x4_t vi[4];                                                                        \
  for (int j = 0; j < 4; j++) {                                                           \
    const float32x4_t vq = OP(vld1q_f32(row + i + 4 * j), vfactor);                       \
    vi[j] = vaddq_s32(vcvtnq_s32_f32(vminnmq_f32(vmaxnmq_f32(vq, vlower), vupper)), vzp); \
  }                                                                                       \
  const int16x8_t vw01 = vcombine_s16(vqmovn_s32(vi[0]), vqmovn_s32(vi[1]));              \
  const int16x8_t vw23 = vcombine_s16(vqmovn_s32(vi[2]), vqmovn_s32(vi[3]));

#if GEMMI8_KERNELS_qu8
void gemmi8_qu8_quantize_rows__neon(size_t rows, size_t k, const float* x, size_t x_stride, void* y,
                                    size_t y_stride, float* scale, int32_t* zero_point)
{
  for (size_t r = 0; r < rows; r++) {
    const float* row = (const float*) ((const uint8_t*) x + r * x_stride);
    uint8_t* out = (uint8_t*) y + r * y_stride;
    float lo, hi;
    minmax_neon(k, row, &lo, &hi);
    const struct gemmi8_qrow_params p = gemmi8_qrow_params_u8(lo, hi);
    const float32x4_t vscale = vdupq_n_f32(p.scale);
    const float32x4_t vlower = vdupq_n_f32(p.lower);
    const float32x4_t vupper = vdupq_n_f32(p.upper);
    const int32x4_t vzp = vdupq_n_s32(p.zp);
    size_t i = 0;
    for (; i + 16 <= k; i += 16) {
      QUANTIZE_16(vdivq_f32, vscale)
      vst1q_u8(out + i, vcombine_u8(vqmovun_s16(vw01), vqmovun_s16(vw23)));
    }
    for (; i < k; i++) out[i] = (uint8_t) gemmi8_qrow_u8(row[i], &p);
    scale[r] = p.scale;
    zero_point[r] = p.zp;
  }
}
#endif

#if GEMMI8_KERNELS_qs8
void gemmi8_qs8_quantize_rows__neon(size_t rows, size_t k, const float* x, size_t x_stride, void* y,
                                    size_t y_stride, float* scale, int32_t* zero_point)
{
  for (size_t r = 0; r < rows; r++) {
    const float* row = (const float*) ((const uint8_t*) x + r * x_stride);
    int8_t* out = (int8_t*) y + r * y_stride;
    float lo, hi;
    minmax_neon(k, row, &lo, &hi);
    const struct gemmi8_qrow_params p = gemmi8_qrow_params_s8(lo, hi);
    const float32x4_t vinv = vdupq_n_f32(p.inv);
    const float32x4_t vlower = vdupq_n_f32(p.lower);
    const float32x4_t vupper = vdupq_n_f32(p.upper);
    const int32x4_t vzp = vdupq_n_s32(p.zp);
    size_t i = 0;
    for (; i + 16 <= k; i += 16) {
      QUANTIZE_16(vmulq_f32, vinv)
      vst1q_s8(out + i, vcombine_s8(vqmovn_s16(vw01), vqmovn_s16(vw23)));
    }
    for (; i < k; i++) out[i] = (int8_t) gemmi8_qrow_s8(row[i], &p);
    scale[r] = p.scale;
    zero_point[r] = p.zp;
  }
}
#endif
