/*
 * qu8 igemm (convolution) microkernels, 4x8c4, portable C: the GEMM kernels of
 * qu8-gemm-4x8c4-generic.c with A read through ks taps of 4 row pointers.
 */
#include "q8-generic.h"

GEMMI8_Q8_GENERIC_IGEMM(gemmi8_qu8_igemm_s32_ukernel_4x8c4__generic, 0, 1, 0)
GEMMI8_Q8_GENERIC_IGEMM(gemmi8_qu8_igemm_fixedpoint_ukernel_4x8c4__generic, 0, 1, 1)
GEMMI8_Q8_GENERIC_IGEMM(gemmi8_qu8_igemm_fp32_ukernel_4x8c4__generic, 0, 1, 2)
