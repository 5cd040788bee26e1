/*
 * A quantized GEMM problem (qu8 or qs8) with its reference accumulators, and the
 * calls that pack it and check every output kind against the reference.
 *
 * Usage: q_alloc(), fill a, b, a_zp, b_zp, bias (q_fill_random() does it), then
 * q_prepare() (reference + packing under the current ISA), then any number of
 * q_check_s32() / q_check_requant(), then q_free().
 */
#ifndef GEMMI8_TEST_QTEST_H
#define GEMMI8_TEST_QTEST_H

#include <stddef.h>
#include <stdint.h>

#include "gemmi8.h"

/* Kinds of problem (q_alloc's kind): the type of A, B and C. */
enum { Q_QU8 = 0, Q_QS8 = 1, Q_QU8S8 = 2 };

typedef struct qproblem {
  int kind;      /* Q_QU8, Q_QS8, Q_QU8S8 */
  int is_signed; /* A, C (and the clamp window) are int8: qs8 */
  int b_signed;  /* B is int8, symmetric: qs8, qu8s8 */
  size_t m, n, k;
  size_t a_stride, b_stride, c_stride;
  int b_kn;
  int32_t a_zp;
  int b_zp_per_channel; /* qu8 only */
  uint8_t* a;           /* (m - 1) * a_stride + k bytes, exactly (over-reads hit ASan) */
  uint8_t* b;           /* exactly the rows the layout needs */
  int32_t* b_zp;        /* n values (all equal per tensor; all 0 for qs8) */
  int32_t* bias;        /* n values, or NULL */
  int32_t* acc;         /* m x n reference accumulators */
  void* packed;
  size_t packed_size;
  int packed_by_alloc;
  unsigned char* packed_copy; /* to check that GEMMs do not write the weights */
  uint8_t* a_copy;            /* to check that GEMMs do not write A */
  char desc[320];
} qproblem;

/* Allocates a problem of a kind (data uninitialized, bias allocated). */
void q_alloc(qproblem* p, int kind, size_t m, size_t n, size_t k, size_t a_stride,
             size_t b_stride, int b_kn, size_t c_stride);
void q_free(qproblem* p);
/* Drops the bias (NULL bias). */
void q_no_bias(qproblem* p);

/* Random zero points, data and bias, including the extremes. */
void q_fill_random(qproblem* p);

/* Computes the reference, packs the weights (caller memory or the allocating
 * variant), scribbles over b, b_zp and bias (the packed buffer must be
 * self-contained). what names the case in failure messages. Returns 0 if packing
 * failed (recorded as a failed check). */
int q_prepare(qproblem* p, const char* what);

/* Runs the int32 GEMM and compares every byte of C: one check. */
void q_check_s32(qproblem* p);

/* Requantization parameters with their own arrays. */
typedef struct qrq {
  gemmi8_requant rq;
  int32_t* multiplier; /* 1 or n values */
  int32_t* shift;
  float* scale;
  char desc[160];
} qrq;

/* Allocates arrays for the mode (1 value or n); the ignored ones are left NULL or
 * filled with invalid values, at random (the library must ignore them). */
void qrq_alloc(qrq* r, gemmi8_requant_mode mode, int per_channel, size_t n);
void qrq_free(qrq* r);
/* Fills desc from the parameters. */
void qrq_describe(qrq* r);

/* Parameters chosen from the accumulator range so that outputs span the 8-bit
 * range, with random zero point and clamp window variants. */
void q_auto_requant(const qproblem* p, qrq* r, gemmi8_requant_mode mode, int per_channel);

/* Runs the requantizing GEMM and compares every byte of C: one check. */
void q_check_requant(qproblem* p, const qrq* r);

/* Type range of the output. */
int32_t q_min(const qproblem* p);
int32_t q_max(const qproblem* p);

/* Bytes of a matrix of rows rows of cols elements at stride (elements). */
size_t q_bytes(size_t rows, size_t cols, size_t stride);

#endif
