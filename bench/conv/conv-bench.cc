// gemmi8-conv-bench: the convolution layers of ResNet-18, MobileNetV2 and MobileNetV3
// (bench/conv/layers.txt: 224 x 224, batch 1, NHWC, one thread) with gemmi8's convolution
// operators, gemmi8's own GEMM on an im2col copy of the layer, XNNPACK's convolution
// operators and oneDNN's int8 convolution primitive, all in one run.
//
// Cases (library/variant), and what each computes:
//   gemmi8/qu8          qu8: uint8 input (zero point 119) and weights (131), fp32 scale
//                       per tensor, uint8 output (128): XNNPACK qu8's work
//   gemmi8/qu8-fixedpoint  the same in TFLite's fixed-point rounding
//   gemmi8/qc8          qs8, int8 input (-7), int8 weights symmetric, fp32 scale per
//                       channel, int8 output (5): XNNPACK qc8's work
//   gemmi8/qs8          the same with one scale: XNNPACK qs8's work
//   gemmi8/qu8s8        uint8 input (119), int8 weights, fp32 scale per channel, uint8
//                       output (128): oneDNN u8s8u8's work (zero points, per-channel)
//   gemmi8/im2col-qu8s8 qu8s8 as an im2col copy of the input (timed, in the run) and
//                       gemmi8_qu8s8_gemm on it: what the indirection buffer saves
//                       (dense layers only)
//   xnnpack/qu8, xnnpack/qc8, xnnpack/qs8   xnn_create_convolution2d_nhwc_*, set up
//                       once, run with no thread pool
//   onednn/u8s8u8       convolution_forward, weights in the layout it picks (reordered
//                       once), source and destination zero points, per-channel scales
//   onednn/u8s8u8-fast  its fastest configuration: no zero points, one output scale
//   onednn/s8s8s8, onednn/s8s8s8-fast   the same with int8 input and output
//   gemmi8/bin-f32      binary layers only (kernel "<k>b" in layers.txt):
//                       gemmi8_bin_convolution_create, input and filter random bits
//                       (GEMMI8_BIN_WORDS(channels) words a pixel), one padding
//                       (GEMMI8_BIN_ONE_PADDING, LCE's default), float output
//                       acc * multiplier + bias (a folded batch norm, no clamp)
//   gemmi8/bin-bits     the same, bits output (packed for the next binary layer)
//   gemmi8/bin-f32-zeropad  bin-f32 with GEMMI8_BIN_ZERO_PADDING
//   peak/vpdpbusd-zmm   the register-only vpdpbusd loop (bench/cases-peak.c)
//   peak/vpopcntq-alone-zmm  a register-only loop of vpopcntq zmm alone (24 an
//                       iteration, 12 independent chains), counter Gbitmacs: 512
//                       bit-MACs an instruction, per second / 1e9
//   peak/xor-popcnt-add-zmm  the register-only loop of the binary multiply-accumulate,
//                       vpxorq + vpopcntq + vpaddq per 512 bits (bench/cases-peak.c's
//                       vpopcntq-zmm), counter Gbitmacs
//   peak/read-bw        a loop summing a 64-byte aligned buffer of 512 KiB (l2: it fits
//                       the L2 cache) and of 256 MiB (dram: far beyond the L3), counter
//                       GBps: what moving a layer's bytes costs at best
// Depthwise layers (kernel "<k>dw" in layers.txt: groups = channels, one input and one
// output channel a group) run every case but im2col-qu8s8, through the same operators:
// gemmi8's and XNNPACK's convolutions with groups = C, group_input_channels = 1,
// group_output_channels = 1 (XNNPACK picks its depthwise kernels for that), oneDNN's
// grouped convolution (weights G x 1 x 1 x k x k in the layout it picks).
// Binary layers run the bin-* cases only, and the dense cases no binary layer; a
// binary layer's counter Gbitmacs is its bit-MACs (output pixels x output channels x
// taps x input channels) per second / 1e9, its GOPS twice that.
// Each benchmark is <library>/<variant>/<network>/<layer>, with counters GOPS
// (2 * output pixels * output channels * taps * input channels of a group per second /
// 1e9) and, for gemmi8/qu8s8, ind_bytes, work_bytes and im2col_bytes: the indirection
// buffer's size (gemmi8_convolution_memory: a pointer per output pixel, rounded up to
// the tile, and tap; the 1x1 stride-1 layers have none, they run the GEMM on the
// input), the rest of the operator's setup memory (the padded input copy of merged
// rows) and what an im2col copy of the layer takes. A depthwise layer's benchmarks
// also count read_bytes (input and filter, read once) and write_bytes (output).
// Every case's first output is checked: gemmi8's qu8s8 and qc8 byte for byte against
// gemmi8's GEMM on the im2col copy of each group, gemmi8's depthwise qu8, qc8 and qs8
// byte for byte against XNNPACK's (the same data, the same fp32 arithmetic), the
// peers' and gemmi8's fp32 cases within 1 of a direct reference at every 7th pixel,
// the binary cases exactly (the float output bit for bit, the bits output and its
// padding bits) against a direct reference at every 7th pixel.
//
// Threads (the threads-under-load mode, bench/threads/load.sh): GEMMI8_BENCH_THREADS,
// a comma-separated list of thread counts, registers the threaded cases again at
// each count as <library>@<threads>/<variant>/<network>/<layer>, timed by wall clock,
// on the dense layers:
// gemmi8/qu8s8 on gemmi8's pool, on pthreadpool (qu8s8-pthreadpool) and on an OpenMP
// loop (qu8s8-openmp), xnnpack/qc8 on pthreadpool, onednn/u8s8u8 and u8s8u8-fast on
// OpenMP threads.
//
// Options: Google Benchmark's, and --layers=FILE (else $GEMMI8_BENCH_CONV_LAYERS,
// else bench/conv/layers.txt). bench/conv/report.py turns the JSON into tables.

#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "../cases.h"
#include "gemmi8.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if GEMMI8_BENCH_HAVE_XNNPACK
#include <pthreadpool.h>
#include <xnnpack.h>
#endif
#if GEMMI8_BENCH_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

extern "C" const bench_case bench_peak_vpdpbusd_zmm;
extern "C" const bench_case bench_peak_vpopcntq_zmm;

namespace {

struct Layer {
  std::string net, name;
  int count = 1;
  size_t k = 1, stride = 1, pad = 0, ih = 0, iw = 0, cin = 0, cout = 0;
  size_t groups = 1;  // cin for a depthwise layer, else 1
  bool binary = false;  // kernel "<k>b": a binary convolution (bits in, +1/-1 products)
  size_t oh = 0, ow = 0;
  bool Depthwise() const { return groups > 1; }
  size_t GroupIn() const { return cin / groups; }
  size_t GroupOut() const { return cout / groups; }
  double Ops() const { return 2.0 * oh * ow * cout * k * k * GroupIn(); }
  // a group's GEMM depth: taps x its input channels
  size_t Depth() const { return k * k * GroupIn(); }
  // what one run reads once (input, filter) and writes (output)
  size_t ReadBytes() const { return ih * iw * cin + cout * Depth(); }
  size_t WriteBytes() const { return oh * ow * cout; }
};

constexpr int32_t kU8AZp = 119, kU8BZp = 131, kU8CZp = 128;
constexpr int32_t kS8AZp = -7, kS8CZp = 5;

enum class Kind {
  kQu8, kQu8Fixed, kQc8, kQs8, kQu8s8, kIm2colQu8s8,
  kXnnQu8, kXnnQc8, kXnnQs8,
  kDnnlU8, kDnnlU8Fast, kDnnlS8, kDnnlS8Fast,
  kBinF32, kBinBits, kBinF32Zero,
};

bool Binary(Kind k) { return k == Kind::kBinF32 || k == Kind::kBinBits || k == Kind::kBinF32Zero; }

bool SignedInput(Kind k)
{
  return k == Kind::kQc8 || k == Kind::kQs8 || k == Kind::kXnnQc8 || k == Kind::kXnnQs8 ||
         k == Kind::kDnnlS8 || k == Kind::kDnnlS8Fast;
}
bool UnsignedWeights(Kind k) { return k == Kind::kQu8 || k == Kind::kQu8Fixed || k == Kind::kXnnQu8; }
bool PerChannel(Kind k)
{
  return k == Kind::kQc8 || k == Kind::kQu8s8 || k == Kind::kIm2colQu8s8 || k == Kind::kXnnQc8 ||
         k == Kind::kDnnlU8 || k == Kind::kDnnlS8;
}
bool Fast(Kind k) { return k == Kind::kDnnlU8Fast || k == Kind::kDnnlS8Fast; }

// One layer's data, made once per (layer, signedness) from a fixed seed.
struct Data {
  std::vector<uint8_t> weights;  // cout x k x k x cin (OHWI)
  std::vector<int32_t> bias;
  std::vector<float> scale;      // cout (per channel) or 1
  int32_t a_zp = 0, b_zp = 0, c_zp = 0, lo = 0, hi = 255;
};

struct State {
  Kind kind;
  const Layer* layer = nullptr;
  Data d;
  uint8_t* input = nullptr;
  uint8_t* output = nullptr;
  uint8_t* columns = nullptr;  // im2col
  gemmi8_convolution* op = nullptr;
  void* packed = nullptr;
  gemmi8_requant rq = {};
  std::vector<int32_t> mult, shift;
#if GEMMI8_BENCH_HAVE_XNNPACK
  xnn_operator_t xop = nullptr;
#endif
#if GEMMI8_BENCH_HAVE_DNNL
  dnnl::convolution_forward conv;
  std::unordered_map<int, dnnl::memory> args;
  void* dnnl_weights = nullptr;
  void* dnnl_bias = nullptr;
#endif
  // binary cases: the filter (cout x k x k taps of GEMMI8_BIN_WORDS(cin) words), the
  // folded batch norm (a multiplier and a bias per output channel); input holds the
  // input's words, output the floats or words
  std::vector<uint64_t> bin_weights;
  std::vector<float> bin_mult, bin_bias;
  std::string impl;
  int threads = 0;  // 0: the single-thread cases; else the threaded runs' count
  gemmi8_parallel par = {};
  const gemmi8_parallel* parallel = nullptr;
#if GEMMI8_BENCH_HAVE_XNNPACK
  pthreadpool_t xpool = nullptr;
#endif
};

#if GEMMI8_BENCH_HAVE_DNNL
void (*omp_set_threads)(int) = nullptr;
dnnl::engine* engine = nullptr;
dnnl::stream* stream = nullptr;
#endif

void MakeData(const Layer& L, Kind kind, bench_rng* rng, Data* d)
{
  const bool s8 = SignedInput(kind), u8w = UnsignedWeights(kind);
  const size_t kdepth = L.Depth();
  d->weights.resize(L.cout * kdepth);
  if (u8w) {
    bench_fill_u8(rng, d->weights.data(), d->weights.size());
  } else {
    bench_fill_s8(rng, reinterpret_cast<int8_t*>(d->weights.data()), d->weights.size(), -127, 127);
  }
  d->bias.resize(L.cout);
  for (auto& b : d->bias) b = bench_rng_int(rng, -20000, 20000);
  const double base = bench_requant_scale(
      kdepth, s8 ? bench_uniform_sd(-128, 127) : bench_uniform_sd(0, 255),
      u8w ? bench_uniform_sd(0, 255) : bench_uniform_sd(-127, 127));
  d->scale.resize(PerChannel(kind) ? L.cout : 1);
  for (auto& s : d->scale) s = static_cast<float>(PerChannel(kind) ? base * bench_rng_real(rng, 0.5, 1.5) : base);
  d->a_zp = Fast(kind) ? 0 : (s8 ? kS8AZp : kU8AZp);
  d->b_zp = u8w ? kU8BZp : 0;
  d->c_zp = Fast(kind) ? 0 : (s8 ? kS8CZp : kU8CZp);
  d->lo = s8 ? -128 : 0;
  d->hi = s8 ? 127 : 255;
}

// The accumulator of output pixel (oy, ox), channel o, from the definition: the input
// channels of o's group.
int64_t RefAcc(const Layer& L, const Data& d, bool s8_in, bool u8_w, const uint8_t* in, size_t oy,
               size_t ox, size_t o)
{
  const size_t ci = L.GroupIn(), first = o / L.GroupOut() * ci;
  int64_t sum = d.bias[o];
  for (size_t y = 0; y < L.k; y++) {
    for (size_t x = 0; x < L.k; x++) {
      const long iy = static_cast<long>(oy * L.stride + y) - static_cast<long>(L.pad);
      const long ix = static_cast<long>(ox * L.stride + x) - static_cast<long>(L.pad);
      const bool inside = iy >= 0 && iy < static_cast<long>(L.ih) && ix >= 0 && ix < static_cast<long>(L.iw);
      for (size_t c = 0; c < ci; c++) {
        int32_t a = d.a_zp;
        if (inside) {
          const uint8_t v = in[(iy * L.iw + ix) * L.cin + first + c];
          a = s8_in ? static_cast<int8_t>(v) : v;
        }
        const uint8_t wv = d.weights[((o * L.k + y) * L.k + x) * ci + c];
        const int32_t w = u8_w ? static_cast<int32_t>(wv) : static_cast<int8_t>(wv);
        sum += static_cast<int64_t>(a - d.a_zp) * (w - d.b_zp);
      }
    }
  }
  return sum;
}

// Peers: every 7th pixel within 1 of round(acc * scale) + zp, clamped.
const char* CheckNear(const State* s)
{
  const Layer& L = *s->layer;
  const bool s8 = SignedInput(s->kind), u8w = UnsignedWeights(s->kind);
  for (size_t p = 0; p < L.oh * L.ow; p += 7) {
    for (size_t o = 0; o < L.cout; o++) {
      const int64_t acc = RefAcc(L, s->d, s8, u8w, s->input, p / L.ow, p % L.ow, o);
      const double scale = s->d.scale[s->d.scale.size() > 1 ? o : 0];
      double r = std::nearbyint(static_cast<double>(acc) * scale) + s->d.c_zp;
      r = std::fmin(std::fmax(r, s->d.lo), s->d.hi);
      const uint8_t byte = s->output[p * L.cout + o];
      const int32_t got = s8 ? static_cast<int8_t>(byte) : byte;
      if (std::fabs(got - r) > 1.0) {
        return bench_error("pixel %zu channel %zu: %d, reference %.0f", p, o, got, r);
      }
    }
  }
  return nullptr;
}

// The im2col copy of group g's input channels: pixel rows of k * k * ci bytes (padding:
// a_zp).
void Im2col(const Layer& L, const uint8_t* in, uint8_t a_zp, size_t g, uint8_t* out)
{
  const size_t ci = L.GroupIn();
  const size_t depth = L.Depth();
  for (size_t oy = 0; oy < L.oh; oy++) {
    for (size_t ox = 0; ox < L.ow; ox++) {
      uint8_t* row = out + (oy * L.ow + ox) * depth;
      for (size_t y = 0; y < L.k; y++) {
        const long iy = static_cast<long>(oy * L.stride + y) - static_cast<long>(L.pad);
        for (size_t x = 0; x < L.k; x++) {
          const long ix = static_cast<long>(ox * L.stride + x) - static_cast<long>(L.pad);
          uint8_t* dst = row + (y * L.k + x) * ci;
          if (iy < 0 || iy >= static_cast<long>(L.ih) || ix < 0 || ix >= static_cast<long>(L.iw)) {
            std::memset(dst, a_zp, ci);
          } else {
            std::memcpy(dst, in + (iy * L.iw + ix) * L.cin + g * ci, ci);
          }
        }
      }
    }
  }
}

const char* RunState(State* s)
{
  const Layer& L = *s->layer;
  switch (s->kind) {
    case Kind::kIm2colQu8s8: {
      Im2col(L, s->input, static_cast<uint8_t>(s->d.a_zp), 0, s->columns);
      const gemmi8_status st = gemmi8_qu8s8_gemm(L.oh * L.ow, L.cout, L.Depth(), s->columns,
                                                 L.Depth(), s->packed, &s->rq, s->output, L.cout);
      return st == gemmi8_status_success ? nullptr : gemmi8_status_string(st);
    }
    case Kind::kQu8: case Kind::kQu8Fixed: case Kind::kQc8: case Kind::kQs8: case Kind::kQu8s8:
    case Kind::kBinF32: case Kind::kBinBits: case Kind::kBinF32Zero: {
      const gemmi8_status st = gemmi8_convolution_run(s->op, s->parallel);
      return st == gemmi8_status_success ? nullptr : gemmi8_status_string(st);
    }
#if GEMMI8_BENCH_HAVE_XNNPACK
    case Kind::kXnnQu8: case Kind::kXnnQc8: case Kind::kXnnQs8: {
      const xnn_status st = xnn_run_operator(s->xop, s->xpool);
      return st == xnn_status_success ? nullptr : bench_error("xnn_run_operator: %d", (int) st);
    }
#endif
#if GEMMI8_BENCH_HAVE_DNNL
    case Kind::kDnnlU8: case Kind::kDnnlU8Fast: case Kind::kDnnlS8: case Kind::kDnnlS8Fast:
      try {
        if (omp_set_threads != nullptr) omp_set_threads(s->threads > 1 ? s->threads : 1);
        s->conv.execute(*stream, s->args);
        stream->wait();
      } catch (const dnnl::error& e) {
        return bench_error("convolution execute: %s", e.what());
      }
      return nullptr;
#endif
    default:
      return "not built";
  }
}

void Teardown(State* s)
{
  if (s == nullptr) return;
  gemmi8_convolution_destroy(s->op);
  gemmi8_packed_free(s->packed);
#if GEMMI8_BENCH_HAVE_XNNPACK
  if (s->xop != nullptr) xnn_delete_operator(s->xop);
#endif
#if GEMMI8_BENCH_HAVE_DNNL
  s->args.clear();
  s->conv = dnnl::convolution_forward();
  bench_free(s->dnnl_weights);
  bench_free(s->dnnl_bias);
#endif
  bench_free(s->input);
  bench_free(s->output);
  bench_free(s->columns);
  delete s;
}

const char* SetupGemmi8(State* s)
{
  const Layer& L = *s->layer;
  const Data& d = s->d;
  const bool fixed = s->kind == Kind::kQu8Fixed;
  const size_t channels = d.scale.size();
  s->rq.mode = fixed ? gemmi8_requant_fixedpoint : gemmi8_requant_fp32;
  s->rq.per_channel = channels > 1;
  if (fixed) {
    std::vector<double> scales(d.scale.begin(), d.scale.end());
    s->mult.resize(channels);
    s->shift.resize(channels);
    gemmi8_quantize_multipliers(channels, scales.data(), s->mult.data(), s->shift.data());
    s->rq.multiplier = s->mult.data();
    s->rq.shift = s->shift.data();
  }
  s->rq.scale = d.scale.data();
  s->rq.zero_point = d.c_zp;
  s->rq.min = d.lo;
  s->rq.max = d.hi;
  gemmi8_status st;
  if (s->kind == Kind::kIm2colQu8s8) {
    st = gemmi8_qu8s8_pack_alloc(L.cout, L.Depth(), reinterpret_cast<const int8_t*>(d.weights.data()),
                                 L.Depth(), GEMMI8_B_NK, static_cast<uint8_t>(d.a_zp), d.bias.data(),
                                 &s->packed);
    return st == gemmi8_status_success ? nullptr : gemmi8_status_string(st);
  }
  gemmi8_conv_geometry g = {};
  g.kernel_height = g.kernel_width = L.k;
  g.stride_height = g.stride_width = L.stride;
  g.dilation_height = g.dilation_width = 1;
  g.padding_top = g.padding_left = g.padding_bottom = g.padding_right = L.pad;
  g.groups = L.groups;
  g.group_input_channels = L.GroupIn();
  g.group_output_channels = L.GroupOut();
  const uint8_t b_zp = static_cast<uint8_t>(d.b_zp);
  switch (s->kind) {
    case Kind::kQu8: case Kind::kQu8Fixed:
      st = gemmi8_qu8_convolution_create(&g, d.weights.data(), static_cast<uint8_t>(d.a_zp), &b_zp, 0,
                                         d.bias.data(), &s->rq, &s->op);
      break;
    case Kind::kQu8s8:
      st = gemmi8_qu8s8_convolution_create(&g, reinterpret_cast<const int8_t*>(d.weights.data()),
                                           static_cast<uint8_t>(d.a_zp), d.bias.data(), &s->rq, &s->op);
      break;
    default:
      st = gemmi8_qs8_convolution_create(&g, reinterpret_cast<const int8_t*>(d.weights.data()),
                                         static_cast<int8_t>(d.a_zp), d.bias.data(), &s->rq, &s->op);
      break;
  }
  if (st != gemmi8_status_success) return gemmi8_status_string(st);
  size_t oh, ow;
  st = gemmi8_convolution_setup(s->op, 1, L.ih, L.iw, s->input, L.cin, s->output, L.cout, &oh, &ow);
  if (st != gemmi8_status_success) return gemmi8_status_string(st);
  if (oh != L.oh || ow != L.ow) return "output size differs";
  return nullptr;
}

// gemmi8's binary convolution (the bin-* cases): input and filter random bits from a
// fixed seed (the bits past the channels too: they must not count), per output channel
// a multiplier and a bias as a folded batch norm gives them (acc spreads about
// sqrt(depth) around 0), no clamp; one padding, or zero padding for bin-f32-zeropad.
const char* SetupBin(State* s)
{
  const Layer& L = *s->layer;
  const size_t wi = GEMMI8_BIN_WORDS(L.cin), wo = GEMMI8_BIN_WORDS(L.cout);
  const bool bits = s->kind == Kind::kBinBits;
  bench_shape salt = {L.cout, L.oh * L.ow, L.Depth()};
  bench_rng rng;
  bench_rng_seed(&rng, &salt, "conv-bin");
  s->bin_weights.resize(L.cout * L.k * L.k * wi);
  for (auto& w : s->bin_weights) w = bench_rng_next(&rng);
  const double sd = std::sqrt(static_cast<double>(L.Depth()));
  s->bin_mult.resize(L.cout);
  s->bin_bias.resize(L.cout);
  for (size_t o = 0; o < L.cout; o++) {
    s->bin_mult[o] = static_cast<float>(bench_rng_real(&rng, 0.5, 1.5) / sd);
    s->bin_bias[o] = static_cast<float>(bench_rng_real(&rng, -0.5, 0.5));
  }
  const size_t in_words = L.ih * L.iw * wi;
  const size_t out_bytes = L.oh * L.ow * (bits ? wo * sizeof(uint64_t) : L.cout * sizeof(float));
  s->input = static_cast<uint8_t*>(bench_alloc(in_words * sizeof(uint64_t)));
  s->output = static_cast<uint8_t*>(bench_alloc(out_bytes));
  if (s->input == nullptr || s->output == nullptr) return "out of memory";
  uint64_t* in = reinterpret_cast<uint64_t*>(s->input);
  for (size_t i = 0; i < in_words; i++) in[i] = bench_rng_next(&rng);
  gemmi8_conv_geometry g = {};
  g.kernel_height = g.kernel_width = L.k;
  g.stride_height = g.stride_width = L.stride;
  g.dilation_height = g.dilation_width = 1;
  g.padding_top = g.padding_left = g.padding_bottom = g.padding_right = L.pad;
  g.groups = 1;
  g.group_input_channels = L.cin;
  g.group_output_channels = L.cout;
  gemmi8_bin_conv_output out = {};
  out.kind = bits ? gemmi8_bin_output_bits : gemmi8_bin_output_f32;
  out.multiplier = s->bin_mult.data();
  out.bias = s->bin_bias.data();
  out.output_min = -INFINITY;
  out.output_max = INFINITY;
  const uint32_t flags = s->kind == Kind::kBinF32Zero ? GEMMI8_BIN_ZERO_PADDING : GEMMI8_BIN_ONE_PADDING;
  gemmi8_status st = gemmi8_bin_convolution_create(&g, s->bin_weights.data(), flags, &out, &s->op);
  if (st != gemmi8_status_success) return gemmi8_status_string(st);
  size_t oh, ow;
  st = gemmi8_convolution_setup(s->op, 1, L.ih, L.iw, s->input, wi, s->output, bits ? wo : L.cout, &oh, &ow);
  if (st != gemmi8_status_success) return gemmi8_status_string(st);
  if (oh != L.oh || ow != L.ow) return "output size differs";
  return nullptr;
}

// The binary cases against the definition at every 7th output pixel: acc, the sum of
// the +1/-1 products of the taps (one padding: a tap in the padding holds +1 in every
// channel; zero padding: it adds nothing); the float output bit for bit as (float) acc
// * multiplier + bias, each operation rounded; the bits output (set where that is
// negative) word for word, the bits past the channels 0.
const char* CheckBin(const State* s)
{
  const Layer& L = *s->layer;
  const size_t wi = GEMMI8_BIN_WORDS(L.cin), wo = GEMMI8_BIN_WORDS(L.cout);
  const bool bits = s->kind == Kind::kBinBits, zero = s->kind == Kind::kBinF32Zero;
  const uint64_t* in = reinterpret_cast<const uint64_t*>(s->input);
  std::vector<uint64_t> want(wo);
  for (size_t p = 0; p < L.oh * L.ow; p += 7) {
    std::fill(want.begin(), want.end(), 0);
    for (size_t o = 0; o < L.cout; o++) {
      int64_t acc = 0;
      for (size_t y = 0; y < L.k; y++) {
        for (size_t x = 0; x < L.k; x++) {
          const long iy = static_cast<long>(p / L.ow * L.stride + y) - static_cast<long>(L.pad);
          const long ix = static_cast<long>(p % L.ow * L.stride + x) - static_cast<long>(L.pad);
          const bool inside = iy >= 0 && iy < static_cast<long>(L.ih) && ix >= 0 && ix < static_cast<long>(L.iw);
          if (!inside && zero) continue;
          const uint64_t* w = s->bin_weights.data() + ((o * L.k + y) * L.k + x) * wi;
          for (size_t j = 0; j < wi; j++) {
            const size_t n = std::min<size_t>(64, L.cin - 64 * j);
            const uint64_t mask = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
            const uint64_t a = inside ? in[(iy * L.iw + ix) * wi + j] : 0;
            acc += static_cast<int64_t>(n) - 2 * __builtin_popcountll((a ^ w[j]) & mask);
          }
        }
      }
      float r = static_cast<float>(acc) * s->bin_mult[o];
      r = r + s->bin_bias[o];
      if (bits) {
        if (r < 0.0f) want[o / 64] |= uint64_t{1} << (o % 64);
        continue;
      }
      const float got = reinterpret_cast<const float*>(s->output)[p * L.cout + o];
      if (std::memcmp(&got, &r, sizeof(r)) != 0) {
        return bench_error("pixel %zu channel %zu: %.9g, reference %.9g (acc %lld)", p, o, got, r,
                           static_cast<long long>(acc));
      }
    }
    if (bits) {
      const uint64_t* got = reinterpret_cast<const uint64_t*>(s->output) + p * wo;
      for (size_t j = 0; j < wo; j++) {
        if (got[j] != want[j]) {
          return bench_error("pixel %zu word %zu: %016llx, reference %016llx", p, j,
                             static_cast<unsigned long long>(got[j]), static_cast<unsigned long long>(want[j]));
        }
      }
    }
  }
  return nullptr;
}

#if GEMMI8_BENCH_HAVE_XNNPACK
const char* SetupXnn(State* s)
{
  static xnn_status init = xnn_initialize(nullptr);
  if (init != xnn_status_success) return "xnn_initialize failed";
  const Layer& L = *s->layer;
  const Data& d = s->d;
  const uint32_t k = static_cast<uint32_t>(L.k), st_ = static_cast<uint32_t>(L.stride),
                 p = static_cast<uint32_t>(L.pad), g = static_cast<uint32_t>(L.groups);
  const size_t ci = L.GroupIn(), co = L.GroupOut();
  xnn_status st;
  if (s->kind == Kind::kXnnQu8) {
    st = xnn_create_convolution2d_nhwc_qu8(p, p, p, p, k, k, st_, st_, 1, 1, g, ci, co, L.cin,
                                           L.cout, static_cast<uint8_t>(d.a_zp), 1.0f,
                                           static_cast<uint8_t>(d.b_zp), d.scale[0], d.weights.data(),
                                           d.bias.data(), static_cast<uint8_t>(d.c_zp), 1.0f, 0, 255, 0,
                                           &s->xop);
    if (st == xnn_status_success) {
      st = xnn_setup_convolution2d_nhwc_qu8(s->xop, 1, L.ih, L.iw, s->input, s->output, s->xpool);
    }
  } else if (s->kind == Kind::kXnnQc8) {
    st = xnn_create_convolution2d_nhwc_qc8(p, p, p, p, k, k, st_, st_, 1, 1, g, ci, co, L.cin,
                                           L.cout, static_cast<int8_t>(d.a_zp), 1.0f, d.scale.data(),
                                           reinterpret_cast<const int8_t*>(d.weights.data()),
                                           d.bias.data(), static_cast<int8_t>(d.c_zp), 1.0f, -128,
                                           127, 0, &s->xop);
    if (st == xnn_status_success) {
      st = xnn_setup_convolution2d_nhwc_qc8(s->xop, 1, L.ih, L.iw, reinterpret_cast<const int8_t*>(s->input),
                                            reinterpret_cast<int8_t*>(s->output), s->xpool);
    }
  } else {
    st = xnn_create_convolution2d_nhwc_qs8(p, p, p, p, k, k, st_, st_, 1, 1, g, ci, co, L.cin,
                                           L.cout, static_cast<int8_t>(d.a_zp), 1.0f, d.scale[0],
                                           reinterpret_cast<const int8_t*>(d.weights.data()),
                                           d.bias.data(), static_cast<int8_t>(d.c_zp), 1.0f, -128,
                                           127, 0, &s->xop);
    if (st == xnn_status_success) {
      st = xnn_setup_convolution2d_nhwc_qs8(s->xop, 1, L.ih, L.iw, reinterpret_cast<const int8_t*>(s->input),
                                            reinterpret_cast<int8_t*>(s->output), s->xpool);
    }
  }
  return st == xnn_status_success ? nullptr : bench_error("XNNPACK convolution: status %d", (int) st);
}
#endif

#if GEMMI8_BENCH_HAVE_DNNL
const char* SetupDnnl(State* s)
{
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  if (engine == nullptr) {
    omp_set_threads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    if (omp_set_threads != nullptr) omp_set_threads(1);
    engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
    stream = new dnnl::stream(*engine);
  }
  if (omp_set_threads != nullptr) omp_set_threads(s->threads > 1 ? s->threads : 1);
  const Layer& L = *s->layer;
  const Data& d = s->d;
  const bool s8 = SignedInput(s->kind);
  const auto n = static_cast<dnnl::memory::dim>(1);
  const auto ci = static_cast<dnnl::memory::dim>(L.cin), co = static_cast<dnnl::memory::dim>(L.cout);
  const auto k = static_cast<dnnl::memory::dim>(L.k);
  const auto st_ = static_cast<dnnl::memory::dim>(L.stride), p = static_cast<dnnl::memory::dim>(L.pad);
  try {
    const dnnl::memory::desc src_md({n, ci, (dnnl::memory::dim) L.ih, (dnnl::memory::dim) L.iw},
                                    s8 ? dt::s8 : dt::u8, tag::nhwc);
    // a grouped layer's weights: groups x co x ci x k x k, given as OHWI per group
    const auto g = static_cast<dnnl::memory::dim>(L.groups);
    const dnnl::memory::dims w_dims =
        L.groups == 1 ? dnnl::memory::dims{co, ci, k, k} : dnnl::memory::dims{g, co / g, ci / g, k, k};
    const dnnl::memory::desc w_any(w_dims, dt::s8, tag::any);
    const dnnl::memory::desc w_user(w_dims, dt::s8, L.groups == 1 ? tag::ohwi : tag::gohwi);
    const dnnl::memory::desc bias_md({co}, dt::s32, tag::x);
    const dnnl::memory::desc dst_md({n, co, (dnnl::memory::dim) L.oh, (dnnl::memory::dim) L.ow},
                                    s8 ? dt::s8 : dt::u8, tag::nhwc);
    dnnl::primitive_attr attr;
    if (Fast(s->kind)) {
      attr.set_output_scales(0, {d.scale[0]});
    } else {
      attr.set_output_scales(1 << 1, d.scale);
      attr.set_zero_points(DNNL_ARG_SRC, 0, {d.a_zp});
      attr.set_zero_points(DNNL_ARG_DST, 0, {d.c_zp});
    }
    const dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md, w_any, bias_md,
        dst_md, {st_, st_}, {p, p}, {p, p});
    const dnnl::convolution_forward::primitive_desc pd(desc, attr, *engine);
    s->impl = pd.impl_info_str();
    s->conv = dnnl::convolution_forward(pd);
    const dnnl::memory::desc w_md = pd.weights_desc();
    s->dnnl_weights = bench_alloc(w_md.get_size());
    dnnl::memory wu(w_user, *engine, const_cast<uint8_t*>(d.weights.data()));
    dnnl::memory wp(w_md, *engine, s->dnnl_weights);
    dnnl::reorder(wu, wp).execute(*stream, wu, wp);
    stream->wait();
    s->args[DNNL_ARG_SRC] = dnnl::memory(pd.src_desc(), *engine, s->input);
    s->args[DNNL_ARG_WEIGHTS] = wp;
    s->dnnl_bias = bench_alloc(d.bias.size() * sizeof(int32_t));
    std::memcpy(s->dnnl_bias, d.bias.data(), d.bias.size() * sizeof(int32_t));
    s->args[DNNL_ARG_BIAS] = dnnl::memory(pd.bias_desc(), *engine, s->dnnl_bias);
    s->args[DNNL_ARG_DST] = dnnl::memory(pd.dst_desc(), *engine, s->output);
  } catch (const dnnl::error& e) {
    return bench_error("oneDNN convolution: %s", e.what());
  }
  return nullptr;
}
#endif

// The threaded runs' parallel-for for gemmi8: its pool, pthreadpool or OpenMP.
const char* Gemmi8Parallel(State* s, int caller)
{
  if (s->threads <= 1) return nullptr;
  if (const char* err = bench_caller_parallel(caller, s->threads, &s->par)) return err;
  s->parallel = &s->par;
  return nullptr;
}

// gemmi8's qu8s8 and qc8 convolutions: byte for byte against gemmi8's GEMM on the im2col
// copy of each group (qc8: through qs8's GEMM), the group's output channels at their
// place in the output pixels.
const char* CheckGemm(const State* s)
{
  const Layer& L = *s->layer;
  const Data& d = s->d;
  const size_t pixels = L.oh * L.ow, depth = L.Depth(), co = L.GroupOut();
  std::vector<uint8_t> cols(pixels * depth), ref(pixels * L.cout);
  for (size_t g = 0; g < L.groups; g++) {
    Im2col(L, s->input, static_cast<uint8_t>(d.a_zp), g, cols.data());
    const int8_t* w = reinterpret_cast<const int8_t*>(d.weights.data()) + g * co * depth;
    gemmi8_requant rq = s->rq;
    if (rq.per_channel) rq.scale += g * co;
    void* packed = nullptr;
    gemmi8_status st;
    if (s->kind == Kind::kQu8s8) {
      st = gemmi8_qu8s8_pack_alloc(co, depth, w, depth, GEMMI8_B_NK, static_cast<uint8_t>(d.a_zp),
                                   d.bias.data() + g * co, &packed);
      if (st == gemmi8_status_success) {
        st = gemmi8_qu8s8_gemm(pixels, co, depth, cols.data(), depth, packed, &rq, ref.data() + g * co,
                               L.cout);
      }
    } else {
      st = gemmi8_qs8_pack_alloc(co, depth, w, depth, GEMMI8_B_NK, static_cast<int8_t>(d.a_zp),
                                 d.bias.data() + g * co, &packed);
      if (st == gemmi8_status_success) {
        st = gemmi8_qs8_gemm(pixels, co, depth, reinterpret_cast<const int8_t*>(cols.data()), depth, packed,
                             &rq, reinterpret_cast<int8_t*>(ref.data()) + g * co, L.cout);
      }
    }
    gemmi8_packed_free(packed);
    if (st != gemmi8_status_success) return gemmi8_status_string(st);
  }
  if (std::memcmp(ref.data(), s->output, ref.size()) != 0) {
    return "gemmi8 convolution differs from gemmi8's GEMM on im2col";
  }
  return nullptr;
}

const char* Setup(const Layer* L, Kind kind, int threads, int caller, State** out);

// gemmi8's depthwise qu8, qc8 and qs8 (fp32 requantization): byte for byte against
// XNNPACK's operator of the same name, which gets the same data (the same seed, the
// same zero points and scales) and does the same arithmetic, float(acc) * scale rounded
// to nearest even. When XNNPACK is not built in or fails its own setup there is
// nothing to compare with (its case reports why).
const char* CheckXnn(const State* s)
{
#if GEMMI8_BENCH_HAVE_XNNPACK
  Kind twin;
  switch (s->kind) {
    case Kind::kQu8: twin = Kind::kXnnQu8; break;
    case Kind::kQc8: twin = Kind::kXnnQc8; break;
    case Kind::kQs8: twin = Kind::kXnnQs8; break;
    default: return nullptr;
  }
  const Layer& L = *s->layer;
  State* x = nullptr;
  if (Setup(&L, twin, 0, 0, &x) != nullptr) return nullptr;
  const char* err = nullptr;
  if (std::memcmp(x->input, s->input, L.ih * L.iw * L.cin) != 0 || x->d.weights != s->d.weights) {
    err = "XNNPACK's data differ from gemmi8's";
  } else {
    for (size_t i = 0; i < L.oh * L.ow * L.cout; i++) {
      if (x->output[i] != s->output[i]) {
        const bool s8 = SignedInput(s->kind);
        err = bench_error("gemmi8 differs from XNNPACK at pixel %zu channel %zu: %d, XNNPACK %d", i / L.cout,
                          i % L.cout, s8 ? static_cast<int8_t>(s->output[i]) : s->output[i],
                          s8 ? static_cast<int8_t>(x->output[i]) : x->output[i]);
        break;
      }
    }
  }
  Teardown(x);
  return err;
#else
  (void) s;
  return nullptr;
#endif
}

const char* Setup(const Layer* L, Kind kind, int threads, int caller, State** out)
{
  auto* s = new State;
  s->kind = kind;
  s->layer = L;
  s->threads = threads;
  if (const char* err = Gemmi8Parallel(s, caller)) {
    delete s;
    return err;
  }
#if GEMMI8_BENCH_HAVE_XNNPACK
  s->xpool = static_cast<pthreadpool_t>(bench_pthreadpool(threads));
#endif
  if (Binary(kind)) {
    const char* err = SetupBin(s);
    if (err == nullptr) err = RunState(s);
    if (err == nullptr) err = CheckBin(s);
    if (err != nullptr) {
      Teardown(s);
      return err;
    }
    *out = s;
    return nullptr;
  }
  bench_shape salt = {L->cout, L->oh * L->ow, L->Depth()};
  bench_rng rng;
  bench_rng_seed(&rng, &salt, SignedInput(kind) ? "conv-s8" : "conv-u8");
  MakeData(*L, kind, &rng, &s->d);
  const size_t in_bytes = L->ih * L->iw * L->cin, out_bytes = L->oh * L->ow * L->cout;
  s->input = static_cast<uint8_t*>(bench_alloc(in_bytes + 64));
  s->output = static_cast<uint8_t*>(bench_alloc(out_bytes + 64));
  if (SignedInput(kind)) {
    bench_fill_s8(&rng, reinterpret_cast<int8_t*>(s->input), in_bytes, -128, 127);
  } else {
    bench_fill_u8(&rng, s->input, in_bytes);
  }
  const char* err = nullptr;
  switch (kind) {
    case Kind::kIm2colQu8s8:
      s->columns = static_cast<uint8_t*>(bench_alloc(L->oh * L->ow * L->Depth()));
      err = SetupGemmi8(s);
      break;
    case Kind::kQu8: case Kind::kQu8Fixed: case Kind::kQc8: case Kind::kQs8: case Kind::kQu8s8:
      err = SetupGemmi8(s);
      break;
#if GEMMI8_BENCH_HAVE_XNNPACK
    case Kind::kXnnQu8: case Kind::kXnnQc8: case Kind::kXnnQs8:
      err = SetupXnn(s);
      break;
#endif
#if GEMMI8_BENCH_HAVE_DNNL
    case Kind::kDnnlU8: case Kind::kDnnlU8Fast: case Kind::kDnnlS8: case Kind::kDnnlS8Fast:
      err = SetupDnnl(s);
      break;
#endif
    default:
      err = "library not built in";
  }
  if (err == nullptr) err = RunState(s);
  if (err == nullptr) {
    if (kind == Kind::kQu8s8 || kind == Kind::kQc8) err = CheckGemm(s);
    if (err == nullptr && L->Depthwise() && threads == 0) err = CheckXnn(s);
    if (err == nullptr && kind != Kind::kQu8Fixed) err = CheckNear(s);
  }
  if (err != nullptr) {
    Teardown(s);
    return err;
  }
  *out = s;
  return nullptr;
}

struct Case {
  const char* library;
  const char* variant;
  Kind kind;
  int caller;  // gemmi8 on threads: BENCH_CALLER_* (its pool or a caller's parallel-for)
};

const Case kCases[] = {
    {"gemmi8", "qu8", Kind::kQu8, 0},
    {"gemmi8", "qu8-fixedpoint", Kind::kQu8Fixed, 0},
    {"gemmi8", "qc8", Kind::kQc8, 0},
    {"gemmi8", "qs8", Kind::kQs8, 0},
    {"gemmi8", "qu8s8", Kind::kQu8s8, 0},
    {"gemmi8", "im2col-qu8s8", Kind::kIm2colQu8s8, 0},
#if GEMMI8_BENCH_HAVE_XNNPACK
    {"xnnpack", "qu8", Kind::kXnnQu8, 0},
    {"xnnpack", "qc8", Kind::kXnnQc8, 0},
    {"xnnpack", "qs8", Kind::kXnnQs8, 0},
#endif
#if GEMMI8_BENCH_HAVE_DNNL
    {"onednn", "u8s8u8", Kind::kDnnlU8, 0},
    {"onednn", "u8s8u8-fast", Kind::kDnnlU8Fast, 0},
    {"onednn", "s8s8s8", Kind::kDnnlS8, 0},
    {"onednn", "s8s8s8-fast", Kind::kDnnlS8Fast, 0},
#endif
};

// The cases of the binary layers (kernel "<k>b").
const Case kBinCases[] = {
    {"gemmi8", "bin-f32", Kind::kBinF32, 0},
    {"gemmi8", "bin-bits", Kind::kBinBits, 0},
    {"gemmi8", "bin-f32-zeropad", Kind::kBinF32Zero, 0},
};

// The cases of the threaded runs (GEMMI8_BENCH_THREADS).
const Case kThreadedCases[] = {
    {"gemmi8", "qu8s8", Kind::kQu8s8, BENCH_CALLER_GEMMI8_POOL},
    {"gemmi8", "qu8s8-pthreadpool", Kind::kQu8s8, BENCH_CALLER_PTHREADPOOL},
    {"gemmi8", "qu8s8-openmp", Kind::kQu8s8, BENCH_CALLER_OPENMP},
#if GEMMI8_BENCH_HAVE_XNNPACK
    {"xnnpack", "qc8", Kind::kXnnQc8, 0},
#endif
#if GEMMI8_BENCH_HAVE_DNNL
    {"onednn", "u8s8u8", Kind::kDnnlU8, 0},
    {"onednn", "u8s8u8-fast", Kind::kDnnlU8Fast, 0},
#endif
};

// The set-up state of one benchmark, kept across its interleaved repetitions.
struct Instance {
  const Case* kase;
  const Layer* layer;
  int threads;  // 0: a single-thread case
  State* state = nullptr;
  std::string error;
};

void RunBench(benchmark::State& st, Instance* in)
{
  if (in->state == nullptr && in->error.empty()) {
    const char* err = Setup(in->layer, in->kase->kind, in->threads, in->kase->caller, &in->state);
    if (err != nullptr) in->error = err;
  }
  if (!in->error.empty()) {
    st.SkipWithError(in->error.c_str());
    for (auto _ : st) {
    }
    return;
  }
  for (auto _ : st) {
    if (const char* err = RunState(in->state)) {
      st.SkipWithError(err);
      break;
    }
  }
  const Layer& L = *in->layer;
  st.counters["GOPS"] = benchmark::Counter(L.Ops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  if (L.binary) {
    st.counters["Gbitmacs"] = benchmark::Counter(L.Ops() / 2 * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  }
  if (in->kase->kind == Kind::kQu8s8) {
    const size_t taps = L.k * L.k, pixels = L.oh * L.ow;
    size_t ind = 0, work = 0;
    gemmi8_convolution_memory(in->state->op, &ind, &work);
    st.counters["ind_bytes"] = static_cast<double>(ind);
    st.counters["work_bytes"] = static_cast<double>(work);
    st.counters["im2col_bytes"] = static_cast<double>(pixels * taps * L.cin);
  }
  if (L.Depthwise()) {
    st.counters["read_bytes"] = static_cast<double>(L.ReadBytes());
    st.counters["write_bytes"] = static_cast<double>(L.WriteBytes());
  }
  if (!in->state->impl.empty()) st.SetLabel(in->state->impl);
}

// A register-only loop of bench/cases-peak.c; for a binary one (2 x 512 ops a step:
// vpxorq + vpopcntq + vpaddq) also the counter Gbitmacs, half its GOPS.
void RunPeak(benchmark::State& st, const bench_case* c, bool binary)
{
  void* state = nullptr;
  const char* why = c->unavailable ? c->unavailable() : nullptr;
  if (why == nullptr) why = c->setup(nullptr, nullptr, &state);
  if (why != nullptr) {
    st.SkipWithError(why);
    for (auto _ : st) {
    }
    return;
  }
  for (auto _ : st) c->run(state);
  st.counters["GOPS"] = benchmark::Counter(c->ops(state) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  if (binary) {
    st.counters["Gbitmacs"] =
        benchmark::Counter(c->ops(state) / 2 * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  }
  c->teardown(state);
}

// vpopcntq zmm alone, register-only: 24 an iteration on 12 registers, each the next
// one's operand in its own chain (12 chains hide the latency at 2 a cycle). Inline
// assembly with fixed registers as in bench/cases-peak.c, so the file needs no ISA
// flags; run only where cpuid reports AVX512F and AVX512_VPOPCNTDQ.
constexpr uint64_t kPopcntIterations = uint64_t{1} << 18;
constexpr unsigned kPopcntSteps = 24;
#if defined(__x86_64__)
#define BENCH_POPCNT(i) "vpopcntq %%zmm" #i ", %%zmm" #i "\n\t"
#define BENCH_POPCNT12                                                                       \
  BENCH_POPCNT(0) BENCH_POPCNT(1) BENCH_POPCNT(2) BENCH_POPCNT(3) BENCH_POPCNT(4) BENCH_POPCNT(5) \
      BENCH_POPCNT(6) BENCH_POPCNT(7) BENCH_POPCNT(8) BENCH_POPCNT(9) BENCH_POPCNT(10) BENCH_POPCNT(11)
#define BENCH_ONES(i) "vpternlogd $0xff, %%zmm" #i ", %%zmm" #i ", %%zmm" #i "\n\t"

void LoopVpopcntqZmm(uint64_t iterations)
{
  __asm__ volatile(
      BENCH_ONES(0) BENCH_ONES(1) BENCH_ONES(2) BENCH_ONES(3) BENCH_ONES(4) BENCH_ONES(5)
      BENCH_ONES(6) BENCH_ONES(7) BENCH_ONES(8) BENCH_ONES(9) BENCH_ONES(10) BENCH_ONES(11)
      ".p2align 5\n"
      "1:\n\t"
      BENCH_POPCNT12 BENCH_POPCNT12
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
      : "+r"(iterations)
      :
      : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11");
}
#endif

void RunVpopcntqPeak(benchmark::State& st)
{
#if defined(__x86_64__)
  const char* why = bench_cpu_has("avx512f") && bench_cpu_has("avx512vpopcntdq")
                        ? nullptr
                        : "CPU or OS lacks avx512f avx512vpopcntdq";
#else
  const char* why = "not x86-64";
#endif
  if (why != nullptr) {
    st.SkipWithError(why);
    for (auto _ : st) {
    }
    return;
  }
#if defined(__x86_64__)
  LoopVpopcntqZmm(kPopcntIterations);  // warm-up: clocks, upper register halves
  for (auto _ : st) LoopVpopcntqZmm(kPopcntIterations);
#endif
  const double bitmacs = static_cast<double>(kPopcntIterations) * kPopcntSteps * 512;
  st.counters["Gbitmacs"] = benchmark::Counter(bitmacs * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["GOPS"] = benchmark::Counter(2 * bitmacs * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// The read-bandwidth loops' buffers (l2: 512 KiB, dram: 256 MiB), 64-byte aligned,
// allocated (and every page written) when first run, freed at exit.
struct ReadBuffer {
  size_t bytes;
  uint64_t* words = nullptr;
};
ReadBuffer read_buffers[] = {{size_t{512} << 10}, {size_t{256} << 20}};

#if defined(__x86_64__)
// One pass over the buffer: 64-byte loads added into 8 zmm accumulators.
__attribute__((target("avx512f"))) uint64_t SumZmm(const uint64_t* p, size_t words)
{
  __m512i vacc0 = _mm512_setzero_si512(), vacc1 = vacc0, vacc2 = vacc0, vacc3 = vacc0;
  __m512i vacc4 = vacc0, vacc5 = vacc0, vacc6 = vacc0, vacc7 = vacc0;
  for (size_t i = 0; i < words; i += 64) {
    vacc0 = _mm512_add_epi64(vacc0, _mm512_load_si512(p + i));
    vacc1 = _mm512_add_epi64(vacc1, _mm512_load_si512(p + i + 8));
    vacc2 = _mm512_add_epi64(vacc2, _mm512_load_si512(p + i + 16));
    vacc3 = _mm512_add_epi64(vacc3, _mm512_load_si512(p + i + 24));
    vacc4 = _mm512_add_epi64(vacc4, _mm512_load_si512(p + i + 32));
    vacc5 = _mm512_add_epi64(vacc5, _mm512_load_si512(p + i + 40));
    vacc6 = _mm512_add_epi64(vacc6, _mm512_load_si512(p + i + 48));
    vacc7 = _mm512_add_epi64(vacc7, _mm512_load_si512(p + i + 56));
  }
  vacc0 = _mm512_add_epi64(_mm512_add_epi64(vacc0, vacc1), _mm512_add_epi64(vacc2, vacc3));
  vacc4 = _mm512_add_epi64(_mm512_add_epi64(vacc4, vacc5), _mm512_add_epi64(vacc6, vacc7));
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_add_epi64(vacc0, vacc4));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}
#endif

// The same in plain C++ (8 independent sums), where AVX-512 is missing.
uint64_t SumWords(const uint64_t* p, size_t words)
{
  uint64_t acc[8] = {};
  for (size_t i = 0; i < words; i += 8) {
    for (size_t j = 0; j < 8; j++) acc[j] += p[i + j];
  }
  return acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] + acc[6] + acc[7];
}

void RunReadBw(benchmark::State& st, ReadBuffer* b)
{
  if (b->words == nullptr) {
    b->words = static_cast<uint64_t*>(bench_alloc(b->bytes));
    if (b->words == nullptr) {
      st.SkipWithError("out of memory");
      for (auto _ : st) {
      }
      return;
    }
    std::memset(b->words, 1, b->bytes);
  }
  const size_t words = b->bytes / sizeof(uint64_t);
#if defined(__x86_64__)
  const bool zmm = bench_cpu_has("avx512f");
#else
  const bool zmm = false;
#endif
  for (auto _ : st) {
#if defined(__x86_64__)
    uint64_t sum = zmm ? SumZmm(b->words, words) : SumWords(b->words, words);
#else
    uint64_t sum = SumWords(b->words, words);
#endif
    benchmark::DoNotOptimize(sum);
  }
  st.counters["GBps"] = benchmark::Counter(b->bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["bytes"] = static_cast<double>(b->bytes);
  st.SetLabel(zmm ? "zmm loads" : "64-bit loads");
}

// One layer a line (the header of bench/conv/layers.txt): false, with a message, for an
// unreadable file, a bad kernel field or no layer at all.
bool ReadLayers(const std::string& path, std::vector<Layer>* layers)
{
  std::ifstream f(path);
  if (!f) {
    std::fprintf(stderr, "gemmi8-conv-bench: cannot read %s\n", path.c_str());
    return false;
  }
  std::string line;
  while (std::getline(f, line)) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream is(line);
    Layer L;
    std::string kernel;
    if (!(is >> L.net >> L.name >> L.count >> kernel >> L.stride >> L.pad >> L.ih >> L.iw >> L.cin >> L.cout)) {
      continue;
    }
    // "3": a 3x3 convolution; "3dw": a 3x3 depthwise one (one channel a group); "3b": a
    // 3x3 binary one
    char* end = nullptr;
    L.k = std::strtoul(kernel.c_str(), &end, 10);
    const std::string suffix = end;
    if (L.k == 0 || (!suffix.empty() && suffix != "dw" && suffix != "b") ||
        (suffix == "dw" && L.cin != L.cout)) {
      std::fprintf(stderr,
                   "gemmi8-conv-bench: %s: %s %s: kernel \"%s\" (k, kb, or kdw with in = out channels)\n",
                   path.c_str(), L.net.c_str(), L.name.c_str(), kernel.c_str());
      return false;
    }
    if (suffix == "dw") L.groups = L.cin;
    L.binary = suffix == "b";
    L.oh = (L.ih + 2 * L.pad - L.k) / L.stride + 1;
    L.ow = (L.iw + 2 * L.pad - L.k) / L.stride + 1;
    layers->push_back(L);
  }
  return !layers->empty();
}

}  // namespace

int main(int argc, char** argv)
{
  std::string path = "bench/conv/layers.txt";
  if (const char* e = std::getenv("GEMMI8_BENCH_CONV_LAYERS")) path = e;
  std::vector<char*> args;
  for (int i = 0; i < argc; i++) {
    if (std::strncmp(argv[i], "--layers=", 9) == 0) {
      path = argv[i] + 9;
    } else {
      args.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(args.size());
  static std::vector<Layer> layers;
  if (!ReadLayers(path, &layers)) return 2;
  // GEMMI8_BENCH_THREADS: the threaded runs' thread counts (none by default)
  std::vector<int> threads_list;
  if (const char* t = std::getenv("GEMMI8_BENCH_THREADS")) {
    std::stringstream ts(t);
    std::string item;
    while (std::getline(ts, item, ',')) {
      if (std::atoi(item.c_str()) >= 1) threads_list.push_back(std::atoi(item.c_str()));
    }
  }
  const size_t ncases = sizeof(kCases) / sizeof(kCases[0]);
  const size_t nthreaded = sizeof(kThreadedCases) / sizeof(kThreadedCases[0]);
  static std::vector<Instance> instances;
  instances.reserve(layers.size() * (ncases + nthreaded * threads_list.size()));
  for (const Layer& L : layers) {
    if (L.binary) {
      for (const Case& c : kBinCases) instances.push_back({&c, &L, 0, nullptr, ""});
      continue;
    }
    for (const Case& c : kCases) {
      if (L.Depthwise() && c.kind == Kind::kIm2colQu8s8) continue;
      instances.push_back({&c, &L, 0, nullptr, ""});
    }
    if (L.Depthwise()) continue;  // the threaded runs: the dense layers
    for (const int t : threads_list) {
      for (const Case& c : kThreadedCases) instances.push_back({&c, &L, t, nullptr, ""});
    }
  }
  for (Instance& in : instances) {
    const std::string library =
        std::string(in.kase->library) + (in.threads > 0 ? "@" + std::to_string(in.threads) : "");
    const std::string name =
        library + "/" + in.kase->variant + "/" + in.layer->net + "/" + in.layer->name;
    auto* b = benchmark::RegisterBenchmark(name.c_str(),
                                           [&in](benchmark::State& st) { RunBench(st, &in); });
    b->Unit(benchmark::kMicrosecond);
    if (in.threads > 0) b->UseRealTime();
  }
  benchmark::RegisterBenchmark("peak/vpdpbusd-zmm/all/peak", RunPeak, &bench_peak_vpdpbusd_zmm, false)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("peak/vpopcntq-alone-zmm/all/peak", RunVpopcntqPeak)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("peak/xor-popcnt-add-zmm/all/peak", RunPeak, &bench_peak_vpopcntq_zmm, true)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("peak/read-bw/all/l2", RunReadBw, &read_buffers[0])->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("peak/read-bw/all/dram", RunReadBw, &read_buffers[1])->Unit(benchmark::kMicrosecond);
  benchmark::AddCustomContext("layers", path);
  benchmark::AddCustomContext("gemmi8_isa", gemmi8_isa_name());
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (Instance& in : instances) Teardown(in.state);
  for (ReadBuffer& b : read_buffers) bench_free(b.words);
  return 0;
}
