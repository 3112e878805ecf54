/* scatter.c -- grouped updates (scatter.h): the checks, the dtype each
 * update computes in, the values broadcast and cast to it, then one call to
 * the scatter kernel of a's memory (the host's: backends/cpu/scatter.c). */
#include <stddef.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/shape.h"
#include "../core/tensor.h"
#include "../core/work.h"
#include "scatter.h"
#include "select.h"

static const char *const op_names[] = {"scatter_add", "scatter_mul", "scatter_max", "scatter_min"};

/* The dtype the updates compute in (NumPy's loop dtype; float16 and
 * bfloat16 in float32), or DLB_E_DTYPE when its results cannot go back
 * into a under same_kind or op has no loop for it. */
static dlb_status update_type(int op, const dlb_array *a, const dlb_array *values,
                              dlb_dtype *compute, const char *name, dlb_error *err) {
  dlb_dtype loop = dlb_promote_types(a->dtype, values->dtype);
  const char *an = dlb_dtype_get(a->dtype)->name;
  if (!dlb_can_cast_same_kind(loop, a->dtype)) {
    dlb_fail(err, DLB_E_DTYPE,
             "%s: cannot write %s updates into an array of %s (same_kind casting)", name,
             dlb_dtype_get(loop)->name, an);
    dlb_error_hint(err, "convert the values to the array's dtype first: values:astype(a.dtype)");
    return DLB_E_DTYPE;
  }
  if (dlb_dtype_get(loop)->kind == DLB_KIND_COMPLEX &&
      (op == DLB_SCATTER_MAXIMUM || op == DLB_SCATTER_MINIMUM)) {
    dlb_fail(err, DLB_E_DTYPE, "%s: complex numbers are not ordered (%s array)", name, an);
    dlb_error_hint(err, "complex arrays take scatter_add and scatter_mul");
    return DLB_E_DTYPE;
  }
  *compute = dlb_compute_type(loop);
  return DLB_OK;
}

/* The shape of the updates: a.shape[:dim] + index.shape + a.shape[dim + 1:]. */
static dlb_status update_shape(const dlb_array *a, const dlb_array *index, int dim, int *ndim,
                               int64_t *shape, const char *name, dlb_error *err) {
  int r = 0;
  *ndim = a->ndim - 1 + index->ndim;
  if (*ndim > DLB_MAX_NDIM)
    return dlb_fail(err, DLB_E_SHAPE, "%s: the updates would have %d dims (at most %d)", name,
                    *ndim, DLB_MAX_NDIM);
  for (int d = 0; d < dim; d++) shape[r++] = a->shape[d];
  for (int d = 0; d < index->ndim; d++) shape[r++] = index->shape[d];
  for (int d = dim + 1; d < a->ndim; d++) shape[r++] = a->shape[d];
  return DLB_OK;
}

/* values broadcast to (ndim, shape) as elements of dtype for the kernel,
 * into *packed: one element (strides 0) when values has one, else a
 * contiguous copy, or values itself when it already is one that a does
 * not overlap. */
static dlb_status pack_values(const dlb_array *a, const dlb_array *values, dlb_dtype dtype,
                              int ndim, const int64_t *shape, dlb_array *packed, const char *name,
                              dlb_error *err) {
  dlb_array view;
  int64_t one = 1;
  dlb_status st;
  int same = values->ndim == ndim && values->dtype == dtype && dlb_array_is_contiguous(values) &&
             !dlb_arrays_overlap(a, values);
  for (int d = 0; same && d < ndim; d++) same = values->shape[d] == shape[d];
  if (same) {
    dlb_array_share(packed, values);
    return DLB_OK;
  }
  dlb_array_share(&view, values);
  if (values->numel == 1 && values->ndim <= ndim) { /* (more dims never broadcast) */
    st = dlb_view_reshape(&view, 1, &one, err);
    if (st == DLB_OK) st = dlb_array_clone(packed, &view, dtype, err);
    dlb_array_release(&view);
    return st;
  }
  if (dlb_view_expand(&view, ndim, shape, err) != DLB_OK) {
    dlb_array_release(&view);
    dlb_fail(err, DLB_E_SHAPE, "%s: values of %d dims do not broadcast to the %d-D updates", name,
             values->ndim, ndim);
    dlb_error_hint(err, "the updates have a:take(idx, dim)'s shape: give one value, or values of "
                        "that shape (or one that broadcasts to it)");
    return DLB_E_SHAPE;
  }
  st = dlb_array_clone(packed, &view, dtype, err);
  dlb_array_release(&view);
  return st;
}

/* index as 1-D, a copy when it overlaps a (the kernel reads it while it
 * writes a). */
static dlb_status flat_index(const dlb_array *a, const dlb_array *index, dlb_array *flat,
                             dlb_error *err) {
  dlb_array copy;
  dlb_status st;
  if (!dlb_arrays_overlap(a, index)) return dlb_flatten(index, flat, err);
  if ((st = dlb_array_clone(&copy, index, index->dtype, err)) != DLB_OK) return st;
  st = dlb_flatten(&copy, flat, err);
  dlb_array_release(&copy);
  return st;
}

/* Tensors for the kernel: index 1-D, elements with a's ndim and the
 * updates' count along dim (strides 0 for one element for all). */
static dlb_status run_scatter(int op, dlb_array *a, const dlb_array *flat, const dlb_array *packed,
                              int dim, int64_t base, const char *name, dlb_error *err) {
  const dlb_array *arrays[3] = {a, flat, packed};
  int64_t eshape[DLB_MAX_NDIM], estrides[DLB_MAX_NDIM];
  dlb_kernel_site site;
  dlb_scatter_call c;
  dlb_status st;
  memcpy(eshape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
  eshape[dim] = flat->numel;
  if (packed->numel == 1) { /* one value for every update */
    for (int d = 0; d < a->ndim; d++) estrides[d] = 0;
  } else {
    dlb_shape_contiguous_strides(a->ndim, eshape, estrides);
  }
  if ((st = dlb_kernel_site_open(arrays, 3, &site, err)) != DLB_OK) return st;
  memset(&c, 0, sizeof c);
  c.op = op;
  c.dim = dim;
  dlb_tensor_of(a, &c.data);
  dlb_tensor_of(flat, &c.index);
  dlb_tensor_of(packed, &c.elements);
  c.elements.ndim = a->ndim;
  c.elements.shape = eshape;
  c.elements.strides = estrides;
  c.index_base = base;
  c.queue = site.queue;
  st = site.kernels->scatter(site.ctx, &c);
  return dlb_kernel_site_end(&site, st, &c.error, name, arrays, 3, err);
}

static dlb_status scatter_into(int op, dlb_array *a, const dlb_array *index,
                               const dlb_array *values, int dim, int64_t base, dlb_backend *cpu,
                               dlb_error *err) {
  const char *name = op_names[op];
  const dlb_array *arrays[3] = {a, index, values};
  dlb_placement where;
  dlb_dtype compute = a->dtype;
  int64_t shape[DLB_MAX_NDIM], numel;
  int ndim;
  dlb_array flat = {0}, packed = {0};
  dlb_status st;
  if ((st = dlb_check_arrays_for(3, arrays, cpu, offsetof(dlb_kernels, scatter), &where, name,
                                 err)) != DLB_OK)
    return st;
  if (a->readonly || a->buffer->readonly) {
    dlb_fail(err, DLB_E_READ_ONLY, "%s: the array is read-only", name);
    dlb_error_hint(err, "update a copy: a:copy()");
    return DLB_E_READ_ONLY;
  }
  if (a->ndim == 0) {
    dlb_fail(err, DLB_E_INDEX, "%s: a 0-d array cannot be indexed", name);
    dlb_error_hint(err, "update a 0-d array with a:set(v)");
    return DLB_E_INDEX;
  }
  if (dim < 0 || dim >= a->ndim)
    return dlb_fail(err, DLB_E_INDEX, "%s: dim %d is out of range for a %d-D array", name, dim + 1,
                    a->ndim);
  if (dlb_dtype_get(index->dtype)->kind != DLB_KIND_INT &&
      dlb_dtype_get(index->dtype)->kind != DLB_KIND_UINT) {
    dlb_fail(err, DLB_E_DTYPE, "%s: indices must be integers, got %s", name,
             dlb_dtype_get(index->dtype)->name);
    dlb_error_hint(err, "convert them first: idx:astype(\"int64\")");
    return DLB_E_DTYPE;
  }
  if ((st = dlb_check_out(a, a->dtype, a->ndim, a->shape, &where, name, err)) != DLB_OK ||
      (st = update_type(op, a, values, &compute, name, err)) != DLB_OK ||
      (st = update_shape(a, index, dim, &ndim, shape, name, err)) != DLB_OK ||
      (st = dlb_shape_numel(ndim, shape, &numel, err)) != DLB_OK)
    return st;
  if (a->shape[dim] == 0 && numel > 0)
    return dlb_fail(err, DLB_E_INDEX, "%s: cannot update dim %d of extent 0", name, dim + 1);
  if ((st = pack_values(a, values, compute, ndim, shape, &packed, name, err)) != DLB_OK) return st;
  if (numel > 0) { /* none: nothing to update, and (as NumPy 1.24) no index is looked at */
    if ((st = flat_index(a, index, &flat, err)) == DLB_OK) {
      st = run_scatter(op, a, &flat, &packed, dim, base, name, err);
      dlb_array_release(&flat);
    }
  }
  dlb_array_release(&packed);
  return st;
}

/* The count of updates (INT64_MAX when past it): index's elements times
 * a's along the other dims. */
static int64_t update_count(const dlb_array *a, const dlb_array *index, int dim) {
  int64_t n = index->numel;
  for (int d = 0; d < a->ndim; d++) {
    if (d == dim) continue;
    if (a->shape[d] == 0) return 0;
    if (__builtin_mul_overflow(n, a->shape[d], &n)) return INT64_MAX;
  }
  return n;
}

dlb_status dlb_scatter(int op, dlb_array *a, const dlb_array *index, const dlb_array *values,
                       int dim, int64_t base, dlb_backend *cpu, dlb_error *err) {
  dlb_work w;
  dlb_status st;
  if (op < DLB_SCATTER_ADD || op > DLB_SCATTER_MINIMUM)
    return dlb_fail(err, DLB_E_ARGUMENT, "scatter: unknown operation %d", op);
  if ((st = dlb_work_begin(&w, dlb_array_budget(a), update_count(a, index, dim), op_names[op],
                           err)) != DLB_OK)
    return st;
  return dlb_work_end(&w, scatter_into(op, a, index, values, dim, base, cpu, err), op_names[op],
                      err);
}
