/*
 * qd8 rows x 4-bit weights, float output, ARMv8.6 int8 matrix multiply (SMMLA): tiles of
 * 4 and 8 rows by 16 columns (src/microkernel.h, struct gemmi8_q4params, says what they
 * compute), on the layout the -neondot kernels read. (A 6-row tile, 23.1 cycles a group
 * of its 6 rows on the Neoverse N2 model where the 8-row tile takes 28.1 for 5 or 6,
 * was left out: 4.4 KB for M = 5 and 6 alone.)
 *
 * SMMLA: vacc (2 x 2 int32) += va (2 rows x 8 depths) . vb (2 columns x 8 depths)^T.
 * A group of 8 depths is 64 bytes for the 16 columns, four q registers of 4 columns x
 * 4 depths: and by 0x0f takes the low nibbles (each column's depths 0..3 in one 32-bit
 * lane), ushr 4 the high ones (depths 4..7), both 0..15 and so valid signed bytes;
 * zip1 / zip2 of their 32-bit lanes give [c0 d0..3, c0 d4..7, c1 d0..3, c1 d4..7] and
 * the same for c2, c3: two columns' 8 depths, as SMMLA takes them. A row pair is one q
 * register, [row 2r depths 0..7, row 2r + 1 depths 0..7] (ldr d, ldr d, ins), so a
 * weight operand is unpacked once for all the row pairs of the tile: per group 16
 * unpacking instructions, then 8 SMMLA and one ins per row pair; 34 vector
 * instructions for 4 rows where the neondot tile takes 8 + 32 SDOT. One row pair
 * gains nothing (25 against 8 + 16): the 1- and 2-row tiles of the set are the
 * neondot ones (kernels/q4.inc).
 * 4 rows keep 16 accumulators. 8 rows would need 32, which with the row pairs, the
 * mask and the weights exceed the 32 registers (one pass of 6 rows spilled 5
 * accumulators: 24.05 cycles a group on the Neoverse N2 model, two passes 23.1): they
 * go by two passes over the chunk, columns 0..7 then 8..15, 16 accumulators each, the
 * rows read again in the second pass (one more ins per row pair and group).
 * The rows are read in place, the last 1..7 bytes of a chunk copied (no read past k);
 * rows past mr alias row mr - 1 (an odd mr computes its last row twice).
 * After a pass over a chunk, each row pair's accumulators of columns 4j..4j+3, [r c0,
 * r c1, r' c0, r' c1] and [r c2, r c3, r' c2, r' c3], give row r's 4 columns by uzp1 of
 * 64-bit lanes and row r' 's by uzp2; then, and after the last chunk, the float stage
 * of q4-epilogue-neon.h (shared with the -neon and -neondot kernels): the cross terms,
 * the scales, the clamp, the stores (no read or write past nr).
 * Registers (8 rows, one pass): vacc 16, row pairs 4, the mask, the weights on their
 * way; the float sums of the per-chunk scales (or the int32 sums of every chunk) live
 * in L1.
 */
#include <arm_neon.h>
#include <string.h>

#include "mca.h"
#include "microkernel.h"
#include "q4-epilogue-neon.h"

#define NR Q4_NR
/* rows of the tallest tile */
#define MAX_MR 8

/* bench/mca.sh's region of each tile: one group of 8 depths (of the 8 columns of one
 * pass, for the tiles that go by halves) */
#define Q4_MCA_BEGIN(MR)                                                                 \
  if (MR == 4) GEMMI8_MCA_BEGIN("gemmi8_qd8_q4gemm_ukernel_4x16__i8mm:MACS=512");        \
  else GEMMI8_MCA_BEGIN("gemmi8_qd8_q4gemm_ukernel_8x16__i8mm:MACS=512")

/* One group of 8 depths of NQ / 2 column quads, MR / 2 row pairs va, the nibbles at q:
 * vacc[r][2j] (columns 4j, 4j + 1 of the pass) and vacc[r][2j + 1] (4j + 2, 4j + 3). */
static inline __attribute__((always_inline)) void group(
    const size_t MR, const size_t NQ, int32x4_t (*vacc)[8], const int8x16_t* va,
    const uint8_t* q, uint8x16_t vnib)
{
  #pragma GCC unroll 4
  for (size_t j = 0; j < NQ / 2; j++) {
    const uint8x16_t v = vld1q_u8(q + 16 * j);
    const uint32x4_t lo = vreinterpretq_u32_u8(vandq_u8(v, vnib));
    const uint32x4_t hi = vreinterpretq_u32_u8(vshrq_n_u8(v, 4));
    const int8x16_t vb01 = vreinterpretq_s8_u32(vzip1q_u32(lo, hi));
    const int8x16_t vb23 = vreinterpretq_s8_u32(vzip2q_u32(lo, hi));
    #pragma GCC unroll 4
    for (size_t r = 0; r < MR / 2; r++) {
      vacc[r][2 * j] = vmmlaq_s32(vacc[r][2 * j], va[r], vb01);
      vacc[r][2 * j + 1] = vmmlaq_s32(vacc[r][2 * j + 1], va[r], vb23);
    }
  }
}

/* NQ: the column pairs of a pass, 8 (16 columns, one pass) or 4 (two passes of 8
 * columns, each over the whole chunk: half the accumulators, the rows read twice). */
static inline __attribute__((always_inline)) void q4gemm(
    const size_t MR, const size_t NQ, size_t mr, size_t nr, size_t k, const int8_t* a,
    size_t a_stride, const void* w, float* c, size_t c_stride, const struct gemmi8_q4params* p)
{
  const int8_t* ap[MAX_MR];
  const int32_t* rp[MAX_MR];
  q4_rows(MR, mr, a, a_stride, p, ap, rp);
  const uint8x16_t vnib = vdupq_n_u8(0x0F);
  /* the float sums (per_chunk) or the int32 sums of every chunk */
  float fsum[MAX_MR][NR];
  int32_t isum[MAX_MR][NR];
  memset(fsum, 0, MR * sizeof(fsum[0]));
  memset(isum, 0, MR * sizeof(isum[0]));
  const uint8_t* wp = w;
  const float* scales = NULL;
  const size_t chunk = p->chunk;
  const int per_chunk = p->per_chunk;
  size_t ci = 0;
  for (size_t k0 = 0; k0 < k; k0 += chunk, ci++) {
    const size_t len = k - k0 < chunk ? k - k0 : chunk;
    const size_t full = len & ~(size_t) 7;
    const int32_t* pairs = (const int32_t*) wp;
    scales = (const float*) (wp + 4 * NR);
    const uint8_t* q = wp + 8 * NR;
    /* the last 1..7 depths: only they are read from the rows */
    int8x16_t vtail[MAX_MR / 2];
    if (full < len) {
      #pragma GCC unroll 4
      for (size_t r = 0; r < MR / 2; r++) {
        vtail[r] = vcombine_s8(vcreate_s8(tail_bytes(ap[2 * r] + k0 + full, len - full)),
                               vcreate_s8(tail_bytes(ap[2 * r + 1] + k0 + full, len - full)));
      }
    }
    #pragma GCC unroll 2
    for (size_t h = 0; h < 8 / NQ; h++) {
      const uint8_t* qh = q + 8 * NQ * h;
      int32x4_t vacc[MAX_MR / 2][8];
      #pragma GCC unroll 4
      for (size_t r = 0; r < MR / 2; r++) {
        #pragma GCC unroll 8
        for (size_t j = 0; j < NQ; j++) vacc[r][j] = vdupq_n_s32(0);
      }
      if (full != 0) {
        size_t d = 0;
        /* (a do-while: one loop exit, where the llvm-mca region ends) */
        do {
          Q4_MCA_BEGIN(MR);
          int8x16_t va[MAX_MR / 2];
          #pragma GCC unroll 4
          for (size_t r = 0; r < MR / 2; r++) {
            va[r] = vcombine_s8(vld1_s8(ap[2 * r] + k0 + d), vld1_s8(ap[2 * r + 1] + k0 + d));
          }
          group(MR, NQ, vacc, va, qh, vnib);
          qh += 64;
          d += 8;
        } while (d != full);
        GEMMI8_MCA_END();
      }
      if (full < len) group(MR, NQ, vacc, vtail, qh, vnib);
      #pragma GCC unroll 4
      for (size_t j = 0; j < NQ / 2; j++) {
        const size_t col = 4 * (NQ / 2 * h + j);
        const float32x4_t vs = vld1q_f32(scales + col);
        #pragma GCC unroll 4
        for (size_t r = 0; r < MR / 2; r++) {
          const int64x2_t v01 = vreinterpretq_s64_s32(vacc[r][2 * j]);
          const int64x2_t v23 = vreinterpretq_s64_s32(vacc[r][2 * j + 1]);
          const int32x4_t vrow0 = vreinterpretq_s32_s64(vuzp1q_s64(v01, v23));
          const int32x4_t vrow1 = vreinterpretq_s32_s64(vuzp2q_s64(v01, v23));
          q4_chunk4(vrow0, pairs + col, rp[2 * r][ci], vs, per_chunk, fsum[2 * r] + col,
                    isum[2 * r] + col);
          q4_chunk4(vrow1, pairs + col, rp[2 * r + 1][ci], vs, per_chunk,
                    fsum[2 * r + 1] + col, isum[2 * r + 1] + col);
        }
      }
    }
    wp = q + (len + 7) / 8 * (4 * NR);
  }
  q4_epilogue(MR, mr, nr, fsum, isum, scales, per_chunk, c, c_stride, p);
}

#define Q4GEMM_KERNEL(MR, NQ)                                                                \
  void gemmi8_qd8_q4gemm_ukernel_##MR##x16__i8mm(                                            \
      size_t mr, size_t nr, size_t k, const int8_t* a, size_t a_stride, const void* w,       \
      float* c, size_t c_stride, const struct gemmi8_q4params* p)                            \
  {                                                                                          \
    q4gemm(MR, NQ, mr, nr, k, a, a_stride, w, c, c_stride, p);                               \
  }
Q4GEMM_KERNEL(4, 8)
Q4GEMM_KERNEL(8, 4)
