#!/bin/sh
# Speed on paper of the ARM microkernels, with llvm-mca (LLVM 14).
#
# Every kernels/aarch64/*.c and kernels/aarch32/*.c is compiled to assembly with the
# cross gcc, the flags the Makefile gives that file, and -DGEMMI8_MCA, which turns on
# the inner-loop markers "# LLVM-MCA-BEGIN <name>:MACS=<n>" / "# LLVM-MCA-END"
# (src/mca.h). llvm-mca analyses each marked region on each core's model; a
# region is one iteration of the loop and performs n multiply-accumulates (int8) or
# bit products (binary). The peak of the kernel's instruction family comes from the
# same model: a register-only loop of that instruction alone (independent
# accumulators), so kernel and peak are measured alike.
#
#   sh bench/mca.sh             markdown tables on stdout
#   sh bench/mca.sh --update    the same, and rewrites the tables in bench/MCA.md
#
# Region names: "<type>-<isa>-<tile>:MACS=<n>", optionally ":PEAK=<family>" to name
# the instruction family (families: see peak_loop below); without MACS= the table
# kernel_macs below is consulted.
# Environment: LLVM_MCA (llvm-mca-14, else llvm-mca), MCA_ITERATIONS (200),
#   MCA_CPUS_AARCH64 (cortex-a55 cortex-a76 neoverse-n1),
#   MCA_CPUS_AARCH32 (cortex-a57 cortex-a72 cortex-a15).
# Needs: make, gcc-aarch64-linux-gnu and/or gcc-arm-linux-gnueabihf, llvm-14.
set -eu
cd "$(dirname "$0")/.."

update=0
[ "${1:-}" = "--update" ] && update=1

MCA=${LLVM_MCA:-$(command -v llvm-mca-14 || command -v llvm-mca || true)}
if [ -z "$MCA" ]; then
  echo "mca.sh: llvm-mca not found (apt-get install llvm-14)" >&2
  exit 1
fi
ITER=${MCA_ITERATIONS:-200}
CPUS_AARCH64=${MCA_CPUS_AARCH64:-cortex-a55 cortex-a76 neoverse-n1}
CPUS_AARCH32=${MCA_CPUS_AARCH32:-cortex-a57 cortex-a72 cortex-a15}

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

# MACs per iteration for regions that do not carry MACS= in their name: MR x NR x
# the depths one loop iteration covers (read off the kernel's loop).
kernel_macs() {
  case "$1" in
    *_ukernel_4x16c4__neondot) echo 1024 ;; # 16 depths per iteration
    *_ukernel_4x4c16__neon) echo 256 ;;     # 16 depths per iteration
    gemmi8_bin_gemm_*_ukernel_4x8__neon) echo 2048 ;; # one 64-bit word per iteration
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
    a64-sdot)
      echo "128|SDOT v.4s, v.16b, v.4b[x] (8 accumulators)"
      for i in 0 1 2 3 4 5 6 7; do
        echo "sdot v$((16 + i)).4s, v$((i % 4)).16b, v8.4b[$((i % 4))]"
      done ;;
    a64-smmla)
      echo "256|SMMLA v.4s, v.16b, v.16b (8 accumulators)"
      for i in 0 1 2 3 4 5 6 7; do
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
    aarch32:*) echo v7-vmlal ;;
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
  key="$TMP/peak-$1-$3-$4"
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

# ---- compile flags from the Makefile --------------------------------------------------
# flags ARCH FILE: "CC|CFLAGS" exactly as the Makefile builds FILE (without -g).
flags() {
  # shellcheck disable=SC2016 # $(...) is make's, expanded by make
  make -s --no-print-directory ARCH="$1" GEMMI8_MCA_FILE="$2" \
    --eval 'gemmi8-mca-flags: ; @echo "$(CC)|$(BASEFLAGS) $(ARCHFLAGS) $(call isaflags,$(GEMMI8_MCA_FILE))"' \
    gemmi8-mca-flags | sed 's/ -g / /'
}

# ---- kernels --------------------------------------------------------------------------
rows="$TMP/rows"
notes="$TMP/notes"
: > "$rows"
: > "$notes"

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
    if ! $cc $cflags -DGEMMI8_MCA -S -o "$TMP/$base.s" "$src" 2> "$TMP/cc.err"; then
      echo "| \`$src\` | does not compile with -DGEMMI8_MCA |" >> "$notes"
      continue
    fi
    # llvm-mca-14 ignores -mattr after GCC's ".arch armv8.2-a+dotprod" line (and then
    # drops SDOT); the aarch32 ".arch armv7-a" is harmless
    [ "$arch" = aarch64 ] && sed -i '/^[[:space:]]*\.arch[[:space:]]/d' "$TMP/$base.s"
    if ! grep -q 'LLVM-MCA-BEGIN' "$TMP/$base.s"; then
      echo "| \`$src\` | no LLVM-MCA region |" >> "$notes"
      continue
    fi
    for cpu in $cpus; do
      if ! mca_run "$triple" "$mattr" "$cpu" "$TMP/$base.s" > "$TMP/$base.$cpu.out"; then
        echo "| \`$src\` | llvm-mca -mcpu=$cpu failed: $(head -1 "$TMP/mca.err") |" >> "$notes"
        continue
      fi
      # regions of one file with the same cycles and MACs (one loop inlined into the
      # s32 / fixedpoint / fp32 kernels) are listed once
      regions < "$TMP/$base.$cpu.out" | awk -F'|' '!seen[$2 "|" $3 "|" $4]++' |
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
  done
done

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
               fams="a64-smlal a64-smull-sadalp a64-sdot a64-smmla a64-xorpop" ;;
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

report > "$TMP/report.md"
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
