/*
 * Depthwise microkernels, AVX2, tiles of 16 channels (what they compute:
 * src/microkernel.h), on the generic kernels' packed tiles (int32 bias'[16], then 16
 * int8 weights a tap).
 *
 * A uint8 x int8 product fits int16 exactly (|p| <= 32640), so per tap the 16 weights
 * are widened once (vpmovsxbw) for two output pixels, each pixel's bytes (xored with
 * 0x80 for int8 input) widened (vpmovzxbw) and multiplied with vpmullw, and the
 * products widened to int32 and added (no vpmaddubsw: its pair sums saturate). Then
 * the GEMM kernels' output stage (output-avx2.h). A tail of fewer than 16 channels is
 * copied through a small buffer: no byte past the call's channels is read.
 */
#include <string.h>

#include "output-avx2.h"

#define CR 16

/* The first nc (< 16) bytes at p, zeros above (out of line: the tail tile only). */
static __attribute__((noinline)) __m128i load_tail(const uint8_t* p, size_t nc)
{
  uint8_t part[CR] = {0};
  memcpy(part, p, nc);
  return _mm_loadu_si128((const __m128i*) part);
}

static GEMMI8_ALWAYS_INLINE __m128i load_channels(const uint8_t* p, size_t nc)
{
  return nc == CR ? _mm_loadu_si128((const __m128i*) p) : load_tail(p, nc);
}

static GEMMI8_ALWAYS_INLINE void mla(__m256i* acc, __m128i a, __m256i w16)
{
  const __m256i prod = _mm256_mullo_epi16(_mm256_cvtepu8_epi16(a), w16);
  acc[0] = _mm256_add_epi32(acc[0], _mm256_cvtepi16_epi32(_mm256_castsi256_si128(prod)));
  acc[1] = _mm256_add_epi32(acc[1], _mm256_cvtepi16_epi32(_mm256_extracti128_si256(prod, 1)));
}

/* The output stage of one or two pixels: one copy per output kind, signedness and
 * group count. */
static __attribute__((noinline)) void store_tile(enum gemmi8_qoutput out, int is_signed,
                                                 size_t rows, size_t nc, uint8_t* o,
                                                 size_t stride, const struct gemmi8_qparams* tq,
                                                 __m256i vacc[2][2])
{
  /* the stage's two-group form takes more than 8 columns: 8 or fewer go through a
   * buffer as 9, their per-channel values through copies padded to 16 */
  uint8_t part[2 * 16 * 4];
  const size_t n = nc > 8 ? nc : 9, size = out == gemmi8_qoutput_s32 ? 4 : 1;
  struct gemmi8_qparams padded;
  int32_t mult[16] = {0}, shift[16] = {0};
  float scale[16] = {0};
  if (nc <= 8 && out != gemmi8_qoutput_s32 && tq->channel_stride != 0) {
    padded = *tq;
    if (out == gemmi8_qoutput_fixedpoint) {
      memcpy(mult, tq->multiplier, nc * sizeof(int32_t));
      memcpy(shift, tq->shift, nc * sizeof(int32_t));
      padded.multiplier = mult;
      padded.shift = shift;
    } else {
      memcpy(scale, tq->scale, nc * sizeof(float));
      padded.scale = scale;
    }
    tq = &padded;
  }
  uint8_t* dst = nc > 8 ? o : part;
  const size_t dst_stride = nc > 8 ? stride : 16 * 4;
  if (is_signed) {
    gemmi8_qgemm_output_avx2(2, 2, 1, out, rows, n, dst, dst_stride, tq, vacc);
  } else {
    gemmi8_qgemm_output_avx2(2, 2, 0, out, rows, n, dst, dst_stride, tq, vacc);
  }
  if (nc <= 8) {
    for (size_t r = 0; r < rows; r++) memcpy(o + r * stride, part + r * 16 * 4, nc * size);
  }
}

/* One tap of the two pixels. */
#define GEMMI8_DW_TAP(t) \
  do { \
  const uint8_t* pa = in0[t]; \
  const uint8_t* pb = in1[t]; \
  if (pa != (const uint8_t*) zero) pa += input_offset; \
  if (pb != (const uint8_t*) zero) pb += input_offset; \
  const __m256i w16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*) wt)); \
  mla(vacc[0], _mm_xor_si128(load_channels(pa + c0, nc), vxor), w16); \
  mla(vacc[1], _mm_xor_si128(load_channels(pb + c0, nc), vxor), w16); \
  wt += CR; \
  } while (0)

static GEMMI8_ALWAYS_INLINE void dwconv(const size_t KS, enum gemmi8_qoutput out,
                                        size_t channels, size_t pixels, size_t ks,
                                        const void* const* input, const void* w, void* output,
                                        size_t output_stride, size_t input_offset,
                                        const void* zero, const struct gemmi8_dwparams* params)
{
  if (KS != 0) ks = KS;
  const size_t bytes = gemmi8_round_up(CR * 4 + ks * CR, 64);
  const size_t out_size = out == gemmi8_qoutput_s32 ? 4 : 1;
  const __m128i vxor = _mm_set1_epi8((char) params->input_xor);
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
      __m256i vacc[2][2];
      vacc[0][0] = vacc[1][0] = _mm256_load_si256((const __m256i*) tile);
      vacc[0][1] = vacc[1][1] = _mm256_load_si256((const __m256i*) (tile + 32));
      const uint8_t* wt = tile + CR * 4;
      /* 3x3 unrolled, 5x5 by kernel rows, any count as a loop */
#pragma GCC unroll 9
      for (size_t t = 0; KS == 9 && t < 9; t++) GEMMI8_DW_TAP(t);
#pragma GCC unroll 5
      for (size_t t = 0; KS == 25 && t < 25; t++) GEMMI8_DW_TAP(t);
#pragma GCC unroll 1
      for (size_t t = 0; KS == 0 && t < ks; t++) GEMMI8_DW_TAP(t);
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
GEMMI8_DWCONV_ENTRIES(16, avx2)
