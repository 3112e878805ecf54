/* cuda.h -- the cuda backend as the rest of the library sees it (its
 * constructor and the reason it is unavailable), and what its files share.
 *
 * One backend object per lua_State (host_state.c registers it as "cuda");
 * the driver is one per process (driver.c). Handles are device pointers:
 * an allocation's (cuMemAlloc) or an adopted producer's, so offsets from
 * a handle are plain address arithmetic. Every hook pushes the device's
 * primary context around its driver calls and pops it after. */
#ifndef DLB_BACKENDS_CUDA_H
#define DLB_BACKENDS_CUDA_H

#include <pthread.h>
#include "../../core/backend.h"
#include "driver.h"

/* A cuda backend object for a lua_State (lazily loads nothing: the driver
 * is opened on the first device_count). */
dlb_status dlb_cuda_backend_create(dlb_backend **out, dlb_error *err);
/* Why backend has no devices here, when it is a cuda backend (static text
 * or text kept for the process's life); NULL for any other backend. */
const char *dlb_cuda_unavailable_reason(const dlb_backend *backend);

/* The pinned staging buffers of strided copies (strided.c). */
#define DLB_CUDA_STAGE_BYTES ((size_t)4 << 20)

/* dlbridge's state on one device: its primary context (retained once by
 * the backend when first used), its non-blocking stream, and whether it
 * has memory pools (read with the context). */
typedef struct dlb_cuda_device {
  CUdevice device;
  CUcontext context; /* NULL until first used */
  CUstream stream;   /* NULL until first used */
  int pools;         /* the stream-ordered allocator (cuMemAllocAsync) is used */
} dlb_cuda_device;

/* A free the driver refused (during another thread's capture, say): kept,
 * with its context retain, and tried again by the next allocation, free
 * or release, never dropped while the driver lives. */
typedef struct dlb_cuda_deferred {
  int device_id;
  CUdeviceptr p;
  struct dlb_cuda_deferred *next;
} dlb_cuda_deferred;

typedef struct dlb_cuda {
  pthread_mutex_t lock; /* guards devices[] (deallocate, forget: any thread) */
  const dlb_cu *cu;     /* set once the driver is loaded with devices */
  int count;
  dlb_cuda_device *devices;
  void *stage[2];   /* pinned, DLB_CUDA_STAGE_BYTES each; the Lua thread's */
  int stage_device; /* the device whose context allocated them */
  /* Under lock: allocations handed to a DLPack consumer (their free waits
   * for the whole device: a consumer's queued reads are not ordered on
   * dlbridge's streams), and refused frees. */
  CUdeviceptr *exported;
  size_t nexported, exported_cap;
  dlb_cuda_deferred *deferred;
} dlb_cuda;

/* --- errors.c --- */
/* Maps r to a dlbridge code and keeps it as this thread's last_status. */
dlb_status dlb_cuda_status(CUresult r);
/* The backend's last_status hook: the CUresult of this thread's last failure. */
int64_t dlb_cuda_last_status(void *ctx);
/* Its status_name: the CUDA name of a CUresult (driver.h's dlb_cu_error_name). */
const char *dlb_cuda_status_name(void *ctx, int64_t status);
/* Whether r means the driver is gone (shut down at exit, or a forked
 * child's): a free is done. */
int dlb_cuda_gone(CUresult r);

/* --- backend.c --- */
/* The device's context, retained by the backend on first use (NULL with
 * *r set on failure). */
CUcontext dlb_cuda_context(dlb_cuda *c, int device_id, CUresult *r);
/* Pushes the device's context, and sets this thread's stream capture mode
 * to RELAXED (restored by the matching leave): dlbridge's allocations,
 * frees and waits never touch a capturing stream, so another thread's (or
 * a framework's) graph capture neither refuses them nor is invalidated by
 * them, as NCCL and CuPy's allocator do. CUDA_SUCCESS or the failure. */
CUresult dlb_cuda_enter(dlb_cuda *c, int device_id);
/* Pops what dlb_cuda_enter pushed. */
void dlb_cuda_leave(dlb_cuda *c);

/* --- streams.c: dlbridge's queues, events and the consumer's stream --- */
/* dlbridge's stream on the device, made on first use (context pushed). */
CUresult dlb_cuda_stream(dlb_cuda *c, int device_id, CUstream *out);
/* Waits for every stream dlbridge made in c (any thread: the frees). */
CUresult dlb_cuda_drain(dlb_cuda *c);
/* Makes stream wait on the device for the work queued so far on dlbridge's
 * streams of the other devices (context of stream's device pushed). */
CUresult dlb_cuda_after_others(dlb_cuda *c, int device_id, CUstream stream);
void *dlb_cuda_queue(void *ctx, int device_id);
dlb_status dlb_cuda_event_record(void *ctx, int device_id, void *queue, void **event);
dlb_status dlb_cuda_event_wait(void *ctx, int device_id, void *queue, void *event);
dlb_status dlb_cuda_event_synchronize(void *ctx, int device_id, void *event);
void dlb_cuda_event_release(void *ctx, int device_id, void *event);
dlb_status dlb_cuda_stream_wait(void *ctx, int device_id, int has_stream, int64_t stream,
                                void *event);

/* --- strided.c --- */
dlb_status dlb_cuda_copy_strided(void *ctx, const dlb_strided_copy *copy);

/* --- kernels.c --- */
extern const dlb_kernels dlb_cuda_kernels;

#endif
