/* scatter.h -- grouped updates in place: NumPy's ufunc.at for add,
 * multiply, maximum and minimum (np.add.at(a, idx, v) and, along a dim,
 * np.add.at(a, (slice(None),) * dim + (idx,), v), PyTorch's index_add and
 * index_reduce). No Lua here.
 *
 * Semantics, stated once:
 *  - index (integers of any integer dtype, any shape) picks elements along
 *    dim of a, counted from index_base (dlbridge's Lua side passes 1), or
 *    back from the end when negative; one outside the dim fails with
 *    DLB_E_INDEX before anything is written. The updates have the shape
 *    a.shape[:dim] + index.shape + a.shape[dim + 1:] (a.take(index, dim)'s),
 *    which values broadcast to (DLB_E_SHAPE otherwise).
 *  - Unbuffered: an index that repeats updates its element once per
 *    occurrence, in row-major order of the updates.
 *  - Each update computes in NumPy's loop dtype, the promotion of a's and
 *    values' dtypes (float16 in float32), and is cast back to a's dtype,
 *    which the loop dtype must cast to under same_kind (DLB_E_DTYPE
 *    otherwise: an int array takes no float updates). Integers wrap; bool
 *    add and maximum are logical or, multiply and minimum logical and;
 *    maximum and minimum propagate NaN. Complex arrays take add and
 *    multiply only (DLB_E_DTYPE).
 *  - a must be writable (DLB_E_READ_ONLY) and not 0-d (DLB_E_INDEX); it
 *    may be any view. index and values that overlap a are copied first.
 */
#ifndef DLB_COMPUTE_SCATTER_H
#define DLB_COMPUTE_SCATTER_H

#include "operands.h"

/* The grouped update of a by values at index along dim (0-based); op is a
 * DLB_SCATTER_* (dlbridge.h). */
dlb_status dlb_scatter(int op, dlb_array *a, const dlb_array *index, const dlb_array *values,
                       int dim, int64_t index_base, dlb_backend *cpu, dlb_error *err);

#endif
