/* qs8 GEMM, 7x48c4, AVX-512 VNNI: int32, fixed-point and fp32 outputs. */
#include "qgemm-avx512vnni.h"

GEMMI8_QGEMM_AVX512VNNI_KERNELS(gemmi8_qs8_gemm_ukernel_7x48c4__avx512vnni, 7, 1,
    gemmi8_qs8_gemm_s32_ukernel_7x48c4__avx512vnni,
    gemmi8_qs8_gemm_fixedpoint_ukernel_7x48c4__avx512vnni,
    gemmi8_qs8_gemm_fp32_ukernel_7x48c4__avx512vnni)
