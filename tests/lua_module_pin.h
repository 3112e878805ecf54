/* lua_module_pin.h -- for the specs' Lua C modules that hand dlbridge
 * functions of their own (backend hooks, DLPack deleters). Lua 5.1 and
 * LuaJIT unload C modules while lua_close runs, before dlbridge's state
 * releases what they registered (5.2+ unload them last); such a module must
 * stay loaded until the process ends, as docs/manual/lua-versions.md says. Pinned here with
 * RTLD_NODELETE (the includer defines _GNU_SOURCE first). */
#ifndef DLB_TESTS_LUA_MODULE_PIN_H
#define DLB_TESTS_LUA_MODULE_PIN_H
#include <dlfcn.h>

/* Keeps the shared object holding anchor (any object of the module) loaded. */
static inline void lua_module_pin(const void *anchor) {
  Dl_info info;
  if (dladdr(anchor, &info) && info.dli_fname)
    (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NODELETE);
}
#endif
