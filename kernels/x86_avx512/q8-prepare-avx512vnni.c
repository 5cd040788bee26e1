/* The fixed-point constants of a packed block for the AVX-512 VNNI qu8 / qs8 / qu8s8
 * kernels (gemmi8_qparams.prepared), computed once per block by the driver. */
#include "qgemm-avx512vnni.h"

void gemmi8_q8_prepare_fixedpoint__avx512vnni(const struct gemmi8_qparams* p, size_t nr,
                                             void* out)
{
  __m512i* v = out;
  for (size_t j = 0; 16 * j < nr; j++) gemmi8_qgemm_prepare_group_avx512(p, nr, j, v + GEMMI8_FP_VECTORS * j);
}
