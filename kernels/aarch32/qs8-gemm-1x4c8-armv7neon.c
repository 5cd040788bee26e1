/* qs8 GEMM, 1x4c8, ARMv7 NEON (VMULL.S8 + VPADAL.S16): int32, fixed-point and fp32
 * outputs; the tile for M = 1 (small batches). See qgemm-neon.h. */
#include "qgemm-neon.h"

GEMMI8_QGEMM_C8_NEON_BODY(gemmi8_qs8_gemm_1x4c8__neon_body, 1, 1)
GEMMI8_QGEMM_NEON_ENTRY(gemmi8_qs8_gemm_s32_ukernel_1x4c8__armv7neon,
                        gemmi8_qs8_gemm_1x4c8__neon_body, s32)
GEMMI8_QGEMM_NEON_ENTRY(gemmi8_qs8_gemm_fixedpoint_ukernel_1x4c8__armv7neon,
                        gemmi8_qs8_gemm_1x4c8__neon_body, fixedpoint)
GEMMI8_QGEMM_NEON_ENTRY(gemmi8_qs8_gemm_fp32_ukernel_1x4c8__armv7neon,
                        gemmi8_qs8_gemm_1x4c8__neon_body, fp32)
