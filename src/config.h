/*
 * Kernel tables: one per family (qu8, qs8, bin), each filled from the best kernel set
 * the CPU (and GEMMI8_ISA) allows for that family, chosen once (src/init.c).
 *
 * A family table holds everything that defines its packed layout (NR, KR, weight
 * form, packer), the GEMM microkernels per tile height (gemm[r - 1] runs tiles of up
 * to r rows; gemm[mr - 1], the main tile, is always set; the planner picks the
 * smallest set slot that holds a tile's rows) and the indirect (igemm) slots that
 * share the same packing, for the convolution layer.
 */
#ifndef GEMMI8_CONFIG_H
#define GEMMI8_CONFIG_H

#include "microkernel.h"
#include "pack.h"
#include "packed.h"

#define GEMMI8_MAX_MR 8

struct gemmi8_qgemm_ukernels {
  gemmi8_qgemm_ukernel_fn s32;
  gemmi8_qgemm_ukernel_fn fixedpoint;
  gemmi8_qgemm_ukernel_fn fp32;
};

struct gemmi8_qigemm_ukernels {
  gemmi8_qigemm_ukernel_fn s32;
  gemmi8_qigemm_ukernel_fn fixedpoint;
  gemmi8_qigemm_ukernel_fn fp32;
};

struct gemmi8_qgemm_config {
  const char* isa; /* the kernel set these kernels belong to */
  uint8_t mr;      /* main tile height */
  uint8_t nr, kr;
  /* bytes per column before the weights (bias, coef): a block is
   * round_up(nr * column_bytes + round_up(k, kr) * nr * max(weight_bytes, 1)
   * (+ 4 with pair_mark), 64) bytes */
  uint8_t column_bytes;
  uint8_t xor_weights;
  uint8_t weight_bytes; /* bytes per packed weight: 0 or 1 (8-bit), 2 (int16) */
  /* 1: the packer marks pair-safe blocks after the weights (microkernel.h); the mark
   * takes 4 bytes of the block */
  uint8_t pair_mark;
  /* The kernels read row_sum_uniform / row_sum_coef. */
  uint8_t scaled_row_sum;
  /* Column group of the kernels (16 for a zmm of int32), or 0: when the last block
   * would hold a single group, the last two blocks share the remainder evenly, so
   * that no tile runs one group wide (see gemmi8_qblock_start). */
  uint8_t group;
  gemmi8_qpack_fn pack;
  /* Sums of m rows of k bytes (uint8 for qu8, int8 for qs8), or NULL when the
   * kernels do not need them from the driver. */
  void (*row_sum)(size_t m, size_t k, const void* a, size_t a_stride, int32_t* sums);
  /* The same through an igemm row tile's pointers (convolution), or NULL: the
   * driver's portable loop. */
  gemmi8_irow_sum_fn irow_sum;
  /* Fixed-point constants per block for the kernels (gemmi8_qparams.prepared), or NULL. */
  gemmi8_qprepare_fn prepare_fixedpoint;
  struct gemmi8_qgemm_ukernels gemm[GEMMI8_MAX_MR];
  struct gemmi8_qigemm_ukernels igemm[GEMMI8_MAX_MR];
  /* Packed A, or NULL: pack_a writes up to mr rows into a panel of
   * gemmi8_qpanel_bytes(cfg, k) bytes, which the pgemm kernels (the main tile's, rows
   * past mr zero) read instead of A; the driver packs each row tile once when it is
   * multiplied by three or more blocks and 512 or more depths times blocks. */
  gemmi8_packa_fn pack_a;
  struct gemmi8_qgemm_ukernels pgemm;
};

struct gemmi8_bgemm_ukernels {
  gemmi8_bgemm_ukernel_fn s32;
  gemmi8_bgemm_ukernel_fn f32;
  gemmi8_bgemm_ukernel_fn bits;
};

struct gemmi8_bgemm_config {
  const char* isa;
  uint8_t mr, nr;
  /* depth words per group: a block holds, for each group of kr depth words, nr
   * columns of kr consecutive words (1: one word per column, then the next word) */
  uint8_t kr;
  gemmi8_bpack_fn pack;
  struct gemmi8_bgemm_ukernels gemm[GEMMI8_MAX_MR];
  gemmi8_binarize_fn binarize_f32;
  gemmi8_binarize_fn binarize_s8;
  gemmi8_binarize_fn binarize_u8;
};

/* The tables in use, chosen on first call. */
struct gemmi8_config {
  const char* isa; /* the kernel-set level (GEMMI8_ISA names) */
  const struct gemmi8_qgemm_config* qu8;
  const struct gemmi8_qgemm_config* qs8;
  const struct gemmi8_bgemm_config* bin;
};

GEMMI8_INTERNAL const struct gemmi8_config* gemmi8_get_config(void);

/* Layout ids, recorded in packed weights, come from what defines the layout:
 *   bits 24-31 type, 22-23 column_bytes / 4, 20-21 weight form (0 as given, 1 xor
 *   0x80, 2 int16), 16-19 group / 16, 8-15 KR, 0-7 NR.
 * Two kernel sets with equal fields share packed weights. */
static inline uint32_t gemmi8_qgemm_layout(const struct gemmi8_qgemm_config* cfg, uint32_t type)
{
  const uint32_t form = cfg->weight_bytes == 2 ? 2u : (cfg->xor_weights ? 1u : 0u);
  return type << 24 | (uint32_t) (cfg->column_bytes / 4) << 22 | form << 20 |
         (uint32_t) (cfg->group / 16) << 16 | (uint32_t) cfg->kr << 8 | cfg->nr;
}

static inline uint32_t gemmi8_bgemm_layout(const struct gemmi8_bgemm_config* cfg)
{
  return (uint32_t) gemmi8_type_bin << 24 | (uint32_t) cfg->kr << 8 | cfg->nr;
}

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
                             gemmi8_round_up(k, cfg->kr) * cfg->nr * weight_bytes +
                             (cfg->pair_mark ? 4 : 0),
                         64);
}

/* Bytes of one panel of packed A (cfg->pack_a): mr rows of k depths padded to 16. */
static inline size_t gemmi8_qpanel_bytes(const struct gemmi8_qgemm_config* cfg, size_t k)
{
  return cfg->mr * gemmi8_round_up(k, 16);
}

/* Bytes of a packed binary block: GEMMI8_BIN_WORDS(k) words per column rounded up to
 * kr (k at most GEMMI8_BIN_MAX_K), rounded to 64. */
static inline size_t gemmi8_bblock_bytes(const struct gemmi8_bgemm_config* cfg, size_t k)
{
  return gemmi8_round_up(gemmi8_round_up(GEMMI8_BIN_WORDS(k), cfg->kr) * cfg->nr *
                             sizeof(uint64_t),
                         64);
}

#endif
