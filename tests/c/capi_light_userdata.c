/* capi_light_userdata.c -- dlbridge in a LuaJIT state whose light userdata
 * segments are used up.
 *
 * LuaJIT (64-bit) interns the upper bits of every light userdata address in
 * a map of at most 255 segments of 512 GiB: pushing an address of a new
 * segment allocates, and once the map is full raises "bad light userdata
 * pointer". Another library of the host can fill it. dlbridge must then
 * work as before, and never raise Lua's plain errors from the places where
 * it hands a C address to a protected call (compat.h, dlbL_push_address).
 * Other Luas: nothing to test (exit 77, skipped). */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "dlbridge.h"

#if DLB_LUA_IS_JIT && UINTPTR_MAX > 0xffffffffu
/* A capped allocator's state: dlbridge then makes objects in protected
 * calls (dlbL_alloc_may_fail), the paths this test is about. */
static void *plain_alloc(void *ud, void *p, size_t old, size_t n) {
  (void)ud, (void)old;
  if (n == 0) {
    free(p);
    return NULL;
  }
  return realloc(p, n);
}

/* craft(i): a light userdata in segment i above 2^47, where no real address
 * of this process lies. */
static int craft(lua_State *L) {
  uint64_t i = (uint64_t)lua_tonumber(L, 1);
  lua_pushlightuserdata(L, (void *)(uintptr_t)(i << 48 | 0x10));
  return 1;
}

static const char fill[] = "local n = 0\n"
                           "while true do\n"
                           "  local ok, e = pcall(craft, n + 1)\n"
                           "  if not ok then return n, tostring(e) end\n"
                           "  n = n + 1\n"
                           "  if n > 1000 then return n, 'never full' end\n"
                           "end\n";

/* Opening dlbridge, then every route that hands a C address to a protected
 * call: made objects, error objects, strings, shapes, tostring, the DLPack
 * protocol, safetensors, and the FFI's 64-bit integers and pointers. */
static const char workload[] =
    "local dl = require 'dlbridge'\n"
    "local ffi = require 'ffi'\n"
    "local a = dl.arange(6):reshape({2, 3})\n"
    "assert(tostring(a):find('[[0, 1, 2],', 1, true), tostring(a))\n"
    "assert(a.shape[1] == 2 and a.shape[2] == 3 and a.strides[2] == 1)\n"
    "assert(a.dtype == 'int64')\n"
    "local ok, e = pcall(dl.zeros, {-1})\n"
    "assert(not ok and dl.is_error(e) and e.code == 'SHAPE', tostring(e))\n"
    "local b = dl.from_dlpack({__dlpack = function(self, opts) return a:to_dlpack(opts) end})\n"
    "assert(b[2][3] == 5)\n"
    "local t = dl.fromsafetensors(dl.tosafetensors({w = a}))\n"
    "assert(t.w[2][1] == 3)\n"
    "local big = dl.array({0}, {dtype = 'int64'})\n"
    "big[1] = 9007199254740993LL\n"
    "assert(big[1] == 9007199254740993LL, tostring(big[1]))\n"
    "local f = dl.array({1.5, 2.5}, {dtype = 'float32'})\n"
    "local p = f:ptr()\n"
    "assert(p[1] == 2.5)\n"
    "assert(ffi.cast('uintptr_t', p) % 4 == 0)\n"
    "return 'ok'\n";

/* Interns the segment of dlbridge's own code and static data: opening the
 * module publishes the exchange table as a light userdata (lua_State's
 * registry, for dlbridge_exchange.h), the one address it must push. */
static void intern_module_segment(lua_State *L) {
  union {
    void (*f)(lua_State *);
    void *p;
  } code;
  code.f = dlb_preload;
  lua_pushlightuserdata(L, code.p);
  lua_pop(L, 1);
}

int main(void) {
  lua_State *L = lua_newstate(plain_alloc, NULL);
  CHECK(L != NULL);
  luaL_openlibs(L);
  dlb_preload(L);
  intern_module_segment(L);
  CHECK(luaL_dostring(L, "require 'ffi'") == LUA_OK); /* LuaJIT's own, before the map fills */
  lua_register(L, "craft", craft);
  CHECK(luaL_dostring(L, fill) == LUA_OK);
  /* The map is full: a new segment now raises (else this test tests nothing). */
  CHECK(lua_tointeger(L, -2) > 0);
  CHECK(strstr(lua_tostring(L, -1), "bad light userdata pointer") != NULL);
  lua_settop(L, 0);
  if (luaL_dostring(L, workload) != LUA_OK) {
    fprintf(stderr, "workload: %s\n", lua_tostring(L, -1));
    CHECK(0);
  } else {
    CHECK(strcmp(lua_tostring(L, -1), "ok") == 0);
  }
  lua_close(L);
  return check_done("capi_light_userdata");
}
#else
int main(void) { return 77; /* light userdata never allocates on this Lua */ }
#endif
