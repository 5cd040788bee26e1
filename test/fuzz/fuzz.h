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
