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

/*
 * The binary convolution's (igemm) accumulators: ks taps of MR row pointers (a_offset
 * added to those that are not `zero`), GEMMI8_BIN_WORDS(kc) words each, broadcast from
 * memory (the driver keeps the bits past kc 0, so no word needs a mask).
 */
static GEMMI8_ALWAYS_INLINE void gemmi8_bigemm_core_avx512(const size_t MR, const size_t NJ,
                                                           size_t kc, size_t ks,
                                                           const uint64_t* const* a,
                                                           const uint64_t* w, size_t a_offset,
                                                           const void* zero, __m512i vacc[][4])
{
#pragma GCC unroll 16
  for (size_t i = 0; i < MR; i++) {
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) vacc[i][j] = _mm512_setzero_si512();
  }
  const size_t words = GEMMI8_BIN_WORDS(kc);
  do {
    const uint64_t* ap[16];
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      ap[i] = a[i];
      if (a_offset != 0 && (const void*) ap[i] != zero) {
        ap[i] = (const uint64_t*) ((uintptr_t) ap[i] + a_offset);
      }
    }
    a += MR;
    for (size_t kw = 0; kw < words; kw++) {
      __m512i vw[4];
#pragma GCC unroll 4
      for (size_t j = 0; j < NJ; j++) vw[j] = _mm512_load_si512(w + 8 * j);
      w += 8 * NJ;
#pragma GCC unroll 16
      for (size_t i = 0; i < MR; i++) {
        const __m512i va = _mm512_set1_epi64((long long) ap[i][kw]);
#pragma GCC unroll 4
        for (size_t j = 0; j < NJ; j++) {
          vacc[i][j] =
              _mm512_add_epi64(vacc[i][j], GEMMI8_BIN_POPCNT(_mm512_xor_si512(va, vw[j])));
          __asm__("" : "+v"(vacc[i][j]));
        }
      }
    }
  } while (--ks != 0);
}

/* Columns 16h..16h+15 of a row as 16 int32: ks * kc - 2 * count - the row's
 * correction (if any). The counts (< 2^31) are the low dwords of two accumulators. */
static GEMMI8_ALWAYS_INLINE __m512i gemmi8_bigemm_acc(__m512i vlo, __m512i vhi, __m512i vk,
                                                      const int32_t* corr, size_t h,
                                                      __mmask16 mask)
{
  const __m512i vidx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i vcount = _mm512_permutex2var_epi32(vlo, vidx, vhi);
  __m512i v = _mm512_sub_epi32(vk, _mm512_add_epi32(vcount, vcount));
  if (corr != NULL) v = _mm512_sub_epi32(v, _mm512_maskz_loadu_epi32(mask, corr + 16 * h));
  return v;
}

static GEMMI8_ALWAYS_INLINE __mmask16 gemmi8_bigemm_mask(size_t nr, size_t h)
{
  if (nr >= 16 * (h + 1)) return 0xFFFF;
  if (nr <= 16 * h) return 0;
  return (__mmask16) ((1u << (nr - 16 * h)) - 1);
}

/* The three igemm kernels of a tile (NJ 4: 32 columns, two halves of 16): one body
 * (not inlined) and thin entry points, as GEMMI8_BGEMM_AVX512_KERNELS;
 * GEMMI8_BIGEMM_NAME(out) names them. */
#define GEMMI8_BIGEMM_AVX512_KERNELS(MR)                                                  \
  static __attribute__((noinline, noclone)) void GEMMI8_BIGEMM_NAME(any)(                \
      size_t mr_out, size_t nr, size_t kc, size_t ks, const uint64_t* const* a,           \
      const void* w, void* c, size_t c_stride, size_t a_offset, const void* zero,         \
      const struct gemmi8_bcparams* params)                                               \
  {                                                                                       \
    const size_t mr = mr_out & ((1u << GEMMI8_BGEMM_OUT_SHIFT) - 1);                      \
    const size_t out = mr_out >> GEMMI8_BGEMM_OUT_SHIFT;                                  \
    __m512i vacc[MR][4];                                                                  \
    const __m512i vk = _mm512_set1_epi32((int32_t) (ks * kc));                            \
    gemmi8_bigemm_core_avx512(MR, 4, kc, ks, a, w, a_offset, zero, vacc);                 \
    const __m512 vmin = _mm512_set1_ps(params->out_min);                                  \
    const __m512 vmax = _mm512_set1_ps(params->out_max);                                  \
    uint64_t bits[MR];                                                                    \
    _Pragma("GCC unroll 16") for (size_t i = 0; i < MR; i++) bits[i] = 0;                 \
    _Pragma("GCC unroll 2") for (size_t h = 0; h < 2; h++) {                              \
      const __mmask16 mask = gemmi8_bigemm_mask(nr, h);                                   \
      __m512 vscale = _mm512_set1_ps(1.0f), vbias = _mm512_setzero_ps();                  \
      __m512i vthr = vk, vflip = vk;                                                      \
      if (out == GEMMI8_BGEMM_F32) {                                                      \
        if (params->scale) vscale = _mm512_maskz_loadu_ps(mask, params->scale + 16 * h);  \
        if (params->bias) vbias = _mm512_maskz_loadu_ps(mask, params->bias + 16 * h);     \
      } else if (out == GEMMI8_BGEMM_BITS) {                                              \
        vthr = _mm512_maskz_loadu_epi32(mask, params->threshold + 16 * h);                \
        vflip = _mm512_maskz_loadu_epi32(mask, params->flip + 16 * h);                    \
      }                                                                                   \
      _Pragma("GCC unroll 16") for (size_t i = 0; i < MR; i++) {                          \
        const int32_t* corr = params->corr != NULL ? params->corr[i] : NULL;              \
        const __m512i v =                                                                 \
            gemmi8_bigemm_acc(vacc[i][2 * h], vacc[i][2 * h + 1], vk, corr, h, mask);     \
        if (out == GEMMI8_BGEMM_BITS) {                                                   \
          const __mmask16 set =                                                           \
              _mm512_mask_cmplt_epi32_mask(mask, _mm512_xor_si512(v, vflip), vthr);       \
          bits[i] |= (uint64_t) set << (16 * h);                                          \
        } else if (i < mr) {                                                              \
          void* ci = (uint8_t*) c + i * c_stride + 64 * h;                                \
          if (out == GEMMI8_BGEMM_S32) {                                                  \
            _mm512_mask_storeu_epi32(ci, mask, v);                                        \
          } else {                                                                        \
            __m512 f = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(v), vscale), vbias); \
            if (params->add) f = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, ci), f);        \
            /* max(min, f) then min(max, f): the second operand (f) when either is NaN */ \
            f = _mm512_min_ps(vmax, _mm512_max_ps(vmin, f));                              \
            _mm512_mask_storeu_ps(ci, mask, f);                                           \
          }                                                                               \
        }                                                                                 \
      }                                                                                   \
    }                                                                                     \
    if (out == GEMMI8_BGEMM_BITS) {                                                       \
      const unsigned offset = (unsigned) (params->n0 % 64);                               \
      const uint64_t field = (UINT64_C(1) << nr) - 1;                                     \
      _Pragma("GCC unroll 16") for (size_t i = 0; i < MR; i++) {                          \
        if (i < mr) {                                                                     \
          uint64_t* word = (uint64_t*) ((uint8_t*) c + i * c_stride) + params->n0 / 64;   \
          word[0] = (word[0] & ~(field << offset)) | (bits[i] << offset);                 \
          if (offset + nr > 64) {                                                         \
            const unsigned spill = 64 - offset;                                           \
            word[1] = (word[1] & ~(field >> spill)) | (bits[i] >> spill);                 \
          }                                                                               \
        }                                                                                 \
      }                                                                                   \
    }                                                                                     \
  }                                                                                       \
  GEMMI8_BIGEMM_AVX512_ENTRY(s32, GEMMI8_BGEMM_S32)                                       \
  GEMMI8_BIGEMM_AVX512_ENTRY(f32, GEMMI8_BGEMM_F32)                                       \
  GEMMI8_BIGEMM_AVX512_ENTRY(bits, GEMMI8_BGEMM_BITS)

#define GEMMI8_BIGEMM_AVX512_ENTRY(out, kind)                                             \
  void GEMMI8_BIGEMM_NAME(out)(size_t mr, size_t nr, size_t kc, size_t ks,                 \
                               const uint64_t* const* a, const void* w, void* c,           \
                               size_t c_stride, size_t a_offset, const void* zero,         \
                               const struct gemmi8_bcparams* params)                       \
  {                                                                                       \
    GEMMI8_BIGEMM_NAME(any)(mr | (size_t) kind << GEMMI8_BGEMM_OUT_SHIFT, nr, kc, ks, a,  \
                            w, c, c_stride, a_offset, zero, params);                      \
  }

#endif
