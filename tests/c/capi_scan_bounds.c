/* capi_scan_bounds.c -- the host's bounds on histograms, whose size a
 * script chooses with one number (bins = 2e8) or with a view that holds
 * no memory (bins = dl.zeros(1):expand(2e8)).
 *
 * Under a memory limit, bins that do not fit are OUT_OF_MEMORY before
 * anything is allocated: everything the call makes for them (counts,
 * edges, the kernel's sums of weights) is charged to the state's account
 * first, so the process's resident memory never grows past the limit (plus
 * slack). A work limit refuses, naming the histogram, a call that would
 * make or read more edges than it allows; a raised interrupt stops it. */
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

static void test_memory_limit(lua_State *L) {
  static const char *const calls[] = {
      /* 1.6 GB of edges (and of counts) */
      "dl.histogram({1, 2, 3}, {bins = 2e8})",
      "dl.histogram(dl.array({1, 2, 3}, {dtype = 'float32'}), {bins = 2e8})",
      /* the edges given: a view of no memory */
      "dl.histogram({1, 2, 3}, {bins = dl.zeros(1):expand(2e8)})",
      "dl.histogram({1, 2, 3}, {bins = dl.zeros(1, {dtype = 'int32'}):expand(2e8)})",
      /* 40 MB of counts fit; the kernel's 40 MB of sums of weights do not */
      "dl.histogram({1, 2, 3}, {bins = dl.zeros(1):expand(5e6), weights = {1, 1, 1}})",
  };
  long before, growth;
  int measured;
  RUN(L, "collectgarbage()");
  CHECK_EQ_INT(dlb_set_memory_limit(L, (size_t)(64 * MIB)), DLB_OK);
  measured = reset_peak_rss();
  before = rss_bytes("VmRSS:");
  for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
    int ok = fails_with(L, "OUT_OF_MEMORY", "", calls[k]);
    if (!ok) fprintf(stderr, "not refused by the memory limit: %s\n", calls[k]);
    CHECK_EQ_INT(ok, 1);
  }
  if (measured && before >= 0 && rss_bytes("VmHWM:") >= 0) {
    growth = rss_bytes("VmHWM:") - before;
    if (growth > 80 * MIB) fprintf(stderr, "peak resident memory grew by %ld MiB\n", growth / MIB);
    CHECK(growth <= 80 * MIB); /* the limit + 16 MiB */
  } else {
    fprintf(stderr, "capi_scan_bounds: no VmHWM reset here: resident memory not checked\n");
  }
  /* what fits runs: 8 MB of edges and of counts */
  CHECK_EQ_INT(RUN(L, "local c, e = dl.histogram({1, 2, 3}, {bins = 1e6})\n"
                      "return c:sum() == 3 and e.size == 1e6 + 1"),
               1);
  CHECK_EQ_INT(RUN(L, "local e = dl.arange(1e6)\n"
                      "return dl.histogram({1, 2, 3}, {bins = e, weights = {1, 2, 3}}):sum() == 6"),
               1);
  CHECK_EQ_INT(dlb_set_memory_limit(L, 0), DLB_OK);
}

static void test_work_limit(lua_State *L) {
  CHECK_EQ_INT(dlb_set_work_limit(L, 1000000), DLB_OK);
  /* 2e6 edges to make, or to read and check: more than the call may visit */
  CHECK_EQ_INT(fails_with(L, "INTERRUPTED", "histogram would visit",
                          "dl.histogram({1, 2, 3}, {bins = 2e6})"),
               1);
  CHECK_EQ_INT(fails_with(L, "INTERRUPTED", "histogram would visit",
                          "dl.histogram({1, 2, 3}, {bins = dl.zeros(1):expand(2e6)})"),
               1);
  /* under the limit, they run */
  CHECK_EQ_INT(RUN(L, "return dl.histogram({1, 2, 3}, {bins = 1000}):sum() == 3"), 1);
  CHECK_EQ_INT(RUN(L, "return dl.histogram({1, 2, 3}, {bins = dl.arange(1000)}):sum() == 3"), 1);
  CHECK_EQ_INT(dlb_set_work_limit(L, 0), DLB_OK);
}

static void test_interrupt(lua_State *L) {
  dlb_interrupt(target);
  CHECK_EQ_INT(fails_with(L, "INTERRUPTED", "", "dl.histogram({1, 2, 3}, {bins = 1e6})"), 1);
  CHECK_EQ_INT(
      fails_with(L, "INTERRUPTED", "", "dl.histogram({1, 2, 3}, {bins = dl.zeros(1):expand(1e6)})"),
      1);
  dlb_interrupt_clear(target);
  CHECK_EQ_INT(RUN(L, "return dl.histogram({1, 2, 3}, {bins = 1e6}):sum() == 3"), 1);
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
  return check_done("capi_scan_bounds");
}
