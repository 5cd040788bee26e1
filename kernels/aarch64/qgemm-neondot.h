/*
 * ARMv8.2 dot-product qu8 / qs8 GEMM microkernel template: MR x 16, k groups of 4.
 *
 * SDOT / UDOT by element: vacc (4 columns) += 4 columns x 4 depths of w . 4 bytes of a
 * (one 32-bit lane of va). Both operands keep their own type: qs8 multiplies int8 a by
 * the int8 weights (SDOT), qu8 raw uint8 a by the raw uint8 weights (UDOT), so that
 *   acc = bias'[n] + sum_k a * w  (+ coef[n] * rowsum(a) for qu8, coef = -b_zp)
 * exactly modulo 2^32 (src/microkernel.h); qu8 takes the row sums from the driver
 * (params->row_sum, NULL when every coef is 0). Packed block: bias'[16], coef[16]
 * (qu8 only), then [k/4][16][4] bytes: a vector is 4 columns x 4 depths.
 *
 * Registers of the 4 x 16 loop (assembly): vacc<i>x0123 .. vacc<i>xCDEF = vacc[i][0..3],
 * 16 accumulators; va0..va3 = v16..v19, 16 depths of a row, one k group per lane;
 * vb<columns>c<group> in v20..v23 (groups 0, 2) and v24..v27 (groups 1, 3). One
 * iteration is 16 depths: 4 + 16 loads, 64 dot products. Narrow tiles compute only
 * NJ = ceil(nr / 4) column groups, in C. Rows past mr alias row mr - 1. The depth tail
 * (k % 16) is one in-bounds load per row; the weights are zero-padded to 4 depths.
 *
 * The includer defines GEMMI8_MCA_NAME (q8-neon.h) before including this file.
 */
#ifndef GEMMI8_AARCH64_QGEMM_NEONDOT_H
#define GEMMI8_AARCH64_QGEMM_NEONDOT_H

#include "q8-neon.h"

#define GEMMI8_A64_SDOT(acc, b, a, lane) vdotq_laneq_s32(acc, b, a, lane)
#define GEMMI8_A64_UDOT(acc, b, a, lane)                                                   \
  vreinterpretq_s32_u32(vdotq_laneq_u32(vreinterpretq_u32_s32(acc), vreinterpretq_u8_s8(b), \
                                        vreinterpretq_u8_s8(a), lane))

/* Keeps the compiler from hoisting every weight load of an iteration to its top,
 * which runs out of registers and spills accumulators. */
#define GEMMI8_A64_BARRIER() __asm__ volatile("" ::: "memory")

/* One group of 4 depths (lane G of va) for every row and column group. */
#define GEMMI8_A64_DOT_GROUP_C(G)                                                            \
  do {                                                                                     \
    int8x16_t vb[4];                                                                       \
    _Pragma("GCC unroll 4") for (size_t j = 0; j < NJ; j++) vb[j] = vld1q_s8(wk + 16 * j); \
    wk += 64;                                                                              \
    _Pragma("GCC unroll 16") for (size_t i = 0; i < MR; i++) {                             \
      _Pragma("GCC unroll 4") for (size_t j = 0; j < NJ; j++) {                            \
        vacc[i][j] = is_signed ? GEMMI8_A64_SDOT(vacc[i][j], vb[j], va[i], G)              \
                               : GEMMI8_A64_UDOT(vacc[i][j], vb[j], va[i], G);             \
      }                                                                                    \
    }                                                                                      \
  } while (0)

/* The 4 x 16 main loop in assembly, 16 depths per iteration. (The compiler's own
 * schedule pairs the weight loads into LDP, 6 cycles each on Cortex-A55, and hoists
 * them all, spilling accumulators.) va0..va3 = v16..v19; the weights of groups 0 and 2
 * are in v20..v23, of groups 1 and 3 in v24..v27. Software pipelined: each group loads
 * the next group's weights, group 3 also the next iteration's a (a row right after its
 * last use); the last iteration is peeled so that nothing is read past the depth.
 * Every load or integer instruction follows a dot product, which is how the in-order
 * Cortex-A55 dual-issues them; a is addressed by one offset register (no writeback). */
#define GEMMI8_A64_DOT(OP, I, J, VA, B, G) \
  OP " %[vacc" I "x" J "].4s, " B ".16b, " VA ".4b[" G "]\n\t"
/* row I, group G: four dot products with X after the first (A) or second (B) one */
#define GEMMI8_A64_DOT_ROW_A(OP, I, VA, B0, B1, B2, B3, G, X)                           \
  GEMMI8_A64_DOT(OP, I, "0123", VA, B0, G) X GEMMI8_A64_DOT(OP, I, "4567", VA, B1, G)    \
  GEMMI8_A64_DOT(OP, I, "89AB", VA, B2, G) GEMMI8_A64_DOT(OP, I, "CDEF", VA, B3, G)
#define GEMMI8_A64_DOT_ROW_B(OP, I, VA, B0, B1, B2, B3, G, X)                           \
  GEMMI8_A64_DOT(OP, I, "0123", VA, B0, G) GEMMI8_A64_DOT(OP, I, "4567", VA, B1, G) X    \
  GEMMI8_A64_DOT(OP, I, "89AB", VA, B2, G) GEMMI8_A64_DOT(OP, I, "CDEF", VA, B3, G)
/* group G (lane G of va) with weights B0..B3, loading L0..L3 on the way */
#define GEMMI8_A64_DOT_GROUP(OP, G, B0, B1, B2, B3, L0, L1, L2, L3) \
  GEMMI8_A64_DOT_ROW_A(OP, "0", "v16", B0, B1, B2, B3, G, L0)       \
  GEMMI8_A64_DOT_ROW_B(OP, "1", "v17", B0, B1, B2, B3, G, L1)       \
  GEMMI8_A64_DOT_ROW_A(OP, "2", "v18", B0, B1, B2, B3, G, L2)       \
  GEMMI8_A64_DOT_ROW_B(OP, "3", "v19", B0, B1, B2, B3, G, L3)
#define GEMMI8_A64_LDW(Q, OFFSET) "ldr " Q ", [%[w], #" OFFSET "]\n\t"
#define GEMMI8_A64_LDA(Q, I) "ldr " Q ", [%[a" I "], %[koff]]\n\t"
#define GEMMI8_A64_DOT_GROUPS_012(OP)                                                 \
  GEMMI8_A64_DOT_GROUP(OP, "0", "v20", "v21", "v22", "v23",                           \
                       GEMMI8_A64_LDW("q24", "64"), GEMMI8_A64_LDW("q25", "80"),      \
                       GEMMI8_A64_LDW("q26", "96"), GEMMI8_A64_LDW("q27", "112"))     \
  GEMMI8_A64_DOT_GROUP(OP, "1", "v24", "v25", "v26", "v27",                           \
                       GEMMI8_A64_LDW("q20", "128"), GEMMI8_A64_LDW("q21", "144"),    \
                       GEMMI8_A64_LDW("q22", "160"), GEMMI8_A64_LDW("q23", "176"))    \
  GEMMI8_A64_DOT_GROUP(OP, "2", "v20", "v21", "v22", "v23",                           \
                       GEMMI8_A64_LDW("q24", "192"), GEMMI8_A64_LDW("q25", "208"),    \
                       GEMMI8_A64_LDW("q26", "224"), GEMMI8_A64_LDW("q27", "240"))
/* group 3 of a loop iteration: the next iteration's a and group 0, loop control */
#define GEMMI8_A64_DOT_GROUP3_NEXT(OP)                                                  \
  GEMMI8_A64_DOT(OP, "0", "0123", "v16", "v24", "3") "add %[koff], %[koff], #16\n\t"    \
  GEMMI8_A64_DOT(OP, "0", "4567", "v16", "v25", "3") GEMMI8_A64_LDW("q20", "256")       \
  GEMMI8_A64_DOT(OP, "0", "89AB", "v16", "v26", "3") GEMMI8_A64_LDW("q21", "272")       \
  GEMMI8_A64_DOT(OP, "0", "CDEF", "v16", "v27", "3") GEMMI8_A64_LDA("q16", "0")         \
  GEMMI8_A64_DOT(OP, "1", "0123", "v17", "v24", "3") GEMMI8_A64_LDW("q22", "288")       \
  GEMMI8_A64_DOT(OP, "1", "4567", "v17", "v25", "3") GEMMI8_A64_LDW("q23", "304")       \
  GEMMI8_A64_DOT(OP, "1", "89AB", "v17", "v26", "3") "add %[w], %[w], #256\n\t"         \
  GEMMI8_A64_DOT(OP, "1", "CDEF", "v17", "v27", "3") GEMMI8_A64_LDA("q17", "1")         \
  GEMMI8_A64_DOT(OP, "2", "0123", "v18", "v24", "3")                                    \
  GEMMI8_A64_DOT(OP, "2", "4567", "v18", "v25", "3")                                    \
  GEMMI8_A64_DOT(OP, "2", "89AB", "v18", "v26", "3") "subs %[iterations], %[iterations], #1\n\t" \
  GEMMI8_A64_DOT(OP, "2", "CDEF", "v18", "v27", "3") GEMMI8_A64_LDA("q18", "2")         \
  GEMMI8_A64_DOT(OP, "3", "0123", "v19", "v24", "3")                                    \
  GEMMI8_A64_DOT(OP, "3", "4567", "v19", "v25", "3")                                    \
  GEMMI8_A64_DOT(OP, "3", "89AB", "v19", "v26", "3")                                    \
  GEMMI8_A64_DOT(OP, "3", "CDEF", "v19", "v27", "3") GEMMI8_A64_LDA("q19", "3")
/* Shared by the 4 x 16 loops: the accumulators set to bias (row 0 loaded, the others
 * copied), and the operands. */
#define GEMMI8_A64_DOT_4X16_INIT \
  "ldr %q[vacc0x0123], [%[bias]]\n\t" \
  "ldr %q[vacc0x4567], [%[bias], #16]\n\t" \
  "ldr %q[vacc0x89AB], [%[bias], #32]\n\t" \
  "ldr %q[vacc0xCDEF], [%[bias], #48]\n\t" \
  "mov %[vacc1x0123].16b, %[vacc0x0123].16b\n\t" \
  "mov %[vacc1x4567].16b, %[vacc0x4567].16b\n\t" \
  "mov %[vacc1x89AB].16b, %[vacc0x89AB].16b\n\t" \
  "mov %[vacc1xCDEF].16b, %[vacc0xCDEF].16b\n\t" \
  "mov %[vacc2x0123].16b, %[vacc0x0123].16b\n\t" \
  "mov %[vacc2x4567].16b, %[vacc0x4567].16b\n\t" \
  "mov %[vacc2x89AB].16b, %[vacc0x89AB].16b\n\t" \
  "mov %[vacc2xCDEF].16b, %[vacc0xCDEF].16b\n\t" \
  "mov %[vacc3x0123].16b, %[vacc0x0123].16b\n\t" \
  "mov %[vacc3x4567].16b, %[vacc0x4567].16b\n\t" \
  "mov %[vacc3x89AB].16b, %[vacc0x89AB].16b\n\t" \
  "mov %[vacc3xCDEF].16b, %[vacc0xCDEF].16b\n\t"
#define GEMMI8_A64_DOT_4X16_OPERANDS \
  [vacc0x0123] "=w"(vacc[0][0]), [vacc0x4567] "=w"(vacc[0][1]), \
  [vacc0x89AB] "=w"(vacc[0][2]), [vacc0xCDEF] "=w"(vacc[0][3]), \
  [vacc1x0123] "=w"(vacc[1][0]), [vacc1x4567] "=w"(vacc[1][1]), \
  [vacc1x89AB] "=w"(vacc[1][2]), [vacc1xCDEF] "=w"(vacc[1][3]), \
  [vacc2x0123] "=w"(vacc[2][0]), [vacc2x4567] "=w"(vacc[2][1]), \
  [vacc2x89AB] "=w"(vacc[2][2]), [vacc2xCDEF] "=w"(vacc[2][3]), \
  [vacc3x0123] "=w"(vacc[3][0]), [vacc3x4567] "=w"(vacc[3][1]), \
  [vacc3x89AB] "=w"(vacc[3][2]), [vacc3xCDEF] "=w"(vacc[3][3]), \
  [w] "+r"(wk), [iterations] "+r"(iterations), [koff] "+r"(koff) \
  : [bias] "r"(bias), [a0] "r"(ap[0]), [a1] "r"(ap[1]), [a2] "r"(ap[2]), \
  [a3] "r"(ap[3]) \
  : "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", \
  "v27", "cc", "memory"
/* Accumulators = bias, then `iterations` times 16 depths. The accumulators are outputs
 * only (an asm statement has at most 30 operands; "+w" would count them twice). */
#define GEMMI8_A64_DOT_4X16_ASM(OP, NAME)                                               \
  __asm__ volatile(                                                                     \
      GEMMI8_A64_DOT_4X16_INIT                                                          \
      "cbz %[iterations], .Lgemmi8_dot_end%=\n\t"                                       \
      GEMMI8_A64_LDA("q16", "0") GEMMI8_A64_LDW("q20", "0")                             \
      GEMMI8_A64_LDA("q17", "1") GEMMI8_A64_LDW("q21", "16")                            \
      GEMMI8_A64_LDA("q18", "2") GEMMI8_A64_LDW("q22", "32")                            \
      GEMMI8_A64_LDA("q19", "3") GEMMI8_A64_LDW("q23", "48")                            \
      "subs %[iterations], %[iterations], #1\n\t"                                       \
      "b.eq .Lgemmi8_dot_last%=\n\t"                                                    \
      GEMMI8_MCA_BEGIN_ASM(NAME)                                                        \
      ".Lgemmi8_dot_loop%=:\n\t"                                                        \
      GEMMI8_A64_DOT_GROUPS_012(OP)                                                     \
      GEMMI8_A64_DOT_GROUP3_NEXT(OP)                                                    \
      "b.ne .Lgemmi8_dot_loop%=\n\t"                                                    \
      GEMMI8_MCA_END_ASM()                                                              \
      ".Lgemmi8_dot_last%=:\n\t"                                                        \
      GEMMI8_A64_DOT_GROUPS_012(OP)                                                     \
      GEMMI8_A64_DOT_GROUP(OP, "3", "v24", "v25", "v26", "v27", "", "", "", "")         \
      "add %[w], %[w], #256\n\t"                                                        \
      ".Lgemmi8_dot_end%=:\n\t"                                                         \
      : GEMMI8_A64_DOT_4X16_OPERANDS)
/* The 4 x 16 loop for cores that complete in order (Cortex-A510 class: a load waits
 * for every older multiply to finish), GEMMI8_A64_DOT_BATCH: each half iteration loads
 * its rows of a (first half) and the weights of two groups, eight 128-bit loads in a
 * row, then runs their 32 dot products, so that loads follow a dot product twice an
 * iteration instead of twenty times. Loads only what the iteration multiplies (no
 * peeling). Same registers as above. */
#define GEMMI8_A64_DOT_4X16_BATCH_ASM(OP, NAME)                                         \
  __asm__ volatile(                                                                     \
      GEMMI8_A64_DOT_4X16_INIT                                                          \
      "cbz %[iterations], .Lgemmi8_dotb_end%=\n\t"                                      \
      GEMMI8_MCA_BEGIN_ASM(NAME)                                                        \
      ".Lgemmi8_dotb_loop%=:\n\t"                                                       \
      GEMMI8_A64_LDA("q16", "0") GEMMI8_A64_LDA("q17", "1")                             \
      GEMMI8_A64_LDA("q18", "2") GEMMI8_A64_LDA("q19", "3")                             \
      GEMMI8_A64_LDW("q20", "0") GEMMI8_A64_LDW("q21", "16")                            \
      GEMMI8_A64_LDW("q22", "32") GEMMI8_A64_LDW("q23", "48")                           \
      GEMMI8_A64_LDW("q24", "64") GEMMI8_A64_LDW("q25", "80")                           \
      GEMMI8_A64_LDW("q26", "96") GEMMI8_A64_LDW("q27", "112")                          \
      GEMMI8_A64_DOT_GROUP(OP, "0", "v20", "v21", "v22", "v23", "", "", "", "")         \
      GEMMI8_A64_DOT_GROUP(OP, "1", "v24", "v25", "v26", "v27", "", "", "", "")         \
      GEMMI8_A64_LDW("q20", "128") GEMMI8_A64_LDW("q21", "144")                         \
      GEMMI8_A64_LDW("q22", "160") GEMMI8_A64_LDW("q23", "176")                         \
      GEMMI8_A64_LDW("q24", "192") GEMMI8_A64_LDW("q25", "208")                         \
      GEMMI8_A64_LDW("q26", "224") GEMMI8_A64_LDW("q27", "240")                         \
      "add %[koff], %[koff], #16\n\t"                                                    \
      GEMMI8_A64_DOT_GROUP(OP, "2", "v20", "v21", "v22", "v23", "", "", "", "")         \
      GEMMI8_A64_DOT_GROUP(OP, "3", "v24", "v25", "v26", "v27", "", "", "", "")         \
      "add %[w], %[w], #256\n\t"                                                         \
      "subs %[iterations], %[iterations], #1\n\t"                                       \
      "b.ne .Lgemmi8_dotb_loop%=\n\t"                                                   \
      GEMMI8_MCA_END_ASM()                                                              \
      ".Lgemmi8_dotb_end%=:\n\t"                                                        \
      : GEMMI8_A64_DOT_4X16_OPERANDS)
#ifdef GEMMI8_A64_DOT_BATCH
#define GEMMI8_A64_DOT_4X16_LOOP GEMMI8_A64_DOT_4X16_BATCH_ASM
#else
#define GEMMI8_A64_DOT_4X16_LOOP GEMMI8_A64_DOT_4X16_ASM
#endif
#define GEMMI8_A64_DOT_4X16(OP, TYPE) GEMMI8_A64_DOT_4X16_LOOP(OP, GEMMI8_MCA_NAME(TYPE, "s32"))

/* The 1- and 2-row loops (M = 1, 2) in assembly, 16 depths per iteration. With 4 x 16
 * accumulators every accumulator takes 4 dependent dot products per iteration; with 1
 * or 2 rows they would bound the loop by the dot product's latency, so the groups of
 * 4 depths go round accumulator sets: 1 row, 4 sets (group g into set g, 16
 * accumulators vacc0x<columns>s<g>); 2 rows, 2 sets (g % 2), summed at the end. va0 /
 * va1 = v16 / v17; the weights of groups 0 and 2 in v20..v23, of 1 and 3 in v24..v27,
 * each register reloaded (two groups ahead) right after its dot products; a is loaded
 * with post-increment after its last use. The last iteration is peeled so that nothing
 * is read past the depth. One iteration: 1 + 16 loads (2 + 16), 16 dot products (32). */
#define GEMMI8_A64_DOT_E(OP, ACC, B, VA, G) \
  OP " %[" ACC "].4s, " B ".16b, " VA ".4b[" G "]\n\t"
/* group G into set S with weights B0..B3, loading L0..L3 on the way */
#define GEMMI8_A64_DOT1_GROUP(OP, G, S, B0, B1, B2, B3, L0, L1, L2, L3)                      \
  GEMMI8_A64_DOT_E(OP, "vacc0x0123s" S, B0, "v16", G) L0                                     \
  GEMMI8_A64_DOT_E(OP, "vacc0x4567s" S, B1, "v16", G) L1                                     \
  GEMMI8_A64_DOT_E(OP, "vacc0x89ABs" S, B2, "v16", G) L2                                     \
  GEMMI8_A64_DOT_E(OP, "vacc0xCDEFs" S, B3, "v16", G) L3
#define GEMMI8_A64_DOT2_GROUP(OP, G, S, B0, B1, B2, B3, L0, L1, L2, L3)                      \
  GEMMI8_A64_DOT_E(OP, "vacc0x0123s" S, B0, "v16", G)                                        \
  GEMMI8_A64_DOT_E(OP, "vacc1x0123s" S, B0, "v17", G) L0                                     \
  GEMMI8_A64_DOT_E(OP, "vacc0x4567s" S, B1, "v16", G)                                        \
  GEMMI8_A64_DOT_E(OP, "vacc1x4567s" S, B1, "v17", G) L1                                     \
  GEMMI8_A64_DOT_E(OP, "vacc0x89ABs" S, B2, "v16", G)                                        \
  GEMMI8_A64_DOT_E(OP, "vacc1x89ABs" S, B2, "v17", G) L2                                     \
  GEMMI8_A64_DOT_E(OP, "vacc0xCDEFs" S, B3, "v16", G)                                        \
  GEMMI8_A64_DOT_E(OP, "vacc1xCDEFs" S, B3, "v17", G) L3
/* one iteration; LN loads the next iteration's groups 0 and 1 (or nothing), TAIL ends
 * it (subs, loads of a) */
#define GEMMI8_A64_DOT_SMALL_ITERATION(GROUP, OP, S2, S3, LN, SUBS, TAIL)                    \
  GROUP(OP, "0", "0", "v20", "v21", "v22", "v23", GEMMI8_A64_LDW("q20", "128"),              \
        GEMMI8_A64_LDW("q21", "144"), GEMMI8_A64_LDW("q22", "160"),                          \
        GEMMI8_A64_LDW("q23", "176"))                                                        \
  GROUP(OP, "1", "1", "v24", "v25", "v26", "v27", GEMMI8_A64_LDW("q24", "192"),              \
        GEMMI8_A64_LDW("q25", "208"), GEMMI8_A64_LDW("q26", "224"),                          \
        GEMMI8_A64_LDW("q27", "240"))                                                        \
  GROUP(OP, "2", S2, "v20", "v21", "v22", "v23", LN("q20", "256"), LN("q21", "272"),         \
        LN("q22", "288"), LN("q23", "304") SUBS)                                             \
  GROUP(OP, "3", S3, "v24", "v25", "v26", "v27", LN("q24", "320"), LN("q25", "336"),         \
        LN("q26", "352"), LN("q27", "368"))                                                  \
  "add %[w], %[w], #256\n\t" TAIL
#define GEMMI8_A64_DOT_NO_LOAD(Q, OFFSET) ""
#define GEMMI8_A64_DOT_LDA_POST(Q, I) "ldr " Q ", [%[a" I "]], #16\n\t"
#define GEMMI8_A64_DOT_SUBS "subs %[iterations], %[iterations], #1\n\t"
/* Accumulators = 0 (outputs only: 16 "+w" operands would count twice), then
 * `iterations` (>= 1) times 16 depths. */
#define GEMMI8_A64_DOT_SMALL_ASM(GROUP, OP, S2, S3, LOAD_A, ZERO, NAME, OUTPUTS)            \
  __asm__ volatile(                                                                         \
      ZERO LOAD_A                                                                           \
      GEMMI8_A64_LDW("q20", "0") GEMMI8_A64_LDW("q21", "16")                                \
      GEMMI8_A64_LDW("q22", "32") GEMMI8_A64_LDW("q23", "48")                               \
      GEMMI8_A64_LDW("q24", "64") GEMMI8_A64_LDW("q25", "80")                               \
      GEMMI8_A64_LDW("q26", "96") GEMMI8_A64_LDW("q27", "112")                              \
      GEMMI8_A64_DOT_SUBS                                                                   \
      "b.eq .Lgemmi8_dot_last%=\n\t"                                                        \
      GEMMI8_MCA_BEGIN_ASM(NAME)                                                            \
      ".Lgemmi8_dot_loop%=:\n\t"                                                            \
      GEMMI8_A64_DOT_SMALL_ITERATION(GROUP, OP, S2, S3, GEMMI8_A64_LDW, GEMMI8_A64_DOT_SUBS, \
                                     LOAD_A)                                                \
      "b.ne .Lgemmi8_dot_loop%=\n\t"                                                        \
      GEMMI8_MCA_END_ASM()                                                                  \
      ".Lgemmi8_dot_last%=:\n\t"                                                            \
      GEMMI8_A64_DOT_SMALL_ITERATION(GROUP, OP, S2, S3, GEMMI8_A64_DOT_NO_LOAD, "", "")     \
      : OUTPUTS(), [w] "+r"(wk), [iterations] "+r"(iterations)                              \
      :                                                                                     \
      : "v16", "v17", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "cc",         \
        "memory")
#define GEMMI8_A64_DOT_ZERO_SET(I, S)                                                       \
  "movi %[vacc" I "x0123s" S "].4s, #0\n\t" "movi %[vacc" I "x4567s" S "].4s, #0\n\t"       \
  "movi %[vacc" I "x89ABs" S "].4s, #0\n\t" "movi %[vacc" I "xCDEFs" S "].4s, #0\n\t"
#define GEMMI8_A64_DOT_OUTPUT_SET(I, S)                                                     \
  [vacc##I##x0123s##S] "=w"(vset[I][S][0]), [vacc##I##x4567s##S] "=w"(vset[I][S][1]),       \
  [vacc##I##x89ABs##S] "=w"(vset[I][S][2]), [vacc##I##xCDEFs##S] "=w"(vset[I][S][3])
#define GEMMI8_A64_DOT1_OUTPUTS()                                                           \
  GEMMI8_A64_DOT_OUTPUT_SET(0, 0), GEMMI8_A64_DOT_OUTPUT_SET(0, 1),                         \
  GEMMI8_A64_DOT_OUTPUT_SET(0, 2), GEMMI8_A64_DOT_OUTPUT_SET(0, 3), [a0] "+r"(pa[0])
#define GEMMI8_A64_DOT2_OUTPUTS()                                                           \
  GEMMI8_A64_DOT_OUTPUT_SET(0, 0), GEMMI8_A64_DOT_OUTPUT_SET(0, 1),                         \
  GEMMI8_A64_DOT_OUTPUT_SET(1, 0), GEMMI8_A64_DOT_OUTPUT_SET(1, 1), [a0] "+r"(pa[0]),       \
  [a1] "+r"(pa[1])
#define GEMMI8_A64_DOT_SMALL_NAMED(MR, OP, NAME)                                            \
  do {                                                                                      \
    if (MR == 1) {                                                                          \
      GEMMI8_A64_DOT_SMALL_ASM(GEMMI8_A64_DOT1_GROUP, OP, "2", "3",                         \
                               GEMMI8_A64_DOT_LDA_POST("q16", "0"),                         \
                               GEMMI8_A64_DOT_ZERO_SET("0", "0")                            \
                                   GEMMI8_A64_DOT_ZERO_SET("0", "1")                        \
                                       GEMMI8_A64_DOT_ZERO_SET("0", "2")                    \
                                           GEMMI8_A64_DOT_ZERO_SET("0", "3"),               \
                               NAME, GEMMI8_A64_DOT1_OUTPUTS);                              \
    } else {                                                                                \
      GEMMI8_A64_DOT_SMALL_ASM(GEMMI8_A64_DOT2_GROUP, OP, "0", "1",                         \
                               GEMMI8_A64_DOT_LDA_POST("q16", "0")                          \
                                   GEMMI8_A64_DOT_LDA_POST("q17", "1"),                     \
                               GEMMI8_A64_DOT_ZERO_SET("0", "0")                            \
                                   GEMMI8_A64_DOT_ZERO_SET("0", "1")                        \
                                       GEMMI8_A64_DOT_ZERO_SET("1", "0")                    \
                                           GEMMI8_A64_DOT_ZERO_SET("1", "1"),               \
                               NAME, GEMMI8_A64_DOT2_OUTPUTS);                              \
    }                                                                                       \
  } while (0)
#define GEMMI8_A64_DOT_SMALL(MR, OP, TYPE) \
  GEMMI8_A64_DOT_SMALL_NAMED(MR, OP, GEMMI8_MCA_NAME(TYPE, "s32"))

/* kc depths of the rows ap[0..MR) in C: 16 at a time, then the tail (full16: the 16
 * bytes ending at the tail's end belong to the row); the weights from wk on, padded
 * to 4 depths. Advances the row pointers; returns the weights past the depths. */
static GEMMI8_ALWAYS_INLINE const int8_t* gemmi8_a64_dot_depth_c(const size_t MR, const size_t NJ,
                                                                 const int is_signed, size_t kc,
                                                                 int full16, const uint8_t** ap,
                                                                 const int8_t* wk,
                                                                 int32x4_t vacc[][4])
{
  for (; kc >= 16; kc -= 16) {
    int8x16_t va[16];
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      va[i] = vld1q_s8((const int8_t*) ap[i]);
      ap[i] += 16;
    }
    GEMMI8_A64_DOT_GROUP_C(0);
    GEMMI8_A64_BARRIER();
    GEMMI8_A64_DOT_GROUP_C(1);
    GEMMI8_A64_BARRIER();
    GEMMI8_A64_DOT_GROUP_C(2);
    GEMMI8_A64_BARRIER();
    GEMMI8_A64_DOT_GROUP_C(3);
  }
  if (kc != 0) {
    int8x16_t va[16];
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      va[i] = vreinterpretq_s8_u8(gemmi8_a64_load_tail(ap[i], kc, full16));
    }
    /* the weights are padded with zeros to a whole group of 4 */
    GEMMI8_A64_DOT_GROUP_C(0);
    if (kc > 4) GEMMI8_A64_DOT_GROUP_C(1);
    if (kc > 8) GEMMI8_A64_DOT_GROUP_C(2);
    if (kc > 12) GEMMI8_A64_DOT_GROUP_C(3);
  }
  return wk;
}

static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_core_neondot(const size_t MR,
                                                           const size_t NJ, const int is_signed,
                                                           size_t mr, size_t k, const void* a,
                                                           size_t a_stride, const void* w,
                                                           const struct gemmi8_qparams* p,
                                                           int32x4_t vacc[][4])
{
  const uint8_t* ap[16];
  gemmi8_a64_rows(MR, mr, a, a_stride, ap);
  const int32_t* bias = (const int32_t*) w;
  const int32_t* coef = bias + 16;
  const int8_t* wk = (const int8_t*) (is_signed ? coef : coef + 16);
  size_t kc = k;
  if (MR == 4 && NJ == 4) {
    size_t iterations = k / 16, koff = 0;
    if (is_signed) {
      GEMMI8_A64_DOT_4X16("sdot", "qs8");
    } else {
      GEMMI8_A64_DOT_4X16("udot", "qu8");
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < 4; i++) ap[i] += k - k % 16;
    kc = k % 16;
  } else if (MR <= 2 && NJ == 4 && k >= 16) {
    int32x4_t vset[2][4][4];
    const uint8_t* pa[2] = {ap[0], ap[MR - 1]};
    size_t iterations = k / 16;
    if (is_signed) {
      GEMMI8_A64_DOT_SMALL(MR, "sdot", "qs8");
    } else {
      GEMMI8_A64_DOT_SMALL(MR, "udot", "qu8");
    }
#pragma GCC unroll 4
    for (size_t j = 0; j < 4; j++) {
      const int32x4_t vbias = vld1q_s32(bias + 4 * j);
#pragma GCC unroll 2
      for (size_t i = 0; i < MR; i++) {
        int32x4_t v = vaddq_s32(vset[i][0][j], vset[i][1][j]);
        if (MR == 1) v = vaddq_s32(v, vaddq_s32(vset[i][2][j], vset[i][3][j]));
        vacc[i][j] = vaddq_s32(v, vbias);
      }
    }
#pragma GCC unroll 2
    for (size_t i = 0; i < MR; i++) ap[i] += k - k % 16;
    kc = k % 16;
  } else {
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) {
      const int32x4_t vbias = vld1q_s32(bias + 4 * j);
#pragma GCC unroll 16
      for (size_t i = 0; i < MR; i++) vacc[i][j] = vbias;
    }
  }
  /* narrow tiles of the 4-row kernel, and the depth tail */
  gemmi8_a64_dot_depth_c(MR, NJ, is_signed, kc, k >= 16, ap, wk, vacc);
  if (!is_signed) gemmi8_a64_add_row_sums(MR, NJ, mr, coef, p->row_sum, vacc);
}

/* The tile with A through ks taps of MR row pointers (igemm, convolution): the C depth
 * loop once per tap, the tap's weights padded to 4 depths. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qigemm_core_neondot(
    const size_t MR, const size_t NJ, const int is_signed, size_t mr, size_t kc, size_t ks,
    const void* const* a, size_t a_offset, const void* zero, const void* w,
    const struct gemmi8_qparams* p, int32x4_t vacc[][4])
{
  const int32_t* bias = (const int32_t*) w;
  const int32_t* coef = bias + 16;
  const int8_t* wk = (const int8_t*) (is_signed ? coef : coef + 16);
#pragma GCC unroll 4
  for (size_t j = 0; j < NJ; j++) {
    const int32x4_t vbias = vld1q_s32(bias + 4 * j);
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) vacc[i][j] = vbias;
  }
  for (size_t t = 0; t < ks; t++) {
    const uint8_t* ap[16];
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      const uint8_t* q = (const uint8_t*) a[t * MR + i];
      ap[i] = q == (const uint8_t*) zero ? q : q + a_offset;
    }
    wk = gemmi8_a64_dot_depth_c(MR, NJ, is_signed, kc, kc >= 16, ap, wk, vacc);
  }
  (void) mr;
  if (!is_signed) gemmi8_a64_add_row_sums(MR, NJ, mr, coef, p->row_sum, vacc);
}

/* The bodies of the tiles, both types (q8-neon.h; entries: GEMMI8_A64_QKERNELS). */
#define GEMMI8_QGEMM_NEONDOT_BODY(body, MR) \
  GEMMI8_A64_Q_BODY_NJ(QGEMM, body, gemmi8_qgemm_core_neondot, MR)
#define GEMMI8_QIGEMM_NEONDOT_BODY(body, MR) \
  GEMMI8_A64_Q_BODY_NJ(QIGEMM, body, gemmi8_qigemm_core_neondot, MR)
#define GEMMI8_QGEMM_NEONDOT_BODY_FULL(body, MR) \
  GEMMI8_A64_QGEMM_BODY_FULL(body, gemmi8_qgemm_core_neondot, MR)

#endif
