/* event.h -- the work a backend has queued on a buffer: events, waits, and
 * what must happen before the host or another device touches the memory.
 *
 * A backend with queues (dlb_backend_ops.queue) runs dlbridge's work on a
 * device asynchronously, in order, on one queue. After queuing work the core
 * records an event and gives it to every buffer the work touched
 * (buffer->pending, one reference each), so that:
 *  - before the host reads or writes the memory (host kernels on
 *    host-addressable memory, the version 1 copy hooks, which do not order
 *    themselves after queued work), the host waits for it
 *    (dlb_buffer_sync_host);
 *  - before work is queued on another device, that queue waits for it on
 *    the device (dlb_buffer_order_before);
 *  - an export makes the consumer's stream wait for it (dlb_buffer_order_consumer).
 * A buffer whose backend works synchronously never has an event. Buffers
 * are used by the thread of their lua_State; the last release (any thread)
 * drops the event with the buffer. */
#ifndef DLB_CORE_EVENT_H
#define DLB_CORE_EVENT_H

#include <stdatomic.h>
#include "buffer.h"

typedef struct dlb_event {
  atomic_size_t refs;
  dlb_backend *backend; /* retained */
  int device_id;
  void *native; /* the backend's event */
} dlb_event;

/* dlbridge's queue on (backend, device_id), made on first use; NULL when
 * the backend works synchronously. */
void *dlb_backend_queue(dlb_backend *backend, int device_id);

/* An event after the work queued so far on queue (of the device); *out NULL
 * for a synchronous backend (queue NULL). */
dlb_status dlb_event_record(dlb_backend *backend, int device_id, void *queue, dlb_event **out,
                            dlb_error *err);
void dlb_event_retain(dlb_event *event);
/* Drops a reference; the last one calls event_release. NULL is fine. Any thread. */
void dlb_event_release(dlb_event *event);

/* The host waits for the work queued so far on dlbridge's queue of
 * (backend, device_id): nothing for a synchronous backend. */
dlb_status dlb_backend_wait_queue(dlb_backend *backend, int device_id, dlb_error *err);

/* Makes ev (retained here; may be NULL) the buffer's pending work. */
void dlb_buffer_set_pending(dlb_buffer *buffer, dlb_event *event);

/* Queued work on backend's device is about to touch these n buffers (NULL
 * entries skipped): records the event of that work afterwards and hands it
 * to each. queue NULL: nothing to record. */
dlb_status dlb_buffers_after_work(dlb_backend *backend, int device_id, void *queue,
                                  dlb_buffer *const *buffers, int n, dlb_error *err);

/* The host waits for the work pending on the buffer (none: nothing). */
dlb_status dlb_buffer_sync_host(dlb_buffer *buffer, dlb_error *err);

/* Makes queue (on backend's device_id) wait for the buffer's pending work:
 * nothing when it is already in that queue's order (same backend and
 * device), a device-side wait on the same backend, else the host waits. */
dlb_status dlb_buffer_order_before(dlb_buffer *buffer, dlb_backend *backend, int device_id,
                                   void *queue, dlb_error *err);

/* Makes a DLPack consumer's stream wait for the buffer's pending work
 * (stream_wait; has_stream 0: the consumer named none). stream -1 is no
 * ordering. A synchronous backend has nothing to order. */
dlb_status dlb_buffer_order_consumer(dlb_buffer *buffer, int has_stream, int64_t stream,
                                     dlb_error *err);

#endif
