/* capi_random_bounds.c -- a host bounding the draws of dl.random.
 *
 * A generator's draws are long loops like any other: the work limit
 * (dlb_set_work_limit) refuses a draw of more elements before it starts,
 * the memory limit (dlb_set_memory_limit) refuses its result before it
 * exists, and a raised interrupt (dlb_interrupt, before the call or from
 * another thread during it) stops it. A draw that fails so leaves the
 * generator in its state before the call: it consumed nothing, as if it had
 * never been made (its has_uint32 buffer included). spawn is bounded too:
 * its children count against both limits, and the interrupt stops it. */
#define _POSIX_C_SOURCE 200809L
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "check.h"
#include "dlbridge.h"
#include "fixtures.h"

/* The Lua helpers of the checks: same_state(a, b) compares two results of
 * rng:state(); refused(code, rng, method, ...) calls rng:method(...) and
 * returns 0 when it raised code and left rng's state as it was (1: it
 * returned, 2: another error, printed, 3: the state changed). */
static const char *helpers =
    "function same_state(a, b)\n"
    "  return a.bit_generator == b.bit_generator and a.state.state == b.state.state\n"
    "     and a.state.inc == b.state.inc and a.has_uint32 == b.has_uint32\n"
    "     and a.uinteger == b.uinteger\n"
    "end\n"
    "function refused(code, rng, method, ...)\n"
    "  local before = rng:state()\n"
    "  local ok, err = pcall(rng[method], rng, ...)\n"
    "  if ok then return 1 end\n"
    "  if not dl.is_error(err) or err.code ~= code then print(tostring(err)) return 2 end\n"
    "  if not same_state(before, rng:state()) then return 3 end\n"
    "  return 0\n"
    "end\n";

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The work limit refuses draws, permutations and shuffles of more elements
 * than it allows; smaller ones still run, and the refused ones consumed
 * nothing: the next draw is the one a copy of the earlier state makes. */
static void test_work_limit(lua_State *L) {
  /* Made before the limit: dl.arange(2000000) is work too. */
  CHECK_EQ_INT(RUN(L, "RNG = dl.random.default_rng(1)\n"
                      "A = dl.arange(2000000)\n"
                      "RNG:random(1, {dtype = 'float32'}) -- keeps half a draw\n"
                      "S0 = RNG:state()\n"
                      "return S0.has_uint32"),
               1);
  CHECK_EQ_INT(dlb_set_work_limit(L, 1000000), DLB_OK);
  CHECK_EQ_INT(RUN(L, "return refused('INTERRUPTED', RNG, 'random', 2000000)"), 0);
  CHECK_EQ_INT(RUN(L, "return refused('INTERRUPTED', RNG, 'random', {2000, 1000}, "
                      "{dtype = 'float32'})"),
               0);
  CHECK_EQ_INT(RUN(L, "return refused('INTERRUPTED', RNG, 'standard_normal', 2000000)"), 0);
  CHECK_EQ_INT(RUN(L, "return refused('INTERRUPTED', RNG, 'integers', 0, 10, 2000000)"), 0);
  CHECK_EQ_INT(RUN(L, "return refused('INTERRUPTED', RNG, 'permutation', 2000000)"), 0);
  CHECK_EQ_INT(RUN(L, "return refused('INTERRUPTED', RNG, 'shuffle', A)"), 0);
  /* The refused shuffle did not start: A is untouched. */
  CHECK_EQ_INT(RUN(L, "return A[1] == 0 and A[1000000] == 999999 and A[2000000] == 1999999"), 1);
  CHECK_EQ_INT(RUN(L, "local err = select(2, pcall(RNG.random, RNG, 2000000))\n"
                      "return err.message:find('1000000', 1, true) ~= nil and err.hint ~= nil"),
               1);
  /* Within the limit the generator works, from the state before the refusals. */
  CHECK_EQ_INT(RUN(L, "local copy = dl.random.from_state(S0)\n"
                      "local a, b = RNG:random(10), copy:random(10)\n"
                      "return a.size == 10 and a:tobytes() == b:tobytes()"),
               1);
  /* At the limit. */
  CHECK_EQ_INT(RUN(L, "return RNG:permutation(1000000):sum() == 499999500000"), 1);
  CHECK_EQ_INT(dlb_set_work_limit(L, 0), DLB_OK);
  CHECK_EQ_INT(RUN(L, "return RNG:random(2000000).size == 2000000"), 1);
  CHECK_EQ_INT(RUN(L, "RNG:shuffle(A) return A:sum() == 1999999000000"), 1);
}

/* The memory limit refuses a result before it exists (800 MB of float64
 * under a 64 MiB limit): at once, with the generator unchanged. */
static void test_memory_limit(lua_State *L) {
  double t0 = now();
  CHECK_EQ_INT(RUN(L, "RNG = dl.random.default_rng(2) return 1"), 1);
  CHECK_EQ_INT(dlb_set_memory_limit(L, 64u << 20), DLB_OK);
  CHECK_EQ_INT(RUN(L, "return refused('OUT_OF_MEMORY', RNG, 'standard_normal', 1e8)"), 0);
  CHECK_EQ_INT(RUN(L, "return refused('OUT_OF_MEMORY', RNG, 'permutation', 1e8)"), 0);
  CHECK(now() - t0 < 5); /* nothing was drawn first */
  CHECK_EQ_INT(RUN(L, "return RNG:standard_normal(1000).size == 1000"), 1);
  CHECK_EQ_INT(RUN(L, "return dl.memory().peak <= 64 * 1024 * 1024"), 1);
  CHECK_EQ_INT(dlb_set_memory_limit(L, 0), DLB_OK);
}

/* Raised before a call, the interrupt fails every draw with a shape at
 * once, until the host clears it. */
static void test_raised_interrupt(lua_State *L, dlb_interrupter *target) {
  CHECK_EQ_INT(RUN(L, "RNG = dl.random.default_rng(3) S0 = RNG:state() return 1"), 1);
  dlb_interrupt(target);
  CHECK_EQ_INT(RUN(L, "return refused('INTERRUPTED', RNG, 'random', 1e6)"), 0);
  CHECK_EQ_INT(RUN(L, "return refused('INTERRUPTED', RNG, 'integers', 0, 100, 1000000)"), 0);
  CHECK_EQ_INT(RUN(L, "return refused('INTERRUPTED', RNG, 'shuffle', dl.zeros(10))"), 0);
  dlb_interrupt_clear(target);
  CHECK_EQ_INT(RUN(L, "local a, b = RNG:random(1e6), dl.random.from_state(S0):random(1e6)\n"
                      "return a:tobytes() == b:tobytes()"),
               1);
}

/* The raising thread: waits until the script has started, then DELAY more. */
#define DELAY_S 0.05
static dlb_interrupter *raise_target;
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
  dlb_interrupt(raise_target);
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

/* Runs `call` (a chunk that makes RNG, calls start() then one long draw
 * that returns 1 when it finishes) with the interrupt raised DELAY_S after
 * start; the draw must fail INTERRUPTED after the delay (its loop saw it
 * midway) and leave RNG's state as it was before the call. */
static void check_interrupted(lua_State *L, dlb_interrupter *target, const char *what,
                              const char *call) {
  pthread_t t;
  char code[2048];
  double t0, took;
  long long result;
  dlb_interrupt_clear(target);
  raise_target = target;
  snprintf(code, sizeof code,
           "local ok, err = pcall(function() %s end)\n"
           "if ok then return 1 end\n"
           "if not dl.is_error(err) or err.code ~= 'INTERRUPTED' then print(tostring(err)) "
           "return 2 end\n"
           "if not same_state(BEFORE, RNG:state()) then return 3 end\n"
           "return 0",
           call);
  pthread_create(&t, NULL, raise_later, NULL);
  t0 = now();
  result = RUN(L, code);
  took = now() - t0;
  pthread_join(t, NULL);
  if (result != 0 || took < DELAY_S || took > 30)
    fprintf(stderr, "%s: result %lld after %.3f s\n", what, result, took);
  CHECK_EQ_INT(result, 0);
  CHECK(took >= DELAY_S);
  CHECK(took < 30);
  dlb_interrupt_clear(target);
  /* Cleared, the generator draws what it would have drawn first. */
  CHECK_EQ_INT(RUN(L, "return RNG:random() == dl.random.from_state(BEFORE):random()"), 1);
}

/* Interrupted midway, a long draw puts the generator back. 2^25 draws or
 * swaps take well over DELAY_S; the 32-bit draws of a shuffle use and refill
 * the kept half, which must come back too. */
static void test_interrupt_midway(lua_State *L, dlb_interrupter *target) {
  check_interrupted(L, target, "standard_normal",
                    "RNG = dl.random.default_rng(4) RNG:random(1, {dtype = 'float32'})\n"
                    "BEFORE = RNG:state() start()\n"
                    "RNG:standard_normal(2^25) return 1");
  check_interrupted(L, target, "shuffle",
                    "RNG = dl.random.default_rng(5) RNG:random(1, {dtype = 'float32'})\n"
                    "local a = dl.arange(2^25) BEFORE = RNG:state() start()\n"
                    "RNG:shuffle(a) return 1");
  check_interrupted(L, target, "permutation",
                    "RNG = dl.random.default_rng(6)\n"
                    "BEFORE = RNG:state() start()\n"
                    "RNG:permutation(2^25) return 1");
  CHECK_EQ_INT(RUN(L, "collectgarbage() return 1"), 1);
}

/* spawn makes Lua values (a generator and its seed words a child): its n
 * children count against the work limit, their memory against the memory
 * limit (refused before any is made), and a raised interrupt refuses it.
 * A refused spawn spawned nothing: the next one numbers its children from
 * where the generator was. */
static void test_spawn_bounds(lua_State *L, dlb_interrupter *target) {
  static const char *next_child_same = "local a = RNG:spawn(1)[1]:random(4)\n"
                                       "local b = dl.random.default_rng(11):spawn(1)[1]:random(4)\n"
                                       "return a:tobytes() == b:tobytes()";
  CHECK_EQ_INT(RUN(L, "RNG = dl.random.default_rng(11) return 1"), 1);
  CHECK_EQ_INT(dlb_set_work_limit(L, 1000), DLB_OK);
  CHECK_EQ_INT(RUN(L, "return refused('INTERRUPTED', RNG, 'spawn', 1001)"), 0);
  CHECK_EQ_INT(RUN(L, "local err = select(2, pcall(RNG.spawn, RNG, 5000))\n"
                      "return err.message:find('1000', 1, true) ~= nil"),
               1);
  CHECK_EQ_INT(dlb_set_work_limit(L, 0), DLB_OK);
  /* 1e6 children take some 200 MB of Lua memory: not under 64 MiB. */
  CHECK_EQ_INT(dlb_set_memory_limit(L, 64u << 20), DLB_OK);
  CHECK_EQ_INT(RUN(L, "return refused('OUT_OF_MEMORY', RNG, 'spawn', 1e6)"), 0);
  CHECK_EQ_INT(dlb_set_memory_limit(L, 0), DLB_OK);
  dlb_interrupt(target);
  CHECK_EQ_INT(RUN(L, "return refused('INTERRUPTED', RNG, 'spawn', 10)"), 0);
  dlb_interrupt_clear(target);
  CHECK_EQ_INT(RUN(L, next_child_same), 1);
  /* Within the bounds: n children. */
  CHECK_EQ_INT(dlb_set_work_limit(L, 1000), DLB_OK);
  CHECK_EQ_INT(dlb_set_memory_limit(L, 64u << 20), DLB_OK);
  CHECK_EQ_INT(RUN(L, "return #RNG:spawn(1000)"), 1000);
  CHECK_EQ_INT(dlb_set_work_limit(L, 0), DLB_OK);
  CHECK_EQ_INT(dlb_set_memory_limit(L, 0), DLB_OK);
}

/* An interrupt raised while spawn runs stops it: the Lua allocator of this
 * state raises it at a chosen allocation after arm() (each child takes a
 * few), so a spawn that did not look at the interrupt would finish. */
static dlb_interrupter *alloc_target;
static long long allocs_left = -1;

static void *raising_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud, (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  if (allocs_left > 0 && --allocs_left == 0) dlb_interrupt(alloc_target);
  return realloc(ptr, nsize);
}

static int arm(lua_State *L) {
  allocs_left = luaL_checkinteger(L, 1);
  return 0;
}

static void test_spawn_interrupted_midway(void) {
  lua_State *L = lua_newstate(raising_alloc, NULL);
  luaL_openlibs(L);
  dlb_preload(L);
  CHECK_EQ_INT(RUN(L, "dl = require 'dlbridge' return 1"), 1);
  lua_register(L, "arm", arm);
  alloc_target = dlb_get_interrupter(L);
  CHECK(alloc_target != NULL);
  CHECK_EQ_INT(RUN(L, "local rng = dl.random.default_rng(12)\n"
                      "arm(3000) -- some hundreds of children in\n"
                      "local ok, err = pcall(rng.spawn, rng, 100000)\n"
                      "if ok then return 1 end\n"
                      "if not dl.is_error(err) or err.code ~= 'INTERRUPTED' then\n"
                      "  print(tostring(err)) return 2\n"
                      "end\n"
                      "RNG = rng return 0"),
               0);
  allocs_left = -1;
  dlb_interrupt_clear(alloc_target);
  /* It spawned nothing: the next child is the first one. */
  CHECK_EQ_INT(RUN(L, "local a = RNG:spawn(1)[1]:random(4)\n"
                      "local b = dl.random.default_rng(12):spawn(1)[1]:random(4)\n"
                      "return a:tobytes() == b:tobytes()"),
               1);
  lua_close(L);
  dlb_interrupter_release(alloc_target);
}

int main(void) {
  lua_State *L = new_state();
  dlb_interrupter *target;
  lua_register(L, "start", start);
  target = dlb_get_interrupter(L);
  CHECK(target != NULL);
  CHECK_EQ_INT(RUN(L, helpers), 0);
  test_work_limit(L);
  test_memory_limit(L);
  test_raised_interrupt(L, target);
  test_interrupt_midway(L, target);
  test_spawn_bounds(L, target);
  lua_close(L);
  test_spawn_interrupted_midway();
  dlb_interrupter_release(target);
  return check_done("capi_random_bounds");
}
