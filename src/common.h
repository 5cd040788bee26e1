/*
 * Helpers shared by every private file: visibility, forced inlining, size arithmetic.
 */
#ifndef GEMMI8_COMMON_H
#define GEMMI8_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "gemmi8.h"

#define GEMMI8_INTERNAL __attribute__((visibility("hidden")))
#define GEMMI8_ALWAYS_INLINE inline __attribute__((always_inline))

/* ---- size arithmetic -------------------------------------------------------------
 * Every size an entry point derives from its arguments goes through these: each
 * returns 0 (and leaves *result unspecified) when the exact value does not fit. The
 * largest object is PTRDIFF_MAX bytes (pointer differences must be defined), so
 * extents are held to that, not to SIZE_MAX. */
static inline int gemmi8_mul(size_t a, size_t b, size_t* result)
{
  return !__builtin_mul_overflow(a, b, result);
}

static inline int gemmi8_add(size_t a, size_t b, size_t* result)
{
  return !__builtin_add_overflow(a, b, result);
}

/* Bytes spanned by rows rows of cols elements of elem bytes, row stride `stride`
 * elements: ((rows - 1) * stride + cols) * elem. 1 if rows, cols > 0, stride >= cols
 * and the extent is at most PTRDIFF_MAX. */
static inline int gemmi8_extent(size_t rows, size_t cols, size_t stride, size_t elem,
                                size_t* bytes)
{
  size_t span;
  return rows != 0 && cols != 0 && stride >= cols && gemmi8_mul(rows - 1, stride, &span) &&
         gemmi8_add(span, cols, &span) && gemmi8_mul(span, elem, bytes) &&
         *bytes <= (size_t) PTRDIFF_MAX;
}

/* ceil(n / q), q > 0, for every n (no n + q - 1 that could wrap). */
static inline size_t gemmi8_divide_round_up(size_t n, size_t q) { return n / q + (n % q != 0); }
/* n rounded up to a multiple of q; the caller knows it fits (n well below SIZE_MAX). */
static inline size_t gemmi8_round_up(size_t n, size_t q) { return gemmi8_divide_round_up(n, q) * q; }
static inline size_t gemmi8_min(size_t a, size_t b) { return a < b ? a : b; }

#endif
