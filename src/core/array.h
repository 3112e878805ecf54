/* array.h -- an n-dimensional view of a buffer: dtype, shape, strides, offset. */
#ifndef DLB_CORE_ARRAY_H
#define DLB_CORE_ARRAY_H

#include "buffer.h"
#include "dtype.h"

/*
 * Element (i0, ..., in-1) lives at byte
 *   offset + (i0*strides[0] + ... + in-1*strides[n-1]) * itemsize
 * of the buffer. Strides are in elements and may be 0 (expanded dims) or
 * negative (reversed slices); every reachable element lies inside the buffer.
 * A released array has buffer == NULL.
 */
typedef struct dlb_array {
  dlb_buffer *buffer;
  dlb_dtype dtype;
  int ndim;
  int readonly;
  size_t offset; /* bytes from the buffer start to element 0...0 */
  int64_t numel; /* product of shape */
  int64_t shape[DLB_MAX_NDIM];
  int64_t strides[DLB_MAX_NDIM];
} dlb_array;

/* A new contiguous array on (backend, device_id); contents undefined unless
 * zeroed. On failure *out is left released. */
dlb_status dlb_array_allocate(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype,
                              int ndim, const int64_t *shape, int zeroed, dlb_error *err);

/* Makes out a second view of a (same geometry, shared buffer). */
void dlb_array_share(dlb_array *out, const dlb_array *a);

/* Drops the array's hold on its buffer. Idempotent. */
void dlb_array_release(dlb_array *a);

static inline size_t dlb_array_itemsize(const dlb_array *a) {
  return dlb_dtype_get(a->dtype)->itemsize;
}

/* Host pointer of element 0...0, or NULL when the memory is not host-addressable. */
static inline char *dlb_array_host_data(const dlb_array *a) {
  return a->buffer && a->buffer->host ? (char *)a->buffer->host + a->offset : NULL;
}

int dlb_array_is_contiguous(const dlb_array *a);

/* Checks that a geometry (after a view operation) stays inside the buffer. */
dlb_status dlb_array_check_bounds(const dlb_array *a, dlb_error *err);

/*
 * View operations rewrite the geometry of v in place (v is usually a fresh
 * share of the source). Dimensions and indices are 0-based and validated:
 * DLB_E_INDEX for an index out of range, DLB_E_SHAPE for a bad shape.
 */
dlb_status dlb_view_select(dlb_array *v, int dim, int64_t index, dlb_error *err);
/* Keeps count elements of dim: start, start+step, ... (step != 0, may be < 0). */
dlb_status dlb_view_slice(dlb_array *v, int dim, int64_t start, int64_t count, int64_t step,
                          dlb_error *err);
/* perm is a permutation of 0..ndim-1. */
dlb_status dlb_view_permute(dlb_array *v, const int *perm, dlb_error *err);
/* Broadcast to shape (ndim >= v->ndim); -1 keeps a dim; new dims get stride 0. */
dlb_status dlb_view_expand(dlb_array *v, int ndim, const int64_t *shape, dlb_error *err);
/* Removes dim (which must have extent 1), or every extent-1 dim when dim < 0. */
dlb_status dlb_view_squeeze(dlb_array *v, int dim, dlb_error *err);
/* Inserts an extent-1 dim before position dim (0..ndim). */
dlb_status dlb_view_unsqueeze(dlb_array *v, int dim, dlb_error *err);
/* New shape, same element count, no copy: DLB_E_COPY_REQUIRED when the
 * strides make that impossible; DLB_E_SHAPE when the counts differ. */
dlb_status dlb_view_reshape(dlb_array *v, int ndim, const int64_t *shape, dlb_error *err);

#endif
