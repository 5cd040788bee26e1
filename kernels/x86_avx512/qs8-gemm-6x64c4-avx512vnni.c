/* qs8 GEMM, 6x64c4, AVX-512 VNNI: int32, fixed-point and fp32 outputs. */
#include "qgemm-avx512vnni.h"

GEMMI8_QGEMM_AVX512VNNI_KERNEL(gemmi8_qs8_gemm_s32_ukernel_6x64c4__avx512vnni, 6, 1, s32)
GEMMI8_QGEMM_AVX512VNNI_KERNEL(gemmi8_qs8_gemm_rndnu_ukernel_6x64c4__avx512vnni, 6, 1, rndnu)
GEMMI8_QGEMM_AVX512VNNI_KERNEL(gemmi8_qs8_gemm_fp32_ukernel_6x64c4__avx512vnni, 6, 1, fp32)
