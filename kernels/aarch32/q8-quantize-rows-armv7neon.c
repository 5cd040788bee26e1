/*
 * Dynamic row quantization, ARMv7 NEON (src/qrows.h). ARMv7 NEON flushes subnormal
 * floats to zero and has no division, so:
 *   - the row's range is found on integer keys of the float bits (bits ^ (sign ? 0x7fffffff
 *     : 0) orders as the floats do), exact for subnormals, 8 floats a step;
 *   - the parameters are computed in scalar (IEEE VFP) code;
 *   - u8 divides by the scale: its values are quantized by the scalar code;
 *   - s8 multiplies by inv: 16 values a step with vmul, the clamp, then rounding to
 *     nearest even by adding 1.5 * 2^23 (NEON always rounds to nearest) and taking the
 *     integer from the bits. A flushed subnormal x or product could only differ from
 *     IEEE when inv >= 2^100 (|x * inv| >= 0.5 with |x| < 2^-126); such rows take the
 *     scalar path.
 * The last k % 16 values take the scalar path of the same operations; no read or
 * write goes past k.
 */
#include <arm_neon.h>
#include <string.h>

#include "microkernel.h"
#include "qrows.h"

static inline int32x4_t float_key(float32x4_t v)
{
  const int32x4_t vbits = vreinterpretq_s32_f32(v);
  return veorq_s32(vbits, vandq_s32(vshrq_n_s32(vbits, 31), vdupq_n_s32(0x7fffffff)));
}

static inline float key_float(int32_t key)
{
  const uint32_t bits = (uint32_t) (key ^ ((key >> 31) & 0x7fffffff));
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

static void minmax_armv7neon(size_t k, const float* x, float* lo, float* hi)
{
  size_t i = 0;
  float mn = x[0], mx = x[0];
  if (k >= 8) {
    int32x4_t vmin0 = float_key(vld1q_f32(x)), vmin1 = float_key(vld1q_f32(x + 4));
    int32x4_t vmax0 = vmin0, vmax1 = vmin1;
    for (i = 8; i + 8 <= k; i += 8) {
      const int32x4_t vk0 = float_key(vld1q_f32(x + i));
      const int32x4_t vk1 = float_key(vld1q_f32(x + i + 4));
      vmin0 = vminq_s32(vmin0, vk0);
      vmin1 = vminq_s32(vmin1, vk1);
      vmax0 = vmaxq_s32(vmax0, vk0);
      vmax1 = vmaxq_s32(vmax1, vk1);
    }
    vmin0 = vminq_s32(vmin0, vmin1);
    vmax0 = vmaxq_s32(vmax0, vmax1);
    int32x2_t vmin = vpmin_s32(vget_low_s32(vmin0), vget_high_s32(vmin0));
    int32x2_t vmax = vpmax_s32(vget_low_s32(vmax0), vget_high_s32(vmax0));
    vmin = vpmin_s32(vmin, vmin);
    vmax = vpmax_s32(vmax, vmax);
    mn = key_float(vget_lane_s32(vmin, 0));
    mx = key_float(vget_lane_s32(vmax, 0));
  }
  for (; i < k; i++) {
    mn = x[i] < mn ? x[i] : mn;
    mx = x[i] > mx ? x[i] : mx;
  }
  *lo = mn;
  *hi = mx;
}

#if GEMMI8_KERNELS_qu8
void gemmi8_qu8_quantize_rows__armv7neon(size_t rows, size_t k, const float* x, size_t x_stride,
                                         void* y, size_t y_stride, float* scale,
                                         int32_t* zero_point)
{
  for (size_t r = 0; r < rows; r++) {
    const float* row = (const float*) ((const uint8_t*) x + r * x_stride);
    uint8_t* out = (uint8_t*) y + r * y_stride;
    float lo, hi;
    minmax_armv7neon(k, row, &lo, &hi);
    const struct gemmi8_qrow_params p = gemmi8_qrow_params_u8(lo, hi);
    for (size_t i = 0; i < k; i++) out[i] = (uint8_t) gemmi8_qrow_u8(row[i], &p);
    scale[r] = p.scale;
    zero_point[r] = p.zp;
  }
}
#endif

#if GEMMI8_KERNELS_qs8
void gemmi8_qs8_quantize_rows__armv7neon(size_t rows, size_t k, const float* x, size_t x_stride,
                                         void* y, size_t y_stride, float* scale,
                                         int32_t* zero_point)
{
  const float32x4_t vmagic = vdupq_n_f32(12582912.0f);
  for (size_t r = 0; r < rows; r++) {
    const float* row = (const float*) ((const uint8_t*) x + r * x_stride);
    int8_t* out = (int8_t*) y + r * y_stride;
    float lo, hi;
    minmax_armv7neon(k, row, &lo, &hi);
    const struct gemmi8_qrow_params p = gemmi8_qrow_params_s8(lo, hi);
    const float32x4_t vinv = vdupq_n_f32(p.inv);
    const float32x4_t vlower = vdupq_n_f32(p.lower);
    const float32x4_t vupper = vdupq_n_f32(p.upper);
    /* the bits of 1.5 * 2^23 + n are 0x4B400000 + n: subtract those less zp */
    const int32x4_t vbias = vdupq_n_s32(INT32_C(0x4B400000) - p.zp);
    size_t i = 0;
    if (p.inv < 0x1p100f) {
      for (; i + 16 <= k; i += 16) {
        int16x4_t vh[4];
        for (int j = 0; j < 4; j++) {
          float32x4_t vq = vmulq_f32(vld1q_f32(row + i + 4 * j), vinv);
          vq = vminq_f32(vmaxq_f32(vq, vlower), vupper);
          const int32x4_t vi = vsubq_s32(vreinterpretq_s32_f32(vaddq_f32(vq, vmagic)), vbias);
          vh[j] = vqmovn_s32(vi);
        }
        const int8x8_t vb0 = vqmovn_s16(vcombine_s16(vh[0], vh[1]));
        const int8x8_t vb1 = vqmovn_s16(vcombine_s16(vh[2], vh[3]));
        vst1q_s8(out + i, vcombine_s8(vb0, vb1));
      }
    }
    for (; i < k; i++) out[i] = (int8_t) gemmi8_qrow_s8(row[i], &p);
    scale[r] = p.scale;
    zero_point[r] = p.zp;
  }
}
#endif
