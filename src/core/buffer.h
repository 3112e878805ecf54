/* buffer.h -- refcounted memory on one device of one backend. */
#ifndef DLB_CORE_BUFFER_H
#define DLB_CORE_BUFFER_H

#include <stdatomic.h>
#include <stddef.h>
#include "backend.h"

/* A buffer is shared by every array viewing it and by every DLPack tensor
 * exported from it; the last release frees it, on whatever thread. A buffer
 * with a backend has nbytes charged to it (dlb_backend_charge: the state's
 * memory budget) from its creation until that last release. */
typedef struct dlb_buffer {
  atomic_size_t refs;
  /* Held: retained, or by the charge (by_charge), which keeps a backend
   * living by its budget (dlb_backend_live_by_budget) until it is refunded.
   * Wrapped host memory has the state's cpu backend. */
  dlb_backend *backend;
  int by_charge;
  int device_id;
  void *handle; /* the backend's handle; NULL when nbytes == 0 */
  void *host;   /* host-addressable bytes, or NULL */
  size_t nbytes;
  int readonly;                          /* the memory itself must not be written */
  void (*external_release)(void *owner); /* wrapped memory: frees it */
  void *owner;
  int inline_data; /* the bytes live in this allocation, after the header (small cpu buffers) */
  int adopted;     /* handle came from the backend's adopt: forget it, never deallocate it */
  int host_owned;  /* the host's own memory (dlb_push_external): held, not charged (budget.h) */
  struct dlb_event *pending; /* the last work queued on the memory (event.h), or NULL */
} dlb_buffer;

/* cpu buffers up to this size share one allocation with their header: an
 * operation on a 10-element array then costs one malloc, not two. */
#define DLB_INLINE_BUFFER_BYTES 256

/* A new buffer of nbytes (0 allowed) with one reference. */
dlb_status dlb_buffer_allocate(dlb_backend *backend, int device_id, size_t nbytes, int zeroed,
                               dlb_buffer **out, dlb_error *err);
void dlb_buffer_retain(dlb_buffer *buffer);
/* Drops a reference; the last one frees the memory through its backend or
 * its external_release. Never touches Lua; safe on any thread. */
void dlb_buffer_release(dlb_buffer *buffer);

#endif
