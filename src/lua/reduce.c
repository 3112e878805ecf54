/* reduce.c -- reductions from Lua: a:sum(opts) and dl.sum(a, opts), and
 * likewise prod, mean, min, max, argmin, argmax, all, any, count_nonzero,
 * std, var (semantics: src/compute/reduce.h). Options: dim (a dim or a list
 * of dims, 1-based, negative from the end), keepdims, dtype (sum, prod,
 * mean, std, var), ddof (std, var), out; a plain integer stands for
 * {dim = n}. A reduction over every dim without keepdims or out returns a
 * Lua value (number, integer, boolean, {re=, im=}), as NumPy returns a
 * scalar; any other returns an array. */
#include <stdio.h>
#include <string.h>
#include "../compute/reduce.h"
#include "../core/shape.h"
#include "internal.h"

#define DIMS_HINT \
  "dim is a dimension (1 the first, -1 the last) or a list of them: a:sum(2), a:sum{dim = {1, 2}}"

/* The dims named by the value at idx (a dim or a list of dims) as bits. */
static uint64_t check_dims(lua_State *L, int idx, int ndim, const char *op) {
  uint64_t mask = 0;
  lua_Unsigned n;
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TNUMBER) return UINT64_C(1) << dlbL_check_dim(L, idx, ndim, op);
  if (lua_type(L, idx) != LUA_TTABLE)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, DIMS_HINT,
                    "dim must be a dimension or a list of them, got %s", luaL_typename(L, idx));
  n = (lua_Unsigned)dlbL_check_list(L, idx, "dim", DIMS_HINT, op);
  for (lua_Unsigned i = 1; i <= n; i++) {
    int d;
    lua_rawgeti(L, idx, (lua_Integer)i);
    d = dlbL_check_dim(L, -1, ndim, op);
    if (mask >> d & 1)
      dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                      "list each dimension once (-1 and ndim name the same one)",
                      "dimension %d is listed twice", d + 1);
    mask |= UINT64_C(1) << d;
    lua_pop(L, 1);
  }
  return mask;
}

/* Whether op takes the dtype and ddof options. */
static int takes_dtype(dlb_reduce_op op) {
  return op == DLB_REDUCE_SUM || op == DLB_REDUCE_PROD || op == DLB_REDUCE_MEAN ||
         op == DLB_REDUCE_STD || op == DLB_REDUCE_VAR;
}
static int takes_ddof(dlb_reduce_op op) { return op == DLB_REDUCE_STD || op == DLB_REDUCE_VAR; }

/* How the reduction name ("dl.sum") is called, with the options op takes. */
static const char *usage(char *buf, size_t size, dlb_reduce_op op, const char *name) {
  const char *short_name = name + 3;
  snprintf(buf, size, "dl.%s(a, opts) or a:%s(opts); opts is a dim or {dim =, keepdims = true%s%s, "
                      "out = array}", short_name, short_name,
           takes_dtype(op) ? ", dtype = \"float64\"" : "", takes_ddof(op) ? ", ddof = 1" : "");
  return buf;
}

/* Reads the options at idx (nil, a dim, or a table) for an ndim array into
 * *o; returns whether an out array was given (then pushed on the stack). */
static int check_options(lua_State *L, int idx, dlb_reduce_op op, int ndim, dlb_reduce_options *o,
                         const char *name) {
  int has_out = 0;
  memset(o, 0, sizeof *o);
  o->dims = DLB_REDUCE_ALL_DIMS;
  o->index_base = 1;
  if (lua_isnoneornil(L, idx)) return 0;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    o->dims = check_dims(L, idx, ndim, name);
    return 0;
  }
  if (lua_type(L, idx) != LUA_TTABLE) {
    char hint[200];
    dlbL_raise_hint(L, DLB_E_ARGUMENT, name, usage(hint, sizeof hint, op, name),
                    "options must be a table or a dim, got %s", luaL_typename(L, idx));
  }
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
    if (strcmp(key, "dim") == 0) {
      o->dims = check_dims(L, -1, ndim, name);
    } else if (strcmp(key, "keepdims") == 0) {
      if (!lua_isboolean(L, -1))
        dlbL_raise_hint(L, DLB_E_ARGUMENT, name,
                        "keepdims = true keeps each reduced dimension as extent 1 (the result "
                        "broadcasts against a)",
                        "keepdims must be a boolean, got %s", luaL_typename(L, -1));
      o->keepdims = lua_toboolean(L, -1);
    } else if (strcmp(key, "dtype") == 0 && takes_dtype(op)) {
      o->dtype = dlbL_check_dtype(L, -1, name);
      o->has_dtype = 1;
    } else if (strcmp(key, "ddof") == 0 && takes_ddof(op)) {
      if (lua_type(L, -1) != LUA_TNUMBER)
        dlbL_raise_hint(L, DLB_E_ARGUMENT, name,
                        "ddof is a number subtracted from the count: {ddof = 1} gives the sample "
                        "variance",
                        "ddof must be a number, got %s", luaL_typename(L, -1));
      o->ddof = (double)lua_tonumber(L, -1);
    } else if (strcmp(key, "out") == 0) {
      if (!dlbL_to_array(L, -1))
        dlbL_raise_hint(L, DLB_E_ARGUMENT, name,
                        "out is an array of the result's shape that receives it: "
                        "a:sum{dim = 1, out = row}",
                        "out must be a dlbridge.Array, got %s", luaL_typename(L, -1));
      has_out = 1;
    } else {
      char hint[200];
      dlbL_raise_hint(L, DLB_E_ARGUMENT, name, usage(hint, sizeof hint, op, name),
                      "unknown option '%.40s' (expected dim, keepdims%s%s, out)",
                      dlbL_key_name(L, -2), takes_dtype(op) ? ", dtype" : "",
                      takes_ddof(op) ? ", ddof" : "");
    }
    lua_pop(L, 1);
  }
  if (has_out) lua_getfield(L, idx, "out");
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

/* op over the array at 1 with the options at 2: a Lua value, a new array,
 * or out. */
static int reduce(lua_State *L, dlb_reduce_op op, const char *name) {
  dlb_array *a = dlbL_check_live(L, 1, name), *result;
  dlb_reduce_options o;
  dlb_error err;
  int64_t shape[DLB_MAX_NDIM];
  int ndim;
  if (lua_gettop(L) > 2) {
    char hint[200];
    dlbL_extra_argument(L, 2, name, usage(hint, sizeof hint, op, name));
  }
  lua_settop(L, 2);
  if (check_options(L, 2, op, a->ndim, &o, name)) {
    dlb_array *out = dlbL_to_array(L, 3);
    if (!out->buffer) /* (dlb_reduce would take it for a request of a new array) */
      dlbL_raise(L, DLB_E_DELETED, name, "the out array was deleted");
    if (dlb_reduce(op, a, &o, out, dlbL_state(L)->cpu, &err) != DLB_OK)
      dlbL_raise_error(L, &err, name);
    return 1; /* out */
  }
  if (dlb_reduce_result_shape(op, a, &o, &ndim, shape, &err) != DLB_OK)
    dlbL_raise_error(L, &err, name);
  if (op == DLB_REDUCE_STD || op == DLB_REDUCE_VAR) { /* a temporary the size of a */
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

/* dl.NAME(a, opts) and a:NAME(opts): one function serves both. */
#define REDUCTION(fname, OP) \
  static int fn_##fname(lua_State *L) { return reduce(L, OP, "dl." #fname); }
REDUCTION(sum, DLB_REDUCE_SUM)
REDUCTION(prod, DLB_REDUCE_PROD)
REDUCTION(mean, DLB_REDUCE_MEAN)
REDUCTION(min, DLB_REDUCE_MIN)
REDUCTION(max, DLB_REDUCE_MAX)
REDUCTION(argmin, DLB_REDUCE_ARGMIN)
REDUCTION(argmax, DLB_REDUCE_ARGMAX)
REDUCTION(all, DLB_REDUCE_ALL)
REDUCTION(any, DLB_REDUCE_ANY)
REDUCTION(count_nonzero, DLB_REDUCE_COUNT_NONZERO)
REDUCTION(std, DLB_REDUCE_STD)
REDUCTION(var, DLB_REDUCE_VAR)
#undef REDUCTION

#define REDUCTION_NAMES                                                                          \
  {"sum", fn_sum}, {"prod", fn_prod}, {"mean", fn_mean}, {"min", fn_min}, {"max", fn_max},       \
      {"argmin", fn_argmin}, {"argmax", fn_argmax}, {"all", fn_all}, {"any", fn_any},            \
      {"count_nonzero", fn_count_nonzero}, {"std", fn_std}, {"var", fn_var}

const luaL_Reg dlbL_reduce_methods[] = {REDUCTION_NAMES, {NULL, NULL}};
const luaL_Reg dlbL_reduce_functions[] = {REDUCTION_NAMES, {NULL, NULL}};
