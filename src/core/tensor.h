/* tensor.h -- arrays as the backends' kernels see them (dlb_tensor, in
 * dlbridge.h), and a kernel's failure as a core error. */
#ifndef DLB_CORE_TENSOR_H
#define DLB_CORE_TENSOR_H

#include <string.h>
#include "array.h"

/* t describes a (shape and strides point into a, which must outlive t). */
static inline void dlb_tensor_of(const dlb_array *a, dlb_tensor *t) {
  t->handle = a->buffer->handle;
  t->device_id = a->buffer->device_id;
  t->offset = a->offset;
  t->data = dlb_array_host_data(a);
  t->dtype = dlb_dtype_to_dl(a->dtype);
  t->ndim = a->ndim;
  t->shape = a->shape;
  t->strides = a->strides;
}

/* The kernels that compute on a's memory: its backend's own, else the
 * host's when the host can address it (also when it is empty on a backend
 * that hands out host pointers), else NULL (no compute there). */
const dlb_kernels *dlb_kernels_for(const dlb_array *a);
/* The same for any memory of backend: its own kernels, else the host's when
 * it hands out host pointers, else NULL. */
const dlb_kernels *dlb_backend_kernels(const dlb_backend *backend);
/* Whether the host's kernels compute on backend's memory. */
int dlb_backend_host_computes(const dlb_backend *backend);

/* A kernel of backend failed with st: err gets st, the kernel's message (or
 * "<backend> could not <what>") and its hint, the backend and device. */
dlb_status dlb_kernel_failed(const dlb_array *a, dlb_status st, const dlb_kernel_error *ke,
                             const char *what, dlb_error *err);

/* Where one kernel call on arrays of one device runs: the kernels of their
 * memory, with the backend's ctx and queue when they are the backend's own
 * (the host's kernels get ctx NULL and no queue). */
typedef struct dlb_kernel_site {
  const dlb_kernels *kernels;
  void *ctx;
  void *queue;
  dlb_backend *backend;
  int device_id;
} dlb_kernel_site;

/* Sets up the site of arrays[0]'s memory and orders the call after the
 * work pending on each of the n arrays (the host waits for it before host
 * kernels; a device queue waits on the device). */
dlb_status dlb_kernel_site_open(const dlb_array *const *arrays, int n, dlb_kernel_site *site,
                                dlb_error *err);
/* After the call: the n arrays' buffers keep the event of the queued work. */
dlb_status dlb_kernel_site_close(const dlb_kernel_site *site, const dlb_array *const *arrays, int n,
                                 dlb_error *err);
/* Ends a kernel call that returned st: its failure as dlb_kernel_failed
 * says (arrays[0] names the backend and device; what, the operation), else
 * the site closed. What every kernel site does last. */
dlb_status dlb_kernel_site_end(const dlb_kernel_site *site, dlb_status st,
                               const dlb_kernel_error *ke, const char *what,
                               const dlb_array *const *arrays, int n, dlb_error *err);

#endif
