/*
 * AVX2 qu8 / qs8 GEMM microkernel template: MR x 16 (MR <= 6), k pairs (c2).
 *
 * Exact for every input: both operands are int16 and multiplied with vpmaddwd, whose
 * sums of two products (|.| <= 2 * 255 * 255) always fit in int32. vpmaddubsw,
 * which saturates, is never used.
 *
 * Packed block (gemmi8_qpack_goi_s16__generic, src/microkernel.h): int32 bias'[16], then
 * [k/2][16][2] int16 weights w = B - b_zp. 32 bytes hold one k pair of 8 columns,
 * (w[n][k], w[n][k+1]) in the dword of column n. So
 *   acc = bias'[n] + sum_k a[k] * w[n][k]
 * exactly (mod 2^32), for qu8 and qs8 alike, with no row sums and no coef term; the
 * two types differ only in how a is widened (zero- or sign-extended).
 *
 * The rows of a are widened to int16, KC depths at a time, into a stack buffer (row
 * i at i * 1024 bytes); a k pair of row i is then one dword broadcast straight from
 * memory (vpbroadcastd: a load, no shuffle). The full 6 x 16 tile widens inside its
 * k loop, one block of 16 depths ahead. One k pair of the 6 x 16 tile:
 *   vb0, vb1        = 64 bytes of w                               2 loads
 *   va              = broadcast(a_i[k], a_i[k+1])                 a load per row
 *   vacc<i>x<j>    += vpmaddwd(va, vb<j>)                         12 multiply-adds
 *
 * The k loop is a small inline-asm loop (below), one per row count and column-group
 * count, plus one for the full tile that also widens a: compilers otherwise spill
 * some of the 12 accumulators (GCC 12 did: a third slower). Registers: row i in
 * ymm(2i) (columns 0-7) and ymm(2i+1) (columns 8-15), vb0/vb1 in ymm12/ymm13, va in
 * ymm14, the product in ymm15. Accumulators enter and leave the loop through memory
 * once per chunk of KC depths.
 *
 * Remainders: only the mr rows are widened and multiplied (a loop for each row
 * count); rows past mr keep the bias and are never stored. Narrow tiles (nr <= 8)
 * compute one column group. The depth tail is read as the last 16 bytes of the row
 * shifted down (in 8/4/2/1-byte pieces when the row is shorter than 16): no read
 * past the end of a row of a. The output stages (output-avx2.h) requantize in
 * registers; columns past nr are stored 8/4/2/1 at a time and parameter arrays are
 * read for nr columns only (vpmaskmovd).
 */
#ifndef GEMMI8_QGEMM_AVX2_H
#define GEMMI8_QGEMM_AVX2_H

#include <immintrin.h>
#include <string.h>

#include "output-avx2.h"


/* Depths widened per chunk, a multiple of 16; rows of the chunk buffer are
 * KC int16 = 1024 bytes apart, the offsets written in the asm loops below. */
#define GEMMI8_AVX2_KC 512
_Static_assert(GEMMI8_AVX2_KC * sizeof(int16_t) == 1024, "asm row offsets");

/* ---- loading rows of a ------------------------------------------------------------ */

/* pshufb controls that move the last n bytes of a 16-byte load to the front and
 * zero the rest: the control for n is at offset 16 - n. */
static const uint8_t gemmi8_avx2_tail_control[32] = {
    0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,   11,   12,   13,   14,   15,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};

/* Bytes p[0..n) (n in 1..15), zero-filled above. `before` bytes of the same row
 * precede p: with at least 16 - n of them, one load ending at p + n, shifted down;
 * otherwise pieces of 8/4/2/1 bytes. Never reads outside [p - before, p + n). */
static GEMMI8_ALWAYS_INLINE __m128i gemmi8_load_tail_avx2(const uint8_t* p, size_t n,
                                                         size_t before)
{
  if (before + n >= 16) {
    const __m128i v = _mm_loadu_si128((const __m128i*) (p + n - 16));
    const __m128i control =
        _mm_loadu_si128((const __m128i*) (gemmi8_avx2_tail_control + 16 - n));
    return _mm_shuffle_epi8(v, control);
  }
  const uint8_t* q = p + (n & 8);
  uint64_t rest = 0;
  size_t off = 0;
  if (n & 4) {
    uint32_t t;
    memcpy(&t, q, 4);
    rest = t;
    off = 4;
  }
  if (n & 2) {
    uint16_t t;
    memcpy(&t, q + off, 2);
    rest |= (uint64_t) t << (8 * off);
    off += 2;
  }
  if (n & 1) rest |= (uint64_t) q[off] << (8 * off);
  uint64_t lo = rest, hi = 0;
  if (n & 8) {
    memcpy(&lo, p, 8);
    hi = rest;
  }
  return _mm_set_epi64x((long long) hi, (long long) lo);
}

static GEMMI8_ALWAYS_INLINE __m256i gemmi8_widen_avx2(const int is_signed, __m128i v)
{
  return is_signed ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v);
}

/* Depths k0..k0+n of a row (n in 1..KC) as int16, zero-padded to a multiple of 16. */
static GEMMI8_ALWAYS_INLINE void gemmi8_widen_row_avx2(const int is_signed, const uint8_t* row,
                                                      size_t k0, size_t n, int16_t* out)
{
  const uint8_t* a = row + k0;
  size_t kk = 0;
  for (; kk + 16 <= n; kk += 16) {
    const __m128i v = _mm_loadu_si128((const __m128i*) (a + kk));
    _mm256_store_si256((__m256i*) (out + kk), gemmi8_widen_avx2(is_signed, v));
  }
  if (kk < n) {
    const __m128i v = gemmi8_load_tail_avx2(a + kk, n - kk, k0 + kk);
    _mm256_store_si256((__m256i*) (out + kk), gemmi8_widen_avx2(is_signed, v));
  }
}

/* ---- the k loop ----------------------------------------------------------------------
 * Row i: broadcast offset in the chunk buffer, accumulator registers, and offsets
 * of the accumulators in memory (__m256i acc[6][2]). */
#define GEMMI8_AVX2_R0(X) X("0", "0", "1", "0", "32")
#define GEMMI8_AVX2_R1(X) X("1024", "2", "3", "64", "96")
#define GEMMI8_AVX2_R2(X) X("2048", "4", "5", "128", "160")
#define GEMMI8_AVX2_R3(X) X("3072", "6", "7", "192", "224")
#define GEMMI8_AVX2_R4(X) X("4096", "8", "9", "256", "288")
#define GEMMI8_AVX2_R5(X) X("5120", "10", "11", "320", "352")
#define GEMMI8_AVX2_ROWS_1(X) GEMMI8_AVX2_R0(X)
#define GEMMI8_AVX2_ROWS_2(X) GEMMI8_AVX2_ROWS_1(X) GEMMI8_AVX2_R1(X)
#define GEMMI8_AVX2_ROWS_3(X) GEMMI8_AVX2_ROWS_2(X) GEMMI8_AVX2_R2(X)
#define GEMMI8_AVX2_ROWS_4(X) GEMMI8_AVX2_ROWS_3(X) GEMMI8_AVX2_R3(X)
#define GEMMI8_AVX2_ROWS_5(X) GEMMI8_AVX2_ROWS_4(X) GEMMI8_AVX2_R4(X)
#define GEMMI8_AVX2_ROWS_6(X) GEMMI8_AVX2_ROWS_5(X) GEMMI8_AVX2_R5(X)

/* vacc += vpmaddwd(va, vb) */
#define GEMMI8_AVX2_MADD(vb, c) \
  "vpmaddwd %%ymm" vb ", %%ymm14, %%ymm15\n\tvpaddd %%ymm15, %%ymm" c ", %%ymm" c "\n\t"
/* one k pair of one row, for one or two column groups */
#define GEMMI8_AVX2_STEP_1(a, c0, c1, m0, m1) \
  "vpbroadcastd " a "(%[a]), %%ymm14\n\t" GEMMI8_AVX2_MADD("12", c0)
#define GEMMI8_AVX2_STEP_2(a, c0, c1, m0, m1) \
  GEMMI8_AVX2_STEP_1(a, c0, c1, m0, m1) GEMMI8_AVX2_MADD("13", c1)
#define GEMMI8_AVX2_LOAD_1(a, c0, c1, m0, m1) "vmovdqa " m0 "(%[acc]), %%ymm" c0 "\n\t"
#define GEMMI8_AVX2_LOAD_2(a, c0, c1, m0, m1) \
  GEMMI8_AVX2_LOAD_1(a, c0, c1, m0, m1) "vmovdqa " m1 "(%[acc]), %%ymm" c1 "\n\t"
#define GEMMI8_AVX2_STORE_1(a, c0, c1, m0, m1) "vmovdqa %%ymm" c0 ", " m0 "(%[acc])\n\t"
#define GEMMI8_AVX2_STORE_2(a, c0, c1, m0, m1) \
  GEMMI8_AVX2_STORE_1(a, c0, c1, m0, m1) "vmovdqa %%ymm" c1 ", " m1 "(%[acc])\n\t"
#define GEMMI8_AVX2_LOAD_B_1 "vmovdqa 0(%[w]), %%ymm12\n\t"
#define GEMMI8_AVX2_LOAD_B_2 GEMMI8_AVX2_LOAD_B_1 "vmovdqa 32(%[w]), %%ymm13\n\t"

/* n (>= 1) k pairs of ROWS rows and NJ column groups; w advances by 64 bytes
 * (16 columns x 2 depths x int16) per pair, a by one dword. */
#define GEMMI8_AVX2_LOOP(ROWS, NJ)                                                        \
  __asm__ volatile(ROWS(GEMMI8_AVX2_LOAD_##NJ)                                           \
                   "1:\n\t" GEMMI8_AVX2_LOAD_B_##NJ ROWS(GEMMI8_AVX2_STEP_##NJ)          \
                   "add $64, %[w]\n\t"                                                   \
                   "add $4, %[a]\n\t"                                                    \
                   "dec %[n]\n\t"                                                        \
                   "jnz 1b\n\t" ROWS(GEMMI8_AVX2_STORE_##NJ)                             \
                   : [w] "+r"(w), [a] "+r"(a), [n] "+r"(n)                               \
                   : [acc] "r"(acc)                                                      \
                   : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",     \
                     "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", \
                     "xmm14", "xmm15")

#define GEMMI8_AVX2_LOOPS(NJ)                                   \
  switch (rows) {                                               \
    case 1: GEMMI8_AVX2_LOOP(GEMMI8_AVX2_ROWS_1, NJ); break;    \
    case 2: GEMMI8_AVX2_LOOP(GEMMI8_AVX2_ROWS_2, NJ); break;    \
    case 3: GEMMI8_AVX2_LOOP(GEMMI8_AVX2_ROWS_3, NJ); break;    \
    case 4: GEMMI8_AVX2_LOOP(GEMMI8_AVX2_ROWS_4, NJ); break;    \
    case 5: GEMMI8_AVX2_LOOP(GEMMI8_AVX2_ROWS_5, NJ); break;    \
    default: GEMMI8_AVX2_LOOP(GEMMI8_AVX2_ROWS_6, NJ); break;   \
  }

/* Accumulates n k pairs of `rows` (1..6) rows into acc; returns the advanced w. */
static GEMMI8_ALWAYS_INLINE const uint8_t* gemmi8_avx2_pairs(const size_t NJ, size_t rows,
                                                             size_t n, const uint8_t* w,
                                                             const int16_t* a,
                                                             __m256i acc[6][2])
{
  if (NJ == 1) {
    GEMMI8_AVX2_LOOPS(1)
  } else {
    GEMMI8_AVX2_LOOPS(2)
  }
  return w;
}

/* The full 6 x 16 tile's k loop, over blocks of 8 k pairs (16 depths), that also
 * widens the next block of a: in pair p (0..5) of a block, 16 depths of row p from
 * src (rows 0-2 at src + {0,1,2} * stride, rows 3-5 at src3 + {0,1,2} * stride) into
 * the chunk buffer one block ahead (dst, row p at p * 1024 bytes), through ymm14
 * before it takes the broadcast. The widening then rides in the load/store ports and
 * the shuffle unit, which the multiply-adds leave idle, instead of taking a pass of
 * its own (about 10% of the time of a long-K tile). The block written is read one
 * iteration later. */
#define GEMMI8_AVX2_B2(o0, o1) "vmovdqa " o0 "(%[w]), %%ymm12\n\tvmovdqa " o1 "(%[w]), %%ymm13\n\t"
#define GEMMI8_AVX2_BM(o, c0, c1) \
  "vpbroadcastd " o "(%[a]), %%ymm14\n\t" GEMMI8_AVX2_MADD("12", c0) GEMMI8_AVX2_MADD("13", c1)
#define GEMMI8_AVX2_PAIR6(ob0, ob1, o0, o1, o2, o3, o4, o5)                                \
  GEMMI8_AVX2_B2(ob0, ob1) GEMMI8_AVX2_BM(o0, "0", "1") GEMMI8_AVX2_BM(o1, "2", "3")       \
  GEMMI8_AVX2_BM(o2, "4", "5") GEMMI8_AVX2_BM(o3, "6", "7") GEMMI8_AVX2_BM(o4, "8", "9")   \
  GEMMI8_AVX2_BM(o5, "10", "11")
#define GEMMI8_AVX2_WIDEN(insn, src, d) insn " " src ", %%ymm14\n\tvmovdqa %%ymm14, " d "(%[dst])\n\t"
#define GEMMI8_AVX2_LOOP_W(insn)                                                             \
  __asm__ volatile(                                                                        \
      GEMMI8_AVX2_ROWS_6(GEMMI8_AVX2_LOAD_2)                                               \
      "1:\n\t"                                                                             \
      GEMMI8_AVX2_WIDEN(insn, "(%[src])", "0")                                             \
      GEMMI8_AVX2_PAIR6("0", "32", "0", "1024", "2048", "3072", "4096", "5120")            \
      GEMMI8_AVX2_WIDEN(insn, "(%[src],%[stride],1)", "1024")                              \
      GEMMI8_AVX2_PAIR6("64", "96", "4", "1028", "2052", "3076", "4100", "5124")           \
      GEMMI8_AVX2_WIDEN(insn, "(%[src],%[stride],2)", "2048")                              \
      GEMMI8_AVX2_PAIR6("128", "160", "8", "1032", "2056", "3080", "4104", "5128")         \
      GEMMI8_AVX2_WIDEN(insn, "(%[src3])", "3072")                                         \
      GEMMI8_AVX2_PAIR6("192", "224", "12", "1036", "2060", "3084", "4108", "5132")        \
      GEMMI8_AVX2_WIDEN(insn, "(%[src3],%[stride],1)", "4096")                             \
      GEMMI8_AVX2_PAIR6("256", "288", "16", "1040", "2064", "3088", "4112", "5136")        \
      GEMMI8_AVX2_WIDEN(insn, "(%[src3],%[stride],2)", "5120")                             \
      GEMMI8_AVX2_PAIR6("320", "352", "20", "1044", "2068", "3092", "4116", "5140")        \
      GEMMI8_AVX2_PAIR6("384", "416", "24", "1048", "2072", "3096", "4120", "5144")        \
      GEMMI8_AVX2_PAIR6("448", "480", "28", "1052", "2076", "3100", "4124", "5148")        \
      "add $512, %[w]\n\t"                                                                 \
      "add $32, %[a]\n\t"                                                                  \
      "add $16, %[src]\n\t"                                                                \
      "add $16, %[src3]\n\t"                                                               \
      "add $32, %[dst]\n\t"                                                                \
      "dec %[n]\n\t"                                                                       \
      "jnz 1b\n\t" GEMMI8_AVX2_ROWS_6(GEMMI8_AVX2_STORE_2)                                 \
      : [w] "+r"(w), [a] "+r"(a), [n] "+r"(n), [src] "+r"(src), [src3] "+r"(src3),         \
        [dst] "+r"(dst)                                                                    \
      : [acc] "r"(acc), [stride] "r"(stride)                                               \
      : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",    \
        "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15")

/* n (>= 1) blocks of 8 k pairs of the full 6 x 16 tile, widening n blocks of 16
 * depths of the 6 rows at src (stride bytes apart) into dst. Returns the advanced w. */
static GEMMI8_ALWAYS_INLINE const uint8_t* gemmi8_avx2_blocks_6x16(
    const int is_signed, size_t n, const uint8_t* w, const int16_t* a, __m256i acc[6][2],
    const uint8_t* src, size_t stride, int16_t* dst)
{
  const uint8_t* src3 = src + 3 * stride;
  if (is_signed) {
    GEMMI8_AVX2_LOOP_W("vpmovsxbw");
  } else {
    GEMMI8_AVX2_LOOP_W("vpmovzxbw");
  }
  return w;
}

/* The accumulators start at bias' (int32[16]); returns the block's weights. */
static GEMMI8_ALWAYS_INLINE const uint8_t* gemmi8_avx2_init(const size_t MR, const size_t NJ,
                                                           const void* w, __m256i acc[6][2])
{
  const int32_t* bias = (const int32_t*) w;
#pragma GCC unroll 2
  for (size_t j = 0; j < NJ; j++) {
    const __m256i vbias = _mm256_load_si256((const __m256i*) (bias + 8 * j));
#pragma GCC unroll 6
    for (size_t i = 0; i < MR; i++) acc[i][j] = vbias;
  }
  return (const uint8_t*) (bias + 16);
}

/* Accumulates the MR x (8 * NJ) tile into vacc, KC depths at a time. The full
 * 6 x 16 tile widens the first block of a chunk here and the others inside its k
 * loop (one block ahead); other tiles widen the chunk first. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_core_avx2(const size_t MR, const size_t NJ,
                                                       const int is_signed, size_t mr, size_t k,
                                                       const uint8_t* a, size_t a_stride,
                                                       const void* w, __m256i vacc[][2])
{
  const size_t KC = GEMMI8_AVX2_KC;
  _Alignas(32) int16_t buf[6 * GEMMI8_AVX2_KC];
  _Alignas(32) __m256i acc[6][2];
  const uint8_t* wk = gemmi8_avx2_init(MR, NJ, w, acc);
  for (size_t k0 = 0; k0 < k; k0 += KC) {
    const size_t kc = k - k0 < KC ? k - k0 : KC;
    const size_t blocks = kc / 16;
    size_t widened = 0; /* depths of the chunk already in buf */
    size_t done = 0;    /* k pairs of the chunk already accumulated */
    if (MR == 6 && NJ == 2 && mr == 6 && blocks >= 2) {
#pragma GCC unroll 6
      for (size_t i = 0; i < 6; i++) {
        gemmi8_widen_row_avx2(is_signed, a + i * a_stride, k0, 16, buf + i * KC);
      }
      wk = gemmi8_avx2_blocks_6x16(is_signed, blocks - 1, wk, buf, acc, a + k0 + 16, a_stride,
                                   buf + 16);
      widened = 16 * blocks;
      done = 8 * (blocks - 1);
    }
    if (widened < kc) {
#pragma GCC unroll 6
      for (size_t i = 0; i < MR; i++) {
        if (i < mr) {
          gemmi8_widen_row_avx2(is_signed, a + i * a_stride, k0 + widened, kc - widened,
                                buf + i * KC + widened);
        }
      }
    }
    wk = gemmi8_avx2_pairs(NJ, mr, (kc + 1) / 2 - done, wk, buf + 2 * done, acc);
  }
#pragma GCC unroll 6
  for (size_t i = 0; i < MR; i++) {
#pragma GCC unroll 2
    for (size_t j = 0; j < NJ; j++) vacc[i][j] = acc[i][j];
  }
}

/* Depths [0, n) of the row at p as int16 at out, exactly round_up(n, 2) of them (an odd
 * n's last pair zero-padded): no write past them. `before` bytes of the same row
 * precede p (see gemmi8_load_tail_avx2). */
static GEMMI8_ALWAYS_INLINE void gemmi8_widen_piece_avx2(const int is_signed, const uint8_t* p,
                                                        size_t n, size_t before, int16_t* out)
{
  size_t kk = 0;
  for (; kk + 16 <= n; kk += 16) {
    const __m128i v = _mm_loadu_si128((const __m128i*) (p + kk));
    _mm256_storeu_si256((__m256i*) (out + kk), gemmi8_widen_avx2(is_signed, v));
  }
  if (kk < n) {
    const __m128i v = gemmi8_load_tail_avx2(p + kk, n - kk, before + kk);
    const __m256i vidx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t) ((n - kk + 1) / 2)), vidx);
    _mm256_maskstore_epi32((int*) (out + kk), mask, gemmi8_widen_avx2(is_signed, v));
  }
}

/* The tile with A through ks taps of MR row pointers (igemm): each tap's kc depths of
 * the MR rows (a_offset added to every pointer but zero; rows past mr are the driver's
 * repeated last pixel, computed and never stored: one k loop, the full tile's, instead
 * of one per row count) are widened into the chunk buffer one after the other, each
 * padded to a pair as its weights are, and the k pairs run whenever the buffer is full
 * and at the end. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qigemm_core_avx2(const size_t MR, const size_t NJ,
                                                        const int is_signed, size_t mr,
                                                        size_t kc, size_t ks,
                                                        const void* const* a, size_t a_offset,
                                                        const void* zero, const void* w,
                                                        __m256i vacc[][2])
{
  const size_t KC = GEMMI8_AVX2_KC;
  _Alignas(32) int16_t buf[6 * GEMMI8_AVX2_KC];
  _Alignas(32) __m256i acc[6][2];
  const uint8_t* wk = gemmi8_avx2_init(MR, NJ, w, acc);
  size_t filled = 0; /* depths in the buffer, even */
  for (size_t t = 0; t < ks; t++) {
    const uint8_t* rows[6];
#pragma GCC unroll 6
    for (size_t i = 0; i < MR; i++) {
      const uint8_t* p = (const uint8_t*) a[t * MR + i];
      rows[i] = p == (const uint8_t*) zero ? p : p + a_offset;
    }
    for (size_t done = 0; done < kc;) {
      /* as much of the tap as the buffer takes (an even number when not all of it) */
      const size_t n = gemmi8_min(kc - done, KC - filled);
#pragma GCC unroll 6
      for (size_t i = 0; i < MR; i++) {
        gemmi8_widen_piece_avx2(is_signed, rows[i] + done, n, done, buf + i * KC + filled);
      }
      filled += n + (n & 1);
      done += n;
      if (filled == KC) {
        wk = gemmi8_avx2_pairs(NJ, MR, KC / 2, wk, buf, acc);
        filled = 0;
      }
    }
  }
  if (filled != 0) gemmi8_avx2_pairs(NJ, MR, filled / 2, wk, buf, acc);
  (void) mr;
#pragma GCC unroll 6
  for (size_t i = 0; i < MR; i++) {
#pragma GCC unroll 2
    for (size_t j = 0; j < NJ; j++) vacc[i][j] = acc[i][j];
  }
}

/* One tile: accumulate, then the output stage. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qgemm_tile_avx2(
    const size_t MR, const size_t NJ, const int is_signed, const enum gemmi8_qoutput out, size_t mr, size_t nr,
    size_t k, const void* a, size_t a_stride, const void* w, void* c, size_t c_stride,
    const struct gemmi8_qparams* params)
{
  __m256i vacc[6][2];
  gemmi8_qgemm_core_avx2(MR, NJ, is_signed, mr, k, (const uint8_t*) a, a_stride, w, vacc);
  gemmi8_qgemm_output_avx2(MR, NJ, is_signed, out, mr, nr, c, c_stride, params, vacc);
}

/* One igemm tile: the same outputs. */
static GEMMI8_ALWAYS_INLINE void gemmi8_qigemm_tile_avx2(
    const size_t MR, const size_t NJ, const int is_signed, const enum gemmi8_qoutput out, size_t mr,
    size_t nr, size_t kc, size_t ks, const void* const* a, size_t a_offset, const void* zero,
    const void* w, void* c, size_t c_stride, const struct gemmi8_qparams* params)
{
  __m256i vacc[6][2];
  gemmi8_qigemm_core_avx2(MR, NJ, is_signed, mr, kc, ks, a, a_offset, zero, w, vacc);
  gemmi8_qgemm_output_avx2(MR, NJ, is_signed, out, mr, nr, c, c_stride, params, vacc);
}

/* The tile's bodies, one for its gemm kernels and one for its igemm kernels, serve both
 * types and every output kind: the entry points (GEMMI8_QBODY_KERNELS,
 * src/microkernel.h) pass the output kind and the type in mr's high bits. The k loops
 * of both column-group counts (narrow tiles, nr <= 8, compute one group) and the
 * output stages exist once per body: the types differ only in how a is widened and how
 * bytes are narrowed, a branch there. */
#define GEMMI8_QGEMM_AVX2_BODY(name, MR)                                                  \
  static __attribute__((noinline, noclone)) void name(                                   \
      size_t mr_flags, size_t nr, size_t k, const void* a, size_t a_stride, const void* w, \
      void* c, size_t c_stride, const struct gemmi8_qparams* params)                     \
  {                                                                                      \
    const size_t mr = GEMMI8_OUT_MR(mr_flags);                                           \
    const enum gemmi8_qoutput out = GEMMI8_OUT_KIND(mr_flags);                           \
    const int is_signed = GEMMI8_TILE_IS_SIGNED(mr_flags);                               \
    _Static_assert(MR >= 1 && MR <= 6, "the k loops have 1 to 6 rows");                  \
    if (nr > 8) {                                                                        \
      gemmi8_qgemm_tile_avx2(MR, 2, is_signed, out, mr, nr, k, a, a_stride, w, c,        \
                             c_stride, params);                                          \
    } else {                                                                             \
      gemmi8_qgemm_tile_avx2(MR, 1, is_signed, out, mr, nr, k, a, a_stride, w, c,        \
                             c_stride, params);                                          \
    }                                                                                    \
  }
#define GEMMI8_QIGEMM_AVX2_BODY(name, MR)                                                 \
  static __attribute__((noinline, noclone)) void name(                                   \
      size_t mr_flags, size_t nr, size_t kc, size_t ks, const void* const* a,            \
      const void* w, void* c, size_t c_stride, size_t a_offset, const void* zero,        \
      const struct gemmi8_qparams* params)                                               \
  {                                                                                      \
    const size_t mr = GEMMI8_OUT_MR(mr_flags);                                           \
    const enum gemmi8_qoutput out = GEMMI8_OUT_KIND(mr_flags);                           \
    const int is_signed = GEMMI8_TILE_IS_SIGNED(mr_flags);                               \
    if (nr > 8) {                                                                        \
      gemmi8_qigemm_tile_avx2(MR, 2, is_signed, out, mr, nr, kc, ks, a, a_offset, zero,  \
                              w, c, c_stride, params);                                   \
    } else {                                                                             \
      gemmi8_qigemm_tile_avx2(MR, 1, is_signed, out, mr, nr, kc, ks, a, a_offset, zero,  \
                              w, c, c_stride, params);                                   \
    }                                                                                    \
  }

#endif
