/* qu8 GEMM, 2x4c16, ARMv8 NEON (UMULL + UADALP): int32, fixed-point and fp32 outputs;
 * the tile for M = 2 (small batches). See qgemm-neon.h. */
#define GEMMI8_MCA_NAME(out) "gemmi8_qu8_gemm_" out "_ukernel_2x4c16__neon"
#include "qgemm-neon.h"

GEMMI8_QGEMM_NEON_KERNEL(gemmi8_qu8_gemm_s32_ukernel_2x4c16__neon, 2, 0, s32)
GEMMI8_QGEMM_NEON_KERNEL(gemmi8_qu8_gemm_fixedpoint_ukernel_2x4c16__neon, 2, 0, fixedpoint)
GEMMI8_QGEMM_NEON_KERNEL(gemmi8_qu8_gemm_fp32_ukernel_2x4c16__neon, 2, 0, fp32)
