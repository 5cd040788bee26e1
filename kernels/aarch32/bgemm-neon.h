/*
 * ARMv7 NEON binary GEMM microkernel template: 4x4 (rows x columns, 64-bit words of
 * depth), the generic packed layout (for each depth word, 4 words, one per column;
 * padding bits and columns 0).
 *
 * Rows go in pairs and columns in pairs, one q register each: va01 = {a0, a1},
 * vb01 = {b0, b1} and its halves swapped vb10 = {b1, b0} (VEXT). VEOR + VCNT.8 +
 * VPADAL.U8 of va01 with vb01 counts a0^b0 | a1^b1, with vb10 a0^b1 | a1^b0, so 8
 * accumulators of 16-bit lanes hold all 16 counts:
 *   vcnt01x01 = {a0^b0 | a1^b1}  vcnt01x10 = {a0^b1 | a1^b0}
 *   vcnt01x23 = {a0^b2 | a1^b3}  vcnt01x32 = {a0^b3 | a1^b2}  (and rows 2, 3 alike)
 * One word of depth (the loop is inline assembly, see below): 5 loads, 2 VEXT,
 * 8 x (VEOR, VCNT, VPADAL) = 1024 bit products.
 * A 16-bit lane gains at most 16 a word, so every 4095 words the counts move to
 * 32-bit sums (outside the inner loop). The last word of a is masked to the real k
 * bits. acc = k - 2 * count, then int32, float (acc * scale + bias, two roundings) or
 * sign bits of that float. Rows past mr alias row mr - 1.
 *
 * Float stage: NEON flushes denormal inputs and results to zero, IEEE (the generic
 * kernel, VFP) does not. With scale and bias free of denormals the product is 0 or at
 * least FLT_MIN in magnitude, so only a sum that lands in the denormal range can
 * differ, and NEON returns it as a zero; NaN payloads can differ too. A tile with a
 * denormal scale or bias, a zero result in a column with a nonzero bias, or a NaN
 * result is therefore redone in scalar VFP arithmetic, which is IEEE (Linux runs VFP
 * with flush-to-zero off) and equals kernels/generic.
 */
#ifndef GEMMI8_BGEMM_NEON_H
#define GEMMI8_BGEMM_NEON_H

#include <arm_neon.h>

#include "requant.h"
#include "mca.h"


/* Largest number of words a 16-bit count lane can take (16 per word). */
#define GEMMI8_BNEON_CHUNK 4095

#define GEMMI8_BNEON_PAIR(VA, VB, ACC) \
  ACC = vpadalq_u8(ACC, vcntq_u8(vreinterpretq_u8_u64(veorq_u64(VA, VB))))

/* One word of depth: va01, va23 already loaded (and masked). */
#define GEMMI8_BNEON_WORD()                                                           \
  do {                                                                                \
    const uint64x2_t vb01 = vld1q_u64(w);                                             \
    const uint64x2_t vb23 = vld1q_u64(w + 2);                                         \
    w += 4;                                                                           \
    const uint64x2_t vb10 = vextq_u64(vb01, vb01, 1);                                 \
    const uint64x2_t vb32 = vextq_u64(vb23, vb23, 1);                                 \
    GEMMI8_BNEON_PAIR(va01, vb01, vcnt01x01);                                         \
    GEMMI8_BNEON_PAIR(va23, vb01, vcnt23x01);                                         \
    GEMMI8_BNEON_PAIR(va01, vb10, vcnt01x10);                                         \
    GEMMI8_BNEON_PAIR(va23, vb10, vcnt23x10);                                         \
    GEMMI8_BNEON_PAIR(va01, vb23, vcnt01x23);                                         \
    GEMMI8_BNEON_PAIR(va23, vb23, vcnt23x23);                                         \
    GEMMI8_BNEON_PAIR(va01, vb32, vcnt01x32);                                         \
    GEMMI8_BNEON_PAIR(va23, vb32, vcnt23x32);                                         \
  } while (0)

/* The word loop in inline assembly (GCC's allocation of the intrinsics version
 * costs a dozen VMOVs a word). Fixed registers: va01 = q0, va23 = q1, vb01 = q2,
 * vb23 = q3 (swapped in place by VEXT after their first use), xor / count temporaries
 * q4-q7; the eight accumulators are operands. The rows of a are loaded without
 * writeback and advanced by ADDs (a post-indexed load is two micro-ops on
 * Cortex-A57, whose 3-wide dispatch otherwise limits the loop). */
#define GEMMI8_BNEON_XCA(ACC0, ACC1, ACC2, ACC3)                                      \
  "vcnt.8 q4, q4\n\t"                                                                  \
  "vcnt.8 q5, q5\n\t"                                                                  \
  "vcnt.8 q6, q6\n\t"                                                                  \
  "vcnt.8 q7, q7\n\t"                                                                  \
  "vpadal.u8 %q[" ACC0 "], q4\n\t"                                                     \
  "vpadal.u8 %q[" ACC1 "], q5\n\t"                                                     \
  "vpadal.u8 %q[" ACC2 "], q6\n\t"                                                     \
  "vpadal.u8 %q[" ACC3 "], q7\n\t"
#define GEMMI8_BNEON_XOR4                                                             \
  "veor q4, q0, q2\n\t"                                                                \
  "veor q5, q1, q2\n\t"                                                                \
  "veor q6, q0, q3\n\t"                                                                \
  "veor q7, q1, q3\n\t"
/* The word loop; region names its marked inner loop (mca.h). */
#define GEMMI8_BNEON_LOOP_ASM_NAMED(region)                                                     \
  GEMMI8_NEON_LOOP_LABEL                                                               \
  GEMMI8_MCA_BEGIN_ASM(region)                                                       \
  "vld1.64 {d0}, [%[a0]]\n\t"                                                          \
  "vld1.64 {d1}, [%[a1]]\n\t"                                                          \
  "vld1.64 {d2}, [%[a2]]\n\t"                                                          \
  "vld1.64 {d3}, [%[a3]]\n\t"                                                          \
  "vld1.64 {d4-d7}, [%[w]]!\n\t"                                                       \
  GEMMI8_BNEON_XOR4                                                                    \
  "vext.8 q2, q2, q2, #8\n\t"                                                          \
  "vext.8 q3, q3, q3, #8\n\t"                                                          \
  GEMMI8_BNEON_XCA("vcnt01x01", "vcnt23x01", "vcnt01x23", "vcnt23x23")                 \
  GEMMI8_BNEON_XOR4                                                                    \
  "add %[a0], %[a0], #8\n\t"                                                           \
  "add %[a1], %[a1], #8\n\t"                                                           \
  "add %[a2], %[a2], #8\n\t"                                                           \
  "add %[a3], %[a3], #8\n\t"                                                           \
  "subs %[n], %[n], #1\n\t"                                                            \
  GEMMI8_BNEON_XCA("vcnt01x10", "vcnt23x10", "vcnt01x32", "vcnt23x32")                 \
  GEMMI8_NEON_LOOP_BNE                                                                 \
  GEMMI8_MCA_END_ASM()
#define GEMMI8_BNEON_LOOP_ASM GEMMI8_BNEON_LOOP_ASM_NAMED("bin-neon-4x4:MACS=1024")

/* Two rows of counts from a direct (x01 / x23) and a swapped (x10 / x32) accumulator
 * pair: row r of {cols 0, 1} and row r + 1 of {cols 0, 1}. */
static GEMMI8_ALWAYS_INLINE void gemmi8_bneon_rows(uint32x4_t vd01, uint32x4_t vs10,
                                                   uint32x4_t vd23, uint32x4_t vs32,
                                                   uint32x4_t* row0, uint32x4_t* row1)
{
  /* vd01 = {a0^b0 (2 lanes), a1^b1 (2 lanes)}, vs10 = {a0^b1, a1^b0} */
  const uint32x2_t r0c01 = vpadd_u32(vget_low_u32(vd01), vget_low_u32(vs10));   /* c00 c01 */
  const uint32x2_t r1c10 = vpadd_u32(vget_high_u32(vd01), vget_high_u32(vs10)); /* c11 c10 */
  const uint32x2_t r0c23 = vpadd_u32(vget_low_u32(vd23), vget_low_u32(vs32));   /* c02 c03 */
  const uint32x2_t r1c32 = vpadd_u32(vget_high_u32(vd23), vget_high_u32(vs32)); /* c13 c12 */
  *row0 = vcombine_u32(r0c01, r0c23);
  *row1 = vcombine_u32(vrev64_u32(r1c10), vrev64_u32(r1c32));
}

/* Fills vacc[4] with the int32 results k - 2 * count of rows 0..3, columns 0..3. */
static GEMMI8_ALWAYS_INLINE void gemmi8_bgemm_core_4x4__armv7neon(size_t mr, size_t k,
                                                            const uint64_t* a, size_t a_stride,
                                                            const uint64_t* w, int32x4_t vacc[4])
{
  const uint64_t* a0 = a;
  const uint64_t* a1 = mr > 1 ? a0 + a_stride : a0;
  const uint64_t* a2 = mr > 2 ? a1 + a_stride : a1;
  const uint64_t* a3 = mr > 3 ? a2 + a_stride : a2;
  const size_t words = GEMMI8_BIN_WORDS(k);
  const uint64x1_t vlast =
      vdup_n_u64((k % 64) ? (UINT64_C(1) << (k % 64)) - 1 : ~UINT64_C(0));
  uint32x4_t vsum01x01 = vdupq_n_u32(0), vsum01x10 = vsum01x01, vsum01x23 = vsum01x01,
             vsum01x32 = vsum01x01, vsum23x01 = vsum01x01, vsum23x10 = vsum01x01,
             vsum23x23 = vsum01x01, vsum23x32 = vsum01x01;
  size_t kw = 0;
  while (kw < words) {
    const size_t end = words - kw > GEMMI8_BNEON_CHUNK ? kw + GEMMI8_BNEON_CHUNK : words;
    const size_t full_end = end == words ? words - 1 : end;
    uint16x8_t vcnt01x01 = vdupq_n_u16(0), vcnt01x10 = vcnt01x01, vcnt01x23 = vcnt01x01,
               vcnt01x32 = vcnt01x01, vcnt23x01 = vcnt01x01, vcnt23x10 = vcnt01x01,
               vcnt23x23 = vcnt01x01, vcnt23x32 = vcnt01x01;
    if (kw < full_end) {
      size_t n = full_end - kw;
      const uint64_t* b0 = a0 + kw;
      const uint64_t* b1 = a1 + kw;
      const uint64_t* b2 = a2 + kw;
      const uint64_t* b3 = a3 + kw;
      __asm__(GEMMI8_BNEON_LOOP_ASM
              : [vcnt01x01] "+w"(vcnt01x01), [vcnt01x10] "+w"(vcnt01x10),
                [vcnt01x23] "+w"(vcnt01x23), [vcnt01x32] "+w"(vcnt01x32),
                [vcnt23x01] "+w"(vcnt23x01), [vcnt23x10] "+w"(vcnt23x10),
                [vcnt23x23] "+w"(vcnt23x23), [vcnt23x32] "+w"(vcnt23x32), [a0] "+r"(b0),
                [a1] "+r"(b1), [a2] "+r"(b2), [a3] "+r"(b3), [w] "+r"(w), [n] "+r"(n)
              :
              : "cc", "memory", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9",
                "d10", "d11", "d12", "d13", "d14", "d15");
      kw = full_end;
    }
    if (end == words) {
      const uint64x2_t va01 = vcombine_u64(vand_u64(vld1_u64(a0 + kw), vlast),
                                           vand_u64(vld1_u64(a1 + kw), vlast));
      const uint64x2_t va23 = vcombine_u64(vand_u64(vld1_u64(a2 + kw), vlast),
                                           vand_u64(vld1_u64(a3 + kw), vlast));
      GEMMI8_BNEON_WORD();
      kw++;
    }
    vsum01x01 = vpadalq_u16(vsum01x01, vcnt01x01);
    vsum01x10 = vpadalq_u16(vsum01x10, vcnt01x10);
    vsum01x23 = vpadalq_u16(vsum01x23, vcnt01x23);
    vsum01x32 = vpadalq_u16(vsum01x32, vcnt01x32);
    vsum23x01 = vpadalq_u16(vsum23x01, vcnt23x01);
    vsum23x10 = vpadalq_u16(vsum23x10, vcnt23x10);
    vsum23x23 = vpadalq_u16(vsum23x23, vcnt23x23);
    vsum23x32 = vpadalq_u16(vsum23x32, vcnt23x32);
  }
  uint32x4_t vc0, vc1, vc2, vc3;
  gemmi8_bneon_rows(vsum01x01, vsum01x10, vsum01x23, vsum01x32, &vc0, &vc1);
  gemmi8_bneon_rows(vsum23x01, vsum23x10, vsum23x23, vsum23x32, &vc2, &vc3);
  /* k - 2 * count, modulo 2^32 (exact: |result| <= k <= INT32_MAX) */
  const uint32x4_t vk = vdupq_n_u32((uint32_t) k);
  vacc[0] = vreinterpretq_s32_u32(vsubq_u32(vk, vshlq_n_u32(vc0, 1)));
  vacc[1] = vreinterpretq_s32_u32(vsubq_u32(vk, vshlq_n_u32(vc1, 1)));
  vacc[2] = vreinterpretq_s32_u32(vsubq_u32(vk, vshlq_n_u32(vc2, 1)));
  vacc[3] = vreinterpretq_s32_u32(vsubq_u32(vk, vshlq_n_u32(vc3, 1)));
}

/* Row pointers of c (rows past mr alias row mr - 1: same values, same place). */
#define GEMMI8_BNEON_C_ROWS(T)                                                         \
  T* c0 = (T*) c;                                                                      \
  T* c1 = (T*) (mr > 1 ? (uint8_t*) c0 + c_stride : (uint8_t*) c0);                    \
  T* c2 = (T*) (mr > 2 ? (uint8_t*) c1 + c_stride : (uint8_t*) c1);                    \
  T* c3 = (T*) (mr > 3 ? (uint8_t*) c2 + c_stride : (uint8_t*) c2);

static GEMMI8_ALWAYS_INLINE void gemmi8_bneon_store4(uint32_t* c, size_t nr, uint32x4_t v)
{
  if (nr == 4) {
    vst1q_u32(c, v);
    return;
  }
  uint32x2_t lo = vget_low_u32(v);
  if (nr & 2) {
    vst1_u32(c, lo);
    lo = vget_high_u32(v);
    c += 2;
  }
  if (nr & 1) vst1_lane_u32(c, lo, 0);
}

static GEMMI8_ALWAYS_INLINE void gemmi8_bgemm_store_s32__armv7neon(size_t mr, size_t nr, void* c,
                                                             size_t c_stride, int32x4_t vacc[4])
{
  GEMMI8_BNEON_C_ROWS(uint32_t)
  gemmi8_bneon_store4(c3, nr, vreinterpretq_u32_s32(vacc[3]));
  gemmi8_bneon_store4(c2, nr, vreinterpretq_u32_s32(vacc[2]));
  gemmi8_bneon_store4(c1, nr, vreinterpretq_u32_s32(vacc[1]));
  gemmi8_bneon_store4(c0, nr, vreinterpretq_u32_s32(vacc[0]));
}

/* scale (1.0f when NULL) and bias (0.0f when NULL) for nr channels. */
static GEMMI8_ALWAYS_INLINE void gemmi8_bneon_affine_params(const struct gemmi8_bparams* p,
                                                            size_t nr, float scale[4],
                                                            float bias[4])
{
  for (size_t j = 0; j < 4; j++) {
    scale[j] = 1.0f;
    bias[j] = 0.0f;
  }
  for (size_t j = 0; j < nr; j++) {
    if (p->scale != NULL) scale[j] = p->scale[j];
    if (p->bias != NULL) bias[j] = p->bias[j];
  }
}

/* Nonzero when a lane of x is a denormal (0 < |x| < FLT_MIN). */
static GEMMI8_ALWAYS_INLINE uint32x4_t gemmi8_bneon_denormal(float32x4_t x)
{
  const uint32x4_t vmag = vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x7FFFFFFFu));
  /* |x| bits - 1 < 0x007FFFFF (unsigned) exactly for 1..0x007FFFFF */
  return vcltq_u32(vsubq_u32(vmag, vdupq_n_u32(1)), vdupq_n_u32(0x007FFFFFu));
}

/* Nonzero when a lane is NaN, or zero with a nonzero bias (possibly a flushed
 * denormal: without a bias the result is the product, 0 or >= FLT_MIN). */
static GEMMI8_ALWAYS_INLINE uint32x4_t gemmi8_bneon_suspect(float32x4_t x, uint32x4_t vbias_nonzero)
{
  return vorrq_u32(vandq_u32(vceqq_f32(x, vdupq_n_f32(0.0f)), vbias_nonzero),
                   vmvnq_u32(vceqq_f32(x, x)));
}

static GEMMI8_ALWAYS_INLINE int gemmi8_bneon_any(uint32x4_t m)
{
  const uint32x2_t v = vorr_u32(vget_low_u32(m), vget_high_u32(m));
  return (vget_lane_u32(v, 0) | vget_lane_u32(v, 1)) != 0;
}

/* The float results of the 4 x 4 tile, IEEE-exact (see the top comment). */
static GEMMI8_ALWAYS_INLINE void gemmi8_bneon_affine(const struct gemmi8_bparams* p, size_t nr,
                                                     const int32x4_t vacc[4], float32x4_t vf[4])
{
  float scale[4], bias[4];
  gemmi8_bneon_affine_params(p, nr, scale, bias);
  const float32x4_t vscale = vld1q_f32(scale);
  const float32x4_t vbias = vld1q_f32(bias);
  const uint32x4_t vbias_nonzero =
      vtstq_u32(vreinterpretq_u32_f32(vbias), vdupq_n_u32(0x7FFFFFFFu));
  uint32x4_t vsuspect = vorrq_u32(gemmi8_bneon_denormal(vscale), gemmi8_bneon_denormal(vbias));
  for (size_t i = 0; i < 4; i++) {
    vf[i] = vaddq_f32(vmulq_f32(vcvtq_f32_s32(vacc[i]), vscale), vbias);
    vsuspect = vorrq_u32(vsuspect, gemmi8_bneon_suspect(vf[i], vbias_nonzero));
  }
  if (gemmi8_bneon_any(vsuspect)) {
    /* rare: redo the tile in scalar VFP (IEEE, denormals kept) */
    for (size_t i = 0; i < 4; i++) {
      int32_t acc[4];
      float out[4];
      vst1q_s32(acc, vacc[i]);
      for (size_t j = 0; j < 4; j++) {
        const float product = (float) acc[j] * scale[j];
        out[j] = product + bias[j];
      }
      vf[i] = vld1q_f32(out);
    }
  }
}

static GEMMI8_ALWAYS_INLINE void gemmi8_bgemm_store_f32__armv7neon(size_t mr, size_t nr, void* c,
                                                             size_t c_stride,
                                                             const struct gemmi8_bparams* p,
                                                             int32x4_t vacc[4])
{
  float32x4_t vf[4];
  gemmi8_bneon_affine(p, nr, vacc, vf);
  GEMMI8_BNEON_C_ROWS(uint32_t)
  gemmi8_bneon_store4(c3, nr, vreinterpretq_u32_f32(vf[3]));
  gemmi8_bneon_store4(c2, nr, vreinterpretq_u32_f32(vf[2]));
  gemmi8_bneon_store4(c1, nr, vreinterpretq_u32_f32(vf[1]));
  gemmi8_bneon_store4(c0, nr, vreinterpretq_u32_f32(vf[0]));
}

/* Bits j of the nibble: result of column j < 0 (NaN compares false, as in C). */
static GEMMI8_ALWAYS_INLINE uint64_t gemmi8_bneon_sign_bits(float32x4_t v)
{
  static const uint32_t weights[4] = {1, 2, 4, 8};
  const uint32x4_t vbits = vandq_u32(vcltq_f32(v, vdupq_n_f32(0.0f)), vld1q_u32(weights));
  uint32x2_t s = vpadd_u32(vget_low_u32(vbits), vget_high_u32(vbits));
  s = vpadd_u32(s, s);
  return vget_lane_u32(s, 0);
}

/* The tile's nr <= 4 bits start at bit params->n0 of the row (4 | 64: one word). */
static GEMMI8_ALWAYS_INLINE void gemmi8_bneon_store_bits(uint64_t* row, size_t nr, size_t n0,
                                                         uint64_t bits)
{
  uint64_t* word = row + n0 / 64;
  const unsigned offset = (unsigned) (n0 % 64);
  const uint64_t field = ((UINT64_C(1) << nr) - 1) << offset;
  *word = (*word & ~field) | ((bits << offset) & field);
}

static GEMMI8_ALWAYS_INLINE void gemmi8_bgemm_store_bits__armv7neon(size_t mr, size_t nr, void* c,
                                                              size_t c_stride,
                                                              const struct gemmi8_bparams* p,
                                                              int32x4_t vacc[4])
{
  float32x4_t vf[4];
  gemmi8_bneon_affine(p, nr, vacc, vf);
  GEMMI8_BNEON_C_ROWS(uint64_t)
  gemmi8_bneon_store_bits(c3, nr, p->n0, gemmi8_bneon_sign_bits(vf[3]));
  gemmi8_bneon_store_bits(c2, nr, p->n0, gemmi8_bneon_sign_bits(vf[2]));
  gemmi8_bneon_store_bits(c1, nr, p->n0, gemmi8_bneon_sign_bits(vf[1]));
  gemmi8_bneon_store_bits(c0, nr, p->n0, gemmi8_bneon_sign_bits(vf[0]));
}

/* The body of the tile: the s32, f32 and bits kernels are thin entries into it (the
 * loop compiled once), the output kind in the bits of mr from 8 up (mr <= 4): one ORR
 * and a tail call. */
#define GEMMI8_BGEMM_4X4_NEON_BODY(body)                                                   \
  static __attribute__((noinline, noclone)) void body(                                   \
      size_t mr_out, size_t nr, size_t k, const uint64_t* a, size_t a_stride,            \
      const void* w, void* c, size_t c_stride, const struct gemmi8_bparams* params)      \
  {                                                                                      \
    const size_t mr = mr_out & 255;                                                      \
    const int out = (int) (mr_out >> 8);                                                 \
    int32x4_t vacc[4];                                                                   \
    gemmi8_bgemm_core_4x4__armv7neon(mr, k, a, a_stride, (const uint64_t*) w, vacc);          \
    if (out == gemmi8_boutput_s32) {                                                   \
      gemmi8_bgemm_store_s32__armv7neon(mr, nr, c, c_stride, vacc);                           \
    } else if (out == gemmi8_boutput_f32) {                                            \
      gemmi8_bgemm_store_f32__armv7neon(mr, nr, c, c_stride, params, vacc);                   \
    } else {                                                                             \
      gemmi8_bgemm_store_bits__armv7neon(mr, nr, c, c_stride, params, vacc);                  \
    }                                                                                    \
  }
/* One kernel function entering body; OUT is s32, f32 or bits. */
#define GEMMI8_BGEMM_4X4_NEON_ENTRY(fn, body, OUT)                                         \
  void fn(size_t mr, size_t nr, size_t k, const uint64_t* a, size_t a_stride,            \
          const void* w, void* c, size_t c_stride, const struct gemmi8_bparams* params)  \
  {                                                                                      \
    body(mr | (size_t) gemmi8_boutput_##OUT << 8, nr, k, a, a_stride, w, c, c_stride,   \
         params);                                                                        \
  }

#endif
