/*
 * Binary convolution (igemm), 4x4 with depth words in pairs (c2), ARMv8 NEON: int32,
 * float (clamped) and threshold-bit outputs. The tile of the binary GEMM kernel
 * (bin-gemm-4x4c2-neon.c) with A through ks taps of 4 row pointers. See
 * gemmi8_bigemm_ukernel_fn.
 *
 *   acc[i][j] = ks * kc - 2 * popcount(a[i] XOR w[j]) - corr[i][j]
 * Packed block: for each tap, round_up(GEMMI8_BIN_WORDS(kc), 2) words of depth in
 * pairs, each pair 4 columns of two consecutive words (column j's at 8 * p + 2 * j,
 * 2 * j + 1); an odd word count ends with a zero word.
 *
 * One pair of depth words of the 4 x 4 tile is 16 EOR + CNT of 128-bit row and column
 * operands, then the 16 byte counts are summed by a tree of ADDP (8 + 4 + 2: each level
 * halves the bytes of a count) into two vectors whose byte pairs hold one (row, column)
 * count each, and two UADALP add them into 8 uint16 lanes:
 *   vcnt01 = {row 0 columns 0-3, row 1 columns 0-3}, vcnt23 = rows 2 and 3.
 * 48 vector instructions a pair, as with a UADALP per count, but only two
 * accumulators: the 16 EOR results of a pair fit in registers, so the loop runs its
 * EOR, then CNT, then ADDP groups with one change from long to short latency a pair,
 * which the in-order cores (A55: an instruction completes after every older one)
 * would otherwise pay at each change. The ADDP (latency 3 there, as loads and integer
 * adds) dual-issue with the pointer updates and loads of the next pair; the tree's
 * last level is added into the counts during the next pair's CNT group.
 * A lane gains at most 128 a pair: every 511 pairs the counts move to uint32 totals.
 *
 * Depth of a tap: the asm loop takes the pairs of whole words (kc / 128); the one or
 * two words left are read in bounds (two 64-bit loads a row, a lone word read twice),
 * the last masked to the kc bits and a lone word's second copy to 0 (the weights'
 * padding word is 0 too). The loop loads each pair ahead (software pipelined) and
 * ends with the last pair's arithmetic without loads, so nothing past a row is read.
 *
 * Registers in the loop: t(r, j) = v8 + 4r + j (EOR / CNT / ADDP), a rows v24..v27,
 * columns v28..v31, the tree's last level v4, v5; the two counts are operands
 * (v0..v3, v6, v7 are left to the compiler: they also hold the uint32 totals). Rows
 * past mr alias row mr - 1 (the driver repeats the pointers). Outputs: int32; float
 * acc * scale + bias as FMUL then FADD (two roundings, no FMLA), then the clamp as
 * compare and select (`out_min > v ? out_min : v`, then the maximum: a NaN stays, as
 * in C; FMAX / FMIN would not); bits (acc XOR flip) < threshold, written into the
 * row at bit params->n0 (the tile's bits may straddle two words).
 */
#include "q8-neon.h"

#define MR 4
#define NR 4
/* pairs of words per chunk: 511 * 128 < 2^16 */
#define CHUNK 511

#define GEMMI8_BIA64_EOR(T, VA, VB) "eor v" T ".16b, v" VA ".16b, v" VB ".16b\n\t"
#define GEMMI8_BIA64_CNT(T) "cnt v" T ".16b, v" T ".16b\n\t"
#define GEMMI8_BIA64_ADDP(T, X, Y) "addp v" T ".16b, v" X ".16b, v" Y ".16b\n\t"

/* One pair of depth words, a rows in v24..v27 and columns in v28..v31. S0..S13 are
 * the scalar instructions paired with the 14 ADDP (the next pair's pointer updates and
 * loads in the loop, nothing in the last pair). */
#define GEMMI8_BIA64_PAIR(S0, S1, S2, S3, S4, S5, S6, S7, S8, S9, S10, S11, S12, S13)   \
  GEMMI8_BIA64_EOR("8", "24", "28") GEMMI8_BIA64_EOR("9", "24", "29")                      \
  GEMMI8_BIA64_EOR("10", "24", "30") GEMMI8_BIA64_EOR("11", "24", "31")                    \
  GEMMI8_BIA64_EOR("12", "25", "28") GEMMI8_BIA64_EOR("13", "25", "29")                    \
  GEMMI8_BIA64_EOR("14", "25", "30") GEMMI8_BIA64_EOR("15", "25", "31")                    \
  GEMMI8_BIA64_EOR("16", "26", "28") GEMMI8_BIA64_EOR("17", "26", "29")                    \
  GEMMI8_BIA64_EOR("18", "26", "30") GEMMI8_BIA64_EOR("19", "26", "31")                    \
  GEMMI8_BIA64_EOR("20", "27", "28") GEMMI8_BIA64_EOR("21", "27", "29")                    \
  GEMMI8_BIA64_EOR("22", "27", "30") GEMMI8_BIA64_EOR("23", "27", "31")                    \
  GEMMI8_BIA64_CNT("8") GEMMI8_BIA64_CNT("9") GEMMI8_BIA64_CNT("10") GEMMI8_BIA64_CNT("11") \
  "uadalp %[vcnt01].8h, v4.16b\n\t"                                                        \
  GEMMI8_BIA64_CNT("12") GEMMI8_BIA64_CNT("13") GEMMI8_BIA64_CNT("14")                     \
  GEMMI8_BIA64_CNT("15") GEMMI8_BIA64_CNT("16") GEMMI8_BIA64_CNT("17")                     \
  GEMMI8_BIA64_CNT("18")                                                                   \
  "uadalp %[vcnt23].8h, v5.16b\n\t"                                                        \
  GEMMI8_BIA64_CNT("19") GEMMI8_BIA64_CNT("20") GEMMI8_BIA64_CNT("21")                     \
  GEMMI8_BIA64_CNT("22") GEMMI8_BIA64_CNT("23")                                            \
  GEMMI8_BIA64_ADDP("8", "8", "9") S0 GEMMI8_BIA64_ADDP("10", "10", "11") S1               \
  GEMMI8_BIA64_ADDP("12", "12", "13") S2 GEMMI8_BIA64_ADDP("14", "14", "15") S3            \
  GEMMI8_BIA64_ADDP("16", "16", "17") S4 GEMMI8_BIA64_ADDP("18", "18", "19") S5            \
  GEMMI8_BIA64_ADDP("20", "20", "21") S6 GEMMI8_BIA64_ADDP("22", "22", "23") S7            \
  GEMMI8_BIA64_ADDP("8", "8", "10") S8 GEMMI8_BIA64_ADDP("12", "12", "14") S9              \
  GEMMI8_BIA64_ADDP("16", "16", "18") S10 GEMMI8_BIA64_ADDP("20", "20", "22") S11          \
  GEMMI8_BIA64_ADDP("4", "8", "12") S12 GEMMI8_BIA64_ADDP("5", "16", "20") S13

/* The operands of one pair (loads without writeback, cheaper on Cortex-A55). */
#define GEMMI8_BIA64_LOAD_A0 "ldr q24, [%[a0]]\n\t"
#define GEMMI8_BIA64_LOAD_A1 "ldr q25, [%[a1]]\n\t"
#define GEMMI8_BIA64_LOAD_A2 "ldr q26, [%[a2]]\n\t"
#define GEMMI8_BIA64_LOAD_A3 "ldr q27, [%[a3]]\n\t"
#define GEMMI8_BIA64_LOAD_W0 "ldr q28, [%[w]]\n\t"
#define GEMMI8_BIA64_LOAD_W1 "ldr q29, [%[w], #16]\n\t"
#define GEMMI8_BIA64_LOAD_W2 "ldr q30, [%[w], #32]\n\t"
#define GEMMI8_BIA64_LOAD_W3 "ldr q31, [%[w], #48]\n\t"

/* pairs (>= 1) pairs of whole words at a0..a3 and w, added into vcnt01 / vcnt23. */
#define GEMMI8_BIA64_ASM(NAME)                                                             \
  __asm__ volatile(                                                                        \
      GEMMI8_BIA64_LOAD_A0 GEMMI8_BIA64_LOAD_W0 GEMMI8_BIA64_LOAD_A1 GEMMI8_BIA64_LOAD_W1   \
      GEMMI8_BIA64_LOAD_W2 GEMMI8_BIA64_LOAD_W3 GEMMI8_BIA64_LOAD_A2 GEMMI8_BIA64_LOAD_A3   \
      "movi v4.16b, #0\n\t"                                                                \
      "movi v5.16b, #0\n\t"                                                                \
      "subs %[pairs], %[pairs], #1\n\t"                                                    \
      "b.eq .Lgemmi8_bigemm_last%=\n\t"                                                    \
      GEMMI8_MCA_BEGIN_ASM(NAME)                                                           \
      ".Lgemmi8_bigemm_loop%=:\n\t"                                                        \
      GEMMI8_BIA64_PAIR("subs %[pairs], %[pairs], #1\n\t", "add %[a0], %[a0], #16\n\t",     \
                        "add %[a1], %[a1], #16\n\t", "add %[a2], %[a2], #16\n\t",           \
                        "add %[a3], %[a3], #16\n\t", "add %[w], %[w], #64\n\t",             \
                        GEMMI8_BIA64_LOAD_A0, GEMMI8_BIA64_LOAD_W0, GEMMI8_BIA64_LOAD_A1,   \
                        GEMMI8_BIA64_LOAD_W1, GEMMI8_BIA64_LOAD_W2, GEMMI8_BIA64_LOAD_W3,   \
                        GEMMI8_BIA64_LOAD_A2, GEMMI8_BIA64_LOAD_A3)                         \
      "b.ne .Lgemmi8_bigemm_loop%=\n\t"                                                    \
      GEMMI8_MCA_END_ASM()                                                                 \
      ".Lgemmi8_bigemm_last%=:\n\t"                                                        \
      GEMMI8_BIA64_PAIR("", "", "", "", "", "", "", "", "", "", "", "", "", "")            \
      "uadalp %[vcnt01].8h, v4.16b\n\t"                                                    \
      "uadalp %[vcnt23].8h, v5.16b\n\t"                                                    \
      : [vcnt01] "+w"(vcnt01), [vcnt23] "+w"(vcnt23), [a0] "+r"(a0), [a1] "+r"(a1),        \
        [a2] "+r"(a2), [a3] "+r"(a3), [w] "+r"(wk), [pairs] "+r"(n)                        \
      :                                                                                    \
      : "v4", "v5", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17",    \
        "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", \
        "v30", "v31", "cc", "memory")

/* The uint16 counts into the uint32 totals of rows 0..3 (columns 0-3 each). */
static GEMMI8_ALWAYS_INLINE void flush(uint16x8_t* vcnt01, uint16x8_t* vcnt23,
                                       uint32x4_t vtotal[MR])
{
  vtotal[0] = vaddw_u16(vtotal[0], vget_low_u16(*vcnt01));
  vtotal[1] = vaddw_high_u16(vtotal[1], *vcnt01);
  vtotal[2] = vaddw_u16(vtotal[2], vget_low_u16(*vcnt23));
  vtotal[3] = vaddw_high_u16(vtotal[3], *vcnt23);
  *vcnt01 = vdupq_n_u16(0);
  *vcnt23 = vdupq_n_u16(0);
}

/* One pair of depth words in intrinsics (the tap's last one or two words): va[i] the
 * two words of row i (already masked), wk the pair's 4 columns; the same sums as the
 * asm loop. */
static GEMMI8_ALWAYS_INLINE void count_pair(const uint8x16_t va[MR], const uint64_t* wk,
                                            uint16x8_t* vcnt01, uint16x8_t* vcnt23)
{
  uint8x16_t vb[NR];
#pragma GCC unroll 4
  for (size_t j = 0; j < NR; j++) vb[j] = vld1q_u8((const uint8_t*) (wk + 2 * j));
  uint8x16_t vy[MR];
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    const uint8x16_t vc0 = vcntq_u8(veorq_u8(va[i], vb[0]));
    const uint8x16_t vc1 = vcntq_u8(veorq_u8(va[i], vb[1]));
    const uint8x16_t vc2 = vcntq_u8(veorq_u8(va[i], vb[2]));
    const uint8x16_t vc3 = vcntq_u8(veorq_u8(va[i], vb[3]));
    vy[i] = vpaddq_u8(vpaddq_u8(vc0, vc1), vpaddq_u8(vc2, vc3));
  }
  *vcnt01 = vpadalq_u8(*vcnt01, vpaddq_u8(vy[0], vy[1]));
  *vcnt23 = vpadalq_u8(*vcnt23, vpaddq_u8(vy[2], vy[3]));
}

/* vacc[i][0] = ks * kc - 2 * popcount, columns 0-3 of row i (no corrections). */
static GEMMI8_ALWAYS_INLINE void accumulate(size_t kc, size_t ks, const uint64_t* const* a,
                                            const uint64_t* w, size_t a_offset,
                                            const void* zero, int32x4_t vacc[MR][4])
{
  const uint32_t k = (uint32_t) (ks * kc);
  const size_t words = GEMMI8_BIN_WORDS(kc);
  const size_t pairs = kc / 128;         /* pairs of whole words: the loop */
  const size_t rest = words - 2 * pairs; /* words after them: 0, 1 or 2 */
  const size_t tap_words = (words + 1) / 2 * 2 * NR;
  /* the rest's mask: {whole, last} or {last, nothing} */
  const uint64_t last = (kc % 64) ? (UINT64_C(1) << (kc % 64)) - 1 : ~UINT64_C(0);
  const uint64x2_t vmask = vcombine_u64(vcreate_u64(rest == 2 ? ~UINT64_C(0) : last),
                                        vcreate_u64(rest == 2 ? last : 0));
  uint16x8_t vcnt01 = vdupq_n_u16(0), vcnt23 = vdupq_n_u16(0);
  uint32x4_t vtotal[MR];
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) vtotal[i] = vdupq_n_u32(0);
  size_t budget = CHUNK;
  do {
    const uint64_t* ap[MR];
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; i++) {
      ap[i] = a[i];
      if ((const void*) ap[i] != zero) {
        ap[i] = (const uint64_t*) ((uintptr_t) ap[i] + a_offset);
      }
    }
    a += MR;
    for (size_t done = 0; done < pairs;) {
      if (budget == 0) {
        flush(&vcnt01, &vcnt23, vtotal);
        budget = CHUNK;
      }
      size_t n = pairs - done < budget ? pairs - done : budget;
      budget -= n;
      const uint64_t* a0 = ap[0] + 2 * done;
      const uint64_t* a1 = ap[1] + 2 * done;
      const uint64_t* a2 = ap[2] + 2 * done;
      const uint64_t* a3 = ap[3] + 2 * done;
      const uint64_t* wk = w + 2 * NR * done;
      done += n;
      GEMMI8_BIA64_ASM("gemmi8_bin_igemm_s32_ukernel_4x4c2__neon:MACS=2048");
    }
    if (rest != 0) {
      if (budget == 0) {
        flush(&vcnt01, &vcnt23, vtotal);
        budget = CHUNK;
      }
      budget--;
      /* one word: its second half reads the same word again, masked to 0 */
      uint8x16_t va[MR];
#pragma GCC unroll 4
      for (size_t i = 0; i < MR; i++) {
        const uint64_t* p = ap[i] + 2 * pairs;
        const uint64x2_t v = vcombine_u64(vld1_u64(p), vld1_u64(p + (rest - 1)));
        va[i] = vreinterpretq_u8_u64(vandq_u64(v, vmask));
      }
      count_pair(va, w + 2 * NR * pairs, &vcnt01, &vcnt23);
    }
    w += tap_words;
  } while (--ks != 0);
  flush(&vcnt01, &vcnt23, vtotal);
  /* k - 2 * count, modulo 2^32 (exact: |result| <= k <= INT32_MAX) */
  const uint32x4_t vk = vdupq_n_u32(k);
#pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    vacc[i][0] = vreinterpretq_s32_u32(vsubq_u32(vk, vshlq_n_u32(vtotal[i], 1)));
  }
}

/* nr (1..4) 32-bit values of a column array into dst. */
static GEMMI8_ALWAYS_INLINE void copy_columns(int32_t dst[4], const void* src, size_t nr)
{
  const int32_t* p = (const int32_t*) src;
#pragma GCC unroll 1
  for (size_t j = 0; j < nr; j++) dst[j] = p[j];
}

/* The tile's nr 32-bit values (int32 or float bits), zeros above: nothing past them is
 * read. */
static GEMMI8_ALWAYS_INLINE int32x4_t load_columns(const void* src, size_t nr)
{
  if (nr == NR) return vld1q_s32((const int32_t*) src);
  int32_t part[4] = {0, 0, 0, 0};
  copy_columns(part, src, nr);
  return vld1q_s32(part);
}

/* The three kernels enter one body (the loop compiled once), the output kind in the
 * bits of mr from GEMMI8_A64_OUT_SHIFT up (q8-neon.h). */
static GEMMI8_A64_NOINLINE void gemmi8_bin_igemm_4x4c2__neon_body(
    size_t mr_out, size_t nr, size_t kc, size_t ks, const uint64_t* const* a, const void* w,
    void* c, size_t c_stride, size_t a_offset, const void* zero,
    const struct gemmi8_bcparams* params)
{
  const int out = GEMMI8_A64_BODY_OUT(mr_out);
  const size_t mr = GEMMI8_A64_BODY_MR(mr_out);
  int32x4_t vacc[MR][4];
  accumulate(kc, ks, a, (const uint64_t*) w, a_offset, zero, vacc);
  if (params->corr != NULL) {
    int32_t corr[MR][4];
    memset(corr, 0, sizeof(corr));
#pragma GCC unroll 1
    for (size_t i = 0; i < mr; i++) {
      if (params->corr[i] != NULL) copy_columns(corr[i], params->corr[i], nr);
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; i++) vacc[i][0] = vsubq_s32(vacc[i][0], vld1q_s32(corr[i]));
  }
  if (out == gemmi8_boutput_bits) {
    const int32x4_t vthreshold = load_columns(params->threshold, nr);
    const int32x4_t vflip = load_columns(params->flip, nr);
    static const uint32_t weights[4] = {1, 2, 4, 8};
    const uint32x4_t vweight = vld1q_u32(weights);
    uint64_t bits[MR];
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; i++) {
      const uint32x4_t vset = vcltq_s32(veorq_s32(vacc[i][0], vflip), vthreshold);
      bits[i] = vaddvq_u32(vandq_u32(vset, vweight));
    }
    const unsigned offset = (unsigned) (params->n0 % 64);
    const uint64_t field = (UINT64_C(1) << nr) - 1; /* nr <= 4 */
#pragma GCC unroll 1
    for (size_t i = 0; i < mr; i++) {
      uint64_t* word = (uint64_t*) ((uint8_t*) c + i * c_stride) + params->n0 / 64;
      const uint64_t b = bits[i] & field;
      word[0] = (word[0] & ~(field << offset)) | (b << offset);
      if (offset + nr > 64) {
        const unsigned spill = 64 - offset;
        word[1] = (word[1] & ~(field >> spill)) | (b >> spill);
      }
    }
    return;
  }
  if (out == gemmi8_boutput_f32) {
    const float32x4_t vscale = params->scale != NULL
                                   ? vreinterpretq_f32_s32(load_columns(params->scale, nr))
                                   : vdupq_n_f32(1.0f);
    const float32x4_t vbias = params->bias != NULL
                                  ? vreinterpretq_f32_s32(load_columns(params->bias, nr))
                                  : vdupq_n_f32(0.0f);
    const float32x4_t vmin = vdupq_n_f32(params->out_min);
    const float32x4_t vmax = vdupq_n_f32(params->out_max);
#pragma GCC unroll 4
    for (size_t i = 0; i < MR; i++) {
      const float32x4_t vproduct = vmulq_f32(vcvtq_f32_s32(vacc[i][0]), vscale);
      float32x4_t v = vaddq_f32(vproduct, vbias);
      if (params->add) {
        /* the value c holds (rows past mr read row mr - 1's, never stored) */
        const uint8_t* row = (const uint8_t*) c + (i < mr ? i : mr - 1) * c_stride;
        v = vaddq_f32(vreinterpretq_f32_s32(load_columns(row, nr)), v);
      }
      /* out_min > v ? out_min : v, then out_max < v ? out_max : v */
      v = vbslq_f32(vcgtq_f32(vmin, v), vmin, v);
      v = vbslq_f32(vcltq_f32(vmax, v), vmax, v);
      vacc[i][0] = vreinterpretq_s32_f32(v);
    }
  }
  /* int32, or the float bits */
  gemmi8_a64_store_s32(MR, 1, mr, nr, c, c_stride, vacc);
}

#define GEMMI8_A64_BIGEMM_ENTRY(fn, OUT)                                                    \
  void fn(size_t mr, size_t nr, size_t kc, size_t ks, const uint64_t* const* a,             \
          const void* w, void* c, size_t c_stride, size_t a_offset, const void* zero,       \
          const struct gemmi8_bcparams* params)                                             \
  {                                                                                         \
    gemmi8_bin_igemm_4x4c2__neon_body(mr | (size_t) OUT << GEMMI8_A64_OUT_SHIFT, nr, kc, ks, \
                                      a, w, c, c_stride, a_offset, zero, params);          \
  }

GEMMI8_A64_BIGEMM_ENTRY(gemmi8_bin_igemm_s32_ukernel_4x4c2__neon, gemmi8_boutput_s32)
GEMMI8_A64_BIGEMM_ENTRY(gemmi8_bin_igemm_f32_ukernel_4x4c2__neon, gemmi8_boutput_f32)
GEMMI8_A64_BIGEMM_ENTRY(gemmi8_bin_igemm_bits_ukernel_4x4c2__neon, gemmi8_boutput_bits)
