/* matmul.h -- matrix products on host memory: NumPy's matmul (batched, with
 * broadcasting) and dot. float32, float64, complex64 and complex128 multiply
 * through CBLAS; every other dtype through plain loops. No Lua here. */
#ifndef DLB_COMPUTE_MATMUL_H
#define DLB_COMPUTE_MATMUL_H

#include "operands.h"

/* dlb_matmul's dtype when the result takes the promotion of the inputs'. */
#define DLB_MATMUL_PROMOTE DLB_DTYPE_COUNT

/*
 * NumPy's matmul of a and b (both checked as dlb_check_operands_for does).
 *
 * Shapes: each operand has at least one dim (0-d: DLB_E_SHAPE). The last two
 * dims multiply, (..., M, K) x (..., K, N) -> (..., M, N); the dims before
 * them broadcast (NumPy's rules; DLB_E_SHAPE when they do not). A 1-D a is
 * a row (1, K) and a 1-D b a column (K, 1), and that added dim is not in the
 * result (two 1-D operands give a 0-d result). Different K: DLB_E_SHAPE
 * naming both shapes. A zero extent gives an empty result; K == 0 gives zeros.
 *
 * Dtypes: the result has dtype, or with DLB_MATMUL_PROMOTE the promotion of
 * a's and b's (dlb_promote_types); a given dtype must be one both inputs
 * cast to under same_kind (DLB_E_DTYPE). float16 and bfloat16 compute in
 * float32 and round once at the end; integers wrap modulo 2^bits; bool is
 * an OR of ANDs.
 *
 * out: when out->buffer is NULL a new contiguous result is allocated on the
 * operands' device into *out. Otherwise *out receives the result: checked as
 * dlb_check_out (same_kind from the result dtype, exact shape, writable); it
 * may overlap a or b (the product is then made in a temporary first). On
 * failure a new *out is released and a given one is left unchanged.
 *
 * Operands whose layout CBLAS (or the loops) cannot read as they are
 * (negative or zero strides inside a matrix, misaligned data, another
 * dtype) are copied to contiguous memory first, as NumPy does.
 */
dlb_status dlb_matmul(const dlb_array *a, const dlb_array *b, dlb_dtype dtype, dlb_array *out,
                      dlb_backend *cpu, dlb_error *err);

/*
 * NumPy's dot of a and b into a new array *result (result->buffer NULL on
 * entry): the sum over the last dim of a and the last dim of b (1-D) or its
 * second-to-last (N-D). The result has a's dims but its last, then b's
 * dims but the summed one: dot(a[P..., K], b[Q..., K, N]) has shape
 * (P..., Q..., N). For 1-D and 2-D operands this is matmul; for N-D operands
 * it is not (no broadcasting: every a-row meets every b-matrix). 0-d
 * operands are DLB_E_SHAPE (NumPy would multiply element-wise); a result
 * of more than DLB_MAX_NDIM dims is DLB_E_SHAPE. Dtypes as dlb_matmul with
 * DLB_MATMUL_PROMOTE.
 */
dlb_status dlb_dot(const dlb_array *a, const dlb_array *b, dlb_array *result, dlb_backend *cpu,
                   dlb_error *err);

/* The dtype (*result), ndim and shape of what dlb_matmul (is_dot 0, with
 * dtype) or dlb_dot (is_dot 1, dtype ignored) would return, with the same
 * checks but for devices (DLB_E_DELETED for a released operand); allocates
 * nothing (a binding sizes its memory reservation with it). */
dlb_status dlb_matmul_result(int is_dot, const dlb_array *a, const dlb_array *b, dlb_dtype dtype,
                             dlb_dtype *result, int *ndim, int64_t *shape, dlb_error *err);

#endif
