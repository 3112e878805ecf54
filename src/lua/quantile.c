/* quantile.c -- order statistics from Lua (semantics: src/compute/quantile.h):
 * dl.median(a, opts), dl.quantile(a, q, opts), dl.percentile(a, q, opts)
 * and their nan- forms. a is an array or nested tables; q a number (the
 * result has the reduced shape) or an array or list of them (its shape
 * comes first). Options: a dim, or {dim = a dim or a list of dims,
 * keepdims = false, method = "linear" (quantile and percentile)}. A result
 * with no dims (every dim reduced, a number q, no keepdims) is a Lua value,
 * as NumPy returns a scalar. */
#include <string.h>
#include "../compute/quantile.h"
#include "../compute/reduce.h"
#include "../core/copy.h"
#include "../core/shape.h"
#include "internal.h"

static const char *const method_names[] = {"linear",  "lower",    "higher",
                                           "nearest", "midpoint", NULL};

/* The options at idx (nil, a dim, or a table) for an ndim array. */
static void check_options(lua_State *L, int idx, int ndim, dlb_quantile_options *o,
                          const char *op) {
  static const char *const median_keys[] = {"dim", "keepdims", NULL};
  static const char *const quantile_keys[] = {"dim", "keepdims", "method", NULL};
  int median = o->method == DLB_QUANTILE_MEDIAN, first, top = lua_gettop(L);
  const char *const *keys = median ? median_keys : quantile_keys;
  o->dims = DLB_REDUCE_ALL_DIMS;
  switch (dlbL_collect_dim_or_options(L, idx, keys, &first, op)) {
    case 0: return;
    case 2: o->dims = dlbL_check_dims(L, idx, ndim, op); return;
  }
  if (dlbL_opt_get(L, DLBL_COLLECTED(keys, first, "dim")) != LUA_TNIL)
    o->dims = dlbL_check_dims(L, -1, ndim, op);
  lua_pop(L, 1);
  o->keepdims = dlbL_opt_boolean(L, DLBL_COLLECTED(keys, first, "keepdims"), 0, op);
  if (!median)
    o->method = (dlb_quantile_method)dlbL_opt_choice(L, DLBL_COLLECTED(keys, first, "method"),
                                                     method_names, 0, op);
  lua_settop(L, top);
}

/* Room for the result and the slice's scratch before they exist (see
 * reduce.c's reserve_result); errors are left to dlb_quantile. */
static void reserve(lua_State *L, const dlb_array *a, const dlb_array *q,
                    const dlb_quantile_options *o) {
  int64_t shape[DLB_MAX_NDIM], numel, scratch = a->numel;
  int ndim;
  dlb_dtype dtype;
  if (dlb_quantile_result(a, q, o, &dtype, &ndim, shape, NULL) != DLB_OK ||
      dlb_shape_numel(ndim, shape, &numel, NULL) != DLB_OK)
    return;
  dlbL_reserve(L, numel, dlb_dtype_get(dtype)->itemsize); /* a and q are stale after it */
  dlbL_reserve(L, scratch, 8);
}

/* The order statistic o over the array at 1, q at 2 (has_q), options
 * after them. */
static int order_statistic(lua_State *L, dlb_quantile_options *o, int has_q, const char *op) {
  int at = has_q ? 3 : 2;
  dlb_array *a, *q = NULL, *result;
  dlb_error err;
  dlbL_check_nargs(L, at, op);
  lua_settop(L, at);
  a = dlbL_check_array_like(L, 1, 0, DLB_FLOAT64, op);
  if (has_q) {
    if (lua_isnoneornil(L, 2))
      dlbL_raise(L, DLB_E_ARGUMENT, op, "q is missing: a number, or a list or array of them");
    q = dlbL_check_array_like(L, 2, 1, DLB_FLOAT64, op);
  }
  /* Each step below may allocate (run finalizers): the arrays are fetched
   * again after each (records.c). */
  check_options(L, at, dlbL_check_live(L, 1, op)->ndim, o, op);
  a = dlbL_check_live(L, 1, op);
  if (has_q) q = dlbL_check_live(L, 2, op);
  reserve(L, a, q, o);
  result = dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op);
  if (has_q) q = dlbL_check_live(L, 2, op);
  if (dlb_quantile(a, q, o, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  if (result->ndim == 0) { /* a Lua value, as NumPy gives a scalar */
    dlb_scalar s;
    int64_t none = 0;
    if (dlb_array_get(result, &none, &s, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
    dlbL_push_scalar(L, &s);
  }
  return 1;
}

/* QUANTILE_FUNCTION(name, method, skip_nan, percentile, has_q): dl.name */
#define QUANTILE_FUNCTION(name, how, skip, percent, has_q)                                         \
  static int quantile_##name(lua_State *L) {                                                       \
    dlb_quantile_options o;                                                                        \
    memset(&o, 0, sizeof o);                                                                       \
    o.method = how;                                                                                \
    o.skip_nan = skip;                                                                             \
    o.percentile = percent;                                                                        \
    return order_statistic(L, &o, has_q, "dl." #name);                                             \
  }
QUANTILE_FUNCTION(median, DLB_QUANTILE_MEDIAN, 0, 0, 0)
QUANTILE_FUNCTION(quantile, DLB_QUANTILE_LINEAR, 0, 0, 1)
QUANTILE_FUNCTION(percentile, DLB_QUANTILE_LINEAR, 0, 1, 1)
QUANTILE_FUNCTION(nanmedian, DLB_QUANTILE_MEDIAN, 1, 0, 0)
QUANTILE_FUNCTION(nanquantile, DLB_QUANTILE_LINEAR, 1, 0, 1)
QUANTILE_FUNCTION(nanpercentile, DLB_QUANTILE_LINEAR, 1, 1, 1)
#undef QUANTILE_FUNCTION

const luaL_Reg dlbL_quantile_functions[] = {{"median", quantile_median},
                                            {"quantile", quantile_quantile},
                                            {"percentile", quantile_percentile},
                                            {"nanmedian", quantile_nanmedian},
                                            {"nanquantile", quantile_nanquantile},
                                            {"nanpercentile", quantile_nanpercentile},
                                            {NULL, NULL}};
