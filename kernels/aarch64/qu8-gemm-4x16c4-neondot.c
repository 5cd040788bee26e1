/* qu8 GEMM, 4x16c4, ARMv8.2 dot product (UDOT): int32, fixed-point and fp32 outputs. */
#define GEMMI8_MCA_NAME(out) "gemmi8_qu8_gemm_" out "_ukernel_4x16c4__neondot"
#include "qgemm-neondot.h"

GEMMI8_QGEMM_NEONDOT_BODY(gemmi8_qu8_gemm_4x16c4__neondot_body, 4, 0)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qu8_gemm_s32_ukernel_4x16c4__neondot,
                       gemmi8_qu8_gemm_4x16c4__neondot_body, s32)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qu8_gemm_fixedpoint_ukernel_4x16c4__neondot,
                       gemmi8_qu8_gemm_4x16c4__neondot_body, fixedpoint)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qu8_gemm_fp32_ukernel_4x16c4__neondot,
                       gemmi8_qu8_gemm_4x16c4__neondot_body, fp32)
