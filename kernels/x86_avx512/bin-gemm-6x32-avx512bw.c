/*
 * Binary GEMM, 6x32 (words of depth), AVX-512BW without VPOPCNTDQ: the popcount of
 * each 64-bit lane is two vpshufb nibble lookups added and summed by vpsadbw.
 */
#include <immintrin.h>

static inline __m512i gemmi8_popcnt64_lookup(__m512i x)
{
  const __m512i vlut = _mm512_broadcast_i32x4(
      _mm_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4));
  const __m512i vnibble = _mm512_set1_epi8(0x0F);
  const __m512i vlo = _mm512_shuffle_epi8(vlut, _mm512_and_si512(x, vnibble));
  const __m512i vhi = _mm512_shuffle_epi8(vlut, _mm512_and_si512(_mm512_srli_epi16(x, 4), vnibble));
  return _mm512_sad_epu8(_mm512_add_epi8(vlo, vhi), _mm512_setzero_si512());
}

#define GEMMI8_BIN_POPCNT(x) gemmi8_popcnt64_lookup(x)
#include "bgemm-avx512.h"

#define GEMMI8_BGEMM_NAME(out) gemmi8_bin_gemm_##out##_ukernel_6x32__avx512bw
GEMMI8_BGEMM_AVX512_KERNELS(6, 4)

#define GEMMI8_BIGEMM_NAME(out) gemmi8_bin_igemm_##out##_ukernel_6x32__avx512bw
GEMMI8_BIGEMM_AVX512_KERNELS(6)
