/* loops.h -- the typed 1-D kernels behind element-wise operations.
 *
 * A kernel is a dlb_loop (core/iter.h): data[0] is the output, data[1..nin]
 * the inputs, steps[] their byte strides (0: one value for all n), all in
 * the call's loop dtypes (dlb_elementwise_call.loop_out and .loop_in[]); the
 * output may be exactly an input (in place) but never partly overlap one.
 * Kernels branch on contiguous and stride-0 operands so that the compiler
 * vectorises the common cases. A nonzero return stops the walk: one of the
 * codes below. No Lua here.
 */
#ifndef DLB_BACKENDS_CPU_LOOPS_H
#define DLB_BACKENDS_CPU_LOOPS_H

#include "../../core/iter.h"
#include "../../core/dtype.h"

enum {
  DLB_LOOP_NEGATIVE_POWER = 1 /* an integer to a negative integer power */
};

/* The kernel of op for inputs of dtype type (the loop dtype: float16 and
 * bfloat16 for where only), or NULL when there is none. Each operation's
 * kernels are in one file, for the loop dtypes DLB_ELEMENTWISE_OPS
 * declares: arithmetic, comparisons, bitwise, logical and where in
 * loops_arith.c; the float functions, rounding, abs, sign and the
 * predicates in loops_math.c. */
dlb_loop dlb_arith_loop(dlb_op op, dlb_dtype type);
dlb_loop dlb_math_loop(dlb_op op, dlb_dtype type);

/* Kernel tables are indexed [op][loop dtype]. These rows (designated
 * initializers) name one operation's kernels k_SUFFIX for a group of loop
 * dtypes, the groups of DLB_ELEMENTWISE_OPS's loops column. */
#define DLB_ROW_B(k) [DLB_BOOL] = k##_bool
#define DLB_ROW_I(k)                                                                               \
  [DLB_INT8] = k##_i8, [DLB_INT16] = k##_i16, [DLB_INT32] = k##_i32, [DLB_INT64] = k##_i64,        \
  [DLB_UINT8] = k##_u8, [DLB_UINT16] = k##_u16, [DLB_UINT32] = k##_u32, [DLB_UINT64] = k##_u64
#define DLB_ROW_F(k) [DLB_FLOAT32] = k##_f32, [DLB_FLOAT64] = k##_f64
#define DLB_ROW_C(k) [DLB_COMPLEX64] = k##_c64, [DLB_COMPLEX128] = k##_c128

#endif
