/*
 * The bit-packing helpers gemmi8_bin_pack_rows_f32 / _s8 / _u8 against the reference.
 *
 * One input is one call: element type, rows, K (mostly small, sometimes thousands),
 * element and word strides with extra, an element offset for the input pointer, the
 * u8 zero point, and the values: floats from the special menu (-0, NaNs with the sign
 * bit set, denormals, infinities...) or ordinary ones, bytes as given. The input is an
 * exact-size block; the output words of each row must equal the reference (padding
 * bits 0), the words between output rows and the guards keep their canary.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ref.h"

enum element { el_f32, el_s8, el_u8 };
static const char* const element_name[] = {"f32", "s8", "u8"};

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  struct fuzz_reader r;
  fuzz_reader_init(&r, data, size);

  const uint8_t head = fuzz_u8(&r);
  const enum element el = (enum element) ((head & 3) % 3);
  const size_t rows = fuzz_range(&r, 1, (head & 4) ? 40 : 6);
  const size_t k = (head & 8) ? fuzz_range(&r, 1, 5000) : fuzz_range(&r, 1, 260);
  const size_t x_stride = k + fuzz_extra(&r, 200);
  const size_t words = fuzz_words(k);
  const size_t out_stride = words + fuzz_extra(&r, 20);
  const uint8_t zero_point = fuzz_u8(&r);
  const size_t elem = el == el_f32 ? sizeof(float) : 1;
  /* element offset of x from a 64-byte boundary */
  const size_t x_offset = ((head & 16) ? fuzz_range(&r, 0, 15) : 0) * elem;
  const unsigned values = (head >> 5) & 3; /* how the values are chosen */

  fuzz_describe("bitpack %s rows=%zu k=%zu x_stride=%zu out_stride=%zu zero_point=%u x+%zu "
                "values=%u",
                element_name[el], rows, k, x_stride, out_stride, zero_point, x_offset, values);

  void* x_block = NULL;
  const size_t x_count = (rows - 1) * x_stride + k;
  uint8_t* x = fuzz_exact(&r, x_count * elem, x_offset, &x_block);
  for (size_t i = 0; i < rows; i++) {
    for (size_t j = 0; j < k; j++) {
      const size_t at = i * x_stride + j;
      if (el == el_f32) {
        float v;
        if (values == 0) {
          v = fuzz_f32_special_any(&r);
        } else if (values == 1) {
          v = (fuzz_random(&r) & 1) ? -0.0f : 0.0f;
        } else {
          memcpy(&v, x + at * 4, 4); /* random bit patterns, kept */
        }
        memcpy(x + at * 4, &v, 4);
      } else if (values == 0) {
        x[at] = fuzz_u8(&r) ^ (uint8_t) fuzz_random(&r);
      } else if (values == 1) {
        /* around the sign or the zero point */
        const int32_t centre = el == el_s8 ? 0 : zero_point;
        x[at] = (uint8_t) (centre + (int32_t) (fuzz_random(&r) % 3) - 1);
      }
    }
  }

  struct fuzz_out out;
  const size_t out_words = (rows - 1) * out_stride + words;
  fuzz_out_init(&out, &r, out_words * 8, 0);
  uint64_t* want = calloc(out_words, 8);
  if (want == NULL) fuzz_fail("out of memory");
  gemmi8_status s;
  switch (el) {
    case el_f32:
      s = gemmi8_bin_pack_rows_f32(rows, k, (const float*) (void*) x, x_stride,
                                   (uint64_t*) (void*) out.data, out_stride);
      ref_bin_pack_f32(rows, k, (const float*) (void*) x, x_stride, want, out_stride);
      break;
    case el_s8:
      s = gemmi8_bin_pack_rows_s8(rows, k, (const int8_t*) x, x_stride,
                                  (uint64_t*) (void*) out.data, out_stride);
      ref_bin_pack_s8(rows, k, (const int8_t*) x, x_stride, want, out_stride);
      break;
    default:
      s = gemmi8_bin_pack_rows_u8(rows, k, x, x_stride, zero_point, (uint64_t*) (void*) out.data,
                                  out_stride);
      ref_bin_pack_u8(rows, k, x, x_stride, zero_point, want, out_stride);
      break;
  }
  fuzz_expect_status(s, FUZZ_BIT(gemmi8_status_success), "bin_pack_rows");
  fuzz_out_check_guards(&out, "out");
  fuzz_out_check_gaps(&out, rows, words * 8, out_stride * 8, "out between rows");
  for (size_t i = 0; i < rows; i++) {
    for (size_t w = 0; w < words; w++) {
      uint64_t got;
      memcpy(&got, out.data + (i * out_stride + w) * 8, 8);
      const uint64_t expected = want[i * out_stride + w];
      if (got != expected) {
        fuzz_fail("row %zu word %zu = 0x%016llx, expected 0x%016llx (first differing bit: "
                  "element %zu)",
                  i, w, (unsigned long long) got, (unsigned long long) expected,
                  w * 64 + (size_t) __builtin_ctzll(got ^ expected));
      }
    }
  }
  free(want);
  fuzz_out_free(&out);
  free(x_block);
  return 0;
}
