/* qu8 and qs8 GEMM, 1x4c8, ARMv7 NEON (VMULL.U8 / .S8 + VPADAL): int32, fixed-point and
 * fp32 outputs, one body for both types; the tile for M = 1 (small batches). See
 * qgemm-neon.h. */
#include "qgemm-neon.h"

GEMMI8_QGEMM_C8_NEON_BODY(gemmi8_q8_gemm_1x4c8__neon_body, 1)
#if GEMMI8_KERNELS_qu8
GEMMI8_QBODY_KERNELS(GEMMI8_QGEMM_BODY_ENTRY, gemmi8_q8_gemm_1x4c8__neon_body, 0,
                     gemmi8_qu8_gemm_s32_ukernel_1x4c8__armv7neon,
                     gemmi8_qu8_gemm_fixedpoint_ukernel_1x4c8__armv7neon,
                     gemmi8_qu8_gemm_fp32_ukernel_1x4c8__armv7neon)
#endif
#if GEMMI8_KERNELS_qs8
GEMMI8_QBODY_KERNELS(GEMMI8_QGEMM_BODY_ENTRY, gemmi8_q8_gemm_1x4c8__neon_body, GEMMI8_TILE_SIGNED,
                     gemmi8_qs8_gemm_s32_ukernel_1x4c8__armv7neon,
                     gemmi8_qs8_gemm_fixedpoint_ukernel_1x4c8__armv7neon,
                     gemmi8_qs8_gemm_fp32_ukernel_1x4c8__armv7neon)
#endif
