/*
 * Every kernel of the lists by symbol, for the tests: the kernel tester prints the real
 * symbols and the build group checks that each table's kernels are named by a list.
 * Built from the lists as src/init.c builds the tables, with the same selection of
 * sets and types; the library itself carries no names.
 */
#include <stddef.h>

#include "microkernel.h"
#include "test.h"

struct kernel_symbol {
  void (*fn)(void);
  const char* name;
};
#define GEMMI8_QSET(set, type, ...)
#define GEMMI8_QEND(set, type)
#define GEMMI8_QUKERNEL(set, type, kind, out, mr, nr, kr, isa, symbol, file) \
  GEMMI8_IF_BUILT(set, type, {(void (*)(void)) symbol, #symbol},)
#define GEMMI8_QHELPER(set, type, role, symbol, file) \
  GEMMI8_IF_BUILT(set, type, {(void (*)(void)) symbol, #symbol},)
#define GEMMI8_BSET(set, ...)
#define GEMMI8_BEND(set)
#define GEMMI8_BUKERNEL(set, kind, out, mr, nr, kr, isa, symbol, file) \
  GEMMI8_IF_BUILT(set, bin, {(void (*)(void)) symbol, #symbol},)
#define GEMMI8_BHELPER(set, role, symbol, file) \
  GEMMI8_IF_BUILT(set, bin, {(void (*)(void)) symbol, #symbol},)
#define GEMMI8_DWSET(set, ...)
#define GEMMI8_DWEND(set)
#define GEMMI8_DWUKERNEL(set, taps, out, cr, isa, symbol, file) \
  GEMMI8_IF_BUILT(set, dw, {(void (*)(void)) symbol, #symbol},)
#define GEMMI8_DWHELPER(set, role, symbol, file) \
  GEMMI8_IF_BUILT(set, dw, {(void (*)(void)) symbol, #symbol},)
#define GEMMI8_Q4SET(set, ...)
#define GEMMI8_Q4END(set)
#define GEMMI8_Q4UKERNEL(set, mr, nr, isa, symbol, file) \
  GEMMI8_IF_BUILT(set, q4, {(void (*)(void)) symbol, #symbol},)
static const struct kernel_symbol kernel_symbols[] = {
#include "qu8.inc"
#include "qs8.inc"
#include "bin.inc"
#include "dw.inc"
#include "q4.inc"
    {NULL, NULL}};

const char* t_kernel_symbol(void (*fn)(void))
{
  for (size_t i = 0; fn != NULL && kernel_symbols[i].fn != NULL; i++) {
    if (kernel_symbols[i].fn == fn) return kernel_symbols[i].name;
  }
  return NULL;
}
