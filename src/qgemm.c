/*
 * qu8 / qs8 GEMM drivers: validation, a plan, then tile tasks over the packed blocks.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "parallel.h"
#include "qgemm.h"

/*
 * Plan, then tiles. An entry point validates, then plans once (the kernels per tile
 * height, the tiling, the row-sum workspace) into a context; the work is then two
 * kinds of pure task over that context:
 *   - row sums: rows [m0, m0 + rows) of A summed into the workspace (families whose
 *     kernels take the zero-point term from the driver);
 *   - tiles: rows [m0, m0 + rows) x packed blocks [b0, b0 + blocks) of C.
 * A task reads the context (and, for tiles, the row sums of its own rows) and writes
 * only its own rows of the workspace or its own tile of C. They run here in a plain
 * loop, M chunk by M chunk: each chunk's row sums, then its tiles.
 */
struct qgemm_context {
  /* ukernel[r - 1] computes tiles of r rows (the smallest kernel that holds them) */
  gemmi8_qgemm_ukernel_fn ukernel[GEMMI8_MAX_MR];
  size_t mr; /* main tile height */
  const struct gemmi8_qgemm_config* cfg;
  size_t m, n, k;
  const uint8_t* a;
  size_t a_stride;
  const uint8_t* blocks;
  size_t block_bytes;
  uint8_t* c;
  size_t c_stride; /* bytes */
  size_t c_size;   /* bytes per element */
  struct gemmi8_qparams params;
  /* Fixed-point constants prepared once per block (cfg->prepare_fixedpoint), or NULL. */
  gemmi8_qprepare_fn prepare;
  /* Row sums of A, one per row of A, or NULL when the kernels need none. */
  int32_t* row_sums;
  /* Packed A (cfg->pack_a), or NULL: the panel of row tile i / mr at
   * panels + i / mr * panel_bytes; pukernel runs the tiles of pfrom rows or more. */
  uint8_t* panels;
  size_t panel_bytes, pfrom;
  gemmi8_qgemm_ukernel_fn pukernel;
  /* Tiling: rows and blocks per tile task; tasks down M and across N. */
  size_t mc, nb;
  size_t mchunks, bchunks;
  size_t rs_rows; /* rows per row-sum task */
  /* Packed blocks and the first column of the last (gemmi8_qblock_start). */
  size_t nblocks, last_start;
};

/* Row sums of up to this many rows live on the stack; more are allocated. */
#define ROW_SUMS_ON_STACK 1024

static void qgemm_row_sum_task(const struct qgemm_context* ctx, size_t m0, size_t rows)
{
  ctx->cfg->row_sum(rows, ctx->k, ctx->a + m0 * ctx->a_stride, ctx->a_stride,
                    ctx->row_sums + m0);
}

/* Packs the row tiles of rows [m0, m0 + rows) (m0 a multiple of mr) into their panels,
 * those the pgemm kernel runs (pfrom rows or more; a smaller last tile reads A). */
static void qgemm_pack_task(const struct qgemm_context* ctx, size_t m0, size_t rows)
{
  for (size_t i = m0; i < m0 + rows; i += ctx->mr) {
    const size_t mr = gemmi8_min(ctx->mr, m0 + rows - i);
    if (mr < ctx->pfrom) continue;
    ctx->cfg->pack_a(mr, ctx->k, ctx->a + i * ctx->a_stride, ctx->a_stride,
                     ctx->panels + i / ctx->mr * ctx->panel_bytes);
  }
}

static void qgemm_tile_task(const struct qgemm_context* ctx, size_t m0, size_t b0, size_t rows,
                            size_t blocks)
{
  const size_t nblocks = ctx->nblocks, nr_main = ctx->cfg->nr;
  const size_t m1 = m0 + rows, b1 = b0 + blocks;
  _Alignas(64) uint8_t prepared[GEMMI8_QPREPARED_BYTES];
  for (size_t b = b0; b < b1; b++) {
    /* only the last block may start off the grid of NR (gemmi8_qblock_start) */
    const size_t n0 = b + 1 < nblocks ? b * nr_main : ctx->last_start;
    const size_t n1 = b + 2 < nblocks ? n0 + nr_main : (b + 1 < nblocks ? ctx->last_start : ctx->n);
    const size_t nr = n1 - n0;
    struct gemmi8_qparams p = ctx->params;
    if (p.multiplier) p.multiplier += n0 * p.channel_stride;
    if (p.shift) p.shift += n0 * p.channel_stride;
    if (p.scale) p.scale += n0 * p.channel_stride;
    /* the block's fixed-point constants, once for all its row tiles (with a single
     * tile the kernel computes them itself) */
    if (ctx->prepare != NULL && rows > ctx->mr) {
      ctx->prepare(&p, nr, prepared);
      p.prepared = prepared;
    }
    const uint8_t* w = ctx->blocks + b * ctx->block_bytes;
    for (size_t i = m0; i < m1; i += ctx->mr) {
      const size_t mr = gemmi8_min(ctx->mr, m1 - i);
      p.row_sum = ctx->row_sums ? ctx->row_sums + i : NULL;
      uint8_t* c = ctx->c + i * ctx->c_stride + n0 * ctx->c_size;
      if (ctx->panels != NULL && mr >= ctx->pfrom) {
        ctx->pukernel(mr, nr, ctx->k, ctx->panels + i / ctx->mr * ctx->panel_bytes,
                      ctx->panel_bytes, w, c, ctx->c_stride, &p);
      } else {
        ctx->ukernel[mr - 1](mr, nr, ctx->k, ctx->a + i * ctx->a_stride, ctx->a_stride, w, c,
                             ctx->c_stride, &p);
      }
    }
  }
}

/* The tasks as the parallel-for sees them: index -> rows (and blocks). */
static void qgemm_row_sum_job(void* context, size_t i)
{
  const struct qgemm_context* ctx = context;
  const size_t m0 = i * ctx->rs_rows;
  qgemm_row_sum_task(ctx, m0, gemmi8_min(ctx->rs_rows, ctx->m - m0));
}

static void qgemm_pack_job(void* context, size_t t)
{
  const struct qgemm_context* ctx = context;
  const size_t m0 = t * ctx->mr;
  qgemm_pack_task(ctx, m0, gemmi8_min(ctx->mr, ctx->m - m0));
}

static void qgemm_tile_job(void* context, size_t t)
{
  const struct qgemm_context* ctx = context;
  size_t m0, rows;
  gemmi8_split_rows(ctx->m, ctx->mr, ctx->mchunks, t / ctx->bchunks, &m0, &rows);
  const size_t b0 = t % ctx->bchunks * ctx->nb;
  qgemm_tile_task(ctx, m0, b0, rows,
                  gemmi8_min(ctx->nb, ctx->nblocks - b0));
}

static gemmi8_status check_gemm(enum gemmi8_type type, const struct gemmi8_qgemm_config* cfg,
                                size_t max_k, size_t m, size_t n, size_t k, const void* a,
                                size_t a_stride, const void* packed_b, const void* c,
                                size_t c_stride, size_t c_size)
{
  if (a == NULL || packed_b == NULL || c == NULL) return gemmi8_status_invalid_parameter;
  size_t a_bytes, c_bytes;
  if (!gemmi8_extent(m, k, a_stride, 1, &a_bytes) ||
      !gemmi8_extent(m, n, c_stride, c_size, &c_bytes)) {
    return gemmi8_status_invalid_parameter;
  }
  if (k > max_k) return gemmi8_status_unsupported_parameter;
  const struct gemmi8_packed_expect expect = {
      .type = (uint32_t) type,
      .layout = gemmi8_qgemm_layout(cfg, (uint32_t) type),
      .nr = cfg->nr,
      .n = n,
      .k = k,
      .block_bytes = gemmi8_qblock_bytes(cfg, k),
      .a_zp_min = type == gemmi8_type_qs8 ? -128 : 0,
      .a_zp_max = type == gemmi8_type_qs8 ? 127 : 255,
      /* without column coefficients there is no row-sum term at all */
      .flags_allowed = (cfg->flags & GEMMI8_QLAYOUT_COEF)
                           ? GEMMI8_PACKED_NO_ROW_SUM | GEMMI8_PACKED_UNIFORM_COEF
                           : GEMMI8_PACKED_NO_ROW_SUM,
      .flags_required = (cfg->flags & GEMMI8_QLAYOUT_COEF) ? 0 : GEMMI8_PACKED_NO_ROW_SUM,
  };
  if (!gemmi8_packed_valid(packed_b, &expect)) return gemmi8_status_invalid_parameter;
  return gemmi8_status_success;
}

/* Per-channel parameters are checked on every call, over n values: one pass, four
 * lanes at a time (GCC / Clang vector extensions, SSE2 or NEON), in place of a
 * branch per value (at M = 1, N = 1000, K = 512 the scalar checks took as long as
 * the arithmetic). */
typedef int32_t gemmi8_v4s32 __attribute__((vector_size(16)));
typedef float gemmi8_v4f32 __attribute__((vector_size(16)));

/* 1 if every multiplier is >= 0 and every shift in [-31, 30]; *left_shift: some
 * shift is positive. */
static int scan_fixedpoint(const int32_t* multiplier, const int32_t* shift, size_t count,
                           int* left_shift)
{
  gemmi8_v4s32 bad = {0, 0, 0, 0}, positive = {0, 0, 0, 0};
  size_t j = 0;
  for (; j + 4 <= count; j += 4) {
    gemmi8_v4s32 m, e;
    memcpy(&m, multiplier + j, sizeof(m));
    memcpy(&e, shift + j, sizeof(e));
    bad |= (m < 0) | (e < -31) | (e > 30);
    positive |= e > 0;
  }
  int32_t any_bad = bad[0] | bad[1] | bad[2] | bad[3];
  int32_t any_positive = positive[0] | positive[1] | positive[2] | positive[3];
  for (; j < count; j++) {
    any_bad |= multiplier[j] < 0 || shift[j] < -31 || shift[j] > 30;
    any_positive |= shift[j] > 0;
  }
  *left_shift = any_positive != 0;
  return any_bad == 0;
}

/* 1 if every scale is positive and finite (NaN is not). */
static int scan_fp32(const float* scale, size_t count)
{
  gemmi8_v4s32 ok = {-1, -1, -1, -1};
  size_t j = 0;
  for (; j + 4 <= count; j += 4) {
    gemmi8_v4f32 v;
    memcpy(&v, scale + j, sizeof(v));
    ok &= (v > 0.0f) & (v <= FLT_MAX);
  }
  int all = (ok[0] & ok[1] & ok[2] & ok[3]) != 0;
  for (; j < count; j++) all &= scale[j] > 0.0f && scale[j] <= FLT_MAX;
  return all;
}

gemmi8_status gemmi8_check_requant(const gemmi8_requant* rq, size_t n, int32_t lo, int32_t hi,
                                   int* left_shift)
{
  if (rq == NULL) return gemmi8_status_invalid_parameter;
  if (rq->per_channel != 0 && rq->per_channel != 1) return gemmi8_status_invalid_parameter;
  if (rq->zero_point < lo || rq->zero_point > hi || rq->min < lo || rq->max > hi ||
      rq->min > rq->max) {
    return gemmi8_status_invalid_parameter;
  }
  const size_t count = rq->per_channel ? n : 1;
  switch (rq->mode) {
    case gemmi8_requant_fixedpoint:
      if (rq->multiplier == NULL || rq->shift == NULL) return gemmi8_status_invalid_parameter;
      if (!scan_fixedpoint(rq->multiplier, rq->shift, count, left_shift)) {
        return gemmi8_status_invalid_parameter;
      }
      return gemmi8_status_success;
    case gemmi8_requant_fp32:
      if (rq->scale == NULL) return gemmi8_status_invalid_parameter;
      if (!scan_fp32(rq->scale, count)) return gemmi8_status_invalid_parameter;
      return gemmi8_status_success;
  }
  return gemmi8_status_invalid_parameter;
}

static gemmi8_qgemm_ukernel_fn output_kernel(const struct gemmi8_qgemm_ukernels* u,
                                             enum gemmi8_qoutput output)
{
  return u->out[output];
}

static gemmi8_qgemm_ukernel_fn slot_kernel(const struct gemmi8_qgemm_config* cfg, size_t r,
                                           enum gemmi8_qoutput output)
{
  return output_kernel(&cfg->gemm[r - 1], output);
}

/* Plans and runs a validated GEMM. */
static gemmi8_status run(const struct gemmi8_qgemm_config* cfg, enum gemmi8_qoutput output,
                         size_t m, size_t n, size_t k, const void* a, size_t a_stride,
                         const void* packed_b, void* c, size_t c_stride, size_t c_size,
                         const gemmi8_requant* rq, int left_shift,
                         const gemmi8_parallel* parallel)
{
  const struct gemmi8_packed_header* h = packed_b;
  struct qgemm_context ctx = {
      .mr = cfg->mr,
      .cfg = cfg,
      .m = m,
      .n = n,
      .k = k,
      .a = a,
      .a_stride = a_stride,
      .blocks = (const uint8_t*) packed_b + GEMMI8_PACKED_HEADER_BYTES,
      .block_bytes = (size_t) h->block_bytes,
      .c = c,
      .c_stride = c_stride * c_size,
      .c_size = c_size,
  };
  /* Kernels: for each tile height, the smallest kernel that holds it. */
  for (size_t r = cfg->mr; r >= 1; r--) {
    gemmi8_qgemm_ukernel_fn fn = slot_kernel(cfg, r, output);
    ctx.ukernel[r - 1] = fn != NULL ? fn : ctx.ukernel[r];
  }
  if (rq != NULL) {
    ctx.params.channel_stride = rq->per_channel ? 1 : 0;
    if (rq->mode == gemmi8_requant_fixedpoint) {
      ctx.params.multiplier = rq->multiplier;
      ctx.params.shift = rq->shift;
      ctx.params.left_shift = left_shift;
      ctx.prepare = cfg->prepare_fixedpoint;
    } else {
      ctx.params.scale = rq->scale;
    }
    ctx.params.zero_point = rq->zero_point;
    ctx.params.min = rq->min;
    ctx.params.max = rq->max;
  }
  /* Tiling: L2-sized row chunks (a multiple of the main tile height), all blocks. */
  const size_t blocks = gemmi8_divide_round_up(n, cfg->nr);
  ctx.nblocks = blocks;
  ctx.last_start = gemmi8_qblock_start(cfg, n, blocks - 1);
  /* (a chunk never splits M that fits in one: a split would stream B twice) */
  size_t mc = gemmi8_min(GEMMI8_QGEMM_MC_MAX, GEMMI8_QGEMM_MC_BYTES / k);
  mc = mc <= cfg->mr ? cfg->mr : mc - mc % cfg->mr;
  ctx.mc = gemmi8_min(mc, m);
  ctx.nb = blocks;
  /* Threads: the tiles cut for them (parallel.h), when the problem is large enough. */
  const size_t threads = gemmi8_parallel_threads(parallel, 2.0 * (double) m * (double) n * (double) k);
  if (threads > 1) {
    struct gemmi8_split split;
    gemmi8_plan_split(m, blocks, cfg->mr, mc, 1, threads, &split);
    ctx.mc = split.mc;
    ctx.nb = split.nb;
    ctx.mchunks = split.mchunks;
    ctx.bchunks = split.bchunks;
    ctx.rs_rows = gemmi8_divide_round_up(m, 2 * threads);
  }
  /* Workspace: the row sums of A, when the kernels need them. */
  int32_t stack_sums[ROW_SUMS_ON_STACK];
  int32_t* heap_sums = NULL;
  if (cfg->row_sum != NULL && !(h->flags & GEMMI8_PACKED_NO_ROW_SUM)) {
    if (m <= ROW_SUMS_ON_STACK) {
      ctx.row_sums = stack_sums;
    } else {
      /* (an A of m rows exists in memory, but 4 bytes a row may not fit size_t) */
      size_t bytes;
      heap_sums = gemmi8_mul(m, sizeof(int32_t), &bytes) ? malloc(bytes) : NULL;
      if (heap_sums == NULL) return gemmi8_status_out_of_memory;
      ctx.row_sums = heap_sums;
    }
    /* One coef for every column: the kernels add coef * rowsum without a vector
     * multiply. */
    ctx.params.row_sum_uniform =
        (cfg->flags & GEMMI8_QLAYOUT_UNIFORM_COEF) && (h->flags & GEMMI8_PACKED_UNIFORM_COEF);
    ctx.params.row_sum_coef = h->coef;
  }
  /* Workspace: panels of A, when the family packs A and a row tile meets three
   * blocks or more over 512 depths or more in all (packing a panel costs about the
   * instructions that two blocks' tiles spend arranging A in place, plus a fixed part
   * that short depths do not repay: instruction counts in bench/MCA.md). */
  uint8_t* heap_panels = NULL;
  if (cfg->pack_a != NULL && m >= cfg->mr && blocks >= 3 && blocks * k >= 512) {
    size_t bytes;
    ctx.panel_bytes = gemmi8_qpanel_bytes(cfg, k);
    heap_panels = gemmi8_mul(gemmi8_divide_round_up(m, cfg->mr), ctx.panel_bytes, &bytes)
                      ? malloc(bytes)
                      : NULL;
    if (heap_panels == NULL) {
      free(heap_sums);
      return gemmi8_status_out_of_memory;
    }
    ctx.panels = heap_panels;
    ctx.pukernel = output_kernel(&cfg->pgemm, output);
    /* the tiles the main kernel runs (those no smaller slot holds) */
    ctx.pfrom = cfg->mr;
    while (ctx.pfrom > 1 && ctx.ukernel[ctx.pfrom - 2] == ctx.ukernel[cfg->mr - 1]) ctx.pfrom--;
  }
  if (threads > 1) {
    /* every row sum and panel first, then every tile (a tile reads the sums and the
     * panels of its rows) */
    if (ctx.row_sums != NULL) {
      parallel->parallel_for(parallel->context, qgemm_row_sum_job, &ctx,
                             gemmi8_divide_round_up(m, ctx.rs_rows));
    }
    if (ctx.panels != NULL) {
      parallel->parallel_for(parallel->context, qgemm_pack_job, &ctx,
                             gemmi8_divide_round_up(m, cfg->mr));
    }
    parallel->parallel_for(parallel->context, qgemm_tile_job, &ctx, ctx.mchunks * ctx.bchunks);
  } else {
    for (size_t m0 = 0; m0 < m; m0 += ctx.mc) {
      const size_t rows = gemmi8_min(ctx.mc, m - m0);
      if (ctx.row_sums != NULL) qgemm_row_sum_task(&ctx, m0, rows);
      if (ctx.panels != NULL) qgemm_pack_task(&ctx, m0, rows);
      for (size_t b0 = 0; b0 < blocks; b0 += ctx.nb) {
        qgemm_tile_task(&ctx, m0, b0, rows, gemmi8_min(ctx.nb, blocks - b0));
      }
    }
  }
  free(heap_panels);
  free(heap_sums);
  return gemmi8_status_success;
}

static gemmi8_status qgemm(enum gemmi8_type type, size_t max_k, int32_t lo, int32_t hi,
                           size_t m, size_t n, size_t k, const void* a, size_t a_stride,
                           const void* packed_b, const gemmi8_requant* rq, void* c,
                           size_t c_stride, const gemmi8_parallel* parallel)
{
  if (!gemmi8_parallel_valid(parallel)) return gemmi8_status_invalid_parameter;
  const struct gemmi8_qgemm_config* cfg = gemmi8_qconfig((uint32_t) type);
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  gemmi8_status status = check_gemm(type, cfg, max_k, m, n, k, a, a_stride, packed_b, c,
                                    c_stride, 1);
  if (status != gemmi8_status_success) return status;
  int left_shift = 0;
  status = gemmi8_check_requant(rq, n, lo, hi, &left_shift);
  if (status != gemmi8_status_success) return status;
  return run(cfg, rq->mode == gemmi8_requant_fixedpoint ? gemmi8_qoutput_fixedpoint : gemmi8_qoutput_fp32, m, n,
             k, a, a_stride, packed_b, c, c_stride, 1, rq, left_shift, parallel);
}

static gemmi8_status qgemm_s32(enum gemmi8_type type, size_t max_k, size_t m, size_t n,
                               size_t k, const void* a, size_t a_stride, const void* packed_b,
                               int32_t* c, size_t c_stride, const gemmi8_parallel* parallel)
{
  if (!gemmi8_parallel_valid(parallel)) return gemmi8_status_invalid_parameter;
  const struct gemmi8_qgemm_config* cfg = gemmi8_qconfig((uint32_t) type);
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  gemmi8_status status = check_gemm(type, cfg, max_k, m, n, k, a, a_stride, packed_b, c,
                                    c_stride, sizeof(int32_t));
  if (status != gemmi8_status_success) return status;
  return run(cfg, gemmi8_qoutput_s32, m, n, k, a, a_stride, packed_b, c, c_stride, sizeof(int32_t),
             NULL, 0, parallel);
}

/* The entry points: each type's limits, and the _ex variants with a parallel-for. */
#define QGEMM_ENTRY(type, a_t, c_t, max_k, lo, hi)                                            \
  gemmi8_status gemmi8_##type##_gemm_ex(size_t m, size_t n, size_t k, const a_t* a,           \
                                        size_t a_stride, const void* packed_b,                \
                                        const gemmi8_requant* rq, c_t* c, size_t c_stride,    \
                                        const gemmi8_parallel* parallel)                      \
  {                                                                                           \
    return qgemm(gemmi8_type_##type, max_k, lo, hi, m, n, k, a, a_stride, packed_b, rq, c,    \
                 c_stride, parallel);                                                         \
  }                                                                                           \
  gemmi8_status gemmi8_##type##_gemm(size_t m, size_t n, size_t k, const a_t* a,              \
                                     size_t a_stride, const void* packed_b,                   \
                                     const gemmi8_requant* rq, c_t* c, size_t c_stride)       \
  {                                                                                           \
    return qgemm(gemmi8_type_##type, max_k, lo, hi, m, n, k, a, a_stride, packed_b, rq, c,    \
                 c_stride, NULL);                                                             \
  }                                                                                           \
  gemmi8_status gemmi8_##type##_gemm_s32_ex(size_t m, size_t n, size_t k, const a_t* a,       \
                                            size_t a_stride, const void* packed_b, int32_t* c,\
                                            size_t c_stride, const gemmi8_parallel* parallel) \
  {                                                                                           \
    return qgemm_s32(gemmi8_type_##type, max_k, m, n, k, a, a_stride, packed_b, c, c_stride,  \
                     parallel);                                                               \
  }                                                                                           \
  gemmi8_status gemmi8_##type##_gemm_s32(size_t m, size_t n, size_t k, const a_t* a,          \
                                         size_t a_stride, const void* packed_b, int32_t* c,   \
                                         size_t c_stride)                                     \
  {                                                                                           \
    return qgemm_s32(gemmi8_type_##type, max_k, m, n, k, a, a_stride, packed_b, c, c_stride,  \
                     NULL);                                                                   \
  }

/* qu8s8 runs the qu8 kernels (uint8 A, uint8 output) on its own packed weights. */
QGEMM_ENTRY(qu8, uint8_t, uint8_t, GEMMI8_QU8_MAX_K, 0, 255)
QGEMM_ENTRY(qs8, int8_t, int8_t, GEMMI8_QS8_MAX_K, -128, 127)
QGEMM_ENTRY(qu8s8, uint8_t, uint8_t, GEMMI8_QU8S8_MAX_K, 0, 255)
