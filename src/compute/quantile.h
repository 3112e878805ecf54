/* quantile.h -- order statistics: NumPy 1.24's median, quantile,
 * percentile and their nan- forms over any set of dims of an array in host
 * memory. No Lua here.
 *
 * Semantics, stated once:
 *  - Dims: as the reductions' (reduce.h): any subset of the dims is reduced
 *    (all by default); keepdims leaves them with extent 1. The elements of
 *    the reduced dims form one slice per position of the other dims. q (any
 *    shape, read as float64) puts its shape first: result[j, ...] is the
 *    q[j] quantile of the slices; a 0-d q adds no dim.
 *  - q: quantile takes 0 <= q <= 1, percentile 0 <= q <= 100 (q / 100 is
 *    used, as NumPy divides); NaN or outside is DLB_E_VALUE.
 *  - Methods (NumPy's names): with m the slice's element count and
 *    v = (m - 1) * q, "lower" takes rank floor(v), "higher" ceil(v),
 *    "nearest" v rounded half to even; "linear" (the default) interpolates
 *    between ranks floor(v) and floor(v) + 1 by t = v - floor(v), as
 *    NumPy's _lerp: d = b - a in the input's dtype (integers wrap, floats
 *    round, as NumPy subtracts), then a + d * t, or b - d * (1 - t) where
 *    t >= 0.5, in float64; at the top rank (v >= m - 1) both ranks are the
 *    last and t is v + 1 (NumPy's index -1). "midpoint" is linear at
 *    v = (floor(v) + ceil(v)) / 2 with t = 0.5, or 0 where that is whole.
 *    median is the mean of the middle element or two, as np.mean computes
 *    it: (a + b) / 2 in float64 for bool and integers, in float32 for
 *    float16, bfloat16 (rounded back) and float32, in float64 for float64.
 *  - dtypes (NumPy 1.24's): lower, higher and nearest keep the input's
 *    dtype (bool included); linear and midpoint give float64 whatever the
 *    input (bool: DLB_E_DTYPE, NumPy cannot subtract booleans); median gives
 *    float64 for bool and integers, floats keep their dtype. Complex inputs
 *    are DLB_E_DTYPE.
 *  - NaN: a slice holding a NaN gives NaN (every method). The nan- forms
 *    leave NaN out (m counts the others); a slice of NaN only gives NaN,
 *    silently (NumPy warns).
 *  - Empty slices (m = 0) where the result has elements: median and
 *    nanmedian give NaN (NumPy warns); quantile and percentile fail with
 *    DLB_E_INDEX (NumPy 1.24's IndexError); the nan- forms give NaN where
 *    the result dtype is a float and fail with DLB_E_INDEX otherwise (NumPy
 *    returns nanmean's NaN there, and drops q's dims for an empty input;
 *    dlbridge keeps them). An empty result is no error (NumPy 1.24 raises
 *    for some: an empty q over empty slices, several dims of an empty
 *    input).
 *  - The result dtype never depends on the values (NumPy's nan- forms take
 *    the first slice's, and its result of one NaN slice has the input's).
 *  - -0.0 and 0.0 are equal: which of them a tie gives is unspecified.
 *
 * The work: each slice is copied (converted to a 64-bit integer, float32
 * or float64 working type) into scratch charged to the budget, and the
 * ranks wanted are selected there (select_kth.h: Floyd-Rivest and
 * quickselect, heapsort past a depth limit: O(m) expected, O(m log m) at
 * worst), never a full sort. The copy looks at the interrupt every
 * DLB_WORK_CHECK_EVERY elements; a slice's selection is counted after it.
 */
#ifndef DLB_COMPUTE_QUANTILE_H
#define DLB_COMPUTE_QUANTILE_H

#include "operands.h"

typedef enum dlb_quantile_method {
  DLB_QUANTILE_LINEAR,
  DLB_QUANTILE_LOWER,
  DLB_QUANTILE_HIGHER,
  DLB_QUANTILE_NEAREST,
  DLB_QUANTILE_MIDPOINT,
  DLB_QUANTILE_MEDIAN /* the mean of the middle one or two; no q */
} dlb_quantile_method;

typedef struct dlb_quantile_options {
  uint64_t dims; /* bit d: dim d (0-based) is reduced; DLB_REDUCE_ALL_DIMS (reduce.h): all */
  int keepdims;
  dlb_quantile_method method;
  int skip_nan;   /* the nan- forms */
  int percentile; /* q is in percent */
} dlb_quantile_options;

/* The name of the operation o describes: "median", "nanpercentile". */
const char *dlb_quantile_name(const dlb_quantile_options *o);

/* The dtype and shape of the result for a and q (NULL for median; else any
 * shape), with the errors dlb_quantile gives for them (DLB_E_DTYPE,
 * DLB_E_INDEX for a dim bit at or past a->ndim); q's values are not read. */
dlb_status dlb_quantile_result(const dlb_array *a, const dlb_array *q,
                               const dlb_quantile_options *o, dlb_dtype *dtype, int *ndim,
                               int64_t *shape, dlb_error *err);

/* Order statistics of a (host memory: DLB_E_UNSUPPORTED otherwise) at q
 * (NULL for median) into *out, a new contiguous array on a's device. q's
 * values are checked (DLB_E_VALUE) before any slice is read. On failure
 * nothing is left allocated. */
dlb_status dlb_quantile(const dlb_array *a, const dlb_array *q, const dlb_quantile_options *o,
                        dlb_array *out, dlb_backend *cpu, dlb_error *err);

#endif
