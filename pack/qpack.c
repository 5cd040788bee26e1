/*
 * qu8 / qs8 weight packing: validation, sizes and the generic layout.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"

/* The layout of microkernel.h: int32 bias'[NR], int32 coef[NR] (with GEMMI8_QLAYOUT_COEF),
 * then round_up(k, KR) x NR bytes as [k / KR][NR][KR]. Columns past n and depth past k
 * are zero (after the xor, when the weights are stored xor 0x80). */
void gemmi8_qpack_goi__generic(const struct gemmi8_qgemm_config* cfg, size_t n, size_t k,
                               const struct gemmi8_qpack_source* src, int32_t a_zero_point,
                               const int32_t* b_zp, const int32_t* bias, size_t block_bytes,
                               uint8_t* blocks)
{
  const size_t nr = cfg->nr, kr = cfg->kr;
  const size_t block_count = gemmi8_divide_round_up(n, nr);
  for (size_t blk = 0; blk < block_count; blk++) {
    const size_t n0 = gemmi8_qblock_start(cfg, n, blk);
    const size_t n1 = blk + 1 < block_count ? gemmi8_qblock_start(cfg, n, blk + 1) : n;
    uint8_t* block = blocks + blk * block_bytes;
    memset(block, 0, block_bytes);
    int32_t* packed_bias = (int32_t*) block;
    int32_t* coef = packed_bias + nr;
    uint8_t* w = (uint8_t*) ((cfg->flags & GEMMI8_QLAYOUT_COEF) ? coef + nr : coef);
    const uint8_t flip = (cfg->flags & GEMMI8_QLAYOUT_XOR) ? 0x80 : 0;
    if (flip) memset(w, flip, gemmi8_round_up(k, kr) * nr);
    for (size_t j = 0; n0 + j < n1; j++) {
      const size_t col = n0 + j;
      const int32_t zp = b_zp ? b_zp[col] : 0;
      uint32_t col_sum = 0;
      for (size_t kk = 0; kk < k; kk++) {
        const int32_t v = gemmi8_qpack_value(src, col, kk);
        col_sum += (uint32_t) v;
        w[(kk / kr) * nr * kr + j * kr + kk % kr] = (uint8_t) v ^ flip;
      }
      /* bias - a_zp * colsum + k * a_zp * b_zp, modulo 2^32 */
      uint32_t b = bias ? (uint32_t) bias[col] : 0;
      b -= (uint32_t) a_zero_point * col_sum;
      b += (uint32_t) k * (uint32_t) a_zero_point * (uint32_t) zp;
      packed_bias[j] = (int32_t) b;
      if ((cfg->flags & GEMMI8_QLAYOUT_COEF)) {
        /* B - w: 0 when stored as is; xor 0x80 is -128 on uint8, +128 on int8 */
        const int32_t delta = flip == 0 ? 0 : (src->is_signed ? -128 : 128);
        coef[j] = delta - zp;
      }
    }
    if ((cfg->flags & GEMMI8_QLAYOUT_PAIR_MARK)) {
      /* no column with 0x80 at depths d and d + kr / 2 of a group */
      const size_t kp = gemmi8_round_up(k, kr), half = kr / 2;
      int safe = 1;
      for (size_t g = 0; g < kp; g += kr) {
        const uint8_t* wg = w + g * nr;
        for (size_t j = 0; j < nr * kr; j += kr) {
          for (size_t d = 0; d < half; d++) safe &= !(wg[j + d] == 0x80 && wg[j + d + half] == 0x80);
        }
      }
      const uint32_t mark = safe ? GEMMI8_QBLOCK_PAIRS_SAFE : 0;
      memcpy(w + kp * nr, &mark, sizeof(mark));
    }
  }
}

/* Total packed size into *size: 0 when it would overflow size_t. */
int gemmi8_qpack_bytes(const struct gemmi8_qgemm_config* cfg, size_t n, size_t k, size_t* size)
{
  size_t bytes;
  return gemmi8_mul(gemmi8_divide_round_up(n, cfg->nr), gemmi8_qblock_bytes(cfg, k), &bytes) &&
         gemmi8_add(bytes, GEMMI8_PACKED_HEADER_BYTES, size);
}

/* The shape alone: n and k nonzero, k within the exact limit, the packed size
 * representable (exactly: nothing else limits n). */
static gemmi8_status check_shape(const struct gemmi8_qgemm_config* cfg, size_t n, size_t k,
                                 size_t max_k, size_t* size)
{
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  if (n == 0 || k == 0) return gemmi8_status_invalid_parameter;
  if (k > max_k) return gemmi8_status_unsupported_parameter;
  if (!gemmi8_qpack_bytes(cfg, n, k, size)) return gemmi8_status_unsupported_parameter;
  return gemmi8_status_success;
}

static gemmi8_status pack_size(const struct gemmi8_qgemm_config* cfg, size_t n, size_t k,
                               size_t max_k, size_t* size)
{
  if (size == NULL) return gemmi8_status_invalid_parameter;
  size_t bytes;
  gemmi8_status status = check_shape(cfg, n, k, max_k, &bytes);
  if (status != gemmi8_status_success) return status;
  *size = bytes;
  return gemmi8_status_success;
}

gemmi8_status gemmi8_qu8_pack_size(size_t n, size_t k, size_t* size)
{
  return pack_size(gemmi8_qu8_config(), n, k, GEMMI8_QU8_MAX_K, size);
}

gemmi8_status gemmi8_qs8_pack_size(size_t n, size_t k, size_t* size)
{
  return pack_size(gemmi8_qs8_config(), n, k, GEMMI8_QS8_MAX_K, size);
}

/* Everything about the source and the shape, before any buffer is touched or
 * allocated; *size receives the packed size. */
static gemmi8_status check_source(const struct gemmi8_qgemm_config* cfg, size_t n, size_t k,
                                  size_t max_k, const void* b, size_t b_stride, uint32_t flags,
                                  size_t* size)
{
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  if (b == NULL) return gemmi8_status_invalid_parameter;
  if (flags & ~GEMMI8_B_KN) return gemmi8_status_invalid_parameter;
  if (n == 0 || k == 0) return gemmi8_status_invalid_parameter;
  const size_t rows = (flags & GEMMI8_B_KN) ? k : n;
  const size_t cols = (flags & GEMMI8_B_KN) ? n : k;
  size_t extent;
  if (!gemmi8_extent(rows, cols, b_stride, 1, &extent)) return gemmi8_status_invalid_parameter;
  return check_shape(cfg, n, k, max_k, size);
}

/* Everything both types check; the packed buffer is written only after it. */
static gemmi8_status check_pack(const struct gemmi8_qgemm_config* cfg, size_t n, size_t k,
                                size_t max_k, const void* b, size_t b_stride, uint32_t flags,
                                const void* packed, size_t packed_size)
{
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  if (packed == NULL) return gemmi8_status_invalid_parameter;
  size_t bytes;
  gemmi8_status status = check_source(cfg, n, k, max_k, b, b_stride, flags, &bytes);
  if (status != gemmi8_status_success) return status;
  if ((uintptr_t) packed % GEMMI8_PACK_ALIGNMENT != 0) return gemmi8_status_invalid_parameter;
  if (packed_size < bytes) return gemmi8_status_invalid_parameter;
  return gemmi8_status_success;
}

void gemmi8_qpack_into(const struct gemmi8_qgemm_config* cfg, uint32_t type, size_t n, size_t k,
                       const struct gemmi8_qpack_source* src, int32_t a_zero_point,
                       const int32_t* b_zp, const int32_t* bias, void* packed)
{
  struct gemmi8_packed_header* h = packed;
  gemmi8_packed_init(h, type, gemmi8_qgemm_layout(cfg, type), cfg->nr, n, k,
                     gemmi8_qblock_bytes(cfg, k));
  h->a_zero_point = a_zero_point;
  /* coef = (B - w) - b_zp, as the packer writes it */
  const int32_t delta = (cfg->flags & GEMMI8_QLAYOUT_XOR) ? (src->is_signed ? -128 : 128) : 0;
  const int32_t coef0 = delta - (b_zp ? b_zp[0] : 0);
  int uniform = 1;
  for (size_t j = 1; j < n && (cfg->flags & GEMMI8_QLAYOUT_COEF); j++) {
    uniform &= delta - (b_zp ? b_zp[j] : 0) == coef0;
  }
  if ((cfg->flags & GEMMI8_QLAYOUT_COEF) && uniform) {
    h->flags |= coef0 == 0 ? GEMMI8_PACKED_NO_ROW_SUM : GEMMI8_PACKED_UNIFORM_COEF;
    h->coef = coef0;
  }
  if (!(cfg->flags & GEMMI8_QLAYOUT_COEF)) h->flags |= GEMMI8_PACKED_NO_ROW_SUM;
  gemmi8_packed_seal(h);
  cfg->pack(cfg, n, k, src, a_zero_point, b_zp, bias, (size_t) h->block_bytes,
            (uint8_t*) packed + GEMMI8_PACKED_HEADER_BYTES);
}

gemmi8_status gemmi8_qu8_pack(size_t n, size_t k, const uint8_t* b, size_t b_stride,
                              uint32_t flags, uint8_t a_zero_point,
                              const uint8_t* b_zero_point, int b_zp_per_channel,
                              const int32_t* bias, void* packed, size_t packed_size)
{
  const struct gemmi8_qgemm_config* cfg = gemmi8_qu8_config();
  gemmi8_status status =
      check_pack(cfg, n, k, GEMMI8_QU8_MAX_K, b, b_stride, flags, packed, packed_size);
  if (status != gemmi8_status_success) return status;
  if (b_zero_point == NULL || (b_zp_per_channel != 0 && b_zp_per_channel != 1)) {
    return gemmi8_status_invalid_parameter;
  }
  size_t zp_bytes;
  int32_t* zp = gemmi8_mul(n, sizeof(int32_t), &zp_bytes) ? malloc(zp_bytes) : NULL;
  if (zp == NULL) return gemmi8_status_out_of_memory;
  for (size_t j = 0; j < n; j++) zp[j] = b_zero_point[b_zp_per_channel ? j : 0];
  const struct gemmi8_qpack_source src = {b, b_stride, (flags & GEMMI8_B_KN) != 0, 0, 0};
  gemmi8_qpack_into(cfg, gemmi8_type_qu8, n, k, &src, a_zero_point, zp, bias, packed);
  free(zp);
  return gemmi8_status_success;
}

gemmi8_status gemmi8_qs8_pack(size_t n, size_t k, const int8_t* b, size_t b_stride,
                              uint32_t flags, int8_t a_zero_point, const int32_t* bias,
                              void* packed, size_t packed_size)
{
  const struct gemmi8_qgemm_config* cfg = gemmi8_qs8_config();
  gemmi8_status status =
      check_pack(cfg, n, k, GEMMI8_QS8_MAX_K, b, b_stride, flags, packed, packed_size);
  if (status != gemmi8_status_success) return status;
  const struct gemmi8_qpack_source src = {(const uint8_t*) b, b_stride,
                                          (flags & GEMMI8_B_KN) != 0, 1, 0};
  gemmi8_qpack_into(cfg, gemmi8_type_qs8, n, k, &src, a_zero_point, NULL, bias, packed);
  return gemmi8_status_success;
}

/* qu8s8: int8 B read as uint8 B + 128 with zero point 128 (exactly B) and packed for
 * the qu8 kernels. Where those store weights xor 0x80 (AVX-512) the packed weights
 * are B itself and the coefficient of the row sums is 0: no row sums at all. */
gemmi8_status gemmi8_qpack_qu8s8_into(const struct gemmi8_qgemm_config* cfg, uint32_t type,
                                      size_t n, size_t k, const int8_t* b, size_t b_stride,
                                      int kn, int32_t a_zero_point, const int32_t* bias,
                                      void* packed)
{
  size_t bytes;
  int32_t* zp = gemmi8_mul(n, sizeof(int32_t), &bytes) ? malloc(bytes) : NULL;
  if (zp == NULL) return gemmi8_status_out_of_memory;
  for (size_t j = 0; j < n; j++) zp[j] = 128;
  const struct gemmi8_qpack_source src = {(const uint8_t*) b, b_stride, kn, 0, 0x80};
  gemmi8_qpack_into(cfg, type, n, k, &src, a_zero_point, zp, bias, packed);
  free(zp);
  return gemmi8_status_success;
}

gemmi8_status gemmi8_qu8s8_pack_size(size_t n, size_t k, size_t* size)
{
  return pack_size(gemmi8_qu8s8_config(), n, k, GEMMI8_QU8S8_MAX_K, size);
}

gemmi8_status gemmi8_qu8s8_pack(size_t n, size_t k, const int8_t* b, size_t b_stride,
                                uint32_t flags, uint8_t a_zero_point, const int32_t* bias,
                                void* packed, size_t packed_size)
{
  const struct gemmi8_qgemm_config* cfg = gemmi8_qu8s8_config();
  gemmi8_status status =
      check_pack(cfg, n, k, GEMMI8_QU8S8_MAX_K, b, b_stride, flags, packed, packed_size);
  if (status != gemmi8_status_success) return status;
  return gemmi8_qpack_qu8s8_into(cfg, gemmi8_type_qu8s8, n, k, b, b_stride,
                                 (flags & GEMMI8_B_KN) != 0, a_zero_point, bias, packed);
}

/* Validates everything before allocating: a bad argument is invalid_parameter even
 * when the packed size could not be allocated. */
gemmi8_status gemmi8_qu8_pack_alloc(size_t n, size_t k, const uint8_t* b, size_t b_stride,
                                    uint32_t flags, uint8_t a_zero_point,
                                    const uint8_t* b_zero_point, int b_zp_per_channel,
                                    const int32_t* bias, void** packed)
{
  if (packed == NULL || b_zero_point == NULL || (b_zp_per_channel != 0 && b_zp_per_channel != 1)) {
    return gemmi8_status_invalid_parameter;
  }
  size_t size;
  gemmi8_status status = check_source(gemmi8_qu8_config(), n, k, GEMMI8_QU8_MAX_K, b,
                                      b_stride, flags, &size);
  if (status != gemmi8_status_success) return status;
  void* buffer = NULL;
  if (posix_memalign(&buffer, GEMMI8_PACK_ALIGNMENT, size) != 0) {
    return gemmi8_status_out_of_memory;
  }
  status = gemmi8_qu8_pack(n, k, b, b_stride, flags, a_zero_point, b_zero_point,
                           b_zp_per_channel, bias, buffer, size);
  if (status != gemmi8_status_success) {
    free(buffer);
    return status;
  }
  *packed = buffer;
  return gemmi8_status_success;
}

gemmi8_status gemmi8_qs8_pack_alloc(size_t n, size_t k, const int8_t* b, size_t b_stride,
                                    uint32_t flags, int8_t a_zero_point, const int32_t* bias,
                                    void** packed)
{
  if (packed == NULL) return gemmi8_status_invalid_parameter;
  size_t size;
  gemmi8_status status = check_source(gemmi8_qs8_config(), n, k, GEMMI8_QS8_MAX_K, b,
                                      b_stride, flags, &size);
  if (status != gemmi8_status_success) return status;
  void* buffer = NULL;
  if (posix_memalign(&buffer, GEMMI8_PACK_ALIGNMENT, size) != 0) {
    return gemmi8_status_out_of_memory;
  }
  status = gemmi8_qs8_pack(n, k, b, b_stride, flags, a_zero_point, bias, buffer, size);
  if (status != gemmi8_status_success) {
    free(buffer);
    return status;
  }
  *packed = buffer;
  return gemmi8_status_success;
}

gemmi8_status gemmi8_qu8s8_pack_alloc(size_t n, size_t k, const int8_t* b, size_t b_stride,
                                      uint32_t flags, uint8_t a_zero_point, const int32_t* bias,
                                      void** packed)
{
  if (packed == NULL) return gemmi8_status_invalid_parameter;
  size_t size;
  gemmi8_status status = check_source(gemmi8_qu8s8_config(), n, k, GEMMI8_QU8S8_MAX_K, b,
                                      b_stride, flags, &size);
  if (status != gemmi8_status_success) return status;
  void* buffer = NULL;
  if (posix_memalign(&buffer, GEMMI8_PACK_ALIGNMENT, size) != 0) {
    return gemmi8_status_out_of_memory;
  }
  status = gemmi8_qu8s8_pack(n, k, b, b_stride, flags, a_zero_point, bias, buffer, size);
  if (status != gemmi8_status_success) {
    free(buffer);
    return status;
  }
  *packed = buffer;
  return gemmi8_status_success;
}

void gemmi8_packed_free(void* packed)
{
  free(packed);
}
