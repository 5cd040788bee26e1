/*
 * gemmi8_quantize_multiplier / gemmi8_quantize_multipliers against TFLite's
 * QuantizeMultiplier as written from its definition (ref_quantize_multiplier).
 *
 * One input is a list of up to 32 doubles, each from a menu: any bit pattern; a
 * mantissa and a binary exponent anywhere in the double range; exact ties of the Q31
 * rounding (q * 2^31 = j + 1/2); values just below 1 * 2^e (rounding up to 2^31);
 * exponents at the edges -31 / +30 and one past; denormals; +-0, infinities, NaNs,
 * negative values. Each goes through the single-value function (outputs canaried:
 * nothing written on failure), then the list through the array function (nothing
 * written unless every scale is valid). A success must also hold the header's ranges:
 * multiplier 0 or in [2^30, 2^31 - 1], shift in [-31, 30].
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ref.h"

#define MAX_COUNT 32

static double double_of_bits(uint64_t bits)
{
  double d;
  memcpy(&d, &bits, sizeof(d));
  return d;
}

static double decode_scale(struct fuzz_reader* r)
{
  const uint8_t s = fuzz_u8(r);
  const double sign = (s & 0x80) ? -1.0 : 1.0;
  switch (s % 12) {
    case 0: return double_of_bits(fuzz_u64(r));
    case 1: { /* any mantissa, any exponent of the double range */
      const double q = 0.5 + (double) (fuzz_u64(r) >> 11) * 0x1p-54;
      return sign * ldexp(q, (int) fuzz_range(r, 0, 2200) - 1100);
    }
    case 2: { /* a tie: q * 2^31 = j + 1/2 for j in [2^30, 2^31) */
      const uint64_t j = ((uint64_t) 1 << 30) + (fuzz_u32(r) & 0x3fffffffu);
      return sign * ldexp((double) (2 * j + 1), (int) fuzz_range(r, 0, 90) - 32 - 45);
    }
    case 3: { /* just below a power of two: q * 2^31 rounds to 2^31 */
      const double below = 1.0 - ldexp(1.0 + (double) fuzz_u8(r), -(int) fuzz_range(r, 25, 53));
      return sign * ldexp(below, (int) fuzz_range(r, 0, 80) - 40);
    }
    case 4: { /* the exponent edges: e in -33..-29 and 29..33 */
      const double q = 0.5 + (double) (fuzz_u64(r) >> 11) * 0x1p-54;
      const int e = (fuzz_u8(r) & 1) ? (int) fuzz_range(r, 29, 33) : -(int) fuzz_range(r, 29, 33);
      return sign * ldexp(q, e);
    }
    case 5: return sign * ldexp(1.0, (int) fuzz_range(r, 0, 2100) - 1075); /* powers of two */
    case 6: return sign * double_of_bits(fuzz_u64(r) & UINT64_C(0x000fffffffffffff)); /* denormal */
    case 7: {
      static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, DBL_MAX,
                                        DBL_MIN, DBL_TRUE_MIN, 1.0, 0.5, 2147483648.0};
      return specials[fuzz_u8(r) % 12];
    }
    case 8: { /* a NaN with any payload and sign */
      uint64_t bits = UINT64_C(0x7ff0000000000000) | (fuzz_u64(r) & UINT64_C(0x800fffffffffffff));
      if ((bits & UINT64_C(0x000fffffffffffff)) == 0) bits |= 1;
      return double_of_bits(bits);
    }
    default: /* the usual range of real output scales */
      return sign * ldexp(1.0 + (double) fuzz_u32(r) / 4294967296.0, -(int) fuzz_range(r, 0, 40));
  }
}

static void check_ranges(double scale, int32_t multiplier, int32_t shift)
{
  if (multiplier < 0 || (multiplier != 0 && multiplier < (INT32_C(1) << 30)) || shift < -31 ||
      shift > 30) {
    fuzz_fail("scale %a gave multiplier %d shift %d: out of the header's ranges", scale,
              (int) multiplier, (int) shift);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  struct fuzz_reader r;
  fuzz_reader_init(&r, data, size);
  const size_t count = fuzz_range(&r, 1, MAX_COUNT);
  double scales[MAX_COUNT];
  int32_t want_m[MAX_COUNT], want_s[MAX_COUNT];
  int all_valid = 1;
  for (size_t i = 0; i < count; i++) {
    scales[i] = decode_scale(&r);
    const double scale = scales[i];
    fuzz_describe("quantize_multiplier(%a)", scale);
    int32_t ref_m = 0, ref_s = 0;
    const int ref = ref_quantize_multiplier(scale, &ref_m, &ref_s);
    all_valid &= ref == 0;
    want_m[i] = ref_m;
    want_s[i] = ref_s;

    struct fuzz_out m, s;
    fuzz_out_init(&m, &r, sizeof(int32_t), 0);
    fuzz_out_init(&s, &r, sizeof(int32_t), 0);
    const gemmi8_status st = gemmi8_quantize_multiplier(scale, (int32_t*) (void*) m.data,
                                                        (int32_t*) (void*) s.data);
    fuzz_out_check_guards(&m, "multiplier");
    fuzz_out_check_guards(&s, "shift");
    if (ref != 0) {
      fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_invalid_parameter), "quantize_multiplier");
      fuzz_out_check_untouched(&m, "multiplier");
      fuzz_out_check_untouched(&s, "shift");
    } else {
      fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "quantize_multiplier");
      int32_t got_m, got_s;
      memcpy(&got_m, m.data, sizeof(got_m));
      memcpy(&got_s, s.data, sizeof(got_s));
      if (got_m != ref_m || got_s != ref_s) {
        fuzz_fail("got multiplier %d shift %d, QuantizeMultiplier gives %d %d", (int) got_m,
                  (int) got_s, (int) ref_m, (int) ref_s);
      }
      check_ranges(scale, got_m, got_s);
    }
    fuzz_out_free(&m);
    fuzz_out_free(&s);
  }

  /* the array form: exact-size input, canaried outputs */
  fuzz_describe("quantize_multipliers(%zu scales, first %a)", count, scales[0]);
  void* block = NULL;
  double* in = fuzz_exact(&r, count * sizeof(double), 0, &block);
  memcpy(in, scales, count * sizeof(double));
  struct fuzz_out m, s;
  fuzz_out_init(&m, &r, count * sizeof(int32_t), 0);
  fuzz_out_init(&s, &r, count * sizeof(int32_t), 0);
  const gemmi8_status st = gemmi8_quantize_multipliers(count, in, (int32_t*) (void*) m.data,
                                                       (int32_t*) (void*) s.data);
  fuzz_out_check_guards(&m, "multipliers");
  fuzz_out_check_guards(&s, "shifts");
  if (!all_valid) {
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_invalid_parameter), "quantize_multipliers");
    fuzz_out_check_untouched(&m, "multipliers");
    fuzz_out_check_untouched(&s, "shifts");
  } else {
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "quantize_multipliers");
    for (size_t i = 0; i < count; i++) {
      int32_t got_m, got_s;
      memcpy(&got_m, m.data + i * 4, 4);
      memcpy(&got_s, s.data + i * 4, 4);
      if (got_m != want_m[i] || got_s != want_s[i]) {
        fuzz_fail("scale[%zu] = %a: got multiplier %d shift %d, QuantizeMultiplier gives %d %d", i,
                  scales[i], (int) got_m, (int) got_s, (int) want_m[i], (int) want_s[i]);
      }
    }
  }
  if (memcmp(in, scales, count * sizeof(double)) != 0) fuzz_fail("the scales were written");
  fuzz_out_free(&m);
  fuzz_out_free(&s);
  free(block);
  return 0;
}
