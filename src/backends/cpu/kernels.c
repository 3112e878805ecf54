/* kernels.c -- the host's kernel table (dlb_kernels): what the cpu backend,
 * and every backend whose memory the host can address without kernels of
 * its own, computes with. Each entry turns the core's tensors back into
 * host pointers and byte strides and runs the host's loops. */
#include <string.h>
#include "cpu.h"

/* The dtype of a tensor the core made (always one of dlbridge's). */
static dlb_dtype dtype_of(const dlb_tensor *t) { return dlb_dtype_of_dl(t->dtype); }

/* Byte strides of t into out; 0 along extent-1 dims (their strides reach
 * nothing and may be anything). */
static void byte_strides(const dlb_tensor *t, int64_t *out) {
  int64_t item = (int64_t)dlb_dtype_get(dtype_of(t))->itemsize;
  for (int d = 0; d < t->ndim; d++) out[d] = t->shape[d] == 1 ? 0 : t->strides[d] * item;
}

static dlb_status cpu_cast(void *ctx, const dlb_tensor *dst, const dlb_tensor *src, void *queue,
                           dlb_kernel_error *ke) {
  int64_t ds[DLB_MAX_NDIM], ss[DLB_MAX_NDIM];
  dlb_error err;
  byte_strides(dst, ds);
  byte_strides(src, ss);
  if (dlb_cpu_cast_strided(dtype_of(dst), dst->data, ds, dtype_of(src), src->data, ss, dst->ndim,
                           dst->shape, &err) != DLB_OK)
    return dlb_kernel_error_from(ke, &err);
  return DLB_OK;
}

static dlb_status cpu_fill(void *ctx, const dlb_tensor *dst, const void *value, void *queue,
                           dlb_kernel_error *ke) {
  int64_t ds[DLB_MAX_NDIM], repeat[DLB_MAX_NDIM] = {0};
  dlb_dtype d = dtype_of(dst);
  dlb_error err;
  byte_strides(dst, ds);
  if (dlb_cpu_cast_strided(d, dst->data, ds, d, value, repeat, dst->ndim, dst->shape, &err) !=
      DLB_OK)
    return dlb_kernel_error_from(ke, &err);
  return DLB_OK;
}

const dlb_kernels dlb_cpu_kernels = {
    .version = DLB_KERNELS_VERSION,
    .elementwise = dlb_cpu_elementwise,
    .cast = cpu_cast,
    .fill = cpu_fill,
    .reduce = dlb_cpu_reduce,
    .matmul = dlb_cpu_matmul,
    .sort = dlb_cpu_sort,
    .search = dlb_cpu_search,
    .take = dlb_cpu_take,
    .mask = dlb_cpu_mask,
    .nonzero = dlb_cpu_nonzero,
    .scan = dlb_cpu_scan,
    .count = dlb_cpu_count,
    .scatter = dlb_cpu_scatter,
};

const dlb_kernels *dlb_host_kernels(void) { return &dlb_cpu_kernels; }
