/* einsum.h -- NumPy 1.24's einsum (optimize=False) over arrays: one
 * planner that turns the subscripts into views, products and sums. No Lua here.
 *
 * Subscripts: one term of letters (a-z, A-Z; spaces ignored) per operand,
 * separated by commas, then optionally "->" and the output's letters. An
 * ellipsis "..." (at most one a term) stands for the dims a term's letters
 * leave (at most 12), right-aligned and broadcast across operands; the
 * output places them where its "..." is (DLB_E_SHAPE when the inputs have
 * some and the output has no "..."), the implicit output first. A
 * letter repeated inside one term takes the diagonal (extents must match:
 * DLB_E_SHAPE); a letter shared by terms is multiplied along; a letter not
 * in the output is summed over. Without "->" the output is the letters that
 * appear exactly once, in ASCII order (uppercase first), as NumPy's implicit
 * mode. Each term has as many letters as its operand has dims (DLB_E_SHAPE);
 * a letter's extents agree across operands or are 1 (broadcast, as NumPy's;
 * DLB_E_SHAPE otherwise). Syntax NumPy refuses is DLB_E_VALUE: other
 * characters, a term count that is not the operand count, an output letter
 * given twice or found in no input, a '.' outside "...", two ellipses in
 * one term.
 *
 * How it computes: each operand becomes a view (its diagonals by summed
 * strides, size-1 dims broadcast by stride 0), letters only one operand has
 * and the output lacks are summed out of it first, then the operands are
 * combined pairwise from the left, keeping the letters the output or a
 * later operand needs (the values np.einsum gives, in another order of
 * additions: where infinities meet, a sum np.einsum makes NaN (inf - inf)
 * may come out infinite, or the other way). A pair with letters to
 * contract and letters of its own on both sides is a (batched) matmul (BLAS for float32/64 and complex); one with no
 * contracted letter an element-wise product; one that contracts everything
 * else a product then a sum. A single operand with nothing to sum is a view
 * of it (a transpose, a diagonal), as NumPy returns one.
 *
 * dtypes: the common dtype np.einsum's iterator finds (each operand
 * converted to it first): the 0-d operands count first, then the others'
 * dtypes; where both are there and no 0-d operand is of a higher kind
 * (bool < integer < float and complex) than the others, NumPy 1.24's legacy
 * value-based promotion (a 0-d operand counts as np.min_scalar_type of its
 * value, promoted from the left, a "small" unsigned value as the signed
 * dtype of its size), else NumPy's promotion of the dtype sequence. An
 * operand with dims that cannot be cast safely to that dtype is
 * DLB_E_DTYPE, as NumPy's TypeError. Sums and products in that dtype
 * (integers wrap, bool is an OR of ANDs, float16 accumulates in float32).
 */
#ifndef DLB_COMPUTE_EINSUM_H
#define DLB_COMPUTE_EINSUM_H

#include "operands.h"

/* At most this many operands (NumPy's limit). */
#define DLB_EINSUM_MAX_OPERANDS 32

/* einsum of the n operands (1 <= n <= DLB_EINSUM_MAX_OPERANDS) into a new
 * array *out (buffer NULL on entry; a view of an operand when nothing is
 * computed). */
dlb_status dlb_einsum(const char *subscripts, int n, const dlb_array *const *operands,
                      dlb_array *out, dlb_backend *cpu, dlb_error *err);

#endif
