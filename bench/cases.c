/*
 * gemmi8-bench: the tables of libraries and cases, and the helpers every case
 * file shares (aligned counted buffers, a seeded generator, error messages).
 */
#include "cases.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tables ------------------------------------------------------------------ */

int bench_threads = 1;

/* Libraries, in the order their context is printed. */
static const bench_library* const libraries[] = {
    &bench_library_gemmi8,   &bench_library_openblas, &bench_library_gemmlowp,
    &bench_library_onednn,   &bench_library_xnnpack,  &bench_library_peak,
};

/* Cases, in the order they are registered (and become report columns). */
static const bench_case* const cases[] = {
    &bench_gemmi8_qu8,
    &bench_gemmi8_qu8s32,
    &bench_gemmi8_qs8,
    &bench_gemmi8_qs8s32,
    &bench_gemmi8_qu8fp32,
    &bench_gemmi8_qs8fp32,
    &bench_gemmi8_bin,
    &bench_gemmi8_qu8s8,
    &bench_gemmi8_qu8s8fp32,
    &bench_gemmi8_qu8s8fp32_pthreadpool,
    &bench_gemmi8_qu8s8fp32_openmp,
    &bench_gemmi8_qu8s8_pt,
    &bench_gemmi8_qu8s8fp32_pt,
    &bench_gemmi8_qu8s8s32,
    &bench_gemmi8_qs8_pt,
    &bench_gemmi8_qs8fp32_pt,
    &bench_openblas_sgemm,
    &bench_gemmlowp_u8u8,
    &bench_gemmlowp_u8s32,
    &bench_onednn_gemm_u8s8s32,
    &bench_onednn_matmul_u8s8u8,
    &bench_onednn_matmul_s8s8s8,
    &bench_onednn_matmul_u8s8s32,
    &bench_onednn_matmul_u8s8u8_fast,
    &bench_onednn_matmul_s8s8s8_fast,
    &bench_onednn_matmul_u8s8u8_pt,
    &bench_onednn_matmul_s8s8s8_pt,
    &bench_onednn_matmul_u8s8u8_nozp,
    &bench_onednn_matmul_s8s8s8_nozp,
    &bench_xnnpack_fc_qu8,
    &bench_xnnpack_fc_qs8,
    &bench_peak_vpdpbusd_zmm,
    &bench_peak_vpmaddwd_ymm,
    &bench_peak_vfmadd_zmm,
    &bench_peak_vpopcntq_zmm,
    &bench_peak_popcnt_lut_ymm,
    &bench_peak_popcnt_lut_zmm,
    &bench_peak_popcnt_r64,
    &bench_peak_read_bw,
};

const bench_library* const* bench_libraries(size_t* count)
{
  *count = sizeof(libraries) / sizeof(libraries[0]);
  return libraries;
}

const bench_case* const* bench_cases(size_t* count)
{
  *count = sizeof(cases) / sizeof(cases[0]);
  return cases;
}

/* ---- buffers ----------------------------------------------------------------- */

#define BENCH_ALIGN 64

static size_t live_bytes;

size_t bench_mul(size_t a, size_t b)
{
  if (a != 0 && b > (size_t) -1 / a) {
    return 0;
  }
  return a * b;
}

/* A BENCH_ALIGN-byte header in front of each buffer holds its size, so that the
 * buffer itself stays aligned and bench_free can keep the count. */
void* bench_alloc(size_t size)
{
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

void bench_free(void* p)
{
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
uint64_t bench_rng_next(bench_rng* rng)
{
  uint64_t z = (rng->state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

void bench_rng_seed(bench_rng* rng, const bench_shape* shape, const char* salt)
{
  uint64_t h = UINT64_C(0xCBF29CE484222325); /* FNV-1a of the salt */
  for (const char* s = salt; *s != '\0'; s++) {
    h = (h ^ (unsigned char) *s) * UINT64_C(0x100000001B3);
  }
  rng->state = h;
  rng->state ^= bench_rng_next(rng) + shape->row;
  rng->state ^= bench_rng_next(rng) + shape->col;
  rng->state ^= bench_rng_next(rng) + shape->depth;
}

int32_t bench_rng_int(bench_rng* rng, int32_t lo, int32_t hi)
{
  uint64_t range = (uint64_t) ((int64_t) hi - (int64_t) lo) + 1;
  return (int32_t) ((int64_t) lo + (int64_t) (bench_rng_next(rng) % range));
}

double bench_rng_real(bench_rng* rng, double lo, double hi)
{
  double u = (double) (bench_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
  return lo + (hi - lo) * u;
}

void bench_fill_u8(bench_rng* rng, uint8_t* x, size_t count)
{
  for (size_t i = 0; i < count; i++) {
    x[i] = (uint8_t) (bench_rng_next(rng) >> 56);
  }
}

void bench_fill_s8(bench_rng* rng, int8_t* x, size_t count, int8_t lo, int8_t hi)
{
  for (size_t i = 0; i < count; i++) {
    x[i] = (int8_t) bench_rng_int(rng, lo, hi);
  }
}

void bench_fill_f32(bench_rng* rng, float* x, size_t count, float lo, float hi)
{
  for (size_t i = 0; i < count; i++) {
    x[i] = (float) bench_rng_real(rng, lo, hi);
  }
}

double bench_uniform_sd(int32_t lo, int32_t hi)
{
  double width = (double) hi - (double) lo + 1.0;
  return sqrt((width * width - 1.0) / 12.0);
}

double bench_requant_scale(size_t k, double sd_a, double sd_b)
{
  return 48.0 / (sqrt((double) k) * sd_a * sd_b);
}

/* ---- checking a peer's output ---------------------------------------------------- */

static int32_t load(bench_type type, const void* base, size_t index)
{
  switch (type) {
    case BENCH_U8:
      return ((const uint8_t*) base)[index];
    case BENCH_S8:
      return ((const int8_t*) base)[index];
    case BENCH_S32:
      return ((const int32_t*) base)[index];
  }
  return 0;
}

/* Rows or columns to look at: both ends and a few random ones. */
#define CHECK_EDGE 3
#define CHECK_RANDOM 8

static size_t pick(bench_rng* rng, size_t count, size_t i)
{
  if (i < CHECK_EDGE) {
    return i < count ? i : count - 1;
  }
  if (i < 2 * CHECK_EDGE) {
    size_t back = i - CHECK_EDGE;
    return back < count ? count - 1 - back : 0;
  }
  return (size_t) (bench_rng_next(rng) % count);
}

const char* bench_check_gemm(const bench_gemm_check* chk)
{
  const size_t picks = 2 * CHECK_EDGE + CHECK_RANDOM;
  const bench_shape shape = {chk->n, chk->m, chk->k};
  bench_rng rng;
  bench_rng_seed(&rng, &shape, "bench-check");
  size_t rows[2 * CHECK_EDGE + CHECK_RANDOM], cols[2 * CHECK_EDGE + CHECK_RANDOM];
  for (size_t i = 0; i < picks; i++) {
    rows[i] = pick(&rng, chk->m, i);
    cols[i] = pick(&rng, chk->n, i);
  }
  size_t checked = 0, inside = 0;
  for (size_t i = 0; i < picks; i++) {
    for (size_t j = 0; j < picks; j++) {
      const size_t m = rows[i], n = cols[j];
      int64_t acc = chk->bias != NULL ? chk->bias[n] : 0;
      for (size_t k = 0; k < chk->k; k++) {
        int64_t a = load(chk->a_type, chk->a, m * chk->a_stride + k) - chk->a_zp;
        int64_t b = load(chk->b_type, chk->b, n * chk->b_stride + k) - chk->b_zp;
        acc += a * b;
      }
      const int32_t got = load(chk->c_type, chk->c, m * chk->c_stride + n);
      checked++;
      if (chk->c_type == BENCH_S32) {
        inside++;
        if (acc != got) {
          return bench_error("C[%zu][%zu] = %ld, reference %lld (M=%zu N=%zu K=%zu)", m, n,
                             (long) got, (long long) acc, chk->m, chk->n, chk->k);
        }
        continue;
      }
      const double scale = chk->scale[chk->per_channel ? n : 0];
      double want = (double) chk->c_zp + (double) acc * scale;
      if (want > (double) chk->c_min && want < (double) chk->c_max) {
        inside++;
      }
      want = want < chk->c_min ? chk->c_min : want > chk->c_max ? chk->c_max : want;
      if (fabs((double) got - want) > 1.0) {
        return bench_error("C[%zu][%zu] = %ld, reference %.2f (acc %lld, M=%zu N=%zu K=%zu)",
                           m, n, (long) got, want, (long long) acc, chk->m, chk->n, chk->k);
      }
    }
  }
  if (2 * inside < checked) {
    return bench_error("only %zu of %zu sampled reference outputs are inside the clamp "
                       "range: the check cannot tell a right result from a wrong one",
                       inside, checked);
  }
  return NULL;
}

/* ---- errors ------------------------------------------------------------------ */

const char* bench_error(const char* format, ...)
{
  static char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return message;
}
