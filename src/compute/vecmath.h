/* vecmath.h -- vector math as NumPy 1.24 has it: cross, outer,
 * linalg.norm and interp, built on the element-wise driver (elementwise.h),
 * the reductions (reduce.h) and the SVD (linalg.h); interp's search is its
 * own loop. No Lua here.
 *
 * Every function returns a new array in *out (out->buffer NULL on entry;
 * released again on failure), allocated through the budget on the operands'
 * device, and runs as one bounded work (the work limit and the interrupt).
 * Shapes that do not fit are DLB_E_SHAPE, values NumPy refuses DLB_E_VALUE,
 * dtypes it refuses DLB_E_DTYPE. */
#ifndef DLB_COMPUTE_VECMATH_H
#define DLB_COMPUTE_VECMATH_H

#include "operands.h"

/*
 * np.cross(a, b): the vectors lie along the last dim of each operand
 * (extent 2 or 3, else DLB_E_SHAPE; 0-d operands are DLB_E_SHAPE), the dims
 * before it broadcast. Two 3-vectors give a 3-vector; a 2-vector is one
 * with z = 0, except that two 2-vectors give the z component alone (the
 * result loses the last dim), as NumPy's. The result dtype is the promotion
 * of a's and b's, computed as NumPy does (the same products and differences
 * in the same order: integers wrap); booleans are DLB_E_DTYPE (NumPy cannot
 * subtract them).
 */
dlb_status dlb_cross(const dlb_array *a, const dlb_array *b, dlb_array *out, dlb_backend *cpu,
                     dlb_error *err);

/* np.outer(a, b): a and b flattened (row-major; 0-d is one element), the
 * result (a.size, b.size) holding a[i] * b[j] in the promotion of their
 * dtypes (booleans: logical and). */
dlb_status dlb_outer(const dlb_array *a, const dlb_array *b, dlb_array *out, dlb_backend *cpu,
                     dlb_error *err);

/* The order of a norm: a number (±INFINITY included) or "fro" or "nuc". */
typedef enum dlb_norm_kind {
  DLB_NORM_DEFAULT, /* NumPy's ord=None: 2 for vectors, "fro" for matrices */
  DLB_NORM_NUMBER,  /* p */
  DLB_NORM_FRO,
  DLB_NORM_NUC
} dlb_norm_kind;

typedef struct dlb_norm_args {
  const dlb_array *a;
  dlb_norm_kind kind;
  double p;     /* DLB_NORM_NUMBER: the order */
  int ndims;    /* how many dims were given: 0 (NumPy's axis=None), 1 or 2 */
  int dims[2];  /* 0-based; out of range: DLB_E_INDEX */
  int keepdims; /* the reduced dims stay, with extent 1 */
} dlb_norm_args;

/*
 * np.linalg.norm(a, ord, axis, keepdims) in NumPy 1.24's steps.
 * Without dims: the 2-norm of every element together when kind is DEFAULT,
 * or FRO for a 2-D a, or 2 for a 1-D a; otherwise a 1-D a is a vector and a
 * 2-D a a matrix, and any other ndim is DLB_E_VALUE. One dim: a vector norm
 * along it -- p = inf: max |x|; -inf: min |x|; 0: the count of nonzeros;
 * 1: sum |x|; 2 (and DEFAULT): sqrt(sum x^2); any other p:
 * (sum |x|^p)^(1/p); FRO and NUC are DLB_E_VALUE. Two dims (distinct, else
 * DLB_E_VALUE): a matrix norm over them -- DEFAULT and FRO:
 * sqrt(sum x^2); 1 / -1: max / min of the column sums of |x|; inf / -inf:
 * max / min of the row sums; 2 / -2: the largest / smallest singular value;
 * NUC: their sum (the SVD of linalg.h: no float16, no complex); any other p
 * is DLB_E_VALUE. More than two dims is the binding's DLB_E_VALUE.
 * dtypes: bool and integers compute in float64; float32, float64 keep
 * theirs; float16 and bfloat16 compute in float32 and round once at the
 * end; complex gives its real dtype (|z| squared for the 2-norms).
 */
dlb_status dlb_norm(const dlb_norm_args *x, dlb_array *out, dlb_backend *cpu, dlb_error *err);

typedef struct dlb_interp_args {
  const dlb_array *x, *xp, *fp;
  int has_left, has_right, has_period;
  double left, right, period;
} dlb_interp_args;

/*
 * np.interp(x, xp, fp, left, right, period): the piecewise-linear
 * interpolant through (xp[i], fp[i]) at every element of x (any shape; the
 * result has x's shape, float64). xp and fp are 1-D (DLB_E_SHAPE) of one
 * length (DLB_E_SHAPE), not empty (DLB_E_VALUE); xp is taken to increase,
 * as NumPy takes it, and is not checked. Below xp[1]: left (default fp[1]),
 * above xp[end]: right (default fp[end]); a NaN x gives NaN. The
 * arithmetic, the search (a guess from the previous element, then
 * bisection) and the retry of a NaN result from the other end of the
 * interval are NumPy's compiled_interp, bit for bit. With a period (nonzero,
 * else DLB_E_VALUE; its magnitude is used) x and xp are taken modulo it, xp
 * sorted (stable) with fp, and the ends wrapped around; left and right are
 * ignored, as NumPy ignores them. Elements compute in float64 (bool and
 * integers converted); complex operands are DLB_E_DTYPE.
 */
dlb_status dlb_interp(const dlb_interp_args *x, dlb_array *out, dlb_backend *cpu, dlb_error *err);

#endif
