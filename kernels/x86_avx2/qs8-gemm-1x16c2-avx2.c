/* qs8 GEMM, 1x16c2, AVX2: int32, fixed-point and fp32 outputs; the tile for M = 1
 * (small batches). See qgemm-avx2.h. */
#include "qgemm-avx2.h"

GEMMI8_QGEMM_AVX2_KERNEL(gemmi8_qs8_gemm_s32_ukernel_1x16c2__avx2, 1, 1, s32)
GEMMI8_QGEMM_AVX2_KERNEL(gemmi8_qs8_gemm_fixedpoint_ukernel_1x16c2__avx2, 1, 1, fixedpoint)
GEMMI8_QGEMM_AVX2_KERNEL(gemmi8_qs8_gemm_fp32_ukernel_1x16c2__avx2, 1, 1, fp32)
