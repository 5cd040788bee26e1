/*
 * Binary GEMM (int32, float and sign-bit outputs) against the independent reference.
 *
 * One input is one GEMM: B layout (NK, KN), M, N, K (small; medium; or deep with M, N
 * tiny), word strides with extra words, and for the float and bit outputs scale and
 * bias arrays (or NULL) whose values come from a menu of special floats: +-0, +-inf,
 * NaNs of every sign and payload, denormals, FLT_MIN, FLT_MAX, any bit pattern.
 * The bit matrices are random words: the padding bits past K (and past N in a KN
 * weight row) and the words between rows hold garbage, which must never count.
 *
 * int32 results must be equal; floats equal bit for bit, except that a NaN need only
 * be a NaN (its payload may differ); sign bits equal, with the padding bits of each
 * output row 0 and the words between rows unchanged. Guards around C, exact-size
 * inputs, an unchanged packed buffer, as in fuzz-qgemm.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ref.h"

enum output { out_s32, out_f32, out_bits };
static const char* const output_name[] = {"s32", "f32", "bits"};

#define WORK_BUDGET (UINT64_C(1) << 20) /* M * N * K of the reference */
#define BIG_BUDGET (UINT64_C(10) << 20)  /* the same where the work is split */

/* How the GEMM runs (as in fuzz-qgemm): the plain entry point, or the _ex one with no
 * parallel-for, a shuffled one on the calling thread, or gemmi8's pool of 2 threads. */
enum run_how { run_plain, run_ex_null, run_shuffled, run_pool };
static const char* const run_name[] = {"plain", "ex(NULL)", "ex(shuffled)", "ex(pool)"};

/* Fills rows of `bits` bits (words words) of a bit matrix: random words, or
 * patterns; the padding bits past `bits` are random in every case. */
static void fill_bits(struct fuzz_reader* r, uint64_t* p, size_t rows, size_t bits,
                      size_t stride, unsigned pattern)
{
  const size_t words = fuzz_words(bits);
  const uint64_t padding = bits % 64 ? ~((UINT64_C(1) << (bits % 64)) - 1) : 0;
  for (size_t i = 0; i < rows; i++) {
    for (size_t w = 0; w < words; w++) {
      uint64_t v;
      switch (pattern % 6) {
        case 0: v = 0; break;
        case 1: v = ~UINT64_C(0); break;
        case 2: v = (i & 1) ? UINT64_C(0xaaaaaaaaaaaaaaaa) : UINT64_C(0x5555555555555555); break;
        default: v = fuzz_random(r); break;
      }
      if (w + 1 == words) v = (v & ~padding) | (fuzz_random(r) & padding);
      p[i * stride + w] = v;
    }
  }
}

static float* decode_floats(struct fuzz_reader* r, size_t n, unsigned kind, void** block)
{
  if (kind == 0) {
    *block = NULL;
    return NULL;
  }
  float* p = fuzz_exact(r, n * sizeof(float), 0, block);
  const float common = fuzz_f32_special(r);
  for (size_t j = 0; j < n; j++) {
    switch (kind) {
      case 1: p[j] = common; break;
      case 2: p[j] = fuzz_f32_special_any(r); break;
      default: { /* ordinary values, a few special ones among them */
        const uint8_t s = r->left > 0 ? fuzz_u8(r) : (uint8_t) fuzz_random(r);
        p[j] = s < 32 ? fuzz_f32_special_any(r) : ldexpf((float) (int8_t) s, -(int) (s % 9));
        break;
      }
    }
  }
  return p;
}

static int same_float(float got, float want)
{
  if (isnan(want)) return isnan(got);
  return memcmp(&got, &want, sizeof(float)) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  struct fuzz_reader r;
  fuzz_reader_init(&r, data, size);

  const uint8_t head = fuzz_u8(&r);
  /* head bit 7: a byte follows saying how the GEMM runs */
  const uint8_t how = (head & 0x80) ? fuzz_u8(&r) : 0;
  const enum run_how run = (enum run_how) (how & 3);
  const size_t threads = how >> 4; /* claimed by the shuffled parallel-for */
  const int kn = head & 1;
  const enum output output = (enum output) (((head >> 1) & 3) % 3);
  size_t m, n, k;
  switch ((head >> 3) & 3) {
    case 0:
      m = fuzz_range(&r, 1, 16);
      n = fuzz_range(&r, 1, 70);
      k = fuzz_range(&r, 1, 200);
      break;
    case 1:
      m = fuzz_range(&r, 1, 100);
      n = fuzz_range(&r, 1, 140);
      k = fuzz_range(&r, 1, 600);
      break;
    case 2: /* deep */
      m = fuzz_range(&r, 1, 3);
      n = fuzz_range(&r, 1, 3);
      k = fuzz_range(&r, 600, 100000);
      break;
    default: /* many rows: several row chunks */
      m = fuzz_range(&r, 900, 2100);
      n = fuzz_range(&r, 1, 4);
      k = fuzz_range(&r, 1, 300);
      break;
  }
  if (how & 4) { /* big enough for the _ex entry points to split the work */
    m = fuzz_range(&r, 64, 300);
    n = fuzz_range(&r, 65, 400);
    k = fuzz_range(&r, 256, 2000);
  }
  const uint64_t budget = (how & 4) ? BIG_BUDGET : WORK_BUDGET;
  while ((uint64_t) m * n * k > budget && m > 1) m /= 2;
  const size_t k_words = fuzz_words(k), n_words = fuzz_words(n);
  const size_t a_stride = k_words + fuzz_extra(&r, 40);
  const size_t b_stride = (kn ? n_words : k_words) + fuzz_extra(&r, 40);
  const size_t c_row = output == out_bits ? n_words : n;
  const size_t c_stride = c_row + fuzz_extra(&r, 200);
  const uint8_t fills = fuzz_u8(&r);
  const uint8_t arrays = fuzz_u8(&r);
  const int pack_how = (head >> 5) & 3; /* 0 exact, 1 alloc, 2 copy, 3 larger */

  void *scale_block = NULL, *bias_block = NULL;
  float* scale = NULL;
  float* bias = NULL;
  if (output != out_s32) {
    scale = decode_floats(&r, n, arrays & 3, &scale_block);
    bias = decode_floats(&r, n, (arrays >> 2) & 3, &bias_block);
  }
  fuzz_describe("bin %s %s M=%zu N=%zu K=%zu a_stride=%zu b_stride=%zu c_stride=%zu fills=%u "
                "scale=%s%a bias=%s%a pack=%d run=%s threads=%zu",
                kn ? "KN" : "NK", output_name[output], m, n, k, a_stride, b_stride, c_stride,
                fills, scale ? "" : "NULL ", scale ? (double) scale[0] : 0.0,
                bias ? "" : "NULL ", bias ? (double) bias[0] : 0.0, pack_how, run_name[run],
                threads);

  void *a_block = NULL, *b_block = NULL;
  const size_t b_rows = kn ? k : n, b_words = kn ? n_words : k_words;
  uint64_t* a = fuzz_exact(&r, ((m - 1) * a_stride + k_words) * 8, 0, &a_block);
  uint64_t* b = fuzz_exact(&r, ((b_rows - 1) * b_stride + b_words) * 8, 0, &b_block);
  fill_bits(&r, a, m, k, a_stride, fills & 7);
  fill_bits(&r, b, b_rows, kn ? n : k, b_stride, fills >> 3);

  size_t packed_size = 0;
  gemmi8_status s = gemmi8_bin_pack_size(n, k, &packed_size);
  fuzz_expect_status(s, FUZZ_BIT(gemmi8_status_success), "bin_pack_size");
  void* packed = NULL;
  const uint32_t flags = kn ? GEMMI8_B_KN : GEMMI8_B_NK;
  if (pack_how == 1) {
    s = gemmi8_bin_pack_alloc(n, k, b, b_stride, flags, &packed);
    fuzz_expect_status(s, FUZZ_BIT(gemmi8_status_success), "bin_pack_alloc");
  } else {
    const size_t buffer_size = packed_size + (pack_how == 3 ? 1 + fuzz_u8(&r) : 0);
    packed = fuzz_aligned(buffer_size);
    fuzz_fill_random(&r, packed, buffer_size);
    s = gemmi8_bin_pack(n, k, b, b_stride, flags, packed, buffer_size);
    fuzz_expect_status(s, FUZZ_BIT(gemmi8_status_success), "bin_pack");
    if (pack_how == 2) {
      void* copy = fuzz_aligned(packed_size);
      memcpy(copy, packed, packed_size);
      free(packed);
      packed = copy;
    }
  }
  int32_t* acc = malloc(m * n * sizeof(int32_t));
  if (acc == NULL) fuzz_fail("out of memory");
  ref_bin_acc(m, n, k, a, a_stride, b, b_stride, kn, acc);
  free(b_block);
  void* packed_saved = malloc(packed_size);
  if (packed_saved == NULL) fuzz_fail("out of memory");
  memcpy(packed_saved, packed, packed_size);

  const size_t c_elem = output == out_bits ? 8 : 4;
  struct fuzz_out c;
  fuzz_out_init(&c, &r, ((m - 1) * c_stride + c_row) * c_elem, 0);
  struct fuzz_parallel shuffled;
  fuzz_parallel_init(&shuffled, &r, threads);
  const gemmi8_parallel* par = run == run_shuffled ? &shuffled.parallel
                               : run == run_pool   ? fuzz_parallel_pool()
                                                   : NULL;
  int32_t* c32 = (int32_t*) (void*) c.data;
  float* cf = (float*) (void*) c.data;
  uint64_t* cb = (uint64_t*) (void*) c.data;
  switch (output) {
    case out_s32:
      s = run == run_plain
              ? gemmi8_bin_gemm_s32(m, n, k, a, a_stride, packed, c32, c_stride)
              : gemmi8_bin_gemm_s32_ex(m, n, k, a, a_stride, packed, c32, c_stride, par);
      break;
    case out_f32:
      s = run == run_plain
              ? gemmi8_bin_gemm_f32(m, n, k, a, a_stride, packed, scale, bias, cf, c_stride)
              : gemmi8_bin_gemm_f32_ex(m, n, k, a, a_stride, packed, scale, bias, cf, c_stride,
                                       par);
      break;
    default:
      s = run == run_plain
              ? gemmi8_bin_gemm_bits(m, n, k, a, a_stride, packed, scale, bias, cb, c_stride)
              : gemmi8_bin_gemm_bits_ex(m, n, k, a, a_stride, packed, scale, bias, cb, c_stride,
                                        par);
      break;
  }
  if (run == run_shuffled) {
    fuzz_describe_more(" (parallel_for calls %zu, tasks %zu)", shuffled.calls, shuffled.tasks);
    if (threads <= 1 && shuffled.calls != 0) {
      fuzz_fail("parallel_for called %zu times for %zu threads", shuffled.calls, threads);
    }
  }
  fuzz_expect_status(s, FUZZ_BIT(gemmi8_status_success), "bin gemm");
  fuzz_out_check_guards(&c, "C");
  fuzz_out_check_gaps(&c, m, c_row * c_elem, c_stride * c_elem, "C between rows");
  if (memcmp(packed, packed_saved, packed_size) != 0) {
    fuzz_fail("the GEMM wrote its packed weights");
  }

  for (size_t i = 0; i < m; i++) {
    const uint8_t* row = c.data + i * c_stride * c_elem;
    if (output == out_bits) {
      for (size_t w = 0; w < n_words; w++) {
        uint64_t got, want = 0;
        memcpy(&got, row + w * 8, 8);
        for (size_t j = w * 64; j < n && j < w * 64 + 64; j++) {
          const float v = ref_bin_f32(acc[i * n + j], scale, bias, j);
          if (v < 0.0f) want |= UINT64_C(1) << (j % 64);
        }
        if (got != want) {
          fuzz_fail("C row %zu word %zu = 0x%016llx, expected 0x%016llx (padding bits 0)", i, w,
                    (unsigned long long) got, (unsigned long long) want);
        }
      }
      continue;
    }
    for (size_t j = 0; j < n; j++) {
      const int32_t x = acc[i * n + j];
      if (output == out_s32) {
        int32_t got;
        memcpy(&got, row + j * 4, 4);
        if (got != x) fuzz_fail("C[%zu][%zu] = %d, expected %d", i, j, (int) got, (int) x);
      } else {
        float got;
        memcpy(&got, row + j * 4, 4);
        const float want = ref_bin_f32(x, scale, bias, j);
        if (!same_float(got, want)) {
          fuzz_fail("C[%zu][%zu] = %a, expected %a (acc %d, scale %a, bias %a)", i, j,
                    (double) got, (double) want, (int) x, scale ? (double) scale[j] : 1.0,
                    bias ? (double) bias[j] : 0.0);
        }
      }
    }
  }

  fuzz_out_free(&c);
  free(packed_saved);
  if (pack_how == 1) {
    gemmi8_packed_free(packed);
  } else {
    free(packed);
  }
  free(acc);
  free(a_block);
  free(scale_block);
  free(bias_block);
  return 0;
}
