/* dlpack.h -- DLPack export and import of core arrays, both ABIs. No Lua here. */
#ifndef DLB_CORE_DLPACK_H
#define DLB_CORE_DLPACK_H

#include "array.h"
#include "backend.h"

/* The Python array API's copy argument. */
typedef enum dlb_copy_mode {
  DLB_COPY_IF_NEEDED = -1,
  DLB_COPY_NEVER = 0,
  DLB_COPY_ALWAYS = 1
} dlb_copy_mode;

/* What a consumer asks of an export (to_dlpack's options). */
typedef struct dlb_export_request {
  int versioned; /* 1: DLManagedTensorVersioned, 0: legacy DLManagedTensor */
  dlb_copy_mode copy;
  int has_dl_device; /* dl_device names the device the consumer wants */
  DLDevice dl_device;
  int fallback_host; /* export a host copy when the backend has no export hook */
  dlb_backend *host; /* the backend that holds host copies (cpu) */
  int32_t layout;    /* a dlb_layout (dlbridge.h): copies what does not have it */
  int has_stream;    /* the consumer's stream, as the DLPack protocol passes it: */
  int64_t stream;    /* made to wait for the work pending on what is exported */
} dlb_export_request;

/* An exported tensor: a DLManagedTensorVersioned* or a DLManagedTensor*. */
typedef struct dlb_exported {
  int versioned;
  void *tensor;
} dlb_exported;

/*
 * Exports a (which keeps its own hold): the tensor shares a's buffer unless a
 * copy is needed or asked for (then IS_COPIED). Strides are always filled and
 * never normalised; data is never NULL (a size-0 tensor points at a static,
 * 64-byte aligned block); bool goes out as {6, 8, 1}; a read-only array gets
 * READ_ONLY, and as a legacy tensor (which has no such flag) it is copied.
 * An array without the requested layout is copied. A backend without export_pointer raises
 * DLB_E_BACKEND_INCOMPATIBLE unless fallback_host. COPY_NEVER where only a
 * copy would do: DLB_E_COPY_REQUIRED. The consumer's stream (has_stream,
 * stream; -1: no ordering) is made to wait for the work queued on what is
 * exported (event.h), never blocking the host; a stream given for a
 * backend without streams is DLB_E_ARGUMENT (with a dl_device of another
 * device the stream is that device's: the copy made there is ordered on it,
 * a host copy ignores it; a dl_device no copy reaches is DLB_E_UNSUPPORTED). The deleter drops the buffer
 * reference on any thread and never touches Lua.
 */
dlb_status dlb_dlpack_export(const dlb_array *a, const dlb_export_request *req, dlb_exported *out,
                             dlb_error *err);

/* Fills t (shape and strides pointing at the caller's arrays of a->ndim
 * entries) to describe a's memory as an export would, without taking a
 * reference. BACKEND_INCOMPATIBLE (or the backend's failure) when the
 * backend cannot hand out a pointer to non-empty memory. */
dlb_status dlb_dlpack_describe(const dlb_array *a, DLTensor *t, int64_t *shape, int64_t *strides,
                               dlb_error *err);

/* Calls the tensor's deleter, if it has one (either ABI). */
void dlb_dlpack_delete(dlb_exported tensor);

/*
 * Takes ownership of a producer's tensor and makes out a zero-copy array:
 * dlbridge's own exports come back on their buffer (any backend); other
 * producers' host-reachable memory (CPU, CUDAHost, CUDAManaged, ROCMHost)
 * lands on the host backend unless the registry has a backend of that
 * device type that adopts foreign memory; memory of any other device type
 * is adopted by the registry's backend of that type (its adopt hook checks
 * the pointer). Validates everything a hostile producer could send.
 * Strides that reach no element (extent-1 dims, every dim of a size-0
 * tensor) become the compact row-major ones, except those of our own
 * exports as exported; a tensor whose elements may overlap (see
 * may_overlap in dlpack.c) is read-only, like a READ_ONLY one. On failure
 * the deleter has been called exactly once and out is released:
 * DLB_E_DLPACK_VERSION (major != 1: only version and deleter, with its
 * manager_ctx, are read), DLB_E_DLPACK_INVALID (malformed),
 * DLB_E_DTYPE (a type dlbridge has no dtype for), DLB_E_DEVICE_UNAVAILABLE
 * (no backend of the device type adopts foreign memory, or its adopt said
 * so), or the adopt hook's refusal.
 */
dlb_status dlb_dlpack_import(dlb_exported tensor, dlb_backend *host,
                             const struct dlb_registry *registry, dlb_array *out, dlb_error *err);
/* The same, for the host's own memory when host_owned (dlb_push_external):
 * its bytes are held in the budget, never charged against the limit. */
dlb_status dlb_dlpack_import_as(dlb_exported tensor, dlb_backend *host,
                                const struct dlb_registry *registry, int host_owned, dlb_array *out,
                                dlb_error *err);

/* The bytes dlb_dlpack_import would charge for t (the memory a foreign
 * tensor reaches); 0 for dlbridge's own exports (already counted) and for
 * tensors the import would refuse. Takes nothing: t stays the caller's. */
size_t dlb_dlpack_import_size(dlb_exported t);

/* Whether a device type's memory can be read by the CPU. */
int dlb_dlpack_host_reachable(int32_t device_type);

#endif
