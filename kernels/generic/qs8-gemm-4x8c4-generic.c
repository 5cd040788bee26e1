/*
 * qs8 GEMM microkernels, 4x8c4, portable C: the reference every ISA must equal.
 *   acc[i][j] = bias'[j] + sum_k a[i][k] * w[k][j]   (mod 2^32; weights symmetric)
 * then int32 out, fixed-point or fp32 requantization.
 * Block: int32 bias'[8], weights in k groups of 4: [k/4][8][4].
 */
#include "q8-generic.h"

GEMMI8_Q8_GENERIC_GEMM(gemmi8_qs8_gemm_s32_ukernel_4x8c4__generic, 1, 0, 0)
GEMMI8_Q8_GENERIC_GEMM(gemmi8_qs8_gemm_fixedpoint_ukernel_4x8c4__generic, 1, 0, 1)
GEMMI8_Q8_GENERIC_GEMM(gemmi8_qs8_gemm_fp32_ukernel_4x8c4__generic, 1, 0, 2)
