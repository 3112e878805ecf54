/* linalg.h -- NumPy 1.24's numpy.linalg through LAPACK (lapack.h): solve,
 * inv, det, slogdet, cholesky, eigh, svd, qr, lstsq. No Lua here.
 *
 * Operands live in memory the host addresses (else DLB_E_UNSUPPORTED with
 * the device_put hint). As NumPy's, every function computes in float64: the
 * operands are copied (cast) into column-major float64 scratch on the cpu
 * backend, LAPACK works there, and the results are copied out (rounded to
 * float32 when every operand is float32: NumPy's result type). Integer and
 * bool operands give float64; float16, bfloat16 and complex operands are
 * DLB_E_DTYPE (NumPy refuses the first two; complex is not done yet).
 *
 * Shapes: the last two dims are the matrix, the dims before them a batch
 * (stacks of matrices, as NumPy's gufuncs; solve's a and b broadcast their
 * batch dims). Fewer than 2 dims, or a non-square matrix where one is
 * needed: DLB_E_SHAPE. A matrix dim above INT_MAX (LAPACK's integers) is
 * DLB_E_SHAPE. Empty matrices and empty batches give empty results (det of
 * a 0x0 matrix is 1, as NumPy's).
 *
 * Failures of the mathematics are DLB_E_LINALG (NumPy's LinAlgError): a
 * singular matrix in solve and inv, one not positive definite in cholesky,
 * no convergence in eigh, svd and lstsq, and NaN or inf in an operand of
 * svd or lstsq (NumPy's SVDs raise LinAlgError for NaN, and for inf give NaN
 * or fail by the matrix's shape). Elsewhere NaN and inf go to LAPACK as they
 * are, as NumPy's do: the same library gives the same outcome.
 *
 * Every call is one bounded work (the work limit and the interrupt, about
 * n^3 a matrix, looked at between matrices); results and scratch are
 * allocated through the budget. */
#ifndef DLB_COMPUTE_LINALG_H
#define DLB_COMPUTE_LINALG_H

#include "operands.h"

typedef enum dlb_linalg_op {
  DLB_LINALG_SOLVE,    /* x: a x = b; b (..., M) when b.ndim == a.ndim - 1, else (..., M, K) */
  DLB_LINALG_INV,      /* the inverse */
  DLB_LINALG_DET,      /* det = sign * exp(logabsdet), from the LU factors (NumPy's) */
  DLB_LINALG_SLOGDET,  /* sign and log|det|; a singular matrix: 0 and -inf */
  DLB_LINALG_CHOLESKY, /* the lower factor L, a = L L^T */
  DLB_LINALG_EIGH,     /* eigenvalues ascending and eigenvectors (columns) */
  DLB_LINALG_SVD,      /* u, s (descending), vh; or s alone */
  DLB_LINALG_QR,       /* q and r; or r alone */
  DLB_LINALG_LSTSQ     /* x, residuals, s (and the rank); a and b 2-D (b may be 1-D) */
} dlb_linalg_op;

typedef enum dlb_qr_mode { DLB_QR_REDUCED, DLB_QR_COMPLETE, DLB_QR_R } dlb_qr_mode;

typedef struct dlb_linalg_args {
  dlb_linalg_op op;
  const dlb_array *a, *b; /* b: solve and lstsq only */
  int upper;              /* eigh: read the upper triangle (NumPy's UPLO = "U") */
  int full_matrices;      /* svd: u (..., M, M) and vh (..., N, N) */
  int compute_uv;         /* svd: u and vh too */
  dlb_qr_mode mode;       /* qr */
  double rcond;           /* lstsq: NaN for eps * max(M, N); negative: machine precision */
} dlb_linalg_args;

#define DLB_LINALG_MAX_RESULTS 3

/* What a call returns, known before anything is allocated. */
typedef struct dlb_linalg_plan {
  int nresults; /* arrays, in NumPy's order (lstsq's rank is not one) */
  dlb_dtype dtype[DLB_LINALG_MAX_RESULTS];
  int ndim[DLB_LINALG_MAX_RESULTS];
  int64_t shape[DLB_LINALG_MAX_RESULTS][DLB_MAX_NDIM];
  int64_t nbytes; /* the results' bytes together (saturating) */
  /* the geometry: the matrix (m x n), b's columns k (solve, lstsq), the batch */
  int64_t m, n, k;
  int b_vector; /* solve, lstsq: b is a vector (no K dim) */
  int nbatch;
  int64_t batch[DLB_MAX_NDIM];
  int64_t items; /* matrices in the batch (product of batch[]) */
} dlb_linalg_plan;

/* Checks the operands' shapes and dtypes (not their memory) and fills
 * *plan; DLB_E_DELETED for a released operand. Allocates nothing: a binding
 * reserves plan->nbytes with it. */
dlb_status dlb_linalg_plan_of(const dlb_linalg_args *args, dlb_linalg_plan *plan, dlb_error *err);

/* Runs the call: results[0 .. nresults-1] (buffer NULL on entry) become new
 * arrays on the operands' device, *rank lstsq's rank (may be NULL for the
 * others). On failure no result is left allocated. cpu is the state's cpu
 * backend (scratch). */
dlb_status dlb_linalg(const dlb_linalg_args *args, dlb_array *results, int64_t *rank,
                      dlb_backend *cpu, dlb_error *err);

#endif
