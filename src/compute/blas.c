/* blas.c -- opening CBLAS on first use (see blas.h). */
#include "blas.h"
#include "library.h"

static dlb_blas blas;
static const dlb_library_symbol symbols[] = {
    {"cblas_sgemm", (void **)&blas.sgemm},         {"cblas_dgemm", (void **)&blas.dgemm},
    {"cblas_cgemm", (void **)&blas.cgemm},         {"cblas_zgemm", (void **)&blas.zgemm},
    {"cblas_sgemv", (void **)&blas.sgemv},         {"cblas_dgemv", (void **)&blas.dgemv},
    {"cblas_cgemv", (void **)&blas.cgemv},         {"cblas_zgemv", (void **)&blas.zgemv},
    {"cblas_sdot", (void **)&blas.sdot},           {"cblas_ddot", (void **)&blas.ddot},
    {"cblas_cdotu_sub", (void **)&blas.cdotu_sub}, {"cblas_zdotu_sub", (void **)&blas.zdotu_sub}};
static dlb_library library = DLB_LIBRARY("DLBRIDGE_BLAS", "libblas.so.3", symbols, blas.path);

const dlb_blas *dlb_blas_get(void) { return dlb_library_load(&library) ? &blas : NULL; }
