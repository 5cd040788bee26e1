/*
 * qu8 / qs8 weight packing with int16 weights (layouts with weight_bytes == 2, the
 * AVX2 kernels): the block is int32 bias'[NR], then round_up(k, KR) x NR int16
 *   w = B - b_zp                    (qu8: -255..255; qs8: B itself, -128..127)
 * as [k / KR][NR][KR], zero past n and past k. bias' is the generic packer's,
 *   bias - a_zp * colsum(B) + k * a_zp * b_zp = bias - a_zp * colsum(w)  (mod 2^32),
 * so that acc = bias'[j] + sum_k a * w exactly, with no row sums of a.
 */
#include <string.h>

#include "config.h"

void gemmi8_qpack_goi_s16__generic(const struct gemmi8_qgemm_config* cfg, size_t n, size_t k,
                                   const struct gemmi8_qpack_source* src, int32_t a_zero_point,
                                   const int32_t* b_zp, const int32_t* bias, size_t block_bytes,
                                   uint8_t* blocks)
{
  const size_t nr = cfg->nr, kr = cfg->kr;
  for (size_t n0 = 0; n0 < n; n0 += nr) {
    uint8_t* block = blocks + (n0 / nr) * block_bytes;
    memset(block, 0, block_bytes);
    int32_t* packed_bias = (int32_t*) block;
    uint8_t* w = block + nr * sizeof(int32_t);
    for (size_t j = 0; j < nr && n0 + j < n; j++) {
      const size_t col = n0 + j;
      const int32_t zp = b_zp ? b_zp[col] : 0;
      uint32_t w_sum = 0;
      for (size_t kk = 0; kk < k; kk++) {
        const int16_t v = (int16_t) (gemmi8_qpack_value(src, col, kk) - zp);
        w_sum += (uint32_t) (int32_t) v;
        memcpy(w + 2 * ((kk / kr) * nr * kr + j * kr + kk % kr), &v, sizeof(v));
      }
      const uint32_t b = (bias ? (uint32_t) bias[col] : 0) - (uint32_t) a_zero_point * w_sum;
      packed_bias[j] = (int32_t) b;
    }
  }
}
