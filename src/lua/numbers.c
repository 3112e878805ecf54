/* numbers.c -- Lua numbers to and from 64-bit integers, one rule on every Lua.
 *
 * Lua 5.3+ has integers; 5.1, 5.2 and LuaJIT have only doubles. So that one
 * script gives the same arrays everywhere:
 * - a number is "an integer" (dl.array infers int64) when it is integral and
 *   within +-2^53 on those runtimes (5.3+: when it is of the integer
 *   subtype, as its literal was written);
 * - an index, a shape or a count is any number with an exact int64 value
 *   (3.0 is 3, 3.5 is no integer), as lua_tointegerx says on 5.3+;
 * - no int64 is rounded on its way into Lua: beyond +-2^53 LuaJIT gives a
 *   boxed int64_t/uint64_t cdata (as its FFI does: 1LL), 5.1/5.2 raise
 *   VALUE naming the exact routes. Such cdata are taken back as input.
 * LuaJIT's FFI is reached on first use as require "ffi" would (package.loaded.ffi, else
 * its package.preload loader, which luaL_openlibs leaves there): three
 * small Lua functions kept in the registry. Where the host took ffi away
 * LuaJIT behaves as 5.1 here, and a:ptr() is UNSUPPORTED. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

#define EXACT_LIMIT 9007199254740992.0    /* 2^53: every integer up to it is a double */
#define INT64_BOUND 9223372036854775808.0 /* 2^63 */

#if DLB_LUA_IS_JIT
#define FFI_KEY "dlbridge.ffi" /* registry: {read, box, cast} or absent */
#define LUA_TCDATA 10          /* lua_type of a cdata in LuaJIT */
enum { FFI_READ = 1, FFI_BOX, FFI_CAST };

/* The helpers, with 64 bits as two numbers (high and low 32 bits: no
 * address crosses into Lua, see dlbL_push_address): read(x) says whether x
 * is an int64_t (1) or uint64_t (2) cdata, else 0, and its bits; box(hi,
 * lo, unsigned) makes one of bits; cast(hi, lo, ctype) makes a typed pointer. */
static const char ffi_helpers[] =
    "local ffi = ...\n"
    "local i64, u64 = ffi.typeof('int64_t'), ffi.typeof('uint64_t')\n"
    "local istype, cast = ffi.istype, ffi.cast\n"
    "local split = u64(4294967296)\n"
    "local function halves(u) return tonumber(u / split), tonumber(u % split) end\n"
    "local function join(hi, lo) return u64(hi) * split + lo end\n"
    "local function read(x)\n"
    "  if istype(i64, x) then return 1, halves(cast(u64, x)) end\n"
    "  if istype(u64, x) then return 2, halves(x) end\n"
    "  return 0\n"
    "end\n"
    "local function box(hi, lo, unsigned)\n"
    "  if unsigned then return join(hi, lo) end\n"
    "  return cast(i64, join(hi, lo))\n"
    "end\n"
    "local function to_pointer(hi, lo, ctype) return cast(ctype, join(hi, lo)) end\n"
    "return {read, box, to_pointer}\n";

/* Pushes the ffi module as require "ffi" would give it (LuaJIT preloads
 * it: the standalone interpreter loads it only when required; loading it
 * here stores it in package.loaded as require does, so that it is set up
 * once), or nil when the host took it away. */
static int require_ffi_unprotected(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED") != LUA_TTABLE) return 0;
  if (lua_getfield(L, -1, "ffi") == LUA_TTABLE) return 1;
  lua_pop(L, 1);
  dlbL_push_preload(L);
  if (lua_getfield(L, -1, "ffi") != LUA_TFUNCTION) return 0;
  lua_pushliteral(L, "ffi");
  lua_call(L, 1, 1);
  if (lua_type(L, -1) != LUA_TTABLE) return 0;
  lua_pushvalue(L, -1);
  lua_setfield(L, 1, "ffi"); /* _LOADED.ffi, as require does */
  return 1;
}

/* Makes the helpers (registry FFI_KEY) when ffi can be had: 1, else 0. */
static int open_ffi(lua_State *L) {
  int top = lua_gettop(L), ok = 0;
  lua_pushcfunction(L, require_ffi_unprotected);
  if (lua_pcall(L, 0, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TTABLE &&
      luaL_loadbuffer(L, ffi_helpers, sizeof ffi_helpers - 1, "=[dlbridge] ffi") == LUA_OK) {
    lua_insert(L, -2);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TTABLE) {
      lua_setfield(L, LUA_REGISTRYINDEX, FFI_KEY);
      ok = 1;
    }
  }
  lua_settop(L, top);
  return ok;
}

/* Pushes helper which; 0 (nothing pushed) without the FFI. */
static int push_ffi(lua_State *L, int which) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, FFI_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    if (!open_ffi(L)) return 0; /* first use, or the host took ffi away */
    lua_getfield(L, LUA_REGISTRYINDEX, FFI_KEY);
  }
  lua_rawgeti(L, -1, which);
  lua_remove(L, -2);
  return 1;
}

/* Pushes the high and low 32 bits of u, two numbers. */
static void push_halves(lua_State *L, uint64_t u) {
  lua_pushnumber(L, (lua_Number)(u >> 32));
  lua_pushnumber(L, (lua_Number)(u & 0xffffffffu));
}

/* The 64-bit integer cdata at idx: 1 int64_t, 2 uint64_t (into *bits), 0 none. */
static int read_cdata(lua_State *L, int idx, uint64_t *bits) {
  int kind;
  if (lua_type(L, idx) != LUA_TCDATA) return 0;
  idx = lua_absindex(L, idx);
  if (!push_ffi(L, FFI_READ)) return 0;
  lua_pushvalue(L, idx);
  lua_call(L, 1, 3);
  kind = (int)lua_tointeger(L, -3);
  if (kind) *bits = (uint64_t)lua_tonumber(L, -2) << 32 | (uint64_t)lua_tonumber(L, -1);
  lua_pop(L, 3);
  return kind;
}

/* Pushes bits as a boxed int64_t (or uint64_t); 0 without the FFI. */
static int box_cdata(lua_State *L, uint64_t bits, int is_unsigned) {
  if (!push_ffi(L, FFI_BOX)) return 0;
  push_halves(L, bits);
  lua_pushboolean(L, is_unsigned);
  lua_call(L, 3, 1);
  return 1;
}
#endif

int dlbL_cdata_integer(lua_State *L, int idx, dlb_scalar *out) {
#if DLB_LUA_IS_JIT
  uint64_t bits = 0;
  switch (read_cdata(L, idx, &bits)) {
    case 1:
      out->kind = DLB_SCALAR_INT;
      memcpy(&out->v.i, &bits, sizeof bits);
      return 1;
    case 2:
      if (bits <= (uint64_t)INT64_MAX) {
        out->kind = DLB_SCALAR_INT;
        out->v.i = (int64_t)bits;
      } else {
        out->kind = DLB_SCALAR_UINT;
        out->v.u = bits;
      }
      return 1;
    default: break;
  }
#else
  (void)L, (void)idx, (void)out;
#endif
  return 0;
}

int dlbL_isinteger(lua_State *L, int idx) {
#if DLB_LUA_HAS_INTEGERS
  return lua_isinteger(L, idx);
#else
  if (lua_type(L, idx) == LUA_TNUMBER) {
    lua_Number n = lua_tonumber(L, idx);
    return n == floor(n) && fabs(n) <= EXACT_LIMIT;
  } else {
    dlb_scalar s;
    return dlbL_cdata_integer(L, idx, &s) && s.kind == DLB_SCALAR_INT;
  }
#endif
}

int64_t dlbL_tointegerx(lua_State *L, int idx, int *isint) {
  int ok = 0;
  int64_t v = 0;
#if DLB_LUA_HAS_INTEGERS
  v = (int64_t)lua_tointegerx(L, idx, &ok);
#else
  dlb_scalar s;
  if (lua_type(L, idx) == LUA_TNUMBER || lua_type(L, idx) == LUA_TSTRING) {
    int isnum;
    lua_Number n = lua_tonumberx(L, idx, &isnum);
    if (isnum && n == floor(n) && n >= -INT64_BOUND && n < INT64_BOUND) {
      v = (int64_t)n;
      ok = 1;
    }
  } else if (dlbL_cdata_integer(L, idx, &s) && s.kind == DLB_SCALAR_INT) {
    v = s.v.i;
    ok = 1;
  }
#endif
  if (isint) *isint = ok;
  return v;
}

int64_t dlbL_tointeger(lua_State *L, int idx) { return dlbL_tointegerx(L, idx, NULL); }

#if !DLB_LUA_HAS_INTEGERS
/* No exact Lua value for v: boxed on LuaJIT with its FFI, else VALUE. */
static void push_wide(lua_State *L, uint64_t bits, int is_unsigned, const char *text) {
#if DLB_LUA_IS_JIT
  if (box_cdata(L, bits, is_unsigned)) return;
#else
  (void)bits, (void)is_unsigned;
#endif
  dlbL_raise_hint(L, DLB_E_VALUE, "dlbridge",
                  "tostring(a) prints it exactly, a:tobytes() gives its bytes, and "
                  "a:astype(\"float64\") rounds it on purpose; LuaJIT gives it as int64_t cdata",
                  "the integer %s has no exact value in this Lua (numbers are doubles: "
                  "exact to 2^53)",
                  text);
}
#endif

void dlbL_push_int64(lua_State *L, int64_t v) {
#if DLB_LUA_HAS_INTEGERS
  lua_pushinteger(L, (lua_Integer)v);
#else
  if (v >= -(INT64_C(1) << 53) && v <= (INT64_C(1) << 53)) {
    lua_pushnumber(L, (lua_Number)v);
  } else {
    char text[24];
    uint64_t bits;
    snprintf(text, sizeof text, "%lld", (long long)v);
    memcpy(&bits, &v, sizeof bits);
    push_wide(L, bits, 0, text);
  }
#endif
}

void dlbL_push_uint64(lua_State *L, uint64_t v) {
#if DLB_LUA_HAS_INTEGERS
  /* above 2^63-1 there is no Lua integer: a float, as 5.3+ converts */
  if (v <= (uint64_t)INT64_MAX) lua_pushinteger(L, (lua_Integer)v);
  else lua_pushnumber(L, (lua_Number)v);
#else
  if (v <= (UINT64_C(1) << 53)) {
    lua_pushnumber(L, (lua_Number)v);
  } else {
    char text[24];
    snprintf(text, sizeof text, "%llu", (unsigned long long)v);
    push_wide(L, v, 1, text);
  }
#endif
}

int dlbL_push_pointer(lua_State *L, void *p, const char *ctype) {
#if DLB_LUA_IS_JIT
  if (!push_ffi(L, FFI_CAST)) return 0;
  push_halves(L, (uint64_t)(uintptr_t)p);
  lua_pushstring(L, ctype);
  lua_call(L, 3, 1);
  return 1;
#else
  (void)L, (void)p, (void)ctype;
  return 0;
#endif
}
