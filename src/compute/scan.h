/* scan.h -- scans, differences and counts: cumsum, cumprod, diff,
 * bincount and histogram, with NumPy's semantics. No Lua here.
 *
 *  - cumsum and cumprod give the dtypes sum and prod give (bool and signed
 *    integers int64, unsigned uint64, others their own) unless a dtype is
 *    asked for; each partial result is rounded to it (NumPy's accumulate).
 *  - diff(n) applies a[1:] - a[:-1] along the dim n times (bool: not_equal);
 *    n = 0 gives a itself; a dim shorter than n ends at extent 0.
 *  - bincount takes a 1-D array of non-negative integers (bool, int8..int64,
 *    uint8..uint32: what casts safely to int64); counts has max(max + 1,
 *    minlength) bins, int64, or float64 with weights (of the same length;
 *    an empty x gives int64 zeros either way, as NumPy).
 *  - histogram: counts and edges as NumPy's. Edges are a linspace over the
 *    range (default: the data's min and max, widened by 0.5 either way when
 *    equal) in the data's float dtype (float64 for integers and bool), or
 *    the edges given; x counts in bin b when edges[b] <= x < edges[b + 1],
 *    the last bin taking its right edge; values outside and NaN are not
 *    counted. Weighted counts are summed in float64 (NumPy's blocks of 65536
 *    elements) and given the weights' dtype at the end.
 */
#ifndef DLB_COMPUTE_SCAN_H
#define DLB_COMPUTE_SCAN_H

#include "operands.h"

typedef struct dlb_scan_options {
  int dim; /* 0-based */
  int has_dtype;
  dlb_dtype dtype;
} dlb_scan_options;

/* The dtype cumsum/cumprod of an array of dtype in gives. */
dlb_dtype dlb_scan_result_type(dlb_dtype in, const dlb_scan_options *o);

/* op (DLB_SCAN_SUM, DLB_SCAN_PROD) along o->dim. out->buffer NULL: a new
 * result; else written (checked as dlb_check_out; it may overlap a). */
dlb_status dlb_scan(int op, const dlb_array *a, const dlb_scan_options *o, dlb_array *out,
                    dlb_backend *cpu, dlb_error *err);

/* out (new, or a view of a when n == 0) = the n-th difference along dim. */
dlb_status dlb_diff(const dlb_array *a, int64_t n, int dim, dlb_array *out, dlb_backend *cpu,
                    dlb_error *err);

/* counts (new) = bincount(x, weights (NULL: none), minlength). */
dlb_status dlb_bincount(const dlb_array *x, const dlb_array *weights, int64_t minlength,
                        dlb_array *counts, dlb_backend *cpu, dlb_error *err);

typedef struct dlb_histogram_options {
  int64_t bins;           /* evenly spaced bins (when edges is NULL) */
  const dlb_array *edges; /* or the edges (1-D, ascending, two or more) */
  int has_range;
  double lo, hi;            /* the range of the evenly spaced bins */
  const dlb_array *weights; /* NULL: each element counts 1 */
} dlb_histogram_options;

/* counts and edges (new) of histogram(a, ...). */
dlb_status dlb_histogram(const dlb_array *a, const dlb_histogram_options *o, dlb_array *counts,
                         dlb_array *edges, dlb_backend *cpu, dlb_error *err);

#endif
