/* error.c -- status names, default hints, and filling a dlb_error. */
#include <stdarg.h>
#include <stdio.h>
#include "error.h"

/* "OK", then each row of DLB_STATUS_CODES (dlbridge.h) by its value. */
#define STATUS_NAME(NAME) [DLB_E_##NAME] = #NAME,
static const char *const status_names[DLB_STATUS_COUNT] = {[DLB_OK] = "OK",
                                                           DLB_STATUS_CODES(STATUS_NAME)};
#undef STATUS_NAME

/* Every failure's hint, by code (tests/c/test_status_codes.c checks that none is missing). */
static const char *const default_hints[DLB_STATUS_COUNT] = {
    [DLB_E_BACKEND_INCOMPATIBLE] =
        "move it to an exportable backend first (dl.device_put(a, \"cpu\")), or export with "
        "to_dlpack{fallback = \"cpu\"}",
    [DLB_E_DELETED] = "the array was deleted or donated; keep another reference or copy it first",
    [DLB_E_CAPSULE_CONSUMED] = "a capsule can be consumed once; export the array again",
    [DLB_E_UNKNOWN_DEVICE] = "dl.backends() lists the backends and their devices",
    [DLB_E_DEVICE_UNAVAILABLE] = "dl.backends() tells which backends are available here",
    [DLB_E_DTYPE] = "dtypes: bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 "
                    "bfloat16 float32 float64 complex64 complex128",
    [DLB_E_SHAPE] = "a shape is a table of non-negative integers, {2, 3}, or the same integers as "
                    "separate arguments, dl.zeros(2, 3)",
    [DLB_E_INDEX] = "indices are 1-based; -1 is the last element; 0 is never valid",
    [DLB_E_VALUE] = "convert the value first, or pick a dtype that holds it",
    [DLB_E_COPY_REQUIRED] = "allow a copy: copy = nil (only if needed) or copy = true",
    [DLB_E_READ_ONLY] = "write to a copy: a:copy()",
    [DLB_E_DLPACK_VERSION] = "the producer must export DLPack major version 1 or 0",
    [DLB_E_DLPACK_INVALID] = "the producer sent a malformed DLPack tensor",
    [DLB_E_UNSUPPORTED] = "move the array to \"cpu\" first: dl.device_put(a, \"cpu\")",
    [DLB_E_OUT_OF_MEMORY] = "free arrays you no longer need (a:delete()) or use smaller ones",
    [DLB_E_BACKEND_FAILURE] = "the backend's own status code is in err.status",
    /* The fallback: the binding gives every ARGUMENT error a hint of its own. */
    [DLB_E_ARGUMENT] = "check the argument types against the documentation",
    [DLB_E_IO] = "check the path and its permissions; err.status is the system's errno",
    [DLB_E_FORMAT] = "the file is not a valid .npy or safetensors file (truncated or corrupt?)",
    [DLB_E_INTERRUPTED] = "the host bounds how long dlbridge may work: do less in one call, or "
                          "let the host resume you",
    [DLB_E_LINALG] = "the matrix is singular, not positive definite, or holds NaN or inf: check "
                     "it (dl.linalg.lstsq solves singular systems in the least-squares sense)",
};

DLB_API const char *dlb_status_name(dlb_status status) {
  if ((unsigned)status >= DLB_STATUS_COUNT) return "UNKNOWN";
  return status_names[status];
}

const char *dlb_default_hint(dlb_status code) {
  if ((unsigned)code >= DLB_STATUS_COUNT) return NULL;
  return default_hints[code];
}

dlb_status dlb_fail(dlb_error *err, dlb_status code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    err->code = code;
    err->has_native = 0;
    err->native_status = 0;
    err->hint = NULL;
    err->backend[0] = '\0';
    err->device[0] = '\0';
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return code;
}

void dlb_error_hint(dlb_error *err, const char *hint) {
  if (err) err->hint = hint;
}

dlb_status dlb_kernel_error_from(dlb_kernel_error *ke, const dlb_error *err) {
  snprintf(ke->message, sizeof ke->message, "%s", err->message);
  ke->hint = err->hint;
  return err->code;
}
