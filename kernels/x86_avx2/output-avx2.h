/*
 * AVX2 output stages of the int8 kernels (gemm, igemm and the kinds to come): what a
 * tile does with its int32 accumulators once its k loop is done.
 *
 * The accumulators arrive as vacc[i][j], ymm of row i, columns 8j..8j+7 (MR rows, NJ
 * column groups, MR and NJ compile-time constants); rows at or past mr are never
 * stored, columns past nr are stored 8/4/2/1 at a time, and per-channel arrays are
 * read for nr columns only (vpmaskmovd). is_signed: 8-bit outputs are int8 (qs8), else
 * uint8. gemmi8_qgemm_output_avx2 picks the stage from enum gemmi8_qoutput
 * (src/microkernel.h): a new output kind is one more stage function here and one more
 * case there (and one more entry point per tile file); the templates that call it do
 * not change.
 */
#ifndef GEMMI8_OUTPUT_AVX2_H
#define GEMMI8_OUTPUT_AVX2_H

#include <immintrin.h>

#include "requant.h"

/* Lanes of column group j that lie within nr columns. */
static GEMMI8_ALWAYS_INLINE __m256i gemmi8_column_mask_avx2(size_t nr, size_t j)
{
  const __m256i vidx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t) (nr - 8 * j)), vidx);
}

/* The first n (0..7) int32 lanes of v. */
static GEMMI8_ALWAYS_INLINE void gemmi8_store_s32_partial_avx2(int32_t* p, size_t n, __m256i v)
{
  __m128i x = _mm256_castsi256_si128(v);
  if (n & 4) {
    _mm_storeu_si128((__m128i*) p, x);
    x = _mm256_extracti128_si256(v, 1);
    p += 4;
  }
  if (n & 2) {
    _mm_storel_epi64((__m128i*) p, x);
    x = _mm_unpackhi_epi64(x, x);
    p += 2;
  }
  if (n & 1) _mm_storeu_si32(p, x);
}

/* The first n (0..15) bytes of v. */
static GEMMI8_ALWAYS_INLINE void gemmi8_store_u8_partial_avx2(uint8_t* p, size_t n, __m128i v)
{
  if (n & 8) {
    _mm_storel_epi64((__m128i*) p, v);
    v = _mm_unpackhi_epi64(v, v);
    p += 8;
  }
  if (n & 4) {
    _mm_storeu_si32(p, v);
    v = _mm_srli_epi64(v, 32);
    p += 4;
  }
  if (n & 2) {
    _mm_storeu_si16(p, v);
    v = _mm_srli_epi32(v, 16);
    p += 2;
  }
  if (n & 1) *p = (uint8_t) _mm_cvtsi128_si32(v);
}

static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store_s32_avx2(const size_t MR, const size_t NJ,
                                                            size_t mr, size_t nr, void* c,
                                                            size_t c_stride, __m256i vacc[][2])
{
#pragma GCC unroll 6
  for (size_t i = 0; i < MR; i++) {
    if (i < mr) {
      int32_t* ci = (int32_t*) ((uint8_t*) c + i * c_stride);
      if (nr >= 8 * NJ) {
#pragma GCC unroll 2
        for (size_t j = 0; j < NJ; j++) _mm256_storeu_si256((__m256i*) (ci + 8 * j), vacc[i][j]);
      } else if (NJ == 2) {
        _mm256_storeu_si256((__m256i*) ci, vacc[i][0]);
        gemmi8_store_s32_partial_avx2(ci + 8, nr - 8, vacc[i][1]);
      } else {
        gemmi8_store_s32_partial_avx2(ci, nr, vacc[i][0]);
      }
    }
  }
}

/* Requantized int32 lanes to bytes: add the zero point (add_zp; wrapping around
 * int32, as gemmlowp's addition does; the fp32 mode has it in already), saturate to
 * int16, to 8 bits, clamp to [min, max]: clamp(r + zero_point mod 2^32, min, max). Two
 * rows at a time; rows at or past mr are neither stored nor addressed. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store_bytes_avx2(
    const size_t MR, const size_t NJ, const int is_signed, const int add_zp, size_t mr,
    size_t nr, void* c, size_t c_stride, const struct gemmi8_qparams* p, __m256i vr[][2])
{
  const __m256i vzp = _mm256_set1_epi32(add_zp ? p->zero_point : 0);
  const __m256i vmin = _mm256_set1_epi8((char) p->min);
  const __m256i vmax = _mm256_set1_epi8((char) p->max);
#pragma GCC unroll 3
  for (size_t i = 0; i < MR; i += 2) {
    const size_t i1 = i + 1 < MR ? i + 1 : i;
    uint8_t* c0 = (uint8_t*) c + (i < mr ? i : 0) * c_stride;
    uint8_t* c1 = (uint8_t*) c + (i1 < mr ? i1 : 0) * c_stride;
    __m256i v;
    __m128i lo, hi;
    if (NJ == 2) {
      /* rows i, i1, 16 columns: bytes come out as dwords 0-3 of both rows in lane 0
       * (columns 0-3, 8-11) and lane 1 (4-7, 12-15), then put in order */
      const __m256i p0 = _mm256_packs_epi32(_mm256_add_epi32(vr[i][0], vzp),
                                            _mm256_add_epi32(vr[i][1], vzp));
      const __m256i p1 = _mm256_packs_epi32(_mm256_add_epi32(vr[i1][0], vzp),
                                            _mm256_add_epi32(vr[i1][1], vzp));
      v = is_signed ? _mm256_packs_epi16(p0, p1) : _mm256_packus_epi16(p0, p1);
      v = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    } else {
      /* rows i, i1, 8 columns */
      const __m256i p01 = _mm256_packs_epi32(_mm256_add_epi32(vr[i][0], vzp),
                                             _mm256_add_epi32(vr[i1][0], vzp));
      v = is_signed ? _mm256_packs_epi16(p01, p01) : _mm256_packus_epi16(p01, p01);
      v = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 4, 1, 5, 0, 4, 1, 5));
    }
    v = is_signed ? _mm256_min_epi8(_mm256_max_epi8(v, vmin), vmax)
                  : _mm256_min_epu8(_mm256_max_epu8(v, vmin), vmax);
    lo = _mm256_castsi256_si128(v);
    hi = _mm256_extracti128_si256(v, 1);
    if (NJ == 1) hi = _mm_unpackhi_epi64(lo, lo);
    if (nr >= 8 * NJ) {
      if (NJ == 2) {
        if (i1 < mr) _mm_storeu_si128((__m128i*) c1, hi);
        if (i < mr) _mm_storeu_si128((__m128i*) c0, lo);
      } else {
        if (i1 < mr) _mm_storel_epi64((__m128i*) c1, hi);
        if (i < mr) _mm_storel_epi64((__m128i*) c0, lo);
      }
    } else {
      if (i1 < mr) gemmi8_store_u8_partial_avx2(c1, nr, hi);
      if (i < mr) gemmi8_store_u8_partial_avx2(c0, nr, lo);
    }
  }
}

/* Per-channel (stride 1) or per-tensor (stride 0) values of group j, within nr. */
static GEMMI8_ALWAYS_INLINE __m256i gemmi8_load_channel_avx2(const int32_t* p, size_t stride,
                                                            size_t nr, size_t j)
{
  if (!stride) return _mm256_set1_epi32(*p);
  if (nr >= 8 * (j + 1)) return _mm256_loadu_si256((const __m256i*) (p + 8 * j));
  return _mm256_maskload_epi32((const int*) (p + 8 * j), gemmi8_column_mask_avx2(nr, j));
}

/* The saturating left shift of the fixed-point mode (scales above 1 only, p->left_shift):
 * a lane overflows when shifting back loses bits; it then takes INT32_MIN / MAX. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_shift_left_avx2(const size_t MR, const size_t NJ,
                                                             size_t nr,
                                                             const struct gemmi8_qparams* p,
                                                             __m256i vacc[][2])
{
#pragma GCC unroll 2
  for (size_t j = 0; j < NJ; j++) {
    const __m256i vleft = _mm256_max_epi32(
        gemmi8_load_channel_avx2(p->shift, p->channel_stride, nr, j), _mm256_setzero_si256());
#pragma GCC unroll 6
    for (size_t i = 0; i < MR; i++) {
      const __m256i x = vacc[i][j];
      const __m256i shifted = _mm256_sllv_epi32(x, vleft);
      const __m256i exact = _mm256_cmpeq_epi32(_mm256_srav_epi32(shifted, vleft), x);
      const __m256i saturated =
          _mm256_xor_si256(_mm256_srai_epi32(x, 31), _mm256_set1_epi32(INT32_MAX));
      vacc[i][j] = _mm256_blendv_epi8(saturated, shifted, exact);
    }
  }
}

/* TFLite fixed-point requantization in registers, then the byte store:
 *   SaturatingRoundingDoublingHighMul = floor((x * mul + 2^30) / 2^31) (mul >= 0, so no
 *   overflow): even lanes shifted down into the low dwords, odd lanes doubled into the
 *   high dwords, one blend; RoundingDivideByPOT: y >> e, plus one when the remainder
 *   exceeds half (half or more for negative y): half away from zero. 14 instructions
 *   per 8 outputs (bench/epilogue-count.sh counts them with the store). */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store_fixedpoint_avx2(
    const size_t MR, const size_t NJ, const int is_signed, size_t mr, size_t nr, void* c,
    size_t c_stride, const struct gemmi8_qparams* p, __m256i vacc[][2])
{
  if (p->left_shift) gemmi8_qgemm_shift_left_avx2(MR, NJ, nr, p, vacc);
  const __m256i vone = _mm256_set1_epi32(1);
  const __m256i vzero = _mm256_setzero_si256();
  const __m256i vnudge = _mm256_set1_epi64x(INT64_C(1) << 30);
#pragma GCC unroll 2
  for (size_t j = 0; j < NJ; j++) {
    const __m256i vmul = gemmi8_load_channel_avx2(p->multiplier, p->channel_stride, nr, j);
    const __m256i vmul_odd = _mm256_srli_epi64(vmul, 32);
    const __m256i vshift = gemmi8_load_channel_avx2(p->shift, p->channel_stride, nr, j);
    const __m256i vright = _mm256_max_epi32(_mm256_sub_epi32(vzero, vshift), vzero);
    const __m256i vrmask = _mm256_sub_epi32(_mm256_sllv_epi32(vone, vright), vone);
    const __m256i vhalf = _mm256_srli_epi32(vrmask, 1);
#pragma GCC unroll 6
    for (size_t i = 0; i < MR; i++) {
      const __m256i x = vacc[i][j];
      const __m256i peven = _mm256_add_epi64(_mm256_mul_epi32(x, vmul), vnudge);
      const __m256i podd =
          _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), vmul_odd), vnudge);
      const __m256i y =
          _mm256_blend_epi32(_mm256_srli_epi64(peven, 31), _mm256_add_epi64(podd, podd), 0xAA);
      const __m256i rem = _mm256_and_si256(y, vrmask);
      const __m256i threshold = _mm256_sub_epi32(vhalf, _mm256_srai_epi32(y, 31));
      const __m256i r = _mm256_srav_epi32(y, vright);
      vacc[i][j] = _mm256_sub_epi32(r, _mm256_cmpgt_epi32(rem, threshold));
    }
  }
  gemmi8_qgemm_store_bytes_avx2(MR, NJ, is_signed, 1, mr, nr, c, c_stride, p, vacc);
}

/* fp32 requantization: float product, clamp to [min - zp, max - zp] (operands in
 * the order of the scalar x < lo ? lo : x), round half to even by adding 1.5 * 2^23,
 * whose low mantissa bits then hold the integer. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store_fp32_avx2(
    const size_t MR, const size_t NJ, const int is_signed, size_t mr, size_t nr, void* c,
    size_t c_stride, const struct gemmi8_qparams* p, __m256i vacc[][2])
{
  const __m256 vlo = _mm256_set1_ps((float) (p->min - p->zero_point));
  const __m256 vhi = _mm256_set1_ps((float) (p->max - p->zero_point));
  const __m256 vmagic = _mm256_set1_ps(12582912.0f);
  /* the magic number's bits less the zero point: the subtraction leaves r + zp */
  const __m256i vmagic_bits = _mm256_set1_epi32(0x4B400000 - p->zero_point);
#pragma GCC unroll 2
  for (size_t j = 0; j < NJ; j++) {
    __m256 vscale;
    if (!p->channel_stride) {
      vscale = _mm256_set1_ps(*p->scale);
    } else if (nr >= 8 * (j + 1)) {
      vscale = _mm256_loadu_ps(p->scale + 8 * j);
    } else {
      vscale = _mm256_maskload_ps(p->scale + 8 * j, gemmi8_column_mask_avx2(nr, j));
    }
#pragma GCC unroll 6
    for (size_t i = 0; i < MR; i++) {
      __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(vacc[i][j]), vscale);
      x = _mm256_min_ps(vhi, _mm256_max_ps(vlo, x));
      vacc[i][j] = _mm256_sub_epi32(_mm256_castps_si256(_mm256_add_ps(x, vmagic)), vmagic_bits);
    }
  }
  gemmi8_qgemm_store_bytes_avx2(MR, NJ, is_signed, 0, mr, nr, c, c_stride, p, vacc);
}

/* The output stage `out` of the tile in vacc. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_output_avx2(const size_t MR, const size_t NJ,
                                                          const int is_signed,
                                                          enum gemmi8_qoutput out, size_t mr,
                                                          size_t nr, void* c, size_t c_stride,
                                                          const struct gemmi8_qparams* p,
                                                          __m256i vacc[][2])
{
  switch (out) {
    case gemmi8_qoutput_s32:
      gemmi8_qgemm_store_s32_avx2(MR, NJ, mr, nr, c, c_stride, vacc);
      break;
    case gemmi8_qoutput_fixedpoint:
      gemmi8_qgemm_store_fixedpoint_avx2(MR, NJ, is_signed, mr, nr, c, c_stride, p, vacc);
      break;
    case gemmi8_qoutput_fp32:
      gemmi8_qgemm_store_fp32_avx2(MR, NJ, is_signed, mr, nr, c, c_stride, p, vacc);
      break;
    case gemmi8_qoutput_count: /* not an output */
      break;
  }
}

#endif
