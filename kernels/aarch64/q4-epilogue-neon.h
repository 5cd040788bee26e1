/*
 * The float stage shared by the AArch64 qd8 x 4-bit kernels (qd8-q4gemm-16-neon.c and
 * qd8-q4gemm-16-neondot.c), after each computes a chunk's int32 block sums its own way.
 * Baseline ARMv8 NEON only, so that both files can include it under their own flags.
 *
 * Per chunk, for 4 columns of one row (q4_chunk4): t = block sums + the two cross
 * terms, S * -zp + a_zp * -W (cross4: smull / smull2 of the column's (-zp, -sum of
 * q - zp) and the row's (sum, zero point) int16 pairs, then addp); per_chunk adds
 * (float) t * chunk scale to the float sums, otherwise t to the int32 sums.
 * After the last chunk, per row (q4_epilogue): f = float sums (+0.0f plus the int32
 * sums times the last chunk's scales when not per_chunk, as the generic kernel's),
 * then f * row scale + column bias with scvtf, fmul, fadd (no fmla), clamped by
 * fcmgt / bsl (v = out_min > v ? out_min : v, then v = out_max < v ? out_max : v:
 * fmax / fmin would return a NaN bound and order -0 below +0). The last nr % 4 columns
 * are stored 2 and 1 lanes, the bias copied in: no read or write past nr.
 */
#ifndef GEMMI8_AARCH64_Q4_EPILOGUE_NEON_H
#define GEMMI8_AARCH64_Q4_EPILOGUE_NEON_H

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "microkernel.h"

/* columns of a tile */
#define Q4_NR 16

/* The column pairs times the row's pair, summed per column: S * -zp + a_zp * -W. */
static inline int32x4_t cross4(const int32_t* pairs, int32_t row_pair)
{
  const int16x8_t vp = vreinterpretq_s16_s32(vld1q_s32(pairs));
  const int16x8_t vr = vreinterpretq_s16_s32(vdupq_n_s32(row_pair));
  return vpaddq_s32(vmull_s16(vget_low_s16(vp), vget_low_s16(vr)), vmull_high_s16(vp, vr));
}

/* The tile's rows and their row pairs, MR of them (a constant of the caller): rows past
 * mr alias row mr - 1. */
static inline __attribute__((always_inline)) void q4_rows(const size_t MR, size_t mr,
                                                          const int8_t* a, size_t a_stride,
                                                          const struct gemmi8_q4params* p,
                                                          const int8_t** ap, const int32_t** rp)
{
  #pragma GCC unroll 8
  for (size_t i = 0; i < MR; i++) {
    const size_t r = i < mr ? i : mr - 1;
    ap[i] = a + r * a_stride;
    rp[i] = p->row_pairs + r * p->pairs_stride;
  }
}

/* The last 1..7 bytes of a row's chunk, zero-extended: no read past k. */
static inline uint64_t tail_bytes(const int8_t* p, size_t n)
{
  uint64_t v = 0;
  for (size_t x = 0; x < n; x++) v |= (uint64_t) (uint8_t) p[x] << (8 * x);
  return v;
}

/* n (0..4) floats, zeros after them: no read past n. */
static inline float32x4_t load4(const float* x, size_t n)
{
  if (n >= 4) return vld1q_f32(x);
  float32x4_t v = vdupq_n_f32(0.0f);
  if (n > 0) v = vld1q_lane_f32(x, v, 0);
  if (n > 1) v = vld1q_lane_f32(x + 1, v, 1);
  if (n > 2) v = vld1q_lane_f32(x + 2, v, 2);
  return v;
}

static inline float32x4_t clamp4(float32x4_t v, float32x4_t vmin, float32x4_t vmax)
{
  v = vbslq_f32(vcgtq_f32(vmin, v), vmin, v);
  return vbslq_f32(vcltq_f32(vmax, v), vmax, v);
}

/* The end of a chunk for 4 columns of one row: vsum, their block sums; pairs, the
 * columns' cross-term pairs; vs, their chunk scales; fsum / isum, the row's sums at
 * those columns. */
static inline __attribute__((always_inline)) void q4_chunk4(
    int32x4_t vsum, const int32_t* pairs, int32_t row_pair, float32x4_t vs, int per_chunk,
    float* fsum, int32_t* isum)
{
  const int32x4_t vt = vaddq_s32(vsum, cross4(pairs, row_pair));
  if (per_chunk) {
    const float32x4_t vp = vmulq_f32(vcvtq_f32_s32(vt), vs);
    vst1q_f32(fsum, vaddq_f32(vld1q_f32(fsum), vp));
  } else {
    vst1q_s32(isum, vaddq_s32(vld1q_s32(isum), vt));
  }
}

/* The output of rows 0 .. min(MR, mr) - 1 (MR a constant of the caller) from their
 * sums fsum[i] / isum[i]; scales, the last chunk's column scales. */
static inline __attribute__((always_inline)) void q4_epilogue(
    const size_t MR, size_t mr, size_t nr, float (*fsum)[Q4_NR], int32_t (*isum)[Q4_NR],
    const float* scales, int per_chunk, float* c, size_t c_stride,
    const struct gemmi8_q4params* p)
{
  float32x4_t vbias[4];
  #pragma GCC unroll 4
  for (size_t j = 0; j < 4; j++) vbias[j] = load4(p->col_bias + 4 * j, nr > 4 * j ? nr - 4 * j : 0);
  const float32x4_t vmin = vdupq_n_f32(p->out_min), vmax = vdupq_n_f32(p->out_max);
  #pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    if (i >= mr) break;
    const float32x4_t vrs = vdupq_n_f32(p->row_scale[i]);
    float32x4_t vout[4];
    #pragma GCC unroll 4
    for (size_t j = 0; j < 4; j++) {
      float32x4_t f = vld1q_f32(fsum[i] + 4 * j);
      if (!per_chunk) {
        /* +0.0f plus the product, as the generic kernel's */
        const float32x4_t vp = vmulq_f32(vcvtq_f32_s32(vld1q_s32(isum[i] + 4 * j)),
                                         vld1q_f32(scales + 4 * j));
        f = vaddq_f32(f, vp);
      }
      f = vaddq_f32(vmulq_f32(f, vrs), vbias[j]);
      vout[j] = clamp4(f, vmin, vmax);
    }
    float* cr = (float*) ((uint8_t*) c + i * c_stride);
    if (nr == Q4_NR) {
      #pragma GCC unroll 4
      for (size_t j = 0; j < 4; j++) vst1q_f32(cr + 4 * j, vout[j]);
    } else {
      size_t j = 0;
      for (; j + 4 <= nr; j += 4) vst1q_f32(cr + j, vout[j / 4]);
      float32x4_t v = vout[j / 4];
      if (nr & 2) {
        vst1_f32(cr + j, vget_low_f32(v));
        v = vextq_f32(v, v, 2);
        j += 2;
      }
      if (nr & 1) vst1q_lane_f32(cr + j, v, 0);
    }
  }
}

#endif
