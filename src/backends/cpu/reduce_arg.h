/* reduce_arg.h -- a template: argmax_SUFFIX and argmin_SUFFIX, the
 * searches of elements T (reduce_arg_search.h), and argmax_rows_SUFFIX and
 * argmin_rows_SUFFIX, their row kernels (reduce_arg_update.h); U: an
 * unsigned integer as wide as T, KIND: INT or FLOAT, ISNAN(x) (reduce_loops.c
 * says how, above its instances). reduce_loops.c #defines T, U, SUFFIX,
 * KIND and ISNAN and includes this file once per instance; it #undefs them
 * at its end. No include guard. */

#define NAME REDUCE_CAT(argmax_, SUFFIX)
#define BEATS GREATER
#define CANDIDATE REDUCE_CAT(CANDIDATE_MAX_, KIND)
#include "reduce_arg_search.h"
#define NAME REDUCE_CAT(argmin_, SUFFIX)
#define BEATS LESS
#define CANDIDATE REDUCE_CAT(CANDIDATE_MIN_, KIND)
#include "reduce_arg_search.h"
#define NAME REDUCE_CAT(argmax_rows_, SUFFIX)
#define UPDATES REDUCE_CAT(UPDATES_MAX_, KIND)
#include "reduce_arg_update.h"
#define NAME REDUCE_CAT(argmin_rows_, SUFFIX)
#define UPDATES REDUCE_CAT(UPDATES_MIN_, KIND)
#include "reduce_arg_update.h"

#undef T
#undef U
#undef SUFFIX
#undef KIND
#undef ISNAN
