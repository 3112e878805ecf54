/* module.c -- luaopen_dlbridge_core, the per-state registry, and preloading. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include "../core/backend.h"
#include "hostapi.h"

#define DLB_MODULE_KEY "dlbridge.core"

void dlbL_track_new(lua_State *L, dlb_lua_state *state) {
  /* Lua >= 5.4.4 refuses every lua_gc request (-1) while a finalizer runs. */
  if (dlbL_gc_running(L) < 0) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, state->pins);
    lua_pushvalue(L, -2);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    state->pinned++;
  } else if (state->pinned) {
    lua_newtable(L); /* the old pins become garbage: the objects live on unpinned */
    lua_rawseti(L, LUA_REGISTRYINDEX, state->pins);
    state->pinned = 0;
  }
}

/* lauxlib's default allocator (luaL_newstate's): realloc and free, with no
 * cap. Found once by asking a throwaway state; 1 when that failed. */
static uintptr_t default_allocator(void) {
  static atomic_uintptr_t found = 0;
  uintptr_t f = atomic_load_explicit(&found, memory_order_relaxed);
  if (!f) {
    lua_State *T = luaL_newstate();
    f = 1;
    if (T) {
      f = (uintptr_t)lua_getallocf(T, NULL);
      lua_close(T);
    }
    atomic_store_explicit(&found, f, memory_order_relaxed);
  }
  return f;
}

/* Under the default allocator a Lua allocation fails only when the process
 * is out of memory, and then the error object could not be made either: the
 * script gets Lua's own memory error, as from any Lua code. Skipping the
 * protected call there saves about 10 ns on every array and capsule made.
 * Any other allocator may have a cap (a sandboxing host's): protected. */
int dlbL_alloc_may_fail(lua_State *L) {
  return (uintptr_t)lua_getallocf(L, NULL) != default_allocator();
}

void dlbL_call_maker(lua_State *L, int nargs, const char *op, const char *what) {
  if (!dlbL_alloc_may_fail(L)) {
    lua_call(L, nargs, 1);
    return;
  }
  if (lua_pcall(L, nargs, 1, 0) != LUA_OK) {
    lua_pop(L, 1);
    dlbL_raise(L, DLB_E_OUT_OF_MEMORY, op, "Lua has no memory for %s", what);
  }
}

/* Puts the State at 1, found garbage outside lua_close (a script cleared
 * every reference to it through the debug library), back under the
 * registry and marks it for finalization again, so that lua_close still
 * ends it (host_state.c). Its objects and host state stay as they were. */
static void resurrect(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "dlbridge.orphans");
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "dlbridge.orphans");
  }
  lua_pushvalue(L, 1);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  luaL_getmetatable(L, DLB_STATE_MT);
  lua_setmetatable(L, 1);
}

/* __gc of the State userdata, which runs in lua_close (the registry holds
 * it): releases the objects made by finalizers (which Lua may never
 * finalize) and the pool of Array records (records.c), then drops its
 * reference to the host state (buffers still exported keep their backends
 * alive). From here on dlbridge makes no new objects here. */
static int state_gc(lua_State *L) {
  dlb_lua_state *state = dlbL_to_state(L, 1);
  if (!state || !state->host) return 0;
  if (!dlbL_looks_like_close(L)) {
    resurrect(L);
    return 0;
  }
  if (state->pins != LUA_NOREF) {
    if (lua_rawgeti(L, LUA_REGISTRYINDEX, state->pins) == LUA_TTABLE) {
      lua_pushnil(L);
      while (lua_next(L, -2)) { /* keys: the pinned objects; nothing here allocates */
        lua_pop(L, 1);
        if (dlbL_to_array(L, -1)) dlbL_finalize_array(L, -1);
        else dlbL_capsule_release(L, -1);
      }
    }
    lua_pop(L, 1);
  }
  dlbL_records_close(L, state);
  dlbL_host_release(state);
  return 0;
}

/* Pushes a new State pointing at L's host state (the cpu backend registered
 * on first use). */
static void push_state(lua_State *L) {
  dlb_lua_state *state = lua_newuserdatauv(L, sizeof *state, 0);
  dlb_error err;
  state->host = NULL;
  state->registry = NULL;
  state->cpu = NULL;
  state->budget = NULL;
  state->pins = LUA_NOREF;
  state->pinned = 0;
  dlbL_pacing_init(state);
  dlbL_records_init(L, state);
  state->capsule_mt = LUA_NOREF;
  state->tag = DLB_STATE_TAG;
  if (luaL_newmetatable(L, DLB_STATE_MT)) {
    lua_pushcfunction(L, state_gc);
    lua_setfield(L, -2, "__gc");
    dlbL_protect_metatable(L, -1, "dlbridge.State");
  }
  lua_setmetatable(L, -2);
  lua_newtable(L);
  state->pins = luaL_ref(L, LUA_REGISTRYINDEX);
  if (dlbL_host_adopt(L, state, &err) != DLB_OK) dlbL_raise_error(L, &err, "require");
}

/* Pushes t[name] = {in_use = n} for a backend into the table at -1. */
static void push_backend_memory(lua_State *L, const dlb_backend *b, const dlb_registry *r) {
  lua_createtable(L, 0, 1);
  lua_pushinteger(L, (lua_Integer)dlb_backend_in_use(b, r));
  lua_setfield(L, -2, "in_use");
  lua_setfield(L, -2, b->name);
}

/* dl.memory(): {in_use =, peak =, limit = (nil: none), external =, backends = {name = {in_use =}}},
 * in bytes of dlbridge buffers (allocated or imported) this state holds,
 * including those still held by DLPack consumers. */
static int memory_unprotected(lua_State *L) {
  dlb_lua_state *state = dlbL_state(L);
  size_t limit = atomic_load(&state->budget->limit);
  const dlb_registry *r = state->registry;
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, (lua_Integer)dlb_budget_in_use(state->budget));
  lua_setfield(L, -2, "in_use");
  lua_pushinteger(L, (lua_Integer)atomic_load(&state->budget->peak));
  lua_setfield(L, -2, "peak");
  if (limit) {
    lua_pushinteger(L, (lua_Integer)limit);
    lua_setfield(L, -2, "limit");
  }
  lua_pushinteger(L, (lua_Integer)atomic_load(&state->budget->held));
  lua_setfield(L, -2, "external");
  lua_createtable(L, 0, (int)r->count);
  for (size_t i = 0; i < r->count; i++) push_backend_memory(L, r->items[i], r);
  lua_setfield(L, -2, "backends");
  return 1;
}

static int module_memory(lua_State *L) {
  dlbL_check_nargs(L, 0, "dl.memory");
  return dlbL_call_protected(L, memory_unprotected, "dl.memory");
}

DLB_API dlb_status dlb_set_memory_limit(lua_State *L, size_t bytes) {
  dlb_error err;
  dlb_lua_state *state = dlbL_open_state(L, &err);
  if (!state) return dlbL_capi_failed(L, &err, "dlb_set_memory_limit");
  atomic_store(&state->budget->limit, bytes);
  return DLB_OK;
}

dlb_lua_state *dlbL_find_state(lua_State *L) {
  dlb_lua_state *state = dlbL_upvalue_state(L);
  if (!state) {
    lua_getfield(L, LUA_REGISTRYINDEX, DLB_STATE_KEY);
    state = dlbL_to_state(L, -1);
    lua_pop(L, 1);
  }
  return state;
}

/* A dlb_allow_* entry: the state opened (or made) and set by set. */
static dlb_status allow(lua_State *L, int allowed, void (*set)(dlb_lua_state *, int),
                        const char *name) {
  dlb_error err;
  dlb_lua_state *state = dlbL_open_state(L, &err);
  if (!state) return dlbL_capi_failed(L, &err, name);
  set(state, allowed);
  return DLB_OK;
}

DLB_API dlb_status dlb_allow_files(lua_State *L, int allowed) {
  return allow(L, allowed, dlbL_set_files_allowed, "dlb_allow_files");
}

DLB_API dlb_status dlb_allow_pointers(lua_State *L, int allowed) {
  return allow(L, allowed, dlbL_set_pointers_allowed, "dlb_allow_pointers");
}

DLB_API dlb_status dlb_allow_mapping(lua_State *L, int allowed) {
  return allow(L, allowed, dlbL_set_mapping_allowed, "dlb_allow_mapping");
}

void dlbL_check_file_access(lua_State *L, const char *op) {
  if (dlbL_files_allowed(dlbL_state(L))) return;
  dlbL_raise_hint(L, DLB_E_UNSUPPORTED, op,
                  "the host turned file access off (dlb_allow_files); load from a string "
                  "the host gives you instead",
                  "this host does not let scripts read or write files");
}

/* Opens the module, leaving nothing on the stack (run in protected mode). */
static int open_unprotected(lua_State *L) {
  luaopen_dlbridge_core(L);
  return 0;
}

dlb_lua_state *dlbL_open_state(lua_State *L, dlb_error *err) {
  dlb_lua_state *state = dlbL_find_state(L);
  if (!state) {
    lua_pushcfunction(L, open_unprotected);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
      lua_pop(L, 1);
      dlb_fail(err, DLB_E_OUT_OF_MEMORY, "Lua has no memory to open dlbridge in this lua_State");
      return NULL;
    }
    state = dlbL_find_state(L);
  }
  if (!state || !state->registry) {
    dlb_fail(err, DLB_E_UNSUPPORTED, "dlbridge is closed in this lua_State");
    return NULL;
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
  dlbL_check_nargs(L, 1, "dl.is_array");
  lua_pushboolean(L, dlbL_to_array(L, 1) != NULL);
  return 1;
}

/* dl.dtypes(): the list of dtype names. */
static int dtypes_unprotected(lua_State *L) {
  lua_createtable(L, DLB_DTYPE_COUNT, 0);
  for (int d = 0; d < DLB_DTYPE_COUNT; d++) {
    lua_pushstring(L, dlb_dtype_get((dlb_dtype)d)->name);
    lua_rawseti(L, -2, d + 1);
  }
  return 1;
}

static int module_dtypes(lua_State *L) {
  dlbL_check_nargs(L, 0, "dl.dtypes");
  return dlbL_call_protected(L, dtypes_unprotected, "dl.dtypes");
}

/* next(t, k) for dl.pairs over a plain table (the global next may be gone). */
static int table_next(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  if (lua_next(L, 1)) return 2;
  lua_pushnil(L);
  return 1;
}

/* dl.pairs(v): what pairs(v) gives on Lua 5.2+, on every Lua (5.1's and
 * LuaJIT's pairs ignore __pairs): an Array walks its first dimension,
 * dl.E and read-only views read through, a plain table is walked. */
static int module_pairs(lua_State *L) {
  dlbL_check_nargs(L, 1, "dl.pairs");
  if (luaL_getmetafield(L, 1, "__pairs")) {
    lua_pushvalue(L, 1);
    lua_call(L, 1, 3);
    return 3;
  }
  if (lua_type(L, 1) != LUA_TTABLE)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "dl.pairs", dlbL_usage("dl.pairs"),
                    "a table, an array or a read-only view expected, got %s", luaL_typename(L, 1));
  lua_pushcfunction(L, table_next);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

static const luaL_Reg module_functions[] = {{"is_array", module_is_array},
                                            {"dtypes", module_dtypes},
                                            {"memory", module_memory},
                                            {"pairs", module_pairs},
                                            {NULL, NULL}};

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
  dlbL_open_trampoline(L); /* first: protected calls allocate nothing from here on */
  lua_createtable(L, 0, 40);
  module = lua_gettop(L);
  luaL_newmetatable(L, DLB_ARRAY_MT);
  push_state(L);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, DLB_STATE_KEY); /* for the C API (no upvalues) */
  lua_createtable(L, 0, 32);                         /* Array methods */
  dlbL_open_array(L);
  set_functions(L, module, dlbL_create_functions);
  set_functions(L, module, module_functions);
  set_functions(L, module, dlbL_dlpack_functions);
  set_functions(L, module, dlbL_backend_functions);
  set_functions(L, module, dlbL_compute_functions);
  set_functions(L, module, dlbL_reduce_functions);
  set_functions(L, module, dlbL_linalg_functions);
  set_functions(L, module, dlbL_vecmath_functions);
  set_functions(L, module, dlbL_npy_functions);
  set_functions(L, module, dlbL_safetensors_functions);
  set_functions(L, module, dlbL_protect_functions);
  set_functions(L, module, dlbL_select_functions);
  set_functions(L, module, dlbL_scatter_functions);
  set_functions(L, module, dlbL_sort_functions);
  set_functions(L, module, dlbL_quantile_functions);
  set_functions(L, module, dlbL_scan_functions);
  set_functions(L, module, dlbL_construct_functions);
  dlbL_open_random(L, module);
  dlbL_open_linalg(L, module);
  dlbL_protect_metatable(L, module + 1, "dlbridge.Array");
  dlbL_open_capsule(L);
  lua_settop(L, module);
  dlbL_open_errors(L);
  lua_pushliteral(L, DLB_VERSION_STRING);
  lua_setfield(L, module, "version");
  /* Strings the binding looks up while a call runs, kept interned so that
   * the lookups never allocate (and never fail under memory pressure). */
  lua_createtable(L, 2, 0);
  lua_pushliteral(L, "re");
  lua_rawseti(L, -2, 1);
  lua_pushliteral(L, "im");
  lua_rawseti(L, -2, 2);
  lua_setfield(L, LUA_REGISTRYINDEX, "dlbridge.strings");
  dlbL_open_exchange(L);
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
  dlbL_push_preload(L);
  lua_pushcfunction(L, luaopen_dlbridge_core);
  lua_setfield(L, -2, "dlbridge.core");
  for (int i = 0; dlb_embedded_lua[i].name; i++) {
    lua_pushinteger(L, i);
    lua_pushcclosure(L, load_embedded, 1);
    lua_setfield(L, -2, dlb_embedded_lua[i].name);
  }
  lua_pop(L, 1);
}
