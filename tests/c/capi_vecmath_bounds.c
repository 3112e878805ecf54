/* capi_vecmath_bounds.c -- the host's bounds on dl.cross, dl.outer,
 * dl.norm, dl.einsum and dl.interp, whose results and temporaries a script
 * sizes with views that hold no memory (dl.zeros(1):expand(1e8)).
 *
 * Under a memory limit, results and temporaries that do not fit are
 * OUT_OF_MEMORY before they are allocated (everything goes through the
 * state's account), so the process's resident memory stays near the
 * limit. A work limit refuses, naming the function, a call that would visit
 * more elements than it allows; a raised interrupt stops every one. */
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

static int fails_with(lua_State *L, const char *code, const char *prefix, const char *call) {
  return bounds_fails_with(L, code, prefix, call, "");
}

/* Each call makes 800 MB or more (results or temporaries). */
static const char *const big[] = {
    "dl.cross(dl.zeros(1, 3):expand(4e7, 3), dl.ones(3))",
    "dl.outer(dl.zeros(1):expand(1e4), dl.zeros(1):expand(1e4))",
    "dl.norm(dl.zeros(1):expand(1e8))",
    "dl.norm(dl.zeros(1, 1):expand(1e4, 1e4), {ord = 3, dim = 2})",
    "dl.einsum('i,j->ij', dl.zeros(1):expand(1e4), dl.zeros(1):expand(1e4))",
    "dl.einsum('ij,jk->ik', dl.zeros(1, 1):expand(1e4, 2), dl.zeros(1, 1):expand(2, 1e4))",
    "dl.einsum('bi,bi->b', dl.zeros(1, 1):expand(1e8, 20), dl.ones(1, 20))",
    "dl.interp(dl.zeros(1):expand(1e8), {0, 1}, {0, 1})",
};

static void test_memory_limit(lua_State *L) {
  long before, peak;
  int measured;
  RUN(L, "collectgarbage()");
  CHECK_EQ_INT(dlb_set_memory_limit(L, (size_t)(64 * MIB)), DLB_OK);
  measured = reset_peak_rss();
  before = rss_bytes("VmRSS:");
  for (size_t k = 0; k < sizeof big / sizeof big[0]; k++) {
    int ok = fails_with(L, "OUT_OF_MEMORY", "", big[k]);
    if (!ok) fprintf(stderr, "not refused by the memory limit: %s\n", big[k]);
    CHECK_EQ_INT(ok, 1);
  }
  peak = rss_bytes("VmHWM:");
  if (measured && before >= 0 && peak >= 0) {
    long growth = peak - before;
    if (growth > 80 * MIB) fprintf(stderr, "peak resident memory grew by %ld MiB\n", growth / MIB);
    CHECK(growth <= 80 * MIB); /* the limit + 16 MiB */
  } else {
    fprintf(stderr, "capi_vecmath_bounds: no VmHWM reset here: resident memory not checked\n");
  }
  /* what fits runs */
  CHECK_EQ_INT(RUN(L, "return dl.einsum('i,j->ij', dl.ones(100), dl.ones(100)):sum() == 1e4"), 1);
  CHECK_EQ_INT(RUN(L, "return dl.interp(dl.zeros(1):expand(1e6), {0, 1}, {0, 1}):sum() == 0"), 1);
  CHECK_EQ_INT(dlb_set_memory_limit(L, 0), DLB_OK);
}

static void test_work_limit(lua_State *L) {
  static const struct {
    const char *prefix, *call;
  } cases[] = {
      {"cross would visit", "dl.cross(dl.zeros(1, 3):expand(1e6, 3), dl.ones(3))"},
      {"norm would visit", "dl.norm(dl.zeros(1):expand(2e6))"},
      {"einsum would visit", "dl.einsum('i->', dl.zeros(1):expand(2e6))"},
      {"interp would visit", "dl.interp(dl.zeros(1):expand(2e6), {0, 1}, {0, 1})"},
  };
  CHECK_EQ_INT(dlb_set_work_limit(L, 1000000), DLB_OK);
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    int ok = fails_with(L, "INTERRUPTED", cases[k].prefix, cases[k].call);
    if (!ok) fprintf(stderr, "not refused by the work limit: %s\n", cases[k].call);
    CHECK_EQ_INT(ok, 1);
  }
  /* the outer product's element-wise step is bounded too */
  CHECK_EQ_INT(fails_with(L, "INTERRUPTED", "",
                          "dl.outer(dl.zeros(1):expand(2e3), dl.zeros(1):expand(1e3))"),
               1);
  CHECK_EQ_INT(RUN(L, "return dl.norm(dl.ones(100)) == 10"), 1);
  CHECK_EQ_INT(RUN(L, "return dl.interp(dl.zeros(1):expand(1000), {0, 1}, {0, 1}):sum() == 0"), 1);
  CHECK_EQ_INT(dlb_set_work_limit(L, 0), DLB_OK);
}

static void test_interrupt(lua_State *L) {
  static const char *const calls[] = {
      "dl.cross(dl.ones(10, 3), dl.ones(3))",
      "dl.outer(dl.ones(10), dl.ones(10))",
      "dl.norm(dl.ones(10))",
      "dl.einsum('ij,jk->ik', dl.ones(4, 4), dl.ones(4, 4))",
      "dl.interp(dl.ones(10), {0, 1}, {0, 1})",
  };
  dlb_interrupt(target);
  for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
    int ok = fails_with(L, "INTERRUPTED", "", calls[k]);
    if (!ok) fprintf(stderr, "not stopped by the interrupt: %s\n", calls[k]);
    CHECK_EQ_INT(ok, 1);
  }
  dlb_interrupt_clear(target);
  CHECK_EQ_INT(RUN(L, "return dl.norm(dl.array{3, 4}) == 5"), 1);
}

int main(void) {
  lua_State *L = new_state();
  target = dlb_get_interrupter(L);
  CHECK(target != NULL);
  test_memory_limit(L); /* first: the process is small, its peak is its size now */
  test_work_limit(L);
  test_interrupt(L);
  lua_close(L);
  dlb_interrupter_release(target);
  return check_done("capi_vecmath_bounds");
}
