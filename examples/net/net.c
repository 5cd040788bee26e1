/*
 * What the three networks share: tensors, layers, the builders that append them
 * (net-impl.h), running, timing and the export of the int8 networks.
 *
 * Calibration. A network with random weights has no trained quantization, and scales
 * picked blindly leave activations all 0 or all 255 after a few layers. So each layer
 * is fitted to the data that reaches it, on the input drawn from the seed, the way a
 * batch norm and a quantizer's calibration pass would, while the network is built:
 *  - a convolution (or the classifier) first runs with int32 output and no bias
 *    (gemmi8_qu8s8_convolution_create_s32, gemmi8_qu8s8_gemm_s32); the mean and standard
 *    deviation of each output channel's accumulators give a folded batch norm,
 *    y = gamma * (acc - mean) / std + beta with gamma and beta drawn per channel (their
 *    ranges depend on what follows: ReLU, ReLU6 or nothing), written as the weights'
 *    per-channel scale w_scale[c] = gamma / (std * x_scale) and an int32 bias
 *    round(beta * std / gamma - mean) (the classifier, one pixel, takes the statistics
 *    of all its channels together);
 *  - the output's scale and zero point come from the values y then takes: the 0.1st and
 *    99.9th percentiles of a sample of them (at most 65536, evenly spaced), widened to
 *    hold 0, mapped to 0..255 (ONNX Runtime's quantizer maps min and max the same way;
 *    percentiles rather than extremes, so that a few outliers do not squeeze the rest
 *    into a handful of levels). ReLU fixes the zero point at 0, ReLU6 also the scale at
 *    6/255; the adds and global average pools are calibrated the same way on their
 *    real-valued results, the float -> uint8 quantizations of the binary network too;
 *  - the binary convolutions fold their batch norm into the float multiplier and bias
 *    of gemmi8_bin_output_f32 from their own accumulators' statistics.
 * The weights are uniform int8 in [-127, 127] (symmetric, zero point 0), or random
 * bits; the input uniform bytes. Everything is drawn from one splitmix64 stream seeded
 * by the seed, in build order, with no libm function but exact ones (sqrt, floor,
 * ceil): same seed, same bytes, on any machine.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime in strict C11 */
#endif
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net-impl.h"

/* ---- random numbers ------------------------------------------------------------------ */

/* splitmix64 (Steele, Lea, Flood 2014) */
static uint64_t next_random(gnet* net)
{
  uint64_t z = (net->rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* uniform in [lo, hi) */
static double uniform(gnet* net, double lo, double hi)
{
  return lo + (hi - lo) * (double) (next_random(net) >> 11) * 0x1p-53;
}

static int8_t random_weight(gnet* net)
{
  return (int8_t) ((int) (next_random(net) % 255) - 127);
}

/* ---- errors, tensors, layers --------------------------------------------------------- */

static void fail(gnet* net, const char* format, ...) __attribute__((format(printf, 2, 3)));
static void fail(gnet* net, const char* format, ...)
{
  if (net->failed) return;
  net->failed = 1;
  va_list ap;
  va_start(ap, format);
  fprintf(stderr, "gnet %s: ", net->name);
  vfprintf(stderr, format, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static int check(gnet* net, gemmi8_status status, const char* what, const char* layer)
{
  if (status != gemmi8_status_success) {
    fail(net, "%s: %s: %s", layer, what, gemmi8_status_string(status));
    return -1;
  }
  return 0;
}

static const size_t element_size[] = {1, sizeof(float), sizeof(int32_t), sizeof(uint64_t)};

/* A new tensor of h x w pixels of c channels: a buffer of its own, zeroed, or its place
 * in the arena (what a dead tensor left there); index 0 on failure (the network is then
 * failed). */
static size_t new_tensor(gnet* net, const char* name, gnet_type type, size_t h, size_t w,
                         size_t c)
{
  if (net->tensor_count == net->tensor_cap) {
    const size_t cap = net->tensor_cap ? 2 * net->tensor_cap : 64;
    gnet_tensor* t = realloc(net->tensors, cap * sizeof(*t));
    if (t == NULL) {
      fail(net, "out of memory");
      return 0;
    }
    net->tensors = t;
    net->tensor_cap = cap;
  }
  gnet_tensor* t = &net->tensors[net->tensor_count];
  memset(t, 0, sizeof(*t));
  snprintf(t->name, sizeof(t->name), "%s", name);
  t->type = type;
  t->h = h;
  t->w = w;
  t->c = c;
  const size_t per_pixel = type == GNET_T_BITS ? GEMMI8_BIN_WORDS(c) : c;
  t->bytes = h * w * per_pixel * element_size[type];
  if (net->plan != NULL) {
    /* its place in the arena (plan_arena: the same network built before, the same
     * tensors in the same order) */
    if (net->tensor_count >= net->plan_count) {
      fail(net, "%s: not in the arena's plan", name);
      return 0;
    }
    t->data = net->arena + net->plan[net->tensor_count];
    return net->tensor_count++;
  }
  const size_t rounded = (t->bytes + 63) / 64 * 64;
  t->data = aligned_alloc(64, rounded);
  if (t->data == NULL) {
    fail(net, "%s: out of memory", name);
    return 0;
  }
  memset(t->data, 0, rounded);
  return net->tensor_count++;
}

/* A new layer (zeroed but for its op, name and tensors); NULL on failure. The pointer
 * is good until the next new_layer. */
static gnet_layer* new_layer(gnet* net, gnet_op op, const char* name, size_t in, size_t in2,
                             size_t out)
{
  if (net->layer_count == net->layer_cap) {
    const size_t cap = net->layer_cap ? 2 * net->layer_cap : 64;
    gnet_layer* l = realloc(net->layers, cap * sizeof(*l));
    if (l == NULL) {
      fail(net, "out of memory");
      return NULL;
    }
    net->layers = l;
    net->layer_cap = cap;
  }
  gnet_layer* l = &net->layers[net->layer_count++];
  memset(l, 0, sizeof(*l));
  l->op = op;
  snprintf(l->name, sizeof(l->name), "%s", name);
  l->in = in;
  l->in2 = in2;
  l->out = out;
  return l;
}

/* The builders' printf-style names */
#define FORMAT_NAME(buffer, format)                          \
  do {                                                       \
    va_list ap_;                                             \
    va_start(ap_, format);                                   \
    vsnprintf(buffer, sizeof(buffer), format, ap_);          \
    va_end(ap_);                                             \
  } while (0)

static int expect(gnet* net, size_t t, gnet_type type, const char* layer)
{
  static const char* const names[] = {"uint8", "float", "int32", "bits"};
  if (net->tensors[t].type != type) {
    fail(net, "%s: input %s is %s, not %s", layer, net->tensors[t].name,
         names[net->tensors[t].type], names[type]);
    return -1;
  }
  return 0;
}

size_t gnet_channels(const gnet* net, size_t t)
{
  return net->tensors[t].c;
}

/* ---- running ------------------------------------------------------------------------ */

static int run_layer(gnet* net, gnet_layer* l, const gemmi8_parallel* parallel)
{
  gemmi8_status status = gemmi8_status_success;
  switch (l->op) {
    case GNET_OP_CONV:
    case GNET_OP_DWCONV:
    case GNET_OP_BCONV:
      status = gemmi8_convolution_run(l->conv, parallel);
      break;
    case GNET_OP_FC: {
      const gnet_tensor* x = &net->tensors[l->in];
      gnet_tensor* y = &net->tensors[l->out];
      status = gemmi8_qu8s8_gemm_ex(1, y->c, x->c, x->data, x->c, l->packed, &l->rq, y->data,
                                    y->c, parallel);
      break;
    }
    default:
      ops_parallel(parallel, l->rows, l->grain, l->fn, &l->args);
      break;
  }
  if (status != gemmi8_status_success) {
    fprintf(stderr, "gnet %s: %s: %s\n", net->name, l->name, gemmi8_status_string(status));
    return -1;
  }
  return 0;
}

/* Runs a layer just built, so that the next one is calibrated on its output. */
static void run_new_layer(gnet* net)
{
  if (!net->failed && run_layer(net, &net->layers[net->layer_count - 1], NULL) != 0) {
    fail(net, "%s: first run failed", net->layers[net->layer_count - 1].name);
  }
}

/* ---- calibration ------------------------------------------------------------------- */

enum { SAMPLE_MAX = 65536 };

static size_t gcd(size_t a, size_t b)
{
  while (b != 0) {
    const size_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/* Sampling every step-th of total values, pixels of channels values, keeps at most
 * SAMPLE_MAX of them; the step is prime to the channels, so that the sample visits
 * every channel (a step of 4 over 64 channels would see 16 of them). */
static size_t sample_step(size_t total, size_t channels)
{
  size_t step = total <= SAMPLE_MAX ? 1 : (total + SAMPLE_MAX - 1) / SAMPLE_MAX;
  while (gcd(step, channels) != 1) step++;
  return step;
}

static int compare_float(const void* a, const void* b)
{
  const float x = *(const float*) a, y = *(const float*) b;
  return (x > y) - (x < y);
}

/* The uint8 quantization of the values in sample (count of them, sorted here) for a
 * layer followed by act (see the top of this file). */
static void choose_output(float* sample, size_t count, gnet_act act, float* scale,
                          int32_t* zero_point)
{
  if (act == GNET_RELU6) {
    *scale = 6.0f / 255.0f;
    *zero_point = 0;
    return;
  }
  qsort(sample, count, sizeof(float), compare_float);
  double lo = sample[(size_t) (0.001 * (double) (count - 1))];
  double hi = sample[(size_t) ceil(0.999 * (double) (count - 1))];
  if (act == GNET_RELU || lo > 0.0) lo = 0.0;
  if (hi < 0.0) hi = 0.0;
  if (hi - lo < 1e-6) hi = lo + 1e-6;
  *scale = (float) ((hi - lo) / 255.0);
  const double zp = floor(-lo / (double) *scale + 0.5);
  *zero_point = zp < 0.0 ? 0 : zp > 255.0 ? 255 : (int32_t) zp;
}

/*
 * Folds a batch norm into a layer whose int32 accumulators without bias (pixels x
 * channels) are acc: per channel, w_scale[c] = gamma / (std * x_scale) and bias[c] =
 * round(beta * std / gamma - mean), gamma and beta drawn from ranges that suit what
 * follows; then the output quantization from a sample of the resulting real values,
 * (acc + bias) * x_scale * w_scale[c]. y_scale NULL: no output quantization (int32
 * output). Returns 0, or -1 out of memory.
 */
static int fold_batch_norm(gnet* net, const int32_t* acc, size_t pixels, size_t channels,
                           float x_scale, gnet_act act, float* w_scale, int32_t* bias,
                           float* y_scale, int32_t* y_zero_point)
{
  static const double gamma_range[3][2] = {{0.5, 1.5}, {0.5, 1.5}, {1.0, 2.5}};
  static const double beta_range[3][2] = {{-0.5, 0.5}, {-0.5, 0.5}, {0.5, 2.5}};
  /* a map of one pixel (the classifier) has no per-channel statistics: all together */
  const int per_channel = pixels >= 16;
  double all_mean = 0.0, all_std = 1.0;
  if (!per_channel) {
    double s = 0.0, s2 = 0.0;
    for (size_t i = 0; i < pixels * channels; i++) {
      s += acc[i];
      s2 += (double) acc[i] * acc[i];
    }
    all_mean = s / (double) (pixels * channels);
    const double var = s2 / (double) (pixels * channels) - all_mean * all_mean;
    all_std = sqrt(var > 1.0 ? var : 1.0);
  }
  for (size_t c = 0; c < channels; c++) {
    double mean = all_mean, std = all_std;
    if (per_channel) {
      double s = 0.0, s2 = 0.0;
      for (size_t p = 0; p < pixels; p++) {
        const double v = acc[p * channels + c];
        s += v;
        s2 += v * v;
      }
      mean = s / (double) pixels;
      const double var = s2 / (double) pixels - mean * mean;
      std = sqrt(var > 1.0 ? var : 1.0);
    }
    const double gamma = uniform(net, gamma_range[act][0], gamma_range[act][1]);
    const double beta = uniform(net, beta_range[act][0], beta_range[act][1]);
    w_scale[c] = (float) (gamma / (std * (double) x_scale));
    bias[c] = (int32_t) floor(beta * std / gamma - mean + 0.5);
  }
  if (y_scale == NULL) return 0;

  const size_t total = pixels * channels, step = sample_step(total, channels);
  float* sample = malloc(((total + step - 1) / step) * sizeof(float));
  if (sample == NULL) return -1;
  size_t count = 0;
  for (size_t i = 0; i < total; i += step) {
    const size_t c = i % channels;
    sample[count++] = (float) (((double) acc[i] + bias[c]) * x_scale * w_scale[c]);
  }
  choose_output(sample, count, act, y_scale, y_zero_point);
  free(sample);
  return 0;
}

/* ---- builders: uint8 ------------------------------------------------------------------ */

size_t gnet_input_tensor(gnet* net, size_t h, size_t w, size_t c, float scale,
                         int32_t zero_point)
{
  if (net->failed) return 0;
  const size_t t = new_tensor(net, "input", GNET_T_U8, h, w, c);
  if (net->failed) return 0;
  gnet_tensor* x = &net->tensors[t];
  x->scale = scale;
  x->zero_point = zero_point;
  uint8_t* d = x->data;
  for (size_t i = 0; i < x->bytes; i++) d[i] = (uint8_t) (next_random(net) >> 56);
  net->input = t;
  return t;
}

/* The int32 accumulators of a convolution of x, its weights and geometry given, without
 * bias, into acc (output pixels x channels); 0 or -1. */
static int conv_accumulators(gnet* net, const char* name, const gnet_tensor* x,
                             const gemmi8_conv_geometry* g, const int8_t* weights, int32_t* acc)
{
  gemmi8_convolution* op = NULL;
  size_t oh = 0, ow = 0;
  int ok = check(net,
                 gemmi8_qu8s8_convolution_create_s32(g, weights, (uint8_t) x->zero_point, NULL,
                                                     &op),
                 "gemmi8_qu8s8_convolution_create_s32", name) == 0 &&
           check(net,
                 gemmi8_convolution_setup(op, 1, x->h, x->w, x->data, x->c, acc,
                                          g->groups * g->group_output_channels, &oh, &ow),
                 "gemmi8_convolution_setup", name) == 0 &&
           check(net, gemmi8_convolution_run(op, NULL), "gemmi8_convolution_run", name) == 0;
  gemmi8_convolution_destroy(op);
  return ok ? 0 : -1;
}

/* The shared part of gnet_conv and gnet_conv_s32: the layer, its weights and batch norm,
 * and (uint8 output) its output quantization. */
static size_t conv_layer(gnet* net, const char* name, size_t xi, size_t cout, size_t k,
                         size_t s, size_t groups, gnet_act act, int s32)
{
  if (net->failed || expect(net, xi, GNET_T_U8, name) != 0) return 0;
  const size_t cin = net->tensors[xi].c, pad = (k - 1) / 2;
  if (groups == 0 || cin % groups != 0 || cout % groups != 0) {
    fail(net, "%s: %zu groups do not divide %zu -> %zu channels", name, groups, cin, cout);
    return 0;
  }
  const gemmi8_conv_geometry g = {
      .kernel_height = k, .kernel_width = k, .stride_height = s, .stride_width = s,
      .dilation_height = 1, .dilation_width = 1, .padding_top = pad, .padding_left = pad,
      .padding_bottom = pad, .padding_right = pad, .groups = groups,
      .group_input_channels = cin / groups, .group_output_channels = cout / groups};
  const size_t oh = (net->tensors[xi].h + 2 * pad - k) / s + 1;
  const size_t ow = (net->tensors[xi].w + 2 * pad - k) / s + 1;
  const size_t yi = new_tensor(net, name, s32 ? GNET_T_S32 : GNET_T_U8, oh, ow, cout);
  gnet_layer* l = new_layer(net, groups > 1 ? GNET_OP_DWCONV : GNET_OP_CONV, name, xi, xi, yi);
  if (net->failed) return 0;
  l->geometry = g;
  const size_t wcount = cout * k * k * (cin / groups);
  l->weights = malloc(wcount);
  l->w_scale = malloc(cout * sizeof(float));
  l->bias = malloc(cout * sizeof(int32_t));
  l->rq_scale = malloc(cout * sizeof(float));
  int32_t* acc = malloc(oh * ow * cout * sizeof(int32_t));
  if (l->weights == NULL || l->w_scale == NULL || l->bias == NULL || l->rq_scale == NULL ||
      acc == NULL) {
    free(acc);
    fail(net, "%s: out of memory", name);
    return 0;
  }
  for (size_t i = 0; i < wcount; i++) l->weights[i] = random_weight(net);

  const gnet_tensor* x = &net->tensors[xi];
  gnet_tensor* y = &net->tensors[yi];
  if (conv_accumulators(net, name, x, &g, l->weights, acc) != 0 ||
      fold_batch_norm(net, acc, oh * ow, cout, x->scale, act, l->w_scale, l->bias,
                      s32 ? NULL : &y->scale, &y->zero_point) != 0) {
    free(acc);
    fail(net, "%s: calibration failed", name);
    return 0;
  }
  free(acc);

  gemmi8_status status;
  if (s32) {
    /* the accumulators' dequantization scales, for gnet_dequantize */
    y->scales = malloc(cout * sizeof(float));
    if (y->scales == NULL) {
      fail(net, "%s: out of memory", name);
      return 0;
    }
    for (size_t c = 0; c < cout; c++) y->scales[c] = x->scale * l->w_scale[c];
    status = gemmi8_qu8s8_convolution_create_s32(&g, l->weights, (uint8_t) x->zero_point,
                                                 l->bias, &l->conv);
  } else {
    /* ONNX Runtime's QLinearConv scale, in float, left to right */
    for (size_t c = 0; c < cout; c++) l->rq_scale[c] = (x->scale * l->w_scale[c]) / y->scale;
    const gemmi8_requant rq = {gemmi8_requant_fp32, 1, NULL, NULL, l->rq_scale,
                               y->zero_point, 0, 255};
    status = gemmi8_qu8s8_convolution_create(&g, l->weights, (uint8_t) x->zero_point, l->bias,
                                             &rq, &l->conv);
  }
  size_t h2 = 0, w2 = 0;
  if (check(net, status, "create", name) != 0 ||
      check(net,
            gemmi8_convolution_setup(l->conv, 1, x->h, x->w, x->data, x->c, y->data, cout, &h2,
                                     &w2),
            "gemmi8_convolution_setup", name) != 0) {
    return 0;
  }
  run_new_layer(net);
  return yi;
}

size_t gnet_conv(gnet* net, size_t x, size_t cout, size_t k, size_t s, size_t groups,
                 gnet_act act, const char* name_format, ...)
{
  char name[48];
  FORMAT_NAME(name, name_format);
  return conv_layer(net, name, x, cout, k, s, groups, act, 0);
}

size_t gnet_conv_s32(gnet* net, size_t x, size_t cout, size_t k, size_t s,
                     const char* name_format, ...)
{
  char name[48];
  FORMAT_NAME(name, name_format);
  return conv_layer(net, name, x, cout, k, s, 1, GNET_LINEAR, 1);
}

size_t gnet_qadd(gnet* net, size_t ai, size_t bi, gnet_act act, const char* name_format, ...)
{
  char name[48];
  FORMAT_NAME(name, name_format);
  if (net->failed || expect(net, ai, GNET_T_U8, name) != 0 ||
      expect(net, bi, GNET_T_U8, name) != 0) {
    return 0;
  }
  const gnet_tensor* a0 = &net->tensors[ai];
  const gnet_tensor* b0 = &net->tensors[bi];
  if (a0->h != b0->h || a0->w != b0->w || a0->c != b0->c) {
    fail(net, "%s: %s and %s differ in shape", name, a0->name, b0->name);
    return 0;
  }
  const size_t yi = new_tensor(net, name, GNET_T_U8, a0->h, a0->w, a0->c);
  gnet_layer* l = new_layer(net, GNET_OP_ADD, name, ai, bi, yi);
  if (net->failed) return 0;
  const gnet_tensor* a = &net->tensors[ai];
  const gnet_tensor* b = &net->tensors[bi];
  gnet_tensor* y = &net->tensors[yi];
  const size_t n = a->bytes, step = sample_step(n, a->c);
  float* sample = malloc(((n + step - 1) / step) * sizeof(float));
  if (sample == NULL) {
    fail(net, "%s: out of memory", name);
    return 0;
  }
  const uint8_t* ad = a->data;
  const uint8_t* bd = b->data;
  size_t count = 0;
  for (size_t i = 0; i < n; i += step) {
    sample[count++] = (float) (((double) ad[i] - a->zero_point) * a->scale +
                               ((double) bd[i] - b->zero_point) * b->scale);
  }
  choose_output(sample, count, act, &y->scale, &y->zero_point);
  free(sample);

  ops_qadd* p = &l->args.qadd;
  ops_qadd_prepare(p, a->scale, a->zero_point, b->scale, b->zero_point, y->scale, y->zero_point);
  p->a = a->data;
  p->b = b->data;
  p->y = y->data;
  l->fn = ops_qadd_range;
  l->rows = n;
  l->grain = 16384;
  run_new_layer(net);
  return yi;
}

/* The shared part of gnet_maxpool and gnet_maxpool_f32. */
static size_t maxpool_layer(gnet* net, const char* name, size_t xi, size_t k, size_t s,
                           size_t pad, int f32)
{
  if (net->failed || expect(net, xi, GNET_T_U8, name) != 0) return 0;
  const size_t oh = (net->tensors[xi].h + 2 * pad - k) / s + 1;
  const size_t ow = (net->tensors[xi].w + 2 * pad - k) / s + 1;
  const size_t yi = new_tensor(net, name, f32 ? GNET_T_F32 : GNET_T_U8, oh, ow,
                               net->tensors[xi].c);
  gnet_layer* l = new_layer(net, GNET_OP_MAXPOOL, name, xi, xi, yi);
  if (net->failed) return 0;
  const gnet_tensor* x = &net->tensors[xi];
  gnet_tensor* y = &net->tensors[yi];
  if (!f32) {
    y->scale = x->scale;
    y->zero_point = x->zero_point;
  }
  l->kernel = k;
  l->stride = s;
  l->pad = pad;
  l->args.maxpool = (ops_maxpool){x->data, f32 ? NULL : y->data, x->h, x->w, x->c, oh, ow,
                                  k, s, pad, f32 ? y->data : NULL, x->scale, x->zero_point};
  l->fn = ops_maxpool_range;
  l->rows = oh;
  l->grain = 2;
  run_new_layer(net);
  return yi;
}

size_t gnet_maxpool(gnet* net, size_t xi, size_t k, size_t s, size_t pad,
                    const char* name_format, ...)
{
  char name[48];
  FORMAT_NAME(name, name_format);
  return maxpool_layer(net, name, xi, k, s, pad, 0);
}

size_t gnet_maxpool_f32(gnet* net, size_t xi, size_t k, size_t s, size_t pad,
                        const char* name_format, ...)
{
  char name[48];
  FORMAT_NAME(name, name_format);
  return maxpool_layer(net, name, xi, k, s, pad, 1);
}

size_t gnet_gap(gnet* net, size_t xi, const char* name_format, ...)
{
  char name[48];
  FORMAT_NAME(name, name_format);
  if (net->failed) return 0;
  const gnet_type type = net->tensors[xi].type;
  if (type != GNET_T_U8 && expect(net, xi, GNET_T_F32, name) != 0) return 0;
  const size_t yi = new_tensor(net, name, type, 1, 1, net->tensors[xi].c);
  gnet_layer* l = new_layer(net, GNET_OP_GAP, name, xi, xi, yi);
  if (net->failed) return 0;
  const gnet_tensor* x = &net->tensors[xi];
  gnet_tensor* y = &net->tensors[yi];
  const size_t pixels = x->h * x->w;
  if (type == GNET_T_F32) {
    l->args.gap_f32 = (ops_gap_f32){x->data, y->data, pixels, x->c};
    l->fn = ops_gap_f32_range;
  } else {
    /* calibrated on the real averages */
    float* sample = malloc(x->c * sizeof(float));
    if (sample == NULL) {
      fail(net, "%s: out of memory", name);
      return 0;
    }
    const uint8_t* d = x->data;
    for (size_t c = 0; c < x->c; c++) {
      int64_t sum = 0;
      for (size_t p = 0; p < pixels; p++) sum += d[p * x->c + c];
      sample[c] = (float) (((double) sum / (double) pixels - x->zero_point) * x->scale);
    }
    choose_output(sample, x->c, GNET_LINEAR, &y->scale, &y->zero_point);
    free(sample);
    ops_qgap* p = &l->args.qgap;
    p->x = x->data;
    p->y = y->data;
    p->pixels = pixels;
    p->channels = x->c;
    ops_qgap_prepare(p, x->scale, x->zero_point, y->scale, y->zero_point);
    if (!(p->scale >= 0x1p-32f && p->scale < 256.0f)) {
      fail(net, "%s: scale %g outside ONNX Runtime's range", name, (double) p->scale);
      return 0;
    }
    l->fn = ops_qgap_range;
  }
  l->rows = x->c;
  l->grain = 64;
  run_new_layer(net);
  return yi;
}

size_t gnet_fc(gnet* net, size_t xi, size_t cout, const char* name_format, ...)
{
  char name[48];
  FORMAT_NAME(name, name_format);
  if (net->failed || expect(net, xi, GNET_T_U8, name) != 0) return 0;
  if (net->tensors[xi].h * net->tensors[xi].w != 1) {
    fail(net, "%s: input is not 1 x 1", name);
    return 0;
  }
  const size_t yi = new_tensor(net, name, GNET_T_U8, 1, 1, cout);
  gnet_layer* l = new_layer(net, GNET_OP_FC, name, xi, xi, yi);
  if (net->failed) return 0;
  const gnet_tensor* x = &net->tensors[xi];
  gnet_tensor* y = &net->tensors[yi];
  const size_t cin = x->c;
  /* exported as a 1x1 convolution on a 1x1 map */
  l->geometry = (gemmi8_conv_geometry){.kernel_height = 1, .kernel_width = 1,
                                       .stride_height = 1, .stride_width = 1,
                                       .dilation_height = 1, .dilation_width = 1,
                                       .groups = 1, .group_input_channels = cin,
                                       .group_output_channels = cout};
  l->weights = malloc(cout * cin);
  l->w_scale = malloc(cout * sizeof(float));
  l->bias = malloc(cout * sizeof(int32_t));
  l->rq_scale = malloc(cout * sizeof(float));
  int32_t* acc = malloc(cout * sizeof(int32_t));
  if (l->weights == NULL || l->w_scale == NULL || l->bias == NULL || l->rq_scale == NULL ||
      acc == NULL) {
    free(acc);
    fail(net, "%s: out of memory", name);
    return 0;
  }
  for (size_t i = 0; i < cout * cin; i++) l->weights[i] = random_weight(net);
  void* packed = NULL;
  const uint8_t xzp = (uint8_t) x->zero_point;
  if (check(net, gemmi8_qu8s8_pack_alloc(cout, cin, l->weights, cin, GEMMI8_B_NK, xzp, NULL, &packed),
            "gemmi8_qu8s8_pack_alloc", name) != 0 ||
      check(net, gemmi8_qu8s8_gemm_s32(1, cout, cin, x->data, cin, packed, acc, cout),
            "gemmi8_qu8s8_gemm_s32", name) != 0 ||
      fold_batch_norm(net, acc, 1, cout, x->scale, GNET_LINEAR, l->w_scale, l->bias, &y->scale,
                      &y->zero_point) != 0) {
    gemmi8_packed_free(packed);
    free(acc);
    fail(net, "%s: calibration failed", name);
    return 0;
  }
  gemmi8_packed_free(packed);
  free(acc);
  for (size_t c = 0; c < cout; c++) l->rq_scale[c] = (x->scale * l->w_scale[c]) / y->scale;
  l->rq = (gemmi8_requant){gemmi8_requant_fp32, 1, NULL, NULL, l->rq_scale, y->zero_point, 0, 255};
  if (check(net, gemmi8_qu8s8_pack_alloc(cout, cin, l->weights, cin, GEMMI8_B_NK, xzp, l->bias,
                                         &l->packed),
            "gemmi8_qu8s8_pack_alloc", name) != 0) {
    return 0;
  }
  run_new_layer(net);
  return yi;
}

/* ---- builders: float and binary ---------------------------------------------------------- */

size_t gnet_quantize(gnet* net, size_t xi, const char* name_format, ...)
{
  char name[48];
  FORMAT_NAME(name, name_format);
  if (net->failed || expect(net, xi, GNET_T_F32, name) != 0) return 0;
  const size_t yi = new_tensor(net, name, GNET_T_U8, net->tensors[xi].h, net->tensors[xi].w,
                               net->tensors[xi].c);
  gnet_layer* l = new_layer(net, GNET_OP_QUANTIZE, name, xi, xi, yi);
  if (net->failed) return 0;
  const gnet_tensor* x = &net->tensors[xi];
  gnet_tensor* y = &net->tensors[yi];
  const size_t n = x->h * x->w * x->c, step = sample_step(n, x->c);
  float* sample = malloc(((n + step - 1) / step) * sizeof(float));
  if (sample == NULL) {
    fail(net, "%s: out of memory", name);
    return 0;
  }
  const float* d = x->data;
  size_t count = 0;
  for (size_t i = 0; i < n; i += step) sample[count++] = d[i];
  choose_output(sample, count, GNET_LINEAR, &y->scale, &y->zero_point);
  free(sample);
  l->args.quant = (ops_quant_f32){x->data, y->data, y->scale, y->zero_point};
  l->fn = ops_quant_f32_range;
  l->rows = n;
  l->grain = 16384;
  run_new_layer(net);
  return yi;
}

size_t gnet_dequantize(gnet* net, size_t xi, const char* name_format, ...)
{
  char name[48];
  FORMAT_NAME(name, name_format);
  if (net->failed) return 0;
  if (net->tensors[xi].type != GNET_T_S32 && expect(net, xi, GNET_T_U8, name) != 0) return 0;
  const size_t yi = new_tensor(net, name, GNET_T_F32, net->tensors[xi].h, net->tensors[xi].w,
                               net->tensors[xi].c);
  gnet_layer* l = new_layer(net, GNET_OP_DEQUANTIZE, name, xi, xi, yi);
  if (net->failed) return 0;
  const gnet_tensor* x = &net->tensors[xi];
  const gnet_tensor* y = &net->tensors[yi];
  if (x->type == GNET_T_U8) {
    l->args.dequant_u8 = (ops_dequant_u8){x->data, y->data, x->scale, x->zero_point};
    l->fn = ops_dequant_u8_range;
    l->rows = x->h * x->w * x->c;
    l->grain = 16384;
  } else {
    l->args.dequant_s32 = (ops_dequant_s32){x->data, y->data, x->scales, x->c};
    l->fn = ops_dequant_s32_range;
    l->rows = x->h * x->w;
    l->grain = 256;
  }
  run_new_layer(net);
  return yi;
}

size_t gnet_binarize(gnet* net, size_t xi, const char* name_format, ...)
{
  char name[48];
  FORMAT_NAME(name, name_format);
  if (net->failed || expect(net, xi, GNET_T_F32, name) != 0) return 0;
  const size_t yi = new_tensor(net, name, GNET_T_BITS, net->tensors[xi].h, net->tensors[xi].w,
                               net->tensors[xi].c);
  gnet_layer* l = new_layer(net, GNET_OP_BINARIZE, name, xi, xi, yi);
  if (net->failed) return 0;
  const gnet_tensor* x = &net->tensors[xi];
  const gnet_tensor* y = &net->tensors[yi];
  l->args.binarize = (ops_binarize){x->data, y->data, x->c};
  l->fn = ops_binarize_range;
  l->rows = x->h * x->w;
  l->grain = 256;
  run_new_layer(net);
  return yi;
}

/* One binary convolution operator on x (bits) into out (pixels x cout of output's kind),
 * set up; NULL on failure. */
static gemmi8_convolution* bconv_operator(gnet* net, const char* name, const gnet_tensor* x,
                                          const gemmi8_conv_geometry* g, const uint64_t* weights,
                                          const gemmi8_bin_conv_output* output, void* out)
{
  gemmi8_convolution* op = NULL;
  size_t oh = 0, ow = 0;
  const size_t cout = g->group_output_channels;
  if (check(net, gemmi8_bin_convolution_create(g, weights, GEMMI8_BIN_ZERO_PADDING, output, &op),
            "gemmi8_bin_convolution_create", name) != 0) {
    return NULL;
  }
  if (check(net,
            gemmi8_convolution_setup(op, 1, x->h, x->w, x->data, GEMMI8_BIN_WORDS(x->c), out,
                                     cout, &oh, &ow),
            "gemmi8_convolution_setup", name) != 0) {
    gemmi8_convolution_destroy(op);
    return NULL;
  }
  return op;
}

/* The binary convolution of gnet_bconv (residual SIZE_MAX) and gnet_bconv_add (its
 * result added to the float tensor residual, in place: the f32_add output). */
static size_t bconv_layer(gnet* net, size_t xi, size_t residual, size_t cout, size_t k, size_t s,
                          const char* name)
{
  if (net->failed || expect(net, xi, GNET_T_BITS, name) != 0) return 0;
  const size_t cin = net->tensors[xi].c, pad = (k - 1) / 2;
  const gemmi8_conv_geometry g = {
      .kernel_height = k, .kernel_width = k, .stride_height = s, .stride_width = s,
      .dilation_height = 1, .dilation_width = 1, .padding_top = pad, .padding_left = pad,
      .padding_bottom = pad, .padding_right = pad, .groups = 1,
      .group_input_channels = cin, .group_output_channels = cout};
  const size_t oh = (net->tensors[xi].h + 2 * pad - k) / s + 1;
  const size_t ow = (net->tensors[xi].w + 2 * pad - k) / s + 1;
  size_t yi = residual;
  if (residual == SIZE_MAX) {
    yi = new_tensor(net, name, GNET_T_F32, oh, ow, cout);
  } else if (expect(net, residual, GNET_T_F32, name) != 0) {
    return 0;
  } else if (net->tensors[residual].h != oh || net->tensors[residual].w != ow ||
             net->tensors[residual].c != cout) {
    fail(net, "%s: the residual's shape is not the output's", name);
    return 0;
  }
  gnet_layer* l = new_layer(net, GNET_OP_BCONV, name, xi, residual == SIZE_MAX ? xi : residual, yi);
  if (net->failed) return 0;
  l->geometry = g;
  const size_t words = cout * k * k * GEMMI8_BIN_WORDS(cin);
  uint64_t* weights = malloc(words * sizeof(uint64_t));
  int32_t* acc = malloc(oh * ow * cout * sizeof(int32_t));
  float* multiplier = malloc(cout * sizeof(float));
  float* bias = malloc(cout * sizeof(float));
  if (weights == NULL || acc == NULL || multiplier == NULL || bias == NULL) {
    fail(net, "%s: out of memory", name);
    goto done;
  }
  for (size_t i = 0; i < words; i++) weights[i] = next_random(net);

  /* the accumulators, then a batch norm per channel from their statistics */
  const gemmi8_bin_conv_output s32 = {.kind = gemmi8_bin_output_s32};
  gemmi8_convolution* op = bconv_operator(net, name, &net->tensors[xi], &g, weights, &s32, acc);
  if (op == NULL) goto done;
  const gemmi8_status status = gemmi8_convolution_run(op, NULL);
  gemmi8_convolution_destroy(op);
  if (check(net, status, "gemmi8_convolution_run", name) != 0) goto done;
  for (size_t c = 0; c < cout; c++) {
    double sum = 0.0, sum2 = 0.0;
    for (size_t p = 0; p < oh * ow; p++) {
      const double v = acc[p * cout + c];
      sum += v;
      sum2 += v * v;
    }
    const double mean = sum / (double) (oh * ow);
    const double var = sum2 / (double) (oh * ow) - mean * mean;
    const double std = sqrt(var > 1.0 ? var : 1.0);
    const double gamma = uniform(net, 0.5, 1.0), beta = uniform(net, -0.25, 0.25);
    multiplier[c] = (float) (gamma / std);
    bias[c] = (float) (beta - mean * gamma / std);
  }
  const gemmi8_bin_conv_output f32 = {.kind = residual == SIZE_MAX ? gemmi8_bin_output_f32
                                                                    : gemmi8_bin_output_f32_add,
                                      .multiplier = multiplier,
                                      .bias = bias,
                                      .output_min = -INFINITY,
                                      .output_max = INFINITY};
  l = &net->layers[net->layer_count - 1];
  l->conv = bconv_operator(net, name, &net->tensors[xi], &g, weights, &f32,
                           net->tensors[yi].data);
  run_new_layer(net);
done:
  free(weights);
  free(acc);
  free(multiplier);
  free(bias);
  return net->failed ? 0 : yi;
}

size_t gnet_bconv(gnet* net, size_t xi, size_t cout, size_t k, size_t s,
                  const char* name_format, ...)
{
  char name[48];
  FORMAT_NAME(name, name_format);
  return bconv_layer(net, xi, SIZE_MAX, cout, k, s, name);
}

size_t gnet_bconv_add(gnet* net, size_t xi, size_t residual, size_t cout, size_t k, size_t s,
                      const char* name_format, ...)
{
  char name[48];
  FORMAT_NAME(name, name_format);
  return bconv_layer(net, xi, residual, cout, k, s, name);
}

size_t gnet_add_f32(gnet* net, size_t ai, size_t bi, const char* name_format, ...)
{
  char name[48];
  FORMAT_NAME(name, name_format);
  if (net->failed || expect(net, ai, GNET_T_F32, name) != 0 ||
      expect(net, bi, GNET_T_F32, name) != 0) {
    return 0;
  }
  const gnet_tensor* a0 = &net->tensors[ai];
  if (a0->bytes != net->tensors[bi].bytes || a0->c != net->tensors[bi].c) {
    fail(net, "%s: inputs differ in shape", name);
    return 0;
  }
  const size_t yi = new_tensor(net, name, GNET_T_F32, a0->h, a0->w, a0->c);
  gnet_layer* l = new_layer(net, GNET_OP_ADD, name, ai, bi, yi);
  if (net->failed) return 0;
  const gnet_tensor* y = &net->tensors[yi];
  l->args.add_f32 = (ops_add_f32){net->tensors[ai].data, net->tensors[bi].data, y->data};
  l->fn = ops_add_f32_range;
  l->rows = y->h * y->w * y->c;
  l->grain = 16384;
  run_new_layer(net);
  return yi;
}

size_t gnet_avgpool(gnet* net, size_t xi, size_t k, const char* name_format, ...)
{
  char name[48];
  FORMAT_NAME(name, name_format);
  if (net->failed || expect(net, xi, GNET_T_F32, name) != 0) return 0;
  const size_t oh = net->tensors[xi].h / k, ow = net->tensors[xi].w / k;
  const size_t yi = new_tensor(net, name, GNET_T_F32, oh, ow, net->tensors[xi].c);
  gnet_layer* l = new_layer(net, GNET_OP_AVGPOOL, name, xi, xi, yi);
  if (net->failed) return 0;
  const gnet_tensor* x = &net->tensors[xi];
  const gnet_tensor* y = &net->tensors[yi];
  l->kernel = k;
  l->stride = k;
  l->args.avgpool = (ops_avgpool_f32){x->data, y->data, x->w, x->c, ow, k, k};
  l->fn = ops_avgpool_f32_range;
  l->rows = oh;
  l->grain = 2;
  run_new_layer(net);
  return yi;
}

/* ---- the interface ------------------------------------------------------------------- */

void gnet_destroy(gnet* net)
{
  if (net == NULL) return;
  for (size_t i = 0; i < net->layer_count; i++) {
    gnet_layer* l = &net->layers[i];
    gemmi8_convolution_destroy(l->conv);
    gemmi8_packed_free(l->packed);
    free(l->weights);
    free(l->w_scale);
    free(l->bias);
    free(l->rq_scale);
  }
  for (size_t i = 0; i < net->tensor_count; i++) {
    if (net->plan == NULL) free(net->tensors[i].data);
    free(net->tensors[i].scales);
  }
  free(net->layers);
  free(net->tensors);
  free(net->plan);
  free(net->arena);
  free(net);
}

/* Builds the network from the seed: each tensor in a buffer of its own (plan NULL), or
 * tensor i at arena + plan[i] (plan_count tensors, arena_bytes), plan and arena then
 * the network's to free, on failure too. NULL on failure. */
static gnet* build(gnet_kind kind, uint64_t seed, size_t* plan, size_t plan_count,
                   uint8_t* arena, size_t arena_bytes)
{
  static const char* const names[] = {"resnet18", "mobilenetv2", "bin-resnet18"};
  gnet* net = calloc(1, sizeof(*net));
  if (net == NULL) {
    free(plan);
    free(arena);
    fprintf(stderr, "gnet_create: out of memory\n");
    return NULL;
  }
  net->kind = kind;
  net->name = names[kind];
  net->rng = seed;
  net->plan = plan;
  net->plan_count = plan_count;
  net->arena = arena;
  net->arena_bytes = arena_bytes;
  switch (kind) {
    case GNET_RESNET18: gnet_build_resnet18(net); break;
    case GNET_MOBILENETV2: gnet_build_mobilenetv2(net); break;
    case GNET_BIN_RESNET18: gnet_build_bin_resnet18(net); break;
  }
  if (!net->failed && (net->tensors[net->output].type != GNET_T_U8 ||
                       net->tensors[net->output].bytes != 1000)) {
    fail(net, "the output is not 1000 uint8 logits");
  }
  if (!net->failed && plan != NULL && net->tensor_count != plan_count) {
    fail(net, "%zu tensors against the plan's %zu", net->tensor_count, plan_count);
  }
  if (net->failed) {
    gnet_destroy(net);
    return NULL;
  }
  return net;
}

/* The arena's layout for the tensors of net (built with buffers of their own): each
 * tensor is alive from the first layer that touches it to the last (the input and the
 * output throughout); largest first, each takes the lowest offset, a multiple of 64,
 * whose bytes no placed tensor alive at some same layer holds. Returns the offsets
 * (tensor_count of them) and sets *bytes to the arena's size; NULL when out of memory. */
static size_t* plan_arena(const gnet* net, size_t* bytes)
{
  const size_t n = net->tensor_count, layers = net->layer_count;
  size_t* plan = malloc(n * sizeof(size_t));
  size_t* first = malloc(n * sizeof(size_t));
  size_t* last = malloc(n * sizeof(size_t));
  size_t* order = malloc(n * sizeof(size_t));
  if (plan == NULL || first == NULL || last == NULL || order == NULL) {
    free(plan);
    free(first);
    free(last);
    free(order);
    return NULL;
  }
  for (size_t t = 0; t < n; t++) {
    first[t] = layers;
    last[t] = 0;
  }
  for (size_t i = 0; i < layers; i++) {
    const size_t touched[3] = {net->layers[i].in, net->layers[i].in2, net->layers[i].out};
    for (size_t k = 0; k < 3; k++) {
      const size_t t = touched[k];
      if (i < first[t]) first[t] = i;
      if (i > last[t]) last[t] = i;
    }
  }
  first[net->input] = first[net->output] = 0;
  last[net->input] = last[net->output] = layers;
  /* largest first (insertion sort: a few dozen tensors) */
  for (size_t t = 0; t < n; t++) {
    size_t k = t;
    while (k > 0 && net->tensors[order[k - 1]].bytes < net->tensors[t].bytes) {
      order[k] = order[k - 1];
      k--;
    }
    order[k] = t;
  }
  size_t end = 0;
  for (size_t k = 0; k < n; k++) {
    const size_t t = order[k], size = (net->tensors[t].bytes + 63) / 64 * 64;
    size_t offset = 0;
    for (size_t j = 0; j < k; j++) {
      const size_t u = order[j], usize = (net->tensors[u].bytes + 63) / 64 * 64;
      if (first[u] <= last[t] && first[t] <= last[u] && plan[u] < offset + size &&
          offset < plan[u] + usize) {
        offset = plan[u] + usize; /* past u, then every placed tensor again */
        j = (size_t) -1;
      }
    }
    plan[t] = offset;
    if (offset + size > end) end = offset + size;
  }
  free(first);
  free(last);
  free(order);
  *bytes = end;
  return plan;
}

int gnet_create_ex(gnet_kind kind, uint64_t seed, unsigned flags, gnet** out)
{
  if (out == NULL || (unsigned) kind > GNET_BIN_RESNET18 || (flags & ~GNET_KEEP_TENSORS) != 0) {
    fprintf(stderr, "gnet_create: bad argument\n");
    return -1;
  }
  gnet* net = build(kind, seed, NULL, 0, NULL, 0);
  if (net != NULL && (flags & GNET_KEEP_TENSORS) == 0) {
    /* built once with a buffer a tensor to learn the tensors' lives, then again in the
     * arena: the same draws from the seed, the same bytes */
    size_t bytes = 0;
    const size_t count = net->tensor_count;
    size_t* plan = plan_arena(net, &bytes);
    gnet_destroy(net);
    uint8_t* arena = plan != NULL ? aligned_alloc(64, bytes > 0 ? bytes : 64) : NULL;
    if (arena == NULL) {
      free(plan);
      fprintf(stderr, "gnet_create: out of memory\n");
      return -1;
    }
    memset(arena, 0, bytes);
    net = build(kind, seed, plan, count, arena, bytes);
  }
  if (net == NULL) return -1;
  *out = net;
  return 0;
}

int gnet_create(gnet_kind kind, uint64_t seed, gnet** out)
{
  return gnet_create_ex(kind, seed, 0, out);
}

size_t gnet_tensor_bytes(const gnet* net, size_t* arena_bytes)
{
  size_t sum = 0;
  for (size_t i = 0; i < net->tensor_count; i++) sum += net->tensors[i].bytes;
  if (arena_bytes != NULL) *arena_bytes = net->arena_bytes;
  return sum;
}

const char* gnet_name(const gnet* net)
{
  return net->name;
}

uint8_t* gnet_input(gnet* net, size_t* h, size_t* w, size_t* c)
{
  const gnet_tensor* x = &net->tensors[net->input];
  if (h != NULL) *h = x->h;
  if (w != NULL) *w = x->w;
  if (c != NULL) *c = x->c;
  return x->data;
}

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

int gnet_run(gnet* net, const gemmi8_parallel* parallel)
{
  for (size_t i = 0; i < net->layer_count; i++) {
    gnet_layer* l = &net->layers[i];
    if (net->timing) {
      const double t0 = now();
      if (run_layer(net, l, parallel) != 0) return -1;
      l->seconds += now() - t0;
    } else if (run_layer(net, l, parallel) != 0) {
      return -1;
    }
  }
  return 0;
}

const uint8_t* gnet_output(const gnet* net, size_t* bytes)
{
  const gnet_tensor* y = &net->tensors[net->output];
  if (bytes != NULL) *bytes = y->bytes;
  return y->data;
}

void gnet_timing(gnet* net, int on)
{
  net->timing = on != 0;
}

void gnet_timing_reset(gnet* net)
{
  for (size_t i = 0; i < net->layer_count; i++) net->layers[i].seconds = 0.0;
}

size_t gnet_layers(const gnet* net)
{
  return net->layer_count;
}

const char* gnet_layer_name(const gnet* net, size_t i)
{
  return i < net->layer_count ? net->layers[i].name : NULL;
}

const char* gnet_layer_kind(const gnet* net, size_t i)
{
  static const char* const kinds[] = {"conv", "dwconv",   "bconv",    "add",
                                      "maxpool", "avgpool", "gap",   "fc",
                                      "binarize", "quantize", "dequantize"};
  return i < net->layer_count ? kinds[net->layers[i].op] : NULL;
}

double gnet_layer_seconds(const gnet* net, size_t i)
{
  return i < net->layer_count ? net->layers[i].seconds : 0.0;
}

int gnet_layer_tensors(const gnet* net, size_t i, const uint8_t** in, const uint8_t** out)
{
  if (i >= net->layer_count || net->plan != NULL) return -1;
  const gnet_layer* l = &net->layers[i];
  if (net->tensors[l->in].type != GNET_T_U8 || net->tensors[l->in2].type != GNET_T_U8 ||
      net->tensors[l->out].type != GNET_T_U8) {
    return -1;
  }
  if (in != NULL) *in = net->tensors[l->in].data;
  if (out != NULL) *out = net->tensors[l->out].data;
  return 0;
}

int gnet_layer_tensor_b(const gnet* net, size_t i, const uint8_t** b)
{
  if (i >= net->layer_count || net->layers[i].op != GNET_OP_ADD ||
      gnet_layer_tensors(net, i, NULL, NULL) != 0) {
    return -1;
  }
  if (b != NULL) *b = net->tensors[net->layers[i].in2].data;
  return 0;
}

/* ---- export ---------------------------------------------------------------------------- */

typedef struct bin_writer {
  FILE* f;
  uint64_t offset;
  int error;
} bin_writer;

static void put_byte(bin_writer* w, uint8_t b)
{
  if (fputc(b, w->f) == EOF) w->error = 1;
  w->offset++;
}

/* Starts an array at the next multiple of 64 (zeros in between); returns its offset. */
static uint64_t begin_array(bin_writer* w)
{
  while (w->offset % 64 != 0) put_byte(w, 0);
  return w->offset;
}

static void put_u32(bin_writer* w, uint32_t v)
{
  for (int i = 0; i < 4; i++) put_byte(w, (uint8_t) (v >> (8 * i)));
}

static uint64_t put_int8s(bin_writer* w, const int8_t* v, size_t n)
{
  const uint64_t at = begin_array(w);
  for (size_t i = 0; i < n; i++) put_byte(w, (uint8_t) v[i]);
  return at;
}

static uint64_t put_floats(bin_writer* w, const float* v, size_t n)
{
  const uint64_t at = begin_array(w);
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &v[i], 4);
    put_u32(w, u);
  }
  return at;
}

static uint64_t put_int32s(bin_writer* w, const int32_t* v, size_t n)
{
  const uint64_t at = begin_array(w);
  for (size_t i = 0; i < n; i++) put_u32(w, (uint32_t) v[i]);
  return at;
}

int gnet_export(const gnet* net, const char* json_path, const char* bin_path)
{
  if (net->kind == GNET_BIN_RESNET18) return -1;
  FILE* js = fopen(json_path, "w");
  bin_writer bw = {fopen(bin_path, "wb"), 0, 0};
  if (js == NULL || bw.f == NULL) {
    fprintf(stderr, "gnet_export: cannot write %s\n", js == NULL ? json_path : bin_path);
    if (js != NULL) fclose(js);
    if (bw.f != NULL) fclose(bw.f);
    return -1;
  }
  const gnet_tensor* in = &net->tensors[net->input];
  fprintf(js, "{\n  \"network\": \"%s\",\n", net->name);
  fprintf(js,
          "  \"input\": {\"name\": \"%s\", \"shape\": [1,%zu,%zu,%zu], \"scale\": %.9g, "
          "\"zero_point\": %d},\n",
          in->name, in->h, in->w, in->c, (double) in->scale, (int) in->zero_point);
  fprintf(js, "  \"output\": \"%s\",\n  \"layers\": [\n", net->tensors[net->output].name);
  for (size_t i = 0; i < net->layer_count; i++) {
    const gnet_layer* l = &net->layers[i];
    const gnet_tensor* x = &net->tensors[l->in];
    const gnet_tensor* y = &net->tensors[l->out];
    fprintf(js, "    {");
    switch (l->op) {
      case GNET_OP_CONV:
      case GNET_OP_DWCONV:
      case GNET_OP_FC: {
        const gemmi8_conv_geometry* g = &l->geometry;
        const size_t cout = g->groups * g->group_output_channels;
        const uint64_t w_off = put_int8s(&bw, l->weights,
                                         cout * g->kernel_height * g->kernel_width *
                                             g->group_input_channels);
        const uint64_t s_off = put_floats(&bw, l->w_scale, cout);
        const uint64_t b_off = put_int32s(&bw, l->bias, cout);
        fprintf(js,
                "\"op\": \"conv\", \"name\": \"%s\", \"input\": \"%s\", \"output\": \"%s\", "
                "\"kernel\": [%zu,%zu], \"stride\": [%zu,%zu], \"dilation\": [%zu,%zu], "
                "\"pads\": [%zu,%zu,%zu,%zu], \"group\": %zu, \"in_channels\": %zu, "
                "\"out_channels\": %zu, \"x_scale\": %.9g, \"x_zero_point\": %d, "
                "\"w_offset\": %llu, \"w_scale_offset\": %llu, \"bias_offset\": %llu, "
                "\"y_scale\": %.9g, \"y_zero_point\": %d",
                l->name, x->name, y->name, g->kernel_height, g->kernel_width, g->stride_height,
                g->stride_width, g->dilation_height, g->dilation_width, g->padding_top,
                g->padding_left, g->padding_bottom, g->padding_right, g->groups,
                g->groups * g->group_input_channels, cout, (double) x->scale,
                (int) x->zero_point, (unsigned long long) w_off, (unsigned long long) s_off,
                (unsigned long long) b_off, (double) y->scale, (int) y->zero_point);
        break;
      }
      case GNET_OP_ADD: {
        const gnet_tensor* b = &net->tensors[l->in2];
        fprintf(js,
                "\"op\": \"add\", \"name\": \"%s\", \"a\": \"%s\", \"b\": \"%s\", "
                "\"output\": \"%s\", \"a_scale\": %.9g, \"a_zero_point\": %d, "
                "\"b_scale\": %.9g, \"b_zero_point\": %d, \"y_scale\": %.9g, "
                "\"y_zero_point\": %d",
                l->name, x->name, b->name, y->name, (double) x->scale, (int) x->zero_point,
                (double) b->scale, (int) b->zero_point, (double) y->scale, (int) y->zero_point);
        break;
      }
      case GNET_OP_MAXPOOL:
        fprintf(js,
                "\"op\": \"maxpool\", \"name\": \"%s\", \"input\": \"%s\", \"output\": \"%s\", "
                "\"kernel\": [%zu,%zu], \"stride\": [%zu,%zu], \"pads\": [%zu,%zu,%zu,%zu]",
                l->name, x->name, y->name, l->kernel, l->kernel, l->stride, l->stride, l->pad,
                l->pad, l->pad, l->pad);
        break;
      case GNET_OP_GAP:
        fprintf(js,
                "\"op\": \"gap\", \"name\": \"%s\", \"input\": \"%s\", \"output\": \"%s\", "
                "\"x_scale\": %.9g, \"x_zero_point\": %d, \"y_scale\": %.9g, "
                "\"y_zero_point\": %d",
                l->name, x->name, y->name, (double) x->scale, (int) x->zero_point,
                (double) y->scale, (int) y->zero_point);
        break;
      default: /* not in the int8 networks */
        break;
    }
    fprintf(js, "}%s\n", i + 1 < net->layer_count ? "," : "");
  }
  fprintf(js, "  ]\n}\n");
  begin_array(&bw); /* the file ends at a multiple of 64 too */
  const int js_error = ferror(js) != 0;
  const int js_closed = fclose(js) == 0;
  const int bin_closed = fclose(bw.f) == 0;
  if (js_error || bw.error || !js_closed || !bin_closed) {
    fprintf(stderr, "gnet_export: write error\n");
    return -1;
  }
  return 0;
}
