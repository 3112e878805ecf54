/* staging.c -- data between host memory and any backend's memory (staging.h). */
#include <stdlib.h>
#include <string.h>
#include "event.h"
#include "host.h"
#include "shape.h"
#include "staging.h"

/* A byte span this much larger than the box's own bytes is still moved in
 * one chunk and gathered or scattered on the host; a sparser box is split. */
#define SPAN_SLACK ((size_t)64 << 10)

static dlb_status hook_failed(const dlb_array *a, dlb_status st, int writing, dlb_error *err) {
  return dlb_backend_failed(a->buffer->backend, st,
                            writing ? "copy from host memory" : "copy to host memory", err);
}

/* Waits for the work queued on a's memory as the next access needs: the
 * host for the host and the version 1 hooks, the device's queue for
 * copy_strided (which orders itself after the work already on it). */
static dlb_status ready(const dlb_array *a, void **queue, dlb_error *err) {
  dlb_buffer *b = a->buffer;
  *queue = NULL;
  if (!b->host && b->backend->ops.copy_strided) {
    *queue = dlb_backend_queue(b->backend, b->device_id);
    return dlb_buffer_order_before(b, b->backend, b->device_id, *queue, err);
  }
  return dlb_buffer_sync_host(b, err);
}

/* Row-major contiguous strides of a's shape, in elements. */
static void packed_strides(const dlb_array *a, int64_t *strides) {
  dlb_shape_contiguous_strides(a->ndim, a->shape, strides);
}

/* The host copy between a's memory at p (a's strides) and contiguous
 * memory at host, one dtype. */
static dlb_status host_move(const dlb_array *a, char *p, char *host, int writing, dlb_error *err) {
  int64_t item = (int64_t)dlb_array_itemsize(a), mine[DLB_MAX_NDIM], packed[DLB_MAX_NDIM];
  packed_strides(a, packed);
  for (int d = 0; d < a->ndim; d++) {
    mine[d] = a->shape[d] == 1 ? 0 : a->strides[d] * item;
    packed[d] = a->shape[d] == 1 ? 0 : packed[d] * item;
  }
  return writing ? dlb_host.cast_strided(a->dtype, p, mine, a->dtype, host, packed, a->ndim,
                                         a->shape, err)
                 : dlb_host.cast_strided(a->dtype, host, packed, a->dtype, p, mine, a->ndim,
                                         a->shape, err);
}

/* One copy_strided call between a and contiguous host memory. */
static dlb_status strided_hook(const dlb_array *a, void *host, int writing, void *queue,
                               dlb_error *err) {
  dlb_buffer *b = a->buffer;
  int64_t packed[DLB_MAX_NDIM];
  dlb_copy_side dev = {b->handle, b->device_id, a->offset, NULL, a->strides};
  dlb_copy_side mem = {NULL, b->device_id, 0, host, packed};
  dlb_strided_copy c = {dlb_array_itemsize(a), a->ndim, a->shape, writing ? dev : mem,
                        writing ? mem : dev,   queue};
  dlb_status st;
  packed_strides(a, packed);
  st = b->backend->ops.copy_strided(b->backend->ctx, &c);
  return st == DLB_OK ? DLB_OK : hook_failed(a, st, writing, err);
}

/* The box's byte span: [*first, *first + *bytes) of the allocation. */
static dlb_status span_of(const dlb_array *a, size_t *first, size_t *bytes, dlb_error *err) {
  int64_t lo, hi, item = (int64_t)dlb_array_itemsize(a);
  dlb_status st = dlb_shape_reach(a->ndim, a->shape, a->strides, &lo, &hi, err);
  if (st != DLB_OK) return st;
  *first = (size_t)((int64_t)a->offset + lo * item);
  *bytes = (size_t)((hi - lo + 1) * item);
  return DLB_OK;
}

static dlb_status move_split(const dlb_array *a, char *host, int writing, dlb_error *err);

/* Version 1 hooks only: a contiguous box is one call; a box whose span is
 * not much larger than its bytes moves as that span (read whole, or read,
 * scattered into and written back), gathered or scattered on the host; a
 * sparser box is split along its outer dim. */
static dlb_status move_staged(const dlb_array *a, char *host, int writing, dlb_error *err) {
  dlb_buffer *b = a->buffer;
  dlb_backend *be = b->backend;
  size_t first, bytes, own = (size_t)a->numel * dlb_array_itemsize(a);
  char *span;
  dlb_status st;
  if (dlb_array_is_contiguous(a)) {
    st = writing ? be->ops.copy_from_host(be->ctx, b->device_id, b->handle, a->offset, host, own)
                 : be->ops.copy_to_host(be->ctx, b->device_id, b->handle, a->offset, host, own);
    return st == DLB_OK ? DLB_OK : hook_failed(a, st, writing, err);
  }
  if ((st = span_of(a, &first, &bytes, err)) != DLB_OK) return st;
  if (bytes > 2 * own + SPAN_SLACK) return move_split(a, host, writing, err);
  if (!(span = malloc(bytes)))
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a %zu-byte staging buffer", bytes);
  st = be->ops.copy_to_host(be->ctx, b->device_id, b->handle, first, span, bytes);
  if (st != DLB_OK) {
    st = hook_failed(a, st, 0, err);
  } else {
    char *p = span + (a->offset - first);
    st = host_move(a, p, host, writing, err);
    if (st == DLB_OK && writing) {
      st = be->ops.copy_from_host(be->ctx, b->device_id, b->handle, first, span, bytes);
      if (st != DLB_OK) st = hook_failed(a, st, 1, err);
    }
  }
  free(span);
  return st;
}

/* The box as views of each index of its outermost dim (extent > 1). */
static dlb_status move_split(const dlb_array *a, char *host, int writing, dlb_error *err) {
  int d = 0;
  size_t item = dlb_array_itemsize(a);
  while (d < a->ndim && a->shape[d] == 1) d++;
  if (d == a->ndim) return DLB_OK; /* one element: contiguous, never here */
  for (int64_t i = 0; i < a->shape[d]; i++) {
    dlb_array part = *a; /* borrowed: a holds the buffer */
    dlb_status st;
    part.shape[d] = 1;
    part.offset = (size_t)((int64_t)a->offset + i * a->strides[d] * (int64_t)item);
    part.numel = a->numel / a->shape[d];
    if ((st = move_staged(&part, host + (size_t)(i * part.numel) * item, writing, err)) != DLB_OK)
      return st;
  }
  return DLB_OK;
}

/* Moves box's elements between its memory and contiguous host memory. */
static dlb_status stage(const dlb_array *a, char *host, int writing, dlb_error *err) {
  void *queue;
  dlb_status st;
  if (a->numel == 0) return DLB_OK;
  if ((st = ready(a, &queue, err)) != DLB_OK) return st;
  if (a->buffer->host) return host_move(a, dlb_array_host_data(a), host, writing, err);
  if (a->buffer->backend->ops.copy_strided) return strided_hook(a, host, writing, queue, err);
  return move_staged(a, host, writing, err);
}

dlb_status dlb_stage_read(const dlb_array *box, void *host, dlb_error *err) {
  return stage(box, host, 0, err);
}

dlb_status dlb_stage_write(dlb_array *box, const void *host, dlb_error *err) {
  return stage(box, (char *)host, 1, err);
}

dlb_status dlb_stage_read_element(const dlb_array *a, void *host, dlb_error *err) {
  dlb_array one = *a; /* borrowed */
  one.ndim = 0;
  one.numel = 1;
  return stage(&one, host, 0, err);
}

dlb_status dlb_box_each(const dlb_array *a, int64_t max_elements,
                        dlb_status (*body)(const dlb_box *box, void *aux), void *aux) {
  int64_t inner = 1, item = (int64_t)dlb_array_itemsize(a), range;
  int split = a->ndim - 1;
  dlb_box box;
  box.first = 0;
  memset(box.origin, 0, sizeof box.origin);
  if (a->numel == 0) return DLB_OK;
  if (a->ndim == 0) {
    box.view = *a;
    return body(&box, aux);
  }
  if (max_elements < 1) max_elements = 1;
  /* The dims after split are whole (inner elements); split goes in ranges. */
  while (split > 0 && a->shape[split] <= max_elements / inner) inner *= a->shape[split--];
  range = max_elements / inner > 0 ? max_elements / inner : 1;
  for (;;) {
    for (int64_t j = 0; j < a->shape[split]; j += range) {
      int64_t offset = (int64_t)a->offset;
      dlb_status st;
      box.view = *a;
      box.origin[split] = j;
      for (int d = 0; d < split; d++) {
        box.view.shape[d] = 1;
        offset += box.origin[d] * a->strides[d] * item;
      }
      box.view.shape[split] = a->shape[split] - j < range ? a->shape[split] - j : range;
      box.view.offset = (size_t)(offset + j * a->strides[split] * item);
      box.view.numel = box.view.shape[split] * inner;
      if ((st = body(&box, aux)) != DLB_OK) return st;
      box.first += box.view.numel;
    }
    box.origin[split] = 0;
    int d = split - 1; /* the odometer over the dims before split */
    while (d >= 0 && ++box.origin[d] == a->shape[d]) box.origin[d--] = 0;
    if (d < 0) return DLB_OK;
  }
}

void dlb_box_region(const dlb_array *b, const dlb_box *box, dlb_array *out) {
  int64_t offset = (int64_t)b->offset, item = (int64_t)dlb_array_itemsize(b);
  *out = *b;
  for (int d = 0; d < b->ndim; d++) {
    out->shape[d] = box->view.shape[d];
    offset += box->origin[d] * b->strides[d] * item;
  }
  out->offset = (size_t)offset;
  out->numel = box->view.numel;
}
