/* qu8 igemm (convolution), 2x4c8, ARMv7 NEON (VMULL.U8 + VPADAL.U16): the 2x4 tile
 * on A through row pointers per filter tap; int32, fixed-point and fp32 outputs. See
 * qgemm-neon.h. */
#include "qgemm-neon.h"

GEMMI8_QIGEMM_2X4C8_NEON_KERNEL(gemmi8_qu8_igemm_s32_ukernel_2x4c8__armv7neon, 0, s32)
GEMMI8_QIGEMM_2X4C8_NEON_KERNEL(gemmi8_qu8_igemm_fixedpoint_ukernel_2x4c8__armv7neon, 0, fixedpoint)
GEMMI8_QIGEMM_2X4C8_NEON_KERNEL(gemmi8_qu8_igemm_fp32_ukernel_2x4c8__armv7neon, 0, fp32)
