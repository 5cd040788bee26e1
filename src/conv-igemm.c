/*
 * Convolution path `igemm`: the GEMM driver (qgemm.h) with A read through an
 * indirection buffer (indirection.h) by the family's igemm kernels, every group at once.
 *
 * Zero-point terms through pointers: kernel sets whose kernels add coef * rowsum(a)
 * (AVX-512 VNNI qu8 and qs8, NEON qu8) get the row sums from a pass over the
 * indirection buffer: for each output pixel and group, the sum of the ci bytes of
 * every tap, padding taps included (they read the zero buffer, a_zero_point in every
 * byte, as the kernel does). It reads M x K bytes once per group, against the
 * M x N x K multiply-adds of the tiles. The kernel sets that need no row sums skip it.
 *
 * Every family table has igemm kernels for its main tile (create checks it); a tile of
 * fewer rows runs the main tile's kernel, its rows past M reading the repeated last
 * pixel.
 */
#include "conv.h"

static void igemm_problem(const gemmi8_convolution* op, const struct gemmi8_conv_setup* s,
                          const struct gemmi8_indirection* ind, struct gemmi8_qgemm_problem* p)
{
  gemmi8_conv_problem(op, s, p);
  p->indirection = ind->pointers;
  p->ks = op->ks;
  p->kc = op->kc;
  p->zero = op->zero;
  p->a_group = op->kc;
}

static gemmi8_status igemm_setup(gemmi8_convolution* op, const struct gemmi8_conv_setup* s)
{
  /* the indirection buffer is rebuilt only for another batch, input size, input
   * pointer or pixel stride */
  struct gemmi8_indirection fresh_ind = {0};
  const int same = gemmi8_indirection_matches(&op->ind, s->batch, s->input_height,
                                              s->input_width, s->input, s->input_stride);
  gemmi8_status status;
  if (!same) {
    status = gemmi8_indirection_init(&fresh_ind, &op->g, op->merge, op->cfg->mr, op->ks, 1,
                                     s->batch, s->input_height, s->input_width,
                                     s->output_height, s->output_width, s->input,
                                     s->input_stride, (uint8_t) op->a_zero_point);
    if (status != gemmi8_status_success) return status;
  }
  struct gemmi8_qgemm_problem p;
  igemm_problem(op, s, same ? &op->ind : &fresh_ind, &p);
  void* workspace;
  size_t bytes;
  status = gemmi8_conv_reserve_workspace(op, &p, &workspace, &bytes);
  if (status != gemmi8_status_success) {
    gemmi8_indirection_free(&fresh_ind);
    return status;
  }
  /* nothing can fail from here on */
  if (!same) {
    gemmi8_indirection_free(&op->ind);
    op->ind = fresh_ind;
    gemmi8_indirection_build(&op->ind, &op->g, op->zero);
  }
  gemmi8_conv_install_workspace(op, workspace, bytes);
  return gemmi8_status_success;
}

static gemmi8_status igemm_run(gemmi8_convolution* op, const gemmi8_parallel* parallel)
{
  if (op->merge) gemmi8_indirection_copy_input(&op->ind, &op->g);
  struct gemmi8_qgemm_problem p;
  igemm_problem(op, &op->s, &op->ind, &p);
  return gemmi8_qgemm_run(&p, parallel);
}

const struct gemmi8_conv_path_ops gemmi8_conv_igemm = {"igemm", igemm_setup, igemm_run};
