/* join.h -- joining arrays into a new one: NumPy's concatenate and stack.
 * No Lua here. */
#ifndef DLB_COMPUTE_JOIN_H
#define DLB_COMPUTE_JOIN_H

#include "operands.h"

/*
 * dlb_concat joins the n arrays along the existing dim (0-based): all have
 * the same ndim >= 1 (0-d: DLB_E_SHAPE) and the same extents except along
 * dim (DLB_E_SHAPE naming the first array that differs); the result's
 * extent along dim is the sum of theirs.
 *
 * dlb_stack joins them along a new dim inserted at position dim (0..ndim):
 * all have the same shape (0-d arrays stack into a 1-D result).
 *
 * Both: 1 <= n <= INT_MAX (DLB_E_ARGUMENT otherwise); dim out of range is
 * DLB_E_INDEX; the arrays are checked as dlb_check_operands_for does with
 * DLB_ANY_MEMORY (live, one device; any memory: every backend copies). The
 * result is a new contiguous array in *out (out->buffer is NULL on entry)
 * on the arrays' device, of the promotion of all their dtypes
 * (np.concatenate's result_type); each array is copied into its place with
 * dlb_array_copy_into. On failure *out stays released.
 * Messages number the arrays from 1, as a Lua list does.
 */
dlb_status dlb_concat(int64_t n, const dlb_array *const *arrays, int dim, dlb_array *out,
                      dlb_backend *cpu, dlb_error *err);
dlb_status dlb_stack(int64_t n, const dlb_array *const *arrays, int dim, dlb_array *out,
                     dlb_backend *cpu, dlb_error *err);

/* The dtype, ndim and shape that dlb_concat (stack 0) or dlb_stack (stack 1)
 * would make, with the same checks but for devices; allocates nothing (a
 * binding sizes its memory reservation with it). */
dlb_status dlb_join_result(int stack, int64_t n, const dlb_array *const *arrays, int dim,
                           dlb_dtype *dtype, int *ndim, int64_t *shape, dlb_error *err);

#endif
