/*
 * What a build holds: the kernel sets and types chosen with
 *   make SETS="generic avx512vnni" TYPES="qu8s8 bin"
 * (default: every set of the architecture and every type). The Makefile defines
 * GEMMI8_SELECT_SETS and GEMMI8_SET_<set>=1 for each set chosen, GEMMI8_SELECT_TYPES and
 * GEMMI8_TYPE_<type>=1 for each type chosen; here every other name becomes 0. The
 * generic set is always built: it is the fallback on any CPU and the reference.
 *
 * GEMMI8_KERNELS_<type>: the kernel list of <type> is compiled (qu8's serves qu8s8, dw's
 * every 8-bit type; q4's: the 4-bit weights, which the qd8 GEMMs run with qs8 built and
 * the qdu8 GEMMs with qu8s8).
 * GEMMI8_IF(c)(x...): x when c expands to 1, nothing when it expands to 0.
 */
#ifndef GEMMI8_SELECT_H
#define GEMMI8_SELECT_H

#if defined(GEMMI8_SELECT_SETS)
#define GEMMI8_ALL_SETS 0
#else
#define GEMMI8_ALL_SETS 1
#endif
#if defined(GEMMI8_SELECT_TYPES)
#define GEMMI8_ALL_TYPES 0
#else
#define GEMMI8_ALL_TYPES 1
#endif

#undef GEMMI8_SET_generic
#define GEMMI8_SET_generic 1
#ifndef GEMMI8_SET_avx2
#define GEMMI8_SET_avx2 GEMMI8_ALL_SETS
#endif
#ifndef GEMMI8_SET_avx512bw
#define GEMMI8_SET_avx512bw GEMMI8_ALL_SETS
#endif
#ifndef GEMMI8_SET_avx512vnni
#define GEMMI8_SET_avx512vnni GEMMI8_ALL_SETS
#endif
#ifndef GEMMI8_SET_avx512vpopcnt
#define GEMMI8_SET_avx512vpopcnt GEMMI8_ALL_SETS
#endif
#ifndef GEMMI8_SET_neon
#define GEMMI8_SET_neon GEMMI8_ALL_SETS
#endif
#ifndef GEMMI8_SET_neondot
#define GEMMI8_SET_neondot GEMMI8_ALL_SETS
#endif
/* the neondot set tuned for in-order cores comes with neondot */
#undef GEMMI8_SET_neondot_a510
#define GEMMI8_SET_neondot_a510 GEMMI8_SET_neondot
#ifndef GEMMI8_SET_i8mm
#define GEMMI8_SET_i8mm GEMMI8_ALL_SETS
#endif
#ifndef GEMMI8_SET_armv7neon
#define GEMMI8_SET_armv7neon GEMMI8_ALL_SETS
#endif

#ifndef GEMMI8_TYPE_qu8
#define GEMMI8_TYPE_qu8 GEMMI8_ALL_TYPES
#endif
#ifndef GEMMI8_TYPE_qs8
#define GEMMI8_TYPE_qs8 GEMMI8_ALL_TYPES
#endif
#ifndef GEMMI8_TYPE_qu8s8
#define GEMMI8_TYPE_qu8s8 GEMMI8_ALL_TYPES
#endif
#ifndef GEMMI8_TYPE_bin
#define GEMMI8_TYPE_bin GEMMI8_ALL_TYPES
#endif
#ifndef GEMMI8_TYPE_q4
#define GEMMI8_TYPE_q4 GEMMI8_ALL_TYPES
#endif

#if GEMMI8_TYPE_qu8 || GEMMI8_TYPE_qu8s8
#define GEMMI8_KERNELS_qu8 1
#else
#define GEMMI8_KERNELS_qu8 0
#endif
#if GEMMI8_TYPE_qs8
#define GEMMI8_KERNELS_qs8 1
#else
#define GEMMI8_KERNELS_qs8 0
#endif
#if GEMMI8_TYPE_bin
#define GEMMI8_KERNELS_bin 1
#else
#define GEMMI8_KERNELS_bin 0
#endif
/* the depthwise kernels serve every 8-bit type */
#if GEMMI8_TYPE_qu8 || GEMMI8_TYPE_qs8 || GEMMI8_TYPE_qu8s8
#define GEMMI8_KERNELS_dw 1
#else
#define GEMMI8_KERNELS_dw 0
#endif

#if GEMMI8_TYPE_q4
#define GEMMI8_KERNELS_q4 1
#else
#define GEMMI8_KERNELS_q4 0
#endif

#define GEMMI8_IF(c) GEMMI8_IF_(c)
#define GEMMI8_IF_(c) GEMMI8_IF_##c
#define GEMMI8_IF_1(...) __VA_ARGS__
#define GEMMI8_IF_0(...)
/* x when the set and the kernel list of the type are both built */
#define GEMMI8_IF_BUILT(set, type, ...) \
  GEMMI8_IF(GEMMI8_SET_##set)(GEMMI8_IF(GEMMI8_KERNELS_##type)(__VA_ARGS__))

#endif
