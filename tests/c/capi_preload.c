/* capi_preload.c -- a host that links libdlbridge: dlb_preload makes
 * `require "dlbridge"` work with no files on disk, and lua_close frees
 * every array still alive. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include "check.h"
#include "dlbridge.h"

/* Runs a chunk; returns its first result as an integer, or -1 on error. */
static long long run(lua_State *L, const char *code) {
  long long v;
  if (luaL_dostring(L, code) != LUA_OK) {
    fprintf(stderr, "lua error: %s\n", luaL_tolstring(L, -1, NULL));
    lua_settop(L, 0);
    return -1;
  }
  v = (long long)lua_tointeger(L, -1);
  lua_settop(L, 0);
  return v;
}

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  /* No path on disk can satisfy these requires: only the preload can. */
  run(L, "package.path = '' package.cpath = ''");
  dlb_preload(L);
  CHECK_EQ_INT(run(L, "local dl = require 'dlbridge' return dl.zeros{2, 3}.size"), 6);
  /* The Lua side came along: dl.try is defined in lua/dlbridge/init.lua. */
  CHECK_EQ_INT(run(L, "local dl = require 'dlbridge' local a, e = dl.try(dl.zeros, {-1}) "
                      "return (a == nil and e.code == 'SHAPE') and 1 or 0"),
               1);
  /* One module per state: dlbridge and dlbridge.core are the same table. */
  CHECK_EQ_INT(run(L, "return rawequal(require 'dlbridge', require 'dlbridge.core') and 1 or 0"),
               1);
  /* Errors raised through the C module keep their code. */
  CHECK_EQ_INT(run(L,
                   "local dl = require 'dlbridge' local ok, e = pcall(dl.ones, {1}, {dtype = 'x'}) "
                   "return e.code == 'DTYPE' and 1 or 0"),
               1);
  CHECK_EQ_INT(strcmp(dlb_status_name(DLB_E_BACKEND_INCOMPATIBLE), "BACKEND_INCOMPATIBLE"), 0);
  CHECK_EQ_INT(strcmp(dlb_status_name((dlb_status)999), "UNKNOWN"), 0);
  /* Arrays and views still alive at lua_close are freed (ASan's leak check sees it). */
  run(L, "local dl = require 'dlbridge' keep = dl.ones{256, 256} view = keep[3] keep:delete()");
  lua_close(L);
  return check_done("capi_preload");
}
