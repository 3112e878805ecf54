#define _POSIX_C_SOURCE 200809L
/* bench/dlpack_export.c -- C-level export + deleter per tensor through the host
 * exchange API (dlb_export_versioned, then the consumer's deleter call), and
 * the same through the exchange table a Lua C module uses (dlbridge_exchange.h),
 * against a baseline of malloc + free of a DLManagedTensorVersioned-sized block
 * in the same run. Targets (issues 3 and 10): <= 50 ns per export + deleter;
 * (issue 34) <= 2x the baseline. Also in the same run, the floor of such an
 * export: the least any export from a Lua stack slot does (the value checked
 * as an Array as the binding checks it: a userdata of an Array's size, 16
 * bytes, whose second 8 bytes are its tag; the tensor and its shape in one
 * block and filled, a reference taken on the buffer with an atomic
 * increment; the deleter, called through its pointer, drops the reference
 * and frees the block), with no state, no dtype or device checks, no
 * queued work. What an export costs above it is dlbridge's own. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <stdatomic.h>
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

/* The floor's buffer reference count and deleter. */
static atomic_long floor_refs;

static void floor_deleter(DLManagedTensorVersioned *t) {
  atomic_fetch_sub_explicit(&floor_refs, 1, memory_order_acq_rel);
  free(t);
}

/* The floor's export of the Array at stack slot 1: NULL when it is none.
 * (src/lua/array.c's userdata: a record pointer, then the tag.) */
static DLManagedTensorVersioned *floor_export(lua_State *L) {
  const uint64_t *array = lua_touserdata(L, 1);
  DLManagedTensorVersioned *t;
  int64_t *dims;
  if (!array || lua_rawlen(L, 1) != 16 || array[1] != UINT64_C(0x646c627269646765) ||
      !(t = malloc(sizeof *t + 2 * sizeof(int64_t))))
    return NULL;
  dims = (int64_t *)(t + 1);
  dims[0] = 16, dims[1] = 1;
  t->version.major = DLB_DLPACK_MAJOR;
  t->version.minor = DLB_DLPACK_MINOR;
  t->manager_ctx = (void *)array;
  t->deleter = floor_deleter;
  t->flags = 0;
  t->dl_tensor.data = (void *)array;
  t->dl_tensor.device.device_type = kDLCPU, t->dl_tensor.device.device_id = 0;
  t->dl_tensor.ndim = 1;
  t->dl_tensor.dtype.code = kDLFloat, t->dl_tensor.dtype.bits = 64, t->dl_tensor.dtype.lanes = 1;
  t->dl_tensor.shape = dims, t->dl_tensor.strides = dims + 1;
  t->dl_tensor.byte_offset = 0;
  atomic_fetch_add_explicit(&floor_refs, 1, memory_order_relaxed);
  return t;
}

int main(void) {
  lua_State *L = luaL_newstate();
  double t_export[ROUNDS], t_table[ROUNDS], t_malloc[ROUNDS], t_floor[ROUNDS];
  DLManagedTensorVersioned *(*volatile export_floor)(lua_State *) = floor_export;
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
    t0 = now();
    for (int i = 0; i < N; i++) {
      DLManagedTensorVersioned *t = export_floor(L);
      if (!t) return 1;
      t->deleter(t);
    }
    t_floor[r] = (now() - t0) / N * 1e9;
  }
  double e = median(t_export), t = median(t_table), m = median(t_malloc), f = median(t_floor);
  printf("dlbridge %s, N = %d, median of %d rounds\n", DLB_VERSION_STRING, N, ROUNDS);
  printf("%-40s %7.1f ns/tensor\n", "malloc + free of the same size", m);
  printf("%-40s %7.1f ns/tensor   %5.2fx baseline\n", "the floor of an export + deleter", f, f / m);
  printf(
      "%-40s %7.1f ns/tensor   %5.2fx baseline   %5.2fx floor   (target <= 50 ns, 2x baseline)\n",
      "dlb_export_versioned + deleter", e, e / m, e / f);
  printf(
      "%-40s %7.1f ns/tensor   %5.2fx baseline   %5.2fx floor   (target <= 50 ns, 2x baseline)\n",
      "exchange table export + deleter", t, t / m, t / f);
  lua_close(L);
  return 0;
}
