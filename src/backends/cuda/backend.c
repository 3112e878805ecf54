/* backend.c -- the cuda backend's vtable: devices, contexts, memory, the
 * version 1 copies, DLPack export and adoption of a producer's memory.
 *
 * Lifetime: the backend retains a device's primary context when it first
 * uses it, and each allocation and each adopted (imported) tensor holds a
 * retain of its own, released by its free or forget on whatever thread
 * that runs, after lua_close too.
 *
 * Memory: where the device has the stream-ordered allocator (memory pools,
 * CUDA 11.2+), an allocation is cuMemAllocAsync on dlbridge's stream and
 * zeroing a cuMemsetD8Async after it: the host never waits. Its free is
 * cuMemFreeAsync on that stream, after the work queued on dlbridge's
 * streams of the other devices, unless the allocation was ever exported:
 * a DLPack consumer's reads are queued on streams dlbridge does not know,
 * so that free waits for the whole device (cuCtxSynchronize) first. Without
 * pools: cuMemAlloc, and cuMemFree after draining dlbridge's streams. A
 * free the driver refuses is kept and tried again (dlb_cuda_deferred);
 * one that a driver shut down at process exit (CUDA_ERROR_DEINITIALIZED or
 * CONTEXT_IS_DESTROYED) answers is done: it freed everything. */
#include <stdint.h>
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

/* What the backend reads of a device once (under lock). */
static void read_device_facts(dlb_cuda *c, dlb_cuda_device *d) {
  int pools = 0;
  const dlb_cu *cu = c->cu;
  d->pools = cu->mem_alloc_async && cu->mem_free_async &&
             cu->device_attribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, d->device) ==
                 CUDA_SUCCESS &&
             pools == 1;
}

CUcontext dlb_cuda_context(dlb_cuda *c, int device_id, CUresult *r) {
  dlb_cuda_device *d = &c->devices[device_id];
  CUcontext ctx;
  *r = CUDA_SUCCESS;
  pthread_mutex_lock(&c->lock);
  if (!d->context && (*r = c->cu->device_get(&d->device, device_id)) == CUDA_SUCCESS &&
      (*r = c->cu->primary_retain(&d->context, d->device)) == CUDA_SUCCESS)
    read_device_facts(c, d);
  ctx = *r == CUDA_SUCCESS ? d->context : NULL;
  pthread_mutex_unlock(&c->lock);
  return ctx;
}

static _Thread_local int entered;    /* dlb_cuda_enter depth on this thread */
static _Thread_local int saved_mode; /* its capture mode before the outermost; -1: untouched */

CUresult dlb_cuda_enter(dlb_cuda *c, int device_id) {
  CUresult r;
  CUcontext ctx = dlb_cuda_context(c, device_id, &r);
  if (!ctx || (r = c->cu->ctx_push(ctx)) != CUDA_SUCCESS) return r;
  if (entered++ == 0) {
    saved_mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (!c->cu->exchange_capture_mode || c->cu->exchange_capture_mode(&saved_mode) != CUDA_SUCCESS)
      saved_mode = -1;
  }
  return CUDA_SUCCESS;
}

void dlb_cuda_leave(dlb_cuda *c) {
  CUcontext popped;
  if (--entered == 0 && saved_mode >= 0) c->cu->exchange_capture_mode(&saved_mode);
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

/* Frees p of device_id, as the file's comment says (context not pushed). */
static CUresult free_memory(dlb_cuda *c, int device_id, CUdeviceptr p, int exported) {
  CUstream s = NULL;
  CUresult r;
  if (!c->devices[device_id].pools && dlb_cuda_gone(r = dlb_cuda_drain(c))) return r;
  if ((r = dlb_cuda_enter(c, device_id)) != CUDA_SUCCESS) return r;
  if (!c->devices[device_id].pools) r = c->cu->mem_free(p);
  else if (exported) r = (r = c->cu->ctx_synchronize()) == CUDA_SUCCESS ? c->cu->mem_free(p) : r;
  else if ((r = dlb_cuda_stream(c, device_id, &s)) == CUDA_SUCCESS &&
           (r = dlb_cuda_after_others(c, device_id, s)) == CUDA_SUCCESS)
    r = c->cu->mem_free_async(p, s);
  dlb_cuda_leave(c);
  return r;
}

/* Whether p was exported, forgetting it (under lock). */
static int take_export(dlb_cuda *c, CUdeviceptr p) {
  for (size_t i = 0; i < c->nexported; i++)
    if (c->exported[i] == p) {
      c->exported[i] = c->exported[--c->nexported];
      return 1;
    }
  return 0;
}

/* A free the driver refused: kept, with its context retain (0 when even
 * that cannot be: the memory stays the driver's until the context goes). */
static int defer_free(dlb_cuda *c, int device_id, CUdeviceptr p) {
  dlb_cuda_deferred *d = malloc(sizeof *d);
  if (!d) return 0;
  d->device_id = device_id;
  d->p = p;
  pthread_mutex_lock(&c->lock);
  d->next = c->deferred;
  c->deferred = d;
  pthread_mutex_unlock(&c->lock);
  return 1;
}

/* Frees p and lets go of its context retain, or keeps it for later. */
static void free_or_defer(dlb_cuda *c, int device_id, CUdeviceptr p, int exported) {
  CUresult r = free_memory(c, device_id, p, exported);
  if (r != CUDA_SUCCESS && !dlb_cuda_gone(r) && defer_free(c, device_id, p)) return;
  drop_context(c, device_id); /* after shutdown a no-op returning DEINITIALIZED */
}

/* Tries the refused frees once more (each waits for its device). */
static void retry_deferred(dlb_cuda *c) {
  dlb_cuda_deferred *list;
  pthread_mutex_lock(&c->lock);
  list = c->deferred;
  c->deferred = NULL;
  pthread_mutex_unlock(&c->lock);
  while (list) {
    dlb_cuda_deferred *d = list;
    list = d->next;
    free_or_defer(c, d->device_id, d->p, 1);
    free(d);
  }
}

/* New memory of device_id (context pushed), zeroed when asked: both on
 * dlbridge's stream where the device has memory pools, the host waiting
 * for neither (every use of the memory is ordered after that stream). */
static CUresult allocate_memory(dlb_cuda *c, int device_id, size_t nbytes, int zeroed,
                                CUdeviceptr *p) {
  int pools = c->devices[device_id].pools;
  CUstream s;
  CUresult r = dlb_cuda_stream(c, device_id, &s);
  if (r != CUDA_SUCCESS) return r;
  if ((r = pools ? c->cu->mem_alloc_async(p, nbytes, s) : c->cu->mem_alloc(p, nbytes)) !=
          CUDA_SUCCESS ||
      !zeroed || (r = c->cu->memset8(*p, 0, nbytes, s)) == CUDA_SUCCESS)
    return r;
  if (pools) c->cu->mem_free_async(*p, s);
  else c->cu->mem_free(*p);
  return r;
}

static dlb_status cuda_allocate(void *ctx, int device_id, size_t nbytes, int zeroed,
                                void **handle) {
  dlb_cuda *c = ctx;
  CUdeviceptr p = 0;
  CUresult r;
  if (c->deferred) retry_deferred(c); /* a racy peek: the next call sees what it misses */
  if ((r = hold_context(c, device_id)) != CUDA_SUCCESS) return dlb_cuda_status(r);
  if ((r = dlb_cuda_enter(c, device_id)) != CUDA_SUCCESS) {
    drop_context(c, device_id);
    return dlb_cuda_status(r);
  }
  r = allocate_memory(c, device_id, nbytes, zeroed, &p);
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
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)handle;
  int exported;
  if (c->deferred) retry_deferred(c); /* earlier refusals first (a racy peek, as in allocate) */
  pthread_mutex_lock(&c->lock);
  exported = take_export(c, p);
  pthread_mutex_unlock(&c->lock);
  free_or_defer(c, device_id, p, exported);
}

/* One linear copy on dlbridge's stream of device_id, complete on return. */
static dlb_status linear(dlb_cuda *c, int device_id, CUresult (*run)(dlb_cuda *, CUstream, void *),
                         void *aux) {
  CUstream s;
  CUresult r = dlb_cuda_enter(c, device_id);
  if (r != CUDA_SUCCESS) return dlb_cuda_status(r);
  if ((r = dlb_cuda_stream(c, device_id, &s)) == CUDA_SUCCESS &&
      (r = run(c, s, aux)) == CUDA_SUCCESS)
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
  if (!(dst = dlb_cuda_context(c, p->device_id, &r)) ||
      !(src = dlb_cuda_context(c, p->device_id2, &r)))
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
            (CUdeviceptr)(uintptr_t)src_handle + src_offset,
            NULL,
            nbytes,
            dst_device_id,
            src_device_id};
  return linear(ctx, dst_device_id, run_dtod, &p);
}

/* The pointer itself; the allocation is noted as exported (its free then
 * waits for the device). */
static dlb_status cuda_export_pointer(void *ctx, int device_id, void *handle, void **data) {
  dlb_cuda *c = ctx;
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)handle;
  dlb_status st = DLB_OK;
  size_t i;
  (void)device_id;
  pthread_mutex_lock(&c->lock);
  for (i = 0; i < c->nexported && c->exported[i] != p; i++) continue;
  if (i == c->nexported) {
    if (c->nexported == c->exported_cap) {
      size_t cap = c->exported_cap ? 2 * c->exported_cap : 16;
      CUdeviceptr *grown = realloc(c->exported, cap * sizeof *grown);
      if (grown) c->exported = grown, c->exported_cap = cap;
    }
    if (c->nexported < c->exported_cap) c->exported[c->nexported++] = p;
    else st = DLB_E_OUT_OF_MEMORY;
  }
  pthread_mutex_unlock(&c->lock);
  if (st == DLB_OK) *data = handle;
  return st;
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
  if (c->deferred) retry_deferred(c);
  while (c->deferred) { /* refused again: the contexts' last release takes the memory */
    dlb_cuda_deferred *d = c->deferred;
    c->deferred = d->next;
    drop_context(c, d->device_id);
    free(d);
  }
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
  free(c->exported);
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
