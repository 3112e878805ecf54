/* loops.h -- the typed 1-D kernels behind element-wise operations.
 *
 * A kernel is a dlb_loop (core/iter.h): data[0] is the output, data[1..nin]
 * the inputs, steps[] their byte strides (0: one value for all n), all in
 * the dtypes dlb_op_resolve picked (dlb_op_types.loop_out and .in[]); the
 * output may be exactly an input (in place) but never partly overlap one.
 * Kernels branch on contiguous and stride-0 operands so that the compiler
 * vectorises the common cases. A nonzero return stops the walk: one of the
 * codes below. No Lua here.
 */
#ifndef DLB_COMPUTE_LOOPS_H
#define DLB_COMPUTE_LOOPS_H

#include "../../core/iter.h"
#include "../../compute/elementwise.h"

enum {
  DLB_LOOP_NEGATIVE_POWER = 1 /* an integer to a negative integer power */
};

/* The kernel of op for inputs of dtype type (the loop dtype: never float16
 * or bfloat16), or NULL when there is none. Arithmetic, comparisons,
 * bitwise, logical and where live in loops_arith.c; the float functions,
 * rounding, abs, sign and the predicates in loops_math.c. */
dlb_loop dlb_arith_loop(dlb_op op, dlb_dtype type);
dlb_loop dlb_math_loop(dlb_op op, dlb_dtype type);

#endif
