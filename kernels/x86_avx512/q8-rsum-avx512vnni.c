/*
 * Row sums of uint8 (qu8) or int8 (qs8) rows, AVX-512BW: vpsadbw against zero adds
 * 8 bytes into each quadword; int8 rows are flipped to uint8 (x ^ 0x80 = x + 128)
 * and corrected by 128 per byte. The tail is a masked load: no read past a row.
 */
#include <immintrin.h>

#include "microkernel.h"

static inline int32_t row_sum_u8(size_t k, const uint8_t* a)
{
  __m512i vsum = _mm512_setzero_si512();
  const __m512i vzero = _mm512_setzero_si512();
  size_t kk = 0;
  for (; kk + 64 <= k; kk += 64) {
    vsum = _mm512_add_epi64(vsum, _mm512_sad_epu8(_mm512_loadu_si512(a + kk), vzero));
  }
  if (kk < k) {
    const __mmask64 tail = _bzhi_u64(~UINT64_C(0), (unsigned) (k - kk));
    vsum = _mm512_add_epi64(vsum, _mm512_sad_epu8(_mm512_maskz_loadu_epi8(tail, a + kk), vzero));
  }
  return (int32_t) _mm512_reduce_add_epi64(vsum);
}

static inline int32_t row_sum_s8(size_t k, const uint8_t* a)
{
  __m512i vsum = _mm512_setzero_si512();
  const __m512i vflip = _mm512_set1_epi8((char) 0x80);
  size_t kk = 0;
  for (; kk + 64 <= k; kk += 64) {
    const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(a + kk), vflip);
    vsum = _mm512_add_epi64(vsum, _mm512_sad_epu8(v, _mm512_setzero_si512()));
  }
  if (kk < k) {
    const __mmask64 tail = _bzhi_u64(~UINT64_C(0), (unsigned) (k - kk));
    /* masked-off bytes become 0x80 after the flip: 128 each, removed below */
    const __m512i v = _mm512_xor_si512(_mm512_maskz_loadu_epi8(tail, a + kk), vflip);
    vsum = _mm512_add_epi64(vsum, _mm512_sad_epu8(v, _mm512_setzero_si512()));
  }
  return (int32_t) (_mm512_reduce_add_epi64(vsum) - 128 * (int64_t) gemmi8_round_up(k, 64));
}

/* Rows of at most 64 bytes, eight at a time: one masked load and vpsadbw per row,
 * then a transposing add tree turns the eight rows' quadword partials into eight
 * sums at once (instead of eight horizontal reductions). flip as in row_sum_s8. */
static inline __m512i sad8(const uint8_t* p, __mmask64 valid, __m512i vflip)
{
  return _mm512_sad_epu8(_mm512_xor_si512(_mm512_maskz_loadu_epi8(valid, p), vflip),
                         _mm512_setzero_si512());
}

static inline __m512i pair_sum(__m512i x, __m512i y)
{
  return _mm512_add_epi64(_mm512_unpacklo_epi64(x, y), _mm512_unpackhi_epi64(x, y));
}

static inline __m512i lane_sum(__m512i x, __m512i y)
{
  return _mm512_add_epi64(_mm512_shuffle_i64x2(x, y, 0x88), _mm512_shuffle_i64x2(x, y, 0xDD));
}

static inline size_t short_rows8(size_t m, size_t k, const uint8_t* a, size_t a_stride,
                                 int32_t* sums, uint8_t flip)
{
  const __mmask64 valid = _bzhi_u64(~UINT64_C(0), (unsigned) k);
  const __m512i vflip = _mm512_set1_epi8((char) flip);
  const __m256i voffset = _mm256_set1_epi32(flip ? 128 * 64 : 0);
  size_t i = 0;
  for (; i + 8 <= m; i += 8) {
    const uint8_t* p = a + i * a_stride;
    const __m512i t0 = pair_sum(sad8(p, valid, vflip), sad8(p + a_stride, valid, vflip));
    const __m512i t1 =
        pair_sum(sad8(p + 2 * a_stride, valid, vflip), sad8(p + 3 * a_stride, valid, vflip));
    const __m512i t2 =
        pair_sum(sad8(p + 4 * a_stride, valid, vflip), sad8(p + 5 * a_stride, valid, vflip));
    const __m512i t3 =
        pair_sum(sad8(p + 6 * a_stride, valid, vflip), sad8(p + 7 * a_stride, valid, vflip));
    const __m512i v = lane_sum(lane_sum(t0, t1), lane_sum(t2, t3));
    _mm256_storeu_si256((__m256i*) (sums + i),
                        _mm256_sub_epi32(_mm512_cvtepi64_epi32(v), voffset));
  }
  return i;
}

#if GEMMI8_KERNELS_qu8
void gemmi8_qu8_rsum__avx512vnni(size_t m, size_t k, const void* a, size_t a_stride,
                                 int32_t* sums)
{
  size_t i = k <= 64 ? short_rows8(m, k, a, a_stride, sums, 0) : 0;
  for (; i < m; i++) sums[i] = row_sum_u8(k, (const uint8_t*) a + i * a_stride);
}
#endif

#if GEMMI8_KERNELS_qs8
void gemmi8_qs8_rsum__avx512vnni(size_t m, size_t k, const void* a, size_t a_stride,
                                 int32_t* sums)
{
  size_t i = k <= 64 ? short_rows8(m, k, a, a_stride, sums, 0x80) : 0;
  for (; i < m; i++) sums[i] = row_sum_s8(k, (const uint8_t*) a + i * a_stride);
}
#endif

/* Sums of rows read through an indirection buffer (the convolution's igemm row
 * tiles): row i of the tile is ks taps of kc bytes at a[t * mr + i] (a_offset added
 * unless the pointer is zero). Each tap is read in 64-byte pieces, the last one
 * masked; int8 bytes are flipped as above and each byte of every masked piece
 * (round_up(kc, 64) per tap) is corrected by 128. */
static inline void indirect_sums(size_t mr, size_t rows, size_t kc, size_t ks,
                                 const void* const* a, size_t a_offset, const void* zero,
                                 int32_t* sums, uint8_t flip)
{
  const __m512i vflip = _mm512_set1_epi8((char) flip);
  const __m512i vzero = _mm512_setzero_si512();
  const size_t tail = kc % 64, body = kc - tail;
  const __mmask64 tail_mask = _bzhi_u64(~UINT64_C(0), (unsigned) tail);
  const int64_t correction = flip ? 128 * (int64_t) ks * (int64_t) gemmi8_round_up(kc, 64) : 0;
  if (kc <= 64 && rows <= 8) {
    /* taps of one piece (a convolution's first layers and small groups): the rows'
     * partial sums side by side, reduced together by the transposing add tree */
    __m512i v[8];
#pragma GCC unroll 8
    for (size_t i = 0; i < 8; i++) v[i] = vzero;
    const __mmask64 mask = _bzhi_u64(~UINT64_C(0), (unsigned) kc);
    for (size_t t = 0; t < ks; t++) {
#pragma GCC unroll 8
      for (size_t i = 0; i < 8; i++) {
        if (i < rows) {
          const uint8_t* p = (const uint8_t*) a[t * mr + i];
          if (p != (const uint8_t*) zero) p += a_offset;
          v[i] = _mm512_add_epi64(v[i], sad8(p, mask, vflip));
        }
      }
    }
    const __m512i total = lane_sum(lane_sum(pair_sum(v[0], v[1]), pair_sum(v[2], v[3])),
                                   lane_sum(pair_sum(v[4], v[5]), pair_sum(v[6], v[7])));
    const __m256i sum32 = _mm256_sub_epi32(_mm512_cvtepi64_epi32(total),
                                           _mm256_set1_epi32((int32_t) correction));
    _mm256_mask_storeu_epi32(sums, (__mmask8) ((1u << rows) - 1), sum32);
    return;
  }
  for (size_t i = 0; i < rows; i++) {
    __m512i vsum = _mm512_setzero_si512();
    for (size_t t = 0; t < ks; t++) {
      const uint8_t* p = (const uint8_t*) a[t * mr + i];
      if (p != (const uint8_t*) zero) p += a_offset;
      for (size_t kk = 0; kk < body; kk += 64) {
        const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(p + kk), vflip);
        vsum = _mm512_add_epi64(vsum, _mm512_sad_epu8(v, vzero));
      }
      if (tail != 0) {
        const __m512i v = _mm512_xor_si512(_mm512_maskz_loadu_epi8(tail_mask, p + body), vflip);
        vsum = _mm512_add_epi64(vsum, _mm512_sad_epu8(v, vzero));
      }
    }
    sums[i] = (int32_t) (_mm512_reduce_add_epi64(vsum) - correction);
  }
}

#if GEMMI8_KERNELS_qu8
void gemmi8_qu8_irsum__avx512vnni(size_t mr, size_t rows, size_t kc, size_t ks,
                                  const void* const* a, size_t a_offset, const void* zero,
                                  int32_t* sums)
{
  indirect_sums(mr, rows, kc, ks, a, a_offset, zero, sums, 0);
}
#endif

#if GEMMI8_KERNELS_qs8
void gemmi8_qs8_irsum__avx512vnni(size_t mr, size_t rows, size_t kc, size_t ks,
                                  const void* const* a, size_t a_offset, const void* zero,
                                  int32_t* sums)
{
  indirect_sums(mr, rows, kc, ks, a, a_offset, zero, sums, 0x80);
}
#endif
