/*
 * gemmi8-bench: the benchmark cases, written in C.
 *
 * A case is one way of computing C = A x B with one library: a library name
 * ("gemmi8", "openblas"), a variant name ("qu8", "sgemm") and setup / run /
 * teardown functions. The C++ wrapper (main.cc) registers one Google Benchmark
 * per (case, shape) -- and, for cases flagged BENCH_CASE_GEMMI8_ISA, per gemmi8
 * kernel set this machine supports -- named <library>/<variant>/<Row>x<Col>x<Depth>.
 *
 * Shapes follow the GEMMi8 paper: (Row, Col, Depth) = (N, M, K), that is output
 * channels, output pixels, depth. Every case computes an M x N result over K
 * (K bits for binary GEMM) and is credited with 2 * M * N * K operations.
 *
 * Adding a library (gemmlowp, oneDNN, XNNPACK, ...): write its cases in a new file
 * (bench/cases-<library>.c, or .cc with extern "C" definitions), declare them
 * below, and list them, with the library's init/context hooks, in cases.c.
 */
#ifndef GEMMI8_BENCH_CASES_H
#define GEMMI8_BENCH_CASES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One GEMM shape, as the paper writes it. */
typedef struct bench_shape {
  size_t row;   /* N: output channels */
  size_t col;   /* M: output pixels */
  size_t depth; /* K: depth (bits for binary GEMM) */
} bench_shape;

/* Registered once per gemmi8 kernel set compiled in and supported here; the
 * variant name gets "-<isa>" appended ("qu8-avx2"). */
#define BENCH_CASE_GEMMI8_ISA 1u

typedef struct bench_case {
  const char* library;
  const char* variant;
  unsigned flags; /* BENCH_CASE_* */
  /* With BENCH_CASE_GEMMI8_ISA: kernel sets not to register for this case because
   * they run the same kernels as a lower set (NULL-terminated; NULL for none). */
  const char* const* skip_isas;
  /* NULL if the case can run on this machine, else the reason it cannot (the case
   * is then skipped, visibly). The pointer may be NULL: always available. */
  const char* (*unavailable)(void);
  /* Allocates and fills the inputs, packs the weights, runs the GEMM once to check
   * it and to warm it up. Not timed. isa is the gemmi8 kernel set for
   * BENCH_CASE_GEMMI8_ISA cases, else NULL. Returns NULL and sets *state on
   * success, else an error message (and frees what it allocated). */
  const char* (*setup)(const bench_shape* shape, const char* isa, void** state);
  /* Not timed, before each timed loop: restores global state other cases may
   * have changed (the gemmi8 kernel set). NULL pointer: nothing to do.
   * Returns NULL or an error message. */
  const char* (*prepare)(void* state);
  /* The timed operation: one GEMM. Returns NULL or an error message. */
  const char* (*run)(void* state);
  void (*teardown)(void* state);
} bench_case;

/* Receives one line of run context (library versions, kernels, threads). */
typedef void (*bench_context_fn)(void* ctx, const char* key, const char* value);

typedef struct bench_library {
  const char* name;
  /* Once, before any case runs (e.g. OpenBLAS single-threaded). May be NULL. */
  void (*init)(void);
  /* Reports what a reader of the results needs to know. May be NULL. */
  void (*context)(bench_context_fn add, void* ctx);
} bench_library;

/* The tables (cases.c). */
const bench_library* const* bench_libraries(size_t* count);
const bench_case* const* bench_cases(size_t* count);

/* The gemmi8 kernel sets compiled in and supported on this machine, generic first;
 * returns how many (at most cap names are stored). */
size_t bench_gemmi8_isas(const char** names, size_t cap);

/* Reads a shape file: "Row Col Depth" per line, '#' starts a comment. Stores at
 * most cap shapes. Returns the number of shapes read (0 for an empty file), or -1
 * with a message in err. */
long bench_read_shapes(const char* path, bench_shape* shapes, size_t cap, char* err,
                       size_t err_size);

/* ---- helpers shared by the case files (cases.c) ------------------------------ */

/* 64-byte aligned, zero-filled (so every page is touched before timing), counted
 * in bench_live_bytes(). NULL on failure or a size that overflows. */
void* bench_alloc(size_t size);
void bench_free(void* p);
size_t bench_live_bytes(void);
/* a * b, or 0 if the product overflows size_t. */
size_t bench_mul(size_t a, size_t b);

/* Deterministic generator: the same shape and salt give the same data in every
 * run, on every machine. */
typedef struct bench_rng {
  uint64_t state;
} bench_rng;
void bench_rng_seed(bench_rng* rng, const bench_shape* shape, const char* salt);
uint64_t bench_rng_next(bench_rng* rng);
/* Uniform in [lo, hi]. */
int32_t bench_rng_int(bench_rng* rng, int32_t lo, int32_t hi);
/* Uniform in [lo, hi). */
double bench_rng_real(bench_rng* rng, double lo, double hi);
void bench_fill_u8(bench_rng* rng, uint8_t* x, size_t count);
void bench_fill_s8(bench_rng* rng, int8_t* x, size_t count, int8_t lo, int8_t hi);
void bench_fill_f32(bench_rng* rng, float* x, size_t count, float lo, float hi);

/* Formats an error message into a static buffer (the bench is single-threaded). */
const char* bench_error(const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* ---- the cases and libraries, one file per library ----------------------------- */

/* cases-gemmi8.c */
extern const bench_library bench_library_gemmi8;
extern const bench_case bench_gemmi8_qu8;    /* uint8, fixed-point per-channel requant */
extern const bench_case bench_gemmi8_qu8s32; /* uint8, int32 output */
extern const bench_case bench_gemmi8_qs8;    /* int8, fixed-point per-channel requant */
extern const bench_case bench_gemmi8_qs8s32; /* int8, int32 output */
extern const bench_case bench_gemmi8_bin;    /* binary, int32 output */

/* cases-openblas.c */
extern const bench_library bench_library_openblas;
extern const bench_case bench_openblas_sgemm; /* fp32, B given N x K (transposed) */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GEMMI8_BENCH_CASES_H */
