/*
 * Binary convolution: gemmi8_bin_convolution_create and the convolution operator's
 * `binary` path (conv.h), on the binary kernel set's igemm kernels.
 *
 * Create packs each group's filter as binary GEMM weights of co columns and a depth of
 * ks taps, each tap GEMMI8_BIN_WORDS(ci) words padded to the set's KR (the bits past ci
 * and the padding words 0), and turns the output into the kernels' form: the float
 * arrays for f32; for the bit outputs an integer test per channel, (acc XOR flip) <
 * threshold, which for the float sign test is found at create by a search over the
 * accumulators the layer can produce (the float expression is monotone in acc).
 *
 * Setup builds the indirection buffer (the padding taps at a zero buffer: +1 in every
 * channel) and, for zero padding, the corrections: the output pixels of an image fall
 * into few patterns of padding taps (a prefix and a suffix of the kernel rows, the
 * same of its columns), and each pattern has a vector of the padding taps' weight sums
 * per output channel, which the kernels subtract from the accumulators of the pixels
 * that have it.
 *
 * Run copies the input first when ci is not a multiple of 64: every group's channels
 * then start a word and the bits past them are 0, as the kernels read them. Then it
 * runs tile tasks: rows of output pixels
 * by blocks of output channels of every group. The qs8 output runs the s32 kernel into
 * a tile on the stack and requantizes it with the scalar definitions (requant.h).
 */
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "parallel.h"
#include "requant.h"

struct gemmi8_bconv {
  const struct gemmi8_bgemm_config* cfg;
  gemmi8_bin_output_kind kind;
  enum gemmi8_boutput kout; /* the kernels' output */
  int zero_padding;
  size_t kcw;         /* words of a tap: GEMMI8_BIN_WORDS(ci) */
  size_t blocks;      /* packed blocks a group */
  size_t block_bytes;
  uint8_t* packed;    /* groups x blocks x block_bytes */
  float* scale;       /* f32: channels_out each, or NULL (1.0f, 0.0f) */
  float* bias;
  float out_min, out_max;
  int add;            /* f32_add: the output's values added */
  int32_t* threshold; /* bits: channels_out thresholds, then channels_out flips */
  int32_t* bias_s32;  /* qs8: channels_out, or NULL */
  int32_t* tap_sums;  /* zero padding: per output channel, ks sums of its taps' weights */
  uint64_t* zero;     /* kcw words of 0: a padding tap of +1 */
  /* setup */
  int regroup;        /* run copies the input with each group at a word */
  uint64_t* copy;
  size_t copy_words;
  int32_t* corr;      /* zero padding: the patterns' vectors, channels_out each */
  const int32_t** corr_rows; /* per output pixel of an image: its vector or NULL */
  size_t image_pixels;
  size_t corr_bytes; /* both */
};

/* Rows per task: a chunk of the indirection's rows whose taps stay in L2. */
#define BCONV_MC 256

void gemmi8_bconv_free(struct gemmi8_bconv* b)
{
  if (b == NULL) return;
  free(b->packed);
  free(b->scale);
  free(b->bias);
  free(b->threshold);
  free(b->bias_s32);
  free(b->tap_sums);
  free(b->zero);
  free(b->copy);
  free(b->corr);
  free((void*) b->corr_rows);
  free(b);
}

/* ---- create ------------------------------------------------------------------------ */

/* (float) acc * m + b < 0, as the kernels compute it (two roundings). */
static int float_negative(int32_t acc, float m, float b)
{
  const volatile float product = (float) acc * m;
  const volatile float sum = product + b;
  return sum < 0.0f;
}

/* The integer form of a channel's bit: (acc ^ *flip) < *thr for every acc in [-k, k].
 * negative(acc) is monotone there (a down-set, an up-set, all or nothing). */
static void find_threshold(int64_t k, float m, float b, int32_t* thr, int32_t* flip)
{
  const int lo = float_negative((int32_t) -k, m, b), hi = float_negative((int32_t) k, m, b);
  if (lo == hi) {
    /* all or nothing: acc < INT32_MIN never holds; ~acc < INT32_MAX always (acc >= -k) */
    *flip = lo ? -1 : 0;
    *thr = lo ? INT32_MAX : INT32_MIN;
    return;
  }
  /* the first acc whose test differs from acc = -k's */
  int64_t a = -k, z = k; /* test(a) == lo, test(z) != lo */
  while (z - a > 1) {
    const int64_t mid = a + (z - a) / 2;
    if (float_negative((int32_t) mid, m, b) == lo) {
      a = mid;
    } else {
      z = mid;
    }
  }
  if (lo) {
    *flip = 0; /* set below z */
    *thr = (int32_t) z;
  } else {
    *flip = -1; /* set from z up: acc > z - 1, ~acc < ~(z - 1) */
    *thr = ~(int32_t) (z - 1);
  }
}

static gemmi8_status check_output(const gemmi8_bin_conv_output* out, size_t channels)
{
  switch (out->kind) {
    case gemmi8_bin_output_s32:
      return gemmi8_status_success;
    case gemmi8_bin_output_f32:
    case gemmi8_bin_output_f32_add:
      /* NaN fails both comparisons */
      if (!(out->output_min <= out->output_max)) return gemmi8_status_invalid_parameter;
      return gemmi8_status_success;
    case gemmi8_bin_output_bits:
      return gemmi8_status_success;
    case gemmi8_bin_output_threshold:
      return out->threshold != NULL ? gemmi8_status_success : gemmi8_status_invalid_parameter;
    case gemmi8_bin_output_qs8: {
      if (out->rq == NULL) return gemmi8_status_invalid_parameter;
      int left_shift;
      return gemmi8_check_requant(out->rq, channels, -128, 127, &left_shift);
    }
  }
  return gemmi8_status_invalid_parameter;
}

static int copy_floats(const float* src, size_t n, float** dst)
{
  *dst = NULL;
  if (src == NULL) return 1;
  *dst = malloc(n * sizeof(float));
  if (*dst == NULL) return 0;
  memcpy(*dst, src, n * sizeof(float));
  return 1;
}

/* The output arrays in the kernels' form; 0 when out of memory. */
static int make_output(struct gemmi8_bconv* b, const gemmi8_bin_conv_output* out,
                       size_t channels, int64_t k)
{
  switch (out->kind) {
    case gemmi8_bin_output_s32:
      b->kout = gemmi8_boutput_s32;
      return 1;
    case gemmi8_bin_output_f32:
    case gemmi8_bin_output_f32_add:
      b->kout = gemmi8_boutput_f32;
      b->add = out->kind == gemmi8_bin_output_f32_add;
      b->out_min = out->output_min;
      b->out_max = out->output_max;
      return copy_floats(out->multiplier, channels, &b->scale) &&
             copy_floats(out->bias, channels, &b->bias);
    case gemmi8_bin_output_bits:
    case gemmi8_bin_output_threshold:
      b->kout = gemmi8_boutput_bits;
      b->threshold = malloc(2 * channels * sizeof(int32_t));
      if (b->threshold == NULL) return 0;
      for (size_t c = 0; c < channels; c++) {
        int32_t* thr = &b->threshold[c];
        int32_t* flip = &b->threshold[channels + c];
        if (out->kind == gemmi8_bin_output_bits) {
          find_threshold(k, out->multiplier ? out->multiplier[c] : 1.0f,
                         out->bias ? out->bias[c] : 0.0f, thr, flip);
        } else if (out->greater != NULL && out->greater[c] != 0) {
          *flip = -1; /* acc > t: ~acc < ~t */
          *thr = ~out->threshold[c];
        } else {
          *flip = 0;
          *thr = out->threshold[c];
        }
      }
      return 1;
    case gemmi8_bin_output_qs8:
      b->kout = gemmi8_boutput_s32;
      if (out->bias_s32 != NULL) {
        b->bias_s32 = malloc(channels * sizeof(int32_t));
        if (b->bias_s32 == NULL) return 0;
        memcpy(b->bias_s32, out->bias_s32, channels * sizeof(int32_t));
      }
      return 1;
  }
  return 0;
}

/* Packs every group's filter (op's geometry; kcwp words a tap in the block). */
static int pack_filter(gemmi8_convolution* op, const uint64_t* weights, size_t kcwp)
{
  struct gemmi8_bconv* b = op->bin;
  const struct gemmi8_bgemm_config* cfg = b->cfg;
  const gemmi8_conv_geometry* g = &op->g;
  const size_t ci = g->group_input_channels, co = g->group_output_channels, ks = op->ks;
  const size_t kcw = b->kcw, row = ks * kcwp;
  const uint64_t last = ci % 64 ? (UINT64_C(1) << (ci % 64)) - 1 : ~UINT64_C(0);
  uint64_t* rows = calloc(co * row, sizeof(uint64_t));
  if (rows == NULL) return 0;
  for (size_t grp = 0; grp < g->groups; grp++) {
    for (size_t o = 0; o < co; o++) {
      for (size_t t = 0; t < ks; t++) {
        const uint64_t* src = weights + ((grp * co + o) * ks + t) * kcw;
        uint64_t* dst = rows + o * row + t * kcwp;
        for (size_t w = 0; w < kcw; w++) dst[w] = w + 1 == kcw ? src[w] & last : src[w];
        if (b->tap_sums != NULL) {
          int64_t ones = 0;
          for (size_t w = 0; w < kcw; w++) ones += __builtin_popcountll(dst[w]);
          b->tap_sums[(grp * co + o) * ks + t] = (int32_t) ((int64_t) ci - 2 * ones);
        }
      }
    }
    cfg->pack(cfg->nr, cfg->kr, co, row * 64, rows, row, 0, b->block_bytes,
              b->packed + grp * b->blocks * b->block_bytes);
  }
  free(rows);
  return 1;
}

gemmi8_status gemmi8_bin_convolution_create(const gemmi8_conv_geometry* geometry,
                                            const uint64_t* weights, uint32_t flags,
                                            const gemmi8_bin_conv_output* output,
                                            gemmi8_convolution** op_out)
{
  if (geometry == NULL || weights == NULL || output == NULL || op_out == NULL ||
      (flags & ~GEMMI8_BIN_ZERO_PADDING) != 0) {
    return gemmi8_status_invalid_parameter;
  }
  gemmi8_status status = gemmi8_conv_check_geometry(geometry);
  if (status != gemmi8_status_success) return status;
  const gemmi8_conv_geometry g = *geometry;
  size_t channels_in, channels_out, ks, depth, filter;
  const size_t kcw = GEMMI8_BIN_WORDS(g.group_input_channels);
  if (!gemmi8_mul(g.groups, g.group_input_channels, &channels_in) ||
      !gemmi8_mul(g.groups, g.group_output_channels, &channels_out) ||
      !gemmi8_mul(g.kernel_height, g.kernel_width, &ks) ||
      !gemmi8_mul(ks, g.group_input_channels, &depth)) {
    return gemmi8_status_invalid_parameter;
  }
  /* the layer's depth first: a property of the layer, whatever the filter's bytes */
  if (depth > GEMMI8_BIN_MAX_K) return gemmi8_status_unsupported_parameter;
  /* sizes before any per-channel array is read: a filter that fits memory */
  if (!gemmi8_mul(channels_out, ks, &filter) || !gemmi8_mul(filter, kcw, &filter) ||
      filter > (size_t) PTRDIFF_MAX / sizeof(uint64_t)) {
    return gemmi8_status_invalid_parameter;
  }
  status = check_output(output, channels_out);
  if (status != gemmi8_status_success) return status;
  const struct gemmi8_bgemm_config* cfg = gemmi8_bin_config();
  if (cfg == NULL || cfg->igemm.out[gemmi8_boutput_s32] == NULL ||
      cfg->igemm.out[gemmi8_boutput_f32] == NULL || cfg->igemm.out[gemmi8_boutput_bits] == NULL) {
    return gemmi8_status_unsupported_parameter;
  }
  /* the packed filter: each tap's words rounded to KR; depth <= INT32_MAX bits keeps
   * ks * kcwp words within 2^26 * 2 (ci >= 1 bit a tap, one word) */
  const size_t kcwp = gemmi8_round_up(kcw, cfg->kr);
  size_t row, block_bytes, packed_bytes;
  const size_t blocks = gemmi8_divide_round_up(g.group_output_channels, cfg->nr);
  if (!gemmi8_mul(ks, kcwp, &row) || !gemmi8_mul(row, cfg->nr * sizeof(uint64_t), &block_bytes) ||
      !gemmi8_add(block_bytes, 63, &block_bytes) || !gemmi8_mul(blocks, g.groups, &packed_bytes) ||
      !gemmi8_mul(packed_bytes, block_bytes / 64 * 64, &packed_bytes)) {
    return gemmi8_status_unsupported_parameter;
  }
  block_bytes = block_bytes / 64 * 64;

  gemmi8_convolution* op = calloc(1, sizeof(*op));
  struct gemmi8_bconv* b = calloc(1, sizeof(*b));
  if (op == NULL || b == NULL) {
    free(op);
    free(b);
    return gemmi8_status_out_of_memory;
  }
  op->bin = b;
  op->path = gemmi8_conv_path_binary;
  op->ops = &gemmi8_conv_binary;
  op->type = gemmi8_type_bin;
  op->g = g;
  op->ks = ks;
  op->kc = g.group_input_channels;
  op->k = depth;
  op->channels_in = channels_in;
  op->channels_out = channels_out;
  op->input_size = sizeof(uint64_t);
  op->input_row = GEMMI8_BIN_WORDS(channels_in);
  const int bit_output =
      output->kind == gemmi8_bin_output_bits || output->kind == gemmi8_bin_output_threshold;
  op->output_row = bit_output ? GEMMI8_BIN_WORDS(channels_out) : channels_out;
  op->output_size = bit_output                                 ? sizeof(uint64_t)
                    : output->kind == gemmi8_bin_output_qs8 ? 1
                                                              : sizeof(int32_t);
  b->cfg = cfg;
  b->kind = output->kind;
  b->zero_padding = (flags & GEMMI8_BIN_ZERO_PADDING) != 0;
  b->kcw = kcw;
  b->blocks = blocks;
  b->block_bytes = block_bytes;
  b->regroup = g.group_input_channels % 64 != 0;
  int ok = posix_memalign((void**) &b->packed, 64, packed_bytes) == 0;
  if (!ok) b->packed = NULL;
  b->zero = calloc(kcw, sizeof(uint64_t));
  if (b->zero_padding) b->tap_sums = malloc(filter / kcw * sizeof(int32_t));
  ok = ok && b->zero != NULL && (!b->zero_padding || b->tap_sums != NULL) &&
       make_output(b, output, channels_out, (int64_t) depth) &&
       (output->kind != gemmi8_bin_output_qs8 ||
        gemmi8_conv_copy_requant(output->rq, output->rq->per_channel ? channels_out : 1,
                                 &op->rq)) &&
       pack_filter(op, weights, kcwp);
  if (!ok) {
    gemmi8_convolution_destroy(op);
    return gemmi8_status_out_of_memory;
  }
  op->packed_bytes = packed_bytes;
  *op_out = op;
  return gemmi8_status_success;
}

/* ---- setup ------------------------------------------------------------------------- */

/* Kernel rows (or columns) of output row o outside the input: [0, *a) and [*z, kernel). */
static void outside(size_t o, size_t stride, size_t pad, size_t dilation, size_t kernel,
                    size_t input, size_t* a, size_t* z)
{
  *a = 0;
  while (*a < kernel && o * stride + *a * dilation < pad) ++*a;
  *z = kernel;
  while (*z > *a && o * stride + (*z - 1) * dilation - pad >= input) --*z;
}

/* The distinct (a, z) pairs of one side: pattern[o] indexes them (at most n). */
static size_t side_patterns(size_t n, size_t stride, size_t pad, size_t dilation,
                            size_t kernel, size_t input, size_t* pattern, size_t* pairs)
{
  size_t count = 0;
  for (size_t o = 0; o < n; o++) {
    size_t a, z, p;
    outside(o, stride, pad, dilation, kernel, input, &a, &z);
    for (p = 0; p < count && (pairs[2 * p] != a || pairs[2 * p + 1] != z); p++) continue;
    if (p == count) {
      pairs[2 * p] = a;
      pairs[2 * p + 1] = z;
      count++;
    }
    pattern[o] = p;
  }
  return count;
}

/* The zero padding's corrections for setup s: *corr and *rows, or 0 (out of memory,
 * or sizes that do not fit: *too_big). */
static int make_corrections(const gemmi8_convolution* op, const struct gemmi8_conv_setup* s,
                            int32_t** corr_out, const int32_t*** rows_out, size_t* bytes,
                            int* too_big)
{
  const gemmi8_conv_geometry* g = &op->g;
  const struct gemmi8_bconv* b = op->bin;
  const size_t oh = s->output_height, ow = s->output_width, kh = g->kernel_height,
               kw = g->kernel_width, channels = op->channels_out, ks = op->ks;
  *too_big = 0;
  size_t image, table;
  if (!gemmi8_mul(oh, ow, &image) || image > SIZE_MAX / sizeof(void*)) {
    *too_big = 1;
    return 0;
  }
  size_t* ypat = malloc((oh + ow) * sizeof(size_t));
  size_t* pairs = malloc(2 * (oh + ow) * sizeof(size_t));
  const int32_t** rows = malloc(image * sizeof(void*));
  if (ypat == NULL || pairs == NULL || rows == NULL) goto fail;
  size_t* xpat = ypat + oh;
  size_t* ypairs = pairs;
  const size_t ny = side_patterns(oh, g->stride_height, g->padding_top, g->dilation_height, kh,
                                  s->input_height, ypat, ypairs);
  size_t* xpairs = pairs + 2 * ny;
  const size_t nx = side_patterns(ow, g->stride_width, g->padding_left, g->dilation_width, kw,
                                  s->input_width, xpat, xpairs);
  if (!gemmi8_mul(ny * nx, channels, &table) || table > SIZE_MAX / sizeof(int32_t)) {
    *too_big = 1;
    goto fail;
  }
  int32_t* corr = malloc(table * sizeof(int32_t));
  if (corr == NULL) goto fail;
  for (size_t py = 0; py < ny; py++) {
    for (size_t px = 0; px < nx; px++) {
      int32_t* v = corr + (py * nx + px) * channels;
      const size_t ya = ypairs[2 * py], yz = ypairs[2 * py + 1];
      const size_t xa = xpairs[2 * px], xz = xpairs[2 * px + 1];
      for (size_t c = 0; c < channels; c++) {
        const int32_t* sums = b->tap_sums + c * ks;
        int64_t sum = 0;
        for (size_t y = 0; y < kh; y++) {
          const int row_out = y < ya || y >= yz;
          for (size_t x = 0; x < kw; x++) {
            if (row_out || x < xa || x >= xz) sum += sums[y * kw + x];
          }
        }
        v[c] = (int32_t) sum;
      }
    }
  }
  for (size_t oy = 0; oy < oh; oy++) {
    const int yin = ypairs[2 * ypat[oy]] == 0 && ypairs[2 * ypat[oy] + 1] == kh;
    for (size_t ox = 0; ox < ow; ox++) {
      const int xin = xpairs[2 * xpat[ox]] == 0 && xpairs[2 * xpat[ox] + 1] == kw;
      rows[oy * ow + ox] = yin && xin ? NULL : corr + (ypat[oy] * nx + xpat[ox]) * channels;
    }
  }
  free(ypat);
  free(pairs);
  *corr_out = corr;
  *rows_out = rows;
  *bytes = table * sizeof(int32_t) + image * sizeof(void*);
  return 1;
fail:
  free(ypat);
  free(pairs);
  free((void*) rows);
  return 0;
}

static gemmi8_status bin_setup(gemmi8_convolution* op, const struct gemmi8_conv_setup* s)
{
  struct gemmi8_bconv* b = op->bin;
  const gemmi8_conv_geometry* g = &op->g;
  /* the copy with each group at a word: input pixels x groups x kcw words */
  size_t in_pixels, copy_words = 0;
  if (!gemmi8_mul(s->batch, s->input_height, &in_pixels) ||
      !gemmi8_mul(in_pixels, s->input_width, &in_pixels)) {
    return gemmi8_status_invalid_parameter;
  }
  if (b->regroup && (!gemmi8_mul(in_pixels, g->groups * b->kcw, &copy_words) ||
                     copy_words > SIZE_MAX / sizeof(uint64_t))) {
    return gemmi8_status_invalid_parameter;
  }
  uint64_t* copy = NULL;
  if (copy_words > b->copy_words) {
    if (posix_memalign((void**) &copy, 64, copy_words * sizeof(uint64_t)) != 0) {
      return gemmi8_status_out_of_memory;
    }
  }
  const uint8_t* source = b->regroup ? (const uint8_t*) (copy != NULL ? copy : b->copy) : s->input;
  const size_t source_stride = b->regroup ? g->groups * b->kcw * sizeof(uint64_t) : s->input_stride;
  struct gemmi8_indirection ind = {0};
  gemmi8_status status = gemmi8_indirection_init(
      &ind, g, 0, b->cfg->mr, op->ks, 1, s->batch, s->input_height, s->input_width,
      s->output_height, s->output_width, source, source_stride, 0);
  int32_t* corr = NULL;
  const int32_t** corr_rows = NULL;
  size_t corr_bytes = 0;
  if (status == gemmi8_status_success && b->zero_padding) {
    int too_big;
    if (!make_corrections(op, s, &corr, &corr_rows, &corr_bytes, &too_big)) {
      status = too_big ? gemmi8_status_invalid_parameter : gemmi8_status_out_of_memory;
    }
  }
  if (status != gemmi8_status_success) {
    free(copy);
    gemmi8_indirection_free(&ind);
    return status;
  }
  /* nothing can fail from here on */
  if (copy != NULL) {
    free(b->copy);
    b->copy = copy;
    b->copy_words = copy_words;
  }
  gemmi8_indirection_free(&op->ind);
  op->ind = ind;
  gemmi8_indirection_build(&op->ind, g, b->zero);
  free(b->corr);
  free((void*) b->corr_rows);
  b->corr = corr;
  b->corr_rows = corr_rows;
  b->image_pixels = s->output_height * s->output_width;
  b->corr_bytes = corr_bytes;
  op->workspace_bytes = b->copy_words * sizeof(uint64_t) + corr_bytes;
  return gemmi8_status_success;
}

/* ---- run --------------------------------------------------------------------------- */

/* Copies the input's pixels with each group's ci bits starting a word, the bits past
 * them 0. */
static void regroup_input(const gemmi8_convolution* op)
{
  const struct gemmi8_bconv* b = op->bin;
  const struct gemmi8_conv_setup* s = &op->s;
  const size_t ci = op->g.group_input_channels, groups = op->g.groups, kcw = b->kcw;
  const size_t pixels = s->batch * s->input_height * s->input_width;
  const uint64_t last = (UINT64_C(1) << (ci % 64)) - 1; /* ci % 64 != 0 */
  for (size_t p = 0; p < pixels; p++) {
    const uint64_t* in = (const uint64_t*) (s->input + p * s->input_stride);
    uint64_t* out = b->copy + p * groups * kcw;
    for (size_t grp = 0; grp < groups; grp++) {
      const size_t bit0 = grp * ci;
      for (size_t w = 0; w < kcw; w++) {
        /* bits [bit0 + 64 w, bit0 + 64 w + 64) of the pixel, never a word past the
         * group's last channel's */
        const size_t first = bit0 + 64 * w;
        const size_t word = first / 64, shift = first % 64;
        uint64_t v = in[word] >> shift;
        const size_t last_bit = grp * ci + ci - 1; /* the group's last channel */
        if (shift != 0 && word + 1 <= last_bit / 64) v |= in[word + 1] << (64 - shift);
        out[grp * kcw + w] = w + 1 == kcw ? v & last : v;
      }
    }
  }
}

struct bconv_context {
  const gemmi8_convolution* op;
  gemmi8_bigemm_ukernel_fn kernel;
  size_t mr, nr, co, blocks, nblocks; /* nblocks: groups x blocks */
  struct gemmi8_split split; /* threads */
};

/* Requantizes an s32 tile (qs8 output): channel c0 + j of its rows. */
static void store_qs8(const gemmi8_convolution* op, const int32_t* tile, size_t nr_tile,
                      size_t mr, size_t nr, size_t c0, int8_t* c, size_t c_stride)
{
  const gemmi8_requant* rq = &op->rq;
  const int32_t* bias = op->bin->bias_s32;
  for (size_t i = 0; i < mr; i++) {
    for (size_t j = 0; j < nr; j++) {
      const size_t ch = c0 + j, q = rq->per_channel ? ch : 0;
      const int32_t acc = (int32_t) ((uint32_t) tile[i * nr_tile + j] +
                                     (uint32_t) (bias != NULL ? bias[ch] : 0));
      const int32_t y =
          rq->mode == gemmi8_requant_fixedpoint
              ? gemmi8_output_fixedpoint(acc, rq->multiplier[q], rq->shift[q], rq->zero_point,
                                         rq->min, rq->max)
              : gemmi8_requantize_fp32(acc, rq->scale[q], rq->zero_point, rq->min, rq->max);
      c[i * c_stride + j] = (int8_t) y;
    }
  }
}

static void bconv_task(const struct bconv_context* ctx, size_t m0, size_t rows, size_t fb0,
                       size_t fblocks)
{
  const gemmi8_convolution* op = ctx->op;
  const struct gemmi8_bconv* b = op->bin;
  const size_t mr = ctx->mr, ks = op->ks, out_size = op->output_size;
  const size_t c_stride = op->s.output_stride;
  uint8_t* const output = op->s.output;
  for (size_t fb = fb0; fb < fb0 + fblocks; fb++) {
    const size_t grp = fb / ctx->blocks, n0 = fb % ctx->blocks * ctx->nr;
    const size_t nr = gemmi8_min(ctx->nr, ctx->co - n0);
    const size_t c0 = grp * ctx->co + n0; /* the layer's channel */
    const uint8_t* w = b->packed + fb * b->block_bytes;
    struct gemmi8_bcparams p = {
        .scale = b->scale != NULL ? b->scale + c0 : NULL,
        .bias = b->bias != NULL ? b->bias + c0 : NULL,
        .out_min = b->out_min,
        .out_max = b->out_max,
        .threshold = b->threshold != NULL ? b->threshold + c0 : NULL,
        .flip = b->threshold != NULL ? b->threshold + op->channels_out + c0 : NULL,
        .n0 = c0,
        .corr = NULL,
        .add = b->add,
    };
    const int32_t* corr[GEMMI8_MAX_MR];
    const size_t a_offset = grp * b->kcw * sizeof(uint64_t);
    for (size_t i = m0; i < m0 + rows; i += mr) {
      const size_t tile_rows = gemmi8_min(mr, m0 + rows - i);
      const uint64_t* const* a = (const uint64_t* const*) op->ind.pointers + i / mr * ks * mr;
      if (b->corr_rows != NULL) {
        for (size_t r = 0; r < mr; r++) {
          const size_t pixel = (i + gemmi8_min(r, tile_rows - 1)) % b->image_pixels;
          corr[r] = b->corr_rows[pixel] != NULL ? b->corr_rows[pixel] + c0 : NULL;
        }
        p.corr = corr;
      }
      if (b->kind == gemmi8_bin_output_qs8) {
        int32_t tile[GEMMI8_MAX_MR * 64];
        ctx->kernel(tile_rows, nr, op->kc, ks, a, w, tile, ctx->nr * sizeof(int32_t), a_offset,
                    b->zero, &p);
        store_qs8(op, tile, ctx->nr, tile_rows, nr, c0, (int8_t*) output + i * c_stride + c0,
                  c_stride);
      } else {
        uint8_t* c = output + i * c_stride;
        if (b->kout != gemmi8_boutput_bits) c += c0 * out_size;
        ctx->kernel(tile_rows, nr, op->kc, ks, a, w, c, c_stride, a_offset, b->zero, &p);
      }
    }
  }
  /* bits: the task with the last block clears the padding bits past the channels */
  if (b->kout == gemmi8_boutput_bits && op->channels_out % 64 != 0 &&
      fb0 + fblocks == ctx->nblocks) {
    const uint64_t keep = (UINT64_C(1) << (op->channels_out % 64)) - 1;
    for (size_t i = m0; i < m0 + rows; i++) {
      uint64_t* row = (uint64_t*) (output + i * c_stride);
      row[op->channels_out / 64] &= keep;
    }
  }
}

static void bconv_job(void* context, size_t t)
{
  const struct bconv_context* ctx = context;
  size_t m0, rows, fb0, fblocks;
  gemmi8_split_task(&ctx->split, t, &m0, &rows, &fb0, &fblocks);
  bconv_task(ctx, m0, rows, fb0, fblocks);
}

static gemmi8_status bin_run(gemmi8_convolution* op, const gemmi8_parallel* parallel)
{
  const struct gemmi8_bconv* b = op->bin;
  if (b->regroup) regroup_input(op);
  const size_t m = op->s.m;
  /* rows per task: whole tiles (the indirection buffer is read a tile at a time) */
  const size_t mc = BCONV_MC - BCONV_MC % b->cfg->mr;
  struct bconv_context ctx = {
      .op = op,
      .kernel = b->cfg->igemm.out[b->kout],
      .mr = b->cfg->mr,
      .nr = b->cfg->nr,
      .co = op->g.group_output_channels,
      .blocks = b->blocks,
      .nblocks = b->blocks * op->g.groups,
  };
  const double ops = (double) m * (double) op->channels_out * (double) op->k;
  const size_t threads = gemmi8_parallel_threads(parallel, ops, GEMMI8_OP_COST_BINARY);
  if (threads > 1) {
    /* the bit outputs' tasks hold whole rows: blocks of two tasks share output words */
    const size_t multiple = b->kout == gemmi8_boutput_bits ? ctx.nblocks : 1;
    gemmi8_plan_split(m, ctx.nblocks, ctx.mr, mc, multiple,
                      (double) op->g.group_output_channels * (double) op->k / 8,
                      ops * GEMMI8_OP_COST_BINARY, threads, &ctx.split);
    parallel->parallel_for(parallel->context, bconv_job, &ctx,
                           ctx.split.mchunks * ctx.split.bchunks);
    return gemmi8_status_success;
  }
  for (size_t m0 = 0; m0 < m; m0 += mc) {
    bconv_task(&ctx, m0, gemmi8_min(mc, m - m0), 0, ctx.nblocks);
  }
  return gemmi8_status_success;
}

const struct gemmi8_conv_path_ops gemmi8_conv_binary = {"binary", bin_setup, bin_run};

/* ---- max pooling ------------------------------------------------------------------- */

gemmi8_status gemmi8_bin_max_pool(size_t batch, size_t input_height, size_t input_width,
                                  size_t channels, const uint64_t* input,
                                  size_t input_pixel_stride, size_t pool_height,
                                  size_t pool_width, size_t stride_height, size_t stride_width,
                                  size_t padding_top, size_t padding_left, size_t padding_bottom,
                                  size_t padding_right, uint64_t* output,
                                  size_t output_pixel_stride, size_t* output_height,
                                  size_t* output_width)
{
  if (input == NULL || output == NULL || output_height == NULL || output_width == NULL ||
      batch == 0 || input_height == 0 || input_width == 0 || channels == 0 ||
      pool_height == 0 || pool_width == 0 || stride_height == 0 || stride_width == 0 ||
      padding_top >= pool_height || padding_bottom >= pool_height ||
      padding_left >= pool_width || padding_right >= pool_width) {
    return gemmi8_status_invalid_parameter;
  }
  size_t ph, pw; /* the padded input; paddings are below the pool sizes */
  if (!gemmi8_add(input_height, padding_top + padding_bottom, &ph) ||
      !gemmi8_add(input_width, padding_left + padding_right, &pw) || pool_height > ph ||
      pool_width > pw) {
    return gemmi8_status_invalid_parameter;
  }
  const size_t oh = (ph - pool_height) / stride_height + 1;
  const size_t ow = (pw - pool_width) / stride_width + 1;
  const size_t words = GEMMI8_BIN_WORDS(channels);
  size_t in_pixels, out_pixels, in_extent, out_extent;
  if (!gemmi8_mul(batch, input_height, &in_pixels) ||
      !gemmi8_mul(in_pixels, input_width, &in_pixels) ||
      !gemmi8_extent(in_pixels, words, input_pixel_stride, sizeof(uint64_t), &in_extent) ||
      !gemmi8_mul(batch, oh, &out_pixels) || !gemmi8_mul(out_pixels, ow, &out_pixels) ||
      !gemmi8_extent(out_pixels, words, output_pixel_stride, sizeof(uint64_t), &out_extent)) {
    return gemmi8_status_invalid_parameter;
  }
  const uintptr_t in0 = (uintptr_t) input, out0 = (uintptr_t) output;
  if (out0 < in0 + in_extent && in0 < out0 + out_extent) return gemmi8_status_invalid_parameter;
  const uint64_t last = channels % 64 ? (UINT64_C(1) << (channels % 64)) - 1 : ~UINT64_C(0);
  for (size_t n = 0; n < batch; n++) {
    for (size_t oy = 0; oy < oh; oy++) {
      /* the window's rows inside the image: [y0, y1) */
      const size_t top = oy * stride_height;
      const size_t y0 = top < padding_top ? 0 : top - padding_top;
      const size_t y1 = gemmi8_min(top + pool_height - padding_top, input_height);
      for (size_t ox = 0; ox < ow; ox++) {
        const size_t left = ox * stride_width;
        const size_t x0 = left < padding_left ? 0 : left - padding_left;
        const size_t x1 = gemmi8_min(left + pool_width - padding_left, input_width);
        uint64_t* out = output + ((n * oh + oy) * ow + ox) * output_pixel_stride;
        for (size_t w = 0; w < words; w++) out[w] = ~UINT64_C(0);
        for (size_t y = y0; y < y1; y++) {
          for (size_t x = x0; x < x1; x++) {
            const uint64_t* in =
                input + ((n * input_height + y) * input_width + x) * input_pixel_stride;
            for (size_t w = 0; w < words; w++) out[w] &= in[w];
          }
        }
        out[words - 1] &= last;
      }
    }
  }
  *output_height = oh;
  *output_width = ow;
  return gemmi8_status_success;
}
