/*
 * Kernel selection: the family tables, built from the kernel lists
 * (kernels/<type>.inc) for the sets and types this build holds, and for each family
 * the cascade that picks, once, its best set that the CPU supports and GEMMI8_ISA
 * allows.
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

/* ---- family tables, from the kernel lists ----------------------------------------- */

/* Each set's main tile, for the static assertions below. */
#define GEMMI8_QSET(set, type, name, features, cores, mr, nr, kr, group, flags, pack) \
  GEMMI8_IF_BUILT(set, type, enum { type##_##set##_mr = mr, type##_##set##_nr = nr,   \
                                    type##_##set##_kr = kr };)
#define GEMMI8_QEND(set, type)
#define GEMMI8_QHELPER(set, type, role, symbol, file)
#define GEMMI8_QUKERNEL(set, type, kind, out, mr, nr, kr, isa, symbol, file)
#define GEMMI8_BSET(set, name, features, mr, nr, kr) \
  GEMMI8_IF_BUILT(set, bin, enum { bin_##set##_mr = mr, bin_##set##_nr = nr, bin_##set##_kr = kr };)
#define GEMMI8_BEND(set)
#define GEMMI8_BHELPER(set, role, symbol, file)
#define GEMMI8_BUKERNEL(set, kind, out, mr, nr, kr, isa, symbol, file)
#define GEMMI8_DWSET(set, name, features, cr, tap_bytes, tap_group, bytes9, row_pairs) \
  GEMMI8_IF_BUILT(set, dw, enum { dw_##set##_cr = cr };)
#define GEMMI8_DWEND(set)
#define GEMMI8_DWHELPER(set, role, symbol, file)
#define GEMMI8_DWUKERNEL(set, taps, out, cr, isa, symbol, file)
#define GEMMI8_Q4SET(set, name, features, mr, nr) \
  GEMMI8_IF_BUILT(set, q4, enum { q4_##set##_mr = mr, q4_##set##_nr = nr };)
#define GEMMI8_Q4END(set)
#define GEMMI8_Q4UKERNEL(set, mr, nr, isa, symbol, file)
#include "qu8.inc"
#include "qs8.inc"
#include "bin.inc"
#include "dw.inc"
#include "q4.inc"
#undef GEMMI8_QSET
#undef GEMMI8_QUKERNEL
#undef GEMMI8_BSET
#undef GEMMI8_BUKERNEL
#undef GEMMI8_DWSET
#undef GEMMI8_DWUKERNEL
#undef GEMMI8_Q4SET
#undef GEMMI8_Q4UKERNEL

/* A kernel's tile agrees with its set: the same NR and KR, MR within the set's (the
 * main tile for pgemm), MR within GEMMI8_MAX_MR. */
#define GEMMI8_QSET(set, type, ...)
#define GEMMI8_QUKERNEL(set, type, kind, out, mr, nr, kr, isa, symbol, file)                   \
  GEMMI8_IF_BUILT(set, type,                                                                 \
                  _Static_assert(nr == type##_##set##_nr && kr == type##_##set##_kr &&       \
                                     mr <= type##_##set##_mr && mr <= GEMMI8_MAX_MR &&       \
                                     (!GEMMI8_KIND_IS_pgemm_##kind || mr == type##_##set##_mr), \
                                 #symbol ": its tile agrees with its set's");)
#define GEMMI8_KIND_IS_pgemm_gemm 0
#define GEMMI8_KIND_IS_pgemm_igemm 0
#define GEMMI8_KIND_IS_pgemm_pgemm 1
#define GEMMI8_KIND_IS_igemm_gemm 0
#define GEMMI8_KIND_IS_igemm_igemm 1
#define GEMMI8_BSET(set, ...)
#define GEMMI8_BUKERNEL(set, kind, out, mr, nr, kr, isa, symbol, file)                    \
  GEMMI8_IF_BUILT(set, bin,                                                               \
                  _Static_assert(nr == bin_##set##_nr && kr == bin_##set##_kr &&          \
                                     mr <= bin_##set##_mr && mr <= GEMMI8_MAX_MR &&       \
                                     (!GEMMI8_KIND_IS_igemm_##kind || mr == bin_##set##_mr), \
                                 #symbol ": its tile agrees with its set's");)
#define GEMMI8_DWSET(set, ...)
#define GEMMI8_DWUKERNEL(set, taps, out, cr, isa, symbol, file)                  \
  GEMMI8_IF_BUILT(set, dw, _Static_assert(cr == dw_##set##_cr,                \
                                          #symbol ": its tile agrees with its set's");)
#define GEMMI8_Q4SET(set, ...)
#define GEMMI8_Q4UKERNEL(set, mr, nr, isa, symbol, file)                                 \
  GEMMI8_IF_BUILT(set, q4, _Static_assert(nr == q4_##set##_nr && mr <= q4_##set##_mr &&    \
                                              mr <= GEMMI8_MAX_MR && nr % 16 == 0,        \
                                          #symbol ": its tile agrees with its set's");)
#include "qu8.inc"
#include "qs8.inc"
#include "bin.inc"
#include "dw.inc"
#include "q4.inc"
#undef GEMMI8_Q4SET
#undef GEMMI8_Q4END
#undef GEMMI8_Q4UKERNEL
#undef GEMMI8_QSET
#undef GEMMI8_QEND
#undef GEMMI8_QUKERNEL
#undef GEMMI8_QHELPER
#undef GEMMI8_BSET
#undef GEMMI8_BEND
#undef GEMMI8_BUKERNEL
#undef GEMMI8_BHELPER
#undef GEMMI8_DWSET
#undef GEMMI8_DWEND
#undef GEMMI8_DWUKERNEL
#undef GEMMI8_DWHELPER

/* The tables: a set row opens an initializer, its kernel rows fill slots by tile
 * height, kind and output (through the name their fields spell), its end closes it.
 * Each family's array ends with an empty entry (isa NULL). */
#define GEMMI8_QSET(set, type, name, features_, cores_, mr_, nr_, kr_, group_, flags_, pack_) \
  GEMMI8_IF_BUILT(set, type, {.isa = name, .features = (features_), .cores = (cores_),      \
                              .mr = mr_, .nr = nr_, .kr = kr_, .group = group_,              \
                              .flags = (flags_), .pack = pack_,)
#define GEMMI8_QUKERNEL(set, type, kind, output, mr, nr, kr, isa, symbol, file)         \
  GEMMI8_IF_BUILT(set, type, GEMMI8_QSLOT_##kind(mr).out[gemmi8_qoutput_##output] =   \
                                 GEMMI8_QUKERNEL_NAME(type, kind, output, mr, nr, kr, isa),)
#define GEMMI8_QSLOT_gemm(mr) .gemm[mr - 1]
#define GEMMI8_QSLOT_igemm(mr) .igemm[mr - 1]
#define GEMMI8_QSLOT_pgemm(mr) .pgemm
#define GEMMI8_QHELPER(set, type, role, symbol, file) GEMMI8_IF_BUILT(set, type, .role = symbol,)
#define GEMMI8_QEND(set, type) GEMMI8_IF_BUILT(set, type, },)
#define GEMMI8_BSET(set, name, features_, mr_, nr_, kr_)                                 \
  GEMMI8_IF_BUILT(set, bin, {.isa = name, .features = (features_), .mr = mr_, .nr = nr_, \
                             .kr = kr_, .pack = gemmi8_bpack_words__generic,)
#define GEMMI8_BUKERNEL(set, kind, output, mr, nr, kr, isa, symbol, file)          \
  GEMMI8_IF_BUILT(set, bin, GEMMI8_BSLOT_##kind(mr).out[gemmi8_boutput_##output] = \
                                GEMMI8_BUKERNEL_NAME(kind, output, mr, nr, kr, isa),)
#define GEMMI8_BSLOT_gemm(mr) .gemm[mr - 1]
#define GEMMI8_BSLOT_igemm(mr) .igemm
#define GEMMI8_BHELPER(set, role, symbol, file) GEMMI8_IF_BUILT(set, bin, .role = symbol,)
#define GEMMI8_BEND(set) GEMMI8_IF_BUILT(set, bin, },)
#define GEMMI8_DWSET(set, name, features_, cr_, tap_bytes_, tap_group_, bytes9_, row_pairs_) \
  GEMMI8_IF_BUILT(set, dw, {.isa = name, .features = (features_), .cr = cr_,                 \
                            .tap_bytes = tap_bytes_, .tap_group = tap_group_,                \
                            .bytes9 = bytes9_, .row_pairs = row_pairs_,)
#define GEMMI8_DWUKERNEL(set, taps_, output, cr, isa, symbol, file)                 \
  GEMMI8_IF_BUILT(set, dw, .taps[GEMMI8_DWSLOT_##taps_].out[gemmi8_qoutput_##output] = \
                               GEMMI8_DWUKERNEL_NAME(output, taps_, cr, isa),)
#define GEMMI8_DWSLOT_9 gemmi8_dwtaps_9
#define GEMMI8_DWSLOT_25 gemmi8_dwtaps_25
#define GEMMI8_DWSLOT_0 gemmi8_dwtaps_any
#define GEMMI8_DWHELPER(set, role, symbol, file) GEMMI8_IF_BUILT(set, dw, .role = symbol,)
#define GEMMI8_DWEND(set) GEMMI8_IF_BUILT(set, dw, },)

static const struct gemmi8_qgemm_config qu8_sets[] = {
#include "qu8.inc"
    {.isa = NULL}};
static const struct gemmi8_qgemm_config qs8_sets[] = {
#include "qs8.inc"
    {.isa = NULL}};
static const struct gemmi8_bgemm_config bin_sets[] = {
#include "bin.inc"
    {.isa = NULL}};
static const struct gemmi8_dwconv_config dw_sets[] = {
#include "dw.inc"
    {.isa = NULL}};
#define GEMMI8_Q4SET(set, name, features_, mr_, nr_) \
  GEMMI8_IF_BUILT(set, q4, {.isa = name, .features = (features_), .mr = mr_, .nr = nr_,)
#define GEMMI8_Q4UKERNEL(set, mr, nr, isa, symbol, file) \
  GEMMI8_IF_BUILT(set, q4, .gemm[mr - 1] = GEMMI8_Q4UKERNEL_NAME(mr, nr, isa),)
#define GEMMI8_Q4END(set) GEMMI8_IF_BUILT(set, q4, },)
static const struct gemmi8_q4gemm_config q4_sets[] = {
#include "q4.inc"
    {.isa = NULL}};
#undef GEMMI8_Q4SET
#undef GEMMI8_Q4END
#undef GEMMI8_Q4UKERNEL

/* ---- CPU features ----------------------------------------------------------------- */

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
  f |= GEMMI8_F_AVX2;
  if (!(zmm_state && avx512f && avx512dq && avx512bw && avx512vl)) return f;
  f |= GEMMI8_F_AVX512BW;
  if (avx512vnni) f |= GEMMI8_F_AVX512VNNI;
  if (avx512vpopcntdq && avx512bitalg) f |= GEMMI8_F_AVX512VPOPCNT;
  return f;
}
#elif defined(__arm__)
static unsigned detect_features(void)
{
  return (getauxval(AT_HWCAP) & HWCAP_NEON) ? GEMMI8_F_NEON : 0;
}
#elif defined(__aarch64__)
static unsigned detect_features(void)
{
  const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  unsigned f = 0;
  if (!(hwcap & HWCAP_ASIMD)) return f;
  f |= GEMMI8_F_NEON;
  if (!(hwcap & HWCAP_ASIMDDP)) return f;
  f |= GEMMI8_F_NEONDOT;
  if (hwcap2 & HWCAP2_I8MM) f |= GEMMI8_F_I8MM;
  return f;
}
#else
static unsigned detect_features(void) { return 0; }
#endif

/* The kinds of core the system has (GEMMI8_CORE_*). */
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
      if (implementer == 0x41 && (part == 0xd46 || part == 0xd80)) cores |= GEMMI8_CORE_A510;
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
 * the one before; a build lists the levels of the sets it holds. Each family takes,
 * from its cascade (its list, best first), the first kernel set whose features the
 * level allows (and whose cores, if it names some, the system has): a CPU with
 * AVX-512BW and no VNNI gets the AVX-512BW binary kernels and the AVX2 int8 kernels. */
struct level {
  const char* name;
  unsigned features;
};

static const struct level levels[] = {
    {"generic", 0},
#if defined(__x86_64__)
#if GEMMI8_SET_avx2
    {"avx2", GEMMI8_F_AVX2},
#endif
#if GEMMI8_SET_avx512bw
    {"avx512bw", GEMMI8_F_AVX2 | GEMMI8_F_AVX512BW},
#endif
#if GEMMI8_SET_avx512vnni
    {"avx512vnni", GEMMI8_F_AVX2 | GEMMI8_F_AVX512BW | GEMMI8_F_AVX512VNNI},
#endif
#if GEMMI8_SET_avx512vpopcnt
    {"avx512vpopcnt",
     GEMMI8_F_AVX2 | GEMMI8_F_AVX512BW | GEMMI8_F_AVX512VNNI | GEMMI8_F_AVX512VPOPCNT},
#endif
#endif
#if defined(__arm__) && GEMMI8_SET_armv7neon
    {"armv7neon", GEMMI8_F_NEON},
#endif
#if defined(__aarch64__)
#if GEMMI8_SET_neon
    {"neon", GEMMI8_F_NEON},
#endif
#if GEMMI8_SET_neondot
    {"neondot", GEMMI8_F_NEON | GEMMI8_F_NEONDOT},
#endif
#if GEMMI8_SET_i8mm
    {"i8mm", GEMMI8_F_NEON | GEMMI8_F_NEONDOT | GEMMI8_F_I8MM},
#endif
#endif
};
#define LEVELS (sizeof(levels) / sizeof(levels[0]))

static unsigned cpu_features;
static unsigned cpu_cores;
static const char* level_name;
static gemmi8_status env_status = gemmi8_status_success;
/* the features the families may use, and the cores they may be tuned for */
static unsigned allowed_features;
static unsigned allowed_cores;
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;

static int subset(unsigned needed, unsigned allowed) { return (needed & ~allowed) == 0; }

static int takes(unsigned features, unsigned cores, unsigned allowed, unsigned system_cores)
{
  return subset(features, allowed) && (cores == 0 || (cores & system_cores) != 0);
}

/* The first set of a cascade that the features and cores allow (generic is last and
 * needs nothing); NULL for a type the build does not hold. */
static const struct gemmi8_qgemm_config* qpick(const struct gemmi8_qgemm_config* sets,
                                               unsigned allowed, unsigned cores)
{
  for (size_t i = 0; sets[i].isa != NULL; i++) {
    if (takes(sets[i].features, sets[i].cores, allowed, cores)) return &sets[i];
  }
  return NULL;
}

static const struct gemmi8_dwconv_config* dwpick(unsigned allowed)
{
  for (size_t i = 0; dw_sets[i].isa != NULL; i++) {
    if (subset(dw_sets[i].features, allowed)) return &dw_sets[i];
  }
  return NULL;
}

static const struct gemmi8_q4gemm_config* q4pick(unsigned allowed)
{
  for (size_t i = 0; q4_sets[i].isa != NULL; i++) {
    if (subset(q4_sets[i].features, allowed)) return &q4_sets[i];
  }
  return NULL;
}

static const struct gemmi8_bgemm_config* bpick(unsigned allowed)
{
  for (size_t i = 0; bin_sets[i].isa != NULL; i++) {
    if (subset(bin_sets[i].features, allowed)) return &bin_sets[i];
  }
  return NULL;
}

static const struct level* find_level(const char* name)
{
  for (size_t i = 0; name != NULL && i < LEVELS; i++) {
    if (strcmp(name, levels[i].name) == 0) return &levels[i];
  }
  return NULL;
}

static void set_level(unsigned allowed)
{
  for (size_t i = 0; i < LEVELS; i++) {
    if (subset(levels[i].features, allowed)) level_name = levels[i].name;
  }
}

static void detect(void)
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
  allowed_features = allowed;
  allowed_cores = cpu_cores;
  set_level(allowed);
  if (env_status != gemmi8_status_success) {
    /* the one message the library prints: a forced level that was not honoured */
    fprintf(stderr, "gemmi8: GEMMI8_ISA=%s ignored (%s); using %s\n", name,
            env_status == gemmi8_status_invalid_parameter ? "not a level of this build"
                                                          : "not supported by this CPU",
            level_name);
  }
}

/* Each family's choice, made once on its first call (and again by the tests' forcing). */
static const struct gemmi8_qgemm_config* qu8_chosen;
static const struct gemmi8_qgemm_config* qs8_chosen;
static const struct gemmi8_qgemm_config* qu8s8_chosen;
static const struct gemmi8_bgemm_config* bin_chosen;
static const struct gemmi8_dwconv_config* dw_chosen;
static const struct gemmi8_q4gemm_config* q4_chosen;
static pthread_once_t q4_once = PTHREAD_ONCE_INIT;
static pthread_once_t qu8_once = PTHREAD_ONCE_INIT, qs8_once = PTHREAD_ONCE_INIT;
static pthread_once_t qu8s8_once = PTHREAD_ONCE_INIT, bin_once = PTHREAD_ONCE_INIT;
static pthread_once_t dw_once = PTHREAD_ONCE_INIT;

static void choose_qu8(void)
{
  pthread_once(&detect_once, detect);
  qu8_chosen = GEMMI8_TYPE_qu8 ? qpick(qu8_sets, allowed_features, allowed_cores) : NULL;
}
static void choose_qs8(void)
{
  pthread_once(&detect_once, detect);
  qs8_chosen = GEMMI8_TYPE_qs8 ? qpick(qs8_sets, allowed_features, allowed_cores) : NULL;
}
/* qu8s8 runs the qu8 tables on its own packed weights */
static void choose_qu8s8(void)
{
  pthread_once(&detect_once, detect);
  qu8s8_chosen = GEMMI8_TYPE_qu8s8 ? qpick(qu8_sets, allowed_features, allowed_cores) : NULL;
}
static void choose_bin(void)
{
  pthread_once(&detect_once, detect);
  bin_chosen = GEMMI8_TYPE_bin ? bpick(allowed_features) : NULL;
}

static void choose_dw(void)
{
  pthread_once(&detect_once, detect);
  dw_chosen = GEMMI8_KERNELS_dw ? dwpick(allowed_features) : NULL;
}

static void choose_q4(void)
{
  pthread_once(&detect_once, detect);
  q4_chosen = GEMMI8_KERNELS_q4 ? q4pick(allowed_features) : NULL;
}

const struct gemmi8_q4gemm_config* gemmi8_q4gemm_config(void)
{
  pthread_once(&q4_once, choose_q4);
  return q4_chosen;
}

const struct gemmi8_dwconv_config* gemmi8_dwconv_config(void)
{
  pthread_once(&dw_once, choose_dw);
  return dw_chosen;
}

const struct gemmi8_qgemm_config* gemmi8_qu8_config(void)
{
  pthread_once(&qu8_once, choose_qu8);
  return qu8_chosen;
}
const struct gemmi8_qgemm_config* gemmi8_qs8_config(void)
{
  pthread_once(&qs8_once, choose_qs8);
  return qs8_chosen;
}
const struct gemmi8_qgemm_config* gemmi8_qu8s8_config(void)
{
  pthread_once(&qu8s8_once, choose_qu8s8);
  return qu8s8_chosen;
}
const struct gemmi8_bgemm_config* gemmi8_bin_config(void)
{
  pthread_once(&bin_once, choose_bin);
  return bin_chosen;
}

const struct gemmi8_qgemm_config* gemmi8_qconfig(uint32_t type)
{
  switch (type) {
    case gemmi8_type_qu8: return gemmi8_qu8_config();
    case gemmi8_type_qs8: return gemmi8_qs8_config();
    case gemmi8_type_qu8s8: return gemmi8_qu8s8_config();
    default: return NULL;
  }
}

const char* gemmi8_level_name(void)
{
  pthread_once(&detect_once, detect);
  return level_name;
}

const char* gemmi8_isa_name(void) { return gemmi8_level_name(); }

const char* const* gemmi8_isa_compiled(void)
{
  static const char* names[LEVELS + 1];
  for (size_t i = 0; i < LEVELS; i++) names[i] = levels[i].name;
  names[LEVELS] = NULL;
  return names;
}

const char* const* gemmi8_types_compiled(void)
{
  static const char* const names[] = {
#if GEMMI8_TYPE_qu8
      "qu8",
#endif
#if GEMMI8_TYPE_qs8
      "qs8",
#endif
#if GEMMI8_TYPE_qu8s8
      "qu8s8",
#endif
#if GEMMI8_TYPE_bin
      "bin",
#endif
#if GEMMI8_TYPE_q4
      "q4",
#endif
      NULL};
  return names;
}

gemmi8_status gemmi8_isa_available(const char* name)
{
  pthread_once(&detect_once, detect);
  const struct level* l = find_level(name);
  if (l == NULL) return gemmi8_status_invalid_parameter;
  return subset(l->features, cpu_features) ? gemmi8_status_success
                                           : gemmi8_status_unsupported_hardware;
}

gemmi8_status gemmi8_isa_env_status(void)
{
  pthread_once(&detect_once, detect);
  return env_status;
}

/* ---- for the tests ------------------------------------------------------------------ */

int gemmi8_isa_supported(const char* name)
{
  pthread_once(&detect_once, detect);
  const struct level* l = find_level(name);
  return l != NULL && subset(l->features, cpu_features);
}

/* Every family chooses again for the features and cores given. */
static void refill(unsigned allowed, unsigned cores)
{
  gemmi8_qu8_config();
  gemmi8_qs8_config();
  gemmi8_qu8s8_config();
  gemmi8_bin_config();
  gemmi8_dwconv_config();
  gemmi8_q4gemm_config();
  allowed_features = allowed;
  allowed_cores = cores;
  set_level(allowed);
  qu8_chosen = GEMMI8_TYPE_qu8 ? qpick(qu8_sets, allowed, cores) : NULL;
  qs8_chosen = GEMMI8_TYPE_qs8 ? qpick(qs8_sets, allowed, cores) : NULL;
  qu8s8_chosen = GEMMI8_TYPE_qu8s8 ? qpick(qu8_sets, allowed, cores) : NULL;
  bin_chosen = GEMMI8_TYPE_bin ? bpick(allowed) : NULL;
  dw_chosen = GEMMI8_KERNELS_dw ? dwpick(allowed) : NULL;
  q4_chosen = GEMMI8_KERNELS_q4 ? q4pick(allowed) : NULL;
}

int gemmi8_isa_force(const char* name)
{
  pthread_once(&detect_once, detect);
  const struct level* l = find_level(name);
  if (l == NULL || !subset(l->features, cpu_features)) return -1;
  refill(l->features, cpu_cores);
  return 0;
}

/* the sets tuned for particular cores: qu8's and qs8's lists name the same ones */
static const struct gemmi8_qgemm_config* tuned_at(size_t i)
{
  const struct gemmi8_qgemm_config* sets = GEMMI8_KERNELS_qs8 ? qs8_sets : qu8_sets;
  for (size_t c = 0; sets[c].isa != NULL; c++) {
    if (sets[c].cores != 0 && i-- == 0) return &sets[c];
  }
  return NULL;
}

const char* gemmi8_isa_tuned_at(size_t i)
{
  const struct gemmi8_qgemm_config* cfg = tuned_at(i);
  return cfg != NULL ? cfg->isa : NULL;
}

int gemmi8_isa_force_tuned(const char* name)
{
  pthread_once(&detect_once, detect);
  for (size_t i = 0; tuned_at(i) != NULL; i++) {
    const struct gemmi8_qgemm_config* cfg = tuned_at(i);
    if (strcmp(cfg->isa, name) != 0) continue;
    if (!subset(cfg->features, cpu_features)) return -1;
    refill(cfg->features, cfg->cores);
    return 0;
  }
  return -1;
}

const struct gemmi8_qgemm_config* gemmi8_qgemm_config_at(uint32_t type, size_t i, int* supported)
{
  const struct gemmi8_qgemm_config* sets = type == gemmi8_type_qs8 ? qs8_sets : qu8_sets;
  for (size_t c = 0; c <= i; c++) {
    if (sets[c].isa == NULL) return NULL;
  }
  pthread_once(&detect_once, detect);
  if (supported != NULL) *supported = subset(sets[i].features, cpu_features);
  return &sets[i];
}

const struct gemmi8_bgemm_config* gemmi8_bgemm_config_at(size_t i, int* supported)
{
  for (size_t c = 0; c <= i; c++) {
    if (bin_sets[c].isa == NULL) return NULL;
  }
  pthread_once(&detect_once, detect);
  if (supported != NULL) *supported = subset(bin_sets[i].features, cpu_features);
  return &bin_sets[i];
}

const struct gemmi8_dwconv_config* gemmi8_dwconv_config_at(size_t i, int* supported)
{
  for (size_t c = 0; c <= i; c++) {
    if (dw_sets[c].isa == NULL) return NULL;
  }
  pthread_once(&detect_once, detect);
  if (supported != NULL) *supported = subset(dw_sets[i].features, cpu_features);
  return &dw_sets[i];
}

const struct gemmi8_q4gemm_config* gemmi8_q4gemm_config_at(size_t i, int* supported)
{
  for (size_t c = 0; c <= i; c++) {
    if (q4_sets[c].isa == NULL) return NULL;
  }
  pthread_once(&detect_once, detect);
  if (supported != NULL) *supported = subset(q4_sets[i].features, cpu_features);
  return &q4_sets[i];
}

int gemmi8_isa_plan(const char* name, const char** qu8, const char** qs8, const char** bin)
{
  const struct level* l = find_level(name);
  if (l == NULL) return -1;
  const struct gemmi8_qgemm_config* u = qpick(qu8_sets, l->features, 0);
  const struct gemmi8_qgemm_config* s = qpick(qs8_sets, l->features, 0);
  const struct gemmi8_bgemm_config* b = bpick(l->features);
  *qu8 = u != NULL ? u->isa : NULL;
  *qs8 = s != NULL ? s->isa : NULL;
  *bin = b != NULL ? b->isa : NULL;
  return 0;
}
