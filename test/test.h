/*
 * Shared helpers of the gemmi8 test suite: pass/fail counting, a seeded random
 * generator, output buffers with guard bytes, and the list of test groups.
 *
 * Every test group is run once per instruction set (see main.c) with the same
 * seed, so all kernel sets see the same cases.
 */
#ifndef GEMMI8_TEST_H
#define GEMMI8_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "gemmi8.h"

#if defined(__GNUC__)
#define T_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define T_PRINTF(fmt, args)
#endif

#define T_COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* ---- run state (main.c) ------------------------------------------------------ */

/* 1 when GEMMI8_TEST_QUICK=1: smaller sweeps (sanitizers, emulators). */
extern int t_quick;

/* Name of the instruction set under test ("reference" before the first one). */
const char* t_isa(void);
/* The level gemmi8_isa_name() reports in this run (t_isa() may name a kernel set tuned
 * for particular cores, run at that level), and a return to this run's kernel set
 * after a test forced another. */
const char* t_isa_level(void);
void t_isa_return(void);

/* 1 if this build holds the type ("qu8", "qs8", "qu8s8", "bin", "q4": gemmi8_types_compiled). */
int t_type_built(const char* type);
/* Counts one test skipped because the build lacks a type, printing why once per
 * distinct reason. */
void t_skip_type(const char* type, const char* what);

/* The symbol of a kernel of the lists (a microkernel or a helper) this build holds,
 * or NULL (test/kernel-symbols.c). */
const char* t_kernel_symbol(void (*fn)(void));

/* Records one passed check. */
void t_pass(void);

/* Records one failed check and prints "FAIL [isa] func: message" (printing is
 * capped per instruction set; every failure is counted). */
void t_fail(const char* func, const char* fmt, ...) T_PRINTF(2, 3);

/* t_pass() if ok, else t_fail(); returns ok. */
int t_expect(int ok, const char* func, const char* fmt, ...) T_PRINTF(3, 4);

/* ---- random numbers (util.c) -------------------------------------------------- */

void t_seed(uint64_t seed);
uint64_t t_rand64(void);
/* Uniform in [0, n), n > 0. */
uint32_t t_below(uint32_t n);
/* Uniform in [lo, hi], inclusive. */
int64_t t_range(int64_t lo, int64_t hi);
/* Uniform in [0, 1). */
double t_unit(void);
/* One element of a constant array. */
#define T_PICK(array) ((array)[t_below((uint32_t) T_COUNT(array))])
/* Fills bytes with random values. */
void t_fill_random(void* p, size_t bytes);

/* ---- memory (util.c) ---------------------------------------------------------- */

/* malloc that never returns NULL (the suite stops on exhaustion). size 0 is 1. */
void* t_alloc(size_t size);
/* The same, at a GEMMI8_PACK_ALIGNMENT boundary; release with free(). */
void* t_alloc_aligned(size_t size);
/* t_alloc + memcpy. */
void* t_dup(const void* p, size_t size);

/* ---- output buffers with guards (util.c) -------------------------------------- */

typedef enum t_elem { T_U8, T_S8, T_S32, T_F32, T_U64 } t_elem;
size_t t_elem_size(t_elem elem);
/* The element at p as text (floats with their bits, u64 in hex). */
void t_format_elem(t_elem elem, const unsigned char* p, char* s, size_t size);

/* Bytes of guard before and after every output matrix. */
#define T_GUARD 64

/*
 * An output matrix of rows x cols elements with row stride `stride` (elements),
 * surrounded by guard bytes. The whole buffer is filled with random sentinel bytes;
 * `expect` starts as a copy and the test writes the expected elements into it, so
 * the stride padding and guards must stay as they were.
 */
typedef struct t_out {
  unsigned char* mem;
  unsigned char* expect;
  void* body; /* first element: what the library gets */
  size_t rows, cols, stride, total;
  t_elem elem;
} t_out;

void t_out_init(t_out* out, t_elem elem, size_t rows, size_t cols, size_t stride);
void t_out_free(t_out* out);
/* New random sentinel everywhere, in mem and expect. */
void t_out_refill(t_out* out);
/* Address of element (row, col) in the expected image. */
void* t_out_want(const t_out* out, size_t row, size_t col);
/* 1 if mem equals expect. Otherwise 0, with a description of the first difference
 * in msg, and *row, *col set to its element (SIZE_MAX when in a guard or padding). */
int t_out_same(const t_out* out, char* msg, size_t msg_size, size_t* row, size_t* col);
/* 1 if mem is unchanged since the last init/refill (mem equals the sentinel). */
int t_out_untouched(const t_out* out);

/* ---- fenced buffers (fence.c) ------------------------------------------------- */

/*
 * rows rows of row_bytes bytes for a kernel to read, at stride bytes, ending where
 * an inaccessible page begins: a read or write past the last byte faults. With
 * stride 0, every row ends at such a page (t_fence.stride then says the stride, a
 * multiple of the page size): a read past the end of any row faults. Every other
 * accessible byte (at least T_GUARD before the first row, the gaps between rows) is
 * random. Fill the rows, then t_fence_seal(); t_fence_intact() then says whether
 * any accessible byte, rows included, changed since.
 *
 * t_fence_init_at() with T_FENCE_START places the body the other way round: row 0
 * (with stride 0, every row) begins right after an inaccessible page, so a read or
 * write before the first byte faults, and at least T_GUARD random bytes follow the
 * last row. T_FENCE_END is t_fence_init(). At the start side the body begins at a
 * page boundary; at the end side it ends at one (so a body whose size is a multiple
 * of 64 bytes begins at a 64-byte boundary).
 *
 * For an output: seal it (the random bytes are the sentinel), write the expected
 * elements through t_fence_image(), call, and t_fence_intact() compares every
 * accessible byte against that image.
 */
typedef enum t_fence_side { T_FENCE_END = 0, T_FENCE_START = 1 } t_fence_side;

typedef struct t_fence {
  unsigned char* map;
  size_t map_size;
  t_fence_side side;
  size_t lead;                    /* inaccessible bytes before the first run */
  size_t segments, segment_bytes; /* accessible runs (one, or one per row) */
  size_t stride;                  /* bytes between rows */
  unsigned char* body;            /* first byte of row 0 */
  unsigned char* copy;            /* the accessible bytes when sealed */
} t_fence;

void* t_fence_init(t_fence* f, size_t rows, size_t row_bytes, size_t stride);
void* t_fence_init_at(t_fence* f, t_fence_side side, size_t rows, size_t row_bytes,
                      size_t stride);
/* The same on a fence already mapped (or zeroed): its pages are kept when the
 * geometry is the same (side, runs and their size), only refilled; otherwise it is
 * unmapped and mapped anew (no mmap, mprotect or munmap when it matches). */
void* t_fence_reinit(t_fence* f, t_fence_side side, size_t rows, size_t row_bytes,
                     size_t stride);
void t_fence_seal(t_fence* f);
/* Address in the sealed image of the accessible byte p of the fence (NULL if p is
 * not accessible). */
void* t_fence_image(const t_fence* f, const void* p);
/* 1 if unchanged since t_fence_seal() (or equal to the image as edited since); else
 * 0 and *offset = first changed byte relative to row 0 (negative: before it). */
int t_fence_intact(const t_fence* f, long* offset);
void t_fence_free(t_fence* f);

/* ---- test groups (one file each) ----------------------------------------------- */

void test_reference_self(void);      /* test-requant.c, run once before the ISAs */
void test_build(void);               /* test-build.c: what the build holds, kernel lists */
void test_misc(void);                /* test-errors.c: status strings, version, ISA name */
void test_errors(void);              /* test-errors.c: bad inputs of every entry point */
void test_quantize_multiplier(void); /* test-requant.c */
void test_qd8(void);              /* test-qd8.c: rows quantized at run time, float output */
void test_quantize_rows(void);       /* test-qrows.c: dynamic row quantization (u8, s8) */
void test_qhelp(void);               /* test-qhelp.c: quantization helpers, calibration */
void test_requant(void);             /* test-requant.c: trap cases, shift sweep, float ref */
void test_qgemm(void);               /* test-qgemm.c: qu8/qs8 sweeps against the reference */
void test_bin(void);                 /* test-bin.c: binary GEMM and bit-packing helpers */
void test_hardening(void);           /* test-hardening.c: regression tests of found defects */
void test_threads(void);             /* test-threads.c: the _ex variants on pools and parallel-fors */
void test_guard(void);
void test_bconv(void);               /* test-bconv.c: binary convolution, max pool */
void test_conv(void);                /* test-conv.c: convolution against a seven-loop reference */
/* test-ukernel.c: every microkernel of every table, run once (not per ISA level),
 * in named cases; returns the number of kernels skipped (not supported on this CPU). */
unsigned long test_ukernel(uint64_t seed);
/* test-ukernel-q4.c: every slot of every 4-bit weight table, called from test_ukernel
 * (cases q4/<set>/<mr>x<nr>/...); returns the number of kernels skipped. */
unsigned long test_ukernel_q4(uint64_t seed);

#endif
