/* iter.h -- walking up to DLB_ITER_MAX operands of one shape together: the
 * iterator of the kernel layer (copies, casts, element-wise compute,
 * reductions). No Lua here.
 *
 * A kernel is a 1-D loop over n elements: data[k] is operand k's first
 * element and steps[k] its stride in bytes (0: one value broadcast). The
 * iterator calls it once per run of the inner dim, after
 *   - dropping extent-1 dims (their strides mean nothing),
 *   - ordering the dims by operand 0's strides, largest outermost, so the
 *     inner loop walks operand 0 (the one written) in memory order,
 *   - flipping dims that operand 0 walks backwards (every operand's
 *     stride and start move with it),
 *   - merging neighbouring dims that are contiguous in every operand,
 * so that contiguous operands of any shape are one call of the kernel
 * (dlb_iter_run_any also walks short rows in tiles, across them).
 * Reordering and flipping change the order in which elements are visited:
 * callers must not let operand 0 overlap a read operand (copy.c copies
 * through a temporary when they do).
 */
#ifndef DLB_CORE_ITER_H
#define DLB_CORE_ITER_H

#include <stdint.h>
#include "../dlbridge.h"

#define DLB_ITER_MAX 4
#define DLB_ITER_STOPPED (-1000) /* the walk's return when the host's interrupt stopped it */

/* A 1-D kernel; a nonzero return stops the walk and is returned by it.
 * A walk inside a bounded call (work.h) also counts what it visits and
 * returns DLB_ITER_STOPPED when the host's interrupt stops it (between two
 * kernel calls: a run is cut into pieces of DLB_WORK_CHECK_EVERY). */
typedef int (*dlb_loop)(char **data, const int64_t *steps, int64_t n, void *aux);

typedef struct dlb_iter {
  int nop, ndim; /* ndim 0: one element */
  int64_t shape[DLB_MAX_NDIM];
  int64_t strides[DLB_ITER_MAX][DLB_MAX_NDIM]; /* bytes */
  char *data[DLB_ITER_MAX];                    /* element 0...0 of each operand */
} dlb_iter;

/* Sets up nop operands (1..DLB_ITER_MAX) over shape: data[k] and
 * strides[k] (bytes, ndim entries, 0 where operand k is broadcast). A
 * shape with a zero extent gives an iterator that visits nothing. */
void dlb_iter_init(dlb_iter *it, int nop, int ndim, const int64_t *shape, char *const *data,
                   const int64_t *const *strides);

/* As dlb_iter_init, but the dims are ordered and flipped by operand
 * order's strides instead of operand 0's (a reduction walks its input in
 * memory order, whatever the layout of the result it writes). */
void dlb_iter_init_order(dlb_iter *it, int nop, int ndim, const int64_t *shape, char *const *data,
                         const int64_t *const *strides, int order);

/* Whether the iterator visits no element. */
int dlb_iter_empty(const dlb_iter *it);

/* Calls body(data, aux) for every index of the dims before the last `inner`
 * ones (0 <= inner <= ndim), with each operand's pointer at that index;
 * stops at the first nonzero return and returns it. A body inside a bounded
 * call counts its own work (dlb_work_tick) and returns DLB_ITER_STOPPED. */
int dlb_iter_each(const dlb_iter *it, int inner, int (*body)(char **data, void *aux), void *aux);

/* Runs loop over the inner dim for every index of the outer ones (one call
 * with n = 1 for a 0-d iterator); stops at the first nonzero return. The
 * order of the visits is fixed (reductions depend on it for their bits). */
int dlb_iter_run(const dlb_iter *it, dlb_loop loop, void *aux);

/* As dlb_iter_run, visiting every element once but in no set order, for
 * walks where that does not matter (element-wise operations, copies and
 * casts: operand 0 is never partly an input). An inner dim of fewer than 16
 * elements beside a dim at least twice as long is walked across, in tiles:
 * calls run along the longest dim, a block of it at a time (up to 1024
 * elements, 16 KiB of each operand), once for each index of the inner dim
 * ((N, 3) + (N, 1): 3 calls per 1024 rows, not 1024 calls of 3); a call's
 * steps are then along that dim. The interrupt is looked at between tiles
 * (fewer elements than DLB_WORK_CHECK_EVERY). */
int dlb_iter_run_any(const dlb_iter *it, dlb_loop loop, void *aux);

#endif
