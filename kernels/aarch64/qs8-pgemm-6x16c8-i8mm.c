/* qs8 GEMM over packed panels of A (gemmi8_x8_packa_6c8__neon), 6x16c8, ARMv8.6 int8 matrix
 * multiply (SMMLA): int32, fixed-point and fp32 outputs. */
#define GEMMI8_MCA_NAME(out) "gemmi8_qs8_pgemm_" out "_ukernel_6x16c8__i8mm"
#include "qgemm-i8mm.h"

GEMMI8_QPGEMM_I8MM_KERNEL(gemmi8_qs8_pgemm_s32_ukernel_6x16c8__i8mm, 1, s32)
GEMMI8_QPGEMM_I8MM_KERNEL(gemmi8_qs8_pgemm_fixedpoint_ukernel_6x16c8__i8mm, 1, fixedpoint)
GEMMI8_QPGEMM_I8MM_KERNEL(gemmi8_qs8_pgemm_fp32_ukernel_6x16c8__i8mm, 1, fp32)
