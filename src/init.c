/*
 * Kernel selection: one configuration per instruction set, best last; the best one
 * the CPU supports is chosen once, unless GEMMI8_ISA names a lower one.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
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

enum { layout_generic = 0x01000000u };

static const struct gemmi8_config generic_config = {
    .isa = "generic",
    .qu8 = {.layout = layout_generic | 0x0108,
            .mr = 4, .nr = 8, .kr = 4, .column_bytes = 8,
            .pack = gemmi8_qpack_goi__generic,
            .s32 = gemmi8_qu8_gemm_s32_ukernel_4x8c4__generic,
            .fixedpoint = gemmi8_qu8_gemm_fixedpoint_ukernel_4x8c4__generic,
            .fp32 = gemmi8_qu8_gemm_fp32_ukernel_4x8c4__generic},
    .qs8 = {.layout = layout_generic | 0x0208,
            .mr = 4, .nr = 8, .kr = 4, .column_bytes = 4,
            .pack = gemmi8_qpack_goi__generic,
            .s32 = gemmi8_qs8_gemm_s32_ukernel_4x8c4__generic,
            .fixedpoint = gemmi8_qs8_gemm_fixedpoint_ukernel_4x8c4__generic,
            .fp32 = gemmi8_qs8_gemm_fp32_ukernel_4x8c4__generic},
    .bin = {.layout = layout_generic | 0x0304,
            .mr = 4, .nr = 4,
            .pack = gemmi8_bpack_words__generic,
            .s32 = gemmi8_bin_gemm_s32_ukernel_4x4__generic,
            .f32 = gemmi8_bin_gemm_f32_ukernel_4x4__generic,
            .bits = gemmi8_bin_gemm_bits_ukernel_4x4__generic,
            .binarize_f32 = gemmi8_binarize_f32__generic,
            .binarize_s8 = gemmi8_binarize_s8__generic,
            .binarize_u8 = gemmi8_binarize_u8__generic},
};

#if defined(__x86_64__)
/* AVX2 (x86-64-v3 without AVX-512). */
static const struct gemmi8_config avx2_config = {
    .isa = "avx2",
    .qu8 = {.layout = 0x02000000u | 0x0110,
            .mr = 6, .nr = 16, .kr = 2, .column_bytes = 4, .weight_bytes = 2,
            .pack = gemmi8_qpack_goi_s16__generic,
            .s32 = gemmi8_qu8_gemm_s32_ukernel_6x16c2__avx2,
            .fixedpoint = gemmi8_qu8_gemm_fixedpoint_ukernel_6x16c2__avx2,
            .fp32 = gemmi8_qu8_gemm_fp32_ukernel_6x16c2__avx2},
    .qs8 = {.layout = 0x02000000u | 0x0210,
            .mr = 6, .nr = 16, .kr = 2, .column_bytes = 4, .weight_bytes = 2,
            .pack = gemmi8_qpack_goi_s16__generic,
            .s32 = gemmi8_qs8_gemm_s32_ukernel_6x16c2__avx2,
            .fixedpoint = gemmi8_qs8_gemm_fixedpoint_ukernel_6x16c2__avx2,
            .fp32 = gemmi8_qs8_gemm_fp32_ukernel_6x16c2__avx2},
    .bin = {.layout = 0x02000000u | 0x0308,
            .mr = 4, .nr = 8,
            .pack = gemmi8_bpack_words__generic,
            .s32 = gemmi8_bin_gemm_s32_ukernel_4x8__avx2,
            .f32 = gemmi8_bin_gemm_f32_ukernel_4x8__avx2,
            .bits = gemmi8_bin_gemm_bits_ukernel_4x8__avx2,
            .binarize_f32 = gemmi8_binarize_f32__avx2,
            .binarize_s8 = gemmi8_binarize_s8__avx2,
            .binarize_u8 = gemmi8_binarize_u8__avx2},
};

/* int8 kernels shared by the AVX-512 levels */
#define AVX512VNNI_QU8 \
  {.layout = 0x03000000u | 0x0130, \
  .mr = 7, .nr = 48, .kr = 4, .column_bytes = 8, .xor_weights = 1, \
  .pack = gemmi8_qpack_goi__generic, \
  .row_sum = gemmi8_qu8_rsum__avx512vnni, .scaled_row_sum = 1, .group = 16, \
  .s32 = gemmi8_qu8_gemm_s32_ukernel_7x48c4__avx512vnni, \
  .fixedpoint = gemmi8_qu8_gemm_fixedpoint_ukernel_7x48c4__avx512vnni, \
  .fp32 = gemmi8_qu8_gemm_fp32_ukernel_7x48c4__avx512vnni}
#define AVX512VNNI_QS8 \
  {.layout = 0x03000000u | 0x0230, \
  .mr = 7, .nr = 48, .kr = 4, .column_bytes = 8, .xor_weights = 1, \
  .pack = gemmi8_qpack_goi__generic, \
  .row_sum = gemmi8_qs8_rsum__avx512vnni, .scaled_row_sum = 1, .group = 16, \
  .s32 = gemmi8_qs8_gemm_s32_ukernel_7x48c4__avx512vnni, \
  .fixedpoint = gemmi8_qs8_gemm_fixedpoint_ukernel_7x48c4__avx512vnni, \
  .fp32 = gemmi8_qs8_gemm_fp32_ukernel_7x48c4__avx512vnni}

#define AVX512_BINARIZE                             \
  .binarize_f32 = gemmi8_binarize_f32__avx512bw, \
  .binarize_s8 = gemmi8_binarize_s8__avx512bw,   \
  .binarize_u8 = gemmi8_binarize_u8__avx512bw

static const struct gemmi8_config avx512vnni_config = {
    .isa = "avx512vnni",
    .qu8 = AVX512VNNI_QU8,
    .qs8 = AVX512VNNI_QS8,
    .bin = {.layout = 0x03000000u | 0x0320,
            .mr = 6, .nr = 32,
            .pack = gemmi8_bpack_words__generic,
            .s32 = gemmi8_bin_gemm_s32_ukernel_6x32__avx512bw,
            .f32 = gemmi8_bin_gemm_f32_ukernel_6x32__avx512bw,
            .bits = gemmi8_bin_gemm_bits_ukernel_6x32__avx512bw,
            AVX512_BINARIZE},
};

/* The same int8 kernels; binary GEMM by VPOPCNTDQ. */
static const struct gemmi8_config avx512vpopcnt_config = {
    .isa = "avx512vpopcnt",
    .qu8 = AVX512VNNI_QU8,
    .qs8 = AVX512VNNI_QS8,
    .bin = {.layout = 0x03000000u | 0x0320,
            .mr = 6, .nr = 32,
            .pack = gemmi8_bpack_words__generic,
            .s32 = gemmi8_bin_gemm_s32_ukernel_6x32__avx512vpopcnt,
            .f32 = gemmi8_bin_gemm_f32_ukernel_6x32__avx512vpopcnt,
            .bits = gemmi8_bin_gemm_bits_ukernel_6x32__avx512vpopcnt,
            AVX512_BINARIZE},
};
#endif

#if defined(__arm__)
/* ARMv7 NEON (kernels/aarch32): VMLAL int8 kernels on the generic packer with KR = 1;
 * the binary kernels use the generic binary layout (same packer, NR = 4), so they
 * share its id. */
static const struct gemmi8_config neon_config = {
    .isa = "neon",
    .qu8 = {.layout = 0x32000000u | 0x0108,
            .mr = 4, .nr = 8, .kr = 1, .column_bytes = 8,
            .pack = gemmi8_qpack_goi__generic,
            .s32 = gemmi8_qu8_gemm_s32_ukernel_4x8c1__neon,
            .fixedpoint = gemmi8_qu8_gemm_fixedpoint_ukernel_4x8c1__neon,
            .fp32 = gemmi8_qu8_gemm_fp32_ukernel_4x8c1__neon},
    .qs8 = {.layout = 0x32000000u | 0x0208,
            .mr = 4, .nr = 8, .kr = 1, .column_bytes = 4,
            .pack = gemmi8_qpack_goi__generic,
            .s32 = gemmi8_qs8_gemm_s32_ukernel_4x8c1__neon,
            .fixedpoint = gemmi8_qs8_gemm_fixedpoint_ukernel_4x8c1__neon,
            .fp32 = gemmi8_qs8_gemm_fp32_ukernel_4x8c1__neon},
    .bin = {.layout = layout_generic | 0x0304,
            .mr = 4, .nr = 4,
            .pack = gemmi8_bpack_words__generic,
            .s32 = gemmi8_bin_gemm_s32_ukernel_4x4__neon,
            .f32 = gemmi8_bin_gemm_f32_ukernel_4x4__neon,
            .bits = gemmi8_bin_gemm_bits_ukernel_4x4__neon,
            .binarize_f32 = gemmi8_binarize_f32__generic,
            .binarize_s8 = gemmi8_binarize_s8__generic,
            .binarize_u8 = gemmi8_binarize_u8__generic},
};
#endif

#if defined(__aarch64__)
/* AArch64 (kernels/aarch64). qu8 kernels multiply the raw uint8 operands and take the
 * zero-point term coef * rowsum(a) from the driver's row sums; qs8 kernels multiply
 * int8 by int8 and need no row sums. Weights are stored as given (no xor). */
#define A64_NEONDOT_QU8                                             \
  {.layout = 0x65000000u | 0x0110,                                  \
   .mr = 4, .nr = 16, .kr = 4, .column_bytes = 8,                   \
   .pack = gemmi8_qpack_goi__generic,                               \
   .row_sum = gemmi8_qu8_rsum__neon,                                \
   .s32 = gemmi8_qu8_gemm_s32_ukernel_4x16c4__neondot,              \
   .fixedpoint = gemmi8_qu8_gemm_fixedpoint_ukernel_4x16c4__neondot,          \
   .fp32 = gemmi8_qu8_gemm_fp32_ukernel_4x16c4__neondot}
#define A64_NEONDOT_QS8                                             \
  {.layout = 0x65000000u | 0x0210,                                  \
   .mr = 4, .nr = 16, .kr = 4, .column_bytes = 4,                   \
   .pack = gemmi8_qpack_goi__generic,                               \
   .s32 = gemmi8_qs8_gemm_s32_ukernel_4x16c4__neondot,              \
   .fixedpoint = gemmi8_qs8_gemm_fixedpoint_ukernel_4x16c4__neondot,          \
   .fp32 = gemmi8_qs8_gemm_fp32_ukernel_4x16c4__neondot}
/* binary kernels of every level: the generic layout with NR = 8 */
#define A64_BIN                                                     \
  {.layout = 0x64000000u | 0x0308,                                  \
   .mr = 4, .nr = 8,                                                \
   .pack = gemmi8_bpack_words__generic,                             \
   .s32 = gemmi8_bin_gemm_s32_ukernel_4x8__neon,                    \
   .f32 = gemmi8_bin_gemm_f32_ukernel_4x8__neon,                    \
   .bits = gemmi8_bin_gemm_bits_ukernel_4x8__neon}

/* Baseline ARMv8 NEON: widening multiplies (SMULL / UMULL) and pairwise adds. */
static const struct gemmi8_config a64_neon_config = {
    .isa = "neon",
    .qu8 = {.layout = 0x64000000u | 0x0104,
            .mr = 4, .nr = 4, .kr = 16, .column_bytes = 8,
            .pack = gemmi8_qpack_goi__generic,
            .row_sum = gemmi8_qu8_rsum__neon,
            .s32 = gemmi8_qu8_gemm_s32_ukernel_4x4c16__neon,
            .fixedpoint = gemmi8_qu8_gemm_fixedpoint_ukernel_4x4c16__neon,
            .fp32 = gemmi8_qu8_gemm_fp32_ukernel_4x4c16__neon},
    .qs8 = {.layout = 0x64000000u | 0x0204,
            .mr = 4, .nr = 4, .kr = 16, .column_bytes = 4,
            .pack = gemmi8_qpack_goi__generic,
            .s32 = gemmi8_qs8_gemm_s32_ukernel_4x4c16__neon,
            .fixedpoint = gemmi8_qs8_gemm_fixedpoint_ukernel_4x4c16__neon,
            .fp32 = gemmi8_qs8_gemm_fp32_ukernel_4x4c16__neon},
    .bin = A64_BIN,
};

/* ARMv8.2 dot product (SDOT / UDOT). */
static const struct gemmi8_config a64_neondot_config = {
    .isa = "neondot",
    .qu8 = A64_NEONDOT_QU8,
    .qs8 = A64_NEONDOT_QS8,
    .bin = A64_BIN,
};

/* ARMv8.6 int8 matrix multiply (SMMLA / UMMLA): 6x16 tiles, k groups of 8. */
static const struct gemmi8_config a64_i8mm_config = {
    .isa = "i8mm",
    .qu8 = {.layout = 0x66000000u | 0x0110,
            .mr = 6, .nr = 16, .kr = 8, .column_bytes = 8,
            .pack = gemmi8_qpack_goi__generic,
            .row_sum = gemmi8_qu8_rsum__neon,
            .s32 = gemmi8_qu8_gemm_s32_ukernel_6x16c8__i8mm,
            .fixedpoint = gemmi8_qu8_gemm_fixedpoint_ukernel_6x16c8__i8mm,
            .fp32 = gemmi8_qu8_gemm_fp32_ukernel_6x16c8__i8mm},
    .qs8 = {.layout = 0x66000000u | 0x0210,
            .mr = 6, .nr = 16, .kr = 8, .column_bytes = 4,
            .pack = gemmi8_qpack_goi__generic,
            .s32 = gemmi8_qs8_gemm_s32_ukernel_6x16c8__i8mm,
            .fixedpoint = gemmi8_qs8_gemm_fixedpoint_ukernel_6x16c8__i8mm,
            .fp32 = gemmi8_qs8_gemm_fp32_ukernel_6x16c8__i8mm},
    .bin = A64_BIN,
};
#endif

/* ---- CPU features ----------------------------------------------------------------- */

#if defined(__x86_64__)
static uint64_t xgetbv0(void)
{
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((uint64_t) edx << 32) | eax;
}

struct x86_features {
  int avx2, avx512vnni, avx512vpopcnt;
};

static struct x86_features detect_x86(void)
{
  struct x86_features f = {0, 0, 0};
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
  f.avx2 = ymm_state && avx2 && fma && bmi2;
  const int avx512 = f.avx2 && zmm_state && avx512f && avx512dq && avx512bw && avx512vl;
  f.avx512vnni = avx512 && avx512vnni;
  f.avx512vpopcnt = avx512 && avx512vpopcntdq && avx512bitalg;
  return f;
}
#endif

/* ---- the table ---------------------------------------------------------------------- */

struct candidate {
  const struct gemmi8_config* config;
  int (*supported)(void);
};

static int always(void) { return 1; }

#if defined(__x86_64__)
static int has_avx2(void) { return detect_x86().avx2; }
static int has_avx512vnni(void) { return detect_x86().avx512vnni; }
static int has_avx512vpopcnt(void)
{
  const struct x86_features f = detect_x86();
  return f.avx512vnni && f.avx512vpopcnt;
}
#endif

#if defined(__arm__)
static int has_neon(void) { return (getauxval(AT_HWCAP) & HWCAP_NEON) != 0; }
#endif
#if defined(__aarch64__)
static int has_asimd(void) { return (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0; }
static int has_dotprod(void)
{
  const unsigned long hwcap = getauxval(AT_HWCAP);
  return (hwcap & HWCAP_ASIMD) && (hwcap & HWCAP_ASIMDDP);
}
static int has_i8mm(void)
{
  return has_dotprod() && (getauxval(AT_HWCAP2) & HWCAP2_I8MM) != 0;
}
#endif

static const struct candidate candidates[] = {
    {&generic_config, always},
#if defined(__arm__)
    {&neon_config, has_neon},
#endif
#if defined(__aarch64__)
    {&a64_neon_config, has_asimd},
    {&a64_neondot_config, has_dotprod},
    {&a64_i8mm_config, has_i8mm},
#endif
#if defined(__x86_64__)
    {&avx2_config, has_avx2},
    {&avx512vnni_config, has_avx512vnni},
    {&avx512vpopcnt_config, has_avx512vpopcnt},
#endif
};
#define CANDIDATES (sizeof(candidates) / sizeof(candidates[0]))

static const struct gemmi8_config* selected;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void select_config(void)
{
  size_t best = 0;
  for (size_t i = 0; i < CANDIDATES; i++) {
    if (candidates[i].supported()) best = i;
  }
  const char* forced = getenv("GEMMI8_ISA");
  if (forced != NULL) {
    for (size_t i = 0; i <= best; i++) {
      if (strcmp(forced, candidates[i].config->isa) == 0 && candidates[i].supported()) {
        best = i;
      }
    }
  }
  selected = candidates[best].config;
}

const struct gemmi8_config* gemmi8_get_config(void)
{
  pthread_once(&once, select_config);
  return selected;
}

const char* gemmi8_isa_name(void) { return gemmi8_get_config()->isa; }

const char* const* gemmi8_isa_compiled(void)
{
  static const char* names[CANDIDATES + 1];
  for (size_t i = 0; i < CANDIDATES; i++) names[i] = candidates[i].config->isa;
  names[CANDIDATES] = NULL;
  return names;
}

int gemmi8_isa_supported(const char* name)
{
  for (size_t i = 0; i < CANDIDATES; i++) {
    if (name != NULL && strcmp(name, candidates[i].config->isa) == 0) {
      return candidates[i].supported();
    }
  }
  return 0;
}

int gemmi8_isa_force(const char* name)
{
  gemmi8_get_config();
  for (size_t i = 0; i < CANDIDATES; i++) {
    if (name != NULL && strcmp(name, candidates[i].config->isa) == 0 &&
        candidates[i].supported()) {
      selected = candidates[i].config;
      return 0;
    }
  }
  return -1;
}
