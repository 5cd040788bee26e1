/* Binary GEMM, 6x32 (words of depth), AVX-512 VPOPCNTDQ: int32, float, sign bits. */
#define GEMMI8_BIN_POPCNT(x) _mm512_popcnt_epi64(x)
#include "bgemm-avx512.h"

#define GEMMI8_BGEMM_NAME(out) gemmi8_bin_gemm_##out##_ukernel_6x32__avx512vpopcnt
GEMMI8_BGEMM_AVX512_KERNELS(6, 4)

#define GEMMI8_BIGEMM_NAME(out) gemmi8_bin_igemm_##out##_ukernel_6x32__avx512vpopcnt
GEMMI8_BIGEMM_AVX512_KERNELS(6)
