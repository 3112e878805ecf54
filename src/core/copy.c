/* copy.c -- strided copies, casts and fills between arrays in host memory. */
#include <stdlib.h>
#include <string.h>
#include "copy.h"
#include "shape.h"

/* Geometry of one operand of an element-wise loop, strides in bytes. */
typedef struct loop_operand {
  char *data;
  int64_t strides[DLB_MAX_NDIM];
} loop_operand;

/* Drops extent-1 dims and merges neighbours that are contiguous in both
 * operands, so a contiguous copy becomes a single inner loop. */
static int coalesce(int ndim, int64_t *shape, loop_operand *a, loop_operand *b) {
  int out = 0;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] == 1) continue;
    if (out > 0 && a->strides[out - 1] == shape[d] * a->strides[d] &&
        (!b || b->strides[out - 1] == shape[d] * b->strides[d])) {
      shape[out - 1] *= shape[d];
      a->strides[out - 1] = a->strides[d];
      if (b) b->strides[out - 1] = b->strides[d];
      continue;
    }
    shape[out] = shape[d];
    a->strides[out] = a->strides[d];
    if (b) b->strides[out] = b->strides[d];
    out++;
  }
  return out;
}

/* Sets up an operand from an array: byte strides and host data pointer. */
static void operand_of(loop_operand *op, const dlb_array *a) {
  int64_t item = (int64_t)dlb_array_itemsize(a);
  op->data = dlb_array_host_data(a);
  for (int d = 0; d < a->ndim; d++) op->strides[d] = a->strides[d] * item;
}

/* dst[i] = cast(src[i]) for every index of shape, innermost loop via dlb_cast. */
static dlb_status cast_strided(dlb_dtype dst_type, loop_operand *dst, dlb_dtype src_type,
                               loop_operand *src, int ndim, const int64_t *shape_in,
                               dlb_error *err) {
  int64_t shape[DLB_MAX_NDIM], index[DLB_MAX_NDIM] = {0};
  memcpy(shape, shape_in, (size_t)ndim * sizeof shape[0]);
  ndim = coalesce(ndim, shape, dst, src);
  if (ndim == 0)
    return dlb_cast(dst_type, dst->data, 0, src_type, src->data, 0, 1, err);
  int inner = ndim - 1;
  for (;;) {
    char *d = dst->data, *s = src->data;
    for (int k = 0; k < inner; k++) {
      d += index[k] * dst->strides[k];
      s += index[k] * src->strides[k];
    }
    dlb_status st = dlb_cast(dst_type, d, (ptrdiff_t)dst->strides[inner], src_type, s,
                             (ptrdiff_t)src->strides[inner], (size_t)shape[inner], err);
    if (st != DLB_OK) return st;
    int k = inner - 1;
    while (k >= 0 && ++index[k] == shape[k]) index[k--] = 0;
    if (k < 0) return DLB_OK;
  }
}

static dlb_status require_host(const dlb_array *a, dlb_error *err) {
  if (dlb_array_host_data(a) || a->numel == 0) return DLB_OK;
  dlb_fail(err, DLB_E_UNSUPPORTED, "backend '%s' has no host-addressable memory for this operation",
           a->buffer->backend ? a->buffer->backend->name : "?");
  return DLB_E_UNSUPPORTED;
}

static dlb_status require_writable(const dlb_array *a, dlb_error *err) {
  if (!a->readonly && !a->buffer->readonly) return DLB_OK;
  return dlb_fail(err, DLB_E_READ_ONLY, "the array is read-only");
}

/* Whether the byte ranges the two arrays reach intersect. */
static int overlaps(const dlb_array *a, const dlb_array *b) {
  int64_t alo, ahi, blo, bhi;
  int64_t ia = (int64_t)dlb_array_itemsize(a), ib = (int64_t)dlb_array_itemsize(b);
  if (a->buffer != b->buffer || a->numel == 0 || b->numel == 0) return 0;
  if (dlb_shape_reach(a->ndim, a->shape, a->strides, &alo, &ahi, NULL) != DLB_OK ||
      dlb_shape_reach(b->ndim, b->shape, b->strides, &blo, &bhi, NULL) != DLB_OK)
    return 1;
  alo = (int64_t)a->offset + alo * ia;
  ahi = (int64_t)a->offset + (ahi + 1) * ia;
  blo = (int64_t)b->offset + blo * ib;
  bhi = (int64_t)b->offset + (bhi + 1) * ib;
  return alo < bhi && blo < ahi;
}

dlb_status dlb_array_copy_into(dlb_array *dst, const dlb_array *src, dlb_error *err) {
  loop_operand d, s;
  dlb_status st;
  if (dst->ndim != src->ndim || memcmp(dst->shape, src->shape, (size_t)dst->ndim * 8) != 0)
    return dlb_fail(err, DLB_E_SHAPE, "copy between different shapes");
  if ((st = require_writable(dst, err)) != DLB_OK) return st;
  if (dst->numel == 0) return DLB_OK;
  if ((st = require_host(dst, err)) != DLB_OK || (st = require_host(src, err)) != DLB_OK)
    return st;
  if (overlaps(dst, src)) {
    dlb_array tmp;
    if ((st = dlb_array_clone(&tmp, src, src->dtype, err)) != DLB_OK) return st;
    st = dlb_array_copy_into(dst, &tmp, err);
    dlb_array_release(&tmp);
    return st;
  }
  operand_of(&d, dst);
  operand_of(&s, src);
  return cast_strided(dst->dtype, &d, src->dtype, &s, dst->ndim, dst->shape, err);
}

dlb_status dlb_array_fill(dlb_array *dst, const dlb_scalar *v, dlb_error *err) {
  unsigned char element[16];
  loop_operand d, s;
  dlb_status st;
  if ((st = dlb_scalar_store(dst->dtype, element, v, err)) != DLB_OK) return st;
  if ((st = require_writable(dst, err)) != DLB_OK) return st;
  if (dst->numel == 0) return DLB_OK;
  if ((st = require_host(dst, err)) != DLB_OK) return st;
  operand_of(&d, dst);
  /* The source is one element repeated: all strides 0. */
  s.data = (char *)element;
  memset(s.strides, 0, sizeof s.strides);
  return cast_strided(dst->dtype, &d, dst->dtype, &s, dst->ndim, dst->shape, err);
}

/* Allocates out on (backend, device_id) and copies src into it. */
static dlb_status clone_onto(dlb_array *out, const dlb_array *src, dlb_backend *backend,
                             int device_id, dlb_dtype dtype, dlb_error *err) {
  dlb_status st = dlb_array_allocate(out, backend, device_id, dtype, src->ndim, src->shape, 0, err);
  if (st != DLB_OK) return st;
  if ((st = dlb_array_copy_into(out, src, err)) != DLB_OK) dlb_array_release(out);
  return st;
}

dlb_status dlb_array_clone(dlb_array *out, const dlb_array *src, dlb_dtype dtype, dlb_error *err) {
  return clone_onto(out, src, src->buffer->backend, src->buffer->device_id, dtype, err);
}

dlb_status dlb_array_clone_to(dlb_array *out, const dlb_array *src, dlb_backend *backend,
                              int device_id, dlb_error *err) {
  return clone_onto(out, src, backend, device_id, src->dtype, err);
}

/* Host address of the element at a 0-based index, or NULL when out of range. */
static char *element_at(const dlb_array *a, const int64_t *index) {
  char *p = dlb_array_host_data(a);
  int64_t item = (int64_t)dlb_array_itemsize(a), off = 0;
  for (int d = 0; d < a->ndim; d++) {
    if (index[d] < 0 || index[d] >= a->shape[d]) return NULL;
    off += index[d] * a->strides[d];
  }
  return p + off * item;
}

static dlb_status index_error(const dlb_array *a, const int64_t *index, dlb_error *err) {
  for (int d = 0; d < a->ndim; d++)
    if (index[d] < 0 || index[d] >= a->shape[d])
      return dlb_fail(err, DLB_E_INDEX, "index %lld out of range for dimension %d of extent %lld",
                      dlb_one_based(index[d]), d + 1, (long long)a->shape[d]);
  return require_host(a, err);
}

dlb_status dlb_array_get(const dlb_array *a, const int64_t *index, dlb_scalar *out, dlb_error *err) {
  char *p = dlb_array_host_data(a) ? element_at(a, index) : NULL;
  if (!p) return index_error(a, index, err);
  dlb_scalar_load(a->dtype, p, out);
  return DLB_OK;
}

dlb_status dlb_array_set(dlb_array *a, const int64_t *index, const dlb_scalar *v, dlb_error *err) {
  dlb_status st = require_writable(a, err);
  char *p;
  if (st != DLB_OK) return st;
  p = dlb_array_host_data(a) ? element_at(a, index) : NULL;
  if (!p) return index_error(a, index, err);
  return dlb_scalar_store(a->dtype, p, v, err);
}

/* An operand over contiguous host memory with the shape of a. */
static void contiguous_operand(loop_operand *op, const dlb_array *a, void *data, dlb_dtype dtype) {
  int64_t strides[DLB_MAX_NDIM];
  int64_t item = (int64_t)dlb_dtype_get(dtype)->itemsize;
  dlb_shape_contiguous_strides(a->ndim, a->shape, strides);
  op->data = data;
  for (int d = 0; d < a->ndim; d++) op->strides[d] = strides[d] * item;
}

dlb_status dlb_array_read_into(const dlb_array *a, void *dst, dlb_dtype dtype, dlb_error *err) {
  loop_operand d, s;
  dlb_status st;
  if (a->numel == 0) return DLB_OK;
  if ((st = require_host(a, err)) != DLB_OK) return st;
  contiguous_operand(&d, a, dst, dtype);
  operand_of(&s, a);
  return cast_strided(dtype, &d, a->dtype, &s, a->ndim, a->shape, err);
}

dlb_status dlb_array_write_from(dlb_array *a, const void *src, dlb_dtype dtype, dlb_error *err) {
  loop_operand d, s;
  dlb_status st;
  if ((st = require_writable(a, err)) != DLB_OK) return st;
  if (a->numel == 0) return DLB_OK;
  if ((st = require_host(a, err)) != DLB_OK) return st;
  operand_of(&d, a);
  contiguous_operand(&s, a, (void *)src, dtype);
  return cast_strided(a->dtype, &d, dtype, &s, a->ndim, a->shape, err);
}
