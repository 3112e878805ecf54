/* select.c -- indexing by arrays from Lua (semantics: src/compute/select.h):
 * a[mask] and a[mask] = v, a[idx] and a[idx] = v (idx an integer array:
 * along dim 1), a:take(idx, {dim =, out =}), dl.take_along_dim,
 * dl.put_along_dim, a:nonzero(), dl.argwhere. Indices are 1-based here as
 * everywhere (negative from the end); results are 1-based too. Also the
 * options-table checks this file shares with sort.c and scan.c. */
#include <string.h>
#include "../compute/select.h"
#include "internal.h"

/* --- shared argument checks ---------------------------------------------- */

int dlbL_check_option_table(lua_State *L, int idx, const char *const *keys, const char *op) {
  if (lua_isnoneornil(L, idx)) return 0;
  if (!lua_istable(L, idx))
    dlbL_raise(L, DLB_E_ARGUMENT, op, "argument #%d: options table expected, got %s", idx,
               luaL_typename(L, idx));
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int known = 0;
    if (lua_type(L, -2) == LUA_TSTRING)
      for (int k = 0; keys[k] && !known; k++) known = strcmp(lua_tostring(L, -2), keys[k]) == 0;
    if (!known) {
      char list[160] = "";
      for (int k = 0; keys[k]; k++) {
        if (k) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, keys[k], sizeof list - strlen(list) - 1);
      }
      dlbL_raise(L, DLB_E_ARGUMENT, op, "unknown option '%.40s' (known: %s)", dlbL_key_name(L, -2),
                 list);
    }
    lua_pop(L, 1);
  }
  return 1;
}

int dlbL_opt_boolean(lua_State *L, int idx, const char *key, int dflt, const char *op) {
  int r = dflt;
  if (lua_isnoneornil(L, idx)) return dflt;
  lua_getfield(L, idx, key);
  if (!lua_isnil(L, -1)) {
    if (!lua_isboolean(L, -1))
      dlbL_raise(L, DLB_E_ARGUMENT, op, "option %s must be a boolean, got %s", key,
                 luaL_typename(L, -1));
    r = lua_toboolean(L, -1);
  }
  lua_pop(L, 1);
  return r;
}

int64_t dlbL_opt_integer(lua_State *L, int idx, const char *key, int64_t dflt, const char *op) {
  int64_t r = dflt;
  if (lua_isnoneornil(L, idx)) return dflt;
  lua_getfield(L, idx, key);
  if (!lua_isnil(L, -1)) {
    int ok;
    r = (int64_t)lua_tointegerx(L, -1, &ok);
    if (!ok)
      dlbL_raise(L, lua_type(L, -1) == LUA_TNUMBER ? DLB_E_VALUE : DLB_E_ARGUMENT, op,
                 "option %s must be an integer, got %s", key,
                 lua_type(L, -1) == LUA_TNUMBER ? "a fraction" : luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  return r;
}

int dlbL_opt_dim(lua_State *L, int idx, const char *key, int ndim, int dflt, const char *op) {
  int r = dflt;
  if (lua_isnoneornil(L, idx)) return dflt;
  lua_getfield(L, idx, key);
  if (!lua_isnil(L, -1)) r = dlbL_check_dim(L, lua_gettop(L), ndim, op);
  lua_pop(L, 1);
  return r;
}

dlb_array *dlbL_opt_out(lua_State *L, int idx, const char *op) {
  dlb_array *out;
  if (lua_isnoneornil(L, idx)) return NULL;
  lua_getfield(L, idx, "out");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return NULL;
  }
  if (!(out = dlbL_to_array(L, -1)))
    dlbL_raise(L, DLB_E_ARGUMENT, op, "out must be a dlbridge.Array, got %s", luaL_typename(L, -1));
  if (!out->buffer) dlbL_raise(L, DLB_E_DELETED, op, "the out array was deleted");
  lua_pop(L, 1); /* the options table keeps it alive */
  return out;
}

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
 * array), into out or a new array at the top. */
static int take_along_first(lua_State *L, int dim, dlb_array *out, const char *op) {
  dlb_array *a, *index, *result;
  dlb_error err;
  if (dim < 0) {
    push_flat(L, 1, op);
    lua_replace(L, 1);
    dim = 0;
  }
  result = out ? out : dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op);
  index = dlbL_check_live(L, 2, op);
  if (a->ndim == 0)
    dlbL_raise_hint(L, DLB_E_INDEX, op, "read a 0-d array with a:get()",
                    "a 0-d array cannot be indexed");
  if (dlb_take(a, index, dim, 1, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  if (out) lua_pushvalue(L, -1); /* (the options table holds out) */
  return 1;
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
    dlb_array *flat = push_flat(L, 2, op);
    int n = a->ndim;
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
static int fn_take(lua_State *L) {
  static const char *const keys[] = {"dim", "out", NULL};
  const char *op = "dl.take";
  dlb_array *a = dlbL_check_live(L, 1, op), *out = NULL;
  int dim = -1;
  dlbL_check_nargs(L, 3, op);
  lua_settop(L, 3);
  dlbL_check_array_like(L, 2, 1, DLB_INT64, op);
  if (lua_type(L, 3) == LUA_TNUMBER) {
    dim = dlbL_check_dim(L, 3, a->ndim, op);
  } else if (dlbL_check_option_table(L, 3, keys, op)) {
    dim = dlbL_opt_dim(L, 3, "dim", a->ndim, -1, op);
    out = dlbL_opt_out(L, 3, op);
  }
  if (out) lua_getfield(L, 3, "out");
  return take_along_first(L, dim, out, op);
}

/* dl.take_along_dim(a, idx, dim): dim nil takes from the flattened a by 1-D idx. */
static int fn_take_along_dim(lua_State *L) {
  const char *op = "dl.take_along_dim";
  dlb_array *a = dlbL_check_live(L, 1, op), *index, *result;
  dlb_error err;
  int dim;
  dlbL_check_nargs(L, 3, op);
  lua_settop(L, 3);
  index = dlbL_check_array_like(L, 2, 1, DLB_INT64, op);
  if (lua_isnil(L, 3)) {
    if (index->ndim != 1)
      dlbL_raise_hint(L, DLB_E_SHAPE, op, "give a dim, or 1-D indices into the flattened array",
                      "without a dim, the indices must be 1-D (got %d-D)", index->ndim);
    push_flat(L, 1, op);
    lua_replace(L, 1);
    dim = 0;
  } else {
    dim = dlbL_check_dim(L, 3, a->ndim, op);
  }
  result = dlbL_push_empty(L, op);
  a = dlbL_check_live(L, 1, op);
  index = dlbL_check_live(L, 2, op);
  if (dlb_take_along(a, index, dim, 1, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 1;
}

/* dl.put_along_dim(a, idx, values, dim) -> a, written in place. */
static int fn_put_along_dim(lua_State *L) {
  const char *op = "dl.put_along_dim";
  dlb_array *a = dlbL_check_live(L, 1, op), *index, *values;
  dlb_error err;
  int dim;
  dlbL_check_nargs(L, 4, op);
  lua_settop(L, 4);
  index = dlbL_check_array_like(L, 2, 1, DLB_INT64, op);
  values = dlbL_check_array_like(L, 3, 1, a->dtype, op);
  if (lua_isnil(L, 4))
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, "dl.put_along_dim(a, idx, values, dim)",
                    "the dim is required");
  dim = dlbL_check_dim(L, 4, a->ndim, op);
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
  if (dlb_argwhere(a, 1, result, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return result;
}

/* dl.argwhere(a): (count, ndim) int64, 1-based. */
static int fn_argwhere(lua_State *L) {
  dlbL_check_nargs(L, 1, "dl.argwhere");
  dlbL_check_live(L, 1, "dl.argwhere");
  push_argwhere(L, "dl.argwhere");
  return 1;
}

/* dl.nonzero(a) and a:nonzero(): one 1-D int64 array per dim (a 0-d a counts
 * as 1-D, as NumPy does), views of argwhere's columns. */
static int fn_nonzero(lua_State *L) {
  const char *op = "dl.nonzero";
  dlb_array *all, *col;
  dlb_error err;
  int n, where;
  dlbL_check_nargs(L, 1, op);
  lua_settop(L, 1);
  if (dlbL_check_live(L, 1, op)->ndim == 0) {
    int64_t one = 1;
    dlb_array *v = dlbL_push_view(L, dlbL_check_live(L, 1, op), op);
    if (dlb_view_reshape(v, 1, &one, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
    lua_replace(L, 1);
  }
  all = push_argwhere(L, op);
  where = lua_gettop(L);
  n = all->ndim > 1 ? (int)all->shape[1] : 0;
  luaL_checkstack(L, n + 2, op);
  for (int d = 0; d < n; d++) {
    col = dlbL_push_view(L, dlbL_check_live(L, where, op), op);
    if (dlb_view_select(col, 1, d, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  }
  return n;
}

#define SELECT_METHODS {"take", fn_take}, {"nonzero", fn_nonzero}

const luaL_Reg dlbL_select_methods[] = {SELECT_METHODS, {NULL, NULL}};
const luaL_Reg dlbL_select_functions[] = {SELECT_METHODS,
                                          {"take_along_dim", fn_take_along_dim},
                                          {"put_along_dim", fn_put_along_dim},
                                          {"argwhere", fn_argwhere},
                                          {NULL, NULL}};
