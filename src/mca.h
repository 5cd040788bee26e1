/*
 * llvm-mca region markers for the ARM kernels (bench/mca.sh).
 *
 * Compiled with -DGEMMI8_MCA, GEMMI8_MCA_BEGIN("name") and GEMMI8_MCA_END() emit
 * "# LLVM-MCA-BEGIN name" / "# LLVM-MCA-END" comments into the assembly; otherwise
 * they are empty and the kernels compile exactly as shipped. A kernel puts BEGIN as
 * the first statement of its depth loop and END right after the loop (or, for a loop
 * written in inline assembly, GEMMI8_MCA_BEGIN_ASM / GEMMI8_MCA_END_ASM() around it in
 * the assembly string), so that a region is one iteration of the loop body with its
 * closing compare and branch. A name may carry ":MACS=n", the multiply-accumulates
 * (int8) or bit products (binary) of one iteration.
 * llvm-mca-14 ignores -mattr when the file has GCC's ".arch armv8.2-a+...+dotprod"
 * line (and then silently drops SDOT): delete it first.
 *   aarch64-linux-gnu-gcc -O2 -S -DGEMMI8_MCA -Iinclude -Isrc <isa flags> file.c -o f.s
 *   sed -i '/^[[:space:]]*\.arch/d' f.s
 *   llvm-mca-19 -mtriple=aarch64 -mcpu=neoverse-n2 f.s
 */
#ifndef GEMMI8_MCA_H
#define GEMMI8_MCA_H

#ifdef GEMMI8_MCA
#define GEMMI8_MCA_BEGIN(name) __asm__ volatile("# LLVM-MCA-BEGIN " name)
#define GEMMI8_MCA_END() __asm__ volatile("# LLVM-MCA-END")
#define GEMMI8_MCA_BEGIN_ASM(name) "# LLVM-MCA-BEGIN " name "\n\t"
#define GEMMI8_MCA_END_ASM() "# LLVM-MCA-END\n\t"
#else
#define GEMMI8_MCA_BEGIN(name) ((void) 0)
#define GEMMI8_MCA_END() ((void) 0)
#define GEMMI8_MCA_BEGIN_ASM(name) ""
#define GEMMI8_MCA_END_ASM() ""
#endif

/* Loop label and branch of the aarch32 inline assembly loops: a named local label,
 * unique per asm statement (%=), since llvm-mca rejects numeric labels ("1b") in
 * Thumb code. */
#define GEMMI8_NEON_LOOP_LABEL ".Lgemmi8_loop%=:\n\t"
#define GEMMI8_NEON_LOOP_BNE "bne .Lgemmi8_loop%=\n\t"

#endif
