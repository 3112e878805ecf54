/* backend.c -- the cuda backend's vtable: devices, contexts, memory, the
 * version 1 copies, DLPack export and adoption of a producer's memory.
 *
 * Lifetime: the backend retains a device's primary context when it first
 * uses it, and each allocation and each adopted (imported) tensor holds a
 * retain of its own, released by its free or forget on whatever thread
 * that runs, after lua_close too. A free orders itself after dlbridge's
 * queued work (it drains the backend's streams first). A driver that has
 * shut down (CUDA_ERROR_DEINITIALIZED or CONTEXT_IS_DESTROYED, at process
 * exit) has freed everything: the free is done. */
#include <stdlib.h>
#include "cuda.h"

static int cuda_device_count(void *ctx) {
  dlb_cuda *c = ctx;
  const dlb_cu *cu = dlb_cu_driver(NULL);
  if (!cu) return 0;
  pthread_mutex_lock(&c->lock);
  if (!c->devices && (c->devices = calloc((size_t)cu->devices, sizeof *c->devices)) != NULL) {
    c->count = cu->devices;
    c->cu = cu;
  }
  pthread_mutex_unlock(&c->lock);
  return c->count;
}

CUcontext dlb_cuda_context(dlb_cuda *c, int device_id, CUresult *r) {
  dlb_cuda_device *d = &c->devices[device_id];
  CUcontext ctx;
  *r = CUDA_SUCCESS;
  pthread_mutex_lock(&c->lock);
  if (!d->context && (*r = c->cu->device_get(&d->device, device_id)) == CUDA_SUCCESS)
    *r = c->cu->primary_retain(&d->context, d->device);
  ctx = *r == CUDA_SUCCESS ? d->context : NULL;
  pthread_mutex_unlock(&c->lock);
  return ctx;
}

CUresult dlb_cuda_enter(dlb_cuda *c, int device_id) {
  CUresult r;
  CUcontext ctx = dlb_cuda_context(c, device_id, &r);
  return ctx ? c->cu->ctx_push(ctx) : r;
}

void dlb_cuda_leave(dlb_cuda *c) {
  CUcontext popped;
  c->cu->ctx_pop(&popped);
}

/* One more retain of the device's primary context (an allocation's or an
 * import's), or its release. */
static CUresult hold_context(dlb_cuda *c, int device_id) {
  CUcontext ctx;
  CUresult r;
  if (!dlb_cuda_context(c, device_id, &r)) return r;
  return c->cu->primary_retain(&ctx, c->devices[device_id].device);
}

static void drop_context(dlb_cuda *c, int device_id) {
  c->cu->primary_release(c->devices[device_id].device);
}

/* zeroed: cuMemsetD8Async on dlbridge's stream, waited for here, so that
 * the fresh memory needs no event. */
static CUresult zero_fill(dlb_cuda *c, int device_id, CUdeviceptr p, size_t nbytes) {
  CUstream s;
  CUresult r = dlb_cuda_stream(c, device_id, &s);
  if (r == CUDA_SUCCESS) r = c->cu->memset8(p, 0, nbytes, s);
  if (r == CUDA_SUCCESS) r = c->cu->stream_sync(s);
  return r;
}

static dlb_status cuda_allocate(void *ctx, int device_id, size_t nbytes, int zeroed,
                                void **handle) {
  dlb_cuda *c = ctx;
  CUdeviceptr p = 0;
  CUresult r = hold_context(c, device_id);
  if (r != CUDA_SUCCESS) return dlb_cuda_status(r);
  if ((r = dlb_cuda_enter(c, device_id)) != CUDA_SUCCESS) {
    drop_context(c, device_id);
    return dlb_cuda_status(r);
  }
  r = c->cu->mem_alloc(&p, nbytes);
  if (r == CUDA_SUCCESS && zeroed && (r = zero_fill(c, device_id, p, nbytes)) != CUDA_SUCCESS)
    c->cu->mem_free(p);
  dlb_cuda_leave(c);
  if (r != CUDA_SUCCESS) {
    drop_context(c, device_id);
    return dlb_cuda_status(r);
  }
  *handle = (void *)(uintptr_t)p;
  return DLB_OK;
}

static void cuda_deallocate(void *ctx, int device_id, void *handle) {
  dlb_cuda *c = ctx;
  CUresult r = dlb_cuda_drain(c);
  if (!dlb_cuda_gone(r) && dlb_cuda_enter(c, device_id) == CUDA_SUCCESS) {
    c->cu->mem_free((CUdeviceptr)(uintptr_t)handle);
    dlb_cuda_leave(c);
  }
  drop_context(c, device_id); /* after shutdown a no-op returning DEINITIALIZED */
}

/* One linear copy on dlbridge's stream of device_id, complete on return. */
static dlb_status linear(dlb_cuda *c, int device_id, CUresult (*run)(dlb_cuda *, CUstream, void *),
                         void *aux) {
  CUstream s;
  CUresult r = dlb_cuda_enter(c, device_id);
  if (r != CUDA_SUCCESS) return dlb_cuda_status(r);
  if ((r = dlb_cuda_stream(c, device_id, &s)) == CUDA_SUCCESS && (r = run(c, s, aux)) == CUDA_SUCCESS)
    r = c->cu->stream_sync(s);
  dlb_cuda_leave(c);
  return dlb_cuda_status(r);
}

typedef struct span {
  CUdeviceptr dev, dev2;
  void *host;
  size_t nbytes;
  int device_id, device_id2;
} span;

static CUresult run_dtoh(dlb_cuda *c, CUstream s, void *aux) {
  span *p = aux;
  return c->cu->dtoh(p->host, p->dev, p->nbytes, s);
}

static CUresult run_htod(dlb_cuda *c, CUstream s, void *aux) {
  span *p = aux;
  return c->cu->htod(p->dev, p->host, p->nbytes, s);
}

static CUresult run_dtod(dlb_cuda *c, CUstream s, void *aux) {
  span *p = aux;
  CUresult r;
  CUcontext dst, src;
  if (p->device_id == p->device_id2) return c->cu->dtod(p->dev, p->dev2, p->nbytes, s);
  if (!(dst = dlb_cuda_context(c, p->device_id, &r)) || !(src = dlb_cuda_context(c, p->device_id2, &r)))
    return r;
  return c->cu->peer(p->dev, dst, p->dev2, src, p->nbytes, s);
}

static dlb_status cuda_copy_to_host(void *ctx, int device_id, const void *handle, size_t offset,
                                    void *dst, size_t nbytes) {
  span p = {(CUdeviceptr)(uintptr_t)handle + offset, 0, dst, nbytes, device_id, device_id};
  return linear(ctx, device_id, run_dtoh, &p);
}

static dlb_status cuda_copy_from_host(void *ctx, int device_id, void *handle, size_t offset,
                                      const void *src, size_t nbytes) {
  span p = {(CUdeviceptr)(uintptr_t)handle + offset, 0, (void *)src, nbytes, device_id, device_id};
  return linear(ctx, device_id, run_htod, &p);
}

static dlb_status cuda_copy_within(void *ctx, int dst_device_id, void *dst_handle,
                                   size_t dst_offset, int src_device_id, const void *src_handle,
                                   size_t src_offset, size_t nbytes) {
  span p = {(CUdeviceptr)(uintptr_t)dst_handle + dst_offset,
            (CUdeviceptr)(uintptr_t)src_handle + src_offset, NULL, nbytes, dst_device_id,
            src_device_id};
  return linear(ctx, dst_device_id, run_dtod, &p);
}

static dlb_status cuda_export_pointer(void *ctx, int device_id, void *handle, void **data) {
  (void)ctx;
  (void)device_id;
  *data = handle;
  return DLB_OK;
}

/* What the driver knows of the memory at p (one cuPointerGetAttributes). */
typedef struct pointer_facts {
  unsigned int memory_type, managed;
  int ordinal;
  CUdeviceptr start;
  size_t size;
} pointer_facts;

static CUresult pointer_facts_of(dlb_cuda *c, CUdeviceptr p, pointer_facts *f) {
  CUpointer_attribute which[5] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                  CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void *into[5] = {&f->memory_type, &f->managed, &f->ordinal, &f->start, &f->size};
  f->memory_type = f->managed = 0;
  f->ordinal = -1;
  f->start = 0;
  f->size = 0;
  return c->cu->pointer_attributes(5, which, into, p);
}

/* Whether [first, end) lies in device_id's memory, by the driver's facts. */
static int covers(const pointer_facts *f, int device_id, CUdeviceptr first, CUdeviceptr end) {
  if (f->memory_type != CU_MEMORYTYPE_DEVICE && !f->managed) return 0;
  if (f->ordinal != device_id || f->size == 0 || first < f->start) return 0;
  return end - f->start <= f->size;
}

static dlb_status cuda_adopt(void *ctx, int device_id, void *data, uint64_t first, uint64_t end,
                             void **handle) {
  dlb_cuda *c = ctx;
  CUdeviceptr base = (CUdeviceptr)(uintptr_t)data, lo = base + first, hi = base + end;
  pointer_facts f;
  CUresult r;
  if (end <= first || lo < base || hi < lo) return DLB_E_DLPACK_INVALID; /* wrapped around */
  if ((r = dlb_cuda_enter(c, device_id)) != CUDA_SUCCESS) return dlb_cuda_status(r);
  r = pointer_facts_of(c, lo, &f);
  dlb_cuda_leave(c);
  if (r == CUDA_ERROR_INVALID_VALUE || (r == CUDA_SUCCESS && !covers(&f, device_id, lo, hi)))
    return DLB_E_DLPACK_INVALID;
  if (r != CUDA_SUCCESS || (r = hold_context(c, device_id)) != CUDA_SUCCESS)
    return dlb_cuda_status(r);
  *handle = data;
  return DLB_OK;
}

/* The producer frees the memory after this: dlbridge's work on it ends first. */
static void cuda_forget(void *ctx, int device_id, void *handle) {
  dlb_cuda *c = ctx;
  (void)handle;
  dlb_cuda_drain(c);
  drop_context(c, device_id);
}

static void free_stage(dlb_cuda *c) {
  if (!c->stage[0] && !c->stage[1]) return;
  if (dlb_cuda_enter(c, c->stage_device) != CUDA_SUCCESS) return;
  for (int k = 0; k < 2; k++)
    if (c->stage[k]) c->cu->host_free(c->stage[k]);
  dlb_cuda_leave(c);
}

/* The last buffer and the state are gone: streams, staging and the
 * backend's own retains go. */
static void cuda_release(void *ctx) {
  dlb_cuda *c = ctx;
  if (c->cu && !dlb_cuda_gone(dlb_cuda_drain(c))) {
    free_stage(c);
    for (int i = 0; i < c->count; i++) {
      dlb_cuda_device *d = &c->devices[i];
      if (d->stream && dlb_cuda_enter(c, i) == CUDA_SUCCESS) {
        c->cu->stream_destroy(d->stream);
        dlb_cuda_leave(c);
      }
      if (d->context) c->cu->primary_release(d->device);
    }
  }
  free(c->devices);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

static const dlb_backend_ops cuda_ops = {
    .version = DLB_BACKEND_OPS_VERSION_2,
    .name = "cuda",
    .device_type = kDLCUDA,
    .device_count = cuda_device_count,
    .allocate = cuda_allocate,
    .deallocate = cuda_deallocate,
    .copy_to_host = cuda_copy_to_host,
    .copy_from_host = cuda_copy_from_host,
    .copy_within = cuda_copy_within,
    .export_pointer = cuda_export_pointer,
    .last_status = dlb_cuda_last_status,
    .status_name = dlb_cuda_status_name,
    .release = cuda_release,
    .copy_strided = dlb_cuda_copy_strided,
    .queue = dlb_cuda_queue,
    .event_record = dlb_cuda_event_record,
    .event_wait = dlb_cuda_event_wait,
    .event_synchronize = dlb_cuda_event_synchronize,
    .event_release = dlb_cuda_event_release,
    .stream_wait = dlb_cuda_stream_wait,
    .adopt = cuda_adopt,
    .forget = cuda_forget,
    .kernels = &dlb_cuda_kernels,
};

dlb_status dlb_cuda_backend_create(dlb_backend **out, dlb_error *err) {
  dlb_cuda *c = calloc(1, sizeof *c);
  dlb_status st;
  if (!c) return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for the cuda backend");
  pthread_mutex_init(&c->lock, NULL);
  if ((st = dlb_backend_create(&cuda_ops, c, out, err)) != DLB_OK) {
    pthread_mutex_destroy(&c->lock);
    free(c);
  }
  return st;
}

const char *dlb_cuda_unavailable_reason(const dlb_backend *backend) {
  const char *reason = NULL;
  if (!backend || backend->ops.allocate != cuda_allocate) return NULL;
  return dlb_cu_driver(&reason) ? "no CUDA device could be set up" : reason;
}
