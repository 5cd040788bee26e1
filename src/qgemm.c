/*
 * qu8 / qs8 GEMM drivers: validation, then tiles of MR x NR over the packed blocks.
 */
#include <float.h>

#include "common.h"

struct qgemm_context {
  const struct gemmi8_qgemm_config* cfg;
  gemmi8_qgemm_ukernel_fn ukernel;
  size_t n, k;
  const uint8_t* a;
  size_t a_stride;
  const uint8_t* blocks;
  size_t block_bytes;
  uint8_t* c;
  size_t c_stride; /* bytes */
  size_t c_size;   /* bytes per element */
  struct gemmi8_qparams params;
};

/* Rows per chunk: the chunk of a is reused by every block of B, so it should stay in
 * the L2 cache; its row sums live on the stack. */
#define MC_MAX 1024
#define MC_BYTES (384 * 1024)

/* Computes the tiles of rows [m0, m1) and packed blocks [b0, b1): the unit of work a
 * thread pool can split. row_sum: sums of rows m0.. when the kernels need them. */
static void qgemm_tiles(const struct qgemm_context* ctx, size_t m0, size_t m1, size_t b0,
                        size_t b1, const int32_t* row_sum)
{
  const size_t blocks = gemmi8_divide_round_up(ctx->n, ctx->cfg->nr);
  const size_t tile_rows = ctx->cfg->mr;
  for (size_t b = b0; b < b1; b++) {
    const size_t n0 = gemmi8_qblock_start(ctx->cfg, ctx->n, b);
    const size_t n1 = b + 1 < blocks ? gemmi8_qblock_start(ctx->cfg, ctx->n, b + 1) : ctx->n;
    const size_t nr = n1 - n0;
    struct gemmi8_qparams p = ctx->params;
    if (p.multiplier) p.multiplier += n0 * p.channel_stride;
    if (p.shift) p.shift += n0 * p.channel_stride;
    if (p.scale) p.scale += n0 * p.channel_stride;
    const uint8_t* w = ctx->blocks + b * ctx->block_bytes;
    for (size_t i = m0; i < m1; i += tile_rows) {
      const size_t mr = gemmi8_min(tile_rows, m1 - i);
      p.row_sum = row_sum ? row_sum + (i - m0) : NULL;
      ctx->ukernel(mr, nr, ctx->k, ctx->a + i * ctx->a_stride, ctx->a_stride, w,
                   ctx->c + i * ctx->c_stride + n0 * ctx->c_size, ctx->c_stride, &p);
    }
  }
}

static gemmi8_status check_gemm(enum gemmi8_type type, const struct gemmi8_qgemm_config* cfg,
                                size_t max_k, size_t m, size_t n, size_t k, const void* a,
                                size_t a_stride, const void* packed_b, const void* c,
                                size_t c_stride, size_t c_size)
{
  if (a == NULL || packed_b == NULL || c == NULL) return gemmi8_status_invalid_parameter;
  if (m == 0 || n == 0 || k == 0) return gemmi8_status_invalid_parameter;
  if (a_stride < k || (m - 1) > (SIZE_MAX - k) / a_stride) return gemmi8_status_invalid_parameter;
  if (c_stride < n || (m - 1) > (SIZE_MAX / c_size - n) / c_stride) {
    return gemmi8_status_invalid_parameter;
  }
  if (k > max_k) return gemmi8_status_unsupported_parameter;
  if (!gemmi8_packed_matches(packed_b, (uint32_t) type, cfg->layout, n, k)) {
    return gemmi8_status_invalid_parameter;
  }
  return gemmi8_status_success;
}

static gemmi8_status check_requant(const gemmi8_requant* rq, size_t n, int32_t lo, int32_t hi)
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
      for (size_t j = 0; j < count; j++) {
        if (rq->multiplier[j] < 0 || rq->shift[j] < -31 || rq->shift[j] > 30) {
          return gemmi8_status_invalid_parameter;
        }
      }
      return gemmi8_status_success;
    case gemmi8_requant_fp32:
      if (rq->scale == NULL) return gemmi8_status_invalid_parameter;
      for (size_t j = 0; j < count; j++) {
        if (!(rq->scale[j] > 0.0f && rq->scale[j] <= FLT_MAX)) {
          return gemmi8_status_invalid_parameter;
        }
      }
      return gemmi8_status_success;
  }
  return gemmi8_status_invalid_parameter;
}

static void run(const struct gemmi8_qgemm_config* cfg, gemmi8_qgemm_ukernel_fn ukernel,
                size_t m, size_t n, size_t k, const void* a, size_t a_stride,
                const void* packed_b, void* c, size_t c_stride, size_t c_size,
                const gemmi8_requant* rq)
{
  const struct gemmi8_packed_header* h = packed_b;
  struct qgemm_context ctx = {
      .cfg = cfg,
      .ukernel = ukernel,
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
  if (rq != NULL) {
    ctx.params.channel_stride = rq->per_channel ? 1 : 0;
    if (rq->mode == gemmi8_requant_fixedpoint) {
      ctx.params.multiplier = rq->multiplier;
      ctx.params.shift = rq->shift;
      for (size_t j = 0; j < (rq->per_channel ? n : 1); j++) {
        ctx.params.left_shift |= rq->shift[j] > 0;
      }
    } else {
      ctx.params.scale = rq->scale;
    }
    ctx.params.zero_point = rq->zero_point;
    ctx.params.min = rq->min;
    ctx.params.max = rq->max;
  }
  const size_t blocks = gemmi8_divide_round_up(n, cfg->nr);
  if (cfg->row_sum == NULL || (h->flags & GEMMI8_PACKED_NO_ROW_SUM)) {
    qgemm_tiles(&ctx, 0, m, 0, blocks, NULL);
    return;
  }
  /* One coef for every column: the kernels can add coef * rowsum without a vector
   * multiply. */
  ctx.params.row_sum_uniform = cfg->scaled_row_sum && (h->flags & GEMMI8_PACKED_UNIFORM_COEF);
  ctx.params.row_sum_coef = h->coef;
  int32_t row_sum[MC_MAX];
  size_t mc = gemmi8_min(MC_MAX, MC_BYTES / k);
  mc = mc < cfg->mr ? cfg->mr : mc - mc % cfg->mr;
  for (size_t m0 = 0; m0 < m; m0 += mc) {
    const size_t m1 = gemmi8_min(m, m0 + mc);
    cfg->row_sum(m1 - m0, k, (const uint8_t*) a + m0 * a_stride, a_stride, row_sum);
    qgemm_tiles(&ctx, m0, m1, 0, blocks, row_sum);
  }
}

static gemmi8_status qgemm(enum gemmi8_type type, size_t max_k, int32_t lo, int32_t hi,
                           size_t m, size_t n, size_t k, const void* a, size_t a_stride,
                           const void* packed_b, const gemmi8_requant* rq, void* c,
                           size_t c_stride)
{
  const struct gemmi8_config* config = gemmi8_get_config();
  const struct gemmi8_qgemm_config* cfg = type == gemmi8_type_qu8 ? &config->qu8 : &config->qs8;
  gemmi8_status status = check_gemm(type, cfg, max_k, m, n, k, a, a_stride, packed_b, c,
                                    c_stride, 1);
  if (status != gemmi8_status_success) return status;
  status = check_requant(rq, n, lo, hi);
  if (status != gemmi8_status_success) return status;
  run(cfg, rq->mode == gemmi8_requant_fixedpoint ? cfg->fixedpoint : cfg->fp32, m, n, k, a,
      a_stride, packed_b, c, c_stride, 1, rq);
  return gemmi8_status_success;
}

static gemmi8_status qgemm_s32(enum gemmi8_type type, size_t max_k, size_t m, size_t n,
                               size_t k, const void* a, size_t a_stride, const void* packed_b,
                               int32_t* c, size_t c_stride)
{
  const struct gemmi8_config* config = gemmi8_get_config();
  const struct gemmi8_qgemm_config* cfg = type == gemmi8_type_qu8 ? &config->qu8 : &config->qs8;
  gemmi8_status status = check_gemm(type, cfg, max_k, m, n, k, a, a_stride, packed_b, c,
                                    c_stride, sizeof(int32_t));
  if (status != gemmi8_status_success) return status;
  run(cfg, cfg->s32, m, n, k, a, a_stride, packed_b, c, c_stride, sizeof(int32_t), NULL);
  return gemmi8_status_success;
}

gemmi8_status gemmi8_qu8_gemm(size_t m, size_t n, size_t k, const uint8_t* a,
                              size_t a_stride, const void* packed_b,
                              const gemmi8_requant* rq, uint8_t* c, size_t c_stride)
{
  return qgemm(gemmi8_type_qu8, GEMMI8_QU8_MAX_K, 0, 255, m, n, k, a, a_stride, packed_b, rq,
               c, c_stride);
}

gemmi8_status gemmi8_qs8_gemm(size_t m, size_t n, size_t k, const int8_t* a,
                              size_t a_stride, const void* packed_b,
                              const gemmi8_requant* rq, int8_t* c, size_t c_stride)
{
  return qgemm(gemmi8_type_qs8, GEMMI8_QS8_MAX_K, -128, 127, m, n, k, a, a_stride, packed_b,
               rq, c, c_stride);
}

gemmi8_status gemmi8_qu8_gemm_s32(size_t m, size_t n, size_t k, const uint8_t* a,
                                  size_t a_stride, const void* packed_b, int32_t* c,
                                  size_t c_stride)
{
  return qgemm_s32(gemmi8_type_qu8, GEMMI8_QU8_MAX_K, m, n, k, a, a_stride, packed_b, c,
                   c_stride);
}

gemmi8_status gemmi8_qs8_gemm_s32(size_t m, size_t n, size_t k, const int8_t* a,
                                  size_t a_stride, const void* packed_b, int32_t* c,
                                  size_t c_stride)
{
  return qgemm_s32(gemmi8_type_qs8, GEMMI8_QS8_MAX_K, m, n, k, a, a_stride, packed_b, c,
                   c_stride);
}
