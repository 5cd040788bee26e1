/*
 * Helpers shared by the test files: random numbers, allocation, guarded output
 * buffers and their comparison.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* ---- random numbers ----------------------------------------------------------- */

/* A 64-bit counter passed through a mixing function (the splitmix construction). */
static uint64_t rng_state = 1;

void t_seed(uint64_t seed)
{
  rng_state = seed;
}

uint64_t t_rand64(void)
{
  rng_state += UINT64_C(0x9E3779B97F4A7C15);
  uint64_t z = rng_state;
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

uint32_t t_below(uint32_t n)
{
  /* The bias of a plain modulo of 64 random bits is far below what a test sees. */
  return (uint32_t) (t_rand64() % n);
}

int64_t t_range(int64_t lo, int64_t hi)
{
  uint64_t span = (uint64_t) hi - (uint64_t) lo + 1;
  uint64_t r = span == 0 ? t_rand64() : t_rand64() % span;
  return (int64_t) ((uint64_t) lo + r);
}

double t_unit(void)
{
  return (double) (t_rand64() >> 11) * 0x1.0p-53;
}

void t_fill_random(void* p, size_t bytes)
{
  unsigned char* q = p;
  while (bytes >= 8) {
    uint64_t r = t_rand64();
    memcpy(q, &r, 8);
    q += 8;
    bytes -= 8;
  }
  if (bytes != 0) {
    uint64_t r = t_rand64();
    memcpy(q, &r, bytes);
  }
}

/* ---- memory ------------------------------------------------------------------- */

void* t_alloc(size_t size)
{
  void* p = malloc(size == 0 ? 1 : size);
  if (p == NULL) {
    fprintf(stderr, "test: out of memory allocating %zu bytes\n", size);
    exit(2);
  }
  return p;
}

void* t_alloc_aligned(size_t size)
{
  size_t rounded =
      (size + GEMMI8_PACK_ALIGNMENT - 1) / GEMMI8_PACK_ALIGNMENT * GEMMI8_PACK_ALIGNMENT;
  if (rounded == 0) rounded = GEMMI8_PACK_ALIGNMENT;
  void* p = aligned_alloc(GEMMI8_PACK_ALIGNMENT, rounded);
  if (p == NULL) {
    fprintf(stderr, "test: out of memory allocating %zu aligned bytes\n", size);
    exit(2);
  }
  return p;
}

void* t_dup(const void* p, size_t size)
{
  void* q = t_alloc(size);
  if (size != 0) memcpy(q, p, size);
  return q;
}

/* ---- guarded output buffers ---------------------------------------------------- */

size_t t_elem_size(t_elem elem)
{
  switch (elem) {
    case T_U8:
    case T_S8:
      return 1;
    case T_S32:
    case T_F32:
      return 4;
    case T_U64:
      return 8;
  }
  return 1;
}

void t_out_init(t_out* out, t_elem elem, size_t rows, size_t cols, size_t stride)
{
  size_t es = t_elem_size(elem);
  size_t body = ((rows - 1) * stride + cols) * es;
  out->elem = elem;
  out->rows = rows;
  out->cols = cols;
  out->stride = stride;
  out->total = T_GUARD + body + T_GUARD;
  out->mem = t_alloc(out->total);
  out->expect = t_alloc(out->total);
  /* The guard is a multiple of 8 and malloc aligns to 16: elements are aligned. */
  out->body = out->mem + T_GUARD;
  t_out_refill(out);
}

void t_out_free(t_out* out)
{
  free(out->mem);
  free(out->expect);
  out->mem = out->expect = NULL;
}

void t_out_refill(t_out* out)
{
  t_fill_random(out->mem, out->total);
  memcpy(out->expect, out->mem, out->total);
}

void* t_out_want(const t_out* out, size_t row, size_t col)
{
  return out->expect + T_GUARD + (row * out->stride + col) * t_elem_size(out->elem);
}

void t_format_elem(t_elem elem, const unsigned char* p, char* s, size_t size)
{
  switch (elem) {
    case T_U8:
      snprintf(s, size, "%u", (unsigned) p[0]);
      break;
    case T_S8: {
      int v = p[0] >= 128 ? (int) p[0] - 256 : (int) p[0];
      snprintf(s, size, "%d", v);
      break;
    }
    case T_S32: {
      int32_t v;
      memcpy(&v, p, 4);
      snprintf(s, size, "%" PRId32, v);
      break;
    }
    case T_F32: {
      float v;
      uint32_t bits;
      memcpy(&v, p, 4);
      memcpy(&bits, p, 4);
      snprintf(s, size, "%.9g (0x%08" PRIx32 ")", (double) v, bits);
      break;
    }
    case T_U64: {
      uint64_t v;
      memcpy(&v, p, 8);
      snprintf(s, size, "0x%016" PRIx64, v);
      break;
    }
  }
}

int t_out_same(const t_out* out, char* msg, size_t msg_size, size_t* row, size_t* col)
{
  *row = *col = SIZE_MAX;
  if (memcmp(out->mem, out->expect, out->total) == 0) return 1;
  size_t i = 0;
  while (out->mem[i] == out->expect[i]) i++;
  size_t es = t_elem_size(out->elem);
  size_t body_end = out->total - T_GUARD;
  if (i < T_GUARD) {
    snprintf(msg, msg_size, "guard byte %zu before C[0][0] was written", T_GUARD - i);
    return 0;
  }
  if (i >= body_end) {
    snprintf(msg, msg_size, "guard byte %zu after the last element was written", i - body_end);
    return 0;
  }
  size_t e = (i - T_GUARD) / es;
  size_t r = e / out->stride, c = e % out->stride;
  char got[64], want[64];
  const unsigned char* g = out->mem + T_GUARD + e * es;
  const unsigned char* w = out->expect + T_GUARD + e * es;
  t_format_elem(out->elem, g, got, sizeof(got));
  t_format_elem(out->elem, w, want, sizeof(want));
  if (c >= out->cols) {
    snprintf(msg, msg_size,
             "stride padding written: row %zu, element %zu of %zu (cols %zu): got %s, "
             "was %s",
             r, c, out->stride, out->cols, got, want);
    return 0;
  }
  *row = r;
  *col = c;
  snprintf(msg, msg_size, "first bad element C[%zu][%zu] (index %zu): got %s, expected %s", r, c, e,
           got, want);
  return 0;
}

int t_out_untouched(const t_out* out)
{
  return memcmp(out->mem, out->expect, out->total) == 0;
}
