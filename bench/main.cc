// gemmi8-bench: registers the C benchmark cases (cases.h) with Google Benchmark.
//
// One benchmark per (case, shape), and per gemmi8 kernel set supported here for
// gemmi8 cases, named <library>/<variant>/<Row>x<Col>x<Depth> (Row = N output
// channels, Col = M pixels, Depth = K), with a GOPS counter: 2*M*N*K / s / 1e9.
// Cases flagged BENCH_CASE_NO_SHAPE (the peak loops) run once, as .../0x0x0, and
// count their own operations.
//
// Then the fully-connected shapes (bench/shapes-fc.txt: real layers at M = 1 to 8),
// in the same run so that their repetitions are interleaved with all the others:
// the cases flagged BENCH_CASE_FC, gemmi8's on its best kernel set and avx2 (the
// best one only with BENCH_CASE_FC_BEST_ISA), and the BENCH_CASE_WEIGHT_BYTES
// loops once per distinct Row x Depth, as .../<Row>x0x<Depth>. A name that the main
// shapes already registered is not registered again.
//
// A case is set up once (inputs, packed weights: never timed) the first time it
// runs and kept for its next repetitions, so that repetitions can be interleaved
// (--benchmark_enable_random_interleaving) without setting up again; the least
// recently used cases are torn down when set-up memory passes a budget.
//
// Options besides Google Benchmark's own (see --help):
//   --shapes=FILE   shape file (else $GEMMI8_BENCH_SHAPES, else bench/shapes.txt);
//                   "none": only the fully-connected shapes (and the peak loops)
//   --fc_shapes=FILE  fully-connected shape file (else $GEMMI8_BENCH_FC_SHAPES, else
//                   bench/shapes-fc.txt); "none": no fully-connected part
//   --fc_min_time=S minimum time per repetition on the fully-connected shapes
//                   (default: --benchmark_min_time's)
//   --real_time     time by wall clock (names get Google Benchmark's /real_time)
// Environment: GEMMI8_BENCH_MEMORY_MB (set-up memory budget, default half the
// physical memory, at most 8192), GEMMI8_BENCH_ISAS (comma-separated gemmi8 kernel
// sets to benchmark, or "best": each case on the best one it runs on here; default
// all), GEMMI8_BENCH_THREADS (the cases flagged BENCH_CASE_THREADS again on that many
// threads, as <library>@<threads>/...; default 2, 1 for none).
// Exit status 2 if any benchmark failed (after all have run).

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "cases.h"

namespace {

struct Instance {
  const bench_case* kase = nullptr;
  int threads = 1;
  bench_shape shape = {0, 0, 0};
  std::string isa;  // gemmi8 kernel set, or empty
  std::string name;
  void* state = nullptr;
  std::string setup_error;  // remembered: a failed setup is not retried
  unsigned long long last_use = 0;
};

std::vector<std::unique_ptr<Instance>> instances;
std::vector<std::string> failed;
unsigned long long use_clock = 0;
size_t memory_budget = size_t{4096} << 20;

// Half the physical memory, at most 8 GiB (4 GiB if unknown): the fully-connected
// shapes keep dozens of weight matrices of up to 90 MB set up at once.
size_t DefaultMemoryBudget()
{
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return size_t{4096} << 20;
  const double half = 0.5 * static_cast<double>(pages) * static_cast<double>(page);
  const double cap = static_cast<double>(size_t{8192} << 20);
  return static_cast<size_t>(half < cap ? half : cap);
}

void Release(Instance* in)
{
  if (in->state != nullptr) {
    in->kase->teardown(in->state);
    in->state = nullptr;
  }
}

// Sets the instance up if it is not already, then evicts others over the budget.
const char* Acquire(Instance* in)
{
  in->last_use = ++use_clock;
  if (in->state != nullptr) return nullptr;
  if (!in->setup_error.empty()) return in->setup_error.c_str();
  const char* isa = in->isa.empty() ? nullptr : in->isa.c_str();
  void* state = nullptr;
  const char* err = in->kase->setup(&in->shape, isa, &state);
  if (err != nullptr) {
    in->setup_error = std::string("setup: ") + err;
    return in->setup_error.c_str();
  }
  in->state = state;
  while (bench_live_bytes() > memory_budget) {
    Instance* lru = nullptr;
    for (auto& other : instances) {
      if (other.get() != in && other->state != nullptr &&
          (lru == nullptr || other->last_use < lru->last_use)) {
        lru = other.get();
      }
    }
    if (lru == nullptr) break;
    Release(lru);
  }
  return nullptr;
}

void Fail(benchmark::State& st, Instance* in, const char* err)
{
  st.SkipWithError(err);
  std::string entry = in->name + ": " + err;
  for (const auto& f : failed) {
    if (f == entry) return;
  }
  failed.push_back(entry);
}

// Threaded runs: the idle threads of the library that ran before keep spinning for a
// while (OpenBLAS's up to about 2^28 cycles, OpenMP's and gemmi8's less), and on a
// machine with as many cores as threads they would take a core from this run. A
// threaded run that follows another library's threaded run waits for them to sleep.
std::string last_threaded_library;

void Settle(const Instance* in)
{
  if (in->threads <= 1) return;
  const std::string library = in->kase->library;
  if (!last_threaded_library.empty() && last_threaded_library != library) usleep(150000);
  last_threaded_library = library;
}

void Run(benchmark::State& st, Instance* in)
{
  bench_threads = in->threads;
  Settle(in);
  const char* err = Acquire(in);
  if (err == nullptr && in->kase->prepare != nullptr) err = in->kase->prepare(in->state);
  if (err != nullptr) {
    Fail(st, in, err);
    return;
  }
  if (in->kase->label != nullptr) {
    const char* label = in->kase->label(in->state);
    if (label != nullptr && label[0] != '\0') st.SetLabel(label);
  }
  for (auto _ : st) {
    err = in->kase->run(in->state);
    if (err != nullptr) {
      Fail(st, in, err);
      break;
    }
  }
  if (in->kase->ops != nullptr || !(in->kase->flags & BENCH_CASE_WEIGHT_BYTES)) {
    const double ops =
        in->kase->ops != nullptr
            ? in->kase->ops(in->state)
            : 2.0 * static_cast<double>(in->shape.row) * static_cast<double>(in->shape.col) *
                  static_cast<double>(in->shape.depth);
    st.counters["GOPS"] =
        benchmark::Counter(ops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  }
  if (in->kase->bytes != nullptr) {
    const double bytes = in->kase->bytes(in->state);
    st.counters["weight_bytes"] = benchmark::Counter(bytes);
    st.counters["GBps"] =
        benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  }
}

bool Listed(const char* const* names, const char* name)
{
  for (; names != nullptr && *names != nullptr; names++) {
    if (std::strcmp(*names, name) == 0) return true;
  }
  return false;
}

// GEMMI8_BENCH_ISAS=generic,avx2 restricts the gemmi8 kernel sets benchmarked;
// GEMMI8_BENCH_ISAS=best keeps each case's best one (BestIsaOnly).
bool BestIsaOnly()
{
  const char* list = std::getenv("GEMMI8_BENCH_ISAS");
  return list != nullptr && std::strcmp(list, "best") == 0;
}

bool Wanted(const char* isa)
{
  const char* list = std::getenv("GEMMI8_BENCH_ISAS");
  if (list == nullptr || list[0] == '\0' || BestIsaOnly()) return true;
  std::string padded = std::string(",") + list + ",";
  return padded.find(std::string(",") + isa + ",") != std::string::npos;
}

std::string ShapeName(const bench_shape& s)
{
  return std::to_string(s.row) + "x" + std::to_string(s.col) + "x" + std::to_string(s.depth);
}

// Reads a shape file into shapes; false (after a message) on an error.
bool ReadShapes(const std::string& path, std::vector<bench_shape>* shapes)
{
  shapes->assign(256, bench_shape{0, 0, 0});
  char err[512];
  long count = bench_read_shapes(path.c_str(), shapes->data(), shapes->size(), err,
                                 sizeof(err));
  if (count < 0) {
    std::fprintf(stderr, "gemmi8-bench: %s\n", err);
    return false;
  }
  if (count == 0 || static_cast<size_t>(count) > shapes->size()) {
    std::fprintf(stderr, "gemmi8-bench: %s: expected 1 to %zu shapes, found %ld\n",
                 path.c_str(), shapes->size(), count);
    return false;
  }
  shapes->resize(static_cast<size_t>(count));
  return true;
}

std::set<std::string> registered;
bool real_time = false;

// Registers one benchmark (unless one of that name exists); min_time 0: the default.
// threads > 1: library@threads, timed by wall clock.
void Register(const bench_case* c, const std::string& isa, const bench_shape& shape,
              double min_time, int threads = 1, bool tagged = false) {
  std::string variant = c->variant;
  if (!isa.empty()) variant += "-" + isa;
  std::string library = c->library;
  if (threads > 1 || tagged) library += "@" + std::to_string(threads);
  std::string name = library + "/" + variant + "/" + ShapeName(shape);
  if (!registered.insert(name).second) return;
  auto in = std::make_unique<Instance>();
  in->kase = c;
  in->shape = shape;
  in->isa = isa;
  in->threads = threads;
  in->name = name;
  Instance* raw = in.get();
  instances.push_back(std::move(in));
  auto* b = benchmark::RegisterBenchmark(raw->name.c_str(),
                                         [raw](benchmark::State& st) { Run(st, raw); });
  b->Unit(benchmark::kMicrosecond);
  if (min_time > 0) b->MinTime(min_time);
  if (real_time || threads > 1 || tagged) b->UseRealTime();
}

extern "C" {
static void AddContext(void* ctx, const char* key, const char* value)
{
  static_cast<void>(ctx);
  benchmark::AddCustomContext(key, value != nullptr ? value : "(null)");
}
}

void PrintOwnHelp()
{
  std::printf(
      "gemmi8-bench options:\n"
      "  --shapes=FILE   shapes 'Row Col Depth' a line (default $GEMMI8_BENCH_SHAPES or\n"
      "                  bench/shapes.txt); Row = N, Col = M, Depth = K; none: only the\n"
      "                  fully-connected shapes and the peak loops\n"
      "  --fc_shapes=FILE  fully-connected shapes, for the cases that run on them\n"
      "                  (default $GEMMI8_BENCH_FC_SHAPES or bench/shapes-fc.txt; none: no\n"
      "                  fully-connected part)\n"
      "  --fc_min_time=S minimum seconds per repetition on the fully-connected shapes\n"
      "                  (default: as --benchmark_min_time)\n"
      "  --real_time     measure wall-clock time (names end in /real_time)\n"
      "  GEMMI8_BENCH_MEMORY_MB  memory kept for set-up cases (default half the\n"
      "                          physical memory, at most 8192)\n"
      "  GEMMI8_BENCH_ISAS       gemmi8 kernel sets to run, comma-separated, or best\n"
      "                          (each case's best kernel set here; default all)\n"
      "Benchmarks are named <library>/<variant>/<Row>x<Col>x<Depth>; select them with\n"
      "--benchmark_filter=REGEX. Google Benchmark's options follow.\n\n");
}

}  // namespace

int main(int argc, char** argv)
{
  // Our options first; Google Benchmark rejects what it does not know.
  std::string shapes_path, fc_shapes_path;
  double fc_min_time = 0;
  int kept = 1;
  for (int i = 1; i < argc; i++) {
    if (std::strncmp(argv[i], "--shapes=", 9) == 0) {
      shapes_path = argv[i] + 9;
      if (shapes_path.empty()) shapes_path = "none";
    } else if (std::strncmp(argv[i], "--fc_shapes=", 12) == 0) {
      fc_shapes_path = argv[i] + 12;
      if (fc_shapes_path.empty()) fc_shapes_path = "none";
    } else if (std::strncmp(argv[i], "--fc_min_time=", 14) == 0) {
      char* end = nullptr;
      fc_min_time = std::strtod(argv[i] + 14, &end);
      if (end == argv[i] + 14 || *end != '\0' || fc_min_time < 0) {
        std::fprintf(stderr, "gemmi8-bench: bad %s\n", argv[i]);
        return 1;
      }
    } else if (std::strcmp(argv[i], "--real_time") == 0) {
      real_time = true;
    } else {
      if (std::strcmp(argv[i], "--help") == 0) PrintOwnHelp();
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  if (shapes_path.empty()) {
    const char* env = std::getenv("GEMMI8_BENCH_SHAPES");
    shapes_path = env != nullptr && env[0] != '\0' ? env : "bench/shapes.txt";
  }
  if (fc_shapes_path.empty()) {
    const char* env = std::getenv("GEMMI8_BENCH_FC_SHAPES");
    fc_shapes_path = env != nullptr && env[0] != '\0' ? env : "bench/shapes-fc.txt";
  }
  memory_budget = DefaultMemoryBudget();
  if (const char* env = std::getenv("GEMMI8_BENCH_MEMORY_MB")) {
    memory_budget = static_cast<size_t>(std::strtoull(env, nullptr, 10)) << 20;
  }

  std::vector<bench_shape> shapes, fc_shapes;
  if (shapes_path != "none" && !ReadShapes(shapes_path, &shapes)) return 1;
  if (fc_shapes_path != "none" && !ReadShapes(fc_shapes_path, &fc_shapes)) return 1;
  if (shapes.empty() && fc_shapes.empty()) {
    std::fprintf(stderr, "gemmi8-bench: no shapes (both shape files are 'none')\n");
    return 1;
  }
  // The distinct weight matrices (Row x Depth) of the fully-connected shapes.
  std::vector<bench_shape> fc_weights;
  for (const bench_shape& shape : fc_shapes) {
    bool seen = false;
    for (const bench_shape& w : fc_weights) {
      seen = seen || (w.row == shape.row && w.depth == shape.depth);
    }
    if (!seen) fc_weights.push_back(bench_shape{shape.row, 0, shape.depth});
  }

  size_t library_count = 0;
  const bench_library* const* libraries = bench_libraries(&library_count);
  for (size_t i = 0; i < library_count; i++) {
    if (libraries[i]->init != nullptr) libraries[i]->init();
  }

  // GEMMI8_BENCH_THREADS: the thread counts of the threaded runs, comma-separated
  // (default 2; 1 alone: none). "1,2" registers the threaded cases at one thread
  // too (<library>@1/...), through the same code path, for the threads-under-load
  // comparison (bench/threads/load.sh).
  std::vector<int> threads_list;
  std::string threads_text = "2";
  if (const char* t = std::getenv("GEMMI8_BENCH_THREADS")) {
    if (t[0] != '\0') threads_text = t;
  }
  for (size_t pos = 0; pos <= threads_text.size();) {
    size_t end = threads_text.find(',', pos);
    if (end == std::string::npos) end = threads_text.size();
    const int n = std::atoi(threads_text.substr(pos, end - pos).c_str());
    if (n >= 1) threads_list.push_back(n);
    pos = end + 1;
  }
  const bool threaded_runs =
      threads_list.size() > 1 || (threads_list.size() == 1 && threads_list[0] > 1);
  benchmark::AddCustomContext("bench_threads", threads_text);

  const char* isas[16];
  size_t isa_count = bench_gemmi8_isas(isas, 16);
  if (isa_count > 16) isa_count = 16;

  size_t case_count = 0;
  const bench_case* const* cases = bench_cases(&case_count);
  std::string skipped;
  for (size_t i = 0; i < case_count; i++) {
    const bench_case* c = cases[i];
    const char* why = c->unavailable != nullptr ? c->unavailable() : nullptr;
    if (why != nullptr) {
      std::fprintf(stderr, "gemmi8-bench: skipping %s/%s: %s\n", c->library, c->variant, why);
      skipped += std::string(skipped.empty() ? "" : "; ") + c->library + "/" + c->variant +
                 " (" + why + ")";
      continue;
    }
    std::vector<std::string> targets;
    if (c->flags & BENCH_CASE_GEMMI8_ISA) {
      for (size_t j = 0; j < isa_count; j++) {
        if (!Listed(c->skip_isas, isas[j]) && Wanted(isas[j])) targets.push_back(isas[j]);
      }
    } else {
      targets.push_back("");
    }
    if (c->flags & BENCH_CASE_THREADS_ONLY) continue;
    if (c->flags & BENCH_CASE_WEIGHT_BYTES) {
      for (const bench_shape& w : fc_weights) Register(c, "", w, fc_min_time);
      continue;
    }
    // A case without a shape (a peak loop) runs once, as shape 0x0x0.
    const std::vector<bench_shape> no_shape(1, bench_shape{0, 0, 0});
    const std::vector<bench_shape>& case_shapes =
        (c->flags & BENCH_CASE_NO_SHAPE) ? no_shape : shapes;
    if (((c->flags & BENCH_CASE_BEST_ISA_ONLY) || BestIsaOnly()) && targets.size() > 1) {
      targets.erase(targets.begin(), targets.end() - 1);
    }
    for (const std::string& isa : targets) {
      for (const bench_shape& shape : case_shapes) Register(c, isa, shape, 0);
    }
    if (!(c->flags & BENCH_CASE_FC) || targets.empty()) continue;
    // Fully-connected shapes: gemmi8 on its best kernel set (the last) and avx2.
    std::vector<std::string> fc_targets(1, targets.back());
    if ((c->flags & BENCH_CASE_GEMMI8_ISA) && !(c->flags & BENCH_CASE_FC_BEST_ISA) &&
        targets.back() != "avx2") {
      for (const std::string& isa : targets) {
        if (isa == "avx2") fc_targets.push_back(isa);
      }
    }
    for (const std::string& isa : fc_targets) {
      for (const bench_shape& shape : fc_shapes) Register(c, isa, shape, fc_min_time);
    }
  }
  // The same cases on several threads: the ten shapes and the fully-connected ones.
  for (size_t i = 0; i < case_count && threaded_runs; i++) {
    const bench_case* c = cases[i];
    if (!(c->flags & BENCH_CASE_THREADS)) continue;
    if (c->unavailable != nullptr && c->unavailable() != nullptr) continue;
    std::string isa;
    if (c->flags & BENCH_CASE_GEMMI8_ISA) {
      for (size_t j = 0; j < isa_count; j++) {
        if (!Listed(c->skip_isas, isas[j]) && Wanted(isas[j])) isa = isas[j];
      }
      if (isa.empty()) continue;
    }
    for (const int threads : threads_list) {
      for (const bench_shape& shape : shapes) Register(c, isa, shape, 0, threads, true);
      if (c->flags & BENCH_CASE_FC) {
        for (const bench_shape& shape : fc_shapes) {
          Register(c, isa, shape, fc_min_time, threads, true);
        }
      }
    }
  }

  std::string names, fc_names;
  for (const bench_shape& shape : shapes) {
    names += (names.empty() ? "" : ",") + ShapeName(shape);
  }
  for (const bench_shape& shape : fc_shapes) {
    fc_names += (fc_names.empty() ? "" : ",") + ShapeName(shape);
  }
  char text[64];
  std::snprintf(text, sizeof(text), "%g", fc_min_time);
  benchmark::AddCustomContext("shapes_file", shapes_path);
  benchmark::AddCustomContext("shapes", names.empty() ? "none" : names);
  benchmark::AddCustomContext("fc_shapes_file", fc_shapes.empty() ? "none" : fc_shapes_path);
  benchmark::AddCustomContext("fc_shapes", fc_names.empty() ? "none" : fc_names);
  benchmark::AddCustomContext("fc_min_time", fc_min_time > 0 ? text : "default");
  std::snprintf(text, sizeof(text), "%zu", memory_budget >> 20);
  benchmark::AddCustomContext("setup_memory_budget_mb", text);
  benchmark::AddCustomContext("skipped_cases", skipped.empty() ? "none" : skipped);
  for (size_t i = 0; i < library_count; i++) {
    if (libraries[i]->context != nullptr) libraries[i]->context(AddContext, nullptr);
  }

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (auto& in : instances) Release(in.get());

  if (!failed.empty()) {
    std::fprintf(stderr, "gemmi8-bench: %zu benchmark(s) failed:\n", failed.size());
    for (const auto& f : failed) std::fprintf(stderr, "  %s\n", f.c_str());
    return 2;
  }
  return 0;
}
