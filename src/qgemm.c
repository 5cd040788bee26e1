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
 * height, the tiling, the workspace) into a context; the work is then three kinds of
 * pure task over that context, each for one group (a GEMM has one):
 *   - row sums: rows [m0, m0 + rows) of A summed into the workspace (families whose
 *     kernels take the zero-point term from the driver);
 *   - panels: the row tiles of rows [m0, m0 + rows) packed (families that pack A);
 *   - tiles: rows [m0, m0 + rows) x packed blocks [b0, b0 + blocks) of C.
 * A task reads the context (and, for tiles, the row sums and panels of its own rows)
 * and writes only its own rows of the workspace or its own tile of C. On the calling
 * thread they run in a plain loop, group by group and M chunk by M chunk: each
 * chunk's row sums, then its panels, then its tiles; on threads every row sum, then
 * every panel, then every tile.
 */
struct qgemm_context {
  const struct gemmi8_qgemm_problem* p;
  const struct gemmi8_qgemm_config* cfg;
  /* ukernel[r - 1] computes tiles of r rows (the smallest kernel that holds them) */
  gemmi8_qgemm_ukernel_fn ukernel[GEMMI8_MAX_MR];
  /* with an indirection buffer: the main tile's igemm kernel runs every tile */
  gemmi8_qigemm_ukernel_fn iukernel;
  size_t mr;   /* main tile height */
  size_t mpad; /* m rounded up to mr: row sums per group */
  struct gemmi8_qparams params;
  /* Fixed-point constants prepared once per block by the tile task, or NULL. */
  gemmi8_qprepare_fn prepare;
  /* Row sums of A, mpad per group, or NULL when no kernel needs them. */
  int32_t* row_sums;
  /* Packed A (cfg->pack_a), or NULL: the panel of row tile i / mr of group g at
   * panels + (g * tiles + i / mr) * panel_bytes; pukernel runs the tiles of pfrom
   * rows or more. */
  uint8_t* panels;
  size_t panel_bytes, pfrom, tiles;
  gemmi8_qgemm_ukernel_fn pukernel;
  /* Tiling: rows per tile task (one thread), or the split for threads
   * (split.mchunks * split.bchunks tasks per group). */
  size_t mc;
  struct gemmi8_split split;
  size_t rs_rows, rs_chunks; /* rows per row-sum task (a multiple of mr); tasks per group */
  /* Packed blocks and the first column of the last (gemmi8_qblock_start). */
  size_t nblocks, last_start;
  /* f32 output: the s32 kernels run each tile into a local buffer (L1), and the set's
   * store_f32 (or the generic one) stores it */
  int f32_local;
  gemmi8_store_f32_fn store_f32;
};

static const struct gemmi8_packed_header* group_header(const struct gemmi8_qgemm_problem* p,
                                                       size_t g)
{
  return (const struct gemmi8_packed_header*) (p->packed + g * p->packed_group);
}

/* 1 if the kernels of group g add coef * rowsum(A) from the driver's row sums. */
static int group_needs_sums(const struct gemmi8_qgemm_problem* p, size_t g)
{
  return p->cfg->row_sum != NULL && !(group_header(p, g)->flags & GEMMI8_PACKED_NO_ROW_SUM);
}

static int needs_sums(const struct gemmi8_qgemm_problem* p)
{
  for (size_t g = 0; g < p->groups; g++) {
    if (group_needs_sums(p, g)) return 1;
  }
  return 0;
}

/* 1 if the run packs the row tiles of A into panels: the family packs A, and a row
 * tile meets three blocks or more over 512 depths or more in all (packing a panel
 * costs about the instructions that two blocks' tiles spend arranging A in place,
 * plus a fixed part that short depths do not repay: instruction counts in
 * bench/MCA.md). */
static int packs_a(const struct gemmi8_qgemm_problem* p)
{
  const struct gemmi8_qgemm_config* cfg = p->cfg;
  const size_t blocks = gemmi8_divide_round_up(p->n, cfg->nr);
  return cfg->pack_a != NULL && p->indirection == NULL && p->m >= cfg->mr && blocks >= 3 &&
         blocks * p->k >= 512;
}

/* The workspace: [row sums: groups x mpad int32][panels: groups x tiles x panel bytes],
 * the panels at a 64-byte boundary. */
static int workspace_layout(const struct gemmi8_qgemm_problem* p, size_t* sums_bytes,
                            size_t* panels_bytes)
{
  const size_t mr = p->cfg->mr, tiles = gemmi8_divide_round_up(p->m, mr);
  size_t bytes = 0;
  *sums_bytes = 0;
  *panels_bytes = 0;
  if (needs_sums(p)) {
    if (!gemmi8_mul(tiles * mr, p->groups, &bytes) || !gemmi8_mul(bytes, sizeof(int32_t), &bytes)) {
      return 0;
    }
    *sums_bytes = gemmi8_round_up(bytes, 64);
  }
  if (packs_a(p) && (!gemmi8_mul(tiles, gemmi8_qpanel_bytes(p->cfg, p->k), &bytes) ||
                     !gemmi8_mul(bytes, p->groups, panels_bytes))) {
    return 0;
  }
  return 1;
}

int gemmi8_qgemm_workspace_bytes(const struct gemmi8_qgemm_problem* p, size_t* bytes)
{
  size_t sums, panels;
  return workspace_layout(p, &sums, &panels) && gemmi8_add(sums, panels, bytes);
}

int gemmi8_qgemm_prepared_bytes(const struct gemmi8_qgemm_problem* p, size_t* bytes,
                                size_t* group_stride)
{
  *bytes = *group_stride = 0;
  if (p->cfg->prepare_fixedpoint == NULL || p->output != gemmi8_qoutput_fixedpoint) return 1;
  size_t per_group;
  if (!gemmi8_mul(gemmi8_divide_round_up(p->n, p->cfg->nr), GEMMI8_QPREPARED_BYTES, &per_group)) {
    return 0;
  }
  if (!p->rq->per_channel) {
    *bytes = per_group;
    return 1;
  }
  *group_stride = per_group;
  return gemmi8_mul(per_group, p->groups, bytes);
}

/* The parameters of group g, but the block's columns and row_sum: a copy of
 * ctx->params made once per task (a struct copy per block, out of line at -Os, was 9%
 * of a batch-1 GEMM of 1000 x 512). */
static void group_params(const struct qgemm_context* ctx, size_t g, struct gemmi8_qparams* params)
{
  *params = ctx->params;
  /* one coef for every column: the kernels add coef * rowsum without a vector multiply */
  if (group_needs_sums(ctx->p, g)) {
    const struct gemmi8_packed_header* h = group_header(ctx->p, g);
    params->row_sum_uniform = (ctx->cfg->flags & GEMMI8_QLAYOUT_UNIFORM_COEF) &&
                              (h->flags & GEMMI8_PACKED_UNIFORM_COEF);
    params->row_sum_coef = h->coef;
  }
}

/* Points params (from group_params) at the channels of block columns [n0, ...) of
 * group g. */
static GEMMI8_ALWAYS_INLINE void block_params(const struct qgemm_context* ctx, size_t g,
                                              size_t n0, struct gemmi8_qparams* params)
{
  const struct gemmi8_qparams* base = &ctx->params;
  const size_t channel0 = (g * ctx->p->n + n0) * base->channel_stride;
  params->multiplier = base->multiplier != NULL ? base->multiplier + channel0 : NULL;
  params->shift = base->shift != NULL ? base->shift + channel0 : NULL;
  params->scale = base->scale != NULL ? base->scale + channel0 : NULL;
  params->prepared = NULL;
  if (base->col_sum != NULL) {
    params->col_sum = base->col_sum + channel0;
    params->col_bias = base->col_bias + channel0;
  }
}

/* Block b's columns [*n0, *n1): only the last block may start off the grid of NR
 * (gemmi8_qblock_start). */
static void block_columns(const struct qgemm_context* ctx, size_t b, size_t* n0, size_t* n1)
{
  const size_t nblocks = ctx->nblocks, nr = ctx->cfg->nr;
  *n0 = b + 1 < nblocks ? b * nr : ctx->last_start;
  *n1 = b + 2 < nblocks ? *n0 + nr : (b + 1 < nblocks ? ctx->last_start : ctx->p->n);
}

static void qgemm_params(const struct gemmi8_qgemm_problem* p, struct gemmi8_qparams* params,
                         gemmi8_qprepare_fn* prepare)
{
  memset(params, 0, sizeof(*params));
  *prepare = NULL;
  if (p->row_scale != NULL) {
    params->channel_stride = 1;
    params->scale = p->col_scale;
    params->col_sum = p->col_sum;
    params->col_bias = p->col_bias;
    params->out_min = p->out_min;
    params->out_max = p->out_max;
    return;
  }
  const gemmi8_requant* rq = p->rq;
  if (rq == NULL) return;
  params->channel_stride = rq->per_channel ? 1 : 0;
  if (rq->mode == gemmi8_requant_fixedpoint) {
    params->multiplier = rq->multiplier;
    params->shift = rq->shift;
    params->left_shift = p->left_shift;
    *prepare = p->cfg->prepare_fixedpoint;
  } else {
    params->scale = rq->scale;
    params->small_scales = !p->left_shift;
  }
  params->zero_point = rq->zero_point;
  params->min = rq->min;
  params->max = rq->max;
}

void gemmi8_qgemm_prepare(const struct gemmi8_qgemm_problem* p, uint8_t* prepared,
                          size_t group_stride)
{
  struct qgemm_context ctx = {.p = p, .cfg = p->cfg};
  gemmi8_qprepare_fn prepare;
  qgemm_params(p, &ctx.params, &prepare);
  ctx.nblocks = gemmi8_divide_round_up(p->n, p->cfg->nr);
  ctx.last_start = gemmi8_qblock_start(p->cfg, p->n, ctx.nblocks - 1);
  const size_t groups = group_stride != 0 ? p->groups : 1;
  for (size_t g = 0; g < groups; g++) {
    struct gemmi8_qparams params;
    group_params(&ctx, g, &params);
    for (size_t b = 0; b < ctx.nblocks; b++) {
      size_t n0, n1;
      block_columns(&ctx, b, &n0, &n1);
      block_params(&ctx, g, n0, &params);
      prepare(&params, n1 - n0, prepared + g * group_stride + b * GEMMI8_QPREPARED_BYTES);
    }
  }
}

/* Row sums of rows [m0, m0 + rows) of group g (m0 a multiple of mr). Through an
 * indirection buffer: the kernel set's function per row tile, or a portable loop over
 * each row's taps (padding taps read the zero buffer, as the kernels do). */
static void qgemm_row_sum_task(const struct qgemm_context* ctx, size_t g, size_t m0, size_t rows)
{
  const struct gemmi8_qgemm_problem* p = ctx->p;
  if (!group_needs_sums(p, g)) return; /* this group's tiles read none */
  int32_t* sums = ctx->row_sums + g * ctx->mpad;
  if (p->indirection == NULL) {
    ctx->cfg->row_sum(rows, p->k, p->a + g * p->a_group + m0 * p->a_stride, p->a_stride,
                      sums + m0);
    return;
  }
  const size_t mr = ctx->mr, ks = p->ks, kc = p->kc, offset = g * p->a_group;
  if (ctx->cfg->irow_sum != NULL) {
    for (size_t i = m0; i < m0 + rows; i += mr) {
      ctx->cfg->irow_sum(mr, gemmi8_min(mr, m0 + rows - i), kc, ks,
                         p->indirection + i / mr * ks * mr, offset, p->zero, sums + i);
    }
    return;
  }
  const int is_signed = group_header(p, g)->type == gemmi8_type_qs8;
  for (size_t i = m0; i < m0 + rows; i++) {
    const void* const* ptrs = p->indirection + i / mr * ks * mr + i % mr;
    uint32_t sum = 0;
    for (size_t t = 0; t < ks; t++) {
      const uint8_t* a = ptrs[t * mr];
      if (a != p->zero) a += offset;
      if (is_signed) {
        for (size_t c = 0; c < kc; c++) sum += (uint32_t) (int32_t) (int8_t) a[c];
      } else {
        for (size_t c = 0; c < kc; c++) sum += a[c];
      }
    }
    sums[i] = (int32_t) sum;
  }
}

/* Packs the row tiles of rows [m0, m0 + rows) (m0 a multiple of mr) of group g into
 * their panels, those the pgemm kernel runs (pfrom rows or more; a smaller last tile
 * reads A). */
static void qgemm_pack_task(const struct qgemm_context* ctx, size_t g, size_t m0, size_t rows)
{
  const struct gemmi8_qgemm_problem* p = ctx->p;
  const uint8_t* a = p->a + g * p->a_group;
  for (size_t i = m0; i < m0 + rows; i += ctx->mr) {
    const size_t mr = gemmi8_min(ctx->mr, m0 + rows - i);
    if (mr < ctx->pfrom) continue;
    ctx->cfg->pack_a(mr, p->k, a + i * p->a_stride, p->a_stride,
                     ctx->panels + (g * ctx->tiles + i / ctx->mr) * ctx->panel_bytes);
  }
}

/* A tile of f32 output (ctx->f32_local): the set's s32 kernel into a local tile, then
 * its store_f32 (measured against an f32 stage inside the AVX-512 kernels: within 2%
 * at M = 1..512, for a twentieth of the code). */
static void f32_tile(const struct qgemm_context* ctx, size_t mr, size_t nr, size_t g, size_t i,
                     const uint8_t* w, uint8_t* ct, const struct gemmi8_qparams* params)
{
  const struct gemmi8_qgemm_problem* p = ctx->p;
  _Alignas(64) int32_t acc[GEMMI8_MAX_MR * 64];
  const size_t stride = ctx->cfg->nr * sizeof(int32_t);
  if (ctx->panels != NULL && mr >= ctx->pfrom) {
    ctx->pukernel(mr, nr, p->k, ctx->panels + (g * ctx->tiles + i / ctx->mr) * ctx->panel_bytes,
                  ctx->panel_bytes, w, acc, stride, params);
  } else {
    ctx->ukernel[mr - 1](mr, nr, p->k, p->a + g * p->a_group + i * p->a_stride, p->a_stride,
                         w, acc, stride, params);
  }
  ctx->store_f32(mr, nr, acc, ctx->cfg->nr, ct, p->c_stride, params);
}

static void qgemm_tile_task(const struct qgemm_context* ctx, size_t g, size_t m0, size_t b0,
                            size_t rows, size_t blocks)
{
  const struct gemmi8_qgemm_problem* p = ctx->p;
  const struct gemmi8_packed_header* h = group_header(p, g);
  const uint8_t* packed = (const uint8_t*) h + GEMMI8_PACKED_HEADER_BYTES;
  const size_t block_bytes = (size_t) h->block_bytes, mr_main = ctx->mr;
  const size_t m1 = m0 + rows, b1 = b0 + blocks;
  const int32_t* sums =
      ctx->row_sums != NULL && group_needs_sums(p, g) ? ctx->row_sums + g * ctx->mpad : NULL;
  uint8_t* c = p->c + g * p->n * p->c_size;
  const uint8_t* prepared = p->prepared != NULL ? p->prepared + g * p->prepared_group : NULL;
  _Alignas(64) uint8_t local[GEMMI8_QPREPARED_BYTES];
  struct gemmi8_qparams params;
  group_params(ctx, g, &params);
  for (size_t b = b0; b < b1; b++) {
    size_t n0, n1;
    block_columns(ctx, b, &n0, &n1);
    const size_t nr = n1 - n0;
    block_params(ctx, g, n0, &params);
    /* the block's fixed-point constants: from create, or once for all its row tiles
     * here (with a single tile the kernel computes them itself) */
    if (prepared != NULL) {
      params.prepared = prepared + b * GEMMI8_QPREPARED_BYTES;
    } else if (ctx->prepare != NULL && rows > mr_main) {
      ctx->prepare(&params, nr, local);
      params.prepared = local;
    }
    const uint8_t* w = packed + b * block_bytes;
    for (size_t i = m0; i < m1; i += mr_main) {
      const size_t mr = gemmi8_min(mr_main, m1 - i);
      params.row_sum = sums ? sums + i : NULL;
      uint8_t* ct = c + i * p->c_stride + n0 * p->c_size;
      if (p->row_scale != NULL) {
        params.row_scale = p->row_scale + i;
        params.row_zero_point = p->row_zero_point + i;
      }
      if (ctx->f32_local) {
        f32_tile(ctx, mr, nr, g, i, w, ct, &params);
      } else if (p->indirection != NULL) {
        ctx->iukernel(mr, nr, p->kc, p->ks, p->indirection + i / mr_main * p->ks * mr_main, w,
                      ct, p->c_stride, g * p->a_group, p->zero, &params);
      } else if (ctx->panels != NULL && mr >= ctx->pfrom) {
        ctx->pukernel(mr, nr, p->k,
                      ctx->panels + (g * ctx->tiles + i / mr_main) * ctx->panel_bytes,
                      ctx->panel_bytes, w, ct, p->c_stride, &params);
      } else {
        const uint8_t* a = p->a + g * p->a_group + i * p->a_stride;
        ctx->ukernel[mr - 1](mr, nr, p->k, a, p->a_stride, w, ct, p->c_stride, &params);
      }
    }
  }
}

/* The tasks as the parallel-for sees them: index -> group, rows (and blocks). */
static void qgemm_row_sum_job(void* context, size_t index)
{
  const struct qgemm_context* ctx = context;
  const size_t g = index / ctx->rs_chunks, m0 = index % ctx->rs_chunks * ctx->rs_rows;
  qgemm_row_sum_task(ctx, g, m0, gemmi8_min(ctx->rs_rows, ctx->p->m - m0));
}

static void qgemm_pack_job(void* context, size_t index)
{
  const struct qgemm_context* ctx = context;
  const size_t g = index / ctx->tiles, m0 = index % ctx->tiles * ctx->mr;
  qgemm_pack_task(ctx, g, m0, gemmi8_min(ctx->mr, ctx->p->m - m0));
}

static void qgemm_tile_job(void* context, size_t index)
{
  const struct qgemm_context* ctx = context;
  const size_t per_group = ctx->split.mchunks * ctx->split.bchunks;
  size_t m0, rows, b0, blocks;
  gemmi8_split_task(&ctx->split, index % per_group, &m0, &rows, &b0, &blocks);
  qgemm_tile_task(ctx, index / per_group, m0, b0, rows, blocks);
}

static gemmi8_qgemm_ukernel_fn output_kernel(const struct gemmi8_qgemm_ukernels* u,
                                             enum gemmi8_qoutput output)
{
  return u->out[output];
}

static gemmi8_qigemm_ukernel_fn output_ikernel(const struct gemmi8_qigemm_ukernels* u,
                                               enum gemmi8_qoutput output)
{
  return u->out[output];
}

/* Row sums of up to this many rows live on the stack; more are allocated. */
#define ROW_SUMS_ON_STACK 1024

gemmi8_status gemmi8_qgemm_run(const struct gemmi8_qgemm_problem* p,
                               const gemmi8_parallel* parallel)
{
  const struct gemmi8_qgemm_config* cfg = p->cfg;
  const size_t m = p->m, groups = p->groups;
  struct qgemm_context ctx = {
      .p = p,
      .cfg = cfg,
      .mr = cfg->mr,
      .mpad = gemmi8_round_up(m, cfg->mr),
      .tiles = gemmi8_divide_round_up(m, cfg->mr),
  };
  qgemm_params(p, &ctx.params, &ctx.prepare);
  if (p->row_scale != NULL) {
    ctx.f32_local = 1;
    ctx.store_f32 = cfg->store_f32 != NULL ? cfg->store_f32 : gemmi8_q8_store_f32__generic;
  }
  if (p->indirection != NULL) {
    ctx.iukernel = output_ikernel(&cfg->igemm[cfg->mr - 1], p->output);
  } else {
    /* Kernels: for each tile height, the smallest kernel that holds it. */
    for (size_t r = cfg->mr; r >= 1; r--) {
      gemmi8_qgemm_ukernel_fn fn = output_kernel(&cfg->gemm[r - 1], p->output);
      ctx.ukernel[r - 1] = fn != NULL ? fn : ctx.ukernel[r];
    }
  }
  /* Tiling: L2-sized row chunks (a multiple of the main tile height), all blocks. */
  const size_t blocks = gemmi8_divide_round_up(p->n, cfg->nr);
  ctx.nblocks = blocks;
  ctx.last_start = gemmi8_qblock_start(cfg, p->n, blocks - 1);
  /* (a chunk never splits M that fits in one: a split would stream B twice) */
  size_t mc = gemmi8_min(GEMMI8_QGEMM_MC_MAX, GEMMI8_QGEMM_MC_BYTES / p->k);
  mc = mc <= cfg->mr ? cfg->mr : mc - mc % cfg->mr;
  ctx.mc = gemmi8_min(mc, m);
  ctx.rs_rows = ctx.mc;
  /* Threads: the tiles cut for them (parallel.h), when the problem is large enough
   * (its multiply-adds over the real depth: taps x channels through an indirection
   * buffer, whose taps are padded). */
  const size_t depth = p->indirection != NULL ? p->ks * p->kc : p->k;
  const double ops = 2.0 * (double) m * (double) p->n * (double) depth * (double) groups;
  const size_t threads = gemmi8_parallel_threads(parallel, ops, GEMMI8_OP_COST_GEMM);
  if (threads > 1) {
    gemmi8_plan_split(m, blocks, cfg->mr, mc, 1, (double) p->n * (double) p->k,
                      ops * GEMMI8_OP_COST_GEMM, threads, &ctx.split);
    ctx.rs_rows = gemmi8_round_up(gemmi8_divide_round_up(m, 2 * threads), cfg->mr);
  }
  ctx.rs_chunks = gemmi8_divide_round_up(m, ctx.rs_rows);
  /* Workspace: the caller's, or the stack's for the row sums of one small GEMM, or
   * allocated. */
  size_t sums_bytes, panels_bytes;
  workspace_layout(p, &sums_bytes, &panels_bytes); /* the caller checked the sizes */
  int32_t stack_sums[ROW_SUMS_ON_STACK];
  uint8_t* heap = NULL;
  uint8_t* workspace = p->workspace;
  if (workspace == NULL && sums_bytes + panels_bytes != 0) {
    if (panels_bytes == 0 && sums_bytes <= sizeof(stack_sums)) {
      workspace = (uint8_t*) stack_sums;
    } else {
      /* (an A of m rows exists in memory, but its workspace may not fit size_t) */
      size_t bytes;
      if (!gemmi8_add(sums_bytes, panels_bytes, &bytes) ||
          posix_memalign((void**) &heap, 64, bytes) != 0) {
        return gemmi8_status_out_of_memory;
      }
      workspace = heap;
    }
  }
  if (sums_bytes != 0) ctx.row_sums = (int32_t*) workspace;
  if (panels_bytes != 0) {
    ctx.panels = workspace + sums_bytes;
    ctx.panel_bytes = gemmi8_qpanel_bytes(cfg, p->k);
    ctx.pukernel = output_kernel(&cfg->pgemm, p->output);
    /* the tiles the main kernel runs (those no smaller slot holds) */
    ctx.pfrom = cfg->mr;
    while (ctx.pfrom > 1 && ctx.ukernel[ctx.pfrom - 2] == ctx.ukernel[cfg->mr - 1]) ctx.pfrom--;
  }
  if (threads > 1) {
    /* every row sum and panel first, then every tile (a tile reads the sums and the
     * panels of its rows) */
    if (ctx.row_sums != NULL) {
      parallel->parallel_for(parallel->context, qgemm_row_sum_job, &ctx,
                             groups * ctx.rs_chunks);
    }
    if (ctx.panels != NULL) {
      parallel->parallel_for(parallel->context, qgemm_pack_job, &ctx, groups * ctx.tiles);
    }
    parallel->parallel_for(parallel->context, qgemm_tile_job, &ctx,
                           groups * ctx.split.mchunks * ctx.split.bchunks);
  } else {
    for (size_t g = 0; g < groups; g++) {
      for (size_t m0 = 0; m0 < m; m0 += ctx.mc) {
        const size_t rows = gemmi8_min(ctx.mc, m - m0);
        if (ctx.row_sums != NULL) qgemm_row_sum_task(&ctx, g, m0, rows);
        if (ctx.panels != NULL) qgemm_pack_task(&ctx, g, m0, rows);
        qgemm_tile_task(&ctx, g, m0, 0, rows, blocks);
      }
    }
  }
  free(heap);
  return gemmi8_status_success;
}

gemmi8_status gemmi8_qgemm_check(uint32_t type, const struct gemmi8_qgemm_config* cfg,
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
      .a_zp_max = type == gemmi8_type_qs8 ? 127 : (type == gemmi8_type_qu8 || type == gemmi8_type_qu8s8 ? 255 : 0),
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

/* 1 if every scale is positive and finite (NaN is not); *large: some scale is above
 * 0.5. */
static int scan_fp32(const float* scale, size_t count, int* large)
{
  gemmi8_v4s32 ok = {-1, -1, -1, -1}, above = {0, 0, 0, 0};
  size_t j = 0;
  for (; j + 4 <= count; j += 4) {
    gemmi8_v4f32 v;
    memcpy(&v, scale + j, sizeof(v));
    ok &= (v > 0.0f) & (v <= FLT_MAX);
    above |= v > 0.5f;
  }
  int all = (ok[0] & ok[1] & ok[2] & ok[3]) != 0;
  int any = (above[0] | above[1] | above[2] | above[3]) != 0;
  for (; j < count; j++) {
    all &= scale[j] > 0.0f && scale[j] <= FLT_MAX;
    any |= scale[j] > 0.5f;
  }
  *large = any;
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
      if (!scan_fp32(rq->scale, count, left_shift)) return gemmi8_status_invalid_parameter;
      return gemmi8_status_success;
  }
  return gemmi8_status_invalid_parameter;
}

/* Runs a validated GEMM: one group, A in place, the workspace allocated by the run. */
static gemmi8_status run(const struct gemmi8_qgemm_config* cfg, enum gemmi8_qoutput output,
                         size_t m, size_t n, size_t k, const void* a, size_t a_stride,
                         const void* packed_b, void* c, size_t c_stride, size_t c_size,
                         const gemmi8_requant* rq, int left_shift,
                         const gemmi8_parallel* parallel)
{
  const struct gemmi8_qgemm_problem p = {
      .cfg = cfg,
      .output = output,
      .groups = 1,
      .m = m,
      .n = n,
      .k = k,
      .a = a,
      .a_stride = a_stride,
      .packed = packed_b,
      .c = c,
      .c_stride = c_stride * c_size,
      .c_size = c_size,
      .rq = rq,
      .left_shift = left_shift,
  };
  return gemmi8_qgemm_run(&p, parallel);
}

static gemmi8_status qgemm(enum gemmi8_type type, size_t max_k, int32_t lo, int32_t hi,
                           size_t m, size_t n, size_t k, const void* a, size_t a_stride,
                           const void* packed_b, const gemmi8_requant* rq, void* c,
                           size_t c_stride, const gemmi8_parallel* parallel)
{
  if (!gemmi8_parallel_valid(parallel)) return gemmi8_status_invalid_parameter;
  const struct gemmi8_qgemm_config* cfg = gemmi8_qconfig((uint32_t) type);
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  gemmi8_status status = gemmi8_qgemm_check((uint32_t) type, cfg, max_k, m, n, k, a, a_stride, packed_b, c,
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
  gemmi8_status status = gemmi8_qgemm_check((uint32_t) type, cfg, max_k, m, n, k, a, a_stride, packed_b, c,
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
