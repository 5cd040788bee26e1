/*
 * What splitting a GEMM for two threads costs on its own: the GEMM's tasks as split
 * for two threads, all run on the calling thread (a parallel-for that says 2 threads
 * and runs the tasks in a loop), against the unsplit GEMM on the same thread. qu8s8,
 * fp32 output; the ratio is the extra work the split adds (smaller tiles, weights
 * streamed once per row chunk). Median of 41 interleaved pairs per shape.
 *   split-cost [M N K ...]     prints a markdown table (default: the benchmark's ten
 *                              shapes and some of its fully-connected layers)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gemmi8.h>

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

static void serial_for(void* context, gemmi8_task_fn task, void* task_context, size_t count)
{
  (void) context;
  for (size_t i = 0; i < count; i++) task(task_context, i);
}

static int by_value(const void* x, const void* y)
{
  const double a = *(const double*) x, b = *(const double*) y;
  return a < b ? -1 : a > b;
}

int main(int argc, char** argv)
{
  /* M N K (M = pixels or batch, N = output channels) */
  static const size_t defaults[] = {500, 500, 500, 3136, 64, 64, 784, 128, 64, 196, 256, 2304,
                                    49, 512, 2304, 49, 512, 4608, 12544, 32, 27, 49, 1024, 1024,
                                    3136, 128, 128, 2000, 2000, 2000, 1, 1000, 1280, 8, 1000, 512,
                                    4, 3072, 768, 1, 4096, 4096, 8, 4096, 4096};
  const size_t count = argc > 3 ? (size_t) (argc - 1) / 3 : sizeof(defaults) / sizeof(defaults[0]) / 3;
  enum { pairs = 41 };
  printf("| M x N x K | split for 2 threads, run on 1 / unsplit: median | quartiles |\n"
         "|---|---:|---|\n");
  for (size_t s = 0; s < count; s++) {
    const size_t m = argc > 3 ? strtoul(argv[1 + 3 * s], NULL, 10) : defaults[3 * s];
    const size_t n = argc > 3 ? strtoul(argv[2 + 3 * s], NULL, 10) : defaults[3 * s + 1];
    const size_t k = argc > 3 ? strtoul(argv[3 + 3 * s], NULL, 10) : defaults[3 * s + 2];
    uint8_t* a = malloc(m * k);
    int8_t* b = malloc(n * k);
    uint8_t* c = malloc(m * n);
    void* packed = NULL;
    if (a == NULL || b == NULL || c == NULL) return 1;
    for (size_t i = 0; i < m * k; i++) a[i] = (uint8_t) (i * 7 + i / 13);
    for (size_t i = 0; i < n * k; i++) b[i] = (int8_t) (i * 13 + i / 7);
    if (gemmi8_qu8s8_pack_alloc(n, k, b, k, GEMMI8_B_NK, 119, NULL, &packed) !=
        gemmi8_status_success) {
      return 1;
    }
    const float scale = 0.0001f;
    const gemmi8_requant rq = {.mode = gemmi8_requant_fp32, .scale = &scale, .zero_point = 128,
                               .min = 0, .max = 255};
    const gemmi8_parallel split = {serial_for, NULL, 2};
    /* about 0.1 G operations per side of a pair */
    const int inner = (int) (1e8 / (2.0 * (double) m * (double) n * (double) k)) + 1;
    double ratio[pairs];
    for (int r = 0; r < pairs; r++) {
      const double t0 = now();
      for (int i = 0; i < inner; i++) gemmi8_qu8s8_gemm_ex(m, n, k, a, k, packed, &rq, c, n, NULL);
      const double t1 = now();
      for (int i = 0; i < inner; i++) gemmi8_qu8s8_gemm_ex(m, n, k, a, k, packed, &rq, c, n, &split);
      const double t2 = now();
      ratio[r] = (t2 - t1) / (t1 - t0);
    }
    qsort(ratio, pairs, sizeof(ratio[0]), by_value);
    printf("| %zu x %zu x %zu | %.3f | %.3f - %.3f |\n", m, n, k, ratio[pairs / 2],
           ratio[pairs / 4], ratio[3 * pairs / 4]);
    gemmi8_packed_free(packed);
    free(a);
    free(b);
    free(c);
  }
  return 0;
}
