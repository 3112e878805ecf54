/* lapack.h -- LAPACK, opened when first needed, for dl.linalg (linalg.c).
 * No Lua here.
 *
 * dlbridge neither links LAPACK nor needs LAPACKE (liblapacke-dev): it
 * declares the Fortran entry points it calls (dgesv_, ...) itself and opens
 * liblapack.so.3 on the first linear-algebra call, as blas.c opens CBLAS.
 * Not linked, for blas.h's reason: Debian's liblapack.so.3 is OpenBLAS's
 * (the alternative libopenblas-dev sets, the library Debian's NumPy loads
 * too), and linking it would start OpenBLAS's thread pool in every host that
 * loads dlbridge. Declaring the Fortran symbols ourselves avoids a build
 * dependency on LAPACKE for twelve prototypes whose ABI (every argument by
 * reference, a hidden length after the arguments for each CHARACTER one)
 * has not changed in decades.
 *
 * Matrices are column-major (Fortran's order): linalg.c copies row-major
 * arrays into column-major scratch and back, as NumPy's umath_linalg does.
 * Only the float64 routines: NumPy 1.24 computes every linalg function in
 * float64 (float32 operands are converted and the results rounded back),
 * and dlbridge does the same. */
#ifndef DLB_COMPUTE_LAPACK_H
#define DLB_COMPUTE_LAPACK_H

#include <stddef.h>

/* A Fortran INTEGER of the LP64 interface (liblapack.so.3's). */
typedef int dlb_lapack_int;
typedef size_t dlb_lapack_len; /* a CHARACTER argument's hidden length (gfortran) */

typedef struct dlb_lapack {
  /* LU: A = P L U in place; ipiv the row interchanges (1-based). */
  void (*dgetrf)(const dlb_lapack_int *m, const dlb_lapack_int *n, double *a,
                 const dlb_lapack_int *lda, dlb_lapack_int *ipiv, dlb_lapack_int *info);
  /* Solves A X = B by LU; B holds X on return. */
  void (*dgesv)(const dlb_lapack_int *n, const dlb_lapack_int *nrhs, double *a,
                const dlb_lapack_int *lda, dlb_lapack_int *ipiv, double *b,
                const dlb_lapack_int *ldb, dlb_lapack_int *info);
  /* Cholesky: A = L L^T (uplo "L"). */
  void (*dpotrf)(const char *uplo, const dlb_lapack_int *n, double *a, const dlb_lapack_int *lda,
                 dlb_lapack_int *info, dlb_lapack_len uplo_len);
  /* Symmetric eigenproblem, divide and conquer (jobz "V": vectors into a). */
  void (*dsyevd)(const char *jobz, const char *uplo, const dlb_lapack_int *n, double *a,
                 const dlb_lapack_int *lda, double *w, double *work, const dlb_lapack_int *lwork,
                 dlb_lapack_int *iwork, const dlb_lapack_int *liwork, dlb_lapack_int *info,
                 dlb_lapack_len jobz_len, dlb_lapack_len uplo_len);
  /* SVD, divide and conquer (jobz "A", "S" or "N"). */
  void (*dgesdd)(const char *jobz, const dlb_lapack_int *m, const dlb_lapack_int *n, double *a,
                 const dlb_lapack_int *lda, double *s, double *u, const dlb_lapack_int *ldu,
                 double *vt, const dlb_lapack_int *ldvt, double *work, const dlb_lapack_int *lwork,
                 dlb_lapack_int *iwork, dlb_lapack_int *info, dlb_lapack_len jobz_len);
  /* QR: R above the diagonal, the reflectors below it and in tau. */
  void (*dgeqrf)(const dlb_lapack_int *m, const dlb_lapack_int *n, double *a,
                 const dlb_lapack_int *lda, double *tau, double *work, const dlb_lapack_int *lwork,
                 dlb_lapack_int *info);
  /* Q's first n columns from dgeqrf's reflectors. */
  void (*dorgqr)(const dlb_lapack_int *m, const dlb_lapack_int *n, const dlb_lapack_int *k,
                 double *a, const dlb_lapack_int *lda, const double *tau, double *work,
                 const dlb_lapack_int *lwork, dlb_lapack_int *info);
  /* Least squares by the SVD (divide and conquer). */
  void (*dgelsd)(const dlb_lapack_int *m, const dlb_lapack_int *n, const dlb_lapack_int *nrhs,
                 double *a, const dlb_lapack_int *lda, double *b, const dlb_lapack_int *ldb,
                 double *s, const double *rcond, dlb_lapack_int *rank, double *work,
                 const dlb_lapack_int *lwork, dlb_lapack_int *iwork, dlb_lapack_int *info);
  char path[256]; /* the library opened */
} dlb_lapack;

/* The loaded LAPACK (opened once, on first call, any thread), or NULL when
 * no library with every routine above can be opened. DLBRIDGE_LAPACK names
 * another library to open than liblapack.so.3. */
const dlb_lapack *dlb_lapack_get(void);

#endif
