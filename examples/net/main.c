/*
 * gemmi8-net: builds one of the networks of net.h, runs it, times it.
 *
 *   gemmi8-net NETWORK [-t threads] [-n runs] [-e export_prefix] [-s seed] [-p] [-k]
 *
 * NETWORK is resnet18, mobilenetv2 or bin-resnet18. The input is the one the network
 * was calibrated on (drawn from the seed, default 1). Prints the time of a run, best
 * and median of n (default 20), on the calling thread, then with -t N (N > 1) on
 * gemmi8's pool of N threads and, with -p too, on pthreadpool as the caller's
 * parallel-for; for each, the time per kind of layer (a second series of n runs with
 * per-layer timing on) and whether the output bytes equal the calling thread's. Then
 * the output's first bytes and a checksum (FNV-1a, 64 bits). -e PREFIX writes
 * PREFIX.json and PREFIX.bin (gnet_export; the int8 networks only). -k: every tensor
 * in a buffer of its own (GNET_KEEP_TENSORS) rather than in one arena. Exit status 0,
 * or 1 on an error or when the threads' bytes differ.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime in strict C11 */
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef GNET_HAVE_PTHREADPOOL
#include <pthreadpool.h>
#endif

#include "net.h"

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

static int compare_double(const void* a, const void* b)
{
  const double x = *(const double*) a, y = *(const double*) b;
  return (x > y) - (x < y);
}

static uint64_t fnv1a(const uint8_t* p, size_t n)
{
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

#ifdef GNET_HAVE_PTHREADPOOL
/* pthreadpool's 1-D loop as gemmi8's parallel-for: the task types agree */
static void pthreadpool_for(void* pool, gemmi8_task_fn task, void* task_context, size_t count)
{
  pthreadpool_parallelize_1d((pthreadpool_t) pool, task, task_context, count, 0);
}
#endif

static const char* const kinds[] = {"conv", "dwconv", "bconv", "fc", "add", "maxpool",
                                    "avgpool", "gap", "binarize", "quantize", "dequantize"};
enum { KINDS = sizeof(kinds) / sizeof(kinds[0]), GEMM_KINDS = 4 };

static size_t kind_index(const char* kind)
{
  for (size_t k = 0; k < KINDS; k++) {
    if (strcmp(kind, kinds[k]) == 0) return k;
  }
  return KINDS - 1;
}

/* n timed runs on parallel (after one to warm up), their best and median; then n runs
 * with per-layer timing, the split per kind; and the bytes against reference. */
static int measure(gnet* net, const char* label, const gemmi8_parallel* parallel, int runs,
                   const uint8_t* reference, int* same)
{
  double* t = malloc((size_t) runs * sizeof(double));
  if (t == NULL) return -1;
  if (gnet_run(net, parallel) != 0) {
    free(t);
    return -1;
  }
  for (int i = 0; i < runs; i++) {
    const double t0 = now();
    if (gnet_run(net, parallel) != 0) {
      free(t);
      return -1;
    }
    t[i] = now() - t0;
  }
  size_t bytes = 0;
  const uint8_t* out = gnet_output(net, &bytes);
  *same = reference == NULL || memcmp(out, reference, bytes) == 0;
  qsort(t, (size_t) runs, sizeof(double), compare_double);
  printf("%-24s best %8.3f ms   median %8.3f ms   (%d runs)%s\n", label, 1e3 * t[0],
         1e3 * t[runs / 2], runs,
         reference == NULL ? "" : *same ? "   bytes as on 1 thread" : "   BYTES DIFFER");
  free(t);

  gnet_timing_reset(net);
  gnet_timing(net, 1);
  for (int i = 0; i < runs; i++) {
    if (gnet_run(net, parallel) != 0) return -1;
  }
  gnet_timing(net, 0);
  double seconds[KINDS] = {0};
  size_t layers[KINDS] = {0};
  double total = 0.0;
  for (size_t i = 0; i < gnet_layers(net); i++) {
    const size_t k = kind_index(gnet_layer_kind(net, i));
    seconds[k] += gnet_layer_seconds(net, i);
    layers[k]++;
    total += gnet_layer_seconds(net, i);
  }
  double gemm = 0.0;
  for (size_t k = 0; k < KINDS; k++) {
    if (layers[k] == 0) continue;
    printf("    %-11s %3zu layers %8.3f ms %6.1f%%\n", kinds[k], layers[k],
           1e3 * seconds[k] / runs, 100.0 * seconds[k] / total);
    if (k < GEMM_KINDS) gemm += seconds[k];
  }
  printf("    convolutions and classifier %.1f%%, ops between them %.1f%% "
         "(%.3f ms a run, layer times summed)\n",
         100.0 * gemm / total, 100.0 * (total - gemm) / total, 1e3 * total / runs);
  return 0;
}

static void usage(void)
{
  fprintf(stderr,
          "usage: gemmi8-net resnet18|mobilenetv2|bin-resnet18 [-t threads] [-n runs] "
          "[-e export_prefix] [-s seed] [-p] [-k]\n");
}

int main(int argc, char** argv)
{
  if (argc < 2) {
    usage();
    return 1;
  }
  gnet_kind kind;
  if (strcmp(argv[1], "resnet18") == 0) {
    kind = GNET_RESNET18;
  } else if (strcmp(argv[1], "mobilenetv2") == 0) {
    kind = GNET_MOBILENETV2;
  } else if (strcmp(argv[1], "bin-resnet18") == 0) {
    kind = GNET_BIN_RESNET18;
  } else {
    usage();
    return 1;
  }
  unsigned long threads = 1, runs = 20;
  unsigned long long seed = 1;
  const char* prefix = NULL;
  int use_pthreadpool = 0;
  unsigned flags = 0;
  for (int i = 2; i < argc; i++) {
    const int has_value = i + 1 < argc;
    char* end = NULL;
    errno = 0;
    if (strcmp(argv[i], "-t") == 0 && has_value) {
      threads = strtoul(argv[++i], &end, 10);
    } else if (strcmp(argv[i], "-n") == 0 && has_value) {
      runs = strtoul(argv[++i], &end, 10);
    } else if (strcmp(argv[i], "-s") == 0 && has_value) {
      seed = strtoull(argv[++i], &end, 0);
    } else if (strcmp(argv[i], "-e") == 0 && has_value) {
      prefix = argv[++i];
    } else if (strcmp(argv[i], "-p") == 0) {
      use_pthreadpool = 1;
    } else if (strcmp(argv[i], "-k") == 0) {
      flags |= GNET_KEEP_TENSORS;
    } else {
      usage();
      return 1;
    }
    if (end != NULL && (*end != '\0' || errno != 0)) {
      usage();
      return 1;
    }
  }
  if (threads == 0 || threads > GEMMI8_MAX_THREADS || runs == 0 || runs > 100000) {
    usage();
    return 1;
  }
#ifndef GNET_HAVE_PTHREADPOOL
  if (use_pthreadpool) {
    fprintf(stderr, "gemmi8-net: built without pthreadpool (-p)\n");
    return 1;
  }
#endif

  gnet* net = NULL;
  const double t0 = now();
  if (gnet_create_ex(kind, (uint64_t) seed, flags, &net) != 0) return 1;
  const double built = now() - t0;
  size_t h, w, c, bytes;
  (void) gnet_input(net, &h, &w, &c);
  size_t arena = 0;
  const size_t tensors = gnet_tensor_bytes(net, &arena);
  printf("%s: seed %llu, %zu layers, input %zux%zux%zu; gemmi8 %s on %s; built and calibrated "
         "in %.2f s\n",
         gnet_name(net), seed, gnet_layers(net), h, w, c, gemmi8_version(), gemmi8_isa_name(),
         built);
  if (arena != 0) {
    printf("tensors: %zu KB in an arena of %zu KB\n", tensors >> 10, arena >> 10);
  } else {
    printf("tensors: %zu KB, a buffer each\n", tensors >> 10);
  }
  if (prefix != NULL) {
    char json[4096], bin[4096];
    snprintf(json, sizeof(json), "%s.json", prefix);
    snprintf(bin, sizeof(bin), "%s.bin", prefix);
    if (gnet_export(net, json, bin) != 0) {
      fprintf(stderr, "gemmi8-net: no export (%s)\n",
              kind == GNET_BIN_RESNET18 ? "the binary network has none" : "write failed");
      gnet_destroy(net);
      return 1;
    }
    printf("wrote %s and %s\n", json, bin);
  }

  /* the calling thread's bytes are the reference */
  int status = 0, same = 1;
  if (measure(net, "calling thread:", NULL, (int) runs, NULL, &same) != 0) status = 1;
  uint8_t reference[1000];
  const uint8_t* out = gnet_output(net, &bytes);
  memcpy(reference, out, bytes < sizeof(reference) ? bytes : sizeof(reference));

  if (status == 0 && threads > 1) {
    gemmi8_threadpool* pool = NULL;
    gemmi8_parallel parallel;
    char label[64];
    snprintf(label, sizeof(label), "gemmi8 pool, %lu threads:", threads);
    if (gemmi8_threadpool_create(threads, NULL, &pool) != gemmi8_status_success ||
        gemmi8_threadpool_parallel(pool, &parallel) != gemmi8_status_success ||
        measure(net, label, &parallel, (int) runs, reference, &same) != 0) {
      status = 1;
    }
    if (!same) status = 1;
    gemmi8_threadpool_destroy(pool);
#ifdef GNET_HAVE_PTHREADPOOL
    if (status == 0 && use_pthreadpool) {
      pthreadpool_t pp = pthreadpool_create(threads);
      if (pp == NULL) {
        status = 1;
      } else {
        const gemmi8_parallel caller = {pthreadpool_for, pp, pthreadpool_get_threads_count(pp)};
        snprintf(label, sizeof(label), "pthreadpool, %lu threads:", threads);
        if (measure(net, label, &caller, (int) runs, reference, &same) != 0 || !same) {
          status = 1;
        }
        pthreadpool_destroy(pp);
      }
    }
#endif
  }

  out = gnet_output(net, &bytes);
  printf("output: %zu bytes:", bytes);
  for (size_t i = 0; i < 16 && i < bytes; i++) printf(" %u", out[i]);
  printf(" ...; checksum %016" PRIx64 "\n", fnv1a(out, bytes));
  gnet_destroy(net);
  return status;
}
