/*
 * Kernel tables: one per family (qu8, qs8, qu8s8, bin), each the best kernel set of
 * its kernel list (kernels/<type>.inc) that the build holds, the CPU runs and
 * GEMMI8_ISA allows, chosen once (src/init.c).
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

/* CPU features a kernel set needs (GEMMI8_F_*), and kinds of core a set may be tuned
 * for (GEMMI8_CORE_*: a set naming some is preferred only on systems with one). */
enum {
  GEMMI8_F_AVX2 = 1u << 0,          /* AVX2, FMA, BMI2 with ymm state */
  GEMMI8_F_AVX512BW = 1u << 1,      /* AVX-512 F, BW, DQ, VL with zmm state */
  GEMMI8_F_AVX512VNNI = 1u << 2,
  GEMMI8_F_AVX512VPOPCNT = 1u << 3, /* VPOPCNTDQ and BITALG */
  GEMMI8_F_NEON = 1u << 8,          /* ARMv7 NEON or AArch64 Advanced SIMD */
  GEMMI8_F_NEONDOT = 1u << 9,
  GEMMI8_F_I8MM = 1u << 10,
};
enum {
  GEMMI8_CORE_A510 = 1u << 0, /* Arm Cortex-A510, A520: in order, completing in order */
};

/* Layout flags of a quantized family table (gemmi8_qgemm_config.flags). */
enum {
  /* int32 coef[NR] follows the biases: the kernels add coef[n] * rowsum(a), the row
   * sums from the driver (row_sum) or their own */
  GEMMI8_QLAYOUT_COEF = 1u << 0,
  /* weights stored as B ^ 0x80 (qu8: B - 128 as int8; qs8: B + 128 as uint8) */
  GEMMI8_QLAYOUT_XOR = 1u << 1,
  /* weights stored as int16 B - b_zp, KR x 2 bytes per column and group, no coef */
  GEMMI8_QLAYOUT_S16 = 1u << 2,
  /* a uint32 after each block's weights marks pair-safe blocks (microkernel.h) */
  GEMMI8_QLAYOUT_PAIR_MARK = 1u << 3,
  /* the kernels read row_sum_uniform / row_sum_coef (one coef for every column) */
  GEMMI8_QLAYOUT_UNIFORM_COEF = 1u << 4,
};

struct gemmi8_qgemm_ukernels {
  gemmi8_qgemm_ukernel_fn out[gemmi8_qoutput_count];
};

struct gemmi8_qigemm_ukernels {
  gemmi8_qigemm_ukernel_fn out[gemmi8_qoutput_count];
};

struct gemmi8_qgemm_config {
  const char* isa;    /* the kernel set these kernels belong to */
  unsigned features;  /* GEMMI8_F_* it needs */
  unsigned cores;     /* GEMMI8_CORE_* it is tuned for, or 0 */
  uint8_t mr;         /* main tile height */
  uint8_t nr, kr;
  /* Column group of the kernels (16 for a zmm of int32), or 0: when the last block
   * would hold a single group, the last two blocks share the remainder evenly, so
   * that no tile runs one group wide (see gemmi8_qblock_start). */
  uint8_t group;
  unsigned flags;     /* GEMMI8_QLAYOUT_*: a block is gemmi8_qblock_bytes() */
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
  /* Dynamic quantization of float rows (src/qrows.h; qu8 lists: uint8 as ONNX Runtime,
   * qs8 lists: int8 as XNNPACK's qd8), or NULL: the generic one. */
  void (*quantize_rows)(size_t rows, size_t k, const float* x, size_t x_stride, void* y,
                        size_t y_stride, float* scale, int32_t* zero_point);
  /* The f32 output (gemmi8_output_f32) of a tile of int32 accumulators, or NULL: the
   * generic one. */
  gemmi8_store_f32_fn store_f32;
};

struct gemmi8_bgemm_ukernels {
  gemmi8_bgemm_ukernel_fn out[gemmi8_boutput_count];
};

struct gemmi8_bgemm_config {
  const char* isa;
  unsigned features;
  uint8_t mr, nr;
  /* depth words per group: a block holds, for each group of kr depth words, nr
   * columns of kr consecutive words (1: one word per column, then the next word) */
  uint8_t kr;
  gemmi8_bpack_fn pack;
  struct gemmi8_bgemm_ukernels gemm[GEMMI8_MAX_MR];
  /* the binary convolution's, main tile only (NULL: none) */
  struct {
    gemmi8_bigemm_ukernel_fn out[gemmi8_boutput_count];
  } igemm;
  /* NULL: the generic ones */
  gemmi8_binarize_fn binarize_f32;
  gemmi8_binarize_fn binarize_s8;
  gemmi8_binarize_fn binarize_u8;
};

/* Depthwise kernels (kernels/dw.inc): one table for the 8-bit types, which differ only
 * in the packed weights and params->input_xor. A packed tile holds cr channels: int32
 * bias'[cr], then the weights of round_up(ks, tap_group) taps, tap_bytes bytes a tap
 * and channel (in the set's order; missing taps and channels 0), then for 9 taps
 * bytes9 more (a second layout of a set's 3x3 kernels), to 64 bytes. */
struct gemmi8_dwconv_ukernels {
  gemmi8_dwconv_ukernel_fn out[gemmi8_qoutput_count];
};

/* The kernel slots by tap count: 9 (3x3), 25 (5x5), any (every count, these too). */
enum gemmi8_dwtaps { gemmi8_dwtaps_9, gemmi8_dwtaps_25, gemmi8_dwtaps_any, gemmi8_dwtaps_count };

/* Packs channels filters of ks int8 taps (w[c * ks + t]) and their int32 bias' into
 * ceil(channels / cr) tiles at packed. */
typedef void (*gemmi8_dwpack_fn)(size_t channels, size_t ks, const int8_t* w,
                                 const int32_t* bias, void* packed);

/* Prepares the constants of output kind `out` (fixedpoint or fp32) for a tile of nc
 * channels: p's per-channel arrays start at the tile's first channel. */
typedef void (*gemmi8_dwprepare_fn)(enum gemmi8_qoutput out, const struct gemmi8_qparams* p,
                                    size_t nc, void* prepared);

struct gemmi8_dwconv_config {
  const char* isa;
  unsigned features;
  uint8_t cr, tap_bytes, tap_group;
  uint16_t bytes9;
  /* its 3x3 kernels take stride-1 layers by pairs of rows, reading the taps by columns
   * (microkernel.h: gemmi8_dwparams.row_pixels, columns) */
  uint8_t row_pairs;
  gemmi8_dwpack_fn pack;
  /* The requantization constants of each tile in the kernels' form
   * (GEMMI8_DWPREPARED_BYTES a tile), or NULL: the kernels read params->q's arrays. */
  gemmi8_dwprepare_fn prepare;
  struct gemmi8_dwconv_ukernels taps[gemmi8_dwtaps_count];
};

/* Bytes of one packed depthwise tile of ks taps (0 when it does not fit size_t). */
static inline size_t gemmi8_dwtile_bytes(const struct gemmi8_dwconv_config* cfg, size_t ks)
{
  size_t bytes;
  if (ks > ((size_t) 1 << 24)) return 0;
  bytes = gemmi8_round_up(ks, cfg->tap_group) * cfg->cr * cfg->tap_bytes + cfg->cr * 4u +
          (ks == 9 ? cfg->bytes9 : 0u);
  return gemmi8_round_up(bytes, 64);
}

GEMMI8_INTERNAL const struct gemmi8_dwconv_config* gemmi8_dwconv_config(void);

/* 4-bit weights for qd8 rows (kernels/q4.inc, src/q4gemm.c): gemm[r - 1] runs tiles of
 * up to r rows (the main tile's always set); the packed layout is the generic one for
 * the set's nr. */
struct gemmi8_q4gemm_config {
  const char* isa;
  unsigned features;
  uint8_t mr, nr;
  gemmi8_q4gemm_ukernel_fn gemm[GEMMI8_MAX_MR];
};
GEMMI8_INTERNAL const struct gemmi8_q4gemm_config* gemmi8_q4gemm_config(void);
GEMMI8_INTERNAL const struct gemmi8_q4gemm_config* gemmi8_q4gemm_config_at(size_t i,
                                                                           int* supported);

/* The table each family uses, chosen on its first call, each by its own cascade over
 * its kernel list (src/init.c): the best set that was built, that the CPU runs and
 * that GEMMI8_ISA allows. NULL when the build holds no such type (make TYPES=...).
 * The qu8s8 family runs qu8 tables. */
GEMMI8_INTERNAL const struct gemmi8_qgemm_config* gemmi8_qu8_config(void);
GEMMI8_INTERNAL const struct gemmi8_qgemm_config* gemmi8_qs8_config(void);
GEMMI8_INTERNAL const struct gemmi8_qgemm_config* gemmi8_qu8s8_config(void);
GEMMI8_INTERNAL const struct gemmi8_bgemm_config* gemmi8_bin_config(void);
/* The table of a quantized type (gemmi8_type_qu8, _qs8, _qu8s8), or NULL. */
GEMMI8_INTERNAL const struct gemmi8_qgemm_config* gemmi8_qconfig(uint32_t type);
/* The kernel set level in use (GEMMI8_ISA's names). */
GEMMI8_INTERNAL const char* gemmi8_level_name(void);


/* Layout ids, recorded in packed weights, come from what defines the layout:
 *   bits 24-31 type, 22-23 bytes per column before the weights / 4 (2 with coef),
 *   20-21 weight form (0 as given, 1 xor 0x80, 2 int16), 16-19 group / 16, 8-15 KR,
 *   0-7 NR.
 * Two kernel sets with equal fields share packed weights. */
/* Bytes per column before the weights: the bias, and the coef with GEMMI8_QLAYOUT_COEF. */
static inline uint32_t gemmi8_qcolumn_bytes(const struct gemmi8_qgemm_config* cfg)
{
  return (cfg->flags & GEMMI8_QLAYOUT_COEF) ? 8u : 4u;
}

static inline uint32_t gemmi8_qgemm_layout(const struct gemmi8_qgemm_config* cfg, uint32_t type)
{
  const uint32_t form =
      (cfg->flags & GEMMI8_QLAYOUT_S16) ? 2u : ((cfg->flags & GEMMI8_QLAYOUT_XOR) ? 1u : 0u);
  return type << 24 | gemmi8_qcolumn_bytes(cfg) / 4 << 22 | form << 20 |
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

/* Bytes of a block of packed weights: per column the bias (and coef), then
 * round_up(k, kr) weights of 1 byte (2 with S16), then the pair mark, to 64 bytes. */
static inline size_t gemmi8_qblock_bytes(const struct gemmi8_qgemm_config* cfg, size_t k)
{
  const size_t weight_bytes = (cfg->flags & GEMMI8_QLAYOUT_S16) ? 2 : 1;
  return gemmi8_round_up(cfg->nr * (size_t) gemmi8_qcolumn_bytes(cfg) +
                             gemmi8_round_up(k, cfg->kr) * cfg->nr * weight_bytes +
                             ((cfg->flags & GEMMI8_QLAYOUT_PAIR_MARK) ? 4 : 0),
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
