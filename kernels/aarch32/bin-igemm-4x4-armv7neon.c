/*
 * Binary convolution (igemm), 4x4 (64-bit words of depth), ARMv7 NEON (VEOR + VCNT +
 * VPADAL): int32, float (clamped) and threshold-bit outputs. The tile of the binary
 * GEMM kernel (bgemm-neon.h: its word loop, accumulators and stores) with A through ks
 * taps of 4 row pointers. See gemmi8_bigemm_ukernel_fn.
 *
 *   acc[i][j] = ks * kc - 2 * popcount(a[i] XOR w[j]) - corr[i][j]
 * Packed block (KR = 1): for each tap, GEMMI8_BIN_WORDS(kc) words of depth, each 4
 * words (one per column). A tap's whole words (kc / 64) run the word loop; a partial
 * last word is read alone and masked to the real bits, so nothing past a row is read.
 * The 16-bit counts run on across taps and move to 32-bit sums every 4095 words.
 *
 * Float stage: as the GEMM's (bgemm-neon.h: NEON flushes denormals, so a tile whose
 * affine result may differ from IEEE is redone in scalar VFP), then the clamp as
 * compare and select (`out_min > v ? out_min : v`, then the maximum: a NaN stays, as
 * in C). NEON compares flush denormal operands too: a tile with a denormal bound or
 * result is clamped in scalar VFP. Bits: (acc XOR flip) < threshold, written into the
 * row at bit params->n0 (the tile's bits may straddle two words).
 */
#include "bgemm-neon.h"

/* The word loop of bgemm-neon.h, its region named after this kernel. */
#define GEMMI8_BINEON_LOOP_ASM \
  GEMMI8_BNEON_LOOP_ASM_NAMED("gemmi8_bin_igemm_s32_ukernel_4x4__armv7neon:MACS=1024")

/* nr (1..4) 32-bit values of a column array into dst. */
static GEMMI8_ALWAYS_INLINE void gemmi8_bineon_copy(int32_t dst[4], const void* src, size_t nr)
{
  const int32_t* p = (const int32_t*) src;
  for (size_t j = 0; j < nr; j++) dst[j] = p[j];
}

/* The tile's nr 32-bit values, zeros above: nothing past them is read. */
static GEMMI8_ALWAYS_INLINE int32x4_t gemmi8_bineon_load(const void* src, size_t nr)
{
  if (nr == 4) return vld1q_s32((const int32_t*) src);
  int32_t part[4] = {0, 0, 0, 0};
  gemmi8_bineon_copy(part, src, nr);
  return vld1q_s32(part);
}

/* The 16-bit counts into the 32-bit sums, the counts zeroed. */
#define GEMMI8_BINEON_FLUSH()                                                          \
  do {                                                                                 \
    vsum01x01 = vpadalq_u16(vsum01x01, vcnt01x01);                                     \
    vsum01x10 = vpadalq_u16(vsum01x10, vcnt01x10);                                     \
    vsum01x23 = vpadalq_u16(vsum01x23, vcnt01x23);                                     \
    vsum01x32 = vpadalq_u16(vsum01x32, vcnt01x32);                                     \
    vsum23x01 = vpadalq_u16(vsum23x01, vcnt23x01);                                     \
    vsum23x10 = vpadalq_u16(vsum23x10, vcnt23x10);                                     \
    vsum23x23 = vpadalq_u16(vsum23x23, vcnt23x23);                                     \
    vsum23x32 = vpadalq_u16(vsum23x32, vcnt23x32);                                     \
    vcnt01x01 = vcnt01x10 = vcnt01x23 = vcnt01x32 = vdupq_n_u16(0);                    \
    vcnt23x01 = vcnt23x10 = vcnt23x23 = vcnt23x32 = vdupq_n_u16(0);                    \
  } while (0)

/* vacc[i] = ks * kc - 2 * count of rows 0..3, columns 0..3 (no corrections). */
static GEMMI8_ALWAYS_INLINE void gemmi8_bigemm_core_4x4__armv7neon(
    size_t kc, size_t ks, const uint64_t* const* a, const uint64_t* w, size_t a_offset,
    const void* zero, int32x4_t vacc[4])
{
  const uint32_t k = (uint32_t) (ks * kc);
  const size_t words = GEMMI8_BIN_WORDS(kc);
  const size_t whole = kc / 64;
  const uint64x1_t vlast =
      vdup_n_u64((kc % 64) ? (UINT64_C(1) << (kc % 64)) - 1 : ~UINT64_C(0));
  uint32x4_t vsum01x01 = vdupq_n_u32(0), vsum01x10 = vsum01x01, vsum01x23 = vsum01x01,
             vsum01x32 = vsum01x01, vsum23x01 = vsum01x01, vsum23x10 = vsum01x01,
             vsum23x23 = vsum01x01, vsum23x32 = vsum01x01;
  uint16x8_t vcnt01x01 = vdupq_n_u16(0), vcnt01x10 = vcnt01x01, vcnt01x23 = vcnt01x01,
             vcnt01x32 = vcnt01x01, vcnt23x01 = vcnt01x01, vcnt23x10 = vcnt01x01,
             vcnt23x23 = vcnt01x01, vcnt23x32 = vcnt01x01;
  size_t budget = GEMMI8_BNEON_CHUNK;
  do {
    const uint64_t* a0 = a[0];
    const uint64_t* a1 = a[1];
    const uint64_t* a2 = a[2];
    const uint64_t* a3 = a[3];
    if ((const void*) a0 != zero) a0 = (const uint64_t*) ((uintptr_t) a0 + a_offset);
    if ((const void*) a1 != zero) a1 = (const uint64_t*) ((uintptr_t) a1 + a_offset);
    if ((const void*) a2 != zero) a2 = (const uint64_t*) ((uintptr_t) a2 + a_offset);
    if ((const void*) a3 != zero) a3 = (const uint64_t*) ((uintptr_t) a3 + a_offset);
    a += 4;
    for (size_t left = whole; left != 0;) {
      if (budget == 0) {
        GEMMI8_BINEON_FLUSH();
        budget = GEMMI8_BNEON_CHUNK;
      }
      size_t n = left < budget ? left : budget;
      left -= n;
      budget -= n;
      /* advances a0..a3 by n words and w by 4 n */
      __asm__(GEMMI8_BINEON_LOOP_ASM
              : [vcnt01x01] "+w"(vcnt01x01), [vcnt01x10] "+w"(vcnt01x10),
                [vcnt01x23] "+w"(vcnt01x23), [vcnt01x32] "+w"(vcnt01x32),
                [vcnt23x01] "+w"(vcnt23x01), [vcnt23x10] "+w"(vcnt23x10),
                [vcnt23x23] "+w"(vcnt23x23), [vcnt23x32] "+w"(vcnt23x32), [a0] "+r"(a0),
                [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [w] "+r"(w), [n] "+r"(n)
              :
              : "cc", "memory", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9",
                "d10", "d11", "d12", "d13", "d14", "d15");
    }
    if (whole != words) {
      if (budget == 0) {
        GEMMI8_BINEON_FLUSH();
        budget = GEMMI8_BNEON_CHUNK;
      }
      budget--;
      const uint64x2_t va01 =
          vcombine_u64(vand_u64(vld1_u64(a0), vlast), vand_u64(vld1_u64(a1), vlast));
      const uint64x2_t va23 =
          vcombine_u64(vand_u64(vld1_u64(a2), vlast), vand_u64(vld1_u64(a3), vlast));
      GEMMI8_BNEON_WORD();
    }
  } while (--ks != 0);
  GEMMI8_BINEON_FLUSH();
  uint32x4_t vc0, vc1, vc2, vc3;
  gemmi8_bneon_rows(vsum01x01, vsum01x10, vsum01x23, vsum01x32, &vc0, &vc1);
  gemmi8_bneon_rows(vsum23x01, vsum23x10, vsum23x23, vsum23x32, &vc2, &vc3);
  /* k - 2 * count, modulo 2^32 (exact: |result| <= k <= INT32_MAX) */
  const uint32x4_t vk = vdupq_n_u32(k);
  vacc[0] = vreinterpretq_s32_u32(vsubq_u32(vk, vshlq_n_u32(vc0, 1)));
  vacc[1] = vreinterpretq_s32_u32(vsubq_u32(vk, vshlq_n_u32(vc1, 1)));
  vacc[2] = vreinterpretq_s32_u32(vsubq_u32(vk, vshlq_n_u32(vc2, 1)));
  vacc[3] = vreinterpretq_s32_u32(vsubq_u32(vk, vshlq_n_u32(vc3, 1)));
}

/* The float results of the tile, clamped: IEEE-exact (see the top comment). With
 * p->add, the value c holds is added first, in scalar VFP (IEEE, denormals kept; rows
 * past mr read row mr - 1's, never stored). */
static GEMMI8_ALWAYS_INLINE void gemmi8_bineon_f32(const struct gemmi8_bcparams* p, size_t mr,
                                                   size_t nr, const void* c, size_t c_stride,
                                                   const int32x4_t vacc[4], float32x4_t vf[4])
{
  const struct gemmi8_bparams affine = {p->scale, p->bias, 0};
  gemmi8_bneon_affine(&affine, nr, vacc, vf);
  if (p->add) {
    for (size_t i = 0; i < 4; i++) {
      const float* row = (const float*) ((const uint8_t*) c + (i < mr ? i : mr - 1) * c_stride);
      float out[4];
      vst1q_f32(out, vf[i]);
      for (size_t j = 0; j < nr; j++) out[j] = row[j] + out[j];
      vf[i] = vld1q_f32(out);
    }
  }
  const float32x4_t vmin = vdupq_n_f32(p->out_min);
  const float32x4_t vmax = vdupq_n_f32(p->out_max);
  uint32x4_t vsuspect = vorrq_u32(gemmi8_bneon_denormal(vmin), gemmi8_bneon_denormal(vmax));
  for (size_t i = 0; i < 4; i++) vsuspect = vorrq_u32(vsuspect, gemmi8_bneon_denormal(vf[i]));
  if (gemmi8_bneon_any(vsuspect)) {
    /* rare: the clamp in scalar VFP (IEEE, denormals kept) */
    for (size_t i = 0; i < 4; i++) {
      float out[4];
      vst1q_f32(out, vf[i]);
      for (size_t j = 0; j < 4; j++) {
        float v = out[j];
        v = p->out_min > v ? p->out_min : v;
        v = p->out_max < v ? p->out_max : v;
        out[j] = v;
      }
      vf[i] = vld1q_f32(out);
    }
    return;
  }
  for (size_t i = 0; i < 4; i++) {
    vf[i] = vbslq_f32(vcgtq_f32(vmin, vf[i]), vmin, vf[i]);
    vf[i] = vbslq_f32(vcltq_f32(vmax, vf[i]), vmax, vf[i]);
  }
}

/* Bits j of the nibble: (acc XOR flip[j]) < threshold[j] (signed). */
static GEMMI8_ALWAYS_INLINE uint64_t gemmi8_bineon_bits(int32x4_t vacc, int32x4_t vflip,
                                                        int32x4_t vthreshold)
{
  static const uint32_t weights[4] = {1, 2, 4, 8};
  const uint32x4_t vset = vcltq_s32(veorq_s32(vacc, vflip), vthreshold);
  const uint32x4_t vbits = vandq_u32(vset, vld1q_u32(weights));
  uint32x2_t s = vpadd_u32(vget_low_u32(vbits), vget_high_u32(vbits));
  s = vpadd_u32(s, s);
  return vget_lane_u32(s, 0);
}

/* The tile's nr <= 4 bits at bit n0 of the row: one word, or the end of one and the
 * start of the next. */
static GEMMI8_ALWAYS_INLINE void gemmi8_bineon_store_bits(uint64_t* row, size_t nr, size_t n0,
                                                          uint64_t bits)
{
  uint64_t* word = row + n0 / 64;
  const unsigned offset = (unsigned) (n0 % 64);
  const uint64_t field = (UINT64_C(1) << nr) - 1;
  bits &= field;
  word[0] = (word[0] & ~(field << offset)) | (bits << offset);
  if (offset + nr > 64) {
    const unsigned spill = 64 - offset;
    word[1] = (word[1] & ~(field >> spill)) | (bits >> spill);
  }
}

/* The body of the tile: the s32, f32 and bits kernels are thin entries into it (the
 * loop compiled once), the output kind in the bits of mr from 8 up (mr <= 4). */
static __attribute__((noinline, noclone)) void gemmi8_bin_igemm_4x4__armv7neon_body(
    size_t mr_out, size_t nr, size_t kc, size_t ks, const uint64_t* const* a, const void* w,
    void* c, size_t c_stride, size_t a_offset, const void* zero,
    const struct gemmi8_bcparams* params)
{
  const size_t mr = mr_out & 255;
  const int out = (int) (mr_out >> 8);
  int32x4_t vacc[4];
  gemmi8_bigemm_core_4x4__armv7neon(kc, ks, a, (const uint64_t*) w, a_offset, zero, vacc);
  if (params->corr != NULL) {
    int32_t corr[4][4] = {{0}};
    for (size_t i = 0; i < mr; i++) {
      if (params->corr[i] != NULL) gemmi8_bineon_copy(corr[i], params->corr[i], nr);
    }
    for (size_t i = 0; i < 4; i++) vacc[i] = vsubq_s32(vacc[i], vld1q_s32(corr[i]));
  }
  if (out == gemmi8_boutput_bits) {
    const int32x4_t vflip = gemmi8_bineon_load(params->flip, nr);
    const int32x4_t vthreshold = gemmi8_bineon_load(params->threshold, nr);
    uint64_t bits[4];
    for (size_t i = 0; i < 4; i++) bits[i] = gemmi8_bineon_bits(vacc[i], vflip, vthreshold);
    for (size_t i = 0; i < mr; i++) {
      gemmi8_bineon_store_bits((uint64_t*) ((uint8_t*) c + i * c_stride), nr, params->n0,
                               bits[i]);
    }
    return;
  }
  if (out == gemmi8_boutput_f32) {
    float32x4_t vf[4];
    gemmi8_bineon_f32(params, mr, nr, c, c_stride, vacc, vf);
    for (size_t i = 0; i < 4; i++) vacc[i] = vreinterpretq_s32_f32(vf[i]);
  }
  /* int32, or the float bits (rows past mr stored first at the place of row mr - 1,
   * then overwritten) */
  gemmi8_bgemm_store_s32__armv7neon(mr, nr, c, c_stride, vacc);
}

#define GEMMI8_BIGEMM_4X4_NEON_ENTRY(fn, OUT)                                              \
  void fn(size_t mr, size_t nr, size_t kc, size_t ks, const uint64_t* const* a,           \
          const void* w, void* c, size_t c_stride, size_t a_offset, const void* zero,     \
          const struct gemmi8_bcparams* params)                                           \
  {                                                                                       \
    gemmi8_bin_igemm_4x4__armv7neon_body(mr | (size_t) gemmi8_boutput_##OUT << 8, nr, kc, \
                                         ks, a, w, c, c_stride, a_offset, zero, params);  \
  }

GEMMI8_BIGEMM_4X4_NEON_ENTRY(gemmi8_bin_igemm_s32_ukernel_4x4__armv7neon, s32)
GEMMI8_BIGEMM_4X4_NEON_ENTRY(gemmi8_bin_igemm_f32_ukernel_4x4__armv7neon, f32)
GEMMI8_BIGEMM_4X4_NEON_ENTRY(gemmi8_bin_igemm_bits_ukernel_4x4__armv7neon, bits)
