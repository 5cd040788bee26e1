/* qs8 GEMM, 1x4c16, ARMv8 NEON (SMULL + SADALP): int32, fixed-point and fp32 outputs;
 * the tile for M = 1 (small batches). See qgemm-neon.h. */
#define GEMMI8_MCA_NAME(out) "gemmi8_qs8_gemm_" out "_ukernel_1x4c16__neon"
#include "qgemm-neon.h"

GEMMI8_QGEMM_NEON_KERNEL(gemmi8_qs8_gemm_s32_ukernel_1x4c16__neon, 1, 1, s32)
GEMMI8_QGEMM_NEON_KERNEL(gemmi8_qs8_gemm_fixedpoint_ukernel_1x4c16__neon, 1, 1, fixedpoint)
GEMMI8_QGEMM_NEON_KERNEL(gemmi8_qs8_gemm_fp32_ukernel_1x4c16__neon, 1, 1, fp32)
