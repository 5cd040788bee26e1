/*
 * Kernel-level tests of the 4-bit weight kernels (kernels/q4.inc): every slot of every
 * q4 table compiled in (gemmi8_q4gemm_config_at), called directly as src/q4gemm.c calls
 * it, against an independent reference written from the contract (src/microkernel.h,
 * struct gemmi8_q4params) over the unpacked weights, bit for bit. Run once per process,
 * from test_ukernel() (test-ukernel.c), named, filtered and listed as its cases are:
 * q4/<set>/<mr>x<nr>/<case>, each seeded with FNV-1a(name) xor the suite's seed;
 * GEMMI8_TEST_FILTER (a substring, or a glob when it holds * ? or [) selects them,
 * GEMMI8_TEST_LIST=1 lists them. Tables the CPU cannot run are printed and their
 * kernels counted as skipped.
 *
 * The packed block is written here from the layout the contract describes, for the
 * table's nr (q4/<set>/pack/blocks holds it to gemmi8_qd8_pack_q4 for the table in
 * use); columns past n and nibbles past k hold random values (no kernel may depend on
 * them). Every input ends where an inaccessible page begins (fence.c): A (in
 * a_row_pages every row), the packed block, the row pairs, the row scales (mr floats)
 * and the column biases (nr floats); none may change. C is surrounded by random guard
 * bytes, with random bytes between its rows, which must stay as they were.
 *
 * Cases: subtile (every m <= MR with every n <= NR); k_sweep (k 1..600, any chunk, per
 * chunk or not); chunk_32, chunk_64, chunk_128, chunk_256 and qc4w (chunk 256 summed in
 * int32: k at, below and above the chunk's multiples, every group tail); extremes (rows
 * at -128 / 127 against zero points 127 / -128, nibbles 0 / 15 against 15 / 0: the
 * largest sums, k up to GEMMI8_QD8_MAX_K); zp_0, zp_8, zp_15; pairs_random (row pairs
 * not those of the rows: any int16 sum); scales_special (column and row scales +-0,
 * subnormal, FLT_MIN, huge, FLT_MAX: products to infinity and NaN); bias_neg_zero;
 * clamp (random, equal bounds, +-0, reversed, infinite, NaN bounds); strides_prime;
 * a_row_pages.
 */
#include <float.h>
#include <fnmatch.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "packed.h"
#include "test.h"

/* ---- names, filter, seeds ------------------------------------------------------------ */

static const char* filter;
static int list_only;
static uint64_t base_seed;
static unsigned long cases_run;
static char case_name[160];

static uint64_t fnv1a(const char* s)
{
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (; *s != '\0'; s++) h = (h ^ (unsigned char) *s) * UINT64_C(0x100000001b3);
  return h;
}

static int matches(const char* name)
{
  if (filter == NULL) return 1;
  if (strpbrk(filter, "*?[") != NULL) return fnmatch(filter, name, 0) == 0;
  return strstr(name, filter) != NULL;
}

typedef struct q4k {
  const struct gemmi8_q4gemm_config* cfg;
  size_t mr; /* slot gemm[mr - 1] */
  gemmi8_q4gemm_ukernel_fn fn;
  char name[160]; /* the symbol, the slot and the table, for messages */
} q4k;

static void run_case(const char* name, int (*run)(const q4k*), const q4k* kn)
{
  if (list_only) {
    printf("%s\n", name);
    return;
  }
  snprintf(case_name, sizeof(case_name), "%s", name);
  t_seed(base_seed ^ fnv1a(name));
  cases_run++;
  if (run(kn)) t_pass();
  case_name[0] = '\0';
}

static void on_crash(int sig)
{
  static const char head[] = "\ncrashed in kernel case: ";
  if (write(2, head, sizeof(head) - 1) < 0 || write(2, case_name, strlen(case_name)) < 0 ||
      write(2, "\n", 1) < 0) {
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

/* ---- a problem and its reference ------------------------------------------------------ */

enum q4_data { q4_random, q4_extremes };
enum q4_zp { q4_zp_random, q4_zp_0, q4_zp_8, q4_zp_15 };
enum q4_scales { q4_scales_random, q4_scales_special };

typedef struct q4prob {
  size_t m, n, k, chunk;
  int per_chunk;
  enum q4_data data;
  enum q4_zp zp;
  enum q4_scales scales;
  int pairs_random;   /* row pairs with any int16 sum, not the rows' */
  int bias_neg_zero;  /* every bias -0.0f, column scales +-0.0f, row scales of both signs */
  size_t a_stride;    /* bytes (>= k); 0: every row of A ends at its own page */
  size_t c_stride;    /* elements (>= n) */
  float out_min, out_max;
} q4prob;

static q4prob q4_defaults(const q4k* kn)
{
  static const size_t chunks[] = {32, 64, 128, 256};
  q4prob p;
  memset(&p, 0, sizeof(p));
  p.m = kn->mr;
  p.n = kn->cfg->nr;
  p.chunk = T_PICK(chunks);
  p.per_chunk = t_below(4) != 0;
  p.k = 1 + t_below(300);
  p.a_stride = p.k + t_below(9);
  p.c_stride = p.n + t_below(5);
  p.out_min = -INFINITY;
  p.out_max = INFINITY;
  return p;
}

static float special_scale(void)
{
  static const float specials[] = {0.0f,     -0.0f,   0x1p-149f, -0x1p-140f, FLT_MIN,  1e-30f,
                                   1.0f,     -3.25f,  1e20f,     -1e30f,     FLT_MAX,  -FLT_MAX,
                                   0x1p-126f, 2.5e-5f, -7e-3f,    1e10f};
  return T_PICK(specials);
}

static float random_scale(void)
{
  if (t_below(16) == 0) return t_below(2) ? -0.0f : 0.0f;
  return (float) ((t_unit() - 0.3) * 0.02);
}

/* The packed block's bytes for nr columns, k depths, chunks of `chunk`. */
static size_t block_bytes(size_t nr, size_t k, size_t chunk)
{
  size_t bytes = 0;
  for (size_t k0 = 0; k0 < k; k0 += chunk) {
    const size_t len = k - k0 < chunk ? k - k0 : chunk;
    bytes += 8 * nr + (len + 7) / 8 * 4 * nr;
  }
  return bytes;
}

/* The unpacked problem: q (0..15) and zero points of NR columns (the padding columns
 * too), scales, rows, their pairs. */
typedef struct q4data {
  size_t nr, chunks;
  int8_t* a;       /* m x k */
  uint8_t* q;      /* nr x k */
  uint8_t* zp;     /* nr x chunks */
  float* scale;    /* nr x chunks */
  int32_t* pairs;  /* m x chunks: (int16) sum, zero point */
  float* row_scale;
  float* bias;
} q4data;

static void q4data_free(q4data* d)
{
  free(d->a), free(d->q), free(d->zp), free(d->scale), free(d->pairs), free(d->row_scale),
      free(d->bias);
  memset(d, 0, sizeof(*d));
}

static void q4data_make(const q4prob* p, size_t nr, q4data* d)
{
  const size_t m = p->m, k = p->k, chunks = (k + p->chunk - 1) / p->chunk;
  d->nr = nr;
  d->chunks = chunks;
  d->a = t_alloc(m * k);
  d->q = t_alloc(nr * k);
  d->zp = t_alloc(nr * chunks);
  d->scale = t_alloc(nr * chunks * sizeof(float));
  d->pairs = t_alloc(m * chunks * sizeof(int32_t));
  d->row_scale = t_alloc(m * sizeof(float));
  d->bias = t_alloc(p->n * sizeof(float));
  int32_t azp[GEMMI8_MAX_MR];
  for (size_t i = 0; i < m; i++) {
    azp[i] = (int32_t) t_range(-128, 127);
    if (p->data == q4_extremes) azp[i] = t_below(2) ? -128 : 127;
    for (size_t kk = 0; kk < k; kk++) {
      d->a[i * k + kk] = p->data == q4_extremes ? (int8_t) (azp[i] == -128 ? 127 : -128)
                                                : (int8_t) t_range(-128, 127);
    }
    d->row_scale[i] = p->scales == q4_scales_special && t_below(2) ? special_scale()
                                                                   : (float) (0.01 + 0.1 * t_unit());
    if (p->bias_neg_zero && t_below(2)) d->row_scale[i] = -d->row_scale[i];
  }
  for (size_t j = 0; j < nr; j++) {
    /* extremes: one sign of q - zp per column, +-15 */
    const int up = (int) (j % 2);
    for (size_t c = 0; c < chunks; c++) {
      uint8_t z = (uint8_t) t_below(16);
      if (p->zp == q4_zp_0) z = 0;
      if (p->zp == q4_zp_8) z = 8;
      if (p->zp == q4_zp_15) z = 15;
      if (p->data == q4_extremes) z = up ? 0 : 15;
      d->zp[j * chunks + c] = z;
      d->scale[j * chunks + c] = p->scales == q4_scales_special ? special_scale() : random_scale();
      if (p->bias_neg_zero) d->scale[j * chunks + c] = t_below(2) ? -0.0f : 0.0f;
    }
    for (size_t kk = 0; kk < k; kk++) {
      d->q[j * k + kk] = p->data == q4_extremes ? (uint8_t) (up ? 15 : 0) : (uint8_t) t_below(16);
    }
  }
  for (size_t i = 0; i < m; i++) {
    for (size_t c = 0; c < chunks; c++) {
      int32_t s = 0;
      for (size_t kk = c * p->chunk; kk < k && kk < (c + 1) * p->chunk; kk++) s += d->a[i * k + kk];
      if (p->pairs_random) s = (int32_t) t_range(-32768, 32767);
      d->pairs[i * chunks + c] = (int32_t) ((uint32_t) (uint16_t) s | (uint32_t) (uint16_t) azp[i] << 16);
    }
  }
  for (size_t j = 0; j < p->n; j++) {
    d->bias[j] = p->bias_neg_zero ? -0.0f : t_below(8) == 0 ? -0.0f : (float) (t_unit() - 0.5);
    if (p->scales == q4_scales_special && t_below(4) == 0) d->bias[j] = special_scale();
  }
}

/* The block, in the contract's layout. Columns past n and nibbles past the chunk's
 * depths are random (zero_pad: zero, as the library's packer leaves them); a padding
 * column's pair stays within what the rows' pairs can reach (the generic kernel's
 * int32 arithmetic must not overflow on it). */
static void pack_block(const q4prob* p, const q4data* d, int zero_pad, uint8_t* out)
{
  const size_t nr = d->nr, k = p->k;
  if (zero_pad) {
    memset(out, 0, block_bytes(nr, k, p->chunk));
  } else {
    t_fill_random(out, block_bytes(nr, k, p->chunk));
  }
  uint8_t* w = out;
  for (size_t c = 0, k0 = 0; k0 < k; c++, k0 += p->chunk) {
    const size_t len = k - k0 < p->chunk ? k - k0 : p->chunk;
    int32_t* pairs = (int32_t*) w;
    float* scale = (float*) (w + 4 * nr);
    uint8_t* nib = w + 8 * nr;
    for (size_t j = 0; j < nr; j++) {
      if (j >= p->n) {
        if (!zero_pad) {
          const int32_t z = (int32_t) t_below(16), wsum = (int32_t) t_range(-3840, 3840);
          pairs[j] = (int32_t) ((uint32_t) (uint16_t) -z | (uint32_t) (uint16_t) -wsum << 16);
          scale[j] = random_scale();
        }
        continue;
      }
      const int32_t z = d->zp[j * d->chunks + c];
      int32_t wsum = 0;
      for (size_t dd = 0; dd < len; dd++) {
        const uint8_t v = d->q[j * k + k0 + dd];
        wsum += v - z;
        uint8_t* byte = nib + dd / 8 * nr * 4 + 4 * j + dd % 4;
        *byte = dd % 8 >= 4 ? (uint8_t) ((*byte & 0x0F) | v << 4) : (uint8_t) ((*byte & 0xF0) | v);
      }
      pairs[j] = (int32_t) ((uint32_t) (uint16_t) -z | (uint32_t) (uint16_t) -wsum << 16);
      scale[j] = d->scale[j * d->chunks + c];
    }
    w = nib + (len + 7) / 8 * nr * 4;
  }
}

/* The contract, element by element: t per chunk in int32 (modulo 2^32), then the float
 * steps in their order, each rounded. */
static float reference(const q4prob* p, const q4data* d, size_t i, size_t j)
{
  const size_t k = p->k;
  float f = 0.0f;
  uint32_t total = 0;
  float last_scale = 0.0f;
  for (size_t c = 0, k0 = 0; k0 < k; c++, k0 += p->chunk) {
    const size_t len = k - k0 < p->chunk ? k - k0 : p->chunk;
    const int32_t z = d->zp[j * d->chunks + c];
    int32_t raw = 0, wsum = 0;
    for (size_t dd = 0; dd < len; dd++) {
      const int32_t v = d->q[j * k + k0 + dd];
      raw += (int32_t) d->a[i * k + k0 + dd] * v;
      wsum += v - z;
    }
    const int32_t rp = d->pairs[i * d->chunks + c];
    const int32_t s = (int16_t) (uint16_t) ((uint32_t) rp & 0xFFFF);
    const int32_t azp = (int16_t) (uint16_t) ((uint32_t) rp >> 16);
    const uint32_t t = (uint32_t) raw + (uint32_t) (s * -z) + (uint32_t) (azp * -wsum);
    last_scale = d->scale[j * d->chunks + c];
    if (p->per_chunk) {
      const float product = (float) (int32_t) t * last_scale;
      f = f + product;
    } else {
      total += t;
    }
  }
  if (!p->per_chunk) {
    const float product = (float) (int32_t) total * last_scale;
    f = f + product;
  }
  float v = f * d->row_scale[i];
  v = v + d->bias[j];
  v = p->out_min > v ? p->out_min : v;
  v = p->out_max < v ? p->out_max : v;
  return v;
}

/* The fenced inputs, kept mapped between problems (t_fence_reinit). */
static t_fence fa, fw, fpairs, fscale, fbias;

static void release_fences(void)
{
  t_fence_free(&fa), t_fence_free(&fw), t_fence_free(&fpairs), t_fence_free(&fscale),
      t_fence_free(&fbias);
}

/* Runs one problem; 0 (and one failure printed) when it differs. */
static int run_problem(const q4k* kn, const q4prob* p)
{
  const size_t m = p->m, n = p->n, k = p->k, nr = kn->cfg->nr;
  q4data d;
  q4data_make(p, nr, &d);
  const size_t chunks = d.chunks, wbytes = block_bytes(nr, k, p->chunk);
  int8_t* a = t_fence_reinit(&fa, T_FENCE_END, m, k, p->a_stride);
  const size_t a_stride = fa.stride;
  for (size_t i = 0; i < m; i++) memcpy(a + i * a_stride, d.a + i * k, k);
  uint8_t* w = t_fence_reinit(&fw, T_FENCE_END, 1, wbytes, wbytes);
  pack_block(p, &d, 0, w);
  int32_t* pairs = t_fence_reinit(&fpairs, T_FENCE_END, 1, m * chunks * 4, m * chunks * 4);
  memcpy(pairs, d.pairs, m * chunks * 4);
  float* row_scale = t_fence_reinit(&fscale, T_FENCE_END, 1, m * 4, m * 4);
  memcpy(row_scale, d.row_scale, m * 4);
  float* bias = t_fence_reinit(&fbias, T_FENCE_END, 1, n * 4, n * 4);
  memcpy(bias, d.bias, n * 4);
  t_fence_seal(&fa), t_fence_seal(&fw), t_fence_seal(&fpairs), t_fence_seal(&fscale),
      t_fence_seal(&fbias);
  t_out out;
  t_out_init(&out, T_F32, m, n, p->c_stride);
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      const float v = reference(p, &d, i, j);
      memcpy(t_out_want(&out, i, j), &v, 4);
    }
  }
  const struct gemmi8_q4params params = {
      .chunk = p->chunk,
      .per_chunk = p->per_chunk,
      .row_pairs = pairs,
      .pairs_stride = chunks,
      .row_scale = row_scale,
      .col_bias = bias,
      .out_min = p->out_min,
      .out_max = p->out_max,
  };
  kn->fn(m, n, k, a, a_stride, w, out.body, p->c_stride * sizeof(float), &params);
  char msg[256];
  size_t row, col;
  long at;
  int ok = 1;
  const char* changed = !t_fence_intact(&fa, &at)       ? "A"
                        : !t_fence_intact(&fw, &at)     ? "the packed block"
                        : !t_fence_intact(&fpairs, &at) ? "the row pairs"
                        : !t_fence_intact(&fscale, &at) ? "the row scales"
                        : !t_fence_intact(&fbias, &at)  ? "the column biases"
                                                        : NULL;
  if (!t_out_same(&out, msg, sizeof(msg), &row, &col)) {
    t_fail(case_name,
           "%s: m %zu n %zu k %zu chunk %zu per_chunk %d a_stride %zu c_stride %zu clamp "
           "[%g, %g]: %s",
           kn->name, m, n, k, p->chunk, p->per_chunk, a_stride, p->c_stride,
           (double) p->out_min, (double) p->out_max, msg);
    ok = 0;
  } else if (changed != NULL) {
    t_fail(case_name, "%s: m %zu n %zu k %zu chunk %zu: %s changed at byte %ld", kn->name, m,
           n, k, p->chunk, changed, at);
    ok = 0;
  }
  t_out_free(&out);
  q4data_free(&d);
  return ok;
}

/* ---- cases ---------------------------------------------------------------------------- */

static size_t step(size_t full_count) { return t_quick && full_count > 8 ? 3 : 1; }

static int c_subtile(const q4k* kn)
{
  const size_t nr = kn->cfg->nr;
  for (size_t m = 1; m <= kn->mr; m++) {
    for (size_t n = 1; n <= nr; n += step(nr)) {
      q4prob p = q4_defaults(kn);
      p.m = m, p.n = n;
      p.c_stride = n + t_below(5);
      p.k = 1 + t_below(100);
      p.a_stride = p.k + t_below(5);
      if (!run_problem(kn, &p)) return 0;
    }
  }
  return 1;
}

static int c_k_sweep(const q4k* kn)
{
  for (size_t k = 1; k <= 600; k += (t_quick ? 7 : 1)) {
    q4prob p = q4_defaults(kn);
    p.k = k;
    p.a_stride = k + t_below(3);
    p.m = 1 + t_below((uint32_t) kn->mr);
    p.n = 1 + t_below((uint32_t) kn->cfg->nr);
    if (!run_problem(kn, &p)) return 0;
  }
  return 1;
}

/* k at, below and above the chunk's multiples, and every group tail after them */
static int chunk_sweep(const q4k* kn, size_t chunk, int per_chunk)
{
  const size_t ks[] = {1, 7, 8, 9, chunk - 8, chunk - 1, chunk, chunk + 1, chunk + 5,
                       chunk + 8, 2 * chunk - 1, 2 * chunk, 2 * chunk + 3, 3 * chunk + 7,
                       4 * chunk + 4};
  for (size_t x = 0; x < T_COUNT(ks); x++) {
    q4prob p = q4_defaults(kn);
    p.chunk = chunk;
    p.per_chunk = per_chunk;
    p.k = ks[x];
    p.a_stride = p.k + t_below(3);
    if (!run_problem(kn, &p)) return 0;
  }
  return 1;
}
static int c_chunk_32(const q4k* kn) { return chunk_sweep(kn, 32, 1); }
static int c_chunk_64(const q4k* kn) { return chunk_sweep(kn, 64, 1); }
static int c_chunk_128(const q4k* kn) { return chunk_sweep(kn, 128, 1); }
static int c_chunk_256(const q4k* kn) { return chunk_sweep(kn, 256, 1); }
static int c_qc4w(const q4k* kn) { return chunk_sweep(kn, 256, 0); }

static int c_extremes(const q4k* kn)
{
  const size_t ks[] = {255, 256, 600, 4099, GEMMI8_QD8_MAX_K};
  for (size_t x = 0; x < T_COUNT(ks); x++) {
    for (int per_chunk = 0; per_chunk <= 1; per_chunk++) {
      if (t_quick && ks[x] == GEMMI8_QD8_MAX_K && per_chunk) continue;
      q4prob p = q4_defaults(kn);
      p.data = q4_extremes;
      p.k = ks[x];
      p.a_stride = p.k;
      p.chunk = per_chunk ? (size_t) 32 << t_below(4) : 256;
      p.per_chunk = per_chunk;
      /* scales that keep the float sums finite */
      p.scales = q4_scales_random;
      if (!run_problem(kn, &p)) return 0;
    }
  }
  return 1;
}

static int zp_case(const q4k* kn, enum q4_zp zp)
{
  for (int r = 0; r < 6; r++) {
    q4prob p = q4_defaults(kn);
    p.zp = zp;
    if (!run_problem(kn, &p)) return 0;
  }
  return 1;
}
static int c_zp_0(const q4k* kn) { return zp_case(kn, q4_zp_0); }
static int c_zp_8(const q4k* kn) { return zp_case(kn, q4_zp_8); }
static int c_zp_15(const q4k* kn) { return zp_case(kn, q4_zp_15); }

static int c_pairs_random(const q4k* kn)
{
  for (int r = 0; r < 6; r++) {
    q4prob p = q4_defaults(kn);
    p.pairs_random = 1;
    if (!run_problem(kn, &p)) return 0;
  }
  return 1;
}

static int c_scales_special(const q4k* kn)
{
  for (int r = 0; r < 24; r++) {
    q4prob p = q4_defaults(kn);
    p.scales = q4_scales_special;
    if (!run_problem(kn, &p)) return 0;
  }
  return 1;
}

static int c_bias_neg_zero(const q4k* kn)
{
  for (int r = 0; r < 4; r++) {
    q4prob p = q4_defaults(kn);
    p.bias_neg_zero = 1;
    p.per_chunk = r % 2;
    if (!run_problem(kn, &p)) return 0;
  }
  return 1;
}

static int c_clamp(const q4k* kn)
{
  const float clamps[][2] = {
      {-0.05f, 0.05f}, {0.01f, 0.01f}, {0.0f, 0.0f},     {-0.0f, 0.0f},   {-0.0f, -0.0f},
      {0.0f, -0.0f},   {0.3f, -0.3f},  {-INFINITY, 0.0f}, {0.0f, INFINITY}, {NAN, 0.02f},
      {-0.02f, NAN},   {NAN, NAN},     {-INFINITY, INFINITY}};
  for (size_t x = 0; x < T_COUNT(clamps); x++) {
    q4prob p = q4_defaults(kn);
    p.out_min = clamps[x][0];
    p.out_max = clamps[x][1];
    if (x == 0) p.out_min = (float) -t_unit() * 0.1f, p.out_max = (float) t_unit() * 0.1f;
    if (!run_problem(kn, &p)) return 0;
  }
  return 1;
}

static size_t next_prime(size_t n)
{
  for (;; n++) {
    int prime = n >= 2;
    for (size_t d = 2; d * d <= n && prime; d++) prime = n % d != 0;
    if (prime) return n;
  }
}

static int c_strides_prime(const q4k* kn)
{
  for (int r = 0; r < 4; r++) {
    q4prob p = q4_defaults(kn);
    p.a_stride = next_prime(p.k + 1 + t_below(40));
    p.c_stride = next_prime(p.n + 1 + t_below(20));
    if (!run_problem(kn, &p)) return 0;
  }
  return 1;
}

static int c_a_row_pages(const q4k* kn)
{
  for (int r = 0; r < 6; r++) {
    q4prob p = q4_defaults(kn);
    p.a_stride = 0;
    p.n = 1 + t_below((uint32_t) kn->cfg->nr);
    p.c_stride = p.n;
    if (!run_problem(kn, &p)) return 0;
  }
  return 1;
}

static const struct {
  const char* name;
  int (*run)(const q4k*);
} q4cases[] = {
    {"subtile", c_subtile},
    {"k_sweep", c_k_sweep},
    {"chunk_32", c_chunk_32},
    {"chunk_64", c_chunk_64},
    {"chunk_128", c_chunk_128},
    {"chunk_256", c_chunk_256},
    {"qc4w", c_qc4w},
    {"extremes", c_extremes},
    {"zp_0", c_zp_0},
    {"zp_8", c_zp_8},
    {"zp_15", c_zp_15},
    {"pairs_random", c_pairs_random},
    {"scales_special", c_scales_special},
    {"bias_neg_zero", c_bias_neg_zero},
    {"clamp", c_clamp},
    {"strides_prime", c_strides_prime},
    {"a_row_pages", c_a_row_pages},
};

/* pack/blocks: the table in use packs as this tester does (gemmi8_qd8_pack_q4), for
 * signed nibbles and for unsigned ones with zero points, per channel and per block. */
static int c_pack_blocks(const q4k* kn)
{
  const struct gemmi8_q4gemm_config* cfg = kn->cfg;
  const size_t nr = cfg->nr;
  const size_t blocks_of[] = {0, 32, 64, 128, 256};
  for (size_t x = 0; x < T_COUNT(blocks_of); x++) {
    for (int with_zp = 0; with_zp <= 1; with_zp++) {
      const size_t block = blocks_of[x], n = 2 * nr + 1 + t_below((uint32_t) nr - 1);
      const size_t k = 1 + t_below(700), chunk = block != 0 ? block : 256;
      const size_t nblocks = block != 0 ? (k + block - 1) / block : 1;
      const size_t b_stride = (k + 1) / 2 + t_below(3);
      uint8_t* b = t_alloc(n * b_stride);
      t_fill_random(b, n * b_stride);
      float* scale = t_alloc(n * nblocks * sizeof(float));
      uint8_t* zp = with_zp ? t_alloc(n * nblocks) : NULL;
      for (size_t i = 0; i < n * nblocks; i++) {
        scale[i] = random_scale();
        if (zp != NULL) zp[i] = (uint8_t) t_below(16);
      }
      const gemmi8_q4_weights wt = {b, b_stride, block, scale, zp, NULL};
      void* packed = NULL;
      const gemmi8_status st = gemmi8_qd8_pack_q4_alloc(n, k, &wt, &packed);
      int ok = st == gemmi8_status_success;
      if (!ok) t_fail(case_name, "gemmi8_qd8_pack_q4_alloc: %s", gemmi8_status_string(st));
      q4prob p;
      memset(&p, 0, sizeof(p));
      p.k = k, p.chunk = chunk;
      const size_t wbytes = block_bytes(nr, k, chunk);
      uint8_t* mine = t_alloc(wbytes);
      for (size_t n0 = 0; ok && n0 < n; n0 += nr) {
        q4data d;
        memset(&d, 0, sizeof(d));
        d.nr = nr;
        d.chunks = (k + chunk - 1) / chunk;
        d.q = t_alloc(nr * k);
        d.zp = t_alloc(nr * d.chunks);
        d.scale = t_alloc(nr * d.chunks * sizeof(float));
        p.n = n - n0 < nr ? n - n0 : nr;
        for (size_t j = 0; j < p.n; j++) {
          for (size_t kk = 0; kk < k; kk++) {
            const uint8_t byte = b[(n0 + j) * b_stride + kk / 2];
            const uint8_t nib = kk % 2 ? byte >> 4 : byte & 15;
            d.q[j * k + kk] = zp != NULL ? nib : (uint8_t) (nib ^ 8);
          }
          for (size_t c = 0; c < d.chunks; c++) {
            const size_t bl = block != 0 ? c : 0;
            d.zp[j * d.chunks + c] = zp != NULL ? zp[(n0 + j) * nblocks + bl] : 8;
            d.scale[j * d.chunks + c] = scale[(n0 + j) * nblocks + bl];
          }
        }
        pack_block(&p, &d, 1, mine);
        const uint8_t* theirs = (const uint8_t*) packed + GEMMI8_PACKED_HEADER_BYTES + n0 / nr * wbytes;
        if (memcmp(mine, theirs, wbytes) != 0) {
          size_t at = 0;
          while (mine[at] == theirs[at]) at++;
          t_fail(case_name, "n %zu k %zu block %zu zero points %d: column block %zu differs at "
                 "byte %zu of %zu", n, k, block, with_zp, n0 / nr, at, wbytes);
          ok = 0;
        }
        q4data_free(&d);
      }
      free(mine);
      gemmi8_packed_free(packed);
      free(b), free(scale), free(zp);
      if (!ok) return 0;
    }
  }
  return 1;
}

unsigned long test_ukernel_q4(uint64_t seed)
{
  const char* f = getenv("GEMMI8_TEST_FILTER");
  filter = f != NULL && *f != '\0' ? f : NULL;
  const char* l = getenv("GEMMI8_TEST_LIST");
  list_only = l != NULL && *l != '\0' && strcmp(l, "0") != 0;
  base_seed = seed;
  cases_run = 0;
  unsigned long skipped = 0;
  if (!t_type_built("qs8")) {
    if (!list_only) printf("   skipped: the q4 kernels (qs8 is not in this build)\n");
    return 1;
  }
  struct sigaction crash, old_segv, old_bus;
  memset(&crash, 0, sizeof(crash));
  crash.sa_handler = on_crash;
  sigemptyset(&crash.sa_mask);
  sigaction(SIGSEGV, &crash, &old_segv);
  sigaction(SIGBUS, &crash, &old_bus);
  const struct gemmi8_q4gemm_config* in_use = gemmi8_q4gemm_config();
  int supported = 0;
  const struct gemmi8_q4gemm_config* cfg;
  for (size_t t = 0; (cfg = gemmi8_q4gemm_config_at(t, &supported)) != NULL; t++) {
    unsigned long not_run = 0;
    char name[160];
    for (size_t r = 1; r <= cfg->mr; r++) {
      if (cfg->gemm[r - 1] == NULL) continue;
      q4k kn;
      kn.cfg = cfg;
      kn.mr = r;
      kn.fn = cfg->gemm[r - 1];
      const char* symbol = t_kernel_symbol((void (*)(void)) kn.fn);
      snprintf(kn.name, sizeof(kn.name), "%s (gemm[%zu] of the q4 %.24s table)",
               symbol != NULL ? symbol : "(not in the kernel lists)", r - 1, cfg->isa);
      int any = 0;
      for (size_t c = 0; c < T_COUNT(q4cases); c++) {
        snprintf(name, sizeof(name), "q4/%.24s/%zux%u/%s", cfg->isa, r, (unsigned) cfg->nr,
                 q4cases[c].name);
        if (!matches(name)) continue;
        any = 1;
        if (supported || list_only) run_case(name, q4cases[c].run, &kn);
      }
      if (any && !supported) not_run++;
    }
    if (cfg == in_use && cfg->gemm[cfg->mr - 1] != NULL) {
      snprintf(name, sizeof(name), "q4/%.24s/pack/blocks", cfg->isa);
      q4k kn = {cfg, cfg->mr, cfg->gemm[cfg->mr - 1], ""};
      if (matches(name)) run_case(name, c_pack_blocks, &kn);
    }
    if (not_run != 0 && !list_only) {
      printf("   skipped: q4/%s (not supported on this CPU): %lu kernels\n", cfg->isa, not_run);
      skipped += not_run;
    }
  }
  release_fences();
  sigaction(SIGSEGV, &old_segv, NULL);
  sigaction(SIGBUS, &old_bus, NULL);
  if (!list_only) {
    printf("   %lu q4 kernel cases run", cases_run);
    if (filter != NULL) printf(" (GEMMI8_TEST_FILTER=%s)", filter);
    printf(", %lu kernels skipped\n", skipped);
  }
  return skipped;
}
