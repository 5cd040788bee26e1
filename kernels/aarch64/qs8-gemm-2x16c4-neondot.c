/* qs8 GEMM, 2x16c4, ARMv8.2 dot product (SDOT): int32, fixed-point and fp32 outputs;
 * the tile for M = 2 (small batches). See qgemm-neondot.h. */
#define GEMMI8_MCA_NAME(out) "gemmi8_qs8_gemm_" out "_ukernel_2x16c4__neondot"
#include "qgemm-neondot.h"

GEMMI8_QGEMM_NEONDOT_BODY_FULL(gemmi8_qs8_gemm_2x16c4__neondot_body, 2, 1)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qs8_gemm_s32_ukernel_2x16c4__neondot,
                       gemmi8_qs8_gemm_2x16c4__neondot_body, s32)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qs8_gemm_fixedpoint_ukernel_2x16c4__neondot,
                       gemmi8_qs8_gemm_2x16c4__neondot_body, fixedpoint)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qs8_gemm_fp32_ukernel_2x16c4__neondot,
                       gemmi8_qs8_gemm_2x16c4__neondot_body, fp32)
