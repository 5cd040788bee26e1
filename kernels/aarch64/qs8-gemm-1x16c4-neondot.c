/* qs8 GEMM, 1x16c4, ARMv8.2 dot product (SDOT): int32, fixed-point and fp32 outputs;
 * the tile for M = 1 (small batches). See qgemm-neondot.h. */
#define GEMMI8_MCA_NAME(out) "gemmi8_qs8_gemm_" out "_ukernel_1x16c4__neondot"
#include "qgemm-neondot.h"

GEMMI8_QGEMM_NEONDOT_KERNEL_FULL(gemmi8_qs8_gemm_s32_ukernel_1x16c4__neondot, 1, 1, s32)
GEMMI8_QGEMM_NEONDOT_KERNEL_FULL(gemmi8_qs8_gemm_fixedpoint_ukernel_1x16c4__neondot, 1, 1, fixedpoint)
GEMMI8_QGEMM_NEONDOT_KERNEL_FULL(gemmi8_qs8_gemm_fp32_ukernel_1x16c4__neondot, 1, 1, fp32)
