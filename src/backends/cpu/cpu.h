/* cpu.h -- the host-memory backend as the binding, the tests and its own files
 * see it: its vtable, the host's kernels (which compute on any memory the host
 * can address) and the host's casts. The core reaches the kernels and the casts
 * through the table this backend fills when the library loads (core/host.h,
 * filled by host.c), never through this header. */
#ifndef DLB_BACKENDS_CPU_H
#define DLB_BACKENDS_CPU_H

#include <stddef.h>
#include <string.h>
#include "../../core/backend.h"
#include "../../core/dtype.h"
#include "../../core/iter.h"
#include "../../core/work.h"

/* The host-memory backend: 64-byte aligned blocks, kept for reuse. */
const dlb_backend_ops *dlb_cpu_backend_ops(void);
/* A cpu backend object, with small buffers in one block with their header
 * (dlb_backend.inline_bytes). */
dlb_status dlb_cpu_backend_create(dlb_backend **out, dlb_error *err);

/* The host's kernels: the cpu backend's table, and the one that computes on
 * any other backend's memory the host can address (host_pointer) when that
 * backend brings none of its own. */
const dlb_kernels *dlb_host_kernels(void);
extern const dlb_kernels dlb_cpu_kernels; /* the same table, for the cpu backend's vtable */

/* dst[i...] = cast(src[i...]) (as dlb_cast) for every index of shape, in host
 * memory; strides in bytes, 0 for a repeated source. The walk may be
 * reordered and reversed: dst must not overlap src. Same dtypes whose
 * source runs across the destination's rows are copied in tiles. */
dlb_status dlb_cpu_cast_strided(dlb_dtype dst_type, char *dst, const int64_t *dst_strides,
                                dlb_dtype src_type, const char *src, const int64_t *src_strides,
                                int ndim, const int64_t *shape, dlb_error *err);

/* The host's cast of n elements, strides in bytes: the cast table's
 * (casts.h) loop for the pair, run once. Its semantics are core/host.h's
 * (dlb_host_compute.cast). */
dlb_status dlb_cast(dlb_dtype dst_type, void *dst, ptrdiff_t dst_stride, dlb_dtype src_type,
                    const void *src, ptrdiff_t src_stride, size_t n, dlb_error *err);

/* The kernels' element-wise entry (elementwise.c); ctx unused. */
dlb_status dlb_cpu_elementwise(void *ctx, dlb_elementwise_call *call);
/* The host's 1-D loop of op for inputs of loop dtype type, or NULL: the
 * dtypes an operation is defined for (core/iter.h's dlb_loop). */
dlb_loop dlb_cpu_loop(dlb_op op, dlb_dtype type);

/* The kernels' reduce entry (reduce.c): ctx is the state's cpu backend
 * (temporaries are allocated there) or NULL. */
dlb_status dlb_cpu_reduce(void *ctx, dlb_reduce_call *call);

/* The kernels' matmul entry (matmul.c); ctx as dlb_cpu_reduce's. */
dlb_status dlb_cpu_matmul(void *ctx, dlb_matmul_call *call);
/* Test hook: the largest M, N or K the products hand to CBLAS (whose sizes
 * are C ints; default INT_MAX). Larger products of float types run the
 * plain loops. Returns the previous limit. Not thread-safe: only tests set it. */
int64_t dlb_matmul_set_blas_limit(int64_t limit);

/* The kernels' sorting entries (sort.c): sort (sort, argsort, topk, unique
 * runs) with temporaries on ctx (as dlb_cpu_reduce's) and search. */
dlb_status dlb_cpu_sort(void *ctx, dlb_sort_call *call);
dlb_status dlb_cpu_search(void *ctx, dlb_search_call *call);
/* The indexing entries (select.c): take (gather and scatter), mask, nonzero. */
dlb_status dlb_cpu_take(void *ctx, dlb_take_call *call);
dlb_status dlb_cpu_mask(void *ctx, dlb_mask_call *call);
dlb_status dlb_cpu_nonzero(void *ctx, dlb_nonzero_call *call);
/* The scan and count entries (scan.c): cumsum/cumprod, bincount/histogram. */
dlb_status dlb_cpu_scan(void *ctx, dlb_scan_call *call);
dlb_status dlb_cpu_count(void *ctx, dlb_count_call *call);
/* The grouped updates entry (scatter.c): NumPy's ufunc.at. */
dlb_status dlb_cpu_scatter(void *ctx, dlb_scatter_call *call);

/* A cpu backend of the process for the temporaries of host kernels that run
 * on other backends' host memory (charged to no state). */
dlb_backend *dlb_cpu_scratch_backend(void);

/* The value of type T at p, any alignment: dlb_cpu_load_<T>(p). */
#define DLB_CPU_LOADER(T)                                                                          \
  static inline T dlb_cpu_load_##T(const char *p) {                                                \
    T v;                                                                                           \
    memcpy(&v, p, sizeof v);                                                                       \
    return v;                                                                                      \
  }
DLB_CPU_LOADER(int8_t)
DLB_CPU_LOADER(int16_t)
DLB_CPU_LOADER(int32_t)
DLB_CPU_LOADER(int64_t)
DLB_CPU_LOADER(uint8_t)
DLB_CPU_LOADER(uint16_t)
DLB_CPU_LOADER(uint32_t)
DLB_CPU_LOADER(float)
DLB_CPU_LOADER(double)
#undef DLB_CPU_LOADER

/* An element of an integer (or bool) dtype at p, any alignment, as an
 * int64 (uint64 reinterpreted). */
static inline int64_t dlb_cpu_load_int64(dlb_dtype t, const char *p) {
  switch (t) {
    case DLB_BOOL: return *p != 0;
    case DLB_INT8: return dlb_cpu_load_int8_t(p);
    case DLB_INT16: return dlb_cpu_load_int16_t(p);
    case DLB_INT32: return dlb_cpu_load_int32_t(p);
    case DLB_UINT8: return dlb_cpu_load_uint8_t(p);
    case DLB_UINT16: return dlb_cpu_load_uint16_t(p);
    case DLB_UINT32: return dlb_cpu_load_uint32_t(p);
    default: return dlb_cpu_load_int64_t(p);
  }
}

/* An element of a float dtype at p, any alignment, as a double. */
static inline double dlb_cpu_load_real(dlb_dtype t, const char *p) {
  switch (t) {
    case DLB_FLOAT16: return dlb_float16_to_double(dlb_cpu_load_uint16_t(p));
    case DLB_BFLOAT16: return dlb_bfloat16_to_double(dlb_cpu_load_uint16_t(p));
    case DLB_FLOAT32: return dlb_cpu_load_float(p);
    default: return dlb_cpu_load_double(p);
  }
}

/* An index element of an integer dtype t at p as an int64; uint64 values
 * past INT64_MAX become INT64_MAX (out of range of any extent). */
static inline int64_t dlb_cpu_load_index(dlb_dtype t, const char *p) {
  uint64_t u;
  if (t != DLB_UINT64) return dlb_cpu_load_int64(t, p);
  memcpy(&u, p, 8);
  return u > INT64_MAX ? INT64_MAX : (int64_t)u;
}

/* A user's index i into an extent n as 0-based (counted from base, or back
 * from the end when negative), or -1 when out of range. */
static inline int64_t dlb_cpu_resolve_index(int64_t i, int64_t n, int64_t base) {
  if (i < 0) return i >= -n ? i + n : -1;
  if (i < base) return -1;
  i -= base;
  return i < n ? i : -1;
}

/* DLB_E_INDEX with its message in ke: index i (as given, from base) is
 * outside dim (0-based) of extent n. */
dlb_status dlb_cpu_index_error(int64_t i, int64_t n, int dim, int64_t base, dlb_kernel_error *ke);

#ifdef DLB_HAVE_VQSORT
/* Sorts n 64-bit keys ascending in place without scratch (sort.c): quicksort
 * partitions down to pieces for Highway's vqsort, runs deeper than levels
 * partitions (levels < 0: vqsort's own bound, 2 log2 n + 4) heapsorted;
 * counted as w's work, stopping when w does. */
void dlb_cpu_sort_in_place64(uint64_t *keys, int64_t n, int levels, dlb_work *w);

/* Whether long lanes of key_bits-bit keys (32 or 64) sort by vqsort (1) or
 * by the radix sort (0): measured once a process on the running CPU, at
 * the first call (sort.c). */
int dlb_cpu_sort_uses_vqsort(int key_bits);
#endif

#endif
