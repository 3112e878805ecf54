/* capi_backends.c -- dlb_register_backend from a host: validation, and the
 * lifetime rule that a backend outlives lua_close while memory it allocated
 * is still held by a DLPack consumer, then is released exactly once. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <stdlib.h>
#include "check.h"
#include "dlbridge.h"
#include "fixtures.h"

/* A host-memory backend with an export hook that counts what happens. */
static int allocations, deallocations, releases;

static int count_devices(void *ctx) { return 2; }
static dlb_status counted_allocate(void *ctx, int device, size_t n, int zeroed, void **handle) {
  *handle = zeroed ? calloc(1, n) : malloc(n);
  if (!*handle) return DLB_E_OUT_OF_MEMORY;
  allocations++;
  return DLB_OK;
}
static void counted_deallocate(void *ctx, int device, void *handle) {
  free(handle);
  deallocations++;
}
static void counted_release(void *ctx) { releases++; }

static dlb_backend_ops counted_ops(const char *name) {
  dlb_backend_ops ops = {.version = DLB_BACKEND_OPS_VERSION,
                         .name = name,
                         .device_type = kDLCPU,
                         .device_count = count_devices,
                         .allocate = counted_allocate,
                         .deallocate = counted_deallocate,
                         .copy_to_host = malloc_to_host,
                         .copy_from_host = malloc_from_host,
                         .export_pointer = malloc_export,
                         .release = counted_release};
  return ops;
}

/* The code of the error object on top of the stack, popped. */
static const char *error_code(lua_State *L) {
  static char code[32];
  lua_getfield(L, -1, "code");
  snprintf(code, sizeof code, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "(none)");
  lua_pop(L, 2);
  return code;
}

static void test_validation(void) {
  /* (Registering before require works: capi_setup.c.) */
  lua_State *L = new_state();
  dlb_backend_ops ops = counted_ops("Bad-Name");
  CHECK_EQ_INT(dlb_register_backend(L, &ops, NULL), DLB_E_ARGUMENT);
  CHECK_EQ_STR(error_code(L), "ARGUMENT");
  ops = counted_ops("engine");
  ops.version = 99;
  CHECK_EQ_INT(dlb_register_backend(L, &ops, NULL), DLB_E_ARGUMENT);
  lua_pop(L, 1);
  ops = counted_ops("engine");
  ops.copy_to_host = NULL;
  CHECK_EQ_INT(dlb_register_backend(L, &ops, NULL), DLB_E_ARGUMENT);
  lua_pop(L, 1);
  ops = counted_ops("cpu"); /* taken by the built-in backend */
  CHECK_EQ_INT(dlb_register_backend(L, &ops, NULL), DLB_E_ARGUMENT);
  lua_pop(L, 1);
  ops = counted_ops("engine");
  CHECK_EQ_INT(dlb_register_backend(L, &ops, NULL), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), 0);
  CHECK_EQ_INT(dlb_register_backend(L, &ops, NULL), DLB_E_ARGUMENT); /* twice */
  lua_pop(L, 1);
  /* A failed registration never calls release: the host keeps its ctx. */
  releases = 0;
  lua_close(L);
  CHECK_EQ_INT(releases, 1); /* the one registered backend, at lua_close */
}

static void test_outlives_lua_close(void) {
  lua_State *L = new_state();
  dlb_backend_ops ops = counted_ops("engine");
  DLManagedTensorVersioned *t;
  allocations = deallocations = releases = 0;
  CHECK_EQ_INT(dlb_register_backend(L, &ops, NULL), DLB_OK);
  CHECK_EQ_INT(luaL_dostring(L, "a = dl.arange(6, {device = 'engine:1', dtype = 'float64'})"),
               LUA_OK);
  lua_getglobal(L, "a");
  CHECK_EQ_INT(dlb_export_versioned(L, -1, NULL, &t), DLB_OK);
  lua_pop(L, 1);
  CHECK_EQ_INT(t->dl_tensor.device.device_id, 1);
  CHECK_EQ_INT(allocations, 1);
  lua_close(L); /* the array is gone, the tensor is not */
  CHECK_EQ_INT(deallocations, 0);
  CHECK_EQ_INT(releases, 0);
  CHECK(((double *)t->dl_tensor.data)[5] == 5.0);
  t->deleter(t); /* the last reference: memory, then the backend */
  CHECK_EQ_INT(deallocations, 1);
  CHECK_EQ_INT(releases, 1);
}

static void test_registry_in_lua(void) {
  lua_State *L = new_state();
  dlb_backend_ops ops = counted_ops("engine");
  CHECK_EQ_INT(dlb_register_backend(L, &ops, NULL), DLB_OK);
  CHECK_EQ_INT(luaL_dostring(L, "local b = dl.backends() "
                                "assert(#b == 3 and b[2].name == 'cuda' and b[3].name == 'engine' "
                                "and b[3].devices == 2 and b[3].exportable and b[3].available "
                                "and b[3].device_type == 1)"),
               LUA_OK);
  lua_close(L);
}

int main(void) {
  test_validation();
  test_outlives_lua_close();
  test_registry_in_lua();
  return check_done("capi_backends");
}
