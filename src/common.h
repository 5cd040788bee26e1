/*
 * Private declarations shared by the drivers, the packing routines and the
 * microkernels: packed-weight header, kernel signatures, the configuration table
 * and the scalar requantization used by the generic kernels.
 */
#ifndef GEMMI8_COMMON_H
#define GEMMI8_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "gemmi8.h"

#define GEMMI8_INTERNAL __attribute__((visibility("hidden")))

static inline size_t gemmi8_divide_round_up(size_t n, size_t q) { return (n + q - 1) / q; }
static inline size_t gemmi8_round_up(size_t n, size_t q) { return gemmi8_divide_round_up(n, q) * q; }
static inline size_t gemmi8_min(size_t a, size_t b) { return a < b ? a : b; }

/* ---- packed weights --------------------------------------------------------------
 * [header: 64 bytes][block 0][block 1]... one block per NR output channels, each
 * block_bytes long (a multiple of 64), in a layout private to the kernel family
 * named by `layout`. */
enum gemmi8_type { gemmi8_type_qu8 = 1, gemmi8_type_qs8 = 2, gemmi8_type_bin = 3 };

#define GEMMI8_PACKED_MAGIC 0x4b503847u /* "G8PK" */
#define GEMMI8_PACKED_HEADER_BYTES 64

struct gemmi8_packed_header {
  uint32_t magic;
  uint32_t type;
  uint32_t layout;
  uint32_t nr;
  uint64_t n;
  uint64_t k;
  uint64_t block_bytes;
  int32_t a_zero_point;
  uint32_t flags; /* GEMMI8_PACKED_* */
  int32_t coef;   /* with GEMMI8_PACKED_UNIFORM_COEF: the coef of every column */
  uint32_t reserved[3];
};
/* Every coef is 0: the row-sum term vanishes and the driver need not compute it. */
#define GEMMI8_PACKED_NO_ROW_SUM 1u
/* Every column has the same coef (per-tensor b_zp, or qs8): header.coef. */
#define GEMMI8_PACKED_UNIFORM_COEF 2u
_Static_assert(sizeof(struct gemmi8_packed_header) == GEMMI8_PACKED_HEADER_BYTES,
               "packed header is one cache line");

/* 1 if packed is a 64-byte aligned buffer packed for this type, kernel layout, n, k. */
static inline int gemmi8_packed_matches(const void* packed, uint32_t type, uint32_t layout,
                                        size_t n, size_t k)
{
  const struct gemmi8_packed_header* h = packed;
  return (uintptr_t) packed % GEMMI8_PACK_ALIGNMENT == 0 && h->magic == GEMMI8_PACKED_MAGIC &&
         h->type == type && h->layout == layout && h->n == n && h->k == k;
}

/* ---- microkernels ----------------------------------------------------------------
 * A quantized microkernel computes an mr x nr tile (mr <= MR, nr <= NR) of C over
 * the whole depth k from a (mr rows, row stride a_stride bytes) and one packed
 * block w, and stores it to c (row stride c_stride bytes) as uint8/int8 or int32.
 *
 * Packed block (Q = NR): int32 bias[Q] = bias - a_zp * colsum(B) + k * a_zp * b_zp,
 * then, for layouts with a row-sum term (column_bytes == 8), int32 coef[Q], then the
 * weights w, in k groups of KR, each group NR columns of KR bytes. The weights are B
 * itself, or B ^ 0x80 (xor_weights: qu8 B - 128 as int8, qs8 B + 128 as uint8) and
 *   coef[j] = (B - w) - b_zp[j]     (qu8 plain: -b_zp; qu8 xor: 128 - b_zp; qs8 xor: -128)
 * so that acc = bias[j] + sum_k a * w + coef[j] * rowsum(a), modulo 2^32.
 * Kernels either sum the rows of a themselves or read params->row_sum, filled by
 * the driver with the config's row_sum function.
 * Layouts with weight_bytes == 2 (gemmi8_qpack_goi_s16__generic) store the weights
 * as int16 w = B - b_zp, KR x 2 bytes per column and group, and no coef: then
 * acc = bias[j] + sum_k a * w exactly, with the same bias. */
struct gemmi8_qparams {
  /* Per-channel arrays, already offset to the tile's first column; entry j of
   * the tile is at [j * channel_stride] (0 for per-tensor values). */
  const int32_t* multiplier;
  const int32_t* shift;
  const float* scale;
  size_t channel_stride;
  /* Sums of the tile's rows of a (for configs with a row_sum function), else NULL.
   * row_sum_uniform: every column has the coef row_sum_coef (scaled_row_sum configs). */
  const int32_t* row_sum;
  int row_sum_uniform;
  int32_t row_sum_coef;
  int32_t zero_point;
  int32_t min;
  int32_t max;
  /* Fixed-point mode: some shift is positive (a saturating left shift is due). */
  int left_shift;
};

typedef void (*gemmi8_qgemm_ukernel_fn)(size_t mr, size_t nr, size_t k, const void* a,
                                        size_t a_stride, const void* w, void* c,
                                        size_t c_stride, const struct gemmi8_qparams* params);

/* A binary microkernel: mr x nr tile over k bits. a rows are a_stride words apart;
 * the packed block holds, for each 64-bit word of depth, NR words (one per column).
 * For the bits output c points at the row's first word and column n0 of the tile
 * is bit params->n0 of that row. */
struct gemmi8_bparams {
  const float* scale; /* offset to the tile's first column; NULL means 1.0f */
  const float* bias;  /* NULL means 0.0f */
  size_t n0;
};

typedef void (*gemmi8_bgemm_ukernel_fn)(size_t mr, size_t nr, size_t k, const uint64_t* a,
                                        size_t a_stride, const void* w, void* c,
                                        size_t c_stride, const struct gemmi8_bparams* params);

#define GEMMI8_DECLARE_QGEMM_UKERNEL(fn)                                                   \
  GEMMI8_INTERNAL void fn(size_t mr, size_t nr, size_t k, const void* a, size_t a_stride,  \
                          const void* w, void* c, size_t c_stride,                         \
                          const struct gemmi8_qparams* params);
#define GEMMI8_DECLARE_BGEMM_UKERNEL(fn)                                                   \
  GEMMI8_INTERNAL void fn(size_t mr, size_t nr, size_t k, const uint64_t* a,               \
                          size_t a_stride, const void* w, void* c, size_t c_stride,        \
                          const struct gemmi8_bparams* params);

GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_s32_ukernel_4x8c4__generic)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_fixedpoint_ukernel_4x8c4__generic)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_fp32_ukernel_4x8c4__generic)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_s32_ukernel_4x8c4__generic)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_fixedpoint_ukernel_4x8c4__generic)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_fp32_ukernel_4x8c4__generic)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_s32_ukernel_7x48c4__avx512vnni)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_fixedpoint_ukernel_7x48c4__avx512vnni)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_fp32_ukernel_7x48c4__avx512vnni)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_s32_ukernel_7x48c4__avx512vnni)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_fixedpoint_ukernel_7x48c4__avx512vnni)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_fp32_ukernel_7x48c4__avx512vnni)
GEMMI8_INTERNAL void gemmi8_qu8_rsum__avx512vnni(size_t m, size_t k, const void* a,
                                                 size_t a_stride, int32_t* sums);
GEMMI8_INTERNAL void gemmi8_qs8_rsum__avx512vnni(size_t m, size_t k, const void* a,
                                                 size_t a_stride, int32_t* sums);
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_s32_ukernel_6x16c2__avx2)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_fixedpoint_ukernel_6x16c2__avx2)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_fp32_ukernel_6x16c2__avx2)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_s32_ukernel_6x16c2__avx2)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_fixedpoint_ukernel_6x16c2__avx2)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_fp32_ukernel_6x16c2__avx2)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_s32_ukernel_4x8__avx2)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_f32_ukernel_4x8__avx2)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_bits_ukernel_4x8__avx2)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_s32_ukernel_6x32__avx512bw)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_f32_ukernel_6x32__avx512bw)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_bits_ukernel_6x32__avx512bw)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_s32_ukernel_6x32__avx512vpopcnt)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_f32_ukernel_6x32__avx512vpopcnt)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_bits_ukernel_6x32__avx512vpopcnt)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_s32_ukernel_4x4__generic)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_f32_ukernel_4x4__generic)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_bits_ukernel_4x4__generic)
/* aarch32 NEON (kernels/aarch32) */
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_s32_ukernel_4x8c1__neon)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_fixedpoint_ukernel_4x8c1__neon)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_fp32_ukernel_4x8c1__neon)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_s32_ukernel_4x8c1__neon)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_fixedpoint_ukernel_4x8c1__neon)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_fp32_ukernel_4x8c1__neon)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_s32_ukernel_4x4__neon)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_f32_ukernel_4x4__neon)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_bits_ukernel_4x4__neon)
/* end aarch32 NEON */
/* aarch64 (kernels/aarch64) */
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_s32_ukernel_4x16c4__neondot)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_fixedpoint_ukernel_4x16c4__neondot)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_fp32_ukernel_4x16c4__neondot)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_s32_ukernel_4x16c4__neondot)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_fixedpoint_ukernel_4x16c4__neondot)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_fp32_ukernel_4x16c4__neondot)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_s32_ukernel_4x4c16__neon)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_fixedpoint_ukernel_4x4c16__neon)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_fp32_ukernel_4x4c16__neon)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_s32_ukernel_4x4c16__neon)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_fixedpoint_ukernel_4x4c16__neon)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_fp32_ukernel_4x4c16__neon)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_s32_ukernel_6x16c8__i8mm)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_fixedpoint_ukernel_6x16c8__i8mm)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qu8_gemm_fp32_ukernel_6x16c8__i8mm)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_s32_ukernel_6x16c8__i8mm)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_fixedpoint_ukernel_6x16c8__i8mm)
GEMMI8_DECLARE_QGEMM_UKERNEL(gemmi8_qs8_gemm_fp32_ukernel_6x16c8__i8mm)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_s32_ukernel_4x8__neon)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_f32_ukernel_4x8__neon)
GEMMI8_DECLARE_BGEMM_UKERNEL(gemmi8_bin_gemm_bits_ukernel_4x8__neon)
GEMMI8_INTERNAL void gemmi8_qu8_rsum__neon(size_t m, size_t k, const void* a, size_t a_stride,
                                           int32_t* sums);
/* end aarch64 */

/* ---- packing ---------------------------------------------------------------------
 * Source view of B for the packers: element (n, k) of the logical N x K matrix. */
struct gemmi8_qpack_source {
  const uint8_t* b; /* bytes of a uint8 or int8 matrix */
  size_t stride;
  int kn;           /* 1: the matrix is K x N */
  int is_signed;    /* 1: int8 values */
};

static inline int32_t gemmi8_qpack_value(const struct gemmi8_qpack_source* s, size_t n, size_t k)
{
  const uint8_t v = s->kn ? s->b[k * s->stride + n] : s->b[n * s->stride + k];
  return s->is_signed ? (int32_t) (int8_t) v : (int32_t) v;
}

struct gemmi8_qgemm_config;
/* Fills the blocks after the header. b_zp: NR-independent array of n values, or NULL
 * for a symmetric (zero point 0) type; bias: n values or NULL. */
typedef void (*gemmi8_qpack_fn)(const struct gemmi8_qgemm_config* cfg, size_t n, size_t k,
                                const struct gemmi8_qpack_source* src, int32_t a_zero_point,
                                const int32_t* b_zp, const int32_t* bias, size_t block_bytes,
                                uint8_t* blocks);

typedef void (*gemmi8_bpack_fn)(size_t nr, size_t n, size_t k, const uint64_t* b,
                                size_t b_stride, int kn, size_t block_bytes, uint8_t* blocks);

/* Binarizes rows of k values (float, int8, or uint8 against zero_point; x_stride in
 * bytes) into rows of GEMMI8_BIN_WORDS(k) words (out_stride in words), padding bits
 * 0. Reads exactly k elements of each row. */
typedef void (*gemmi8_binarize_fn)(size_t rows, size_t k, const void* x, size_t x_stride,
                                   uint8_t zero_point, uint64_t* out, size_t out_stride);
#define GEMMI8_DECLARE_BINARIZE(fn)                                                  \
  GEMMI8_INTERNAL void fn(size_t rows, size_t k, const void* x, size_t x_stride,     \
                          uint8_t zero_point, uint64_t* out, size_t out_stride);
GEMMI8_DECLARE_BINARIZE(gemmi8_binarize_f32__generic)
GEMMI8_DECLARE_BINARIZE(gemmi8_binarize_s8__generic)
GEMMI8_DECLARE_BINARIZE(gemmi8_binarize_u8__generic)
GEMMI8_DECLARE_BINARIZE(gemmi8_binarize_f32__avx2)
GEMMI8_DECLARE_BINARIZE(gemmi8_binarize_s8__avx2)
GEMMI8_DECLARE_BINARIZE(gemmi8_binarize_u8__avx2)
GEMMI8_DECLARE_BINARIZE(gemmi8_binarize_f32__avx512bw)
GEMMI8_DECLARE_BINARIZE(gemmi8_binarize_s8__avx512bw)
GEMMI8_DECLARE_BINARIZE(gemmi8_binarize_u8__avx512bw)

GEMMI8_INTERNAL void gemmi8_qpack_goi_s16__generic(const struct gemmi8_qgemm_config* cfg,
                                                   size_t n, size_t k,
                                                   const struct gemmi8_qpack_source* src,
                                                   int32_t a_zero_point, const int32_t* b_zp,
                                                   const int32_t* bias, size_t block_bytes,
                                                   uint8_t* blocks);
GEMMI8_INTERNAL void gemmi8_qpack_goi__generic(const struct gemmi8_qgemm_config* cfg, size_t n,
                                               size_t k, const struct gemmi8_qpack_source* src,
                                               int32_t a_zero_point, const int32_t* b_zp,
                                               const int32_t* bias, size_t block_bytes,
                                               uint8_t* blocks);
GEMMI8_INTERNAL void gemmi8_bpack_words__generic(size_t nr, size_t n, size_t k, const uint64_t* b,
                                                 size_t b_stride, int kn, size_t block_bytes,
                                                 uint8_t* blocks);

/* ---- configuration ---------------------------------------------------------------- */
struct gemmi8_qgemm_config {
  uint32_t layout; /* recorded in packed weights; unique per packing layout */
  uint8_t mr, nr, kr;
  /* bytes per column before the weights (bias, zero points): a block is
   * round_up(nr * column_bytes + round_up(k, kr) * nr * max(weight_bytes, 1), 64) bytes */
  uint8_t column_bytes;
  uint8_t xor_weights;
  uint8_t weight_bytes; /* bytes per packed weight: 0 or 1 (8-bit), 2 (int16) */
  gemmi8_qpack_fn pack;
  /* Sums of m rows of k bytes (uint8 for qu8, int8 for qs8), or NULL when the
   * kernels do not need them from the driver. */
  void (*row_sum)(size_t m, size_t k, const void* a, size_t a_stride, int32_t* sums);
  /* The kernels read row_sum_uniform / row_sum_coef. */
  uint8_t scaled_row_sum;
  /* Column group of the kernels (16 for a zmm of int32), or 0: when the last block
   * would hold a single group, the last two blocks share the remainder evenly, so
   * that no tile runs one group wide (see gemmi8_qblock_start). */
  uint8_t group;
  gemmi8_qgemm_ukernel_fn s32;
  gemmi8_qgemm_ukernel_fn fixedpoint; /* fixed-point requantization */
  gemmi8_qgemm_ukernel_fn fp32;
};

struct gemmi8_bgemm_config {
  uint32_t layout;
  uint8_t mr, nr;
  gemmi8_bpack_fn pack;
  gemmi8_bgemm_ukernel_fn s32;
  gemmi8_bgemm_ukernel_fn f32;
  gemmi8_bgemm_ukernel_fn bits;
  gemmi8_binarize_fn binarize_f32;
  gemmi8_binarize_fn binarize_s8;
  gemmi8_binarize_fn binarize_u8;
};

struct gemmi8_config {
  const char* isa;
  struct gemmi8_qgemm_config qu8;
  struct gemmi8_qgemm_config qs8;
  struct gemmi8_bgemm_config bin;
};

/* The configuration in use, chosen on first call. */
GEMMI8_INTERNAL const struct gemmi8_config* gemmi8_get_config(void);

/* First column of packed block b (of ceil(n / nr)); block b ends where b + 1 starts,
 * the last at n. Blocks are nr wide, except that with cfg->group a remainder of one
 * group is merged with the block before and split in two halves (48 + 16 -> 32 + 32). */
static inline size_t gemmi8_qblock_start(const struct gemmi8_qgemm_config* cfg, size_t n,
                                         size_t b)
{
  const size_t nr = cfg->nr, blocks = gemmi8_divide_round_up(n, nr);
  if (cfg->group != 0 && blocks >= 2 && b == blocks - 1 && n % nr != 0 &&
      n % nr <= cfg->group) {
    return n - gemmi8_round_up((nr + n % nr) / 2, cfg->group);
  }
  return b * nr;
}

static inline size_t gemmi8_qblock_bytes(const struct gemmi8_qgemm_config* cfg, size_t k)
{
  const size_t weight_bytes = cfg->weight_bytes == 2 ? 2 : 1;
  return gemmi8_round_up(cfg->nr * (size_t) cfg->column_bytes +
                             gemmi8_round_up(k, cfg->kr) * cfg->nr * weight_bytes,
                         64);
}

/* ---- scalar requantization (kernels/generic and the scalar tails of SIMD kernels) --- */
static inline int32_t gemmi8_requantize_fixedpoint(int32_t acc, int32_t multiplier, int32_t shift)
{
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = shift > 0 ? 0 : -shift;
  int64_t x = (int64_t) acc * ((int64_t) 1 << left);
  if (x > INT32_MAX) x = INT32_MAX;
  if (x < INT32_MIN) x = INT32_MIN;
  /* SaturatingRoundingDoublingHighMul; multiplier >= 0 so it cannot overflow. */
  const int64_t product = x * (int64_t) multiplier;
  const int64_t nudge = product >= 0 ? (INT64_C(1) << 30) : 1 - (INT64_C(1) << 30);
  const int32_t high = (int32_t) ((product + nudge) / (INT64_C(1) << 31));
  if (right == 0) return high;
  /* RoundingDivideByPOT: half away from zero. */
  const int32_t mask = (int32_t) ((UINT32_C(1) << right) - 1);
  const int32_t remainder = high & mask;
  const int32_t threshold = (mask >> 1) + (high < 0);
  return (high >> right) + (remainder > threshold);
}

/* fp32 mode: the product rounded to float once, clamped to the output window
 * (relative to the zero point), rounded half to even. */
static inline int32_t gemmi8_requantize_fp32(int32_t acc, float scale, int32_t zero_point,
                                             int32_t min, int32_t max)
{
  float x = (float) acc * scale;
  const float lo = (float) (min - zero_point);
  const float hi = (float) (max - zero_point);
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  /* |x| <= 510: adding 1.5 * 2^23 rounds to an integer, half to even. */
  const float magic = 12582912.0f;
  const float rounded = (x + magic) - magic;
  return (int32_t) rounded + zero_point;
}

/* Binary float output of column j of a tile: (float) acc * scale + bias, two
 * roundings; a NULL scale is 1, a NULL bias 0. */
static inline float gemmi8_bin_affine1(int32_t acc, const struct gemmi8_bparams* p, size_t j)
{
  const float scale = p->scale ? p->scale[j] : 1.0f;
  const float bias = p->bias ? p->bias[j] : 0.0f;
  const float product = (float) acc * scale;
  return product + bias;
}


#endif
