/*
 * Row sums of uint8 rows (qu8 kernels that take rowsum(a) from the driver), ARMv7 NEON:
 * VPADAL.U8 adds byte pairs into 8 uint16 lanes (at most 128 steps of 16 bytes,
 * 128 * 510 < 2^16), then VPADAL.U16 into 4 uint32 lanes. The depth tail (k % 16) is
 * at most one 8-byte load and one in-bounds tail load (gemmi8_qneon_load_tail).
 */
#include "qgemm-neon.h"

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
    uint16x4_t vtail = vdup_n_u16(0);
    if (k - kk >= 8) {
      vtail = vpaddl_u8(vld1_u8(row + kk));
      kk += 8;
    }
    if (kk < k) vtail = vpadal_u8(vtail, gemmi8_qneon_load_tail(row + kk, k - kk, k >= 8));
    vsum = vaddw_u16(vsum, vtail);
    const uint32x2_t v = vpadd_u32(vget_low_u32(vsum), vget_high_u32(vsum));
    sums[i] = (int32_t) vget_lane_u32(vpadd_u32(v, v), 0);
  }
}
