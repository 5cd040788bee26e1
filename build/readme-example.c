#include <stdio.h>
#include <gemmi8.h>

int main(void)
{
  enum { M = 2, N = 3, K = 4 }; /* 2 pixels, 3 output channels, depth 4 */
  const uint8_t a[M * K] = {130, 131, 132, 133, 120, 121, 122, 123};
  const uint8_t b[N * K] = {10, 20, 30, 40, 40, 30, 20, 10, 128, 128, 128, 128};
  const uint8_t a_zp = 128, b_zp = 128;
  const int32_t bias[N] = {100, -100, 0};

  void* packed = NULL;
  gemmi8_status s = gemmi8_qu8_pack_alloc(N, K, b, K, GEMMI8_B_NK, a_zp, &b_zp, 0, bias,
                                          &packed);
  if (s != gemmi8_status_success) {
    printf("pack: %s\n", gemmi8_status_string(s));
    return 1;
  }

  /* real output scale = a_scale * b_scale / c_scale, here 0.02 */
  int32_t multiplier, shift;
  gemmi8_quantize_multiplier(0.02, &multiplier, &shift);
  const gemmi8_requant rq = {
      .mode = gemmi8_requant_fixedpoint,
      .per_channel = 0,
      .multiplier = &multiplier,
      .shift = &shift,
      .zero_point = 128,
      .min = 0,
      .max = 255,
  };
  uint8_t c[M * N];
  s = gemmi8_qu8_gemm(M, N, K, a, K, packed, &rq, c, N);
  gemmi8_packed_free(packed);
  if (s != gemmi8_status_success) {
    printf("gemm: %s\n", gemmi8_status_string(s));
    return 1;
  }
  /* acc = {-1292, -1592, 0; 2828, 2528, 0} -> 128 + round(0.02 * acc) */
  const uint8_t expected[M * N] = {102, 96, 128, 185, 179, 128};
  for (int i = 0; i < M * N; i++) {
    if (c[i] != expected[i]) {
      printf("c[%d] = %d, expected %d\n", i, c[i], expected[i]);
      return 1;
    }
  }
  printf("gemmi8 %s on %s: ok\n", gemmi8_version(), gemmi8_isa_name());
  return 0;
}
