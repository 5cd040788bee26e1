/*
 * Shared pieces of the libFuzzer targets in test/fuzz/:
 *   - a reader that turns the fuzz input into sizes, flags and values (it never
 *     fails: past the end of the input every read gives 0, and bulk data comes from
 *     a generator seeded by the input);
 *   - buffers for outputs: canary bytes from that generator, poisoned guard bytes
 *     around, and a saved copy, so that a check can tell any byte written where the
 *     contract says nothing is;
 *   - exact-size buffers for inputs: AddressSanitizer reports any read past them;
 *   - the size arithmetic of the header's "Sizes" rule, written out again;
 *   - the instruction-set check: every target aborts at start-up unless the level
 *     GEMMI8_ISA asks for is the one running.
 */
#ifndef GEMMI8_FUZZ_H
#define GEMMI8_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "gemmi8.h"

/* ---- the input ------------------------------------------------------------------ */

struct fuzz_reader {
  const uint8_t* data;
  size_t left;
  uint64_t state; /* generator for bulk data (splitmix64) */
};

void fuzz_reader_init(struct fuzz_reader* r, const uint8_t* data, size_t size);

uint8_t fuzz_u8(struct fuzz_reader* r);
uint16_t fuzz_u16(struct fuzz_reader* r);
uint32_t fuzz_u32(struct fuzz_reader* r);
uint64_t fuzz_u64(struct fuzz_reader* r);
/* A value in [lo, hi] (lo <= hi), from as many input bytes as the range needs. */
size_t fuzz_range(struct fuzz_reader* r, size_t lo, size_t hi);
int32_t fuzz_range_s32(struct fuzz_reader* r, int32_t lo, int32_t hi);
/* An int32 from a menu of edge values (INT32_MIN, -1, 0, 1, INT32_MAX, ...) or any. */
int32_t fuzz_s32_edgy(struct fuzz_reader* r);
/* A float from a menu of special values (+-0, +-inf, NaNs with payloads and signs,
 * denormals, FLT_MIN, FLT_MAX, 1, -1), any bit pattern, or an ordinary magnitude. */
float fuzz_f32_special(struct fuzz_reader* r);
/* The same from the input while it lasts, then from the generator (for long arrays
 * of values that should stay special past the end of a short input). */
float fuzz_f32_special_any(struct fuzz_reader* r);
/* A positive finite float: tiny (denormal), huge, ordinary, or any such pattern. */
float fuzz_f32_positive(struct fuzz_reader* r);
/* Stride extra over a row: 0 half of the time, else small, else up to `big`. */
size_t fuzz_extra(struct fuzz_reader* r, size_t big);

/* Bulk data: the generator, not the input. */
uint64_t fuzz_random(struct fuzz_reader* r);
void fuzz_fill_random(struct fuzz_reader* r, void* p, size_t bytes);
/* Each of count bytes low or high at random. */
void fuzz_fill_two(struct fuzz_reader* r, uint8_t* p, size_t count, uint8_t low, uint8_t high);

/* ---- buffers -------------------------------------------------------------------- */

/* An output buffer: size bytes at data, offset bytes after a 64-byte-aligned point,
 * GUARD bytes of canary (poisoned for AddressSanitizer) on each side, every byte
 * filled from the generator and remembered. */
#define FUZZ_GUARD 64
struct fuzz_out {
  uint8_t* base;  /* the allocation */
  uint8_t* data;  /* what the API gets */
  size_t size;    /* bytes at data */
  size_t front;   /* bytes before data */
  size_t total;   /* bytes at base */
  uint8_t* saved; /* copy of all total bytes as filled */
};

/* offset: 0..63, bytes past the 64-byte boundary where data starts. */
void fuzz_out_init(struct fuzz_out* o, struct fuzz_reader* r, size_t size, size_t offset);
/* Unpoisons the guards and aborts (with `what`) if a guard byte changed. */
void fuzz_out_check_guards(struct fuzz_out* o, const char* what);
/* Aborts if any byte of data[from, to) differs from its canary. */
void fuzz_out_check_range(const struct fuzz_out* o, size_t from, size_t to, const char* what);
/* Guards and every data byte: nothing written at all. */
void fuzz_out_check_untouched(struct fuzz_out* o, const char* what);
/* Row gaps: for rows x (row bytes of data at stride bytes), the bytes between rows
 * (from row_bytes to stride, all rows but the last) must keep their canary. */
void fuzz_out_check_gaps(const struct fuzz_out* o, size_t rows, size_t row_bytes,
                         size_t stride, const char* what);
void fuzz_out_free(struct fuzz_out* o);

/* size bytes at the end of a block of exactly size + offset bytes (size > 0):
 * AddressSanitizer sees any read past the end. Contents from the generator. */
void* fuzz_exact(struct fuzz_reader* r, size_t size, size_t offset, void** block);

/* A GEMMI8_PACK_ALIGNMENT-aligned block of exactly size bytes (size > 0). */
void* fuzz_aligned(size_t size);

/* ---- threads -------------------------------------------------------------------- */

/* A parallel-for for the _ex entry points that runs every task on the calling thread,
 * in a random order (the contract allows any order and any threads), while saying it
 * has `threads` threads. It aborts if called from inside one of its tasks. */
struct fuzz_parallel {
  gemmi8_parallel parallel;
  struct fuzz_reader* r;
  int depth;
  size_t calls; /* parallel_for calls */
  size_t tasks; /* tasks run */
};
void fuzz_parallel_init(struct fuzz_parallel* p, struct fuzz_reader* r, size_t threads);

/* gemmi8's own pool of 2 threads, created on first use and kept for the process. */
const gemmi8_parallel* fuzz_parallel_pool(void);

/* ---- sizes ---------------------------------------------------------------------- */

/* The header's extent rule: rows, cols > 0, stride >= cols and
 * ((rows - 1) * stride + cols) * elem exact and <= PTRDIFF_MAX. 1 when it holds
 * (*bytes set), 0 otherwise. */
int fuzz_extent(size_t rows, size_t cols, size_t stride, size_t elem, size_t* bytes);
/* ceil(k / 64) without wrapping. */
size_t fuzz_words(size_t k);

/* ---- sizes that make trouble (the error-input part of fuzz-errors.c, fuzz-qd8.c,
 * fuzz-q4.c) ------------------------------------------------------------------------ */

/* 0, 1, just around `near`, around 2^31, 2^32, PTRDIFF_MAX and SIZE_MAX, a power of
 * two, or anything. */
size_t fuzz_edgy_size(struct fuzz_reader* r, size_t near);
/* Around the largest stride for which rows x cols elements of elem bytes end within
 * PTRDIFF_MAX bytes (rows >= 2), or an edgy size. */
size_t fuzz_boundary_stride(struct fuzz_reader* r, size_t rows, size_t cols, size_t elem);
/* Around the largest row count for which the extent fits, or an edgy size. */
size_t fuzz_boundary_rows(struct fuzz_reader* r, size_t cols, size_t stride, size_t elem,
                          size_t near);
/* A stride: too small, huge, at the extent boundary, or a little larger (valid). */
size_t fuzz_mutate_stride(struct fuzz_reader* r, size_t rows, size_t cols, size_t elem);
/* A size mutated: 0, near the old one, or edgy. */
size_t fuzz_mutate_size(struct fuzz_reader* r, size_t old);

/* ---- floats (fuzz-qd8.c, fuzz-q4.c) ------------------------------------------------ */

uint32_t fuzz_bits_of(float f);
float fuzz_float_of(uint32_t b);
int fuzz_is_finite(float f);
/* Infinities and NaNs made finite (the exponent lowered by one, sign and mantissa kept). */
float fuzz_make_finite(float f);
/* +-infinity or a NaN of either sign and any payload. */
float fuzz_nonfinite(struct fuzz_reader* r);
/* A generated magnitude that keeps the outputs in a useful range, either sign. */
float fuzz_useful(struct fuzz_reader* r, int exp_lo, int exp_hi);
/* count finite floats: useful magnitudes, the special menu made finite (+-0,
 * denormals, FLT_MIN, FLT_MAX, any pattern), one constant, or a mix of useful values
 * and huge ones whose products overflow. signs 0: the useful ones (and the mix) all
 * positive but in one kind of the six; signs 1: positive in one kind, either sign in
 * two, the mix either sign. */
void fuzz_fill_scales(struct fuzz_reader* r, float* v, size_t count, int exp_lo, int exp_hi,
                      int signs);
/* 1 if max(row, 0) - min(row, 0) overflows float: the row's scale would be infinite
 * (gemmi8_quantize_rows_*: rmax - rmin). */
int fuzz_range_overflows(const float* x, size_t k);
/* The clamp: none, a window, a point, one side, +-0, finite specials. */
void fuzz_decode_clamp(struct fuzz_reader* r, float* lo, float* hi);
/* A clamp the header refuses: a NaN, or min > max. */
void fuzz_spoil_clamp(struct fuzz_reader* r, float* lo, float* hi);
/* What the header accepts: no NaN, lo <= hi. */
int fuzz_clamp_ok(float lo, float hi);

/* ---- mutations (fuzz-errors.c, fuzz-qd8.c, fuzz-q4.c) ----------------------------- */

/* How many mutations a call gets, from one input byte: 0 (a quarter), 1 or 2. */
int fuzz_mutation_count(struct fuzz_reader* r);
/* The next mutation, below `kinds`, appended to the list in `what` ("3+17"). */
unsigned fuzz_mutation(struct fuzz_reader* r, unsigned kinds, char* what, size_t what_size);
/* Spoils the float rows x (m rows of k at stride, all there): how 0, a value NaN or
 * infinite in a row (invalid); 1, one in a gap between rows (never read: valid); 2, a
 * row whose range overflows float, or, with k = 1, a value at +-FLT_MAX (which does
 * not). */
void fuzz_spoil_rows_f32(struct fuzz_reader* r, float* x, size_t m, size_t k, size_t stride,
                         unsigned how);

/* ---- packed headers (fuzz-errors.c, fuzz-qd8.c, fuzz-q4.c) ------------------------- */

#define FUZZ_HEADER 64 /* bytes of the packed header (include/gemmi8.h) */
/* Offset of the first 8-byte-aligned little-endian uint64 of the header equal to v,
 * or -1. (The header's layout is private: its shape fields are found by value.) */
int fuzz_header_offset_of(const uint8_t* h, size_t v);
/* Flips bytes of the header of p: in one 32-bit word (always detectable by the
 * checksum) or in several; appends what it did to the string `what`. */
void fuzz_damage_header(struct fuzz_reader* r, uint8_t* p, char* what, size_t what_size);

/* ---- how a float GEMM runs (fuzz-qd8.c, fuzz-q4.c) --------------------------------- */

/* The plain entry point, or the _ex one with no parallel-for, a shuffled one on the
 * calling thread, or gemmi8's pool of 2 threads. */
enum fuzz_run { fuzz_run_plain, fuzz_run_ex_null, fuzz_run_shuffled, fuzz_run_pool };
extern const char* const fuzz_run_name[4];

struct fuzz_ex {
  enum fuzz_run run;
  int invalid;
  struct fuzz_parallel shuffled;
  const gemmi8_parallel* par;
  char text[64];
};
void fuzz_ex_init(struct fuzz_reader* r, struct fuzz_ex* e, enum fuzz_run run, size_t threads);
/* A parallel argument that is not valid: parallel_for NULL or too many threads. */
void fuzz_ex_spoil(struct fuzz_reader* r, struct fuzz_ex* e);
/* After the call: a shuffled parallel-for claiming <= 1 thread was not called. */
void fuzz_ex_check(const struct fuzz_ex* e);

/* ---- inputs and float outputs (fuzz-qd8.c, fuzz-q4.c) ------------------------------ */

/* An exact-size copy of count elements of elem bytes at src (NULL stays NULL). */
void* fuzz_exact_copy(struct fuzz_reader* r, const void* src, size_t count, size_t elem,
                      size_t offset, void** block);
/* Checks a float C: elements (want: m x n, or NULL for no check) bit for bit, the gaps,
 * the guards. */
void fuzz_check_c(struct fuzz_out* c, const float* want, size_t m, size_t n, size_t c_stride);

/* ---- reporting ------------------------------------------------------------------ */

/* The case being run, printed with every failure (printf-style; replaces the last). */
void fuzz_describe(const char* format, ...) __attribute__((format(printf, 1, 2)));
/* Appends to the case (printf-style). */
void fuzz_describe_more(const char* format, ...) __attribute__((format(printf, 1, 2)));
/* Prints the target, the instruction set, the case and the message; aborts. */
void fuzz_fail(const char* format, ...) __attribute__((format(printf, 1, 2), noreturn));

#define FUZZ_STATUS(s) gemmi8_status_string(s)

/* Status sets: bit s for status s. */
#define FUZZ_BIT(s) (1u << (unsigned) (s))
/* Aborts unless got is in the set `allowed`. */
void fuzz_expect_status(gemmi8_status got, unsigned allowed, const char* call);

#endif
