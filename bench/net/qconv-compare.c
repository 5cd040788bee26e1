/*
 * gemmi8's qu8s8 convolution against ONNX Runtime's QLinearConv, byte for byte and in
 * time, on one thread each.
 *
 *   qconv-compare [-l LIB] [-p PYTHON] [-s SCRIPT] [-w WORKDIR] [-r ROUNDS] [-t MS]
 *                 [LAYER...]
 *     -l  ONNX Runtime's library (default: $GEMMI8_ORT_LIB; ort-fetch.sh prints it)
 *     -p  a python3 with onnx and numpy (default: $GEMMI8_NET_PYTHON, else python3)
 *     -s  qconv_model.py (default: bench/net/qconv_model.py)
 *     -w  where the layers and models are written (default: a new /tmp/qconv-XXXXXX)
 *     -r  timed rounds per layer (default 7), -t their length in ms (default 40)
 *     LAYER  names of the layers to run (default: all; -h lists them)
 *
 * For each layer: random uint8 NHWC input with a nonzero zero point, random int8
 * weights over the whole range (-128 included; [-64, 63] on the layer of 7-bit
 * weights), int32 bias, per-output-channel (or per-tensor) weight scales. gemmi8 runs gemmi8_qu8s8_convolution_create with
 * gemmi8_requant_fp32 and per-channel scales x_scale * w_scale[c] / y_scale computed
 * in float, left to right, as ONNX Runtime computes them. The layer's weights, bias
 * and scales go to WORKDIR/LAYER/ as raw files; qconv_model.py turns them into a
 * one-node QLinearConv model (OIHW weights), which ONNX Runtime runs on the same input
 * transposed to NCHW; its NCHW output is compared with gemmi8's NHWC output.
 *
 * Every output is also recomputed from its exact accumulator (from the definition)
 * by candidate arithmetics: the scale's float order, double precision, rounding half
 * away from zero, gemmi8's fixed-point mode, and the int16 pair saturation of x86's
 * vpmaddubsw (which ONNX Runtime's u8s8 kernels for CPUs without VNNI have); the
 * count of bytes each gets wrong says which one ONNX Runtime's bytes follow, and how
 * far apart the candidates are on the layer's data (the "ties" layers put many
 * products on a half). Differing bytes are listed with their accumulator.
 *
 * Timing: gemmi8_convolution_run on the calling thread against a whole OrtApi Run
 * (input value made, run, output value released: what a caller of ONNX Runtime pays)
 * with intra-op threads 1; rounds of the two interleaved, the best round of each
 * reported. A second session with profiling on gives the nodes ONNX Runtime ran after
 * its graph rewrites (its NHWC QLinearConv between two Transposes) and the best
 * kernel time of each; the QLinearConv node's alone is the "ORT conv" column.
 *
 * Exit status: 0 every layer equal, 1 some bytes differ, 2 an error.
 */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gemmi8.h>

#include "ort.h"

extern char** environ;

typedef struct layer {
  const char* name;
  const char* what;
  size_t h, w;               /* input size */
  size_t cin, cout, groups;  /* channels of the layer (all groups) */
  size_t kh, kw, sh, sw, dh, dw;
  size_t pt, pl, pb, pr;     /* padding: top, left, bottom, right */
  int per_tensor;            /* one weight scale for every channel */
  int pow2;                  /* power-of-two scales, small values: many halves */
  int w7;                    /* weights in [-64, 63], as quantizers' reduce_range */
} layer;

/* clang-format off */
static const layer layers[] = {
  /* name        what                                           h    w  cin cout  grp kh kw sh sw dh dw pt pl pb pr; per-tensor, pow2, w7 */
  {"conv3x3",    "3x3 stride 1 (ResNet stage 2)",               28,  28,  64,  64,   1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0},
  {"conv3x3s2",  "3x3 stride 2 (ResNet downsampling)",          28,  28,  64, 128,   1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0},
  {"conv1x1",    "1x1 (pointwise, in place)",                   28,  28, 128, 256,   1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0},
  {"conv1x1s2",  "1x1 stride 2 (ResNet shortcut)",              28,  28,  64, 128,   1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0},
  {"first7x7s2", "7x7 stride 2, 3 channels (stem)",            224, 224,   3,  64,   1, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 0, 0, 0},
  {"dw3x3",      "depthwise 3x3 (MobileNetV2)",                 56,  56, 144, 144, 144, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0},
  {"dw3x3s2",    "depthwise 3x3 stride 2, pads 0 0 1 1",        56,  56,  96,  96,  96, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 0, 0, 0},
  {"dw3x3x2",    "depthwise 3x3, channel multiplier 2",         20,  20,  32,  64,  32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0},
  {"grouped3x3", "3x3, 4 groups of 16",                         14,  14,  64,  64,   4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0},
  {"odd3x5",     "3x5 stride 2x1, odd sizes, pads 0 2 1 1",     17,  23,  19,  37,   1, 3, 5, 2, 1, 1, 1, 0, 2, 1, 1, 0, 0, 0},
  {"dilated3x3", "3x3 dilation 2, pads 2 1 2 3",                15,  13,   8,  16,   1, 3, 3, 1, 1, 2, 2, 2, 1, 2, 3, 0, 0, 0},
  {"pertensor",  "3x3, one weight scale",                       14,  14,  32,  48,   1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
  {"ties",       "3x3, power-of-two scales (halves)",           14,  14,  32,  32,   1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},
  {"ties1x1",    "1x1, power-of-two scales (halves)",           14,  14,  64,  32,   1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0},
  {"dwties",     "depthwise 3x3, power-of-two scales",          14,  14,  64,  64,  64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0},
  {"conv3x3w7",  "3x3, 7-bit weights (reduce_range)",           28,  28,  64,  64,   1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1},
};
/* clang-format on */
enum { layer_count = sizeof(layers) / sizeof(layers[0]) };

/* ---- small helpers ------------------------------------------------------------ */

static uint64_t rng_state;

/* splitmix64: fixed seeds give the same layers on every run. */
static uint64_t rand64(void)
{
  uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static double unit(void)
{
  return (double) (rand64() >> 11) * 0x1.0p-53;
}

static int32_t range(int32_t lo, int32_t hi)
{
  return lo + (int32_t) (rand64() % (uint64_t) (hi - lo + 1));
}

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

static void* xmalloc(size_t bytes)
{
  void* p = malloc(bytes == 0 ? 1 : bytes);
  if (p == NULL) {
    fprintf(stderr, "qconv-compare: out of memory (%zu bytes)\n", bytes);
    exit(2);
  }
  return p;
}

static int write_file(const char* dir, const char* name, const void* data, size_t bytes)
{
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE* f = fopen(path, "wb");
  if (f == NULL || fwrite(data, 1, bytes, f) != bytes || fclose(f) != 0) {
    fprintf(stderr, "qconv-compare: cannot write %s: %s\n", path, strerror(errno));
    return -1;
  }
  return 0;
}

/* Runs argv[0] (looked up in PATH) and waits: 0 when it exited 0. */
static int run_program(char* const argv[])
{
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
  if (err != 0) {
    fprintf(stderr, "qconv-compare: cannot run %s: %s\n", argv[0], strerror(err));
    return -1;
  }
  int status;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static uint8_t clamp_u8(double v)
{
  return (uint8_t) (v < 0 ? 0 : v > 255 ? 255 : v);
}

/* ---- one layer's data ---------------------------------------------------------- */

typedef struct data {
  size_t oh, ow, ci, co, taps;
  uint8_t* x;        /* NHWC input */
  int8_t* w;         /* gemmi8's layout: groups x co x kh x kw x ci */
  int32_t* bias;     /* cout */
  float* w_scale;    /* cout, or 1 (per tensor) */
  float* scale;      /* cout: x_scale * w_scale[c] / y_scale in float, left to right */
  float x_scale, y_scale;
  uint8_t x_zp, y_zp;
} data;

static void make_data(const layer* L, data* d)
{
  d->ci = L->cin / L->groups;
  d->co = L->cout / L->groups;
  d->taps = L->kh * L->kw;
  d->oh = (L->h + L->pt + L->pb - L->dh * (L->kh - 1) - 1) / L->sh + 1;
  d->ow = (L->w + L->pl + L->pr - L->dw * (L->kw - 1) - 1) / L->sw + 1;
  const size_t n_x = L->h * L->w * L->cin, n_w = L->cout * d->taps * d->ci;
  const size_t n_scale = L->per_tensor ? 1 : L->cout;
  d->x = xmalloc(n_x);
  d->w = xmalloc(n_w);
  d->bias = xmalloc(L->cout * sizeof(int32_t));
  d->w_scale = xmalloc(n_scale * sizeof(float));
  d->scale = xmalloc(L->cout * sizeof(float));
  d->x_zp = (uint8_t) range(96, 160);
  d->y_zp = (uint8_t) range(96, 160);
  if (L->pow2) {
    /* Small accumulators and scales 1, 1/2, 1/4, 1/8 (x_scale 2^-4, w_scale 2^-(c % 4),
     * y_scale 2^-4): (float) acc * scale is exact, unclamped, and on a half for half,
     * a quarter, an eighth of the accumulators of those channels: the rounding of
     * ties decides many bytes. */
    for (size_t i = 0; i < n_x; i++) d->x[i] = (uint8_t) (d->x_zp + range(-2, 2));
    for (size_t i = 0; i < n_w; i++) d->w[i] = (int8_t) range(-1, 1);
    for (size_t c = 0; c < L->cout; c++) d->bias[c] = range(-8, 8);
    d->x_scale = 0x1.0p-4f;
    for (size_t c = 0; c < n_scale; c++) d->w_scale[c] = ldexpf(1.0f, -(int) (c % 4));
    d->y_scale = 0x1.0p-4f;
  } else {
    for (size_t i = 0; i < n_x; i++) d->x[i] = (uint8_t) rand64();
    for (size_t i = 0; i < n_w; i++) {
      d->w[i] = L->w7 ? (int8_t) range(-64, 63) : (int8_t) (uint8_t) rand64();
    }
    /* The accumulator's spread: the depth times the variances of uniform bytes (about
     * 74 each way from the zero point); the output scale maps it onto about +-40
     * steps of the geometric mean channel, so some channels saturate and most do
     * not. */
    const double acc_sd = sqrt((double) (d->taps * d->ci)) * 74.0 * (L->w7 ? 37.0 : 74.0);
    const int32_t bias_max = (int32_t) (acc_sd / 2);
    for (size_t c = 0; c < L->cout; c++) d->bias[c] = range(-bias_max, bias_max);
    d->x_scale = (float) (0.005 * pow(10.0, unit()));
    double log_sum = 0;
    for (size_t c = 0; c < n_scale; c++) {
      d->w_scale[c] = (float) (0.001 * pow(10.0, unit()));
      log_sum += log(d->w_scale[c]);
    }
    const double w_mean = exp(log_sum / (double) n_scale);
    d->y_scale = (float) ((double) d->x_scale * w_mean * acc_sd / 40.0);
  }
  for (size_t c = 0; c < L->cout; c++) {
    /* ONNX Runtime's order: (x_scale * w_scale) / y_scale, each step in float. */
    const float xw = d->x_scale * d->w_scale[L->per_tensor ? 0 : c];
    d->scale[c] = xw / d->y_scale;
  }
}

static void free_data(data* d)
{
  free(d->x);
  free(d->w);
  free(d->bias);
  free(d->w_scale);
  free(d->scale);
}

/* The layer's files for qconv_model.py: layer.txt, w.bin (OIHW), w_scale.bin,
 * bias.bin. */
static int write_layer(const layer* L, const data* d, const char* dir)
{
  char text[2048];
  snprintf(text, sizeof(text),
           "input 1 %zu %zu %zu\noutput_channels %zu\ngroup %zu\nkernel %zu %zu\n"
           "strides %zu %zu\npads %zu %zu %zu %zu\ndilations %zu %zu\n"
           "x_scale %a\nx_zero_point %u\ny_scale %a\ny_zero_point %u\n",
           L->cin, L->h, L->w, L->cout, L->groups, L->kh, L->kw, L->sh, L->sw, L->pt, L->pl,
           L->pb, L->pr, L->dh, L->dw, (double) d->x_scale, (unsigned) d->x_zp,
           (double) d->y_scale, (unsigned) d->y_zp);
  const size_t n_w = L->cout * d->taps * d->ci;
  int8_t* oihw = xmalloc(n_w);
  /* gemmi8: [g][o][y][x][c]; ONNX: [g * co + o][c][y][x]. */
  for (size_t oc = 0; oc < L->cout; oc++) {
    for (size_t t = 0; t < d->taps; t++) {
      for (size_t c = 0; c < d->ci; c++) {
        oihw[(oc * d->ci + c) * d->taps + t] = d->w[(oc * d->taps + t) * d->ci + c];
      }
    }
  }
  int err = write_file(dir, "layer.txt", text, strlen(text));
  if (err == 0) err = write_file(dir, "w.bin", oihw, n_w);
  if (err == 0) {
    err = write_file(dir, "w_scale.bin", d->w_scale,
                     (L->per_tensor ? 1 : L->cout) * sizeof(float));
  }
  if (err == 0) err = write_file(dir, "bias.bin", d->bias, L->cout * sizeof(int32_t));
  free(oihw);
  return err;
}

/* ---- gemmi8 -------------------------------------------------------------------- */

static gemmi8_convolution* gemmi8_layer(const layer* L, const data* d, gemmi8_requant_mode mode,
                                        uint8_t* out)
{
  const gemmi8_conv_geometry g = {L->kh, L->kw, L->sh, L->sw, L->dh, L->dw, L->pt,
                                  L->pl, L->pb, L->pr, L->groups, d->ci, d->co};
  const size_t n = L->per_tensor ? 1 : L->cout;
  int32_t* multiplier = xmalloc(n * sizeof(int32_t));
  int32_t* shift = xmalloc(n * sizeof(int32_t));
  for (size_t c = 0; c < n; c++) {
    gemmi8_quantize_multiplier((double) d->scale[c], &multiplier[c], &shift[c]);
  }
  const gemmi8_requant rq = {.mode = mode,
                             .per_channel = !L->per_tensor,
                             .multiplier = multiplier,
                             .shift = shift,
                             .scale = d->scale,
                             .zero_point = d->y_zp,
                             .min = 0,
                             .max = 255};
  gemmi8_convolution* op = NULL;
  gemmi8_status st = gemmi8_qu8s8_convolution_create(&g, d->w, d->x_zp, d->bias, &rq, &op);
  free(multiplier);
  free(shift);
  size_t oh = 0, ow = 0;
  if (st == gemmi8_status_success) {
    st = gemmi8_convolution_setup(op, 1, L->h, L->w, d->x, L->cin, out, L->cout, &oh, &ow);
  }
  if (st == gemmi8_status_success && (oh != d->oh || ow != d->ow)) {
    fprintf(stderr, "qconv-compare: %s: gemmi8 output %zu x %zu, expected %zu x %zu\n", L->name,
            oh, ow, d->oh, d->ow);
    gemmi8_convolution_destroy(op);
    return NULL;
  }
  if (st == gemmi8_status_success) st = gemmi8_convolution_run(op, NULL);
  if (st != gemmi8_status_success) {
    fprintf(stderr, "qconv-compare: %s: gemmi8: %s\n", L->name, gemmi8_status_string(st));
    gemmi8_convolution_destroy(op);
    return NULL;
  }
  return op;
}

/* The exact accumulator of output pixel p, channel oc, from the definition. */
static int32_t reference_acc(const layer* L, const data* d, size_t p, size_t oc)
{
  const size_t oy = p / d->ow, ox = p % d->ow, g = oc / d->co;
  int64_t acc = d->bias[oc];
  for (size_t ky = 0; ky < L->kh; ky++) {
    const ptrdiff_t iy = (ptrdiff_t) (oy * L->sh + ky * L->dh) - (ptrdiff_t) L->pt;
    if (iy < 0 || iy >= (ptrdiff_t) L->h) continue;
    for (size_t kx = 0; kx < L->kw; kx++) {
      const ptrdiff_t ix = (ptrdiff_t) (ox * L->sw + kx * L->dw) - (ptrdiff_t) L->pl;
      if (ix < 0 || ix >= (ptrdiff_t) L->w) continue;
      const uint8_t* in = d->x + ((size_t) iy * L->w + (size_t) ix) * L->cin + g * d->ci;
      const int8_t* w = d->w + (oc * d->taps + ky * L->kw + kx) * d->ci;
      for (size_t c = 0; c < d->ci; c++) acc += ((int32_t) in[c] - d->x_zp) * w[c];
    }
  }
  return (int32_t) acc;
}

/*
 * The accumulator as x86's vpmaddubsw forms it from raw uint8 inputs and int8 weights
 * (AVX2 and AVX-512BW without VNNI): the layer's depth in its order (tap-major,
 * channels within a tap; a padding tap reads the zero point) taken two neighbouring
 * elements at a time, each pair's two products summed into int16 with saturation
 * (a pair may straddle two taps when a tap's channels are odd), the pairs then summed
 * exactly, and the input zero point taken off through the weight sums. A pair whose
 * products add past +-32767 loses the excess.
 */
static int32_t saturated_acc(const layer* L, const data* d, size_t p, size_t oc)
{
  const size_t oy = p / d->ow, ox = p % d->ow, g = oc / d->co;
  const int8_t* w = d->w + oc * d->taps * d->ci; /* the depth's weights, in order */
  int64_t acc = d->bias[oc];
  int32_t pair = 0;
  size_t k = 0;
  for (size_t ky = 0; ky < L->kh; ky++) {
    const ptrdiff_t iy = (ptrdiff_t) (oy * L->sh + ky * L->dh) - (ptrdiff_t) L->pt;
    for (size_t kx = 0; kx < L->kw; kx++) {
      const ptrdiff_t ix = (ptrdiff_t) (ox * L->sw + kx * L->dw) - (ptrdiff_t) L->pl;
      const int pad = iy < 0 || iy >= (ptrdiff_t) L->h || ix < 0 || ix >= (ptrdiff_t) L->w;
      const uint8_t* in =
          pad ? NULL : d->x + ((size_t) iy * L->w + (size_t) ix) * L->cin + g * d->ci;
      for (size_t c = 0; c < d->ci; c++, k++) {
        pair += (pad ? d->x_zp : in[c]) * w[k];
        acc -= (int32_t) d->x_zp * w[k];
        if (k % 2 == 1) {
          acc += pair > INT16_MAX ? INT16_MAX : pair < INT16_MIN ? INT16_MIN : pair;
          pair = 0;
        }
      }
    }
  }
  return (int32_t) (acc + pair); /* an odd depth's last element pairs with a zero */
}

/* ---- candidate arithmetics for ONNX Runtime's bytes ------------------------------ */

enum {
  cand_f32,       /* rint((float) acc * scale), scale = (x * w) / y in float */
  cand_f32_xwy,   /* the same with scale = x * (w / y) */
  cand_f32_away,  /* roundf: ties away from zero */
  cand_f64,       /* rint((double) acc * x * w / y) in double */
  cand_fixed,     /* gemmi8's fixed-point mode (TFLite's arithmetic) */
  cand_sat16,     /* cand_f32 on saturated_acc(): int16 pairs as vpmaddubsw forms them */
  cand_count,
};
static const char* const cand_names[] = {"fp32 (x*w)/y", "fp32 x*(w/y)", "fp32 half-away",
                                         "double", "fixed-point", "int16 pairs"};

static uint8_t candidate(int which, const layer* L, const data* d, int32_t acc, size_t oc)
{
  const float ws = d->w_scale[L->per_tensor ? 0 : oc];
  switch (which) {
  case cand_f32:
  case cand_sat16:
    return clamp_u8((double) rintf((float) acc * d->scale[oc]) + d->y_zp);
  case cand_f32_xwy: {
    const float wy = ws / d->y_scale;
    return clamp_u8((double) rintf((float) acc * (d->x_scale * wy)) + d->y_zp);
  }
  case cand_f32_away:
    return clamp_u8((double) roundf((float) acc * d->scale[oc]) + d->y_zp);
  case cand_f64:
    return clamp_u8(
        rint((double) acc * ((double) d->x_scale * (double) ws / (double) d->y_scale)) +
        d->y_zp);
  }
  return 0;
}

/* ---- ONNX Runtime's profile ------------------------------------------------------ */

typedef struct node_time {
  char name[96]; /* the node, as the profile names it */
  char op[64];
  double best_us;
} node_time;

/* The value after "key" and its colon in [s, end) (spaces allowed), or NULL. */
static const char* json_value(const char* s, const char* end, const char* key)
{
  const size_t n = strlen(key);
  for (const char* p = s; p + n <= end; p++) {
    if (memcmp(p, key, n) != 0) continue;
    p += n;
    while (p < end && (*p == ' ' || *p == ':')) p++;
    return p;
  }
  return NULL;
}

/* Copies the JSON string at p (its opening quote) into out, without escapes (the
 * names here have none). */
static void json_string(const char* p, char* out, size_t size)
{
  size_t len = 0;
  if (*p == '"') p++;
  while (*p != '"' && *p != '\0' && *p != '\n' && len + 1 < size) out[len++] = *p++;
  out[len] = '\0';
}

/* The best kernel time of every node in the profile at path, in the order of their
 * first run. ONNX Runtime writes one event a line; a node's run is an event of "cat"
 * "Node", named "<node>_kernel_time", with "dur" in microseconds and the operator in
 * args' "op_name". */
static int read_profile(const char* path, node_time* nodes, int max_nodes)
{
  FILE* f = fopen(path, "r");
  if (f == NULL) return -1;
  char line[8192];
  int count = 0;
  while (fgets(line, sizeof(line), f) != NULL) {
    const char* end = line + strlen(line);
    const char* cat = json_value(line, end, "\"cat\"");
    const char* name = json_value(line, end, "\"name\"");
    const char* dur = json_value(line, end, "\"dur\"");
    const char* op = json_value(line, end, "\"op_name\"");
    if (cat == NULL || strncmp(cat, "\"Node\"", 6) != 0 || name == NULL || dur == NULL ||
        op == NULL) {
      continue;
    }
    char node[96], op_name[64];
    json_string(name, node, sizeof(node));
    json_string(op, op_name, sizeof(op_name));
    const char* suffix = "_kernel_time";
    const size_t nl = strlen(node), sl = strlen(suffix);
    if (nl < sl || strcmp(node + nl - sl, suffix) != 0) continue;
    node[nl - sl] = '\0';
    const double us = strtod(dur, NULL);
    int i = 0;
    while (i < count && strcmp(nodes[i].name, node) != 0) i++;
    if (i == count) {
      if (count == max_nodes) continue;
      snprintf(nodes[i].name, sizeof(nodes[i].name), "%s", node);
      snprintf(nodes[i].op, sizeof(nodes[i].op), "%s", op_name);
      nodes[i].best_us = us;
      count++;
    } else if (us < nodes[i].best_us) {
      nodes[i].best_us = us;
    }
  }
  fclose(f);
  return count;
}

/* ---- one layer ------------------------------------------------------------------ */

typedef struct options {
  const char* python;
  const char* script;
  const char* workdir;
  int rounds;
  double round_ms;
} options;

typedef struct result {
  int ok;       /* ran to the end */
  size_t bytes; /* outputs */
  size_t differ;
  int max_diff;
  double g_us, o_us; /* best per-call times */
  char ops[256];     /* ONNX Runtime's nodes with their best kernel times */
  double o_conv_us;  /* the best kernel time of its QLinearConv node(s), summed */
} result;

static void run_layer(const layer* L, uint64_t seed, ort_lib* ort, const options* opt,
                      result* r)
{
  memset(r, 0, sizeof(*r));
  rng_state = seed;
  data d;
  make_data(L, &d);
  const size_t pixels = d.oh * d.ow, n_out = pixels * L->cout;
  r->bytes = n_out;
  uint8_t* out_g = xmalloc(n_out);
  uint8_t* out_fixed = xmalloc(n_out);
  uint8_t* x_nchw = xmalloc(L->h * L->w * L->cin);
  for (size_t p = 0; p < L->h * L->w; p++) {
    for (size_t c = 0; c < L->cin; c++) x_nchw[c * L->h * L->w + p] = d.x[p * L->cin + c];
  }
  char dir[4096], model[4200], prefix[4200], profile[4096];
  snprintf(dir, sizeof(dir), "%s/%s", opt->workdir, L->name);
  snprintf(model, sizeof(model), "%s/model.onnx", dir);
  snprintf(prefix, sizeof(prefix), "%s/profile", dir);
  ort_session* session = NULL;
  ort_session* profiled = NULL;
  ort_tensor y = {0};
  gemmi8_convolution* op = gemmi8_layer(L, &d, gemmi8_requant_fp32, out_g);
  gemmi8_convolution* op_fixed = gemmi8_layer(L, &d, gemmi8_requant_fixedpoint, out_fixed);
  if (op == NULL || op_fixed == NULL) goto done;
  gemmi8_convolution_destroy(op_fixed);
  op_fixed = NULL;

  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "qconv-compare: mkdir %s: %s\n", dir, strerror(errno));
    goto done;
  }
  if (write_layer(L, &d, dir) != 0) goto done;
  char* py_argv[] = {(char*) opt->python, (char*) opt->script, dir, model, NULL};
  if (run_program(py_argv) != 0) {
    fprintf(stderr, "qconv-compare: %s: %s %s failed\n", L->name, opt->python, opt->script);
    goto done;
  }
  if (ort_session_create(ort, model, 1, NULL, &session) != ort_ok ||
      ort_session_create(ort, model, 1, prefix, &profiled) != ort_ok) {
    goto ort_failed;
  }
  const int64_t shape[4] = {1, (int64_t) L->cin, (int64_t) L->h, (int64_t) L->w};
  if (ort_run(session, "x", ort_elem_uint8, shape, 4, x_nchw, &y) != ort_ok) goto ort_failed;
  if (y.type != ort_elem_uint8 || y.rank != 4 || y.shape[0] != 1 ||
      y.shape[1] != (int64_t) L->cout || y.shape[2] != (int64_t) d.oh ||
      y.shape[3] != (int64_t) d.ow) {
    fprintf(stderr,
            "qconv-compare: %s: ONNX Runtime's output has type %d, shape %lld x %lld x %lld x "
            "%lld; expected uint8 1 x %zu x %zu x %zu\n",
            L->name, (int) y.type, (long long) y.shape[0], (long long) y.shape[1],
            (long long) y.shape[2], (long long) y.shape[3], L->cout, d.oh, d.ow);
    goto done;
  }

  /* Compare: ONNX Runtime's [c][p] against gemmi8's [p][c]. Every output's exact
   * accumulator, from the definition, shows what each byte came from, and the
   * candidate arithmetics recomputed from it say which one ONNX Runtime follows (how
   * many bytes each candidate gets wrong also shows how far apart they are on the
   * layer's data: on random scales a few bytes, on the "ties" layer many). */
  const uint8_t* out_o = y.data;
  size_t shown = 0, halves = 0, clamped = 0;
  size_t cand_miss[cand_count] = {0};
  for (size_t p = 0; p < pixels; p++) {
    for (size_t c = 0; c < L->cout; c++) {
      const int32_t acc = reference_acc(L, &d, p, c);
      const float v = (float) acc * d.scale[c];
      const float r_v = rintf(v);
      halves += fabsf(v - truncf(v)) == 0.5f;
      clamped += r_v + d.y_zp < 0 || r_v + d.y_zp > 255;
      const int a = out_g[p * L->cout + c], b = out_o[c * pixels + p];
      for (int k = 0; k < cand_count; k++) {
        const uint8_t u = k == cand_fixed   ? out_fixed[p * L->cout + c]
                          : k == cand_sat16 ? candidate(k, L, &d, saturated_acc(L, &d, p, c), c)
                                            : candidate(k, L, &d, acc, c);
        cand_miss[k] += u != b;
      }
      if (a == b) continue;
      r->differ++;
      if (abs(a - b) > r->max_diff) r->max_diff = abs(a - b);
      if (shown < 6) {
        const double real = (double) acc * (double) d.x_scale *
                            (double) d.w_scale[L->per_tensor ? 0 : c] / (double) d.y_scale;
        printf("    pixel (%zu, %zu) channel %zu: acc %d, acc * scale %.9g (in float %.9g), "
               "gemmi8 %d, ONNX Runtime %d\n",
               p / d.ow, p % d.ow, c, (int) acc, real, (double) v, a, b);
        shown++;
      }
    }
  }
  printf("  outputs on a half before rounding: %zu; clamped: %zu\n", halves, clamped);
  printf("  bytes that differ from ONNX Runtime's, per arithmetic:");
  for (int k = 0; k < cand_count; k++) {
    printf("%s %s %zu", k ? ";" : "", cand_names[k], cand_miss[k]);
  }
  printf("\n");
  ort_tensor_free(&y);

  /* Timing: interleaved rounds, each long enough for the clock; the best of each. */
  double t0 = now();
  gemmi8_convolution_run(op, NULL);
  const double g_once = now() - t0;
  t0 = now();
  if (ort_run(session, "x", ort_elem_uint8, shape, 4, x_nchw, &y) != ort_ok) goto ort_failed;
  ort_tensor_free(&y);
  const double o_once = now() - t0;
  const int g_inner = (int) (opt->round_ms * 1e-3 / (g_once + 1e-7)) + 1;
  const int o_inner = (int) (opt->round_ms * 1e-3 / (o_once + 1e-7)) + 1;
  r->g_us = r->o_us = INFINITY;
  for (int round = 0; round < opt->rounds; round++) {
    t0 = now();
    for (int i = 0; i < g_inner; i++) gemmi8_convolution_run(op, NULL);
    const double g = (now() - t0) / g_inner;
    t0 = now();
    for (int i = 0; i < o_inner; i++) {
      if (ort_run(session, "x", ort_elem_uint8, shape, 4, x_nchw, &y) != ort_ok) {
        goto ort_failed;
      }
      ort_tensor_free(&y);
    }
    const double o = (now() - t0) / o_inner;
    if (g * 1e6 < r->g_us) r->g_us = g * 1e6;
    if (o * 1e6 < r->o_us) r->o_us = o * 1e6;
  }

  /* ONNX Runtime's own view: its operators after the graph rewrites, best kernel
   * time of each over as many runs as one round. */
  for (int i = 0; i < o_inner + 1; i++) {
    if (ort_run(profiled, "x", ort_elem_uint8, shape, 4, x_nchw, &y) != ort_ok) goto ort_failed;
    ort_tensor_free(&y);
  }
  if (ort_session_end_profiling(profiled, profile, sizeof(profile)) != ort_ok) goto ort_failed;
  node_time nodes[16];
  const int n_nodes = read_profile(profile, nodes, 16);
  remove(profile); /* read once; each run would leave another */
  size_t len = 0;
  r->o_conv_us = 0;
  for (int i = 0; i < n_nodes && len < sizeof(r->ops); i++) {
    len += (size_t) snprintf(r->ops + len, sizeof(r->ops) - len, "%s%s %.0f", i ? ", " : "",
                             nodes[i].op, nodes[i].best_us);
    if (strcmp(nodes[i].op, "QLinearConv") == 0) r->o_conv_us += nodes[i].best_us;
  }
  if (n_nodes <= 0) snprintf(r->ops, sizeof(r->ops), "(no node events in the profile)");
  r->ok = 1;
  goto done;

ort_failed:
  fprintf(stderr, "qconv-compare: %s: %s\n", L->name, ort_error(ort));
done:
  ort_tensor_free(&y);
  ort_session_release(session);
  ort_session_release(profiled);
  gemmi8_convolution_destroy(op);
  gemmi8_convolution_destroy(op_fixed);
  free(out_g);
  free(out_fixed);
  free(x_nchw);
  free_data(&d);
}

static void usage(FILE* f)
{
  fprintf(f,
          "usage: qconv-compare [-l LIB] [-p PYTHON] [-s SCRIPT] [-w WORKDIR] [-r ROUNDS] "
          "[-t MS] [LAYER...]\nlayers:\n");
  for (int i = 0; i < layer_count; i++) fprintf(f, "  %-12s %s\n", layers[i].name, layers[i].what);
}

int main(int argc, char** argv)
{
  options opt = {getenv("GEMMI8_NET_PYTHON"), "bench/net/qconv_model.py", NULL, 7, 40.0};
  const char* lib_path = NULL;
  if (opt.python == NULL || opt.python[0] == '\0') opt.python = "python3";
  int c;
  while ((c = getopt(argc, argv, "l:p:s:w:r:t:h")) != -1) {
    switch (c) {
    case 'l': lib_path = optarg; break;
    case 'p': opt.python = optarg; break;
    case 's': opt.script = optarg; break;
    case 'w': opt.workdir = optarg; break;
    case 'r': opt.rounds = atoi(optarg); break;
    case 't': opt.round_ms = atof(optarg); break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (opt.rounds < 1 || !(opt.round_ms > 0)) {
    usage(stderr);
    return 2;
  }
  int selected[layer_count];
  for (int i = 0; i < layer_count; i++) selected[i] = optind == argc;
  for (int a = optind; a < argc; a++) {
    int i = 0;
    while (i < layer_count && strcmp(layers[i].name, argv[a]) != 0) i++;
    if (i == layer_count) {
      fprintf(stderr, "qconv-compare: no layer %s\n", argv[a]);
      usage(stderr);
      return 2;
    }
    selected[i] = 1;
  }
  char tmp[] = "/tmp/qconv-XXXXXX";
  if (opt.workdir == NULL) {
    if (mkdtemp(tmp) == NULL) {
      fprintf(stderr, "qconv-compare: mkdtemp: %s\n", strerror(errno));
      return 2;
    }
    opt.workdir = tmp;
  } else if (mkdir(opt.workdir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "qconv-compare: mkdir %s: %s\n", opt.workdir, strerror(errno));
    return 2;
  }

  ort_lib* ort = NULL;
  char msg[1024];
  if (ort_open(lib_path, &ort, msg, sizeof(msg)) != ort_ok) {
    fprintf(stderr, "qconv-compare: %s\n", msg);
    return 2;
  }
  printf("gemmi8 %s, kernel set %s; ONNX Runtime %s; one thread each; layers in %s\n\n",
         gemmi8_version(), gemmi8_isa_name(), ort_version(ort), opt.workdir);
  printf("Times: best of %d interleaved rounds of >= %.0f ms, microseconds per call.\n"
         "ORT Run: a whole OrtApi Run (input value, layout transposes, convolution, output "
         "value);\nORT conv: the best kernel time of its QLinearConv node alone, from its "
         "profile (whole microseconds).\n\n",
         opt.rounds, opt.round_ms);

  result res[layer_count];
  int any_differ = 0, any_error = 0;
  for (int i = 0; i < layer_count; i++) {
    if (!selected[i]) continue;
    const layer* L = &layers[i];
    printf("%s: %s; %zux%zux%zu -> %zu channels\n", L->name, L->what, L->h, L->w, L->cin,
           L->cout);
    fflush(stdout);
    run_layer(L, 0x51ED + (uint64_t) i * 7919, ort, &opt, &res[i]);
    if (!res[i].ok) {
      any_error = 1;
      printf("  error (see above)\n");
    } else if (res[i].differ == 0) {
      printf("  equal: all %zu bytes\n", res[i].bytes);
    } else {
      any_differ = 1;
      printf("  DIFFER: %zu of %zu bytes, max |difference| %d\n", res[i].differ, res[i].bytes,
             res[i].max_diff);
    }
    if (res[i].ok) printf("  ONNX Runtime ran (best kernel us): %s\n", res[i].ops);
    fflush(stdout);
  }

  printf("\n| layer | bytes | gemmi8 us | ORT Run us | ORT conv us | ORT Run / gemmi8 "
         "| ORT conv / gemmi8 |\n|---|---|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < layer_count; i++) {
    if (!selected[i] || !res[i].ok) continue;
    char bytes[64];
    if (res[i].differ == 0) {
      snprintf(bytes, sizeof(bytes), "equal");
    } else {
      snprintf(bytes, sizeof(bytes), "%zu differ (max %d)", res[i].differ, res[i].max_diff);
    }
    printf("| %s | %s | %.1f | %.1f | %.1f | %.2f | %.2f |\n", layers[i].name, bytes,
           res[i].g_us, res[i].o_us, res[i].o_conv_us, res[i].o_us / res[i].g_us,
           res[i].o_conv_us / res[i].g_us);
  }
  ort_close(ort);
  return any_error ? 2 : any_differ ? 1 : 0;
}
