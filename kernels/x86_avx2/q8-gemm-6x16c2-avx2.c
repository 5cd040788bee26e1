/* qu8 and qs8 6x16c2, AVX2: gemm and igemm (convolution, A through row pointers
 * per filter tap); int32, fixed-point and fp32 outputs, one body for each kind (see
 * qgemm-avx2.h). */
#include "qgemm-avx2.h"

GEMMI8_QGEMM_AVX2_BODY(gemmi8_q8_gemm_ukernel_6x16c2__avx2, 6)
GEMMI8_QIGEMM_AVX2_BODY(gemmi8_q8_igemm_ukernel_6x16c2__avx2, 6)
#if GEMMI8_KERNELS_qu8
GEMMI8_QBODY_KERNELS(GEMMI8_QGEMM_BODY_ENTRY, gemmi8_q8_gemm_ukernel_6x16c2__avx2, 0,
    gemmi8_qu8_gemm_s32_ukernel_6x16c2__avx2,
    gemmi8_qu8_gemm_fixedpoint_ukernel_6x16c2__avx2,
    gemmi8_qu8_gemm_fp32_ukernel_6x16c2__avx2)
GEMMI8_QBODY_KERNELS(GEMMI8_QIGEMM_BODY_ENTRY, gemmi8_q8_igemm_ukernel_6x16c2__avx2, 0,
    gemmi8_qu8_igemm_s32_ukernel_6x16c2__avx2,
    gemmi8_qu8_igemm_fixedpoint_ukernel_6x16c2__avx2,
    gemmi8_qu8_igemm_fp32_ukernel_6x16c2__avx2)
#endif
#if GEMMI8_KERNELS_qs8
GEMMI8_QBODY_KERNELS(GEMMI8_QGEMM_BODY_ENTRY, gemmi8_q8_gemm_ukernel_6x16c2__avx2, GEMMI8_TILE_SIGNED,
    gemmi8_qs8_gemm_s32_ukernel_6x16c2__avx2,
    gemmi8_qs8_gemm_fixedpoint_ukernel_6x16c2__avx2,
    gemmi8_qs8_gemm_fp32_ukernel_6x16c2__avx2)
GEMMI8_QBODY_KERNELS(GEMMI8_QIGEMM_BODY_ENTRY, gemmi8_q8_igemm_ukernel_6x16c2__avx2, GEMMI8_TILE_SIGNED,
    gemmi8_qs8_igemm_s32_ukernel_6x16c2__avx2,
    gemmi8_qs8_igemm_fixedpoint_ukernel_6x16c2__avx2,
    gemmi8_qs8_igemm_fp32_ukernel_6x16c2__avx2)
#endif
