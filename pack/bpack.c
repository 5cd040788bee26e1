/*
 * Binary packing: activations to sign bits, and binary weights to the kernels'
 * column-interleaved layout.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"

/* ---- bit packing of activations ------------------------------------------------ */

/* x: rows of k elements of `element` bytes at x_stride elements; out: rows of
 * GEMMI8_BIN_WORDS(k) words at out_stride words. */
static gemmi8_status check_rows(size_t rows, size_t k, const void* x, size_t x_stride,
                                size_t element, const uint64_t* out, size_t out_stride)
{
  if (x == NULL || out == NULL) return gemmi8_status_invalid_parameter;
  size_t x_bytes, out_bytes;
  if (!gemmi8_extent(rows, k, x_stride, element, &x_bytes) ||
      !gemmi8_extent(rows, GEMMI8_BIN_WORDS(k), out_stride, sizeof(uint64_t), &out_bytes)) {
    return gemmi8_status_invalid_parameter;
  }
  return gemmi8_status_success;
}

/* One row: bit j set when negative[j]. Written a word at a time. */
#define PACK_ROW(x, k, out, is_negative)                                   \
  do {                                                                     \
    for (size_t w0 = 0; w0 < (k); w0 += 64) {                              \
      const size_t bits = gemmi8_min(64, (k) - w0);                        \
      uint64_t word = 0;                                                   \
      for (size_t j = 0; j < bits; j++) {                                  \
        word |= (uint64_t) (is_negative((x)[w0 + j])) << j;                \
      }                                                                    \
      (out)[w0 / 64] = word;                                               \
    }                                                                      \
  } while (0)

#define NEGATIVE_F32(v) ((v) < 0.0f)
#define NEGATIVE_S8(v) ((v) < 0)
#define NEGATIVE_U8(v) ((v) < zero_point)

void gemmi8_binarize_f32__generic(size_t rows, size_t k, const void* x, size_t x_stride,
                                  uint8_t zero_point, uint64_t* out, size_t out_stride)
{
  (void) zero_point;
  for (size_t r = 0; r < rows; r++) {
    const float* row = (const float*) ((const uint8_t*) x + r * x_stride);
    PACK_ROW(row, k, out + r * out_stride, NEGATIVE_F32);
  }
}

void gemmi8_binarize_s8__generic(size_t rows, size_t k, const void* x, size_t x_stride,
                                 uint8_t zero_point, uint64_t* out, size_t out_stride)
{
  (void) zero_point;
  for (size_t r = 0; r < rows; r++) {
    const int8_t* row = (const int8_t*) x + r * x_stride;
    PACK_ROW(row, k, out + r * out_stride, NEGATIVE_S8);
  }
}

void gemmi8_binarize_u8__generic(size_t rows, size_t k, const void* x, size_t x_stride,
                                 uint8_t zero_point, uint64_t* out, size_t out_stride)
{
  for (size_t r = 0; r < rows; r++) {
    const uint8_t* row = (const uint8_t*) x + r * x_stride;
    PACK_ROW(row, k, out + r * out_stride, NEGATIVE_U8);
  }
}

/* The config's binarizer of the element type (offsetof: binarize_f32, _s8 or _u8), or
 * the portable one where the config has none. */
static gemmi8_status binarize(const struct gemmi8_bgemm_config* cfg, gemmi8_binarize_fn fallback,
                              size_t element, size_t rows, size_t k, const void* x,
                              size_t x_stride, uint8_t zero_point, uint64_t* out,
                              size_t out_stride)
{
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  gemmi8_status status = check_rows(rows, k, x, x_stride, element, out, out_stride);
  if (status != gemmi8_status_success) return status;
  gemmi8_binarize_fn fn = fallback == gemmi8_binarize_f32__generic ? cfg->binarize_f32
                          : fallback == gemmi8_binarize_s8__generic ? cfg->binarize_s8
                                                                    : cfg->binarize_u8;
  if (fn == NULL) fn = fallback;
  fn(rows, k, x, x_stride * element, zero_point, out, out_stride);
  return gemmi8_status_success;
}

gemmi8_status gemmi8_bin_pack_rows_f32(size_t rows, size_t k, const float* x, size_t x_stride,
                                       uint64_t* out, size_t out_stride)
{
  return binarize(gemmi8_bin_config(), gemmi8_binarize_f32__generic, sizeof(float), rows, k, x, x_stride,
                  0, out, out_stride);
}

gemmi8_status gemmi8_bin_pack_rows_s8(size_t rows, size_t k, const int8_t* x, size_t x_stride,
                                      uint64_t* out, size_t out_stride)
{
  return binarize(gemmi8_bin_config(), gemmi8_binarize_s8__generic, 1, rows, k, x, x_stride, 0, out,
                  out_stride);
}

gemmi8_status gemmi8_bin_pack_rows_u8(size_t rows, size_t k, const uint8_t* x, size_t x_stride,
                                      uint8_t zero_point, uint64_t* out, size_t out_stride)
{
  return binarize(gemmi8_bin_config(), gemmi8_binarize_u8__generic, 1, rows, k, x, x_stride, zero_point,
                  out, out_stride);
}

/* ---- binary weights ----------------------------------------------------------- */

static inline uint64_t weight_word(const uint64_t* b, size_t b_stride, int kn, size_t k,
                                   size_t n, size_t kw)
{
  if (!kn) {
    const uint64_t word = b[n * b_stride + kw];
    const size_t bits = gemmi8_min(64, k - kw * 64);
    return bits == 64 ? word : word & ((UINT64_C(1) << bits) - 1);
  }
  uint64_t word = 0;
  const size_t bits = gemmi8_min(64, k - kw * 64);
  for (size_t j = 0; j < bits; j++) {
    const uint64_t bit = (b[(kw * 64 + j) * b_stride + n / 64] >> (n % 64)) & 1;
    word |= bit << j;
  }
  return word;
}

/* Generic layout: for each group of kr depth words, nr columns of kr words (word kw
 * of column j at (kw / kr) * nr * kr + j * kr + kw % kr; kr = 1: for each depth word,
 * nr words, one per column). Padding bits, padding words (the word count rounded up
 * to kr) and padding columns are 0. */
void gemmi8_bpack_words__generic(size_t nr, size_t kr, size_t n, size_t k, const uint64_t* b,
                                 size_t b_stride, int kn, size_t block_bytes, uint8_t* blocks)
{
  const size_t words = GEMMI8_BIN_WORDS(k);
  for (size_t n0 = 0; n0 < n; n0 += nr) {
    uint8_t* block = blocks + (n0 / nr) * block_bytes;
    memset(block, 0, block_bytes);
    uint64_t* w = (uint64_t*) block;
    for (size_t j = 0; j < nr && n0 + j < n; j++) {
      for (size_t kw = 0; kw < words; kw++) {
        w[kw / kr * nr * kr + j * kr + kw % kr] = weight_word(b, b_stride, kn, k, n0 + j, kw);
      }
    }
  }
}

static gemmi8_status bin_size(const struct gemmi8_bgemm_config* cfg, size_t n, size_t k,
                              size_t* size)
{
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  if (n == 0 || k == 0) return gemmi8_status_invalid_parameter;
  if (k > GEMMI8_BIN_MAX_K) return gemmi8_status_unsupported_parameter;
  size_t bytes;
  if (!gemmi8_mul(gemmi8_divide_round_up(n, cfg->nr), gemmi8_bblock_bytes(cfg, k), &bytes) ||
      !gemmi8_add(bytes, GEMMI8_PACKED_HEADER_BYTES, size)) {
    return gemmi8_status_unsupported_parameter;
  }
  return gemmi8_status_success;
}

/* Everything but the packed buffer; *size receives the packed size. */
static gemmi8_status check_source(const struct gemmi8_bgemm_config* cfg, size_t n, size_t k,
                                  const uint64_t* b, size_t b_stride, uint32_t flags,
                                  size_t* size)
{
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  if (b == NULL || (flags & ~GEMMI8_B_KN)) return gemmi8_status_invalid_parameter;
  if (n == 0 || k == 0) return gemmi8_status_invalid_parameter;
  const int kn = (flags & GEMMI8_B_KN) != 0;
  size_t extent;
  if (!gemmi8_extent(kn ? k : n, GEMMI8_BIN_WORDS(kn ? n : k), b_stride, sizeof(uint64_t),
                     &extent)) {
    return gemmi8_status_invalid_parameter;
  }
  return bin_size(cfg, n, k, size);
}

gemmi8_status gemmi8_bin_pack_size(size_t n, size_t k, size_t* size)
{
  if (size == NULL) return gemmi8_status_invalid_parameter;
  return bin_size(gemmi8_bin_config(), n, k, size);
}

gemmi8_status gemmi8_bin_pack(size_t n, size_t k, const uint64_t* b, size_t b_stride,
                              uint32_t flags, void* packed, size_t packed_size)
{
  const struct gemmi8_bgemm_config* cfg = gemmi8_bin_config();
  if (packed == NULL) return gemmi8_status_invalid_parameter;
  size_t size;
  gemmi8_status status = check_source(cfg, n, k, b, b_stride, flags, &size);
  if (status != gemmi8_status_success) return status;
  if ((uintptr_t) packed % GEMMI8_PACK_ALIGNMENT != 0 || packed_size < size) {
    return gemmi8_status_invalid_parameter;
  }
  struct gemmi8_packed_header* h = packed;
  gemmi8_packed_init(h, gemmi8_type_bin, gemmi8_bgemm_layout(cfg), cfg->nr, n, k,
                     gemmi8_bblock_bytes(cfg, k));
  gemmi8_packed_seal(h);
  cfg->pack(cfg->nr, cfg->kr, n, k, b, b_stride, (flags & GEMMI8_B_KN) != 0, (size_t) h->block_bytes,
            (uint8_t*) packed + GEMMI8_PACKED_HEADER_BYTES);
  return gemmi8_status_success;
}

/* Validates everything before allocating (see gemmi8_qu8_pack_alloc). */
gemmi8_status gemmi8_bin_pack_alloc(size_t n, size_t k, const uint64_t* b, size_t b_stride,
                                    uint32_t flags, void** packed)
{
  if (packed == NULL) return gemmi8_status_invalid_parameter;
  size_t size;
  gemmi8_status status = check_source(gemmi8_bin_config(), n, k, b, b_stride, flags, &size);
  if (status != gemmi8_status_success) return status;
  void* buffer = NULL;
  if (posix_memalign(&buffer, GEMMI8_PACK_ALIGNMENT, size) != 0) {
    return gemmi8_status_out_of_memory;
  }
  status = gemmi8_bin_pack(n, k, b, b_stride, flags, buffer, size);
  if (status != gemmi8_status_success) {
    free(buffer);
    return status;
  }
  *packed = buffer;
  return gemmi8_status_success;
}
