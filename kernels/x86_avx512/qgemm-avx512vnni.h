/*
 * AVX-512 VNNI qu8 / qs8 GEMM microkernel template: MR x NR (NR = 16 * NJMAX, up to
 * 64), k groups of 4 (vpdpbusd).
 *
 * vpdpbusd multiplies unsigned bytes by signed bytes. The packed weights are
 * w = B ^ 0x80, i.e. B - 128 as int8 for qu8 and B + 128 as uint8 for qs8, so
 *   qu8: acc += a (u8, register) * w (s8)      qs8: acc += w (u8) * a (s8, broadcast)
 * and acc = bias' + sum a * w + coef[n] * rowsum(a), exact modulo 2^32 (see src/microkernel.h).
 * The row sums come from the driver (params->row_sum); NULL when every coef is 0
 * (qu8 with b_zp = 128), and the term is skipped; when every column has the same
 * coef (qs8; qu8 with a per-tensor b_zp) it is one add, with no vector multiply. (Flipping a qs8 row to uint8 in the
 * loop instead, a ^ 0x80, costs one vpxord per broadcast and measured 40% slower.)
 *
 * Registers: vacc<i>x<j>: row i, columns 16j..16j+15 (MR x NJ zmm); vw<j>: 16 columns
 * x 4 depths of w; va<i>: 4 bytes of row i broadcast. NJ = ceil(nr / 16) column groups
 * are computed, so narrow tiles (N = 32) cost half. Rows past mr alias row mr - 1.
 * The depth tail (k % 4) is read with a masked load: no read past a row of a. The
 * output stages (requantization in registers, masked stores) are in output-avx512.h.
 */
#ifndef GEMMI8_QGEMM_AVX512VNNI_H
#define GEMMI8_QGEMM_AVX512VNNI_H

#include <immintrin.h>
#include <string.h>

#include "output-avx512.h"

static GEMMI8_ALWAYS_INLINE __m512i gemmi8_bcast4(const uint8_t* p)
{
  int32_t v;
  memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

/* The tile's accumulators start at the packed bias'; returns the block's weights. */
static GEMMI8_ALWAYS_INLINE const uint8_t* gemmi8_qgemm_init_avx512vnni(const size_t MR,
                                                                        const size_t NJMAX,
                                                                        const size_t NJ,
                                                                        const void* w,
                                                                        __m512i vacc[][4])
{
  const int32_t* bias = (const int32_t*) w;
#pragma GCC unroll 4
  for (size_t j = 0; j < NJ; j++) {
    const __m512i vbias = _mm512_load_si512(bias + 16 * j);
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) vacc[i][j] = vbias;
  }
  return (const uint8_t*) (bias + 32 * NJMAX);
}

/* Adds k depths of the rows ap[0..MR) times the weights at wk (round_up(k, 4) deep);
 * returns wk past them. */
static GEMMI8_ALWAYS_INLINE const uint8_t* gemmi8_qgemm_depth_avx512vnni(
    const size_t MR, const size_t NJMAX, const size_t NJ, const int signed_a, size_t k,
    const uint8_t* const* ap, const uint8_t* wk, __m512i vacc[][4])
{
  size_t kk = 0;
  if (MR <= 2) {
    /* Few rows: vpdpbusd's latency, not its throughput, would bound one chain per
     * accumulator. Even and odd depth groups go to two sets of chains, added at the
     * end (int32 addition modulo 2^32 is associative: the same bytes). */
    __m512i vacc_odd[2][4];
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) {
#pragma GCC unroll 2
      for (size_t i = 0; i < MR; i++) vacc_odd[i][j] = _mm512_setzero_si512();
    }
    for (; kk + 8 <= k; kk += 8) {
      __m512i vw[4], vw_odd[4];
#pragma GCC unroll 4
      for (size_t j = 0; j < NJ; j++) {
        vw[j] = _mm512_load_si512(wk + 64 * j);
        vw_odd[j] = _mm512_load_si512(wk + 64 * NJMAX + 64 * j);
      }
      wk += 128 * NJMAX;
#pragma GCC unroll 2
      for (size_t i = 0; i < MR; i++) {
        const __m512i va = gemmi8_bcast4(ap[i] + kk);
        const __m512i va_odd = gemmi8_bcast4(ap[i] + kk + 4);
#pragma GCC unroll 4
        for (size_t j = 0; j < NJ; j++) {
          vacc[i][j] = signed_a ? _mm512_dpbusd_epi32(vacc[i][j], vw[j], va)
                                : _mm512_dpbusd_epi32(vacc[i][j], va, vw[j]);
          vacc_odd[i][j] = signed_a ? _mm512_dpbusd_epi32(vacc_odd[i][j], vw_odd[j], va_odd)
                                    : _mm512_dpbusd_epi32(vacc_odd[i][j], va_odd, vw_odd[j]);
        }
      }
    }
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) {
#pragma GCC unroll 2
      for (size_t i = 0; i < MR; i++) vacc[i][j] = _mm512_add_epi32(vacc[i][j], vacc_odd[i][j]);
    }
  }
  for (; kk + 4 <= k; kk += 4) {
    __m512i vw[4];
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) vw[j] = _mm512_load_si512(wk + 64 * j);
    wk += 64 * NJMAX;
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      const __m512i va = gemmi8_bcast4(ap[i] + kk);
#pragma GCC unroll 4
      for (size_t j = 0; j < NJ; j++) {
        vacc[i][j] = signed_a ? _mm512_dpbusd_epi32(vacc[i][j], vw[j], va)
                              : _mm512_dpbusd_epi32(vacc[i][j], va, vw[j]);
      }
    }
  }
  if (kk < k) {
    const __mmask16 tail = (__mmask16) ((1u << (k - kk)) - 1);
    __m512i vw[4];
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) vw[j] = _mm512_load_si512(wk + 64 * j);
    wk += 64 * NJMAX;
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      const __m512i va = _mm512_broadcastd_epi32(_mm_maskz_loadu_epi8(tail, ap[i] + kk));
#pragma GCC unroll 4
      for (size_t j = 0; j < NJ; j++) {
        vacc[i][j] = signed_a ? _mm512_dpbusd_epi32(vacc[i][j], vw[j], va)
                              : _mm512_dpbusd_epi32(vacc[i][j], va, vw[j]);
      }
    }
  }
  return wk;
}

/* Adds the row-sum term coef[n] * rowsum(a) of the mr rows. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_row_sum_avx512vnni(
    const size_t MR, const size_t NJMAX, const size_t NJ, size_t mr, const void* w,
    const int32_t* row_sum, int row_sum_uniform, int32_t coef0, __m512i vacc[][4])
{
  const int32_t* rs[16] = {row_sum};
#pragma GCC unroll 16
  for (size_t i = 1; i < MR; i++) rs[i] = i < mr && row_sum != NULL ? rs[i - 1] + 1 : rs[i - 1];
  const int32_t* coef = (const int32_t*) w + 16 * NJMAX;
  if (row_sum_uniform) {
    /* one coef for every column: a scalar multiply per row */
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      const __m512i vterm = _mm512_set1_epi32((int32_t) ((uint32_t) *rs[i] * (uint32_t) coef0));
#pragma GCC unroll 4
      for (size_t j = 0; j < NJ; j++) vacc[i][j] = _mm512_add_epi32(vacc[i][j], vterm);
    }
  } else if (row_sum != NULL) {
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) {
      const __m512i vcoef = _mm512_load_si512(coef + 16 * j);
#pragma GCC unroll 16
      for (size_t i = 0; i < MR; i++) {
        vacc[i][j] = _mm512_add_epi32(vacc[i][j],
                                      _mm512_mullo_epi32(_mm512_set1_epi32(*rs[i]), vcoef));
      }
    }
  }
}

/* Adds the depths of the rows ap[0..MR) (a tap of an igemm, or a gemm's A) in the
 * operand order of the type: the depth loop is compiled once per type built. */
#define GEMMI8_QGEMM_AVX512VNNI_DEPTH(MR, NJ, flags, k, ap, wk, vacc)                     \
  (GEMMI8_TILE_IS_SIGNED(flags) ? gemmi8_qgemm_depth_avx512vnni(MR, 3, NJ, 1, k, ap, wk, vacc) \
                                : gemmi8_qgemm_depth_avx512vnni(MR, 3, NJ, 0, k, ap, wk, vacc))

/* A tile's bodies, one for its gemm kernels and one for its igemm kernels, serve both
 * types and every output kind: the entry points (GEMMI8_QBODY_KERNELS,
 * src/microkernel.h) pass the output kind and the type in mr's high bits, so that a
 * tile's loops and output stages exist once, not once per type and output; only the
 * depth loop is compiled twice, for the two operand orders of vpdpbusd (once in a
 * build of one type). (One body for gemm and igemm as well, 15 KB smaller, cost the
 * small-K tiles 3-8%: the igemm's tap state spilled into its depth loop and the gemm
 * lost its jump from the entry point.) */
/* The gemm's case of NJ column groups: the depth loop, the row sums, the output. */
#define GEMMI8_QGEMM_AVX512VNNI_CASE(MR, NJ, EXACT)                                       \
  case NJ: {                                                                             \
    const uint8_t* wk = gemmi8_qgemm_init_avx512vnni(MR, 3, NJ, w, vacc);                \
    const uint8_t* ap[16] = {(const uint8_t*) a};                                        \
    _Pragma("GCC unroll 16") for (size_t i = 1; i < MR; i++) {                           \
      ap[i] = i < mr ? ap[i - 1] + a_stride : ap[i - 1];                                 \
    }                                                                                    \
    GEMMI8_QGEMM_AVX512VNNI_DEPTH(MR, NJ, mr_flags, k, ap, wk, vacc);                    \
    gemmi8_qgemm_row_sum_avx512vnni(MR, 3, NJ, mr, w, params->row_sum,                   \
                                    params->row_sum_uniform, params->row_sum_coef, vacc); \
    gemmi8_qgemm_output_avx512(MR, NJ, EXACT, out, mr, nr, c, c_stride, params, vacc);    \
  } break;
#define GEMMI8_QGEMM_AVX512VNNI_BODY(name, MR, CASES)                                     \
  static __attribute__((noinline, noclone)) void name(                                   \
      size_t mr_flags, size_t nr, size_t k, const void* a, size_t a_stride, const void* w, \
      void* c, size_t c_stride, const struct gemmi8_qparams* params)                     \
  {                                                                                      \
    const size_t mr = GEMMI8_OUT_MR(mr_flags);                                           \
    const enum gemmi8_qoutput out = GEMMI8_OUT_KIND(mr_flags);                           \
    __m512i vacc[MR][4];                                                                 \
    CASES                                                                                \
  }
/* The main tile: a case per column-group count (1 .. 3), narrow tiles computing only
 * what they store. */
#define GEMMI8_QGEMM_AVX512VNNI_MAIN_BODY(name, MR)                                       \
  GEMMI8_QGEMM_AVX512VNNI_BODY(name, MR, switch ((nr + 15) / 16) {                        \
    GEMMI8_QGEMM_AVX512VNNI_CASE(MR, 1, 1)                                               \
    GEMMI8_QGEMM_AVX512VNNI_CASE(MR, 2, 1)                                               \
    GEMMI8_QGEMM_AVX512VNNI_CASE(MR, 3, 1)                                               \
  })
/* Small-M tiles (the weight stream, not the arithmetic, is their cost): one case at
 * full width, the columns past nr masked, for half the code. */
#define GEMMI8_QGEMM_AVX512VNNI_SMALL_BODY(name, MR)                                      \
  GEMMI8_QGEMM_AVX512VNNI_BODY(name, MR, switch (3) { GEMMI8_QGEMM_AVX512VNNI_CASE(MR, 3, 0) })

/* The igemm body: A through ks taps of MR row pointers, kc bytes of each (a_offset
 * added to every pointer but zero), each tap's weights round_up(kc, 4) deep. */
#define GEMMI8_QIGEMM_AVX512VNNI_CASE(MR, NJ)                                             \
  case NJ: {                                                                             \
    const uint8_t* wk = gemmi8_qgemm_init_avx512vnni(MR, 3, NJ, w, vacc);                \
    for (size_t t = 0; t < ks; t++) {                                                    \
      const uint8_t* ap[16];                                                             \
      _Pragma("GCC unroll 16") for (size_t i = 0; i < MR; i++) {                         \
        const uint8_t* p = (const uint8_t*) a[t * MR + i];                               \
        ap[i] = p == (const uint8_t*) zero ? p : p + a_offset;                           \
      }                                                                                  \
      wk = GEMMI8_QGEMM_AVX512VNNI_DEPTH(MR, NJ, mr_flags, kc, ap, wk, vacc);            \
    }                                                                                    \
    gemmi8_qgemm_row_sum_avx512vnni(MR, 3, NJ, mr, w, params->row_sum,                   \
                                    params->row_sum_uniform, params->row_sum_coef, vacc); \
    gemmi8_qgemm_output_avx512(MR, NJ, 1, out, mr, nr, c, c_stride, params, vacc);        \
  } break;
#define GEMMI8_QIGEMM_AVX512VNNI_BODY(name, MR)                                           \
  static __attribute__((noinline, noclone)) void name(                                   \
      size_t mr_flags, size_t nr, size_t kc, size_t ks, const void* const* a,            \
      const void* w, void* c, size_t c_stride, size_t a_offset, const void* zero,        \
      const struct gemmi8_qparams* params)                                               \
  {                                                                                      \
    const size_t mr = GEMMI8_OUT_MR(mr_flags);                                           \
    const enum gemmi8_qoutput out = GEMMI8_OUT_KIND(mr_flags);                           \
    __m512i vacc[MR][4];                                                                 \
    switch ((nr + 15) / 16) {                                                            \
      GEMMI8_QIGEMM_AVX512VNNI_CASE(MR, 1)                                               \
      GEMMI8_QIGEMM_AVX512VNNI_CASE(MR, 2)                                               \
      GEMMI8_QIGEMM_AVX512VNNI_CASE(MR, 3)                                               \
    }                                                                                    \
  }

#endif
