#define _POSIX_C_SOURCE 200809L
/* bench/dlpack_export.c -- C-level export + deleter per tensor through the host
 * exchange API (dlb_export_versioned, then the consumer's deleter call), and
 * the same through the exchange table a Lua C module uses (dlbridge_exchange.h),
 * against a baseline of malloc + free of a DLManagedTensorVersioned-sized block
 * in the same run. Targets (issues 3 and 10): <= 50 ns per export + deleter. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "dlbridge.h"
#include "dlbridge_exchange.h"

#ifndef N
#define N 2000000
#endif
#define ROUNDS 7

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v) {
  qsort(v, ROUNDS, sizeof v[0], compare);
  return v[ROUNDS / 2];
}

int main(void) {
  lua_State *L = luaL_newstate();
  double t_export[ROUNDS], t_table[ROUNDS], t_malloc[ROUNDS];
  const dlb_exchange *x;
  void *volatile sink;
  luaL_openlibs(L);
  dlb_preload(L);
  if (luaL_dostring(L, "return require('dlbridge').zeros(16)") != LUA_OK) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    return 1;
  }
  if (!(x = dlb_exchange_get(L))) return 1;
  for (int r = 0; r < ROUNDS; r++) {
    double t0 = now();
    for (int i = 0; i < N; i++) {
      DLManagedTensorVersioned *t;
      if (dlb_export_versioned(L, 1, NULL, &t) != DLB_OK) return 1;
      t->deleter(t);
    }
    t_export[r] = (now() - t0) / N * 1e9;
    t0 = now();
    for (int i = 0; i < N; i++) {
      DLManagedTensorVersioned *t;
      if (x->export_versioned(L, 1, NULL, &t) != DLB_OK) return 1;
      t->deleter(t);
    }
    t_table[r] = (now() - t0) / N * 1e9;
    t0 = now();
    for (int i = 0; i < N; i++) {
      sink = malloc(sizeof(DLManagedTensorVersioned) + 2 * DLB_MAX_NDIM * sizeof(int64_t));
      free(sink);
    }
    t_malloc[r] = (now() - t0) / N * 1e9;
  }
  double e = median(t_export), t = median(t_table), m = median(t_malloc);
  printf("dlbridge %s, N = %d, median of %d rounds\n", DLB_VERSION_STRING, N, ROUNDS);
  printf("%-40s %7.1f ns/tensor\n", "malloc + free of the same size", m);
  printf("%-40s %7.1f ns/tensor   %5.2fx baseline   (target <= 50 ns)\n",
         "dlb_export_versioned + deleter", e, e / m);
  printf("%-40s %7.1f ns/tensor   %5.2fx baseline   (target <= 50 ns)\n",
         "exchange table export + deleter", t, t / m);
  lua_close(L);
  return 0;
}
