/* sort.c -- ordering from Lua (semantics: src/compute/sort.h): a:sort(opts)
 * and a:argsort(opts) with {dim = -1, descending = false, stable = false},
 * dl.topk(a, k, {dim = -1, largest = true, sorted = true}) returning values
 * and 1-based indices, dl.unique(a, {return_inverse, return_counts}), and
 * a:searchsorted(v, {side = "left" | "right"}) with 1-based results. */
#include <string.h>
#include "../compute/sort.h"
#include "internal.h"

static const char *const sort_keys[] = {"dim", "descending", "stable", NULL};

/* Reads the sort options at idx (a dim, or a table) for the array a. */
static void check_sort_options(lua_State *L, int idx, const dlb_array *a, dlb_sort_options *o,
                               const char *op) {
  memset(o, 0, sizeof *o);
  o->dim = a->ndim - 1;
  o->k = -1;
  o->index_base = 1;
  switch (dlbL_check_dim_or_options(L, idx, sort_keys, op)) {
    case 2: o->dim = dlbL_check_dim(L, idx, a->ndim, op); return;
    case 1:
      o->dim = dlbL_opt_dim(L, idx, "dim", a->ndim, a->ndim - 1, op);
      o->descending = dlbL_opt_boolean(L, idx, "descending", 0, op);
      o->stable = dlbL_opt_boolean(L, idx, "stable", 0, op);
      break;
  }
  if (a->ndim == 0)
    dlbL_raise_hint(L, DLB_E_INDEX, op, "sort a 1-D array: a:reshape{1}",
                    "a 0-d array has no dim to sort along");
}

/* sort (want_indices 0) or argsort of the array at 1, options at 2. */
static int sort_or_argsort(lua_State *L, int want_indices, const char *op) {
  dlb_array *a = dlbL_check_live(L, 1, op), *result;
  dlb_sort_options o;
  dlb_error err;
  dlbL_check_nargs(L, 2, op);
  lua_settop(L, 2);
  check_sort_options(L, 2, a, &o, op);
  result = dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op);
  if (dlb_sort(a, &o, want_indices ? NULL : result, want_indices ? result : NULL,
               dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 1;
}

static int sort_sort(lua_State *L) { return sort_or_argsort(L, 0, "dl.sort"); }
static int sort_argsort(lua_State *L) { return sort_or_argsort(L, 1, "dl.argsort"); }

/* dl.topk(a, k, opts) and a:topk(k, opts) -> values, indices. */
static int sort_topk(lua_State *L) {
  static const char *const keys[] = {"dim", "largest", "sorted", NULL};
  const char *op = "dl.topk";
  dlb_array *a = dlbL_check_live(L, 1, op), *values, *indices;
  dlb_sort_options o;
  dlb_error err;
  int ok;
  dlbL_check_nargs(L, 3, op);
  lua_settop(L, 3);
  memset(&o, 0, sizeof o);
  o.index_base = 1;
  if (lua_type(L, 2) != LUA_TNUMBER)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, "dl.topk(a, 5) or a:topk(5, {dim = 1})",
                    "k must be an integer, got %s", luaL_typename(L, 2));
  o.k = (int64_t)dlbL_tointegerx(L, 2, &ok);
  if (!ok || o.k < 0)
    dlbL_raise_hint(L, DLB_E_VALUE, op, "k counts the elements wanted: 0 up to the dim's extent",
                    "k must be a non-negative integer");
  if (a->ndim == 0)
    dlbL_raise_hint(L, DLB_E_INDEX, op, "select from a 1-D array: a:reshape{1}",
                    "a 0-d array has no dim to select along");
  o.dim = a->ndim - 1;
  o.descending = 1;
  switch (dlbL_check_dim_or_options(L, 3, keys, op)) {
    case 2: o.dim = dlbL_check_dim(L, 3, a->ndim, op); break;
    case 1:
      o.dim = dlbL_opt_dim(L, 3, "dim", a->ndim, a->ndim - 1, op);
      o.descending = dlbL_opt_boolean(L, 3, "largest", 1, op);
      (void)dlbL_opt_boolean(L, 3, "sorted", 1, op); /* always sorted (docs/manual/selecting.md) */
      break;
  }
  values = dlbL_push_empty(L, op);
  indices = dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op);
  if (dlb_sort(a, &o, values, indices, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 2;
}

/* dl.unique(a, {return_inverse = true, return_counts = true}) -> values[, inverse][, counts]. */
static int sort_unique(lua_State *L) {
  static const char *const keys[] = {"return_inverse", "return_counts", NULL};
  const char *op = "dl.unique";
  dlb_array *a, *values, *inverse = NULL, *counts = NULL;
  dlb_error err;
  int want_inverse, want_counts;
  dlbL_check_nargs(L, 2, op);
  lua_settop(L, 2);
  dlbL_check_array_like(L, 1, 0, DLB_FLOAT64, op);
  dlbL_check_option_table(L, 2, keys, op);
  want_inverse = dlbL_opt_boolean(L, 2, "return_inverse", 0, op);
  want_counts = dlbL_opt_boolean(L, 2, "return_counts", 0, op);
  values = dlbL_push_empty(L, op);
  if (want_inverse) inverse = dlbL_push_empty(L, op);
  if (want_counts) counts = dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op);
  if (dlb_unique(a, 1, values, inverse, counts, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 1 + want_inverse + want_counts;
}

/* a:searchsorted(v, {side =}) and dl.searchsorted(a, v, opts): an integer
 * for a number v, else an int64 array of v's shape. */
static int sort_searchsorted(lua_State *L) {
  static const char *const keys[] = {"side", NULL};
  static const char *const sides[] = {"left", "right", NULL};
  const char *op = "dl.searchsorted";
  dlb_array *a = dlbL_check_live(L, 1, op), *v, *result;
  dlb_error err;
  int right = 0, scalar;
  dlbL_check_nargs(L, 3, op);
  lua_settop(L, 3);
  scalar = lua_type(L, 2) == LUA_TNUMBER || lua_type(L, 2) == LUA_TBOOLEAN;
  v = dlbL_check_array_like(L, 2, 0, DLB_FLOAT64, op);
  if (dlbL_check_option_table(L, 3, keys, op)) right = dlbL_opt_choice(L, 3, "side", sides, 0, op);
  result = dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op);
  v = dlbL_check_live(L, 2, op);
  if (dlb_searchsorted(a, v, right, 1, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  if (scalar) {
    dlb_scalar s;
    int64_t none = 0;
    if (dlb_array_get(result, &none, &s, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
    dlbL_push_scalar(L, &s);
  }
  return 1;
}

#define SORT_METHODS                                                                               \
  {"sort", sort_sort}, {"argsort", sort_argsort}, {"topk", sort_topk}, {                           \
    "searchsorted", sort_searchsorted                                                              \
  }

const luaL_Reg dlbL_sort_methods[] = {SORT_METHODS, {NULL, NULL}};
const luaL_Reg dlbL_sort_functions[] = {SORT_METHODS, {"unique", sort_unique}, {NULL, NULL}};
