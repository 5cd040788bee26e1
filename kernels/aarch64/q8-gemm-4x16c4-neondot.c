/* qu8 and qs8 GEMM, 4x16c4, ARMv8.2 dot product (UDOT / SDOT): int32, fixed-point and
 * fp32 outputs, one body for both types (see qgemm-neondot.h). */
#define GEMMI8_MCA_NAME(type, out) \
  "gemmi8_" type "_gemm_" out "_ukernel_4x16c4__neondot"
#include "qgemm-neondot.h"

GEMMI8_QGEMM_NEONDOT_BODY(gemmi8_q8_gemm_4x16c4__neondot_body, 4)
#if GEMMI8_KERNELS_qu8
GEMMI8_A64_QKERNELS(GEMMI8_A64_QGEMM_ENTRY, gemmi8_q8_gemm_4x16c4__neondot_body, 0,
                    gemmi8_qu8_gemm_s32_ukernel_4x16c4__neondot,
                    gemmi8_qu8_gemm_fixedpoint_ukernel_4x16c4__neondot,
                    gemmi8_qu8_gemm_fp32_ukernel_4x16c4__neondot)
#endif
#if GEMMI8_KERNELS_qs8
GEMMI8_A64_QKERNELS(GEMMI8_A64_QGEMM_ENTRY, gemmi8_q8_gemm_4x16c4__neondot_body, 1,
                    gemmi8_qs8_gemm_s32_ukernel_4x16c4__neondot,
                    gemmi8_qs8_gemm_fixedpoint_ukernel_4x16c4__neondot,
                    gemmi8_qs8_gemm_fp32_ukernel_4x16c4__neondot)
#endif
