/*
 * gemmi8's own thread pool: threads created once and reused, and the parallel-for that
 * runs a GEMM's tasks on them (gemmi8.h, "Threads").
 *
 * A run is open to the workers from the moment it is published until the calling
 * thread (which always takes part) has claimed the last task: then it closes the run,
 * and only the workers that joined before the close are waited for. A worker that was
 * descheduled when the run began (a core busy with another process, more threads than
 * cores) and comes back late finds the run closed and does not hold up the caller.
 * The tasks are cut into one contiguous range per thread (the caller's first, then one
 * per worker in the order they join). A thread claims the tasks of its own range one
 * index at a time, then those left in the others' ranges, so a thread that runs slowly
 * or not at all simply takes fewer. A thread so keeps the same tasks from call to
 * call, and the weights of its columns in its own cache: tasks dealt one at a time
 * from one counter made the fully-connected layers of 768 x 3072 and 3072 x 768 take
 * up to 1.5x as long on two threads (M = 1-8), and ResNet-18's and MobileNetV2's
 * convolutions 3-7% longer (bench/threads/paired-load.c, the two pools side by side).
 *
 * One 64-bit word holds the run's state: its generation (high 32 bits), a closed bit
 * and the number of workers that joined (low 16 bits). A worker joins by a
 * compare-and-swap on an open state of the generation it saw, and reads the run's
 * parameters only after it joined; the caller writes them only when no worker of the
 * previous run is left inside, so a late worker never sees half of a new run.
 *
 * Waiting: an idle worker spins for the pool's spin time (an option), then sleeps on a
 * condition variable; the caller, waiting for the workers still inside a run, spins
 * up to a millisecond, then sleeps too. A spin that lasts past 20 microseconds yields
 * the core every few microseconds: on a loaded machine two of the pool's threads often
 * share a core, and a thread that spins without yielding takes the core from the very
 * thread it waits for (measured on a 2-core VM with one core busy: two threads took
 * 1.11-1.19x the one-thread time with spins that did not yield, 0.84-0.97x with spins
 * that did).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

/* The caller's spin, in microseconds, while it waits for the workers still inside a
 * run (their last tasks) before it sleeps. Long, because it yields: when a worker
 * holding the last task shares the caller's core, the yield lets it finish, and when
 * it does not, the caller keeps its own core instead of letting the kernel hand it to
 * a worker and then waking the caller on the busy one. */
#define CALLER_SPIN_US 1000

/* Tasks a thread below which a run's tasks are not cut into ranges. */
#define RANGES_MIN_TASKS 4

#define STATE_JOINED_MASK UINT64_C(0xffff)
#define STATE_CLOSED (UINT64_C(1) << 16)
#define STATE_GENERATION_SHIFT 32

static inline void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && __ARM_ARCH >= 7)
  __asm__ __volatile__("yield");
#endif
}

static uint64_t now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

/* A spin of a bounded time: rounds of pauses, the clock read every 64 of them. After
 * the first SPIN_YIELD_AFTER_NS the spin also offers the core to any other thread
 * waiting for it (sched_yield), which may be the very thread this one waits for when
 * both share a core. Short waits, the common case on an idle machine, make no system
 * call: a yield costs microseconds on a virtual machine, and yielding from the start
 * left a worker too slow to join runs of 10 microseconds (it ran 18 of 11,000 tasks
 * of 1000 x 8 x 512 against 4,651 without). */
#define SPIN_YIELD_AFTER_NS 20000u
struct spin {
  uint64_t deadline, yield_from;
  unsigned rounds;
};

static void spin_start(struct spin* s, uint32_t us)
{
  s->deadline = 0;
  s->rounds = 0;
  if (us != 0) {
    const uint64_t now = now_ns();
    s->deadline = now + (uint64_t) us * 1000u;
    s->yield_from = now + SPIN_YIELD_AFTER_NS;
  }
}

/* 1 while the spin lasts (one pause taken), 0 once its time is up. */
static int spin_on(struct spin* s)
{
  if (s->deadline == 0) return 0;
  if ((++s->rounds & 63) == 0) {
    const uint64_t now = now_ns();
    if (now >= s->deadline) return 0;
    if (now >= s->yield_from) sched_yield();
  }
  spin_pause();
  return 1;
}

/* One thread's range of a run's tasks: [next, end), next advanced by every claim (it
 * may pass end, by at most one claim a thread). A cache line each. */
struct range {
  atomic_size_t next;
  size_t end;
  char pad[64 - sizeof(atomic_size_t) - sizeof(size_t)];
};

struct gemmi8_threadpool {
  pthread_mutex_t mutex;
  pthread_cond_t wake; /* workers: a new generation, or stop */
  pthread_cond_t done; /* the caller: a worker left the run */
  size_t threads;      /* the workers and the caller */
  size_t started;      /* workers created */
  uint32_t spin_us;
  pthread_t* workers;
  /* the run in progress: written by the caller while no worker is inside a run */
  gemmi8_task_fn task;
  void* task_context;
  struct range* ranges;      /* one a thread: the caller's, then the workers' */
  atomic_uint_least64_t state;  /* generation | closed | joined */
  atomic_size_t left;        /* workers that joined the run and have left it */
  atomic_int sleepers;       /* workers asleep (or about to be) on wake */
  atomic_int caller_waiting; /* the caller is asleep (or about to be) on done */
  atomic_int stop;
};

/* Runs the tasks left in range `self`, then those left in the others'. */
static void claim_all(struct gemmi8_threadpool* pool, size_t self)
{
  const gemmi8_task_fn task = pool->task;
  void* const context = pool->task_context;
  const size_t threads = pool->threads;
  for (size_t r = self, left = threads; left != 0; left--, r = r + 1 == threads ? 0 : r + 1) {
    struct range* range = &pool->ranges[r];
    const size_t end = range->end;
    for (;;) {
      const size_t i = atomic_fetch_add_explicit(&range->next, 1, memory_order_relaxed);
      if (i >= end) break;
      task(context, i);
    }
  }
}

/* Joins the open run of generation `generation`: its range (1 for the first worker to
 * join) if joined, 0 if the run is closed or gone. */
static size_t join(struct gemmi8_threadpool* pool, uint64_t generation)
{
  uint64_t s = atomic_load_explicit(&pool->state, memory_order_acquire);
  for (;;) {
    if ((s >> STATE_GENERATION_SHIFT) != generation || (s & STATE_CLOSED) != 0) return 0;
    if (atomic_compare_exchange_weak_explicit(&pool->state, &s, s + 1, memory_order_acq_rel,
                                              memory_order_acquire)) {
      return (size_t) (s & STATE_JOINED_MASK) + 1;
    }
  }
}

static void leave(struct gemmi8_threadpool* pool)
{
  atomic_fetch_add_explicit(&pool->left, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&pool->caller_waiting, memory_order_seq_cst)) {
    pthread_mutex_lock(&pool->mutex);
    pthread_cond_signal(&pool->done);
    pthread_mutex_unlock(&pool->mutex);
  }
}

static uint64_t generation_of(const struct gemmi8_threadpool* pool)
{
  return atomic_load_explicit(&pool->state, memory_order_acquire) >> STATE_GENERATION_SHIFT;
}

static void* worker_main(void* arg)
{
  struct gemmi8_threadpool* pool = arg;
  uint64_t seen = generation_of(pool);
  for (;;) {
    /* wait for a new generation (or stop): spin, then sleep */
    uint64_t now = generation_of(pool);
    struct spin spin;
    spin_start(&spin, pool->spin_us);
    while (now == seen && !atomic_load_explicit(&pool->stop, memory_order_relaxed) &&
           spin_on(&spin)) {
      now = generation_of(pool);
    }
    if (now == seen) {
      pthread_mutex_lock(&pool->mutex);
      atomic_fetch_add_explicit(&pool->sleepers, 1, memory_order_seq_cst);
      while ((now = atomic_load_explicit(&pool->state, memory_order_seq_cst) >>
                    STATE_GENERATION_SHIFT) == seen &&
             !atomic_load_explicit(&pool->stop, memory_order_seq_cst)) {
        pthread_cond_wait(&pool->wake, &pool->mutex);
      }
      atomic_fetch_sub_explicit(&pool->sleepers, 1, memory_order_relaxed);
      pthread_mutex_unlock(&pool->mutex);
    }
    if (atomic_load_explicit(&pool->stop, memory_order_relaxed)) return NULL;
    seen = now;
    const size_t range = join(pool, now);
    if (range != 0) {
      claim_all(pool, range);
      leave(pool);
    }
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
  pthread_cond_destroy(&pool->done);
  pthread_cond_destroy(&pool->wake);
  pthread_mutex_destroy(&pool->mutex);
  free(pool->workers);
  free(pool->ranges);
  free(pool);
}

void gemmi8_threadpool_options_init(gemmi8_threadpool_options* options)
{
  if (options == NULL) return;
  *options = (gemmi8_threadpool_options){.spin_us = GEMMI8_THREADPOOL_SPIN_US};
}

gemmi8_status gemmi8_threadpool_create(size_t threads, const gemmi8_threadpool_options* options,
                                       gemmi8_threadpool** pool_out)
{
  gemmi8_threadpool_options o;
  gemmi8_threadpool_options_init(&o);
  if (options != NULL) o = *options;
  if (pool_out == NULL || threads > GEMMI8_MAX_THREADS ||
      o.spin_us > GEMMI8_THREADPOOL_SPIN_US_MAX) {
    return gemmi8_status_invalid_parameter;
  }
  for (size_t i = 0; i < sizeof(o.reserved) / sizeof(o.reserved[0]); i++) {
    if (o.reserved[i] != 0) return gemmi8_status_invalid_parameter;
  }
  if (threads == 0) threads = available_cpus();
  if (threads > GEMMI8_MAX_THREADS) threads = GEMMI8_MAX_THREADS;
  struct gemmi8_threadpool* pool = calloc(1, sizeof(*pool));
  if (pool == NULL) return gemmi8_status_out_of_memory;
  pool->threads = threads;
  pool->spin_us = o.spin_us;
  pool->workers = threads > 1 ? calloc(threads - 1, sizeof(pthread_t)) : NULL;
  if (threads > 1 && (pool->workers == NULL ||
                      posix_memalign((void**) &pool->ranges, 64,
                                     threads * sizeof(struct range)) != 0)) {
    free(pool->workers);
    free(pool);
    return gemmi8_status_out_of_memory;
  }
  for (size_t i = 0; i < (threads > 1 ? threads : 0); i++) {
    atomic_init(&pool->ranges[i].next, 0);
    pool->ranges[i].end = 0;
  }
  atomic_init(&pool->state, STATE_CLOSED);
  atomic_init(&pool->left, 0);
  atomic_init(&pool->sleepers, 0);
  atomic_init(&pool->caller_waiting, 0);
  atomic_init(&pool->stop, 0);
  if (pthread_mutex_init(&pool->mutex, NULL) != 0) {
    free(pool->workers);
    free(pool->ranges);
    free(pool);
    return gemmi8_status_out_of_memory;
  }
  if (pthread_cond_init(&pool->wake, NULL) != 0) {
    pthread_mutex_destroy(&pool->mutex);
    free(pool->workers);
    free(pool->ranges);
    free(pool);
    return gemmi8_status_out_of_memory;
  }
  if (pthread_cond_init(&pool->done, NULL) != 0) {
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->mutex);
    free(pool->workers);
    free(pool->ranges);
    free(pool);
    return gemmi8_status_out_of_memory;
  }
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
  /* no worker is inside a run (the last one closed and its joiners left): publish */
  pool->task = task;
  pool->task_context = task_context;
  /* A range a thread; with fewer than RANGES_MIN_TASKS tasks a thread, one range that
   * every thread claims from, in order (ranges of one or two unequal tasks left the
   * taller share on the thread that started first: 49 x 160 x 576, four tasks, took
   * 9.8 us against 8.6) */
  const size_t threads = pool->threads;
  const size_t ranges = count >= RANGES_MIN_TASKS * threads ? threads : 1;
  for (size_t r = 0, begin = 0; r < threads; r++) {
    /* count * (r + 1) / ranges without overflow: count / ranges per range, and the
     * first count % ranges ranges one more */
    const size_t end = r < ranges ? begin + count / ranges + (r < count % ranges) : begin;
    atomic_store_explicit(&pool->ranges[r].next, begin, memory_order_relaxed);
    pool->ranges[r].end = end;
    begin = end;
  }
  atomic_store_explicit(&pool->left, 0, memory_order_relaxed);
  const uint64_t generation =
      (atomic_load_explicit(&pool->state, memory_order_relaxed) >> STATE_GENERATION_SHIFT) + 1;
  atomic_store_explicit(&pool->state, generation << STATE_GENERATION_SHIFT,
                        memory_order_seq_cst);
  if (atomic_load_explicit(&pool->sleepers, memory_order_seq_cst) != 0) {
    pthread_mutex_lock(&pool->mutex);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mutex);
  }
  claim_all(pool, 0);
  /* every task is claimed: close the run, then wait for the workers inside it */
  const size_t joined = (size_t) (atomic_fetch_or_explicit(&pool->state, STATE_CLOSED,
                                                           memory_order_acq_rel) &
                                  STATE_JOINED_MASK);
  struct spin spin;
  spin_start(&spin, CALLER_SPIN_US);
  while (atomic_load_explicit(&pool->left, memory_order_acquire) != joined) {
    if (spin_on(&spin)) continue;
    pthread_mutex_lock(&pool->mutex);
    atomic_store_explicit(&pool->caller_waiting, 1, memory_order_seq_cst);
    while (atomic_load_explicit(&pool->left, memory_order_seq_cst) != joined) {
      pthread_cond_wait(&pool->done, &pool->mutex);
    }
    atomic_store_explicit(&pool->caller_waiting, 0, memory_order_relaxed);
    pthread_mutex_unlock(&pool->mutex);
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
