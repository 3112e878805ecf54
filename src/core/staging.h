/* staging.h -- data between host memory and any backend's memory, through
 * the backend's copy hooks: one strided copy (copy_strided) where the
 * backend has it, else the staging fallback, which moves large contiguous
 * chunks with copy_to_host/copy_from_host and gathers or scatters on the
 * host (never one backend call per element).
 *
 * Each function takes a box: an array view whose elements it moves in
 * row-major order to or from contiguous host memory, at most
 * DLB_STAGING_BYTES worth at a time being the caller's business
 * (dlb_box_each cuts an array into such boxes). Work the core queued on the
 * memory is waited for first; the copies are complete when they return. */
#ifndef DLB_CORE_STAGING_H
#define DLB_CORE_STAGING_H

#include "array.h"

/* The most host memory one staged step uses per side. */
#define DLB_STAGING_BYTES ((size_t)4 << 20)

/* box's elements, row-major, into contiguous host memory. */
dlb_status dlb_stage_read(const dlb_array *box, void *host, dlb_error *err);
/* Contiguous host memory into box's elements, row-major. */
dlb_status dlb_stage_write(dlb_array *box, const void *host, dlb_error *err);

/* A box of an array: its view, the row-major index of its first element,
 * and that element's index (ndim entries). */
typedef struct dlb_box {
  dlb_array view; /* borrowed: the array's buffer is not retained */
  int64_t first;
  int64_t origin[DLB_MAX_NDIM];
} dlb_box;

/* Calls body(box, aux) over boxes of a that together hold each of its
 * elements once, in row-major order: the last dims whole and the one
 * before them in ranges, each box at most max_elements (at least one
 * element). Stops at the first failure and returns it. */
dlb_status dlb_box_each(const dlb_array *a, int64_t max_elements,
                        dlb_status (*body)(const dlb_box *box, void *aux), void *aux);

/* The view of b (b's shape is box's array's) over the elements of box. */
void dlb_box_region(const dlb_array *b, const dlb_box *box, dlb_array *out);

/* Element 0...0 of a into host memory (one element of a's dtype). */
dlb_status dlb_stage_read_element(const dlb_array *a, void *host, dlb_error *err);

#endif
