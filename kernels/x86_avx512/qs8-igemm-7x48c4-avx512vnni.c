/* qs8 igemm (convolution), 7x48c4, AVX-512 VNNI: the 7x48 GEMM tile on A through
 * row pointers per filter tap; int32, fixed-point and fp32 outputs. */
#include "qgemm-avx512vnni.h"

GEMMI8_QIGEMM_AVX512VNNI_KERNELS(gemmi8_qs8_igemm_ukernel_7x48c4__avx512vnni, 7, 1,
    gemmi8_qs8_igemm_s32_ukernel_7x48c4__avx512vnni,
    gemmi8_qs8_igemm_fixedpoint_ukernel_7x48c4__avx512vnni,
    gemmi8_qs8_igemm_fp32_ukernel_7x48c4__avx512vnni)
