/*
 * qd8 rows x 4-bit weights, float output, ARMv8.2 dot product (SDOT): tiles of 1, 2 and
 * 4 rows by 16 columns (src/microkernel.h, struct gemmi8_q4params, says what they
 * compute).
 *
 * A group of 8 depths is 64 bytes for the 16 columns, four q registers of 4 columns x
 * 4 depths: and by 0x0f takes the low nibbles (depths 0..3 of each column's lane),
 * ushr 4 the high ones (depths 4..7), both 0..15 and so valid signed bytes. The row's 8
 * bytes are one d register: sdot by its element 0 (bytes 0..3) with the low nibbles and
 * by its element 1 (bytes 4..7) with the high ones. The rows are read in place, the
 * last 1..7 bytes of a chunk copied (no read past k). After a chunk and after the last
 * one, the float stage of q4-epilogue-neon.h (shared with the -neon kernel): the cross
 * terms, the scales, the clamp, the stores (no read or write past nr).
 * Registers (4 rows): vacc 16, nibbles 2, rows 4, the mask; the float sums of the
 * per-chunk scales (or the int32 sums of every chunk) live in L1.
 */
#include <arm_neon.h>
#include <string.h>

#include "mca.h"
#include "microkernel.h"
#include "q4-epilogue-neon.h"

#define NR Q4_NR

/* bench/mca.sh's region of each tile: one group of 8 depths */
#define Q4_MCA_BEGIN(MR)                                                                   \
  if (MR == 1) GEMMI8_MCA_BEGIN("gemmi8_qd8_q4gemm_ukernel_1x16__neondot:MACS=128");       \
  else if (MR == 2) GEMMI8_MCA_BEGIN("gemmi8_qd8_q4gemm_ukernel_2x16__neondot:MACS=256");  \
  else GEMMI8_MCA_BEGIN("gemmi8_qd8_q4gemm_ukernel_4x16__neondot:MACS=512")

static inline __attribute__((always_inline)) void q4gemm(
    const size_t MR, size_t mr, size_t nr, size_t k, const int8_t* a, size_t a_stride,
    const void* w, float* c, size_t c_stride, const struct gemmi8_q4params* p)
{
  const int8_t* ap[4];
  const int32_t* rp[4];
  q4_rows(MR, mr, a, a_stride, p, ap, rp);
  const uint8x16_t vnib = vdupq_n_u8(0x0F);
  /* the float sums (per_chunk) or the int32 sums of every chunk */
  float fsum[4][NR];
  int32_t isum[4][NR];
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
    int32x4_t vacc[4][4];
    #pragma GCC unroll 4
    for (size_t i = 0; i < MR; i++) {
      #pragma GCC unroll 4
      for (size_t j = 0; j < 4; j++) vacc[i][j] = vdupq_n_s32(0);
    }
    const int8_t* a0 = ap[0] + k0;
    const int8_t* a1 = ap[1] + k0;
    const int8_t* a2 = ap[2] + k0;
    const int8_t* a3 = ap[3] + k0;
    size_t d = 0;
    if (len >= 8) {
      /* (a do-while: one loop exit, where the llvm-mca region ends) */
      do {
        Q4_MCA_BEGIN(MR);
        int8x8_t va[4];
        va[0] = vld1_s8(a0 + d);
        if (MR > 1) va[1] = vld1_s8(a1 + d);
        if (MR > 2) va[2] = vld1_s8(a2 + d), va[3] = vld1_s8(a3 + d);
        #pragma GCC unroll 4
        for (size_t j = 0; j < 4; j++) {
          const uint8x16_t v = vld1q_u8(q + 16 * j);
          const int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(v, vnib));
          const int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
          #pragma GCC unroll 4
          for (size_t i = 0; i < MR; i++) {
            vacc[i][j] = vdotq_lane_s32(vacc[i][j], lo, va[i], 0);
            vacc[i][j] = vdotq_lane_s32(vacc[i][j], hi, va[i], 1);
          }
        }
        q += 64;
        d += 8;
      } while (d + 8 <= len);
      GEMMI8_MCA_END();
    }
    if (d < len) {
      /* the last 1..7 depths: only they are read from the rows */
      const size_t rest = len - d;
      #pragma GCC unroll 4
      for (size_t i = 0; i < MR; i++) {
        const int8x8_t va = vcreate_s8(tail_bytes(ap[i] + k0 + d, rest));
        #pragma GCC unroll 4
        for (size_t j = 0; j < 4; j++) {
          const uint8x16_t v = vld1q_u8(q + 16 * j);
          const int8x16_t lo = vreinterpretq_s8_u8(vandq_u8(v, vnib));
          const int8x16_t hi = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
          vacc[i][j] = vdotq_lane_s32(vacc[i][j], lo, va, 0);
          vacc[i][j] = vdotq_lane_s32(vacc[i][j], hi, va, 1);
        }
      }
      q += 64;
    }
    #pragma GCC unroll 4
    for (size_t j = 0; j < 4; j++) {
      const float32x4_t vs = vld1q_f32(scales + 4 * j);
      #pragma GCC unroll 4
      for (size_t i = 0; i < MR; i++) {
        q4_chunk4(vacc[i][j], pairs + 4 * j, rp[i][ci], vs, per_chunk, fsum[i] + 4 * j,
                  isum[i] + 4 * j);
      }
    }
    wp = q;
  }
  q4_epilogue(MR, mr, nr, fsum, isum, scales, per_chunk, c, c_stride, p);
}

#define Q4GEMM_KERNEL(MR)                                                                    \
  void gemmi8_qd8_q4gemm_ukernel_##MR##x16__neondot(                                         \
      size_t mr, size_t nr, size_t k, const int8_t* a, size_t a_stride, const void* w,       \
      float* c, size_t c_stride, const struct gemmi8_q4params* p)                            \
  {                                                                                          \
    q4gemm(MR, mr, nr, k, a, a_stride, w, c, c_stride, p);                                   \
  }
Q4GEMM_KERNEL(1)
Q4GEMM_KERNEL(2)
/* (the i8mm set takes the 1- and 2-row tiles from here, its own 4 rows) */
#if GEMMI8_SET_neondot
Q4GEMM_KERNEL(4)
#endif
