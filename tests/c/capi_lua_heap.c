/* capi_lua_heap.c -- an Array's own memory is Lua's: the host's allocator
 * counts it, and caps it.
 *
 * An Array is a 16-byte userdata and a record of its shape and strides
 * (src/lua/records.c) that dlbridge allocates through the state's allocator.
 * With a counting allocator: views kept alive hold a record's bytes each;
 * dropped and collected, the bytes come back but for the State's short pool
 * of free records. Under a cap, a loop making garbage arrays goes on
 * (finalized arrays give their records back, and dlbridge collects before
 * it refuses one), and arrays kept past the cap raise OUT_OF_MEMORY (or
 * Lua's own memory error, where not even the error object fits) and leave
 * the state usable. ASan's leak check sees any record lua_close leaves
 * behind. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <stdlib.h>
#include "check.h"
#include "dlbridge.h"

static size_t in_use; /* bytes the allocator has handed out */
static size_t cap;    /* 0: none */

static void *counting_alloc(void *ud, void *p, size_t old, size_t n) {
  size_t had = p ? old : 0; /* without a block, old is a type tag */
  void *q;
  (void)ud;
  if (n == 0) {
    free(p);
    in_use -= had;
    return NULL;
  }
  if (cap && n > had && in_use + (n - had) > cap) return NULL;
  if (!(q = realloc(p, n))) return NULL;
  in_use = in_use - had + n;
  return q;
}

static void run(lua_State *L, const char *chunk) {
  if (luaL_dostring(L, chunk) != LUA_OK) {
    fprintf(stderr, "%s\n  -> %s\n", chunk, lua_tostring(L, -1));
    CHECK(0);
    lua_pop(L, 1);
  }
}

static lua_State *new_state(void) {
  lua_State *L = lua_newstate(counting_alloc, NULL);
  luaL_openlibs(L);
  dlb_preload(L);
  run(L, "dl = require 'dlbridge'; a = dl.zeros(4)\n"
         "collectgarbage(); collectgarbage()");
  return L;
}

/* 1000 views hold their geometry's bytes, and give them back when collected. */
static void test_counted(void) {
  lua_State *L = new_state();
  size_t before, held;
  run(L, "kept = {}; for i = 1, 1000 do kept[i] = false end");
  before = in_use;
  run(L, "for i = 1, 1000 do kept[i] = a:slice(1, 1, 4) end");
  held = in_use - before;
  /* each: a 16-byte userdata and a record of 560 bytes or more */
  CHECK(held >= 1000 * (16 + 560));
  run(L, "for i = 1, 1000 do kept[i] = false end\n"
         "collectgarbage(); collectgarbage()");
  /* what stays: at most the pool's 256 records, some 150 KB */
  CHECK(in_use <= before + 256 * 600);
  lua_close(L);
  CHECK_EQ_INT(in_use, 0);
}

/* set_cap(kib): from now on the allocator refuses what would pass kib KiB
 * above what it has handed out; set_cap(0) lifts the cap. */
static int set_cap(lua_State *L) {
  lua_Integer kib = luaL_checkinteger(L, 1);
  cap = kib > 0 ? in_use + (size_t)kib * 1024 : 0;
  return 0;
}

static const char *capped_workload =
    "local kept, n = {}, 0\n"
    "local function keep() while true do kept[n + 1] = a:slice(1, 1, 4); n = n + 1 end end\n"
    "set_cap(256)\n"
    "for i = 1, 100000 do local v = a:slice(1, 1, 4) end -- garbage only: runs through\n"
    "local ok, err = pcall(keep)\n"
    "assert(not ok)\n"
    /* OUT_OF_MEMORY, or Lua's own error where not even that could be made */
    "assert(dl.is_error(err) and err.code == 'OUT_OF_MEMORY' or\n"
    "       err == 'not enough memory', tostring(err))\n"
    "kept = nil; collectgarbage(); collectgarbage()\n"
    "assert(a:slice(1, 1, 4).size == 4) -- usable again, under the same cap\n"
    "set_cap(0)\n"
    "return n\n";

/* Under a cap of 256 KiB more: the garbage loop runs through, and kept
 * arrays stop at the cap with a memory error. */
static void test_capped(void) {
  lua_State *L = new_state();
  long n;
  int top;
  lua_register(L, "set_cap", set_cap);
  top = lua_gettop(L);
  run(L, capped_workload); /* leaves the chunk's result when it ran */
  if (lua_gettop(L) > top) {
    n = (long)lua_tointeger(L, -1);
    CHECK(n > 100);               /* some arrays fitted, */
    CHECK(n < 256 * 1024 / 560); /* and no more than the cap holds */
  }
  cap = 0;
  lua_close(L);
  CHECK_EQ_INT(in_use, 0);
}

int main(void) {
  test_counted();
  test_capped();
  return check_done("capi_lua_heap");
}
