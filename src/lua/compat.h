/* compat.h -- the one place that knows which Lua the binding is built for.
 *
 * dlbridge builds from one source for Lua 5.1, 5.2, 5.3, 5.4 and LuaJIT 2.1
 * (which reports 5.1). Every other file of the binding includes this header
 * instead of <lua.h>, writes the Lua 5.4 C API, and tests only the DLB_LUA_*
 * feature macros below, never LUA_VERSION_NUM or LUAJIT_VERSION.
 *
 * What it does, in the manner of lua-compat53 (Debian's lua-compat53-dev,
 * read but not used): fills in the 5.2-5.4 functions an older Lua lacks,
 * and gives the functions whose result changed (lua_getfield returns the
 * type since 5.3) their 5.3 form. It is not lua-compat53 because that stops
 * at 5.3 (no lua_newuserdatauv, no user values by number), redefines what
 * LuaJIT already has (luaL_setfuncs, luaL_testudata, lua_tointegerx) and
 * swaps luaL_Buffer for a type of its own, and because numbers need our
 * rule, not its: see numbers.c. Only what the binding uses is here.
 *
 * Invariants: a name that the Lua in use declares is never redefined, except
 * on 5.1/5.2 the four getters below, whose 5.3 form returns what the old
 * one left on the stack (the value) plus its type, and luaL_newmetatable,
 * whose 5.3 form names the type in __name (getmetatable(x).__name). */
#ifndef DLB_LUA_COMPAT_H
#define DLB_LUA_COMPAT_H

#include <lauxlib.h>
#include <lua.h>
#include <stdint.h>
#if defined(__has_include)
#if __has_include(<luajit.h>)
#include <luajit.h>
#endif
#endif

/* --- what the Lua in use has ------------------------------------------- */
#if defined(LUAJIT_VERSION)
#define DLB_LUA_IS_JIT 1 /* LuaJIT 2.1: 5.1 plus some of 5.2, and the FFI */
#else
#define DLB_LUA_IS_JIT 0
#endif
/* Integers as a subtype of number (5.3+); else every number is a double. */
#define DLB_LUA_HAS_INTEGERS (LUA_VERSION_NUM >= 503)
/* Finalizers of its own that lua_gc refuses to run in (5.4.4+: -1). */
#define DLB_LUA_GC_REFUSES_IN_FINALIZERS (LUA_VERSION_NUM >= 504)
/* lua_gc(LUA_GCSTEP, n): n counts bytes from 5.5, KiB before. */
#define DLB_LUA_GC_STEP_IN_BYTES (LUA_VERSION_NUM >= 505)
/* lua_gc(LUA_GCSTEP, n) works off n KiB at once, starting a cycle even in
 * the pause after one (5.1, LuaJIT); from 5.2 it adds n KiB to a debt that
 * the pause's credit pays first, as the collector's own allocations do. */
#define DLB_LUA_GC_STEP_IGNORES_PAUSE (LUA_VERSION_NUM == 501)
/* The main thread in the registry (LUA_RIDX_MAINTHREAD: 5.2+). */
#define DLB_LUA_HAS_MAINTHREAD (LUA_VERSION_NUM >= 502)
/* The version as dl.lua_version says it: "5.1" ... "5.4", "LuaJIT". */
#if DLB_LUA_IS_JIT
#define DLB_LUA_NAME "LuaJIT"
#elif LUA_VERSION_NUM == 501
#define DLB_LUA_NAME "5.1"
#elif LUA_VERSION_NUM == 502
#define DLB_LUA_NAME "5.2"
#elif LUA_VERSION_NUM == 503
#define DLB_LUA_NAME "5.3"
#else
#define DLB_LUA_NAME "5.4"
#endif

/* lua_gc(L, what, data) on every version (5.4's is variadic). */
#define dlbL_gc(L, what, data) lua_gc((L), (what), (data))

/* Whether the collector runs: 1 yes, 0 stopped (collectgarbage("stop")),
 * -1 lua_gc refuses requests now (5.4.4+, in a finalizer). 5.1 cannot
 * tell (no LUA_GCISRUNNING; LuaJIT has it): 1. */
static inline int dlbL_gc_running(lua_State *L) {
#ifdef LUA_GCISRUNNING
  return lua_gc(L, LUA_GCISRUNNING, 0);
#else
  (void)L;
  return 1;
#endif
}

/* What names L's lua_State, shared by all its threads, while it is open:
 * its main thread (5.2+), or its registry table (5.1, which keeps no main
 * thread in the registry). */
static inline const void *dlbL_state_identity(lua_State *L) {
#if LUA_VERSION_NUM >= 502
  const void *main;
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  main = lua_topointer(L, -1);
  lua_pop(L, 1);
  return main;
#else
  return lua_topointer(L, LUA_REGISTRYINDEX);
#endif
}

/* Whether the running function's upvalues (lua_upvalueindex) may be read.
 * 5.4 answers "none" for an upvalue the function lacks and when no C
 * closure runs. 5.1 to 5.3 and LuaJIT read them off whatever frame is
 * current: at a host's outermost level (no function running) or in a hook
 * of a Lua function that reads garbage. There only a running C function's
 * are read. */
static inline int dlbL_upvalues_readable(lua_State *L) {
#if LUA_VERSION_NUM >= 504
  (void)L;
  return 1;
#else
  lua_Debug ar;
  return lua_getstack(L, 0, &ar) && lua_getinfo(L, "S", &ar) && ar.what && ar.what[0] == 'C';
#endif
}

/* --- a C address as arguments of a function called in protected mode --- */
/* LuaJIT's 64-bit light userdata is interned: pushing an address of a
 * 512 GiB segment it has not seen allocates (lj_lightud_intern), and after
 * 255 segments raises "bad light userdata pointer". So an address pushed
 * before lua_pcall protects anything (the function to call, a job for it)
 * could raise Lua's plain memory error from code that promised a coded one,
 * leaking what it held. There an address travels as two numbers (its high
 * and low 32 bits, exact in a double); elsewhere as one light userdata,
 * which never allocates. DLBL_ADDRESS_SLOTS counts the stack slots. */
#if DLB_LUA_IS_JIT && UINTPTR_MAX > 0xffffffffu
#define DLBL_ADDRESS_SLOTS 2
static inline void dlbL_push_address(lua_State *L, const void *p) {
  uint64_t u = (uint64_t)(uintptr_t)p;
  lua_pushnumber(L, (lua_Number)(u >> 32));
  lua_pushnumber(L, (lua_Number)(u & 0xffffffffu));
}
/* The address pushed at idx (> 0) by dlbL_push_address. */
static inline void *dlbL_to_address(lua_State *L, int idx) {
  uint64_t hi = (uint64_t)lua_tonumber(L, idx), lo = (uint64_t)lua_tonumber(L, idx + 1);
  return (void *)(uintptr_t)(hi << 32 | lo);
}
#else
#define DLBL_ADDRESS_SLOTS 1
static inline void dlbL_push_address(lua_State *L, const void *p) {
  lua_pushlightuserdata(L, (void *)p);
}
static inline void *dlbL_to_address(lua_State *L, int idx) { return lua_touserdata(L, idx); }
#endif

/* --- calling a C function in protected mode, allocating nothing first --- */
/* 5.2+ push a C function without upvalues as a light value. 5.1 and LuaJIT
 * make a closure for every lua_pushcfunction: an allocation before lua_pcall
 * protects anything, which under a host's memory limit raises Lua's plain
 * "not enough memory" from code that promised a coded error or none. There
 * one trampoline, made when dlbridge opens, takes the function's address as
 * its first argument(s) (DLBL_ADDRESS_SLOTS). */
#define DLB_TRAMPOLINE_KEY "dlbridge.trampoline" /* registry: the trampoline (5.1) */
#if LUA_VERSION_NUM == 501
typedef union dlbL_callee {
  lua_CFunction f;
  void *p;
} dlbL_callee;

static int dlbL_compat_trampoline(lua_State *L) {
  dlbL_callee c;
  c.p = dlbL_to_address(L, 1);
  for (int k = 0; k < DLBL_ADDRESS_SLOTS; k++) lua_remove(L, 1);
  return c.f(L);
}
#endif

/* Makes the trampoline (luaopen; nothing to do on 5.2+). */
static inline void dlbL_open_trampoline(lua_State *L) {
#if LUA_VERSION_NUM == 501
  lua_pushcfunction(L, dlbL_compat_trampoline);
  lua_setfield(L, LUA_REGISTRYINDEX, DLB_TRAMPOLINE_KEY);
#else
  (void)L;
#endif
}

/* Pushes f to be called by lua_pcall (its arguments pushed after): returns
 * the count of extra arguments the call then takes (0; DLBL_ADDRESS_SLOTS
 * on 5.1 and LuaJIT, f's address). No allocation once dlbridge is open in L. */
static inline int dlbL_push_callee(lua_State *L, lua_CFunction f) {
#if LUA_VERSION_NUM == 501
  dlbL_callee c;
  lua_getfield(L, LUA_REGISTRYINDEX, DLB_TRAMPOLINE_KEY); /* an interned key: no allocation */
  if (lua_type(L, -1) == LUA_TFUNCTION) {
    c.p = NULL;
    c.f = f;
    dlbL_push_address(L, c.p);
    return DLBL_ADDRESS_SLOTS;
  }
  lua_pop(L, 1);
#endif
  lua_pushcfunction(L, f);
  return 0;
}

/* A string of a known size, written in place: dlbL_buffinitsize gives the
 * room (leaving something on the stack), dlbL_pushresultsize replaces it by
 * the string. 5.4's luaL_Buffer, whose failure to grow is a memory error;
 * before 5.4 that failure is a plain error ("not enough memory for buffer
 * allocation", 5.2/5.3) and 5.1 has no room of a given size: there a
 * userdata holds the bytes (a memory error when it cannot be made). In
 * every version the bytes exist twice while the string is made (5.4's
 * luaL_pushresult copies its room into the string too). */
/* The longest string the Lua in use can make (LuaJIT's objects stay under
 * 2 GiB); dlbL_buffinitsize gives NULL, making nothing, above it. */
#if DLB_LUA_IS_JIT
#define DLB_LUA_MAX_STRING ((size_t)0x7fffff00)
#else
#define DLB_LUA_MAX_STRING ((size_t)-1 / 2)
#endif
static inline char *dlbL_buffinitsize(lua_State *L, luaL_Buffer *b, size_t size) {
  if (size > DLB_LUA_MAX_STRING) return NULL;
#if LUA_VERSION_NUM >= 504
  return luaL_buffinitsize(L, b, size);
#else
  (void)b;
  return (char *)lua_newuserdata(L, size ? size : 1);
#endif
}
static inline void dlbL_pushresultsize(lua_State *L, luaL_Buffer *b, size_t size) {
#if LUA_VERSION_NUM >= 504
  (void)L;
  luaL_pushresultsize(b, size);
#else
  (void)b;
  lua_pushlstring(L, (const char *)lua_touserdata(L, -1), size);
  lua_remove(L, -2);
#endif
}

/* Whether L is the main thread of its lua_State (every version). */
static inline int dlbL_is_main_thread(lua_State *L) {
  int main = lua_pushthread(L);
  lua_pop(L, 1);
  return main;
}

/* Pushes the table of package.preload. */
static inline void dlbL_push_preload(lua_State *L) {
#if LUA_VERSION_NUM == 501 /* not in the registry: _LOADED.package.preload */
  lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
  if (lua_istable(L, -1)) {
    lua_getfield(L, -1, "package");
    lua_remove(L, -2);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "preload");
      lua_remove(L, -2);
    }
  }
  if (lua_istable(L, -1)) return;
  lua_pop(L, 1);
  luaL_findtable(L, LUA_REGISTRYINDEX, "_PRELOAD", 8);
#elif defined(LUA_PRELOAD_TABLE)
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
#else
  luaL_getsubtable(L, LUA_REGISTRYINDEX, "_PRELOAD"); /* 5.2 has no name for it */
#endif
}

/* --- 5.1 and LuaJIT: what 5.2 added ------------------------------------ */
#if LUA_VERSION_NUM == 501
#ifndef LUA_OK
#define LUA_OK 0
#endif
#define lua_rawlen(L, i) lua_objlen((L), (i))
#define luaL_checkversion(L) ((void)(L))
#define lua_setuservalue(L, i) lua_setfenv((L), (i))
#define lua_getuservalue(L, i) lua_getfenv((L), (i))

static inline int lua_absindex(lua_State *L, int i) {
  return i > 0 || i <= LUA_REGISTRYINDEX ? i : lua_gettop(L) + i + 1;
}

/* The length of the value at i as # gives it (a userdata's __len). */
static inline void lua_len(lua_State *L, int i) {
  i = lua_absindex(L, i);
  if (!luaL_callmeta(L, i, "__len")) lua_pushnumber(L, (lua_Number)lua_objlen(L, i));
}

/* t[name] of the table at i, made a new table when it is not one. */
static inline int luaL_getsubtable(lua_State *L, int i, const char *name) {
  i = lua_absindex(L, i);
  lua_getfield(L, i, name);
  if (lua_type(L, -1) == LUA_TTABLE) return 1;
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushvalue(L, -1);
  lua_setfield(L, i, name);
  return 0;
}

/* tostring(v) of the value at i, pushed (the C tests print errors with it). */
static inline const char *luaL_tolstring(lua_State *L, int i, size_t *len) {
  i = lua_absindex(L, i);
  if (!luaL_callmeta(L, i, "__tostring")) {
    switch (lua_type(L, i)) {
      case LUA_TNUMBER:
      case LUA_TSTRING: lua_pushvalue(L, i); break;
      case LUA_TBOOLEAN: lua_pushstring(L, lua_toboolean(L, i) ? "true" : "false"); break;
      case LUA_TNIL: lua_pushliteral(L, "nil"); break;
      default: lua_pushfstring(L, "%s: %p", luaL_typename(L, i), lua_topointer(L, i)); break;
    }
  }
  return lua_tolstring(L, -1, len);
}

#if !DLB_LUA_IS_JIT /* LuaJIT has these */
static inline void luaL_setfuncs(lua_State *L, const luaL_Reg *l, int nup) {
  luaL_checkstack(L, nup, "too many upvalues");
  for (; l->name; l++) {
    for (int k = 0; k < nup; k++) lua_pushvalue(L, -nup);
    lua_pushcclosure(L, l->func, nup);
    lua_setfield(L, -(nup + 2), l->name);
  }
  lua_pop(L, nup);
}
static inline void luaL_setmetatable(lua_State *L, const char *name) {
  luaL_getmetatable(L, name);
  lua_setmetatable(L, -2);
}
static inline void *luaL_testudata(lua_State *L, int i, const char *name) {
  void *p = lua_touserdata(L, i);
  int same;
  if (!p || !lua_getmetatable(L, i)) return NULL;
  luaL_getmetatable(L, name);
  same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same ? p : NULL;
}
#define luaL_newlibtable(L, l) lua_createtable((L), 0, (int)(sizeof(l) / sizeof *(l)) - 1)
#define luaL_newlib(L, l) (luaL_newlibtable((L), (l)), luaL_setfuncs((L), (l), 0))
static inline lua_Number lua_tonumberx(lua_State *L, int i, int *isnum) {
  lua_Number n = lua_tonumber(L, i);
  if (isnum) *isnum = n != 0 || lua_isnumber(L, i);
  return n;
}
#endif
#endif /* 5.1 */

/* --- 5.1 and 5.2: what 5.3 added --------------------------------------- */
#if LUA_VERSION_NUM <= 502
/* The getters return the type of what they pushed (5.1's lua_getglobal is
 * a macro over lua_getfield, so it does too). */
#if LUA_VERSION_NUM == 502
#define lua_getglobal(L, name) (lua_getglobal((L), (name)), lua_type((L), -1))
#endif
#define lua_getfield(L, i, k) (lua_getfield((L), (i), (k)), lua_type((L), -1))
#define lua_rawget(L, i) (lua_rawget((L), (i)), lua_type((L), -1))
#define lua_rawgeti(L, i, n) (lua_rawgeti((L), (i), (n)), lua_type((L), -1))
#define lua_gettable(L, i) (lua_gettable((L), (i)), lua_type((L), -1))

/* luaL_newmetatable as 5.3's: a new metatable has __name = tname. */
static inline int dlbL_compat_newmetatable(lua_State *L, const char *tname) {
  if (!luaL_newmetatable(L, tname)) return 0;
  lua_pushstring(L, tname);
  lua_setfield(L, -2, "__name");
  return 1;
}
#define luaL_newmetatable(L, tname) dlbL_compat_newmetatable((L), (tname))

static inline int lua_geti(lua_State *L, int i, lua_Integer n) {
  i = lua_absindex(L, i);
  lua_pushinteger(L, n);
  return lua_gettable(L, i);
}

/* Moves the top n elements... as 5.3's: rotates [i, top] n places up. */
static inline void dlbL_compat_reverse(lua_State *L, int a, int b) {
  for (; a < b; a++, b--) {
    lua_pushvalue(L, a);
    lua_pushvalue(L, b);
    lua_replace(L, a);
    lua_replace(L, b);
  }
}
static inline void lua_rotate(lua_State *L, int i, int n) {
  int top = lua_gettop(L), m;
  i = lua_absindex(L, i);
  m = n >= 0 ? top - n : i - n - 1;
  dlbL_compat_reverse(L, i, m);
  dlbL_compat_reverse(L, m + 1, top);
  dlbL_compat_reverse(L, i, top);
}
#endif /* 5.1, 5.2 */

/* --- before 5.4: user values by number --------------------------------- */
#if LUA_VERSION_NUM <= 503
/* Userdata before 5.4 have one user value (5.1: an environment table; 5.2:
 * a table or nil; 5.3: any value): nuvalue is 0 or 1 here. */
#define lua_newuserdatauv(L, size, nuvalue) lua_newuserdata((L), (size))

/* Sets user value n (only 1) of the userdata at i to the value on top (pops it). */
static inline int lua_setiuservalue(lua_State *L, int i, int n) {
  (void)n;
  i = lua_absindex(L, i);
#if LUA_VERSION_NUM <= 502
  lua_createtable(L, 1, 0); /* a table holds it: what 5.1/5.2 accept */
  lua_insert(L, -2);
  lua_rawseti(L, -2, 1);
#endif
  lua_setuservalue(L, i);
  return 1;
}
/* Pushes user value n (only 1) of the userdata at i; returns its type. */
static inline int lua_getiuservalue(lua_State *L, int i, int n) {
  (void)n;
  lua_getuservalue(L, i);
#if LUA_VERSION_NUM <= 502
  if (lua_type(L, -1) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_pushnil(L);
  } else {
    lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
  }
#endif
  return lua_type(L, -1);
}
#endif

#endif /* DLB_LUA_COMPAT_H */
