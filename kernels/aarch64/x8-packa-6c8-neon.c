/*
 * Panels of A for the i8mm 6-row kernels over packed A (qgemm-i8mm.h,
 * gemmi8_q*_pgemm_*_ukernel_6x16c8__i8mm), NEON.
 *
 * Up to 6 rows of k bytes become, for each 16 depths, the three row-pair operands of
 * SMMLA / UMMLA for depths 0-7 and 8-15: [rows 0-1, d 0-7][rows 0-1, d 8-15][rows 2-3
 * ...][rows 4-5 ...], 96 bytes (TRN1 / TRN2 of 64-bit lanes, done once per row tile
 * here instead of once per block of columns in the kernel). The depth is padded to 16
 * and rows past m with zero bytes; the last depths of each row are loaded in bounds.
 * The panel takes 6 * round_up(k, 16) bytes.
 */
#include "q8-neon.h"

void gemmi8_x8_packa_6c8__neon(size_t m, size_t k, const void* a, size_t a_stride, void* panel)
{
  const uint8_t* ap[6];
  gemmi8_a64_rows(6, m, a, a_stride, ap);
  uint8_t* out = (uint8_t*) panel;
  size_t kk = 0;
  for (; kk + 16 <= k; kk += 16, out += 96) {
    for (size_t r = 0; r < 3; r++) {
      uint64x2_t v0 = vreinterpretq_u64_u8(vld1q_u8(ap[2 * r] + kk));
      uint64x2_t v1 = vreinterpretq_u64_u8(vld1q_u8(ap[2 * r + 1] + kk));
      if (2 * r >= m) v0 = vdupq_n_u64(0);
      if (2 * r + 1 >= m) v1 = vdupq_n_u64(0);
      vst1q_u8(out + 32 * r, vreinterpretq_u8_u64(vtrn1q_u64(v0, v1)));
      vst1q_u8(out + 32 * r + 16, vreinterpretq_u8_u64(vtrn2q_u64(v0, v1)));
    }
  }
  if (kk < k) {
    for (size_t r = 0; r < 3; r++) {
      uint64x2_t v0 = vdupq_n_u64(0), v1 = vdupq_n_u64(0);
      if (2 * r < m) v0 = vreinterpretq_u64_u8(gemmi8_a64_load_tail(ap[2 * r] + kk, k - kk, k >= 16));
      if (2 * r + 1 < m) {
        v1 = vreinterpretq_u64_u8(gemmi8_a64_load_tail(ap[2 * r + 1] + kk, k - kk, k >= 16));
      }
      vst1q_u8(out + 32 * r, vreinterpretq_u8_u64(vtrn1q_u64(v0, v1)));
      vst1q_u8(out + 32 * r + 16, vreinterpretq_u8_u64(vtrn2q_u64(v0, v1)));
    }
  }
}
