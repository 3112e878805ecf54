/* fuzz_common.c -- the lua_State, heap and reporting the harnesses share. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <lauxlib.h>
#include <lualib.h>
#include <sanitizer/common_interface_defs.h>
#include "dlbridge.h"
#include "fuzz_common.h"

/* Sanitizer defaults, compiled in so that a bare `./fuzz_x crash-file` behaves
 * as under tests/fuzz/run (ASAN_OPTIONS/UBSAN_OPTIONS still override):
 * - a huge request (dl.zeros{1e9} is 8 GB) gets NULL, so dlbridge reports
 *   OUT_OF_MEMORY, instead of ASan aborting or libFuzzer's -malloc_limit_mb
 *   calling it a crash: no single allocation above 64 MiB (this also keeps
 *   each run fast: no copy of more than 64 MiB);
 * - UB is a crash, with a stack. */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

__attribute__((visibility("default"), used)) const char *__asan_default_options(void) {
  return "allocator_may_return_null=1:max_allocation_size_mb=64:strict_string_checks=1";
}

__attribute__((visibility("default"), used)) const char *__ubsan_default_options(void) {
  return "print_stacktrace=1:halt_on_error=1";
}

void fuzz_fail(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "\n==fuzz== INVARIANT BROKEN: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  abort();
}

int fuzz_verbose(void) {
  static int v = -1;
  if (v < 0) {
    const char *e = getenv("FUZZ_VERBOSE");
    v = e && *e && *e != '0';
  }
  return v;
}

void fuzz_heap_fail_after(fuzz_heap *h, long n, long count) {
  h->countdown = n;
  h->count = count;
  h->failing = 0;
}

void fuzz_heap_reset(fuzz_heap *h) {
  h->countdown = -1;
  h->count = 0;
  h->failing = 0;
}

/* FUZZ_TRACE_FAULTS=1: a stack trace at every refused allocation (where did
 * the memory error that escaped come from?). */
static void refused(size_t nsize) {
  static int trace = -1;
  if (trace < 0) {
    const char *e = getenv("FUZZ_TRACE_FAULTS");
    trace = e && *e && *e != '0';
  }
  if (trace) {
    fprintf(stderr, "==fuzz== Lua allocation of %zu bytes refused:\n", nsize);
    __sanitizer_print_stack_trace();
  }
}

static void *heap_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  fuzz_heap *h = ud;
  size_t old = ptr ? osize : 0; /* without ptr, osize is a type tag */
  void *p;
  if (nsize == 0) {
    free(ptr);
    h->used -= old;
    return NULL;
  }
  if (nsize > old) {
    if (h->countdown == 0) {
      h->countdown = -1;
      h->failing = 1;
    }
    if (h->failing && h->count != 0) {
      if (h->count > 0) h->count--;
      h->injected++;
      refused(nsize);
      return NULL;
    }
    if (h->countdown > 0) h->countdown--;
    if (nsize - old > h->cap - h->used) {
      refused(nsize);
      return NULL;
    }
  }
  p = realloc(ptr, nsize);
  if (!p) return NULL;
  h->used = h->used - old + nsize;
  return p;
}

static int panic(lua_State *L) {
  const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, -1);
  fuzz_fail("Lua panic (an error outside any protected call): %s", msg);
}

static int open_all(lua_State *L) {
  luaL_openlibs(L);
  dlb_preload(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "dlbridge");
  lua_call(L, 1, 1);
  lua_setglobal(L, "dl");
  return 0;
}

int fuzz_is_dlb_error(lua_State *L, int idx) {
  int is;
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx)) return 0;
  luaL_getmetatable(L, "dlbridge.Error");
  is = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return is;
}

lua_State *fuzz_new_state(fuzz_heap *h) {
  lua_State *L;
  h->used = 0;
  h->cap = FUZZ_LUA_HEAP_CAP;
  h->injected = 0;
  fuzz_heap_reset(h);
  L = lua_newstate(heap_alloc, h);
  if (!L) return NULL;
  lua_atpanic(L, panic);
  lua_pushcfunction(L, open_all);
  if (lua_pcall(L, 0, 0, 0) != LUA_OK)
    fuzz_fail("opening the libraries and dlbridge failed: %s", luaL_tolstring(L, -1, NULL));
  return L;
}
