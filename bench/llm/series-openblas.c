/*
 * gemmi8-llm-bench: OpenBLAS, the float baseline.
 *
 *   openblas/sgemm   cblas_sgemm, row-major: X (M x K) x W^T (W given N x K, CblasTrans),
 *                    alpha 1, beta 0 (no bias: less work than the layer's).
 *   openblas/sgemv   cblas_sgemv at M = 1: W (N x K) x x, what a framework calls for
 *                    one row (OpenBLAS 0.3.21's sgemm does not switch to it itself).
 * The float weights are b_scale[n] * b[n][k], the layer's int8 weights dequantized.
 * Threads: openblas_set_num_threads(cell threads) before each timed slice. Its core
 * comes from OPENBLAS_CORETYPE, which bench/llm/run.sh sets (SkylakeX on AVX-512),
 * as bench/run.sh does.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cblas.h>

#include "llm.h"

#include "../cases.h"

void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char* openblas_get_config(void);
char* openblas_get_corename(void);

typedef struct blas_cell {
  const llm_cell* cell;
  int gemv;
} blas_cell;

/* The float weights are the layer's: nothing to pack. */
static const char* pack(const llm_layer* layer, void** packed)
{
  *packed = (void*) layer;
  return NULL;
}
static void unpack(void* packed) { (void) packed; }
static double weight_bytes(const void* packed)
{
  const llm_layer* l = packed;
  return (double) l->n * (double) l->k * sizeof(float);
}

static const char* run(void* opaque)
{
  const blas_cell* s = opaque;
  const llm_cell* c = s->cell;
  const llm_layer* l = c->layer;
  if (s->gemv) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, (int) l->n, (int) l->k, 1.0f, l->w, (int) l->k,
                c->rows->x, 1, 0.0f, c->c, 1);
  } else {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) c->m, (int) l->n, (int) l->k, 1.0f,
                c->rows->x, (int) l->k, l->w, (int) l->k, 0.0f, c->c, (int) l->n);
  }
  return NULL;
}

static const char* prepare(void* opaque)
{
  const blas_cell* s = opaque;
  openblas_set_num_threads(s->cell->threads);
  return NULL;
}

static double term(const void* ctx, size_t m, size_t n, size_t k)
{
  const blas_cell* s = ctx;
  const llm_layer* l = s->cell->layer;
  return (double) s->cell->rows->x[m * l->k + k] * (double) l->w[n * l->k + k];
}
static double no_bias(const void* ctx, size_t n)
{
  (void) ctx;
  (void) n;
  return 0.0;
}

static void teardown(void* opaque) { free(opaque); }

static const char* setup_either(const llm_cell* cell, int gemv, void** state)
{
  const llm_layer* l = cell->layer;
  if (cell->m > 0x7FFFFFFF || l->n > 0x7FFFFFFF || l->k > 0x7FFFFFFF) return "too large for int";
  blas_cell* s = calloc(1, sizeof(*s));
  if (s == NULL) return "out of memory";
  s->cell = cell;
  s->gemv = gemv;
  prepare(s);
  run(s);
  const llm_reference ref = {s, term, no_bias};
  const char* err = llm_check(gemv ? "openblas/sgemv" : "openblas/sgemm", cell, cell->c, &ref);
  if (err != NULL) {
    free(s);
    return err;
  }
  *state = s;
  return NULL;
}

static const char* setup_sgemm(const llm_cell* cell, void* packed, void** state)
{
  (void) packed;
  return setup_either(cell, 0, state);
}
static const char* setup_sgemv(const llm_cell* cell, void* packed, void** state)
{
  (void) packed;
  return setup_either(cell, 1, state);
}

const llm_series llm_openblas_sgemm = {
    .name = "openblas/sgemm",
    .library = "openblas",
    .role = LLM_ROLE_PEER,
    .flags = 0,
    .weights = "fp32",
    .pack_key = "openblas",
    .description = "cblas_sgemm, float X x W^T (W N x K), beta 0, no bias",
    .pack = pack,
    .unpack = unpack,
    .weight_bytes = weight_bytes,
    .setup = setup_sgemm,
    .prepare = prepare,
    .run = run,
    .teardown = teardown,
};

const llm_series llm_openblas_sgemv = {
    .name = "openblas/sgemv",
    .library = "openblas",
    .role = LLM_ROLE_PEER,
    .flags = LLM_M1_ONLY,
    .weights = "fp32",
    .pack_key = "openblas",
    .description = "cblas_sgemv at M = 1 (float W x x), no bias",
    .pack = pack,
    .unpack = unpack,
    .weight_bytes = weight_bytes,
    .setup = setup_sgemv,
    .prepare = prepare,
    .run = run,
    .teardown = teardown,
};

const char* llm_openblas_context(void)
{
  static char text[512];
  const char* coretype = getenv("OPENBLAS_CORETYPE");
  snprintf(text, sizeof(text), "core %s (OPENBLAS_CORETYPE=%s), %s", openblas_get_corename(),
           coretype != NULL ? coretype : "(unset)", openblas_get_config());
  return text;
}
