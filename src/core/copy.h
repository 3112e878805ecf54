/* copy.h -- strided copies, casts and fills between arrays. */
#ifndef DLB_CORE_COPY_H
#define DLB_CORE_COPY_H

#include "array.h"

/* Copies src into dst (same shape), casting as dlb_cast does. Works when
 * both share a buffer and overlap (copies through a temporary). */
dlb_status dlb_array_copy_into(dlb_array *dst, const dlb_array *src, dlb_error *err);

/* Sets every element of dst to v (strict conversion, as dlb_scalar_store). */
dlb_status dlb_array_fill(dlb_array *dst, const dlb_scalar *v, dlb_error *err);

/* A new contiguous array on src's device with dtype (a cast copy). */
dlb_status dlb_array_clone(dlb_array *out, const dlb_array *src, dlb_dtype dtype, dlb_error *err);

/* a as dtype into *out: a new reference to a when it has it, else a cast
 * copy (dlb_array_clone). */
dlb_status dlb_array_as_dtype(const dlb_array *a, dlb_dtype dtype, dlb_array *out, dlb_error *err);

/* A new contiguous copy of src on (backend, device_id), same dtype. */
dlb_status dlb_array_clone_to(dlb_array *out, const dlb_array *src, dlb_backend *backend,
                              int device_id, dlb_error *err);

/* Writes a's elements in row-major order as contiguous elements of dtype
 * into host memory dst (a cast as dlb_cast does). */
dlb_status dlb_array_read_into(const dlb_array *a, void *dst, dlb_dtype dtype, dlb_error *err);
/* Reads a's elements in row-major order from contiguous host memory src of
 * dtype (a cast as dlb_cast does). */
dlb_status dlb_array_write_from(dlb_array *a, const void *src, dlb_dtype dtype, dlb_error *err);

/* Loads element at index (0-based, ndim entries, in range) into *out. */
dlb_status dlb_array_get(const dlb_array *a, const int64_t *index, dlb_scalar *out, dlb_error *err);
/* Stores v at index (strict conversion). */
dlb_status dlb_array_set(dlb_array *a, const int64_t *index, const dlb_scalar *v, dlb_error *err);

#endif
