/* qu8 and qs8 GEMM over packed panels of A (gemmi8_x8_packa_6c8__neon), 6x16c8, ARMv8.6
 * int8 matrix multiply (UMMLA / SMMLA): int32, fixed-point and fp32 outputs, one body
 * for both types. */
#define GEMMI8_MCA_NAME(type, out) "gemmi8_" type "_pgemm_" out "_ukernel_6x16c8__i8mm"
#include "qgemm-i8mm.h"

GEMMI8_QPGEMM_I8MM_BODY(gemmi8_q8_pgemm_6x16c8__i8mm_body)
#if GEMMI8_KERNELS_qu8
GEMMI8_A64_QKERNELS(GEMMI8_A64_QGEMM_ENTRY, gemmi8_q8_pgemm_6x16c8__i8mm_body, 0,
                    gemmi8_qu8_pgemm_s32_ukernel_6x16c8__i8mm,
                    gemmi8_qu8_pgemm_fixedpoint_ukernel_6x16c8__i8mm,
                    gemmi8_qu8_pgemm_fp32_ukernel_6x16c8__i8mm)
#endif
#if GEMMI8_KERNELS_qs8
GEMMI8_A64_QKERNELS(GEMMI8_A64_QGEMM_ENTRY, gemmi8_q8_pgemm_6x16c8__i8mm_body, 1,
                    gemmi8_qs8_pgemm_s32_ukernel_6x16c8__i8mm,
                    gemmi8_qs8_pgemm_fixedpoint_ukernel_6x16c8__i8mm,
                    gemmi8_qs8_pgemm_fp32_ukernel_6x16c8__i8mm)
#endif
