/* capi_oom.c -- Lua running out of memory in the middle of DLPack calls.
 * An allocator fails the Nth allocation after arm(N); for every N the
 * export, the import, the host pushes and tostring either succeed or fail,
 * and every producer's deleter still runs exactly once (checked after
 * lua_close; ASan's leak check sees anything left behind). */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdlib.h>
#include "check.h"
#include "dlbridge.h"

static long fail_after = -1; /* allocations left before they fail; -1: never */

static void *failing_alloc(void *ud, void *p, size_t old, size_t n) {
  if (n == 0) {
    free(p);
    return NULL;
  }
  /* From the nth growing allocation on, every one fails until disarmed: Lua
   * retries a failed allocation after an emergency collection. */
  if (n > old && fail_after >= 0) {
    if (fail_after == 0) return NULL;
    fail_after--;
  }
  return realloc(p, n);
}

static int made, deleted;
static double data[4] = {1, 2, 3, 4};
static int64_t shape[1] = {4};

static void count_delete(DLManagedTensorVersioned *self) {
  deleted++;
  free(self);
}

static DLManagedTensorVersioned *new_tensor(void) {
  DLManagedTensorVersioned *t = calloc(1, sizeof *t);
  t->version.major = 1;
  t->deleter = count_delete;
  t->dl_tensor.data = data;
  t->dl_tensor.device.device_type = kDLCPU;
  t->dl_tensor.ndim = 1;
  t->dl_tensor.shape = shape;
  t->dl_tensor.dtype.code = kDLFloat;
  t->dl_tensor.dtype.bits = 64;
  t->dl_tensor.dtype.lanes = 1;
  made++;
  return t;
}

/* arm(n): Lua allocations fail from the nth from now on; arm() disarms. */
static int arm(lua_State *L) {
  fail_after = lua_isnoneornil(L, 1) ? -1 : (long)lua_tointeger(L, 1);
  return 0;
}

/* make_capsule(): a capsule owning a fresh counted tensor. */
static int make_capsule(lua_State *L) {
  if (dlb_push_capsule_versioned(L, new_tensor()) != DLB_OK) return lua_error(L);
  return 1;
}

/* push_armed(n, as_capsule): the host hands a tensor over while allocation n fails. */
static int push_armed(lua_State *L) {
  long n = (long)lua_tointeger(L, 1);
  int as_capsule = lua_toboolean(L, 2);
  DLManagedTensorVersioned *t = new_tensor();
  dlb_status st;
  lua_settop(L, 0);
  fail_after = n;
  /* Under memory pressure pushing the error object can itself raise Lua's
   * memory error: the caller pcalls, and the tensor was handed back first. */
  st = as_capsule ? dlb_push_capsule_versioned(L, t) : dlb_push_versioned(L, t);
  fail_after = -1;
  lua_pushboolean(L, st == DLB_OK);
  return 1;
}

static const char *workload =
    "local dl = require 'dlbridge'\n"
    "local failures = 0\n"
    "for n = 0, 80 do\n"
    "  local a = dl.zeros(4)\n"
    "  arm(n); local ok, e = pcall(a.to_dlpack, a); arm()\n"
    "  if not ok then failures = failures + 1 end\n"
    "  local c = make_capsule()\n"
    "  arm(n); ok = pcall(dl.from_dlpack, c); arm()\n"
    "  local r = dl.arange(20)\n"
    "  arm(n); ok = pcall(tostring, r); arm()\n"
    "  pcall(push_armed, n, false); arm(); pcall(push_armed, n, true); arm()\n"
    "  collectgarbage(); collectgarbage()\n"
    "end\n"
    "return failures\n";

int main(void) {
  lua_State *L = lua_newstate(failing_alloc, NULL);
  luaL_openlibs(L);
  dlb_preload(L);
  lua_register(L, "arm", arm);
  lua_register(L, "make_capsule", make_capsule);
  lua_register(L, "push_armed", push_armed);
  if (luaL_dostring(L, workload) != LUA_OK) {
    fprintf(stderr, "workload: %s\n", lua_tostring(L, -1));
    CHECK(0);
  } else {
    CHECK(lua_tointeger(L, -1) > 0); /* some exports really failed */
  }
  lua_close(L);
  CHECK(made > 0);
  CHECK_EQ_INT(deleted, made); /* every producer's deleter ran, exactly once */
  return check_done("capi_oom");
}
