/* qs8 igemm (convolution), 2x4c8, ARMv7 NEON (VMULL.S8 + VPADAL.S16): the 2x4 tile
 * on A through row pointers per filter tap; int32, fixed-point and fp32 outputs. See
 * qgemm-neon.h. */
#include "qgemm-neon.h"

GEMMI8_QIGEMM_2X4C8_NEON_BODY(gemmi8_qs8_igemm_2x4c8__neon_body, 1)
GEMMI8_QIGEMM_NEON_ENTRY(gemmi8_qs8_igemm_s32_ukernel_2x4c8__armv7neon,
                         gemmi8_qs8_igemm_2x4c8__neon_body, s32)
GEMMI8_QIGEMM_NEON_ENTRY(gemmi8_qs8_igemm_fixedpoint_ukernel_2x4c8__armv7neon,
                         gemmi8_qs8_igemm_2x4c8__neon_body, fixedpoint)
GEMMI8_QIGEMM_NEON_ENTRY(gemmi8_qs8_igemm_fp32_ukernel_2x4c8__armv7neon,
                         gemmi8_qs8_igemm_2x4c8__neon_body, fp32)
