/*
 * ARMv7 NEON qu8 / qs8 GEMM microkernel template: 2x4c8 (MR = 2, NR = 4, KR = 8), the
 * 1x4c8 tile for M = 1 on the same packing, and the igemm of the 2x4c8 tile.
 *
 * Block (generic packer, KR = 8): int32 bias'[4], for qu8 int32 coef[4] = -b_zp, then
 * [round_up(k, 8) / 8][4][8] bytes: the 8 depths of column j in a group are one d
 * register, zero past k. Widening multiplies, exact for every byte: VMULL.S8 (qs8,
 * int8 x int8, -16256..16384) or VMULL.U8 (qu8, raw uint8 x raw uint8, 0..65025) give
 * 8 16-bit products, one per lane, and VPADAL.S16 / VPADAL.U16 add them in pairs into
 * 4 32-bit lanes. (VMLAL.S8, two products summed in 16 bits, is not exact:
 * 2 * (-128)^2 overflows int16.)
 *   qs8: acc = bias' + sum_k a * w
 *   qu8: acc = bias' + sum_k a * w + coef * rowsum(a)      (coef = -b_zp)
 * modulo 2^32, which is the definition (bias' = bias - a_zp * colsum + k * a_zp * b_zp).
 * qu8 takes rowsum(a) from the driver (params->row_sum, NULL when every coef is 0).
 *
 * Registers (16 q): 8 accumulators vp<s>x<j>, 4 partial sums each of column j, reduced
 * by VPADD at the end (q8-q15: the loops use q0-q7 and declare them clobbered).
 *   2x4c8: s = row. q0 / q1 = 16 depths of rows 0 / 1 (d0 / d2 depths 0-7, d1 / d3
 *          depths 8-15); d4-d7 = one group of weights (8 depths x 4 columns, one
 *          32-byte load, twice an iteration); q4-q7 = products. One iteration: 16
 *          depths, 4 loads, 16 VMULL + 16 VPADAL = 128 MACs.
 *   1x4c8: s = depth half (depths 0-7 / 8-15 of an iteration go to separate sets, so
 *          that no accumulator takes two VPADALs in a row); q0 = 16 depths of a, d4-d7
 *          the weights, q4-q7 products. One iteration: 16 depths, 3 loads, 8 VMULL + 8
 *          VPADAL = 64 MACs.
 * After the loop: a group of 8 depths if k % 16 >= 8, then the depth tail (k % 8) of
 * a, loaded without reading past the row, against one zero-padded group of weights.
 * Rows past mr alias row mr - 1 (loads stay in bounds; their identical results go to
 * the same place). Requantization parameters are read for nr channels only.
 */
#ifndef GEMMI8_QGEMM_NEON_H
#define GEMMI8_QGEMM_NEON_H

#include <arm_neon.h>

#include "requant.h"
#include "mca.h"

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

/* vacc += the 8 products va * vb, pairwise: VMULL + VPADAL, signed or unsigned. */
static GEMMI8_ALWAYS_INLINE int32x4_t gemmi8_qneon_mull_padal(const int is_signed,
                                                              int32x4_t vacc, uint8x8_t va,
                                                              uint8x8_t vb)
{
  if (is_signed) {
    return vpadalq_s16(vacc, vmull_s8(vreinterpret_s8_u8(va), vreinterpret_s8_u8(vb)));
  }
  return vreinterpretq_s32_u32(vpadalq_u16(vreinterpretq_u32_s32(vacc), vmull_u8(va, vb)));
}

/* One group of 8 depths: va[i] (row i of ROWS) times the 4 columns at wk, into
 * vp[i][j]. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qneon_group_c8(const size_t ROWS, const int is_signed,
                                                       const uint8x8_t* va, const uint8_t* wk,
                                                       int32x4_t vp[2][4])
{
#pragma GCC unroll 4
  for (size_t j = 0; j < 4; j++) {
    const uint8x8_t vb = vld1_u8(wk + 8 * j);
#pragma GCC unroll 2
    for (size_t i = 0; i < ROWS; i++) {
      vp[i][j] = gemmi8_qneon_mull_padal(is_signed, vp[i][j], va[i], vb);
    }
  }
}

/* The loops in inline assembly (GCC's schedule of the intrinsics reloads and copies
 * registers). MUL is vmull.s8 / vmull.u8, PADAL vpadal.s16 / vpadal.u16. */
#define GEMMI8_QNEON_MUL(MUL, P, A, W) MUL " " P ", " A ", " W "\n\t"
#define GEMMI8_QNEON_PADAL(PADAL, ACC, P) PADAL " %q[" ACC "], " P "\n\t"
/* 2x4c8: rows 0 / 1 (A0 / A1, one depth half) x one column's weights W into the
 * products P0 / P1; their VPADALs into columns J of rows 0 / 1 follow a step later */
#define GEMMI8_QNEON_2X4_PAIR(MUL, A0, A1, W, P0, P1) \
  GEMMI8_QNEON_MUL(MUL, P0, A0, W) GEMMI8_QNEON_MUL(MUL, P1, A1, W)
#define GEMMI8_QNEON_2X4_PADAL(PADAL, J, P0, P1) \
  GEMMI8_QNEON_PADAL(PADAL, "vp0x" J, P0) GEMMI8_QNEON_PADAL(PADAL, "vp1x" J, P1)
#define GEMMI8_QNEON_2X4C8_ASM(NAME, MUL, PADAL)                                        \
  GEMMI8_NEON_LOOP_LABEL                                                                \
  GEMMI8_MCA_BEGIN_ASM(NAME ":MACS=128")                                                \
  "vld1.8 {d0-d1}, [%[a0]]!\n\t"                                                        \
  "vld1.8 {d2-d3}, [%[a1]]!\n\t"                                                        \
  "vld1.8 {d4-d7}, [%[w]]!\n\t"                                                         \
  GEMMI8_QNEON_2X4_PAIR(MUL, "d0", "d2", "d4", "q4", "q5")                              \
  GEMMI8_QNEON_2X4_PAIR(MUL, "d0", "d2", "d5", "q6", "q7")                              \
  GEMMI8_QNEON_2X4_PADAL(PADAL, "0", "q4", "q5")                                        \
  GEMMI8_QNEON_2X4_PAIR(MUL, "d0", "d2", "d6", "q4", "q5")                              \
  GEMMI8_QNEON_2X4_PADAL(PADAL, "1", "q6", "q7")                                        \
  GEMMI8_QNEON_2X4_PAIR(MUL, "d0", "d2", "d7", "q6", "q7")                              \
  "vld1.8 {d4-d7}, [%[w]]!\n\t"                                                         \
  GEMMI8_QNEON_2X4_PADAL(PADAL, "2", "q4", "q5")                                        \
  GEMMI8_QNEON_2X4_PAIR(MUL, "d1", "d3", "d4", "q4", "q5")                              \
  GEMMI8_QNEON_2X4_PADAL(PADAL, "3", "q6", "q7")                                        \
  GEMMI8_QNEON_2X4_PAIR(MUL, "d1", "d3", "d5", "q6", "q7")                              \
  GEMMI8_QNEON_2X4_PADAL(PADAL, "0", "q4", "q5")                                        \
  GEMMI8_QNEON_2X4_PAIR(MUL, "d1", "d3", "d6", "q4", "q5")                              \
  GEMMI8_QNEON_2X4_PADAL(PADAL, "1", "q6", "q7")                                        \
  GEMMI8_QNEON_2X4_PAIR(MUL, "d1", "d3", "d7", "q6", "q7")                              \
  GEMMI8_QNEON_2X4_PADAL(PADAL, "2", "q4", "q5")                                        \
  "subs %[n], %[n], #1\n\t"                                                             \
  GEMMI8_QNEON_2X4_PADAL(PADAL, "3", "q6", "q7")                                        \
  GEMMI8_NEON_LOOP_BNE                                                                  \
  GEMMI8_MCA_END_ASM()
/* 1x4c8: the 4 products of depth half 0 (d0 x d4-d7, q4-q7); then, while the next
 * group of weights is loaded into d4-d7, each VPADAL of a product into set 0 is
 * followed by the VMULL of depth half 1 that reuses its register, accumulated into
 * set 1 at the end */
#define GEMMI8_QNEON_1X4_STEP(MUL, PADAL, J, P, W)                                      \
  GEMMI8_QNEON_PADAL(PADAL, "vp0x" J, P) GEMMI8_QNEON_MUL(MUL, P, "d1", W)
#define GEMMI8_QNEON_1X4C8_ASM(NAME, MUL, PADAL)                                        \
  GEMMI8_NEON_LOOP_LABEL                                                                \
  GEMMI8_MCA_BEGIN_ASM(NAME ":MACS=64")                                                 \
  "vld1.8 {d0-d1}, [%[a0]]!\n\t"                                                        \
  "vld1.8 {d4-d7}, [%[w]]!\n\t"                                                         \
  GEMMI8_QNEON_MUL(MUL, "q4", "d0", "d4") GEMMI8_QNEON_MUL(MUL, "q5", "d0", "d5")        \
  GEMMI8_QNEON_MUL(MUL, "q6", "d0", "d6") GEMMI8_QNEON_MUL(MUL, "q7", "d0", "d7")        \
  "vld1.8 {d4-d7}, [%[w]]!\n\t"                                                         \
  GEMMI8_QNEON_1X4_STEP(MUL, PADAL, "0", "q4", "d4")                                    \
  GEMMI8_QNEON_1X4_STEP(MUL, PADAL, "1", "q5", "d5")                                    \
  GEMMI8_QNEON_1X4_STEP(MUL, PADAL, "2", "q6", "d6")                                    \
  GEMMI8_QNEON_1X4_STEP(MUL, PADAL, "3", "q7", "d7")                                    \
  GEMMI8_QNEON_PADAL(PADAL, "vp1x0", "q4") GEMMI8_QNEON_PADAL(PADAL, "vp1x1", "q5")      \
  "subs %[n], %[n], #1\n\t"                                                             \
  GEMMI8_QNEON_PADAL(PADAL, "vp1x2", "q6") GEMMI8_QNEON_PADAL(PADAL, "vp1x3", "q7")      \
  GEMMI8_NEON_LOOP_BNE                                                                  \
  GEMMI8_MCA_END_ASM()

/* k depths of rows a0, a1 (ROWS 2) or a0 (ROWS 1) times the weights at wk, added to
 * vp. Returns the weights past the k depths (round_up(k, 8) x 4 bytes). */
static GEMMI8_ALWAYS_INLINE const uint8_t* gemmi8_qneon_depth_c8(const size_t ROWS,
                                                                const int is_signed, size_t k,
                                                                const uint8_t* a0,
                                                                const uint8_t* a1,
                                                                const uint8_t* wk,
                                                                int32x4_t vp[2][4])
{
  size_t n = k / 16;
  if (n != 0) {
#define GEMMI8_QNEON_OPERANDS_2X4                                                        \
  : [vp0x0] "+w"(vp[0][0]), [vp0x1] "+w"(vp[0][1]), [vp0x2] "+w"(vp[0][2]),               \
    [vp0x3] "+w"(vp[0][3]), [vp1x0] "+w"(vp[1][0]), [vp1x1] "+w"(vp[1][1]),               \
    [vp1x2] "+w"(vp[1][2]), [vp1x3] "+w"(vp[1][3]), [a0] "+r"(a0), [a1] "+r"(a1),         \
    [w] "+r"(wk), [n] "+r"(n)                                                             \
  :                                                                                       \
  : "cc", "memory", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10",    \
    "d11", "d12", "d13", "d14", "d15"
#define GEMMI8_QNEON_OPERANDS_1X4                                                        \
  : [vp0x0] "+w"(vp[0][0]), [vp0x1] "+w"(vp[0][1]), [vp0x2] "+w"(vp[0][2]),               \
    [vp0x3] "+w"(vp[0][3]), [vp1x0] "+w"(vp[1][0]), [vp1x1] "+w"(vp[1][1]),               \
    [vp1x2] "+w"(vp[1][2]), [vp1x3] "+w"(vp[1][3]), [a0] "+r"(a0), [w] "+r"(wk),          \
    [n] "+r"(n)                                                                           \
  :                                                                                       \
  : "cc", "memory", "d0", "d1", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d12",  \
    "d13", "d14", "d15"
    if (ROWS == 2) {
      if (is_signed) {
        __asm__(GEMMI8_QNEON_2X4C8_ASM("qs8-neon-2x4c8", "vmull.s8", "vpadal.s16")
                GEMMI8_QNEON_OPERANDS_2X4);
      } else {
        __asm__(GEMMI8_QNEON_2X4C8_ASM("qu8-neon-2x4c8", "vmull.u8", "vpadal.u16")
                GEMMI8_QNEON_OPERANDS_2X4);
      }
    } else {
      if (is_signed) {
        __asm__(GEMMI8_QNEON_1X4C8_ASM("qs8-neon-1x4c8", "vmull.s8", "vpadal.s16")
                GEMMI8_QNEON_OPERANDS_1X4);
      } else {
        __asm__(GEMMI8_QNEON_1X4C8_ASM("qu8-neon-1x4c8", "vmull.u8", "vpadal.u16")
                GEMMI8_QNEON_OPERANDS_1X4);
      }
    }
#undef GEMMI8_QNEON_OPERANDS_2X4
#undef GEMMI8_QNEON_OPERANDS_1X4
  }
  uint8x8_t va[2];
  if (k & 8) {
    va[0] = vld1_u8(a0);
    va[1] = vld1_u8(a1);
    a0 += 8;
    a1 += 8;
    gemmi8_qneon_group_c8(ROWS, is_signed, va, wk, vp);
    wk += 32;
  }
  if (k % 8 != 0) {
    va[0] = gemmi8_qneon_load_tail(a0, k % 8, k >= 8);
    if (ROWS == 2) va[1] = gemmi8_qneon_load_tail(a1, k % 8, k >= 8);
    gemmi8_qneon_group_c8(ROWS, is_signed, va, wk, vp);
    wk += 32;
  }
  return wk;
}

/* Columns 0-3 of the 4 partial-sum vectors v[0..3] of one row. */
static GEMMI8_ALWAYS_INLINE int32x4_t gemmi8_qneon_reduce_c8(const int32x4_t v[4])
{
  const int32x2_t v0 = vpadd_s32(vget_low_s32(v[0]), vget_high_s32(v[0]));
  const int32x2_t v1 = vpadd_s32(vget_low_s32(v[1]), vget_high_s32(v[1]));
  const int32x2_t v2 = vpadd_s32(vget_low_s32(v[2]), vget_high_s32(v[2]));
  const int32x2_t v3 = vpadd_s32(vget_low_s32(v[3]), vget_high_s32(v[3]));
  return vcombine_s32(vpadd_s32(v0, v1), vpadd_s32(v2, v3));
}

/* The weights of block w (past bias' and, for qu8, coef). */
static GEMMI8_ALWAYS_INLINE const uint8_t* gemmi8_qneon_weights_c8(const int is_signed,
                                                                   const void* w)
{
  return (const uint8_t*) ((const int32_t*) w + (is_signed ? 4 : 8));
}

/* vacc[i] = columns 0-3 of row i: the partial sums reduced (the two depth sets of the
 * 1-row tile added first), + bias', + coef * rowsum(a) for qu8 with row sums. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qneon_finish_c8(const size_t ROWS, const int is_signed,
                                                        size_t mr, const void* w,
                                                        const int32_t* row_sum,
                                                        int32x4_t vp[2][4], int32x4_t vacc[2])
{
  const int32_t* bias = (const int32_t*) w;
  if (ROWS == 1) {
#pragma GCC unroll 4
    for (size_t j = 0; j < 4; j++) vp[0][j] = vaddq_s32(vp[0][j], vp[1][j]);
  }
  const int32x4_t vbias = vld1q_s32(bias);
#pragma GCC unroll 2
  for (size_t i = 0; i < ROWS; i++) vacc[i] = vaddq_s32(gemmi8_qneon_reduce_c8(vp[i]), vbias);
  if (!is_signed && row_sum != NULL) {
    const int32x4_t vcoef = vld1q_s32(bias + 4);
#pragma GCC unroll 2
    for (size_t i = 0; i < ROWS; i++) {
      vacc[i] = vmlaq_n_s32(vacc[i], vcoef, row_sum[i < mr ? i : mr - 1]);
    }
  }
}

/* The tile of ROWS (1 or 2) rows: vacc[i] = columns 0-3 of row i. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_core_c8__armv7neon(const size_t ROWS, const int is_signed,
                                                           size_t mr, size_t k, const uint8_t* a,
                                                           size_t a_stride, const void* w,
                                                           const struct gemmi8_qparams* p,
                                                           int32x4_t vacc[2])
{
  const uint8_t* a0 = a;
  const uint8_t* a1 = ROWS == 2 && mr > 1 ? a0 + a_stride : a0;
  int32x4_t vp[2][4];
#pragma GCC unroll 2
  for (size_t s = 0; s < 2; s++) {
#pragma GCC unroll 4
    for (size_t j = 0; j < 4; j++) vp[s][j] = vdupq_n_s32(0);
  }
  gemmi8_qneon_depth_c8(ROWS, is_signed, k, a0, a1, gemmi8_qneon_weights_c8(is_signed, w), vp);
  gemmi8_qneon_finish_c8(ROWS, is_signed, mr, w, p->row_sum, vp, vacc);
}

/* The 2 x 4 tile with A through ks taps of 2 row pointers (igemm, convolution): the
 * depth loop once per tap, each tap's weights padded to 8 depths. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qigemm_core_2x4c8__armv7neon(
    const int is_signed, size_t mr, size_t kc, size_t ks, const void* const* a,
    size_t a_offset, const void* zero, const void* w, const struct gemmi8_qparams* p,
    int32x4_t vacc[2])
{
  int32x4_t vp[2][4];
#pragma GCC unroll 2
  for (size_t s = 0; s < 2; s++) {
#pragma GCC unroll 4
    for (size_t j = 0; j < 4; j++) vp[s][j] = vdupq_n_s32(0);
  }
  const uint8_t* wk = gemmi8_qneon_weights_c8(is_signed, w);
  for (size_t t = 0; t < ks; t++) {
    const uint8_t* ap[2];
    for (size_t i = 0; i < 2; i++) {
      const uint8_t* q = (const uint8_t*) a[t * 2 + i];
      ap[i] = q == (const uint8_t*) zero ? q : q + a_offset;
    }
    wk = gemmi8_qneon_depth_c8(2, is_signed, kc, ap[0], ap[1], wk, vp);
  }
  gemmi8_qneon_finish_c8(2, is_signed, mr, w, p->row_sum, vp, vacc);
}

/* 4 per-channel (stride 1) or per-tensor (stride 0) int32 values, read for nr only. */
static GEMMI8_ALWAYS_INLINE int32x4_t gemmi8_qneon_load_channels(const int32_t* p, size_t stride,
                                                                 size_t nr)
{
  if (stride == 0) return vld1q_dup_s32(p);
  if (nr == 4) return vld1q_s32(p);
  int32_t tmp[4] = {0};
  for (size_t j = 0; j < nr; j++) tmp[j] = p[j];
  return vld1q_s32(tmp);
}

/* Row I of c (rows past mr alias row mr - 1). */
#define GEMMI8_QNEON_C_ROW(T, I) ((T*) ((uint8_t*) c + ((I) < mr ? (I) : mr - 1) * c_stride))

static GEMMI8_ALWAYS_INLINE void gemmi8_qneon_store_s32(int32_t* c, size_t nr, int32x4_t v)
{
  if (nr == 4) {
    vst1q_s32(c, v);
    return;
  }
  int32x2_t vlo = vget_low_s32(v);
  if (nr & 2) {
    vst1_s32(c, vlo);
    vlo = vget_high_s32(v);
    c += 2;
  }
  if (nr & 1) vst1_lane_s32(c, vlo, 0);
}

/* Lanes 0..nr-1 of v (nr <= 4) to c. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qneon_store_4(uint8_t* c, size_t nr, uint8x8_t v)
{
  if (nr == 4) {
    vst1_lane_u32((void*) c, vreinterpret_u32_u8(v), 0);
    return;
  }
  if (nr & 2) {
    vst1_lane_u16((void*) c, vreinterpret_u16_u8(v), 0);
    v = vext_u8(v, v, 2);
    c += 2;
  }
  if (nr & 1) vst1_lane_u8(c, v, 0);
}

/* Rows 1 and 0 (ROWS = 2; row 1's bytes in lanes 4-7) or row 0 of the 8 bytes v. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qneon_store_rows_8(const size_t ROWS, size_t mr,
                                                          size_t nr, void* c, size_t c_stride,
                                                          uint8x8_t v)
{
  if (ROWS == 2) gemmi8_qneon_store_4(GEMMI8_QNEON_C_ROW(uint8_t, 1), nr, vext_u8(v, v, 4));
  gemmi8_qneon_store_4(GEMMI8_QNEON_C_ROW(uint8_t, 0), nr, v);
}

static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store_s32__armv7neon(const size_t ROWS, size_t mr,
                                                             size_t nr, void* c,
                                                             size_t c_stride,
                                                             const int32x4_t vacc[2])
{
#pragma GCC unroll 2
  for (size_t i = ROWS; i-- > 0;) {
    gemmi8_qneon_store_s32(GEMMI8_QNEON_C_ROW(int32_t, i), nr, vacc[i]);
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

static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store_fixedpoint__armv7neon(
    const size_t ROWS, const int is_signed, size_t mr, size_t nr, void* c, size_t c_stride,
    const struct gemmi8_qparams* p, const int32x4_t vacc[2])
{
  const int32x4_t vmul = gemmi8_qneon_load_channels(p->multiplier, p->channel_stride, nr);
  const int32x4_t vshift = gemmi8_qneon_load_channels(p->shift, p->channel_stride, nr);
  const int32x4_t vzero = vdupq_n_s32(0);
  const int32x4_t vleft = vmaxq_s32(vshift, vzero);
  const int32x4_t vright = vminq_s32(vshift, vzero);
  const uint32x4_t vno_right = vceqq_s32(vright, vzero);
  const int32x4_t vzp = vdupq_n_s32(p->zero_point);
  const uint8x8_t vmin = vdup_n_u8((uint8_t) p->min);
  const uint8x8_t vmax = vdup_n_u8((uint8_t) p->max);
  /* the zero point wraps around int32, as gemmlowp's addition does */
  const int32x4_t v0 =
      vaddq_s32(gemmi8_qneon_fixedpoint(vacc[0], vmul, vleft, vright, vno_right), vzp);
  const int32x4_t v1 =
      ROWS == 2
          ? vaddq_s32(gemmi8_qneon_fixedpoint(vacc[ROWS - 1], vmul, vleft, vright, vno_right),
                      vzp)
          : v0;
  gemmi8_qneon_store_rows_8(ROWS, mr, nr, c, c_stride,
                            gemmi8_qneon_narrow(is_signed, v0, v1, vmin, vmax));
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

static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store_fp32__armv7neon(const size_t ROWS, size_t mr,
                                                              size_t nr, void* c,
                                                              size_t c_stride,
                                                              const struct gemmi8_qparams* p,
                                                              const int32x4_t vacc[2])
{
  const float32x4_t vscale = vreinterpretq_f32_s32(
      gemmi8_qneon_load_channels((const int32_t*) p->scale, p->channel_stride, nr));
  const float32x4_t vlo_clamp = vdupq_n_f32((float) (p->min - p->zero_point));
  const float32x4_t vhi_clamp = vdupq_n_f32((float) (p->max - p->zero_point));
  const float32x4_t vmagic = vdupq_n_f32(12582912.0f);
  const int32x4_t vmagic_less_zp = vdupq_n_s32(INT32_C(0x4B400000) - p->zero_point);
  /* r + zero_point is within [min, max]: plain narrowing is exact (for qs8 the low
   * byte is the two's complement int8) */
  const int32x4_t v0 =
      gemmi8_qneon_fp32(vacc[0], vscale, vlo_clamp, vhi_clamp, vmagic, vmagic_less_zp);
  const int32x4_t v1 =
      ROWS == 2 ? gemmi8_qneon_fp32(vacc[ROWS - 1], vscale, vlo_clamp, vhi_clamp, vmagic,
                                    vmagic_less_zp)
                : v0;
  gemmi8_qneon_store_rows_8(
      ROWS, mr, nr, c, c_stride,
      vmovn_u16(vreinterpretq_u16_s16(vcombine_s16(vmovn_s32(v0), vmovn_s32(v1)))));
}

/* One body per tile and kind: the s32, fixedpoint and fp32 kernels of both types are
 * thin entries (GEMMI8_QBODY_KERNELS, src/microkernel.h) into one static function that
 * runs the type's depth loop and picks the output stage after it; an entry passes the
 * output kind and the type in mr's high bits, one ORR and a tail call: the other
 * arguments stay in their registers and stack slots. */
#define GEMMI8_QNEON_NOINLINE __attribute__((noinline, noclone))

/* The output stage of output kind out (a gemmi8_qoutput_* value). */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store__armv7neon(const size_t ROWS, const int is_signed,
                                                         int out, size_t mr, size_t nr,
                                                         void* c, size_t c_stride,
                                                         const struct gemmi8_qparams* p,
                                                         const int32x4_t vacc[2])
{
  if (out == gemmi8_qoutput_s32) {
    gemmi8_qgemm_store_s32__armv7neon(ROWS, mr, nr, c, c_stride, vacc);
  } else if (out == gemmi8_qoutput_fixedpoint) {
    gemmi8_qgemm_store_fixedpoint__armv7neon(ROWS, is_signed, mr, nr, c, c_stride, p, vacc);
  } else {
    gemmi8_qgemm_store_fp32__armv7neon(ROWS, mr, nr, c, c_stride, p, vacc);
  }
}

/* The body of a GEMM tile of ROWS (2: the main tile, 1: M = 1) rows, both types. */
#define GEMMI8_QGEMM_C8_NEON_BODY(body, ROWS)                                             \
  static GEMMI8_QNEON_NOINLINE void body(size_t mr_flags, size_t nr, size_t k,            \
                                         const void* a, size_t a_stride, const void* w,   \
                                         void* c, size_t c_stride,                        \
                                         const struct gemmi8_qparams* params)             \
  {                                                                                      \
    const size_t mr = GEMMI8_OUT_MR(mr_flags);                                           \
    const int is_signed = GEMMI8_TILE_IS_SIGNED(mr_flags);                               \
    int32x4_t vacc[2];                                                                   \
    gemmi8_qgemm_core_c8__armv7neon(ROWS, is_signed, mr, k, (const uint8_t*) a, a_stride, w, \
                                    params, vacc);                                       \
    gemmi8_qgemm_store__armv7neon(ROWS, is_signed, (int) GEMMI8_OUT_KIND(mr_flags), mr, nr, \
                                  c, c_stride, params, vacc);                            \
  }
/* The igemm body of the 2 x 4 tile, both types. */
#define GEMMI8_QIGEMM_2X4C8_NEON_BODY(body)                                               \
  static GEMMI8_QNEON_NOINLINE void body(size_t mr_flags, size_t nr, size_t kc, size_t ks, \
                                         const void* const* a, const void* w, void* c,    \
                                         size_t c_stride, size_t a_offset,                \
                                         const void* zero,                                \
                                         const struct gemmi8_qparams* params)             \
  {                                                                                      \
    const size_t mr = GEMMI8_OUT_MR(mr_flags);                                           \
    const int is_signed = GEMMI8_TILE_IS_SIGNED(mr_flags);                               \
    int32x4_t vacc[2];                                                                   \
    gemmi8_qigemm_core_2x4c8__armv7neon(is_signed, mr, kc, ks, a, a_offset, zero, w, params, \
                                        vacc);                                           \
    gemmi8_qgemm_store__armv7neon(2, is_signed, (int) GEMMI8_OUT_KIND(mr_flags), mr, nr, c, \
                                  c_stride, params, vacc);                               \
  }

#endif
