/* qu8 GEMM, 1x4c16, ARMv8 NEON (UMULL + UADALP): int32, fixed-point and fp32 outputs;
 * the tile for M = 1 (small batches). See qgemm-neon.h. */
#define GEMMI8_MCA_NAME(out) "gemmi8_qu8_gemm_" out "_ukernel_1x4c16__neon"
#include "qgemm-neon.h"

GEMMI8_QGEMM_NEON_BODY(gemmi8_qu8_gemm_1x4c16__neon_body, 1, 0)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qu8_gemm_s32_ukernel_1x4c16__neon,
                       gemmi8_qu8_gemm_1x4c16__neon_body, s32)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qu8_gemm_fixedpoint_ukernel_1x4c16__neon,
                       gemmi8_qu8_gemm_1x4c16__neon_body, fixedpoint)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qu8_gemm_fp32_ukernel_1x4c16__neon,
                       gemmi8_qu8_gemm_1x4c16__neon_body, fp32)
