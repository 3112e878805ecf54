/* staging.h -- element I/O through the backend vtable, for memory the host
 * cannot address: every array operation on such a backend goes through here. */
#ifndef DLB_CORE_STAGING_H
#define DLB_CORE_STAGING_H

#include "array.h"

/* The most host memory one staged operation uses per buffer: a large array
 * moves in chunks of this size, never as one whole-array temporary. */
#define DLB_STAGING_BYTES ((size_t)1 << 20)

/* Reads elements [first, first + count) of a (row-major order) into host
 * memory dst, contiguous, in a's dtype. Host-addressable memory is copied
 * directly; otherwise copy_to_host runs once per contiguous run (once per
 * element where the innermost stride is not 1). */
dlb_status dlb_span_read(const dlb_array *a, int64_t first, int64_t count, void *dst,
                         dlb_error *err);

/* Writes count contiguous elements of a's dtype from host memory src into
 * elements [first, first + count) of a (row-major order). */
dlb_status dlb_span_write(dlb_array *a, int64_t first, int64_t count, const void *src,
                          dlb_error *err);

/* Reads the element elem_offset elements (by strides) from element 0...0. */
dlb_status dlb_element_read(const dlb_array *a, int64_t elem_offset, void *dst, dlb_error *err);

#endif
