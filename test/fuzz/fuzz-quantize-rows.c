/*
 * Dynamic row quantization, gemmi8_quantize_rows_u8 / _s8, against the reference
 * (ref_quantize_row_*: the header's formulas).
 *
 * One input is one call: u8 or s8, rows, k (mostly small, sometimes thousands), input
 * and output strides with extra, an element offset for the input pointer, and the
 * values: floats from the special menu (+-0, NaNs, infinities, denormals, FLT_MAX...),
 * any bit pattern, multiples of a power of two (ties once scaled), one constant, or
 * subnormals only. The input is an exact-size block. A row with a NaN or an infinity
 * must give invalid_parameter with every output untouched; otherwise every byte,
 * scale and zero point must equal the reference, and the bytes between output rows
 * and all guards keep their canary.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ref.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  struct fuzz_reader r;
  fuzz_reader_init(&r, data, size);

  const uint8_t head = fuzz_u8(&r);
  const int s8 = head & 1;
  const size_t rows = fuzz_range(&r, 1, (head & 2) ? 40 : 4);
  const size_t k = (head & 4) ? fuzz_range(&r, 1, 5000) : fuzz_range(&r, 1, 300);
  const size_t x_stride = k + fuzz_extra(&r, 100);
  const size_t y_stride = k + fuzz_extra(&r, 100);
  const size_t x_offset = ((head & 8) ? fuzz_range(&r, 0, 15) : 0) * sizeof(float);
  const unsigned values = (head >> 4) % 5;
  const int exponent = (int) fuzz_range(&r, 0, 60) - 30;
  float unit = 1.0f;
  for (int e = exponent; e > 0; e--) unit *= 2.0f;
  for (int e = exponent; e < 0; e++) unit *= 0.5f;
  const float constant = fuzz_f32_special(&r);

  fuzz_describe(
      "quantize_rows_%s rows=%zu k=%zu x_stride=%zu y_stride=%zu x+%zu values=%u "
      "unit=2^%d",
      s8 ? "s8" : "u8", rows, k, x_stride, y_stride, x_offset, values, exponent);

  void* x_block = NULL;
  const size_t x_count = (rows - 1) * x_stride + k;
  float* x = fuzz_exact(&r, x_count * sizeof(float), x_offset, &x_block);
  int all_finite = 1;
  for (size_t i = 0; i < rows; i++) {
    for (size_t j = 0; j < k; j++) {
      float* v = &x[i * x_stride + j];
      switch (values) {
        case 0: *v = fuzz_f32_special_any(&r); break;
        case 1: break; /* any bit pattern, as generated */
        case 2: *v = (float) (int8_t) fuzz_random(&r) * unit; break;
        case 3: *v = (fuzz_random(&r) & 7) ? constant : 0.0f; break;
        default: /* subnormals, zeros of both signs */
          *v = fuzz_float_of((uint32_t) fuzz_random(&r) & 0x807fffffu);
          break;
      }
      all_finite &= fuzz_is_finite(*v);
    }
  }

  struct fuzz_out y, sc, zp;
  fuzz_out_init(&y, &r, (rows - 1) * y_stride + k, 0);
  fuzz_out_init(&sc, &r, rows * sizeof(float), 0);
  fuzz_out_init(&zp, &r, rows * sizeof(int32_t), 0);
  const gemmi8_status s =
      s8 ? gemmi8_quantize_rows_s8(rows, k, x, x_stride, y.data, y_stride, (float*) (void*) sc.data,
                                   (int32_t*) (void*) zp.data)
         : gemmi8_quantize_rows_u8(rows, k, x, x_stride, y.data, y_stride, (float*) (void*) sc.data,
                                   (int32_t*) (void*) zp.data);
  if (!all_finite) {
    fuzz_expect_status(s, FUZZ_BIT(gemmi8_status_invalid_parameter), "quantize_rows (NaN/inf)");
    fuzz_out_check_untouched(&y, "y");
    fuzz_out_check_untouched(&sc, "scale");
    fuzz_out_check_untouched(&zp, "zero_point");
  } else {
    fuzz_expect_status(s, FUZZ_BIT(gemmi8_status_success), "quantize_rows");
    fuzz_out_check_guards(&y, "y");
    fuzz_out_check_guards(&sc, "scale");
    fuzz_out_check_guards(&zp, "zero_point");
    fuzz_out_check_gaps(&y, rows, k, y_stride, "y between rows");
    uint8_t* want = malloc(k);
    if (want == NULL) fuzz_fail("out of memory");
    for (size_t i = 0; i < rows; i++) {
      float want_scale, got_scale;
      int32_t want_zp, got_zp;
      if (s8) {
        ref_quantize_row_s8(k, x + i * x_stride, (int8_t*) want, &want_scale, &want_zp);
      } else {
        ref_quantize_row_u8(k, x + i * x_stride, want, &want_scale, &want_zp);
      }
      memcpy(&got_scale, sc.data + i * sizeof(float), sizeof(float));
      memcpy(&got_zp, zp.data + i * sizeof(int32_t), sizeof(int32_t));
      if (memcmp(&got_scale, &want_scale, sizeof(float)) != 0 || got_zp != want_zp) {
        fuzz_fail("row %zu: scale %a zero point %d, expected %a %d", i, (double) got_scale,
                  (int) got_zp, (double) want_scale, (int) want_zp);
      }
      const uint8_t* got = y.data + i * y_stride;
      for (size_t j = 0; j < k; j++) {
        if (got[j] != want[j]) {
          fuzz_fail("row %zu element %zu (x = %a) = %u, expected %u", i, j,
                    (double) x[i * x_stride + j], got[j], want[j]);
        }
      }
    }
    free(want);
  }
  fuzz_out_free(&zp);
  fuzz_out_free(&sc);
  fuzz_out_free(&y);
  free(x_block);
  return 0;
}
