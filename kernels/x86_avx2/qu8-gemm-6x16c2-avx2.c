/* qu8 GEMM, 6x16c2, AVX2: int32, fixed-point and fp32 outputs (see qgemm-avx2.h). */
#include "qgemm-avx2.h"

GEMMI8_QGEMM_AVX2_KERNELS(gemmi8_qu8_gemm_ukernel_6x16c2__avx2, 6, 0,
    gemmi8_qu8_gemm_s32_ukernel_6x16c2__avx2,
    gemmi8_qu8_gemm_fixedpoint_ukernel_6x16c2__avx2,
    gemmi8_qu8_gemm_fp32_ukernel_6x16c2__avx2)
