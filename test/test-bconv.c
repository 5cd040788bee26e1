/*
 * Binary convolution (group "bconv"): gemmi8_bin_convolution_create / setup / run
 * against a direct reference that multiplies +1/-1 integers tap by tap (a padding tap
 * +1 for one padding, 0 for zero padding), for every output (s32, f32 with a clamp,
 * sign bits, thresholds, qs8 in both rounding modes); channel counts that are and are
 * not multiples of 64, kernels 1..5, strides 1..2, dilations, groups, batch 2, pixel
 * strides wider than the channels, garbage in the bits past the channels. Each case
 * runs on the calling thread, a shuffled parallel-for and a pool of two, and must leave
 * every byte outside its outputs as it was. Then the binary max pool against its
 * definition, a chain of float pixels to bits, a binary convolution with bit output,
 * a max pool and a second binary convolution (as a binary network runs them, no
 * unpacking between), and the bad-input contract.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "test.h"

typedef struct bcase {
  size_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, groups, ci, co;
  size_t batch, ih, iw;
  size_t in_extra, out_extra; /* words / elements past a pixel's */
  int zero_padding;
  gemmi8_bin_output_kind kind;
  int mode; /* qs8: 0 fixed-point, 1 fp32 */
} bcase;

static const char* const kind_names[] = {"s32", "f32", "bits", "threshold", "qs8", "f32_add"};
#define KINDS 6

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

static int bit_of(const uint64_t* p, size_t c) { return (int) (p[c / 64] >> (c % 64)) & 1; }

/* The accumulators of every output pixel and channel, tap by tap as +1/-1 products. */
static void reference(const bcase* c, const uint64_t* in, size_t in_stride, const uint64_t* w,
                      size_t oh, size_t ow, int32_t* acc)
{
  const size_t cout = c->groups * c->co, kcw = (c->ci + 63) / 64;
  for (size_t n = 0; n < c->batch; n++) {
    for (size_t oy = 0; oy < oh; oy++) {
      for (size_t ox = 0; ox < ow; ox++) {
        int32_t* out = acc + ((n * oh + oy) * ow + ox) * cout;
        for (size_t g = 0; g < c->groups; g++) {
          for (size_t o = 0; o < c->co; o++) {
            int64_t sum = 0;
            for (size_t y = 0; y < c->kh; y++) {
              for (size_t x = 0; x < c->kw; x++) {
                const int64_t iy = (int64_t) (oy * c->sh + y * c->dh) - (int64_t) c->pt;
                const int64_t ix = (int64_t) (ox * c->sw + x * c->dw) - (int64_t) c->pl;
                const int inside = iy >= 0 && iy < (int64_t) c->ih && ix >= 0 && ix < (int64_t) c->iw;
                if (!inside && c->zero_padding) continue;
                const uint64_t* tap = w + (((g * c->co + o) * c->kh + y) * c->kw + x) * kcw;
                const uint64_t* px =
                    inside ? in + ((n * c->ih + (size_t) iy) * c->iw + (size_t) ix) * in_stride : NULL;
                for (size_t ch = 0; ch < c->ci; ch++) {
                  const int a = px != NULL && bit_of(px, g * c->ci + ch) ? -1 : 1;
                  const int b = bit_of(tap, ch) ? -1 : 1;
                  sum += a * b;
                }
              }
            }
            out[g * c->co + o] = (int32_t) sum;
          }
        }
      }
    }
  }
}

static float affine(int32_t acc, const float* m, const float* b, size_t ch)
{
  volatile float product = (float) acc * (m != NULL ? m[ch] : 1.0f);
  volatile float sum = product + (b != NULL ? b[ch] : 0.0f);
  return sum;
}

static void describe(const bcase* c, char* s, size_t n)
{
  snprintf(s, n,
           "bin %s%s%s k%zux%zu s%zux%zu d%zux%zu pad %zu,%zu,%zu,%zu g%zu ci%zu co%zu n%zu "
           "%zux%zu +%zu/+%zu",
           kind_names[c->kind],
           c->kind == gemmi8_bin_output_qs8 ? (c->mode ? " fp32" : " fixedpoint") : "",
           c->zero_padding ? " zero-padding" : " one-padding", c->kh, c->kw, c->sh, c->sw, c->dh,
           c->dw, c->pt, c->pl, c->pb, c->pr, c->groups, c->ci, c->co, c->batch, c->ih, c->iw,
           c->in_extra, c->out_extra);
}

static void run_case(const bcase* c, gemmi8_threadpool* pool)
{
  char what[256];
  describe(c, what, sizeof(what));
  gemmi8_conv_geometry geo = {c->kh, c->kw, c->sh, c->sw, c->dh, c->dw, c->pt, c->pl,
                              c->pb, c->pr, c->groups, c->ci, c->co};
  const size_t oh = (c->ih + c->pt + c->pb - (c->kh - 1) * c->dh - 1) / c->sh + 1;
  const size_t ow = (c->iw + c->pl + c->pr - (c->kw - 1) * c->dw - 1) / c->sw + 1;
  const size_t cin = c->groups * c->ci, cout = c->groups * c->co;
  const size_t kcw = (c->ci + 63) / 64, ks = c->kh * c->kw;
  const size_t in_words = (cin + 63) / 64, in_stride = in_words + c->in_extra;
  const size_t pixels = c->batch * c->ih * c->iw, m = c->batch * oh * ow;
  /* random bits everywhere, the bits past the channels included: they never count */
  uint64_t* in = t_alloc_aligned(pixels * in_stride * sizeof(uint64_t));
  t_fill_random(in, pixels * in_stride * sizeof(uint64_t));
  uint64_t* w = t_alloc(cout * ks * kcw * sizeof(uint64_t));
  t_fill_random(w, cout * ks * kcw * sizeof(uint64_t));
  int32_t* acc = t_alloc(m * cout * sizeof(int32_t));
  reference(c, in, in_stride, w, oh, ow, acc);

  /* the output's parameters */
  float* mult = t_alloc(cout * sizeof(float));
  float* bias = t_alloc(cout * sizeof(float));
  int32_t* thr = t_alloc(cout * sizeof(int32_t));
  uint8_t* greater = t_alloc(cout);
  int32_t* bias32 = t_alloc(cout * sizeof(int32_t));
  int32_t* qmult = t_alloc(cout * sizeof(int32_t));
  int32_t* qshift = t_alloc(cout * sizeof(int32_t));
  float* qscale = t_alloc(cout * sizeof(float));
  const int64_t depth = (int64_t) ks * (int64_t) c->ci;
  for (size_t ch = 0; ch < cout; ch++) {
    /* a batch norm's range: scales of both signs, biases near the accumulators' */
    const float mag = (float) (0.01 + t_unit());
    mult[ch] = t_below(5) == 0 ? -mag : mag;
    if (t_below(17) == 0) mult[ch] = 0.0f;
    bias[ch] = (float) ((t_unit() - 0.5) * (double) depth) * mult[ch] * 0.5f;
    if (t_below(13) == 0) bias[ch] = 0.0f;
    thr[ch] = (int32_t) t_range(-depth - 1, depth + 1);
    greater[ch] = (uint8_t) t_below(2);
    bias32[ch] = (int32_t) t_range(-depth, depth);
    qscale[ch] = (float) (t_unit() * 4.0 / (double) (depth + 1));
    ref_quantize_multiplier(qscale[ch], &qmult[ch], &qshift[ch]);
  }
  const int per_channel = (int) t_below(2);
  gemmi8_requant rq = {c->mode ? gemmi8_requant_fp32 : gemmi8_requant_fixedpoint, per_channel,
                       qmult, qshift, qscale, (int32_t) t_range(-128, 127), -128, 127};
  if (t_below(3) == 0) {
    rq.min = (int32_t) t_range(-128, 0);
    rq.max = (int32_t) t_range(rq.min, 127);
  }
  gemmi8_bin_conv_output out = {c->kind, t_below(6) ? mult : NULL, t_below(6) ? bias : NULL,
                                -INFINITY, INFINITY, thr, t_below(4) ? greater : NULL,
                                t_below(4) ? bias32 : NULL, &rq};
  const int f32 = c->kind == gemmi8_bin_output_f32 || c->kind == gemmi8_bin_output_f32_add;
  if (f32 && t_below(2)) {
    out.output_min = (float) (t_unit() - 0.5) * 2.0f;
    out.output_max = out.output_min + (float) t_unit() * 4.0f;
  }

  /* the expected output, per pixel */
  const int bits = c->kind == gemmi8_bin_output_bits || c->kind == gemmi8_bin_output_threshold;
  const t_elem elem = bits                                  ? T_U64
                      : c->kind == gemmi8_bin_output_qs8 ? T_S8
                      : f32                                 ? T_F32
                                                           : T_S32;
  const size_t out_row = bits ? (cout + 63) / 64 : cout, out_stride = out_row + c->out_extra;
  t_out want;
  t_out_init(&want, elem, m, out_row, out_stride);

  gemmi8_convolution* op = NULL;
  const uint32_t flags = c->zero_padding ? GEMMI8_BIN_ZERO_PADDING : GEMMI8_BIN_ONE_PADDING;
  gemmi8_status st = gemmi8_bin_convolution_create(&geo, w, flags, &out, &op);
  if (!t_expect(st == gemmi8_status_success, __func__, "%s: create %s", what,
                gemmi8_status_string(st))) {
    goto done;
  }
  /* the weights and arrays are copied */
  t_fill_random(w, cout * ks * kcw * sizeof(uint64_t));
  gemmi8_parallel shuffled = {shuffled_for, NULL, 3}, pooled;
  gemmi8_threadpool_parallel(pool, &pooled);
  const gemmi8_parallel* ways[] = {NULL, &shuffled, &pooled};
  const char* way_names[] = {"calling thread", "shuffled parallel-for", "pool of 2"};
  for (size_t way = 0; way < T_COUNT(ways); way++) {
    t_out_refill(&want);
    for (size_t p = 0; p < m; p++) {
      const int32_t* a = acc + p * cout;
      if (bits) {
        uint64_t* row = t_out_want(&want, p, 0);
        memset(row, 0, out_row * sizeof(uint64_t));
        for (size_t ch = 0; ch < cout; ch++) {
          int set;
          if (c->kind == gemmi8_bin_output_bits) {
            set = affine(a[ch], out.multiplier, out.bias, ch) < 0.0f;
          } else {
            set = out.greater != NULL && out.greater[ch] ? a[ch] > thr[ch] : a[ch] < thr[ch];
          }
          if (set) row[ch / 64] |= UINT64_C(1) << (ch % 64);
        }
        continue;
      }
      for (size_t ch = 0; ch < cout; ch++) {
        void* e = t_out_want(&want, p, ch);
        if (c->kind == gemmi8_bin_output_s32) {
          memcpy(e, &a[ch], 4);
        } else if (f32) {
          float v = affine(a[ch], out.multiplier, out.bias, ch);
          if (c->kind == gemmi8_bin_output_f32_add) {
            /* the value the output holds: a shortcut's range, zeros of both signs,
             * denormals, values that swamp the sum */
            const unsigned pick = t_below(16);
            float y = (float) ((t_unit() - 0.5) * (double) depth);
            if (pick == 0) y = 0.0f;
            if (pick == 1) y = -0.0f;
            if (pick == 2) y = (t_below(2) ? 1e-40f : -3e-39f);
            if (pick == 3) y = -v;
            if (pick == 4) y = (float) (t_unit() - 0.5) * 1e30f;
            memcpy((unsigned char*) want.body + (p * out_stride + ch) * sizeof(float), &y,
                   sizeof(float));
            volatile float sum = y + v;
            v = sum;
          }
          v = out.output_min > v ? out.output_min : v;
          v = out.output_max < v ? out.output_max : v;
          memcpy(e, &v, 4);
        } else {
          const size_t q = per_channel ? ch : 0;
          const int32_t x = ref_wrap_s32((int64_t) a[ch] + (out.bias_s32 ? bias32[ch] : 0));
          const int32_t y = c->mode ? ref_output_fp32(x, qscale[q], rq.zero_point, rq.min, rq.max)
                                    : ref_output_fixedpoint(x, qmult[q], qshift[q], rq.zero_point,
                                                            rq.min, rq.max);
          *(int8_t*) e = (int8_t) y;
        }
      }
    }
    size_t got_h = 0, got_w = 0;
    st = gemmi8_convolution_setup(op, c->batch, c->ih, c->iw, in, in_stride, want.body,
                                  out_stride, &got_h, &got_w);
    if (!t_expect(st == gemmi8_status_success && got_h == oh && got_w == ow, __func__,
                  "%s: setup %s, %zux%zu for %zux%zu", what, gemmi8_status_string(st), got_h,
                  got_w, oh, ow)) {
      break;
    }
    st = gemmi8_convolution_run(op, ways[way]);
    char msg[256];
    size_t r, col;
    if (!t_expect(st == gemmi8_status_success && t_out_same(&want, msg, sizeof(msg), &r, &col),
                  __func__, "%s, %s: %s %s", what, way_names[way], gemmi8_status_string(st),
                  st == gemmi8_status_success ? msg : "")) {
      if (st == gemmi8_status_success && r != SIZE_MAX) {
        fprintf(stderr, "    pixel %zu channel %zu: acc %d\n", r, col,
                bits ? 0 : acc[r * cout + col]);
      }
      break;
    }
  }
done:
  gemmi8_convolution_destroy(op);
  t_out_free(&want);
  free(in);
  free(w);
  free(acc);
  free(mult);
  free(bias);
  free(thr);
  free(greater);
  free(bias32);
  free(qmult);
  free(qshift);
  free(qscale);
}

/* ---- sweeps ----------------------------------------------------------------------- */

static void random_case(bcase* c)
{
  static const size_t channels[] = {1, 3, 31, 63, 64, 65, 100, 127, 128, 129, 192, 256};
  memset(c, 0, sizeof(*c));
  c->kh = 1 + t_below(5);
  c->kw = t_below(4) == 0 ? 1 + t_below(5) : c->kh;
  c->sh = 1 + t_below(2);
  c->sw = t_below(4) == 0 ? 1 + t_below(2) : c->sh;
  c->dh = t_below(5) == 0 ? 1 + t_below(3) : 1;
  c->dw = t_below(5) == 0 ? 1 + t_below(3) : c->dh;
  c->pt = t_below(c->kh);
  c->pl = t_below(c->kw);
  c->pb = t_below(3) ? c->pt : t_below(c->kh);
  c->pr = t_below(3) ? c->pl : t_below(c->kw);
  c->groups = t_below(4) == 0 ? 2 + t_below(3) : 1;
  c->ci = T_PICK(channels);
  c->co = t_below(3) == 0 ? 1 + t_below(80) : T_PICK(channels);
  if (c->groups > 1 && c->ci > 100) c->ci /= 2;
  c->batch = t_below(4) == 0 ? 2 : 1;
  const size_t ext_h = (c->kh - 1) * c->dh + 1, ext_w = (c->kw - 1) * c->dw + 1;
  c->ih = 1 + t_below(t_quick ? 8 : 12);
  c->iw = 1 + t_below(t_quick ? 8 : 12);
  if (c->ih + c->pt + c->pb < ext_h) c->ih = ext_h;
  if (c->iw + c->pl + c->pr < ext_w) c->iw = ext_w;
  c->in_extra = t_below(3) == 0 ? 1 + t_below(2) : 0;
  c->out_extra = t_below(3) == 0 ? 1 + t_below(3) : 0;
  c->zero_padding = (int) t_below(2);
  c->kind = (gemmi8_bin_output_kind) t_below(KINDS);
  c->mode = (int) t_below(2);
}

static void sweep(gemmi8_threadpool* pool)
{
  /* the layers of a binarized ResNet-18 at a small size, both paddings */
  static const size_t layer_channels[] = {64, 128, 256, 512};
  for (size_t i = 0; i < T_COUNT(layer_channels); i++) {
    for (int zp = 0; zp < 2; zp++) {
      for (int kind = 0; kind < KINDS; kind++) {
        bcase c = {3, 3, 1 + (size_t) (i % 2), 1 + (size_t) (i % 2), 1, 1, 1, 1, 1, 1, 1,
                   layer_channels[i], t_quick ? 40 : layer_channels[i], 1, 6, 5, 0, 0, zp,
                   (gemmi8_bin_output_kind) kind, kind % 2};
        run_case(&c, pool);
      }
    }
  }
  const size_t count = t_quick ? 60 : 300;
  for (size_t i = 0; i < count; i++) {
    bcase c;
    random_case(&c);
    run_case(&c, pool);
  }
}

/* ---- max pool ---------------------------------------------------------------------- */

static void max_pool_case(size_t batch, size_t ih, size_t iw, size_t channels, size_t ph,
                          size_t pw, size_t sh, size_t sw, size_t pt, size_t pl, size_t pb,
                          size_t pr)
{
  const size_t words = (channels + 63) / 64, in_stride = words + t_below(2);
  const size_t out_stride = words + t_below(2);
  const size_t oh = (ih + pt + pb - ph) / sh + 1, ow = (iw + pl + pr - pw) / sw + 1;
  uint64_t* in = t_alloc(batch * ih * iw * in_stride * sizeof(uint64_t));
  /* mostly -1 bits, so that an AND of a window is not always 0 */
  for (size_t i = 0; i < batch * ih * iw * in_stride; i++) in[i] = t_rand64() | t_rand64() | t_rand64();
  t_out want;
  t_out_init(&want, T_U64, batch * oh * ow, words, out_stride);
  for (size_t n = 0; n < batch; n++) {
    for (size_t oy = 0; oy < oh; oy++) {
      for (size_t ox = 0; ox < ow; ox++) {
        uint64_t* row = t_out_want(&want, (n * oh + oy) * ow + ox, 0);
        memset(row, 0, words * sizeof(uint64_t));
        for (size_t ch = 0; ch < channels; ch++) {
          int all = 1; /* the max of +1/-1 is -1 only when every tap is -1 */
          for (size_t y = 0; y < ph; y++) {
            for (size_t x = 0; x < pw; x++) {
              const int64_t iy = (int64_t) (oy * sh + y) - (int64_t) pt;
              const int64_t ix = (int64_t) (ox * sw + x) - (int64_t) pl;
              if (iy < 0 || ix < 0 || iy >= (int64_t) ih || ix >= (int64_t) iw) continue;
              const uint64_t* p = in + ((n * ih + (size_t) iy) * iw + (size_t) ix) * in_stride;
              if (!bit_of(p, ch)) all = 0;
            }
          }
          if (all) row[ch / 64] |= UINT64_C(1) << (ch % 64);
        }
      }
    }
  }
  size_t got_h = 0, got_w = 0;
  const gemmi8_status st = gemmi8_bin_max_pool(batch, ih, iw, channels, in, in_stride, ph, pw, sh,
                                               sw, pt, pl, pb, pr, want.body, out_stride, &got_h,
                                               &got_w);
  char msg[256];
  size_t r, col;
  t_expect(st == gemmi8_status_success && got_h == oh && got_w == ow &&
               t_out_same(&want, msg, sizeof(msg), &r, &col),
           __func__, "max pool %zux%zux%zu n%zu pool %zux%zu s%zux%zu pad %zu,%zu,%zu,%zu: %s %s",
           ih, iw, channels, batch, ph, pw, sh, sw, pt, pl, pb, pr, gemmi8_status_string(st),
           st == gemmi8_status_success ? msg : "");
  t_out_free(&want);
  free(in);
}

static void max_pool(void)
{
  max_pool_case(1, 8, 8, 64, 2, 2, 2, 2, 0, 0, 0, 0);
  max_pool_case(2, 7, 9, 130, 3, 3, 2, 2, 1, 1, 1, 1);
  for (int i = 0; i < 40; i++) {
    const size_t ph = 1 + t_below(3), pw = 1 + t_below(3);
    max_pool_case(1 + t_below(2), ph + t_below(6), pw + t_below(6), 1 + t_below(200), ph, pw,
                  1 + t_below(2), 1 + t_below(2), t_below(ph), t_below(pw), t_below(ph),
                  t_below(pw));
  }
}

/* ---- a chain, as a binary network runs it ------------------------------------------ */

/* float pixels -> bits (gemmi8_bin_pack_rows_f32) -> 3x3 binary convolution with the
 * bits output (a batch norm's sign) -> 2x2 max pool -> 3x3 binary convolution, float
 * output with a ReLU; against the same steps on +1/-1 integers. */
static void chain(void)
{
  const size_t h = 9, w = 8, c0 = 70, c1 = 96, c2 = 40, k = 3;
  const size_t w0 = (c0 + 63) / 64, w1 = (c1 + 63) / 64;
  float* x = t_alloc(h * w * c0 * sizeof(float));
  for (size_t i = 0; i < h * w * c0; i++) x[i] = (float) (t_unit() - 0.5);
  uint64_t* bits0 = t_alloc_aligned(h * w * w0 * 8);
  gemmi8_status st = gemmi8_bin_pack_rows_f32(h * w, c0, x, c0, bits0, w0);
  /* layer 1: c0 -> c1, one padding, bits by the sign of acc * m + b */
  uint64_t* f1 = t_alloc(c1 * k * k * w0 * 8);
  uint64_t* f2 = t_alloc(c2 * k * k * w1 * 8);
  t_fill_random(f1, c1 * k * k * w0 * 8);
  t_fill_random(f2, c2 * k * k * w1 * 8);
  float m1[96], b1[96], m2[40], b2[40];
  for (size_t i = 0; i < c1; i++) {
    m1[i] = (float) (t_unit() - 0.3);
    b1[i] = (float) ((t_unit() - 0.5) * 20.0);
  }
  for (size_t i = 0; i < c2; i++) {
    m2[i] = (float) (t_unit() + 0.1);
    b2[i] = (float) ((t_unit() - 0.5) * 20.0);
  }
  gemmi8_conv_geometry g1 = {k, k, 1, 1, 1, 1, 1, 1, 1, 1, 1, c0, c1};
  gemmi8_conv_geometry g2 = {k, k, 1, 1, 1, 1, 1, 1, 1, 1, 1, c1, c2};
  gemmi8_bin_conv_output o1 = {gemmi8_bin_output_bits, m1, b1, -INFINITY, INFINITY,
                               NULL, NULL, NULL, NULL};
  gemmi8_bin_conv_output o2 = {gemmi8_bin_output_f32, m2, b2, 0.0f, INFINITY,
                               NULL, NULL, NULL, NULL};
  gemmi8_convolution *op1 = NULL, *op2 = NULL;
  if (st == gemmi8_status_success) st = gemmi8_bin_convolution_create(&g1, f1, GEMMI8_BIN_ONE_PADDING, &o1, &op1);
  if (st == gemmi8_status_success) st = gemmi8_bin_convolution_create(&g2, f2, GEMMI8_BIN_ZERO_PADDING, &o2, &op2);
  const size_t ph = h / 2, pw = w / 2;
  uint64_t* bits1 = t_alloc_aligned(h * w * w1 * 8);
  uint64_t* pooled = t_alloc_aligned(ph * pw * w1 * 8);
  float* y = t_alloc(ph * pw * c2 * sizeof(float));
  size_t oh, ow;
  if (st == gemmi8_status_success) st = gemmi8_convolution_setup(op1, 1, h, w, bits0, w0, bits1, w1, &oh, &ow);
  if (st == gemmi8_status_success) st = gemmi8_convolution_run(op1, NULL);
  if (st == gemmi8_status_success) {
    st = gemmi8_bin_max_pool(1, h, w, c1, bits1, w1, 2, 2, 2, 2, 0, 0, 0, 0, pooled, w1, &oh, &ow);
  }
  if (st == gemmi8_status_success) st = gemmi8_convolution_setup(op2, 1, ph, pw, pooled, w1, y, c2, &oh, &ow);
  if (st == gemmi8_status_success) st = gemmi8_convolution_run(op2, NULL);
  if (!t_expect(st == gemmi8_status_success, __func__, "chain: %s", gemmi8_status_string(st))) goto done;
  /* the same on +1/-1 integers */
  int* v0 = t_alloc(h * w * c0 * sizeof(int));
  int* v1 = t_alloc(h * w * c1 * sizeof(int));
  int* v2 = t_alloc(ph * pw * c1 * sizeof(int));
  for (size_t i = 0; i < h * w * c0; i++) v0[i] = x[i] < 0.0f ? -1 : 1;
  for (size_t oy = 0; oy < h; oy++) {
    for (size_t ox = 0; ox < w; ox++) {
      for (size_t o = 0; o < c1; o++) {
        int32_t acc = 0;
        for (size_t ky = 0; ky < k; ky++) {
          for (size_t kx = 0; kx < k; kx++) {
            const long iy = (long) (oy + ky) - 1, ix = (long) (ox + kx) - 1;
            const int inside = iy >= 0 && ix >= 0 && iy < (long) h && ix < (long) w;
            for (size_t c = 0; c < c0; c++) {
              const int a = inside ? v0[((size_t) iy * w + (size_t) ix) * c0 + c] : 1;
              acc += a * (bit_of(f1 + ((o * k + ky) * k + kx) * w0, c) ? -1 : 1);
            }
          }
        }
        v1[(oy * w + ox) * c1 + o] = affine(acc, m1, b1, o) < 0.0f ? -1 : 1;
      }
    }
  }
  for (size_t oy = 0; oy < ph; oy++) {
    for (size_t ox = 0; ox < pw; ox++) {
      for (size_t c = 0; c < c1; c++) {
        int mx = -1;
        for (size_t dy = 0; dy < 2; dy++) {
          for (size_t dx = 0; dx < 2; dx++) {
            const int v = v1[((2 * oy + dy) * w + 2 * ox + dx) * c1 + c];
            if (v > mx) mx = v;
          }
        }
        v2[(oy * pw + ox) * c1 + c] = mx;
      }
    }
  }
  int ok = 1;
  for (size_t oy = 0; oy < ph && ok; oy++) {
    for (size_t ox = 0; ox < pw && ok; ox++) {
      for (size_t o = 0; o < c2 && ok; o++) {
        int32_t acc = 0;
        for (size_t ky = 0; ky < k; ky++) {
          for (size_t kx = 0; kx < k; kx++) {
            const long iy = (long) (oy + ky) - 1, ix = (long) (ox + kx) - 1;
            if (iy < 0 || ix < 0 || iy >= (long) ph || ix >= (long) pw) continue; /* zero */
            for (size_t c = 0; c < c1; c++) {
              acc += v2[((size_t) iy * pw + (size_t) ix) * c1 + c] *
                     (bit_of(f2 + ((o * k + ky) * k + kx) * w1, c) ? -1 : 1);
            }
          }
        }
        float want = affine(acc, m2, b2, o);
        want = 0.0f > want ? 0.0f : want;
        const float got = y[(oy * pw + ox) * c2 + o];
        ok = t_expect(memcmp(&got, &want, 4) == 0, __func__,
                      "chain: pixel %zu,%zu channel %zu: %.9g, want %.9g (acc %d)", oy, ox, o,
                      (double) got, (double) want, acc);
      }
    }
  }
  free(v0);
  free(v1);
  free(v2);
done:
  gemmi8_convolution_destroy(op1);
  gemmi8_convolution_destroy(op2);
  free(x);
  free(bits0);
  free(bits1);
  free(pooled);
  free(y);
  free(f1);
  free(f2);
}

/* ---- bad input --------------------------------------------------------------------- */

static void bad_input(void)
{
  gemmi8_conv_geometry geo = {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 64, 8};
  uint64_t w[8 * 9] = {0};
  gemmi8_bin_conv_output out = {gemmi8_bin_output_f32, NULL, NULL, -INFINITY, INFINITY,
                                NULL, NULL, NULL, NULL};
  gemmi8_convolution* op = (gemmi8_convolution*) &out; /* must stay untouched */
  gemmi8_convolution* const sentinel = op;
  gemmi8_status got[9];
  got[0] = gemmi8_bin_convolution_create(NULL, w, 0, &out, &op);
  got[1] = gemmi8_bin_convolution_create(&geo, NULL, 0, &out, &op);
  got[2] = gemmi8_bin_convolution_create(&geo, w, 2, &out, &op);
  out.output_min = NAN;
  got[3] = gemmi8_bin_convolution_create(&geo, w, 0, &out, &op);
  out.output_min = 1.0f;
  out.output_max = 0.0f;
  got[4] = gemmi8_bin_convolution_create(&geo, w, 0, &out, &op);
  out.output_min = -INFINITY;
  out.output_max = INFINITY;
  out.kind = gemmi8_bin_output_threshold;
  got[5] = gemmi8_bin_convolution_create(&geo, w, 0, &out, &op);
  out.kind = gemmi8_bin_output_qs8;
  got[6] = gemmi8_bin_convolution_create(&geo, w, 0, &out, &op);
  out.kind = (gemmi8_bin_output_kind) 9;
  got[7] = gemmi8_bin_convolution_create(&geo, w, 0, &out, &op);
  out.kind = gemmi8_bin_output_s32;
  gemmi8_conv_geometry deep = geo;
  deep.group_input_channels = ((size_t) 1 << 31) / 9 + 1; /* depth above GEMMI8_BIN_MAX_K */
  got[8] = gemmi8_bin_convolution_create(&deep, w, 0, &out, &op);
  const char* names[] = {"NULL geometry", "NULL weights", "unknown flag", "NaN clamp",
                         "inverted clamp", "threshold without thresholds", "qs8 without rq",
                         "unknown kind", "depth above GEMMI8_BIN_MAX_K"};
  for (size_t i = 0; i < T_COUNT(names); i++) {
    const gemmi8_status want =
        i == 8 ? gemmi8_status_unsupported_parameter : gemmi8_status_invalid_parameter;
    t_expect(got[i] == want && op == sentinel, __func__, "create with %s: %s", names[i],
             gemmi8_status_string(got[i]));
  }
  /* a channel count no filter can have, with per-channel arrays of 8: refused before
   * any array is read (a defect the fuzz target found) */
  {
    int32_t m8[8] = {1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30};
    int32_t s8[8] = {0};
    gemmi8_requant rq8 = {gemmi8_requant_fixedpoint, 1, m8, s8, NULL, 0, -128, 127};
    gemmi8_bin_conv_output q = {gemmi8_bin_output_qs8, NULL, NULL, -INFINITY, INFINITY,
                                NULL, NULL, NULL, &rq8};
    gemmi8_conv_geometry huge = geo;
    huge.group_output_channels = SIZE_MAX / 4;
    op = sentinel;
    const gemmi8_status st8 = gemmi8_bin_convolution_create(&huge, w, 0, &q, &op);
    t_expect(st8 == gemmi8_status_invalid_parameter && op == sentinel, __func__,
             "create with SIZE_MAX / 4 output channels: %s", gemmi8_status_string(st8));
  }
  /* setup: input pixel stride below the words, misaligned input */
  op = NULL;
  gemmi8_status st = gemmi8_bin_convolution_create(&geo, w, 0, &out, &op);
  if (!t_expect(st == gemmi8_status_success, __func__, "create: %s", gemmi8_status_string(st))) return;
  uint64_t in[4 * 4 * 2];
  int32_t outbuf[4 * 4 * 8 + 1];
  size_t oh, ow;
  t_expect(gemmi8_convolution_setup(op, 1, 4, 4, in, 0, outbuf, 8, &oh, &ow) ==
               gemmi8_status_invalid_parameter,
           __func__, "setup with a pixel stride of 0 words");
  t_expect(gemmi8_convolution_setup(op, 1, 4, 4, (const uint8_t*) in + 4, 1, outbuf, 8, &oh,
                                    &ow) == gemmi8_status_invalid_parameter,
           __func__, "setup with a misaligned input");
  t_expect(gemmi8_convolution_setup(op, 1, 4, 4, in, 1, (uint8_t*) outbuf + 2, 8, &oh, &ow) ==
               gemmi8_status_invalid_parameter,
           __func__, "setup with a misaligned output");
  t_expect(gemmi8_convolution_setup(op, 1, 4, 4, in, 1, outbuf, 7, &oh, &ow) ==
               gemmi8_status_invalid_parameter,
           __func__, "setup with an output stride below the channels");
  t_expect(gemmi8_convolution_run(op, NULL) == gemmi8_status_invalid_parameter, __func__,
           "run before a setup");
  gemmi8_convolution_destroy(op);
  uint64_t pin[16], pout[16];
  t_expect(gemmi8_bin_max_pool(1, 4, 4, 64, pin, 1, 2, 2, 2, 2, 2, 0, 0, 0, pout, 1, &oh, &ow) ==
               gemmi8_status_invalid_parameter,
           __func__, "max pool with a padding as large as the pool");
  t_expect(gemmi8_bin_max_pool(1, 4, 4, 64, pin, 1, 2, 2, 2, 2, 0, 0, 0, 0, pin, 1, &oh, &ow) ==
               gemmi8_status_invalid_parameter,
           __func__, "max pool in place");
  t_expect(gemmi8_bin_max_pool(1, 4, 4, 65, pin, 1, 2, 2, 2, 2, 0, 0, 0, 0, pout, 1, &oh, &ow) ==
               gemmi8_status_invalid_parameter,
           __func__, "max pool with a stride below the words");
  (void) pout;
}

void test_bconv(void)
{
  gemmi8_threadpool* pool = NULL;
  if (gemmi8_threadpool_create(2, NULL, &pool) != gemmi8_status_success) {
    t_fail(__func__, "no thread pool");
    return;
  }
  sweep(pool);
  max_pool();
  chain();
  bad_input();
  gemmi8_threadpool_destroy(pool);
}
