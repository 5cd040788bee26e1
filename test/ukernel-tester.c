/*
 * The kernel-level tester (ukernel-tester.h): builds one problem, packs it with the
 * table's packer, calls the kernel once per packed block as the drivers do, and
 * compares C after every call with the reference (ref.c).
 */
#include "ukernel-tester.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "test.h"

/* ---- faults ----------------------------------------------------------------------
 * Inputs end where an inaccessible page begins: a kernel that reads past one faults.
 * The fault is caught (siglongjmp out of the kernel) and reported as a failure of the
 * problem, so that the run goes on and names the kernel. */

static sigjmp_buf fault_env;
static volatile sig_atomic_t fault_armed;

static void on_fault(int sig)
{
  if (fault_armed) {
    fault_armed = 0;
    siglongjmp(fault_env, sig);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Runs call(ctx) with the fault handler in place (the runner's own handler, which
 * names the case before the process dies, is back afterwards); 0, or the number of
 * the signal the call raised. */
static int guarded(void (*call)(void*), void* ctx)
{
  struct sigaction sa, old_segv, old_bus;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_fault;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &old_segv);
  sigaction(SIGBUS, &sa, &old_bus);
  int sig = sigsetjmp(fault_env, 1);
  if (sig == 0) {
    fault_armed = 1;
    call(ctx);
    fault_armed = 0;
  }
  sigaction(SIGSEGV, &old_segv, NULL);
  sigaction(SIGBUS, &old_bus, NULL);
  return sig;
}

static const char* signal_name(int sig)
{
  return sig == SIGSEGV ? "SIGSEGV" : (sig == SIGBUS ? "SIGBUS" : "signal");
}

/* ---- cases ------------------------------------------------------------------------- */

static char case_name[256] = "(no case)";
static uint64_t case_seed;

void uk_case_start(const char* name, uint64_t seed)
{
  snprintf(case_name, sizeof(case_name), "%s", name);
  case_seed = seed;
  t_seed(seed);
}

void uk_tester_release(void)
{
  /* nothing is kept between problems: every buffer is mapped and unmapped per problem */
}

/* printf into a growing message */
typedef struct text {
  char s[1024];
  size_t len;
} text;

static void add(text* x, const char* fmt, ...) T_PRINTF(2, 3);
static void add(text* x, const char* fmt, ...)
{
  if (x->len >= sizeof(x->s)) return;
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(x->s + x->len, sizeof(x->s) - x->len, fmt, ap);
  va_end(ap);
  if (n > 0) x->len += (size_t) n;
  if (x->len > sizeof(x->s)) x->len = sizeof(x->s);
}

/* ---- shared helpers ------------------------------------------------------------------ */

static int32_t clamp32(int64_t v, int32_t lo, int32_t hi)
{
  return v < lo ? lo : (v > hi ? hi : (int32_t) v);
}

/* An input for the kernel: bytes that end at an inaccessible page. */
static void* fenced_copy(t_fence* f, const void* data, size_t bytes)
{
  void* p = t_fence_init(f, 1, bytes, bytes);
  memcpy(p, data, bytes);
  return p;
}

/* 1 if every fence is intact; else describes the first changed one in msg. */
static int fences_intact(const t_fence* const* fences, const char* const* names, size_t count,
                         char* msg, size_t msg_size)
{
  for (size_t i = 0; i < count; i++) {
    long offset;
    if (fences[i]->map != NULL && !t_fence_intact(fences[i], &offset)) {
      snprintf(msg, msg_size, "the kernel wrote into its input %s (byte %ld from its start)",
               names[i], offset);
      return 0;
    }
  }
  return 1;
}

/* ---- quantized ------------------------------------------------------------------------- */

void uk_q_header(const struct gemmi8_qgemm_config* cfg, int is_signed, size_t n,
                 const int32_t* b_zp, uint32_t* flags, int32_t* coef)
{
  /* coef = (B - w) - b_zp: the weights are stored as given, or xor 0x80, which is
   * B - 128 on uint8 and B + 128 on int8 */
  const int32_t delta = (cfg->flags & GEMMI8_QLAYOUT_XOR) ? (is_signed ? -128 : 128) : 0;
  const int32_t coef0 = delta - (b_zp != NULL ? b_zp[0] : 0);
  int uniform = 1;
  for (size_t j = 1; j < n; j++) uniform &= delta - (b_zp != NULL ? b_zp[j] : 0) == coef0;
  *flags = 0;
  *coef = 0;
  if (!(cfg->flags & GEMMI8_QLAYOUT_COEF)) {
    *flags = GEMMI8_PACKED_NO_ROW_SUM; /* no coef in the layout */
  } else if (uniform) {
    *flags = coef0 == 0 ? GEMMI8_PACKED_NO_ROW_SUM : GEMMI8_PACKED_UNIFORM_COEF;
    *coef = coef0;
  }
}

uk_qtest uk_qtest_defaults(const uk_qkernel* kn)
{
  uk_qtest t;
  memset(&t, 0, sizeof(t));
  t.m = kn->mr;
  t.n = kn->cfg->nr;
  t.k = 2 * (size_t) kn->cfg->kr + 3;
  t.b_zp_mode = uk_bzp_random;
  t.data = uk_data_random;
  t.bias = uk_bias_center;
  t.scale = uk_scale_span;
  t.clamp = uk_clamp_none;
  t.c_zp = uk_czp_span;
  if (kn->ifn != NULL) {
    t.ks = 3;
    t.a_offset = (size_t) t_range(0, 5);
    t.zero_taps = 1;
  }
  return t;
}

struct qcall {
  gemmi8_qgemm_ukernel_fn fn;
  size_t mr, nr, k;
  const void* a;
  size_t a_stride;
  const void* w;
  void* c;
  size_t c_stride;
  const struct gemmi8_qparams* params;
};

struct qicall {
  gemmi8_qigemm_ukernel_fn fn;
  size_t mr, nr, kc, ks;
  const void* const* a;
  const void* w;
  void* c;
  size_t c_stride, a_offset;
  const void* zero;
  const struct gemmi8_qparams* params;
};

static void qcall_run(void* ctx)
{
  const struct qcall* q = ctx;
  q->fn(q->mr, q->nr, q->k, q->a, q->a_stride, q->w, q->c, q->c_stride, q->params);
}

static void qicall_run(void* ctx)
{
  const struct qicall* q = ctx;
  q->fn(q->mr, q->nr, q->kc, q->ks, q->a, q->w, q->c, q->c_stride, q->a_offset, q->zero,
        q->params);
}

/* One element of A or B for the data mode (zp: the operand's zero point). */
static uint8_t q_draw(enum uk_data data, int32_t zp, int32_t lo, int32_t hi)
{
  switch (data) {
    case uk_data_random:
      return (uint8_t) t_rand64();
    case uk_data_extremes:
    case uk_data_unpaired:
      return (uint8_t) (t_below(2) ? lo : hi);
    case uk_data_small:
      return (uint8_t) clamp32((int64_t) zp + t_range(-2, 2), lo, hi);
    case uk_data_kmax:
      return (uint8_t) (lo + hi - zp); /* zp at one end of the range: the other end */
  }
  return 0;
}

/* Largest |acc| over the entries of one channel (per tensor: all), at least 1. */
static double acc_range(const int32_t* acc, size_t m, size_t n, int per_channel, size_t ch)
{
  double r = 1.0;
  for (size_t i = 0; i < m; i++) {
    for (size_t j = per_channel ? ch : 0; j < (per_channel ? ch + 1 : n); j++) {
      const double v = fabs((double) acc[i * n + j]);
      if (v > r) r = v;
    }
  }
  return r;
}

/* The requantization parameters of one problem. */
typedef struct qrequant {
  size_t channels;
  int32_t* multiplier;
  int32_t* shift;
  float* scale;
  int left_shift;
  int32_t zero_point, min, max;
} qrequant;

static void q_requant(const uk_qtest* t, int is_signed, const int32_t* acc, qrequant* rq)
{
  const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  const size_t m = t->m, n = t->n;
  rq->channels = t->per_channel ? n : 1;
  rq->multiplier = t_alloc(rq->channels * sizeof(int32_t));
  rq->shift = t_alloc(rq->channels * sizeof(int32_t));
  rq->scale = t_alloc(rq->channels * sizeof(float));
  rq->left_shift = 0;
  double half = 255.0; /* the output range on one side of the zero point */
  switch (t->c_zp) {
    case uk_czp_span:
      rq->zero_point = (int32_t) t_range(lo + 32, hi - 32);
      half = 127.5;
      break;
    case uk_czp_min:
      rq->zero_point = lo;
      break;
    case uk_czp_max:
      rq->zero_point = hi;
      break;
  }
  for (size_t c = 0; c < rq->channels; c++) {
    const double range = acc_range(acc, m, n, t->per_channel, c);
    const double span = half / range * (0.75 + 0.75 * t_unit());
    double s = span;
    enum uk_scale mode = t->scale;
    if (mode == uk_scale_mixed) {
      mode = (t->per_channel ? c % 2 == 1 : t_below(2) == 0) ? uk_scale_above_1 : uk_scale_span;
    }
    int direct = 0; /* multiplier and shift set directly, not from s */
    switch (mode) {
      case uk_scale_span:
      case uk_scale_mixed:
        break;
      case uk_scale_above_1:
        s = span > 1.0 ? span : 1.0 + t_unit();
        break;
      case uk_scale_huge:
        s = ldexp(1.0 + t_unit(), 8 + (int) t_below(22));
        break;
      case uk_scale_sweep: {
        /* channel c takes shift -31 + c % 62 (per tensor: any), multipliers from the
         * normalized range and the ends of the whole valid range */
        const int32_t e = t->per_channel ? -31 + (int32_t) (c % 62) : (int32_t) t_range(-31, 30);
        static const int32_t ends[] = {0, 1, 2, 0x40000000, INT32_MAX, INT32_MAX - 1};
        const uint32_t pick = t_below(8);
        rq->shift[c] = e;
        rq->multiplier[c] = pick < 4   ? (int32_t) t_range(0x40000000, INT32_MAX)
                            : pick < 6 ? T_PICK(ends)
                                       : (int32_t) t_range(0, INT32_MAX);
        /* fp32: 2^-40 .. 2^20 across the channels, and the extremes of float */
        const double f = t->per_channel ? (double) (c % 62) / 61.0 : t_unit();
        float fs = (float) ldexp(1.0 + t_unit(), -40 + (int) (60.0 * f));
        if (t->per_channel && c % 31 == 7) fs = 0x1p-149f;
        if (t->per_channel && c % 31 == 8) fs = FLT_MAX;
        if (!t->per_channel && t_below(8) == 0) fs = t_below(2) ? 0x1p-149f : FLT_MAX;
        rq->scale[c] = fs;
        direct = 1;
        break;
      }
      case uk_scale_ties:
        s = ldexp(1.0, -1 - (int) t_below(4));
        break;
    }
    if (!direct) {
      rq->scale[c] = (float) s;
      ref_quantize_multiplier(s, &rq->multiplier[c], &rq->shift[c]);
    }
    rq->left_shift |= rq->shift[c] > 0;
  }
  rq->min = lo;
  rq->max = hi;
  const int32_t zp = rq->zero_point;
  switch (t->clamp) {
    case uk_clamp_none:
      break;
    case uk_clamp_narrow:
      rq->min = clamp32((int64_t) zp - t_range(1, 40), lo, hi);
      rq->max = clamp32((int64_t) zp + t_range(1, 40), lo, hi);
      break;
    case uk_clamp_relu:
      rq->min = zp;
      break;
    case uk_clamp_max:
      rq->max = clamp32((int64_t) zp + t_range(0, 30), lo, hi);
      break;
    case uk_clamp_point:
      rq->min = rq->max = (int32_t) t_range(lo, hi);
      break;
  }
}

static void q_requant_free(qrequant* rq)
{
  free(rq->multiplier);
  free(rq->shift);
  free(rq->scale);
}

static int32_t q_expected(enum uk_output output, const qrequant* rq, int32_t acc, size_t ch)
{
  switch (output) {
    case uk_out_s32:
      return acc;
    case uk_out_fixedpoint:
      return ref_output_fixedpoint(acc, rq->multiplier[ch], rq->shift[ch], rq->zero_point,
                                   rq->min, rq->max);
    case uk_out_fp32:
      return ref_output_fp32(acc, rq->scale[ch], rq->zero_point, rq->min, rq->max);
  }
  return 0;
}

static const char* const data_names[] = {"random", "extremes", "small", "unpaired", "kmax"};
static const char* const bias_names[] = {"random", "none", "wrap"};

/* The problem in words, for failure messages. */
static void q_describe(text* x, const uk_qkernel* kn, const uk_qtest* t, size_t a_stride,
                       size_t c_stride, int32_t a_zp, const int32_t* b_zp,
                       const struct gemmi8_qparams* p, const qrequant* rq)
{
  add(x, "%s, M x N x K = %zu x %zu x %zu, a_stride %zu%s, c_stride %zu, a_zp %" PRId32,
      kn->name, t->m, t->n, t->k, a_stride,
      t->a_stride == 0 && t->a_row_pages ? " (rows at page ends)" : "", c_stride, a_zp);
  if (!kn->is_signed) {
    if (t->b_zp_mode == uk_bzp_channel) add(x, ", b_zp per channel");
    else if (t->b_zp_mode == uk_bzp_channel_extremes) add(x, ", b_zp per channel (0 or 255)");
    else add(x, ", b_zp %" PRId32, b_zp[0]);
  }
  if (kn->ifn != NULL) {
    add(x, ", igemm: %zu taps of K bytes, a_offset %zu, zero taps %s", t->ks, t->a_offset,
        t->zero_taps == 0 ? "none" : (t->zero_taps == 1 ? "some" : "all"));
  }
  add(x, ", data %s, bias %s", data_names[t->data], bias_names[t->bias]);
  if (p->row_sum == NULL) {
    add(x, ", row sums NULL");
  } else if (p->row_sum_uniform) {
    add(x, ", row sums given (uniform coef %" PRId32 ")", p->row_sum_coef);
  } else {
    add(x, ", row sums given (coef per column)");
  }
  if (kn->output == uk_out_s32) {
    add(x, ", int32 output");
  } else {
    add(x, ", %s %s, c_zp %" PRId32 ", [min, max] = [%" PRId32 ", %" PRId32 "]%s",
        t->per_channel ? "per-channel" : "per-tensor",
        kn->output == uk_out_fixedpoint ? "fixed-point" : "fp32", rq->zero_point, rq->min,
        rq->max, kn->output == uk_out_fixedpoint && rq->left_shift ? ", left_shift" : "");
  }
}

/* Fails the current case: the problem, then what went wrong, then the seed. */
static void fail_case(const text* problem, const char* what)
{
  t_fail(case_name, "%s: %s [seed 0x%016" PRIx64 "]", problem->s, what, case_seed);
}

int uk_qtest_run(const uk_qkernel* kn, const uk_qtest* t)
{
  const struct gemmi8_qgemm_config* cfg = kn->cfg;
  const int is_signed = kn->is_signed;
  const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  const size_t m = t->m, n = t->n, k = t->k, nr_main = cfg->nr;
  const enum uk_output output = kn->output;
  int ok = 1;

  /* zero points */
  int32_t a_zp = t->a_zp_given ? t->a_zp : (int32_t) t_range(lo, hi);
  if (t->data == uk_data_kmax && !t->a_zp_given) a_zp = t_below(2) ? lo : hi;
  int32_t* b_zp = t_alloc(n * sizeof(int32_t));
  const int32_t zp0 = t->b_zp_mode == uk_bzp_tensor ? t->b_zp : (int32_t) t_range(0, 255);
  for (size_t j = 0; j < n; j++) {
    int32_t z = zp0;
    if (t->b_zp_mode == uk_bzp_channel) z = (int32_t) t_range(0, 255);
    if (t->b_zp_mode == uk_bzp_channel_extremes) z = t_below(2) ? 0 : 255;
    b_zp[j] = is_signed ? 0 : z;
  }

  /* igemm: ks taps of k bytes, each tap's weights padded to KR (src/conv.c); A is
   * then the m x (ks * k) matrix of the taps' rows side by side (la) */
  const int indirect = kn->ifn != NULL;
  size_t ks = indirect && t->ks > 1 ? t->ks : 1;
  size_t kcp = ks > 1 ? gemmi8_round_up(k, cfg->kr) : k;
  if (ks * kcp > (is_signed ? GEMMI8_QS8_MAX_K : GEMMI8_QU8_MAX_K)) ks = 1, kcp = k;
  const size_t kt = ks * k, kp = ks * kcp;

  /* A: rows that end at an inaccessible page (every row, or the last); igemm: one
   * row per tap and row, the kernel reading k bytes from a_offset on */
  const size_t a_rows = indirect ? ks * m : m, a_skip = indirect ? t->a_offset : 0;
  t_fence fa, fz;
  memset(&fz, 0, sizeof(fz));
  size_t a_stride = t->a_stride;
  uint8_t* a;
  if (a_stride == 0 && t->a_row_pages) {
    a = t_fence_init(&fa, a_rows, a_skip + k, 0);
    a_stride = fa.stride;
  } else {
    if (a_stride == 0) a_stride = a_skip + k;
    a = t_fence_init(&fa, a_rows, a_skip + k, a_stride);
  }
  for (size_t i = 0; i < a_rows; i++) {
    for (size_t p = 0; p < k; p++) a[i * a_stride + a_skip + p] = q_draw(t->data, a_zp, lo, hi);
  }
  /* packed A: the panel the driver would give, ending at an inaccessible page */
  t_fence fp;
  memset(&fp, 0, sizeof(fp));
  const uint8_t* ka = a;
  size_t ka_stride = a_stride;
  if (kn->packed_a) {
    const size_t panel_bytes = gemmi8_qpanel_bytes(cfg, k);
    uint8_t* panel = t_fence_init(&fp, 1, panel_bytes, panel_bytes);
    cfg->pack_a(m, k, a, a_stride, panel);
    ka = panel;
    ka_stride = panel_bytes;
  }
  uint8_t* la = a;
  size_t la_stride = a_stride;
  const void** ptrs = NULL;
  uint8_t* zero = NULL;
  if (indirect) {
    zero = t_fence_init(&fz, 1, k, k);
    memset(zero, (uint8_t) a_zp, k);
    const size_t MR = kn->mr;
    ptrs = t_alloc(ks * MR * sizeof(void*));
    la = t_alloc(m * kt);
    la_stride = kt;
    for (size_t tap = 0; tap < ks; tap++) {
      for (size_t i = 0; i < MR; i++) {
        const size_t row = i < m ? i : m - 1; /* rows past m repeat the last, as the driver */
        const int to_zero = t->zero_taps == 2 || (t->zero_taps == 1 && t_below(4) == 0);
        const void* ptr = a + (tap * m + row) * a_stride;
        if (i < m && to_zero) ptr = zero;
        if (i >= m) ptr = ptrs[tap * MR + m - 1];
        ptrs[tap * MR + i] = ptr;
        if (i < m) {
          memcpy(la + i * kt + tap * k,
                 ptr == zero ? zero : (const uint8_t*) ptr + a_skip, k);
        }
      }
    }
  }
  /* B, N x K (read by the packer only) */
  uint8_t* b = t_alloc(n * kt);
  for (size_t j = 0; j < n; j++) {
    const int32_t column_extreme = t_below(2) ? lo : hi; /* kmax, qs8: one sign per column */
    for (size_t p = 0; p < kt; p++) {
      uint8_t v = q_draw(t->data, is_signed ? 0 : b_zp[j], lo, hi);
      if (t->data == uk_data_kmax && is_signed) v = (uint8_t) column_extreme;
      b[j * kt + p] = v;
    }
    for (size_t p = 0; p < kt && t->data == uk_data_unpaired; p++) {
      const size_t d = p % k; /* depth within the tap */
      if (d % 16 < 8 && d + 8 < k && b[j * kt + p] == 0x80 && b[j * kt + p + 8] == 0x80) {
        b[j * kt + p + 8] = 0x81; /* -127 */
      }
    }
  }

  /* reference accumulators, then a bias chosen from them */
  int32_t* acc = t_alloc(m * n * sizeof(int32_t));
  ref_q8_acc(is_signed, m, n, kt, la, la_stride, a_zp, b, kt, 0, b_zp, NULL, acc);
  int32_t* bias = NULL;
  if (t->bias != uk_bias_none) {
    bias = t_alloc(n * sizeof(int32_t));
    int64_t sum = 0, low = INT64_MAX, high = INT64_MIN;
    for (size_t i = 0; i < m * n; i++) {
      sum += acc[i];
      if (acc[i] < low) low = acc[i];
      if (acc[i] > high) high = acc[i];
    }
    const int64_t mean = sum / (int64_t) (m * n), spread = (high - low) / 4;
    for (size_t j = 0; j < n; j++) {
      bias[j] = t->bias == uk_bias_wrap ? (int32_t) t_rand64()
                                        : ref_wrap_s32(-mean + t_range(-spread, spread));
    }
    for (size_t i = 0; i < m; i++) {
      for (size_t j = 0; j < n; j++) {
        acc[i * n + j] = ref_wrap_s32((int64_t) acc[i * n + j] + bias[j]);
      }
    }
  }

  /* packed blocks, as pack/qpack.c pack_into() writes them after the header (igemm:
   * each tap padded to kcp depths holding the weight zero point, as src/conv.c does) */
  uint8_t* bp = b;
  if (kp != kt) {
    bp = t_alloc(n * kp);
    for (size_t j = 0; j < n; j++) {
      for (size_t tap = 0; tap < ks; tap++) {
        memcpy(bp + j * kp + tap * kcp, b + j * kt + tap * k, k);
        memset(bp + j * kp + tap * kcp + k, is_signed ? 0 : b_zp[j], kcp - k);
      }
    }
  }
  const size_t blocks = gemmi8_divide_round_up(n, nr_main);
  const size_t block_bytes = gemmi8_qblock_bytes(cfg, kp);
  t_fence fw;
  uint8_t* w = t_fence_init(&fw, 1, blocks * block_bytes, blocks * block_bytes);
  const struct gemmi8_qpack_source src = {bp, kp, 0, is_signed, 0};
  cfg->pack(cfg, n, kp, &src, a_zp, is_signed ? NULL : b_zp, bias, block_bytes, w);
  if (bp != b) free(bp);

  /* parameters, as src/qgemm.c run() sets them */
  struct gemmi8_qparams base;
  memset(&base, 0, sizeof(base));
  uint32_t flags;
  int32_t coef;
  uk_q_header(cfg, is_signed, n, is_signed ? NULL : b_zp, &flags, &coef);
  t_fence fs, fm, fe, fc;
  memset(&fs, 0, sizeof(fs));
  memset(&fm, 0, sizeof(fm));
  memset(&fe, 0, sizeof(fe));
  memset(&fc, 0, sizeof(fc));
  if (cfg->row_sum != NULL && !(flags & GEMMI8_PACKED_NO_ROW_SUM)) {
    int32_t* sums = t_alloc(m * sizeof(int32_t));
    for (size_t i = 0; i < m; i++) {
      uint32_t s = 0;
      for (size_t p = 0; p < kt; p++) {
        const uint8_t v = la[i * la_stride + p];
        s += (uint32_t) (is_signed ? (int32_t) (int8_t) v : (int32_t) v);
      }
      sums[i] = (int32_t) s;
    }
    base.row_sum = fenced_copy(&fs, sums, m * sizeof(int32_t));
    free(sums);
    base.row_sum_uniform = (cfg->flags & GEMMI8_QLAYOUT_UNIFORM_COEF) && (flags & GEMMI8_PACKED_UNIFORM_COEF);
    base.row_sum_coef = coef;
  }
  qrequant rq;
  memset(&rq, 0, sizeof(rq));
  if (output != uk_out_s32) {
    q_requant(t, is_signed, acc, &rq);
    base.channel_stride = t->per_channel ? 1 : 0;
    if (output == uk_out_fixedpoint) {
      base.multiplier = fenced_copy(&fm, rq.multiplier, rq.channels * sizeof(int32_t));
      base.shift = fenced_copy(&fe, rq.shift, rq.channels * sizeof(int32_t));
      base.left_shift = rq.left_shift;
    } else {
      base.scale = fenced_copy(&fc, rq.scale, rq.channels * sizeof(float));
    }
    base.zero_point = rq.zero_point;
    base.min = rq.min;
    base.max = rq.max;
  }
  t_fence_seal(&fa);
  if (fz.map) t_fence_seal(&fz);
  t_fence_seal(&fw);
  if (fs.map) t_fence_seal(&fs);
  if (fm.map) t_fence_seal(&fm);
  if (fe.map) t_fence_seal(&fe);
  if (fc.map) t_fence_seal(&fc);

  /* C: sentinel bytes, guards; one call per packed block, C compared after each */
  const size_t c_stride = t->c_stride != 0 ? t->c_stride : n;
  const size_t c_size = output == uk_out_s32 ? 4 : 1;
  t_out out;
  t_out_init(&out, output == uk_out_s32 ? T_S32 : (is_signed ? T_S8 : T_U8), m, n, c_stride);
  text problem = {.len = 0};
  q_describe(&problem, kn, t, a_stride, c_stride, a_zp, b_zp, &base, &rq);
  char msg[512], what[768];
  for (size_t bl = 0; bl < blocks && ok; bl++) {
    const size_t n0 = gemmi8_qblock_start(cfg, n, bl);
    const size_t n1 = bl + 1 < blocks ? gemmi8_qblock_start(cfg, n, bl + 1) : n;
    if (n1 <= n0 || n1 - n0 > nr_main) {
      snprintf(what, sizeof(what), "packed block %zu holds columns %zu..%zu: not 1..%zu columns",
               bl, n0, n1, nr_main);
      fail_case(&problem, what);
      ok = 0;
      break;
    }
    for (size_t i = 0; i < m; i++) {
      for (size_t j = n0; j < n1; j++) {
        const int32_t y = q_expected(output, &rq, acc[i * n + j], t->per_channel ? j : 0);
        if (output == uk_out_s32) {
          memcpy(t_out_want(&out, i, j), &y, 4);
        } else {
          const uint8_t byte = (uint8_t) y;
          memcpy(t_out_want(&out, i, j), &byte, 1);
        }
      }
    }
    struct gemmi8_qparams p = base;
    if (p.multiplier) p.multiplier += n0 * p.channel_stride;
    if (p.shift) p.shift += n0 * p.channel_stride;
    if (p.scale) p.scale += n0 * p.channel_stride;
    /* the block's fixed-point constants as the driver prepares them (blocks with
     * several row tiles), or none (a single row tile: the kernel computes them), on
     * alternate blocks so that a case runs both paths */
    _Alignas(64) uint8_t prepared[GEMMI8_QPREPARED_BYTES];
    if (output == uk_out_fixedpoint && cfg->prepare_fixedpoint != NULL && bl % 2 == 0) {
      cfg->prepare_fixedpoint(&p, n1 - n0, prepared);
      p.prepared = prepared;
    }
    struct qcall call = {kn->fn, m, n1 - n0, k, ka, ka_stride, w + bl * block_bytes,
                         (uint8_t*) out.body + n0 * c_size, c_stride * c_size, &p};
    struct qicall icall = {kn->ifn, m, n1 - n0, k, ks, ptrs, w + bl * block_bytes,
                           (uint8_t*) out.body + n0 * c_size, c_stride * c_size, a_skip, zero,
                           &p};
    const int sig = indirect ? guarded(qicall_run, &icall) : guarded(qcall_run, &call);
    char where[128];
    snprintf(where, sizeof(where), "call %zu of %zu (columns %zu..%zu)", bl + 1, blocks, n0,
             n1 - 1);
    if (sig != 0) {
      snprintf(what, sizeof(what),
               "%s: %s (a read or write past an input: each ends at an inaccessible page)", where,
               signal_name(sig));
      fail_case(&problem, what);
      ok = 0;
      break;
    }
    size_t row, col;
    if (!t_out_same(&out, msg, sizeof(msg), &row, &col)) {
      text detail = {.len = 0};
      if (row != SIZE_MAX) {
        const size_t ch = t->per_channel ? col : 0;
        add(&detail, " (acc %" PRId32, acc[row * n + col]);
        if (!is_signed && t->b_zp_mode >= uk_bzp_channel) add(&detail, ", b_zp %" PRId32, b_zp[col]);
        if (output == uk_out_fixedpoint) {
          add(&detail, ", multiplier %" PRId32 ", shift %" PRId32, rq.multiplier[ch], rq.shift[ch]);
        } else if (output == uk_out_fp32) {
          add(&detail, ", scale %.9g (%a)", (double) rq.scale[ch], (double) rq.scale[ch]);
        }
        if (col < n0 || col >= n1) add(&detail, "; outside this call's columns");
        add(&detail, ")");
      }
      text report = {.len = 0};
      add(&report, "%s: %s%s", where, msg, detail.s);
      fail_case(&problem, report.s);
      ok = 0;
    }
  }
  if (ok) {
    const t_fence* fences[] = {&fa, &fw, &fs, &fm, &fe, &fc, &fz};
    static const char* const names[] = {"A", "packed weights", "row sums", "multipliers",
                                        "shifts", "scales", "zero buffer"};
    if (!fences_intact(fences, names, T_COUNT(fences), msg, sizeof(msg))) {
      fail_case(&problem, msg);
      ok = 0;
    }
  }

  t_out_free(&out);
  q_requant_free(&rq);
  t_fence_free(&fa);
  t_fence_free(&fw);
  t_fence_free(&fs);
  t_fence_free(&fm);
  t_fence_free(&fe);
  t_fence_free(&fc);
  t_fence_free(&fz);
  t_fence_free(&fp);
  if (la != a) free(la);
  free(ptrs);
  free(b_zp);
  free(b);
  free(acc);
  free(bias);
  return ok;
}

/* ---- binary ------------------------------------------------------------------------------- */

uk_btest uk_btest_defaults(const uk_bkernel* kn)
{
  uk_btest t;
  memset(&t, 0, sizeof(t));
  t.m = kn->mr;
  t.n = kn->cfg->nr;
  t.k = 200;
  t.params = uk_bp_random;
  return t;
}

struct bcall {
  gemmi8_bgemm_ukernel_fn fn;
  size_t mr, nr, k;
  const uint64_t* a;
  size_t a_stride;
  const void* w;
  void* c;
  size_t c_stride;
  const struct gemmi8_bparams* params;
};

static void bcall_run(void* ctx)
{
  const struct bcall* q = ctx;
  q->fn(q->mr, q->nr, q->k, q->a, q->a_stride, q->w, q->c, q->c_stride, q->params);
}

/* Random bits; padding bits past k random or all ones. */
static void fill_bit_row(uint64_t* row, size_t k, int pad_ones)
{
  const size_t words = GEMMI8_BIN_WORDS(k);
  t_fill_random(row, words * sizeof(uint64_t));
  if (pad_ones && k % 64 != 0) row[words - 1] |= ~UINT64_C(0) << (k % 64);
}

static const char* const bparams_names[] = {"random", "scale NULL", "bias NULL",
                                            "scale and bias NULL", "exact zeros",
                                            "negative zeros", "infinities and NaN"};

static void b_params(const uk_btest* t, enum uk_boutput output, const int32_t* acc, float** scale,
                     float** bias)
{
  const size_t m = t->m, n = t->n, k = t->k;
  *scale = *bias = NULL;
  if (output == uk_bout_s32) return; /* the driver passes NULL for int32 outputs */
  const int want_scale = t->params != uk_bp_no_scale && t->params != uk_bp_none;
  int want_bias = t->params != uk_bp_no_bias && t->params != uk_bp_none;
  if (t->params == uk_bp_neg_zero && t_below(2) == 0) want_bias = 0; /* +0.0f is added */
  float* s = want_scale ? t_alloc(n * sizeof(float)) : NULL;
  float* b = want_bias ? t_alloc(n * sizeof(float)) : NULL;
  static const float exact_scales[] = {1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f};
  static const float odd_scales[] = {INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 1.0f, -1.0f, 0.25f};
  static const float odd_biases[] = {INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 1.0f, -3.0f};
  for (size_t j = 0; j < n; j++) {
    const int32_t some_acc = acc[t_below((uint32_t) m) * n + j];
    float sj = 1.0f, bj = 0.0f;
    switch (t->params) {
      case uk_bp_random:
      case uk_bp_no_scale:
      case uk_bp_no_bias:
      case uk_bp_none:
        sj = (float) ((t_unit() - 0.3) * 4.0);
        bj = (float) ((t_unit() - 0.5) * (double) k * 0.5);
        break;
      case uk_bp_zeros:
        sj = T_PICK(exact_scales);
        bj = -(float) some_acc * sj; /* exact: |acc| < 2^24 */
        break;
      case uk_bp_neg_zero:
        sj = (float) -(0.25 + t_unit());
        bj = -0.0f;
        break;
      case uk_bp_nonfinite:
        sj = t_below(2) ? T_PICK(odd_scales) : (float) (t_unit() - 0.5);
        bj = t_below(2) ? T_PICK(odd_biases) : (float) (t_unit() - 0.5) * 4.0f;
        break;
    }
    if (s) s[j] = sj;
    if (b) b[j] = bj;
  }
  *scale = s;
  *bias = b;
}

int uk_btest_run(const uk_bkernel* kn, const uk_btest* t)
{
  const struct gemmi8_bgemm_config* cfg = kn->cfg;
  const size_t m = t->m, n = t->n, k = t->k, nr_main = cfg->nr;
  const size_t words = GEMMI8_BIN_WORDS(k);
  const enum uk_boutput output = kn->output;
  int ok = 1;

  /* A */
  t_fence fa;
  size_t a_stride = t->a_stride; /* words */
  uint64_t* a;
  if (a_stride == 0 && t->a_row_pages) {
    a = t_fence_init(&fa, m, words * 8, 0);
    a_stride = fa.stride / 8;
  } else {
    if (a_stride == 0) a_stride = words;
    a = t_fence_init(&fa, m, words * 8, a_stride * 8);
  }
  for (size_t i = 0; i < m; i++) fill_bit_row(a + i * a_stride, k, t->pad_ones);
  /* B, N rows of k bits (read by the packer only) */
  uint64_t* b = t_alloc(n * words * sizeof(uint64_t));
  for (size_t j = 0; j < n; j++) {
    if (t->complement) {
      for (size_t w = 0; w < words; w++) b[j * words + w] = ~a[j % m * a_stride + w];
    } else {
      fill_bit_row(b + j * words, k, t->pad_ones);
    }
  }
  int32_t* acc = t_alloc(m * n * sizeof(int32_t));
  ref_bin_acc(m, n, k, a, a_stride, b, words, 0, acc);
  float *scale_src, *bias_src;
  b_params(t, output, acc, &scale_src, &bias_src);

  /* packed blocks and parameters, fenced */
  const size_t blocks = gemmi8_divide_round_up(n, nr_main);
  const size_t block_bytes = gemmi8_bblock_bytes(cfg, k);
  t_fence fw, fs, fb;
  memset(&fs, 0, sizeof(fs));
  memset(&fb, 0, sizeof(fb));
  uint8_t* w = t_fence_init(&fw, 1, blocks * block_bytes, blocks * block_bytes);
  cfg->pack(nr_main, cfg->kr, n, k, b, words, 0, block_bytes, w);
  const float* scale = scale_src ? fenced_copy(&fs, scale_src, n * sizeof(float)) : NULL;
  const float* bias = bias_src ? fenced_copy(&fb, bias_src, n * sizeof(float)) : NULL;
  t_fence_seal(&fa);
  t_fence_seal(&fw);
  if (fs.map) t_fence_seal(&fs);
  if (fb.map) t_fence_seal(&fb);

  const size_t cols = output == uk_bout_bits ? GEMMI8_BIN_WORDS(n) : n;
  const size_t c_stride = t->c_stride != 0 ? t->c_stride : cols;
  const size_t c_size = output == uk_bout_bits ? 8 : 4;
  t_out out;
  t_out_init(&out, output == uk_bout_bits ? T_U64 : (output == uk_bout_f32 ? T_F32 : T_S32), m,
             cols, c_stride);
  text problem = {.len = 0};
  add(&problem, "%s, M x N x K = %zu x %zu x %zu bits, a_stride %zu words%s, c_stride %zu, "
      "padding bits %s",
      kn->name, m, n, k, a_stride, t->a_stride == 0 && t->a_row_pages ? " (rows at page ends)" : "",
      c_stride, t->pad_ones ? "all ones" : "random");
  if (t->complement) add(&problem, ", B row j the complement of A row j %% %zu", m);
  if (output != uk_bout_s32) {
    add(&problem, ", scale/bias %s%s", bparams_names[t->params],
        t->params == uk_bp_neg_zero && bias == NULL ? " (bias NULL)" : "");
  }
  char msg[512], what[768];
  for (size_t bl = 0; bl < blocks && ok; bl++) {
    const size_t n0 = bl * nr_main, nr = gemmi8_min(nr_main, n - n0);
    for (size_t i = 0; i < m; i++) {
      for (size_t j = n0; j < n0 + nr; j++) {
        const int32_t x = acc[i * n + j];
        if (output == uk_bout_s32) {
          memcpy(t_out_want(&out, i, j), &x, 4);
        } else if (output == uk_bout_f32) {
          const float f = ref_bin_f32(x, scale, bias, j);
          memcpy(t_out_want(&out, i, j), &f, 4);
        } else {
          /* only the tile's bits change: the rest of the word keeps its sentinel */
          uint64_t word;
          memcpy(&word, t_out_want(&out, i, j / 64), 8);
          const uint64_t bit = UINT64_C(1) << (j % 64);
          word = ref_bin_f32(x, scale, bias, j) < 0.0f ? word | bit : word & ~bit;
          memcpy(t_out_want(&out, i, j / 64), &word, 8);
        }
      }
    }
    const struct gemmi8_bparams p = {scale ? scale + n0 : NULL, bias ? bias + n0 : NULL, n0};
    uint8_t* c = (uint8_t*) out.body + (output == uk_bout_bits ? 0 : n0 * c_size);
    struct bcall call = {kn->fn, m, nr, k, a, a_stride, w + bl * block_bytes, c,
                         c_stride * c_size, &p};
    const int sig = guarded(bcall_run, &call);
    char where[96];
    snprintf(where, sizeof(where), "call %zu of %zu (columns %zu..%zu, n0 %zu)", bl + 1, blocks,
             n0, n0 + nr - 1, n0);
    if (sig != 0) {
      snprintf(what, sizeof(what),
               "%s: %s (a read or write past an input: each ends at an inaccessible page)", where,
               signal_name(sig));
      fail_case(&problem, what);
      ok = 0;
      break;
    }
    size_t row, col;
    if (!t_out_same(&out, msg, sizeof(msg), &row, &col)) {
      text detail = {.len = 0};
      if (row != SIZE_MAX && output != uk_bout_bits) {
        add(&detail, " (acc %" PRId32 ", scale %.9g, bias %.9g%s)", acc[row * n + col],
            scale ? (double) scale[col] : 1.0, bias ? (double) bias[col] : 0.0,
            col < n0 || col >= n0 + nr ? "; outside this call's columns" : "");
      } else if (row != SIZE_MAX) {
        uint64_t got, want;
        memcpy(&got, (const uint8_t*) out.body + (row * c_stride + col) * 8, 8);
        memcpy(&want, t_out_want(&out, row, col), 8);
        const uint64_t diff = got ^ want;
        const unsigned bit = (unsigned) __builtin_ctzll(diff);
        const size_t column = col * 64 + bit;
        add(&detail, " (bit %u: column %zu, %s", bit, column,
            column >= n ? "past n: must keep its sentinel"
                        : (column < n0 || column >= n0 + nr ? "outside this call's columns"
                                                            : "in this call's tile"));
        if (column < n) {
          add(&detail, "; acc %" PRId32 ", scale %.9g, bias %.9g", acc[row * n + column],
              scale ? (double) scale[column] : 1.0, bias ? (double) bias[column] : 0.0);
        }
        add(&detail, ")");
      }
      text report = {.len = 0};
      add(&report, "%s: %s%s", where, msg, detail.s);
      fail_case(&problem, report.s);
      ok = 0;
    }
  }
  if (ok) {
    const t_fence* fences[] = {&fa, &fw, &fs, &fb};
    static const char* const names[] = {"A", "packed weights", "scale", "bias"};
    if (!fences_intact(fences, names, T_COUNT(fences), msg, sizeof(msg))) {
      fail_case(&problem, msg);
      ok = 0;
    }
  }

  t_out_free(&out);
  t_fence_free(&fa);
  t_fence_free(&fw);
  t_fence_free(&fs);
  t_fence_free(&fb);
  free(b);
  free(acc);
  free(scale_src);
  free(bias_src);
  return ok;
}

/* ---- row sums ---------------------------------------------------------------------------------- */

struct rcall {
  void (*fn)(size_t m, size_t k, const void* a, size_t a_stride, int32_t* sums);
  size_t m, k;
  const void* a;
  size_t a_stride;
  int32_t* sums;
};

static void rcall_run(void* ctx)
{
  const struct rcall* r = ctx;
  r->fn(r->m, r->k, r->a, r->a_stride, r->sums);
}

int uk_rsum_run(const struct gemmi8_qgemm_config* cfg, int is_signed, size_t m, size_t k,
                size_t a_stride, int a_row_pages, enum uk_data data)
{
  const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  t_fence fa;
  uint8_t* a;
  if (a_stride == 0 && a_row_pages) {
    a = t_fence_init(&fa, m, k, 0);
    a_stride = fa.stride;
  } else {
    if (a_stride == 0) a_stride = k;
    a = t_fence_init(&fa, m, k, a_stride);
  }
  for (size_t i = 0; i < m; i++) {
    const int32_t row_value = i % 2 ? lo : hi;
    for (size_t p = 0; p < k; p++) {
      uint8_t v = (uint8_t) t_rand64();
      if (data == uk_data_extremes) v = (uint8_t) (t_below(2) ? lo : hi);
      if (data == uk_data_kmax) v = (uint8_t) row_value;
      a[i * a_stride + p] = v;
    }
  }
  t_fence_seal(&fa);
  t_out out;
  t_out_init(&out, T_S32, m, 1, 1);
  for (size_t i = 0; i < m; i++) {
    int64_t s = 0;
    for (size_t p = 0; p < k; p++) {
      const uint8_t v = a[i * a_stride + p];
      s += is_signed ? (int64_t) (int8_t) v : (int64_t) v;
    }
    const int32_t s32 = ref_wrap_s32(s);
    memcpy(t_out_want(&out, i, 0), &s32, 4);
  }
  text problem = {.len = 0};
  add(&problem, "gemmi8_%s_rsum__%.24s (the %.24s table's row_sum), M x K = %zu x %zu, "
      "a_stride %zu%s, data %s",
      is_signed ? "qs8" : "qu8", cfg->isa, cfg->isa, m, k, a_stride,
      a_row_pages ? " (rows at page ends)" : "", data_names[data]);
  struct rcall call = {cfg->row_sum, m, k, a, a_stride, out.body};
  const int sig = guarded(rcall_run, &call);
  int ok = 1;
  char msg[512], what[600];
  size_t row, col;
  long offset;
  if (sig != 0) {
    snprintf(what, sizeof(what), "%s (a read or write past A: it ends at an inaccessible page)",
             signal_name(sig));
    fail_case(&problem, what);
    ok = 0;
  } else if (!t_out_same(&out, msg, sizeof(msg), &row, &col)) {
    fail_case(&problem, msg);
    ok = 0;
  } else if (!t_fence_intact(&fa, &offset)) {
    snprintf(what, sizeof(what), "the function wrote into A (byte %ld from its start)", offset);
    fail_case(&problem, what);
    ok = 0;
  }
  t_out_free(&out);
  t_fence_free(&fa);
  return ok;
}

/* ---- row sums through pointers (igemm row tiles) ------------------------------------ */

struct ircall {
  gemmi8_irow_sum_fn fn;
  size_t mr, rows, kc, ks;
  const void* const* a;
  size_t a_offset;
  const void* zero;
  int32_t* sums;
};

static void ircall_run(void* ctx)
{
  const struct ircall* r = ctx;
  r->fn(r->mr, r->rows, r->kc, r->ks, r->a, r->a_offset, r->zero, r->sums);
}

int uk_irsum_run(const struct gemmi8_qgemm_config* cfg, int is_signed, size_t rows, size_t kc,
                 size_t ks, size_t a_offset, enum uk_data data)
{
  const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  const size_t mr = cfg->mr;
  /* one row per tap and row, each ending at an inaccessible page; the zero buffer too */
  t_fence fa, fz;
  uint8_t* a = t_fence_init(&fa, ks * mr, a_offset + kc, 0);
  const size_t a_stride = fa.stride;
  uint8_t* zero = t_fence_init(&fz, 1, kc, kc);
  const uint8_t zp = (uint8_t) t_range(lo, hi);
  memset(zero, zp, kc);
  for (size_t r = 0; r < ks * mr; r++) {
    for (size_t p = 0; p < kc; p++) {
      uint8_t v = (uint8_t) t_rand64();
      if (data == uk_data_extremes) v = (uint8_t) (t_below(2) ? lo : hi);
      a[r * a_stride + a_offset + p] = v;
    }
  }
  const void** ptrs = t_alloc(ks * mr * sizeof(void*));
  for (size_t t = 0; t < ks; t++) {
    for (size_t i = 0; i < mr; i++) {
      ptrs[t * mr + i] = t_below(4) == 0 ? (const void*) zero : a + (t * mr + i) * a_stride;
    }
  }
  t_fence_seal(&fa);
  t_fence_seal(&fz);
  t_out out;
  t_out_init(&out, T_S32, rows, 1, 1);
  for (size_t i = 0; i < rows; i++) {
    int64_t s = 0;
    for (size_t t = 0; t < ks; t++) {
      const uint8_t* p = ptrs[t * mr + i];
      if (p != zero) p += a_offset;
      for (size_t c = 0; c < kc; c++) s += is_signed ? (int64_t) (int8_t) p[c] : (int64_t) p[c];
    }
    const int32_t s32 = ref_wrap_s32(s);
    memcpy(t_out_want(&out, i, 0), &s32, 4);
  }
  text problem = {.len = 0};
  add(&problem, "gemmi8_%s_irsum__%.24s (the %.24s table's irow_sum), %zu of %zu rows, "
      "%zu taps of %zu bytes, a_offset %zu, data %s",
      is_signed ? "qs8" : "qu8", cfg->isa, cfg->isa, rows, mr, ks, kc, a_offset,
      data_names[data]);
  struct ircall call = {cfg->irow_sum, mr, rows, kc, ks, ptrs, a_offset, zero, out.body};
  const int sig = guarded(ircall_run, &call);
  int ok = 1;
  char msg[512], what[600];
  size_t row, col;
  if (sig != 0) {
    snprintf(what, sizeof(what), "%s (a read or write past a row: each ends at an inaccessible page)",
             signal_name(sig));
    fail_case(&problem, what);
    ok = 0;
  } else if (!t_out_same(&out, msg, sizeof(msg), &row, &col)) {
    fail_case(&problem, msg);
    ok = 0;
  } else {
    const t_fence* fences[] = {&fa, &fz};
    static const char* const names[] = {"A", "zero buffer"};
    if (!fences_intact(fences, names, 2, msg, sizeof(msg))) {
      fail_case(&problem, msg);
      ok = 0;
    }
  }
  t_out_free(&out);
  t_fence_free(&fa);
  t_fence_free(&fz);
  free(ptrs);
  return ok;
}
