/* backend.h -- refcounted backend objects and the per-state registry. */
#ifndef DLB_CORE_BACKEND_H
#define DLB_CORE_BACKEND_H

#include <pthread.h>
#include <stdatomic.h>
#include "budget.h"
#include "error.h"

/* The most freed small-buffer blocks a backend keeps (dlb_backend.kept). */
#define DLB_KEPT_BLOCKS 64
/* Whether backends keep them: not under AddressSanitizer, so that a use
 * after free of a small buffer is still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define DLB_KEEPS_BLOCKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DLB_KEEPS_BLOCKS 0
#endif
#endif
#ifndef DLB_KEEPS_BLOCKS
#define DLB_KEEPS_BLOCKS 1
#endif

/* One registered backend. Buffers hold a reference (or, on a backend living
 * by its budget, their charge), so a backend outlives the lua_State that
 * registered it while memory it allocated is still out. */
typedef struct dlb_backend {
  atomic_size_t refs;
  dlb_backend_ops ops; /* copied at creation; ops.name points into name, ops.kernels to kernels */
  dlb_kernels kernels; /* an older version's kernel table, copied (later entries NULL) */
  void *ctx;
  char name[32];
  dlb_budget *budget;   /* retained; the state's budget, NULL outside a state */
  atomic_size_t in_use; /* bytes of this backend's live buffers (see in_use_derived) */
  /* Set for a state's cpu backend: in_use is not counted (one atomic less
   * on every allocation and free) but derived, as the budget's in_use less
   * that of the state's other backends (dlb_backend_in_use). */
  int in_use_derived;
  /* Set for a state's cpu backend (dlb_backend_live_by_budget): its buffers
   * with bytes charged hold it by their charge, not by a reference each. */
  int lives_by_budget;
  /* Buffers up to this many bytes share one block with their header (the
   * handle is then the 64-byte aligned data address, which the backend's
   * hooks take as an allocation of its own at offset 0, and is never
   * deallocated by itself). 0: none. The cpu backend's (dlb_cpu_backend_create). */
  size_t inline_bytes;
  /* Freed blocks of those small buffers, kept for the next ones
   * (dlb_backend_take_block, dlb_backend_keep_block): only by the thread
   * that created the backend. A child of fork() forgets the parent's list. */
  pthread_t kept_by;
  unsigned kept_fork; /* the process's fork count when the list began (backend.c) */
  int kept_count;
  void *kept[DLB_KEPT_BLOCKS];
} dlb_backend;

/* Validates ops (version, name, required functions) and makes a backend
 * with one reference. DLB_E_ARGUMENT for a bad vtable. */
dlb_status dlb_backend_create(const dlb_backend_ops *ops, void *ctx, dlb_backend **out,
                              dlb_error *err);
void dlb_backend_retain(dlb_backend *backend);
/* A kept block of a small buffer, or NULL: none kept, or not the thread
 * that created the backend. */
void *dlb_backend_take_block(dlb_backend *backend);
/* Keeps the freed block of a small buffer for the next one; 0 when it does
 * not (another thread, a full list): the caller frees it. Called while the
 * buffer still holds its reference to the backend: the backend's last
 * release frees the list. */
int dlb_backend_keep_block(dlb_backend *backend, void *block);
/* Drops a reference; the last one calls ops.release(ctx) and frees. */
void dlb_backend_release(dlb_backend *backend);

/* Charges the backend's state budget (when it has one) and its in_use
 * with nbytes; DLB_E_OUT_OF_MEMORY over the limit, nothing counted. */
dlb_status dlb_backend_charge(dlb_backend *backend, size_t nbytes, dlb_error *err);
/* Gives back what dlb_backend_charge counted. Any thread. */
void dlb_backend_refund(dlb_backend *backend, size_t nbytes);
/* Makes budget (retained) the one this backend charges; once, before use. */
void dlb_backend_set_budget(dlb_backend *backend, dlb_budget *budget);
/* Opens the backend's budget with a reference to the backend that ends
 * when the budget is closed and its last charge refunded (budget.h); from
 * then on a buffer with bytes charged holds the backend by its charge. Once,
 * after dlb_backend_set_budget, before any allocation. */
void dlb_backend_live_by_budget(dlb_backend *backend);

struct dlb_registry;
/* Bytes of the backend's live buffers. For a backend with in_use_derived,
 * the budget's in_use less that of the registry's other backends charging
 * the same budget (exact when nothing allocates or frees meanwhile). */
size_t dlb_backend_in_use(const dlb_backend *backend, const struct dlb_registry *registry);

/* Number of devices now (0 when unavailable). */
int dlb_backend_device_count(const dlb_backend *backend);

/* Turns a failed backend call into err: keeps the backend's status code
 * (OUT_OF_MEMORY or BACKEND_FAILURE; anything else becomes BACKEND_FAILURE),
 * the backend's name and its native status where last_status exists. */
dlb_status dlb_backend_failed(const dlb_backend *backend, dlb_status status, const char *what,
                              dlb_error *err);

/* The backends of one lua_State, by name. Holds a reference to each. */
typedef struct dlb_registry {
  size_t count, capacity;
  dlb_backend **items;
} dlb_registry;

/* An empty registry, or NULL when out of memory. */
dlb_registry *dlb_registry_new(void);
/* Drops the registry's references and frees it. NULL is fine. */
void dlb_registry_free(dlb_registry *registry);
/* Adds a backend (retains it); DLB_E_ARGUMENT if the name is taken. */
dlb_status dlb_registry_add(dlb_registry *registry, dlb_backend *backend, dlb_error *err);
/* The backend of that name, or NULL. */
dlb_backend *dlb_registry_find(const dlb_registry *registry, const char *name, size_t len);
/* The first backend of DLPack device type that adopts foreign memory, or NULL. */
dlb_backend *dlb_registry_adopter(const dlb_registry *registry, int32_t device_type);

/* Parses "cpu", "cpu:0", "engine:1". DLB_E_UNKNOWN_DEVICE for an unknown
 * name, a malformed string or a device id out of range; DLB_E_DEVICE_UNAVAILABLE
 * when the backend has no devices here. */
dlb_status dlb_registry_parse_device(const dlb_registry *registry, const char *text, size_t len,
                                     dlb_backend **backend, int *device_id, dlb_error *err);

#endif
