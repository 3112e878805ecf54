/* metamethod_floor.c -- the cheapest possible userdata __index, for bench/elements.lua:
 * it pushes the key back as a float and does nothing else. Its time over a plain
 * table is the floor that any C __index (dlbridge's a[i] included) pays in Lua 5.4. */
#include <lauxlib.h>
#include <lua.h>

static int floor_index(lua_State *L) {
  lua_pushnumber(L, (lua_Number)lua_tointeger(L, 2));
  return 1;
}

static int floor_newindex(lua_State *L) { return 0; }

static int floor_new(lua_State *L) {
  lua_newuserdatauv(L, 8, 0);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setmetatable(L, -2);
  return 1;
}

__attribute__((visibility("default"))) int luaopen_bench_floor(lua_State *L);
int luaopen_bench_floor(lua_State *L) {
  lua_createtable(L, 0, 2);
  lua_pushcfunction(L, floor_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, floor_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushcclosure(L, floor_new, 1);
  return 1;
}
