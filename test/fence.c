/*
 * Fenced input buffers (test.h): memory whose last byte, or the last byte of each
 * row, is followed by a page that cannot be read or written, so that a kernel
 * reading one byte too far faults at once (natively, not only under a sanitizer).
 * Every accessible byte around the data is random and is compared afterwards, so
 * that writes to an input are found as well.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test.h"

static size_t page_size(void) {
  static size_t page;
  if (page == 0) {
    long p = sysconf(_SC_PAGESIZE);
    page = p > 0 ? (size_t) p : 4096;
  }
  return page;
}

static size_t round_up(size_t n, size_t q) {
  return (n + q - 1) / q * q;
}

void* t_fence_init(t_fence* f, size_t rows, size_t row_bytes, size_t stride) {
  const size_t page = page_size();
  memset(f, 0, sizeof(*f));
  if (rows == 0) rows = 1;
  if (row_bytes == 0) row_bytes = 1;
  if (stride == 0) {
    /* each row ends where an inaccessible page begins */
    f->segments = rows;
    f->segment_bytes = round_up(row_bytes + T_GUARD, page);
    f->stride = f->segment_bytes + page;
    f->map_size = rows * f->stride;
  } else {
    /* the whole body ends where an inaccessible page begins */
    const size_t body = (rows - 1) * stride + row_bytes;
    f->segments = 1;
    f->segment_bytes = round_up(body + T_GUARD, page);
    f->stride = stride;
    f->map_size = f->segment_bytes + page;
  }
  void* map = mmap(NULL, f->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) {
    fprintf(stderr, "test: mmap of %zu bytes failed\n", f->map_size);
    exit(2);
  }
  f->map = map;
  const size_t step = f->segments > 1 ? f->stride : f->map_size;
  for (size_t s = 0; s < f->segments; s++) {
    unsigned char* seg = f->map + s * step;
    t_fill_random(seg, f->segment_bytes);
    if (mprotect(seg + f->segment_bytes, page, PROT_NONE) != 0) {
      fprintf(stderr, "test: mprotect failed\n");
      exit(2);
    }
  }
  if (f->segments > 1) {
    f->body = f->map + f->segment_bytes - row_bytes;
  } else {
    f->body = f->map + f->segment_bytes - ((rows - 1) * stride + row_bytes);
  }
  return f->body;
}

void t_fence_seal(t_fence* f) {
  free(f->copy);
  f->copy = t_alloc(f->segments * f->segment_bytes);
  const size_t step = f->segments > 1 ? f->stride : f->map_size;
  for (size_t s = 0; s < f->segments; s++) {
    memcpy(f->copy + s * f->segment_bytes, f->map + s * step, f->segment_bytes);
  }
}

int t_fence_intact(const t_fence* f, long* offset) {
  const size_t step = f->segments > 1 ? f->stride : f->map_size;
  for (size_t s = 0; s < f->segments; s++) {
    const unsigned char* seg = f->map + s * step;
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

void t_fence_free(t_fence* f) {
  if (f->map != NULL) munmap(f->map, f->map_size);
  free(f->copy);
  memset(f, 0, sizeof(*f));
}
