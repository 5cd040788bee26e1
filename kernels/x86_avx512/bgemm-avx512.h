/*
 * AVX-512 binary GEMM microkernel template: MR x NR words-of-K, NR = 8 * NJMAX columns
 * (NJMAX 3 or 4).
 *
 * Packed weights: for each 64-bit word of depth, NR words (one per column), padding
 * bits and columns 0. Each zmm holds one depth word of 8 columns; a row's word of a
 * is broadcast and xor-ed with it, and the popcounts add up per column in 64-bit
 * lanes: vacc<i>x<j> counts the differing bits of row i against columns 8j..8j+7.
 * The last depth word of a is masked to the real k bits (a's padding never counts).
 * acc = k - 2 * count, then int32, float (acc * scale + bias, two roundings) or
 * sign bits of that float. Narrow tiles compute only their ceil(nr / 8) groups;
 * rows past mr alias row mr - 1.
 *
 * GEMMI8_BIN_POPCNT(x) must be defined by the includer: 64-bit lane popcounts.
 */
#ifndef GEMMI8_BGEMM_AVX512_H
#define GEMMI8_BGEMM_AVX512_H

#include <immintrin.h>

#include "requant.h"


static GEMMI8_ALWAYS_INLINE void gemmi8_bgemm_core_avx512(const size_t MR, const size_t NJMAX,
                                                          const size_t NJ, size_t mr, size_t k,
                                                          const uint64_t* a, size_t a_stride,
                                                          const uint64_t* w, __m512i vacc[][4])
{
  const uint64_t* ap[16] = {a};
#pragma GCC unroll 16
  for (size_t i = 1; i < MR; i++) ap[i] = i < mr ? ap[i - 1] + a_stride : ap[i - 1];
#pragma GCC unroll 16
  for (size_t i = 0; i < MR; i++) {
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) vacc[i][j] = _mm512_setzero_si512();
  }
  const size_t words = GEMMI8_BIN_WORDS(k);
  for (size_t kw = 0; kw + 1 < words; kw++) {
    __m512i vw[4];
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) vw[j] = _mm512_load_si512(w + 8 * j);
    w += 8 * NJMAX;
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      const __m512i va = _mm512_set1_epi64((long long) ap[i][kw]);
#pragma GCC unroll 4
      for (size_t j = 0; j < NJ; j++) {
        vacc[i][j] =
            _mm512_add_epi64(vacc[i][j], GEMMI8_BIN_POPCNT(_mm512_xor_si512(va, vw[j])));
        /* keeps each accumulator in one register (no copy per iteration) */
        __asm__("" : "+v"(vacc[i][j]));
      }
    }
  }
  const uint64_t last = (k % 64) ? (UINT64_C(1) << (k % 64)) - 1 : ~UINT64_C(0);
  __m512i vw[4];
#pragma GCC unroll 4
  for (size_t j = 0; j < NJ; j++) vw[j] = _mm512_load_si512(w + 8 * j);
#pragma GCC unroll 16
  for (size_t i = 0; i < MR; i++) {
    const __m512i va = _mm512_set1_epi64((long long) (ap[i][words - 1] & last));
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) {
      vacc[i][j] = _mm512_add_epi64(vacc[i][j], GEMMI8_BIN_POPCNT(_mm512_xor_si512(va, vw[j])));
    }
  }
}

static GEMMI8_ALWAYS_INLINE __mmask8 gemmi8_bin_column_mask(size_t nr, size_t j)
{
  if (nr >= 8 * (j + 1)) return 0xFF;
  if (nr <= 8 * j) return 0;
  return (__mmask8) ((1u << (nr - 8 * j)) - 1);
}

/* k - 2 * count as 8 int32 (k <= INT32_MAX, so the difference fits). */
static GEMMI8_ALWAYS_INLINE __m256i gemmi8_bin_acc(__m512i vcount, __m256i vk)
{
  const __m256i vc = _mm512_cvtepi64_epi32(vcount);
  return _mm256_sub_epi32(vk, _mm256_add_epi32(vc, vc));
}

/* The float output's scale and bias of column group j (a NULL scale is 1, a NULL
 * bias 0), loaded once per group: the stores to c may alias them. */
static GEMMI8_ALWAYS_INLINE __m256 gemmi8_bin_scale(const struct gemmi8_bparams* p, size_t j,
                                                    __mmask8 mask)
{
  return p->scale ? _mm256_maskz_loadu_ps(mask, p->scale + 8 * j) : _mm256_set1_ps(1.0f);
}
static GEMMI8_ALWAYS_INLINE __m256 gemmi8_bin_bias(const struct gemmi8_bparams* p, size_t j,
                                                   __mmask8 mask)
{
  return p->bias ? _mm256_maskz_loadu_ps(mask, p->bias + 8 * j) : _mm256_setzero_ps();
}

/* (float) acc * scale + bias, two roundings. */
static GEMMI8_ALWAYS_INLINE __m256 gemmi8_bin_affine(__m256i vacc, __m256 vscale, __m256 vbias)
{
  return _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(vacc), vscale), vbias);
}

#define GEMMI8_BGEMM_STORE_s32(MR, NJ)                                                  \
  _Pragma("GCC unroll 4") for (size_t j = 0; j < NJ; j++) {                              \
    const __mmask8 mask = gemmi8_bin_column_mask(nr, j);                                 \
    _Pragma("GCC unroll 16") for (size_t i = 0; i < MR; i++) {                           \
      if (i < mr) {                                                                      \
        int32_t* ci = (int32_t*) ((uint8_t*) c + i * c_stride) + 8 * j;                  \
        _mm256_mask_storeu_epi32(ci, mask, gemmi8_bin_acc(vacc[i][j], vk));              \
      }                                                                                  \
    }                                                                                    \
  }

#define GEMMI8_BGEMM_STORE_f32(MR, NJ)                                                  \
  _Pragma("GCC unroll 4") for (size_t j = 0; j < NJ; j++) {                              \
    const __mmask8 mask = gemmi8_bin_column_mask(nr, j);                                 \
    const __m256 vscale = gemmi8_bin_scale(params, j, mask);                             \
    const __m256 vbias = gemmi8_bin_bias(params, j, mask);                               \
    _Pragma("GCC unroll 16") for (size_t i = 0; i < MR; i++) {                           \
      if (i < mr) {                                                                      \
        float* ci = (float*) ((uint8_t*) c + i * c_stride) + 8 * j;                      \
        _mm256_mask_storeu_ps(ci, mask,                                                  \
                              gemmi8_bin_affine(gemmi8_bin_acc(vacc[i][j], vk), vscale,  \
                                                vbias));                                 \
      }                                                                                  \
    }                                                                                    \
  }

/* Sign bits: the tile's nr <= 32 bits start at bit params->n0 of the row and may
 * run into the next word. */
#define GEMMI8_BGEMM_STORE_bits(MR, NJ)                                                 \
  {                                                                                      \
    uint64_t bits[MR];                                                                   \
    _Pragma("GCC unroll 16") for (size_t i = 0; i < MR; i++) bits[i] = 0;                \
    _Pragma("GCC unroll 4") for (size_t j = 0; j < NJ; j++) {                            \
      const __mmask8 mask = gemmi8_bin_column_mask(nr, j);                               \
      const __m256 vscale = gemmi8_bin_scale(params, j, mask);                           \
      const __m256 vbias = gemmi8_bin_bias(params, j, mask);                             \
      _Pragma("GCC unroll 16") for (size_t i = 0; i < MR; i++) {                         \
        const __m256 v = gemmi8_bin_affine(gemmi8_bin_acc(vacc[i][j], vk), vscale, vbias); \
        const __mmask8 negative =                                                        \
            _mm256_mask_cmp_ps_mask(mask, v, _mm256_setzero_ps(), _CMP_LT_OQ);           \
        bits[i] |= (uint64_t) negative << (8 * j);                                       \
      }                                                                                  \
    }                                                                                    \
    _Pragma("GCC unroll 16") for (size_t i = 0; i < MR; i++) {                           \
      if (i < mr) {                                                                      \
        uint64_t* word = (uint64_t*) ((uint8_t*) c + i * c_stride) + params->n0 / 64;    \
        const unsigned offset = (unsigned) (params->n0 % 64);                            \
        const uint64_t field = (UINT64_C(1) << nr) - 1;                                  \
        word[0] = (word[0] & ~(field << offset)) | (bits[i] << offset);                  \
        if (offset + nr > 64) {                                                          \
          const unsigned spill = 64 - offset;                                            \
          word[1] = (word[1] & ~(field >> spill)) | (bits[i] >> spill);                  \
        }                                                                                \
      }                                                                                  \
    }                                                                                    \
  }

enum { GEMMI8_BGEMM_S32, GEMMI8_BGEMM_F32, GEMMI8_BGEMM_BITS };
/* The body takes the kernels' own arguments, the output in the bits of mr from
 * GEMMI8_BGEMM_OUT_SHIFT up: each entry point is an or and a jump (a sibling call). */
#define GEMMI8_BGEMM_OUT_SHIFT 16

/* The three kernels of a tile: one body with one copy of the depth loop, always the
 * full NJMAX column groups (only a matrix's last block is narrower), the output chosen
 * by a switch after it, and three thin entry points. The body is not inlined into
 * them (nor cloned per output): keeps the library small. */
#define GEMMI8_BGEMM_AVX512_KERNELS(MR, NJMAX)                                          \
  static __attribute__((noinline, noclone)) void GEMMI8_BGEMM_NAME(any)(                \
      size_t mr_out, size_t nr, size_t k, const uint64_t* a, size_t a_stride,            \
      const void* w, void* c, size_t c_stride, const struct gemmi8_bparams* params)      \
  {                                                                                      \
    const size_t mr = mr_out & ((1u << GEMMI8_BGEMM_OUT_SHIFT) - 1);                     \
    const size_t out = mr_out >> GEMMI8_BGEMM_OUT_SHIFT;                                 \
    __m512i vacc[MR][4];                                                                 \
    const __m256i vk = _mm256_set1_epi32((int32_t) k);                                   \
    gemmi8_bgemm_core_avx512(MR, NJMAX, NJMAX, mr, k, a, a_stride, w, vacc);             \
    switch (out) {                                                                       \
      case GEMMI8_BGEMM_F32:                                                             \
        GEMMI8_BGEMM_STORE_f32(MR, NJMAX) break;                                         \
      default:                                                                           \
        GEMMI8_BGEMM_STORE_bits(MR, NJMAX) break;                                        \
    }                                                                                    \
  }                                                                                      \
  void GEMMI8_BGEMM_NAME(s32)(size_t mr, size_t nr, size_t k, const uint64_t* a,         \
                              size_t a_stride, const void* w, void* c, size_t c_stride,  \
                              const struct gemmi8_bparams* params)                       \
  {                                                                                      \
    (void) params;                                                                       \
    __m512i vacc[MR][4];                                                                 \
    const __m256i vk = _mm256_set1_epi32((int32_t) k);                                   \
    gemmi8_bgemm_core_avx512(MR, NJMAX, NJMAX, mr, k, a, a_stride, w, vacc);             \
    GEMMI8_BGEMM_STORE_s32(MR, NJMAX)                                                    \
  }                                                                                      \
  GEMMI8_BGEMM_AVX512_ENTRY(f32, GEMMI8_BGEMM_F32)                                       \
  GEMMI8_BGEMM_AVX512_ENTRY(bits, GEMMI8_BGEMM_BITS)

/* GEMMI8_BGEMM_NAME(out), defined by the includer, names the kernels. */
#define GEMMI8_BGEMM_AVX512_ENTRY(out, kind)                                            \
  void GEMMI8_BGEMM_NAME(out)(size_t mr, size_t nr, size_t k, const uint64_t* a,         \
                              size_t a_stride, const void* w, void* c, size_t c_stride,  \
                              const struct gemmi8_bparams* params)                       \
  {                                                                                      \
    GEMMI8_BGEMM_NAME(any)(mr | (size_t) kind << GEMMI8_BGEMM_OUT_SHIFT, nr, k, a,      \
                           a_stride, w, c, c_stride, params);                            \
  }

#endif
