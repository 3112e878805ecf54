/* capi_interrupt.c -- a host bounding the time of a script's calls.
 *
 * Some calls need no memory and would run for minutes
 * (dl.zeros(1):expand(1e12):sum()): a count hook cannot stop a C function.
 * The host raises dlbridge's interrupt from another thread (or a signal
 * handler), and the call fails with INTERRUPTED soon after; or it sets a
 * work limit, and such a call fails before it starts. Each kind of long
 * loop is checked: element-wise, reductions, matrix products, casts and
 * copies, joins, tobytes, totable. */
#define _POSIX_C_SOURCE 200809L
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include "check.h"
#include "dlbridge.h"
#include "fixtures.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The raising thread: waits until the script has started, then DELAY more. */
#define DELAY_S 0.05
static dlb_interrupter *target;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t started = PTHREAD_COND_INITIALIZER;
static int go;

static void *raise_later(void *unused) {
  struct timespec d = {0, (long)(DELAY_S * 1e9)};
  (void)unused;
  pthread_mutex_lock(&lock);
  while (!go) pthread_cond_wait(&started, &lock);
  go = 0;
  pthread_mutex_unlock(&lock);
  nanosleep(&d, NULL);
  dlb_interrupt(target);
  return NULL;
}

/* start(): called by the script right before the long call. */
static int start(lua_State *L) {
  (void)L;
  pthread_mutex_lock(&lock);
  go = 1;
  pthread_cond_signal(&started);
  pthread_mutex_unlock(&lock);
  return 0;
}

/* Runs `call` (a chunk that calls start() then the long call) with the
 * interrupt raised DELAY_S after start; the call must fail INTERRUPTED,
 * after the delay (so its loop saw it) and well before it would finish. */
static void check_interrupted(lua_State *L, const char *what, const char *call) {
  pthread_t t;
  char code[2048];
  double t0 = now(), took;
  long long result;
  dlb_interrupt_clear(target);
  pthread_create(&t, NULL, raise_later, NULL);
  snprintf(code, sizeof code,
           "local ok, err = pcall(function() %s end)\n"
           "if ok then return 1 end\n"
           "if err.code ~= 'INTERRUPTED' then print(tostring(err)) return 2 end\n"
           "return 0",
           call);
  result = RUN(L, code);
  took = now() - t0;
  pthread_join(t, NULL);
  if (result != 0 || took < DELAY_S || took > 30)
    fprintf(stderr, "%s: result %lld after %.3f s\n", what, result, took);
  CHECK_EQ_INT(result, 0);
  CHECK(took >= DELAY_S);
  CHECK(took < 30);
  dlb_interrupt_clear(target);
  /* Cleared, the state works as before. */
  CHECK_EQ_INT(RUN(L, "return dl.arange(10):sum() == 45"), 1);
}

static void test_interrupt_stops_each_kind_of_loop(lua_State *L) {
  /* Views that need no memory: these would run for minutes. */
  check_interrupted(L, "sum", "local a = dl.zeros(1):expand(1e12); start(); a:sum()");
  check_interrupted(L, "mean along a dim",
                    "local a = dl.zeros{1, 1}:expand{2^40, 1}; start(); a:mean{dim = 1}");
  /* The longest view there is: 2^63 - 1024, the largest double below 2^63,
   * stands for math.maxinteger (5.3+ only) on every Lua. */
  check_interrupted(L, "argmax",
                    "local a = dl.zeros({1}, {dtype = 'int8'}):expand(2^63 - 1024); start(); "
                    "a:argmax()");
  check_interrupted(L, "dot", "local a = dl.ones(1):expand(1e12); start(); dl.dot(a, a)");
  check_interrupted(L, "matmul (loops)",
                    "local a = dl.ones({1, 1}, {dtype = 'int64'}):expand{4000, 4000}\n"
                    "start(); dl.matmul(a, a)");
  /* One long lane: sorting and searching look within it, not only after it
   * (tests/c/test_work_looks.c counts their looks); spawn between children. */
  check_interrupted(L, "sort of one lane",
                    "local a = dl.zeros({1}, {dtype = 'float32'}):expand(2^25)\n"
                    "start(); for _ = 1, 1000 do a:sort() end");
  check_interrupted(L, "searchsorted of one lane",
                    "local s, v = dl.arange(1e6), dl.zeros(1):expand(2^24)\n"
                    "start(); for _ = 1, 1000 do s:searchsorted(v) end");
  check_interrupted(L, "spawn", "local rng = dl.random.default_rng(1); start(); rng:spawn(1e6)");
  /* Loops that write real memory (64 Mi elements). */
  check_interrupted(L, "element-wise",
                    "local x = dl.zeros(1):expand(2^26); local out = dl.empty(2^26)\n"
                    "start(); for _ = 1, 1000 do dl.add(x, 1, {out = out}) end");
  /* One call on one long 1-D run (64 Mi powers: seconds), not a loop of
   * calls: the interrupt must stop it inside the run. */
  check_interrupted(L, "one long element-wise run",
                    "local x = dl.full(1, 2.5):expand(2^26); local out = dl.empty(2^26)\n"
                    "start(); dl.pow(x, x, {out = out})");
  check_interrupted(L, "copy and cast",
                    "local x = dl.zeros({1}, {dtype = 'int8'}):expand(2^26)\n"
                    "local out = dl.empty(2^26)\n"
                    "start(); for _ = 1, 1000 do out:copy_from(x) end");
  check_interrupted(L, "fill",
                    "local out = dl.empty(2^26); start(); for _ = 1, 1000 do out:fill(1) end");
  check_interrupted(L, "transposed copy",
                    "local a = dl.zeros{4096, 4096}; local b = dl.empty{4096, 4096}\n"
                    "start(); for _ = 1, 1000 do b:copy_from(a:T()) end");
  check_interrupted(L, "concat",
                    "local x = dl.zeros(1):expand(2^24)\n"
                    "start(); for _ = 1, 1000 do dl.concat{x, x} end");
  check_interrupted(L, "tobytes",
                    "local x = dl.zeros(1):expand(2^24)\n"
                    "start(); for _ = 1, 1000 do x:tobytes() end");
  check_interrupted(L, "one long take_along_dim lane",
                    "local a = dl.zeros({1}, {dtype = 'int8'}):expand(2^28)\n"
                    "local i = dl.ones({1}, {dtype = 'int64'}):expand(2^28)\n"
                    "start(); dl.take_along_dim(a, i, 1)");
  check_interrupted(L, "one long totable row",
                    "local x = dl.zeros(1):expand(2^23); start(); x:totable()");
  check_interrupted(L, "totable",
                    "local x = dl.zeros(1):expand(2^22)\n"
                    "start(); for _ = 1, 1000 do x:totable() end");
}

/* Raised before a call, the interrupt fails it at once; it stays raised
 * until the host clears it. */
static void test_interrupt_is_sticky(lua_State *L) {
  dlb_interrupt(target);
  CHECK_EQ_INT(RUN(L, "return select(2, pcall(dl.zeros(10).sum, dl.zeros(10))).code == "
                      "'INTERRUPTED'"),
               1);
  CHECK_EQ_INT(RUN(L, "return select(2, pcall(dl.add, dl.zeros(10), 1)).code == 'INTERRUPTED'"), 1);
  CHECK_EQ_INT(RUN(L, "x = dl.zeros(10); return select(2, pcall(x.copy, x)).code == 'INTERRUPTED'"),
               1); /* a short copy too (one memcpy: copy.c) */
  CHECK_EQ_INT(RUN(L, "local a = dl.zeros(3); a[1] = 5; return a[1] == 5"), 1); /* element access */
  dlb_interrupt_clear(target);
  CHECK_EQ_INT(RUN(L, "return dl.zeros(10):sum() == 0"), 1);
}

/* From a signal handler: one atomic store. */
static void on_alarm(int sig) {
  (void)sig;
  dlb_interrupt(target);
}

static void test_interrupt_from_a_signal_handler(lua_State *L) {
  struct sigaction sa;
  struct itimerval timer = {{0, 0}, {0, 50000}};
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  dlb_interrupt_clear(target);
  setitimer(ITIMER_REAL, &timer, NULL);
  CHECK_EQ_INT(RUN(L, "return select(2, pcall(function() dl.zeros(1):expand(1e12):sum() end))"
                      ".code == 'INTERRUPTED'"),
               1);
  dlb_interrupt_clear(target);
}

/* The work limit refuses a call before it starts. */
static void test_work_limit(lua_State *L) {
  CHECK_EQ_INT(dlb_set_work_limit(L, 1000000), DLB_OK);
  CHECK_EQ_INT(RUN(L, "local err = select(2, pcall(function() dl.zeros(1):expand(1e12):sum() "
                      "end)); return err.code == 'INTERRUPTED' and err.message:find('1000000') "
                      "~= nil"),
               1);
  CHECK_EQ_INT(RUN(L, "local a = dl.ones(1):expand(1e7); "
                      "return select(2, pcall(dl.dot, a, a)).code == 'INTERRUPTED'"),
               1);
  CHECK_EQ_INT(RUN(L, "local a = dl.ones{200, 200}; " /* 8e6 multiply-adds */
                      "return select(2, pcall(dl.matmul, a, a)).code == 'INTERRUPTED'"),
               1);
  CHECK_EQ_INT(RUN(L, "return dl.ones{100, 100}:matmul(dl.ones{100, 100})[1][1] == 100"), 1);
  CHECK_EQ_INT(RUN(L, "return dl.arange(1000000):sum() == 499999500000"), 1); /* at the limit */
  CHECK_EQ_INT(RUN(L, "x = dl.arange(1000); return true"), 1);
  CHECK_EQ_INT(dlb_set_work_limit(L, 100), DLB_OK); /* a short copy counts too */
  CHECK_EQ_INT(RUN(L, "return select(2, pcall(x.copy, x)).code == 'INTERRUPTED'"), 1);
  CHECK_EQ_INT(RUN(L, "return x:slice(1, 1, 100):copy()[100] == 99"), 1);
  CHECK_EQ_INT(dlb_set_work_limit(L, 0), DLB_OK);
  CHECK_EQ_INT(RUN(L, "return dl.arange(2000000):sum() > 0"), 1);
}

/* Memory made for the script outside array buffers counts against the
 * limit before it exists. */
static void test_script_memory_is_checked_first(lua_State *L) {
  double t0 = now();
  CHECK_EQ_INT(dlb_set_memory_limit(L, 64u << 20), DLB_OK);
  CHECK_EQ_INT(RUN(L, "local err = select(2, pcall(function() "
                      "return dl.zeros(1):expand(1e9):tobytes() end)); "
                      "return err.code == 'OUT_OF_MEMORY'"),
               1);
  CHECK_EQ_INT(RUN(L, "local err = select(2, pcall(function() "
                      "return dl.zeros(1):expand(1e8):totable() end)); "
                      "return err.code == 'OUT_OF_MEMORY'"),
               1);
  CHECK_EQ_INT(RUN(L, "local err = select(2, pcall(function() "
                      "return dl.tonpy(dl.zeros(1):expand(1e9)) end)); "
                      "return err.code == 'OUT_OF_MEMORY'"),
               1);
  CHECK_EQ_INT(RUN(L, "local err = select(2, pcall(function() "
                      "return dl.tosafetensors({x = dl.zeros(1):expand(1e9)}) end)); "
                      "return err.code == 'OUT_OF_MEMORY'"),
               1);
  CHECK(now() - t0 < 5); /* at once: nothing was built first */
  CHECK_EQ_INT(RUN(L, "return #dl.zeros(1000):tobytes() == 8000"), 1);
  CHECK_EQ_INT(dlb_set_memory_limit(L, 0), DLB_OK);
}

int main(void) {
  lua_State *L = new_state();
  lua_register(L, "start", start);
  target = dlb_get_interrupter(L);
  CHECK(target != NULL);
  test_interrupt_is_sticky(L);
  test_work_limit(L);
  test_script_memory_is_checked_first(L);
  test_interrupt_from_a_signal_handler(L);
  test_interrupt_stops_each_kind_of_loop(L);
  lua_close(L);
  /* The interrupter outlives the state until released. */
  dlb_interrupt(target);
  dlb_interrupter_release(target);
  dlb_interrupt(NULL);
  return check_done("capi_interrupt");
}
