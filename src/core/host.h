/* host.h -- the host's compute as the core uses it: the kernel table that
 * computes on memory the host can address, and the host's casts. The core
 * names no backend: the host's backend (backends/cpu) fills this table once,
 * when the library loads (before main or dlopen returns), and the core reads
 * it without a lock from then on. The core's objects never link without the
 * cpu backend's (dlbridge_core builds both), so the table is always filled. */
#ifndef DLB_CORE_HOST_H
#define DLB_CORE_HOST_H

#include <stddef.h>
#include "../dlbridge.h"
#include "dtype.h"

typedef struct dlb_host_compute {
  /* The host's kernels: those of memory the host can address whose backend
   * brings none of its own (dlb_kernels_for). */
  const dlb_kernels *kernels;
  /* dst[i...] = cast(src[i...]) for every index of shape, in host memory,
   * with dlb_cast's semantics; strides in bytes, 0 for a repeated source; dst
   * must not overlap src. Same dtypes copy. (dlb_cpu_cast_strided.) */
  dlb_status (*cast_strided)(dlb_dtype dst_type, char *dst, const int64_t *dst_strides,
                             dlb_dtype src_type, const char *src, const int64_t *src_strides,
                             int ndim, const int64_t *shape, dlb_error *err);
  /* Casts n elements (NumPy's astype, casting="unsafe", where that is
   * defined): integers wrap modulo 2^bits; int -> float and float -> narrower
   * float round to nearest even (overflow gives inf); float -> int truncates
   * toward zero; complex -> real keeps the real part; x -> bool is x != 0;
   * bool -> x is 0/1. Where NumPy's result is undefined (NaN, inf or an
   * out-of-range float to an integer dtype) it stops with DLB_E_VALUE naming
   * the first such value. Strides in bytes. (The cpu backend's dlb_cast.) */
  dlb_status (*cast)(dlb_dtype dst_type, void *dst, ptrdiff_t dst_stride, dlb_dtype src_type,
                     const void *src, ptrdiff_t src_stride, size_t n, dlb_error *err);
} dlb_host_compute;

/* The host's compute; read-only once the library has loaded. */
extern dlb_host_compute dlb_host;

/* Fills dlb_host: called once, by the host's backend, when the library loads. */
void dlb_host_provide(const dlb_host_compute *host);

#endif
