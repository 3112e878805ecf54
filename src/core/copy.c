/* copy.c -- copies, casts and fills of arrays on any backend. Planned here,
 * run by the backends: the host's kernels for memory the host can address,
 * a device's own kernels and copy hooks for its memory, and otherwise the
 * staging fallback (boxes through host memory). A short copy within host
 * memory is one memcpy here (one_memcpy). */
#include <stdlib.h>
#include <string.h>
#include "copy.h"
#include "event.h"
#include "host.h"
#include "shape.h"
#include "staging.h"
#include "tensor.h"
#include "work.h"

/* An element's bytes, aligned for any dtype. */
typedef union element {
  unsigned char bytes[16];
  double align;
} element;

static dlb_status require_writable(const dlb_array *a, dlb_error *err) {
  if (!a->readonly && !a->buffer->readonly) return DLB_OK;
  return dlb_fail(err, DLB_E_READ_ONLY, "the array is read-only");
}

/* Whether the byte ranges the two arrays reach intersect. */
static int overlaps(const dlb_array *a, const dlb_array *b) {
  int64_t alo, ahi, blo, bhi;
  int64_t ia = (int64_t)dlb_array_itemsize(a), ib = (int64_t)dlb_array_itemsize(b);
  if (a->buffer != b->buffer || a->numel == 0 || b->numel == 0) return 0;
  if (dlb_shape_reach(a->ndim, a->shape, a->strides, &alo, &ahi, NULL) != DLB_OK ||
      dlb_shape_reach(b->ndim, b->shape, b->strides, &blo, &bhi, NULL) != DLB_OK)
    return 1;
  alo = (int64_t)a->offset + alo * ia;
  ahi = (int64_t)a->offset + (ahi + 1) * ia;
  blo = (int64_t)b->offset + blo * ib;
  bhi = (int64_t)b->offset + (bhi + 1) * ib;
  return alo < bhi && blo < ahi;
}

/* --- kernels ---------------------------------------------------------------- */

/* dst = cast(src) by the kernels' cast (both on the site's memory). */
static dlb_status kernel_cast(dlb_array *dst, const dlb_array *src, dlb_error *err) {
  const dlb_array *arrays[2] = {dst, src};
  dlb_kernel_error ke;
  dlb_tensor d, s;
  dlb_kernel_site site;
  dlb_status st = dlb_kernel_site_open(arrays, 2, &site, err);
  if (st != DLB_OK) return st;
  dlb_tensor_of(dst, &d);
  dlb_tensor_of(src, &s);
  ke.message[0] = 0;
  ke.hint = NULL;
  if ((st = site.kernels->cast(site.ctx, &d, &s, site.queue, &ke)) != DLB_OK)
    return dlb_kernel_failed(dst, st, &ke, "copy", err);
  return dlb_kernel_site_close(&site, arrays, 2, err);
}

/* Every element of dst = the element at value, by the kernels' fill. */
static dlb_status kernel_fill(dlb_array *dst, const void *value, dlb_error *err) {
  const dlb_array *arrays[1] = {dst};
  dlb_kernel_error ke;
  dlb_tensor d;
  dlb_kernel_site site;
  dlb_status st = dlb_kernel_site_open(arrays, 1, &site, err);
  if (st != DLB_OK) return st;
  dlb_tensor_of(dst, &d);
  ke.message[0] = 0;
  ke.hint = NULL;
  if ((st = site.kernels->fill(site.ctx, &d, value, site.queue, &ke)) != DLB_OK)
    return dlb_kernel_failed(dst, st, &ke, "fill", err);
  return dlb_kernel_site_close(&site, arrays, 1, err);
}

/* Whether the cast from src to dst can run as one kernel call: one
 * device (or both in host memory) whose kernels cast. */
static int one_kernel(const dlb_array *dst, const dlb_array *src) {
  const dlb_kernels *k = dlb_kernels_for(dst);
  if (!k || !k->cast || k != dlb_kernels_for(src)) return 0;
  if (dst->buffer->host && src->buffer->host) return 1;
  return dst->buffer->backend == src->buffer->backend &&
         dst->buffer->device_id == src->buffer->device_id;
}

/* --- moving data without kernels ---------------------------------------------- */

/* One copy_strided call within a backend (same dtype). */
static dlb_status hook_within(dlb_array *dst, const dlb_array *src, dlb_error *err) {
  dlb_buffer *db = dst->buffer, *sb = src->buffer;
  dlb_backend *be = db->backend;
  void *queue = dlb_backend_queue(be, db->device_id);
  dlb_strided_copy c = {dlb_array_itemsize(dst),
                        dst->ndim,
                        dst->shape,
                        {db->handle, db->device_id, dst->offset, NULL, dst->strides},
                        {sb->handle, sb->device_id, src->offset, NULL, src->strides},
                        queue};
  dlb_buffer *touched[2] = {db, sb};
  dlb_status st;
  if ((st = dlb_buffer_order_before(db, be, db->device_id, queue, err)) != DLB_OK ||
      (st = dlb_buffer_order_before(sb, be, db->device_id, queue, err)) != DLB_OK)
    return st;
  if ((st = be->ops.copy_strided(be->ctx, &c)) != DLB_OK)
    return dlb_backend_failed(be, st, "copy within its memory", err);
  return dlb_buffers_after_work(be, db->device_id, queue, touched, 2, err);
}

/* One copy_within call of contiguous arrays of one backend (same dtype). */
static dlb_status contiguous_within(dlb_array *dst, const dlb_array *src, dlb_error *err) {
  dlb_buffer *db = dst->buffer, *sb = src->buffer;
  dlb_backend *be = db->backend;
  dlb_status st;
  if ((st = dlb_buffer_sync_host(db, err)) != DLB_OK ||
      (st = dlb_buffer_sync_host(sb, err)) != DLB_OK)
    return st;
  st = be->ops.copy_within(be->ctx, db->device_id, db->handle, dst->offset, sb->device_id,
                           sb->handle, src->offset, (size_t)dst->numel * dlb_array_itemsize(dst));
  return st == DLB_OK ? DLB_OK : dlb_backend_failed(be, st, "copy within its memory", err);
}

/* Host scratch memory for staged boxes of both arrays' dtypes. */
typedef struct staged {
  dlb_array *dst;
  const dlb_array *src; /* NULL: fill from the scratch as it is */
  char *from, *to;      /* scratch in src's and dst's dtype (one, when they match) */
  dlb_error *err;
} staged;

/* One box of a staged copy: src's region into scratch, cast, into dst. */
static dlb_status staged_box(const dlb_box *box, void *aux) {
  staged *s = aux;
  dlb_array region, view = box->view;
  size_t n = (size_t)view.numel;
  dlb_status st = DLB_OK;
  dlb_error *err = s->err;
  if (s->src) {
    dlb_box_region(s->src, box, &region);
    if ((st = dlb_stage_read(&region, s->from, err)) == DLB_OK && s->to != s->from)
      st = dlb_host.cast(s->dst->dtype, s->to, (ptrdiff_t)dlb_array_itemsize(s->dst), s->src->dtype,
                         s->from, (ptrdiff_t)dlb_array_itemsize(s->src), n, err);
  }
  if (st == DLB_OK) st = dlb_stage_write(&view, s->to, err);
  if (st != DLB_OK) return st;
  return dlb_work_tick(dlb_work_current(), (int64_t)n) ? DLB_E_INTERRUPTED : DLB_OK;
}

/* The boxes' size for two scratch buffers of these items. */
static int64_t box_elements(size_t item) { return (int64_t)(DLB_STAGING_BYTES / item); }

/* dst = cast(src) or dst = value through host memory, box by box. */
static dlb_status copy_staged(dlb_array *dst, const dlb_array *src, const element *value,
                              dlb_error *err) {
  size_t ditem = dlb_array_itemsize(dst), sitem = src ? dlb_array_itemsize(src) : ditem;
  size_t item = ditem > sitem ? ditem : sitem;
  int64_t cap = box_elements(item), n = dst->numel < cap ? dst->numel : cap;
  staged s = {dst, src, NULL, NULL, err};
  dlb_status st;
  s.to = malloc((size_t)n * item);
  s.from = src && src->dtype != dst->dtype ? malloc((size_t)n * item) : s.to;
  if (!s.to || !s.from) {
    if (s.from != s.to) free(s.from);
    free(s.to);
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a staging buffer");
  }
  if (value)
    for (int64_t k = 0; k < n; k++) memcpy(s.to + (size_t)k * ditem, value->bytes, ditem);
  st = dlb_box_each(dst, cap, staged_box, &s);
  if (st == DLB_E_INTERRUPTED && dlb_work_current() && dlb_work_current()->interrupted)
    st = DLB_OK; /* the work's end reports it */
  if (s.from != s.to) free(s.from);
  free(s.to);
  return st;
}

/* One box of a device array straight to or from its place in contiguous
 * host memory. */
typedef struct direct {
  char *host;
  int writing;
  dlb_error *err;
} direct;

static dlb_status direct_box(const dlb_box *box, void *aux) {
  direct *d = aux;
  dlb_array view = box->view;
  char *mine = d->host + (size_t)box->first * dlb_array_itemsize(&view);
  dlb_status st =
      d->writing ? dlb_stage_write(&view, mine, d->err) : dlb_stage_read(&view, mine, d->err);
  if (st != DLB_OK) return st;
  return dlb_work_tick(dlb_work_current(), view.numel) ? DLB_E_INTERRUPTED : DLB_OK;
}

/* The device array dev to or from contiguous host memory (same dtype): a
 * contiguous one in one call, another in boxes of bounded span. */
static dlb_status device_host(dlb_array *dev, char *host, int writing, dlb_error *err) {
  direct d = {host, writing, err};
  dlb_status st;
  if (dlb_array_is_contiguous(dev))
    return writing ? dlb_stage_write(dev, host, err) : dlb_stage_read(dev, host, err);
  st = dlb_box_each(dev, box_elements(dlb_array_itemsize(dev)), direct_box, &d);
  if (st == DLB_E_INTERRUPTED && dlb_work_current() && dlb_work_current()->interrupted)
    st = DLB_OK; /* the work's end reports it */
  return st;
}

/* Whether dst = src, of the same dtype and both contiguous, is one memcpy
 * (a cast to the same dtype copies bytes): both in host memory with nothing
 * queued on either, and fewer elements than pass between two looks at the
 * interrupt (a kernel would not look on the way either). The kernel site
 * costs more than such a copy (a:copy() of 10 elements). */
static int one_memcpy(const dlb_buffer *db, const dlb_buffer *sb, int64_t numel) {
  return db->host && sb->host && !db->pending && !sb->pending && numel < DLB_WORK_CHECK_EVERY;
}

/* dst = cast(src): shapes match, dst writable, no overlap, not empty. */
static dlb_status move(dlb_array *dst, const dlb_array *src, dlb_error *err) {
  dlb_buffer *db = dst->buffer, *sb = src->buffer;
  int same = dst->dtype == src->dtype;
  int dst_whole = dlb_array_is_contiguous(dst), src_whole = dlb_array_is_contiguous(src);
  dlb_status st;
  if (same && dst_whole && src_whole && one_memcpy(db, sb, dst->numel)) {
    memcpy(dlb_array_host_data(dst), dlb_array_host_data(src),
           (size_t)dst->numel * dlb_array_itemsize(dst));
    return DLB_OK;
  }
  if (one_kernel(dst, src)) return kernel_cast(dst, src, err);
  if (same && db->host && !sb->host && dst_whole)
    return (st = dlb_buffer_sync_host(db, err)) != DLB_OK
               ? st
               : device_host((dlb_array *)src, dlb_array_host_data(dst), 0, err);
  if (same && sb->host && !db->host && src_whole)
    return (st = dlb_buffer_sync_host(sb, err)) != DLB_OK
               ? st
               : device_host(dst, dlb_array_host_data(src), 1, err);
  if (same && db->backend == sb->backend && !db->host && !sb->host) {
    if (db->backend->ops.copy_strided) return hook_within(dst, src, err);
    if (db->backend->ops.copy_within && dst_whole && src_whole)
      return contiguous_within(dst, src, err);
  }
  return copy_staged(dst, src, NULL, err);
}

/* --- the entry points ------------------------------------------------------------ */

static dlb_status copy_into(dlb_array *dst, const dlb_array *src, dlb_error *err) {
  dlb_status st;
  if (!dlb_shape_equal(dst->ndim, dst->shape, src->ndim, src->shape))
    return dlb_fail(err, DLB_E_SHAPE, "copy between different shapes");
  if ((st = require_writable(dst, err)) != DLB_OK) return st;
  if (dst->numel == 0) return DLB_OK;
  if (overlaps(dst, src)) {
    dlb_array tmp;
    if ((st = dlb_array_clone(&tmp, src, src->dtype, err)) != DLB_OK) return st;
    st = copy_into(dst, &tmp, err);
    dlb_array_release(&tmp);
    return st;
  }
  return move(dst, src, err);
}

static dlb_status fill(dlb_array *dst, const dlb_scalar *v, dlb_error *err) {
  const dlb_kernels *k;
  element e;
  dlb_status st;
  if ((st = dlb_scalar_store(dst->dtype, e.bytes, v, err)) != DLB_OK) return st;
  if ((st = require_writable(dst, err)) != DLB_OK) return st;
  if (dst->numel == 0) return DLB_OK;
  if ((k = dlb_kernels_for(dst)) && k->fill) return kernel_fill(dst, e.bytes, err);
  return copy_staged(dst, NULL, &e, err);
}

/* Allocates out on (backend, device_id) and copies src into it. A short
 * contiguous copy to the same dtype in host memory (a:copy() of a small
 * array) is one memcpy after the same look at the host's bounds, without
 * the checks and plan a copy into an existing array needs (some 110 of the
 * 2,700 instructions of a 10-element a:copy()). */
static dlb_status clone_onto(dlb_array *out, const dlb_array *src, dlb_backend *backend,
                             int device_id, dlb_dtype dtype, dlb_error *err) {
  dlb_status st = dlb_array_allocate(out, backend, device_id, dtype, src->ndim, src->shape, 0, err);
  if (st != DLB_OK) return st;
  if (dtype == src->dtype && one_memcpy(out->buffer, src->buffer, src->numel) &&
      dlb_array_is_contiguous(src)) {
    if ((st = dlb_work_admit(dlb_array_budget(out), out->numel, "copy", err)) == DLB_OK)
      memcpy(dlb_array_host_data(out), dlb_array_host_data(src),
             (size_t)out->numel * dlb_array_itemsize(out));
  } else {
    st = dlb_array_copy_into(out, src, err);
  }
  if (st != DLB_OK) dlb_array_release(out);
  return st;
}

dlb_status dlb_array_clone(dlb_array *out, const dlb_array *src, dlb_dtype dtype, dlb_error *err) {
  return clone_onto(out, src, src->buffer->backend, src->buffer->device_id, dtype, err);
}

dlb_status dlb_array_clone_to(dlb_array *out, const dlb_array *src, dlb_backend *backend,
                              int device_id, dlb_error *err) {
  return clone_onto(out, src, backend, device_id, src->dtype, err);
}

/* DLB_E_INDEX unless every index is within its extent. */
static dlb_status check_index(const dlb_array *a, const int64_t *index, dlb_error *err) {
  for (int d = 0; d < a->ndim; d++)
    if (index[d] < 0 || index[d] >= a->shape[d])
      return dlb_fail(err, DLB_E_INDEX, "index %lld out of range for dimension %d of extent %lld",
                      dlb_one_based(index[d]), d + 1, (long long)a->shape[d]);
  return DLB_OK;
}

/* The element at index as a 0-d view of a (borrowed). */
static dlb_array element_view(const dlb_array *a, const int64_t *index) {
  dlb_array one = *a;
  int64_t off = 0;
  for (int d = 0; d < a->ndim; d++) off += index[d] * a->strides[d];
  one.ndim = 0;
  one.numel = 1;
  one.offset = (size_t)((int64_t)a->offset + off * (int64_t)dlb_array_itemsize(a));
  return one;
}

dlb_status dlb_array_get(const dlb_array *a, const int64_t *index, dlb_scalar *out,
                         dlb_error *err) {
  element e;
  dlb_array one;
  dlb_status st = check_index(a, index, err);
  if (st != DLB_OK) return st;
  one = element_view(a, index);
  if ((st = dlb_stage_read(&one, e.bytes, err)) != DLB_OK) return st;
  dlb_scalar_load(a->dtype, e.bytes, out);
  return DLB_OK;
}

dlb_status dlb_array_set(dlb_array *a, const int64_t *index, const dlb_scalar *v, dlb_error *err) {
  element e;
  dlb_array one;
  dlb_status st = require_writable(a, err);
  if (st != DLB_OK || (st = check_index(a, index, err)) != DLB_OK) return st;
  if ((st = dlb_scalar_store(a->dtype, e.bytes, v, err)) != DLB_OK) return st;
  one = element_view(a, index);
  return dlb_stage_write(&one, e.bytes, err);
}

/* Host memory of n elements of dtype, row-major: the other side of a read
 * or a write. */
typedef struct host_side {
  char *data;
  dlb_dtype dtype;
  int writing; /* 1: host -> array */
  char *scratch;
  dlb_error *err;
} host_side;

/* One box between the array and host memory (a cast where dtypes differ). */
static dlb_status host_box(const dlb_box *box, void *aux) {
  host_side *h = aux;
  dlb_array view = box->view;
  size_t n = (size_t)view.numel, item = dlb_array_itemsize(&view);
  size_t hitem = dlb_dtype_get(h->dtype)->itemsize;
  char *mine = h->data + (size_t)box->first * hitem;
  dlb_status st = DLB_OK;
  if (h->dtype == view.dtype) {
    st = h->writing ? dlb_stage_write(&view, mine, h->err) : dlb_stage_read(&view, mine, h->err);
  } else if (h->writing) {
    st = dlb_host.cast(view.dtype, h->scratch, (ptrdiff_t)item, h->dtype, mine, (ptrdiff_t)hitem, n,
                       h->err);
    if (st == DLB_OK) st = dlb_stage_write(&view, h->scratch, h->err);
  } else {
    st = dlb_stage_read(&view, h->scratch, h->err);
    if (st == DLB_OK)
      st = dlb_host.cast(h->dtype, mine, (ptrdiff_t)hitem, view.dtype, h->scratch, (ptrdiff_t)item,
                         n, h->err);
  }
  if (st != DLB_OK) return st;
  return dlb_work_tick(dlb_work_current(), (int64_t)n) ? DLB_E_INTERRUPTED : DLB_OK;
}

/* One strided host cast between a's memory and packed memory of dtype. */
static dlb_status host_direct(dlb_array *a, char *data, dlb_dtype dtype, int writing,
                              dlb_error *err) {
  int64_t mine[DLB_MAX_NDIM], packed[DLB_MAX_NDIM], item = (int64_t)dlb_array_itemsize(a);
  int64_t hitem = (int64_t)dlb_dtype_get(dtype)->itemsize;
  dlb_status st = dlb_buffer_sync_host(a->buffer, err);
  if (st != DLB_OK) return st;
  dlb_shape_contiguous_strides(a->ndim, a->shape, packed);
  for (int d = 0; d < a->ndim; d++) {
    mine[d] = a->shape[d] == 1 ? 0 : a->strides[d] * item;
    packed[d] = a->shape[d] == 1 ? 0 : packed[d] * hitem;
  }
  return writing ? dlb_host.cast_strided(a->dtype, dlb_array_host_data(a), mine, dtype, data,
                                         packed, a->ndim, a->shape, err)
                 : dlb_host.cast_strided(dtype, data, packed, a->dtype, dlb_array_host_data(a),
                                         mine, a->ndim, a->shape, err);
}

/* a's elements (row-major) to or from contiguous host memory of dtype. */
static dlb_status host_transfer(dlb_array *a, char *data, dlb_dtype dtype, int writing,
                                dlb_error *err) {
  size_t item = dlb_array_itemsize(a);
  int64_t cap = box_elements(item), n = a->numel < cap ? a->numel : cap;
  host_side h = {data, dtype, writing, NULL, err};
  dlb_status st;
  if (a->numel == 0) return DLB_OK;
  if (a->buffer->host) return host_direct(a, data, dtype, writing, err);
  if (dtype != a->dtype && !(h.scratch = malloc((size_t)n * item)))
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a staging buffer");
  st = dlb_box_each(a, cap, host_box, &h);
  if (st == DLB_E_INTERRUPTED && dlb_work_current() && dlb_work_current()->interrupted)
    st = DLB_OK; /* the work's end reports it */
  free(h.scratch);
  return st;
}

static dlb_status read_into(const dlb_array *a, void *dst, dlb_dtype dtype, dlb_error *err) {
  return host_transfer((dlb_array *)a, dst, dtype, 0, err);
}

static dlb_status write_from(dlb_array *a, const void *src, dlb_dtype dtype, dlb_error *err) {
  dlb_status st = require_writable(a, err);
  return st != DLB_OK ? st : host_transfer(a, (char *)src, dtype, 1, err);
}

/* The public entry points: each one call of bounded work (work.h). */

dlb_status dlb_array_copy_into(dlb_array *dst, const dlb_array *src, dlb_error *err) {
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(dst), dst->numel, "copy", err);
  return st != DLB_OK ? st : dlb_work_end(&w, copy_into(dst, src, err), "copy", err);
}

dlb_status dlb_array_fill(dlb_array *dst, const dlb_scalar *v, dlb_error *err) {
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(dst), dst->numel, "fill", err);
  return st != DLB_OK ? st : dlb_work_end(&w, fill(dst, v, err), "fill", err);
}

dlb_status dlb_array_read_into(const dlb_array *a, void *dst, dlb_dtype dtype, dlb_error *err) {
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(a), a->numel, "read", err);
  return st != DLB_OK ? st : dlb_work_end(&w, read_into(a, dst, dtype, err), "read", err);
}

dlb_status dlb_array_write_from(dlb_array *a, const void *src, dlb_dtype dtype, dlb_error *err) {
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(a), a->numel, "write", err);
  return st != DLB_OK ? st : dlb_work_end(&w, write_from(a, src, dtype, err), "write", err);
}

dlb_status dlb_array_as_dtype(const dlb_array *a, dlb_dtype dtype, dlb_array *out, dlb_error *err) {
  out->buffer = NULL;
  if (a->dtype == dtype) {
    dlb_array_share(out, a);
    return DLB_OK;
  }
  return dlb_array_clone(out, a, dtype, err);
}
