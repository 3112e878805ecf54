/* sets.h -- membership and orders by several keys: isin and lexsort. No Lua
 * here (unique, the other set operation, is in sort.h).
 *
 * Semantics, stated once (NumPy 1.24's):
 *  - isin compares by value after promotion: a and the test values become
 *    their promoted dtype (dlb_promote_types), and an element is in the set
 *    when one test value == it (-0 == +0; a NaN is never in it, as no NaN ==
 *    anything). The test values may have any shape; they are flattened.
 *  - lexsort orders by several keys of one shape along their last dim: the
 *    last key first, ties broken by the one before it, and so on; equal
 *    rows keep their order (stable). Each key sorts in its own dtype
 *    (dlbridge.h's order: NaN last).
 */
#ifndef DLB_COMPUTE_SETS_H
#define DLB_COMPUTE_SETS_H

#include "operands.h"

/* out (new, bool, a's shape) = whether each element of a is among test's
 * (invert: whether it is not). */
dlb_status dlb_isin(const dlb_array *a, const dlb_array *test, int invert, dlb_array *out,
                    dlb_backend *cpu, dlb_error *err);

/* out (new, int64, the keys' shape) = the positions, counted from
 * index_base, that sort the nkeys keys (nkeys >= 1, one shape of at least
 * one dim) along the last dim, keys[nkeys - 1] the primary one. */
dlb_status dlb_lexsort(const dlb_array *const *keys, int nkeys, int64_t index_base, dlb_array *out,
                       dlb_backend *cpu, dlb_error *err);

/* dlb_lexsort of the keys stack[0], stack[1], ... (the sub-arrays along
 * the first dim of stack, which has at least 2 dims). */
dlb_status dlb_lexsort_stacked(const dlb_array *stack, int64_t index_base, dlb_array *out,
                               dlb_backend *cpu, dlb_error *err);

#endif
