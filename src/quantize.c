/*
 * Real scale -> Q31 multiplier and shift, as TFLite's QuantizeMultiplier.
 */
#include <float.h>
#include <string.h>

#include "common.h"

static int valid_scale(double scale) { return scale >= 0.0 && scale <= DBL_MAX; }

static void quantize(double scale, int32_t* multiplier, int32_t* shift)
{
  if (scale == 0.0) {
    *multiplier = 0;
    *shift = 0;
    return;
  }
  /* frexp by hand (the library needs no libm): scale = q * 2^exponent, q in [0.5, 1).
   * Subnormal scales are below 2^-1022 and end as multiplier 0, shift 0 below. */
  uint64_t bits;
  memcpy(&bits, &scale, sizeof(bits));
  const int biased = (int) ((bits >> 52) & 0x7ff);
  int exponent = biased == 0 ? -1100 : biased - 1022;
  bits = (bits & ~(UINT64_C(0x7ff) << 52)) | (UINT64_C(1022) << 52);
  double q;
  memcpy(&q, &bits, sizeof(q));
  /* q * 2^31 is exact and in [2^30, 2^31); adding 0.5 is exact too, so truncation
   * rounds half away from zero. */
  int64_t q_fixed = biased == 0 ? 0 : (int64_t) (q * 2147483648.0 + 0.5);
  if (q_fixed == (INT64_C(1) << 31)) {
    q_fixed /= 2;
    exponent += 1;
  }
  if (exponent < -31) {
    exponent = 0;
    q_fixed = 0;
  }
  if (exponent > 30) {
    exponent = 30;
    q_fixed = INT32_MAX;
  }
  *multiplier = (int32_t) q_fixed;
  *shift = exponent;
}

gemmi8_status gemmi8_quantize_multiplier(double scale, int32_t* multiplier, int32_t* shift)
{
  if (multiplier == NULL || shift == NULL || !valid_scale(scale)) {
    return gemmi8_status_invalid_parameter;
  }
  quantize(scale, multiplier, shift);
  return gemmi8_status_success;
}

gemmi8_status gemmi8_quantize_multipliers(size_t count, const double* scale,
                                          int32_t* multiplier, int32_t* shift)
{
  if (count == 0 || scale == NULL || multiplier == NULL || shift == NULL) {
    return gemmi8_status_invalid_parameter;
  }
  for (size_t i = 0; i < count; i++) {
    if (!valid_scale(scale[i])) return gemmi8_status_invalid_parameter;
  }
  for (size_t i = 0; i < count; i++) quantize(scale[i], &multiplier[i], &shift[i]);
  return gemmi8_status_success;
}
