/* shape.h -- checked arithmetic on shapes, strides and byte sizes. */
#ifndef DLB_CORE_SHAPE_H
#define DLB_CORE_SHAPE_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"

/* Element count of a shape; DLB_E_SHAPE for a negative extent, ndim out of
 * [0, DLB_MAX_NDIM], or a count that overflows int64. */
dlb_status dlb_shape_numel(int ndim, const int64_t *shape, int64_t *numel, dlb_error *err);

/* numel * itemsize, checked against PTRDIFF_MAX (DLB_E_SHAPE beyond). */
dlb_status dlb_shape_nbytes(int64_t numel, size_t itemsize, size_t *nbytes, dlb_error *err);

/* Row-major (C order) strides, in elements. */
void dlb_shape_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);

/* Dense strides (in elements) for a new array of (ndim, shape) laid out
 * in the memory order of nop operands of that shape (strides[k]: operand
 * k's, in elements, 0 along its broadcast dims): NumPy's order 'K', by its
 * nditer's rule. Dim a goes outside dim b when some operand steps along
 * both and every such operand steps farther along a (magnitudes: a
 * reversed dim reads as a forward one); where none steps along both, or
 * they disagree, C order stands. Extent-1 dims have no say. */
void dlb_shape_keep_order_strides(int ndim, const int64_t *shape, int nop,
                                  const int64_t *const *strides, int64_t *out);

/* Whether two shapes are the same: as many dims, the same extents. */
int dlb_shape_equal(int ndim_a, const int64_t *a, int ndim_b, const int64_t *b);

/* Row-major contiguity. Strides of extent-1 dims carry no meaning and are
 * ignored; a size-0 array is contiguous. */
int dlb_shape_is_contiguous(int ndim, const int64_t *shape, const int64_t *strides);

/* Lowest and highest element offsets (in elements, relative to element
 * 0...0) that the geometry reaches; both 0 for a size-0 array. DLB_E_SHAPE
 * if any product or sum overflows int64. */
dlb_status dlb_shape_reach(int ndim, const int64_t *shape, const int64_t *strides, int64_t *lo,
                           int64_t *hi, dlb_error *err);

/* Strides for viewing (shape, strides) as new_shape without a copy (the same
 * element count is assumed). Returns 1 and fills new_strides, or 0 if the
 * memory layout makes a copy necessary. */
int dlb_shape_reshape_strides(int ndim, const int64_t *shape, const int64_t *strides, int new_ndim,
                              const int64_t *new_shape, int64_t *new_strides);

/* "(2, 3)" (NumPy's spelling of a shape; "()" for 0-d) into out, cut to
 * size bytes. */
void dlb_shape_text(int ndim, const int64_t *shape, char *out, size_t size);

#endif
