// gemmi8-bench: oneDNN 2.x (Debian's libdnnl-dev), single thread.
//
//   gemm-u8s8s32    dnnl_gemm_u8s8s32, row-major: A M x K uint8 (offset 119), B given
//                   N x K int8 ('T'), C M x N int32 with a per-column offset ('R')
//                   holding the bias. It packs B again on every call.
//   matmul-u8s8u8   matmul primitive: src M x K uint8 (zero point 119), weights
//                   K x N int8 in the layout oneDNN picks (format_tag::any), reordered
//                   once in setup from the N x K matrix, int32 bias, per-channel output
//                   scales, dst uint8 (zero point 128). oneDNN has no uint8 weights:
//                   this is its closest match to gemmi8's qu8.
//   matmul-s8s8s8   the same with int8 src (zero point -7) and int8 dst (zero point 5):
//                   gemmi8's qs8.
//   matmul-u8s8s32  the same as u8s8u8 with an int32 dst, no scales.
//   matmul-u8s8u8-pt, matmul-s8s8s8-pt
//                   as matmul-u8s8u8 / -s8s8s8 with one output scale for the tensor.
//   matmul-u8s8u8-nozp, matmul-s8s8s8-nozp
//                   per-channel output scales, no zero points (folded into the bias
//                   as below, with each channel's scale).
//   matmul-u8s8u8-fast, matmul-s8s8s8-fast
//                   oneDNN's fastest configuration of the same layer: one output
//                   scale for the tensor, no zero points. The source and destination
//                   zero points are folded into the int32 bias once in setup (bias
//                   - a_zp * sum_k B[n][k] + round(c_zp / scale)), as a framework
//                   with constant weights can do, so the outputs are those of a
//                   per-tensor u8s8u8 / s8s8s8 layer with zero points.
// Zero points and scales are given when the primitive is created (not at run
// time), the most favourable case for oneDNN. The primitive and its arguments are
// built once; a run is one execute() and stream wait. The matmul cases free their
// plain copy of the weights after the first result is checked.
// matmul-u8s8u8, matmul-s8s8s8 and the two fast ones also run on the
// fully-connected shapes.
//
// Threads: Debian's oneDNN uses OpenMP; the bench sets it to one thread with
// omp_set_num_threads(1) (found at run time in the OpenMP library oneDNN loaded)
// and run.sh exports OMP_NUM_THREADS=1; matmul-u8s8u8 and -fast also run on
// bench_threads threads (onednn@2/...), set before the primitive is created and
// before each timed loop. The context reports the ISA oneDNN
// dispatches to, its OpenMP thread count and the matmul implementation; each
// matmul benchmark's label names the implementation used for its shape.
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "cases.h"

#if GEMMI8_BENCH_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#if DNNL_VERSION_MAJOR != 2
#undef GEMMI8_BENCH_HAVE_DNNL
#define GEMMI8_BENCH_HAVE_DNNL 0
#define GEMMI8_BENCH_DNNL_WRONG_VERSION 1
#endif
#endif

namespace {

#if GEMMI8_BENCH_HAVE_DNNL

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dnnl::engine* engine = nullptr;
dnnl::stream* stream = nullptr;
std::string init_error;

// OpenMP's thread-count calls, looked up in the process (oneDNN's OpenMP runtime
// is loaded with it): no link-time dependency on a particular OpenMP library.
void (*omp_set_threads)(int) = nullptr;
int (*omp_max_threads)() = nullptr;

void Init()
{
  omp_set_threads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  omp_max_threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  if (omp_set_threads != nullptr) omp_set_threads(1);
  try {
    engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
    stream = new dnnl::stream(*engine);
  } catch (const dnnl::error& e) {
    init_error = std::string("oneDNN engine: ") + e.what();
  }
}

const char* Unavailable()
{
  if (!init_error.empty()) return init_error.c_str();
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
  if (omp_set_threads == nullptr || omp_max_threads == nullptr) {
    return "cannot set the thread count of oneDNN's OpenMP runtime";
  }
#elif DNNL_CPU_THREADING_RUNTIME != DNNL_RUNTIME_SEQ
  return "oneDNN built with a threading runtime other than OpenMP or sequential";
#endif
  return nullptr;
}

// oneDNN's threads for the case about to be set up or run: one, or bench_threads for
// the threaded runs (onednn@2/...). The primitive is created with that count too.
const char* SetThreads()
{
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
  omp_set_threads(bench_threads);
  if (omp_max_threads() != bench_threads) return "cannot set oneDNN's OpenMP thread count";
#elif DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_SEQ
  if (bench_threads != 1) return "oneDNN built sequential: one thread only";
#endif
  return nullptr;
}

const char* Prepare(void*) { return SetThreads(); }

const char* IsaName(dnnl_cpu_isa_t isa)
{
  switch (isa) {
    case dnnl_cpu_isa_all: return "all";
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
  }
  return "unknown";
}

constexpr int32_t kU8AZp = 119, kU8CZp = 128;
constexpr int32_t kS8AZp = -7, kS8CZp = 5;

enum class Kind {
  kGemmU8S8S32,
  kMatmulU8S8U8,
  kMatmulS8S8S8,
  kMatmulU8S8S32,
  kMatmulU8S8U8Fast,
  kMatmulS8S8S8Fast,
  kMatmulU8S8U8Common,  // zero points, one output scale
  kMatmulS8S8S8Common,
  kMatmulU8S8U8NoZp,    // no zero points, per-channel output scales
  kMatmulS8S8S8NoZp,
};

bool IsS8(Kind kind)
{
  return kind == Kind::kMatmulS8S8S8 || kind == Kind::kMatmulS8S8S8Fast ||
         kind == Kind::kMatmulS8S8S8Common || kind == Kind::kMatmulS8S8S8NoZp;
}
bool IsS32(Kind kind) { return kind == Kind::kGemmU8S8S32 || kind == Kind::kMatmulU8S8S32; }
// No zero points: they are folded into the bias in setup.
bool IsFast(Kind kind)
{
  return kind == Kind::kMatmulU8S8U8Fast || kind == Kind::kMatmulS8S8S8Fast ||
         kind == Kind::kMatmulU8S8U8NoZp || kind == Kind::kMatmulS8S8S8NoZp;
}
// One output scale for the tensor.
bool IsCommon(Kind kind)
{
  return kind == Kind::kMatmulU8S8U8Fast || kind == Kind::kMatmulS8S8S8Fast ||
         kind == Kind::kMatmulU8S8U8Common || kind == Kind::kMatmulS8S8S8Common;
}

struct DnnlState {
  Kind kind = Kind::kGemmU8S8S32;
  int64_t m = 0, n = 0, k = 0;
  void* a = nullptr;       // M x K uint8 or int8
  int8_t* b = nullptr;     // N x K, as given (gemm reads it every call)
  void* packed = nullptr;  // matmul weights in oneDNN's layout
  int32_t* bias = nullptr;
  void* c = nullptr;  // M x N
  dnnl::matmul matmul;
  std::unordered_map<int, dnnl::memory> args;
  std::string impl;
};

void Teardown(void* opaque)
{
  auto* s = static_cast<DnnlState*>(opaque);
  if (s == nullptr) return;
  s->args.clear();
  s->matmul = dnnl::matmul();
  bench_free(s->a);
  bench_free(s->b);
  bench_free(s->packed);
  bench_free(s->bias);
  bench_free(s->c);
  delete s;
}

const char* Run(void* opaque)
{
  auto* s = static_cast<DnnlState*>(opaque);
  if (s->kind == Kind::kGemmU8S8S32) {
    dnnl_status_t st = dnnl_gemm_u8s8s32(
        'N', 'T', 'R', s->m, s->n, s->k, 1.0f, static_cast<const uint8_t*>(s->a), s->k,
        static_cast<uint8_t>(kU8AZp), s->b, s->k, 0, 0.0f, static_cast<int32_t*>(s->c), s->n,
        s->bias);
    return st == dnnl_success ? nullptr : bench_error("dnnl_gemm_u8s8s32: status %d", (int) st);
  }
  try {
    s->matmul.execute(*stream, s->args);
    stream->wait();
  } catch (const dnnl::error& e) {
    return bench_error("matmul execute: %s", e.what());
  }
  return nullptr;
}

// Builds the matmul primitive for s (scales: per output channel, or one for the
// fast kinds; unused for int32 output) and reorders the weights into the layout it
// chose.
void BuildMatmul(DnnlState* s, const std::vector<float>& scales)
{
  const bool s8 = IsS8(s->kind);
  const bool s32 = IsS32(s->kind);
  const bool fast = IsFast(s->kind);
  const bool common = IsCommon(s->kind);
  const dnnl::memory::desc a_md({s->m, s->k}, s8 ? dt::s8 : dt::u8, tag::ab);
  const dnnl::memory::desc w_any({s->k, s->n}, dt::s8, tag::any);
  const dnnl::memory::desc w_user_md({s->k, s->n}, dt::s8, tag::ba);  // N x K in memory
  const dnnl::memory::desc bias_md({1, s->n}, dt::s32, tag::ab);
  const dnnl::memory::desc c_md({s->m, s->n}, s32 ? dt::s32 : s8 ? dt::s8 : dt::u8, tag::ab);
  dnnl::primitive_attr attr;
  if (!s32) {
    if (common) {
      attr.set_output_scales(0, {scales[0]});
    } else {
      attr.set_output_scales(1 << 1, scales);
    }
  }
  if (!fast) {
    attr.set_zero_points(DNNL_ARG_SRC, 0, {s8 ? kS8AZp : kU8AZp});
    if (!s32) attr.set_zero_points(DNNL_ARG_DST, 0, {s8 ? kS8CZp : kU8CZp});
  }
  const dnnl::matmul::desc desc(a_md, w_any, bias_md, c_md);
  const dnnl::matmul::primitive_desc pd(desc, attr, *engine);
  s->impl = pd.impl_info_str();
  s->matmul = dnnl::matmul(pd);

  const dnnl::memory::desc w_md = pd.weights_desc();
  s->packed = bench_alloc(w_md.get_size());
  if (s->packed == nullptr) throw std::bad_alloc();
  dnnl::memory w_user(w_user_md, *engine, s->b);
  dnnl::memory w_packed(w_md, *engine, s->packed);
  dnnl::reorder(w_user, w_packed).execute(*stream, w_user, w_packed);
  stream->wait();

  s->args[DNNL_ARG_SRC] = dnnl::memory(pd.src_desc(), *engine, s->a);
  s->args[DNNL_ARG_WEIGHTS] = w_packed;
  s->args[DNNL_ARG_BIAS] = dnnl::memory(pd.bias_desc(), *engine, s->bias);
  s->args[DNNL_ARG_DST] = dnnl::memory(pd.dst_desc(), *engine, s->c);
}

const char* Setup(const bench_shape* shape, Kind kind, void** state)
{
  if (const char* why = Unavailable()) return why;
  if (const char* why = SetThreads()) return why;
  auto* s = new (std::nothrow) DnnlState;
  if (s == nullptr) return "out of memory";
  s->kind = kind;
  s->m = static_cast<int64_t>(shape->col);
  s->n = static_cast<int64_t>(shape->row);
  s->k = static_cast<int64_t>(shape->depth);
  const bool s8 = IsS8(kind);
  const bool s32 = IsS32(kind);
  const bool fast = IsFast(kind);
  const bool common = IsCommon(kind);
  s->a = bench_alloc(bench_mul(shape->col, shape->depth));
  s->b = static_cast<int8_t*>(bench_alloc(bench_mul(shape->row, shape->depth)));
  s->bias = static_cast<int32_t*>(bench_alloc(bench_mul(shape->row, sizeof(int32_t))));
  s->c = bench_alloc(bench_mul(bench_mul(shape->col, shape->row), s32 ? 4 : 1));
  if (s->a == nullptr || s->b == nullptr || s->bias == nullptr || s->c == nullptr) {
    Teardown(s);
    return "out of memory";
  }
  bench_rng rng;
  bench_rng_seed(&rng, shape, s8 ? "onednn-s8" : "onednn-u8");
  if (s8) {
    bench_fill_s8(&rng, static_cast<int8_t*>(s->a), shape->col * shape->depth, -128, 127);
  } else {
    bench_fill_u8(&rng, static_cast<uint8_t*>(s->a), shape->col * shape->depth);
  }
  bench_fill_s8(&rng, s->b, shape->row * shape->depth, -127, 127);
  for (size_t i = 0; i < shape->row; i++) s->bias[i] = bench_rng_int(&rng, -20000, 20000);
  const double base = bench_requant_scale(
      shape->depth, s8 ? bench_uniform_sd(-128, 127) : bench_uniform_sd(0, 255),
      bench_uniform_sd(-127, 127));
  std::vector<float> scales(shape->row);
  std::vector<double> check_scales(shape->row);
  for (size_t i = 0; i < shape->row; i++) {
    scales[i] = static_cast<float>(common ? base : base * bench_rng_real(&rng, 0.5, 1.5));
    check_scales[i] = scales[i];
  }
  const int32_t a_zp = s8 ? kS8AZp : kU8AZp, c_zp = s8 ? kS8CZp : kU8CZp;
  if (fast) {
    // The zero points go into the bias: sum_k (A - a_zp) B = sum_k A B - a_zp sum_k B,
    // and c_zp + scale * acc = scale * (acc + c_zp / scale).
    for (size_t i = 0; i < shape->row; i++) {
      const double c_shift = static_cast<double>(c_zp) / static_cast<double>(scales[i]);
      int64_t b_sum = 0;
      for (size_t j = 0; j < shape->depth; j++) b_sum += s->b[i * shape->depth + j];
      const int64_t folded =
          s->bias[i] - static_cast<int64_t>(a_zp) * b_sum + std::llround(c_shift);
      if (folded < INT32_MIN || folded > INT32_MAX) {
        Teardown(s);
        return "folded bias out of int32 range";
      }
      s->bias[i] = static_cast<int32_t>(folded);
    }
  }
  if (kind != Kind::kGemmU8S8S32) {
    try {
      BuildMatmul(s, scales);
    } catch (const std::bad_alloc&) {
      Teardown(s);
      return "out of memory";
    } catch (const dnnl::error& e) {
      Teardown(s);
      return bench_error("matmul primitive: %s", e.what());
    }
  } else {
    s->impl = "dnnl_gemm_u8s8s32";
  }
  if (const char* err = Run(s)) {  // warm-up and check
    Teardown(s);
    return err;
  }
  bench_gemm_check chk = {};
  chk.m = shape->col;
  chk.n = shape->row;
  chk.k = shape->depth;
  chk.a_type = s8 ? BENCH_S8 : BENCH_U8;
  chk.a = s->a;
  chk.a_stride = shape->depth;
  chk.a_zp = fast ? 0 : a_zp;  // the fast kinds have it in the bias
  chk.b_type = BENCH_S8;
  chk.b = s->b;
  chk.b_stride = shape->depth;
  chk.b_zp = 0;
  chk.bias = s->bias;
  chk.c_type = s32 ? BENCH_S32 : s8 ? BENCH_S8 : BENCH_U8;
  chk.c = s->c;
  chk.c_stride = shape->row;
  chk.scale = check_scales.data();
  chk.per_channel = !common;
  chk.c_zp = fast ? 0 : c_zp;
  chk.c_min = s8 ? -128 : 0;
  chk.c_max = s8 ? 127 : 255;
  if (const char* err = bench_check_gemm(&chk)) {
    std::string msg = std::string("oneDNN result wrong (") + s->impl + "): " + err;
    Teardown(s);
    return bench_error("%s", msg.c_str());
  }
  if (kind != Kind::kGemmU8S8S32) {  // the matmul reads its reordered copy only
    bench_free(s->b);
    s->b = nullptr;
  }
  *state = s;
  return nullptr;
}

const char* Label(const void* opaque) { return static_cast<const DnnlState*>(opaque)->impl.c_str(); }

const char* SetupGemm(const bench_shape* shape, const char*, void** state)
{
  return Setup(shape, Kind::kGemmU8S8S32, state);
}
const char* SetupU8S8U8(const bench_shape* shape, const char*, void** state)
{
  return Setup(shape, Kind::kMatmulU8S8U8, state);
}
const char* SetupS8S8S8(const bench_shape* shape, const char*, void** state)
{
  return Setup(shape, Kind::kMatmulS8S8S8, state);
}
const char* SetupU8S8S32(const bench_shape* shape, const char*, void** state)
{
  return Setup(shape, Kind::kMatmulU8S8S32, state);
}
const char* SetupU8S8U8Fast(const bench_shape* shape, const char*, void** state)
{
  return Setup(shape, Kind::kMatmulU8S8U8Fast, state);
}
const char* SetupS8S8S8Fast(const bench_shape* shape, const char*, void** state)
{
  return Setup(shape, Kind::kMatmulS8S8S8Fast, state);
}
const char* SetupU8S8U8Common(const bench_shape* shape, const char*, void** state)
{
  return Setup(shape, Kind::kMatmulU8S8U8Common, state);
}
const char* SetupS8S8S8Common(const bench_shape* shape, const char*, void** state)
{
  return Setup(shape, Kind::kMatmulS8S8S8Common, state);
}
const char* SetupU8S8U8NoZp(const bench_shape* shape, const char*, void** state)
{
  return Setup(shape, Kind::kMatmulU8S8U8NoZp, state);
}
const char* SetupS8S8S8NoZp(const bench_shape* shape, const char*, void** state)
{
  return Setup(shape, Kind::kMatmulS8S8S8NoZp, state);
}

void Context(bench_context_fn add, void* ctx)
{
  const dnnl_version_t* v = dnnl_version();
  char text[256];
  std::snprintf(text, sizeof(text), "%d.%d.%d (%s), cpu runtime %s", v->major, v->minor,
                v->patch, v->hash,
                v->cpu_runtime == DNNL_RUNTIME_OMP   ? "OpenMP"
                : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB"
                : v->cpu_runtime == DNNL_RUNTIME_SEQ ? "sequential"
                                                     : "other");
  add(ctx, "onednn_version", text);
  add(ctx, "onednn_isa", IsaName(dnnl_get_effective_cpu_isa()));
  std::snprintf(text, sizeof(text), "%d (omp_get_max_threads)",
                omp_max_threads != nullptr ? omp_max_threads() : -1);
  add(ctx, "onednn_threads", text);
  // The implementation a typical shape gets (each benchmark's label has its own).
  std::string impls;
  for (Kind kind : {Kind::kMatmulU8S8U8, Kind::kMatmulS8S8S8, Kind::kMatmulU8S8S32}) {
    DnnlState probe;
    probe.kind = kind;
    probe.m = 3136;
    probe.n = 64;
    probe.k = 64;
    const bool s8 = kind == Kind::kMatmulS8S8S8;
    const bool s32 = kind == Kind::kMatmulU8S8S32;
    try {
      dnnl::primitive_attr attr;
      attr.set_zero_points(DNNL_ARG_SRC, 0, {s8 ? kS8AZp : kU8AZp});
      if (!s32) {
        attr.set_output_scales(1 << 1, std::vector<float>(64, 0.001f));
        attr.set_zero_points(DNNL_ARG_DST, 0, {s8 ? kS8CZp : kU8CZp});
      }
      const dnnl::matmul::desc desc(
          dnnl::memory::desc({probe.m, probe.k}, s8 ? dt::s8 : dt::u8, tag::ab),
          dnnl::memory::desc({probe.k, probe.n}, dt::s8, tag::any),
          dnnl::memory::desc({1, probe.n}, dt::s32, tag::ab),
          dnnl::memory::desc({probe.m, probe.n}, s32 ? dt::s32 : s8 ? dt::s8 : dt::u8,
                             tag::ab));
      if (engine == nullptr) throw dnnl::error(dnnl_runtime_error, "no engine");
      const dnnl::matmul::primitive_desc pd(desc, attr, *engine);
      impls += std::string(impls.empty() ? "" : "; ") +
               (s32 ? "u8s8s32 " : s8 ? "s8s8s8 " : "u8s8u8 ") + pd.impl_info_str();
    } catch (const dnnl::error& e) {
      impls += std::string(impls.empty() ? "" : "; ") + "error: " + e.what();
    }
  }
  add(ctx, "onednn_matmul_impl_64x3136x64", impls.c_str());
}

#else  // !GEMMI8_BENCH_HAVE_DNNL

void Init() {}
const char* Unavailable()
{
#if defined(GEMMI8_BENCH_DNNL_WRONG_VERSION)
  return "oneDNN found is not 2.x (this file uses the 2.x API)";
#else
  return "built without oneDNN (install libdnnl-dev, then rebuild: make bench)";
#endif
}
const char* SetupGemm(const bench_shape*, const char*, void**) { return Unavailable(); }
const char* SetupU8S8U8(const bench_shape*, const char*, void**) { return Unavailable(); }
const char* SetupS8S8S8(const bench_shape*, const char*, void**) { return Unavailable(); }
const char* SetupU8S8S32(const bench_shape*, const char*, void**) { return Unavailable(); }
const char* SetupU8S8U8Fast(const bench_shape*, const char*, void**) { return Unavailable(); }
const char* SetupS8S8S8Fast(const bench_shape*, const char*, void**) { return Unavailable(); }
const char* SetupU8S8U8Common(const bench_shape*, const char*, void**) { return Unavailable(); }
const char* SetupS8S8S8Common(const bench_shape*, const char*, void**) { return Unavailable(); }
const char* SetupU8S8U8NoZp(const bench_shape*, const char*, void**) { return Unavailable(); }
const char* SetupS8S8S8NoZp(const bench_shape*, const char*, void**) { return Unavailable(); }
const char* Run(void*) { return Unavailable(); }
const char* Prepare(void*) { return Unavailable(); }
void Teardown(void*) {}
const char* Label(const void*) { return ""; }
void Context(bench_context_fn add, void* ctx) { add(ctx, "onednn_isa", "(not built in)"); }

#endif

bench_case MakeCase(const char* variant,
                    const char* (*setup)(const bench_shape*, const char*, void**),
                    unsigned flags = 0) {
  bench_case c = {};
  c.library = "onednn";
  c.variant = variant;
  c.flags = flags;
  c.unavailable = Unavailable;
  c.setup = setup;
  c.prepare = Prepare;
  c.run = Run;
  c.teardown = Teardown;
  c.label = Label;
  return c;
}

}  // namespace

extern "C" {
const bench_case bench_onednn_gemm_u8s8s32 = MakeCase("gemm-u8s8s32", SetupGemm);
const bench_case bench_onednn_matmul_u8s8u8 =
    MakeCase("matmul-u8s8u8", SetupU8S8U8, BENCH_CASE_FC | BENCH_CASE_THREADS);
const bench_case bench_onednn_matmul_s8s8s8 =
    MakeCase("matmul-s8s8s8", SetupS8S8S8, BENCH_CASE_FC);
const bench_case bench_onednn_matmul_u8s8s32 = MakeCase("matmul-u8s8s32", SetupU8S8S32);
const bench_case bench_onednn_matmul_u8s8u8_fast =
    MakeCase("matmul-u8s8u8-fast", SetupU8S8U8Fast, BENCH_CASE_FC | BENCH_CASE_THREADS);
const bench_case bench_onednn_matmul_s8s8s8_fast =
    MakeCase("matmul-s8s8s8-fast", SetupS8S8S8Fast, BENCH_CASE_FC);
const bench_case bench_onednn_matmul_u8s8u8_pt = MakeCase("matmul-u8s8u8-pt", SetupU8S8U8Common);
const bench_case bench_onednn_matmul_s8s8s8_pt = MakeCase("matmul-s8s8s8-pt", SetupS8S8S8Common);
const bench_case bench_onednn_matmul_u8s8u8_nozp =
    MakeCase("matmul-u8s8u8-nozp", SetupU8S8U8NoZp);
const bench_case bench_onednn_matmul_s8s8s8_nozp =
    MakeCase("matmul-s8s8s8-nozp", SetupS8S8S8NoZp);
const bench_library bench_library_onednn = {"onednn", Init, Context};
}
