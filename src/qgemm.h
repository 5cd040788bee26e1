/*
 * The quantized GEMM driver, internal: what the GEMM entry points and the convolution's
 * paths run once they have validated their arguments.
 */
#ifndef GEMMI8_QGEMM_H
#define GEMMI8_QGEMM_H

#include "common.h"

struct gemmi8_qgemm_config;

/* Rows per task: a chunk of A stays in the L2 cache while every block of B passes. */
#define GEMMI8_QGEMM_MC_BYTES (384 * 1024)
#define GEMMI8_QGEMM_MC_MAX 1024

/* Validates requantization parameters for n channels and an output range [lo, hi];
 * *left_shift: fixed-point mode, some shift is positive (a saturating left shift is
 * due); fp32 mode, some scale is above 0.5 (a float product may pass int32). */
GEMMI8_INTERNAL gemmi8_status gemmi8_check_requant(const gemmi8_requant* rq, size_t n, int32_t lo,
                                                   int32_t hi, int* left_shift);

/*
 * A validated quantized GEMM: `groups` GEMMs of m x n x k side by side (1 for the GEMM
 * entry points; the groups of a convolution), each over its own packed weights, planned
 * once and run as pure tasks (row sums, panels of A, tiles) over every group at once.
 * Nothing here is checked again: the caller validated every size, pointer and header.
 */
struct gemmi8_qgemm_problem {
  const struct gemmi8_qgemm_config* cfg;
  enum gemmi8_qoutput output;
  size_t groups, m, n;
  size_t k; /* the packed depth (header.k) */
  /* A in place (indirection NULL): row i of group g at a + g * a_group + i * a_stride
   * (bytes). */
  const uint8_t* a;
  size_t a_stride, a_group;
  /* A through an indirection buffer (the igemm kernels): [round_up(m, mr) / mr] row
   * tiles of [ks taps][mr rows] pointers, kc bytes read from each, g * a_group added
   * to every pointer of group g that is not `zero`. */
  const void* const* indirection;
  size_t ks, kc;
  const void* zero;
  /* Group g's packed weights, header first, at packed + g * packed_group. */
  const uint8_t* packed;
  size_t packed_group;
  /* C: row i, column j of group g at c + i * c_stride + (g * n + j) * c_size (bytes). */
  uint8_t* c;
  size_t c_stride, c_size;
  /* Requantization (NULL for s32): per-channel arrays hold groups * n values. */
  const gemmi8_requant* rq;
  int left_shift; /* gemmi8_check_requant's */
  /* Fixed-point constants of every packed block (cfg->prepare_fixedpoint), block b of
   * group g at prepared + g * prepared_group + b * GEMMI8_QPREPARED_BYTES, prepared by
   * gemmi8_qgemm_prepare(); or NULL: the tasks prepare them. */
  const uint8_t* prepared;
  size_t prepared_group;
  /* f32 output when row_scale is not NULL (output is then s32: the kernels' tiles are
   * stored by the set's store_f32, src/config.h): row i's scale and zero point at
   * row_scale[i], row_zero_point[i] (one group); per column the weights' sums, scales
   * and float biases; the clamp. */
  const float* row_scale;
  const int32_t* row_zero_point;
  const int32_t* col_sum;
  const float* col_scale;
  const float* col_bias;
  float out_min, out_max;
  /* gemmi8_qgemm_workspace_bytes() bytes at a 64-byte boundary, or NULL: the run
   * allocates what it needs (and may then return out_of_memory). */
  void* workspace;
};

/* Checks a GEMM call against the packed weights of `type` for cfg: pointers, extents
 * (c_size bytes per element of C), k <= max_k, the header of packed_b. */
/* The generic f32 store (src/qdgemm.c): gemmi8_output_f32 element by element. */
GEMMI8_INTERNAL void gemmi8_q8_store_f32__generic(size_t mr, size_t nr, const int32_t* acc,
                                                  size_t acc_stride, void* c, size_t c_stride,
                                                  const struct gemmi8_qparams* params);

/* The qd8 GEMM over 4-bit weights (src/q4gemm.c): the check of the packed weights
 * (invalid_parameter unless they are 4-bit weights packed for the kernels in use, n x
 * k), and the run, every argument checked by the caller. */
GEMMI8_INTERNAL gemmi8_status gemmi8_q4gemm_check(size_t n, size_t k, const void* packed_b);
GEMMI8_INTERNAL gemmi8_status gemmi8_q4gemm_run(size_t m, size_t n, size_t k, const int8_t* a,
                                                size_t a_stride, const float* a_scale,
                                                const int32_t* a_zero_point,
                                                const void* packed_b, float out_min,
                                                float out_max, float* c, size_t c_stride,
                                                const gemmi8_parallel* parallel);

GEMMI8_INTERNAL gemmi8_status gemmi8_qgemm_check(uint32_t type,
                                                 const struct gemmi8_qgemm_config* cfg,
                                                 size_t max_k, size_t m, size_t n, size_t k,
                                                 const void* a, size_t a_stride,
                                                 const void* packed_b, const void* c,
                                                 size_t c_stride, size_t c_size);

/* Bytes of workspace the run of p needs (row sums of A where the kernels take them
 * from the driver, packed panels of A where the family packs them), 0 for none; 0 is
 * returned when the size does not fit size_t (*bytes unspecified), else 1. */
GEMMI8_INTERNAL int gemmi8_qgemm_workspace_bytes(const struct gemmi8_qgemm_problem* p,
                                                 size_t* bytes);

/* The prepared constants: *bytes for every block of every group (0: the kernel set
 * prepares none, or the output is not fixed-point), *group_stride between groups (0
 * when the scales are per tensor: every group shares the first's); 0 when the size
 * does not fit size_t. gemmi8_qgemm_prepare() fills them from p->rq and p->left_shift. */
GEMMI8_INTERNAL int gemmi8_qgemm_prepared_bytes(const struct gemmi8_qgemm_problem* p,
                                                size_t* bytes, size_t* group_stride);
GEMMI8_INTERNAL void gemmi8_qgemm_prepare(const struct gemmi8_qgemm_problem* p, uint8_t* prepared,
                                          size_t group_stride);

/* Plans and runs p on the calling thread or on parallel's (a valid one). Returns
 * success, or out_of_memory when p->workspace is NULL and the workspace could not be
 * allocated (nothing written then). */
GEMMI8_INTERNAL gemmi8_status gemmi8_qgemm_run(const struct gemmi8_qgemm_problem* p,
                                               const gemmi8_parallel* parallel);

#endif
