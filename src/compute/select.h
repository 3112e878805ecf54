/* select.h -- indexing by arrays: integer indices along a dim (NumPy's
 * take, take_along_axis, put_along_axis), boolean masks (a[mask] and
 * a[mask] = v) and the positions of nonzero elements (argwhere). No Lua here.
 *
 * Semantics, stated once:
 *  - Indices are integers of any integer dtype, counted from index_base
 *    (dlbridge's Lua side passes 1), or back from the end when negative
 *    (-1 the last); one outside the dim fails with DLB_E_INDEX before
 *    anything is written. A bool or float array as indices is DLB_E_DTYPE.
 *  - Results are new contiguous arrays on the input's device; the arrays
 *    written in place (put_along, mask_assign) must be writable.
 *  - Masks are bool; a mask of k dims selects along a's first k, whose
 *    extents it must have (DLB_E_SHAPE otherwise): the result has shape
 *    (count, a's other extents...), the picks in row-major order.
 */
#ifndef DLB_COMPUTE_SELECT_H
#define DLB_COMPUTE_SELECT_H

#include "operands.h"

/* out = a.take(index, axis = dim): shape a.shape[:dim] + index.shape +
 * a.shape[dim + 1:]. out->buffer NULL: allocated; else checked as
 * dlb_check_out and written. */
dlb_status dlb_take(const dlb_array *a, const dlb_array *index, int dim, int64_t index_base,
                    dlb_array *out, dlb_backend *cpu, dlb_error *err);

/* out = take_along_axis(a, index, dim): index has a's ndim; the other dims
 * broadcast against a's; out (new) has index's extent along dim. */
dlb_status dlb_take_along(const dlb_array *a, const dlb_array *index, int dim, int64_t index_base,
                          dlb_array *out, dlb_backend *cpu, dlb_error *err);

/* put_along_axis(a, index, values, dim): a[.., index[..j..], ..] =
 * values (broadcast to index's shape after index is broadcast against a's
 * other dims; cast to a's dtype as dlb_cast does). */
dlb_status dlb_put_along(dlb_array *a, const dlb_array *index, const dlb_array *values, int dim,
                         int64_t index_base, dlb_backend *cpu, dlb_error *err);

/* The count of picks and the result shape of a[mask] into (*ndim, shape). */
dlb_status dlb_mask_shape(const dlb_array *a, const dlb_array *mask, dlb_backend *cpu, int *ndim,
                          int64_t *shape, dlb_error *err);

/* out (new) = a[mask]. */
dlb_status dlb_mask_select(const dlb_array *a, const dlb_array *mask, dlb_array *out,
                           dlb_backend *cpu, dlb_error *err);

/* a[mask] = values: values broadcast to the shape of a[mask] (one element
 * for all, or one per pick), cast to a's dtype. */
dlb_status dlb_mask_assign(dlb_array *a, const dlb_array *mask, const dlb_array *values,
                           dlb_backend *cpu, dlb_error *err);

/* out (new, int64, (count, a's ndim)) = the index of each nonzero element
 * of a, row-major, counted from index_base (NumPy's argwhere). */
dlb_status dlb_argwhere(const dlb_array *a, int64_t index_base, dlb_array *out, dlb_backend *cpu,
                        dlb_error *err);

/* A contiguous copy of a reshaped to 1-D (a flat view when a is already
 * contiguous): NumPy's ravel, into *flat (a new reference either way). */
dlb_status dlb_flatten(const dlb_array *a, dlb_array *flat, dlb_error *err);

#endif
