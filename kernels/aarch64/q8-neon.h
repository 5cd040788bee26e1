/*
 * Helpers shared by the AArch64 qu8 / qs8 GEMM kernels (baseline ARMv8 NEON only, so
 * that the -neon, -neondot and -i8mm files can all include it): row pointers,
 * in-bounds depth tails of a, the packed block's zero-point terms, and the three
 * outputs written from int32x4 accumulators vacc[i][j] (row i, columns 4j..4j+3).
 *
 * The requantization reproduces kernels/generic bit for bit:
 *   fixed point  x = SQSHL(acc, max(shift, 0))          saturating left shift
 *                y = SQRDMULH(x, multiplier)             = gemmlowp's SRDHM exactly
 *                r = SRSHL(y + fixup, min(shift, 0))     RoundingDivideByPOT
 *     SRSHL rounds ties up; fixup = -1 for negative y when shifting right (gemmlowp's
 *     NEON fixup, saturating add) makes the ties of negative values round away from 0.
 *     Then + zero point (saturating), narrowed with saturation, clamped to [min, max].
 *   fp32         x = (float) acc * scale (FMUL, one rounding), clamped to
 *                [min - zp, max - zp], FCVTNS (nearest, ties to even), + zero point.
 * Per-channel values are read for the tile's nr channels only (stride 1); per-tensor
 * values (stride 0) are one value, broadcast.
 */
#ifndef GEMMI8_AARCH64_Q8_NEON_H
#define GEMMI8_AARCH64_Q8_NEON_H

#include <arm_neon.h>
#include <string.h>

#include "requant.h"
#include "mca.h"



/* The includer defines GEMMI8_MCA_NAME(type, out) to name its regions, e.g.
 *   #define GEMMI8_MCA_NAME(type, out) \
 *     "gemmi8_" type "_gemm_" out "_ukernel_4x16c4__neondot"
 * A tile's loop of each type is compiled once, in its body (below), and its region
 * carries the name of that type's int32-output kernel, GEMMI8_MCA_NAME("qu8", "s32")
 * or GEMMI8_MCA_NAME("qs8", "s32"). */

/* One body per tile: the fixedpoint and fp32 kernels of a tile, qu8 and qs8, are thin
 * entries into one static function that picks the type's depth loop (the multiply
 * instructions and the qu8 row sums differ: compiled once per type) and, after it,
 * the output stage (one for both types). The output kind and the type go in the bits
 * of mr from GEMMI8_OUT_SHIFT up (GEMMI8_OUT_FLAG, GEMMI8_TILE_SIGNED:
 * src/microkernel.h), so that an entry is an ADD and a tail call, every other argument
 * staying in its register or stack slot; a build with one of the two types knows the
 * type (GEMMI8_TILE_IS_SIGNED) and holds its loop alone. The s32 kernel, which the
 * blocked drivers and the ten shapes of bench/MCA.md run with the least work after
 * the loop, inlines the same body with its type and output fixed (no dispatch, its
 * own register allocation).
 * A template defines body##_impl(out, is_signed, mr, ...) (always inline) and, with
 * GEMMI8_A64_QGEMM_BODY / GEMMI8_A64_QIGEMM_BODY, the shared body. (The binary
 * kernels pass their output kind alone, from GEMMI8_A64_OUT_SHIFT up.) */
#define GEMMI8_A64_OUT_SHIFT 8
#define GEMMI8_A64_NOINLINE __attribute__((noinline, noclone))
#define GEMMI8_A64_BODY_OUT(mr_out) ((int) ((mr_out) >> GEMMI8_A64_OUT_SHIFT))
#define GEMMI8_A64_BODY_MR(mr_out) ((mr_out) & (((size_t) 1 << GEMMI8_A64_OUT_SHIFT) - 1))
/* mr plus the flags (mr < 2^GEMMI8_OUT_SHIFT, so + is |): an ADD takes any of the
 * flag values as one immediate (12 bits shifted by 12), where an ORR takes only runs
 * of ones (qs8 fixedpoint, 0x50000, would cost a MOV). */
#define GEMMI8_A64_ENTRY_MR(mr, OUT, SIGNED)                                             \
  ((mr) + (GEMMI8_OUT_FLAG(gemmi8_qoutput_##OUT) | ((SIGNED) ? GEMMI8_TILE_SIGNED : 0)))
/* The parameter lists of the inline bodies. */
#define GEMMI8_A64_QGEMM_IMPL_ARGS                                                       \
  const int out, const int is_signed, size_t mr, size_t nr, size_t k, const void* a,     \
      size_t a_stride, const void* w, void* c, size_t c_stride,                          \
      const struct gemmi8_qparams* params
#define GEMMI8_A64_QIGEMM_IMPL_ARGS                                                      \
  const int out, const int is_signed, size_t mr, size_t nr, size_t kc, size_t ks,        \
      const void* const* a, const void* w, void* c, size_t c_stride, size_t a_offset,    \
      const void* zero, const struct gemmi8_qparams* params
/* The shared bodies of the fixedpoint and fp32 kernels (_ALL: also of the s32
 * kernels' narrow blocks, see GEMMI8_A64_QGEMM_S32_SPLIT). */
#define GEMMI8_A64_QGEMM_BODY(body) GEMMI8_A64_QGEMM_BODY_OUTS(body, 1)
#define GEMMI8_A64_QGEMM_BODY_ALL(body) GEMMI8_A64_QGEMM_BODY_OUTS(body, 0)
#define GEMMI8_A64_QIGEMM_BODY(body) GEMMI8_A64_QIGEMM_BODY_OUTS(body, 1)
#define GEMMI8_A64_QIGEMM_BODY_ALL(body) GEMMI8_A64_QIGEMM_BODY_OUTS(body, 0)
#define GEMMI8_A64_QGEMM_BODY_OUTS(body, NO_S32)                                            \
  static GEMMI8_A64_NOINLINE void body(size_t mr_flags, size_t nr, size_t k, const void* a, \
                                       size_t a_stride, const void* w, void* c,             \
                                       size_t c_stride,                                     \
                                       const struct gemmi8_qparams* params)                 \
  {                                                                                         \
    const int out = (int) GEMMI8_OUT_KIND(mr_flags);                                        \
    if (NO_S32 && out == gemmi8_qoutput_s32) __builtin_unreachable();                       \
    body##_impl(out, GEMMI8_TILE_IS_SIGNED(mr_flags), GEMMI8_OUT_MR(mr_flags), nr, k, a,    \
                a_stride, w, c, c_stride, params);                                          \
  }
#define GEMMI8_A64_QIGEMM_BODY_OUTS(body, NO_S32)                                         \
  static GEMMI8_A64_NOINLINE void body(size_t mr_flags, size_t nr, size_t kc, size_t ks,  \
                                       const void* const* a, const void* w, void* c,      \
                                       size_t c_stride, size_t a_offset,                  \
                                       const void* zero,                                  \
                                       const struct gemmi8_qparams* params)               \
  {                                                                                       \
    const int out = (int) GEMMI8_OUT_KIND(mr_flags);                                      \
    if (NO_S32 && out == gemmi8_qoutput_s32) __builtin_unreachable();                     \
    body##_impl(out, GEMMI8_TILE_IS_SIGNED(mr_flags), GEMMI8_OUT_MR(mr_flags), nr, kc,    \
                ks, a, w, c, c_stride, a_offset, zero, params);                           \
  }
/* The s32 kernels' body, body##_s32(is_signed, ...): body##_impl with the output
 * fixed, inlined into each type's entry with its type; _SPLIT (tiles with
 * narrow-block paths): full-width blocks run CORE4 (the 16-column core of is_signed,
 * filling int32x4_t vacc[MR][4]) inline and narrow blocks (nr < 16, the last of a row
 * when N is not a multiple of 16) go to the shared body, so that an s32 kernel holds
 * one copy of its type's loop and one output stage. */
#define GEMMI8_A64_QGEMM_S32(body)                                                          \
  static GEMMI8_ALWAYS_INLINE void body##_s32(const int is_signed, size_t mr, size_t nr,    \
                                             size_t k, const void* a, size_t a_stride,      \
                                             const void* w, void* c, size_t c_stride,       \
                                             const struct gemmi8_qparams* params)           \
  {                                                                                         \
    body##_impl(gemmi8_qoutput_s32, is_signed, mr, nr, k, a, a_stride, w, c, c_stride,      \
                params);                                                                    \
  }
#define GEMMI8_A64_QGEMM_S32_SPLIT(body, MR, CORE4)                                         \
  static GEMMI8_ALWAYS_INLINE void body##_s32(const int is_signed, size_t mr, size_t nr,    \
                                             size_t k, const void* a, size_t a_stride,      \
                                             const void* w, void* c, size_t c_stride,       \
                                             const struct gemmi8_qparams* params)           \
  {                                                                                         \
    if (nr < 16) {                                                                          \
      body(GEMMI8_A64_ENTRY_MR(mr, s32, is_signed), nr, k, a, a_stride, w, c, c_stride,     \
           params);                                                                         \
      return;                                                                               \
    }                                                                                       \
    int32x4_t vacc[MR][4];                                                                  \
    CORE4;                                                                                  \
    gemmi8_a64_store(gemmi8_qoutput_s32, MR, 4, 16, is_signed, mr, 16, c, c_stride, params, \
                     vacc);                                                                 \
  }
#define GEMMI8_A64_QIGEMM_S32(body)                                                      \
  static GEMMI8_ALWAYS_INLINE void body##_s32(                                           \
      const int is_signed, size_t mr, size_t nr, size_t kc, size_t ks,                   \
      const void* const* a, const void* w, void* c, size_t c_stride, size_t a_offset,    \
      const void* zero, const struct gemmi8_qparams* params)                             \
  {                                                                                      \
    body##_impl(gemmi8_qoutput_s32, is_signed, mr, nr, kc, ks, a, w, c, c_stride,        \
                a_offset, zero, params);                                                 \
  }
#define GEMMI8_A64_QIGEMM_S32_SPLIT(body, MR, CORE4)                                      \
  static GEMMI8_ALWAYS_INLINE void body##_s32(                                            \
      const int is_signed, size_t mr, size_t nr, size_t kc, size_t ks,                    \
      const void* const* a, const void* w, void* c, size_t c_stride, size_t a_offset,     \
      const void* zero, const struct gemmi8_qparams* params)                              \
  {                                                                                       \
    if (nr < 16) {                                                                        \
      body(GEMMI8_A64_ENTRY_MR(mr, s32, is_signed), nr, kc, ks, a, w, c, c_stride,        \
           a_offset, zero, params);                                                       \
      return;                                                                             \
    }                                                                                     \
    int32x4_t vacc[MR][4];                                                                \
    CORE4;                                                                                \
    gemmi8_a64_store(gemmi8_qoutput_s32, MR, 4, 16, is_signed, mr, 16, c, c_stride,       \
                     params, vacc);                                                       \
  }

/* A GEMM kernel (gemmi8_qgemm_ukernel_fn) and an igemm kernel
 * (gemmi8_qigemm_ukernel_fn) of output OUT (s32, fixedpoint, fp32) on body; SIGNED is
 * 1 for qs8, 0 for qu8. */
#define GEMMI8_A64_QGEMM_ENTRY(fn, body, OUT, SIGNED) \
  GEMMI8_A64_QGEMM_ENTRY_##OUT(fn, body, OUT, SIGNED)
#define GEMMI8_A64_QGEMM_ENTRY_s32(fn, body, OUT, SIGNED)                                \
  void fn(size_t mr, size_t nr, size_t k, const void* a, size_t a_stride, const void* w, \
          void* c, size_t c_stride, const struct gemmi8_qparams* params)                 \
  {                                                                                      \
    body##_s32(SIGNED, mr, nr, k, a, a_stride, w, c, c_stride, params);                  \
  }
#define GEMMI8_A64_QGEMM_ENTRY_fixedpoint GEMMI8_A64_QGEMM_ENTRY_SHARED
#define GEMMI8_A64_QGEMM_ENTRY_fp32 GEMMI8_A64_QGEMM_ENTRY_SHARED
#define GEMMI8_A64_QGEMM_ENTRY_SHARED(fn, body, OUT, SIGNED)                                 \
  void fn(size_t mr, size_t nr, size_t k, const void* a, size_t a_stride, const void* w,     \
          void* c, size_t c_stride, const struct gemmi8_qparams* params)                     \
  {                                                                                          \
    body(GEMMI8_A64_ENTRY_MR(mr, OUT, SIGNED), nr, k, a, a_stride, w, c, c_stride, params); \
  }
#define GEMMI8_A64_QIGEMM_ENTRY(fn, body, OUT, SIGNED) \
  GEMMI8_A64_QIGEMM_ENTRY_##OUT(fn, body, OUT, SIGNED)
#define GEMMI8_A64_QIGEMM_ENTRY_s32(fn, body, OUT, SIGNED)                                 \
  void fn(size_t mr, size_t nr, size_t kc, size_t ks, const void* const* a, const void* w, \
          void* c, size_t c_stride, size_t a_offset, const void* zero,                     \
          const struct gemmi8_qparams* params)                                             \
  {                                                                                        \
    body##_s32(SIGNED, mr, nr, kc, ks, a, w, c, c_stride, a_offset, zero, params);         \
  }
#define GEMMI8_A64_QIGEMM_ENTRY_fixedpoint GEMMI8_A64_QIGEMM_ENTRY_SHARED
#define GEMMI8_A64_QIGEMM_ENTRY_fp32 GEMMI8_A64_QIGEMM_ENTRY_SHARED
#define GEMMI8_A64_QIGEMM_ENTRY_SHARED(fn, body, OUT, SIGNED)                              \
  void fn(size_t mr, size_t nr, size_t kc, size_t ks, const void* const* a, const void* w, \
          void* c, size_t c_stride, size_t a_offset, const void* zero,                     \
          const struct gemmi8_qparams* params)                                             \
  {                                                                                        \
    body(GEMMI8_A64_ENTRY_MR(mr, OUT, SIGNED), nr, kc, ks, a, w, c, c_stride, a_offset,    \
         zero, params);                                                                    \
  }
/* A type's three kernels of a tile (ENTRY: GEMMI8_A64_QGEMM_ENTRY or
 * GEMMI8_A64_QIGEMM_ENTRY; SIGNED 1 for qs8, 0 for qu8). */
#define GEMMI8_A64_QKERNELS(ENTRY, body, SIGNED, fn_s32, fn_fixedpoint, fn_fp32) \
  ENTRY(fn_s32, body, s32, SIGNED)                                              \
  ENTRY(fn_fixedpoint, body, fixedpoint, SIGNED)                                \
  ENTRY(fn_fp32, body, fp32, SIGNED)

/* Row pointers: rows past mr alias row mr - 1 (loads stay in bounds). */
static GEMMI8_ALWAYS_INLINE void gemmi8_a64_rows(const size_t MR, size_t mr, const void* a,
                                                 size_t a_stride, const uint8_t** ap)
{
  ap[0] = (const uint8_t*) a;
#pragma GCC unroll 16
  for (size_t i = 1; i < MR; i++) ap[i] = i < mr ? ap[i - 1] + a_stride : ap[i - 1];
}

/* Bytes p[0..n) (1 <= n <= 15) in the low lanes, zeros above; never reads outside
 * them. When the row holds at least 16 bytes up to p + n (full16): one load of the 16
 * bytes ending at p + n and a table lookup that moves them down. Otherwise 8-, 4-, 2-
 * and 1-byte scalar loads assembled in two 64-bit halves (little-endian). */
static GEMMI8_ALWAYS_INLINE uint8x16_t gemmi8_a64_load_tail(const uint8_t* p, size_t n,
                                                            int full16)
{
  if (full16) {
    static const uint8_t iota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    /* lane t takes byte 16 - n + t of the load: the tail for t < n, and an index
     * >= 16 (zero) for t >= n */
    const uint8x16_t vidx = vaddq_u8(vld1q_u8(iota), vdupq_n_u8((uint8_t) (16 - n)));
    return vqtbl1q_u8(vld1q_u8(p + n - 16), vidx);
  }
  uint64_t lo = 0, part = 0;
  unsigned shift = 0;
  if (n & 8) {
    memcpy(&lo, p, 8);
    p += 8;
  }
  if (n & 4) {
    uint32_t v;
    memcpy(&v, p, 4);
    part = v;
    shift = 32;
    p += 4;
  }
  if (n & 2) {
    uint16_t v;
    memcpy(&v, p, 2);
    part |= (uint64_t) v << shift;
    shift += 16;
    p += 2;
  }
  if (n & 1) part |= (uint64_t) *p << shift;
  const uint64_t hi = (n & 8) ? part : 0;
  lo = (n & 8) ? lo : part;
  return vreinterpretq_u8_u64(vcombine_u64(vcreate_u64(lo), vcreate_u64(hi)));
}

/* acc += coef[column] * rowsum(a[row]) for the qu8 layouts (coef = -b_zp), mod 2^32.
 * The driver passes no row sums (NULL) when every coef is 0 (b_zp = 0). */
static GEMMI8_ALWAYS_INLINE void gemmi8_a64_add_row_sums(const size_t MR, const size_t NJ,
                                                         size_t mr, const int32_t* coef,
                                                         const int32_t* row_sum,
                                                         int32x4_t vacc[][4])
{
  if (row_sum == NULL) return;
#pragma GCC unroll 4
  for (size_t j = 0; j < NJ; j++) {
    const int32x4_t vcoef = vld1q_s32(coef + 4 * j);
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      vacc[i][j] = vmlaq_n_s32(vacc[i][j], vcoef, row_sum[i < mr ? i : mr - 1]);
    }
  }
}

/* NJ vectors of per-channel 32-bit values (int32 or float bits) for nr channels:
 * stride 0 is one value for all; stride 1 reads p[0..nr) only (zeros above: a narrow
 * block's values go through a zeroed copy). */
static GEMMI8_ALWAYS_INLINE void gemmi8_a64_load_channels(const size_t NJ, const void* p,
                                                          size_t stride, size_t nr,
                                                          int32x4_t* v)
{
  const int32_t* q = (const int32_t*) p;
  if (stride == 0) {
    const int32x4_t vone = vld1q_dup_s32(q);
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) v[j] = vone;
    return;
  }
  if (NJ == 1 && nr < 4) {
    int32x4_t v0 = vdupq_n_s32(0);
    v0 = vld1q_lane_s32(q, v0, 0);
    if (nr > 1) v0 = vld1q_lane_s32(q + 1, v0, 1);
    if (nr > 2) v0 = vld1q_lane_s32(q + 2, v0, 2);
    v[0] = v0;
    return;
  }
  int32_t part[16] = {0};
  if (nr < 4 * NJ) {
#pragma GCC unroll 1
    for (size_t j = 0; j < nr; j++) part[j] = q[j];
    q = part;
  }
#pragma GCC unroll 4
  for (size_t j = 0; j < NJ; j++) v[j] = vld1q_s32(q + 4 * j);
}

/* The largest tile of the output stages (rows x 16 columns). */
#define GEMMI8_A64_MAX_MR 6

/* n (< 16) 32-bit values from src to dst: 8, 4, 2, 1 at a time (NR: the tile width,
 * n < NR). */
static GEMMI8_ALWAYS_INLINE void gemmi8_a64_copy_part32(int32_t* dst, const int32_t* src,
                                                        size_t n, const size_t NR)
{
  if (NR > 8 && (n & 8)) {
    vst1q_s32(dst, vld1q_s32(src));
    vst1q_s32(dst + 4, vld1q_s32(src + 4));
    dst += 8;
    src += 8;
  }
  if (NR > 4 && (n & 4)) {
    vst1q_s32(dst, vld1q_s32(src));
    dst += 4;
    src += 4;
  }
  if (n & 2) {
    vst1_s32(dst, vld1_s32(src));
    dst += 2;
    src += 2;
  }
  if (n & 1) *dst = *src;
}

/* int32 output: nr columns of each of the mr rows. A narrow block (nr < 4 * NJ, the
 * last of a row when N is not a multiple of the tile width) goes through a buffer and
 * one copy loop over the rows. (No early exit from the unrolled loops: GCC would keep
 * vacc in memory.) */
static GEMMI8_ALWAYS_INLINE void gemmi8_a64_store_s32(const size_t MR, const size_t NJ,
                                                      size_t mr, size_t nr, void* c,
                                                      size_t c_stride, int32x4_t vacc[][4])
{
  const int full = nr >= 4 * NJ;
  if (NJ == 1) {
    /* 4 columns: 2/1 at the end of each row, no buffer */
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; i++) {
      if (i < mr) {
        int32_t* ci = (int32_t*) ((uint8_t*) c + i * c_stride);
        if (full) {
          vst1q_s32(ci, vacc[i][0]);
        } else {
          int32_t lane[4];
          vst1q_s32(lane, vacc[i][0]);
          gemmi8_a64_copy_part32(ci, lane, nr, 4);
        }
      }
    }
    return;
  }
  int32_t part[GEMMI8_A64_MAX_MR * 16];
#pragma GCC unroll 16
  for (size_t i = 0; i < MR; i++) {
    if (i < mr) {
      int32_t* ci = full ? (int32_t*) ((uint8_t*) c + i * c_stride) : part + 16 * i;
#pragma GCC unroll 4
      for (size_t j = 0; j < NJ; j++) vst1q_s32(ci + 4 * j, vacc[i][j]);
    }
  }
  if (!full) {
#pragma GCC unroll 1
    for (size_t i = 0; i < mr; i++) {
      gemmi8_a64_copy_part32((int32_t*) ((uint8_t*) c + i * c_stride), part + 16 * i, nr,
                             4 * NJ);
    }
  }
}

/* The first n (< NR) of the bytes v: 8/4/2/1 at a time. */
static GEMMI8_ALWAYS_INLINE void gemmi8_a64_store_part8(uint8_t* c, uint8x16_t v, size_t n,
                                                        const size_t NR)
{
  uint8x8_t vlo = vget_low_u8(v);
  if (NR > 8 && (n & 8)) {
    vst1_u8(c, vlo);
    c += 8;
    vlo = vget_high_u8(v);
  }
  if (NR > 4 && (n & 4)) {
    vst1_lane_u32((uint32_t*) (void*) c, vreinterpret_u32_u8(vlo), 0);
    c += 4;
    vlo = vext_u8(vlo, vlo, 4);
  }
  if (n & 2) {
    vst1_lane_u16((uint16_t*) (void*) c, vreinterpret_u16_u8(vlo), 0);
    c += 2;
    vlo = vext_u8(vlo, vlo, 2);
  }
  if (n & 1) vst1_lane_u8(c, vlo, 0);
}

/* 8-bit row i (< mr) of NR bytes v: stored when the block is full, else kept in part
 * for gemmi8_a64_store_parts. */
static GEMMI8_ALWAYS_INLINE void gemmi8_a64_store_row8(uint8_t* ci, uint8_t* part, int full,
                                                       uint8x16_t v, const size_t NR)
{
  uint8_t* dst = full ? ci : part;
  if (NR == 16) {
    vst1q_u8(dst, v);
  } else if (NR == 8) {
    vst1_u8(dst, vget_low_u8(v));
  } else {
    vst1q_lane_u32((uint32_t*) (void*) dst, vreinterpretq_u32_u8(v), 0);
  }
}

/* The first nr bytes of the rows 0..mr-1 kept in part (16 bytes a row) to c. */
static GEMMI8_ALWAYS_INLINE void gemmi8_a64_store_parts8(size_t mr, size_t nr, void* c,
                                                         size_t c_stride, const uint8_t* part,
                                                         const size_t NR)
{
#pragma GCC unroll 1
  for (size_t i = 0; i < mr; i++) {
    gemmi8_a64_store_part8((uint8_t*) c + i * c_stride, vld1q_u8(part + 16 * i), nr, NR);
  }
}

/* NJ int32x4 (already + zero point) to 4 * NJ bytes, saturating, in the low lanes. */
static GEMMI8_ALWAYS_INLINE uint8x16_t gemmi8_a64_narrow(const size_t NJ, const int is_signed,
                                                         const int32x4_t* v)
{
  int16x8_t v01, v23;
  if (NJ == 1) {
    v01 = vcombine_s16(vqmovn_s32(v[0]), vqmovn_s32(v[0]));
  } else {
    v01 = vcombine_s16(vqmovn_s32(v[0]), vqmovn_s32(v[1]));
  }
  if (NJ == 3) {
    v23 = vcombine_s16(vqmovn_s32(v[2]), vqmovn_s32(v[2]));
  } else if (NJ == 4) {
    v23 = vcombine_s16(vqmovn_s32(v[2]), vqmovn_s32(v[3]));
  } else {
    v23 = v01;
  }
  if (is_signed) return vreinterpretq_u8_s8(vcombine_s8(vqmovn_s16(v01), vqmovn_s16(v23)));
  return vcombine_u8(vqmovun_s16(v01), vqmovun_s16(v23));
}

static GEMMI8_ALWAYS_INLINE uint8x16_t gemmi8_a64_clamp(const int is_signed, uint8x16_t v,
                                                        int32_t min, int32_t max)
{
  if (is_signed) {
    const int8x16_t s = vminq_s8(vmaxq_s8(vreinterpretq_s8_u8(v), vdupq_n_s8((int8_t) min)),
                                 vdupq_n_s8((int8_t) max));
    return vreinterpretq_u8_s8(s);
  }
  return vminq_u8(vmaxq_u8(v, vdupq_n_u8((uint8_t) min)), vdupq_n_u8((uint8_t) max));
}

/* Fixed-point (TFLite / gemmlowp) requantization and 8-bit stores. */
static GEMMI8_ALWAYS_INLINE void gemmi8_a64_store_fixedpoint(const size_t MR, const size_t NJ,
                                                        const size_t NR, const int is_signed,
                                                        size_t mr, size_t nr, void* c,
                                                        size_t c_stride,
                                                        const struct gemmi8_qparams* p,
                                                        int32x4_t vacc[][4])
{
  const int full = nr >= NR;
  uint8_t part[GEMMI8_A64_MAX_MR * 16];
  int32x4_t vmul[4], vshift[4], vleft[4], vright[4];
  gemmi8_a64_load_channels(NJ, p->multiplier, p->channel_stride, nr, vmul);
  gemmi8_a64_load_channels(NJ, p->shift, p->channel_stride, nr, vshift);
  const int32x4_t vzero = vdupq_n_s32(0);
#pragma GCC unroll 4
  for (size_t j = 0; j < NJ; j++) {
    vleft[j] = vmaxq_s32(vshift[j], vzero);
    vright[j] = vminq_s32(vshift[j], vzero);
  }
  const int32x4_t vzp = vdupq_n_s32(p->zero_point);
#pragma GCC unroll 16
  for (size_t i = 0; i < MR; i++) {
    if (i >= mr) continue;
    int32x4_t vout[4];
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) {
      int32x4_t x = vqshlq_s32(vacc[i][j], vleft[j]);
      x = vqrdmulhq_s32(x, vmul[j]);
      /* -1 where x < 0 and the shift is to the right: ties away from zero */
      const int32x4_t vfixup = vshrq_n_s32(vandq_s32(x, vright[j]), 31);
      x = vrshlq_s32(vqaddq_s32(x, vfixup), vright[j]);
      vout[j] = vaddq_s32(x, vzp); /* wraps, as gemmlowp's addition */
    }
    const uint8x16_t v = gemmi8_a64_clamp(is_signed, gemmi8_a64_narrow(NJ, is_signed, vout),
                                          p->min, p->max);
    if (NR == 4 && !full) {
      gemmi8_a64_store_part8((uint8_t*) c + i * c_stride, v, nr, NR);
    } else {
      gemmi8_a64_store_row8((uint8_t*) c + i * c_stride, part + 16 * i, full, v, NR);
    }
  }
  if (NR != 4 && !full) gemmi8_a64_store_parts8(mr, nr, c, c_stride, part, NR);
}

/* fp32 requantization and 8-bit stores. */
static GEMMI8_ALWAYS_INLINE void gemmi8_a64_store_fp32(const size_t MR, const size_t NJ,
                                                       const size_t NR, const int is_signed,
                                                       size_t mr, size_t nr, void* c,
                                                       size_t c_stride,
                                                       const struct gemmi8_qparams* p,
                                                       int32x4_t vacc[][4])
{
  const int full = nr >= NR;
  uint8_t part[GEMMI8_A64_MAX_MR * 16];
  int32x4_t vscale_bits[4];
  gemmi8_a64_load_channels(NJ, p->scale, p->channel_stride, nr, vscale_bits);
  const float32x4_t vlo = vdupq_n_f32((float) (p->min - p->zero_point));
  const float32x4_t vhi = vdupq_n_f32((float) (p->max - p->zero_point));
  const int32x4_t vzp = vdupq_n_s32(p->zero_point);
#pragma GCC unroll 16
  for (size_t i = 0; i < MR; i++) {
    if (i >= mr) continue;
    int32x4_t vout[4];
#pragma GCC unroll 4
    for (size_t j = 0; j < NJ; j++) {
      float32x4_t x =
          vmulq_f32(vcvtq_f32_s32(vacc[i][j]), vreinterpretq_f32_s32(vscale_bits[j]));
      x = vminq_f32(vmaxq_f32(x, vlo), vhi);
      vout[j] = vaddq_s32(vcvtnq_s32_f32(x), vzp);
    }
    const uint8x16_t v = gemmi8_a64_narrow(NJ, is_signed, vout);
    if (NR == 4 && !full) {
      gemmi8_a64_store_part8((uint8_t*) c + i * c_stride, v, nr, NR);
    } else {
      gemmi8_a64_store_row8((uint8_t*) c + i * c_stride, part + 16 * i, full, v, NR);
    }
  }
  if (NR != 4 && !full) gemmi8_a64_store_parts8(mr, nr, c, c_stride, part, NR);
}

/* Columns NJ..3 of the accumulators set to 0: a body stores every tile through the
 * 16-column output stage (columns past nr are computed, not stored). */
#define GEMMI8_A64_ZERO_COLUMNS(MR, NJ, vacc)                                            \
  do {                                                                                   \
    _Pragma("GCC unroll 16") for (size_t i_ = 0; i_ < (MR); i_++) {                      \
      _Pragma("GCC unroll 4") for (size_t j_ = (NJ); j_ < 4; j_++) {                     \
        (vacc)[i_][j_] = vdupq_n_s32(0);                                                 \
      }                                                                                  \
    }                                                                                    \
  } while (0)

/* The output stage of a kernel: OUT is a gemmi8_qoutput_* value. */
static GEMMI8_ALWAYS_INLINE void gemmi8_a64_store(const int OUT, const size_t MR, const size_t NJ,
                                                  const size_t NR, const int is_signed, size_t mr,
                                                  size_t nr, void* c, size_t c_stride,
                                                  const struct gemmi8_qparams* p,
                                                  int32x4_t vacc[][4])
{
  if (OUT == gemmi8_qoutput_s32) {
    gemmi8_a64_store_s32(MR, NJ, mr, nr, c, c_stride, vacc);
  } else if (OUT == gemmi8_qoutput_fixedpoint) {
    gemmi8_a64_store_fixedpoint(MR, NJ, NR, is_signed, mr, nr, c, c_stride, p, vacc);
  } else {
    gemmi8_a64_store_fp32(MR, NJ, NR, is_signed, mr, nr, c, c_stride, p, vacc);
  }
}

/* The bodies of a tile of 16 columns in groups of 4 whose cores, gemm
 *   core(MR, NJ, SIGNED, mr, k, a, a_stride, w, params, vacc)
 * and igemm
 *   icore(MR, NJ, SIGNED, mr, kc, ks, a, a_offset, zero, w, params, vacc)
 * fill NJ groups of int32x4_t vacc[MR][4] (the dot-product and i8mm templates). Both
 * types in one body: each type's core compiled once per group count, picked by
 * is_signed (a value in the shared body, a constant in the s32 kernels), and one
 * output stage after them. _NJ (KIND QGEMM or QIGEMM): a case per group count
 * (narrow blocks compute only their groups); _FULL (small-M tiles): the full width
 * only (columns past nr are neither loaded from the parameters nor stored), for a
 * quarter of the code. */
#define GEMMI8_A64_QGEMM_CORE(core, MR, NJ)                                              \
  if (is_signed) {                                                                       \
    core(MR, NJ, 1, mr, k, a, a_stride, w, params, vacc);                                \
  } else {                                                                               \
    core(MR, NJ, 0, mr, k, a, a_stride, w, params, vacc);                                \
  }
#define GEMMI8_A64_QIGEMM_CORE(icore, MR, NJ)                                            \
  if (is_signed) {                                                                       \
    icore(MR, NJ, 1, mr, kc, ks, a, a_offset, zero, w, params, vacc);                    \
  } else {                                                                               \
    icore(MR, NJ, 0, mr, kc, ks, a, a_offset, zero, w, params, vacc);                    \
  }
#define GEMMI8_A64_Q_CASES(CORE, core, MR)                                               \
  switch ((nr + 3) / 4) {                                                                \
    case 1: CORE(core, MR, 1) GEMMI8_A64_ZERO_COLUMNS(MR, 1, vacc); break;                \
    case 2: CORE(core, MR, 2) GEMMI8_A64_ZERO_COLUMNS(MR, 2, vacc); break;                \
    case 3: CORE(core, MR, 3) GEMMI8_A64_ZERO_COLUMNS(MR, 3, vacc); break;                \
    default: CORE(core, MR, 4) break;                                                    \
  }
#define GEMMI8_A64_Q_BODY_NJ(KIND, body, core, MR)                                       \
  static GEMMI8_ALWAYS_INLINE void body##_impl(GEMMI8_A64_##KIND##_IMPL_ARGS)            \
  {                                                                                      \
    int32x4_t vacc[MR][4];                                                               \
    GEMMI8_A64_Q_CASES(GEMMI8_A64_##KIND##_CORE, core, MR)                               \
    gemmi8_a64_store(out, MR, 4, 16, is_signed, mr, nr, c, c_stride, params, vacc);      \
  }                                                                                      \
  GEMMI8_A64_##KIND##_BODY_ALL(body)                                                     \
  GEMMI8_A64_##KIND##_S32_SPLIT(body, MR, GEMMI8_A64_##KIND##_CORE(core, MR, 4))
#define GEMMI8_A64_QGEMM_BODY_FULL(body, core, MR)                                       \
  static GEMMI8_ALWAYS_INLINE void body##_impl(GEMMI8_A64_QGEMM_IMPL_ARGS)               \
  {                                                                                      \
    int32x4_t vacc[MR][4];                                                               \
    GEMMI8_A64_QGEMM_CORE(core, MR, 4)                                                   \
    gemmi8_a64_store(out, MR, 4, 16, is_signed, mr, nr, c, c_stride, params, vacc);      \
  }                                                                                      \
  GEMMI8_A64_QGEMM_BODY(body)                                                            \
  GEMMI8_A64_QGEMM_S32(body)

#endif
