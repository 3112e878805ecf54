#define _GNU_SOURCE
/* bench/states_threads.c -- do lua_States on different threads slow each
 * other down? An engine runs one state a thread (LOVE's love.thread, a job
 * system's workers); nothing of one state is shared with another, so K
 * states on K threads should each run as fast as one state alone.
 *
 * Each of K threads (the online CPUs, 2 to 4) makes its own lua_State,
 * loads dlbridge and runs a case's loop of N calls; a round runs it on
 * thread 0 alone, then on all K at once, alternated ROUNDS times. Each
 * thread times its own loop in its own CPU time (CLOCK_THREAD_CPUTIME_ID:
 * a spinning lock and a cache line moving between cores both count). The
 * ratio is the median time a call together over the median alone: 1.00 is
 * the goal. The floor row runs a loop of plain Lua (a small table made a
 * call, the collector freeing them) the same way: what the machine itself
 * loses when K cores run at once (shared caches, SMT siblings, a busy host).
 *
 * build: cmake --build build --target bench_states_threads   (not a test)
 * run:   LUA_PATH=... LUA_CPATH=... build/bench/bench_states_threads
 * env:   BENCH_QUICK=1: a tenth of the calls (a smoke run)
 * Its ratios are against itself, not NumPy: they stay out of the table of
 * NumPy ratios that bench/run ends with.
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 4
#define ROUNDS 7
#define CALLS 300000 /* a tenth with BENCH_QUICK */

typedef struct bench_case {
  const char *label;
  const char *body; /* the loop's body; a and b are 10-element float32 arrays */
} bench_case;

static const bench_case cases[] = {
    {"floor: plain Lua, {x = i} a call", "local t = {x = i}"},
    {"10-element a + b", "local c = a + b"},
    {"10-element dl.sqrt(a)", "local c = sqrt(a)"},
    {"10-element a:copy()", "local c = a:copy()"},
    {"10-element a:slice(1, 2, 5)", "local c = a:slice(1, 2, 5)"},
};
#define NCASES (sizeof cases / sizeof cases[0])

typedef struct worker {
  pthread_t thread;
  int index;
  lua_State *L;
  int loop[NCASES];       /* each case's loop, a registry reference */
  double seconds[NCASES]; /* the last run's CPU time per call */
} worker;

static int nthreads, calls = CALLS;
static worker workers[MAX_THREADS];
static pthread_barrier_t go, done;
static int current_case = -1, together; /* set by main between the barriers */

static double thread_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Each case's loop as a function of n, referenced from w->loop. */
static int make_loops(worker *w) {
  lua_State *L = w->L;
  luaL_openlibs(L);
  for (size_t c = 0; c < NCASES; c++) {
    char chunk[512];
    snprintf(chunk, sizeof chunk,
             "local dl = require 'dlbridge'\n"
             "local a = dl.arange(10, {dtype = 'float32'})\n"
             "local b, sqrt = a + 1, dl.sqrt\n"
             "return function(n) for i = 1, n do %s end end",
             cases[c].body);
    if (luaL_loadstring(L, chunk) != 0 || lua_pcall(L, 0, 1, 0) != 0) return 0;
    w->loop[c] = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  return 1;
}

static void *run_worker(void *arg) {
  worker *w = arg;
  w->L = luaL_newstate();
  if (!w->L || !make_loops(w)) {
    fprintf(stderr, "thread %d: %s\n", w->index, w->L ? lua_tostring(w->L, -1) : "no state");
    exit(1);
  }
  for (;;) {
    int c;
    pthread_barrier_wait(&go);
    c = current_case;
    if (c < 0) break;
    if (together || w->index == 0) {
      double t0;
      lua_rawgeti(w->L, LUA_REGISTRYINDEX, w->loop[c]);
      lua_pushinteger(w->L, calls);
      t0 = thread_seconds();
      if (lua_pcall(w->L, 1, 0, 0) != 0) {
        fprintf(stderr, "thread %d: %s\n", w->index, lua_tostring(w->L, -1));
        exit(1);
      }
      w->seconds[c] = (thread_seconds() - t0) / calls;
      lua_gc(w->L, LUA_GCCOLLECT, 0); /* the next round starts clean */
    }
    pthread_barrier_wait(&done);
  }
  lua_close(w->L);
  return NULL;
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Runs case c once on thread 0 alone or on every thread. */
static void run_round(int c, int all) {
  current_case = c;
  together = all;
  pthread_barrier_wait(&go);
  pthread_barrier_wait(&done);
}

int main(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const char *quick = getenv("BENCH_QUICK");
  nthreads = cpus < 2 ? 2 : cpus > MAX_THREADS ? MAX_THREADS : (int)cpus;
  if (quick && *quick && strcmp(quick, "0") != 0) calls = CALLS / 10;
  pthread_barrier_init(&go, NULL, (unsigned)nthreads + 1);
  pthread_barrier_init(&done, NULL, (unsigned)nthreads + 1);
  for (int k = 0; k < nthreads; k++) {
    workers[k].index = k;
    if (pthread_create(&workers[k].thread, NULL, run_worker, &workers[k]) != 0) return 1;
  }
  printf("%d lua_States on %d threads, %d calls a loop, CPU time a call, median of %d rounds "
         "(alone and together alternated)\n",
         nthreads, nthreads, calls, ROUNDS);
  printf("%-36s %22s %26s %7s\n", "case", "alone ns (min-max)", "together ns (min-max)", "ratio");
  for (size_t c = 0; c < NCASES; c++) {
    double alone[ROUNDS], both[ROUNDS * MAX_THREADS], ratio;
    int nb = 0;
    for (int r = 0; r < ROUNDS; r++) {
      run_round((int)c, 0);
      alone[r] = workers[0].seconds[c];
      run_round((int)c, 1);
      for (int k = 0; k < nthreads; k++) both[nb++] = workers[k].seconds[c];
    }
    qsort(alone, ROUNDS, sizeof *alone, by_value);
    qsort(both, (size_t)nb, sizeof *both, by_value);
    ratio = both[nb / 2] / alone[ROUNDS / 2];
    printf("%-36s %7.1f (%5.1f-%5.1f) %11.1f (%5.1f-%7.1f) %6.2fx\n", cases[c].label,
           alone[ROUNDS / 2] * 1e9, alone[0] * 1e9, alone[ROUNDS - 1] * 1e9, both[nb / 2] * 1e9,
           both[0] * 1e9, both[nb - 1] * 1e9, ratio);
  }
  current_case = -1; /* the workers close their states and end */
  pthread_barrier_wait(&go);
  for (int k = 0; k < nthreads; k++) pthread_join(workers[k].thread, NULL);
  return 0;
}
