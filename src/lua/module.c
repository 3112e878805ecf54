/* module.c -- luaopen_dlbridge_core, the per-state registry, and preloading. */
#include <stdio.h>
#include "../core/backend.h"
#include "internal.h"

#define DLB_MODULE_KEY "dlbridge.core"

/* __gc of the State userdata: drops the registry's backend references
 * (buffers still exported keep their backends alive). */
static int state_gc(lua_State *L) {
  dlb_lua_state *state = dlbL_to_state(L, 1);
  if (!state) return 0;
  dlb_registry_free(state->registry);
  state->registry = NULL;
  dlb_backend_release(state->cpu);
  state->cpu = NULL;
  return 0;
}

/* Pushes a new State with the cpu backend registered. */
static void push_state(lua_State *L) {
  dlb_lua_state *state = lua_newuserdatauv(L, sizeof *state, 0);
  dlb_error err;
  state->registry = NULL;
  state->cpu = NULL;
  state->capsule_mt = LUA_NOREF;
  state->tag = DLB_STATE_TAG;
  if (luaL_newmetatable(L, DLB_STATE_MT)) {
    lua_pushcfunction(L, state_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  state->registry = dlb_registry_new();
  if (!state->registry) dlbL_raise(L, DLB_E_OUT_OF_MEMORY, "require", "no memory for the registry");
  if (dlb_backend_create(dlb_cpu_backend_ops(), NULL, &state->cpu, &err) != DLB_OK ||
      dlb_registry_add(state->registry, state->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, "require");
}

dlb_lua_state *dlbL_find_state(lua_State *L) {
  dlb_lua_state *state = dlbL_to_state(L, DLB_UV_STATE);
  if (!state) {
    lua_getfield(L, LUA_REGISTRYINDEX, DLB_STATE_KEY);
    state = dlbL_to_state(L, -1);
    lua_pop(L, 1);
  }
  return state;
}

dlb_lua_state *dlbL_state(lua_State *L) {
  dlb_lua_state *state = dlbL_find_state(L);
  if (!state || !state->registry) {
    dlb_error err;
    dlb_fail(&err, DLB_E_UNSUPPORTED, "dlbridge is closed in this lua_State");
    dlb_error_hint(&err, "a finalizer ran during lua_close: objects finalized after "
                         "dlbridge's own state cannot use it");
    dlbL_raise_error(L, &err, "dlbridge");
  }
  return state;
}

/* dl.is_array(v) */
static int module_is_array(lua_State *L) {
  lua_pushboolean(L, dlbL_to_array(L, 1) != NULL);
  return 1;
}

/* dl.dtypes(): the list of dtype names. */
static int module_dtypes(lua_State *L) {
  lua_createtable(L, DLB_DTYPE_COUNT, 0);
  for (int d = 0; d < DLB_DTYPE_COUNT; d++) {
    lua_pushstring(L, dlb_dtype_get((dlb_dtype)d)->name);
    lua_rawseti(L, -2, d + 1);
  }
  return 1;
}

static const luaL_Reg module_functions[] = {
    {"is_array", module_is_array}, {"dtypes", module_dtypes}, {NULL, NULL}};

/* Registers funcs into the table at -4 with [mt, state, methods] as upvalues. */
static void set_functions(lua_State *L, int module, const luaL_Reg *funcs) {
  lua_pushvalue(L, module);
  lua_pushvalue(L, module + 1);
  lua_pushvalue(L, module + 2);
  lua_pushvalue(L, module + 3);
  luaL_setfuncs(L, funcs, DLB_NUPVALUES);
  lua_pop(L, 1);
}

DLB_API int luaopen_dlbridge_core(lua_State *L) {
  int module;
  luaL_checkversion(L);
  /* Opening twice in one state returns the same module (one registry). */
  if (lua_getfield(L, LUA_REGISTRYINDEX, DLB_MODULE_KEY) == LUA_TTABLE) return 1;
  lua_pop(L, 1);
  lua_createtable(L, 0, 40);
  module = lua_gettop(L);
  luaL_newmetatable(L, DLB_ARRAY_MT);
  push_state(L);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, DLB_STATE_KEY); /* for the C API (no upvalues) */
  lua_createtable(L, 0, 32);                          /* Array methods */
  dlbL_open_array(L);
  set_functions(L, module, dlbL_create_functions);
  set_functions(L, module, module_functions);
  set_functions(L, module, dlbL_dlpack_functions);
  set_functions(L, module, dlbL_backend_functions);
  dlbL_open_capsule(L);
  lua_settop(L, module);
  dlbL_open_errors(L);
  lua_pushliteral(L, DLB_VERSION_STRING);
  lua_setfield(L, module, "version");
  lua_pushvalue(L, module);
  lua_setfield(L, LUA_REGISTRYINDEX, DLB_MODULE_KEY);
  return 1;
}

extern const struct dlb_embedded_module {
  const char *name;
  const char *code;
  size_t length;
} dlb_embedded_lua[];

/* package.preload loader for a compiled-in Lua file (upvalue: its index). */
static int load_embedded(lua_State *L) {
  const struct dlb_embedded_module *m = &dlb_embedded_lua[lua_tointeger(L, lua_upvalueindex(1))];
  char chunkname[64];
  snprintf(chunkname, sizeof chunkname, "=[dlbridge] %s", m->name);
  if (luaL_loadbuffer(L, m->code, m->length, chunkname) != LUA_OK) return lua_error(L);
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

DLB_API void dlb_preload(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_dlbridge_core);
  lua_setfield(L, -2, "dlbridge.core");
  for (int i = 0; dlb_embedded_lua[i].name; i++) {
    lua_pushinteger(L, i);
    lua_pushcclosure(L, load_embedded, 1);
    lua_setfield(L, -2, dlb_embedded_lua[i].name);
  }
  lua_pop(L, 1);
}
