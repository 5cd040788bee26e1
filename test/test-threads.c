/*
 * Threads: every GEMM's _ex variant at 1..8 threads (more than this machine's cores
 * included) on gemmi8's pool and on a caller's parallel-for that runs the tasks in a
 * shuffled order, byte for byte against the plain (single-thread) entry point; shapes
 * from below the split threshold to several tasks per thread; the bad-input contract
 * of the _ex variants (nothing written, the parallel-for never called); and, where
 * the build has them, pthreadpool and OpenMP plugged in as the README shows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "ref.h"
#include "test.h"

#if defined(GEMMI8_TEST_PTHREADPOOL)
#include <pthreadpool.h>
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif

enum { max_threads = 8 };

/* ---- a caller's parallel-for: tasks in a shuffled order, on the calling thread ---- */

typedef struct shuffler {
  size_t calls;     /* parallel_for calls */
  size_t* order;
  size_t capacity;
} shuffler;

static void shuffled_for(void* context, gemmi8_task_fn task, void* task_context, size_t count)
{
  shuffler* s = context;
  s->calls++;
  if (count > s->capacity) {
    free(s->order);
    s->order = t_alloc(count * sizeof(size_t));
    s->capacity = count;
  }
  for (size_t i = 0; i < count; i++) s->order[i] = i;
  for (size_t i = count; i > 1; i--) {
    const size_t j = t_below((uint32_t) i);
    const size_t tmp = s->order[i - 1];
    s->order[i - 1] = s->order[j];
    s->order[j] = tmp;
  }
  for (size_t i = 0; i < count; i++) task(task_context, s->order[i]);
}

/* ---- a caller's parallel-for on real threads that stall ------------------------------ */

/* (pthreads, not C11 threads: ThreadSanitizer intercepts pthread_create only) */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

/* Each call starts `helpers` threads; they and the calling thread claim tasks from one
 * counter, the helpers sleeping 0 to 300 microseconds before each claim, as threads
 * that a busy machine deschedules. Claim j runs task (j + offset) % count, the offset
 * drawn per call, so the order differs from call to call. */
typedef struct delayed {
  size_t helpers;
  unsigned seed;
} delayed;

typedef struct delayed_run {
  gemmi8_task_fn task;
  void* task_context;
  size_t count, offset;
  atomic_size_t next;
  unsigned seed;
} delayed_run;

static int delayed_claim(delayed_run* run)
{
  const size_t j = atomic_fetch_add(&run->next, 1);
  if (j >= run->count) return 0;
  run->task(run->task_context, (j + run->offset) % run->count);
  return 1;
}

static void* delayed_helper(void* arg)
{
  delayed_run* run = arg;
  unsigned seed = run->seed ^ (unsigned) (uintptr_t) &seed;
  do {
    seed = seed * 1103515245u + 12345u;
    const struct timespec pause = {0, (long) ((seed >> 8) % 300) * 1000};
    nanosleep(&pause, NULL);
  } while (delayed_claim(run));
  return NULL;
}

static void delayed_for(void* context, gemmi8_task_fn task, void* task_context, size_t count)
{
  delayed* d = context;
  d->seed = d->seed * 1103515245u + 12345u;
  delayed_run run = {task, task_context, count, (d->seed >> 8) % count, 0, d->seed};
  atomic_init(&run.next, 0);
  pthread_t tid[max_threads];
  int started[max_threads];
  const size_t helpers = d->helpers < max_threads ? d->helpers : max_threads;
  for (size_t h = 0; h < helpers; h++) {
    started[h] = pthread_create(&tid[h], NULL, delayed_helper, &run) == 0;
  }
  while (delayed_claim(&run)) {
  }
  for (size_t h = 0; h < helpers; h++) {
    if (started[h]) pthread_join(tid[h], NULL);
  }
}

/* ---- one problem of each family, run every way ------------------------------------ */

typedef struct qcase {
  size_t m, n, k;
} qcase;

/* Shapes: below the split threshold, around it, and with several tasks per thread in
 * both directions (M = 1 splits N only; N = 16 splits M only; 64 x 1100 x 2000, weights
 * above GEMMI8_SPLIT_ROWS_MAX_WEIGHTS, splits N though M has tiles enough). */
static const qcase shapes[] = {{3, 5, 7},      {1, 1000, 512}, {7, 48, 64},   {200, 130, 300},
                               {300, 16, 700}, {1, 77, 4096},  {97, 257, 129}, {500, 64, 64},
                               {64, 300, 1000}, {64, 1100, 2000}};

typedef struct runner {
  const char* name;
  gemmi8_parallel par;
} runner;

static size_t out_bytes(size_t m, size_t n, size_t elem)
{
  return m * n * elem;
}

/* Runs one quantized GEMM kind through _ex with par; 0 if the status was not success. */
static gemmi8_status run_q(int kind, int out, size_t m, size_t n, size_t k, const uint8_t* a,
                           const void* packed, const gemmi8_requant* rq, void* c,
                           const gemmi8_parallel* par)
{
  if (out == 0) {
    switch (kind) {
      case 0: return gemmi8_qu8_gemm_s32_ex(m, n, k, a, k, packed, c, n, par);
      case 1: return gemmi8_qs8_gemm_s32_ex(m, n, k, (const int8_t*) a, k, packed, c, n, par);
      default: return gemmi8_qu8s8_gemm_s32_ex(m, n, k, a, k, packed, c, n, par);
    }
  }
  switch (kind) {
    case 0: return gemmi8_qu8_gemm_ex(m, n, k, a, k, packed, rq, c, n, par);
    case 1: return gemmi8_qs8_gemm_ex(m, n, k, (const int8_t*) a, k, packed, rq, c, n, par);
    default: return gemmi8_qu8s8_gemm_ex(m, n, k, a, k, packed, rq, c, n, par);
  }
}

static void quantized(const runner* runners, size_t nrunners)
{
  static const char* const kinds[] = {"qu8", "qs8", "qu8s8"};
  static const char* const outs[] = {"s32", "fixedpoint", "fp32"};
  for (size_t si = 0; si < T_COUNT(shapes); si++) {
    const qcase sh = shapes[si];
    if (t_quick && sh.m * sh.n * sh.k > 4000000) continue;
    uint8_t* a = t_alloc(sh.m * sh.k);
    uint8_t* b = t_alloc(sh.n * sh.k);
    uint8_t* b_zp = t_alloc(sh.n);
    int32_t* bias = t_alloc(sh.n * sizeof(int32_t));
    int32_t* mult = t_alloc(sh.n * sizeof(int32_t));
    int32_t* shift = t_alloc(sh.n * sizeof(int32_t));
    float* scale = t_alloc(sh.n * sizeof(float));
    t_fill_random(a, sh.m * sh.k);
    t_fill_random(b, sh.n * sh.k);
    t_fill_random(b_zp, sh.n);
    for (size_t j = 0; j < sh.n; j++) {
      bias[j] = (int32_t) t_range(-100000, 100000);
      mult[j] = (int32_t) t_range(1 << 30, INT32_MAX);
      shift[j] = (int32_t) t_range(-14, -8);
      scale[j] = (float) (t_unit() * 1e-3 + 1e-4);
    }
    void* c_want = t_alloc(out_bytes(sh.m, sh.n, 4));
    void* c_got = t_alloc(out_bytes(sh.m, sh.n, 4));
    for (int kind = 0; kind < 3; kind++) {
      void* packed = NULL;
      gemmi8_status st =
          kind == 0 ? gemmi8_qu8_pack_alloc(sh.n, sh.k, b, sh.k, GEMMI8_B_NK, 113, b_zp, 1, bias, &packed)
          : kind == 1 ? gemmi8_qs8_pack_alloc(sh.n, sh.k, (const int8_t*) b, sh.k, GEMMI8_B_NK, -9, bias, &packed)
                      : gemmi8_qu8s8_pack_alloc(sh.n, sh.k, (const int8_t*) b, sh.k, GEMMI8_B_NK, 113, bias, &packed);
      if (!t_expect(st == gemmi8_status_success, "threads", "%s pack: %s", kinds[kind],
                    gemmi8_status_string(st)))
        continue;
      for (int out = 0; out < 3; out++) {
        const gemmi8_requant rq = {out == 1 ? gemmi8_requant_fixedpoint : gemmi8_requant_fp32,
                                   1, mult, shift, scale, kind == 1 ? -3 : 120,
                                   kind == 1 ? -128 : 0, kind == 1 ? 127 : 255};
        const size_t bytes = out_bytes(sh.m, sh.n, out == 0 ? 4 : 1);
        memset(c_want, 0x5A, bytes);
        st = run_q(kind, out, sh.m, sh.n, sh.k, a, packed, &rq, c_want, NULL);
        if (!t_expect(st == gemmi8_status_success, "threads", "%s %s %zux%zux%zu alone: %s",
                      kinds[kind], outs[out], sh.m, sh.n, sh.k, gemmi8_status_string(st)))
          continue;
        for (size_t r = 0; r < nrunners; r++) {
          memset(c_got, 0xA5, bytes);
          st = run_q(kind, out, sh.m, sh.n, sh.k, a, packed, &rq, c_got, &runners[r].par);
          t_expect(st == gemmi8_status_success && memcmp(c_got, c_want, bytes) == 0,
                   "threads", "%s %s M x N x K = %zu x %zu x %zu on %s: status \"%s\", %s",
                   kinds[kind], outs[out], sh.m, sh.n, sh.k, runners[r].name,
                   gemmi8_status_string(st),
                   memcmp(c_got, c_want, bytes) == 0 ? "same bytes" : "bytes differ");
        }
      }
      gemmi8_packed_free(packed);
    }
    free(a);
    free(b);
    free(b_zp);
    free(bias);
    free(mult);
    free(shift);
    free(scale);
    free(c_want);
    free(c_got);
  }
}

static gemmi8_status run_b(int out, size_t m, size_t n, size_t k, const uint64_t* a,
                           size_t words, const void* packed, const float* scale,
                           const float* bias, void* c, const gemmi8_parallel* par)
{
  switch (out) {
    case 0: return gemmi8_bin_gemm_s32_ex(m, n, k, a, words, packed, c, n, par);
    case 1: return gemmi8_bin_gemm_f32_ex(m, n, k, a, words, packed, scale, bias, c, n, par);
    default:
      return gemmi8_bin_gemm_bits_ex(m, n, k, a, words, packed, scale, bias, c,
                                     GEMMI8_BIN_WORDS(n), par);
  }
}

static void binary(const runner* runners, size_t nrunners)
{
  static const qcase bshapes[] = {{5, 7, 100},      {1, 1000, 4096}, {300, 200, 1000},
                                  {64, 130, 8192},  {1000, 33, 2000}, {8, 4096, 2048}};
  static const char* const outs[] = {"s32", "f32", "bits"};
  for (size_t si = 0; si < T_COUNT(bshapes); si++) {
    const qcase sh = bshapes[si];
    if (t_quick && sh.m * sh.n * sh.k > 40000000) continue;
    const size_t words = GEMMI8_BIN_WORDS(sh.k);
    uint64_t* a = t_alloc(sh.m * words * 8);
    uint64_t* b = t_alloc(sh.n * words * 8);
    float* scale = t_alloc(sh.n * sizeof(float));
    float* bias = t_alloc(sh.n * sizeof(float));
    t_fill_random(a, sh.m * words * 8);
    t_fill_random(b, sh.n * words * 8);
    for (size_t j = 0; j < sh.n; j++) {
      scale[j] = (float) (t_unit() * 2 - 1);
      bias[j] = (float) (t_unit() * 20 - 10);
    }
    void* packed = NULL;
    gemmi8_status st = gemmi8_bin_pack_alloc(sh.n, sh.k, b, words, GEMMI8_B_NK, &packed);
    if (t_expect(st == gemmi8_status_success, "threads", "bin pack: %s", gemmi8_status_string(st))) {
      const size_t bytes_max = sh.m * sh.n * 4 + 64;
      void* c_want = t_alloc(bytes_max);
      void* c_got = t_alloc(bytes_max);
      for (int out = 0; out < 3; out++) {
        const size_t bytes = out == 2 ? sh.m * GEMMI8_BIN_WORDS(sh.n) * 8 : sh.m * sh.n * 4;
        memset(c_want, 0x5A, bytes);
        st = run_b(out, sh.m, sh.n, sh.k, a, words, packed, scale, bias, c_want, NULL);
        if (!t_expect(st == gemmi8_status_success, "threads", "bin %s alone: %s", outs[out],
                      gemmi8_status_string(st)))
          continue;
        for (size_t r = 0; r < nrunners; r++) {
          memset(c_got, 0xA5, bytes);
          st = run_b(out, sh.m, sh.n, sh.k, a, words, packed, scale, bias, c_got,
                     &runners[r].par);
          t_expect(st == gemmi8_status_success && memcmp(c_got, c_want, bytes) == 0, "threads",
                   "bin %s M x N x K = %zu x %zu x %zu on %s: status \"%s\", %s", outs[out],
                   sh.m, sh.n, sh.k, runners[r].name, gemmi8_status_string(st),
                   memcmp(c_got, c_want, bytes) == 0 ? "same bytes" : "bytes differ");
        }
      }
      free(c_want);
      free(c_got);
      gemmi8_packed_free(packed);
    }
    free(a);
    free(b);
    free(scale);
    free(bias);
  }
}

/* ---- the bad-input contract of the _ex variants ----------------------------------- */

static void counting_for(void* context, gemmi8_task_fn task, void* task_context, size_t count)
{
  size_t* calls = context;
  (*calls)++;
  for (size_t i = 0; i < count; i++) task(task_context, i);
}

static void errors(void)
{
  enum { M = 64, N = 100, K = 640 };
  uint8_t* a = t_alloc(M * K);
  int8_t* b = t_alloc(N * K);
  t_fill_random(a, M * K);
  t_fill_random(b, N * K);
  void* packed = NULL;
  if (gemmi8_qu8s8_pack_alloc(N, K, b, K, GEMMI8_B_NK, 7, NULL, &packed) != gemmi8_status_success) {
    t_fail("threads", "errors: packing failed");
    free(a);
    free(b);
    return;
  }
  int32_t* c = t_alloc(M * N * 4);
  unsigned char* copy = t_alloc(M * N * 4);
  t_fill_random(c, M * N * 4);
  memcpy(copy, c, M * N * 4);
  size_t calls = 0;
  const gemmi8_parallel good = {counting_for, &calls, 4};
  const gemmi8_parallel no_fn = {NULL, &calls, 4};
  const gemmi8_parallel too_many = {counting_for, &calls, GEMMI8_MAX_THREADS + 1};
  struct {
    const char* what;
    gemmi8_status got;
  } cases[] = {
      {"parallel_for NULL", gemmi8_qu8s8_gemm_s32_ex(M, N, K, a, K, packed, c, N, &no_fn)},
      {"threads > GEMMI8_MAX_THREADS",
       gemmi8_qu8s8_gemm_s32_ex(M, N, K, a, K, packed, c, N, &too_many)},
      {"a_stride k - 1", gemmi8_qu8s8_gemm_s32_ex(M, N, K, a, K - 1, packed, c, N, &good)},
      {"c NULL", gemmi8_qu8s8_gemm_s32_ex(M, N, K, a, K, packed, NULL, N, &good)},
      {"n + 1", gemmi8_qu8s8_gemm_s32_ex(M, N + 1, K, a, K, packed, c, N + 1, &good)},
      {"rq NULL", gemmi8_qu8s8_gemm_ex(M, N, K, a, K, packed, NULL, (uint8_t*) c, N, &good)},
      {"binary: qu8s8 weights",
       gemmi8_bin_gemm_s32_ex(M, N, K, (const uint64_t*) a, K / 64, packed, c, N, &good)},
      {"binary: parallel_for NULL",
       gemmi8_bin_gemm_s32_ex(M, N, K, (const uint64_t*) a, K / 64, packed, c, N, &no_fn)},
  };
  for (size_t i = 0; i < T_COUNT(cases); i++) {
    t_expect(cases[i].got == gemmi8_status_invalid_parameter, "threads",
             "_ex with %s: status \"%s\"", cases[i].what, gemmi8_status_string(cases[i].got));
  }
  t_expect(memcmp(c, copy, M * N * 4) == 0 && calls == 0, "threads",
           "a refused _ex call wrote C or called parallel_for (%zu calls)", calls);
  /* and a valid one calls it */
  gemmi8_status st = gemmi8_qu8s8_gemm_s32_ex(M, N, K, a, K, packed, c, N, &good);
  t_expect(st == gemmi8_status_success && calls >= 1, "threads",
           "a valid _ex call: status \"%s\", %zu parallel_for calls", gemmi8_status_string(st), calls);
  /* pools: bad arguments */
  gemmi8_threadpool* pool = (gemmi8_threadpool*) &calls;
  t_expect(gemmi8_threadpool_create(GEMMI8_MAX_THREADS + 1, NULL, &pool) ==
                   gemmi8_status_invalid_parameter &&
               pool == (gemmi8_threadpool*) &calls,
           "threads", "gemmi8_threadpool_create(too many) not refused, or wrote *pool");
  t_expect(gemmi8_threadpool_create(2, NULL, NULL) == gemmi8_status_invalid_parameter, "threads",
           "gemmi8_threadpool_create(2, NULL, NULL) not refused");
  gemmi8_threadpool_options options;
  gemmi8_threadpool_options_init(&options);
  t_expect(options.spin_us == GEMMI8_THREADPOOL_SPIN_US, "threads",
           "gemmi8_threadpool_options_init: spin_us %u", options.spin_us);
  gemmi8_threadpool_options_init(NULL);
  options.spin_us = GEMMI8_THREADPOOL_SPIN_US_MAX + 1;
  t_expect(gemmi8_threadpool_create(2, &options, &pool) == gemmi8_status_invalid_parameter &&
               pool == (gemmi8_threadpool*) &calls,
           "threads", "gemmi8_threadpool_create(spin_us too long) not refused, or wrote *pool");
  for (size_t i = 0; i < T_COUNT(options.reserved); i++) {
    gemmi8_threadpool_options_init(&options);
    options.reserved[i] = 1;
    t_expect(gemmi8_threadpool_create(2, &options, &pool) == gemmi8_status_invalid_parameter &&
                 pool == (gemmi8_threadpool*) &calls,
             "threads", "gemmi8_threadpool_create(reserved[%zu] set) not refused", i);
  }
  gemmi8_parallel par;
  t_expect(gemmi8_threadpool_parallel(NULL, &par) == gemmi8_status_invalid_parameter, "threads",
           "gemmi8_threadpool_parallel(NULL) not refused");
  t_expect(gemmi8_threadpool_threads(NULL) == 0, "threads", "gemmi8_threadpool_threads(NULL)");
  gemmi8_threadpool_destroy(NULL);
  /* a pool of 0 threads has one per CPU this process may use */
  if (gemmi8_threadpool_create(0, NULL, &pool) == gemmi8_status_success) {
    t_expect(gemmi8_threadpool_threads(pool) >= 1, "threads", "a pool of 0 threads has %zu",
             gemmi8_threadpool_threads(pool));
    gemmi8_threadpool_destroy(pool);
  } else {
    t_fail("threads", "gemmi8_threadpool_create(0) failed");
  }
  free(copy);
  free(c);
  gemmi8_packed_free(packed);
  free(a);
  free(b);
}

/* ---- two pools used at the same time from two threads ----------------------------- */

typedef struct pool_job {
  gemmi8_threadpool* pool;
  const uint8_t* a;
  const void* packed;
  const int32_t* want;
  size_t m, n, k;
  int ok;
} pool_job;

static void* pool_worker(void* arg)
{
  pool_job* j = arg;
  gemmi8_parallel par;
  gemmi8_threadpool_parallel(j->pool, &par);
  int32_t* c = t_alloc(j->m * j->n * 4);
  j->ok = 1;
  for (int it = 0; it < (t_quick ? 3 : 10); it++) {
    memset(c, 0, j->m * j->n * 4);
    const gemmi8_status st =
        gemmi8_qu8s8_gemm_s32_ex(j->m, j->n, j->k, j->a, j->k, j->packed, c, j->n, &par);
    j->ok &= st == gemmi8_status_success && memcmp(c, j->want, j->m * j->n * 4) == 0;
  }
  free(c);
  return NULL;
}

static void two_pools(void)
{
  enum { M = 150, N = 200, K = 300 };
  uint8_t* a = t_alloc(M * K);
  int8_t* b = t_alloc(N * K);
  int32_t* want = t_alloc(M * N * 4);
  t_fill_random(a, M * K);
  t_fill_random(b, N * K);
  void* packed = NULL;
  gemmi8_threadpool* pools[2] = {NULL, NULL};
  if (gemmi8_qu8s8_pack_alloc(N, K, b, K, GEMMI8_B_NK, 3, NULL, &packed) == gemmi8_status_success &&
      gemmi8_qu8s8_gemm_s32(M, N, K, a, K, packed, want, N) == gemmi8_status_success &&
      gemmi8_threadpool_create(2, NULL, &pools[0]) == gemmi8_status_success &&
      gemmi8_threadpool_create(3, NULL, &pools[1]) == gemmi8_status_success) {
    pool_job jobs[2];
    pthread_t tid[2];
    int started[2];
    for (int t = 0; t < 2; t++) {
      jobs[t] = (pool_job){pools[t], a, packed, want, M, N, K, 0};
      started[t] = pthread_create(&tid[t], NULL, pool_worker, &jobs[t]) == 0;
    }
    for (int t = 0; t < 2; t++) {
      if (started[t]) pthread_join(tid[t], NULL);
      t_expect(started[t] && jobs[t].ok, "threads",
               "two pools at once: pool %d gave wrong bytes (started %d)", t, started[t]);
    }
  } else {
    t_fail("threads", "two pools: setup failed");
  }
  gemmi8_threadpool_destroy(pools[0]);
  gemmi8_threadpool_destroy(pools[1]);
  gemmi8_packed_free(packed);
  free(a);
  free(b);
  free(want);
}

/* ---- pools created and destroyed in a loop ------------------------------------------ */

/* Pools of 2 to 8 threads and spin times from 0 (sleep at once) to 2 ms, destroyed
 * right after creation (workers perhaps not yet started), after one run, after runs
 * back to back, and after a pause long enough for the workers to sleep. */
static void pool_churn(void)
{
  enum { M = 256, N = 128, K = 256 }; /* 16.8 M operations: split for up to 8 threads */
  uint8_t* a = t_alloc(M * K);
  int8_t* b = t_alloc(N * K);
  int32_t* want = t_alloc(M * N * 4);
  int32_t* got = t_alloc(M * N * 4);
  t_fill_random(a, M * K);
  t_fill_random(b, N * K);
  void* packed = NULL;
  if (gemmi8_qu8s8_pack_alloc(N, K, b, K, GEMMI8_B_NK, 5, NULL, &packed) != gemmi8_status_success ||
      gemmi8_qu8s8_gemm_s32(M, N, K, a, K, packed, want, N) != gemmi8_status_success) {
    t_fail("threads", "pool churn: setup failed");
  } else {
    static const uint32_t spins[] = {0, 1, 100, 2000};
    const int rounds = t_quick ? 12 : 48;
    int bad = 0, failed = 0;
    for (int it = 0; it < rounds; it++) {
      gemmi8_threadpool_options options;
      gemmi8_threadpool_options_init(&options);
      options.spin_us = spins[it % 4];
      gemmi8_threadpool* pool = NULL;
      if (gemmi8_threadpool_create((size_t) (2 + it % 7), &options, &pool) !=
          gemmi8_status_success) {
        failed++;
        continue;
      }
      gemmi8_parallel par;
      gemmi8_threadpool_parallel(pool, &par);
      const int runs = (it / 4) % 4; /* 0, 1, 2 back to back, 3 with pauses */
      for (int r = 0; r < runs; r++) {
        memset(got, 0, M * N * 4);
        if (gemmi8_qu8s8_gemm_s32_ex(M, N, K, a, K, packed, got, N, &par) !=
                gemmi8_status_success ||
            memcmp(got, want, M * N * 4) != 0) {
          bad++;
        }
        if (runs == 3) {
          const struct timespec pause = {0, 3000000};
          nanosleep(&pause, NULL);
        }
      }
      gemmi8_threadpool_destroy(pool);
    }
    t_expect(bad == 0 && failed == 0, "threads",
             "pool churn: %d runs with wrong bytes, %d pools not created", bad, failed);
  }
  gemmi8_packed_free(packed);
  free(a);
  free(b);
  free(want);
  free(got);
}

/* ---- pthreadpool and OpenMP as the caller's parallel-for -------------------------- */

#if defined(GEMMI8_TEST_PTHREADPOOL)
static void pthreadpool_for(void* pool, gemmi8_task_fn task, void* task_context, size_t count)
{
  pthreadpool_parallelize_1d(pool, task, task_context, count, 0);
}
#endif

#if defined(_OPENMP)
static void openmp_for(void* context, gemmi8_task_fn task, void* task_context, size_t count)
{
  (void) context;
#pragma omp parallel for schedule(dynamic, 1)
  for (long i = 0; i < (long) count; i++) task(task_context, (size_t) i);
}
#endif

/* gemmi8_split_rows (src/parallel.h), which every threaded GEMM's row chunks come from:
 * the chunks tile [0, m) in order, each whole tiles of mr rows (the last may be short),
 * their tile counts differ by at most one, and every run of chunks from the first holds
 * its share of the tiles to within one (so that contiguous ranges of chunks, as
 * parallel-fors hand them out, hold the same rows to a tile). And the first tile of a
 * chunk where c * (tiles % mchunks) exceeds size_t. */
static void split_rows(void)
{
  static const size_t mrs[] = {1, 4, 6, 7, 8};
  int ok = 1;
  for (size_t i = 0; i < sizeof(mrs) / sizeof(mrs[0]) && ok; i++) {
    const size_t mr = mrs[i];
    for (size_t m = 1; m <= 300 && ok; m++) {
      const size_t tiles = (m + mr - 1) / mr;
      for (size_t mchunks = 1; mchunks <= tiles && mchunks <= 40 && ok; mchunks++) {
        size_t next = 0, lo = tiles / mchunks, hi = (tiles + mchunks - 1) / mchunks;
        for (size_t c = 0; c < mchunks && ok; c++) {
          size_t m0 = 0, rows = 0;
          gemmi8_split_rows(m, mr, mchunks, c, &m0, &rows);
          const size_t t = (rows + mr - 1) / mr, before = m0 / mr;
          /* tiles in chunks 0..c, against (c + 1) * tiles / mchunks */
          const double share = (double) (c + 1) * (double) tiles / (double) mchunks;
          const double have = (double) (before + t);
          ok = m0 == next && m0 % mr == 0 && rows > 0 && (t == lo || t == hi) &&
               have > share - 1.0 && have < share + 1.0;
          if (!ok) {
            t_fail("gemmi8_split_rows", "m %zu, mr %zu, %zu chunks: chunk %zu is rows %zu + %zu",
                   m, mr, mchunks, c, m0, rows);
          }
          next = m0 + rows;
        }
        if (ok && next != m) {
          ok = 0;
          t_fail("gemmi8_split_rows", "m %zu, mr %zu, %zu chunks end at row %zu", m, mr,
                 mchunks, next);
        }
      }
    }
  }
  /* chunk c starts at floor(c * tiles / mchunks); with over 2^32 chunks (2^16 on 32-bit
   * size_t) c * (tiles % mchunks) exceeds size_t, so the reference takes twice the bits */
#if SIZE_MAX > UINT32_MAX
  typedef unsigned __int128 wide;
  const size_t n = ((size_t) 1 << 33) + 3;
#else
  typedef uint64_t wide;
  const size_t n = ((size_t) 1 << 17) + 3;
#endif
  const size_t big = SIZE_MAX - 2;
  const size_t cs[] = {0, 1, 2, n / 3, n / 2, n - 2, n - 1, n};
  for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]) && ok; i++) {
    const size_t c = cs[i], first = gemmi8_split_first_tile(big, n, c);
    const size_t want = (size_t) ((wide) c * big / n);
    if (first != want) {
      ok = 0;
      t_fail("gemmi8_split_first_tile", "%zu tiles, %zu chunks: chunk %zu starts at %zu, not %zu",
             big, n, c, first, want);
    }
  }
  if (ok) t_pass();
}

/* gemmi8_plan_split and gemmi8_split_task (src/parallel.c): over rows, blocks, block
 * multiples, threads and amounts of work, the tasks cover every row tile and block
 * once (rows in whole tiles, blocks in whole multiples but the last), number at least
 * `threads` when there are that many tiles or block multiples, and the blocks of the
 * tasks across N differ by at most one multiple. */
static void split_tasks(void)
{
  static const size_t ms[] = {1, 2, 7, 8, 13, 56, 57, 200};
  static const size_t nbs[] = {1, 2, 3, 11, 16, 21, 64, 230};
  static const double ops[] = {1e3, 3e6, 1e8, 1e11};
  static unsigned char seen[200][230];
  int ok = 1;
  for (size_t im = 0; im < sizeof(ms) / sizeof(ms[0]) && ok; im++) {
    for (size_t ib = 0; ib < sizeof(nbs) / sizeof(nbs[0]) && ok; ib++) {
      for (size_t mult = 1; mult <= 4 && ok; mult += 3) {
        for (size_t threads = 2; threads <= 5 && ok; threads += 3) {
          for (size_t io = 0; io < sizeof(ops) / sizeof(ops[0]) && ok; io++) {
            const size_t m = ms[im], nblocks = nbs[ib], mr = 7;
            for (int big = 0; big < 2 && ok; big++) {
              struct gemmi8_split s;
              gemmi8_plan_split(m, nblocks, mr, 64, mult, big ? 1e9 : 1e4, ops[io], threads,
                                &s);
              const size_t tasks = s.mchunks * s.bchunks;
              const size_t tiles = (m + mr - 1) / mr, groups = (nblocks + mult - 1) / mult;
              memset(seen, 0, sizeof(seen));
              size_t bmin = SIZE_MAX, bmax = 0;
              for (size_t t = 0; t < tasks && ok; t++) {
                size_t m0, rows, b0, blocks;
                gemmi8_split_task(&s, t, &m0, &rows, &b0, &blocks);
                ok = m0 % mr == 0 && rows > 0 && m0 + rows <= m && b0 % mult == 0 &&
                     blocks > 0 && b0 + blocks <= nblocks &&
                     (blocks % mult == 0 || b0 + blocks == nblocks);
                for (size_t i = m0; i < m0 + rows && ok; i++) {
                  for (size_t b = b0; b < b0 + blocks; b++) seen[i][b]++;
                }
                if (t < s.bchunks) {
                  bmin = blocks < bmin ? blocks : bmin;
                  bmax = blocks > bmax ? blocks : bmax;
                }
              }
              for (size_t i = 0; i < m && ok; i++) {
                for (size_t b = 0; b < nblocks && ok; b++) ok = seen[i][b] == 1;
              }
              /* the short last multiple aside, block chunks differ by one multiple */
              ok = ok && (nblocks % mult != 0 || bmax - bmin <= mult) &&
                   (tasks >= threads || (tiles < threads && groups < threads) ||
                    tasks == tiles * groups);
              if (!ok) {
                t_fail("gemmi8_split_task",
                       "m %zu, %zu blocks (x %zu), %zu threads, %g ops: %zu x %zu tasks", m,
                       nblocks, mult, threads, ops[io], s.mchunks, s.bchunks);
              }
            }
          }
        }
      }
    }
  }
  if (ok) t_pass();
}

void test_threads(void)
{
  runner runners[2 * max_threads + 4];
  size_t nrunners = 0;
  gemmi8_threadpool* pools[max_threads + 1] = {NULL};
  shuffler shufflers[max_threads + 1];
  memset(shufflers, 0, sizeof(shufflers));
  static char names[2 * max_threads + 4][48];
  const size_t top = t_quick ? 4 : max_threads;
  for (size_t t = 1; t <= top; t++) {
    if (gemmi8_threadpool_create(t, NULL, &pools[t]) != gemmi8_status_success) {
      t_fail("gemmi8_threadpool_create", "%zu threads failed", t);
      continue;
    }
    snprintf(names[nrunners], sizeof(names[0]), "gemmi8 pool of %zu", t);
    runners[nrunners].name = names[nrunners];
    gemmi8_threadpool_parallel(pools[t], &runners[nrunners].par);
    nrunners++;
    snprintf(names[nrunners], sizeof(names[0]), "shuffled parallel-for of %zu", t);
    runners[nrunners].name = names[nrunners];
    runners[nrunners].par = (gemmi8_parallel){shuffled_for, &shufflers[t], t};
    nrunners++;
  }
  /* a pool whose workers sleep at once (no spin), and real threads that stall */
  gemmi8_threadpool_options no_spin;
  gemmi8_threadpool_options_init(&no_spin);
  no_spin.spin_us = 0;
  gemmi8_threadpool* sleeper = NULL;
  if (gemmi8_threadpool_create(3, &no_spin, &sleeper) == gemmi8_status_success) {
    runners[nrunners].name = "gemmi8 pool of 3, spin 0";
    gemmi8_threadpool_parallel(sleeper, &runners[nrunners].par);
    nrunners++;
  } else {
    t_fail("gemmi8_threadpool_create", "3 threads, spin 0, failed");
  }
  delayed stalls = {2, 12345u};
  runners[nrunners].name = "stalling parallel-for of 3";
  runners[nrunners].par = (gemmi8_parallel){delayed_for, &stalls, 3};
  nrunners++;
#if defined(GEMMI8_TEST_PTHREADPOOL)
  pthreadpool_t ptp = pthreadpool_create(3);
  if (ptp != NULL) {
    runners[nrunners].name = "pthreadpool of 3";
    runners[nrunners].par = (gemmi8_parallel){pthreadpool_for, ptp, pthreadpool_get_threads_count(ptp)};
    nrunners++;
  }
#endif
#if defined(_OPENMP)
  runners[nrunners].name = "OpenMP of 2";
  runners[nrunners].par = (gemmi8_parallel){openmp_for, NULL, 2};
  omp_set_num_threads(2);
  nrunners++;
#endif
  split_rows();
  split_tasks();
  quantized(runners, nrunners);
  binary(runners, nrunners);
  errors();
  two_pools();
  pool_churn();
  for (size_t t = 1; t <= top; t++) gemmi8_threadpool_destroy(pools[t]);
  gemmi8_threadpool_destroy(sleeper);
  for (size_t t = 0; t <= max_threads; t++) free(shufflers[t].order);
#if defined(GEMMI8_TEST_PTHREADPOOL)
  if (ptp != NULL) pthreadpool_destroy(ptp);
#endif
}
