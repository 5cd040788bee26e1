# Sourced by bench/run.sh and bench/llm/run.sh (with $script set to the caller's name):
# exports OPENBLAS_CORETYPE before OpenBLAS loads. Debian's OpenBLAS 0.3.21 does not
# know recent CPUs (it falls back to its slow Prescott core on AMD EPYC and on recent
# Xeons), so the core is named from /proc/cpuinfo: SkylakeX with AVX-512 F/BW/DQ/VL,
# Haswell with AVX2 and FMA, else OpenBLAS's own choice. The best core for this CPU
# wins over an inherited OPENBLAS_CORETYPE (a stale setting would make the fp32
# reference look slow); GEMMI8_BENCH_OPENBLAS_CORE chooses another one on purpose.
cpu_core=""
if [ -r /proc/cpuinfo ]; then
  flags=$(grep -m 1 '^flags' /proc/cpuinfo || true)
  has() { case " $flags " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
  if has avx512f && has avx512bw && has avx512dq && has avx512vl; then
    cpu_core=SkylakeX
  elif has avx2 && has fma; then
    cpu_core=Haswell
  fi
fi
if [ -n "${GEMMI8_BENCH_OPENBLAS_CORE:-}" ]; then
  OPENBLAS_CORETYPE=$GEMMI8_BENCH_OPENBLAS_CORE
elif [ -n "$cpu_core" ]; then
  if [ -n "${OPENBLAS_CORETYPE:-}" ] && [ "$OPENBLAS_CORETYPE" != "$cpu_core" ]; then
    echo "$script: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE from the environment" \
      "replaced by $cpu_core, the best core for this CPU" >&2
  fi
  OPENBLAS_CORETYPE=$cpu_core
fi
if [ -n "${OPENBLAS_CORETYPE:-}" ]; then
  export OPENBLAS_CORETYPE
fi
