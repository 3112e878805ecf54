/* fixtures.h -- helpers shared by the C tests (the checks are in check.h).
 *
 * Include it after the headers of the code under test. The includer defines
 * _POSIX_C_SOURCE 200809L (or _DEFAULT_SOURCE) before its first #include,
 * for fork and waitpid. Sections:
 *   always                 isolation, random numbers, host-memory backend
 *                          callbacks, the opaque backend, producer tensors
 *   lua.h, lauxlib.h and lualib.h included
 *                          a Lua state with dlbridge
 *   core/dtype.h included  scalar constructors and reader
 *   FIXTURES_CPU defined   the cpu backend and arrays on it (core/array.h;
 *                          defines the globals cpu and err)
 * Everything is static inline: a test uses what it needs. */
#ifndef DLB_TESTS_FIXTURES_H
#define DLB_TESTS_FIXTURES_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/cpu/cpu.h"
#include "check.h"
#include "dlbridge.h"

/* ------------------------------------------------------------------------ */
/* Isolation */

/* Runs fn in a child process: undefined behaviour that a sanitizer turns
 * into an abort (or a fault) becomes one failed check, not the end of the run. */
static inline int run_isolated(void (*fn)(void)) {
  int status = 0;
  pid_t pid;
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if (pid < 0) {
    fn();
    return 1;
  }
  if (pid == 0) {
    check_failures = 0; /* the child's own verdict */
    fn();
    fflush(stdout);
    fflush(stderr);
    _exit(check_failures ? 1 : 0);
  }
  if (waitpid(pid, &status, 0) != pid) return 0;
  if (WIFSIGNALED(status)) fprintf(stderr, "  the child died of signal %d\n", WTERMSIG(status));
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ------------------------------------------------------------------------ */
/* Random numbers */

/* The generator's state; a test may assign its own seed before use. */
static uint64_t rng_state __attribute__((unused)) = 0x9e3779b97f4a7c15ull;

/* The next 64 random bits (xorshift64*). */
static inline uint64_t rng(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1dull;
}

/* A random integer in [0, n). */
static inline int64_t rnd(int64_t n) { return (int64_t)(rng() % (uint64_t)n); }

/* ------------------------------------------------------------------------ */
/* Backends whose handles are malloc'd host memory */

/* copy_to_host: handle + off is host memory. */
static inline dlb_status malloc_to_host(void *ctx, int id, const void *h, size_t off, void *dst,
                                        size_t n) {
  memcpy(dst, (const char *)h + off, n);
  return DLB_OK;
}

/* copy_from_host: handle + off is host memory. */
static inline dlb_status malloc_from_host(void *ctx, int id, void *h, size_t off, const void *src,
                                          size_t n) {
  memcpy((char *)h + off, src, n);
  return DLB_OK;
}

/* export_pointer: the handle is the data pointer. */
static inline dlb_status malloc_export(void *ctx, int id, void *h, void **data) {
  *data = h;
  return DLB_OK;
}

/* The opaque backend: malloc'd memory, but no host_pointer (the seed's
 * non-PjRt case). Counts live allocations and release calls. */
static atomic_int opaque_live __attribute__((unused));     /* allocations not yet freed */
static atomic_int opaque_released __attribute__((unused)); /* release calls */

/* device_count: one device. */
static inline int opaque_count(void *ctx) { return 1; }

/* allocate: counted in opaque_live. */
static inline dlb_status opaque_allocate(void *ctx, int id, size_t n, int zeroed, void **h) {
  *h = zeroed ? calloc(1, n) : malloc(n);
  if (!*h) return DLB_E_OUT_OF_MEMORY;
  atomic_fetch_add(&opaque_live, 1);
  return DLB_OK;
}

/* deallocate: counted in opaque_live. */
static inline void opaque_deallocate(void *ctx, int id, void *h) {
  atomic_fetch_sub(&opaque_live, 1);
  free(h);
}

/* release: counted in opaque_released. */
static inline void opaque_release(void *ctx) { atomic_fetch_add(&opaque_released, 1); }

/* The opaque backend's vtable under name (no host_pointer, no export_pointer). */
static inline dlb_backend_ops opaque_ops(const char *name) {
  dlb_backend_ops ops;
  memset(&ops, 0, sizeof ops);
  ops.version = DLB_BACKEND_OPS_VERSION;
  ops.name = name;
  ops.device_type = kDLExtDev;
  ops.device_count = opaque_count;
  ops.allocate = opaque_allocate;
  ops.deallocate = opaque_deallocate;
  ops.copy_to_host = malloc_to_host;
  ops.copy_from_host = malloc_from_host;
  ops.release = opaque_release;
  return ops;
}

/* ------------------------------------------------------------------------ */
/* Producer tensors: either ABI, with room for their shape and strides */

#define PRODUCER_MAX_NDIM 40

typedef struct producer {
  union {
    DLManagedTensorVersioned v;
    DLManagedTensor l;
  } t; /* first: a deleter finds the producer from self */
  int versioned;
  int64_t shape[PRODUCER_MAX_NDIM];
  int64_t strides[PRODUCER_MAX_NDIM];
} producer;

/* A DLDataType. */
static inline DLDataType dt(uint8_t code, uint8_t bits, uint16_t lanes) {
  DLDataType t = {code, bits, lanes};
  return t;
}

/* Fills the zeroed producer p: version 1.3 (versioned), manager_ctx p, the
 * ABI's deleter, and the tensor. shape/strides are copied into p (strides
 * NULL: the tensor's strides are NULL; an ndim out of range keeps both NULL). */
static inline void producer_init(producer *p, int versioned,
                                 void (*delete_v)(DLManagedTensorVersioned *),
                                 void (*delete_l)(DLManagedTensor *), void *data,
                                 int32_t device_type, DLDataType dtype, int ndim,
                                 const int64_t *shape, const int64_t *strides,
                                 uint64_t byte_offset) {
  DLTensor *t;
  p->versioned = versioned;
  if (versioned) {
    p->t.v.version.major = 1;
    p->t.v.version.minor = 3;
    p->t.v.manager_ctx = p;
    p->t.v.deleter = delete_v;
    t = &p->t.v.dl_tensor;
  } else {
    p->t.l.manager_ctx = p;
    p->t.l.deleter = delete_l;
    t = &p->t.l.dl_tensor;
  }
  t->data = data;
  t->device.device_type = (DLDeviceType)device_type;
  t->device.device_id = 0;
  t->ndim = ndim;
  t->dtype = dtype;
  if (ndim > 0 && ndim <= PRODUCER_MAX_NDIM && shape) {
    memcpy(p->shape, shape, (size_t)ndim * sizeof *shape);
    t->shape = p->shape;
  }
  if (ndim > 0 && ndim <= PRODUCER_MAX_NDIM && strides) {
    memcpy(p->strides, strides, (size_t)ndim * sizeof *strides);
    t->strides = p->strides;
  }
  t->byte_offset = byte_offset;
}

/* ------------------------------------------------------------------------ */
/* Lua (C API tests) */

#ifdef LUA_VERSION_NUM

/* A new Lua state with the standard libraries, dlbridge preloaded and
 * required as the global dl; exits the test when that fails. */
static inline lua_State *new_state(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  dlb_preload(L);
  if (luaL_dostring(L, "dl = require 'dlbridge'") != LUA_OK) {
    fprintf(stderr, "cannot load dlbridge: %s\n", lua_tostring(L, -1));
    exit(2);
  }
  lua_settop(L, 0);
  return L;
}

/* Running Lua code and checking error objects (C API tests) */

/* Runs a chunk that returns one integer (booleans count as 0/1); -1 on a
 * Lua error (printed). The stack is left as it was. */
#define RUN(L, code) run((L), (code), __LINE__)
static inline long long run(lua_State *L, const char *code, int line) {
  int top = lua_gettop(L);
  long long v;
  if (luaL_dostring(L, code) != LUA_OK) {
    fprintf(stderr, "line %d: lua error: %s\n", line, luaL_tolstring(L, -1, NULL));
    lua_settop(L, top);
    return -1;
  }
  if (lua_isboolean(L, top + 1)) v = lua_toboolean(L, top + 1);
  else v = (long long)lua_tointeger(L, top + 1);
  lua_settop(L, top);
  return v;
}

/* Runs a chunk and leaves its single result on the stack (nil on error). */
#define PUSH(L, code) push((L), (code), __LINE__)
static inline void push(lua_State *L, const char *code, int line) {
  int top = lua_gettop(L);
  if (luaL_loadstring(L, code) != LUA_OK || lua_pcall(L, 0, 1, 0) != LUA_OK) {
    fprintf(stderr, "line %d: lua error: %s\n", line, luaL_tolstring(L, -1, NULL));
    lua_settop(L, top);
    lua_pushnil(L);
  }
}

/* String field k of the table at idx ("" when absent). The copy is static. */
static inline const char *field(lua_State *L, int idx, const char *k) {
  static char buf[512];
  idx = lua_absindex(L, idx);
  buf[0] = '\0';
  if (lua_type(L, idx) == LUA_TTABLE) {
    lua_getfield(L, idx, k);
    if (lua_type(L, -1) == LUA_TSTRING) snprintf(buf, sizeof buf, "%s", lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  return buf;
}

/* The value at the top is a dlbridge.Error with this code and op; pops it. */
#define CHECK_ERROR_TOP(L, top0, code, op) check_error_top((L), (top0), (code), (op), __LINE__)
static inline void check_error_top(lua_State *L, int top0, const char *code, const char *op,
                                   int line) {
  int before = check_failures;
  CHECK_EQ_INT(lua_gettop(L), top0 + 1);
  CHECK_EQ_INT(lua_type(L, -1), LUA_TTABLE);
  CHECK_EQ_STR(field(L, -1, "code"), code);
  CHECK_EQ_STR(field(L, -1, "op"), op);
  CHECK(field(L, -1, "message")[0] != '\0');
  /* the Lua side recognises it */
  lua_getglobal(L, "dl");
  lua_getfield(L, -1, "is_error");
  lua_pushvalue(L, -3);
  lua_call(L, 1, 1);
  CHECK(lua_toboolean(L, -1));
  lua_pop(L, 2);
  if (check_failures != before) fprintf(stderr, "  (error object checked at line %d)\n", line);
  lua_settop(L, top0);
}

#endif /* LUA_VERSION_NUM */

/* ------------------------------------------------------------------------ */
/* Scalars (core tests) */

#ifdef DLB_CORE_DTYPE_H

/* A bool scalar. */
static inline dlb_scalar s_bool(int b) { return (dlb_scalar){.kind = DLB_SCALAR_BOOL, .v.b = b}; }
/* An int scalar. */
static inline dlb_scalar s_int(int64_t i) { return (dlb_scalar){.kind = DLB_SCALAR_INT, .v.i = i}; }
/* A uint scalar. */
static inline dlb_scalar s_uint(uint64_t u) {
  return (dlb_scalar){.kind = DLB_SCALAR_UINT, .v.u = u};
}
/* A float scalar. */
static inline dlb_scalar s_float(double f) {
  return (dlb_scalar){.kind = DLB_SCALAR_FLOAT, .v.f = f};
}
/* A complex scalar. */
static inline dlb_scalar s_complex(double re, double im) {
  return (dlb_scalar){.kind = DLB_SCALAR_COMPLEX, .v.c = {re, im}};
}

/* s as an integer (floats truncated, complex: the real part). */
static inline int64_t scalar_int(const dlb_scalar *s) {
  switch (s->kind) {
    case DLB_SCALAR_BOOL: return s->v.b;
    case DLB_SCALAR_INT: return s->v.i;
    case DLB_SCALAR_UINT: return (int64_t)s->v.u;
    case DLB_SCALAR_FLOAT: return (int64_t)s->v.f;
    default: return (int64_t)s->v.c.re;
  }
}

#endif /* DLB_CORE_DTYPE_H */

/* ------------------------------------------------------------------------ */
/* The cpu backend and arrays on it (core tests that define FIXTURES_CPU) */

#ifdef FIXTURES_CPU

static dlb_backend *cpu;
static dlb_error err;
/* The shape of a 0-D array (the core memcpy's shapes, so never NULL). */
static const int64_t no_dims[1] = {0};

/* Creates the cpu backend in cpu; 0 (said on stderr) when it cannot. */
static inline int cpu_open(void) {
  dlb_error e;
  if (dlb_cpu_backend_create(&cpu, &e) == DLB_OK) return 1;
  fprintf(stderr, "cannot create the cpu backend: %s\n", e.message);
  return 0;
}

/* Checks that every buffer on cpu was freed, then releases it. */
static inline void cpu_close(void) {
  CHECK_EQ_INT(atomic_load(&cpu->refs), 1);
  dlb_backend_release(cpu);
}

/* cpu_open with a budget of its own in *budget (the limits, interrupt and
 * work the test sets); 0 when either cannot be made. */
static inline int cpu_open_budgeted(dlb_budget **budget) {
  if (!cpu_open()) return 0;
  *budget = dlb_budget_new();
  CHECK(*budget != NULL);
  if (!*budget) return 0;
  dlb_backend_set_budget(cpu, *budget);
  return 1;
}

/* cpu_close, then the budget's release. */
static inline void cpu_close_budgeted(dlb_budget *budget) {
  cpu_close();
  dlb_budget_release(budget);
}

/* A new array on cpu (contents unset). */
static inline dlb_array alloc(dlb_dtype dtype, int ndim, const int64_t *shape) {
  dlb_array a;
  memset(&a, 0, sizeof a);
  CHECK_EQ_INT(dlb_array_allocate(&a, cpu, 0, dtype, ndim, ndim ? shape : no_dims, 1, &err),
               DLB_OK);
  return a;
}

/* An int32 array of the given shape holding 0, 1, 2, ... row-major. */
static inline dlb_array iota(int ndim, const int64_t *shape) {
  dlb_array a = alloc(DLB_INT32, ndim, shape);
  int32_t *p = (int32_t *)dlb_array_host_data(&a);
  for (int64_t k = 0; k < a.numel; k++) p[k] = (int32_t)k;
  return a;
}

/* A second reference to a's buffer with a's geometry. */
static inline dlb_array view_of(const dlb_array *a) {
  dlb_array v;
  dlb_array_share(&v, a);
  return v;
}

#endif /* FIXTURES_CPU */

#endif
