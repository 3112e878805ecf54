/* buffer.c -- refcounted memory on one device of one backend. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buffer.h"
#include "event.h"
#include "invariant.h"

/* Every small cpu buffer takes a block of one size: its header, then up to
 * DLB_INLINE_BUFFER_BYTES 64-byte aligned. */
#define INLINE_ALIGN 64
#define INLINE_BLOCK_BYTES (sizeof(dlb_buffer) + INLINE_ALIGN - 1 + DLB_INLINE_BUFFER_BYTES)

/* Cleared by a copy of this, which GCC makes vector stores: its memset of
 * the header was a rep stos, the slowest part of a small allocation. */
static const dlb_buffer empty_header;

/* A small cpu buffer: header and bytes in one block (a freed one the
 * backend kept, or a new one), the bytes 64-byte aligned and zeroed only
 * when asked for. The handle is the bytes' address,
 * which the cpu backend's other operations read as a block with offset 0;
 * it is never deallocated on its own. */
static dlb_buffer *allocate_inline(dlb_backend *backend, size_t nbytes, int zeroed) {
  dlb_buffer *buf = dlb_backend_take_block(backend);
  if (!buf && !(buf = malloc(INLINE_BLOCK_BYTES))) return NULL;
  *buf = empty_header;
  buf->host = (void *)(((uintptr_t)(buf + 1) + INLINE_ALIGN - 1) & ~(uintptr_t)(INLINE_ALIGN - 1));
  buf->handle = buf->host;
  buf->inline_data = 1;
  if (zeroed) memset(buf->host, 0, nbytes);
  return buf;
}

/* Frees a buffer's header (and a small buffer's bytes with it), or gives
 * a small buffer's block to its backend to keep. */
static void free_header(dlb_backend *backend, dlb_buffer *buf) {
  if (!buf->inline_data || !dlb_backend_keep_block(backend, buf)) free(buf);
}

dlb_status dlb_buffer_allocate(dlb_backend *backend, int device_id, size_t nbytes, int zeroed,
                               dlb_buffer **out, dlb_error *err) {
  int small = nbytes > 0 && nbytes <= backend->inline_bytes;
  dlb_buffer *buf = small ? allocate_inline(backend, nbytes, zeroed) : calloc(1, sizeof *buf);
  dlb_status st;
  if (!buf) return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a buffer header");
  if ((st = dlb_backend_charge(backend, nbytes, err)) != DLB_OK) {
    free_header(backend, buf);
    return st;
  }
  if (nbytes > 0 && !buf->inline_data) {
    st = backend->ops.allocate(backend->ctx, device_id, nbytes, zeroed, &buf->handle);
    if (st != DLB_OK) {
      dlb_backend_refund(backend, nbytes);
      free(buf);
      st = dlb_backend_failed(backend, st, "allocate", err);
      if (err) {
        snprintf(err->device, sizeof err->device, "%s:%d", backend->name, device_id);
        if (st == DLB_E_OUT_OF_MEMORY) {
          const char *name = err->has_native && backend->ops.status_name
                                 ? backend->ops.status_name(backend->ctx, err->native_status)
                                 : NULL;
          snprintf(err->message, sizeof err->message, "cannot allocate %zu bytes on %s:%d%s%s",
                   nbytes, backend->name, device_id, name ? ": " : "", name ? name : "");
        }
      }
      return st;
    }
    if (backend->ops.host_pointer)
      buf->host = backend->ops.host_pointer(backend->ctx, device_id, buf->handle);
  }
  atomic_init(&buf->refs, 1);
  buf->by_charge = nbytes > 0 && backend->lives_by_budget;
  if (!buf->by_charge) dlb_backend_retain(backend);
  buf->backend = backend;
  buf->device_id = device_id;
  buf->nbytes = nbytes;
  *out = buf;
  return DLB_OK;
}

void dlb_buffer_retain(dlb_buffer *buffer) {
  DLB_ASSERT(atomic_load_explicit(&buffer->refs, memory_order_relaxed) > 0); /* a live holder */
  atomic_fetch_add_explicit(&buffer->refs, 1, memory_order_relaxed);
}

void dlb_buffer_release(dlb_buffer *buffer) {
  dlb_backend *backend;
  size_t nbytes;
  int charged, by_charge;
  if (!buffer) return;
  DLB_ASSERT(atomic_load_explicit(&buffer->refs, memory_order_relaxed) > 0); /* not freed twice */
  /* The only reference (the usual case of a temporary) cannot gain another
   * meanwhile: no other thread holds one to copy. Else count down; the last
   * one frees. The acquire orders the free after every other holder's use. */
  if (atomic_load_explicit(&buffer->refs, memory_order_acquire) != 1 &&
      atomic_fetch_sub_explicit(&buffer->refs, 1, memory_order_acq_rel) != 1)
    return;
  dlb_event_release(buffer->pending);
  if (buffer->adopted && buffer->backend->ops.forget)
    buffer->backend->ops.forget(buffer->backend->ctx, buffer->device_id, buffer->handle);
  if (buffer->external_release) buffer->external_release(buffer->owner);
  backend = buffer->backend;
  nbytes = buffer->nbytes;
  charged = backend && !buffer->host_owned;
  by_charge = buffer->by_charge;
  if (backend) {
    if (buffer->handle && !buffer->external_release && !buffer->inline_data)
      backend->ops.deallocate(backend->ctx, buffer->device_id, buffer->handle);
    if (buffer->host_owned) dlb_budget_unhold(backend->budget, nbytes);
  }
  /* The header, then the charge, then the hold: the last use of a backend
   * can be its kept list, and the refund can end a backend held by it. */
  free_header(backend, buffer);
  if (charged) dlb_backend_refund(backend, nbytes);
  if (!by_charge) dlb_backend_release(backend);
}
