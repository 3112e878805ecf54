/* casts.h -- the cpu backend's cast loops: one per (destination dtype,
 * source dtype) and layout, picked from a table once per call and then run
 * (NumPy's PyArray_GetStridedNumericCastFn). dlb_cast (cpu.h) is
 * "pick, then run" for one run; a walk that casts run after run holds a
 * dlb_cast_plan, which picks on its first run.
 *
 * Every loop casts as dlb_cast states (NumPy's astype, casting="unsafe",
 * checked where NumPy is undefined), element for element what the
 * one-element cast dlb_scalar_cast gives, statuses and messages included.
 * A loop reads and writes its elements with memcpy, so it takes operands at
 * any alignment.
 */
#ifndef DLB_BACKENDS_CPU_CASTS_H
#define DLB_BACKENDS_CPU_CASTS_H

#include <stddef.h>
#include <stdint.h>
#include "../../core/dtype.h"
#include "cpu.h"

/* Casts n >= 1 elements at src (stride src_stride bytes) into dst (stride
 * dst_stride): DLB_OK, or DLB_E_VALUE naming the first element the
 * destination dtype cannot hold (what the run's elements then hold is
 * unspecified). dst must not overlap src (a copy between contiguous runs of
 * one dtype may: it is a memmove). err may be NULL. */
typedef dlb_status (*dlb_cast_loop)(char *dst, ptrdiff_t dst_stride, const char *src,
                                    ptrdiff_t src_stride, size_t n, dlb_error *err);

/* The loop for src_type elements at src_stride into dst_type elements at
 * dst_stride, valid for those strides only (any n, any addresses); NULL for
 * an invalid dtype. The strides pick the layout: both runs contiguous, one
 * source element repeated into a contiguous run (a fill), every other
 * source element (a[::2]), or any other. aligned (nonzero: both runs are
 * aligned to their dtypes, up to 8 bytes) is part of the key as in NumPy;
 * the cpu loops take any alignment, so here it picks the same loops. */
dlb_cast_loop dlb_cast_loop_for(dlb_dtype dst_type, ptrdiff_t dst_stride, dlb_dtype src_type,
                                ptrdiff_t src_stride, int aligned);

/* Whether runs of dst_type at dst and src_type at src, with those strides,
 * are aligned as dlb_cast_loop_for means it. */
static inline int dlb_cast_aligned(dlb_dtype dst_type, const void *dst, ptrdiff_t dst_stride,
                                   dlb_dtype src_type, const void *src, ptrdiff_t src_stride) {
  const size_t ds = dlb_dtype_get(dst_type)->itemsize, ss = dlb_dtype_get(src_type)->itemsize;
  const uintptr_t dmask = (ds > 8 ? 8 : ds) - 1, smask = (ss > 8 ? 8 : ss) - 1;
  return ((((uintptr_t)dst | (uintptr_t)dst_stride) & dmask) |
          (((uintptr_t)src | (uintptr_t)src_stride) & smask)) == 0;
}

/* A pair's loop for a walk: picked on the first run and again only when a
 * run's strides or alignment differ from the last pick's (the runs of an
 * iterator share their strides, so a walk picks once). */
typedef struct dlb_cast_plan {
  dlb_dtype dst_type, src_type;
  ptrdiff_t dst_stride, src_stride; /* what loop was picked for */
  int aligned;
  dlb_cast_loop loop; /* NULL until the first run */
} dlb_cast_plan;

static inline dlb_cast_plan dlb_cast_plan_for(dlb_dtype dst_type, dlb_dtype src_type) {
  dlb_cast_plan p = {dst_type, src_type, 0, 0, 0, NULL};
  return p;
}

/* dlb_cast of one run through the plan's loop; DLB_E_DTYPE for an invalid
 * dtype. */
static inline dlb_status dlb_cast_plan_run(dlb_cast_plan *p, void *dst, ptrdiff_t dst_stride,
                                           const void *src, ptrdiff_t src_stride, size_t n,
                                           dlb_error *err) {
  if (n == 0) return DLB_OK;
  if ((unsigned)p->dst_type >= DLB_DTYPE_COUNT || (unsigned)p->src_type >= DLB_DTYPE_COUNT)
    return dlb_fail(err, DLB_E_DTYPE, "invalid dtype in cast");
  const int aligned = dlb_cast_aligned(p->dst_type, dst, dst_stride, p->src_type, src, src_stride);
  if (!p->loop || dst_stride != p->dst_stride || src_stride != p->src_stride ||
      aligned != p->aligned) {
    p->loop = dlb_cast_loop_for(p->dst_type, dst_stride, p->src_type, src_stride, aligned);
    p->dst_stride = dst_stride;
    p->src_stride = src_stride;
    p->aligned = aligned;
  }
  return p->loop((char *)dst, dst_stride, (const char *)src, src_stride, n, err);
}

#endif
