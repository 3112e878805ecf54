/* reduce_fold_float.h -- a template: max_SUFFIX and min_SUFFIX of one real
 * float dtype T, a NaN accumulator staying and a NaN input winning, and
 * nanmax_SUFFIX and nanmin_SUFFIX, NaNs passed over (NumPy's fmax, fmin)
 * (reduce_loops.c says more, above their instances), each an instance of
 * reduce_fold.h. reduce_loops.c #defines T and SUFFIX and includes this
 * file once per instance; it #undefs them at its end. No include guard. */

#define NAME REDUCE_CAT(max_, SUFFIX)
#define TA T
#define TI T
#define INIT SAME
#define FOLD MAX_FLOAT
#define COMBINE MAX_FLOAT
#define LANED 1
#include "reduce_fold.h"
#define NAME REDUCE_CAT(min_, SUFFIX)
#define TA T
#define TI T
#define INIT SAME
#define FOLD MIN_FLOAT
#define COMBINE MIN_FLOAT
#define LANED 1
#include "reduce_fold.h"
#define NAME REDUCE_CAT(nanmax_, SUFFIX)
#define TA T
#define TI T
#define INIT SAME
#define FOLD FMAX_FLOAT
#define COMBINE FMAX_FLOAT
#define LANED 1
#include "reduce_fold.h"
#define NAME REDUCE_CAT(nanmin_, SUFFIX)
#define TA T
#define TI T
#define INIT SAME
#define FOLD FMIN_FLOAT
#define COMBINE FMIN_FLOAT
#define LANED 1
#include "reduce_fold.h"

#undef T
#undef SUFFIX
