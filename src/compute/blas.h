/* blas.h -- CBLAS, loaded when first needed: for the convolve's dot products
 * (construct.c) and the cpu backend's products (backends/cpu/matmul.c), which
 * is why it sits in compute, below the backends. No Lua here.
 *
 * dlbridge does not link a BLAS: linking OpenBLAS starts its thread pool
 * when the library loads, so every `require "dlbridge"` would start threads
 * that spin between calls (measured: a 10-element a + b went from 330 to
 * 415 ns on a 2-core machine) in hosts that never multiply a matrix. The
 * first product that wants BLAS opens libblas.so.3 (Debian's alternatives:
 * OpenBLAS with libopenblas-dev, the library Debian's NumPy loads too).
 */
#ifndef DLB_COMPUTE_BLAS_H
#define DLB_COMPUTE_BLAS_H

#include <cblas.h>

/* The CBLAS functions dlbridge calls, with cblas.h's prototypes. */
typedef struct dlb_blas {
  __typeof__(cblas_sgemm) *sgemm;
  __typeof__(cblas_dgemm) *dgemm;
  __typeof__(cblas_cgemm) *cgemm;
  __typeof__(cblas_zgemm) *zgemm;
  __typeof__(cblas_sgemv) *sgemv;
  __typeof__(cblas_dgemv) *dgemv;
  __typeof__(cblas_cgemv) *cgemv;
  __typeof__(cblas_zgemv) *zgemv;
  __typeof__(cblas_sdot) *sdot;
  __typeof__(cblas_ddot) *ddot;
  __typeof__(cblas_cdotu_sub) *cdotu_sub;
  __typeof__(cblas_zdotu_sub) *zdotu_sub;
  char path[256]; /* the library opened */
} dlb_blas;

/* The loaded CBLAS (opened once, on first call, any thread), or NULL when
 * no library with every function above can be opened: products then run
 * on dlbridge's own loops. DLBRIDGE_BLAS names another library to open. */
const dlb_blas *dlb_blas_get(void);

#endif
