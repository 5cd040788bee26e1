/*
 * What an idle gemmi8 pool costs: CPU time of the whole process while the calling
 * thread sleeps, after a run (the workers spin for the pool's spin time, then sleep)
 * and with no run at all, for pools of 2 and of 8 threads.
 *   idle-pool [seconds]      prints the percent of one core each pool took
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <gemmi8.h>

static double cpu_seconds(void)
{
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double) u.ru_utime.tv_sec + (double) u.ru_stime.tv_sec +
         1e-6 * (double) (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static void sleep_for(double seconds)
{
  struct timespec t = {(time_t) seconds, (long) ((seconds - (double) (time_t) seconds) * 1e9)};
  while (nanosleep(&t, &t) != 0) {
  }
}

int main(int argc, char** argv)
{
  const double seconds = argc > 1 ? atof(argv[1]) : 2.0;
  enum { M = 256, N = 256, K = 512 };
  static uint8_t a[M * K], c[M * N];
  static int8_t b[N * K];
  for (int i = 0; i < M * K; i++) a[i] = (uint8_t) (i * 7);
  for (int i = 0; i < N * K; i++) b[i] = (int8_t) (i * 13);
  void* packed = NULL;
  if (gemmi8_qu8s8_pack_alloc(N, K, b, K, GEMMI8_B_NK, 128, NULL, &packed) != gemmi8_status_success) {
    return 1;
  }
  const float scale = 0.0005f;
  const gemmi8_requant rq = {.mode = gemmi8_requant_fp32, .scale = &scale, .zero_point = 128,
                             .min = 0, .max = 255};
  static const size_t sizes[] = {2, 8};
  printf("| pool | after | CPU time while idle | percent of one core |\n|---|---|---:|---:|\n");
  for (int i = 0; i < 2; i++) {
    for (int ran = 0; ran < 2; ran++) {
      gemmi8_threadpool* pool = NULL;
      if (gemmi8_threadpool_create(sizes[i], NULL, &pool) != gemmi8_status_success) return 1;
      gemmi8_parallel par;
      gemmi8_threadpool_parallel(pool, &par);
      if (ran && gemmi8_qu8s8_gemm_ex(M, N, K, a, K, packed, &rq, c, N, &par) !=
                     gemmi8_status_success) {
        return 1;
      }
      const double t0 = cpu_seconds();
      sleep_for(seconds);
      const double used = cpu_seconds() - t0;
      printf("| %zu threads | %s | %.4f s in %.1f s | %.3f%% |\n", sizes[i],
             ran ? "one run" : "creation", used, seconds, 100.0 * used / seconds);
      gemmi8_threadpool_destroy(pool);
    }
  }
  gemmi8_packed_free(packed);
  return 0;
}
