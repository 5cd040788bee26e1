/*
 * The gemmi8 test runner.
 *
 * Checks the reference once, then for every kernel set compiled in (src/isa.h):
 * if this CPU supports it, forces it and runs every test group through the public
 * API; otherwise prints and counts it as skipped. Then, once, the kernel-level
 * tests (test-ukernel.c): every kernel of every table, the unsupported ones printed
 * and counted as skipped. Ends with "N passed, N failed" (preceded by the skipped
 * counts) and exits non-zero if anything failed.
 *
 * Environment:
 *   GEMMI8_TEST_QUICK=1   smaller sweeps (for sanitizers and emulators)
 *   GEMMI8_TEST_SEED=N    another random seed (the default is fixed)
 *   GEMMI8_TEST_ONLY=isa  run the API groups for the named kernel set only (the
 *                         kernel-level tests still cover every table)
 *   GEMMI8_TEST_FILTER=s  run the reference self-check and then only the
 *                         kernel-level cases whose names contain s, or match s as
 *                         a glob when it holds * ? or [ (e.g. qs8/avx2,
 *                         fixedpoint/k_lt_kr, '*k_max*'); the API groups are not run
 *   GEMMI8_TEST_LIST=1    print the kernel-level case names (those GEMMI8_TEST_FILTER
 *                         selects) and run nothing
 *   GEMMI8_TEST_GROUP=g   run only the API groups named (comma-separated, e.g.
 *                         threads), on every kernel set, and not the kernel-level tests
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "isa.h"
#include "test.h"

int t_quick = 0;

static const char* current_isa = "reference";
static unsigned long passed = 0, failed = 0;
static unsigned long printed = 0; /* failures printed for the current ISA */
enum { max_printed_per_isa = 25 };

static const char* current_level = "reference";

const char* t_isa_level(void) { return current_level; }

void t_isa_return(void)
{
  if (strcmp(current_isa, current_level) == 0) {
    gemmi8_isa_force(current_isa);
  } else {
    gemmi8_isa_force_tuned(current_isa);
  }
}

const char* t_isa(void)
{
  return current_isa;
}

int t_type_built(const char* type)
{
  const char* const* types = gemmi8_types_compiled();
  for (size_t i = 0; types != NULL && types[i] != NULL; i++) {
    if (strcmp(types[i], type) == 0) return 1;
  }
  return 0;
}

static unsigned long types_skipped = 0;

void t_skip_type(const char* type, const char* what)
{
  static char seen[32][96];
  static size_t nseen = 0;
  char key[96];
  snprintf(key, sizeof(key), "%s: %s", what, type);
  types_skipped++;
  for (size_t i = 0; i < nseen; i++) {
    if (strcmp(seen[i], key) == 0) return;
  }
  if (nseen < 32) snprintf(seen[nseen++], sizeof(seen[0]), "%s", key);
  printf("   skipped: %s (%s is not in this build; counted each time)\n", what, type);
}

void t_pass(void)
{
  passed++;
}

static void vfail(const char* func, const char* fmt, va_list ap)
{
  failed++;
  if (printed < max_printed_per_isa) {
    printf("FAIL [%s] %s: ", current_isa, func);
    vprintf(fmt, ap);
    printf("\n");
  } else if (printed == max_printed_per_isa) {
    printf("FAIL [%s] ... further failures on this ISA are counted, not printed\n", current_isa);
  }
  printed++;
  fflush(stdout);
}

void t_fail(const char* func, const char* fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vfail(func, fmt, ap);
  va_end(ap);
}

int t_expect(int ok, const char* func, const char* fmt, ...)
{
  if (ok) {
    t_pass();
    return 1;
  }
  va_list ap;
  va_start(ap, fmt);
  vfail(func, fmt, ap);
  va_end(ap);
  return 0;
}

static double now_seconds(void)
{
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static uint64_t seed = UINT64_C(20240611);

/* A group runs when the build holds every type it names (make TYPES=...); groups
 * that take each type in turn (qgemm, build) skip the missing ones themselves. */
typedef struct group {
  const char* name;
  void (*run)(void);
  const char* types; /* space-separated, or "" */
} group;

static const group groups[] = {
    {"misc", test_misc, "qu8 qs8 qu8s8 bin"},
    {"build", test_build, ""},
    {"errors", test_errors, "qu8 qs8 qu8s8 bin q4"},
    {"quantize_multiplier", test_quantize_multiplier, ""},
    {"quantize_rows", test_quantize_rows, ""},
    {"qhelp", test_qhelp, ""},
    {"qd8", test_qd8, "qs8 qu8s8"},
    {"requant", test_requant, "qu8 qs8"},
    {"qgemm", test_qgemm, ""},
    {"bin", test_bin, "bin"},
    {"hardening", test_hardening, "qu8 qs8 qu8s8 bin q4"},
    {"threads", test_threads, "qu8 qs8 qu8s8 bin"},
    {"guard", test_guard, "qu8 qs8 qu8s8 bin q4"},
    {"conv", test_conv, "qu8 qs8 qu8s8"},
    {"bconv", test_bconv, "bin"},
};

/* The first type of the list this build lacks, or NULL. */
static const char* missing_type(const char* types)
{
  static char word[16];
  for (const char* p = types; *p != '\0';) {
    while (*p == ' ') p++;
    size_t n = strcspn(p, " ");
    if (n == 0) break;
    snprintf(word, sizeof(word), "%.*s", (int) n, p);
    if (!t_type_built(word)) return word;
    p += n;
  }
  return NULL;
}

static const char* only_groups = NULL;

/* 1 if group name is in the comma-separated list (or there is no list). */
static int group_wanted(const char* name)
{
  if (only_groups == NULL) return 1;
  const size_t len = strlen(name);
  for (const char* p = only_groups; *p != '\0';) {
    const char* end = strchr(p, ',');
    const size_t n = end != NULL ? (size_t) (end - p) : strlen(p);
    if (n == len && strncmp(p, name, n) == 0) return 1;
    p += n + (end != NULL);
  }
  return 0;
}

static void run_isa(const char* name)
{
  current_isa = name;
  printed = 0;
  unsigned long p0 = passed, f0 = failed;
  double t0 = now_seconds();
  printf("== %s ==\n", name);
  fflush(stdout);
  for (size_t g = 0; g < T_COUNT(groups); g++) {
    if (!group_wanted(groups[g].name)) continue;
    const char* missing = missing_type(groups[g].types);
    if (missing != NULL) {
      t_skip_type(missing, groups[g].name);
      continue;
    }
    unsigned long gp = passed, gf = failed;
    double g0 = now_seconds();
    t_seed(seed + g);
    groups[g].run();
    printf("   %-20s %6lu passed, %lu failed (%.2f s)\n", groups[g].name, passed - gp, failed - gf,
           now_seconds() - g0);
    fflush(stdout);
  }
  printf("== %s: %lu passed, %lu failed in %.2f s\n", name, passed - p0, failed - f0,
         now_seconds() - t0);
  fflush(stdout);
}

int main(void)
{
  const char* quick = getenv("GEMMI8_TEST_QUICK");
  t_quick = quick != NULL && strcmp(quick, "") != 0 && strcmp(quick, "0") != 0;
  const char* seed_env = getenv("GEMMI8_TEST_SEED");
  if (seed_env != NULL && *seed_env != '\0') seed = strtoull(seed_env, NULL, 0);
  const char* only = getenv("GEMMI8_TEST_ONLY");
  if (only != NULL && *only == '\0') only = NULL;
  only_groups = getenv("GEMMI8_TEST_GROUP");
  if (only_groups != NULL && *only_groups == '\0') only_groups = NULL;

  const char* list = getenv("GEMMI8_TEST_LIST");
  if (list != NULL && *list != '\0' && strcmp(list, "0") != 0) {
    test_ukernel(seed);
    return 0;
  }

  printf("gemmi8 %s test suite, seed %llu%s\n", gemmi8_version(), (unsigned long long) seed,
         t_quick ? ", quick" : "");
  t_seed(seed);
  test_reference_self();
  printf("== reference self-check: %lu passed, %lu failed\n", passed, failed);

  unsigned long skipped = 0, kernels_skipped = 0;
  const char* filter = getenv("GEMMI8_TEST_FILTER");
  const int filtered = filter != NULL && *filter != '\0';
  const char* const* isas = gemmi8_isa_compiled();
  if (filtered) {
    printf("GEMMI8_TEST_FILTER=%s: the API groups are not run, only the matching kernel-level "
           "cases\n",
           filter);
  } else if (isas == NULL || isas[0] == NULL) {
    t_fail("gemmi8_isa_compiled", "returned an empty list");
  } else {
    printf("compiled:");
    for (size_t i = 0; isas[i] != NULL; i++) printf(" %s", isas[i]);
    printf("\n");
    t_expect(strcmp(isas[0], "generic") == 0, "gemmi8_isa_compiled",
             "first entry is \"%s\", expected \"generic\"", isas[0]);
    for (size_t i = 0; isas[i] != NULL; i++) {
      const char* name = isas[i];
      if (only != NULL && strcmp(only, name) != 0) {
        printf("skipped: %s (GEMMI8_TEST_ONLY=%s)\n", name, only);
        skipped++;
        continue;
      }
      if (!gemmi8_isa_supported(name)) {
        printf("skipped: %s (not supported on this CPU)\n", name);
        skipped++;
        continue;
      }
      if (gemmi8_isa_force(name) != 0) {
        current_isa = name;
        t_fail("gemmi8_isa_force", "returned -1 for \"%s\", which is supported", name);
        continue;
      }
      current_level = name;
      run_isa(name);
    }
    /* the kernel sets taken on particular cores, as on such a system */
    const char* tuned;
    for (size_t i = 0; (tuned = gemmi8_isa_tuned_at(i)) != NULL; i++) {
      if (only != NULL && strcmp(only, tuned) != 0) {
        printf("skipped: %s (GEMMI8_TEST_ONLY=%s)\n", tuned, only);
        skipped++;
        continue;
      }
      if (gemmi8_isa_force_tuned(tuned) != 0) {
        printf("skipped: %s (not supported on this CPU)\n", tuned);
        skipped++;
        continue;
      }
      current_level = gemmi8_isa_name();
      run_isa(tuned);
    }
  }
  /* Kernel-level tests: every table compiled in, once. */
  if (only_groups != NULL) {
    printf("GEMMI8_TEST_GROUP=%s: the kernel-level tests are not run\n", only_groups);
    current_isa = "summary";
    printf("skipped: %lu kernel sets (API groups), %lu tests of types not built\n", skipped,
           types_skipped);
    printf("%lu passed, %lu failed\n", passed, failed);
    return failed != 0 ? 1 : 0;
  }
  current_isa = "ukernel";
  printed = 0;
  {
    const unsigned long p0 = passed, f0 = failed;
    const double t0 = now_seconds();
    printf("== ukernel (every kernel of every table) ==\n");
    fflush(stdout);
    kernels_skipped = test_ukernel(seed);
    printf("== ukernel: %lu passed, %lu failed in %.2f s\n", passed - p0, failed - f0,
           now_seconds() - t0);
  }
  current_isa = "summary";
  printf("skipped: %lu kernel sets (API groups), %lu kernels (kernel-level cases), %lu tests of "
         "types not built\n",
         skipped, kernels_skipped, types_skipped);
  printf("%lu passed, %lu failed\n", passed, failed);
  return failed != 0 ? 1 : 0;
}
