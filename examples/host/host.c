/* host.c -- an embedding host: Lua 5.4 + dlbridge through its C API, a
 * backend named "engine" whose memory never leaves it, and one native
 * consumer, engine.analyze(capsule). Runs the Lua script given as argument.
 *
 *   dlbridge-host examples/quickstart.lua
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>

#include "dlbridge.h"
#include "engine.h"

/* Prints an error object through tostring (a dlbridge.Error prints
 * through its __tostring). This file builds with every Lua from 5.1 on. */
static int report(lua_State *L) {
  const char *message;
  lua_getglobal(L, "tostring");
  lua_insert(L, -2);
  message = lua_pcall(L, 1, 1, 0) == 0 ? lua_tostring(L, -1) : NULL;
  fprintf(stderr, "dlbridge-host: %s\n", message ? message : "(an error without a message)");
  lua_close(L);
  return 1;
}

int main(int argc, char **argv) {
  const char *script = argc > 1 ? argv[1] : "examples/quickstart.lua";
  lua_State *L = luaL_newstate();
  if (!L) return 1;
  luaL_openlibs(L);
  /* This copy of dlbridge answers require "dlbridge": nothing is loaded from disk. */
  dlb_preload(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "dlbridge");
  if (lua_pcall(L, 1, 0, 0) != 0) return report(L);
  if (engine_register(L) != 0) return report(L);
  engine_open_consumer(L);
  if (luaL_dofile(L, script) != 0) return report(L);
  lua_close(L);
  return 0;
}
