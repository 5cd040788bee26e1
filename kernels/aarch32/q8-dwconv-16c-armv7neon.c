/*
 * Depthwise microkernels, ARMv7 NEON, tiles of 16 channels (what they compute:
 * src/microkernel.h), on the generic kernels' packed tiles (int32 bias'[16], then 16
 * int8 weights a tap).
 *
 * As the AArch64 ones: two output pixels a pass, per tap the weights widened once
 * (VMOVL.S8), each pixel's bytes (xored with 0x80 for int8 input) widened (VMOVL.U8)
 * and multiplied into four int32x4 accumulators by VMLAL.S16 (a uint8 x int8 product
 * fits int16 operands; exact modulo 2^32), then the GEMM kernels' output stage
 * (qgemm-neon.h) on each group of four channels. A tail of fewer than 16 channels
 * goes through a small buffer: no byte past the call's channels is read.
 */
#include <string.h>

#include "qgemm-neon.h"

#define CR 16

/* The first nc (< 16) bytes at p, zeros above (out of line: the tail tile only). */
static __attribute__((noinline)) uint8x16_t load_tail(const uint8_t* p, size_t nc)
{
  uint8_t part[CR] = {0};
  memcpy(part, p, nc);
  return vld1q_u8(part);
}

#define GEMMI8_DW_LOAD_WHOLE(p) vld1q_u8(p)
#define GEMMI8_DW_LOAD_PART(p) load_tail(p, nc)

static GEMMI8_ALWAYS_INLINE void mla(int32x4_t* acc, uint8x16_t a, int16x8_t wlo, int16x8_t whi)
{
  const int16x8_t alo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(a)));
  const int16x8_t ahi = vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(a)));
  acc[0] = vmlal_s16(acc[0], vget_low_s16(alo), vget_low_s16(wlo));
  acc[1] = vmlal_s16(acc[1], vget_high_s16(alo), vget_high_s16(wlo));
  acc[2] = vmlal_s16(acc[2], vget_low_s16(ahi), vget_low_s16(whi));
  acc[3] = vmlal_s16(acc[3], vget_high_s16(ahi), vget_high_s16(whi));
}

/* The output stage of one or two pixels (vacc[r]: pixel r), four channels at a time:
 * one copy per output kind and signedness. */
static __attribute__((noinline)) void store_tile(int out, int is_signed, size_t rows, size_t nc,
                                                 uint8_t* c, size_t c_stride,
                                                 const struct gemmi8_qparams* q,
                                                 int32x4_t vacc[2][4])
{
  const size_t cs = q->channel_stride;
  struct gemmi8_qparams p = *q;
  for (size_t j = 0; 4 * j < nc; j++) {
    const size_t nr = gemmi8_min(4, nc - 4 * j);
    const int32x4_t pair[2] = {vacc[0][j], vacc[1][j]};
    if (out == gemmi8_qoutput_s32) {
      gemmi8_qgemm_store_s32__armv7neon(2, rows, nr, c + 16 * j, c_stride, pair);
    } else if (out == gemmi8_qoutput_fixedpoint) {
      p.multiplier = q->multiplier + 4 * j * cs;
      p.shift = q->shift + 4 * j * cs;
      if (is_signed) {
        gemmi8_qgemm_store_fixedpoint__armv7neon(2, 1, rows, nr, c + 4 * j, c_stride, &p, pair);
      } else {
        gemmi8_qgemm_store_fixedpoint__armv7neon(2, 0, rows, nr, c + 4 * j, c_stride, &p, pair);
      }
    } else {
      p.scale = q->scale + 4 * j * cs;
      gemmi8_qgemm_store_fp32__armv7neon(2, rows, nr, c + 4 * j, c_stride, &p, pair);
    }
  }
}

/* 1 if p is not the zero buffer, without a branch or a conditional instruction (a
 * Thumb IT block, which llvm-mca's Cortex-A15 model cannot read). */
static GEMMI8_ALWAYS_INLINE size_t not_zero(const void* p, const void* zero)
{
  const size_t d = (size_t) ((uintptr_t) p ^ (uintptr_t) zero);
  return (d | (0 - d)) >> (sizeof(size_t) * 8 - 1);
}

/* One tap of the two pixels. */
#define GEMMI8_DW_TAP(t, LOAD)                                                                  \
  do {                                                                                    \
    const uint8_t* pa = in0[t] + input_offset * not_zero(in0[t], zero);                   \
    const uint8_t* pb = in1[t] + input_offset * not_zero(in1[t], zero);                   \
    const int8x16_t vw = vld1q_s8(wt);                                                    \
    const int16x8_t wlo = vmovl_s8(vget_low_s8(vw)), whi = vmovl_s8(vget_high_s8(vw));    \
    mla(vacc[0], veorq_u8(LOAD(pa + c0), vxor), wlo, whi);                   \
    mla(vacc[1], veorq_u8(LOAD(pb + c0), vxor), wlo, whi);                   \
    wt += CR;                                                                             \
  } while (0)

static GEMMI8_ALWAYS_INLINE void dwconv(const size_t KS, enum gemmi8_qoutput out, size_t channels, size_t pixels,
                                        size_t ks, const void* const* input, const void* w,
                                        void* output, size_t output_stride, size_t input_offset,
                                        const void* zero, const struct gemmi8_dwparams* params)
{
  if (KS != 0) ks = KS;
  const size_t bytes = gemmi8_round_up(CR * 4 + ks * CR, 64);
  const size_t out_size = out == gemmi8_qoutput_s32 ? 4 : 1;
  const uint8x16_t vxor = vdupq_n_u8(params->input_xor);
  const int is_signed = params->input_xor != 0;
  const struct gemmi8_qparams* q = &params->q;
  const size_t cs = q->channel_stride;
  struct gemmi8_qparams tq = *q;
  for (size_t p = 0; p < pixels; p += 2) {
    const size_t rows = pixels - p >= 2 ? 2 : 1;
    const uint8_t* const* in0 = (const uint8_t* const*) input + p * ks;
    const uint8_t* const* in1 = rows == 2 ? in0 + ks : in0;
    uint8_t* o = (uint8_t*) output + p * output_stride;
    const uint8_t* tile = w;
    for (size_t c0 = 0; c0 < channels; c0 += CR, tile += bytes) {
      const size_t nc = gemmi8_min(CR, channels - c0);
      int32x4_t vacc[2][4];
      const int32_t* bias = (const int32_t*) tile;
      for (size_t j = 0; j < 4; j++) vacc[0][j] = vacc[1][j] = vld1q_s32(bias + 4 * j);
      const int8_t* wt = (const int8_t*) (tile + CR * 4);
      if (nc == CR) {
        /* whole tiles: 3x3 unrolled, 5x5 by kernel rows, any count as a loop (the loop llvm-mca reads) */
#pragma GCC unroll 9
        for (size_t t = 0; KS == 9 && t < 9; t++) GEMMI8_DW_TAP(t, GEMMI8_DW_LOAD_WHOLE);
#pragma GCC unroll 5
        for (size_t t = 0; KS == 25 && t < 25; t++) GEMMI8_DW_TAP(t, GEMMI8_DW_LOAD_WHOLE);
        if (KS == 0) {
#pragma GCC unroll 1
          for (size_t t = 0; t < ks; t++) {
            GEMMI8_MCA_BEGIN("q8-armv7neon-dwconv-up16c:MACS=32:PEAK=v7-vmlal");
            GEMMI8_DW_TAP(t, GEMMI8_DW_LOAD_WHOLE);
          }
          GEMMI8_MCA_END();
        }
      } else {
        /* the last tile of fewer than 16 channels */
#pragma GCC unroll 1
        for (size_t t = 0; t < ks; t++) GEMMI8_DW_TAP(t, GEMMI8_DW_LOAD_PART);
      }
      if (out == gemmi8_qoutput_fixedpoint) {
        tq.multiplier = q->multiplier + c0 * cs;
        tq.shift = q->shift + c0 * cs;
      } else if (out == gemmi8_qoutput_fp32) {
        tq.scale = q->scale + c0 * cs;
      }
      store_tile(out, is_signed, rows, nc, o + c0 * out_size, output_stride, &tq, vacc);
    }
  }
}

/* The list's nine kernels (src/microkernel.h). */
GEMMI8_DWCONV_ENTRIES(16, armv7neon)
