/* capi_sandbox.c -- what a hostile script cannot do to the host or to other
 * scripts of its lua_State.
 *
 * - Change dlbridge's shared metatables: every attempt raises READ_ONLY, so
 *   memory the host wraps (dlb_push_external) and tensors it hands over
 *   (dlb_push_versioned, capsules) are still released exactly once, before
 *   lua_close (collected) and at lua_close.
 * - Reset what the host set by clearing dlbridge's registry keys (with the
 *   debug library) and requiring the module again: the memory limit, file
 *   access, raw pointers (dlb_allow_pointers) and registered backends stay. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <stdlib.h>
#include "check.h"
#include "dlbridge.h"
#include "fixtures.h"

static int released, deleted;
static double engine_memory[16];
static int64_t tensor_data[4];
static const int64_t shape4[1] = {4};

static void count_release(void *ctx) {
  (void)ctx;
  released++;
}

static void count_delete(DLManagedTensorVersioned *self) {
  deleted++;
  free(self);
}

/* host_external(): engine memory wrapped as an array. */
static int host_external(lua_State *L) {
  const int64_t shape[1] = {16};
  if (dlb_push_external(L, engine_memory, dt(kDLFloat, 64, 1), 1, shape, NULL,
                        (DLDevice){kDLCPU, 0}, 0, count_release, NULL) != DLB_OK)
    return lua_error(L);
  return 1;
}

/* A fresh counted host tensor of 4 int64. */
static DLManagedTensorVersioned *counted_tensor(void) {
  producer *p = calloc(1, sizeof *p);
  producer_init(p, 1, count_delete, NULL, tensor_data, kDLCPU, dt(kDLInt, 64, 1), 1, shape4, NULL,
                0);
  return &p->t.v;
}

/* host_tensor(): a producer's tensor pushed as an array. */
static int host_tensor(lua_State *L) {
  if (dlb_push_versioned(L, counted_tensor()) != DLB_OK) return lua_error(L);
  return 1;
}

/* host_capsule(): a capsule owning a producer's tensor. */
static int host_capsule(lua_State *L) {
  if (dlb_push_capsule_versioned(L, counted_tensor()) != DLB_OK) return lua_error(L);
  return 1;
}

static lua_State *sandbox_state(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  dlb_preload(L);
  lua_register(L, "host_external", host_external);
  lua_register(L, "host_tensor", host_tensor);
  lua_register(L, "host_capsule", host_capsule);
  return L;
}

static void run_script(lua_State *L, const char *script) {
  if (luaL_dostring(L, script) != LUA_OK) {
    fprintf(stderr, "script: %s\n", lua_tostring(L, -1));
    CHECK(0);
    lua_pop(L, 1);
  }
}

/* Every way a script reaches a metatable, and every field it might clear. */
static const char *hostile =
    "local dl = require 'dlbridge'\n"
    "local targets = {host_external(), host_tensor(), host_capsule(), dl.zeros{1},\n"
    "                 dl.zeros{1}:to_dlpack(), select(2, pcall(dl.zeros, -1))}\n"
    "for _, t in ipairs(targets) do\n"
    "  for _, field in ipairs{'__gc', '__index', '__close', '__tostring', '__name'} do\n"
    "    local ok, err = pcall(function() getmetatable(t)[field] = nil end)\n"
    "    assert(not ok and err.code == 'READ_ONLY', tostring(err))\n"
    "  end\n"
    "  assert(not pcall(setmetatable, t, nil))\n"
    "  assert(not pcall(setmetatable, getmetatable(t), nil))\n"
    "end\n"
    "for _, t in ipairs{dl.E, dl.safe, dl.Error} do\n"
    "  assert(not pcall(function() t.SHAPE = 'x' end))\n"
    "end\n"
    "assert(dl.zeros{3}:sum() == 0)\n"
    "kept_external, kept_capsule = host_external(), host_capsule()\n";

static void test_metatables_cannot_be_changed(void) {
  lua_State *L = sandbox_state();
  released = deleted = 0;
  run_script(L, hostile);
  run_script(L, "collectgarbage(); collectgarbage()");
  CHECK_EQ_INT(released, 1); /* the dropped external array, finalized as usual */
  CHECK_EQ_INT(deleted, 2);  /* the dropped tensor and capsule */
  lua_close(L);
  CHECK_EQ_INT(released, 2); /* kept_external, at lua_close */
  CHECK_EQ_INT(deleted, 3);  /* kept_capsule */
}

/* Clears every registry key dlbridge uses and loads the module again. */
static const char *reload =
    "local reg = debug.getregistry()\n"
    "for k in pairs(reg) do\n"
    "  if type(k) == 'string' and k:match('^dlbridge') then reg[k] = nil end\n"
    "end\n"
    "package.loaded.dlbridge, package.loaded['dlbridge.core'] = nil, nil\n"
    "collectgarbage(); collectgarbage()\n"
    "dl = require 'dlbridge'\n";

static void test_reload_keeps_host_settings(void) {
  lua_State *L = sandbox_state();
  dlb_backend_ops ops = opaque_ops("engine");
  CHECK_EQ_INT(dlb_register_backend(L, &ops, NULL), DLB_OK);
  CHECK_EQ_INT(dlb_set_memory_limit(L, 1 << 20), DLB_OK);
  CHECK_EQ_INT(dlb_allow_files(L, 0), DLB_OK);
  run_script(L, "old = require 'dlbridge'; held = old.zeros{100000}"); /* 800 KB of the 1 MiB */
  run_script(L, reload);
  run_script(L, "assert(dl ~= old)\n"
                "local ok, err = pcall(dl.zeros, {100000})   -- 800 KB more: over the limit\n"
                "assert(not ok and err.code == 'OUT_OF_MEMORY', tostring(err))\n"
                "assert(dl.memory().limit == 2^20)\n"
                "ok, err = pcall(dl.load, 'x.npy')\n"
                "assert(not ok and err.code == 'UNSUPPORTED', tostring(err))\n"
                "assert(dl.zeros({2}, {device = 'engine'}).device == 'engine:0')\n");
  /* Orphaned and collected with the collector driven from Lua: still held. */
  run_script(L, reload);
  run_script(L, "assert(dl.memory().limit == 2^20)");
  lua_close(L);
}

/* A lua_State made after another closed gets none of its settings, even at
 * the same address. */
static void test_new_state_starts_afresh(void) {
  lua_State *L = sandbox_state();
  CHECK_EQ_INT(dlb_set_memory_limit(L, 1 << 20), DLB_OK);
  lua_close(L);
  for (int i = 0; i < 4; i++) {
    L = sandbox_state();
    run_script(L, "assert(require('dlbridge').memory().limit == nil)");
    lua_close(L);
  }
}

/* dlb_allow_pointers(L, 0): a:ptr() (LuaJIT's FFI pointer) raises
 * UNSUPPORTED naming the host's switch, on every Lua; a reload keeps it. */
static void test_pointers_can_be_turned_off(void) {
  static const char *check = "local ok, err = pcall(function() return dl.zeros{3}:ptr() end)\n"
                             "assert(not ok and err.code == 'UNSUPPORTED', tostring(err))\n"
                             "assert(err.message:find('raw pointers', 1, true), tostring(err))\n";
  lua_State *L = sandbox_state();
  CHECK_EQ_INT(dlb_allow_pointers(L, 0), DLB_OK);
  run_script(L, "dl = require 'dlbridge'");
  run_script(L, check);
  run_script(L, reload);
  run_script(L, check);
  lua_close(L);
}

int main(void) {
  test_metatables_cannot_be_changed();
  test_pointers_can_be_turned_off();
  test_reload_keeps_host_settings();
  test_new_state_starts_afresh();
  return check_done("capi_sandbox");
}
