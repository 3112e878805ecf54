/* library.h -- a system library opened at run time, on first use (CBLAS in
 * blas.c, LAPACK in lapack.c): not linked, so that loading dlbridge starts
 * no thread pool and a host that never calls them pays nothing. No Lua. */
#ifndef DLB_COMPUTE_LIBRARY_H
#define DLB_COMPUTE_LIBRARY_H

#include <stddef.h>

/* One function to find: its name in the library and where to put it. */
typedef struct dlb_library_symbol {
  const char *name;
  void **slot;
} dlb_library_symbol;

/*
 * Opens the library the environment variable env names (when set and not
 * empty), else default_name, and resolves every symbol into its slot.
 * Returns 1 with path (path_size bytes) naming the file the first symbol
 * came from, the library kept open for the process's life as a linked one
 * would be; 0 when the library or any symbol is missing (closed again;
 * slots then hold nothing to use). Not thread-safe: callers run it once
 * (pthread_once).
 */
int dlb_library_open(const char *env, const char *default_name, const dlb_library_symbol *symbols,
                     size_t count, char *path, size_t path_size);

#endif
