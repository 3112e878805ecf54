/* testbackend.c -- a Lua module for the specs: registers backends whose
 * memory sits behind integer handles (as a renderer's resources do), with
 * optional hooks, call counters, and a failure injected at the Nth call.
 *
 *   local tb = require "testbackend"
 *   tb.register{name = "engine", devices = 2, exportable = false,
 *               host_pointer = false, copy_within = true}
 *   tb.fail_at("engine", 3, "BACKEND_FAILURE", 700)  -- the 3rd call fails
 *   tb.stats("engine") -> {calls =, live =, allocations =, ...}
 *   tb.set_memory_limit(64 * 2^20)  -- dlb_set_memory_limit, as a host would
 *
 * and backends that behave like a device (tests/device/queued.h):
 *   tb.register_queued{name = "gpu", devices = 2, max_delay_us = 50, seed = 1,
 *                      device_type = 12, omit = "matmul,cast"}
 *   tb.queued_stats(name) -> {copy_strided =, elementwise =, ran_on_worker =, ...}
 *   tb.pause(name, device, true|false)     -- hold a device queue (nothing runs)
 *   tb.device_queue(name, device)          -- dlbridge's queue there, as an integer
 *   tb.consumer(name, device) -> stream    -- a consumer's queue (stream value > 2)
 *   tb.read_later(name, capsule, stream) -> ticket  -- the consumer reads the
 *       tensor's bytes on its queue, when it gets there
 *   tb.pending(name, stream) -> n          -- operations the queue has not run
 *   tb.collect(name, ticket) -> bytes      -- waits for the read; frees the tensor
 *   tb.foreign(name, device, values, first) -> array  -- dlb_push_external of
 *       "foreign" device memory holding float64 values (elements first.. of it)
 *   tb.foreign_capsule(name, device, values) -> capsule  -- the same, as a
 *       producer's capsule (for a __dlpack method)
 */
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE (lua_module_pin.h) */
#include <lauxlib.h>
#include <lua.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backends/cpu/cpu.h"
#include "dlbridge.h"
#include "queued.h"
#include "../lua_module_pin.h"

#define MAX_BLOCKS 4096

typedef struct engine {
  pthread_mutex_t lock; /* deallocate may run on another thread */
  char name[32];
  int devices;
  void *blocks[MAX_BLOCKS]; /* handle k+1 is blocks[k]; NULL: free slot */
  long calls, allocations, live, to_host, from_host, within;
  long fail_at; /* the call number that fails; 0: none */
  dlb_status fail_code;
  int64_t fail_status, last_status;
  struct engine *next; /* every engine ever registered, for tb.stats */
} engine;

static engine *engines;
static pthread_mutex_t engines_lock = PTHREAD_MUTEX_INITIALIZER;

/* Counts a call; returns the injected failure when this is the chosen one. */
static dlb_status count_call(engine *e) {
  dlb_status st = DLB_OK;
  pthread_mutex_lock(&e->lock);
  if (++e->calls == e->fail_at) {
    st = e->fail_code;
    e->last_status = e->fail_status;
  }
  pthread_mutex_unlock(&e->lock);
  return st;
}

static void *block_of(engine *e, const void *handle) {
  uintptr_t k = (uintptr_t)handle;
  void *p;
  pthread_mutex_lock(&e->lock);
  p = k >= 1 && k <= MAX_BLOCKS ? e->blocks[k - 1] : NULL;
  pthread_mutex_unlock(&e->lock);
  return p;
}

static int engine_device_count(void *ctx) { return ((engine *)ctx)->devices; }

static dlb_status engine_allocate(void *ctx, int device_id, size_t nbytes, int zeroed,
                                  void **handle) {
  engine *e = ctx;
  dlb_status st = count_call(e);
  void *p;
  if (st != DLB_OK) return st;
  p = zeroed ? calloc(1, nbytes) : malloc(nbytes);
  if (!p) return DLB_E_OUT_OF_MEMORY;
  pthread_mutex_lock(&e->lock);
  for (int k = 0; k < MAX_BLOCKS; k++)
    if (!e->blocks[k]) {
      e->blocks[k] = p;
      e->allocations++;
      e->live++;
      *handle = (void *)(uintptr_t)(k + 1);
      pthread_mutex_unlock(&e->lock);
      return DLB_OK;
    }
  pthread_mutex_unlock(&e->lock);
  free(p);
  return DLB_E_OUT_OF_MEMORY;
}

static void engine_deallocate(void *ctx, int device_id, void *handle) {
  engine *e = ctx;
  uintptr_t k = (uintptr_t)handle;
  pthread_mutex_lock(&e->lock);
  free(e->blocks[k - 1]);
  e->blocks[k - 1] = NULL;
  e->live--;
  pthread_mutex_unlock(&e->lock);
}

static dlb_status engine_to_host(void *ctx, int device_id, const void *handle, size_t offset,
                                 void *dst, size_t nbytes) {
  engine *e = ctx;
  dlb_status st = count_call(e);
  if (st != DLB_OK) return st;
  memcpy(dst, (char *)block_of(e, handle) + offset, nbytes);
  e->to_host++;
  return DLB_OK;
}

static dlb_status engine_from_host(void *ctx, int device_id, void *handle, size_t offset,
                                   const void *src, size_t nbytes) {
  engine *e = ctx;
  dlb_status st = count_call(e);
  if (st != DLB_OK) return st;
  memcpy((char *)block_of(e, handle) + offset, src, nbytes);
  e->from_host++;
  return DLB_OK;
}

static dlb_status engine_within(void *ctx, int dst_device, void *dst, size_t dst_offset,
                                int src_device, const void *src, size_t src_offset, size_t nbytes) {
  engine *e = ctx;
  dlb_status st = count_call(e);
  if (st != DLB_OK) return st;
  memmove((char *)block_of(e, dst) + dst_offset, (char *)block_of(e, src) + src_offset, nbytes);
  e->within++;
  return DLB_OK;
}

static dlb_status engine_export(void *ctx, int device_id, void *handle, void **data) {
  engine *e = ctx;
  dlb_status st = count_call(e);
  if (st != DLB_OK) return st;
  *data = block_of(e, handle);
  return DLB_OK;
}

static void *engine_host_pointer(void *ctx, int device_id, void *handle) {
  return block_of(ctx, handle);
}

static int64_t engine_last_status(void *ctx) { return ((engine *)ctx)->last_status; }

/* The last reference is gone (after lua_close and the last buffer): unlist
 * and free the engine. */
static void engine_release(void *ctx) {
  engine *e = ctx;
  pthread_mutex_lock(&engines_lock);
  for (engine **p = &engines; *p; p = &(*p)->next)
    if (*p == e) {
      *p = e->next;
      break;
    }
  pthread_mutex_unlock(&engines_lock);
  pthread_mutex_destroy(&e->lock);
  free(e);
}

static engine *find(lua_State *L, int idx) {
  const char *name = luaL_checkstring(L, idx);
  engine *e;
  pthread_mutex_lock(&engines_lock);
  for (e = engines; e && strcmp(e->name, name) != 0; e = e->next) {
  }
  pthread_mutex_unlock(&engines_lock);
  if (!e) luaL_error(L, "testbackend: no engine named '%s'", name);
  return e;
}

static int field_bool(lua_State *L, const char *k, int def) {
  int v = lua_getfield(L, 1, k) == LUA_TNIL ? def : lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* tb.register{name=, devices=1, exportable=false, host_pointer=false, copy_within=false, device_type=12} */
static int tb_register(lua_State *L) {
  dlb_backend_ops ops;
  engine *e = calloc(1, sizeof *e);
  luaL_checktype(L, 1, LUA_TTABLE);
  if (!e) return luaL_error(L, "out of memory");
  pthread_mutex_init(&e->lock, NULL);
  lua_getfield(L, 1, "name");
  strncpy(e->name, luaL_optstring(L, -1, "engine"), sizeof e->name - 1);
  lua_getfield(L, 1, "devices");
  e->devices = (int)luaL_optinteger(L, -1, 1);
  lua_getfield(L, 1, "device_type");
  memset(&ops, 0, sizeof ops);
  ops.device_type = (int32_t)luaL_optinteger(L, -1, kDLExtDev);
  lua_pop(L, 3);
  ops.version = DLB_BACKEND_OPS_VERSION;
  ops.name = e->name;
  ops.device_count = engine_device_count;
  ops.allocate = engine_allocate;
  ops.deallocate = engine_deallocate;
  ops.copy_to_host = engine_to_host;
  ops.copy_from_host = engine_from_host;
  ops.copy_within = field_bool(L, "copy_within", 0) ? engine_within : NULL;
  ops.export_pointer = field_bool(L, "exportable", 0) ? engine_export : NULL;
  ops.host_pointer = field_bool(L, "host_pointer", 0) ? engine_host_pointer : NULL;
  ops.last_status = engine_last_status;
  ops.release = engine_release;
  if (dlb_register_backend(L, &ops, e) != DLB_OK) {
    free(e);
    return lua_error(L);
  }
  pthread_mutex_lock(&engines_lock);
  e->next = engines;
  engines = e;
  pthread_mutex_unlock(&engines_lock);
  return 0;
}

/* tb.fail_at(name, n, code, status): the nth call from now fails; n nil clears. */
static int tb_fail_at(lua_State *L) {
  engine *e = find(L, 1);
  const char *code = luaL_optstring(L, 3, "BACKEND_FAILURE");
  pthread_mutex_lock(&e->lock);
  e->fail_at = lua_isnoneornil(L, 2) ? 0 : e->calls + (long)luaL_checkinteger(L, 2);
  e->fail_code = strcmp(code, "OUT_OF_MEMORY") == 0 ? DLB_E_OUT_OF_MEMORY : DLB_E_BACKEND_FAILURE;
  e->fail_status = (int64_t)luaL_optinteger(L, 4, 700);
  pthread_mutex_unlock(&e->lock);
  return 0;
}

/* tb.stats(name) -> {calls, allocations, live, to_host, from_host, within} */
static int tb_stats(lua_State *L) {
  engine *e = find(L, 1);
  lua_createtable(L, 0, 6);
  pthread_mutex_lock(&e->lock);
  lua_pushinteger(L, e->calls);
  lua_setfield(L, -2, "calls");
  lua_pushinteger(L, e->allocations);
  lua_setfield(L, -2, "allocations");
  lua_pushinteger(L, e->live);
  lua_setfield(L, -2, "live");
  lua_pushinteger(L, e->to_host);
  lua_setfield(L, -2, "to_host");
  lua_pushinteger(L, e->from_host);
  lua_setfield(L, -2, "from_host");
  lua_pushinteger(L, e->within);
  lua_setfield(L, -2, "within");
  pthread_mutex_unlock(&e->lock);
  return 1;
}

/* tb.set_devices(name, n): devices the engine reports from now on. */
static int tb_set_devices(lua_State *L) {
  engine *e = find(L, 1);
  e->devices = (int)luaL_checkinteger(L, 2);
  return 0;
}

/* tb.set_memory_limit(bytes): what a host does with dlb_set_memory_limit. */
static int tb_set_memory_limit(lua_State *L) {
  lua_Integer bytes = luaL_checkinteger(L, 1);
  if (dlb_set_memory_limit(L, bytes < 0 ? 0 : (size_t)bytes) != DLB_OK) return lua_error(L);
  return 0;
}

/* tb.allow_mapping(on): what a host does with dlb_allow_mapping. */
static int tb_allow_mapping(lua_State *L) {
  if (dlb_allow_mapping(L, lua_toboolean(L, 1)) != DLB_OK) return lua_error(L);
  return 0;
}

/* ---- queued backends ------------------------------------------------------------ */

typedef struct queued_entry {
  char name[32];
  dlb_queued *q; /* the registration's reference */
  void (*release)(void *ctx);
  struct queued_entry *next;
} queued_entry;

static queued_entry *queued_list;

/* The backend's last reference is gone (after lua_close): unlist, then the
 * queued backend's own release (joins its threads, frees it). */
static void queued_release(void *ctx) {
  queued_entry *e = NULL;
  pthread_mutex_lock(&engines_lock);
  for (queued_entry **p = &queued_list; *p; p = &(*p)->next)
    if ((*p)->q == ctx) {
      e = *p;
      *p = e->next;
      break;
    }
  pthread_mutex_unlock(&engines_lock);
  if (e) {
    e->release(ctx);
    free(e);
  }
}

static dlb_queued *find_queued(lua_State *L, int idx) {
  const char *name = luaL_checkstring(L, idx);
  queued_entry *e;
  pthread_mutex_lock(&engines_lock);
  for (e = queued_list; e && strcmp(e->name, name) != 0; e = e->next) {
  }
  pthread_mutex_unlock(&engines_lock);
  if (!e) luaL_error(L, "testbackend: no queued backend named '%s'", name);
  return e->q;
}

static unsigned parse_omit(const char *s) {
  static const struct {
    const char *word;
    unsigned bit;
  } words[] = {{"copy_strided", DLB_QUEUED_NO_COPY_STRIDED},
               {"elementwise", DLB_QUEUED_NO_ELEMENTWISE},
               {"reduce", DLB_QUEUED_NO_REDUCE},
               {"matmul", DLB_QUEUED_NO_MATMUL},
               {"cast", DLB_QUEUED_NO_CAST},
               {"fill", DLB_QUEUED_NO_FILL},
               {"adopt", DLB_QUEUED_NO_ADOPT},
               {"export", DLB_QUEUED_NO_EXPORT}};
  unsigned bits = 0;
  for (size_t k = 0; s && k < sizeof words / sizeof words[0]; k++)
    if (strstr(s, words[k].word)) bits |= words[k].bit;
  return bits;
}

/* tb.register_queued{name=, devices=1, max_delay_us=20, seed=1, device_type=12, omit=""} */
static int tb_register_queued(lua_State *L) {
  dlb_queued_config c;
  dlb_backend_ops ops;
  queued_entry *e = calloc(1, sizeof *e);
  luaL_checktype(L, 1, LUA_TTABLE);
  if (!e) return luaL_error(L, "out of memory");
  memset(&c, 0, sizeof c);
  lua_getfield(L, 1, "name");
  snprintf(e->name, sizeof e->name, "%s", luaL_optstring(L, -1, "queued"));
  lua_getfield(L, 1, "devices");
  c.devices = (int)luaL_optinteger(L, -1, 1);
  lua_getfield(L, 1, "max_delay_us");
  c.max_delay_us = (unsigned)luaL_optinteger(L, -1, 20);
  lua_getfield(L, 1, "seed");
  c.seed = (uint64_t)luaL_optinteger(L, -1, 1);
  lua_getfield(L, 1, "device_type");
  c.device_type = (int32_t)luaL_optinteger(L, -1, kDLExtDev);
  lua_getfield(L, 1, "omit");
  c.omit = parse_omit(luaL_optstring(L, -1, ""));
  lua_pop(L, 6);
  c.name = e->name;
  c.host = dlb_host_kernels();
  if (!(e->q = dlb_queued_new(&c))) {
    free(e);
    return luaL_error(L, "out of memory");
  }
  dlb_queued_ops(e->q, &ops);
  e->release = ops.release;
  ops.release = queued_release;
  pthread_mutex_lock(&engines_lock); /* listed first: release may run at any time after */
  e->next = queued_list;
  queued_list = e;
  pthread_mutex_unlock(&engines_lock);
  if (dlb_register_backend(L, &ops, e->q) != DLB_OK) {
    pthread_mutex_lock(&engines_lock);
    queued_list = e->next;
    pthread_mutex_unlock(&engines_lock);
    dlb_queued_unref(e->q);
    free(e);
    return lua_error(L);
  }
  return 0;
}

static int tb_queued_stats(lua_State *L) {
  dlb_queued_stats s;
  dlb_queued_stats_get(find_queued(L, 1), &s);
  lua_createtable(L, 0, 40);
#define F(f)                                                                                       \
  lua_pushinteger(L, s.f);                                                                         \
  lua_setfield(L, -2, #f)
  F(allocate);
  F(deallocate);
  F(freed);
  F(live);
  F(to_host);
  F(from_host);
  F(within);
  F(export_pointer);
  F(copy_strided);
  F(strided_host);
  F(strided_queued);
  F(queue);
  F(event_record);
  F(event_wait);
  F(event_synchronize);
  F(event_release);
  F(stream_wait);
  F(adopt);
  F(adopt_refused);
  F(forget);
  F(elementwise);
  F(reduce);
  F(matmul);
  F(cast);
  F(fill);
  F(ran_on_worker);
  F(ops_run);
  F(waits_run);
  F(poisoned);
  F(host_blocks);
  F(kernel_failures);
  F(violations);
  F(races);
  F(events_live);
#undef F
  return 1;
}

static int tb_pause(lua_State *L) {
  dlb_queued *q = find_queued(L, 1);
  dlb_queued_pause(q, dlb_queued_device_queue(q, (int)luaL_checkinteger(L, 2)),
                   lua_toboolean(L, 3));
  return 0;
}

static int tb_device_queue(lua_State *L) {
  dlb_queued *q = find_queued(L, 1);
  lua_pushinteger(L,
                  (lua_Integer)(intptr_t)dlb_queued_device_queue(q, (int)luaL_checkinteger(L, 2)));
  return 1;
}

static int tb_consumer(lua_State *L) {
  lua_pushinteger(
      L, (lua_Integer)dlb_queued_consumer(find_queued(L, 1), (int)luaL_checkinteger(L, 2)));
  return 1;
}

static void *stream_queue_arg(lua_State *L, dlb_queued *q, int idx) {
  void *w = dlb_queued_stream_queue(q, 0, luaL_checkinteger(L, idx));
  for (int d = 1; !w && d < DLB_QUEUED_MAX_DEVICES; d++)
    w = dlb_queued_stream_queue(q, d, lua_tointeger(L, idx));
  if (!w) luaL_error(L, "testbackend: %d is no consumer stream", (int)lua_tointeger(L, idx));
  return w;
}

/* A consumer's read in flight: the tensor (held until collected) and the bytes. */
typedef struct ticket {
  dlb_queued *q;
  void *queue;
  void *tensor;
  int versioned;
  size_t nbytes;
  char *bytes;
} ticket;

static size_t tensor_bytes(const DLTensor *t) {
  size_t n = ((size_t)t->dtype.bits * t->dtype.lanes + 7) / 8;
  for (int d = 0; d < t->ndim; d++) n *= (size_t)t->shape[d];
  return n;
}

/* tb.read_later(name, capsule, stream): a contiguous tensor's bytes, read on the consumer's queue. */
static int tb_read_later(lua_State *L) {
  dlb_queued *q = find_queued(L, 1);
  void *w = stream_queue_arg(L, q, 3);
  ticket *t = lua_newuserdatauv(L, sizeof *t, 0);
  const DLTensor *dl;
  memset(t, 0, sizeof *t);
  if (dlb_capsule_take(L, 2, &t->tensor, &t->versioned) != DLB_OK) return lua_error(L);
  dl = t->versioned ? &((DLManagedTensorVersioned *)t->tensor)->dl_tensor
                    : &((DLManagedTensor *)t->tensor)->dl_tensor;
  t->q = q;
  t->queue = w;
  t->nbytes = tensor_bytes(dl);
  if (!(t->bytes = malloc(t->nbytes ? t->nbytes : 1))) return luaL_error(L, "out of memory");
  memset(t->bytes, 0, t->nbytes);
  if (t->nbytes && dlb_queued_consumer_read(q, w, (const char *)dl->data + dl->byte_offset,
                                            t->nbytes, t->bytes) != 0)
    return luaL_error(L, "testbackend: the tensor's bytes are not device memory");
  return 1;
}

static int tb_pending(lua_State *L) {
  dlb_queued *q = find_queued(L, 1);
  lua_pushinteger(L, dlb_queued_pending(q, stream_queue_arg(L, q, 2)));
  return 1;
}

static int tb_collect(lua_State *L) {
  ticket *t = lua_touserdata(L, 2);
  luaL_checktype(L, 2, LUA_TUSERDATA);
  if (!t->bytes) return luaL_error(L, "testbackend: collected already");
  dlb_queued_sync(t->q, t->queue);
  lua_pushlstring(L, t->bytes, t->nbytes);
  free(t->bytes);
  t->bytes = NULL;
  if (t->versioned) {
    DLManagedTensorVersioned *v = t->tensor;
    if (v->deleter) v->deleter(v);
  } else {
    DLManagedTensor *l = t->tensor;
    if (l->deleter) l->deleter(l);
  }
  return 1;
}

/* n float64 values from the table at idx into foreign memory of dev: its address. */
static double *foreign_values(lua_State *L, dlb_queued *q, int dev, int idx, int64_t *n) {
  double *p;
  luaL_checktype(L, idx, LUA_TTABLE);
  *n = (int64_t)lua_rawlen(L, idx);
  if (!(p = dlb_queued_foreign(q, dev, (size_t)(*n ? *n : 1) * sizeof(double))))
    luaL_error(L, "out of memory");
  for (int64_t k = 0; k < *n; k++) {
    double v;
    lua_rawgeti(L, idx, k + 1);
    v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    dlb_queued_poke(q, p + k, &v, sizeof v);
  }
  return p;
}

/* tb.foreign(name, device, values, first): dlb_push_external of elements first.. (1-based). */
static int tb_foreign(lua_State *L) {
  dlb_queued *q = find_queued(L, 1);
  int dev = (int)luaL_checkinteger(L, 2);
  int64_t n, first = luaL_optinteger(L, 4, 1) - 1;
  double *p = foreign_values(L, q, dev, 3, &n);
  int64_t count = n - first;
  DLDataType f64 = {kDLFloat, 64, 1};
  DLDevice where = {(DLDeviceType)luaL_optinteger(L, 5, kDLExtDev), dev};
  if (first < 0 || count < 0) return luaL_error(L, "testbackend: first out of range");
  if (dlb_push_external(L, p + first, f64, 1, &count, NULL, where, 0, NULL, NULL) != DLB_OK)
    return lua_error(L);
  return 1;
}

typedef struct foreign_tensor {
  DLManagedTensorVersioned t;
  int64_t shape[1];
} foreign_tensor;

static void foreign_delete(DLManagedTensorVersioned *self) { free(self->manager_ctx); }

/* tb.foreign_capsule(name, device, values): a producer's capsule over foreign memory. */
static int tb_foreign_capsule(lua_State *L) {
  dlb_queued *q = find_queued(L, 1);
  int dev = (int)luaL_checkinteger(L, 2);
  int64_t n;
  double *p = foreign_values(L, q, dev, 3, &n);
  foreign_tensor *f = calloc(1, sizeof *f);
  if (!f) return luaL_error(L, "out of memory");
  f->shape[0] = n;
  f->t.version.major = 1;
  f->t.version.minor = 3;
  f->t.manager_ctx = f;
  f->t.deleter = foreign_delete;
  f->t.dl_tensor.data = p;
  f->t.dl_tensor.device.device_type = (DLDeviceType)luaL_optinteger(L, 4, kDLExtDev);
  f->t.dl_tensor.device.device_id = dev;
  f->t.dl_tensor.ndim = 1;
  f->t.dl_tensor.dtype = (DLDataType){kDLFloat, 64, 1};
  f->t.dl_tensor.shape = f->shape;
  if (dlb_push_capsule_versioned(L, &f->t) != DLB_OK) return lua_error(L);
  return 1;
}

int luaopen_testbackend(lua_State *L);
static const char module_anchor = 0; /* (lua_module_pin) */

__attribute__((visibility("default"))) int luaopen_testbackend(lua_State *L) {
  lua_module_pin(&module_anchor); /* Lua 5.1 and LuaJIT would unload it first */
  static const luaL_Reg fns[] = {{"register", tb_register},
                                 {"fail_at", tb_fail_at},
                                 {"stats", tb_stats},
                                 {"set_devices", tb_set_devices},
                                 {"set_memory_limit", tb_set_memory_limit},
                                 {"allow_mapping", tb_allow_mapping},
                                 {"register_queued", tb_register_queued},
                                 {"queued_stats", tb_queued_stats},
                                 {"pause", tb_pause},
                                 {"device_queue", tb_device_queue},
                                 {"consumer", tb_consumer},
                                 {"read_later", tb_read_later},
                                 {"pending", tb_pending},
                                 {"collect", tb_collect},
                                 {"foreign", tb_foreign},
                                 {"foreign_capsule", tb_foreign_capsule},
                                 {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
