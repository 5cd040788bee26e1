/* Time of one gemmi8_qu8s8_gemm call from C, for python/overhead.py: loads the
 * library given (dlopen, the same file the Python module loads), packs random
 * weights and times the GEMM on an M x K uint8 matrix, best of 5 rounds of about
 * 0.1 s. Prints the microseconds per call.
 *   overhead LIBRARY M N K */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gemmi8.h"

typedef gemmi8_status (*pack_fn)(size_t, size_t, const int8_t*, size_t, uint32_t, uint8_t,
                                 const int32_t*, void**);
typedef gemmi8_status (*gemm_fn)(size_t, size_t, size_t, const uint8_t*, size_t, const void*,
                                 const gemmi8_requant*, uint8_t*, size_t);
typedef void (*free_fn)(void*);

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

int main(int argc, char** argv)
{
  if (argc != 5) {
    fprintf(stderr, "usage: %s LIBRARY M N K\n", argv[0]);
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (lib == NULL) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  pack_fn pack = (pack_fn) dlsym(lib, "gemmi8_qu8s8_pack_alloc");
  gemm_fn gemm = (gemm_fn) dlsym(lib, "gemmi8_qu8s8_gemm");
  free_fn packed_free = (free_fn) dlsym(lib, "gemmi8_packed_free");
  if (pack == NULL || gemm == NULL || packed_free == NULL) {
    fprintf(stderr, "%s: missing symbols\n", argv[1]);
    return 1;
  }
  const size_t m = strtoul(argv[2], NULL, 10), n = strtoul(argv[3], NULL, 10),
               k = strtoul(argv[4], NULL, 10);
  uint8_t* a = malloc(m * k);
  int8_t* b = malloc(n * k);
  uint8_t* c = malloc(m * n);
  if (a == NULL || b == NULL || c == NULL) return 1;
  srand(1);
  for (size_t i = 0; i < m * k; i++) a[i] = (uint8_t) rand();
  for (size_t i = 0; i < n * k; i++) b[i] = (int8_t) rand();
  void* packed = NULL;
  if (pack(n, k, b, k, GEMMI8_B_NK, 128, NULL, &packed) != gemmi8_status_success) return 1;
  const float scale = 0.001f;
  const gemmi8_requant rq = {.mode = gemmi8_requant_fp32, .scale = &scale,
                             .zero_point = 128, .min = 0, .max = 255};
  /* calls a round: about 0.1 s */
  size_t calls = 1000;
  for (;;) {
    const double t0 = now();
    for (size_t i = 0; i < calls; i++) gemm(m, n, k, a, k, packed, &rq, c, n);
    if (now() - t0 > 0.02) break;
    calls *= 4;
  }
  calls *= 5;
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    const double t0 = now();
    for (size_t i = 0; i < calls; i++) {
      if (gemm(m, n, k, a, k, packed, &rq, c, n) != gemmi8_status_success) return 1;
    }
    const double t = (now() - t0) / (double) calls;
    if (t < best) best = t;
  }
  printf("%.4f\n", best * 1e6);
  packed_free(packed);
  free(a);
  free(b);
  free(c);
  return 0;
}
