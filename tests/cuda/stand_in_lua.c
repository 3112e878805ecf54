/* stand_in_lua.c -- the Lua module cuda_stand_in, for spec/cuda_spec.lua: the
 * stand-in driver's controls (stand_in_driver.h), and a foreign CUDA
 * producer and consumer that use the driver directly, as PyTorch or CuPy
 * would. It opens the library the backend loaded (one handle: the same
 * state), by the backend's rule: DLB_CUDA_DRIVER when set and not empty,
 * else libcuda.so.1 (a GPU machine's driver: tests/gpu).
 *
 *   control(key, value) -> 0 | -1        query(key) -> integer
 *   stream(device [, nonblocking]) -> handle (an integer, never destroyed)
 *   read(capsule, stream) -> bytes, pointer: consumes the capsule, copies
 *     its numel * itemsize bytes from the data pointer on stream, waits
 *     for that stream only, then calls the deleter
 *   tensor{values, device =, dl_device =, claim =, pointer =, device_type =, stream =}
 *     -> a capsule of a float32 vector in device memory (pointer "host":
 *     malloc'd memory, "pinned": cuMemHostAlloc'd, "managed": managed
 *     memory; stream: the values are written by a cuMemcpyHtoDAsync_v2
 *     queued on that stream and not waited for, as a producer whose
 *     kernels are still running; claim: the elements the
 *     tensor says it has, default #values; device_type: DLPack's, default
 *     kDLCUDA). On the stand-in: its standin_alloc, filled by the host;
 *     after driver_only(), or with a driver that has no standin_alloc (a
 *     real one): cuMemAlloc_v2 / cuMemAllocManaged in the device's primary
 *     context, filled with cuMemcpyHtoDAsync_v2 + cuStreamSynchronize on the
 *     legacy stream, freed with cuMemFree_v2 (the deleter pushes the context)
 *   driver_only() -> nothing: from now on tensor uses the driver's ordinary
 *     entry points only, as on hardware (tests/gpu/hw_stand_in.lua)
 *   deleted() -> how many of tensor's deleters ran
 *   queue(device) -> dlbridge's stream on cuda:device (dlb_device_queue)
 *   capture(stream, mode) -> CUresult: cuStreamBeginCapture_v2 (mode 0
 *     global, 1 thread-local, 2 relaxed)
 *   capture_status(stream) -> cuStreamIsCapturing's status (0 none, 1
 *     active, 2 invalidated)
 *   end_capture(stream) -> CUresult of cuStreamEndCapture (0: a graph) */
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE (lua_module_pin.h) */
#include <dlfcn.h>
#include <lauxlib.h>
#include <lua.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "../../src/backends/cuda/driver.h"
#include "dlbridge.h"
#include "stand_in_driver.h"
#include "../lua_module_pin.h"

static void *lib;
static atomic_int deleted;
static int driver_only;

/* The driver the backend opened (src/backends/cuda/driver.c's rule). */
static void *driver(void) {
  if (!lib) {
    const char *path = getenv("DLB_CUDA_DRIVER");
    if (!path || !*path) path = "libcuda.so.1";
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  return lib;
}

static void *need(lua_State *L, const char *name) {
  void *fn;
  if (!driver()) {
    const char *path = getenv("DLB_CUDA_DRIVER");
    luaL_error(L, "cuda_stand_in: cannot open the CUDA driver %s: %s",
               path && *path ? path : "libcuda.so.1", dlerror());
  }
  if (!(fn = dlsym(lib, name))) luaL_error(L, "cuda_stand_in: the driver has no %s", name);
  return fn;
}

#define CALL(L, name, type) ((type)need(L, name))

typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*push_fn)(CUcontext);
typedef CUresult (*pop_fn)(CUcontext *);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*alloc_managed_fn)(CUdeviceptr *, size_t, unsigned);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t, CUstream);
typedef CUresult (*sync_fn)(CUstream);

/* Pushes device's primary context (retained for good: the consumer's);
 * returns it. */
static CUcontext enter(lua_State *L, int device) {
  CUcontext c = NULL;
  if (CALL(L, "cuInit", CUresult(*)(unsigned))(0) != CUDA_SUCCESS ||
      CALL(L, "cuDevicePrimaryCtxRetain", retain_fn)(&c, device) != CUDA_SUCCESS ||
      CALL(L, "cuCtxPushCurrent_v2", push_fn)(c) != CUDA_SUCCESS)
    luaL_error(L, "cuda_stand_in: no context on device %d", device);
  return c;
}

static void leave(lua_State *L) {
  CUcontext c;
  CALL(L, "cuCtxPopCurrent_v2", pop_fn)(&c);
}

static int l_control(lua_State *L) {
  lua_pushinteger(L, CALL(L, "standin_control", standin_control_fn)(
                         luaL_checkstring(L, 1), (long long)luaL_optinteger(L, 2, 0)));
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
  r = CALL(L, "cuStreamCreate", CUresult(*)(CUstream *, unsigned))(&s,
                                                                   lua_toboolean(L, 2) ? 1u : 0u);
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
  t = versioned ? &((DLManagedTensorVersioned *)tensor)->dl_tensor
                : &((DLManagedTensor *)tensor)->dl_tensor;
  n = tensor_bytes(t);
  if (!(buf = malloc(n ? n : 1))) return luaL_error(L, "no memory");
  enter(L, t->device.device_id);
  r = CALL(L, "cuMemcpyDtoHAsync_v2", CUresult(*)(void *, CUdeviceptr, size_t, CUstream))(
      buf, (CUdeviceptr)(uintptr_t)((char *)t->data + t->byte_offset), n, s);
  if (r == CUDA_SUCCESS) r = CALL(L, "cuStreamSynchronize", CUresult(*)(CUstream))(s);
  leave(L);
  lua_pushlstring(L, buf, n);
  lua_pushinteger(L, (lua_Integer)(uintptr_t)t->data);
  free(buf);
  delete_tensor(tensor, versioned);
  if (r != CUDA_SUCCESS) return luaL_error(L, "the consumer's copy failed: %d", (int)r);
  return 2;
}

/* Where a producer's memory came from. */
enum { FROM_MALLOC, FROM_STANDIN, FROM_DRIVER, FROM_PINNED };

typedef struct producer {
  DLManagedTensorVersioned m;
  int64_t shape[1];
  void *memory;
  float *staging; /* a queued write's source (tensor{stream = s}) */
  int from;
  CUcontext context; /* FROM_DRIVER: the primary context it was allocated in */
} producer;

/* Runs on whatever thread drops the last reference (no Lua state). A
 * driver that has shut down (at exit) frees everything itself. */
static void producer_deleter(DLManagedTensorVersioned *m) {
  producer *p = (producer *)m;
  if (p->from == FROM_MALLOC) {
    free(p->memory);
  } else if (p->from == FROM_PINNED) {
    ((CUresult(*)(void *))dlsym(lib, "cuMemFreeHost"))(p->memory);
  } else if (p->from == FROM_STANDIN) {
    ((standin_free_fn)dlsym(lib, "standin_free"))(p->memory);
  } else {
    push_fn push = (push_fn)dlsym(lib, "cuCtxPushCurrent_v2");
    pop_fn pop = (pop_fn)dlsym(lib, "cuCtxPopCurrent_v2");
    free_fn release = (free_fn)dlsym(lib, "cuMemFree_v2");
    CUcontext c;
    if (push && pop && release && push(p->context) == CUDA_SUCCESS) {
      release((CUdeviceptr)(uintptr_t)p->memory);
      pop(&c);
    }
  }
  free(p->staging);
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

/* The values, in device (or managed) memory allocated through the driver's
 * ordinary entry points; NULL and *r set on failure. */
static void *driver_memory(lua_State *L, CUcontext *context, int device, int managed,
                           const float *values, size_t bytes, CUresult *r) {
  CUdeviceptr d = 0;
  CUcontext c;
  *context = enter(L, device);
  *r = managed ? CALL(L, "cuMemAllocManaged", alloc_managed_fn)(&d, bytes, 1u /* ATTACH_GLOBAL */)
               : CALL(L, "cuMemAlloc_v2", alloc_fn)(&d, bytes);
  if (*r == CUDA_SUCCESS)
    *r = CALL(L, "cuMemcpyHtoDAsync_v2", htod_fn)(d, values, bytes, CU_STREAM_LEGACY);
  if (*r == CUDA_SUCCESS) *r = CALL(L, "cuStreamSynchronize", sync_fn)(CU_STREAM_LEGACY);
  if (*r != CUDA_SUCCESS && d) CALL(L, "cuMemFree_v2", free_fn)(d), d = 0;
  CALL(L, "cuCtxPopCurrent_v2", pop_fn)(&c);
  return (void *)(uintptr_t)d;
}

/* Pinned memory for the values, from the device's context. */
static void *pinned_memory(lua_State *L, int device, const float *values, size_t bytes) {
  void *p = NULL;
  enter(L, device);
  if (CALL(L, "cuMemHostAlloc", CUresult(*)(void **, size_t, unsigned))(&p, bytes, 1u) !=
      CUDA_SUCCESS)
    p = NULL;
  leave(L);
  if (p) memcpy(p, values, bytes);
  return p;
}

/* tensor{stream = s}: the values written again, by a copy queued on s
 * from a staging copy the producer keeps until its deleter. */
static void queue_write(lua_State *L, producer *p, int device, const float *values, size_t bytes) {
  CUresult r;
  lua_getfield(L, 1, "stream");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  if (!(p->staging = malloc(bytes))) luaL_error(L, "no memory");
  memcpy(p->staging, values, bytes);
  enter(L, device);
  r = CALL(L, "cuMemcpyHtoDAsync_v2", htod_fn)((CUdeviceptr)(uintptr_t)p->memory, p->staging, bytes,
                                               (CUstream)(uintptr_t)luaL_checkinteger(L, -1));
  leave(L);
  lua_pop(L, 1);
  if (r != CUDA_SUCCESS)
    luaL_error(L, "cuda_stand_in: the producer's queued write: CUresult %d", (int)r);
}

static int l_tensor(lua_State *L) {
  int n, host, managed, pinned, device;
  size_t bytes;
  float *values;
  void *memory = NULL;
  int from;
  CUcontext context = NULL;
  producer *p;
  CUresult r = CUDA_SUCCESS;
  luaL_checktype(L, 1, LUA_TTABLE);
  n = (int)lua_rawlen(L, 1);
  bytes = (size_t)n * 4 + (n == 0);
  device = (int)opt_field(L, "device", 0);
  lua_getfield(L, 1, "pointer");
  host = lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "host") == 0;
  managed = lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "managed") == 0;
  pinned = lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "pinned") == 0;
  lua_pop(L, 1);
  /* The values first, in a buffer the collector frees (errors below too). */
  values = lua_newuserdatauv(L, (size_t)n * 4 + 4, 0);
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, 1, i + 1);
    values[i] = (float)lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  if (host) {
    from = FROM_MALLOC;
    if ((memory = malloc(bytes))) memcpy(memory, values, bytes);
  } else if (pinned) {
    from = FROM_PINNED;
    memory = pinned_memory(L, device, values, bytes);
  } else if (!driver_only && driver() && dlsym(lib, "standin_alloc")) {
    from = FROM_STANDIN;
    if ((memory = CALL(L, "standin_alloc", standin_alloc_fn)(device, bytes, managed ? 4 : 2)))
      memcpy(memory, values, bytes);
  } else {
    from = FROM_DRIVER;
    memory = driver_memory(L, &context, device, managed, values, bytes, &r);
  }
  if (!memory)
    return r != CUDA_SUCCESS
               ? luaL_error(L, "cuda_stand_in: the producer's memory: CUresult %d", (int)r)
               : luaL_error(L, "no memory for the producer");
  if (!(p = calloc(1, sizeof *p)))
    return luaL_error(L, "no memory"); /* (leaks memory: a test's last gasp) */
  p->memory = memory;
  p->from = from;
  p->context = context;
  queue_write(L, p, device, values, bytes);
  lua_pop(L, 1); /* values */
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

static int l_driver_only(lua_State *L) {
  (void)L;
  driver_only = 1;
  return 0;
}

static int l_queue(lua_State *L) {
  void *q = NULL;
  if (dlb_device_queue(L, kDLCUDA, (int)luaL_checkinteger(L, 1), &q) != DLB_OK) return lua_error(L);
  lua_pushinteger(L, (lua_Integer)(uintptr_t)q);
  return 1;
}

typedef CUresult (*begin_capture_fn)(CUstream, int);
typedef CUresult (*end_capture_fn)(CUstream, void **);
typedef CUresult (*is_capturing_fn)(CUstream, int *);

static CUstream stream_arg(lua_State *L) { return (CUstream)(uintptr_t)luaL_checkinteger(L, 1); }

static int l_capture(lua_State *L) {
  lua_pushinteger(L, CALL(L, "cuStreamBeginCapture_v2",
                          begin_capture_fn)(stream_arg(L), (int)luaL_optinteger(L, 2, 0)));
  return 1;
}

static int l_capture_status(lua_State *L) {
  int status = -1;
  CALL(L, "cuStreamIsCapturing", is_capturing_fn)(stream_arg(L), &status);
  lua_pushinteger(L, status);
  return 1;
}

static int l_end_capture(lua_State *L) {
  void *graph = NULL;
  lua_pushinteger(L, CALL(L, "cuStreamEndCapture", end_capture_fn)(stream_arg(L), &graph));
  return 1;
}

int luaopen_cuda_stand_in(lua_State *L);
static const char module_anchor = 0; /* (lua_module_pin) */

__attribute__((visibility("default"))) int luaopen_cuda_stand_in(lua_State *L) {
  lua_module_pin(&module_anchor); /* Lua 5.1 and LuaJIT would unload it first */
  static const luaL_Reg fns[] = {{"control", l_control},
                                 {"query", l_query},
                                 {"stream", l_stream},
                                 {"read", l_read},
                                 {"tensor", l_tensor},
                                 {"deleted", l_deleted},
                                 {"queue", l_queue},
                                 {"driver_only", l_driver_only},
                                 {"capture", l_capture},
                                 {"capture_status", l_capture_status},
                                 {"end_capture", l_end_capture},
                                 {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
