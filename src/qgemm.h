/*
 * What the quantized GEMM driver shares with the convolution layer.
 */
#ifndef GEMMI8_QGEMM_H
#define GEMMI8_QGEMM_H

#include "common.h"

/* Rows per task: a chunk of A stays in the L2 cache while every block of B passes. */
#define GEMMI8_QGEMM_MC_BYTES (384 * 1024)
#define GEMMI8_QGEMM_MC_MAX 1024

/* Validates requantization parameters for n channels and an output range [lo, hi];
 * *left_shift: some shift is positive (fixed-point mode). */
GEMMI8_INTERNAL gemmi8_status gemmi8_check_requant(const gemmi8_requant* rq, size_t n, int32_t lo,
                                                   int32_t hi, int* left_shift);

#endif
