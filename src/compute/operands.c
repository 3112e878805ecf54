/* operands.c -- device checks, broadcasting and `out` checks shared by every
 * compute operation. */
#include <stdio.h>
#include <string.h>
#include "operands.h"
#include "../core/shape.h"
#include "../core/tensor.h"

/* The hint of an out array on another device than the operands. */
#define OUT_DEVICE_HINT "make out where the operands are: dl.zeros(shape, {device = x.device})"

/* The device an array's memory is on; wrapped host memory counts as cpu:0. */
static dlb_placement placement_of(const dlb_array *a, dlb_backend *cpu) {
  dlb_placement p = {a->buffer->backend, a->buffer->device_id};
  if (!p.backend) {
    p.backend = cpu;
    p.device_id = 0;
  }
  return p;
}

/* Whether the host can address the buffer's memory (an empty buffer has no
 * pointer: its backend decides). */
static int host_addressable(const dlb_buffer *b) {
  return b->host || (b->nbytes == 0 && (!b->backend || b->backend->ops.host_pointer));
}

static void placement_name(const dlb_placement *p, char *out, size_t size) {
  snprintf(out, size, "%s:%d", p->backend->name, p->device_id);
}

/* The kernel entry at `entry` of a table (NULL when the table lacks it). */
static const void *entry_of(const dlb_kernels *k, size_t entry) {
  const void *f = NULL;
  if (k) memcpy(&f, (const char *)k + entry, sizeof f);
  return f;
}

dlb_status dlb_check_operands_for(int n, const dlb_operand *in, dlb_backend *cpu, size_t entry,
                                  dlb_placement *where, const char *op, dlb_error *err) {
  int have = 0;
  where->backend = cpu;
  where->device_id = 0;
  for (int k = 0; k < n; k++) {
    const dlb_array *a = in[k].array;
    dlb_placement p;
    if (!a) continue;
    if (!a->buffer) return dlb_fail(err, DLB_E_DELETED, "%s: argument %d was deleted", op, k + 1);
    p = placement_of(a, cpu);
    if (have && (p.backend != where->backend || p.device_id != where->device_id)) {
      char first[48], other[48];
      placement_name(where, first, sizeof first);
      placement_name(&p, other, sizeof other);
      dlb_fail(err, DLB_E_ARGUMENT, "%s: operands on different devices (%s and %s)", op, first,
               other);
      dlb_error_hint(err, "move them to one device first with dl.device_put(a, device)");
      return DLB_E_ARGUMENT;
    }
    if (entry != DLB_ANY_MEMORY && !entry_of(dlb_kernels_for(a), entry) &&
        !(a->buffer->nbytes == 0 && host_addressable(a->buffer))) {
      char name[48];
      placement_name(&p, name, sizeof name);
      dlb_fail(err, DLB_E_UNSUPPORTED, "%s: %s has no kernel for it (its memory is not the host's)",
               op, name);
      dlb_error_hint(err, "compute on the host: dl.device_put(a, \"cpu\") first");
      if (err) {
        snprintf(err->backend, sizeof err->backend, "%s", p.backend->name);
        snprintf(err->device, sizeof err->device, "%s", name);
      }
      return DLB_E_UNSUPPORTED;
    }
    *where = p;
    have = 1;
  }
  return DLB_OK;
}

dlb_status dlb_check_arrays_for(int n, const dlb_array *const *arrays, dlb_backend *cpu,
                                size_t entry, dlb_placement *where, const char *op,
                                dlb_error *err) {
  dlb_operand in[4];
  for (int k = 0; k < n; k++) in[k].array = arrays[k];
  return dlb_check_operands_for(n, in, cpu, entry, where, op, err);
}

/* SHAPE naming every array operand's shape, in argument order. */
static dlb_status broadcast_failed(int n, const dlb_operand *in, const char *op, dlb_error *err) {
  char text[200];
  size_t len = 0;
  text[0] = 0;
  for (int k = 0; k < n && len < sizeof text; k++) {
    if (!in[k].array) continue;
    if (len) len += (size_t)snprintf(text + len, sizeof text - len, " and ");
    if (len < sizeof text)
      dlb_shape_text(in[k].array->ndim, in[k].array->shape, text + len, sizeof text - len);
    len = strlen(text);
  }
  dlb_fail(err, DLB_E_SHAPE, "%s: shapes %s do not broadcast together", op, text);
  dlb_error_hint(err, "extents must match or be 1, aligned from the last dim: add dims with "
                      "a:unsqueeze(d), or reduce with keepdims = true");
  return DLB_E_SHAPE;
}

dlb_status dlb_broadcast_shapes(int n, const dlb_operand *in, int *ndim, int64_t *shape,
                                const char *op, dlb_error *err) {
  int nd = 0;
  for (int k = 0; k < n; k++)
    if (in[k].array && in[k].array->ndim > nd) nd = in[k].array->ndim;
  for (int d = 0; d < nd; d++) shape[d] = 1;
  for (int k = 0; k < n; k++) {
    const dlb_array *a = in[k].array;
    if (!a) continue;
    for (int d = 0; d < a->ndim; d++) {
      int64_t e = a->shape[d], *r = &shape[nd - a->ndim + d];
      if (e == *r || e == 1) continue;
      if (*r == 1) {
        *r = e;
        continue;
      }
      return broadcast_failed(n, in, op, err);
    }
  }
  *ndim = nd;
  return DLB_OK;
}

dlb_status dlb_broadcast_stacks(const dlb_array *a, int na, const dlb_array *b, int nb, int *nbatch,
                                int64_t *batch, const char *op, dlb_error *err) {
  char sa[160], sb[160];
  *nbatch = na > nb ? na : nb;
  for (int d = 0; d < *nbatch; d++) batch[d] = 1;
  for (int k = 0; k < 2; k++) {
    const dlb_array *x = k ? b : a;
    int nx = k ? nb : na;
    for (int d = 0; d < nx; d++) {
      int64_t e = x->shape[d], *r = &batch[*nbatch - nx + d];
      if (e == *r || e == 1) continue;
      if (*r != 1) {
        dlb_shape_text(a->ndim, a->shape, sa, sizeof sa);
        dlb_shape_text(b->ndim, b->shape, sb, sizeof sb);
        dlb_fail(err, DLB_E_SHAPE, "%s: the stack dims of shapes %s and %s do not broadcast", op,
                 sa, sb);
        dlb_error_hint(err, "the dims before the matrices broadcast as in NumPy: equal "
                            "extents, or 1 on either side");
        return DLB_E_SHAPE;
      }
      *r = e;
    }
  }
  return DLB_OK;
}

dlb_status dlb_check_host_memory(const dlb_array *a, const char *op, dlb_error *err) {
  if (a->buffer->host || a->buffer->nbytes == 0) return DLB_OK;
  dlb_fail(err, DLB_E_UNSUPPORTED, "%s: the host cannot address the memory of %s:%d", op,
           a->buffer->backend ? a->buffer->backend->name : "?", a->buffer->device_id);
  dlb_error_hint(err, "it runs on the host: dl.device_put(a, \"cpu\") first");
  return DLB_E_UNSUPPORTED;
}

void dlb_broadcast_strides(const dlb_array *a, int ndim, const int64_t *shape, int64_t *strides) {
  int lead = ndim - a->ndim;
  for (int d = 0; d < ndim; d++) {
    int s = d - lead;
    strides[d] = s < 0 || (a->shape[s] == 1 && shape[d] != 1) ? 0 : a->strides[s];
  }
}

/* The checks of dlb_check_out but where the memory is. */
static dlb_status check_out_array(const dlb_array *out, dlb_dtype result, int ndim,
                                  const int64_t *shape, const char *op, dlb_error *err) {
  if (!out->buffer) return dlb_fail(err, DLB_E_DELETED, "%s: the out array was deleted", op);
  if (out->readonly || out->buffer->readonly)
    return dlb_fail(err, DLB_E_READ_ONLY, "%s: the out array is read-only", op);
  if (!dlb_shape_equal(out->ndim, out->shape, ndim, shape)) {
    char so[160], sr[160];
    dlb_shape_text(out->ndim, out->shape, so, sizeof so);
    dlb_shape_text(ndim, shape, sr, sizeof sr);
    return dlb_fail(err, DLB_E_SHAPE, "%s: out has shape %s, the result has shape %s", op, so, sr);
  }
  if (!dlb_can_cast_same_kind(result, out->dtype))
    return dlb_fail(err, DLB_E_DTYPE, "%s: a %s result cannot be written into a %s out array", op,
                    dlb_dtype_get(result)->name, dlb_dtype_get(out->dtype)->name);
  return DLB_OK;
}

dlb_status dlb_check_out(const dlb_array *out, dlb_dtype result, int ndim, const int64_t *shape,
                         const dlb_placement *where, const char *op, dlb_error *err) {
  dlb_placement p;
  dlb_status st = check_out_array(out, result, ndim, shape, op, err);
  if (st != DLB_OK) return st;
  p.backend = out->buffer->backend;
  p.device_id = out->buffer->device_id;
  /* Wrapped host memory (no backend) is the host's: fine where the host's
   * kernels compute. */
  if (p.backend ? p.backend != where->backend || p.device_id != where->device_id
                : !dlb_backend_host_computes(where->backend)) {
    dlb_fail(err, DLB_E_ARGUMENT, "%s: out is on another device than the operands", op);
    dlb_error_hint(err, OUT_DEVICE_HINT);
    return DLB_E_ARGUMENT;
  }
  return DLB_OK;
}

/* [first, last) byte range of a's elements within its buffer. */
static void byte_range(const dlb_array *a, size_t *first, size_t *last) {
  int64_t lo = 0, hi = 0, itemsize = (int64_t)dlb_array_itemsize(a);
  for (int d = 0; d < a->ndim; d++) {
    int64_t span = (a->shape[d] - 1) * a->strides[d] * itemsize;
    if (span < 0) lo += span;
    else hi += span;
  }
  *first = (size_t)((int64_t)a->offset + lo);
  *last = (size_t)((int64_t)a->offset + hi + itemsize);
}

int dlb_arrays_overlap(const dlb_array *a, const dlb_array *b) {
  size_t a0, a1, b0, b1;
  if (!a->buffer || !b->buffer || a->numel == 0 || b->numel == 0) return 0;
  if (a->buffer != b->buffer) {
    /* Two buffers may still wrap the same host memory (an import of an export). */
    const char *pa = a->buffer->host, *pb = b->buffer->host;
    if (!pa || !pb) return 0;
    byte_range(a, &a0, &a1);
    byte_range(b, &b0, &b1);
    return (uintptr_t)pa + a0 < (uintptr_t)pb + b1 && (uintptr_t)pb + b0 < (uintptr_t)pa + a1;
  }
  byte_range(a, &a0, &a1);
  byte_range(b, &b0, &b1);
  return a0 < b1 && b0 < a1;
}

int dlb_arrays_same_layout(const dlb_array *a, const dlb_array *b) {
  if (!a->buffer || !b->buffer) return 0;
  /* Memory the host cannot address has no host pointers to compare. */
  if (a->buffer->host || b->buffer->host ? dlb_array_host_data(a) != dlb_array_host_data(b)
                                         : a->buffer != b->buffer || a->offset != b->offset)
    return 0;
  if (a->ndim != b->ndim || dlb_array_itemsize(a) != dlb_array_itemsize(b)) return 0;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d] || (a->shape[d] > 1 && a->strides[d] != b->strides[d])) return 0;
  return 1;
}
