/* capi_exchange.c -- the DLPack exchange of the C API (dlbridge.h) with a
 * real lua_State: exporting Lua arrays, pushing producer tensors and
 * capsules, taking capsules, raising from a host function, and the
 * lifetime rules: exported memory outlives a:delete() and lua_close, an
 * unconsumed capsule calls its deleter once at lua_close, and deleters run
 * on another thread while the state works (or is already closed). */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dlbridge.h"
#include "fixtures.h"

/* ------------------------------------------------------------------------ */
/* Producers (fixtures.h): malloc'd tensors, a counting deleter that frees
 * them. */

static atomic_int deleted;

static void delete_v(DLManagedTensorVersioned *self) {
  atomic_fetch_add(&deleted, 1);
  free(self);
}

static void delete_l(DLManagedTensor *self) {
  atomic_fetch_add(&deleted, 1);
  free(self);
}

/* Counts but frees nothing (for the one path that reads after deleting). */
static void delete_v_static(DLManagedTensorVersioned *self) {
  (void)self;
  atomic_fetch_add(&deleted, 1);
}

/* A 2x2 int32 producer tensor over data, row-major with explicit strides. */
static producer *make_producer(int versioned, int32_t *data, int32_t device_type) {
  static const int64_t shape[2] = {2, 2}, strides[2] = {2, 1};
  producer *p = calloc(1, sizeof *p);
  producer_init(p, versioned, delete_v, delete_l, data, device_type, dt(kDLInt, 32, 1), 2, shape,
                strides, 0);
  return p;
}

/* ------------------------------------------------------------------------ */
/* Export */

static void test_export(void) {
  lua_State *L = new_state();
  dlb_export_options o;
  DLManagedTensorVersioned *v = NULL;
  DLManagedTensor *l = NULL;
  int top;
  PUSH(L, "return dl.array({{1, 2, 3}, {4, 5, 6}}, {dtype = 'int32'})");
  top = lua_gettop(L);
  CHECK_EQ_INT(top, 1);
  /* Versioned, defaults. */
  CHECK_EQ_INT(dlb_export_versioned(L, 1, NULL, &v), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), top);
  if (v) {
    DLTensor *t = &v->dl_tensor;
    CHECK_EQ_INT(v->version.major, 1);
    CHECK_EQ_INT(v->version.minor, 3);
    CHECK_EQ_INT(v->flags, 0);
    CHECK(v->deleter != NULL);
    CHECK_EQ_INT(t->device.device_type, kDLCPU);
    CHECK_EQ_INT(t->device.device_id, 0);
    CHECK_EQ_INT(t->ndim, 2);
    CHECK_EQ_INT(t->dtype.code, kDLInt);
    CHECK_EQ_INT(t->dtype.bits, 32);
    CHECK_EQ_INT(t->dtype.lanes, 1);
    CHECK_EQ_INT(t->shape[0], 2);
    CHECK_EQ_INT(t->shape[1], 3);
    CHECK(t->strides != NULL);
    CHECK_EQ_INT(t->strides[0], 3);
    CHECK_EQ_INT(t->strides[1], 1);
    CHECK_EQ_INT(((int32_t *)((char *)t->data + t->byte_offset))[4], 5);
    /* zero copy: a write from Lua shows in the tensor */
    lua_pushvalue(L, 1);
    lua_setglobal(L, "a");
    CHECK_EQ_INT(RUN(L, "a:set(2, 3, 60) return 1"), 1);
    CHECK_EQ_INT(((int32_t *)t->data)[5], 60);
    v->deleter(v);
    v = NULL;
  }
  /* Negative index, legacy: the DLTensor is first (cutlass #3359). */
  CHECK_EQ_INT(dlb_export_legacy(L, -1, NULL, &l), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), top);
  if (l) {
    CHECK(*(void **)l == l->dl_tensor.data);
    CHECK_EQ_INT(l->dl_tensor.ndim, 2);
    CHECK_EQ_INT(l->dl_tensor.strides[0], 3);
    CHECK_EQ_INT(((int32_t *)l->dl_tensor.data)[0], 1);
    CHECK(l->deleter != NULL);
    l->deleter(l);
    l = NULL;
  }
  /* Options: copy = true gives IS_COPIED and a separate buffer. */
  dlb_export_options_init(&o);
  CHECK_EQ_INT(o.max_version_major, -1);
  CHECK_EQ_INT(o.copy, -1);
  CHECK_EQ_INT(o.has_dl_device, 0);
  CHECK_EQ_INT(o.fallback_cpu, 0);
  o.copy = 1;
  CHECK_EQ_INT(dlb_export_versioned(L, 1, &o, &v), DLB_OK);
  if (v) {
    CHECK_EQ_INT(v->flags, DLPACK_FLAG_BITMASK_IS_COPIED);
    ((int32_t *)v->dl_tensor.data)[0] = 100;
    CHECK_EQ_INT(RUN(L, "return a:get(1, 1)"), 1);
    CHECK_EQ_INT(((int32_t *)v->dl_tensor.data)[5], 60);
    v->deleter(v);
    v = NULL;
  }
  /* max_version in the options does not override the function's ABI. */
  dlb_export_options_init(&o);
  o.max_version_major = 0;
  CHECK_EQ_INT(dlb_export_versioned(L, 1, &o, &v), DLB_OK);
  if (v) {
    CHECK_EQ_INT(v->version.major, 1);
    v->deleter(v);
    v = NULL;
  }
  /* copy = false with another dl_device: COPY_REQUIRED. */
  dlb_export_options_init(&o);
  o.copy = 0;
  o.has_dl_device = 1;
  o.dl_device.device_type = kDLCUDA;
  top = lua_gettop(L);
  CHECK_EQ_INT(dlb_export_versioned(L, 1, &o, &v), DLB_E_COPY_REQUIRED);
  CHECK_ERROR_TOP(L, top, "COPY_REQUIRED", "dlb_export_versioned");
  /* stream on a cpu array: ARGUMENT. */
  dlb_export_options_init(&o);
  o.has_stream = 1;
  o.stream = 1;
  CHECK_EQ_INT(dlb_export_versioned(L, 1, &o, &v), DLB_E_ARGUMENT);
  CHECK_ERROR_TOP(L, top, "ARGUMENT", "dlb_export_versioned");
  /* A transposed view keeps its strides (never normalised). */
  PUSH(L, "return a:transpose(1, 2)");
  CHECK_EQ_INT(dlb_export_versioned(L, -1, NULL, &v), DLB_OK);
  if (v) {
    CHECK_EQ_INT(v->dl_tensor.strides[0], 1);
    CHECK_EQ_INT(v->dl_tensor.strides[1], 3);
    v->deleter(v);
    v = NULL;
  }
  lua_settop(L, top);
  /* Read-only (an expanded view): versioned carries READ_ONLY; legacy has no
   * such flag, so copy = -1 (if needed) copies and copy = 0 cannot. */
  PUSH(L, "ro = dl.zeros({3}, {dtype = 'int32'}):expand{2, 3} return ro");
  CHECK_EQ_INT(RUN(L, "return ro.readonly"), 1);
  top = lua_gettop(L);
  CHECK_EQ_INT(dlb_export_versioned(L, -1, NULL, &v), DLB_OK);
  if (v) {
    CHECK_EQ_INT(v->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
    CHECK_EQ_INT(v->dl_tensor.strides[0], 0);
    v->deleter(v);
    v = NULL;
  }
  l = NULL;
  CHECK_EQ_INT(dlb_export_legacy(L, -1, NULL, &l), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), top);
  if (l) {
    CHECK_EQ_INT(l->dl_tensor.strides[0], 3); /* a compact copy */
    l->deleter(l);
  }
  dlb_export_options_init(&o);
  o.copy = 0;
  l = (DLManagedTensor *)&o; /* a sentinel: a failure must not hand out a tensor */
  CHECK_EQ_INT(dlb_export_legacy(L, -1, &o, &l), DLB_E_COPY_REQUIRED);
  CHECK_EQ_INT(lua_gettop(L), top + 1);
  CHECK(field(L, -1, "hint")[0] != '\0');
  CHECK_ERROR_TOP(L, top, "COPY_REQUIRED", "dlb_export_legacy");
  o.copy = 1;
  l = NULL;
  CHECK_EQ_INT(dlb_export_legacy(L, -1, &o, &l), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), top);
  if (l) {
    CHECK_EQ_INT(l->dl_tensor.strides[0], 3);
    l->deleter(l);
  }
  lua_settop(L, 1);
  /* Not an array at idx: ARGUMENT, the error pushed. */
  lua_pushinteger(L, 42);
  top = lua_gettop(L);
  CHECK_EQ_INT(dlb_export_versioned(L, top, NULL, &v), DLB_E_ARGUMENT);
  CHECK_ERROR_TOP(L, top, "ARGUMENT", "dlb_export_versioned");
  CHECK_EQ_INT(dlb_export_legacy(L, -1, NULL, &l), DLB_E_ARGUMENT);
  CHECK_ERROR_TOP(L, top, "ARGUMENT", "dlb_export_legacy");
  lua_newtable(L);
  CHECK_EQ_INT(dlb_export_versioned(L, -1, NULL, &v), DLB_E_ARGUMENT);
  CHECK_ERROR_TOP(L, top + 1, "ARGUMENT", "dlb_export_versioned");
  lua_settop(L, 1);
  /* A deleted array: DELETED. */
  PUSH(L, "local d = dl.zeros{2} d:delete() return d");
  top = lua_gettop(L);
  CHECK_EQ_INT(dlb_export_versioned(L, -1, NULL, &v), DLB_E_DELETED);
  CHECK_ERROR_TOP(L, top, "DELETED", "dlb_export_versioned");
  lua_settop(L, 0);
  lua_close(L);
}

/* ------------------------------------------------------------------------ */
/* A registered backend that hands out no pointer: the opaque backend */

static void test_incompatible_backend(void) {
  lua_State *L = new_state();
  dlb_backend_ops ops = opaque_ops("opaque");
  dlb_export_options o;
  DLManagedTensorVersioned *v = NULL;
  int top;
  CHECK_EQ_INT(dlb_register_backend(L, &ops, NULL), DLB_OK);
  PUSH(L, "return dl.array({1, 2, 3}, {device = 'opaque'})");
  top = lua_gettop(L);
  CHECK_EQ_INT(top, 1);
  CHECK_EQ_INT(dlb_export_versioned(L, 1, NULL, &v), DLB_E_BACKEND_INCOMPATIBLE);
  CHECK_EQ_STR(field(L, -1, "backend"), "opaque");
  CHECK(field(L, -1, "hint")[0] != '\0');
  CHECK_ERROR_TOP(L, top, "BACKEND_INCOMPATIBLE", "dlb_export_versioned");
  /* fallback = "cpu": a host copy, IS_COPIED */
  dlb_export_options_init(&o);
  o.fallback_cpu = 1;
  CHECK_EQ_INT(dlb_export_versioned(L, 1, &o, &v), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), top);
  if (v) {
    CHECK_EQ_INT(v->flags, DLPACK_FLAG_BITMASK_IS_COPIED);
    CHECK_EQ_INT(v->dl_tensor.device.device_type, kDLCPU);
    CHECK_EQ_INT(((int64_t *)v->dl_tensor.data)[2], 3);
    v->deleter(v);
  }
  o.copy = 0;
  CHECK_EQ_INT(dlb_export_versioned(L, 1, &o, &v), DLB_E_COPY_REQUIRED);
  CHECK_ERROR_TOP(L, top, "COPY_REQUIRED", "dlb_export_versioned");
  /* Lua sees the same coded error and recovers with device_put. */
  CHECK_EQ_INT(RUN(L, "local a = dl.array({1, 2, 3}, {device = 'opaque'}) "
                      "local ok, e = pcall(a.to_dlpack, a) "
                      "if ok or e.code ~= 'BACKEND_INCOMPATIBLE' then return 0 end "
                      "local b = dl.from_dlpack(dl.device_put(a, 'cpu'):to_dlpack()) return b[3]"),
               3);
  lua_settop(L, 0);
  lua_close(L);
  CHECK_EQ_INT(atomic_load(&opaque_live), 0);
  CHECK_EQ_INT(atomic_load(&opaque_released), 1);
}

/* ------------------------------------------------------------------------ */
/* Push: a producer's tensor becomes an array */

static void test_push(void) {
  lua_State *L = new_state();
  static int32_t data[4] = {1, 2, 3, 4};
  int before, top;
  for (int versioned = 0; versioned <= 1; versioned++) {
    producer *p = make_producer(versioned, data, kDLCPU);
    dlb_status st;
    before = atomic_load(&deleted);
    st = versioned ? dlb_push_versioned(L, &p->t.v) : dlb_push_legacy(L, &p->t.l);
    CHECK_EQ_INT(st, DLB_OK);
    CHECK_EQ_INT(lua_gettop(L), 1);
    lua_setglobal(L, "p");
    CHECK_EQ_INT(RUN(L, "return p:get(1, 2)"), 2);
    CHECK_EQ_INT(RUN(L, "return p.size"), 4);
    CHECK_EQ_INT(RUN(L, "return p.dtype == 'int32'"), 1);
    CHECK_EQ_INT(RUN(L, "return p.readonly"), 0);
    CHECK_EQ_INT(RUN(L, "local t, id = p:__dlpack_device() return t * 10 + id"), 10);
    /* zero copy: a write from Lua is seen in the C buffer */
    CHECK_EQ_INT(RUN(L, "p:set(2, 2, 40) p[1][1] = 10 return 1"), 1);
    CHECK_EQ_INT(data[3], 40);
    CHECK_EQ_INT(data[0], 10);
    data[1] = 20;
    CHECK_EQ_INT(RUN(L, "return p:get(1, 2)"), 20);
    /* a view keeps the tensor alive after the array goes */
    CHECK_EQ_INT(RUN(L, "q = p[2] p:delete() p = nil collectgarbage() return q[2]"), 40);
    CHECK_EQ_INT(atomic_load(&deleted), before);
    CHECK_EQ_INT(RUN(L, "q = nil collectgarbage() collectgarbage() return 1"), 1);
    CHECK_EQ_INT(atomic_load(&deleted) - before, 1);
    data[0] = 1, data[1] = 2, data[3] = 4;
  }
  /* READ_ONLY comes through to Lua. */
  {
    producer *p = make_producer(1, data, kDLCUDAHost);
    p->t.v.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    CHECK_EQ_INT(dlb_push_versioned(L, &p->t.v), DLB_OK);
    lua_setglobal(L, "r");
    CHECK_EQ_INT(RUN(L, "return r.readonly"), 1);
    CHECK_EQ_INT(RUN(L, "local ok, e = pcall(function() r:set(1, 1, 5) end) "
                        "return (not ok and e.code == 'READ_ONLY') and 1 or 0"),
                 1);
    CHECK_EQ_INT(data[0], 1);
    before = atomic_load(&deleted);
    CHECK_EQ_INT(RUN(L, "r = nil collectgarbage() collectgarbage() return 1"), 1);
    CHECK_EQ_INT(atomic_load(&deleted) - before, 1);
  }
  /* Failures: the deleter exactly once, the error pushed, no array. */
  {
    static const struct {
      int versioned;
      int32_t device;
      int ndim;
      const char *code;
    } cases[] = {
        {1, kDLCPU, 40, "SHAPE"},
        {0, kDLCPU, -1, "DLPACK_INVALID"},
        {1, kDLCUDA, 2, "DEVICE_UNAVAILABLE"},
        {0, kDLROCM, 2, "DEVICE_UNAVAILABLE"},
        {1, kDLVulkan, 2, "DEVICE_UNAVAILABLE"},
        {0, kDLMetal, 2, "DEVICE_UNAVAILABLE"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      producer *p = make_producer(cases[i].versioned, data, cases[i].device);
      dlb_status st;
      if (cases[i].versioned) p->t.v.dl_tensor.ndim = cases[i].ndim;
      else p->t.l.dl_tensor.ndim = cases[i].ndim;
      top = lua_gettop(L);
      before = atomic_load(&deleted);
      st = cases[i].versioned ? dlb_push_versioned(L, &p->t.v) : dlb_push_legacy(L, &p->t.l);
      CHECK(st != DLB_OK);
      CHECK_EQ_INT(atomic_load(&deleted) - before, 1);
      CHECK_EQ_STR(dlb_status_name(st), cases[i].code);
      CHECK_ERROR_TOP(L, top, cases[i].code,
                      cases[i].versioned ? "dlb_push_versioned" : "dlb_push_legacy");
    }
    /* dtype */
    {
      producer *p = make_producer(1, data, kDLCPU);
      p->t.v.dl_tensor.dtype.lanes = 4;
      top = lua_gettop(L);
      before = atomic_load(&deleted);
      CHECK_EQ_INT(dlb_push_versioned(L, &p->t.v), DLB_E_DTYPE);
      CHECK_EQ_INT(atomic_load(&deleted) - before, 1);
      CHECK_ERROR_TOP(L, top, "DTYPE", "dlb_push_versioned");
    }
    /* A major version we do not read. (The tensor is not freed by its
     * deleter here: test_dlpack checks that nothing is read after it.) */
    {
      static DLManagedTensorVersioned v2;
      memset(&v2, 0x5A, sizeof v2);
      v2.version.major = 2;
      v2.version.minor = 0;
      v2.manager_ctx = NULL;
      v2.deleter = delete_v_static;
      top = lua_gettop(L);
      before = atomic_load(&deleted);
      CHECK_EQ_INT(dlb_push_versioned(L, &v2), DLB_E_DLPACK_VERSION);
      CHECK_EQ_INT(atomic_load(&deleted) - before, 1);
      CHECK_ERROR_TOP(L, top, "DLPACK_VERSION", "dlb_push_versioned");
    }
  }
  /* A host C function raises the pushed error with lua_error. */
  lua_settop(L, 0);
  lua_close(L);
}

/* A host function that imports a bad tensor and raises what the API pushed. */
static int host_import_bad(lua_State *L) {
  static int32_t data[4];
  producer *p = make_producer(1, data, kDLOpenCL);
  if (dlb_push_versioned(L, &p->t.v) != DLB_OK) return lua_error(L);
  return 1;
}

/* A host function that imports a good tensor (data is an upvalue's light userdata). */
static int host_import_good(lua_State *L) {
  int32_t *data = lua_touserdata(L, lua_upvalueindex(1));
  producer *p = make_producer(0, data, kDLCPU);
  if (dlb_push_legacy(L, &p->t.l) != DLB_OK) return lua_error(L);
  return 1;
}

/* host_export(a): the sum of a 1-D int64 array, read through a DLPack export. */
static int host_export_sum(lua_State *L) {
  DLManagedTensorVersioned *v;
  int64_t sum = 0;
  if (dlb_export_versioned(L, 1, NULL, &v) != DLB_OK) return lua_error(L);
  for (int64_t i = 0; i < v->dl_tensor.shape[0]; i++)
    sum += ((int64_t *)((char *)v->dl_tensor.data +
                        v->dl_tensor.byte_offset))[i * v->dl_tensor.strides[0]];
  v->deleter(v);
  lua_pushinteger(L, (lua_Integer)sum);
  return 1;
}

static int host_fail(lua_State *L) {
  int n = (int)luaL_checkinteger(L, 1);
  if (n == 1)
    dlb_raise(L, DLB_E_VALUE, "host.fail", "pass a smaller number", "value %d is too big", 42);
  if (n == 2) dlb_raise(L, DLB_E_SHAPE, "host.fail", NULL, "no hint given");
  dlb_raise(L, DLB_E_BACKEND_FAILURE, NULL, NULL, "%s", "no op given");
}

static void test_host_functions(void) {
  lua_State *L = new_state();
  static int32_t data[4] = {7, 8, 9, 10};
  int before;
  lua_register(L, "host_fail", host_fail);
  lua_register(L, "host_import_bad", host_import_bad);
  lua_register(L, "host_export_sum", host_export_sum);
  lua_pushlightuserdata(L, data);
  lua_pushcclosure(L, host_import_good, 1);
  lua_setglobal(L, "host_import_good");
  /* dlb_raise: a dlbridge.Error caught by pcall, with its fields. */
  CHECK_EQ_INT(RUN(L, "local ok, e = pcall(host_fail, 1) "
                      "return (not ok and dl.is_error(e) and getmetatable(e) ~= nil) and 1 or 0"),
               1);
  CHECK_EQ_INT(
      RUN(L, "local ok, e = pcall(host_fail, 1) return e.code == 'VALUE' and e.op == 'host.fail' "
             "and e.hint == 'pass a smaller number' and e.message == 'value 42 is too big' "
             "and e:is('VALUE') and e.code == dl.E.VALUE"),
      1);
  CHECK_EQ_INT(
      RUN(L, "local ok, e = pcall(host_fail, 1) "
             "return tostring(e):find('dlbridge: VALUE: value 42 is too big', 1, true) ~= nil"),
      1);
  /* NULL hint: the code's default hint; NULL op: "host". */
  CHECK_EQ_INT(
      RUN(L, "local ok, e = pcall(host_fail, 2) return e.code == 'SHAPE' and e.op == 'host.fail' "
             "and type(e.hint) == 'string' and #e.hint > 0 and e.message == 'no hint given'"),
      1);
  CHECK_EQ_INT(RUN(L, "local ok, e = pcall(host_fail, 3) return e.code == 'BACKEND_FAILURE' "
                      "and e.op == 'host' and e.message == 'no op given'"),
               1);
  /* dl.try turns it into nil, err like any dlbridge error. */
  CHECK_EQ_INT(RUN(L, "local r, e = dl.try(host_fail, 1) return r == nil and e.code == 'VALUE'"),
               1);
  /* A failed push raised from a host function: the pushed error as is. */
  before = atomic_load(&deleted);
  CHECK_EQ_INT(
      RUN(L,
          "local ok, e = pcall(host_import_bad) return (not ok) and e.code == 'DEVICE_UNAVAILABLE' "
          "and e.op == 'dlb_push_versioned'"),
      1);
  CHECK_EQ_INT(atomic_load(&deleted) - before, 1);
  /* A good push from a host function. */
  before = atomic_load(&deleted);
  CHECK_EQ_INT(RUN(L, "local a = host_import_good() return a:get(2, 2)"), 10);
  CHECK_EQ_INT(RUN(L, "collectgarbage() collectgarbage() return 1"), 1);
  CHECK_EQ_INT(atomic_load(&deleted) - before, 1);
  /* Export from a host function (the state comes from the registry). */
  CHECK_EQ_INT(RUN(L, "return host_export_sum(dl.array{1, 2, 3, 4})"), 10);
  CHECK_EQ_INT(RUN(L, "return host_export_sum(dl.array{1, 2, 3, 4, 5, 6}:slice(1, 6, 1, -2))"), 12);
  CHECK_EQ_INT(
      RUN(L, "local ok, e = pcall(host_export_sum, 'x') return (not ok) and e.code == 'ARGUMENT' "
             "and e.op == 'dlb_export_versioned'"),
      1);
  lua_close(L);
}

/* ------------------------------------------------------------------------ */
/* Capsules */

static void test_capsules(void) {
  lua_State *L = new_state();
  static int32_t data[4] = {1, 2, 3, 4};
  int before, top, versioned;
  void *tensor;
  /* A capsule pushed from C, consumed by dl.from_dlpack in Lua. */
  for (int vers = 0; vers <= 1; vers++) {
    producer *p = make_producer(vers, data, kDLCPU);
    before = atomic_load(&deleted);
    if (vers) dlb_push_capsule_versioned(L, &p->t.v);
    else dlb_push_capsule_legacy(L, &p->t.l);
    CHECK_EQ_INT(lua_gettop(L), 1);
    lua_setglobal(L, "cap");
    CHECK_EQ_INT(RUN(L, "return cap.versioned"), vers);
    CHECK_EQ_INT(RUN(L, "return cap.consumed"), 0);
    CHECK_EQ_INT(RUN(L, "return cap.device[1] * 10 + cap.device[2]"), 10);
    if (vers) CHECK_EQ_INT(RUN(L, "return cap.version[1] * 10 + cap.version[2]"), 13);
    else CHECK_EQ_INT(RUN(L, "return cap.version == nil"), 1);
    CHECK_EQ_INT(RUN(L, "b = dl.from_dlpack(cap) return b:get(2, 1)"), 3);
    CHECK_EQ_INT(RUN(L, "return cap.consumed"), 1);
    CHECK_EQ_INT(atomic_load(&deleted), before);
    /* consumed twice: an error, not a crash (pytorch #9260, cupy #3611) */
    CHECK_EQ_INT(RUN(L, "local ok, e = pcall(dl.from_dlpack, cap) "
                        "return (not ok and e.code == 'CAPSULE_CONSUMED') and 1 or 0"),
                 1);
    /* zero copy both ways */
    CHECK_EQ_INT(RUN(L, "b:set(1, 1, 11) return 1"), 1);
    CHECK_EQ_INT(data[0], 11);
    data[0] = 1;
    /* the consumed capsule's collection does not call the deleter again */
    CHECK_EQ_INT(RUN(L, "cap = nil collectgarbage() collectgarbage() return 1"), 1);
    CHECK_EQ_INT(atomic_load(&deleted), before);
    CHECK_EQ_INT(RUN(L, "b = nil collectgarbage() collectgarbage() return 1"), 1);
    CHECK_EQ_INT(atomic_load(&deleted) - before, 1);
  }
  /* A capsule whose tensor is bad: from_dlpack raises, the deleter runs once,
   * the capsule is consumed (marked before the import could fail). */
  {
    producer *p = make_producer(1, data, kDLCUDA);
    before = atomic_load(&deleted);
    dlb_push_capsule_versioned(L, &p->t.v);
    lua_setglobal(L, "cap");
    CHECK_EQ_INT(RUN(L, "local ok, e = pcall(dl.from_dlpack, cap) "
                        "return (not ok and e.code == 'DEVICE_UNAVAILABLE' and e.op == "
                        "'dl.from_dlpack') and 1 or 0"),
                 1);
    CHECK_EQ_INT(atomic_load(&deleted) - before, 1);
    CHECK_EQ_INT(RUN(L, "return cap.consumed"), 1);
    CHECK_EQ_INT(
        RUN(L, "local ok, e = pcall(dl.from_dlpack, cap) return e.code == 'CAPSULE_CONSUMED'"), 1);
    CHECK_EQ_INT(RUN(L, "cap = nil collectgarbage() collectgarbage() return 1"), 1);
    CHECK_EQ_INT(atomic_load(&deleted) - before, 1);
  }
  /* An unconsumed capsule collected: the deleter, once. */
  {
    producer *p = make_producer(0, data, kDLCPU);
    before = atomic_load(&deleted);
    dlb_push_capsule_legacy(L, &p->t.l);
    lua_pop(L, 1);
    CHECK_EQ_INT(RUN(L, "collectgarbage() collectgarbage() return 1"), 1);
    CHECK_EQ_INT(atomic_load(&deleted) - before, 1);
  }
  /* dlb_capsule_take of a capsule made by Lua's a:to_dlpack(). */
  PUSH(L, "src = dl.array({5, 6, 7}, {dtype = 'int64'}) return src:to_dlpack()");
  top = lua_gettop(L);
  tensor = NULL;
  versioned = -1;
  CHECK_EQ_INT(dlb_capsule_take(L, -1, &tensor, &versioned), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), top);
  CHECK_EQ_INT(versioned, 1);
  CHECK(tensor != NULL);
  CHECK_EQ_INT(RUN(L, "return 1"), 1);
  lua_pushvalue(L, -1);
  lua_setglobal(L, "taken");
  CHECK_EQ_INT(RUN(L, "return taken.consumed"), 1);
  /* second take: CAPSULE_CONSUMED, error pushed, tensor untouched */
  {
    void *again = (void *)&top;
    int vagain = 7;
    CHECK_EQ_INT(dlb_capsule_take(L, top, &again, &vagain), DLB_E_CAPSULE_CONSUMED);
    CHECK_ERROR_TOP(L, top, "CAPSULE_CONSUMED", "dlb_capsule_take");
    CHECK(again == (void *)&top);
  }
  /* Lua cannot consume it either now. */
  CHECK_EQ_INT(
      RUN(L, "local ok, e = pcall(dl.from_dlpack, taken) return e.code == 'CAPSULE_CONSUMED'"), 1);
  if (tensor) {
    DLManagedTensorVersioned *v = tensor;
    CHECK_EQ_INT(v->version.major, 1);
    CHECK_EQ_INT(v->dl_tensor.dtype.bits, 64);
    CHECK_EQ_INT(((int64_t *)v->dl_tensor.data)[2], 7);
    /* the memory outlives the array and the capsule */
    CHECK_EQ_INT(
        RUN(L, "src:delete() src = nil taken = nil collectgarbage() collectgarbage() return 1"), 1);
    lua_settop(L, 0);
    CHECK_EQ_INT(RUN(L, "collectgarbage() return 1"), 1);
    CHECK_EQ_INT(((int64_t *)v->dl_tensor.data)[1], 6);
    v->deleter(v);
  }
  /* Legacy capsule from Lua. */
  PUSH(L, "return dl.array{1, 2}:to_dlpack{max_version = {0, 0}}");
  tensor = NULL;
  CHECK_EQ_INT(dlb_capsule_take(L, -1, &tensor, &versioned), DLB_OK);
  CHECK_EQ_INT(versioned, 0);
  if (tensor) {
    DLManagedTensor *l = tensor;
    CHECK_EQ_INT(((int64_t *)l->dl_tensor.data)[1], 2);
    l->deleter(l);
  }
  lua_settop(L, 0);
  /* Not a capsule: ARGUMENT. */
  lua_pushstring(L, "dltensor");
  CHECK_EQ_INT(dlb_capsule_take(L, 1, &tensor, &versioned), DLB_E_ARGUMENT);
  CHECK_ERROR_TOP(L, 1, "ARGUMENT", "dlb_capsule_take");
  lua_settop(L, 0);
  /* A capsule that Lua made goes back into Lua through from_dlpack too. */
  CHECK_EQ_INT(RUN(L, "local a = dl.arange(10) local c = a:to_dlpack() local b = dl.from_dlpack(c) "
                      "b[3] = 99 return a[3]"),
               99);
  CHECK_EQ_INT(RUN(L, "local a = dl.arange(10) local b = dl.from_dlpack(a) return b[10]"), 9);
  lua_close(L);
}

/* ------------------------------------------------------------------------ */
/* Lifetime */

static void test_lifetime(void) {
  /* Exported memory stays valid after a:delete() and after lua_close. */
  {
    lua_State *L = new_state();
    DLManagedTensorVersioned *v = NULL;
    DLManagedTensor *l = NULL;
    PUSH(L, "a = dl.array({1.5, 2.5, 3.5}) return a");
    CHECK_EQ_INT(dlb_export_versioned(L, -1, NULL, &v), DLB_OK);
    CHECK_EQ_INT(dlb_export_legacy(L, -1, NULL, &l), DLB_OK);
    lua_settop(L, 0);
    CHECK_EQ_INT(RUN(L, "a:delete() local ok, e = pcall(function() return a[1] end) "
                        "return e.code == 'DELETED'"),
                 1);
    CHECK_EQ_INT(RUN(L, "a = nil collectgarbage() collectgarbage() return 1"), 1);
    if (v) CHECK(((double *)v->dl_tensor.data)[1] == 2.5);
    lua_close(L);
    if (v) {
      CHECK(((double *)v->dl_tensor.data)[2] == 3.5);
      ((double *)v->dl_tensor.data)[0] = -1; /* still writable memory */
      v->deleter(v);
    }
    if (l) {
      CHECK(((double *)l->dl_tensor.data)[0] == -1);
      l->deleter(l);
    }
  }
  /* Unconsumed capsules' deleters run exactly once at lua_close, pushed
   * from C or made in Lua; a consumed one's array is freed then too. */
  {
    lua_State *L = new_state();
    static int32_t data[4];
    producer *p1 = make_producer(1, data, kDLCPU), *p2 = make_producer(0, data, kDLCPU),
             *p3 = make_producer(1, data, kDLCPU);
    int before = atomic_load(&deleted);
    dlb_push_capsule_versioned(L, &p1->t.v);
    lua_setglobal(L, "keep1");
    dlb_push_capsule_legacy(L, &p2->t.l);
    lua_setglobal(L, "keep2");
    dlb_push_capsule_versioned(L, &p3->t.v);
    lua_setglobal(L, "keep3");
    CHECK_EQ_INT(RUN(L, "held = dl.from_dlpack(keep3) view = held[1] return 1"), 1);
    CHECK_EQ_INT(RUN(L, "lua_made = dl.zeros{100}:to_dlpack() return 1"), 1);
    CHECK_EQ_INT(RUN(L, "collectgarbage() return 1"), 1);
    CHECK_EQ_INT(atomic_load(&deleted), before);
    lua_close(L);
    CHECK_EQ_INT(atomic_load(&deleted) - before, 3);
  }
}

/* ------------------------------------------------------------------------ */
/* Threads: deleters on another thread (numpy #22510) */

#define NT 64
static void *tensors[NT];
static int tensor_versioned[NT];
static atomic_int go;
static atomic_long checksum;

static void *delete_tensors(void *arg) {
  long sum = 0;
  (void)arg;
  while (!atomic_load(&go)) {
  }
  for (int i = 0; i < NT; i++) {
    DLTensor *t = tensor_versioned[i] ? &((DLManagedTensorVersioned *)tensors[i])->dl_tensor
                                      : &((DLManagedTensor *)tensors[i])->dl_tensor;
    const double *d = (const double *)((const char *)t->data + t->byte_offset);
    sum += (long)d[0] + (long)d[(t->shape[0] - 1) * t->strides[0]];
    if (tensor_versioned[i]) ((DLManagedTensorVersioned *)tensors[i])->deleter(tensors[i]);
    else ((DLManagedTensor *)tensors[i])->deleter(tensors[i]);
  }
  atomic_store(&checksum, sum);
  return NULL;
}

/* Exports NT tensors of arrays that Lua drops right after. Element 0 of
 * tensor i is i, its last element 1000 + i. */
static long export_many(lua_State *L) {
  long want = 0;
  for (int i = 0; i < NT; i++) {
    char code[200];
    dlb_export_options o;
    dlb_status st;
    dlb_export_options_init(&o);
    o.copy = i % 3 == 0 ? 1 : -1;
    snprintf(code, sizeof code,
             "local a = dl.zeros{%d} a[1] = %d a[-1] = %d if %d %% 2 == 0 then return a:slice(1, "
             "1, -1, 1) end "
             "return a",
             16 + i, i, 1000 + i, i);
    PUSH(L, code);
    tensor_versioned[i] = i % 2;
    if (i % 2) st = dlb_export_versioned(L, -1, &o, (DLManagedTensorVersioned **)&tensors[i]);
    else st = dlb_export_legacy(L, -1, &o, (DLManagedTensor **)&tensors[i]);
    CHECK_EQ_INT(st, DLB_OK);
    if (st != DLB_OK) {
      fprintf(stderr, "export %d failed\n", i);
      exit(1);
    }
    lua_pop(L, 1);
    want += i + 1000 + i;
  }
  return want;
}

/* Starts delete_tensors on a second thread (one check). */
static void start_deleter(pthread_t *th) {
  atomic_store(&go, 0);
  CHECK_EQ_INT(pthread_create(th, NULL, delete_tensors, NULL), 0);
  atomic_store(&go, 1);
}

/* Waits for the deleter thread and checks the data it read (two checks). */
static void join_deleter(pthread_t th, long want) {
  CHECK_EQ_INT(pthread_join(th, NULL), 0);
  CHECK_EQ_INT(atomic_load(&checksum), want);
}

static void test_threads(void) {
  /* Deleters on a second thread while this one collects and allocates. */
  {
    lua_State *L = new_state();
    pthread_t th;
    long want = export_many(L);
    start_deleter(&th);
    for (int k = 0; k < 50; k++)
      CHECK_EQ_INT(RUN(L, "for i = 1, 20 do local a = dl.ones{64} local b = a[3] end "
                          "collectgarbage() return 1"),
                   1);
    join_deleter(th, want);
    lua_close(L);
  }
  /* lua_close first, then the deleters on another thread. */
  {
    lua_State *L = new_state();
    pthread_t th;
    long want = export_many(L);
    lua_close(L);
    start_deleter(&th);
    join_deleter(th, want);
  }
  /* lua_close on this thread while the other one deletes. */
  {
    lua_State *L = new_state();
    pthread_t th;
    long want = export_many(L);
    start_deleter(&th);
    lua_close(L);
    join_deleter(th, want);
  }
  /* Imported arrays released at lua_close while their producers' memory
   * is handed back: the deleters run on the closing thread, once each. */
  {
    lua_State *L = new_state();
    static int32_t data[NT][4];
    int before = atomic_load(&deleted);
    CHECK(lua_checkstack(L, NT));
    for (int i = 0; i < NT; i++) {
      producer *p = make_producer(i % 2, data[i], kDLCPU);
      CHECK_EQ_INT(i % 2 ? dlb_push_versioned(L, &p->t.v) : dlb_push_legacy(L, &p->t.l), DLB_OK);
    }
    lua_close(L);
    CHECK_EQ_INT(atomic_load(&deleted) - before, NT);
  }
}

int main(void) {
  test_export();
  test_incompatible_backend();
  test_push();
  test_host_functions();
  test_capsules();
  test_lifetime();
  test_threads();
  return check_done("capi_exchange");
}
