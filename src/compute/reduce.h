/* reduce.h -- reductions (the rows of DLB_REDUCE_OPS, dlbridge.h: NumPy's
 * sum, prod, mean, min, max, argmin, argmax, all, any, count_nonzero, std,
 * var and the nan-functions nansum, nanprod, nanmean, nanmin, nanmax,
 * nanargmin, nanargmax, nanstd, nanvar) over any set of dims of an array,
 * on the device whose kernels compute on its memory. No Lua here.
 *
 * Semantics, stated once:
 *  - Dims: any subset of the array's dims is reduced (every dim by
 *    default); the result has the other dims, in order, plus the reduced
 *    ones with extent 1 when keepdims is set. argmin and argmax take every
 *    dim (the index is then the flat row-major index, as if the array were
 *    reshaped to 1-D) or exactly one.
 *  - dtypes (NumPy's): sum and prod of bool and signed integers give int64,
 *    of unsigned integers uint64, of floats and complex their own dtype;
 *    mean of bool and integers gives float64, of floats and complex their
 *    own dtype; std and var give float64 for bool and integers, the real
 *    dtype of complex, floats their own dtype; min and max keep the dtype
 *    (bool included); argmin, argmax and count_nonzero give int64; all and
 *    any bool. A dtype option (sum, prod, mean, std, var only) sets the
 *    result dtype (std and var: its real dtype) and the dtype the elements
 *    are converted to (as dlb_cast does) before they are combined; mean, std
 *    and var take only float and complex dtypes.
 *  - Accumulation: integers in 64 bits, wrapping (modulo 2^64, then to the
 *    result dtype); float16 and bfloat16 in float32, rounded once at the
 *    end. Float and complex sums (and those inside mean, std, var) are
 *    NumPy 1.24's bit for bit where NumPy walks the same way: along the
 *    memory-contiguous dim, pairwise (blocks of up to 128 with 8
 *    accumulators, halves split at multiples of 8) over runs of at most
 *    8192 elements, the runs added in order; along another dim, whole rows
 *    added in order. Where the kept memory-contiguous dim has fewer than 16
 *    elements, the reduced dim is summed pairwise instead (more exact, and
 *    no short rows). prod multiplies in memory order. std and var take two
 *    passes (the mean, then the sum of |x - mean|^2 over a temporary the
 *    size of the input) and divide by max(n - ddof, 0); a complex input
 *    computes in complex of the result's precision.
 *  - NaN: min, max, argmin and argmax propagate NaN (argmin and argmax give
 *    the first NaN's index); ties give the first index. all, any and
 *    count_nonzero count NaN as nonzero.
 *  - Empty reductions (a reduced dim of extent 0): sum 0, prod 1, all
 *    true, any false, count_nonzero 0, mean, std and var NaN; min, max,
 *    argmin and argmax fail with DLB_E_VALUE (NumPy's ValueError). n - ddof
 *    <= 0 gives inf (or NaN for a zero sum of squares), as NumPy does.
 *  - Complex: min, max, argmin and argmax fail with DLB_E_DTYPE (NumPy
 *    orders complex numbers lexicographically; dlbridge does not).
 *  - The nan-functions (the rows whose nan column is 1) are NumPy 1.24's:
 *    dtypes, options, empty reductions and complex as the row without
 *    "nan" has them; NaN elements (a complex number with a NaN part) are
 *    left out: nansum and nanmean read them as 0 (nanmean divides by the
 *    count of the others), nanprod as 1, nanmin and nanmax pass over them
 *    (NumPy's fmin/fmax), nanargmin and nanargmax read them as +inf and
 *    -inf (a NaN before an equal infinity is found first, as in NumPy),
 *    nanvar and nanstd take the mean of the others and count a NaN's
 *    deviation as 0, dividing by count - ddof. Bool and integers hold no
 *    NaN: their results are the plain reduction's. A slice of NaNs only
 *    gives: nansum 0, nanprod 1, nanmean, nanstd, nanvar, nanmin and
 *    nanmax NaN (NumPy also warns; dlbridge does not); nanargmin and
 *    nanargmax fail with DLB_E_VALUE (NumPy's ValueError "All-NaN slice
 *    encountered"). nanvar and nanstd of float and complex give NaN where
 *    count - ddof <= 0 (NumPy's nanvar; var, and nanvar of integers, give
 *    inf there). Complex input summed into a real dtype option (nansum,
 *    nanprod, nanmean) loses its NaN numbers before its imaginary parts,
 *    as in NumPy. Sums are pairwise as sum's, over the elements with the
 *    NaNs read as 0 (NumPy sums such a copy), so nansum is NumPy's bit for
 *    bit where sum is; float16 and bfloat16 compute in float32, rounded
 *    once at the end (NumPy's nanmean/nanvar of float16 round the sums
 *    every 8192 elements: they may differ in the last bits).
 */
#ifndef DLB_COMPUTE_REDUCE_H
#define DLB_COMPUTE_REDUCE_H

#include "operands.h"

/* How a reduction picks its dtypes and runs: the rule column of
 * DLB_REDUCE_OPS (the semantics above give each in full). */
typedef enum dlb_reduce_rule {
  DLB_REDUCE_RULE_ACCUMULATE, /* sum, prod: bool and integers into 64 bits */
  DLB_REDUCE_RULE_MEAN,       /* the sum over the count; bool and integers in float64 */
  DLB_REDUCE_RULE_SPREAD,     /* std, var: as MEAN, then the deviations (two passes) */
  DLB_REDUCE_RULE_EXTREME,    /* min, max: the input's dtype; no complex */
  DLB_REDUCE_RULE_ARG,        /* argmin, argmax: an int64 index; one dim or all; no complex */
  DLB_REDUCE_RULE_TRUTH,      /* all, any: bool */
  DLB_REDUCE_RULE_TALLY       /* count_nonzero: int64 */
} dlb_reduce_rule;

/* The identity column of DLB_REDUCE_OPS. */
typedef enum dlb_reduce_identity {
  DLB_REDUCE_IDENTITY_ZERO,
  DLB_REDUCE_IDENTITY_ONE,
  DLB_REDUCE_IDENTITY_NONE /* the first element; no empty reduction */
} dlb_reduce_identity;

/* A reduction's row of DLB_REDUCE_OPS, as the core and the binding read it. */
typedef struct dlb_reduce_info {
  const char *name; /* NumPy's name: "sum", "count_nonzero" */
  dlb_reduce_rule rule;
  dlb_reduce_identity identity;
  int takes_dtype, takes_ddof; /* the options beyond dim, keepdims and out */
  int skips_nan;               /* NaN elements are left out (nansum, nanmax, ...) */
} dlb_reduce_info;

/* The row of op (a valid id). */
const dlb_reduce_info *dlb_reduce_get(dlb_reduce_op op);

/* NumPy's name of op: "sum", "count_nonzero". */
const char *dlb_reduce_name(dlb_reduce_op op);

/* dims: every dim of the array, whatever its ndim. */
#define DLB_REDUCE_ALL_DIMS UINT64_MAX

/* How a reduction runs. Zero-initialised plus dims gives NumPy's defaults. */
typedef struct dlb_reduce_options {
  uint64_t dims; /* bit d set: dim d (0-based) is reduced; DLB_REDUCE_ALL_DIMS: all */
  int keepdims;  /* the reduced dims stay, with extent 1 */
  int has_dtype; /* dtype is given (sum, prod, mean, std, var only) */
  dlb_dtype dtype;
  double ddof;        /* std and var: the divisor is n - ddof; ignored by the others */
  int64_t index_base; /* argmin, argmax: the index of the first element (0 in C, 1 in Lua) */
} dlb_reduce_options;

/* The dtype op gives for an array of dtype in: DLB_E_DTYPE where op has
 * none (complex min/max/argmin/argmax; an integer dtype option for mean,
 * std, var), DLB_E_ARGUMENT for a dtype option op does not take. */
dlb_status dlb_reduce_result_type(dlb_reduce_op op, dlb_dtype in, const dlb_reduce_options *o,
                                  dlb_dtype *result, dlb_error *err);

/* The shape op's result has (*ndim, shape[]): DLB_E_INDEX for a dim bit at
 * or past a->ndim, DLB_E_ARGUMENT for argmin/argmax over several dims but
 * not all. Checks neither dtype nor emptiness. */
dlb_status dlb_reduce_result_shape(dlb_reduce_op op, const dlb_array *a,
                                   const dlb_reduce_options *o, int *ndim, int64_t *shape,
                                   dlb_error *err);

/*
 * Reduces a (checked as dlb_check_operands_for: DLB_E_DELETED, and
 * DLB_E_UNSUPPORTED when the kernels of a's memory have no reduce). When
 * out->buffer is NULL a new contiguous result is allocated on a's device
 * into *out (so a caller passing a user's out array checks first that it
 * was not released); otherwise *out receives it (checked as dlb_check_out:
 * shape exactly the result's, a dtype the result casts to under same_kind;
 * it may overlap a). Temporaries (accumulators, std/var deviations,
 * conversions) come from cpu.
 * On failure a newly allocated *out is released; a given one may be partly
 * written.
 */
dlb_status dlb_reduce(dlb_reduce_op op, const dlb_array *a, const dlb_reduce_options *o,
                      dlb_array *out, dlb_backend *cpu, dlb_error *err);

/* As dlb_reduce for a result of exactly one element (every dim reduced,
 * or all others of extent 1; DLB_E_SHAPE otherwise), which goes into
 * *value (dlb_scalar_load of the result dtype) without a result array. */
dlb_status dlb_reduce_value(dlb_reduce_op op, const dlb_array *a, const dlb_reduce_options *o,
                            dlb_backend *cpu, dlb_scalar *value, dlb_error *err);

#endif
