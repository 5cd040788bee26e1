/* qs8 GEMM, 4x16c8, ARMv8.6 int8 matrix multiply (SMMLA): int32, fixed-point and fp32
 * outputs; the tile for M <= 4 (small batches; SMMLA takes rows in pairs). See
 * qgemm-i8mm.h. */
#define GEMMI8_MCA_NAME(out) "gemmi8_qs8_gemm_" out "_ukernel_4x16c8__i8mm"
#include "qgemm-i8mm.h"

GEMMI8_QGEMM_I8MM_BODY_FULL(gemmi8_qs8_gemm_4x16c8__i8mm_body, 4, 1)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qs8_gemm_s32_ukernel_4x16c8__i8mm,
                       gemmi8_qs8_gemm_4x16c8__i8mm_body, s32)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qs8_gemm_fixedpoint_ukernel_4x16c8__i8mm,
                       gemmi8_qs8_gemm_4x16c8__i8mm_body, fixedpoint)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qs8_gemm_fp32_ukernel_4x16c8__i8mm,
                       gemmi8_qs8_gemm_4x16c8__i8mm_body, fp32)
