/* views.c -- Array methods that return views sharing the array's memory. */
#include <string.h>
#include "internal.h"

/* Pushes a share of the array at 1 (checked live) for op to reshape, above
 * the at most nargs arguments (self included) that op takes. The share has
 * the array's geometry until op changes it: op reads the source's there
 * (a pointer fetched from the array would not outlive the allocation).
 * dlbL_pin checks self; self is checked here only when its error must
 * come first: before an extra argument's, or before lua_settop turns no
 * self into nil. */
static dlb_array *start_view(lua_State *L, int nargs, const char *op) {
  int top = lua_gettop(L);
  if (top == 0 || top > nargs) {
    dlbL_check_live(L, 1, op);
    dlbL_check_nargs(L, nargs, op);
  }
  lua_settop(L, nargs);
  return dlbL_pin(L, 1, op);
}

/* For view, reshape and expand: checks self and reads the shape (a table or
 * integers, nothing after it), then pushes the share to reshape. */
static dlb_array *start_shape_view(lua_State *L, int64_t *shape, int *ndim, const char *op) {
  dlbL_check_live(L, 1, op);
  *ndim = dlbL_check_shape_args(L, 2, shape, 1, NULL, op);
  return dlbL_pin(L, 1, op);
}

/* Raises err if st failed; the half-built view is collected later. */
static void check_status(lua_State *L, dlb_status st, const dlb_error *err, const char *op) {
  if (st != DLB_OK) dlbL_raise_error(L, err, op);
}

/* Resolves one -1 in shape from the element count. */
static void infer_minus_one(lua_State *L, int ndim, int64_t *shape, int64_t numel, const char *op) {
  int unknown = -1;
  int64_t known = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] != -1) {
      if (__builtin_mul_overflow(known, shape[d], &known))
        dlbL_raise(L, DLB_E_SHAPE, op, "the element count of the new shape overflows");
    } else if (unknown >= 0) {
      dlbL_raise(L, DLB_E_SHAPE, op, "at most one dimension can be -1");
    } else {
      unknown = d;
    }
  }
  if (unknown < 0) return;
  if (known == 0 || numel % known != 0)
    dlbL_raise(L, DLB_E_SHAPE, op, "cannot infer the -1 dimension: %lld elements into %lld",
               (long long)numel, (long long)known);
  shape[unknown] = numel / known;
}

/* a:view(shape) or a:view(n1, n2, ...): same memory, new shape;
 * COPY_REQUIRED when the strides forbid it. */
static int views_view(lua_State *L) {
  int64_t shape[DLB_MAX_NDIM];
  int ndim;
  dlb_array *v = start_shape_view(L, shape, &ndim, "Array:view");
  dlb_error err;
  infer_minus_one(L, ndim, shape, v->numel, "Array:view");
  check_status(L, dlb_view_reshape(v, ndim, shape, &err), &err, "Array:view");
  return 1;
}

/* a:reshape(shape) or a:reshape(n1, n2, ...): a view when possible, else a
 * contiguous copy. */
static int views_reshape(lua_State *L) {
  int64_t shape[DLB_MAX_NDIM];
  int ndim;
  dlb_array *v = start_shape_view(L, shape, &ndim, "Array:reshape");
  dlb_error err;
  dlb_status st;
  infer_minus_one(L, ndim, shape, v->numel, "Array:reshape");
  st = dlb_view_reshape(v, ndim, shape, &err);
  if (st == DLB_E_COPY_REQUIRED) {
    /* v still has a's geometry (a failed reshape changes nothing): copy it. */
    dlb_array *c = dlbL_push_empty(L, "Array:reshape");
    dlbL_reserve(L, v->numel, dlb_array_itemsize(v)); /* v is private: no finalizer reaches it */
    check_status(L, dlb_array_clone(c, v, v->dtype, &err), &err, "Array:reshape");
    dlb_array_release(v);
    v = c;
    st = dlb_view_reshape(v, ndim, shape, &err);
  }
  check_status(L, st, &err, "Array:reshape");
  return 1;
}

/* a:transpose() reverses the dims; a:transpose(d1, d2) swaps two. */
static int views_transpose(lua_State *L) {
  dlb_array *v = start_view(L, 3, "Array:transpose");
  int perm[DLB_MAX_NDIM];
  dlb_error err;
  for (int d = 0; d < v->ndim; d++) perm[d] = v->ndim - 1 - d;
  if (lua_isnoneornil(L, 2) != lua_isnoneornil(L, 3))
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "Array:transpose",
                    "a:transpose() reverses the dimensions; a:transpose(1, 2) swaps two",
                    "a:transpose takes no dimension or two, got one");
  if (!lua_isnoneornil(L, 2)) {
    int d1 = dlbL_check_dim(L, 2, v->ndim, "Array:transpose");
    int d2 = dlbL_check_dim(L, 3, v->ndim, "Array:transpose");
    for (int d = 0; d < v->ndim; d++) perm[d] = d;
    perm[d1] = d2;
    perm[d2] = d1;
  }
  check_status(L, dlb_view_permute(v, perm, &err), &err, "Array:transpose");
  return 1;
}

#define PERMUTE_HINT                                                                               \
  "one table naming every dimension once: a:permute{3, 1, 2} puts the last dimension first"

/* a:permute{3, 1, 2}: dim k of the result is dim perm[k] of a. */
static int views_permute(lua_State *L) {
  dlb_array *v = start_view(L, 2, "Array:permute");
  int perm[DLB_MAX_NDIM];
  dlb_error err;
  if (lua_type(L, 2) != LUA_TTABLE)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "Array:permute", PERMUTE_HINT,
                    "a:permute{...} takes a table of dimensions, got %s", luaL_typename(L, 2));
  if (dlbL_check_list(L, 2, "the permutation", PERMUTE_HINT, "Array:permute") != v->ndim)
    dlbL_raise(L, DLB_E_INDEX, "Array:permute", "a permutation of %d dimensions needs %d entries",
               v->ndim, v->ndim);
  for (int d = 0; d < v->ndim; d++) {
    lua_rawgeti(L, 2, d + 1);
    perm[d] = dlbL_check_dim(L, -1, v->ndim, "Array:permute");
    lua_pop(L, 1);
  }
  check_status(L, dlb_view_permute(v, perm, &err), &err, "Array:permute");
  return 1;
}

/* A length or count argument: an integer >= 0. */
static int64_t check_count(lua_State *L, int idx, const char *what, const char *op) {
  int isint;
  int64_t n = (int64_t)dlbL_tointegerx(L, idx, &isint);
  if (lua_type(L, idx) != LUA_TNUMBER)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                    "a:narrow(dim, start, length): the length is a count of elements, an "
                    "integer >= 0",
                    "%s must be an integer, got %s", what, luaL_typename(L, idx));
  if (!isint || n < 0) dlbL_raise(L, DLB_E_INDEX, op, "%s must be an integer >= 0", what);
  return n;
}

/* a:narrow(dim, start, len): len elements of dim from start (1-based). */
static int views_narrow(lua_State *L) {
  dlb_array *v = start_view(L, 4, "Array:narrow");
  dlb_error err;
  int dim = dlbL_check_dim(L, 2, v->ndim, "Array:narrow");
  int64_t len = check_count(L, 4, "length", "Array:narrow"), start, extent = v->shape[dim];
  /* start may be one past the end when len is 0 (an empty narrow at the end). */
  if (len == 0 && dlbL_isinteger(L, 3) && dlbL_tointeger(L, 3) > 0 &&
      dlbL_tointeger(L, 3) - 1 == extent)
    start = extent;
  else start = dlbL_check_index(L, 3, extent, "Array:narrow");
  if (len > extent - start)
    dlbL_raise(L, DLB_E_INDEX, "Array:narrow", "narrow(%d, %lld, %lld) runs past extent %lld",
               dim + 1, (long long)start + 1, (long long)len, (long long)extent);
  check_status(L, dlb_view_slice(v, dim, start, len, 1, &err), &err, "Array:narrow");
  return 1;
}

/* a:select(dim, i): the slice at index i, without dim. */
static int views_select(lua_State *L) {
  dlb_array *v = start_view(L, 3, "Array:select");
  dlb_error err;
  int dim = dlbL_check_dim(L, 2, v->ndim, "Array:select");
  int64_t i = dlbL_check_index(L, 3, v->shape[dim], "Array:select");
  check_status(L, dlb_view_select(v, dim, i, &err), &err, "Array:select");
  return 1;
}

/* A slice bound: nil gives def; 0 is an error; negative counts from the end.
 * Returns a 0-based position that may lie outside [0, n) (clamped later). */
static int64_t slice_bound(lua_State *L, int idx, int64_t n, int64_t def, const char *op) {
  int isint, type = lua_type(L, idx);
  int64_t p;
  if (type == LUA_TNONE || type == LUA_TNIL) return def;
  if (type != LUA_TNUMBER)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                    "a:slice(dim, first, last, step): a bound is an integer (1 the first, -1 the "
                    "last) or nil (that end)",
                    "a slice bound is an integer, got %s", luaL_typename(L, idx));
  p = (int64_t)dlbL_tointegerx(L, idx, &isint);
  if (!isint) dlbL_raise(L, DLB_E_INDEX, op, "a slice bound must be an integer");
  if (p == 0) dlbL_raise(L, DLB_E_INDEX, op, "slice bound 0: indices are 1-based");
  return p > 0 ? p - 1 : n + p; /* -1 -> n - 1; never overflows */
}

#define SLICE_STEP_HINT                                                                            \
  "the step is a non-zero integer: 2 takes every other element, -1 walks backwards "               \
  "(a:slice(1, nil, nil, -1) reverses)"

/* a:slice(dim, first, last, step): first..last inclusive by step (1-based;
 * negative bounds count from the end; bounds beyond the ends are clamped as
 * in NumPy; a negative step walks backwards). */
static int views_slice(lua_State *L) {
  dlb_array *v = start_view(L, 5, "Array:slice");
  dlb_error err;
  int dim = dlbL_check_dim(L, 2, v->ndim, "Array:slice");
  int64_t n = v->shape[dim], step = 1, first, last, count = 0;
  int step_type = lua_type(L, 5);
  if (step_type != LUA_TNONE && step_type != LUA_TNIL) {
    int isint;
    if (step_type != LUA_TNUMBER)
      dlbL_raise_hint(L, DLB_E_ARGUMENT, "Array:slice", SLICE_STEP_HINT,
                      "the step is an integer, got %s", luaL_typename(L, 5));
    step = (int64_t)dlbL_tointegerx(L, 5, &isint);
    if (!isint)
      dlbL_raise_hint(L, DLB_E_ARGUMENT, "Array:slice", SLICE_STEP_HINT,
                      "the step must be an integer");
    if (step == 0)
      dlbL_raise_hint(L, DLB_E_ARGUMENT, "Array:slice", SLICE_STEP_HINT, "the step cannot be 0");
  }
  first = slice_bound(L, 3, n, step > 0 ? 0 : n - 1, "Array:slice");
  last = slice_bound(L, 4, n, step > 0 ? n - 1 : 0, "Array:slice");
  if (step > 0) {
    if (first < 0) first = 0;
    if (last > n - 1) last = n - 1;
    if (last >= first) count = step > n ? 1 : (last - first) / step + 1;
  } else {
    if (first > n - 1) first = n - 1;
    if (last < 0) last = 0;
    if (first >= last) count = step < -n ? 1 : (first - last) / -step + 1;
  }
  if (count <= 1) step = 1; /* one or no element: any step describes it */
  check_status(L, dlb_view_slice(v, dim, count > 0 ? first : 0, count, step, &err), &err,
               "Array:slice");
  return 1;
}

/* a:squeeze() drops every extent-1 dim; a:squeeze(dim) drops that one. */
static int views_squeeze(lua_State *L) {
  dlb_array *v = start_view(L, 2, "Array:squeeze");
  dlb_error err;
  int dim = lua_isnoneornil(L, 2) ? -1 : dlbL_check_dim(L, 2, v->ndim, "Array:squeeze");
  check_status(L, dlb_view_squeeze(v, dim, &err), &err, "Array:squeeze");
  return 1;
}

/* a:unsqueeze(dim): a new extent-1 dim at position dim (1..ndim+1, -1 = last). */
static int views_unsqueeze(lua_State *L) {
  dlb_array *v = start_view(L, 2, "Array:unsqueeze");
  dlb_error err;
  int dim = dlbL_check_dim(L, 2, v->ndim + 1, "Array:unsqueeze");
  check_status(L, dlb_view_unsqueeze(v, dim, &err), &err, "Array:unsqueeze");
  return 1;
}

/* a:expand(shape) or a:expand(n1, n2, ...): broadcast extent-1 dims with
 * stride 0. The result is read-only (as numpy.broadcast_to): one element
 * stands for many. */
static int views_expand(lua_State *L) {
  int64_t shape[DLB_MAX_NDIM];
  int ndim;
  dlb_array *v = start_shape_view(L, shape, &ndim, "Array:expand");
  dlb_error err;
  check_status(L, dlb_view_expand(v, ndim, shape, &err), &err, "Array:expand");
  for (int d = 0; d < v->ndim; d++)
    if (v->strides[d] == 0 && v->shape[d] > 1) v->readonly = 1;
  return 1;
}

/* a:contiguous(): a itself when row-major contiguous, else a contiguous copy. */
static int views_contiguous(lua_State *L) {
  dlb_array *a = dlbL_check_live(L, 1, "Array:contiguous"), *c;
  dlb_error err;
  dlbL_check_nargs(L, 1, "Array:contiguous");
  if (dlb_array_is_contiguous(a)) {
    lua_settop(L, 1);
    return 1;
  }
  a = dlbL_push_result(L, 1, 0, &c, "Array:contiguous");
  check_status(L, dlb_array_clone(c, a, a->dtype, &err), &err, "Array:contiguous");
  return 1;
}

static int views_is_contiguous(lua_State *L) {
  dlbL_check_nargs(L, 1, "Array:is_contiguous");
  lua_pushboolean(L, dlb_array_is_contiguous(dlbL_check_live(L, 1, "Array:is_contiguous")));
  return 1;
}

const luaL_Reg dlbL_view_methods[] = {{"view", views_view},
                                      {"reshape", views_reshape},
                                      {"transpose", views_transpose},
                                      {"permute", views_permute},
                                      {"narrow", views_narrow},
                                      {"select", views_select},
                                      {"slice", views_slice},
                                      {"squeeze", views_squeeze},
                                      {"unsqueeze", views_unsqueeze},
                                      {"expand", views_expand},
                                      {"contiguous", views_contiguous},
                                      {"is_contiguous", views_is_contiguous},
                                      {NULL, NULL}};
