// gemmi8-llm-bench: oneDNN's int8 matmul with float output (Debian's oneDNN 2.x).
//
//   onednn/s8s8f32       src int8 with one scale and one zero point for the tensor
//                        (X quantized as one row by gemmi8_quantize_rows_s8: what a
//                        framework computes for it), int8 weights, output scales per
//                        channel (mask 2: src scale x weight scale), float bias, float
//                        dst: gemmi8/qd8's work, but with one src scale and zero point
//                        instead of one per row (oneDNN's matmul takes common src
//                        scales only): the per-row parameters are gemmi8's extra work.
//   onednn/u8s8f32       the same with uint8 src (gemmi8_quantize_rows_u8): gemmi8/qdu8's.
//   onednn/u8s8f32-fast  oneDNN's fastest configuration: uint8 src, no zero point (the
//                        src zero point folded into the bias in setup), one output
//                        scale for the tensor (src scale x the mean weight scale: a
//                        per-tensor weight scale, a different model), float bias.
// oneDNN 2.x adds the bias to the accumulator before it scales: the bias given is
// bias[n] / output_scale[n] (- zero point x column sum for -fast), folded in setup.
// Scales and zero points are given when the primitive is created, the most
// favourable case for oneDNN: a framework whose src scale changes every call would
// pass them at run time (DNNL_RUNTIME_F32_VAL), with which oneDNN 2.6 falls back to
// gemm:jit, about 10x slower on this machine. The quantization of the src is not
// timed (gemmi8/qd8 gets its rows quantized too; gemmi8/qd8-linear times it).
//
// Weights: format_tag::any, reordered once per layout the primitives ask for (a
// layer's cells share them). Threads: oneDNN's OpenMP runtime, omp_set_num_threads
// (found at run time, as bench/cases-onednn.cc does) with the cell's thread count
// before the primitive is created and before each timed slice. Each cell's label
// is the implementation oneDNN picked (DNNL_MAX_CPU_ISA=AVX512_CORE_VNNI keeps it off
// AMX).
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include <gemmi8.h>

#include "llm.h"

#include "../cases.h"

#if GEMMI8_BENCH_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#if DNNL_VERSION_MAJOR != 2
#undef GEMMI8_BENCH_HAVE_DNNL
#define GEMMI8_BENCH_HAVE_DNNL 0
#define GEMMI8_BENCH_DNNL_WRONG_VERSION 1
#endif
#endif

namespace {

enum class Kind { kS8, kU8, kU8Fast };

#if GEMMI8_BENCH_HAVE_DNNL

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dnnl::engine* engine = nullptr;
dnnl::stream* stream = nullptr;
std::string init_error;
bool initialized = false;
void (*omp_set_threads)(int) = nullptr;
int (*omp_max_threads)() = nullptr;

void Init()
{
  if (initialized) return;
  initialized = true;
  omp_set_threads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  omp_max_threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  try {
    engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
    stream = new dnnl::stream(*engine);
  } catch (const dnnl::error& e) {
    init_error = std::string("oneDNN engine: ") + e.what();
  }
}

const char* Unavailable()
{
  Init();
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

const char* SetThreads(int threads)
{
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
  omp_set_threads(threads);
  if (omp_max_threads() != threads) return "cannot set oneDNN's OpenMP thread count";
#elif DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_SEQ
  if (threads != 1) return "oneDNN built sequential: one thread only";
#endif
  return nullptr;
}

// A layer's weights in each layout a primitive asked for.
struct Weights {
  const llm_layer* layer = nullptr;
  std::vector<std::pair<dnnl::memory::desc, dnnl::memory>> layouts;
  std::vector<void*> buffers;
  size_t bytes = 0;  // the first layout's

  ~Weights()
  {
    layouts.clear();
    for (void* p : buffers) bench_free(p);
  }

  // The weights in the layout md, reordered on first use (64-byte aligned).
  dnnl::memory Get(const dnnl::memory::desc& md)
  {
    for (auto& entry : layouts) {
      if (entry.first == md) return entry.second;
    }
    void* buffer = bench_alloc(md.get_size());
    if (buffer == nullptr) throw std::bad_alloc();
    buffers.push_back(buffer);
    const dnnl::memory::desc user_md({static_cast<int64_t>(layer->k), static_cast<int64_t>(layer->n)},
                                     dt::s8, tag::ba);  // N x K in memory
    dnnl::memory user(user_md, *engine, const_cast<int8_t*>(layer->b));
    dnnl::memory packed(md, *engine, buffer);
    dnnl::reorder(user, packed).execute(*stream, user, packed);
    stream->wait();
    if (layouts.empty()) bytes = md.get_size();
    layouts.emplace_back(md, packed);
    return packed;
  }
};

struct Cell {
  Kind kind = Kind::kS8;
  const llm_cell* cell = nullptr;
  void* src = nullptr;  // M x K, quantized per tensor
  float src_scale = 0;
  int32_t src_zp = 0;
  std::vector<float> out_scale;  // per channel, or one
  float* bias = nullptr;         // N, folded as above
  dnnl::matmul matmul;
  std::unordered_map<int, dnnl::memory> args;
  std::string impl;
};

const char* Pack(const llm_layer* layer, void** packed)
{
  auto* w = new (std::nothrow) Weights;
  if (w == nullptr) return "out of memory";
  w->layer = layer;
  *packed = w;
  return nullptr;
}

void Unpack(void* packed) { delete static_cast<Weights*>(packed); }

double WeightBytes(const void* packed) { return static_cast<double>(static_cast<const Weights*>(packed)->bytes); }

void Teardown(void* opaque)
{
  auto* s = static_cast<Cell*>(opaque);
  if (s == nullptr) return;
  s->args.clear();
  s->matmul = dnnl::matmul();
  bench_free(s->src);
  bench_free(s->bias);
  delete s;
}

const char* Prepare(void* opaque) { return SetThreads(static_cast<Cell*>(opaque)->cell->threads); }

const char* Run(void* opaque)
{
  auto* s = static_cast<Cell*>(opaque);
  try {
    s->matmul.execute(*stream, s->args);
    stream->wait();
  } catch (const dnnl::error& e) {
    return bench_error("matmul execute: %s", e.what());
  }
  return nullptr;
}

const char* Label(const void* opaque) { return static_cast<const Cell*>(opaque)->impl.c_str(); }

// Reference: (a - zp) * b * output scale + the bias the layer means (unfolded).
double Term(const void* ctx, size_t m, size_t n, size_t k)
{
  const auto* s = static_cast<const Cell*>(ctx);
  const llm_layer* l = s->cell->layer;
  const size_t i = m * l->k + k;
  const double a = s->kind == Kind::kS8 ? static_cast<const int8_t*>(s->src)[i]
                                        : static_cast<const uint8_t*>(s->src)[i];
  const double scale = s->out_scale.size() == 1 ? s->out_scale[0] : s->out_scale[n];
  return (a - s->src_zp) * l->b[n * l->k + k] * scale;
}
double Bias(const void* ctx, size_t n) { return static_cast<const Cell*>(ctx)->cell->layer->bias[n]; }

const char* Setup(const llm_cell* cell, Weights* w, Kind kind, const char* name, void** state)
{
  if (const char* why = Unavailable()) return why;
  if (const char* why = SetThreads(cell->threads)) return why;
  const llm_layer* l = cell->layer;
  const size_t m = cell->m, n = l->n, k = l->k;
  auto* s = new (std::nothrow) Cell;
  if (s == nullptr) return "out of memory";
  s->kind = kind;
  s->cell = cell;
  s->src = bench_alloc(bench_mul(m, k));
  s->bias = static_cast<float*>(bench_alloc(bench_mul(n, sizeof(float))));
  if (s->src == nullptr || s->bias == nullptr) {
    Teardown(s);
    return "out of memory";
  }
  // X quantized as one row: one scale and zero point for the tensor.
  const gemmi8_status st =
      kind == Kind::kS8
          ? gemmi8_quantize_rows_s8(1, m * k, cell->rows->x, m * k, s->src, m * k, &s->src_scale, &s->src_zp)
          : gemmi8_quantize_rows_u8(1, m * k, cell->rows->x, m * k, s->src, m * k, &s->src_scale, &s->src_zp);
  if (st != gemmi8_status_success) {
    Teardown(s);
    return bench_error("gemmi8_quantize_rows: %s", gemmi8_status_string(st));
  }
  const bool fast = kind == Kind::kU8Fast;
  if (fast) {
    double mean = 0;
    for (size_t j = 0; j < n; j++) mean += l->b_scale[j];
    s->out_scale.assign(1, static_cast<float>(s->src_scale * (mean / static_cast<double>(n))));
  } else {
    s->out_scale.resize(n);
    for (size_t j = 0; j < n; j++) s->out_scale[j] = s->src_scale * l->b_scale[j];
  }
  for (size_t j = 0; j < n; j++) {
    const double scale = s->out_scale.size() == 1 ? s->out_scale[0] : s->out_scale[j];
    double folded = l->bias[j] / scale;
    if (fast) {
      int64_t col_sum = 0;
      for (size_t kk = 0; kk < k; kk++) col_sum += l->b[j * k + kk];
      folded -= static_cast<double>(s->src_zp) * static_cast<double>(col_sum);
    }
    s->bias[j] = static_cast<float>(folded);
  }
  try {
    const int64_t M = static_cast<int64_t>(m), N = static_cast<int64_t>(n), K = static_cast<int64_t>(k);
    const dnnl::memory::desc src_md({M, K}, kind == Kind::kS8 ? dt::s8 : dt::u8, tag::ab);
    const dnnl::memory::desc w_any({K, N}, dt::s8, tag::any);
    const dnnl::memory::desc bias_md({1, N}, dt::f32, tag::ab);
    const dnnl::memory::desc dst_md({M, N}, dt::f32, tag::ab);
    dnnl::primitive_attr attr;
    attr.set_output_scales(fast ? 0 : 1 << 1, s->out_scale);
    if (!fast) attr.set_zero_points(DNNL_ARG_SRC, 0, {s->src_zp});
    const dnnl::matmul::desc desc(src_md, w_any, bias_md, dst_md);
    const dnnl::matmul::primitive_desc pd(desc, attr, *engine);
    s->impl = pd.impl_info_str();
    s->matmul = dnnl::matmul(pd);
    s->args[DNNL_ARG_SRC] = dnnl::memory(pd.src_desc(), *engine, s->src);
    s->args[DNNL_ARG_WEIGHTS] = w->Get(pd.weights_desc());
    s->args[DNNL_ARG_BIAS] = dnnl::memory(pd.bias_desc(), *engine, s->bias);
    s->args[DNNL_ARG_DST] = dnnl::memory(pd.dst_desc(), *engine, cell->c);
  } catch (const std::bad_alloc&) {
    Teardown(s);
    return "out of memory";
  } catch (const dnnl::error& e) {
    Teardown(s);
    return bench_error("matmul primitive: %s", e.what());
  }
  const char* err = Run(s);
  const llm_reference ref = {s, Term, Bias};
  if (err == nullptr) err = llm_check(name, cell, cell->c, &ref);
  if (err != nullptr) {
    std::string msg = std::string(err) + " (" + s->impl + ")";
    Teardown(s);
    return bench_error("%s", msg.c_str());
  }
  *state = s;
  return nullptr;
}

#else  // !GEMMI8_BENCH_HAVE_DNNL

struct Weights {};
const char* Unavailable()
{
#if defined(GEMMI8_BENCH_DNNL_WRONG_VERSION)
  return "oneDNN found is not 2.x (this file uses the 2.x API)";
#else
  return "built without oneDNN (install libdnnl-dev, then rebuild: make bench-llm)";
#endif
}
const char* Pack(const llm_layer*, void**) { return Unavailable(); }
void Unpack(void*) {}
double WeightBytes(const void*) { return 0; }
const char* Setup(const llm_cell*, Weights*, Kind, const char*, void**) { return Unavailable(); }
const char* Prepare(void*) { return Unavailable(); }
const char* Run(void*) { return Unavailable(); }
void Teardown(void*) {}
const char* Label(const void*) { return ""; }

#endif

const char* SetupS8(const llm_cell* cell, void* packed, void** state)
{
  return Setup(cell, static_cast<Weights*>(packed), Kind::kS8, "onednn/s8s8f32", state);
}
const char* SetupU8(const llm_cell* cell, void* packed, void** state)
{
  return Setup(cell, static_cast<Weights*>(packed), Kind::kU8, "onednn/u8s8f32", state);
}
const char* SetupU8Fast(const llm_cell* cell, void* packed, void** state)
{
  return Setup(cell, static_cast<Weights*>(packed), Kind::kU8Fast, "onednn/u8s8f32-fast", state);
}

llm_series MakeSeries(const char* name, const char* description,
                      const char* (*setup)(const llm_cell*, void*, void**),
                      const char* (*pack)(const llm_layer*, void**))
{
  llm_series s = {};
  s.name = name;
  s.library = "onednn";
  s.role = LLM_ROLE_PEER;
  s.weights = "int8";
  s.description = description;
  s.unavailable = Unavailable;
  s.pack = pack;
  s.unpack = Unpack;
  s.weight_bytes = WeightBytes;
  s.setup = setup;
  s.prepare = Prepare;
  s.run = Run;
  s.teardown = Teardown;
  s.label = Label;
  return s;
}

}  // namespace

extern "C" {
const llm_series llm_onednn_s8s8f32 = MakeSeries(
    "onednn/s8s8f32",
    "matmul: int8 src, one src scale and zero point for the tensor, output scales per "
    "channel, float bias and dst (gemmi8/qd8's work with per-tensor src parameters)",
    SetupS8, Pack);
const llm_series llm_onednn_u8s8f32 = MakeSeries(
    "onednn/u8s8f32", "matmul: the same with uint8 src (gemmi8/qdu8's work, per-tensor src)",
    SetupU8, Pack);
const llm_series llm_onednn_u8s8f32_fast = MakeSeries(
    "onednn/u8s8f32-fast",
    "matmul, its fastest configuration: uint8 src, no zero point, one output scale, "
    "float bias and dst",
    SetupU8Fast, Pack);

const char* llm_onednn_context(void)
{
#if GEMMI8_BENCH_HAVE_DNNL
  static char text[256];
  Init();
  const dnnl_version_t* v = dnnl_version();
  const char* isa = "?";
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_avx2: isa = "avx2"; break;
    case dnnl_cpu_isa_avx512_core: isa = "avx512_core"; break;
    case dnnl_cpu_isa_avx512_core_vnni: isa = "avx512_core_vnni"; break;
    case dnnl_cpu_isa_avx512_core_bf16: isa = "avx512_core_bf16"; break;
    case dnnl_cpu_isa_avx512_core_amx: isa = "avx512_core_amx"; break;
    case dnnl_cpu_isa_avx2_vnni: isa = "avx2_vnni"; break;
    default: break;
  }
  const char* max_isa = std::getenv("DNNL_MAX_CPU_ISA");
  std::snprintf(text, sizeof(text), "%d.%d.%d (%s), %s runtime, ISA %s%s%s", v->major, v->minor,
                v->patch, v->hash, v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other", isa,
                max_isa != nullptr ? ", DNNL_MAX_CPU_ISA=" : "", max_isa != nullptr ? max_isa : "");
  return text;
#else
  return Unavailable();
#endif
}
}
