/*
 * Two threads against one, measured in pairs: for each case, blocks of calls on one
 * thread and on two alternate (about 10 ms each, the order swapped every pair), and
 * the ratio is taken within each pair. The VM this benchmark was written on runs at
 * one of two speeds about 2x apart for tens of seconds at a time; two blocks a few
 * milliseconds apart see the same speed, where the repetitions of a long interleaved
 * run (load.sh's Google Benchmark part) may not: there a case that runs the very same
 * code at one and at two threads (1000 x 1 x 1280, below the threading threshold)
 * came out 1.33x "slower" at two.
 *
 * Cases: gemmi8 qu8s8 with per-channel fp32 requantization (the benchmark's gemmi8
 * series) on the ten shapes, the fully-connected layers, and ResNet-18's and
 * MobileNetV2's convolutions, each layer alone and each network's layers in a row
 * (weighted by how often each occurs), on gemmi8's pool of 2 and, when built with
 * pthreadpool, on a caller's pthreadpool of 2.
 *
 *   paired-load [--busy] [--split-cost] [--pairs N] [--block-ms T] [--filter TEXT]
 *               [SHAPES FC_SHAPES LAYERS]
 *
 * --busy: a busy loop pinned to CPU 0 runs through the measurement (both threads
 * counts alike). --split-cost: instead of a pool, a parallel-for that says 2 threads
 * and runs the tasks on the calling thread in a loop: what the split costs. --filter:
 * only the cases whose name contains TEXT. Prints a markdown table: the median time
 * per call on one and on two threads and the median of the pairs' ratios with their
 * range.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gemmi8.h>
#ifdef GEMMI8_HAVE_PTHREADPOOL
#include <pthreadpool.h>
#endif

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

static int by_value(const void* x, const void* y)
{
  const double a = *(const double*) x, b = *(const double*) y;
  return a < b ? -1 : a > b;
}

static void* zalloc(size_t bytes)
{
  void* p = NULL;
  if (posix_memalign(&p, 64, bytes == 0 ? 64 : (bytes + 63) / 64 * 64) != 0) {
    fprintf(stderr, "paired-load: out of memory\n");
    exit(1);
  }
  memset(p, 0, bytes);
  return p;
}

static void fill(uint8_t* p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t) ((i * 7 + i / 13) * 2654435761u >> (seed & 7));
}

/* One case: a GEMM, or a run of convolution operators. */
struct gemm {
  size_t m, n, k;
  uint8_t *a, *c;
  void* packed;
  float* scale;
  gemmi8_requant rq;
};
struct conv {
  gemmi8_convolution* op;
  size_t count;
};
struct task {
  char name[160];
  int is_gemm;
  struct gemm g;
  struct conv* convs;
  size_t nconvs;
};

static int run_task(struct task* t, const gemmi8_parallel* parallel)
{
  if (t->is_gemm) {
    struct gemm* g = &t->g;
    return gemmi8_qu8s8_gemm_ex(g->m, g->n, g->k, g->a, g->k, g->packed, &g->rq, g->c, g->n,
                                parallel) != gemmi8_status_success;
  }
  for (size_t i = 0; i < t->nconvs; i++) {
    for (size_t r = 0; r < t->convs[i].count; r++) {
      if (gemmi8_convolution_run(t->convs[i].op, parallel) != gemmi8_status_success) return 1;
    }
  }
  return 0;
}

static float* scales(size_t n)
{
  float* s = zalloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) s[i] = 0.0002f + 0.00001f * (float) (i % 17);
  return s;
}

static void make_gemm(struct task* t, size_t n, size_t m, size_t k, const char* kind)
{
  struct gemm* g = &t->g;
  t->is_gemm = 1;
  snprintf(t->name, sizeof(t->name), "%s %zux%zux%zu", kind, n, m, k);
  g->m = m, g->n = n, g->k = k;
  g->a = zalloc(m * k);
  g->c = zalloc(m * n);
  int8_t* b = zalloc(n * k);
  fill(g->a, m * k, 1);
  fill((uint8_t*) b, n * k, 2);
  int32_t* bias = zalloc(n * sizeof(int32_t));
  if (gemmi8_qu8s8_pack_alloc(n, k, b, k, GEMMI8_B_NK, 119, bias, &g->packed) !=
      gemmi8_status_success) {
    fprintf(stderr, "paired-load: pack failed for %s\n", t->name);
    exit(1);
  }
  free(b);
  free(bias);
  g->scale = scales(n);
  g->rq = (gemmi8_requant){.mode = gemmi8_requant_fp32, .per_channel = 1, .scale = g->scale,
                           .zero_point = 128, .min = 0, .max = 255};
}

/* One layer of layers.txt as an operator over its own input and output. */
static gemmi8_convolution* make_conv(size_t k, size_t stride, size_t pad, size_t ih, size_t iw,
                                     size_t cin, size_t cout, int depthwise)
{
  gemmi8_conv_geometry g = {0};
  g.kernel_height = g.kernel_width = k;
  g.stride_height = g.stride_width = stride;
  g.dilation_height = g.dilation_width = 1;
  g.padding_top = g.padding_left = g.padding_bottom = g.padding_right = pad;
  g.groups = depthwise ? cin : 1;
  g.group_input_channels = depthwise ? 1 : cin;
  g.group_output_channels = depthwise ? 1 : cout;
  const size_t depth = k * k * g.group_input_channels;
  int8_t* w = zalloc(cout * depth);
  fill((uint8_t*) w, cout * depth, 3);
  int32_t* bias = zalloc(cout * sizeof(int32_t));
  float* s = scales(cout); /* kept: the operator may refer to it */
  const gemmi8_requant rq = {.mode = gemmi8_requant_fp32, .per_channel = 1, .scale = s,
                             .zero_point = 128, .min = 0, .max = 255};
  gemmi8_convolution* op = NULL;
  if (gemmi8_qu8s8_convolution_create(&g, w, 128, bias, &rq, &op) != gemmi8_status_success) {
    fprintf(stderr, "paired-load: convolution create failed\n");
    exit(1);
  }
  free(w);
  free(bias);
  const size_t oh = (ih + 2 * pad - k) / stride + 1, ow = (iw + 2 * pad - k) / stride + 1;
  uint8_t* x = zalloc(ih * iw * cin);
  uint8_t* y = zalloc(oh * ow * cout);
  fill(x, ih * iw * cin, 4);
  size_t h, wd;
  if (gemmi8_convolution_setup(op, 1, ih, iw, x, cin, y, cout, &h, &wd) !=
      gemmi8_status_success) {
    fprintf(stderr, "paired-load: convolution setup failed\n");
    exit(1);
  }
  return op;
}

/* The per-call time of one block of `reps` calls. */
static double block(struct task* t, const gemmi8_parallel* parallel, size_t reps)
{
  const double t0 = now();
  for (size_t r = 0; r < reps; r++) {
    if (run_task(t, parallel) != 0) {
      fprintf(stderr, "paired-load: %s failed\n", t->name);
      exit(1);
    }
  }
  return (now() - t0) / (double) reps;
}

static void measure(struct task* t, const char* pf_name, const gemmi8_parallel* two, int pairs,
                    double block_s)
{
  /* warm both, then size a block at ~block_s on one thread */
  block(t, NULL, 1);
  block(t, two, 1);
  double one = block(t, NULL, 3);
  size_t reps = (size_t) (block_s / one);
  if (reps < 1) reps = 1;
  double* ratio = zalloc((size_t) pairs * sizeof(double));
  double* t1 = zalloc((size_t) pairs * sizeof(double));
  double* t2 = zalloc((size_t) pairs * sizeof(double));
  for (int p = 0; p < pairs; p++) {
    if (p % 2 == 0) {
      t1[p] = block(t, NULL, reps);
      t2[p] = block(t, two, reps);
    } else {
      t2[p] = block(t, two, reps);
      t1[p] = block(t, NULL, reps);
    }
    ratio[p] = t2[p] / t1[p];
  }
  qsort(ratio, (size_t) pairs, sizeof(double), by_value);
  qsort(t1, (size_t) pairs, sizeof(double), by_value);
  qsort(t2, (size_t) pairs, sizeof(double), by_value);
  printf("| %s | %s | %.1f | %.1f | %.3f | %.3f - %.3f |\n", t->name, pf_name,
         1e6 * t1[pairs / 2], 1e6 * t2[pairs / 2], ratio[pairs / 2], ratio[0],
         ratio[pairs - 1]);
  fflush(stdout);
  free(ratio);
  free(t1);
  free(t2);
}

#ifdef GEMMI8_HAVE_PTHREADPOOL
struct ptp_call {
  gemmi8_task_fn task;
  void* context;
};
static void ptp_task(void* arg, size_t i)
{
  const struct ptp_call* call = arg;
  call->task(call->context, i);
}
static void ptp_parallel_for(void* context, gemmi8_task_fn task, void* task_context,
                             size_t count)
{
  struct ptp_call call = {task, task_context};
  pthreadpool_parallelize_1d((pthreadpool_t) context, ptp_task, &call, count, 0);
}
#endif

static void serial_for(void* context, gemmi8_task_fn task, void* task_context, size_t count)
{
  (void) context;
  for (size_t i = 0; i < count; i++) task(task_context, i);
}

static size_t read_tasks(const char* shapes, const char* fc, const char* layers,
                         struct task** out)
{
  size_t n = 0, cap = 256;
  struct task* t = zalloc(cap * sizeof(*t));
  char line[512];
  const char* files[2] = {shapes, fc};
  for (int f = 0; f < 2; f++) {
    FILE* in = fopen(files[f], "r");
    if (in == NULL) {
      fprintf(stderr, "paired-load: cannot read %s\n", files[f]);
      exit(1);
    }
    while (fgets(line, sizeof(line), in) != NULL) {
      size_t rows, cols, depth;
      char* hash = strchr(line, '#');
      if (hash != NULL) *hash = '\0';
      if (sscanf(line, "%zu %zu %zu", &rows, &cols, &depth) != 3) continue;
      if (n == cap) continue;
      make_gemm(&t[n++], rows, cols, depth, f == 0 ? "gemm" : "fc");
    }
    fclose(in);
  }
  /* the networks: each layer alone, then the network's layers in a row */
  static const char* const nets[2] = {"resnet18", "mobilenetv2"};
  for (int net = 0; net < 2; net++) {
    FILE* in = fopen(layers, "r");
    if (in == NULL) {
      fprintf(stderr, "paired-load: cannot read %s\n", layers);
      exit(1);
    }
    struct conv* all = zalloc(64 * sizeof(struct conv));
    size_t nall = 0;
    while (fgets(line, sizeof(line), in) != NULL && n + 1 < cap) {
      char network[64], layer[64], kernel[16];
      size_t count, stride, pad, ih, iw, cin, cout;
      char* hash = strchr(line, '#');
      if (hash != NULL) *hash = '\0';
      if (sscanf(line, "%63s %63s %zu %15s %zu %zu %zu %zu %zu %zu", network, layer, &count,
                 kernel, &stride, &pad, &ih, &iw, &cin, &cout) != 10 ||
          strcmp(network, nets[net]) != 0 || nall == 64) {
        continue;
      }
      char* end;
      const size_t k = strtoul(kernel, &end, 10);
      if (*end != '\0' && strcmp(end, "dw") != 0) continue; /* binary layers: not here */
      struct task* c = &t[n++];
      snprintf(c->name, sizeof(c->name), "%s %s", network, layer);
      c->convs = zalloc(sizeof(struct conv));
      c->convs[0] = (struct conv){make_conv(k, stride, pad, ih, iw, cin, cout, *end != '\0'), 1};
      c->nconvs = 1;
      all[nall++] = (struct conv){c->convs[0].op, count};
    }
    fclose(in);
    if (nall != 0) {
      struct task* c = &t[n++];
      snprintf(c->name, sizeof(c->name), "%s, every layer", nets[net]);
      c->convs = all;
      c->nconvs = nall;
    } else {
      free(all);
    }
  }
  *out = t;
  return n;
}

int main(int argc, char** argv)
{
  int busy = 0, pairs = 9, split_cost = 0;
  double block_ms = 10;
  const char* filter = NULL;
  const char* files[3] = {"bench/shapes.txt", "bench/shapes-fc.txt", "bench/conv/layers.txt"};
  int nfiles = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--busy") == 0) {
      busy = 1;
    } else if (strcmp(argv[i], "--split-cost") == 0) {
      split_cost = 1;
    } else if (strcmp(argv[i], "--pairs") == 0 && i + 1 < argc) {
      pairs = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--block-ms") == 0 && i + 1 < argc) {
      block_ms = atof(argv[++i]);
    } else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
      filter = argv[++i];
    } else if (argv[i][0] != '-' && nfiles < 3) {
      files[nfiles++] = argv[i];
    } else {
      fprintf(stderr,
              "usage: paired-load [--busy] [--split-cost] [--pairs N] [--block-ms T] [--filter TEXT] "
              "[SHAPES FC_SHAPES LAYERS]\n");
      return 2;
    }
  }
  if (pairs < 1) pairs = 1;
  struct task* tasks;
  const size_t ntasks = read_tasks(files[0], files[1], files[2], &tasks);

  gemmi8_threadpool* pool;
  gemmi8_parallel two;
  if (gemmi8_threadpool_create(2, NULL, &pool) != gemmi8_status_success ||
      gemmi8_threadpool_parallel(pool, &two) != gemmi8_status_success) {
    fprintf(stderr, "paired-load: no pool\n");
    return 1;
  }
#ifdef GEMMI8_HAVE_PTHREADPOOL
  pthreadpool_t ptp = pthreadpool_create(2);
  const gemmi8_parallel two_ptp = {ptp_parallel_for, ptp, 2};
#endif
  pid_t child = 0;
  if (busy) {
    child = fork();
    if (child == 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(0, &set);
      sched_setaffinity(0, sizeof(set), &set);
      for (;;) __asm__ __volatile__("" ::: "memory");
    }
    usleep(300000);
  }
  if (split_cost) {
    printf("| case (Row x Col x Depth, or layer) | parallel-for | unsplit, us | split, us | "
           "split / unsplit (median of %d pairs) | range |\n|---|---|---:|---:|---:|---|\n",
           pairs);
  } else {
    printf("| case (Row x Col x Depth, or layer) | parallel-for | 1 thread, us | 2 threads, us | "
           "2T / 1T (median of %d pairs) | range |\n|---|---|---:|---:|---:|---|\n",
           pairs);
  }
  for (size_t i = 0; i < ntasks; i++) {
    if (filter != NULL && strstr(tasks[i].name, filter) == NULL) continue;
    if (split_cost) {
      const gemmi8_parallel serial = {serial_for, NULL, 2};
      measure(&tasks[i], "split for 2, run on 1", &serial, pairs, 1e-3 * block_ms);
      continue;
    }
    measure(&tasks[i], "gemmi8 pool", &two, pairs, 1e-3 * block_ms);
#ifdef GEMMI8_HAVE_PTHREADPOOL
    measure(&tasks[i], "pthreadpool", &two_ptp, pairs, 1e-3 * block_ms);
#endif
  }
  if (child > 0) {
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
  }
  return 0;
}
