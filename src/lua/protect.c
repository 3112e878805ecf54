/* protect.c -- read-only stand-ins for the tables dlbridge shares.
 *
 * Every script of a lua_State shares dlbridge's metatables (Array, Capsule,
 * Error, State) and its small tables (dl.E, dl.safe): if a script could
 * write to them it would change how dlbridge's objects behave for every
 * other script (`getmetatable(a).__gc = nil` would stop all finalization).
 * So each metatable has a __metatable field: getmetatable() returns a
 * stand-in that reads through to the real table and raises READ_ONLY on
 * any write, and setmetatable() on a protected object fails. The stand-ins
 * are themselves protected. What dlbridge cannot defend is the debug
 * library (debug.setmetatable, debug.getregistry, upvalues): a host that
 * sandboxes scripts does not give it to them. */
#include <stdio.h>
#include "internal.h"

/* __newindex of a stand-in (upvalue 1: what it stands for). */
static int refuse_write(lua_State *L) {
  const char *what = lua_tostring(L, lua_upvalueindex(1));
  dlbL_raise_hint(L, DLB_E_READ_ONLY, "dlbridge",
                  "dlbridge's shared tables are the same for every script of this lua_State: "
                  "keep your own values in a table of your own",
                  "%s is read-only", what ? what : "this table");
}

/* next over the real table (upvalue 1) for pairs() of a stand-in. */
static int stand_in_next(lua_State *L) {
  lua_settop(L, 2);
  if (lua_next(L, lua_upvalueindex(1))) return 2;
  lua_pushnil(L);
  return 1;
}

/* __pairs of a stand-in: walks the real table (upvalue 1). */
static int stand_in_pairs(lua_State *L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushcclosure(L, stand_in_next, 1);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

/* __len of a stand-in: the real table's border. */
static int stand_in_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)lua_rawlen(L, lua_upvalueindex(1)));
  return 1;
}

void dlbL_push_readonly(lua_State *L, int idx, const char *what) {
  idx = lua_absindex(L, idx);
  lua_newtable(L); /* the stand-in: always empty, so every access reaches its metatable */
  lua_createtable(L, 0, 6);
  lua_pushvalue(L, idx);
  lua_setfield(L, -2, "__index");
  lua_pushstring(L, what);
  lua_pushcclosure(L, refuse_write, 1);
  lua_setfield(L, -2, "__newindex");
  lua_pushvalue(L, idx);
  lua_pushcclosure(L, stand_in_pairs, 1);
  lua_setfield(L, -2, "__pairs");
  lua_pushvalue(L, idx);
  lua_pushcclosure(L, stand_in_len, 1);
  lua_setfield(L, -2, "__len");
  lua_pushstring(L, what);
  lua_setfield(L, -2, "__name");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable"); /* getmetatable(stand_in) is false */
  lua_setmetatable(L, -2);
}

void dlbL_protect_metatable(lua_State *L, int idx, const char *what) {
  char name[80];
  idx = lua_absindex(L, idx);
  snprintf(name, sizeof name, "the metatable of %s", what);
  dlbL_push_readonly(L, idx, name);
  lua_setfield(L, idx, "__metatable");
}

/* dl.readonly(t): a read-only view of t (reads, pairs and # go through;
 * writes raise READ_ONLY), e.g. the module table a host gives each script. */
static int readonly_unprotected(lua_State *L) {
  dlbL_push_readonly(L, 1, "this table (dl.readonly)");
  return 1;
}

static int module_readonly(lua_State *L) {
  dlbL_check_nargs(L, 1, "dl.readonly");
  if (lua_type(L, 1) != LUA_TTABLE)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "dl.readonly", "dl.readonly(t) takes a table",
                    "argument #1: a table expected, got %s", luaL_typename(L, 1));
  return dlbL_call_protected(L, readonly_unprotected, "dl.readonly");
}

const luaL_Reg dlbL_protect_functions[] = {{"readonly", module_readonly}, {NULL, NULL}};
