/* error.c -- dlbridge.Error objects: tables with a stable code, raised with lua_error. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

/* What an error table holds; the strings are the caller's (stack buffers
 * are fine: they are copied into Lua strings before anything returns). */
typedef struct error_fields {
  dlb_status code;
  const char *op, *message, *hint, *backend, *device;
  int has_native;
  int64_t native;
} error_fields;

/* push_fields(fields): the error table (run in protected mode by push_table). */
static int push_fields(lua_State *L) {
  const error_fields *f = dlbL_to_address(L, 1);
  const char *hint = f->hint;
  /* No hint of its own: an ARGUMENT error shows how the function is called. */
  if (!hint && f->code == DLB_E_ARGUMENT && f->op) hint = dlbL_usage(f->op);
  if (!hint) hint = dlb_default_hint(f->code);
  lua_createtable(L, 0, 8);
  lua_pushstring(L, dlb_status_name(f->code));
  lua_setfield(L, -2, "code");
  lua_pushstring(L, f->message);
  lua_setfield(L, -2, "message");
  lua_pushstring(L, f->op);
  lua_setfield(L, -2, "op");
  if (hint) {
    lua_pushstring(L, hint);
    lua_setfield(L, -2, "hint");
  }
  if (f->backend && f->backend[0]) {
    lua_pushstring(L, f->backend);
    lua_setfield(L, -2, "backend");
  }
  if (f->device && f->device[0]) {
    lua_pushstring(L, f->device);
    lua_setfield(L, -2, "device");
  }
  if (f->has_native) {
    lua_pushinteger(L, (lua_Integer)f->native);
    lua_setfield(L, -2, "status");
  }
  luaL_where(L, 2); /* 0: this function, 1: dlbridge's, 2: its caller */
  lua_setfield(L, -2, "where");
  luaL_setmetatable(L, DLB_ERROR_MT);
  return 1;
}

/* Pushes the error table. Lua running out of memory while making it is
 * tried once more (a failure may be transient); the second time, Lua's own
 * memory error (the string "not enough memory") is raised instead. */
static void push_table(lua_State *L, const error_fields *f) {
  for (int attempt = 0;; attempt++) {
    int extra = dlbL_push_callee(L, push_fields); /* no allocation */
    dlbL_push_address(L, f);
    if (lua_pcall(L, DLBL_ADDRESS_SLOTS + extra, 1, 0) == LUA_OK) return;
    if (attempt > 0) lua_error(L);
    lua_pop(L, 1);
  }
}

void dlbL_push_error(lua_State *L, const dlb_error *err, const char *op) {
  error_fields f = {err->code,    op,          err->message,    err->hint,
                    err->backend, err->device, err->has_native, err->native_status};
  push_table(L, &f);
}

static int raise_table(lua_State *L, dlb_status code, const char *op, const char *hint,
                       const char *message) {
  error_fields f = {code, op, message, hint, NULL, NULL, 0, 0};
  push_table(L, &f);
  return lua_error(L);
}

int dlbL_raise_hint(lua_State *L, dlb_status code, const char *op, const char *hint,
                    const char *fmt, ...) {
  char message[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  raise_table(L, code, op, hint, message);
  __builtin_unreachable();
}

/* Whether the running C function was called as a method (a:f(...)). */
static int called_as_method(lua_State *L) {
  lua_Debug ar;
  return lua_getstack(L, 0, &ar) && lua_getinfo(L, "n", &ar) && ar.namewhat &&
         strcmp(ar.namewhat, "method") == 0;
}

int dlbL_extra_argument(lua_State *L, int max, const char *op) {
  dlbL_raise_hint(L, DLB_E_ARGUMENT, op, dlbL_usage(op),
                  "unexpected argument #%d (%s%s): %s takes %d at most", max + 1,
                  luaL_typename(L, max + 1), called_as_method(L) ? "; self is #1" : "", op, max);
}

int dlbL_raise_error(lua_State *L, const dlb_error *err, const char *op) {
  dlbL_push_error(L, err, op);
  lua_error(L);
  __builtin_unreachable();
}

dlb_status dlbL_push_protected(lua_State *L, lua_CFunction f) {
  int extra = dlbL_push_callee(L, f); /* pushing it allocates nothing */
  if (lua_pcall(L, extra, 1, 0) == LUA_OK) return DLB_OK;
  lua_pop(L, 1);
  return DLB_E_OUT_OF_MEMORY;
}

void dlbL_pcall(lua_State *L, int nargs, int nresults, const char *op) {
  switch (lua_pcall(L, nargs, nresults, 0)) {
    case LUA_OK: return;
    case LUA_ERRMEM:
      lua_pop(L, 1);
      dlbL_raise(L, DLB_E_OUT_OF_MEMORY, op, "Lua has no memory for the result");
    default:
      /* A dlbridge error raised inside f saw f's pcall as its caller: give it
       * the position of the code that called us instead. Any other error (a
       * metamethod's, whatever it is) propagates untouched. */
      if (dlbL_is_error(L, -1)) {
        if (lua_getfield(L, -1, "where") == LUA_TSTRING) {
          lua_pop(L, 1);
          luaL_where(L, 1);
          lua_setfield(L, -2, "where");
        } else {
          lua_pop(L, 1); /* the field, not the error */
        }
      }
      lua_error(L);
  }
}

int dlbL_call_protected(lua_State *L, lua_CFunction f, const char *op) {
  int nargs = lua_gettop(L), extra = dlbL_push_callee(L, f);
  for (int k = 0; k <= extra; k++) lua_insert(L, 1); /* f (and the trampoline) below */
  dlbL_pcall(L, nargs + extra, LUA_MULTRET, op);
  return lua_gettop(L);
}

/* push_string_unprotected(s): the string s. */
static int push_string_unprotected(lua_State *L) {
  lua_pushstring(L, (const char *)dlbL_to_address(L, 1));
  return 1;
}

void dlbL_push_string(lua_State *L, const char *s, const char *op) {
  int extra = dlbL_push_callee(L, push_string_unprotected);
  dlbL_push_address(L, s);
  dlbL_pcall(L, DLBL_ADDRESS_SLOTS + extra, 1, op);
}

/* tostring(err): "file:line: dlbridge: CODE: message (hint: ...)", led by
 * err.where as Lua's own error messages are (nothing when the call came
 * from C), so that an uncaught error printed by the interpreter says where. */
static int error_tostring(lua_State *L) {
  luaL_Buffer b;
  if (lua_type(L, 1) != LUA_TTABLE)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "Error:__tostring", "tostring(err) of a dlbridge.Error",
                    "a dlbridge.Error expected, got %s", luaL_typename(L, 1));
  luaL_buffinit(L, &b);
  if (lua_getfield(L, 1, "where") == LUA_TSTRING) luaL_addvalue(&b);
  else lua_pop(L, 1);
  luaL_addstring(&b, "dlbridge: ");
  lua_getfield(L, 1, "code");
  luaL_addvalue(&b);
  luaL_addstring(&b, ": ");
  lua_getfield(L, 1, "message");
  luaL_addvalue(&b);
  if (lua_getfield(L, 1, "hint") == LUA_TSTRING) {
    luaL_addstring(&b, " (hint: ");
    luaL_addvalue(&b);
    luaL_addchar(&b, ')');
  } else {
    lua_pop(L, 1);
  }
  luaL_pushresult(&b);
  return 1;
}

/* No __concat: "x" .. err raises Lua's own error, as for any table. Debian's
 * Lua 5.4.4 (its CVE-2022-33099 patch, upstream 42d40581, fixed upstream by
 * 603b2c64 in 5.4.5) keeps a stack pointer across a __concat call: a call that
 * moves the stack (growing it for the metamethod's frame, or a collection
 * shrinking it) leaves the state running on the freed stack. */

/* err:is("SHAPE") */
static int error_is(lua_State *L) {
  if (lua_type(L, 1) != LUA_TTABLE)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "Error:is",
                    "call it with a colon on a caught error: err:is(\"SHAPE\")",
                    "err:is(code) needs an error, got %s", luaL_typename(L, 1));
  dlbL_check_nargs(L, 2, "Error:is");
  lua_settop(L, 2); /* err:is() compares with nil: never true */
  lua_getfield(L, 1, "code");
  lua_pushboolean(L, lua_rawequal(L, -1, 2));
  return 1;
}

int dlbL_is_error(lua_State *L, int idx) {
  int ok = lua_type(L, idx) == LUA_TTABLE && lua_getmetatable(L, idx);
  if (ok) {
    luaL_getmetatable(L, DLB_ERROR_MT);
    ok = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
  }
  return ok;
}

/* dl.is_error(v): whether v is a dlbridge.Error. */
static int error_is_error(lua_State *L) {
  dlbL_check_nargs(L, 1, "dl.is_error");
  lua_pushboolean(L, dlbL_is_error(L, 1));
  return 1;
}

/* err.is (the one method): a function, not a table a script could change. */
static int error_index(lua_State *L) {
  const char *key = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
  if (strcmp(key, "is") == 0) lua_pushcfunction(L, error_is);
  else lua_pushnil(L);
  return 1;
}

void dlbL_open_errors(lua_State *L) {
  if (luaL_newmetatable(L, DLB_ERROR_MT)) {
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, error_index);
    lua_setfield(L, -2, "__index");
    dlbL_protect_metatable(L, -1, "dlbridge.Error");
  }
  /* dl.Error is what getmetatable(err) returns: the read-only stand-in. */
  lua_getfield(L, -1, "__metatable");
  lua_remove(L, -2);
  lua_setfield(L, -2, "Error");
  lua_pushcfunction(L, error_is_error);
  lua_setfield(L, -2, "is_error");
  /* dl.E.SHAPE == "SHAPE" */
  lua_createtable(L, 0, DLB_STATUS_COUNT);
  for (int s = 1; s < DLB_STATUS_COUNT; s++) {
    lua_pushstring(L, dlb_status_name((dlb_status)s));
    lua_setfield(L, -2, dlb_status_name((dlb_status)s));
  }
  dlbL_push_readonly(L, -1, "dl.E");
  lua_remove(L, -2);
  lua_setfield(L, -2, "E");
}
