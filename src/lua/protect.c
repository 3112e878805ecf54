/* protect.c -- read-only stand-ins for the tables dlbridge shares.
 *
 * Every script of a lua_State shares dlbridge's metatables (Array, Capsule,
 * Error, Generator, State) and its small tables (dl.E, dl.safe, dl.random,
 * dl.Error): if a script could write to them it would change how dlbridge's
 * objects behave for every other script (`getmetatable(a).__gc = nil` would
 * stop all finalization). So each metatable has a __metatable field:
 * getmetatable() returns a stand-in, and setmetatable() on a protected
 * object fails.
 *
 * A stand-in is a userdata, not a table: rawset, setmetatable and the
 * table library's raw writes need a table, so they cannot reach it, and
 * every other write goes through __newindex, which raises READ_ONLY. Reads,
 * pairs() and # go through to the real table; a table read through a
 * stand-in comes back as a stand-in of its own (one per table and stand-in,
 * so `view.t == view.t`), so nothing reachable from a stand-in is writable.
 * What dlbridge cannot defend is the debug library (debug.setmetatable,
 * debug.getregistry, upvalues): a host that sandboxes scripts does not give
 * it to them. */
#include "internal.h"

/* Upvalues of a stand-in's metamethods. */
#define REAL lua_upvalueindex(1)  /* the table it stands for */
#define CACHE lua_upvalueindex(2) /* real nested table -> its stand-in (weak keys) */
#define WHAT lua_upvalueindex(3)  /* its name, for messages */

/* __newindex of a stand-in. */
static int refuse_write(lua_State *L) {
  const char *what = lua_tostring(L, WHAT);
  return dlbL_raise_hint(L, DLB_E_READ_ONLY, "dlbridge",
                         "dlbridge's shared tables are the same for every script of this "
                         "lua_State: keep your own values in a table of your own",
                         "%s is read-only", what ? what : "this table");
}

static void push_stand_in(lua_State *L, int idx, int what);

/* Replaces the value at the top (read at key, just below it, of the stand-in
 * whose upvalues are current) by its stand-in when it is a table. */
static void wrap_value(lua_State *L) {
  if (lua_type(L, -1) != LUA_TTABLE) return;
  lua_pushvalue(L, -1);
  lua_rawget(L, CACHE);
  if (!lua_isnil(L, -1)) {
    lua_replace(L, -2);
    return;
  }
  lua_pop(L, 1);
  if (lua_type(L, -2) == LUA_TSTRING)
    lua_pushfstring(L, "%s.%s", lua_tostring(L, WHAT), lua_tostring(L, -2));
  else lua_pushfstring(L, "a table inside %s", lua_tostring(L, WHAT));
  push_stand_in(L, -2, lua_gettop(L)); /* table, name, stand-in */
  lua_remove(L, -2);
  lua_pushvalue(L, -2);
  lua_pushvalue(L, -2);
  lua_rawset(L, CACHE); /* cache[table] = stand-in */
  lua_replace(L, -2);
}

/* __index of a stand-in: the real table's value (its own __index applies). */
static int read_through(lua_State *L) {
  lua_settop(L, 2);
  lua_pushvalue(L, 2);
  lua_gettable(L, REAL);
  wrap_value(L);
  return 1;
}

/* next over the real table, for pairs() of a stand-in. */
static int stand_in_next(lua_State *L) {
  lua_settop(L, 2);
  if (!lua_next(L, REAL)) {
    lua_pushnil(L);
    return 1;
  }
  wrap_value(L);
  return 2;
}

/* __pairs of a stand-in. */
static int stand_in_pairs(lua_State *L) {
  lua_pushvalue(L, REAL);
  lua_pushvalue(L, CACHE);
  lua_pushvalue(L, WHAT);
  lua_pushcclosure(L, stand_in_next, 3);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

/* __len of a stand-in: the real table's border. */
static int stand_in_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)lua_rawlen(L, REAL));
  return 1;
}

/* Sets t[name] = f with the three upvalues (real, cache, what) at -4..-2. */
static void set_method(lua_State *L, const char *name, lua_CFunction f) {
  lua_pushvalue(L, -4);
  lua_pushvalue(L, -4);
  lua_pushvalue(L, -4);
  lua_pushcclosure(L, f, 3);
  lua_setfield(L, -2, name);
}

/* Pushes a new stand-in for the table at idx, named by the string at what. */
static void push_stand_in(lua_State *L, int idx, int what) {
  idx = lua_absindex(L, idx);
  what = lua_absindex(L, what);
  lua_newuserdatauv(L, 0, 0);
  lua_pushvalue(L, idx);    /* upvalue REAL */
  lua_createtable(L, 0, 1); /* upvalue CACHE */
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, what); /* upvalue WHAT */
  lua_createtable(L, 0, 6);
  set_method(L, "__index", read_through);
  set_method(L, "__newindex", refuse_write);
  set_method(L, "__pairs", stand_in_pairs);
  set_method(L, "__len", stand_in_len);
  lua_pushvalue(L, what);
  lua_setfield(L, -2, "__name");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable"); /* getmetatable(stand_in) is false */
  lua_replace(L, -4);
  lua_pop(L, 2);
  lua_setmetatable(L, -2);
}

void dlbL_push_readonly(lua_State *L, int idx, const char *what) {
  idx = lua_absindex(L, idx);
  lua_pushstring(L, what);
  push_stand_in(L, idx, -1);
  lua_remove(L, -2);
}

void dlbL_protect_metatable(lua_State *L, int idx, const char *what) {
  idx = lua_absindex(L, idx);
  lua_pushfstring(L, "the metatable of %s", what);
  push_stand_in(L, idx, -1);
  lua_remove(L, -2);
  lua_setfield(L, idx, "__metatable");
}

/* dl.readonly(t): a read-only view of t (reads, pairs and # go through,
 * tables read through it are read-only views too; every write raises
 * READ_ONLY), e.g. the module table a host gives each script. */
static int readonly_unprotected(lua_State *L) {
  dlbL_push_readonly(L, 1, "this table (dl.readonly)");
  return 1;
}

static int protect_readonly(lua_State *L) {
  dlbL_check_nargs(L, 1, "dl.readonly");
  if (lua_type(L, 1) != LUA_TTABLE)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "dl.readonly", "dl.readonly(t) takes a table",
                    "argument #1: a table expected, got %s", luaL_typename(L, 1));
  return dlbL_call_protected(L, readonly_unprotected, "dl.readonly");
}

const luaL_Reg dlbL_protect_functions[] = {{"readonly", protect_readonly}, {NULL, NULL}};
