/*
 * Binary GEMM drivers: validation, a plan, then tile tasks over the packed blocks.
 *
 * A tile task computes rows [m0, m0 + rows) x blocks [b0, b0 + blocks) from the
 * context alone. For the bits output every task spans whole 64-bit output words
 * (a multiple of 64 / NR blocks, or the last columns), so that no two tasks ever
 * write the same word; the task holding the last word clears its padding bits.
 */
#include "config.h"
#include "parallel.h"

struct bgemm_context {
  gemmi8_bgemm_ukernel_fn ukernel[GEMMI8_MAX_MR]; /* by tile height, as qgemm.c */
  size_t mr, nr;
  size_t n, k;
  const uint64_t* a;
  size_t a_stride; /* words */
  const uint8_t* blocks;
  size_t block_bytes;
  uint8_t* c;
  size_t c_stride; /* bytes */
  size_t c_size;   /* bytes per element; 0 for bits */
  const float* scale;
  const float* bias;
  size_t mc, nb;
  size_t nblocks;
  struct gemmi8_split split; /* threads */
};

/* Rows per task: a chunk of A that stays in L2 while every block of B passes. */
#define MC_BYTES (256 * 1024)

static void bgemm_tile_task(const struct bgemm_context* ctx, size_t m0, size_t b0, size_t rows,
                            size_t blocks)
{
  const size_t m1 = m0 + rows;
  for (size_t b = b0; b < b0 + blocks; b++) {
    const size_t n0 = b * ctx->nr;
    const size_t nr = gemmi8_min(ctx->nr, ctx->n - n0);
    const struct gemmi8_bparams p = {ctx->scale ? ctx->scale + n0 : NULL,
                                     ctx->bias ? ctx->bias + n0 : NULL, n0};
    const uint8_t* w = ctx->blocks + b * ctx->block_bytes;
    uint8_t* c_col = ctx->c + n0 * ctx->c_size;
    for (size_t i = m0; i < m1; i += ctx->mr) {
      const size_t mr = gemmi8_min(ctx->mr, m1 - i);
      ctx->ukernel[mr - 1](mr, nr, ctx->k, ctx->a + i * ctx->a_stride, ctx->a_stride, w,
                           c_col + i * ctx->c_stride, ctx->c_stride, &p);
    }
  }
  /* bits: the task with the last word clears the bits past n */
  if (ctx->c_size == 0 && ctx->n % 64 != 0 && (b0 + blocks) * ctx->nr >= ctx->n) {
    const uint64_t keep = (UINT64_C(1) << (ctx->n % 64)) - 1;
    for (size_t i = m0; i < m1; i++) {
      uint64_t* row = (uint64_t*) (ctx->c + i * ctx->c_stride);
      row[ctx->n / 64] &= keep;
    }
  }
}

/* A tile task as the parallel-for sees it. */
static void bgemm_tile_job(void* context, size_t t)
{
  const struct bgemm_context* ctx = context;
  size_t m0, rows, b0, blocks;
  gemmi8_split_task(&ctx->split, t, &m0, &rows, &b0, &blocks);
  bgemm_tile_task(ctx, m0, b0, rows, blocks);
}

static gemmi8_status bgemm(enum gemmi8_boutput output, size_t m, size_t n, size_t k,
                           const uint64_t* a, size_t a_stride, const void* packed_b,
                           const float* scale, const float* bias, void* c, size_t c_stride,
                           const gemmi8_parallel* parallel)
{
  if (!gemmi8_parallel_valid(parallel)) return gemmi8_status_invalid_parameter;
  const struct gemmi8_bgemm_config* cfg = gemmi8_bin_config();
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  if (a == NULL || packed_b == NULL || c == NULL) return gemmi8_status_invalid_parameter;
  const size_t a_words = GEMMI8_BIN_WORDS(k);
  const size_t c_row = output == gemmi8_boutput_bits ? GEMMI8_BIN_WORDS(n) : n;
  const size_t c_size = output == gemmi8_boutput_bits ? sizeof(uint64_t) : sizeof(int32_t);
  size_t a_bytes, c_bytes;
  if (n == 0 || !gemmi8_extent(m, a_words, a_stride, sizeof(uint64_t), &a_bytes) ||
      !gemmi8_extent(m, c_row, c_stride, c_size, &c_bytes)) {
    return gemmi8_status_invalid_parameter;
  }
  if (k > GEMMI8_BIN_MAX_K) return gemmi8_status_unsupported_parameter;
  const struct gemmi8_packed_expect expect = {
      .type = gemmi8_type_bin,
      .layout = gemmi8_bgemm_layout(cfg),
      .nr = cfg->nr,
      .n = n,
      .k = k,
      .block_bytes = gemmi8_bblock_bytes(cfg, k),
  };
  if (!gemmi8_packed_valid(packed_b, &expect)) return gemmi8_status_invalid_parameter;
  const struct gemmi8_packed_header* h = packed_b;

  /* plan */
  struct bgemm_context ctx = {
      .mr = cfg->mr,
      .nr = cfg->nr,
      .n = n,
      .k = k,
      .a = a,
      .a_stride = a_stride,
      .blocks = (const uint8_t*) packed_b + GEMMI8_PACKED_HEADER_BYTES,
      .block_bytes = (size_t) h->block_bytes,
      .c = c,
      .c_stride = c_stride * c_size,
      .c_size = output == gemmi8_boutput_bits ? 0 : c_size,
      .scale = scale,
      .bias = bias,
  };
  for (size_t r = cfg->mr; r >= 1; r--) {
    const struct gemmi8_bgemm_ukernels* u = &cfg->gemm[r - 1];
    gemmi8_bgemm_ukernel_fn fn = u->out[output];
    ctx.ukernel[r - 1] = fn != NULL ? fn : ctx.ukernel[r];
  }
  const size_t blocks = gemmi8_divide_round_up(n, cfg->nr);
  /* (a_words * 8 <= a_bytes: it fits) */
  size_t mc = gemmi8_min(1024, MC_BYTES / (a_words * sizeof(uint64_t)));
  mc = mc <= cfg->mr ? cfg->mr : mc - mc % cfg->mr;
  ctx.mc = gemmi8_min(mc, m);
  /* bits: whole output words per task (NR divides 64) */
  const size_t word_blocks = output == gemmi8_boutput_bits ? 64 / cfg->nr : 1;
  ctx.nb = gemmi8_round_up(blocks, word_blocks);
  ctx.nblocks = blocks;
  /* Threads: tiles cut for them (parallel.h) */
  const double ops = (double) m * (double) n * (double) k;
  const size_t threads = gemmi8_parallel_threads(parallel, ops, GEMMI8_OP_COST_BINARY);
  if (threads > 1) {
    gemmi8_plan_split(m, blocks, cfg->mr, mc, word_blocks, (double) n * (double) k / 8,
                      ops * GEMMI8_OP_COST_BINARY, threads, &ctx.split);
    parallel->parallel_for(parallel->context, bgemm_tile_job, &ctx,
                           ctx.split.mchunks * ctx.split.bchunks);
    return gemmi8_status_success;
  }
  for (size_t m0 = 0; m0 < m; m0 += ctx.mc) {
    const size_t rows = gemmi8_min(ctx.mc, m - m0);
    for (size_t b0 = 0; b0 < blocks; b0 += ctx.nb) {
      bgemm_tile_task(&ctx, m0, b0, rows, gemmi8_min(ctx.nb, blocks - b0));
    }
  }
  return gemmi8_status_success;
}
gemmi8_status gemmi8_bin_gemm_s32(size_t m, size_t n, size_t k, const uint64_t* a,
                                  size_t a_stride, const void* packed_b, int32_t* c,
                                  size_t c_stride)
{
  return bgemm(gemmi8_boutput_s32, m, n, k, a, a_stride, packed_b, NULL, NULL, c, c_stride, NULL);
}

gemmi8_status gemmi8_bin_gemm_f32(size_t m, size_t n, size_t k, const uint64_t* a,
                                  size_t a_stride, const void* packed_b, const float* scale,
                                  const float* bias, float* c, size_t c_stride)
{
  return bgemm(gemmi8_boutput_f32, m, n, k, a, a_stride, packed_b, scale, bias, c, c_stride, NULL);
}

gemmi8_status gemmi8_bin_gemm_bits(size_t m, size_t n, size_t k, const uint64_t* a,
                                   size_t a_stride, const void* packed_b, const float* scale,
                                   const float* bias, uint64_t* c, size_t c_stride)
{
  return bgemm(gemmi8_boutput_bits, m, n, k, a, a_stride, packed_b, scale, bias, c, c_stride, NULL);
}

gemmi8_status gemmi8_bin_gemm_s32_ex(size_t m, size_t n, size_t k, const uint64_t* a,
                                     size_t a_stride, const void* packed_b, int32_t* c,
                                     size_t c_stride, const gemmi8_parallel* parallel)
{
  return bgemm(gemmi8_boutput_s32, m, n, k, a, a_stride, packed_b, NULL, NULL, c, c_stride, parallel);
}

gemmi8_status gemmi8_bin_gemm_f32_ex(size_t m, size_t n, size_t k, const uint64_t* a,
                                     size_t a_stride, const void* packed_b, const float* scale,
                                     const float* bias, float* c, size_t c_stride,
                                     const gemmi8_parallel* parallel)
{
  return bgemm(gemmi8_boutput_f32, m, n, k, a, a_stride, packed_b, scale, bias, c, c_stride, parallel);
}

gemmi8_status gemmi8_bin_gemm_bits_ex(size_t m, size_t n, size_t k, const uint64_t* a,
                                      size_t a_stride, const void* packed_b, const float* scale,
                                      const float* bias, uint64_t* c, size_t c_stride,
                                      const gemmi8_parallel* parallel)
{
  return bgemm(gemmi8_boutput_bits, m, n, k, a, a_stride, packed_b, scale, bias, c, c_stride, parallel);
}
