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
  switch (dlbL_check_dim_or_options(L, 2, keys, name)) {
    case 2: o.dim = dlbL_check_dim(L, 2, a->ndim, name); break;
    case 1:
      o.dim = dlbL_opt_dim(L, 2, "dim", a->ndim, -1, name);
      o.has_dtype = dlbL_opt_dtype(L, 2, "dtype", &o.dtype, name);
      out = dlbL_opt_array(L, 2, "out", name); /* pushed: stays the top */
      break;
  }
  if (o.dim < 0) { /* over the flattened array */
    dlb_array *flat = dlbL_push_empty(L, name);
    if (dlb_flatten(dlbL_check_live(L, 1, name), flat, &err) != DLB_OK)
      dlbL_raise_error(L, &err, name);
    lua_replace(L, 1);
    o.dim = 0;
  }
  /* out is on top again (fetched again: the flattening allocated) */
  result = out ? dlbL_to_array(L, -1) : dlbL_push_empty(L, name);
  a = dlbL_check_live(L, 1, name);
  if (!result->buffer && out) dlbL_raise(L, DLB_E_DELETED, name, "the out array was deleted");
  if (dlb_scan(op, a, &o, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, name);
  return 1;
}

static int scan_cumsum(lua_State *L) { return cumulative(L, DLB_SCAN_SUM, "dl.cumsum"); }
static int scan_cumprod(lua_State *L) { return cumulative(L, DLB_SCAN_PROD, "dl.cumprod"); }

/* dl.diff(a, {n = 1, dim = -1}). */
static int scan_diff(lua_State *L) {
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

/* dl.bincount(x, {weights =, minlength = 0}). */
static int scan_bincount(lua_State *L) {
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
    if ((w = dlbL_opt_array_like(L, 2, "weights", 1, DLB_FLOAT64, op))) widx = lua_gettop(L);
  }
  result = dlbL_push_empty(L, op);
  x = dlbL_check_live(L, 1, op);
  if (widx) w = dlbL_check_live(L, widx, op);
  if (dlb_bincount(x, w, minlength, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 1;
}

/* dl.histogram(a, {bins = 10 | edges, range = {lo, hi}, weights =}) -> counts, edges. */
static int scan_histogram(lua_State *L) {
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
    double range[2];
    int n, bins_type = dlbL_opt_get(L, 2, "bins");
    lua_pop(L, 1);
    if (bins_type == LUA_TNUMBER) o.bins = dlbL_opt_integer(L, 2, "bins", 10, op);
    else if (dlbL_opt_array_like(L, 2, "bins", 0, DLB_FLOAT64, op)) eidx = lua_gettop(L);
    if ((n = dlbL_opt_numbers(L, 2, "range", range, 2, op)) >= 0) {
      if (n != 2)
        dlbL_raise(L, DLB_E_ARGUMENT, op, "option range must be a pair {lo, hi}, got a list of %d",
                   n);
      o.lo = range[0];
      o.hi = range[1];
      o.has_range = 1;
    }
    if (dlbL_opt_array_like(L, 2, "weights", 1, DLB_FLOAT64, op)) widx = lua_gettop(L);
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

#define SCAN_METHODS                                                                               \
  {"cumsum", scan_cumsum}, { "cumprod", scan_cumprod }

const luaL_Reg dlbL_scan_methods[] = {SCAN_METHODS, {NULL, NULL}};
const luaL_Reg dlbL_scan_functions[] = {SCAN_METHODS,
                                        {"diff", scan_diff},
                                        {"bincount", scan_bincount},
                                        {"histogram", scan_histogram},
                                        {NULL, NULL}};
