/* library.c -- a system library opened at run time (see library.h). */
#define _GNU_SOURCE /* Dl_info and dladdr for the path */
#include "library.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int dlb_library_open(const char *env, const char *default_name, const dlb_library_symbol *symbols,
                     size_t count, char *path, size_t path_size) {
  const char *name = getenv(env);
  void *lib = dlopen(name && *name ? name : default_name, RTLD_NOW | RTLD_LOCAL);
  Dl_info info;
  int ok = 1;
  if (!lib) return 0;
  for (size_t k = 0; k < count; k++) {
    *symbols[k].slot = dlsym(lib, symbols[k].name);
    ok &= *symbols[k].slot != NULL;
  }
  if (!ok || count == 0) {
    dlclose(lib);
    return 0;
  }
  snprintf(path, path_size, "%s",
           dladdr(*symbols[0].slot, &info) && info.dli_fname ? info.dli_fname : default_name);
  return 1;
}
