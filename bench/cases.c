/*
 * gemmi8-bench: the tables of libraries and cases, and the helpers every case
 * file shares (aligned counted buffers, a seeded generator, error messages).
 */
#include "cases.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tables ------------------------------------------------------------------ */

/* Libraries, in the order their context is printed. */
static const bench_library* const libraries[] = {
    &bench_library_gemmi8,
    &bench_library_openblas,
};

/* Cases, in the order they are registered (and become report columns). */
static const bench_case* const cases[] = {
    &bench_gemmi8_qu8,    &bench_gemmi8_qu8s32, &bench_gemmi8_qs8,
    &bench_gemmi8_qs8s32, &bench_gemmi8_bin,    &bench_openblas_sgemm,
};

const bench_library* const* bench_libraries(size_t* count) {
  *count = sizeof(libraries) / sizeof(libraries[0]);
  return libraries;
}

const bench_case* const* bench_cases(size_t* count) {
  *count = sizeof(cases) / sizeof(cases[0]);
  return cases;
}

/* ---- buffers ----------------------------------------------------------------- */

#define BENCH_ALIGN 64

static size_t live_bytes;

size_t bench_mul(size_t a, size_t b) {
  if (a != 0 && b > (size_t) -1 / a) {
    return 0;
  }
  return a * b;
}

/* A BENCH_ALIGN-byte header in front of each buffer holds its size, so that the
 * buffer itself stays aligned and bench_free can keep the count. */
void* bench_alloc(size_t size) {
  if (size == 0 || size > (size_t) -1 - 2 * BENCH_ALIGN) {
    return NULL;
  }
  size_t total = (size + BENCH_ALIGN + BENCH_ALIGN - 1) / BENCH_ALIGN * BENCH_ALIGN;
  unsigned char* base = aligned_alloc(BENCH_ALIGN, total);
  if (base == NULL) {
    return NULL;
  }
  memset(base, 0, total);
  memcpy(base, &total, sizeof(total));
  live_bytes += total;
  return base + BENCH_ALIGN;
}

void bench_free(void* p) {
  if (p == NULL) {
    return;
  }
  unsigned char* base = (unsigned char*) p - BENCH_ALIGN;
  size_t total;
  memcpy(&total, base, sizeof(total));
  live_bytes -= total;
  free(base);
}

size_t bench_live_bytes(void) { return live_bytes; }

/* ---- random data ------------------------------------------------------------- */

/* splitmix64 step. */
uint64_t bench_rng_next(bench_rng* rng) {
  uint64_t z = (rng->state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

void bench_rng_seed(bench_rng* rng, const bench_shape* shape, const char* salt) {
  uint64_t h = UINT64_C(0xCBF29CE484222325); /* FNV-1a of the salt */
  for (const char* s = salt; *s != '\0'; s++) {
    h = (h ^ (unsigned char) *s) * UINT64_C(0x100000001B3);
  }
  rng->state = h;
  rng->state ^= bench_rng_next(rng) + shape->row;
  rng->state ^= bench_rng_next(rng) + shape->col;
  rng->state ^= bench_rng_next(rng) + shape->depth;
}

int32_t bench_rng_int(bench_rng* rng, int32_t lo, int32_t hi) {
  uint64_t range = (uint64_t) ((int64_t) hi - (int64_t) lo) + 1;
  return (int32_t) ((int64_t) lo + (int64_t) (bench_rng_next(rng) % range));
}

double bench_rng_real(bench_rng* rng, double lo, double hi) {
  double u = (double) (bench_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
  return lo + (hi - lo) * u;
}

void bench_fill_u8(bench_rng* rng, uint8_t* x, size_t count) {
  for (size_t i = 0; i < count; i++) {
    x[i] = (uint8_t) (bench_rng_next(rng) >> 56);
  }
}

void bench_fill_s8(bench_rng* rng, int8_t* x, size_t count, int8_t lo, int8_t hi) {
  for (size_t i = 0; i < count; i++) {
    x[i] = (int8_t) bench_rng_int(rng, lo, hi);
  }
}

void bench_fill_f32(bench_rng* rng, float* x, size_t count, float lo, float hi) {
  for (size_t i = 0; i < count; i++) {
    x[i] = (float) bench_rng_real(rng, lo, hi);
  }
}

/* ---- errors ------------------------------------------------------------------ */

const char* bench_error(const char* format, ...) {
  static char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return message;
}
