/*
 * Instruction-set selection, private to the library and its tests.
 */
#ifndef GEMMI8_ISA_H
#define GEMMI8_ISA_H

#include <stddef.h>

/* Names of every kernel set compiled in for this architecture, best last,
 * terminated by NULL. "generic" is always first. */
const char* const* gemmi8_isa_compiled(void);

/* 1 if the named set is compiled in and supported by this CPU and OS. */
int gemmi8_isa_supported(const char* name);

/* Switches the library to the named kernel set (tests only: not thread-safe with
 * concurrent GEMM calls). Returns 0 on success, -1 if the set is not supported. */
int gemmi8_isa_force(const char* name);

#endif
