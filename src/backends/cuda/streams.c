/* streams.c -- dlbridge's queue on each device (one CU_STREAM_NON_BLOCKING
 * stream, made on first use, so the legacy default stream's implicit
 * synchronisation never touches it), its events (CU_EVENT_DISABLE_TIMING),
 * and the DLPack consumer's stream, which is made to wait on the device,
 * never blocking the host, except while that stream is being captured
 * into a graph: an event recorded outside a capture cannot be waited for
 * inside it (the capture would be invalidated), so the host waits for
 * dlbridge's work then, and the graph needs no edge to it. */
#include "cuda.h"

CUresult dlb_cuda_stream(dlb_cuda *c, int device_id, CUstream *out) {
  dlb_cuda_device *d = &c->devices[device_id];
  CUresult r = CUDA_SUCCESS;
  pthread_mutex_lock(&c->lock);
  if (!d->stream) r = c->cu->stream_create(&d->stream, CU_STREAM_NON_BLOCKING);
  *out = r == CUDA_SUCCESS ? d->stream : NULL;
  pthread_mutex_unlock(&c->lock);
  return r;
}

/* The device's stream if it has been made, else NULL (no work queued yet). */
static CUstream existing_stream(dlb_cuda *c, int device_id) {
  CUstream s;
  pthread_mutex_lock(&c->lock);
  s = c->devices[device_id].stream;
  pthread_mutex_unlock(&c->lock);
  return s;
}

CUresult dlb_cuda_drain(dlb_cuda *c) {
  CUresult first = CUDA_SUCCESS, r;
  for (int i = 0; i < c->count; i++) {
    CUstream s = existing_stream(c, i);
    if (!s) continue;
    if ((r = dlb_cuda_enter(c, i)) == CUDA_SUCCESS) {
      r = c->cu->stream_sync(s);
      dlb_cuda_leave(c);
    }
    if (first == CUDA_SUCCESS) first = r;
  }
  return first;
}

void *dlb_cuda_queue(void *ctx, int device_id) {
  dlb_cuda *c = ctx;
  CUstream s = NULL;
  if (dlb_cuda_enter(c, device_id) != CUDA_SUCCESS) return NULL;
  dlb_cuda_stream(c, device_id, &s);
  dlb_cuda_leave(c);
  return s;
}

/* A new event recorded on stream (context pushed). */
static CUresult record_on(dlb_cuda *c, CUstream stream, CUevent *out) {
  CUresult r = c->cu->event_create(out, CU_EVENT_DISABLE_TIMING);
  if (r != CUDA_SUCCESS) return r;
  if ((r = c->cu->event_record(*out, stream)) != CUDA_SUCCESS) c->cu->event_destroy(*out);
  return r;
}

dlb_status dlb_cuda_event_record(void *ctx, int device_id, void *queue, void **event) {
  dlb_cuda *c = ctx;
  CUevent ev = NULL;
  CUresult r = dlb_cuda_enter(c, device_id);
  if (r != CUDA_SUCCESS) return dlb_cuda_status(r);
  r = record_on(c, (CUstream)queue, &ev);
  dlb_cuda_leave(c);
  *event = ev;
  return dlb_cuda_status(r);
}

dlb_status dlb_cuda_event_wait(void *ctx, int device_id, void *queue, void *event) {
  dlb_cuda *c = ctx;
  CUresult r = dlb_cuda_enter(c, device_id);
  if (r != CUDA_SUCCESS) return dlb_cuda_status(r);
  r = c->cu->stream_wait_event((CUstream)queue, (CUevent)event, 0);
  dlb_cuda_leave(c);
  return dlb_cuda_status(r);
}

dlb_status dlb_cuda_event_synchronize(void *ctx, int device_id, void *event) {
  dlb_cuda *c = ctx;
  CUresult r = dlb_cuda_enter(c, device_id);
  if (r != CUDA_SUCCESS) return dlb_cuda_status(r);
  r = c->cu->event_sync((CUevent)event);
  dlb_cuda_leave(c);
  return dlb_cuda_status(r);
}

void dlb_cuda_event_release(void *ctx, int device_id, void *event) {
  dlb_cuda *c = ctx;
  if (!event || dlb_cuda_enter(c, device_id) != CUDA_SUCCESS) return; /* shut down: gone */
  c->cu->event_destroy((CUevent)event);
  dlb_cuda_leave(c);
}

/* The consumer's stream for a DLPack stream value: absent and 1 the legacy
 * default stream, 2 the per-thread default, above 2 the handle itself. */
static int consumer_stream(int has_stream, int64_t stream, CUstream *out) {
  if (!has_stream) stream = 1;
  if (stream < 1) return 0; /* 0 is invalid in CUDA; -1 never comes here */
  *out = (CUstream)(uintptr_t)stream;
  return 1;
}

CUresult dlb_cuda_after_others(dlb_cuda *c, int device_id, CUstream stream) {
  CUresult r = CUDA_SUCCESS;
  for (int i = 0; i < c->count && r == CUDA_SUCCESS; i++) {
    CUstream other = i == device_id ? NULL : existing_stream(c, i);
    CUevent ev;
    if (!other) continue;
    if ((r = dlb_cuda_enter(c, i)) != CUDA_SUCCESS) break;
    r = record_on(c, other, &ev);
    dlb_cuda_leave(c);
    if (r != CUDA_SUCCESS) break;
    r = c->cu->stream_wait_event(stream, ev, 0); /* across contexts: stream's is current */
    c->cu->event_destroy(ev);
  }
  return r;
}

/* Whether the consumer's stream is being captured into a graph (or the
 * driver cannot say: then, too, the host waits rather than risk it). An
 * invalid handle stays the wait's to report. */
static int capturing(dlb_cuda *c, CUstream consumer) {
  int status = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r;
  if (!c->cu->stream_is_capturing) return 0;
  r = c->cu->stream_is_capturing(consumer, &status);
  if (r == CUDA_ERROR_INVALID_HANDLE) return 0;
  return r != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* Makes consumer wait for event (context pushed); event NULL: for all of
 * dlbridge's work on the device so far (fresh memory included), if any.
 * A capturing consumer: the host waits instead (see above). */
static CUresult order_consumer(dlb_cuda *c, int device_id, CUstream consumer, CUevent event) {
  CUstream own;
  CUevent mine = NULL;
  CUresult r;
  if (!event) {
    if (!(own = existing_stream(c, device_id))) return CUDA_SUCCESS;
    if ((r = record_on(c, own, &mine)) != CUDA_SUCCESS) return r;
    event = mine;
  }
  r = capturing(c, consumer) ? c->cu->event_sync(event)
                             : c->cu->stream_wait_event(consumer, event, 0);
  if (mine) c->cu->event_destroy(mine); /* a pending event may be destroyed */
  return r;
}

dlb_status dlb_cuda_stream_wait(void *ctx, int device_id, int has_stream, int64_t stream,
                                void *event) {
  dlb_cuda *c = ctx;
  CUstream consumer;
  CUresult r;
  if (!consumer_stream(has_stream, stream, &consumer)) return DLB_E_ARGUMENT;
  if ((r = dlb_cuda_enter(c, device_id)) != CUDA_SUCCESS) return dlb_cuda_status(r);
  r = order_consumer(c, device_id, consumer, (CUevent)event);
  dlb_cuda_leave(c);
  if (r == CUDA_ERROR_INVALID_HANDLE) {
    dlb_cuda_status(r);
    return DLB_E_ARGUMENT; /* not a stream handle */
  }
  return dlb_cuda_status(r);
}
