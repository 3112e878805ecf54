/* blas.c -- opening CBLAS on first use (see blas.h). */
#define _GNU_SOURCE /* dlinfo-free: RTLD_* and Dl_info for the path */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "blas.h"

static dlb_blas blas;
static const dlb_blas *loaded;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

/* Resolves one symbol into *slot; 0 when the library lacks it. */
static int resolve(void *lib, const char *name, void **slot) {
  *slot = dlsym(lib, name);
  return *slot != NULL;
}

static void open_blas(void) {
  const char *name = getenv("DLBRIDGE_BLAS");
  void *lib = dlopen(name && *name ? name : "libblas.so.3", RTLD_NOW | RTLD_LOCAL);
  Dl_info info;
  int ok;
  if (!lib) return;
  ok = resolve(lib, "cblas_sgemm", (void **)&blas.sgemm) &
       resolve(lib, "cblas_dgemm", (void **)&blas.dgemm) &
       resolve(lib, "cblas_cgemm", (void **)&blas.cgemm) &
       resolve(lib, "cblas_zgemm", (void **)&blas.zgemm) &
       resolve(lib, "cblas_sgemv", (void **)&blas.sgemv) &
       resolve(lib, "cblas_dgemv", (void **)&blas.dgemv) &
       resolve(lib, "cblas_cgemv", (void **)&blas.cgemv) &
       resolve(lib, "cblas_zgemv", (void **)&blas.zgemv) &
       resolve(lib, "cblas_sdot", (void **)&blas.sdot) &
       resolve(lib, "cblas_ddot", (void **)&blas.ddot) &
       resolve(lib, "cblas_cdotu_sub", (void **)&blas.cdotu_sub) &
       resolve(lib, "cblas_zdotu_sub", (void **)&blas.zdotu_sub);
  if (!ok) {
    dlclose(lib);
    return;
  }
  snprintf(blas.path, sizeof blas.path, "%s",
           dladdr((void *)blas.sgemm, &info) && info.dli_fname ? info.dli_fname : "libblas.so.3");
  loaded = &blas; /* kept open for the process's life, as a linked library would be */
}

const dlb_blas *dlb_blas_get(void) {
  pthread_once(&blas_once, open_blas);
  return loaded;
}
