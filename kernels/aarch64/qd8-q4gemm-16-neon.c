/*
 * qd8 rows x 4-bit weights, float output, AArch64 Advanced SIMD without the dot product:
 * tiles of 1 and 2 rows by 16 columns (src/microkernel.h, struct gemmi8_q4params, says
 * what they compute).
 *
 * A group of 8 depths is 64 bytes for the 16 columns, four q registers of 4 columns x
 * 4 depths: and by 0x0f takes the low nibbles (depths 0..3), ushr 4 the high ones
 * (depths 4..7), both 0..15 as signed bytes. The row's bytes 0..3 and 4..7, each
 * repeated four times (ld1r of a word), multiply them: smull / smull2 of the low
 * nibbles, smlal / smlal2 of the high ones, int16 lanes of two products (|2 * 15 * 128|
 * < 2^15), then sadalp adds each pair of lanes into int32: per 2 columns one register,
 * [c0 d0+d1+d4+d5, c0 d2+d3+d6+d7, c1 ..., c1 ...], addp of two of them after the chunk
 * gives 4 columns. The rows are read in place, the last 1..7 bytes of a chunk copied
 * (no read past k). After a chunk and after the last one, the float stage of
 * q4-epilogue-neon.h (shared with the -neondot kernel): the cross terms, the scales,
 * the clamp, the stores (no read or write past nr).
 * Registers (2 rows): vacc 16, nibbles 2, rows 4, products 2, the mask; the float sums
 * of the per-chunk scales (or the int32 sums of every chunk) live in L1.
 */
#include <arm_neon.h>
#include <string.h>

#include "mca.h"
#include "microkernel.h"
#include "q4-epilogue-neon.h"

#define NR Q4_NR

#define Q4_MCA_BEGIN(MR)                                                                 \
  if (MR == 1) GEMMI8_MCA_BEGIN("gemmi8_qd8_q4gemm_ukernel_1x16__neon:MACS=128");        \
  else GEMMI8_MCA_BEGIN("gemmi8_qd8_q4gemm_ukernel_2x16__neon:MACS=256")

static inline int8x16_t dup4(const int8_t* p)
{
  uint32_t v;
  memcpy(&v, p, 4);
  return vreinterpretq_s8_u32(vdupq_n_u32(v));
}

/* One row's products with the nibbles of 4 columns: into vacc[0] (columns 0, 1) and
 * vacc[1] (columns 2, 3). */
static inline void dot4(int32x4_t* vacc, int8x16_t lo, int8x16_t hi, int8x16_t va, int8x16_t vb)
{
  int16x8_t p0 = vmull_s8(vget_low_s8(lo), vget_low_s8(va));
  int16x8_t p1 = vmull_high_s8(lo, va);
  p0 = vmlal_s8(p0, vget_low_s8(hi), vget_low_s8(vb));
  p1 = vmlal_high_s8(p1, hi, vb);
  vacc[0] = vpadalq_s16(vacc[0], p0);
  vacc[1] = vpadalq_s16(vacc[1], p1);
}

static inline __attribute__((always_inline)) void q4gemm(
    const size_t MR, size_t mr, size_t nr, size_t k, const int8_t* a, size_t a_stride,
    const void* w, float* c, size_t c_stride, const struct gemmi8_q4params* p)
{
  const int8_t* ap[2];
  const int32_t* rp[2];
  q4_rows(MR, mr, a, a_stride, p, ap, rp);
  const uint8x16_t vnib = vdupq_n_u8(0x0F);
  float fsum[2][NR];
  int32_t isum[2][NR];
  memset(fsum, 0, sizeof(fsum));
  memset(isum, 0, sizeof(isum));
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
    /* vacc[i][2 j + h]: row i, columns 4 j + 2 h, 4 j + 2 h + 1 */
    int32x4_t vacc[2][8];
    #pragma GCC unroll 2
    for (size_t i = 0; i < MR; i++) {
      #pragma GCC unroll 8
      for (size_t j = 0; j < 8; j++) vacc[i][j] = vdupq_n_s32(0);
    }
    const int8_t* a0 = ap[0] + k0;
    const int8_t* a1 = ap[MR - 1] + k0;
    size_t d = 0;
    if (len >= 8) {
      /* (a do-while: one loop exit, where the llvm-mca region ends) */
      do {
        Q4_MCA_BEGIN(MR);
        const int8x16_t va0 = dup4(a0 + d), vb0 = dup4(a0 + d + 4);
        const int8x16_t va1 = dup4(a1 + d), vb1 = dup4(a1 + d + 4);
        #pragma GCC unroll 4
        for (size_t j = 0; j < 4; j++) {
          const uint8x16_t v = vld1q_u8(q + 16 * j);
          const int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(v, vnib));
          const int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
          dot4(&vacc[0][2 * j], lo, hi, va0, vb0);
          if (MR > 1) dot4(&vacc[1][2 * j], lo, hi, va1, vb1);
        }
        q += 64;
        d += 8;
      } while (d + 8 <= len);
      GEMMI8_MCA_END();
    }
    if (d < len) {
      /* the last 1..7 depths: only they are read from the rows */
      const size_t rest = len - d;
      #pragma GCC unroll 2
      for (size_t i = 0; i < MR; i++) {
        const uint64_t bytes = tail_bytes(ap[i] + k0 + d, rest);
        const int8x16_t va = vreinterpretq_s8_u32(vdupq_n_u32((uint32_t) bytes));
        const int8x16_t vb = vreinterpretq_s8_u32(vdupq_n_u32((uint32_t) (bytes >> 32)));
        #pragma GCC unroll 4
        for (size_t j = 0; j < 4; j++) {
          const uint8x16_t v = vld1q_u8(q + 16 * j);
          const int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(v, vnib));
          const int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
          dot4(&vacc[i][2 * j], lo, hi, va, vb);
        }
      }
      q += 64;
    }
    #pragma GCC unroll 4
    for (size_t j = 0; j < 4; j++) {
      const float32x4_t vs = vld1q_f32(scales + 4 * j);
      #pragma GCC unroll 2
      for (size_t i = 0; i < MR; i++) {
        const int32x4_t vsum = vpaddq_s32(vacc[i][2 * j], vacc[i][2 * j + 1]);
        q4_chunk4(vsum, pairs + 4 * j, rp[i][ci], vs, per_chunk, fsum[i] + 4 * j,
                  isum[i] + 4 * j);
      }
    }
    wp = q;
  }
  q4_epilogue(MR, mr, nr, fsum, isum, scales, per_chunk, c, c_stride, p);
}

#define Q4GEMM_KERNEL(MR)                                                                    \
  void gemmi8_qd8_q4gemm_ukernel_##MR##x16__neon(                                            \
      size_t mr, size_t nr, size_t k, const int8_t* a, size_t a_stride, const void* w,       \
      float* c, size_t c_stride, const struct gemmi8_q4params* p)                            \
  {                                                                                          \
    q4gemm(MR, mr, nr, k, a, a_stride, w, c, c_stride, p);                                   \
  }
Q4GEMM_KERNEL(1)
Q4GEMM_KERNEL(2)
