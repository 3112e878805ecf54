/* array.c -- array geometry: allocation, sharing, and views. */
#include <string.h>
#include "array.h"
#include "invariant.h"
#include "shape.h"

dlb_status dlb_array_allocate(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype,
                              int ndim, const int64_t *shape, int zeroed, dlb_error *err) {
  int64_t numel;
  size_t nbytes;
  dlb_status st;
  out->buffer = NULL;
  if ((st = dlb_shape_numel(ndim, shape, &numel, err)) != DLB_OK) return st;
  if ((st = dlb_shape_nbytes(numel, dlb_dtype_get(dtype)->itemsize, &nbytes, err)) != DLB_OK)
    return st;
  if ((st = dlb_buffer_allocate(backend, device_id, nbytes, zeroed, &out->buffer, err)) != DLB_OK)
    return st;
  out->dtype = dtype;
  out->ndim = ndim;
  out->readonly = 0;
  out->offset = 0;
  out->numel = numel;
  if (ndim > 0) memcpy(out->shape, shape, (size_t)ndim * sizeof *shape);
  dlb_shape_contiguous_strides(ndim, shape, out->strides);
  return DLB_OK;
}

void dlb_array_share(dlb_array *out, const dlb_array *a) {
  /* This runs for every view and every a[i]: the dims in use are copied,
   * four at least, as copies of a constant size are a few moves where a
   * copy of ndim dims was two libc calls (4-9 ns of a 10-element view). */
  DLB_ASSERT(a->ndim >= 0 && a->ndim <= DLB_MAX_NDIM);
  out->buffer = a->buffer;
  out->dtype = a->dtype;
  out->ndim = a->ndim;
  out->readonly = a->readonly;
  out->offset = a->offset;
  out->numel = a->numel;
  if (a->ndim <= 4) {
    memcpy(out->shape, a->shape, 4 * sizeof a->shape[0]);
    memcpy(out->strides, a->strides, 4 * sizeof a->strides[0]);
  } else {
    memcpy(out->shape, a->shape, (size_t)a->ndim * sizeof a->shape[0]);
    memcpy(out->strides, a->strides, (size_t)a->ndim * sizeof a->strides[0]);
  }
  if (out->buffer) dlb_buffer_retain(out->buffer);
}

void dlb_array_release(dlb_array *a) {
  dlb_buffer *b = a->buffer;
  a->buffer = NULL;
  dlb_buffer_release(b);
}

int dlb_array_is_contiguous(const dlb_array *a) {
  return dlb_shape_is_contiguous(a->ndim, a->shape, a->strides);
}

dlb_status dlb_array_check_bounds(const dlb_array *a, dlb_error *err) {
  int64_t lo, hi, first, last;
  int64_t item = (int64_t)dlb_array_itemsize(a);
  dlb_status st = dlb_shape_reach(a->ndim, a->shape, a->strides, &lo, &hi, err);
  if (st != DLB_OK) return st;
  if (a->numel == 0) return DLB_OK;
  /* Byte range [first, last + itemsize) must lie inside the buffer. */
  if (a->offset > (size_t)INT64_MAX || __builtin_mul_overflow(lo, item, &first) ||
      __builtin_mul_overflow(hi, item, &last) ||
      __builtin_add_overflow(first, (int64_t)a->offset, &first) ||
      __builtin_add_overflow(last, (int64_t)a->offset, &last) ||
      __builtin_add_overflow(last, item, &last) || first < 0 || (uint64_t)last > a->buffer->nbytes)
    return dlb_fail(err, DLB_E_SHAPE, "the view reaches outside its buffer");
  return DLB_OK;
}

/* Moves the element-0 offset by index * stride elements. A size-0 array
 * reaches no memory, so its extents and strides are unbounded: its offset
 * stays put. Otherwise the product is inside the checked reach of the
 * geometry; the arithmetic is checked all the same. */
static dlb_status shift_offset(dlb_array *v, int64_t index, int64_t stride, dlb_error *err) {
  int64_t delta, offset;
  if (v->numel == 0) return DLB_OK;
  if (__builtin_mul_overflow(index, stride, &delta) ||
      __builtin_mul_overflow(delta, (int64_t)dlb_array_itemsize(v), &delta) ||
      __builtin_add_overflow((int64_t)v->offset, delta, &offset) || offset < 0)
    return dlb_fail(err, DLB_E_SHAPE, "the view's offset overflows");
  v->offset = (size_t)offset;
  return DLB_OK;
}

static dlb_status check_dim(const dlb_array *v, int dim, dlb_error *err) {
  if (dim < 0 || dim >= v->ndim)
    return dlb_fail(err, DLB_E_INDEX, "dimension %lld out of range for a %d-D array",
                    dlb_one_based(dim), v->ndim);
  return DLB_OK;
}

dlb_status dlb_view_select(dlb_array *v, int dim, int64_t index, dlb_error *err) {
  dlb_status st = check_dim(v, dim, err);
  if (st != DLB_OK) return st;
  if (index < 0 || index >= v->shape[dim])
    return dlb_fail(err, DLB_E_INDEX, "index %lld out of range for dimension %d of extent %lld",
                    dlb_one_based(index), dim + 1, (long long)v->shape[dim]);
  if ((st = shift_offset(v, index, v->strides[dim], err)) != DLB_OK) return st;
  v->numel = v->shape[dim] ? v->numel / v->shape[dim] : 0;
  memmove(v->shape + dim, v->shape + dim + 1, (size_t)(v->ndim - dim - 1) * sizeof v->shape[0]);
  memmove(v->strides + dim, v->strides + dim + 1,
          (size_t)(v->ndim - dim - 1) * sizeof v->strides[0]);
  v->ndim--;
  return DLB_OK;
}

dlb_status dlb_view_slice(dlb_array *v, int dim, int64_t start, int64_t count, int64_t step,
                          dlb_error *err) {
  int64_t last, stride = 0;
  dlb_status st = check_dim(v, dim, err);
  if (st != DLB_OK) return st;
  if (step == 0) {
    dlb_fail(err, DLB_E_ARGUMENT, "slice step cannot be 0");
    dlb_error_hint(err, "the step is a non-zero integer; a negative one walks backwards");
    return DLB_E_ARGUMENT;
  }
  if (count < 0) return dlb_fail(err, DLB_E_SHAPE, "negative slice length %lld", (long long)count);
  if (count > 0) {
    if (start < 0 || start >= v->shape[dim] || __builtin_mul_overflow(count - 1, step, &last) ||
        __builtin_add_overflow(start, last, &last) || last < 0 || last >= v->shape[dim])
      return dlb_fail(err, DLB_E_INDEX, "slice out of range for dimension %d of extent %lld",
                      dim + 1, (long long)v->shape[dim]);
    /* One element: the step is irrelevant (NumPy's a[1:2:huge]). */
    if (count > 1 && __builtin_mul_overflow(v->strides[dim], step, &stride))
      return dlb_fail(err, DLB_E_SHAPE, "slice stride overflows");
    if ((st = shift_offset(v, start, v->strides[dim], err)) != DLB_OK) return st;
    if (count > 1) v->strides[dim] = stride;
  }
  v->numel = v->shape[dim] ? v->numel / v->shape[dim] * count : 0;
  v->shape[dim] = count;
  if (count == 0) {
    int64_t n;
    dlb_shape_numel(v->ndim, v->shape, &n, NULL);
    v->numel = n;
  }
  return DLB_OK;
}

dlb_status dlb_view_permute(dlb_array *v, const int *perm, dlb_error *err) {
  int64_t shape[DLB_MAX_NDIM], strides[DLB_MAX_NDIM];
  int seen[DLB_MAX_NDIM] = {0};
  for (int d = 0; d < v->ndim; d++) {
    if (perm[d] < 0 || perm[d] >= v->ndim || seen[perm[d]]++)
      return dlb_fail(err, DLB_E_INDEX, "not a permutation of the %d dimensions", v->ndim);
    shape[d] = v->shape[perm[d]];
    strides[d] = v->strides[perm[d]];
  }
  memcpy(v->shape, shape, (size_t)v->ndim * sizeof shape[0]);
  memcpy(v->strides, strides, (size_t)v->ndim * sizeof strides[0]);
  return DLB_OK;
}

dlb_status dlb_view_expand(dlb_array *v, int ndim, const int64_t *shape, dlb_error *err) {
  int64_t new_shape[DLB_MAX_NDIM] = {0}, new_strides[DLB_MAX_NDIM] = {0}, numel;
  int lead = ndim - v->ndim;
  dlb_status st;
  if (ndim > DLB_MAX_NDIM || lead < 0)
    return dlb_fail(err, DLB_E_SHAPE, "cannot expand a %d-D array to %d dimensions", v->ndim, ndim);
  for (int d = 0; d < ndim; d++) {
    int src = d - lead;
    int64_t want = shape[d];
    if (src < 0) {
      if (want < 0) return dlb_fail(err, DLB_E_SHAPE, "-1 is only allowed for existing dimensions");
      new_shape[d] = want;
      new_strides[d] = 0;
    } else if (want == -1 || want == v->shape[src]) {
      new_shape[d] = v->shape[src];
      new_strides[d] = v->strides[src];
    } else if (v->shape[src] == 1 && want >= 0) {
      new_shape[d] = want;
      new_strides[d] = 0;
    } else {
      return dlb_fail(err, DLB_E_SHAPE,
                      "cannot expand dimension %d of extent %lld to %lld (only extent 1 expands)",
                      src + 1, (long long)v->shape[src], (long long)want);
    }
  }
  if ((st = dlb_shape_numel(ndim, new_shape, &numel, err)) != DLB_OK) return st;
  v->ndim = ndim;
  v->numel = numel;
  if (ndim > 0) {
    memcpy(v->shape, new_shape, (size_t)ndim * sizeof new_shape[0]);
    memcpy(v->strides, new_strides, (size_t)ndim * sizeof new_strides[0]);
  }
  return DLB_OK;
}

dlb_status dlb_view_squeeze(dlb_array *v, int dim, dlb_error *err) {
  int out = 0;
  if (dim >= 0) {
    dlb_status st = check_dim(v, dim, err);
    if (st != DLB_OK) return st;
    if (v->shape[dim] != 1)
      return dlb_fail(err, DLB_E_SHAPE, "cannot squeeze dimension %lld of extent %lld",
                      dlb_one_based(dim), (long long)v->shape[dim]);
  }
  for (int d = 0; d < v->ndim; d++) {
    if (v->shape[d] == 1 && (dim < 0 || d == dim)) continue;
    v->shape[out] = v->shape[d];
    v->strides[out] = v->strides[d];
    out++;
  }
  v->ndim = out;
  return DLB_OK;
}

dlb_status dlb_view_unsqueeze(dlb_array *v, int dim, dlb_error *err) {
  if (v->ndim >= DLB_MAX_NDIM)
    return dlb_fail(err, DLB_E_SHAPE, "an array has at most %d dimensions", DLB_MAX_NDIM);
  if (dim < 0 || dim > v->ndim)
    return dlb_fail(err, DLB_E_INDEX, "position %lld out of range for unsqueeze of a %d-D array",
                    dlb_one_based(dim), v->ndim);
  memmove(v->shape + dim + 1, v->shape + dim, (size_t)(v->ndim - dim) * sizeof v->shape[0]);
  memmove(v->strides + dim + 1, v->strides + dim, (size_t)(v->ndim - dim) * sizeof v->strides[0]);
  v->shape[dim] = 1;
  /* Any stride is right for extent 1; this one keeps contiguous arrays contiguous. */
  if (dim == v->ndim ||
      __builtin_mul_overflow(v->strides[dim + 1], v->shape[dim + 1], &v->strides[dim]))
    v->strides[dim] = 1;
  v->ndim++;
  return DLB_OK;
}

dlb_status dlb_view_reshape(dlb_array *v, int ndim, const int64_t *shape, dlb_error *err) {
  int64_t numel, strides[DLB_MAX_NDIM];
  dlb_status st = dlb_shape_numel(ndim, shape, &numel, err);
  if (st != DLB_OK) return st;
  if (numel != v->numel) {
    dlb_fail(err, DLB_E_SHAPE, "cannot reshape %lld elements into %lld", (long long)v->numel,
             (long long)numel);
    dlb_error_hint(err, "the new shape must hold as many elements; one -1 entry is inferred");
    return DLB_E_SHAPE;
  }
  if (!dlb_shape_reshape_strides(v->ndim, v->shape, v->strides, ndim, shape, strides)) {
    dlb_fail(err, DLB_E_COPY_REQUIRED, "this layout cannot be viewed with the new shape");
    dlb_error_hint(err, "a:view never copies: use a:reshape, which copies when it must");
    return DLB_E_COPY_REQUIRED;
  }
  v->ndim = ndim;
  if (ndim > 0) {
    memcpy(v->shape, shape, (size_t)ndim * sizeof shape[0]);
    memcpy(v->strides, strides, (size_t)ndim * sizeof strides[0]);
  }
  return DLB_OK;
}
