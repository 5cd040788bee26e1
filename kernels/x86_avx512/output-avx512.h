/*
 * AVX-512 output stages of the int8 kernels (gemm, igemm and the kinds to come):
 * what a tile does with its int32 accumulators once its k loop is done.
 *
 * The accumulators arrive as vacc[i][j], zmm of row i, columns 16j..16j+15 (MR rows,
 * NJ column groups, MR and NJ compile-time constants); rows at or past mr are never
 * stored, columns past nr are masked off, and per-channel arrays are read for nr
 * columns only. gemmi8_qgemm_output_avx512 picks the stage from enum gemmi8_qoutput
 * (src/microkernel.h): a new output kind is one more stage function here and one more
 * case there (and one more entry point per tile file); the templates that call it do
 * not change.
 */
#ifndef GEMMI8_OUTPUT_AVX512_H
#define GEMMI8_OUTPUT_AVX512_H

#include <immintrin.h>

#include "requant.h"

/* The main tile's height (7x48); smaller tiles serve M below it. */
#define GEMMI8_AVX512VNNI_MAIN_MR 7

static GEMMI8_ALWAYS_INLINE __mmask16 gemmi8_column_mask(size_t nr, size_t j)
{
  if (nr >= 16 * (j + 1)) return 0xFFFF;
  if (nr <= 16 * j) return 0;
  return (__mmask16) ((1u << (nr - 16 * j)) - 1);
}

/* The store mask of column group j of NJ. EXACT: the tile computed NJ = ceil(nr / 16)
 * groups, so every group but the last is whole (a constant: plain stores); else (the
 * small-M tiles, always NJ wide) any group may be partial or empty. */
static GEMMI8_ALWAYS_INLINE __mmask16 gemmi8_group_mask(const size_t NJ, const int EXACT,
                                                        size_t nr, size_t j)
{
  return EXACT && j + 1 < NJ ? (__mmask16) 0xFFFF : gemmi8_column_mask(nr, j);
}


/* Loads 16 per-channel (stride 1) or per-tensor (stride 0) values, within nr. */
static GEMMI8_ALWAYS_INLINE __m512i gemmi8_load_channel_epi32(const int32_t* p, size_t stride,
                                                              __mmask16 mask)
{
  return stride ? _mm512_maskz_loadu_epi32(mask, p) : _mm512_set1_epi32(*p);
}

static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store_s32_avx512(
    const size_t MR, const size_t NJ, const int EXACT, size_t mr, size_t nr, void* c, size_t c_stride,
    __m512i vacc[][4])
{
#pragma GCC unroll 4
  for (size_t j = 0; j < NJ; j++) {
    const __mmask16 mask = gemmi8_group_mask(NJ, EXACT, nr, j);
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      if (i < mr) {
        int32_t* ci = (int32_t*) ((uint8_t*) c + i * c_stride) + 16 * j;
        _mm512_mask_storeu_epi32(ci, mask, vacc[i][j]);
      }
    }
  }
}

/* The saturating left shift of the fixed-point mode (scales above 1 only): a
 * lane overflows when shifting back loses bits; it then takes INT32_MIN / MAX. A rare
 * path: out of line, on a copy of the accumulators (rows x nj of v), one copy per
 * object for every tile and column-group count. */
static __attribute__((noinline, noclone, unused)) void gemmi8_qgemm_shift_left_rows_avx512(
    size_t rows, size_t nj, size_t nr, const struct gemmi8_qparams* p, __m512i v[][4])
{
  const __m512i vmax = _mm512_set1_epi32(INT32_MAX);
  for (size_t j = 0; j < nj; j++) {
    const __m512i vleft = _mm512_max_epi32(
        gemmi8_load_channel_epi32(p->shift + 16 * j * p->channel_stride, p->channel_stride,
                                  gemmi8_column_mask(nr, j)),
        _mm512_setzero_si512());
    for (size_t i = 0; i < rows; i++) {
      const __m512i x = v[i][j];
      const __m512i shifted = _mm512_sllv_epi32(x, vleft);
      const __mmask16 overflow = _mm512_cmpneq_epi32_mask(_mm512_srav_epi32(shifted, vleft), x);
      v[i][j] =
          _mm512_mask_mov_epi32(shifted, overflow, _mm512_xor_si512(_mm512_srai_epi32(x, 31), vmax));
    }
  }
}

static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_shift_left_avx512(const size_t MR, const size_t NJ,
                                                                size_t nr,
                                                                const struct gemmi8_qparams* p,
                                                                __m512i vacc[][4])
{
  __m512i v[16][4];
#pragma GCC unroll 16
  for (size_t i = 0; i < MR; i++) {
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) v[i][j] = vacc[i][j];
  }
  gemmi8_qgemm_shift_left_rows_avx512(MR, NJ, nr, p, v);
#pragma GCC unroll 16
  for (size_t i = 0; i < MR; i++) {
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) vacc[i][j] = v[i][j];
  }
}

/* The per-channel constants of the fixed-point requantization of column group j, 8
 * zmm (see below): computed once per packed block by the driver through
 * gemmi8_q8_prepare_fixedpoint__avx512vnni (params->prepared) rather than once per
 * tile, where they cost 6 of 23 instructions per 16 outputs on a 7x48 tile. */
enum {
  GEMMI8_FP_MUL,     /* multiplier (even lanes used by vpmuldq) */
  GEMMI8_FP_MUL_ODD, /* multiplier of the odd lanes, in the even positions */
  GEMMI8_FP_C_EVEN,  /* rounding constant, even lanes: 2^30 (+ 2^(30+e) when e > 0) */
  GEMMI8_FP_C_ODD,
  GEMMI8_FP_D_EVEN,  /* correction for a negative product: 2^31 when e > 0, else 0 */
  GEMMI8_FP_D_ODD,
  GEMMI8_FP_SH_EVEN, /* 31 + e */
  GEMMI8_FP_SH_ODD,
  GEMMI8_FP_VECTORS
};
_Static_assert(4 * GEMMI8_FP_VECTORS * 64 <= GEMMI8_QPREPARED_BYTES, "prepared constants fit");

static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_prepare_group_avx512(const struct gemmi8_qparams* p,
                                                                  size_t nr, size_t j,
                                                                  __m512i* out)
{
  const __m512i vzero = _mm512_setzero_si512();
  const __m512i vlow32 = _mm512_set1_epi64(INT64_C(0xFFFFFFFF));
  const __m512i v2_30 = _mm512_set1_epi64(INT64_C(1) << 30);
  const __m512i v2_31 = _mm512_set1_epi64(INT64_C(1) << 31);
  const __m512i vone64 = _mm512_set1_epi64(1);
  const __m512i v30 = _mm512_set1_epi64(30);
  const __m512i v31 = _mm512_set1_epi64(31);
  const __mmask16 mask = gemmi8_column_mask(nr, j);
  const __m512i vmul = gemmi8_load_channel_epi32(p->multiplier + 16 * j * p->channel_stride,
                                                 p->channel_stride, mask);
  const __m512i vshift = gemmi8_load_channel_epi32(p->shift + 16 * j * p->channel_stride,
                                                   p->channel_stride, mask);
  const __m512i vright = _mm512_max_epi32(_mm512_sub_epi32(vzero, vshift), vzero);
  const __m512i ve_even = _mm512_and_si512(vright, vlow32);
  const __m512i ve_odd = _mm512_srli_epi64(vright, 32);
  const __mmask8 round_even = _mm512_test_epi64_mask(ve_even, ve_even);
  const __mmask8 round_odd = _mm512_test_epi64_mask(ve_odd, ve_odd);
  out[GEMMI8_FP_MUL] = vmul;
  out[GEMMI8_FP_MUL_ODD] = _mm512_srli_epi64(vmul, 32);
  out[GEMMI8_FP_C_EVEN] = _mm512_add_epi64(
      v2_30, _mm512_maskz_sllv_epi64(round_even, vone64, _mm512_add_epi64(ve_even, v30)));
  out[GEMMI8_FP_C_ODD] = _mm512_add_epi64(
      v2_30, _mm512_maskz_sllv_epi64(round_odd, vone64, _mm512_add_epi64(ve_odd, v30)));
  out[GEMMI8_FP_D_EVEN] = _mm512_maskz_mov_epi64(round_even, v2_31);
  out[GEMMI8_FP_D_ODD] = _mm512_maskz_mov_epi64(round_odd, v2_31);
  out[GEMMI8_FP_SH_EVEN] = _mm512_add_epi64(ve_even, v31);
  out[GEMMI8_FP_SH_ODD] = _mm512_add_epi64(ve_odd, v31);
}

/* TFLite fixed-point requantization of every lane, in registers.
 * SaturatingRoundingDoublingHighMul and RoundingDivideByPOT(e) fold into one exact
 * rounding of the 64-bit product p = x * multiplier:
 *   r = floor((p + 2^30 + (e > 0 ? 2^(30+e) - [p < 0] * 2^31 : 0)) / 2^(31+e))
 * (q = floor((p + 2^30) / 2^31) then floor((q + 2^(e-1) - [q < 0]) / 2^e); for e > 0,
 * [q < 0] may be replaced by [p < 0]: where they differ, -2^30 <= p < 0, both give 0).
 * Even lanes and odd lanes are computed in the quadwords and interleaved back; the
 * correction for p < 0 is a masked subtraction of a per-lane constant (2^31, or 0
 * where e = 0: no mask arithmetic per output). Then the zero point, added modulo
 * 2^32 as gemmlowp does, the clamp and the store of each group as soon as it is
 * ready (bench/epilogue-count.sh counts the instructions). The correction costs 4
 * instructions per 16 outputs and 14% at K = 64 (measured by leaving it out);
 * computed with shifts and a vpternlogq instead of the mask it measured the same.
 * Narrowing a row of three groups at once (two vpackssdw, a vpackuswb, a vpermd,
 * byte clamps, one store) measured no faster on Zen 5 than a vpmovdb per group, and
 * vpmovusdb (a saturating narrow) made the epilogue 17% slower. The per-channel
 * constants come from params->prepared (gemmi8_qgemm_prepare_group_avx512). */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store_fixedpoint_avx512(
    const size_t MR, const size_t NJ, const int EXACT, size_t mr, size_t nr, void* c,
    size_t c_stride, const struct gemmi8_qparams* p, __m512i vacc[][4])
{
  if (p->left_shift) gemmi8_qgemm_shift_left_avx512(MR, NJ, nr, p, vacc);
  const __m512i vzp = _mm512_set1_epi32(p->zero_point);
  const __m512i vinterleave =
      _mm512_setr_epi32(0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30);
  const __m512i vmin = _mm512_set1_epi32(p->min);
  const __m512i vmax = _mm512_set1_epi32(p->max);
  /* The block's constants come from the driver, or are computed here when the block
   * has a single row tile (M within one tile, batch 1, where preparing them apart
   * cost 4-13%): inline by the small-M tiles, by a call in the main tile (inline
   * there, its prepared path measured 3-4% slower). */
  const __m512i* prepared = (const __m512i*) p->prepared;
  __m512i local[4 * GEMMI8_FP_VECTORS];
  if (prepared == NULL) {
    if (MR < GEMMI8_AVX512VNNI_MAIN_MR) {
#pragma GCC unroll 4
      for (size_t j = 0; j < NJ; j++) {
        gemmi8_qgemm_prepare_group_avx512(p, nr, j, local + GEMMI8_FP_VECTORS * j);
      }
    } else {
      gemmi8_q8_prepare_fixedpoint__avx512vnni(p, nr, local);
    }
    prepared = local;
  }
#pragma GCC unroll 4
  for (size_t j = 0; j < NJ; j++) {
    const __mmask16 mask = gemmi8_group_mask(NJ, EXACT, nr, j);
    const __m512i* pc = prepared + GEMMI8_FP_VECTORS * j;
    const __m512i vmul = pc[GEMMI8_FP_MUL], vmul_odd = pc[GEMMI8_FP_MUL_ODD];
    const __m512i vc_even = pc[GEMMI8_FP_C_EVEN], vc_odd = pc[GEMMI8_FP_C_ODD];
    const __m512i vd_even = pc[GEMMI8_FP_D_EVEN], vd_odd = pc[GEMMI8_FP_D_ODD];
    const __m512i vsh_even = pc[GEMMI8_FP_SH_EVEN], vsh_odd = pc[GEMMI8_FP_SH_ODD];
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      const __m512i x = vacc[i][j];
      __m512i peven = _mm512_mul_epi32(x, vmul);
      __m512i podd = _mm512_mul_epi32(_mm512_srli_epi64(x, 32), vmul_odd);
      const __mmask8 neg_even = _mm512_movepi64_mask(peven);
      const __mmask8 neg_odd = _mm512_movepi64_mask(podd);
      peven = _mm512_add_epi64(peven, vc_even);
      podd = _mm512_add_epi64(podd, vc_odd);
      peven = _mm512_mask_sub_epi64(peven, neg_even, peven, vd_even);
      podd = _mm512_mask_sub_epi64(podd, neg_odd, podd, vd_odd);
      peven = _mm512_srav_epi64(peven, vsh_even);
      podd = _mm512_srav_epi64(podd, vsh_odd);
      __m512i r = _mm512_add_epi32(_mm512_permutex2var_epi32(peven, vinterleave, podd), vzp);
      r = _mm512_min_epi32(_mm512_max_epi32(r, vmin), vmax);
      if (i < mr) {
        _mm_mask_storeu_epi8((uint8_t*) c + i * c_stride + 16 * j, mask, _mm512_cvtepi32_epi8(r));
      }
    }
  }
}

/* fp32 requantization of one column group: float product, clamp to [min - zp, max -
 * zp], round half to even, the zero point, then the byte store (tiles of 16 columns:
 * per row 8 instructions, 11 with the packs below, and 1.16x the time on 12544 x 16 x
 * 32). */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store_fp32_group_avx512(
    const size_t MR, const int EXACT, size_t mr, size_t nr, void* c, size_t c_stride,
    const struct gemmi8_qparams* p, __m512i vacc[][4])
{
  const __m512 vlo = _mm512_set1_ps((float) (p->min - p->zero_point));
  const __m512 vhi = _mm512_set1_ps((float) (p->max - p->zero_point));
  const __m512i vzp = _mm512_set1_epi32(p->zero_point);
  const __mmask16 mask = gemmi8_group_mask(1, EXACT, nr, 0);
  const __m512 vscale =
      p->channel_stride ? _mm512_maskz_loadu_ps(mask, p->scale) : _mm512_set1_ps(*p->scale);
#pragma GCC unroll 16
  for (size_t i = 0; i < MR; i++) {
    __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(vacc[i][0]), vscale);
    x = _mm512_min_ps(_mm512_max_ps(x, vlo), vhi);
    const __m512i r = _mm512_add_epi32(
        _mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vzp);
    if (i < mr) _mm_mask_storeu_epi8((uint8_t*) c + i * c_stride, mask, _mm512_cvtepi32_epi8(r));
  }
}

/* fp32 requantization of two or more groups: x = min((float) acc * scale, max - zp)
 * rounded half to even (vcvtps2dq; x below the lower bound, or INT32_MIN where it
 * passes int32, saturates below it in the packs), then per row the groups narrowed
 * together: vpackssdw to int16, + zp with saturation, vpack[su]swb to bytes, one
 * vpermd to column order, the clamp to [min, max] as bytes and one masked store: the
 * bytes of clamp(round(x), min - zp, max - zp) + zp. Unsigned bytes where min >= 0
 * (every uint8 output, and an int8 one whose range holds no negative value: the same
 * bytes), else signed. The min goes where the scales are small (p->small_scales: x
 * cannot pass int32, and the packs' saturation gives what it gives), the clamp where
 * [min, max] is the whole range of the bytes (the packs saturate to it). Per row of three groups 21 instructions against 27 with a
 * vpmovdb and a store per group (Zen 4: 12544 x 96 x 16 176.6 -> 164.7 us, 3136 x 144
 * x 24 80.7 -> 76.5, 12544 x 32 x 27 83.6 -> 80.4). */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_store_fp32_avx512(
    const size_t MR, const size_t NJ, const int EXACT, size_t mr, size_t nr, void* c,
    size_t c_stride, const struct gemmi8_qparams* p, __m512i vacc[][4])
{
  if (NJ == 1) {
    gemmi8_qgemm_store_fp32_group_avx512(MR, EXACT, mr, nr, c, c_stride, p, vacc);
    return;
  }
  const __m512 vhi = _mm512_set1_ps((float) (p->max - p->zero_point));
  const __m512i vzp = _mm512_set1_epi16((int16_t) p->zero_point);
  const __m512i vmin = _mm512_set1_epi8((char) p->min);
  const __m512i vmax = _mm512_set1_epi8((char) p->max);
  const int is_signed = p->min < 0;
  /* (only the main tile at full width: the small-M tiles, bound by the weights' bytes,
   * and the narrow cases keep both, for less code) */
  const int main_tile = MR == GEMMI8_AVX512VNNI_MAIN_MR && NJ == 3;
  const int bound = !main_tile || !p->small_scales;
  const int clamp = !main_tile || (is_signed ? p->min != -128 || p->max != 127
                                             : p->min != 0 || p->max != 255);
  /* after the packs, dword 4 L + g holds columns 16 g + 4 L .. + 3 */
  const __m512i vorder = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  __m512 vscale[4];
#pragma GCC unroll 4
  for (size_t j = 0; j < NJ; j++) {
    const __mmask16 mask = gemmi8_group_mask(NJ, EXACT, nr, j);
    const float* sp = p->scale + 16 * j * p->channel_stride;
    vscale[j] = p->channel_stride ? _mm512_maskz_loadu_ps(mask, sp) : _mm512_set1_ps(*sp);
  }
  const __mmask64 mask = nr >= 64 ? ~(__mmask64) 0 : ((__mmask64) 1 << nr) - 1;
#pragma GCC unroll 16
  for (size_t i = 0; i < MR; i++) {
    __m512i r[4];
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) {
      __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(vacc[i][j]), vscale[j]);
      if (bound) x = _mm512_min_ps(x, vhi);
      r[j] = _mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    const __m512i lo = _mm512_adds_epi16(_mm512_packs_epi32(r[0], NJ > 1 ? r[1] : r[0]), vzp);
    const __m512i hi =
        NJ > 2 ? _mm512_adds_epi16(_mm512_packs_epi32(r[2], NJ > 3 ? r[3] : r[2]), vzp) : lo;
    __m512i b;
    if (is_signed) {
      b = _mm512_permutexvar_epi32(vorder, _mm512_packs_epi16(lo, hi));
      if (clamp) b = _mm512_min_epi8(_mm512_max_epi8(b, vmin), vmax);
    } else {
      b = _mm512_permutexvar_epi32(vorder, _mm512_packus_epi16(lo, hi));
      if (clamp) b = _mm512_min_epu8(_mm512_max_epu8(b, vmin), vmax);
    }
    if (i < mr) {
      /* as wide as the groups: a store past them may reach another thread's rows */
      uint8_t* ci = (uint8_t*) c + i * c_stride;
      if (NJ == 2) {
        _mm256_mask_storeu_epi8(ci, (__mmask32) mask, _mm512_castsi512_si256(b));
      } else {
        _mm512_mask_storeu_epi8(ci, mask, b);
      }
    }
  }
}

/* The output stage `out` of the tile in vacc. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_output_avx512(const size_t MR, const size_t NJ,
                                                            const int EXACT,
                                                            enum gemmi8_qoutput out, size_t mr,
                                                            size_t nr, void* c, size_t c_stride,
                                                            const struct gemmi8_qparams* p,
                                                            __m512i vacc[][4])
{
  switch (out) {
    case gemmi8_qoutput_s32:
      gemmi8_qgemm_store_s32_avx512(MR, NJ, EXACT, mr, nr, c, c_stride, vacc);
      break;
    case gemmi8_qoutput_fixedpoint:
      gemmi8_qgemm_store_fixedpoint_avx512(MR, NJ, EXACT, mr, nr, c, c_stride, p, vacc);
      break;
    case gemmi8_qoutput_fp32:
      gemmi8_qgemm_store_fp32_avx512(MR, NJ, EXACT, mr, nr, c, c_stride, p, vacc);
      break;
    case gemmi8_qoutput_count: /* not an output */
      break;
  }
}

#endif
