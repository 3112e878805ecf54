/* reduce_loops.h -- the typed kernels behind the host's reductions
 * (reduce.h), for reduce.c (and the C tests) only. No Lua here.
 *
 * A fold kernel is a dlb_loop over two operands, data[0] accumulators and
 * data[1] inputs (steps in bytes):
 *   - steps[0] == 0: all n inputs fold into the one accumulator *data[0]
 *     (the reduced dim is the inner one: floats sum pairwise here);
 *   - otherwise input i folds into accumulator i (a row of accumulators:
 *     the reduced dim is an outer one, NumPy's outer-loop reduction).
 * aux is a dlb_pairwise_layout (see below) or NULL.
 * Accumulators start at the operation's identity (min and max: the first
 * element) and are never the inputs. Integer sums and products compute
 * modulo 2^64 in uint64_t whichever of int64/uint64 the accumulators are.
 */
#ifndef DLB_COMPUTE_REDUCE_LOOPS_H
#define DLB_COMPUTE_REDUCE_LOOPS_H

#include "../../core/iter.h"
#include "../../compute/reduce.h"

/* The longest run the pairwise sum covers: runs of the reduced inner dim
 * are cut into pieces of this many elements, summed in order (NumPy's
 * buffer size; what makes its float sums and ours the same bits). */
#define DLB_REDUCE_RUN 8192

/* The blocks of NumPy's pairwise sum of a run of n elements (a run of
 * DLB_REDUCE_RUN has at most 128 blocks), in memory order, and their tree. */
#define DLB_PAIRWISE_MAX_BLOCKS 256
typedef struct dlb_pairwise_tree {
  int64_t n; /* the run length described; 0: none yet */
  int blocks, joins;
  int32_t start[DLB_PAIRWISE_MAX_BLOCKS], length[DLB_PAIRWISE_MAX_BLOCKS];
  /* Join k adds nodes left[k] and right[k] (a node below
   * DLB_PAIRWISE_MAX_BLOCKS is a block, node DLB_PAIRWISE_MAX_BLOCKS + k
   * is join k); joins come after the nodes they add, the root last. */
  int16_t left[DLB_PAIRWISE_MAX_BLOCKS], right[DLB_PAIRWISE_MAX_BLOCKS];
} dlb_pairwise_tree;

/* What the float sum kernels keep between calls: the tree of a whole run
 * of DLB_REDUCE_RUN and that of the last shorter run (rows of 10,000 cut
 * into 8,192 and 1,808 then list neither again). Pass one made by
 * dlb_pairwise_layout_init as aux of the fold kernels of a walk (or NULL:
 * each call then lists the blocks again). */
typedef struct dlb_pairwise_layout {
  dlb_pairwise_tree full, part;
} dlb_pairwise_layout;

/* Marks both trees of lay as not listed yet (cheaper than zeroing it). */
static inline void dlb_pairwise_layout_init(dlb_pairwise_layout *lay) {
  lay->full.n = 0;
  lay->part.n = 0;
}

/*
 * The fold kernel of op over inputs of dtype in, or NULL when there is
 * none (the caller converts the inputs to a dtype that has one first):
 * for the reductions that fold, kernels for exactly the loop dtypes their
 * row of DLB_REDUCE_OPS declares. Accumulators: sum and prod of bool and
 * integers are int64/uint64, of floats and complex (mean's too) their own
 * dtype; min and max keep the dtype (bool elements use uint8's kernel);
 * all and any are bool, count_nonzero int64.
 */
dlb_loop dlb_reduce_fold_loop(dlb_reduce_op op, dlb_dtype in);

/* The runs of a short reduced inner dim (fewer than 8 elements, the
 * pairwise sum's sequential case) that a walk hands to one call of a
 * short-runs kernel: the call's n inputs each start a run of m elements,
 * step bytes apart, that folds into the call's accumulator i (steps[0]
 * may be 0: then all of them into one, in order). */
typedef struct dlb_short_runs {
  int64_t m, step;
} dlb_short_runs;

/* The short-runs kernel (aux a dlb_short_runs) that goes with the fold
 * kernel dlb_reduce_fold_loop(op, in): sum's and nansum's (mean's,
 * nanmean's) of float32 and float64, each run summed as the fold kernel
 * sums a run of m (from 0, one element after another) and then added to
 * its accumulator: the fold kernel's bits, without a call per run (a 2x2
 * block mean: runs of 2). NULL for the others (the walk then calls the
 * fold kernel once per run). */
dlb_loop dlb_reduce_short_runs_loop(dlb_reduce_op op, dlb_dtype in);

/* The kernel of std/var's second pass over (out, x, mean), all of dtype t
 * (float32, float64, complex64, complex128) except out, which has t's real
 * dtype: out = |x - mean|^2; with skip_nan (nanstd/nanvar), 0 where x is
 * NaN (a complex x: a NaN part). */
dlb_loop dlb_reduce_deviation_loop(dlb_dtype t, int skip_nan);

/* The fold kernel counting the elements of dtype in (float32, float64,
 * complex64, complex128; else NULL) that are not NaN (a complex one: no
 * NaN part) into int64 accumulators: nanmean's and nanvar's counts,
 * nanargmin's and nanargmax's check for a slice of NaNs only. */
dlb_loop dlb_reduce_count_numbers_loop(dlb_dtype in);

/* The 0-based index of the first largest (is_max) or smallest of n > 0
 * elements of dtype t at p, stride bytes apart (any stride: negative, or 0
 * for one element n times); the first NaN's when there is one; -0.0 and
 * +0.0 are equal. t: integers, bool (as uint8), float32, float64. */
int64_t dlb_reduce_arg_search(int is_max, dlb_dtype t, const char *p, int64_t n, int64_t stride);

/* The kernel of argmin/argmax along an outer dim, over (best of t, index
 * of int64, x of t) with aux pointing at the int64 index of this row of x:
 * where x beats best (strictly; a NaN beats any number, nothing beats a
 * NaN), best = x and index = that index. t as dlb_reduce_arg_search. */
dlb_loop dlb_reduce_arg_update_loop(int is_max, dlb_dtype t);

#endif
