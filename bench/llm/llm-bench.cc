// gemmi8-llm-bench: transformer linear layers at M = 1 to 512 tokens, on one thread
// and two, gemmi8's dynamically quantized GEMMs against OpenBLAS and oneDNN, with the
// read loop over the same bytes at M = 1 and the vpdpbusd peak loop at M >= 16, all
// interleaved in one run (bench/llm/README.md; bench/llm/run.sh runs it and the report).
//
//   gemmi8-llm-bench [--shapes=FILE] [--m=1,4,16,64,512] [--threads=1,2] [--rounds=5]
//                    [--slice=0.02] [--series=REGEX] [--out=build/llm.json]
//
// Per layer (N x K, a line of the shape file), one at a time: its weights are made and
// every series packs its own once; then every cell (an M on a thread count) is set up
// for every series (each checks its first output against a reference on sampled
// outputs), and the rounds run: in each, the cells in a random order, and in a cell
// every series for one slice (--slice seconds at least, after one call not timed
// unless that call alone lasts a slice), the libraries in a random order, each
// library's series together. A slice's time is the wall clock over its calls divided
// by their number. So every ratio in the report is of two slices measured a fraction
// of a second apart, in the same round: the VM's speed changes for tens of seconds at
// a time. A threaded slice that follows another library's threaded slice waits for
// that library's idle threads to stop spinning (OpenBLAS's spin for up to 2^28
// cycles: 150 ms; OpenMP's and gemmi8's: 20 ms), as bench/main.cc does.
//
// At M = 1 the read loop (bench_read_buffer: vpaddq from memory) sums a 64-byte
// aligned buffer of each gemmi8 series' packed weight bytes (on two threads, the
// buffer's two halves on gemmi8's pool); at M >= 16 on one thread, the vpdpbusd peak
// loop of bench/cases-peak.c runs one slice per cell.
//
// Output: a JSON file (--out) with the context, the series, per layer the weight
// bytes and the implementation each peer picked per cell, and every slice;
// bench/llm/report.py turns it into build/llm.md. Exit status 2 if a series failed
// (set-up, check or run), after everything else has run.
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gemmi8.h>

#include "llm.h"

#include "../cases.h"

namespace {

// The series, in the order of the report's columns. A 4-bit series is one more line.
const llm_series* const kSeries[] = {
    &llm_gemmi8_qd8,     &llm_gemmi8_qdu8,       &llm_gemmi8_qd8_linear,  &llm_gemmi8_qdu8_linear,
    &llm_openblas_sgemm, &llm_openblas_sgemv,    &llm_onednn_s8s8f32,     &llm_onednn_u8s8f32,
    &llm_onednn_u8s8f32_fast, &llm_gemmi8_qd8_qc4w, &llm_gemmi8_qd8_qb4w32, &llm_gemmi8_qd8_qb4w128,
};

struct Options {
  std::string shapes = "bench/llm/shapes.txt";
  std::vector<size_t> ms = {1, 4, 16, 64, 512};
  std::vector<int> threads = {1, 2};
  int rounds = 5;
  double slice = 0.02;
  std::string series = ".";
  std::string out = "build/llm.json";
};

double Now()
{
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double PeakRssBytes()
{
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

// CPU seconds every process has used (/proc/stat: all but idle and iowait), and this
// process (getrusage, its threads included): the difference is what other processes
// took from the machine while the benchmark ran.
double MachineBusySeconds()
{
  FILE* f = std::fopen("/proc/stat", "r");
  if (f == nullptr) return -1;
  unsigned long long v[10] = {};
  const int got = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
                              &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
  std::fclose(f);
  if (got < 8) return -1;
  // user nice system idle iowait irq softirq steal (guest time is inside user)
  const unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  return static_cast<double>(busy) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double OwnCpuSeconds()
{
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Share of the machine (all its CPUs) other processes used since (busy0, own0, wall0).
double OthersShare(double busy0, double own0, double wall0)
{
  const double busy = MachineBusySeconds(), cpus = static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN));
  if (busy < 0 || busy0 < 0 || cpus <= 0) return -1;
  const double others = (busy - busy0) - (OwnCpuSeconds() - own0);
  const double share = others / ((Now() - wall0) * cpus);
  return share < 0 ? 0 : share;
}

std::string Json(const std::string& s)
{
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

template <typename T>
bool ParseList(const char* text, std::vector<T>* out)
{
  out->clear();
  std::string s = text;
  for (size_t pos = 0; pos <= s.size();) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    const std::string item = s.substr(pos, end - pos);
    char* stop = nullptr;
    const long long v = std::strtoll(item.c_str(), &stop, 10);
    if (item.empty() || *stop != '\0' || v < 1) return false;
    out->push_back(static_cast<T>(v));
    pos = end + 1;
  }
  return !out->empty();
}

// "N K" a line; '#' starts a comment.
bool ReadShapes(const std::string& path, std::vector<std::pair<size_t, size_t>>* shapes)
{
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) {
    std::fprintf(stderr, "gemmi8-llm-bench: cannot open %s\n", path.c_str());
    return false;
  }
  char line[512];
  int number = 0;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    number++;
    if (char* hash = std::strchr(line, '#')) *hash = '\0';
    unsigned long long n = 0, k = 0;
    char extra = 0;
    const int got = std::sscanf(line, "%llu %llu %c", &n, &k, &extra);
    if (got <= 0) continue;
    if (got != 2 || n == 0 || k == 0) {
      std::fprintf(stderr, "gemmi8-llm-bench: %s:%d: expected 'N K'\n", path.c_str(), number);
      std::fclose(f);
      return false;
    }
    shapes->emplace_back(static_cast<size_t>(n), static_cast<size_t>(k));
  }
  std::fclose(f);
  if (shapes->empty()) std::fprintf(stderr, "gemmi8-llm-bench: %s: no shapes\n", path.c_str());
  return !shapes->empty();
}

struct Layer {
  llm_layer l = {};
  int8_t* b = nullptr;
  float* b_scale = nullptr;
  float* bias = nullptr;
  float* w = nullptr;
  ~Layer()
  {
    bench_free(b);
    bench_free(b_scale);
    bench_free(bias);
    bench_free(w);
  }
};

const char* MakeLayer(size_t n, size_t k, Layer* layer)
{
  layer->b = static_cast<int8_t*>(bench_alloc(bench_mul(n, k)));
  layer->b_scale = static_cast<float*>(bench_alloc(bench_mul(n, sizeof(float))));
  layer->bias = static_cast<float*>(bench_alloc(bench_mul(n, sizeof(float))));
  layer->w = static_cast<float*>(bench_alloc(bench_mul(bench_mul(n, k), sizeof(float))));
  if (layer->b == nullptr || layer->b_scale == nullptr || layer->bias == nullptr ||
      layer->w == nullptr) {
    return "out of memory";
  }
  const bench_shape shape = {n, 0, k};
  bench_rng rng;
  bench_rng_seed(&rng, &shape, "llm-weights");
  bench_fill_s8(&rng, layer->b, n * k, -127, 127);
  for (size_t j = 0; j < n; j++) {
    layer->b_scale[j] = static_cast<float>(0.002 * bench_rng_real(&rng, 0.5, 1.5));
    layer->bias[j] = static_cast<float>(bench_rng_real(&rng, -1.0, 1.0));
  }
  for (size_t j = 0; j < n; j++) {
    for (size_t i = 0; i < k; i++) layer->w[j * k + i] = layer->b_scale[j] * layer->b[j * k + i];
  }
  layer->l = llm_layer{n, k, layer->b, layer->b_scale, layer->bias, layer->w};
  return nullptr;
}

struct Rows {
  llm_rows r = {};
  float* x = nullptr;
  int8_t* x_s8 = nullptr;
  uint8_t* x_u8 = nullptr;
  float* s8_scale = nullptr;
  float* u8_scale = nullptr;
  int32_t* s8_zp = nullptr;
  int32_t* u8_zp = nullptr;
  float* c = nullptr;  // the output of the cells at this M
  ~Rows()
  {
    for (void* p : {static_cast<void*>(x), static_cast<void*>(x_s8), static_cast<void*>(x_u8),
                    static_cast<void*>(s8_scale), static_cast<void*>(u8_scale),
                    static_cast<void*>(s8_zp), static_cast<void*>(u8_zp), static_cast<void*>(c)}) {
      bench_free(p);
    }
  }
};

// Activations: uniform in [-1, 1) times a factor per row (0.5 to 2), so that the rows'
// scales differ.
const char* MakeRows(size_t m, size_t n, size_t k, Rows* rows)
{
  rows->x = static_cast<float*>(bench_alloc(bench_mul(bench_mul(m, k), sizeof(float))));
  rows->x_s8 = static_cast<int8_t*>(bench_alloc(bench_mul(m, k)));
  rows->x_u8 = static_cast<uint8_t*>(bench_alloc(bench_mul(m, k)));
  rows->s8_scale = static_cast<float*>(bench_alloc(m * sizeof(float)));
  rows->u8_scale = static_cast<float*>(bench_alloc(m * sizeof(float)));
  rows->s8_zp = static_cast<int32_t*>(bench_alloc(m * sizeof(int32_t)));
  rows->u8_zp = static_cast<int32_t*>(bench_alloc(m * sizeof(int32_t)));
  rows->c = static_cast<float*>(bench_alloc(bench_mul(bench_mul(m, n), sizeof(float))));
  if (rows->x == nullptr || rows->x_s8 == nullptr || rows->x_u8 == nullptr ||
      rows->s8_scale == nullptr || rows->u8_scale == nullptr || rows->s8_zp == nullptr ||
      rows->u8_zp == nullptr || rows->c == nullptr) {
    return "out of memory";
  }
  const bench_shape shape = {0, m, k};
  bench_rng rng;
  bench_rng_seed(&rng, &shape, "llm-rows");
  for (size_t i = 0; i < m; i++) {
    const double factor = bench_rng_real(&rng, 0.5, 2.0);
    for (size_t j = 0; j < k; j++) {
      rows->x[i * k + j] = static_cast<float>(factor * bench_rng_real(&rng, -1.0, 1.0));
    }
  }
  gemmi8_status st =
      gemmi8_quantize_rows_s8(m, k, rows->x, k, rows->x_s8, k, rows->s8_scale, rows->s8_zp);
  if (st == gemmi8_status_success) {
    st = gemmi8_quantize_rows_u8(m, k, rows->x, k, rows->x_u8, k, rows->u8_scale, rows->u8_zp);
  }
  if (st != gemmi8_status_success) {
    return bench_error("gemmi8_quantize_rows: %s", gemmi8_status_string(st));
  }
  rows->r = llm_rows{m, k, rows->x, rows->x_s8, rows->s8_scale, rows->s8_zp,
                     rows->x_u8, rows->u8_scale, rows->u8_zp};
  return nullptr;
}

// gemmi8's pools, one per thread count, kept for the run.
const gemmi8_parallel* Pool(int threads)
{
  static std::map<int, gemmi8_parallel> pools;
  if (threads <= 1) return nullptr;
  auto it = pools.find(threads);
  if (it != pools.end()) return &it->second;
  gemmi8_threadpool* pool = nullptr;
  gemmi8_parallel par;
  if (gemmi8_threadpool_create(static_cast<size_t>(threads), nullptr, &pool) !=
          gemmi8_status_success ||
      gemmi8_threadpool_parallel(pool, &par) != gemmi8_status_success) {
    return nullptr;
  }
  return &(pools[threads] = par);
}

// ---- the read loop, on one thread or a pool ----------------------------------------

volatile uint64_t read_sink;

struct ReadLoop {
  void* buffer = nullptr;
  size_t bytes = 0;
  int threads = 1;
  const gemmi8_parallel* parallel = nullptr;
  uint64_t sums[64] = {};
};

void ReadTask(void* context, size_t index)
{
  auto* r = static_cast<ReadLoop*>(context);
  const size_t chunk = (r->bytes / 64 + r->threads - 1) / r->threads * 64;
  const size_t begin = index * chunk;
  if (begin >= r->bytes) return;
  const size_t size = std::min(chunk, r->bytes - begin);
  r->sums[index] = bench_read_buffer(static_cast<const char*>(r->buffer) + begin, size, nullptr);
}

const char* ReadRun(void* opaque)
{
  auto* r = static_cast<ReadLoop*>(opaque);
  if (r->parallel == nullptr) {
    read_sink = read_sink + bench_read_buffer(r->buffer, r->bytes, nullptr);
  } else {
    r->parallel->parallel_for(r->parallel->context, ReadTask, r, static_cast<size_t>(r->threads));
    for (int i = 0; i < r->threads; i++) read_sink = read_sink + r->sums[i];
  }
  return nullptr;
}

// ---- measurements -------------------------------------------------------------------

struct Cell {
  llm_cell c = {};
  std::vector<void*> states;  // per series, nullptr if not run here
};

struct Measure {
  std::string series;   // its name in the results
  std::string library;  // settling between threaded libraries
  const char* (*prepare)(void*);
  const char* (*run)(void*);
  void* state;
};

struct Sample {
  size_t layer, m;
  int threads;
  std::string series;
  int round;
  double seconds;  // per call
  long calls;
};

std::vector<Sample> samples;
// Per layer and round, the share of the CPUs other processes took (-1: unknown).
struct RoundLoad {
  size_t layer;
  int round;
  double others;
};
std::vector<RoundLoad> round_others;
std::vector<std::string> failures;
std::string last_threaded_library;
double settled_seconds = 0;  // waited for other libraries' threads
double last_threaded_end = 0;

void Fail(const std::string& what)
{
  failures.push_back(what);
  std::fprintf(stderr, "gemmi8-llm-bench: %s\n", what.c_str());
}

// Seconds per call over one slice (*calls of them); < 0 after an error (reported).
double TimeSlice(const Measure& m, int threads, double slice, long* calls_out)
{
  if (threads > 1) {
    if (!last_threaded_library.empty() && last_threaded_library != m.library) {
      const double settle = last_threaded_library == "openblas" ? 0.150 : 0.020;
      const double wait = settle - (Now() - last_threaded_end);
      if (wait > 0) {
        usleep(static_cast<useconds_t>(wait * 1e6));
        settled_seconds += wait;
      }
    }
    last_threaded_library = m.library;
  }
  const char* err = m.prepare != nullptr ? m.prepare(m.state) : nullptr;
  double start = Now();
  if (err == nullptr) err = m.run(m.state);
  double first = Now() - start;
  double result = first;
  *calls_out = 1;
  if (err == nullptr && first < slice) {
    // the first call was the warm-up; now the slice
    long calls = 0;
    start = Now();
    double elapsed = 0;
    do {
      err = m.run(m.state);
      calls++;
      elapsed = Now() - start;
    } while (err == nullptr && elapsed < slice);
    result = elapsed / static_cast<double>(calls);
    *calls_out = calls;
  }
  if (threads > 1) last_threaded_end = Now();
  if (err != nullptr) {
    Fail(m.series + ": run: " + err);
    return -1;
  }
  return result;
}

void Usage()
{
  std::fprintf(stderr,
               "usage: gemmi8-llm-bench [--shapes=FILE] [--m=1,4,16,64,512] [--threads=1,2]\n"
               "         [--rounds=5] [--slice=SECONDS] [--series=REGEX] [--out=FILE.json]\n");
}

}  // namespace

extern "C" const char* llm_check(const char* series, const llm_cell* cell, const float* c,
                                 const llm_reference* ref)
{
  const size_t m = cell->m, n = cell->layer->n, k = cell->layer->k;
  const bench_shape shape = {n, m, k};
  bench_rng rng;
  bench_rng_seed(&rng, &shape, "llm-check");
  // rows and columns: both ends and random ones
  std::vector<size_t> rows, cols;
  for (size_t i = 0; i < 3; i++) {
    rows.push_back(std::min(i, m - 1));
    rows.push_back(m - 1 - std::min(i, m - 1));
    cols.push_back(std::min(i, n - 1));
    cols.push_back(n - 1 - std::min(i, n - 1));
  }
  for (size_t i = 0; i < 6; i++) {
    rows.push_back(bench_rng_next(&rng) % m);
    cols.push_back(bench_rng_next(&rng) % n);
  }
  for (size_t i : rows) {
    for (size_t j : cols) {
      double sum = 0, size = 0;
      for (size_t kk = 0; kk < k; kk++) {
        const double t = ref->term(ref->ctx, i, j, kk);
        sum += t;
        size += std::fabs(t);
      }
      const double bias = ref->bias(ref->ctx, j);
      const double want = sum + bias, got = c[i * n + j];
      if (!(std::fabs(got - want) <= 1e-5 * (size + std::fabs(bias)) + 1e-30)) {
        return bench_error("%s: C[%zu][%zu] = %.9g, reference %.9g (M=%zu N=%zu K=%zu)", series, i,
                           j, got, want, m, n, k);
      }
    }
  }
  return nullptr;
}

int main(int argc, char** argv)
{
  Options opt;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    bool ok = true;
    if (std::strncmp(a, "--shapes=", 9) == 0) {
      opt.shapes = a + 9;
    } else if (std::strncmp(a, "--m=", 4) == 0) {
      ok = ParseList(a + 4, &opt.ms);
    } else if (std::strncmp(a, "--threads=", 10) == 0) {
      ok = ParseList(a + 10, &opt.threads) && opt.threads.back() < 64;
    } else if (std::strncmp(a, "--rounds=", 9) == 0) {
      opt.rounds = std::atoi(a + 9);
      ok = opt.rounds >= 1;
    } else if (std::strncmp(a, "--slice=", 8) == 0) {
      opt.slice = std::atof(a + 8);
      ok = opt.slice > 0;
    } else if (std::strncmp(a, "--series=", 9) == 0) {
      opt.series = a + 9;
    } else if (std::strncmp(a, "--out=", 6) == 0) {
      opt.out = a + 6;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "gemmi8-llm-bench: bad option %s\n", a);
      Usage();
      return 1;
    }
  }
  std::vector<std::pair<size_t, size_t>> shapes;
  if (!ReadShapes(opt.shapes, &shapes)) return 1;
  std::regex wanted;
  try {
    wanted = std::regex(opt.series);
  } catch (const std::regex_error&) {
    std::fprintf(stderr, "gemmi8-llm-bench: bad --series regex %s\n", opt.series.c_str());
    return 1;
  }

  // The series that run here.
  const size_t series_count = sizeof(kSeries) / sizeof(kSeries[0]);
  std::vector<bool> runs(series_count, false);
  std::string skipped;
  for (size_t s = 0; s < series_count; s++) {
    if (!std::regex_search(kSeries[s]->name, wanted)) continue;
    const char* why = kSeries[s]->unavailable != nullptr ? kSeries[s]->unavailable() : nullptr;
    if (why != nullptr) {
      std::fprintf(stderr, "gemmi8-llm-bench: skipping %s: %s\n", kSeries[s]->name, why);
      skipped += std::string(skipped.empty() ? "" : "; ") + kSeries[s]->name + " (" + why + ")";
      continue;
    }
    runs[s] = true;
  }
  const bool peak_wanted = std::regex_search("peak/vpdpbusd-zmm", wanted);
  const char* peak_why = bench_peak_vpdpbusd_zmm.unavailable();
  void* peak_state = nullptr;
  double peak_ops = 0;
  if (peak_wanted && peak_why == nullptr) {
    if (const char* err = bench_peak_vpdpbusd_zmm.setup(nullptr, nullptr, &peak_state)) {
      peak_why = err;
    } else {
      peak_ops = bench_peak_vpdpbusd_zmm.ops(peak_state);
    }
  }
  const bool read_wanted = std::regex_search("peak/read-bw", wanted);

  std::mt19937_64 shuffle_rng(20240601);
  std::vector<std::string> layer_json;
  std::vector<double> layer_others;  // share of the CPUs other processes used, per layer
  const double run_start = Now(), run_busy = MachineBusySeconds(), run_own = OwnCpuSeconds();
  for (size_t li = 0; li < shapes.size(); li++) {
    const size_t n = shapes[li].first, k = shapes[li].second;
    const double layer_start = Now(), layer_busy = MachineBusySeconds(), layer_own = OwnCpuSeconds();
    std::printf("[llm %zu/%zu] %zu x %zu:", li + 1, shapes.size(), n, k);
    std::fflush(stdout);
    Layer layer;
    if (const char* err = MakeLayer(n, k, &layer)) {
      Fail(std::to_string(n) + "x" + std::to_string(k) + ": " + err);
      std::printf(" %s\n", err);
      continue;
    }
    // Each series' weights; series with one pack_key share them.
    std::vector<void*> packed(series_count, nullptr);
    std::vector<bool> owner(series_count, false);
    std::vector<bool> ok = runs;
    std::string bytes_json;
    for (size_t s = 0; s < series_count; s++) {
      if (!ok[s]) continue;
      const llm_series* se = kSeries[s];
      bool shared = false;
      for (size_t o = 0; o < s && se->pack_key != nullptr; o++) {
        if (owner[o] && kSeries[o]->pack_key != nullptr &&
            std::strcmp(kSeries[o]->pack_key, se->pack_key) == 0) {
          packed[s] = packed[o];
          shared = true;
          break;
        }
      }
      if (!shared) {
        if (const char* err = se->pack(&layer.l, &packed[s])) {
          Fail(std::string(se->name) + " " + std::to_string(n) + "x" + std::to_string(k) +
               ": pack: " + err);
          ok[s] = false;
          continue;
        }
        owner[s] = true;
      }
    }
    // The activations per M, the cells, every series set up on each.
    std::map<size_t, Rows> rows;
    for (size_t m : opt.ms) {
      if (const char* err = MakeRows(m, n, k, &rows[m])) {
        Fail("rows M=" + std::to_string(m) + ": " + err);
        rows.erase(m);
      }
    }
    std::vector<Cell> cells;
    for (int t : opt.threads) {
      for (size_t m : opt.ms) {
        if (rows.count(m) == 0) continue;
        Cell cell;
        cell.c = llm_cell{&layer.l, &rows[m].r, m, t, Pool(t), rows[m].c};
        if (t > 1 && cell.c.parallel == nullptr) {
          Fail("gemmi8_threadpool_create(" + std::to_string(t) + ") failed");
          continue;
        }
        cells.push_back(cell);
      }
    }
    std::map<std::string, std::string> labels;  // "series|m|threads" -> implementation
    for (Cell& cell : cells) {
      cell.states.assign(series_count, nullptr);
      for (size_t s = 0; s < series_count; s++) {
        const llm_series* se = kSeries[s];
        if (!ok[s] || ((se->flags & LLM_M1_ONLY) && cell.c.m != 1)) continue;
        void* state = nullptr;
        if (const char* err = se->setup(&cell.c, packed[s], &state)) {
          Fail(std::string(se->name) + " " + std::to_string(n) + "x" + std::to_string(k) +
               " M=" + std::to_string(cell.c.m) + " threads=" + std::to_string(cell.c.threads) +
               ": setup: " + err);
          continue;
        }
        cell.states[s] = state;
        if (se->label != nullptr && se->label(state) != nullptr) {
          labels[std::string(se->name) + "|" + std::to_string(cell.c.m) + "|" +
                 std::to_string(cell.c.threads)] = se->label(state);
        }
      }
    }
    // The read loops: one per distinct packed size of the gemmi8 series.
    std::map<size_t, ReadLoop> reads;  // bytes (rounded up to 64) -> buffer, per thread count below
    std::string weights_json;
    for (size_t s = 0; s < series_count; s++) {
      if (!ok[s] || kSeries[s]->weight_bytes == nullptr) continue;
      const double bytes = kSeries[s]->weight_bytes(packed[s]);
      if (bytes <= 0) continue;
      char text[128];
      std::snprintf(text, sizeof(text), "%s%s: %.0f", weights_json.empty() ? "" : ", ",
                    Json(kSeries[s]->name).c_str(), bytes);
      weights_json += text;
      if (kSeries[s]->role == LLM_ROLE_GEMMI8 && read_wanted) {
        const size_t rounded = (static_cast<size_t>(bytes) + 63) / 64 * 64;
        if (reads.count(rounded) == 0) {
          ReadLoop& r = reads[rounded];
          r.bytes = rounded;
          r.buffer = bench_alloc(rounded);
          if (r.buffer == nullptr) {
            Fail("read loop: out of memory");
            reads.erase(rounded);
            continue;
          }
          std::memset(r.buffer, 0x5a, rounded);
        }
      }
    }
    // Read loops per thread count (they share the buffer).
    std::vector<ReadLoop> read_loops;
    read_loops.reserve(reads.size() * opt.threads.size());
    for (auto& entry : reads) {
      for (int t : opt.threads) {
        ReadLoop r;
        r.buffer = entry.second.buffer;
        r.bytes = entry.second.bytes;
        r.threads = t;
        r.parallel = Pool(t);
        read_loops.push_back(r);
      }
    }

    // The measurements of each cell.
    std::vector<std::vector<Measure>> plan(cells.size());
    size_t measures = 0;
    for (size_t ci = 0; ci < cells.size(); ci++) {
      const llm_cell& c = cells[ci].c;
      for (size_t s = 0; s < series_count; s++) {
        if (cells[ci].states[s] == nullptr) continue;
        plan[ci].push_back(Measure{kSeries[s]->name, kSeries[s]->library, kSeries[s]->prepare,
                                   kSeries[s]->run, cells[ci].states[s]});
      }
      if (c.m == 1) {
        for (ReadLoop& r : read_loops) {
          if (r.threads != c.threads) continue;
          plan[ci].push_back(Measure{"peak/read-bw/" + std::to_string(r.bytes),
                                     c.threads > 1 ? "gemmi8" : "peak", nullptr, ReadRun, &r});
        }
      }
      if (c.m >= 16 && c.threads == 1 && peak_state != nullptr) {
        plan[ci].push_back(Measure{"peak/vpdpbusd-zmm", "peak", nullptr,
                                   bench_peak_vpdpbusd_zmm.run, peak_state});
      }
      measures += plan[ci].size();
    }
    std::printf(" %zu cells, %zu slices x %d rounds ...", cells.size(), measures, opt.rounds);
    std::fflush(stdout);
    const double timed_start = Now();

    std::set<std::pair<size_t, std::string>> dead;
    for (int round = 0; round < opt.rounds; round++) {
      const double round_start = Now(), round_busy = MachineBusySeconds(),
                   round_own = OwnCpuSeconds();
      std::vector<size_t> order(cells.size());
      for (size_t i = 0; i < order.size(); i++) order[i] = i;
      std::shuffle(order.begin(), order.end(), shuffle_rng);
      for (size_t ci : order) {
        // the libraries in a random order, each library's slices together
        std::vector<Measure> list = plan[ci];
        std::shuffle(list.begin(), list.end(), shuffle_rng);
        std::vector<std::string> libs;
        for (const Measure& m : list) {
          if (std::find(libs.begin(), libs.end(), m.library) == libs.end()) libs.push_back(m.library);
        }
        std::stable_sort(list.begin(), list.end(), [&](const Measure& a, const Measure& b) {
          return std::find(libs.begin(), libs.end(), a.library) <
                 std::find(libs.begin(), libs.end(), b.library);
        });
        for (const Measure& m : list) {
          const llm_cell& c = cells[ci].c;
          if (dead.count(std::make_pair(ci, m.series)) != 0) continue;
          long calls = 0;
          const double t = TimeSlice(m, c.threads, opt.slice, &calls);
          if (t >= 0) {
            samples.push_back(Sample{li, c.m, c.threads, m.series, round, t, calls});
          } else {
            dead.insert(std::make_pair(ci, m.series));  // failed once: not run again
          }
        }
      }
      round_others.push_back({li, round, OthersShare(round_busy, round_own, round_start)});
    }

    // The layer's record, then everything it set up goes.
    std::string labels_json;
    for (const auto& entry : labels) {
      labels_json += std::string(labels_json.empty() ? "" : ", ") + Json(entry.first) + ": " +
                     Json(entry.second);
    }
    char head[256];
    std::snprintf(head, sizeof(head), "{\"n\": %zu, \"k\": %zu, ", n, k);
    layer_json.push_back(std::string(head) + "\"weight_bytes\": {" + weights_json +
                         "}, \"labels\": {" + labels_json + "}}");
    for (Cell& cell : cells) {
      for (size_t s = 0; s < series_count; s++) {
        if (cell.states[s] != nullptr) kSeries[s]->teardown(cell.states[s]);
      }
    }
    for (size_t s = 0; s < series_count; s++) {
      if (owner[s]) kSeries[s]->unpack(packed[s]);
    }
    for (auto& entry : reads) bench_free(entry.second.buffer);
    const double others = OthersShare(layer_busy, layer_own, layer_start);
    std::printf(" %.0f s (set-up %.0f s), peak RSS %.2f GB so far", Now() - layer_start,
                timed_start - layer_start, PeakRssBytes() / 1e9);
    if (others >= 0) std::printf("; other processes: %.0f%% of the CPUs", 100 * others);
    std::printf("\n");
    layer_others.push_back(others);
    std::fflush(stdout);
  }
  if (peak_state != nullptr) bench_peak_vpdpbusd_zmm.teardown(peak_state);

  // ---- the results ----
  FILE* f = std::fopen(opt.out.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "gemmi8-llm-bench: cannot write %s\n", opt.out.c_str());
    return 1;
  }
  std::string cpu = "unknown";
  if (FILE* info = std::fopen("/proc/cpuinfo", "r")) {
    char line[512];
    while (std::fgets(line, sizeof(line), info) != nullptr) {
      if (std::strncmp(line, "model name", 10) == 0 && std::strchr(line, ':') != nullptr) {
        cpu = std::strchr(line, ':') + 2;
        while (!cpu.empty() && (cpu.back() == '\n' || cpu.back() == ' ')) cpu.pop_back();
        break;
      }
    }
    std::fclose(info);
  }
  const char* l2_source = nullptr;
  const size_t l2 = bench_l2_cache_bytes(&l2_source);
  const char* read_how = nullptr;
  {
    alignas(64) static unsigned char probe[64];
    read_sink = read_sink + bench_read_buffer(probe, sizeof(probe), &read_how);
  }
  char host[256] = "";
  gethostname(host, sizeof(host) - 1);
  time_t now = time(nullptr);
  char date[64];
  strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  std::string ms, threads;
  for (size_t m : opt.ms) ms += (ms.empty() ? "" : ",") + std::to_string(m);
  for (int t : opt.threads) threads += (threads.empty() ? "" : ",") + std::to_string(t);

  std::fprintf(f, "{\n  \"context\": {\n");
  std::fprintf(f, "    \"date\": %s,\n    \"host\": %s,\n    \"cpu\": %s,\n", Json(date).c_str(),
               Json(host).c_str(), Json(cpu).c_str());
  std::fprintf(f, "    \"cpus_online\": %ld,\n", sysconf(_SC_NPROCESSORS_ONLN));
  std::fprintf(f, "    \"gemmi8_isa\": %s,\n", Json(gemmi8_isa_name()).c_str());
  std::fprintf(f, "    \"l2_cache_bytes\": %zu,\n    \"l2_cache_source\": %s,\n", l2,
               Json(l2_source != nullptr ? l2_source : "unknown").c_str());
  std::fprintf(f, "    \"read_loop\": %s,\n", Json(read_how != nullptr ? read_how : "?").c_str());
  std::fprintf(f, "    \"peak_loop\": %s,\n    \"peak_ops_per_call\": %.0f,\n",
               Json(peak_state != nullptr || peak_ops > 0
                        ? "vpdpbusd-zmm: 28 vpdpbusd zmm per iteration, 14 accumulators"
                        : std::string("none: ") + (peak_why != nullptr ? peak_why : "not asked"))
                   .c_str(),
               peak_ops);
  std::fprintf(f, "    \"openblas\": %s,\n", Json(llm_openblas_context()).c_str());
  std::fprintf(f, "    \"onednn\": %s,\n", Json(llm_onednn_context()).c_str());
  std::fprintf(f, "    \"shapes_file\": %s,\n    \"m\": %s,\n    \"threads\": %s,\n",
               Json(opt.shapes).c_str(), Json(ms).c_str(), Json(threads).c_str());
  std::fprintf(f, "    \"rounds\": %d,\n    \"slice_seconds\": %g,\n", opt.rounds, opt.slice);
  std::fprintf(f, "    \"series_filter\": %s,\n    \"skipped\": %s,\n", Json(opt.series).c_str(),
               Json(skipped.empty() ? "none" : skipped).c_str());
  std::string others_json;
  for (double o : layer_others) {
    char text[32];
    std::snprintf(text, sizeof(text), "%s%.3f", others_json.empty() ? "" : ", ", o);
    others_json += text;
  }
  std::fprintf(f, "    \"other_processes_cpu_share\": %.3f,\n", OthersShare(run_busy, run_own, run_start));
  std::fprintf(f, "    \"other_processes_cpu_share_per_layer\": [%s],\n", others_json.c_str());
  std::fprintf(f, "    \"settle_seconds\": %.1f,\n", settled_seconds);
  std::fprintf(f, "    \"run_seconds\": %.1f,\n    \"peak_rss_bytes\": %.0f\n  },\n",
               Now() - run_start, PeakRssBytes());
  std::fprintf(f, "  \"series\": [\n");
  bool first = true;
  for (size_t s = 0; s < series_count; s++) {
    if (!runs[s]) continue;
    const llm_series* se = kSeries[s];
    std::fprintf(f,
                 "%s    {\"name\": %s, \"library\": %s, \"role\": %s, \"weights\": %s, "
                 "\"m1_only\": %s, \"bandwidth_target\": %g, \"peak_target\": %g, "
                 "\"description\": %s}",
                 first ? "" : ",\n", Json(se->name).c_str(), Json(se->library).c_str(),
                 se->role == LLM_ROLE_GEMMI8 ? "\"gemmi8\"" : "\"peer\"",
                 Json(se->weights).c_str(), (se->flags & LLM_M1_ONLY) ? "true" : "false",
                 se->bandwidth_target, se->peak_target, Json(se->description).c_str());
    first = false;
  }
  std::fprintf(f, "\n  ],\n  \"layers\": [\n");
  for (size_t i = 0; i < layer_json.size(); i++) {
    std::fprintf(f, "    %s%s\n", layer_json[i].c_str(), i + 1 < layer_json.size() ? "," : "");
  }
  std::fprintf(f, "  ],\n  \"round_others\": [");
  for (size_t i = 0; i < round_others.size(); i++) {
    std::fprintf(f, "%s[%zu, %d, %.3f]", i == 0 ? "" : ", ", round_others[i].layer,
                 round_others[i].round, round_others[i].others);
  }
  std::fprintf(f, "],\n  \"failures\": [");
  for (size_t i = 0; i < failures.size(); i++) {
    std::fprintf(f, "%s\n    %s", i == 0 ? "" : ",", Json(failures[i]).c_str());
  }
  std::fprintf(f, "%s],\n", failures.empty() ? "" : "\n  ");
  std::fprintf(f, "  \"samples_columns\": [\"layer\", \"m\", \"threads\", \"series\", \"round\", "
                  "\"seconds_per_call\", \"calls\"],\n  \"samples\": [\n");
  for (size_t i = 0; i < samples.size(); i++) {
    const Sample& s = samples[i];
    std::fprintf(f, "    [%zu, %zu, %d, %s, %d, %.9g, %ld]%s\n", s.layer, s.m, s.threads,
                 Json(s.series).c_str(), s.round, s.seconds, s.calls,
                 i + 1 < samples.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
  std::printf("gemmi8-llm-bench: %zu slices in %.0f s (%.0f s of it waiting for idle "
              "threads to settle), peak RSS %.2f GB; results: %s\n",
              samples.size(), Now() - run_start, settled_seconds, PeakRssBytes() / 1e9,
              opt.out.c_str());
  if (!failures.empty()) {
    std::fprintf(stderr, "gemmi8-llm-bench: %zu failure(s):\n", failures.size());
    for (const auto& fail : failures) std::fprintf(stderr, "  %s\n", fail.c_str());
    return 2;
  }
  return 0;
}
