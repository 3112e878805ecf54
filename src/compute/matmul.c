/* matmul.c -- matmul and dot: the shape and dtype rules, the operands cast
 * to the dtype products are formed in and seen as stacks of matrices of one
 * ndim, the result, and the work handed to the kernels of the operands'
 * memory (the host's: backends/cpu/matmul.c). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/shape.h"
#include "../core/tensor.h"
#include "../core/work.h"
#include "matmul.h"

/* The geometry of a product: C (batch..., M, N) = A (batch..., M, K) B
 * (batch..., K, N). */
typedef struct mm_shape {
  int64_t m, n, k;
  int nbatch;
  int64_t batch_shape[DLB_MAX_NDIM];
} mm_shape;

static dlb_status zero_d_operand(const char *op, dlb_error *err) {
  dlb_fail(err, DLB_E_SHAPE, "%s: a 0-d operand has no dims to multiply", op);
  dlb_error_hint(err, "multiply by a scalar element-wise (a * x) instead");
  return DLB_E_SHAPE;
}

/* M, N, K and the batch dims of matmul(a, b), and the result's shape. */
static dlb_status matmul_shapes(const dlb_array *a, const dlb_array *b, mm_shape *p, int *rndim,
                                int64_t *rshape, dlb_error *err) {
  int a_vec = a->ndim == 1, b_vec = b->ndim == 1, na, nb, nd = 0;
  char sa[160], sb[160];
  dlb_status st;
  if (a->ndim == 0 || b->ndim == 0) return zero_d_operand("matmul", err);
  p->k = a->shape[a->ndim - 1];
  p->m = a_vec ? 1 : a->shape[a->ndim - 2];
  p->n = b_vec ? 1 : b->shape[b->ndim - 1];
  if (p->k != (b_vec ? b->shape[0] : b->shape[b->ndim - 2])) {
    dlb_shape_text(a->ndim, a->shape, sa, sizeof sa);
    dlb_shape_text(b->ndim, b->shape, sb, sizeof sb);
    dlb_fail(err, DLB_E_SHAPE,
             "matmul: shapes %s and %s do not multiply: %lld columns against %lld rows", sa, sb,
             (long long)p->k, (long long)(b_vec ? b->shape[0] : b->shape[b->ndim - 2]));
    dlb_error_hint(err, "(..., M, K) times (..., K, N): the last dim of a must equal the "
                        "second-to-last of b (a:T() swaps the dims of a matrix)");
    return DLB_E_SHAPE;
  }
  na = a->ndim > 2 ? a->ndim - 2 : 0;
  nb = b->ndim > 2 ? b->ndim - 2 : 0;
  if ((st = dlb_broadcast_stacks(a, na, b, nb, &p->nbatch, p->batch_shape, "matmul", err)) !=
      DLB_OK)
    return st;
  for (int d = 0; d < p->nbatch; d++) rshape[nd++] = p->batch_shape[d];
  if (!a_vec) rshape[nd++] = p->m;
  if (!b_vec) rshape[nd++] = p->n;
  *rndim = nd;
  return DLB_OK;
}

/* Which dtype matmul computes and returns (dtype or the promotion). */
static dlb_status matmul_type(const dlb_array *a, const dlb_array *b, dlb_dtype dtype,
                              dlb_dtype *result, dlb_error *err) {
  if (dtype == DLB_MATMUL_PROMOTE) {
    *result = dlb_promote_types(a->dtype, b->dtype);
    return DLB_OK;
  }
  if ((unsigned)dtype >= DLB_DTYPE_COUNT)
    return dlb_fail(err, DLB_E_DTYPE, "matmul: invalid dtype");
  for (int k = 0; k < 2; k++) {
    dlb_dtype t = (k ? b : a)->dtype;
    if (!dlb_can_cast_same_kind(t, dtype)) {
      dlb_fail(err, DLB_E_DTYPE, "matmul: operand %d (%s) cannot be cast to %s (same_kind)", k + 1,
               dlb_dtype_get(t)->name, dlb_dtype_get(dtype)->name);
      dlb_error_hint(err, "pick a dtype of the operands' kind or a more general one "
                          "(bool < uint < int < float < complex)");
      return DLB_E_DTYPE;
    }
  }
  *result = dtype;
  return DLB_OK;
}

/* M (a's dims but the last, merged), N, K and the batch dims (b's but its
 * last two) of dot(a, b), and the result's shape. */
static dlb_status dot_shapes(const dlb_array *a, const dlb_array *b, mm_shape *p, int *rndim,
                             int64_t *rshape, dlb_error *err) {
  int b_vec = b->ndim == 1, nd = 0, kdim;
  char sa[160], sb[160];
  if (a->ndim == 0 || b->ndim == 0) return zero_d_operand("dot", err);
  dlb_shape_text(a->ndim, a->shape, sa, sizeof sa);
  dlb_shape_text(b->ndim, b->shape, sb, sizeof sb);
  kdim = b_vec ? 0 : b->ndim - 2;
  p->k = a->shape[a->ndim - 1];
  if (p->k != b->shape[kdim]) {
    dlb_fail(
        err, DLB_E_SHAPE,
        "dot: shapes %s and %s are not aligned: dim %d of a (%lld) differs from dim %d of b (%lld)",
        sa, sb, a->ndim, (long long)p->k, kdim + 1, (long long)b->shape[kdim]);
    dlb_error_hint(err, "dot sums over the last dim of a and the second-to-last of b "
                        "(the only one of a 1-D b)");
    return DLB_E_SHAPE;
  }
  if ((a->ndim - 1) + (b->ndim - 1) > DLB_MAX_NDIM)
    return dlb_fail(err, DLB_E_SHAPE, "dot: shapes %s and %s give more than %d dims", sa, sb,
                    DLB_MAX_NDIM);
  if (dlb_shape_numel(a->ndim - 1, a->shape, &p->m, err) != DLB_OK)
    return dlb_fail(err, DLB_E_SHAPE, "dot: the result of shapes %s and %s is too large", sa, sb);
  p->n = b_vec ? 1 : b->shape[b->ndim - 1];
  p->nbatch = b_vec ? 0 : b->ndim - 2;
  for (int d = 0; d < a->ndim - 1; d++) rshape[nd++] = a->shape[d];
  for (int d = 0; d < p->nbatch; d++) rshape[nd++] = p->batch_shape[d] = b->shape[d];
  if (!b_vec) rshape[nd++] = p->n;
  *rndim = nd;
  return DLB_OK;
}

/* The multiply-adds of a product (saturating): what the host's work limit counts. */
static int64_t product_work(const mm_shape *p) {
  int64_t w = p->m;
  if (__builtin_mul_overflow(w, p->n, &w) || __builtin_mul_overflow(w, p->k, &w)) return INT64_MAX;
  for (int d = 0; d < p->nbatch; d++)
    if (__builtin_mul_overflow(w, p->batch_shape[d], &w)) return INT64_MAX;
  return w;
}

/* x in the compute dtype: x itself, or a cast copy in *copy on x's device
 * (a float16/bfloat16 result rounds to that dtype first, as NumPy's astype). */
static dlb_status in_compute(const dlb_array *x, dlb_dtype compute, dlb_dtype result,
                             dlb_array *copy, const dlb_array **out, dlb_error *err) {
  dlb_array rounded = {0};
  dlb_status st = DLB_OK;
  *out = x;
  if (result != compute && x->dtype != result) { /* (a float32 operand too) */
    if ((st = dlb_array_clone(&rounded, x, result, err)) != DLB_OK) return st;
    x = &rounded;
  } else if (x->dtype == compute) {
    return DLB_OK;
  }
  st = dlb_array_clone(copy, x, compute, err);
  dlb_array_release(&rounded);
  if (st == DLB_OK) *out = copy;
  return st;
}

/* v: x (borrowed) seen as (batch..., rows, cols) with nbatch + 2 dims, its
 * leading dims right-aligned to the batch dims (stride 0 where it has none
 * or broadcasts); a 1-D x is a row (is_a) or a column. */
static void stack_view(const dlb_array *x, int is_a, const mm_shape *p, dlb_array *v) {
  int nx = x->ndim > 2 ? x->ndim - 2 : 0, nd = p->nbatch;
  *v = *x;
  v->ndim = nd + 2;
  for (int d = 0; d < nd; d++) {
    int s = d - (nd - nx);
    v->shape[d] = p->batch_shape[d];
    v->strides[d] = s < 0 || x->shape[s] == 1 ? 0 : x->strides[s];
  }
  if (x->ndim == 1) {
    v->shape[nd] = is_a ? 1 : x->shape[0];
    v->shape[nd + 1] = is_a ? x->shape[0] : 1;
    v->strides[nd] = is_a ? 0 : x->strides[0];
    v->strides[nd + 1] = is_a ? x->strides[0] : 0;
  } else {
    v->shape[nd] = x->shape[x->ndim - 2];
    v->shape[nd + 1] = x->shape[x->ndim - 1];
    v->strides[nd] = x->strides[x->ndim - 2];
    v->strides[nd + 1] = x->strides[x->ndim - 1];
  }
}

/* Runs C = A B through the kernels of their memory (one device; every
 * operand in the compute dtype). */
static dlb_status multiply(const dlb_array *a, const dlb_array *b, const dlb_array *c,
                           dlb_dtype compute, dlb_error *err) {
  const dlb_array *arrays[3] = {c, a, b};
  dlb_matmul_call call;
  dlb_kernel_site site;
  dlb_status st;
  for (int d = 0; d < c->ndim; d++)
    if (c->shape[d] == 0) return DLB_OK; /* an empty result */
  if ((st = dlb_kernel_site_open(arrays, 3, &site, err)) != DLB_OK) return st;
  call.error.message[0] = 0;
  call.error.hint = NULL;
  dlb_tensor_of(a, &call.a);
  dlb_tensor_of(b, &call.b);
  dlb_tensor_of(c, &call.out);
  call.compute = dlb_dtype_to_dl(compute);
  call.queue = site.queue;
  st = site.kernels->matmul(site.ctx, &call);
  return dlb_kernel_site_end(&site, st, &call.error, "multiply", arrays, 3, err);
}

/* How the result's dims map onto C (batch..., M, N). */
typedef struct result_map {
  int first_batch;    /* the result dim of batch dim 0 */
  int row_dim;        /* -1: no row dim in the result (M is 1) */
  int col_dim;        /* -1: no col dim (N is 1) */
  int64_t row_stride; /* with row_dim < 0 and M > 1 (dot): the merged rows' stride */
} result_map;

/* C: the result r (borrowed) as (batch..., M, N). */
static void result_stack(const dlb_array *r, const mm_shape *p, const result_map *l, dlb_array *c) {
  int nd = p->nbatch;
  *c = *r;
  c->ndim = nd + 2;
  for (int d = 0; d < nd; d++) {
    c->shape[d] = p->batch_shape[d];
    c->strides[d] = r->strides[l->first_batch + d];
  }
  c->shape[nd] = p->m;
  c->strides[nd] = l->row_dim >= 0 ? r->strides[l->row_dim] : l->row_stride;
  c->shape[nd + 1] = p->n;
  c->strides[nd + 1] = l->col_dim >= 0 ? r->strides[l->col_dim] : 0;
}

/* The product into out (given, or a new array of result_type on where):
 * through a temporary of the compute dtype when the result has another
 * dtype or out overlaps an input. a and b are stacks (stack_view). */
static dlb_status product_into(const dlb_array *a, const dlb_array *b, const dlb_array *a0,
                               const dlb_array *b0, dlb_array *out, dlb_dtype result_type,
                               dlb_dtype compute, int rndim, const int64_t *rshape,
                               const mm_shape *p, const result_map *l, const dlb_placement *where,
                               dlb_error *err) {
  dlb_array fresh = {0}, tmp = {0}, c;
  dlb_array *dest = out;
  int given = out->buffer != NULL;
  dlb_status st = DLB_OK;
  if (!given) {
    st = dlb_array_allocate(&fresh, where->backend, where->device_id, result_type, rndim, rshape, 0,
                            err);
    if (st != DLB_OK) return st;
    dest = &fresh;
  }
  if (dest->dtype != compute ||
      (given && (dlb_arrays_overlap(dest, a0) || dlb_arrays_overlap(dest, b0)))) {
    st = dlb_array_allocate(&tmp, where->backend, where->device_id, compute, rndim, rshape, 0, err);
    if (st == DLB_OK) {
      result_stack(&tmp, p, l, &c);
      st = multiply(a, b, &c, compute, err);
    }
    if (st == DLB_OK) st = dlb_array_copy_into(dest, &tmp, err);
  } else {
    result_stack(dest, p, l, &c);
    st = multiply(a, b, &c, compute, err);
  }
  dlb_array_release(&tmp);
  if (st == DLB_OK && !given) *out = fresh;
  else dlb_array_release(&fresh);
  return st;
}

static dlb_status matmul(const dlb_array *a, const dlb_array *b, dlb_dtype dtype, dlb_array *out,
                         dlb_backend *cpu, const mm_shape *p, int rndim, const int64_t *rshape,
                         dlb_dtype result_type, const dlb_placement *where, dlb_error *err) {
  dlb_dtype compute = dlb_compute_type(result_type);
  dlb_array ca = {0}, cb = {0}, sa, sb;
  const dlb_array *xa, *xb;
  result_map l = {0, a->ndim == 1 ? -1 : p->nbatch, b->ndim == 1 ? -1 : rndim - 1, 0};
  dlb_status st;
  (void)dtype;
  (void)cpu;
  if ((st = in_compute(a, compute, result_type, &ca, &xa, err)) == DLB_OK &&
      (st = in_compute(b, compute, result_type, &cb, &xb, err)) == DLB_OK) {
    stack_view(xa, 1, p, &sa);
    stack_view(xb, 0, p, &sb);
    st = product_into(&sa, &sb, a, b, out, result_type, compute, rndim, rshape, p, &l, where, err);
  }
  dlb_array_release(&ca);
  dlb_array_release(&cb);
  return st;
}

dlb_status dlb_matmul(const dlb_array *a, const dlb_array *b, dlb_dtype dtype, dlb_array *out,
                      dlb_backend *cpu, dlb_error *err) {
  dlb_operand in[2] = {{a, {0}}, {b, {0}}};
  dlb_placement where;
  mm_shape p;
  int64_t rshape[DLB_MAX_NDIM];
  int rndim = 0;
  dlb_dtype result_type = DLB_FLOAT64;
  dlb_work w;
  int given;
  dlb_status st;
  if ((st = dlb_check_operands_for(2, in, cpu, offsetof(dlb_kernels, matmul), &where, "matmul",
                                   err)) != DLB_OK ||
      (st = matmul_shapes(a, b, &p, &rndim, rshape, err)) != DLB_OK ||
      (st = matmul_type(a, b, dtype, &result_type, err)) != DLB_OK)
    return st;
  if (out->buffer &&
      (st = dlb_check_out(out, result_type, rndim, rshape, &where, "matmul", err)) != DLB_OK)
    return st;
  if ((st = dlb_work_begin(&w, where.backend->budget, product_work(&p), "matmul", err)) != DLB_OK)
    return st;
  given = out->buffer != NULL;
  st = matmul(a, b, dtype, out, cpu, &p, rndim, rshape, result_type, &where, err);
  st = dlb_work_end(&w, st, "matmul", err);
  if (st != DLB_OK && !given) dlb_array_release(out); /* interrupted: the new result goes */
  return st;
}

/* a as dot reads it: its dims but the last merged into the rows, into *m
 * and *row_stride; 0 when they do not merge without a copy. */
static int dot_rows(const dlb_array *a, int64_t m, int64_t *row_stride) {
  *row_stride = 0;
  return a->ndim == 1 ||
         dlb_shape_reshape_strides(a->ndim - 1, a->shape, a->strides, 1, &m, row_stride);
}

dlb_status dlb_dot(const dlb_array *a, const dlb_array *b, dlb_array *result, dlb_backend *cpu,
                   dlb_error *err) {
  dlb_operand in[2] = {{a, {0}}, {b, {0}}};
  dlb_placement where;
  mm_shape p;
  int64_t rshape[DLB_MAX_NDIM], rs;
  int rndim = 0;
  dlb_dtype result_type, compute;
  dlb_array ca = {0}, cb = {0}, flat = {0}, sa, sb;
  const dlb_array *xa, *xb;
  result_map l;
  dlb_work w;
  dlb_status st;
  result->buffer = NULL;
  if ((st = dlb_check_operands_for(2, in, cpu, offsetof(dlb_kernels, matmul), &where, "dot",
                                   err)) != DLB_OK ||
      (st = dot_shapes(a, b, &p, &rndim, rshape, err)) != DLB_OK)
    return st;
  result_type = dlb_promote_types(a->dtype, b->dtype);
  compute = dlb_compute_type(result_type);
  if ((st = dlb_work_begin(&w, where.backend->budget, product_work(&p), "dot", err)) != DLB_OK)
    return st;
  if ((st = in_compute(a, compute, result_type, &ca, &xa, err)) == DLB_OK &&
      (st = in_compute(b, compute, result_type, &cb, &xb, err)) == DLB_OK &&
      !dot_rows(xa, p.m, &rs)) { /* a's rows do not merge: a contiguous copy does */
    if ((st = dlb_array_clone(&flat, xa, xa->dtype, err)) == DLB_OK) {
      xa = &flat;
      dot_rows(xa, p.m, &rs);
    }
  }
  if (st == DLB_OK) {
    /* A: (batch..., M, K) with stride 0 along b's batch dims. */
    sa = *xa;
    sa.ndim = p.nbatch + 2;
    for (int d = 0; d < p.nbatch; d++) sa.shape[d] = p.batch_shape[d], sa.strides[d] = 0;
    sa.shape[p.nbatch] = p.m;
    sa.strides[p.nbatch] = rs;
    sa.shape[p.nbatch + 1] = p.k;
    sa.strides[p.nbatch + 1] = xa->strides[xa->ndim - 1];
    stack_view(xb, 0, &p, &sb);
    l.first_batch = a->ndim - 1;
    l.row_dim = -1; /* the rows are a's dims merged: their stride is the last of them */
    l.col_dim = b->ndim == 1 ? -1 : rndim - 1;
    l.row_stride = 0;
    /* The result is fresh and contiguous: a's dims merge; the last one's stride steps a row. */
    {
      int64_t step = 1;
      for (int d = rndim - 1; d >= a->ndim - 1; d--) step *= rshape[d];
      l.row_stride = a->ndim > 1 ? step : 0;
    }
    st = product_into(&sa, &sb, a, b, result, result_type, compute, rndim, rshape, &p, &l, &where,
                      err);
  }
  dlb_array_release(&flat);
  dlb_array_release(&ca);
  dlb_array_release(&cb);
  st = dlb_work_end(&w, st, "dot", err);
  if (st != DLB_OK) dlb_array_release(result); /* interrupted: the result goes */
  return st;
}

dlb_status dlb_matmul_result(int is_dot, const dlb_array *a, const dlb_array *b, dlb_dtype dtype,
                             dlb_dtype *result, int *ndim, int64_t *shape, dlb_error *err) {
  const char *op = is_dot ? "dot" : "matmul";
  mm_shape p;
  dlb_status st;
  if (!a->buffer || !b->buffer)
    return dlb_fail(err, DLB_E_DELETED, "%s: argument %d was deleted", op, a->buffer ? 2 : 1);
  if (is_dot) {
    if ((st = dot_shapes(a, b, &p, ndim, shape, err)) != DLB_OK) return st;
    *result = dlb_promote_types(a->dtype, b->dtype);
    return DLB_OK;
  }
  if ((st = matmul_shapes(a, b, &p, ndim, shape, err)) != DLB_OK) return st;
  return matmul_type(a, b, dtype, result, err);
}
