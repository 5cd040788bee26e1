/* Binary GEMM, 6x32 (words of depth), AVX-512 VPOPCNTDQ: int32, float, sign bits. */
#define GEMMI8_BIN_POPCNT(x) _mm512_popcnt_epi64(x)
#include "bgemm-avx512.h"

GEMMI8_BGEMM_AVX512_KERNEL(gemmi8_bin_gemm_s32_ukernel_6x32__avx512vpopcnt, 6, 4, s32)
GEMMI8_BGEMM_AVX512_KERNEL(gemmi8_bin_gemm_f32_ukernel_6x32__avx512vpopcnt, 6, 4, f32)
GEMMI8_BGEMM_AVX512_KERNEL(gemmi8_bin_gemm_bits_ukernel_6x32__avx512vpopcnt, 6, 4, bits)
