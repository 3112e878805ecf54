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
 */
#include <lauxlib.h>
#include <lua.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "dlbridge.h"

#define MAX_BLOCKS 4096

typedef struct engine {
  pthread_mutex_t lock; /* deallocate may run on another thread */
  char name[32];
  int devices;
  void *blocks[MAX_BLOCKS]; /* handle k+1 is blocks[k]; NULL: free slot */
  long calls, allocations, live, to_host, from_host, within;
  long fail_at;             /* the call number that fails; 0: none */
  dlb_status fail_code;
  int64_t fail_status, last_status;
  struct engine *next;      /* every engine ever registered, for tb.stats */
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

static dlb_status engine_allocate(void *ctx, int device_id, size_t nbytes, int zeroed, void **handle) {
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
  for (e = engines; e && strcmp(e->name, name) != 0; e = e->next) {}
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

int luaopen_testbackend(lua_State *L);
__attribute__((visibility("default"))) int luaopen_testbackend(lua_State *L) {
  static const luaL_Reg fns[] = {{"register", tb_register},
                                 {"fail_at", tb_fail_at},
                                 {"stats", tb_stats},
                                 {"set_devices", tb_set_devices},
                                 {"set_memory_limit", tb_set_memory_limit},
                                 {"allow_mapping", tb_allow_mapping},
                                 {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
