/* reduce_fold_integer.h -- a template: the fold kernels of one integer
 * dtype T (reduce_loops.c says what they do, above their instances):
 * sum_SUFFIX and prod_SUFFIX into uint64 accumulators, max_SUFFIX and
 * min_SUFFIX in T, each an instance of reduce_fold.h. reduce_loops.c
 * #defines T and SUFFIX and includes this file once per instance; it
 * #undefs them at its end. No include guard. */

#define NAME REDUCE_CAT(sum_, SUFFIX)
#define TA uint64_t
#define TI T
#define INIT WIDE
#define FOLD ADD_WIDE
#define COMBINE ADD
#define LANED 0
#include "reduce_fold.h"
#define NAME REDUCE_CAT(prod_, SUFFIX)
#define TA uint64_t
#define TI T
#define INIT WIDE
#define FOLD MUL_WIDE
#define COMBINE MUL
#define LANED 0
#include "reduce_fold.h"
#define NAME REDUCE_CAT(max_, SUFFIX)
#define TA T
#define TI T
#define INIT SAME
#define FOLD MAX_INT
#define COMBINE MAX_INT
#define LANED 1
#include "reduce_fold.h"
#define NAME REDUCE_CAT(min_, SUFFIX)
#define TA T
#define TI T
#define INIT SAME
#define FOLD MIN_INT
#define COMBINE MIN_INT
#define LANED 1
#include "reduce_fold.h"

#undef T
#undef SUFFIX
