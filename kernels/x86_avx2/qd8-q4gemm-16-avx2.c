/*
 * qd8 rows x 4-bit weights, float output, AVX2: tiles of 1, 2 and 4 rows by 16 columns
 * (src/microkernel.h, struct gemmi8_q4params, says what they compute).
 *
 * A group of 8 depths is 64 bytes for the 16 columns, two ymm of 8 columns x 4 depths:
 * vpand takes the low nibbles (depths 0..3 of each column's lane), vpsrlw 4 and vpand
 * the high ones (depths 4..7). vpmaddubsw multiplies them, as its unsigned operand, by
 * the row's bytes 0..3 and 4..7, broadcast, as its signed one (exact: 2 * 15 * 128 is
 * far below 2^15), vpaddw adds the two (4 * 15 * 128 < 2^15) and vpmaddwd by ones sums
 * each column's four int16 into its int32 lane. The rows are read in place, their last
 * 1..7 bytes of a chunk copied (no read past k). After a chunk, vpmaddwd of the row's
 * (sum, zero point) and the column's (-zp, -sum of q - zp) int16 pairs takes the two
 * cross terms off; the float steps are vcvtdq2ps, vmulps, vaddps (no FMA), the clamp
 * vmaxps with the lower bound first then vminps with the upper bound first (the scalar
 * `out_min > v ? out_min : v`: x86 returns the second operand on a NaN).
 *
 * The groups of a chunk run in inline assembly (with intrinsics GCC spills the
 * accumulators of the 4-row tile): ymm0 / ymm1 the low / high nibbles of 8 columns,
 * ymm2 / ymm3 the row's broadcasts (again for each 8 columns: loads, not registers),
 * ymm4 / ymm5 products, ymm6 the nibble mask, ymm7 int16 ones, ymm8 + 2 i + j the
 * accumulator of row i, columns 8 j .. 8 j + 7. The chunk's sums go to L1 (acc),
 * the float sums and the int32 sums over chunks live there too. (The cross terms and
 * float steps inside the assembly measured no faster: they take the same two ports as
 * the multiplies, about 12 cycles a chunk for 4 rows.)
 */
#include <immintrin.h>

#include "microkernel.h"

#define NR 16

static const uint8_t nibble_mask[32] __attribute__((aligned(32))) = {
    15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,
    15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15};
static const int16_t int16_ones[16] __attribute__((aligned(32))) = {1, 1, 1, 1, 1, 1, 1, 1,
                                                                    1, 1, 1, 1, 1, 1, 1, 1};

/* Row i: its pointer operand, its accumulators (columns 0-7, 8-15), their offsets in
 * acc (int32_t [4][16]). */
#define Q4_R0(X) X("a0", "8", "9", "0", "32")
#define Q4_R1(X) X("a1", "10", "11", "64", "96")
#define Q4_R2(X) X("a2", "12", "13", "128", "160")
#define Q4_R3(X) X("a3", "14", "15", "192", "224")
#define Q4_ROWS_1(X) Q4_R0(X)
#define Q4_ROWS_2(X) Q4_ROWS_1(X) Q4_R1(X)
#define Q4_ROWS_4(X) Q4_ROWS_2(X) Q4_R2(X) Q4_R3(X)

#define Q4_ZERO(a, c0, c1, m0, m1) "vpxor %%xmm" c0 ", %%xmm" c0 ", %%xmm" c0 "\n\t" \
                                   "vpxor %%xmm" c1 ", %%xmm" c1 ", %%xmm" c1 "\n\t"
#define Q4_STORE(a, c0, c1, m0, m1) "vmovdqa %%ymm" c0 ", " m0 "(%[acc])\n\t" \
                                    "vmovdqa %%ymm" c1 ", " m1 "(%[acc])\n\t"
/* nibbles of 8 columns at byte offset o of the group into ymm0 (low) and ymm1 (high) */
#define Q4_NIBBLES(o) "vmovdqa " o "(%[q]), %%ymm0\n\t"  \
                      "vpsrlw $4, %%ymm0, %%ymm1\n\t"    \
                      "vpand %%ymm6, %%ymm0, %%ymm0\n\t" \
                      "vpand %%ymm6, %%ymm1, %%ymm1\n\t"
/* one row's products with them, into its accumulator c */
#define Q4_DOT(a, c)                                   \
  "vpbroadcastd (%[" a "],%[d]), %%ymm2\n\t"           \
  "vpbroadcastd 4(%[" a "],%[d]), %%ymm3\n\t"          \
  "vpmaddubsw %%ymm2, %%ymm0, %%ymm4\n\t"              \
  "vpmaddubsw %%ymm3, %%ymm1, %%ymm5\n\t"              \
  "vpaddw %%ymm5, %%ymm4, %%ymm4\n\t"                  \
  "vpmaddwd %%ymm7, %%ymm4, %%ymm4\n\t"                \
  "vpaddd %%ymm4, %%ymm" c ", %%ymm" c "\n\t"
#define Q4_DOT_0(a, c0, c1, m0, m1) Q4_DOT(a, c0)
#define Q4_DOT_1(a, c0, c1, m0, m1) Q4_DOT(a, c1)

/* The n (>= 1) whole groups of a chunk: its sums into acc, row i's bytes read from
 * a_i + d, d = 0, 8, ... */
#define Q4_GROUPS(ROWS)                                                                   \
  __asm__ volatile("vmovdqa %[mask], %%ymm6\n\t"                                          \
                   "vmovdqa %[ones], %%ymm7\n\t" ROWS(Q4_ZERO)                            \
                   "1:\n\t" Q4_NIBBLES("0") ROWS(Q4_DOT_0) Q4_NIBBLES("32") ROWS(Q4_DOT_1) \
                   "add $64, %[q]\n\t"                                                    \
                   "add $8, %[d]\n\t"                                                     \
                   "dec %[n]\n\t"                                                         \
                   "jnz 1b\n\t" ROWS(Q4_STORE)                                            \
                   : [q] "+r"(q), [d] "+r"(d), [n] "+r"(n)                                \
                   : [a0] "r"(a0), [a1] "r"(a1), [a2] "r"(a2), [a3] "r"(a3),              \
                     [acc] "r"(acc), [mask] "m"(nibble_mask), [ones] "m"(int16_ones)      \
                   : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",      \
                     "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",  \
                     "xmm14", "xmm15")

/* The last 1..7 bytes of a row's chunk, zero-extended: no read past k. */
static inline uint64_t tail_bytes(const int8_t* p, size_t n)
{
  uint64_t v = 0;
  for (size_t x = 0; x < n; x++) v |= (uint64_t) (uint8_t) p[x] << (8 * x);
  return v;
}

static inline __attribute__((always_inline)) void q4gemm(
    const size_t MR, size_t mr, size_t nr, size_t k, const int8_t* a, size_t a_stride,
    const void* w, float* c, size_t c_stride, const struct gemmi8_q4params* p)
{
  const int8_t* ap[4];
  const int32_t* rp[4];
  #pragma GCC unroll 4
  for (size_t i = 0; i < 4; i++) {
    const size_t r = i < mr ? i : mr - 1;
    ap[i] = a + r * a_stride;
    rp[i] = p->row_pairs + r * p->pairs_stride;
  }
  const __m256i vnib = _mm256_set1_epi8(0x0F), vones = _mm256_set1_epi16(1);
  /* a chunk's sums; the float sums (per_chunk) or the int32 sums of every chunk */
  int32_t acc[4][NR] __attribute__((aligned(32)));
  float fsum[4][NR] __attribute__((aligned(32)));
  int32_t isum[4][NR] __attribute__((aligned(32)));
  #pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    #pragma GCC unroll 2
    for (size_t j = 0; j < 2; j++) {
      _mm256_store_ps(fsum[i] + 8 * j, _mm256_setzero_ps());
      _mm256_store_si256((__m256i*) (isum[i] + 8 * j), _mm256_setzero_si256());
    }
  }
  const uint8_t* wp = w;
  const float* scales = NULL;
  const size_t chunk = p->chunk;
  const int per_chunk = p->per_chunk;
  size_t ci = 0;
  for (size_t k0 = 0; k0 < k; k0 += chunk, ci++) {
    const size_t len = k - k0 < chunk ? k - k0 : chunk;
    const int32_t* pairs = (const int32_t*) wp;
    scales = (const float*) (wp + 4 * NR);
    const uint8_t* q = wp + 8 * NR;
    /* the chunk's pairs and scales, read after its nibbles: asked for first, so that the
     * weights are read in address order (the hardware's stream prefetch follows); with
     * blocks only, where a header comes every 32 to 256 depths (per channel, every 256,
     * it measured no gain) */
    if (per_chunk) {
      _mm_prefetch((const char*) wp, _MM_HINT_T0);
      _mm_prefetch((const char*) wp + 64, _MM_HINT_T0);
    }
    size_t n = len / 8, d = 0;
    if (n != 0) {
      const int8_t *a0 = ap[0] + k0, *a1 = ap[1] + k0, *a2 = ap[2] + k0, *a3 = ap[3] + k0;
      if (MR == 1) {
        Q4_GROUPS(Q4_ROWS_1);
      } else if (MR == 2) {
        Q4_GROUPS(Q4_ROWS_2);
      } else {
        Q4_GROUPS(Q4_ROWS_4);
      }
    } else {
      #pragma GCC unroll 4
      for (size_t i = 0; i < MR; i++) {
        _mm256_store_si256((__m256i*) acc[i], _mm256_setzero_si256());
        _mm256_store_si256((__m256i*) (acc[i] + 8), _mm256_setzero_si256());
      }
    }
    if (d < len) {
      /* the last 1..7 depths: only they are read from the rows */
      const size_t rest = len - d;
      #pragma GCC unroll 4
      for (size_t i = 0; i < MR; i++) {
        const uint64_t bytes = tail_bytes(ap[i] + k0 + d, rest);
        const __m256i va = _mm256_set1_epi32((int32_t) (uint32_t) bytes);
        const __m256i vb = _mm256_set1_epi32((int32_t) (uint32_t) (bytes >> 32));
        #pragma GCC unroll 2
        for (size_t j = 0; j < 2; j++) {
          const __m256i v = _mm256_load_si256((const __m256i*) (q + 32 * j));
          const __m256i lo = _mm256_and_si256(v, vnib);
          const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), vnib);
          const __m256i s = _mm256_add_epi16(_mm256_maddubs_epi16(lo, va),
                                             _mm256_maddubs_epi16(hi, vb));
          __m256i* sum = (__m256i*) (acc[i] + 8 * j);
          _mm256_store_si256(sum, _mm256_add_epi32(_mm256_load_si256(sum),
                                                   _mm256_madd_epi16(s, vones)));
        }
      }
      q += 64;
    }
    #pragma GCC unroll 2
    for (size_t j = 0; j < 2; j++) {
      const __m256i vpair = _mm256_load_si256((const __m256i*) (pairs + 8 * j));
      const __m256 vs = _mm256_load_ps(scales + 8 * j);
      #pragma GCC unroll 4
      for (size_t i = 0; i < MR; i++) {
        const __m256i vt =
            _mm256_add_epi32(_mm256_load_si256((const __m256i*) (acc[i] + 8 * j)),
                             _mm256_madd_epi16(_mm256_set1_epi32(rp[i][ci]), vpair));
        if (per_chunk) {
          const __m256 vp = _mm256_mul_ps(_mm256_cvtepi32_ps(vt), vs);
          _mm256_store_ps(fsum[i] + 8 * j, _mm256_add_ps(_mm256_load_ps(fsum[i] + 8 * j), vp));
        } else {
          __m256i* sum = (__m256i*) (isum[i] + 8 * j);
          _mm256_store_si256(sum, _mm256_add_epi32(_mm256_load_si256(sum), vt));
        }
      }
    }
    wp = q;
  }
  /* the bias of nr columns: masked loads (no read past nr) */
  const __m256i viota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i vmask0 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t) nr), viota);
  const __m256i vmask1 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t) nr - 8), viota);
  const __m256 vbias0 = _mm256_maskload_ps(p->col_bias, vmask0);
  const __m256 vbias1 = _mm256_maskload_ps(p->col_bias + 8, vmask1);
  const __m256 vs0 = _mm256_load_ps(scales), vs1 = _mm256_load_ps(scales + 8);
  const __m256 vmin = _mm256_set1_ps(p->out_min), vmax = _mm256_set1_ps(p->out_max);
  #pragma GCC unroll 4
  for (size_t i = 0; i < MR; i++) {
    if (i < mr) {
      __m256 f0 = _mm256_load_ps(fsum[i]), f1 = _mm256_load_ps(fsum[i] + 8);
      if (!per_chunk) {
        /* +0.0f plus the product, as the generic kernel's */
        const __m256i t0 = _mm256_load_si256((const __m256i*) isum[i]);
        const __m256i t1 = _mm256_load_si256((const __m256i*) (isum[i] + 8));
        f0 = _mm256_add_ps(f0, _mm256_mul_ps(_mm256_cvtepi32_ps(t0), vs0));
        f1 = _mm256_add_ps(f1, _mm256_mul_ps(_mm256_cvtepi32_ps(t1), vs1));
      }
      const __m256 vrs = _mm256_broadcast_ss(p->row_scale + i);
      f0 = _mm256_add_ps(_mm256_mul_ps(f0, vrs), vbias0);
      f1 = _mm256_add_ps(_mm256_mul_ps(f1, vrs), vbias1);
      f0 = _mm256_min_ps(vmax, _mm256_max_ps(vmin, f0));
      f1 = _mm256_min_ps(vmax, _mm256_max_ps(vmin, f1));
      float* cr = (float*) ((uint8_t*) c + i * c_stride);
      if (nr == NR) {
        _mm256_storeu_ps(cr, f0);
        _mm256_storeu_ps(cr + 8, f1);
      } else {
        _mm256_maskstore_ps(cr, vmask0, f0);
        _mm256_maskstore_ps(cr + 8, vmask1, f1);
      }
    }
  }
}

#define Q4GEMM_KERNEL(MR)                                                                    \
  void gemmi8_qd8_q4gemm_ukernel_##MR##x16__avx2(                                            \
      size_t mr, size_t nr, size_t k, const int8_t* a, size_t a_stride, const void* w,       \
      float* c, size_t c_stride, const struct gemmi8_q4params* p)                            \
  {                                                                                          \
    q4gemm(MR, mr, nr, k, a, a_stride, w, c, c_stride, p);                                   \
  }
Q4GEMM_KERNEL(1)
Q4GEMM_KERNEL(2)
Q4GEMM_KERNEL(4)
