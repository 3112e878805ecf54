/* select.c -- indexing by arrays (select.h): shapes, dtypes and checks,
 * then one take, mask or nonzero call to the kernels of the input's memory
 * (the host's: backends/cpu/select.c). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/shape.h"
#include "../core/tensor.h"
#include "../core/work.h"
#include "reduce.h"
#include "select.h"

static int integral_index(dlb_dtype t) {
  dlb_kind k = dlb_dtype_get(t)->kind;
  return k == DLB_KIND_INT || k == DLB_KIND_UINT;
}

static dlb_status check_index_dtype(const dlb_array *index, const char *op, dlb_error *err) {
  if (integral_index(index->dtype)) return DLB_OK;
  dlb_fail(err, DLB_E_DTYPE, "%s: indices must be integers, got %s", op,
           dlb_dtype_get(index->dtype)->name);
  dlb_error_hint(err, index->dtype == DLB_BOOL
                          ? "a bool array is a mask: a[mask] selects where it is true"
                          : "convert them first: idx:astype(\"int64\")");
  return DLB_E_DTYPE;
}

dlb_status dlb_flatten(const dlb_array *a, dlb_array *flat, dlb_error *err) {
  int64_t n = a->numel;
  dlb_status st;
  flat->buffer = NULL;
  if (dlb_array_is_contiguous(a)) {
    dlb_array_share(flat, a);
  } else if ((st = dlb_array_clone(flat, a, a->dtype, err)) != DLB_OK) {
    return st;
  }
  if ((st = dlb_view_reshape(flat, 1, &n, err)) != DLB_OK) dlb_array_release(flat);
  return st;
}

/* The take kernel over data (shape and strides given), index and elements
 * (both of shape eshape, strides given), after the work pending on them. */
typedef struct take_geometry {
  const int64_t *dshape, *dstrides, *eshape, *istrides, *estrides;
} take_geometry;

static dlb_status run_take(int scatter, const dlb_array *data, const dlb_array *index,
                           const dlb_array *elements, const take_geometry *g, int dim, int64_t base,
                           const char *op, dlb_error *err) {
  const dlb_array *arrays[3] = {data, index, elements};
  dlb_kernel_site site;
  dlb_take_call c;
  dlb_status st;
  if ((st = dlb_kernel_site_open(arrays, 3, &site, err)) != DLB_OK) return st;
  memset(&c, 0, sizeof c);
  c.scatter = scatter;
  c.dim = dim;
  dlb_tensor_of(data, &c.data);
  c.data.shape = g->dshape;
  c.data.strides = g->dstrides;
  dlb_tensor_of(index, &c.index);
  c.index.ndim = data->ndim;
  c.index.shape = g->eshape;
  c.index.strides = g->istrides;
  dlb_tensor_of(elements, &c.elements);
  c.elements.ndim = data->ndim;
  c.elements.shape = g->eshape;
  c.elements.strides = g->estrides;
  c.index_base = base;
  c.queue = site.queue;
  st = site.kernels->take(site.ctx, &c);
  return dlb_kernel_site_end(&site, st, &c.error, op, arrays, 3, err);
}

/* Brackets f's work (work.h) over `elements` elements of a's state. */
#define BOUNDED(a, elements, op, call)                                                             \
  do {                                                                                             \
    dlb_work w_;                                                                                   \
    dlb_status st_ = dlb_work_begin(&w_, dlb_array_budget(a), (elements), (op), err);              \
    if (st_ != DLB_OK) return st_;                                                                 \
    return dlb_work_end(&w_, (call), (op), err);                                                   \
  } while (0)

/* Gives a fresh result its value, or copies it into the caller's out. */
static dlb_status deliver(dlb_array *result, dlb_array *out, int fresh, dlb_error *err) {
  dlb_status st = DLB_OK;
  if (fresh) {
    *out = *result;
    return DLB_OK;
  }
  st = dlb_array_copy_into(out, result, err);
  dlb_array_release(result);
  return st;
}

static int64_t saturating_numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++)
    if (shape[d] == 0) return 0;
  for (int d = 0; d < ndim; d++)
    if (__builtin_mul_overflow(n, shape[d], &n)) return INT64_MAX;
  return n;
}

static dlb_status take_into(const dlb_array *a, const dlb_array *index, int dim, int64_t base,
                            dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  const char *op = "take";
  const dlb_array *arrays[2] = {a, index};
  dlb_placement where;
  dlb_array flat = {0}, result = {0};
  int64_t rshape[DLB_MAX_NDIM], eshape[DLB_MAX_NDIM], estrides[DLB_MAX_NDIM],
      istrides[DLB_MAX_NDIM];
  int rndim = a->ndim - 1 + index->ndim, fresh = out->buffer == NULL;
  dlb_status st;
  take_geometry g;
  if ((st = dlb_check_arrays_for(2, arrays, cpu, offsetof(dlb_kernels, take), &where, op, err)) !=
          DLB_OK ||
      (st = check_index_dtype(index, op, err)) != DLB_OK)
    return st;
  if (rndim > DLB_MAX_NDIM)
    return dlb_fail(err, DLB_E_SHAPE, "take: the result would have %d dims (at most %d)", rndim,
                    DLB_MAX_NDIM);
  {
    int r = 0;
    for (int d = 0; d < dim; d++) rshape[r++] = a->shape[d];
    for (int d = 0; d < index->ndim; d++) rshape[r++] = index->shape[d];
    for (int d = dim + 1; d < a->ndim; d++) rshape[r++] = a->shape[d];
  }
  {
    int64_t numel;
    if ((st = dlb_shape_numel(rndim, rshape, &numel, err)) != DLB_OK) return st;
  }
  if (a->shape[dim] == 0 && index->numel > 0)
    return dlb_fail(err, DLB_E_INDEX, "take: cannot take from dim %d of extent 0", dim + 1);
  if (!fresh && (st = dlb_check_out(out, a->dtype, rndim, rshape, &where, op, err)) != DLB_OK)
    return st;
  if ((st = dlb_array_allocate(&result, where.backend, where.device_id, a->dtype, rndim, rshape, 0,
                               err)) != DLB_OK)
    return st;
  memcpy(eshape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
  eshape[dim] = index->numel;
  dlb_shape_contiguous_strides(a->ndim, eshape, estrides);
  for (int d = 0; d < a->ndim; d++) istrides[d] = 0;
  if (result.numel > 0) {
    if ((st = dlb_flatten(index, &flat, err)) != DLB_OK) {
      dlb_array_release(&result);
      return st;
    }
    istrides[dim] = flat.strides[0];
    g.dshape = a->shape;
    g.dstrides = a->strides;
    g.eshape = eshape;
    g.istrides = istrides;
    g.estrides = estrides;
    st = run_take(0, a, &flat, &result, &g, dim, base, op, err);
    dlb_array_release(&flat);
    if (st != DLB_OK) {
      dlb_array_release(&result);
      return st;
    }
  }
  return deliver(&result, out, fresh, err);
}

dlb_status dlb_take(const dlb_array *a, const dlb_array *index, int dim, int64_t base,
                    dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  BOUNDED(a, index->numel, "take", take_into(a, index, dim, base, out, cpu, err));
}

/* The extents of elements (index broadcast against a along the dims but
 * dim), with strides of a and index over them; DLB_E_SHAPE when they do
 * not broadcast. */
static dlb_status along_geometry(const dlb_array *a, const dlb_array *index, int dim,
                                 int64_t *dshape, int64_t *dstrides, int64_t *eshape,
                                 int64_t *istrides, const char *op, dlb_error *err) {
  if (index->ndim != a->ndim)
    return dlb_fail(err, DLB_E_SHAPE, "%s: indices have %d dims, the array %d (they must match)",
                    op, index->ndim, a->ndim);
  for (int d = 0; d < a->ndim; d++) {
    int64_t x = a->shape[d], y = index->shape[d];
    if (d == dim) {
      eshape[d] = y;
      dshape[d] = x;
      dstrides[d] = a->strides[d];
      istrides[d] = index->strides[d];
      continue;
    }
    if (x != y && x != 1 && y != 1)
      return dlb_fail(err, DLB_E_SHAPE,
                      "%s: indices of extent %lld do not broadcast against "
                      "extent %lld along dim %d",
                      op, (long long)y, (long long)x, d + 1);
    eshape[d] = dshape[d] = x == 1 ? y : x;
    dstrides[d] = x == 1 ? 0 : a->strides[d];
    istrides[d] = y == 1 ? 0 : index->strides[d];
  }
  return DLB_OK;
}

static dlb_status take_along_into(const dlb_array *a, const dlb_array *index, int dim, int64_t base,
                                  dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  const char *op = "take_along_dim";
  const dlb_array *arrays[2] = {a, index};
  dlb_placement where;
  int64_t dshape[DLB_MAX_NDIM], dstrides[DLB_MAX_NDIM], eshape[DLB_MAX_NDIM],
      istrides[DLB_MAX_NDIM], estrides[DLB_MAX_NDIM];
  take_geometry g = {dshape, dstrides, eshape, istrides, estrides};
  dlb_status st;
  if ((st = dlb_check_arrays_for(2, arrays, cpu, offsetof(dlb_kernels, take), &where, op, err)) !=
          DLB_OK ||
      (st = check_index_dtype(index, op, err)) != DLB_OK ||
      (st = along_geometry(a, index, dim, dshape, dstrides, eshape, istrides, op, err)) != DLB_OK)
    return st;
  if (a->shape[dim] == 0 && saturating_numel(a->ndim, eshape) > 0)
    return dlb_fail(err, DLB_E_INDEX, "%s: cannot take from dim %d of extent 0", op, dim + 1);
  if ((st = dlb_array_allocate(out, where.backend, where.device_id, a->dtype, a->ndim, eshape, 0,
                               err)) != DLB_OK)
    return st;
  memcpy(estrides, out->strides, sizeof(int64_t) * (size_t)a->ndim);
  if (out->numel > 0 && (st = run_take(0, a, index, out, &g, dim, base, op, err)) != DLB_OK)
    dlb_array_release(out);
  return st;
}

dlb_status dlb_take_along(const dlb_array *a, const dlb_array *index, int dim, int64_t base,
                          dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  BOUNDED(a, index->numel, "take_along_dim", take_along_into(a, index, dim, base, out, cpu, err));
}

/* values broadcast to (ndim, shape) and cast to dtype, as a new contiguous array. */
static dlb_status broadcast_copy(const dlb_array *values, dlb_dtype dtype, int ndim,
                                 const int64_t *shape, dlb_array *out, const char *op,
                                 dlb_error *err) {
  dlb_array view;
  dlb_status st;
  dlb_array_share(&view, values);
  if ((st = dlb_view_expand(&view, ndim, shape, err)) != DLB_OK) {
    dlb_array_release(&view);
    dlb_fail(err, DLB_E_SHAPE, "%s: values of %d dims do not broadcast to the %d-D selection", op,
             values->ndim, ndim);
    dlb_error_hint(err, "give one value, or an array of the selection's shape (its count first)");
    return DLB_E_SHAPE;
  }
  st = dlb_array_clone(out, &view, dtype, err);
  dlb_array_release(&view);
  return st;
}

static dlb_status put_along_into(dlb_array *a, const dlb_array *index, const dlb_array *values,
                                 int dim, int64_t base, dlb_backend *cpu, dlb_error *err) {
  const char *op = "put_along_dim";
  const dlb_array *arrays[3] = {a, index, values};
  dlb_placement where;
  int64_t dshape[DLB_MAX_NDIM], dstrides[DLB_MAX_NDIM], eshape[DLB_MAX_NDIM],
      istrides[DLB_MAX_NDIM], estrides[DLB_MAX_NDIM];
  take_geometry g = {dshape, dstrides, eshape, istrides, estrides};
  dlb_array packed = {0};
  dlb_status st;
  if ((st = dlb_check_arrays_for(3, arrays, cpu, offsetof(dlb_kernels, take), &where, op, err)) !=
          DLB_OK ||
      (st = check_index_dtype(index, op, err)) != DLB_OK ||
      (st = dlb_check_out(a, a->dtype, a->ndim, a->shape, &where, op, err)) != DLB_OK ||
      (st = along_geometry(a, index, dim, dshape, dstrides, eshape, istrides, op, err)) != DLB_OK)
    return st;
  if (saturating_numel(a->ndim, eshape) == 0) return DLB_OK;
  if (a->shape[dim] == 0)
    return dlb_fail(err, DLB_E_INDEX, "%s: cannot put into dim %d of extent 0", op, dim + 1);
  if ((st = broadcast_copy(values, a->dtype, a->ndim, eshape, &packed, op, err)) != DLB_OK)
    return st;
  memcpy(estrides, packed.strides, sizeof(int64_t) * (size_t)a->ndim);
  st = run_take(1, a, index, &packed, &g, dim, base, op, err);
  dlb_array_release(&packed);
  return st;
}

dlb_status dlb_put_along(dlb_array *a, const dlb_array *index, const dlb_array *values, int dim,
                         int64_t base, dlb_backend *cpu, dlb_error *err) {
  BOUNDED(a, index->numel, "put_along_dim", put_along_into(a, index, values, dim, base, cpu, err));
}

/* --- masks ------------------------------------------------------------------ */

dlb_status dlb_mask_shape(const dlb_array *a, const dlb_array *mask, dlb_backend *cpu, int *ndim,
                          int64_t *shape, dlb_error *err) {
  dlb_reduce_options o;
  dlb_scalar count;
  dlb_status st;
  if (mask->dtype != DLB_BOOL) {
    dlb_fail(err, DLB_E_DTYPE, "a mask must be a bool array, got %s",
             dlb_dtype_get(mask->dtype)->name);
    dlb_error_hint(err, integral_index(mask->dtype)
                            ? "an integer array indexes by position (a[idx] is a:take(idx, 1)); "
                              "make a mask with a comparison such as a:gt(0)"
                            : "make a mask with a comparison such as a:gt(0)");
    return DLB_E_DTYPE;
  }
  if (mask->ndim == 0 || mask->ndim > a->ndim) {
    dlb_fail(err, DLB_E_SHAPE, "a %d-D mask cannot index a %d-D array", mask->ndim, a->ndim);
    dlb_error_hint(err, "a mask has the shape of the array, or of its first dims");
    return DLB_E_SHAPE;
  }
  for (int d = 0; d < mask->ndim; d++)
    if (mask->shape[d] != a->shape[d]) {
      dlb_fail(err, DLB_E_SHAPE,
               "the mask does not match the array along dim %d: extent %lld, the array's %lld",
               d + 1, (long long)mask->shape[d], (long long)a->shape[d]);
      dlb_error_hint(err, "a mask has the shape of the array, or of its first dims");
      return DLB_E_SHAPE;
    }
  memset(&o, 0, sizeof o);
  o.dims = DLB_REDUCE_ALL_DIMS;
  if ((st = dlb_reduce_value(DLB_REDUCE_COUNT_NONZERO, mask, &o, cpu, &count, err)) != DLB_OK)
    return st;
  shape[0] = count.v.i;
  for (int d = mask->ndim; d < a->ndim; d++) shape[1 + d - mask->ndim] = a->shape[d];
  *ndim = 1 + a->ndim - mask->ndim;
  return DLB_OK;
}

/* The mask call over data (a) with the mask spread over a's other dims
 * (stride 0) and packed (1-D, n elements, stride ps). */
static dlb_status run_mask(int assign, const dlb_array *a, const dlb_array *mask,
                           const dlb_array *packed, int64_t n, int64_t ps, const char *op,
                           dlb_error *err) {
  const dlb_array *arrays[3] = {a, mask, packed};
  int64_t mstrides[DLB_MAX_NDIM], pshape[1] = {n}, pstrides[1] = {ps};
  dlb_kernel_site site;
  dlb_mask_call c;
  dlb_status st;
  for (int d = 0; d < a->ndim; d++) mstrides[d] = d < mask->ndim ? mask->strides[d] : 0;
  if ((st = dlb_kernel_site_open(arrays, 3, &site, err)) != DLB_OK) return st;
  memset(&c, 0, sizeof c);
  c.assign = assign;
  dlb_tensor_of(a, &c.data);
  dlb_tensor_of(mask, &c.mask);
  c.mask.ndim = a->ndim;
  c.mask.shape = a->shape;
  c.mask.strides = mstrides;
  dlb_tensor_of(packed, &c.packed);
  c.packed.ndim = 1;
  c.packed.shape = pshape;
  c.packed.strides = pstrides;
  c.queue = site.queue;
  st = site.kernels->mask(site.ctx, &c);
  return dlb_kernel_site_end(&site, st, &c.error, op, arrays, 3, err);
}

static dlb_status mask_select_into(const dlb_array *a, const dlb_array *mask, dlb_array *out,
                                   dlb_backend *cpu, dlb_error *err) {
  const char *op = "a[mask]";
  const dlb_array *arrays[2] = {a, mask};
  dlb_placement where;
  int64_t shape[DLB_MAX_NDIM];
  int ndim;
  dlb_status st;
  if ((st = dlb_check_arrays_for(2, arrays, cpu, offsetof(dlb_kernels, mask), &where, op, err)) !=
          DLB_OK ||
      (st = dlb_mask_shape(a, mask, cpu, &ndim, shape, err)) != DLB_OK)
    return st;
  if ((st = dlb_array_allocate(out, where.backend, where.device_id, a->dtype, ndim, shape, 0,
                               err)) != DLB_OK)
    return st;
  if (out->numel > 0 && (st = run_mask(0, a, mask, out, out->numel, 1, op, err)) != DLB_OK)
    dlb_array_release(out);
  return st;
}

dlb_status dlb_mask_select(const dlb_array *a, const dlb_array *mask, dlb_array *out,
                           dlb_backend *cpu, dlb_error *err) {
  BOUNDED(a, a->numel, "a[mask]", mask_select_into(a, mask, out, cpu, err));
}

static dlb_status mask_assign_into(dlb_array *a, const dlb_array *mask, const dlb_array *values,
                                   dlb_backend *cpu, dlb_error *err) {
  const char *op = "a[mask] =";
  const dlb_array *arrays[3] = {a, mask, values};
  dlb_placement where;
  int64_t shape[DLB_MAX_NDIM], one = 1;
  int ndim;
  dlb_array packed = {0};
  dlb_status st;
  if ((st = dlb_check_arrays_for(3, arrays, cpu, offsetof(dlb_kernels, mask), &where, op, err)) !=
          DLB_OK ||
      (st = dlb_check_out(a, a->dtype, a->ndim, a->shape, &where, op, err)) != DLB_OK ||
      (st = dlb_mask_shape(a, mask, cpu, &ndim, shape, err)) != DLB_OK)
    return st;
  if (values->numel == 1) { /* one value for every pick */
    dlb_array view;
    dlb_array_share(&view, values);
    st = dlb_view_reshape(&view, 1, &one, err);
    if (st == DLB_OK) st = dlb_array_clone(&packed, &view, a->dtype, err);
    dlb_array_release(&view);
    if (st != DLB_OK) return st;
  } else if ((st = broadcast_copy(values, a->dtype, ndim, shape, &packed, op, err)) != DLB_OK) {
    return st;
  }
  if (saturating_numel(ndim, shape) > 0)
    st = run_mask(1, a, mask, &packed, saturating_numel(ndim, shape), packed.numel == 1 ? 0 : 1, op,
                  err);
  dlb_array_release(&packed);
  return st;
}

dlb_status dlb_mask_assign(dlb_array *a, const dlb_array *mask, const dlb_array *values,
                           dlb_backend *cpu, dlb_error *err) {
  BOUNDED(a, a->numel, "a[mask] =", mask_assign_into(a, mask, values, cpu, err));
}

/* --- argwhere ----------------------------------------------------------------- */

static dlb_status argwhere_into(const dlb_array *a, int64_t base, dlb_array *out, dlb_backend *cpu,
                                dlb_error *err) {
  const char *op = "argwhere";
  const dlb_array *arrays[2] = {a, NULL};
  dlb_placement where;
  dlb_reduce_options o;
  dlb_scalar count;
  dlb_kernel_site site;
  dlb_nonzero_call c;
  int64_t shape[2];
  dlb_status st;
  if ((st = dlb_check_arrays_for(1, arrays, cpu, offsetof(dlb_kernels, nonzero), &where, op,
                                 err)) != DLB_OK)
    return st;
  memset(&o, 0, sizeof o);
  o.dims = DLB_REDUCE_ALL_DIMS;
  if ((st = dlb_reduce_value(DLB_REDUCE_COUNT_NONZERO, a, &o, cpu, &count, err)) != DLB_OK)
    return st;
  shape[0] = count.v.i;
  shape[1] = a->ndim;
  if ((st = dlb_array_allocate(out, where.backend, where.device_id, DLB_INT64, 2, shape, 0, err)) !=
      DLB_OK)
    return st;
  if (shape[0] == 0) return DLB_OK;
  arrays[1] = out;
  if ((st = dlb_kernel_site_open(arrays, 2, &site, err)) != DLB_OK) goto fail;
  memset(&c, 0, sizeof c);
  dlb_tensor_of(a, &c.in);
  dlb_tensor_of(out, &c.out);
  c.index_base = base;
  c.queue = site.queue;
  if ((st = site.kernels->nonzero(site.ctx, &c)) != DLB_OK) {
    st = dlb_kernel_failed(a, st, &c.error, op, err);
    goto fail;
  }
  if ((st = dlb_kernel_site_close(&site, arrays, 2, err)) == DLB_OK) return DLB_OK;
fail:
  dlb_array_release(out);
  return st;
}

dlb_status dlb_argwhere(const dlb_array *a, int64_t base, dlb_array *out, dlb_backend *cpu,
                        dlb_error *err) {
  BOUNDED(a, a->numel, "argwhere", argwhere_into(a, base, out, cpu, err));
}
