/* qs8 GEMM, 2x16c4, ARMv8.2 dot product (SDOT): int32, fixed-point and fp32 outputs;
 * the tile for M = 2 (small batches). See qgemm-neondot.h. */
#define GEMMI8_MCA_NAME(out) "gemmi8_qs8_gemm_" out "_ukernel_2x16c4__neondot"
#include "qgemm-neondot.h"

GEMMI8_QGEMM_NEONDOT_KERNEL_FULL(gemmi8_qs8_gemm_s32_ukernel_2x16c4__neondot, 2, 1, s32)
GEMMI8_QGEMM_NEONDOT_KERNEL_FULL(gemmi8_qs8_gemm_fixedpoint_ukernel_2x16c4__neondot, 2, 1, fixedpoint)
GEMMI8_QGEMM_NEONDOT_KERNEL_FULL(gemmi8_qs8_gemm_fp32_ukernel_2x16c4__neondot, 2, 1, fp32)
