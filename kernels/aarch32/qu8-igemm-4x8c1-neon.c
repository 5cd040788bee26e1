/* qu8 igemm (convolution), 4x8c1, ARMv7 NEON: the 4x8 tile on A through row pointers
 * per filter tap; int32, fixed-point and fp32 outputs. See qgemm-neon.h. */
#include "qgemm-neon.h"

GEMMI8_QIGEMM_4X8C1_NEON_KERNEL(gemmi8_qu8_igemm_s32_ukernel_4x8c1__neon, 0, s32)
GEMMI8_QIGEMM_4X8C1_NEON_KERNEL(gemmi8_qu8_igemm_fixedpoint_ukernel_4x8c1__neon, 0, fixedpoint)
GEMMI8_QIGEMM_4X8C1_NEON_KERNEL(gemmi8_qu8_igemm_fp32_ukernel_4x8c1__neon, 0, fp32)
