/* qs8 igemm (convolution), 6x16c2, AVX2: the 6x16 GEMM tile on A through row
 * pointers per filter tap (see qgemm-avx2.h); int32, fixed-point and fp32 outputs. */
#include "qgemm-avx2.h"

GEMMI8_QIGEMM_AVX2_KERNELS(gemmi8_qs8_igemm_ukernel_6x16c2__avx2, 6, 1,
    gemmi8_qs8_igemm_s32_ukernel_6x16c2__avx2,
    gemmi8_qs8_igemm_fixedpoint_ukernel_6x16c2__avx2,
    gemmi8_qs8_igemm_fp32_ukernel_6x16c2__avx2)
