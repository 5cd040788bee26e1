/* qs8 GEMM, 1x8c1, ARMv7 NEON (VMLAL.S16 by scalar): int32, fixed-point and fp32
 * outputs; the tile for M = 1 (small batches). See qgemm-neon.h. */
#include "qgemm-neon.h"

GEMMI8_QGEMM_SMALL_8C1_NEON_KERNEL(gemmi8_qs8_gemm_s32_ukernel_1x8c1__neon, 1, 1, s32)
GEMMI8_QGEMM_SMALL_8C1_NEON_KERNEL(gemmi8_qs8_gemm_fixedpoint_ukernel_1x8c1__neon, 1, 1, fixedpoint)
GEMMI8_QGEMM_SMALL_8C1_NEON_KERNEL(gemmi8_qs8_gemm_fp32_ukernel_1x8c1__neon, 1, 1, fp32)
