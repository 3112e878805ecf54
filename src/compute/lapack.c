/* lapack.c -- opening LAPACK on first use (see lapack.h). */
#define _GNU_SOURCE /* Dl_info for the path */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "lapack.h"

static dlb_lapack lapack;
static const dlb_lapack *loaded;
static pthread_once_t lapack_once = PTHREAD_ONCE_INIT;

/* Resolves one symbol into *slot; 0 when the library lacks it. */
static int resolve(void *lib, const char *name, void **slot) {
  *slot = dlsym(lib, name);
  return *slot != NULL;
}

static void open_lapack(void) {
  const char *name = getenv("DLBRIDGE_LAPACK");
  void *lib = dlopen(name && *name ? name : "liblapack.so.3", RTLD_NOW | RTLD_LOCAL);
  Dl_info info;
  int ok;
  if (!lib) return;
  ok = resolve(lib, "dgetrf_", (void **)&lapack.dgetrf) &
       resolve(lib, "dgesv_", (void **)&lapack.dgesv) &
       resolve(lib, "dpotrf_", (void **)&lapack.dpotrf) &
       resolve(lib, "dsyevd_", (void **)&lapack.dsyevd) &
       resolve(lib, "dgesdd_", (void **)&lapack.dgesdd) &
       resolve(lib, "dgeqrf_", (void **)&lapack.dgeqrf) &
       resolve(lib, "dorgqr_", (void **)&lapack.dorgqr) &
       resolve(lib, "dgelsd_", (void **)&lapack.dgelsd);
  if (!ok) {
    dlclose(lib);
    return;
  }
  snprintf(lapack.path, sizeof lapack.path, "%s",
           dladdr((void *)lapack.dgesv, &info) && info.dli_fname ? info.dli_fname
                                                                 : "liblapack.so.3");
  loaded = &lapack; /* kept open for the process's life, as a linked library would be */
}

const dlb_lapack *dlb_lapack_get(void) {
  pthread_once(&lapack_once, open_lapack);
  return loaded;
}
