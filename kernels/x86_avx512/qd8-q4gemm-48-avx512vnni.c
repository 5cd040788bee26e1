/*
 * qd8 rows x 4-bit weights, float output, AVX-512 VNNI: tiles of 1, 2 and 4 rows by
 * 48 columns (src/microkernel.h, struct gemmi8_q4params, says what they compute).
 *
 * A group of 8 depths is 64 bytes a column group of 16: vpandd takes the low nibbles
 * (depths 0..3 of each column's lane), vpsrlw 4 and vpandd the high ones (depths
 * 4..7), each the unsigned operand of vpdpbusd; the row's int8 bytes, four at a time,
 * are broadcast as its signed operand, so the rows are read in place and their zero
 * point stays out of the loop. After a chunk, vpdpwssd of the row's (sum, zero point)
 * and the column's (-zp, -sum of q - zp) int16 pairs takes the two cross terms off in
 * one instruction. Registers (4 rows): vacc 12, vf 12 (the float sums), 6 nibble
 * vectors and the mask. (Six and seven rows, with the float sums in L1, measured
 * slower: GCC spills accumulators in the depth loop.)
 */
#include <immintrin.h>
#include <string.h>

#include "microkernel.h"

#define NJ 3
#define NR 48

static inline __m512i bcast4(const int8_t* p)
{
  int32_t v;
  memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

static inline __attribute__((always_inline)) void q4gemm(
    const size_t MR, size_t mr, size_t nr, size_t k, const int8_t* a, size_t a_stride,
    const void* w, float* c, size_t c_stride, const struct gemmi8_q4params* p)
{
  const int8_t* ap[4];
  const int32_t* rp[4];
  #pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    const size_t r = i < mr ? i : mr - 1;
    ap[i] = a + r * a_stride;
    rp[i] = p->row_pairs + r * p->pairs_stride;
  }
  const __m512i vnib = _mm512_set1_epi8(0x0F);
  __m512i vacc[4][NJ];
  __m512 vf[4][NJ];
  #pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    #pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) vacc[i][j] = _mm512_setzero_si512(), vf[i][j] = _mm512_setzero_ps();
  }
  const uint8_t* wp = w;
  const float* scales = NULL;
  const size_t chunk = p->chunk;
  size_t ci = 0;
  for (size_t k0 = 0; k0 < k; k0 += chunk, ci++) {
    const size_t len = k - k0 < chunk ? k - k0 : chunk;
    const int32_t* pairs = (const int32_t*) wp;
    scales = (const float*) (wp + 4 * NR);
    const uint8_t* q = wp + 8 * NR;
    /* the chunk's pairs and scales, read after its nibbles: asked for first, so that the
     * weights are read in address order (the hardware's stream prefetch follows) */
    #pragma GCC unroll 6
    for (size_t l = 0; l < 8 * NR; l += 64) _mm_prefetch((const char*) wp + l, _MM_HINT_T0);
    if (p->per_chunk) {
      #pragma GCC unroll 4
      for (size_t i = 0; i < MR; i++) {
        #pragma GCC unroll 4
        for (size_t j = 0; j < NJ; j++) vacc[i][j] = _mm512_setzero_si512();
      }
    }
    size_t d = 0;
    for (; d + 8 <= len; d += 8) {
      __m512i lo[NJ], hi[NJ];
      #pragma GCC unroll 4
      for (size_t j = 0; j < NJ; j++) {
        const __m512i v = _mm512_load_si512(q + 64 * j);
        lo[j] = _mm512_and_si512(v, vnib);
        hi[j] = _mm512_and_si512(_mm512_srli_epi16(v, 4), vnib);
      }
      q += 64 * NJ;
      #pragma GCC unroll 4
      for (size_t i = 0; i < MR; i++) {
        const __m512i va = bcast4(ap[i] + k0 + d);
        const __m512i vb = bcast4(ap[i] + k0 + d + 4);
        #pragma GCC unroll 4
        for (size_t j = 0; j < NJ; j++) {
          vacc[i][j] = _mm512_dpbusd_epi32(vacc[i][j], lo[j], va);
          vacc[i][j] = _mm512_dpbusd_epi32(vacc[i][j], hi[j], vb);
        }
      }
    }
    if (d < len) {
      /* the last 1..7 depths: only they are read from the rows (their nibbles past the
       * depth are 0) */
      const size_t rest = len - d;
      const __mmask16 mlo = (__mmask16) ((1u << (rest < 4 ? rest : 4)) - 1);
      const __mmask16 mhi = (__mmask16) ((1u << (rest > 4 ? rest - 4 : 0)) - 1);
      __m512i lo[NJ], hi[NJ];
      #pragma GCC unroll 4
      for (size_t j = 0; j < NJ; j++) {
        const __m512i v = _mm512_load_si512(q + 64 * j);
        lo[j] = _mm512_and_si512(v, vnib);
        hi[j] = _mm512_and_si512(_mm512_srli_epi16(v, 4), vnib);
      }
      q += 64 * NJ;
      #pragma GCC unroll 4
      for (size_t i = 0; i < MR; i++) {
        const __m512i va = _mm512_broadcastd_epi32(_mm_maskz_loadu_epi8(mlo, ap[i] + k0 + d));
        const __m512i vb = _mm512_broadcastd_epi32(_mm_maskz_loadu_epi8(mhi, ap[i] + k0 + d + 4));
        #pragma GCC unroll 4
        for (size_t j = 0; j < NJ; j++) {
          vacc[i][j] = _mm512_dpbusd_epi32(vacc[i][j], lo[j], va);
          vacc[i][j] = _mm512_dpbusd_epi32(vacc[i][j], hi[j], vb);
        }
      }
    }
    #pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) {
      const __m512i vpair = _mm512_load_si512(pairs + 16 * j);
      #pragma GCC unroll 4
      for (size_t i = 0; i < MR; i++) {
        vacc[i][j] = _mm512_dpwssd_epi32(vacc[i][j], _mm512_set1_epi32(rp[i][ci]), vpair);
      }
    }
    if (p->per_chunk) {
      #pragma GCC unroll 4
      for (size_t j = 0; j < NJ; j++) {
        const __m512 vs = _mm512_load_ps(scales + 16 * j);
        #pragma GCC unroll 4
        for (size_t i = 0; i < MR; i++) {
          vf[i][j] = _mm512_add_ps(vf[i][j], _mm512_mul_ps(_mm512_cvtepi32_ps(vacc[i][j]), vs));
        }
      }
    }
    wp = q;
  }
  if (!p->per_chunk) {
    #pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) {
      const __m512 vs = _mm512_load_ps(scales + 16 * j);
      #pragma GCC unroll 4
      for (size_t i = 0; i < MR; i++) {
        vf[i][j] = _mm512_add_ps(vf[i][j], _mm512_mul_ps(_mm512_cvtepi32_ps(vacc[i][j]), vs));
      }
    }
  }
  const __m512 vmin = _mm512_set1_ps(p->out_min), vmax = _mm512_set1_ps(p->out_max);
  #pragma GCC unroll 4
  for (size_t j = 0; j < NJ; j++) {
    const __mmask16 mask = nr >= 16 * (j + 1) ? (__mmask16) 0xFFFF
                                              : (nr <= 16 * j ? 0 : (__mmask16) ((1u << (nr - 16 * j)) - 1));
    const __m512 vbias = _mm512_maskz_loadu_ps(mask, p->col_bias + 16 * j);
    #pragma GCC unroll 4
    for (size_t i = 0; i < MR; i++) {
      if (i < mr) {
        __m512 v = _mm512_mul_ps(vf[i][j], _mm512_set1_ps(p->row_scale[i]));
        v = _mm512_add_ps(v, vbias);
        v = _mm512_min_ps(vmax, _mm512_max_ps(vmin, v));
        _mm512_mask_storeu_ps((float*) ((uint8_t*) c + i * c_stride) + 16 * j, mask, v);
      }
    }
  }
}

#define Q4GEMM_KERNEL(MR)                                                                    \
  void gemmi8_qd8_q4gemm_ukernel_##MR##x48__avx512vnni(                                      \
      size_t mr, size_t nr, size_t k, const int8_t* a, size_t a_stride, const void* w,       \
      float* c, size_t c_stride, const struct gemmi8_q4params* p)                            \
  {                                                                                          \
    q4gemm(MR, mr, nr, k, a, a_stride, w, c, c_stride, p);                                   \
  }
Q4GEMM_KERNEL(1)
Q4GEMM_KERNEL(2)
Q4GEMM_KERNEL(4)
