/* tensor.c -- the kernels of an array's memory, and their failures. */
#include <stdio.h>
#include "event.h"
#include "host.h"
#include "tensor.h"

const dlb_kernels *dlb_kernels_for(const dlb_array *a) {
  const dlb_buffer *b = a->buffer;
  if (b->backend && b->backend->ops.kernels) return b->backend->ops.kernels;
  if (b->host) return dlb_host.kernels;
  /* A size-0 buffer has no memory, so no host pointer: the host's kernels
   * still compute on it (they touch no element) wherever they compute on
   * the backend's non-empty buffers. */
  return b->nbytes == 0 && b->backend ? dlb_backend_kernels(b->backend) : NULL;
}

const dlb_kernels *dlb_backend_kernels(const dlb_backend *backend) {
  if (backend->ops.kernels) return backend->ops.kernels;
  return backend->ops.host_pointer ? dlb_host.kernels : NULL;
}

int dlb_backend_host_computes(const dlb_backend *backend) {
  return dlb_backend_kernels(backend) == dlb_host.kernels;
}

dlb_status dlb_kernel_failed(const dlb_array *a, dlb_status st, const dlb_kernel_error *ke,
                             const char *what, dlb_error *err) {
  const dlb_buffer *b = a->buffer;
  const char *name = b->backend ? b->backend->name : "host";
  if ((unsigned)st >= DLB_STATUS_COUNT || st == DLB_OK) st = DLB_E_BACKEND_FAILURE;
  if (ke->message[0]) dlb_fail(err, st, "%.*s", (int)sizeof ke->message, ke->message);
  else dlb_fail(err, st, "%s could not %s on %s:%d", name, what, name, b->device_id);
  if (ke->hint) dlb_error_hint(err, ke->hint);
  if (err && b->backend) {
    snprintf(err->backend, sizeof err->backend, "%s", name);
    snprintf(err->device, sizeof err->device, "%s:%d", name, b->device_id);
    if (st == DLB_E_BACKEND_FAILURE && b->backend->ops.last_status) {
      err->has_native = 1;
      err->native_status = b->backend->ops.last_status(b->backend->ctx);
    }
  }
  return st;
}

dlb_status dlb_kernel_site_open(const dlb_array *const *arrays, int n, dlb_kernel_site *s,
                                dlb_error *err) {
  dlb_buffer *b = arrays[0]->buffer;
  dlb_status st = DLB_OK;
  s->kernels = dlb_kernels_for(arrays[0]);
  s->backend = b->backend;
  s->device_id = b->device_id;
  s->ctx = b->backend && s->kernels == b->backend->ops.kernels ? b->backend->ctx : NULL;
  s->queue = s->ctx || (b->backend && s->kernels == b->backend->ops.kernels)
                 ? dlb_backend_queue(b->backend, b->device_id)
                 : NULL;
  for (int k = 0; k < n && st == DLB_OK; k++) {
    if (!arrays[k] || !arrays[k]->buffer->pending) continue; /* nothing to wait for */
    st = s->queue
             ? dlb_buffer_order_before(arrays[k]->buffer, s->backend, s->device_id, s->queue, err)
             : dlb_buffer_sync_host(arrays[k]->buffer, err);
  }
  return st;
}

dlb_status dlb_kernel_site_close(const dlb_kernel_site *s, const dlb_array *const *arrays, int n,
                                 dlb_error *err) {
  dlb_buffer *buffers[4];
  int m = 0;
  if (!s->queue) return DLB_OK;
  for (int k = 0; k < n && m < 4; k++)
    if (arrays[k]) buffers[m++] = arrays[k]->buffer;
  return dlb_buffers_after_work(s->backend, s->device_id, s->queue, buffers, m, err);
}

dlb_status dlb_kernel_site_end(const dlb_kernel_site *site, dlb_status st,
                               const dlb_kernel_error *ke, const char *what,
                               const dlb_array *const *arrays, int n, dlb_error *err) {
  if (st != DLB_OK) return dlb_kernel_failed(arrays[0], st, ke, what, err);
  return dlb_kernel_site_close(site, arrays, n, err);
}
