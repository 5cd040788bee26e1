/*
 * llvm-mca region markers for the aarch32 kernels (bench/mca.sh).
 *
 * Compiled with -DGEMMI8_MCA, GEMMI8_MCA_BEGIN("name:MACS=n") and GEMMI8_MCA_END()
 * (or the _ASM forms inside an inline assembly loop) put "# LLVM-MCA-BEGIN
 * name:MACS=n" / "# LLVM-MCA-END" comments around one inner loop iteration in the
 * assembly; n is the multiply-accumulates (int8 kernels) or bit products (binary
 * kernels) that one iteration performs. Without GEMMI8_MCA they expand to nothing
 * and the library's code is unchanged.
 */
#ifndef GEMMI8_AARCH32_MCA_H
#define GEMMI8_AARCH32_MCA_H

#ifdef GEMMI8_MCA
#define GEMMI8_MCA_BEGIN(name) __asm__ volatile("# LLVM-MCA-BEGIN " name)
#define GEMMI8_MCA_END() __asm__ volatile("# LLVM-MCA-END")
/* the same lines inside an inline assembly string */
#define GEMMI8_MCA_BEGIN_ASM(name) "# LLVM-MCA-BEGIN " name "\n\t"
#define GEMMI8_MCA_END_ASM "# LLVM-MCA-END\n\t"
#else
#define GEMMI8_MCA_BEGIN(name) ((void) 0)
#define GEMMI8_MCA_END() ((void) 0)
#define GEMMI8_MCA_BEGIN_ASM(name) ""
#define GEMMI8_MCA_END_ASM ""
#endif

/* Loop label and branch of the inline assembly loops: a named local label, unique per
 * asm statement (%=), since llvm-mca rejects numeric labels ("1b") in Thumb code. */
#define GEMMI8_NEON_LOOP_LABEL ".Lgemmi8_loop%=:\n\t"
#define GEMMI8_NEON_LOOP_BNE "bne .Lgemmi8_loop%=\n\t"

#endif
