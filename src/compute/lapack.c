/* lapack.c -- opening LAPACK on first use (see lapack.h). */
#include <pthread.h>
#include "lapack.h"
#include "library.h"

static dlb_lapack lapack;
static const dlb_lapack *loaded;
static pthread_once_t lapack_once = PTHREAD_ONCE_INIT;

static void open_lapack(void) {
  const dlb_library_symbol symbols[] = {
      {"dgesv_", (void **)&lapack.dgesv},   {"dgetrf_", (void **)&lapack.dgetrf},
      {"dpotrf_", (void **)&lapack.dpotrf}, {"dsyevd_", (void **)&lapack.dsyevd},
      {"dgesdd_", (void **)&lapack.dgesdd}, {"dgeqrf_", (void **)&lapack.dgeqrf},
      {"dorgqr_", (void **)&lapack.dorgqr}, {"dgelsd_", (void **)&lapack.dgelsd}};
  if (dlb_library_open("DLBRIDGE_LAPACK", "liblapack.so.3", symbols,
                       sizeof symbols / sizeof symbols[0], lapack.path, sizeof lapack.path))
    loaded = &lapack;
}

const dlb_lapack *dlb_lapack_get(void) {
  pthread_once(&lapack_once, open_lapack);
  return loaded;
}
