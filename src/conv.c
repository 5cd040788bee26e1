/*
 * Convolution (qu8, qs8, qu8s8), the operator core: create / setup / run / memory /
 * destroy, over the paths of conv.h. Create validates, chooses the path once, packs the
 * filter and prepares what depends only on the weights and the requantization; setup
 * validates and hands the path the new setup; run hands it the run.
 *
 * The filter of group g is packed as a GEMM weight of N = co, K = ks * kcp: tap t's
 * ci channels at depths [t * kcp, t * kcp + ci), each tap padded to kcp =
 * round_up(ci, KR) (a single tap is not padded). The padding depths hold the weight
 * zero point (0 for the symmetric types), so (B - b_zp) is 0 there and they add
 * nothing, whatever A the kernel reads for them (the igemm kernels read 0; the
 * packed bias' = bias - a_zp * colsum + K * a_zp * b_zp cancels them exactly). The
 * accumulators are exact modulo 2^32 whatever the padded depth, and the real sums
 * fit int32 whenever the real depth (taps x ci) is within the type's limit: that is
 * the layer's limit, on every kernel set.
 */
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "pack.h"
#include "parallel.h"

/* The paths, by enum value; a slot without functions is not implemented yet. */
static const struct gemmi8_conv_path_ops* const paths[gemmi8_conv_path_count] = {
    [gemmi8_conv_path_direct] = &gemmi8_conv_direct,
    [gemmi8_conv_path_igemm] = &gemmi8_conv_igemm,
    [gemmi8_conv_path_depthwise] = &gemmi8_conv_depthwise,
    [gemmi8_conv_path_binary] = &gemmi8_conv_binary,
};

/* ---- create ------------------------------------------------------------------------ */

gemmi8_status gemmi8_conv_check_geometry(const gemmi8_conv_geometry* g)
{
  if (g->kernel_height == 0 || g->kernel_width == 0 || g->stride_height == 0 ||
      g->stride_width == 0 || g->dilation_height == 0 || g->dilation_width == 0 ||
      g->groups == 0 || g->group_input_channels == 0 || g->group_output_channels == 0) {
    return gemmi8_status_invalid_parameter;
  }
  size_t t;
  /* the dilated kernel's extent, (kernel - 1) * dilation + 1, and the paddings add */
  if (!gemmi8_mul(g->kernel_height - 1, g->dilation_height, &t) || !gemmi8_add(t, 1, &t) ||
      !gemmi8_mul(g->kernel_width - 1, g->dilation_width, &t) || !gemmi8_add(t, 1, &t) ||
      !gemmi8_add(g->padding_top, g->padding_bottom, &t) ||
      !gemmi8_add(g->padding_left, g->padding_right, &t)) {
    return gemmi8_status_invalid_parameter;
  }
  return gemmi8_status_success;
}

/* Copies a requant's arrays (count values) into owned memory. */
int gemmi8_conv_copy_requant(const gemmi8_requant* rq, size_t count, gemmi8_requant* out)
{
  *out = *rq;
  out->multiplier = out->shift = NULL;
  out->scale = NULL;
  if (rq->mode == gemmi8_requant_fixedpoint) {
    int32_t* m = malloc(count * sizeof(int32_t));
    int32_t* s = malloc(count * sizeof(int32_t));
    if (m == NULL || s == NULL) {
      free(m);
      free(s);
      return 0;
    }
    memcpy(m, rq->multiplier, count * sizeof(int32_t));
    memcpy(s, rq->shift, count * sizeof(int32_t));
    out->multiplier = m;
    out->shift = s;
  } else {
    float* f = malloc(count * sizeof(float));
    if (f == NULL) return 0;
    memcpy(f, rq->scale, count * sizeof(float));
    out->scale = f;
  }
  return 1;
}

void gemmi8_convolution_destroy(gemmi8_convolution* op)
{
  if (op == NULL) return;
  free(op->packed);
  free(op->prepared);
  free((void*) op->rq.multiplier);
  free((void*) op->rq.shift);
  free((void*) op->rq.scale);
  free(op->zero);
  gemmi8_indirection_free(&op->ind);
  free(op->workspace);
  gemmi8_bconv_free(op->bin);
  free(op);
}

void gemmi8_conv_problem(const gemmi8_convolution* op, const struct gemmi8_conv_setup* s,
                         struct gemmi8_qgemm_problem* p)
{
  memset(p, 0, sizeof(*p));
  p->cfg = op->cfg;
  p->output = op->output;
  p->groups = op->g.groups;
  p->m = s->m;
  p->n = op->g.group_output_channels;
  p->k = op->k;
  p->packed = op->packed;
  p->packed_group = op->packed_bytes;
  p->c = s->output;
  p->c_stride = s->output_stride;
  p->c_size = op->output_size;
  p->rq = op->output == gemmi8_qoutput_s32 ? NULL : &op->rq;
  p->left_shift = op->left_shift;
  p->prepared = op->prepared;
  p->prepared_group = op->prepared_group;
  p->workspace = op->workspace;
}

/* Packs group grp's filter (co x real_k values at b, each tap's ci channels padded to
 * the packed depth through `padded` when the taps need it). */
static void pack_group(const gemmi8_convolution* op, const uint8_t* b, size_t real_k,
                       const uint8_t* b_zero_point, int b_zp_per_channel, const int32_t* bias,
                       uint8_t* padded, int32_t* zp, size_t grp)
{
  const size_t co = op->g.group_output_channels, k = op->k, kc = op->kc, ks = op->ks;
  const size_t kcp = ks == 1 ? kc : k / ks;
  size_t b_stride = real_k;
  /* qu8: the group's weight zero points; qu8s8: int8 B read as uint8 B + 128 with
   * zero point 128 (the packers' form); qs8: none */
  for (size_t o = 0; o < co && op->type != gemmi8_type_qs8; o++) {
    zp[o] = op->type == gemmi8_type_qu8 ? b_zero_point[b_zp_per_channel ? grp * co + o : 0] : 128;
  }
  if (padded != NULL) {
    for (size_t o = 0; o < co; o++) {
      /* (B - b_zp) = 0 in the padding: b_zp for qu8, 0 for the int8 weights */
      const uint8_t fill = op->type == gemmi8_type_qu8 ? (uint8_t) zp[o] : 0;
      for (size_t t = 0; t < ks; t++) {
        uint8_t* dst = padded + o * k + t * kcp;
        memcpy(dst, b + o * real_k + t * kc, kc);
        memset(dst + kc, fill, kcp - kc);
      }
    }
    b = padded;
    b_stride = k;
  }
  const struct gemmi8_qpack_source src = {b, b_stride, 0, op->type == gemmi8_type_qs8,
                                          op->type == gemmi8_type_qu8s8 ? 0x80 : 0};
  gemmi8_qpack_into(op->cfg, (uint32_t) op->type, co, k, &src, op->a_zero_point,
                    op->type == gemmi8_type_qs8 ? NULL : zp, bias ? bias + grp * co : NULL,
                    op->packed + grp * op->packed_bytes);
}

/* The fixed-point constants of every block, once: they depend only on the packing
 * and the requantization. */
static gemmi8_status prepare_constants(gemmi8_convolution* op)
{
  const struct gemmi8_conv_setup none = {0};
  struct gemmi8_qgemm_problem p;
  gemmi8_conv_problem(op, &none, &p);
  size_t bytes, group_stride;
  if (!gemmi8_qgemm_prepared_bytes(&p, &bytes, &group_stride)) {
    return gemmi8_status_unsupported_parameter;
  }
  if (bytes == 0) return gemmi8_status_success;
  void* prepared;
  if (posix_memalign(&prepared, 64, bytes) != 0) return gemmi8_status_out_of_memory;
  gemmi8_qgemm_prepare(&p, prepared, group_stride);
  op->prepared = prepared;
  op->prepared_group = group_stride;
  return gemmi8_status_success;
}

static gemmi8_status create(enum gemmi8_type type, enum gemmi8_qoutput output,
                            const gemmi8_conv_geometry* geometry, const uint8_t* weights,
                            int32_t a_zero_point, const uint8_t* b_zero_point,
                            int b_zp_per_channel, const int32_t* bias, const gemmi8_requant* rq,
                            gemmi8_convolution** out)
{
  const int requantized = output != gemmi8_qoutput_s32;
  if (geometry == NULL || weights == NULL || (requantized && rq == NULL) || out == NULL) {
    return gemmi8_status_invalid_parameter;
  }
  if (type == gemmi8_type_qu8 &&
      (b_zero_point == NULL || (b_zp_per_channel != 0 && b_zp_per_channel != 1))) {
    return gemmi8_status_invalid_parameter;
  }
  gemmi8_status status = gemmi8_conv_check_geometry(geometry);
  if (status != gemmi8_status_success) return status;
  const gemmi8_conv_geometry g = *geometry;
  const struct gemmi8_qgemm_config* cfg = gemmi8_qconfig((uint32_t) type);
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  /* sizes: channels, taps, the filter */
  size_t channels_in, channels_out, ks, filter, real_k;
  if (!gemmi8_mul(g.groups, g.group_input_channels, &channels_in) ||
      !gemmi8_mul(g.groups, g.group_output_channels, &channels_out) ||
      !gemmi8_mul(g.kernel_height, g.kernel_width, &ks) ||
      !gemmi8_mul(ks, g.group_input_channels, &real_k) ||
      !gemmi8_mul(channels_out, real_k, &filter) || filter > (size_t) PTRDIFF_MAX) {
    return gemmi8_status_invalid_parameter;
  }
  const int32_t lo = type == gemmi8_type_qs8 ? -128 : 0, hi = lo + 255;
  int left_shift = 0;
  if (requantized) {
    status = gemmi8_check_requant(rq, channels_out, lo, hi, &left_shift);
    if (status != gemmi8_status_success) return status;
    output = rq->mode == gemmi8_requant_fixedpoint ? gemmi8_qoutput_fixedpoint
                                                   : gemmi8_qoutput_fp32;
  }
  const size_t max_k = type == gemmi8_type_qu8   ? GEMMI8_QU8_MAX_K
                       : type == gemmi8_type_qs8 ? GEMMI8_QS8_MAX_K
                                                 : GEMMI8_QU8S8_MAX_K;
  /* the layer's limit: its real depth, whatever the kernel set pads it to */
  if (real_k > max_k) return gemmi8_status_unsupported_parameter;
  /* The path, once: a depthwise geometry (1x1 too) on the depthwise kernels, then the
   * GEMM on the input in place, then the igemm. */
  const int depthwise = g.groups > 1 && g.group_input_channels == 1;
  const struct gemmi8_dwconv_config* dwcfg = depthwise ? gemmi8_dwconv_config() : NULL;
  enum gemmi8_conv_path path = gemmi8_conv_path_igemm;
  if (dwcfg != NULL && paths[gemmi8_conv_path_depthwise] != NULL) {
    path = gemmi8_conv_path_depthwise;
  } else if (g.kernel_height == 1 && g.kernel_width == 1 && g.stride_height == 1 &&
             g.stride_width == 1 && g.padding_top == 0 && g.padding_left == 0 &&
             g.padding_bottom == 0 && g.padding_right == 0) {
    path = gemmi8_conv_path_direct;
  }
  if (paths[path] == NULL) return gemmi8_status_unsupported_parameter;
  if (path == gemmi8_conv_path_igemm) {
    const struct gemmi8_qigemm_ukernels* iu = &cfg->igemm[cfg->mr - 1];
    if (iu->out[output] == NULL) {
      return gemmi8_status_unsupported_parameter;
    }
  }
  /* A few channels that the kernels' depth group does not divide (a first layer's 3):
   * each tap padded to the group would waste a quarter of the multiplies and more in
   * per-tap work, so the taps of a kernel row become one, kernel_width x ci bytes
   * long, read from a padded copy of the input (contiguous when there is one group
   * and no horizontal dilation). */
  const int merge = path == gemmi8_conv_path_igemm && g.groups == 1 && g.dilation_width == 1 &&
                    g.kernel_width > 1 && g.group_input_channels < 16 &&
                    g.group_input_channels % cfg->kr != 0;
  size_t kc = g.group_input_channels;
  if (merge) {
    ks = g.kernel_height;
    kc = g.kernel_width * g.group_input_channels; /* < 16 * kernel_width: no overflow */
  }
  const size_t kcp = ks == 1 ? kc : gemmi8_round_up(kc, cfg->kr);
  size_t k, packed_bytes, packed_total;
  if (!gemmi8_mul(ks, kcp, &k) ||
      !gemmi8_qpack_bytes(cfg, g.group_output_channels, k, &packed_bytes) ||
      !gemmi8_mul(packed_bytes, g.groups, &packed_total)) {
    return gemmi8_status_unsupported_parameter;
  }

  gemmi8_convolution* op = calloc(1, sizeof(*op));
  if (op == NULL) return gemmi8_status_out_of_memory;
  op->dwcfg = dwcfg;
  op->path = path;
  op->ops = paths[path];
  op->depthwise = depthwise;
  op->type = type;
  op->output = output;
  op->output_size = output == gemmi8_qoutput_s32 ? sizeof(int32_t) : 1;
  op->cfg = cfg;
  op->g = g;
  op->ks = ks;
  op->kc = kc;
  op->k = k;
  op->merge = merge;
  op->channels_in = channels_in;
  op->channels_out = channels_out;
  op->input_row = channels_in;
  op->output_row = channels_out;
  op->input_size = 1;
  op->packed_bytes = packed_bytes;
  op->left_shift = left_shift;
  op->a_zero_point = a_zero_point;
  const size_t co = g.group_output_channels;
  if (path == gemmi8_conv_path_depthwise) {
    op->zero = gemmi8_indirection_zero(channels_out, (uint8_t) a_zero_point);
    status = gemmi8_status_out_of_memory;
    if (op->zero != NULL &&
        (!requantized || gemmi8_conv_copy_requant(rq, rq->per_channel ? channels_out : 1, &op->rq))) {
      status = gemmi8_conv_dw_create(op, weights, b_zero_point, b_zp_per_channel, bias);
    }
    if (status != gemmi8_status_success) {
      gemmi8_convolution_destroy(op);
      return status;
    }
    *out = op;
    return gemmi8_status_success;
  }
  /* the filter of one group with each tap padded, when the taps need it (co * k <=
   * packed_bytes: it fits), and the group's weight zero points */
  uint8_t* padded = kcp != kc ? malloc(co * k) : NULL;
  int32_t* zp = malloc(co * sizeof(int32_t));
  void* packed = NULL;
  if (posix_memalign(&packed, GEMMI8_PACK_ALIGNMENT, packed_total) != 0) packed = NULL;
  op->packed = packed;
  if (path == gemmi8_conv_path_igemm) op->zero = gemmi8_indirection_zero(kc, (uint8_t) a_zero_point);
  status = gemmi8_status_out_of_memory;
  if (packed != NULL && zp != NULL && (kcp == kc || padded != NULL) &&
      (path != gemmi8_conv_path_igemm || op->zero != NULL) &&
      (!requantized || gemmi8_conv_copy_requant(rq, rq->per_channel ? channels_out : 1, &op->rq))) {
    for (size_t grp = 0; grp < g.groups; grp++) {
      pack_group(op, weights + grp * co * real_k, real_k, b_zero_point, b_zp_per_channel, bias,
                 padded, zp, grp);
    }
    status = prepare_constants(op);
  }
  free(padded);
  free(zp);
  if (status != gemmi8_status_success) {
    gemmi8_convolution_destroy(op);
    return status;
  }
  *out = op;
  return gemmi8_status_success;
}

#define CONV_CREATE(type, w_t, zp_t)                                                          \
  gemmi8_status gemmi8_##type##_convolution_create(const gemmi8_conv_geometry* geometry,     \
                                                   const w_t* weights, zp_t a_zero_point,      \
                                                   const int32_t* bias,                        \
                                                   const gemmi8_requant* rq,                   \
                                                   gemmi8_convolution** op)                    \
  {                                                                                           \
    return create(gemmi8_type_##type, gemmi8_qoutput_fixedpoint, geometry,                    \
                  (const uint8_t*) weights, a_zero_point, NULL, 0, bias, rq, op);             \
  }                                                                                           \
  gemmi8_status gemmi8_##type##_convolution_create_s32(const gemmi8_conv_geometry* geometry, \
                                                       const w_t* weights, zp_t a_zero_point,  \
                                                       const int32_t* bias,                    \
                                                       gemmi8_convolution** op)                \
  {                                                                                           \
    return create(gemmi8_type_##type, gemmi8_qoutput_s32, geometry, (const uint8_t*) weights, \
                  a_zero_point, NULL, 0, bias, NULL, op);                                     \
  }

gemmi8_status gemmi8_qu8_convolution_create(const gemmi8_conv_geometry* geometry,
                                            const uint8_t* weights, uint8_t a_zero_point,
                                            const uint8_t* b_zero_point, int b_zp_per_channel,
                                            const int32_t* bias, const gemmi8_requant* rq,
                                            gemmi8_convolution** op)
{
  return create(gemmi8_type_qu8, gemmi8_qoutput_fixedpoint, geometry, weights, a_zero_point,
                b_zero_point, b_zp_per_channel, bias, rq, op);
}

gemmi8_status gemmi8_qu8_convolution_create_s32(const gemmi8_conv_geometry* geometry,
                                                const uint8_t* weights, uint8_t a_zero_point,
                                                const uint8_t* b_zero_point,
                                                int b_zp_per_channel, const int32_t* bias,
                                                gemmi8_convolution** op)
{
  return create(gemmi8_type_qu8, gemmi8_qoutput_s32, geometry, weights, a_zero_point,
                b_zero_point, b_zp_per_channel, bias, NULL, op);
}

CONV_CREATE(qs8, int8_t, int8_t)
CONV_CREATE(qu8s8, int8_t, uint8_t)

enum gemmi8_conv_path gemmi8_convolution_path(const gemmi8_convolution* op, int* depthwise)
{
  *depthwise = op->depthwise;
  return op->path;
}

/* ---- setup ------------------------------------------------------------------------- */

/* Output size along one side: (input + paddings - dilated kernel) / stride + 1, or 0
 * when the dilated kernel does not fit the padded input (create checked the sums). */
static size_t output_size(size_t input, size_t pad0, size_t pad1, size_t kernel,
                          size_t dilation, size_t stride)
{
  size_t padded;
  if (!gemmi8_add(input, pad0 + pad1, &padded)) return 0;
  const size_t extent = (kernel - 1) * dilation + 1;
  if (extent > padded) return 0;
  return (padded - extent) / stride + 1;
}

gemmi8_status gemmi8_conv_reserve_workspace(const gemmi8_convolution* op,
                                            const struct gemmi8_qgemm_problem* p, void** fresh,
                                            size_t* fresh_bytes)
{
  size_t bytes;
  *fresh = NULL;
  *fresh_bytes = 0;
  if (!gemmi8_qgemm_workspace_bytes(p, &bytes)) return gemmi8_status_invalid_parameter;
  if (bytes == 0 || bytes <= op->workspace_bytes) return gemmi8_status_success;
  if (posix_memalign(fresh, 64, bytes) != 0) {
    *fresh = NULL;
    return gemmi8_status_out_of_memory;
  }
  *fresh_bytes = bytes;
  return gemmi8_status_success;
}

void gemmi8_conv_install_workspace(gemmi8_convolution* op, void* fresh, size_t fresh_bytes)
{
  if (fresh == NULL) return;
  free(op->workspace);
  op->workspace = fresh;
  op->workspace_bytes = fresh_bytes;
}

gemmi8_status gemmi8_convolution_setup(gemmi8_convolution* op, size_t batch,
                                       size_t input_height, size_t input_width,
                                       const void* input, size_t input_pixel_stride,
                                       void* output, size_t output_pixel_stride,
                                       size_t* output_height, size_t* output_width)
{
  if (op == NULL || input == NULL || output == NULL || output_height == NULL ||
      output_width == NULL || batch == 0 || input_height == 0 || input_width == 0) {
    return gemmi8_status_invalid_parameter;
  }
  const gemmi8_conv_geometry* g = &op->g;
  const size_t oh = output_size(input_height, g->padding_top, g->padding_bottom,
                                g->kernel_height, g->dilation_height, g->stride_height);
  const size_t ow = output_size(input_width, g->padding_left, g->padding_right,
                                g->kernel_width, g->dilation_width, g->stride_width);
  if (oh == 0 || ow == 0) return gemmi8_status_invalid_parameter;
  const size_t out_size = op->output_size;
  size_t in_pixels, m, in_extent, out_extent, out_stride;
  if (!gemmi8_mul(batch, input_height, &in_pixels) ||
      !gemmi8_mul(in_pixels, input_width, &in_pixels) ||
      !gemmi8_extent(in_pixels, op->input_row, input_pixel_stride, op->input_size,
                     &in_extent) ||
      !gemmi8_mul(batch, oh, &m) || !gemmi8_mul(m, ow, &m) ||
      !gemmi8_extent(m, op->output_row, output_pixel_stride, out_size, &out_extent)) {
    return gemmi8_status_invalid_parameter;
  }
  out_stride = output_pixel_stride * out_size; /* <= out_extent: it fits */
  /* The output may not overlap the input: the tiles of one pixel would read what the
   * tiles of another wrote. */
  const uintptr_t in0 = (uintptr_t) input, out0 = (uintptr_t) output;
  if (out0 < in0 + in_extent && in0 < out0 + out_extent) return gemmi8_status_invalid_parameter;
  /* outputs (int32, float, words) and inputs (words) at their elements' boundaries */
  if ((uintptr_t) output % out_size != 0 || (uintptr_t) input % op->input_size != 0) {
    return gemmi8_status_invalid_parameter;
  }
  const struct gemmi8_conv_setup s = {
      .batch = batch,
      .input_height = input_height,
      .input_width = input_width,
      .output_height = oh,
      .output_width = ow,
      .m = m,
      .input = input,
      .input_stride = input_pixel_stride * op->input_size,
      .output = output,
      .output_stride = out_stride,
  };
  const gemmi8_status status = op->ops->setup(op, &s);
  if (status != gemmi8_status_success) return status;
  op->s = s;
  op->ready = 1;
  *output_height = oh;
  *output_width = ow;
  return gemmi8_status_success;
}

gemmi8_status gemmi8_convolution_memory(const gemmi8_convolution* op, size_t* indirection_bytes,
                                        size_t* workspace_bytes)
{
  if (op == NULL || indirection_bytes == NULL || workspace_bytes == NULL || !op->ready) {
    return gemmi8_status_invalid_parameter;
  }
  *indirection_bytes = (op->ind.count + op->ind.columns_count) * sizeof(void*);
  *workspace_bytes = op->workspace_bytes + op->ind.copy_bytes;
  return gemmi8_status_success;
}

/* ---- run --------------------------------------------------------------------------- */

gemmi8_status gemmi8_convolution_run(gemmi8_convolution* op, const gemmi8_parallel* parallel)
{
  if (op == NULL || !op->ready || !gemmi8_parallel_valid(parallel)) {
    return gemmi8_status_invalid_parameter;
  }
  return op->ops->run(op, parallel);
}
