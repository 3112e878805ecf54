/* scan.c -- scans and counts from Lua (semantics: src/compute/scan.h):
 * a:cumsum(opts) and a:cumprod(opts) with a dim or {dim =, dtype =, out =}
 * (no dim: over the flattened array, as NumPy), dl.diff(a, {n = 1, dim =
 * -1}), dl.bincount(x, {weights =, minlength = 0}) and dl.histogram(a,
 * {bins = 10, range = {lo, hi}, weights =}) returning counts and edges. */
#include <string.h>
#include "../compute/scan.h"
#include "../compute/select.h"
#include "internal.h"

/* cumsum or cumprod of the array at 1 with the options at 2. */
static int cumulative(lua_State *L, int op, const char *name) {
  static const char *const keys[] = {"dim", "dtype", "out", NULL};
  dlb_array *a = dlbL_check_live(L, 1, name), *out = NULL, *result;
  dlb_scan_options o = {-1, 0, DLB_INT64};
  dlb_error err;
  dlbL_check_nargs(L, 2, name);
  lua_settop(L, 2);
  if (lua_type(L, 2) == LUA_TNUMBER) {
    o.dim = dlbL_check_dim(L, 2, a->ndim, name);
  } else if (dlbL_check_option_table(L, 2, keys, name)) {
    o.dim = dlbL_opt_dim(L, 2, "dim", a->ndim, -1, name);
    lua_getfield(L, 2, "dtype");
    if (!lua_isnil(L, -1)) {
      o.dtype = dlbL_check_dtype(L, -1, name);
      o.has_dtype = 1;
    }
    lua_pop(L, 1);
    out = dlbL_opt_out(L, 2, name);
  }
  if (o.dim < 0) { /* over the flattened array */
    dlb_array *flat = dlbL_push_empty(L, name);
    if (dlb_flatten(dlbL_check_live(L, 1, name), flat, &err) != DLB_OK)
      dlbL_raise_error(L, &err, name);
    lua_replace(L, 1);
    o.dim = 0;
  }
  if (out) {
    lua_getfield(L, 2, "out");
    result = out;
  } else {
    result = dlbL_push_empty(L, name);
  }
  a = dlbL_check_live(L, 1, name);
  if (!result->buffer && out) dlbL_raise(L, DLB_E_DELETED, name, "the out array was deleted");
  if (dlb_scan(op, a, &o, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, name);
  return 1;
}

static int fn_cumsum(lua_State *L) { return cumulative(L, DLB_SCAN_SUM, "dl.cumsum"); }
static int fn_cumprod(lua_State *L) { return cumulative(L, DLB_SCAN_PROD, "dl.cumprod"); }

/* dl.diff(a, {n = 1, dim = -1}). */
static int fn_diff(lua_State *L) {
  static const char *const keys[] = {"n", "dim", NULL};
  const char *op = "dl.diff";
  dlb_array *a = dlbL_check_live(L, 1, op), *result;
  dlb_error err;
  int64_t n = 1;
  int dim;
  dlbL_check_nargs(L, 2, op);
  lua_settop(L, 2);
  if (a->ndim == 0)
    dlbL_raise_hint(L, DLB_E_INDEX, op, "diff needs at least one dim: a:reshape{1}",
                    "diff requires input that is at least one dimensional");
  dim = a->ndim - 1;
  if (dlbL_check_option_table(L, 2, keys, op)) {
    n = dlbL_opt_integer(L, 2, "n", 1, op);
    dim = dlbL_opt_dim(L, 2, "dim", a->ndim, a->ndim - 1, op);
  }
  result = dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op);
  if (dlb_diff(a, n, dim, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 1;
}

/* The weights option of the table at idx as an array pushed in its place
 * (nil: none); returns it or NULL. */
static dlb_array *weights_option(lua_State *L, int idx, const char *op) {
  int top;
  lua_getfield(L, idx, "weights");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return NULL;
  }
  top = lua_gettop(L);
  return dlbL_check_array_like(L, top, 1, DLB_FLOAT64, op);
}

/* dl.bincount(x, {weights =, minlength = 0}). */
static int fn_bincount(lua_State *L) {
  static const char *const keys[] = {"weights", "minlength", NULL};
  const char *op = "dl.bincount";
  dlb_array *x, *w = NULL, *result;
  dlb_error err;
  int64_t minlength = 0;
  int widx = 0;
  dlbL_check_nargs(L, 2, op);
  lua_settop(L, 2);
  dlbL_check_array_like(L, 1, 0, DLB_INT64, op);
  if (dlbL_check_option_table(L, 2, keys, op)) {
    minlength = dlbL_opt_integer(L, 2, "minlength", 0, op);
    if ((w = weights_option(L, 2, op))) widx = lua_gettop(L);
  }
  result = dlbL_push_empty(L, op);
  x = dlbL_check_live(L, 1, op);
  if (widx) w = dlbL_check_live(L, widx, op);
  if (dlb_bincount(x, w, minlength, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 1;
}

/* The range option {lo, hi} of the table at idx into o. */
static void range_option(lua_State *L, int idx, dlb_histogram_options *o, const char *op) {
  lua_getfield(L, idx, "range");
  if (!lua_isnil(L, -1)) {
    int ok = lua_istable(L, -1) &&
             dlbL_check_list(L, -1, "range", "range = {lo, hi}, two numbers", op) == 2;
    if (ok) {
      lua_rawgeti(L, -1, 1);
      lua_rawgeti(L, -2, 2);
      ok = lua_type(L, -2) == LUA_TNUMBER && lua_type(L, -1) == LUA_TNUMBER;
      o->lo = (double)lua_tonumber(L, -2);
      o->hi = (double)lua_tonumber(L, -1);
      lua_pop(L, 2);
    }
    if (!ok)
      dlbL_raise_hint(L, DLB_E_ARGUMENT, op, "range = {lo, hi}, two numbers",
                      "range must be a list of two numbers");
    o->has_range = 1;
  }
  lua_pop(L, 1);
}

/* dl.histogram(a, {bins = 10 | edges, range = {lo, hi}, weights =}) -> counts, edges. */
static int fn_histogram(lua_State *L) {
  static const char *const keys[] = {"bins", "range", "weights", NULL};
  const char *op = "dl.histogram";
  dlb_array *a, *counts, *edges;
  dlb_histogram_options o;
  dlb_error err;
  int widx = 0, eidx = 0;
  dlbL_check_nargs(L, 2, op);
  lua_settop(L, 2);
  memset(&o, 0, sizeof o);
  o.bins = 10;
  dlbL_check_array_like(L, 1, 0, DLB_FLOAT64, op);
  if (dlbL_check_option_table(L, 2, keys, op)) {
    lua_getfield(L, 2, "bins");
    if (lua_type(L, -1) == LUA_TNUMBER) {
      lua_pop(L, 1);
      o.bins = dlbL_opt_integer(L, 2, "bins", 10, op);
    } else if (!lua_isnil(L, -1)) {
      eidx = lua_gettop(L);
      dlbL_check_array_like(L, eidx, 0, DLB_FLOAT64, op);
    } else {
      lua_pop(L, 1);
    }
    range_option(L, 2, &o, op);
    if (weights_option(L, 2, op)) widx = lua_gettop(L);
  }
  counts = dlbL_push_empty(L, op);
  edges = dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op);
  if (eidx) o.edges = dlbL_check_live(L, eidx, op);
  if (widx) o.weights = dlbL_check_live(L, widx, op);
  if (dlb_histogram(a, &o, counts, edges, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 2;
}

#define SCAN_METHODS {"cumsum", fn_cumsum}, {"cumprod", fn_cumprod}

const luaL_Reg dlbL_scan_methods[] = {SCAN_METHODS, {NULL, NULL}};
const luaL_Reg dlbL_scan_functions[] = {SCAN_METHODS,
                                        {"diff", fn_diff},
                                        {"bincount", fn_bincount},
                                        {"histogram", fn_histogram},
                                        {NULL, NULL}};
