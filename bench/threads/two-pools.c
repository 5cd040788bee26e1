/*
 * Two gemmi8 pools in one process, each driven by its own thread (two operators run
 * from two threads, or gemmi8 beside a framework's pool): each pool's time per GEMM
 * against its share of the machine, which is what a single thread per caller gets
 * when two run at once. qu8s8, fp32 output, the shapes given as M N K (default: three
 * from the benchmark), one second per measurement, two rounds.
 *   two-pools [M N K ...]     prints a markdown table
 */
#include <pthread.h>
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

struct problem {
  size_t m, n, k;
  const uint8_t* a;
  const void* packed;
};

struct job {
  const struct problem* p;
  size_t threads; /* 1: the calling thread alone, else a pool of that many */
  double us;      /* per call, measured */
};

static void* run(void* arg)
{
  struct job* j = arg;
  const struct problem* p = j->p;
  uint8_t* c = malloc(p->m * p->n);
  const float scale = 0.0001f;
  const gemmi8_requant rq = {.mode = gemmi8_requant_fp32, .scale = &scale, .zero_point = 128,
                             .min = 0, .max = 255};
  gemmi8_threadpool* pool = NULL;
  gemmi8_parallel par;
  const gemmi8_parallel* use = NULL;
  if (j->threads > 1 && gemmi8_threadpool_create(j->threads, NULL, &pool) == gemmi8_status_success) {
    gemmi8_threadpool_parallel(pool, &par);
    use = &par;
  }
  long calls = 0;
  const double t0 = now();
  double t = t0;
  while (c != NULL && t - t0 < 1.0) {
    gemmi8_qu8s8_gemm_ex(p->m, p->n, p->k, p->a, p->k, p->packed, &rq, c, p->n, use);
    calls++;
    t = now();
  }
  j->us = calls ? 1e6 * (t - t0) / (double) calls : 0.0;
  gemmi8_threadpool_destroy(pool);
  free(c);
  return NULL;
}

/* Two jobs at once, each on its own thread. */
static void together(struct job* x, struct job* y)
{
  pthread_t tx, ty;
  const int sx = pthread_create(&tx, NULL, run, x) == 0;
  const int sy = pthread_create(&ty, NULL, run, y) == 0;
  if (sx) pthread_join(tx, NULL);
  if (sy) pthread_join(ty, NULL);
}

int main(int argc, char** argv)
{
  static const size_t defaults[] = {196, 256, 2304, 49, 512, 4608, 8, 1000, 512};
  const size_t count = argc > 3 ? (size_t) (argc - 1) / 3 : 3;
  printf("| M x N x K | round | alone, 1 thread | alone, pool of 2 | two single threads at once "
         "| two pools of 2 at once | pools / single threads |\n|---|---:|---:|---:|---:|---:|---:|\n");
  for (size_t s = 0; s < count; s++) {
    struct problem p;
    p.m = argc > 3 ? strtoul(argv[1 + 3 * s], NULL, 10) : defaults[3 * s];
    p.n = argc > 3 ? strtoul(argv[2 + 3 * s], NULL, 10) : defaults[3 * s + 1];
    p.k = argc > 3 ? strtoul(argv[3 + 3 * s], NULL, 10) : defaults[3 * s + 2];
    uint8_t* a = malloc(p.m * p.k);
    int8_t* b = malloc(p.n * p.k);
    void* packed = NULL;
    if (a == NULL || b == NULL) return 1;
    for (size_t i = 0; i < p.m * p.k; i++) a[i] = (uint8_t) (i * 7 + i / 13);
    for (size_t i = 0; i < p.n * p.k; i++) b[i] = (int8_t) (i * 13 + i / 7);
    if (gemmi8_qu8s8_pack_alloc(p.n, p.k, b, p.k, GEMMI8_B_NK, 119, NULL, &packed) !=
        gemmi8_status_success) {
      return 1;
    }
    p.a = a;
    p.packed = packed;
    for (int round = 1; round <= 2; round++) {
      struct job one = {&p, 1, 0}, pool = {&p, 2, 0};
      run(&one);
      run(&pool);
      struct job s1 = {&p, 1, 0}, s2 = {&p, 1, 0}, p1 = {&p, 2, 0}, p2 = {&p, 2, 0};
      together(&s1, &s2);
      together(&p1, &p2);
      printf("| %zu x %zu x %zu | %d | %.1f us | %.1f us | %.1f / %.1f us | %.1f / %.1f us | %.3f |\n",
             p.m, p.n, p.k, round, one.us, pool.us, s1.us, s2.us, p1.us, p2.us,
             (p1.us + p2.us) / (s1.us + s2.us));
    }
    gemmi8_packed_free(packed);
    free(a);
    free(b);
  }
  return 0;
}
