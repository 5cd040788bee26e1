/*
 * gemmi8's own thread pool: threads created once and reused, and the parallel-for that
 * runs a GEMM's tasks on them (gemmi8.h, "Threads").
 *
 * A run publishes the task and its count and bumps the generation; the workers (and
 * the calling thread, which always takes part) claim indices from one atomic counter
 * until none is left, so a thread that finishes early takes more. After a run the
 * workers spin on the generation for about a millisecond before they sleep on a
 * condition variable, and the caller never sleeps waiting for the last worker (it
 * spins, then yields): waking a sleeping thread costs tens of microseconds, on a
 * virtual machine 50 or more, which is the whole of a small GEMM; back-to-back GEMMs
 * (one layer after another) then cost no system call at all.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

/* Spin-wait rounds (one pause each, tens of cycles): a worker's before it sleeps, and
 * the caller's before it starts yielding to the workers between checks (there may be
 * more threads than cores). */
#define WORKER_SPIN_ROUNDS 50000
#define CALLER_SPIN_ROUNDS 2000

static inline void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && __ARM_ARCH >= 7)
  __asm__ __volatile__("yield");
#endif
}

struct gemmi8_threadpool {
  pthread_mutex_t mutex;
  pthread_cond_t wake; /* workers: a new generation, or stop */
  size_t threads;      /* the workers and the caller */
  size_t started;      /* workers created */
  pthread_t* workers;
  /* the run in progress */
  gemmi8_task_fn task;
  void* task_context;
  size_t count;
  atomic_size_t next;   /* next index to claim */
  atomic_size_t busy;   /* workers that have not finished the run */
  atomic_ulong generation;
  atomic_int stop;
};

static void claim_all(struct gemmi8_threadpool* pool)
{
  const gemmi8_task_fn task = pool->task;
  void* const context = pool->task_context;
  const size_t count = pool->count;
  for (;;) {
    const size_t i = atomic_fetch_add_explicit(&pool->next, 1, memory_order_relaxed);
    if (i >= count) break;
    task(context, i);
  }
}

static void* worker_main(void* arg)
{
  struct gemmi8_threadpool* pool = arg;
  unsigned long seen = 0;
  for (;;) {
    /* wait for a new generation (or stop), spinning first */
    unsigned long now = atomic_load_explicit(&pool->generation, memory_order_acquire);
    for (int spin = 0; now == seen && spin < WORKER_SPIN_ROUNDS; spin++) {
      if (atomic_load_explicit(&pool->stop, memory_order_relaxed)) return NULL;
      spin_pause();
      now = atomic_load_explicit(&pool->generation, memory_order_acquire);
    }
    if (now == seen) {
      pthread_mutex_lock(&pool->mutex);
      while ((now = atomic_load_explicit(&pool->generation, memory_order_acquire)) == seen &&
             !atomic_load_explicit(&pool->stop, memory_order_relaxed)) {
        pthread_cond_wait(&pool->wake, &pool->mutex);
      }
      pthread_mutex_unlock(&pool->mutex);
    }
    if (atomic_load_explicit(&pool->stop, memory_order_relaxed)) return NULL;
    seen = now;
    claim_all(pool);
    atomic_fetch_sub_explicit(&pool->busy, 1, memory_order_acq_rel);
  }
}

static size_t available_cpus(void)
{
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return (size_t) n;
  }
#endif
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (size_t) n : 1;
}

static void shut_down(struct gemmi8_threadpool* pool)
{
  pthread_mutex_lock(&pool->mutex);
  atomic_store(&pool->stop, 1);
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);
  for (size_t i = 0; i < pool->started; i++) pthread_join(pool->workers[i], NULL);
  pthread_cond_destroy(&pool->wake);
  pthread_mutex_destroy(&pool->mutex);
  free(pool->workers);
  free(pool);
}

gemmi8_status gemmi8_threadpool_create(size_t threads, gemmi8_threadpool** pool_out)
{
  if (pool_out == NULL || threads > GEMMI8_MAX_THREADS) return gemmi8_status_invalid_parameter;
  if (threads == 0) threads = available_cpus();
  if (threads > GEMMI8_MAX_THREADS) threads = GEMMI8_MAX_THREADS;
  struct gemmi8_threadpool* pool = calloc(1, sizeof(*pool));
  if (pool == NULL) return gemmi8_status_out_of_memory;
  pool->threads = threads;
  pool->workers = threads > 1 ? calloc(threads - 1, sizeof(pthread_t)) : NULL;
  if (threads > 1 && pool->workers == NULL) {
    free(pool);
    return gemmi8_status_out_of_memory;
  }
  atomic_init(&pool->next, 0);
  atomic_init(&pool->busy, 0);
  atomic_init(&pool->generation, 0);
  atomic_init(&pool->stop, 0);
  if (pthread_mutex_init(&pool->mutex, NULL) != 0) {
    free(pool->workers);
    free(pool);
    return gemmi8_status_out_of_memory;
  }
  pthread_cond_init(&pool->wake, NULL);
  for (size_t i = 0; i + 1 < threads; i++) {
    if (pthread_create(&pool->workers[i], NULL, worker_main, pool) != 0) {
      shut_down(pool);
      return gemmi8_status_out_of_memory;
    }
    pool->started++;
  }
  *pool_out = pool;
  return gemmi8_status_success;
}

void gemmi8_threadpool_destroy(gemmi8_threadpool* pool)
{
  if (pool != NULL) shut_down(pool);
}

size_t gemmi8_threadpool_threads(const gemmi8_threadpool* pool)
{
  return pool != NULL ? pool->threads : 0;
}

/* The parallel-for of a pool (gemmi8_parallel.parallel_for). */
static void pool_parallel_for(void* context, gemmi8_task_fn task, void* task_context,
                              size_t count)
{
  struct gemmi8_threadpool* pool = context;
  if (pool->started == 0 || count <= 1) {
    for (size_t i = 0; i < count; i++) task(task_context, i);
    return;
  }
  pool->task = task;
  pool->task_context = task_context;
  pool->count = count;
  atomic_store_explicit(&pool->next, 0, memory_order_relaxed);
  atomic_store_explicit(&pool->busy, pool->started, memory_order_relaxed);
  pthread_mutex_lock(&pool->mutex);
  atomic_fetch_add_explicit(&pool->generation, 1, memory_order_release);
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);
  claim_all(pool);
  /* wait for the workers: spin, then yield the core between checks */
  for (int spin = 0; atomic_load_explicit(&pool->busy, memory_order_acquire) != 0; spin++) {
    if (spin < CALLER_SPIN_ROUNDS) {
      spin_pause();
    } else {
      sched_yield();
    }
  }
}

gemmi8_status gemmi8_threadpool_parallel(gemmi8_threadpool* pool, gemmi8_parallel* parallel)
{
  if (pool == NULL || parallel == NULL) return gemmi8_status_invalid_parameter;
  parallel->parallel_for = pool_parallel_for;
  parallel->context = pool;
  parallel->threads = pool->threads;
  return gemmi8_status_success;
}
