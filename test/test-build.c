/*
 * What a build holds (make SETS=... TYPES=...): the types it lists, the status of the
 * entry points of the types it does not hold (unsupported_parameter, nothing written),
 * and the kernel lists behind the family tables (the 4-bit one too): every kernel in a
 * table is named in a list, and the tile its symbol spells is the slot's. The
 * quantization helpers, which belong to no type, are in every build.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "isa.h"
#include "test.h"

static const char* const all_types[] = {"qu8", "qs8", "qu8s8", "bin", "q4"};

static void types_listed(void)
{
  const char* const* types = gemmi8_types_compiled();
  if (!t_expect(types != NULL, "gemmi8_types_compiled", "returned NULL")) return;
  size_t count = 0;
  for (; types[count] != NULL; count++) {
    int known = 0, repeated = 0;
    for (size_t t = 0; t < T_COUNT(all_types); t++) known |= strcmp(types[count], all_types[t]) == 0;
    for (size_t j = 0; j < count; j++) repeated |= strcmp(types[count], types[j]) == 0;
    t_expect(known && !repeated, "gemmi8_types_compiled", "entry %zu \"%s\" is %s", count,
             types[count], known ? "repeated" : "not a type");
  }
  t_expect(count >= 1 && count <= T_COUNT(all_types), "gemmi8_types_compiled", "%zu types",
           count);
  const char* const* isas = gemmi8_isa_compiled();
  int level_listed = 0;
  for (size_t i = 0; isas[i] != NULL; i++) level_listed |= strcmp(isas[i], gemmi8_isa_name()) == 0;
  t_expect(level_listed, "gemmi8_isa_compiled", "the level in use \"%s\" is not listed",
           gemmi8_isa_name());
}

/* The entry points of a type the build lacks: unsupported_parameter, nothing written. */
static void type_absent(const char* type)
{
  enum { N = 8, K = 16 };
  uint8_t b[N * K], a[N * K];
  int32_t bias[N] = {0};
  memset(b, 1, sizeof(b));
  memset(a, 2, sizeof(a));
  unsigned char packed[4096] __attribute__((aligned(64)));
  unsigned char c[N * N * 4];
  memset(packed, 0xa5, sizeof(packed));
  memset(c, 0x5a, sizeof(c));
  size_t size = 12345;
  gemmi8_status st[4] = {gemmi8_status_success, gemmi8_status_success, gemmi8_status_success,
                         gemmi8_status_success};
  if (strcmp(type, "qu8") == 0) {
    uint8_t zp = 128;
    st[0] = gemmi8_qu8_pack_size(N, K, &size);
    st[1] = gemmi8_qu8_pack(N, K, b, K, GEMMI8_B_NK, 0, &zp, 0, bias, packed, sizeof(packed));
    st[2] = gemmi8_qu8_gemm_s32(1, N, K, a, K, packed, (int32_t*) c, N);
  } else if (strcmp(type, "qs8") == 0) {
    st[0] = gemmi8_qs8_pack_size(N, K, &size);
    st[1] = gemmi8_qs8_pack(N, K, (const int8_t*) b, K, GEMMI8_B_NK, 0, bias, packed,
                            sizeof(packed));
    st[2] = gemmi8_qs8_gemm_s32(1, N, K, (const int8_t*) a, K, packed, (int32_t*) c, N);
  } else if (strcmp(type, "qu8s8") == 0) {
    st[0] = gemmi8_qu8s8_pack_size(N, K, &size);
    st[1] = gemmi8_qu8s8_pack(N, K, (const int8_t*) b, K, GEMMI8_B_NK, 0, bias, packed,
                              sizeof(packed));
    st[2] = gemmi8_qu8s8_gemm_s32(1, N, K, a, K, packed, (int32_t*) c, N);
  } else if (strcmp(type, "q4") == 0) {
    const float scale[N] = {1, 1, 1, 1, 1, 1, 1, 1};
    const gemmi8_q4_weights w = {b, K / 2, 0, scale, NULL, NULL};
    void* sentinel = packed;
    st[0] = gemmi8_qd8_pack_q4_size(N, K, 0, &size);
    st[1] = gemmi8_qd8_pack_q4(N, K, &w, packed, sizeof(packed));
    st[2] = gemmi8_qd8_pack_q4_alloc(N, K, &w, &sentinel);
    t_expect(sentinel == (void*) packed, __func__, "q4 is not built: _alloc wrote its pointer");
  } else {
    uint64_t bits[N] = {0};
    st[0] = gemmi8_bin_pack_size(N, 64, &size);
    st[1] = gemmi8_bin_pack(N, 64, bits, 1, GEMMI8_B_NK, packed, sizeof(packed));
    st[2] = gemmi8_bin_gemm_s32(1, N, 64, bits, 1, packed, (int32_t*) c, N);
    st[3] = gemmi8_bin_pack_rows_u8(1, K, a, K, 0, (uint64_t*) c, 1);
  }
  for (int i = 0; i < (strcmp(type, "bin") == 0 ? 4 : 3); i++) {
    t_expect(st[i] == gemmi8_status_unsupported_parameter, __func__,
             "%s is not built: entry %d returned \"%s\", not unsupported_parameter", type, i,
             gemmi8_status_string(st[i]));
  }
  int untouched = size == 12345;
  for (size_t i = 0; i < sizeof(packed); i++) untouched &= packed[i] == 0xa5;
  for (size_t i = 0; i < sizeof(c); i++) untouched &= c[i] == 0x5a;
  t_expect(untouched, __func__, "%s is not built: an entry point wrote its output", type);
}

/* The tile a kernel's symbol spells ("_ukernel_<mr>x<nr>[c<kr>]__"), or 0. */
static int symbol_tile(const char* symbol, unsigned* mr, unsigned* nr, unsigned* kr)
{
  const char* p = symbol != NULL ? strstr(symbol, "_ukernel_") : NULL;
  if (p == NULL) return 0;
  *kr = 1;
  char tail[4] = {0};
  if (sscanf(p, "_ukernel_%ux%uc%u%3s", mr, nr, kr, tail) == 4 && strncmp(tail, "__", 2) == 0) {
    return 1;
  }
  *kr = 1;
  return sscanf(p, "_ukernel_%ux%u%3s", mr, nr, tail) == 3 && strncmp(tail, "__", 2) == 0;
}

static void check_slot(void (*fn)(void), const char* table, const char* kind, size_t mr,
                       unsigned nr, unsigned kr)
{
  const char* symbol = t_kernel_symbol(fn);
  unsigned smr = 0, snr = 0, skr = 0;
  if (!t_expect(symbol != NULL, "kernel lists", "%s %s[%zu]: a kernel no list names", table,
                kind, mr - 1))
    return;
  t_expect(symbol_tile(symbol, &smr, &snr, &skr) && smr == mr && snr == nr && skr == kr,
           "kernel lists", "%s %s[%zu] holds %s: the slot is %zux%uc%u", table, kind, mr - 1,
           symbol, mr, nr, kr);
}

static void lists(void)
{
  for (uint32_t type = gemmi8_type_qu8; type <= gemmi8_type_qs8; type++) {
    const struct gemmi8_qgemm_config* cfg;
    for (size_t i = 0; (cfg = gemmi8_qgemm_config_at(type, i, NULL)) != NULL; i++) {
      for (size_t r = 1; r <= GEMMI8_MAX_MR; r++) {
        for (int o = 0; o < gemmi8_qoutput_count; o++) {
          if (cfg->gemm[r - 1].out[o] != NULL) {
            check_slot((void (*)(void)) cfg->gemm[r - 1].out[o], cfg->isa, "gemm", r, cfg->nr,
                       cfg->kr);
          }
          if (cfg->igemm[r - 1].out[o] != NULL) {
            check_slot((void (*)(void)) cfg->igemm[r - 1].out[o], cfg->isa, "igemm", r,
                       cfg->nr, cfg->kr);
          }
        }
      }
      t_expect(cfg->gemm[cfg->mr - 1].out[gemmi8_qoutput_s32] != NULL, "kernel lists",
               "%s: no main tile", cfg->isa);
      for (int o = 0; o < gemmi8_qoutput_count; o++) {
        if (cfg->pgemm.out[o] != NULL) {
          check_slot((void (*)(void)) cfg->pgemm.out[o], cfg->isa, "pgemm", cfg->mr, cfg->nr,
                     cfg->kr);
        }
      }
    }
  }
  const struct gemmi8_bgemm_config* b;
  for (size_t i = 0; (b = gemmi8_bgemm_config_at(i, NULL)) != NULL; i++) {
    for (size_t r = 1; r <= GEMMI8_MAX_MR; r++) {
      for (int o = 0; o < gemmi8_boutput_count; o++) {
        if (b->gemm[r - 1].out[o] != NULL) {
          check_slot((void (*)(void)) b->gemm[r - 1].out[o], b->isa, "gemm", r, b->nr, b->kr);
        }
      }
    }
    /* the binary convolution's kernels: the main tile, every output */
    for (int o = 0; o < gemmi8_boutput_count; o++) {
      if (t_expect(b->igemm.out[o] != NULL, "kernel lists", "%s: no binary igemm kernel %d",
                   b->isa, o)) {
        check_slot((void (*)(void)) b->igemm.out[o], b->isa, "igemm", b->mr, b->nr, b->kr);
      }
    }
  }
}

/* The 4-bit weight tables: every kernel named by kernels/q4.inc, its symbol's tile
 * (..._<mr>x<nr>__<isa>) its slot's, the main tile set. */
static void q4_lists(void)
{
  const struct gemmi8_q4gemm_config* cfg;
  for (size_t i = 0; (cfg = gemmi8_q4gemm_config_at(i, NULL)) != NULL; i++) {
    t_expect(cfg->gemm[cfg->mr - 1] != NULL, "kernel lists", "q4 %s: no main tile", cfg->isa);
    for (size_t r = 1; r <= GEMMI8_MAX_MR; r++) {
      if (cfg->gemm[r - 1] == NULL) continue;
      const char* symbol = t_kernel_symbol((void (*)(void)) cfg->gemm[r - 1]);
      char tile[32];
      snprintf(tile, sizeof(tile), "_%zux%u__", r, (unsigned) cfg->nr);
      t_expect(symbol != NULL && strstr(symbol, tile) != NULL, "kernel lists",
               "q4 %s gemm[%zu] holds %s: the slot is %zux%u", cfg->isa, r - 1,
               symbol != NULL ? symbol : "a kernel no list names", r, (unsigned) cfg->nr);
    }
  }
}

/* The quantization helpers belong to no type: every build holds them, whatever TYPES
 * chose (a scale from a range, the bytes of a tie, a bias, a multiplier). */
static void helpers_built(void)
{
  const float lo = -1.0f, hi = 1.0f, x[2] = {2.5f, -2.5f}, one = 1.0f, w = 0.5f;
  const int32_t zero = 0;
  float s = 0.0f;
  int32_t z = -1, b = 0, m = 0, sh = 0;
  int8_t y[2] = {0, 0};
  const gemmi8_status st[4] = {
      gemmi8_choose_qparams(gemmi8_qscheme_tflite, gemmi8_qrange_s8_symmetric, 1, &lo, &hi, &s, &z),
      gemmi8_quantize_f32(gemmi8_qscheme_onnx, gemmi8_qrange_s8, gemmi8_qaxis_tensor, 1, 2, x,
                          &one, &zero, y),
      gemmi8_quantize_bias(gemmi8_qscheme_tflite, 1, x, 1.0f, &one, 0, &b),
      gemmi8_requant_scales(gemmi8_qscheme_tflite, 1, 1.0f, &w, 1.0f, NULL, &m, &sh)};
  int ok = 1;
  for (int i = 0; i < 4; i++) ok &= st[i] == gemmi8_status_success;
  t_expect(ok && s == 1.0f / 127.0f && z == 0 && y[0] == 2 && y[1] == -2 && b == 3 &&
               m == 1073741824 && sh == 0,
           "quantization helpers", "not usable in this build: statuses %d %d %d %d", (int) st[0],
           (int) st[1], (int) st[2], (int) st[3]);
  gemmi8_calibration* cal = NULL;
  const gemmi8_status sc = gemmi8_calibration_create(1, &cal);
  t_expect(sc == gemmi8_status_success && gemmi8_calibration_update(cal, 2, x) == gemmi8_status_success,
           "quantization helpers", "calibration not usable in this build");
  gemmi8_calibration_destroy(cal);
}

void test_build(void)
{
  helpers_built();
  types_listed();
  for (size_t t = 0; t < T_COUNT(all_types); t++) {
    if (!t_type_built(all_types[t])) type_absent(all_types[t]);
  }
  lists();
  q4_lists();
}
