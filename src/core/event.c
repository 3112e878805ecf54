/* event.c -- queued work on buffers: events, waits, host synchronisation. */
#include <stdlib.h>
#include "event.h"
#include "invariant.h"

void *dlb_backend_queue(dlb_backend *backend, int device_id) {
  return backend && backend->ops.queue ? backend->ops.queue(backend->ctx, device_id) : NULL;
}

dlb_status dlb_event_record(dlb_backend *backend, int device_id, void *queue, dlb_event **out,
                            dlb_error *err) {
  dlb_event *ev;
  void *native = NULL;
  dlb_status st;
  *out = NULL;
  if (!queue || !backend->ops.event_record) return DLB_OK;
  if (!(ev = malloc(sizeof *ev)))
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for an event");
  if ((st = backend->ops.event_record(backend->ctx, device_id, queue, &native)) != DLB_OK) {
    free(ev);
    return dlb_backend_failed(backend, st, "record an event", err);
  }
  atomic_init(&ev->refs, 1);
  dlb_backend_retain(backend);
  ev->backend = backend;
  ev->device_id = device_id;
  ev->native = native;
  *out = ev;
  return DLB_OK;
}

void dlb_event_retain(dlb_event *event) {
  DLB_ASSERT(atomic_load_explicit(&event->refs, memory_order_relaxed) > 0);
  atomic_fetch_add_explicit(&event->refs, 1, memory_order_relaxed);
}

void dlb_event_release(dlb_event *event) {
  DLB_ASSERT(!event || atomic_load_explicit(&event->refs, memory_order_relaxed) > 0);
  if (!event || atomic_fetch_sub_explicit(&event->refs, 1, memory_order_acq_rel) != 1) return;
  if (event->backend->ops.event_release)
    event->backend->ops.event_release(event->backend->ctx, event->device_id, event->native);
  dlb_backend_release(event->backend);
  free(event);
}

void dlb_buffer_set_pending(dlb_buffer *buffer, dlb_event *event) {
  if (event) dlb_event_retain(event);
  dlb_event_release(buffer->pending);
  buffer->pending = event;
}

dlb_status dlb_buffers_after_work(dlb_backend *backend, int device_id, void *queue,
                                  dlb_buffer *const *buffers, int n, dlb_error *err) {
  dlb_event *ev;
  dlb_status st = dlb_event_record(backend, device_id, queue, &ev, err);
  if (st != DLB_OK || !ev) return st;
  for (int k = 0; k < n; k++)
    if (buffers[k]) dlb_buffer_set_pending(buffers[k], ev);
  dlb_event_release(ev);
  return DLB_OK;
}

dlb_status dlb_backend_wait_queue(dlb_backend *backend, int device_id, dlb_error *err) {
  dlb_event *ev;
  dlb_status st =
      dlb_event_record(backend, device_id, dlb_backend_queue(backend, device_id), &ev, err);
  if (st != DLB_OK || !ev) return st;
  if (ev->backend->ops.event_synchronize &&
      (st = ev->backend->ops.event_synchronize(ev->backend->ctx, ev->device_id, ev->native)) !=
          DLB_OK)
    st = dlb_backend_failed(backend, st, "wait for queued work", err);
  dlb_event_release(ev);
  return st;
}

dlb_status dlb_buffer_sync_host(dlb_buffer *buffer, dlb_error *err) {
  dlb_event *ev = buffer ? buffer->pending : NULL;
  dlb_status st;
  if (!ev) return DLB_OK;
  if (ev->backend->ops.event_synchronize &&
      (st = ev->backend->ops.event_synchronize(ev->backend->ctx, ev->device_id, ev->native)) !=
          DLB_OK)
    return dlb_backend_failed(ev->backend, st, "wait for queued work", err);
  dlb_buffer_set_pending(buffer, NULL); /* done: later host access needs no wait */
  return DLB_OK;
}

dlb_status dlb_buffer_order_before(dlb_buffer *buffer, dlb_backend *backend, int device_id,
                                   void *queue, dlb_error *err) {
  dlb_event *ev = buffer ? buffer->pending : NULL;
  dlb_status st;
  if (!ev) return DLB_OK;
  if (ev->backend == backend && ev->device_id == device_id && queue) return DLB_OK; /* in order */
  if (ev->backend == backend && queue && backend->ops.event_wait) {
    st = backend->ops.event_wait(backend->ctx, device_id, queue, ev->native);
    return st == DLB_OK ? DLB_OK : dlb_backend_failed(backend, st, "order queued work", err);
  }
  return dlb_buffer_sync_host(buffer, err);
}

dlb_status dlb_buffer_order_consumer(dlb_buffer *buffer, int has_stream, int64_t stream,
                                     dlb_error *err) {
  dlb_backend *b = buffer->backend;
  dlb_status st;
  if (has_stream && stream == -1) return DLB_OK;
  if (!b || !b->ops.stream_wait) return dlb_buffer_sync_host(buffer, err);
  st = b->ops.stream_wait(b->ctx, buffer->device_id, has_stream, stream,
                          buffer->pending ? buffer->pending->native : NULL);
  if (st == DLB_E_ARGUMENT) {
    dlb_fail(err, DLB_E_ARGUMENT, "stream %lld is not a stream of %s:%d", (long long)stream,
             b->name, buffer->device_id);
    dlb_error_hint(err, "the DLPack protocol: 1 the legacy default stream, 2 the per-thread "
                        "default, a stream handle above 2, -1 for no synchronisation");
    return st;
  }
  return st == DLB_OK ? DLB_OK : dlb_backend_failed(b, st, "order the consumer's stream", err);
}
