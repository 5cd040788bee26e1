/*
 * The digits networks of train.py, from their float weights to gemmi8: calibrated and
 * quantized with the library's helpers, run through its operators, and scored on the
 * 360 held-out images of the file.
 *
 *   gemmi8-digits [-p percentile] [-r rounds] [-e expected.txt] [digits.g8d]
 *
 * Rows of the table:
 *   cnn  float            the float network, plain C loops (the reference)
 *   cnn  int8 fixed-point TFLite's arithmetic: gemmi8_qscheme_tflite parameters,
 *                         fixed-point requantization
 *   cnn  int8 fp32        ONNX's: gemmi8_qscheme_onnx parameters, fp32 requantization
 *   bnn  float            the binary network with float arithmetic around its signs
 *   bnn  binary           int8 first layer, two binary convolutions, and the classifier
 *                         on rows quantized at run time
 * The cnn runs as qu8s8 (uint8 activations, int8 per-channel weights): a 3x3
 * convolution, a depthwise 3x3 at stride 2, a 1x1 convolution and the classifier as a
 * GEMM with int32 output. -e compares each accuracy with the file's figure and fails
 * when one moves by more than MARGIN_IMAGES images.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gemmi8.h"

#define MARGIN_IMAGES 2
#define MAX_TENSORS 32

/* ---- the weights file ------------------------------------------------------------ */

struct tensor {
  char name[25];
  uint32_t dtype; /* 0 float32 (the int8 tensors of the file are read as float), 1 uint8 */
  uint32_t dims[4];
  size_t count;
  void* data;
};

static struct tensor tensors[MAX_TENSORS];
static size_t tensor_count;

static void die(const char* what)
{
  fprintf(stderr, "gemmi8-digits: %s\n", what);
  exit(2);
}

static void check(gemmi8_status status, const char* call)
{
  if (status != gemmi8_status_success) {
    fprintf(stderr, "gemmi8-digits: %s: %s\n", call, gemmi8_status_string(status));
    exit(2);
  }
}

static uint32_t read_u32(const unsigned char* p)
{
  return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static void load(const char* path)
{
  FILE* f = fopen(path, "rb");
  if (f == NULL) die("cannot open the weights file");
  unsigned char head[16];
  if (fread(head, 1, 16, f) != 16 || memcmp(head, "GEMMI8DG", 8) != 0 || read_u32(head + 8) != 1) {
    die("not a version 1 digits file");
  }
  tensor_count = read_u32(head + 12);
  if (tensor_count > MAX_TENSORS) die("too many tensors");
  for (size_t i = 0; i < tensor_count; i++) {
    struct tensor* t = &tensors[i];
    unsigned char h[48];
    if (fread(h, 1, 48, f) != 48) die("truncated file");
    memcpy(t->name, h, 24);
    t->name[24] = '\0';
    t->dtype = read_u32(h + 24);
    const uint32_t ndim = read_u32(h + 28);
    if (t->dtype > 2 || ndim < 1 || ndim > 4) die("bad tensor header");
    t->count = 1;
    for (int d = 0; d < 4; d++) {
      t->dims[d] = read_u32(h + 32 + 4 * d);
      if (t->dims[d] == 0 || t->dims[d] > (1u << 20)) die("bad tensor size");
      t->count *= t->dims[d];
    }
    if (t->count > (1u << 24)) die("tensor too large");
    const size_t bytes = t->count * (t->dtype == 0 ? 4 : 1);
    t->data = malloc(t->count * 4);
    if (t->data == NULL || fread(t->data, 1, bytes, f) != bytes) die("truncated file");
    if (t->dtype == 2) {
      /* int8 (the binary filters' signs) to float, from the end down */
      float* v = t->data;
      for (size_t j = t->count; j-- > 0;) v[j] = (float) ((int8_t*) t->data)[j];
      t->dtype = 0;
    } else if (t->dtype == 0) {
      /* little-endian floats to this machine's order */
      unsigned char* b = t->data;
      for (size_t j = 0; j < t->count; j++) {
        const uint32_t u = read_u32(b + 4 * j);
        memcpy(b + 4 * j, &u, 4);
      }
    }
    const size_t pad = (4 - bytes % 4) % 4;
    unsigned char skip[4];
    if (pad != 0 && fread(skip, 1, pad, f) != pad) die("truncated file");
  }
  fclose(f);
}

static const struct tensor* find(const char* name, uint32_t dtype, size_t count)
{
  for (size_t i = 0; i < tensor_count; i++) {
    if (strcmp(tensors[i].name, name) == 0) {
      if (tensors[i].dtype != dtype || tensors[i].count != count) {
        fprintf(stderr, "gemmi8-digits: tensor %s has the wrong type or size\n", name);
        exit(2);
      }
      return &tensors[i];
    }
  }
  fprintf(stderr, "gemmi8-digits: no tensor %s in the file\n", name);
  exit(2);
}

static const float* weights(const char* name, size_t count)
{
  return find(name, 0, count)->data;
}

/* ---- float reference ------------------------------------------------------------- */

/* NHWC convolution of one h x w image: co filters of kh x kw x ci (OHWI) per group,
 * padding top/left pt/pl (bottom/right implied by the output size oh x ow), taps
 * outside the image adding 0. */
struct conv_shape {
  size_t h, w, ci, co, groups, k, stride, pt, pl, oh, ow;
};

static void conv_f32(const struct conv_shape* s, const float* in, const float* wt,
                     const float* bias, float* out)
{
  const size_t cin = s->groups * s->ci, cout = s->groups * s->co;
  for (size_t oy = 0; oy < s->oh; oy++) {
    for (size_t ox = 0; ox < s->ow; ox++) {
      for (size_t g = 0; g < s->groups; g++) {
        for (size_t o = 0; o < s->co; o++) {
          const size_t oc = g * s->co + o;
          float acc = 0.0f;
          for (size_t y = 0; y < s->k; y++) {
            const size_t iy = oy * s->stride + y - s->pt; /* wraps when above the image */
            if (iy >= s->h) continue;
            for (size_t x = 0; x < s->k; x++) {
              const size_t ix = ox * s->stride + x - s->pl;
              if (ix >= s->w) continue;
              const float* p = in + (iy * s->w + ix) * cin + g * s->ci;
              const float* q = wt + ((oc * s->k + y) * s->k + x) * s->ci;
              for (size_t c = 0; c < s->ci; c++) acc += p[c] * q[c];
            }
          }
          out[(oy * s->ow + ox) * cout + oc] = bias != NULL ? acc + bias[oc] : acc;
        }
      }
    }
  }
}

static void relu(size_t n, float* x)
{
  for (size_t i = 0; i < n; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

static void fc_f32(size_t n, size_t k, const float* x, const float* w, const float* b,
                   float* y)
{
  for (size_t j = 0; j < n; j++) {
    float acc = 0.0f;
    for (size_t i = 0; i < k; i++) acc += x[i] * w[j * k + i];
    y[j] = acc + b[j];
  }
}

static size_t argmax(size_t n, const float* v)
{
  size_t best = 0;
  for (size_t i = 1; i < n; i++) {
    if (v[i] > v[best]) best = i;
  }
  return best;
}

/* The logits of the last image classified, for the outputs' hash. */
static float last_logits[10];

static size_t finish(const float* logits)
{
  memcpy(last_logits, logits, sizeof(last_logits));
  return argmax(10, logits);
}

static const struct conv_shape cnn_conv1 = {8, 8, 1, 16, 1, 3, 1, 1, 1, 8, 8};
static const struct conv_shape cnn_dw = {8, 8, 1, 1, 16, 3, 2, 1, 1, 4, 4};
static const struct conv_shape cnn_pw = {4, 4, 16, 32, 1, 1, 1, 0, 0, 4, 4};
static const struct conv_shape bnn_conv1 = {8, 8, 1, 32, 1, 3, 1, 1, 1, 8, 8};
static const struct conv_shape bnn_b2 = {8, 8, 32, 32, 1, 3, 1, 1, 1, 8, 8};
static const struct conv_shape bnn_b3 = {8, 8, 32, 64, 1, 3, 2, 1, 1, 4, 4};

struct cnn_f32 {
  const float *w1, *b1, *wd, *bd, *wp, *bp, *wf, *bf;
};

/* The float cnn; a0..a3 receive the input and each layer's activations. */
static size_t cnn_forward(const struct cnn_f32* m, const uint8_t* pixels, float* a0, float* a1,
                          float* a2, float* a3)
{
  float logits[10];
  for (size_t i = 0; i < 64; i++) a0[i] = (float) pixels[i] / 16.0f;
  conv_f32(&cnn_conv1, a0, m->w1, m->b1, a1);
  relu(8 * 8 * 16, a1);
  conv_f32(&cnn_dw, a1, m->wd, m->bd, a2);
  relu(4 * 4 * 16, a2);
  conv_f32(&cnn_pw, a2, m->wp, m->bp, a3);
  relu(4 * 4 * 32, a3);
  fc_f32(10, 512, a3, m->wf, m->bf, logits);
  return finish(logits);
}

struct bnn_f32 {
  const float *w1, *b1, *w2, *mul2, *add2, *w3, *mul3, *add3, *wf, *bf;
};

static float sign(float v) { return v < 0.0f ? -1.0f : 1.0f; }

static size_t bnn_forward(const struct bnn_f32* m, const uint8_t* pixels)
{
  float x[64], a1[8 * 8 * 32], a2[8 * 8 * 32], z3[4 * 4 * 64], logits[10];
  for (size_t i = 0; i < 64; i++) x[i] = (float) pixels[i] / 16.0f;
  conv_f32(&bnn_conv1, x, m->w1, m->b1, a1);
  for (size_t i = 0; i < 8 * 8 * 32; i++) a1[i] = sign(a1[i]);
  /* the +1/-1 sums are exact integers in float */
  conv_f32(&bnn_b2, a1, m->w2, NULL, a2);
  for (size_t i = 0; i < 8 * 8 * 32; i++) a2[i] = sign(a2[i] * m->mul2[i % 32] + m->add2[i % 32]);
  conv_f32(&bnn_b3, a2, m->w3, NULL, z3);
  for (size_t i = 0; i < 4 * 4 * 64; i++) z3[i] = z3[i] * m->mul3[i % 64] + m->add3[i % 64];
  fc_f32(10, 1024, z3, m->wf, m->bf, logits);
  return finish(logits);
}

/* ---- quantization with the helpers ----------------------------------------------- */

struct qact {
  float scale;
  int32_t zero_point;
};

static struct qact act_params(gemmi8_qscheme scheme, const gemmi8_calibration* cal,
                              double percentile)
{
  float lo, hi;
  struct qact q;
  check(gemmi8_calibration_range(cal, percentile, &lo, &hi), "gemmi8_calibration_range");
  check(gemmi8_choose_qparams(scheme, gemmi8_qrange_u8, 1, &lo, &hi, &q.scale, &q.zero_point),
        "gemmi8_choose_qparams");
  return q;
}

/* int8 weights, symmetric per output channel: rows x cols floats to wq and wscale. */
static void quantize_weights(gemmi8_qscheme scheme, size_t rows, size_t cols, const float* w,
                             int8_t* wq, float* wscale)
{
  float lo[64], hi[64];
  int32_t zp[64];
  for (size_t r = 0; r < rows; r++) {
    lo[r] = hi[r] = w[r * cols];
    for (size_t c = 1; c < cols; c++) {
      const float v = w[r * cols + c];
      lo[r] = v < lo[r] ? v : lo[r];
      hi[r] = v > hi[r] ? v : hi[r];
    }
  }
  check(gemmi8_choose_qparams(scheme, gemmi8_qrange_s8_symmetric, rows, lo, hi, wscale, zp),
        "gemmi8_choose_qparams");
  check(gemmi8_quantize_f32(scheme, gemmi8_qrange_s8_symmetric, gemmi8_qaxis_row, rows, cols, w,
                            wscale, zp, wq),
        "gemmi8_quantize_f32");
}

/* A quantized qu8s8 layer: int8 weights, int32 bias and the requantization to out. */
struct qlayer {
  int8_t w[10 * 1024];
  float wscale[64];
  int32_t bias[64];
  float rscale[64];
  int32_t multiplier[64], shift[64];
  gemmi8_requant rq;
};

static void quantize_layer(gemmi8_qscheme scheme, size_t co, size_t depth, const float* w,
                           const float* b, struct qact in, const struct qact* out,
                           struct qlayer* q)
{
  quantize_weights(scheme, co, depth, w, q->w, q->wscale);
  check(gemmi8_quantize_bias(scheme, co, b, in.scale, q->wscale, 1, q->bias),
        "gemmi8_quantize_bias");
  if (out == NULL) return;
  check(gemmi8_requant_scales(scheme, co, in.scale, q->wscale, out->scale, q->rscale,
                              q->multiplier, q->shift),
        "gemmi8_requant_scales");
  memset(&q->rq, 0, sizeof(q->rq));
  q->rq.mode = scheme == gemmi8_qscheme_tflite ? gemmi8_requant_fixedpoint : gemmi8_requant_fp32;
  q->rq.per_channel = 1;
  q->rq.multiplier = q->multiplier;
  q->rq.shift = q->shift;
  q->rq.scale = q->rscale;
  q->rq.zero_point = out->zero_point;
  q->rq.min = out->zero_point; /* the ReLU */
  q->rq.max = 255;
}

static gemmi8_conv_geometry geometry(const struct conv_shape* s, size_t pb, size_t pr)
{
  gemmi8_conv_geometry g;
  memset(&g, 0, sizeof(g));
  g.kernel_height = g.kernel_width = s->k;
  g.stride_height = g.stride_width = s->stride;
  g.dilation_height = g.dilation_width = 1;
  g.padding_top = s->pt;
  g.padding_left = s->pl;
  g.padding_bottom = pb;
  g.padding_right = pr;
  g.groups = s->groups;
  g.group_input_channels = s->ci;
  g.group_output_channels = s->co;
  return g;
}

/* in_stride and out_stride in the operator's elements (words for bits) */
static void setup(gemmi8_convolution* op, const struct conv_shape* s, const void* in,
                  size_t in_stride, void* out, size_t out_stride)
{
  size_t oh, ow;
  check(gemmi8_convolution_setup(op, 1, s->h, s->w, in, in_stride, out, out_stride, &oh, &ow),
        "gemmi8_convolution_setup");
  if (oh != s->oh || ow != s->ow) die("unexpected output size");
}

/* ---- the int8 cnn ------------------------------------------------------------------ */

struct cnn_q8 {
  struct qact in;
  gemmi8_convolution *conv1, *dw, *pw;
  void* fc;
  float fc_scale[10];
  uint8_t x[64], a1[8 * 8 * 16], a2[4 * 4 * 16], a3[4 * 4 * 32];
  int32_t acc[10];
};

static void cnn_q8_create(gemmi8_qscheme scheme, const struct cnn_f32* m,
                          gemmi8_calibration* const cal[4], double percentile,
                          struct cnn_q8* q)
{
  struct qact act[4];
  for (int i = 0; i < 4; i++) act[i] = act_params(scheme, cal[i], percentile);
  q->in = act[0];
  static struct qlayer l; /* large: off the stack */
  gemmi8_conv_geometry g;

  quantize_layer(scheme, 16, 9, m->w1, m->b1, act[0], &act[1], &l);
  g = geometry(&cnn_conv1, 1, 1);
  check(gemmi8_qu8s8_convolution_create(&g, l.w, (uint8_t) act[0].zero_point, l.bias, &l.rq,
                                        &q->conv1),
        "gemmi8_qu8s8_convolution_create");
  quantize_layer(scheme, 16, 9, m->wd, m->bd, act[1], &act[2], &l);
  g = geometry(&cnn_dw, 0, 0);
  check(gemmi8_qu8s8_convolution_create(&g, l.w, (uint8_t) act[1].zero_point, l.bias, &l.rq,
                                        &q->dw),
        "gemmi8_qu8s8_convolution_create");
  quantize_layer(scheme, 32, 16, m->wp, m->bp, act[2], &act[3], &l);
  g = geometry(&cnn_pw, 0, 0);
  check(gemmi8_qu8s8_convolution_create(&g, l.w, (uint8_t) act[2].zero_point, l.bias, &l.rq,
                                        &q->pw),
        "gemmi8_qu8s8_convolution_create");
  quantize_layer(scheme, 10, 512, m->wf, m->bf, act[3], NULL, &l);
  check(gemmi8_qu8s8_pack_alloc(10, 512, l.w, 512, GEMMI8_B_NK, (uint8_t) act[3].zero_point,
                                l.bias, &q->fc),
        "gemmi8_qu8s8_pack_alloc");
  for (int n = 0; n < 10; n++) q->fc_scale[n] = act[3].scale * l.wscale[n];

  setup(q->conv1, &cnn_conv1, q->x, 1, q->a1, 16);
  setup(q->dw, &cnn_dw, q->a1, 16, q->a2, 16);
  setup(q->pw, &cnn_pw, q->a2, 16, q->a3, 32);
}

static size_t cnn_q8_forward(gemmi8_qscheme scheme, struct cnn_q8* q, const uint8_t* pixels)
{
  float x[64], logits[10];
  for (size_t i = 0; i < 64; i++) x[i] = (float) pixels[i] / 16.0f;
  check(gemmi8_quantize_f32(scheme, gemmi8_qrange_u8, gemmi8_qaxis_tensor, 1, 64, x,
                            &q->in.scale, &q->in.zero_point, q->x),
        "gemmi8_quantize_f32");
  check(gemmi8_convolution_run(q->conv1, NULL), "gemmi8_convolution_run");
  check(gemmi8_convolution_run(q->dw, NULL), "gemmi8_convolution_run");
  check(gemmi8_convolution_run(q->pw, NULL), "gemmi8_convolution_run");
  check(gemmi8_qu8s8_gemm_s32(1, 10, 512, q->a3, 512, q->fc, q->acc, 10), "gemmi8_qu8s8_gemm_s32");
  for (int n = 0; n < 10; n++) logits[n] = (float) q->acc[n] * q->fc_scale[n];
  return finish(logits);
}

static void cnn_q8_destroy(struct cnn_q8* q)
{
  gemmi8_convolution_destroy(q->conv1);
  gemmi8_convolution_destroy(q->dw);
  gemmi8_convolution_destroy(q->pw);
  gemmi8_packed_free(q->fc);
}

/* ---- the binary network ------------------------------------------------------------ */

struct bnn_bin {
  struct qact in;
  gemmi8_convolution *conv1, *b2, *b3;
  void* fc;
  void* workspace;
  size_t workspace_size;
  uint8_t x[64];
  int32_t acc1[8 * 8 * 32];
  int8_t sign1[8 * 8 * 32];
  uint64_t bits1[8 * 8], bits2[8 * 8];
  float z3[4 * 4 * 64];
};

/* +1/-1 filters (as floats) to bit taps: co x taps words, bit c set for -1. */
static void pack_signs(size_t co, size_t taps, size_t ci, const float* w, uint64_t* bits)
{
  for (size_t t = 0; t < co * taps; t++) {
    uint64_t word = 0;
    for (size_t c = 0; c < ci; c++) word |= (uint64_t) (w[t * ci + c] < 0.0f) << c;
    bits[t] = word;
  }
}

static void bnn_bin_create(const struct bnn_f32* m, const gemmi8_calibration* cal_in,
                           double percentile, struct bnn_bin* q)
{
  const gemmi8_qscheme scheme = gemmi8_qscheme_onnx;
  q->in = act_params(scheme, cal_in, percentile);
  static struct qlayer l;
  gemmi8_conv_geometry g;

  /* int8 first layer with int32 output: its sign is the accumulator's */
  quantize_layer(scheme, 32, 9, m->w1, m->b1, q->in, NULL, &l);
  g = geometry(&bnn_conv1, 1, 1);
  check(gemmi8_qu8s8_convolution_create_s32(&g, l.w, (uint8_t) q->in.zero_point, l.bias,
                                            &q->conv1),
        "gemmi8_qu8s8_convolution_create_s32");

  static uint64_t wbits[64 * 9];
  gemmi8_bin_conv_output out;
  memset(&out, 0, sizeof(out));
  out.kind = gemmi8_bin_output_bits;
  out.multiplier = m->mul2;
  out.bias = m->add2;
  pack_signs(32, 9, 32, m->w2, wbits);
  g = geometry(&bnn_b2, 1, 1);
  check(gemmi8_bin_convolution_create(&g, wbits, GEMMI8_BIN_ZERO_PADDING, &out, &q->b2),
        "gemmi8_bin_convolution_create");

  out.kind = gemmi8_bin_output_f32;
  out.multiplier = m->mul3;
  out.bias = m->add3;
  out.output_min = -INFINITY;
  out.output_max = INFINITY;
  pack_signs(64, 9, 32, m->w3, wbits);
  g = geometry(&bnn_b3, 0, 0);
  check(gemmi8_bin_convolution_create(&g, wbits, GEMMI8_BIN_ZERO_PADDING, &out, &q->b3),
        "gemmi8_bin_convolution_create");

  /* the classifier on its input rows quantized at run time (qd8), int8 weights */
  quantize_weights(scheme, 10, 1024, m->wf, l.w, l.wscale);
  check(gemmi8_qd8_pack_alloc(10, 1024, l.w, 1024, GEMMI8_B_NK, l.wscale, m->bf, &q->fc),
        "gemmi8_qd8_pack_alloc");
  check(gemmi8_qd8_linear_workspace_size(1, 1024, &q->workspace_size),
        "gemmi8_qd8_linear_workspace_size");
  q->workspace = aligned_alloc(64, (q->workspace_size + 63) / 64 * 64);
  if (q->workspace == NULL) die("out of memory");

  setup(q->conv1, &bnn_conv1, q->x, 1, q->acc1, 32);
  setup(q->b2, &bnn_b2, q->bits1, 1, q->bits2, 1);
  setup(q->b3, &bnn_b3, q->bits2, 1, q->z3, 64);
}

static size_t bnn_bin_forward(struct bnn_bin* q, const uint8_t* pixels)
{
  float x[64], logits[10];
  for (size_t i = 0; i < 64; i++) x[i] = (float) pixels[i] / 16.0f;
  check(gemmi8_quantize_f32(gemmi8_qscheme_onnx, gemmi8_qrange_u8, gemmi8_qaxis_tensor, 1, 64, x,
                            &q->in.scale, &q->in.zero_point, q->x),
        "gemmi8_quantize_f32");
  check(gemmi8_convolution_run(q->conv1, NULL), "gemmi8_convolution_run");
  for (size_t i = 0; i < 8 * 8 * 32; i++) q->sign1[i] = q->acc1[i] < 0 ? -1 : 1;
  check(gemmi8_bin_pack_rows_s8(64, 32, q->sign1, 32, q->bits1, 1), "gemmi8_bin_pack_rows_s8");
  check(gemmi8_convolution_run(q->b2, NULL), "gemmi8_convolution_run");
  check(gemmi8_convolution_run(q->b3, NULL), "gemmi8_convolution_run");
  check(gemmi8_qd8_linear_f32(1, 10, 1024, q->z3, 1024, q->fc, -INFINITY, INFINITY, logits, 10,
                              q->workspace, q->workspace_size, NULL),
        "gemmi8_qd8_linear_f32");
  return finish(logits);
}

static void bnn_bin_destroy(struct bnn_bin* q)
{
  gemmi8_convolution_destroy(q->conv1);
  gemmi8_convolution_destroy(q->b2);
  gemmi8_convolution_destroy(q->b3);
  gemmi8_packed_free(q->fc);
  free(q->workspace);
}

/* ---- scoring ----------------------------------------------------------------------- */

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

enum variant { CNN_F32, CNN_FIXED, CNN_FP32, BNN_F32, BNN_BIN, VARIANTS };

static const char* const variant_net[VARIANTS] = {"cnn", "cnn", "cnn", "bnn", "bnn"};
static const char* const variant_name[VARIANTS] = {"float", "int8 fixed-point", "int8 fp32",
                                                   "float", "binary"};
static const char* const variant_key[VARIANTS] = {"cnn-float", "cnn-int8-fixedpoint",
                                                  "cnn-int8-fp32", "bnn-float", "bnn-binary"};

struct nets {
  struct cnn_f32 cnn;
  struct bnn_f32 bnn;
  struct cnn_q8 fixed, fp32;
  struct bnn_bin bin;
};

static size_t classify(struct nets* n, enum variant v, const uint8_t* pixels)
{
  static float a0[64], a1[8 * 8 * 16], a2[4 * 4 * 16], a3[4 * 4 * 32];
  switch (v) {
    case CNN_F32: return cnn_forward(&n->cnn, pixels, a0, a1, a2, a3);
    case CNN_FIXED: return cnn_q8_forward(gemmi8_qscheme_tflite, &n->fixed, pixels);
    case CNN_FP32: return cnn_q8_forward(gemmi8_qscheme_onnx, &n->fp32, pixels);
    case BNN_F32: return bnn_forward(&n->bnn, pixels);
    default: return bnn_bin_forward(&n->bin, pixels);
  }
}

static double expected_accuracy(const char* path, const char* key)
{
  FILE* f = fopen(path, "r");
  if (f == NULL) die("cannot open the expected accuracies");
  char line[256], name[128];
  double value = -1.0, v;
  while (fgets(line, sizeof(line), f) != NULL) {
    if (line[0] != '#' && sscanf(line, "%127s %lf", name, &v) == 2 && strcmp(name, key) == 0) {
      value = v;
    }
  }
  fclose(f);
  if (value < 0.0) {
    fprintf(stderr, "gemmi8-digits: no figure for %s in %s\n", key, path);
    exit(2);
  }
  return value;
}

int main(int argc, char** argv)
{
  const char* path = "examples/digits/digits.g8d";
  const char* expect = NULL;
  double percentile = 100.0;
  int rounds = 3;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-p") == 0 && i + 1 < argc) {
      percentile = atof(argv[++i]);
    } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else if (strcmp(argv[i], "-e") == 0 && i + 1 < argc) {
      expect = argv[++i];
    } else if (argv[i][0] != '-') {
      path = argv[i];
    } else {
      fprintf(stderr, "usage: gemmi8-digits [-p percentile] [-r rounds] [-e expected.txt] "
                      "[digits.g8d]\n");
      return 2;
    }
  }
  if (rounds < 1) rounds = 1;
  load(path);

  static struct nets n;
  n.cnn = (struct cnn_f32){weights("cnn.conv1.w", 16 * 9), weights("cnn.conv1.b", 16),
                           weights("cnn.dw.w", 16 * 9),    weights("cnn.dw.b", 16),
                           weights("cnn.pw.w", 32 * 16),   weights("cnn.pw.b", 32),
                           weights("cnn.fc.w", 10 * 512),  weights("cnn.fc.b", 10)};
  n.bnn = (struct bnn_f32){weights("bnn.conv1.w", 32 * 9), weights("bnn.conv1.b", 32),
                           weights("bnn.b2.w", 32 * 9 * 32), weights("bnn.b2.mul", 32),
                           weights("bnn.b2.add", 32),     weights("bnn.b3.w", 64 * 9 * 32),
                           weights("bnn.b3.mul", 64),     weights("bnn.b3.add", 64),
                           weights("bnn.fc.w", 10 * 1024), weights("bnn.fc.b", 10)};
  const size_t ncalib = 200;
  const uint8_t* calib = find("calib.x", 1, ncalib * 64)->data;
  const uint8_t* test_x = find("test.x", 1, 360 * 64)->data;
  const uint8_t* test_y = find("test.y", 1, 360)->data;
  const size_t ntest = 360;
  const float file_acc[2] = {*weights("acc.cnn", 1), *weights("acc.bnn", 1)};

  /* calibration: the float cnn's activations over the calibration images */
  gemmi8_calibration* cal[4];
  for (int i = 0; i < 4; i++) check(gemmi8_calibration_create(1, &cal[i]), "gemmi8_calibration_create");
  {
    static float a0[64], a1[8 * 8 * 16], a2[4 * 4 * 16], a3[4 * 4 * 32];
    for (size_t i = 0; i < ncalib; i++) {
      cnn_forward(&n.cnn, calib + 64 * i, a0, a1, a2, a3);
      check(gemmi8_calibration_update(cal[0], 64, a0), "gemmi8_calibration_update");
      check(gemmi8_calibration_update(cal[1], sizeof(a1) / 4, a1), "gemmi8_calibration_update");
      check(gemmi8_calibration_update(cal[2], sizeof(a2) / 4, a2), "gemmi8_calibration_update");
      check(gemmi8_calibration_update(cal[3], sizeof(a3) / 4, a3), "gemmi8_calibration_update");
    }
  }
  cnn_q8_create(gemmi8_qscheme_tflite, &n.cnn, cal, percentile, &n.fixed);
  cnn_q8_create(gemmi8_qscheme_onnx, &n.cnn, cal, percentile, &n.fp32);
  bnn_bin_create(&n.bnn, cal[0], percentile, &n.bin);

  printf("digits: %zu test images, %zu calibration images, percentile %g, kernels %s\n\n", ntest,
         ncalib, percentile, gemmi8_isa_name());
  printf("| network | arithmetic | accuracy | correct | us / image | logits hash |\n");
  printf("|---|---|---:|---:|---:|---|\n");
  int failed = 0;
  size_t agree_fixed = 0, agree_fp32 = 0;
  for (size_t i = 0; i < ntest; i++) {
    const size_t f = classify(&n, CNN_F32, test_x + 64 * i);
    agree_fixed += classify(&n, CNN_FIXED, test_x + 64 * i) == f;
    agree_fp32 += classify(&n, CNN_FP32, test_x + 64 * i) == f;
  }
  for (int v = 0; v < VARIANTS; v++) {
    size_t correct = 0;
    uint32_t hash = 2166136261u; /* FNV-1a over every image's logits, as bytes */
    for (size_t i = 0; i < ntest; i++) {
      correct += classify(&n, v, test_x + 64 * i) == test_y[i];
      const unsigned char* b = (const unsigned char*) last_logits;
      for (size_t j = 0; j < sizeof(last_logits); j++) hash = (hash ^ b[j]) * 16777619u;
    }
    double best = INFINITY;
    for (int r = 0; r < rounds; r++) {
      const double t0 = now();
      for (size_t i = 0; i < ntest; i++) classify(&n, v, test_x + 64 * i);
      const double t = now() - t0;
      best = t < best ? t : best;
    }
    const double accuracy = (double) correct / (double) ntest;
    printf("| %s | %s | %.2f%% | %zu / %zu | %.2f | %08x |\n", variant_net[v], variant_name[v],
           100.0 * accuracy, correct, ntest, 1e6 * best / (double) ntest, (unsigned) hash);
    if (expect != NULL) {
      const double want = expected_accuracy(expect, variant_key[v]);
      if (fabs(accuracy - want) * (double) ntest > MARGIN_IMAGES + 0.5) {
        fprintf(stderr, "gemmi8-digits: %s accuracy %.4f, expected %.4f (margin %d images)\n",
                variant_key[v], accuracy, want, MARGIN_IMAGES);
        failed = 1;
      }
    }
    if (v == CNN_F32 || v == BNN_F32) {
      const float want = file_acc[v == BNN_F32];
      if (fabs(accuracy - want) * (double) ntest > MARGIN_IMAGES + 0.5) {
        fprintf(stderr, "gemmi8-digits: %s accuracy %.4f, the training script measured %.4f\n",
                variant_key[v], accuracy, want);
        failed = 1;
      }
    }
  }
  printf("\nint8 predictions equal to the float cnn's: fixed-point %zu / %zu, fp32 %zu / %zu\n",
         agree_fixed, ntest, agree_fp32, ntest);
  printf("float accuracies measured by train.py: cnn %.2f%%, bnn %.2f%%\n", 100.0 * file_acc[0],
         100.0 * file_acc[1]);

  cnn_q8_destroy(&n.fixed);
  cnn_q8_destroy(&n.fp32);
  bnn_bin_destroy(&n.bin);
  for (int i = 0; i < 4; i++) gemmi8_calibration_destroy(cal[i]);
  for (size_t i = 0; i < tensor_count; i++) free(tensors[i].data);
  if (expect != NULL) printf("%s\n", failed ? "accuracy check: FAILED" : "accuracy check: ok");
  return failed;
}
