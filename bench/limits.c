#define _GNU_SOURCE
/* bench/limits.c -- how well do the host's three bounds hold, function by
 * function? For every public function whose work or memory a script controls,
 * one case (a Lua snippet sized to run for seconds) is run in a forked child:
 *
 *   I  interrupt latency: no memory limit; a thread sleeps 100 ms, takes a
 *      CLOCK_MONOTONIC timestamp and calls dlb_interrupt. Latency = time from
 *      that timestamp to the call's return with INTERRUPTED. Three runs, the
 *      median is printed (one run when the first is not interrupted or takes
 *      over 1 s: repeating it would tell nothing new). Goal: < 20 ms.
 *   M  peak memory: dlb_set_memory_limit = what the case's setup holds +
 *      64 MiB, VmHWM reset (/proc/self/clear_refs "5") just before the call,
 *      read after it; an interrupt at DLB_LIMITS_SAFETY_S (1 s) stops calls
 *      that neither finish nor fail (they need no memory). Goal: growth <= 64 + 16 MiB.
 *   W  dlb_set_work_limit(L, 1e6), no memory limit, the same safety interrupt:
 *      every case visits far more than 1e6 elements, so it should end with
 *      INTERRUPTED before the safety interrupt fires.
 *
 * After an interrupt has fired, each run clears it (dlb_interrupt_clear) and
 * checks that a small call works again. Every run is a fresh process: a
 * killed or crashed case costs only its row, and VmHWM is the case's own.
 * The setup part of a case (making its inputs) runs before any bound is set
 * and is not timed. A child still running DLB_LIMITS_HANG_S (4 s) after its interrupt
 * is killed (its VmHWM is read first). Children run under an address-space
 * limit (AS_LIMIT_GIB, 4 GiB) so that no case can take the machine's memory.
 *
 * build: cmake --build build --target bench_limits     (not a test: ctest never runs it)
 * run:   build/bench/bench_limits [substring]           cases whose function contains it
 *        build/bench/bench_limits 'return dl.sum(dl.zeros(1):expand(1e9))'   one ad-hoc call
 * env:   DLB_LIMITS_SAFETY_S (default 1), DLB_LIMITS_HANG_S (default 4)
 */
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "dlbridge.h"

#define FIRE_MS 100 /* interrupt delay of the latency runs */
#define LATENCY_GOAL_MS 20.0
#define LIMIT_MIB 64
#define SLACK_MIB 16
#define WORK_LIMIT 1000000
#define REPEATS 3
#define AS_LIMIT_GIB 4

/* A case: the function, its input in words, a setup chunk (globals for the
 * call; not timed, no bounds) and the call. `bounded`: the call's time does
 * not grow with the input (it returns a view, a summary, or lazily zeroed
 * memory), so returning before the interrupt is its expected result. */
typedef struct {
  const char *func, *input, *setup, *call;
  int bounded;
} bench_case;

/* Shared inputs. Broadcast views where a real array would not fit; real
 * arrays stay at or below ~2e8 bytes, results at or below ~1.6 GB. */
#define F32_2E8 "x = dl.zeros(1, {dtype = 'float32'}):expand(2e8)"
#define F32_1E9 "y = dl.zeros(1, {dtype = 'float32'}):expand(1e9)"
#define F64_1E9 "v = dl.zeros(1):expand(1e9) w = dl.zeros(1):expand(1e9)"
#define F64_1E8 "v = dl.zeros(1):expand(1e8)"
#define ONES_1E9 "v = dl.ones(1):expand(1e9)"
#define MAT_1E9 "m = dl.arange(1e4):expand(1e5, 1e4)"
#define MAT_1E9_D "i64 arange(1e4):expand(1e5,1e4)"
#define ONES_MAT "m = dl.ones(1e4):expand(1e5, 1e4)"
#define ONES_MAT_D "f64 ones(1e4):expand(1e5,1e4)"
#define ZEROS_MAT "m = dl.zeros(1e4):expand(1e5, 1e4)"
#define ZEROS_MAT_D "f64 zeros(1e4):expand(1e5,1e4)"
#define I8_1E9 "b = dl.zeros(1, {dtype = 'int8'}):expand(1e9)"
#define I8_5E8 "h = dl.zeros(1, {dtype = 'int8'}):expand(5e8)"
#define T_VIEW "t = dl.arange(2e4, {dtype = 'int16'}):expand(2e4, 2e4):T()"
#define IDX_1E8 "z = dl.zeros(10, {dtype = 'int8'}) idx = dl.ones(1, {dtype = 'int64'}):expand(1e8)"
#define RAND_5E7 "r = dl.random.default_rng(1):random(5e7, {dtype = 'float32'})"
#define RNG "g = dl.random.default_rng(1)"

#define REDUCE(f, vec, mat)                                                                        \
  {#f, "f64 expand(1e9)", vec, "return dl." #f "(v)", 0}, {                                        \
#f "{dim=2}", mat##_D, mat, "return dl." #f "(m, {dim = 2})", 0                                \
  }

static const bench_case cases[] = {
    /* element-wise */
    {"add", "f32 expand(2e8) + itself", F32_2E8, "return dl.add(x, x)", 0},
    {"mul", "f32 expand(2e8) * 2", F32_2E8, "return dl.mul(x, 2)", 0},
    {"sqrt", "f32 expand(2e8)", F32_2E8, "return dl.sqrt(x)", 0},
    {"exp", "f32 expand(2e8)", F32_2E8, "return dl.exp(x)", 0},
    {"tanh", "f32 expand(2e8)", F32_2E8, "return dl.tanh(x)", 0},
    {"where", "bool expand(2e8), f32 expand(2e8)",
     F32_2E8 " c = dl.ones(1, {dtype = 'bool'}):expand(2e8)", "return dl.where(c, x, 1)", 0},
    {"clip", "f32 expand(2e8), 0..1", F32_2E8, "return dl.clip(x, 0, 1)", 0},
    {"less", "f32 expand(1e9) < 1", F32_1E9, "return dl.less(y, 1)", 0},
    {"equal", "f32 expand(1e9) == 0", F32_1E9, "return dl.equal(y, 0)", 0},
    {"astype", "i16 expand(2e4,2e4):T() -> int8", T_VIEW, "return t:astype('int8')", 0},
    {"copy", "i16 expand(2e4,2e4):T()", T_VIEW, "return t:copy()", 0},
    {"contiguous", "i16 expand(2e4,2e4):T()", T_VIEW, "return t:contiguous()", 0},
    /* reductions, over all elements and along dim 2 (rows of 1e4) */
    REDUCE(sum, F64_1E9, MAT_1E9),
    REDUCE(prod, ONES_1E9, ONES_MAT),
    REDUCE(mean, F64_1E9, MAT_1E9),
    REDUCE(std, F64_1E9, MAT_1E9),
    REDUCE(var, F64_1E9, MAT_1E9),
    REDUCE(min, F64_1E9, MAT_1E9),
    REDUCE(max, F64_1E9, MAT_1E9),
    /* argmin/argmax of a stride-0 view return at once; over every dim they
     * flatten (copy) an n-D view first, so that input is smaller */
    {"argmin", "i64 arange(1e4):expand(2e4,1e4)", "a = dl.arange(1e4):expand(2e4, 1e4)",
     "return dl.argmin(a)", 0},
    {"argmin{dim=2}", "i64 arange(1e4):expand(1e5,1e4)", MAT_1E9, "return dl.argmin(m, {dim = 2})",
     0},
    {"argmax", "i64 arange(1e4):expand(2e4,1e4)", "a = dl.arange(1e4):expand(2e4, 1e4)",
     "return dl.argmax(a)", 0},
    {"argmax{dim=2}", "i64 arange(1e4):expand(1e5,1e4)", MAT_1E9, "return dl.argmax(m, {dim = 2})",
     0},
    REDUCE(any, F64_1E9, ZEROS_MAT),
    REDUCE(all, ONES_1E9, ONES_MAT),
    REDUCE(count_nonzero, F64_1E9, MAT_1E9),
    /* linear algebra and signals */
    {"matmul", "f64 4000x4000 real @ itself", "A = dl.ones({4000, 4000})", "return dl.matmul(A, A)",
     0},
    {"matmul", "i32 2000x2000 real @ itself", "A = dl.ones({2000, 2000}, {dtype = 'int32'})",
     "return dl.matmul(A, A)", 0},
    {"dot", "f64 expand(1e8) . expand(1e8)",
     "v = dl.zeros(1):expand(1e8) w = dl.zeros(1):expand(1e8)", "return dl.dot(v, w)", 0},
    {"convolve", "f64 expand(1e5) * expand(1e5)", "c = dl.zeros(1):expand(1e5)",
     "return dl.convolve(c, c)", 0},
    /* sorting */
    {"sort", "f32 random 5e7 real", RAND_5E7, "return dl.sort(r)", 0},
    {"argsort", "f32 random 5e7 real", RAND_5E7, "return dl.argsort(r)", 0},
    {"unique", "f32 random 5e7 real", RAND_5E7, "return dl.unique(r)", 0},
    {"topk", "i64 arange(1000):expand(1e6,1000), k=5", "a = dl.arange(1000):expand(1e6, 1000)",
     "return dl.topk(a, 5)", 0},
    {"searchsorted", "arange(1e6), v = expand(1e8)",
     "s = dl.arange(1e6) q = dl.zeros(1):expand(1e8)", "return dl.searchsorted(s, q)", 0},
    /* scans and counting */
    {"cumsum", "i8 expand(1e9), dtype int8", I8_1E9, "return dl.cumsum(b, {dtype = 'int8'})", 0},
    {"cumprod", "i8 ones expand(1e9), dtype int8", "b = dl.ones(1, {dtype = 'int8'}):expand(1e9)",
     "return dl.cumprod(b, {dtype = 'int8'})", 0},
    {"diff", "i8 expand(1e9)", I8_1E9, "return dl.diff(b)", 0},
    {"bincount", "i64 expand(1e9)", "k = dl.zeros(1, {dtype = 'int64'}):expand(1e9)",
     "return dl.bincount(k)", 0},
    {"bincount", "{0}, minlength 2e8 (lazily zeroed)", NULL,
     "return dl.bincount({0}, {minlength = 2e8})", 1},
    {"histogram", "{1,2,3}, bins = 1e8", NULL, "return dl.histogram({1, 2, 3}, {bins = 1e8})", 0},
    {"histogram", "f64 expand(1e9), range {0,1}", F64_1E9,
     "return dl.histogram(v, {range = {0, 1}})", 0},
    /* selecting */
    {"take", "i8 10 real, idx expand(1e8)", IDX_1E8, "return dl.take(z, idx)", 0},
    {"take_along_dim", "i8 expand(2e8), idx expand(2e8)",
     "b = dl.zeros(1, {dtype = 'int8'}):expand(2e8) idx = dl.ones(1, {dtype = "
     "'int64'}):expand(2e8)",
     "return dl.take_along_dim(b, idx, 1)", 0},
    {"a[mask]", "i8 expand(1e9), all-true mask",
     I8_1E9 " mask = dl.ones(1, {dtype = 'bool'}):expand(1e9)", "return b[mask]", 0},
    {"a[idx]", "i8 10 real, idx expand(1e8)", IDX_1E8, "return z[idx]", 0},
    {"nonzero", "f64 zeros expand(1e9)", F64_1E9, "return dl.nonzero(v)", 0},
    {"argwhere", "f64 zeros expand(1e9)", F64_1E9, "return dl.argwhere(v)", 0},
    /* joining, conversion to Lua */
    {"concat", "i8 expand(5e8) x2", I8_5E8, "return dl.concat({h, h})", 0},
    {"stack", "i8 expand(5e8) x2", I8_5E8, "return dl.stack({h, h})", 0},
    {"tobytes", "i8 expand(1e9)", I8_1E9, "return #b:tobytes()", 0},
    {"totable", "f64 expand(5e7)", "v = dl.zeros(1):expand(5e7)", "return #v:totable()", 0},
    {"tostring", "f64 expand(1e9) (summarised)", F64_1E9, "return #tostring(v)", 1},
    /* construction */
    {"arange", "2e8 (f64)", NULL, "return dl.arange(2e8)", 0},
    {"linspace", "0..1, 2e8", NULL, "return dl.linspace(0, 1, 2e8)", 0},
    {"logspace", "0..1, 2e8", NULL, "return dl.logspace(0, 1, 2e8)", 0},
    {"eye", "4e4, int8", NULL, "return dl.eye(4e4, {dtype = 'int8'})", 0},
    {"full", "2e8 (f64)", NULL, "return dl.full(2e8, 7)", 0},
    {"zeros", "2e8 f64 (lazily zeroed)", NULL, "return dl.zeros(2e8)", 1},
    {"ones", "2e8 (f64)", NULL, "return dl.ones(2e8)", 0},
    {"full_like", "f64 expand(2e8)", "v = dl.zeros(1):expand(2e8)", "return dl.full_like(v, 1)", 0},
    {"tile", "i8 {0} x 1e9", "o = dl.zeros(1, {dtype = 'int8'})", "return dl.tile(o, 1e9)", 0},
    {"repeat_elements", "i8 {0} x 1e9", "o = dl.zeros(1, {dtype = 'int8'})",
     "return dl.repeat_elements(o, 1e9)", 0},
    {"roll", "i8 expand(1e9), shift 7", I8_1E9, "return dl.roll(b, 7)", 0},
    {"flip", "i8 expand(1e9) (returns a view)", I8_1E9, "return dl.flip(b)", 1},
    {"pad", "i8 {0}, 5e8 each side", "o = dl.zeros(1, {dtype = 'int8'})", "return dl.pad(o, 5e8)",
     0},
    {"meshgrid", "i8 expand(2.2e4) x2", "e = dl.zeros(1, {dtype = 'int8'}):expand(2.2e4)",
     "return dl.meshgrid(e, e)", 0},
    /* comparing arrays */
    {"isclose", "f64 expand(1e8), 0", F64_1E8, "return dl.isclose(v, 0)", 0},
    {"allclose", "f64 expand(1e8), 0", F64_1E8, "return dl.allclose(v, 0)", 0},
    {"array_equal", "f64 expand(2e8) x2", "v = dl.zeros(1):expand(2e8) w = dl.zeros(1):expand(2e8)",
     "return dl.array_equal(v, w)", 0},
    /* random numbers */
    {"Generator:random", "2e8 (f64)", RNG, "return g:random(2e8)", 0},
    {"Generator:integers", "0..100, 1e9 int8", RNG,
     "return g:integers(0, 100, 1e9, {dtype = 'int8'})", 0},
    {"Generator:normal", "2e8 (f64)", RNG, "return g:normal(0, 1, 2e8)", 0},
    {"Generator:standard_normal", "2e8 (f64)", RNG, "return g:standard_normal(2e8)", 0},
    {"Generator:uniform", "2e8 (f64)", RNG, "return g:uniform(0, 1, 2e8)", 0},
    {"Generator:permutation", "3e7", RNG, "return g:permutation(3e7)", 0},
    {"Generator:shuffle", "i8 2e8 real", RNG " s = dl.full(2e8, 1, {dtype = 'int8'})",
     "return g:shuffle(s)", 0},
    {"Generator:spawn", "1e6 generators (the most)", RNG, "return #g:spawn(1e6)", 0},
    /* files as strings, DLPack, devices */
    {"tonpy", "i8 expand(1e9)", I8_1E9, "return #dl.tonpy(b)", 0},
    {"tosafetensors", "i8 expand(1e9)", I8_1E9, "return #dl.tosafetensors({x = b})", 0},
    {"to_dlpack{copy=true}", "i8 expand(1e9)", I8_1E9, "return b:to_dlpack({copy = true})", 0},
    {"device_put", "i8 expand(1e9), cpu, copy", I8_1E9,
     "return dl.device_put(b, 'cpu', {copy = true})", 0},
    {NULL, NULL, NULL, NULL, 0}};

/* ---------------------------------------------------------------- child */

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static long vm_field_kb(const char *path, const char *field) {
  char line[256];
  long v = -1;
  size_t n = strlen(field);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0) v = atol(line + n);
  fclose(f);
  return v;
}

/* What a child sends: stage 1 just before the call, stage 2 after it. */
typedef struct {
  int stage;
  long hwm_base_kb, hwm_peak_kb;
  double elapsed_ms;    /* call start to return */
  double after_fire_ms; /* interrupt timestamp to return (fired only) */
  int fired;            /* the interrupt fired before the call returned */
  int stuck;            /* after dlb_interrupt_clear, a small call still failed */
  char code[96];        /* "OK", a dlbridge code, "SETUP: ...", "LUA: ..." */
} report;

static dlb_interrupter *g_interrupter;
static _Atomic double g_fired_at; /* 0: not yet */
static double g_fire_after_ms;

static void *fire(void *arg) {
  struct timespec d;
  (void)arg;
  d.tv_sec = (time_t)(g_fire_after_ms / 1000);
  d.tv_nsec = (long)((g_fire_after_ms - (double)d.tv_sec * 1000) * 1e6);
  while (nanosleep(&d, &d) != 0 && errno == EINTR) {
  }
  atomic_store(&g_fired_at, now_ms());
  dlb_interrupt(g_interrupter);
  return NULL;
}

static void send_report(int fd, const report *r) {
  const char *p = (const char *)r;
  size_t left = sizeof *r;
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(2);
    p += n;
    left -= (size_t)n;
  }
}

/* The error's code (dlbridge.Error) or a short text for anything else. */
static const char *CODE_OF = "local e = ... if dl.is_error(e) then return tostring(e.code) end "
                             "return 'LUA: ' .. tostring(e)";

static void error_code(lua_State *L, char *out, size_t size) {
  /* error value on top */
  if (luaL_loadstring(L, CODE_OF) != LUA_OK) {
    snprintf(out, size, "?");
    return;
  }
  lua_insert(L, -2);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_isstring(L, -1)) snprintf(out, size, "?");
  else snprintf(out, size, "%s", lua_tostring(L, -1));
  lua_pop(L, 1);
}

static void run_child(const bench_case *k, char mode, double safety_ms, int fd) {
  report r;
  lua_State *L;
  pthread_t th;
  double t0, t1, fired;
  int rc;
  struct rlimit as = {(rlim_t)AS_LIMIT_GIB << 30, (rlim_t)AS_LIMIT_GIB << 30};
  memset(&r, 0, sizeof r);
  setrlimit(RLIMIT_AS, &as);
  L = luaL_newstate();
  if (!L) _exit(3);
  luaL_openlibs(L);
  dlb_preload(L);
  if (luaL_dostring(L, "dl = require 'dlbridge'") != LUA_OK ||
      (k->setup && luaL_dostring(L, k->setup) != LUA_OK)) {
    r.stage = 2;
    snprintf(r.code, sizeof r.code, "SETUP: %.80s",
             lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
    send_report(fd, &r);
    _exit(0);
  }
  lua_gc(L, LUA_GCCOLLECT, 0);
  if (mode == 'M') {
    lua_Integer in_use = 0;
    if (luaL_dostring(L, "return dl.memory().in_use") == LUA_OK) in_use = lua_tointeger(L, -1);
    lua_settop(L, 0);
    dlb_set_memory_limit(L, (size_t)in_use + ((size_t)LIMIT_MIB << 20));
  } else if (mode == 'W') {
    dlb_set_work_limit(L, WORK_LIMIT);
  }
  g_interrupter = dlb_get_interrupter(L);
  g_fire_after_ms = mode == 'I' ? FIRE_MS : safety_ms;
  if (luaL_loadstring(L, k->call) != LUA_OK) {
    r.stage = 2;
    snprintf(r.code, sizeof r.code, "SETUP: %.80s", lua_tostring(L, -1));
    send_report(fd, &r);
    _exit(0);
  }
  {
    int cr = open("/proc/self/clear_refs", O_WRONLY);
    if (cr >= 0) {
      if (write(cr, "5", 1) != 1) { /* no reset: the growth then counts from the start */
      }
      close(cr);
    }
  }
  r.stage = 1;
  r.hwm_base_kb = vm_field_kb("/proc/self/status", "VmHWM:");
  send_report(fd, &r);
  pthread_create(&th, NULL, fire, NULL);
  t0 = now_ms();
  rc = lua_pcall(L, 0, 0, 0);
  t1 = now_ms();
  fired = atomic_load(&g_fired_at);
  r.stage = 2;
  r.hwm_peak_kb = vm_field_kb("/proc/self/status", "VmHWM:");
  r.elapsed_ms = t1 - t0;
  r.fired = fired > 0 && fired <= t1;
  r.after_fire_ms = r.fired ? t1 - fired : 0;
  if (rc == LUA_OK) snprintf(r.code, sizeof r.code, "OK");
  else error_code(L, r.code, sizeof r.code);
  lua_settop(L, 0);
  if (r.fired) { /* clear the interrupt: the state must work again */
    pthread_join(th, NULL);
    dlb_interrupt_clear(g_interrupter);
    dlb_set_work_limit(L, 0);
    r.stuck = luaL_dostring(L, "return dl.arange(1e5):sum()") != LUA_OK;
  }
  send_report(fd, &r);
  _exit(0); /* no lua_close: freeing a big result is not part of the case */
}

/* --------------------------------------------------------------- parent */

typedef enum { DONE, HANG, CRASH } outcome;

typedef struct {
  outcome how;
  int signal;
  report r;
} run_result;

static int read_report(int fd, report *r, int timeout_ms) {
  char *p = (char *)r;
  size_t got = 0;
  double end = now_ms() + timeout_ms;
  while (got < sizeof *r) {
    struct pollfd pf = {fd, POLLIN, 0};
    int left = (int)(end - now_ms());
    ssize_t n;
    if (left <= 0) return 0;
    if (poll(&pf, 1, left) <= 0) continue;
    n = read(fd, p + got, sizeof *r - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1; /* the child died */
    got += (size_t)n;
  }
  return 1;
}

static run_result run_case(const bench_case *k, char mode, double safety_ms, double hang_ms) {
  run_result out;
  int fds[2], st = 0, got;
  pid_t pid;
  memset(&out, 0, sizeof out);
  fflush(stdout);
  if (pipe(fds) != 0) {
    perror("pipe");
    exit(1);
  }
  pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(1);
  }
  if (pid == 0) {
    close(fds[0]);
    run_child(k, mode, safety_ms, fds[1]);
  }
  close(fds[1]);
  /* stage 1 (or 2 for a failed setup): the setup may take a while */
  got = read_report(fds[0], &out.r, 120000);
  if (got == 1 && out.r.stage == 1) {
    double fire_ms = mode == 'I' ? FIRE_MS : safety_ms;
    report base = out.r;
    got = read_report(fds[0], &out.r, (int)(fire_ms + hang_ms));
    if (got == 0) { /* still running: read its high-water mark, then kill it */
      char path[64];
      snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
      out.r = base;
      out.r.hwm_peak_kb = vm_field_kb(path, "VmHWM:");
      out.how = HANG;
      kill(pid, SIGKILL);
    }
  }
  close(fds[0]);
  waitpid(pid, &st, 0);
  if (out.how != HANG && (got != 1 || out.r.stage != 2)) {
    out.how = CRASH;
    out.signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  }
  return out;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One cell for a bounded (M or W) run: the code, "ran>1s" when only the
 * safety interrupt stopped it, with the time when it is not instant. */
static void bound_cell(const run_result *x, double safety_ms, double hang_ms, char *out,
                       size_t size) {
  if (x->how == HANG) snprintf(out, size, "killed >%gs", (safety_ms + hang_ms) / 1000);
  else if (x->how == CRASH) snprintf(out, size, "CRASH sig %d", x->signal);
  else if (x->r.fired && strcmp(x->r.code, "INTERRUPTED") == 0)
    snprintf(out, size, "ran>%gs", safety_ms / 1000);
  else if (x->r.elapsed_ms >= 10) snprintf(out, size, "%.28s %.0fms", x->r.code, x->r.elapsed_ms);
  else snprintf(out, size, "%.40s", x->r.code);
}

typedef struct {
  const bench_case *k;
  int latency_fail, memory_fail, work_fail, too_small, stuck;
  char latency[48], verdict[12], work[48];
  double growth;
} row;

static double env_number(const char *name, double fallback) {
  const char *s = getenv(name);
  return s && *s ? atof(s) : fallback;
}

int main(int argc, char **argv) {
  static row rows[sizeof cases / sizeof cases[0]];
  double safety_ms = env_number("DLB_LIMITS_SAFETY_S", 1) * 1000;
  double hang_ms = env_number("DLB_LIMITS_HANG_S", 4) * 1000;
  const char *filter = argc > 1 ? argv[1] : NULL;
  bench_case custom[2] = {{"custom", "(command line)", NULL, NULL, 0}, {NULL, NULL, NULL, NULL, 0}};
  const bench_case *list = cases;
  int nrows = 0, any_single = 0;
  double t_start = now_ms();
  if (filter && strstr(filter, "dl.")) {
    custom[0].call = filter;
    list = custom;
    filter = NULL;
  }
  signal(SIGPIPE, SIG_IGN);
  printf(
      "dlbridge %s: host bounds per function. Latency: dlb_interrupt %d ms into the call, "
      "median of %d runs (goal < %.0f ms).\nMemory: limit = setup's in_use + %d MiB, VmHWM growth "
      "during the call (goal <= %d MiB). Work: dlb_set_work_limit %d (expect INTERRUPTED).\n"
      "ran>%gs: stopped only by the safety interrupt at %g s.\n\n",
      DLB_VERSION_STRING, FIRE_MS, REPEATS, LATENCY_GOAL_MS, LIMIT_MIB, LIMIT_MIB + SLACK_MIB,
      WORK_LIMIT, safety_ms / 1000, safety_ms / 1000);
  printf("%-26s %-38s %-36s %-9s %8s  %-24s %-22s\n", "function", "input", "latency ms", "verdict",
         "peak MiB", "code @ +64 MiB", "code @ work 1e6");
  for (const bench_case *k = list; k->func; k++) {
    row *w;
    run_result lat[REPEATS], mem, work;
    double ms[REPEATS];
    int n = 0, runs = 0;
    char memcell[48];
    if (filter && !strstr(k->func, filter)) continue;
    w = &rows[nrows++];
    memset(w, 0, sizeof *w);
    w->k = k;
    /* I: latency */
    for (runs = 0; runs < REPEATS; runs++) {
      lat[runs] = run_case(k, 'I', safety_ms, hang_ms);
      const run_result *x = &lat[runs];
      if (x->how == DONE && x->r.fired && strcmp(x->r.code, "INTERRUPTED") == 0) {
        ms[n++] = x->r.after_fire_ms;
        if (x->r.after_fire_ms < 1000) continue;
      }
      runs++;
      break;
    }
    {
      const run_result *x = &lat[runs - 1]; /* the run that ended the series */
      if (n == runs) {
        qsort(ms, (size_t)n, sizeof ms[0], cmp_double);
        snprintf(w->latency, sizeof w->latency, "%.1f%s", ms[n / 2], n < REPEATS ? "*" : "");
        if (n < REPEATS) any_single = 1;
        w->latency_fail = ms[n / 2] >= LATENCY_GOAL_MS;
        snprintf(w->verdict, sizeof w->verdict, "%s", w->latency_fail ? "SLOW" : "OK");
      } else if (x->how == HANG) {
        snprintf(w->latency, sizeof w->latency, ">%.0f (killed)", hang_ms);
        snprintf(w->verdict, sizeof w->verdict, "SLOW");
        w->latency_fail = 1;
      } else if (x->how == CRASH) {
        snprintf(w->latency, sizeof w->latency, "CRASH sig %d", x->signal);
        snprintf(w->verdict, sizeof w->verdict, "CRASH");
        w->latency_fail = 1;
      } else if (!x->r.fired) {
        if (strcmp(x->r.code, "OK") == 0)
          snprintf(w->latency, sizeof w->latency, "done in %.1f ms before the interrupt",
                   x->r.elapsed_ms);
        else
          snprintf(w->latency, sizeof w->latency, "%.20s in %.1f ms (no interrupt)", x->r.code,
                   x->r.elapsed_ms);
        w->too_small = !k->bounded;
        snprintf(w->verdict, sizeof w->verdict, "%s", k->bounded ? "OK (fast)" : "TOO-SMALL");
      } else { /* it returned after the interrupt, but not with INTERRUPTED */
        snprintf(w->latency, sizeof w->latency, "%.1f, ended %.20s", x->r.after_fire_ms, x->r.code);
        snprintf(w->verdict, sizeof w->verdict, "SLOW");
        w->latency_fail = 1;
      }
    }
    for (int i = 0; i < runs; i++) w->stuck |= lat[i].how == DONE && lat[i].r.stuck;
    /* M: memory */
    mem = run_case(k, 'M', safety_ms, hang_ms);
    w->stuck |= mem.how == DONE && mem.r.stuck;
    bound_cell(&mem, safety_ms, hang_ms, memcell, sizeof memcell);
    if (mem.how == CRASH || mem.r.hwm_peak_kb < 0 || mem.r.hwm_base_kb < 0) {
      w->growth = -1;
      w->memory_fail = mem.how == CRASH;
    } else {
      w->growth = (double)(mem.r.hwm_peak_kb - mem.r.hwm_base_kb) / 1024.0;
      w->memory_fail = w->growth > LIMIT_MIB + SLACK_MIB;
    }
    /* W: work limit */
    work = run_case(k, 'W', safety_ms, hang_ms);
    bound_cell(&work, safety_ms, hang_ms, w->work, sizeof w->work);
    w->stuck |= work.how == DONE && work.r.stuck;
    w->work_fail = !(work.how == DONE && !work.r.fired && strcmp(work.r.code, "INTERRUPTED") == 0);
    {
      char growth[24];
      if (w->growth < 0) snprintf(growth, sizeof growth, "?");
      else snprintf(growth, sizeof growth, "%.1f%s", w->growth, w->memory_fail ? " PAST" : "");
      printf("%-26s %-38s %-36s %-9s %8s  %-24s %-22s\n", k->func, k->input, w->latency, w->verdict,
             growth, memcell, w->work);
    }
  }
  if (any_single)
    printf(
        "\n* one run only: the first was over 1 s, so the median of %d would say nothing more.\n",
        REPEATS);
  printf("\nRows failing a goal (latency < %.0f ms; peak growth <= %d + %d MiB):\n",
         LATENCY_GOAL_MS, LIMIT_MIB, SLACK_MIB);
  {
    int fails = 0;
    for (int i = 0; i < nrows; i++) {
      row *w = &rows[i];
      if (!w->latency_fail && !w->memory_fail && !w->too_small && !w->stuck) continue;
      fails++;
      printf("  %-26s %-38s", w->k->func, w->k->input);
      if (w->latency_fail) printf(" latency %s (%s)", w->latency, w->verdict);
      if (w->too_small) printf(" input too small: %s", w->latency);
      if (w->memory_fail) printf(" peak +%.1f MiB", w->growth);
      if (w->stuck) printf(" a small call failed after dlb_interrupt_clear");
      printf("\n");
    }
    if (!fails) printf("  none\n");
    printf("\nRows the work limit of %d did not refuse (informational):\n", WORK_LIMIT);
    fails = 0;
    for (int i = 0; i < nrows; i++)
      if (rows[i].work_fail) {
        printf("  %-26s %-38s %s%s\n", rows[i].k->func, rows[i].k->input, rows[i].work,
               rows[i].k->bounded ? " (bounded: visits no elements)" : "");
        fails++;
      }
    if (!fails) printf("  none\n");
  }
  printf("\n%d cases in %.0f s\n", nrows, (now_ms() - t_start) / 1000);
  return 0;
}
