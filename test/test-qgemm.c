/*
 * qu8 / qs8 / qu8s8 GEMM against the reference, byte for byte:
 *  - sweeps of M (1..50), N (1..70) and K (1..311, primes, multiples of 2^n and
 *    their neighbours), a sampled product of the three, and a few large shapes;
 *    every case has its own random strides, B layout, zero points, bias and data
 *    distribution and is checked with int32 output, fixed-point and fp32 modes;
 *  - K = GEMMI8_QU8_MAX_K / GEMMI8_QS8_MAX_K with the worst-case products;
 *  - weights packed under another kernel set: rejected (and C untouched) or exact;
 *  - two threads sharing one packed weight buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "isa.h"
#include "qtest.h"
#include "ref.h"
#include "test.h"

#if !defined(__STDC_NO_THREADS__)
#include <threads.h>
#endif

static const size_t k_list[] = {1,  2,  3,  4,  5,   7,   8,   15,  16,  17,  31,  32,
                                33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 300, 311};

static size_t pad(void)
{
  static const size_t pads[] = {0, 0, 1, 2, 3, 5, 7, 13, 17, 31, 64};
  return T_PICK(pads);
}

/* One random problem of the given shape, checked with every output kind. */
static void run_case(int kind, size_t m, size_t n, size_t k, const char* what)
{
  int b_kn = (int) t_below(2);
  qproblem p;
  q_alloc(&p, kind, m, n, k, k + pad(), (b_kn ? n : k) + pad(), b_kn, n + pad());
  q_fill_random(&p);
  if (q_prepare(&p, what)) {
    q_check_s32(&p);
    int per_channel = (int) t_below(2);
    qrq r;
    q_auto_requant(&p, &r, gemmi8_requant_fixedpoint, per_channel);
    q_check_requant(&p, &r);
    qrq_free(&r);
    q_auto_requant(&p, &r, gemmi8_requant_fixedpoint, !per_channel);
    q_check_requant(&p, &r);
    qrq_free(&r);
    q_auto_requant(&p, &r, gemmi8_requant_fp32, (int) t_below(2));
    q_check_requant(&p, &r);
    qrq_free(&r);
  }
  q_free(&p);
}

static size_t rand_m(void)
{
  return 1 + t_below(50);
}
static size_t rand_n(void)
{
  return 1 + t_below(70);
}

static void sweeps(int kind)
{
  size_t step = t_quick ? 4 : 1;
  for (size_t m = 1; m <= 50; m += step)
    run_case(kind, m, rand_n(), T_PICK(k_list), "M sweep");
  for (size_t n = 1; n <= 70; n += step)
    run_case(kind, rand_m(), n, T_PICK(k_list), "N sweep");
  for (size_t i = 0; i < T_COUNT(k_list); i++) {
    run_case(kind, rand_m(), rand_n(), k_list[i], "K sweep");
    if (!t_quick) run_case(kind, rand_m(), rand_n(), k_list[i], "K sweep");
  }
  static const size_t long_k[] = {1000, 2304};
  for (size_t i = 0; i < T_COUNT(long_k); i++)
    run_case(kind, rand_m(), rand_n(), long_k[i], "K sweep");
  size_t random_cases = t_quick ? 40 : 400;
  for (size_t i = 0; i < random_cases; i++)
    run_case(kind, rand_m(), rand_n(), T_PICK(k_list), "random shape");
  /* Larger shapes: several tiles in both directions, long K. */
  static const size_t big[][3] = {
      {97, 130, 311}, {200, 97, 1000}, {130, 200, 2304}, {200, 200, 129}, {53, 67, 4099}};
  static const size_t big_quick[][3] = {{97, 130, 65}, {13, 200, 1000}};
  if (t_quick) {
    for (size_t i = 0; i < T_COUNT(big_quick); i++)
      run_case(kind, big_quick[i][0], big_quick[i][1], big_quick[i][2], "large shape");
  } else {
    for (size_t i = 0; i < T_COUNT(big); i++)
      run_case(kind, big[i][0], big[i][1], big[i][2], "large shape");
  }
}

/* K at the exact-int32 limit with the largest products of both signs. */
static void max_k(int kind, int32_t a_zp)
{
  const int is_signed = kind == Q_QS8, b_signed = kind != Q_QU8;
  size_t k = kind == Q_QS8 ? GEMMI8_QS8_MAX_K
             : kind == Q_QU8S8 ? GEMMI8_QU8S8_MAX_K : GEMMI8_QU8_MAX_K;
  size_t m = 4, n = 6;
  qproblem p;
  q_alloc(&p, kind, m, n, k, k, k, 0, n);
  int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  const int32_t blo = b_signed ? -128 : 0, bhi = b_signed ? 127 : 255;
  p.a_zp = a_zp;
  p.b_zp_per_channel = !b_signed;
  for (size_t q = 0; q < k; q++) {
    p.a[0 * k + q] = (uint8_t) lo;                /* a - a_zp at one extreme */
    p.a[1 * k + q] = (uint8_t) hi;                /* at the other */
    p.a[2 * k + q] = (uint8_t) (q % 2 ? lo : hi); /* alternating */
    p.a[3 * k + q] = (uint8_t) t_range(lo, hi);
  }
  /* Channels: b - b_zp at each extreme, random, and the extremes with wrapping bias. */
  static const int32_t u8_zp[] = {255, 0, 128, 255, 0, 7};
  static const int32_t bias[] = {0, 0, 12345, INT32_MAX, INT32_MIN, -1};
  for (size_t j = 0; j < n; j++) {
    p.b_zp[j] = b_signed ? 0 : u8_zp[j];
    p.bias[j] = bias[j];
    for (size_t q = 0; q < k; q++) {
      int32_t v;
      if (j == 2 || j == 5)
        v = (int32_t) t_range(blo, bhi);
      else if (b_signed)
        v = -128;
      else
        v = j % 2 == 0 ? 0 : 255;
      p.b[j * k + q] = (uint8_t) v;
    }
  }
  if (q_prepare(&p, "K at the exact limit,")) {
    q_check_s32(&p);
    qrq r;
    q_auto_requant(&p, &r, gemmi8_requant_fixedpoint, 1);
    q_check_requant(&p, &r);
    qrq_free(&r);
    q_auto_requant(&p, &r, gemmi8_requant_fp32, 1);
    q_check_requant(&p, &r);
    qrq_free(&r);
  }
  q_free(&p);
}

/* Weights packed under another kernel set: either rejected with C untouched, or
 * (same layout) exact. */
static void cross_isa(int kind)
{
  const char* here = t_isa();
  const char* const* isas = gemmi8_isa_compiled();
  for (size_t i = 0; isas != NULL && isas[i] != NULL; i++) {
    const char* other = isas[i];
    if (strcmp(other, here) == 0 || !gemmi8_isa_supported(other)) continue;
    qproblem p;
    q_alloc(&p, kind, 11, 37, 67, 67, 67, 0, 37);
    q_fill_random(&p);
    gemmi8_isa_force(other);
    char what[64];
    snprintf(what, sizeof(what), "packed under %s, run under %s:", other, here);
    int ok = q_prepare(&p, what);
    t_isa_return();
    if (ok) {
      t_out out;
      t_out_init(&out, T_S32, p.m, p.n, p.c_stride);
      gemmi8_status st =
          kind == Q_QS8 ? gemmi8_qs8_gemm_s32(p.m, p.n, p.k, (const int8_t*) p.a, p.a_stride,
                                              p.packed, out.body, p.c_stride)
          : kind == Q_QU8S8
              ? gemmi8_qu8s8_gemm_s32(p.m, p.n, p.k, p.a, p.a_stride, p.packed, out.body,
                                      p.c_stride)
              : gemmi8_qu8_gemm_s32(p.m, p.n, p.k, p.a, p.a_stride, p.packed, out.body,
                                    p.c_stride);
      const char* func = kind == Q_QS8     ? "gemmi8_qs8_gemm_s32"
                         : kind == Q_QU8S8 ? "gemmi8_qu8s8_gemm_s32"
                                           : "gemmi8_qu8_gemm_s32";
      if (st == gemmi8_status_invalid_parameter) {
        t_expect(t_out_untouched(&out), func, "%s: rejected, but C was written", p.desc);
      } else if (st == gemmi8_status_success) {
        for (size_t r = 0; r < p.m; r++)
          for (size_t c = 0; c < p.n; c++)
            memcpy(t_out_want(&out, r, c), &p.acc[r * p.n + c], sizeof(int32_t));
        char msg[200];
        size_t row, col;
        t_expect(t_out_same(&out, msg, sizeof(msg), &row, &col), func, "%s: %s", p.desc, msg);
      } else {
        t_fail(func, "%s: status \"%s\", expected success or \"%s\"", p.desc,
               gemmi8_status_string(st), gemmi8_status_string(gemmi8_status_invalid_parameter));
      }
      t_out_free(&out);
    }
    q_free(&p);
  }
}

#if !defined(__STDC_NO_THREADS__)
typedef struct job {
  qproblem* p;
  const qrq* r;
  uint8_t* c;
  int iterations;
  gemmi8_status status;
} job;

static int worker(void* arg)
{
  job* j = arg;
  j->status = gemmi8_status_success;
  for (int i = 0; i < j->iterations; i++) {
    memset(j->c, 0, j->p->m * j->p->c_stride);
    gemmi8_status st = gemmi8_qu8_gemm(j->p->m, j->p->n, j->p->k, j->p->a, j->p->a_stride,
                                       j->p->packed, &j->r->rq, j->c, j->p->c_stride);
    if (st != gemmi8_status_success) j->status = st;
  }
  return 0;
}
#endif

/* Two threads run GEMMs with one packed weight buffer at the same time. */
static void threads(void)
{
#if defined(__STDC_NO_THREADS__)
  printf("   (threads test skipped: no <threads.h>)\n");
#else
  qproblem p;
  q_alloc(&p, 0, 37, 45, 129, 129, 129, 0, 45);
  q_fill_random(&p);
  if (!q_prepare(&p, "two threads,")) {
    q_free(&p);
    return;
  }
  qrq r;
  q_auto_requant(&p, &r, gemmi8_requant_fixedpoint, 1);
  uint8_t* want = t_alloc(p.m * p.n);
  for (size_t i = 0; i < p.m; i++)
    for (size_t j = 0; j < p.n; j++)
      want[i * p.n + j] = (uint8_t) ref_output_fixedpoint(
          p.acc[i * p.n + j], r.multiplier[j], r.shift[j], r.rq.zero_point, r.rq.min, r.rq.max);
  enum { n_threads = 2 };
  job jobs[n_threads];
  thrd_t tid[n_threads];
  int started[n_threads];
  for (int t = 0; t < n_threads; t++) {
    jobs[t].p = &p;
    jobs[t].r = &r;
    jobs[t].c = t_alloc(p.m * p.c_stride);
    jobs[t].iterations = t_quick ? 5 : 20;
    started[t] = thrd_create(&tid[t], worker, &jobs[t]) == thrd_success;
  }
  for (int t = 0; t < n_threads; t++) {
    if (started[t]) thrd_join(tid[t], NULL);
    int same = jobs[t].status == gemmi8_status_success;
    for (size_t i = 0; same && i < p.m; i++)
      same = memcmp(jobs[t].c + i * p.c_stride, want + i * p.n, p.n) == 0;
    t_expect(started[t] && same, "gemmi8_qu8_gemm",
             "%s, %s: thread %d (started %d) status \"%s\" or wrong output", p.desc, r.desc, t,
             started[t], gemmi8_status_string(jobs[t].status));
    free(jobs[t].c);
  }
  free(want);
  qrq_free(&r);
  q_free(&p);
#endif
}

/* qu8s8 on kernels that multiply uint8 by int8 directly (weights stored xor 0x80):
 * the activation zero point is all in the packed bias, no row sums. */
static void qu8s8_no_row_sums(void)
{
  const struct gemmi8_qgemm_config* cfg = gemmi8_qu8s8_config();
  int8_t b[40 * 64];
  t_fill_random(b, sizeof(b));
  void* packed = NULL;
  gemmi8_status st = gemmi8_qu8s8_pack_alloc(40, 64, b, 64, GEMMI8_B_NK, 131, NULL, &packed);
  if (!t_expect(st == gemmi8_status_success, "gemmi8_qu8s8_pack_alloc", "status \"%s\"",
                gemmi8_status_string(st)))
    return;
  const struct gemmi8_packed_header* h = packed;
  const int none = (h->flags & GEMMI8_PACKED_NO_ROW_SUM) != 0;
  t_expect(!(cfg->flags & GEMMI8_QLAYOUT_XOR) || none, "gemmi8_qu8s8_pack_alloc",
           "%s: the packed weights ask for row sums (flags %u, coef %d)", cfg->isa,
           (unsigned) h->flags, (int) h->coef);
  gemmi8_packed_free(packed);
}

void test_qgemm(void)
{
  static const char* const type_names[] = {"qu8", "qs8", "qu8s8"};
  if (t_type_built("qu8s8")) {
    qu8s8_no_row_sums();
  } else {
    t_skip_type("qu8s8", "qgemm qu8s8 row sums");
  }
  for (int kind = Q_QU8; kind <= Q_QU8S8; kind++) {
    if (!t_type_built(type_names[kind])) {
      t_skip_type(type_names[kind], "qgemm sweeps");
      continue;
    }
    sweeps(kind);
    static const int32_t u8_azp[] = {0, 255}, s8_azp[] = {-128, 127};
    for (int i = 0; i < 2; i++) max_k(kind, kind == Q_QS8 ? s8_azp[i] : u8_azp[i]);
    cross_isa(kind);
  }
  if (t_type_built("qu8")) {
    threads();
  } else {
    t_skip_type("qu8", "qgemm threads");
  }
}
