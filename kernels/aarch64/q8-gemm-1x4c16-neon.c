/* qu8 and qs8 GEMM, 1x4c16, ARMv8 NEON (UMULL / SMULL + UADALP / SADALP): int32,
 * fixed-point and fp32 outputs, one body for both types; the tile for M = 1 (small
 * batches). See qgemm-neon.h. */
#define GEMMI8_MCA_NAME(type, out) "gemmi8_" type "_gemm_" out "_ukernel_1x4c16__neon"
#include "qgemm-neon.h"

GEMMI8_QGEMM_NEON_BODY(gemmi8_q8_gemm_1x4c16__neon_body, 1)
#if GEMMI8_KERNELS_qu8
GEMMI8_A64_QKERNELS(GEMMI8_A64_QGEMM_ENTRY, gemmi8_q8_gemm_1x4c16__neon_body, 0,
                    gemmi8_qu8_gemm_s32_ukernel_1x4c16__neon,
                    gemmi8_qu8_gemm_fixedpoint_ukernel_1x4c16__neon,
                    gemmi8_qu8_gemm_fp32_ukernel_1x4c16__neon)
#endif
#if GEMMI8_KERNELS_qs8
GEMMI8_A64_QKERNELS(GEMMI8_A64_QGEMM_ENTRY, gemmi8_q8_gemm_1x4c16__neon_body, 1,
                    gemmi8_qs8_gemm_s32_ukernel_1x4c16__neon,
                    gemmi8_qs8_gemm_fixedpoint_ukernel_1x4c16__neon,
                    gemmi8_qs8_gemm_fp32_ukernel_1x4c16__neon)
#endif
