/*
 * Depthwise microkernels, AArch64 NEON, tiles of 16 channels (what they compute:
 * src/microkernel.h), on the generic kernels' packed tiles (int32 bias'[16], then 16
 * int8 weights a tap).
 *
 * Two output pixels a pass: per tap the 16 weights are widened to int16 once (SXTL,
 * SXTL2) and serve both pixels; each pixel's 16 bytes (xored with 0x80 for int8 input)
 * are widened to uint16 (UXTL, UXTL2) and multiplied into four int32x4 accumulators by
 * SMLAL / SMLAL2 (a uint8 x int8 product fits int16 operands, the sum is exact modulo
 * 2^32): 32 multiply-adds in 8 SMLAL and 11 other instructions. Then the output stage
 * of the GEMM kernels (q8-neon.h), 8-bit outputs signed for int8 input. A tail of
 * fewer than 16 channels is read without passing the call's channels.
 */
#include "q8-neon.h"

#define CR 16

/* The output stage of one or two pixels: one copy per output kind and signedness. */
static __attribute__((noinline)) void store_tile(int out, int is_signed, size_t rows, size_t nc,
                                                 uint8_t* oc, size_t stride,
                                                 const struct gemmi8_qparams* tq,
                                                 int32x4_t vacc[2][4])
{
  if (out == gemmi8_qoutput_s32) {
    gemmi8_a64_store(gemmi8_qoutput_s32, 2, 4, CR, 0, rows, nc, oc, stride, tq, vacc);
  } else if (out == gemmi8_qoutput_fixedpoint) {
    if (is_signed) {
      gemmi8_a64_store(gemmi8_qoutput_fixedpoint, 2, 4, CR, 1, rows, nc, oc, stride, tq, vacc);
    } else {
      gemmi8_a64_store(gemmi8_qoutput_fixedpoint, 2, 4, CR, 0, rows, nc, oc, stride, tq, vacc);
    }
  } else if (is_signed) {
    gemmi8_a64_store(gemmi8_qoutput_fp32, 2, 4, CR, 1, rows, nc, oc, stride, tq, vacc);
  } else {
    gemmi8_a64_store(gemmi8_qoutput_fp32, 2, 4, CR, 0, rows, nc, oc, stride, tq, vacc);
  }
}

/* The first nc (< 16) bytes at p (out of line: the tail tile only). */
static __attribute__((noinline)) uint8x16_t load_tail(const uint8_t* p, size_t nc)
{
  return gemmi8_a64_load_tail(p, nc, 0);
}

#define GEMMI8_DW_LOAD_WHOLE(p) vld1q_u8(p)
#define GEMMI8_DW_LOAD_PART(p) load_tail(p, nc)

static GEMMI8_ALWAYS_INLINE void mla(int32x4_t* acc, uint8x16_t a, int16x8_t wlo, int16x8_t whi)
{
  const int16x8_t alo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(a)));
  const int16x8_t ahi = vreinterpretq_s16_u16(vmovl_high_u8(a));
  acc[0] = vmlal_s16(acc[0], vget_low_s16(alo), vget_low_s16(wlo));
  acc[1] = vmlal_high_s16(acc[1], alo, wlo);
  acc[2] = vmlal_s16(acc[2], vget_low_s16(ahi), vget_low_s16(whi));
  acc[3] = vmlal_high_s16(acc[3], ahi, whi);
}

/* A tap's pointer with the offset applied (not to the zero buffer). */
static GEMMI8_ALWAYS_INLINE const uint8_t* tap_pointer(const void* p, const void* zero,
                                                       size_t offset)
{
  return p != zero ? (const uint8_t*) p + offset : (const uint8_t*) p;
}

/* One tap of the two pixels. */
#define GEMMI8_DW_TAP(t, LOAD) \
  do { \
  const uint8_t* pa = in0[t]; \
  const uint8_t* pb = in1[t]; \
  if (pa != (const uint8_t*) zero) pa += input_offset; \
  if (pb != (const uint8_t*) zero) pb += input_offset; \
  const int8x16_t vw = vld1q_s8(wt); \
  const int16x8_t wlo = vmovl_s8(vget_low_s8(vw)), whi = vmovl_high_s8(vw); \
  mla(vacc[0], veorq_u8(LOAD(pa + c0), vxor), wlo, whi); \
  mla(vacc[1], veorq_u8(LOAD(pb + c0), vxor), wlo, whi); \
  wt += CR; \
  } while (0)

/* KS taps (0: any count); the output kind is an argument of the body. */
static GEMMI8_ALWAYS_INLINE void dwconv(const size_t KS, enum gemmi8_qoutput out,
                                        size_t channels, size_t pixels, size_t ks,
                                        const void* const* input, const void* w, void* output,
                                        size_t output_stride, size_t input_offset,
                                        const void* zero, const struct gemmi8_dwparams* params)
{
  const int is_signed = params->input_xor != 0;
  if (KS != 0) ks = KS;
  const size_t bytes = gemmi8_round_up(CR * 4 + ks * CR, 64);
  const size_t out_size = out == gemmi8_qoutput_s32 ? 4 : 1;
  const uint8x16_t vxor = vdupq_n_u8(params->input_xor);
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
          /* software-pipelined for cores that issue in order (Cortex-A53, A55): the
           * next tap's pointers and bytes are loaded while this tap multiplies */
          uint8x16_t va = vld1q_u8(tap_pointer(in0[0], zero, input_offset) + c0);
          uint8x16_t vb = vld1q_u8(tap_pointer(in1[0], zero, input_offset) + c0);
          int8x16_t vw = vld1q_s8(wt);
#pragma GCC unroll 1
          for (size_t t = 1; t <= ks; t++) {
            GEMMI8_MCA_BEGIN("q8-neon-dwconv-up16c:MACS=32:PEAK=a64-smlal");
            /* tap t (tap ks - 1 again at the end: loaded, not used) */
            const size_t n = t < ks ? t : ks - 1;
            const uint8x16_t na = vld1q_u8(tap_pointer(in0[n], zero, input_offset) + c0);
            const uint8x16_t nb = vld1q_u8(tap_pointer(in1[n], zero, input_offset) + c0);
            const int8x16_t nw = vld1q_s8(wt + CR * n);
            const int16x8_t wlo = vmovl_s8(vget_low_s8(vw)), whi = vmovl_high_s8(vw);
            mla(vacc[0], veorq_u8(va, vxor), wlo, whi);
            mla(vacc[1], veorq_u8(vb, vxor), wlo, whi);
            va = na;
            vb = nb;
            vw = nw;
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
GEMMI8_DWCONV_ENTRIES(16, neon)
