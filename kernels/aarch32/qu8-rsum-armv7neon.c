/*
 * Row sums of uint8 rows (qu8 kernels that take rowsum(a) from the driver), ARMv7 NEON:
 * of plain rows (GEMM) and of an igemm row tile's rows through its tap pointers
 * (convolution). VPADAL.U8 adds byte pairs into 8 uint16 lanes (at most 128 steps of
 * 16 bytes, 128 * 510 < 2^16), then VPADAL.U16 into 4 uint32 lanes. The tail of a run
 * of bytes (n % 16) is at most one 8-byte load and one in-bounds tail load
 * (gemmi8_qneon_load_tail): nothing past the run is read.
 */
#include "qgemm-neon.h"

/* vsum + the n bytes at p, in 4 uint32 lanes (modulo 2^32). */
static uint32x4_t gemmi8_qneon_add_bytes(uint32x4_t vsum, const uint8_t* p, size_t n)
{
  size_t kk = 0;
  while (kk + 16 <= n) {
    const size_t steps = gemmi8_min((n - kk) / 16, 128);
    uint16x8_t vpairs = vdupq_n_u16(0);
    for (size_t s = 0; s < steps; s++, kk += 16) vpairs = vpadalq_u8(vpairs, vld1q_u8(p + kk));
    vsum = vpadalq_u16(vsum, vpairs);
  }
  uint16x4_t vtail = vdup_n_u16(0);
  if (n - kk >= 8) {
    vtail = vpaddl_u8(vld1_u8(p + kk));
    kk += 8;
  }
  if (kk < n) vtail = vpadal_u8(vtail, gemmi8_qneon_load_tail(p + kk, n - kk, n >= 8));
  return vaddw_u16(vsum, vtail);
}

static int32_t gemmi8_qneon_lanes_sum(uint32x4_t vsum)
{
  const uint32x2_t v = vpadd_u32(vget_low_u32(vsum), vget_high_u32(vsum));
  return (int32_t) vget_lane_u32(vpadd_u32(v, v), 0);
}

void gemmi8_qu8_rsum__armv7neon(size_t m, size_t k, const void* a, size_t a_stride, int32_t* sums)
{
  const uint8_t* row = (const uint8_t*) a;
  for (size_t i = 0; i < m; i++, row += a_stride) {
    sums[i] = gemmi8_qneon_lanes_sum(gemmi8_qneon_add_bytes(vdupq_n_u32(0), row, k));
  }
}

void gemmi8_qu8_irsum__armv7neon(size_t mr, size_t rows, size_t kc, size_t ks, const void* const* a,
                            size_t a_offset, const void* zero, int32_t* sums)
{
  for (size_t i = 0; i < rows; i++) {
    uint32x4_t vsum = vdupq_n_u32(0);
    for (size_t t = 0; t < ks; t++) {
      const uint8_t* p = (const uint8_t*) a[t * mr + i];
      if (p != (const uint8_t*) zero) p += a_offset;
      vsum = gemmi8_qneon_add_bytes(vsum, p, kc);
    }
    sums[i] = gemmi8_qneon_lanes_sum(vsum);
  }
}
