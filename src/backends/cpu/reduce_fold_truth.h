/* reduce_fold_truth.h -- a template: all_SUFFIX, any_SUFFIX and
 * count_SUFFIX of elements T whose truth is NONZERO##TRUTH (TRUTH: empty,
 * _HALF or _COMPLEX; reduce_loops.c says what they do, above their
 * instances), each an instance of reduce_fold.h. reduce_loops.c #defines
 * T, SUFFIX and TRUTH and includes this file once per instance; it #undefs
 * them at its end. No include guard. */

#define NAME REDUCE_CAT(all_, SUFFIX)
#define TA dlb_bool8
#define TI T
#define INIT REDUCE_CAT(BOOL_OF, TRUTH)
#define FOLD REDUCE_CAT(AND_NONZERO, TRUTH)
#define COMBINE AND
#define LANED 0
#include "reduce_fold.h"
#define NAME REDUCE_CAT(any_, SUFFIX)
#define TA dlb_bool8
#define TI T
#define INIT REDUCE_CAT(BOOL_OF, TRUTH)
#define FOLD REDUCE_CAT(OR_NONZERO, TRUTH)
#define COMBINE OR
#define LANED 0
#include "reduce_fold.h"
#define NAME REDUCE_CAT(count_, SUFFIX)
#define TA int64_t
#define TI T
#define INIT REDUCE_CAT(COUNT, TRUTH)
#define FOLD REDUCE_CAT(ADD_COUNT, TRUTH)
#define COMBINE ADD
#define LANED 0
#include "reduce_fold.h"

#undef T
#undef SUFFIX
#undef TRUTH
