/* qs8 GEMM, 2x4c8, ARMv7 NEON (VMULL.S8 + VPADAL.S16): int32, fixed-point and fp32
 * outputs. See qgemm-neon.h. */
#include "qgemm-neon.h"

GEMMI8_QGEMM_C8_NEON_KERNEL(gemmi8_qs8_gemm_s32_ukernel_2x4c8__armv7neon, 2, 1, s32)
GEMMI8_QGEMM_C8_NEON_KERNEL(gemmi8_qs8_gemm_fixedpoint_ukernel_2x4c8__armv7neon, 2, 1, fixedpoint)
GEMMI8_QGEMM_C8_NEON_KERNEL(gemmi8_qs8_gemm_fp32_ukernel_2x4c8__armv7neon, 2, 1, fp32)
