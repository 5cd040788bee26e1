/*
 * Binary GEMM drivers: validation, then tiles of MR x NR over the packed blocks.
 */
#include "common.h"

enum bin_output { bin_s32, bin_f32, bin_bits };

#define MC_BYTES (256 * 1024)

static gemmi8_status bgemm(enum bin_output output, size_t m, size_t n, size_t k,
                           const uint64_t* a, size_t a_stride, const void* packed_b,
                           const float* scale, const float* bias, void* c, size_t c_stride)
{
  const struct gemmi8_bgemm_config* cfg = &gemmi8_get_config()->bin;
  if (a == NULL || packed_b == NULL || c == NULL) return gemmi8_status_invalid_parameter;
  if (m == 0 || n == 0 || k == 0) return gemmi8_status_invalid_parameter;
  const size_t a_words = GEMMI8_BIN_WORDS(k);
  if (a_stride < a_words || (m - 1) > (SIZE_MAX / 8 - a_words) / a_stride) {
    return gemmi8_status_invalid_parameter;
  }
  const size_t c_row = output == bin_bits ? GEMMI8_BIN_WORDS(n) : n;
  const size_t c_size = output == bin_bits ? sizeof(uint64_t) : sizeof(int32_t);
  if (c_stride < c_row || (m - 1) > (SIZE_MAX / c_size - c_row) / c_stride) {
    return gemmi8_status_invalid_parameter;
  }
  if (k > GEMMI8_BIN_MAX_K) return gemmi8_status_unsupported_parameter;
  if (!gemmi8_packed_matches(packed_b, gemmi8_type_bin, cfg->layout, n, k)) {
    return gemmi8_status_invalid_parameter;
  }
  const struct gemmi8_packed_header* h = packed_b;

  const gemmi8_bgemm_ukernel_fn ukernel =
      output == bin_s32 ? cfg->s32 : (output == bin_f32 ? cfg->f32 : cfg->bits);
  const uint8_t* blocks = (const uint8_t*) packed_b + GEMMI8_PACKED_HEADER_BYTES;
  const size_t c_stride_bytes = c_stride * c_size;
  /* Chunks of rows small enough to stay in L2 with their rows of C while every
   * block of B passes: C's rows are finished chunk by chunk (a tile may end mid
   * cache line). Bit outputs: a tile may share a word with its neighbours. */
  size_t mc = gemmi8_min(1024, MC_BYTES / (a_words * sizeof(uint64_t)));
  mc = mc < cfg->mr ? cfg->mr : mc - mc % cfg->mr;
  for (size_t m0 = 0; m0 < m; m0 += mc) {
    const size_t m1 = gemmi8_min(m, m0 + mc);
    for (size_t n0 = 0; n0 < n; n0 += cfg->nr) {
      const size_t nr = gemmi8_min(cfg->nr, n - n0);
      const struct gemmi8_bparams p = {scale ? scale + n0 : NULL, bias ? bias + n0 : NULL, n0};
      const uint8_t* w = blocks + (n0 / cfg->nr) * (size_t) h->block_bytes;
      uint8_t* c_col = (uint8_t*) c + (output == bin_bits ? 0 : n0 * c_size);
      for (size_t i = m0; i < m1; i += cfg->mr) {
        const size_t mr = gemmi8_min(cfg->mr, m1 - i);
        ukernel(mr, nr, k, a + i * a_stride, a_stride, w, c_col + i * c_stride_bytes,
                c_stride_bytes, &p);
      }
    }
  }
  if (output == bin_bits && n % 64 != 0) {
    const uint64_t keep = (UINT64_C(1) << (n % 64)) - 1;
    for (size_t i = 0; i < m; i++) ((uint64_t*) c)[i * c_stride + n / 64] &= keep;
  }
  return gemmi8_status_success;
}

gemmi8_status gemmi8_bin_gemm_s32(size_t m, size_t n, size_t k, const uint64_t* a,
                                  size_t a_stride, const void* packed_b, int32_t* c,
                                  size_t c_stride)
{
  return bgemm(bin_s32, m, n, k, a, a_stride, packed_b, NULL, NULL, c, c_stride);
}

gemmi8_status gemmi8_bin_gemm_f32(size_t m, size_t n, size_t k, const uint64_t* a,
                                  size_t a_stride, const void* packed_b, const float* scale,
                                  const float* bias, float* c, size_t c_stride)
{
  return bgemm(bin_f32, m, n, k, a, a_stride, packed_b, scale, bias, c, c_stride);
}

gemmi8_status gemmi8_bin_gemm_bits(size_t m, size_t n, size_t k, const uint64_t* a,
                                   size_t a_stride, const void* packed_b, const float* scale,
                                   const float* bias, uint64_t* c, size_t c_stride)
{
  return bgemm(bin_bits, m, n, k, a, a_stride, packed_b, scale, bias, c, c_stride);
}
