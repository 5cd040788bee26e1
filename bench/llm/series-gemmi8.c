/*
 * gemmi8-llm-bench: gemmi8's series, on the kernel set it picks by itself.
 *
 *   gemmi8/qd8          gemmi8_qd8_gemm_f32_ex: int8 rows given (quantized before, a
 *                       scale and zero point per row), int8 weights with a float scale
 *                       per channel, float bias, float output.
 *   gemmi8/qdu8         the same with uint8 rows (gemmi8_qdu8_gemm_f32_ex).
 *   gemmi8/qd8-linear   gemmi8_qd8_linear_f32: float rows in, quantized per row
 *                       (gemmi8_quantize_rows_s8) in the timed call, then qd8.
 *   gemmi8/qdu8-linear  the same through uint8 rows.
 *   gemmi8/qd8-qc4w, -qb4w32, -qb4w128
 *                       gemmi8_qd8_gemm_f32_ex over 4-bit weights (the layer's int8
 *                       weights' high nibbles, scale 16 x theirs) with a scale per
 *                       channel, per block of 32, per block of 128.
 * One thread: the calling thread (parallel NULL); two: gemmi8's pool
 * (gemmi8_threadpool_create(2)). The weights are packed once per layer; the linear
 * series share their GEMM's packed weights, each cell its own workspace.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemmi8.h"
#include "llm.h"

#include "../cases.h"

/* A layer's packed weights, and the values the GEMM multiplies by (for the check):
 * weight (n, k) = values[n * K + k] * scales[n * blocks + k / block] (block 0: one
 * scale per channel). The int8 series point at the layer's own; a 4-bit series would
 * fill its nibbles' values and block scales here, and run through the same run(). */
typedef struct g8_packed {
  void* packed;
  size_t bytes;
  const int8_t* values; /* N x K */
  const float* scales;  /* N x blocks */
  size_t block;         /* 0: per channel */
  int8_t* own_values;   /* a 4-bit series' own values and scales, or NULL */
  float* own_scales;
} g8_packed;

typedef struct g8_cell {
  const llm_cell* cell;
  const g8_packed* packed;
  int unsigned_rows; /* qdu8 */
  int linear;        /* float rows in */
  void* workspace;
  size_t workspace_bytes;
} g8_cell;

static const char* status_error(const char* what, gemmi8_status status)
{
  return bench_error("%s: %s", what, gemmi8_status_string(status));
}

static const char* pack_either(const llm_layer* layer, int unsigned_rows, void** out)
{
  g8_packed* p = calloc(1, sizeof(*p));
  if (p == NULL) return "out of memory";
  gemmi8_status st = unsigned_rows ? gemmi8_qdu8_pack_size(layer->n, layer->k, &p->bytes)
                                   : gemmi8_qd8_pack_size(layer->n, layer->k, &p->bytes);
  if (st != gemmi8_status_success) {
    free(p);
    return status_error("pack_size", st);
  }
  p->packed = bench_alloc(p->bytes); /* 64-byte aligned: GEMMI8_PACK_ALIGNMENT */
  if (p->packed == NULL) {
    free(p);
    return "out of memory";
  }
  st = unsigned_rows ? gemmi8_qdu8_pack(layer->n, layer->k, layer->b, layer->k, 0, layer->b_scale,
                                        layer->bias, p->packed, p->bytes)
                     : gemmi8_qd8_pack(layer->n, layer->k, layer->b, layer->k, 0, layer->b_scale,
                                       layer->bias, p->packed, p->bytes);
  if (st != gemmi8_status_success) {
    bench_free(p->packed);
    free(p);
    return status_error(unsigned_rows ? "gemmi8_qdu8_pack" : "gemmi8_qd8_pack", st);
  }
  p->values = layer->b;
  p->scales = layer->b_scale;
  p->block = 0;
  *out = p;
  return NULL;
}

static const char* pack_qd8(const llm_layer* layer, void** out) { return pack_either(layer, 0, out); }
static const char* pack_qdu8(const llm_layer* layer, void** out) { return pack_either(layer, 1, out); }

/* 4-bit weights from the layer's int8 ones: the signed nibble b >> 4 (-8..7, its high
 * bits), scale 16 * b_scale[n] in every block, packed two a byte, low nibble first. */
static const char* pack_q4(const llm_layer* layer, size_t block, void** out)
{
  const size_t n = layer->n, k = layer->k, row_bytes = (k + 1) / 2;
  const size_t blocks = block == 0 ? 1 : (k + block - 1) / block;
  g8_packed* p = calloc(1, sizeof(*p));
  uint8_t* nibbles = malloc(n * row_bytes);
  if (p == NULL || nibbles == NULL || (p->own_values = malloc(n * k)) == NULL ||
      (p->own_scales = malloc(n * blocks * sizeof(float))) == NULL) {
    free(nibbles);
    if (p != NULL) free(p->own_values), free(p->own_scales);
    free(p);
    return "out of memory";
  }
  memset(nibbles, 0, n * row_bytes);
  for (size_t j = 0; j < n; j++) {
    for (size_t d = 0; d < k; d++) {
      const int8_t v = (int8_t) (layer->b[j * k + d] >> 4);
      p->own_values[j * k + d] = v;
      nibbles[j * row_bytes + d / 2] |= (uint8_t) ((v & 15) << (d % 2 ? 4 : 0));
    }
    for (size_t b = 0; b < blocks; b++) p->own_scales[j * blocks + b] = 16.0f * layer->b_scale[j];
  }
  const gemmi8_q4_weights w = {nibbles, row_bytes, block, p->own_scales, NULL, layer->bias};
  gemmi8_status st = gemmi8_qd8_pack_q4_size(n, k, block, &p->bytes);
  if (st == gemmi8_status_success) {
    p->packed = bench_alloc(p->bytes);
    st = p->packed == NULL ? gemmi8_status_out_of_memory
                           : gemmi8_qd8_pack_q4(n, k, &w, p->packed, p->bytes);
  }
  free(nibbles);
  if (st != gemmi8_status_success) {
    bench_free(p->packed);
    free(p->own_values), free(p->own_scales), free(p);
    return status_error("gemmi8_qd8_pack_q4", st);
  }
  p->values = p->own_values;
  p->scales = p->own_scales;
  p->block = block;
  *out = p;
  return NULL;
}

static const char* pack_qc4w(const llm_layer* layer, void** out) { return pack_q4(layer, 0, out); }
static const char* pack_qb4w32(const llm_layer* layer, void** out) { return pack_q4(layer, 32, out); }
static const char* pack_qb4w128(const llm_layer* layer, void** out) { return pack_q4(layer, 128, out); }

static void unpack(void* opaque)
{
  g8_packed* p = opaque;
  if (p == NULL) return;
  bench_free(p->packed);
  free(p->own_values);
  free(p->own_scales);
  free(p);
}

static double weight_bytes(const void* opaque) { return (double) ((const g8_packed*) opaque)->bytes; }

static const char* run(void* opaque)
{
  const g8_cell* s = opaque;
  const llm_cell* c = s->cell;
  const llm_layer* l = c->layer;
  const llm_rows* r = c->rows;
  gemmi8_status st;
  if (s->linear) {
    st = s->unsigned_rows
             ? gemmi8_qdu8_linear_f32(c->m, l->n, l->k, r->x, l->k, s->packed->packed, -INFINITY,
                                      INFINITY, c->c, l->n, s->workspace, s->workspace_bytes,
                                      c->parallel)
             : gemmi8_qd8_linear_f32(c->m, l->n, l->k, r->x, l->k, s->packed->packed, -INFINITY,
                                     INFINITY, c->c, l->n, s->workspace, s->workspace_bytes,
                                     c->parallel);
  } else if (s->unsigned_rows) {
    st = gemmi8_qdu8_gemm_f32_ex(c->m, l->n, l->k, r->x_u8, l->k, r->u8_scale, r->u8_zp,
                                 s->packed->packed, -INFINITY, INFINITY, c->c, l->n, c->parallel);
  } else {
    st = gemmi8_qd8_gemm_f32_ex(c->m, l->n, l->k, r->x_s8, l->k, r->s8_scale, r->s8_zp,
                                s->packed->packed, -INFINITY, INFINITY, c->c, l->n, c->parallel);
  }
  return st == gemmi8_status_success ? NULL : status_error("gemmi8", st);
}

static void teardown(void* opaque)
{
  g8_cell* s = opaque;
  if (s == NULL) return;
  bench_free(s->workspace);
  free(s);
}

/* The reference: the quantized rows (the linear series quantize as the rows were),
 * (a - zp[m]) * weight value * a_scale[m] * weight scale, + bias[n]. */
static double term(const void* ctx, size_t m, size_t n, size_t k)
{
  const g8_cell* s = ctx;
  const llm_rows* r = s->cell->rows;
  const size_t depth = s->cell->layer->k;
  const g8_packed* p = s->packed;
  const double a = s->unsigned_rows ? (double) r->x_u8[m * depth + k] - r->u8_zp[m]
                                    : (double) r->x_s8[m * depth + k] - r->s8_zp[m];
  const double scale = s->unsigned_rows ? r->u8_scale[m] : r->s8_scale[m];
  const size_t blocks = p->block == 0 ? 1 : (depth + p->block - 1) / p->block;
  const float b_scale = p->scales[n * blocks + (p->block == 0 ? 0 : k / p->block)];
  return a * (double) p->values[n * depth + k] * scale * (double) b_scale;
}

static double bias(const void* ctx, size_t n)
{
  const g8_cell* s = ctx;
  return s->cell->layer->bias[n];
}

static const char* setup_either(const llm_cell* cell, void* packed, int unsigned_rows, int linear,
                                const char* name, void** state)
{
  g8_cell* s = calloc(1, sizeof(*s));
  if (s == NULL) return "out of memory";
  s->cell = cell;
  s->packed = packed;
  s->unsigned_rows = unsigned_rows;
  s->linear = linear;
  if (linear) {
    gemmi8_status st = gemmi8_qd8_linear_workspace_size(cell->m, cell->layer->k, &s->workspace_bytes);
    if (st != gemmi8_status_success) {
      teardown(s);
      return status_error("gemmi8_qd8_linear_workspace_size", st);
    }
    s->workspace = bench_alloc(s->workspace_bytes);
    if (s->workspace == NULL) {
      teardown(s);
      return "out of memory";
    }
  }
  const char* err = run(s);
  const llm_reference ref = {s, term, bias};
  if (err == NULL) err = llm_check(name, cell, cell->c, &ref);
  if (err != NULL) {
    teardown(s);
    return err;
  }
  *state = s;
  return NULL;
}

static const char* setup_qd8(const llm_cell* cell, void* packed, void** state)
{
  return setup_either(cell, packed, 0, 0, "gemmi8/qd8", state);
}
static const char* setup_qc4w(const llm_cell* cell, void* packed, void** state)
{
  return setup_either(cell, packed, 0, 0, "gemmi8/qd8-qc4w", state);
}
static const char* setup_qb4w32(const llm_cell* cell, void* packed, void** state)
{
  return setup_either(cell, packed, 0, 0, "gemmi8/qd8-qb4w32", state);
}
static const char* setup_qb4w128(const llm_cell* cell, void* packed, void** state)
{
  return setup_either(cell, packed, 0, 0, "gemmi8/qd8-qb4w128", state);
}
static const char* setup_qdu8(const llm_cell* cell, void* packed, void** state)
{
  return setup_either(cell, packed, 1, 0, "gemmi8/qdu8", state);
}
static const char* setup_qd8_linear(const llm_cell* cell, void* packed, void** state)
{
  return setup_either(cell, packed, 0, 1, "gemmi8/qd8-linear", state);
}
static const char* setup_qdu8_linear(const llm_cell* cell, void* packed, void** state)
{
  return setup_either(cell, packed, 1, 1, "gemmi8/qdu8-linear", state);
}

/* A series: its name, the pack_key of the weights it shares, its pack and setup, the
 * weights' type and the targets (bench/llm/README.md), a line of description. */
#define G8_SERIES(id, series_name, key, pack_fn, setup_fn, type, bw, peak, text)               \
  const llm_series id = {                                                                  \
      .name = series_name,                                                                 \
      .library = "gemmi8",                                                                 \
      .role = LLM_ROLE_GEMMI8,                                                             \
      .flags = 0,                                                                          \
      .weights = type,                                                                     \
      .bandwidth_target = bw,                                                              \
      .peak_target = peak,                                                                 \
      .description = text,                                                                 \
      .unavailable = NULL,                                                                 \
      .pack_key = key,                                                                     \
      .pack = pack_fn,                                                                     \
      .unpack = unpack,                                                                    \
      .weight_bytes = weight_bytes,                                                        \
      .setup = setup_fn,                                                                   \
      .prepare = NULL,                                                                     \
      .run = run,                                                                          \
      .teardown = teardown,                                                                \
      .label = NULL,                                                                       \
  };

G8_SERIES(llm_gemmi8_qd8, "gemmi8/qd8", "gemmi8/qd8", pack_qd8, setup_qd8, "int8", 0.90, 0.90,
          "gemmi8_qd8_gemm_f32_ex: int8 rows given (scale and zero point per row), int8 "
          "weights, float scale per channel, float bias and output")
G8_SERIES(llm_gemmi8_qdu8, "gemmi8/qdu8", "gemmi8/qdu8", pack_qdu8, setup_qdu8, "int8", 0.90, 0.90,
          "gemmi8_qdu8_gemm_f32_ex: the same with uint8 rows")
G8_SERIES(llm_gemmi8_qd8_linear, "gemmi8/qd8-linear", "gemmi8/qd8", pack_qd8, setup_qd8_linear,
          "int8", 0.90, 0.90,
          "gemmi8_qd8_linear_f32: float rows in, quantized per row to int8 in the call, then qd8")
G8_SERIES(llm_gemmi8_qdu8_linear, "gemmi8/qdu8-linear", "gemmi8/qdu8", pack_qdu8, setup_qdu8_linear,
          "int8", 0.90, 0.90,
          "gemmi8_qdu8_linear_f32: float rows in, quantized per row to uint8 in the call, then qdu8")
G8_SERIES(llm_gemmi8_qd8_qc4w, "gemmi8/qd8-qc4w", "gemmi8/qd8-qc4w", pack_qc4w, setup_qc4w, "4-bit",
          0.85, 0.80,
          "gemmi8_qd8_gemm_f32_ex over 4-bit weights, a float scale per channel (qc4w), signed "
          "nibbles: int8 rows given")
G8_SERIES(llm_gemmi8_qd8_qb4w32, "gemmi8/qd8-qb4w32", "gemmi8/qd8-qb4w32", pack_qb4w32,
          setup_qb4w32, "4-bit", 0.85, 0.80,
          "the same, a float scale per block of 32 depths (qb4w, GGML q4_0's block)")
G8_SERIES(llm_gemmi8_qd8_qb4w128, "gemmi8/qd8-qb4w128", "gemmi8/qd8-qb4w128", pack_qb4w128,
          setup_qb4w128, "4-bit", 0.85, 0.80,
          "the same, a float scale per block of 128 depths (MatMulNBits' default block)")
