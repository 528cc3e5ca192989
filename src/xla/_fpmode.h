/* The calling thread's floating-point control bits that flush subnormals (xla/_fpmode.c; the C workers of
 * xla/_parallel_loops.c copy the caller's). x86-64: MXCSR's FTZ (0x8000: a subnormal result is written as zero)
 * and DAZ (0x40: a subnormal operand is read as zero); aarch64: FPCR's FZ (bit 24: both). Elsewhere nothing:
 * FPMODE_FLUSH is 0 and the functions do nothing. */
#ifndef XLA_FPMODE_H
#define XLA_FPMODE_H

#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#define FPMODE_FLUSH 0x8040u
static inline unsigned fpmode_word(void) { return _mm_getcsr(); }
static inline void fpmode_write(unsigned w) { _mm_setcsr(w); }
#elif defined(__aarch64__)
#define FPMODE_FLUSH (1u << 24)
static inline unsigned fpmode_word(void) {
    unsigned long long w;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(w));
    return (unsigned)w;
}
static inline void fpmode_write(unsigned w) {
    unsigned long long v = w;
    __asm__ __volatile__("msr fpcr, %0" : : "r"(v));
}
#else
#define FPMODE_FLUSH 0u
static inline unsigned fpmode_word(void) { return 0; }
static inline void fpmode_write(unsigned w) { (void)w; }
#endif

/* the flush bits now set in this thread (0 or FPMODE_FLUSH) */
static inline unsigned fpmode_get(void) { return fpmode_word() & FPMODE_FLUSH; }

/* set this thread's flush bits to `bits` (0 or FPMODE_FLUSH), the rest of the register (rounding, exception
 * masks and flags) kept; a no-op when they are already so (a register write costs more than a read) */
static inline void fpmode_set(unsigned bits) {
    unsigned w = fpmode_word();
    if ((w & FPMODE_FLUSH) != bits) fpmode_write((w & ~FPMODE_FLUSH) | bits);
}

#endif
