/*
 * Convolution operators: create / setup / run with random geometry against the
 * direct reference (test/ref.c ref_conv_acc).
 *
 * One input is one operator: type (qu8 with per-tensor or per-channel weight zero
 * point, qs8, qu8s8), kernel 1..7 x 1..7, strides and dilations 1..4, each padding
 * 0..8, groups 1..4 with 1..24 input and 1..40 output channels a group (one input in
 * four depthwise: 2..150 groups of one input and 1..4 output channels), fixed-point or
 * fp32 requantization per tensor or per channel, any zero points and clamp; then one
 * or two setups (batch 1..2, input 1..12 x 1..12, pixel strides with extra channels,
 * an offset input pointer) each followed by a run on the calling thread, a shuffled
 * parallel-for or gemmi8's pool. A geometry whose dilated kernel does not fit the
 * padded input must be refused by setup, writing nothing. Some inputs instead
 * replace one geometry field or size by 0 or a huge value: create or setup must then
 * refuse it (invalid or unsupported parameter) and leave *op, the output sizes and the
 * output untouched. One input in four makes the int32 operator of the layer instead
 * (gemmi8_<type>_convolution_create_s32): its outputs are the reference's
 * accumulators, its pixel stride in int32 elements.
 *
 * The input and weights are exact-size blocks (AddressSanitizer sees any read past
 * them); the output has canary bytes between pixels and guards around it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ref.h"

enum ctype { c_qu8, c_qu8_pc, c_qs8, c_qu8s8 };
static const char* const ctype_name[] = {"qu8", "qu8 per-channel b_zp", "qs8", "qu8s8"};

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

/* The output size along one side, or 0 when the dilated kernel does not fit. */
static size_t side(size_t in, size_t p0, size_t p1, size_t k, size_t d, size_t s)
{
  const size_t padded = in + p0 + p1, extent = (k - 1) * d + 1;
  return extent > padded ? 0 : (padded - extent) / s + 1;
}

static gemmi8_status create_s32(enum ctype t, const gemmi8_conv_geometry* g, const uint8_t* w,
                                int32_t a_zp, const uint8_t* b_zp, const int32_t* bias,
                                gemmi8_convolution** op)
{
  switch (t) {
    case c_qu8:
    case c_qu8_pc:
      return gemmi8_qu8_convolution_create_s32(g, w, (uint8_t) a_zp, b_zp, t == c_qu8_pc, bias, op);
    case c_qs8:
      return gemmi8_qs8_convolution_create_s32(g, (const int8_t*) w, (int8_t) a_zp, bias, op);
    default:
      return gemmi8_qu8s8_convolution_create_s32(g, (const int8_t*) w, (uint8_t) a_zp, bias, op);
  }
}

static gemmi8_status create(enum ctype t, const gemmi8_conv_geometry* g, const uint8_t* w,
                            int32_t a_zp, const uint8_t* b_zp, const int32_t* bias,
                            const gemmi8_requant* rq, gemmi8_convolution** op)
{
  switch (t) {
    case c_qu8:
    case c_qu8_pc:
      return gemmi8_qu8_convolution_create(g, w, (uint8_t) a_zp, b_zp, t == c_qu8_pc, bias, rq, op);
    case c_qs8:
      return gemmi8_qs8_convolution_create(g, (const int8_t*) w, (int8_t) a_zp, bias, rq, op);
    default:
      return gemmi8_qu8s8_convolution_create(g, (const int8_t*) w, (uint8_t) a_zp, bias, rq, op);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  struct fuzz_reader r;
  fuzz_reader_init(&r, data, size);
  const enum ctype type = (enum ctype) fuzz_range(&r, 0, 3);
  const int is_signed = type == c_qs8;
  const int32_t lo = is_signed ? -128 : 0;
  gemmi8_conv_geometry g;
  g.kernel_height = fuzz_range(&r, 1, 7);
  g.kernel_width = fuzz_range(&r, 1, 7);
  g.stride_height = fuzz_range(&r, 1, 4);
  g.stride_width = fuzz_range(&r, 1, 4);
  g.dilation_height = fuzz_range(&r, 1, 4);
  g.dilation_width = fuzz_range(&r, 1, 4);
  g.padding_top = fuzz_range(&r, 0, 8);
  g.padding_left = fuzz_range(&r, 0, 8);
  g.padding_bottom = fuzz_range(&r, 0, 8);
  g.padding_right = fuzz_range(&r, 0, 8);
  g.groups = fuzz_range(&r, 1, 4);
  g.group_input_channels = fuzz_range(&r, 1, 24);
  g.group_output_channels = fuzz_range(&r, 1, 40);
  if (fuzz_range(&r, 0, 3) == 0) { /* depthwise: 2..150 channels, multiplier 1..4 */
    g.groups = fuzz_range(&r, 2, 150);
    g.group_input_channels = 1;
    g.group_output_channels = fuzz_range(&r, 1, 4);
  }
  const size_t cin = g.groups * g.group_input_channels, cout = g.groups * g.group_output_channels;
  const size_t taps = g.kernel_height * g.kernel_width;
  const int32_t a_zp = fuzz_range_s32(&r, lo, lo + 255);
  const int fixedpoint = fuzz_range(&r, 0, 1) == 0;
  const int per_channel = (int) fuzz_range(&r, 0, 1);
  const size_t channels = per_channel ? cout : 1;
  void *w_block, *zp_block, *bias_block, *m_block, *s_block, *f_block;
  uint8_t* w = fuzz_exact(&r, cout * taps * g.group_input_channels, 0, &w_block);
  uint8_t* b_zp = fuzz_exact(&r, cout, 0, &zp_block);
  int32_t* bias = fuzz_exact(&r, cout * sizeof(int32_t), 0, &bias_block);
  const int with_bias = fuzz_range(&r, 0, 3) != 0;
  int32_t* mult = fuzz_exact(&r, channels * sizeof(int32_t), 0, &m_block);
  int32_t* shift = fuzz_exact(&r, channels * sizeof(int32_t), 0, &s_block);
  float* scale = fuzz_exact(&r, channels * sizeof(float), 0, &f_block);
  for (size_t j = 0; j < channels; j++) {
    mult[j] = fuzz_range_s32(&r, 1 << 29, INT32_MAX);
    shift[j] = fuzz_range_s32(&r, -20, 2);
    scale[j] = fuzz_f32_positive(&r);
  }
  gemmi8_requant rq;
  rq.mode = fixedpoint ? gemmi8_requant_fixedpoint : gemmi8_requant_fp32;
  rq.per_channel = per_channel;
  rq.multiplier = mult;
  rq.shift = shift;
  rq.scale = scale;
  rq.zero_point = fuzz_range_s32(&r, lo, lo + 255);
  rq.min = fuzz_range_s32(&r, lo, lo + 255);
  rq.max = fuzz_range_s32(&r, rq.min, lo + 255);
  const int s32 = fuzz_range(&r, 0, 3) == 0;
  const size_t out_elem = s32 ? sizeof(int32_t) : 1;
  /* a broken field (create must refuse), or none */
  const size_t broken = fuzz_range(&r, 0, 30);
  gemmi8_conv_geometry bad = g;
  size_t* fields = (size_t*) &bad;
  const size_t nfields = sizeof(bad) / sizeof(size_t);
  int expect_refusal = 0;
  if (broken < nfields) {
    const size_t value = fuzz_range(&r, 0, 3) == 0 ? 0 : SIZE_MAX - fuzz_range(&r, 0, 3);
    /* a padding of 0 is valid (a huge one overflows with the other side's); so is
     * a huge stride, and a huge dilation whose dilated kernel still fits size_t (the
     * setup refuses it then: it cannot fit the input) */
    const int valid = (value == 0 && broken >= 6 && broken <= 9) ||
                      (value != 0 && (broken == 2 || broken == 3)) ||
                      (value != 0 && broken == 4 &&
                       g.kernel_height - 1 <= (SIZE_MAX - 1) / value) ||
                      (value != 0 && broken == 5 && g.kernel_width - 1 <= (SIZE_MAX - 1) / value);
    if (!valid) {
      fields[broken] = value;
      if (broken >= 6 && broken <= 9) fields[broken < 8 ? broken + 2 : broken - 2] = SIZE_MAX;
      expect_refusal = 1;
    }
  }
  fuzz_describe("%s %s%s k%zux%zu s%zux%zu d%zux%zu pad %zu,%zu,%zu,%zu g%zu ci%zu co%zu%s",
                ctype_name[type], s32 ? "s32" : fixedpoint ? "fixedpoint" : "fp32",
                per_channel && !s32 ? " per-channel" : "", g.kernel_height, g.kernel_width,
                g.stride_height, g.stride_width, g.dilation_height, g.dilation_width,
                g.padding_top, g.padding_left, g.padding_bottom, g.padding_right, g.groups,
                g.group_input_channels, g.group_output_channels,
                expect_refusal ? " (a field broken)" : "");
  if (expect_refusal) fuzz_describe_more(": field %zu = %zu", broken, fields[broken]);
  gemmi8_convolution* const sentinel = (gemmi8_convolution*) (uintptr_t) 0x40;
  gemmi8_convolution* op = sentinel;
  if (expect_refusal) {
    const gemmi8_status st =
        s32 ? create_s32(type, &bad, w, a_zp, b_zp, with_bias ? bias : NULL, &op)
            : create(type, &bad, w, a_zp, b_zp, with_bias ? bias : NULL, &rq, &op);
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_invalid_parameter) |
                               FUZZ_BIT(gemmi8_status_unsupported_parameter), "create");
    if (op != sentinel) fuzz_fail("a refused create wrote *op");
  } else {
    gemmi8_status st = s32 ? create_s32(type, &g, w, a_zp, b_zp, with_bias ? bias : NULL, &op)
                           : create(type, &g, w, a_zp, b_zp, with_bias ? bias : NULL, &rq, &op);
    fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "create");
    size_t ind_bytes = 1, work_bytes = 1;
    fuzz_expect_status(gemmi8_convolution_memory(op, &ind_bytes, &work_bytes),
                       FUZZ_BIT(gemmi8_status_invalid_parameter), "memory before setup");
    /* the operator owns copies: the caller's arrays may change after create (the
     * reference uses the values of the call) */
    const size_t w_bytes = cout * taps * g.group_input_channels;
    uint8_t* w0 = malloc(w_bytes);
    int32_t* mult0 = malloc(channels * sizeof(int32_t));
    float* scale0 = malloc(channels * sizeof(float));
    memcpy(w0, w, w_bytes);
    memcpy(mult0, mult, channels * sizeof(int32_t));
    memcpy(scale0, scale, channels * sizeof(float));
    fuzz_fill_random(&r, w, w_bytes);
    fuzz_fill_random(&r, mult, channels * sizeof(int32_t));
    fuzz_fill_random(&r, scale, channels * sizeof(float));
    const size_t setups = fuzz_range(&r, 1, 2);
    for (size_t su = 0; su < setups; su++) {
      const size_t batch = fuzz_range(&r, 1, 2);
      const size_t ih = fuzz_range(&r, 1, 12), iw = fuzz_range(&r, 1, 12);
      const size_t in_stride = cin + fuzz_extra(&r, 7), out_stride = cout + fuzz_extra(&r, 7);
      const size_t in_offset = fuzz_range(&r, 0, in_stride - cin);
      const size_t pixels = batch * ih * iw;
      void* in_block;
      const uint8_t* in = fuzz_exact(&r, (pixels - 1) * in_stride + in_offset + cin, 0, &in_block);
      in += in_offset;
      const size_t oh = side(ih, g.padding_top, g.padding_bottom, g.kernel_height,
                             g.dilation_height, g.stride_height);
      const size_t ow = side(iw, g.padding_left, g.padding_right, g.kernel_width,
                             g.dilation_width, g.stride_width);
      const size_t m = batch * oh * ow;
      struct fuzz_out out;
      fuzz_out_init(&out, &r, (m > 0 ? (m - 1) * out_stride + cout : 1) * out_elem,
                    fuzz_range(&r, 0, 63) / out_elem * out_elem);
      size_t got_h = 12345, got_w = 12345;
      st = gemmi8_convolution_setup(op, batch, ih, iw, in, in_stride, out.data,
                                                  out_stride, &got_h, &got_w);
      fuzz_describe_more("; setup %zu: n%zu %zux%zu strides %zu/%zu", su, batch, ih, iw,
                         in_stride, out_stride);
      if (m == 0) {
        fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_invalid_parameter), "setup");
        if (got_h != 12345 || got_w != 12345) fuzz_fail("a refused setup wrote the sizes");
        fuzz_out_check_untouched(&out, "output");
      } else {
        fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "setup");
        if (got_h != oh || got_w != ow) fuzz_fail("output %zux%zu, want %zux%zu", got_h, got_w, oh, ow);
        fuzz_expect_status(gemmi8_convolution_memory(op, &ind_bytes, &work_bytes),
                           FUZZ_BIT(gemmi8_status_success), "memory");
        /* a pointer per pixel (rounded up to a tile of at most 8) and tap, or none; a
         * depthwise qu8 layer's tap up to three times (weights outside int8) */
        if (ind_bytes != 0 && (ind_bytes < m * sizeof(void*) ||
                               ind_bytes > 3 * (m + 7) * taps * sizeof(void*))) {
          fuzz_fail("%zu indirection bytes for %zu pixels x %zu taps", ind_bytes, m, taps);
        }
        struct fuzz_parallel shuffled;
        fuzz_parallel_init(&shuffled, &r, fuzz_range(&r, 2, 5));
        const size_t how = fuzz_range(&r, 0, 2);
        st = gemmi8_convolution_run(op, how == 0 ? NULL : how == 1 ? &shuffled.parallel
                                                                    : fuzz_parallel_pool());
        fuzz_expect_status(st, FUZZ_BIT(gemmi8_status_success), "run");
        fuzz_out_check_guards(&out, "output");
        fuzz_out_check_gaps(&out, m, cout * out_elem, out_stride * out_elem, "output");
        /* the reference, on the weights and parameters of the create call */
        int32_t* acc = malloc(m * cout * sizeof(int32_t));
        int32_t* zp = NULL;
        if (type == c_qu8 || type == c_qu8_pc) {
          zp = malloc(cout * sizeof(int32_t));
          for (size_t j = 0; j < cout; j++) zp[j] = b_zp[type == c_qu8_pc ? j : 0];
        }
        const struct ref_conv rc = {is_signed, type != c_qu8 && type != c_qu8_pc, batch, ih, iw,
                                    in_stride, g.kernel_height, g.kernel_width, g.stride_height,
                                    g.stride_width, g.dilation_height, g.dilation_width,
                                    g.padding_top, g.padding_left, g.groups,
                                    g.group_input_channels, g.group_output_channels, oh, ow};
        ref_conv_acc(&rc, in, w0, a_zp, zp, with_bias ? bias : NULL, acc);
        for (size_t p = 0; p < m && s32; p++) {
          for (size_t j = 0; j < cout; j++) {
            int32_t got;
            memcpy(&got, out.data + (p * out_stride + j) * sizeof(int32_t), sizeof(got));
            if (got != acc[p * cout + j]) {
              fuzz_fail("pixel %zu channel %zu: s32 %d, want %d", p, j, got, acc[p * cout + j]);
            }
          }
        }
        for (size_t p = 0; p < m && !s32; p++) {
          for (size_t j = 0; j < cout; j++) {
            const size_t q = per_channel ? j : 0;
            const int32_t want =
                fixedpoint ? ref_output_fixedpoint(acc[p * cout + j], mult0[q], shift[q],
                                                   rq.zero_point, rq.min, rq.max)
                           : ref_output_fp32(acc[p * cout + j], scale0[q], rq.zero_point, rq.min,
                                             rq.max);
            const uint8_t byte = out.data[p * out_stride + j];
            const int32_t got = is_signed ? (int32_t) (int8_t) byte : (int32_t) byte;
            if (got != want) {
              fuzz_fail("pixel %zu channel %zu: %d, want %d (acc %d)", p, j, got, want,
                        acc[p * cout + j]);
            }
          }
        }
        free(zp);
        free(acc);
      }
      fuzz_out_free(&out);
      free(in_block);
    }
    gemmi8_convolution_destroy(op);
    free(w0);
    free(mult0);
    free(scale0);
  }
  free(w_block);
  free(zp_block);
  free(bias_block);
  free(m_block);
  free(s_block);
  free(f_block);
  return 0;
}
