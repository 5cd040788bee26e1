/* qu8 GEMM, 2x16c2, AVX2: int32, fixed-point and fp32 outputs; the tile for M = 2
 * (small batches). See qgemm-avx2.h. */
#include "qgemm-avx2.h"

GEMMI8_QGEMM_AVX2_KERNEL(gemmi8_qu8_gemm_s32_ukernel_2x16c2__avx2, 2, 0, s32)
GEMMI8_QGEMM_AVX2_KERNEL(gemmi8_qu8_gemm_fixedpoint_ukernel_2x16c2__avx2, 2, 0, fixedpoint)
GEMMI8_QGEMM_AVX2_KERNEL(gemmi8_qu8_gemm_fp32_ukernel_2x16c2__avx2, 2, 0, fp32)
