/*
 * ARMv8.2 dot-product qu8 / qs8 GEMM microkernel template: MR x 16, k groups of 4.
 *
 * SDOT / UDOT by element: vacc (4 columns) += 4 columns x 4 depths of w . 4 bytes of a
 * (one 32-bit lane of va). Both operands keep their own type: qs8 multiplies int8 a by
 * the int8 weights (SDOT), qu8 raw uint8 a by the raw uint8 weights (UDOT), so that
 *   acc = bias'[n] + sum_k a * w  (+ coef[n] * rowsum(a) for qu8, coef = -b_zp)
 * exactly modulo 2^32 (common.h); qu8 takes the row sums from the driver
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
/* Accumulators = bias, then `iterations` times 16 depths. The accumulators are outputs
 * only (an asm statement has at most 30 operands; "+w" would count them twice). */
#define GEMMI8_A64_DOT_4X16_ASM(OP, NAME)                                               \
  __asm__ volatile(                                                                     \
      "ldr %q[vacc0x0123], [%[bias]]\n\t"                                               \
      "ldr %q[vacc0x4567], [%[bias], #16]\n\t"                                          \
      "ldr %q[vacc0x89AB], [%[bias], #32]\n\t"                                          \
      "ldr %q[vacc0xCDEF], [%[bias], #48]\n\t"                                          \
      "mov %[vacc1x0123].16b, %[vacc0x0123].16b\n\t"                                    \
      "mov %[vacc1x4567].16b, %[vacc0x4567].16b\n\t"                                    \
      "mov %[vacc1x89AB].16b, %[vacc0x89AB].16b\n\t"                                    \
      "mov %[vacc1xCDEF].16b, %[vacc0xCDEF].16b\n\t"                                    \
      "mov %[vacc2x0123].16b, %[vacc0x0123].16b\n\t"                                    \
      "mov %[vacc2x4567].16b, %[vacc0x4567].16b\n\t"                                    \
      "mov %[vacc2x89AB].16b, %[vacc0x89AB].16b\n\t"                                    \
      "mov %[vacc2xCDEF].16b, %[vacc0xCDEF].16b\n\t"                                    \
      "mov %[vacc3x0123].16b, %[vacc0x0123].16b\n\t"                                    \
      "mov %[vacc3x4567].16b, %[vacc0x4567].16b\n\t"                                    \
      "mov %[vacc3x89AB].16b, %[vacc0x89AB].16b\n\t"                                    \
      "mov %[vacc3xCDEF].16b, %[vacc0xCDEF].16b\n\t"                                    \
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
      : [vacc0x0123] "=w"(vacc[0][0]), [vacc0x4567] "=w"(vacc[0][1]),                   \
        [vacc0x89AB] "=w"(vacc[0][2]), [vacc0xCDEF] "=w"(vacc[0][3]),                   \
        [vacc1x0123] "=w"(vacc[1][0]), [vacc1x4567] "=w"(vacc[1][1]),                   \
        [vacc1x89AB] "=w"(vacc[1][2]), [vacc1xCDEF] "=w"(vacc[1][3]),                   \
        [vacc2x0123] "=w"(vacc[2][0]), [vacc2x4567] "=w"(vacc[2][1]),                   \
        [vacc2x89AB] "=w"(vacc[2][2]), [vacc2xCDEF] "=w"(vacc[2][3]),                   \
        [vacc3x0123] "=w"(vacc[3][0]), [vacc3x4567] "=w"(vacc[3][1]),                   \
        [vacc3x89AB] "=w"(vacc[3][2]), [vacc3xCDEF] "=w"(vacc[3][3]),                   \
        [w] "+r"(wk), [iterations] "+r"(iterations), [koff] "+r"(koff)                  \
      : [bias] "r"(bias), [a0] "r"(ap[0]), [a1] "r"(ap[1]), [a2] "r"(ap[2]),            \
        [a3] "r"(ap[3])                                                                 \
      : "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26",    \
        "v27", "cc", "memory")
#define GEMMI8_A64_DOT_4X16(OP)                                                         \
  do {                                                                                  \
    if (OUT == gemmi8_a64_out_s32) {                                                    \
      GEMMI8_A64_DOT_4X16_ASM(OP, GEMMI8_MCA_NAME("s32"));                              \
    } else if (OUT == gemmi8_a64_out_fixedpoint) {                                           \
      GEMMI8_A64_DOT_4X16_ASM(OP, GEMMI8_MCA_NAME("fixedpoint"));                            \
    } else {                                                                            \
      GEMMI8_A64_DOT_4X16_ASM(OP, GEMMI8_MCA_NAME("fp32"));                             \
    }                                                                                   \
  } while (0)

static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_core_neondot(const int OUT, const size_t MR,
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
      GEMMI8_A64_DOT_4X16("sdot");
    } else {
      GEMMI8_A64_DOT_4X16("udot");
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < 4; i++) ap[i] += k - k % 16;
    kc = k % 16;
  } else {
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) {
      const int32x4_t vbias = vld1q_s32(bias + 4 * j);
#pragma GCC unroll 16
      for (size_t i = 0; i < MR; i++) vacc[i][j] = vbias;
    }
  }
  /* narrow tiles (and any MR but 4) */
  for (; kc >= 16; kc -= 16) {
    if (MR != 4) GEMMI8_A64_MCA_BEGIN(OUT); /* the small-M tiles' loop */
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
  if (MR != 4) GEMMI8_MCA_END();
  if (kc != 0) {
    int8x16_t va[16];
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      va[i] = vreinterpretq_s8_u8(gemmi8_a64_load_tail(ap[i], kc, k >= 16));
    }
    /* the weights are padded with zeros to a whole group of 4 */
    GEMMI8_A64_DOT_GROUP_C(0);
    if (kc > 4) GEMMI8_A64_DOT_GROUP_C(1);
    if (kc > 8) GEMMI8_A64_DOT_GROUP_C(2);
    if (kc > 12) GEMMI8_A64_DOT_GROUP_C(3);
  }
  if (!is_signed) gemmi8_a64_add_row_sums(MR, NJ, mr, coef, p->row_sum, vacc);
}

#define GEMMI8_QGEMM_NEONDOT_CASE(MR, NJ, SIGNED, OUT)                                     \
  case NJ:                                                                                 \
    gemmi8_qgemm_core_neondot(gemmi8_a64_out_##OUT, MR, NJ, SIGNED, mr, k, a, a_stride, w, \
                              params, vacc);                                               \
    gemmi8_a64_store(gemmi8_a64_out_##OUT, MR, NJ, 16, SIGNED, mr, nr, c, c_stride,        \
                     params, vacc);                                                        \
    break;

/* One kernel: OUT is s32, fixedpoint or fp32; SIGNED 1 for qs8, 0 for qu8. */
#define GEMMI8_QGEMM_NEONDOT_KERNEL(fn, MR, SIGNED, OUT)                                   \
  void fn(size_t mr, size_t nr, size_t k, const void* a, size_t a_stride, const void* w,  \
          void* c, size_t c_stride, const struct gemmi8_qparams* params)                 \
  {                                                                                      \
    int32x4_t vacc[MR][4];                                                               \
    switch ((nr + 3) / 4) {                                                              \
      GEMMI8_QGEMM_NEONDOT_CASE(MR, 1, SIGNED, OUT)                                      \
      GEMMI8_QGEMM_NEONDOT_CASE(MR, 2, SIGNED, OUT)                                      \
      GEMMI8_QGEMM_NEONDOT_CASE(MR, 3, SIGNED, OUT)                                      \
      default:                                                                           \
      GEMMI8_QGEMM_NEONDOT_CASE(MR, 4, SIGNED, OUT)                                      \
    }                                                                                    \
  }

/* Small-M tiles: the full-width case only (columns past nr are neither loaded from
 * the parameters nor stored), for a quarter of the code. */
#define GEMMI8_QGEMM_NEONDOT_KERNEL_FULL(fn, MR, SIGNED, OUT)                              \
  void fn(size_t mr, size_t nr, size_t k, const void* a, size_t a_stride, const void* w,  \
          void* c, size_t c_stride, const struct gemmi8_qparams* params)                 \
  {                                                                                      \
    int32x4_t vacc[MR][4];                                                               \
    switch (4) { GEMMI8_QGEMM_NEONDOT_CASE(MR, 4, SIGNED, OUT) }                         \
  }

#endif
