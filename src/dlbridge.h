/*
 * dlbridge.h -- the C API of dlbridge, the only header an embedding host includes.
 *
 * Invariants, stated once:
 * - Every function that can fail returns a dlb_status; DLB_OK is 0. The names
 *   match the Lua error codes: DLB_E_SHAPE is the code "SHAPE".
 * - A lua_State is used by one thread at a time. Buffers are refcounted with
 *   atomics; a backend's deallocate and release may run on any thread, at any
 *   time, even after lua_close, and never touch Lua.
 * - This header needs no <lua.h>: lua_State is only forward-declared, so the
 *   Lua-free core (src/core) shares these declarations.
 */
#ifndef DLBRIDGE_H
#define DLBRIDGE_H

#include <stddef.h>
#include <stdint.h>
#include "dlpack_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the functions a shared libdlbridge exports. */
#if defined(__GNUC__)
#define DLB_API __attribute__((visibility("default")))
#else
#define DLB_API
#endif

typedef struct lua_State lua_State;

/* The library's version, as the Lua side's dl.version reports it. */
#define DLB_VERSION_MAJOR 0
#define DLB_VERSION_MINOR 1
#define DLB_VERSION_STRING "0.1.0"

/* The most dimensions an array may have (a 32-D array is still valid). */
#define DLB_MAX_NDIM 32

/*
 * Status codes, declared once: DLB_OK (0), then one row of
 * DLB_STATUS_CODES per failure. X(NAME) is DLB_E_NAME, whose name
 * (dlb_status_name, the Lua error's code, the key of the Lua `dl.E` table)
 * is "NAME"; all of these derive from the rows. Each failure also has a
 * default hint (src/core/error.c; tests/c/test_status_codes.c checks).
 * Rows are only ever appended: the values are the ABI.
 */
#define DLB_STATUS_CODES(X)                                                                        \
  X(BACKEND_INCOMPATIBLE) /* backend cannot hand out a device pointer */                           \
  X(DELETED)              /* the array was deleted or donated */                                   \
  X(CAPSULE_CONSUMED)     /* a capsule was already consumed */                                     \
  X(UNKNOWN_DEVICE)       /* no backend or device by that name */                                  \
  X(DEVICE_UNAVAILABLE)   /* the backend exists but cannot run here */                             \
  X(DTYPE)                /* unknown or unrepresentable dtype */                                   \
  X(SHAPE)                /* bad or mismatched shape, or a size that overflows */                  \
  X(INDEX)                /* index out of range */                                                 \
  X(VALUE)                /* value not representable in the dtype */                               \
  X(COPY_REQUIRED)        /* copy = false, but only a copy would do */                             \
  X(READ_ONLY)            /* write to a read-only array */                                         \
  X(DLPACK_VERSION)       /* unsupported DLPack major version */                                   \
  X(DLPACK_INVALID)       /* malformed tensor from a producer */                                   \
  X(UNSUPPORTED)          /* not available on this backend or dtype */                             \
  X(OUT_OF_MEMORY)        /* an allocation failed */                                               \
  X(BACKEND_FAILURE)      /* a backend reported an error */                                        \
  X(ARGUMENT)             /* bad argument type or value */                                         \
  X(IO)                   /* the system refused a file operation (errno in err.status) */          \
  X(FORMAT)               /* a malformed file or byte string (.npy, safetensors) */                \
  X(INTERRUPTED)          /* the host stopped the call (dlb_interrupt, dlb_set_work_limit) */      \
  X(LINALG)               /* linear algebra failed: a singular matrix, one not positive definite */

#define DLB_STATUS_ID_(NAME) DLB_E_##NAME,
typedef enum dlb_status {
  DLB_OK = 0,
  DLB_STATUS_CODES(DLB_STATUS_ID_) DLB_STATUS_COUNT
} dlb_status;
#undef DLB_STATUS_ID_
/* The published codes keep their values: a row inserted or removed
 * above one would renumber codes hosts have compiled in. */
DLB_STATIC_ASSERT(DLB_E_INTERRUPTED == 20, "status codes are ABI: append rows, never insert");
DLB_STATIC_ASSERT(DLB_E_LINALG == 21, "status codes are ABI: append rows, never insert");

/* "SHAPE" for DLB_E_SHAPE, "OK" for DLB_OK, "UNKNOWN" for anything else. */
DLB_API const char *dlb_status_name(dlb_status status);

/*
 * Backends. A backend owns device memory behind opaque handles, and is the
 * unit of execution: the core plans every operation device-neutrally and
 * hands the work to the backend of its arrays. The cpu backend is one of
 * them (its kernels are the host's loops).
 *
 * Threading: a lua_State is used by one thread at a time, and every hook
 * but deallocate, forget, event_release and release is called on the
 * thread using it. deallocate, forget, event_release and release may run on
 * any thread, at any time, even after lua_close (a DLPack consumer's
 * deleter), and must not touch Lua.
 *
 * Version 1 (DLB_BACKEND_OPS_VERSION_1), the memory:
 * - allocate: nbytes > 0 (the core never asks for 0 bytes); zeroed != 0 means
 *   the memory must read as zeros. Return DLB_E_OUT_OF_MEMORY or
 *   DLB_E_BACKEND_FAILURE on failure.
 * - deallocate: frees a handle from allocate. Work dlbridge queued on the
 *   memory may still be pending: a queued backend orders the free after it
 *   (a stream-ordered free, or a wait). Must not fail.
 * - copy_to_host / copy_from_host: bytes [offset, offset + nbytes) of the
 *   allocation, complete when they return. Required.
 * - copy_within (optional): device-side copy between two allocations of this
 *   backend; without it the core stages through host memory.
 * - host_pointer (optional): a host-addressable pointer to the allocation,
 *   valid for its life. With it, element access is direct, and the host's
 *   kernels compute on the memory unless the backend brings its own.
 * - export_pointer (optional): the DLPack data pointer of the allocation,
 *   valid for its life. Without it, export raises BACKEND_INCOMPATIBLE.
 * - last_status (optional): the native code (e.g. a CUDA error number) of the
 *   last failed call, reported as the error's `status`.
 * - release (optional): the last reference to the backend is gone (after
 *   lua_close and after every buffer is freed). May run on any thread.
 *
 * Version 2 (DLB_BACKEND_OPS_VERSION_2) appends what a device needs. Every
 * hook is optional; a backend fills those it has.
 * - copy_strided: one n-d strided copy (dlb_strided_copy) from host memory,
 *   to host memory, or between two allocations of this backend (any of its
 *   devices). A copy that touches host memory is complete when it returns;
 *   one between allocations may be queued on copy->queue. Without it the
 *   core moves strided data in large contiguous chunks through copy_to_host,
 *   copy_from_host and copy_within (never one call per element).
 * - queue: dlbridge's own work queue on a device (DLPack 1.3's
 *   current_work_stream), made on first use; NULL (or no hook): the backend
 *   works synchronously, and the event hooks are never called. All of
 *   dlbridge's work on a device goes to that one queue, so it runs in order.
 * - event_record: an event after the work queued on queue so far. Every
 *   buffer keeps the event of the last work queued on it (the core holds one
 *   reference per buffer and releases it with event_release).
 * - event_wait: makes queue (of device_id) wait for event on the device,
 *   never blocking the host; the event may come from another device of the
 *   backend.
 * - event_synchronize: blocks the host until event has completed (before the
 *   host reads or writes the memory directly).
 * - stream_wait: makes a DLPack consumer's stream wait for event, never
 *   blocking the host. stream is the consumer's value as the DLPack protocol
 *   passes it (CUDA: 1 the legacy default stream, 2 the per-thread default,
 *   > 2 a handle); has_stream 0: the consumer named none (CUDA: the legacy
 *   default). event NULL: nothing is pending (check the value only).
 *   Refuse a value the device does not take (CUDA: 0) with DLB_E_ARGUMENT.
 *   The core never calls it for -1 (no synchronisation).
 * - adopt: makes foreign memory of this backend's device type (a DLPack
 *   producer's tensor, dlb_push_external) usable: checks that bytes
 *   [data + first, data + end) are memory of device_id (DLB_E_DLPACK_INVALID
 *   when they are not, DLB_E_DEVICE_UNAVAILABLE when the device is not
 *   there) and returns a handle for the bytes from data + first (the lowest
 *   byte any element reaches, byte_offset and negative strides counted):
 *   every other hook takes offsets from there. Without it such memory is
 *   refused (DEVICE_UNAVAILABLE).
 * - forget: the core no longer uses an adopted handle (the producer frees the
 *   memory itself, after). Any thread, after lua_close too.
 * - kernels: the backend's compute (dlb_kernels). Without an entry, an
 *   operation on memory the host cannot address raises DLB_E_UNSUPPORTED
 *   with a hint to device_put: there are no silent cross-device copies.
 * - status_name: the name of a native status last_status returned (static
 *   text, such as "CUDA_ERROR_LAUNCH_FAILED"), or NULL; dlbridge's message
 *   of a failed hook names it. Any thread.
 * A hook's failure reaches the caller as DLB_E_OUT_OF_MEMORY or
 * DLB_E_DEVICE_UNAVAILABLE when it returns those, else as
 * DLB_E_BACKEND_FAILURE (adopt's DLPACK_INVALID excepted, above).
 *
 * Versions grow by appending fields only. dlb_register_backend reads the
 * fields of the version the caller names and takes the later ones as NULL,
 * so a backend built against an older dlbridge.h keeps working.
 */
#define DLB_BACKEND_OPS_VERSION_1 1
#define DLB_BACKEND_OPS_VERSION_2 2
#define DLB_BACKEND_OPS_VERSION DLB_BACKEND_OPS_VERSION_2

/* One side of a strided copy: an allocation of the backend (handle, with
 * offset bytes from its start to element 0...0), or host memory (handle
 * NULL: host is the address of element 0...0). */
typedef struct dlb_copy_side {
  void *handle;
  int32_t device_id;
  uint64_t offset;
  void *host;
  const int64_t *strides; /* ndim entries, in elements; any sign, 0 for a repeated source */
} dlb_copy_side;

/* dst[i...] = src[i...] for every index of shape (elements of itemsize
 * bytes; the two sides do not overlap). */
typedef struct dlb_strided_copy {
  size_t itemsize;
  int32_t ndim; /* 0: one element */
  const int64_t *shape;
  dlb_copy_side dst, src;
  void *queue; /* dlbridge's queue on the device, or NULL (synchronous backend) */
} dlb_strided_copy;

struct dlb_kernels;

/* A backend's vtable (see the list above): versioned, fields appended only. */
typedef struct dlb_backend_ops {
  uint32_t version;               /* DLB_BACKEND_OPS_VERSION_1 or _2 */
  const char *name;               /* copied at registration: [a-z][a-z0-9_]*, at most 31 chars */
  int32_t device_type;            /* DLPack DLDeviceType of its devices (kDLExtDev for engines) */
  int (*device_count)(void *ctx); /* 0: registered but unavailable here */
  dlb_status (*allocate)(void *ctx, int device_id, size_t nbytes, int zeroed, void **handle);
  void (*deallocate)(void *ctx, int device_id, void *handle);
  dlb_status (*copy_to_host)(void *ctx, int device_id, const void *handle, size_t offset, void *dst,
                             size_t nbytes);
  dlb_status (*copy_from_host)(void *ctx, int device_id, void *handle, size_t offset,
                               const void *src, size_t nbytes);
  dlb_status (*copy_within)(void *ctx, int dst_device_id, void *dst_handle, size_t dst_offset,
                            int src_device_id, const void *src_handle, size_t src_offset,
                            size_t nbytes);
  void *(*host_pointer)(void *ctx, int device_id, void *handle);
  dlb_status (*export_pointer)(void *ctx, int device_id, void *handle, void **data);
  int64_t (*last_status)(void *ctx);
  void (*release)(void *ctx);
  /* --- version 2 --- */
  dlb_status (*copy_strided)(void *ctx, const dlb_strided_copy *copy);
  void *(*queue)(void *ctx, int device_id);
  dlb_status (*event_record)(void *ctx, int device_id, void *queue, void **event);
  dlb_status (*event_wait)(void *ctx, int device_id, void *queue, void *event);
  dlb_status (*event_synchronize)(void *ctx, int device_id, void *event);
  void (*event_release)(void *ctx, int device_id, void *event);
  dlb_status (*stream_wait)(void *ctx, int device_id, int has_stream, int64_t stream, void *event);
  dlb_status (*adopt)(void *ctx, int device_id, void *data, uint64_t first, uint64_t end,
                      void **handle);
  void (*forget)(void *ctx, int device_id, void *handle);
  const struct dlb_kernels *kernels;
  const char *(*status_name)(void *ctx, int64_t status);
} dlb_backend_ops;

/*
 * Element-wise operations, declared once: each row of DLB_ELEMENTWISE_OPS
 * is one operation, and the library derives from it the dlb_op ids below,
 * its table of operations, the checks of the cpu kernels and the Lua
 * functions. X(ID, name, nin, class, loops, lua, form):
 *   ID     the id DLB_OP_ID, which a backend's element-wise kernel receives
 *          (dlb_elementwise_call.op). Rows are only ever appended: the order
 *          is the ABI. DLB_OP_COUNT is this header's count.
 *   name   NumPy's name (error messages use it);
 *   nin    the inputs (1, 2 or 3; one output);
 *   class  how the operation picks its dtypes from those of its inputs
 *          (DLB_CLASS_class: src/compute/elementwise.h);
 *   loops  the loop dtypes it computes in: B bool, I the integers, F float32
 *          and float64, C complex64 and complex128, H float16 and bfloat16;
 *   lua    its Lua name: dl.lua(...), and also a:lua(...) when form is
 *          method (function: dl.lua only).
 */
#define DLB_ELEMENTWISE_OPS(X)                                                                     \
  X(ADD, add, 2, ARITHMETIC, BIFC, add, method)                                                    \
  X(SUBTRACT, subtract, 2, ARITHMETIC, IFC, sub, method)                                           \
  X(MULTIPLY, multiply, 2, ARITHMETIC, BIFC, mul, method)                                          \
  X(DIVIDE, divide, 2, TRUE_DIVIDE, FC, div, method)                                               \
  X(FLOOR_DIVIDE, floor_divide, 2, ARITHMETIC, IF, floor_divide, method)                           \
  X(MOD, mod, 2, ARITHMETIC, IF, mod, method)                                                      \
  X(POWER, power, 2, ARITHMETIC, IFC, pow, method)                                                 \
  X(MAXIMUM, maximum, 2, ARITHMETIC, BIF, maximum, method)                                         \
  X(MINIMUM, minimum, 2, ARITHMETIC, BIF, minimum, method)                                         \
  X(ATAN2, atan2, 2, FLOAT_MATH, F, atan2, method)                                                 \
  X(BITWISE_AND, bitwise_and, 2, BITWISE, BI, bitwise_and, method)                                 \
  X(BITWISE_OR, bitwise_or, 2, BITWISE, BI, bitwise_or, method)                                    \
  X(BITWISE_XOR, bitwise_xor, 2, BITWISE, BI, bitwise_xor, method)                                 \
  X(LEFT_SHIFT, left_shift, 2, BITWISE, I, left_shift, method)                                     \
  X(RIGHT_SHIFT, right_shift, 2, BITWISE, I, right_shift, method)                                  \
  X(LOGICAL_AND, logical_and, 2, LOGICAL, B, logical_and, method)                                  \
  X(LOGICAL_OR, logical_or, 2, LOGICAL, B, logical_or, method)                                     \
  X(LOGICAL_XOR, logical_xor, 2, LOGICAL, B, logical_xor, method)                                  \
  X(EQUAL, equal, 2, COMPARISON, BIFC, equal, method)                                              \
  X(NOT_EQUAL, not_equal, 2, COMPARISON, BIFC, not_equal, method)                                  \
  X(LESS, less, 2, COMPARISON, BIF, less, method)                                                  \
  X(LESS_EQUAL, less_equal, 2, COMPARISON, BIF, less_equal, method)                                \
  X(GREATER, greater, 2, COMPARISON, BIF, greater, method)                                         \
  X(GREATER_EQUAL, greater_equal, 2, COMPARISON, BIF, greater_equal, method)                       \
  X(NEGATIVE, negative, 1, ARITHMETIC, IFC, neg, method)                                           \
  X(BITWISE_NOT, bitwise_not, 1, BITWISE, BI, bitwise_not, method)                                 \
  X(LOGICAL_NOT, logical_not, 1, LOGICAL, B, logical_not, method)                                  \
  X(ABS, abs, 1, ARITHMETIC, BIFC, abs, method)                                                    \
  X(SIGN, sign, 1, ARITHMETIC, IFC, sign, method)                                                  \
  X(SQRT, sqrt, 1, FLOAT_MATH, FC, sqrt, method)                                                   \
  X(EXP, exp, 1, FLOAT_MATH, FC, exp, method)                                                      \
  X(EXP2, exp2, 1, FLOAT_MATH, FC, exp2, method)                                                   \
  X(EXPM1, expm1, 1, FLOAT_MATH, FC, expm1, method)                                                \
  X(LOG, log, 1, FLOAT_MATH, FC, log, method)                                                      \
  X(LOG2, log2, 1, FLOAT_MATH, FC, log2, method)                                                   \
  X(LOG10, log10, 1, FLOAT_MATH, FC, log10, method)                                                \
  X(LOG1P, log1p, 1, FLOAT_MATH, FC, log1p, method)                                                \
  X(SIN, sin, 1, FLOAT_MATH, FC, sin, method)                                                      \
  X(COS, cos, 1, FLOAT_MATH, FC, cos, method)                                                      \
  X(TAN, tan, 1, FLOAT_MATH, FC, tan, method)                                                      \
  X(ASIN, asin, 1, FLOAT_MATH, FC, asin, method)                                                   \
  X(ACOS, acos, 1, FLOAT_MATH, FC, acos, method)                                                   \
  X(ATAN, atan, 1, FLOAT_MATH, FC, atan, method)                                                   \
  X(SINH, sinh, 1, FLOAT_MATH, FC, sinh, method)                                                   \
  X(COSH, cosh, 1, FLOAT_MATH, FC, cosh, method)                                                   \
  X(TANH, tanh, 1, FLOAT_MATH, FC, tanh, method)                                                   \
  X(FLOOR, floor, 1, ROUNDING, BIF, floor, method)                                                 \
  X(CEIL, ceil, 1, ROUNDING, BIF, ceil, method)                                                    \
  X(TRUNC, trunc, 1, ROUNDING, BIF, trunc, method)                                                 \
  X(ROUND, round, 1, ROUNDING, BIFC, round, method)                                                \
  X(ISNAN, isnan, 1, PREDICATE, BIFC, isnan, method)                                               \
  X(ISINF, isinf, 1, PREDICATE, BIFC, isinf, method)                                               \
  X(ISFINITE, isfinite, 1, PREDICATE, BIFC, isfinite, method)                                      \
  X(WHERE, where, 3, WHERE, BIHFC, where, function)                                                \
  X(CLIP, clip, 3, ARITHMETIC, BIF, clip, method)

/* The element-wise operations' ids, in the order of DLB_ELEMENTWISE_OPS. */
#define DLB_OP_ID_(ID, ...) DLB_OP_##ID,
typedef enum dlb_op { DLB_ELEMENTWISE_OPS(DLB_OP_ID_) DLB_OP_COUNT } dlb_op;
#undef DLB_OP_ID_

/*
 * Kernels: a backend's compute on its own memory. The core has planned each
 * call (dtypes, broadcasting, scalars, the result's allocation and `out`
 * checks) and hands the backend tensors of its own memory, already shaped:
 * the kernel only computes. Each returns DLB_OK or a failure (DLB_E_UNSUPPORTED
 * for a dtype or layout it cannot run, DLB_E_VALUE for a value a kernel
 * refuses, DLB_E_BACKEND_FAILURE); it may say why in its dlb_kernel_error
 * (zeroed before the call). A kernel may queue its work on queue and return
 * before it has run.
 */
#define DLB_KERNEL_MESSAGE 256

typedef struct dlb_kernel_error {
  char message[DLB_KERNEL_MESSAGE]; /* "" : the core says what failed */
  const char *hint;                 /* static text, or NULL for the code's default */
} dlb_kernel_error;

/* An array as a kernel sees it. */
typedef struct dlb_tensor {
  void *handle; /* the allocation (the backend's own or adopted) */
  int32_t device_id;
  uint64_t offset;  /* bytes from the allocation's start to element 0...0 */
  void *data;       /* the host address of element 0...0, or NULL */
  DLDataType dtype; /* bool is {kDLBool, 8, 1} */
  int32_t ndim;
  const int64_t *shape;
  const int64_t *strides; /* in elements; any sign; 0 along broadcast dims */
} dlb_tensor;

/*
 * Reductions, declared once: each row of DLB_REDUCE_OPS is one reduction,
 * and the library derives from it the dlb_reduce_op ids below, the names,
 * the dtype rules, what an empty reduction does, and the Lua functions with
 * their options. X(ID, name, rule, identity, loops, dtype, ddof, nan):
 *   ID        the id DLB_REDUCE_ID, which a backend's reduce kernel receives
 *             (dlb_reduce_call.op). Rows are only ever appended: the order
 *             is the ABI. DLB_REDUCE_OP_COUNT is this header's count.
 *   name      NumPy's name, also the Lua one: dl.name(a, opts), a:name(opts);
 *   rule      how it picks its dtypes and runs (DLB_REDUCE_RULE_rule:
 *             src/compute/reduce.h);
 *   identity  what the accumulators start from: ZERO or ONE; NONE: from the
 *             first element, and an empty reduction fails (DLB_E_VALUE), as
 *             NumPy's reductions without an identity do;
 *   loops     the dtypes its kernels compute in (elements are converted to
 *             one of them first): B bool, I the integers, H float16 and
 *             bfloat16, F float32 and float64, C complex64 and complex128;
 *   dtype     1 when it takes the dtype option, else 0;
 *   ddof      1 when it takes the ddof option, else 0;
 *   nan       1 when NaN elements are left out, as NumPy's nan-functions
 *             leave them (the row of the reduction without them has the
 *             name without "nan" and the same other columns), else 0.
 */
#define DLB_REDUCE_OPS(X)                                                                          \
  X(SUM, sum, ACCUMULATE, ZERO, BIFC, 1, 0, 0)                                                     \
  X(PROD, prod, ACCUMULATE, ONE, BIFC, 1, 0, 0)                                                    \
  X(MEAN, mean, MEAN, ZERO, FC, 1, 0, 0)                                                           \
  X(MIN, min, EXTREME, NONE, BIF, 0, 0, 0)                                                         \
  X(MAX, max, EXTREME, NONE, BIF, 0, 0, 0)                                                         \
  X(ARGMIN, argmin, ARG, NONE, BIF, 0, 0, 0)                                                       \
  X(ARGMAX, argmax, ARG, NONE, BIF, 0, 0, 0)                                                       \
  X(ALL, all, TRUTH, ONE, BIHFC, 0, 0, 0)                                                          \
  X(ANY, any, TRUTH, ZERO, BIHFC, 0, 0, 0)                                                         \
  X(COUNT_NONZERO, count_nonzero, TALLY, ZERO, BIHFC, 0, 0, 0)                                     \
  X(STD, std, SPREAD, ZERO, FC, 1, 1, 0)                                                           \
  X(VAR, var, SPREAD, ZERO, FC, 1, 1, 0)                                                           \
  X(NANSUM, nansum, ACCUMULATE, ZERO, BIFC, 1, 0, 1)                                               \
  X(NANPROD, nanprod, ACCUMULATE, ONE, BIFC, 1, 0, 1)                                              \
  X(NANMEAN, nanmean, MEAN, ZERO, FC, 1, 0, 1)                                                     \
  X(NANMIN, nanmin, EXTREME, NONE, BIF, 0, 0, 1)                                                   \
  X(NANMAX, nanmax, EXTREME, NONE, BIF, 0, 0, 1)                                                   \
  X(NANARGMIN, nanargmin, ARG, NONE, BIF, 0, 0, 1)                                                 \
  X(NANARGMAX, nanargmax, ARG, NONE, BIF, 0, 0, 1)                                                 \
  X(NANSTD, nanstd, SPREAD, ZERO, FC, 1, 1, 1)                                                     \
  X(NANVAR, nanvar, SPREAD, ZERO, FC, 1, 1, 1)

/* The reductions' ids, in the order of DLB_REDUCE_OPS. */
#define DLB_REDUCE_ID_(ID, ...) DLB_REDUCE_##ID,
typedef enum dlb_reduce_op { DLB_REDUCE_OPS(DLB_REDUCE_ID_) DLB_REDUCE_OP_COUNT } dlb_reduce_op;
#undef DLB_REDUCE_ID_
/* The last published id keeps its value (rows are appended after it). */
DLB_STATIC_ASSERT(DLB_REDUCE_NANVAR == 20, "reduction ids are ABI: append rows, never insert");

/* out = op(in[0], in[1], in[2]) element by element, every tensor of out's
 * shape (inputs broadcast with stride 0). An input with is_scalar set is
 * one value, scalar[k], an element of dtype loop_in[k]. The operation
 * computes in loop_in[] and writes loop_out, then casts to out's dtype
 * (same_kind) where they differ. */
typedef struct dlb_elementwise_call {
  int32_t op; /* a dlb_op (above) */
  int32_t nin;
  dlb_tensor out;
  dlb_tensor in[3];
  int32_t is_scalar[3];
  unsigned char scalar[3][16];
  DLDataType loop_in[3], loop_out;
  void *queue;
  dlb_kernel_error error;
} dlb_elementwise_call;

/* out = op over the dims of in whose bit is set in dims. out has in's ndim
 * with extent 1 (stride 0) along the reduced dims, and the result's dtype;
 * acc is the dtype the reduction accumulates in. ddof: std and var;
 * index_base: what argmin/argmax add to the index (dlbridge's 1). */
typedef struct dlb_reduce_call {
  int32_t op; /* a dlb_reduce_op */
  dlb_tensor in;
  uint64_t dims;
  dlb_tensor out;
  DLDataType loop_in; /* the dtype elements become before they are combined */
  DLDataType acc;
  double ddof;
  int64_t index_base;
  void *queue;
  dlb_kernel_error error;
} dlb_reduce_call;

/* out = a @ b over stacks of matrices: a (..., M, K), b (..., K, N), out
 * (..., M, N), all of one ndim >= 2, the batch dims broadcast (stride 0).
 * Products are formed in compute; a, b and out have that dtype. */
typedef struct dlb_matmul_call {
  dlb_tensor a, b, out;
  DLDataType compute;
  void *queue;
  dlb_kernel_error error;
} dlb_matmul_call;

/* The calls of kernel table version 2 (described below it). */
struct dlb_sort_call;
struct dlb_search_call;
struct dlb_take_call;
struct dlb_mask_call;
struct dlb_nonzero_call;
struct dlb_scan_call;
struct dlb_count_call;
struct dlb_scatter_call;

/* A backend's kernel table (dlb_backend_ops.kernels); NULL entries: the
 * operation is UNSUPPORTED on its memory. */
typedef struct dlb_kernels {
  uint32_t version; /* DLB_KERNELS_VERSION; fields appended only */
  dlb_status (*elementwise)(void *ctx, dlb_elementwise_call *call);
  dlb_status (*reduce)(void *ctx, dlb_reduce_call *call);
  dlb_status (*matmul)(void *ctx, dlb_matmul_call *call);
  /* dst = src cast element by element (NumPy's astype, dlb_cast's rules);
   * one shape; the source may repeat elements (stride 0). */
  dlb_status (*cast)(void *ctx, const dlb_tensor *dst, const dlb_tensor *src, void *queue,
                     dlb_kernel_error *error);
  /* Every element of dst becomes value (one element of dst's dtype). */
  dlb_status (*fill)(void *ctx, const dlb_tensor *dst, const void *value, void *queue,
                     dlb_kernel_error *error);
  /* --- version 2: selecting, sorting, scanning, counting --- */
  dlb_status (*sort)(void *ctx, struct dlb_sort_call *call);
  dlb_status (*search)(void *ctx, struct dlb_search_call *call);
  dlb_status (*take)(void *ctx, struct dlb_take_call *call);
  dlb_status (*mask)(void *ctx, struct dlb_mask_call *call);
  dlb_status (*nonzero)(void *ctx, struct dlb_nonzero_call *call);
  dlb_status (*scan)(void *ctx, struct dlb_scan_call *call);
  dlb_status (*count)(void *ctx, struct dlb_count_call *call);
  /* --- version 3: grouped updates --- */
  dlb_status (*scatter)(void *ctx, struct dlb_scatter_call *call);
} dlb_kernels;

/* The kernel table's current version. An older table (version 1: no
 * sort..count; version 2: no scatter) is read as a prefix: those
 * operations are then UNSUPPORTED there. */
#define DLB_KERNELS_VERSION 3

/*
 * The order of sorting (sort, search and count calls), NumPy's: numbers
 * ascending, -0 equal to +0, NaN after +inf and equal to every NaN;
 * complex numbers lexicographically (real, then imaginary part) with
 * those that have a NaN after all others, as NumPy's extended order
 * (R + Rj, R + nanj, nan + Rj, nan + nanj); false before true.
 */

/* What a sort call writes (dlb_sort_call.want). */
#define DLB_SORT_VALUES 1  /* values: the sorted elements */
#define DLB_SORT_INDICES 2 /* indices: their positions in in (int64) */
#define DLB_SORT_RUNS 4    /* runs: where a run of equal values starts (bool) */

/* Sorts each lane of in along dim (extent n) in the order above, or its
 * reverse when descending (NaN first then), and writes the first k
 * (0 <= k <= n) of each sorted lane to the tensors want names, all of in's
 * shape with extent k along dim. indices count from index_base. With
 * stable set, or k < n (a top-k selection), equal elements keep their
 * order in in. runs (k == n only) marks NumPy's unique runs: the first
 * element of a lane and each one that differs from the one before it, all
 * the elements with a NaN forming one run (NumPy's equal_nan). */
typedef struct dlb_sort_call {
  dlb_tensor in;
  int32_t dim;
  int32_t descending, stable;
  int32_t want; /* DLB_SORT_* bits */
  int64_t k;
  dlb_tensor values, indices, runs;
  int64_t index_base;
  void *queue;
  dlb_kernel_error error;
} dlb_sort_call;

/* out[i...] = index_base + the number of elements of sorted (1-D, in the
 * order above) that sort before values[i...] (right = 0: NumPy's side
 * "left") or that do not sort after it (right = 1). sorted and values have
 * one dtype; out is int64 of values' shape. */
typedef struct dlb_search_call {
  dlb_tensor sorted, values, out;
  int32_t right;
  int64_t index_base;
  void *queue;
  dlb_kernel_error error;
} dlb_search_call;

/* Integer indexing along dim. index (an integer dtype) has elements'
 * shape, strides 0 allowed; data and elements have one dtype and ndim and
 * the same extents along the other dims (elements may repeat, stride 0,
 * when scattered). Gather (scatter 0): elements[i..j..] =
 * data[i..index[i..j..]..]; scatter: data[i..index[i..j..]..] =
 * elements[i..j..], the last in row-major order winning where several meet.
 * An index counts from index_base, or back from the end when negative (-1
 * the last); one out of range fails the call with DLB_E_INDEX (a scatter
 * checks every index before it writes anything). */
typedef struct dlb_take_call {
  int32_t scatter;
  int32_t dim;
  dlb_tensor data, index, elements;
  int64_t index_base;
  void *queue;
  dlb_kernel_error error;
} dlb_take_call;

/* Boolean masks: mask (bool, data's shape, strides 0 allowed) picks
 * elements of data in row-major order; packed is 1-D with one element per
 * pick. Read (assign 0): packed[j] = the j-th picked element; assign: the
 * j-th picked element = packed[j] (stride 0: one value for all). */
typedef struct dlb_mask_call {
  int32_t assign;
  dlb_tensor data, mask, packed;
  void *queue;
  dlb_kernel_error error;
} dlb_mask_call;

/* out (int64, (count, in's ndim)) gets, row by row, the index of each
 * nonzero element of in in row-major order, each counted from index_base
 * (NumPy's argwhere); the core counted them (count_nonzero). */
typedef struct dlb_nonzero_call {
  dlb_tensor in, out;
  int64_t index_base;
  void *queue;
  dlb_kernel_error error;
} dlb_nonzero_call;

/* Scans (dlb_scan_call.op). */
#define DLB_SCAN_SUM 0  /* cumsum */
#define DLB_SCAN_PROD 1 /* cumprod */

/* out[..j..] = in[..0..] op ... op in[..j..] along dim, in out's dtype: each
 * element of in is first cast to it, and each partial result is rounded to
 * it (integers wrap; bool sums are logical or, products logical and), as
 * NumPy's accumulate. in and out have one shape. */
typedef struct dlb_scan_call {
  int32_t op;
  int32_t dim;
  dlb_tensor in, out;
  void *queue;
  dlb_kernel_error error;
} dlb_scan_call;

/* Counting into bins: counts (1-D, nbins elements, int64, or float64 with
 * weights) gets, for each element x of in (weights of in's shape, float64,
 * when has_weights), 1 or its weight added to the bin of x. Bincount
 * (edges.ndim == 0): in holds integers below nbins (the core checked the
 * largest); a negative one fails the call with DLB_E_VALUE. Histogram:
 * edges (1-D, nbins + 1, in's dtype, a float dtype) ascending; x falls in bin b when edges[b] <= x < edges[b + 1], the last
 * bin taking its right edge too; NaN and x outside the edges count
 * nowhere. uniform: the edges are evenly spaced (a linspace), so a bin is
 * computed, then checked against the edges. */
typedef struct dlb_count_call {
  dlb_tensor in, weights, counts, edges;
  int32_t has_weights, uniform;
  void *queue;
  dlb_kernel_error error;
} dlb_count_call;

/* Grouped updates (dlb_scatter_call.op): NumPy's add.at, multiply.at,
 * maximum.at and minimum.at. */
#define DLB_SCATTER_ADD 0
#define DLB_SCATTER_MULTIPLY 1
#define DLB_SCATTER_MAXIMUM 2
#define DLB_SCATTER_MINIMUM 3

/* data[i..r(index[j])..] = data[i..r(index[j])..] op elements[i..j..] for
 * every j in order, unbuffered (an index met k times is updated k times,
 * in the order of j), as NumPy's ufunc.at. index (an integer dtype) is 1-D
 * of m elements; elements has data's ndim and extents but m along dim
 * (strides 0 allowed). r counts from index_base, or back from the end when
 * negative (-1 the last); an index out of range fails the call with
 * DLB_E_INDEX before anything is written. elements' dtype is the one each
 * update computes in: data's own (float32 for float16 and bfloat16 data)
 * or a wider one of its kind; the result is cast back to data's dtype
 * (integers wrap; bool: add and maximum are logical or, multiply and
 * minimum logical and; maximum and minimum propagate NaN). */
typedef struct dlb_scatter_call {
  int32_t op; /* a DLB_SCATTER_* */
  int32_t dim;
  dlb_tensor data, index, elements;
  int64_t index_base;
  void *queue;
  dlb_kernel_error error;
} dlb_scatter_call;

/*
 * DLPack exchange. Each function below that can fail pushes a dlbridge.Error
 * onto the stack on failure and returns its code: a host's lua_CFunction
 * raises it with `return lua_error(L);`, other callers drop it with
 * lua_pop(L, 1). On success nothing is left on the stack unless stated.
 */

/* The layouts an export can ask for (dlb_export_options.layout; in Lua
 * to_dlpack{layout = "any" | "nonnegative" | "contiguous"}). An array that
 * does not have the layout is copied (copy = 0: COPY_REQUIRED). */
typedef enum dlb_layout {
  DLB_LAYOUT_ANY = 0,         /* the array's own strides: negative, or 0 where broadcast */
  DLB_LAYOUT_NONNEGATIVE = 1, /* no negative stride (PyTorch aborts on them) */
  DLB_LAYOUT_CONTIGUOUS = 2   /* row-major and compact */
} dlb_layout;

/*
 * The options of an export, as a:to_dlpack(opts) takes them. Extensible
 * like dlb_backend_ops: `version` says which fields the caller knows. Call
 * dlb_export_options_init (it sets version = DLB_EXPORT_OPTIONS_VERSION and
 * every default); a caller that mirrors the struct (ctypes, cffi) sets
 * version to the DLB_EXPORT_OPTIONS_VERSION of the header it mirrors. Fields
 * are only ever appended: dlbridge reads the fields that version has and
 * takes the defaults for later ones; version 0 or one newer than the
 * library's is refused with ARGUMENT.
 */
#define DLB_EXPORT_OPTIONS_VERSION 1

typedef struct dlb_export_options {
  uint32_t version;          /* DLB_EXPORT_OPTIONS_VERSION */
  int32_t max_version_major; /* < 0: not given (versioned); 0: legacy; >= 1: versioned */
  int32_t max_version_minor;
  int32_t has_dl_device; /* dl_device: the device the consumer wants */
  DLDevice dl_device;
  int32_t copy;       /* -1: copy only if needed (nil); 0: never (false); 1: always (true) */
  int32_t has_stream; /* stream: the consumer's (DLPack's values; -1: no ordering);
                              * a device whose backend has no stream_wait: ARGUMENT */
  int64_t stream;
  int32_t fallback_cpu; /* export a host copy when the backend cannot export */
  int32_t layout;       /* a dlb_layout; DLB_LAYOUT_ANY by default */
} dlb_export_options;

/* Sets the version and the defaults: versioned, no dl_device, copy only if
 * needed, any layout. */
DLB_API void dlb_export_options_init(dlb_export_options *opts);

/* Exports the array at idx (opts NULL: the defaults). The caller owns *out
 * and must call its deleter exactly once (on any thread, even after
 * lua_close). data is never NULL (a size-0 tensor points at a static,
 * 64-byte aligned block). The legacy ABI has no read-only flag: a read-only
 * array is exported as a copy (COPY_REQUIRED with copy = 0). */
DLB_API dlb_status dlb_export_versioned(lua_State *L, int idx, const dlb_export_options *opts,
                                        DLManagedTensorVersioned **out);
DLB_API dlb_status dlb_export_legacy(lua_State *L, int idx, const dlb_export_options *opts,
                                     DLManagedTensor **out);

/* Takes ownership of a producer's tensor and pushes it as an array (zero
 * copy for host-reachable memory). The array is read-only when the tensor
 * is READ_ONLY or its elements may overlap (a stride 0 on an extent > 1, or
 * any strides failing the test the README's "DLPack import" states); the
 * strides of extent-1 dims (all of them for a size-0 tensor) become the
 * compact row-major ones, except in dlbridge's own exports coming back. On
 * failure the tensor's deleter has already been called, exactly once. */
DLB_API dlb_status dlb_push_versioned(lua_State *L, DLManagedTensorVersioned *tensor);
DLB_API dlb_status dlb_push_legacy(lua_State *L, DLManagedTensor *tensor);

/* Pushes a capsule owning the tensor, for Lua code to dl.from_dlpack. An
 * unconsumed capsule calls the deleter when collected. If Lua cannot
 * allocate the capsule, the deleter has been called (OUT_OF_MEMORY). */
DLB_API dlb_status dlb_push_capsule_versioned(lua_State *L, DLManagedTensorVersioned *tensor);
DLB_API dlb_status dlb_push_capsule_legacy(lua_State *L, DLManagedTensor *tensor);

/* Takes the tensor out of the capsule at idx and marks it consumed. The
 * caller owns *tensor (a DLManagedTensorVersioned* when *versioned, else a
 * DLManagedTensor*). CAPSULE_CONSUMED the second time. */
DLB_API dlb_status dlb_capsule_take(lua_State *L, int idx, void **tensor, int *versioned);

/*
 * Wrapping memory the host owns (engine buffers, mapped files, device
 * memory) as an array, without filling DLPack structs by hand. shape has
 * ndim extents; strides are in elements (NULL: row-major and compact);
 * dtype and device are DLPack's (a device needs a registered backend of its
 * type, host memory is kDLCPU). flags: DLB_EXTERNAL_READ_ONLY makes the
 * array read-only; so do strides under which elements may overlap, and
 * strides that reach no element become compact, as for dlb_push_versioned.
 * The array is zero-copy: data is read and written in
 * place. release(ctx) (release may be NULL) runs exactly once when the last
 * array, view or DLPack export of the memory is gone, on any thread, possibly
 * after lua_close; it must not touch Lua. On failure (bad shape, dtype or
 * device, no memory) release(ctx) has already run and the error is pushed.
 */
#define DLB_EXTERNAL_READ_ONLY 1u

DLB_API dlb_status dlb_push_external(lua_State *L, void *data, DLDataType dtype, int32_t ndim,
                                     const int64_t *shape, const int64_t *strides, DLDevice device,
                                     uint32_t flags, void (*release)(void *ctx), void *ctx);

/*
 * Borrowing: reading an array from C without an export and a deleter.
 * dlb_borrow fills *view from the array at idx and holds a reference to its
 * memory: view->data stays valid until dlb_borrow_end(view), whatever
 * happens to the Lua value meanwhile (a:delete(), collection, lua_close);
 * shape, strides and the other fields are copies. dlb_borrow_end may run on
 * any thread and is idempotent. Writing through data is allowed only when
 * view->readonly is 0, and is seen by the array and its views. The host
 * first waits for dlbridge's work queued on the memory (a borrower names no
 * queue to order after it). A borrow is cheap (no allocation: one atomic
 * increment; no wait when nothing is queued). Fails with ARGUMENT (not an
 * array), DELETED, or BACKEND_INCOMPATIBLE (a backend that cannot hand out a
 * pointer); then view->hold is NULL and dlb_borrow_end is a no-op.
 */
typedef struct dlb_borrowed {
  void *data;           /* the allocation; first element at (char *)data + byte_offset */
  uint64_t byte_offset; /* 0 on host, CUDA and ROCm memory (data points at it) */
  DLDataType dtype;     /* DLPack's; bool is {kDLBool, 8, 1} */
  DLDevice device;
  int32_t ndim;
  int32_t readonly; /* 1: do not write through data */
  int64_t numel;    /* product of shape; 0 for an empty array (data then points at
                                    a static block: not NULL, never to be read or written) */
  int64_t shape[DLB_MAX_NDIM];
  int64_t strides[DLB_MAX_NDIM]; /* in elements; negative or 0 allowed */
  void *hold;                    /* private: the reference dlb_borrow_end drops */
} dlb_borrowed;

DLB_API dlb_status dlb_borrow(lua_State *L, int idx, dlb_borrowed *view);
/* The same for an array held by a registry reference (luaL_ref). */
DLB_API dlb_status dlb_borrow_ref(lua_State *L, int ref, dlb_borrowed *view);
/* Ends a borrow: drops its reference (any thread; idempotent). */
DLB_API void dlb_borrow_end(dlb_borrowed *view);

/*
 * The last failure of a C API call on this thread, for hosts that do not
 * read Lua error objects (ctypes, cffi): returns its code (DLB_OK when no
 * call has failed on this thread yet) and, when message is not NULL, sets
 * *message to "op: CODE: message (hint: ...)", valid until the next failure
 * on this thread. Successful calls leave it as it is. The error object is
 * still pushed onto the Lua stack as each function describes.
 */
DLB_API dlb_status dlb_last_error(const char **message);

/* Raises a dlbridge.Error from a host's C function: code, the API call's name
 * (op), an optional hint (NULL: the code's default) and a printf message. */
DLB_API int dlb_raise(lua_State *L, dlb_status code, const char *op, const char *hint,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6), noreturn));

/* Registers a backend in this lua_State (dlbridge opens itself in L if it
 * is not open yet: see dlb_preload). ops is copied; ctx is passed to every call. From then on the
 * backend is refcounted: ops->release(ctx) runs once, after lua_close and
 * after the last buffer it allocated is freed (possibly on another thread).
 * On failure (a bad vtable, a name in use) the error is pushed, release is
 * not called, and ctx stays the host's. */
DLB_API dlb_status dlb_register_backend(lua_State *L, const dlb_backend_ops *ops, void *ctx);

/* dlbridge's work queue on a device (DLPack 1.3's current_work_stream; for
 * CUDA a CUstream): a host's producer orders its work before this queue,
 * before pushing memory of that device, as a Python producer does for the
 * stream a consumer passes. *queue is NULL for a backend that works
 * synchronously. DEVICE_UNAVAILABLE: no backend of device_type is
 * registered, or it has no such device (the error is pushed). */
DLB_API dlb_status dlb_device_queue(lua_State *L, int32_t device_type, int device_id, void **queue);

/* Limits the bytes of dlbridge memory this lua_State may hold (0: no
 * limit), for hosts that sandbox scripts: Lua's own allocator does not see
 * array buffers. Every buffer the state allocates on any backend, and every
 * zero-copy import, counts from its creation until it is freed, also when
 * that happens later on another thread (a DLPack consumer's deleter). An
 * allocation or import that would pass the limit runs one full garbage
 * collection, then raises OUT_OF_MEMORY with nothing allocated; the state
 * stays usable. A limit below what is in use refuses new memory until
 * enough is freed. Callable at any time (it opens dlbridge in L if needed);
 * Lua code cannot change it (dl.memory() reads it), not even by clearing
 * dlbridge's registry keys and loading the module again. On failure (no memory to
 * open dlbridge, or dlbridge already closed with L) the error is pushed. */
DLB_API dlb_status dlb_set_memory_limit(lua_State *L, size_t bytes);

/*
 * Bounding the time of one call. A count hook (lua_sethook) cannot stop a
 * C function, and some dlbridge calls need no memory yet run for minutes
 * (dl.zeros(1):expand(1e12):sum()). Long work (element-wise operations,
 * reductions, matrix products, casts, copies, fills, joins, tobytes,
 * totable, file writes) therefore looks at an interrupt every 65,536
 * elements (at most about a tenth of a second for matrix products), and
 * fails with DLB_E_INTERRUPTED (Lua code "INTERRUPTED") once the host has
 * raised it. Arrays stay consistent; an `out` array may hold a partial
 * result. The interrupt stays raised, and every such call fails at once,
 * until the host clears it (a host bounding a script's frame time raises
 * it at the deadline and clears it before it resumes the script). Element
 * access, attribute reads and short calls never look.
 *
 * dlb_get_interrupter returns a reference to L's interrupt (NULL, with the
 * error pushed, when dlbridge cannot open in L); it stays valid, on any
 * thread, until dlb_interrupter_release, also after lua_close.
 * dlb_interrupt is one atomic store: callable from any thread and from a
 * signal handler. All four accept NULL.
 *
 * dlb_set_work_limit bounds the elements one call may visit (0: no limit):
 * those of the result for element-wise operations, copies and fills, of the
 * input for reductions, and the multiply-adds (M x N x K x batch) of a
 * matrix product. A call over it fails with DLB_E_INTERRUPTED before it
 * starts. Scripts cannot change either bound, even by reloading dlbridge.
 */
typedef struct dlb_interrupter dlb_interrupter;

DLB_API dlb_interrupter *dlb_get_interrupter(lua_State *L);
DLB_API void dlb_interrupt(dlb_interrupter *interrupter);
DLB_API void dlb_interrupt_clear(dlb_interrupter *interrupter);
DLB_API void dlb_interrupter_release(dlb_interrupter *interrupter);
DLB_API dlb_status dlb_set_work_limit(lua_State *L, int64_t elements);

/*
 * Files. Scripts read and write .npy and safetensors files through
 * dl.load/dl.save and dl.load_safetensors/dl.save_safetensors. A host that
 * sandboxes scripts turns that off with dlb_allow_files(L, 0): every
 * function that takes a path then raises UNSUPPORTED (the string forms,
 * dl.fromnpy and friends, still work). On by default.
 */
DLB_API dlb_status dlb_allow_files(lua_State *L, int allowed);

/*
 * Mapping. dl.load and dl.load_safetensors (and dlb_load_safetensors) map
 * the file and hand out read-only views of the mapping: no copy, however
 * large the file. The hazard of any mapping: should another writer
 * truncate the file in place while it is mapped (another program, or a
 * script through Lua's io library: io.open(path, "w")), the next read of a
 * page past its new end raises SIGBUS and the process dies. dlbridge's own
 * saves are safe (a new file replaces the old one). A host whose scripts
 * can also write files turns mapping off with dlb_allow_mapping(L, 0):
 * from then on every load from a path in L reads the file (pread) into
 * arrays of their own, and nothing is mapped. What the arrays are does not
 * change otherwise: a default load gives read-only arrays (as the views
 * would be), copy = true (DLB_LOAD_COPY) writable ones, and copy = false
 * raises COPY_REQUIRED (no view can be made). The string forms
 * (dl.fromnpy, dl.fromsafetensors) always copied anyway, and
 * dlb_push_safetensors views the host's own memory: both unaffected. On by
 * default; Lua code cannot change it. On failure (no memory to open
 * dlbridge, or dlbridge already closed with L) the error is pushed.
 */
DLB_API dlb_status dlb_allow_mapping(lua_State *L, int allowed);

/*
 * Raw pointers. On LuaJIT, a:ptr() gives scripts a typed FFI pointer to an
 * array's elements (LuaJIT's FFI can already read and write any memory,
 * so a host that sandboxes scripts has taken ffi away from them). A host
 * turns a:ptr() off with dlb_allow_pointers(L, 0): it then raises
 * UNSUPPORTED. On by default; Lua code cannot change it. On other Luas
 * a:ptr() always raises UNSUPPORTED. Fails as dlb_allow_files.
 */
DLB_API dlb_status dlb_allow_pointers(lua_State *L, int allowed);

/*
 * Loading safetensors from C, so an engine can hand weights to Lua without
 * the file system. Both push two values on success: the table name -> array
 * and the table of __metadata__ (string -> string; empty when absent).
 * Arrays are zero-copy and read-only unless flags has DLB_LOAD_COPY
 * (writable copies). dlb_load_safetensors maps the file at path (not
 * subject to dlb_allow_files: the host chose the path; subject to
 * dlb_allow_mapping: with mapping off it reads the file into read-only
 * copies); the mapping is unmapped once, when the last array, view or
 * DLPack export of it is gone. A path that names no regular file (a FIFO, a
 * directory, a device) is IO at once, without waiting.
 * dlb_push_safetensors reads size bytes at data that the host owns (e.g.
 * mapped itself): release(ctx) (may be NULL) runs exactly once when the
 * last array of it is gone, on any thread, possibly after lua_close; on
 * failure it has already run (or, with DLB_LOAD_COPY, runs before return).
 * Errors: FORMAT (a malformed file), DTYPE, SHAPE, IO, OUT_OF_MEMORY.
 */
#define DLB_LOAD_COPY 1u

DLB_API dlb_status dlb_load_safetensors(lua_State *L, const char *path, uint32_t flags);
DLB_API dlb_status dlb_push_safetensors(lua_State *L, const void *data, size_t size, uint32_t flags,
                                        void (*release)(void *ctx), void *ctx);

/* Opens the module as `require "dlbridge.core"` would (pushes its table). */
DLB_API int luaopen_dlbridge_core(lua_State *L);

/* Puts "dlbridge.core" and "dlbridge" (the Lua side, compiled in) into
 * package.preload, so that a host which links dlbridge makes `require
 * "dlbridge"` use this copy and never load a second one from disk.
 *
 * Setup order: every function of this header that takes a lua_State opens
 * dlbridge's state in it on first use (as luaopen_dlbridge_core would), so a
 * host may register backends, set a memory limit or push arrays right after
 * luaL_newstate, before or without any `require "dlbridge"`; a later require
 * returns the same module. Errors are always dlbridge.Error objects. */
DLB_API void dlb_preload(lua_State *L);

#ifdef __cplusplus
}
#endif
#endif
