/* The float output of rows quantized at run time (gemmi8_output_f32) for a tile of
 * int32 accumulators that a kernel of the set stored (acc_stride elements between
 * rows), ARMv7 NEON, 4 columns a step: vmls for the zero-point term (modulo 2^32),
 * vcvt, vmul by the row scale, vmul by the column scale, vadd the bias (three
 * roundings, no vmla), the clamp by vcgt / vbsl: v = out_min > v ? out_min : v, then
 * v = out_max < v ? out_max : v, a NaN v kept.
 *
 * ARMv7 NEON flushes subnormal inputs and results to zero and returns the default NaN
 * for any NaN, where the scalar (VFP) reference does neither. Elsewhere it is IEEE
 * (round to nearest, the same default NaN for an invalid operation), so a lane can
 * differ only if an input is subnormal or NaN or a result is flushed, and a flushed
 * result is a zero. Such lanes are recomputed by the scalar code: a row scale that is
 * subnormal or NaN (its whole row), a column scale or bias that is (its column), and
 * any lane where the second product or the sum is +-0 (a true zero takes the scalar
 * path too). The first product needs no test: it is an integer times a normal row
 * scale, so it is zero or at least FLT_MIN in magnitude. A subnormal bound needs
 * nothing either: against a v that is not zero, comparing with it or with its flushed
 * zero gives the same answer, and vbsl keeps its bits. The last nr % 4 columns are
 * copied in and stored by the scalar loop of those lanes: no read or write past nr. */
#include <arm_neon.h>
#include <string.h>

#include "microkernel.h"
#include "requant.h"

/* All ones in the lanes of x that are subnormal or NaN. */
static inline uint32x4_t odd_input(float32x4_t x)
{
  const uint32x4_t vabs = vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x7fffffff));
  const uint32x4_t vsub = vcltq_u32(vsubq_u32(vabs, vdupq_n_u32(1)), vdupq_n_u32(0x007fffff));
  return vorrq_u32(vsub, vcgtq_u32(vabs, vdupq_n_u32(0x7f800000)));
}

static inline int odd_scalar(float x)
{
  uint32_t bits;
  memcpy(&bits, &x, sizeof(bits));
  bits &= 0x7fffffff;
  return bits - 1 < 0x007fffff || bits > 0x7f800000;
}

/* Up to 4 elements into a vector, the lanes past n zero. */
static inline int32x4_t load_s32(const int32_t* x, size_t n)
{
  if (n == 4) return vld1q_s32(x);
  int32_t t[4] = {0, 0, 0, 0};
  memcpy(t, x, n * sizeof(int32_t));
  return vld1q_s32(t);
}

static inline float32x4_t load_f32(const float* x, size_t n)
{
  if (n == 4) return vld1q_f32(x);
  float t[4] = {0, 0, 0, 0};
  memcpy(t, x, n * sizeof(float));
  return vld1q_f32(t);
}

void gemmi8_q8_store_f32__armv7neon(size_t mr, size_t nr, const int32_t* acc, size_t acc_stride,
                                    void* c, size_t c_stride, const struct gemmi8_qparams* p)
{
  const float32x4_t vmin = vdupq_n_f32(p->out_min), vmax = vdupq_n_f32(p->out_max);
  const float32x4_t vzero = vdupq_n_f32(0.0f);
  for (size_t j = 0; j < nr; j += 4) {
    const size_t n = nr - j < 4 ? nr - j : 4;
    const int32x4_t vsum = load_s32(p->col_sum + j, n);
    const float32x4_t vscale = load_f32(p->scale + j, n), vbias = load_f32(p->col_bias + j, n);
    const uint32x4_t vodd = vorrq_u32(odd_input(vscale), odd_input(vbias));
    for (size_t i = 0; i < mr; i++) {
      const int32_t* acc_row = acc + i * acc_stride + j;
      const int32x4_t vt =
          vmlsq_s32(load_s32(acc_row, n), vdupq_n_s32(p->row_zero_point[i]), vsum);
      const float32x4_t v1 = vmulq_f32(vcvtq_f32_s32(vt), vdupq_n_f32(p->row_scale[i]));
      const float32x4_t v2 = vmulq_f32(v1, vscale);
      float32x4_t v = vaddq_f32(v2, vbias);
      const uint32x4_t vfix =
          vorrq_u32(vodd, vorrq_u32(vceqq_f32(v2, vzero), vceqq_f32(v, vzero)));
      v = vbslq_f32(vcgtq_f32(vmin, v), vmin, v);
      v = vbslq_f32(vcltq_f32(vmax, v), vmax, v);
      float* ci = (float*) ((uint8_t*) c + i * c_stride) + j;
      const uint32x2_t vfix2 = vorr_u32(vget_low_u32(vfix), vget_high_u32(vfix));
      const int whole = odd_scalar(p->row_scale[i]);
      if (n == 4 && !whole && vget_lane_u32(vpmax_u32(vfix2, vfix2), 0) == 0) {
        vst1q_f32(ci, v);
        continue;
      }
      float out[4];
      uint32_t fix[4];
      vst1q_f32(out, v);
      vst1q_u32(fix, vfix);
      for (size_t k = 0; k < n; k++) {
        ci[k] = whole || fix[k] != 0 ? gemmi8_output_f32(acc_row[k], p, i, j + k) : out[k];
      }
    }
  }
}
