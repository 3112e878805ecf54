/* half_runs.h -- float16 <-> float32 over contiguous runs, for casts.
 *
 * Both directions round to nearest even, keep infinities and turn a NaN into
 * a NaN, exactly as dlb_float16_from_double / dlb_float16_to_double do for
 * one element (float32 -> float16 rounds once; float16 -> float32 is exact).
 * The F16C instructions (x86-64-v3 and up) convert eight elements at a time
 * where the CPU has them; elsewhere the portable one-element conversions run.
 */
#ifndef DLB_HALF_RUNS_H
#define DLB_HALF_RUNS_H

#include <stddef.h>
#include <stdint.h>

/* n float32 at src -> n float16 at dst, and back; any alignment. */
void dlb_half_from_float_run(void *dst, const void *src, size_t n);
void dlb_half_to_float_run(void *dst, const void *src, size_t n);
/* The same one element at a time, on any CPU: what the two above run where
 * F16C is missing (and what tests compare them with). */
void dlb_half_from_float_run_portable(void *dst, const void *src, size_t n);
void dlb_half_to_float_run_portable(void *dst, const void *src, size_t n);

/* float64 -> float32 rounded to odd: the float32 nearest x toward zero, its
 * last bit set when that was inexact. A second rounding of the result to any
 * format of at most 22 significand bits (float16's 11) then equals rounding
 * x once, which a plain (float) conversion in between would not give. */
void dlb_float_round_odd_run(void *dst, const void *src, size_t n);

#endif
