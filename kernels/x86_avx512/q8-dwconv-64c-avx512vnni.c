/*
 * Depthwise microkernels, AVX-512 VNNI, 64 channels a zmm of input bytes (what they
 * compute: src/microkernel.h).
 *
 * vpdpbusd adds the four products of each 32-bit lane: here the lane's four bytes are
 * four channels, and only one may count. So the weights are packed four times, vector
 * j keeping byte j of each lane (channel 4i + j in lane i) and zeros elsewhere, and
 * four accumulators vacc<j> take one vpdpbusd each per tap: 64 channels x 1 tap in
 * four instructions, with no shuffle of the input (it is read as it lies in memory,
 * xored with 0x80 for int8 input). Then two rounds of vpermt2d put the channels back
 * in order (vout<q>: channels 16q..16q+15) for the shared output stage
 * (output-avx512.h). The tail of the channels is a masked load; no byte past the
 * call's channels is read from a tap. A tile of 32 or fewer channels (the last of
 * 96 or 144) runs on the low half or quarter of each vector (ymm, xmm): its cost goes
 * with its channels rounded to 16, not to 64.
 *
 * Packed tile (gemmi8_dwpack_64c4__avx512vnni): int32 bias'[64] as four zmm in the
 * accumulators' order (vector j, lane i: channel 4i + j), then per tap four zmm of
 * weights as above: 256 + 256 * ks bytes.
 */
#include <string.h>

#include "output-avx512.h"

#define CR 64

void gemmi8_dwpack_64c4__avx512vnni(size_t channels, size_t ks, const int8_t* w,
                                    const int32_t* bias, void* packed)
{
  const size_t bytes = 256 + 256 * ks;
  uint8_t* tile = packed;
  for (size_t c0 = 0; c0 < channels; c0 += CR, tile += bytes) {
    memset(tile, 0, bytes);
    const size_t n = gemmi8_min(CR, channels - c0);
    for (size_t c = 0; c < n; c++) {
      const size_t i = c / 4, j = c % 4;
      memcpy(tile + j * 64 + i * 4, &bias[c0 + c], 4);
      for (size_t t = 0; t < ks; t++) {
        tile[256 + t * 256 + j * 64 + i * 4 + j] = (uint8_t) w[(c0 + c) * ks + t];
      }
    }
  }
}

/* vacc<j> lane i is channel 4i + j: out[q] lane 4a + j is vacc<j> lane 4q + a. */
static GEMMI8_ALWAYS_INLINE void deinterleave(__m512i vacc0, __m512i vacc1, __m512i vacc2,
                                              __m512i vacc3, __m512i out[4])
{
  /* lanes 0..7 (lo) or 8..15 (hi) of two vectors, interleaved */
  const __m512i vlo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i vhi =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  /* pairs of lanes of two vectors: channels 0..15 and 16..31 of each half */
  const __m512i vq0 = _mm512_setr_epi32(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
  const __m512i vq1 =
      _mm512_setr_epi32(8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
  const __m512i v01lo = _mm512_permutex2var_epi32(vacc0, vlo, vacc1);
  const __m512i v01hi = _mm512_permutex2var_epi32(vacc0, vhi, vacc1);
  const __m512i v23lo = _mm512_permutex2var_epi32(vacc2, vlo, vacc3);
  const __m512i v23hi = _mm512_permutex2var_epi32(vacc2, vhi, vacc3);
  out[0] = _mm512_permutex2var_epi32(v01lo, vq0, v23lo);
  out[1] = _mm512_permutex2var_epi32(v01lo, vq1, v23lo);
  out[2] = _mm512_permutex2var_epi32(v01hi, vq0, v23hi);
  out[3] = _mm512_permutex2var_epi32(v01hi, vq1, v23hi);
}

/* The output stage of a tile of one or two pixels (vout[r]: pixel r, channel groups
 * in order), for the column groups that hold channels: one copy per output kind. */
static __attribute__((noinline)) void store_tile(const enum gemmi8_qoutput out, size_t rows,
                                                 size_t nc, uint8_t* o, size_t stride,
                                                 const struct gemmi8_qparams* tq,
                                                 __m512i vout[2][4])
{
  switch (out) {
    case gemmi8_qoutput_s32:
      if (nc > 32) {
        gemmi8_qgemm_output_avx512(2, 4, 0, gemmi8_qoutput_s32, rows, nc, o, stride, tq, vout);
      } else {
        gemmi8_qgemm_output_avx512(2, 2, 0, gemmi8_qoutput_s32, rows, nc, o, stride, tq, vout);
      }
      break;
    case gemmi8_qoutput_fixedpoint: {
      /* the constants prepared (the operator always has them: computed here otherwise,
       * out of line, so that the stage holds no inline copy of the preparation) */
      __m512i local[4 * GEMMI8_FP_VECTORS];
      struct gemmi8_qparams p = *tq;
      if (p.prepared == NULL) {
        gemmi8_q8_prepare_fixedpoint__avx512vnni(tq, nc, local);
        p.prepared = local;
      }
      if (p.prepared == NULL) __builtin_unreachable();
      if (nc > 32) {
        gemmi8_qgemm_output_avx512(2, 4, 0, gemmi8_qoutput_fixedpoint, rows, nc, o, stride, &p,
                                   vout);
      } else {
        gemmi8_qgemm_output_avx512(2, 2, 0, gemmi8_qoutput_fixedpoint, rows, nc, o, stride, &p,
                                   vout);
      }
      break;
    }
    default:
      if (nc > 32) {
        gemmi8_qgemm_output_avx512(2, 4, 0, gemmi8_qoutput_fp32, rows, nc, o, stride, tq, vout);
      } else {
        gemmi8_qgemm_output_avx512(2, 2, 0, gemmi8_qoutput_fp32, rows, nc, o, stride, tq, vout);
      }
      break;
  }
}

/* One tap of the two pixels: 64 channels each (a whole tile read with plain loads, a
 * masked load costing an ALU operation more), or up to 32 in the halves of a vector. */
#define GEMMI8_DW_W(k) _mm512_broadcast_i64x4(_mm256_load_si256((const __m256i*) (wt + 64 * (k))))
#define GEMMI8_DW_TAP_FULL(t) \
  do { \
  const uint8_t* pa = taps0[t]; \
  const uint8_t* pb = taps1[t]; \
  if (pa != (const uint8_t*) zero) pa += offset; \
  if (pb != (const uint8_t*) zero) pb += offset; \
  /* a whole tile: plain loads (a masked load costs an ALU operation more) */ \
  const __m512i va = _mm512_xor_si512( \
  nc == CR ? _mm512_loadu_si512(pa + c0) : _mm512_maskz_loadu_epi8(mask, pa + c0), \
  vxor); \
  const __m512i vb = _mm512_xor_si512( \
  nc == CR ? _mm512_loadu_si512(pb + c0) : _mm512_maskz_loadu_epi8(mask, pb + c0), \
  vxor); \
  const __m512i vw0 = _mm512_load_si512(wt), vw1 = _mm512_load_si512(wt + 64); \
  const __m512i vw2 = _mm512_load_si512(wt + 128), vw3 = _mm512_load_si512(wt + 192); \
  vacc0 = _mm512_dpbusd_epi32(vacc0, va, vw0); \
  vbcc0 = _mm512_dpbusd_epi32(vbcc0, vb, vw0); \
  vacc1 = _mm512_dpbusd_epi32(vacc1, va, vw1); \
  vbcc1 = _mm512_dpbusd_epi32(vbcc1, vb, vw1); \
  vacc2 = _mm512_dpbusd_epi32(vacc2, va, vw2); \
  vbcc2 = _mm512_dpbusd_epi32(vbcc2, vb, vw2); \
  vacc3 = _mm512_dpbusd_epi32(vacc3, va, vw3); \
  vbcc3 = _mm512_dpbusd_epi32(vbcc3, vb, vw3); \
  wt += 256; \
  } while (0)
#define GEMMI8_DW_TAP_PAIR(t) \
  do { \
  const uint8_t* pa = taps0[t]; \
  const uint8_t* pb = taps1[t]; \
  if (pa != (const uint8_t*) zero) pa += offset; \
  if (pb != (const uint8_t*) zero) pb += offset; \
  const __m512i vab = _mm512_inserti64x4( \
  _mm512_castsi256_si512(_mm256_maskz_loadu_epi8(half, pa + c0)), \
  _mm256_maskz_loadu_epi8(half, pb + c0), 1); \
  const __m512i va = _mm512_xor_si512(vab, vxor); \
  vacc0 = _mm512_dpbusd_epi32(vacc0, va, GEMMI8_DW_W(0)); \
  vacc1 = _mm512_dpbusd_epi32(vacc1, va, GEMMI8_DW_W(1)); \
  vacc2 = _mm512_dpbusd_epi32(vacc2, va, GEMMI8_DW_W(2)); \
  vacc3 = _mm512_dpbusd_epi32(vacc3, va, GEMMI8_DW_W(3)); \
  wt += 256; \
  } while (0)

/* The kernel of KS taps (0: any), for every output kind (the entry points below). */
static GEMMI8_ALWAYS_INLINE void dwconv(const size_t KS, enum gemmi8_qoutput out,
                                        size_t channels, size_t pixels, size_t ks,
                                        const void* const* input, const void* w, void* output,
                                        size_t output_stride, size_t input_offset,
                                        const void* zero, const struct gemmi8_dwparams* params)
{
  if (KS != 0) ks = KS;
  const size_t bytes = 256 + 256 * ks, out_size = out == gemmi8_qoutput_s32 ? 4 : 1;
  const __m512i vxor = _mm512_set1_epi8((char) params->input_xor);
  const struct gemmi8_qparams* q = &params->q;
  const size_t cs = q->channel_stride;
  struct gemmi8_qparams tq = *q;
  /* two pixels at a time: each weight vector loaded serves both */
  for (size_t p = 0; p < pixels; p += 2) {
    const size_t rows = pixels - p >= 2 ? 2 : 1;
    const uint8_t* const* in0 = (const uint8_t* const*) input + p * ks;
    const uint8_t* const* in1 = rows == 2 ? in0 + ks : in0;
    /* the pixels' taps with the offset applied, once for all their channel tiles (a
     * specialised tap count; otherwise per tile) */
    const uint8_t* adjusted0[KS != 0 ? KS : 1];
    const uint8_t* adjusted1[KS != 0 ? KS : 1];
    const int adjust = KS != 0 && input_offset != 0;
    if (adjust) {
      for (size_t t = 0; t < KS; t++) {
        adjusted0[t] = in0[t] != (const uint8_t*) zero ? in0[t] + input_offset : in0[t];
        adjusted1[t] = in1[t] != (const uint8_t*) zero ? in1[t] + input_offset : in1[t];
      }
    }
    const uint8_t* const* taps0 = adjust ? adjusted0 : in0;
    const uint8_t* const* taps1 = adjust ? adjusted1 : in1;
    const size_t offset = KS != 0 ? 0 : input_offset;
    uint8_t* o = (uint8_t*) output + p * output_stride;
    const uint8_t* tile = w;
    for (size_t c0 = 0; c0 < channels; c0 += CR, tile += bytes) {
      const size_t nc = gemmi8_min(CR, channels - c0);
      const uint8_t* wt = tile + 256;
      __m512i vout[2][4];
      if (nc > 32) {
        const __mmask64 mask = nc == CR ? ~(__mmask64) 0 : ((__mmask64) 1 << nc) - 1;
        __m512i vacc0 = _mm512_load_si512(tile), vacc1 = _mm512_load_si512(tile + 64);
        __m512i vacc2 = _mm512_load_si512(tile + 128), vacc3 = _mm512_load_si512(tile + 192);
        __m512i vbcc0 = vacc0, vbcc1 = vacc1, vbcc2 = vacc2, vbcc3 = vacc3;
        /* 3x3 unrolled; 5x5 by kernel rows; any count as a loop */
#pragma GCC unroll 9
        for (size_t t = 0; KS == 9 && t < 9; t++) GEMMI8_DW_TAP_FULL(t);
#pragma GCC unroll 5
        for (size_t t = 0; KS == 25 && t < 25; t++) GEMMI8_DW_TAP_FULL(t);
#pragma GCC unroll 1
        for (size_t t = 0; KS == 0 && t < ks; t++) GEMMI8_DW_TAP_FULL(t);
        deinterleave(vacc0, vacc1, vacc2, vacc3, vout[0]);
        deinterleave(vbcc0, vbcc1, vbcc2, vbcc3, vout[1]);
      } else {
        /* 32 channels or fewer: the two pixels in the halves of each vector (low:
         * pixel p), the weights of the tile's first 32 channels in both */
        const __mmask32 half = (__mmask32) (((uint64_t) 1 << nc) - 1);
        __m512i vacc0 = _mm512_broadcast_i64x4(_mm256_load_si256((const __m256i*) tile));
        __m512i vacc1 = _mm512_broadcast_i64x4(_mm256_load_si256((const __m256i*) (tile + 64)));
        __m512i vacc2 = _mm512_broadcast_i64x4(_mm256_load_si256((const __m256i*) (tile + 128)));
        __m512i vacc3 = _mm512_broadcast_i64x4(_mm256_load_si256((const __m256i*) (tile + 192)));
        /* 3x3 unrolled; 5x5 by kernel rows; any count as a loop */
#pragma GCC unroll 9
        for (size_t t = 0; KS == 9 && t < 9; t++) GEMMI8_DW_TAP_PAIR(t);
#pragma GCC unroll 5
        for (size_t t = 0; KS == 25 && t < 25; t++) GEMMI8_DW_TAP_PAIR(t);
#pragma GCC unroll 1
        for (size_t t = 0; KS == 0 && t < ks; t++) GEMMI8_DW_TAP_PAIR(t);
        /* lanes 8..15 read as channels 32..63: pixel p + 1's channels 0..31 */
        __m512i v[4];
        deinterleave(vacc0, vacc1, vacc2, vacc3, v);
        vout[0][0] = v[0];
        vout[0][1] = v[1];
        vout[1][0] = v[2];
        vout[1][1] = v[3];
      }
      if (out == gemmi8_qoutput_fixedpoint) {
        tq.multiplier = q->multiplier + c0 * cs;
        tq.shift = q->shift + c0 * cs;
        if (q->prepared != NULL) {
          tq.prepared = (const uint8_t*) q->prepared + c0 / CR * GEMMI8_QPREPARED_BYTES;
        }
      } else if (out == gemmi8_qoutput_fp32) {
        tq.scale = q->scale + c0 * cs;
      }
      store_tile(out, rows, nc, o + c0 * out_size, output_stride, &tq, vout);
    }
  }
}

/* One body per tap count; the output kind is an argument. */
#define DWCONV_BODY(name, KS)                                                                 \
  static __attribute__((noinline)) void name(                                                 \
      enum gemmi8_qoutput out, size_t channels, size_t pixels, size_t ks,                     \
      const void* const* input, const void* w, void* output, size_t output_stride,            \
      size_t input_offset, const void* zero, const struct gemmi8_dwparams* params)            \
  {                                                                                           \
    dwconv(KS, out, channels, pixels, ks, input, w, output, output_stride, input_offset, zero, \
           params);                                                                           \
  }
DWCONV_BODY(dwconv_9, 9)
DWCONV_BODY(dwconv_25, 25)
DWCONV_BODY(dwconv_any, 0)

#define DWCONV(fn, out, body)                                                                \
  void fn(size_t channels, size_t pixels, size_t ks, const void* const* input, const void* w, \
          void* output, size_t output_stride, size_t input_offset, const void* zero,          \
          const struct gemmi8_dwparams* params)                                               \
  {                                                                                          \
    body(out, channels, pixels, ks, input, w, output, output_stride, input_offset, zero,      \
         params);                                                                            \
  }

DWCONV(gemmi8_q8_dwconv_s32_ukernel_9p64c__avx512vnni, gemmi8_qoutput_s32, dwconv_9)
DWCONV(gemmi8_q8_dwconv_fixedpoint_ukernel_9p64c__avx512vnni, gemmi8_qoutput_fixedpoint, dwconv_9)
DWCONV(gemmi8_q8_dwconv_fp32_ukernel_9p64c__avx512vnni, gemmi8_qoutput_fp32, dwconv_9)
DWCONV(gemmi8_q8_dwconv_s32_ukernel_25p64c__avx512vnni, gemmi8_qoutput_s32, dwconv_25)
DWCONV(gemmi8_q8_dwconv_fixedpoint_ukernel_25p64c__avx512vnni, gemmi8_qoutput_fixedpoint, dwconv_25)
DWCONV(gemmi8_q8_dwconv_fp32_ukernel_25p64c__avx512vnni, gemmi8_qoutput_fp32, dwconv_25)
DWCONV(gemmi8_q8_dwconv_s32_ukernel_up64c__avx512vnni, gemmi8_qoutput_s32, dwconv_any)
DWCONV(gemmi8_q8_dwconv_fixedpoint_ukernel_up64c__avx512vnni, gemmi8_qoutput_fixedpoint, dwconv_any)
DWCONV(gemmi8_q8_dwconv_fp32_ukernel_up64c__avx512vnni, gemmi8_qoutput_fp32, dwconv_any)
