/*
 * Shared pieces of the fuzz targets (see fuzz.h), and the start-up every target
 * shares: the instruction-set check, or the list of levels this CPU can run.
 */
#include "fuzz.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sanitizer/asan_interface.h>

/* ---- the input ------------------------------------------------------------------ */

void fuzz_reader_init(struct fuzz_reader* r, const uint8_t* data, size_t size)
{
  r->data = data;
  r->left = size;
  /* FNV-1a over the whole input: bulk data changes with every input byte */
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * UINT64_C(0x100000001b3);
  r->state = h;
}

uint8_t fuzz_u8(struct fuzz_reader* r)
{
  if (r->left == 0) return 0;
  r->left--;
  return *r->data++;
}

uint16_t fuzz_u16(struct fuzz_reader* r)
{
  uint16_t lo = fuzz_u8(r);
  return (uint16_t) (lo | (uint16_t) fuzz_u8(r) << 8);
}

uint32_t fuzz_u32(struct fuzz_reader* r)
{
  uint32_t lo = fuzz_u16(r);
  return lo | (uint32_t) fuzz_u16(r) << 16;
}

uint64_t fuzz_u64(struct fuzz_reader* r)
{
  uint64_t lo = fuzz_u32(r);
  return lo | (uint64_t) fuzz_u32(r) << 32;
}

size_t fuzz_range(struct fuzz_reader* r, size_t lo, size_t hi)
{
  const uint64_t span = (uint64_t) (hi - lo);
  uint64_t v;
  if (span == 0) return lo;
  if (span < UINT8_MAX) {
    v = fuzz_u8(r);
  } else if (span < UINT16_MAX) {
    v = fuzz_u16(r);
  } else if (span < UINT32_MAX) {
    v = fuzz_u32(r);
  } else {
    v = fuzz_u64(r);
  }
  if (span == UINT64_MAX) return lo + (size_t) v;
  return lo + (size_t) (v % (span + 1));
}

int32_t fuzz_range_s32(struct fuzz_reader* r, int32_t lo, int32_t hi)
{
  const uint32_t span = (uint32_t) hi - (uint32_t) lo;
  const uint32_t v = (uint32_t) fuzz_range(r, 0, span);
  return (int32_t) ((int64_t) lo + (int64_t) v);
}

int32_t fuzz_s32_edgy(struct fuzz_reader* r)
{
  switch (fuzz_u8(r) % 12) {
    case 0: return INT32_MIN;
    case 1: return INT32_MIN + 1;
    case 2: return -1;
    case 3: return 0;
    case 4: return 1;
    case 5: return INT32_MAX;
    case 6: return INT32_MAX - 1;
    case 7: return (fuzz_u8(r) & 1) ? INT32_C(1) << 30 : -(INT32_C(1) << 30);
    case 8: return (int8_t) fuzz_u8(r);
    default: return (int32_t) fuzz_u32(r);
  }
}

float fuzz_f32_special(struct fuzz_reader* r)
{
  switch (fuzz_u8(r) % 24) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return INFINITY;
    case 3: return -INFINITY;
    case 4: return fuzz_float_of(UINT32_C(0x7fc00000)); /* quiet NaN */
    case 5: return fuzz_float_of(UINT32_C(0xffc00000)); /* quiet NaN, sign set */
    case 6: return fuzz_float_of(UINT32_C(0x7f800001)); /* signalling NaN */
    case 7: {
      /* any NaN: either sign, any nonzero payload */
      uint32_t payload = fuzz_u32(r);
      uint32_t bits = UINT32_C(0x7f800000) | (payload & UINT32_C(0x807fffff));
      if ((bits & UINT32_C(0x007fffff)) == 0) bits |= 1;
      return fuzz_float_of(bits);
    }
    case 8: return FLT_TRUE_MIN;
    case 9: return -FLT_TRUE_MIN;
    case 10: return fuzz_float_of(fuzz_u32(r) & UINT32_C(0x807fffff)); /* denormal or 0 */
    case 11: return FLT_MIN;
    case 12: return -FLT_MIN;
    case 13: return FLT_MAX;
    case 14: return -FLT_MAX;
    case 15: return 1.0f;
    case 16: return -1.0f;
    case 17: return 0.5f;
    case 18:
    case 19:
    case 20: return fuzz_float_of(fuzz_u32(r));
    default: {
      /* ordinary: a 16-bit integer scaled by a small power of two */
      int16_t v = (int16_t) fuzz_u16(r);
      return ldexpf((float) v, -(int) (fuzz_u8(r) % 24));
    }
  }
}

float fuzz_f32_special_any(struct fuzz_reader* r)
{
  if (r->left > 0) return fuzz_f32_special(r);
  uint8_t bytes[8];
  const uint64_t v = fuzz_random(r);
  memcpy(bytes, &v, sizeof(bytes));
  struct fuzz_reader g = {bytes, sizeof(bytes), 0};
  return fuzz_f32_special(&g);
}

float fuzz_f32_positive(struct fuzz_reader* r)
{
  switch (fuzz_u8(r) % 8) {
    case 0: return FLT_TRUE_MIN * (float) (1 + fuzz_u8(r)); /* small denormals */
    case 1: {
      uint32_t bits = fuzz_u32(r) & UINT32_C(0x007fffff); /* any denormal */
      return fuzz_float_of(bits != 0 ? bits : 1);
    }
    case 2: return FLT_MIN;
    case 3: return FLT_MAX;
    case 4: /* huge */
      return ldexpf(1.0f + (float) fuzz_u8(r) / 256.0f, 100 + (int) (fuzz_u8(r) % 28));
    case 5:
    case 6: /* the useful range: acc * scale spans an 8-bit output */
      return ldexpf((float) (1 + fuzz_u16(r)) / 65536.0f, -(int) (fuzz_u8(r) % 24));
    default: {
      /* any positive finite pattern */
      uint32_t bits = fuzz_u32(r) & UINT32_C(0x7fffffff);
      if ((bits >> 23) == 0xff) bits &= ~(UINT32_C(1) << 23);
      return fuzz_float_of(bits != 0 ? bits : 1);
    }
  }
}

size_t fuzz_extra(struct fuzz_reader* r, size_t big)
{
  const uint8_t s = fuzz_u8(r);
  if (s < 128) return 0;
  if (s < 224) return 1 + s % 16;
  return fuzz_range(r, 1, big);
}

uint64_t fuzz_random(struct fuzz_reader* r)
{
  /* splitmix64 */
  uint64_t z = (r->state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

void fuzz_fill_random(struct fuzz_reader* r, void* p, size_t bytes)
{
  uint8_t* out = p;
  while (bytes >= 8) {
    const uint64_t v = fuzz_random(r);
    memcpy(out, &v, 8);
    out += 8;
    bytes -= 8;
  }
  if (bytes > 0) {
    const uint64_t v = fuzz_random(r);
    memcpy(out, &v, bytes);
  }
}

void fuzz_fill_two(struct fuzz_reader* r, uint8_t* p, size_t count, uint8_t low, uint8_t high)
{
  uint64_t bits = 0;
  for (size_t i = 0; i < count; i++) {
    if (i % 64 == 0) bits = fuzz_random(r);
    p[i] = (bits >> (i % 64)) & 1 ? high : low;
  }
}

/* ---- buffers -------------------------------------------------------------------- */

void fuzz_out_init(struct fuzz_out* o, struct fuzz_reader* r, size_t size, size_t offset)
{
  o->size = size;
  o->front = FUZZ_GUARD + offset % 64;
  /* the back guard ends on an 8-byte granule so that all of it can be poisoned */
  o->total = o->front + size + FUZZ_GUARD;
  o->total += (8 - o->total % 8) % 8;
  void* base = NULL;
  if (posix_memalign(&base, 64, o->total) != 0) fuzz_fail("out of memory (%zu bytes)", o->total);
  o->base = base;
  o->data = o->base + o->front;
  fuzz_fill_random(r, o->base, o->total);
  o->saved = malloc(o->total);
  if (o->saved == NULL) fuzz_fail("out of memory (%zu bytes)", o->total);
  memcpy(o->saved, o->base, o->total);
  ASAN_POISON_MEMORY_REGION(o->base, o->front);
  ASAN_POISON_MEMORY_REGION(o->data + size, o->total - o->front - size);
}

static void check_bytes(const uint8_t* got, const uint8_t* want, size_t count, ptrdiff_t origin,
                        const char* what, const char* where)
{
  for (size_t i = 0; i < count; i++) {
    if (got[i] != want[i]) {
      fuzz_fail("%s: byte %td %s was written (0x%02x, canary 0x%02x)", what,
                origin + (ptrdiff_t) i, where, got[i], want[i]);
    }
  }
}

void fuzz_out_check_guards(struct fuzz_out* o, const char* what)
{
  ASAN_UNPOISON_MEMORY_REGION(o->base, o->total);
  check_bytes(o->base, o->saved, o->front, -(ptrdiff_t) o->front, what,
              "(relative to the buffer) in the guard before it");
  const size_t back = o->front + o->size;
  check_bytes(o->base + back, o->saved + back, o->total - back, (ptrdiff_t) o->size, what,
              "(relative to the buffer) in the guard after it");
  ASAN_POISON_MEMORY_REGION(o->base, o->front);
  ASAN_POISON_MEMORY_REGION(o->base + back, o->total - back);
}

void fuzz_out_check_range(const struct fuzz_out* o, size_t from, size_t to, const char* what)
{
  if (to > o->size) to = o->size;
  if (from >= to) return;
  check_bytes(o->data + from, o->saved + o->front + from, to - from, (ptrdiff_t) from, what,
              "of the buffer, where nothing may be written,");
}

void fuzz_out_check_untouched(struct fuzz_out* o, const char* what)
{
  fuzz_out_check_guards(o, what);
  fuzz_out_check_range(o, 0, o->size, what);
}

void fuzz_out_check_gaps(const struct fuzz_out* o, size_t rows, size_t row_bytes,
                         size_t stride, const char* what)
{
  for (size_t i = 0; i + 1 < rows; i++) {
    fuzz_out_check_range(o, i * stride + row_bytes, (i + 1) * stride, what);
  }
}

void fuzz_out_free(struct fuzz_out* o)
{
  ASAN_UNPOISON_MEMORY_REGION(o->base, o->total);
  free(o->base);
  free(o->saved);
  o->base = o->data = o->saved = NULL;
}

void* fuzz_exact(struct fuzz_reader* r, size_t size, size_t offset, void** block)
{
  void* p = NULL;
  if (posix_memalign(&p, 64, size + offset) != 0) fuzz_fail("out of memory (%zu bytes)", size);
  fuzz_fill_random(r, p, size + offset);
  *block = p;
  return (uint8_t*) p + offset;
}

void* fuzz_aligned(size_t size)
{
  void* p = NULL;
  if (posix_memalign(&p, GEMMI8_PACK_ALIGNMENT, size) != 0) {
    fuzz_fail("out of memory (%zu bytes)", size);
  }
  return p;
}

/* ---- threads -------------------------------------------------------------------- */

static void shuffled_for(void* context, gemmi8_task_fn task, void* task_context, size_t count)
{
  struct fuzz_parallel* p = context;
  if (p->depth != 0) fuzz_fail("parallel_for called from inside one of its tasks");
  p->depth++;
  p->calls++;
  size_t* order = malloc((count > 0 ? count : 1) * sizeof(size_t));
  if (order == NULL) fuzz_fail("out of memory (%zu tasks)", count);
  for (size_t i = 0; i < count; i++) order[i] = i;
  for (size_t i = count; i > 1; i--) {
    const size_t j = (size_t) (fuzz_random(p->r) % i);
    const size_t t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
  }
  for (size_t i = 0; i < count; i++) task(task_context, order[i]);
  p->tasks += count;
  free(order);
  p->depth--;
}

void fuzz_parallel_init(struct fuzz_parallel* p, struct fuzz_reader* r, size_t threads)
{
  memset(p, 0, sizeof(*p));
  p->r = r;
  p->parallel.parallel_for = shuffled_for;
  p->parallel.context = p;
  p->parallel.threads = threads;
}

const gemmi8_parallel* fuzz_parallel_pool(void)
{
  static gemmi8_threadpool* pool;
  static gemmi8_parallel parallel;
  if (pool == NULL) {
    gemmi8_status s = gemmi8_threadpool_create(2, NULL, &pool);
    if (s != gemmi8_status_success) fuzz_fail("threadpool_create(2): %s", gemmi8_status_string(s));
    s = gemmi8_threadpool_parallel(pool, &parallel);
    if (s != gemmi8_status_success) fuzz_fail("threadpool_parallel: %s", gemmi8_status_string(s));
  }
  return &parallel;
}

/* ---- sizes ---------------------------------------------------------------------- */

int fuzz_extent(size_t rows, size_t cols, size_t stride, size_t elem, size_t* bytes)
{
  if (rows == 0 || cols == 0 || stride < cols) return 0;
  size_t span;
  if (__builtin_mul_overflow(rows - 1, stride, &span)) return 0;
  if (__builtin_add_overflow(span, cols, &span)) return 0;
  if (__builtin_mul_overflow(span, elem, &span)) return 0;
  if (span > (size_t) PTRDIFF_MAX) return 0;
  *bytes = span;
  return 1;
}

size_t fuzz_words(size_t k) { return k / 64 + (k % 64 != 0); }

/* ---- sizes that make trouble ----------------------------------------------------- */

size_t fuzz_edgy_size(struct fuzz_reader* r, size_t near)
{
  const size_t d = fuzz_u8(r) % 4;
  switch (fuzz_u8(r) % 12) {
    case 0: return 0;
    case 1: return 1;
    case 2: return near + 1 + d;
    case 3: return near > d ? near - 1 - d : 0;
    case 4: return ((size_t) 1 << 31) - 2 + d;
    case 5: return ((size_t) 1 << 32) - 2 + d;
    case 6: return (size_t) PTRDIFF_MAX - 1 + d;
    case 7: return SIZE_MAX - d;
    case 8: return SIZE_MAX / 2 + d;
    case 9: return ((size_t) 1 << fuzz_range(r, 6, 63)) - 2 + d;
    default: return (size_t) fuzz_u64(r);
  }
}

size_t fuzz_boundary_stride(struct fuzz_reader* r, size_t rows, size_t cols, size_t elem)
{
  const size_t limit = (size_t) PTRDIFF_MAX / elem;
  if (rows < 2 || cols == 0 || cols > limit || (fuzz_u8(r) & 3) == 0) {
    return fuzz_edgy_size(r, cols);
  }
  const size_t fits = (limit - cols) / (rows - 1);
  return fits - 1 + fuzz_u8(r) % 4;
}

size_t fuzz_boundary_rows(struct fuzz_reader* r, size_t cols, size_t stride, size_t elem,
                          size_t near)
{
  const size_t limit = (size_t) PTRDIFF_MAX / elem;
  if (cols == 0 || stride < cols || cols > limit || (fuzz_u8(r) & 3) == 0) {
    return fuzz_edgy_size(r, near);
  }
  const size_t fits = (limit - cols) / stride + 1;
  return fits - 1 + fuzz_u8(r) % 4;
}

size_t fuzz_mutate_stride(struct fuzz_reader* r, size_t rows, size_t cols, size_t elem)
{
  switch (fuzz_u8(r) % 4) {
    case 0: return cols > 0 ? cols - 1 - fuzz_range(r, 0, cols - 1) : 0;
    case 1: return fuzz_edgy_size(r, cols);
    case 2: return fuzz_boundary_stride(r, rows, cols, elem);
    default: return cols + fuzz_range(r, 0, 8);
  }
}

size_t fuzz_mutate_size(struct fuzz_reader* r, size_t old)
{
  switch (fuzz_u8(r) % 4) {
    case 0: return 0;
    case 1: return old + 1 + fuzz_range(r, 0, 3);
    case 2: return old > 1 ? old - 1 - fuzz_range(r, 0, old - 2) : old + 1;
    default: return fuzz_edgy_size(r, old);
  }
}

/* ---- floats --------------------------------------------------------------------- */

uint32_t fuzz_bits_of(float f)
{
  uint32_t b;
  memcpy(&b, &f, sizeof(b));
  return b;
}

float fuzz_float_of(uint32_t b)
{
  float f;
  memcpy(&f, &b, sizeof(f));
  return f;
}

int fuzz_is_finite(float f)
{
  return (fuzz_bits_of(f) & 0x7f800000u) != 0x7f800000u;
}

float fuzz_make_finite(float f)
{
  uint32_t b = fuzz_bits_of(f);
  if ((b & 0x7f800000u) == 0x7f800000u) b &= ~(UINT32_C(1) << 23);
  return fuzz_float_of(b);
}

float fuzz_nonfinite(struct fuzz_reader* r)
{
  const uint8_t s = fuzz_u8(r);
  if (s % 4 == 0) return INFINITY;
  if (s % 4 == 1) return -INFINITY;
  uint32_t bits = UINT32_C(0x7f800000) | (fuzz_u32(r) & UINT32_C(0x807fffff));
  if ((bits & UINT32_C(0x007fffff)) == 0) bits |= UINT32_C(0x00400000);
  return fuzz_float_of(bits);
}

float fuzz_useful(struct fuzz_reader* r, int exp_lo, int exp_hi)
{
  const uint64_t g = fuzz_random(r);
  const int e = exp_lo + (int) ((g >> 16) % (uint64_t) (exp_hi - exp_lo + 1));
  const float v = ldexpf((float) (1 + (g & 0xffff)) / 65536.0f, e);
  return (g >> 40) & 1 ? -v : v;
}

void fuzz_fill_scales(struct fuzz_reader* r, float* v, size_t count, int exp_lo, int exp_hi,
                      int signs)
{
  const uint8_t kind = fuzz_u8(r) % 6;
  const float constant = fuzz_make_finite(fuzz_f32_special(r));
  for (size_t i = 0; i < count; i++) {
    switch (kind) {
      case 0: v[i] = fabsf(fuzz_useful(r, exp_lo, exp_hi)); break;
      case 1:
        v[i] = signs ? fuzz_useful(r, exp_lo, exp_hi) : fabsf(fuzz_useful(r, exp_lo, exp_hi));
        break;
      case 2: v[i] = fuzz_useful(r, exp_lo, exp_hi); break;
      case 3: v[i] = fuzz_make_finite(fuzz_f32_special_any(r)); break;
      case 4: v[i] = constant; break;
      default: {
        const uint64_t g = fuzz_random(r);
        if (g & 3) {
          const float u = fuzz_useful(r, exp_lo, exp_hi);
          v[i] = signs ? u : fabsf(u);
        } else {
          v[i] = ldexpf(1.0f + (float) ((g >> 8) & 255) / 256.0f, 100 + (int) ((g >> 16) % 28));
        }
        if (signs && (g & 4)) v[i] = -v[i];
        break;
      }
    }
  }
}

int fuzz_range_overflows(const float* x, size_t k)
{
  float lo = 0.0f, hi = 0.0f;
  for (size_t j = 0; j < k; j++) {
    lo = x[j] < lo ? x[j] : lo;
    hi = x[j] > hi ? x[j] : hi;
  }
  return !fuzz_is_finite(hi - lo);
}

void fuzz_decode_clamp(struct fuzz_reader* r, float* lo, float* hi)
{
  float a = fuzz_useful(r, -6, 6), b = fuzz_useful(r, -6, 6);
  switch (fuzz_u8(r) % 9) {
    case 0:
    case 1: *lo = -INFINITY, *hi = INFINITY; return;
    case 2: break;
    case 3: *lo = *hi = a; return;
    case 4: *lo = -INFINITY, *hi = a; return;
    case 5: *lo = a, *hi = INFINITY; return;
    case 6: { /* +-0 either way round: -0.0f <= 0.0f and 0.0f <= -0.0f */
      const uint8_t s = fuzz_u8(r);
      *lo = (s & 1) ? -0.0f : 0.0f;
      *hi = (s & 2) ? -0.0f : 0.0f;
      return;
    }
    case 7:
      a = fuzz_make_finite(fuzz_f32_special(r));
      b = fuzz_make_finite(fuzz_f32_special(r));
      break;
    default: b = fabsf(a), a = -b; break;
  }
  *lo = a < b ? a : b;
  *hi = a < b ? b : a;
}

void fuzz_spoil_clamp(struct fuzz_reader* r, float* lo, float* hi)
{
  const float nan = fuzz_float_of(UINT32_C(0x7fc00000) | (fuzz_u32(r) & UINT32_C(0x803fffff)));
  switch (fuzz_u8(r) % 4) {
    case 0: *lo = nan; return;
    case 1: *hi = nan; return;
    case 2: *lo = *hi = nan; return;
    default:
      if (*lo < *hi) {
        const float t = *lo;
        *lo = *hi;
        *hi = t;
      } else {
        *lo = 1.0f, *hi = -1.0f;
      }
      return;
  }
}

int fuzz_clamp_ok(float lo, float hi)
{
  return lo <= hi;
}

/* ---- mutations ----------------------------------------------------------------- */

int fuzz_mutation_count(struct fuzz_reader* r)
{
  const uint8_t mut = fuzz_u8(r);
  return mut % 4 == 0 ? 0 : (mut % 4 == 3 ? 2 : 1);
}

unsigned fuzz_mutation(struct fuzz_reader* r, unsigned kinds, char* what, size_t what_size)
{
  const unsigned mu = fuzz_u8(r) % kinds;
  const size_t used = strlen(what);
  snprintf(what + used, what_size - used, "%s%u", used ? "+" : "", mu);
  return mu;
}

void fuzz_spoil_rows_f32(struct fuzz_reader* r, float* x, size_t m, size_t k, size_t stride,
                         unsigned how)
{
  switch (how) {
    case 0: {
      const size_t row = fuzz_range(r, 0, m - 1);
      const size_t at = row * stride + fuzz_range(r, 0, k - 1);
      x[at] = fuzz_nonfinite(r);
      break;
    }
    case 1: /* in a gap between rows: never read */
      if (m > 1 && stride > k) {
        const size_t row = fuzz_range(r, 0, m - 2);
        const size_t at = row * stride + fuzz_range(r, k, stride - 1);
        x[at] = fuzz_nonfinite(r);
      }
      break;
    default: /* a row whose range overflows (or just does not) */
      if (k >= 2) {
        const size_t row = fuzz_range(r, 0, m - 1) * stride;
        const size_t j1 = fuzz_range(r, 0, k - 1);
        const size_t j2 = (j1 + 1 + fuzz_range(r, 0, k - 2)) % k;
        const uint8_t h1 = fuzz_u8(r), h2 = fuzz_u8(r), ex = fuzz_u8(r);
        x[row + j1] = ldexpf(1.0f + (float) (h1 >> 1) / 128.0f, 126 + (ex & 1));
        x[row + j2] = -ldexpf(1.0f + (float) (h2 >> 1) / 128.0f, 126 + ((ex >> 1) & 1));
      } else {
        const size_t row = fuzz_range(r, 0, m - 1);
        x[row * stride] = (fuzz_u8(r) & 1) ? FLT_MAX : -FLT_MAX;
      }
      break;
  }
}

/* ---- packed headers ------------------------------------------------------------- */

int fuzz_header_offset_of(const uint8_t* h, size_t v)
{
  for (int off = 0; off + 8 <= FUZZ_HEADER; off += 8) {
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--) x = (x << 8) | h[off + i];
    if (x == (uint64_t) v) return off;
  }
  return -1;
}

void fuzz_damage_header(struct fuzz_reader* r, uint8_t* p, char* what, size_t what_size)
{
  const int words = (fuzz_u8(r) & 3) == 0 ? (int) fuzz_range(r, 2, 4) : 1;
  size_t used = strlen(what);
  unsigned done = 0;
  for (int i = 0; i < words; i++) {
    unsigned word = (unsigned) fuzz_range(r, 0, 15);
    while (done & (1u << word)) word = (word + 1) % 16;
    done |= 1u << word;
    const unsigned bytes = 1 + (unsigned) fuzz_range(r, 0, 14); /* nonempty subset of 4 */
    for (unsigned b = 0; b < 4; b++) {
      if (!(bytes & (1u << b))) continue;
      uint8_t x = fuzz_u8(r);
      if (x == 0) x = 0x80;
      p[word * 4 + b] ^= x;
      if (used < what_size) {
        used +=
            (size_t) snprintf(what + used, what_size - used, " byte %u ^= 0x%02x", word * 4 + b, x);
      }
    }
  }
}

/* ---- how a float GEMM runs ------------------------------------------------------ */

const char* const fuzz_run_name[4] = { "plain", "ex(NULL)", "ex(shuffled)", "ex(pool)" };

void fuzz_ex_init(struct fuzz_reader* r, struct fuzz_ex* e, enum fuzz_run run, size_t threads)
{
  memset(e, 0, sizeof(*e));
  e->run = run;
  fuzz_parallel_init(&e->shuffled, r, threads);
  e->par = run == fuzz_run_shuffled ? &e->shuffled.parallel
           : run == fuzz_run_pool   ? fuzz_parallel_pool()
                                    : NULL;
  snprintf(e->text, sizeof(e->text), "%s threads %zu", fuzz_run_name[run], threads);
}

void fuzz_ex_spoil(struct fuzz_reader* r, struct fuzz_ex* e)
{
  e->run = fuzz_run_shuffled;
  e->par = &e->shuffled.parallel;
  e->invalid = 1;
  if (fuzz_u8(r) & 1) {
    e->shuffled.parallel.parallel_for = NULL;
  } else {
    const size_t over[] = { GEMMI8_MAX_THREADS + 1, GEMMI8_MAX_THREADS + 2, SIZE_MAX,
                            (size_t) 1 << 32 };
    e->shuffled.parallel.threads = over[fuzz_u8(r) % 4];
  }
  snprintf(e->text, sizeof(e->text), "ex(for %s, threads %zu)",
           e->shuffled.parallel.parallel_for ? "set" : "NULL", e->shuffled.parallel.threads);
}

void fuzz_ex_check(const struct fuzz_ex* e)
{
  if (e->run != fuzz_run_shuffled || e->invalid) return;
  fuzz_describe_more(" (parallel_for calls %zu, tasks %zu)", e->shuffled.calls, e->shuffled.tasks);
  if (e->shuffled.parallel.threads <= 1 && e->shuffled.calls != 0) {
    fuzz_fail("parallel_for called %zu times for %zu threads", e->shuffled.calls,
              e->shuffled.parallel.threads);
  }
}

/* ---- inputs and float outputs --------------------------------------------------- */

void* fuzz_exact_copy(struct fuzz_reader* r, const void* src, size_t count, size_t elem,
                      size_t offset, void** block)
{
  *block = NULL;
  if (src == NULL || count == 0) return (void*) src;
  void* p = fuzz_exact(r, count * elem, offset, block);
  memcpy(p, src, count * elem);
  return p;
}

void fuzz_check_c(struct fuzz_out* c, const float* want, size_t m, size_t n, size_t c_stride)
{
  fuzz_out_check_guards(c, "C");
  fuzz_out_check_gaps(c, m, n * sizeof(float), c_stride * sizeof(float), "C between rows");
  if (want == NULL) return;
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      float got;
      memcpy(&got, c->data + (i * c_stride + j) * sizeof(float), sizeof(got));
      if (fuzz_bits_of(got) != fuzz_bits_of(want[i * n + j])) {
        fuzz_fail("C[%zu][%zu] = %a (0x%08x), expected %a (0x%08x)", i, j, (double) got,
                  (unsigned) fuzz_bits_of(got), (double) want[i * n + j],
                  (unsigned) fuzz_bits_of(want[i * n + j]));
      }
    }
  }
}

/* ---- reporting ------------------------------------------------------------------ */

static char target_name[64] = "fuzz";
static char case_text[2048];

void fuzz_describe(const char* format, ...)
{
  va_list args;
  va_start(args, format);
  vsnprintf(case_text, sizeof(case_text), format, args);
  va_end(args);
}

void fuzz_describe_more(const char* format, ...)
{
  const size_t used = strlen(case_text);
  va_list args;
  va_start(args, format);
  vsnprintf(case_text + used, sizeof(case_text) - used, format, args);
  va_end(args);
}

void fuzz_fail(const char* format, ...)
{
  fprintf(stderr, "\n==== gemmi8 %s failure on %s\ncase: %s\n", target_name, gemmi8_isa_name(),
          case_text);
  va_list args;
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fprintf(stderr, "\n");
  abort();
}

static void append_statuses(char* out, size_t size, unsigned set)
{
  out[0] = '\0';
  for (unsigned s = 0; s < 32; s++) {
    if (!(set & (1u << s))) continue;
    size_t used = strlen(out);
    snprintf(out + used, size - used, "%s%s", used ? " or " : "",
             gemmi8_status_string((gemmi8_status) s));
  }
}

/* GEMMI8_FUZZ_VERBOSE=1: every checked call, its case and status, on stderr. */
static int verbose = -1;

void fuzz_expect_status(gemmi8_status got, unsigned allowed, const char* call)
{
  if (verbose < 0) {
    const char* v = getenv("GEMMI8_FUZZ_VERBOSE");
    verbose = v != NULL && *v != '\0' && strcmp(v, "0") != 0;
  }
  if (verbose) fprintf(stderr, "%s: %s -> %s\n", call, case_text, gemmi8_status_string(got));
  if ((unsigned) got < 32 && (allowed & FUZZ_BIT(got))) return;
  char want[256];
  append_statuses(want, sizeof(want), allowed);
  fuzz_fail("%s returned %s (%d), expected %s", call, gemmi8_status_string(got), (int) got, want);
}

/* ---- start-up ------------------------------------------------------------------- */

int LLVMFuzzerInitialize(int* argc, char*** argv);

int LLVMFuzzerInitialize(int* argc, char*** argv)
{
  if (*argc > 0) {
    const char* slash = strrchr((*argv)[0], '/');
    snprintf(target_name, sizeof(target_name), "%s", slash ? slash + 1 : (*argv)[0]);
  }
  /* GEMMI8_FUZZ_LIST_ISAS=1: the levels this build and CPU can run, one a line */
  const char* list = getenv("GEMMI8_FUZZ_LIST_ISAS");
  if (list != NULL && *list != '\0') {
    for (const char* const* name = gemmi8_isa_compiled(); *name != NULL; name++) {
      if (gemmi8_isa_available(*name) == gemmi8_status_success) printf("%s\n", *name);
    }
    fflush(stdout);
    exit(0);
  }
  const char* wanted = getenv("GEMMI8_ISA");
  const char* running = gemmi8_isa_name();
  if (wanted != NULL && *wanted != '\0' && strcmp(wanted, running) != 0) {
    fprintf(stderr,
            "\n==== %s: GEMMI8_ISA=%s asked for, but the library runs %s (%s): not fuzzing "
            "the wrong kernels\n",
            target_name, wanted, running, gemmi8_status_string(gemmi8_isa_env_status()));
    abort();
  }
  fprintf(stderr, "%s: instruction set %s\n", target_name, running);
  return 0;
}
