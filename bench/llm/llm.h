/*
 * gemmi8-llm-bench: the series of the llm mode (bench/llm/README.md).
 *
 * A layer is one weight matrix of a transformer (N x K, bench/llm/shapes.txt), a cell
 * is that layer at one M (tokens) on one thread count, and a series is one library's
 * way of computing the cell's output: C (M x N, float) = X (M x K, float, or rows
 * quantized from it) x W^T. The driver (llm-bench.cc) sets every series up on every
 * cell of a layer, then times them interleaved, a round at a time; a layer's weights
 * are made and packed once and shared by its cells.
 *
 * Adding a series (gemmi8's 4-bit GEMMs, say) is one llm_series in a series file and
 * one line in the table of llm-bench.cc: pack() makes its weights from the layer's
 * (int8 with a scale per channel; a 4-bit series quantizes them again as it needs),
 * setup() makes a cell's state and checks its first output (llm_check), run() is the
 * timed call. The report reads what a series is from its fields (role, weights,
 * targets): nothing else changes.
 */
#ifndef GEMMI8_LLM_BENCH_H
#define GEMMI8_LLM_BENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gemmi8_parallel;

/* One weight matrix and what every series builds its own weights from. */
typedef struct llm_layer {
  size_t n, k;
  const int8_t* b;      /* N x K int8, symmetric (-127..127), row n = output channel n */
  const float* b_scale; /* N: W[n][k] = b_scale[n] * b[n][k] */
  const float* bias;    /* N */
  const float* w;       /* N x K float, b_scale[n] * b[n][k]: the float peers' weights */
} llm_layer;

/* The activations at one M, shared by the thread counts. */
typedef struct llm_rows {
  size_t m, k;
  const float* x;           /* M x K float */
  const int8_t* x_s8;       /* M x K, gemmi8_quantize_rows_s8(x): qd8's rows */
  const float* s8_scale;    /* M */
  const int32_t* s8_zp;     /* M */
  const uint8_t* x_u8;      /* M x K, gemmi8_quantize_rows_u8(x): qdu8's rows */
  const float* u8_scale;    /* M */
  const int32_t* u8_zp;     /* M */
} llm_rows;

/* One cell: a layer at one M on one thread count. */
typedef struct llm_cell {
  const llm_layer* layer;
  const llm_rows* rows;
  size_t m;
  int threads;
  /* gemmi8's pool of `threads` threads (gemmi8_threadpool_create), NULL for one */
  const struct gemmi8_parallel* parallel;
  float* c; /* M x N output, shared by the cell's series (one runs at a time) */
} llm_cell;

/* role */
#define LLM_ROLE_GEMMI8 0 /* a gemmi8 series: in the bandwidth and peak tables */
#define LLM_ROLE_PEER 1   /* a peer: in "best peer" */

/* flags */
#define LLM_M1_ONLY 1u /* only at M = 1 (a matrix-vector routine) */

typedef struct llm_series {
  const char* name;    /* "<library>/<variant>": gemmi8/qd8, onednn/s8s8f32 */
  const char* library; /* threads of the same library need no settling between runs */
  int role;            /* LLM_ROLE_* */
  unsigned flags;      /* LLM_* */
  const char* weights; /* "int8", "4-bit", "fp32": the targets that apply */
  /* gemmi8 series: the targets, fractions (0: none) of the read loop's bytes
   * per second at M = 1 (weights larger than the L2) and of the vpdpbusd peak at
   * M >= 16, one thread (K >= 768) */
  double bandwidth_target, peak_target;
  /* One line: what it computes (the report prints it). */
  const char* description;
  /* NULL if the series can run here, else why not (it is skipped, visibly). */
  const char* (*unavailable)(void);
  /* Series with the same pack_key share one pack() of a layer (gemmi8/qd8-linear
   * uses gemmi8/qd8's packed weights); NULL: its own. */
  const char* pack_key;
  /* Its weights for a layer (*packed), never timed. NULL or an error message. */
  const char* (*pack)(const llm_layer* layer, void** packed);
  void (*unpack)(void* packed);
  /* Bytes of its weights one call reads (the bandwidth table's), 0: not reported. */
  double (*weight_bytes)(const void* packed);
  /* A cell's state: buffers, the peer's primitive; runs the cell once and checks
   * the output (llm_check). NULL or an error message. */
  const char* (*setup)(const llm_cell* cell, void* packed, void** state);
  /* Not timed, before each timed slice: the library's thread count. May be NULL. */
  const char* (*prepare)(void* state);
  /* The timed call. NULL or an error message. */
  const char* (*run)(void* state);
  void (*teardown)(void* state);
  /* The implementation the library picked for this cell ("brg:avx512_core_amx_int8"),
   * or NULL. May be NULL. */
  const char* (*label)(const void* state);
} llm_series;

/* ---- helpers (llm-bench.cc) ---------------------------------------------------- */

/* One sampled output's reference: a sum of terms and its bias. The check passes
 * when |got - (sum + bias)| <= 1e-5 * (sum of |term| + |bias|) + 1e-30 for every
 * sampled output: float rounding passes, a wrong layout, scale or zero point does
 * not. term(ctx, m, n, k) is the k-th term of output (m, n); bias(ctx, n) its bias. */
typedef struct llm_reference {
  const void* ctx;
  double (*term)(const void* ctx, size_t m, size_t n, size_t k);
  double (*bias)(const void* ctx, size_t n);
} llm_reference;
/* NULL if the cell's sampled outputs (c, M x N, row stride N) agree, else a message
 * naming the series and the first mismatch. */
const char* llm_check(const char* series, const llm_cell* cell, const float* c,
                      const llm_reference* ref);

/* The series (series-*.c, series-*.cc). */
extern const llm_series llm_gemmi8_qd8;
extern const llm_series llm_gemmi8_qdu8;
extern const llm_series llm_gemmi8_qd8_linear;
extern const llm_series llm_gemmi8_qdu8_linear;
extern const llm_series llm_gemmi8_qd8_qc4w;
extern const llm_series llm_gemmi8_qd8_qb4w32;
extern const llm_series llm_gemmi8_qd8_qb4w128;
extern const llm_series llm_openblas_sgemm;
extern const llm_series llm_openblas_sgemv;
extern const llm_series llm_onednn_s8s8f32;
extern const llm_series llm_onednn_u8s8f32;
extern const llm_series llm_onednn_u8s8f32_fast;

/* OpenBLAS and oneDNN: one line of context each (version, core, ISA, threading). */
const char* llm_openblas_context(void);
const char* llm_onednn_context(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GEMMI8_LLM_BENCH_H */
