/* qu8 igemm (convolution), 4x16c4, ARMv8.2 dot product: the 4x16 tile on A through
 * row pointers per filter tap; int32, fixed-point and fp32 outputs. */
#define GEMMI8_MCA_NAME(out) "gemmi8_qu8_igemm_" out "_ukernel_4x16c4__neondot"
#include "qgemm-neondot.h"

GEMMI8_QIGEMM_NEONDOT_BODY(gemmi8_qu8_igemm_4x16c4__neondot_body, 4, 0)
GEMMI8_A64_QIGEMM_ENTRY(gemmi8_qu8_igemm_s32_ukernel_4x16c4__neondot,
                        gemmi8_qu8_igemm_4x16c4__neondot_body, s32)
GEMMI8_A64_QIGEMM_ENTRY(gemmi8_qu8_igemm_fixedpoint_ukernel_4x16c4__neondot,
                        gemmi8_qu8_igemm_4x16c4__neondot_body, fixedpoint)
GEMMI8_A64_QIGEMM_ENTRY(gemmi8_qu8_igemm_fp32_ukernel_4x16c4__neondot,
                        gemmi8_qu8_igemm_4x16c4__neondot_body, fp32)
