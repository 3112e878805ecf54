/* engine.c -- the "engine" backend of the host demo, and its native consumer.
 *
 * The backend keeps each allocation in a slot table and hands dlbridge only
 * the slot number: like a renderer's GPU resources, its memory cannot be
 * addressed from outside, so it has no export hook and no host pointer.
 * dlbridge reaches it only through copy_to_host / copy_from_host, and
 * exporting its arrays to DLPack raises BACKEND_INCOMPATIBLE. */
#include "engine.h"

#include <lauxlib.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dlbridge.h"

#define ENGINE_SLOTS 1024

typedef struct engine {
  pthread_mutex_t lock; /* deallocate may run on any thread (DLPack deleters) */
  void *slots[ENGINE_SLOTS];
} engine;

static engine the_engine = {PTHREAD_MUTEX_INITIALIZER, {0}};

/* The memory of a handle (slot number + 1). */
static char *slot_memory(engine *e, const void *handle) {
  uintptr_t k = (uintptr_t)handle;
  char *p;
  pthread_mutex_lock(&e->lock);
  p = k >= 1 && k <= ENGINE_SLOTS ? e->slots[k - 1] : NULL;
  pthread_mutex_unlock(&e->lock);
  return p;
}

static int engine_device_count(void *ctx) { return 1; }

static dlb_status engine_allocate(void *ctx, int device, size_t nbytes, int zeroed, void **handle) {
  engine *e = ctx;
  void *p = zeroed ? calloc(1, nbytes) : malloc(nbytes);
  if (!p) return DLB_E_OUT_OF_MEMORY;
  pthread_mutex_lock(&e->lock);
  for (uintptr_t k = 0; k < ENGINE_SLOTS; k++)
    if (!e->slots[k]) {
      e->slots[k] = p;
      pthread_mutex_unlock(&e->lock);
      *handle = (void *)(k + 1);
      return DLB_OK;
    }
  pthread_mutex_unlock(&e->lock);
  free(p);
  return DLB_E_OUT_OF_MEMORY;
}

static void engine_deallocate(void *ctx, int device, void *handle) {
  engine *e = ctx;
  uintptr_t k = (uintptr_t)handle - 1;
  pthread_mutex_lock(&e->lock);
  free(e->slots[k]);
  e->slots[k] = NULL;
  pthread_mutex_unlock(&e->lock);
}

static dlb_status engine_to_host(void *ctx, int device, const void *handle, size_t offset,
                                 void *dst, size_t nbytes) {
  memcpy(dst, slot_memory(ctx, handle) + offset, nbytes);
  return DLB_OK;
}

static dlb_status engine_from_host(void *ctx, int device, void *handle, size_t offset,
                                   const void *src, size_t nbytes) {
  memcpy(slot_memory(ctx, handle) + offset, src, nbytes);
  return DLB_OK;
}

int engine_register(lua_State *L) {
  static const dlb_backend_ops ops = {
      .version = DLB_BACKEND_OPS_VERSION,
      .name = "engine",
      .device_type = kDLExtDev,
      .device_count = engine_device_count,
      .allocate = engine_allocate,
      .deallocate = engine_deallocate,
      .copy_to_host = engine_to_host,
      .copy_from_host = engine_from_host,
      /* no export_pointer, no host_pointer: nothing leaves the engine */
  };
  return dlb_register_backend(L, &ops, &the_engine) == DLB_OK ? 0 : -1;
}

/* Element k (row-major) of a host DLPack tensor, as a double. */
static double element(const DLTensor *t, int64_t k, int *ok) {
  int64_t off = 0;
  if (!t->strides) {
    off = k; /* NULL strides: compact row-major */
  } else {
    for (int d = t->ndim - 1; d >= 0; d--) {
      off += (k % t->shape[d]) * t->strides[d];
      k /= t->shape[d];
    }
  }
  const char *p = (const char *)t->data + t->byte_offset;
  *ok = 1;
  switch (t->dtype.code * 1000 + t->dtype.bits) {
    case kDLFloat * 1000 + 32: return ((const float *)p)[off];
    case kDLFloat * 1000 + 64: return ((const double *)p)[off];
    case kDLInt * 1000 + 32: return ((const int32_t *)p)[off];
    case kDLInt * 1000 + 64: return (double)((const int64_t *)p)[off];
    case kDLUInt * 1000 + 8: return ((const uint8_t *)p)[off];
    default: *ok = 0; return 0;
  }
}

/* engine.analyze(capsule) -> {count=, min=, max=, mean=}: a native consumer
 * that takes a DLPack tensor, reads it in place, and gives it back. */
static int engine_analyze(lua_State *L) {
  void *tensor;
  int versioned, ok = 1;
  DLTensor *t;
  int64_t n = 1;
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  if (dlb_capsule_take(L, 1, &tensor, &versioned) != DLB_OK) return lua_error(L);
  t = versioned ? &((DLManagedTensorVersioned *)tensor)->dl_tensor
                : &((DLManagedTensor *)tensor)->dl_tensor;
  if (t->device.device_type != kDLCPU) ok = 0;
  for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
  for (int64_t k = 0; ok && k < n; k++) {
    double x = element(t, k, &ok);
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
    sum += x;
  }
  /* The consumer owns the tensor now: give it back exactly once. */
  if (versioned) {
    DLManagedTensorVersioned *v = tensor;
    if (v->deleter) v->deleter(v);
  } else {
    DLManagedTensor *l = tensor;
    if (l->deleter) l->deleter(l);
  }
  if (!ok)
    dlb_raise(L, DLB_E_UNSUPPORTED, "engine.analyze",
              "export float32/float64/int32/int64/uint8 from cpu",
              "engine.analyze reads host tensors of a few dtypes only");
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, (lua_Integer)n);
  lua_setfield(L, -2, "count");
  lua_pushnumber(L, n ? lo : 0);
  lua_setfield(L, -2, "min");
  lua_pushnumber(L, n ? hi : 0);
  lua_setfield(L, -2, "max");
  lua_pushnumber(L, n ? sum / (double)n : 0);
  lua_setfield(L, -2, "mean");
  return 1;
}

void engine_open_consumer(lua_State *L) {
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, engine_analyze);
  lua_setfield(L, -2, "analyze");
  lua_setglobal(L, "engine");
}
