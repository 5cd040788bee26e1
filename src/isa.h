/*
 * Instruction-set selection, private to the library and its tests.
 */
#ifndef GEMMI8_ISA_H
#define GEMMI8_ISA_H

#include <stddef.h>
#include <stdint.h>

/* gemmi8_isa_compiled() is public (gemmi8.h). */
#include "gemmi8.h"

/* 1 if the named set is compiled in and supported by this CPU and OS. */
int gemmi8_isa_supported(const char* name);

/* Switches the library to the named kernel set (tests only: not thread-safe with
 * concurrent GEMM calls). Returns 0 on success, -1 if the set is not supported. */
int gemmi8_isa_force(const char* name);

/* Kernel sets taken only on systems with particular cores (the neondot-a510 tables):
 * the name of the i-th (from 0; NULL past the last), and a switch to it as on such a
 * system, at the lowest level that has its features (tests only, like
 * gemmi8_isa_force; gemmi8_isa_force goes back to the detected cores). -1: unknown
 * name, or instructions this CPU lacks. */
const char* gemmi8_isa_tuned_at(size_t i);
int gemmi8_isa_force_tuned(const char* name);

/* The kernel sets each family takes on a CPU with exactly the features of the named
 * level (whether or not this CPU has them): 0, or -1 for an unknown name. */
int gemmi8_isa_plan(const char* name, const char** qu8, const char** qs8, const char** bin);

struct gemmi8_qgemm_config;
struct gemmi8_bgemm_config;
struct gemmi8_dwconv_config;

/* The family tables of every kernel set compiled in, for the kernel tests: entry i
 * (from 0; NULL past the last) of the qu8 or qs8 cascade (type 1 or 2) or of the
 * binary or the depthwise cascade; *supported says whether this CPU runs it. */
const struct gemmi8_qgemm_config* gemmi8_qgemm_config_at(uint32_t type, size_t i, int* supported);
const struct gemmi8_bgemm_config* gemmi8_bgemm_config_at(size_t i, int* supported);
const struct gemmi8_dwconv_config* gemmi8_dwconv_config_at(size_t i, int* supported);

#endif
