/*
 * ARMv7 NEON qu8 / qs8 GEMM microkernel template: 4x8c1 (MR = 4, NR = 8, KR = 1), and
 * the 1x8c1 / 2x8c1 tiles for M = 1, 2 on the same packing (below).
 *
 * Block (generic packer, KR = 1): int32 bias'[8], for qu8 int32 coef[8] = -b_zp,
 * then k rows of 8 weight bytes, w[k][j] = B[j][k] as stored (no xor). Both operands
 * are widened to int16 and multiplied by VMLAL.S16 by scalar into int32 lanes:
 *   qu8: acc = bias' + sum_k a * (w - b_zp)   a in 0..255, w - b_zp in -255..255
 *   qs8: acc = bias' + sum_k a * w            a, w in -128..127
 * Every product fits int16 x int16 -> int32 exactly and the sums wrap modulo 2^32,
 * which is the definition (bias' = bias - a_zp * colsum + k * a_zp * b_zp, so
 * bias' + sum a * (w - b_zp) = bias + sum (a - a_zp) * (w - b_zp)). The zero point of
 * B is subtracted while widening (VSUBL.U8 instead of VMOVL.U8: no extra work), so no
 * row sums are needed.
 *
 * Registers (16 q): q0-q3 = rows 0-3 of a, 8 depths each as int16 (VMLAL by scalar
 * takes its 16-bit scalar from d0-d7); q4 / q5 = the 8 widened weights of one depth,
 * double-buffered; vacc<i>l / vacc<i>h (columns 0-3 / 4-7 of row i) = 8 q chosen by
 * the compiler. One loop iteration (inline assembly): 8 depths, 5 + 8 loads, 12
 * widenings, 64 VMLAL = 256 MACs.
 *
 * Rows past mr alias row mr - 1 (loads stay in bounds; their identical results go to
 * the same place). The depth tail (k % 8) loads the last 8 bytes of the row and
 * shifts (k >= 8), or assembles the bytes one by one (k < 8): no read past a row of
 * a. Requantization parameters are read for nr channels only.
 */
#ifndef GEMMI8_QGEMM_NEON_H
#define GEMMI8_QGEMM_NEON_H

#include <arm_neon.h>

#include "requant.h"
#include "mca.h"


/* a as int16: qu8 zero-extends, qs8 sign-extends. */
static GEMMI8_ALWAYS_INLINE int16x8_t gemmi8_qneon_widen_a(const int is_signed, uint8x8_t v)
{
  return is_signed ? vmovl_s8(vreinterpret_s8_u8(v)) : vreinterpretq_s16_u16(vmovl_u8(v));
}

/* qu8: w - b_zp as int16 (wraps in 16 bits to the exact -255..255); qs8: w. */
static GEMMI8_ALWAYS_INLINE int16x8_t gemmi8_qneon_widen_w(const int is_signed, uint8x8_t v,
                                                           uint8x8_t vzp)
{
  return is_signed ? vmovl_s8(vreinterpret_s8_u8(v))
                   : vreinterpretq_s16_u16(vsubl_u8(v, vzp));
}

/* The t (1..7) bytes at p in lanes 0..t-1, zeros above. long_row: p - (8 - t) is still
 * in the row (k >= 8), so the row's last 8 bytes are loaded and shifted down; else
 * the bytes are read one by one. Never reads past p[t - 1]. */
static GEMMI8_ALWAYS_INLINE uint8x8_t gemmi8_qneon_load_tail(const uint8_t* p, size_t t,
                                                             int long_row)
{
  if (long_row) {
    const uint64x1_t v = vreinterpret_u64_u8(vld1_u8(p + t - 8));
    return vreinterpret_u8_u64(vshl_u64(v, vdup_n_s64(-(int64_t) (8 * (8 - t)))));
  }
  uint64_t v = 0;
  for (size_t j = 0; j < t; j++) v |= (uint64_t) p[j] << (8 * j);
  return vcreate_u8(v);
}

#define GEMMI8_QNEON_STEP(HALF, LANE)                                                      \
  do {                                                                                     \
    const int16x8_t vw = gemmi8_qneon_widen_w(is_signed, vld1_u8(wk), vzp);               \
    wk += 8;                                                                               \
    vacc[0][0] = vmlal_lane_s16(vacc[0][0], vget_low_s16(vw), vget_##HALF##_s16(va0), LANE); \
    vacc[0][1] = vmlal_lane_s16(vacc[0][1], vget_high_s16(vw), vget_##HALF##_s16(va0), LANE); \
    vacc[1][0] = vmlal_lane_s16(vacc[1][0], vget_low_s16(vw), vget_##HALF##_s16(va1), LANE); \
    vacc[1][1] = vmlal_lane_s16(vacc[1][1], vget_high_s16(vw), vget_##HALF##_s16(va1), LANE); \
    vacc[2][0] = vmlal_lane_s16(vacc[2][0], vget_low_s16(vw), vget_##HALF##_s16(va2), LANE); \
    vacc[2][1] = vmlal_lane_s16(vacc[2][1], vget_high_s16(vw), vget_##HALF##_s16(va2), LANE); \
    vacc[3][0] = vmlal_lane_s16(vacc[3][0], vget_low_s16(vw), vget_##HALF##_s16(va3), LANE); \
    vacc[3][1] = vmlal_lane_s16(vacc[3][1], vget_high_s16(vw), vget_##HALF##_s16(va3), LANE); \
  } while (0)

/* The main loop in inline assembly, so that the four rows of a stay in q0-q3 (VMLAL
 * by scalar reads its 16-bit scalar from d0-d7; GCC otherwise copies lanes into d0-d7
 * with extra VMOVs). Fixed registers: a rows q0-q3, weights q4 / q5 (the next depth's
 * are loaded and widened into the other one between the VMLALs); the accumulators
 * are operands. One iteration: 8 depths. */
#define GEMMI8_QNEON_WIDEN_U8(Q, D) "vmovl.u8 " Q ", " D "\n\t"
#define GEMMI8_QNEON_WIDEN_S8(Q, D) "vmovl.s8 " Q ", " D "\n\t"
#define GEMMI8_QNEON_SUB_ZP(Q, D) "vsubl.u8 " Q ", " D ", %P[vzp]\n\t"
/* rows R0, R1 += weights (q4 = d8:d9 or q5 = d10:d11) x a lane (d0-d7) */
#define GEMMI8_QNEON_MLAL2(WLO, WHI, SCALAR0, SCALAR1, R0, R1)                         \
  "vmlal.s16 %q[vacc" R0 "l], " WLO ", " SCALAR0 "\n\t"                                \
  "vmlal.s16 %q[vacc" R0 "h], " WHI ", " SCALAR0 "\n\t"                                \
  "vmlal.s16 %q[vacc" R1 "l], " WLO ", " SCALAR1 "\n\t"                                \
  "vmlal.s16 %q[vacc" R1 "h], " WHI ", " SCALAR1 "\n\t"
/* depth step: weights in q<CUR> (WLO:WHI), scalars d<ROW0>[LANE].. of the four rows;
 * the next step's weights go to NEXTQ / NEXTD */
#define GEMMI8_QNEON_STEP_ASM(WIDEN_W, WLO, WHI, D0, D1, D2, D3, LANE, NEXTQ, NEXTD)   \
  "vld1.8 {" NEXTD "}, [%[w]]!\n\t"                                                    \
  GEMMI8_QNEON_MLAL2(WLO, WHI, D0 "[" LANE "]", D1 "[" LANE "]", "0", "1")             \
  WIDEN_W(NEXTQ, NEXTD)                                                                 \
  GEMMI8_QNEON_MLAL2(WLO, WHI, D2 "[" LANE "]", D3 "[" LANE "]", "2", "3")
/* a rows: q0 = d0:d1 (row 0) .. q3 = d6:d7 (row 3); depths 0-3 in d0/d2/d4/d6,
 * 4-7 in d1/d3/d5/d7 */
#define GEMMI8_QNEON_LO_STEP(WIDEN_W, WLO, WHI, LANE, NEXTQ, NEXTD) \
  GEMMI8_QNEON_STEP_ASM(WIDEN_W, WLO, WHI, "d0", "d2", "d4", "d6", LANE, NEXTQ, NEXTD)
#define GEMMI8_QNEON_HI_STEP(WIDEN_W, WLO, WHI, LANE, NEXTQ, NEXTD) \
  GEMMI8_QNEON_STEP_ASM(WIDEN_W, WLO, WHI, "d1", "d3", "d5", "d7", LANE, NEXTQ, NEXTD)
#define GEMMI8_QNEON_LOOP_ASM(NAME, WIDEN_A, WIDEN_W)                                 \
  GEMMI8_NEON_LOOP_LABEL                                                                \
  GEMMI8_MCA_BEGIN_ASM(NAME ":MACS=256")                                                \
  "vld1.8 {d0}, [%[a0]]!\n\t"                                                           \
  "vld1.8 {d8}, [%[w]]!\n\t"                                                            \
  "vld1.8 {d2}, [%[a1]]!\n\t"                                                           \
  "vld1.8 {d4}, [%[a2]]!\n\t"                                                           \
  "vld1.8 {d6}, [%[a3]]!\n\t"                                                           \
  WIDEN_A("q0", "d0") WIDEN_W("q4", "d8") WIDEN_A("q1", "d2") WIDEN_A("q2", "d4")        \
  WIDEN_A("q3", "d6")                                                                   \
  GEMMI8_QNEON_LO_STEP(WIDEN_W, "d8", "d9", "0", "q5", "d10")                           \
  GEMMI8_QNEON_LO_STEP(WIDEN_W, "d10", "d11", "1", "q4", "d8")                          \
  GEMMI8_QNEON_LO_STEP(WIDEN_W, "d8", "d9", "2", "q5", "d10")                           \
  GEMMI8_QNEON_LO_STEP(WIDEN_W, "d10", "d11", "3", "q4", "d8")                          \
  GEMMI8_QNEON_HI_STEP(WIDEN_W, "d8", "d9", "0", "q5", "d10")                           \
  GEMMI8_QNEON_HI_STEP(WIDEN_W, "d10", "d11", "1", "q4", "d8")                          \
  GEMMI8_QNEON_HI_STEP(WIDEN_W, "d8", "d9", "2", "q5", "d10")                           \
  GEMMI8_QNEON_MLAL2("d10", "d11", "d1[3]", "d3[3]", "0", "1")                          \
  "subs %[n], %[n], #1\n\t"                                                             \
  GEMMI8_QNEON_MLAL2("d10", "d11", "d5[3]", "d7[3]", "2", "3")                          \
  GEMMI8_NEON_LOOP_BNE                                                                  \
  GEMMI8_MCA_END_ASM()

/* The 4 x 8 accumulators start at bias'; *vzp receives the weight zero points (qu8:
 * -coef, 0..255) or 0 (qs8). Returns the block's weights. */
static GEMMI8_ALWAYS_INLINE const uint8_t* gemmi8_qgemm_init_4x8c1__neon(const int is_signed,
                                                                        const void* w,
                                                                        int32x4_t vacc[4][2],
                                                                        uint8x8_t* vzp)
{
  const int32_t* bias = (const int32_t*) w;
  vacc[0][0] = vld1q_s32(bias);
  vacc[0][1] = vld1q_s32(bias + 4);
  vacc[1][0] = vacc[2][0] = vacc[3][0] = vacc[0][0];
  vacc[1][1] = vacc[2][1] = vacc[3][1] = vacc[0][1];
  if (is_signed) {
    *vzp = vdup_n_u8(0);
    return (const uint8_t*) (bias + 8);
  }
  /* coef = -b_zp, b_zp in 0..255 */
  const int32_t* coef = bias + 8;
  const uint16x4_t vzp0123 = vmovn_u32(vreinterpretq_u32_s32(vnegq_s32(vld1q_s32(coef))));
  const uint16x4_t vzp4567 = vmovn_u32(vreinterpretq_u32_s32(vnegq_s32(vld1q_s32(coef + 4))));
  *vzp = vmovn_u16(vcombine_u16(vzp0123, vzp4567));
  return (const uint8_t*) (coef + 8);
}

/* k depths of the four rows a0..a3 times the weights at wk (8 bytes a depth), added
 * to vacc; vzp: the weight zero points (qu8) or 0. Returns the weights past them. */
static GEMMI8_ALWAYS_INLINE const uint8_t* gemmi8_qgemm_depth_4x8c1__neon(
    const int is_signed, size_t k, const uint8_t* a0, const uint8_t* a1, const uint8_t* a2,
    const uint8_t* a3, const uint8_t* wk, uint8x8_t vzp, int32x4_t vacc[4][2])
{
  size_t kk = k;
  if (kk >= 8) {
    size_t n = kk / 8;
    kk %= 8;
#define GEMMI8_QNEON_LOOP_OPERANDS                                                       \
  : [vacc0l] "+w"(vacc[0][0]), [vacc0h] "+w"(vacc[0][1]), [vacc1l] "+w"(vacc[1][0]),      \
    [vacc1h] "+w"(vacc[1][1]), [vacc2l] "+w"(vacc[2][0]), [vacc2h] "+w"(vacc[2][1]),      \
    [vacc3l] "+w"(vacc[3][0]), [vacc3h] "+w"(vacc[3][1]), [a0] "+r"(a0), [a1] "+r"(a1),   \
    [a2] "+r"(a2), [a3] "+r"(a3), [w] "+r"(wk), [n] "+r"(n)                               \
  : [vzp] "w"(vzp)                                                                        \
  : "cc", "memory", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11"
    if (is_signed) {
      __asm__(GEMMI8_QNEON_LOOP_ASM("qs8-neon-4x8c1", GEMMI8_QNEON_WIDEN_S8, GEMMI8_QNEON_WIDEN_S8)
              GEMMI8_QNEON_LOOP_OPERANDS);
    } else {
      __asm__(GEMMI8_QNEON_LOOP_ASM("qu8-neon-4x8c1", GEMMI8_QNEON_WIDEN_U8, GEMMI8_QNEON_SUB_ZP)
              GEMMI8_QNEON_LOOP_OPERANDS);
    }
#undef GEMMI8_QNEON_LOOP_OPERANDS
  }
  if (kk != 0) {
    const int long_row = k >= 8;
    const int16x8_t va0 = gemmi8_qneon_widen_a(is_signed, gemmi8_qneon_load_tail(a0, kk, long_row));
    const int16x8_t va1 = gemmi8_qneon_widen_a(is_signed, gemmi8_qneon_load_tail(a1, kk, long_row));
    const int16x8_t va2 = gemmi8_qneon_widen_a(is_signed, gemmi8_qneon_load_tail(a2, kk, long_row));
    const int16x8_t va3 = gemmi8_qneon_widen_a(is_signed, gemmi8_qneon_load_tail(a3, kk, long_row));
    GEMMI8_QNEON_STEP(low, 0);
    if (kk > 1) GEMMI8_QNEON_STEP(low, 1);
    if (kk > 2) GEMMI8_QNEON_STEP(low, 2);
    if (kk > 3) GEMMI8_QNEON_STEP(low, 3);
    if (kk > 4) GEMMI8_QNEON_STEP(high, 0);
    if (kk > 5) GEMMI8_QNEON_STEP(high, 1);
    if (kk > 6) GEMMI8_QNEON_STEP(high, 2);
  }
  return wk;
}

/* Accumulates the 4 x 8 tile: vacc[i][0] = columns 0-3 of row i, vacc[i][1] = 4-7. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_core_4x8c1__neon(const int is_signed, size_t mr,
                                                              size_t k, const uint8_t* a,
                                                              size_t a_stride, const void* w,
                                                              int32x4_t vacc[4][2])
{
  const uint8_t* a0 = a;
  const uint8_t* a1 = mr > 1 ? a0 + a_stride : a0;
  const uint8_t* a2 = mr > 2 ? a1 + a_stride : a1;
  const uint8_t* a3 = mr > 3 ? a2 + a_stride : a2;
  uint8x8_t vzp;
  const uint8_t* wk = gemmi8_qgemm_init_4x8c1__neon(is_signed, w, vacc, &vzp);

  gemmi8_qgemm_depth_4x8c1__neon(is_signed, k, a0, a1, a2, a3, wk, vzp, vacc);
}

/* The 4 x 8 tile with A through ks taps of 4 row pointers (igemm, convolution): the
 * depth loop above once per tap (KR = 1: the taps' weights follow each other). */
static GEMMI8_ALWAYS_INLINE void gemmi8_qigemm_core_4x8c1__neon(
    const int is_signed, size_t kc, size_t ks, const void* const* a, size_t a_offset,
    const void* zero, const void* w, int32x4_t vacc[4][2])
{
  uint8x8_t vzp;
  const uint8_t* wk = gemmi8_qgemm_init_4x8c1__neon(is_signed, w, vacc, &vzp);
  for (size_t t = 0; t < ks; t++) {
    const uint8_t* ap[4];
    for (size_t i = 0; i < 4; i++) {
      const uint8_t* q = (const uint8_t*) a[t * 4 + i];
      ap[i] = q == (const uint8_t*) zero ? q : q + a_offset;
    }
    wk = gemmi8_qgemm_depth_4x8c1__neon(is_signed, kc, ap[0], ap[1], ap[2], ap[3], wk, vzp, vacc);
  }
}

/* The tiles of one and two rows (M = 1, 2). With few rows a depth step has only 2 or 4
 * VMLALs, so one accumulator pair per row would be a chain of 8 (or 4) dependent
 * VMLALs per iteration, bound by their latency: the depths go round accumulator sets
 * instead, vpart[i][s][h] (row i, set s, columns 0-3 / 4-7), summed at the end.
 *   1 row:  4 sets (depth d into set d % 4), 8 q accumulators. q0 = 8 depths of a,
 *           d2 = the next 8 (loaded one iteration ahead), d3 = b_zp (qu8), d4-d7 =
 *           4 depths of raw weights (one 32-byte load), q4-q7 = the 4 widened depths
 *           that the VMLALs read. A depth's weights are widened 4 steps before use
 *           (after the VMLALs of the depth 4 earlier), so that in-order cores never
 *           wait on a widening; one iteration: 8 depths, 3 loads, 9 widenings, 16
 *           VMLAL = 64 MACs. The loads of the next iteration (weights of its depths
 *           0-3 and its a) stay in bounds because the last iteration is peeled.
 *   2 rows: 2 sets (depth parity), 8 q accumulators. q0 / q1 = rows 0 / 1 of a, q4 /
 *           q5 the widened weights of one depth, double-buffered as in the 4-row loop,
 *           d14 = b_zp (qu8); one iteration: 8 depths, 10 loads, 10 widenings, 32
 *           VMLAL = 128 MACs.
 * Rows past mr alias row mr - 1. */
#define GEMMI8_QNEON_SUB_ZP_D3(Q, D) "vsubl.u8 " Q ", " D ", d3\n\t"
#define GEMMI8_QNEON_SUB_ZP_D14(Q, D) "vsubl.u8 " Q ", " D ", d14\n\t"
#define GEMMI8_QNEON_MLAL_PAIR(ACC, WLO, WHI, SCALAR)                                     \
  "vmlal.s16 %q[" ACC "l], " WLO ", " SCALAR "\n\t"                                      \
  "vmlal.s16 %q[" ACC "h], " WHI ", " SCALAR "\n\t"
/* 1 row: the four depths of half H (d0 or d1) of a, each into its set, widening
 * the raw weights in d4-d7 into the q4-q7 just read (WIDEN_W empty: no widening) */
#define GEMMI8_QNEON_1X8_HALF(WIDEN_W, H, X)                                              \
  GEMMI8_QNEON_MLAL_PAIR("vacc0", "d8", "d9", H "[0]") WIDEN_W("q4", "d4") X              \
  GEMMI8_QNEON_MLAL_PAIR("vacc1", "d10", "d11", H "[1]") WIDEN_W("q5", "d5")              \
  GEMMI8_QNEON_MLAL_PAIR("vacc2", "d12", "d13", H "[2]") WIDEN_W("q6", "d6")              \
  GEMMI8_QNEON_MLAL_PAIR("vacc3", "d14", "d15", H "[3]") WIDEN_W("q7", "d7")
#define GEMMI8_QNEON_NO_WIDEN(Q, D) ""
#define GEMMI8_QNEON_1X8_ASM(NAME, LOAD_ZP, WIDEN_A, WIDEN_W)                             \
  LOAD_ZP                                                                               \
  "vld1.8 {d0}, [%[a0]]!\n\t"                                                           \
  "vld1.8 {d4-d7}, [%[w]]!\n\t"                                                         \
  WIDEN_A("q0", "d0") WIDEN_W("q4", "d4") WIDEN_W("q5", "d5") WIDEN_W("q6", "d6")        \
  WIDEN_W("q7", "d7")                                                                   \
  "subs %[n], %[n], #1\n\t"                                                             \
  "beq .Lgemmi8_last%=\n\t"                                                             \
  GEMMI8_NEON_LOOP_LABEL                                                                \
  GEMMI8_MCA_BEGIN_ASM(NAME ":MACS=64")                                                 \
  "vld1.8 {d4-d7}, [%[w]]!\n\t"                                                         \
  GEMMI8_QNEON_1X8_HALF(WIDEN_W, "d0", "vld1.8 {d2}, [%[a0]]!\n\t")                     \
  "vld1.8 {d4-d7}, [%[w]]!\n\t"                                                         \
  GEMMI8_QNEON_1X8_HALF(WIDEN_W, "d1", "subs %[n], %[n], #1\n\t")                       \
  WIDEN_A("q0", "d2")                                                                   \
  GEMMI8_NEON_LOOP_BNE                                                                  \
  GEMMI8_MCA_END_ASM()                                                                  \
  ".Lgemmi8_last%=:\n\t"                                                                \
  "vld1.8 {d4-d7}, [%[w]]!\n\t"                                                         \
  GEMMI8_QNEON_1X8_HALF(WIDEN_W, "d0", "")                                              \
  GEMMI8_QNEON_1X8_HALF(GEMMI8_QNEON_NO_WIDEN, "d1", "")
/* 2 rows: one depth (weights WLO:WHI, set S, scalars SC0 / SC1), loading and widening
 * the next depth's weights into NEXTQ / NEXTD on the way */
#define GEMMI8_QNEON_2X8_STEP(WIDEN_W, WLO, WHI, S, SC0, SC1, NEXTQ, NEXTD)             \
  "vld1.8 {" NEXTD "}, [%[w]]!\n\t"                                                     \
  GEMMI8_QNEON_MLAL_PAIR("vacc0" S, WLO, WHI, SC0)                                      \
  WIDEN_W(NEXTQ, NEXTD)                                                                 \
  GEMMI8_QNEON_MLAL_PAIR("vacc1" S, WLO, WHI, SC1)
#define GEMMI8_QNEON_2X8_ASM(NAME, LOAD_ZP, WIDEN_A, WIDEN_W)                             \
  LOAD_ZP                                                                               \
  GEMMI8_NEON_LOOP_LABEL                                                                \
  GEMMI8_MCA_BEGIN_ASM(NAME ":MACS=128")                                                \
  "vld1.8 {d0}, [%[a0]]!\n\t"                                                           \
  "vld1.8 {d8}, [%[w]]!\n\t"                                                            \
  "vld1.8 {d2}, [%[a1]]!\n\t"                                                           \
  WIDEN_A("q0", "d0") WIDEN_W("q4", "d8") WIDEN_A("q1", "d2")                            \
  GEMMI8_QNEON_2X8_STEP(WIDEN_W, "d8", "d9", "0", "d0[0]", "d2[0]", "q5", "d10")         \
  GEMMI8_QNEON_2X8_STEP(WIDEN_W, "d10", "d11", "1", "d0[1]", "d2[1]", "q4", "d8")        \
  GEMMI8_QNEON_2X8_STEP(WIDEN_W, "d8", "d9", "0", "d0[2]", "d2[2]", "q5", "d10")         \
  GEMMI8_QNEON_2X8_STEP(WIDEN_W, "d10", "d11", "1", "d0[3]", "d2[3]", "q4", "d8")        \
  GEMMI8_QNEON_2X8_STEP(WIDEN_W, "d8", "d9", "0", "d1[0]", "d3[0]", "q5", "d10")         \
  GEMMI8_QNEON_2X8_STEP(WIDEN_W, "d10", "d11", "1", "d1[1]", "d3[1]", "q4", "d8")        \
  GEMMI8_QNEON_2X8_STEP(WIDEN_W, "d8", "d9", "0", "d1[2]", "d3[2]", "q5", "d10")         \
  GEMMI8_QNEON_MLAL_PAIR("vacc01", "d10", "d11", "d1[3]")                               \
  "subs %[n], %[n], #1\n\t"                                                             \
  GEMMI8_QNEON_MLAL_PAIR("vacc11", "d10", "d11", "d3[3]")                               \
  GEMMI8_NEON_LOOP_BNE                                                                  \
  GEMMI8_MCA_END_ASM()

/* tail depth step of the small tiles, in C: set PARITY of every row */
#define GEMMI8_QNEON_STEP_SMALL(PARITY, HALF, LANE)                                        \
  do {                                                                                     \
    const int16x8_t vw = gemmi8_qneon_widen_w(is_signed, vld1_u8(wk), vzp);               \
    wk += 8;                                                                               \
    _Pragma("GCC unroll 2") for (size_t i = 0; i < ROWS; i++) {                            \
      vpart[i][PARITY][0] = vmlal_lane_s16(vpart[i][PARITY][0], vget_low_s16(vw),          \
                                           vget_##HALF##_s16(va[i]), LANE);                \
      vpart[i][PARITY][1] = vmlal_lane_s16(vpart[i][PARITY][1], vget_high_s16(vw),         \
                                           vget_##HALF##_s16(va[i]), LANE);                \
    }                                                                                      \
  } while (0)

static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_core_small_8c1__neon(const size_t ROWS,
                                                                  const int is_signed,
                                                                  size_t mr, size_t k,
                                                                  const uint8_t* a,
                                                                  size_t a_stride, const void* w,
                                                                  int32x4_t vacc[4][2])
{
  const uint8_t* ap[2] = {a, ROWS > 1 && mr > 1 ? a + a_stride : a};
  const int32_t* bias = (const int32_t*) w;
  int32x4_t vpart[2][4][2];
#pragma GCC unroll 2
  for (size_t i = 0; i < ROWS; i++) {
    vpart[i][0][0] = vld1q_s32(bias);
    vpart[i][0][1] = vld1q_s32(bias + 4);
#pragma GCC unroll 4
    for (size_t s = 1; s < 4; s++) vpart[i][s][0] = vpart[i][s][1] = vdupq_n_s32(0);
  }
  uint8x8_t vzp = vdup_n_u8(0);
  const uint8_t* wk;
  if (is_signed) {
    wk = (const uint8_t*) (bias + 8);
  } else {
    /* coef = -b_zp, b_zp in 0..255 */
    const int32_t* coef = bias + 8;
    const uint16x4_t vzp0123 = vmovn_u32(vreinterpretq_u32_s32(vnegq_s32(vld1q_s32(coef))));
    const uint16x4_t vzp4567 = vmovn_u32(vreinterpretq_u32_s32(vnegq_s32(vld1q_s32(coef + 4))));
    vzp = vmovn_u16(vcombine_u16(vzp0123, vzp4567));
    wk = (const uint8_t*) (coef + 8);
  }
  size_t kk = k;
  if (kk >= 8) {
    size_t n = kk / 8;
    kk %= 8;
    uint8_t zp[8];
    vst1_u8(zp, vzp);
    if (ROWS == 1) {
#define GEMMI8_QNEON_1X8_OPERANDS                                                          \
  : [vacc0l] "+w"(vpart[0][0][0]), [vacc0h] "+w"(vpart[0][0][1]),                         \
    [vacc1l] "+w"(vpart[0][1][0]), [vacc1h] "+w"(vpart[0][1][1]),                         \
    [vacc2l] "+w"(vpart[0][2][0]), [vacc2h] "+w"(vpart[0][2][1]),                         \
    [vacc3l] "+w"(vpart[0][3][0]), [vacc3h] "+w"(vpart[0][3][1]), [a0] "+r"(ap[0]),       \
    [w] "+r"(wk), [n] "+r"(n)                                                              \
  : [zp] "r"(zp)                                                                           \
  : "cc", "memory", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10",     \
    "d11", "d12", "d13", "d14", "d15"
      if (is_signed) {
        __asm__(GEMMI8_QNEON_1X8_ASM("qs8-neon-1x8c1", "", GEMMI8_QNEON_WIDEN_S8,
                                     GEMMI8_QNEON_WIDEN_S8) GEMMI8_QNEON_1X8_OPERANDS);
      } else {
        __asm__(GEMMI8_QNEON_1X8_ASM("qu8-neon-1x8c1", "vld1.8 {d3}, [%[zp]]\n\t",
                                     GEMMI8_QNEON_WIDEN_U8, GEMMI8_QNEON_SUB_ZP_D3)
                GEMMI8_QNEON_1X8_OPERANDS);
      }
#undef GEMMI8_QNEON_1X8_OPERANDS
    } else {
#define GEMMI8_QNEON_2X8_OPERANDS                                                          \
  : [vacc00l] "+w"(vpart[0][0][0]), [vacc00h] "+w"(vpart[0][0][1]),                       \
    [vacc01l] "+w"(vpart[0][1][0]), [vacc01h] "+w"(vpart[0][1][1]),                       \
    [vacc10l] "+w"(vpart[1][0][0]), [vacc10h] "+w"(vpart[1][0][1]),                       \
    [vacc11l] "+w"(vpart[1][1][0]), [vacc11h] "+w"(vpart[1][1][1]), [a0] "+r"(ap[0]),     \
    [a1] "+r"(ap[1]), [w] "+r"(wk), [n] "+r"(n)                                            \
  : [zp] "r"(zp)                                                                           \
  : "cc", "memory", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10",     \
    "d11", "d12", "d13", "d14", "d15"
      if (is_signed) {
        __asm__(GEMMI8_QNEON_2X8_ASM("qs8-neon-2x8c1", "", GEMMI8_QNEON_WIDEN_S8,
                                     GEMMI8_QNEON_WIDEN_S8) GEMMI8_QNEON_2X8_OPERANDS);
      } else {
        __asm__(GEMMI8_QNEON_2X8_ASM("qu8-neon-2x8c1", "vld1.8 {d14}, [%[zp]]\n\t",
                                     GEMMI8_QNEON_WIDEN_U8, GEMMI8_QNEON_SUB_ZP_D14)
                GEMMI8_QNEON_2X8_OPERANDS);
      }
#undef GEMMI8_QNEON_2X8_OPERANDS
    }
  }
  if (kk != 0) {
    int16x8_t va[2];
#pragma GCC unroll 2
    for (size_t i = 0; i < ROWS; i++) {
      va[i] = gemmi8_qneon_widen_a(is_signed, gemmi8_qneon_load_tail(ap[i], kk, k >= 8));
    }
    GEMMI8_QNEON_STEP_SMALL(0, low, 0);
    if (kk > 1) GEMMI8_QNEON_STEP_SMALL(1, low, 1);
    if (kk > 2) GEMMI8_QNEON_STEP_SMALL(0, low, 2);
    if (kk > 3) GEMMI8_QNEON_STEP_SMALL(1, low, 3);
    if (kk > 4) GEMMI8_QNEON_STEP_SMALL(0, high, 0);
    if (kk > 5) GEMMI8_QNEON_STEP_SMALL(1, high, 1);
    if (kk > 6) GEMMI8_QNEON_STEP_SMALL(0, high, 2);
  }
#pragma GCC unroll 2
  for (size_t i = 0; i < ROWS; i++) {
#pragma GCC unroll 2
    for (size_t h = 0; h < 2; h++) {
      int32x4_t v = vaddq_s32(vpart[i][0][h], vpart[i][1][h]);
      if (ROWS == 1) v = vaddq_s32(v, vaddq_s32(vpart[i][2][h], vpart[i][3][h]));
      vacc[i][h] = v;
    }
  }
}

/* 8 per-channel (stride 1) or per-tensor (stride 0) int32 values, read for nr only. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qneon_load_channels(const int32_t* p, size_t stride,
                                                            size_t nr, int32x4_t v[2])
{
  if (stride == 0) {
    v[0] = v[1] = vld1q_dup_s32(p);
  } else if (nr == 8) {
    v[0] = vld1q_s32(p);
    v[1] = vld1q_s32(p + 4);
  } else {
    int32_t tmp[8] = {0};
    for (size_t j = 0; j < nr; j++) tmp[j] = p[j];
    v[0] = vld1q_s32(tmp);
    v[1] = vld1q_s32(tmp + 4);
  }
}

/* Row I of c (rows past mr alias row mr - 1). */
#define GEMMI8_QNEON_C_ROW(T, I) ((T*) ((uint8_t*) c + ((I) < mr ? (I) : mr - 1) * c_stride))

static GEMMI8_ALWAYS_INLINE void gemmi8_qneon_store_s32(int32_t* c, size_t nr, int32x4_t lo,
                                                        int32x4_t hi)
{
  if (nr == 8) {
    vst1q_s32(c, lo);
    vst1q_s32(c + 4, hi);
    return;
  }
  if (nr & 4) {
    vst1q_s32(c, lo);
    lo = hi;
    c += 4;
  }
  int32x2_t v = vget_low_s32(lo);
  if (nr & 2) {
    vst1_s32(c, v);
    v = vget_high_s32(lo);
    c += 2;
  }
  if (nr & 1) vst1_lane_s32(c, v, 0);
}

static GEMMI8_ALWAYS_INLINE void gemmi8_qneon_store_8(uint8_t* c, size_t nr, uint8x8_t v)
{
  if (nr == 8) {
    vst1_u8(c, v);
    return;
  }
  if (nr & 4) {
    vst1_lane_u32((void*) c, vreinterpret_u32_u8(v), 0);
    v = vext_u8(v, v, 4);
    c += 4;
  }
  if (nr & 2) {
    vst1_lane_u16((void*) c, vreinterpret_u16_u8(v), 0);
    v = vext_u8(v, v, 2);
    c += 2;
  }
  if (nr & 1) vst1_lane_u8(c, v, 0);
}

/* The stores write rows ROWS - 1 down to 0 (a tile's rows, ROWS = its MR). */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store_s32__neon(const size_t ROWS, size_t mr,
                                                             size_t nr, void* c,
                                                             size_t c_stride,
                                                             int32x4_t vacc[4][2])
{
#pragma GCC unroll 4
  for (size_t i = ROWS; i-- > 0;) {
    gemmi8_qneon_store_s32(GEMMI8_QNEON_C_ROW(int32_t, i), nr, vacc[i][0], vacc[i][1]);
  }
}

/* Eight int32 outputs (the zero point already added) to 8 bits: saturating
 * narrowing to 16 then 8 bits keeps the clamp exact, then the clamp. */
static GEMMI8_ALWAYS_INLINE uint8x8_t gemmi8_qneon_narrow(const int is_signed, int32x4_t lo,
                                                          int32x4_t hi, uint8x8_t vmin,
                                                          uint8x8_t vmax)
{
  const int16x8_t v16 = vcombine_s16(vqmovn_s32(lo), vqmovn_s32(hi));
  if (is_signed) {
    int8x8_t v8 = vqmovn_s16(v16);
    v8 = vmax_s8(v8, vreinterpret_s8_u8(vmin));
    v8 = vmin_s8(v8, vreinterpret_s8_u8(vmax));
    return vreinterpret_u8_s8(v8);
  }
  uint8x8_t v8 = vqmovun_s16(v16);
  v8 = vmax_u8(v8, vmin);
  return vmin_u8(v8, vmax);
}

/* TFLite fixed-point requantization:
 *   x = VQSHL(acc, max(shift, 0))            saturating left shift
 *   y = VQRDMULH(x, multiplier)               = SaturatingRoundingDoublingHighMul
 *   r = VRSHL(y - (y < 0 && right), -right)   half away from zero
 * VRSHL rounds half up; subtracting 1 from negative y first turns ties on negative
 * values downwards and changes nothing else. y > INT32_MIN (multiplier < 2^31), so
 * y - 1 does not wrap. */
static GEMMI8_ALWAYS_INLINE int32x4_t gemmi8_qneon_fixedpoint(int32x4_t acc, int32x4_t vmul,
                                                         int32x4_t vleft, int32x4_t vright,
                                                         uint32x4_t vno_right)
{
  const int32x4_t x = vqshlq_s32(acc, vleft);
  int32x4_t y = vqrdmulhq_s32(x, vmul);
  y = vsraq_n_s32(y, vbicq_s32(y, vreinterpretq_s32_u32(vno_right)), 31);
  return vrshlq_s32(y, vright);
}

static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store_fixedpoint__neon(
    const size_t ROWS, const int is_signed, size_t mr, size_t nr, void* c, size_t c_stride,
    const struct gemmi8_qparams* p, int32x4_t vacc[4][2])
{
  int32x4_t vmul[2], vshift[2];
  gemmi8_qneon_load_channels(p->multiplier, p->channel_stride, nr, vmul);
  gemmi8_qneon_load_channels(p->shift, p->channel_stride, nr, vshift);
  const int32x4_t vzero = vdupq_n_s32(0);
  const int32x4_t vleft0 = vmaxq_s32(vshift[0], vzero), vleft1 = vmaxq_s32(vshift[1], vzero);
  const int32x4_t vright0 = vminq_s32(vshift[0], vzero), vright1 = vminq_s32(vshift[1], vzero);
  const uint32x4_t vno_right0 = vceqq_s32(vright0, vzero);
  const uint32x4_t vno_right1 = vceqq_s32(vright1, vzero);
  const int32x4_t vzp = vdupq_n_s32(p->zero_point);
  const uint8x8_t vmin = vdup_n_u8((uint8_t) p->min);
  const uint8x8_t vmax = vdup_n_u8((uint8_t) p->max);
#pragma GCC unroll 4
  for (size_t i = ROWS; i-- > 0;) {
    /* the zero point wraps around int32, as gemmlowp's addition does */
    const int32x4_t vlo = vaddq_s32(
        gemmi8_qneon_fixedpoint(vacc[i][0], vmul[0], vleft0, vright0, vno_right0), vzp);
    const int32x4_t vhi = vaddq_s32(
        gemmi8_qneon_fixedpoint(vacc[i][1], vmul[1], vleft1, vright1, vno_right1), vzp);
    gemmi8_qneon_store_8(GEMMI8_QNEON_C_ROW(uint8_t, i), nr,
                         gemmi8_qneon_narrow(is_signed, vlo, vhi, vmin, vmax));
  }
}

/* fp32 requantization: (float) acc * scale (VCVT and VMUL round to nearest; NEON's
 * flush-to-zero only touches products below 2^-126, which round to 0 either way),
 * clamped in float to [min - zp, max - zp] (|x| <= 510), then rounded half to even by
 * adding 1.5 * 2^23: the sum's low mantissa bits are the integer, so subtracting the
 * magic number's bits (less the zero point) as integers gives r + zero_point. */
static GEMMI8_ALWAYS_INLINE int32x4_t gemmi8_qneon_fp32(int32x4_t acc, float32x4_t vscale,
                                                        float32x4_t vlo, float32x4_t vhi,
                                                        float32x4_t vmagic,
                                                        int32x4_t vmagic_less_zp)
{
  float32x4_t x = vmulq_f32(vcvtq_f32_s32(acc), vscale);
  x = vminq_f32(vmaxq_f32(x, vlo), vhi);
  return vsubq_s32(vreinterpretq_s32_f32(vaddq_f32(x, vmagic)), vmagic_less_zp);
}

static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store_fp32__neon(const size_t ROWS, size_t mr,
                                                              size_t nr, void* c,
                                                              size_t c_stride,
                                                              const struct gemmi8_qparams* p,
                                                              int32x4_t vacc[4][2])
{
  int32x4_t vscale_bits[2];
  gemmi8_qneon_load_channels((const int32_t*) p->scale, p->channel_stride, nr, vscale_bits);
  const float32x4_t vscale0 = vreinterpretq_f32_s32(vscale_bits[0]);
  const float32x4_t vscale1 = vreinterpretq_f32_s32(vscale_bits[1]);
  const float32x4_t vlo_clamp = vdupq_n_f32((float) (p->min - p->zero_point));
  const float32x4_t vhi_clamp = vdupq_n_f32((float) (p->max - p->zero_point));
  const float32x4_t vmagic = vdupq_n_f32(12582912.0f);
  const int32x4_t vmagic_less_zp = vdupq_n_s32(INT32_C(0x4B400000) - p->zero_point);
  /* r + zero_point is within [min, max]: plain narrowing is exact (for qs8 the low
   * byte is the two's complement int8) */
#pragma GCC unroll 4
  for (size_t i = ROWS; i-- > 0;) {
    const int32x4_t vlo = gemmi8_qneon_fp32(vacc[i][0], vscale0, vlo_clamp, vhi_clamp, vmagic,
                                            vmagic_less_zp);
    const int32x4_t vhi = gemmi8_qneon_fp32(vacc[i][1], vscale1, vlo_clamp, vhi_clamp, vmagic,
                                            vmagic_less_zp);
    gemmi8_qneon_store_8(GEMMI8_QNEON_C_ROW(uint8_t, i), nr,
                         vmovn_u16(vreinterpretq_u16_s16(
                             vcombine_s16(vmovn_s32(vlo), vmovn_s32(vhi)))));
  }
}

/* One kernel function; OUT is s32, fixedpoint or fp32. */
#define GEMMI8_QGEMM_4X8C1_NEON_KERNEL(fn, IS_SIGNED, OUT)                                 \
  void fn(size_t mr, size_t nr, size_t k, const void* a, size_t a_stride, const void* w,  \
          void* c, size_t c_stride, const struct gemmi8_qparams* params)                 \
  {                                                                                      \
    int32x4_t vacc[4][2];                                                                \
    gemmi8_qgemm_core_4x8c1__neon(IS_SIGNED, mr, k, (const uint8_t*) a, a_stride, w,     \
                                  vacc);                                                 \
    GEMMI8_QNEON_STORE_##OUT(4, IS_SIGNED);                                              \
  }
/* The igemm kernel of the 4 x 8 tile. */
#define GEMMI8_QIGEMM_4X8C1_NEON_KERNEL(fn, IS_SIGNED, OUT)                                \
  void fn(size_t mr, size_t nr, size_t kc, size_t ks, const void* const* a, const void* w, \
          void* c, size_t c_stride, size_t a_offset, const void* zero,                   \
          const struct gemmi8_qparams* params)                                           \
  {                                                                                      \
    int32x4_t vacc[4][2];                                                                \
    gemmi8_qigemm_core_4x8c1__neon(IS_SIGNED, kc, ks, a, a_offset, zero, w, vacc);       \
    GEMMI8_QNEON_STORE_##OUT(4, IS_SIGNED);                                              \
  }
/* The tiles of one and two rows (ROWS 1 or 2). */
#define GEMMI8_QGEMM_SMALL_8C1_NEON_KERNEL(fn, ROWS, IS_SIGNED, OUT)                       \
  void fn(size_t mr, size_t nr, size_t k, const void* a, size_t a_stride, const void* w,  \
          void* c, size_t c_stride, const struct gemmi8_qparams* params)                 \
  {                                                                                      \
    int32x4_t vacc[4][2];                                                                \
    gemmi8_qgemm_core_small_8c1__neon(ROWS, IS_SIGNED, mr, k, (const uint8_t*) a,         \
                                      a_stride, w, vacc);                                \
    GEMMI8_QNEON_STORE_##OUT(ROWS, IS_SIGNED);                                           \
  }
#define GEMMI8_QNEON_STORE_s32(ROWS, IS_SIGNED) \
  ((void) params, gemmi8_qgemm_store_s32__neon(ROWS, mr, nr, c, c_stride, vacc))
#define GEMMI8_QNEON_STORE_fixedpoint(ROWS, IS_SIGNED) \
  gemmi8_qgemm_store_fixedpoint__neon(ROWS, IS_SIGNED, mr, nr, c, c_stride, params, vacc)
#define GEMMI8_QNEON_STORE_fp32(ROWS, IS_SIGNED) \
  gemmi8_qgemm_store_fp32__neon(ROWS, mr, nr, c, c_stride, params, vacc)

#endif
