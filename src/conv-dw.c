/*
 * Convolution path `depthwise`: groups > 1 with one input channel a group (a channel
 * multiplier of co = group_output_channels), on the depthwise kernels (kernels/dw.inc),
 * one filter per output channel and no sum across channels.
 *
 * Create packs each output channel's ks taps as int8 and folds the zero points into the
 * bias, so that every type runs the same kernels (microkernel.h):
 *   qu8s8: w' = w;        bias' = bias - a_zp * sum w
 *   qs8:   w' = w;        bias' = bias - (a_zp + 128) * sum w   (input read as a ^ 0x80)
 *   qu8:   w' = w - b_zp; bias' = bias - a_zp * sum w'
 * qu8's w - b_zp lies in [-255, 255]: when some value of the layer is outside int8, each
 * tap becomes `repeat` taps (2, or 3 for the value 255) that read the same pointer and
 * whose int8 weights add up to it, exact at repeat times the work.
 *
 * A multiplier above 1 reads a copy of the input with each channel repeated co times
 * (made before every run), so that output channel c reads input channel c. Setup builds
 * an indirection buffer of one pixel a row (padding taps at a zero buffer of the input
 * zero point); run splits the output pixels into tasks.
 */
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "parallel.h"

/* int8 parts of d (|d| <= 255) for `repeat` taps: the first as large as int8 allows. */
static int8_t part(int32_t d, size_t k)
{
  for (size_t i = 0; i < k; i++) d -= d > 127 ? 127 : (d < -128 ? -128 : d);
  return (int8_t) (d > 127 ? 127 : (d < -128 ? -128 : d));
}

static size_t parts_needed(int32_t d) { return d >= -128 && d <= 127 ? 1 : (d <= 254 ? 2 : 3); }

gemmi8_status gemmi8_conv_dw_create(gemmi8_convolution* op, const uint8_t* weights,
                                    const uint8_t* b_zero_point, int b_zp_per_channel,
                                    const int32_t* bias)
{
  const struct gemmi8_dwconv_config* cfg = op->dwcfg;
  const size_t channels = op->channels_out, taps = op->g.kernel_height * op->g.kernel_width;
  const int qu8 = op->type == gemmi8_type_qu8;
  /* the value of output channel c, tap t, less its zero point */
  size_t repeat = 1;
  for (size_t c = 0; c < channels && qu8; c++) {
    const int32_t zp = b_zero_point[b_zp_per_channel ? c : 0];
    for (size_t t = 0; t < taps; t++) {
      const size_t r = parts_needed((int32_t) weights[c * taps + t] - zp);
      if (r > repeat) repeat = r;
    }
  }
  const size_t ks = taps * repeat; /* <= 3 * max_k: no overflow */
  const size_t tile = gemmi8_dwtile_bytes(cfg, ks);
  const size_t tiles = gemmi8_divide_round_up(channels, cfg->cr);
  size_t packed_bytes, w_bytes;
  if (tile == 0 || !gemmi8_mul(tiles, tile, &packed_bytes) ||
      !gemmi8_mul(channels, ks, &w_bytes)) {
    return gemmi8_status_unsupported_parameter;
  }
  int8_t* w = malloc(w_bytes);
  int32_t* b = malloc(channels * sizeof(int32_t));
  void* packed = NULL;
  if (posix_memalign(&packed, GEMMI8_PACK_ALIGNMENT, packed_bytes) != 0) packed = NULL;
  void* prepared = NULL;
  const int prepare = op->output != gemmi8_qoutput_s32 && cfg->prepare != NULL;
  if (prepare && posix_memalign(&prepared, 64, tiles * GEMMI8_DWPREPARED_BYTES) != 0) {
    prepared = NULL;
  }
  if (w == NULL || b == NULL || packed == NULL || (prepare && prepared == NULL)) {
    free(w);
    free(b);
    free(packed);
    free(prepared);
    return gemmi8_status_out_of_memory;
  }
  const uint32_t a_zp = (uint32_t) op->a_zero_point + (op->type == gemmi8_type_qs8 ? 128u : 0u);
  for (size_t c = 0; c < channels; c++) {
    const int32_t zp = qu8 ? b_zero_point[b_zp_per_channel ? c : 0] : 0;
    uint32_t sum = 0;
    for (size_t t = 0; t < taps; t++) {
      const uint8_t v = weights[c * taps + t];
      const int32_t d = qu8 ? (int32_t) v - zp : (int32_t) (int8_t) v;
      sum += (uint32_t) d;
      for (size_t k = 0; k < repeat; k++) w[c * ks + t * repeat + k] = part(d, k);
    }
    b[c] = (int32_t) ((bias != NULL ? (uint32_t) bias[c] : 0u) - a_zp * sum);
  }
  cfg->pack(channels, ks, w, b, packed);
  free(w);
  free(b);
  if (prepare) {
    const size_t cs = op->rq.per_channel ? 1 : 0;
    for (size_t i = 0; i < tiles; i++) {
      const size_t c0 = i * cfg->cr;
      struct gemmi8_qparams q;
      memset(&q, 0, sizeof(q));
      if (op->output == gemmi8_qoutput_fixedpoint) {
        q.multiplier = op->rq.multiplier + c0 * cs;
        q.shift = op->rq.shift + c0 * cs;
      } else {
        q.scale = op->rq.scale + c0 * cs;
      }
      q.channel_stride = cs;
      cfg->prepare(op->output, &q, gemmi8_min(cfg->cr, channels - c0),
                   (uint8_t*) prepared + i * GEMMI8_DWPREPARED_BYTES);
    }
  }
  op->packed = packed;
  op->prepared = prepared;
  op->ks = ks;
  op->dw_repeat = repeat;
  const enum gemmi8_dwtaps slot =
      ks == 9 ? gemmi8_dwtaps_9 : (ks == 25 ? gemmi8_dwtaps_25 : gemmi8_dwtaps_any);
  op->dwkernel = cfg->taps[slot].out[op->output];
  if (op->dwkernel == NULL) op->dwkernel = cfg->taps[gemmi8_dwtaps_any].out[op->output];
  return op->dwkernel != NULL ? gemmi8_status_success : gemmi8_status_unsupported_parameter;
}

/* ---- setup ---------------------------------------------------------------------------- */

/* 1 when a depthwise set of the build takes row pairs (kernels/dw.inc, row_pairs): where
 * none does, the taps by columns are neither built nor compiled in. */
#define GEMMI8_DWSET(set, name, features, cr, tap_bytes, tap_group, bytes9, row_pairs) \
  GEMMI8_IF_BUILT(set, dw, | (row_pairs))
#define GEMMI8_DWUKERNEL(set, taps, output, cr, isa, symbol, file)
#define GEMMI8_DWHELPER(set, role, symbol, file)
#define GEMMI8_DWEND(set)
enum {
  DW_ROW_PAIRS = 0
#include "dw.inc"
};
#undef GEMMI8_DWSET
#undef GEMMI8_DWUKERNEL
#undef GEMMI8_DWHELPER
#undef GEMMI8_DWEND

/* ind's taps (built, 3x3 of stride and dilation 1, mr 1) of its whole pairs of rows of
 * output_width pixels, counted from its first, by input column, as the kernels read
 * them (microkernel.h, gemmi8_dwparams.columns: 4 (output_width + 2) pointers a pair).
 * success, or out_of_memory (ind as it was). */
static gemmi8_status dw_columns(struct gemmi8_indirection* ind)
{
  const size_t w = ind->output_width, pairs = ind->m / (2 * w);
  /* 4 (w + 2) a pair of 2 w pixels: at most 6 m, under the pointers' 9 m */
  const size_t count = pairs * 4 * (w + 2);
  const void** columns = malloc(count > 0 ? count * sizeof(void*) : 1);
  if (columns == NULL) return gemmi8_status_out_of_memory;
  const void* const* taps = ind->pointers;
  for (size_t i = 0; i < count; i++) {
    /* pair p, column c, row r: input column c - 1 of the row under pixel 0, tap column
     * 0 of pixel c or 1 and 2 of the last pixel; rows 0..2 the top pixel's tap rows, 3
     * the bottom pixel's last */
    const size_t p = i / (4 * (w + 2)), c = i / 4 % (w + 2), r = i % 4;
    const size_t x = c < w ? c : w - 1, kx = c - x;
    columns[i] = taps[18 * w * p + 9 * (r == 3 ? w + x : x) + 3 * (r == 3 ? 2 : r) + kx];
  }
  free(ind->columns);
  ind->columns = columns;
  ind->columns_count = count;
  return gemmi8_status_success;
}

/* The output width when the kernels take op's output by pairs of rows (a set whose
 * kernels do; 3x3, stride and dilation 1, the pairs within an image: one image, or rows
 * even in number; microkernel.h, gemmi8_dwparams.row_pixels), else 0. */
static size_t dw_row_pixels(const gemmi8_convolution* op, const struct gemmi8_conv_setup* s)
{
  const struct gemmi8_conv_geometry* g = &op->g;
  if (DW_ROW_PAIRS && op->dwcfg->row_pairs && op->ks == 9 && g->kernel_height == 3 &&
      g->kernel_width == 3 && g->stride_height == 1 && g->stride_width == 1 &&
      g->dilation_height == 1 && g->dilation_width == 1 &&
      (s->batch == 1 || s->output_height % 2 == 0)) {
    return s->output_width;
  }
  return 0;
}

static gemmi8_status dw_setup(gemmi8_convolution* op, const struct gemmi8_conv_setup* s)
{
  const size_t co = op->g.group_output_channels;
  /* a multiplier above 1: the expanded copy, channels_out bytes a pixel */
  size_t copy_bytes = 0;
  if (co > 1 && (!gemmi8_mul(s->batch, s->input_height, &copy_bytes) ||
                 !gemmi8_mul(copy_bytes, s->input_width, &copy_bytes) ||
                 !gemmi8_mul(copy_bytes, op->channels_out, &copy_bytes))) {
    return gemmi8_status_invalid_parameter;
  }
  void* copy = NULL;
  if (copy_bytes > op->workspace_bytes) {
    if (posix_memalign(&copy, 64, copy_bytes) != 0) return gemmi8_status_out_of_memory;
  }
  const uint8_t* base = co > 1 ? (copy != NULL ? copy : op->workspace) : s->input;
  const size_t stride = co > 1 ? op->channels_out : s->input_stride;
  const int same = copy == NULL &&
                   gemmi8_indirection_matches(&op->ind, s->batch, s->input_height,
                                              s->input_width, base, stride);
  if (!same) {
    struct gemmi8_indirection fresh;
    const gemmi8_status status = gemmi8_indirection_init(
        &fresh, &op->g, 0, 1, op->ks, op->dw_repeat, s->batch, s->input_height, s->input_width,
        s->output_height, s->output_width, base, stride, (uint8_t) op->a_zero_point);
    if (status != gemmi8_status_success) {
      free(copy);
      return status;
    }
    gemmi8_indirection_build(&fresh, &op->g, op->zero);
    /* the taps by columns of the row pairs' kernels */
    if (dw_row_pixels(op, s) != 0 && dw_columns(&fresh) != gemmi8_status_success) {
      gemmi8_indirection_free(&fresh);
      free(copy);
      return gemmi8_status_out_of_memory;
    }
    /* nothing can fail from here on */
    gemmi8_indirection_free(&op->ind);
    op->ind = fresh;
  }
  gemmi8_conv_install_workspace(op, copy, copy_bytes);
  return gemmi8_status_success;
}

/* ---- run ------------------------------------------------------------------------------ */

struct dw_context {
  const gemmi8_convolution* op;
  struct gemmi8_dwparams params;
  size_t unit;  /* output pixels of a unit: a pass, or a pair of rows */
  size_t units; /* ceil(m / unit) */
  size_t tasks; /* the units shared evenly among them */
};

static void dw_task(void* context, size_t index)
{
  const struct dw_context* ctx = context;
  const gemmi8_convolution* op = ctx->op;
  const size_t p0 = gemmi8_split_first_tile(ctx->units, ctx->tasks, index) * ctx->unit;
  const size_t p1 = gemmi8_min(
      gemmi8_split_first_tile(ctx->units, ctx->tasks, index + 1) * ctx->unit, op->s.m);
  struct gemmi8_dwparams params = ctx->params;
  if (params.row_pixels != 0) {
    /* the task's first pair of rows (p0: whole pairs) */
    params.columns += p0 / (2 * params.row_pixels) * 4 * (params.row_pixels + 2);
  }
  op->dwkernel(op->channels_out, p1 - p0, op->ks, op->ind.pointers + p0 * op->ks, op->packed,
               op->s.output + p0 * op->s.output_stride, op->s.output_stride, 0, op->zero,
               &params);
}

/* Repeats each input channel co times into the copy. */
static void expand_input(const gemmi8_convolution* op)
{
  const struct gemmi8_conv_setup* s = &op->s;
  const size_t pixels = s->batch * s->input_height * s->input_width;
  const size_t ci = op->g.groups, co = op->g.group_output_channels;
  uint8_t* dst = op->workspace;
  for (size_t p = 0; p < pixels; p++) {
    const uint8_t* src = s->input + p * s->input_stride;
    for (size_t c = 0; c < ci; c++) {
      memset(dst, src[c], co);
      dst += co;
    }
  }
}

/* Tasks for threads: DW_TASKS a thread, or fewer of DW_TASK_MIN_OPS operations each (a
 * multiple of the threads; one a thread where there is work for fewer than two), in
 * whole passes of DW_TASK_ROUND output pixels (the kernels' widest pass) or, for
 * dw3x3_columns, whole pairs of rows, shared as evenly as they go. A task costs some
 * 30-50 ns however small: the split run on one thread against no split
 * (bench/threads/paired-load.c --split-cost, AMD EPYC Zen 4 VM, 31 pairs) cost 28x28x192
 * stride 2 (6.3 us) 3.2-3.3% in 7 tasks of 32 pixels, 1.6-2.3% in 4 and 0.7-0.9% in 2;
 * 7x7x960 (6.9 us) 1.7-1.8% in 4 and 0.6-0.9% in 2; 14x14x384 2.0-2.3% in 7 tasks and
 * 1.1-2.1% in 4; 28x28x192 2.2% in 14 and 1.3-1.9% in 8. */
#define DW_TASKS 4
#define DW_TASK_ROUND 4
#define DW_TASK_MIN_OPS (250.0 * 1000)
static gemmi8_status dw_run(gemmi8_convolution* op, const gemmi8_parallel* parallel)
{
  if (op->g.group_output_channels > 1) expand_input(op);
  struct dw_context ctx;
  memset(&ctx, 0, sizeof(ctx));
  ctx.op = op;
  struct gemmi8_qparams* q = &ctx.params.q;
  if (op->output != gemmi8_qoutput_s32) {
    q->multiplier = op->rq.multiplier;
    q->shift = op->rq.shift;
    q->scale = op->rq.scale;
    q->channel_stride = op->rq.per_channel ? 1 : 0;
    q->zero_point = op->rq.zero_point;
    q->min = op->rq.min;
    q->max = op->rq.max;
    q->left_shift = op->left_shift;
    q->prepared = op->prepared;
  }
  ctx.params.input_xor = op->type == gemmi8_type_qs8 ? 0x80 : 0;
  /* 3x3, stride 1, dilation 1: the kernels' row pairs (microkernel.h), which tasks of
   * whole pairs keep within one image when it is the only one or its rows are even in
   * number */
  const size_t w = op->s.output_width;
  /* setup built the columns where dw_row_pixels says (none where no set takes pairs) */
  ctx.params.columns = DW_ROW_PAIRS ? op->ind.columns : NULL;
  ctx.params.row_pixels = ctx.params.columns != NULL ? w : 0;
  const size_t m = op->s.m;
  const double ops = 2.0 * (double) m * (double) op->channels_out * (double) op->ks;
  const size_t threads = gemmi8_parallel_threads(parallel, ops, GEMMI8_OP_COST_DEPTHWISE);
  if (threads <= 1) {
    ctx.unit = m;
    ctx.units = ctx.tasks = 1;
    dw_task(&ctx, 0);
    return gemmi8_status_success;
  }
  size_t tasks = DW_TASKS * threads;
  if (ops < DW_TASK_MIN_OPS * (double) tasks) {
    tasks = (size_t) (ops / DW_TASK_MIN_OPS);
    tasks = tasks < 2 * threads ? threads : tasks - tasks % threads;
  }
  /* (whole pairs: a task of odd rows would take its last alone by passes; tasks of
   * whole rows cost 14x14 and 28x28 layers 4-9% split, the split's tasks run on one
   * thread against none, about 1.4 paired rows for each row taken alone) */
  ctx.unit = ctx.params.row_pixels == 0 ? DW_TASK_ROUND : 2 * w;
  ctx.units = gemmi8_divide_round_up(m, ctx.unit);
  if (tasks > ctx.units) tasks = ctx.units - (ctx.units > threads ? ctx.units % threads : 0);
  ctx.tasks = tasks;
  parallel->parallel_for(parallel->context, dw_task, &ctx, tasks);
  return gemmi8_status_success;
}

const struct gemmi8_conv_path_ops gemmi8_conv_depthwise = {"depthwise", dw_setup, dw_run};
