/* capi_budget.c -- dlb_set_memory_limit: a host bounds the memory a script
 * holds through dlbridge, which Lua's allocator never sees.
 *
 * - limit 64 MiB, a script keeps 1 MiB arrays in a table: OUT_OF_MEMORY
 *   near 64, the state stays usable, and once the table is dropped
 *   allocation works again (dlbridge collects garbage before refusing);
 * - buffers exported to a consumer that frees them on another thread give
 *   their bytes back there;
 * - zero-copy imports count against the limit, and for the GC: a loop
 *   importing 8 MiB tensors without collectgarbage keeps few alive. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "check.h"
#include "dlbridge.h"
#include "fixtures.h"

#define MiB (1024 * 1024)

/* Runs a chunk that returns one integer. */
static long long run_int(lua_State *L, const char *chunk) {
  long long v = -1;
  if (luaL_dostring(L, chunk) != LUA_OK) {
    fprintf(stderr, "chunk failed: %s\n", luaL_tolstring(L, -1, NULL));
    CHECK(0);
  } else {
    v = (long long)lua_tointeger(L, -1);
  }
  lua_settop(L, 0);
  return v;
}

static void test_limit(void) {
  lua_State *L = new_state();
  long long kept;
  CHECK_EQ_INT(dlb_set_memory_limit(L, 64 * MiB), DLB_OK);
  CHECK_EQ_INT(run_int(L, "return dl.memory().limit"), 64 * MiB);
  kept = run_int(L, "T = {}\n"
                    "for i = 1, 100 do\n"
                    "  local ok, a = pcall(dl.zeros, {1024 * 1024}, {dtype = 'uint8'})\n"
                    "  if not ok then ERR = a break end\n"
                    "  T[i] = a\n"
                    "end\n"
                    "return #T");
  CHECK(kept >= 60 && kept <= 64);
  CHECK_EQ_INT(run_int(L, "return ERR.code == 'OUT_OF_MEMORY' and 1 or 0"), 1);
  CHECK_EQ_INT(run_int(L, "return ERR.message:find('64 MiB', 1, true) and 1 or "
                          "ERR.message:find('67108864', 1, true) and 1 or 0"),
               1);
  CHECK_EQ_INT(run_int(L, "return ERR.hint:find('dlb_set_memory_limit', 1, true) and 1 or 0"), 1);
  /* The state stays usable: reads, views, small arrays within the limit. */
  CHECK_EQ_INT(run_int(L, "return T[1][1] + T[2]:narrow(1, 1, 10).size"), 10);
  /* Dropping the table makes room: no collectgarbage by the script. */
  CHECK_EQ_INT(
      run_int(L, "T = nil\n"
                 "local n = 0\n"
                 "for i = 1, 200 do n = n + dl.zeros({1024 * 1024}, {dtype = 'uint8'}).size end\n"
                 "return math.floor(n / (1024 * 1024))"),
      200);
  CHECK(run_int(L, "return dl.memory().in_use") <= 64 * MiB);
  CHECK(run_int(L, "return dl.memory().peak") <= 64 * MiB);
  /* Removing the limit. */
  CHECK_EQ_INT(dlb_set_memory_limit(L, 0), DLB_OK);
  CHECK_EQ_INT(run_int(L, "return dl.memory().limit == nil and 1 or 0"), 1);
  lua_close(L);
}

/* A deleter called on another thread. */
static void *delete_on_thread(void *arg) {
  DLManagedTensorVersioned *t = arg;
  t->deleter(t);
  return NULL;
}

static void test_refund_on_another_thread(void) {
  lua_State *L = new_state();
  DLManagedTensorVersioned *t = NULL;
  pthread_t thread;
  long long before = run_int(L, "collectgarbage() return dl.memory().in_use");
  CHECK_EQ_INT(dlb_set_memory_limit(L, 16 * MiB), DLB_OK);
  CHECK_EQ_INT(luaL_dostring(L, "A = dl.zeros({8 * 1024 * 1024}, {dtype = 'uint8'}) return A"),
               LUA_OK);
  CHECK_EQ_INT(dlb_export_versioned(L, -1, NULL, &t), DLB_OK);
  lua_settop(L, 0);
  /* The consumer holds the buffer after the script let go of it. */
  CHECK_EQ_INT(run_int(L, "A:delete() A = nil collectgarbage() return dl.memory().in_use"),
               before + 8 * MiB);
  CHECK_EQ_INT(
      run_int(L, "return pcall(dl.zeros, {9 * 1024 * 1024}, {dtype = 'uint8'}) and 1 or 0"),
      0); /* 8 + 9 MiB would pass 16 */
  CHECK(t != NULL);
  if (t) {
    CHECK_EQ_INT(pthread_create(&thread, NULL, delete_on_thread, t), 0);
    pthread_join(thread, NULL);
  }
  CHECK_EQ_INT(run_int(L, "return dl.memory().in_use"), before);
  CHECK_EQ_INT(run_int(L, "return dl.memory().backends.cpu.in_use"), before);
  CHECK_EQ_INT(
      run_int(L, "return math.floor(#dl.zeros({9 * 1024 * 1024}, {dtype = 'uint8'}) / 1024)"),
      9 * 1024);
  lua_close(L);
}

/* A producer of 8 MiB host tensors (malloc'd: pages untouched stay free). */
static atomic_int tensors_alive;
static int tensors_made, tensors_max_alive;
static const int64_t big_shape[1] = {8 * MiB};

static void free_big(DLManagedTensorVersioned *self) {
  free(self->dl_tensor.data);
  free(self);
  atomic_fetch_sub(&tensors_alive, 1);
}

/* produce(): pushes a fresh 8 MiB uint8 tensor as an array, zero copy. */
static int produce(lua_State *L) {
  producer *p = calloc(1, sizeof *p);
  void *data = malloc(8 * MiB);
  int alive;
  producer_init(p, 1, free_big, NULL, data, kDLCPU, dt(kDLUInt, 8, 1), 1, big_shape, NULL, 0);
  alive = atomic_fetch_add(&tensors_alive, 1) + 1;
  tensors_made++;
  if (alive > tensors_max_alive) tensors_max_alive = alive;
  if (dlb_push_versioned(L, &p->t.v) != DLB_OK) return lua_error(L);
  return 1;
}

static void test_imports(void) {
  lua_State *L = new_state();
  lua_register(L, "produce", produce);
  /* 200 imports of 8 MiB, each dropped at once: the GC hears of their
   * bytes as it does of allocations, so only a few are ever alive. */
  tensors_max_alive = 0;
  CHECK_EQ_INT(run_int(L, "for i = 1, 200 do local a = produce(); a[1] = 1 end return 0"), 0);
  CHECK(tensors_max_alive <= 24);
  CHECK_EQ_INT(run_int(L, "collectgarbage() return 0"), 0);
  CHECK_EQ_INT(atomic_load(&tensors_alive), 0);
  /* Imports count against the limit: the third 8 MiB import of a 20 MiB
   * budget is refused (its deleter runs at once), and counted ones free. */
  CHECK_EQ_INT(dlb_set_memory_limit(L, 20 * MiB), DLB_OK);
  CHECK_EQ_INT(run_int(L, "KEEP = {produce(), produce()}\n"
                          "local ok, e = pcall(produce)\n"
                          "return not ok and e.code == 'OUT_OF_MEMORY' and 1 or 0"),
               1);
  CHECK_EQ_INT(atomic_load(&tensors_alive), 2);
  CHECK_EQ_INT(
      run_int(L, "KEEP = nil local a = produce() return math.floor(a.size / (1024 * 1024))"), 8);
  lua_close(L);
  CHECK_EQ_INT(atomic_load(&tensors_alive), 0);
}

/* Setting the limit first opens dlbridge: a later require sees the limit. */
static void test_before_open(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  CHECK_EQ_INT(dlb_set_memory_limit(L, MiB), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), 0);
  dlb_preload(L);
  CHECK_EQ_INT(run_int(L, "return require('dlbridge').memory().limit"), MiB);
  lua_close(L);
}

int main(void) {
  test_limit();
  test_refund_on_another_thread();
  test_imports();
  test_before_open();
  return check_done("capi_budget");
}
