/* qu8 and qs8 igemm (convolution), 4x4c16, ARMv8 NEON: the 4x4 tile on A through row
 * pointers per filter tap; int32, fixed-point and fp32 outputs, one body for both
 * types. */
#define GEMMI8_MCA_NAME(type, out) "gemmi8_" type "_igemm_" out "_ukernel_4x4c16__neon"
#include "qgemm-neon.h"

GEMMI8_QIGEMM_NEON_BODY(gemmi8_q8_igemm_4x4c16__neon_body, 4)
#if GEMMI8_KERNELS_qu8
GEMMI8_A64_QKERNELS(GEMMI8_A64_QIGEMM_ENTRY, gemmi8_q8_igemm_4x4c16__neon_body, 0,
                    gemmi8_qu8_igemm_s32_ukernel_4x4c16__neon,
                    gemmi8_qu8_igemm_fixedpoint_ukernel_4x4c16__neon,
                    gemmi8_qu8_igemm_fp32_ukernel_4x4c16__neon)
#endif
#if GEMMI8_KERNELS_qs8
GEMMI8_A64_QKERNELS(GEMMI8_A64_QIGEMM_ENTRY, gemmi8_q8_igemm_4x4c16__neon_body, 1,
                    gemmi8_qs8_igemm_s32_ukernel_4x4c16__neon,
                    gemmi8_qs8_igemm_fixedpoint_ukernel_4x4c16__neon,
                    gemmi8_qs8_igemm_fp32_ukernel_4x4c16__neon)
#endif
