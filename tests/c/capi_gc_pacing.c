/* capi_gc_pacing.c -- a loop of small arrays runs the collector as often as
 * the same bytes of Lua's own objects would, on every Lua.
 *
 * dlbridge gives the collector its bytes (an Array's record and buffer) as
 * steps (src/lua/pacing.c). Lua 5.3+ add a step to a debt that the pause
 * after a cycle pays first, as for Lua's own allocations; Lua 5.1 and
 * LuaJIT work a step off at once, and start a cycle even in the pause, so
 * there dlbridge keeps the pause's credit itself. Without it, 20000
 * a:copy() in a fresh LuaJIT state ran 188 cycles where 20000 strings of the
 * same size ran about 85 (each cycle goes over the whole heap). The cycles
 * are counted by a finalizable sentinel that makes the next one when it is
 * finalized. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include "check.h"
#include "dlbridge.h"

static const char *const CHUNK =
    "local dl = require 'dlbridge'\n"
    "local function cycles_during(f)\n"
    "  local count, armed = 0, true\n"
    "  local function arm()\n"
    "    local function finalized() count = count + 1; if armed then arm() end end\n"
    "    if newproxy then getmetatable(newproxy(true)).__gc = finalized\n" /* 5.1, LuaJIT */
    "    else setmetatable({}, {__gc = finalized}) end\n"
    "  end\n"
    "  collectgarbage(); collectgarbage()\n"
    "  arm()\n"
    "  f()\n"
    "  armed = false\n"
    "  return count\n"
    "end\n"
    "local N, ring = 20000, {}\n"
    "local a = dl.arange(10, {dtype = 'float32'})\n"
    "arrays = cycles_during(function() for i = 1, N do ring[i % 8 + 1] = a:copy() end end)\n"
    /* an Array: a 16-byte userdata, a record of some 580 bytes, 40 bytes of data */
    "local s = string.rep('x', 620)\n"
    "strings = cycles_during(function() for i = 1, N do ring[i % 8 + 1] = s .. i end end)\n";

static int global_int(lua_State *L, const char *name) {
  int v;
  lua_getglobal(L, name);
  v = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return v;
}

int main(void) {
  lua_State *L = luaL_newstate();
  int arrays, strings;
  luaL_openlibs(L);
  dlb_preload(L);
  if (luaL_dostring(L, CHUNK) != LUA_OK) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    CHECK(0);
    lua_close(L);
    return check_done("capi_gc_pacing");
  }
  arrays = global_int(L, "arrays");
  strings = global_int(L, "strings");
  printf("collector cycles: 20000 a:copy() %d, 20000 strings of the same size %d\n", arrays,
         strings);
  CHECK(strings > 10); /* the loops did drive the collector */
  CHECK(arrays * 2 <= strings * 3 + 4);
  lua_close(L);
  return check_done("capi_gc_pacing");
}
