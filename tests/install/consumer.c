/* consumer.c -- links the installed libdlbridge, preloads it, runs one line of Lua. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <dlbridge.h>

int main(void) {
  lua_State *L = luaL_newstate();
  int ok;
  luaL_openlibs(L);
  dlb_preload(L);
  ok = luaL_dostring(L,
                     "local dl = require 'dlbridge' assert(dl.arange(4):view{2, 2}:get(2, 1) == 2)"
                     " print('consumer: ' .. dl.version)") == 0; /* (every Lua) */
  if (!ok) fprintf(stderr, "%s\n", lua_tostring(L, -1));
  lua_close(L);
  return ok ? 0 : 1;
}
