/* library.c -- a system library opened at run time (see library.h). */
#define _GNU_SOURCE /* Dl_info and dladdr for the path */
#include "library.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* Opens lib and resolves its symbols; 1 when every one is there. */
static int open_library(dlb_library *lib) {
  const char *name = getenv(lib->env);
  void *handle = dlopen(name && *name ? name : lib->default_name, RTLD_NOW | RTLD_LOCAL);
  Dl_info info;
  int ok = 1;
  if (!handle) return 0;
  for (size_t k = 0; k < lib->count; k++) {
    *lib->symbols[k].slot = dlsym(handle, lib->symbols[k].name);
    ok &= *lib->symbols[k].slot != NULL;
  }
  if (!ok || lib->count == 0) {
    dlclose(handle);
    return 0;
  }
  snprintf(lib->path, lib->path_size, "%s",
           dladdr(*lib->symbols[0].slot, &info) && info.dli_fname ? info.dli_fname
                                                                  : lib->default_name);
  return 1;
}

int dlb_library_load(dlb_library *lib) {
  int state = atomic_load_explicit(&lib->state, memory_order_acquire);
  if (state == 0) { /* the first calls: one opens, the others wait for it */
    pthread_mutex_lock(&lib->lock);
    state = atomic_load_explicit(&lib->state, memory_order_relaxed);
    if (state == 0) {
      state = open_library(lib) ? 1 : 2;
      atomic_store_explicit(&lib->state, state, memory_order_release);
    }
    pthread_mutex_unlock(&lib->lock);
  }
  return state == 1;
}
