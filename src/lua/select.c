/* select.c -- indexing by arrays from Lua (semantics: src/compute/select.h):
 * a[mask] and a[mask] = v, a[idx] and a[idx] = v (idx an integer array:
 * along dim 1), a:take(idx, {dim =, out =}), dl.take_along_dim,
 * dl.put_along_dim, a:nonzero(), dl.argwhere. Indices are 1-based here as
 * everywhere (negative from the end); results are 1-based too. Also
 * dlbL_check_array_like, which sort.c and scan.c share. */
#include "../compute/select.h"
#include "internal.h"

/* --- array arguments ----------------------------------------------------- */

dlb_array *dlbL_check_array_like(lua_State *L, int idx, int has_dtype, dlb_dtype dtype,
                                 const char *op) {
  dlb_array *a = dlbL_to_array(L, idx);
  idx = lua_absindex(L, idx);
  if (a) {
    if (!a->buffer) dlbL_raise(L, DLB_E_DELETED, op, "argument #%d: the array was deleted", idx);
    return a;
  }
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
    case LUA_TBOOLEAN:
    case LUA_TTABLE:
      dlbL_array_from_lua(L, idx, has_dtype, dtype, op);
      lua_replace(L, idx);
      return dlbL_to_array(L, idx);
    default:
      return dlbL_raise(L, DLB_E_ARGUMENT, op,
                        "argument #%d: an array, or nested tables of numbers, expected; got %s",
                        idx, luaL_typename(L, idx)),
             NULL;
  }
}

/* --- indexing ------------------------------------------------------------- */

/* Pushes the 1-D flat view (or copy) of the array at idx and returns it. */
static dlb_array *push_flat(lua_State *L, int idx, const char *op) {
  dlb_array *flat = dlbL_push_empty(L, op), *a = dlbL_check_live(L, idx, op);
  dlb_error err;
  if (dlb_flatten(a, flat, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  return flat;
}

/* take of the array at 1 by the indices at 2 along dim (-1: the flattened
 * array), into out (already at the top) or a new array pushed. */
static int take_along_first(lua_State *L, int dim, dlb_array *out, const char *op) {
  dlb_array *a, *index, *result;
  dlb_error err;
  if (dim < 0) {
    push_flat(L, 1, op);
    lua_replace(L, 1);
    dim = 0;
  }
  /* out is on top again (fetched again: push_flat allocates) */
  result = out ? dlbL_to_array(L, -1) : dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op);
  index = dlbL_check_live(L, 2, op);
  if (a->ndim == 0)
    dlbL_raise_hint(L, DLB_E_INDEX, op, "read a 0-d array with a:get()",
                    "a 0-d array cannot be indexed");
  if (dlb_take(a, index, dim, 1, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 1; /* out or the new array: the top */
}

/* a[mask] or a[idx], the key an array (Array:__index). */
int dlbL_index_by_array(lua_State *L) {
  const char *op = "Array:__index";
  dlb_array *key = dlbL_check_live(L, 2, op), *a, *result;
  dlb_error err;
  dlbL_check_live(L, 1, op);
  lua_settop(L, 2);
  if (key->dtype != DLB_BOOL) return take_along_first(L, 0, NULL, op);
  result = dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op); /* (finalizers may have run) */
  key = dlbL_check_live(L, 2, op);
  if (dlb_mask_select(a, key, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 1;
}

/* a[mask] = v or a[idx] = v (Array:__newindex). */
int dlbL_assign_by_array(lua_State *L) {
  const char *op = "Array:__newindex";
  dlb_array *key = dlbL_check_live(L, 2, op), *a = dlbL_check_live(L, 1, op), *values;
  dlb_error err;
  lua_settop(L, 3);
  values = dlbL_check_array_like(L, 3, 1, a->dtype, op);
  a = dlbL_check_live(L, 1, op);
  key = dlbL_check_live(L, 2, op);
  if (key->dtype == DLB_BOOL) {
    if (dlb_mask_assign(a, key, values, dlbL_state(L)->cpu, &err) != DLB_OK)
      dlbL_raise_error(L, &err, op);
    return 0;
  }
  if (a->ndim == 0)
    dlbL_raise_hint(L, DLB_E_INDEX, op, "write a 0-d array with a:set(v)",
                    "a 0-d array cannot be indexed");
  {
    /* a[idx] = v: idx flattened, spread along a's other dims (put_along_dim). */
    int64_t shape[DLB_MAX_NDIM];
    int n = a->ndim; /* before push_flat allocates */
    dlb_array *flat = push_flat(L, 2, op);
    shape[0] = flat->numel;
    for (int d = 1; d < n; d++) shape[d] = 1;
    if (dlb_view_reshape(flat, n, shape, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
    a = dlbL_check_live(L, 1, op);
    values = dlbL_check_live(L, 3, op);
    if (dlb_put_along(a, flat, values, 0, 1, dlbL_state(L)->cpu, &err) != DLB_OK)
      dlbL_raise_error(L, &err, op);
  }
  return 0;
}

/* a:take(idx, opts) and dl.take(a, idx, opts): opts a dim or {dim =, out =}. */
static int select_take(lua_State *L) {
  static const char *const keys[] = {"dim", "out", NULL};
  const char *op = "dl.take";
  dlb_array *out = NULL;
  int dim = -1;
  dlbL_check_nargs(L, 3, op);
  lua_settop(L, 3);
  dlbL_check_array_like(L, 2, 1, DLB_INT64, op);
  switch (dlbL_check_dim_or_options(L, 3, keys, op)) {
    case 2: dim = dlbL_check_dim(L, 3, dlbL_check_live(L, 1, op)->ndim, op); break;
    case 1:
      dim = dlbL_opt_dim(L, 3, "dim", dlbL_check_live(L, 1, op)->ndim, -1, op);
      out = dlbL_opt_array(L, 3, "out", op); /* pushed: take_along_first returns it */
      break;
  }
  return take_along_first(L, dim, out, op);
}

/* dl.take_along_dim(a, idx, dim): dim nil takes from the flattened a by 1-D idx. */
static int select_take_along_dim(lua_State *L) {
  const char *op = "dl.take_along_dim";
  dlb_array *a, *index, *result;
  dlb_error err;
  int dim;
  dlbL_check_nargs(L, 3, op);
  lua_settop(L, 3);
  dlbL_check_live(L, 1, op);
  index = dlbL_check_array_like(L, 2, 1, DLB_INT64, op);
  if (lua_isnil(L, 3)) {
    if (index->ndim != 1)
      dlbL_raise_hint(L, DLB_E_SHAPE, op, "give a dim, or 1-D indices into the flattened array",
                      "without a dim, the indices must be 1-D (got %d-D)", index->ndim);
    push_flat(L, 1, op);
    lua_replace(L, 1);
    dim = 0;
  } else {
    dim = dlbL_check_dim(L, 3, dlbL_check_live(L, 1, op)->ndim, op);
  }
  result = dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op);
  index = dlbL_check_live(L, 2, op);
  if (dlb_take_along(a, index, dim, 1, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 1;
}

/* dl.put_along_dim(a, idx, values, dim) -> a, written in place. */
static int select_put_along_dim(lua_State *L) {
  const char *op = "dl.put_along_dim";
  dlb_array *a, *index, *values;
  dlb_error err;
  int dim;
  dlbL_check_nargs(L, 4, op);
  lua_settop(L, 4);
  dlbL_check_live(L, 1, op);
  dlbL_check_array_like(L, 2, 1, DLB_INT64, op);
  /* converting an argument allocates: a is fetched again after each (records.c) */
  dlbL_check_array_like(L, 3, 1, dlbL_check_live(L, 1, op)->dtype, op);
  if (lua_isnil(L, 4))
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, "dl.put_along_dim(a, idx, values, dim)",
                    "the dim is required");
  dim = dlbL_check_dim(L, 4, dlbL_check_live(L, 1, op)->ndim, op);
  a = dlbL_check_live(L, 1, op);
  index = dlbL_check_live(L, 2, op);
  values = dlbL_check_live(L, 3, op);
  if (dlb_put_along(a, index, values, dim, 1, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  lua_settop(L, 1);
  return 1;
}

/* Pushes argwhere of the array at 1 (base 1) and returns it. */
static dlb_array *push_argwhere(lua_State *L, const char *op) {
  dlb_array *result = dlbL_push_empty(L, op), *a = dlbL_check_live(L, 1, op);
  dlb_error err;
  if (dlb_argwhere(a, 1, result, dlbL_state(L)->cpu, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  return result;
}

/* dl.argwhere(a): (count, ndim) int64, 1-based. */
static int select_argwhere(lua_State *L) {
  dlbL_check_nargs(L, 1, "dl.argwhere");
  dlbL_check_live(L, 1, "dl.argwhere");
  push_argwhere(L, "dl.argwhere");
  return 1;
}

/* dl.nonzero(a) and a:nonzero(): one 1-D int64 array per dim (a 0-d a counts
 * as 1-D, as NumPy does), views of argwhere's columns. */
static int select_nonzero(lua_State *L) {
  const char *op = "dl.nonzero";
  dlb_array *all, *col;
  dlb_error err;
  int n, where;
  dlbL_check_nargs(L, 1, op);
  lua_settop(L, 1);
  if (dlbL_check_live(L, 1, op)->ndim == 0) {
    int64_t one = 1;
    dlb_array *v = dlbL_pin(L, 1, op);
    if (dlb_view_reshape(v, 1, &one, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
    lua_replace(L, 1);
  }
  all = push_argwhere(L, op);
  where = lua_gettop(L);
  n = all->ndim > 1 ? (int)all->shape[1] : 0;
  luaL_checkstack(L, n + 2, op);
  for (int d = 0; d < n; d++) {
    col = dlbL_pin(L, where, op);
    if (dlb_view_select(col, 1, d, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  }
  return n;
}

#define SELECT_METHODS                                                                             \
  {"take", select_take}, { "nonzero", select_nonzero }

const luaL_Reg dlbL_select_methods[] = {SELECT_METHODS, {NULL, NULL}};
const luaL_Reg dlbL_select_functions[] = {SELECT_METHODS,
                                          {"take_along_dim", select_take_along_dim},
                                          {"put_along_dim", select_put_along_dim},
                                          {"argwhere", select_argwhere},
                                          {NULL, NULL}};
