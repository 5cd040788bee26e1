#!/bin/sh
# Speed on paper of the ARM microkernels, with llvm-mca (LLVM 19; LLVM 14 also runs).
#
# Every kernels/aarch64/*.c and kernels/aarch32/*.c is compiled to assembly with the
# cross gcc, the flags the Makefile gives that file, and -DGEMMI8_MCA, which turns on
# the inner-loop markers "# LLVM-MCA-BEGIN <name>:MACS=<n>" / "# LLVM-MCA-END"
# (src/mca.h). llvm-mca analyses each marked region on each core's model; a
# region is one iteration of the loop and performs n multiply-accumulates (int8) or
# bit products (binary). The peak of the kernel's instruction family comes from the
# same model: a register-only loop of that instruction alone (independent
# accumulators), so kernel and peak are measured alike. A kernel set's files run
# only on the cores that have its instructions (dot product, i8mm).
#
#   sh bench/mca.sh                      markdown tables on stdout
#   sh bench/mca.sh --update             the same, and rewrites the tables in bench/MCA.md
#   sh bench/mca.sh --icount [--update]  instructions executed per output at M = 1, 2
#                                        (3, 4 for i8mm) by the main tile and by the
#                                        small tile the planner takes, and on the ten
#                                        shapes by the i8mm tile with A in place and
#                                        over packed A (packing included), counted
#                                        under qemu-user by a TCG plugin built here
#
# Region names: "<type>-<isa>-<tile>:MACS=<n>", optionally ":PEAK=<family>" to name
# the instruction family (families: see peak_loop below); without MACS= the table
# kernel_macs below is consulted.
# Environment: LLVM_MCA (llvm-mca-19, else llvm-mca-14, else llvm-mca), MCA_ITERATIONS
#   (200), MCA_CPUS_AARCH64 (LLVM 19: cortex-a53 cortex-a55 cortex-a510 neoverse-n1
#   neoverse-n2 neoverse-v1; LLVM 14: cortex-a55 cortex-a76 neoverse-n1),
#   MCA_CPUS_AARCH32 (cortex-a57 cortex-a15), MCA_ALL_CPUS=1 (every kernel on every
#   core, with or without its instructions), MCA_ICOUNT_K (512).
# Needs: make, gcc-aarch64-linux-gnu and/or gcc-arm-linux-gnueabihf, llvm-19 (or 14);
#   --icount: gcc, qemu-user (7.2, with plugin support).
set -eu
cd "$(dirname "$0")/.."

update=0
icount=0
for arg in "$@"; do
  case $arg in
    --update) update=1 ;;
    --icount) icount=1 ;;
    *) echo "mca.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done

# The llvm-mca binaries to run: LLVM_MCA alone, else every one of llvm-mca-19 and
# llvm-mca-14 installed (each has its own tables), else llvm-mca.
if [ -n "${LLVM_MCA:-}" ]; then
  MCAS=$LLVM_MCA
else
  MCAS=$(for v in llvm-mca-19 llvm-mca-14; do command -v "$v" || true; done)
  [ -n "$MCAS" ] || MCAS=$(command -v llvm-mca || true)
fi
if [ "$icount" -eq 0 ] && [ -z "$MCAS" ]; then
  echo "mca.sh: llvm-mca not found (apt-get install llvm-19 llvm-14)" >&2
  exit 1
fi
ITER=${MCA_ITERATIONS:-200}

# use_mca BINARY: MCA, MCA_MAJOR and the core lists of that LLVM version.
use_mca() {
  MCA=$1
  MCA_MAJOR=$("$MCA" --version 2>/dev/null | sed -n 's/.*LLVM version \([0-9]*\).*/\1/p' | head -1)
  if [ "${MCA_MAJOR:-0}" -ge 19 ] 2>/dev/null; then
    CPUS_AARCH64=${MCA_CPUS_AARCH64:-cortex-a53 cortex-a55 cortex-a510 neoverse-n1 neoverse-n2 neoverse-v1}
  else
    # LLVM 14 runs cortex-a510 on its Cortex-A55 model and the Neoverse and Cortex-A7x
    # names on its Cortex-A57 model: one name of each model
    CPUS_AARCH64=${MCA_CPUS_AARCH64:-cortex-a55 neoverse-n2}
  fi
  CPUS_AARCH32=${MCA_CPUS_AARCH32:-cortex-a57 cortex-a15}
}

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

# ---- --icount: instructions per output under qemu-user ---------------------------------
# A TCG plugin (QEMU's plugin API version 1, declared here: Debian ships no header)
# counts the guest instructions executed in each function whose name holds
# "_ukernel_" or "_packa_", and those of a tile's shared body (a static function whose
# name ends in "_body") for the kernel entry that ran it; a driver calls, for qu8 and
# qs8 and each output, the main tile and the tile the planner takes for M rows once
# each, M rows by one full block of NR columns, depth K, on the level GEMMI8_ISA
# forces.
icount_plugin() {
  cat > "$TMP/icount.c" <<'PLUGIN'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t,
                                           void (*)(qemu_plugin_id_t, struct qemu_plugin_tb*));
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb*);
struct qemu_plugin_insn* qemu_plugin_tb_get_insn(const struct qemu_plugin_tb*, size_t);
const char* qemu_plugin_insn_symbol(const struct qemu_plugin_insn*);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb*, void (*)(unsigned int, void*),
                                          enum qemu_plugin_cb_flags, void*);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, void (*)(qemu_plugin_id_t, void*),
                                    void*);
__attribute__((visibility("default"))) int qemu_plugin_version = 1;
static char* names[256];
static uint64_t counts[256];
static int used, current = -1;
/* A translated block's instructions in a kernel entry (a *_ukernel_* or *_packa_*
 * function) and in a kernel body (a static *_body function that the three output
 * entries of a tile share): a body's instructions count for the entry last run. */
struct block { int entry; uint64_t n_entry, n_body; };
static void exec(unsigned int vcpu, void* p) {
  (void) vcpu;
  const struct block* b = p;
  if (b->entry >= 0) {
    counts[b->entry] += b->n_entry;
    current = b->entry;
  }
  if (current >= 0) counts[current] += b->n_body;
}
static int ends_with(const char* s, const char* t) {
  const size_t n = strlen(s), m = strlen(t);
  return n >= m && strcmp(s + n - m, t) == 0;
}
static void translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void) id;
  struct block b = {-1, 0, 0};
  for (size_t i = 0; i < qemu_plugin_tb_n_insns(tb); i++) {
    const char* s = qemu_plugin_insn_symbol(qemu_plugin_tb_get_insn(tb, i));
    if (s == NULL || strncmp(s, "gemmi8_", 7) != 0) continue;
    if (ends_with(s, "_body")) {
      b.n_body++;
      continue;
    }
    if (strstr(s, "_ukernel_") == NULL && strstr(s, "_packa_") == NULL) continue;
    int j = 0;
    while (j < used && strcmp(names[j], s) != 0) j++;
    if (j == used) {
      if (used == 256) continue;
      names[used++] = strdup(s);
    }
    b.entry = j;
    b.n_entry++;
  }
  if (b.entry < 0 && b.n_body == 0) return;
  struct block* p = malloc(sizeof(*p));
  *p = b;
  qemu_plugin_register_vcpu_tb_exec_cb(tb, exec, QEMU_PLUGIN_CB_NO_REGS, p);
}
static void report(qemu_plugin_id_t id, void* p) {
  (void) id; (void) p;
  FILE* f = fopen(getenv("ICOUNT_OUT"), "w");
  for (int j = 0; f && j < used; j++) fprintf(f, "%llu %s\n", (unsigned long long) counts[j], names[j]);
  if (f) fclose(f);
}
__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
                                                               const qemu_info_t* info,
                                                               int argc, char** argv) {
  (void) info; (void) argc; (void) argv;
  qemu_plugin_register_vcpu_tb_trans_cb(id, translate);
  qemu_plugin_register_atexit_cb(id, report, NULL);
  return 0;
}
PLUGIN
  cat > "$TMP/calls.c" <<'DRIVER'
#include <gemmi8.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "packed.h"
/* calls M K: for qu8 and qs8 and each output, the main tile and the tile the planner
 * takes for M rows, once each, M rows by one full block, depth K.
 * calls panels K: the main tile's s32 kernel in place (gemm) and over a panel (pgemm),
 * and the packing of that panel (pack_a), once each, on MR rows. */
int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const int panels = strcmp(argv[1], "panels") == 0;
  const size_t k = (size_t) atoi(argv[2]);
  for (int is_signed = 0; is_signed < 2; is_signed++) {
    const struct gemmi8_qgemm_config* q = is_signed ? gemmi8_qs8_config() : gemmi8_qu8_config();
    if (panels && q->pack_a == NULL) return 3;
    const size_t n = q->nr, m = panels ? q->mr : (size_t) atoi(argv[1]);
    uint8_t* a = malloc(m * k);
    uint8_t* b = malloc(n * k);
    for (size_t i = 0; i < m * k; i++) a[i] = (uint8_t) (i * 7 + 3);
    for (size_t i = 0; i < n * k; i++) b[i] = (uint8_t) (i * 13 + 5);
    int32_t bias[64] = {0}, sums[8] = {0}, c[8 * 64];
    const uint8_t b_zp = 100;
    void* packed;
    if (is_signed ? gemmi8_qs8_pack_alloc(n, k, (const int8_t*) b, k, GEMMI8_B_NK, 1, bias, &packed)
                  : gemmi8_qu8_pack_alloc(n, k, b, k, GEMMI8_B_NK, 128, &b_zp, 0, bias, &packed)) {
      return 1;
    }
    const uint8_t* w = (const uint8_t*) packed + GEMMI8_PACKED_HEADER_BYTES;
    int32_t multiplier = 1 << 30, shift = -8;
    float scale = 0.001f;
    struct gemmi8_qparams p = {.multiplier = &multiplier, .shift = &shift, .scale = &scale,
                               .row_sum = q->row_sum ? sums : NULL,
                               .min = is_signed ? -128 : 0, .max = is_signed ? 127 : 255};
    if (panels) {
      uint8_t* panel = malloc(gemmi8_qpanel_bytes(q, k));
      q->gemm[m - 1].out[gemmi8_qoutput_s32](m, n, k, a, k, w, c, sizeof(int32_t) * n, &p);
      q->pack_a(m, k, a, k, panel);
      q->pgemm.out[gemmi8_qoutput_s32](m, n, k, panel, 0, w, c, sizeof(int32_t) * n, &p);
      free(panel);
    } else {
      size_t slot = m;
      while (q->gemm[slot - 1].out[gemmi8_qoutput_s32] == NULL) slot++;
      const struct gemmi8_qgemm_ukernels* main_tile = &q->gemm[q->mr - 1];
      const struct gemmi8_qgemm_ukernels* tile = &q->gemm[slot - 1];
      gemmi8_qgemm_ukernel_fn fn[6] = {main_tile->out[0], main_tile->out[1], main_tile->out[2],
                                       tile->out[0], tile->out[1], tile->out[2]};
      for (int f = 0; f < (tile == main_tile ? 3 : 6); f++) {
        fn[f](m, n, k, a, k, w, c, (f % 3 == 0 ? sizeof(int32_t) : 1) * n, &p);
      }
    }
    gemmi8_packed_free(packed);
    free(a);
    free(b);
  }
  return 0;
}
DRIVER
  gcc -shared -fPIC -O2 -o "$TMP/libicount.so" "$TMP/icount.c"
}

# build_calls ARCH: $TMP/calls-ARCH, the driver linked with the library the tests use.
build_calls() {
  # shellcheck disable=SC2016 # $(...) is make's, expanded by make
  info=$(make -s --no-print-directory ARCH="$1" \
    --eval 'gemmi8-mca-info: ; @echo "$(CC)|$(ARCHFLAGS)|$(BUILD)/libgemmi8-test.a"' \
    gemmi8-mca-info)
  cc=${info%%|*}
  rest=${info#*|}
  lib=${rest#*|}
  make -s --no-print-directory ARCH="$1" "$lib" > /dev/null
  # shellcheck disable=SC2086
  $cc -std=c11 -O1 ${rest%%|*} -Iinclude -Isrc -Ikernels -o "$TMP/calls-$1" "$TMP/calls.c" "$lib" \
    -lpthread -lm
}

# Instructions per output of the ten GEMM shapes at the i8mm level, A in place against
# A packed (the packing of a 6-row panel shared by the N / 16 blocks of its tile row).
panels_table() {
  build_calls aarch64
  echo "Instructions executed per output on the ten GEMM shapes, i8mm level, int32 output"
  echo "(qemu-user TCG plugin): the 6x16c8 tile on A in place (TRN1 / TRN2 of each row pair"
  echo "in every block) against the tile over packed A plus the packing of its panel,"
  echo "shared by the ceil(N / 16) blocks of the row tile:"
  echo
  echo "| # | shape (N x M x K) | blocks | type | A in place | packed: tile | packing | packed: total | packed / in place | the driver takes |"
  echo "|---:|---|---:|---|---:|---:|---:|---:|---:|---|"
  i=0
  grep -v '^#' bench/shapes.txt | while read -r n m k; do
    [ -n "$k" ] || continue
    i=$((i + 1))
    GEMMI8_ISA=i8mm ICOUNT_OUT="$TMP/out" qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu max \
      -plugin "$TMP/libicount.so" "$TMP/calls-aarch64" panels "$k"
    awk -v i="$i" -v n="$n" -v m="$m" -v k="$k" '
      { cnt[$2] = $1 }
      END {
        blocks = int((n + 15) / 16)
        split("qu8 qs8", types, " ")
        for (t = 1; t <= 2; t++) {
          ty = types[t]
          inplace = cnt["gemmi8_" ty "_gemm_s32_ukernel_6x16c8__i8mm"] / 96
          tile = cnt["gemmi8_" ty "_pgemm_s32_ukernel_6x16c8__i8mm"] / 96
          pack = cnt["gemmi8_x8_packa_6c8__neon"] / 2 / (96 * blocks)
          printf "| %d | %sx%sx%s | %d | %s | %.1f | %.1f | %.2f | %.1f | %.3f | %s |\n",
            i, n, m, k, blocks, ty, inplace, tile, pack, tile + pack, (tile + pack) / inplace,
            (blocks >= 3 && blocks * k >= 512 && m >= 6) ? "packed" : "in place"
        }
      }' "$TMP/out"
  done
}

icount_table() {
  K=${MCA_ICOUNT_K:-512}
  : > "$TMP/counts"
  for arch in aarch64 aarch32; do
    case $arch in
      aarch64) qemu="qemu-aarch64 -L /usr/aarch64-linux-gnu" levels="neon:1 neon:2 neondot:1 neondot:2 i8mm:1 i8mm:2 i8mm:3 i8mm:4" ;;
      aarch32) qemu="qemu-arm -L /usr/arm-linux-gnueabihf" levels="armv7neon:1" ;;
    esac
    build_calls "$arch"
    for lm in $levels; do
      # shellcheck disable=SC2086
      GEMMI8_ISA=${lm%%:*} ICOUNT_OUT="$TMP/out" $qemu -cpu max -plugin "$TMP/libicount.so" \
        "$TMP/calls-$arch" "${lm#*:}" "$K"
      sed "s/^/$arch ${lm%%:*} ${lm#*:} /" "$TMP/out" >> "$TMP/counts"
    done
  done
  echo "Instructions executed per output at M rows (qemu-user TCG plugin; one full block of"
  echo "NR columns, depth K = $K, rows past M aliased in the main tile; main: the main tile"
  echo "run on M rows, as before the small tiles; small: the tile the planner takes):"
  echo
  echo "| kernel set | type | M | main tile | s32 | fixedpoint | fp32 | small tile | s32 | fixedpoint | fp32 | small / main |"
  echo "|---|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|"
  awk '
    {
      arch = $1; lvl = $2; m = $3; cnt = $4; sym = $5
      split(sym, p, "_"); type = p[2]; out = p[4]
      tile = sym; sub(/^.*_ukernel_/, "", tile); sub(/__.*$/, "", tile)
      split(tile, t, "x"); split(t[2], u, "c"); nr = u[1]
      key = arch "|" lvl "|" type "|" m
      if (!(key in seen)) { seen[key] = 1; keys[++n] = key }
      big = t[1] + 0
      if (big > mr[key]) mr[key] = big
      v[key, tile, out] = cnt / (m * nr); tiles[key, tile] = 1
    }
    END {
      for (i = 1; i <= n; i++) {
        key = keys[i]; split(key, k, "|")
        mainname = ""; small = ""
        for (kt in tiles) {
          split(kt, q, SUBSEP); if (q[1] != key) continue
          split(q[2], t, "x"); if (t[1] + 0 == mr[key]) mainname = q[2]; else small = q[2]
        }
        set = k[1] == "aarch32" ? "neon (aarch32)" : k[2]
        rank = k[1] == "aarch32" ? 4 : (k[2] == "neon" ? 1 : (k[2] == "neondot" ? 2 : 3))
        if (small == "") continue
        printf "%d|%s|%d| %s | %s | %d | %s | %.1f | %.1f | %.1f | %s | %.1f | %.1f | %.1f | %.2f |\n",
          rank, k[3], k[4], set, k[3], k[4], mainname,
          v[key, mainname, "s32"], v[key, mainname, "fixedpoint"], v[key, mainname, "fp32"],
          small, v[key, small, "s32"], v[key, small, "fixedpoint"], v[key, small, "fp32"],
          v[key, small, "fixedpoint"] / v[key, mainname, "fixedpoint"]
      }
    }' "$TMP/counts" | sort -t'|' -k1,1n -k2,2 -k3,3n | cut -d'|' -f4- | sed 's/^/|/'
}

if [ "$icount" -eq 1 ]; then
  icount_plugin
  {
    icount_table
    echo
    panels_table
  } > "$TMP/icount.md"
  cat "$TMP/icount.md"
  if [ "$update" -eq 1 ]; then
    md=bench/MCA.md
    if ! grep -q '^<!-- icount-table-begin -->' "$md" 2>/dev/null; then
      echo "mca.sh: $md has no <!-- icount-table-begin --> / <!-- icount-table-end --> markers" >&2
      exit 1
    fi
    awk -v table="$TMP/icount.md" '
      /^<!-- icount-table-begin -->/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
      /^<!-- icount-table-end -->/ { skip = 0 }
      !skip { print }' "$md" > "$TMP/MCA.md"
    cp "$TMP/MCA.md" "$md"
    echo "mca.sh: updated $md" >&2
  fi
  exit 0
fi

# MACs per iteration for regions that do not carry MACS= in their name: MR x NR x
# the depths one loop iteration covers (read off the kernel's loop).
kernel_macs() {
  case "$1" in
    *_ukernel_4x16c4__neondot) echo 1024 ;; # 16 depths per iteration
    *_ukernel_4x4c16__neon) echo 256 ;;     # 16 depths per iteration
    *_ukernel_6x16c8__i8mm) echo 1536 ;;    # 16 depths per iteration
    *_ukernel_1x16c4__neondot) echo 256 ;;  # small-M tiles: 16 depths per iteration
    *_ukernel_2x16c4__neondot) echo 512 ;;
    *_ukernel_1x4c16__neon) echo 64 ;;
    *_ukernel_2x4c16__neon) echo 128 ;;
    *_ukernel_2x16c8__i8mm) echo 512 ;;
    *_ukernel_4x16c8__i8mm) echo 1024 ;;
    *) echo "" ;;
  esac
}

# ---- peaks ---------------------------------------------------------------------------
# peak_loop FAMILY: prints "MACS_PER_ITERATION|INSTRUCTION" then the loop body.
peak_loop() {
  case "$1" in
    v7-vmlal)
      echo "32|VMLAL.S16 q, d, d[x] (8 accumulators)"
      for i in 0 1 2 3 4 5 6 7; do
        echo "vmlal.s16 q$((8 + i)), d$((8 + i % 2)), d$((i / 4))[$((i % 4))]"
      done ;;
    v7-xorpop)
      echo "1024|VEOR + VCNT.8 + VPADAL.U8 q (8 chains)"
      for r in 0 1; do
        for i in 0 1 2 3; do echo "veor q$((4 + i)), q$((i % 2)), q$((2 + (i + r) % 2))"; done
        for i in 0 1 2 3; do echo "vcnt.8 q$((4 + i)), q$((4 + i))"; done
        for i in 0 1 2 3; do echo "vpadal.u8 q$((8 + 4 * r + i)), q$((4 + i))"; done
      done ;;
    v7-vmull-vpadal)
      echo "64|VMULL.S8 q, d, d + VPADAL.S16 q (8 chains)"
      for r in 0 1; do
        for i in 0 1 2 3; do echo "vmull.s8 q$((4 + i)), d$i, d$((4 + (i + r) % 2))"; done
        for i in 0 1 2 3; do echo "vpadal.s16 q$((8 + 4 * r + i)), q$((4 + i))"; done
      done ;;
    v7-vcnt)
      echo "512|VCNT.8 q alone (4 independent)"
      for i in 0 1 2 3; do echo "vcnt.8 q$((4 + i)), q$i"; done ;;
    a64-smlal)
      echo "32|SMLAL/SMLAL2 v.4s, v.4h/8h, v.h[x] (8 accumulators)"
      for i in 0 1 2 3 4 5 6 7; do
        if [ $((i % 2)) -eq 0 ]; then
          echo "smlal v$((16 + i)).4s, v$((i / 2)).4h, v8.h[$((i % 8))]"
        else
          echo "smlal2 v$((16 + i)).4s, v$((i / 2)).8h, v8.h[$((i % 8))]"
        fi
      done ;;
    a64-smull-sadalp)
      echo "64|SMULL/SMULL2 v.8h, v.8b/16b + SADALP v.4s, v.8h (8 chains)"
      for i in 0 1 2 3 4 5 6 7; do
        if [ $((i % 2)) -eq 0 ]; then
          echo "smull v$((24 + i)).8h, v$((i / 2)).8b, v8.8b"
        else
          echo "smull2 v$((24 + i)).8h, v$((i / 2)).16b, v8.16b"
        fi
      done
      for i in 0 1 2 3 4 5 6 7; do echo "sadalp v$((16 + i)).4s, v$((24 + i)).8h"; done ;;
    a64-smull-smlal2)
      echo "128|SMULL + SMLAL2 v.8h + SADALP v.4s, v.8h (8 chains)"
      for i in 0 1 2 3 4 5 6 7; do echo "smull v$((24 + i)).8h, v$((i / 2)).8b, v$((4 + i % 2)).8b"; done
      for i in 0 1 2 3 4 5 6 7; do echo "smlal2 v$((24 + i)).8h, v$((i / 2)).16b, v$((4 + i % 2)).16b"; done
      for i in 0 1 2 3 4 5 6 7; do echo "sadalp v$((16 + i)).4s, v$((24 + i)).8h"; done ;;
    a64-sdot)
      # 16 accumulators: 8 leave the 4-pipe Neoverse V1 bound by the latency
      echo "256|SDOT v.4s, v.16b, v.4b[x] (16 accumulators)"
      for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
        echo "sdot v$((16 + i)).4s, v$((i % 4)).16b, v8.4b[$((i % 4))]"
      done ;;
    a64-smmla)
      echo "512|SMMLA v.4s, v.16b, v.16b (16 accumulators)"
      for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
        echo "smmla v$((16 + i)).4s, v$((i % 4)).16b, v$((8 + i / 4)).16b"
      done ;;
    a64-xorpop)
      echo "1024|EOR + CNT + UADALP v.16b (8 chains)"
      for i in 0 1 2 3 4 5 6 7; do echo "eor v$((24 + i)).16b, v$((i % 4)).16b, v$((4 + i / 4)).16b"; done
      for i in 0 1 2 3 4 5 6 7; do echo "cnt v$((24 + i)).16b, v$((24 + i)).16b"; done
      for i in 0 1 2 3 4 5 6 7; do echo "uadalp v$((16 + i)).8h, v$((24 + i)).16b"; done ;;
    *) return 1 ;;
  esac
}

# Instruction family of a kernel: arch, isa (file suffix), type (file prefix).
family_of() {
  case "$1:$3" in
    aarch32:bin) echo v7-xorpop ;;
    aarch32:*) echo v7-vmull-vpadal ;;
    aarch64:bin) echo a64-xorpop ;;
    aarch64:*)
      case "$2" in
        i8mm) echo a64-smmla ;;
        neondot) echo a64-sdot ;;
        *) echo a64-smull-sadalp ;;
      esac ;;
  esac
}

# mca_run TRIPLE MATTR CPU FILE [extra options]: llvm-mca's report on stdout.
mca_run() {
  triple=$1 mattr=$2 cpu=$3 file=$4
  shift 4
  "$MCA" -mtriple="$triple" -mattr="$mattr" -mcpu="$cpu" -iterations="$ITER" "$@" "$file" \
    2>"$TMP/mca.err"
}

# Regions of a report, first of each name: "name|iterations|total cycles|rthroughput".
regions() {
  awk '
    /^\[[0-9]+\] Code Region - / { sub(/^\[[0-9]+\] Code Region - /, ""); name = $0 }
    /^Iterations:/ { it = $2 }
    /^Total Cycles:/ { cyc = $3 }
    /^Block RThroughput:/ {
      if (name != "" && !(name in seen)) { seen[name] = 1; print name "|" it "|" cyc "|" $3 }
    }'
}

# peak TRIPLE MATTR CPU FAMILY: "MACs/cycle|instruction|model", cached.
peak() {
  key="$TMP/peak-$MCA_MAJOR-$1-$3-$4"
  if [ ! -f "$key" ]; then
    peak_loop "$4" > "$TMP/loop.txt"
    head -1 "$TMP/loop.txt" > "$TMP/loop.head"
    macs=$(cut -d'|' -f1 "$TMP/loop.head")
    what=$(cut -d'|' -f2- "$TMP/loop.head")
    {
      echo "# LLVM-MCA-BEGIN peak"
      tail -n +2 "$TMP/loop.txt"
      echo "# LLVM-MCA-END"
    } > "$TMP/peak.s"
    if mca_run "$1" "$2" "$3" "$TMP/peak.s" > "$TMP/peak.out"; then
      cyc=$(regions < "$TMP/peak.out" | cut -d'|' -f3)
      # the model: prefix of its first resource name (A57UnitB, CortexA55UnitALU, ...)
      model=$(awk '/^Resources:/ {
        getline; sub(/^\[[0-9.]+\] *- */, ""); sub(/Unit.*/, ""); print; exit
      }' "$TMP/peak.out")
      awk -v m="$macs" -v c="$cyc" -v i="$ITER" -v w="$what" -v model="$model" \
        'BEGIN { printf "%.2f|%s|%s\n", m * i / c, w, model }' > "$key"
    else
      echo "error|$what|?" > "$key"
    fi
  fi
  cat "$key"
}

# core_has CPU ISA: true if the core has the instructions of kernel set ISA (file
# suffix), as far as the cores of the default lists go.
core_has() {
  [ "${MCA_ALL_CPUS:-0}" = 1 ] && return 0
  case "$2" in
    i8mm)
      case "$1" in
        cortex-a510|cortex-a520|cortex-a710|cortex-a715|cortex-a720|cortex-x[2-4]) return 0 ;;
        neoverse-n2|neoverse-v1|neoverse-v2) return 0 ;;
        *) return 1 ;;
      esac ;;
    neondot)
      case "$1" in
        cortex-a35|cortex-a53|cortex-a57|cortex-a72|cortex-a73) return 1 ;;
        *) return 0 ;;
      esac ;;
    *) return 0 ;;
  esac
}

# ---- compile flags from the Makefile --------------------------------------------------
# flags ARCH FILE: "CC|CFLAGS" exactly as the Makefile builds FILE (without -g).
flags() {
  # shellcheck disable=SC2016 # $(...) is make's, expanded by make
  make -s --no-print-directory ARCH="$1" GEMMI8_MCA_FILE="$2" \
    --eval 'gemmi8-mca-flags: ; @echo "$(CC)|$(BASEFLAGS) $(ARCHFLAGS) $(call isaflags,$(GEMMI8_MCA_FILE))"' \
    gemmi8-mca-flags | sed 's/ -g / /'
}

# ---- kernels --------------------------------------------------------------------------
# measure: every marked loop on every core of the current llvm-mca, into
# $TMP/v<major>/rows, notes and loops.
measure() {
dir="$TMP/v$MCA_MAJOR"
mkdir -p "$dir"
rows="$dir/rows"
notes="$dir/notes"
loops="$dir/loops" # arch|isa|type|tile|cpu|cycles per iteration (int32-output loops)
: > "$rows"
: > "$notes"
: > "$loops"

for arch in aarch64 aarch32; do
  case $arch in
    aarch64) triple=aarch64 mattr=+neon,+dotprod,+i8mm cpus=$CPUS_AARCH64 ;;
    aarch32) triple=armv7a mattr=+neon cpus=$CPUS_AARCH32 ;;
  esac
  for src in kernels/"$arch"/*.c; do
    [ -f "$src" ] || continue
    base=$(basename "$src" .c)
    isa=${base##*-}
    if ! cf=$(flags "$arch" "$src"); then
      echo "| \`$src\` | flags from the Makefile failed |" >> "$notes"
      continue
    fi
    cc=${cf%%|*}
    cflags=${cf#*|}
    if ! command -v "$cc" > /dev/null 2>&1; then
      echo "| \`$src\` | skipped: $cc not installed |" >> "$notes"
      continue
    fi
    # shellcheck disable=SC2086
    if [ ! -f "$TMP/$base.s" ] && ! $cc $cflags -DGEMMI8_MCA -S -o "$TMP/$base.s" "$src" 2> "$TMP/cc.err"; then
      echo "| \`$src\` | does not compile with -DGEMMI8_MCA |" >> "$notes"
      continue
    fi
    # llvm-mca-14 ignores -mattr after GCC's ".arch armv8.2-a+dotprod" line (and then
    # drops SDOT); the aarch32 ".arch armv7-a" is harmless
    [ "$arch" = aarch64 ] && sed -i '/^[[:space:]]*\.arch[[:space:]]/d' "$TMP/$base.s"
    # (a file that failed to compile left no assembly)
    [ -s "$TMP/$base.s" ] || continue
    if ! grep -q 'LLVM-MCA-BEGIN' "$TMP/$base.s"; then
      echo "| \`$src\` | no LLVM-MCA region |" >> "$notes"
      continue
    fi
    skipped=""
    for cpu in $cpus; do
      if ! core_has "$cpu" "$isa"; then
        skipped="$skipped $cpu"
        continue
      fi
      if ! mca_run "$triple" "$mattr" "$cpu" "$TMP/$base.s" > "$TMP/$base.$cpu.out"; then
        echo "| \`$src\` | llvm-mca -mcpu=$cpu failed: $(head -1 "$TMP/mca.err") |" >> "$notes"
        continue
      fi
      # the int32-output loop of each qgemm file, for the small-M table
      regions < "$TMP/$base.$cpu.out" | awk -F'|' -v arch="$arch" -v base="$base" -v cpu="$cpu" '
        ($1 ~ /_s32_/ || $1 ~ /^q[us]8-neon-/) && $1 !~ /[+]/ {
          n = split(base, f, "-"); if (f[2] != "gemm" || n != 4) next
          # a q8- file holds both types: the kernel the region names gives the type
          type = f[1]
          if (type == "q8" && $1 ~ /^q[us]8-/) type = substr($1, 1, 3)
          else if (type == "q8") { split($1, r, "_"); type = r[2] }
          if (type in done) next
          done[type] = 1
          printf "%s|%s|%s|%s|%s|%.4f\n", arch, f[n], type, f[3], cpu, $3 / $2
        }' >> "$loops"
      # regions of one file with the same cycles and MACs (one loop inlined into the
      # s32 / fixedpoint / fp32 kernels) are listed once
      regions < "$TMP/$base.$cpu.out" | awk -F'|' '
        { n = $1; gsub(/_(s32|fixedpoint|fp32|f32|bits)_/, "_", n) }
        !seen[n "|" $2 "|" $3 "|" $4]++' |
      while IFS='|' read -r name it cyc rt; do
        label=${name%%:*}
        macs=$(echo "$name" | sed -n 's/.*:MACS=\([0-9][0-9]*\).*/\1/p')
        [ -n "$macs" ] || macs=$(kernel_macs "$label")
        family=$(echo "$name" | sed -n 's/.*:PEAK=\([a-z0-9-]*\).*/\1/p')
        [ -n "$family" ] || family=$(family_of "$arch" "$isa" "${base%%-*}")
        p=$(peak "$triple" "$mattr" "$cpu" "$family")
        pm=${p%%|*}
        rest=${p#*|}
        model=${rest#*|}
        # SMMLA on a core without i8mm: the model's costs are placeholders
        case "$family:$cpu" in
          a64-smmla:cortex-a5[357]|a64-smmla:cortex-a7[2-8]|a64-smmla:cortex-x1|a64-smmla:neoverse-n1)
            model="$model, no i8mm on this core" ;;
        esac
        awk -v label="$label" -v src="$src" -v cpu="$cpu" -v model="$model" -v it="$it" \
          -v cyc="$cyc" -v rt="$rt" -v macs="$macs" -v pm="$pm" -v family="$family" 'BEGIN {
            c = cyc / it
            if (macs == "") { r = "?"; pct = "?"; m = "?" }
            else {
              m = macs; r = sprintf("%.2f", macs / c)
              pct = (pm + 0 > 0) ? sprintf("%.0f%%", 100 * macs / c / pm) : "?"
            }
            printf "| %s | `%s` | %s | %s | %.2f | %s | %s | %s | %s (%s) | %s |\n",
              label, src, cpu, model, c, rt, m, r, pm, family, pct
          }' >> "$rows"
      done
    done
    [ -z "$skipped" ] || echo "| \`$src\` | not run on${skipped}: no $isa instructions |" >> "$notes"
  done
done
}

# ---- report ---------------------------------------------------------------------------
report() {
  echo "Kernels (one row per marked inner loop; MACs are bit products for bin kernels):"
  echo
  echo "| kernel | file | -mcpu | llvm-mca model | cycles/iter | RThroughput | MACs/iter | MACs/cycle | peak MACs/cycle (family) | % of peak |"
  echo "|---|---|---|---|---:|---:|---:|---:|---:|---:|"
  cat "$rows"
  echo
  echo "Peaks (register-only loop of the instruction alone, same model):"
  echo
  echo "| -mcpu | llvm-mca model | family | loop | MACs/cycle |"
  echo "|---|---|---|---|---:|"
  for arch in aarch64 aarch32; do
    case $arch in
      aarch64) triple=aarch64 mattr=+neon,+dotprod,+i8mm cpus=$CPUS_AARCH64
               fams="a64-smlal a64-smull-sadalp a64-smull-smlal2 a64-sdot a64-smmla a64-xorpop" ;;
      aarch32) triple=armv7a mattr=+neon cpus=$CPUS_AARCH32
               fams="v7-vmlal v7-vmull-vpadal v7-xorpop v7-vcnt" ;;
    esac
    [ -n "$(ls kernels/"$arch"/*.c 2>/dev/null)" ] || continue
    for cpu in $cpus; do
      for fam in $fams; do
        p=$(peak "$triple" "$mattr" "$cpu" "$fam")
        pm=${p%%|*}
        rest=${p#*|}
        echo "| $cpu | ${rest#*|} | $fam | ${rest%|*} | $pm |"
      done
    done
  done
  if [ -s "$loops" ]; then
    echo
    echo "Small-M tiles: the loop a tile of M rows runs, against the main tile's (qs8, int32"
    echo "output; qu8 runs the same loops with unsigned or zero-point forms). Useful MACs per"
    echo "cycle count only the M rows of A (the main tile computes MR, rows past M aliased):"
    echo
    echo "| kernel set | -mcpu | M | main tile | cycles/iter | useful MACs/cycle | tile for M | cycles/iter | useful MACs/cycle | speedup |"
    echo "|---|---|---:|---|---:|---:|---|---:|---:|---:|"
    awk -F'|' '
      function rank(arch, isa) {
        return arch == "aarch32" ? 4 : (isa == "neon" ? 1 : (isa == "neondot" ? 2 : 3))
      }
      $3 == "qs8" {
        key = $1 "|" $2 "|" $5
        if (!(key in seen)) { seen[key] = 1; keys[++n] = key }
        split($4, t, "x"); mr = t[1] + 0
        split(t[2], u, "c"); nr = u[1] + 0
        cnt[key]++; tmr[key, cnt[key]] = mr; tnr[key, cnt[key]] = nr
        tname[key, cnt[key]] = $4; tcyc[key, cnt[key]] = $6
      }
      END {
        for (i = 1; i <= n; i++) {
          key = keys[i]; split(key, k, "|")
          depth = 16
          set = k[1] == "aarch32" ? "neon (aarch32)" : k[2]
          big = 0
          for (j = 1; j <= cnt[key]; j++) if (tmr[key, j] > (big ? tmr[key, big] : 0)) big = j
          maxsmall = 0
          for (j = 1; j <= cnt[key]; j++) if (j != big && tmr[key, j] > maxsmall) maxsmall = tmr[key, j]
          for (m = 1; m <= maxsmall; m++) {
            best = 0
            for (j = 1; j <= cnt[key]; j++)
              if (tmr[key, j] >= m && (!best || tmr[key, j] < tmr[key, best])) best = j
            useful = m * tnr[key, big] * depth
            mc = tcyc[key, big]; sc = tcyc[key, best]
            printf "%d|%03d|%d| %s | %s | %d | %s | %.2f | %.2f | %s | %.2f | %.2f | %.2fx |\n",
              rank(k[1], k[2]), i, m, set, k[3], m, tname[key, big], mc, useful / mc,
              tname[key, best], sc, useful / sc, mc / sc
          }
        }
      }' "$loops" | sort -t'|' -k1,1n -k2,2n -k3,3n | cut -d'|' -f4- | sed 's/^/|/' 
  fi
  if [ -s "$notes" ]; then
    echo
    echo "| file | not measured |"
    echo "|---|---|"
    cat "$notes"
  fi
  echo
  version=$("$MCA" --version 2>/dev/null | sed -n 's/.*LLVM version \([0-9.]*\).*/\1/p')
  echo "llvm-mca $version, $ITER iterations; cycles/iter = Total Cycles / Iterations."
}

# jobs: the comparison of the ARM-peak task, one line per job: title | kernel
# directory | region name (an extended regular expression) | -mcpu for LLVM 19 | -mcpu
# for LLVM 14 (the model that stands for it there)
jobs() {
  cat <<'JOBS'
i8mm 6x16c8, A packed (Neoverse N2)|aarch64|^gemmi8_qs8_pgemm_s32_ukernel_6x16c8__i8mm$|neoverse-n2|neoverse-n2
i8mm 6x16c8, A packed (Neoverse V1)|aarch64|^gemmi8_qs8_pgemm_s32_ukernel_6x16c8__i8mm$|neoverse-v1|neoverse-n2
i8mm 6x16c8, A in place (Neoverse N2)|aarch64|^gemmi8_qs8_gemm_s32_ukernel_6x16c8__i8mm$|neoverse-n2|neoverse-n2
binary (Neoverse N1)|aarch64|^gemmi8_bin_gemm_s32_ukernel_[0-9xc]*__neon$|neoverse-n1|neoverse-n2
binary convolution, igemm (Neoverse N1)|aarch64|^gemmi8_bin_igemm_s32_ukernel_[0-9xc]*__neon$|neoverse-n1|neoverse-n2
NEON without dot product, qs8 pair-safe blocks (Neoverse N2)|aarch64|^gemmi8_qs8_gemm_s32_ukernel_4x4c16__neon[+]smlal$|neoverse-n2|neoverse-n2
NEON without dot product, qs8 other blocks and qu8 (Neoverse N2)|aarch64|^gemmi8_qs8_gemm_s32_ukernel_4x4c16__neon$|neoverse-n2|neoverse-n2
ARMv7 int8 (Cortex-A57)|aarch32|^(gemmi8_)?qs8[-_].*neon|cortex-a57|cortex-a57
dot product on an in-order core (Cortex-A510)|aarch64|^gemmi8_qs8_gemm_s32_ukernel_4x16c4__neondot$|cortex-a510|cortex-a55
dot product on an in-order core (Cortex-A55)|aarch64|^gemmi8_qs8_gemm_s32_ukernel_4x16c4__neondot$|cortex-a55|cortex-a55
dot product, loop for in-order completion (Cortex-A510)|aarch64|^gemmi8_qs8_gemm_s32_ukernel_4x16c4__neondot_a510$|cortex-a510|cortex-a55
dot product, loop for in-order completion (Cortex-A55)|aarch64|^gemmi8_qs8_gemm_s32_ukernel_4x16c4__neondot_a510$|cortex-a55|cortex-a55
dot product, loop for in-order completion (Neoverse N1)|aarch64|^gemmi8_qs8_gemm_s32_ukernel_4x16c4__neondot_a510$|neoverse-n1|neoverse-n2
JOBS
}

# job_cell VERSION ARCH REGEX CPU: "model|MACs/cycle|% of peak (family)" of the
# matching region with the most MACs per iteration, or "-|-|-".
job_cell() {
  awk -F'|' -v arch="kernels/$2/" -v re="$3" -v cpu="$4" '
    function trim(x) { gsub(/^ +| +$/, "", x); return x }
    {
      label = trim($2); src = trim($3); c = trim($4)
      if (c != cpu || index(src, arch) == 0 || label !~ re) next
      macs = trim($8) + 0
      if (!found || macs > best) {
        found = 1; best = macs
        peak = trim($10); sub(/^[0-9.]+ /, "", peak)
        cell = trim($5) "|" trim($9) "|" trim($11) " " peak
      }
    }
    END { print found ? cell : "-|-|-" }' "$TMP/v$1/rows"
}

summary() {
  echo "The jobs of the ARM-peak comparison, from the tables above (the region with the"
  echo "most MACs per iteration where several match; \"% of peak\" against the family's"
  echo "register-only loop on the same model):"
  echo
  header="| job | kernel region |"
  rule="|---|---|"
  for v in $MAJORS; do
    header="$header llvm-mca $v: -mcpu (model) | MACs/cycle | % of peak (family) |"
    rule="$rule---|---:|---|"
  done
  echo "$header"
  echo "$rule"
  jobs | while IFS='|' read -r title arch re cpu19 cpu14; do
    line="| $title | \`$(echo "$re" | sed 's/[\^$]//g; s/\[+\]/+/g')\` |"
    for v in $MAJORS; do
      if [ "$v" -ge 19 ] 2>/dev/null; then cpu=$cpu19; else cpu=$cpu14; fi
      cell=$(job_cell "$v" "$arch" "$re" "$cpu")
      model=${cell%%|*}
      rest=${cell#*|}
      line="$line $cpu ($model) | ${rest%%|*} | ${rest#*|} |"
    done
    echo "$line"
  done
}

MAJORS=""
for m in $MCAS; do
  use_mca "$m"
  measure
  report > "$TMP/v$MCA_MAJOR/report.md"
  MAJORS="$MAJORS $MCA_MAJOR"
done
{
  for v in $MAJORS; do
    echo "### llvm-mca $v"
    echo
    cat "$TMP/v$v/report.md"
    echo
  done
  echo "### Summary"
  echo
  summary
} > "$TMP/report.md"
cat "$TMP/report.md"

if [ "$update" -eq 1 ]; then
  md=bench/MCA.md
  if ! grep -q '^<!-- mca-table-begin -->' "$md" 2>/dev/null; then
    echo "mca.sh: $md has no <!-- mca-table-begin --> / <!-- mca-table-end --> markers" >&2
    exit 1
  fi
  awk -v table="$TMP/report.md" '
    /^<!-- mca-table-begin -->/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
    /^<!-- mca-table-end -->/ { skip = 0 }
    !skip { print }' "$md" > "$TMP/MCA.md"
  cp "$TMP/MCA.md" "$md"
  echo "mca.sh: updated $md" >&2
fi
