/* qu8 igemm (convolution), 6x16c8, ARMv8.6 int8 matrix multiply: the 6x16 tile on A
 * through row pointers per filter tap; int32, fixed-point and fp32 outputs. */
#define GEMMI8_MCA_NAME(out) "gemmi8_qu8_igemm_" out "_ukernel_6x16c8__i8mm"
#include "qgemm-i8mm.h"

GEMMI8_QIGEMM_I8MM_BODY(gemmi8_qu8_igemm_6x16c8__i8mm_body, 6, 0)
GEMMI8_A64_QIGEMM_ENTRY(gemmi8_qu8_igemm_s32_ukernel_6x16c8__i8mm,
                        gemmi8_qu8_igemm_6x16c8__i8mm_body, s32)
GEMMI8_A64_QIGEMM_ENTRY(gemmi8_qu8_igemm_fixedpoint_ukernel_6x16c8__i8mm,
                        gemmi8_qu8_igemm_6x16c8__i8mm_body, fixedpoint)
GEMMI8_A64_QIGEMM_ENTRY(gemmi8_qu8_igemm_fp32_ukernel_6x16c8__i8mm,
                        gemmi8_qu8_igemm_6x16c8__i8mm_body, fp32)
