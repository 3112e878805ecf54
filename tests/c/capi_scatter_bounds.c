/* capi_scatter_bounds.c -- the host's bounds on grouped updates
 * (dl.scatter_add and friends), whose work a script chooses with views that
 * hold no memory (indices dl.ones(1):expand(2e8)).
 *
 * Under a memory limit, the broadcast values and the copied indices that do
 * not fit are OUT_OF_MEMORY before anything is allocated, and nothing is
 * written. A work limit refuses, naming the operation, a call that would
 * make more updates than it allows; a raised interrupt stops a call before
 * it writes. */
#define _POSIX_C_SOURCE 200809L
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <stdlib.h>
#include "check.h"
#include "dlbridge.h"
#include "fixtures.h"
#include "bounds.h"

static dlb_interrupter *target;

/* `call` must fail with code, its message starting with prefix ("" any),
 * and leave the global array `a` all zeros. */
static int fails_with(lua_State *L, const char *code, const char *prefix, const char *call) {
  return bounds_fails_with(L, code, prefix, call,
                           "if a:any() then print('the failed call wrote a') return 0 end\n");
}

static void test_memory_limit(lua_State *L) {
  static const char *const calls[] = {
      /* 1.6 GB of broadcast values */
      "dl.scatter_add(a, dl.ones(1, {dtype = 'int64'}):expand(2e8), dl.ones(1):expand(2e8))",
      /* 1.6 GB of indices copied to one dim (a view of no memory) */
      "dl.scatter_max(a, dl.ones({1, 1}, {dtype = 'int64'}):expand(2, 1e8), 1)",
  };
  RUN(L, "a = dl.zeros(4) collectgarbage()");
  CHECK_EQ_INT(dlb_set_memory_limit(L, (size_t)(64 * MIB)), DLB_OK);
  for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
    int ok = fails_with(L, "OUT_OF_MEMORY", "", calls[k]);
    if (!ok) fprintf(stderr, "not refused by the memory limit: %s\n", calls[k]);
    CHECK_EQ_INT(ok, 1);
  }
  /* what fits runs: 8 MB of values, 1e6 updates of one element */
  CHECK_EQ_INT(RUN(L, "local i = dl.ones(1, {dtype = 'int64'}):expand(1e6)\n"
                      "dl.scatter_add(a, i, dl.ones(1):expand(1e6))\n"
                      "local ok = a:get(1) == 1e6 and a:sum() == 1e6\n"
                      "a = dl.zeros(4) return ok"),
               1);
  CHECK_EQ_INT(dlb_set_memory_limit(L, 0), DLB_OK);
}

static void test_work_limit(lua_State *L) {
  CHECK_EQ_INT(dlb_set_work_limit(L, 1000000), DLB_OK);
  /* 2e6 updates: more than the call may make */
  CHECK_EQ_INT(fails_with(L, "INTERRUPTED", "scatter_add would visit",
                          "dl.scatter_add(a, dl.ones(1, {dtype = 'int64'}):expand(2e6), 1)"),
               1);
  /* 1e3 indices times 2e3 elements a row (the {dim} form): 2e6 updates */
  CHECK_EQ_INT(fails_with(L, "INTERRUPTED", "scatter_min would visit",
                          "a = dl.zeros(4, 2000)\n"
                          "dl.scatter_min(a, dl.ones(1, {dtype = 'int64'}):expand(1000), -1)"),
               1);
  RUN(L, "a = dl.zeros(4)");
  /* under the limit, it runs */
  CHECK_EQ_INT(RUN(L, "local r = dl.scatter_add(dl.zeros(4), dl.ones(1, {dtype = 'int64'})"
                      ":expand(1000), 1) return r:get(1) == 1000"),
               1);
  CHECK_EQ_INT(dlb_set_work_limit(L, 0), DLB_OK);
}

static void test_interrupt(lua_State *L) {
  dlb_interrupt(target);
  CHECK_EQ_INT(RUN(L, "local ok, err = pcall(dl.scatter_add, a, dl.array({1, 2, 1}), 1)\n"
                      "return not ok and err.code == 'INTERRUPTED'"),
               1);
  dlb_interrupt_clear(target);
  CHECK_EQ_INT(RUN(L, "return not a:any()"), 1); /* nothing written */
  CHECK_EQ_INT(RUN(L, "dl.scatter_add(a, dl.array({1, 2, 1}), dl.array({1, 2, 3}))\n"
                      "return a:get(1) == 4 and a:get(2) == 2"),
               1);
}

int main(void) {
  lua_State *L = new_state();
  target = dlb_get_interrupter(L);
  CHECK(target != NULL);
  test_memory_limit(L);
  test_work_limit(L);
  test_interrupt(L);
  lua_close(L);
  dlb_interrupter_release(target);
  return check_done("capi_scatter_bounds");
}
