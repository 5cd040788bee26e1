/*
 * Fenced buffers (test.h): memory whose last byte, or the last byte of each row, is
 * followed by a page that cannot be read or written (T_FENCE_END), or whose first
 * byte, or the first byte of each row, follows such a page (T_FENCE_START), so that
 * a kernel reading one byte too far, or one byte too early, faults at once (natively,
 * not only under a sanitizer). Every accessible byte around the data is random and
 * is compared afterwards, so that writes to an input are found as well; an output
 * is checked the same way, its expected elements written into the sealed image.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test.h"

static size_t page_size(void)
{
  static size_t page;
  if (page == 0) {
    long p = sysconf(_SC_PAGESIZE);
    page = p > 0 ? (size_t) p : 4096;
  }
  return page;
}

static size_t round_up(size_t n, size_t q)
{
  return (n + q - 1) / q * q;
}

/* First byte of accessible run s: after the leading inaccessible page at the start
 * side, then one run (and one inaccessible page) every stride bytes (a single run is
 * run 0). */
static unsigned char* segment(const t_fence* f, size_t s)
{
  return f->map + f->lead + s * f->stride;
}

/* The geometry of a fence: accessible runs, their size and the stride. */
static void plan(t_fence* f, t_fence_side side, size_t rows, size_t row_bytes, size_t stride)
{
  const size_t page = page_size();
  f->side = side;
  f->lead = side == T_FENCE_START ? page : 0;
  if (stride == 0) {
    /* each row ends (or starts) where an inaccessible page begins (or ends) */
    f->segments = rows;
    f->segment_bytes = round_up(row_bytes + T_GUARD, page);
    f->stride = f->segment_bytes + page;
    f->map_size = rows * f->stride;
  } else {
    /* the whole body ends (or starts) at an inaccessible page */
    const size_t body = (rows - 1) * stride + row_bytes;
    f->segments = 1;
    f->segment_bytes = round_up(body + T_GUARD, page);
    f->stride = stride;
    f->map_size = f->segment_bytes + page;
  }
}

/* Fills every run with random bytes; records and returns the first byte of row 0. */
static void* fill(t_fence* f, size_t rows, size_t row_bytes)
{
  for (size_t s = 0; s < f->segments; s++) {
    t_fill_random(segment(f, s), f->segment_bytes);
  }
  if (f->side == T_FENCE_START) {
    f->body = f->map + f->lead;
  } else if (f->segments > 1) {
    f->body = f->map + f->segment_bytes - row_bytes;
  } else {
    f->body = f->map + f->segment_bytes - ((rows - 1) * f->stride + row_bytes);
  }
  return f->body;
}

void* t_fence_init_at(t_fence* f, t_fence_side side, size_t rows, size_t row_bytes,
                      size_t stride)
{
  const size_t page = page_size();
  memset(f, 0, sizeof(*f));
  if (rows == 0) rows = 1;
  if (row_bytes == 0) row_bytes = 1;
  plan(f, side, rows, row_bytes, stride);
  void* map = mmap(NULL, f->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) {
    fprintf(stderr, "test: mmap of %zu bytes failed\n", f->map_size);
    exit(2);
  }
  f->map = map;
  for (size_t s = 0; s < f->segments; s++) {
    unsigned char* seg = segment(f, s);
    unsigned char* guard = side == T_FENCE_START ? seg - page : seg + f->segment_bytes;
    if (mprotect(guard, page, PROT_NONE) != 0) {
      fprintf(stderr, "test: mprotect failed\n");
      exit(2);
    }
  }
  return fill(f, rows, row_bytes);
}

void* t_fence_reinit(t_fence* f, t_fence_side side, size_t rows, size_t row_bytes,
                     size_t stride)
{
  if (rows == 0) rows = 1;
  if (row_bytes == 0) row_bytes = 1;
  if (f->map != NULL) {
    t_fence want;
    plan(&want, side, rows, row_bytes, stride);
    if (want.side == f->side && want.segments == f->segments &&
        want.segment_bytes == f->segment_bytes && want.map_size == f->map_size) {
      /* the same pages in the same places: only the stride and the body move */
      f->stride = want.stride;
      free(f->copy);
      f->copy = NULL;
      return fill(f, rows, row_bytes);
    }
    t_fence_free(f);
  }
  return t_fence_init_at(f, side, rows, row_bytes, stride);
}

void* t_fence_init(t_fence* f, size_t rows, size_t row_bytes, size_t stride)
{
  return t_fence_init_at(f, T_FENCE_END, rows, row_bytes, stride);
}

void t_fence_seal(t_fence* f)
{
  free(f->copy);
  f->copy = t_alloc(f->segments * f->segment_bytes);
  for (size_t s = 0; s < f->segments; s++) {
    memcpy(f->copy + s * f->segment_bytes, segment(f, s), f->segment_bytes);
  }
}

void* t_fence_image(const t_fence* f, const void* p)
{
  const unsigned char* q = p;
  const unsigned char* first = segment(f, 0);
  if (q < first) return NULL;
  size_t s = 0, offset = (size_t) (q - first);
  if (f->segments > 1) {
    s = offset / f->stride;
    offset %= f->stride;
  }
  if (s >= f->segments || offset >= f->segment_bytes) return NULL;
  return f->copy + s * f->segment_bytes + offset;
}

int t_fence_intact(const t_fence* f, long* offset)
{
  for (size_t s = 0; s < f->segments; s++) {
    const unsigned char* seg = segment(f, s);
    const unsigned char* copy = f->copy + s * f->segment_bytes;
    if (memcmp(seg, copy, f->segment_bytes) != 0) {
      size_t i = 0;
      while (seg[i] == copy[i]) i++;
      *offset = (long) ((seg + i) - f->body);
      return 0;
    }
  }
  return 1;
}

void t_fence_free(t_fence* f)
{
  if (f->map != NULL) munmap(f->map, f->map_size);
  free(f->copy);
  memset(f, 0, sizeof(*f));
}
