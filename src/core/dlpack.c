/* dlpack.c -- DLPack export and import of core arrays, both ABIs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "copy.h"
#include "dlpack.h"
#include "event.h"
#include "shape.h"

/* ---- export ---------------------------------------------------------------- */

/* The manager_ctx of every tensor dlbridge exports: the tensor itself, its
 * shape and strides, and the buffer reference that keeps the memory alive. */
typedef struct export_ctx {
  union {
    DLManagedTensorVersioned versioned;
    DLManagedTensor legacy;
  } tensor;
  dlb_buffer *buffer;
  size_t offset; /* the exported array's offset in the buffer */
  int32_t ndim;  /* the exported array's */
  /* shape[ndim], strides[ndim] (the tensor's), then exported[ndim]: the
   * strides as exported, out of the consumer's reach, so that a round trip
   * keeps them and a consumer's changes are noticed. Allocated to size. */
  int64_t dims[];
} export_ctx;

/* What a size-0 tensor's data points at: never read or written, but not
 * NULL (LibTorch 1.13 never calls the deleter of a tensor whose data is
 * NULL; NumPy exports a pointer too) and aligned as the cpu backend's
 * buffers are. */
static _Alignas(64) unsigned char empty_data[64];

/* Deleters: drop the buffer reference (atomic, any thread, no Lua). */
static void delete_versioned(DLManagedTensorVersioned *self) {
  export_ctx *ctx = self->manager_ctx;
  dlb_buffer_release(ctx->buffer);
  free(ctx);
}

static void delete_legacy(DLManagedTensor *self) {
  export_ctx *ctx = self->manager_ctx;
  dlb_buffer_release(ctx->buffer);
  free(ctx);
}

void dlb_dlpack_delete(dlb_exported t) {
  if (!t.tensor) return;
  if (t.versioned) {
    DLManagedTensorVersioned *v = t.tensor;
    if (v->deleter) v->deleter(v);
  } else {
    DLManagedTensor *l = t.tensor;
    if (l->deleter) l->deleter(l);
  }
}

int dlb_dlpack_host_reachable(int32_t device_type) {
  return device_type == kDLCPU || device_type == kDLCUDAHost || device_type == kDLCUDAManaged ||
         device_type == kDLROCMHost;
}

/* Device types whose pointers allow arithmetic (data + offset); the others
 * (OpenCL, Vulkan, Metal, ...) get the offset in byte_offset. */
static int pointer_arithmetic_ok(int32_t device_type) {
  return dlb_dlpack_host_reachable(device_type) || device_type == kDLCUDA || device_type == kDLROCM;
}

/* BACKEND_INCOMPATIBLE: b's backend cannot hand out a pointer to its memory. */
static dlb_status incompatible(const dlb_buffer *b, dlb_error *err) {
  dlb_fail(err, DLB_E_BACKEND_INCOMPATIBLE,
           "backend '%s' cannot hand out a device pointer, so %s:%d memory cannot be exported "
           "to DLPack",
           b->backend->name, b->backend->name, b->device_id);
  if (err) {
    strcpy(err->backend, b->backend->name);
    snprintf(err->device, sizeof err->device, "%s:%d", b->backend->name, b->device_id);
  }
  return DLB_E_BACKEND_INCOMPATIBLE;
}

dlb_status dlb_dlpack_describe(const dlb_array *a, DLTensor *t, int64_t *shape, int64_t *strides,
                               dlb_error *err) {
  dlb_buffer *b = a->buffer;
  int32_t device_type = b->backend->ops.device_type;
  void *base = b->host;
  /* A size-0 array has no data to point at (and may sit on a backend without
   * an export hook: nothing is asked of it). */
  if (!base && b->handle && a->numel > 0) {
    dlb_status st;
    if (!b->backend->ops.export_pointer) return incompatible(b, err);
    st = b->backend->ops.export_pointer(b->backend->ctx, b->device_id, b->handle, &base);
    if (st != DLB_OK) return dlb_backend_failed(b->backend, st, "export a device pointer", err);
  }
  if (a->ndim > 0) {
    memcpy(shape, a->shape, (size_t)a->ndim * sizeof a->shape[0]);
    memcpy(strides, a->strides, (size_t)a->ndim * sizeof a->strides[0]);
  }
  t->device.device_type = (DLDeviceType)device_type;
  t->device.device_id = b->device_id;
  t->ndim = a->ndim;
  t->dtype = dlb_dtype_to_dl(a->dtype);
  t->shape = a->ndim ? shape : NULL;
  t->strides = a->ndim ? strides : NULL;
  if (a->numel == 0) { /* whether or not there is memory, and wherever the view sits */
    t->data = empty_data;
    t->byte_offset = 0;
  } else if (pointer_arithmetic_ok(device_type)) {
    t->data = (char *)base + a->offset;
    t->byte_offset = 0;
  } else {
    t->data = base;
    t->byte_offset = a->offset;
  }
  return DLB_OK;
}

/* Wraps a (sharing its buffer) as a managed tensor of the requested ABI. */
static dlb_status wrap(const dlb_array *a, int versioned, uint64_t flags, dlb_exported *out,
                       dlb_error *err) {
  export_ctx *ctx = malloc(sizeof *ctx + 3 * (size_t)a->ndim * sizeof(int64_t));
  dlb_status st;
  if (!ctx) return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a DLPack tensor");
  ctx->buffer = a->buffer;
  ctx->offset = a->offset;
  ctx->ndim = a->ndim;
  if (a->ndim) memcpy(ctx->dims + 2 * a->ndim, a->strides, (size_t)a->ndim * sizeof a->strides[0]);
  if (versioned) {
    DLManagedTensorVersioned *v = &ctx->tensor.versioned;
    v->version.major = DLB_DLPACK_MAJOR;
    v->version.minor = DLB_DLPACK_MINOR;
    v->manager_ctx = ctx;
    v->deleter = delete_versioned;
    v->flags = flags;
    st = dlb_dlpack_describe(a, &v->dl_tensor, ctx->dims, ctx->dims + a->ndim, err);
  } else {
    DLManagedTensor *l = &ctx->tensor.legacy;
    l->manager_ctx = ctx;
    l->deleter = delete_legacy;
    st = dlb_dlpack_describe(a, &l->dl_tensor, ctx->dims, ctx->dims + a->ndim, err);
  }
  if (st != DLB_OK) {
    free(ctx);
    return st;
  }
  dlb_buffer_retain(a->buffer);
  out->versioned = versioned;
  out->tensor = ctx;
  return DLB_OK;
}

/* Where a copy must go: the dl_device the consumer named, the host for a
 * fallback, else the array's own device. */
static dlb_status copy_target(const dlb_array *a, const dlb_export_request *req, int host_copy,
                              dlb_backend **backend, int *device_id, dlb_error *err) {
  dlb_buffer *b = a->buffer;
  *backend = b->backend;
  *device_id = b->device_id;
  if (req->has_dl_device) {
    if ((int32_t)req->dl_device.device_type == b->backend->ops.device_type &&
        req->dl_device.device_id == b->device_id)
      return DLB_OK;
    if (req->dl_device.device_type == kDLCPU && req->dl_device.device_id == 0 && req->host) {
      *backend = req->host;
      *device_id = 0;
      return DLB_OK;
    }
    dlb_fail(err, DLB_E_UNSUPPORTED, "cannot export to DLPack device (%d, %d)",
             (int)req->dl_device.device_type, (int)req->dl_device.device_id);
    dlb_error_hint(err, "leave dl_device nil, or ask for the array's own device or {1, 0} (host)");
    return DLB_E_UNSUPPORTED;
  }
  if (host_copy) {
    *backend = req->host;
    *device_id = 0;
  }
  return DLB_OK;
}

/* Whether a's strides are what the layout asks for (dims of extent 1 and
 * size-0 arrays have any strides: no element is reached through them). */
static int has_layout(const dlb_array *a, int32_t layout) {
  int64_t expected = 1;
  if (layout == DLB_LAYOUT_ANY || a->numel == 0) return 1;
  for (int d = a->ndim - 1; d >= 0; d--) {
    if (a->shape[d] == 1) continue;
    if (layout == DLB_LAYOUT_NONNEGATIVE ? a->strides[d] < 0 : a->strides[d] != expected) return 0;
    expected *= a->shape[d]; /* <= numel: no overflow */
  }
  return 1;
}

dlb_status dlb_dlpack_export(const dlb_array *a, const dlb_export_request *req, dlb_exported *out,
                             dlb_error *err) {
  dlb_buffer *b = a->buffer;
  int readonly = a->readonly || b->readonly;
  int can_export = b->host || b->backend->ops.export_pointer || a->numel == 0;
  int host_copy = !can_export && req->fallback_host;
  int other_device =
      req->has_dl_device && ((int32_t)req->dl_device.device_type != b->backend->ops.device_type ||
                             req->dl_device.device_id != b->device_id);
  /* The legacy ABI has no read-only flag: only a copy may leave. */
  int legacy_readonly = readonly && !req->versioned;
  int layout_copy = !has_layout(a, req->layout);
  int must_copy =
      host_copy || other_device || req->copy == DLB_COPY_ALWAYS || legacy_readonly || layout_copy;
  dlb_backend *target;
  int target_id;
  dlb_array copy;
  dlb_status st;
  out->tensor = NULL;
  /* A stream belongs to the device the tensor goes out on: dl_device's, when
   * that is another device (where the copy, if any, orders after it). */
  if (req->has_stream && req->stream != -1 && !other_device && !b->backend->ops.stream_wait) {
    dlb_fail(err, DLB_E_ARGUMENT, "stream %lld given for %s memory, which has no streams",
             (long long)req->stream, b->backend->name);
    dlb_error_hint(err, "leave stream nil (or -1) for memory without streams, such as the host's");
    return DLB_E_ARGUMENT;
  }
  if (!can_export && !req->fallback_host && !other_device) return incompatible(b, err);
  if (must_copy && req->copy == DLB_COPY_NEVER) {
    dlb_fail(err, DLB_E_COPY_REQUIRED, "copy = false, but only a copy can satisfy this export (%s)",
             host_copy         ? "the backend cannot export; fallback copies"
             : other_device    ? "dl_device names another device"
             : legacy_readonly ? "the array is read-only and a legacy tensor has no read-only flag"
                               : "the array does not have the layout asked for");
    dlb_error_hint(err, legacy_readonly
                            ? "allow a copy (copy = nil or true), or ask for "
                              "max_version = {1, 0} or later"
                            : "allow a copy: copy = nil (only if needed) or copy = true");
    return DLB_E_COPY_REQUIRED;
  }
  if (!must_copy) {
    if ((st = dlb_buffer_order_consumer(b, req->has_stream, req->stream, err)) != DLB_OK) return st;
    return wrap(a, req->versioned, readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0, out, err);
  }
  if ((st = copy_target(a, req, host_copy, &target, &target_id, err)) != DLB_OK) return st;
  if ((st = dlb_array_clone_to(&copy, a, target, target_id, err)) != DLB_OK) return st;
  /* The consumer's stream waits for the copy (on the consumer's device). */
  st = dlb_buffer_order_consumer(
      copy.buffer, req->has_stream && copy.buffer->backend->ops.stream_wait, req->stream, err);
  if (st == DLB_OK) st = wrap(&copy, req->versioned, DLPACK_FLAG_BITMASK_IS_COPIED, out, err);
  dlb_array_release(&copy); /* the tensor holds the only reference now */
  return st;
}

/* ---- import ---------------------------------------------------------------- */

/* Buffer release hooks: hand the tensor back to its producer. */
static void release_versioned(void *owner) {
  DLManagedTensorVersioned *v = owner;
  if (v->deleter) v->deleter(v);
}

static void release_legacy(void *owner) {
  DLManagedTensor *l = owner;
  if (l->deleter) l->deleter(l);
}

/* Fails an import: the producer gets its tensor back (deleter, exactly once). */
static dlb_status reject(dlb_exported t, dlb_status code, const char *what, dlb_error *err) {
  dlb_dlpack_delete(t);
  return dlb_fail(err, code, "%s", what);
}

/* Fails an import whose reason a check already recorded in err. */
static dlb_status give_back(dlb_exported t, dlb_status code) {
  dlb_dlpack_delete(t);
  return code;
}

/* Our own export coming back: its context, so the import can take the
 * buffer directly instead of wrapping a wrapper. NULL for foreign tensors. */
static export_ctx *own_export(dlb_exported t) {
  if (t.versioned) {
    DLManagedTensorVersioned *v = t.tensor;
    return v->deleter == delete_versioned ? v->manager_ctx : NULL;
  }
  DLManagedTensor *l = t.tensor;
  return l->deleter == delete_legacy ? l->manager_ctx : NULL;
}

/* Whether no element is reached through dim d's stride. */
static int unaddressed(const dlb_array *a, int d) { return a->numel == 0 || a->shape[d] == 1; }

/*
 * Strides that reach no element (extent-1 dims; every dim of a size-0
 * tensor) may be anything a producer likes (PyTorch's as_strided allows
 * 2^62), and kernels step pointers by every stride: such strides become
 * the compact row-major ones. Those keep a row-major tensor row-major to
 * any check, even one that does not skip extent-1 dims, and are at most
 * the product of the extents, which the validation bounded. keep (NULL for
 * foreign tensors) holds strides to leave as they are: our own exports'.
 */
static void tame_unaddressed_strides(dlb_array *a, const int64_t *keep) {
  int64_t compact[DLB_MAX_NDIM];
  dlb_shape_contiguous_strides(a->ndim, a->shape, compact);
  for (int d = 0; d < a->ndim; d++)
    if (unaddressed(a, d) && !(keep && a->strides[d] == keep[d])) a->strides[d] = compact[d];
}

static uint64_t magnitude(int64_t x) { return x < 0 ? 0 - (uint64_t)x : (uint64_t)x; }

/*
 * Whether two indices of a may reach one element. NumPy decides this
 * exactly (mem_overlap.c, solve_may_have_internal_overlap: a bounded
 * Diophantine search); dlbridge takes a sufficient test for "no": with the
 * dims of extent > 1 in order of |stride|, each |stride| exceeds the span
 * of the smaller ones (the sum of |stride| * (extent - 1)). Anything else
 * counts as overlap (a stride 0 on extent > 1 always is), so a rare tensor
 * without a shared element (shape {3, 2}, strides {2, 3}) counts too.
 */
static int may_overlap(const dlb_array *a) {
  uint64_t stride[DLB_MAX_NDIM], extent[DLB_MAX_NDIM], span = 0, step;
  int n = 0;
  if (a->numel <= 1) return 0;
  for (int d = 0; d < a->ndim; d++) { /* insertion sort: ndim <= 32 */
    uint64_t s = magnitude(a->strides[d]);
    int k = n;
    if (a->shape[d] == 1) continue;
    for (; k > 0 && stride[k - 1] > s; k--) {
      stride[k] = stride[k - 1];
      extent[k] = extent[k - 1];
    }
    stride[k] = s;
    extent[k] = (uint64_t)a->shape[d];
    n++;
  }
  for (int k = 0; k < n; k++) {
    if (stride[k] <= span) return 1;
    if (__builtin_mul_overflow(stride[k], extent[k] - 1, &step) ||
        __builtin_add_overflow(span, step, &span))
      return 1;
  }
  return 0;
}

/* The checks of one tensor; fills the geometry of out (not its buffer). */
static dlb_status validate(const DLTensor *t, dlb_array *out, int64_t *lo, int64_t *hi,
                           dlb_error *err) {
  dlb_dtype dtype;
  int64_t numel;
  if (t->ndim < 0) return dlb_fail(err, DLB_E_DLPACK_INVALID, "ndim is negative (%d)", t->ndim);
  if (t->ndim > DLB_MAX_NDIM) { /* a valid tensor, but more than an array holds */
    dlb_fail(err, DLB_E_SHAPE, "a %d-D tensor: dlbridge arrays have at most %d dimensions", t->ndim,
             DLB_MAX_NDIM);
    dlb_error_hint(err, "reshape it to %d or fewer dimensions before the exchange");
    return DLB_E_SHAPE;
  }
  if (t->ndim > 0 && !t->shape)
    return dlb_fail(err, DLB_E_DLPACK_INVALID, "shape is NULL for a %d-D tensor", t->ndim);
  if (dlb_dtype_from_dl(t->dtype, &dtype) != 0)
    return dlb_fail(err, DLB_E_DTYPE, "no dtype for DLPack type {code %u, bits %u, lanes %u}",
                    t->dtype.code, t->dtype.bits, t->dtype.lanes);
  for (int d = 0; d < t->ndim; d++)
    if (t->shape[d] < 0)
      return dlb_fail(err, DLB_E_DLPACK_INVALID, "dimension %d has negative extent %lld", d + 1,
                      (long long)t->shape[d]);
  if (dlb_shape_numel(t->ndim, t->shape, &numel, err) != DLB_OK)
    return dlb_fail(err, DLB_E_DLPACK_INVALID, "the element count overflows");
  if (t->byte_offset > (uint64_t)PTRDIFF_MAX)
    return dlb_fail(err, DLB_E_DLPACK_INVALID, "byte_offset %llu is out of range",
                    (unsigned long long)t->byte_offset);
  out->dtype = dtype;
  out->ndim = t->ndim;
  out->numel = numel;
  out->readonly = 0;
  if (t->ndim) memcpy(out->shape, t->shape, (size_t)t->ndim * sizeof out->shape[0]);
  if (t->strides) {
    if (t->ndim) memcpy(out->strides, t->strides, (size_t)t->ndim * sizeof out->strides[0]);
  } else {
    dlb_shape_contiguous_strides(t->ndim, out->shape, out->strides); /* NULL: compact row-major */
  }
  if (numel > 0 && !t->data)
    return dlb_fail(err, DLB_E_DLPACK_INVALID, "data is NULL for %lld elements", (long long)numel);
  if (dlb_shape_reach(out->ndim, out->shape, out->strides, lo, hi, err) != DLB_OK)
    return dlb_fail(err, DLB_E_DLPACK_INVALID, "the strides reach beyond any addressable range");
  return DLB_OK;
}

/* Byte range [first, last) of the memory the tensor reaches, from data. */
static dlb_status byte_range(const DLTensor *t, const dlb_array *a, int64_t lo, int64_t hi,
                             int64_t *first, int64_t *last, dlb_error *err) {
  int64_t item = (int64_t)dlb_dtype_get(a->dtype)->itemsize, offset = (int64_t)t->byte_offset;
  int64_t span;
  uintptr_t data = (uintptr_t)t->data;
  /* The span last - first is the buffer's size: it must fit too. */
  if (__builtin_mul_overflow(lo, item, first) || __builtin_add_overflow(*first, offset, first) ||
      __builtin_add_overflow(hi, 1, last) || __builtin_mul_overflow(*last, item, last) ||
      __builtin_add_overflow(*last, offset, last) || __builtin_sub_overflow(*last, *first, &span))
    return dlb_fail(err, DLB_E_DLPACK_INVALID, "the tensor's byte range overflows");
  /* The range must not wrap around the address space. */
  if ((*first < 0 && data < (uintptr_t)(-(*first + 1)) + 1) ||
      (*last > 0 && (uintptr_t)*last > UINTPTR_MAX - data))
    return dlb_fail(err, DLB_E_DLPACK_INVALID,
                    "the tensor's memory wraps around the address space");
  return DLB_OK;
}

/* Our own export coming back: the same buffer (any backend), the geometry
 * the tensor states, checked against that buffer. */
static dlb_status import_own(dlb_exported t, export_ctx *ctx, const DLTensor *dl, uint64_t flags,
                             dlb_array *out, dlb_error *err) {
  int64_t lo, hi;
  dlb_status st;
  if ((st = validate(dl, out, &lo, &hi, err)) != DLB_OK) return give_back(t, st);
  out->buffer = ctx->buffer;
  out->offset = out->numel > 0 ? ctx->offset : 0;
  if ((st = dlb_array_check_bounds(out, err)) != DLB_OK) {
    out->buffer = NULL;
    return give_back(t, st);
  }
  /* Strides as exported are kept (a round trip changes nothing); ones a
   * consumer changed are a foreign tensor's. */
  tame_unaddressed_strides(out, out->ndim == ctx->ndim ? ctx->dims + 2 * ctx->ndim : NULL);
  /* per array: views elsewhere may be writable */
  out->readonly = (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0 || may_overlap(out);
  /* The array takes over the tensor's reference: our own deleter then only
   * frees the context (two atomic operations fewer per round trip). */
  ctx->buffer = NULL;
  dlb_dlpack_delete(t);
  return DLB_OK;
}

size_t dlb_dlpack_import_size(dlb_exported t) {
  const DLTensor *dl;
  dlb_array geometry;
  int64_t lo, hi, first, last;
  if (!t.tensor) return 0;
  if (t.versioned) {
    const DLManagedTensorVersioned *v = t.tensor;
    /* another major: nothing past version, manager_ctx and deleter is read */
    if (v->version.major != DLB_DLPACK_MAJOR) return 0;
    dl = &v->dl_tensor;
  } else {
    dl = &((const DLManagedTensor *)t.tensor)->dl_tensor;
  }
  if (own_export(t)) return 0;
  if (!dlb_dlpack_host_reachable(dl->device.device_type) ||
      validate(dl, &geometry, &lo, &hi, NULL) != DLB_OK || geometry.numel == 0 ||
      byte_range(dl, &geometry, lo, hi, &first, &last, NULL) != DLB_OK)
    return 0;
  return (size_t)(last - first);
}

/* Counts the nbytes an import wraps on backend b into buf: charged against
 * the limit, or only held when they are the host's own memory. */
static dlb_status count_import(dlb_backend *b, dlb_buffer *buf, size_t nbytes, int host_owned,
                               dlb_error *err) {
  buf->host_owned = host_owned;
  if (!host_owned) return dlb_backend_charge(b, nbytes, err);
  dlb_budget_hold(b->budget, nbytes);
  return DLB_OK;
}

/* Completes an import: buf (counted, refs not yet set) holds bytes
 * [first, last) of dl's memory on backend (device dev, host address host or
 * NULL), for the producer's tensor t, which it releases at the end; out
 * (validated) views it. */
static dlb_status finish_import(dlb_exported t, const DLTensor *dl, uint64_t flags, dlb_buffer *buf,
                                dlb_backend *backend, int dev, char *host, int64_t first,
                                int64_t last, dlb_array *out) {
  atomic_init(&buf->refs, 1);
  dlb_backend_retain(backend);
  buf->backend = backend;
  buf->device_id = dev;
  buf->host = host;
  buf->nbytes = (size_t)(last - first);
  buf->external_release = t.versioned ? release_versioned : release_legacy;
  buf->owner = t.tensor;
  /* element 0...0 sits at data + byte_offset, and the buffer starts at data
   * + first; a size-0 tensor reaches no memory, and its offset means nothing. */
  out->offset = out->numel > 0 ? (size_t)(dl->byte_offset - (uint64_t)first) : 0;
  tame_unaddressed_strides(out, NULL);
  /* A write through one index of overlapping elements would change others. */
  out->readonly = (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0 || may_overlap(out);
  out->buffer = buf;
  return DLB_OK;
}

/* The import of a foreign tensor (validated: out has its geometry) through
 * the backend of its device type: adopt checks and wraps [data + first,
 * data + last), and the array's offsets count from data + first. */
static dlb_status import_adopted(dlb_exported t, const DLTensor *dl, uint64_t flags,
                                 dlb_backend *adopter, int64_t lo, int64_t first, int64_t last,
                                 int host_owned, dlb_array *out, dlb_error *err) {
  dlb_buffer *buf = calloc(1, sizeof *buf);
  void *handle = NULL;
  int dev = dl->device.device_id;
  dlb_status st;
  (void)lo;
  if (!buf) return reject(t, DLB_E_OUT_OF_MEMORY, "no memory for a buffer header", err);
  if (dev < 0 || dev >= dlb_backend_device_count(adopter)) {
    char what[96];
    free(buf);
    snprintf(what, sizeof what, "%s has no device %d here", adopter->name, dev);
    return reject(t, DLB_E_DEVICE_UNAVAILABLE, what, err);
  }
  if (out->numel > 0 && (st = adopter->ops.adopt(adopter->ctx, dev, dl->data, (uint64_t)first,
                                                 (uint64_t)last, &handle)) != DLB_OK) {
    dlb_status code = st;
    free(buf);
    dlb_dlpack_delete(t);
    dlb_backend_failed(adopter, st, "adopt the producer's memory", err);
    if (code == DLB_E_DLPACK_INVALID || code == DLB_E_DEVICE_UNAVAILABLE) {
      dlb_fail(err, code, "%s refused the producer's memory: %s", adopter->name,
               code == DLB_E_DLPACK_INVALID ? "the pointer is not memory of that device, or the "
                                              "tensor reaches past it"
                                            : "the device is not available");
      snprintf(err->backend, sizeof err->backend, "%s", adopter->name);
      return code;
    }
    return err->code;
  }
  if ((st = count_import(adopter, buf, (size_t)(last - first), host_owned, err)) != DLB_OK) {
    if (handle && adopter->ops.forget) adopter->ops.forget(adopter->ctx, dev, handle);
    free(buf);
    return give_back(t, st);
  }
  buf->handle = handle;
  buf->adopted = handle != NULL;
  return finish_import(t, dl, flags, buf, adopter, dev,
                       handle && adopter->ops.host_pointer
                           ? adopter->ops.host_pointer(adopter->ctx, dev, handle)
                           : NULL,
                       first, last, out);
}

dlb_status dlb_dlpack_import_as(dlb_exported t, dlb_backend *host, const dlb_registry *registry,
                                int host_owned, dlb_array *out, dlb_error *err) {
  dlb_backend *adopter;
  const DLTensor *dl;
  uint64_t flags = 0;
  int64_t lo = 0, hi = 0, first = 0, last = 0;
  dlb_buffer *buf;
  export_ctx *ctx;
  dlb_status st;
  out->buffer = NULL;
  if (!t.tensor) return dlb_fail(err, DLB_E_DLPACK_INVALID, "the managed tensor is NULL");
  if (t.versioned) {
    DLManagedTensorVersioned *v = t.tensor;
    /* Another major version may lay out everything after version,
     * manager_ctx and deleter differently (dlpack.h): the version is
     * checked before any other field is read. */
    if (v->version.major != DLB_DLPACK_MAJOR) {
      uint32_t major = v->version.major, minor = v->version.minor;
      dlb_dlpack_delete(t); /* touch nothing else, and nothing at all after this */
      return dlb_fail(err, DLB_E_DLPACK_VERSION, "DLPack version %u.%u (dlbridge reads major %d)",
                      major, minor, DLB_DLPACK_MAJOR);
    }
    dl = &v->dl_tensor;
    flags = v->flags;
  } else {
    dl = &((DLManagedTensor *)t.tensor)->dl_tensor;
  }
  if ((ctx = own_export(t)) != NULL) return import_own(t, ctx, dl, flags, out, err);
  adopter = dlb_registry_adopter(registry, dl->device.device_type);
  if (!adopter && !dlb_dlpack_host_reachable(dl->device.device_type)) {
    char what[96];
    snprintf(what, sizeof what, "no backend here for DLPack device type %d",
             (int)dl->device.device_type);
    dlb_dlpack_delete(t);
    dlb_fail(err, DLB_E_DEVICE_UNAVAILABLE, "%s", what);
    dlb_error_hint(err, "dl.backends() lists the backends registered here: memory of another "
                        "device comes in through a registered backend of its DLPack device "
                        "type that adopts foreign memory; else export to the CPU first");
    return DLB_E_DEVICE_UNAVAILABLE;
  }
  if (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED)
    return reject(t, DLB_E_DTYPE, "sub-byte dtypes are not supported", err);
  if ((st = validate(dl, out, &lo, &hi, err)) != DLB_OK ||
      (out->numel > 0 && (st = byte_range(dl, out, lo, hi, &first, &last, err)) != DLB_OK))
    return give_back(t, st);
  if (adopter) return import_adopted(t, dl, flags, adopter, lo, first, last, host_owned, out, err);
  buf = calloc(1, sizeof *buf);
  if (!buf) return reject(t, DLB_E_OUT_OF_MEMORY, "no memory for a buffer header", err);
  /* Imported memory counts against the state's budget like allocated memory
   * (the host's own is held instead: budget.h). */
  if ((st = count_import(host, buf, (size_t)(last - first), host_owned, err)) != DLB_OK) {
    free(buf);
    return give_back(t, st);
  }
  return finish_import(t, dl, flags, buf, host, 0, out->numel > 0 ? (char *)dl->data + first : NULL,
                       first, last, out);
}

dlb_status dlb_dlpack_import(dlb_exported t, dlb_backend *host, const dlb_registry *registry,
                             dlb_array *out, dlb_error *err) {
  return dlb_dlpack_import_as(t, host, registry, 0, out, err);
}
