// gemmi8-bench: gemmlowp (Debian's libgemmlowp-dev, header-only), single thread.
//
//   u8u8    uint8 weights (zero point 131) x uint8 activations (zero point 119),
//           GemmWithOutputPipeline with bias addition, the per-tensor fixed-point
//           stage OutputStageQuantizeDownInt32ByFixedPoint (output zero point
//           128) and OutputStageSaturatingCastToUint8: TFLite's uint8 pipeline.
//   u8s32   the same operands and bias addition, int32 output.
//
// Called as TFLite calls it: lhs = weights N x K row-major, rhs = activations as a
// K x M column-major matrix (the M x K row-major A in place), result N x M
// column-major (the M x N row-major C). gemmlowp packs both operands on every
// call; it has no prepacked-weights entry point.
//
// Per-tensor requantization only: Debian's gemmlowp does not build its per-channel
// exponent stage (OutputStageScaleInt32ByFixedPointAndExponentPC) with SSE/AVX on.
//
// This file is compiled with -DGEMMLOWP_ENABLE_AVX2 -mavx2 -mfma (Makefile): that
// selects gemmlowp's AVX2 kernel (AVX2_64_Kernel24x8Depth2) and AVX2 packing; the
// run's context names the kernel compiled in. With AVX2 on, gemmlowp takes its
// generic (non-SSE) output-stage code: that is how it ships.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <tuple>

#include "cases.h"

#if GEMMI8_BENCH_HAVE_GEMMLOWP
#include <gemmlowp/public/gemmlowp.h>
#endif

namespace {

#if GEMMI8_BENCH_HAVE_GEMMLOWP

constexpr int32_t kAZp = 119;  // activations (the M x K matrix)
constexpr int32_t kBZp = 131;  // weights (the N x K matrix)
constexpr int32_t kCZp = 128;

struct LowpState {
  int m = 0, n = 0, k = 0;
  bool requant = false;
  uint8_t* a = nullptr;  // M x K
  uint8_t* b = nullptr;  // N x K
  int32_t* bias = nullptr;
  void* c = nullptr;  // M x N uint8 or int32
  int32_t multiplier = 0, right_shift = 0;
  gemmlowp::GemmContext context;
};

void Teardown(void* opaque)
{
  auto* s = static_cast<LowpState*>(opaque);
  if (s == nullptr) return;
  bench_free(s->a);
  bench_free(s->b);
  bench_free(s->bias);
  bench_free(s->c);
  delete s;
}

const char* Run(void* opaque)
{
  auto* s = static_cast<LowpState*>(opaque);
  using gemmlowp::MapOrder;
  const gemmlowp::MatrixMap<const uint8_t, MapOrder::RowMajor> lhs(s->b, s->n, s->k, s->k);
  const gemmlowp::MatrixMap<const uint8_t, MapOrder::ColMajor> rhs(s->a, s->k, s->m, s->k);
  gemmlowp::OutputStageBiasAddition<
      gemmlowp::VectorMap<const int32_t, gemmlowp::VectorShape::Col>>
      bias_stage;
  bias_stage.bias_vector =
      gemmlowp::VectorMap<const int32_t, gemmlowp::VectorShape::Col>(s->bias, s->n);
  if (s->requant) {
    gemmlowp::MatrixMap<uint8_t, MapOrder::ColMajor> result(static_cast<uint8_t*>(s->c), s->n,
                                                            s->m, s->n);
    gemmlowp::OutputStageQuantizeDownInt32ByFixedPoint quantize;
    quantize.result_fixedpoint_multiplier = s->multiplier;
    quantize.result_shift = s->right_shift;
    quantize.result_offset_after_shift = kCZp;
    gemmlowp::OutputStageSaturatingCastToUint8 cast;
    gemmlowp::GemmWithOutputPipeline<uint8_t, uint8_t, gemmlowp::DefaultL8R8BitDepthParams>(
        &s->context, lhs, rhs, &result, -kBZp, -kAZp,
        std::make_tuple(bias_stage, quantize, cast));
  } else {
    gemmlowp::MatrixMap<int32_t, MapOrder::ColMajor> result(static_cast<int32_t*>(s->c), s->n,
                                                            s->m, s->n);
    gemmlowp::GemmWithOutputPipeline<uint8_t, int32_t, gemmlowp::DefaultL8R8BitDepthParams>(
        &s->context, lhs, rhs, &result, -kBZp, -kAZp, std::make_tuple(bias_stage));
  }
  return nullptr;
}

// A positive real scale below 1 as a Q31 multiplier in [2^30, 2^31) and a right
// shift: scale = multiplier * 2^-31 * 2^-shift.
bool QuantizeScale(double scale, int32_t* multiplier, int32_t* right_shift)
{
  if (!(scale > 0.0 && scale < 1.0)) return false;
  int exponent = 0;
  const double q = std::frexp(scale, &exponent);  // q in [0.5, 1)
  int64_t fixed = static_cast<int64_t>(std::llround(q * 2147483648.0));
  if (fixed == (int64_t{1} << 31)) {
    fixed /= 2;
    exponent++;
  }
  if (-exponent < 0 || -exponent > 31) return false;
  *multiplier = static_cast<int32_t>(fixed);
  *right_shift = -exponent;
  return true;
}

const char* Setup(const bench_shape* shape, bool requant, void** state)
{
  if (shape->row > 0x7fffffff || shape->col > 0x7fffffff || shape->depth > 0x7fffffff) {
    return "shape too large for gemmlowp's int sizes";
  }
  auto* s = new (std::nothrow) LowpState;
  if (s == nullptr) return "out of memory";
  s->m = static_cast<int>(shape->col);
  s->n = static_cast<int>(shape->row);
  s->k = static_cast<int>(shape->depth);
  s->requant = requant;
  s->context.set_max_num_threads(1);
  s->a = static_cast<uint8_t*>(bench_alloc(bench_mul(shape->col, shape->depth)));
  s->b = static_cast<uint8_t*>(bench_alloc(bench_mul(shape->row, shape->depth)));
  s->bias = static_cast<int32_t*>(bench_alloc(bench_mul(shape->row, sizeof(int32_t))));
  s->c = bench_alloc(bench_mul(bench_mul(shape->col, shape->row), requant ? 1 : 4));
  if (s->a == nullptr || s->b == nullptr || s->bias == nullptr || s->c == nullptr) {
    Teardown(s);
    return "out of memory";
  }
  bench_rng rng;
  bench_rng_seed(&rng, shape, "gemmlowp");
  bench_fill_u8(&rng, s->a, shape->col * shape->depth);
  bench_fill_u8(&rng, s->b, shape->row * shape->depth);
  for (size_t i = 0; i < shape->row; i++) s->bias[i] = bench_rng_int(&rng, -20000, 20000);
  const double scale =
      bench_requant_scale(shape->depth, bench_uniform_sd(0, 255), bench_uniform_sd(0, 255));
  if (requant && !QuantizeScale(scale, &s->multiplier, &s->right_shift)) {
    Teardown(s);
    return bench_error("scale %g not representable by gemmlowp's right-shift stage", scale);
  }
  Run(s);  // warm-up and check
  // The stage applies exactly multiplier * 2^-31 * 2^-shift, rounded: check against that.
  const double applied = std::ldexp(static_cast<double>(s->multiplier), -31 - s->right_shift);
  bench_gemm_check chk = {};
  chk.m = shape->col;
  chk.n = shape->row;
  chk.k = shape->depth;
  chk.a_type = BENCH_U8;
  chk.a = s->a;
  chk.a_stride = shape->depth;
  chk.a_zp = kAZp;
  chk.b_type = BENCH_U8;
  chk.b = s->b;
  chk.b_stride = shape->depth;
  chk.b_zp = kBZp;
  chk.bias = s->bias;
  chk.c_type = requant ? BENCH_U8 : BENCH_S32;
  chk.c = s->c;
  chk.c_stride = shape->row;
  chk.scale = &applied;
  chk.per_channel = 0;
  chk.c_zp = kCZp;
  chk.c_min = 0;
  chk.c_max = 255;
  if (const char* err = bench_check_gemm(&chk)) {
    const std::string msg(err);  // bench_error's buffer is reused below
    Teardown(s);
    return bench_error("gemmlowp result wrong: %s", msg.c_str());
  }
  *state = s;
  return nullptr;
}

const char* SetupU8(const bench_shape* shape, const char* isa, void** state)
{
  static_cast<void>(isa);
  return Setup(shape, true, state);
}

const char* SetupS32(const bench_shape* shape, const char* isa, void** state)
{
  static_cast<void>(isa);
  return Setup(shape, false, state);
}

const char* Unavailable()
{
#if defined(GEMMLOWP_AVX2)
  if (!bench_cpu_has("avx2") || !bench_cpu_has("fma")) {
    return "built for gemmlowp's AVX2 kernel; this CPU lacks AVX2 or FMA";
  }
#endif
  return nullptr;
}

void Context(bench_context_fn add, void* ctx)
{
  gemmlowp::DefaultKernel<gemmlowp::DefaultL8R8BitDepthParams> kernel;
  std::string path = kernel.Name();
#if defined(GEMMLOWP_AVX2)
  path += " (GEMMLOWP_AVX2: AVX2 kernel and packing, generic output stages)";
#elif defined(GEMMLOWP_SSE4)
  path += " (GEMMLOWP_SSE4)";
#else
  path += " (no SIMD path)";
#endif
  add(ctx, "gemmlowp_kernel", path.c_str());
  add(ctx, "gemmlowp_threads", "1 (GemmContext::set_max_num_threads)");
  add(ctx, "gemmlowp_requant", "per-tensor OutputStageQuantizeDownInt32ByFixedPoint");
}

#else  // !GEMMI8_BENCH_HAVE_GEMMLOWP

const char* Unavailable()
{
  return "built without gemmlowp (install libgemmlowp-dev, then rebuild: make bench)";
}
const char* SetupU8(const bench_shape*, const char*, void**) { return Unavailable(); }
const char* SetupS32(const bench_shape*, const char*, void**) { return Unavailable(); }
const char* Run(void*) { return Unavailable(); }
void Teardown(void*) {}
void Context(bench_context_fn add, void* ctx)
{
  add(ctx, "gemmlowp_kernel", "(not built in)");
}

#endif

bench_case MakeCase(const char* variant, const char* (*setup)(const bench_shape*, const char*,
                                                             void**))
{
  bench_case c = {};
  c.library = "gemmlowp";
  c.variant = variant;
  c.unavailable = Unavailable;
  c.setup = setup;
  c.run = Run;
  c.teardown = Teardown;
  return c;
}

}  // namespace

extern "C" {
const bench_case bench_gemmlowp_u8u8 = MakeCase("u8u8", SetupU8);
const bench_case bench_gemmlowp_u8s32 = MakeCase("u8s32", SetupS32);
const bench_library bench_library_gemmlowp = {"gemmlowp", nullptr, Context};
}
