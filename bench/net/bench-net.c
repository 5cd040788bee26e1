/*
 * Whole networks: gemmi8's ResNet-18 and MobileNetV2 (examples/net) against ONNX
 * Runtime running the same networks, in time and byte for byte, on one thread and two;
 * then gemmi8's binary ResNet-18 beside its int8 one.
 *
 *   gemmi8-bench-net [-l LIB] [-p PYTHON] [-s SCRIPT] [-w WORKDIR] [-o REPORT]
 *                    [-r ROUNDS] [-t MS] [NETWORK...]
 *     -l  ONNX Runtime's library (default: $GEMMI8_ORT_LIB; neither: gemmi8 only)
 *     -p  a python3 with onnx and numpy (default: $GEMMI8_NET_PYTHON, else python3)
 *     -s  net_model.py (default: bench/net/net_model.py)
 *     -w  where the exported networks, models and profiles go (default
 *         build/net/work-net)
 *     -o  the report, markdown (default build/net/net.md); also printed on stdout
 *     -r  timed rounds (default: $GEMMI8_NET_ROUNDS, else 11)
 *     -t  the least time of one side in a round, ms (default: $GEMMI8_NET_MIN_MS, else
 *         100)
 *     NETWORK  resnet18, mobilenetv2, bin-resnet18 (default: all three)
 *
 * For each int8 network: gemmi8's network is created with a fixed seed, exported
 * (gnet_export: JSON and raw weights), and net_model.py turns the export into an ONNX
 * model of ONNX Runtime's quantized form (QLinearConv, QLinearAdd, MaxPool,
 * QLinearGlobalAveragePool; uint8 NCHW in and out). Both get the same input: random
 * bytes, given to ONNX Runtime as NCHW (transposed once, outside the timing).
 *
 * Time: four sides timed in interleaved rounds, so that a slow spell of the machine
 * falls on all of them: gemmi8 on the calling thread, ONNX Runtime with one intra-op
 * thread, gemmi8 on a gemmi8 pool of two threads, ONNX Runtime with two. A side's
 * round repeats whole inferences for at least -t ms, after a pause of SETTLE_MS in
 * which the last side's threads stop spinning; the report gives the best and the
 * median round, per inference. ONNX Runtime's time is that of a whole OrtApi Run
 * (input value, every node, output value). The ratios and targets use the best.
 *
 * Split: gemmi8's time by operator kind from its per-layer timers (gnet_timing, in a
 * pass of its own, not timed as a whole: the timers add a clock read a layer), and
 * ONNX Runtime's from the profile of separate sessions with profiling on (the timed
 * sessions have it off), the node events' "dur" summed by the kind of the layer the
 * node is named after (its op_type for nodes of its own, the layout Transposes). The
 * first run of each profiled session is left out (it allocates).
 *
 * Bytes: the network's final output of gemmi8 against ONNX Runtime's; then every
 * layer alone: net_model.py writes it as a one-node model, ONNX Runtime runs it on
 * gemmi8's input(s) of that layer (gnet_layer_tensors, gnet_layer_tensor_b, of the
 * network built with a buffer a tensor, GNET_KEEP_TENSORS; the one timed has its
 * tensors in one arena, as ONNX Runtime's memory planner places its own) and its
 * output is compared with gemmi8's. A layer differs on its own arithmetic only, not on
 * a difference that came from the layers before.
 *
 * Exit status: 0 when every compared byte is equal (or ONNX Runtime was not run), 1
 * when some differ, 2 on an error.
 */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gemmi8.h>

#include "net.h"
#include "ort.h"

extern char** environ;

/* The seeds of the networks' weights and of the input: fixed, the same bytes every
 * run. */
#define NET_SEED UINT64_C(0x6E657431)
#define INPUT_SEED UINT64_C(0x1A9E7)

enum { MAX_KINDS = 32, NAME_SIZE = 96, PATH_SIZE = 4096 };

/* The four timed sides, in the order of a round. */
enum { G1, O1, G2, O2, SIDES };
static const char* const side_names[SIDES] = {"gemmi8 1T", "ORT 1T", "gemmi8 2T", "ORT 2T"};

/* ---- small helpers ------------------------------------------------------------ */

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
    fprintf(stderr, "bench-net: out of memory (%zu bytes)\n", bytes);
    exit(2);
  }
  return p;
}

static int cmp_double(const void* a, const void* b)
{
  const double x = *(const double*) a, y = *(const double*) b;
  return x < y ? -1 : x > y;
}

/* Runs argv[0] (looked up in PATH) and waits: 0 when it exited 0. */
static int run_program(char* const argv[])
{
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
  if (err != 0) {
    fprintf(stderr, "bench-net: cannot run %s: %s\n", argv[0], strerror(err));
    return -1;
  }
  int status;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* snprintf for paths: -1, with a message, when the path does not fit. */
static int path_printf(char* path, size_t size, const char* format, ...)
{
  va_list args;
  va_start(args, format);
  const int n = vsnprintf(path, size, format, args);
  va_end(args);
  if (n < 0 || (size_t) n >= size) {
    fprintf(stderr, "bench-net: a path longer than %zu bytes (%s...)\n", size - 1, path);
    return -1;
  }
  return 0;
}

/* mkdir -p: the directory and those above it. */
static int make_dirs(const char* path)
{
  char dir[PATH_SIZE];
  if (path_printf(dir, sizeof(dir), "%s", path) != 0) return -1;
  for (char* p = dir + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    const char end = *p;
    *p = '\0';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
      fprintf(stderr, "bench-net: mkdir %s: %s\n", dir, strerror(errno));
      return -1;
    }
    if (end == '\0') return 0;
    *p = '/';
  }
}

/* NHWC (one image) to NCHW. */
static void to_nchw(const uint8_t* nhwc, size_t h, size_t w, size_t c, uint8_t* nchw)
{
  for (size_t p = 0; p < h * w; p++) {
    for (size_t k = 0; k < c; k++) nchw[k * h * w + p] = nhwc[p * c + k];
  }
}

/* Equal bytes of gemmi8's NHWC output and ONNX Runtime's NCHW one (pixels x channels
 * each), and the largest difference. */
static size_t compare_nhwc_nchw(const uint8_t* nhwc, const uint8_t* nchw, size_t pixels,
                                size_t channels, int* max_diff)
{
  size_t equal = 0;
  *max_diff = 0;
  for (size_t p = 0; p < pixels; p++) {
    for (size_t c = 0; c < channels; c++) {
      const int d = abs((int) nhwc[p * channels + c] - (int) nchw[c * pixels + p]);
      equal += d == 0;
      if (d > *max_diff) *max_diff = d;
    }
  }
  return equal;
}

/* ---- timing ----------------------------------------------------------------------- */

/* One side: a whole inference, 0 on success. */
typedef struct side {
  int (*run)(void* context);
  void* context;
} side;

typedef struct gemmi8_side {
  gnet* net;
  const gemmi8_parallel* parallel; /* NULL: the calling thread */
} gemmi8_side;

static int run_gemmi8(void* context)
{
  const gemmi8_side* s = context;
  return gnet_run(s->net, s->parallel);
}

typedef struct ort_side {
  ort_session* session;
  const char* input_name;
  const int64_t* shape; /* [1, C, H, W] */
  const uint8_t* x;     /* NCHW */
} ort_side;

static int run_ort(void* context)
{
  const ort_side* s = context;
  ort_tensor y;
  if (ort_run(s->session, s->input_name, ort_elem_uint8, s->shape, 4, s->x, &y) != ort_ok) {
    return -1;
  }
  ort_tensor_free(&y);
  return 0;
}

typedef struct timing {
  double best, median; /* seconds per inference, over the rounds */
} timing;

/* The pause before each side's round: ONNX Runtime's intra-op workers and gemmi8's pool
 * spin for a while after a run, and without it each side's spin fell on the next side's
 * round (one run, Zen 4, MobileNetV2 at two threads: gemmi8 1.57 ms, ORT 2.53; with it
 * 1.21 and 1.89; gemmi8 alone 1.19). */
#define SETTLE_MS 50
static void settle(void)
{
  const struct timespec pause = {0, SETTLE_MS * 1000000L};
  nanosleep(&pause, NULL);
}

/*
 * Times count sides (NULL run: skipped) in rounds interleaved side by side: each round
 * runs each side for at least min_s seconds (a repeat count fixed from two warm-up
 * inferences), the per-inference time of each round kept. 0 on success; -1 when a
 * side's run failed (which side: *failed).
 */
static int time_sides(const side* sides, int count, int rounds, double min_s, timing* out,
                      int* failed)
{
  int inner[SIDES];
  double* per_round = xmalloc((size_t) rounds * SIDES * sizeof(double));
  int status = 0;
  for (int s = 0; s < count && status == 0; s++) {
    if (sides[s].run == NULL) continue;
    double t = 0;
    for (int i = 0; i < 2 && status == 0; i++) {
      const double t0 = now();
      status = sides[s].run(sides[s].context);
      t = now() - t0;
      *failed = s;
    }
    inner[s] = (int) (min_s / (t + 1e-7)) + 1;
  }
  for (int r = 0; r < rounds && status == 0; r++) {
    for (int s = 0; s < count && status == 0; s++) {
      if (sides[s].run == NULL) continue;
      settle();
      const double t0 = now();
      for (int i = 0; i < inner[s] && status == 0; i++) status = sides[s].run(sides[s].context);
      per_round[s * rounds + r] = (now() - t0) / inner[s];
      *failed = s;
    }
  }
  for (int s = 0; s < count && status == 0; s++) {
    if (sides[s].run == NULL) continue;
    double* v = per_round + s * rounds;
    qsort(v, (size_t) rounds, sizeof(double), cmp_double);
    out[s].best = v[0];
    out[s].median = rounds % 2 ? v[rounds / 2] : 0.5 * (v[rounds / 2 - 1] + v[rounds / 2]);
  }
  free(per_round);
  return status == 0 ? 0 : -1;
}

/* ---- the split by operator kind ------------------------------------------------- */

/* Seconds per inference by kind, for each side, and the whole run's. */
typedef struct split {
  char kind[MAX_KINDS][40];
  double s[MAX_KINDS][SIDES];
  int kinds;
  double layers[SIDES]; /* the kinds summed */
  double run[SIDES];    /* a whole inference in the same pass (0: not measured) */
  int have[SIDES];
} split;

/* The kinds that are convolutions: what the "between convolutions" share leaves out. */
static int is_convolution(const char* kind)
{
  return strcmp(kind, "conv") == 0 || strcmp(kind, "dwconv") == 0 ||
         strcmp(kind, "bconv") == 0 || strcmp(kind, "fc") == 0;
}

/* The report's order of the kinds: gemmi8's, then ONNX Runtime's own. */
static const char* const kind_order[] = {
    "conv", "dwconv", "bconv", "fc", "add", "maxpool", "avgpool", "gap", "binarize",
    "quantize", "dequantize", "transpose", NULL,
};

static void split_add(split* sp, const char* kind, int s, double seconds)
{
  int k = 0;
  while (k < sp->kinds && strcmp(sp->kind[k], kind) != 0) k++;
  if (k == sp->kinds) {
    if (sp->kinds == MAX_KINDS) {
      k = MAX_KINDS - 1; /* the last kind takes the rest */
    } else {
      snprintf(sp->kind[sp->kinds++], sizeof(sp->kind[0]), "%s", kind);
    }
  }
  sp->s[k][s] += seconds;
  sp->layers[s] += seconds;
}

/* The share of a side's layer time that is not in convolutions. */
static double between_share(const split* sp, int s)
{
  double between = 0;
  for (int k = 0; k < sp->kinds; k++) {
    if (!is_convolution(sp->kind[k])) between += sp->s[k][s];
  }
  return sp->layers[s] > 0 ? between / sp->layers[s] : 0;
}

/* gemmi8's split: runs inferences with the per-layer timers on, on parallel. */
static int gemmi8_split(gnet* net, const gemmi8_parallel* parallel, int runs, split* sp, int s)
{
  gnet_timing(net, 1);
  gnet_timing_reset(net);
  const double t0 = now();
  int status = 0;
  for (int i = 0; i < runs && status == 0; i++) status = gnet_run(net, parallel);
  const double wall = now() - t0;
  gnet_timing(net, 0);
  if (status != 0) return -1;
  for (size_t i = 0; i < gnet_layers(net); i++) {
    split_add(sp, gnet_layer_kind(net, i), s, gnet_layer_seconds(net, i) / runs);
  }
  sp->run[s] = wall / runs;
  sp->have[s] = 1;
  return 0;
}

/* The value after "key" and its colon in [p, end) (spaces allowed), or NULL. */
static const char* json_value(const char* p, const char* end, const char* key)
{
  const size_t n = strlen(key);
  for (; p + n <= end; p++) {
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

/* gemmi8's layer named name, or -1. */
static long layer_index(const gnet* net, const char* name, size_t len)
{
  for (size_t i = 0; i < gnet_layers(net); i++) {
    const char* layer = gnet_layer_name(net, i);
    if (strlen(layer) == len && memcmp(layer, name, len) == 0) return (long) i;
  }
  return -1;
}

/*
 * The kind of ONNX Runtime's node: that of gemmi8's layer of the same name (the
 * model's nodes are named after the layers; a node that ONNX Runtime's layout rewrite
 * replaced is named "<layer>_token_<n>"), else one for its operator.
 */
static void ort_node_kind(const gnet* net, const char* node, const char* op, char* kind,
                          size_t size)
{
  size_t len = strlen(node);
  long i = layer_index(net, node, len);
  const char* token = strstr(node, "_token_");
  if (i < 0 && token != NULL && token[7] != '\0' &&
      strspn(token + 7, "0123456789") == strlen(token + 7)) {
    i = layer_index(net, node, (size_t) (token - node));
  }
  if (i >= 0) {
    snprintf(kind, size, "%s", gnet_layer_kind(net, (size_t) i));
    return;
  }
  static const char* const ops[][2] = {
      {"QLinearConv", "conv"},  {"QLinearAdd", "add"},     {"MaxPool", "maxpool"},
      {"NhwcMaxPool", "maxpool"}, {"QLinearGlobalAveragePool", "gap"},
      {"Transpose", "transpose"},
  };
  for (size_t j = 0; j < sizeof(ops) / sizeof(ops[0]); j++) {
    if (strcmp(op, ops[j][0]) == 0) {
      snprintf(kind, size, "%s", ops[j][1]);
      return;
    }
  }
  snprintf(kind, size, "%s", op);
}

/*
 * ONNX Runtime's split from the profile at path. It holds one JSON event a line; a
 * node's run is an event of "cat" "Node" named "<node>_kernel_time", with "dur" in
 * microseconds and its operator in args' "op_name"; a whole Run is a "Session" event
 * "model_run", written after the nodes of that run. The nodes before the first
 * model_run (the first run) are left out; the rest are averaged over the runs after it.
 */
static int ort_split(const char* path, const gnet* net, split* sp, split* by_op, int s)
{
  FILE* f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "bench-net: cannot read %s: %s\n", path, strerror(errno));
    return -1;
  }
  char* line = NULL;
  size_t cap = 0;
  ssize_t len;
  int runs = 0;
  double run_us = 0;
  split one = {0}, one_op = {0}; /* the runs after the first, summed */
  while ((len = getline(&line, &cap, f)) > 0) {
    const char* end = line + len;
    const char* cat = json_value(line, end, "\"cat\"");
    const char* name = json_value(line, end, "\"name\"");
    const char* dur = json_value(line, end, "\"dur\"");
    if (cat == NULL || name == NULL || dur == NULL) continue;
    char event[NAME_SIZE];
    json_string(name, event, sizeof(event));
    if (strncmp(cat, "\"Session\"", 9) == 0 && strcmp(event, "model_run") == 0) {
      if (runs++ > 0) run_us += strtod(dur, NULL);
      continue;
    }
    const char* op = json_value(line, end, "\"op_name\"");
    const char* suffix = "_kernel_time";
    const size_t nl = strlen(event), sl = strlen(suffix);
    if (runs == 0 || strncmp(cat, "\"Node\"", 6) != 0 || op == NULL || nl < sl ||
        strcmp(event + nl - sl, suffix) != 0) {
      continue;
    }
    event[nl - sl] = '\0';
    char op_name[NAME_SIZE], kind[NAME_SIZE];
    json_string(op, op_name, sizeof(op_name));
    ort_node_kind(net, event, op_name, kind, sizeof(kind));
    split_add(&one, kind, s, strtod(dur, NULL) * 1e-6);
    split_add(&one_op, op_name, s, strtod(dur, NULL) * 1e-6);
  }
  free(line);
  fclose(f);
  if (runs < 2) {
    fprintf(stderr, "bench-net: %s: %d runs in the profile, 2 or more expected\n", path, runs);
    return -1;
  }
  for (int k = 0; k < one.kinds; k++) split_add(sp, one.kind[k], s, one.s[k][s] / (runs - 1));
  for (int k = 0; k < one_op.kinds; k++) {
    split_add(by_op, one_op.kind[k], s, one_op.s[k][s] / (runs - 1));
  }
  sp->run[s] = by_op->run[s] = run_us * 1e-6 / (runs - 1);
  sp->have[s] = by_op->have[s] = 1;
  return 0;
}

/* Runs a profiling session runs + 1 times, ends its profile and reads it. */
static int ort_profile(ort_lib* ort, ort_session* session, const ort_side* in, int runs,
                       const gnet* net, split* sp, split* by_op, int s)
{
  ort_side run = *in;
  run.session = session;
  for (int i = 0; i < runs + 1; i++) {
    if (run_ort(&run) != 0) {
      fprintf(stderr, "bench-net: %s\n", ort_error(ort));
      return -1;
    }
  }
  char path[PATH_SIZE];
  if (ort_session_end_profiling(session, path, sizeof(path)) != ort_ok) {
    fprintf(stderr, "bench-net: %s\n", ort_error(ort));
    return -1;
  }
  const int status = ort_split(path, net, sp, by_op, s);
  remove(path); /* read once; every session would leave another */
  return status;
}

/* ---- the bytes of each layer ------------------------------------------------------ */

typedef struct layer_cmp {
  char name[NAME_SIZE];
  char op[24];   /* the export's: conv, add, maxpool, gap */
  char kind[24]; /* gemmi8's (gnet_layer_kind) */
  size_t c, h, w, oc, oh, ow;
  size_t bytes, equal;
  int max_diff;
  int ok; /* compared */
} layer_cmp;

/*
 * Every layer of dir/layers.txt (written by net_model.py) run alone by ONNX Runtime
 * on gemmi8's input(s) of that layer, its output compared with gemmi8's. Returns the
 * count of layers in *out (allocated), -1 on an error that stops the comparison.
 */
static int compare_layers(ort_lib* ort, const gnet* net, const char* dir, layer_cmp** out,
                          size_t* count)
{
  char path[PATH_SIZE];
  if (path_printf(path, sizeof(path), "%s/layers.txt", dir) != 0) return -1;
  FILE* f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "bench-net: cannot read %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t cap = 64, n = 0;
  layer_cmp* list = xmalloc(cap * sizeof(*list));
  int status = 0;
  size_t index;
  char name[NAME_SIZE], op[24];
  layer_cmp L;
  while (fscanf(f, "%zu %95s %23s %zu %zu %zu %zu %zu %zu", &index, name, op, &L.c, &L.h, &L.w,
                &L.oc, &L.oh, &L.ow) == 9) {
    if (n == cap) {
      cap *= 2;
      layer_cmp* grown = realloc(list, cap * sizeof(*list));
      if (grown == NULL) {
        fprintf(stderr, "bench-net: out of memory\n");
        status = -1;
        break;
      }
      list = grown;
    }
    snprintf(L.name, sizeof(L.name), "%s", name);
    snprintf(L.op, sizeof(L.op), "%s", op);
    snprintf(L.kind, sizeof(L.kind), "%s", op);
    L.bytes = L.oc * L.oh * L.ow;
    L.equal = 0;
    L.max_diff = 0;
    L.ok = 0;
    size_t i = 0;
    while (i < gnet_layers(net) && strcmp(gnet_layer_name(net, i), name) != 0) i++;
    const uint8_t *in = NULL, *y_g = NULL;
    if (i == gnet_layers(net) || gnet_layer_tensors(net, i, &in, &y_g) != 0 || in == NULL ||
        y_g == NULL) {
      fprintf(stderr, "bench-net: layer %s: no tensors of it in gemmi8's network\n", name);
      list[n++] = L;
      continue;
    }
    snprintf(L.kind, sizeof(L.kind), "%s", gnet_layer_kind(net, i));
    uint8_t* x = xmalloc(L.c * L.h * L.w);
    if (strcmp(op, "add") == 0) {
      /* The model's one input is a then b along the channels (net_model.py). */
      const uint8_t* b = NULL;
      if (gnet_layer_tensor_b(net, i, &b) != 0 || b == NULL) {
        fprintf(stderr, "bench-net: layer %s: no second input in gemmi8's network\n", name);
        free(x);
        list[n++] = L;
        continue;
      }
      to_nchw(in, L.h, L.w, L.c / 2, x);
      to_nchw(b, L.h, L.w, L.c / 2, x + L.c / 2 * L.h * L.w);
    } else {
      to_nchw(in, L.h, L.w, L.c, x);
    }
    ort_session* session = NULL;
    ort_tensor y = {0};
    const int64_t shape[4] = {1, (int64_t) L.c, (int64_t) L.h, (int64_t) L.w};
    /* A layer that cannot be compared is reported as such; the others go on. */
    const int path_ok = path_printf(path, sizeof(path), "%s/%zu.onnx", dir, index) == 0;
    if (path_ok && (ort_session_create(ort, path, 1, NULL, &session) != ort_ok ||
                    ort_run(session, "x", ort_elem_uint8, shape, 4, x, &y) != ort_ok)) {
      fprintf(stderr, "bench-net: layer %s: %s\n", name, ort_error(ort));
    } else if (!path_ok) {
      /* path_printf said why */
    } else if (y.type != ort_elem_uint8 || y.elements != L.bytes) {
      fprintf(stderr, "bench-net: layer %s: ONNX Runtime's output: %zu elements of type %d\n",
              name, y.elements, (int) y.type);
    } else {
      L.equal = compare_nhwc_nchw(y_g, y.data, L.oh * L.ow, L.oc, &L.max_diff);
      L.ok = 1;
    }
    ort_tensor_free(&y);
    ort_session_release(session);
    free(x);
    list[n++] = L;
  }
  fclose(f);
  *out = list;
  *count = n;
  return status;
}

/* ---- one network --------------------------------------------------------------------- */

typedef struct options {
  const char* python;
  const char* script;
  const char* workdir;
  int rounds;
  double min_s;
} options;

typedef struct net_result {
  char name[32];
  int ok;   /* gemmi8 ran and was timed */
  int ort;  /* ONNX Runtime ran and was timed */
  timing t[SIDES];
  split sp;    /* by gemmi8's layer kinds, both sides */
  split by_op; /* ONNX Runtime's, by operator type (its O1 and O2) */
  size_t out_bytes, out_equal; /* the final output */
  int out_max_diff;
  int ort_threads_differ; /* ONNX Runtime's output on two threads differs from one's */
  int arena_differs;      /* the timed network's output (one arena) is not the kept one's */
  size_t tensor_bytes, arena_bytes; /* the timed network's activations and their arena */
  layer_cmp* layers;
  size_t layer_count;
} net_result;

/* The same input for every network: random bytes, from INPUT_SEED. */
static void fill_input(gnet* net, size_t* h, size_t* w, size_t* c)
{
  uint8_t* x = gnet_input(net, h, w, c);
  uint64_t state = INPUT_SEED;
  for (size_t i = 0; i < *h * *w * *c; i++) {
    /* splitmix64 */
    uint64_t z = (state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    x[i] = (uint8_t) ((z ^ (z >> 31)) >> 56);
  }
}

/*
 * Everything of one int8 network: export, model, the bytes of its output and of each
 * layer (kept: the network with a buffer a tensor), the timed rounds, the split (net:
 * the same network in one arena). ort NULL: gemmi8 alone. pool2: gemmi8's pool of two
 * threads.
 */
static void run_network(gnet* kept, gnet* net, ort_lib* ort, const gemmi8_parallel* pool2,
                        const options* opt, net_result* r)
{
  const char* name = gnet_name(net);
  snprintf(r->name, sizeof(r->name), "%s", name);
  size_t h, w, c;
  fill_input(kept, &h, &w, &c);
  fill_input(net, &h, &w, &c);
  uint8_t* x_nchw = xmalloc(h * w * c);
  to_nchw(gnet_input(net, &h, &w, &c), h, w, c, x_nchw);
  if (gnet_run(kept, NULL) != 0 || gnet_run(net, NULL) != 0) {
    fprintf(stderr, "bench-net: %s: gnet_run failed\n", name);
    free(x_nchw);
    return;
  }
  size_t out_bytes = 0;
  const uint8_t* out_g = gnet_output(kept, &out_bytes);
  r->out_bytes = out_bytes;
  r->arena_differs = memcmp(out_g, gnet_output(net, NULL), out_bytes) != 0;
  r->tensor_bytes = gnet_tensor_bytes(net, &r->arena_bytes);
  if (r->arena_differs) {
    fprintf(stderr, "bench-net: %s: the output in one arena differs from the kept tensors'\n",
            name);
  }

  char prefix[PATH_SIZE], json[PATH_SIZE], bin[PATH_SIZE], model[PATH_SIZE];
  char layer_dir[PATH_SIZE], profile[PATH_SIZE];
  ort_session* sessions[SIDES] = {NULL};  /* the timed ones, at O1 and O2 */
  ort_session* profiled[SIDES] = {NULL};  /* the profiled ones */
  ort_tensor y = {0}, y2 = {0};
  const int64_t shape[4] = {1, (int64_t) c, (int64_t) h, (int64_t) w};
  ort_side o_in = {NULL, "input", shape, x_nchw};
  if (ort != NULL) {
    fprintf(stderr, "bench-net: %s: export, model, the bytes of each layer\n", name);
    if (path_printf(prefix, sizeof(prefix), "%s/%s", opt->workdir, name) != 0 ||
        path_printf(json, sizeof(json), "%s.json", prefix) != 0 ||
        path_printf(bin, sizeof(bin), "%s.bin", prefix) != 0 ||
        path_printf(model, sizeof(model), "%s.onnx", prefix) != 0 ||
        path_printf(layer_dir, sizeof(layer_dir), "%s-layers", prefix) != 0) {
      goto done;
    }
    if (gnet_export(kept, json, bin) != 0) {
      fprintf(stderr, "bench-net: %s: gnet_export to %s failed\n", name, json);
      goto done;
    }
    char* py_argv[] = {(char*) opt->python, (char*) opt->script, prefix, layer_dir, NULL};
    if (run_program(py_argv) != 0) {
      fprintf(stderr, "bench-net: %s: %s %s %s failed\n", name, opt->python, opt->script,
              prefix);
      goto done;
    }
    for (int s = O1; s <= O2; s += O2 - O1) {
      const int threads = s == O1 ? 1 : 2;
      if (path_printf(profile, sizeof(profile), "%s-profile-%dT", prefix, threads) != 0) goto done;
      if (ort_session_create(ort, model, threads, NULL, &sessions[s]) != ort_ok ||
          ort_session_create(ort, model, threads, profile, &profiled[s]) != ort_ok) {
        goto ort_failed;
      }
    }
    /* The input's name is the export's ("input"), which net_model.py keeps. */
    if (ort_run(sessions[O1], o_in.input_name, ort_elem_uint8, shape, 4, x_nchw, &y) != ort_ok ||
        ort_run(sessions[O2], o_in.input_name, ort_elem_uint8, shape, 4, x_nchw, &y2) != ort_ok) {
      goto ort_failed;
    }
    if (y.type != ort_elem_uint8 || y.elements != out_bytes) {
      fprintf(stderr, "bench-net: %s: ONNX Runtime's output: %zu elements of type %d, gemmi8's "
              "%zu bytes\n", name, y.elements, (int) y.type, out_bytes);
      goto done;
    }
    /* [1, classes, 1, 1] against gemmi8's [1, 1, 1, classes]: the same order. */
    r->out_equal = compare_nhwc_nchw(out_g, y.data, 1, out_bytes, &r->out_max_diff);
    r->ort_threads_differ = y2.elements != y.elements || memcmp(y.data, y2.data, y.elements) != 0;
    ort_tensor_free(&y);
    ort_tensor_free(&y2);
    if (compare_layers(ort, kept, layer_dir, &r->layers, &r->layer_count) != 0) goto done;
  }

  fprintf(stderr, "bench-net: %s: timing %d rounds\n", name, opt->rounds);
  gemmi8_side g1 = {net, NULL}, g2 = {net, pool2};
  ort_side o1 = o_in, o2 = o_in;
  o1.session = sessions[O1];
  o2.session = sessions[O2];
  side sides[SIDES] = {{run_gemmi8, &g1}, {NULL, NULL}, {run_gemmi8, &g2}, {NULL, NULL}};
  if (ort != NULL) {
    sides[O1] = (side){run_ort, &o1};
    sides[O2] = (side){run_ort, &o2};
  }
  int failed = 0;
  if (time_sides(sides, SIDES, opt->rounds, opt->min_s, r->t, &failed) != 0) {
    if (failed == O1 || failed == O2) goto ort_failed;
    fprintf(stderr, "bench-net: %s: gnet_run failed\n", name);
    goto done;
  }

  /* The split, on as many inferences as one side's rounds (at least 10). */
  fprintf(stderr, "bench-net: %s: the split by kind\n", name);
  const int runs = (int) fmax(10.0, opt->rounds * opt->min_s / r->t[G1].median);
  if (gemmi8_split(net, NULL, runs, &r->sp, G1) != 0 ||
      gemmi8_split(net, pool2, runs, &r->sp, G2) != 0) {
    fprintf(stderr, "bench-net: %s: gnet_run failed\n", name);
    goto done;
  }
  if (ort != NULL) {
    if (ort_profile(ort, profiled[O1], &o_in, runs, net, &r->sp, &r->by_op, O1) != 0 ||
        ort_profile(ort, profiled[O2], &o_in, runs, net, &r->sp, &r->by_op, O2) != 0) {
      goto done;
    }
    r->ort = 1;
  }
  r->ok = 1;
  goto done;

ort_failed:
  fprintf(stderr, "bench-net: %s: %s\n", name, ort_error(ort));
done:
  ort_tensor_free(&y);
  ort_tensor_free(&y2);
  for (int s = 0; s < SIDES; s++) {
    ort_session_release(sessions[s]);
    ort_session_release(profiled[s]);
  }
  free(x_nchw);
}

/* The binary ResNet-18 against the int8 one, gemmi8 only: both timed in interleaved
 * rounds (int8 1T, binary 1T, int8 2T, binary 2T), and the binary one's split. */
typedef struct bin_result {
  int ok;
  timing t[4];
  split sp; /* the binary network's, at G1 and G2 */
} bin_result;

static void run_binary(gnet* bin, gnet* int8, const gemmi8_parallel* pool2, const options* opt,
                       bin_result* r)
{
  size_t h, w, c;
  fill_input(bin, &h, &w, &c);
  fill_input(int8, &h, &w, &c);
  fprintf(stderr, "bench-net: %s against %s: timing %d rounds\n", gnet_name(bin),
          gnet_name(int8), opt->rounds);
  gemmi8_side i1 = {int8, NULL}, b1 = {bin, NULL}, i2 = {int8, pool2}, b2 = {bin, pool2};
  const side sides[4] = {{run_gemmi8, &i1}, {run_gemmi8, &b1}, {run_gemmi8, &i2},
                         {run_gemmi8, &b2}};
  int failed = 0;
  if (time_sides(sides, 4, opt->rounds, opt->min_s, r->t, &failed) != 0) {
    fprintf(stderr, "bench-net: gnet_run of %s failed\n",
            failed % 2 ? gnet_name(bin) : gnet_name(int8));
    return;
  }
  const int runs = (int) fmax(10.0, opt->rounds * opt->min_s / r->t[1].median);
  if (gemmi8_split(bin, NULL, runs, &r->sp, G1) != 0 ||
      gemmi8_split(bin, pool2, runs, &r->sp, G2) != 0) {
    fprintf(stderr, "bench-net: gnet_run of %s failed\n", gnet_name(bin));
    return;
  }
  r->ok = 1;
}

/* ---- the machine ------------------------------------------------------------------------ */

typedef struct cpu_info {
  char vendor[64], model_name[128];
  int family, model; /* -1: not known */
  char generation[64]; /* "Zen 4", "Zen 5", or empty */
} cpu_info;

/* The value of "key:" lines of text (lscpu's or /proc/cpuinfo's), trimmed. */
static int field(const char* line, const char* key, char* value, size_t size)
{
  const size_t n = strlen(key);
  if (strncmp(line, key, n) != 0) return 0;
  const char* p = line + n;
  while (*p == ' ' || *p == '\t') p++;
  if (*p != ':') return 0;
  p++;
  while (*p == ' ' || *p == '\t') p++;
  size_t len = strcspn(p, "\n");
  while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t')) len--;
  snprintf(value, size, "%.*s", (int) len, p);
  return 1;
}

/* The CPU as lscpu names it (model name, family, model), else from /proc/cpuinfo; and
 * AMD's Zen generation from the family and model. */
static void read_cpu(cpu_info* cpu)
{
  memset(cpu, 0, sizeof(*cpu));
  cpu->family = cpu->model = -1;
  char line[1024], value[128];
  FILE* f = popen("LC_ALL=C lscpu 2>/dev/null", "r");
  int from_lscpu = 0;
  if (f != NULL) {
    while (fgets(line, sizeof(line), f) != NULL) {
      if (field(line, "Vendor ID", cpu->vendor, sizeof(cpu->vendor))) from_lscpu = 1;
      field(line, "Model name", cpu->model_name, sizeof(cpu->model_name));
      if (field(line, "CPU family", value, sizeof(value))) cpu->family = atoi(value);
      if (field(line, "Model", value, sizeof(value))) cpu->model = (int) strtol(value, NULL, 0);
    }
    pclose(f);
  }
  if (!from_lscpu && (f = fopen("/proc/cpuinfo", "r")) != NULL) {
    while (fgets(line, sizeof(line), f) != NULL && strcmp(line, "\n") != 0) {
      field(line, "vendor_id", cpu->vendor, sizeof(cpu->vendor));
      field(line, "model name", cpu->model_name, sizeof(cpu->model_name));
      if (field(line, "cpu family", value, sizeof(value))) cpu->family = atoi(value);
      if (field(line, "model", value, sizeof(value))) cpu->model = atoi(value);
    }
    fclose(f);
  }
  if (strcmp(cpu->vendor, "AuthenticAMD") == 0) {
    /* Family 19h: Zen 3 and Zen 4 by model ranges; 1Ah: Zen 5. */
    const int m = cpu->model;
    if (cpu->family == 0x1A) {
      snprintf(cpu->generation, sizeof(cpu->generation), "Zen 5");
    } else if (cpu->family == 0x19 && ((m >= 0x10 && m <= 0x1F) || (m >= 0x60 && m <= 0x7F) ||
                                       (m >= 0xA0 && m <= 0xAF))) {
      snprintf(cpu->generation, sizeof(cpu->generation), "Zen 4");
    } else if (cpu->family == 0x19) {
      snprintf(cpu->generation, sizeof(cpu->generation), "Zen 3");
    }
  }
}

/* The load average over the last minute (/proc/loadavg), -1 when unknown: other work
 * on the machine shows in the times, and this says how much there was. */
static double load_average(void)
{
  double load = -1;
  FILE* f = fopen("/proc/loadavg", "r");
  if (f != NULL) {
    if (fscanf(f, "%lf", &load) != 1) load = -1;
    fclose(f);
  }
  return load;
}

/* ---- the report -------------------------------------------------------------------------- */

static double ms(double s)
{
  return s * 1e3;
}

/* "best (median)" in ms, or a dash. */
static const char* cell(const timing* t, int have, char* buf, size_t size)
{
  if (!have) return "-";
  snprintf(buf, size, "%.2f (%.2f)", ms(t->best), ms(t->median));
  return buf;
}

static const char* met(int ok)
{
  return ok ? "met" : "NOT met";
}

/* A side's two cells of a split row: ms and % of its layers' sum (dashes: no data). */
static void split_cells(FILE* f, const split* sp, int s, double seconds)
{
  if (!sp->have[s] || !(sp->layers[s] > 0)) {
    fprintf(f, " - | - |");
  } else {
    fprintf(f, " %.3f | %.1f |", ms(seconds), 100 * seconds / sp->layers[s]);
  }
}

/* A split table of count sides. by_op: its rows are ONNX Runtime's operator types
 * rather than gemmi8's kinds (no "between convolutions" row then). */
static void report_split(FILE* f, const char* title, const split* sp, const int* sides,
                         int count, int by_op)
{
  if (title != NULL) fprintf(f, "%s\n\n", title);
  fprintf(f, "| %s |", by_op ? "ORT operator" : "kind");
  for (int i = 0; i < count; i++) fprintf(f, " %s ms | %% |", side_names[sides[i]]);
  fprintf(f, "\n|---|");
  for (int i = 0; i < count; i++) fprintf(f, "---:|---:|");
  fprintf(f, "\n");
  /* The kinds of kind_order first, in its order, then any other. */
  int order[MAX_KINDS], n = 0, listed[MAX_KINDS] = {0};
  for (int o = 0; kind_order[o] != NULL; o++) {
    for (int k = 0; k < sp->kinds; k++) {
      if (!listed[k] && strcmp(sp->kind[k], kind_order[o]) == 0) listed[k] = 1, order[n++] = k;
    }
  }
  for (int k = 0; k < sp->kinds; k++) {
    if (!listed[k]) order[n++] = k;
  }
  for (int j = 0; j < n; j++) {
    const int k = order[j];
    fprintf(f, "| %s |", sp->kind[k]);
    for (int i = 0; i < count; i++) split_cells(f, sp, sides[i], sp->s[k][sides[i]]);
    fprintf(f, "\n");
  }
  fprintf(f, "| **%s** |", by_op ? "nodes" : "layers");
  for (int i = 0; i < count; i++) split_cells(f, sp, sides[i], sp->layers[sides[i]]);
  fprintf(f, "\n| whole inference (same pass) |");
  for (int i = 0; i < count; i++) split_cells(f, sp, sides[i], sp->run[sides[i]]);
  if (!by_op) {
    fprintf(f, "\n| between convolutions |");
    for (int i = 0; i < count; i++) {
      const int s = sides[i];
      split_cells(f, sp, s, between_share(sp, s) * sp->layers[s]);
    }
  }
  fprintf(f, "\n\n");
}

static void report(FILE* f, const cpu_info* cpu, const double load[2], const char* ort_version,
                   const options* opt, const net_result* nets, int net_count,
                   const bin_result* bin, int have_bin)
{
  char b1[64], b2[64], b3[64], b4[64];
  fprintf(f, "# gemmi8 against ONNX Runtime on whole networks\n\n");
  fprintf(f, "- CPU: %s (%s, family %d, model %d%s%s)\n", cpu->model_name,
          cpu->vendor[0] ? cpu->vendor : "vendor unknown", cpu->family, cpu->model,
          cpu->generation[0] ? ": " : "", cpu->generation);
  fprintf(f, "- %ld CPUs online; load average (1 min) %.2f before, %.2f after: more than 0 "
             "is other work on the machine, which shows in the times\n",
          sysconf(_SC_NPROCESSORS_ONLN), load[0], load[1]);
  fprintf(f, "- gemmi8 %s, kernel set %s\n", gemmi8_version(), gemmi8_isa_name());
  if (ort_version != NULL) {
    fprintf(f, "- ONNX Runtime %s\n", ort_version);
  } else {
    fprintf(f, "- ONNX Runtime: not run (no library); gemmi8 alone\n");
  }
  fprintf(f,
          "- batch 1, 224x224x3 uint8 input; times in ms per inference, best (median) of %d "
          "interleaved rounds of >= %.0f ms a side; 1T/2T: one or two threads (gemmi8: the "
          "calling thread / a gemmi8 pool of 2; ORT: intra-op threads 1 / 2)\n",
          opt->rounds, opt->min_s * 1e3);
  if (net_count > 0) {
    fprintf(f, "- activations: gemmi8's in one arena, each tensor where none alive at the same "
               "time is (");
    for (int i = 0; i < net_count; i++) {
      fprintf(f, "%s%s %zu KB of tensors in %zu KB", i ? "; " : "", nets[i].name,
              nets[i].tensor_bytes >> 10, nets[i].arena_bytes >> 10);
    }
    fprintf(f, "), as ONNX Runtime's memory planner places its own (its defaults: arena and "
               "memory patterns on)\n");
  }
  fprintf(f, "\n");

  fprintf(f, "## Networks\n\n| network | gemmi8 1T | ORT 1T | ORT / gemmi8 1T | gemmi8 2T | "
             "ORT 2T | ORT / gemmi8 2T | gemmi8 2T speedup | ORT 2T speedup |\n"
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < net_count; i++) {
    const net_result* r = &nets[i];
    if (!r->ok) {
      fprintf(f, "| %s | error | | | | | | | |\n", r->name);
      continue;
    }
    char ratio1[32] = "-", ratio2[32] = "-", sp_o[32] = "-";
    if (r->ort) {
      snprintf(ratio1, sizeof(ratio1), "%.2f", r->t[O1].best / r->t[G1].best);
      snprintf(ratio2, sizeof(ratio2), "%.2f", r->t[O2].best / r->t[G2].best);
      snprintf(sp_o, sizeof(sp_o), "%.2f", r->t[O1].best / r->t[O2].best);
    }
    fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %.2f | %s |\n", r->name,
            cell(&r->t[G1], 1, b1, sizeof(b1)), cell(&r->t[O1], r->ort, b2, sizeof(b2)), ratio1,
            cell(&r->t[G2], 1, b3, sizeof(b3)), cell(&r->t[O2], r->ort, b4, sizeof(b4)), ratio2,
            r->t[G1].best / r->t[G2].best, sp_o);
  }
  fprintf(f, "\nORT / gemmi8: how many times gemmi8 is faster (best rounds); 2T speedup: 1T "
             "time / 2T time.\n\n");

  if (have_bin) {
    fprintf(f, "## Binary ResNet-18 beside int8 ResNet-18 (gemmi8)\n\n");
    if (!bin->ok) {
      fprintf(f, "error (see the messages)\n\n");
    } else {
      fprintf(f, "| network | 1T | 2T | 2T speedup |\n|---|---:|---:|---:|\n");
      fprintf(f, "| resnet18 (int8) | %s | %s | %.2f |\n", cell(&bin->t[0], 1, b1, sizeof(b1)),
              cell(&bin->t[2], 1, b2, sizeof(b2)), bin->t[0].best / bin->t[2].best);
      fprintf(f, "| bin-resnet18 | %s | %s | %.2f |\n", cell(&bin->t[1], 1, b1, sizeof(b1)),
              cell(&bin->t[3], 1, b2, sizeof(b2)), bin->t[1].best / bin->t[3].best);
      fprintf(f, "| int8 / binary | %.2f | %.2f | |\n\n", bin->t[0].best / bin->t[1].best,
              bin->t[2].best / bin->t[3].best);
    }
  }

  fprintf(f, "## Split by operator kind\n\n"
             "ms per inference and share of the layers' sum. gemmi8: its per-layer timers; "
             "ORT: its profile's node times, each node counted under the kind of the layer "
             "it is named after (transpose: the layout changes ORT inserts around its NHWC "
             "kernels). whole inference: the same pass's time per inference (gemmi8 with "
             "its timers on; ORT's model_run event), in %% of the layers' sum. between "
             "convolutions: every kind but conv, dwconv, bconv and fc. The second table of "
             "each int8 network: ORT's same nodes by their operator type (op_name; its "
             "NHWC rewrite's own, NhwcMaxPool for MaxPool).\n\n");
  const int all[SIDES] = {G1, O1, G2, O2}, gemmi8_only[2] = {G1, G2};
  for (int i = 0; i < net_count; i++) {
    const net_result* r = &nets[i];
    if (!r->ok) continue;
    char title[64];
    snprintf(title, sizeof(title), "### %.40s", r->name);
    report_split(f, title, &r->sp, r->ort ? all : gemmi8_only, r->ort ? SIDES : 2, 0);
    if (r->ort) {
      const int ort_sides[2] = {O1, O2};
      report_split(f, NULL, &r->by_op, ort_sides, 2, 1);
    }
  }
  if (have_bin && bin->ok) report_split(f, "### bin-resnet18", &bin->sp, gemmi8_only, 2, 0);

  if (ort_version != NULL) {
    fprintf(f, "## Bytes against ONNX Runtime\n\n| network | output bytes | equal | max "
               "difference | ORT 1T = 2T | arena = kept | layers compared | layers equal |\n"
               "|---|---:|---:|---:|---|---|---:|---:|\n");
    for (int i = 0; i < net_count; i++) {
      const net_result* r = &nets[i];
      if (!r->ort) continue;
      size_t compared = 0, equal = 0;
      for (size_t k = 0; k < r->layer_count; k++) {
        compared += r->layers[k].ok;
        equal += r->layers[k].ok && r->layers[k].equal == r->layers[k].bytes;
      }
      fprintf(f, "| %s | %zu | %zu | %d | %s | %s | %zu of %zu | %zu |\n", r->name,
              r->out_bytes, r->out_equal, r->out_max_diff, r->ort_threads_differ ? "no" : "yes",
              r->arena_differs ? "no" : "yes", compared, r->layer_count, equal);
    }
    fprintf(f, "\narena = kept: the output of the network timed, its tensors in one arena, "
               "equals that of the same network with a buffer a tensor, whose layers are "
               "compared.\n");
    fprintf(f, "\nEach layer alone: ONNX Runtime's one-node model of the layer on gemmi8's "
               "input of it, against gemmi8's output.\n\n");
    for (int i = 0; i < net_count; i++) {
      const net_result* r = &nets[i];
      if (!r->ort) continue;
      fprintf(f, "### %s\n\n| layer | kind | input CxHxW | output CxHxW | bytes | "
                 "differ | max difference |\n|---|---|---|---|---:|---:|---:|\n", r->name);
      for (size_t k = 0; k < r->layer_count; k++) {
        const layer_cmp* L = &r->layers[k];
        /* An add's two inputs are one of twice the channels in its model. */
        const int add = strcmp(L->op, "add") == 0;
        fprintf(f, "| %s | %s | %zux%zux%zu%s | %zux%zux%zu | %zu | ", L->name, L->kind,
                add ? L->c / 2 : L->c, L->h, L->w, add ? " twice" : "", L->oc, L->oh, L->ow,
                L->bytes);
        if (!L->ok) {
          fprintf(f, "not compared | |\n");
        } else if (L->equal == L->bytes) {
          fprintf(f, "0 (equal) | 0 |\n");
        } else {
          fprintf(f, "**%zu** | %d |\n", L->bytes - L->equal, L->max_diff);
        }
      }
      fprintf(f, "\n");
    }
  }

  fprintf(f, "## Targets\n\n");
#if defined(__x86_64__) || defined(__i386__)
  const int x86 = 1;
#else
  const int x86 = 0;
#endif
  if (!x86) fprintf(f, "The targets are set for x86; this is not x86 (shown for reference).\n\n");
  fprintf(f, "This CPU: %s, %s.\n\n", cpu->model_name,
          cpu->generation[0] ? cpu->generation
                             : "neither Zen 4 nor Zen 5 (the ResNet-18 target is shown against "
                               "both of their thresholds)");
  for (int i = 0; i < net_count; i++) {
    const net_result* r = &nets[i];
    if (!r->ok || !r->ort) continue;
    const double x1 = r->t[O1].best / r->t[G1].best, x2 = r->t[O2].best / r->t[G2].best;
    if (strcmp(r->name, "mobilenetv2") == 0) {
      fprintf(f, "- MobileNetV2 >= 1.7x ORT: 1T %.2fx %s; 2T %.2fx %s\n", x1, met(x1 >= 1.7), x2,
              met(x2 >= 1.7));
    } else if (strcmp(r->name, "resnet18") == 0) {
      const int zen5 = strcmp(cpu->generation, "Zen 5") == 0;
      const int zen4 = strcmp(cpu->generation, "Zen 4") == 0;
      if (zen5 || !zen4) {
        fprintf(f, "- ResNet-18 >= 1.4x ORT (Zen 5%s): 1T %.2fx %s; 2T %.2fx %s\n",
                zen5 ? ", this CPU" : "", x1, met(x1 >= 1.4), x2, met(x2 >= 1.4));
      }
      if (zen4 || !zen5) {
        fprintf(f, "- ResNet-18 >= 1.15x ORT (Zen 4%s): 1T %.2fx %s; 2T %.2fx %s\n",
                zen4 ? ", this CPU" : "", x1, met(x1 >= 1.15), x2, met(x2 >= 1.15));
      }
    }
  }
  if (have_bin && bin->ok) {
    const double x1 = bin->t[0].best / bin->t[1].best, x2 = bin->t[2].best / bin->t[3].best;
    fprintf(f, "- binary ResNet-18 >= 3x gemmi8's int8 ResNet-18: 1T %.2fx %s; 2T %.2fx %s\n", x1,
            met(x1 >= 3), x2, met(x2 >= 3));
  }
  for (int i = 0; i < net_count + (have_bin && bin->ok); i++) {
    const split* sp = i < net_count ? &nets[i].sp : &bin->sp;
    if (i < net_count && !nets[i].ok) continue;
    const double s1 = between_share(sp, G1), s2 = between_share(sp, G2);
    fprintf(f, "- %s: operators between convolutions <= 5%% of gemmi8's time: 1T %.1f%% %s; "
               "2T %.1f%% %s\n", i < net_count ? nets[i].name : "bin-resnet18", 100 * s1,
            met(s1 <= 0.05), 100 * s2, met(s2 <= 0.05));
  }
  fprintf(f, "\n");
}

/* ---- main ---------------------------------------------------------------------------------- */

static void usage(FILE* f)
{
  fprintf(f, "usage: gemmi8-bench-net [-l LIB] [-p PYTHON] [-s SCRIPT] [-w WORKDIR] [-o REPORT] "
             "[-r ROUNDS] [-t MS] [resnet18|mobilenetv2|bin-resnet18...]\n");
}

static const char* env_or(const char* name, const char* fallback)
{
  const char* v = getenv(name);
  return v != NULL && v[0] != '\0' ? v : fallback;
}

int main(int argc, char** argv)
{
  options opt = {env_or("GEMMI8_NET_PYTHON", "python3"), "bench/net/net_model.py",
                 "build/net/work-net", atoi(env_or("GEMMI8_NET_ROUNDS", "11")),
                 atof(env_or("GEMMI8_NET_MIN_MS", "100")) * 1e-3};
  const char* lib_path = env_or("GEMMI8_ORT_LIB", NULL);
  const char* report_path = "build/net/net.md";
  int c;
  while ((c = getopt(argc, argv, "l:p:s:w:o:r:t:h")) != -1) {
    switch (c) {
    case 'l': lib_path = optarg[0] != '\0' ? optarg : NULL; break;
    case 'p': opt.python = optarg; break;
    case 's': opt.script = optarg; break;
    case 'w': opt.workdir = optarg; break;
    case 'o': report_path = optarg; break;
    case 'r': opt.rounds = atoi(optarg); break;
    case 't': opt.min_s = atof(optarg) * 1e-3; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (opt.rounds < 1 || !(opt.min_s > 0)) {
    usage(stderr);
    return 2;
  }
  /* Which networks: the int8 ones against ONNX Runtime, the binary one beside int8. */
  static const struct {
    const char* name;
    gnet_kind kind;
  } known[] = {{"resnet18", GNET_RESNET18}, {"mobilenetv2", GNET_MOBILENETV2},
               {"bin-resnet18", GNET_BIN_RESNET18}};
  int selected[3];
  for (int i = 0; i < 3; i++) selected[i] = optind == argc;
  for (int a = optind; a < argc; a++) {
    int i = 0;
    while (i < 3 && strcmp(known[i].name, argv[a]) != 0) i++;
    if (i == 3) {
      fprintf(stderr, "bench-net: no network %s\n", argv[a]);
      usage(stderr);
      return 2;
    }
    selected[i] = 1;
  }
  if (make_dirs(opt.workdir) != 0) return 2;

  ort_lib* ort = NULL;
  if (lib_path != NULL) {
    char msg[1024];
    if (ort_open(lib_path, &ort, msg, sizeof(msg)) != ort_ok) {
      fprintf(stderr, "bench-net: %s\n", msg);
      return 2;
    }
  } else {
    fprintf(stderr, "bench-net: no ONNX Runtime library (-l, GEMMI8_ORT_LIB): gemmi8 alone\n");
  }
  gemmi8_threadpool* pool = NULL;
  gemmi8_parallel pool2;
  if (gemmi8_threadpool_create(2, NULL, &pool) != gemmi8_status_success ||
      gemmi8_threadpool_parallel(pool, &pool2) != gemmi8_status_success) {
    fprintf(stderr, "bench-net: no gemmi8 pool of two threads\n");
    ort_close(ort);
    return 2;
  }

  cpu_info cpu;
  read_cpu(&cpu);
  double load[2] = {load_average(), 0};
  net_result nets[2];
  memset(nets, 0, sizeof(nets));
  int net_count = 0, error = 0, differ = 0;
  gnet* int8_resnet = NULL;
  for (int i = 0; i < 2; i++) {
    /* The binary network is timed beside the int8 ResNet-18, which is created for it
     * when not selected itself. */
    if (!selected[i] && !(i == 0 && selected[2])) continue;
    gnet* net = NULL;
    if (gnet_create(known[i].kind, NET_SEED, &net) != 0) {
      fprintf(stderr, "bench-net: gnet_create(%s) failed\n", known[i].name);
      error = 1;
      continue;
    }
    if (selected[i]) {
      gnet* kept = NULL;
      if (gnet_create_ex(known[i].kind, NET_SEED, GNET_KEEP_TENSORS, &kept) != 0) {
        fprintf(stderr, "bench-net: gnet_create_ex(%s) failed\n", known[i].name);
        error = 1;
        gnet_destroy(net);
        continue;
      }
      net_result* r = &nets[net_count++];
      run_network(kept, net, ort, &pool2, &opt, r);
      gnet_destroy(kept);
      error |= !r->ok || (ort != NULL && !r->ort);
      differ |= r->arena_differs || (r->ort && r->out_equal != r->out_bytes);
      for (size_t k = 0; k < r->layer_count; k++) {
        differ |= r->layers[k].ok && r->layers[k].equal != r->layers[k].bytes;
        error |= !r->layers[k].ok;
      }
    }
    if (i == 0) {
      int8_resnet = net;
    } else {
      gnet_destroy(net);
    }
  }
  bin_result bin;
  memset(&bin, 0, sizeof(bin));
  if (selected[2] && int8_resnet != NULL) {
    gnet* net = NULL;
    if (gnet_create(GNET_BIN_RESNET18, NET_SEED, &net) != 0) {
      fprintf(stderr, "bench-net: gnet_create(bin-resnet18) failed\n");
    } else {
      run_binary(net, int8_resnet, &pool2, &opt, &bin);
      gnet_destroy(net);
    }
    error |= !bin.ok;
  }
  gnet_destroy(int8_resnet);

  /* The report: into memory, then to its file and stdout. */
  char* text = NULL;
  size_t text_size = 0;
  FILE* mem = open_memstream(&text, &text_size);
  if (mem == NULL) {
    fprintf(stderr, "bench-net: open_memstream: %s\n", strerror(errno));
    return 2;
  }
  load[1] = load_average();
  report(mem, &cpu, load, ort != NULL ? ort_version(ort) : NULL, &opt, nets, net_count, &bin,
         selected[2]);
  fclose(mem);
  fputs(text, stdout);
  FILE* f = fopen(report_path, "w");
  if (f == NULL || fputs(text, f) == EOF || fclose(f) != 0) {
    fprintf(stderr, "bench-net: cannot write %s: %s\n", report_path, strerror(errno));
    error = 1;
  } else {
    fprintf(stderr, "bench-net: wrote %s\n", report_path);
  }
  free(text);
  for (int i = 0; i < net_count; i++) free(nets[i].layers);
  gemmi8_threadpool_destroy(pool);
  ort_close(ort);
  return error ? 2 : differ ? 1 : 0;
}
