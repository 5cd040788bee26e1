/* qu8 igemm (convolution), 4x4c16, ARMv8 NEON: the 4x4 tile on A through row pointers
 * per filter tap; int32, fixed-point and fp32 outputs. */
#define GEMMI8_MCA_NAME(out) "gemmi8_qu8_igemm_" out "_ukernel_4x4c16__neon"
#include "qgemm-neon.h"

GEMMI8_QIGEMM_NEON_BODY(gemmi8_qu8_igemm_4x4c16__neon_body, 4, 0)
GEMMI8_A64_QIGEMM_ENTRY(gemmi8_qu8_igemm_s32_ukernel_4x4c16__neon,
                        gemmi8_qu8_igemm_4x4c16__neon_body, s32)
GEMMI8_A64_QIGEMM_ENTRY(gemmi8_qu8_igemm_fixedpoint_ukernel_4x4c16__neon,
                        gemmi8_qu8_igemm_4x4c16__neon_body, fixedpoint)
GEMMI8_A64_QIGEMM_ENTRY(gemmi8_qu8_igemm_fp32_ukernel_4x4c16__neon,
                        gemmi8_qu8_igemm_4x4c16__neon_body, fp32)
