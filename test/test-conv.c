/*
 * Convolution (group "conv"): gemmi8_<type>_convolution_create / setup / run against
 * a direct seven-loop reference written from the definition, for qu8 (per-tensor and
 * per-channel weight zero points), qs8 and qu8s8, both requantization modes, per-tensor
 * and per-channel scales; geometries: kernels 1..7 and non-square, strides and
 * dilations 1..3, asymmetric padding up to the kernel size, groups with channel counts
 * off every tile, batches, 1x1 and 1xW images, channel slices of wider tensors. Each
 * case runs on the calling thread, on a shuffled caller's parallel-for and on a
 * gemmi8 pool of two, and must leave every byte outside its outputs as it was; the
 * int32 operator of the layer (create_s32) must then give the reference's accumulators
 * the same three ways. Then the path each geometry takes, the depth limit (the layer's
 * real K, on every kernel set), outputs that overlap the input, setup reuse and the
 * bad-input contract.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h" /* gemmi8_convolution_path(): the path create chose */
#include "ref.h"
#include "test.h"

enum { C_QU8, C_QU8_PC, C_QS8, C_QU8S8, C_KINDS };
static const char* const kind_names[] = {"qu8", "qu8-pc", "qs8", "qu8s8"};

typedef struct ccase {
  size_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, groups, ci, co;
  size_t batch, ih, iw;
  size_t in_extra, out_extra; /* channels of the wider tensors around the slice */
} ccase;

/* The accumulators, m x (groups * co), from the definition (ref.c). */
static void ref_conv(const ccase* c, int kind, const uint8_t* in, size_t in_stride,
                     const uint8_t* w, int32_t a_zp, const uint8_t* b_zp, const int32_t* bias,
                     size_t oh, size_t ow, int32_t* acc)
{
  const struct ref_conv rc = {kind == C_QS8, kind == C_QS8 || kind == C_QU8S8, c->batch, c->ih,
                              c->iw, in_stride, c->kh, c->kw, c->sh, c->sw, c->dh, c->dw, c->pt,
                              c->pl, c->groups, c->ci, c->co, oh, ow};
  const size_t cout = c->groups * c->co;
  int32_t* zp = NULL;
  if (kind == C_QU8 || kind == C_QU8_PC) {
    zp = t_alloc(cout * sizeof(int32_t));
    for (size_t j = 0; j < cout; j++) zp[j] = b_zp[kind == C_QU8_PC ? j : 0];
  }
  ref_conv_acc(&rc, in, w, a_zp, zp, bias, acc);
  free(zp);
}

static gemmi8_status create(int kind, const gemmi8_conv_geometry* g, const uint8_t* w,
                            int32_t a_zp, const uint8_t* b_zp, const int32_t* bias,
                            const gemmi8_requant* rq, gemmi8_convolution** op)
{
  switch (kind) {
    case C_QU8:
    case C_QU8_PC:
      return gemmi8_qu8_convolution_create(g, w, (uint8_t) a_zp, b_zp, kind == C_QU8_PC, bias, rq, op);
    case C_QS8:
      return gemmi8_qs8_convolution_create(g, (const int8_t*) w, (int8_t) a_zp, bias, rq, op);
    default:
      return gemmi8_qu8s8_convolution_create(g, (const int8_t*) w, (uint8_t) a_zp, bias, rq, op);
  }
}

static gemmi8_status create_s32(int kind, const gemmi8_conv_geometry* g, const uint8_t* w,
                                int32_t a_zp, const uint8_t* b_zp, const int32_t* bias,
                                gemmi8_convolution** op)
{
  switch (kind) {
    case C_QU8:
    case C_QU8_PC:
      return gemmi8_qu8_convolution_create_s32(g, w, (uint8_t) a_zp, b_zp, kind == C_QU8_PC, bias, op);
    case C_QS8:
      return gemmi8_qs8_convolution_create_s32(g, (const int8_t*) w, (int8_t) a_zp, bias, op);
    default:
      return gemmi8_qu8s8_convolution_create_s32(g, (const int8_t*) w, (uint8_t) a_zp, bias, op);
  }
}

static gemmi8_conv_geometry geometry_of(const ccase* c)
{
  gemmi8_conv_geometry g = {c->kh, c->kw, c->sh, c->sw, c->dh, c->dw, c->pt, c->pl,
                            c->pb, c->pr, c->groups, c->ci, c->co};
  return g;
}

/* ---- a caller's parallel-for: tasks in a shuffled order ---------------------------- */

static void shuffled_for(void* context, gemmi8_task_fn task, void* task_context, size_t count)
{
  (void) context;
  size_t* order = t_alloc(count * sizeof(size_t));
  for (size_t i = 0; i < count; i++) order[i] = i;
  for (size_t i = count; i > 1; i--) {
    const size_t j = t_below((uint32_t) i), tmp = order[i - 1];
    order[i - 1] = order[j];
    order[j] = tmp;
  }
  for (size_t i = 0; i < count; i++) task(task_context, order[i]);
  free(order);
}

/* ---- one case ----------------------------------------------------------------------- */

static void describe(const ccase* c, int kind, int mode, int per_channel, char* s, size_t n)
{
  snprintf(s, n,
           "%s %s%s k%zux%zu s%zux%zu d%zux%zu pad %zu,%zu,%zu,%zu g%zu ci%zu co%zu n%zu %zux%zu "
           "slices +%zu/+%zu",
           kind_names[kind], mode == 0 ? "fixedpoint" : "fp32", per_channel ? " per-channel" : "",
           c->kh, c->kw, c->sh, c->sw, c->dh, c->dw, c->pt, c->pl, c->pb, c->pr, c->groups, c->ci,
           c->co, c->batch, c->ih, c->iw, c->in_extra, c->out_extra);
}

static void run_case(const ccase* c, int kind, int mode, int per_channel, gemmi8_threadpool* pool)
{
  const int a_signed = kind == C_QS8;
  const size_t cin = c->groups * c->ci, cout = c->groups * c->co;
  const size_t ks = c->kh * c->kw;
  const size_t oh = (c->ih + c->pt + c->pb - (c->kh - 1) * c->dh - 1) / c->sh + 1;
  const size_t ow = (c->iw + c->pl + c->pr - (c->kw - 1) * c->dw - 1) / c->sw + 1;
  const size_t m = c->batch * oh * ow;
  const size_t in_stride = cin + c->in_extra, out_stride = cout + c->out_extra;
  const size_t in_offset = c->in_extra / 2, out_offset = c->out_extra / 2;
  const size_t pixels = c->batch * c->ih * c->iw;
  /* exactly the bytes up to the last channel read: a read past it is an ASan error */
  const size_t in_bytes = (pixels - 1) * in_stride + in_offset + cin;
  uint8_t* in_mem = t_alloc(in_bytes);
  t_fill_random(in_mem, in_bytes);
  const uint8_t* in = in_mem + in_offset;
  uint8_t* w = t_alloc(cout * ks * c->ci);
  t_fill_random(w, cout * ks * c->ci);
  const int32_t a_zp = a_signed ? (int32_t) t_range(-128, 127) : (int32_t) t_range(0, 255);
  uint8_t b_zp[4096];
  for (size_t j = 0; j < cout; j++) b_zp[j] = (uint8_t) t_range(0, 255);
  int32_t* bias = NULL;
  if (t_below(4) != 0) {
    bias = t_alloc(cout * sizeof(int32_t));
    for (size_t j = 0; j < cout; j++) bias[j] = (int32_t) t_range(-50000, 50000);
  }
  int32_t* acc = t_alloc(m * cout * sizeof(int32_t));
  ref_conv(c, kind, in, in_stride, w, a_zp, b_zp, bias, oh, ow, acc);
  /* scales from the accumulator range, so that outputs span the 8-bit range */
  int64_t top = 1;
  for (size_t i = 0; i < m * cout; i++) {
    const int64_t v = acc[i] < 0 ? -(int64_t) acc[i] : acc[i];
    if (v > top) top = v;
  }
  const size_t channels = per_channel ? cout : 1;
  float* scale = t_alloc(channels * sizeof(float));
  double* dscale = t_alloc(channels * sizeof(double));
  int32_t* mult = t_alloc(channels * sizeof(int32_t));
  int32_t* shift = t_alloc(channels * sizeof(int32_t));
  for (size_t j = 0; j < channels; j++) {
    dscale[j] = 160.0 / (double) top * (0.5 + 1.5 * t_unit());
    scale[j] = (float) dscale[j];
  }
  if (gemmi8_quantize_multipliers(channels, dscale, mult, shift) != gemmi8_status_success) {
    t_fail(__func__, "quantize_multipliers");
  }
  const int32_t lo = a_signed ? -128 : 0;
  gemmi8_requant rq = {mode == 0 ? gemmi8_requant_fixedpoint : gemmi8_requant_fp32,
                       per_channel, mult, shift, scale,
                       (int32_t) t_range(lo + 64, lo + 191), lo + (int32_t) t_range(0, 20),
                       lo + 255 - (int32_t) t_range(0, 20)};
  uint8_t* expected = t_alloc(m * cout);
  for (size_t p = 0; p < m; p++) {
    for (size_t j = 0; j < cout; j++) {
      const size_t q = per_channel ? j : 0;
      const int32_t v = mode == 0 ? ref_output_fixedpoint(acc[p * cout + j], mult[q], shift[q],
                                                          rq.zero_point, rq.min, rq.max)
                                  : ref_output_fp32(acc[p * cout + j], scale[q], rq.zero_point,
                                                    rq.min, rq.max);
      expected[p * cout + j] = (uint8_t) v;
    }
  }
  t_out want;
  t_out_init(&want, a_signed ? T_S8 : T_U8, m, out_stride, out_stride);
  char what[256];
  describe(c, kind, mode, per_channel, what, sizeof(what));
  gemmi8_convolution* op = NULL;
  gemmi8_status st = create(kind, &(gemmi8_conv_geometry){0}, w, a_zp, b_zp, bias, &rq, &op);
  t_expect(st == gemmi8_status_invalid_parameter && op == NULL, __func__,
           "%s: zero geometry gave %s", what, gemmi8_status_string(st));
  const gemmi8_conv_geometry geom = geometry_of(c);
  st = create(kind, &geom, w, a_zp, b_zp, bias, &rq, &op);
  if (!t_expect(st == gemmi8_status_success, __func__, "%s: create %s", what,
                gemmi8_status_string(st))) {
    goto done;
  }
  /* the int32 operator of the same layer */
  gemmi8_convolution* op32 = NULL;
  st = create_s32(kind, &geom, w, a_zp, b_zp, bias, &op32);
  t_expect(st == gemmi8_status_success, __func__, "%s: create_s32 %s", what,
           gemmi8_status_string(st));
  /* the weights, zero points and requantization arrays are copied */
  t_fill_random(w, cout * ks * c->ci);
  memset(mult, 0, channels * sizeof(int32_t));
  memset(scale, 0, channels * sizeof(float));
  gemmi8_parallel shuffled = {shuffled_for, NULL, 3}, pooled;
  gemmi8_threadpool_parallel(pool, &pooled);
  const gemmi8_parallel* ways[] = {NULL, &shuffled, &pooled};
  const char* way_names[] = {"calling thread", "shuffled parallel-for", "pool of 2"};
  for (size_t way = 0; way < T_COUNT(ways); way++) {
    t_out_refill(&want);
    for (size_t p = 0; p < m; p++) {
      memcpy(t_out_want(&want, p, out_offset), expected + p * cout, cout);
    }
    size_t got_h = 0, got_w = 0;
    st = gemmi8_convolution_setup(op, c->batch, c->ih, c->iw, in, in_stride,
                                  (uint8_t*) want.body + out_offset, out_stride, &got_h, &got_w);
    if (!t_expect(st == gemmi8_status_success && got_h == oh && got_w == ow, __func__,
                  "%s: setup %s, %zux%zu for %zux%zu", what, gemmi8_status_string(st), got_h,
                  got_w, oh, ow)) {
      break;
    }
    const int depthwise = c->groups > 1 && c->ci == 1;
    if (way == 0 && depthwise) {
      size_t ind_bytes = 1, work_bytes = 1;
      const gemmi8_status mst = gemmi8_convolution_memory(op, &ind_bytes, &work_bytes);
      /* a pointer per output pixel and tap (qu8: up to three per tap, for weights
       * that are not int8 once their zero point is taken off), and with a multiplier
       * the input with its channels repeated */
      const size_t most_ind = 3 * m * ks * sizeof(void*);
      const size_t most_work = c->co > 1 ? c->batch * c->ih * c->iw * cout : 0;
      t_expect(mst == gemmi8_status_success && ind_bytes >= m * ks * sizeof(void*) &&
                   ind_bytes <= most_ind && work_bytes <= most_work,
               __func__, "%s: a depthwise layer holds %zu + %zu bytes", what, ind_bytes,
               work_bytes);
    }
    if (way == 0 && !depthwise && c->kh == 1 && c->kw == 1 && c->sh == 1 && c->sw == 1 &&
        c->pt + c->pl + c->pb + c->pr == 0) {
      size_t ind_bytes = 1, work_bytes = 1;
      const gemmi8_status mst = gemmi8_convolution_memory(op, &ind_bytes, &work_bytes);
      /* no indirection buffer; at most the row sums of each pixel and group, and the
       * packed panels of the input (some kernel sets) */
      const size_t most = c->groups * (m + 8) * (sizeof(int32_t) + (c->ci + 15) / 16 * 16) + 64;
      t_expect(mst == gemmi8_status_success && ind_bytes == 0 && work_bytes <= most, __func__,
               "%s: a 1x1 stride-1 layer holds %zu + %zu bytes", what, ind_bytes, work_bytes);
    }
    st = gemmi8_convolution_run(op, ways[way]);
    char msg[256];
    size_t row, col;
    if (st != gemmi8_status_success) {
      t_fail(__func__, "%s on %s: run %s", what, way_names[way], gemmi8_status_string(st));
    } else if (!t_out_same(&want, msg, sizeof(msg), &row, &col)) {
      t_fail(__func__, "%s on %s: %s", what, way_names[way], msg);
    } else {
      t_pass();
    }
  }
  /* int32 outputs: the accumulators themselves, pixel stride in int32 elements */
  t_out want32;
  t_out_init(&want32, T_S32, m, out_stride, out_stride);
  for (size_t way = 0; way < T_COUNT(ways) && op32 != NULL; way++) {
    t_out_refill(&want32);
    for (size_t p = 0; p < m; p++) {
      memcpy(t_out_want(&want32, p, out_offset), acc + p * cout, cout * sizeof(int32_t));
    }
    size_t got_h = 0, got_w = 0;
    st = gemmi8_convolution_setup(op32, c->batch, c->ih, c->iw, in, in_stride,
                                  (int32_t*) want32.body + out_offset, out_stride, &got_h, &got_w);
    if (!t_expect(st == gemmi8_status_success && got_h == oh && got_w == ow, __func__,
                  "%s s32: setup %s, %zux%zu for %zux%zu", what, gemmi8_status_string(st), got_h,
                  got_w, oh, ow)) {
      break;
    }
    st = gemmi8_convolution_run(op32, ways[way]);
    char msg[256];
    size_t row, col;
    if (st != gemmi8_status_success) {
      t_fail(__func__, "%s s32 on %s: run %s", what, way_names[way], gemmi8_status_string(st));
    } else if (!t_out_same(&want32, msg, sizeof(msg), &row, &col)) {
      t_fail(__func__, "%s s32 on %s: %s", what, way_names[way], msg);
    } else {
      t_pass();
    }
  }
  t_out_free(&want32);
  gemmi8_convolution_destroy(op32);
  gemmi8_convolution_destroy(op);
done:
  t_out_free(&want);
  free(in_mem);
  free(w);
  free(bias);
  free(acc);
  free(expected);
  free(scale);
  free(dscale);
  free(mult);
  free(shift);
}

/* ---- the sweep ---------------------------------------------------------------------- */

static ccase random_case(void)
{
  ccase c;
  memset(&c, 0, sizeof(c));
  c.kh = (size_t) t_range(1, 7);
  c.kw = t_below(3) == 0 ? c.kh : (size_t) t_range(1, 7);
  c.sh = (size_t) t_range(1, 3);
  c.sw = t_below(2) ? c.sh : (size_t) t_range(1, 3);
  c.dh = t_below(3) ? 1 : (size_t) t_range(1, 3);
  c.dw = t_below(3) ? 1 : (size_t) t_range(1, 3);
  c.pt = (size_t) t_range(0, (int64_t) c.kh);
  c.pb = (size_t) t_range(0, (int64_t) c.kh);
  c.pl = (size_t) t_range(0, (int64_t) c.kw);
  c.pr = (size_t) t_range(0, (int64_t) c.kw);
  c.groups = t_below(3) == 0 ? (size_t) t_range(2, 4) : 1;
  c.ci = (size_t) t_range(1, 40);
  c.co = (size_t) t_range(1, 70);
  if (t_below(3) == 0) { /* depthwise: channels around the kernels' tiles, multiplier 1-4 */
    c.groups = (size_t) t_range(2, 150);
    c.ci = 1;
    c.co = t_below(2) ? 1 : (size_t) t_range(2, 4);
  }
  c.batch = (size_t) t_range(1, 2);
  const size_t ekh = (c.kh - 1) * c.dh + 1, ekw = (c.kw - 1) * c.dw + 1;
  const size_t min_h = ekh > c.pt + c.pb ? ekh - c.pt - c.pb : 1;
  const size_t min_w = ekw > c.pl + c.pr ? ekw - c.pl - c.pr : 1;
  c.ih = min_h + (size_t) t_range(0, 9);
  c.iw = min_w + (size_t) t_range(0, 9);
  c.in_extra = t_below(2) ? 0 : (size_t) t_range(1, 9);
  c.out_extra = t_below(2) ? 0 : (size_t) t_range(1, 9);
  return c;
}

static const ccase fixed_cases[] = {
    /* kh kw sh sw dh dw pt pl pb pr g ci co  n ih iw  slices */
    {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 16, 48, 1, 9, 9, 0, 0},     /* ResNet 3x3 */
    {1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 24, 50, 1, 7, 7, 0, 0},     /* 1x1: the GEMM */
    {1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3, 5, 7, 2, 4, 5, 3, 2},       /* grouped 1x1, slices */
    {1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 16, 32, 1, 8, 8, 0, 0},     /* 1x1 stride 2 */
    {7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1, 3, 64, 1, 20, 20, 1, 0},    /* first layer */
    {1, 7, 1, 1, 1, 1, 0, 3, 0, 3, 1, 9, 20, 1, 5, 11, 0, 0},     /* 1x7 */
    {7, 1, 1, 1, 1, 1, 3, 0, 3, 0, 1, 9, 20, 1, 11, 5, 0, 0},     /* 7x1 */
    {1, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 8, 8, 1, 1, 3, 0, 0},       /* 1xW, kernel = input */
    {3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1, 8, 8, 2, 1, 9, 0, 0},       /* 1xW images */
    {1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 8, 8, 1, 1, 1, 0, 0},       /* a 1x1 image */
    {3, 3, 1, 1, 1, 1, 3, 3, 3, 3, 1, 4, 10, 1, 2, 2, 0, 0},      /* padding as large as the kernel */
    {3, 3, 2, 3, 3, 2, 2, 0, 1, 3, 2, 13, 17, 2, 12, 13, 2, 5},   /* everything at once */
    {5, 5, 1, 1, 2, 2, 4, 4, 4, 4, 4, 6, 9, 1, 6, 6, 0, 3},       /* dilated, grouped */
    {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, 1, 1, 1, 5, 5, 0, 0},       /* depthwise */
    {3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6, 1, 3, 1, 9, 9, 0, 2},       /* depthwise, multiplier 3 */
    {1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 16, 1, 2, 2, 3, 3, 1, 0},      /* depthwise 1x1 */
    {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 64, 100, 1, 14, 14, 0, 0},  /* several column blocks */
    /* depthwise: channels below, at, above and far above a zmm of bytes */
    {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 64, 1, 1, 1, 7, 7, 0, 0},      /* 3x3, 64 channels */
    {3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 65, 1, 1, 2, 8, 9, 0, 3},      /* stride 2, asymmetric */
    {5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 130, 1, 1, 1, 6, 7, 5, 0},     /* 5x5, slices */
    {5, 5, 2, 2, 1, 1, 1, 2, 2, 1, 200, 1, 1, 1, 9, 9, 0, 0},     /* 5x5 stride 2 */
    {3, 3, 1, 1, 3, 2, 3, 2, 1, 0, 15, 1, 1, 2, 7, 6, 1, 1},      /* dilated 3x2 */
    {3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 24, 1, 4, 1, 5, 6, 0, 0},      /* multiplier 4 */
    {3, 3, 2, 1, 2, 1, 2, 1, 2, 1, 17, 1, 2, 2, 1, 9, 0, 2},      /* 1xW images, multiplier 2 */
    {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 96, 1, 1, 1, 1, 1, 0, 0},      /* a 1x1 image */
    {2, 4, 1, 1, 1, 1, 0, 2, 1, 1, 33, 1, 1, 1, 5, 5, 0, 0},      /* 8 taps: any count */
    {1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 70, 1, 1, 1, 5, 5, 0, 0},      /* 1x1 stride 2 */
    {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, 1, 1, 2, 11, 13, 0, 0},    /* 16: runs of pixels */
    {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, 1, 1, 1, 9, 10, 0, 5},     /* 16, output slices */
    {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, 1, 1, 2, 7, 11, 0, 0},     /* 32: runs of pixels */
    {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, 1, 1, 1, 6, 9, 0, 3},      /* 32, output slices */
    /* depthwise 3x3 by pairs of rows, large enough for tasks on two threads: one image
     * (tasks of whole rows, odd ones among them), one of odd height, two images */
    {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 160, 1, 1, 1, 14, 14, 0, 0},
    {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 150, 1, 1, 1, 15, 13, 0, 3},
    {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 144, 1, 1, 2, 12, 9, 2, 0},
};

static void sweep(gemmi8_threadpool* pool)
{
  for (size_t i = 0; i < T_COUNT(fixed_cases); i++) {
    for (int kind = 0; kind < C_KINDS; kind++) {
      run_case(&fixed_cases[i], kind, (int) t_below(2), (int) t_below(2), pool);
    }
  }
  const size_t random_cases = t_quick ? 12 : 60;
  for (size_t i = 0; i < random_cases; i++) {
    const ccase c = random_case();
    run_case(&c, (int) t_below(C_KINDS), (int) t_below(2), (int) t_below(2), pool);
  }
}

/* ---- setup reuse ---------------------------------------------------------------------- */

/* Runs after the input changes in place (same setup), after a new input pointer and
 * after a new output pointer: every run equals a fresh operator's. */
static void setup_reuse(void)
{
  const ccase c = {3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1, 10, 20, 1, 7, 8, 0, 0};
  const gemmi8_conv_geometry g = geometry_of(&c);
  const size_t cin = 10, cout = 20, pixels = 56;
  uint8_t* in1 = t_alloc(pixels * cin);
  uint8_t* in2 = t_alloc(pixels * cin);
  uint8_t* w = t_alloc(cout * 9 * cin);
  t_fill_random(in1, pixels * cin);
  t_fill_random(in2, pixels * cin);
  t_fill_random(w, cout * 9 * cin);
  const int32_t mult = 1 << 30, shift = -8;
  const gemmi8_requant rq = {gemmi8_requant_fixedpoint, 0, &mult, &shift, NULL, 128, 0, 255};
  const uint8_t b_zp = 120;
  gemmi8_convolution *op = NULL, *fresh = NULL;
  if (gemmi8_qu8_convolution_create(&g, w, 100, &b_zp, 0, NULL, &rq, &op) != gemmi8_status_success ||
      gemmi8_qu8_convolution_create(&g, w, 100, &b_zp, 0, NULL, &rq, &fresh) != gemmi8_status_success) {
    t_fail(__func__, "create");
    return;
  }
  uint8_t out[7 * 4 * 20], out2[7 * 4 * 20], ref[7 * 4 * 20];
  size_t oh, ow;
  gemmi8_convolution_setup(op, 1, 7, 8, in1, cin, out, cout, &oh, &ow);
  gemmi8_convolution_run(op, NULL);
  /* in place change of the input */
  memcpy(in1, in2, pixels * cin);
  gemmi8_convolution_run(op, NULL);
  gemmi8_convolution_setup(fresh, 1, 7, 8, in2, cin, ref, cout, &oh, &ow);
  gemmi8_convolution_run(fresh, NULL);
  t_expect(memcmp(out, ref, sizeof(out)) == 0, __func__, "input changed in place");
  /* new input pointer, new output pointer */
  t_fill_random(in2, pixels * cin);
  gemmi8_convolution_setup(op, 1, 7, 8, in2, cin, out2, cout, &oh, &ow);
  gemmi8_convolution_run(op, NULL);
  gemmi8_convolution_run(fresh, NULL);
  t_expect(memcmp(out2, ref, sizeof(out2)) == 0, __func__, "new input and output pointers");
  gemmi8_convolution_destroy(op);
  gemmi8_convolution_destroy(fresh);
  free(in1);
  free(in2);
  free(w);
}

/* ---- paths ------------------------------------------------------------------------------ */

/* Create chooses the path once: direct for 1x1 stride 1 without padding, igemm for the
 * rest; a depthwise geometry (groups > 1, one input channel a group, any multiplier,
 * 1x1 too) takes the depthwise path. */
static void paths_chosen(void)
{
  const struct {
    ccase c;
    enum gemmi8_conv_path path;
    int depthwise;
  } cases[] = {
      {{1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 24, 50, 1, 7, 7, 0, 0}, gemmi8_conv_path_direct, 0},
      {{1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3, 5, 7, 1, 7, 7, 0, 0}, gemmi8_conv_path_direct, 0},
      {{1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 16, 32, 1, 8, 8, 0, 0}, gemmi8_conv_path_igemm, 0},
      {{1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 16, 32, 1, 8, 8, 0, 0}, gemmi8_conv_path_igemm, 0},
      {{3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 16, 48, 1, 9, 9, 0, 0}, gemmi8_conv_path_igemm, 0},
      {{3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 8, 1, 9, 9, 0, 0}, gemmi8_conv_path_igemm, 0},
      {{3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 144, 1, 1, 1, 9, 9, 0, 0}, gemmi8_conv_path_depthwise, 1},
      {{3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6, 1, 3, 1, 9, 9, 0, 0}, gemmi8_conv_path_depthwise, 1},
      {{1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 16, 1, 2, 1, 3, 3, 0, 0}, gemmi8_conv_path_depthwise, 1},
      {{5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 72, 1, 1, 1, 9, 9, 0, 0}, gemmi8_conv_path_depthwise, 1},
      {{3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, 2, 2, 1, 9, 9, 0, 0}, gemmi8_conv_path_igemm, 0},
  };
  const int32_t mult = 1 << 30, shift = -8;
  const gemmi8_requant rq = {gemmi8_requant_fixedpoint, 0, &mult, &shift, NULL, 0, -128, 127};
  for (size_t i = 0; i < T_COUNT(cases); i++) {
    const ccase* c = &cases[i].c;
    const gemmi8_conv_geometry g = geometry_of(c);
    const size_t bytes = c->groups * c->co * c->kh * c->kw * c->ci;
    int8_t* w = t_alloc(bytes);
    memset(w, 1, bytes);
    gemmi8_convolution *op = NULL, *op32 = NULL;
    const gemmi8_status st = gemmi8_qs8_convolution_create(&g, w, 0, NULL, &rq, &op);
    if (t_expect(st == gemmi8_status_success, __func__, "case %zu: create %s", i,
                 gemmi8_status_string(st))) {
      int depthwise = -1;
      const enum gemmi8_conv_path path = gemmi8_convolution_path(op, &depthwise);
      t_expect(path == cases[i].path && depthwise == cases[i].depthwise, __func__,
               "case %zu: path %d depthwise %d, want %d %d", i, (int) path, depthwise,
               (int) cases[i].path, cases[i].depthwise);
    }
    const gemmi8_status st32 = gemmi8_qs8_convolution_create_s32(&g, w, 0, NULL, &op32);
    if (t_expect(st32 == gemmi8_status_success, __func__, "case %zu: create_s32 %s", i,
                 gemmi8_status_string(st32))) {
      int depthwise = -1;
      t_expect(gemmi8_convolution_path(op32, &depthwise) == cases[i].path &&
                   depthwise == cases[i].depthwise,
               __func__, "case %zu: s32 path", i);
    }
    gemmi8_convolution_destroy(op);
    gemmi8_convolution_destroy(op32);
    free(w);
  }
}

/* ---- the depth limit -------------------------------------------------------------------- */

/* A 3x3 layer of ci channels (co = 2), 3x3 input with padding 1: the middle pixel
 * reads every tap. Extreme values (each product the largest of its sign) make the
 * sums of the middle pixel as large as the limit allows. Returns create's status; on
 * success the outputs must equal the reference's. */
static gemmi8_status limit_case(int kind, size_t ci, int s32)
{
  const ccase c = {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, ci, 2, 1, 3, 3, 0, 0};
  const gemmi8_conv_geometry g = geometry_of(&c);
  const int a_signed = kind == C_QS8;
  const size_t k = 9 * ci, pixels = 9;
  uint8_t* in = t_alloc(pixels * ci);
  uint8_t* w = t_alloc(2 * k);
  uint8_t b_zp[2] = {255, 0};
  int32_t a_zp;
  if (kind == C_QS8) { /* (-128 - 127) * -128 and * 127 */
    memset(in, 0x80, pixels * ci);
    a_zp = 127;
    memset(w, 0x80, k);
    memset(w + k, 127, k);
  } else if (kind == C_QU8_PC) { /* 255 * (0 - 255) and 255 * (255 - 0) */
    memset(in, 255, pixels * ci);
    a_zp = 0;
    memset(w, 0, k);
    memset(w + k, 255, k);
  } else { /* qu8s8: 255 * -128 and 255 * 127 */
    memset(in, 255, pixels * ci);
    a_zp = 0;
    memset(w, 0x80, k);
    memset(w + k, 127, k);
  }
  int32_t acc[9 * 2];
  ref_conv(&c, kind, in, ci, w, a_zp, b_zp, NULL, 3, 3, acc);
  const int32_t mult = 1 << 30, shift = -24; /* acc / 2^25 */
  const int32_t lo = a_signed ? -128 : 0;
  const gemmi8_requant rq = {gemmi8_requant_fixedpoint, 0, &mult, &shift, NULL, lo + 128, lo,
                             lo + 255};
  gemmi8_convolution* op = NULL;
  gemmi8_status st;
  if (s32) {
    /* the int32 outputs: every bit of the sums */
    st = create_s32(kind, &g, w, a_zp, b_zp, NULL, &op);
    if (st == gemmi8_status_success) {
      int32_t out[9 * 2];
      size_t oh, ow;
      const gemmi8_status sst = gemmi8_convolution_setup(op, 1, 3, 3, in, ci, out, 2, &oh, &ow);
      const gemmi8_status rst = gemmi8_convolution_run(op, NULL);
      t_expect(sst == gemmi8_status_success && rst == gemmi8_status_success &&
                   memcmp(out, acc, sizeof(out)) == 0,
               __func__, "%s s32 3x3x%zu: middle pixel %d %d, want %d %d", kind_names[kind], ci,
               out[8], out[9], acc[8], acc[9]);
      gemmi8_convolution_destroy(op);
    }
    free(in);
    free(w);
    return st;
  }
  st = create(kind, &g, w, a_zp, b_zp, NULL, &rq, &op);
  if (st == gemmi8_status_success) {
    uint8_t out[9 * 2];
    size_t oh, ow;
    const gemmi8_status sst = gemmi8_convolution_setup(op, 1, 3, 3, in, ci, out, 2, &oh, &ow);
    const gemmi8_status rst = gemmi8_convolution_run(op, NULL);
    int same = sst == gemmi8_status_success && rst == gemmi8_status_success;
    for (size_t i = 0; i < 18 && same; i++) {
      const int32_t want = ref_output_fixedpoint(acc[i], mult, shift, rq.zero_point, rq.min, rq.max);
      same = (a_signed ? (int32_t) (int8_t) out[i] : (int32_t) out[i]) == want;
    }
    t_expect(same, __func__, "%s 3x3x%zu: outputs differ from the reference", kind_names[kind], ci);
    gemmi8_convolution_destroy(op);
  }
  free(in);
  free(w);
  return st;
}

/* The limit is the layer's: taps x ci within the type's MAX_K is created on every
 * kernel set (however its kernels pad each tap), one channel more is not. 3x3x7309
 * qs8 was refused on avx512vnni and generic, 3x3x3668 qu8 on aarch64 neon. */
static void depth_limit(void)
{
  const struct {
    int kind;
    size_t max_k, ci;
  } cases[] = {
      {C_QS8, GEMMI8_QS8_MAX_K, 7309},
      {C_QU8_PC, GEMMI8_QU8_MAX_K, 3668},
      {C_QU8S8, GEMMI8_QU8S8_MAX_K, 7309},
  };
  for (size_t i = 0; i < T_COUNT(cases); i++) {
    const int kind = cases[i].kind;
    const size_t top = cases[i].max_k / 9;
    const size_t cis[] = {cases[i].ci, top};
    for (int s32 = 0; s32 < 2; s32++) {
      for (size_t j = 0; j < T_COUNT(cis); j++) {
        const gemmi8_status st = limit_case(kind, cis[j], s32);
        t_expect(st == gemmi8_status_success, __func__, "%s%s 3x3x%zu (K %zu <= %zu): %s",
                 kind_names[kind], s32 ? " s32" : "", cis[j], 9 * cis[j], cases[i].max_k,
                 gemmi8_status_string(st));
      }
      const gemmi8_status st = limit_case(kind, top + 1, s32);
      t_expect(st == gemmi8_status_unsupported_parameter, __func__,
               "%s%s 3x3x%zu (K %zu > %zu): %s", kind_names[kind], s32 ? " s32" : "", top + 1,
               9 * (top + 1), cases[i].max_k, gemmi8_status_string(st));
    }
  }
}

/* ---- in place ----------------------------------------------------------------------------- */

/* An output that overlaps the input is refused at setup (it returned success with
 * wrong bytes: 4,096 of 8,192 on this 1x1 layer on avx2), the operator left as it
 * was; an output that ends where the input starts, or starts where it ends, is not. */
static void in_place(void)
{
  const ccase c = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 32, 32, 1, 16, 16, 0, 0};
  const gemmi8_conv_geometry g = geometry_of(&c);
  const size_t bytes = 256 * 32;
  uint8_t* mem = t_alloc(3 * bytes);
  uint8_t* w = t_alloc(32 * 32);
  t_fill_random(mem, 3 * bytes);
  t_fill_random(w, 32 * 32);
  uint8_t* in = mem + bytes;
  const int32_t mult = 1 << 30, shift = -10;
  const gemmi8_requant rq = {gemmi8_requant_fixedpoint, 0, &mult, &shift, NULL, 128, 0, 255};
  const uint8_t b_zp = 128;
  gemmi8_convolution* op = NULL;
  if (gemmi8_qu8_convolution_create(&g, w, 128, &b_zp, 0, NULL, &rq, &op) != gemmi8_status_success) {
    t_fail(__func__, "create");
    free(mem);
    free(w);
    return;
  }
  const struct {
    ptrdiff_t offset; /* of the output from the input */
    size_t out_stride;
    gemmi8_status want;
  } cases[] = {
      {0, 32, gemmi8_status_invalid_parameter}, /* in place */
      {1, 32, gemmi8_status_invalid_parameter},
      {-(ptrdiff_t) bytes + 1, 32, gemmi8_status_invalid_parameter},
      {(ptrdiff_t) bytes - 1, 32, gemmi8_status_invalid_parameter},
      {-(ptrdiff_t) bytes, 33, gemmi8_status_invalid_parameter}, /* a wider stride reaches it */
      {(ptrdiff_t) bytes, 32, gemmi8_status_success},  /* right after */
      {-(ptrdiff_t) bytes, 32, gemmi8_status_success}, /* right before */
  };
  for (size_t i = 0; i < T_COUNT(cases); i++) {
    size_t oh = 77, ow = 77;
    const gemmi8_status st = gemmi8_convolution_setup(op, 1, 16, 16, in, 32, in + cases[i].offset,
                                                      cases[i].out_stride, &oh, &ow);
    t_expect(st == cases[i].want && (st == gemmi8_status_success || (oh == 77 && ow == 77)),
             __func__, "output at input %+td, stride %zu: %s", cases[i].offset,
             cases[i].out_stride, gemmi8_status_string(st));
  }
  gemmi8_convolution_destroy(op);
  /* int32 outputs: the extent is 4 bytes an element; the output 4-byte aligned */
  op = NULL;
  if (gemmi8_qu8_convolution_create_s32(&g, w, 128, &b_zp, 0, NULL, &op) != gemmi8_status_success) {
    t_fail(__func__, "create_s32");
  } else {
    int32_t* out = t_alloc(256 * 32 * sizeof(int32_t) + 4);
    size_t oh = 77, ow = 77;
    /* 32 KB of int32 from mem: past the 8 KB before the input (refused: not written) */
    t_expect(gemmi8_convolution_setup(op, 1, 16, 16, in, 32, mem, 32, &oh, &ow) ==
                     gemmi8_status_invalid_parameter && oh == 77,
             __func__, "s32 output reaching into the input");
    t_expect(gemmi8_convolution_setup(op, 1, 16, 16, in, 32, (uint8_t*) out + 2, 32, &oh, &ow) ==
                     gemmi8_status_invalid_parameter && oh == 77,
             __func__, "s32 output misaligned");
    t_expect(gemmi8_convolution_setup(op, 1, 16, 16, in, 32, out, 32, &oh, &ow) ==
                     gemmi8_status_success && oh == 16,
             __func__, "s32 output apart");
    free(out);
    gemmi8_convolution_destroy(op);
  }
  free(mem);
  free(w);
}

/* ---- bad input ------------------------------------------------------------------------- */

static void bad_input(void)
{
  const ccase c = {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 8, 1, 5, 5, 0, 0};
  const gemmi8_conv_geometry good = geometry_of(&c);
  uint8_t w[8 * 9 * 4], in[30 * 4], out[25 * 8]; /* in: up to 6 x 5 pixels */
  memset(w, 1, sizeof(w));
  memset(in, 2, sizeof(in));
  const int32_t mult = 1 << 30, shift = -8;
  const float scale = 0.01f;
  const gemmi8_requant rq = {gemmi8_requant_fixedpoint, 0, &mult, &shift, NULL, 0, -128, 127};
  const gemmi8_requant rq_fp = {gemmi8_requant_fp32, 0, NULL, NULL, &scale, 0, -128, 127};
  gemmi8_convolution* const sentinel = (gemmi8_convolution*) (uintptr_t) 0x1234;
  gemmi8_convolution* op = sentinel;
  /* create: each bad geometry field, null pointers, bad requant */
  static const size_t zero_fields[] = {0, 1, 2, 3, 4, 5, 10, 11, 12};
  for (size_t i = 0; i < T_COUNT(zero_fields); i++) {
    gemmi8_conv_geometry g = good;
    ((size_t*) &g)[zero_fields[i]] = 0;
    gemmi8_status st = gemmi8_qs8_convolution_create(&g, (const int8_t*) w, 0, NULL, &rq, &op);
    t_expect(st == gemmi8_status_invalid_parameter && op == sentinel, __func__,
             "geometry field %zu = 0: %s", zero_fields[i], gemmi8_status_string(st));
  }
  const struct {
    size_t field, value;
    gemmi8_status want;
  } huge[] = {
      {0, SIZE_MAX, gemmi8_status_invalid_parameter},      /* kernel extent overflows */
      {4, SIZE_MAX, gemmi8_status_invalid_parameter},      /* dilation overflows */
      {6, SIZE_MAX, gemmi8_status_invalid_parameter},      /* paddings overflow */
      {10, SIZE_MAX / 2, gemmi8_status_invalid_parameter}, /* groups x channels */
      {11, SIZE_MAX / 4, gemmi8_status_invalid_parameter}, /* the filter's size */
      {11, 70000, gemmi8_status_unsupported_parameter},    /* K past the exact limit */
  };
  for (size_t i = 0; i < T_COUNT(huge); i++) {
    gemmi8_conv_geometry g = good;
    ((size_t*) &g)[huge[i].field] = huge[i].value;
    if (huge[i].field == 6) g.padding_bottom = SIZE_MAX;
    gemmi8_status st = gemmi8_qs8_convolution_create(&g, (const int8_t*) w, 0, NULL, &rq, &op);
    t_expect(st == huge[i].want && op == sentinel, __func__, "field %zu = %zu: %s",
             huge[i].field, huge[i].value, gemmi8_status_string(st));
  }
  t_expect(gemmi8_qs8_convolution_create(NULL, (const int8_t*) w, 0, NULL, &rq, &op) ==
                   gemmi8_status_invalid_parameter && op == sentinel,
           __func__, "null geometry");
  t_expect(gemmi8_qs8_convolution_create(&good, NULL, 0, NULL, &rq, &op) ==
                   gemmi8_status_invalid_parameter && op == sentinel,
           __func__, "null weights");
  t_expect(gemmi8_qu8_convolution_create(&good, w, 0, NULL, 0, NULL, &rq, &op) ==
                   gemmi8_status_invalid_parameter && op == sentinel,
           __func__, "null weight zero point");
  gemmi8_requant bad_rq = rq;
  bad_rq.min = 10;
  bad_rq.max = 5;
  t_expect(gemmi8_qs8_convolution_create(&good, (const int8_t*) w, 0, NULL, &bad_rq, &op) ==
                   gemmi8_status_invalid_parameter && op == sentinel,
           __func__, "min > max");
  t_expect(gemmi8_qu8s8_convolution_create(&good, (const int8_t*) w, 0, NULL, &rq, &op) ==
                   gemmi8_status_invalid_parameter && op == sentinel,
           __func__, "qu8s8 clamp below 0");
  t_expect(gemmi8_qs8_convolution_create(&good, (const int8_t*) w, 0, NULL, &rq, NULL) ==
               gemmi8_status_invalid_parameter,
           __func__, "null op");
  /* the int32 creates: the same checks, without a requantization */
  t_expect(gemmi8_qs8_convolution_create_s32(NULL, (const int8_t*) w, 0, NULL, &op) ==
                   gemmi8_status_invalid_parameter && op == sentinel,
           __func__, "s32: null geometry");
  t_expect(gemmi8_qu8s8_convolution_create_s32(&good, NULL, 0, NULL, &op) ==
                   gemmi8_status_invalid_parameter && op == sentinel,
           __func__, "s32: null weights");
  t_expect(gemmi8_qu8_convolution_create_s32(&good, w, 0, NULL, 0, NULL, &op) ==
                   gemmi8_status_invalid_parameter && op == sentinel,
           __func__, "s32: null weight zero point");
  t_expect(gemmi8_qu8_convolution_create_s32(&good, w, 0, w, 2, NULL, &op) ==
                   gemmi8_status_invalid_parameter && op == sentinel,
           __func__, "s32: b_zp_per_channel 2");
  t_expect(gemmi8_qs8_convolution_create_s32(&good, (const int8_t*) w, 0, NULL, NULL) ==
               gemmi8_status_invalid_parameter,
           __func__, "s32: null op");
  {
    gemmi8_conv_geometry g = good;
    g.group_input_channels = 70000;
    t_expect(gemmi8_qs8_convolution_create_s32(&g, (const int8_t*) w, 0, NULL, &op) ==
                     gemmi8_status_unsupported_parameter && op == sentinel,
             __func__, "s32: K past the exact limit");
    g = good;
    g.stride_height = 0;
    t_expect(gemmi8_qu8s8_convolution_create_s32(&g, (const int8_t*) w, 0, NULL, &op) ==
                     gemmi8_status_invalid_parameter && op == sentinel,
             __func__, "s32: stride 0");
  }
  /* setup and run */
  op = NULL;
  if (gemmi8_qs8_convolution_create(&good, (const int8_t*) w, 0, NULL, &rq_fp, &op) !=
      gemmi8_status_success) {
    t_fail(__func__, "create");
    return;
  }
  t_expect(gemmi8_convolution_run(op, NULL) == gemmi8_status_invalid_parameter, __func__,
           "run before setup");
  size_t ind_bytes = 7, work_bytes = 7;
  t_expect(gemmi8_convolution_memory(op, &ind_bytes, &work_bytes) ==
                   gemmi8_status_invalid_parameter && ind_bytes == 7 && work_bytes == 7,
           __func__, "memory before setup");
  memset(out, 0x5A, sizeof(out));
  size_t oh = 77, ow = 77;
  const struct {
    size_t batch, h, w, in_stride, out_stride;
    int null_in, null_out;
    const char* what;
  } setups[] = {
      {0, 5, 5, 4, 8, 0, 0, "batch 0"},
      {1, 0, 5, 4, 8, 0, 0, "height 0"},
      {1, 5, 0, 4, 8, 0, 0, "width 0"},
      {1, 5, 5, 3, 8, 0, 0, "input pixel stride below the channels"},
      {1, 5, 5, 4, 7, 0, 0, "output pixel stride below the channels"},
      {1, 5, 5, 4, 8, 1, 0, "null input"},
      {1, 5, 5, 4, 8, 0, 1, "null output"},
      {SIZE_MAX / 2, 5, 5, 4, 8, 0, 0, "batch overflows"},
      {1, SIZE_MAX / 8, SIZE_MAX / 8, 4, 8, 0, 0, "pixels overflow"},
      {1, 5, 5, SIZE_MAX / 2, 8, 0, 0, "input extent overflows"},
  };
  for (size_t i = 0; i < T_COUNT(setups); i++) {
    gemmi8_status st = gemmi8_convolution_setup(op, setups[i].batch, setups[i].h, setups[i].w,
                                                setups[i].null_in ? NULL : in, setups[i].in_stride,
                                                setups[i].null_out ? NULL : out,
                                                setups[i].out_stride, &oh, &ow);
    t_expect(st == gemmi8_status_invalid_parameter && oh == 77 && ow == 77, __func__, "%s: %s",
             setups[i].what, gemmi8_status_string(st));
  }
  t_expect(gemmi8_convolution_run(op, NULL) == gemmi8_status_invalid_parameter, __func__,
           "run after failed setups");
  /* a dilated kernel larger than the padded input */
  gemmi8_conv_geometry big = good;
  big.kernel_height = 8;
  gemmi8_convolution* op2 = NULL;
  uint8_t w2[8 * 8 * 3 * 4];
  memset(w2, 0, sizeof(w2));
  if (gemmi8_qs8_convolution_create(&big, (const int8_t*) w2, 0, NULL, &rq, &op2) ==
      gemmi8_status_success) {
    t_expect(gemmi8_convolution_setup(op2, 1, 5, 5, in, 4, out, 8, &oh, &ow) ==
                     gemmi8_status_invalid_parameter && oh == 77,
             __func__, "kernel 8 on 5 + 2 padding");
    t_expect(gemmi8_convolution_setup(op2, 1, 6, 5, in, 4, out, 8, &oh, &ow) ==
                     gemmi8_status_success && oh == 1,
             __func__, "kernel 8 on 6 + 2 padding");
    gemmi8_convolution_destroy(op2);
  } else {
    t_fail(__func__, "create 8x3");
  }
  /* 25 pixels x 9 taps, or x 3 merged rows of taps (4 channels are below 16 and not a
   * multiple of some kernel sets' depth group) */
  if (gemmi8_convolution_setup(op, 1, 5, 5, in, 4, out, 8, &oh, &ow) == gemmi8_status_success) {
    /* rounded up to the main tile (at most 8 rows): 32 pixels */
    const gemmi8_status mst = gemmi8_convolution_memory(op, &ind_bytes, &work_bytes);
    t_expect(mst == gemmi8_status_success && ind_bytes >= 75 * sizeof(void*) &&
                 ind_bytes <= 288 * sizeof(void*),
             __func__, "memory: %zu indirection bytes for 25 pixels x 9 taps", ind_bytes);
    t_expect(gemmi8_convolution_memory(op, NULL, &work_bytes) == gemmi8_status_invalid_parameter,
             __func__, "memory with a NULL pointer");
  }
  gemmi8_parallel bad = {NULL, NULL, 2};
  if (gemmi8_convolution_setup(op, 1, 5, 5, in, 4, out, 8, &oh, &ow) == gemmi8_status_success) {
    memset(out, 0x5A, sizeof(out));
    t_expect(gemmi8_convolution_run(op, &bad) == gemmi8_status_invalid_parameter, __func__,
             "run with a parallel-for of NULL");
    int untouched = 1;
    for (size_t i = 0; i < sizeof(out); i++) untouched &= out[i] == 0x5A;
    t_expect(untouched, __func__, "output untouched by the refused run");
  }
  t_expect(gemmi8_convolution_run(NULL, NULL) == gemmi8_status_invalid_parameter, __func__,
           "run NULL");
  gemmi8_convolution_destroy(op);
  gemmi8_convolution_destroy(NULL);
}

void test_conv(void)
{
  gemmi8_threadpool* pool = NULL;
  if (gemmi8_threadpool_create(2, NULL, &pool) != gemmi8_status_success) {
    t_fail(__func__, "pool");
    return;
  }
  sweep(pool);
  paths_chosen();
  depth_limit();
  in_place();
  setup_reuse();
  bad_input();
  gemmi8_threadpool_destroy(pool);
}
