/* qu8 GEMM, 2x16c8, ARMv8.6 int8 matrix multiply (UMMLA): int32, fixed-point and fp32
 * outputs; the tile for M <= 2 (small batches; UMMLA takes rows in pairs). See
 * qgemm-i8mm.h. */
#define GEMMI8_MCA_NAME(out) "gemmi8_qu8_gemm_" out "_ukernel_2x16c8__i8mm"
#include "qgemm-i8mm.h"

GEMMI8_QGEMM_I8MM_KERNEL_FULL(gemmi8_qu8_gemm_s32_ukernel_2x16c8__i8mm, 2, 0, s32)
GEMMI8_QGEMM_I8MM_KERNEL_FULL(gemmi8_qu8_gemm_fixedpoint_ukernel_2x16c8__i8mm, 2, 0, fixedpoint)
GEMMI8_QGEMM_I8MM_KERNEL_FULL(gemmi8_qu8_gemm_fp32_ukernel_2x16c8__i8mm, 2, 0, fp32)
