/*
 * Reference implementations (see ref.h). Slow and plain on purpose: every step is
 * the definition in include/gemmi8.h, with int64 or double arithmetic wide enough
 * that nothing in between overflows or rounds unless the definition says so.
 */
#include "ref.h"

#include <math.h>
#include <stdlib.h>

int32_t ref_wrap_s32(int64_t v)
{
  uint64_t low = (uint64_t) v & UINT64_C(0xFFFFFFFF);
  int64_t s = low >= UINT64_C(0x80000000) ? (int64_t) low - INT64_C(0x100000000) : (int64_t) low;
  return (int32_t) s;
}

/* An 8-bit element as its integer value. */
static int32_t q8_value(int is_signed, uint8_t byte)
{
  if (is_signed && byte >= 128) return (int32_t) byte - 256;
  return (int32_t) byte;
}

void ref_q8_acc(int is_signed, size_t m, size_t n, size_t k, const uint8_t* a, size_t a_stride,
                int32_t a_zp, const uint8_t* b, size_t b_stride, int b_kn, const int32_t* b_zp,
                const int32_t* bias, int32_t* acc)
{
  ref_q8_acc_mixed(is_signed, is_signed, m, n, k, a, a_stride, a_zp, b, b_stride, b_kn, b_zp, bias,
                   acc);
}

void ref_q8_acc_mixed(int a_signed, int b_signed, size_t m, size_t n, size_t k, const uint8_t* a,
                      size_t a_stride, int32_t a_zp, const uint8_t* b, size_t b_stride, int b_kn,
                      const int32_t* b_zp, const int32_t* bias, int32_t* acc)
{
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      int64_t sum = bias != NULL ? (int64_t) bias[j] : 0;
      for (size_t p = 0; p < k; p++) {
        int64_t av = q8_value(a_signed, a[i * a_stride + p]);
        uint8_t braw = b_kn ? b[p * b_stride + j] : b[j * b_stride + p];
        int64_t bv = q8_value(b_signed, braw);
        sum += (av - a_zp) * (bv - b_zp[j]);
      }
      acc[i * n + j] = ref_wrap_s32(sum);
    }
  }
}

void ref_conv_acc(const struct ref_conv* c, const uint8_t* in, const uint8_t* w, int32_t a_zp,
                  const int32_t* b_zp, const int32_t* bias, int32_t* acc)
{
  const size_t cout = c->groups * c->co;
  for (size_t b = 0; b < c->batch; b++) {
    for (size_t oy = 0; oy < c->oh; oy++) {
      for (size_t ox = 0; ox < c->ow; ox++) {
        for (size_t ch = 0; ch < cout; ch++) {
          const size_t g = ch / c->co;
          const int64_t zp = b_zp != NULL ? b_zp[ch] : 0;
          int64_t sum = bias != NULL ? bias[ch] : 0;
          for (size_t y = 0; y < c->kh; y++) {
            for (size_t x = 0; x < c->kw; x++) {
              const int64_t iy = (int64_t) (oy * c->sh + y * c->dh) - (int64_t) c->pt;
              const int64_t ix = (int64_t) (ox * c->sw + x * c->dw) - (int64_t) c->pl;
              const int inside =
                  iy >= 0 && iy < (int64_t) c->ih && ix >= 0 && ix < (int64_t) c->iw;
              for (size_t i = 0; i < c->ci; i++) {
                int64_t av = a_zp;
                if (inside) {
                  const size_t pixel = (b * c->ih + (size_t) iy) * c->iw + (size_t) ix;
                  av = q8_value(c->a_signed, in[pixel * c->in_stride + g * c->ci + i]);
                }
                const int64_t wv = q8_value(c->w_signed, w[((ch * c->kh + y) * c->kw + x) * c->ci + i]);
                sum += (av - a_zp) * (wv - zp);
              }
            }
          }
          acc[((b * c->oh + oy) * c->ow + ox) * cout + ch] = ref_wrap_s32(sum);
        }
      }
    }
  }
}

/* ---- fixed-point requantization ---------------------------------------------- */

static int32_t saturate_s32(int64_t v)
{
  if (v > INT32_MAX) return INT32_MAX;
  if (v < INT32_MIN) return INT32_MIN;
  return (int32_t) v;
}

int32_t ref_saturating_left_shift(int32_t x, int32_t shift)
{
  /* |x| * 2^31 < 2^62: exact in int64. */
  return saturate_s32((int64_t) x * ((int64_t) 1 << shift));
}

int32_t ref_srdhm(int32_t x, int32_t multiplier)
{
  int64_t product = (int64_t) x * (int64_t) multiplier;
  int64_t nudge = product >= 0 ? ((int64_t) 1 << 30) : 1 - ((int64_t) 1 << 30);
  /* C division truncates toward zero, as the definition says. */
  int64_t high = (product + nudge) / ((int64_t) 1 << 31);
  return saturate_s32(high);
}

int32_t ref_rounding_divide_by_pot(int32_t x, int32_t exponent)
{
  if (exponent == 0) return x;
  int64_t divisor = (int64_t) 1 << exponent;
  int64_t q = (int64_t) x / divisor;
  int64_t r = (int64_t) x - q * divisor; /* same sign as x */
  int64_t twice_abs_r = r < 0 ? -2 * r : 2 * r;
  if (twice_abs_r >= divisor) q += x < 0 ? -1 : 1; /* halves go away from zero */
  return (int32_t) q;
}

int32_t ref_requantize_fixedpoint(int32_t acc, int32_t multiplier, int32_t shift)
{
  int32_t left = shift > 0 ? shift : 0;
  int32_t right = shift < 0 ? -shift : 0;
  int32_t x = ref_saturating_left_shift(acc, left);
  int32_t y = ref_srdhm(x, multiplier);
  return ref_rounding_divide_by_pot(y, right);
}

int32_t ref_output_fixedpoint(int32_t acc, int32_t multiplier, int32_t shift, int32_t zero_point,
                              int32_t min, int32_t max)
{
  /* gemmlowp adds the zero point in int32, which wraps */
  int64_t v = ref_wrap_s32((int64_t) zero_point + ref_requantize_fixedpoint(acc, multiplier, shift));
  if (v < min) v = min;
  if (v > max) v = max;
  return (int32_t) v;
}

/* ---- fp32 requantization ------------------------------------------------------ */

static double round_half_even(double v)
{
  /* Every double of magnitude >= 2^52 is an integer; so are infinities. */
  if (!isfinite(v) || fabs(v) >= 0x1p52) return v;
  double f = floor(v);
  double frac = v - f; /* exact */
  if (frac > 0.5) return f + 1.0;
  if (frac < 0.5) return f;
  return fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

double ref_requantize_fp32(int32_t acc, float scale)
{
  float facc = (float) acc;                      /* int32 to float: rounded */
  double exact = (double) facc * (double) scale; /* 24 x 24 bits: exact */
  float product = (float) exact;                 /* the one float rounding */
  return round_half_even((double) product);
}

int32_t ref_output_fp32(int32_t acc, float scale, int32_t zero_point, int32_t min, int32_t max)
{
  double v = (double) zero_point + ref_requantize_fp32(acc, scale);
  if (v < (double) min) v = (double) min;
  if (v > (double) max) v = (double) max;
  return (int32_t) v;
}

/* ---- QuantizeMultiplier --------------------------------------------------------- */

int ref_quantize_multiplier(double scale, int32_t* multiplier, int32_t* shift)
{
  if (isnan(scale) || isinf(scale) || scale < 0.0) return -1;
  if (scale == 0.0) {
    *multiplier = 0;
    *shift = 0;
    return 0;
  }
  int e = 0;
  double q = frexp(scale, &e); /* scale = q * 2^e, q in [0.5, 1) */
  double x = q * 2147483648.0; /* exact: a power-of-two scaling */
  double below = floor(x);
  int64_t fixed = (int64_t) below;
  if (x - below >= 0.5) fixed++; /* half away from zero (x > 0) */
  if (fixed == (INT64_C(1) << 31)) {
    fixed = INT64_C(1) << 30;
    e++;
  }
  if (e < -31) {
    fixed = 0;
    e = 0;
  } else if (e > 30) {
    fixed = INT32_MAX;
    e = 30;
  }
  *multiplier = (int32_t) fixed;
  *shift = (int32_t) e;
  return 0;
}

/* ---- binary ----------------------------------------------------------------------- */

int ref_bin_value(const uint64_t* row, size_t j)
{
  return ((row[j / 64] >> (j % 64)) & 1u) ? -1 : 1;
}

void ref_bin_acc(size_t m, size_t n, size_t k, const uint64_t* a, size_t a_stride,
                 const uint64_t* b, size_t b_stride, int b_kn, int32_t* acc)
{
  /* Unpack both operands to +1/-1 integers, then multiply and add. */
  signed char* av = malloc(m * k);
  signed char* bv = malloc(n * k);
  if (av == NULL || bv == NULL) {
    free(av);
    free(bv);
    for (size_t i = 0; i < m * n; i++) acc[i] = INT32_MIN; /* cannot happen in tests */
    return;
  }
  for (size_t i = 0; i < m; i++)
    for (size_t p = 0; p < k; p++) av[i * k + p] = (signed char) ref_bin_value(a + i * a_stride, p);
  for (size_t j = 0; j < n; j++)
    for (size_t p = 0; p < k; p++)
      bv[j * k + p] = (signed char) (b_kn ? ref_bin_value(b + p * b_stride, j)
                                          : ref_bin_value(b + j * b_stride, p));
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      int64_t sum = 0;
      for (size_t p = 0; p < k; p++) sum += (int64_t) av[i * k + p] * bv[j * k + p];
      acc[i * n + j] = (int32_t) sum;
    }
  }
  free(av);
  free(bv);
}

float ref_bin_f32(int32_t acc, const float* scale, const float* bias, size_t channel)
{
  float s = scale != NULL ? scale[channel] : 1.0f;
  float b = bias != NULL ? bias[channel] : 0.0f;
  float facc = (float) acc;
  /* Each double operation below is exact or rounds once more finely than float;
   * converting to float then rounds once (53 >= 2 * 24 + 2: no double rounding). */
  float product = (float) ((double) facc * (double) s);
  return (float) ((double) product + (double) b);
}

static void pack_rows(size_t rows, size_t k, size_t out_stride, uint64_t* out,
                      int (*negative)(const void* x, size_t i, size_t j, const void* ctx),
                      const void* x, const void* ctx)
{
  size_t words = (k + 63) / 64;
  for (size_t i = 0; i < rows; i++) {
    for (size_t w = 0; w < words; w++) out[i * out_stride + w] = 0;
    for (size_t j = 0; j < k; j++)
      if (negative(x, i, j, ctx)) out[i * out_stride + j / 64] |= UINT64_C(1) << (j % 64);
  }
}

static int f32_negative(const void* x, size_t i, size_t j, const void* ctx)
{
  size_t stride = *(const size_t*) ctx;
  return ((const float*) x)[i * stride + j] < 0.0f;
}

static int s8_negative(const void* x, size_t i, size_t j, const void* ctx)
{
  size_t stride = *(const size_t*) ctx;
  return ((const int8_t*) x)[i * stride + j] < 0;
}

typedef struct u8_ctx {
  size_t stride;
  int zero_point;
} u8_ctx;

static int u8_negative(const void* x, size_t i, size_t j, const void* ctx)
{
  const u8_ctx* c = ctx;
  return (int) ((const uint8_t*) x)[i * c->stride + j] - c->zero_point < 0;
}

void ref_bin_pack_f32(size_t rows, size_t k, const float* x, size_t x_stride, uint64_t* out,
                      size_t out_stride)
{
  pack_rows(rows, k, out_stride, out, f32_negative, x, &x_stride);
}

void ref_bin_pack_s8(size_t rows, size_t k, const int8_t* x, size_t x_stride, uint64_t* out,
                     size_t out_stride)
{
  pack_rows(rows, k, out_stride, out, s8_negative, x, &x_stride);
}

void ref_bin_pack_u8(size_t rows, size_t k, const uint8_t* x, size_t x_stride, uint8_t zero_point,
                     uint64_t* out, size_t out_stride)
{
  u8_ctx c = {x_stride, zero_point};
  pack_rows(rows, k, out_stride, out, u8_negative, x, &c);
}

/* ---- dynamic row quantization, from the header's text (float arithmetic, as the
 * header writes it: the definition is in floats) ---------------------------------- */

/* Nearest integer, ties to even, for |v| <= 2^22, by truncation and the remainder
 * (v - trunc(v) is exact here): a route other than the library's. */
static int32_t ref_rne(float v)
{
  int32_t i = (int32_t) v;
  const float d = v - (float) i;
  if (d > 0.5f || (d == 0.5f && (i & 1))) i++;
  if (d < -0.5f || (d == -0.5f && (i & 1))) i--;
  return i;
}

static void ref_row_minmax(size_t k, const float* x, float* lo, float* hi)
{
  *lo = x[0];
  *hi = x[0];
  for (size_t i = 1; i < k; i++) {
    if (x[i] < *lo) *lo = x[i];
    if (x[i] > *hi) *hi = x[i];
  }
}

void ref_quantize_row_u8(size_t k, const float* x, uint8_t* y, float* scale_out, int32_t* zp_out)
{
  float lo, hi;
  ref_row_minmax(k, x, &lo, &hi);
  const float rmin = lo < 0.0f ? lo : 0.0f;
  const float rmax = hi > 0.0f ? hi : 0.0f;
  const float scale = rmax == rmin ? 1.0f : (rmax - rmin) / 255.0f;
  float z = 0.0f - rmin / scale;
  z = z < 255.0f ? z : 255.0f;
  z = 0.0f < z ? z : 0.0f;
  const int32_t zp = ref_rne(z);
  for (size_t i = 0; i < k; i++) {
    float q = x[i] / scale;
    q = q > (float) -zp ? q : (float) -zp;
    q = q < (float) (255 - zp) ? q : (float) (255 - zp);
    y[i] = (uint8_t) (ref_rne(q) + zp);
  }
  *scale_out = scale;
  *zp_out = zp;
}

void ref_quantize_row_s8(size_t k, const float* x, int8_t* y, float* scale_out, int32_t* zp_out)
{
  float lo, hi;
  ref_row_minmax(k, x, &lo, &hi);
  const float rmin = lo < 0.0f ? lo : 0.0f;
  const float rmax = hi > 0.0f ? hi : 0.0f;
  const float inv = rmin == rmax ? 1.0f : 255.0f / (rmax - rmin);
  const float dmin = rmin * inv, dmax = rmax * inv;
  float z = (-128.0f + dmin) + (127.0f + dmax) > 0.0f ? -128.0f - dmin : 127.0f - dmax;
  z = -128.0f < z ? z : -128.0f;
  z = 127.0f < z ? 127.0f : z;
  const int32_t zp = ref_rne(z);
  for (size_t i = 0; i < k; i++) {
    float q = x[i] * inv;
    q = q > (float) (-128 - zp) ? q : (float) (-128 - zp);
    q = q < (float) (127 - zp) ? q : (float) (127 - zp);
    y[i] = (int8_t) (ref_rne(q) + zp);
  }
  *scale_out = 1.0f / inv;
  *zp_out = zp;
}
