#!/bin/sh
# Instructions per 16 outputs of the AVX-512 VNNI and AVX2 epilogues (requantization
# and stores, after the k loop), counted statically on a full main tile: each store
# function of the kernel headers is compiled alone with mr = MR, nr = NR and no left
# shift known to the compiler (the common case: scales below 1), and objdump counts
# what remains. The AVX-512 fixed-point epilogue is counted with its constants
# prepared per block (the driver's path for blocks of more than one row tile).
#   sh bench/epilogue-count.sh [git revision]    (default: the working tree)
# Prints one line per epilogue: isa, output kind, instructions, per 16 outputs.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/kernels/x86_avx512" "$tmp/kernels/x86_avx2" "$tmp/src"
# (the output-*.h headers hold the epilogues since they left the kernel templates;
# older revisions have none)
for f in kernels/x86_avx512/qgemm-avx512vnni.h kernels/x86_avx2/qgemm-avx2.h src/requant.h \
         src/microkernel.h src/common.h src/select.h kernels/x86_avx512/output-avx512.h \
         kernels/x86_avx2/output-avx2.h kernels/qu8.inc kernels/qs8.inc kernels/bin.inc \
         kernels/dw.inc kernels/q4.inc; do
  if [ -n "$rev" ]; then
    git -C "$here" show "$rev:$f" > "$tmp/$f" 2>/dev/null || rm -f "$tmp/$f"
  elif [ -e "$here/$f" ]; then
    cp "$here/$f" "$tmp/$f"
  fi
done
cat > "$tmp/avx512.c" <<'C'
#include "kernels/x86_avx512/qgemm-avx512vnni.h"
/* 7 x 48 tile: 21 zmm of int32 */
#define P struct gemmi8_qparams q = *p; q.left_shift = 0;
void e_s32(void* c, size_t cs, const struct gemmi8_qparams* p, __m512i v[][4]) {
  (void) p; gemmi8_qgemm_store_s32_avx512(7, 3, 1, 7, 48, c, cs, v);
}
/* the driver's case for tiles of a block with several row tiles: constants prepared */
#if defined(GEMMI8_AVX512VNNI_MAIN_MR)
static _Alignas(64) __m512i constants[4 * GEMMI8_FP_VECTORS];
#define PREPARED q.prepared = constants;
#else
#define PREPARED /* (revisions before the per-block constants) */
#endif
void e_fixedpoint(void* c, size_t cs, const struct gemmi8_qparams* p, __m512i v[][4]) {
  P PREPARED
  gemmi8_qgemm_store_fixedpoint_avx512(7, 3, 1, 7, 48, c, cs, &q, v);
}
void e_fp32(void* c, size_t cs, const struct gemmi8_qparams* p, __m512i v[][4]) {
  P gemmi8_qgemm_store_fp32_avx512(7, 3, 1, 7, 48, c, cs, &q, v);
}
C
cat > "$tmp/avx2.c" <<'C'
#include "kernels/x86_avx2/qgemm-avx2.h"
/* 6 x 16 tile: 12 ymm of int32 */
#define P struct gemmi8_qparams q = *p; q.left_shift = 0;
void e_s32(void* c, size_t cs, const struct gemmi8_qparams* p, __m256i v[][2]) {
  (void) p; gemmi8_qgemm_store_s32_avx2(6, 2, 6, 16, c, cs, v);
}
void e_fixedpoint(void* c, size_t cs, const struct gemmi8_qparams* p, __m256i v[][2]) {
  P gemmi8_qgemm_store_fixedpoint_avx2(6, 2, 0, 6, 16, c, cs, &q, v);
}
void e_fp32(void* c, size_t cs, const struct gemmi8_qparams* p, __m256i v[][2]) {
  P gemmi8_qgemm_store_fp32_avx2(6, 2, 0, 6, 16, c, cs, &q, v);
}
C
cc=${CC:-cc}
count() { # object isa outputs-per-tile
  for fn in e_s32 e_fixedpoint e_fp32; do
    n=$(objdump -d --no-show-raw-insn "$1" | awk -v f="<$fn>:" '
      $2 == f { on = 1; next } on && /^$/ { exit } on && /\t/ { n++ } END { print n + 0 }')
    printf '%-10s %-10s %4d instructions per tile, %5.1f per 16 outputs\n' "$2" \
      "${fn#e_}" "$n" "$(echo "$n * 16 / $3" | bc -l)"
  done
}
flags="-std=c11 -O2 -I$tmp -I$tmp/src -I$tmp/kernels -I$here/include -fno-asynchronous-unwind-tables -c"
$cc $flags -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512vnni -mfma -mbmi2 \
  "$tmp/avx512.c" -o "$tmp/avx512.o"
$cc $flags -mavx2 -mfma -mbmi2 "$tmp/avx2.c" -o "$tmp/avx2.o"
echo "epilogues of ${rev:-the working tree} ($($cc --version | head -1))"
count "$tmp/avx512.o" avx512vnni 336
count "$tmp/avx2.o" avx2 96
