/* capi_construct_bounds.c -- the host's bounds on the construction and
 * shape helpers (dl.tile, dl.repeat_elements, dl.roll, dl.pad, dl.eye,
 * dl.convolve, dl.isclose, ...) and the sequences (dl.arange, dl.linspace,
 * dl.logspace) and dl.frombytes: a work limit refuses a call that would
 * visit too many elements before it starts (convolve counts its
 * multiply-adds), an interrupt stops a long convolve and refuses every
 * fill while it is raised, and a memory limit refuses a result too big
 * before it exists. */
#define _POSIX_C_SOURCE 200809L
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <pthread.h>
#include <time.h>
#include "check.h"
#include "dlbridge.h"
#include "fixtures.h"

static dlb_interrupter *target;

/* `call` must fail with code. */
static int fails_with(lua_State *L, const char *code, const char *call) {
  char chunk[1024];
  snprintf(chunk, sizeof chunk,
           "local ok, err = pcall(function() %s end)\n"
           "if ok then return 0 end\n"
           "if err.code ~= '%s' then print(tostring(err)) return 0 end\n"
           "return 1",
           call, code);
  return (int)RUN(L, chunk);
}

static void test_work_limit(lua_State *L) {
  static const char *const calls[] = {
      "dl.tile(dl.zeros(10), 1000000)",
      "dl.repeat_elements(dl.zeros(10), 1000000)",
      "dl.repeat_elements(dl.zeros(2), {1, 2000000})",
      "dl.pad(dl.zeros(10), 1000000)",
      "dl.pad(dl.zeros(10), 1000000, {mode = 'wrap'})",
      "dl.roll(dl.zeros(1):expand(2000000), 1)",
      "dl.eye(2000)",
      "dl.convolve(dl.ones(2000), dl.ones(2000), {mode = 'valid'})", /* 4e6 multiply-adds */
      "dl.isclose(dl.zeros(1):expand(2000000), 0)",
      "dl.array_equal(dl.zeros(1):expand(2000000), dl.zeros(1):expand(2000000))",
      "dl.zeros(1):expand(2000000):flatten()",
      "dl.meshgrid(dl.zeros(2000), dl.zeros(2000))",
      /* the sequences: their elements are computed, one by one */
      "dl.arange(7000000)",
      "dl.arange(7e6)",
      "dl.arange(0, 7000000, 1, {dtype = 'int32'})",
      "dl.arange(0.0, 7e6, 1.0, {dtype = 'float32'})",
      "dl.linspace(0, 1, 7000000)",
      "dl.linspace(0, 1, 7000000, {dtype = 'float16'})",
      "dl.logspace(0, 1, 7000000)",
      "dl.logspace(0, 1, 7000000, {dtype = 'float32', base = 2})",
      /* refused before its bool bytes are looked at (byte 2000001 is no bool) */
      "dl.frombytes(string.rep('\\1', 2000000) .. '\\2', 'bool')",
  };
  CHECK_EQ_INT(dlb_set_work_limit(L, 1000000), DLB_OK);
  for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
    int ok = fails_with(L, "INTERRUPTED", calls[k]);
    if (!ok) fprintf(stderr, "not refused by the work limit: %s\n", calls[k]);
    CHECK_EQ_INT(ok, 1);
  }
  /* under the limit, they run */
  CHECK_EQ_INT(RUN(L, "return dl.tile(dl.arange(10), 1000):sum() == 45000"), 1);
  CHECK_EQ_INT(RUN(L, "return dl.convolve(dl.ones(900), dl.ones(900), {mode = 'valid'})[1] == 900"),
               1);
  CHECK_EQ_INT(RUN(L, "return dl.arange(1000000):sum() == 499999500000"), 1);
  CHECK_EQ_INT(RUN(L, "return dl.linspace(0, 1, 1000000)[1000000] == 1"), 1);
  CHECK_EQ_INT(RUN(L, "return dl.logspace(0, 2, 1000000)[1000000] == 100"), 1);
  CHECK_EQ_INT(dlb_set_work_limit(L, 0), DLB_OK);
}

/* An interrupt raised before the call refuses every fill of a sequence at
 * once, large or small, until it is cleared. */
static void test_interrupt_refuses_sequences(lua_State *L) {
  static const char *const calls[] = {
      "dl.arange(7000000)",
      "dl.arange(7e6)",
      "dl.arange(3)",
      "dl.linspace(0, 1, 7000000)",
      "dl.linspace(0, 1, 7000000, {dtype = 'float32'})",
      "dl.logspace(0, 1, 7000000)",
      "dl.logspace(0, 1, 5, {dtype = 'int64'})",
      "dl.frombytes(string.rep('\\1', 2000000), 'bool')",
  };
  dlb_interrupt(target);
  for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
    int ok = fails_with(L, "INTERRUPTED", calls[k]);
    if (!ok) fprintf(stderr, "not refused by the interrupt: %s\n", calls[k]);
    CHECK_EQ_INT(ok, 1);
  }
  dlb_interrupt_clear(target);
  CHECK_EQ_INT(RUN(L, "return dl.arange(3):sum() == 3 and dl.linspace(0, 1, 3)[2] == 0.5 "
                      "and dl.logspace(0, 2, 3)[3] == 100"),
               1);
}

/* The raising thread: DELAY after it starts. */
#define DELAY_S 0.1
static void *raise_later(void *unused) {
  struct timespec d = {0, (long)(DELAY_S * 1e9)};
  (void)unused;
  nanosleep(&d, NULL);
  dlb_interrupt(target);
  return NULL;
}

static void test_interrupt_stops_convolve(lua_State *L) {
  pthread_t t;
  struct timespec t0, t1;
  double took;
  dlb_interrupt_clear(target);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_create(&t, NULL, raise_later, NULL);
  /* 1e5 x 1e5: 1e10 multiply-adds, tens of seconds uninterrupted */
  CHECK_EQ_INT(fails_with(L, "INTERRUPTED", "local a = dl.ones(100000); dl.convolve(a, a)"), 1);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  pthread_join(t, NULL);
  took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  CHECK(took >= DELAY_S);
  CHECK(took < 20);
  dlb_interrupt_clear(target);
  CHECK_EQ_INT(RUN(L, "return dl.convolve({1, 2}, {1, 1})[2] == 3"), 1);
}

static void test_memory_limit(lua_State *L) {
  CHECK_EQ_INT(dlb_set_memory_limit(L, 64u << 20), DLB_OK);
  CHECK_EQ_INT(fails_with(L, "OUT_OF_MEMORY", "dl.tile(dl.zeros(1000), 1000000)"), 1);
  CHECK_EQ_INT(fails_with(L, "OUT_OF_MEMORY", "dl.pad(dl.zeros{10, 10}, 10000)"), 1);
  CHECK_EQ_INT(fails_with(L, "OUT_OF_MEMORY", "dl.eye(100000)"), 1);
  CHECK_EQ_INT(fails_with(L, "SHAPE", "dl.tile(dl.zeros(1000), {2^40, 2^40})"), 1);
  CHECK_EQ_INT(RUN(L, "return dl.tile(dl.zeros(1000), 1000).size == 1000000"), 1);
  CHECK_EQ_INT(dlb_set_memory_limit(L, 0), DLB_OK);
}

int main(void) {
  lua_State *L = new_state();
  target = dlb_get_interrupter(L);
  CHECK(target != NULL);
  test_work_limit(L);
  test_interrupt_refuses_sequences(L);
  test_memory_limit(L);
  test_interrupt_stops_convolve(L);
  lua_close(L);
  dlb_interrupter_release(target);
  return check_done("capi_construct_bounds");
}
