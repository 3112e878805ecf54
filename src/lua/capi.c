/* capi.c -- the host exchange API of dlbridge.h: DLPack in and out of a lua_State from C,
 * wrapping host memory, borrowing arrays, the last error of a thread.
 * On failure each function pushes the dlbridge.Error and returns its code. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/event.h"
#include "hostapi.h"

/* Versioned, no dl_device, copy only if needed, any layout. */
static const dlb_export_options default_options = {
    .version = DLB_EXPORT_OPTIONS_VERSION,
    .max_version_major = -1,
    .dl_device = {kDLCPU, 0},
    .copy = -1,
    .layout = DLB_LAYOUT_ANY,
};

DLB_API void dlb_export_options_init(dlb_export_options *opts) { *opts = default_options; }

/* ---- the last error of this thread ----------------------------------------- */

static _Thread_local dlb_status last_code = DLB_OK;
static _Thread_local char last_text[640];

DLB_API dlb_status dlb_last_error(const char **message) {
  if (message) *message = last_text;
  return last_code;
}

dlb_status dlbL_capi_failed(lua_State *L, const dlb_error *err, const char *op) {
  const char *hint = err->hint ? err->hint : dlb_default_hint(err->code);
  last_code = err->code;
  snprintf(last_text, sizeof last_text, "%s: %s: %s%s%s%s", op, dlb_status_name(err->code),
           err->message, hint ? " (hint: " : "", hint ? hint : "", hint ? ")" : "");
  dlbL_push_error(L, err, op);
  return err->code;
}

/* Pushes err and returns its code. */
static dlb_status failed(lua_State *L, const dlb_error *err, const char *op) {
  return dlbL_capi_failed(L, err, op);
}

/* Copies the caller's options (any version this library knows) over the
 * defaults; ARGUMENT for a version it does not know. */
static dlb_status read_options(const dlb_export_options *in, dlb_export_options *out,
                               dlb_error *err) {
  if (!in) {
    *out = default_options;
    return DLB_OK;
  }
  if (in->version == 0 || in->version > DLB_EXPORT_OPTIONS_VERSION) {
    dlb_fail(err, DLB_E_ARGUMENT,
             "dlb_export_options version %u is not one this dlbridge knows (1..%d)",
             (unsigned)in->version, DLB_EXPORT_OPTIONS_VERSION);
    dlb_error_hint(err, "call dlb_export_options_init first, or set version to "
                        "DLB_EXPORT_OPTIONS_VERSION of the header you build against");
    return DLB_E_ARGUMENT;
  }
  /* Version 1 is the whole struct; later versions append fields (and will
   * copy the caller's prefix over the defaults). */
  *out = *in;
  if (out->layout < DLB_LAYOUT_ANY || out->layout > DLB_LAYOUT_CONTIGUOUS) {
    dlb_fail(err, DLB_E_ARGUMENT, "unknown layout %d", (int)out->layout);
    dlb_error_hint(err, "DLB_LAYOUT_ANY, DLB_LAYOUT_NONNEGATIVE or DLB_LAYOUT_CONTIGUOUS");
    return DLB_E_ARGUMENT;
  }
  if (out->copy < -1 || out->copy > 1) {
    dlb_fail(err, DLB_E_ARGUMENT, "copy must be -1 (if needed), 0 (never) or 1 (always), got %d",
             (int)out->copy);
    dlb_error_hint(err, "-1 copies only when the export needs it");
    return DLB_E_ARGUMENT;
  }
  return DLB_OK;
}

/* Exports the array at idx with the ABI forced to versioned or legacy. */
static dlb_status export_as(lua_State *L, int idx, const dlb_export_options *opts, int versioned,
                            void **out, const char *op) {
  dlb_export_options o;
  dlb_exported t;
  dlb_error err;
  if (read_options(opts, &o, &err) != DLB_OK) return failed(L, &err, op);
  /* The ABI is the function's; a 1.x minor the host asked for is kept. */
  if (!versioned) o.max_version_major = 0;
  else if (o.max_version_major != DLB_DLPACK_MAJOR) o.max_version_major = -1;
  idx = lua_absindex(L, idx);
  if (dlbL_export(L, idx, &o, &t, &err) != DLB_OK) return failed(L, &err, op);
  *out = t.tensor;
  return DLB_OK;
}

DLB_API dlb_status dlb_export_versioned(lua_State *L, int idx, const dlb_export_options *opts,
                                        DLManagedTensorVersioned **out) {
  return export_as(L, idx, opts, 1, (void **)out, "dlb_export_versioned");
}

DLB_API dlb_status dlb_export_legacy(lua_State *L, int idx, const dlb_export_options *opts,
                                     DLManagedTensor **out) {
  return export_as(L, idx, opts, 0, (void **)out, "dlb_export_legacy");
}

static int push_empty_array(lua_State *L) {
  dlbL_push_empty(L, "dlb_push");
  return 1;
}

static int push_empty_capsule(lua_State *L) {
  dlbL_push_empty_capsule(L, "dlb_push_capsule");
  return 1;
}

/* The host handed over the tensor: when the userdata cannot be made (no
 * memory, or dlbridge not open here), the tensor goes back to its producer
 * at once and the error is pushed. */
static dlb_status take_ownership_failed(lua_State *L, dlb_exported t, const char *op) {
  dlb_error err;
  dlb_dlpack_delete(t);
  dlb_fail(&err, DLB_E_OUT_OF_MEMORY, "Lua could not allocate the object for the tensor");
  return failed(L, &err, op);
}

/* Opens dlbridge in L if needed; when it cannot, the tensor goes back to its
 * producer and the error is pushed. */
static int open_for_tensor(lua_State *L, dlb_exported t, const char *op) {
  dlb_error err;
  if (dlbL_open_state(L, &err)) return 1;
  dlb_dlpack_delete(t);
  failed(L, &err, op);
  return 0;
}

/* The import of the host's own memory (dlb_push_external): held in the
 * budget for the collector's pacing and dl.memory(), never refused by the
 * limit, which bounds what scripts make. */
static dlb_status import_host_owned(lua_State *L, dlb_exported t, dlb_error *err) {
  dlb_lua_state *state = dlbL_find_state(L);
  return dlb_dlpack_import_as(t, state->cpu, state->registry, 1, dlbL_to_array(L, -1), err);
}

static dlb_status push_tensor(lua_State *L, void *tensor, int versioned, int host_owned,
                              const char *op) {
  dlb_exported t = {versioned, tensor};
  dlb_status st;
  dlb_error err;
  if (!open_for_tensor(L, t, op)) return last_code;
  if (dlbL_push_protected(L, push_empty_array) != DLB_OK) return take_ownership_failed(L, t, op);
  st = host_owned ? import_host_owned(L, t, &err) : dlbL_import(L, -1, t, &err);
  if (st != DLB_OK) {
    lua_pop(L, 1);
    return failed(L, &err, op);
  }
  return DLB_OK;
}

DLB_API dlb_status dlb_push_versioned(lua_State *L, DLManagedTensorVersioned *tensor) {
  return push_tensor(L, tensor, 1, 0, "dlb_push_versioned");
}

DLB_API dlb_status dlb_push_legacy(lua_State *L, DLManagedTensor *tensor) {
  return push_tensor(L, tensor, 0, 0, "dlb_push_legacy");
}

static dlb_status push_capsule(lua_State *L, void *tensor, int versioned, const char *op) {
  dlb_exported t = {versioned, tensor};
  if (!open_for_tensor(L, t, op)) return last_code;
  if (dlbL_push_protected(L, push_empty_capsule) != DLB_OK) return take_ownership_failed(L, t, op);
  dlbL_capsule_fill((dlb_capsule *)lua_touserdata(L, -1), t);
  return DLB_OK;
}

DLB_API dlb_status dlb_push_capsule_versioned(lua_State *L, DLManagedTensorVersioned *tensor) {
  return push_capsule(L, tensor, 1, "dlb_push_capsule_versioned");
}

DLB_API dlb_status dlb_push_capsule_legacy(lua_State *L, DLManagedTensor *tensor) {
  return push_capsule(L, tensor, 0, "dlb_push_capsule_legacy");
}

DLB_API dlb_status dlb_capsule_take(lua_State *L, int idx, void **tensor, int *versioned) {
  dlb_exported t;
  dlb_error err;
  if (dlbL_capsule_take(L, idx, &t, &err) != DLB_OK) return failed(L, &err, "dlb_capsule_take");
  *tensor = t.tensor;
  *versioned = t.versioned;
  return DLB_OK;
}

DLB_API int dlb_raise(lua_State *L, dlb_status code, const char *op, const char *hint,
                      const char *fmt, ...) {
  dlb_error err;
  va_list ap;
  err.code = code;
  err.has_native = 0;
  err.native_status = 0;
  err.hint = hint;
  err.backend[0] = '\0';
  err.device[0] = '\0';
  va_start(ap, fmt);
  vsnprintf(err.message, sizeof err.message, fmt, ap);
  va_end(ap);
  if (!dlbL_open_state(L, NULL)) {
    /* No error table without the module; Lua's own error, as a string. */
    lua_pushfstring(L, "%s: %s: %s", op ? op : "host", dlb_status_name(code), err.message);
    lua_error(L);
  }
  dlbL_raise_error(L, &err, op ? op : "host");
}

/* ---- wrapping host memory ---------------------------------------------------- */

/* The managed tensor dlb_push_external makes: its deleter calls the host's release. */
typedef struct external_tensor {
  DLManagedTensorVersioned tensor;
  void (*release)(void *ctx);
  void *ctx;
  int64_t dims[]; /* shape[ndim], then strides[ndim] */
} external_tensor;

static void external_delete(DLManagedTensorVersioned *self) {
  external_tensor *e = self->manager_ctx;
  if (e->release) e->release(e->ctx);
  free(e);
}

/* Row-major strides for shape; 0 when an extent is negative or the product
 * overflows (the import then reports the shape). */
static void row_major(int32_t ndim, const int64_t *shape, int64_t *strides) {
  int64_t step = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    strides[d] = step;
    if (shape[d] > 0 && __builtin_mul_overflow(step, shape[d], &step)) step = 0;
  }
}

DLB_API dlb_status dlb_push_external(lua_State *L, void *data, DLDataType dtype, int32_t ndim,
                                     const int64_t *shape, const int64_t *strides, DLDevice device,
                                     uint32_t flags, void (*release)(void *ctx), void *ctx) {
  const char *op = "dlb_push_external";
  external_tensor *e;
  dlb_error err;
  if (ndim < 0 || ndim > DLB_MAX_NDIM || (ndim > 0 && !shape) ||
      (flags & ~DLB_EXTERNAL_READ_ONLY)) {
    if (release) release(ctx);
    if (ndim < 0 || ndim > DLB_MAX_NDIM)
      dlb_fail(&err, DLB_E_SHAPE, "ndim must be 0..%d, got %d", DLB_MAX_NDIM, (int)ndim);
    else if (ndim > 0 && !shape)
      dlb_fail(&err, DLB_E_ARGUMENT, "shape is NULL for %d dimensions", (int)ndim);
    else dlb_fail(&err, DLB_E_ARGUMENT, "unknown flags 0x%x", (unsigned)flags);
    dlb_error_hint(&err, "ndim extents in shape; strides in elements or NULL (row-major); "
                         "flags 0 or DLB_EXTERNAL_READ_ONLY");
    return failed(L, &err, op);
  }
  e = malloc(sizeof *e + 2 * (size_t)ndim * sizeof(int64_t));
  if (!e) {
    if (release) release(ctx);
    dlb_fail(&err, DLB_E_OUT_OF_MEMORY, "no memory for the tensor of external memory");
    return failed(L, &err, op);
  }
  e->release = release;
  e->ctx = ctx;
  if (ndim > 0) {
    memcpy(e->dims, shape, (size_t)ndim * sizeof(int64_t));
    if (strides) memcpy(e->dims + ndim, strides, (size_t)ndim * sizeof(int64_t));
    else row_major(ndim, shape, e->dims + ndim);
  }
  memset(&e->tensor, 0, sizeof e->tensor);
  e->tensor.version.major = DLB_DLPACK_MAJOR;
  e->tensor.version.minor = DLB_DLPACK_MINOR;
  e->tensor.manager_ctx = e;
  e->tensor.deleter = external_delete;
  e->tensor.flags = (flags & DLB_EXTERNAL_READ_ONLY) ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  e->tensor.dl_tensor.data = data;
  e->tensor.dl_tensor.device = device;
  e->tensor.dl_tensor.ndim = ndim;
  e->tensor.dl_tensor.dtype = dtype;
  e->tensor.dl_tensor.shape = ndim ? e->dims : NULL;
  e->tensor.dl_tensor.strides = ndim ? e->dims + ndim : NULL;
  /* Validation (dtype, device, extents, strides, byte range) is the import's. */
  return push_tensor(L, &e->tensor, 1, 1, op);
}

/* ---- borrowing ------------------------------------------------------------------ */

static dlb_status borrow_at(lua_State *L, int idx, dlb_borrowed *view, const char *op) {
  dlb_array *a = dlbL_to_array(L, idx);
  DLTensor t;
  dlb_error err;
  view->hold = NULL;
  if (!a) {
    dlb_fail(&err, DLB_E_ARGUMENT, "a dlbridge.Array expected, got %s", luaL_typename(L, idx));
    dlb_error_hint(&err, "pass the stack index (or registry reference) of an array");
    return failed(L, &err, op);
  }
  if (!a->buffer) {
    dlb_fail(&err, DLB_E_DELETED, "the array was deleted");
    return failed(L, &err, op);
  }
  /* A borrower has no queue to order after dlbridge's: the host waits. */
  if (dlb_buffer_sync_host(a->buffer, &err) != DLB_OK ||
      dlb_dlpack_describe(a, &t, view->shape, view->strides, &err) != DLB_OK)
    return failed(L, &err, op);
  view->data = t.data;
  view->byte_offset = t.byte_offset;
  view->dtype = t.dtype;
  view->device = t.device;
  view->ndim = t.ndim;
  view->readonly = a->readonly || a->buffer->readonly;
  view->numel = a->numel;
  dlb_buffer_retain(a->buffer);
  view->hold = a->buffer;
  return DLB_OK;
}

DLB_API dlb_status dlb_borrow(lua_State *L, int idx, dlb_borrowed *view) {
  return borrow_at(L, lua_absindex(L, idx), view, "dlb_borrow");
}

DLB_API dlb_status dlb_borrow_ref(lua_State *L, int ref, dlb_borrowed *view) {
  dlb_status st;
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  st = borrow_at(L, lua_gettop(L), view, "dlb_borrow_ref");
  lua_remove(L, st == DLB_OK ? -1 : -2); /* the value; an error stays on top */
  return st;
}

DLB_API void dlb_borrow_end(dlb_borrowed *view) {
  dlb_buffer *b = view->hold;
  view->hold = NULL;
  if (b) dlb_buffer_release(b);
}
