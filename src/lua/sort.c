/* sort.c -- ordering from Lua (semantics: src/compute/sort.h): a:sort(opts)
 * and a:argsort(opts) with {dim = -1, descending = false, stable = false},
 * dl.topk(a, k, {dim = -1, largest = true, sorted = true}) returning values
 * and 1-based indices, dl.unique(a, {return_index, return_inverse,
 * return_counts, equal_nan}), a:searchsorted(v, {side = "left" | "right"})
 * with 1-based results, dl.isin(a, test, {invert}) and dl.lexsort(keys). */
#include <string.h>
#include "../compute/sets.h"
#include "../compute/sort.h"
#include "internal.h"

static const char *const sort_keys[] = {"dim", "descending", "stable", NULL};

/* Reads the sort options at idx (a dim, or a table) for the array a. */
static void check_sort_options(lua_State *L, int idx, const dlb_array *a, dlb_sort_options *o,
                               const char *op) {
  int first, top = lua_gettop(L);
  memset(o, 0, sizeof *o);
  o->dim = a->ndim - 1;
  o->k = -1;
  o->index_base = 1;
  switch (dlbL_collect_dim_or_options(L, idx, sort_keys, &first, op)) {
    case 2: o->dim = dlbL_check_dim(L, idx, a->ndim, op); return;
    case 1:
      o->dim = dlbL_opt_dim(L, DLBL_COLLECTED(sort_keys, first, "dim"), a->ndim, a->ndim - 1, op);
      o->descending = dlbL_opt_boolean(L, DLBL_COLLECTED(sort_keys, first, "descending"), 0, op);
      o->stable = dlbL_opt_boolean(L, DLBL_COLLECTED(sort_keys, first, "stable"), 0, op);
      lua_settop(L, top);
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
  int ok, first;
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
  switch (dlbL_collect_dim_or_options(L, 3, keys, &first, op)) {
    case 2: o.dim = dlbL_check_dim(L, 3, a->ndim, op); break;
    case 1:
      o.dim = dlbL_opt_dim(L, DLBL_COLLECTED(keys, first, "dim"), a->ndim, a->ndim - 1, op);
      o.descending = dlbL_opt_boolean(L, DLBL_COLLECTED(keys, first, "largest"), 1, op);
      /* always sorted (docs/manual/selecting.md): only checked */
      (void)dlbL_opt_boolean(L, DLBL_COLLECTED(keys, first, "sorted"), 1, op);
      lua_settop(L, 3);
      break;
  }
  values = dlbL_push_empty(L, op);
  indices = dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op);
  if (dlb_sort(a, &o, values, indices, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 2;
}

/* dl.unique(a, {return_index =, return_inverse =, return_counts =,
 * equal_nan = true}) -> values[, index][, inverse][, counts]. */
static int sort_unique(lua_State *L) {
  static const char *const keys[] = {"return_index", "return_inverse", "return_counts", "equal_nan",
                                     NULL};
  const char *op = "dl.unique";
  dlb_array *a, *values, *index = NULL, *inverse = NULL, *counts = NULL;
  dlb_unique_options o = {1, 1};
  dlb_error err;
  int want_index, want_inverse, want_counts, first;
  dlbL_check_nargs(L, 2, op);
  lua_settop(L, 2);
  dlbL_check_array_like(L, 1, 0, DLB_FLOAT64, op);
  first = dlbL_opt_collect(L, 2, keys, op);
  want_index = dlbL_opt_boolean(L, DLBL_COLLECTED(keys, first, "return_index"), 0, op);
  want_inverse = dlbL_opt_boolean(L, DLBL_COLLECTED(keys, first, "return_inverse"), 0, op);
  want_counts = dlbL_opt_boolean(L, DLBL_COLLECTED(keys, first, "return_counts"), 0, op);
  o.equal_nan = dlbL_opt_boolean(L, DLBL_COLLECTED(keys, first, "equal_nan"), 1, op);
  lua_settop(L, 2);
  values = dlbL_push_empty(L, op);
  if (want_index) index = dlbL_push_empty(L, op);
  if (want_inverse) inverse = dlbL_push_empty(L, op);
  if (want_counts) counts = dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op);
  if (dlb_unique(a, &o, values, index, inverse, counts, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 1 + want_index + want_inverse + want_counts;
}

/* dl.isin(a, test, {invert = false}) -> a bool array of a's shape (a and
 * test: arrays, numbers or tables), a boolean for a number a. */
static int sort_isin(lua_State *L) {
  static const char *const keys[] = {"invert", NULL};
  const char *op = "dl.isin";
  dlb_array *a, *test, *result;
  dlb_error err;
  int invert = 0, scalar;
  dlbL_check_nargs(L, 3, op);
  lua_settop(L, 3);
  scalar = lua_type(L, 1) == LUA_TNUMBER || lua_type(L, 1) == LUA_TBOOLEAN;
  dlbL_check_array_like(L, 1, 0, DLB_FLOAT64, op);
  dlbL_check_array_like(L, 2, 0, DLB_FLOAT64, op);
  if (dlbL_check_option_table(L, 3, keys, op)) invert = dlbL_opt_boolean(L, 3, "invert", 0, op);
  result = dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op);
  test = dlbL_check_live(L, 2, op);
  if (dlb_isin(a, test, invert, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  if (scalar) { /* a number asks a yes or no: a boolean, as searchsorted gives an integer */
    dlb_scalar s;
    int64_t none = 0;
    if (dlb_array_get(result, &none, &s, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
    lua_pushboolean(L, s.v.b);
  }
  return 1;
}

/* dl.lexsort(keys) -> int64 1-based positions: keys a list of arrays (or
 * tables) of one shape, the last the primary key; or one array: 1-D, one
 * key; more dims, its sub-arrays along dim 1 the keys. A table of numbers
 * (or complex tables) is one key, as NumPy reads a list of numbers. */
static int sort_lexsort(lua_State *L) {
  const char *op = "dl.lexsort";
  dlb_array *result, *one;
  const dlb_array **keys;
  dlb_error err;
  lua_Integer n;
  int stacked = 1;
  dlbL_check_nargs(L, 1, op);
  lua_settop(L, 1);
  if (lua_type(L, 1) == LUA_TTABLE && !dlbL_to_array(L, 1)) {
    lua_rawgeti(L, 1, 1);
    stacked =
        lua_type(L, -1) == LUA_TNUMBER || lua_type(L, -1) == LUA_TBOOLEAN || dlbL_is_complex(L, -1);
    lua_pop(L, 1);
  }
  if (stacked) {
    dlbL_check_array_like(L, 1, 0, DLB_FLOAT64, op);
    result = dlbL_push_empty(L, op);
    one = dlbL_check_live(L, 1, op);
    if ((one->ndim <= 1
             ? dlb_lexsort((const dlb_array *const *)&one, 1, 1, result, dlbL_state(L)->cpu, &err)
             : dlb_lexsort_stacked(one, 1, result, dlbL_state(L)->cpu, &err)) != DLB_OK)
      dlbL_raise_error(L, &err, op);
    return 1;
  }
  n = dlbL_check_list(L, 1, "the keys", "a list of arrays of one shape: {names, scores}", op);
  if (n > 0xffff)
    dlbL_raise_hint(L, DLB_E_VALUE, op, "sort by a few keys; stack many as rows of one array",
                    "%lld keys are too many", (long long)n);
  lua_createtable(L, (int)n, 0); /* 2: the keys as arrays, held */
  for (int i = 1; i <= (int)n; i++) {
    lua_rawgeti(L, 1, i);
    dlbL_check_array_like(L, 3, 0, DLB_FLOAT64, op);
    lua_rawseti(L, 2, i);
  }
  keys = (const dlb_array **)lua_newuserdata(L, sizeof(*keys) * (size_t)(n > 0 ? n : 1));
  result = dlbL_push_empty(L, op);
  for (int i = 1; i <= (int)n; i++) {
    lua_rawgeti(L, 2, i);
    keys[i - 1] = dlbL_check_live(L, -1, op);
    lua_pop(L, 1); /* (the table holds it) */
  }
  if (dlb_lexsort(keys, (int)n, 1, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 1;
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
const luaL_Reg dlbL_sort_functions[] = {SORT_METHODS,
                                        {"unique", sort_unique},
                                        {"isin", sort_isin},
                                        {"lexsort", sort_lexsort},
                                        {NULL, NULL}};
