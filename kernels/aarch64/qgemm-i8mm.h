/*
 * ARMv8.6 int8 matrix multiply (SMMLA / UMMLA) qu8 / qs8 GEMM microkernel template:
 * 6 x 16, k groups of 8, and the 2 x 16 and 4 x 16 tiles for M <= 4 on the same
 * packing (their loop is below); the 6 x 16 tile also over packed panels of A (pgemm,
 * below), which the driver fills when a row tile meets several blocks.
 *
 * SMMLA / UMMLA: vacc (2 x 2 int32) += va (2 rows x 8 depths) . vb (2 columns x 8
 * depths)^T, 32 products per instruction. qs8 multiplies int8 by int8 (SMMLA), qu8 raw
 * uint8 by raw uint8 (UMMLA), so that
 *   acc = bias'[n] + sum_k a * w  (+ coef[n] * rowsum(a) for qu8, coef = -b_zp)
 * exactly modulo 2^32 (src/microkernel.h); qu8 takes the row sums from the driver
 * (params->row_sum, NULL when every coef is 0). Packed block: bias'[16], coef[16]
 * (qu8 only), [k/8][16][8] bytes: one vector is two columns' 8 depths, as SMMLA wants.
 *
 * a is read in place: 16 depths of rows 2r and 2r+1, interleaved by TRN1 / TRN2 of
 * 64-bit lanes, give the row-pair operands of depths 0-7 and 8-15. (LD2 of a 64-bit
 * lane pair does the same in two loads but chains them, 16 cycles of latency.)
 * Registers (asm loop): vacc<2r,2r+1>x<2q,2q+1> = vpart[r][q], 24 accumulators in the
 * layout [row 2r col 2q, row 2r col 2q+1, row 2r+1 col 2q, row 2r+1 col 2q+1]; v24..v29
 * the row pairs (depths 0-7 in v24, v26, v28; 8-15 in v25, v27, v29); v30, v31 the
 * weights, each reloaded right after its three uses. One iteration is 16 depths:
 * 6 + 16 loads, 6 TRN, 48 matrix multiplies. The accumulators are unzipped into
 * rows at the end (UZP1 / UZP2 of 64-bit lanes). Narrow 6-row tiles (nr <= 12) compute
 * only their column pairs in C. Rows past mr alias row mr - 1. The depth tail (k % 16) of
 * each row is loaded in bounds into a zero-padded buffer that the same assembly
 * multiplies (one or two k groups; the weights are zero-padded to 8 depths). The pgemm
 * loop reads the row-pair operands from the panel instead (no TRN: 54 vector
 * instructions per iteration become 48).
 *
 * The includer defines GEMMI8_MCA_NAME (q8-neon.h) before including this file.
 */
#ifndef GEMMI8_AARCH64_QGEMM_I8MM_H
#define GEMMI8_AARCH64_QGEMM_I8MM_H

#include "q8-neon.h"

#define GEMMI8_A64_SMMLA(acc, a, b) vmmlaq_s32(acc, a, b)
#define GEMMI8_A64_UMMLA(acc, a, b)                                                  \
  vreinterpretq_s32_u32(vmmlaq_u32(vreinterpretq_u32_s32(acc), vreinterpretq_u8_s8(a), \
                                   vreinterpretq_u8_s8(b)))

/* One k group of 8 (row pairs VA[r], weights at WG) for NQ column pairs, in C. */
#define GEMMI8_A64_MMLA_GROUP_C(VA, WG)                                              \
  do {                                                                               \
    _Pragma("GCC unroll 8") for (size_t q = 0; q < NQ; q++) {                        \
      const int8x16_t vb = vld1q_s8((WG) + 16 * q);                                  \
      _Pragma("GCC unroll 3") for (size_t r = 0; r < MR / 2; r++) {                  \
        vpart[r][q] = is_signed ? GEMMI8_A64_SMMLA(vpart[r][q], VA[r], vb)           \
                                : GEMMI8_A64_UMMLA(vpart[r][q], VA[r], vb);          \
      }                                                                              \
    }                                                                                \
  } while (0)

/* The 6 x 16 main loop in assembly; the row pointers, the weight pointer and the
 * count live in x9..x14, x15 and x8 (an asm statement has at most 30 operands and the
 * 24 accumulators take 24). */
#define GEMMI8_A64_MMLA(OP, ACC, VA, VB) OP " %[" ACC "].4s, " VA ".16b, " VB ".16b\n\t"
#define GEMMI8_A64_LDB(Q, OFFSET) "ldr " Q ", [x15, #" OFFSET "]\n\t"
/* rows R0, R1 (16 depths each, through the free weight registers v30, v31) to the
 * row-pair operands of depths 0-7 (D0) and 8-15 (D1): TRN1 / TRN2 of 64-bit lanes */
#define GEMMI8_A64_ROWPAIR(R0, R1, D0, D1)                              \
  "ldr q30, [" R0 "]\n\t" "ldr q31, [" R1 "]\n\t"                     \
  "trn1 " D0 ".2d, v30.2d, v31.2d\n\t" "trn2 " D1 ".2d, v30.2d, v31.2d\n\t"
/* the 48 matrix multiplies of 16 depths from the row pairs in v24..v29, the weights
 * through v30 / v31; ADD1..ADD3 advance the pointers of a on the way */
#define GEMMI8_A64_MMLA_6X16_MULS(OP, ADD1, ADD2, ADD3) \
  "ldr q30, [x15]\n\t" "ldr q31, [x15, #16]\n\t" \
  GEMMI8_A64_MMLA(OP, "vacc01x01", "v24", "v30") GEMMI8_A64_MMLA(OP, "vacc23x01", "v26", "v30") GEMMI8_A64_MMLA(OP, "vacc45x01", "v28", "v30") GEMMI8_A64_LDB("q30", "32") \
  GEMMI8_A64_MMLA(OP, "vacc01x23", "v24", "v31") GEMMI8_A64_MMLA(OP, "vacc23x23", "v26", "v31") GEMMI8_A64_MMLA(OP, "vacc45x23", "v28", "v31") GEMMI8_A64_LDB("q31", "48") \
  GEMMI8_A64_MMLA(OP, "vacc01x45", "v24", "v30") GEMMI8_A64_MMLA(OP, "vacc23x45", "v26", "v30") GEMMI8_A64_MMLA(OP, "vacc45x45", "v28", "v30") GEMMI8_A64_LDB("q30", "64") \
  GEMMI8_A64_MMLA(OP, "vacc01x67", "v24", "v31") GEMMI8_A64_MMLA(OP, "vacc23x67", "v26", "v31") GEMMI8_A64_MMLA(OP, "vacc45x67", "v28", "v31") GEMMI8_A64_LDB("q31", "80") \
  GEMMI8_A64_MMLA(OP, "vacc01x89", "v24", "v30") GEMMI8_A64_MMLA(OP, "vacc23x89", "v26", "v30") GEMMI8_A64_MMLA(OP, "vacc45x89", "v28", "v30") GEMMI8_A64_LDB("q30", "96") \
  GEMMI8_A64_MMLA(OP, "vacc01xAB", "v24", "v31") GEMMI8_A64_MMLA(OP, "vacc23xAB", "v26", "v31") GEMMI8_A64_MMLA(OP, "vacc45xAB", "v28", "v31") GEMMI8_A64_LDB("q31", "112") \
  GEMMI8_A64_MMLA(OP, "vacc01xCD", "v24", "v30") GEMMI8_A64_MMLA(OP, "vacc23xCD", "v26", "v30") GEMMI8_A64_MMLA(OP, "vacc45xCD", "v28", "v30") GEMMI8_A64_LDB("q30", "128") \
  GEMMI8_A64_MMLA(OP, "vacc01xEF", "v24", "v31") GEMMI8_A64_MMLA(OP, "vacc23xEF", "v26", "v31") GEMMI8_A64_MMLA(OP, "vacc45xEF", "v28", "v31") GEMMI8_A64_LDB("q31", "144") \
  GEMMI8_A64_MMLA(OP, "vacc01x01", "v25", "v30") GEMMI8_A64_MMLA(OP, "vacc23x01", "v27", "v30") GEMMI8_A64_MMLA(OP, "vacc45x01", "v29", "v30") GEMMI8_A64_LDB("q30", "160") \
  GEMMI8_A64_MMLA(OP, "vacc01x23", "v25", "v31") GEMMI8_A64_MMLA(OP, "vacc23x23", "v27", "v31") GEMMI8_A64_MMLA(OP, "vacc45x23", "v29", "v31") GEMMI8_A64_LDB("q31", "176") \
  GEMMI8_A64_MMLA(OP, "vacc01x45", "v25", "v30") GEMMI8_A64_MMLA(OP, "vacc23x45", "v27", "v30") GEMMI8_A64_MMLA(OP, "vacc45x45", "v29", "v30") GEMMI8_A64_LDB("q30", "192") \
  GEMMI8_A64_MMLA(OP, "vacc01x67", "v25", "v31") GEMMI8_A64_MMLA(OP, "vacc23x67", "v27", "v31") GEMMI8_A64_MMLA(OP, "vacc45x67", "v29", "v31") GEMMI8_A64_LDB("q31", "208") ADD1 \
  GEMMI8_A64_MMLA(OP, "vacc01x89", "v25", "v30") GEMMI8_A64_MMLA(OP, "vacc23x89", "v27", "v30") GEMMI8_A64_MMLA(OP, "vacc45x89", "v29", "v30") GEMMI8_A64_LDB("q30", "224") \
  GEMMI8_A64_MMLA(OP, "vacc01xAB", "v25", "v31") GEMMI8_A64_MMLA(OP, "vacc23xAB", "v27", "v31") GEMMI8_A64_MMLA(OP, "vacc45xAB", "v29", "v31") GEMMI8_A64_LDB("q31", "240") ADD2 \
  GEMMI8_A64_MMLA(OP, "vacc01xCD", "v25", "v30") GEMMI8_A64_MMLA(OP, "vacc23xCD", "v27", "v30") GEMMI8_A64_MMLA(OP, "vacc45xCD", "v29", "v30") \
  GEMMI8_A64_MMLA(OP, "vacc01xEF", "v25", "v31") GEMMI8_A64_MMLA(OP, "vacc23xEF", "v27", "v31") GEMMI8_A64_MMLA(OP, "vacc45xEF", "v29", "v31") ADD3 \
  "add x15, x15, #256\n\t"
#define GEMMI8_A64_MMLA_6X16_ITERATION(OP) \
  GEMMI8_A64_ROWPAIR("x9", "x10", "v24", "v25") \
  GEMMI8_A64_ROWPAIR("x11", "x12", "v26", "v27") \
  GEMMI8_A64_ROWPAIR("x13", "x14", "v28", "v29") \
  GEMMI8_A64_MMLA_6X16_MULS(OP, "add x9, x9, #16\n\t" "add x10, x10, #16\n\t", \
                            "add x11, x11, #16\n\t" "add x12, x12, #16\n\t", \
                            "add x13, x13, #16\n\t" "add x14, x14, #16\n\t")
/* the depth tail: 1..15 depths of the six rows, zero-padded in a buffer, then one
 * (groups = 1) or two k groups of 8 */
#define GEMMI8_A64_TAILPAIR(O0, O1, D0, D1)                                        \
  "ldr q30, [%[tail], #" O0 "]\n\t" "ldr q31, [%[tail], #" O1 "]\n\t"             \
  "trn1 " D0 ".2d, v30.2d, v31.2d\n\t" "trn2 " D1 ".2d, v30.2d, v31.2d\n\t"
#define GEMMI8_A64_MMLA_6X16_GROUP0(OP) \
  GEMMI8_A64_LDB("q30", "0") GEMMI8_A64_MMLA(OP, "vacc01x01", "v24", "v30") GEMMI8_A64_MMLA(OP, "vacc23x01", "v26", "v30") GEMMI8_A64_MMLA(OP, "vacc45x01", "v28", "v30") \
  GEMMI8_A64_LDB("q31", "16") GEMMI8_A64_MMLA(OP, "vacc01x23", "v24", "v31") GEMMI8_A64_MMLA(OP, "vacc23x23", "v26", "v31") GEMMI8_A64_MMLA(OP, "vacc45x23", "v28", "v31") \
  GEMMI8_A64_LDB("q30", "32") GEMMI8_A64_MMLA(OP, "vacc01x45", "v24", "v30") GEMMI8_A64_MMLA(OP, "vacc23x45", "v26", "v30") GEMMI8_A64_MMLA(OP, "vacc45x45", "v28", "v30") \
  GEMMI8_A64_LDB("q31", "48") GEMMI8_A64_MMLA(OP, "vacc01x67", "v24", "v31") GEMMI8_A64_MMLA(OP, "vacc23x67", "v26", "v31") GEMMI8_A64_MMLA(OP, "vacc45x67", "v28", "v31") \
  GEMMI8_A64_LDB("q30", "64") GEMMI8_A64_MMLA(OP, "vacc01x89", "v24", "v30") GEMMI8_A64_MMLA(OP, "vacc23x89", "v26", "v30") GEMMI8_A64_MMLA(OP, "vacc45x89", "v28", "v30") \
  GEMMI8_A64_LDB("q31", "80") GEMMI8_A64_MMLA(OP, "vacc01xAB", "v24", "v31") GEMMI8_A64_MMLA(OP, "vacc23xAB", "v26", "v31") GEMMI8_A64_MMLA(OP, "vacc45xAB", "v28", "v31") \
  GEMMI8_A64_LDB("q30", "96") GEMMI8_A64_MMLA(OP, "vacc01xCD", "v24", "v30") GEMMI8_A64_MMLA(OP, "vacc23xCD", "v26", "v30") GEMMI8_A64_MMLA(OP, "vacc45xCD", "v28", "v30") \
  GEMMI8_A64_LDB("q31", "112") GEMMI8_A64_MMLA(OP, "vacc01xEF", "v24", "v31") GEMMI8_A64_MMLA(OP, "vacc23xEF", "v26", "v31") GEMMI8_A64_MMLA(OP, "vacc45xEF", "v28", "v31")
#define GEMMI8_A64_MMLA_6X16_GROUP1(OP) \
  GEMMI8_A64_LDB("q30", "128") GEMMI8_A64_MMLA(OP, "vacc01x01", "v25", "v30") GEMMI8_A64_MMLA(OP, "vacc23x01", "v27", "v30") GEMMI8_A64_MMLA(OP, "vacc45x01", "v29", "v30") \
  GEMMI8_A64_LDB("q31", "144") GEMMI8_A64_MMLA(OP, "vacc01x23", "v25", "v31") GEMMI8_A64_MMLA(OP, "vacc23x23", "v27", "v31") GEMMI8_A64_MMLA(OP, "vacc45x23", "v29", "v31") \
  GEMMI8_A64_LDB("q30", "160") GEMMI8_A64_MMLA(OP, "vacc01x45", "v25", "v30") GEMMI8_A64_MMLA(OP, "vacc23x45", "v27", "v30") GEMMI8_A64_MMLA(OP, "vacc45x45", "v29", "v30") \
  GEMMI8_A64_LDB("q31", "176") GEMMI8_A64_MMLA(OP, "vacc01x67", "v25", "v31") GEMMI8_A64_MMLA(OP, "vacc23x67", "v27", "v31") GEMMI8_A64_MMLA(OP, "vacc45x67", "v29", "v31") \
  GEMMI8_A64_LDB("q30", "192") GEMMI8_A64_MMLA(OP, "vacc01x89", "v25", "v30") GEMMI8_A64_MMLA(OP, "vacc23x89", "v27", "v30") GEMMI8_A64_MMLA(OP, "vacc45x89", "v29", "v30") \
  GEMMI8_A64_LDB("q31", "208") GEMMI8_A64_MMLA(OP, "vacc01xAB", "v25", "v31") GEMMI8_A64_MMLA(OP, "vacc23xAB", "v27", "v31") GEMMI8_A64_MMLA(OP, "vacc45xAB", "v29", "v31") \
  GEMMI8_A64_LDB("q30", "224") GEMMI8_A64_MMLA(OP, "vacc01xCD", "v25", "v30") GEMMI8_A64_MMLA(OP, "vacc23xCD", "v27", "v30") GEMMI8_A64_MMLA(OP, "vacc45xCD", "v29", "v30") \
  GEMMI8_A64_LDB("q31", "240") GEMMI8_A64_MMLA(OP, "vacc01xEF", "v25", "v31") GEMMI8_A64_MMLA(OP, "vacc23xEF", "v27", "v31") GEMMI8_A64_MMLA(OP, "vacc45xEF", "v29", "v31")
#define GEMMI8_A64_MMLA_6X16_TAIL(OP) \
  GEMMI8_A64_TAILPAIR("0", "16", "v24", "v25") \
  GEMMI8_A64_TAILPAIR("32", "48", "v26", "v27") \
  GEMMI8_A64_TAILPAIR("64", "80", "v28", "v29") \
  GEMMI8_A64_MMLA_6X16_GROUP0(OP) \
  "cmp %[groups], #1\n\t" "b.eq .Lgemmi8_mmla_end%=\n\t" \
  GEMMI8_A64_MMLA_6X16_GROUP1(OP)
/* the 24 accumulators: zeroed, and the asm outputs */
#define GEMMI8_A64_MMLA_6X16_ZERO \
  "movi %[vacc01x01].4s, #0\n\t" "movi %[vacc01x23].4s, #0\n\t" "movi %[vacc01x45].4s, #0\n\t" \
  "movi %[vacc01x67].4s, #0\n\t" "movi %[vacc01x89].4s, #0\n\t" "movi %[vacc01xAB].4s, #0\n\t" \
  "movi %[vacc01xCD].4s, #0\n\t" "movi %[vacc01xEF].4s, #0\n\t" "movi %[vacc23x01].4s, #0\n\t" \
  "movi %[vacc23x23].4s, #0\n\t" "movi %[vacc23x45].4s, #0\n\t" "movi %[vacc23x67].4s, #0\n\t" \
  "movi %[vacc23x89].4s, #0\n\t" "movi %[vacc23xAB].4s, #0\n\t" "movi %[vacc23xCD].4s, #0\n\t" \
  "movi %[vacc23xEF].4s, #0\n\t" "movi %[vacc45x01].4s, #0\n\t" "movi %[vacc45x23].4s, #0\n\t" \
  "movi %[vacc45x45].4s, #0\n\t" "movi %[vacc45x67].4s, #0\n\t" "movi %[vacc45x89].4s, #0\n\t" \
  "movi %[vacc45xAB].4s, #0\n\t" "movi %[vacc45xCD].4s, #0\n\t" "movi %[vacc45xEF].4s, #0\n\t"
#define GEMMI8_A64_MMLA_6X16_OUTPUTS \
  [vacc01x01] "=w"(vpart[0][0]), [vacc01x23] "=w"(vpart[0][1]), \
  [vacc01x45] "=w"(vpart[0][2]), [vacc01x67] "=w"(vpart[0][3]), \
  [vacc01x89] "=w"(vpart[0][4]), [vacc01xAB] "=w"(vpart[0][5]), \
  [vacc01xCD] "=w"(vpart[0][6]), [vacc01xEF] "=w"(vpart[0][7]), \
  [vacc23x01] "=w"(vpart[1][0]), [vacc23x23] "=w"(vpart[1][1]), \
  [vacc23x45] "=w"(vpart[1][2]), [vacc23x67] "=w"(vpart[1][3]), \
  [vacc23x89] "=w"(vpart[1][4]), [vacc23xAB] "=w"(vpart[1][5]), \
  [vacc23xCD] "=w"(vpart[1][6]), [vacc23xEF] "=w"(vpart[1][7]), \
  [vacc45x01] "=w"(vpart[2][0]), [vacc45x23] "=w"(vpart[2][1]), \
  [vacc45x45] "=w"(vpart[2][2]), [vacc45x67] "=w"(vpart[2][3]), \
  [vacc45x89] "=w"(vpart[2][4]), [vacc45xAB] "=w"(vpart[2][5]), \
  [vacc45xCD] "=w"(vpart[2][6]), [vacc45xEF] "=w"(vpart[2][7])
#define GEMMI8_A64_MMLA_6X16_ASM(OP, NAME)                                               \
  __asm__ volatile(                                                                       \
      GEMMI8_A64_MMLA_6X16_ZERO                                                           \
      "ldp x9, x10, [%[ap]]\n\t"                                                          \
      "ldp x11, x12, [%[ap], #16]\n\t"                                                    \
      "ldp x13, x14, [%[ap], #32]\n\t"                                                    \
      "mov x15, %[w]\n\t"                                                                 \
      "mov x8, %[iterations]\n\t"                                                         \
      "cbz x8, .Lgemmi8_mmla_tail%=\n\t"                                                  \
      GEMMI8_MCA_BEGIN_ASM(NAME)                                                          \
      ".Lgemmi8_mmla_loop%=:\n\t"                                                         \
      GEMMI8_A64_MMLA_6X16_ITERATION(OP)                                                  \
      "subs x8, x8, #1\n\t"                                                               \
      "b.ne .Lgemmi8_mmla_loop%=\n\t"                                                     \
      GEMMI8_MCA_END_ASM()                                                                \
      ".Lgemmi8_mmla_tail%=:\n\t"                                                         \
      "cbz %[groups], .Lgemmi8_mmla_end%=\n\t"                                            \
      GEMMI8_A64_MMLA_6X16_TAIL(OP)                                                       \
      ".Lgemmi8_mmla_end%=:\n\t"                                                          \
      : GEMMI8_A64_MMLA_6X16_OUTPUTS                                                      \
      : [ap] "r"(ap), [w] "r"(wk), [iterations] "r"(iterations), [tail] "r"(tail),       \
        [groups] "r"(groups)                                                              \
      : "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "v24", "v25", "v26", "v27",  \
        "v28", "v29", "v30", "v31", "cc", "memory")
#define GEMMI8_A64_MMLA_6X16(OP, TYPE) GEMMI8_A64_MMLA_6X16_ASM(OP, GEMMI8_MCA_NAME(TYPE, "s32"))

/* The 6 x 16 loop over a packed panel of a (gemmi8_x8_packa_6c8__neon): the three
 * row-pair operands of 16 depths are 96 consecutive bytes, two LDP and no TRN; the
 * panel's depth is padded to 16 with zeros, the weights' to 8 only, so a last half
 * group (groups = 1) multiplies the low halves alone. Registers as in the loop above;
 * x9 walks the panel. */
#define GEMMI8_A64_PMMLA_6X16_ITERATION(OP) \
  "ldp q24, q25, [x9]\n\t" "ldp q26, q27, [x9, #32]\n\t" "ldp q28, q29, [x9, #64]\n\t" \
  GEMMI8_A64_MMLA_6X16_MULS(OP, "", "", "add x9, x9, #96\n\t")
#define GEMMI8_A64_PMMLA_6X16_GROUP(OP) \
  "ldr q24, [x9]\n\t" "ldr q26, [x9, #32]\n\t" "ldr q28, [x9, #64]\n\t" \
  GEMMI8_A64_MMLA_6X16_GROUP0(OP)
#define GEMMI8_A64_PMMLA_6X16_ASM(OP, NAME)                                               \
  __asm__ volatile(                                                                       \
      GEMMI8_A64_MMLA_6X16_ZERO                                                           \
      "mov x9, %[panel]\n\t"                                                              \
      "mov x15, %[w]\n\t"                                                                 \
      "mov x8, %[iterations]\n\t"                                                         \
      "cbz x8, .Lgemmi8_pmmla_tail%=\n\t"                                                  \
      GEMMI8_MCA_BEGIN_ASM(NAME)                                                          \
      ".Lgemmi8_pmmla_loop%=:\n\t"                                                         \
      GEMMI8_A64_PMMLA_6X16_ITERATION(OP)                                                  \
      "subs x8, x8, #1\n\t"                                                               \
      "b.ne .Lgemmi8_pmmla_loop%=\n\t"                                                     \
      GEMMI8_MCA_END_ASM()                                                                \
      ".Lgemmi8_pmmla_tail%=:\n\t"                                                         \
      "cbz %[groups], .Lgemmi8_pmmla_end%=\n\t"                                            \
      GEMMI8_A64_PMMLA_6X16_GROUP(OP)                                                     \
      ".Lgemmi8_pmmla_end%=:\n\t"                                                          \
      : GEMMI8_A64_MMLA_6X16_OUTPUTS                                                      \
      : [panel] "r"(panel), [w] "r"(wk), [iterations] "r"(iterations), [groups] "r"(groups) \
      : "x8", "x9", "x15", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31", "cc",  \
        "memory")
#define GEMMI8_A64_PMMLA_6X16(OP, TYPE) \
  GEMMI8_A64_PMMLA_6X16_ASM(OP, GEMMI8_MCA_NAME(TYPE, "s32"))

/* The 2- and 4-row tiles (M <= 4) in assembly, 16 depths per iteration. A row pair
 * (16 depths each) is interleaved by TRN1 / TRN2 into v18 / v19 (rows 0-1, depths 0-7
 * / 8-15) and v30 / v31 (rows 2-3); right after, the raw rows of the next iteration are
 * loaded into v16, v17 (v28, v29). The weights go by blocks of 4 column pairs (block b:
 * half b / 2 of the depths, pairs 4(b % 2)..+3) into v20..v23 and v24..v27 in turn, two
 * LDP per block, each block's loads before the matrix multiplies of the block before
 * it (in-order cores then never wait on a load, and those that complete in order,
 * Cortex-A510, switch from multiplies to loads four times an iteration). 2 rows: the
 * halves go to separate accumulator sets vacc<h>x<q> (16 accumulators, one multiply
 * each per iteration, summed at the end), so that no chain of two waits on the
 * instruction's latency; 4 rows: vacc<r>x<q> for row pair r, two each. a is addressed
 * by one offset register; the last iteration is peeled so that nothing is read past
 * the depth. One iteration: 2 (4) + 8 loads, 2 (4) TRN, 16 (32) matrix multiplies. */
#define GEMMI8_A64_LDPB(Q0, Q1, OFFSET) "ldp " Q0 ", " Q1 ", [%[w], #" OFFSET "]\n\t"
#define GEMMI8_A64_MMLA_NO_LOAD(Q0, Q1, OFFSET) ""
#define GEMMI8_A64_MMLA_END "add %[koff], %[koff], #16\n\t" "subs %[iterations], %[iterations], #1\n\t"
#define GEMMI8_A64_LDA_OFF(Q, I) "ldr " Q ", [%[a" I "], %[koff]]\n\t"
/* one iteration: LN loads the next iteration's first block, LA its rows of a, END
 * moves the offset of a and counts */
#define GEMMI8_A64_MMLA_2X16_ITERATION(OP, LN, LA, END)                                   \
  "trn1 v18.2d, v16.2d, v17.2d\n\t" "trn2 v19.2d, v16.2d, v17.2d\n\t"                     \
  LA                                                                                      \
  GEMMI8_A64_LDPB("q24", "q25", "64") GEMMI8_A64_LDPB("q26", "q27", "96")                 \
  GEMMI8_A64_MMLA(OP, "vacc0x0", "v18", "v20")                                            \
  GEMMI8_A64_MMLA(OP, "vacc0x1", "v18", "v21")                                            \
  GEMMI8_A64_MMLA(OP, "vacc0x2", "v18", "v22")                                            \
  GEMMI8_A64_MMLA(OP, "vacc0x3", "v18", "v23")                                            \
  GEMMI8_A64_LDPB("q20", "q21", "128") GEMMI8_A64_LDPB("q22", "q23", "160")               \
  GEMMI8_A64_MMLA(OP, "vacc0x4", "v18", "v24")                                            \
  GEMMI8_A64_MMLA(OP, "vacc0x5", "v18", "v25")                                            \
  GEMMI8_A64_MMLA(OP, "vacc0x6", "v18", "v26")                                            \
  GEMMI8_A64_MMLA(OP, "vacc0x7", "v18", "v27")                                            \
  GEMMI8_A64_LDPB("q24", "q25", "192") GEMMI8_A64_LDPB("q26", "q27", "224")               \
  GEMMI8_A64_MMLA(OP, "vacc1x0", "v19", "v20")                                            \
  GEMMI8_A64_MMLA(OP, "vacc1x1", "v19", "v21")                                            \
  GEMMI8_A64_MMLA(OP, "vacc1x2", "v19", "v22")                                            \
  GEMMI8_A64_MMLA(OP, "vacc1x3", "v19", "v23")                                            \
  LN("q20", "q21", "256") LN("q22", "q23", "288")                                         \
  GEMMI8_A64_MMLA(OP, "vacc1x4", "v19", "v24")                                            \
  GEMMI8_A64_MMLA(OP, "vacc1x5", "v19", "v25")                                            \
  GEMMI8_A64_MMLA(OP, "vacc1x6", "v19", "v26")                                            \
  GEMMI8_A64_MMLA(OP, "vacc1x7", "v19", "v27")                                            \
  "add %[w], %[w], #256\n\t" END
#define GEMMI8_A64_MMLA_4X16_ITERATION(OP, LN, LA, END)                                     \
  "trn1 v18.2d, v16.2d, v17.2d\n\t" "trn2 v19.2d, v16.2d, v17.2d\n\t"                       \
  "trn1 v30.2d, v28.2d, v29.2d\n\t" "trn2 v31.2d, v28.2d, v29.2d\n\t"                       \
  LA                                                                                        \
  GEMMI8_A64_LDPB("q24", "q25", "64") GEMMI8_A64_LDPB("q26", "q27", "96")                   \
  GEMMI8_A64_MMLA(OP, "vacc0x0", "v18", "v20") GEMMI8_A64_MMLA(OP, "vacc1x0", "v30", "v20") \
  GEMMI8_A64_MMLA(OP, "vacc0x1", "v18", "v21") GEMMI8_A64_MMLA(OP, "vacc1x1", "v30", "v21") \
  GEMMI8_A64_MMLA(OP, "vacc0x2", "v18", "v22") GEMMI8_A64_MMLA(OP, "vacc1x2", "v30", "v22") \
  GEMMI8_A64_MMLA(OP, "vacc0x3", "v18", "v23") GEMMI8_A64_MMLA(OP, "vacc1x3", "v30", "v23") \
  GEMMI8_A64_LDPB("q20", "q21", "128") GEMMI8_A64_LDPB("q22", "q23", "160")                 \
  GEMMI8_A64_MMLA(OP, "vacc0x4", "v18", "v24") GEMMI8_A64_MMLA(OP, "vacc1x4", "v30", "v24") \
  GEMMI8_A64_MMLA(OP, "vacc0x5", "v18", "v25") GEMMI8_A64_MMLA(OP, "vacc1x5", "v30", "v25") \
  GEMMI8_A64_MMLA(OP, "vacc0x6", "v18", "v26") GEMMI8_A64_MMLA(OP, "vacc1x6", "v30", "v26") \
  GEMMI8_A64_MMLA(OP, "vacc0x7", "v18", "v27") GEMMI8_A64_MMLA(OP, "vacc1x7", "v30", "v27") \
  GEMMI8_A64_LDPB("q24", "q25", "192") GEMMI8_A64_LDPB("q26", "q27", "224")                 \
  GEMMI8_A64_MMLA(OP, "vacc0x0", "v19", "v20") GEMMI8_A64_MMLA(OP, "vacc1x0", "v31", "v20") \
  GEMMI8_A64_MMLA(OP, "vacc0x1", "v19", "v21") GEMMI8_A64_MMLA(OP, "vacc1x1", "v31", "v21") \
  GEMMI8_A64_MMLA(OP, "vacc0x2", "v19", "v22") GEMMI8_A64_MMLA(OP, "vacc1x2", "v31", "v22") \
  GEMMI8_A64_MMLA(OP, "vacc0x3", "v19", "v23") GEMMI8_A64_MMLA(OP, "vacc1x3", "v31", "v23") \
  LN("q20", "q21", "256") LN("q22", "q23", "288")                                           \
  GEMMI8_A64_MMLA(OP, "vacc0x4", "v19", "v24") GEMMI8_A64_MMLA(OP, "vacc1x4", "v31", "v24") \
  GEMMI8_A64_MMLA(OP, "vacc0x5", "v19", "v25") GEMMI8_A64_MMLA(OP, "vacc1x5", "v31", "v25") \
  GEMMI8_A64_MMLA(OP, "vacc0x6", "v19", "v26") GEMMI8_A64_MMLA(OP, "vacc1x6", "v31", "v26") \
  GEMMI8_A64_MMLA(OP, "vacc0x7", "v19", "v27") GEMMI8_A64_MMLA(OP, "vacc1x7", "v31", "v27") \
  "add %[w], %[w], #256\n\t" END
/* Accumulators = 0 (outputs only: 16 "+w" operands would count twice), then `count`
 * (>= 1) times 16 depths. */
#define GEMMI8_A64_MMLA_SMALL_ASM(ITERATION, PROLOGUE, LOAD_A, OP, NAME, OUTPUTS, INPUTS)    \
  __asm__ volatile(                                                                         \
      GEMMI8_A64_MMLA_ZERO("0") GEMMI8_A64_MMLA_ZERO("1")                                   \
      PROLOGUE                                                                              \
      GEMMI8_A64_LDPB("q20", "q21", "0") GEMMI8_A64_LDPB("q22", "q23", "32")                \
      "add %[koff], %[koff], #16\n\t"                                                       \
      "subs %[iterations], %[iterations], #1\n\t"                                           \
      "b.eq .Lgemmi8_mmla_last%=\n\t"                                                       \
      GEMMI8_MCA_BEGIN_ASM(NAME)                                                            \
      ".Lgemmi8_mmla_loop%=:\n\t"                                                           \
      ITERATION(OP, GEMMI8_A64_LDPB, LOAD_A, GEMMI8_A64_MMLA_END)                           \
      "b.ne .Lgemmi8_mmla_loop%=\n\t"                                                       \
      GEMMI8_MCA_END_ASM()                                                                  \
      ".Lgemmi8_mmla_last%=:\n\t"                                                           \
      ITERATION(OP, GEMMI8_A64_MMLA_NO_LOAD, "", "")                                        \
      : OUTPUTS(), [w] "+r"(wk), [iterations] "+r"(count), [koff] "+r"(koff)                \
      : INPUTS()                                                                            \
      : "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", \
        "v28", "v29", "v30", "v31", "cc", "memory")
#define GEMMI8_A64_MMLA_ZERO(R)                                                             \
  "movi %[vacc" R "x0].4s, #0\n\t" "movi %[vacc" R "x1].4s, #0\n\t"                         \
  "movi %[vacc" R "x2].4s, #0\n\t" "movi %[vacc" R "x3].4s, #0\n\t"                         \
  "movi %[vacc" R "x4].4s, #0\n\t" "movi %[vacc" R "x5].4s, #0\n\t"                         \
  "movi %[vacc" R "x6].4s, #0\n\t" "movi %[vacc" R "x7].4s, #0\n\t"
#define GEMMI8_A64_MMLA_OUTPUT_SET(R)                                                       \
  [vacc##R##x0] "=w"(vset[R][0]), [vacc##R##x1] "=w"(vset[R][1]),                           \
  [vacc##R##x2] "=w"(vset[R][2]), [vacc##R##x3] "=w"(vset[R][3]),                           \
  [vacc##R##x4] "=w"(vset[R][4]), [vacc##R##x5] "=w"(vset[R][5]),                           \
  [vacc##R##x6] "=w"(vset[R][6]), [vacc##R##x7] "=w"(vset[R][7])
#define GEMMI8_A64_MMLA_OUTPUTS() GEMMI8_A64_MMLA_OUTPUT_SET(0), GEMMI8_A64_MMLA_OUTPUT_SET(1)
#define GEMMI8_A64_MMLA_2X16_INPUTS() [a0] "r"(ap[0]), [a1] "r"(ap[1])
#define GEMMI8_A64_MMLA_4X16_INPUTS() GEMMI8_A64_MMLA_2X16_INPUTS(), [a2] "r"(ap[2]), [a3] "r"(ap[3])
#define GEMMI8_A64_MMLA_SMALL_NAMED(MR, OP, NAME)                                           \
  do {                                                                                      \
    if (MR == 2) {                                                                          \
      GEMMI8_A64_MMLA_SMALL_ASM(                                                            \
          GEMMI8_A64_MMLA_2X16_ITERATION,                                                   \
          GEMMI8_A64_LDA_OFF("q16", "0") GEMMI8_A64_LDA_OFF("q17", "1"),                    \
          GEMMI8_A64_LDA_OFF("q16", "0") GEMMI8_A64_LDA_OFF("q17", "1"), OP, NAME,          \
          GEMMI8_A64_MMLA_OUTPUTS, GEMMI8_A64_MMLA_2X16_INPUTS);                            \
    } else {                                                                                \
      GEMMI8_A64_MMLA_SMALL_ASM(                                                            \
          GEMMI8_A64_MMLA_4X16_ITERATION,                                                   \
          GEMMI8_A64_LDA_OFF("q16", "0") GEMMI8_A64_LDA_OFF("q17", "1")                     \
              GEMMI8_A64_LDA_OFF("q28", "2") GEMMI8_A64_LDA_OFF("q29", "3"),                \
          GEMMI8_A64_LDA_OFF("q16", "0") GEMMI8_A64_LDA_OFF("q17", "1")                     \
              GEMMI8_A64_LDA_OFF("q28", "2") GEMMI8_A64_LDA_OFF("q29", "3"),                \
          OP, NAME, GEMMI8_A64_MMLA_OUTPUTS, GEMMI8_A64_MMLA_4X16_INPUTS);                  \
    }                                                                                       \
  } while (0)
#define GEMMI8_A64_MMLA_SMALL(MR, OP, TYPE) \
  GEMMI8_A64_MMLA_SMALL_NAMED(MR, OP, GEMMI8_MCA_NAME(TYPE, "s32"))

/* 16 depths of the rows ap[0..MR) at offset `at`, in C: row pairs by TRN1 / TRN2 of
 * 64-bit lanes, two k groups of 8. Returns the weights past them. */
static GEMMI8_ALWAYS_INLINE const int8_t* gemmi8_a64_mmla_16_c(const size_t MR, const size_t NQ,
                                                               const int is_signed,
                                                               const uint8_t* const* ap,
                                                               size_t at, const int8_t* wk,
                                                               int32x4_t vpart[][8])
{
  int8x16_t vrow[6], va0[3], va1[3];
#pragma GCC unroll 6
  for (size_t i = 0; i < MR; i++) vrow[i] = vld1q_s8((const int8_t*) ap[i] + at);
#pragma GCC unroll 3
  for (size_t r = 0; r < MR / 2; r++) {
    const int64x2_t v0 = vreinterpretq_s64_s8(vrow[2 * r]);
    const int64x2_t v1 = vreinterpretq_s64_s8(vrow[2 * r + 1]);
    va0[r] = vreinterpretq_s8_s64(vtrn1q_s64(v0, v1));
    va1[r] = vreinterpretq_s8_s64(vtrn2q_s64(v0, v1));
  }
  GEMMI8_A64_MMLA_GROUP_C(va0, wk);
  GEMMI8_A64_MMLA_GROUP_C(va1, wk + 128);
  return wk + 256;
}

/* The depth tail: rest (1..15) depths of the rows at offset `at`, loaded in bounds
 * (full16 as gemmi8_a64_load_tail), one or two k groups (the weights are zero-padded to
 * 8 depths). Returns the weights past them. */
static GEMMI8_ALWAYS_INLINE const int8_t* gemmi8_a64_mmla_tail_c(const size_t MR, const size_t NQ,
                                                                 const int is_signed,
                                                                 const uint8_t* const* ap,
                                                                 size_t at, size_t rest,
                                                                 int full16, const int8_t* wk,
                                                                 int32x4_t vpart[][8])
{
  int8x16_t va0[3], va1[3];
#pragma GCC unroll 3
  for (size_t r = 0; r < MR / 2; r++) {
    const int64x2_t v0 =
        vreinterpretq_s64_u8(gemmi8_a64_load_tail(ap[2 * r] + at, rest, full16));
    const int64x2_t v1 =
        vreinterpretq_s64_u8(gemmi8_a64_load_tail(ap[2 * r + 1] + at, rest, full16));
    va0[r] = vreinterpretq_s8_s64(vtrn1q_s64(v0, v1));
    va1[r] = vreinterpretq_s8_s64(vtrn2q_s64(v0, v1));
  }
  GEMMI8_A64_MMLA_GROUP_C(va0, wk);
  wk += 128;
  if (rest > 8) {
    GEMMI8_A64_MMLA_GROUP_C(va1, wk);
    wk += 128;
  }
  return wk;
}

/* Rows 2r and 2r+1 of columns 4j..4j+3 from two 2 x 2 blocks of the partial sums,
 * plus bias', plus the row-sum term (qu8; coef after bias'). */
static GEMMI8_ALWAYS_INLINE void gemmi8_a64_mmla_finish(const size_t MR, const size_t NJ,
                                                        const int is_signed, size_t mr,
                                                        const int32_t* bias,
                                                        const struct gemmi8_qparams* p,
                                                        int32x4_t vpart[][8],
                                                        int32x4_t vacc[][4])
{
#pragma GCC unroll 4
  for (size_t j = 0; j < NJ; j++) {
    const int32x4_t vbias = vld1q_s32(bias + 4 * j);
#pragma GCC unroll 3
    for (size_t r = 0; r < MR / 2; r++) {
      const int64x2_t vl = vreinterpretq_s64_s32(vpart[r][2 * j]);
      const int64x2_t vh = vreinterpretq_s64_s32(vpart[r][2 * j + 1]);
      vacc[2 * r][j] = vaddq_s32(vreinterpretq_s32_s64(vuzp1q_s64(vl, vh)), vbias);
      vacc[2 * r + 1][j] = vaddq_s32(vreinterpretq_s32_s64(vuzp2q_s64(vl, vh)), vbias);
    }
  }
  if (!is_signed) gemmi8_a64_add_row_sums(MR, NJ, mr, bias + 16, p->row_sum, vacc);
}

static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_core_i8mm(const size_t MR,
                                                        const size_t NJ,
                                                        const int is_signed, size_t mr, size_t k,
                                                        const void* a, size_t a_stride,
                                                        const void* w,
                                                        const struct gemmi8_qparams* p,
                                                        int32x4_t vacc[][4])
{
  const size_t NQ = 2 * NJ; /* column pairs */
  const uint8_t* ap[6];
  gemmi8_a64_rows(MR, mr, a, a_stride, ap);
  const int32_t* bias = (const int32_t*) w;
  const int32_t* coef = bias + 16;
  const int8_t* wk = (const int8_t*) (is_signed ? coef : coef + 16);
  int32x4_t vpart[3][8];
  const size_t iterations = k / 16;
  const size_t kc = k % 16;
  if (MR == 6 && NJ == 4) {
    /* the depth tail goes through the assembly too, from a zero-padded copy */
    uint8_t tail[6][16];
    const size_t groups = kc == 0 ? 0 : (kc > 8 ? 2 : 1);
    if (kc != 0) {
#pragma GCC unroll 6
      for (size_t i = 0; i < 6; i++) {
        vst1q_u8(tail[i], gemmi8_a64_load_tail(ap[i] + 16 * iterations, kc, k >= 16));
      }
    }
    if (is_signed) {
      GEMMI8_A64_MMLA_6X16("smmla", "qs8");
    } else {
      GEMMI8_A64_MMLA_6X16("ummla", "qu8");
    }
  } else {
    if ((MR == 2 || MR == 4) && NJ == 4 && iterations != 0) {
      int32x4_t vset[2][8];
      size_t count = iterations, koff = 0;
      if (is_signed) {
        GEMMI8_A64_MMLA_SMALL(MR, "smmla", "qs8");
      } else {
        GEMMI8_A64_MMLA_SMALL(MR, "ummla", "qu8");
      }
#pragma GCC unroll 8
      for (size_t q = 0; q < 8; q++) {
        if (MR == 2) {
          vpart[0][q] = vaddq_s32(vset[0][q], vset[1][q]);
        } else {
          vpart[0][q] = vset[0][q];
          vpart[1][q] = vset[1][q];
        }
      }
    } else {
      /* narrow tiles of the 6-row kernel; K < 16 */
#pragma GCC unroll 3
      for (size_t r = 0; r < MR / 2; r++) {
#pragma GCC unroll 8
        for (size_t q = 0; q < NQ; q++) vpart[r][q] = vdupq_n_s32(0);
      }
      for (size_t it = 0; it < iterations; it++) {
        wk = gemmi8_a64_mmla_16_c(MR, NQ, is_signed, ap, 16 * it, wk, vpart);
      }
    }
    if (kc != 0) {
      gemmi8_a64_mmla_tail_c(MR, NQ, is_signed, ap, 16 * iterations, kc, k >= 16, wk, vpart);
    }
  }
  /* rows 2r and 2r+1 of columns 4j..4j+3 from two 2 x 2 blocks, plus bias' */
  gemmi8_a64_mmla_finish(MR, NJ, is_signed, mr, bias, p, vpart, vacc);
}

/* The 6-row tile over a packed panel of a (gemmi8_x8_packa_6c8__neon: k padded to 16,
 * rows past mr zero), all 16 columns (a narrow block's columns past nr multiply the
 * zero padding of its weights and are not stored). */
static GEMMI8_ALWAYS_INLINE void gemmi8_qpgemm_core_i8mm(const int is_signed,
                                                         size_t mr, size_t k,
                                                         const uint8_t* panel, const void* w,
                                                         const struct gemmi8_qparams* p,
                                                         int32x4_t vacc[][4])
{
  const int32_t* bias = (const int32_t*) w;
  const int32_t* coef = bias + 16;
  const int8_t* wk = (const int8_t*) (is_signed ? coef : coef + 16);
  int32x4_t vpart[3][8];
  const size_t k8 = gemmi8_round_up(k, 8);
  const size_t iterations = k8 / 16, groups = k8 % 16 / 8;
  if (is_signed) {
    GEMMI8_A64_PMMLA_6X16("smmla", "qs8");
  } else {
    GEMMI8_A64_PMMLA_6X16("ummla", "qu8");
  }
  gemmi8_a64_mmla_finish(6, 4, is_signed, mr, bias, p, vpart, vacc);
}

/* The tile with A through ks taps of MR row pointers (igemm, convolution): the C depth
 * steps once per tap; the tap's weights padded to 8 depths. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qigemm_core_i8mm(
    const size_t MR, const size_t NJ, const int is_signed, size_t mr, size_t kc, size_t ks,
    const void* const* a, size_t a_offset, const void* zero, const void* w,
    const struct gemmi8_qparams* p, int32x4_t vacc[][4])
{
  const size_t NQ = 2 * NJ; /* column pairs */
  const int32_t* bias = (const int32_t*) w;
  const int32_t* coef = bias + 16;
  const int8_t* wk = (const int8_t*) (is_signed ? coef : coef + 16);
  int32x4_t vpart[3][8];
#pragma GCC unroll 3
  for (size_t r = 0; r < MR / 2; r++) {
#pragma GCC unroll 8
    for (size_t q = 0; q < NQ; q++) vpart[r][q] = vdupq_n_s32(0);
  }
  for (size_t t = 0; t < ks; t++) {
    const uint8_t* ap[6];
#pragma GCC unroll 6
    for (size_t i = 0; i < MR; i++) {
      const uint8_t* q = (const uint8_t*) a[t * MR + i];
      ap[i] = q == (const uint8_t*) zero ? q : q + a_offset;
    }
    const size_t iterations = kc / 16, rest = kc % 16;
    for (size_t it = 0; it < iterations; it++) {
      wk = gemmi8_a64_mmla_16_c(MR, NQ, is_signed, ap, 16 * it, wk, vpart);
    }
    if (rest != 0) {
      wk = gemmi8_a64_mmla_tail_c(MR, NQ, is_signed, ap, 16 * iterations, rest, kc >= 16, wk,
                                  vpart);
    }
  }
  gemmi8_a64_mmla_finish(MR, NJ, is_signed, mr, bias, p, vpart, vacc);
}

/* The bodies of the tiles, both types (q8-neon.h; entries: GEMMI8_A64_QKERNELS). */
#define GEMMI8_QGEMM_I8MM_BODY(body, MR) \
  GEMMI8_A64_Q_BODY_NJ(QGEMM, body, gemmi8_qgemm_core_i8mm, MR)
#define GEMMI8_QIGEMM_I8MM_BODY(body, MR) \
  GEMMI8_A64_Q_BODY_NJ(QIGEMM, body, gemmi8_qigemm_core_i8mm, MR)
#define GEMMI8_QGEMM_I8MM_BODY_FULL(body, MR) \
  GEMMI8_A64_QGEMM_BODY_FULL(body, gemmi8_qgemm_core_i8mm, MR)

/* The body over a packed panel of a (a_stride unused); the store takes nr columns. */
#define GEMMI8_QPGEMM_I8MM_BODY(body)                                                    \
  static GEMMI8_ALWAYS_INLINE void body##_impl(GEMMI8_A64_QGEMM_IMPL_ARGS)               \
  {                                                                                      \
    (void) a_stride;                                                                     \
    int32x4_t vacc[6][4];                                                                \
    if (is_signed) {                                                                     \
      gemmi8_qpgemm_core_i8mm(1, mr, k, (const uint8_t*) a, w, params, vacc);            \
    } else {                                                                             \
      gemmi8_qpgemm_core_i8mm(0, mr, k, (const uint8_t*) a, w, params, vacc);            \
    }                                                                                    \
    gemmi8_a64_store(out, 6, 4, 16, is_signed, mr, nr, c, c_stride, params, vacc);       \
  }                                                                                      \
  GEMMI8_A64_QGEMM_BODY(body)                                                            \
  GEMMI8_A64_QGEMM_S32(body)

#endif
