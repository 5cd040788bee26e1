/*
 * Rows quantized at run time, float output: the qd8 (int8 rows, the qs8 kernels) and
 * qdu8 (uint8 rows, the qu8s8 kernels) GEMMs over int8 weights with a float scale per
 * channel, and the linear layer that quantizes its float rows first.
 *
 * The weights are packed as the family packs them, with a_zero_point 0 and no
 * bias, so that the kernels' acc is sum_k A * B; the per-row zero point's term,
 * zp[m] * colsum(B)[n], comes off in the output stage (gemmi8_output_f32). After the
 * blocks the buffer holds, per channel, int32 colsum(B), float scale, float bias.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "parallel.h"
#include "qgemm.h"
#include "qrows.h"
#include "requant.h"

void gemmi8_q8_store_f32__generic(size_t mr, size_t nr, const int32_t* acc, size_t acc_stride,
                                  void* c, size_t c_stride, const struct gemmi8_qparams* params)
{
  for (size_t i = 0; i < mr; i++) {
    float* ci = (float*) ((uint8_t*) c + i * c_stride);
    for (size_t j = 0; j < nr; j++) ci[j] = gemmi8_output_f32(acc[i * acc_stride + j], params, i, j);
  }
}

/* The type's configuration; NULL when the type is not in the build (a constant there,
 * so that a build with neither keeps only the entry points' refusals). */
static const struct gemmi8_qgemm_config* qd_config(uint32_t type)
{
  if (type == gemmi8_type_qd8) return GEMMI8_TYPE_qs8 ? gemmi8_qs8_config() : NULL;
  return GEMMI8_TYPE_qu8s8 ? gemmi8_qu8s8_config() : NULL;
}

/* The packed size: the family's blocks, then the per-channel tail. */
static int qd_bytes(const struct gemmi8_qgemm_config* cfg, size_t n, size_t k, size_t* blocks,
                    size_t* size)
{
  size_t tail;
  return gemmi8_qpack_bytes(cfg, n, k, blocks) && gemmi8_mul(n, 12, &tail) &&
         gemmi8_add(*blocks, gemmi8_round_up(tail, 64), size) && *size >= tail;
}

static gemmi8_status check_shape(const struct gemmi8_qgemm_config* cfg, size_t n, size_t k,
                                 size_t* blocks, size_t* size)
{
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  if (n == 0 || k == 0) return gemmi8_status_invalid_parameter;
  if (k > GEMMI8_QD8_MAX_K) return gemmi8_status_unsupported_parameter;
  if (!qd_bytes(cfg, n, k, blocks, size)) return gemmi8_status_unsupported_parameter;
  return gemmi8_status_success;
}

static gemmi8_status qd_pack_size(uint32_t type, size_t n, size_t k, size_t* size)
{
  if (size == NULL) return gemmi8_status_invalid_parameter;
  size_t blocks, bytes;
  const gemmi8_status status = check_shape(qd_config(type), n, k, &blocks, &bytes);
  if (status == gemmi8_status_success) *size = bytes;
  return status;
}

gemmi8_status gemmi8_qd8_pack_size(size_t n, size_t k, size_t* size)
{
  return qd_pack_size(gemmi8_type_qd8, n, k, size);
}

gemmi8_status gemmi8_qdu8_pack_size(size_t n, size_t k, size_t* size)
{
  return qd_pack_size(gemmi8_type_qdu8, n, k, size);
}

/* Everything but the destination; *size the packed size. */
static gemmi8_status check_source(uint32_t type, size_t n, size_t k, const int8_t* b,
                                  size_t b_stride, uint32_t flags, const float* scale,
                                  const float* bias, size_t* blocks, size_t* size)
{
  const struct gemmi8_qgemm_config* cfg = qd_config(type);
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  if (b == NULL || scale == NULL || (flags & ~GEMMI8_B_KN)) return gemmi8_status_invalid_parameter;
  gemmi8_status status = check_shape(cfg, n, k, blocks, size);
  if (status != gemmi8_status_success) return status;
  const size_t rows = (flags & GEMMI8_B_KN) ? k : n, cols = (flags & GEMMI8_B_KN) ? n : k;
  size_t extent;
  if (!gemmi8_extent(rows, cols, b_stride, 1, &extent) || !gemmi8_floats_finite(n, scale) ||
      (bias != NULL && !gemmi8_floats_finite(n, bias))) {
    return gemmi8_status_invalid_parameter;
  }
  return gemmi8_status_success;
}

static gemmi8_status qd_pack(uint32_t type, size_t n, size_t k, const int8_t* b, size_t b_stride,
                             uint32_t flags, const float* scale, const float* bias, void* packed,
                             size_t packed_size)
{
  size_t blocks, size;
  gemmi8_status status = check_source(type, n, k, b, b_stride, flags, scale, bias, &blocks, &size);
  if (status != gemmi8_status_success) return status;
  if (packed == NULL || (uintptr_t) packed % GEMMI8_PACK_ALIGNMENT != 0 || packed_size < size) {
    return gemmi8_status_invalid_parameter;
  }
  const struct gemmi8_qgemm_config* cfg = qd_config(type);
  const int kn = (flags & GEMMI8_B_KN) != 0;
  if (type == gemmi8_type_qd8) {
    const struct gemmi8_qpack_source src = {(const uint8_t*) b, b_stride, kn, 1, 0};
    gemmi8_qpack_into(cfg, type, n, k, &src, 0, NULL, NULL, packed);
  } else {
    /* as gemmi8_qu8s8_pack: B + 128 with zero point 128 on the qu8 kernels */
    status = gemmi8_qpack_qu8s8_into(cfg, type, n, k, b, b_stride, kn, 0, NULL, packed);
    if (status != gemmi8_status_success) return status;
  }
  uint8_t* tail = (uint8_t*) packed + blocks;
  int32_t* col_sum = (int32_t*) tail;
  float* col_scale = (float*) (tail + 4 * n);
  float* col_bias = (float*) (tail + 8 * n);
  for (size_t j = 0; j < n; j++) {
    uint32_t sum = 0;
    for (size_t kk = 0; kk < k; kk++) sum += (uint32_t) (int32_t) (kn ? b[kk * b_stride + j] : b[j * b_stride + kk]);
    col_sum[j] = (int32_t) sum;
    col_scale[j] = scale[j];
    col_bias[j] = bias != NULL ? bias[j] : 0.0f;
  }
  /* the tail's padding too: the packed bytes depend on the weights alone */
  memset(tail + 12 * n, 0, size - blocks - 12 * n);
  return gemmi8_status_success;
}

gemmi8_status gemmi8_qd8_pack(size_t n, size_t k, const int8_t* b, size_t b_stride,
                              uint32_t flags, const float* scale, const float* bias,
                              void* packed, size_t packed_size)
{
  return qd_pack(gemmi8_type_qd8, n, k, b, b_stride, flags, scale, bias, packed, packed_size);
}

gemmi8_status gemmi8_qdu8_pack(size_t n, size_t k, const int8_t* b, size_t b_stride,
                               uint32_t flags, const float* scale, const float* bias,
                               void* packed, size_t packed_size)
{
  return qd_pack(gemmi8_type_qdu8, n, k, b, b_stride, flags, scale, bias, packed, packed_size);
}

static gemmi8_status qd_pack_alloc(uint32_t type, size_t n, size_t k, const int8_t* b,
                                   size_t b_stride, uint32_t flags, const float* scale,
                                   const float* bias, void** packed)
{
  if (packed == NULL) return gemmi8_status_invalid_parameter;
  size_t blocks, size;
  gemmi8_status status = check_source(type, n, k, b, b_stride, flags, scale, bias, &blocks, &size);
  if (status != gemmi8_status_success) return status;
  void* buffer = NULL;
  if (posix_memalign(&buffer, GEMMI8_PACK_ALIGNMENT, size) != 0) return gemmi8_status_out_of_memory;
  status = qd_pack(type, n, k, b, b_stride, flags, scale, bias, buffer, size);
  if (status != gemmi8_status_success) {
    free(buffer);
    return status;
  }
  *packed = buffer;
  return gemmi8_status_success;
}

gemmi8_status gemmi8_qd8_pack_alloc(size_t n, size_t k, const int8_t* b, size_t b_stride,
                                    uint32_t flags, const float* scale, const float* bias,
                                    void** packed)
{
  return qd_pack_alloc(gemmi8_type_qd8, n, k, b, b_stride, flags, scale, bias, packed);
}

gemmi8_status gemmi8_qdu8_pack_alloc(size_t n, size_t k, const int8_t* b, size_t b_stride,
                                     uint32_t flags, const float* scale, const float* bias,
                                     void** packed)
{
  return qd_pack_alloc(gemmi8_type_qdu8, n, k, b, b_stride, flags, scale, bias, packed);
}

/* 1 if every row scale is finite and every zero point within [lo, hi]. */
static int rows_valid(size_t m, const float* scale, const int32_t* zp, int32_t lo, int32_t hi)
{
  int32_t bad = 0;
  for (size_t i = 0; i < m; i++) bad |= (zp[i] < lo) | (zp[i] > hi);
  return bad == 0 && gemmi8_floats_finite(m, scale);
}

/* Pointers, extents and the packed weights of a GEMM call: the family's (qgemm) or 4-bit
 * weights (*q4; never in a build without them, which then refuses them as foreign). */
static gemmi8_status qd_check(uint32_t type, size_t m, size_t n, size_t k, const void* a,
                              size_t a_stride, const void* packed_b, const void* c,
                              size_t c_stride, int* q4)
{
  const struct gemmi8_qgemm_config* cfg = qd_config(type);
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  *q4 = GEMMI8_KERNELS_q4 && packed_b != NULL &&
        (uintptr_t) packed_b % GEMMI8_PACK_ALIGNMENT == 0 &&
        ((const struct gemmi8_packed_header*) packed_b)->type == gemmi8_type_qd8q4;
  if (!*q4) {
    return gemmi8_qgemm_check(type, cfg, GEMMI8_QD8_MAX_K, m, n, k, a, a_stride, packed_b, c,
                              c_stride, sizeof(float));
  }
  size_t a_bytes, c_bytes;
  if (a == NULL || c == NULL || !gemmi8_extent(m, k, a_stride, 1, &a_bytes) ||
      !gemmi8_extent(m, n, c_stride, sizeof(float), &c_bytes)) {
    return gemmi8_status_invalid_parameter;
  }
  if (k > GEMMI8_QD8_MAX_K) return gemmi8_status_unsupported_parameter;
  return gemmi8_q4gemm_check(n, k, packed_b);
}

/* uint8 rows for the 4-bit kernels, which take int8 ones: each byte and zero point less
 * 128 (a ^ 0x80 read as int8), which leaves every a - zp as it was. rows (k bytes
 * apart) may be a itself (a_stride k). */
static void flip_rows(size_t m, size_t k, const uint8_t* a, size_t a_stride, const int32_t* zp,
                      uint8_t* rows, int32_t* zp_out)
{
  const uint64_t flip = UINT64_C(0x8080808080808080);
  for (size_t i = 0; i < m; i++) {
    const uint8_t* src = a + i * a_stride;
    uint8_t* dst = rows + i * k;
    size_t d = 0;
    for (; d + 8 <= k; d += 8) {
      uint64_t v;
      memcpy(&v, src + d, 8);
      v ^= flip;
      memcpy(dst + d, &v, 8);
    }
    for (; d < k; d++) dst[d] = (uint8_t) (src[d] ^ 0x80);
    zp_out[i] = zp[i] - 128;
  }
}

#define FLIPPED_ON_STACK 4096

/* qdu8 rows x 4-bit weights: the rows flipped to int8 into a copy (the stack's, or
 * allocated), then the 4-bit GEMM. */
static gemmi8_status q4_uint8_rows(size_t m, size_t n, size_t k, const uint8_t* a,
                                   size_t a_stride, const float* a_scale,
                                   const int32_t* a_zero_point, const void* packed_b,
                                   float out_min, float out_max, float* c, size_t c_stride,
                                   const gemmi8_parallel* parallel)
{
  size_t rows_bytes, zp_bytes, total;
  if (!gemmi8_mul(m, k, &rows_bytes) || rows_bytes > SIZE_MAX - 3 ||
      !gemmi8_mul(m, 4, &zp_bytes) ||
      !gemmi8_add(gemmi8_round_up(rows_bytes, 4), zp_bytes, &total)) {
    return gemmi8_status_out_of_memory;
  }
  _Alignas(64) uint8_t stack[FLIPPED_ON_STACK];
  uint8_t* buffer = total <= sizeof(stack) ? stack : malloc(total);
  if (buffer == NULL) return gemmi8_status_out_of_memory;
  int32_t* zp = (int32_t*) (buffer + gemmi8_round_up(rows_bytes, 4));
  flip_rows(m, k, a, a_stride, a_zero_point, buffer, zp);
  const gemmi8_status status =
      gemmi8_q4gemm_run(m, n, k, (const int8_t*) buffer, k, a_scale, zp, packed_b, out_min,
                        out_max, c, c_stride, parallel);
  if (buffer != stack) free(buffer);
  return status;
}

static gemmi8_status qd_gemm(uint32_t type, size_t m, size_t n, size_t k, const void* a,
                             size_t a_stride, const float* a_scale, const int32_t* a_zero_point,
                             const void* packed_b, float out_min, float out_max, float* c,
                             size_t c_stride, const gemmi8_parallel* parallel)
{
  if (!gemmi8_parallel_valid(parallel)) return gemmi8_status_invalid_parameter;
  int q4;
  gemmi8_status status = qd_check(type, m, n, k, a, a_stride, packed_b, c, c_stride, &q4);
  if (status != gemmi8_status_success) return status;
  const int32_t lo = type == gemmi8_type_qd8 ? -128 : 0, hi = type == gemmi8_type_qd8 ? 127 : 255;
  if (a_scale == NULL || a_zero_point == NULL || !rows_valid(m, a_scale, a_zero_point, lo, hi) ||
      !(out_min <= out_max)) {
    return gemmi8_status_invalid_parameter;
  }
  if (q4 && type == gemmi8_type_qdu8) {
    return q4_uint8_rows(m, n, k, a, a_stride, a_scale, a_zero_point, packed_b, out_min,
                         out_max, c, c_stride, parallel);
  }
  if (q4) {
    return gemmi8_q4gemm_run(m, n, k, a, a_stride, a_scale, a_zero_point, packed_b, out_min,
                             out_max, c, c_stride, parallel);
  }
  const struct gemmi8_qgemm_config* cfg = qd_config(type);
  size_t blocks;
  gemmi8_qpack_bytes(cfg, n, k, &blocks); /* the header was checked: it fits */
  const uint8_t* tail = (const uint8_t*) packed_b + blocks;
  const struct gemmi8_qgemm_problem p = {
      .cfg = cfg,
      .output = gemmi8_qoutput_s32,
      .groups = 1,
      .m = m,
      .n = n,
      .k = k,
      .a = a,
      .a_stride = a_stride,
      .packed = packed_b,
      .c = (uint8_t*) c,
      .c_stride = c_stride * sizeof(float),
      .c_size = sizeof(float),
      .row_scale = a_scale,
      .row_zero_point = a_zero_point,
      .col_sum = (const int32_t*) tail,
      .col_scale = (const float*) (tail + 4 * n),
      .col_bias = (const float*) (tail + 8 * n),
      .out_min = out_min,
      .out_max = out_max,
  };
  return gemmi8_qgemm_run(&p, parallel);
}

gemmi8_status gemmi8_qd8_gemm_f32_ex(size_t m, size_t n, size_t k, const int8_t* a,
                                     size_t a_stride, const float* a_scale,
                                     const int32_t* a_zero_point, const void* packed_b,
                                     float out_min, float out_max, float* c, size_t c_stride,
                                     const gemmi8_parallel* parallel)
{
  return qd_gemm(gemmi8_type_qd8, m, n, k, a, a_stride, a_scale, a_zero_point, packed_b, out_min,
                 out_max, c, c_stride, parallel);
}

gemmi8_status gemmi8_qd8_gemm_f32(size_t m, size_t n, size_t k, const int8_t* a,
                                  size_t a_stride, const float* a_scale,
                                  const int32_t* a_zero_point, const void* packed_b,
                                  float out_min, float out_max, float* c, size_t c_stride)
{
  return qd_gemm(gemmi8_type_qd8, m, n, k, a, a_stride, a_scale, a_zero_point, packed_b, out_min,
                 out_max, c, c_stride, NULL);
}

gemmi8_status gemmi8_qdu8_gemm_f32_ex(size_t m, size_t n, size_t k, const uint8_t* a,
                                      size_t a_stride, const float* a_scale,
                                      const int32_t* a_zero_point, const void* packed_b,
                                      float out_min, float out_max, float* c, size_t c_stride,
                                      const gemmi8_parallel* parallel)
{
  return qd_gemm(gemmi8_type_qdu8, m, n, k, a, a_stride, a_scale, a_zero_point, packed_b, out_min,
                 out_max, c, c_stride, parallel);
}

gemmi8_status gemmi8_qdu8_gemm_f32(size_t m, size_t n, size_t k, const uint8_t* a,
                                   size_t a_stride, const float* a_scale,
                                   const int32_t* a_zero_point, const void* packed_b,
                                   float out_min, float out_max, float* c, size_t c_stride)
{
  return qd_gemm(gemmi8_type_qdu8, m, n, k, a, a_stride, a_scale, a_zero_point, packed_b, out_min,
                 out_max, c, c_stride, NULL);
}

/* The linear layer's workspace: the rows (k bytes each, 64-byte aligned), then the
 * scales and zero points. */
static int linear_layout(size_t m, size_t k, size_t* rows_bytes, size_t* total)
{
  size_t rows, params;
  if (!gemmi8_mul(m, k, &rows) || rows > SIZE_MAX - 63 || !gemmi8_mul(m, 8, &params)) return 0;
  *rows_bytes = gemmi8_round_up(rows, 64);
  return gemmi8_add(*rows_bytes, params, total);
}

gemmi8_status gemmi8_qd8_linear_workspace_size(size_t m, size_t k, size_t* size)
{
  size_t rows_bytes, total;
  if (size == NULL || m == 0 || k == 0) return gemmi8_status_invalid_parameter;
  /* into a local: a sum that overflows is stored wrapped, and *size must stay */
  if (!linear_layout(m, k, &rows_bytes, &total)) return gemmi8_status_invalid_parameter;
  *size = total;
  return gemmi8_status_success;
}

static gemmi8_status qd_linear(uint32_t type, size_t m, size_t n, size_t k, const float* x,
                               size_t x_stride, const void* packed_b, float out_min,
                               float out_max, float* c, size_t c_stride, void* workspace,
                               size_t workspace_size, const gemmi8_parallel* parallel)
{
  size_t rows_bytes, total, x_bytes;
  if (x == NULL || m == 0 || k == 0 || !linear_layout(m, k, &rows_bytes, &total) ||
      !gemmi8_extent(m, k, x_stride, sizeof(float), &x_bytes)) {
    return gemmi8_status_invalid_parameter;
  }
  if (workspace != NULL &&
      ((uintptr_t) workspace % 64 != 0 || workspace_size < total)) {
    return gemmi8_status_invalid_parameter;
  }
  /* everything the GEMM checks, on a stand-in for the rows: nothing is written
   * before the whole call is known to be valid */
  if (!gemmi8_parallel_valid(parallel)) return gemmi8_status_invalid_parameter;
  int q4;
  gemmi8_status status = qd_check(type, m, n, k, x, k, packed_b, c, c_stride, &q4);
  if (status != gemmi8_status_success) return status;
  if (!(out_min <= out_max)) return gemmi8_status_invalid_parameter;
  /* every row finite, and its range too (else its scale would be infinite, which the
   * GEMM refuses): checked before the workspace is written */
  for (size_t i = 0; i < m; i++) {
    if (!gemmi8_qrow_valid(k, x + i * x_stride, 1)) return gemmi8_status_invalid_parameter;
  }
  uint8_t* heap = NULL;
  uint8_t* ws = workspace;
  if (ws == NULL) {
    if (posix_memalign((void**) &heap, 64, total) != 0) return gemmi8_status_out_of_memory;
    ws = heap;
  }
  float* scale = (float*) (ws + rows_bytes);
  int32_t* zp = (int32_t*) (ws + rows_bytes + 4 * m);
  /* the set's quantizer, as gemmi8_quantize_rows_s8 / _u8 run it (the rows are
   * checked) */
  const struct gemmi8_qgemm_config* cfg = qd_config(type);
  gemmi8_quantize_rows_fn quantize =
      cfg->quantize_rows != NULL ? cfg->quantize_rows
                                 : (type == gemmi8_type_qd8 ? gemmi8_qs8_quantize_rows__generic
                                                            : gemmi8_qu8_quantize_rows__generic);
  quantize(m, k, x, x_stride * sizeof(float), ws, k, scale, zp);
  if (q4 && type == gemmi8_type_qdu8) {
    /* 4-bit weights: the uint8 rows flipped to int8 in place */
    flip_rows(m, k, ws, k, zp, ws, zp);
    status = gemmi8_q4gemm_run(m, n, k, (const int8_t*) ws, k, scale, zp, packed_b, out_min,
                               out_max, c, c_stride, parallel);
  } else {
    status = qd_gemm(type, m, n, k, ws, k, scale, zp, packed_b, out_min, out_max, c, c_stride,
                     parallel);
  }
  free(heap);
  return status;
}

gemmi8_status gemmi8_qd8_linear_f32(size_t m, size_t n, size_t k, const float* x,
                                    size_t x_stride, const void* packed_b, float out_min,
                                    float out_max, float* c, size_t c_stride, void* workspace,
                                    size_t workspace_size, const gemmi8_parallel* parallel)
{
  return qd_linear(gemmi8_type_qd8, m, n, k, x, x_stride, packed_b, out_min, out_max, c,
                   c_stride, workspace, workspace_size, parallel);
}

gemmi8_status gemmi8_qdu8_linear_f32(size_t m, size_t n, size_t k, const float* x,
                                     size_t x_stride, const void* packed_b, float out_min,
                                     float out_max, float* c, size_t c_stride, void* workspace,
                                     size_t workspace_size, const gemmi8_parallel* parallel)
{
  return qd_linear(gemmi8_type_qdu8, m, n, k, x, x_stride, packed_b, out_min, out_max, c,
                   c_stride, workspace, workspace_size, parallel);
}
