/*
 * Convolution (qu8, qs8, qu8s8): create / setup / run / destroy over the quantized
 * GEMM families, with A read through an indirection buffer.
 *
 * The filter of group g is packed as a GEMM weight of N = co, K = ks * kcp: tap t's
 * ci channels at depths [t * kcp, t * kcp + ci), each tap padded to kcp =
 * round_up(ci, KR) (a single tap is not padded). The padding depths hold the weight
 * zero point (0 for the symmetric types), so (B - b_zp) is 0 there and they add
 * nothing, whatever A the kernel reads for them (the igemm kernels read 0; the
 * packed bias' = bias - a_zp * colsum + K * a_zp * b_zp cancels them exactly).
 *
 * Zero-point terms through pointers: kernel sets whose kernels add coef * rowsum(a)
 * (AVX-512 VNNI qu8 and qs8, NEON qu8) get the row sums from a pass over the
 * indirection buffer (conv_row_sum_task): for each output pixel and group, the sum
 * of the ci bytes of every tap, padding taps included (they read the zero buffer,
 * a_zero_point in every byte, as the kernel does). It reads M x K bytes once per
 * group, against the M x N x K multiply-adds of the tiles. The kernel sets that
 * need no row sums (generic and AVX2 compute exactly without them or sum inside the
 * kernel; qu8s8 on AVX-512 has coef 0) skip it.
 *
 * The row tiles read the indirection buffer as [M / MR tiles][ks taps][MR rows]
 * pointers, M rounded up to MR with the last pixel repeated (read, never stored).
 * Every family table has igemm kernels for its main tile (a table without them
 * makes create return unsupported_parameter); a tile of fewer rows runs the main
 * tile's kernel, its rows past M reading the repeated last pixel.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "parallel.h"
#include "qgemm.h"

struct gemmi8_convolution {
  enum gemmi8_type type;
  const struct gemmi8_qgemm_config* cfg;
  gemmi8_conv_geometry g;
  size_t ks;       /* taps: kernel_height * kernel_width */
  size_t kc;       /* channels read per tap: group_input_channels */
  size_t k;        /* packed depth: ks * round_up(kc, KR) (kc when ks is 1) */
  size_t channels_in, channels_out;
  int direct;      /* 1x1, stride 1, no padding: the GEMM on the input */
  int row_sums;    /* the kernels need row sums from the driver */
  uint8_t* packed; /* groups packed weights, packed_bytes apart */
  size_t packed_bytes;
  gemmi8_requant rq; /* its arrays owned (per_channel: channels_out values) */
  int left_shift;
  int32_t a_zero_point;
  uint8_t* zero;   /* kc bytes of a_zero_point: the padding taps' pixel */
  /* Merged rows of taps (small channel counts, see build_indirection): the taps of a
   * kernel row are one tap of kernel_width x ci bytes, read from a copy of the input
   * with its padding (a_zero_point) around it, copy_h x copy_w pixels an image. */
  int merge;
  uint8_t* copy;
  size_t copy_h, copy_w, copy_bytes;
  /* setup */
  int ready;
  size_t batch, input_height, input_width, output_height, output_width, m;
  const uint8_t* input;
  size_t input_stride;
  uint8_t* output;
  size_t output_stride;
  const void** indirection; /* round_up(m, mr) * ks pointers */
  size_t indirection_count;
  int32_t* sums;            /* groups * round_up(m, mr) row sums, or NULL */
  size_t sums_count;
};

/* ---- create ------------------------------------------------------------------------ */

static gemmi8_status check_geometry(const gemmi8_conv_geometry* g)
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

static gemmi8_status pack_group(const struct gemmi8_convolution* op, const uint8_t* b,
                                size_t b_stride, const uint8_t* b_zero_point, int per_channel,
                                const int32_t* bias, void* packed)
{
  const size_t co = op->g.group_output_channels;
  switch (op->type) {
    case gemmi8_type_qu8:
      return gemmi8_qu8_pack(co, op->k, b, b_stride, GEMMI8_B_NK, (uint8_t) op->a_zero_point,
                             b_zero_point, per_channel, bias, packed, op->packed_bytes);
    case gemmi8_type_qs8:
      return gemmi8_qs8_pack(co, op->k, (const int8_t*) b, b_stride, GEMMI8_B_NK,
                             (int8_t) op->a_zero_point, bias, packed, op->packed_bytes);
    case gemmi8_type_qu8s8:
      return gemmi8_qu8s8_pack(co, op->k, (const int8_t*) b, b_stride, GEMMI8_B_NK,
                               (uint8_t) op->a_zero_point, bias, packed, op->packed_bytes);
    default:
      return gemmi8_status_invalid_parameter;
  }
}

static gemmi8_status pack_size(enum gemmi8_type type, size_t n, size_t k, size_t* size)
{
  return type == gemmi8_type_qu8   ? gemmi8_qu8_pack_size(n, k, size)
         : type == gemmi8_type_qs8 ? gemmi8_qs8_pack_size(n, k, size)
                                   : gemmi8_qu8s8_pack_size(n, k, size);
}

/* Copies a requant's arrays (count values) into owned memory. */
static int copy_requant(const gemmi8_requant* rq, size_t count, gemmi8_requant* out)
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
  free((void*) op->rq.multiplier);
  free((void*) op->rq.shift);
  free((void*) op->rq.scale);
  free(op->zero);
  free(op->copy);
  free(op->indirection);
  free(op->sums);
  free(op);
}

static gemmi8_status create(enum gemmi8_type type, const gemmi8_conv_geometry* geometry,
                            const uint8_t* weights, int32_t a_zero_point,
                            const uint8_t* b_zero_point, int b_zp_per_channel,
                            const int32_t* bias, const gemmi8_requant* rq,
                            gemmi8_convolution** out)
{
  if (geometry == NULL || weights == NULL || rq == NULL || out == NULL) {
    return gemmi8_status_invalid_parameter;
  }
  if (type == gemmi8_type_qu8 &&
      (b_zero_point == NULL || (b_zp_per_channel != 0 && b_zp_per_channel != 1))) {
    return gemmi8_status_invalid_parameter;
  }
  gemmi8_status status = check_geometry(geometry);
  if (status != gemmi8_status_success) return status;
  const gemmi8_conv_geometry g = *geometry;
  const struct gemmi8_qgemm_config* cfg = gemmi8_qconfig((uint32_t) type);
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  /* sizes: channels, taps, the filter, the packed depth */
  size_t channels_in, channels_out, ks, filter, real_k, kcp, k;
  if (!gemmi8_mul(g.groups, g.group_input_channels, &channels_in) ||
      !gemmi8_mul(g.groups, g.group_output_channels, &channels_out) ||
      !gemmi8_mul(g.kernel_height, g.kernel_width, &ks) ||
      !gemmi8_mul(ks, g.group_input_channels, &real_k) ||
      !gemmi8_mul(channels_out, real_k, &filter) || filter > (size_t) PTRDIFF_MAX) {
    return gemmi8_status_invalid_parameter;
  }
  const int32_t lo = type == gemmi8_type_qs8 ? -128 : 0, hi = lo + 255;
  int left_shift = 0;
  status = gemmi8_check_requant(rq, channels_out, lo, hi, &left_shift);
  if (status != gemmi8_status_success) return status;
  const size_t max_k = type == gemmi8_type_qu8 ? GEMMI8_QU8_MAX_K : GEMMI8_QS8_MAX_K;
  if (real_k > max_k) return gemmi8_status_unsupported_parameter;
  if (cfg->igemm[cfg->mr - 1].out[gemmi8_qoutput_fp32] == NULL) return gemmi8_status_unsupported_parameter;
  /* A few channels that the kernels' depth group does not divide (a first layer's 3):
   * each tap padded to the group would waste a quarter of the multiplies and more in
   * per-tap work, so the taps of a kernel row become one, kernel_width x ci bytes
   * long, read from a padded copy of the input (contiguous when there is one group
   * and no horizontal dilation). */
  const int merge = g.groups == 1 && g.dilation_width == 1 && g.kernel_width > 1 &&
                    g.group_input_channels < 16 && g.group_input_channels % cfg->kr != 0;
  size_t kc = g.group_input_channels;
  if (merge) {
    ks = g.kernel_height;
    kc = g.kernel_width * g.group_input_channels; /* < 16 * kernel_width: no overflow */
  }
  kcp = ks == 1 ? kc : gemmi8_round_up(kc, cfg->kr);
  if (!gemmi8_mul(ks, kcp, &k) || k > max_k) return gemmi8_status_unsupported_parameter;
  size_t packed_bytes, packed_total;
  status = pack_size(type, g.group_output_channels, k, &packed_bytes);
  if (status != gemmi8_status_success) return status;
  if (!gemmi8_mul(packed_bytes, g.groups, &packed_total)) {
    return gemmi8_status_unsupported_parameter;
  }

  gemmi8_convolution* op = calloc(1, sizeof(*op));
  if (op == NULL) return gemmi8_status_out_of_memory;
  op->type = type;
  op->cfg = cfg;
  op->g = g;
  op->ks = ks;
  op->kc = kc;
  op->merge = merge;
  op->k = k;
  op->channels_in = channels_in;
  op->channels_out = channels_out;
  op->direct = g.kernel_height == 1 && g.kernel_width == 1 && g.stride_height == 1 &&
               g.stride_width == 1 && g.padding_top == 0 && g.padding_left == 0 &&
               g.padding_bottom == 0 && g.padding_right == 0;
  op->packed_bytes = packed_bytes;
  op->left_shift = left_shift;
  op->a_zero_point = a_zero_point;
  void* packed = NULL;
  /* the filter of one group with each tap padded, when the taps need it */
  uint8_t* padded = NULL;
  const size_t co = g.group_output_channels;
  if (kcp != op->kc) padded = malloc(co * k); /* co * k <= packed_bytes: it fits */
  op->zero = malloc(gemmi8_round_up(op->kc, 64));
  if (posix_memalign(&packed, GEMMI8_PACK_ALIGNMENT, packed_total) != 0) packed = NULL;
  op->packed = packed;
  if (packed == NULL || op->zero == NULL || (kcp != op->kc && padded == NULL) ||
      !copy_requant(rq, rq->per_channel ? channels_out : 1, &op->rq)) {
    free(padded);
    gemmi8_convolution_destroy(op);
    return gemmi8_status_out_of_memory;
  }
  memset(op->zero, (uint8_t) a_zero_point, gemmi8_round_up(op->kc, 64));
  for (size_t grp = 0; grp < g.groups && status == gemmi8_status_success; grp++) {
    const uint8_t* b = weights + grp * co * real_k;
    size_t b_stride = real_k;
    if (padded != NULL) {
      for (size_t o = 0; o < co; o++) {
        /* (B - b_zp) = 0 in the padding: b_zp for qu8, 0 for the symmetric types */
        const uint8_t fill =
            type == gemmi8_type_qu8 ? b_zero_point[b_zp_per_channel ? grp * co + o : 0] : 0;
        for (size_t t = 0; t < ks; t++) {
          uint8_t* dst = padded + o * k + t * kcp;
          memcpy(dst, b + o * real_k + t * op->kc, op->kc);
          memset(dst + op->kc, fill, kcp - op->kc);
        }
      }
      b = padded;
      b_stride = k;
    }
    const uint8_t* zp = type == gemmi8_type_qu8 && b_zp_per_channel ? b_zero_point + grp * co
                                                                   : b_zero_point;
    status = pack_group(op, b, b_stride, zp, b_zp_per_channel, bias ? bias + grp * co : NULL,
                        op->packed + grp * packed_bytes);
    const struct gemmi8_packed_header* h =
        (const struct gemmi8_packed_header*) (op->packed + grp * packed_bytes);
    if (cfg->row_sum != NULL && !(h->flags & GEMMI8_PACKED_NO_ROW_SUM)) op->row_sums = 1;
  }
  free(padded);
  if (status != gemmi8_status_success) {
    gemmi8_convolution_destroy(op);
    return status;
  }
  *out = op;
  return gemmi8_status_success;
}

gemmi8_status gemmi8_qu8_convolution_create(const gemmi8_conv_geometry* geometry,
                                            const uint8_t* weights, uint8_t a_zero_point,
                                            const uint8_t* b_zero_point, int b_zp_per_channel,
                                            const int32_t* bias, const gemmi8_requant* rq,
                                            gemmi8_convolution** op)
{
  return create(gemmi8_type_qu8, geometry, weights, a_zero_point, b_zero_point,
                b_zp_per_channel, bias, rq, op);
}

gemmi8_status gemmi8_qs8_convolution_create(const gemmi8_conv_geometry* geometry,
                                            const int8_t* weights, int8_t a_zero_point,
                                            const int32_t* bias, const gemmi8_requant* rq,
                                            gemmi8_convolution** op)
{
  return create(gemmi8_type_qs8, geometry, (const uint8_t*) weights, a_zero_point, NULL, 0,
                bias, rq, op);
}

gemmi8_status gemmi8_qu8s8_convolution_create(const gemmi8_conv_geometry* geometry,
                                              const int8_t* weights, uint8_t a_zero_point,
                                              const int32_t* bias, const gemmi8_requant* rq,
                                              gemmi8_convolution** op)
{
  return create(gemmi8_type_qu8s8, geometry, (const uint8_t*) weights, a_zero_point, NULL, 0,
                bias, rq, op);
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

/* The pointer of output pixel p, tap (y, x): an input pixel, or the zero buffer;
 * with merged rows, of tap y: the copy at the row's first pixel. */
static void build_indirection(const gemmi8_convolution* op, const void** ind, size_t mr)
{
  const gemmi8_conv_geometry* g = &op->g;
  const size_t m = op->m, ks = op->ks, kw = g->kernel_width;
  const size_t pixels = op->output_height * op->output_width;
  const size_t tiles = gemmi8_divide_round_up(m, mr);
  for (size_t tile = 0; tile < tiles; tile++) {
    for (size_t i = 0; i < mr; i++) {
      const size_t p = gemmi8_min(tile * mr + i, m - 1);
      const size_t b = p / pixels, oy = p % pixels / op->output_width,
                   ox = p % op->output_width;
      for (size_t t = 0; t < ks; t++) {
        if (op->merge) {
          /* tap t is kernel row t, read from the padded copy at its left end */
          const size_t py = oy * g->stride_height + t * g->dilation_height;
          const size_t px = ox * g->stride_width;
          ind[(tile * ks + t) * mr + i] =
              op->copy + ((b * op->copy_h + py) * op->copy_w + px) * g->group_input_channels;
          continue;
        }
        /* padded coordinates, then the input's */
        const size_t py = oy * g->stride_height + t / kw * g->dilation_height;
        const size_t px = ox * g->stride_width + t % kw * g->dilation_width;
        const void* ptr = op->zero;
        if (py >= g->padding_top && py - g->padding_top < op->input_height &&
            px >= g->padding_left && px - g->padding_left < op->input_width) {
          const size_t pixel =
              (b * op->input_height + (py - g->padding_top)) * op->input_width +
              (px - g->padding_left);
          ptr = op->input + pixel * op->input_stride;
        }
        ind[(tile * ks + t) * mr + i] = ptr;
      }
    }
  }
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
  size_t in_pixels, m, extent;
  if (!gemmi8_mul(batch, input_height, &in_pixels) ||
      !gemmi8_mul(in_pixels, input_width, &in_pixels) ||
      !gemmi8_extent(in_pixels, op->channels_in, input_pixel_stride, 1, &extent) ||
      !gemmi8_mul(batch, oh, &m) || !gemmi8_mul(m, ow, &m) ||
      !gemmi8_extent(m, op->channels_out, output_pixel_stride, 1, &extent)) {
    return gemmi8_status_invalid_parameter;
  }
  const size_t mr = op->cfg->mr;
  const void** ind = NULL;
  int32_t* sums = NULL;
  uint8_t* copy = NULL;
  size_t copy_h = 0, copy_w = 0;
  size_t ind_count = 0, sums_count = 0;
  if (!op->direct) {
    const size_t mpad = gemmi8_round_up(m, mr);
    size_t bytes;
    if (!gemmi8_mul(mpad, op->ks, &ind_count) ||
        !gemmi8_mul(ind_count, sizeof(void*), &bytes)) {
      return gemmi8_status_invalid_parameter;
    }
    const int same = op->ready && op->indirection != NULL && op->batch == batch &&
                     op->input_height == input_height && op->input_width == input_width &&
                     op->input == input && op->input_stride == input_pixel_stride;
    if (!same) {
      ind = malloc(bytes);
      if (ind == NULL) return gemmi8_status_out_of_memory;
      if (op->merge) {
        /* the padded copy: batch x copy_h x copy_w pixels of ci bytes */
        size_t copy_bytes;
        if (!gemmi8_add(input_height, g->padding_top + g->padding_bottom, &copy_h) ||
            !gemmi8_add(input_width, g->padding_left + g->padding_right, &copy_w) ||
            !gemmi8_mul(batch, copy_h, &copy_bytes) || !gemmi8_mul(copy_bytes, copy_w, &copy_bytes) ||
            !gemmi8_mul(copy_bytes, g->group_input_channels, &copy_bytes)) {
          free(ind);
          return gemmi8_status_invalid_parameter;
        }
        copy = malloc(copy_bytes);
        if (copy == NULL) {
          free(ind);
          return gemmi8_status_out_of_memory;
        }
        /* the padding keeps a_zero_point; run copies the image inside it */
        memset(copy, (uint8_t) op->a_zero_point, copy_bytes);
      }
    }
    if (op->row_sums && (!gemmi8_mul(mpad, op->g.groups, &sums_count) ||
                         !gemmi8_mul(sums_count, sizeof(int32_t), &bytes))) {
      free(ind);
      free(copy);
      return gemmi8_status_invalid_parameter;
    }
    if (op->row_sums && (op->sums == NULL || op->sums_count < sums_count)) {
      sums = malloc(bytes);
      if (sums == NULL) {
        free(ind);
        free(copy);
        return gemmi8_status_out_of_memory;
      }
    }
  }
  /* nothing can fail from here on */
  op->batch = batch;
  op->input_height = input_height;
  op->input_width = input_width;
  op->output_height = oh;
  op->output_width = ow;
  op->m = m;
  op->input = input;
  op->input_stride = input_pixel_stride;
  op->output = output;
  op->output_stride = output_pixel_stride;
  if (ind != NULL) {
    if (op->merge) {
      free(op->copy);
      op->copy = copy;
      op->copy_h = copy_h;
      op->copy_w = copy_w;
      op->copy_bytes = copy_h * copy_w * batch * op->g.group_input_channels;
    }
    free(op->indirection);
    op->indirection = ind;
    op->indirection_count = ind_count;
    build_indirection(op, ind, mr);
  }
  if (sums != NULL) {
    free(op->sums);
    op->sums = sums;
    op->sums_count = sums_count;
  }
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
  *indirection_bytes = op->direct ? 0 : op->indirection_count * sizeof(void*);
  *workspace_bytes = (op->sums != NULL ? op->sums_count * sizeof(int32_t) : 0) +
                     (op->merge ? op->copy_bytes : 0);
  return gemmi8_status_success;
}

/* ---- run --------------------------------------------------------------------------- */

struct conv_context {
  const gemmi8_convolution* op;
  const struct gemmi8_qgemm_config* cfg;
  gemmi8_qigemm_ukernel_fn igemm; /* the main tile's */
  size_t mr, mpad;
  struct gemmi8_qparams params;
  gemmi8_qprepare_fn prepare;
  size_t nblocks, last_start, block_bytes;
  size_t mc, nb, mchunks, bchunks; /* tiles per group */
  size_t rs_rows, rs_chunks;       /* row-sum tasks per group */
};

/* Row sums of pixels [m0, m0 + rows) (m0 a multiple of mr) for group g, through the
 * indirection buffer: the kernel set's function per row tile, or a portable loop. */
static void conv_row_sum_task(const struct conv_context* ctx, size_t g, size_t m0, size_t rows)
{
  const gemmi8_convolution* op = ctx->op;
  const size_t mr = ctx->mr, ks = op->ks, kc = op->kc, offset = g * kc;
  int32_t* sums = op->sums + g * ctx->mpad;
  const struct gemmi8_packed_header* h =
      (const struct gemmi8_packed_header*) (op->packed + g * op->packed_bytes);
  if (h->flags & GEMMI8_PACKED_NO_ROW_SUM) return; /* this group's tiles read none */
  if (ctx->cfg->irow_sum != NULL) {
    for (size_t p = m0; p < m0 + rows; p += mr) {
      ctx->cfg->irow_sum(mr, gemmi8_min(mr, m0 + rows - p), kc, ks,
                         op->indirection + p / mr * ks * mr, offset, op->zero, sums + p);
    }
    return;
  }
  const int is_signed = op->type == gemmi8_type_qs8;
  for (size_t p = m0; p < m0 + rows; p++) {
    const void* const* ptrs = op->indirection + p / mr * ks * mr + p % mr;
    uint32_t sum = 0;
    for (size_t t = 0; t < ks; t++) {
      const uint8_t* a = ptrs[t * mr];
      if (a != op->zero) a += offset;
      if (is_signed) {
        for (size_t c = 0; c < kc; c++) sum += (uint32_t) (int32_t) (int8_t) a[c];
      } else {
        for (size_t c = 0; c < kc; c++) sum += a[c];
      }
    }
    sums[p] = (int32_t) sum;
  }
}

/* Rows [m0, m0 + rows) (m0 a multiple of mr) x blocks [b0, b0 + blocks) of group g. */
static void conv_tile_task(const struct conv_context* ctx, size_t g, size_t m0, size_t b0,
                           size_t rows, size_t blocks)
{
  const gemmi8_convolution* op = ctx->op;
  const struct gemmi8_qgemm_config* cfg = ctx->cfg;
  const size_t nblocks = ctx->nblocks, nr_main = cfg->nr, mr_main = ctx->mr, ks = op->ks;
  const size_t co = op->g.group_output_channels, m1 = m0 + rows, b1 = b0 + blocks;
  const uint8_t* packed = op->packed + g * op->packed_bytes + GEMMI8_PACKED_HEADER_BYTES;
  uint8_t* c = op->output + g * co;
  const size_t c_stride = op->output_stride;
  const struct gemmi8_packed_header* h =
      (const struct gemmi8_packed_header*) (op->packed + g * op->packed_bytes);
  /* this group's kernels add coef * rowsum: the sums of its rows */
  const int need_sums = op->row_sums && !(h->flags & GEMMI8_PACKED_NO_ROW_SUM);
  const int32_t* sums = op->sums != NULL ? op->sums + g * ctx->mpad : NULL;
  struct gemmi8_qparams base = ctx->params;
  const size_t channel0 = g * co * base.channel_stride;
  if (base.multiplier) base.multiplier += channel0;
  if (base.shift) base.shift += channel0;
  if (base.scale) base.scale += channel0;
  base.row_sum_uniform = (cfg->flags & GEMMI8_QLAYOUT_UNIFORM_COEF) && (h->flags & GEMMI8_PACKED_UNIFORM_COEF);
  base.row_sum_coef = h->coef;
  _Alignas(64) uint8_t prepared[GEMMI8_QPREPARED_BYTES];
  for (size_t b = b0; b < b1; b++) {
    const size_t n0 = b + 1 < nblocks ? b * nr_main : ctx->last_start;
    const size_t n1 = b + 2 < nblocks ? n0 + nr_main : (b + 1 < nblocks ? ctx->last_start : co);
    const size_t nr = n1 - n0;
    struct gemmi8_qparams p = base;
    if (p.multiplier) p.multiplier += n0 * p.channel_stride;
    if (p.shift) p.shift += n0 * p.channel_stride;
    if (p.scale) p.scale += n0 * p.channel_stride;
    if (ctx->prepare != NULL && rows > mr_main) {
      ctx->prepare(&p, nr, prepared);
      p.prepared = prepared;
    }
    const uint8_t* w = packed + b * ctx->block_bytes;
    for (size_t i = m0; i < m1; i += mr_main) {
      const size_t mr = gemmi8_min(mr_main, m1 - i);
      p.row_sum = need_sums ? sums + i : NULL;
      ctx->igemm(mr, nr, op->kc, ks, op->indirection + i / mr_main * ks * mr_main, w,
                 c + i * c_stride + n0, c_stride, g * op->kc, op->zero, &p);
    }
  }
}

static void conv_row_sum_job(void* context, size_t index)
{
  const struct conv_context* ctx = context;
  const size_t g = index / ctx->rs_chunks, m0 = index % ctx->rs_chunks * ctx->rs_rows;
  conv_row_sum_task(ctx, g, m0, gemmi8_min(ctx->rs_rows, ctx->op->m - m0));
}

static void conv_tile_job(void* context, size_t index)
{
  const struct conv_context* ctx = context;
  const size_t per_group = ctx->mchunks * ctx->bchunks;
  const size_t g = index / per_group, t = index % per_group;
  size_t m0, rows;
  gemmi8_split_rows(ctx->op->m, ctx->mr, ctx->mchunks, t / ctx->bchunks, &m0, &rows);
  const size_t b0 = t % ctx->bchunks * ctx->nb;
  conv_tile_task(ctx, g, m0, b0, rows,
                 gemmi8_min(ctx->nb, ctx->nblocks - b0));
}

/* Merged rows: the image into the inside of the padded copy (one group: its ci
 * channels are the pixel's first), a row at a time when its pixels are dense. */
static void copy_input(const gemmi8_convolution* op)
{
  const gemmi8_conv_geometry* g = &op->g;
  const size_t ci = g->group_input_channels, iw = op->input_width;
  for (size_t b = 0; b < op->batch; b++) {
    for (size_t y = 0; y < op->input_height; y++) {
      uint8_t* dst =
          op->copy + ((b * op->copy_h + g->padding_top + y) * op->copy_w + g->padding_left) * ci;
      const uint8_t* src = op->input + (b * op->input_height + y) * iw * op->input_stride;
      if (op->input_stride == ci) {
        memcpy(dst, src, iw * ci);
      } else {
        for (size_t x = 0; x < iw; x++) memcpy(dst + x * ci, src + x * op->input_stride, ci);
      }
    }
  }
}

/* 1x1, stride 1, no padding: each group is a GEMM on the input in place. */
static gemmi8_status run_direct(const gemmi8_convolution* op, const gemmi8_parallel* parallel)
{
  const size_t co = op->g.group_output_channels, kc = op->kc;
  for (size_t g = 0; g < op->g.groups; g++) {
    gemmi8_requant rq = op->rq;
    const size_t channel0 = rq.per_channel ? g * co : 0;
    if (rq.multiplier) rq.multiplier += channel0;
    if (rq.shift) rq.shift += channel0;
    if (rq.scale) rq.scale += channel0;
    const void* packed = op->packed + g * op->packed_bytes;
    const uint8_t* a = op->input + g * kc;
    uint8_t* c = op->output + g * co;
    gemmi8_status status;
    switch (op->type) {
      case gemmi8_type_qu8:
        status = gemmi8_qu8_gemm_ex(op->m, co, kc, a, op->input_stride, packed, &rq, c,
                                    op->output_stride, parallel);
        break;
      case gemmi8_type_qs8:
        status = gemmi8_qs8_gemm_ex(op->m, co, kc, (const int8_t*) a, op->input_stride,
                                    packed, &rq, (int8_t*) c, op->output_stride, parallel);
        break;
      default:
        status = gemmi8_qu8s8_gemm_ex(op->m, co, kc, a, op->input_stride, packed, &rq, c,
                                      op->output_stride, parallel);
        break;
    }
    if (status != gemmi8_status_success) return status;
  }
  return gemmi8_status_success;
}

gemmi8_status gemmi8_convolution_run(gemmi8_convolution* op, const gemmi8_parallel* parallel)
{
  if (op == NULL || !op->ready || !gemmi8_parallel_valid(parallel)) {
    return gemmi8_status_invalid_parameter;
  }
  if (op->direct) return run_direct(op, parallel);
  if (op->merge) copy_input(op);
  const struct gemmi8_qgemm_config* cfg = op->cfg;
  const size_t co = op->g.group_output_channels, groups = op->g.groups, m = op->m;
  struct conv_context ctx = {
      .op = op,
      .cfg = cfg,
      .mr = cfg->mr,
      .mpad = gemmi8_round_up(m, cfg->mr),
      .block_bytes = gemmi8_qblock_bytes(cfg, op->k),
  };
  const int fixedpoint = op->rq.mode == gemmi8_requant_fixedpoint;
  const struct gemmi8_qigemm_ukernels* iu = &cfg->igemm[cfg->mr - 1];
  ctx.igemm = iu->out[fixedpoint ? gemmi8_qoutput_fixedpoint : gemmi8_qoutput_fp32];
  ctx.params.channel_stride = op->rq.per_channel ? 1 : 0;
  if (fixedpoint) {
    ctx.params.multiplier = op->rq.multiplier;
    ctx.params.shift = op->rq.shift;
    ctx.params.left_shift = op->left_shift;
    ctx.prepare = cfg->prepare_fixedpoint;
  } else {
    ctx.params.scale = op->rq.scale;
  }
  ctx.params.zero_point = op->rq.zero_point;
  ctx.params.min = op->rq.min;
  ctx.params.max = op->rq.max;
  ctx.nblocks = gemmi8_divide_round_up(co, cfg->nr);
  ctx.last_start = gemmi8_qblock_start(cfg, co, ctx.nblocks - 1);
  size_t mc = gemmi8_min(GEMMI8_QGEMM_MC_MAX, GEMMI8_QGEMM_MC_BYTES / op->k);
  mc = mc <= cfg->mr ? cfg->mr : mc - mc % cfg->mr;
  ctx.mc = gemmi8_min(mc, m);
  ctx.nb = ctx.nblocks;
  ctx.mchunks = gemmi8_divide_round_up(m, ctx.mc);
  ctx.bchunks = 1;
  ctx.rs_rows = ctx.mc;
  double ops = 2.0 * (double) m * (double) op->channels_out * (double) op->ks * (double) op->kc;
  const size_t threads = gemmi8_parallel_threads(parallel, ops);
  if (threads > 1) {
    struct gemmi8_split split;
    gemmi8_plan_split(m, ctx.nblocks, cfg->mr, mc, 1, threads, &split);
    ctx.mc = split.mc;
    ctx.nb = split.nb;
    ctx.mchunks = split.mchunks;
    ctx.bchunks = split.bchunks;
    ctx.rs_rows = gemmi8_round_up(gemmi8_divide_round_up(m, 2 * threads), cfg->mr);
  }
  ctx.rs_chunks = gemmi8_divide_round_up(m, ctx.rs_rows);
  const size_t tasks = groups * ctx.mchunks * ctx.bchunks;
  if (threads > 1) {
    if (op->row_sums) {
      parallel->parallel_for(parallel->context, conv_row_sum_job, &ctx,
                             groups * ctx.rs_chunks);
    }
    parallel->parallel_for(parallel->context, conv_tile_job, &ctx, tasks);
  } else {
    for (size_t g = 0; g < groups; g++) {
      for (size_t m0 = 0; m0 < m; m0 += ctx.mc) {
        const size_t rows = gemmi8_min(ctx.mc, m - m0);
        if (op->row_sums) conv_row_sum_task(&ctx, g, m0, rows);
        conv_tile_task(&ctx, g, m0, 0, rows, ctx.nblocks);
      }
    }
  }
  return gemmi8_status_success;
}
