// gemmi8-bench: the thread pools of the threaded runs, one per thread count, created on
// first use and kept for the run: gemmi8's own pool, and a caller's parallel-for for
// gemmi8's _ex entry points as a framework plugs in its own threads: pthreadpool
// (XNNPACK's pool, shared with XNNPACK's cases) and an OpenMP loop with dynamic
// scheduling (one task at a time, as gemmi8's pool claims them).
#include <cstddef>

#include <gemmi8.h>

#include "cases.h"

#if GEMMI8_BENCH_HAVE_XNNPACK
#include <pthreadpool.h>
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

#if GEMMI8_BENCH_HAVE_XNNPACK
void PthreadpoolFor(void* context, gemmi8_task_fn task, void* task_context, size_t count)
{
  pthreadpool_parallelize_1d(static_cast<pthreadpool_t>(context), task, task_context, count, 0);
}
#endif

#if defined(_OPENMP)
void OpenmpFor(void* context, gemmi8_task_fn task, void* task_context, size_t count)
{
  const int threads = static_cast<int>(reinterpret_cast<size_t>(context));
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (long i = 0; i < static_cast<long>(count); i++) task(task_context, static_cast<size_t>(i));
}
#endif

}  // namespace

extern "C" void* bench_pthreadpool(int threads)
{
#if GEMMI8_BENCH_HAVE_XNNPACK
  static pthreadpool_t pools[64];
  if (threads <= 1 || threads >= 64) return nullptr;
  if (pools[threads] == nullptr) pools[threads] = pthreadpool_create(static_cast<size_t>(threads));
  return pools[threads];
#else
  (void) threads;
  return nullptr;
#endif
}

extern "C" const char* bench_caller_parallel(int kind, int threads, gemmi8_parallel* out)
{
  if (threads < 1 || threads >= 64) return "bad thread count";
  if (kind == BENCH_CALLER_GEMMI8_POOL) {
    static gemmi8_threadpool* pools[64];
    if (pools[threads] == nullptr &&
        gemmi8_threadpool_create(static_cast<size_t>(threads), nullptr, &pools[threads]) !=
            gemmi8_status_success) {
      return "gemmi8_threadpool_create failed";
    }
    gemmi8_threadpool_parallel(pools[threads], out);
    return nullptr;
  }
  if (kind == BENCH_CALLER_PTHREADPOOL) {
#if GEMMI8_BENCH_HAVE_XNNPACK
    void* pool = bench_pthreadpool(threads);
    if (pool == nullptr) return "pthreadpool_create failed";
    *out = gemmi8_parallel{PthreadpoolFor, pool, static_cast<size_t>(threads)};
    return nullptr;
#else
    return "built without pthreadpool (install libpthreadpool-dev, then rebuild)";
#endif
  }
  if (kind == BENCH_CALLER_OPENMP) {
#if defined(_OPENMP)
    *out = gemmi8_parallel{OpenmpFor, reinterpret_cast<void*>(static_cast<size_t>(threads)),
                           static_cast<size_t>(threads)};
    return nullptr;
#else
    return "built without OpenMP";
#endif
  }
  return "unknown parallel-for";
}
