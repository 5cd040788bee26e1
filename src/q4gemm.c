/*
 * 4-bit weights for rows quantized at run time (qd8: int8 rows, a scale and a zero
 * point each): per-channel (qc4w) or per-block (qb4w) scales, signed nibbles or
 * unsigned ones with a zero point; packing, the driver, and the GEMM that
 * gemmi8_qd8_gemm_f32 runs on such weights.
 *
 * Packed: [header][column block 0][column block 1]...[float bias[n], to 64 bytes],
 * each column block the set's nr columns in the layout of src/microkernel.h (struct
 * gemmi8_q4params): per chunk of depths (a block of qb4w; 256 depths for qc4w, whose
 * single scale comes after the last), the columns' (-zp, -sum of q - zp) pairs and
 * scales, then the nibbles. Signed nibbles are stored as q = s + 8 with zero
 * point 8. The header records the block size (0: qc4w) where the 8-bit types keep
 * the activations' zero point, under the checksum.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "packed.h"
#include "parallel.h"
#include "qgemm.h"
#include "qrows.h"

#if GEMMI8_KERNELS_q4

#define QC4W_CHUNK 256

static size_t chunk_of(size_t block) { return block != 0 ? block : QC4W_CHUNK; }

/* Bytes of one column block of nr columns over k depths. */
static int column_block_bytes(size_t nr, size_t k, size_t block, size_t* bytes)
{
  const size_t chunk = chunk_of(block), chunks = gemmi8_divide_round_up(k, chunk);
  size_t groups, b;
  /* every chunk: pairs and scales (8 bytes a column), then its groups of 8 depths */
  groups = chunks * (chunk / 8) - (chunk - (k - (chunks - 1) * chunk)) / 8;
  return gemmi8_mul(chunks, 8 * nr, &b) && gemmi8_mul(groups, 4 * nr, bytes) &&
         gemmi8_add(b, *bytes, bytes);
}

static int q4_bytes(const struct gemmi8_q4gemm_config* cfg, size_t n, size_t k, size_t block,
                    size_t* block_bytes, size_t* blocks_end, size_t* size)
{
  size_t all, tail;
  if (!column_block_bytes(cfg->nr, k, block, block_bytes)) return 0;
  return gemmi8_mul(gemmi8_divide_round_up(n, cfg->nr), *block_bytes, &all) &&
         gemmi8_add(all, GEMMI8_PACKED_HEADER_BYTES, blocks_end) && gemmi8_mul(n, 4, &tail) &&
         gemmi8_add(*blocks_end, gemmi8_round_up(tail, 64), size) && tail <= SIZE_MAX - 63;
}

static gemmi8_status check_shape(const struct gemmi8_q4gemm_config* cfg, size_t n, size_t k,
                                 size_t block, size_t* block_bytes, size_t* blocks_end,
                                 size_t* size)
{
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  if (n == 0 || k == 0) return gemmi8_status_invalid_parameter;
  if (block != 0 && block != 32 && block != 64 && block != 128 && block != 256) {
    return gemmi8_status_invalid_parameter;
  }
  if (k > GEMMI8_QD8_MAX_K) return gemmi8_status_unsupported_parameter;
  if (!q4_bytes(cfg, n, k, block, block_bytes, blocks_end, size)) {
    return gemmi8_status_unsupported_parameter;
  }
  return gemmi8_status_success;
}

gemmi8_status gemmi8_qd8_pack_q4_size(size_t n, size_t k, size_t block, size_t* size)
{
  size_t block_bytes, blocks_end, bytes;
  if (size == NULL) return gemmi8_status_invalid_parameter;
  const gemmi8_status status =
      check_shape(gemmi8_q4gemm_config(), n, k, block, &block_bytes, &blocks_end, &bytes);
  if (status == gemmi8_status_success) *size = bytes;
  return status;
}

static gemmi8_status check_source(size_t n, size_t k, const gemmi8_q4_weights* w,
                                  size_t* block_bytes, size_t* blocks_end, size_t* size)
{
  const struct gemmi8_q4gemm_config* cfg = gemmi8_q4gemm_config();
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  if (w == NULL || w->b == NULL || w->scale == NULL) return gemmi8_status_invalid_parameter;
  gemmi8_status status = check_shape(cfg, n, k, w->block, block_bytes, blocks_end, size);
  if (status != gemmi8_status_success) return status;
  const size_t row_bytes = gemmi8_divide_round_up(k, 2);
  const size_t blocks = w->block != 0 ? gemmi8_divide_round_up(k, w->block) : 1;
  size_t extent, scales;
  if (!gemmi8_extent(n, row_bytes, w->b_stride, 1, &extent) || !gemmi8_mul(n, blocks, &scales) ||
      !gemmi8_extent(1, scales, scales, sizeof(float), &extent) ||
      !gemmi8_floats_finite(scales, w->scale) ||
      (w->bias != NULL && !gemmi8_floats_finite(n, w->bias))) {
    return gemmi8_status_invalid_parameter;
  }
  if (w->zero_point != NULL) {
    uint8_t any = 0;
    for (size_t i = 0; i < scales; i++) any |= w->zero_point[i];
    if (any > 15) return gemmi8_status_invalid_parameter;
  }
  return gemmi8_status_success;
}

/* q (0..15) of element (col, kk), and its zero point. */
static void source_value(const gemmi8_q4_weights* w, size_t blocks, size_t col, size_t kk,
                         int32_t* q, int32_t* zp)
{
  const uint8_t byte = w->b[col * w->b_stride + kk / 2];
  const int32_t nibble = kk % 2 ? byte >> 4 : byte & 15;
  if (w->zero_point == NULL) {
    *q = nibble ^ 8; /* s + 8 for the two's complement nibble s */
    *zp = 8;
  } else {
    *q = nibble;
    *zp = w->zero_point[col * blocks + (w->block != 0 ? kk / w->block : 0)];
  }
}

static void pack_blocks(const struct gemmi8_q4gemm_config* cfg, size_t n, size_t k,
                        const gemmi8_q4_weights* w, size_t block_bytes, uint8_t* out)
{
  const size_t nr = cfg->nr, chunk = chunk_of(w->block);
  const size_t blocks = w->block != 0 ? gemmi8_divide_round_up(k, w->block) : 1;
  for (size_t n0 = 0; n0 < n; n0 += nr) {
    uint8_t* p = out + n0 / nr * block_bytes;
    memset(p, 0, block_bytes);
    for (size_t k0 = 0; k0 < k; k0 += chunk) {
      const size_t len = gemmi8_min(chunk, k - k0);
      int32_t* pairs = (int32_t*) p;
      float* scale = (float*) (p + 4 * nr);
      uint8_t* q = p + 8 * nr;
      for (size_t j = 0; j < nr && n0 + j < n; j++) {
        const size_t col = n0 + j;
        int32_t sum = 0, q_zp = 0;
        for (size_t d = 0; d < len; d++) {
          int32_t v;
          source_value(w, blocks, col, k0 + d, &v, &q_zp);
          sum += v - q_zp;
          uint8_t* byte = q + (d / 8) * nr * 4 + 4 * j + d % 4;
          *byte |= (uint8_t) (d % 8 >= 4 ? v << 4 : v);
        }
        pairs[j] = (int32_t) ((uint32_t) (uint16_t) -q_zp | (uint32_t) (uint16_t) -sum << 16);
        scale[j] = w->scale[col * blocks + (w->block != 0 ? k0 / w->block : 0)];
      }
      p = q + gemmi8_divide_round_up(len, 8) * nr * 4;
    }
  }
}

static gemmi8_status pack_q4(size_t n, size_t k, const gemmi8_q4_weights* w, void* packed,
                             size_t packed_size)
{
  size_t block_bytes, blocks_end, size;
  gemmi8_status status = check_source(n, k, w, &block_bytes, &blocks_end, &size);
  if (status != gemmi8_status_success) return status;
  if (packed == NULL || (uintptr_t) packed % GEMMI8_PACK_ALIGNMENT != 0 || packed_size < size) {
    return gemmi8_status_invalid_parameter;
  }
  const struct gemmi8_q4gemm_config* cfg = gemmi8_q4gemm_config();
  struct gemmi8_packed_header* h = packed;
  gemmi8_packed_init(h, gemmi8_type_qd8q4, (uint32_t) gemmi8_type_qd8q4 << 24 | cfg->nr, cfg->nr,
                     n, k, block_bytes);
  h->a_zero_point = (int32_t) w->block;
  gemmi8_packed_seal(h);
  pack_blocks(cfg, n, k, w, block_bytes, (uint8_t*) packed + GEMMI8_PACKED_HEADER_BYTES);
  float* bias = (float*) ((uint8_t*) packed + blocks_end);
  for (size_t j = 0; j < n; j++) bias[j] = w->bias != NULL ? w->bias[j] : 0.0f;
  /* the tail's padding too: the packed bytes depend on the weights alone */
  memset(bias + n, 0, size - blocks_end - 4 * n);
  return gemmi8_status_success;
}

gemmi8_status gemmi8_qd8_pack_q4(size_t n, size_t k, const gemmi8_q4_weights* w, void* packed,
                                 size_t packed_size)
{
  return pack_q4(n, k, w, packed, packed_size);
}

gemmi8_status gemmi8_qd8_pack_q4_alloc(size_t n, size_t k, const gemmi8_q4_weights* w,
                                       void** packed)
{
  if (packed == NULL) return gemmi8_status_invalid_parameter;
  size_t block_bytes, blocks_end, size;
  gemmi8_status status = check_source(n, k, w, &block_bytes, &blocks_end, &size);
  if (status != gemmi8_status_success) return status;
  void* buffer = NULL;
  if (posix_memalign(&buffer, GEMMI8_PACK_ALIGNMENT, size) != 0) return gemmi8_status_out_of_memory;
  status = pack_q4(n, k, w, buffer, size);
  if (status != gemmi8_status_success) {
    free(buffer);
    return status;
  }
  *packed = buffer;
  return gemmi8_status_success;
}

/* ---- the GEMM ------------------------------------------------------------------------- */

struct q4_context {
  const struct gemmi8_q4gemm_config* cfg;
  gemmi8_q4gemm_ukernel_fn ukernel[GEMMI8_MAX_MR];
  size_t n, k, nblocks, block_bytes;
  const int8_t* a;
  size_t a_stride;
  const uint8_t* blocks;
  const float* bias;
  float* c;
  size_t c_stride;
  struct gemmi8_q4params params;
  struct gemmi8_split split; /* threads */
};

static void q4_tiles(const struct q4_context* ctx, size_t m0, size_t rows, size_t b0, size_t nbs)
{
  const size_t mr_main = ctx->cfg->mr, nr_main = ctx->cfg->nr;
  struct gemmi8_q4params params = ctx->params;
  for (size_t b = b0; b < b0 + nbs; b++) {
    const size_t n0 = b * nr_main, nr = gemmi8_min(nr_main, ctx->n - n0);
    params.col_bias = ctx->bias + n0;
    for (size_t i = m0; i < m0 + rows; i += mr_main) {
      const size_t mr = gemmi8_min(mr_main, m0 + rows - i);
      params.row_pairs = ctx->params.row_pairs + i * ctx->params.pairs_stride;
      params.row_scale = ctx->params.row_scale + i;
      ctx->ukernel[mr - 1](mr, nr, ctx->k, ctx->a + i * ctx->a_stride, ctx->a_stride,
                           ctx->blocks + b * ctx->block_bytes, ctx->c + i * ctx->c_stride + n0,
                           ctx->c_stride * sizeof(float), &params);
    }
  }
}

static void q4_job(void* context, size_t index)
{
  const struct q4_context* ctx = context;
  size_t m0, rows, b0, blocks;
  gemmi8_split_task(&ctx->split, index, &m0, &rows, &b0, &blocks);
  q4_tiles(ctx, m0, rows, b0, blocks);
}

/* Sum of n int8 bytes: eight at a time as unsigned bytes (x ^ 0x80 = x + 128), their
 * byte sums by a multiply, then 128 per byte taken off. */
static int32_t sum_s8(const int8_t* x, size_t n)
{
  const uint64_t lanes = UINT64_C(0x00FF00FF00FF00FF), flip = UINT64_C(0x8080808080808080);
  uint64_t total = 0;
  size_t d = 0;
  for (; d + 8 <= n; d += 8) {
    uint64_t v;
    memcpy(&v, x + d, 8);
    v ^= flip;
    const uint64_t pairs = (v & lanes) + ((v >> 8) & lanes); /* four 16-bit sums <= 510 */
    total += (pairs * UINT64_C(0x0001000100010001)) >> 48;
  }
  int32_t s = (int32_t) total - (int32_t) (d * 128);
  for (; d < n; d++) s += x[d];
  return s;
}

/* The row pairs: row i's chunk c at pairs[i * chunks + c], (int16) sum of the chunk's
 * bytes and the zero point. */
static void row_pairs(size_t m, size_t k, size_t chunk, const int8_t* a, size_t a_stride,
                      const int32_t* zp, int32_t* pairs)
{
  const size_t chunks = gemmi8_divide_round_up(k, chunk);
  for (size_t i = 0; i < m; i++) {
    const int8_t* row = a + i * a_stride;
    for (size_t c = 0; c < chunks; c++) {
      const size_t len = gemmi8_min(chunk, k - c * chunk);
      const int32_t s = sum_s8(row + c * chunk, len);
      pairs[i * chunks + c] = (int32_t) ((uint32_t) (uint16_t) s | (uint32_t) (uint16_t) zp[i] << 16);
    }
  }
}

#define PAIRS_ON_STACK 2048

/* The header of 4-bit weights packed for this set, the call's shape and a block size
 * the packer writes; *block_bytes and *blocks_end from it. */
static int header_valid(const struct gemmi8_q4gemm_config* cfg, size_t n, size_t k,
                        const void* packed_b, size_t* block_bytes, size_t* blocks_end)
{
  const struct gemmi8_packed_header* h = packed_b;
  size_t size;
  if (cfg == NULL || packed_b == NULL || (uintptr_t) packed_b % GEMMI8_PACK_ALIGNMENT != 0 ||
      h->a_zero_point < 0 ||
      check_shape(cfg, n, k, (size_t) h->a_zero_point, block_bytes, blocks_end, &size) !=
          gemmi8_status_success) {
    return 0;
  }
  const struct gemmi8_packed_expect expect = {
      .type = gemmi8_type_qd8q4,
      .layout = (uint32_t) gemmi8_type_qd8q4 << 24 | cfg->nr,
      .nr = cfg->nr,
      .n = n,
      .k = k,
      .block_bytes = *block_bytes,
      .a_zp_min = 0,
      .a_zp_max = 256,
  };
  return gemmi8_packed_valid(packed_b, &expect);
}

gemmi8_status gemmi8_q4gemm_check(size_t n, size_t k, const void* packed_b)
{
  const struct gemmi8_q4gemm_config* cfg = gemmi8_q4gemm_config();
  if (cfg == NULL) return gemmi8_status_unsupported_parameter;
  size_t block_bytes, blocks_end;
  return header_valid(cfg, n, k, packed_b, &block_bytes, &blocks_end)
             ? gemmi8_status_success
             : gemmi8_status_invalid_parameter;
}

gemmi8_status gemmi8_q4gemm_run(size_t m, size_t n, size_t k, const int8_t* a, size_t a_stride,
                                const float* a_scale, const int32_t* a_zero_point,
                                const void* packed_b, float out_min, float out_max, float* c,
                                size_t c_stride, const gemmi8_parallel* parallel)
{
  const struct gemmi8_q4gemm_config* cfg = gemmi8_q4gemm_config();
  const size_t block = (size_t) ((const struct gemmi8_packed_header*) packed_b)->a_zero_point;
  size_t block_bytes, blocks_end, size;
  /* (the caller checked the header, gemmi8_q4gemm_check: only its sizes are taken) */
  check_shape(cfg, n, k, block, &block_bytes, &blocks_end, &size);
  struct q4_context ctx = {
      .cfg = cfg,
      .n = n,
      .k = k,
      .nblocks = gemmi8_divide_round_up(n, cfg->nr),
      .block_bytes = block_bytes,
      .a = a,
      .a_stride = a_stride,
      .blocks = (const uint8_t*) packed_b + GEMMI8_PACKED_HEADER_BYTES,
      .bias = (const float*) ((const uint8_t*) packed_b + blocks_end),
      .c = c,
      .c_stride = c_stride,
  };
  for (size_t r = cfg->mr; r >= 1; r--) {
    ctx.ukernel[r - 1] = cfg->gemm[r - 1] != NULL ? cfg->gemm[r - 1] : ctx.ukernel[r];
  }
  const size_t chunk = chunk_of(block), chunks = gemmi8_divide_round_up(k, chunk);
  size_t pair_count;
  int32_t stack_pairs[PAIRS_ON_STACK];
  int32_t* pairs = stack_pairs;
  if (!gemmi8_mul(m, chunks, &pair_count) || pair_count > SIZE_MAX / 4) {
    return gemmi8_status_out_of_memory;
  }
  if (pair_count > PAIRS_ON_STACK && (pairs = malloc(pair_count * 4)) == NULL) {
    return gemmi8_status_out_of_memory;
  }
  row_pairs(m, k, chunk, a, a_stride, a_zero_point, pairs);
  ctx.params = (struct gemmi8_q4params){
      .chunk = chunk,
      .per_chunk = block != 0,
      .row_pairs = pairs,
      .pairs_stride = chunks,
      .row_scale = a_scale,
      .out_min = out_min,
      .out_max = out_max,
  };
  const double ops = 2.0 * (double) m * (double) n * (double) k;
  const size_t threads = gemmi8_parallel_threads(parallel, ops, GEMMI8_OP_COST_GEMM);
  if (threads > 1) {
    const size_t mc_l2 = 384 * 1024 / k > cfg->mr ? 384 * 1024 / k : cfg->mr;
    gemmi8_plan_split(m, ctx.nblocks, cfg->mr, mc_l2, 1, (double) n * (double) k / 2,
                      ops * GEMMI8_OP_COST_GEMM, threads, &ctx.split);
    parallel->parallel_for(parallel->context, q4_job, &ctx,
                           ctx.split.mchunks * ctx.split.bchunks);
  } else {
    q4_tiles(&ctx, 0, m, 0, ctx.nblocks);
  }
  if (pairs != stack_pairs) free(pairs);
  return gemmi8_status_success;
}

#else /* a build without the q4 type: the entry points say so */

gemmi8_status gemmi8_qd8_pack_q4_size(size_t n, size_t k, size_t block, size_t* size)
{
  (void) n, (void) k, (void) block, (void) size;
  return gemmi8_status_unsupported_parameter;
}

gemmi8_status gemmi8_qd8_pack_q4(size_t n, size_t k, const gemmi8_q4_weights* w, void* packed,
                                 size_t packed_size)
{
  (void) n, (void) k, (void) w, (void) packed, (void) packed_size;
  return gemmi8_status_unsupported_parameter;
}

gemmi8_status gemmi8_qd8_pack_q4_alloc(size_t n, size_t k, const gemmi8_q4_weights* w,
                                       void** packed)
{
  (void) n, (void) k, (void) w, (void) packed;
  return gemmi8_status_unsupported_parameter;
}

gemmi8_status gemmi8_q4gemm_check(size_t n, size_t k, const void* packed_b)
{
  (void) n, (void) k, (void) packed_b;
  return gemmi8_status_unsupported_parameter;
}

gemmi8_status gemmi8_q4gemm_run(size_t m, size_t n, size_t k, const int8_t* a, size_t a_stride,
                                const float* a_scale, const int32_t* a_zero_point,
                                const void* packed_b, float out_min, float out_max, float* c,
                                size_t c_stride, const gemmi8_parallel* parallel)
{
  (void) m, (void) n, (void) k, (void) a, (void) a_stride, (void) a_scale, (void) a_zero_point;
  (void) packed_b, (void) out_min, (void) out_max, (void) c, (void) c_stride, (void) parallel;
  return gemmi8_status_unsupported_parameter;
}

#endif
