/* qu8 GEMM, 4x16c4, ARMv8.2 dot product (UDOT), the loop scheduled for cores that complete
 * in order (Cortex-A510 / A520: GEMMI8_A64_DOT_BATCH): int32, fixed-point and fp32 outputs;
 * every tile runs the 16-column loop (a narrow block's extra columns are not stored). */
#define GEMMI8_MCA_NAME(out) "gemmi8_qu8_gemm_" out "_ukernel_4x16c4__neondot_a510:MACS=1024"
#define GEMMI8_A64_DOT_BATCH 1
#include "qgemm-neondot.h"

GEMMI8_QGEMM_NEONDOT_BODY_FULL(gemmi8_qu8_gemm_4x16c4__neondot_a510_body, 4, 0)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qu8_gemm_s32_ukernel_4x16c4__neondot_a510,
                       gemmi8_qu8_gemm_4x16c4__neondot_a510_body, s32)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qu8_gemm_fixedpoint_ukernel_4x16c4__neondot_a510,
                       gemmi8_qu8_gemm_4x16c4__neondot_a510_body, fixedpoint)
GEMMI8_A64_QGEMM_ENTRY(gemmi8_qu8_gemm_fp32_ukernel_4x16c4__neondot_a510,
                       gemmi8_qu8_gemm_4x16c4__neondot_a510_body, fp32)
