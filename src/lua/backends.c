/* backends.c -- dlb_register_backend, dl.backends(), dl.device_put and a:to. */
#include "../backends/cuda/cuda.h"
#include "../core/event.h"
#include "hostapi.h"

DLB_API dlb_status dlb_register_backend(lua_State *L, const dlb_backend_ops *ops, void *ctx) {
  dlb_error err;
  dlb_lua_state *state = dlbL_open_state(L, &err);
  dlb_backend *backend;
  dlb_status st;
  if (!state) return dlbL_capi_failed(L, &err, "dlb_register_backend");
  if ((st = dlb_backend_create(ops, ctx, &backend, &err)) != DLB_OK)
    return dlbL_capi_failed(L, &err, "dlb_register_backend");
  dlb_backend_set_budget(backend, state->budget);
  st = dlb_registry_add(state->registry, backend, &err);
  /* The registry holds its own reference now; on failure nobody does, and
   * the host keeps ctx: release must not run for a backend never registered. */
  if (st != DLB_OK) backend->ops.release = NULL;
  dlb_backend_release(backend);
  if (st != DLB_OK) return dlbL_capi_failed(L, &err, "dlb_register_backend");
  return st;
}

DLB_API dlb_status dlb_device_queue(lua_State *L, int32_t device_type, int device_id,
                                    void **queue) {
  dlb_error err;
  dlb_lua_state *state = dlbL_open_state(L, &err);
  dlb_backend *b;
  *queue = NULL;
  if (!state) return dlbL_capi_failed(L, &err, "dlb_device_queue");
  for (size_t i = 0; i < state->registry->count; i++) {
    b = state->registry->items[i];
    if (b->ops.device_type != device_type) continue;
    if (device_id < 0 || device_id >= dlb_backend_device_count(b)) {
      dlb_fail(&err, DLB_E_DEVICE_UNAVAILABLE, "%s has no device %d here", b->name, device_id);
      return dlbL_capi_failed(L, &err, "dlb_device_queue");
    }
    *queue = dlb_backend_queue(b, device_id);
    return DLB_OK;
  }
  dlb_fail(&err, DLB_E_DEVICE_UNAVAILABLE, "no backend here for DLPack device type %d",
           (int)device_type);
  return dlbL_capi_failed(L, &err, "dlb_device_queue");
}

/* Whether a backend's arrays can go out through DLPack without a copy. */
static int exportable(const dlb_backend *b) {
  return b->ops.export_pointer != NULL || b->ops.host_pointer != NULL;
}

/* Why a backend has no devices here (dl.backends()'s reason). */
static const char *unavailable_reason(const dlb_backend *b) {
  const char *why = dlb_cuda_unavailable_reason(b);
  return why ? why : "the backend reports no devices here";
}

/* dl.backends(): {name=, device_type=, exportable=, available=, devices=} for
 * each, and reason= when it is not available. */
static int list_unprotected(lua_State *L) {
  const dlb_registry *r = dlbL_state(L)->registry;
  lua_createtable(L, (int)r->count, 0);
  for (size_t i = 0; i < r->count; i++) {
    const dlb_backend *b = r->items[i];
    int devices = dlb_backend_device_count(b);
    lua_createtable(L, 0, 5);
    lua_pushstring(L, b->name);
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, b->ops.device_type);
    lua_setfield(L, -2, "device_type");
    lua_pushboolean(L, exportable(b));
    lua_setfield(L, -2, "exportable");
    lua_pushboolean(L, devices > 0);
    lua_setfield(L, -2, "available");
    lua_pushinteger(L, devices);
    lua_setfield(L, -2, "devices");
    if (devices == 0) {
      lua_pushstring(L, unavailable_reason(b));
      lua_setfield(L, -2, "reason");
    }
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int backends_backends(lua_State *L) {
  dlbL_check_nargs(L, 0, "dl.backends");
  return dlbL_call_protected(L, list_unprotected, "dl.backends");
}

/* Reads device_put's options {copy=, donate=} at idx. */
static void transfer_options(lua_State *L, int idx, int *copy, int *donate, const char *op) {
  static const char *const keys[] = {"copy", "donate", NULL};
  *copy = *donate = 0;
  if (!dlbL_check_option_table(L, idx, keys, op)) return;
  *copy = dlbL_opt_boolean(L, idx, "copy", 0, op);
  *donate = dlbL_opt_boolean(L, idx, "donate", 0, op);
}

/* dl.device_put(a, device, opts) and a:to(device, opts): a on that device.
 * The same device returns a itself unless opts.copy; otherwise a new
 * contiguous array, copied by the backend itself within one backend, else
 * staged through host memory in chunks. opts.donate deletes a after a copy. */
static int transfer(lua_State *L, const char *op) {
  dlb_array *a = dlbL_check_live(L, 1, op), *out;
  dlbL_options target;
  int copy, donate;
  dlb_error err;
  dlbL_check_nargs(L, 3, op);
  dlbL_check_options(L, 0, &target, op);
  if (lua_isnoneornil(L, 2))
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                    "name the target device: a:to(\"cpu\"), dl.device_put(a, \"engine:1\"); "
                    "dl.backends() lists them",
                    "a device is needed, such as \"cpu\" or \"engine:1\"");
  dlbL_check_device(L, 2, &target, op);
  transfer_options(L, 3, &copy, &donate, op);
  lua_settop(L, 3);
  if (target.backend == a->buffer->backend && target.device_id == a->buffer->device_id && !copy) {
    lua_settop(L, 1); /* already there: a itself (nothing copied, nothing donated) */
    return 1;
  }
  a = dlbL_push_result(L, 1, 0, &out, op);
  if (dlb_array_clone_to(out, a, target.backend, target.device_id, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  if (donate) dlb_array_release(a);
  return 1;
}

static int backends_device_put(lua_State *L) { return transfer(L, "dl.device_put"); }

/* dl.synchronize(device): the host waits until dlbridge's queued work on
 * the device is done (an event after it, waited for). A backend that works
 * synchronously has nothing to wait for. */
static int backends_synchronize(lua_State *L) {
  dlbL_options where;
  dlb_error err;
  dlbL_check_nargs(L, 1, "dl.synchronize");
  dlbL_check_options(L, 0, &where, "dl.synchronize");
  dlbL_check_device(L, 1, &where, "dl.synchronize");
  if (dlb_backend_wait_queue(where.backend, where.device_id, &err) != DLB_OK)
    dlbL_raise_error(L, &err, "dl.synchronize");
  return 0;
}
static int backends_to(lua_State *L) { return transfer(L, "Array:to"); }

const luaL_Reg dlbL_backend_functions[] = {{"backends", backends_backends},
                                           {"device_put", backends_device_put},
                                           {"synchronize", backends_synchronize},
                                           {NULL, NULL}};
const luaL_Reg dlbL_backend_methods[] = {{"to", backends_to}, {NULL, NULL}};
