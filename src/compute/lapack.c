/* lapack.c -- opening LAPACK on first use (see lapack.h). */
#include "lapack.h"
#include "library.h"

static dlb_lapack lapack;
static const dlb_library_symbol symbols[] = {
    {"dgesv_", (void **)&lapack.dgesv},   {"dgetrf_", (void **)&lapack.dgetrf},
    {"dpotrf_", (void **)&lapack.dpotrf}, {"dsyevd_", (void **)&lapack.dsyevd},
    {"dgesdd_", (void **)&lapack.dgesdd}, {"dgeqrf_", (void **)&lapack.dgeqrf},
    {"dorgqr_", (void **)&lapack.dorgqr}, {"dgelsd_", (void **)&lapack.dgelsd}};
static dlb_library library = DLB_LIBRARY("DLBRIDGE_LAPACK", "liblapack.so.3", symbols, lapack.path);

const dlb_lapack *dlb_lapack_get(void) { return dlb_library_load(&library) ? &lapack : NULL; }
