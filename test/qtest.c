/*
 * Quantized GEMM problems and their checks (see qtest.h).
 */
#include "qtest.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "test.h"

int32_t q_min(const qproblem* p)
{
  return p->is_signed ? -128 : 0;
}
int32_t q_max(const qproblem* p)
{
  return p->is_signed ? 127 : 255;
}

size_t q_bytes(size_t rows, size_t cols, size_t stride)
{
  return (rows - 1) * stride + cols;
}

static size_t b_bytes(const qproblem* p)
{
  return p->b_kn ? q_bytes(p->k, p->n, p->b_stride) : q_bytes(p->n, p->k, p->b_stride);
}

void q_alloc(qproblem* p, int kind, size_t m, size_t n, size_t k, size_t a_stride,
             size_t b_stride, int b_kn, size_t c_stride)
{
  memset(p, 0, sizeof(*p));
  p->kind = kind;
  p->is_signed = kind == Q_QS8;
  p->b_signed = kind != Q_QU8;
  p->m = m;
  p->n = n;
  p->k = k;
  p->a_stride = a_stride;
  p->b_stride = b_stride;
  p->b_kn = b_kn;
  p->c_stride = c_stride;
  p->a = t_alloc(q_bytes(m, k, a_stride));
  p->b = t_alloc(b_bytes(p));
  p->b_zp = t_alloc(n * sizeof(int32_t));
  p->bias = t_alloc(n * sizeof(int32_t));
  p->acc = t_alloc(m * n * sizeof(int32_t));
  t_fill_random(p->a, q_bytes(m, k, a_stride));
  t_fill_random(p->b, b_bytes(p));
  for (size_t j = 0; j < n; j++) p->b_zp[j] = 0;
  memset(p->bias, 0, n * sizeof(int32_t));
}

void q_no_bias(qproblem* p)
{
  free(p->bias);
  p->bias = NULL;
}

void q_free(qproblem* p)
{
  free(p->a);
  free(p->b);
  free(p->b_zp);
  free(p->bias);
  free(p->acc);
  free(p->a_copy);
  free(p->packed_copy);
  if (p->packed_by_alloc)
    gemmi8_packed_free(p->packed);
  else
    free(p->packed);
  memset(p, 0, sizeof(*p));
}

/* ---- random contents ------------------------------------------------------------ */

static int32_t pick_zero_point(int is_signed)
{
  static const int32_t u8_zps[] = {0, 1, 127, 128, 255};
  static const int32_t s8_zps[] = {-128, -1, 0, 1, 127};
  if (t_below(6) == 0) return is_signed ? (int32_t) t_range(-128, 127) : (int32_t) t_range(0, 255);
  return is_signed ? T_PICK(s8_zps) : T_PICK(u8_zps);
}

/* A byte holding value v of the type. */
static uint8_t q_byte(int32_t v)
{
  return (uint8_t) (v & 0xFF);
}

static int32_t clamp_type(int is_signed, int32_t v)
{
  int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  return v < lo ? lo : v > hi ? hi : v;
}

void q_fill_random(qproblem* p)
{
  int s = p->is_signed;
  p->a_zp = pick_zero_point(s);
  if (p->b_signed) {
    p->b_zp_per_channel = 0;
    for (size_t j = 0; j < p->n; j++) p->b_zp[j] = 0;
  } else {
    p->b_zp_per_channel = (int) t_below(2);
    int32_t one = pick_zero_point(0);
    for (size_t j = 0; j < p->n; j++) p->b_zp[j] = p->b_zp_per_channel ? pick_zero_point(0) : one;
  }
  /* 0 uniform, 1 extremes only, 2 near the zero points, 3 uniform A and extreme B */
  unsigned dist = t_below(4);
  int32_t lo = s ? -128 : 0, hi = s ? 127 : 255;
  for (size_t i = 0; i < p->m; i++) {
    for (size_t q = 0; q < p->k; q++) {
      int32_t v;
      if (dist == 1)
        v = t_below(2) ? lo : hi;
      else if (dist == 2)
        v = clamp_type(s, p->a_zp + (int32_t) t_range(-2, 2));
      else
        v = (int32_t) t_range(lo, hi);
      p->a[i * p->a_stride + q] = q_byte(v);
    }
  }
  const int bs = p->b_signed;
  const int32_t blo = bs ? -128 : 0, bhi = bs ? 127 : 255;
  for (size_t j = 0; j < p->n; j++) {
    for (size_t q = 0; q < p->k; q++) {
      int32_t v;
      if (dist == 1 || dist == 3)
        v = t_below(2) ? blo : bhi;
      else if (dist == 2)
        v = clamp_type(bs, p->b_zp[j] + (int32_t) t_range(-2, 2));
      else
        v = (int32_t) t_range(blo, bhi);
      size_t at = p->b_kn ? q * p->b_stride + j : j * p->b_stride + q;
      p->b[at] = q_byte(v);
    }
  }
  /* 0 none, 1 small, 2 any int32, 3 extremes (the total wraps around) */
  static const int32_t extremes[] = {INT32_MIN, INT32_MAX, INT32_MIN + 1, INT32_MAX - 1, 0, -1, 1};
  unsigned bias_kind = t_below(4);
  if (bias_kind == 0) {
    q_no_bias(p);
    return;
  }
  for (size_t j = 0; j < p->n; j++) {
    if (bias_kind == 1)
      p->bias[j] = (int32_t) t_range(-65536, 65536);
    else if (bias_kind == 2)
      p->bias[j] = (int32_t) t_range(INT32_MIN, INT32_MAX);
    else
      p->bias[j] = T_PICK(extremes);
  }
}

/* ---- packing -------------------------------------------------------------------- */

static const char* type_name(const qproblem* p)
{
  return p->kind == Q_QS8 ? "qs8" : (p->kind == Q_QU8S8 ? "qu8s8" : "qu8");
}

int q_prepare(qproblem* p, const char* what)
{
  ref_q8_acc_mixed(p->is_signed, p->b_signed, p->m, p->n, p->k, p->a, p->a_stride, p->a_zp, p->b,
                   p->b_stride, p->b_kn, p->b_zp, p->bias, p->acc);
  char bzp[48];
  if (p->b_signed)
    snprintf(bzp, sizeof(bzp), "symmetric");
  else if (p->b_zp_per_channel)
    snprintf(bzp, sizeof(bzp), "per-channel (b_zp[0] %" PRId32 ")", p->b_zp[0]);
  else
    snprintf(bzp, sizeof(bzp), "%" PRId32, p->b_zp[0]);
  char bias[48];
  if (p->bias == NULL)
    snprintf(bias, sizeof(bias), "NULL");
  else
    snprintf(bias, sizeof(bias), "bias[0] %" PRId32, p->bias[0]);
  /* Copies that are scribbled over after packing. */
  uint8_t* b = t_dup(p->b, b_bytes(p));
  size_t nzp = p->b_zp_per_channel ? p->n : 1;
  uint8_t* b_zp = t_alloc(nzp);
  for (size_t j = 0; j < nzp; j++) b_zp[j] = (uint8_t) p->b_zp[j];
  int32_t* bias_copy = p->bias != NULL ? t_dup(p->bias, p->n * sizeof(int32_t)) : NULL;
  uint32_t flags = p->b_kn ? GEMMI8_B_KN : GEMMI8_B_NK;

  size_t size = 0;
  const int kind = p->kind;
  gemmi8_status st = kind == Q_QS8     ? gemmi8_qs8_pack_size(p->n, p->k, &size)
                     : kind == Q_QU8S8 ? gemmi8_qu8s8_pack_size(p->n, p->k, &size)
                                       : gemmi8_qu8_pack_size(p->n, p->k, &size);
  p->packed_by_alloc = t_below(4) == 0;
  snprintf(p->desc, sizeof(p->desc),
           "%s %s M x N x K = %zu x %zu x %zu, a_stride %zu, c_stride %zu, B %s stride %zu, "
           "a_zp %" PRId32 ", b_zp %s, %s, packed by %s",
           what, type_name(p), p->m, p->n, p->k, p->a_stride, p->c_stride, p->b_kn ? "KxN" : "NxK",
           p->b_stride, p->a_zp, bzp, bias, p->packed_by_alloc ? "pack_alloc" : "pack");
  int ok = 1;
  const char* func = kind == Q_QS8     ? "gemmi8_qs8_pack_size"
                     : kind == Q_QU8S8 ? "gemmi8_qu8s8_pack_size"
                                       : "gemmi8_qu8_pack_size";
  if (st != gemmi8_status_success || size == 0) {
    t_fail(func, "%s: status \"%s\", size %zu", p->desc, gemmi8_status_string(st), size);
    ok = 0;
  } else if (p->packed_by_alloc) {
    void* packed = NULL;
    func = kind == Q_QS8     ? "gemmi8_qs8_pack_alloc"
           : kind == Q_QU8S8 ? "gemmi8_qu8s8_pack_alloc"
                             : "gemmi8_qu8_pack_alloc";
    st = kind == Q_QS8 ? gemmi8_qs8_pack_alloc(p->n, p->k, (const int8_t*) b, p->b_stride, flags,
                                               (int8_t) p->a_zp, bias_copy, &packed)
         : kind == Q_QU8S8
             ? gemmi8_qu8s8_pack_alloc(p->n, p->k, (const int8_t*) b, p->b_stride, flags,
                                       (uint8_t) p->a_zp, bias_copy, &packed)
             : gemmi8_qu8_pack_alloc(p->n, p->k, b, p->b_stride, flags, (uint8_t) p->a_zp, b_zp,
                                     p->b_zp_per_channel, bias_copy, &packed);
    if (st != gemmi8_status_success || packed == NULL ||
        (uintptr_t) packed % GEMMI8_PACK_ALIGNMENT != 0) {
      t_fail(func, "%s: status \"%s\", packed %p", p->desc, gemmi8_status_string(st), packed);
      ok = 0;
      if (st == gemmi8_status_success) gemmi8_packed_free(packed);
    } else {
      p->packed = packed;
      p->packed_size = size;
    }
  } else {
    func = kind == Q_QS8 ? "gemmi8_qs8_pack" : kind == Q_QU8S8 ? "gemmi8_qu8s8_pack" : "gemmi8_qu8_pack";
    p->packed = t_alloc_aligned(size);
    p->packed_size = size;
    t_fill_random(p->packed, size); /* packing must not depend on old contents */
    st = kind == Q_QS8 ? gemmi8_qs8_pack(p->n, p->k, (const int8_t*) b, p->b_stride, flags,
                                         (int8_t) p->a_zp, bias_copy, p->packed, size)
         : kind == Q_QU8S8
             ? gemmi8_qu8s8_pack(p->n, p->k, (const int8_t*) b, p->b_stride, flags,
                                 (uint8_t) p->a_zp, bias_copy, p->packed, size)
             : gemmi8_qu8_pack(p->n, p->k, b, p->b_stride, flags, (uint8_t) p->a_zp, b_zp,
                               p->b_zp_per_channel, bias_copy, p->packed, size);
    if (st != gemmi8_status_success) {
      t_fail(func, "%s: status \"%s\"", p->desc, gemmi8_status_string(st));
      ok = 0;
    }
  }
  t_fill_random(b, b_bytes(p));
  t_fill_random(b_zp, nzp);
  if (bias_copy != NULL) t_fill_random(bias_copy, p->n * sizeof(int32_t));
  free(b);
  free(b_zp);
  free(bias_copy);
  if (ok) {
    p->packed_copy = t_dup(p->packed, p->packed_size);
    p->a_copy = t_dup(p->a, q_bytes(p->m, p->k, p->a_stride));
  }
  return ok;
}

/* ---- checks ---------------------------------------------------------------------- */

/* After a GEMM: status, inputs unchanged, then every byte of the output. */
static void verify(qproblem* p, const char* func, const qrq* r, gemmi8_status st,
                   const t_out* out)
{
  const char* rqdesc = r != NULL ? r->desc : "int32 output";
  if (st != gemmi8_status_success) {
    t_fail(func, "%s, %s: status \"%s\"", p->desc, rqdesc, gemmi8_status_string(st));
    return;
  }
  if (memcmp(p->a, p->a_copy, q_bytes(p->m, p->k, p->a_stride)) != 0) {
    t_fail(func, "%s, %s: A was written", p->desc, rqdesc);
    return;
  }
  if (memcmp(p->packed, p->packed_copy, p->packed_size) != 0) {
    t_fail(func, "%s, %s: the packed weights were written", p->desc, rqdesc);
    return;
  }
  char msg[200];
  size_t row, col;
  if (t_out_same(out, msg, sizeof(msg), &row, &col)) {
    t_pass();
    return;
  }
  char extra[160] = "";
  if (row != SIZE_MAX) {
    int32_t acc = p->acc[row * p->n + col];
    if (r == NULL) {
      snprintf(extra, sizeof(extra), " (bias %s)", p->bias != NULL ? "given" : "NULL");
    } else {
      size_t ch = r->rq.per_channel ? col : 0;
      if (r->rq.mode == gemmi8_requant_fixedpoint)
        snprintf(extra, sizeof(extra), "; acc %" PRId32 ", multiplier %" PRId32 ", shift %" PRId32,
                 acc, r->multiplier[ch], r->shift[ch]);
      else
        snprintf(extra, sizeof(extra), "; acc %" PRId32 ", scale %.9g", acc, (double) r->scale[ch]);
    }
  }
  t_fail(func, "%s, %s: %s%s", p->desc, rqdesc, msg, extra);
}

void q_check_s32(qproblem* p)
{
  t_out out;
  t_out_init(&out, T_S32, p->m, p->n, p->c_stride);
  for (size_t i = 0; i < p->m; i++)
    for (size_t j = 0; j < p->n; j++)
      memcpy(t_out_want(&out, i, j), &p->acc[i * p->n + j], sizeof(int32_t));
  gemmi8_status st;
  const char* func;
  if (p->is_signed) {
    func = "gemmi8_qs8_gemm_s32";
    st = gemmi8_qs8_gemm_s32(p->m, p->n, p->k, (const int8_t*) p->a, p->a_stride, p->packed,
                             out.body, p->c_stride);
  } else if (p->kind == Q_QU8S8) {
    func = "gemmi8_qu8s8_gemm_s32";
    st = gemmi8_qu8s8_gemm_s32(p->m, p->n, p->k, p->a, p->a_stride, p->packed, out.body,
                               p->c_stride);
  } else {
    func = "gemmi8_qu8_gemm_s32";
    st = gemmi8_qu8_gemm_s32(p->m, p->n, p->k, p->a, p->a_stride, p->packed, out.body, p->c_stride);
  }
  verify(p, func, NULL, st, &out);
  t_out_free(&out);
}

void q_check_requant(qproblem* p, const qrq* r)
{
  t_out out;
  t_out_init(&out, p->is_signed ? T_S8 : T_U8, p->m, p->n, p->c_stride);
  const gemmi8_requant* rq = &r->rq;
  for (size_t i = 0; i < p->m; i++) {
    for (size_t j = 0; j < p->n; j++) {
      size_t ch = rq->per_channel ? j : 0;
      int32_t acc = p->acc[i * p->n + j];
      int32_t v = rq->mode == gemmi8_requant_fixedpoint
                      ? ref_output_fixedpoint(acc, r->multiplier[ch], r->shift[ch], rq->zero_point,
                                              rq->min, rq->max)
                      : ref_output_fp32(acc, r->scale[ch], rq->zero_point, rq->min, rq->max);
      *(uint8_t*) t_out_want(&out, i, j) = q_byte(v);
    }
  }
  gemmi8_status st;
  const char* func;
  if (p->is_signed) {
    func = "gemmi8_qs8_gemm";
    st = gemmi8_qs8_gemm(p->m, p->n, p->k, (const int8_t*) p->a, p->a_stride, p->packed, rq,
                         out.body, p->c_stride);
  } else if (p->kind == Q_QU8S8) {
    func = "gemmi8_qu8s8_gemm";
    st = gemmi8_qu8s8_gemm(p->m, p->n, p->k, p->a, p->a_stride, p->packed, rq, out.body,
                           p->c_stride);
  } else {
    func = "gemmi8_qu8_gemm";
    st = gemmi8_qu8_gemm(p->m, p->n, p->k, p->a, p->a_stride, p->packed, rq, out.body, p->c_stride);
  }
  verify(p, func, r, st, &out);
  t_out_free(&out);
}

/* ---- requantization parameters ---------------------------------------------------- */

void qrq_alloc(qrq* r, gemmi8_requant_mode mode, int per_channel, size_t n)
{
  memset(r, 0, sizeof(*r));
  size_t count = per_channel ? n : 1;
  r->rq.mode = mode;
  r->rq.per_channel = per_channel;
  int fixed = mode == gemmi8_requant_fixedpoint;
  /* The arrays of the other mode: NULL, or values that are invalid if read. */
  int ignored_null = (int) t_below(2);
  if (fixed || !ignored_null) {
    r->multiplier = t_alloc(count * sizeof(int32_t));
    r->shift = t_alloc(count * sizeof(int32_t));
    for (size_t i = 0; i < count; i++) {
      r->multiplier[i] = fixed ? 0 : -5;
      r->shift[i] = fixed ? 0 : 99;
    }
  }
  if (!fixed || !ignored_null) {
    r->scale = t_alloc(count * sizeof(float));
    for (size_t i = 0; i < count; i++) r->scale[i] = fixed ? NAN : 1.0f;
  }
  r->rq.multiplier = r->multiplier;
  r->rq.shift = r->shift;
  r->rq.scale = r->scale;
}

void qrq_free(qrq* r)
{
  free(r->multiplier);
  free(r->shift);
  free(r->scale);
  memset(r, 0, sizeof(*r));
}

void qrq_describe(qrq* r)
{
  const gemmi8_requant* rq = &r->rq;
  char params[72] = "";
  if (!rq->per_channel) {
    if (rq->mode == gemmi8_requant_fixedpoint)
      snprintf(params, sizeof(params), " multiplier %" PRId32 " shift %" PRId32, r->multiplier[0],
               r->shift[0]);
    else
      snprintf(params, sizeof(params), " scale %.9g", (double) r->scale[0]);
  }
  snprintf(
      r->desc, sizeof(r->desc), "%s %s%s, zero_point %" PRId32 ", clamp [%" PRId32 ", %" PRId32 "]",
      rq->mode == gemmi8_requant_fixedpoint ? "fixedpoint" : "fp32",
      rq->per_channel ? "per-channel" : "per-tensor", params, rq->zero_point, rq->min, rq->max);
}

void q_auto_requant(const qproblem* p, qrq* r, gemmi8_requant_mode mode, int per_channel)
{
  qrq_alloc(r, mode, per_channel, p->n);
  int32_t qmin = q_min(p), qmax = q_max(p);
  size_t count = per_channel ? p->n : 1;
  int64_t lo0 = 0;
  double real0 = 1.0;
  for (size_t c = 0; c < count; c++) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < p->m; i++) {
      for (size_t j = per_channel ? c : 0; j < (per_channel ? c + 1 : p->n); j++) {
        int64_t v = p->acc[i * p->n + j];
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
    double range = (double) (hi - lo);
    if (range < 1.0) range = 1.0;
    double real = (double) (qmax - qmin) / range * exp2(t_unit() * 3.0 - 1.5);
    if (t_below(10) == 0) real = exp2(t_unit() * 52.0 - 40.0); /* anything, flushes too */
    if (c == 0) {
      lo0 = lo;
      real0 = real;
    }
    if (mode == gemmi8_requant_fixedpoint) {
      ref_quantize_multiplier(real, &r->multiplier[c], &r->shift[c]);
    } else {
      float f = (float) real;
      if (!(f > 0.0f) || isinf(f)) f = FLT_MIN;
      r->scale[c] = f;
    }
  }
  int32_t zp;
  switch (t_below(3)) {
    case 0: {
      double centered = (double) qmin - (double) lo0 * real0;
      if (centered < qmin) centered = qmin;
      if (centered > qmax) centered = qmax;
      zp = (int32_t) floor(centered + 0.5);
      break;
    }
    case 1: {
      int32_t choices[] = {qmin, qmax, qmin + 1, qmax - 1, p->is_signed ? 0 : 128};
      zp = T_PICK(choices);
      break;
    }
    default:
      zp = (int32_t) t_range(qmin, qmax);
      break;
  }
  int32_t lo = qmin, hi = qmax;
  switch (t_below(6)) {
    case 2:
      lo = (int32_t) t_range(qmin, qmax);
      hi = (int32_t) t_range(lo, qmax);
      break;
    case 3:
      lo = hi = (int32_t) t_range(qmin, qmax);
      break;
    case 4:
      lo = zp;
      break;
    case 5:
      lo = qmin + 1;
      hi = qmax - 1;
      break;
    default:
      break;
  }
  r->rq.zero_point = zp;
  r->rq.min = lo;
  r->rq.max = hi;
  qrq_describe(r);
}
