/*
 * Dynamic quantization of float rows: gemmi8_quantize_rows_u8 (ONNX Runtime's
 * DynamicQuantizeLinear) and gemmi8_quantize_rows_s8 (XNNPACK's qd8), the formulas of
 * include/gemmi8.h and src/qrows.h. The generic kernels here are the reference the
 * vector ones (kernels/<type>.inc, role quantize_rows) equal byte for byte.
 */
#include <string.h>

#include "config.h"
#include "qrows.h"

void gemmi8_qu8_quantize_rows__generic(size_t rows, size_t k, const float* x, size_t x_stride,
                                       void* y, size_t y_stride, float* scale, int32_t* zero_point)
{
  for (size_t r = 0; r < rows; r++) {
    const float* row = (const float*) ((const uint8_t*) x + r * x_stride);
    uint8_t* out = (uint8_t*) y + r * y_stride;
    float lo, hi;
    gemmi8_qrow_minmax(k, row, &lo, &hi);
    const struct gemmi8_qrow_params p = gemmi8_qrow_params_u8(lo, hi);
    for (size_t i = 0; i < k; i++) out[i] = (uint8_t) gemmi8_qrow_u8(row[i], &p);
    scale[r] = p.scale;
    zero_point[r] = p.zp;
  }
}

void gemmi8_qs8_quantize_rows__generic(size_t rows, size_t k, const float* x, size_t x_stride,
                                       void* y, size_t y_stride, float* scale, int32_t* zero_point)
{
  for (size_t r = 0; r < rows; r++) {
    const float* row = (const float*) ((const uint8_t*) x + r * x_stride);
    int8_t* out = (int8_t*) y + r * y_stride;
    float lo, hi;
    gemmi8_qrow_minmax(k, row, &lo, &hi);
    const struct gemmi8_qrow_params p = gemmi8_qrow_params_s8(lo, hi);
    for (size_t i = 0; i < k; i++) out[i] = (int8_t) gemmi8_qrow_s8(row[i], &p);
    scale[r] = p.scale;
    zero_point[r] = p.zp;
  }
}

int gemmi8_floats_finite(size_t count, const float* x) { return gemmi8_qrow_valid(count, x, 0); }

/* 1 if every one of the rows x k floats is finite. */
static int rows_finite(size_t rows, size_t k, const float* x, size_t x_stride)
{
  for (size_t r = 0; r < rows; r++) {
    if (!gemmi8_floats_finite(k, x + r * x_stride)) return 0;
  }
  return 1;
}

static gemmi8_status quantize_rows(gemmi8_quantize_rows_fn fn, size_t rows, size_t k,
                                   const float* x, size_t x_stride, void* y, size_t y_stride,
                                   float* scale, int32_t* zero_point)
{
  size_t x_bytes, y_bytes, p_bytes;
  if (x == NULL || y == NULL || scale == NULL || zero_point == NULL ||
      !gemmi8_extent(rows, k, x_stride, sizeof(float), &x_bytes) ||
      !gemmi8_extent(rows, k, y_stride, 1, &y_bytes) ||
      !gemmi8_extent(1, rows, rows, sizeof(float), &p_bytes) ||
      !rows_finite(rows, k, x, x_stride)) {
    return gemmi8_status_invalid_parameter;
  }
  fn(rows, k, x, x_stride * sizeof(float), y, y_stride, scale, zero_point);
  return gemmi8_status_success;
}

gemmi8_status gemmi8_quantize_rows_u8(size_t rows, size_t k, const float* x, size_t x_stride,
                                      void* y, size_t y_stride, float* scale, int32_t* zero_point)
{
  /* the qu8 tables serve qu8s8 builds too (the same kernel list) */
  const struct gemmi8_qgemm_config* cfg = gemmi8_qu8_config();
  if (cfg == NULL) cfg = gemmi8_qu8s8_config();
  gemmi8_quantize_rows_fn fn = cfg != NULL && cfg->quantize_rows != NULL
                                   ? cfg->quantize_rows
                                   : gemmi8_qu8_quantize_rows__generic;
  return quantize_rows(fn, rows, k, x, x_stride, y, y_stride, scale, zero_point);
}

gemmi8_status gemmi8_quantize_rows_s8(size_t rows, size_t k, const float* x, size_t x_stride,
                                      void* y, size_t y_stride, float* scale, int32_t* zero_point)
{
  const struct gemmi8_qgemm_config* cfg = gemmi8_qs8_config();
  gemmi8_quantize_rows_fn fn = cfg != NULL && cfg->quantize_rows != NULL
                                   ? cfg->quantize_rows
                                   : gemmi8_qs8_quantize_rows__generic;
  return quantize_rows(fn, rows, k, x, x_stride, y, y_stride, scale, zero_point);
}
