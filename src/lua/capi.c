/* capi.c -- the host exchange API of dlbridge.h: DLPack in and out of a lua_State from C.
 * On failure each function pushes the dlbridge.Error and returns its code. */
#include <stdarg.h>
#include <stdio.h>
#include "internal.h"

DLB_API void dlb_export_options_init(dlb_export_options *opts) {
  opts->max_version_major = -1;
  opts->max_version_minor = 0;
  opts->has_dl_device = 0;
  opts->dl_device.device_type = kDLCPU;
  opts->dl_device.device_id = 0;
  opts->copy = -1;
  opts->has_stream = 0;
  opts->stream = 0;
  opts->fallback_cpu = 0;
}

/* Pushes err and returns its code. */
static dlb_status failed(lua_State *L, const dlb_error *err, const char *op) {
  dlbL_push_error(L, err, op);
  return err->code;
}

/* Exports the array at idx with the ABI forced to versioned or legacy. */
static dlb_status export_as(lua_State *L, int idx, const dlb_export_options *opts, int versioned,
                            void **out, const char *op) {
  dlb_export_options o;
  dlb_exported t;
  dlb_error err;
  if (opts)
    o = *opts;
  else
    dlb_export_options_init(&o);
  /* The ABI is the function's; a 1.x minor the host asked for is kept. */
  if (!versioned)
    o.max_version_major = 0;
  else if (o.max_version_major != DLB_DLPACK_MAJOR)
    o.max_version_major = -1;
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
  dlb_lua_state *state = dlbL_find_state(L);
  dlb_dlpack_delete(t);
  if (!state || !state->registry)
    dlb_fail(&err, DLB_E_ARGUMENT, "dlbridge is not open in this lua_State");
  else
    dlb_fail(&err, DLB_E_OUT_OF_MEMORY, "Lua could not allocate the object for the tensor");
  return failed(L, &err, op);
}

static dlb_status push_tensor(lua_State *L, void *tensor, int versioned, const char *op) {
  dlb_exported t = {versioned, tensor};
  dlb_error err;
  if (dlbL_push_protected(L, push_empty_array) != DLB_OK) return take_ownership_failed(L, t, op);
  if (dlbL_import(L, dlbL_to_array(L, -1), t, &err) != DLB_OK) {
    lua_pop(L, 1);
    return failed(L, &err, op);
  }
  return DLB_OK;
}

DLB_API dlb_status dlb_push_versioned(lua_State *L, DLManagedTensorVersioned *tensor) {
  return push_tensor(L, tensor, 1, "dlb_push_versioned");
}

DLB_API dlb_status dlb_push_legacy(lua_State *L, DLManagedTensor *tensor) {
  return push_tensor(L, tensor, 0, "dlb_push_legacy");
}

static dlb_status push_capsule(lua_State *L, void *tensor, int versioned, const char *op) {
  dlb_exported t = {versioned, tensor};
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
  dlbL_raise_error(L, &err, op ? op : "host");
}
