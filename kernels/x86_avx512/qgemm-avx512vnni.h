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

/* Accumulates the MR x (16 * NJ) tile, row sums included. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_core_avx512vnni(
    const size_t MR, const size_t NJMAX, const size_t NJ, const int signed_a, size_t mr, size_t k,
    const uint8_t* a, size_t a_stride, const void* w, const int32_t* row_sum,
    int row_sum_uniform, int32_t coef0, __m512i vacc[][4])
{
  const uint8_t* ap[16] = {a};
#pragma GCC unroll 16
  for (size_t i = 1; i < MR; i++) ap[i] = i < mr ? ap[i - 1] + a_stride : ap[i - 1];
  const uint8_t* wk = gemmi8_qgemm_init_avx512vnni(MR, NJMAX, NJ, w, vacc);
  gemmi8_qgemm_depth_avx512vnni(MR, NJMAX, NJ, signed_a, k, ap, wk, vacc);
  gemmi8_qgemm_row_sum_avx512vnni(MR, NJMAX, NJ, mr, w, row_sum, row_sum_uniform, coef0, vacc);
}

/* The same tile with A through ks taps of MR row pointers (igemm): kc bytes of each
 * (a_offset added to every pointer but zero), each tap's weights round_up(kc, 4) deep. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qigemm_core_avx512vnni(
    const size_t MR, const size_t NJMAX, const size_t NJ, const int signed_a, size_t mr,
    size_t kc, size_t ks, const void* const* a, size_t a_offset, const void* zero,
    const void* w, const int32_t* row_sum, int row_sum_uniform, int32_t coef0,
    __m512i vacc[][4])
{
  const uint8_t* wk = gemmi8_qgemm_init_avx512vnni(MR, NJMAX, NJ, w, vacc);
  for (size_t t = 0; t < ks; t++) {
    const uint8_t* ap[16];
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      const uint8_t* p = (const uint8_t*) a[t * MR + i];
      ap[i] = p == (const uint8_t*) zero ? p : p + a_offset;
    }
    wk = gemmi8_qgemm_depth_avx512vnni(MR, NJMAX, NJ, signed_a, kc, ap, wk, vacc);
  }
  gemmi8_qgemm_row_sum_avx512vnni(MR, NJMAX, NJ, mr, w, row_sum, row_sum_uniform, coef0, vacc);
}

/* The kernels of a tile: one body, `name`, with the k loop of each column-group
 * count (narrow tiles only compute what they store) and the output stage chosen
 * after it (once per tile), and one thin entry point per output kind, which jumps to
 * it with the kind in mr (GEMMI8_OUT_SHIFT). The body is not inlined into them (nor
 * cloned per kind): one copy of each loop per tile. */
#define GEMMI8_QGEMM_AVX512VNNI_CASE(MR, NJMAX, NJ, SIGNED_A, EXACT)                      \
  case NJ:                                                                               \
    gemmi8_qgemm_core_avx512vnni(MR, NJMAX, NJ, SIGNED_A, mr, k, a, a_stride, w,         \
                                 params->row_sum, params->row_sum_uniform,               \
                                 params->row_sum_coef, vacc);                            \
    gemmi8_qgemm_output_avx512(MR, NJ, EXACT, out, mr, nr, c, c_stride, params, vacc);    \
    break;
#define GEMMI8_QGEMM_AVX512VNNI_BODY(name, MR, NJMAX, SIGNED_A, CASES)                    \
  static __attribute__((noinline, noclone)) void name(                                   \
      size_t mr_out, size_t nr, size_t k, const void* a, size_t a_stride, const void* w,  \
      void* c, size_t c_stride, const struct gemmi8_qparams* params)                     \
  {                                                                                      \
    const size_t mr = GEMMI8_OUT_MR(mr_out);                                             \
    const enum gemmi8_qoutput out = GEMMI8_OUT_KIND(mr_out);                                 \
    __m512i vacc[MR][4];                                                                 \
    CASES                                                                                \
  }
#define GEMMI8_QGEMM_AVX512VNNI_ENTRY(fn, name, OUT)                                      \
  void fn(size_t mr, size_t nr, size_t k, const void* a, size_t a_stride, const void* w,  \
          void* c, size_t c_stride, const struct gemmi8_qparams* params)                 \
  {                                                                                      \
    name(mr | (size_t) OUT << GEMMI8_OUT_SHIFT, nr, k, a, a_stride, w, c, c_stride,      \
         params);                                                                        \
  }
#define GEMMI8_QGEMM_AVX512VNNI_ENTRIES(name, s32, fixedpoint, fp32)                      \
  GEMMI8_QGEMM_AVX512VNNI_ENTRY(s32, name, gemmi8_qoutput_s32)                               \
  GEMMI8_QGEMM_AVX512VNNI_ENTRY(fixedpoint, name, gemmi8_qoutput_fixedpoint)                 \
  GEMMI8_QGEMM_AVX512VNNI_ENTRY(fp32, name, gemmi8_qoutput_fp32)

/* The main tile: a case per column-group count (1 .. NJMAX = 3). */
#define GEMMI8_QGEMM_AVX512VNNI_KERNELS(name, MR, SIGNED_A, s32, fixedpoint, fp32)        \
  GEMMI8_QGEMM_AVX512VNNI_BODY(name, MR, 3, SIGNED_A,                                     \
                               switch ((nr + 15) / 16) {                                 \
                                 GEMMI8_QGEMM_AVX512VNNI_CASE(MR, 3, 1, SIGNED_A, 1)     \
                                 GEMMI8_QGEMM_AVX512VNNI_CASE(MR, 3, 2, SIGNED_A, 1)     \
                                 GEMMI8_QGEMM_AVX512VNNI_CASE(MR, 3, 3, SIGNED_A, 1)     \
                               })                                                        \
  GEMMI8_QGEMM_AVX512VNNI_ENTRIES(name, s32, fixedpoint, fp32)
/* Small-M tiles (the weight stream, not the arithmetic, is their cost): one case at
 * full width, the columns past nr masked, for half the code. */
#define GEMMI8_QGEMM_AVX512VNNI_KERNELS_FULL(name, MR, SIGNED_A, s32, fixedpoint, fp32)   \
  GEMMI8_QGEMM_AVX512VNNI_BODY(name, MR, 3, SIGNED_A,                                     \
                               switch (3) { GEMMI8_QGEMM_AVX512VNNI_CASE(MR, 3, 3, SIGNED_A, 0) }) \
  GEMMI8_QGEMM_AVX512VNNI_ENTRIES(name, s32, fixedpoint, fp32)

/* The igemm kernels of a tile: the same, on A through row pointers. */
#define GEMMI8_QIGEMM_AVX512VNNI_CASE(MR, NJ, SIGNED_A)                                   \
  case NJ:                                                                               \
    gemmi8_qigemm_core_avx512vnni(MR, 3, NJ, SIGNED_A, mr, kc, ks, a, a_offset, zero, w,  \
                                  params->row_sum, params->row_sum_uniform,              \
                                  params->row_sum_coef, vacc);                           \
    gemmi8_qgemm_output_avx512(MR, NJ, 1, out, mr, nr, c, c_stride, params, vacc);        \
    break;
#define GEMMI8_QIGEMM_AVX512VNNI_ENTRY(fn, name, OUT)                                     \
  void fn(size_t mr, size_t nr, size_t kc, size_t ks, const void* const* a, const void* w, \
          void* c, size_t c_stride, size_t a_offset, const void* zero,                   \
          const struct gemmi8_qparams* params)                                           \
  {                                                                                      \
    name(mr | (size_t) OUT << GEMMI8_OUT_SHIFT, nr, kc, ks, a, w, c, c_stride, a_offset, \
         zero, params);                                                                  \
  }
#define GEMMI8_QIGEMM_AVX512VNNI_KERNELS(name, MR, SIGNED_A, s32, fixedpoint, fp32)       \
  static __attribute__((noinline, noclone)) void name(                                   \
      size_t mr_out, size_t nr, size_t kc, size_t ks, const void* const* a,              \
      const void* w, void* c, size_t c_stride, size_t a_offset, const void* zero,        \
      const struct gemmi8_qparams* params)                                               \
  {                                                                                      \
    const size_t mr = GEMMI8_OUT_MR(mr_out);                                             \
    const enum gemmi8_qoutput out = GEMMI8_OUT_KIND(mr_out);                                 \
    __m512i vacc[MR][4];                                                                 \
    switch ((nr + 15) / 16) {                                                            \
      GEMMI8_QIGEMM_AVX512VNNI_CASE(MR, 1, SIGNED_A)                                     \
      GEMMI8_QIGEMM_AVX512VNNI_CASE(MR, 2, SIGNED_A)                                     \
      GEMMI8_QIGEMM_AVX512VNNI_CASE(MR, 3, SIGNED_A)                                     \
    }                                                                                    \
  }                                                                                      \
  GEMMI8_QIGEMM_AVX512VNNI_ENTRY(s32, name, gemmi8_qoutput_s32)                              \
  GEMMI8_QIGEMM_AVX512VNNI_ENTRY(fixedpoint, name, gemmi8_qoutput_fixedpoint)                \
  GEMMI8_QIGEMM_AVX512VNNI_ENTRY(fp32, name, gemmi8_qoutput_fp32)

#endif
