/* driver.h -- the part of the CUDA driver API the cuda backend uses, declared
 * from NVIDIA's CUDA Driver API reference (no CUDA header or toolkit is
 * needed to build), and the table of entry points driver.c loads at run time.
 *
 * The prototypes are the ABIs the reference gives for CUDA 11.3
 * (DLB_CU_API_VERSION): the _v2 forms of cuMemAlloc, cuMemFree, the copies,
 * cuCtxPushCurrent/PopCurrent, cuDevicePrimaryCtxRelease, cuStreamDestroy
 * and cuEventDestroy. driver.c asks cuGetProcAddress for that version, so
 * a newer driver hands out these ABIs and no later one. */
#ifndef DLB_BACKENDS_CUDA_DRIVER_H
#define DLB_BACKENDS_CUDA_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#define DLB_CU_API_VERSION 11030 /* 1000 * major + 10 * minor */

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2 */
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUarray_st *CUarray;

/* CUresult values the backend names or treats specially. */
enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
  CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  CUDA_ERROR_STREAM_CAPTURE_ISOLATION = 905,
  CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
  CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
  CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
  CUDA_ERROR_UNKNOWN = 999
};

/* CUmemorytype */
enum {
  CU_MEMORYTYPE_HOST = 1,
  CU_MEMORYTYPE_DEVICE = 2,
  CU_MEMORYTYPE_ARRAY = 3,
  CU_MEMORYTYPE_UNIFIED = 4
};
typedef unsigned int CUmemorytype;

/* CUpointer_attribute: CONTEXT (CUcontext), MEMORY_TYPE (unsigned int),
 * IS_MANAGED (unsigned int), DEVICE_ORDINAL (int), RANGE_START_ADDR
 * (CUdeviceptr), RANGE_SIZE (size_t). */
enum {
  CU_POINTER_ATTRIBUTE_CONTEXT = 1,
  CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
  CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12
};
typedef int CUpointer_attribute;

#define CU_STREAM_NON_BLOCKING 0x1u
#define CU_EVENT_DISABLE_TIMING 0x2u
#define CU_MEMHOSTALLOC_PORTABLE 0x1u
#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)
/* cuGetProcAddress flags: handle 0 and the entry points' default stream
 * mean the legacy default stream, as DLPack's stream 1 does. */
#define CU_GET_PROC_ADDRESS_LEGACY_STREAM 0x1u

/* CUdevice_attribute values the backend reads. */
enum { CU_DEVICE_ATTRIBUTE_MAX_PITCH = 11, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115 };
typedef int CUdevice_attribute;

/* CUstreamCaptureStatus, CUstreamCaptureMode. */
enum {
  CU_STREAM_CAPTURE_STATUS_NONE = 0,
  CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
  CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2
};
enum {
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2
};

/* CUDA_MEMCPY2D (the _v2 layout: size_t fields). */
typedef struct CUDA_MEMCPY2D {
  size_t srcXInBytes, srcY;
  CUmemorytype srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  size_t srcPitch;
  size_t dstXInBytes, dstY;
  CUmemorytype dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  size_t dstPitch;
  size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;

/* CUDA_MEMCPY3D (the _v2 layout; reserved0/1 must be NULL). */
typedef struct CUDA_MEMCPY3D {
  size_t srcXInBytes, srcY, srcZ, srcLOD;
  CUmemorytype srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  void *reserved0;
  size_t srcPitch, srcHeight;
  size_t dstXInBytes, dstY, dstZ, dstLOD;
  CUmemorytype dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  void *reserved1;
  size_t dstPitch, dstHeight;
  size_t WidthInBytes, Height, Depth;
} CUDA_MEMCPY3D;

/* The entry points, in the order driver.c resolves them (base name, the
 * _v2 symbol for dlsym). X(field, base name, symbol, return, arguments). */
#define DLB_CU_FUNCTIONS(X)                                                                        \
  X(init, cuInit, cuInit, (unsigned int flags))                                                    \
  X(driver_version, cuDriverGetVersion, cuDriverGetVersion, (int *version))                        \
  X(device_count, cuDeviceGetCount, cuDeviceGetCount, (int *count))                                \
  X(device_get, cuDeviceGet, cuDeviceGet, (CUdevice * device, int ordinal))                        \
  X(primary_retain, cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain,                            \
    (CUcontext * ctx, CUdevice device))                                                            \
  X(primary_release, cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, (CUdevice device))   \
  X(ctx_push, cuCtxPushCurrent, cuCtxPushCurrent_v2, (CUcontext ctx))                              \
  X(ctx_pop, cuCtxPopCurrent, cuCtxPopCurrent_v2, (CUcontext * ctx))                               \
  X(ctx_synchronize, cuCtxSynchronize, cuCtxSynchronize, (void))                                   \
  X(mem_alloc, cuMemAlloc, cuMemAlloc_v2, (CUdeviceptr * dptr, size_t bytes))                      \
  X(mem_free, cuMemFree, cuMemFree_v2, (CUdeviceptr dptr))                                         \
  X(host_alloc, cuMemHostAlloc, cuMemHostAlloc, (void **p, size_t bytes, unsigned int flags))      \
  X(host_free, cuMemFreeHost, cuMemFreeHost, (void *p))                                            \
  X(htod, cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2,                                                 \
    (CUdeviceptr dst, const void *src, size_t bytes, CUstream stream))                             \
  X(dtoh, cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2,                                                 \
    (void *dst, CUdeviceptr src, size_t bytes, CUstream stream))                                   \
  X(dtod, cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2,                                                 \
    (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream))                             \
  X(peer, cuMemcpyPeerAsync, cuMemcpyPeerAsync,                                                    \
    (CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t bytes,         \
     CUstream stream))                                                                             \
  X(copy2d, cuMemcpy2DAsync, cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *copy, CUstream stream))     \
  X(copy3d, cuMemcpy3DAsync, cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *copy, CUstream stream))     \
  X(memset8, cuMemsetD8Async, cuMemsetD8Async,                                                     \
    (CUdeviceptr dst, unsigned char value, size_t n, CUstream stream))                             \
  X(memset16, cuMemsetD16Async, cuMemsetD16Async,                                                  \
    (CUdeviceptr dst, unsigned short value, size_t n, CUstream stream))                            \
  X(memset32, cuMemsetD32Async, cuMemsetD32Async,                                                  \
    (CUdeviceptr dst, unsigned int value, size_t n, CUstream stream))                              \
  X(stream_create, cuStreamCreate, cuStreamCreate, (CUstream * stream, unsigned int flags))        \
  X(stream_destroy, cuStreamDestroy, cuStreamDestroy_v2, (CUstream stream))                        \
  X(stream_sync, cuStreamSynchronize, cuStreamSynchronize, (CUstream stream))                      \
  X(stream_wait_event, cuStreamWaitEvent, cuStreamWaitEvent,                                       \
    (CUstream stream, CUevent event, unsigned int flags))                                          \
  X(event_create, cuEventCreate, cuEventCreate, (CUevent * event, unsigned int flags))             \
  X(event_record, cuEventRecord, cuEventRecord, (CUevent event, CUstream stream))                  \
  X(event_sync, cuEventSynchronize, cuEventSynchronize, (CUevent event))                           \
  X(event_destroy, cuEventDestroy, cuEventDestroy_v2, (CUevent event))                             \
  X(pointer_attribute, cuPointerGetAttribute, cuPointerGetAttribute,                               \
    (void *data, CUpointer_attribute attribute, CUdeviceptr ptr))                                  \
  X(pointer_attributes, cuPointerGetAttributes, cuPointerGetAttributes,                            \
    (unsigned int n, CUpointer_attribute *attributes, void **data, CUdeviceptr ptr))               \
  X(error_name, cuGetErrorName, cuGetErrorName, (CUresult error, const char **name))               \
  X(device_attribute, cuDeviceGetAttribute, cuDeviceGetAttribute,                                  \
    (int *value, CUdevice_attribute attribute, CUdevice device))

/* Entry points the backend does without (NULL) on a driver that lacks them:
 * the stream-ordered allocator (11.2), stream capture queries (10.x). */
#define DLB_CU_OPTIONAL_FUNCTIONS(X)                                                               \
  X(mem_alloc_async, cuMemAllocAsync, cuMemAllocAsync,                                             \
    (CUdeviceptr * dptr, size_t bytes, CUstream stream))                                           \
  X(mem_free_async, cuMemFreeAsync, cuMemFreeAsync, (CUdeviceptr dptr, CUstream stream))           \
  X(stream_is_capturing, cuStreamIsCapturing, cuStreamIsCapturing, (CUstream stream, int *status)) \
  X(exchange_capture_mode, cuThreadExchangeStreamCaptureMode, cuThreadExchangeStreamCaptureMode,   \
    (int *mode))

#define DLB_CU_FIELD_(field, base, symbol, args) CUresult(*field) args;
/* The loaded driver: every entry point non-NULL, the optional ones maybe NULL. */
typedef struct dlb_cu {
  DLB_CU_FUNCTIONS(DLB_CU_FIELD_)
  DLB_CU_OPTIONAL_FUNCTIONS(DLB_CU_FIELD_)
  int devices; /* cuDeviceGetCount after cuInit */
} dlb_cu;
#undef DLB_CU_FIELD_

/* The driver, loaded once per process on the first call (any thread):
 * NULL when it cannot be used here, with *reason (static text, or text kept
 * for the process's life) saying why. */
const dlb_cu *dlb_cu_driver(const char **reason);

/* The CUDA name of an error ("CUDA_ERROR_OUT_OF_MEMORY"), or "CUDA error"
 * when the driver cannot name it. Never NULL. */
const char *dlb_cu_error_name(CUresult r);

#endif
