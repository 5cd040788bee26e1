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
 * call's channels is read from a tap.
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

static GEMMI8_ALWAYS_INLINE void dwconv(const enum gemmi8_qoutput OUT, const size_t KS,
                                        size_t channels, size_t pixels, size_t ks,
                                        const void* const* input, const void* w, void* output,
                                        size_t output_stride, size_t input_offset,
                                        const void* zero, const struct gemmi8_dwparams* params)
{
  if (KS != 0) ks = KS;
  const size_t bytes = 256 + 256 * ks, out_size = OUT == gemmi8_qoutput_s32 ? 4 : 1;
  const __m512i vxor = _mm512_set1_epi8((char) params->input_xor);
  /* lanes 0..7 (lo) or 8..15 (hi) of two vectors, interleaved */
  const __m512i vlo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i vhi =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  /* pairs of lanes of two vectors: channels 0..15 and 16..31 of each half */
  const __m512i vq0 = _mm512_setr_epi32(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
  const __m512i vq1 =
      _mm512_setr_epi32(8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
  const struct gemmi8_qparams* q = &params->q;
  const size_t cs = q->channel_stride;
  for (size_t p = 0; p < pixels; p++) {
    const uint8_t* const* taps = (const uint8_t* const*) input + p * ks;
    uint8_t* o = (uint8_t*) output + p * output_stride;
    const uint8_t* tile = w;
    for (size_t c0 = 0; c0 < channels; c0 += CR, tile += bytes) {
      const size_t nc = gemmi8_min(CR, channels - c0);
      const __mmask64 mask = nc == CR ? ~(__mmask64) 0 : ((__mmask64) 1 << nc) - 1;
      __m512i vacc0 = _mm512_load_si512(tile);
      __m512i vacc1 = _mm512_load_si512(tile + 64);
      __m512i vacc2 = _mm512_load_si512(tile + 128);
      __m512i vacc3 = _mm512_load_si512(tile + 192);
      const uint8_t* wt = tile + 256;
#pragma GCC unroll 25
      for (size_t t = 0; t < ks; t++) {
        const uint8_t* ptr = taps[t];
        if (ptr != (const uint8_t*) zero) ptr += input_offset;
        const __m512i va = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, ptr + c0), vxor);
        vacc0 = _mm512_dpbusd_epi32(vacc0, va, _mm512_load_si512(wt));
        vacc1 = _mm512_dpbusd_epi32(vacc1, va, _mm512_load_si512(wt + 64));
        vacc2 = _mm512_dpbusd_epi32(vacc2, va, _mm512_load_si512(wt + 128));
        vacc3 = _mm512_dpbusd_epi32(vacc3, va, _mm512_load_si512(wt + 192));
        wt += 256;
      }
      /* vacc<j> lane i is channel 4i + j: vout[q] lane 4a + j is vacc<j> lane 4q + a */
      const __m512i v01lo = _mm512_permutex2var_epi32(vacc0, vlo, vacc1);
      const __m512i v01hi = _mm512_permutex2var_epi32(vacc0, vhi, vacc1);
      const __m512i v23lo = _mm512_permutex2var_epi32(vacc2, vlo, vacc3);
      const __m512i v23hi = _mm512_permutex2var_epi32(vacc2, vhi, vacc3);
      __m512i vout[1][4];
      vout[0][0] = _mm512_permutex2var_epi32(v01lo, vq0, v23lo);
      vout[0][1] = _mm512_permutex2var_epi32(v01lo, vq1, v23lo);
      vout[0][2] = _mm512_permutex2var_epi32(v01hi, vq0, v23hi);
      vout[0][3] = _mm512_permutex2var_epi32(v01hi, vq1, v23hi);
      struct gemmi8_qparams tq = *q;
      if (OUT == gemmi8_qoutput_fixedpoint) {
        tq.multiplier += c0 * cs;
        tq.shift += c0 * cs;
        if (tq.prepared != NULL) {
          tq.prepared = (const uint8_t*) q->prepared + c0 / CR * GEMMI8_QPREPARED_BYTES;
        }
      } else if (OUT == gemmi8_qoutput_fp32) {
        tq.scale += c0 * cs;
      }
      gemmi8_qgemm_output_avx512(1, 4, 0, OUT, 1, nc, o + c0 * out_size, 0, &tq, vout);
    }
  }
}

#define DWCONV(fn, out, KS)                                                                  \
  void fn(size_t channels, size_t pixels, size_t ks, const void* const* input, const void* w, \
          void* output, size_t output_stride, size_t input_offset, const void* zero,          \
          const struct gemmi8_dwparams* params)                                               \
  {                                                                                          \
    dwconv(out, KS, channels, pixels, ks, input, w, output, output_stride, input_offset, zero, \
           params);                                                                          \
  }

DWCONV(gemmi8_q8_dwconv_s32_ukernel_9p64c__avx512vnni, gemmi8_qoutput_s32, 9)
DWCONV(gemmi8_q8_dwconv_fixedpoint_ukernel_9p64c__avx512vnni, gemmi8_qoutput_fixedpoint, 9)
DWCONV(gemmi8_q8_dwconv_fp32_ukernel_9p64c__avx512vnni, gemmi8_qoutput_fp32, 9)
DWCONV(gemmi8_q8_dwconv_s32_ukernel_25p64c__avx512vnni, gemmi8_qoutput_s32, 25)
DWCONV(gemmi8_q8_dwconv_fixedpoint_ukernel_25p64c__avx512vnni, gemmi8_qoutput_fixedpoint, 25)
DWCONV(gemmi8_q8_dwconv_fp32_ukernel_25p64c__avx512vnni, gemmi8_qoutput_fp32, 25)
DWCONV(gemmi8_q8_dwconv_s32_ukernel_up64c__avx512vnni, gemmi8_qoutput_s32, 0)
DWCONV(gemmi8_q8_dwconv_fixedpoint_ukernel_up64c__avx512vnni, gemmi8_qoutput_fixedpoint, 0)
DWCONV(gemmi8_q8_dwconv_fp32_ukernel_up64c__avx512vnni, gemmi8_qoutput_fp32, 0)
