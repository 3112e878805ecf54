/* error.c -- dlbridge.Error objects: tables with a stable code, raised with lua_error. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

/* Pushes the error table. message is copied before anything can longjmp,
 * so callers may pass stack buffers. */
static void push_table(lua_State *L, dlb_status code, const char *op, const char *message,
                       const char *hint, const char *backend, const char *device, int has_native,
                       int64_t native) {
  lua_createtable(L, 0, 8);
  lua_pushstring(L, dlb_status_name(code));
  lua_setfield(L, -2, "code");
  lua_pushstring(L, message);
  lua_setfield(L, -2, "message");
  lua_pushstring(L, op);
  lua_setfield(L, -2, "op");
  if (!hint) hint = dlb_default_hint(code);
  if (hint) {
    lua_pushstring(L, hint);
    lua_setfield(L, -2, "hint");
  }
  if (backend && backend[0]) {
    lua_pushstring(L, backend);
    lua_setfield(L, -2, "backend");
  }
  if (device && device[0]) {
    lua_pushstring(L, device);
    lua_setfield(L, -2, "device");
  }
  if (has_native) {
    lua_pushinteger(L, (lua_Integer)native);
    lua_setfield(L, -2, "status");
  }
  luaL_where(L, 1);
  lua_setfield(L, -2, "where");
  luaL_setmetatable(L, DLB_ERROR_MT);
}

void dlbL_push_error(lua_State *L, const dlb_error *err, const char *op) {
  push_table(L, err->code, op, err->message, err->hint, err->backend, err->device,
             err->has_native, err->native_status);
}

static int raise_table(lua_State *L, dlb_status code, const char *op, const char *message) {
  push_table(L, code, op, message, NULL, NULL, NULL, 0, 0);
  return lua_error(L);
}

int dlbL_raise(lua_State *L, dlb_status code, const char *op, const char *fmt, ...) {
  char message[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  raise_table(L, code, op, message);
  __builtin_unreachable();
}

int dlbL_raise_error(lua_State *L, const dlb_error *err, const char *op) {
  dlbL_push_error(L, err, op);
  lua_error(L);
  __builtin_unreachable();
}

dlb_status dlbL_push_protected(lua_State *L, lua_CFunction f) {
  lua_pushcfunction(L, f); /* a light C function: pushing it allocates nothing */
  if (lua_pcall(L, 0, 1, 0) == LUA_OK) return DLB_OK;
  lua_pop(L, 1);
  return DLB_E_OUT_OF_MEMORY;
}

int dlbL_call_protected(lua_State *L, lua_CFunction f, const char *op) {
  int nargs = lua_gettop(L);
  lua_pushcfunction(L, f);
  lua_insert(L, 1);
  switch (lua_pcall(L, nargs, LUA_MULTRET, 0)) {
    case LUA_OK: return lua_gettop(L);
    case LUA_ERRMEM:
      dlbL_raise(L, DLB_E_OUT_OF_MEMORY, op, "Lua could not allocate the result");
    default:
      /* A dlbridge error raised inside f saw f's pcall as its caller: give it
       * the position of the code that called us instead. */
      if (lua_type(L, -1) == LUA_TTABLE && lua_getfield(L, -1, "where") == LUA_TSTRING) {
        lua_pop(L, 1);
        luaL_where(L, 1);
        lua_setfield(L, -2, "where");
      } else {
        lua_pop(L, 1);
      }
      return lua_error(L);
  }
}

/* tostring(err): "dlbridge: CODE: message (hint: ...)". */
static int error_tostring(lua_State *L) {
  luaL_Buffer b;
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_buffinit(L, &b);
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

/* "text" .. err and err .. "text" concatenate the tostring form. */
static int error_concat(lua_State *L) {
  for (int i = 1; i <= 2; i++) {
    if (lua_type(L, i) == LUA_TTABLE) {
      lua_pushcfunction(L, error_tostring);
      lua_pushvalue(L, i);
      lua_call(L, 1, 1);
    } else {
      luaL_tolstring(L, i, NULL);
    }
  }
  lua_concat(L, 2);
  return 1;
}

/* err:is("SHAPE") */
static int error_is(lua_State *L) {
  if (lua_type(L, 1) != LUA_TTABLE)
    dlbL_raise(L, DLB_E_ARGUMENT, "Error:is", "err:is(code) needs an error, got %s",
               luaL_typename(L, 1));
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
  lua_pushboolean(L, dlbL_is_error(L, 1));
  return 1;
}

void dlbL_open_errors(lua_State *L) {
  if (luaL_newmetatable(L, DLB_ERROR_MT)) {
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, error_concat);
    lua_setfield(L, -2, "__concat");
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, error_is);
    lua_setfield(L, -2, "is");
    lua_setfield(L, -2, "__index");
  }
  lua_setfield(L, -2, "Error");
  lua_pushcfunction(L, error_is_error);
  lua_setfield(L, -2, "is_error");
  /* dl.E.SHAPE == "SHAPE" */
  lua_createtable(L, 0, DLB_STATUS_COUNT);
  for (int s = 1; s < DLB_STATUS_COUNT; s++) {
    lua_pushstring(L, dlb_status_name((dlb_status)s));
    lua_setfield(L, -2, dlb_status_name((dlb_status)s));
  }
  lua_setfield(L, -2, "E");
}
