/* staging.c -- element I/O through the backend vtable, for memory the host cannot address. */
#include <string.h>
#include "staging.h"

/* One contiguous or strided run of elements: copy between host memory and
 * the buffer at byte offset off, stride bytes apart. */
static dlb_status run_io(const dlb_array *a, size_t off, int64_t stride, int64_t n, char *host,
                         int writing, dlb_error *err) {
  dlb_buffer *b = a->buffer;
  dlb_backend *be = b->backend;
  size_t item = dlb_array_itemsize(a);
  if (b->host) {
    char *p = (char *)b->host + off;
    if (stride == (int64_t)item) {
      writing ? memcpy(p, host, (size_t)n * item) : memcpy(host, p, (size_t)n * item);
    } else {
      for (int64_t k = 0; k < n; k++, host += item)
        writing ? memcpy(p + k * stride, host, item) : memcpy(host, p + k * stride, item);
    }
    return DLB_OK;
  }
  /* A contiguous run is one backend call; a strided one, one call per element. */
  int64_t pieces = stride == (int64_t)item ? 1 : n;
  size_t bytes = stride == (int64_t)item ? (size_t)n * item : item;
  for (int64_t k = 0; k < pieces; k++, host += bytes) {
    size_t at = (size_t)((int64_t)off + k * stride);
    dlb_status st = writing
                        ? be->ops.copy_from_host(be->ctx, b->device_id, b->handle, at, host, bytes)
                        : be->ops.copy_to_host(be->ctx, b->device_id, b->handle, at, host, bytes);
    if (st != DLB_OK)
      return dlb_backend_failed(be, st, writing ? "copy from host memory" : "copy to host memory",
                                err);
  }
  return DLB_OK;
}

/* a's geometry with extent-1 dims dropped and neighbours merged where one
 * steps over the other exactly: the same row-major order in fewer, longer
 * runs (a contiguous array becomes one run). Returns the new ndim. */
static int coalesce(const dlb_array *a, int64_t *shape, int64_t *strides) {
  int n = 0;
  for (int d = 0; d < a->ndim; d++) {
    if (a->shape[d] == 1) continue;
    int64_t step;
    if (n > 0 && !__builtin_mul_overflow(a->shape[d], a->strides[d], &step) &&
        strides[n - 1] == step) {
      shape[n - 1] *= a->shape[d];
      strides[n - 1] = a->strides[d];
      continue;
    }
    shape[n] = a->shape[d];
    strides[n] = a->strides[d];
    n++;
  }
  return n;
}

/* Walks elements [first, first + count) in row-major order, run by run. */
static dlb_status span_io(const dlb_array *a, int64_t first, int64_t count, char *host,
                          int writing, dlb_error *err) {
  int64_t index[DLB_MAX_NDIM], shape[DLB_MAX_NDIM], strides[DLB_MAX_NDIM];
  int64_t item = (int64_t)dlb_array_itemsize(a), rest = first;
  int ndim = coalesce(a, shape, strides), inner = ndim - 1;
  if (count <= 0) return DLB_OK;
  if (ndim == 0) return run_io(a, a->offset, item, 1, host, writing, err);
  for (int d = inner; d >= 0; d--) { /* unravel first */
    index[d] = rest % shape[d];
    rest /= shape[d];
  }
  while (count > 0) {
    int64_t off = (int64_t)a->offset, n = shape[inner] - index[inner];
    dlb_status st;
    if (n > count) n = count;
    for (int d = 0; d < ndim; d++) off += index[d] * strides[d] * item;
    st = run_io(a, (size_t)off, strides[inner] * item, n, host, writing, err);
    if (st != DLB_OK) return st;
    host += n * item;
    count -= n;
    index[inner] += n;
    for (int d = inner; d > 0 && index[d] == shape[d]; d--) {
      index[d] = 0;
      index[d - 1]++;
    }
  }
  return DLB_OK;
}

dlb_status dlb_span_read(const dlb_array *a, int64_t first, int64_t count, void *dst,
                         dlb_error *err) {
  return span_io(a, first, count, dst, 0, err);
}

dlb_status dlb_span_write(dlb_array *a, int64_t first, int64_t count, const void *src,
                          dlb_error *err) {
  return span_io(a, first, count, (char *)src, 1, err);
}

dlb_status dlb_element_read(const dlb_array *a, int64_t elem_offset, void *dst, dlb_error *err) {
  int64_t item = (int64_t)dlb_array_itemsize(a);
  return run_io(a, (size_t)((int64_t)a->offset + elem_offset * item), item, 1, dst, 0, err);
}
