/* stand_in_lua.c -- the Lua module cuda_stand_in, for spec/cuda_spec.lua: the
 * stand-in driver's controls (stand_in_driver.h), and a foreign CUDA
 * producer and consumer that use the driver directly, as PyTorch or CuPy
 * would. It opens the driver by the path in DLB_CUDA_DRIVER, the library
 * the backend loaded (one handle: the same state).
 *
 *   control(key, value) -> 0 | -1        query(key) -> integer
 *   stream(device [, nonblocking]) -> handle (an integer, never destroyed)
 *   read(capsule, stream) -> bytes, pointer: consumes the capsule, copies
 *     its numel * itemsize bytes from the data pointer on stream, waits
 *     for that stream only, then calls the deleter
 *   tensor{values, device =, dl_device =, claim =, pointer =, device_type =}
 *     -> a capsule of a float32 vector in stand-in device memory (pointer
 *     "host": malloc'd memory, "managed": stand-in managed memory; claim:
 *     the elements the tensor says it has, default #values; device_type:
 *     DLPack's, default kDLCUDA)
 *   deleted() -> how many of tensor's deleters ran
 *   queue(device) -> dlbridge's stream on cuda:device (dlb_device_queue) */
#include <dlfcn.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "../../src/backends/cuda/driver.h"
#include "dlbridge.h"
#include "stand_in_driver.h"

static void *lib;
static atomic_int deleted;

static void *need(lua_State *L, const char *name) {
  void *fn;
  if (!lib) {
    const char *path = getenv("DLB_CUDA_DRIVER");
    if (!path || !(lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
      luaL_error(L, "cuda_stand_in: DLB_CUDA_DRIVER does not name the stand-in driver");
  }
  if (!(fn = dlsym(lib, name))) luaL_error(L, "cuda_stand_in: no %s", name);
  return fn;
}

#define CALL(L, name, type) ((type)need(L, name))

typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*push_fn)(CUcontext);
typedef CUresult (*pop_fn)(CUcontext *);

/* Pushes device's primary context (retained for good: the consumer's). */
static void enter(lua_State *L, int device) {
  CUcontext c;
  if (CALL(L, "cuInit", CUresult (*)(unsigned))(0) != CUDA_SUCCESS ||
      CALL(L, "cuDevicePrimaryCtxRetain", retain_fn)(&c, device) != CUDA_SUCCESS ||
      CALL(L, "cuCtxPushCurrent_v2", push_fn)(c) != CUDA_SUCCESS)
    luaL_error(L, "cuda_stand_in: no context on device %d", device);
}

static void leave(lua_State *L) {
  CUcontext c;
  CALL(L, "cuCtxPopCurrent_v2", pop_fn)(&c);
}

static int l_control(lua_State *L) {
  lua_pushinteger(L, CALL(L, "standin_control", standin_control_fn)(luaL_checkstring(L, 1),
                                                                  (long long)luaL_optinteger(L, 2, 0)));
  return 1;
}

static int l_query(lua_State *L) {
  lua_pushinteger(L, CALL(L, "standin_query", standin_query_fn)(luaL_checkstring(L, 1)));
  return 1;
}

static int l_stream(lua_State *L) {
  CUstream s = NULL;
  CUresult r;
  enter(L, (int)luaL_checkinteger(L, 1));
  r = CALL(L, "cuStreamCreate", CUresult (*)(CUstream *, unsigned))(&s, lua_toboolean(L, 2) ? 1u : 0u);
  leave(L);
  if (r != CUDA_SUCCESS) return luaL_error(L, "cuStreamCreate failed: %d", (int)r);
  lua_pushinteger(L, (lua_Integer)(uintptr_t)s);
  return 1;
}

static size_t tensor_bytes(const DLTensor *t) {
  size_t n = (size_t)t->dtype.bits * t->dtype.lanes / 8;
  for (int d = 0; d < t->ndim; d++) n *= (size_t)t->shape[d];
  return n;
}

static void delete_tensor(void *tensor, int versioned) {
  if (versioned) {
    DLManagedTensorVersioned *v = tensor;
    if (v->deleter) v->deleter(v);
  } else {
    DLManagedTensor *m = tensor;
    if (m->deleter) m->deleter(m);
  }
}

static int l_read(lua_State *L) {
  void *tensor;
  int versioned;
  DLTensor *t;
  CUstream s = (CUstream)(uintptr_t)luaL_checkinteger(L, 2);
  char *buf;
  size_t n;
  CUresult r;
  if (dlb_capsule_take(L, 1, &tensor, &versioned) != DLB_OK) return lua_error(L);
  t = versioned ? &((DLManagedTensorVersioned *)tensor)->dl_tensor : &((DLManagedTensor *)tensor)->dl_tensor;
  n = tensor_bytes(t);
  if (!(buf = malloc(n ? n : 1))) return luaL_error(L, "no memory");
  enter(L, t->device.device_id);
  r = CALL(L, "cuMemcpyDtoHAsync_v2", CUresult (*)(void *, CUdeviceptr, size_t, CUstream))(
      buf, (CUdeviceptr)(uintptr_t)((char *)t->data + t->byte_offset), n, s);
  if (r == CUDA_SUCCESS) r = CALL(L, "cuStreamSynchronize", CUresult (*)(CUstream))(s);
  leave(L);
  lua_pushlstring(L, buf, n);
  lua_pushinteger(L, (lua_Integer)(uintptr_t)t->data);
  free(buf);
  delete_tensor(tensor, versioned);
  if (r != CUDA_SUCCESS) return luaL_error(L, "the consumer's copy failed: %d", (int)r);
  return 2;
}

typedef struct producer {
  DLManagedTensorVersioned m;
  int64_t shape[1];
  void *memory;
  int host;
} producer;

static void producer_deleter(DLManagedTensorVersioned *m) {
  producer *p = (producer *)m;
  if (p->host) {
    free(p->memory);
  } else if (lib) {
    ((standin_free_fn)dlsym(lib, "standin_free"))(p->memory);
  }
  free(p);
  atomic_fetch_add(&deleted, 1);
}

static lua_Integer opt_field(lua_State *L, const char *key, lua_Integer fallback) {
  lua_Integer v;
  lua_getfield(L, 1, key);
  v = luaL_optinteger(L, -1, fallback);
  lua_pop(L, 1);
  return v;
}

static int l_tensor(lua_State *L) {
  int n, host, managed, device;
  producer *p;
  luaL_checktype(L, 1, LUA_TTABLE);
  n = (int)lua_rawlen(L, 1);
  device = (int)opt_field(L, "device", 0);
  lua_getfield(L, 1, "pointer");
  host = lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "host") == 0;
  managed = lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "managed") == 0;
  lua_pop(L, 1);
  if (!(p = calloc(1, sizeof *p))) return luaL_error(L, "no memory");
  p->host = host;
  p->memory = host ? malloc((size_t)n * 4 + 4)
                   : CALL(L, "standin_alloc", standin_alloc_fn)(device, (size_t)n * 4 + (n == 0),
                                                                 managed ? 4 : 2);
  if (!p->memory) return free(p), luaL_error(L, "no memory for the producer");
  for (int i = 0; i < n; i++) {
    float f;
    lua_rawgeti(L, 1, i + 1);
    f = (float)lua_tonumber(L, -1);
    lua_pop(L, 1);
    memcpy((char *)p->memory + 4 * i, &f, 4);
  }
  p->shape[0] = opt_field(L, "claim", n);
  p->m.version.major = DLB_DLPACK_MAJOR;
  p->m.version.minor = 0;
  p->m.dl_tensor.data = p->memory;
  p->m.dl_tensor.device.device_type = (DLDeviceType)opt_field(L, "device_type", kDLCUDA);
  p->m.dl_tensor.device.device_id = (int32_t)opt_field(L, "dl_device", device);
  p->m.dl_tensor.ndim = 1;
  p->m.dl_tensor.dtype.code = kDLFloat;
  p->m.dl_tensor.dtype.bits = 32;
  p->m.dl_tensor.dtype.lanes = 1;
  p->m.dl_tensor.shape = p->shape;
  p->m.deleter = producer_deleter;
  if (dlb_push_capsule_versioned(L, &p->m) != DLB_OK) return lua_error(L);
  return 1;
}

static int l_deleted(lua_State *L) {
  lua_pushinteger(L, atomic_load(&deleted));
  return 1;
}

static int l_queue(lua_State *L) {
  void *q = NULL;
  if (dlb_device_queue(L, kDLCUDA, (int)luaL_checkinteger(L, 1), &q) != DLB_OK) return lua_error(L);
  lua_pushinteger(L, (lua_Integer)(uintptr_t)q);
  return 1;
}

int luaopen_cuda_stand_in(lua_State *L);
__attribute__((visibility("default"))) int luaopen_cuda_stand_in(lua_State *L) {
  static const luaL_Reg fns[] = {{"control", l_control}, {"query", l_query}, {"stream", l_stream},
                                 {"read", l_read},       {"tensor", l_tensor}, {"deleted", l_deleted},
                                 {"queue", l_queue},     {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
