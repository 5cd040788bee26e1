/* qu8 and qs8 6x48c4, AVX-512 VNNI: the tile for small M, gemm; int32, fixed-point and
 * fp32 outputs, one body for them all (see qgemm-avx512vnni.h). */
#include "qgemm-avx512vnni.h"

GEMMI8_QGEMM_AVX512VNNI_SMALL_BODY(gemmi8_q8_gemm_ukernel_6x48c4__avx512vnni, 6)
#if GEMMI8_KERNELS_qu8
GEMMI8_QBODY_KERNELS(GEMMI8_QGEMM_BODY_ENTRY, gemmi8_q8_gemm_ukernel_6x48c4__avx512vnni, 0,
    gemmi8_qu8_gemm_s32_ukernel_6x48c4__avx512vnni,
    gemmi8_qu8_gemm_fixedpoint_ukernel_6x48c4__avx512vnni,
    gemmi8_qu8_gemm_fp32_ukernel_6x48c4__avx512vnni)
#endif
#if GEMMI8_KERNELS_qs8
GEMMI8_QBODY_KERNELS(GEMMI8_QGEMM_BODY_ENTRY, gemmi8_q8_gemm_ukernel_6x48c4__avx512vnni, GEMMI8_TILE_SIGNED,
    gemmi8_qs8_gemm_s32_ukernel_6x48c4__avx512vnni,
    gemmi8_qs8_gemm_fixedpoint_ukernel_6x48c4__avx512vnni,
    gemmi8_qs8_gemm_fp32_ukernel_6x48c4__avx512vnni)
#endif
