/* vecmath.c -- cross, outer, norm and interp as NumPy 1.24 computes them
 * (see vecmath.h): views of the operands fed to the element-wise driver,
 * the reductions and the SVD, in NumPy's order of operations; interp's
 * search is compiled_interp's loop. Temporaries are arrays, allocated
 * through the budget. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/shape.h"
#include "../core/work.h"
#include "elementwise.h"
#include "linalg.h"
#include "reduce.h"
#include "vecmath.h"

/* --- helpers over the compute functions ------------------------------------- */

static dlb_status ew1(dlb_op op, const dlb_array *a, dlb_array *out, dlb_backend *cpu,
                      dlb_error *err) {
  dlb_operand in[1] = {{a, {0}}};
  return dlb_elementwise(op, in, out, cpu, err);
}

static dlb_status ew2(dlb_op op, const dlb_array *a, const dlb_array *b, dlb_array *out,
                      dlb_backend *cpu, dlb_error *err) {
  dlb_operand in[2] = {{a, {0}}, {b, {0}}};
  return dlb_elementwise(op, in, out, cpu, err);
}

/* op(a, v) with v a weak float scalar (it takes a's float dtype). */
static dlb_status ew_number(dlb_op op, const dlb_array *a, double v, dlb_array *out,
                            dlb_backend *cpu, dlb_error *err) {
  dlb_operand in[2] = {{a, {0}}, {NULL, {DLB_SCALAR_FLOAT, {.f = v}}}};
  return dlb_elementwise(op, in, out, cpu, err);
}

static dlb_status reduce_dims(dlb_reduce_op op, const dlb_array *a, uint64_t dims, int keepdims,
                              int has_dtype, dlb_dtype dtype, dlb_array *out, dlb_backend *cpu,
                              dlb_error *err) {
  dlb_reduce_options o;
  memset(&o, 0, sizeof o);
  o.dims = dims;
  o.keepdims = keepdims;
  o.has_dtype = has_dtype;
  o.dtype = dtype;
  return dlb_reduce(op, a, &o, out, cpu, err);
}

static const char *dtype_name(dlb_dtype t) { return dlb_dtype_get(t)->name; }

static dlb_dtype real_dtype(dlb_dtype t) {
  return t == DLB_COMPLEX64 ? DLB_FLOAT32 : t == DLB_COMPLEX128 ? DLB_FLOAT64 : t;
}

/* "(2, 3)" into out. */
static void shape_text(const dlb_array *a, char *out, size_t size) {
  size_t len = (size_t)snprintf(out, size, "(");
  for (int d = 0; d < a->ndim && len < size; d++)
    len += (size_t)snprintf(out + len, size - len, d ? ", %lld" : "%lld", (long long)a->shape[d]);
  if (len < size) snprintf(out + len, size - len, ")");
}

/* --- cross ------------------------------------------------------------------ */

/* One component of the result: a[p] * b[q], negated when neg, minus
 * a[r] * b[s] when r >= 0 (NumPy's order of operations, numeric.py). */
typedef struct cross_step {
  int p, q, neg, r, s;
} cross_step;

/* Steps per (a's extent, b's extent): [2][2] has one component. */
static const cross_step cross_plan[2][2][3] = {
    {{{0, 1, 0, 1, 0}}, {{1, 2, 0, -1, 0}, {0, 2, 1, -1, 0}, {0, 1, 0, 1, 0}}},
    {{{2, 1, 1, -1, 0}, {2, 0, 0, -1, 0}, {0, 1, 0, 1, 0}},
     {{1, 2, 0, 2, 1}, {2, 0, 0, 0, 2}, {0, 1, 0, 1, 0}}}};

static dlb_status cross_check(const dlb_array *a, const dlb_array *b, dlb_error *err) {
  const dlb_array *x[2] = {a, b};
  char s[160];
  for (int k = 0; k < 2; k++) {
    int64_t e = x[k]->ndim ? x[k]->shape[x[k]->ndim - 1] : 0;
    if (e == 2 || e == 3) continue;
    shape_text(x[k], s, sizeof s);
    dlb_fail(err, DLB_E_SHAPE,
             "cross: argument %d has shape %s: incompatible dimensions for cross product "
             "(dimension must be 2 or 3)",
             k + 1, s);
    dlb_error_hint(err, "the vectors lie along the last dim: (..., 3) or (..., 2)");
    return DLB_E_SHAPE;
  }
  if (dlb_promote_types(a->dtype, b->dtype) == DLB_BOOL) {
    dlb_fail(err, DLB_E_DTYPE, "cross: boolean operands: NumPy cannot subtract booleans");
    dlb_error_hint(err, "convert them first: a:astype(\"int64\")");
    return DLB_E_DTYPE;
  }
  return DLB_OK;
}

/* v = component k of x along its last dim (a new view). */
static dlb_status component(const dlb_array *x, int64_t k, dlb_array *v, dlb_error *err) {
  dlb_array_share(v, x);
  return dlb_view_select(v, x->ndim - 1, k, err);
}

static dlb_status cross_run(const dlb_array *a, const dlb_array *b, dlb_array *out,
                            dlb_backend *cpu, dlb_error *err) {
  int na = (int)a->shape[a->ndim - 1], nb = (int)b->shape[b->ndim - 1];
  int ncomp = na == 2 && nb == 2 ? 1 : 3;
  dlb_array av[3] = {{0}}, bv[3] = {{0}}, cv[3] = {{0}}, tmp = {0};
  dlb_status st = DLB_OK;
  for (int k = 0; k < na && st == DLB_OK; k++) st = component(a, k, &av[k], err);
  for (int k = 0; k < nb && st == DLB_OK; k++) st = component(b, k, &bv[k], err);
  for (int k = 0; k < ncomp && st == DLB_OK; k++)
    st = ncomp == 1 ? (dlb_array_share(&cv[0], out), DLB_OK) : component(out, k, &cv[k], err);
  for (int k = 0; k < ncomp && st == DLB_OK; k++) {
    const cross_step *c = &cross_plan[na - 2][nb - 2][k];
    st = ew2(DLB_OP_MULTIPLY, &av[c->p], &bv[c->q], &cv[k], cpu, err);
    if (st == DLB_OK && c->neg) st = ew1(DLB_OP_NEGATIVE, &cv[k], &cv[k], cpu, err);
    if (st == DLB_OK && c->r >= 0) st = ew2(DLB_OP_MULTIPLY, &av[c->r], &bv[c->s], &tmp, cpu, err);
    if (st == DLB_OK && c->r >= 0) st = ew2(DLB_OP_SUBTRACT, &cv[k], &tmp, &cv[k], cpu, err);
  }
  for (int k = 0; k < 3; k++) {
    dlb_array_release(&av[k]);
    dlb_array_release(&bv[k]);
    dlb_array_release(&cv[k]);
  }
  dlb_array_release(&tmp);
  return st;
}

dlb_status dlb_cross(const dlb_array *a, const dlb_array *b, dlb_array *out, dlb_backend *cpu,
                     dlb_error *err) {
  const dlb_array *arrays[2] = {a, b};
  dlb_operand lead[2] = {{a, {0}}, {b, {0}}};
  dlb_array a0 = {0}, b0 = {0};
  dlb_placement where;
  int64_t shape[DLB_MAX_NDIM], numel;
  int ndim = 0;
  dlb_work w;
  dlb_status st;
  out->buffer = NULL;
  if ((st = dlb_check_arrays_for(2, arrays, cpu, offsetof(dlb_kernels, elementwise), &where,
                                 "cross", err)) != DLB_OK ||
      (st = cross_check(a, b, err)) != DLB_OK)
    return st;
  /* the result: the broadcast of the dims before the vectors, then 3 (none for 2 x 2) */
  if ((st = component(a, 0, &a0, err)) == DLB_OK && (st = component(b, 0, &b0, err)) == DLB_OK) {
    lead[0].array = &a0;
    lead[1].array = &b0;
    st = dlb_broadcast_shapes(2, lead, &ndim, shape, "cross", err);
  }
  dlb_array_release(&a0);
  dlb_array_release(&b0);
  if (st != DLB_OK) return st;
  if (a->shape[a->ndim - 1] == 3 || b->shape[b->ndim - 1] == 3) {
    if (ndim >= DLB_MAX_NDIM)
      return dlb_fail(err, DLB_E_SHAPE, "cross: the result would have more than %d dims",
                      DLB_MAX_NDIM);
    shape[ndim++] = 3;
  }
  if ((st = dlb_shape_numel(ndim, shape, &numel, err)) != DLB_OK) return st;
  if ((st = dlb_work_begin(&w, dlb_array_budget(a), numel > INT64_MAX / 4 ? INT64_MAX : numel * 4,
                           "cross", err)) != DLB_OK)
    return st;
  st = dlb_array_allocate(out, where.backend, where.device_id,
                          dlb_promote_types(a->dtype, b->dtype), ndim, shape, 0, err);
  if (st == DLB_OK) st = cross_run(a, b, out, cpu, err);
  st = dlb_work_end(&w, st, "cross", err);
  if (st != DLB_OK) dlb_array_release(out);
  return st;
}

/* --- outer ------------------------------------------------------------------ */

/* f = x as one dim of x->numel elements (a view, or a copy when the layout
 * needs one), with an extent-1 dim inserted at position at (0 or 1). */
static dlb_status flat_column(const dlb_array *x, int at, dlb_array *f, dlb_error *err) {
  int64_t n = x->numel;
  dlb_status st;
  dlb_array_share(f, x);
  if ((st = dlb_view_reshape(f, 1, &n, err)) == DLB_E_COPY_REQUIRED) {
    dlb_array_release(f);
    if ((st = dlb_array_clone(f, x, x->dtype, err)) == DLB_OK) st = dlb_view_reshape(f, 1, &n, err);
  }
  if (st == DLB_OK) st = dlb_view_unsqueeze(f, at, err);
  return st;
}

dlb_status dlb_outer(const dlb_array *a, const dlb_array *b, dlb_array *out, dlb_backend *cpu,
                     dlb_error *err) {
  const dlb_array *arrays[2] = {a, b};
  dlb_array fa = {0}, fb = {0};
  dlb_placement where;
  dlb_status st;
  out->buffer = NULL;
  if ((st = dlb_check_arrays_for(2, arrays, cpu, offsetof(dlb_kernels, elementwise), &where,
                                 "outer", err)) == DLB_OK &&
      (st = flat_column(a, 1, &fa, err)) == DLB_OK && (st = flat_column(b, 0, &fb, err)) == DLB_OK)
    st = ew2(DLB_OP_MULTIPLY, &fa, &fb, out, cpu, err);
  dlb_array_release(&fa);
  dlb_array_release(&fb);
  if (st != DLB_OK) dlb_array_release(out);
  return st;
}

/* --- norm ------------------------------------------------------------------- */

/* The state of one norm: the working array x (float32, float64 or
 * complex), what it started as, and the result so far. */
typedef struct norm_run {
  const dlb_norm_args *args;
  dlb_array x, r;
  dlb_backend *cpu;
  dlb_error *err;
} norm_run;

static dlb_status norm_fail(norm_run *c, const char *what, const char *hint) {
  dlb_fail(c->err, DLB_E_VALUE, "norm: %s", what);
  dlb_error_hint(c->err, hint);
  return DLB_E_VALUE;
}

/* r = |x|^2 element by element (x * x for reals; |x| squared for complex). */
static dlb_status squares(norm_run *c, dlb_array *r) {
  dlb_status st;
  if (dlb_dtype_get(c->x.dtype)->kind != DLB_KIND_COMPLEX)
    return ew2(DLB_OP_MULTIPLY, &c->x, &c->x, r, c->cpu, c->err);
  if ((st = ew1(DLB_OP_ABS, &c->x, r, c->cpu, c->err)) != DLB_OK) return st;
  return ew2(DLB_OP_MULTIPLY, r, r, r, c->cpu, c->err);
}

/* c->r = sqrt(sum of |x|^2 over dims). */
static dlb_status two_norm(norm_run *c, uint64_t dims, int keepdims) {
  dlb_array s = {0};
  dlb_status st = squares(c, &s);
  if (st == DLB_OK)
    st = reduce_dims(DLB_REDUCE_SUM, &s, dims, keepdims, 0, DLB_BOOL, &c->r, c->cpu, c->err);
  dlb_array_release(&s);
  if (st == DLB_OK) st = ew1(DLB_OP_SQRT, &c->r, &c->r, c->cpu, c->err);
  return st;
}

/* v as the working dtype t stores it (float32 rounds; overflow is inf). */
static double in_dtype(dlb_dtype t, double v) { return t == DLB_FLOAT32 ? (double)(float)v : v; }

/* (sum |x|^p)^(1/p), 1/p computed in the result's dtype as NumPy's reciprocal. */
static dlb_status p_norm(norm_run *c, uint64_t dims, int keepdims, double p) {
  dlb_array t = {0};
  dlb_dtype rt = real_dtype(c->x.dtype);
  double recip = rt == DLB_FLOAT32 ? (double)(1.0f / (float)p) : 1.0 / p;
  dlb_status st = ew1(DLB_OP_ABS, &c->x, &t, c->cpu, c->err);
  if (st == DLB_OK) st = ew_number(DLB_OP_POWER, &t, in_dtype(rt, p), &t, c->cpu, c->err);
  if (st == DLB_OK)
    st = reduce_dims(DLB_REDUCE_SUM, &t, dims, keepdims, 0, DLB_BOOL, &c->r, c->cpu, c->err);
  dlb_array_release(&t);
  if (st == DLB_OK) st = ew_number(DLB_OP_POWER, &c->r, recip, &c->r, c->cpu, c->err);
  return st;
}

/* c->r = op over dims of |x|. */
static dlb_status abs_reduce(norm_run *c, dlb_reduce_op op, uint64_t dims, int keepdims) {
  dlb_array t = {0};
  dlb_status st = ew1(DLB_OP_ABS, &c->x, &t, c->cpu, c->err);
  if (st == DLB_OK) st = reduce_dims(op, &t, dims, keepdims, 0, DLB_BOOL, &c->r, c->cpu, c->err);
  dlb_array_release(&t);
  return st;
}

/* The count of nonzeros, in the real dtype of x. */
static dlb_status zero_norm(norm_run *c, uint64_t dims, int keepdims) {
  dlb_array t = {0};
  dlb_operand in[2] = {{&c->x, {0}}, {NULL, {DLB_SCALAR_INT, {.i = 0}}}};
  dlb_status st = dlb_elementwise(DLB_OP_NOT_EQUAL, in, &t, c->cpu, c->err);
  if (st == DLB_OK)
    st = reduce_dims(DLB_REDUCE_SUM, &t, dims, keepdims, 1, real_dtype(c->x.dtype), &c->r, c->cpu,
                     c->err);
  dlb_array_release(&t);
  return st;
}

static dlb_status vector_norm(norm_run *c, int dim, int keepdims) {
  const dlb_norm_args *x = c->args;
  uint64_t dims = UINT64_C(1) << dim;
  double p = x->p;
  if (x->kind == DLB_NORM_FRO || x->kind == DLB_NORM_NUC)
    return norm_fail(c,
                     x->kind == DLB_NORM_FRO ? "invalid norm order 'fro' for vectors"
                                             : "invalid norm order 'nuc' for vectors",
                     "'fro' and 'nuc' are matrix norms: give two dims, or a number for ord");
  if (x->kind == DLB_NORM_DEFAULT || p == 2) return two_norm(c, dims, keepdims);
  if (p == INFINITY) return abs_reduce(c, DLB_REDUCE_MAX, dims, keepdims);
  if (p == -INFINITY) return abs_reduce(c, DLB_REDUCE_MIN, dims, keepdims);
  if (p == 0) return zero_norm(c, dims, keepdims);
  if (p == 1) return abs_reduce(c, DLB_REDUCE_SUM, dims, keepdims);
  return p_norm(c, dims, keepdims, p);
}

/* max or min over `second` of the sums of |x| over `first` (norms 1 and inf). */
static dlb_status sum_then(norm_run *c, int first, int second, dlb_reduce_op op, int keepdims) {
  dlb_array t = {0};
  dlb_status st = abs_reduce(c, DLB_REDUCE_SUM, UINT64_C(1) << first, 1);
  if (st != DLB_OK) return st;
  t = c->r;
  c->r.buffer = NULL;
  st = reduce_dims(op, &t, (UINT64_C(1) << first) | (UINT64_C(1) << second), keepdims, 0, DLB_BOOL,
                   &c->r, c->cpu, c->err);
  dlb_array_release(&t);
  return st;
}

/* The singular values of the matrices over (row, col), reduced by op. */
static dlb_status svd_norm(norm_run *c, int row, int col, dlb_reduce_op op, int keepdims) {
  dlb_linalg_args la = {.op = DLB_LINALG_SVD, .compute_uv = 0};
  dlb_array view = {0}, s[DLB_LINALG_MAX_RESULTS] = {{0}};
  int perm[DLB_MAX_NDIM], n = 0, nd = c->x.ndim;
  int64_t shape[DLB_MAX_NDIM];
  dlb_status st;
  for (int d = 0; d < nd; d++)
    if (d != row && d != col) perm[n++] = d;
  perm[n++] = row;
  perm[n++] = col;
  dlb_array_share(&view, &c->x);
  if ((st = dlb_view_permute(&view, perm, c->err)) == DLB_OK) {
    la.a = &view;
    st = dlb_linalg(&la, s, NULL, c->cpu, c->err);
  }
  dlb_array_release(&view);
  if (st == DLB_OK)
    st = reduce_dims(op, &s[0], UINT64_C(1) << (nd - 2), 0, 0, DLB_BOOL, &c->r, c->cpu, c->err);
  dlb_array_release(&s[0]);
  if (st != DLB_OK || !keepdims) return st;
  for (int d = 0; d < nd; d++) shape[d] = d == row || d == col ? 1 : c->x.shape[d];
  return dlb_view_reshape(&c->r, nd, shape, c->err);
}

static dlb_status matrix_norm(norm_run *c, int row, int col, int keepdims) {
  const dlb_norm_args *x = c->args;
  double p = x->p;
  dlb_dtype t = c->args->a->dtype;
  if (row == col)
    return norm_fail(c, "duplicate dims given", "a matrix norm takes two different dims");
  if (x->kind == DLB_NORM_DEFAULT || x->kind == DLB_NORM_FRO)
    return two_norm(c, (UINT64_C(1) << row) | (UINT64_C(1) << col), keepdims);
  if ((x->kind == DLB_NORM_NUC || p == 2 || p == -2) && t != DLB_FLOAT32 && t != DLB_FLOAT64 &&
      dlb_dtype_get(t)->kind == DLB_KIND_FLOAT) {
    dlb_fail(c->err, DLB_E_DTYPE, "norm: array type %s is unsupported in linalg", dtype_name(t));
    dlb_error_hint(c->err, "the 2, -2 and 'nuc' norms take an SVD: a:astype(\"float32\") first");
    return DLB_E_DTYPE;
  }
  if (x->kind == DLB_NORM_NUC) return svd_norm(c, row, col, DLB_REDUCE_SUM, keepdims);
  if (p == 2) return svd_norm(c, row, col, DLB_REDUCE_MAX, keepdims);
  if (p == -2) return svd_norm(c, row, col, DLB_REDUCE_MIN, keepdims);
  if (p == 1) return sum_then(c, row, col, DLB_REDUCE_MAX, keepdims);
  if (p == -1) return sum_then(c, row, col, DLB_REDUCE_MIN, keepdims);
  if (p == INFINITY) return sum_then(c, col, row, DLB_REDUCE_MAX, keepdims);
  if (p == -INFINITY) return sum_then(c, col, row, DLB_REDUCE_MIN, keepdims);
  return norm_fail(c, "invalid norm order for matrices",
                   "a matrix norm's ord is 'fro', 'nuc', 1, -1, 2, -2, math.huge or -math.huge");
}

/* Runs the norm on the working array (NumPy's dispatch on axis and ord). */
static dlb_status norm_dispatch(norm_run *c) {
  const dlb_norm_args *x = c->args;
  int nd = c->x.ndim;
  for (int i = 0; i < x->ndims && i < 2; i++)
    if (x->dims[i] < 0 || x->dims[i] >= nd)
      return dlb_fail(c->err, DLB_E_INDEX, "norm: dimension %d out of range for a %d-D array",
                      x->dims[i] + 1, nd);
  if (x->ndims == 1) return vector_norm(c, x->dims[0], x->keepdims);
  if (x->ndims == 2) return matrix_norm(c, x->dims[0], x->dims[1], x->keepdims);
  if (x->kind == DLB_NORM_DEFAULT || (x->kind == DLB_NORM_FRO && nd == 2) ||
      (x->kind == DLB_NORM_NUMBER && x->p == 2 && nd == 1))
    return two_norm(c, DLB_REDUCE_ALL_DIMS, x->keepdims);
  if (nd == 1) return vector_norm(c, 0, x->keepdims);
  if (nd == 2) return matrix_norm(c, 0, 1, x->keepdims);
  return norm_fail(c, "improper number of dimensions to norm",
                   "with ord given and no dim, the array is a vector (1-D) or a matrix (2-D)");
}

/* The dtype a norm computes in: float64 for bool and integers, float32
 * for float16 and bfloat16, else the array's own. */
static dlb_dtype norm_working_dtype(dlb_dtype t) {
  dlb_kind k = dlb_dtype_get(t)->kind;
  if (k == DLB_KIND_BOOL || k == DLB_KIND_INT || k == DLB_KIND_UINT) return DLB_FLOAT64;
  return dlb_compute_type(t);
}

dlb_status dlb_norm(const dlb_norm_args *x, dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  const dlb_array *a = x->a;
  norm_run c = {x, {0}, {0}, cpu, err};
  dlb_dtype wt = norm_working_dtype(a->dtype), final;
  dlb_placement where;
  dlb_work w;
  dlb_status st;
  out->buffer = NULL;
  if ((st = dlb_check_arrays_for(1, &a, cpu, offsetof(dlb_kernels, elementwise), &where, "norm",
                                 err)) != DLB_OK)
    return st;
  final = a->dtype == wt                                    ? real_dtype(wt)
          : dlb_dtype_get(a->dtype)->kind == DLB_KIND_FLOAT ? a->dtype
                                                            : DLB_FLOAT64;
  if ((st = dlb_work_begin(&w, dlb_array_budget(a),
                           a->numel > INT64_MAX / 4 ? INT64_MAX : a->numel * 4, "norm", err)) !=
      DLB_OK)
    return st;
  if (wt == a->dtype) dlb_array_share(&c.x, a);
  else st = dlb_array_clone(&c.x, a, wt, err);
  if (st == DLB_OK) st = norm_dispatch(&c);
  if (st == DLB_OK && c.r.dtype != final) {
    st = dlb_array_clone(out, &c.r, final, err);
    dlb_array_release(&c.r);
  } else if (st == DLB_OK) {
    *out = c.r;
    c.r.buffer = NULL;
  }
  dlb_array_release(&c.x);
  dlb_array_release(&c.r);
  st = dlb_work_end(&w, st, "norm", err);
  if (st != DLB_OK) dlb_array_release(out);
  return st;
}

/* --- interp ----------------------------------------------------------------- */

/* NumPy's remainder (npy_divmod): the sign of the divisor, +0 for zero. */
static double remainder_of(double a, double b) {
  double mod = fmod(a, b);
  if (mod == 0) return copysign(0.0, b);
  if ((b < 0) != (mod < 0)) mod += b;
  return mod;
}

#define LIKELY_IN_CACHE_SIZE 8

/* NumPy's binary_search_with_guess (compiled_base.c): the j with
 * arr[j] <= key < arr[j + 1], -1 below arr[0], len above arr[len - 1]. */
static int64_t search_with_guess(double key, const double *arr, int64_t len, int64_t guess) {
  int64_t imin = 0, imax = len;
  if (key > arr[len - 1]) return len;
  if (key < arr[0]) return -1;
  if (len <= 4) {
    int64_t i;
    for (i = 1; i < len && key >= arr[i]; ++i) {
    }
    return i - 1;
  }
  if (guess > len - 3) guess = len - 3;
  if (guess < 1) guess = 1;
  if (key < arr[guess]) {
    if (key >= arr[guess - 1]) return guess - 1;
    imax = guess - 1;
    if (guess > LIKELY_IN_CACHE_SIZE && key >= arr[guess - LIKELY_IN_CACHE_SIZE])
      imin = guess - LIKELY_IN_CACHE_SIZE;
  } else {
    if (key < arr[guess + 1]) return guess;
    if (key < arr[guess + 2]) return guess + 1;
    imin = guess + 2;
    if (guess < len - LIKELY_IN_CACHE_SIZE - 1 && key < arr[guess + LIKELY_IN_CACHE_SIZE])
      imax = guess + LIKELY_IN_CACHE_SIZE;
  }
  while (imin < imax) {
    const int64_t imid = imin + ((imax - imin) >> 1);
    if (key >= arr[imid]) imin = imid + 1;
    else imax = imid;
  }
  return imin - 1;
}

/* The knots of one interp: xp, fp (n of them), their slopes or NULL. */
typedef struct knots {
  const double *xp, *fp, *slopes;
  int64_t n;
  double left, right;
  int periodic; /* x is taken modulo period first */
  double period;
} knots;

/* compiled_interp's value at one x (n >= 2), j the search's guess. */
static double interp_one(const knots *k, double x, int64_t *j) {
  const double *dx = k->xp, *dy = k->fp;
  int64_t i, n = k->n;
  double slope, r;
  if (n == 1) return x < dx[0] ? k->left : x > dx[0] ? k->right : dy[0]; /* NaN: fp[0] */
  if (isnan(x)) return x;
  i = *j = search_with_guess(x, dx, n, *j);
  if (i == -1) return k->left;
  if (i == n) return k->right;
  if (i == n - 1 || dx[i] == x) return dy[i];
  slope = k->slopes ? k->slopes[i] : (dy[i + 1] - dy[i]) / (dx[i + 1] - dx[i]);
  r = slope * (x - dx[i]) + dy[i];
  if (isnan(r)) {
    r = slope * (x - dx[i + 1]) + dy[i + 1];
    if (isnan(r) && dy[i] == dy[i + 1]) r = dy[i];
  }
  return r;
}

/* interp's loops tick the work between chunks of this many elements. */
#define INTERP_CHUNK 4096

/* res[0..count-1] at x[...], ticking the work between chunks. */
static int interp_all(const knots *k, const double *x, double *res, int64_t count, dlb_work *w) {
  const int64_t chunk = INTERP_CHUNK;
  int64_t j = 0;
  for (int64_t at = 0; at < count; at += chunk) {
    int64_t end = count - at < chunk ? count : at + chunk;
    if (k->periodic) {
      for (int64_t i = at; i < end; i++) res[i] = interp_one(k, remainder_of(x[i], k->period), &j);
    } else {
      for (int64_t i = at; i < end; i++) res[i] = interp_one(k, x[i], &j);
    }
    if (dlb_work_tick(w, end - at)) return 1;
  }
  return 0;
}

static double *f64(const dlb_array *a) { return (double *)dlb_array_host_data(a); }

typedef struct keyed {
  double key;
  int64_t index;
} keyed;

/* Ascending, NaN last, ties by index (a stable order). */
static int by_key(const void *pa, const void *pb) {
  const keyed *a = pa, *b = pb;
  int na = isnan(a->key), nb = isnan(b->key);
  if (na != nb) return na - nb;
  if (!na && a->key != b->key) return a->key < b->key ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

/* The n keys at o sorted by by_key through tmp (n more), bottom-up merges
 * that tick the work, so that a long sort sees the interrupt (qsort would
 * not); returns where the sorted keys are (o or tmp). */
static keyed *sort_keyed(keyed *o, keyed *tmp, int64_t n, dlb_work *w) {
  for (int64_t width = 1; width < n; width *= 2) {
    keyed *t;
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = n - lo > width ? lo + width : n, hi = n - mid > width ? mid + width : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = by_key(&o[j], &o[i]) < 0 ? o[j++] : o[i++];
      while (i < mid) tmp[k++] = o[i++];
      while (j < hi) tmp[k++] = o[j++];
      if (dlb_work_tick(w, hi - lo)) return o; /* (stopped: the order no longer matters) */
    }
    t = o, o = tmp, tmp = t;
  }
  return o;
}

/* period: xp modulo it, sorted with fp, one knot wrapped at each end
 * (np.interp's normalisation) into new n + 2 knots px, pf. */
static dlb_status wrap_knots(const double *xp, const double *fp, int64_t n, double period,
                             dlb_array *px, dlb_array *pf, dlb_array *order, dlb_backend *cpu,
                             dlb_work *w, dlb_error *err) {
  int64_t n2, nb;
  dlb_status st;
  keyed *o;
  if (__builtin_add_overflow(n, 2, &n2) ||
      __builtin_mul_overflow(n, 2 * (int64_t)sizeof(keyed), &nb)) /* the keys and the merges' */
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "interp: %lld knots are too many", (long long)n);
  if ((st = dlb_array_allocate(px, cpu, 0, DLB_FLOAT64, 1, &n2, 0, err)) != DLB_OK ||
      (st = dlb_array_allocate(pf, cpu, 0, DLB_FLOAT64, 1, &n2, 0, err)) != DLB_OK ||
      (st = dlb_array_allocate(order, cpu, 0, DLB_UINT8, 1, &nb, 0, err)) != DLB_OK)
    return st;
  o = (keyed *)dlb_array_host_data(order);
  for (int64_t i0 = 0; i0 < n; i0 += INTERP_CHUNK) {
    for (int64_t i = i0; i < n && i < i0 + INTERP_CHUNK; i++)
      o[i] = (keyed){remainder_of(xp[i], period), i};
    if (dlb_work_tick(w, INTERP_CHUNK)) return DLB_OK; /* (the work's end says why) */
  }
  o = sort_keyed(o, o + n, n, w);
  for (int64_t i0 = 0; i0 < n; i0 += INTERP_CHUNK) {
    for (int64_t i = i0; i < n && i < i0 + INTERP_CHUNK; i++) {
      f64(px)[i + 1] = o[i].key;
      f64(pf)[i + 1] = fp[o[i].index];
    }
    if (dlb_work_tick(w, INTERP_CHUNK)) return DLB_OK;
  }
  f64(px)[0] = f64(px)[n] - period;
  f64(pf)[0] = f64(pf)[n];
  f64(px)[n + 1] = f64(px)[1] + period;
  f64(pf)[n + 1] = f64(pf)[1];
  return DLB_OK;
}

static dlb_status interp_check(const dlb_interp_args *x, dlb_error *err) {
  const dlb_array *ops[3] = {x->x, x->xp, x->fp};
  static const char *const names[3] = {"x", "xp", "fp"};
  char s1[160], s2[160];
  for (int k = 0; k < 3; k++)
    if (dlb_dtype_get(ops[k]->dtype)->kind == DLB_KIND_COMPLEX) {
      dlb_fail(err, DLB_E_DTYPE, "interp: %s is %s: complex values are not supported", names[k],
               dtype_name(ops[k]->dtype));
      dlb_error_hint(err, "interp takes real arrays (bool, integers, floats)");
      return DLB_E_DTYPE;
    }
  for (int k = 1; k < 3; k++)
    if (ops[k]->ndim != 1) {
      shape_text(ops[k], s1, sizeof s1);
      dlb_fail(err, DLB_E_SHAPE, "interp: %s has shape %s: data points must be 1-D", names[k], s1);
      dlb_error_hint(err, "xp and fp are 1-D arrays of one length");
      return DLB_E_SHAPE;
    }
  if (x->xp->shape[0] != x->fp->shape[0]) {
    shape_text(x->xp, s1, sizeof s1);
    shape_text(x->fp, s2, sizeof s2);
    dlb_fail(err, DLB_E_SHAPE, "interp: fp and xp are not of the same length: %s and %s", s2, s1);
    dlb_error_hint(err, "xp and fp are 1-D arrays of one length");
    return DLB_E_SHAPE;
  }
  if (x->xp->shape[0] == 0) {
    dlb_fail(err, DLB_E_VALUE, "interp: array of sample points is empty");
    dlb_error_hint(err, "give at least one point (xp, fp)");
    return DLB_E_VALUE;
  }
  if (x->has_period && x->period == 0) {
    dlb_fail(err, DLB_E_VALUE, "interp: period must be a non-zero value");
    dlb_error_hint(err, "leave period out for no period");
    return DLB_E_VALUE;
  }
  return DLB_OK;
}

/* DLB_E_UNSUPPORTED unless the host addresses x's memory. */
static dlb_status host_memory(const dlb_array *x, const char *op, dlb_error *err) {
  if (x->buffer->host || x->buffer->nbytes == 0) return DLB_OK;
  dlb_fail(err, DLB_E_UNSUPPORTED, "%s: the host cannot address the memory of %s:%d", op,
           x->buffer->backend ? x->buffer->backend->name : "?", x->buffer->device_id);
  dlb_error_hint(err, "it runs on the host: dl.device_put(a, \"cpu\") first");
  return DLB_E_UNSUPPORTED;
}

/* c = a as contiguous float64: a's own memory when it is, else a copy. */
static dlb_status contiguous_f64(const dlb_array *a, dlb_array *c, dlb_error *err) {
  if (a->dtype == DLB_FLOAT64 && dlb_array_is_contiguous(a)) {
    dlb_array_share(c, a);
    return DLB_OK;
  }
  return dlb_array_clone(c, a, DLB_FLOAT64, err);
}

/* The slopes of the n - 1 intervals, when there are no more of them than
 * points to interpolate (NumPy's rule); else s stays released. */
static dlb_status slopes_of(const double *xp, const double *fp, int64_t n, int64_t count,
                            dlb_array *s, dlb_backend *cpu, dlb_work *w, dlb_error *err) {
  int64_t m = n - 1;
  dlb_status st;
  if (n < 2 || n > count) return DLB_OK;
  if ((st = dlb_array_allocate(s, cpu, 0, DLB_FLOAT64, 1, &m, 0, err)) != DLB_OK) return st;
  for (int64_t i0 = 0; i0 < m; i0 += INTERP_CHUNK) {
    for (int64_t i = i0; i < m && i < i0 + INTERP_CHUNK; i++)
      f64(s)[i] = (fp[i + 1] - fp[i]) / (xp[i + 1] - xp[i]);
    if (dlb_work_tick(w, INTERP_CHUNK)) break; /* (the work's end says why) */
  }
  return DLB_OK;
}

static dlb_status interp_run(const dlb_interp_args *x, dlb_array *out, dlb_backend *cpu,
                             dlb_work *w, dlb_error *err) {
  dlb_array cx = {0}, cxp = {0}, cfp = {0}, px = {0}, pf = {0}, order = {0}, sl = {0};
  double period = fabs(x->period);
  int64_t n = x->xp->shape[0];
  knots k;
  dlb_status st;
  if ((st = contiguous_f64(x->x, &cx, err)) != DLB_OK ||
      (st = contiguous_f64(x->xp, &cxp, err)) != DLB_OK ||
      (st = contiguous_f64(x->fp, &cfp, err)) != DLB_OK)
    goto done;
  k = (knots){f64(&cxp), f64(&cfp), NULL, n, 0, 0, 0, 0};
  if (x->has_period) {
    if ((st = wrap_knots(k.xp, k.fp, n, period, &px, &pf, &order, cpu, w, err)) != DLB_OK)
      goto done;
    k = (knots){f64(&px), f64(&pf), NULL, n + 2, 0, 0, 1, period};
  }
  k.left = x->has_left && !x->has_period ? x->left : k.fp[0];
  k.right = x->has_right && !x->has_period ? x->right : k.fp[k.n - 1];
  if ((st = slopes_of(k.xp, k.fp, k.n, cx.numel, &sl, cpu, w, err)) != DLB_OK) goto done;
  k.slopes = sl.buffer ? f64(&sl) : NULL;
  interp_all(&k, f64(&cx), f64(out), cx.numel, w);
done:
  dlb_array_release(&cx);
  dlb_array_release(&cxp);
  dlb_array_release(&cfp);
  dlb_array_release(&px);
  dlb_array_release(&pf);
  dlb_array_release(&order);
  dlb_array_release(&sl);
  return st;
}

dlb_status dlb_interp(const dlb_interp_args *x, dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  const dlb_array *arrays[3] = {x->x, x->xp, x->fp};
  dlb_placement where;
  int64_t elements;
  dlb_work w;
  dlb_status st;
  out->buffer = NULL;
  if ((st = dlb_check_arrays_for(3, arrays, cpu, DLB_ANY_MEMORY, &where, "interp", err)) !=
          DLB_OK ||
      (st = interp_check(x, err)) != DLB_OK)
    return st;
  for (int k = 0; k < 3; k++)
    if ((st = host_memory(arrays[k], "interp", err)) != DLB_OK) return st;
  if (__builtin_add_overflow(x->x->numel, 2 * x->xp->shape[0], &elements)) elements = INT64_MAX;
  if ((st = dlb_work_begin(&w, dlb_array_budget(x->x), elements, "interp", err)) != DLB_OK)
    return st;
  st = dlb_array_allocate(out, where.backend, where.device_id, DLB_FLOAT64, x->x->ndim, x->x->shape,
                          0, err);
  if (st == DLB_OK) st = interp_run(x, out, cpu, &w, err);
  st = dlb_work_end(&w, st, "interp", err);
  if (st != DLB_OK) dlb_array_release(out);
  return st;
}
