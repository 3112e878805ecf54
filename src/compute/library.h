/* library.h -- a system library opened at run time, on first use (CBLAS in
 * blas.c, LAPACK in lapack.c): not linked, so that loading dlbridge starts
 * no thread pool and a host that never calls them pays nothing. No Lua. */
#ifndef DLB_COMPUTE_LIBRARY_H
#define DLB_COMPUTE_LIBRARY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

/* One function to find: its name in the library and where to put it. */
typedef struct dlb_library_symbol {
  const char *name;
  void **slot;
} dlb_library_symbol;

/* A library to open: the environment variable env names its file (when set
 * and not empty), else default_name; every symbol must resolve. path
 * (path_size bytes) gets the file the first symbol came from. */
typedef struct dlb_library {
  const char *env, *default_name;
  const dlb_library_symbol *symbols;
  size_t count;
  char *path;
  size_t path_size;
  pthread_mutex_t lock; /* held while it opens */
  atomic_int state;     /* 0 not tried, 1 there, 2 missing: set once, under lock */
} dlb_library;

#define DLB_LIBRARY(env, default_name, symbols, path)                                              \
  {                                                                                                \
    (env), (default_name), (symbols), sizeof(symbols) / sizeof((symbols)[0]), (path),              \
        sizeof(path), PTHREAD_MUTEX_INITIALIZER, 0                                                 \
  }

/*
 * Whether lib is there: opens it on the first call (any thread; the others
 * wait) and keeps it open for the process's life, as a linked library would
 * be; a library or symbol missing is closed again and stays missing (its
 * slots then hold nothing to use).
 */
int dlb_library_load(dlb_library *lib);

#endif
