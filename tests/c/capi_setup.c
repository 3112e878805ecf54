/* capi_setup.c -- setup order for hosts: every C entry point works right
 * after luaL_newstate (dlbridge opens itself in the state on first use),
 * `require "dlbridge"` afterwards returns that same module, and errors
 * raised through the C API are always dlbridge.Error objects. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dlbridge.h"
#include "fixtures.h"

/* A host function raising a coded error through the C API. */
static int host_fail(lua_State *L) {
  return dlb_raise(L, DLB_E_VALUE, "engine.load", "pass a positive size", "size %d is too small",
                   (int)luaL_optinteger(L, 1, 0));
}

/* A bare state (standard libraries only) where nothing of dlbridge ran. */
static lua_State *bare_state(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  return L;
}

/* Register a backend, then preload + require: the backend is there. */
static void test_register_before_require(void) {
  lua_State *L = bare_state();
  dlb_backend_ops ops = opaque_ops("engine");
  CHECK_EQ_INT(dlb_register_backend(L, &ops, NULL), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), 0);
  dlb_preload(L);
  CHECK_EQ_INT(RUN(L, "dl = require 'dlbridge'\n"
                      "for _, b in ipairs(dl.backends()) do\n"
                      "  if b.name == 'engine' then return 1 end\n"
                      "end\n"
                      "return 0"),
               1);
  CHECK_EQ_INT(RUN(L, "return dl.zeros({3}, {device = 'engine'}).size"), 3);
  lua_close(L);
  CHECK_EQ_INT(atomic_load(&opaque_released), 1);
  atomic_store(&opaque_released, 0);
}

/* Push an array before require: it is one of the module's arrays. */
static void test_push_before_require(void) {
  lua_State *L = bare_state();
  static double data[3] = {1, 2, 3};
  const int64_t n = 3;
  const DLDataType f64 = {kDLFloat, 64, 1};
  const DLDevice host = {kDLCPU, 0};
  CHECK_EQ_INT(dlb_push_external(L, data, f64, 1, &n, NULL, host, 0, NULL, NULL), DLB_OK);
  lua_setglobal(L, "x");
  dlb_preload(L);
  CHECK_EQ_INT(RUN(L, "local dl = require 'dlbridge' return dl.is_array(x) and x:sum() == 6"), 1);
  CHECK_EQ_INT(RUN(L, "return rawequal(require 'dlbridge', require 'dlbridge.core')"), 1);
  lua_close(L);
}

/* An error raised by a host function before any require is still a
 * dlbridge.Error: a table with a metatable, printing as such (never
 * "table: 0x..."), that dl.is_error recognises once the module is loaded. */
static void test_error_before_require(void) {
  lua_State *L = bare_state();
  const char *text;
  lua_register(L, "host_fail", host_fail);
  CHECK(luaL_dostring(L, "host_fail(0)") != LUA_OK);
  CHECK_EQ_INT(lua_type(L, -1), LUA_TTABLE);
  CHECK(lua_getmetatable(L, -1));
  lua_pop(L, 1);
  text = luaL_tolstring(L, -1, NULL);
  CHECK(strstr(text, "dlbridge: VALUE: size 0 is too small") != NULL);
  CHECK(strstr(text, "table: ") == NULL);
  lua_pop(L, 1);
  CHECK_EQ_STR(field(L, -1, "code"), "VALUE");
  CHECK_EQ_STR(field(L, -1, "op"), "engine.load");
  CHECK_EQ_STR(field(L, -1, "hint"), "pass a positive size");
  lua_setglobal(L, "early_error");
  dlb_preload(L);
  CHECK_EQ_INT(RUN(L, "return require('dlbridge').is_error(early_error)"), 1);
  lua_close(L);
}

/* A memory limit set first holds for everything the scripts do later. */
static void test_limit_before_require(void) {
  lua_State *L = bare_state();
  CHECK_EQ_INT(dlb_set_memory_limit(L, 1 << 20), DLB_OK);
  dlb_preload(L);
  CHECK_EQ_INT(RUN(L, "local dl = require 'dlbridge'\n"
                      "local ok, e = pcall(dl.zeros, {2^20})\n"
                      "return not ok and e.code == 'OUT_OF_MEMORY'"),
               1);
  lua_close(L);
}

/* Without dlb_preload or any module files: the C API alone still works. */
static void test_no_module_files(void) {
  lua_State *L = bare_state();
  dlb_borrowed view;
  static float data[2] = {5, 6};
  const int64_t n = 2;
  const DLDataType f32 = {kDLFloat, 32, 1};
  const DLDevice host = {kDLCPU, 0};
  CHECK_EQ_INT(RUN(L, "package.path = '' package.cpath = '' return 1"), 1);
  CHECK_EQ_INT(dlb_push_external(L, data, f32, 1, &n, NULL, host, 0, NULL, NULL), DLB_OK);
  CHECK_EQ_INT(dlb_borrow(L, -1, &view), DLB_OK);
  CHECK(view.data == data);
  dlb_borrow_end(&view);
  lua_close(L);
}

int main(void) {
  test_register_before_require();
  test_push_before_require();
  test_error_before_require();
  test_limit_before_require();
  test_no_module_files();
  return check_done("capi_setup");
}
