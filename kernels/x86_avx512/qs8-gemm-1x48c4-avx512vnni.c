/* qs8 GEMM, 1x48c4, AVX-512 VNNI: int32, fixed-point and fp32 outputs; the tile for
 * M = 1 (small batches). See qgemm-avx512vnni.h. */
#include "qgemm-avx512vnni.h"

GEMMI8_QGEMM_AVX512VNNI_KERNELS_FULL(gemmi8_qs8_gemm_ukernel_1x48c4__avx512vnni, 1, 1,
    gemmi8_qs8_gemm_s32_ukernel_1x48c4__avx512vnni,
    gemmi8_qs8_gemm_fixedpoint_ukernel_1x48c4__avx512vnni,
    gemmi8_qs8_gemm_fp32_ukernel_1x48c4__avx512vnni)
