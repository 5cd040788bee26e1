/* qu8 GEMM, 2x4c8, ARMv7 NEON (VMULL.U8 + VPADAL.U16): int32, fixed-point and fp32
 * outputs. See qgemm-neon.h. */
#include "qgemm-neon.h"

GEMMI8_QGEMM_C8_NEON_KERNEL(gemmi8_qu8_gemm_s32_ukernel_2x4c8__armv7neon, 2, 0, s32)
GEMMI8_QGEMM_C8_NEON_KERNEL(gemmi8_qu8_gemm_fixedpoint_ukernel_2x4c8__armv7neon, 2, 0, fixedpoint)
GEMMI8_QGEMM_C8_NEON_KERNEL(gemmi8_qu8_gemm_fp32_ukernel_2x4c8__armv7neon, 2, 0, fp32)
