/* construct.h -- construction, shape and comparison helpers built on the
 * core's views, copies, fills and element-wise operations: NumPy's eye,
 * arange, linspace, logspace, frombuffer, tile, repeat, roll, pad, convolve,
 * isclose and array_equal. No Lua here.
 *
 * Common rules: dims are 0-based; every result is a new contiguous array in
 * *out (out->buffer is NULL on entry; on failure it stays released) on the
 * input's device (wrapped host memory counts as cpu). The copying functions
 * (tile, repeat, roll, pad) work on every backend's memory, as copies do;
 * convolve needs memory the host addresses, isclose and array_equal the
 * element-wise kernels of the operands' memory (DLB_E_UNSUPPORTED with a
 * hint to device_put to "cpu" otherwise). Extents and element counts that
 * overflow int64 are DLB_E_SHAPE. Each call is bounded work (work.h) over
 * its result's elements. */
#ifndef DLB_COMPUTE_CONSTRUCT_H
#define DLB_COMPUTE_CONSTRUCT_H

#include "operands.h"

/* An n x m array of dtype on (backend, device_id): ones on diagonal k
 * (0 the main one, > 0 above, < 0 below), zeros elsewhere (NumPy's eye). */
dlb_status dlb_eye(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype, int64_t n,
                   int64_t m, int64_t k, dlb_error *err);

/* --- sequences ------------------------------------------------------------
 * arange, linspace and logspace: a new 1-D array of n elements (n >= 0) of
 * dtype on (backend, device_id), computed on the host: memory other than
 * cpu's is filled through a cpu array copied over. Bounded work over n
 * elements: refused before anything is allocated when n passes the work
 * limit, stopped by the interrupt (looked at every DLB_WORK_CHECK_EVERY
 * elements). The formulas are the ones below, to the bit. */

/* Element i is start + i * step, in int64 (the caller's n keeps every element
 * between start and stop), stored strictly (dlb_scalar_store: DLB_E_VALUE
 * for the first element dtype cannot hold). */
dlb_status dlb_arange_int(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype,
                          int64_t start, int64_t step, int64_t n, dlb_backend *cpu, dlb_error *err);

/* Element i is start + (double)i * step, stored strictly. */
dlb_status dlb_arange_float(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype,
                            double start, double step, int64_t n, dlb_backend *cpu, dlb_error *err);

/* NumPy's linspace, both ends included: element i is start + (double)i *
 * delta with delta = (stop - start) / (n - 1) (0 for n = 1), the last
 * exactly stop (n > 1); stored strictly. */
dlb_status dlb_linspace(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype,
                        double start, double stop, int64_t n, dlb_backend *cpu, dlb_error *err);

/* NumPy's logspace: pow(base, y_i), y the exponents from start to stop:
 * start + (double)i * step with step = (stop - start) / (n - 1) and the
 * last exactly stop when endpoint (y_0 = start for n = 1), step = (stop -
 * start) / n otherwise; computed in float64, then cast to dtype as
 * dlb_cast does (NumPy's astype). */
dlb_status dlb_logspace(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype,
                        double start, double stop, int64_t n, int endpoint, double base,
                        dlb_backend *cpu, dlb_error *err);

/* NumPy's frombuffer(...).copy(): a new contiguous array of dtype and shape
 * on (backend, device_id) holding the numel * itemsize bytes at bytes (row
 * major; the caller checked that there are that many). A bool element is
 * the byte 0 or 1: any other is DLB_E_VALUE naming the first. Bounded work
 * over the result's elements. */
dlb_status dlb_frombytes(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype,
                         int ndim, const int64_t *shape, const void *bytes, dlb_error *err);

/* NumPy's tile: a repeated reps[i] times along each dim, after the shorter
 * of a's shape and reps is padded with leading 1s (reps >= 0). */
dlb_status dlb_tile(const dlb_array *a, int nreps, const int64_t *reps, dlb_array *out,
                    dlb_backend *cpu, dlb_error *err);

/* NumPy's repeat along dim: element i of dim is repeated counts[i] times
 * (ncounts == a->shape[dim]), or counts[0] times each (ncounts == 1);
 * counts >= 0 (DLB_E_VALUE otherwise), other ncounts DLB_E_SHAPE. */
dlb_status dlb_repeat(const dlb_array *a, int dim, int64_t ncounts, const int64_t *counts,
                      dlb_array *out, dlb_backend *cpu, dlb_error *err);
/* The element count of dlb_repeat's result for those arguments, saturating
 * at INT64_MAX, a negative count counting as 0: a caller's memory
 * reservation before the call (which checks the counts). dim in range. */
int64_t dlb_repeat_numel(const dlb_array *a, int dim, int64_t ncounts, const int64_t *counts);

/* NumPy's roll: element i of dim d moves to (i + shifts[d]) mod extent
 * (shifts has a->ndim entries, any sign). */
dlb_status dlb_roll(const dlb_array *a, const int64_t *shifts, dlb_array *out, dlb_backend *cpu,
                    dlb_error *err);

typedef enum dlb_pad_mode {
  DLB_PAD_CONSTANT,  /* value */
  DLB_PAD_EDGE,      /* the edge element repeated */
  DLB_PAD_REFLECT,   /* mirrored about the edge element (not repeating it) */
  DLB_PAD_SYMMETRIC, /* mirrored, the edge element repeated */
  DLB_PAD_WRAP       /* the other end's elements (periodic) */
} dlb_pad_mode;

/* NumPy's pad: widths[d][0] elements before and widths[d][1] after along
 * each dim d (>= 0), filled as mode says, dim by dim in order (so corners
 * come out as NumPy's). value (constant mode) is stored strictly
 * (DLB_E_VALUE when the dtype cannot hold it). Other modes cannot extend a
 * dim of extent 0 (DLB_E_VALUE). */
dlb_status dlb_pad(const dlb_array *a, const int64_t (*widths)[2], dlb_pad_mode mode,
                   const dlb_scalar *value, dlb_array *out, dlb_backend *cpu, dlb_error *err);

typedef enum dlb_convolve_mode {
  DLB_CONVOLVE_FULL, /* n + m - 1 elements */
  DLB_CONVOLVE_SAME, /* max(n, m), centred as NumPy's */
  DLB_CONVOLVE_VALID /* max(n, m) - min(n, m) + 1 */
} dlb_convolve_mode;

/* NumPy's convolve of two 1-D (or 0-d: one element) non-empty arrays
 * (DLB_E_SHAPE for more dims, DLB_E_VALUE for an empty one). The result
 * dtype is the promotion of theirs. Products are summed in double (float
 * dtypes), double complex (complex) or 64-bit integers wrapping (integers;
 * bool: any product true), then stored in the result dtype once. */
dlb_status dlb_convolve(const dlb_array *a, const dlb_array *v, dlb_convolve_mode mode,
                        dlb_array *out, dlb_backend *cpu, dlb_error *err);

/* NumPy 1.24's isclose over two operands (arrays or scalars, broadcast):
 * b is first made inexact (integers and bool as float64), then an element
 * is close when both are finite and |a - b| <= atol + rtol * |b|, or when
 * either is not and a == b, or (equal_nan) both are NaN. A bool array. */
dlb_status dlb_isclose(const dlb_operand *a, const dlb_operand *b, double rtol, double atol,
                       int equal_nan, dlb_array *out, dlb_backend *cpu, dlb_error *err);

/* Whether every element of the bool array a is true (0 for none false). */
dlb_status dlb_all_true(const dlb_array *a, dlb_backend *cpu, int *result, dlb_error *err);

/* NumPy's array_equal: *equal is 1 when a and b have the same shape and
 * equal elements (equal_nan: NaNs in the same places count as equal). */
dlb_status dlb_array_equal(const dlb_array *a, const dlb_array *b, int equal_nan, int *equal,
                           dlb_backend *cpu, dlb_error *err);

#endif
