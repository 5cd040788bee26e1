/*
 * gemmi8-bench: the machine's limits, measured by register-only loops.
 *
 * Each loop keeps its operands in registers (no loads or stores), has enough
 * independent accumulators to hide the instruction's latency, and so runs at the
 * issue rate of the instruction (sequence) it measures. It is written in inline
 * assembly with fixed registers: a C loop with intrinsics lets the compiler spill
 * accumulators and measures half the rate. Only xmm/ymm/zmm 0-15 are used, so the
 * file needs no ISA flags (the assembler takes any instruction; the C code here
 * stays baseline x86-64), and every loop ends with vzeroupper.
 *
 * Benchmarks: peak/<loop>/0x0x0, GOPS = operations per second / 1e9, where the
 * operations are counted as for the GEMMs they bound (bench/README.md):
 *
 *   vpdpbusd-zmm    28 x vpdpbusd zmm per iteration into 14 accumulators:
 *                   64 u8 x s8 products and their sums = 2*64 ops each.
 *   vpmaddwd-ymm    14 x (vpmaddwd ymm + vpaddd ymm) per iteration, 7 chains: the
 *                   inner step of an exact AVX2 int8 kernel that widens both
 *                   operands to 16 bits; 16 products and sums = 2*16 ops each.
 *   vfmadd-zmm      28 x vfmadd231ps zmm per iteration into 14 accumulators:
 *                   2*16 flops each (the fp32 limit OpenBLAS's sgemm works under).
 *   vpopcntq-zmm    12 x (vpxorq + vpopcntq + vpaddq zmm) per iteration, 6 chains:
 *                   512 bit pairs = 2*512 binary ops each.
 *   popcnt-lut-ymm  per 256 bits: vpxor, vpsrlw, 2 vpand, 2 vpshufb (nibble
 *                   lookup), 2 vpaddb into byte counters; 2 chains x 8 vectors per
 *                   iteration, then per chain vpsadbw + vpaddq into 64-bit sums and
 *                   a vpxor to clear the byte counters: 2*256 binary ops per vector.
 *   popcnt-lut-zmm  the same sequence on zmm (AVX-512BW), the popcount of AVX-512
 *                   CPUs without VPOPCNTDQ: 2*512 binary ops per vector.
 *   popcnt-r64      8 x (mov + xor + popcnt + add) on 64-bit registers per
 *                   iteration, 4 chains: 2*64 binary ops each.
 *
 * And one loop that is not register-only: read-bw, for the fully-connected shapes,
 * reads a 64-byte aligned buffer the size of gemmi8's packed weights for that
 * Row x Depth (bench_gemmi8_weight_bytes, rounded up to 64 bytes) once per run,
 * adding it into 8 accumulators with vpaddq from memory (zmm with AVX-512F, else
 * ymm with AVX2, else a C loop on 64-bit words), named
 * peak/read-bw/<Row>x0x<Depth>, counters weight_bytes and GBps. It is what one pass
 * over the weights costs when nothing else is done: the floor of a batch-1 GEMM
 * whose weights do not fit in the L2 cache. The run's context gives the L2 size
 * (l2_cache_bytes, from sysfs or sysconf) the report compares weights with.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cases.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* ---- cpu features ---------------------------------------------------------------- */

enum {
  F_POPCNT = 1u << 0,
  F_FMA = 1u << 1,
  F_AVX2 = 1u << 2,
  F_AVX512F = 1u << 3,
  F_AVX512BW = 1u << 4,
  F_AVX512DQ = 1u << 5,
  F_AVX512VL = 1u << 6,
  F_AVX512VNNI = 1u << 7,
  F_AVX512VPOPCNTDQ = 1u << 8,
  F_AVX512BITALG = 1u << 9,
  F_AVXVNNI = 1u << 10,
};

static const struct {
  const char* name;
  unsigned bit;
} feature_names[] = {
    {"popcnt", F_POPCNT},         {"fma", F_FMA},
    {"avx2", F_AVX2},             {"avx512f", F_AVX512F},
    {"avx512bw", F_AVX512BW},     {"avx512dq", F_AVX512DQ},
    {"avx512vl", F_AVX512VL},     {"avx512vnni", F_AVX512VNNI},
    {"avx512vpopcntdq", F_AVX512VPOPCNTDQ}, {"avx512bitalg", F_AVX512BITALG},
    {"avxvnni", F_AVXVNNI},
};

static unsigned detect_features(void)
{
  unsigned f = 0;
#if defined(__x86_64__)
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
    return 0;
  }
  if (ecx & (1u << 23)) {
    f |= F_POPCNT;
  }
  const int osxsave = (ecx & (1u << 27)) != 0, avx = (ecx & (1u << 28)) != 0;
  const int fma = (ecx & (1u << 12)) != 0;
  uint64_t xcr0 = 0;
  if (osxsave) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = ((uint64_t) hi << 32) | lo;
  }
  const int ymm_state = avx && (xcr0 & 0x6) == 0x6;     /* SSE and AVX state */
  const int zmm_state = ymm_state && (xcr0 & 0xE0) == 0xE0; /* opmask, ZMM0-15 hi, ZMM16-31 */
  if (ymm_state && fma) {
    f |= F_FMA;
  }
  unsigned max_leaf = __get_cpuid_max(0, NULL);
  if (max_leaf >= 7 && ymm_state) {
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (ebx & (1u << 5)) {
      f |= F_AVX2;
    }
    if (zmm_state && (ebx & (1u << 16))) {
      f |= F_AVX512F;
      if (ebx & (1u << 30)) {
        f |= F_AVX512BW;
      }
      if (ebx & (1u << 17)) {
        f |= F_AVX512DQ;
      }
      if (ebx & (1u << 31)) {
        f |= F_AVX512VL;
      }
      if (ecx & (1u << 11)) {
        f |= F_AVX512VNNI;
      }
      if (ecx & (1u << 14)) {
        f |= F_AVX512VPOPCNTDQ;
      }
      if (ecx & (1u << 12)) {
        f |= F_AVX512BITALG;
      }
    }
    if (eax >= 1) {
      __cpuid_count(7, 1, eax, ebx, ecx, edx);
      if (eax & (1u << 4)) {
        f |= F_AVXVNNI;
      }
    }
  }
#endif
  return f;
}

static unsigned features(void)
{
  static int known;
  static unsigned cached;
  if (!known) {
    cached = detect_features();
    known = 1;
  }
  return cached;
}

int bench_cpu_has(const char* feature)
{
  for (size_t i = 0; i < sizeof(feature_names) / sizeof(feature_names[0]); i++) {
    if (strcmp(feature_names[i].name, feature) == 0) {
      return (features() & feature_names[i].bit) != 0;
    }
  }
  return 0;
}

/* ---- the loops --------------------------------------------------------------------- */

#if defined(__x86_64__)

#define CLOBBER_VEC                                                                    \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",    \
      "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

#define ZERO_Z(i) "vpxord %%zmm" #i ", %%zmm" #i ", %%zmm" #i "\n\t"
#define ZERO_Z14                                                                          \
  ZERO_Z(0) ZERO_Z(1) ZERO_Z(2) ZERO_Z(3) ZERO_Z(4) ZERO_Z(5) ZERO_Z(6) ZERO_Z(7) ZERO_Z(8) \
      ZERO_Z(9) ZERO_Z(10) ZERO_Z(11) ZERO_Z(12) ZERO_Z(13)

/* zmm_i += zmm14 (u8) . zmm15 (s8), 4 bytes per 32-bit lane. */
#define DPBUSD(i) "vpdpbusd %%zmm15, %%zmm14, %%zmm" #i "\n\t"
#define DPBUSD14                                                                          \
  DPBUSD(0) DPBUSD(1) DPBUSD(2) DPBUSD(3) DPBUSD(4) DPBUSD(5) DPBUSD(6) DPBUSD(7) DPBUSD(8) \
      DPBUSD(9) DPBUSD(10) DPBUSD(11) DPBUSD(12) DPBUSD(13)

static void loop_vpdpbusd_zmm(uint64_t iterations)
{
  __asm__ volatile(
      "vpternlogd $0xff, %%zmm14, %%zmm14, %%zmm14\n\t" /* 255 as u8 */
      "vpternlogd $0xff, %%zmm15, %%zmm15, %%zmm15\n\t" /* -1 as s8 */
      ZERO_Z14
      ".p2align 5\n"
      "1:\n\t"
      DPBUSD14 DPBUSD14
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
      : "+r"(iterations)
      :
      : "cc", CLOBBER_VEC);
}

/* zmm_i += zmm14 * zmm15, fp32; all zeros (no denormals, no NaNs). */
#define FMA(i) "vfmadd231ps %%zmm15, %%zmm14, %%zmm" #i "\n\t"
#define FMA14                                                                         \
  FMA(0) FMA(1) FMA(2) FMA(3) FMA(4) FMA(5) FMA(6) FMA(7) FMA(8) FMA(9) FMA(10) FMA(11) \
      FMA(12) FMA(13)

static void loop_vfmadd_zmm(uint64_t iterations)
{
  __asm__ volatile(
      ZERO_Z14 ZERO_Z(14) ZERO_Z(15)
      ".p2align 5\n"
      "1:\n\t"
      FMA14 FMA14
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
      : "+r"(iterations)
      :
      : "cc", CLOBBER_VEC);
}

/* ymm_t = madd(ymm14, ymm15) (16 x s16*s16, pairs summed); ymm_acc += ymm_t. */
#define MADD(t, acc)                                    \
  "vpmaddwd %%ymm15, %%ymm14, %%ymm" #t "\n\t"          \
  "vpaddd %%ymm" #t ", %%ymm" #acc ", %%ymm" #acc "\n\t"
#define MADD7                                                                            \
  MADD(0, 7) MADD(1, 8) MADD(2, 9) MADD(3, 10) MADD(4, 11) MADD(5, 12) MADD(6, 13)

static void loop_vpmaddwd_ymm(uint64_t iterations)
{
  __asm__ volatile(
      "vpcmpeqd %%ymm14, %%ymm14, %%ymm14\n\t" /* -1 as s16 */
      "vpcmpeqd %%ymm15, %%ymm15, %%ymm15\n\t"
      "vpxor %%ymm7, %%ymm7, %%ymm7\n\t"
      "vpxor %%ymm8, %%ymm8, %%ymm8\n\t"
      "vpxor %%ymm9, %%ymm9, %%ymm9\n\t"
      "vpxor %%ymm10, %%ymm10, %%ymm10\n\t"
      "vpxor %%ymm11, %%ymm11, %%ymm11\n\t"
      "vpxor %%ymm12, %%ymm12, %%ymm12\n\t"
      "vpxor %%ymm13, %%ymm13, %%ymm13\n\t"
      ".p2align 5\n"
      "1:\n\t"
      MADD7 MADD7
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
      : "+r"(iterations)
      :
      : "cc", CLOBBER_VEC);
}

/* zmm_t = zmm14 ^ zmm15; zmm_t = popcount64(zmm_t); zmm_acc += zmm_t. */
#define POPQ(t, acc)                                    \
  "vpxorq %%zmm15, %%zmm14, %%zmm" #t "\n\t"            \
  "vpopcntq %%zmm" #t ", %%zmm" #t "\n\t"               \
  "vpaddq %%zmm" #t ", %%zmm" #acc ", %%zmm" #acc "\n\t"
#define POPQ6 POPQ(0, 6) POPQ(1, 7) POPQ(2, 8) POPQ(3, 9) POPQ(4, 10) POPQ(5, 11)

static void loop_vpopcntq_zmm(uint64_t iterations)
{
  __asm__ volatile(
      "vpternlogd $0xff, %%zmm14, %%zmm14, %%zmm14\n\t"
      "vpxord %%zmm15, %%zmm15, %%zmm15\n\t"
      ZERO_Z(6) ZERO_Z(7) ZERO_Z(8) ZERO_Z(9) ZERO_Z(10) ZERO_Z(11)
      ".p2align 5\n"
      "1:\n\t"
      POPQ6 POPQ6
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
      : "+r"(iterations)
      :
      : "cc", CLOBBER_VEC);
}

/* Nibble-lookup popcount of ymm15 ^ ymm14 into byte counters (chain c uses
 * ymm 4c: bits, 4c+1: high nibbles, 4c+2: byte counts, 4c+3: 64-bit sums);
 * ymm13 = 0x0f bytes, ymm12 = popcount table of 0..15, ymm11 = zero, ymm8 temp. */
#define LUT(t, h, cnt)                                  \
  "vpxor %%ymm15, %%ymm14, %%ymm" #t "\n\t"             \
  "vpsrlw $4, %%ymm" #t ", %%ymm" #h "\n\t"             \
  "vpand %%ymm13, %%ymm" #t ", %%ymm" #t "\n\t"         \
  "vpand %%ymm13, %%ymm" #h ", %%ymm" #h "\n\t"         \
  "vpshufb %%ymm" #t ", %%ymm12, %%ymm" #t "\n\t"       \
  "vpshufb %%ymm" #h ", %%ymm12, %%ymm" #h "\n\t"       \
  "vpaddb %%ymm" #t ", %%ymm" #cnt ", %%ymm" #cnt "\n\t" \
  "vpaddb %%ymm" #h ", %%ymm" #cnt ", %%ymm" #cnt "\n\t"
#define LUT2 LUT(0, 1, 2) LUT(4, 5, 6)
#define SAD(cnt, sum)                                   \
  "vpsadbw %%ymm11, %%ymm" #cnt ", %%ymm8\n\t"          \
  "vpaddq %%ymm8, %%ymm" #sum ", %%ymm" #sum "\n\t"     \
  "vpxor %%ymm" #cnt ", %%ymm" #cnt ", %%ymm" #cnt "\n\t"

static const uint8_t lut_constants[64] __attribute__((aligned(32))) = {
    /* 0x0f mask */
    0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f,
    0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f,
    0x0f, 0x0f,
    /* popcount of 0..15, in both 128-bit lanes */
    0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3,
    4};

static void loop_popcnt_lut_ymm(uint64_t iterations)
{
  __asm__ volatile(
      "vmovdqa 0(%1), %%ymm13\n\t"
      "vmovdqa 32(%1), %%ymm12\n\t"
      "vpxor %%ymm11, %%ymm11, %%ymm11\n\t"
      "vpcmpeqd %%ymm14, %%ymm14, %%ymm14\n\t"
      "vpxor %%ymm15, %%ymm15, %%ymm15\n\t"
      "vpxor %%ymm2, %%ymm2, %%ymm2\n\t"
      "vpxor %%ymm3, %%ymm3, %%ymm3\n\t"
      "vpxor %%ymm6, %%ymm6, %%ymm6\n\t"
      "vpxor %%ymm7, %%ymm7, %%ymm7\n\t"
      ".p2align 5\n"
      "1:\n\t"
      LUT2 LUT2 LUT2 LUT2 LUT2 LUT2 LUT2 LUT2
      SAD(2, 3) SAD(6, 7)
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
      : "+r"(iterations)
      : "r"(lut_constants)
      : "cc", "memory", CLOBBER_VEC);
}

/* The same nibble lookup on zmm (AVX-512BW): 512 bits per vector, vpshufb looks up
 * within each 128-bit lane; the constants are broadcast from the 32-byte table. */
#define LUTZ(t, h, cnt)                                 \
  "vpxorq %%zmm15, %%zmm14, %%zmm" #t "\n\t"            \
  "vpsrlw $4, %%zmm" #t ", %%zmm" #h "\n\t"             \
  "vpandq %%zmm13, %%zmm" #t ", %%zmm" #t "\n\t"        \
  "vpandq %%zmm13, %%zmm" #h ", %%zmm" #h "\n\t"        \
  "vpshufb %%zmm" #t ", %%zmm12, %%zmm" #t "\n\t"       \
  "vpshufb %%zmm" #h ", %%zmm12, %%zmm" #h "\n\t"       \
  "vpaddb %%zmm" #t ", %%zmm" #cnt ", %%zmm" #cnt "\n\t" \
  "vpaddb %%zmm" #h ", %%zmm" #cnt ", %%zmm" #cnt "\n\t"
#define LUTZ2 LUTZ(0, 1, 2) LUTZ(4, 5, 6)
#define SADZ(cnt, sum)                                  \
  "vpsadbw %%zmm11, %%zmm" #cnt ", %%zmm8\n\t"          \
  "vpaddq %%zmm8, %%zmm" #sum ", %%zmm" #sum "\n\t"     \
  "vpxorq %%zmm" #cnt ", %%zmm" #cnt ", %%zmm" #cnt "\n\t"

static void loop_popcnt_lut_zmm(uint64_t iterations)
{
  __asm__ volatile(
      "vbroadcasti64x4 0(%1), %%zmm13\n\t"
      "vbroadcasti64x4 32(%1), %%zmm12\n\t"
      "vpxorq %%zmm11, %%zmm11, %%zmm11\n\t"
      "vpternlogd $0xff, %%zmm14, %%zmm14, %%zmm14\n\t"
      "vpxorq %%zmm15, %%zmm15, %%zmm15\n\t"
      ZERO_Z(2) ZERO_Z(3) ZERO_Z(6) ZERO_Z(7)
      ".p2align 5\n"
      "1:\n\t"
      LUTZ2 LUTZ2 LUTZ2 LUTZ2 LUTZ2 LUTZ2 LUTZ2 LUTZ2
      SADZ(2, 3) SADZ(6, 7)
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
      : "+r"(iterations)
      : "r"(lut_constants)
      : "cc", "memory", CLOBBER_VEC);
}

#define POPR(t, s)                      \
  "mov %[a], %[" #t "]\n\t"             \
  "xor %[b], %[" #t "]\n\t"             \
  "popcnt %[" #t "], %[" #t "]\n\t"     \
  "add %[" #t "], %[" #s "]\n\t"
#define POPR4 POPR(t0, s0) POPR(t1, s1) POPR(t2, s2) POPR(t3, s3)

static void loop_popcnt_r64(uint64_t iterations)
{
  uint64_t t0, t1, t2, t3, s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  __asm__ volatile(
      ".p2align 5\n"
      "1:\n\t"
      POPR4 POPR4
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      : [n] "+r"(iterations), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2),
        [t3] "=&r"(t3), [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3)
      : [a] "r"(~UINT64_C(0)), [b] "r"(UINT64_C(0x5555555555555555))
      : "cc");
}

/* Memory reads: acc_i += 64-bit lanes of the next vector, 8 accumulators, one
 * load each per step, 8 vectors per iteration; then the remaining whole vectors
 * one at a time into accumulator 0; returns the sum of all lanes. */
#define RDZ(i) "vpaddq " #i "*64(%[p]), %%zmm" #i ", %%zmm" #i "\n\t"
#define RDY(i) "vpaddq " #i "*32(%[p]), %%ymm" #i ", %%ymm" #i "\n\t"

static uint64_t read_zmm(const void* buffer, size_t bytes)
{
  const char* p = buffer;
  uint64_t blocks = bytes / 512, rest = bytes % 512 / 64, sum;
  __asm__ volatile(
      ZERO_Z(0) ZERO_Z(1) ZERO_Z(2) ZERO_Z(3) ZERO_Z(4) ZERO_Z(5) ZERO_Z(6) ZERO_Z(7)
      "test %[b], %[b]\n\t"
      "jz 2f\n\t"
      ".p2align 5\n"
      "1:\n\t"
      RDZ(0) RDZ(1) RDZ(2) RDZ(3) RDZ(4) RDZ(5) RDZ(6) RDZ(7)
      "add $512, %[p]\n\t"
      "dec %[b]\n\t"
      "jnz 1b\n"
      "2:\n\t"
      "test %[r], %[r]\n\t"
      "jz 4f\n"
      "3:\n\t"
      RDZ(0)
      "add $64, %[p]\n\t"
      "dec %[r]\n\t"
      "jnz 3b\n"
      "4:\n\t"
      "vpaddq %%zmm1, %%zmm0, %%zmm0\n\t"
      "vpaddq %%zmm3, %%zmm2, %%zmm2\n\t"
      "vpaddq %%zmm5, %%zmm4, %%zmm4\n\t"
      "vpaddq %%zmm7, %%zmm6, %%zmm6\n\t"
      "vpaddq %%zmm2, %%zmm0, %%zmm0\n\t"
      "vpaddq %%zmm6, %%zmm4, %%zmm4\n\t"
      "vpaddq %%zmm4, %%zmm0, %%zmm0\n\t"
      "vextracti64x4 $1, %%zmm0, %%ymm1\n\t"
      "vpaddq %%ymm1, %%ymm0, %%ymm0\n\t"
      "vextracti128 $1, %%ymm0, %%xmm1\n\t"
      "vpaddq %%xmm1, %%xmm0, %%xmm0\n\t"
      "vpsrldq $8, %%xmm0, %%xmm1\n\t"
      "vpaddq %%xmm1, %%xmm0, %%xmm0\n\t"
      "vmovq %%xmm0, %[s]\n\t"
      "vzeroupper\n\t"
      : [p] "+r"(p), [b] "+r"(blocks), [r] "+r"(rest), [s] "=r"(sum)
      :
      : "cc", "memory", CLOBBER_VEC);
  return sum;
}

static uint64_t read_ymm(const void* buffer, size_t bytes)
{
  const char* p = buffer;
  uint64_t blocks = bytes / 256, rest = bytes % 256 / 32, sum;
  __asm__ volatile(
      "vpxor %%ymm0, %%ymm0, %%ymm0\n\t"
      "vpxor %%ymm1, %%ymm1, %%ymm1\n\t"
      "vpxor %%ymm2, %%ymm2, %%ymm2\n\t"
      "vpxor %%ymm3, %%ymm3, %%ymm3\n\t"
      "vpxor %%ymm4, %%ymm4, %%ymm4\n\t"
      "vpxor %%ymm5, %%ymm5, %%ymm5\n\t"
      "vpxor %%ymm6, %%ymm6, %%ymm6\n\t"
      "vpxor %%ymm7, %%ymm7, %%ymm7\n\t"
      "test %[b], %[b]\n\t"
      "jz 2f\n\t"
      ".p2align 5\n"
      "1:\n\t"
      RDY(0) RDY(1) RDY(2) RDY(3) RDY(4) RDY(5) RDY(6) RDY(7)
      "add $256, %[p]\n\t"
      "dec %[b]\n\t"
      "jnz 1b\n"
      "2:\n\t"
      "test %[r], %[r]\n\t"
      "jz 4f\n"
      "3:\n\t"
      RDY(0)
      "add $32, %[p]\n\t"
      "dec %[r]\n\t"
      "jnz 3b\n"
      "4:\n\t"
      "vpaddq %%ymm1, %%ymm0, %%ymm0\n\t"
      "vpaddq %%ymm3, %%ymm2, %%ymm2\n\t"
      "vpaddq %%ymm5, %%ymm4, %%ymm4\n\t"
      "vpaddq %%ymm7, %%ymm6, %%ymm6\n\t"
      "vpaddq %%ymm2, %%ymm0, %%ymm0\n\t"
      "vpaddq %%ymm6, %%ymm4, %%ymm4\n\t"
      "vpaddq %%ymm4, %%ymm0, %%ymm0\n\t"
      "vextracti128 $1, %%ymm0, %%xmm1\n\t"
      "vpaddq %%xmm1, %%xmm0, %%xmm0\n\t"
      "vpsrldq $8, %%xmm0, %%xmm1\n\t"
      "vpaddq %%xmm1, %%xmm0, %%xmm0\n\t"
      "vmovq %%xmm0, %[s]\n\t"
      "vzeroupper\n\t"
      : [p] "+r"(p), [b] "+r"(blocks), [r] "+r"(rest), [s] "=r"(sum)
      :
      : "cc", "memory", CLOBBER_VEC);
  return sum;
}

#endif /* __x86_64__ */

/* Portable: 64-bit words, 4 accumulators (bytes is a multiple of 64). */
static uint64_t read_words(const void* buffer, size_t bytes)
{
  const uint64_t* w = buffer;
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i < bytes / 8; i += 4) {
    s0 += w[i];
    s1 += w[i + 1];
    s2 += w[i + 2];
    s3 += w[i + 3];
  }
  return s0 + s1 + s2 + s3;
}

/* ---- cases ------------------------------------------------------------------------- */

typedef struct peak_loop {
  const char* name;
  unsigned needs; /* F_* */
  void (*loop)(uint64_t iterations);
  uint64_t iterations; /* per run() call: about a millisecond */
  unsigned steps;      /* instructions (sequences) per iteration */
  unsigned ops_per_step;
} peak_loop;

enum {
  P_VPDPBUSD_ZMM,
  P_VPMADDWD_YMM,
  P_VFMADD_ZMM,
  P_VPOPCNTQ_ZMM,
  P_POPCNT_LUT_YMM,
  P_POPCNT_LUT_ZMM,
  P_POPCNT_R64,
  P_COUNT
};

#if defined(__x86_64__)
#define LOOP(fn) fn
#else
#define LOOP(fn) NULL
#endif

static const peak_loop loops[P_COUNT] = {
    [P_VPDPBUSD_ZMM] = {"vpdpbusd-zmm", F_AVX512F | F_AVX512VNNI, LOOP(loop_vpdpbusd_zmm),
                        1u << 18, 28, 2 * 64},
    [P_VPMADDWD_YMM] = {"vpmaddwd-ymm", F_AVX2, LOOP(loop_vpmaddwd_ymm), 1u << 18, 14, 2 * 16},
    [P_VFMADD_ZMM] = {"vfmadd-zmm", F_AVX512F, LOOP(loop_vfmadd_zmm), 1u << 18, 28, 2 * 16},
    [P_VPOPCNTQ_ZMM] = {"vpopcntq-zmm", F_AVX512F | F_AVX512VPOPCNTDQ,
                        LOOP(loop_vpopcntq_zmm), 1u << 18, 12, 2 * 512},
    [P_POPCNT_LUT_YMM] = {"popcnt-lut-ymm", F_AVX2, LOOP(loop_popcnt_lut_ymm), 1u << 16, 16,
                          2 * 256},
    [P_POPCNT_LUT_ZMM] = {"popcnt-lut-zmm", F_AVX512F | F_AVX512BW, LOOP(loop_popcnt_lut_zmm),
                          1u << 15, 16, 2 * 512},
    [P_POPCNT_R64] = {"popcnt-r64", F_POPCNT, LOOP(loop_popcnt_r64), 1u << 19, 8, 2 * 64},
};

static const char* peak_unavailable(int which)
{
  const peak_loop* p = &loops[which];
  if (p->loop == NULL) {
    return "not x86-64";
  }
  unsigned missing = p->needs & ~features();
  if (missing == 0) {
    return NULL;
  }
  static char why[160];
  strcpy(why, "CPU or OS lacks");
  for (size_t i = 0; i < sizeof(feature_names) / sizeof(feature_names[0]); i++) {
    if ((missing & feature_names[i].bit) && strlen(why) + 20 < sizeof(why)) {
      strcat(why, " ");
      strcat(why, feature_names[i].name);
    }
  }
  return why;
}

static const char* peak_setup(int which, void** state)
{
  const char* why = peak_unavailable(which);
  if (why != NULL) {
    return why;
  }
  *state = (void*) &loops[which];
  loops[which].loop(loops[which].iterations); /* warm-up: clocks, upper register halves */
  return NULL;
}

static const char* peak_run(void* state)
{
  const peak_loop* p = state;
  p->loop(p->iterations);
  return NULL;
}

static double peak_ops(const void* state)
{
  const peak_loop* p = state;
  return (double) p->iterations * p->steps * p->ops_per_step;
}

static void peak_teardown(void* state) { (void) state; }

#define PEAK_CASE(id, lower, name)                                                  \
  static const char* lower##_unavailable(void) { return peak_unavailable(id); }     \
  static const char* lower##_setup(const bench_shape* shape, const char* isa,       \
                                   void** state) {                                  \
    (void) shape;                                                                   \
    (void) isa;                                                                     \
    return peak_setup(id, state);                                                   \
  }                                                                                 \
  const bench_case bench_peak_##lower = {                                           \
      .library = "peak",                                                            \
      .variant = name,                                                              \
      .flags = BENCH_CASE_NO_SHAPE,                                                 \
      .skip_isas = NULL,                                                            \
      .unavailable = lower##_unavailable,                                           \
      .setup = lower##_setup,                                                       \
      .prepare = NULL,                                                              \
      .run = peak_run,                                                              \
      .teardown = peak_teardown,                                                    \
      .ops = peak_ops,                                                              \
  };

PEAK_CASE(P_VPDPBUSD_ZMM, vpdpbusd_zmm, "vpdpbusd-zmm")
PEAK_CASE(P_VPMADDWD_YMM, vpmaddwd_ymm, "vpmaddwd-ymm")
PEAK_CASE(P_VFMADD_ZMM, vfmadd_zmm, "vfmadd-zmm")
PEAK_CASE(P_VPOPCNTQ_ZMM, vpopcntq_zmm, "vpopcntq-zmm")
PEAK_CASE(P_POPCNT_LUT_YMM, popcnt_lut_ymm, "popcnt-lut-ymm")
PEAK_CASE(P_POPCNT_LUT_ZMM, popcnt_lut_zmm, "popcnt-lut-zmm")
PEAK_CASE(P_POPCNT_R64, popcnt_r64, "popcnt-r64")

/* ---- read bandwidth over a weight-sized buffer ------------------------------------- */

typedef struct read_state {
  void* buffer;
  size_t bytes;
  uint64_t (*read)(const void* buffer, size_t bytes);
  const char* how;
} read_state;

/* Where each pass's sum goes, so that no pass can be left out. */
static volatile uint64_t read_sink;

static void read_choose(read_state* s)
{
  s->read = read_words;
  s->how = "64-bit words (C)";
#if defined(__x86_64__)
  if (features() & F_AVX512F) {
    s->read = read_zmm;
    s->how = "vpaddq zmm from memory, 8 accumulators";
  } else if (features() & F_AVX2) {
    s->read = read_ymm;
    s->how = "vpaddq ymm from memory, 8 accumulators";
  }
#endif
}

static void read_teardown(void* opaque)
{
  read_state* s = opaque;
  if (s != NULL) {
    bench_free(s->buffer);
    free(s);
  }
}

static const char* read_setup(const bench_shape* shape, const char* isa, void** state)
{
  (void) isa;
  size_t bytes = bench_gemmi8_weight_bytes(shape->row, shape->depth);
  if (bytes == 0) {
    return bench_error("no gemmi8 packed size for %zu x %zu", shape->row, shape->depth);
  }
  bytes = (bytes + 63) / 64 * 64;
  read_state* s = calloc(1, sizeof(*s));
  if (s == NULL) {
    return "out of memory";
  }
  s->bytes = bytes;
  s->buffer = bench_alloc(bytes);
  if (s->buffer == NULL) {
    free(s);
    return "out of memory";
  }
  memset(s->buffer, 0x5a, bytes);
  read_choose(s);
  read_sink += s->read(s->buffer, s->bytes); /* warm-up: brings it into the caches */
  *state = s;
  return NULL;
}

/* The read loop on any 64-byte aligned buffer (bytes a multiple of 64), for other
 * programs of the bench (bench/llm): the sum of its 64-bit words; *how names it. */
uint64_t bench_read_buffer(const void* buffer, size_t bytes, const char** how)
{
  read_state s;
  read_choose(&s);
  if (how != NULL) {
    *how = s.how;
  }
  return s.read(buffer, bytes);
}

static const char* read_run(void* opaque)
{
  const read_state* s = opaque;
  read_sink += s->read(s->buffer, s->bytes);
  return NULL;
}

static double read_bytes(const void* opaque)
{
  const read_state* s = opaque;
  return (double) s->bytes;
}

static const char* read_label(const void* opaque)
{
  const read_state* s = opaque;
  return s->how;
}

const bench_case bench_peak_read_bw = {
    .library = "peak",
    .variant = "read-bw",
    .flags = BENCH_CASE_WEIGHT_BYTES,
    .skip_isas = NULL,
    .unavailable = NULL,
    .setup = read_setup,
    .prepare = NULL,
    .run = read_run,
    .teardown = read_teardown,
    .ops = NULL,
    .label = read_label,
    .bytes = read_bytes,
};

/* The L2 cache size of CPU 0 in bytes (0 if unknown), and where it was found. */
size_t bench_l2_cache_bytes(const char** source)
{
  static char path[96];
  for (int i = 0; i < 16; i++) {
    char name[96], text[64];
    int level = 0;
    snprintf(name, sizeof(name), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE* f = fopen(name, "r");
    if (f == NULL) {
      continue;
    }
    if (fscanf(f, "%d", &level) != 1) {
      level = 0;
    }
    fclose(f);
    if (level != 2) {
      continue;
    }
    snprintf(name, sizeof(name), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    f = fopen(name, "r");
    if (f == NULL || fgets(text, sizeof(text), f) == NULL ||
        strncmp(text, "Instruction", 11) == 0) {
      if (f != NULL) {
        fclose(f);
      }
      continue;
    }
    fclose(f);
    snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    f = fopen(path, "r");
    unsigned long long size = 0;
    char unit = '\0';
    int got = f != NULL ? fscanf(f, "%llu%c", &size, &unit) : 0;
    if (f != NULL) {
      fclose(f);
    }
    if (got >= 1 && size > 0) {
      size *= unit == 'K' ? 1024ull : unit == 'M' ? 1024ull * 1024 : unit == 'G' ? 1ull << 30 : 1;
      *source = path;
      return (size_t) size;
    }
  }
#if defined(_SC_LEVEL2_CACHE_SIZE)
  long size = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (size > 0) {
    *source = "sysconf(_SC_LEVEL2_CACHE_SIZE)";
    return (size_t) size;
  }
#endif
  *source = "unknown";
  return 0;
}

/* ---- library ----------------------------------------------------------------------- */

static void peak_context(bench_context_fn add, void* ctx)
{
  char list[256] = "";
  for (size_t i = 0; i < sizeof(feature_names) / sizeof(feature_names[0]); i++) {
    if ((features() & feature_names[i].bit) && strlen(list) + 20 < sizeof(list)) {
      strcat(list, list[0] == '\0' ? "" : " ");
      strcat(list, feature_names[i].name);
    }
  }
  add(ctx, "cpu_features", list[0] != '\0' ? list : "(none detected)");
  char ops[256] = "";
  for (int i = 0; i < P_COUNT; i++) {
    size_t used = strlen(ops);
    snprintf(ops + used, sizeof(ops) - used, "%s%s %u", used == 0 ? "" : ", ", loops[i].name,
             loops[i].ops_per_step);
  }
  add(ctx, "peak_ops_per_step", ops);
  const char* source = NULL;
  char size[32];
  snprintf(size, sizeof(size), "%zu", bench_l2_cache_bytes(&source));
  add(ctx, "l2_cache_bytes", size);
  add(ctx, "l2_cache_source", source);
  read_state probe;
  read_choose(&probe);
  add(ctx, "read_bw_loop", probe.how);
}

const bench_library bench_library_peak = {"peak", NULL, peak_context};
