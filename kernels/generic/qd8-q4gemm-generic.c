/*
 * qd8 rows x 4-bit weights, float output, 4x16, portable C: the reference every other
 * set equals, bit for bit (src/microkernel.h, struct gemmi8_q4params, says what it
 * computes and the packed block's layout).
 */
#include <string.h>

#include "microkernel.h"

#define MR 4
#define NR 16

void gemmi8_qd8_q4gemm_ukernel_4x16__generic(size_t mr, size_t nr, size_t k, const int8_t* a,
                                             size_t a_stride, const void* w, float* c,
                                             size_t c_stride, const struct gemmi8_q4params* p)
{
  const uint8_t* wp = w;
  float f[MR][NR];
  uint32_t sum[MR][NR]; /* chunk sums, modulo 2^32 as the vector kernels add them */
  for (size_t i = 0; i < mr; i++) {
    for (size_t j = 0; j < NR; j++) f[i][j] = 0.0f, sum[i][j] = 0;
  }
  const float* scale = NULL;
  size_t chunk_index = 0;
  for (size_t k0 = 0; k0 < k; k0 += p->chunk, chunk_index++) {
    const size_t len = k - k0 < p->chunk ? k - k0 : p->chunk;
    const int32_t* pairs = (const int32_t*) wp;
    scale = (const float*) (wp + 4 * NR);
    const uint8_t* q = wp + 8 * NR;
    int32_t raw[MR][NR];
    for (size_t i = 0; i < mr; i++) {
      for (size_t j = 0; j < NR; j++) raw[i][j] = 0;
    }
    for (size_t d = 0; d < len; d++) {
      const uint8_t* g = q + (d / 8) * NR * 4 + d % 4;
      const int hi = (int) (d % 8) >= 4;
      for (size_t j = 0; j < NR; j++) {
        const int32_t qv = hi ? g[4 * j] >> 4 : g[4 * j] & 15;
        for (size_t i = 0; i < mr; i++) raw[i][j] += (int32_t) a[i * a_stride + k0 + d] * qv;
      }
    }
    for (size_t i = 0; i < mr; i++) {
      const int32_t rp = p->row_pairs[i * p->pairs_stride + chunk_index];
      const int32_t s = (int16_t) (uint16_t) ((uint32_t) rp & 0xFFFF);
      const int32_t azp = (int16_t) (uint16_t) ((uint32_t) rp >> 16);
      for (size_t j = 0; j < NR; j++) {
        const int32_t neg_zp = (int16_t) (uint16_t) ((uint32_t) pairs[j] & 0xFFFF);
        const int32_t neg_wsum = (int16_t) (uint16_t) ((uint32_t) pairs[j] >> 16);
        const int32_t t = raw[i][j] + (s * neg_zp + azp * neg_wsum);
        if (p->per_chunk) {
          const float product = (float) t * scale[j];
          f[i][j] = f[i][j] + product;
        } else {
          sum[i][j] += (uint32_t) t;
        }
      }
    }
    wp = q + (len + 7) / 8 * NR * 4;
  }
  for (size_t i = 0; i < mr; i++) {
    float* ci = (float*) ((uint8_t*) c + i * c_stride);
    for (size_t j = 0; j < nr; j++) {
      float v = f[i][j];
      if (!p->per_chunk) {
        const float product = (float) (int32_t) sum[i][j] * scale[j];
        v = v + product;
      }
      v = v * p->row_scale[i];
      v = v + p->col_bias[j];
      v = p->out_min > v ? p->out_min : v;
      v = p->out_max < v ? p->out_max : v;
      ci[j] = v;
    }
  }
}
