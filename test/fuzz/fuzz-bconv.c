/*
 * Binary convolution and binary max pool: create / setup / run with random geometry
 * against a direct reference that multiplies +1/-1 integers tap by tap.
 *
 * Three inputs in four make a binary convolution: kernel 1..5 x 1..5, strides and
 * dilations 1..3, each padding 0..5, groups 1..3 with 1..150 input and 1..70 output
 * channels a group, one or zero padding, any output (s32, f32 with a clamp, sign bits,
 * thresholds, qs8 in both rounding modes), random bits everywhere (the bits past the
 * channels too); then one or two setups (batch 1..2, input 1..10 x 1..10, pixel
 * strides with extra words) each followed by a run on the calling thread, a shuffled
 * parallel-for or gemmi8's pool. Some inputs break a geometry field (0 or a huge
 * value): create must then refuse it and leave *op untouched. The fourth input in
 * four is a binary max pool against its definition. Inputs and weights are
 * exact-size blocks; outputs have canaries between pixels and guards around them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ref.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static size_t side(size_t in, size_t p0, size_t p1, size_t k, size_t d, size_t s)
{
  const size_t padded = in + p0 + p1, extent = (k - 1) * d + 1;
  return extent > padded ? 0 : (padded - extent) / s + 1;
}

static int bit_of(const uint64_t* p, size_t c) { return (int) (p[c / 64] >> (c % 64)) & 1; }

static void max_pool(struct fuzz_reader* r)
{
  const size_t batch = fuzz_range(r, 1, 2), ih = fuzz_range(r, 1, 9), iw = fuzz_range(r, 1, 9);
  const size_t channels = fuzz_range(r, 1, 200), words = fuzz_words(channels);
  const size_t ph = fuzz_range(r, 1, 4), pw = fuzz_range(r, 1, 4);
  const size_t sh = fuzz_range(r, 1, 3), sw = fuzz_range(r, 1, 3);
  const size_t pt = fuzz_range(r, 0, 4), pl = fuzz_range(r, 0, 4);
  const size_t pb = fuzz_range(r, 0, 4), pr = fuzz_range(r, 0, 4);
  const size_t in_stride = words + fuzz_extra(r, 3), out_stride = words + fuzz_extra(r, 3);
  fuzz_describe("max pool n%zu %zux%zux%zu pool %zux%zu s%zux%zu pad %zu,%zu,%zu,%zu strides %zu/%zu",
                batch, ih, iw, channels, ph, pw, sh, sw, pt, pl, pb, pr, in_stride, out_stride);
  const size_t pixels = batch * ih * iw;
  void* in_block;
  uint64_t* in = fuzz_exact(r, ((pixels - 1) * in_stride + words) * 8, 0, &in_block);
  /* mostly set bits, so that a window's AND is often set */
  for (size_t i = 0; i < (pixels - 1) * in_stride + words; i++) in[i] |= fuzz_random(r);
  const int valid = pt < ph && pb < ph && pl < pw && pr < pw && ih + pt + pb >= ph &&
                    iw + pl + pr >= pw;
  const size_t oh = valid ? (ih + pt + pb - ph) / sh + 1 : 0;
  const size_t ow = valid ? (iw + pl + pr - pw) / sw + 1 : 0;
  const size_t m = batch * oh * ow;
  struct fuzz_out out;
  fuzz_out_init(&out, r, (m > 0 ? (m - 1) * out_stride + words : 1) * 8, fuzz_range(r, 0, 7) * 8);
  size_t got_h = 12345, got_w = 12345;
  const gemmi8_status st = gemmi8_bin_max_pool(batch, ih, iw, channels, in, in_stride, ph, pw, sh,
                                               sw, pt, pl, pb, pr, (uint64_t*) out.data,
                                               out_stride, &got_h, &got_w);
  if (!valid) {
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_invalid_parameter), "max pool");
    fuzz_out_check_untouched(&out, "output");
  } else {
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "max pool");
    if (got_h != oh || got_w != ow) fuzz_fail("output %zux%zu, want %zux%zu", got_h, got_w, oh, ow);
    fuzz_out_check_guards(&out, "output");
    fuzz_out_check_gaps(&out, m, words * 8, out_stride * 8, "output");
    for (size_t n = 0; n < batch; n++) {
      for (size_t oy = 0; oy < oh; oy++) {
        for (size_t ox = 0; ox < ow; ox++) {
          const size_t p = (n * oh + oy) * ow + ox;
          uint64_t got[4];
          memcpy(got, out.data + p * out_stride * 8, words * 8);
          for (size_t ch = 0; ch < words * 64; ch++) {
            int all = ch < channels;
            for (size_t y = 0; y < ph && all; y++) {
              for (size_t x = 0; x < pw && all; x++) {
                const long iy = (long) (oy * sh + y) - (long) pt, ix = (long) (ox * sw + x) - (long) pl;
                if (iy < 0 || ix < 0 || iy >= (long) ih || ix >= (long) iw) continue;
                all = bit_of(in + ((n * ih + (size_t) iy) * iw + (size_t) ix) * in_stride, ch);
              }
            }
            if (bit_of(got, ch) != all) fuzz_fail("pixel %zu channel %zu: bit %d, want %d", p, ch, bit_of(got, ch), all);
          }
        }
      }
    }
  }
  fuzz_out_free(&out);
  free(in_block);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  struct fuzz_reader r;
  fuzz_reader_init(&r, data, size);
  if (fuzz_range(&r, 0, 3) == 0) {
    max_pool(&r);
    return 0;
  }
  gemmi8_conv_geometry g;
  g.kernel_height = fuzz_range(&r, 1, 5);
  g.kernel_width = fuzz_range(&r, 1, 5);
  g.stride_height = fuzz_range(&r, 1, 3);
  g.stride_width = fuzz_range(&r, 1, 3);
  g.dilation_height = fuzz_range(&r, 1, 3);
  g.dilation_width = fuzz_range(&r, 1, 3);
  g.padding_top = fuzz_range(&r, 0, 5);
  g.padding_left = fuzz_range(&r, 0, 5);
  g.padding_bottom = fuzz_range(&r, 0, 5);
  g.padding_right = fuzz_range(&r, 0, 5);
  g.groups = fuzz_range(&r, 1, 3);
  g.group_input_channels = fuzz_range(&r, 1, 150);
  g.group_output_channels = fuzz_range(&r, 1, 70);
  const size_t ci = g.group_input_channels, co = g.group_output_channels;
  const size_t cin = g.groups * ci, cout = g.groups * co, kcw = fuzz_words(ci);
  const size_t taps = g.kernel_height * g.kernel_width;
  const int64_t depth = (int64_t) (taps * ci);
  const uint32_t flags = (uint32_t) fuzz_range(&r, 0, 1);
  const gemmi8_bin_output_kind kind = (gemmi8_bin_output_kind) fuzz_range(&r, 0, 5);
  void *w_block, *m_block, *b_block, *t_block, *g_block, *b32_block, *q_block, *s_block, *f_block;
  uint64_t* w = fuzz_exact(&r, cout * taps * kcw * 8, 0, &w_block);
  float* mult = fuzz_exact(&r, cout * sizeof(float), 0, &m_block);
  float* bias = fuzz_exact(&r, cout * sizeof(float), 0, &b_block);
  int32_t* thr = fuzz_exact(&r, cout * sizeof(int32_t), 0, &t_block);
  uint8_t* greater = fuzz_exact(&r, cout, 0, &g_block);
  int32_t* bias32 = fuzz_exact(&r, cout * sizeof(int32_t), 0, &b32_block);
  int32_t* qmult = fuzz_exact(&r, cout * sizeof(int32_t), 0, &q_block);
  int32_t* qshift = fuzz_exact(&r, cout * sizeof(int32_t), 0, &s_block);
  float* qscale = fuzz_exact(&r, cout * sizeof(float), 0, &f_block);
  for (size_t j = 0; j < cout; j++) {
    mult[j] = fuzz_range(&r, 0, 7) == 0 ? fuzz_f32_special(&r) : (float) fuzz_range_s32(&r, -400, 400) / 128.0f;
    bias[j] = fuzz_range(&r, 0, 7) == 0 ? fuzz_f32_special(&r)
                                        : (float) fuzz_range_s32(&r, -(int32_t) depth, (int32_t) depth) / 4.0f;
    thr[j] = fuzz_range(&r, 0, 7) == 0 ? fuzz_s32_edgy(&r)
                                       : fuzz_range_s32(&r, -(int32_t) depth - 2, (int32_t) depth + 2);
    bias32[j] = fuzz_s32_edgy(&r);
    qmult[j] = fuzz_range_s32(&r, 1 << 29, INT32_MAX);
    qshift[j] = fuzz_range_s32(&r, -20, 2);
    qscale[j] = fuzz_f32_positive(&r);
  }
  const int per_channel = (int) fuzz_range(&r, 0, 1);
  gemmi8_requant rq = {fuzz_range(&r, 0, 1) ? gemmi8_requant_fp32 : gemmi8_requant_fixedpoint,
                       per_channel, qmult, qshift, qscale, 0, 0, 0};
  rq.zero_point = fuzz_range_s32(&r, -128, 127);
  rq.min = fuzz_range_s32(&r, -128, 127);
  rq.max = fuzz_range_s32(&r, rq.min, 127);
  gemmi8_bin_conv_output out_desc = {kind,
                                     fuzz_range(&r, 0, 5) ? mult : NULL,
                                     fuzz_range(&r, 0, 5) ? bias : NULL,
                                     -INFINITY,
                                     INFINITY,
                                     thr,
                                     fuzz_range(&r, 0, 2) ? greater : NULL,
                                     fuzz_range(&r, 0, 3) ? bias32 : NULL,
                                     &rq};
  if (fuzz_range(&r, 0, 1)) {
    out_desc.output_min = (float) fuzz_range_s32(&r, -(int32_t) depth, (int32_t) depth) / 2.0f;
    out_desc.output_max = out_desc.output_min + (float) fuzz_range(&r, 0, (size_t) depth);
  }
  /* a broken geometry field (create must refuse), or none */
  const size_t broken = fuzz_range(&r, 0, 40);
  gemmi8_conv_geometry bad = g;
  size_t* fields = (size_t*) &bad;
  const size_t nfields = sizeof(bad) / sizeof(size_t);
  int expect_refusal = 0;
  if (broken < nfields) {
    const size_t value = fuzz_range(&r, 0, 3) == 0 ? 0 : SIZE_MAX - fuzz_range(&r, 0, 3);
    const int valid = (value == 0 && broken >= 6 && broken <= 9) ||
                      (value != 0 && (broken == 2 || broken == 3)) ||
                      (value != 0 && broken == 4 && g.kernel_height - 1 <= (SIZE_MAX - 1) / value) ||
                      (value != 0 && broken == 5 && g.kernel_width - 1 <= (SIZE_MAX - 1) / value);
    if (!valid) {
      fields[broken] = value;
      if (broken >= 6 && broken <= 9) fields[broken < 8 ? broken + 2 : broken - 2] = SIZE_MAX;
      expect_refusal = 1;
    }
  }
  static const char* const kinds[] = {"s32", "f32", "bits", "threshold", "qs8", "f32_add"};
  fuzz_describe("bin %s %s k%zux%zu s%zux%zu d%zux%zu pad %zu,%zu,%zu,%zu g%zu ci%zu co%zu%s",
                kinds[kind], flags ? "zero-padding" : "one-padding", g.kernel_height,
                g.kernel_width, g.stride_height, g.stride_width, g.dilation_height,
                g.dilation_width, g.padding_top, g.padding_left, g.padding_bottom,
                g.padding_right, g.groups, ci, co, expect_refusal ? " (a field broken)" : "");
  gemmi8_convolution* const sentinel = (gemmi8_convolution*) (uintptr_t) 0x40;
  gemmi8_convolution* op = sentinel;
  if (expect_refusal) {
    const gemmi8_status st = gemmi8_bin_convolution_create(&bad, w, flags, &out_desc, &op);
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_invalid_parameter) |
                               FUZZ_BIT(gemmi8_status_unsupported_parameter), "create");
    if (op != sentinel) fuzz_fail("a refused create wrote *op");
    goto done;
  }
  gemmi8_status st = gemmi8_bin_convolution_create(&g, w, flags, &out_desc, &op);
  fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "create");
  /* the operator owns copies: keep the call's values, then scramble the caller's */
  const size_t w_bytes = cout * taps * kcw * 8;
  uint64_t* w0 = malloc(w_bytes);
  float* mult0 = malloc(cout * sizeof(float));
  float* bias0 = malloc(cout * sizeof(float));
  memcpy(w0, w, w_bytes);
  memcpy(mult0, mult, cout * sizeof(float));
  memcpy(bias0, bias, cout * sizeof(float));
  const float* m0 = out_desc.multiplier ? mult0 : NULL;
  const float* b0 = out_desc.bias ? bias0 : NULL;
  const int32_t* bias32_0 = out_desc.bias_s32;
  int32_t* thr0 = malloc(cout * sizeof(int32_t));
  memcpy(thr0, thr, cout * sizeof(int32_t));
  fuzz_fill_random(&r, w, w_bytes);
  fuzz_fill_random(&r, mult, cout * sizeof(float));
  fuzz_fill_random(&r, thr, cout * sizeof(int32_t));
  const int bits = kind == gemmi8_bin_output_bits || kind == gemmi8_bin_output_threshold;
  const size_t out_row = bits ? fuzz_words(cout) : cout;
  const size_t out_elem = bits ? 8 : kind == gemmi8_bin_output_qs8 ? 1 : 4;
  const size_t setups = fuzz_range(&r, 1, 2);
  for (size_t su = 0; su < setups; su++) {
    const size_t batch = fuzz_range(&r, 1, 2);
    const size_t ih = fuzz_range(&r, 1, 10), iw = fuzz_range(&r, 1, 10);
    const size_t in_words = fuzz_words(cin);
    const size_t in_stride = in_words + fuzz_extra(&r, 3), out_stride = out_row + fuzz_extra(&r, 5);
    const size_t pixels = batch * ih * iw;
    void* in_block;
    const uint64_t* in = fuzz_exact(&r, ((pixels - 1) * in_stride + in_words) * 8, 0, &in_block);
    const size_t oh = side(ih, g.padding_top, g.padding_bottom, g.kernel_height, g.dilation_height,
                           g.stride_height);
    const size_t ow = side(iw, g.padding_left, g.padding_right, g.kernel_width, g.dilation_width,
                           g.stride_width);
    const size_t m = batch * oh * ow;
    struct fuzz_out out;
    fuzz_out_init(&out, &r, (m > 0 ? (m - 1) * out_stride + out_row : 1) * out_elem,
                  fuzz_range(&r, 0, 63) / out_elem * out_elem);
    /* f32_add: what the output held, which the run adds to */
    const size_t out_bytes = (m > 0 ? (m - 1) * out_stride + out_row : 1) * out_elem;
    uint8_t* before = malloc(out_bytes);
    memcpy(before, out.data, out_bytes);
    size_t got_h = 12345, got_w = 12345;
    st = gemmi8_convolution_setup(op, batch, ih, iw, in, in_stride, out.data, out_stride, &got_h,
                                  &got_w);
    fuzz_describe_more("; setup %zu: n%zu %zux%zu strides %zu/%zu", su, batch, ih, iw, in_stride,
                       out_stride);
    if (m == 0) {
      fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_invalid_parameter), "setup");
      if (got_h != 12345 || got_w != 12345) fuzz_fail("a refused setup wrote the sizes");
      fuzz_out_check_untouched(&out, "output");
      fuzz_out_free(&out);
      free(before);
      free(in_block);
      continue;
    }
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "setup");
    if (got_h != oh || got_w != ow) fuzz_fail("output %zux%zu, want %zux%zu", got_h, got_w, oh, ow);
    struct fuzz_parallel shuffled;
    fuzz_parallel_init(&shuffled, &r, fuzz_range(&r, 2, 5));
    const size_t how = fuzz_range(&r, 0, 2);
    st = gemmi8_convolution_run(op, how == 0 ? NULL : how == 1 ? &shuffled.parallel : fuzz_parallel_pool());
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "run");
    fuzz_out_check_guards(&out, "output");
    fuzz_out_check_gaps(&out, m, out_row * out_elem, out_stride * out_elem, "output");
    /* the reference, tap by tap */
    for (size_t n = 0; n < batch; n++) {
      for (size_t oy = 0; oy < oh; oy++) {
        for (size_t ox = 0; ox < ow; ox++) {
          const size_t p = (n * oh + oy) * ow + ox;
          const uint8_t* row = out.data + p * out_stride * out_elem;
          for (size_t c = 0; c < (bits ? out_row * 64 : cout); c++) {
            const size_t grp = c / co, o = c % co;
            int64_t acc = 0;
            for (size_t y = 0; c < cout && y < g.kernel_height; y++) {
              for (size_t x = 0; x < g.kernel_width; x++) {
                const long iy = (long) (oy * g.stride_height + y * g.dilation_height) - (long) g.padding_top;
                const long ix = (long) (ox * g.stride_width + x * g.dilation_width) - (long) g.padding_left;
                const int inside = iy >= 0 && ix >= 0 && iy < (long) ih && ix < (long) iw;
                if (!inside && flags) continue;
                const uint64_t* tap = w0 + ((c * g.kernel_height + y) * g.kernel_width + x) * kcw;
                const uint64_t* px = inside ? in + ((n * ih + (size_t) iy) * iw + (size_t) ix) * in_stride : NULL;
                for (size_t ch = 0; ch < ci; ch++) {
                  const int a = px != NULL && bit_of(px, grp * ci + ch);
                  acc += a == bit_of(tap, ch) ? 1 : -1;
                }
              }
            }
            (void) o;
            const int32_t a32 = (int32_t) acc;
            if (bits) {
              int want = 0;
              if (c < cout) {
                if (kind == gemmi8_bin_output_bits) {
                  const volatile float product = (float) a32 * (m0 ? m0[c] : 1.0f);
                  const volatile float sum = product + (b0 ? b0[c] : 0.0f);
                  want = sum < 0.0f;
                } else {
                  want = out_desc.greater && greater[c] ? a32 > thr0[c] : a32 < thr0[c];
                }
              }
              const int got = bit_of((const uint64_t*) row, c);
              if (got != want) fuzz_fail("pixel %zu channel %zu: bit %d, want %d (acc %d)", p, c, got, want, a32);
            } else if (kind == gemmi8_bin_output_s32) {
              int32_t got;
              memcpy(&got, row + c * 4, 4);
              if (got != a32) fuzz_fail("pixel %zu channel %zu: %d, want %d", p, c, got, a32);
            } else if (kind == gemmi8_bin_output_f32 || kind == gemmi8_bin_output_f32_add) {
              const volatile float product = (float) a32 * (m0 ? m0[c] : 1.0f);
              float v = product + (b0 ? b0[c] : 0.0f);
              if (kind == gemmi8_bin_output_f32_add) {
                float y;
                memcpy(&y, before + (p * out_stride + c) * 4, 4);
                const volatile float sum = y + v;
                v = sum;
              }
              v = out_desc.output_min > v ? out_desc.output_min : v;
              v = out_desc.output_max < v ? out_desc.output_max : v;
              float got;
              memcpy(&got, row + c * 4, 4);
              if (!(isnan(v) && isnan(got)) && memcmp(&got, &v, 4) != 0) {
                fuzz_fail("pixel %zu channel %zu: %a, want %a (acc %d)", p, c, got, v, a32);
              }
            } else {
              const size_t q = per_channel ? c : 0;
              const int32_t x = ref_wrap_s32((int64_t) a32 + (bias32_0 ? bias32_0[c] : 0));
              const int32_t want = rq.mode == gemmi8_requant_fp32
                                       ? ref_output_fp32(x, qscale[q], rq.zero_point, rq.min, rq.max)
                                       : ref_output_fixedpoint(x, qmult[q], qshift[q], rq.zero_point,
                                                               rq.min, rq.max);
              const int32_t got = (int8_t) row[c];
              if (got != want) fuzz_fail("pixel %zu channel %zu: %d, want %d (acc %d)", p, c, got, want, a32);
            }
          }
        }
      }
    }
    fuzz_out_free(&out);
    free(before);
    free(in_block);
  }
  gemmi8_convolution_destroy(op);
  free(w0);
  free(mult0);
  free(bias0);
  free(thr0);
done:
  free(w_block);
  free(m_block);
  free(b_block);
  free(t_block);
  free(g_block);
  free(b32_block);
  free(q_block);
  free(s_block);
  free(f_block);
  return 0;
}
