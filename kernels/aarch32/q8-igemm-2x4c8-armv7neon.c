/* qu8 and qs8 igemm (convolution), 2x4c8, ARMv7 NEON (VMULL.U8 / .S8 + VPADAL): the 2x4
 * tile on A through row pointers per filter tap; int32, fixed-point and fp32 outputs,
 * one body for both types. See qgemm-neon.h. */
#include "qgemm-neon.h"

GEMMI8_QIGEMM_2X4C8_NEON_BODY(gemmi8_q8_igemm_2x4c8__neon_body)
#if GEMMI8_KERNELS_qu8
GEMMI8_QBODY_KERNELS(GEMMI8_QIGEMM_BODY_ENTRY, gemmi8_q8_igemm_2x4c8__neon_body, 0,
                     gemmi8_qu8_igemm_s32_ukernel_2x4c8__armv7neon,
                     gemmi8_qu8_igemm_fixedpoint_ukernel_2x4c8__armv7neon,
                     gemmi8_qu8_igemm_fp32_ukernel_2x4c8__armv7neon)
#endif
#if GEMMI8_KERNELS_qs8
GEMMI8_QBODY_KERNELS(GEMMI8_QIGEMM_BODY_ENTRY, gemmi8_q8_igemm_2x4c8__neon_body, GEMMI8_TILE_SIGNED,
                     gemmi8_qs8_igemm_s32_ukernel_2x4c8__armv7neon,
                     gemmi8_qs8_igemm_fixedpoint_ukernel_2x4c8__armv7neon,
                     gemmi8_qs8_igemm_fp32_ukernel_2x4c8__armv7neon)
#endif
