/* backend.c -- refcounted backend objects and the per-state registry. */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "invariant.h"

/* Records an ARGUMENT failure of a backend's registration with its hint
 * (static text); returns DLB_E_ARGUMENT. */
static dlb_status invalid_ops(dlb_error *err, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static dlb_status invalid_ops(dlb_error *err, const char *hint, const char *fmt, ...) {
  char message[sizeof err->message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  dlb_fail(err, DLB_E_ARGUMENT, "%s", message);
  dlb_error_hint(err, hint);
  return DLB_E_ARGUMENT;
}

/* A backend name is [a-z][a-z0-9_]* and fits name[32]. */
static int valid_name(const char *name) {
  size_t n = name ? strlen(name) : 0;
  if (n == 0 || n > 31 || !(name[0] >= 'a' && name[0] <= 'z')) return 0;
  for (size_t i = 1; i < n; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return 0;
  }
  return 1;
}

/* The bytes of dlb_kernels a table of version fills (version is valid). */
static size_t kernels_size(uint32_t version) {
  switch (version) {
    case 1: return offsetof(dlb_kernels, sort);
    case 2: return offsetof(dlb_kernels, scatter);
    default: return sizeof(dlb_kernels);
  }
}

/* The bytes of dlb_backend_ops a table of version fills (0: a version
 * this library does not know). Fields are only appended, so a version's
 * table is a prefix of the newest one. */
static size_t ops_size(uint32_t version) {
  switch (version) {
    case DLB_BACKEND_OPS_VERSION_1: return offsetof(dlb_backend_ops, copy_strided);
    case DLB_BACKEND_OPS_VERSION_2: return sizeof(dlb_backend_ops);
    default: return 0;
  }
}

/*
 * Freed small blocks are kept by their backend for its next small buffer.
 * The Lua collector frees temporaries in bursts, which overflow malloc's
 * per-thread cache (7 blocks a size): the allocation after a burst then
 * takes malloc's slow path (a third of a 10-element a + b's C time was
 * malloc). NumPy keeps such a cache of small data blocks for the same
 * reason. Only the backend's creating thread uses its list (a state's
 * collector and calls run there); a release on any other thread (a DLPack
 * deleter) frees its block. A process-wide list behind a spinlock cost two
 * locked instructions a temporary, and states on two threads contending
 * for it ran 10-element calls 2.8-3.6 times slower (bench/states_threads.c).
 *
 * A child of fork() forgets a list made before the fork (those blocks
 * stay allocated there; another thread may have been halfway through an
 * update) and starts a new one: in a server that loads dlbridge and then
 * forks its workers (OpenResty), the forking thread goes on keeping blocks
 * in each worker.
 */
static atomic_uint forks; /* how many fork()s this process descends through */

static void count_fork(void) { atomic_fetch_add_explicit(&forks, 1, memory_order_relaxed); }

__attribute__((constructor)) static void register_fork(void) {
  pthread_atfork(NULL, NULL, count_fork);
}

static int owns_kept_list(const dlb_backend *backend) {
  return backend->kept_fork == atomic_load_explicit(&forks, memory_order_relaxed);
}

/* Whether this thread keeps the backend's blocks; after a fork, the first
 * call forgets the list made before it. */
static int keeps_blocks(dlb_backend *backend) {
  if (!DLB_KEEPS_BLOCKS || !pthread_equal(pthread_self(), backend->kept_by)) return 0;
  if (!owns_kept_list(backend)) {
    backend->kept_count = 0;
    backend->kept_fork = atomic_load_explicit(&forks, memory_order_relaxed);
  }
  return 1;
}

void *dlb_backend_take_block(dlb_backend *backend) {
  if (keeps_blocks(backend) && backend->kept_count > 0) return backend->kept[--backend->kept_count];
  return NULL;
}

int dlb_backend_keep_block(dlb_backend *backend, void *block) {
  if (!keeps_blocks(backend) || backend->kept_count >= DLB_KEPT_BLOCKS) return 0;
  backend->kept[backend->kept_count++] = block;
  return 1;
}

dlb_status dlb_backend_create(const dlb_backend_ops *ops, void *ctx, dlb_backend **out,
                              dlb_error *err) {
  dlb_backend *b;
  if (!ops)
    return invalid_ops(err,
                       "the ops table is static data of the backend, filled "
                       "before dlb_register_backend",
                       "backend ops are NULL");
  if (!ops_size(ops->version))
    return invalid_ops(err,
                       "set ops.version to DLB_BACKEND_OPS_VERSION (or the version whose "
                       "fields the table fills) and rebuild the backend",
                       "backend ops version %u: this dlbridge takes 1 to %u",
                       (unsigned)ops->version, (unsigned)DLB_BACKEND_OPS_VERSION);
  if (!valid_name(ops->name))
    return invalid_ops(err,
                       "name the backend like a Lua identifier in lower case, e.g. "
                       "\"engine\" or \"my_gpu2\"",
                       "a backend name is [a-z][a-z0-9_]*, at most 31 chars");
  if (!ops->device_count || !ops->allocate || !ops->deallocate || !ops->copy_to_host ||
      !ops->copy_from_host)
    return invalid_ops(err,
                       "every backend implements these five; the other functions are "
                       "optional (NULL)",
                       "backend '%s' lacks a required function (device_count, allocate, "
                       "deallocate, copy_to_host, copy_from_host)",
                       ops->name);
  if (ops->version >= DLB_BACKEND_OPS_VERSION_2 && ops->kernels &&
      (ops->kernels->version < 1 || ops->kernels->version > DLB_KERNELS_VERSION))
    return invalid_ops(err, "set kernels.version = DLB_KERNELS_VERSION",
                       "backend '%s': kernels version %u, this dlbridge takes 1 to %u", ops->name,
                       (unsigned)ops->kernels->version, (unsigned)DLB_KERNELS_VERSION);
  b = calloc(1, sizeof *b);
  if (!b) return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for backend '%s'", ops->name);
  atomic_init(&b->refs, 1);
  atomic_init(&b->in_use, 0);
  b->budget = NULL;
  memcpy(&b->ops, ops, ops_size(ops->version)); /* later fields stay NULL */
  b->ctx = ctx;
  b->kept_by = pthread_self();
  b->kept_fork = atomic_load_explicit(&forks, memory_order_relaxed);
  strcpy(b->name, ops->name);
  b->ops.name = b->name;
  if (b->ops.kernels && b->ops.kernels->version < DLB_KERNELS_VERSION) {
    /* An older table: its fields (only ever appended) copied, the rest NULL. */
    memcpy(&b->kernels, b->ops.kernels, kernels_size(b->ops.kernels->version));
    b->ops.kernels = &b->kernels;
  }
  *out = b;
  return DLB_OK;
}

void dlb_backend_retain(dlb_backend *backend) {
  atomic_fetch_add_explicit(&backend->refs, 1, memory_order_relaxed);
}

void dlb_backend_release(dlb_backend *backend) {
  if (!backend) return;
  if (atomic_fetch_sub_explicit(&backend->refs, 1, memory_order_acq_rel) != 1) return;
  if (backend->ops.release) backend->ops.release(backend->ctx);
  while (owns_kept_list(backend) && backend->kept_count > 0)
    free(backend->kept[--backend->kept_count]);
  dlb_budget_release(backend->budget);
  free(backend);
}

void dlb_backend_set_budget(dlb_backend *backend, dlb_budget *budget) {
  dlb_budget_retain(budget);
  dlb_budget_release(backend->budget);
  backend->budget = budget;
}

/* The budget's emptied: the charges' reference ends. */
static void charges_ended(void *backend) { dlb_backend_release(backend); }

void dlb_backend_live_by_budget(dlb_backend *backend) {
  DLB_ASSERT(backend->budget && !backend->lives_by_budget);
  dlb_backend_retain(backend);
  backend->lives_by_budget = 1;
  dlb_budget_open(backend->budget, charges_ended, backend);
}

dlb_status dlb_backend_charge(dlb_backend *backend, size_t nbytes, dlb_error *err) {
  if (backend->budget) {
    dlb_status st = dlb_budget_charge(backend->budget, nbytes, err);
    if (st != DLB_OK) {
      if (err) strcpy(err->backend, backend->name);
      return st;
    }
  }
  if (!backend->in_use_derived)
    atomic_fetch_add_explicit(&backend->in_use, nbytes, memory_order_relaxed);
  return DLB_OK;
}

void dlb_backend_refund(dlb_backend *backend, size_t nbytes) {
  if (!backend->in_use_derived)
    atomic_fetch_sub_explicit(&backend->in_use, nbytes, memory_order_relaxed);
  if (backend->budget) dlb_budget_refund(backend->budget, nbytes);
}

size_t dlb_backend_in_use(const dlb_backend *backend, const dlb_registry *registry) {
  size_t total, others = 0;
  if (!backend->in_use_derived || !backend->budget)
    return atomic_load_explicit(&backend->in_use, memory_order_relaxed);
  total = dlb_budget_in_use(backend->budget);
  for (size_t i = 0; registry && i < registry->count; i++) {
    const dlb_backend *b = registry->items[i];
    if (b != backend && b->budget == backend->budget && !b->in_use_derived)
      others += atomic_load_explicit(&b->in_use, memory_order_relaxed);
  }
  return total > others ? total - others : 0; /* a free racing the loads: never below 0 */
}

int dlb_backend_device_count(const dlb_backend *backend) {
  int n = backend->ops.device_count(backend->ctx);
  return n < 0 ? 0 : n;
}

dlb_status dlb_backend_failed(const dlb_backend *backend, dlb_status status, const char *what,
                              dlb_error *err) {
  dlb_status code = status == DLB_E_OUT_OF_MEMORY || status == DLB_E_DEVICE_UNAVAILABLE
                        ? status
                        : DLB_E_BACKEND_FAILURE;
  int64_t native = backend->ops.last_status ? backend->ops.last_status(backend->ctx) : 0;
  const char *name = backend->ops.last_status && backend->ops.status_name
                         ? backend->ops.status_name(backend->ctx, native)
                         : NULL;
  if (name)
    dlb_fail(err, code, "backend '%s' failed to %s: %s (%lld)", backend->name, what, name,
             (long long)native);
  else dlb_fail(err, code, "backend '%s' failed to %s", backend->name, what);
  if (err) {
    strcpy(err->backend, backend->name);
    if (backend->ops.last_status) {
      err->has_native = 1;
      err->native_status = native;
    }
  }
  return code;
}

dlb_registry *dlb_registry_new(void) { return calloc(1, sizeof(dlb_registry)); }

void dlb_registry_free(dlb_registry *registry) {
  if (!registry) return;
  for (size_t i = 0; i < registry->count; i++) dlb_backend_release(registry->items[i]);
  free(registry->items);
  free(registry);
}

dlb_status dlb_registry_add(dlb_registry *registry, dlb_backend *backend, dlb_error *err) {
  if (dlb_registry_find(registry, backend->name, strlen(backend->name)))
    return invalid_ops(err,
                       "register a backend once per lua_State; dl.backends() lists those "
                       "registered",
                       "a backend named '%s' is already registered", backend->name);
  if (registry->count == registry->capacity) {
    size_t cap = registry->capacity ? registry->capacity * 2 : 4;
    dlb_backend **items = realloc(registry->items, cap * sizeof *items);
    if (!items) return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory to register a backend");
    registry->items = items;
    registry->capacity = cap;
  }
  dlb_backend_retain(backend);
  registry->items[registry->count++] = backend;
  return DLB_OK;
}

dlb_backend *dlb_registry_find(const dlb_registry *registry, const char *name, size_t len) {
  for (size_t i = 0; i < registry->count; i++) {
    dlb_backend *b = registry->items[i];
    if (strlen(b->name) == len && memcmp(b->name, name, len) == 0) return b;
  }
  return NULL;
}

/* Parses the decimal id after ':'; -1 when malformed or absurdly large. */
static int parse_device_id(const char *s, size_t len) {
  int id = 0;
  if (len == 0 || len > 6) return -1;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    id = id * 10 + (s[i] - '0');
  }
  return id;
}

dlb_status dlb_registry_parse_device(const dlb_registry *registry, const char *text, size_t len,
                                     dlb_backend **backend, int *device_id, dlb_error *err) {
  const char *colon = memchr(text, ':', len);
  size_t name_len = colon ? (size_t)(colon - text) : len;
  int id = 0, count;
  dlb_backend *b = dlb_registry_find(registry, text, name_len);
  if (!b)
    return dlb_fail(err, DLB_E_UNKNOWN_DEVICE, "no backend named '%.*s'",
                    (int)(name_len > 64 ? 64 : name_len), text);
  if (colon && (id = parse_device_id(colon + 1, len - name_len - 1)) < 0)
    return dlb_fail(err, DLB_E_UNKNOWN_DEVICE, "bad device id in '%.*s' (expected name:N)",
                    (int)(len > 64 ? 64 : len), text);
  count = dlb_backend_device_count(b);
  if (count == 0) {
    dlb_fail(err, DLB_E_DEVICE_UNAVAILABLE, "backend '%s' has no devices here", b->name);
    if (err) strcpy(err->backend, b->name);
    return DLB_E_DEVICE_UNAVAILABLE;
  }
  if (id >= count)
    return dlb_fail(err, DLB_E_UNKNOWN_DEVICE,
                    "backend '%s' has %d device(s); %s:%d does not exist", b->name, count, b->name,
                    id);
  *backend = b;
  *device_id = id;
  return DLB_OK;
}

dlb_backend *dlb_registry_adopter(const dlb_registry *registry, int32_t device_type) {
  for (size_t i = 0; registry && i < registry->count; i++)
    if (registry->items[i]->ops.device_type == device_type && registry->items[i]->ops.adopt)
      return registry->items[i];
  return NULL;
}
