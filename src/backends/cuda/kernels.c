/* kernels.c -- the cuda backend's compute: fills only. Every element of a
 * contiguous destination becomes the value by one cuMemsetD8/16/32Async
 * on dlbridge's stream when the value is one repeated byte, 16-bit or
 * 32-bit word; any other fill is a strided copy from the one host element
 * (strides 0). The other entries are NULL: the core raises UNSUPPORTED
 * with a hint to device_put. */
#include <string.h>
#include "cuda.h"

static int contiguous(const dlb_tensor *t) {
  int64_t expect = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    if (t->shape[d] != 1 && t->strides[d] != expect) return 0;
    expect *= t->shape[d];
  }
  return 1;
}

static size_t elements(const dlb_tensor *t) {
  size_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= (size_t)t->shape[d];
  return n;
}

/* Whether the item's bytes repeat with period width. */
static int repeats(const unsigned char *v, size_t item, size_t width) {
  if (item % width != 0) return 0;
  for (size_t k = width; k < item; k++)
    if (v[k] != v[k - width]) return 0;
  return 1;
}

/* One memset of the whole of dst when the value's bit pattern allows. */
static int memset_fill(dlb_cuda *c, CUdeviceptr at, size_t n, const unsigned char *v, size_t item,
                       CUstream s, CUresult *r) {
  if (repeats(v, item, 1)) {
    *r = c->cu->memset8(at, v[0], n * item, s);
  } else if (repeats(v, item, 2) && at % 2 == 0) {
    unsigned short w;
    memcpy(&w, v, 2);
    *r = c->cu->memset16(at, w, n * item / 2, s);
  } else if (repeats(v, item, 4) && at % 4 == 0) {
    unsigned int w;
    memcpy(&w, v, 4);
    *r = c->cu->memset32(at, w, n * item / 4, s);
  } else {
    return 0;
  }
  return 1;
}

/* Any other fill: a strided copy from the one element (strides 0). */
static dlb_status copy_fill(dlb_cuda *c, const dlb_tensor *dst, const void *value, size_t item,
                            void *queue) {
  static const int64_t zeros[DLB_MAX_NDIM];
  dlb_strided_copy copy = {item,
                           dst->ndim,
                           dst->shape,
                           {dst->handle, dst->device_id, dst->offset, NULL, dst->strides},
                           {NULL, dst->device_id, 0, (void *)value, zeros},
                           queue};
  return dlb_cuda_copy_strided(c, &copy);
}

static dlb_status cuda_fill(void *ctx, const dlb_tensor *dst, const void *value, void *queue,
                            dlb_kernel_error *error) {
  dlb_cuda *c = ctx;
  size_t item = (size_t)dst->dtype.bits * dst->dtype.lanes / 8;
  CUdeviceptr at = (CUdeviceptr)(uintptr_t)dst->handle + dst->offset;
  CUstream s = queue;
  CUresult r = CUDA_SUCCESS;
  int done;
  (void)error;
  if (!contiguous(dst) || !s) return copy_fill(c, dst, value, item, queue);
  if ((r = dlb_cuda_enter(c, dst->device_id)) != CUDA_SUCCESS) return dlb_cuda_status(r);
  done = memset_fill(c, at, elements(dst), value, item, s, &r);
  dlb_cuda_leave(c);
  return done ? dlb_cuda_status(r) : copy_fill(c, dst, value, item, queue);
}

const dlb_kernels dlb_cuda_kernels = {
    .version = DLB_KERNELS_VERSION,
    .fill = cuda_fill,
};
