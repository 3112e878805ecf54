/* stand_in_driver.h -- the control interface of the stand-in CUDA driver
 * (tests/cuda/stand_in_driver.c), for tests that dlopen it by the path in
 * DLB_CUDA_DRIVER (the same handle the backend loaded).
 *
 * standin_control(key, value) -> 0, or -1 for an unknown key:
 *   "fail_alloc" n   the next n cuMemAlloc/cuMemHostAlloc return OUT_OF_MEMORY
 *   "fail_copy" n    the next n copies and memsets return CUDA_ERROR_UNKNOWN (999)
 *   "fail_free" n    the next n cuMemFree/cuMemFreeAsync return CUDA_ERROR_UNKNOWN
 *   "max_pitch" n    CU_DEVICE_ATTRIBUTE_MAX_PITCH (default 2^31 - 1): 2D/3D copies refuse more
 *   "pools" 0|1      CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED (default 1); 0: cuMemAllocAsync
 *                    returns NOT_SUPPORTED
 *   "strict_2d" 0|1  2D/3D copies within device memory refuse pitches not a multiple of 512
 *   "deinit" 1       from now on every call returns DEINITIALIZED (4), as at exit
 *   "delay_us" n     each queued operation first waits n/2 to n microseconds
 *   "poison" 0|1     fill destinations with 0xCD when work is queued (default 1)
 *   "reset_counts" 0 zero the call counters
 * standin_query(key) -> a count:
 *   "calls:NAME"     calls of the entry point NAME (e.g. "calls:cuStreamWaitEvent")
 *   "live_allocations", "live_bytes"  device and pinned memory not yet freed
 *   "retains:N"      the primary context retains of device N
 *   "pending"        queued operations not yet run, over all streams
 *   "events_live", "streams_live"
 *   "getproc_lookups", "getproc_not_legacy"  cuGetProcAddress(_v2) calls since load, and
 *                    those without CU_GET_PROC_ADDRESS_LEGACY_STREAM (reset_counts spares them)
 *   "early_frees"    stream-ordered frees that ran while other streams' queued work used the block
 *   "captured_ops"   operations recorded by stream captures (never run)
 * Environment (read at load): STANDIN_DELAY_US (default 300), STANDIN_POISON
 * (default 1), STANDIN_DEVICE_BYTES (per device, default 1 GiB),
 * STANDIN_DEINIT_AT_EXIT=1 (DEINITIALIZED from the library's destructor on),
 * STANDIN_GETPROC=v2|v1|none (which cuGetProcAddress answers), STANDIN_LOG=path
 * (one line per call appended). */
#ifndef DLB_TESTS_STAND_IN_DRIVER_H
#define DLB_TESTS_STAND_IN_DRIVER_H

#include <stddef.h>

typedef int (*standin_control_fn)(const char *key, long long value);
typedef long long (*standin_query_fn)(const char *key);
/* Memory of a foreign producer, outside any context: kind 2 device, 4
 * managed (the CUmemorytype numbers); freed by standin_free. */
typedef void *(*standin_alloc_fn)(int device, size_t nbytes, int kind);
typedef void (*standin_free_fn)(void *p);

#endif
