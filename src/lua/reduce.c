/* reduce.c -- reductions from Lua: a:sum(opts) and dl.sum(a, opts), and
 * likewise for every row of DLB_REDUCE_OPS (dlbridge.h; semantics:
 * src/compute/reduce.h): prod, mean, min, max, argmin, argmax, all, any,
 * count_nonzero, std, var, and the nan-functions nansum, nanprod, nanmean,
 * nanmin, nanmax, nanargmin, nanargmax, nanstd, nanvar.
 * Options: dim (a dim or a list of dims, 1-based, negative from the end),
 * keepdims, dtype and ddof (where the row takes them), out; a plain
 * integer stands for {dim = n}. A reduction over every dim without
 * keepdims or out returns a Lua value (number, integer, boolean,
 * {re=, im=}), as NumPy returns a scalar; any other returns an array. */
#include <string.h>
#include "../compute/reduce.h"
#include "../core/shape.h"
#include "internal.h"

/* Reads the options at idx (nil, a dim, or a table of the keys the
 * reduction takes: its row's) for an ndim array into *o; returns whether an
 * out array was given (then pushed on the stack, the only thing left). */
static int check_options(lua_State *L, int idx, const dlb_reduce_info *info, int ndim,
                         dlb_reduce_options *o, const char *name) {
  static const char *const keys[] = {"dim", "keepdims", "out", NULL};
  static const char *const dtype_keys[] = {"dim", "keepdims", "dtype", "out", NULL};
  static const char *const ddof_keys[] = {"dim", "keepdims", "dtype", "ddof", "out", NULL};
  const char *const *known = info->takes_ddof ? ddof_keys : info->takes_dtype ? dtype_keys : keys;
  int first, has_out;
  memset(o, 0, sizeof *o);
  o->dims = DLB_REDUCE_ALL_DIMS;
  o->index_base = 1;
  /* a table is walked once (a small reduction's options cost a walk each) */
  switch (dlbL_collect_dim_or_options(L, idx, known, &first, name)) {
    case 0: return 0;
    case 2: o->dims = dlbL_check_dims(L, idx, ndim, name); return 0;
  }
  if (dlbL_opt_get(L, DLBL_COLLECTED(known, first, "dim")) != LUA_TNIL)
    o->dims = dlbL_check_dims(L, -1, ndim, name);
  lua_pop(L, 1);
  o->keepdims = dlbL_opt_boolean(L, DLBL_COLLECTED(known, first, "keepdims"), 0, name);
  o->has_dtype = dlbL_opt_dtype(L, DLBL_COLLECTED(known, first, "dtype"), &o->dtype, name);
  o->ddof = dlbL_opt_number(L, DLBL_COLLECTED(known, first, "ddof"), 0.0, name);
  has_out = dlbL_opt_array(L, DLBL_COLLECTED(known, first, "out"), name) != NULL;
  if (has_out) lua_replace(L, first); /* out where the collected values began */
  lua_settop(L, first - 1 + has_out);
  return has_out;
}

/* Makes room for a result of op before it exists (see compute.c's
 * reserve_result: stepping the collector after pushing it keeps Lua from
 * finalizing such results by steps). Errors are left to dlb_reduce. */
static void reserve_result(lua_State *L, dlb_reduce_op op, const dlb_array *a,
                           const dlb_reduce_options *o) {
  int64_t shape[DLB_MAX_NDIM], numel;
  int ndim;
  dlb_dtype dtype;
  size_t itemsize;
  if (dlb_reduce_result_type(op, a->dtype, o, &dtype, NULL) != DLB_OK ||
      dlb_reduce_result_shape(op, a, o, &ndim, shape, NULL) != DLB_OK ||
      dlb_shape_numel(ndim, shape, &numel, NULL) != DLB_OK)
    return;
  itemsize = dlb_dtype_get(dtype)->itemsize;
  dlbL_reserve(L, numel, itemsize);
}

/* op over the array at 1 with the options at 2 (the dtype and ddof options
 * where op takes them): a Lua value, a new array, or out. */
static int reduce(lua_State *L, dlb_reduce_op op, const char *name) {
  const dlb_reduce_info *info = dlb_reduce_get(op);
  dlb_array *a = dlbL_check_live(L, 1, name), *result;
  dlb_reduce_options o;
  dlb_error err;
  int64_t shape[DLB_MAX_NDIM];
  int ndim, has_out;
  dlbL_check_nargs(L, 2, name);
  lua_settop(L, 2);
  has_out = check_options(L, 2, info, a->ndim, &o, name);
  a = dlbL_check_live(L, 1, name); /* reading a list of dims may allocate */
  if (has_out) {
    dlb_array *out = dlbL_to_array(L, 3); /* live: the options' reader checked it */
    if (dlb_reduce(op, a, &o, out, dlbL_state(L)->cpu, &err) != DLB_OK)
      dlbL_raise_error(L, &err, name);
    return 1; /* out */
  }
  if (dlb_reduce_result_shape(op, a, &o, &ndim, shape, &err) != DLB_OK)
    dlbL_raise_error(L, &err, name);
  if (info->rule == DLB_REDUCE_RULE_SPREAD ||
      (info->rule == DLB_REDUCE_RULE_ARG && info->skips_nan)) { /* a temporary the size of a */
    dlbL_reserve(L, a->numel, dlb_array_itemsize(a) > 8 ? 16 : 8);
    a = dlbL_check_live(L, 1, name); /* finalizers may have run */
  }
  if (ndim == 0) { /* every dim reduced: a Lua value, no array */
    dlb_scalar v;
    if (dlb_reduce_value(op, a, &o, dlbL_state(L)->cpu, &v, &err) != DLB_OK)
      dlbL_raise_error(L, &err, name);
    dlbL_push_scalar(L, &v);
    return 1;
  }
  reserve_result(L, op, a, &o); /* may run finalizers: a is checked again below */
  result = dlbL_push_empty(L, name);
  a = dlbL_check_live(L, 1, name);
  if (dlb_reduce(op, a, &o, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, name);
  return 1;
}

/* reduce_NAME serves dl.NAME(a, opts) and a:NAME(opts), for each row of
 * DLB_REDUCE_OPS. */
#define REDUCTION(ID, name, ...)                                                                   \
  static int reduce_##name(lua_State *L) { return reduce(L, DLB_REDUCE_##ID, "dl." #name); }
DLB_REDUCE_OPS(REDUCTION)
#undef REDUCTION

#define REDUCTION_NAME(ID, name, ...) {#name, reduce_##name},
const luaL_Reg dlbL_reduce_methods[] = {DLB_REDUCE_OPS(REDUCTION_NAME){NULL, NULL}};
const luaL_Reg dlbL_reduce_functions[] = {DLB_REDUCE_OPS(REDUCTION_NAME){NULL, NULL}};
#undef REDUCTION_NAME
