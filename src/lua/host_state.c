/* host_state.c -- what dlbridge keeps for one lua_State outside Lua, where a
 * script cannot reset it.
 *
 * The backend registry, the memory budget (with the host's limit, interrupt
 * and work limit) and the host's switches live in a C struct found through
 * a process-wide list keyed by the lua_State's main thread. The State
 * userdata only points at it. A script that reaches the registry (the debug
 * library) can clear dlbridge's keys and require the module again; the new
 * module adopts the same host state, so the host's limit, file access and
 * registered backends stay as they were.
 *
 * Lifetime: every State userdata holds a reference, dropped when the State
 * is finalized in lua_close; the last one takes the entry out of the list
 * (a new lua_State at the same address starts afresh) and frees it. A
 * State found garbage before (only a script that cleared every reference
 * to dlbridge through the debug library gets there) resurrects itself
 * (module.c), so that lua_close still ends it. */
#include <pthread.h>
#include <stdlib.h>
#include "../backends/cpu/cpu.h"
#include "../backends/cuda/cuda.h"
#include "hostapi.h"

struct dlb_host_state {
  const void *main; /* the key: dlbL_state_identity of the lua_State */
  size_t refs;      /* States pointing here (under list_lock) */
  dlb_registry *registry;
  dlb_backend *cpu;
  dlb_budget *budget;
  int files_allowed;    /* dlb_allow_files */
  int mapping_allowed;  /* dlb_allow_mapping */
  int pointers_allowed; /* dlb_allow_pointers */
  struct dlb_host_state *next;
};

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static dlb_host_state *list_head;

static void host_free(dlb_host_state *h) {
  dlb_budget_close(h->budget); /* the cpu backend lives on while its charges are out */
  dlb_registry_free(h->registry);
  dlb_backend_release(h->cpu);
  dlb_budget_release(h->budget);
  free(h);
}

/* Registers the cuda backend (it opens the driver on first use only). */
static dlb_status add_cuda(dlb_host_state *h, dlb_error *err) {
  dlb_backend *cuda;
  dlb_status st = dlb_cuda_backend_create(&cuda, err);
  if (st != DLB_OK) return st;
  dlb_backend_set_budget(cuda, h->budget);
  st = dlb_registry_add(h->registry, cuda, err);
  dlb_backend_release(cuda);
  return st;
}

/* A new host state with the cpu and cuda backends registered, or NULL (err filled). */
static dlb_host_state *host_new(const void *main, dlb_error *err) {
  dlb_host_state *h = calloc(1, sizeof *h);
  if (!h || !(h->budget = dlb_budget_new()) || !(h->registry = dlb_registry_new())) {
    if (h) host_free(h);
    dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for dlbridge's state");
    return NULL;
  }
  h->main = main;
  h->files_allowed = 1;
  h->mapping_allowed = 1;
  h->pointers_allowed = 1;
  if (dlb_cpu_backend_create(&h->cpu, err) != DLB_OK) {
    host_free(h);
    return NULL;
  }
  dlb_backend_set_budget(h->cpu, h->budget);
  h->cpu->in_use_derived = 1; /* before any allocation: see backend.h */
  dlb_backend_live_by_budget(h->cpu);
  if (dlb_registry_add(h->registry, h->cpu, err) != DLB_OK || add_cuda(h, err) != DLB_OK) {
    host_free(h);
    return NULL;
  }
  return h;
}

dlb_status dlbL_host_adopt(lua_State *L, dlb_lua_state *state, dlb_error *err) {
  const void *main = dlbL_state_identity(L);
  dlb_host_state *h;
  pthread_mutex_lock(&list_lock);
  for (h = list_head; h && h->main != main; h = h->next) {
  }
  if (h) {
    h->refs++;
  } else if ((h = host_new(main, err)) != NULL) {
    h->refs = 1;
    h->next = list_head;
    list_head = h;
  }
  pthread_mutex_unlock(&list_lock);
  if (!h) return err->code;
  state->host = h;
  state->registry = h->registry;
  state->cpu = h->cpu;
  state->budget = h->budget;
  return DLB_OK;
}

int dlbL_looks_like_close(lua_State *L) {
  lua_Debug ar;
  return dlbL_is_main_thread(L) && !lua_getstack(L, 1, &ar);
}

void dlbL_host_release(dlb_lua_state *state) {
  dlb_host_state *h = state->host;
  int last;
  if (!h) return;
  state->host = NULL;
  state->registry = NULL;
  state->cpu = NULL;
  state->budget = NULL;
  pthread_mutex_lock(&list_lock);
  last = --h->refs == 0;
  if (last)
    for (dlb_host_state **p = &list_head; *p; p = &(*p)->next)
      if (*p == h) {
        *p = h->next;
        break;
      }
  pthread_mutex_unlock(&list_lock);
  if (last) host_free(h);
}

int dlbL_files_allowed(const dlb_lua_state *state) {
  return state->host && state->host->files_allowed;
}

int dlbL_mapping_allowed(const dlb_lua_state *state) {
  return state->host && state->host->mapping_allowed;
}

int dlbL_pointers_allowed(const dlb_lua_state *state) {
  return state->host && state->host->pointers_allowed;
}

void dlbL_set_pointers_allowed(dlb_lua_state *state, int allowed) {
  state->host->pointers_allowed = allowed != 0;
}

void dlbL_set_files_allowed(dlb_lua_state *state, int allowed) {
  state->host->files_allowed = allowed != 0;
}

void dlbL_set_mapping_allowed(dlb_lua_state *state, int allowed) {
  state->host->mapping_allowed = allowed != 0;
}

/* --- the host's bounds on work (work.h), through the C API --- */

DLB_API dlb_interrupter *dlb_get_interrupter(lua_State *L) {
  dlb_error err;
  dlb_lua_state *state = dlbL_open_state(L, &err);
  if (!state) {
    dlbL_capi_failed(L, &err, "dlb_get_interrupter");
    return NULL;
  }
  dlb_budget_retain(state->budget);
  return (dlb_interrupter *)state->budget;
}

DLB_API void dlb_interrupt(dlb_interrupter *interrupter) {
  if (interrupter)
    atomic_store_explicit(&((dlb_budget *)interrupter)->interrupt, 1, memory_order_relaxed);
}

DLB_API void dlb_interrupt_clear(dlb_interrupter *interrupter) {
  if (interrupter)
    atomic_store_explicit(&((dlb_budget *)interrupter)->interrupt, 0, memory_order_relaxed);
}

DLB_API void dlb_interrupter_release(dlb_interrupter *interrupter) {
  dlb_budget_release((dlb_budget *)interrupter);
}

DLB_API dlb_status dlb_set_work_limit(lua_State *L, int64_t elements) {
  dlb_error err;
  dlb_lua_state *state = dlbL_open_state(L, &err);
  if (!state) return dlbL_capi_failed(L, &err, "dlb_set_work_limit");
  atomic_store(&state->budget->work_limit, elements > 0 ? elements : 0);
  return DLB_OK;
}
