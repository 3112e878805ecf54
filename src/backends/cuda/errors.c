/* errors.c -- CUresult to dlbridge codes. OUT_OF_MEMORY for
 * CUDA_ERROR_OUT_OF_MEMORY; DEVICE_UNAVAILABLE when there is no usable
 * device or driver; BACKEND_FAILURE for the rest. The CUresult itself is
 * the error's `status` (last_status), kept per thread, since frees run on
 * any thread. */
#include "cuda.h"

static _Thread_local CUresult last;

static dlb_status code_of(CUresult r) {
  switch (r) {
    case CUDA_SUCCESS: return DLB_OK;
    case CUDA_ERROR_OUT_OF_MEMORY: return DLB_E_OUT_OF_MEMORY;
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_INSUFFICIENT_DRIVER:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: return DLB_E_DEVICE_UNAVAILABLE;
    default: return DLB_E_BACKEND_FAILURE;
  }
}

dlb_status dlb_cuda_status(CUresult r) {
  if (r != CUDA_SUCCESS) last = r;
  return code_of(r);
}

int64_t dlb_cuda_last_status(void *ctx) {
  (void)ctx;
  return (int64_t)last;
}

const char *dlb_cuda_status_name(void *ctx, int64_t status) {
  (void)ctx;
  return status ? dlb_cu_error_name((CUresult)status) : NULL;
}

/* DEINITIALIZED and CONTEXT_IS_DESTROYED: the driver shut down at exit;
 * NOT_INITIALIZED: a child forked after cuInit (the driver initialised
 * nothing there; its memory is the parent's). */
int dlb_cuda_gone(CUresult r) {
  return r == CUDA_ERROR_DEINITIALIZED || r == CUDA_ERROR_CONTEXT_IS_DESTROYED ||
         r == CUDA_ERROR_NOT_INITIALIZED;
}
