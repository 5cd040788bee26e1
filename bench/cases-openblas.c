/*
 * gemmi8-bench: OpenBLAS, the fp32 baseline.
 *
 *   sgemm    cblas_sgemm, row-major: A M x K, B given N x K (gemmi8's weight
 *            layout, CblasTrans), C M x N, alpha 1, beta 0; values in [-1, 1).
 *
 * OpenBLAS picks its kernels ("core") when it is loaded, from OPENBLAS_CORETYPE
 * if set: bench/run.sh sets it, because Debian's OpenBLAS 0.3.21 does not
 * recognise recent CPUs and falls back to a slow generic core. The core and the
 * thread count are reported in the run's context. OpenBLAS runs single-threaded, and
 * on bench_threads threads for the threaded runs (openblas@2/...).
 */
#include <stdio.h>
#include <stdlib.h>

#include <cblas.h>

#include "cases.h"

/* OpenBLAS extensions, declared again in case <cblas.h> is another vendor's
 * (the prototypes are identical to OpenBLAS's own). */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char* openblas_get_config(void);
char* openblas_get_corename(void);

typedef struct sgemm_state {
  int m, n, k;
  float* a;
  float* b;
  float* c;
} sgemm_state;

static void sgemm_teardown(void* opaque)
{
  sgemm_state* s = opaque;
  if (s == NULL) {
    return;
  }
  bench_free(s->a);
  bench_free(s->b);
  bench_free(s->c);
  free(s);
}

static const char* sgemm_run(void* opaque)
{
  const sgemm_state* s = opaque;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s->m, s->n, s->k, 1.0f, s->a, s->k,
              s->b, s->k, 0.0f, s->c, s->n);
  return NULL;
}

/* Its threads: one, or bench_threads for the threaded runs (openblas@2/...). */
static const char* sgemm_prepare(void* opaque)
{
  (void) opaque;
  openblas_set_num_threads(bench_threads);
  return NULL;
}

static const char* sgemm_setup(const bench_shape* shape, const char* isa, void** state)
{
  (void) isa;
  if (shape->col > 0x7FFFFFFF || shape->row > 0x7FFFFFFF || shape->depth > 0x7FFFFFFF) {
    return "shape too large for cblas int sizes";
  }
  sgemm_state* s = calloc(1, sizeof(*s));
  if (s == NULL) {
    return "out of memory";
  }
  s->m = (int) shape->col;
  s->n = (int) shape->row;
  s->k = (int) shape->depth;
  s->a = bench_alloc(bench_mul(bench_mul(shape->col, shape->depth), sizeof(float)));
  s->b = bench_alloc(bench_mul(bench_mul(shape->row, shape->depth), sizeof(float)));
  s->c = bench_alloc(bench_mul(bench_mul(shape->col, shape->row), sizeof(float)));
  if (s->a == NULL || s->b == NULL || s->c == NULL) {
    sgemm_teardown(s);
    return "out of memory";
  }
  bench_rng rng;
  bench_rng_seed(&rng, shape, "openblas-sgemm");
  bench_fill_f32(&rng, s->a, shape->col * shape->depth, -1.0f, 1.0f);
  bench_fill_f32(&rng, s->b, shape->row * shape->depth, -1.0f, 1.0f);
  sgemm_run(s); /* warm-up */
  *state = s;
  return NULL;
}

const bench_case bench_openblas_sgemm = {
    .library = "openblas",
    .variant = "sgemm",
    .flags = BENCH_CASE_FC | BENCH_CASE_THREADS,
    .skip_isas = NULL,
    .unavailable = NULL,
    .setup = sgemm_setup,
    .prepare = sgemm_prepare,
    .run = sgemm_run,
    .teardown = sgemm_teardown,
};

/* ---- library ----------------------------------------------------------------- */

static void openblas_init(void) { openblas_set_num_threads(1); }

static void openblas_context(bench_context_fn add, void* ctx)
{
  char threads[32];
  const char* coretype = getenv("OPENBLAS_CORETYPE");
  snprintf(threads, sizeof(threads), "%d", openblas_get_num_threads());
  add(ctx, "openblas_core", openblas_get_corename());
  add(ctx, "openblas_coretype_env", coretype != NULL ? coretype : "(unset)");
  add(ctx, "openblas_threads", threads);
  add(ctx, "openblas_config", openblas_get_config());
}

const bench_library bench_library_openblas = {
    .name = "openblas",
    .init = openblas_init,
    .context = openblas_context,
};
