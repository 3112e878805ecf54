/* sort.h -- ordering: sort, argsort and top-k along a dim, unique, and
 * searchsorted. No Lua here.
 *
 * Semantics, stated once (the order itself is dlbridge.h's, NumPy's: NaN
 * after +inf, -0 equal to +0, complex lexicographic with NaN parts last):
 *  - Every dtype sorts, bool and complex included.
 *  - Descending order is the reverse (NaN first); with stable set, equal
 *    elements keep their order either way. Without it the order of equal
 *    elements is the kernels' (the host's radix sort is always stable).
 *  - topk(k) gives the first k of the order (largest: descending), ties to
 *    the element that comes first, and their positions; k from 0 to the
 *    dim's extent (DLB_E_VALUE otherwise).
 *  - unique works on the flattened array (NumPy 1.24: a sorted 1-D result;
 *    index and inverse are 1-D too; with equal_nan every NaN is one value
 *    (complex: every value with a NaN part), else each NaN its own).
 *  - searchsorted: both arrays become their promoted dtype; sorted is 1-D.
 */
#ifndef DLB_COMPUTE_SORT_H
#define DLB_COMPUTE_SORT_H

#include "operands.h"

typedef struct dlb_sort_options {
  int dim; /* 0-based */
  int descending;
  int stable;
  int64_t k;          /* the first k only (top-k); -1: the whole dim */
  int64_t index_base; /* positions count from it (1 in Lua) */
} dlb_sort_options;

/* Sorts a along o->dim into the new arrays wanted: values (a's dtype) and
 * indices (int64), of a's shape with extent k along dim; NULL: not wanted. */
dlb_status dlb_sort(const dlb_array *a, const dlb_sort_options *o, dlb_array *values,
                    dlb_array *indices, dlb_backend *cpu, dlb_error *err);

typedef struct dlb_unique_options {
  int64_t index_base; /* positions count from it (1 in Lua) */
  int equal_nan;      /* every NaN one value (NumPy's default) */
} dlb_unique_options;

/* The sorted distinct values of a (new, 1-D) and, where asked (non-NULL),
 * index (int64: the position in the flattened a of each value's first
 * element), inverse (int64, a's numel: the position of each element's
 * value among them) and counts (int64: how many elements each has);
 * positions from o->index_base. */
dlb_status dlb_unique(const dlb_array *a, const dlb_unique_options *o, dlb_array *values,
                      dlb_array *index, dlb_array *inverse, dlb_array *counts, dlb_backend *cpu,
                      dlb_error *err);

/* out (new, int64, values' shape) = where each value would go in sorted to
 * keep it in order: index_base + the count of elements before it (right:
 * not after it). */
dlb_status dlb_searchsorted(const dlb_array *sorted, const dlb_array *values, int right,
                            int64_t index_base, dlb_array *out, dlb_backend *cpu, dlb_error *err);

#endif
