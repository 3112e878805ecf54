/* linalg.c -- numpy.linalg (NumPy 1.24) through LAPACK: the shape and dtype
 * rules, the operands copied into column-major float64 scratch, one LAPACK
 * call a matrix, the results copied out (see linalg.h). The layout of the
 * scratch is umath_linalg's: matrices one after another, each column-major
 * with a leading dim of at least its rows. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/invariant.h"
#include "../core/shape.h"
#include "../core/work.h"
#include "lapack.h"
#include "linalg.h"

typedef dlb_lapack_int lint;

static const char *const op_names[] = {"solve", "inv", "det", "slogdet", "cholesky",
                                       "eigh",  "svd", "qr",  "lstsq"};

/* --- planning --------------------------------------------------------------- */

/* DLB_E_DTYPE unless x is bool, an integer, float32 or float64. */
static dlb_status check_dtype(const dlb_array *x, int which, const char *op, dlb_error *err) {
  const dlb_dtype_info *t = dlb_dtype_get(x->dtype);
  if (t->kind == DLB_KIND_COMPLEX) {
    dlb_fail(err, DLB_E_DTYPE, "linalg.%s: argument %d is %s: complex matrices are not supported",
             op, which, t->name);
    dlb_error_hint(err, "dl.linalg takes bool, integer, float32 and float64 arrays");
    return DLB_E_DTYPE;
  }
  if (t->kind == DLB_KIND_FLOAT && x->dtype != DLB_FLOAT32 && x->dtype != DLB_FLOAT64) {
    dlb_fail(err, DLB_E_DTYPE, "linalg.%s: argument %d is %s, which linalg does not take", op,
             which, t->name);
    dlb_error_hint(err, "convert it first, as NumPy asks: a:astype(\"float32\")");
    return DLB_E_DTYPE;
  }
  return DLB_OK;
}

/* DLB_E_SHAPE unless x is a (stack of) matrices, square when asked, with
 * dims LAPACK's 32-bit integers hold. */
static dlb_status check_matrix(const dlb_array *x, int which, int square, const char *op,
                               dlb_error *err) {
  char s[160];
  dlb_shape_text(x->ndim, x->shape, s, sizeof s);
  if (x->ndim < 2) {
    dlb_fail(err, DLB_E_SHAPE, "linalg.%s: argument %d has shape %s: a matrix has 2 dims", op,
             which, s);
    dlb_error_hint(err, "pass a matrix (M, N) or a stack of them (..., M, N)");
    return DLB_E_SHAPE;
  }
  if (square && x->shape[x->ndim - 1] != x->shape[x->ndim - 2]) {
    dlb_fail(err, DLB_E_SHAPE, "linalg.%s: argument %d has shape %s: the matrix is not square", op,
             which, s);
    dlb_error_hint(err, "the last two dims must be equal, (..., M, M)");
    return DLB_E_SHAPE;
  }
  for (int d = x->ndim - 2; d < x->ndim; d++)
    if (x->shape[d] > INT_MAX) {
      dlb_fail(err, DLB_E_SHAPE,
               "linalg.%s: argument %d has shape %s: LAPACK takes matrix dims "
               "up to %d",
               op, which, s, INT_MAX);
      dlb_error_hint(err, "LAPACK's integers are 32-bit: split the problem");
      return DLB_E_SHAPE;
    }
  return DLB_OK;
}

/* Broadcasts a's stack dims and b's first nb into p->batch. */
static dlb_status broadcast_batch(dlb_linalg_plan *p, const dlb_array *a, const dlb_array *b,
                                  int nb, const char *op, dlb_error *err) {
  char name[32];
  snprintf(name, sizeof name, "linalg.%s", op);
  return dlb_broadcast_stacks(a, a->ndim - 2, b, nb, &p->nbatch, p->batch, name, err);
}

/* Sets result r: the batch dims, then up to two more. */
static void set_result(dlb_linalg_plan *p, int r, dlb_dtype t, int extra, int64_t e1, int64_t e2) {
  int nd = 0;
  for (int d = 0; d < p->nbatch; d++) p->shape[r][nd++] = p->batch[d];
  if (extra > 0) p->shape[r][nd++] = e1;
  if (extra > 1) p->shape[r][nd++] = e2;
  p->ndim[r] = nd;
  p->dtype[r] = t;
  if (r + 1 > p->nresults) p->nresults = r + 1;
}

static dlb_status plan_solve(const dlb_linalg_args *x, dlb_linalg_plan *p, dlb_dtype t,
                             dlb_error *err) {
  const dlb_array *a = x->a, *b = x->b;
  char sa[160], sb[160];
  p->b_vector = b->ndim == a->ndim - 1; /* NumPy 1.24's rule: only then is b (..., M) */
  if (!p->b_vector && b->ndim < 2) {
    dlb_shape_text(a->ndim, a->shape, sa, sizeof sa);
    dlb_shape_text(b->ndim, b->shape, sb, sizeof sb);
    dlb_fail(err, DLB_E_SHAPE,
             "linalg.solve: b of shape %s against a of shape %s: b is a vector "
             "only when it has one dim fewer than a",
             sb, sa);
    dlb_error_hint(err, "b is (..., M) with a's stack dims, or (..., M, K)");
    return DLB_E_SHAPE;
  }
  if (!p->b_vector && b->shape[b->ndim - 1] > INT_MAX) return check_matrix(b, 2, 0, "solve", err);
  if (b->shape[b->ndim - (p->b_vector ? 1 : 2)] != p->n) {
    dlb_shape_text(a->ndim, a->shape, sa, sizeof sa);
    dlb_shape_text(b->ndim, b->shape, sb, sizeof sb);
    dlb_fail(err, DLB_E_SHAPE,
             "linalg.solve: a of shape %s and b of shape %s: b has %lld rows, "
             "not %lld",
             sa, sb, (long long)b->shape[b->ndim - (p->b_vector ? 1 : 2)], (long long)p->n);
    dlb_error_hint(err, "a (..., M, M) and b (..., M) or (..., M, K): b's rows are a's");
    return DLB_E_SHAPE;
  }
  p->k = p->b_vector ? 1 : b->shape[b->ndim - 1];
  dlb_status st = broadcast_batch(p, a, b, b->ndim - (p->b_vector ? 1 : 2), "solve", err);
  if (st == DLB_OK) set_result(p, 0, t, p->b_vector ? 1 : 2, p->n, p->k);
  return st;
}

static dlb_status plan_lstsq(const dlb_linalg_args *x, dlb_linalg_plan *p, dlb_dtype t,
                             dlb_error *err) {
  const dlb_array *a = x->a, *b = x->b;
  char sa[160], sb[160];
  int64_t kk = p->m < p->n ? p->m : p->n;
  dlb_shape_text(a->ndim, a->shape, sa, sizeof sa);
  dlb_shape_text(b->ndim, b->shape, sb, sizeof sb);
  if (a->ndim != 2 || b->ndim < 1 || b->ndim > 2) {
    dlb_fail(err, DLB_E_SHAPE,
             "linalg.lstsq: a of shape %s and b of shape %s: a is 2-D, b 1-D "
             "or 2-D",
             sa, sb);
    dlb_error_hint(err, "NumPy 1.24's lstsq takes one matrix, no stack of them");
    return DLB_E_SHAPE;
  }
  p->b_vector = b->ndim == 1;
  if (b->shape[0] != p->m) {
    dlb_fail(err, DLB_E_SHAPE,
             "linalg.lstsq: a of shape %s and b of shape %s: b has %lld rows, "
             "not %lld",
             sa, sb, (long long)b->shape[0], (long long)p->m);
    dlb_error_hint(err, "a (M, N) and b (M) or (M, K): b's rows are a's");
    return DLB_E_SHAPE;
  }
  if (!p->b_vector && b->shape[1] > INT_MAX) return check_matrix(b, 2, 0, "lstsq", err);
  p->k = p->b_vector ? 1 : b->shape[1];
  p->nbatch = 0;
  set_result(p, 0, t, p->b_vector ? 1 : 2, p->n, p->k);
  set_result(p, 1, t, 1, p->k, 0); /* at most; (0) unless M > N and the rank is N */
  set_result(p, 2, t, 1, kk, 0);
  return DLB_OK;
}

/* The shapes of the results of the one-operand functions. */
static void plan_single(const dlb_linalg_args *x, dlb_linalg_plan *p, dlb_dtype t) {
  int64_t m = p->m, n = p->n, kk = m < n ? m : n;
  p->nbatch = x->a->ndim - 2;
  for (int d = 0; d < p->nbatch; d++) p->batch[d] = x->a->shape[d];
  switch (x->op) {
    case DLB_LINALG_DET: set_result(p, 0, t, 0, 0, 0); break;
    case DLB_LINALG_SLOGDET:
      set_result(p, 0, t, 0, 0, 0);
      set_result(p, 1, t, 0, 0, 0);
      break;
    case DLB_LINALG_EIGH:
      set_result(p, 0, t, 1, n, 0);
      set_result(p, 1, t, 2, n, n);
      break;
    case DLB_LINALG_SVD:
      if (!x->compute_uv) {
        set_result(p, 0, t, 1, kk, 0);
        break;
      }
      set_result(p, 0, t, 2, m, x->full_matrices ? m : kk);
      set_result(p, 1, t, 1, kk, 0);
      set_result(p, 2, t, 2, x->full_matrices ? n : kk, n);
      break;
    case DLB_LINALG_QR: {
      int64_t mc = x->mode == DLB_QR_COMPLETE && m > n ? m : kk;
      if (x->mode == DLB_QR_R) {
        set_result(p, 0, t, 2, kk, n);
        break;
      }
      set_result(p, 0, t, 2, m, mc);
      set_result(p, 1, t, 2, mc, n);
      break;
    }
    default: set_result(p, 0, t, 2, n, n); break; /* inv, cholesky */
  }
}

dlb_status dlb_linalg_plan_of(const dlb_linalg_args *x, dlb_linalg_plan *p, dlb_error *err) {
  const char *op = op_names[x->op];
  int two = x->op == DLB_LINALG_SOLVE || x->op == DLB_LINALG_LSTSQ;
  int square = x->op != DLB_LINALG_SVD && x->op != DLB_LINALG_QR && x->op != DLB_LINALG_LSTSQ;
  dlb_dtype t = DLB_FLOAT32;
  dlb_status st;
  memset(p, 0, sizeof *p);
  for (int k = 0; k < 1 + two; k++) {
    const dlb_array *v = k ? x->b : x->a;
    if (!v || !v->buffer)
      return dlb_fail(err, DLB_E_DELETED, "linalg.%s: argument %d was deleted", op, k + 1);
    if ((st = check_dtype(v, k + 1, op, err)) != DLB_OK) return st;
    if (v->dtype != DLB_FLOAT32) t = DLB_FLOAT64; /* NumPy's _commonType */
  }
  if ((st = check_matrix(x->a, 1, square, op, err)) != DLB_OK) return st;
  p->m = x->a->shape[x->a->ndim - 2];
  p->n = x->a->shape[x->a->ndim - 1];
  if (x->op == DLB_LINALG_SOLVE) st = plan_solve(x, p, t, err);
  else if (x->op == DLB_LINALG_LSTSQ) st = plan_lstsq(x, p, t, err);
  else plan_single(x, p, t);
  if (st != DLB_OK) return st;
  p->items = 1;
  for (int d = 0; d < p->nbatch; d++)
    if (__builtin_mul_overflow(p->items, p->batch[d], &p->items)) p->items = INT64_MAX;
  for (int r = 0; r < p->nresults; r++) {
    int64_t numel, bytes;
    if ((st = dlb_shape_numel(p->ndim[r], p->shape[r], &numel, err)) != DLB_OK) return st;
    if (__builtin_mul_overflow(numel, (int64_t)dlb_dtype_get(p->dtype[r])->itemsize, &bytes) ||
        __builtin_add_overflow(p->nbytes, bytes, &p->nbytes))
      p->nbytes = INT64_MAX;
  }
  return DLB_OK;
}

/* --- running ---------------------------------------------------------------- */

/* One call on its way. */
typedef struct la {
  const dlb_linalg_args *x;
  const dlb_linalg_plan *p;
  const dlb_lapack *lp;
  dlb_backend *cpu;    /* scratch */
  dlb_placement where; /* results */
  dlb_array *results;  /* allocated before the run, but lstsq's residuals */
  int64_t *rank;       /* lstsq */
  dlb_work *w;         /* the call's work: ticked once a matrix */
  int64_t per_item;    /* the work of one matrix */
  const char *op;
  dlb_error *err;
} la;

/* The work of one matrix: about the multiply-adds of a factorisation. */
static int64_t item_work(const dlb_linalg_plan *p) {
  int64_t big = p->m > p->n ? p->m : p->n, w = 1;
  if (p->k > big) big = p->k;
  if (__builtin_mul_overflow(p->m, p->n, &w) || __builtin_mul_overflow(w, big, &w)) w = INT64_MAX;
  return w > 0 ? w : 1;
}

static lint lmax1(int64_t v) { return v > 1 ? (lint)v : 1; }
static double *f64(const dlb_array *a) { return (double *)dlb_array_host_data(a); }
static lint *i32(const dlb_array *a) { return (lint *)dlb_array_host_data(a); }

/* New scratch of n elements (at least one) of t on the cpu backend. */
static dlb_status scratch(la *c, dlb_dtype t, int64_t n, int zeroed, dlb_array *out) {
  if (n < 1) n = 1;
  return dlb_array_allocate(out, c->cpu, 0, t, 1, &n, zeroed, c->err);
}

/* n * m elements of scratch, or DLB_E_SHAPE when that overflows. */
static dlb_status scratch2(la *c, int64_t n, int64_t m, int zeroed, dlb_array *out) {
  int64_t count;
  if (__builtin_mul_overflow(n, m, &count))
    return dlb_fail(c->err, DLB_E_SHAPE, "linalg.%s: the scratch would pass int64", c->op);
  return scratch(c, DLB_FLOAT64, count, zeroed, out);
}

/* base (borrowed) as (batch..., rows, cols): matrix i at i * mstride
 * elements from base's start, element (r, c) at r * rs + c * cs. */
static dlb_array batched(const dlb_array *base, const dlb_linalg_plan *p, int64_t rows, int64_t rs,
                         int64_t cols, int64_t cs, int64_t mstride) {
  dlb_array v = *base;
  int64_t step = mstride;
  v.ndim = p->nbatch + 2;
  for (int d = p->nbatch - 1; d >= 0; d--) {
    v.shape[d] = p->batch[d];
    v.strides[d] = step;
    if (__builtin_mul_overflow(step, p->batch[d], &step)) step = 0; /* then the view is empty */
  }
  v.shape[p->nbatch] = rows;
  v.strides[p->nbatch] = rs;
  v.shape[p->nbatch + 1] = cols;
  v.strides[p->nbatch + 1] = cs;
  v.numel = p->items * rows * cols; /* no overflow: the elements exist (results, scratch) */
  return v;
}

/* Operand x (borrowed) as (batch..., rows, cols): its stack dims
 * right-aligned to the plan's, stride 0 where it has none or broadcasts; a
 * vector is one column. */
static dlb_array operand(const dlb_array *x, const dlb_linalg_plan *p, int vector) {
  dlb_array v = *x;
  int core = vector ? 1 : 2, nx = x->ndim - core, nd = p->nbatch;
  v.ndim = nd + 2;
  for (int d = 0; d < nd; d++) {
    int s = d - (nd - nx);
    v.shape[d] = p->batch[d];
    v.strides[d] = s < 0 || x->shape[s] == 1 ? 0 : x->strides[s];
  }
  v.shape[nd] = x->shape[nx];
  v.strides[nd] = x->strides[nx];
  v.shape[nd + 1] = vector ? 1 : x->shape[nx + 1];
  v.strides[nd + 1] = vector ? 0 : x->strides[nx + 1];
  v.numel = p->items * v.shape[nd] * v.shape[nd + 1];
  return v;
}

/* x's matrices (rows x cols) cast into new float64 scratch *w, one after
 * another, column-major with leading dim ld >= rows (rows past x's zero). */
static dlb_status load(la *c, const dlb_array *x, int vector, int64_t rows, int64_t cols,
                       int64_t ld, dlb_array *w) {
  dlb_array src = operand(x, c->p, vector), dst;
  dlb_status st;
  if ((st = scratch2(c, c->p->items, cols * ld, ld > rows, w)) != DLB_OK) return st;
  dst = batched(w, c->p, rows, 1, cols, ld, cols * ld);
  return src.numel ? dlb_array_copy_into(&dst, &src, c->err) : DLB_OK;
}

/* Result r ((batch..., rows, cols), or fewer dims of those extents) from
 * scratch w laid out as load lays it out. */
static dlb_status store(la *c, dlb_array *r, const dlb_array *w, int64_t rows, int64_t cols,
                        int64_t ld) {
  dlb_array src = batched(w, c->p, rows, 1, cols, ld, cols * ld);
  dlb_array dst = batched(r, c->p, rows, cols, cols, 1, rows * cols);
  DLB_ASSERT(dst.numel == r->numel);
  return dst.numel ? dlb_array_copy_into(&dst, &src, c->err) : DLB_OK;
}

/* Counts one matrix done; 1 when the work must stop. */
static int stop(la *c) { return dlb_work_tick(c->w, c->per_item); }

/* The error of LAPACK's info for matrix item: what failed (info > 0), or a
 * refused argument (info < 0: dlbridge passed a bad one). */
static dlb_status failed(la *c, const char *routine, lint info, int64_t item, const char *what,
                         const char *hint) {
  char where[64] = "";
  if (info < 0)
    return dlb_fail(c->err, DLB_E_LINALG,
                    "linalg.%s: LAPACK's %s refused its argument %d (a "
                    "dlbridge bug: please report it)",
                    c->op, routine, -info);
  if (c->p->items > 1)
    snprintf(where, sizeof where, " (matrix %lld of the stack)", (long long)item + 1);
  dlb_fail(c->err, DLB_E_LINALG, "linalg.%s: %s%s", c->op, what, where);
  dlb_error_hint(c->err, hint);
  return DLB_E_LINALG;
}

/* 1 when all count doubles from x on are finite. */
static int all_finite(const double *x, int64_t count) {
  for (int64_t i = 0; i < count; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

/* The error of a NaN or inf in matrix item of an SVD (svd, lstsq): LAPACK's
 * SVDs refuse NaN as a bad argument and take inf down paths that give NaN or
 * fail, by the matrix's shape (NumPy's outcome varies the same way), and their
 * error handler prints to stdout: dlbridge looks first and refuses both. */
static dlb_status not_finite(la *c, int64_t item) {
  return failed(c, "", 1, item, "the matrix holds NaN or inf (LAPACK's SVD cannot take it)",
                "dl.isfinite(a):all() tells whether it does");
}

#define SINGULAR_HINT                                                                              \
  "a singular matrix has no inverse: dl.linalg.lstsq solves in the least-squares sense, "          \
  "dl.linalg.det tells whether it is 0"

/* LAPACK's workspace size from a query, as an element count. */
static dlb_status work_size(la *c, double query, int64_t *n) {
  if (!(query <= INT_MAX))
    return dlb_fail(c->err, DLB_E_SHAPE, "linalg.%s: LAPACK's workspace would pass %d elements",
                    c->op, INT_MAX);
  *n = query < 1 ? 1 : (int64_t)query;
  return DLB_OK;
}

/* solve, and inv: dgesv against the identity (NumPy's way). */
static dlb_status run_solve(la *c) {
  const dlb_linalg_plan *p = c->p;
  const int inv = c->x->op == DLB_LINALG_INV;
  lint n = (lint)p->n, k = inv ? n : (lint)p->k, ld = lmax1(n), info = 0;
  dlb_array A = {0}, B = {0}, piv = {0};
  dlb_status st;
  if ((st = load(c, c->x->a, 0, n, n, n, &A)) == DLB_OK &&
      (st = inv ? scratch2(c, p->items, (int64_t)n * n, 0, &B)
                : load(c, c->x->b, p->b_vector, n, k, n, &B)) == DLB_OK &&
      (st = scratch(c, DLB_INT32, n, 0, &piv)) == DLB_OK) {
    for (int64_t i = 0; n > 0 && i < p->items && !stop(c); i++) {
      double *b = f64(&B) + i * n * k;
      if (inv) { /* (zeroed here, not by calloc: the backend's cached blocks serve then) */
        memset(b, 0, sizeof *b * (size_t)n * (size_t)n);
        for (lint j = 0; j < n; j++) b[j * (n + 1)] = 1.0;
      }
      c->lp->dgesv(&n, &k, f64(&A) + i * n * n, &ld, i32(&piv), b, &ld, &info);
      if (info) {
        st = failed(c, "dgesv", info, i, "singular matrix", SINGULAR_HINT);
        break;
      }
    }
    if (st == DLB_OK) st = store(c, &c->results[0], &B, n, k, n);
  }
  dlb_array_release(&A);
  dlb_array_release(&B);
  dlb_array_release(&piv);
  return st;
}

/* sign and log|det| of one LU-factored matrix, as umath_linalg's
 * slogdet_single_element: the pivots' parity, then the diagonal. */
static void slogdet_of(const double *lu, const lint *piv, lint n, lint info, double *sign,
                       double *logdet) {
  int changes = 0;
  double s, acc = 0.0;
  if (info > 0) { /* an exact zero pivot */
    *sign = 0.0;
    *logdet = -INFINITY;
    return;
  }
  for (lint i = 0; i < n; i++) changes += piv[i] != i + 1;
  s = changes % 2 ? -1.0 : 1.0;
  for (lint i = 0; i < n; i++) {
    double d = lu[(int64_t)i * (n + 1)];
    if (d < 0) s = -s, d = -d;
    acc += log(d);
  }
  *sign = s;
  *logdet = acc;
}

/* det (sign * exp(logdet), NumPy's formula) or slogdet, from dgetrf. */
static dlb_status run_det(la *c) {
  const dlb_linalg_plan *p = c->p;
  int slog = c->x->op == DLB_LINALG_SLOGDET;
  lint n = (lint)p->n, ld = lmax1(n), info = 0;
  dlb_array A = {0}, S = {0}, L = {0}, piv = {0};
  dlb_status st;
  if ((st = load(c, c->x->a, 0, n, n, n, &A)) == DLB_OK &&
      (st = scratch(c, DLB_FLOAT64, p->items, 0, &S)) == DLB_OK &&
      (st = scratch(c, DLB_FLOAT64, p->items, 0, &L)) == DLB_OK &&
      (st = scratch(c, DLB_INT32, n, 0, &piv)) == DLB_OK) {
    double *s = f64(&S), *l = f64(&L);
    for (int64_t i = 0; i < p->items && !stop(c); i++) {
      double *a = f64(&A) + i * n * n;
      info = 0;
      if (n > 0) c->lp->dgetrf(&n, &n, a, &ld, i32(&piv), &info);
      if (info < 0) {
        st = failed(c, "dgetrf", info, i, "", "");
        break;
      }
      slogdet_of(a, i32(&piv), n, info, &s[i], &l[i]);
      if (!slog) s[i] = s[i] * exp(l[i]);
    }
    if (st == DLB_OK) st = store(c, &c->results[0], &S, 1, 1, 1);
    if (st == DLB_OK && slog) st = store(c, &c->results[1], &L, 1, 1, 1);
  }
  dlb_array_release(&A);
  dlb_array_release(&S);
  dlb_array_release(&L);
  dlb_array_release(&piv);
  return st;
}

/* cholesky: dpotrf on the lower triangle, the upper one zeroed. */
static dlb_status run_cholesky(la *c) {
  const dlb_linalg_plan *p = c->p;
  lint n = (lint)p->n, ld = lmax1(n), info = 0;
  dlb_array A = {0};
  dlb_status st;
  if ((st = load(c, c->x->a, 0, n, n, n, &A)) != DLB_OK) return st;
  for (int64_t i = 0; n > 0 && i < p->items && !stop(c); i++) {
    double *a = f64(&A) + i * n * n;
    c->lp->dpotrf("L", &n, a, &ld, &info, 1);
    if (info) {
      st = failed(c, "dpotrf", info, i, "the matrix is not positive definite",
                  "cholesky needs a symmetric (Hermitian) positive-definite matrix: "
                  "dl.linalg.eigh tells its eigenvalues");
      break;
    }
    for (lint j = 1; j < n; j++) memset(a + (int64_t)j * n, 0, (size_t)j * sizeof *a);
  }
  if (st == DLB_OK) st = store(c, &c->results[0], &A, n, n, n);
  dlb_array_release(&A);
  return st;
}

/* eigh: dsyevd, eigenvalues ascending, eigenvectors in the columns. */
static dlb_status run_eigh(la *c) {
  const dlb_linalg_plan *p = c->p;
  const char *uplo = c->x->upper ? "U" : "L";
  lint n = (lint)p->n, ld = lmax1(n), info = 0, lwork, liwork, iq = 0;
  dlb_array A = {0}, W = {0}, work = {0}, iwork = {0};
  double q = 0;
  int64_t nw = 0;
  dlb_status st;
  if ((st = load(c, c->x->a, 0, n, n, n, &A)) != DLB_OK ||
      (st = scratch2(c, p->items, n, 0, &W)) != DLB_OK || n == 0)
    goto done;
  lwork = liwork = -1;
  c->lp->dsyevd("V", uplo, &n, f64(&A), &ld, f64(&W), &q, &lwork, &iq, &liwork, &info, 1, 1);
  if (info) {
    st = failed(c, "dsyevd", info, 0, "", "");
    goto done;
  }
  if ((st = work_size(c, q, &nw)) != DLB_OK ||
      (st = scratch(c, DLB_FLOAT64, nw, 0, &work)) != DLB_OK ||
      (st = scratch(c, DLB_INT32, iq, 0, &iwork)) != DLB_OK)
    goto done;
  lwork = (lint)nw;
  liwork = iq > 1 ? iq : 1;
  for (int64_t i = 0; i < p->items && !stop(c); i++) {
    c->lp->dsyevd("V", uplo, &n, f64(&A) + i * n * n, &ld, f64(&W) + i * n, f64(&work), &lwork,
                  i32(&iwork), &liwork, &info, 1, 1);
    if (info) {
      st = failed(c, "dsyevd", info, i, "the eigenvalues did not converge",
                  "the matrix may hold NaN or inf");
      break;
    }
  }
done:
  if (st == DLB_OK) st = store(c, &c->results[0], &W, n, 1, n);
  if (st == DLB_OK) st = store(c, &c->results[1], &A, n, n, n);
  dlb_array_release(&A);
  dlb_array_release(&W);
  dlb_array_release(&work);
  dlb_array_release(&iwork);
  return st;
}

/* Sets the diagonal of each of items n x n column-major matrices to 1. */
static void identities(double *x, int64_t items, int64_t n) {
  for (int64_t i = 0; i < items; i++)
    for (int64_t j = 0; j < n; j++) x[i * n * n + j * (n + 1)] = 1.0;
}

/* The dgesdd calls of svd (kk = min(m, n) > 0). */
static dlb_status svd_items(la *c, const char *jobz, dlb_array *A, dlb_array *S, dlb_array *U,
                            dlb_array *VT, lint ucols, lint vtrows) {
  const dlb_linalg_plan *p = c->p;
  lint m = (lint)p->m, n = (lint)p->n, kk = m < n ? m : n, lda = m, info = 0, lwork = -1;
  lint ldu = m, ldvt = lmax1(vtrows);
  int uv = U->buffer != NULL;
  dlb_array work = {0}, iwork = {0};
  double q = 0, dummy = 0;
  int64_t nw = 0;
  dlb_status st;
  if ((st = scratch(c, DLB_INT32, 8 * (int64_t)kk, 0, &iwork)) != DLB_OK) return st;
  c->lp->dgesdd(jobz, &m, &n, f64(A), &lda, f64(S), uv ? f64(U) : &dummy, &ldu,
                uv ? f64(VT) : &dummy, &ldvt, &q, &lwork, i32(&iwork), &info, 1);
  if (info) st = failed(c, "dgesdd", info, 0, "", "");
  if (st == DLB_OK && (st = work_size(c, q, &nw)) == DLB_OK)
    st = scratch(c, DLB_FLOAT64, nw, 0, &work);
  lwork = (lint)nw;
  for (int64_t i = 0; st == DLB_OK && i < p->items && !stop(c); i++) {
    if (!all_finite(f64(A) + i * m * n, (int64_t)m * n)) {
      st = not_finite(c, i);
      break;
    }
    c->lp->dgesdd(jobz, &m, &n, f64(A) + i * m * n, &lda, f64(S) + i * kk,
                  uv ? f64(U) + i * m * ucols : &dummy, &ldu,
                  uv ? f64(VT) + i * vtrows * n : &dummy, &ldvt, f64(&work), &lwork, i32(&iwork),
                  &info, 1);
    if (info)
      st = failed(c, "dgesdd", info, i, "the SVD did not converge",
                  "the matrix may hold NaN or inf");
  }
  dlb_array_release(&work);
  dlb_array_release(&iwork);
  return st;
}

/* svd: dgesdd (jobz "A", "S" or "N"). */
static dlb_status run_svd(la *c) {
  const dlb_linalg_plan *p = c->p;
  int64_t m = p->m, n = p->n, kk = m < n ? m : n;
  int uv = c->x->compute_uv, full = c->x->full_matrices;
  int64_t ucols = full ? m : kk, vtrows = full ? n : kk;
  dlb_array A = {0}, S = {0}, U = {0}, VT = {0};
  dlb_status st;
  if ((st = load(c, c->x->a, 0, m, n, m, &A)) != DLB_OK ||
      (st = scratch2(c, p->items, kk, 0, &S)) != DLB_OK)
    goto done;
  if (uv && ((st = scratch2(c, p->items, m * ucols, kk == 0, &U)) != DLB_OK ||
             (st = scratch2(c, p->items, vtrows * n, kk == 0, &VT)) != DLB_OK))
    goto done;
  if (kk == 0) { /* LAPACK returns at once: NumPy's u and vh are identities then */
    if (uv && full) identities(f64(&U), p->items, m), identities(f64(&VT), p->items, n);
  } else {
    st = svd_items(c, uv ? (full ? "A" : "S") : "N", &A, &S, &U, &VT, (lint)ucols, (lint)vtrows);
  }
  if (st != DLB_OK) goto done;
  if (!uv) {
    st = store(c, &c->results[0], &S, kk, 1, kk);
    goto done;
  }
  if ((st = store(c, &c->results[0], &U, m, ucols, m)) == DLB_OK &&
      (st = store(c, &c->results[1], &S, kk, 1, kk)) == DLB_OK)
    st = store(c, &c->results[2], &VT, vtrows, n, vtrows);
done:
  dlb_array_release(&A);
  dlb_array_release(&S);
  dlb_array_release(&U);
  dlb_array_release(&VT);
  return st;
}

/* LAPACK's workspace for qr: the larger of dgeqrf's and dorgqr's. */
static dlb_status qr_work(la *c, dlb_array *A, dlb_array *T, lint mc, dlb_array *work) {
  lint m = (lint)c->p->m, n = (lint)c->p->n, kk = m < n ? m : n, lda = lmax1(m), info = 0;
  lint lwork = -1;
  double q1 = 1, q2 = 1;
  int64_t nw = 0;
  dlb_status st;
  if (m > 0 && n > 0) c->lp->dgeqrf(&m, &n, f64(A), &lda, f64(T), &q1, &lwork, &info);
  if (info) return failed(c, "dgeqrf", info, 0, "", "");
  if (c->x->mode != DLB_QR_R && m > 0)
    c->lp->dorgqr(&m, &mc, &kk, f64(A), &lda, f64(T), &q2, &lwork, &info);
  if (info) return failed(c, "dorgqr", info, 0, "", "");
  if ((st = work_size(c, q1 > q2 ? q1 : q2, &nw)) != DLB_OK) return st;
  return scratch(c, DLB_FLOAT64, nw, 0, work);
}

/* One matrix of qr: r from dgeqrf's upper triangle (rrows x n), q by
 * dorgqr from its reflectors (m x mc). */
static dlb_status qr_item(la *c, double *a, double *tau, double *r, double *q, lint mc, lint rrows,
                          dlb_array *work, int64_t item) {
  lint m = (lint)c->p->m, n = (lint)c->p->n, kk = m < n ? m : n, lda = lmax1(m), info = 0;
  lint lwork = (lint)work->numel;
  if (m > 0 && n > 0) c->lp->dgeqrf(&m, &n, a, &lda, tau, f64(work), &lwork, &info);
  if (info) return failed(c, "dgeqrf", info, item, "", "");
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < rrows; i++) r[i + j * rrows] = i <= j ? a[i + j * m] : 0.0;
  if (!q || m == 0) return DLB_OK;
  memcpy(q, a, (size_t)m * (size_t)(mc < n ? mc : n) * sizeof *q);
  c->lp->dorgqr(&m, &mc, &kk, q, &lda, tau, f64(work), &lwork, &info);
  return info ? failed(c, "dorgqr", info, item, "", "") : DLB_OK;
}

/* qr: dgeqrf, then dorgqr for q (NumPy's qr_r_raw, then qr_reduced or
 * qr_complete). */
static dlb_status run_qr(la *c) {
  const dlb_linalg_plan *p = c->p;
  int64_t m = p->m, n = p->n, kk = m < n ? m : n;
  int want_q = c->x->mode != DLB_QR_R;
  int64_t mc = c->x->mode == DLB_QR_COMPLETE && m > n ? m : kk, rrows = want_q ? mc : kk;
  dlb_array A = {0}, T = {0}, R = {0}, Q = {0}, work = {0};
  dlb_status st;
  if ((st = load(c, c->x->a, 0, m, n, m, &A)) != DLB_OK ||
      (st = scratch2(c, p->items, kk, 0, &T)) != DLB_OK ||
      (st = scratch2(c, p->items, rrows * n, 0, &R)) != DLB_OK ||
      (want_q && (st = scratch2(c, p->items, m * mc, 0, &Q)) != DLB_OK) ||
      (st = qr_work(c, &A, &T, (lint)mc, &work)) != DLB_OK)
    goto done;
  for (int64_t i = 0; st == DLB_OK && i < p->items && !stop(c); i++)
    st = qr_item(c, f64(&A) + i * m * n, f64(&T) + i * kk, f64(&R) + i * rrows * n,
                 want_q ? f64(&Q) + i * m * mc : NULL, (lint)mc, (lint)rrows, &work, i);
  if (st != DLB_OK) goto done;
  if (!want_q) st = store(c, &c->results[0], &R, kk, n, kk);
  else if ((st = store(c, &c->results[0], &Q, m, mc, m)) == DLB_OK)
    st = store(c, &c->results[1], &R, mc, n, mc);
done:
  dlb_array_release(&A);
  dlb_array_release(&T);
  dlb_array_release(&R);
  dlb_array_release(&Q);
  dlb_array_release(&work);
  return st;
}

/* The dgelsd call of lstsq (m, n > 0): the rank into *rank. */
static dlb_status lstsq_solve(la *c, dlb_array *A, dlb_array *B, dlb_array *S, lint nrhs, lint ldb,
                              lint *rank) {
  lint m = (lint)c->p->m, n = (lint)c->p->n, lda = m, info = 0, lwork = -1, iq = 0;
  double rcond = isnan(c->x->rcond) ? DBL_EPSILON * (double)(m > n ? m : n) : c->x->rcond, q = 0;
  dlb_array work = {0}, iwork = {0};
  int64_t nw = 0;
  dlb_status st;
  if (!all_finite(f64(A), (int64_t)m * n)) return not_finite(c, 0);
  for (lint j = 0; j < nrhs; j++)
    if (!all_finite(f64(B) + j * ldb, m)) return not_finite(c, 0);
  c->lp->dgelsd(&m, &n, &nrhs, f64(A), &lda, f64(B), &ldb, f64(S), &rcond, rank, &q, &lwork, &iq,
                &info);
  if (info) return failed(c, "dgelsd", info, 0, "", "");
  if ((st = work_size(c, q, &nw)) == DLB_OK &&
      (st = scratch(c, DLB_FLOAT64, nw, 0, &work)) == DLB_OK &&
      (st = scratch(c, DLB_INT32, iq, 0, &iwork)) == DLB_OK && !stop(c)) {
    lwork = (lint)nw;
    c->lp->dgelsd(&m, &n, &nrhs, f64(A), &lda, f64(B), &ldb, f64(S), &rcond, rank, f64(&work),
                  &lwork, i32(&iwork), &info);
    if (info)
      st = failed(c, "dgelsd", info, 0, "the SVD did not converge in the least-squares solve",
                  "the matrix may hold NaN or inf");
  }
  dlb_array_release(&work);
  dlb_array_release(&iwork);
  return st;
}

/* The residuals: per column of b, the squares of the rows of dgelsd's
 * result past n, summed in order (umath_linalg's), when m > n and the rank
 * is n (NumPy returns none otherwise). */
static dlb_status lstsq_residuals(la *c, const dlb_array *B, lint ldb, lint rank) {
  const dlb_linalg_plan *p = c->p;
  int64_t count = p->m > p->n && rank == p->n ? p->k : 0;
  dlb_array R = {0}, v;
  dlb_status st;
  if ((st = dlb_array_allocate(&c->results[1], c->where.backend, c->where.device_id, p->dtype[1], 1,
                               &count, 0, c->err)) != DLB_OK ||
      count == 0 || (st = scratch(c, DLB_FLOAT64, count, 0, &R)) != DLB_OK)
    return st;
  for (int64_t j = 0; j < count; j++) {
    const double *col = f64(B) + j * ldb;
    double s = 0.0;
    for (int64_t i = p->n; i < p->m; i++) s += col[i] * col[i];
    f64(&R)[j] = s;
  }
  v = R;
  st = dlb_array_copy_into(&c->results[1], &v, c->err);
  dlb_array_release(&R);
  return st;
}

/* lstsq: dgelsd (NumPy's lstsq_m / lstsq_n; b of no columns is solved as
 * one zero column, as NumPy does). */
static dlb_status run_lstsq(la *c) {
  const dlb_linalg_plan *p = c->p;
  int64_t m = p->m, n = p->n, k = p->k, kk = m < n ? m : n;
  lint ldb = lmax1(m > n ? m : n), nrhs = k > 0 ? (lint)k : 1, rank = 0;
  dlb_array A = {0}, B = {0}, S = {0};
  dlb_status st;
  if ((st = load(c, c->x->a, 0, m, n, m, &A)) != DLB_OK ||
      (st = scratch2(c, kk, 1, 0, &S)) != DLB_OK)
    goto done;
  st = k > 0 ? load(c, c->x->b, p->b_vector, m, k, ldb, &B) : scratch2(c, ldb, 1, 1, &B);
  if (st == DLB_OK && m > 0 && n > 0) st = lstsq_solve(c, &A, &B, &S, nrhs, ldb, &rank);
  if (st == DLB_OK && c->w && c->w->interrupted) goto done;
  if (st == DLB_OK) st = store(c, &c->results[0], &B, n, k, ldb);
  if (st == DLB_OK) st = lstsq_residuals(c, &B, ldb, rank);
  if (st == DLB_OK) st = store(c, &c->results[2], &S, kk, 1, kk);
  if (st == DLB_OK && c->rank) *c->rank = rank;
done:
  dlb_array_release(&A);
  dlb_array_release(&B);
  dlb_array_release(&S);
  return st;
}

/* Checks the memory, opens LAPACK, and allocates the results. */
static dlb_status prepare(la *c, dlb_backend *cpu) {
  dlb_operand in[2] = {{c->x->a, {0}}, {c->x->b, {0}}};
  int two = c->x->op == DLB_LINALG_SOLVE || c->x->op == DLB_LINALG_LSTSQ;
  dlb_status st;
  if ((st = dlb_check_operands_for(1 + two, in, cpu, DLB_ANY_MEMORY, &c->where, c->op, c->err)) !=
          DLB_OK ||
      (st = dlb_check_host_memory(c->x->a, c->op, c->err)) != DLB_OK ||
      (two && (st = dlb_check_host_memory(c->x->b, c->op, c->err)) != DLB_OK))
    return st;
  if (!(c->lp = dlb_lapack_get())) {
    dlb_fail(c->err, DLB_E_UNSUPPORTED, "linalg.%s: no LAPACK library could be opened", c->op);
    dlb_error_hint(c->err, "install one (Debian: liblapack3, or libopenblas0 for OpenBLAS's), or "
                           "name one in DLBRIDGE_LAPACK");
    return DLB_E_UNSUPPORTED;
  }
  for (int r = 0; r < c->p->nresults; r++) {
    if (c->x->op == DLB_LINALG_LSTSQ && r == 1) continue; /* its shape needs the rank */
    if ((st = dlb_array_allocate(&c->results[r], c->where.backend, c->where.device_id,
                                 c->p->dtype[r], c->p->ndim[r], c->p->shape[r], 0, c->err)) !=
        DLB_OK)
      return st;
  }
  return DLB_OK;
}

static dlb_status run(la *c) {
  switch (c->x->op) {
    case DLB_LINALG_SOLVE: return run_solve(c);
    case DLB_LINALG_INV: return run_solve(c);
    case DLB_LINALG_DET:
    case DLB_LINALG_SLOGDET: return run_det(c);
    case DLB_LINALG_CHOLESKY: return run_cholesky(c);
    case DLB_LINALG_EIGH: return run_eigh(c);
    case DLB_LINALG_SVD: return run_svd(c);
    case DLB_LINALG_QR: return run_qr(c);
    default: return run_lstsq(c);
  }
}

dlb_status dlb_linalg(const dlb_linalg_args *x, dlb_array *results, int64_t *rank, dlb_backend *cpu,
                      dlb_error *err) {
  dlb_linalg_plan p;
  la c = {x, &p, NULL, cpu, {0}, results, rank, NULL, 0, op_names[x->op], err};
  int64_t total;
  dlb_work w;
  dlb_status st;
  for (int r = 0; r < DLB_LINALG_MAX_RESULTS; r++) results[r].buffer = NULL;
  if ((st = dlb_linalg_plan_of(x, &p, err)) != DLB_OK) return st;
  c.per_item = item_work(&p);
  if (__builtin_mul_overflow(c.per_item, p.items, &total)) total = INT64_MAX;
  if ((st = dlb_work_begin(&w, dlb_array_budget(x->a), total, c.op, err)) != DLB_OK) return st;
  c.w = &w;
  if ((st = prepare(&c, cpu)) == DLB_OK) st = run(&c);
  st = dlb_work_end(&w, st, c.op, err);
  if (st != DLB_OK)
    for (int r = 0; r < DLB_LINALG_MAX_RESULTS; r++) dlb_array_release(&results[r]);
  return st;
}
