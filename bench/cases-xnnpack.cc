// gemmi8-bench: XNNPACK (Debian's libxnnpack-dev, 2022-02 snapshot), single thread, or
// a pthreadpool of bench_threads threads for the threaded runs (xnnpack@2/...).
//
//   fc-qu8   xnn_create_fully_connected_nc_qu8: input M x K uint8 (zero point 119),
//            kernel N x K uint8 (zero point 131, XNNPACK's own layout for FC
//            weights), int32 bias, output M x N uint8 (zero point 128, 0..255).
//   fc-qs8   xnn_create_fully_connected_nc_qs8: input int8 (zero point -7), kernel
//            N x K int8 symmetric, output int8 (zero point 5, -128..127).
// The operator is created once in setup (that packs the weights) and set up once
// for the M x K input and M x N output; a run is one xnn_run_operator with a NULL
// thread pool (single thread). Requantization is XNNPACK's fp32 one with one
// scale per tensor: this version has no per-channel (qc8) fully-connected
// operator. XNNPACK picks its microkernels from cpuinfo at xnn_initialize; its
// 2022-02 x86 qs8/qu8 GEMM kernels go up to AVX512SKX (vpmaddwd, 4x16c8), with no
// VNNI kernels.
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#include "cases.h"

#if GEMMI8_BENCH_HAVE_XNNPACK
#include <pthreadpool.h>
#include <xnnpack.h>
#endif

namespace {

#if GEMMI8_BENCH_HAVE_XNNPACK

const char* init_error = nullptr;

void Init()
{
  enum xnn_status st = xnn_initialize(nullptr);
  if (st != xnn_status_success) init_error = bench_error("xnn_initialize: status %d", (int) st);
}

const char* Unavailable() { return init_error; }


constexpr int32_t kU8AZp = 119, kU8BZp = 131, kU8CZp = 128;
constexpr int32_t kS8AZp = -7, kS8CZp = 5;

struct XnnState {
  bool s8 = false;
  xnn_operator_t op = nullptr;
  pthreadpool_t pool = nullptr;
  void* a = nullptr;
  void* c = nullptr;
};

void Teardown(void* opaque)
{
  auto* s = static_cast<XnnState*>(opaque);
  if (s == nullptr) return;
  if (s->op != nullptr) xnn_delete_operator(s->op);
  bench_free(s->a);
  bench_free(s->c);
  delete s;
}

const char* Run(void* opaque)
{
  auto* s = static_cast<XnnState*>(opaque);
  enum xnn_status st = xnn_run_operator(s->op, s->pool);
  return st == xnn_status_success ? nullptr : bench_error("xnn_run_operator: status %d", (int) st);
}

const char* Setup(const bench_shape* shape, bool s8, void** state)
{
  if (init_error != nullptr) return init_error;
  auto* s = new (std::nothrow) XnnState;
  if (s != nullptr) s->pool = static_cast<pthreadpool_t>(bench_pthreadpool(bench_threads));
  if (s == nullptr) return "out of memory";
  s->s8 = s8;
  const size_t m = shape->col, n = shape->row, k = shape->depth;
  // XNNPACK may read XNN_EXTRA_BYTES past the end of its input.
  s->a = bench_alloc(bench_mul(m, k) + XNN_EXTRA_BYTES);
  void* b = bench_alloc(bench_mul(n, k) + XNN_EXTRA_BYTES);
  auto* bias = static_cast<int32_t*>(bench_alloc(bench_mul(n, sizeof(int32_t))));
  s->c = bench_alloc(bench_mul(m, n));
  const char* err = nullptr;
  if (s->a == nullptr || b == nullptr || bias == nullptr || s->c == nullptr) {
    err = "out of memory";
  }
  bench_rng rng;
  bench_rng_seed(&rng, shape, s8 ? "xnnpack-s8" : "xnnpack-u8");
  double scale = 0.0;
  enum xnn_status st = xnn_status_success;
  if (err == nullptr && s8) {
    bench_fill_s8(&rng, static_cast<int8_t*>(s->a), m * k, -128, 127);
    bench_fill_s8(&rng, static_cast<int8_t*>(b), n * k, -127, 127);
    for (size_t i = 0; i < n; i++) bias[i] = bench_rng_int(&rng, -20000, 20000);
    // input_scale * kernel_scale / output_scale is the requantization scale.
    const float kernel_scale = static_cast<float>(bench_requant_scale(
        k, bench_uniform_sd(-128, 127), bench_uniform_sd(-127, 127)));
    scale = kernel_scale;
    st = xnn_create_fully_connected_nc_qs8(
        k, n, k, n, static_cast<int8_t>(kS8AZp), 1.0f, kernel_scale,
        static_cast<const int8_t*>(b), bias, static_cast<int8_t>(kS8CZp), 1.0f, -128, 127, 0,
        &s->op);
    if (st == xnn_status_success) {
      st = xnn_setup_fully_connected_nc_qs8(s->op, m, static_cast<const int8_t*>(s->a),
                                            static_cast<int8_t*>(s->c), s->pool);
    }
  } else if (err == nullptr) {
    bench_fill_u8(&rng, static_cast<uint8_t*>(s->a), m * k);
    bench_fill_u8(&rng, static_cast<uint8_t*>(b), n * k);
    for (size_t i = 0; i < n; i++) bias[i] = bench_rng_int(&rng, -20000, 20000);
    const float kernel_scale = static_cast<float>(
        bench_requant_scale(k, bench_uniform_sd(0, 255), bench_uniform_sd(0, 255)));
    scale = kernel_scale;
    st = xnn_create_fully_connected_nc_qu8(
        k, n, k, n, static_cast<uint8_t>(kU8AZp), 1.0f, static_cast<uint8_t>(kU8BZp),
        kernel_scale, static_cast<const uint8_t*>(b), bias, static_cast<uint8_t>(kU8CZp), 1.0f,
        0, 255, 0, &s->op);
    if (st == xnn_status_success) {
      st = xnn_setup_fully_connected_nc_qu8(s->op, m, static_cast<const uint8_t*>(s->a),
                                            static_cast<uint8_t*>(s->c), s->pool);
    }
  }
  if (err == nullptr && st != xnn_status_success) {
    err = bench_error("creating or setting up the fully-connected operator: status %d",
                      (int) st);
  }
  if (err == nullptr) err = Run(s);  // warm-up and check
  if (err == nullptr) {
    bench_gemm_check chk = {};
    chk.m = m;
    chk.n = n;
    chk.k = k;
    chk.a_type = s8 ? BENCH_S8 : BENCH_U8;
    chk.a = s->a;
    chk.a_stride = k;
    chk.a_zp = s8 ? kS8AZp : kU8AZp;
    chk.b_type = s8 ? BENCH_S8 : BENCH_U8;
    chk.b = b;
    chk.b_stride = k;
    chk.b_zp = s8 ? 0 : kU8BZp;
    chk.bias = bias;
    chk.c_type = s8 ? BENCH_S8 : BENCH_U8;
    chk.c = s->c;
    chk.c_stride = n;
    chk.scale = &scale;
    chk.per_channel = 0;
    chk.c_zp = s8 ? kS8CZp : kU8CZp;
    chk.c_min = s8 ? -128 : 0;
    chk.c_max = s8 ? 127 : 255;
    if (const char* wrong = bench_check_gemm(&chk)) {
      const std::string msg(wrong);  // bench_error's buffer is reused below
      err = bench_error("XNNPACK result wrong: %s", msg.c_str());
    }
  }
  bench_free(b);  // packed into the operator
  bench_free(bias);
  if (err != nullptr) {
    Teardown(s);
    return err;
  }
  *state = s;
  return nullptr;
}

const char* SetupQu8(const bench_shape* shape, const char*, void** state)
{
  return Setup(shape, false, state);
}
const char* SetupQs8(const bench_shape* shape, const char*, void** state)
{
  return Setup(shape, true, state);
}

void Context(bench_context_fn add, void* ctx)
{
  add(ctx, "xnnpack_threads", "1 (NULL pthreadpool); xnnpack@N: a pthreadpool of N");
  add(ctx, "xnnpack_requant", "fp32, per-tensor scale");
  add(ctx, "xnnpack_kernels",
      bench_cpu_has("avx512bw") && bench_cpu_has("avx512dq") && bench_cpu_has("avx512vl")
          ? "qs8/qu8 gemm 4x16c8 avx512skx (the best this version ships for x86)"
          : bench_cpu_has("avx2") ? "qs8/qu8 gemm 3x8c8 avx2" : "SSE or XOP kernels");
}

#else  // !GEMMI8_BENCH_HAVE_XNNPACK

void Init() {}
const char* Unavailable()
{
  return "built without XNNPACK (install libxnnpack-dev and libpthreadpool-dev, then "
         "rebuild: make bench)";
}
const char* SetupQu8(const bench_shape*, const char*, void**) { return Unavailable(); }
const char* SetupQs8(const bench_shape*, const char*, void**) { return Unavailable(); }
const char* Run(void*) { return Unavailable(); }
void Teardown(void*) {}
void Context(bench_context_fn add, void* ctx) { add(ctx, "xnnpack_kernels", "(not built in)"); }

#endif

bench_case MakeCase(const char* variant,
                    const char* (*setup)(const bench_shape*, const char*, void**))
{
  bench_case c = {};
  c.library = "xnnpack";
  c.variant = variant;
  c.flags = BENCH_CASE_FC | BENCH_CASE_THREADS;  // the fully-connected shapes too
  c.unavailable = Unavailable;
  c.setup = setup;
  c.run = Run;
  c.teardown = Teardown;
  return c;
}

}  // namespace

extern "C" {
const bench_case bench_xnnpack_fc_qu8 = MakeCase("fc-qu8", SetupQu8);
const bench_case bench_xnnpack_fc_qs8 = MakeCase("fc-qs8", SetupQs8);
const bench_library bench_library_xnnpack = {"xnnpack", Init, Context};
}
