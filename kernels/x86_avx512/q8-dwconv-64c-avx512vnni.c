/*
 * Depthwise microkernels, AVX-512 VNNI, 64 channels a zmm of input bytes (what they
 * compute: src/microkernel.h).
 *
 * vpdpbusd adds the four products of each 32-bit lane: here the lane's four bytes are
 * four channels, and only one may count. So the weights are packed four times, vector
 * j keeping byte j of each lane (channel 4i + j in lane i) and zeros elsewhere, and
 * four accumulators vacc<j> take one vpdpbusd each per tap: 64 channels x 1 tap in
 * four instructions, with no shuffle of the input (it is read as it lies in memory,
 * xored with 0x80 for int8 input). So run the 5x5 kernels and those of any tap count:
 * a pass takes four output pixels (two when no tile has 32 channels or fewer) through
 * every channel tile, each tile in the layout its width calls for: a tile of more than
 * 32 channels two pixels at a time, sharing each weight vector; of 17 to 32 the four
 * pixels in the halves of two vectors (pixels 0 and 1, 2 and 3), each weight vector
 * loaded once for both; of 16 or fewer (8-bit outputs) the four in the 128-bit lanes of
 * one vector. A whole tile of 64 or 32 channels reads its taps with plain loads, any
 * other tail with masked loads (an ALU operation more): no byte past the call's
 * channels is read from a tap. A 3x3 layer of 16 channels has a loop of its own
 * (dw16_3x3).
 *
 * The 3x3 kernels take every other tile three taps of a channel to a lane (dw3x3_pass;
 * dw3x3_pass32 for 32 channels or fewer, two pixels a vector): four input pixels of a
 * tap row transposed by two levels of unpacks (8 a group of 64 channels) into four
 * vectors whose lane (L, i) of vector j holds channel 16 L + 4 j + i of the four
 * pixels. Where two output pixels overlap as stride 1 makes them, one group of taps 0,
 * 1, 2 of the first and tap 2 of the second serves both (weights w0 w1 w2 0 and 0 w0 w1
 * w2): per pixel and 64 channels 12 vpdpbusd and 12 unpacks against 36 vpdpbusd. Other
 * pixels (stride 2, a pass across a row's end) take a group of their own three taps.
 * That path's weights (a tile of 9 taps only: the grouped layout after the interleaved
 * one) and requantization constants (a second block) are in its order, in which the
 * packs put the bytes in channel order. Where the caller says how the pixels make rows
 * (params->row_pixels: stride 1, dilation 1), pairs of output rows go by tap columns
 * instead (dw3x3_columns, dw3x3_columns32): a group of the four input rows under a tap
 * column serves the pixel above (its rows 0..2) and the one below (rows 1..3), and
 * three output columns as the window slides: per two pixels one group, 8 unpacks,
 * against three. Their taps come by columns (params->columns: four pointers a column,
 * 32 bytes a pixel pair where the pair's 18 take 144; in a network, where the
 * pointers are out of the caches at each run, 112x112x32 took 105 us against 70 us
 * alone reading those, 71 us reading these). Where pixels follow one another in a
 * row as stride 2 makes them (pixel p + 1's tap column 0 is p's column 2, checked on
 * the pointers), a call goes by tap columns of three rows instead (dw3x3_stride2,
 * dw3x3_stride2_32): two groups a pixel against three.
 *
 * The 8-bit outputs are requantized in the accumulators' channel order, with the
 * tile's constants prepared in that order (gemmi8_dwprepare_64c4__avx512vnni: the
 * per-vector arithmetic of output-avx512.h's stages, the same bits), then narrowed
 * with saturating packs (vpackssdw, vpack[su]swb: lane L of the result holds byte 4k +
 * m = vacc<k> lane 4L + m, channel 16L + 4m + k), put in channel order with one
 * vpshufb and clamped as bytes: 7 instructions per 64 outputs where restoring the
 * order of the int32 lanes first took 8 vpermt2d and 4 two-uop vpmovdb (the grouped
 * order needs no vpshufb: oc->ordered). The int32 output restores
 * the order with vpermt2d (grouped: vshufi64x2, grouped_to_order) and stores through
 * output-avx512.h.
 *   fixed point: r = requantize(acc) + zero point (int32, wrapping as gemmlowp's
 *     addition), then the saturating packs and the clamp: clamp(r, min, max).
 *   fp32: x = min((float) acc * scale, max - zp) rounded to nearest even (an integer
 *     upper bound commutes with the rounding; x below the lower bound, or beyond int32
 *     (INT32_MIN from vcvtps2dq), saturates in the packs to a value the clamp takes to
 *     min), packed to int16 with saturation, + zero point with saturation, to bytes,
 *     clamped: the bytes of clamp(round(x), min - zp, max - zp) + zp. Where every
 *     scale of a tile is at most 0.5 in magnitude, x cannot pass int32 and the min is
 *     left out (the prepared block's DW_SMALL).
 *
 * Packed tile (gemmi8_dwpack_64c4__avx512vnni): int32 bias'[64] as four zmm in the
 * accumulators' order (vector j, lane i: channel 4i + j), then per tap four zmm of
 * weights as above: 256 + 256 * ks bytes; with 9 taps then DW_BYTES9 more: bias' in
 * the grouped order, per tap row the four vectors A (bytes w0 w1 w2 0 of each
 * channel's lane: taps 0, 1, 2 of the row) and the four B (0 w0 w1 w2), and per tap
 * column the four A (taps of rows 0, 1, 2 and a 0) and the four B (0 and rows 0..2).
 */
#include <string.h>

#include "output-avx512.h"

#define CR 64
/* the grouped 3x3 layouts a tile of 9 taps adds (kernels/dw.inc): bias', by tap rows,
 * by tap columns */
#define DW_BYTES9 (256 + 3 * 512 + 3 * 512)
/* output pixels of stride 2 taken through each tile before the next tile */
#define DW_STRIDE2_BLOCK 64

/* Bytes of a packed tile of ks taps (the list's tile: config.h, gemmi8_dwtile_bytes). */
static inline size_t tile_bytes(size_t ks) { return 256 + 256 * ks + (ks == 9 ? DW_BYTES9 : 0); }

/* Channel of lane l of vector j in the grouped order (the order of the 3x3 path's
 * accumulators, dw3x3_pass): 16 (l / 4) + 4 j + l % 4. */
static size_t grouped_channel(size_t j, size_t l) { return 16 * (l / 4) + 4 * j + l % 4; }

void gemmi8_dwpack_64c4__avx512vnni(size_t channels, size_t ks, const int8_t* w,
                                    const int32_t* bias, void* packed)
{
  const size_t bytes = tile_bytes(ks);
  uint8_t* tile = packed;
  for (size_t c0 = 0; c0 < channels; c0 += CR, tile += bytes) {
    memset(tile, 0, bytes);
    const size_t n = gemmi8_min(CR, channels - c0);
    for (size_t c = 0; c < n; c++) {
      const size_t i = c / 4, j = c % 4;
      memcpy(tile + j * 64 + i * 4, &bias[c0 + c], 4);
      for (size_t t = 0; t < ks; t++) {
        tile[256 + t * 256 + j * 64 + i * 4 + j] = (uint8_t) w[(c0 + c) * ks + t];
      }
    }
    if (ks != 9) continue;
    /* the grouped 3x3 layouts: bias', then per tap row the vectors A and B, then per
     * tap column the vectors A and B */
    uint8_t* g = tile + 256 + 256 * 9;
    for (size_t j = 0; j < 4; j++) {
      for (size_t l = 0; l < 16; l++) {
        const size_t c = grouped_channel(j, l);
        if (c >= n) continue;
        memcpy(g + j * 64 + l * 4, &bias[c0 + c], 4);
        for (size_t ky = 0; ky < 3; ky++) {
          for (size_t kx = 0; kx < 3; kx++) {
            const uint8_t v = (uint8_t) w[(c0 + c) * 9 + 3 * ky + kx];
            g[256 + ky * 512 + j * 64 + l * 4 + kx] = v;
            g[256 + ky * 512 + 256 + j * 64 + l * 4 + kx + 1] = v;
            /* by columns: bytes rows 0 1 2 (A) and 1 2 3 (B) of a group of four rows */
            g[256 + 1536 + kx * 512 + j * 64 + l * 4 + ky] = v;
            g[256 + 1536 + kx * 512 + 256 + j * 64 + l * 4 + ky + 1] = v;
          }
        }
      }
    }
  }
}

/* Prepared constants of a tile, in two blocks: the interleaved order of the
 * accumulators (a tile of 32 or fewer channels, two pixels a vector, has channels
 * 0..31's constants in both halves of each vector), then at DW_GROUPED_VECTORS the
 * grouped order of the 3x3 path. A block: fixed point, per vector j the
 * GEMMI8_FP_VECTORS of output-avx512.h then the left shifts max(shift, 0); fp32, the
 * four vectors of scales, then DW_SMALL: lane 0 is 1 if every scale of the block has a
 * magnitude of at most 0.5 (so no float product overflows int32: see requantize), else
 * 0. Lanes past nc hold channel 0's (computed, never stored). */
enum {
  DW_FIXEDPOINT_VECTORS = GEMMI8_FP_VECTORS + 1,
  DW_GROUPED_VECTORS = 4 * DW_FIXEDPOINT_VECTORS,
  DW_SMALL = 4
};
_Static_assert(DW_SMALL < DW_GROUPED_VECTORS, "the fp32 block's flag fits");
_Static_assert(2 * DW_GROUPED_VECTORS * 64 <= GEMMI8_DWPREPARED_BYTES, "prepared fits");

/* One block of prepared constants: lane l of vector j is channel at(j, l) (lanes past
 * nc: channel 0). */
static void prepare_block(enum gemmi8_qoutput out, const struct gemmi8_qparams* p, size_t nc,
                          size_t (*at)(size_t nc, size_t j, size_t l), __m512i* v)
{
  int32_t mult[CR], shift[CR];
  float scale[CR];
  const size_t cs = p->channel_stride;
  for (size_t k = 0; k < CR; k++) {
    size_t c = at(nc, k / 16, k % 16);
    if (c >= nc) c = 0;
    if (out == gemmi8_qoutput_fixedpoint) {
      mult[k] = p->multiplier[c * cs];
      shift[k] = p->shift[c * cs];
    } else {
      scale[k] = p->scale[c * cs];
    }
  }
  if (out == gemmi8_qoutput_fixedpoint) {
    struct gemmi8_qparams q;
    memset(&q, 0, sizeof(q));
    q.multiplier = mult;
    q.shift = shift;
    q.channel_stride = 1;
    for (size_t j = 0; j < 4; j++) {
      gemmi8_qgemm_prepare_group_avx512(&q, CR, j, v + DW_FIXEDPOINT_VECTORS * j);
      v[DW_FIXEDPOINT_VECTORS * j + GEMMI8_FP_VECTORS] =
          _mm512_max_epi32(_mm512_loadu_si512(shift + 16 * j), _mm512_setzero_si512());
    }
  } else {
    int small = 1;
    for (size_t k = 0; k < CR; k++) small &= scale[k] >= -0.5f && scale[k] <= 0.5f;
    for (size_t j = 0; j < 4; j++) v[j] = _mm512_castps_si512(_mm512_loadu_ps(scale + 16 * j));
    v[DW_SMALL] = _mm512_set1_epi32(small);
  }
}

/* The accumulators' order: 16 channels or fewer, four pixels a vector (lanes 0..3
 * repeated); 32 or fewer, two (lanes 0..7 repeated); else lane l of vector j is
 * channel 4 l + j. */
static size_t interleaved_at(size_t nc, size_t j, size_t l)
{
  return 4 * (nc <= 16 ? l % 4 : (nc <= 32 ? l % 8 : l)) + j;
}

/* a tile of 32 or fewer channels: two pixels a vector, lanes 0..7 repeated */
static size_t grouped_at(size_t nc, size_t j, size_t l)
{
  return grouped_channel(j, nc <= 32 ? l % 8 : l);
}

void gemmi8_dwprepare_64c4__avx512vnni(enum gemmi8_qoutput out, const struct gemmi8_qparams* p,
                                       size_t nc, void* prepared)
{
  prepare_block(out, p, nc, interleaved_at, prepared);
  prepare_block(out, p, nc, grouped_at, (__m512i*) prepared + DW_GROUPED_VECTORS);
}

/* One vector of accumulators, requantized (output-avx512.h's arithmetic): fixed point
 * with the zero point added; fp32 rounded, without it. fp32 with small scales (the
 * block's DW_SMALL): |acc * scale| <= 2^30 converts without overflow, and the packs'
 * saturation and the clamp then give what the upper bound vhi gives, so it is left out. */
static GEMMI8_ALWAYS_INLINE __m512i requantize(const enum gemmi8_qoutput out, int left_shift,
                                              __m512i x, const __m512i* pc, __m512 vhi,
                                              __m512i vzp, const int small)
{
  if (out == gemmi8_qoutput_fp32) {
    __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(x), _mm512_castsi512_ps(pc[0]));
    if (!small) y = _mm512_min_ps(y, vhi);
    return _mm512_cvt_roundps_epi32(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  if (left_shift) {
    /* saturating: a lane that loses bits takes INT32_MIN / MAX */
    const __m512i vleft = pc[GEMMI8_FP_VECTORS];
    const __m512i shifted = _mm512_sllv_epi32(x, vleft);
    const __mmask16 overflow = _mm512_cmpneq_epi32_mask(_mm512_srav_epi32(shifted, vleft), x);
    x = _mm512_mask_mov_epi32(shifted, overflow,
                              _mm512_xor_si512(_mm512_srai_epi32(x, 31),
                                               _mm512_set1_epi32(INT32_MAX)));
  }
  const __m512i vinterleave =
      _mm512_setr_epi32(0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30);
  __m512i peven = _mm512_mul_epi32(x, pc[GEMMI8_FP_MUL]);
  __m512i podd = _mm512_mul_epi32(_mm512_srli_epi64(x, 32), pc[GEMMI8_FP_MUL_ODD]);
  const __mmask8 neg_even = _mm512_movepi64_mask(peven);
  const __mmask8 neg_odd = _mm512_movepi64_mask(podd);
  peven = _mm512_add_epi64(peven, pc[GEMMI8_FP_C_EVEN]);
  podd = _mm512_add_epi64(podd, pc[GEMMI8_FP_C_ODD]);
  peven = _mm512_mask_sub_epi64(peven, neg_even, peven, pc[GEMMI8_FP_D_EVEN]);
  podd = _mm512_mask_sub_epi64(podd, neg_odd, podd, pc[GEMMI8_FP_D_ODD]);
  peven = _mm512_srav_epi64(peven, pc[GEMMI8_FP_SH_EVEN]);
  podd = _mm512_srav_epi64(podd, pc[GEMMI8_FP_SH_ODD]);
  return _mm512_add_epi32(_mm512_permutex2var_epi32(peven, vinterleave, podd), vzp);
}

/* 64 bytes in channel order (channels 0..63 of the tile, or two pixels' 0..31) from
 * the four accumulators of a tile, requantized, saturated and clamped. */
/* The output stage's constants, broadcast once per kernel call (not per tile). */
struct dw_output {
  __m512 vhi;     /* max - zero point */
  __m512i vzp32;  /* the zero point, int32 (fixed point) and int16 (fp32) */
  __m512i vzp16;
  __m512i vmin;   /* bytes */
  __m512i vmax;
  __m512i vorder; /* the bytes' shuffle to channel order (see output_bytes_) */
  int ordered;    /* the packs' bytes are in channel order (the grouped order): no shuffle */
  int clamp;      /* [min, max] is not the whole range of the bytes (else the packs' own) */
  int left_shift;
  int is_signed;
};

static GEMMI8_ALWAYS_INLINE void output_constants(const struct gemmi8_dwparams* params,
                                                  struct dw_output* c)
{
  const struct gemmi8_qparams* q = &params->q;
  c->vhi = _mm512_set1_ps((float) (q->max - q->zero_point));
  c->vzp32 = _mm512_set1_epi32(q->zero_point);
  c->vzp16 = _mm512_set1_epi16((int16_t) q->zero_point);
  c->vmin = _mm512_set1_epi8((char) q->min);
  c->vmax = _mm512_set1_epi8((char) q->max);
  /* byte c of each 128-bit lane takes byte 4 * (c % 4) + c / 4 */
  c->vorder = _mm512_broadcast_i32x4(
      _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  c->left_shift = q->left_shift;
  c->is_signed = params->input_xor != 0;
  c->clamp = c->is_signed ? q->min != -128 || q->max != 127 : q->min != 0 || q->max != 255;
}

static GEMMI8_ALWAYS_INLINE __m512i output_bytes_(const enum gemmi8_qoutput out,
                                                 const struct dw_output* c,
                                                 const __m512i* prepared, __m512i vacc0,
                                                 __m512i vacc1, __m512i vacc2, __m512i vacc3,
                                                 const int small)
{
  const size_t V = out == gemmi8_qoutput_fixedpoint ? DW_FIXEDPOINT_VECTORS : 1;
  const int left = c->left_shift;
  const __m512i r0 = requantize(out, left, vacc0, prepared, c->vhi, c->vzp32, small);
  const __m512i r1 = requantize(out, left, vacc1, prepared + V, c->vhi, c->vzp32, small);
  const __m512i r2 = requantize(out, left, vacc2, prepared + 2 * V, c->vhi, c->vzp32, small);
  const __m512i r3 = requantize(out, left, vacc3, prepared + 3 * V, c->vhi, c->vzp32, small);
  __m512i v01 = _mm512_packs_epi32(r0, r1), v23 = _mm512_packs_epi32(r2, r3);
  if (out == gemmi8_qoutput_fp32) {
    v01 = _mm512_adds_epi16(v01, c->vzp16);
    v23 = _mm512_adds_epi16(v23, c->vzp16);
  }
  __m512i b = c->is_signed ? _mm512_packs_epi16(v01, v23) : _mm512_packus_epi16(v01, v23);
  if (!c->ordered) b = _mm512_shuffle_epi8(b, c->vorder);
  if (!c->clamp) return b;
  if (c->is_signed) return _mm512_min_epi8(_mm512_max_epi8(b, c->vmin), c->vmax);
  return _mm512_min_epu8(_mm512_max_epu8(b, c->vmin), c->vmax);
}

/* Out of line, one copy per output kind (the accumulators pass in registers). */
static __attribute__((noinline)) __m512i output_bytes_fixedpoint(
    const struct dw_output* c, const __m512i* prepared, __m512i vacc0, __m512i vacc1,
    __m512i vacc2, __m512i vacc3)
{
  return output_bytes_(gemmi8_qoutput_fixedpoint, c, prepared, vacc0, vacc1, vacc2, vacc3, 0);
}

static __attribute__((noinline)) __m512i output_bytes_fp32(const struct dw_output* c,
                                                          const __m512i* prepared,
                                                          __m512i vacc0, __m512i vacc1,
                                                          __m512i vacc2, __m512i vacc3)
{
  if (((const int32_t*) (prepared + DW_SMALL))[0]) {
    return output_bytes_(gemmi8_qoutput_fp32, c, prepared, vacc0, vacc1, vacc2, vacc3, 1);
  }
  return output_bytes_(gemmi8_qoutput_fp32, c, prepared, vacc0, vacc1, vacc2, vacc3, 0);
}

static GEMMI8_ALWAYS_INLINE __m512i output_bytes(const enum gemmi8_qoutput out,
                                                 const struct dw_output* c,
                                                 const __m512i* prepared, __m512i vacc0,
                                                 __m512i vacc1, __m512i vacc2, __m512i vacc3)
{
  return out == gemmi8_qoutput_fixedpoint
             ? output_bytes_fixedpoint(c, prepared, vacc0, vacc1, vacc2, vacc3)
             : output_bytes_fp32(c, prepared, vacc0, vacc1, vacc2, vacc3);
}

/* vacc<j> lane i is channel 4i + j: out[q] lane 4a + j is vacc<j> lane 4q + a. */
static GEMMI8_ALWAYS_INLINE void deinterleave(__m512i vacc0, __m512i vacc1, __m512i vacc2,
                                              __m512i vacc3, __m512i out[4])
{
  /* lanes 0..7 (lo) or 8..15 (hi) of two vectors, interleaved */
  const __m512i vlo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i vhi =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  /* pairs of lanes of two vectors: channels 0..15 and 16..31 of each half */
  const __m512i vq0 = _mm512_setr_epi32(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
  const __m512i vq1 =
      _mm512_setr_epi32(8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
  const __m512i v01lo = _mm512_permutex2var_epi32(vacc0, vlo, vacc1);
  const __m512i v01hi = _mm512_permutex2var_epi32(vacc0, vhi, vacc1);
  const __m512i v23lo = _mm512_permutex2var_epi32(vacc2, vlo, vacc3);
  const __m512i v23hi = _mm512_permutex2var_epi32(vacc2, vhi, vacc3);
  out[0] = _mm512_permutex2var_epi32(v01lo, vq0, v23lo);
  out[1] = _mm512_permutex2var_epi32(v01lo, vq1, v23lo);
  out[2] = _mm512_permutex2var_epi32(v01hi, vq0, v23hi);
  out[3] = _mm512_permutex2var_epi32(v01hi, vq1, v23hi);
}

/* The grouped order (lane (L, i) of a<j>: channel 16 L + 4 j + i) to channel order:
 * out[q] is the 128-bit lanes q of a0..a3. */
static GEMMI8_ALWAYS_INLINE void grouped_to_order(__m512i a0, __m512i a1, __m512i a2, __m512i a3,
                                                  __m512i out[4])
{
  const __m512i t0 = _mm512_shuffle_i64x2(a0, a1, 0x44), t1 = _mm512_shuffle_i64x2(a0, a1, 0xEE);
  const __m512i t2 = _mm512_shuffle_i64x2(a2, a3, 0x44), t3 = _mm512_shuffle_i64x2(a2, a3, 0xEE);
  out[0] = _mm512_shuffle_i64x2(t0, t2, 0x88);
  out[1] = _mm512_shuffle_i64x2(t0, t2, 0xDD);
  out[2] = _mm512_shuffle_i64x2(t1, t3, 0x88);
  out[3] = _mm512_shuffle_i64x2(t1, t3, 0xDD);
}

/* The int32 output of one or two pixels, channels in order (vout[r]: pixel r). */
static __attribute__((noinline)) void store_s32(size_t rows, size_t nc, uint8_t* o,
                                                size_t stride, __m512i vout[2][4])
{
  gemmi8_qgemm_store_s32_avx512(2, 4, 0, rows, nc, o, stride, vout);
}

/* One tap of the two pixels: 64 channels each (a whole tile read with plain loads, a
 * masked load costing an ALU operation more), or up to 32 in the halves of a vector. */
#define GEMMI8_DW_W(k) _mm512_broadcast_i64x4(_mm256_load_si256((const __m256i*) (wt + 64 * (k))))
#define GEMMI8_DW_LOAD_WHOLE(p) _mm512_xor_si512(_mm512_loadu_si512(p), vxor)
#define GEMMI8_DW_LOAD_PART(p) _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, p), vxor)
#define GEMMI8_DW_TAP_FULL(t, LOAD)                                                         \
  do {                                                                                      \
    const uint8_t* pa = taps0[t];                                                           \
    const uint8_t* pb = taps1[t];                                                           \
    if (pa != (const uint8_t*) zero) pa += offset;                                          \
    if (pb != (const uint8_t*) zero) pb += offset;                                          \
    const __m512i va = LOAD(pa + c0), vb = LOAD(pb + c0);                                   \
    const __m512i vw0 = _mm512_load_si512(wt), vw1 = _mm512_load_si512(wt + 64);            \
    const __m512i vw2 = _mm512_load_si512(wt + 128), vw3 = _mm512_load_si512(wt + 192);     \
    vacc0 = _mm512_dpbusd_epi32(vacc0, va, vw0);                                            \
    vbcc0 = _mm512_dpbusd_epi32(vbcc0, vb, vw0);                                            \
    vacc1 = _mm512_dpbusd_epi32(vacc1, va, vw1);                                            \
    vbcc1 = _mm512_dpbusd_epi32(vbcc1, vb, vw1);                                            \
    vacc2 = _mm512_dpbusd_epi32(vacc2, va, vw2);                                            \
    vbcc2 = _mm512_dpbusd_epi32(vbcc2, vb, vw2);                                            \
    vacc3 = _mm512_dpbusd_epi32(vacc3, va, vw3);                                            \
    vbcc3 = _mm512_dpbusd_epi32(vbcc3, vb, vw3);                                            \
    wt += 256;                                                                              \
  } while (0)
/* A tap's channel c0 (offc = offset + c0, zeroc = zero + c0: a load without an index
 * register where the offset is applied here). */
#define GEMMI8_DW_PTR(x) \
  (KS != 0 ? (x) + c0 : ((x) != (const uint8_t*) zero ? (x) + offc : zeroc))
#define GEMMI8_DW_HALF_WHOLE(x) _mm256_loadu_si256((const __m256i*) GEMMI8_DW_PTR(x))
#define GEMMI8_DW_HALF_PART(x) _mm256_maskz_loadu_epi8(half, GEMMI8_DW_PTR(x))
#define GEMMI8_DW_XOR(v) _mm512_xor_si512(v, vxor)
/* One tap of four pixels, up to 32 channels: pixels 0 and 1 in the halves of one
 * vector, 2 and 3 in another, each weight vector loaded once for both. */
#define GEMMI8_DW_TAP_PAIRS(t, LOAD, XOR)                                                   \
  do {                                                                                      \
    const __m512i vab =                                                                     \
        XOR(_mm512_inserti64x4(_mm512_castsi256_si512(LOAD(taps0[t])), LOAD(taps1[t]), 1)); \
    const __m512i vcd =                                                                     \
        XOR(_mm512_inserti64x4(_mm512_castsi256_si512(LOAD(taps2[t])), LOAD(taps3[t]), 1)); \
    const __m512i vw0 = GEMMI8_DW_W(0), vw1 = GEMMI8_DW_W(1);                               \
    const __m512i vw2 = GEMMI8_DW_W(2), vw3 = GEMMI8_DW_W(3);                               \
    vacc0 = _mm512_dpbusd_epi32(vacc0, vab, vw0);                                           \
    vbcc0 = _mm512_dpbusd_epi32(vbcc0, vcd, vw0);                                           \
    vacc1 = _mm512_dpbusd_epi32(vacc1, vab, vw1);                                           \
    vbcc1 = _mm512_dpbusd_epi32(vbcc1, vcd, vw1);                                           \
    vacc2 = _mm512_dpbusd_epi32(vacc2, vab, vw2);                                           \
    vbcc2 = _mm512_dpbusd_epi32(vbcc2, vcd, vw2);                                           \
    vacc3 = _mm512_dpbusd_epi32(vacc3, vab, vw3);                                           \
    vbcc3 = _mm512_dpbusd_epi32(vbcc3, vcd, vw3);                                           \
    wt += 256;                                                                              \
  } while (0)

/* 16 channels or fewer (channels c0.. of a tile; 8-bit outputs) of four pixels (taps<r>:
 * pixel r's taps, already offset when pre), in the 128-bit lanes of each vector (lane r:
 * pixel r), the tile's first 16 channels' weights in all four; the prepared constants
 * of such a tile repeat every 4 lanes. Stores n pixels. */
static GEMMI8_ALWAYS_INLINE void dw_quad(
    const enum gemmi8_qoutput out, size_t ks, const uint8_t* const* taps0,
    const uint8_t* const* taps1, const uint8_t* const* taps2, const uint8_t* const* taps3,
    const uint8_t* tile, size_t nc, size_t c0, const int pre, size_t offset, const void* zero,
    __m512i vxor, const struct dw_output* oc, const __m512i* pc, uint8_t* o,
    size_t output_stride, size_t n)
{
  const __mmask16 m16 = (__mmask16) (0xFFFFu >> (16 - nc));
  const size_t offc = offset + c0;
  const uint8_t* zeroc = (const uint8_t*) zero + c0;
#define QUAD_W(k) _mm512_broadcast_i32x4(_mm_load_si128((const __m128i*) (wt + 64 * (k))))
  const uint8_t* wt = tile;
  __m512i vacc0 = QUAD_W(0), vacc1 = QUAD_W(1), vacc2 = QUAD_W(2), vacc3 = QUAD_W(3);
  wt += 256;
#define QUAD_PTR(x) (pre ? (x) + c0 : ((x) != (const uint8_t*) zero ? (x) + offc : zeroc))
#define QUAD_PART(x) _mm_maskz_loadu_epi8(m16, QUAD_PTR(x))
#define QUAD_TAP(t, LOAD)                                                                    \
  do {                                                                                       \
    __m512i va = _mm512_castsi128_si512(LOAD(taps0[t]));                                     \
    va = _mm512_inserti32x4(va, LOAD(taps1[t]), 1);                                          \
    va = _mm512_inserti32x4(va, LOAD(taps2[t]), 2);                                          \
    va = _mm512_inserti32x4(va, LOAD(taps3[t]), 3);                                          \
    va = _mm512_xor_si512(va, vxor);                                                         \
    vacc0 = _mm512_dpbusd_epi32(vacc0, va, QUAD_W(0));                                       \
    vacc1 = _mm512_dpbusd_epi32(vacc1, va, QUAD_W(1));                                       \
    vacc2 = _mm512_dpbusd_epi32(vacc2, va, QUAD_W(2));                                       \
    vacc3 = _mm512_dpbusd_epi32(vacc3, va, QUAD_W(3));                                       \
    wt += 256;                                                                               \
  } while (0)
#pragma GCC unroll 1
  for (size_t t = 0; t < ks; t++) QUAD_TAP(t, QUAD_PART);
#undef QUAD_TAP
#undef QUAD_PART
#undef QUAD_PTR
#undef QUAD_W
  const __m512i b = output_bytes(out, oc, pc, vacc0, vacc1, vacc2, vacc3);
  _mm_mask_storeu_epi8(o + c0, m16, _mm512_castsi512_si128(b));
  if (n > 1) _mm_mask_storeu_epi8(o + output_stride + c0, m16, _mm512_extracti32x4_epi32(b, 1));
  if (n > 2) _mm_mask_storeu_epi8(o + 2 * output_stride + c0, m16, _mm512_extracti32x4_epi32(b, 2));
  if (n > 3) _mm_mask_storeu_epi8(o + 3 * output_stride + c0, m16, _mm512_extracti32x4_epi32(b, 3));
}

/* Whether four pixels' taps lie 16 bytes apart, tap for tap: a layer of 16 channels,
 * stride 1, the pixels in one run of input pixels with no padding tap. (A padding tap,
 * the zero buffer, the same for every pixel, breaks the run.) */
static GEMMI8_ALWAYS_INLINE int dw_run16(const uint8_t* const* taps0)
{
  const __m512i v16 = _mm512_set1_epi64(16);
  const __m512i a0 = _mm512_loadu_si512(taps0), a1 = _mm512_loadu_si512(taps0 + 9);
  const __m512i a2 = _mm512_loadu_si512(taps0 + 18), a3 = _mm512_loadu_si512(taps0 + 27);
  const __mmask8 run = _mm512_cmpeq_epi64_mask(_mm512_sub_epi64(a1, a0), v16) &
                       _mm512_cmpeq_epi64_mask(_mm512_sub_epi64(a2, a1), v16) &
                       _mm512_cmpeq_epi64_mask(_mm512_sub_epi64(a3, a2), v16);
  return run == 0xFF && (uintptr_t) taps0[17] - (uintptr_t) taps0[8] == 16 &&
         (uintptr_t) taps0[26] - (uintptr_t) taps0[17] == 16 &&
         (uintptr_t) taps0[35] - (uintptr_t) taps0[26] == 16;
}

/* A 3x3 layer of 16 channels (MobileNetV3's first depthwise layer), 8-bit outputs,
 * four pixels a pass in the 128-bit lanes of a vector (as dw_quad), a tap one 64-byte
 * load: where the four pixels' taps run on in the input (dw_run16), from the input,
 * pixel 0's taps the only pointers read; in other passes (padding, row ends, the
 * last) from a copy of the four pixels' taps side by side. Apart from the main loop,
 * whose state for every tile width left this one spilling. */
static __attribute__((noinline)) void dw16_3x3(
    enum gemmi8_qoutput out, size_t pixels, const uint8_t* const* input, const uint8_t* w,
    uint8_t* output, size_t output_stride, size_t input_offset, const void* zero, __m512i vxor,
    const struct dw_output* oc, const __m512i* pc)
{
  _Alignas(64) uint8_t copy[9 * 64];
  const uint8_t* copied[9];
  for (size_t t = 0; t < 9; t++) copied[t] = copy + 64 * t;
#define RUN_W(k) _mm512_broadcast_i32x4(_mm_load_si128((const __m128i*) (wt + 64 * (k))))
  for (size_t p = 0; p < pixels; p += 4, input += 36, output += 4 * output_stride) {
    const size_t n = gemmi8_min(4, pixels - p);
    const uint8_t* const* taps = input;
    size_t offset = input_offset;
    if (n < 4 || !dw_run16(input)) {
      /* pixels past n repeat the last: read, never stored */
      for (size_t r = 0; r < 4; r++) {
        const uint8_t* const* pixel = input + 9 * (r < n ? r : n - 1);
        for (size_t t = 0; t < 9; t++) {
          const uint8_t* x = pixel[t] != (const uint8_t*) zero ? pixel[t] + input_offset : pixel[t];
          memcpy(copy + 64 * t + 16 * r, x, 16);
        }
      }
      taps = copied;
      offset = 0;
    }
    const uint8_t* wt = w;
    __m512i vacc0 = RUN_W(0), vacc1 = RUN_W(1), vacc2 = RUN_W(2), vacc3 = RUN_W(3);
    wt += 256;
#pragma GCC unroll 9
    for (size_t t = 0; t < 9; t++) {
      const __m512i va = _mm512_xor_si512(_mm512_loadu_si512(taps[t] + offset), vxor);
      vacc0 = _mm512_dpbusd_epi32(vacc0, va, RUN_W(0));
      vacc1 = _mm512_dpbusd_epi32(vacc1, va, RUN_W(1));
      vacc2 = _mm512_dpbusd_epi32(vacc2, va, RUN_W(2));
      vacc3 = _mm512_dpbusd_epi32(vacc3, va, RUN_W(3));
      wt += 256;
    }
    const __m512i b = output_bytes(out, oc, pc, vacc0, vacc1, vacc2, vacc3);
    if (n == 4 && output_stride == 16) {
      _mm512_storeu_si512(output, b);
    } else {
      uint8_t* o = output;
      _mm_storeu_si128((__m128i*) o, _mm512_castsi512_si128(b));
      if (n > 1) _mm_storeu_si128((__m128i*) (o += output_stride), _mm512_extracti32x4_epi32(b, 1));
      if (n > 2) _mm_storeu_si128((__m128i*) (o += output_stride), _mm512_extracti32x4_epi32(b, 2));
      if (n > 3) _mm_storeu_si128((__m128i*) (o += output_stride), _mm512_extracti32x4_epi32(b, 3));
    }
  }
#undef RUN_W
}

/* Four pixels of one tap row grouped: lane (L, i) of g<j> holds the four bytes of
 * channel 16 L + 4 j + i of p0, p1, p2, p3, in that order (two levels of unpacks). */
#define DW_GROUP(p0, p1, p2, p3, g0, g1, g2, g3)                                             \
  do {                                                                                       \
    const __m512i t0_ = _mm512_unpacklo_epi8(p0, p1), t1_ = _mm512_unpackhi_epi8(p0, p1);   \
    const __m512i t2_ = _mm512_unpacklo_epi8(p2, p3), t3_ = _mm512_unpackhi_epi8(p2, p3);   \
    g0 = _mm512_unpacklo_epi16(t0_, t2_);                                                    \
    g1 = _mm512_unpackhi_epi16(t0_, t2_);                                                    \
    g2 = _mm512_unpacklo_epi16(t1_, t3_);                                                    \
    g3 = _mm512_unpackhi_epi16(t1_, t3_);                                                    \
  } while (0)
#define DW_LOAD_GROUP(x) _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, (x) + c0), vxor)
#define DW_DOT4(a, g, wv)                                                                    \
  do {                                                                                       \
    a##0 = _mm512_dpbusd_epi32(a##0, g##0, _mm512_load_si512((wv)));                         \
    a##1 = _mm512_dpbusd_epi32(a##1, g##1, _mm512_load_si512((wv) + 64));                    \
    a##2 = _mm512_dpbusd_epi32(a##2, g##2, _mm512_load_si512((wv) + 128));                   \
    a##3 = _mm512_dpbusd_epi32(a##3, g##3, _mm512_load_si512((wv) + 192));                   \
  } while (0)
/* Two pixels whose taps overlap (P1's row taps 0, 1 are P0's 1, 2: stride 1): per
 * tap row one group of P0's three taps and P1's third, A (w0 w1 w2 0) for P0 and B
 * (0 w0 w1 w2) for P1. */
#define DW_PAIR_SHARED(P0, P1, ky, a, b)                                                     \
  do {                                                                                       \
    __m512i g0, g1, g2, g3;                                                                  \
    const __m512i q0 = DW_LOAD_GROUP(P0[3 * (ky)]), q1 = DW_LOAD_GROUP(P0[3 * (ky) + 1]);    \
    const __m512i q2 = DW_LOAD_GROUP(P0[3 * (ky) + 2]), q3 = DW_LOAD_GROUP(P1[3 * (ky) + 2]); \
    DW_GROUP(q0, q1, q2, q3, g0, g1, g2, g3);                                                \
    DW_DOT4(a, g, wk + 512 * (ky));                                                          \
    DW_DOT4(b, g, wk + 512 * (ky) + 256);                                                    \
  } while (0)
/* One pixel: per tap row a group of its three taps (the third twice, weight 0), A. */
#define DW_PIXEL(P, ky, a)                                                                   \
  do {                                                                                       \
    __m512i g0, g1, g2, g3;                                                                  \
    const __m512i q0 = DW_LOAD_GROUP(P[3 * (ky)]), q1 = DW_LOAD_GROUP(P[3 * (ky) + 1]);      \
    const __m512i q2 = DW_LOAD_GROUP(P[3 * (ky) + 2]);                                       \
    DW_GROUP(q0, q1, q2, q2, g0, g1, g2, g3);                                                \
    DW_DOT4(a, g, wk + 512 * (ky));                                                          \
  } while (0)

/* A 3x3 tile of 33..64 channels (c0.. of the call), any output, four pixels (in<r>:
 * pixel r's taps, the offset applied; those past n alias the last, computed, never
 * stored), from the tile's grouped layout g (bias', then per tap row A and B): each
 * 32-bit lane of vpdpbusd takes three taps of one channel instead of one, for two
 * levels of unpacks a group. Pixels taken in pairs when each pair's taps overlap as
 * stride 1 makes them (one group serves both), else one by one; the accumulators in
 * the grouped order, whose constants are the prepared block at DW_GROUPED_VECTORS
 * and whose bytes come out of the packs in channel order (oc->ordered). */
static __attribute__((noinline)) void dw3x3_pass(
    enum gemmi8_qoutput out, const uint8_t* const* in0, const uint8_t* const* in1,
    const uint8_t* const* in2, const uint8_t* const* in3, const uint8_t* g, size_t c0,
    size_t nc, __m512i vxor, const struct dw_output* oc, const __m512i* pc, uint8_t* o,
    size_t output_stride, size_t n)
{
  const __mmask64 mask = nc == CR ? ~(__mmask64) 0 : ((__mmask64) 1 << nc) - 1;
  int shared = 1;
  for (size_t ky = 0; ky < 3; ky++) {
    shared &= (in1[3 * ky] == in0[3 * ky + 1]) & (in1[3 * ky + 1] == in0[3 * ky + 2]) &
              (in3[3 * ky] == in2[3 * ky + 1]) & (in3[3 * ky + 1] == in2[3 * ky + 2]);
  }
  __m512i a0 = _mm512_load_si512(g), a1 = _mm512_load_si512(g + 64);
  __m512i a2 = _mm512_load_si512(g + 128), a3 = _mm512_load_si512(g + 192);
  __m512i b0 = a0, b1 = a1, b2 = a2, b3 = a3;
  __m512i e0 = a0, e1 = a1, e2 = a2, e3 = a3;
  __m512i f0 = a0, f1 = a1, f2 = a2, f3 = a3;
  const uint8_t* wk = g + 256;
  if (shared) {
#pragma GCC unroll 3
    for (size_t ky = 0; ky < 3; ky++) {
      DW_PAIR_SHARED(in0, in1, ky, a, b);
      DW_PAIR_SHARED(in2, in3, ky, e, f);
    }
  } else {
#pragma GCC unroll 3
    for (size_t ky = 0; ky < 3; ky++) {
      DW_PIXEL(in0, ky, a);
      DW_PIXEL(in1, ky, b);
      DW_PIXEL(in2, ky, e);
      DW_PIXEL(in3, ky, f);
    }
  }
  if (out == gemmi8_qoutput_s32) {
    __m512i vout[2][4];
    grouped_to_order(a0, a1, a2, a3, vout[0]);
    grouped_to_order(b0, b1, b2, b3, vout[1]);
    store_s32(gemmi8_min(n, 2), nc, o + 4 * c0, output_stride, vout);
    if (n > 2) {
      grouped_to_order(e0, e1, e2, e3, vout[0]);
      grouped_to_order(f0, f1, f2, f3, vout[1]);
      store_s32(n - 2, nc, o + 2 * output_stride + 4 * c0, output_stride, vout);
    }
    return;
  }
  pc += DW_GROUPED_VECTORS;
  _mm512_mask_storeu_epi8(o + c0, mask, output_bytes(out, oc, pc, a0, a1, a2, a3));
  if (n > 1) {
    _mm512_mask_storeu_epi8(o + output_stride + c0, mask,
                            output_bytes(out, oc, pc, b0, b1, b2, b3));
  }
  if (n > 2) {
    _mm512_mask_storeu_epi8(o + 2 * output_stride + c0, mask,
                            output_bytes(out, oc, pc, e0, e1, e2, e3));
  }
  if (n > 3) {
    _mm512_mask_storeu_epi8(o + 3 * output_stride + c0, mask,
                            output_bytes(out, oc, pc, f0, f1, f2, f3));
  }
}

/* A 3x3 tile of 32 channels or fewer: as dw3x3_pass, with two pixels in the halves of
 * each vector (pixel 0 or 1 in the low half, 2 or 3 in the high), each half grouped as
 * a 64-channel tile's first 32 channels are; the weights of the grouped layout's lanes
 * 0..7 in both halves, as the prepared constants of such a tile are. */
#define DW_LOAD_HALVES(x, y)                                                                 \
  _mm512_xor_si512(                                                                          \
      _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_maskz_loadu_epi8(half, (x) + c0)),    \
                         _mm256_maskz_loadu_epi8(half, (y) + c0), 1),                        \
      vxor)
#define DW_W32(wv) _mm512_broadcast_i64x4(_mm256_load_si256((const __m256i*) (wv)))
#define DW_DOT4_32(a, g, wv)                                                                 \
  do {                                                                                       \
    a##0 = _mm512_dpbusd_epi32(a##0, g##0, DW_W32(wv));                                      \
    a##1 = _mm512_dpbusd_epi32(a##1, g##1, DW_W32((wv) + 64));                               \
    a##2 = _mm512_dpbusd_epi32(a##2, g##2, DW_W32((wv) + 128));                              \
    a##3 = _mm512_dpbusd_epi32(a##3, g##3, DW_W32((wv) + 192));                              \
  } while (0)
static __attribute__((noinline)) void dw3x3_pass32(
    enum gemmi8_qoutput out, const uint8_t* const* in0, const uint8_t* const* in1,
    const uint8_t* const* in2, const uint8_t* const* in3, const uint8_t* g, size_t c0,
    size_t nc, __m512i vxor, const struct dw_output* oc, const __m512i* pc, uint8_t* o,
    size_t output_stride, size_t n)
{
  const __mmask32 half = (__mmask32) (((uint64_t) 1 << nc) - 1);
  int shared = 1;
  for (size_t ky = 0; ky < 3; ky++) {
    shared &= (in1[3 * ky] == in0[3 * ky + 1]) & (in1[3 * ky + 1] == in0[3 * ky + 2]) &
              (in3[3 * ky] == in2[3 * ky + 1]) & (in3[3 * ky + 1] == in2[3 * ky + 2]);
  }
  /* a: pixels 0 | 2, b: 1 | 3 */
  __m512i a0 = DW_W32(g), a1 = DW_W32(g + 64), a2 = DW_W32(g + 128), a3 = DW_W32(g + 192);
  __m512i b0 = a0, b1 = a1, b2 = a2, b3 = a3;
  const uint8_t* wk = g + 256;
  if (shared) {
#pragma GCC unroll 3
    for (size_t ky = 0; ky < 3; ky++) {
      __m512i g0, g1, g2, g3;
      const size_t t = 3 * ky;
      const __m512i q0 = DW_LOAD_HALVES(in0[t], in2[t]);
      const __m512i q1 = DW_LOAD_HALVES(in0[t + 1], in2[t + 1]);
      const __m512i q2 = DW_LOAD_HALVES(in0[t + 2], in2[t + 2]);
      const __m512i q3 = DW_LOAD_HALVES(in1[t + 2], in3[t + 2]);
      DW_GROUP(q0, q1, q2, q3, g0, g1, g2, g3);
      DW_DOT4_32(a, g, wk + 512 * ky);
      DW_DOT4_32(b, g, wk + 512 * ky + 256);
    }
  } else {
#pragma GCC unroll 3
    for (size_t ky = 0; ky < 3; ky++) {
      __m512i g0, g1, g2, g3;
      const size_t t = 3 * ky;
      __m512i q0 = DW_LOAD_HALVES(in0[t], in2[t]);
      __m512i q1 = DW_LOAD_HALVES(in0[t + 1], in2[t + 1]);
      __m512i q2 = DW_LOAD_HALVES(in0[t + 2], in2[t + 2]);
      DW_GROUP(q0, q1, q2, q2, g0, g1, g2, g3);
      DW_DOT4_32(a, g, wk + 512 * ky);
      q0 = DW_LOAD_HALVES(in1[t], in3[t]);
      q1 = DW_LOAD_HALVES(in1[t + 1], in3[t + 1]);
      q2 = DW_LOAD_HALVES(in1[t + 2], in3[t + 2]);
      DW_GROUP(q0, q1, q2, q2, g0, g1, g2, g3);
      DW_DOT4_32(b, g, wk + 512 * ky);
    }
  }
  if (out == gemmi8_qoutput_s32) {
    /* 128-bit lanes 0, 1: pixel 0 or 1's channels 0..15, 16..31; 2, 3: pixel 2 or 3's */
    __m512i va[4], vb[4], vout[2][4];
    grouped_to_order(a0, a1, a2, a3, va);
    grouped_to_order(b0, b1, b2, b3, vb);
    vout[0][0] = va[0];
    vout[0][1] = va[1];
    vout[1][0] = vb[0];
    vout[1][1] = vb[1];
    vout[0][2] = vout[0][3] = vout[1][2] = vout[1][3] = _mm512_setzero_si512();
    store_s32(gemmi8_min(n, 2), nc, o + 4 * c0, output_stride, vout);
    if (n > 2) {
      vout[0][0] = va[2];
      vout[0][1] = va[3];
      vout[1][0] = vb[2];
      vout[1][1] = vb[3];
      store_s32(n - 2, nc, o + 2 * output_stride + 4 * c0, output_stride, vout);
    }
    return;
  }
  pc += DW_GROUPED_VECTORS;
  const __m512i va = output_bytes(out, oc, pc, a0, a1, a2, a3);
  _mm256_mask_storeu_epi8(o + c0, half, _mm512_castsi512_si256(va));
  if (n > 2) {
    _mm256_mask_storeu_epi8(o + 2 * output_stride + c0, half, _mm512_extracti64x4_epi64(va, 1));
  }
  if (n > 1) {
    const __m512i vb = output_bytes(out, oc, pc, b0, b1, b2, b3);
    _mm256_mask_storeu_epi8(o + output_stride + c0, half, _mm512_castsi512_si256(vb));
    if (n > 3) {
      _mm256_mask_storeu_epi8(o + 3 * output_stride + c0, half,
                              _mm512_extracti64x4_epi64(vb, 1));
    }
  }
}


/* The four input rows of a tap column (col: its four pointers, params->columns),
 * grouped (lane (L, i) of G<j>: channel 16 L + 4 j + i of rows 0, 1, 2, 3). */
#define DW_COLUMN(col, G)                                                                    \
  do {                                                                                       \
    const __m512i q0 = DW_LOAD_GROUP((col)[0]), q1 = DW_LOAD_GROUP((col)[1]);                \
    const __m512i q2 = DW_LOAD_GROUP((col)[2]), q3 = DW_LOAD_GROUP((col)[3]);                \
    DW_GROUP(q0, q1, q2, q3, G##0, G##1, G##2, G##3);                                        \
  } while (0)

/* Two output rows of a 3x3 tile of 33..64 channels (c0.. of the call; w pixels and the
 * w below them, params->row_pixels' geometry, their taps by columns in cols), any
 * output: a group of the four input rows under a tap column serves the top pixel (its
 * rows 0..2, weights A of the tile's by-columns layout) and the one below (rows 1..3,
 * B), and each group three output columns as the window slides: per two pixels one
 * group (8 unpacks), 24 vpdpbusd. */
static __attribute__((noinline)) void dw3x3_columns(
    enum gemmi8_qoutput out, const uint8_t* const* cols, size_t w, const uint8_t* g, size_t c0,
    size_t nc, __m512i vxor, const struct dw_output* oc, const __m512i* pc, uint8_t* o,
    size_t output_stride)
{
  const __mmask64 mask = nc == CR ? ~(__mmask64) 0 : ((__mmask64) 1 << nc) - 1;
  const uint8_t* wk = g + 256 + 1536;
  const size_t below = w * output_stride;
  __m512i x0, x1, x2, x3, y0, y1, y2, y3, z0, z1, z2, z3;
  DW_COLUMN(cols, x);
  DW_COLUMN(cols + 4, y);
  for (size_t x = 0; x < w; x++) {
    DW_COLUMN(cols + 4 * (x + 2), z);
    __m512i t0 = _mm512_load_si512(g), t1 = _mm512_load_si512(g + 64);
    __m512i t2 = _mm512_load_si512(g + 128), t3 = _mm512_load_si512(g + 192);
    __m512i u0 = t0, u1 = t1, u2 = t2, u3 = t3;
    DW_DOT4(t, x, wk);
    DW_DOT4(u, x, wk + 256);
    DW_DOT4(t, y, wk + 512);
    DW_DOT4(u, y, wk + 768);
    DW_DOT4(t, z, wk + 1024);
    DW_DOT4(u, z, wk + 1280);
    uint8_t* ox = o + x * output_stride;
    if (out == gemmi8_qoutput_s32) {
      __m512i vout[2][4];
      grouped_to_order(t0, t1, t2, t3, vout[0]);
      grouped_to_order(u0, u1, u2, u3, vout[1]);
      store_s32(2, nc, ox + 4 * c0, below, vout);
    } else {
      const __m512i* pg = pc + DW_GROUPED_VECTORS;
      _mm512_mask_storeu_epi8(ox + c0, mask, output_bytes(out, oc, pg, t0, t1, t2, t3));
      _mm512_mask_storeu_epi8(ox + below + c0, mask, output_bytes(out, oc, pg, u0, u1, u2, u3));
    }
    x0 = y0, x1 = y1, x2 = y2, x3 = y3;
    y0 = z0, y1 = z1, y2 = z2, y3 = z3;
  }
}
#undef DW_COLUMN

/* As dw3x3_columns, for a tile of 32 channels or fewer: two output columns a step in the
 * halves of each vector (the groups of tap column k of pixels x and x + 1, that is of
 * input columns x + k and x + 1 + k), the middle group of a step made of its
 * neighbours' halves; the weights' lanes 0..7 broadcast to both halves. */
static __attribute__((noinline)) void dw3x3_columns32(
    enum gemmi8_qoutput out, const uint8_t* const* cols, size_t w, const uint8_t* g, size_t c0,
    size_t nc, __m512i vxor, const struct dw_output* oc, const __m512i* pc, uint8_t* o,
    size_t output_stride)
{
  const __mmask32 half = (__mmask32) (((uint64_t) 1 << nc) - 1);
  const uint8_t* wk = g + 256 + 1536;
  const size_t below = w * output_stride;
  /* tap columns a (low halves) and b (high) */
#define DW_COLUMNS2(a, b, G)                                                                 \
  do {                                                                                       \
    const __m512i q0 = DW_LOAD_HALVES((a)[0], (b)[0]), q1 = DW_LOAD_HALVES((a)[1], (b)[1]);  \
    const __m512i q2 = DW_LOAD_HALVES((a)[2], (b)[2]), q3 = DW_LOAD_HALVES((a)[3], (b)[3]);  \
    DW_GROUP(q0, q1, q2, q3, G##0, G##1, G##2, G##3);                                        \
  } while (0)
  __m512i x0, x1, x2, x3, y0, y1, y2, y3, z0, z1, z2, z3;
  DW_COLUMNS2(cols, cols + (w > 1 ? 4 : 0), x);
  for (size_t x = 0; x < w; x += 2) {
    const int pair = x + 1 < w;
    const uint8_t* const* c2 = cols + 4 * (x + 2);
    DW_COLUMNS2(c2, pair ? c2 + 4 : c2, z);
    if (pair) {
      /* input columns x + 1 and x + 2: the high half of the first group, the low of the
       * last */
      y0 = _mm512_shuffle_i64x2(x0, z0, 0x4E);
      y1 = _mm512_shuffle_i64x2(x1, z1, 0x4E);
      y2 = _mm512_shuffle_i64x2(x2, z2, 0x4E);
      y3 = _mm512_shuffle_i64x2(x3, z3, 0x4E);
    } else {
      DW_COLUMNS2(cols + 4 * (x + 1), cols + 4 * (x + 1), y);
    }
    __m512i t0 = DW_W32(g), t1 = DW_W32(g + 64), t2 = DW_W32(g + 128), t3 = DW_W32(g + 192);
    __m512i u0 = t0, u1 = t1, u2 = t2, u3 = t3;
    DW_DOT4_32(t, x, wk);
    DW_DOT4_32(u, x, wk + 256);
    DW_DOT4_32(t, y, wk + 512);
    DW_DOT4_32(u, y, wk + 768);
    DW_DOT4_32(t, z, wk + 1024);
    DW_DOT4_32(u, z, wk + 1280);
    uint8_t* ox = o + x * output_stride;
    if (out == gemmi8_qoutput_s32) {
      /* 128-bit lanes 0, 1: pixel x's channels 0..15, 16..31; 2, 3: pixel x + 1's */
      __m512i vt[4], vu[4], vout[2][4];
      grouped_to_order(t0, t1, t2, t3, vt);
      grouped_to_order(u0, u1, u2, u3, vu);
      vout[0][0] = vt[0];
      vout[0][1] = vt[1];
      vout[1][0] = vu[0];
      vout[1][1] = vu[1];
      vout[0][2] = vout[0][3] = vout[1][2] = vout[1][3] = _mm512_setzero_si512();
      store_s32(2, nc, ox + 4 * c0, below, vout);
      if (pair) {
        vout[0][0] = vt[2];
        vout[0][1] = vt[3];
        vout[1][0] = vu[2];
        vout[1][1] = vu[3];
        store_s32(2, nc, ox + output_stride + 4 * c0, below, vout);
      }
    } else {
      const __m512i* pg = pc + DW_GROUPED_VECTORS;
      const __m512i vt = output_bytes(out, oc, pg, t0, t1, t2, t3);
      const __m512i vu = output_bytes(out, oc, pg, u0, u1, u2, u3);
      _mm256_mask_storeu_epi8(ox + c0, half, _mm512_castsi512_si256(vt));
      _mm256_mask_storeu_epi8(ox + below + c0, half, _mm512_castsi512_si256(vu));
      if (pair) {
        _mm256_mask_storeu_epi8(ox + output_stride + c0, half, _mm512_extracti64x4_epi64(vt, 1));
        _mm256_mask_storeu_epi8(ox + below + output_stride + c0, half,
                                _mm512_extracti64x4_epi64(vu, 1));
      }
    }
    x0 = z0, x1 = z1, x2 = z2, x3 = z3;
  }
#undef DW_COLUMNS2
}

/* Whether pixel b's tap column 0 is pixel a's column 2, tap for tap: neighbours in a row
 * of stride 2 (dilation 1), read on the pointers (any geometry stays exact). */
static GEMMI8_ALWAYS_INLINE int dw_follows2(const uint8_t* const* a, const uint8_t* const* b)
{
  return (b[0] == a[2]) & (b[3] == a[5]) & (b[6] == a[8]);
}

/* The three input rows of a tap column of one pixel, grouped (the third row twice: its
 * weight in the by-columns layout's A is 0 there). */
#define DW_COLUMN3(r0, r1, r2, G)                                                            \
  do {                                                                                       \
    const __m512i q0 = DW_LOAD_GROUP(r0), q1 = DW_LOAD_GROUP(r1), q2 = DW_LOAD_GROUP(r2);    \
    DW_GROUP(q0, q1, q2, q2, G##0, G##1, G##2, G##3);                                        \
  } while (0)

/* n pixels of a 3x3 tile of 33..64 channels (c0.. of the call; in: their taps, the
 * offset 0), any output, by tap columns (A of the by-columns layout): where pixel p + 1
 * follows p as stride 2 makes it (dw_follows2), p's column 2 is p + 1's column 0, so
 * per pixel two groups (16 unpacks) against three, and 12 vpdpbusd. */
static __attribute__((noinline)) void dw3x3_stride2(
    enum gemmi8_qoutput out, const uint8_t* const* in, size_t n, const uint8_t* g, size_t c0,
    size_t nc, __m512i vxor, const struct dw_output* oc, const __m512i* pc, uint8_t* o,
    size_t output_stride)
{
  const __mmask64 mask = nc == CR ? ~(__mmask64) 0 : ((__mmask64) 1 << nc) - 1;
  const uint8_t* wk = g + 256 + 1536;
  __m512i x0, x1, x2, x3, y0, y1, y2, y3, z0, z1, z2, z3;
  DW_COLUMN3(in[0], in[3], in[6], x);
  for (size_t p = 0; p < n; p++, o += output_stride) {
    const uint8_t* const* a = in + 9 * p;
    DW_COLUMN3(a[1], a[4], a[7], y);
    DW_COLUMN3(a[2], a[5], a[8], z);
    __m512i t0 = _mm512_load_si512(g), t1 = _mm512_load_si512(g + 64);
    __m512i t2 = _mm512_load_si512(g + 128), t3 = _mm512_load_si512(g + 192);
    DW_DOT4(t, x, wk);
    DW_DOT4(t, y, wk + 512);
    DW_DOT4(t, z, wk + 1024);
    if (out == gemmi8_qoutput_s32) {
      __m512i vout[2][4];
      grouped_to_order(t0, t1, t2, t3, vout[0]);
      vout[1][0] = vout[1][1] = vout[1][2] = vout[1][3] = _mm512_setzero_si512();
      store_s32(1, nc, o + 4 * c0, output_stride, vout);
    } else {
      _mm512_mask_storeu_epi8(o + c0, mask,
                              output_bytes(out, oc, pc + DW_GROUPED_VECTORS, t0, t1, t2, t3));
    }
    if (p + 1 == n) break;
    const uint8_t* const* b = a + 9;
    if (dw_follows2(a, b)) {
      x0 = z0, x1 = z1, x2 = z2, x3 = z3;
    } else {
      DW_COLUMN3(b[0], b[3], b[6], x);
    }
  }
}

/* As dw3x3_stride2, for a tile of 32 channels or fewer: two pixels a step in the halves
 * of each vector (the groups of tap column k of pixels p and p + 1); where p - 1, p, p +
 * 1 follow one another as stride 2 makes them, the step's column 0 is made of the last
 * step's column 2 (its high half) and this one's (its low half). */
#define DW_COLUMN3_HALVES(a, a1, k, G)                                                       \
  do {                                                                                       \
    const __m512i q0 = DW_LOAD_HALVES(a[k], a1[k]), q1 = DW_LOAD_HALVES(a[3 + k], a1[3 + k]); \
    const __m512i q2 = DW_LOAD_HALVES(a[6 + k], a1[6 + k]);                                  \
    DW_GROUP(q0, q1, q2, q2, G##0, G##1, G##2, G##3);                                        \
  } while (0)
static __attribute__((noinline)) void dw3x3_stride2_32(
    enum gemmi8_qoutput out, const uint8_t* const* in, size_t n, const uint8_t* g, size_t c0,
    size_t nc, __m512i vxor, const struct dw_output* oc, const __m512i* pc, uint8_t* o,
    size_t output_stride)
{
  const __mmask32 half = (__mmask32) (((uint64_t) 1 << nc) - 1);
  const uint8_t* wk = g + 256 + 1536;
  __m512i x0, x1, x2, x3, y0, y1, y2, y3, z0, z1, z2, z3;
  for (size_t p = 0; p < n; p += 2, o += 2 * output_stride) {
    const int pair = p + 1 < n;
    const uint8_t* const* a = in + 9 * p;
    const uint8_t* const* a1 = pair ? a + 9 : a;
    const int follows = p != 0 && dw_follows2(a - 9, a) && (!pair || dw_follows2(a, a1));
    if (follows) {
      /* z: the last step's column 2 */
      DW_COLUMN3_HALVES(a, a1, 2, y);
      x0 = _mm512_shuffle_i64x2(z0, y0, 0x4E);
      x1 = _mm512_shuffle_i64x2(z1, y1, 0x4E);
      x2 = _mm512_shuffle_i64x2(z2, y2, 0x4E);
      x3 = _mm512_shuffle_i64x2(z3, y3, 0x4E);
      z0 = y0, z1 = y1, z2 = y2, z3 = y3;
    } else {
      DW_COLUMN3_HALVES(a, a1, 0, x);
      DW_COLUMN3_HALVES(a, a1, 2, z);
    }
    DW_COLUMN3_HALVES(a, a1, 1, y);
    __m512i t0 = DW_W32(g), t1 = DW_W32(g + 64), t2 = DW_W32(g + 128), t3 = DW_W32(g + 192);
    DW_DOT4_32(t, x, wk);
    DW_DOT4_32(t, y, wk + 512);
    DW_DOT4_32(t, z, wk + 1024);
    if (out == gemmi8_qoutput_s32) {
      /* 128-bit lanes 0, 1: pixel p's channels 0..15, 16..31; 2, 3: pixel p + 1's */
      __m512i vt[4], vout[2][4];
      grouped_to_order(t0, t1, t2, t3, vt);
      vout[0][0] = vt[0];
      vout[0][1] = vt[1];
      vout[1][0] = vt[2];
      vout[1][1] = vt[3];
      vout[0][2] = vout[0][3] = vout[1][2] = vout[1][3] = _mm512_setzero_si512();
      store_s32(pair ? 2 : 1, nc, o + 4 * c0, output_stride, vout);
    } else {
      const __m512i vt = output_bytes(out, oc, pc + DW_GROUPED_VECTORS, t0, t1, t2, t3);
      _mm256_mask_storeu_epi8(o + c0, half, _mm512_castsi512_si256(vt));
      if (pair) {
        _mm256_mask_storeu_epi8(o + output_stride + c0, half, _mm512_extracti64x4_epi64(vt, 1));
      }
    }
  }
}
#undef DW_COLUMN3_HALVES
#undef DW_COLUMN3
#undef DW_DOT4_32
#undef DW_W32
#undef DW_LOAD_HALVES
#undef DW_PIXEL
#undef DW_PAIR_SHARED
#undef DW_DOT4
#undef DW_LOAD_GROUP
#undef DW_GROUP

/* The kernel of KS taps (0: any), for every output kind (the entry points below). */
/* Passes of `step` pixels over pixels [p_begin, p_end) of the call (those past p_end
 * alias the last), each through the channel tiles from c_begin to c_end (multiples of
 * CR, or channels), in the layout each tile's width takes (the file's first
 * comment). */
static GEMMI8_ALWAYS_INLINE void dw_passes(
    const size_t KS, const enum gemmi8_qoutput out, size_t channels, size_t ks,
    const void* const* input, const void* w, void* output, size_t output_stride,
    size_t input_offset, const void* zero, const struct gemmi8_qparams* q, __m512i vxor,
    const struct dw_output* oc, const struct dw_output* ocg, size_t step, size_t p_begin,
    size_t p_end, size_t c_begin, size_t c_end)
{
  const size_t bytes = tile_bytes(ks);
  const size_t out_size = out == gemmi8_qoutput_s32 ? 4 : 1;
  const size_t offset = KS != 0 ? 0 : input_offset;
  for (size_t p = p_begin; p < p_end; p += step) {
    const size_t n = gemmi8_min(step, p_end - p);
    /* the pixels' taps (in scalars: an array here costs a pass stores and reloads) */
    const uint8_t* const* in0 = (const uint8_t* const*) input + p * ks;
    const uint8_t* const* in1 = n > 1 ? in0 + ks : in0;
    const uint8_t* const* in2 = n > 2 ? in0 + 2 * ks : in1;
    const uint8_t* const* in3 = n > 3 ? in0 + 3 * ks : in2;
    /* with the offset applied, once for all their channel tiles (a specialised tap
     * count; otherwise per tile) */
    const uint8_t* adjusted[4][KS != 0 ? KS : 1];
    if (KS != 0 && input_offset != 0) {
      const uint8_t* const* src[4] = {in0, in1, in2, in3};
      for (size_t r = 0; r < 4; r++) {
        for (size_t t = 0; t < KS; t++) {
          adjusted[r][t] = src[r][t] != (const uint8_t*) zero ?
              src[r][t] + input_offset : src[r][t];
        }
      }
      in0 = adjusted[0];
      in1 = adjusted[1];
      in2 = adjusted[2];
      in3 = adjusted[3];
    }
    uint8_t* o = (uint8_t*) output + p * output_stride;
    const uint8_t* tile = (const uint8_t*) w + c_begin / CR * bytes;
    for (size_t c0 = c_begin; c0 < c_end; c0 += CR, tile += bytes) {
      const size_t nc = gemmi8_min(CR, channels - c0);
      const size_t offc = offset + c0;
      const uint8_t* zeroc = (const uint8_t*) zero + c0;
      /* the tile's prepared constants (8-bit outputs; none for int32) */
      const __m512i* pc =
          q->prepared != NULL
              ? (const __m512i*) ((const uint8_t*) q->prepared + c0 / CR * GEMMI8_DWPREPARED_BYTES)
              : NULL;
      if (nc > 32 && KS == 9) {
        dw3x3_pass(out, in0, in1, in2, in3, tile + 256 + 256 * 9, c0, nc, vxor, ocg,
                   pc, o, output_stride, n);
      } else if (nc > 32) {
        __mmask64 mask = nc == CR ? ~(__mmask64) 0 : ((__mmask64) 1 << nc) - 1;
        for (size_t h = 0; h < n; h += 2) {
          const size_t rows = n - h >= 2 ? 2 : 1;
          const uint8_t* const* taps0 = h == 0 ? in0 : in2;
          const uint8_t* const* taps1 = h == 0 ? in1 : in3;
          uint8_t* oh = o + h * output_stride;
          const uint8_t* wt = tile + 256;
          __m512i vacc0 = _mm512_load_si512(tile), vacc1 = _mm512_load_si512(tile + 64);
          __m512i vacc2 = _mm512_load_si512(tile + 128), vacc3 = _mm512_load_si512(tile + 192);
          __m512i vbcc0 = vacc0, vbcc1 = vacc1, vbcc2 = vacc2, vbcc3 = vacc3;
          if (nc == CR) {
            /* a whole tile, plain loads (a masked load is an ALU operation more): 5x5
             * by kernel rows, any count as a loop */
#pragma GCC unroll 5
            for (size_t t = 0; KS == 25 && t < 25; t++) {
              GEMMI8_DW_TAP_FULL(t, GEMMI8_DW_LOAD_WHOLE);
            }
#pragma GCC unroll 1
            for (size_t t = 0; KS == 0 && t < ks; t++) {
              GEMMI8_DW_TAP_FULL(t, GEMMI8_DW_LOAD_WHOLE);
            }
          } else {
            /* 33..63 channels, the last tile of some layers: masked loads, as a loop (the
             * empty asm keeps GCC from merging the two loops into the masked one) */
            __asm__("" : "+r"(mask));
#pragma GCC unroll 1
            for (size_t t = 0; t < ks; t++) GEMMI8_DW_TAP_FULL(t, GEMMI8_DW_LOAD_PART);
          }
          if (out == gemmi8_qoutput_s32) {
            __m512i vout[2][4];
            deinterleave(vacc0, vacc1, vacc2, vacc3, vout[0]);
            deinterleave(vbcc0, vbcc1, vbcc2, vbcc3, vout[1]);
            store_s32(rows, nc, oh + c0 * out_size, output_stride, vout);
          } else {
            _mm512_mask_storeu_epi8(
                oh + c0, mask, output_bytes(out, oc, pc, vacc0, vacc1, vacc2, vacc3));
            if (rows == 2) {
              _mm512_mask_storeu_epi8(
                  oh + output_stride + c0, mask,
                  output_bytes(out, oc, pc, vbcc0, vbcc1, vbcc2, vbcc3));
            }
          }
        }
      } else if (KS == 9) {
        dw3x3_pass32(out, in0, in1, in2, in3, tile + 256 + 256 * 9, c0, nc, vxor, ocg,
                     pc, o, output_stride, n);
      } else if (nc <= 16 && out != gemmi8_qoutput_s32) {
        /* 16 channels or fewer, 8-bit outputs: the four pixels in the 128-bit lanes of
         * each vector (lane r: pixel p + r), the tile's first 16 channels' weights in all
         * four; the prepared constants of such a tile repeat every 4 lanes */
        dw_quad(out, ks, in0, in1, in2, in3, tile, nc, c0, KS != 0, offset, zero,
                vxor, oc, pc, o, output_stride, n);
      } else {
        /* 32 channels or fewer: two pixels in the halves of each vector (vacc: pixels p
         * and p + 1, vbcc: p + 2 and p + 3), the weights of the tile's first 32 channels
         * in both halves, each weight vector loaded once for the two */
        __mmask32 half = (__mmask32) (((uint64_t) 1 << nc) - 1);
        const uint8_t* const* taps0 = in0;
        const uint8_t* const* taps1 = in1;
        const uint8_t* const* taps2 = in2;
        const uint8_t* const* taps3 = in3;
        const uint8_t* wt = tile;
        __m512i vacc0 = GEMMI8_DW_W(0), vacc1 = GEMMI8_DW_W(1);
        __m512i vacc2 = GEMMI8_DW_W(2), vacc3 = GEMMI8_DW_W(3);
        __m512i vbcc0 = vacc0, vbcc1 = vacc1, vbcc2 = vacc2, vbcc3 = vacc3;
        wt += 256;
        if (nc == 32) {
          /* 32 channels (a layer of 32, the last tile of 96, 480, 672): plain loads, 5x5
           * by kernel rows, any count as a loop */
#pragma GCC unroll 5
          for (size_t t = 0; KS == 25 && t < 25; t++)
            GEMMI8_DW_TAP_PAIRS(t, GEMMI8_DW_HALF_WHOLE, GEMMI8_DW_XOR);
#pragma GCC unroll 1
          for (size_t t = 0; KS == 0 && t < ks; t++)
            GEMMI8_DW_TAP_PAIRS(t, GEMMI8_DW_HALF_WHOLE, GEMMI8_DW_XOR);
        } else {
          /* 17..31 channels (or 16 and fewer, int32 output): masked loads, as a loop */
          __asm__("" : "+r"(half));
#pragma GCC unroll 1
          for (size_t t = 0; t < ks; t++) {
            GEMMI8_DW_TAP_PAIRS(t, GEMMI8_DW_HALF_PART, GEMMI8_DW_XOR);
          }
        }
        for (size_t h = 0; h < n; h += 2) {
          const size_t rows = n - h >= 2 ? 2 : 1;
          uint8_t* oh = o + h * output_stride;
          const __m512i v0 = h == 0 ? vacc0 : vbcc0, v1 = h == 0 ? vacc1 : vbcc1;
          const __m512i v2 = h == 0 ? vacc2 : vbcc2, v3 = h == 0 ? vacc3 : vbcc3;
          if (out == gemmi8_qoutput_s32) {
            /* lanes 8..15 read as channels 32..63: pixel p + h + 1's channels 0..31 */
            __m512i v[4], vout[2][4];
            deinterleave(v0, v1, v2, v3, v);
            vout[0][0] = v[0];
            vout[0][1] = v[1];
            vout[1][0] = v[2];
            vout[1][1] = v[3];
            vout[0][2] = vout[0][3] = vout[1][2] = vout[1][3] = _mm512_setzero_si512();
            store_s32(rows, nc, oh + c0 * out_size, output_stride, vout);
          } else {
            /* bytes 0..31: pixel p + h, 32..63: pixel p + h + 1 */
            const __m512i b = output_bytes(out, oc, pc, v0, v1, v2, v3);
            _mm256_mask_storeu_epi8(oh + c0, half, _mm512_castsi512_si256(b));
            if (rows == 2) {
              _mm256_mask_storeu_epi8(oh + output_stride + c0, half,
                                      _mm512_extracti64x4_epi64(b, 1));
            }
          }
        }
      }
    }
  }
}

static GEMMI8_ALWAYS_INLINE void dwconv(const size_t KS, enum gemmi8_qoutput out,
                                        size_t channels, size_t pixels, size_t ks,
                                        const void* const* input, const void* w, void* output,
                                        size_t output_stride, size_t input_offset,
                                        const void* zero, const struct gemmi8_dwparams* params)
{
  if (KS != 0) ks = KS;
  const size_t bytes = tile_bytes(ks);
  const __m512i vxor = _mm512_set1_epi8((char) params->input_xor);
  const struct gemmi8_qparams* q = &params->q;
  struct dw_output oc;
  memset(&oc, 0, sizeof(oc));
  if (out != gemmi8_qoutput_s32) output_constants(params, &oc);
  if (KS == 9 && channels == 16 && out != gemmi8_qoutput_s32) {
    dw16_3x3(out, pixels, (const uint8_t* const*) input, w, output, output_stride, input_offset,
             zero, vxor, &oc, (const __m512i*) q->prepared);
    return;
  }
  if (KS == 0 && channels <= 16 && out != gemmi8_qoutput_s32) {
    /* a layer of 16 channels or fewer, any tap count (a qu8 3x3 layer whose weights
     * take two int8 parts: 18 taps): its one tile, four pixels a pass, with none of the
     * main loop's cost a pass */
    for (size_t p = 0; p < pixels; p += 4) {
      const size_t n = gemmi8_min(4, pixels - p);
      const uint8_t* const* in0 = (const uint8_t* const*) input + p * ks;
      dw_quad(out, ks, in0, in0 + (n > 1 ? ks : 0), in0 + (n > 2 ? 2 * ks : 0),
              in0 + (n > 3 ? 3 * ks : 0), w, channels, 0, 0, input_offset, zero, vxor, &oc,
              (const __m512i*) q->prepared, (uint8_t*) output + p * output_stride,
              output_stride, n);
    }
    return;
  }
  /* four pixels a pass (3x3, or when the last tile has 32 channels or fewer), else two
   * (pixel p + r; those past the last pixel alias the last one, read and computed, never
   * stored), then each channel tile of them in the layout its width takes (dw_passes) */
  const size_t tail = channels % CR;
  const size_t step = (tail != 0 && tail <= 32) || KS == 9 ? 4 : 2;
  /* the 3x3 path's output constants: its bytes come out in channel order */
  struct dw_output oc_grouped = oc;
  oc_grouped.ordered = 1;
  const size_t rows = params->row_pixels;
  size_t p0 = 0;
  if (KS == 9 && rows != 0 && input_offset == 0) {
    /* whole pairs of output rows (params->row_pixels): by tap columns (dw3x3_columns,
     * dw3x3_columns32); what is left (a last row, a part of one) in passes */
    const uint8_t* const* cols = (const uint8_t* const*) params->columns;
    for (; rows <= (pixels - p0) / 2; p0 += 2 * rows, cols += 4 * (rows + 2)) {
      const uint8_t* tile = w;
      for (size_t c0 = 0; c0 < channels; c0 += CR, tile += bytes) {
        const size_t nc = gemmi8_min(CR, channels - c0);
        const uint8_t* prepared = q->prepared;
        const __m512i* pc =
            prepared != NULL ? (const __m512i*) (prepared + c0 / CR * GEMMI8_DWPREPARED_BYTES)
                             : NULL;
        (nc > 32 ? dw3x3_columns : dw3x3_columns32)(
            out, cols, rows, tile + 256 + 256 * 9, c0, nc, vxor, &oc_grouped, pc,
            (uint8_t*) output + p0 * output_stride, output_stride);
      }
    }
  }
  const uint8_t* const* taps = (const uint8_t* const*) input + 9 * p0;
  if (KS == 9 && input_offset == 0 && pixels - p0 >= 2 &&
      (dw_follows2(taps, taps + 9) || (pixels - p0 >= 3 && dw_follows2(taps + 9, taps + 18)))) {
    /* pixels that follow one another as stride 2 makes them: by tap columns
     * (dw3x3_stride2, dw3x3_stride2_32), blocks of pixels each through every tile */
    for (; p0 < pixels; p0 += DW_STRIDE2_BLOCK) {
      const size_t n = gemmi8_min(DW_STRIDE2_BLOCK, pixels - p0);
      const uint8_t* tile = w;
      for (size_t c0 = 0; c0 < channels; c0 += CR, tile += bytes) {
        const size_t nc = gemmi8_min(CR, channels - c0);
        const uint8_t* prepared = q->prepared;
        const __m512i* pc =
            prepared != NULL ? (const __m512i*) (prepared + c0 / CR * GEMMI8_DWPREPARED_BYTES)
                             : NULL;
        (nc > 32 ? dw3x3_stride2 : dw3x3_stride2_32)(
            out, (const uint8_t* const*) input + 9 * p0, n, tile + 256 + 256 * 9, c0, nc, vxor,
            &oc_grouped, pc, (uint8_t*) output + p0 * output_stride, output_stride);
      }
    }
    return;
  }
  dw_passes(KS, out, channels, ks, input, w, output, output_stride, input_offset, zero, q, vxor,
            &oc, &oc_grouped, step, p0, pixels, 0, channels);
}

/* The list's nine kernels (src/microkernel.h). */
GEMMI8_DWCONV_ENTRIES(64, avx512vnni)
