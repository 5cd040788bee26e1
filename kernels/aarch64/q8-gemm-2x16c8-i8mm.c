/* qu8 and qs8 GEMM, 2x16c8, ARMv8.6 int8 matrix multiply (UMMLA / SMMLA): int32,
 * fixed-point and fp32 outputs, one body for both types; the tile for M <= 2 (small
 * batches; the matrix multiplies take rows in pairs). See qgemm-i8mm.h. */
#define GEMMI8_MCA_NAME(type, out) "gemmi8_" type "_gemm_" out "_ukernel_2x16c8__i8mm"
#include "qgemm-i8mm.h"

GEMMI8_QGEMM_I8MM_BODY_FULL(gemmi8_q8_gemm_2x16c8__i8mm_body, 2)
#if GEMMI8_KERNELS_qu8
GEMMI8_A64_QKERNELS(GEMMI8_A64_QGEMM_ENTRY, gemmi8_q8_gemm_2x16c8__i8mm_body, 0,
                    gemmi8_qu8_gemm_s32_ukernel_2x16c8__i8mm,
                    gemmi8_qu8_gemm_fixedpoint_ukernel_2x16c8__i8mm,
                    gemmi8_qu8_gemm_fp32_ukernel_2x16c8__i8mm)
#endif
#if GEMMI8_KERNELS_qs8
GEMMI8_A64_QKERNELS(GEMMI8_A64_QGEMM_ENTRY, gemmi8_q8_gemm_2x16c8__i8mm_body, 1,
                    gemmi8_qs8_gemm_s32_ukernel_2x16c8__i8mm,
                    gemmi8_qs8_gemm_fixedpoint_ukernel_2x16c8__i8mm,
                    gemmi8_qs8_gemm_fp32_ukernel_2x16c8__i8mm)
#endif
