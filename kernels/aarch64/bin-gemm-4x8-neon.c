/*
 * Binary GEMM, 4x8 (64-bit words of depth), ARMv8 NEON: int32, float and sign-bit
 * outputs. Also used by the neondot and i8mm levels.
 *
 *   acc[i][j] = k - 2 * popcount(a[i] XOR w[j]) over the k real bits
 * Packed block (the generic binary layout): for each depth word, 8 words, one per
 * column. A vector holds one depth word of two columns; a row's word is broadcast
 * (LD1R), and EOR + CNT give 16 byte counts that UADALP adds in pairs into 8 uint16
 * lanes, 4 per column: vcnt<i>x<2j,2j+1> = vcnt[i][j], 16 accumulators. A uint16 lane
 * gains at most 16 per word, so every 4095 words the counts move to uint32 totals.
 * The last depth word of a is masked to the real bits (the weights' padding is 0).
 *
 * Registers in the loop: va<i> (v16..v19), vb<2j,2j+1> (v20..v23), v24..v31 for the
 * EOR / CNT results. Rows past mr alias row mr - 1. Outputs: int32; float
 * acc * scale + bias as FMUL then FADD (two roundings, no FMLA); sign bits of that
 * float, written into the row's word at bit params->n0 (8 | 64: never straddles).
 */
#include "q8-neon.h"

#define MR 4
#define NR 8
/* words per chunk: 4095 * 16 < 2^16 */
#define CHUNK 4095

#define GEMMI8_MCA_NAME(out) "gemmi8_bin_gemm_" out "_ukernel_4x8__neon"
enum { out_s32, out_f32, out_bits };

/* One depth word in two halves (rows 0-1, rows 2-3), each eight EOR, eight CNT and
 * eight UADALP into the scratch registers v24..v31: consecutive instructions are
 * independent, which the in-order Cortex-A55 needs. */
#define GEMMI8_A64_EOR(T, VA, VB) "eor " T ".16b, " VA ".16b, " VB ".16b\n\t"
#define GEMMI8_A64_CNT(T) "cnt " T ".16b, " T ".16b\n\t"
#define GEMMI8_A64_UADALP(ACC, T) "uadalp %[" ACC "].8h, " T ".16b\n\t"
#define GEMMI8_A64_BIN_4X8_WORD \
  "ld1r {v16.2d}, [%[a0]]\n\t" "ldr q20, [%[w]]\n\t" "ld1r {v17.2d}, [%[a1]]\n\t" \
  "ldr q21, [%[w], #16]\n\t" "ldr q22, [%[w], #32]\n\t" "ldr q23, [%[w], #48]\n\t" \
  "ld1r {v18.2d}, [%[a2]]\n\t" "ld1r {v19.2d}, [%[a3]]\n\t" \
  GEMMI8_A64_EOR("v24", "v16", "v20") GEMMI8_A64_EOR("v25", "v16", "v21") GEMMI8_A64_EOR("v26", "v16", "v22") GEMMI8_A64_EOR("v27", "v16", "v23") \
  GEMMI8_A64_EOR("v28", "v17", "v20") GEMMI8_A64_EOR("v29", "v17", "v21") GEMMI8_A64_EOR("v30", "v17", "v22") GEMMI8_A64_EOR("v31", "v17", "v23") \
  "add %[a0], %[a0], #8\n\t" "add %[a1], %[a1], #8\n\t" "add %[a2], %[a2], #8\n\t" \
  GEMMI8_A64_CNT("v24") GEMMI8_A64_CNT("v25") GEMMI8_A64_CNT("v26") GEMMI8_A64_CNT("v27") GEMMI8_A64_CNT("v28") GEMMI8_A64_CNT("v29") GEMMI8_A64_CNT("v30") GEMMI8_A64_CNT("v31") \
  GEMMI8_A64_UADALP("vcnt0x01", "v24") GEMMI8_A64_UADALP("vcnt0x23", "v25") GEMMI8_A64_UADALP("vcnt0x45", "v26") GEMMI8_A64_UADALP("vcnt0x67", "v27") \
  GEMMI8_A64_UADALP("vcnt1x01", "v28") GEMMI8_A64_UADALP("vcnt1x23", "v29") GEMMI8_A64_UADALP("vcnt1x45", "v30") GEMMI8_A64_UADALP("vcnt1x67", "v31") \
  "add %[a3], %[a3], #8\n\t" "add %[w], %[w], #64\n\t" \
  GEMMI8_A64_EOR("v24", "v18", "v20") GEMMI8_A64_EOR("v25", "v18", "v21") GEMMI8_A64_EOR("v26", "v18", "v22") GEMMI8_A64_EOR("v27", "v18", "v23") \
  GEMMI8_A64_EOR("v28", "v19", "v20") GEMMI8_A64_EOR("v29", "v19", "v21") GEMMI8_A64_EOR("v30", "v19", "v22") GEMMI8_A64_EOR("v31", "v19", "v23") \
  GEMMI8_A64_CNT("v24") GEMMI8_A64_CNT("v25") GEMMI8_A64_CNT("v26") GEMMI8_A64_CNT("v27") GEMMI8_A64_CNT("v28") GEMMI8_A64_CNT("v29") GEMMI8_A64_CNT("v30") GEMMI8_A64_CNT("v31") \
  GEMMI8_A64_UADALP("vcnt2x01", "v24") GEMMI8_A64_UADALP("vcnt2x23", "v25") GEMMI8_A64_UADALP("vcnt2x45", "v26") GEMMI8_A64_UADALP("vcnt2x67", "v27") \
  GEMMI8_A64_UADALP("vcnt3x01", "v28") GEMMI8_A64_UADALP("vcnt3x23", "v29") GEMMI8_A64_UADALP("vcnt3x45", "v30") GEMMI8_A64_UADALP("vcnt3x67", "v31")

#define GEMMI8_A64_BIN_4X8_ASM(NAME)                                                       \
  __asm__ volatile(                                                                        \
      "movi %[vcnt0x01].8h, #0\n\t" "movi %[vcnt0x23].8h, #0\n\t"                          \
      "movi %[vcnt0x45].8h, #0\n\t" "movi %[vcnt0x67].8h, #0\n\t"                          \
      "movi %[vcnt1x01].8h, #0\n\t" "movi %[vcnt1x23].8h, #0\n\t"                          \
      "movi %[vcnt1x45].8h, #0\n\t" "movi %[vcnt1x67].8h, #0\n\t"                          \
      "movi %[vcnt2x01].8h, #0\n\t" "movi %[vcnt2x23].8h, #0\n\t"                          \
      "movi %[vcnt2x45].8h, #0\n\t" "movi %[vcnt2x67].8h, #0\n\t"                          \
      "movi %[vcnt3x01].8h, #0\n\t" "movi %[vcnt3x23].8h, #0\n\t"                          \
      "movi %[vcnt3x45].8h, #0\n\t" "movi %[vcnt3x67].8h, #0\n\t"                          \
      GEMMI8_MCA_BEGIN_ASM(NAME)                                                           \
      ".Lgemmi8_bin_loop%=:\n\t"                                                           \
      GEMMI8_A64_BIN_4X8_WORD                                                              \
      "subs %[words], %[words], #1\n\t"                                                    \
      "b.ne .Lgemmi8_bin_loop%=\n\t"                                                       \
      GEMMI8_MCA_END_ASM()                                                                 \
      : [vcnt0x01] "=w"(vcnt[0][0]), [vcnt0x23] "=w"(vcnt[0][1]),                          \
        [vcnt0x45] "=w"(vcnt[0][2]), [vcnt0x67] "=w"(vcnt[0][3]),                          \
        [vcnt1x01] "=w"(vcnt[1][0]), [vcnt1x23] "=w"(vcnt[1][1]),                          \
        [vcnt1x45] "=w"(vcnt[1][2]), [vcnt1x67] "=w"(vcnt[1][3]),                          \
        [vcnt2x01] "=w"(vcnt[2][0]), [vcnt2x23] "=w"(vcnt[2][1]),                          \
        [vcnt2x45] "=w"(vcnt[2][2]), [vcnt2x67] "=w"(vcnt[2][3]),                          \
        [vcnt3x01] "=w"(vcnt[3][0]), [vcnt3x23] "=w"(vcnt[3][1]),                          \
        [vcnt3x45] "=w"(vcnt[3][2]), [vcnt3x67] "=w"(vcnt[3][3]),                          \
        [a0] "+r"(ap[0]), [a1] "+r"(ap[1]), [a2] "+r"(ap[2]), [a3] "+r"(ap[3]),            \
        [w] "+r"(wk), [words] "+r"(words)                                                  \
      :                                                                                    \
      : "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26",       \
        "v27", "v28", "v29", "v30", "v31", "cc", "memory")

/* Adds the uint16 counts of each row to its uint32 totals of columns 0-3 and 4-7. */
static GEMMI8_ALWAYS_INLINE void flush(uint16x8_t vcnt[MR][4], uint32x4_t vtotal[MR][2])
{
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    vtotal[i][0] = vaddq_u32(vtotal[i][0], vpaddq_u32(vpaddlq_u16(vcnt[i][0]),
                                                      vpaddlq_u16(vcnt[i][1])));
    vtotal[i][1] = vaddq_u32(vtotal[i][1], vpaddq_u32(vpaddlq_u16(vcnt[i][2]),
                                                      vpaddlq_u16(vcnt[i][3])));
  }
}

/* acc[i][0..1] = k - 2 * popcount, columns 0-3 and 4-7 of row i. */
static GEMMI8_ALWAYS_INLINE void accumulate(const int OUT, size_t mr, size_t k,
                                            const uint64_t* a, size_t a_stride,
                                            const void* w, int32x4_t vacc[][4])
{
  const uint64_t* ap[MR];
  ap[0] = a;
#pragma GCC unroll 4
  for (size_t i = 1; i < MR; i++) ap[i] = i < mr ? ap[i - 1] + a_stride : ap[i - 1];
  const uint64_t* wk = (const uint64_t*) w;
  uint32x4_t vtotal[MR][2];
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) vtotal[i][0] = vtotal[i][1] = vdupq_n_u32(0);
  uint16x8_t vcnt[MR][4];
  /* every word but the last, in chunks */
  for (size_t left = GEMMI8_BIN_WORDS(k) - 1; left != 0;) {
    size_t words = left < CHUNK ? left : CHUNK;
    left -= words;
    if (OUT == out_s32) {
      GEMMI8_A64_BIN_4X8_ASM(GEMMI8_MCA_NAME("s32"));
    } else if (OUT == out_f32) {
      GEMMI8_A64_BIN_4X8_ASM(GEMMI8_MCA_NAME("f32"));
    } else {
      GEMMI8_A64_BIN_4X8_ASM(GEMMI8_MCA_NAME("bits"));
    }
    flush(vcnt, vtotal);
  }
  /* the last word, masked to the real bits */
  const uint64_t last = (k % 64) ? (UINT64_C(1) << (k % 64)) - 1 : ~UINT64_C(0);
  uint8x16_t vb[4];
#pragma GCC unroll 4
  for (size_t j = 0; j < 4; j++) vb[j] = vld1q_u8((const uint8_t*) (wk + 2 * j));
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    const uint8x16_t va = vreinterpretq_u8_u64(vdupq_n_u64(*ap[i] & last));
#pragma GCC unroll 4
    for (size_t j = 0; j < 4; j++) vcnt[i][j] = vpaddlq_u8(vcntq_u8(veorq_u8(va, vb[j])));
  }
  flush(vcnt, vtotal);
  const int32x4_t vk = vdupq_n_s32((int32_t) k);
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
#pragma GCC unroll 2
    for (size_t j = 0; j < 2; j++) {
      const int32x4_t vcount = vreinterpretq_s32_u32(vtotal[i][j]);
      vacc[i][j] = vsubq_s32(vk, vaddq_s32(vcount, vcount));
    }
  }
}

/* float acc * scale + bias (two roundings) of columns 4j..4j+3 */
static GEMMI8_ALWAYS_INLINE void affine(size_t nr, const struct gemmi8_bparams* p,
                                        int32x4_t vacc[][4], float32x4_t vout[][2])
{
  int32x4_t vscale[2], vbias[2];
  if (p->scale != NULL) {
    gemmi8_a64_load_channels(2, p->scale, 1, nr, vscale);
  } else {
    vscale[0] = vscale[1] = vreinterpretq_s32_f32(vdupq_n_f32(1.0f));
  }
  if (p->bias != NULL) {
    gemmi8_a64_load_channels(2, p->bias, 1, nr, vbias);
  } else {
    vbias[0] = vbias[1] = vreinterpretq_s32_f32(vdupq_n_f32(0.0f));
  }
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
#pragma GCC unroll 2
    for (size_t j = 0; j < 2; j++) {
      const float32x4_t vproduct =
          vmulq_f32(vcvtq_f32_s32(vacc[i][j]), vreinterpretq_f32_s32(vscale[j]));
      vout[i][j] = vaddq_f32(vproduct, vreinterpretq_f32_s32(vbias[j]));
    }
  }
}

void gemmi8_bin_gemm_s32_ukernel_4x8__neon(size_t mr, size_t nr, size_t k, const uint64_t* a,
                                           size_t a_stride, const void* w, void* c,
                                           size_t c_stride, const struct gemmi8_bparams* params)
{
  (void) params;
  int32x4_t vacc[MR][4];
  accumulate(out_s32, mr, k, a, a_stride, w, vacc);
  gemmi8_a64_store_s32(MR, 2, mr, nr, c, c_stride, vacc);
}

void gemmi8_bin_gemm_f32_ukernel_4x8__neon(size_t mr, size_t nr, size_t k, const uint64_t* a,
                                           size_t a_stride, const void* w, void* c,
                                           size_t c_stride, const struct gemmi8_bparams* params)
{
  int32x4_t vacc[MR][4];
  accumulate(out_f32, mr, k, a, a_stride, w, vacc);
  float32x4_t vout[MR][2];
  affine(nr, params, vacc, vout);
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    vacc[i][0] = vreinterpretq_s32_f32(vout[i][0]);
    vacc[i][1] = vreinterpretq_s32_f32(vout[i][1]);
  }
  gemmi8_a64_store_s32(MR, 2, mr, nr, c, c_stride, vacc);
}

void gemmi8_bin_gemm_bits_ukernel_4x8__neon(size_t mr, size_t nr, size_t k, const uint64_t* a,
                                            size_t a_stride, const void* w, void* c,
                                            size_t c_stride, const struct gemmi8_bparams* params)
{
  int32x4_t vacc[MR][4];
  accumulate(out_bits, mr, k, a, a_stride, w, vacc);
  float32x4_t vout[MR][2];
  affine(nr, params, vacc, vout);
  static const uint32_t weights[8] = {1, 2, 4, 8, 16, 32, 64, 128};
  const uint32x4_t vweight0 = vld1q_u32(weights), vweight1 = vld1q_u32(weights + 4);
  const unsigned offset = (unsigned) (params->n0 % 64);
  const uint64_t tile = (UINT64_C(1) << nr) - 1; /* nr <= 8 */
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    if (i >= mr) continue;
    /* NaN compares false: a bit is set only for a negative result */
    const uint32x4_t vneg0 = vcltq_f32(vout[i][0], vdupq_n_f32(0.0f));
    const uint32x4_t vneg1 = vcltq_f32(vout[i][1], vdupq_n_f32(0.0f));
    const uint64_t bits = vaddvq_u32(vorrq_u32(vandq_u32(vneg0, vweight0),
                                               vandq_u32(vneg1, vweight1))) & tile;
    uint64_t* word = (uint64_t*) ((uint8_t*) c + i * c_stride) + params->n0 / 64;
    *word = (*word & ~(tile << offset)) | (bits << offset);
  }
}
