/* driver.c -- loading the CUDA driver at run time, once per process.
 *
 * The library is $DLB_CUDA_DRIVER when set (a stand-in for tests, or a
 * driver elsewhere), else libcuda.so.1; it is never linked. Entry points
 * come from cuGetProcAddress_v2 (CUDA 12), else cuGetProcAddress (11.3),
 * else dlsym of the _v2 symbol names (older drivers), always with the
 * legacy default stream's semantics (CU_GET_PROC_ADDRESS_LEGACY_STREAM: the
 * handle 0 and DLPack's stream 1 are the legacy stream, never the thread's
 * own). Loading runs on the
 * first use of a cuda device or of dl.backends(), never at require; its
 * outcome (the table or the reason) is fixed for the process's life. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "driver.h"

typedef CUresult (*proc_v2_fn)(const char *, void **, int, uint64_t, int *);
typedef CUresult (*proc_fn)(const char *, void **, int, uint64_t);

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static dlb_cu driver;
static const dlb_cu *loaded;
static const char *why = "the CUDA driver was not loaded";
static char why_text[256];

/* Keeps a formatted reason for the process's life. */
static void set_reason(const char *fmt, const char *a, long b) {
  snprintf(why_text, sizeof why_text, fmt, a, b);
  why = why_text;
}

/* One entry point by base name, else by its versioned symbol. */
static void *resolve(void *lib, proc_v2_fn proc_v2, proc_fn proc, const char *base,
                     const char *symbol) {
  void *fn = NULL;
  int found = 0;
  if (proc_v2 &&
      proc_v2(base, &fn, DLB_CU_API_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found) ==
          CUDA_SUCCESS &&
      fn)
    return fn;
  fn = NULL;
  if (proc &&
      proc(base, &fn, DLB_CU_API_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM) == CUDA_SUCCESS && fn)
    return fn;
  return dlsym(lib, symbol);
}

/* Fills driver from lib; 0 (reason set) when an entry point is missing. */
static int resolve_all(void *lib) {
  proc_v2_fn proc_v2 = (proc_v2_fn)dlsym(lib, "cuGetProcAddress_v2");
  proc_fn proc = (proc_fn)dlsym(lib, "cuGetProcAddress");
  void *fn;
#define DLB_CU_RESOLVE_(field, base, symbol, args)                                                 \
  if (!(fn = resolve(lib, proc_v2, proc, #base, #symbol))) {                                       \
    set_reason("the CUDA driver has no %s (too old?)%.0ld", #base, 0);                             \
    return 0;                                                                                      \
  }                                                                                                \
  memcpy(&driver.field, &fn, sizeof fn);
  DLB_CU_FUNCTIONS(DLB_CU_RESOLVE_)
#undef DLB_CU_RESOLVE_
#define DLB_CU_RESOLVE_OPTIONAL_(field, base, symbol, args)                                        \
  fn = resolve(lib, proc_v2, proc, #base, #symbol);                                                \
  memcpy(&driver.field, &fn, sizeof fn);
  DLB_CU_OPTIONAL_FUNCTIONS(DLB_CU_RESOLVE_OPTIONAL_)
#undef DLB_CU_RESOLVE_OPTIONAL_
  return 1;
}

/* cuInit and the device count; 0 (reason set) when no device can be used. */
static int start(void) {
  CUresult r = driver.init(0);
  int n = 0;
  if (r == CUDA_SUCCESS) r = driver.device_count(&n);
  if (r != CUDA_SUCCESS) {
    const char *name = NULL;
    if (driver.error_name(r, &name) != CUDA_SUCCESS || !name) name = "CUDA error";
    set_reason("the CUDA driver cannot start: %s (%ld)", name, (long)r);
    return 0;
  }
  if (n <= 0) {
    why = "the CUDA driver reports no device";
    return 0;
  }
  driver.devices = n;
  return 1;
}

static void load(void) {
  const char *path = getenv("DLB_CUDA_DRIVER");
  void *lib;
  if (!path || !*path) path = "libcuda.so.1";
  if (!(lib = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
    set_reason("cannot load the CUDA driver %s (no NVIDIA driver here?)%.0ld", path, 0);
    return;
  }
  if (!resolve_all(lib) || !start()) return; /* lib stays open: reasons may point into it */
  loaded = &driver;
}

const dlb_cu *dlb_cu_driver(const char **reason) {
  pthread_once(&load_once, load);
  if (reason) *reason = loaded ? NULL : why;
  return loaded;
}

const char *dlb_cu_error_name(CUresult r) {
  const char *name = NULL;
  const dlb_cu *cu = dlb_cu_driver(NULL);
  if (!cu || cu->error_name(r, &name) != CUDA_SUCCESS || !name) return "CUDA error";
  return name;
}
