/*
 * Binary GEMM, 4x4 with depth words in pairs (c2), ARMv8 NEON: int32, float and
 * sign-bit outputs. Also used by the neondot and i8mm levels.
 *
 *   acc[i][j] = k - 2 * popcount(a[i] XOR w[j]) over the k real bits
 * Packed block (the binary layout with kr = 2): for each pair of depth words, 4
 * columns of two consecutive words (column j's words 2p, 2p + 1 at 8 * p + 2 * j,
 * 2 * j + 1); an odd word count ends with a zero word. A row of a holds consecutive
 * words, so one plain 128-bit load of a row (no broadcast) meets one 128-bit load of
 * a column: EOR + CNT give 16 byte counts, UADALP adds them in pairs into the 8
 * uint16 lanes of vcnt<i>x<j> (lanes 0-3 from the first word, 4-7 from the second),
 * 16 accumulators. A lane gains at most 16 per pair, so every 4095 pairs the counts
 * move to uint32 totals.
 * Depth: the asm loop takes the pairs before the one holding the last word; the last
 * one or two words are then read in bounds (one 64-bit or one 128-bit load a row),
 * the last masked to the real bits (the weights' padding is 0).
 *
 * Registers in the loop: vcnt<i>x<j> (16 of v0..v15, the compiler's choice), va<i>
 * (v16..v19), vb<j> (v20..v23), v24..v31 for the EOR / CNT results. Rows past mr
 * alias row mr - 1. Outputs: int32; float acc * scale + bias as FMUL then FADD (two
 * roundings, no FMLA); sign bits of that float, written into the row's word at bit
 * params->n0 (4 | 64: never straddles).
 */
#include "q8-neon.h"

#define MR 4
#define NR 4
/* pairs of words per chunk: 4095 * 16 < 2^16 */
#define CHUNK 4095

#define GEMMI8_MCA_NAME(out) "gemmi8_bin_gemm_" out "_ukernel_4x4c2__neon:MACS=2048"

/* One pair of depth words in two halves (rows 0-1, rows 2-3), each eight EOR, eight
 * CNT and eight UADALP through the scratch registers v24..v31: consecutive
 * instructions are independent, which the in-order cores need. Loads without
 * writeback (cheaper on Cortex-A55), the pointers moved by separate adds. */
#define GEMMI8_A64_EOR(T, VA, VB) "eor " T ".16b, " VA ".16b, " VB ".16b\n\t"
#define GEMMI8_A64_CNT(T) "cnt " T ".16b, " T ".16b\n\t"
#define GEMMI8_A64_UADALP(ACC, T) "uadalp %[" ACC "].8h, " T ".16b\n\t"
#define GEMMI8_A64_BIN_4X4C2_PAIR \
  "ldr q16, [%[a0]]\n\t" "ldr q20, [%[w]]\n\t" "ldr q17, [%[a1]]\n\t" \
  "ldr q21, [%[w], #16]\n\t" "ldr q22, [%[w], #32]\n\t" "ldr q23, [%[w], #48]\n\t" \
  "ldr q18, [%[a2]]\n\t" "ldr q19, [%[a3]]\n\t" \
  GEMMI8_A64_EOR("v24", "v16", "v20") GEMMI8_A64_EOR("v25", "v16", "v21") GEMMI8_A64_EOR("v26", "v16", "v22") GEMMI8_A64_EOR("v27", "v16", "v23") \
  GEMMI8_A64_EOR("v28", "v17", "v20") GEMMI8_A64_EOR("v29", "v17", "v21") GEMMI8_A64_EOR("v30", "v17", "v22") GEMMI8_A64_EOR("v31", "v17", "v23") \
  "add %[a0], %[a0], #16\n\t" "add %[a1], %[a1], #16\n\t" "add %[a2], %[a2], #16\n\t" \
  GEMMI8_A64_CNT("v24") GEMMI8_A64_CNT("v25") GEMMI8_A64_CNT("v26") GEMMI8_A64_CNT("v27") GEMMI8_A64_CNT("v28") GEMMI8_A64_CNT("v29") GEMMI8_A64_CNT("v30") GEMMI8_A64_CNT("v31") \
  GEMMI8_A64_UADALP("vcnt0x0", "v24") GEMMI8_A64_UADALP("vcnt0x1", "v25") GEMMI8_A64_UADALP("vcnt0x2", "v26") GEMMI8_A64_UADALP("vcnt0x3", "v27") \
  GEMMI8_A64_UADALP("vcnt1x0", "v28") GEMMI8_A64_UADALP("vcnt1x1", "v29") GEMMI8_A64_UADALP("vcnt1x2", "v30") GEMMI8_A64_UADALP("vcnt1x3", "v31") \
  "add %[a3], %[a3], #16\n\t" "add %[w], %[w], #64\n\t" \
  GEMMI8_A64_EOR("v24", "v18", "v20") GEMMI8_A64_EOR("v25", "v18", "v21") GEMMI8_A64_EOR("v26", "v18", "v22") GEMMI8_A64_EOR("v27", "v18", "v23") \
  GEMMI8_A64_EOR("v28", "v19", "v20") GEMMI8_A64_EOR("v29", "v19", "v21") GEMMI8_A64_EOR("v30", "v19", "v22") GEMMI8_A64_EOR("v31", "v19", "v23") \
  GEMMI8_A64_CNT("v24") GEMMI8_A64_CNT("v25") GEMMI8_A64_CNT("v26") GEMMI8_A64_CNT("v27") GEMMI8_A64_CNT("v28") GEMMI8_A64_CNT("v29") GEMMI8_A64_CNT("v30") GEMMI8_A64_CNT("v31") \
  GEMMI8_A64_UADALP("vcnt2x0", "v24") GEMMI8_A64_UADALP("vcnt2x1", "v25") GEMMI8_A64_UADALP("vcnt2x2", "v26") GEMMI8_A64_UADALP("vcnt2x3", "v27") \
  GEMMI8_A64_UADALP("vcnt3x0", "v28") GEMMI8_A64_UADALP("vcnt3x1", "v29") GEMMI8_A64_UADALP("vcnt3x2", "v30") GEMMI8_A64_UADALP("vcnt3x3", "v31")

#define GEMMI8_A64_BIN_4X4C2_ASM(NAME)                                                     \
  __asm__ volatile(                                                                        \
      "movi %[vcnt0x0].8h, #0\n\t" "movi %[vcnt0x1].8h, #0\n\t"                            \
      "movi %[vcnt0x2].8h, #0\n\t" "movi %[vcnt0x3].8h, #0\n\t"                            \
      "movi %[vcnt1x0].8h, #0\n\t" "movi %[vcnt1x1].8h, #0\n\t"                            \
      "movi %[vcnt1x2].8h, #0\n\t" "movi %[vcnt1x3].8h, #0\n\t"                            \
      "movi %[vcnt2x0].8h, #0\n\t" "movi %[vcnt2x1].8h, #0\n\t"                            \
      "movi %[vcnt2x2].8h, #0\n\t" "movi %[vcnt2x3].8h, #0\n\t"                            \
      "movi %[vcnt3x0].8h, #0\n\t" "movi %[vcnt3x1].8h, #0\n\t"                            \
      "movi %[vcnt3x2].8h, #0\n\t" "movi %[vcnt3x3].8h, #0\n\t"                            \
      GEMMI8_MCA_BEGIN_ASM(NAME)                                                           \
      ".Lgemmi8_bin_loop%=:\n\t"                                                           \
      GEMMI8_A64_BIN_4X4C2_PAIR                                                            \
      "subs %[pairs], %[pairs], #1\n\t"                                                    \
      "b.ne .Lgemmi8_bin_loop%=\n\t"                                                       \
      GEMMI8_MCA_END_ASM()                                                                 \
      : [vcnt0x0] "=w"(vcnt[0][0]), [vcnt0x1] "=w"(vcnt[0][1]),                            \
        [vcnt0x2] "=w"(vcnt[0][2]), [vcnt0x3] "=w"(vcnt[0][3]),                            \
        [vcnt1x0] "=w"(vcnt[1][0]), [vcnt1x1] "=w"(vcnt[1][1]),                            \
        [vcnt1x2] "=w"(vcnt[1][2]), [vcnt1x3] "=w"(vcnt[1][3]),                            \
        [vcnt2x0] "=w"(vcnt[2][0]), [vcnt2x1] "=w"(vcnt[2][1]),                            \
        [vcnt2x2] "=w"(vcnt[2][2]), [vcnt2x3] "=w"(vcnt[2][3]),                            \
        [vcnt3x0] "=w"(vcnt[3][0]), [vcnt3x1] "=w"(vcnt[3][1]),                            \
        [vcnt3x2] "=w"(vcnt[3][2]), [vcnt3x3] "=w"(vcnt[3][3]),                            \
        [a0] "+r"(ap[0]), [a1] "+r"(ap[1]), [a2] "+r"(ap[2]), [a3] "+r"(ap[3]),            \
        [w] "+r"(wk), [pairs] "+r"(pairs)                                                  \
      :                                                                                    \
      : "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26",       \
        "v27", "v28", "v29", "v30", "v31", "cc", "memory")

/* Adds the uint16 counts of each row (8 lanes a column) to its uint32 totals of
 * columns 0-3. */
static GEMMI8_ALWAYS_INLINE void flush(uint16x8_t vcnt[MR][4], uint32x4_t vtotal[MR])
{
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    const uint32x4_t v01 = vpaddq_u32(vpaddlq_u16(vcnt[i][0]), vpaddlq_u16(vcnt[i][1]));
    const uint32x4_t v23 = vpaddq_u32(vpaddlq_u16(vcnt[i][2]), vpaddlq_u16(vcnt[i][3]));
    vtotal[i] = vaddq_u32(vtotal[i], vpaddq_u32(v01, v23));
  }
}

/* vacc[i][0] = k - 2 * popcount, columns 0-3 of row i. */
static GEMMI8_ALWAYS_INLINE void accumulate(size_t mr, size_t k,
                                            const uint64_t* a, size_t a_stride,
                                            const void* w, int32x4_t vacc[][4])
{
  const uint64_t* ap[MR];
  ap[0] = a;
#pragma GCC unroll 4
  for (size_t i = 1; i < MR; i++) ap[i] = i < mr ? ap[i - 1] + a_stride : ap[i - 1];
  const uint64_t* wk = (const uint64_t*) w;
  uint32x4_t vtotal[MR];
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) vtotal[i] = vdupq_n_u32(0);
  uint16x8_t vcnt[MR][4];
  /* the pairs before the one with the last word, in chunks */
  const size_t words = GEMMI8_BIN_WORDS(k);
  for (size_t left = (words - 1) / 2; left != 0;) {
    size_t pairs = left < CHUNK ? left : CHUNK;
    left -= pairs;
    GEMMI8_A64_BIN_4X4C2_ASM(GEMMI8_MCA_NAME("s32"));
    flush(vcnt, vtotal);
  }
  /* the last pair: two words, or one (then the weights' second word is 0), the last
   * word masked to the real bits */
  const uint64_t last = (k % 64) ? (UINT64_C(1) << (k % 64)) - 1 : ~UINT64_C(0);
  const int two = words % 2 == 0;
  const uint64x2_t vmask =
      vcombine_u64(vcreate_u64(two ? ~UINT64_C(0) : last), vcreate_u64(two ? last : 0));
  uint8x16_t vb[NR];
#pragma GCC unroll 4
  for (size_t j = 0; j < NR; j++) vb[j] = vld1q_u8((const uint8_t*) (wk + 2 * j));
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    const uint64x2_t va64 = two ? vld1q_u64(ap[i]) : vcombine_u64(vld1_u64(ap[i]), vcreate_u64(0));
    const uint8x16_t va = vreinterpretq_u8_u64(vandq_u64(va64, vmask));
#pragma GCC unroll 4
    for (size_t j = 0; j < NR; j++) vcnt[i][j] = vpaddlq_u8(vcntq_u8(veorq_u8(va, vb[j])));
  }
  flush(vcnt, vtotal);
  const int32x4_t vk = vdupq_n_s32((int32_t) k);
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    const int32x4_t vcount = vreinterpretq_s32_u32(vtotal[i]);
    vacc[i][0] = vsubq_s32(vk, vaddq_s32(vcount, vcount));
  }
}

/* float acc * scale + bias (two roundings) of columns 0-3 */
static GEMMI8_ALWAYS_INLINE void affine(size_t nr, const struct gemmi8_bparams* p,
                                        int32x4_t vacc[][4], float32x4_t vout[MR])
{
  int32x4_t vscale, vbias;
  if (p->scale != NULL) {
    gemmi8_a64_load_channels(1, p->scale, 1, nr, &vscale);
  } else {
    vscale = vreinterpretq_s32_f32(vdupq_n_f32(1.0f));
  }
  if (p->bias != NULL) {
    gemmi8_a64_load_channels(1, p->bias, 1, nr, &vbias);
  } else {
    vbias = vreinterpretq_s32_f32(vdupq_n_f32(0.0f));
  }
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    const float32x4_t vproduct =
        vmulq_f32(vcvtq_f32_s32(vacc[i][0]), vreinterpretq_f32_s32(vscale));
    vout[i] = vaddq_f32(vproduct, vreinterpretq_f32_s32(vbias));
  }
}

/* The three kernels enter one body (the loop compiled once), the output kind in the
 * bits of mr from GEMMI8_A64_OUT_SHIFT up (q8-neon.h). */
static GEMMI8_A64_NOINLINE void gemmi8_bin_gemm_4x4c2__neon_body(
    size_t mr_out, size_t nr, size_t k, const uint64_t* a, size_t a_stride, const void* w,
    void* c, size_t c_stride, const struct gemmi8_bparams* params)
{
  const int out = GEMMI8_A64_BODY_OUT(mr_out);
  const size_t mr = GEMMI8_A64_BODY_MR(mr_out);
  int32x4_t vacc[MR][4];
  accumulate(mr, k, a, a_stride, w, vacc);
  if (out == gemmi8_boutput_s32) {
    gemmi8_a64_store_s32(MR, 1, mr, nr, c, c_stride, vacc);
    return;
  }
  float32x4_t vout[MR];
  affine(nr, params, vacc, vout);
  if (out == gemmi8_boutput_f32) {
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; i++) vacc[i][0] = vreinterpretq_s32_f32(vout[i]);
    gemmi8_a64_store_s32(MR, 1, mr, nr, c, c_stride, vacc);
    return;
  }
  static const uint32_t weights[4] = {1, 2, 4, 8};
  const uint32x4_t vweight = vld1q_u32(weights);
  const unsigned offset = (unsigned) (params->n0 % 64);
  const uint64_t tile = (UINT64_C(1) << nr) - 1; /* nr <= 4 */
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    if (i >= mr) continue;
    /* NaN compares false: a bit is set only for a negative result */
    const uint32x4_t vneg = vcltq_f32(vout[i], vdupq_n_f32(0.0f));
    const uint64_t bits = vaddvq_u32(vandq_u32(vneg, vweight)) & tile;
    uint64_t* word = (uint64_t*) ((uint8_t*) c + i * c_stride) + params->n0 / 64;
    *word = (*word & ~(tile << offset)) | (bits << offset);
  }
}

#define GEMMI8_A64_BGEMM_ENTRY(fn, OUT)                                                    \
  void fn(size_t mr, size_t nr, size_t k, const uint64_t* a, size_t a_stride, const void* w, \
          void* c, size_t c_stride, const struct gemmi8_bparams* params)                  \
  {                                                                                       \
    gemmi8_bin_gemm_4x4c2__neon_body(mr | (size_t) OUT << GEMMI8_A64_OUT_SHIFT, nr, k, a,  \
                                     a_stride, w, c, c_stride, params);                   \
  }

GEMMI8_A64_BGEMM_ENTRY(gemmi8_bin_gemm_s32_ukernel_4x4c2__neon, gemmi8_boutput_s32)
GEMMI8_A64_BGEMM_ENTRY(gemmi8_bin_gemm_f32_ukernel_4x4c2__neon, gemmi8_boutput_f32)
GEMMI8_A64_BGEMM_ENTRY(gemmi8_bin_gemm_bits_ukernel_4x4c2__neon, gemmi8_boutput_bits)
