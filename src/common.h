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

static inline size_t gemmi8_divide_round_up(size_t n, size_t q) { return (n + q - 1) / q; }
static inline size_t gemmi8_round_up(size_t n, size_t q) { return gemmi8_divide_round_up(n, q) * q; }
static inline size_t gemmi8_min(size_t a, size_t b) { return a < b ? a : b; }

#endif
