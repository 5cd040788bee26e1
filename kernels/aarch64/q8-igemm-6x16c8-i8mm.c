/* qu8 and qs8 igemm (convolution), 6x16c8, ARMv8.6 int8 matrix multiply: the 6x16 tile
 * on A through row pointers per filter tap; int32, fixed-point and fp32 outputs, one
 * body for both types. */
#define GEMMI8_MCA_NAME(type, out) "gemmi8_" type "_igemm_" out "_ukernel_6x16c8__i8mm"
#include "qgemm-i8mm.h"

GEMMI8_QIGEMM_I8MM_BODY(gemmi8_q8_igemm_6x16c8__i8mm_body, 6)
#if GEMMI8_KERNELS_qu8
GEMMI8_A64_QKERNELS(GEMMI8_A64_QIGEMM_ENTRY, gemmi8_q8_igemm_6x16c8__i8mm_body, 0,
                    gemmi8_qu8_igemm_s32_ukernel_6x16c8__i8mm,
                    gemmi8_qu8_igemm_fixedpoint_ukernel_6x16c8__i8mm,
                    gemmi8_qu8_igemm_fp32_ukernel_6x16c8__i8mm)
#endif
#if GEMMI8_KERNELS_qs8
GEMMI8_A64_QKERNELS(GEMMI8_A64_QIGEMM_ENTRY, gemmi8_q8_igemm_6x16c8__i8mm_body, 1,
                    gemmi8_qs8_igemm_s32_ukernel_6x16c8__i8mm,
                    gemmi8_qs8_igemm_fixedpoint_ukernel_6x16c8__i8mm,
                    gemmi8_qs8_igemm_fp32_ukernel_6x16c8__i8mm)
#endif
