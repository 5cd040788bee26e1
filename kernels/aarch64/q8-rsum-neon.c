/*
 * Row sums of uint8 rows (qu8 kernels that take rowsum(a) from the driver), NEON:
 * UADALP adds byte pairs into 8 uint16 lanes (at most 128 steps of 16 bytes, 128 * 510
 * < 2^16), then UADALP again into 4 uint32 lanes. The depth tail is one in-bounds load.
 */
#include "q8-neon.h"

void gemmi8_qu8_rsum__neon(size_t m, size_t k, const void* a, size_t a_stride, int32_t* sums)
{
  const uint8_t* row = (const uint8_t*) a;
  for (size_t i = 0; i < m; i++, row += a_stride) {
    uint32x4_t vsum = vdupq_n_u32(0);
    size_t kk = 0;
    while (kk + 16 <= k) {
      const size_t steps = gemmi8_min((k - kk) / 16, 128);
      uint16x8_t vpairs = vdupq_n_u16(0);
      for (size_t s = 0; s < steps; s++, kk += 16) vpairs = vpadalq_u8(vpairs, vld1q_u8(row + kk));
      vsum = vpadalq_u16(vsum, vpairs);
    }
    if (kk < k) {
      vsum = vpadalq_u16(vsum, vpaddlq_u8(gemmi8_a64_load_tail(row + kk, k - kk, k >= 16)));
    }
    sums[i] = (int32_t) vaddvq_u32(vsum);
  }
}
