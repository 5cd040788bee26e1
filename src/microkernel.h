/*
 * The microkernel ABI and the declaration of every microkernel.
 *
 * Names carry the contract: gemmi8_<type>_gemm_<output>_ukernel_<MR>x<NR>c<KR>__<isa>,
 * output s32 (int32), fixedpoint (TFLite's fixed-point requantization to 8 bits) or
 * fp32 (float scale, round to nearest even); binary kernels output s32, f32 or bits.
 */
#ifndef GEMMI8_MICROKERNEL_H
#define GEMMI8_MICROKERNEL_H

#include "common.h"
#include "select.h"

/* * A quantized microkernel computes an mr x nr tile (mr <= MR, nr <= NR) of C over
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
 * Layouts with pair_mark (config.h) put a uint32 after the weights of every block:
 * GEMMI8_QBLOCK_PAIRS_SAFE when no column holds the int8 value -128 (byte 0x80) at
 * both depths d and d + KR / 2 of any group of KR (padding included), else 0. Kernels
 * may then add the two products of such depths in 16 bits (their sum cannot reach
 * 2^15); a block packed without the mark reads 0 and takes the exact path.
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
  /* fp32 mode: every scale is at most 0.5 in magnitude, so that no float product of an
   * int32 accumulator passes 2^30 (a stage may leave out a bound that only keeps a
   * larger one from wrapping in vcvtps2dq); 0: nothing is said. */
  int small_scales;
  /* Fixed-point mode, kernel sets with a prepare_fixedpoint function: the block's
   * per-channel constants in that set's form (GEMMI8_QPREPARED_BYTES at a 64-byte
   * boundary), computed once per packed block by the driver instead of once per tile;
   * NULL: the kernel computes them (a block with a single row tile). */
  const void* prepared;
  /* f32 output (rows quantized at run time, src/qdgemm.c): per row of the tile its
   * scale and zero point (row_scale[i], row_zero_point[i], i < mr; the tile's first
   * row), per column (stride 1, the tile's first column) the weights' column sum,
   * scale (`scale` above) and float bias; the clamp. */
  const float* row_scale;
  const int32_t* row_zero_point;
  const int32_t* col_sum;
  const float* col_bias;
  float out_min, out_max;
};

/* The outputs of a quantized kernel and of a binary kernel: a table's slots for a tile,
 * and the output stage a kernel body ends with (a new output kind, such as a float
 * output, is one more value). */
enum gemmi8_qoutput {
  gemmi8_qoutput_s32,        /* int32 accumulators */
  gemmi8_qoutput_fixedpoint, /* TFLite's fixed-point requantization to 8 bits */
  gemmi8_qoutput_fp32,       /* float scale, round to nearest even, to 8 bits */
  gemmi8_qoutput_count
};
/* A kernel body shared by a tile's kernels of both 8-bit types (x86, AArch64, ARMv7)
 * learns from its entry point, in the bits of mr from GEMMI8_OUT_SHIFT up (mr < 2^16),
 * the output kind (two bits) and whether a is int8 (qs8: GEMMI8_TILE_SIGNED). */
#define GEMMI8_OUT_SHIFT 16
#define GEMMI8_OUT_MR(mr_out) ((mr_out) & (((size_t) 1 << GEMMI8_OUT_SHIFT) - 1))
#define GEMMI8_OUT_KIND(mr_out) ((enum gemmi8_qoutput) (((mr_out) >> GEMMI8_OUT_SHIFT) & 3))
#define GEMMI8_OUT_FLAG(kind) ((size_t) (kind) << GEMMI8_OUT_SHIFT)
#define GEMMI8_TILE_SIGNED ((size_t) 4 << GEMMI8_OUT_SHIFT)
_Static_assert(gemmi8_qoutput_count <= 4, "the output kind fits in two bits");
/* Whether a body's a is int8: from the flags when both types are built, else known. */
#if GEMMI8_KERNELS_qu8 && GEMMI8_KERNELS_qs8
#define GEMMI8_TILE_IS_SIGNED(flags) (((flags) & GEMMI8_TILE_SIGNED) != 0)
#else
#define GEMMI8_TILE_IS_SIGNED(flags) GEMMI8_KERNELS_qs8
#endif
/* The x86 and ARMv7 kernels of one type and kind on a shared body: thin entry points
 * that pass their own arguments on, with FLAGS in mr's high bits (an or and a jump); a
 * type's three (SIGNED: 0 for qu8, GEMMI8_TILE_SIGNED for qs8) of one kind (ENTRY). */
#define GEMMI8_QGEMM_BODY_ENTRY(fn, body, FLAGS)                                          \
  void fn(size_t mr, size_t nr, size_t k, const void* a, size_t a_stride, const void* w,  \
          void* c, size_t c_stride, const struct gemmi8_qparams* params)                 \
  {                                                                                      \
    body(mr | (FLAGS), nr, k, a, a_stride, w, c, c_stride, params);                      \
  }
#define GEMMI8_QIGEMM_BODY_ENTRY(fn, body, FLAGS)                                         \
  void fn(size_t mr, size_t nr, size_t kc, size_t ks, const void* const* a, const void* w, \
          void* c, size_t c_stride, size_t a_offset, const void* zero,                   \
          const struct gemmi8_qparams* params)                                           \
  {                                                                                      \
    body(mr | (FLAGS), nr, kc, ks, a, w, c, c_stride, a_offset, zero, params);           \
  }
#define GEMMI8_QBODY_KERNELS(ENTRY, body, SIGNED, s32, fixedpoint, fp32)                  \
  ENTRY(s32, body, GEMMI8_OUT_FLAG(gemmi8_qoutput_s32) | (SIGNED))                        \
  ENTRY(fixedpoint, body, GEMMI8_OUT_FLAG(gemmi8_qoutput_fixedpoint) | (SIGNED))          \
  ENTRY(fp32, body, GEMMI8_OUT_FLAG(gemmi8_qoutput_fp32) | (SIGNED))
enum gemmi8_boutput {
  gemmi8_boutput_s32,  /* int32 */
  gemmi8_boutput_f32,  /* acc * scale[n] + bias[n] */
  gemmi8_boutput_bits, /* packed sign bits of the f32 value */
  gemmi8_boutput_count
};

#define GEMMI8_QBLOCK_PAIRS_SAFE UINT32_C(0x53524150) /* "PAIRS" */

/* Prepares the fixed-point constants of the nr columns of p (already offset to the
 * block's first column) into out. */
typedef void (*gemmi8_qprepare_fn)(const struct gemmi8_qparams* p, size_t nr, void* out);
#define GEMMI8_QPREPARED_BYTES 2048

typedef void (*gemmi8_qgemm_ukernel_fn)(size_t mr, size_t nr, size_t k, const void* a,
                                        size_t a_stride, const void* w, void* c,
                                        size_t c_stride, const struct gemmi8_qparams* params);

/* An indirect (igemm) microkernel, for convolution: the tile of a GEMM kernel of the
 * same family and packing, with A given as ks groups of MR row pointers (one group
 * per filter tap, kc bytes read from each, a_offset added to every pointer that is
 * not `zero`). The slots exist in every family table; the convolution layer fills
 * them. */
typedef void (*gemmi8_qigemm_ukernel_fn)(size_t mr, size_t nr, size_t kc, size_t ks,
                                         const void* const* a, const void* w, void* c,
                                         size_t c_stride, size_t a_offset, const void* zero,
                                         const struct gemmi8_qparams* params);

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

/*
 * An indirect binary microkernel (igemm), for the binary convolution: the mr x nr tile
 * of the set's GEMM kernel with A given as ks groups of MR row pointers (one group per
 * filter tap; a_offset bytes added to every pointer that is not `zero`), kc bits read
 * from each (GEMMI8_BIN_WORDS(kc) words; the bits past kc in the last word are 0, as
 * the driver makes them: it copies an input whose channels end inside a word). The
 * packed block holds, for each tap, round_up(GEMMI8_BIN_WORDS(kc), KR)
 * depth words (the padding words and bits 0), as gemmi8_bpack_fn lays out a depth of
 * ks times that. Rows past mr alias row mr - 1's pointers (the driver repeats them).
 *   acc[i][j] = ks * kc - 2 * popcount(a XOR w) - corr[i][j]
 * where corr is 0 when params->corr is NULL or its row pointer is NULL, else
 * params->corr[i][j] (the zero-padding correction). Outputs:
 *   s32   acc;
 *   f32   min(max((float) acc * scale[j] + bias[j], out_min), out_max), two roundings
 *         then the clamp, written as `out_min > v ? out_min : v` then `out_max < v ?
 *         out_max : v` (a NaN stays); scale NULL is 1.0f, bias NULL 0.0f; with
 *         params->add, v = c[i][j] + v (the value c held, a third rounding) before the
 *         clamp;
 *   bits  bit params->n0 + j of row i set when (acc XOR flip[j]) < threshold[j]
 *         (signed), every other bit of the row's words kept.
 */
struct gemmi8_bcparams {
  const float* scale; /* f32: the tile's first column; NULL: 1.0f */
  const float* bias;  /* NULL: 0.0f */
  float out_min, out_max;
  const int32_t* threshold; /* bits: the tile's first column */
  const int32_t* flip;      /* 0 or -1 a column */
  size_t n0;                /* bits: the bit of the tile's first column in a row */
  const int32_t* const* corr;
  int add; /* f32: the output's value before is added to the float result, then the clamp */
};

typedef void (*gemmi8_bigemm_ukernel_fn)(size_t mr, size_t nr, size_t kc, size_t ks,
                                         const uint64_t* const* a, const void* w, void* c,
                                         size_t c_stride, size_t a_offset, const void* zero,
                                         const struct gemmi8_bcparams* params);

/* * A depthwise microkernel computes `pixels` output pixels of `channels` channels each
 * (one filter per channel, no sum across channels), over the ks taps of each pixel:
 *   acc[p][c] = bias'[c] + sum_t (int32) (in_t[c] ^ input_xor) * (int8) w[t][c]
 * modulo 2^32, where in_t is input[p * ks + t] (+ input_offset unless it is `zero`),
 * read as uint8 after the xor; then the output stage of params->q (its per-channel
 * arrays at channel 0 of the call; for sets with a prepare helper, its prepared
 * constants those of the call's first channel tile, GEMMI8_DWPREPARED_BYTES a tile,
 * which those kernels require), stored at output + p * output_stride
 * (bytes). `channels` is any count: the packed weights hold whole tiles of the set's
 * CR channels, and the kernel reads only `channels` bytes of each tap. The packed
 * weights (gemmi8_dwconv_config.pack) make this the layer's exact accumulator: int8
 * weights w - b_zp, the zero-point terms folded into bias'. */
struct gemmi8_dwparams {
  struct gemmi8_qparams q; /* row_sum unused */
  uint8_t input_xor;       /* 0x80: int8 input, read as uint8 + 128; else 0 */
  /* 3x3 kernels; 0: nothing is said. Otherwise the caller states that the call's
   * pixels are output rows of row_pixels pixels of a 3x3 convolution of stride 1 and
   * dilation 1, the first at the start of a row, the rows paired from the call's first
   * (r, r + 1), (r + 2, r + 3)... each pair within one image; that each pixel's taps are
   * the input window under it (tap 3 ky + kx at input row y + ky, column x + kx, or the
   * zero buffer), so that pixel p + row_pixels is the one below p and p + 1 the one
   * right of p in a row. Kernels may then share the loads of taps across pixels (with
   * input_offset 0); the last pixels of a call that make no whole pair of rows are
   * taken as any others. */
  size_t row_pixels;
  /* With row_pixels: the same taps by input column, for each whole pair of rows of the
   * call (gemmi8_indirection_columns_fill): 4 (row_pixels + 2) pointers a pair, column
   * c holding the taps at input column c - 1 of the window's four rows (the top
   * pixels' tap rows 0, 1, 2, the bottom pixels' row 2). A kernel that shares loads
   * across pixels reads these rather than input: 32 bytes a column, that is a pair of
   * pixels, where the pair's 18 pointers take 144. */
  const void* const* columns;
};

#define GEMMI8_DWPREPARED_BYTES 5120

typedef void (*gemmi8_dwconv_ukernel_fn)(size_t channels, size_t pixels, size_t ks,
                                         const void* const* input, const void* w,
                                         void* output, size_t output_stride,
                                         size_t input_offset, const void* zero,
                                         const struct gemmi8_dwparams* params);

/* Stores the f32 output (gemmi8_output_f32) of an mr x nr tile of int32 accumulators
 * (rows acc_stride elements apart) to c (rows c_stride bytes apart). */
typedef void (*gemmi8_store_f32_fn)(size_t mr, size_t nr, const int32_t* acc, size_t acc_stride,
                                    void* c, size_t c_stride, const struct gemmi8_qparams* params);

/*
 * A 4-bit weight microkernel (kernels/q4.inc, src/q4gemm.c): the float output of an
 * mr x nr tile of int8 rows a (a_stride bytes apart, k bytes read from each) times
 * one packed column block w of 4-bit weights, to c (rows c_stride bytes apart).
 * The depth is cut in chunks of params->chunk depths (a multiple of 8; the last may
 * be shorter). The block holds, for each chunk in order, int32 pair[NR] (int16 -zp
 * of the column's chunk, low half, and int16 -W, W the sum over the chunk's depths of
 * (q - zp), high half), float scale[NR], then the nibbles of ceil(len / 8) groups
 * of 8 depths: per group and column group of 16, 64 bytes, byte 4 j + d holding
 * column j's depth d (low nibble) and depth 4 + d (high nibble) as q, 0..15.
 * row_pairs[i * pairs_stride + c] holds row i's int16 sum of the chunk's bytes (low
 * half) and its zero point (high half). Per chunk, exactly,
 *   t[i][j] = sum a * q + (S[i] * -zp[j] + a_zp[i] * -W[j])  = sum (a - a_zp)(q - zp)
 * and, f starting at +0.0f: per_chunk 1, f = f + (float) t * scale[j] after each
 * chunk; else t summed over every chunk (int32), f = f + (float) sum * scale[j] with
 * the last chunk's scale. Then v = f * row_scale[i]; v = v + col_bias[j]; the clamp
 * as gemmi8_output_f32's. Separate roundings, in this order.
 */
struct gemmi8_q4params {
  size_t chunk;
  int per_chunk;
  const int32_t* row_pairs;
  size_t pairs_stride;
  const float* row_scale; /* the tile's first row */
  const float* col_bias;  /* the tile's first column */
  float out_min, out_max;
};
typedef void (*gemmi8_q4gemm_ukernel_fn)(size_t mr, size_t nr, size_t k, const int8_t* a,
                                         size_t a_stride, const void* w, float* c,
                                         size_t c_stride, const struct gemmi8_q4params* params);
#define GEMMI8_DECLARE_Q4GEMM_UKERNEL(fn)                                                    \
  GEMMI8_INTERNAL void fn(size_t mr, size_t nr, size_t k, const int8_t* a, size_t a_stride,  \
                          const void* w, float* c, size_t c_stride,                          \
                          const struct gemmi8_q4params* params);
#define GEMMI8_Q4UKERNEL_NAME(mr, nr, isa) gemmi8_qd8_q4gemm_ukernel_##mr##x##nr##__##isa

/* Packs m (<= MR) rows of k bytes of A, a_stride apart, into one panel. */
typedef void (*gemmi8_packa_fn)(size_t m, size_t k, const void* a, size_t a_stride, void* panel);
/* Sums of the rows of an igemm row tile (mr pointers per tap, rows of them summed:
 * ks taps of kc bytes each, a_offset added to every pointer but zero). */
typedef void (*gemmi8_irow_sum_fn)(size_t mr, size_t rows, size_t kc, size_t ks,
                                   const void* const* a, size_t a_offset, const void* zero,
                                   int32_t* sums);
typedef void (*gemmi8_row_sum_fn)(size_t m, size_t k, const void* a, size_t a_stride,
                                  int32_t* sums);

/* ---- declarations, from the kernel lists (kernels/<type>.inc) --------------------- */

#define GEMMI8_DECLARE_QGEMM_UKERNEL(fn)                                                   \
  GEMMI8_INTERNAL void fn(size_t mr, size_t nr, size_t k, const void* a, size_t a_stride,  \
                          const void* w, void* c, size_t c_stride,                         \
                          const struct gemmi8_qparams* params);
#define GEMMI8_DECLARE_QIGEMM_UKERNEL(fn)                                                  \
  GEMMI8_INTERNAL void fn(size_t mr, size_t nr, size_t kc, size_t ks, const void* const* a,  \
                          const void* w, void* c, size_t c_stride, size_t a_offset,          \
                          const void* zero, const struct gemmi8_qparams* params);
#define GEMMI8_DECLARE_BGEMM_UKERNEL(fn)                                                   \
  GEMMI8_INTERNAL void fn(size_t mr, size_t nr, size_t k, const uint64_t* a,               \
                          size_t a_stride, const void* w, void* c, size_t c_stride,        \
                          const struct gemmi8_bparams* params);
#define GEMMI8_DECLARE_BIGEMM_UKERNEL(fn)                                                   \
  GEMMI8_INTERNAL void fn(size_t mr, size_t nr, size_t kc, size_t ks,                       \
                          const uint64_t* const* a, const void* w, void* c, size_t c_stride, \
                          size_t a_offset, const void* zero,                                 \
                          const struct gemmi8_bcparams* params);
#define GEMMI8_DECLARE_B_gemm(fn) GEMMI8_DECLARE_BGEMM_UKERNEL(fn)
#define GEMMI8_DECLARE_B_igemm(fn) GEMMI8_DECLARE_BIGEMM_UKERNEL(fn)
#define GEMMI8_DECLARE_DWCONV_UKERNEL(fn)                                                    \
  GEMMI8_INTERNAL void fn(size_t channels, size_t pixels, size_t ks, const void* const* input, \
                          const void* w, void* output, size_t output_stride,                 \
                          size_t input_offset, const void* zero,                             \
                          const struct gemmi8_dwparams* params);
#define GEMMI8_DECLARE_DW_pack(fn)                                                          \
  GEMMI8_INTERNAL void fn(size_t channels, size_t ks, const int8_t* w, const int32_t* bias,  \
                          void* packed);
#define GEMMI8_DECLARE_DW_prepare(fn)                                                      \
  GEMMI8_INTERNAL void fn(enum gemmi8_qoutput out, const struct gemmi8_qparams* p, size_t nc, \
                          void* prepared);
#define GEMMI8_DECLARE_Q_gemm(fn) GEMMI8_DECLARE_QGEMM_UKERNEL(fn)
#define GEMMI8_DECLARE_Q_pgemm(fn) GEMMI8_DECLARE_QGEMM_UKERNEL(fn)
#define GEMMI8_DECLARE_Q_igemm(fn) GEMMI8_DECLARE_QIGEMM_UKERNEL(fn)
#define GEMMI8_DECLARE_Q_row_sum(fn) \
  GEMMI8_INTERNAL void fn(size_t m, size_t k, const void* a, size_t a_stride, int32_t* sums);
#define GEMMI8_DECLARE_Q_irow_sum(fn)                                                      \
  GEMMI8_INTERNAL void fn(size_t mr, size_t rows, size_t kc, size_t ks, const void* const* a, \
                          size_t a_offset, const void* zero, int32_t* sums);
#define GEMMI8_DECLARE_Q_prepare_fixedpoint(fn) \
  GEMMI8_INTERNAL void fn(const struct gemmi8_qparams* p, size_t nr, void* out);
#define GEMMI8_DECLARE_Q_pack_a(fn) \
  GEMMI8_INTERNAL void fn(size_t m, size_t k, const void* a, size_t a_stride, void* panel);
#define GEMMI8_DECLARE_Q_quantize_rows(fn)                                            \
  GEMMI8_INTERNAL void fn(size_t rows, size_t k, const float* x, size_t x_stride, void* y, \
                          size_t y_stride, float* scale, int32_t* zero_point);
#define GEMMI8_DECLARE_Q_store_f32(fn)                                                     \
  GEMMI8_INTERNAL void fn(size_t mr, size_t nr, const int32_t* acc, size_t acc_stride, void* c, \
                          size_t c_stride, const struct gemmi8_qparams* params);
#define GEMMI8_DECLARE_B_binarize(fn)                                                   \
  GEMMI8_INTERNAL void fn(size_t rows, size_t k, const void* x, size_t x_stride,          \
                          uint8_t zero_point, uint64_t* out, size_t out_stride);
#define GEMMI8_DECLARE_B_binarize_f32(fn) GEMMI8_DECLARE_B_binarize(fn)
#define GEMMI8_DECLARE_B_binarize_s8(fn) GEMMI8_DECLARE_B_binarize(fn)
#define GEMMI8_DECLARE_B_binarize_u8(fn) GEMMI8_DECLARE_B_binarize(fn)

/* The symbol a kernel row's fields spell: the tables name kernels through these, so
 * that a row whose symbol and fields disagree does not compile. */
#define GEMMI8_QUKERNEL_NAME(type, kind, out, mr, nr, kr, isa) \
  gemmi8_##type##_##kind##_##out##_ukernel_##mr##x##nr##c##kr##__##isa
/* Depthwise: taps 9 (3x3), 25 (5x5) or 0 (any count), written 9p, 25p, up. */
#define GEMMI8_DWTAPS_9 9p
#define GEMMI8_DWTAPS_25 25p
#define GEMMI8_DWTAPS_0 up
#define GEMMI8_DWUKERNEL_NAME(out, taps, cr, isa) \
  GEMMI8_DWUKERNEL_NAME_(out, GEMMI8_DWTAPS_##taps, cr, isa)
#define GEMMI8_DWUKERNEL_NAME_(out, taps, cr, isa) GEMMI8_DWUKERNEL_NAME__(out, taps, cr, isa)
#define GEMMI8_DWUKERNEL_NAME__(out, taps, cr, isa) \
  gemmi8_q8_dwconv_##out##_ukernel_##taps##cr##c__##isa
/* The entry points of a depthwise kernel file, from its
 *   static void dwconv(const size_t KS, enum gemmi8_qoutput out, <the kernel's arguments>)
 * (KS 9, 25 or 0 for any count): one out-of-line body per tap count, the output kind
 * its argument, and the nine kernels of the list (3x3, 5x5, any count; s32,
 * fixedpoint, fp32) calling them. */
#define GEMMI8_DWCONV_BODY_(name, KS)                                                        \
  static __attribute__((noinline)) void name(                                                \
      enum gemmi8_qoutput out, size_t channels, size_t pixels, size_t ks,                    \
      const void* const* input, const void* w, void* output, size_t output_stride,           \
      size_t input_offset, const void* zero, const struct gemmi8_dwparams* params)           \
  {                                                                                          \
    dwconv(KS, out, channels, pixels, ks, input, w, output, output_stride, input_offset,     \
           zero, params);                                                                    \
  }
#define GEMMI8_DWCONV_ENTRY_(out, taps, cr, isa, body)                                       \
  void GEMMI8_DWUKERNEL_NAME(out, taps, cr, isa)(                                            \
      size_t channels, size_t pixels, size_t ks, const void* const* input, const void* w,    \
      void* output, size_t output_stride, size_t input_offset, const void* zero,             \
      const struct gemmi8_dwparams* params)                                                  \
  {                                                                                          \
    body(gemmi8_qoutput_##out, channels, pixels, ks, input, w, output, output_stride,        \
         input_offset, zero, params);                                                        \
  }
#define GEMMI8_DWCONV_ENTRIES(cr, isa)                                                       \
  GEMMI8_DWCONV_BODY_(dwconv_9, 9)                                                           \
  GEMMI8_DWCONV_BODY_(dwconv_25, 25)                                                         \
  GEMMI8_DWCONV_BODY_(dwconv_any, 0)                                                         \
  GEMMI8_DWCONV_ENTRY_(s32, 9, cr, isa, dwconv_9)                                            \
  GEMMI8_DWCONV_ENTRY_(fixedpoint, 9, cr, isa, dwconv_9)                                     \
  GEMMI8_DWCONV_ENTRY_(fp32, 9, cr, isa, dwconv_9)                                           \
  GEMMI8_DWCONV_ENTRY_(s32, 25, cr, isa, dwconv_25)                                          \
  GEMMI8_DWCONV_ENTRY_(fixedpoint, 25, cr, isa, dwconv_25)                                   \
  GEMMI8_DWCONV_ENTRY_(fp32, 25, cr, isa, dwconv_25)                                         \
  GEMMI8_DWCONV_ENTRY_(s32, 0, cr, isa, dwconv_any)                                          \
  GEMMI8_DWCONV_ENTRY_(fixedpoint, 0, cr, isa, dwconv_any)                                   \
  GEMMI8_DWCONV_ENTRY_(fp32, 0, cr, isa, dwconv_any)
#define GEMMI8_BTILE_1(mr, nr) mr##x##nr
#define GEMMI8_BTILE_2(mr, nr) mr##x##nr##c2
#define GEMMI8_BTILE_4(mr, nr) mr##x##nr##c4
#define GEMMI8_BUKERNEL_NAME(kind, out, mr, nr, kr, isa) \
  GEMMI8_BUKERNEL_NAME_(kind, out, GEMMI8_BTILE_##kr(mr, nr), isa)
#define GEMMI8_BUKERNEL_NAME_(kind, out, tile, isa) GEMMI8_BUKERNEL_NAME__(kind, out, tile, isa)
#define GEMMI8_BUKERNEL_NAME__(kind, out, tile, isa) \
  gemmi8_bin_##kind##_##out##_ukernel_##tile##__##isa

#define GEMMI8_QSET(set, type, ...)
#define GEMMI8_QEND(set, type)
#define GEMMI8_QUKERNEL(set, type, kind, out, mr, nr, kr, isa, symbol, file) \
  GEMMI8_IF_BUILT(set, type, GEMMI8_DECLARE_Q_##kind(symbol))
#define GEMMI8_QHELPER(set, type, role, symbol, file) \
  GEMMI8_IF_BUILT(set, type, GEMMI8_DECLARE_Q_##role(symbol))
#define GEMMI8_BSET(set, ...)
#define GEMMI8_BEND(set)
#define GEMMI8_BUKERNEL(set, kind, out, mr, nr, kr, isa, symbol, file) \
  GEMMI8_IF_BUILT(set, bin, GEMMI8_DECLARE_B_##kind(symbol))
#define GEMMI8_BHELPER(set, role, symbol, file) \
  GEMMI8_IF_BUILT(set, bin, GEMMI8_DECLARE_B_##role(symbol))
#define GEMMI8_DWSET(set, ...)
#define GEMMI8_DWEND(set)
#define GEMMI8_DWUKERNEL(set, taps, out, cr, isa, symbol, file) \
  GEMMI8_IF_BUILT(set, dw, GEMMI8_DECLARE_DWCONV_UKERNEL(symbol))
#define GEMMI8_DWHELPER(set, role, symbol, file) \
  GEMMI8_IF_BUILT(set, dw, GEMMI8_DECLARE_DW_##role(symbol))
#define GEMMI8_Q4SET(set, ...)
#define GEMMI8_Q4END(set)
#define GEMMI8_Q4UKERNEL(set, mr, nr, isa, symbol, file) \
  GEMMI8_IF_BUILT(set, q4, GEMMI8_DECLARE_Q4GEMM_UKERNEL(symbol))
#include "qu8.inc"
#include "qs8.inc"
#include "bin.inc"
#include "dw.inc"
#include "q4.inc"
#undef GEMMI8_Q4SET
#undef GEMMI8_Q4END
#undef GEMMI8_Q4UKERNEL
#undef GEMMI8_DWSET
#undef GEMMI8_DWEND
#undef GEMMI8_DWUKERNEL
#undef GEMMI8_DWHELPER
#undef GEMMI8_QSET
#undef GEMMI8_QEND
#undef GEMMI8_QUKERNEL
#undef GEMMI8_QHELPER
#undef GEMMI8_BSET
#undef GEMMI8_BEND
#undef GEMMI8_BUKERNEL
#undef GEMMI8_BHELPER

#endif
