/* Binary GEMM, 4x4 (words of depth), ARMv7 NEON (VEOR + VCNT + VPADAL): int32, float
 * and sign-bit outputs. See bgemm-neon.h. */
#include "bgemm-neon.h"

GEMMI8_BGEMM_4X4_NEON_BODY(gemmi8_bin_gemm_4x4__neon_body)
GEMMI8_BGEMM_4X4_NEON_ENTRY(gemmi8_bin_gemm_s32_ukernel_4x4__armv7neon,
                            gemmi8_bin_gemm_4x4__neon_body, s32)
GEMMI8_BGEMM_4X4_NEON_ENTRY(gemmi8_bin_gemm_f32_ukernel_4x4__armv7neon,
                            gemmi8_bin_gemm_4x4__neon_body, f32)
GEMMI8_BGEMM_4X4_NEON_ENTRY(gemmi8_bin_gemm_bits_ukernel_4x4__armv7neon,
                            gemmi8_bin_gemm_4x4__neon_body, bits)
