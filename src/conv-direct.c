/*
 * Convolution path `direct`: a 1x1 convolution with stride 1 and no padding is the GEMM
 * on the input in place, every group at once (group g's A: channels [g * ci, (g + 1) *
 * ci) of each pixel), through the GEMM driver (qgemm.h). No indirection buffer.
 */
#include "conv.h"

static void direct_problem(const gemmi8_convolution* op, const struct gemmi8_conv_setup* s,
                           struct gemmi8_qgemm_problem* p)
{
  gemmi8_conv_problem(op, s, p);
  p->a = s->input;
  p->a_stride = s->input_stride;
  p->a_group = op->kc;
}

static gemmi8_status direct_setup(gemmi8_convolution* op, const struct gemmi8_conv_setup* s)
{
  struct gemmi8_qgemm_problem p;
  direct_problem(op, s, &p);
  void* workspace;
  size_t bytes;
  const gemmi8_status status = gemmi8_conv_reserve_workspace(op, &p, &workspace, &bytes);
  if (status != gemmi8_status_success) return status;
  gemmi8_conv_install_workspace(op, workspace, bytes);
  return gemmi8_status_success;
}

static gemmi8_status direct_run(gemmi8_convolution* op, const gemmi8_parallel* parallel)
{
  struct gemmi8_qgemm_problem p;
  direct_problem(op, &op->s, &p);
  return gemmi8_qgemm_run(&p, parallel);
}

const struct gemmi8_conv_path_ops gemmi8_conv_direct = {"direct", direct_setup, direct_run};
