# gemmi8 — plain Makefile.
#   make                 libgemmi8.a and libgemmi8.so
#   make test            builds and runs the test suite (every ISA this CPU has)
#   make SANITIZE=1 test the same under AddressSanitizer and UBSan
#   make test-tsan       the threaded tests under ThreadSanitizer (build-tsan/)
#   make test-valgrind   the suite under valgrind memcheck
#   make bench           builds and runs the benchmark's headline run (installs its
#                        packages; about 8 minutes, about 1 GB); make bench-full: the
#                        exhaustive sweep (half an hour, about 10 GB)
#   make install PREFIX=/usr/local   (make uninstall removes it; ARCH=aarch64/aarch32
#                        installs that cross build)
#   make SETS="generic avx512vnni" TYPES="qu8s8 bin" [test|size|...]
#                        a build of chosen kernel sets (GEMMI8_ISA's names; generic is
#                        always built) and types (qu8 qs8 qu8s8 bin q4), in its own
#                        build directory (build-select-...); default: everything
#   make size            text+data of libgemmi8.a per kernel set and per type; fails
#                        above the budget of size-budget.txt for this ARCH and selection
#   make digits          the digits networks (examples/digits/): accuracy of float,
#                        int8 and binary, checked against examples/digits/expected.txt
#   make python-test     the Python module's tests (python/; make python-digits: the
#                        digits networks from Python, against the C program)
# ISA flags are given per file by the suffix of its name (-avx2.c, -avx512vnni.c,
# ...); everything else compiles with no ISA flags.

PREFIX   ?= /usr/local
ARCH     ?= $(shell uname -m)
BUILD    := build

CC       ?= cc
CXX      ?= c++
OPT      ?= -O2
CFLAGS   ?=
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
BASEFLAGS = -std=c11 $(OPT) -g -fPIC -ffp-contract=off -fvisibility=hidden \
            -Iinclude -Isrc -Ikernels $(WARN) -D_GNU_SOURCE $(SELECT_FLAGS)
LDLIBS   := -lpthread

ifeq ($(SANITIZE),1)
  SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif
ifeq ($(SANITIZE),thread)
  SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
endif

# Libraries land in the top directory for native builds, in $(BUILD) for cross builds.
LIBDIR := .
ifeq ($(ARCH),x86_64)
  KERNEL_DIRS := kernels/generic kernels/x86_avx2 kernels/x86_avx512
else ifeq ($(ARCH),aarch64)
  # Cross build with Debian's gcc-aarch64-linux-gnu; tests run under qemu-user.
  ifneq ($(shell uname -m),aarch64)
    CROSS  ?= aarch64-linux-gnu-
    RUNNER ?= qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu $(QEMU_CPU)
    BUILD  := build-aarch64
    LIBDIR := $(BUILD)
  endif
  KERNEL_DIRS := kernels/generic kernels/aarch64
else ifeq ($(ARCH),aarch32)
  # ARMv7-A with NEON, hard float (Debian armhf).
  ifneq ($(shell uname -m),armv7l)
    CROSS  ?= arm-linux-gnueabihf-
    RUNNER ?= qemu-arm -L /usr/arm-linux-gnueabihf -cpu $(QEMU_CPU)
    BUILD  := build-aarch32
    LIBDIR := $(BUILD)
  endif
  ARCHFLAGS := -march=armv7-a -mfloat-abi=hard -mfpu=vfpv3-d16
  KERNEL_DIRS := kernels/generic kernels/aarch32
else
  KERNEL_DIRS := kernels/generic
endif
QEMU_CPU ?= max

# ---- kernel sets and types (kernels/list.sh reads the kernel lists) ---------------
ALL_TYPES  := qu8 qs8 qu8s8 bin q4
ARCH_SETS  := $(shell sh kernels/list.sh sets "$(KERNEL_DIRS)")
SEL_TYPES  := $(or $(strip $(TYPES)),$(ALL_TYPES))
# the lists compiled: qu8's serves qu8s8 too, dw's every 8-bit type; q4: the 4-bit
# weights of the qd8 (with qs8) and qdu8 (with qu8s8) GEMMs
LIST_TYPES := $(if $(filter qu8 qu8s8,$(SEL_TYPES)),qu8) $(filter qs8 bin q4,$(SEL_TYPES)) \
              $(if $(filter qu8 qs8 qu8s8,$(SEL_TYPES)),dw)
# set names: GEMMI8_ISA's (neondot-a510 as neondot_a510); neondot brings neondot_a510
SEL_SETS   := $(if $(strip $(SETS)),generic $(subst -,_,$(SETS)) $(if $(filter \
                neondot,$(SETS)),neondot_a510),$(ARCH_SETS))
ifneq ($(filter-out $(ALL_TYPES),$(TYPES)),)
  $(error TYPES: $(filter-out $(ALL_TYPES),$(TYPES)) not a type (of $(ALL_TYPES)))
endif
ifneq ($(filter-out $(ARCH_SETS),$(SEL_SETS)),)
  $(error SETS: $(filter-out $(ARCH_SETS),$(SEL_SETS)) not a kernel set of $(ARCH) (of $(ARCH_SETS)))
endif
SELECT_FLAGS :=
ifneq ($(strip $(SETS)),)
  SELECT_FLAGS += -DGEMMI8_SELECT_SETS $(foreach s,$(sort $(SEL_SETS)),-DGEMMI8_SET_$(s)=1)
endif
ifneq ($(strip $(TYPES)),)
  SELECT_FLAGS += -DGEMMI8_SELECT_TYPES $(foreach t,$(sort $(SEL_TYPES)),-DGEMMI8_TYPE_$(t)=1)
endif
SELECT_NAME := $(subst $(eval) ,-,$(strip $(if $(strip $(SETS)),sets $(SETS)) $(if $(strip \
                 $(TYPES)),types $(TYPES))))
ifneq ($(SELECT_NAME),)
  # a selection builds apart (its objects are compiled with other flags): build-sets-
  # generic-avx512vnni-types-qu8s8-bin
  BUILD  := $(BUILD)-$(SELECT_NAME)
  LIBDIR := $(BUILD)
endif
KERNEL_SRCS := $(shell sh kernels/list.sh files "$(LIST_TYPES)" "$(SEL_SETS)" "$(KERNEL_DIRS)")

ifdef CROSS
  CC  := $(CROSS)gcc
  CXX := $(CROSS)g++
  AR  := $(CROSS)ar
endif
ifeq ($(SANITIZE),1)
  # Instrumented objects and libraries live apart from the plain build.
  BUILD  := $(BUILD)-sanitize
  LIBDIR := $(BUILD)
endif
ifeq ($(SANITIZE),thread)
  BUILD  := $(BUILD)-tsan
  LIBDIR := $(BUILD)
endif

# One version, read from the header's GEMMI8_VERSION_MAJOR/MINOR/PATCH: the soname
# is libgemmi8.so.MAJOR, the installed file libgemmi8.so.MAJOR.MINOR.PATCH and the
# pkg-config Version MAJOR.MINOR.PATCH. (The pattern's '.' stands for the '#', which
# make versions read differently inside a function call.)
version_part = $(shell sed -n 's/^.[[:space:]]*define[[:space:]]\{1,\}GEMMI8_VERSION_$(1)[[:space:]]\{1,\}\([0-9]\{1,\}\).*/\1/p' include/gemmi8.h)
VERSION_MAJOR := $(call version_part,MAJOR)
VERSION_MINOR := $(call version_part,MINOR)
VERSION_PATCH := $(call version_part,PATCH)
ifneq ($(words $(VERSION_MAJOR) $(VERSION_MINOR) $(VERSION_PATCH)),3)
  ifneq ($(filter-out clean,$(or $(MAKECMDGOALS),all)),)
    $(error include/gemmi8.h: no GEMMI8_VERSION_MAJOR/MINOR/PATCH numbers found)
  endif
endif
VERSION  := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)
SONAME   := libgemmi8.so.$(VERSION_MAJOR)

LIB_SRCS := $(wildcard src/*.c) $(wildcard pack/*.c) $(KERNEL_SRCS)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)

TEST_SRCS := $(wildcard test/*.c)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/%.o)

BENCH_CSRCS  := $(wildcard bench/*.c)
BENCH_CXXSRCS := $(wildcard bench/*.cc)
BENCH_OBJS := $(BENCH_CSRCS:%.c=$(BUILD)/%.o) $(BENCH_CXXSRCS:%.cc=$(BUILD)/%.o)

.PHONY: all lib test test-valgrind test-tsan tsan-run bench install uninstall clean size
all: lib
lib: $(LIBDIR)/libgemmi8.a $(LIBDIR)/libgemmi8.so

# Per-ISA flags, chosen by the file name's last part.
ISAFLAGS_avx2          := -mavx2 -mfma -mbmi2
ISAFLAGS_avx512bw      := -mavx512f -mavx512bw -mavx512dq -mavx512vl -mbmi2
ISAFLAGS_avx512vnni    := -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512vnni -mfma -mbmi2
ISAFLAGS_avx512vpopcnt := -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512vpopcntdq \
                          -mavx512bitalg -mbmi2
ISAFLAGS_armv7neon     := -mfpu=neon
ISAFLAGS_neon          :=
ISAFLAGS_neondot       := -march=armv8.2-a+dotprod
ISAFLAGS_i8mm          := -march=armv8.2-a+dotprod+i8mm
ISAS := avx2 avx512bw avx512vnni avx512vpopcnt armv7neon neon neondot i8mm
isaflags = $(foreach i,$(ISAS),$(if $(filter %-$(i).c,$(1)),$(ISAFLAGS_$(i))))
# Microkernels are leaf functions that call nothing back: no unwind tables (both flags:
# aarch64's GCC emits them for -funwind-tables alone, which it turns on). Drivers
# and packing run once per call or per tile, and the portable kernels only where a CPU
# has none of the vector sets (they are the tests' reference otherwise): compiled for
# size.
kernelflags = $(if $(filter kernels/%,$(1)),-fno-asynchronous-unwind-tables -fno-unwind-tables)$(if \
                $(filter src/% pack/% kernels/generic/%,$(1)), -Os)

# Header dependencies come from the compiler (-MMD -MP: one .d file per object,
# included at the end). Flags live in this Makefile: objects depend on it too.
DEPFLAGS = -MMD -MP

$(BUILD)/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(DEPFLAGS) $(BASEFLAGS) $(ARCHFLAGS) $(call isaflags,$<) $(call kernelflags,$<) $(SANFLAGS) \
	  $(CFLAGS) -c $< -o $@

$(LIBDIR)/libgemmi8.a: $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(LIBDIR)/libgemmi8.so: $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined $(ARCHFLAGS) $(SANFLAGS) \
	  $(LDFLAGS) -o $@ $^ $(LDLIBS)

# ---- tests ---------------------------------------------------------------------
# The threaded tests also plug in OpenMP (when the compiler has it) and pthreadpool
# (when libpthreadpool-dev is installed, native builds only) as the caller's pool.
# (Not under ThreadSanitizer: neither library is instrumented for it.)
TEST_OPENMP := $(shell echo 'int main(void){return 0;}' | \
                 $(CC) -fopenmp -x c - -o /dev/null 2>/dev/null && echo -fopenmp)
ifeq ($(SANITIZE),thread)
  TEST_OPENMP :=
else ifeq ($(CROSS),)
  TEST_PTHREADPOOL := $(if $(and $(wildcard /usr/include/pthreadpool.h),$(wildcard \
                        /usr/lib/*/libpthreadpool.so)),1)
endif
$(BUILD)/test/test-threads.o: CFLAGS += $(TEST_OPENMP) \
  $(if $(TEST_PTHREADPOOL),-DGEMMI8_TEST_PTHREADPOOL)
TEST_LDLIBS := $(TEST_OPENMP) $(if $(TEST_PTHREADPOOL),-lpthreadpool)

$(BUILD)/gemmi8-test: $(TEST_OBJS) $(BUILD)/libgemmi8-test.a
	$(CC) $(ARCHFLAGS) $(SANFLAGS) $(LDFLAGS) -o $@ $(TEST_OBJS) $(BUILD)/libgemmi8-test.a \
	  $(TEST_LDLIBS) $(LDLIBS) -lm

$(BUILD)/libgemmi8-test.a: $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# The README's examples (each ```c block a program) are compiled and run as part of
# the tests: readme-example (a layer), readme-threads (the same on threads),
# readme-conv (a convolution operator), readme-float (a float layer quantized by the
# helpers).
readme_block = awk -v want=$(1) '/^```c$$/ { b++; on = b == want; next } /^```$$/ { on = 0 } on' README.md
$(BUILD)/readme-example.c: README.md
	@mkdir -p $(dir $@)
	$(call readme_block,1) > $@
$(BUILD)/readme-conv.c: README.md
	@mkdir -p $(dir $@)
	$(call readme_block,3) > $@
$(BUILD)/readme-threads.c: README.md
	@mkdir -p $(dir $@)
	$(call readme_block,2) > $@
$(BUILD)/readme-float.c: README.md
	@mkdir -p $(dir $@)
	$(call readme_block,4) > $@

$(BUILD)/readme-%: $(BUILD)/readme-%.c $(BUILD)/libgemmi8-test.a Makefile
	$(CC) $(DEPFLAGS) $(BASEFLAGS) $(ARCHFLAGS) $(SANFLAGS) $(LDFLAGS) $(TEST_OPENMP) -o $@ $< \
	  $(BUILD)/libgemmi8-test.a $(LDLIBS) -lm

# GEMMI8_ISA is read once per process: the example checks that it forces the set,
# and that a name the build does not know is reported (once, on stderr) and ignored.
# A build without a README example's type (make TYPES=...) says it skips the example.
README_QU8   := $(filter qu8,$(SEL_TYPES))
README_QU8S8 := $(filter qu8s8,$(SEL_TYPES))
test: $(BUILD)/gemmi8-test $(if $(README_QU8),$(BUILD)/readme-example) \
      $(if $(README_QU8S8),$(BUILD)/readme-threads $(BUILD)/readme-conv $(BUILD)/readme-float)
ifneq ($(README_QU8),)
	$(RUNNER) $(abspath $(BUILD))/readme-example
	GEMMI8_ISA=generic $(RUNNER) $(abspath $(BUILD))/readme-example | grep -q 'on generic: ok'
	GEMMI8_ISA=no-such-level $(RUNNER) $(abspath $(BUILD))/readme-example 2>&1 | \
	  grep -q 'GEMMI8_ISA=no-such-level ignored (not a level of this build)'
else
	@echo "skipped: README example 1 (qu8 is not in this build)"
endif
ifneq ($(README_QU8S8),)
	$(RUNNER) $(abspath $(BUILD))/readme-threads
	$(RUNNER) $(abspath $(BUILD))/readme-conv
	$(RUNNER) $(abspath $(BUILD))/readme-float
else
	@echo "skipped: README examples 2, 3 and 4 (qu8s8 is not in this build)"
endif
	$(RUNNER) $(abspath $(BUILD))/gemmi8-test

# The suite under valgrind memcheck, leaks included. Valgrind's CPU has AVX2 and no
# AVX-512: the API groups run generic and avx2, the AVX-512 sets are skipped visibly.
test-valgrind: $(BUILD)/gemmi8-test
	valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite -q \
	  $(abspath $(BUILD))/gemmi8-test

# The threads group (every GEMM on pools and parallel-fors, 1..8 threads, every kernel
# set) built and run under ThreadSanitizer, in build-tsan/.
test-tsan:
	$(MAKE) SANITIZE=thread tsan-run
tsan-run: $(BUILD)/gemmi8-test
	GEMMI8_TEST_GROUP=threads,conv GEMMI8_TEST_QUICK=1 TSAN_OPTIONS=halt_on_error=1 \
	  $(RUNNER) $(abspath $(BUILD))/gemmi8-test

# ---- benchmark -----------------------------------------------------------------
# libxnnpack-dev needs libpthreadpool-dev (its header includes pthreadpool.h) but
# does not depend on it.
BENCH_PKGS := libbenchmark-dev libopenblas-dev libgemmlowp-dev libdnnl-dev libxnnpack-dev \
              libpthreadpool-dev gnuplot-nox time
# Peers (gemmlowp, oneDNN, XNNPACK) are built in when their headers are installed
# (make bench installs them) and skipped, visibly, otherwise. Google Benchmark and
# OpenBLAS are required.
BENCH_HAVE_GEMMLOWP := $(if $(wildcard /usr/include/gemmlowp/public/gemmlowp.h),1,0)
BENCH_HAVE_DNNL     := $(if $(wildcard /usr/include/oneapi/dnnl/dnnl.hpp),1,0)
BENCH_HAVE_XNNPACK  := $(if $(and $(wildcard /usr/include/xnnpack.h),$(wildcard /usr/include/pthreadpool.h)),1,0)
BENCH_PEERS    := GEMMLOWP=$(BENCH_HAVE_GEMMLOWP) DNNL=$(BENCH_HAVE_DNNL) XNNPACK=$(BENCH_HAVE_XNNPACK)
BENCH_CXXFLAGS := -DGEMMI8_BENCH_HAVE_GEMMLOWP=$(BENCH_HAVE_GEMMLOWP) \
                  -DGEMMI8_BENCH_HAVE_DNNL=$(BENCH_HAVE_DNNL) \
                  -DGEMMI8_BENCH_HAVE_XNNPACK=$(BENCH_HAVE_XNNPACK)
BENCH_LDLIBS   := $(if $(filter 1,$(BENCH_HAVE_DNNL)),-ldnnl) \
                  $(if $(filter 1,$(BENCH_HAVE_XNNPACK)),-lXNNPACK -lpthreadpool)
# gemmlowp's AVX2 kernel is opt-in; only its file gets the AVX2 flags.
ifeq ($(ARCH),x86_64)
$(BUILD)/bench/cases-gemmlowp.o: BENCH_CXXFLAGS += -DGEMMLOWP_ENABLE_AVX2 -mavx2 -mfma
endif
# The caller's OpenMP parallel-for (threaded runs of gemmi8 on an OpenMP loop).
BENCH_OPENMP := $(shell echo 'int main(void){return 0;}' | \
                  $(CXX) -fopenmp -x c++ - -o /dev/null 2>/dev/null && echo -fopenmp)
$(BUILD)/bench/parallel-callers.o: BENCH_CXXFLAGS += $(BENCH_OPENMP)
BENCH_LDLIBS += $(BENCH_OPENMP)
# Rebuilds the peers' objects when the set of installed peers changes.
$(BUILD)/bench/peers.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(BENCH_PEERS)' | cmp -s - $@ || echo '$(BENCH_PEERS)' > $@

$(BUILD)/bench/%.o: bench/%.cc $(BUILD)/bench/peers.stamp Makefile
	@mkdir -p $(dir $@)
	$(CXX) $(DEPFLAGS) -std=c++17 -O2 -g -Iinclude -Wall -Wextra $(BENCH_CXXFLAGS) $(SANFLAGS) \
	  -c $< -o $@

# The benchmark links the library of its build: the top-level libgemmi8.a natively,
# build-sanitize/libgemmi8.a (and the sanitizers) with SANITIZE=1.
$(BUILD)/gemmi8-bench: $(BENCH_OBJS) $(LIBDIR)/libgemmi8.a
	$(CXX) $(SANFLAGS) $(LDFLAGS) -o $@ $(BENCH_OBJS) $(LIBDIR)/libgemmi8.a $(BENCH_LDLIBS) \
	  -lbenchmark -lopenblas -lpthread -lm

.PHONY: bench-deps bench-build bench-smoke bench-conv bench-full FORCE
FORCE:

bench-deps:
	@sh bench/deps.sh $(BENCH_PKGS)

# The headline run (bench/headline.sh): the ten shapes, batch 1, every convolution
# layer, each peer in its fastest configuration and the like-for-like ones, a group at
# a time with its progress; then the llm mode (bench-llm's run), the whole networks
# (bench-net; its failure, e.g. no ONNX Runtime to fetch, is reported and the run goes
# on), the headline tables, the charts, and each part's time and peak memory.
BENCH_NET := $(MAKE) --no-print-directory bench-net
BENCH_LLM := sh bench/llm/run.sh ./$(BUILD)/gemmi8-llm-bench
bench: bench-deps
	$(MAKE) $(BUILD)/gemmi8-bench $(BUILD)/gemmi8-conv-bench $(BUILD)/gemmi8-llm-bench
	GEMMI8_BENCH_NET='$(BENCH_NET)' GEMMI8_BENCH_NET_MD=$(BUILD)/net/net.md \
	GEMMI8_BENCH_LLM='$(BENCH_LLM)' \
	  sh bench/headline.sh ./$(BUILD)/gemmi8-bench ./$(BUILD)/gemmi8-conv-bench

# The exhaustive sweep: every case on every kernel set, the fully-connected layers at
# M = 1 to 8, the threaded runs, all interleaved in one run; then every convolution case.
bench-full: bench-deps
	$(MAKE) $(BUILD)/gemmi8-bench $(BUILD)/gemmi8-conv-bench
	sh bench/run.sh ./$(BUILD)/gemmi8-bench
	sh bench/conv/run.sh ./$(BUILD)/gemmi8-conv-bench

# The convolution benchmark alone (the conv mode of make bench-full).
bench-conv: bench-deps
	$(MAKE) $(BUILD)/gemmi8-conv-bench
	sh bench/conv/run.sh ./$(BUILD)/gemmi8-conv-bench

# The convolution benchmark: its own main, the case helpers and peak loops of bench/.
CONV_BENCH_OBJS := $(BUILD)/bench/conv/conv-bench.o $(filter-out $(BUILD)/bench/main.o,$(BENCH_OBJS))
$(BUILD)/gemmi8-conv-bench: $(CONV_BENCH_OBJS) $(LIBDIR)/libgemmi8.a
	$(CXX) $(SANFLAGS) $(LDFLAGS) -o $@ $(CONV_BENCH_OBJS) $(LIBDIR)/libgemmi8.a $(BENCH_LDLIBS) \
	  -lbenchmark -lopenblas -lpthread -lm

# The llm mode (bench/llm/README.md): transformer linear layers at M = 1 to 512, one
# thread and two, gemmi8's qd8 / qdu8 GEMMs and linear layers against OpenBLAS and
# oneDNN's int8 matmul with float output, the read loop at M = 1 and the vpdpbusd peak,
# interleaved in one run; build/llm.md. Its own main, the case helpers and peak loops
# of bench/.
LLM_BENCH_OBJS := $(BUILD)/bench/llm/llm-bench.o $(BUILD)/bench/llm/series-gemmi8.o \
                  $(BUILD)/bench/llm/series-openblas.o $(BUILD)/bench/llm/series-onednn.o
BENCH_SUPPORT_OBJS := $(filter-out $(BUILD)/bench/main.o,$(BENCH_OBJS))
$(BUILD)/gemmi8-llm-bench: $(LLM_BENCH_OBJS) $(BENCH_SUPPORT_OBJS) $(LIBDIR)/libgemmi8.a
	$(CXX) $(SANFLAGS) $(LDFLAGS) -o $@ $(LLM_BENCH_OBJS) $(BENCH_SUPPORT_OBJS) $(LIBDIR)/libgemmi8.a \
	  $(BENCH_LDLIBS) -lopenblas -lpthread -lm
-include $(LLM_BENCH_OBJS:.o=.d)

.PHONY: bench-llm bench-llm-smoke
bench-llm: bench-deps
	$(MAKE) $(BUILD)/gemmi8-llm-bench
	sh bench/llm/run.sh ./$(BUILD)/gemmi8-llm-bench

# Two small layers at M = 1 and 16, one round of short slices (CI: bench-smoke runs it).
bench-llm-smoke: $(BUILD)/gemmi8-llm-bench
	GEMMI8_LLM_SHAPES=bench/llm/shapes-smoke.txt GEMMI8_LLM_M=1,16 GEMMI8_LLM_ROUNDS=1 \
	GEMMI8_LLM_SLICE=0.002 GEMMI8_BENCH_OUT=$(BUILD)/bench-smoke \
	  sh bench/llm/run.sh ./$(BUILD)/gemmi8-llm-bench

# Threads under load: the threaded cases at one and two threads, idle and with CPU 0
# busy; the CPU time of an idle pool (bench/threads/).
$(BUILD)/idle-pool: bench/threads/idle-pool.c $(LIBDIR)/libgemmi8.a
	$(CC) $(BASEFLAGS) -o $@ $< $(LIBDIR)/libgemmi8.a $(LDLIBS)
$(BUILD)/two-pools: bench/threads/two-pools.c $(LIBDIR)/libgemmi8.a
	$(CC) $(BASEFLAGS) -o $@ $< $(LIBDIR)/libgemmi8.a $(LDLIBS)
$(BUILD)/split-cost: bench/threads/split-cost.c $(LIBDIR)/libgemmi8.a
	$(CC) $(BASEFLAGS) -o $@ $< $(LIBDIR)/libgemmi8.a $(LDLIBS)
$(BUILD)/paired-load: bench/threads/paired-load.c $(LIBDIR)/libgemmi8.a
	$(CC) $(BASEFLAGS) $(if $(TEST_PTHREADPOOL),-DGEMMI8_HAVE_PTHREADPOOL) -o $@ $< \
	  $(LIBDIR)/libgemmi8.a $(if $(TEST_PTHREADPOOL),-lpthreadpool) $(LDLIBS)
.PHONY: bench-load
bench-load: bench-deps
	$(MAKE) $(BUILD)/gemmi8-bench $(BUILD)/gemmi8-conv-bench $(BUILD)/idle-pool $(BUILD)/two-pools \
	  $(BUILD)/split-cost $(BUILD)/paired-load
	sh bench/threads/load.sh ./$(BUILD)/gemmi8-bench ./$(BUILD)/gemmi8-conv-bench ./$(BUILD)/idle-pool

# For CI, without running the benchmark: builds it and lists its benchmarks.
bench-build: $(BUILD)/gemmi8-bench $(BUILD)/gemmi8-conv-bench $(BUILD)/idle-pool \
             $(BUILD)/two-pools $(BUILD)/split-cost $(BUILD)/paired-load $(BUILD)/gemmi8-llm-bench
	./$(BUILD)/gemmi8-conv-bench --benchmark_list_tests=true > /dev/null
	./$(BUILD)/gemmi8-bench --benchmark_list_tests=true > $(BUILD)/bench-list.txt
	@echo "$(BUILD)/gemmi8-bench: $$(wc -l < $(BUILD)/bench-list.txt) benchmarks ($(BENCH_PEERS))"

# For CI, a few seconds: every case once on small shapes (peers check their
# results in setup), then the report and chart, into $(BUILD)/bench-smoke; and the
# llm mode's smoke run (bench-llm-smoke, a few seconds).
bench-smoke: $(BUILD)/gemmi8-bench $(BUILD)/gemmi8-conv-bench $(BUILD)/gemmi8-llm-bench \
             $(BUILD)/paired-load
	./$(BUILD)/paired-load --pairs 1 --block-ms 1 bench/shapes-smoke.txt \
	  bench/shapes-fc-smoke.txt bench/conv/layers-smoke.txt > $(BUILD)/paired-smoke.md
	GEMMI8_BENCH_SHAPES=bench/shapes-smoke.txt GEMMI8_BENCH_FC_SHAPES=bench/shapes-fc-smoke.txt GEMMI8_BENCH_REPS=1 \
	GEMMI8_BENCH_MIN_TIME=0.002 GEMMI8_BENCH_OUT=$(BUILD)/bench-smoke \
	  sh bench/run.sh ./$(BUILD)/gemmi8-bench
	GEMMI8_BENCH_CONV_LAYERS=bench/conv/layers-smoke.txt GEMMI8_BENCH_REPS=1 \
	GEMMI8_BENCH_MIN_TIME=0.002 GEMMI8_BENCH_OUT=$(BUILD)/bench-smoke \
	  sh bench/conv/run.sh ./$(BUILD)/gemmi8-conv-bench
	$(MAKE) --no-print-directory bench-llm-smoke

# ---- install -------------------------------------------------------------------
# Installs the library of the ARCH being built (a cross build installs its own).
LIBINST := $(DESTDIR)$(PREFIX)/lib
install: lib
	install -d $(LIBINST) $(DESTDIR)$(PREFIX)/include $(LIBINST)/pkgconfig
	install -m 644 include/gemmi8.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIBDIR)/libgemmi8.a $(LIBINST)/
	install -m 755 $(LIBDIR)/libgemmi8.so $(LIBINST)/libgemmi8.so.$(VERSION)
	ln -sf libgemmi8.so.$(VERSION) $(LIBINST)/$(SONAME)
	ln -sf $(SONAME) $(LIBINST)/libgemmi8.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' gemmi8.pc.in \
	  > $(LIBINST)/pkgconfig/gemmi8.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/gemmi8.h $(LIBINST)/libgemmi8.a \
	  $(LIBINST)/libgemmi8.so.$(VERSION) $(LIBINST)/$(SONAME) $(LIBINST)/libgemmi8.so \
	  $(LIBINST)/pkgconfig/gemmi8.pc

size: $(LIBDIR)/libgemmi8.a
	@sh kernels/size.sh "$(CROSS)size" $(LIBDIR)/libgemmi8.a "$(KERNEL_DIRS)" "$(ARCH)" \
	  "$(or $(strip $(SETS)),all)" "$(or $(strip $(TYPES)),all)" size-budget.txt

clean:
	rm -rf build build-* libgemmi8.a libgemmi8.so

# ---- fuzzing ----
# libFuzzer targets (test/fuzz/, one per test/fuzz/fuzz-<name>.c), built with clang-14
# under AddressSanitizer and UBSan; the library is compiled again, instrumented, into
# build-fuzz/ with the same per-file ISA flags as above. Native builds only.
#   make fuzz-build               build-fuzz/fuzz-<name> for every target
#   make fuzz FUZZ_SECONDS=8      each target for FUZZ_SECONDS per instruction set this
#                                 CPU has, FUZZ_JOBS at a time, on a temporary copy of
#                                 test/fuzz/corpus/<name>/; one line per run with its
#                                 executions; fails if any run finds a defect
FUZZ_CC      ?= clang-14
FUZZ_BUILD   := build-fuzz
FUZZ_SECONDS ?= 8
FUZZ_JOBS    ?= 2
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_NAMES   := $(patsubst test/fuzz/fuzz-%.c,%,$(wildcard test/fuzz/fuzz-*.c))
FUZZ_BINS    := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz-%)
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(FUZZ_BUILD)/%.o)
FUZZ_SUPPORT := $(FUZZ_BUILD)/test/fuzz/fuzz.o $(FUZZ_BUILD)/test/ref.o
FUZZ_OBJS    := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/test/fuzz/fuzz-%.o) $(FUZZ_SUPPORT)
# (made by pattern rules only: kept, not removed as intermediate files)
.SECONDARY: $(FUZZ_OBJS)

.PHONY: fuzz-build fuzz
fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	sh test/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_NAMES)

# Library and target objects: coverage instrumentation without libFuzzer's main. The
# reference and the shared support get the sanitizers only: their branches say
# nothing about the library, and their coverage callbacks took most of the time.
FUZZ_COV := -fsanitize=fuzzer-no-link
$(FUZZ_SUPPORT): FUZZ_COV :=
$(FUZZ_BUILD)/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(DEPFLAGS) $(BASEFLAGS) -Itest $(call isaflags,$<) $(call kernelflags,$<) \
	  $(FUZZ_COV) $(FUZZ_SAN) -c $< -o $@

$(FUZZ_BUILD)/libgemmi8.a: $(FUZZ_LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_BUILD)/fuzz-%: $(FUZZ_BUILD)/test/fuzz/fuzz-%.o $(FUZZ_SUPPORT) $(FUZZ_BUILD)/libgemmi8.a
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lm

-include $(FUZZ_LIB_OBJS:.o=.d) $(FUZZ_OBJS:.o=.d)

-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(BENCH_OBJS:.o=.d) $(BUILD)/readme-example.d $(BUILD)/readme-threads.d

# ---- example networks ------------------------------------------------------------
# ResNet-18, MobileNetV2 and a binary ResNet-18 built from gemmi8's operators
# (examples/net/): `make examples` builds $(BUILD)/net/gemmi8-net, and the networks
# without their main as $(BUILD)/net/libgnet.a for another program to link (with the
# library of its build). gemmi8-net -p runs the networks on pthreadpool too when
# libpthreadpool-dev is installed (native builds). -ffp-contract=off matters here as in
# the library: ops.c rounds every float operation where ONNX Runtime does.
NET_SRCS := examples/net/net.c examples/net/ops.c examples/net/resnet18.c \
            examples/net/mobilenetv2.c examples/net/bin-resnet18.c
NET_OBJS := $(NET_SRCS:examples/net/%.c=$(BUILD)/net/obj/%.o)
NET_PTHREADPOOL := $(if $(CROSS),,$(if $(and $(wildcard /usr/include/pthreadpool.h),$(wildcard \
                     /usr/lib/*/libpthreadpool.so)),1))
NET_CFLAGS = -std=c11 $(OPT) -g -ffp-contract=off -D_GNU_SOURCE $(WARN) -Iinclude -Iexamples/net \
             $(if $(NET_PTHREADPOOL),-DGNET_HAVE_PTHREADPOOL) $(ARCHFLAGS) $(SANFLAGS) $(CFLAGS)
.PHONY: examples
examples: $(BUILD)/net/gemmi8-net $(BUILD)/net/libgnet.a

$(BUILD)/net/obj/%.o: examples/net/%.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(DEPFLAGS) $(NET_CFLAGS) -c $< -o $@

$(BUILD)/net/libgnet.a: $(NET_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/net/gemmi8-net: $(BUILD)/net/obj/main.o $(BUILD)/net/libgnet.a $(LIBDIR)/libgemmi8.a
	$(CC) $(ARCHFLAGS) $(SANFLAGS) $(LDFLAGS) -o $@ $(BUILD)/net/obj/main.o $(BUILD)/net/libgnet.a \
	  $(LIBDIR)/libgemmi8.a $(if $(NET_PTHREADPOOL),-lpthreadpool) -lpthread -lm

-include $(NET_OBJS:.o=.d) $(BUILD)/net/obj/main.d

# The digits networks (examples/digits/): trained float weights quantized with the
# helpers and run through the operators; `make digits` prints the accuracy table and
# checks it against examples/digits/expected.txt (the runner for cross builds).
DIGITS := $(BUILD)/digits/gemmi8-digits
.PHONY: digits
examples: $(DIGITS)
digits: $(DIGITS)
	$(RUNNER) $(abspath $(DIGITS)) -e examples/digits/expected.txt examples/digits/digits.g8d

$(DIGITS): examples/digits/digits.c include/gemmi8.h $(LIBDIR)/libgemmi8.a Makefile
	@mkdir -p $(dir $@)
	$(CC) $(NET_CFLAGS) $(LDFLAGS) -o $@ $< $(LIBDIR)/libgemmi8.a -lpthread -lm

# ---- whole networks against ONNX Runtime (bench/net/README.md) --------------------
# make bench-net: the example ResNet-18 and MobileNetV2 against ONNX Runtime running
# the same networks (exported, then written as ONNX models by bench/net/net_model.py),
# in time on one thread and two and byte for byte, layer by layer; and the binary
# ResNet-18 beside the int8 one. The report goes to $(BUILD)/net/net.md. It needs
# Debian's python3-onnx and python3-numpy (bench/deps.sh installs them as root) and
# ONNX Runtime's library (bench/net/ort-fetch.sh, through npm once); without the
# library the ONNX Runtime side is skipped and gemmi8 runs alone. Native builds; not
# run by CI. GEMMI8_NET_ROUNDS, GEMMI8_NET_MIN_MS: the timed rounds and their least
# length a side (default 11, 100 ms); GEMMI8_ORT_LIB: another ONNX Runtime library;
# GEMMI8_NET_PYTHON: another python3 with onnx and numpy.
NET_BENCH := $(BUILD)/net/gemmi8-bench-net
.PHONY: bench-net
bench-net:
	@sh bench/deps.sh python3-onnx python3-numpy
	$(MAKE) lib examples $(NET_BENCH)
	@lib=$${GEMMI8_ORT_LIB:-}; \
	if [ -z "$$lib" ] && ! lib=$$(sh bench/net/ort-fetch.sh $(BUILD)/ort); then \
	  echo "bench-net: no ONNX Runtime library: its side is skipped, gemmi8 runs alone" >&2; \
	  lib=; \
	fi; \
	python=$${GEMMI8_NET_PYTHON:-/usr/bin/python3}; \
	echo "./$(NET_BENCH) -l '$$lib' -p $$python -s bench/net/net_model.py" \
	  "-w $(BUILD)/net/work-net -o $(BUILD)/net/net.md"; \
	./$(NET_BENCH) -l "$$lib" -p "$$python" -s bench/net/net_model.py \
	  -w $(BUILD)/net/work-net -o $(BUILD)/net/net.md

$(NET_BENCH): bench/net/bench-net.c bench/net/ort.c bench/net/ort.h examples/net/net.h \
              $(BUILD)/net/libgnet.a $(LIBDIR)/libgemmi8.a
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(OPT) -g -ffp-contract=off -D_GNU_SOURCE $(WARN) -Iinclude -Iexamples/net \
	  $(SANFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ bench/net/bench-net.c bench/net/ort.c \
	  $(BUILD)/net/libgnet.a $(LIBDIR)/libgemmi8.a $(if $(NET_PTHREADPOOL),-lpthreadpool) \
	  -lpthread -lm -ldl

# ---- Python module (python/) ------------------------------------------------------
# python/gemmi8.py binds the shared library through ctypes (Debian's python3 and
# numpy, nothing to build). make python-test runs its tests against $(LIBDIR)/libgemmi8.so
# (ends with "N passed, N failed"); make python-overhead times small GEMMs from Python
# and from C (python/overhead.py). Native builds only.
.PHONY: python-test python-overhead
python-test python-overhead: $(if $(CROSS),,lib)
ifneq ($(CROSS),)
	@echo "$@: native builds only (this is a cross build for $(ARCH))"; exit 1
else
	GEMMI8_LIBRARY=$(abspath $(LIBDIR))/libgemmi8.so /usr/bin/python3 \
	  python/$(if $(filter python-test,$@),run_tests.py,overhead.py)
endif

# make python-digits: python/digits.py, the digits networks of examples/digits/ through
# the Python module, checked against expected.txt and against the C program's logits
# hashes (every int8 and binary row must agree). Native builds only.
.PHONY: python-digits
python-digits: $(if $(CROSS),,lib $(BUILD)/digits/gemmi8-digits)
ifneq ($(CROSS),)
	@echo "$@: native builds only (this is a cross build for $(ARCH))"; exit 1
else
	GEMMI8_LIBRARY=$(abspath $(LIBDIR))/libgemmi8.so /usr/bin/python3 python/digits.py \
	  -e examples/digits/expected.txt -c $(abspath $(BUILD))/digits/gemmi8-digits \
	  examples/digits/digits.g8d
endif
