/* arith_loops.h -- a template: arith_loop.h's loops for the two pairs of
 * types the kernels of an element type T use: T to T (arithmetic) and T to
 * bool (comparisons). loops_arith.c #defines T and includes this file once
 * per element type; it #undefs T at its end. No include guard. */

#define TI T
#define TO T
#include "arith_loop.h"
#define TI T
#define TO dlb_bool8
#include "arith_loop.h"

#undef T
