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
 * There are two shape sets: the main one (bench/shapes.txt), on which every case
 * runs, and the fully-connected one (bench/shapes-fc.txt: layers of real networks
 * at M = 1 to 8), on which only the cases flagged BENCH_CASE_FC run, and gemmi8
 * cases only on their best kernel set and avx2 (BENCH_CASE_FC_BEST_ISA: the best
 * one only).
 *
 * Adding a library: write its cases in a new file (bench/cases-<library>.c, or .cc
 * with extern "C" definitions), check its first result with bench_check_gemm,
 * declare them below, and list them, with the library's init/context hooks, in
 * cases.c. The register-only peak loops (cases-peak.c) are cases too, flagged
 * BENCH_CASE_NO_SHAPE.
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
/* Not a GEMM: registered once, not per shape, named <library>/<variant>/0x0x0 (the
 * register-only peak loops); its work per run() comes from ops(). */
#define BENCH_CASE_NO_SHAPE 2u
/* Also registered on the fully-connected shapes. */
#define BENCH_CASE_FC 4u
/* With BENCH_CASE_GEMMI8_ISA and BENCH_CASE_FC: on the fully-connected shapes, only
 * the best kernel set this case registers (not avx2 as well). */
#define BENCH_CASE_FC_BEST_ISA 8u
/* Not a GEMM but a memory loop sized by a weight matrix: registered only on the
 * fully-connected shapes, once per distinct Row x Depth, as
 * <library>/<variant>/<Row>x0x<Depth>; no GOPS counter, bytes() gives its GBps. */
#define BENCH_CASE_WEIGHT_BYTES 16u
/* With BENCH_CASE_GEMMI8_ISA: on the ten shapes too, only the best kernel set. */
#define BENCH_CASE_BEST_ISA_ONLY 32u
/* Also registered on bench_threads > 1 threads (GEMMI8_BENCH_THREADS, default 2), as
 * <library>@<threads>/<variant>/<shape>, timed by wall clock; gemmi8's on its best
 * kernel set. */
#define BENCH_CASE_THREADS 64u

/* With BENCH_CASE_THREADS: registered only in the threaded runs, not single-thread. */
#define BENCH_CASE_THREADS_ONLY 128u

/* Threads the case being set up or run is to use (1 for the single-thread cases):
 * setup() and prepare() read it. */
extern int bench_threads;

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
  /* Operations one run() performs, for the GOPS counter. NULL pointer: a GEMM,
   * 2 * M * N * K. */
  double (*ops)(const void* state);
  /* Text shown with the result (Google Benchmark's label: the implementation a
   * peer picked for this shape). NULL pointer, or NULL / "" returned: none. */
  const char* (*label)(const void* state);
  /* Weight bytes one run() reads once (gemmi8: the packed weights; the read loop:
   * its buffer), for the counters weight_bytes and GBps (weight_bytes per second
   * / 1e9). NULL pointer: no such counters. */
  double (*bytes)(const void* state);
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

/* Bytes of gemmi8's packed qu8 or qs8 weights (the larger) for N x K on the kernel
 * set gemmi8 chose at start-up; 0 on error. (cases-gemmi8.c) */
size_t bench_gemmi8_weight_bytes(size_t n, size_t k);

/* The threaded runs' pools (parallel-callers.cc), one per thread count, kept for the
 * run: the parallel-for of gemmi8's pool, or of a caller's pthreadpool or OpenMP loop,
 * of `threads` threads, for gemmi8's _ex entry points (NULL, or why it is missing);
 * and the pthreadpool of `threads` threads itself, for XNNPACK (NULL for one thread
 * or when pthreadpool is not built in). */
#define BENCH_CALLER_GEMMI8_POOL 0
#define BENCH_CALLER_PTHREADPOOL 1
#define BENCH_CALLER_OPENMP 2
struct gemmi8_parallel;
const char* bench_caller_parallel(int kind, int threads, struct gemmi8_parallel* out);
void* bench_pthreadpool(int threads);

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

/* Whether this CPU and its OS support an x86 feature: "popcnt", "fma", "avx2",
 * "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512vnni", "avx512vpopcntdq",
 * "avx512bitalg", "avxvnni" (cpuid, and xgetbv for the register state). Always 0
 * off x86-64 and for unknown names. (cases-peak.c) */
int bench_cpu_has(const char* feature);

/* Standard deviation of a uniform integer in [lo, hi]. */
double bench_uniform_sd(int32_t lo, int32_t hi);
/* The requantization scale the peers use: maps the accumulator's spread,
 * sqrt(K) * sd_a * sd_b, onto +-48 output steps (as the gemmi8 cases do), so that
 * most outputs are neither clamped nor constant. */
double bench_requant_scale(size_t k, double sd_a, double sd_b);

/* ---- checking a peer's output ------------------------------------------------- */
/* Every peer compares its first result, in setup, with a plain reference on a
 * sample of outputs (rows and columns at the edges and random ones), so that a
 * misconfigured peer fails visibly instead of reporting a fantasy speed. */

typedef enum bench_type { BENCH_U8, BENCH_S8, BENCH_S32 } bench_type;

typedef struct bench_gemm_check {
  size_t m, n, k;
  bench_type a_type; /* BENCH_U8 or BENCH_S8 */
  const void* a;     /* M x K, row-major */
  size_t a_stride;   /* elements */
  int32_t a_zp;
  bench_type b_type; /* BENCH_U8 or BENCH_S8 */
  const void* b;     /* N x K, row-major (before any packing) */
  size_t b_stride;
  int32_t b_zp;
  const int32_t* bias; /* N, or NULL */
  bench_type c_type;   /* BENCH_S32: exact; BENCH_U8 / BENCH_S8: requantized */
  const void* c;       /* M x N, row-major */
  size_t c_stride;
  /* Requantized outputs: C = clamp(c_zp + round(acc * scale), c_min, c_max), with
   * scale[n] per channel or scale[0] per tensor; a peer may differ from this
   * double-precision reference by 1 (its rounding), never by more. */
  const double* scale;
  int per_channel;
  int32_t c_zp, c_min, c_max;
} bench_gemm_check;

/* NULL if the sampled outputs agree, else a message naming the first mismatch.
 * Also fails if most sampled reference outputs are clamped (a check that could
 * not see a wrong result). */
const char* bench_check_gemm(const bench_gemm_check* check);

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
extern const bench_case bench_gemmi8_qu8fp32; /* qu8, fp32 requantization mode */
extern const bench_case bench_gemmi8_qs8fp32; /* qs8, fp32 requantization mode */
extern const bench_case bench_gemmi8_bin;    /* binary, int32 output */
extern const bench_case bench_gemmi8_qu8s8;        /* uint8 x int8, fixed-point per-channel */
extern const bench_case bench_gemmi8_qu8s8s32;     /* uint8 x int8, int32 output */
extern const bench_case bench_gemmi8_qu8s8fp32;    /* uint8 x int8, fp32 per-channel */
extern const bench_case bench_gemmi8_qu8s8fp32_pthreadpool; /* the same on pthreadpool */
extern const bench_case bench_gemmi8_qu8s8fp32_openmp;      /* ... on an OpenMP loop */
extern const bench_case bench_gemmi8_qu8s8_pt;     /* uint8 x int8, fixed-point per-tensor */
extern const bench_case bench_gemmi8_qu8s8fp32_pt; /* uint8 x int8, fp32 per-tensor */
extern const bench_case bench_gemmi8_qs8_pt;       /* qs8, fixed-point per-tensor */
extern const bench_case bench_gemmi8_qs8fp32_pt;   /* qs8, fp32 per-tensor */

/* cases-openblas.c */
extern const bench_library bench_library_openblas;
extern const bench_case bench_openblas_sgemm; /* fp32, B given N x K (transposed) */

/* cases-gemmlowp.cc (AVX2 kernel; per-tensor fixed-point output stage) */
extern const bench_library bench_library_gemmlowp;
extern const bench_case bench_gemmlowp_u8u8;  /* uint8 x uint8 -> uint8 requantized */
extern const bench_case bench_gemmlowp_u8s32; /* uint8 x uint8 -> int32 (+ bias) */

/* cases-onednn.cc */
extern const bench_library bench_library_onednn;
extern const bench_case bench_onednn_gemm_u8s8s32;   /* dnnl_gemm_u8s8s32, packs B per call */
extern const bench_case bench_onednn_matmul_u8s8u8;  /* matmul, weights packed once */
extern const bench_case bench_onednn_matmul_s8s8s8;  /* matmul, weights packed once */
extern const bench_case bench_onednn_matmul_u8s8s32; /* matmul, int32 output */
/* matmul, oneDNN's fastest configuration: one output scale, no zero points (the
 * source and destination zero points folded into the int32 bias) */
extern const bench_case bench_onednn_matmul_u8s8u8_fast;
extern const bench_case bench_onednn_matmul_s8s8s8_fast;
/* zero points and one output scale; no zero points and per-channel scales */
extern const bench_case bench_onednn_matmul_u8s8u8_pt;
extern const bench_case bench_onednn_matmul_s8s8s8_pt;
extern const bench_case bench_onednn_matmul_u8s8u8_nozp;
extern const bench_case bench_onednn_matmul_s8s8s8_nozp;

/* cases-xnnpack.c (fully-connected operators, weights packed at creation) */
extern const bench_library bench_library_xnnpack;
extern const bench_case bench_xnnpack_fc_qu8; /* uint8 -> uint8, per-tensor scale */
extern const bench_case bench_xnnpack_fc_qs8; /* int8 -> int8, per-tensor scale */

/* cases-peak.c: register-only loops, the machine's limits (bench/README.md) */
extern const bench_library bench_library_peak;
extern const bench_case bench_peak_vpdpbusd_zmm;   /* int8: 2*64 ops / vpdpbusd */
extern const bench_case bench_peak_vpmaddwd_ymm;   /* int8 widened (AVX2): 2*16 / vpmaddwd */
extern const bench_case bench_peak_vfmadd_zmm;     /* fp32: 2*16 flops / vfmadd231ps */
extern const bench_case bench_peak_vpopcntq_zmm;   /* binary: 2*512 / xor+popcnt+add */
extern const bench_case bench_peak_popcnt_lut_ymm; /* binary (AVX2): 2*256 / nibble LUT */
extern const bench_case bench_peak_popcnt_lut_zmm; /* binary (AVX-512BW): 2*512 / nibble LUT */
extern const bench_case bench_peak_popcnt_r64;     /* binary (scalar): 2*64 / popcnt */
/* Not register-only: reads a buffer the size of gemmi8's packed weights for each
 * fully-connected Row x Depth (BENCH_CASE_WEIGHT_BYTES), GBps. */
extern const bench_case bench_peak_read_bw;
/* That read loop on any 64-byte aligned buffer of a multiple of 64 bytes: returns the
 * sum of its 64-bit words (keep it, so that the reads stay); *how (if not NULL) names
 * the loop. The L2 cache size of CPU 0 in bytes (0: unknown) and where it was read. */
uint64_t bench_read_buffer(const void* buffer, size_t bytes, const char** how);
size_t bench_l2_cache_bytes(const char** source);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GEMMI8_BENCH_CASES_H */
