/*
 * Kernel selection: the family tables of every kernel set compiled in, and the
 * cascade that picks, once, the best of each family that the CPU supports and
 * GEMMI8_ISA allows.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "isa.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__arm__)
#include <sys/auxv.h>
#ifndef HWCAP_NEON
#define HWCAP_NEON (1 << 12)
#endif
#endif
#if defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1 << 13)
#endif
#endif

/* ---- family tables, per kernel set ------------------------------------------------ */

/* The three outputs of one quantized tile / binary tile, by name. */
/* the three outputs of a tile of kind gemm, igemm or pgemm */
#define QKERNELS(type, kind, tile, isa)                          \
  {gemmi8_##type##_##kind##_s32_ukernel_##tile##__##isa,         \
   gemmi8_##type##_##kind##_fixedpoint_ukernel_##tile##__##isa,  \
   gemmi8_##type##_##kind##_fp32_ukernel_##tile##__##isa}
#define QGEMM(type, tile, isa) QKERNELS(type, gemm, tile, isa)
#define QIGEMM(type, tile, isa) QKERNELS(type, igemm, tile, isa)
#define QPGEMM(type, tile, isa) QKERNELS(type, pgemm, tile, isa)
#define BGEMM(tile, isa)                                         \
  {gemmi8_bin_gemm_s32_ukernel_##tile##__##isa,                  \
   gemmi8_bin_gemm_f32_ukernel_##tile##__##isa,                  \
   gemmi8_bin_gemm_bits_ukernel_##tile##__##isa}

static const struct gemmi8_qgemm_config qu8_generic = {
    .isa = "generic", .mr = 4, .nr = 8, .kr = 4, .column_bytes = 8,
    .pack = gemmi8_qpack_goi__generic,
    .gemm = {[3] = QGEMM(qu8, 4x8c4, generic)},
    .igemm = {[3] = QIGEMM(qu8, 4x8c4, generic)}};
static const struct gemmi8_qgemm_config qs8_generic = {
    .isa = "generic", .mr = 4, .nr = 8, .kr = 4, .column_bytes = 4,
    .pack = gemmi8_qpack_goi__generic,
    .gemm = {[3] = QGEMM(qs8, 4x8c4, generic)},
    .igemm = {[3] = QIGEMM(qs8, 4x8c4, generic)}};
static const struct gemmi8_bgemm_config bin_generic = {
    .isa = "generic", .mr = 4, .nr = 4, .kr = 1,
    .pack = gemmi8_bpack_words__generic,
    .gemm = {[3] = BGEMM(4x4, generic)},
    .binarize_f32 = gemmi8_binarize_f32__generic,
    .binarize_s8 = gemmi8_binarize_s8__generic,
    .binarize_u8 = gemmi8_binarize_u8__generic};

#if defined(__x86_64__)
/* AVX2: int16 weights (vpmaddwd), 6x16 tiles. The kernel has a k loop per row count
 * and multiplies only the tile's rows, so it is its own small-M kernel: separate 1-,
 * 2- and 4-row instantiations measured no faster at M = 1..4 (the M = 1 loop streams
 * int16 weights at the cache's bandwidth) and cost 110 KB. */
#define AVX2_Q8(type)                                                              \
  {.isa = "avx2", .mr = 6, .nr = 16, .kr = 2, .column_bytes = 4, .weight_bytes = 2, \
   .pack = gemmi8_qpack_goi_s16__generic,                                           \
   .gemm = {[5] = QGEMM(type, 6x16c2, avx2)},                                     \
   .igemm = {[5] = QIGEMM(type, 6x16c2, avx2)}}
static const struct gemmi8_qgemm_config qu8_avx2 = AVX2_Q8(qu8);
static const struct gemmi8_qgemm_config qs8_avx2 = AVX2_Q8(qs8);
static const struct gemmi8_bgemm_config bin_avx2 = {
    .isa = "avx2", .mr = 4, .nr = 8, .kr = 1,
    .pack = gemmi8_bpack_words__generic,
    .gemm = {[3] = BGEMM(4x8, avx2)},
    .binarize_f32 = gemmi8_binarize_f32__avx2,
    .binarize_s8 = gemmi8_binarize_s8__avx2,
    .binarize_u8 = gemmi8_binarize_u8__avx2};

/* AVX-512 VNNI: vpdpbusd on weights xor 0x80, row sums from the driver; 7x48 tiles
 * and 1, 2, 4-row tiles for small M. */
#define AVX512VNNI_Q8(type)                                                           \
  {.isa = "avx512vnni", .mr = 7, .nr = 48, .kr = 4, .column_bytes = 8, .xor_weights = 1, \
   .scaled_row_sum = 1, .group = 16,                                                   \
   .pack = gemmi8_qpack_goi__generic, .row_sum = gemmi8_##type##_rsum__avx512vnni,     \
   .irow_sum = gemmi8_##type##_irsum__avx512vnni,                                      \
   .prepare_fixedpoint = gemmi8_q8_prepare_fixedpoint__avx512vnni,                      \
   .gemm = {[0] = QGEMM(type, 1x48c4, avx512vnni), [1] = QGEMM(type, 2x48c4, avx512vnni), \
            [3] = QGEMM(type, 4x48c4, avx512vnni), [5] = QGEMM(type, 6x48c4, avx512vnni), \
            [6] = QGEMM(type, 7x48c4, avx512vnni)},                                   \
   .igemm = {[6] = QIGEMM(type, 7x48c4, avx512vnni)}}
static const struct gemmi8_qgemm_config qu8_avx512vnni = AVX512VNNI_Q8(qu8);
static const struct gemmi8_qgemm_config qs8_avx512vnni = AVX512VNNI_Q8(qs8);

/* Binary GEMM on AVX-512BW (vpshufb nibble popcounts) and on VPOPCNTDQ. */
#define AVX512_BIN(name, set)                                 \
  {.isa = name, .mr = 6, .nr = 32, .kr = 1,                  \
   .pack = gemmi8_bpack_words__generic,                           \
   .gemm = {[5] = BGEMM(6x32, set)},                               \
   .binarize_f32 = gemmi8_binarize_f32__avx512bw,                 \
   .binarize_s8 = gemmi8_binarize_s8__avx512bw,                   \
   .binarize_u8 = gemmi8_binarize_u8__avx512bw}
static const struct gemmi8_bgemm_config bin_avx512bw = AVX512_BIN("avx512bw", avx512bw);
static const struct gemmi8_bgemm_config bin_avx512vpopcnt =
    AVX512_BIN("avx512vpopcnt", avx512vpopcnt);
#endif

#if defined(__arm__)
/* ARMv7 NEON (kernels/aarch32): exact widening multiplies VMULL.S8 / VMULL.U8 with
 * pairwise accumulation (VPADAL) on the generic packer with KR = 8, NR = 4. qu8
 * multiplies the raw uint8 operands and takes the zero-point term coef * rowsum(a)
 * from the driver's row sums (as the AArch64 qu8 kernels do; NEON row sums for the
 * GEMM and through the convolution's indirection); qs8 multiplies int8 by
 * int8 and needs none. The 2x4c8 tile computes both rows (a row past mr aliases), so
 * M = 1 runs the 1x4c8 tile (half the multiplies; bench/MCA.md). The binary kernels
 * use the generic binary layout (same packer, NR = 4). */
static const struct gemmi8_qgemm_config qu8_neon = {
    .isa = "neon", .mr = 2, .nr = 4, .kr = 8, .column_bytes = 8,
    .pack = gemmi8_qpack_goi__generic, .row_sum = gemmi8_qu8_rsum__neon,
    .irow_sum = gemmi8_qu8_irsum__neon,
    .gemm = {[0] = QGEMM(qu8, 1x4c8, neon), [1] = QGEMM(qu8, 2x4c8, neon)},
    .igemm = {[1] = QIGEMM(qu8, 2x4c8, neon)}};
static const struct gemmi8_qgemm_config qs8_neon = {
    .isa = "neon", .mr = 2, .nr = 4, .kr = 8, .column_bytes = 4,
    .pack = gemmi8_qpack_goi__generic,
    .gemm = {[0] = QGEMM(qs8, 1x4c8, neon), [1] = QGEMM(qs8, 2x4c8, neon)},
    .igemm = {[1] = QIGEMM(qs8, 2x4c8, neon)}};
static const struct gemmi8_bgemm_config bin_neon = {
    .isa = "neon", .mr = 4, .nr = 4, .kr = 1,
    .pack = gemmi8_bpack_words__generic,
    .gemm = {[3] = BGEMM(4x4, neon)},
    .binarize_f32 = gemmi8_binarize_f32__generic,
    .binarize_s8 = gemmi8_binarize_s8__generic,
    .binarize_u8 = gemmi8_binarize_u8__generic};
#endif

#if defined(__aarch64__)
/* AArch64 (kernels/aarch64). qu8 kernels multiply the raw uint8 operands and take the
 * zero-point term coef * rowsum(a) from the driver's row sums; qs8 kernels multiply
 * int8 by int8 and need no row sums. Weights are stored as given (no xor). Every main
 * tile computes all of its rows (rows past mr alias), so each level has tiles of 1 and
 * 2 rows for small M (2 and 4 for i8mm, whose SMMLA takes rows in pairs) on the same
 * packing (bench/MCA.md). */
/* Baseline ARMv8 NEON: widening multiplies (SMULL / UMULL) and pairwise adds; qs8
 * blocks the packer marks pair-safe add two products in 16 bits first (SMLAL2). */
static const struct gemmi8_qgemm_config qu8_a64_neon = {
    .isa = "neon", .mr = 4, .nr = 4, .kr = 16, .column_bytes = 8,
    .pack = gemmi8_qpack_goi__generic, .row_sum = gemmi8_qu8_rsum__neon,
    .gemm = {[0] = QGEMM(qu8, 1x4c16, neon), [1] = QGEMM(qu8, 2x4c16, neon),
             [3] = QGEMM(qu8, 4x4c16, neon)},
    .igemm = {[3] = QIGEMM(qu8, 4x4c16, neon)}};
static const struct gemmi8_qgemm_config qs8_a64_neon = {
    .isa = "neon", .mr = 4, .nr = 4, .kr = 16, .column_bytes = 4, .pair_mark = 1,
    .pack = gemmi8_qpack_goi__generic,
    .gemm = {[0] = QGEMM(qs8, 1x4c16, neon), [1] = QGEMM(qs8, 2x4c16, neon),
             [3] = QGEMM(qs8, 4x4c16, neon)},
    .igemm = {[3] = QIGEMM(qs8, 4x4c16, neon)}};
/* ARMv8.2 dot product (SDOT / UDOT). */
static const struct gemmi8_qgemm_config qu8_a64_neondot = {
    .isa = "neondot", .mr = 4, .nr = 16, .kr = 4, .column_bytes = 8,
    .pack = gemmi8_qpack_goi__generic, .row_sum = gemmi8_qu8_rsum__neon,
    .gemm = {[0] = QGEMM(qu8, 1x16c4, neondot), [1] = QGEMM(qu8, 2x16c4, neondot),
             [3] = QGEMM(qu8, 4x16c4, neondot)},
    .igemm = {[3] = QIGEMM(qu8, 4x16c4, neondot)}};
static const struct gemmi8_qgemm_config qs8_a64_neondot = {
    .isa = "neondot", .mr = 4, .nr = 16, .kr = 4, .column_bytes = 4,
    .pack = gemmi8_qpack_goi__generic,
    .gemm = {[0] = QGEMM(qs8, 1x16c4, neondot), [1] = QGEMM(qs8, 2x16c4, neondot),
             [3] = QGEMM(qs8, 4x16c4, neondot)},
    .igemm = {[3] = QIGEMM(qs8, 4x16c4, neondot)}};
/* The same kernels with the 4x16c4 loop for in-order cores that complete in order
 * (Cortex-A510, A520), taken at the neondot level when the system has such cores
 * (their loop is as fast on the out-of-order models, bench/MCA.md). */
static const struct gemmi8_qgemm_config qu8_a64_neondot_a510 = {
    .isa = "neondot-a510", .mr = 4, .nr = 16, .kr = 4, .column_bytes = 8,
    .pack = gemmi8_qpack_goi__generic, .row_sum = gemmi8_qu8_rsum__neon,
    .gemm = {[0] = QGEMM(qu8, 1x16c4, neondot), [1] = QGEMM(qu8, 2x16c4, neondot),
             [3] = QGEMM(qu8, 4x16c4, neondot_a510)},
    .igemm = {[3] = QIGEMM(qu8, 4x16c4, neondot)}};
static const struct gemmi8_qgemm_config qs8_a64_neondot_a510 = {
    .isa = "neondot-a510", .mr = 4, .nr = 16, .kr = 4, .column_bytes = 4,
    .pack = gemmi8_qpack_goi__generic,
    .gemm = {[0] = QGEMM(qs8, 1x16c4, neondot), [1] = QGEMM(qs8, 2x16c4, neondot),
             [3] = QGEMM(qs8, 4x16c4, neondot_a510)},
    .igemm = {[3] = QIGEMM(qs8, 4x16c4, neondot)}};

/* ARMv8.6 int8 matrix multiply (SMMLA / UMMLA): 6x16 tiles, k groups of 8. */
static const struct gemmi8_qgemm_config qu8_a64_i8mm = {
    .isa = "i8mm", .mr = 6, .nr = 16, .kr = 8, .column_bytes = 8,
    .pack = gemmi8_qpack_goi__generic, .row_sum = gemmi8_qu8_rsum__neon,
    .gemm = {[1] = QGEMM(qu8, 2x16c8, i8mm), [3] = QGEMM(qu8, 4x16c8, i8mm),
             [5] = QGEMM(qu8, 6x16c8, i8mm)},
    .igemm = {[5] = QIGEMM(qu8, 6x16c8, i8mm)},
    .pack_a = gemmi8_x8_packa_6c8__neon, .pgemm = QPGEMM(qu8, 6x16c8, i8mm)};
static const struct gemmi8_qgemm_config qs8_a64_i8mm = {
    .isa = "i8mm", .mr = 6, .nr = 16, .kr = 8, .column_bytes = 4,
    .pack = gemmi8_qpack_goi__generic,
    .gemm = {[1] = QGEMM(qs8, 2x16c8, i8mm), [3] = QGEMM(qs8, 4x16c8, i8mm),
             [5] = QGEMM(qs8, 6x16c8, i8mm)},
    .igemm = {[5] = QIGEMM(qs8, 6x16c8, i8mm)},
    .pack_a = gemmi8_x8_packa_6c8__neon, .pgemm = QPGEMM(qs8, 6x16c8, i8mm)};
/* binary kernels of every level: the generic packer with NR = 4 and depth words in
 * pairs (KR = 2), so that a row of A is read two words at a time, without a broadcast */
static const struct gemmi8_bgemm_config bin_a64_neon = {
    .isa = "neon", .mr = 4, .nr = 4, .kr = 2,
    .pack = gemmi8_bpack_words__generic,
    .gemm = {[3] = BGEMM(4x4c2, neon)}};
#endif

/* ---- CPU features ----------------------------------------------------------------- */

enum {
  feature_avx2 = 1u << 0,          /* AVX2, FMA, BMI2 with ymm state */
  feature_avx512bw = 1u << 1,      /* AVX-512 F, BW, DQ, VL with zmm state */
  feature_avx512vnni = 1u << 2,
  feature_avx512vpopcnt = 1u << 3, /* VPOPCNTDQ and BITALG */
  feature_neon = 1u << 8,          /* ARMv7 NEON or AArch64 Advanced SIMD */
  feature_neondot = 1u << 9,
  feature_i8mm = 1u << 10,
};

#if defined(__x86_64__)
static uint64_t xgetbv0(void)
{
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((uint64_t) edx << 32) | eax;
}

static unsigned detect_features(void)
{
  unsigned f = 0;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  const int osxsave = (ecx >> 27) & 1, avx = (ecx >> 28) & 1, fma = (ecx >> 12) & 1;
  if (!osxsave || !avx) return f;
  const uint64_t xcr0 = xgetbv0();
  const int ymm_state = (xcr0 & 0x6) == 0x6;
  const int zmm_state = (xcr0 & 0xe6) == 0xe6;
  if (__get_cpuid_max(0, NULL) < 7) return f;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const int avx2 = (ebx >> 5) & 1, bmi2 = (ebx >> 8) & 1;
  const int avx512f = (ebx >> 16) & 1, avx512dq = (ebx >> 17) & 1;
  const int avx512bw = (ebx >> 30) & 1, avx512vl = (ebx >> 31) & 1;
  const int avx512vnni = (ecx >> 11) & 1, avx512bitalg = (ecx >> 12) & 1;
  const int avx512vpopcntdq = (ecx >> 14) & 1;
  if (!(ymm_state && avx2 && fma && bmi2)) return f;
  f |= feature_avx2;
  if (!(zmm_state && avx512f && avx512dq && avx512bw && avx512vl)) return f;
  f |= feature_avx512bw;
  if (avx512vnni) f |= feature_avx512vnni;
  if (avx512vpopcntdq && avx512bitalg) f |= feature_avx512vpopcnt;
  return f;
}
#elif defined(__arm__)
static unsigned detect_features(void)
{
  return (getauxval(AT_HWCAP) & HWCAP_NEON) ? feature_neon : 0;
}
#elif defined(__aarch64__)
static unsigned detect_features(void)
{
  const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  unsigned f = 0;
  if (!(hwcap & HWCAP_ASIMD)) return f;
  f |= feature_neon;
  if (!(hwcap & HWCAP_ASIMDDP)) return f;
  f |= feature_neondot;
  if (hwcap2 & HWCAP2_I8MM) f |= feature_i8mm;
  return f;
}
#else
static unsigned detect_features(void) { return 0; }
#endif

/* Kinds of core a kernel set may be tuned for (cpu_cores: those the system has). */
enum {
  core_a510 = 1u << 0, /* Arm Cortex-A510, A520: in order, completing in order */
};

#if defined(__aarch64__) && defined(__linux__)
/* The cores of the system, from the part numbers in each CPU's MIDR_EL1 as Linux shows
 * them (sysfs); none when the files are missing (an emulator, a container without
 * /sys). CPU numbers may have gaps: the scan stops after 64 missing in a row. */
static unsigned detect_cores(void)
{
  unsigned cores = 0;
  for (int cpu = 0, missing = 0; cpu < 4096 && missing < 64; cpu++) {
    char path[96];
    snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/regs/identification/midr_el1",
             cpu);
    FILE* f = fopen(path, "r");
    if (f == NULL) {
      missing++;
      continue;
    }
    missing = 0;
    unsigned long long midr = 0;
    if (fscanf(f, "%llx", &midr) == 1) {
      const unsigned implementer = (unsigned) (midr >> 24) & 0xff;
      const unsigned part = (unsigned) (midr >> 4) & 0xfff;
      if (implementer == 0x41 && (part == 0xd46 || part == 0xd80)) cores |= core_a510;
    }
    fclose(f);
  }
  return cores;
}
#else
static unsigned detect_cores(void) { return 0; }
#endif

/* ---- levels and cascades --------------------------------------------------------------
 * A level (the names GEMMI8_ISA takes) is a set of features, each level a superset of
 * the one before. Each family takes, from its cascade, the last kernel set whose
 * features the CPU has and the level allows: a CPU with AVX-512BW and no VNNI gets
 * the AVX-512BW binary kernels and the AVX2 int8 kernels. */
struct level {
  const char* name;
  unsigned features;
};

static const struct level levels[] = {
    {"generic", 0},
#if defined(__x86_64__)
    {"avx2", feature_avx2},
    {"avx512bw", feature_avx2 | feature_avx512bw},
    {"avx512vnni", feature_avx2 | feature_avx512bw | feature_avx512vnni},
    {"avx512vpopcnt", feature_avx2 | feature_avx512bw | feature_avx512vnni | feature_avx512vpopcnt},
#endif
#if defined(__arm__)
    {"neon", feature_neon},
#endif
#if defined(__aarch64__)
    {"neon", feature_neon},
    {"neondot", feature_neon | feature_neondot},
    {"i8mm", feature_neon | feature_neondot | feature_i8mm},
#endif
};
#define LEVELS (sizeof(levels) / sizeof(levels[0]))

struct qcandidate {
  const struct gemmi8_qgemm_config* qu8;
  const struct gemmi8_qgemm_config* qs8;
  unsigned features;
  /* 0, or the cores (core_*) of which the system must have one for this set to be
   * preferred to the sets before it */
  unsigned cores;
};

struct bcandidate {
  const struct gemmi8_bgemm_config* bin;
  unsigned features;
};

/* best last */
static const struct qcandidate qcandidates[] = {
    {&qu8_generic, &qs8_generic, 0, 0},
#if defined(__x86_64__)
    {&qu8_avx2, &qs8_avx2, feature_avx2, 0},
    {&qu8_avx512vnni, &qs8_avx512vnni, feature_avx2 | feature_avx512bw | feature_avx512vnni, 0},
#endif
#if defined(__arm__)
    {&qu8_neon, &qs8_neon, feature_neon, 0},
#endif
#if defined(__aarch64__)
    {&qu8_a64_neon, &qs8_a64_neon, feature_neon, 0},
    {&qu8_a64_neondot, &qs8_a64_neondot, feature_neon | feature_neondot, 0},
    {&qu8_a64_neondot_a510, &qs8_a64_neondot_a510, feature_neon | feature_neondot, core_a510},
    {&qu8_a64_i8mm, &qs8_a64_i8mm, feature_neon | feature_neondot | feature_i8mm, 0},
#endif
};

static const struct bcandidate bcandidates[] = {
    {&bin_generic, 0},
#if defined(__x86_64__)
    {&bin_avx2, feature_avx2},
    {&bin_avx512bw, feature_avx2 | feature_avx512bw},
    {&bin_avx512vpopcnt, feature_avx2 | feature_avx512bw | feature_avx512vpopcnt},
#endif
#if defined(__arm__)
    {&bin_neon, feature_neon},
#endif
#if defined(__aarch64__)
    {&bin_a64_neon, feature_neon},
#endif
};
#define QCANDIDATES (sizeof(qcandidates) / sizeof(qcandidates[0]))
#define BCANDIDATES (sizeof(bcandidates) / sizeof(bcandidates[0]))

static unsigned cpu_features;
static unsigned cpu_cores;
static struct gemmi8_config selected;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int subset(unsigned needed, unsigned allowed) { return (needed & ~allowed) == 0; }

/* Fills the tables for the features allowed, on a system with the cores given. */
static void fill(unsigned allowed, unsigned cores)
{
  for (size_t i = 0; i < LEVELS; i++) {
    if (subset(levels[i].features, allowed)) selected.isa = levels[i].name;
  }
  for (size_t i = 0; i < QCANDIDATES; i++) {
    if (subset(qcandidates[i].features, allowed) &&
        (qcandidates[i].cores == 0 || (qcandidates[i].cores & cores) != 0)) {
      selected.qu8 = qcandidates[i].qu8;
      selected.qs8 = qcandidates[i].qs8;
    }
  }
  for (size_t i = 0; i < BCANDIDATES; i++) {
    if (subset(bcandidates[i].features, allowed)) selected.bin = bcandidates[i].bin;
  }
}

static const struct level* find_level(const char* name)
{
  for (size_t i = 0; name != NULL && i < LEVELS; i++) {
    if (strcmp(name, levels[i].name) == 0) return &levels[i];
  }
  return NULL;
}

static gemmi8_status env_status = gemmi8_status_success;

static void select_config(void)
{
  cpu_features = detect_features();
  cpu_cores = detect_cores();
  unsigned allowed = cpu_features;
  const char* name = getenv("GEMMI8_ISA");
  if (name != NULL && *name != '\0') {
    const struct level* forced = find_level(name);
    if (forced == NULL) {
      env_status = gemmi8_status_invalid_parameter;
    } else if (!subset(forced->features, cpu_features)) {
      env_status = gemmi8_status_unsupported_hardware;
    } else {
      allowed = forced->features;
    }
  }
  fill(allowed, cpu_cores);
  if (env_status != gemmi8_status_success) {
    /* the one message the library prints: a forced level that was not honoured */
    fprintf(stderr, "gemmi8: GEMMI8_ISA=%s ignored (%s); using %s\n", name,
            env_status == gemmi8_status_invalid_parameter ? "not a level of this build"
                                                          : "not supported by this CPU",
            selected.isa);
  }
}

const struct gemmi8_config* gemmi8_get_config(void)
{
  pthread_once(&once, select_config);
  return &selected;
}

const char* gemmi8_isa_name(void) { return gemmi8_get_config()->isa; }

const char* const* gemmi8_isa_compiled(void)
{
  static const char* names[LEVELS + 1];
  for (size_t i = 0; i < LEVELS; i++) names[i] = levels[i].name;
  names[LEVELS] = NULL;
  return names;
}

gemmi8_status gemmi8_isa_available(const char* name)
{
  gemmi8_get_config();
  const struct level* l = find_level(name);
  if (l == NULL) return gemmi8_status_invalid_parameter;
  return subset(l->features, cpu_features) ? gemmi8_status_success
                                           : gemmi8_status_unsupported_hardware;
}

gemmi8_status gemmi8_isa_env_status(void)
{
  gemmi8_get_config();
  return env_status;
}

int gemmi8_isa_supported(const char* name)
{
  gemmi8_get_config();
  const struct level* l = find_level(name);
  return l != NULL && subset(l->features, cpu_features);
}

int gemmi8_isa_force(const char* name)
{
  gemmi8_get_config();
  const struct level* l = find_level(name);
  if (l == NULL || !subset(l->features, cpu_features)) return -1;
  fill(l->features, cpu_cores);
  return 0;
}

const char* gemmi8_isa_tuned_at(size_t i)
{
  for (size_t c = 0; c < QCANDIDATES; c++) {
    if (qcandidates[c].cores != 0 && i-- == 0) return qcandidates[c].qs8->isa;
  }
  return NULL;
}

int gemmi8_isa_force_tuned(const char* name)
{
  gemmi8_get_config();
  for (size_t c = 0; c < QCANDIDATES; c++) {
    if (qcandidates[c].cores == 0 || strcmp(qcandidates[c].qs8->isa, name) != 0) continue;
    if (!subset(qcandidates[c].features, cpu_features)) return -1;
    fill(qcandidates[c].features, qcandidates[c].cores);
    return 0;
  }
  return -1;
}

const struct gemmi8_qgemm_config* gemmi8_qgemm_config_at(uint32_t type, size_t i, int* supported)
{
  if (i >= QCANDIDATES) return NULL;
  gemmi8_get_config();
  if (supported != NULL) *supported = subset(qcandidates[i].features, cpu_features);
  return type == gemmi8_type_qu8 ? qcandidates[i].qu8 : qcandidates[i].qs8;
}

const struct gemmi8_bgemm_config* gemmi8_bgemm_config_at(size_t i, int* supported)
{
  if (i >= BCANDIDATES) return NULL;
  gemmi8_get_config();
  if (supported != NULL) *supported = subset(bcandidates[i].features, cpu_features);
  return bcandidates[i].bin;
}

int gemmi8_isa_plan(const char* name, const char** qu8, const char** qs8, const char** bin)
{
  const struct level* l = find_level(name);
  if (l == NULL) return -1;
  for (size_t i = 0; i < QCANDIDATES; i++) {
    if (subset(qcandidates[i].features, l->features) && qcandidates[i].cores == 0) {
      *qu8 = qcandidates[i].qu8->isa;
      *qs8 = qcandidates[i].qs8->isa;
    }
  }
  for (size_t i = 0; i < BCANDIDATES; i++) {
    if (subset(bcandidates[i].features, l->features)) *bin = bcandidates[i].bin->isa;
  }
  return 0;
}
