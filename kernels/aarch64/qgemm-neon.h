/*
 * Baseline ARMv8 NEON qu8 / qs8 GEMM microkernel template: MR x 4, k groups of 16.
 *
 * Widening multiplies, exact: SMULL / SMULL2 (qs8: int8 x int8, |product| <= 2^14) or
 * UMULL / UMULL2 (qu8: raw uint8 x raw uint8, product <= 65025) give 8 16-bit
 * products each, and SADALP / UADALP add them in pairs into 4 32-bit lanes.
 * qs8 blocks marked pair-safe by the packer (GEMMI8_QBLOCK_PAIRS_SAFE after the
 * weights: no column holds -128 at both depth d and d + 8 of a group of 16) add the
 * two products of depths d and d + 8 in 16 bits first (SMULL, then SMLAL2), one
 * pairwise accumulate per 16 products instead of two: the sum of two products lies in
 * [-32512, 32640] unless both weights are -128 (and both a are -128: 32768 overflows),
 * so it is exact on those blocks for every a. Other blocks, and qu8 (2 * 255^2
 * overflows uint16), take the exact two-accumulate path.
 *   acc = bias'[n] + sum_k a * w  (+ coef[n] * rowsum(a) for qu8, coef = -b_zp)
 * modulo 2^32 (src/microkernel.h); qu8 takes the row sums from the driver (params->row_sum,
 * NULL when every coef is 0). Packed block: bias'[4], coef[4] (qu8 only), then
 * [k/16][4][16] bytes: column j's 16 depths are one vector.
 *
 * Registers: vacc<i>x<j> = vpart[i][j] holds 4 partial sums of row i, column j (16
 * accumulators for MR = 4), reduced by pairwise adds (ADDP) at the end; va<i> = 16
 * depths of row i; vb<j> = 16 depths of column j. One loop iteration is 16 depths:
 * MR + 4 loads, 8 * MR multiplies and 8 * MR pairwise accumulates. Rows past mr alias
 * row mr - 1. The depth tail (k % 16) is one in-bounds load per row; the weights are
 * zero-padded to 16 depths.
 *
 * The includer defines GEMMI8_MCA_NAME (q8-neon.h) before including this file.
 */
#ifndef GEMMI8_AARCH64_QGEMM_NEON_H
#define GEMMI8_AARCH64_QGEMM_NEON_H

#include "q8-neon.h"

/* Region name of a pair-safe loop (qs8); MACS: one iteration's multiply-accumulates. */
#define GEMMI8_MCA_NAME_PAIRS(out, MACS) \
  GEMMI8_MCA_NAME("qs8", out) "+smlal:MACS=" MACS ":PEAK=a64-smull-smlal2"

/* vacc += the 16 products va * vb, pairwise (signed or unsigned); pairs (qs8 on a
 * pair-safe block): the products of lanes d and d + 8 added in 16 bits first */
static GEMMI8_ALWAYS_INLINE int32x4_t gemmi8_a64_mull_adalp(const int is_signed, int pairs,
                                                           int32x4_t vacc, uint8x16_t va,
                                                           uint8x16_t vb)
{
  if (is_signed) {
    const int8x16_t sa = vreinterpretq_s8_u8(va), sb = vreinterpretq_s8_u8(vb);
    const int16x8_t vlo = vmull_s8(vget_low_s8(sa), vget_low_s8(sb));
    if (pairs) return vpadalq_s16(vacc, vmlal_high_s8(vlo, sa, sb));
    const int16x8_t vhi = vmull_high_s8(sa, sb);
    return vpadalq_s16(vpadalq_s16(vacc, vlo), vhi);
  }
  const uint16x8_t vlo = vmull_u8(vget_low_u8(va), vget_low_u8(vb));
  const uint16x8_t vhi = vmull_high_u8(va, vb);
  return vreinterpretq_s32_u32(vpadalq_u16(vpadalq_u16(vreinterpretq_u32_s32(vacc), vlo), vhi));
}

/* One step of 16 depths for every row and column (the depth tail of the 1- and 2-row
 * tiles). */
#define GEMMI8_A64_MULL_STEP()                                                        \
  do {                                                                                \
    _Pragma("GCC unroll 4") for (size_t j = 0; j < 4; j++) {                          \
      const uint8x16_t vb = vld1q_u8(wk + 16 * j);                                    \
      _Pragma("GCC unroll 16") for (size_t i = 0; i < MR; i++) {                      \
        vpart[i][j] = gemmi8_a64_mull_adalp(is_signed, pairs, vpart[i][j], va[i], vb); \
      }                                                                               \
    }                                                                                 \
    wk += 64;                                                                         \
  } while (0)

/* The 4 x 4 main loop in assembly (the compiler's schedule spills accumulators), 16
 * depths per iteration: va0..va3 = v16..v19, vb0..vb3 = v20..v23. Step t (row t % 4,
 * column t / 4) multiplies into the product pair v24+2(t%4), v25+2(t%4); its low half
 * is accumulated at step t + 2 and its high half at t + 3 (modulo 16, into the next
 * iteration), hiding the multiply and accumulate latencies on in-order cores
 * (Cortex-A55). The products start at zero, so the first iteration's wrapped
 * accumulates add nothing; the last ones are drained after the loop. Each register
 * of a and w is reloaded for the next iteration right after its last use; the last
 * iteration is peeled so that nothing is read past the depth. a is addressed by one
 * offset register. */
#define GEMMI8_A64_MUL(MUL, VA, VB, PL, PH)                 \
  MUL " " PL ".8h, " VA ".8b, " VB ".8b\n\t"                 \
  MUL "2 " PH ".8h, " VA ".16b, " VB ".16b\n\t"
#define GEMMI8_A64_ADALP(ADALP, ACC, P) ADALP " %[" ACC "].4s, " P ".8h\n\t"
#define GEMMI8_A64_LDA(Q, I) "ldr " Q ", [%[a" I "], %[koff]]\n\t"
#define GEMMI8_A64_LDW(Q, OFFSET) "ldr " Q ", [%[w], #" OFFSET "]\n\t"
/* one iteration, loading the next one's a and w */
#define GEMMI8_A64_MULL_4X4_NEXT(MUL, ADALP) \
  GEMMI8_A64_MUL(MUL, "v16", "v20", "v24", "v25") GEMMI8_A64_ADALP(ADALP, "vacc2x3", "v28") GEMMI8_A64_ADALP(ADALP, "vacc1x3", "v27") \
  GEMMI8_A64_MUL(MUL, "v17", "v20", "v26", "v27") GEMMI8_A64_ADALP(ADALP, "vacc3x3", "v30") GEMMI8_A64_ADALP(ADALP, "vacc2x3", "v29") \
  GEMMI8_A64_MUL(MUL, "v18", "v20", "v28", "v29") GEMMI8_A64_ADALP(ADALP, "vacc0x0", "v24") GEMMI8_A64_ADALP(ADALP, "vacc3x3", "v31") \
  GEMMI8_A64_MUL(MUL, "v19", "v20", "v30", "v31") GEMMI8_A64_ADALP(ADALP, "vacc1x0", "v26") GEMMI8_A64_ADALP(ADALP, "vacc0x0", "v25") GEMMI8_A64_LDW("q20", "64") \
  GEMMI8_A64_MUL(MUL, "v16", "v21", "v24", "v25") GEMMI8_A64_ADALP(ADALP, "vacc2x0", "v28") GEMMI8_A64_ADALP(ADALP, "vacc1x0", "v27") \
  GEMMI8_A64_MUL(MUL, "v17", "v21", "v26", "v27") GEMMI8_A64_ADALP(ADALP, "vacc3x0", "v30") GEMMI8_A64_ADALP(ADALP, "vacc2x0", "v29") \
  GEMMI8_A64_MUL(MUL, "v18", "v21", "v28", "v29") GEMMI8_A64_ADALP(ADALP, "vacc0x1", "v24") GEMMI8_A64_ADALP(ADALP, "vacc3x0", "v31") \
  GEMMI8_A64_MUL(MUL, "v19", "v21", "v30", "v31") GEMMI8_A64_ADALP(ADALP, "vacc1x1", "v26") GEMMI8_A64_ADALP(ADALP, "vacc0x1", "v25") GEMMI8_A64_LDW("q21", "80") \
  GEMMI8_A64_MUL(MUL, "v16", "v22", "v24", "v25") GEMMI8_A64_ADALP(ADALP, "vacc2x1", "v28") GEMMI8_A64_ADALP(ADALP, "vacc1x1", "v27") \
  GEMMI8_A64_MUL(MUL, "v17", "v22", "v26", "v27") GEMMI8_A64_ADALP(ADALP, "vacc3x1", "v30") GEMMI8_A64_ADALP(ADALP, "vacc2x1", "v29") \
  GEMMI8_A64_MUL(MUL, "v18", "v22", "v28", "v29") GEMMI8_A64_ADALP(ADALP, "vacc0x2", "v24") GEMMI8_A64_ADALP(ADALP, "vacc3x1", "v31") \
  GEMMI8_A64_MUL(MUL, "v19", "v22", "v30", "v31") GEMMI8_A64_ADALP(ADALP, "vacc1x2", "v26") GEMMI8_A64_ADALP(ADALP, "vacc0x2", "v25") GEMMI8_A64_LDW("q22", "96") \
  GEMMI8_A64_MUL(MUL, "v16", "v23", "v24", "v25") GEMMI8_A64_ADALP(ADALP, "vacc2x2", "v28") GEMMI8_A64_ADALP(ADALP, "vacc1x2", "v27") "add %[koff], %[koff], #16\n\t" GEMMI8_A64_LDA("q16", "0") \
  GEMMI8_A64_MUL(MUL, "v17", "v23", "v26", "v27") GEMMI8_A64_ADALP(ADALP, "vacc3x2", "v30") GEMMI8_A64_ADALP(ADALP, "vacc2x2", "v29") GEMMI8_A64_LDA("q17", "1") \
  GEMMI8_A64_MUL(MUL, "v18", "v23", "v28", "v29") GEMMI8_A64_ADALP(ADALP, "vacc0x3", "v24") GEMMI8_A64_ADALP(ADALP, "vacc3x2", "v31") GEMMI8_A64_LDA("q18", "2") \
  GEMMI8_A64_MUL(MUL, "v19", "v23", "v30", "v31") GEMMI8_A64_ADALP(ADALP, "vacc1x3", "v26") GEMMI8_A64_ADALP(ADALP, "vacc0x3", "v25") GEMMI8_A64_LDA("q19", "3") GEMMI8_A64_LDW("q23", "112") "add %[w], %[w], #64\n\t"
/* the last iteration */
#define GEMMI8_A64_MULL_4X4_LAST(MUL, ADALP) \
  GEMMI8_A64_MUL(MUL, "v16", "v20", "v24", "v25") GEMMI8_A64_ADALP(ADALP, "vacc2x3", "v28") GEMMI8_A64_ADALP(ADALP, "vacc1x3", "v27") \
  GEMMI8_A64_MUL(MUL, "v17", "v20", "v26", "v27") GEMMI8_A64_ADALP(ADALP, "vacc3x3", "v30") GEMMI8_A64_ADALP(ADALP, "vacc2x3", "v29") \
  GEMMI8_A64_MUL(MUL, "v18", "v20", "v28", "v29") GEMMI8_A64_ADALP(ADALP, "vacc0x0", "v24") GEMMI8_A64_ADALP(ADALP, "vacc3x3", "v31") \
  GEMMI8_A64_MUL(MUL, "v19", "v20", "v30", "v31") GEMMI8_A64_ADALP(ADALP, "vacc1x0", "v26") GEMMI8_A64_ADALP(ADALP, "vacc0x0", "v25") \
  GEMMI8_A64_MUL(MUL, "v16", "v21", "v24", "v25") GEMMI8_A64_ADALP(ADALP, "vacc2x0", "v28") GEMMI8_A64_ADALP(ADALP, "vacc1x0", "v27") \
  GEMMI8_A64_MUL(MUL, "v17", "v21", "v26", "v27") GEMMI8_A64_ADALP(ADALP, "vacc3x0", "v30") GEMMI8_A64_ADALP(ADALP, "vacc2x0", "v29") \
  GEMMI8_A64_MUL(MUL, "v18", "v21", "v28", "v29") GEMMI8_A64_ADALP(ADALP, "vacc0x1", "v24") GEMMI8_A64_ADALP(ADALP, "vacc3x0", "v31") \
  GEMMI8_A64_MUL(MUL, "v19", "v21", "v30", "v31") GEMMI8_A64_ADALP(ADALP, "vacc1x1", "v26") GEMMI8_A64_ADALP(ADALP, "vacc0x1", "v25") \
  GEMMI8_A64_MUL(MUL, "v16", "v22", "v24", "v25") GEMMI8_A64_ADALP(ADALP, "vacc2x1", "v28") GEMMI8_A64_ADALP(ADALP, "vacc1x1", "v27") \
  GEMMI8_A64_MUL(MUL, "v17", "v22", "v26", "v27") GEMMI8_A64_ADALP(ADALP, "vacc3x1", "v30") GEMMI8_A64_ADALP(ADALP, "vacc2x1", "v29") \
  GEMMI8_A64_MUL(MUL, "v18", "v22", "v28", "v29") GEMMI8_A64_ADALP(ADALP, "vacc0x2", "v24") GEMMI8_A64_ADALP(ADALP, "vacc3x1", "v31") \
  GEMMI8_A64_MUL(MUL, "v19", "v22", "v30", "v31") GEMMI8_A64_ADALP(ADALP, "vacc1x2", "v26") GEMMI8_A64_ADALP(ADALP, "vacc0x2", "v25") \
  GEMMI8_A64_MUL(MUL, "v16", "v23", "v24", "v25") GEMMI8_A64_ADALP(ADALP, "vacc2x2", "v28") GEMMI8_A64_ADALP(ADALP, "vacc1x2", "v27") \
  GEMMI8_A64_MUL(MUL, "v17", "v23", "v26", "v27") GEMMI8_A64_ADALP(ADALP, "vacc3x2", "v30") GEMMI8_A64_ADALP(ADALP, "vacc2x2", "v29") \
  GEMMI8_A64_MUL(MUL, "v18", "v23", "v28", "v29") GEMMI8_A64_ADALP(ADALP, "vacc0x3", "v24") GEMMI8_A64_ADALP(ADALP, "vacc3x2", "v31") \
  GEMMI8_A64_MUL(MUL, "v19", "v23", "v30", "v31") GEMMI8_A64_ADALP(ADALP, "vacc1x3", "v26") GEMMI8_A64_ADALP(ADALP, "vacc0x3", "v25") "add %[w], %[w], #64\n\t"
/* Shared by the 4 x 4 loops (two-accumulate and pair-safe): the partial sums zeroed,
 * the first iteration's a and w loaded and counted, and the operands. */
#define GEMMI8_A64_4X4_ZERO \
  "movi %[vacc0x0].4s, #0\n\t" "movi %[vacc0x1].4s, #0\n\t" \
  "movi %[vacc0x2].4s, #0\n\t" "movi %[vacc0x3].4s, #0\n\t" \
  "movi %[vacc1x0].4s, #0\n\t" "movi %[vacc1x1].4s, #0\n\t" \
  "movi %[vacc1x2].4s, #0\n\t" "movi %[vacc1x3].4s, #0\n\t" \
  "movi %[vacc2x0].4s, #0\n\t" "movi %[vacc2x1].4s, #0\n\t" \
  "movi %[vacc2x2].4s, #0\n\t" "movi %[vacc2x3].4s, #0\n\t" \
  "movi %[vacc3x0].4s, #0\n\t" "movi %[vacc3x1].4s, #0\n\t" \
  "movi %[vacc3x2].4s, #0\n\t" "movi %[vacc3x3].4s, #0\n\t"
#define GEMMI8_A64_4X4_FIRST \
  GEMMI8_A64_LDA("q16", "0") GEMMI8_A64_LDW("q20", "0") \
  GEMMI8_A64_LDA("q17", "1") GEMMI8_A64_LDW("q21", "16") \
  GEMMI8_A64_LDA("q18", "2") GEMMI8_A64_LDW("q22", "32") \
  GEMMI8_A64_LDA("q19", "3") GEMMI8_A64_LDW("q23", "48") \
  "subs %[iterations], %[iterations], #1\n\t"
#define GEMMI8_A64_4X4_OPERANDS \
  [vacc0x0] "=w"(vpart[0][0]), [vacc0x1] "=w"(vpart[0][1]), \
  [vacc0x2] "=w"(vpart[0][2]), [vacc0x3] "=w"(vpart[0][3]), \
  [vacc1x0] "=w"(vpart[1][0]), [vacc1x1] "=w"(vpart[1][1]), \
  [vacc1x2] "=w"(vpart[1][2]), [vacc1x3] "=w"(vpart[1][3]), \
  [vacc2x0] "=w"(vpart[2][0]), [vacc2x1] "=w"(vpart[2][1]), \
  [vacc2x2] "=w"(vpart[2][2]), [vacc2x3] "=w"(vpart[2][3]), \
  [vacc3x0] "=w"(vpart[3][0]), [vacc3x1] "=w"(vpart[3][1]), \
  [vacc3x2] "=w"(vpart[3][2]), [vacc3x3] "=w"(vpart[3][3]), \
  [w] "+r"(wk), [iterations] "+r"(iterations), [koff] "+r"(koff) \
  : [a0] "r"(ap[0]), [a1] "r"(ap[1]), [a2] "r"(ap[2]), [a3] "r"(ap[3]) \
  : "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", \
    "v27", "v28", "v29", "v30", "v31", "cc", "memory"
/* Partial sums = 0, then `iterations` times 16 depths; outputs only (30 operands). */
#define GEMMI8_A64_MULL_4X4_ASM(MUL, ADALP, NAME)                                       \
  __asm__ volatile(                                                                     \
      GEMMI8_A64_4X4_ZERO                                                               \
      "cbz %[iterations], .Lgemmi8_mull_end%=\n\t"                                      \
      "movi v24.4s, #0\n\t" "movi v25.4s, #0\n\t" "movi v26.4s, #0\n\t"             \
      "movi v27.4s, #0\n\t" "movi v28.4s, #0\n\t" "movi v29.4s, #0\n\t"             \
      "movi v30.4s, #0\n\t" "movi v31.4s, #0\n\t"                                    \
      GEMMI8_A64_4X4_FIRST                                                              \
      "b.eq .Lgemmi8_mull_last%=\n\t"                                                   \
      GEMMI8_MCA_BEGIN_ASM(NAME)                                                        \
      ".Lgemmi8_mull_loop%=:\n\t"                                                       \
      GEMMI8_A64_MULL_4X4_NEXT(MUL, ADALP)                                              \
      "subs %[iterations], %[iterations], #1\n\t"                                       \
      "b.ne .Lgemmi8_mull_loop%=\n\t"                                                   \
      GEMMI8_MCA_END_ASM()                                                              \
      ".Lgemmi8_mull_last%=:\n\t"                                                       \
      GEMMI8_A64_MULL_4X4_LAST(MUL, ADALP)                                              \
      GEMMI8_A64_ADALP(ADALP, "vacc1x3", "v27")                                         \
      GEMMI8_A64_ADALP(ADALP, "vacc2x3", "v28") GEMMI8_A64_ADALP(ADALP, "vacc2x3", "v29") \
      GEMMI8_A64_ADALP(ADALP, "vacc3x3", "v30") GEMMI8_A64_ADALP(ADALP, "vacc3x3", "v31") \
      ".Lgemmi8_mull_end%=:\n\t"                                                        \
      : GEMMI8_A64_4X4_OPERANDS)
#define GEMMI8_A64_MULL_4X4(MUL, ADALP, TYPE) \
  GEMMI8_A64_MULL_4X4_ASM(MUL, ADALP, GEMMI8_MCA_NAME(TYPE, "s32"))

/* The qs8 4 x 4 loop of pair-safe blocks, 16 depths per iteration, same registers:
 * step t (row t % 4, column t / 4) multiplies depths 0-7 (SMULL) into v24 + t % 8, adds
 * the products of depths 8-15 of step t - 1 into its register (SMLAL2: the operands
 * are still loaded) and accumulates the pair sums of step t - 4 (SADALP; modulo 16, the
 * last four steps in the next iteration or after the loop). a and w are reloaded as in
 * the loop above. (Written out by a short generator: step t emits SMULL(t),
 * SADALP(t - 4), SMLAL2(t - 1), then the reloads due.) */
#define GEMMI8_A64_SMULL(P, VA, VB) "smull " P ".8h, " VA ".8b, " VB ".8b\n\t"
#define GEMMI8_A64_SMLAL2(P, VA, VB) "smlal2 " P ".8h, " VA ".16b, " VB ".16b\n\t"
#define GEMMI8_A64_KADD "add %[koff], %[koff], #16\n\t"
#define GEMMI8_A64_SMLAL_4X4_ITERATION(LW, LA, KADD) \
  GEMMI8_A64_SMULL("v24", "v16", "v20") GEMMI8_A64_ADALP("sadalp", "vacc0x3", "v28") \
  GEMMI8_A64_SMULL("v25", "v17", "v20") GEMMI8_A64_ADALP("sadalp", "vacc1x3", "v29") GEMMI8_A64_SMLAL2("v24", "v16", "v20") \
  GEMMI8_A64_SMULL("v26", "v18", "v20") GEMMI8_A64_ADALP("sadalp", "vacc2x3", "v30") GEMMI8_A64_SMLAL2("v25", "v17", "v20") \
  GEMMI8_A64_SMULL("v27", "v19", "v20") GEMMI8_A64_ADALP("sadalp", "vacc3x3", "v31") GEMMI8_A64_SMLAL2("v26", "v18", "v20") \
  GEMMI8_A64_SMULL("v28", "v16", "v21") GEMMI8_A64_ADALP("sadalp", "vacc0x0", "v24") GEMMI8_A64_SMLAL2("v27", "v19", "v20") LW("q20", "64") \
  GEMMI8_A64_SMULL("v29", "v17", "v21") GEMMI8_A64_ADALP("sadalp", "vacc1x0", "v25") GEMMI8_A64_SMLAL2("v28", "v16", "v21") \
  GEMMI8_A64_SMULL("v30", "v18", "v21") GEMMI8_A64_ADALP("sadalp", "vacc2x0", "v26") GEMMI8_A64_SMLAL2("v29", "v17", "v21") \
  GEMMI8_A64_SMULL("v31", "v19", "v21") GEMMI8_A64_ADALP("sadalp", "vacc3x0", "v27") GEMMI8_A64_SMLAL2("v30", "v18", "v21") \
  GEMMI8_A64_SMULL("v24", "v16", "v22") GEMMI8_A64_ADALP("sadalp", "vacc0x1", "v28") GEMMI8_A64_SMLAL2("v31", "v19", "v21") LW("q21", "80") \
  GEMMI8_A64_SMULL("v25", "v17", "v22") GEMMI8_A64_ADALP("sadalp", "vacc1x1", "v29") GEMMI8_A64_SMLAL2("v24", "v16", "v22") \
  GEMMI8_A64_SMULL("v26", "v18", "v22") GEMMI8_A64_ADALP("sadalp", "vacc2x1", "v30") GEMMI8_A64_SMLAL2("v25", "v17", "v22") \
  GEMMI8_A64_SMULL("v27", "v19", "v22") GEMMI8_A64_ADALP("sadalp", "vacc3x1", "v31") GEMMI8_A64_SMLAL2("v26", "v18", "v22") \
  GEMMI8_A64_SMULL("v28", "v16", "v23") GEMMI8_A64_ADALP("sadalp", "vacc0x2", "v24") GEMMI8_A64_SMLAL2("v27", "v19", "v22") LW("q22", "96") \
  GEMMI8_A64_SMULL("v29", "v17", "v23") GEMMI8_A64_ADALP("sadalp", "vacc1x2", "v25") GEMMI8_A64_SMLAL2("v28", "v16", "v23") KADD LA("q16", "0") \
  GEMMI8_A64_SMULL("v30", "v18", "v23") GEMMI8_A64_ADALP("sadalp", "vacc2x2", "v26") GEMMI8_A64_SMLAL2("v29", "v17", "v23") LA("q17", "1") \
  GEMMI8_A64_SMULL("v31", "v19", "v23") GEMMI8_A64_ADALP("sadalp", "vacc3x2", "v27") GEMMI8_A64_SMLAL2("v30", "v18", "v23") LA("q18", "2") \
  GEMMI8_A64_SMLAL2("v31", "v19", "v23") LA("q19", "3") LW("q23", "112") "add %[w], %[w], #64\n\t"
#define GEMMI8_A64_SMLAL_4X4_ASM(NAME)                                                  \
  __asm__ volatile(                                                                     \
      GEMMI8_A64_4X4_ZERO                                                               \
      "cbz %[iterations], .Lgemmi8_smlal_end%=\n\t"                                     \
      "movi v28.4s, #0\n\t" "movi v29.4s, #0\n\t" "movi v30.4s, #0\n\t"              \
      "movi v31.4s, #0\n\t"                                                           \
      GEMMI8_A64_4X4_FIRST                                                              \
      "b.eq .Lgemmi8_smlal_last%=\n\t"                                                  \
      GEMMI8_MCA_BEGIN_ASM(NAME)                                                        \
      ".Lgemmi8_smlal_loop%=:\n\t"                                                      \
      GEMMI8_A64_SMLAL_4X4_ITERATION(GEMMI8_A64_LDW, GEMMI8_A64_LDA, GEMMI8_A64_KADD)   \
      "subs %[iterations], %[iterations], #1\n\t"                                       \
      "b.ne .Lgemmi8_smlal_loop%=\n\t"                                                  \
      GEMMI8_MCA_END_ASM()                                                              \
      ".Lgemmi8_smlal_last%=:\n\t"                                                      \
      GEMMI8_A64_SMLAL_4X4_ITERATION(GEMMI8_A64_NO_LOAD, GEMMI8_A64_NO_LOAD, "")        \
      GEMMI8_A64_ADALP("sadalp", "vacc0x3", "v28") GEMMI8_A64_ADALP("sadalp", "vacc1x3", "v29") \
      GEMMI8_A64_ADALP("sadalp", "vacc2x3", "v30") GEMMI8_A64_ADALP("sadalp", "vacc3x3", "v31") \
      ".Lgemmi8_smlal_end%=:\n\t"                                                       \
      : GEMMI8_A64_4X4_OPERANDS)
#define GEMMI8_A64_SMLAL_4X4() GEMMI8_A64_SMLAL_4X4_ASM(GEMMI8_MCA_NAME_PAIRS("s32", "256"))

/* The 1- and 2-row loops (M = 1, 2) in assembly, 16 depths per iteration. Each
 * accumulator of the 4-row loop takes 2 of its 32 pairwise accumulates per iteration;
 * with one or two rows that chain would be the whole iteration, so the products of
 * depths 0-7 (UMULL) and 8-15 (UMULL2) go to separate accumulator sets, vacc<i>x<j>l
 * and vacc<i>x<j>h (8 for 1 row, 16 for 2), added at the end. Products go to v24..v31;
 * the multiplies of 8 products come first, then their 8 accumulates (an accumulate
 * then never waits on its multiply, and in-order cores that complete in order, such as
 * Cortex-A510, switch from the long accumulates back to the multiplies once or twice
 * per iteration only). va<i> = v16 + i, vb<j> = v20 + j, each reloaded for the next
 * iteration right after its last use (a with post-increment); the last iteration is
 * peeled so that nothing is read past the depth. */
#define GEMMI8_A64_MUL_PAIR(MUL, PL, PH, VA, VB)          \
  MUL " " PL ".8h, " VA ".8b, " VB ".8b\n\t"              \
  MUL "2 " PH ".8h, " VA ".16b, " VB ".16b\n\t"
#define GEMMI8_A64_ADALP_PAIR(ADALP, ACC, PL, PH) \
  GEMMI8_A64_ADALP(ADALP, ACC "l", PL) GEMMI8_A64_ADALP(ADALP, ACC "h", PH)
/* LW / LA load the next iteration's w / row I of a, or nothing (last iteration) */
#define GEMMI8_A64_LDA_POST(Q, I) "ldr " Q ", [%[a" I "]], #16\n\t"
#define GEMMI8_A64_NO_LOAD(Q, X) ""
#define GEMMI8_A64_SUBS "subs %[iterations], %[iterations], #1\n\t"
#define GEMMI8_A64_MULL_1X4_ITERATION(MUL, ADALP, LW, LA, SUBS)                   \
  GEMMI8_A64_MUL_PAIR(MUL, "v24", "v25", "v16", "v20") LW("q20", "64")             \
  "add %[w], %[w], #64\n\t"                                                        \
  GEMMI8_A64_MUL_PAIR(MUL, "v26", "v27", "v16", "v21") LW("q21", "16")             \
  GEMMI8_A64_MUL_PAIR(MUL, "v28", "v29", "v16", "v22") LW("q22", "32") SUBS        \
  GEMMI8_A64_MUL_PAIR(MUL, "v30", "v31", "v16", "v23") LA("q16", "0")              \
  LW("q23", "48")                                                                  \
  GEMMI8_A64_ADALP_PAIR(ADALP, "vacc0x0", "v24", "v25")                            \
  GEMMI8_A64_ADALP_PAIR(ADALP, "vacc0x1", "v26", "v27")                            \
  GEMMI8_A64_ADALP_PAIR(ADALP, "vacc0x2", "v28", "v29")                            \
  GEMMI8_A64_ADALP_PAIR(ADALP, "vacc0x3", "v30", "v31")
#define GEMMI8_A64_MULL_2X4_ITERATION(MUL, ADALP, LW, LA, SUBS)                   \
  GEMMI8_A64_MUL_PAIR(MUL, "v24", "v25", "v16", "v20")                             \
  GEMMI8_A64_MUL_PAIR(MUL, "v26", "v27", "v17", "v20") LW("q20", "64")             \
  "add %[w], %[w], #64\n\t"                                                        \
  GEMMI8_A64_MUL_PAIR(MUL, "v28", "v29", "v16", "v21")                             \
  GEMMI8_A64_MUL_PAIR(MUL, "v30", "v31", "v17", "v21") LW("q21", "16")             \
  GEMMI8_A64_ADALP_PAIR(ADALP, "vacc0x0", "v24", "v25")                            \
  GEMMI8_A64_ADALP_PAIR(ADALP, "vacc1x0", "v26", "v27")                            \
  GEMMI8_A64_ADALP_PAIR(ADALP, "vacc0x1", "v28", "v29")                            \
  GEMMI8_A64_ADALP_PAIR(ADALP, "vacc1x1", "v30", "v31")                            \
  GEMMI8_A64_MUL_PAIR(MUL, "v24", "v25", "v16", "v22")                             \
  GEMMI8_A64_MUL_PAIR(MUL, "v26", "v27", "v17", "v22") LW("q22", "32") SUBS        \
  GEMMI8_A64_MUL_PAIR(MUL, "v28", "v29", "v16", "v23") LA("q16", "0")              \
  GEMMI8_A64_MUL_PAIR(MUL, "v30", "v31", "v17", "v23") LA("q17", "1")              \
  LW("q23", "48")                                                                  \
  GEMMI8_A64_ADALP_PAIR(ADALP, "vacc0x2", "v24", "v25")                            \
  GEMMI8_A64_ADALP_PAIR(ADALP, "vacc1x2", "v26", "v27")                            \
  GEMMI8_A64_ADALP_PAIR(ADALP, "vacc0x3", "v28", "v29")                            \
  GEMMI8_A64_ADALP_PAIR(ADALP, "vacc1x3", "v30", "v31")
/* Accumulators = 0 (outputs only: 16 "+w" operands count twice, over the limit of
 * 30), then `iterations` (>= 1) times 16 depths. */
#define GEMMI8_A64_MULL_SMALL_ASM(ITERATION, ZERO, PROLOGUE, MUL, ADALP, NAME, OUTPUTS,   \
                                  INPUTS)                                                 \
  __asm__ volatile(                                                                       \
      ZERO                                                                                \
      PROLOGUE                                                                            \
      GEMMI8_A64_LDW("q20", "0") GEMMI8_A64_LDW("q21", "16")                              \
      GEMMI8_A64_LDW("q22", "32") GEMMI8_A64_LDW("q23", "48")                             \
      GEMMI8_A64_SUBS                                                                     \
      "b.eq .Lgemmi8_mull_last%=\n\t"                                                     \
      GEMMI8_MCA_BEGIN_ASM(NAME)                                                          \
      ".Lgemmi8_mull_loop%=:\n\t"                                                         \
      ITERATION(MUL, ADALP, GEMMI8_A64_LDW, GEMMI8_A64_LDA_POST, GEMMI8_A64_SUBS)         \
      "b.ne .Lgemmi8_mull_loop%=\n\t"                                                     \
      GEMMI8_MCA_END_ASM()                                                                \
      ".Lgemmi8_mull_last%=:\n\t"                                                         \
      ITERATION(MUL, ADALP, GEMMI8_A64_NO_LOAD, GEMMI8_A64_NO_LOAD, "")                   \
      : OUTPUTS(), [w] "+r"(wk), [iterations] "+r"(iterations)                            \
      : INPUTS()                                                                          \
      : "v16", "v17", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28",      \
        "v29", "v30", "v31", "cc", "memory")
#define GEMMI8_A64_ZERO(ACC) "movi %[" ACC "l].4s, #0\n\t" "movi %[" ACC "h].4s, #0\n\t"
#define GEMMI8_A64_MULL_1X4_ZERO                                                          \
  GEMMI8_A64_ZERO("vacc0x0") GEMMI8_A64_ZERO("vacc0x1") GEMMI8_A64_ZERO("vacc0x2")        \
  GEMMI8_A64_ZERO("vacc0x3")
#define GEMMI8_A64_MULL_2X4_ZERO                                                          \
  GEMMI8_A64_MULL_1X4_ZERO GEMMI8_A64_ZERO("vacc1x0") GEMMI8_A64_ZERO("vacc1x1")          \
  GEMMI8_A64_ZERO("vacc1x2") GEMMI8_A64_ZERO("vacc1x3")
#define GEMMI8_A64_MULL_1X4_OUTPUTS()                                                     \
  [vacc0x0l] "=w"(vsplit[0][0][0]), [vacc0x0h] "=w"(vsplit[0][0][1]),                     \
  [vacc0x1l] "=w"(vsplit[0][1][0]), [vacc0x1h] "=w"(vsplit[0][1][1]),                     \
  [vacc0x2l] "=w"(vsplit[0][2][0]), [vacc0x2h] "=w"(vsplit[0][2][1]),                     \
  [vacc0x3l] "=w"(vsplit[0][3][0]), [vacc0x3h] "=w"(vsplit[0][3][1]), [a0] "+r"(pa[0])
#define GEMMI8_A64_MULL_2X4_OUTPUTS()                                                     \
  GEMMI8_A64_MULL_1X4_OUTPUTS(),                                                          \
  [vacc1x0l] "=w"(vsplit[1][0][0]), [vacc1x0h] "=w"(vsplit[1][0][1]),                     \
  [vacc1x1l] "=w"(vsplit[1][1][0]), [vacc1x1h] "=w"(vsplit[1][1][1]),                     \
  [vacc1x2l] "=w"(vsplit[1][2][0]), [vacc1x2h] "=w"(vsplit[1][2][1]),                     \
  [vacc1x3l] "=w"(vsplit[1][3][0]), [vacc1x3h] "=w"(vsplit[1][3][1]), [a1] "+r"(pa[1])
#define GEMMI8_A64_MULL_NO_INPUTS()
#define GEMMI8_A64_MULL_SMALL(MR, MUL, ADALP, NAME)                                       \
  do {                                                                                    \
    if (MR == 1) {                                                                        \
      GEMMI8_A64_MULL_SMALL_ASM(GEMMI8_A64_MULL_1X4_ITERATION, GEMMI8_A64_MULL_1X4_ZERO,  \
                                GEMMI8_A64_LDA_POST("q16", "0"), MUL, ADALP, NAME,        \
                                GEMMI8_A64_MULL_1X4_OUTPUTS, GEMMI8_A64_MULL_NO_INPUTS);  \
    } else {                                                                              \
      GEMMI8_A64_MULL_SMALL_ASM(GEMMI8_A64_MULL_2X4_ITERATION, GEMMI8_A64_MULL_2X4_ZERO,  \
                                GEMMI8_A64_LDA_POST("q16", "0")                           \
                                    GEMMI8_A64_LDA_POST("q17", "1"),                      \
                                MUL, ADALP, NAME, GEMMI8_A64_MULL_2X4_OUTPUTS,            \
                                GEMMI8_A64_MULL_NO_INPUTS);                               \
    }                                                                                     \
  } while (0)

/* The qs8 1- and 2-row loops of pair-safe blocks: SMULL of depths 0-7, SMLAL2 of 8-15
 * into the same register, one SADALP; each weight register reloaded right after its
 * SMLAL2. The pair sums go to the first accumulator set (vacc<i>x<j>l) alone: one
 * accumulate per accumulator and iteration is no chain. */
#define GEMMI8_A64_SMLAL_1X4_ITERATION(MUL, ADALP, LW, LA, SUBS)                  \
  GEMMI8_A64_SMULL("v24", "v16", "v20") GEMMI8_A64_SMULL("v25", "v16", "v21")      \
  GEMMI8_A64_SMULL("v26", "v16", "v22") GEMMI8_A64_SMULL("v27", "v16", "v23")      \
  GEMMI8_A64_SMLAL2("v24", "v16", "v20") LW("q20", "64")                           \
  "add %[w], %[w], #64\n\t"                                                        \
  GEMMI8_A64_SMLAL2("v25", "v16", "v21") LW("q21", "16")                           \
  GEMMI8_A64_SMLAL2("v26", "v16", "v22") LW("q22", "32") SUBS                      \
  GEMMI8_A64_SMLAL2("v27", "v16", "v23") LA("q16", "0") LW("q23", "48")            \
  GEMMI8_A64_ADALP(ADALP, "vacc0x0l", "v24") GEMMI8_A64_ADALP(ADALP, "vacc0x1l", "v25") \
  GEMMI8_A64_ADALP(ADALP, "vacc0x2l", "v26") GEMMI8_A64_ADALP(ADALP, "vacc0x3l", "v27")
#define GEMMI8_A64_SMLAL_2X4_ITERATION(MUL, ADALP, LW, LA, SUBS)                  \
  GEMMI8_A64_SMULL("v24", "v16", "v20") GEMMI8_A64_SMULL("v25", "v17", "v20")      \
  GEMMI8_A64_SMULL("v26", "v16", "v21") GEMMI8_A64_SMULL("v27", "v17", "v21")      \
  GEMMI8_A64_SMLAL2("v24", "v16", "v20") GEMMI8_A64_SMLAL2("v25", "v17", "v20")    \
  LW("q20", "64") "add %[w], %[w], #64\n\t"                                        \
  GEMMI8_A64_SMLAL2("v26", "v16", "v21") GEMMI8_A64_SMLAL2("v27", "v17", "v21")    \
  LW("q21", "16")                                                                  \
  GEMMI8_A64_SMULL("v28", "v16", "v22") GEMMI8_A64_SMULL("v29", "v17", "v22")      \
  GEMMI8_A64_SMULL("v30", "v16", "v23") GEMMI8_A64_SMULL("v31", "v17", "v23")      \
  GEMMI8_A64_ADALP(ADALP, "vacc0x0l", "v24") GEMMI8_A64_ADALP(ADALP, "vacc1x0l", "v25") \
  GEMMI8_A64_ADALP(ADALP, "vacc0x1l", "v26") GEMMI8_A64_ADALP(ADALP, "vacc1x1l", "v27") \
  GEMMI8_A64_SMLAL2("v28", "v16", "v22") GEMMI8_A64_SMLAL2("v29", "v17", "v22")    \
  LW("q22", "32") SUBS                                                             \
  GEMMI8_A64_SMLAL2("v30", "v16", "v23") LA("q16", "0")                            \
  GEMMI8_A64_SMLAL2("v31", "v17", "v23") LA("q17", "1") LW("q23", "48")            \
  GEMMI8_A64_ADALP(ADALP, "vacc0x2l", "v28") GEMMI8_A64_ADALP(ADALP, "vacc1x2l", "v29") \
  GEMMI8_A64_ADALP(ADALP, "vacc0x3l", "v30") GEMMI8_A64_ADALP(ADALP, "vacc1x3l", "v31")
#define GEMMI8_A64_SMLAL_SMALL(MR, NAME)                                                  \
  do {                                                                                    \
    if (MR == 1) {                                                                        \
      GEMMI8_A64_MULL_SMALL_ASM(GEMMI8_A64_SMLAL_1X4_ITERATION, GEMMI8_A64_MULL_1X4_ZERO, \
                                GEMMI8_A64_LDA_POST("q16", "0"), "smull", "sadalp", NAME, \
                                GEMMI8_A64_MULL_1X4_OUTPUTS, GEMMI8_A64_MULL_NO_INPUTS);  \
    } else {                                                                              \
      GEMMI8_A64_MULL_SMALL_ASM(GEMMI8_A64_SMLAL_2X4_ITERATION, GEMMI8_A64_MULL_2X4_ZERO, \
                                GEMMI8_A64_LDA_POST("q16", "0")                           \
                                    GEMMI8_A64_LDA_POST("q17", "1"),                      \
                                "smull", "sadalp", NAME, GEMMI8_A64_MULL_2X4_OUTPUTS,     \
                                GEMMI8_A64_MULL_NO_INPUTS);                               \
    }                                                                                     \
  } while (0)
#define GEMMI8_A64_SMLAL_SMALL_OUT(MR, MACS) \
  GEMMI8_A64_SMLAL_SMALL(MR, GEMMI8_MCA_NAME_PAIRS("s32", MACS))

#define GEMMI8_A64_MULL_SMALL_OUT(MR, MUL, ADALP, TYPE) \
  GEMMI8_A64_MULL_SMALL(MR, MUL, ADALP, GEMMI8_MCA_NAME(TYPE, "s32"))

/* 1 if the qs8 block whose weights (4 columns, kp depths padded to 16) start at wk is
 * pair-safe: the packer's mark after the weights. */
static GEMMI8_ALWAYS_INLINE int gemmi8_a64_pairs_safe(const uint8_t* wk, size_t kp)
{
  uint32_t mark;
  memcpy(&mark, wk + gemmi8_round_up(kp, 16) * 4, sizeof(mark));
  return mark == GEMMI8_QBLOCK_PAIRS_SAFE;
}

/* kc depths of the rows ap[0..MR) in C (pairs: SMLAL2 on a pair-safe qs8 block): 16 at
 * a time, then the tail (full16: the 16
 * bytes ending at the tail's end belong to the row), into the partial sums; the
 * weights from wk on, padded to 16 depths. Returns the weights past the depths. */
static GEMMI8_ALWAYS_INLINE const uint8_t* gemmi8_a64_mull_depth_c(const size_t MR,
                                                                   const int is_signed,
                                                                   int pairs, size_t kc,
                                                                   int full16,
                                                                   const uint8_t** ap,
                                                                   const uint8_t* wk,
                                                                   int32x4_t vpart[][4])
{
  for (; kc >= 16; kc -= 16) {
    uint8x16_t va[16];
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      va[i] = vld1q_u8(ap[i]);
      ap[i] += 16;
    }
    GEMMI8_A64_MULL_STEP();
  }
  if (kc != 0) {
    uint8x16_t va[16];
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) va[i] = gemmi8_a64_load_tail(ap[i], kc, full16);
    GEMMI8_A64_MULL_STEP();
  }
  return wk;
}

static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_core_neon(const size_t MR,
                                                        const int is_signed, size_t mr, size_t k,
                                                        const void* a, size_t a_stride,
                                                        const void* w,
                                                        const struct gemmi8_qparams* p,
                                                        int32x4_t vacc[][4])
{
  const uint8_t* ap[16];
  gemmi8_a64_rows(MR, mr, a, a_stride, ap);
  const int32_t* bias = (const int32_t*) w;
  const int32_t* coef = bias + 4;
  const uint8_t* wk = (const uint8_t*) (is_signed ? coef : coef + 4);
  int32x4_t vpart[16][4];
  const int pairs = is_signed && gemmi8_a64_pairs_safe(wk, k);
  size_t kc = k;
  if (MR == 4) {
    size_t iterations = k / 16, koff = 0;
    if (pairs) {
      GEMMI8_A64_SMLAL_4X4();
    } else if (is_signed) {
      GEMMI8_A64_MULL_4X4("smull", "sadalp", "qs8");
    } else {
      GEMMI8_A64_MULL_4X4("umull", "uadalp", "qu8");
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < 4; i++) ap[i] += k - k % 16;
    kc = k % 16;
  } else {
    /* 1 or 2 rows */
    int32x4_t vsplit[2][4][2];
    const uint8_t* pa[2] = {ap[0], ap[MR - 1]};
    size_t iterations = k / 16;
    if (iterations != 0) {
      if (pairs && MR == 1) {
        GEMMI8_A64_SMLAL_SMALL_OUT(1, "64");
      } else if (pairs) {
        GEMMI8_A64_SMLAL_SMALL_OUT(2, "128");
      } else if (is_signed) {
        GEMMI8_A64_MULL_SMALL_OUT(MR, "smull", "sadalp", "qs8");
      } else {
        GEMMI8_A64_MULL_SMALL_OUT(MR, "umull", "uadalp", "qu8");
      }
    } else {
#pragma GCC unroll 2
      for (size_t i = 0; i < MR; i++) {
#pragma GCC unroll 4
        for (size_t j = 0; j < 4; j++) vsplit[i][j][0] = vsplit[i][j][1] = vdupq_n_s32(0);
      }
    }
#pragma GCC unroll 2
    for (size_t i = 0; i < MR; i++) {
      ap[i] += k - k % 16;
#pragma GCC unroll 4
      for (size_t j = 0; j < 4; j++) vpart[i][j] = vaddq_s32(vsplit[i][j][0], vsplit[i][j][1]);
    }
    kc = k % 16;
  }
  gemmi8_a64_mull_depth_c(MR, is_signed, pairs, kc, k >= 16, ap, wk, vpart);
  /* columns 0..3 of row i: pairwise sums of the partial sums, plus bias' */
  const int32x4_t vbias = vld1q_s32(bias);
#pragma GCC unroll 16
  for (size_t i = 0; i < MR; i++) {
    const int32x4_t v01 = vpaddq_s32(vpart[i][0], vpart[i][1]);
    const int32x4_t v23 = vpaddq_s32(vpart[i][2], vpart[i][3]);
    vacc[i][0] = vaddq_s32(vpaddq_s32(v01, v23), vbias);
  }
  if (!is_signed) gemmi8_a64_add_row_sums(MR, 1, mr, coef, p->row_sum, vacc);
}

/* The tile with A through ks taps of MR row pointers (igemm, convolution): the C depth
 * loop once per tap; the tap's weights padded to 16 depths. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qigemm_core_neon(const size_t MR, const int is_signed,
                                                         size_t mr, size_t kc, size_t ks,
                                                         const void* const* a, size_t a_offset,
                                                         const void* zero, const void* w,
                                                         const struct gemmi8_qparams* p,
                                                         int32x4_t vacc[][4])
{
  const int32_t* bias = (const int32_t*) w;
  const int32_t* coef = bias + 4;
  const uint8_t* wk = (const uint8_t*) (is_signed ? coef : coef + 4);
  int32x4_t vpart[16][4];
  const int pairs = is_signed && gemmi8_a64_pairs_safe(wk, ks * gemmi8_round_up(kc, 16));
#pragma GCC unroll 16
  for (size_t i = 0; i < MR; i++) {
#pragma GCC unroll 4
    for (size_t j = 0; j < 4; j++) vpart[i][j] = vdupq_n_s32(0);
  }
  for (size_t t = 0; t < ks; t++) {
    const uint8_t* ap[16];
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      const uint8_t* q = (const uint8_t*) a[t * MR + i];
      ap[i] = q == (const uint8_t*) zero ? q : q + a_offset;
    }
    wk = gemmi8_a64_mull_depth_c(MR, is_signed, pairs, kc, kc >= 16, ap, wk, vpart);
  }
  const int32x4_t vbias = vld1q_s32(bias);
#pragma GCC unroll 16
  for (size_t i = 0; i < MR; i++) {
    const int32x4_t v01 = vpaddq_s32(vpart[i][0], vpart[i][1]);
    const int32x4_t v23 = vpaddq_s32(vpart[i][2], vpart[i][3]);
    vacc[i][0] = vaddq_s32(vpaddq_s32(v01, v23), vbias);
  }
  if (!is_signed) gemmi8_a64_add_row_sums(MR, 1, mr, coef, p->row_sum, vacc);
}

/* The bodies of a tile, both types: is_signed (a value in the shared body, a constant
 * in the s32 kernels) picks the core, each type's compiled once, and the output stage
 * after it is one for both (entries: GEMMI8_A64_QIGEMM_ENTRY, GEMMI8_A64_QGEMM_ENTRY). */
#define GEMMI8_QIGEMM_NEON_BODY(body, MR)                                                   \
  static GEMMI8_ALWAYS_INLINE void body##_impl(GEMMI8_A64_QIGEMM_IMPL_ARGS)                 \
  {                                                                                         \
    int32x4_t vacc[MR][4];                                                                  \
    if (is_signed) {                                                                        \
      gemmi8_qigemm_core_neon(MR, 1, mr, kc, ks, a, a_offset, zero, w, params, vacc);       \
    } else {                                                                                \
      gemmi8_qigemm_core_neon(MR, 0, mr, kc, ks, a, a_offset, zero, w, params, vacc);       \
    }                                                                                       \
    gemmi8_a64_store(out, MR, 1, 4, is_signed, mr, nr, c, c_stride, params, vacc);          \
  }                                                                                         \
  GEMMI8_A64_QIGEMM_BODY(body)                                                              \
  GEMMI8_A64_QIGEMM_S32(body)

#define GEMMI8_QGEMM_NEON_BODY(body, MR)                                                    \
  static GEMMI8_ALWAYS_INLINE void body##_impl(GEMMI8_A64_QGEMM_IMPL_ARGS)                  \
  {                                                                                         \
    int32x4_t vacc[MR][4];                                                                  \
    if (is_signed) {                                                                        \
      gemmi8_qgemm_core_neon(MR, 1, mr, k, a, a_stride, w, params, vacc);                   \
    } else {                                                                                \
      gemmi8_qgemm_core_neon(MR, 0, mr, k, a, a_stride, w, params, vacc);                   \
    }                                                                                       \
    gemmi8_a64_store(out, MR, 1, 4, is_signed, mr, nr, c, c_stride, params, vacc);          \
  }                                                                                         \
  GEMMI8_A64_QGEMM_BODY(body)                                                               \
  GEMMI8_A64_QGEMM_S32(body)

#endif
