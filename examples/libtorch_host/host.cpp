// host.cpp -- an engine host that hands script-prepared arrays to LibTorch:
// Lua 5.4 + dlbridge (the installed package) + LibTorch, one process.
//
//   dlbridge-libtorch-host [script.lua [args...]]   (default: classify.lua)
//
// Scripts get dlbridge (linked, preloaded), the backend "engine" of the C
// host demo (memory that never leaves it: its arrays cannot be exported),
// and the global `torch` (torch_module.hpp): torch.infer(batch) runs the
// model on the batch's memory and returns the logits' memory, both through
// DLPack without a copy. Exit status 0, or 1 after printing the error.
#include <cstdio>

#include "torch_module.hpp"

extern "C" {
#include "engine.h"
}

// Prints the error object on the stack (a dlbridge.Error through __tostring).
static int report(lua_State *L) {
  std::fprintf(stderr, "dlbridge-libtorch-host: %s\n", luaL_tolstring(L, -1, nullptr));
  lua_close(L);
  return 1;
}

int main(int argc, char **argv) {
  const char *script = argc > 1 ? argv[1] : "classify.lua";
  tb::runtime rt; // outlives the state: tensors may outlive it too
  lua_State *L = luaL_newstate();
  if (!L) return 1;
  luaL_openlibs(L);
  dlb_preload(L); // require "dlbridge" answers with the linked copy
  lua_getglobal(L, "require");
  lua_pushliteral(L, "dlbridge");
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) return report(L);
  if (engine_register(L) != 0) return report(L);
  tb::open_torch(L, &rt);
  lua_createtable(L, argc, 0); // arg, as lua5.4 sets it: arg[0] the script
  for (int i = 1; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - 1);
  }
  lua_setglobal(L, "arg");
  if (luaL_dofile(L, script) != LUA_OK) return report(L);
  lua_close(L);
  return 0;
}
