/*
 * qd8 rows x 4-bit weights, float output, ARMv7 NEON: a tile of 1 row by 16 columns
 * (src/microkernel.h, struct gemmi8_q4params, says what it computes).
 *
 * A group of 8 depths is 64 bytes for the 16 columns, four q registers of 4 columns x
 * 4 depths: vand by 0x0f takes the low nibbles (depths 0..3), vshr.u8 4 the high ones
 * (depths 4..7), both 0..15 as signed bytes. The row's bytes 0..3 and 4..7, each
 * repeated twice in a d register, multiply them: vmull.s8 of the low nibbles, vmlal.s8
 * of the high ones, int16 lanes of two products (|2 * 15 * 128| < 2^15), vpadal.s16
 * adds each pair of lanes into int32: per 2 columns one register, [c0 d0+d1+d4+d5,
 * c0 d2+d3+d6+d7, c1 ..., c1 ...], vpadd of its halves after the chunk. The row is read
 * in place, the last 1..7 bytes of a chunk copied (no read past k). Then vmull.s16 of
 * the column's (-zp, -sum of q - zp) and the row's (sum, zero point) int16 pairs and a
 * vpadd take the two cross terms off.
 * The float steps are scalar VFP code, in the contract's order: ARMv7 NEON arithmetic
 * flushes subnormal inputs and results to zero, VFP follows the FPSCR (IEEE by default
 * on Linux), as the generic kernel does. The integer part is where the time goes.
 * Registers: vacc 8 q, nibbles 2, the row's d pair, products 2, the mask.
 */
#include <arm_neon.h>
#include <string.h>

#include "mca.h"
#include "microkernel.h"

#define NR 16

/* The last 1..7 bytes of a row's chunk, zero-extended: no read past k. */
static inline uint64_t tail_bytes(const int8_t* p, size_t n)
{
  uint64_t v = 0;
  for (size_t x = 0; x < n; x++) v |= (uint64_t) (uint8_t) p[x] << (8 * x);
  return v;
}

static inline int8x8_t dup4(const int8_t* p)
{
  uint32_t v;
  memcpy(&v, p, 4);
  return vreinterpret_s8_u32(vdup_n_u32(v));
}

/* The column pairs times the row's pair, summed per column: S * -zp + a_zp * -W. */
static inline int32x4_t cross4(const int32_t* pairs, int32_t row_pair)
{
  const int16x8_t vp = vreinterpretq_s16_s32(vld1q_s32(pairs));
  const int16x4_t vr = vreinterpret_s16_s32(vdup_n_s32(row_pair));
  const int32x4_t lo = vmull_s16(vget_low_s16(vp), vr);
  const int32x4_t hi = vmull_s16(vget_high_s16(vp), vr);
  return vcombine_s32(vpadd_s32(vget_low_s32(lo), vget_high_s32(lo)),
                      vpadd_s32(vget_low_s32(hi), vget_high_s32(hi)));
}

/* 2 columns of a pair accumulator: [c0, c1] */
static inline int32x2_t fold2(int32x4_t v) { return vpadd_s32(vget_low_s32(v), vget_high_s32(v)); }

void gemmi8_qd8_q4gemm_ukernel_1x16__armv7neon(size_t mr, size_t nr, size_t k, const int8_t* a,
                                               size_t a_stride, const void* w, float* c,
                                               size_t c_stride, const struct gemmi8_q4params* p)
{
  (void) mr, (void) a_stride, (void) c_stride;
  const uint8x16_t vnib = vdupq_n_u8(0x0F);
  float fsum[NR] __attribute__((aligned(16)));
  int32_t isum[NR] __attribute__((aligned(16)));
  int32_t t[NR] __attribute__((aligned(16)));
  #pragma GCC unroll 4
  for (size_t j = 0; j < NR; j += 4) {
    vst1q_f32(fsum + j, vdupq_n_f32(0.0f));
    vst1q_s32(isum + j, vdupq_n_s32(0));
  }
  const uint8_t* wp = w;
  const float* scales = NULL;
  const size_t chunk = p->chunk;
  const int per_chunk = p->per_chunk;
  size_t ci = 0;
  for (size_t k0 = 0; k0 < k; k0 += chunk, ci++) {
    const size_t len = k - k0 < chunk ? k - k0 : chunk;
    const int32_t* pairs = (const int32_t*) wp;
    scales = (const float*) (wp + 4 * NR);
    const uint8_t* q = wp + 8 * NR;
    /* vacc[2 j + h]: columns 4 j + 2 h, 4 j + 2 h + 1 */
    int32x4_t vacc[8];
    #pragma GCC unroll 8
    for (size_t j = 0; j < 8; j++) vacc[j] = vdupq_n_s32(0);
    const int8_t* a0 = a + k0;
    size_t d = 0;
    for (; d < len; d += 8) {
      GEMMI8_MCA_BEGIN("gemmi8_qd8_q4gemm_ukernel_1x16__armv7neon:MACS=128");
      /* bytes 0..3 twice (low half), 4..7 twice (high half): one q register */
      int8x16_t vab;
      if (len - d >= 8) {
        vab = vcombine_s8(dup4(a0 + d), dup4(a0 + d + 4));
      } else {
        /* the last 1..7 depths: only they are read from the row */
        const uint64_t bytes = tail_bytes(a0 + d, len - d);
        vab = vreinterpretq_s8_u32(vcombine_u32(vdup_n_u32((uint32_t) bytes),
                                                vdup_n_u32((uint32_t) (bytes >> 32))));
      }
      const int8x8_t va = vget_low_s8(vab), vb = vget_high_s8(vab);
      #pragma GCC unroll 4
      for (size_t j = 0; j < 4; j++) {
        const uint8x16_t v = vld1q_u8(q + 16 * j);
        const int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(v, vnib));
        const int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
        int16x8_t p0 = vmull_s8(vget_low_s8(lo), va);
        int16x8_t p1 = vmull_s8(vget_high_s8(lo), va);
        p0 = vmlal_s8(p0, vget_low_s8(hi), vb);
        p1 = vmlal_s8(p1, vget_high_s8(hi), vb);
        vacc[2 * j] = vpadalq_s16(vacc[2 * j], p0);
        vacc[2 * j + 1] = vpadalq_s16(vacc[2 * j + 1], p1);
      }
      q += 64;
    }
    GEMMI8_MCA_END();
    const int32_t row_pair = p->row_pairs[ci];
    #pragma GCC unroll 4
    for (size_t j = 0; j < 4; j++) {
      const int32x4_t vsum = vcombine_s32(fold2(vacc[2 * j]), fold2(vacc[2 * j + 1]));
      const int32x4_t vt = vaddq_s32(vsum, cross4(pairs + 4 * j, row_pair));
      if (per_chunk) {
        vst1q_s32(t + 4 * j, vt);
      } else {
        vst1q_s32(isum + 4 * j, vaddq_s32(vld1q_s32(isum + 4 * j), vt));
      }
    }
    if (per_chunk) {
      /* scalar VFP: f = f + (float) t * scale */
      for (size_t j = 0; j < NR; j++) {
        const float product = (float) t[j] * scales[j];
        fsum[j] = fsum[j] + product;
      }
    }
    wp = q;
  }
  const float row_scale = p->row_scale[0], out_min = p->out_min, out_max = p->out_max;
  for (size_t j = 0; j < nr; j++) {
    float v = fsum[j];
    if (!per_chunk) {
      const float product = (float) isum[j] * scales[j];
      v = v + product;
    }
    v = v * row_scale;
    v = v + p->col_bias[j];
    v = out_min > v ? out_min : v;
    v = out_max < v ? out_max : v;
    c[j] = v;
  }
}
