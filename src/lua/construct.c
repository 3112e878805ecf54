/* construct.c -- construction, shape and comparison helpers (NumPy's names):
 * dl.eye, dl.identity, dl.zeros_like and friends, dl.logspace, dl.meshgrid,
 * dl.tile, dl.repeat_elements, dl.roll, dl.flip, dl.pad, dl.convolve,
 * dl.isclose, dl.allclose, dl.array_equal; a:flatten(), a:ravel(),
 * a:item(). The work is in src/compute/construct.c; views and copies in the
 * core. */
#include <math.h>
#include <string.h>
#include "../compute/construct.h"
#include "../core/shape.h"
#include "internal.h"

/* opts.dtype and opts.device of the options at idx into o (which holds the
 * defaults). */
static void placement_options(lua_State *L, int idx, dlbL_options *o, const char *op) {
  if (dlbL_opt_dtype(L, idx, "dtype", &o->dtype, op)) o->has_dtype = 1;
  dlbL_opt_device(L, idx, "device", o, op);
}

/* --- arguments ---------------------------------------------------------------- */

/* An integer argument (or list entry) at idx; ARGUMENT otherwise. */
static int64_t integer_at(lua_State *L, int idx, const char *what, const char *op) {
  int isint;
  lua_Integer n = dlbL_tointegerx(L, idx, &isint);
  if (!isint)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "%s must be an integer, got %s", what,
               lua_type(L, idx) == LUA_TNUMBER ? "a fraction" : luaL_typename(L, idx));
  return (int64_t)n;
}

/* The array at idx: an Array (live), or nested tables or a number made
 * into one in place (as dl.array would). */
static dlb_array *array_arg(lua_State *L, int idx, const char *op) {
  dlb_array *a = dlbL_to_array(L, idx);
  if (a) return dlbL_check_live(L, idx, op);
  if (lua_type(L, idx) == LUA_TTABLE || lua_type(L, idx) == LUA_TNUMBER ||
      lua_type(L, idx) == LUA_TBOOLEAN) {
    dlbL_array_from_lua(L, idx, 0, DLB_FLOAT64, op);
    lua_replace(L, idx);
    return dlbL_to_array(L, idx);
  }
  dlbL_raise(L, DLB_E_ARGUMENT, op, "argument #%d: an array (or nested tables) expected, got %s",
             idx, luaL_typename(L, idx));
}

/* An element count for a memory reservation (saturating). */
static int64_t count_of(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++)
    if (__builtin_mul_overflow(n, shape[d], &n)) return INT64_MAX;
  return n;
}

/* Raises the error of a core call that failed. */
static void check(lua_State *L, dlb_status st, const dlb_error *err, const char *op) {
  if (st != DLB_OK) dlbL_raise_error(L, err, op);
}

/* The placement of a's memory as options (wrapped host memory: the cpu). */
static dlbL_options placement_of(lua_State *L, const dlb_array *a) {
  dlbL_options o = {1, a->dtype, a->buffer->backend, a->buffer->device_id};
  if (!o.backend) o.backend = dlbL_state(L)->cpu, o.device_id = 0;
  return o;
}

/* Replaces the private array v at the top of the stack by a contiguous copy
 * (the copy is left on top; v is released). */
static dlb_array *copy_top(lua_State *L, dlb_array *v, const char *op) {
  dlb_array *c = dlbL_push_empty(L, op);
  dlb_error err;
  dlbL_reserve(L, v->numel, dlb_array_itemsize(v)); /* v is private: no finalizer reaches it */
  check(L, dlb_array_clone(c, v, v->dtype, &err), &err, op);
  dlb_array_release(v);
  lua_remove(L, -2);
  return c;
}

/* Pushes a 1-D private share of the array at idx: a view when its strides
 * allow, else a contiguous copy. */
static dlb_array *push_flat(lua_State *L, int idx, const char *op) {
  dlb_array *v = dlbL_pin(L, idx, op);
  int64_t n = v->numel;
  dlb_error err;
  dlb_status st = dlb_view_reshape(v, 1, &n, &err);
  if (st == DLB_E_COPY_REQUIRED) {
    v = copy_top(L, v, op);
    st = dlb_view_reshape(v, 1, &n, &err);
  }
  check(L, st, &err, op);
  return v;
}

/* --- creation ------------------------------------------------------------------ */

/* An extent argument: an integer (negative: SHAPE from the core). */
static int64_t extent_arg(lua_State *L, int idx, const char *op) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "argument #%d: an integer expected, got %s", idx,
               luaL_typename(L, idx));
  return integer_at(L, idx, "an extent", op);
}

/* dl.eye(n, m, opts) and dl.identity(n, opts). */
static int make_eye(lua_State *L, int identity, const char *op) {
  static const char *const eye_keys[] = {"k", "dtype", "device", NULL};
  static const char *const identity_keys[] = {"dtype", "device", NULL};
  int64_t n, m, k = 0;
  int oi = identity || lua_type(L, 2) == LUA_TTABLE ? 2 : 3;
  dlbL_options o;
  dlb_array *a;
  dlb_error err;
  dlbL_check_nargs(L, oi, op);
  n = extent_arg(L, 1, op);
  m = oi == 3 && !lua_isnoneornil(L, 2) ? extent_arg(L, 2, op) : n;
  dlbL_check_option_table(L, oi, identity ? identity_keys : eye_keys, op);
  if (!identity) k = dlbL_opt_integer(L, oi, "k", 0, op);
  lua_settop(L, oi);
  dlbL_check_options(L, 0, &o, op);
  placement_options(L, oi, &o, op);
  a = dlbL_push_new(L, count_of(2, (int64_t[]){n < 0 ? 0 : n, m < 0 ? 0 : m}),
                    dlb_dtype_get(o.dtype)->itemsize, op);
  check(L, dlb_eye(a, o.backend, o.device_id, o.dtype, n, m, k, &err), &err, op);
  return 1;
}

static int construct_eye(lua_State *L) { return make_eye(L, 0, "dl.eye"); }
static int construct_identity(lua_State *L) { return make_eye(L, 1, "dl.identity"); }

/* What a *_like function fills with. */
enum like_fill { LIKE_EMPTY, LIKE_ZEROS, LIKE_ONES, LIKE_VALUE };

/* dl.zeros_like(a, opts) and friends: a's shape, dtype and device unless
 * opts.shape, opts.dtype, opts.device say otherwise. */
static int make_like(lua_State *L, enum like_fill fill, const char *op) {
  static const char *const keys[] = {"shape", "dtype", "device", NULL};
  int oi = fill == LIKE_VALUE ? 3 : 2, ndim;
  int64_t shape[DLB_MAX_NDIM];
  dlb_array *a, *r;
  dlbL_options o;
  dlb_scalar v = {.kind = DLB_SCALAR_INT, .v.i = 1};
  dlb_error err;
  dlbL_check_nargs(L, oi, op);
  a = array_arg(L, 1, op);
  if (fill == LIKE_VALUE) {
    if (lua_isnoneornil(L, 2)) dlbL_raise(L, DLB_E_ARGUMENT, op, "dl.full_like needs a value");
    dlbL_to_scalar(L, 2, &v, op);
  }
  dlbL_check_option_table(L, oi, keys, op);
  lua_settop(L, oi);
  a = dlbL_check_live(L, 1, op); /* reading options runs Lua code */
  o = placement_of(L, a);
  ndim = a->ndim;
  memcpy(shape, a->shape, sizeof shape);
  if (dlbL_opt_get(L, oi, "shape") != LUA_TNIL) ndim = dlbL_check_shape(L, -1, shape, 0, op);
  lua_pop(L, 1);
  placement_options(L, oi, &o, op);
  r = dlbL_push_allocated(L, &o, o.dtype, ndim, shape, fill == LIKE_ZEROS, op);
  if (fill == LIKE_ONES || fill == LIKE_VALUE) check(L, dlb_array_fill(r, &v, &err), &err, op);
  return 1;
}

static int construct_zeros_like(lua_State *L) { return make_like(L, LIKE_ZEROS, "dl.zeros_like"); }
static int construct_ones_like(lua_State *L) { return make_like(L, LIKE_ONES, "dl.ones_like"); }
static int construct_empty_like(lua_State *L) { return make_like(L, LIKE_EMPTY, "dl.empty_like"); }
static int construct_full_like(lua_State *L) { return make_like(L, LIKE_VALUE, "dl.full_like"); }

/* dl.logspace(start, stop, num = 50, opts): base ^ linspace(start, stop, num)
 * as NumPy's (float64 computed, then cast to opts.dtype as astype does). */
static int construct_logspace(lua_State *L) {
  static const char *const keys[] = {"base", "endpoint", "dtype", "device", NULL};
  const char *op = "dl.logspace";
  int n = 0, endpoint;
  double start, stop, base;
  int64_t num = 50;
  dlbL_options o;
  dlb_array *r;
  dlb_error err;
  while (n < 3 && lua_type(L, n + 1) == LUA_TNUMBER) n++;
  if (n < 2)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "dl.logspace needs start and stop, got %s",
               luaL_typename(L, n + 1));
  dlbL_check_nargs(L, n + 1, op);
  start = (double)lua_tonumber(L, 1);
  stop = (double)lua_tonumber(L, 2);
  if (!isfinite(start) || !isfinite(stop))
    dlbL_raise(L, DLB_E_VALUE, op, "start and stop must be finite");
  if (n == 3) {
    int isint;
    num = (int64_t)dlbL_tointegerx(L, 3, &isint);
    if (!isint || num < 0) dlbL_raise(L, DLB_E_SHAPE, op, "num must be an integer >= 0");
  }
  dlbL_check_option_table(L, n + 1, keys, op);
  base = dlbL_opt_number(L, n + 1, "base", 10.0, op);
  endpoint = dlbL_opt_boolean(L, n + 1, "endpoint", 1, op);
  dlbL_check_options(L, 0, &o, op);
  placement_options(L, n + 1, &o, op);
  /* the result, and the float64 cpu array it is computed in when it is
   * another dtype or elsewhere */
  r = dlbL_push_new(L, num,
                    dlb_dtype_get(o.dtype)->itemsize +
                        (o.dtype == DLB_FLOAT64 && o.backend == dlbL_state(L)->cpu ? 0 : 8),
                    op);
  check(L,
        dlb_logspace(r, o.backend, o.device_id, o.dtype, start, stop, num, endpoint, base,
                     dlbL_state(L)->cpu, &err),
        &err, op);
  return 1;
}

/* dl.meshgrid(x1, x2, ..., opts): NumPy's meshgrid, one result per input. */
static int construct_meshgrid(lua_State *L) {
  static const char *const keys[] = {"indexing", "sparse", "copy", NULL};
  static const char *const indexing_names[] = {"xy", "ij", NULL};
  const char *op = "dl.meshgrid";
  int top = lua_gettop(L), n = top, xy, sparse, copy;
  int64_t shape[DLB_MAX_NDIM];
  dlb_error err;
  /* a last table that is no array and no list (no [1]) is the options */
  if (n > 0 && lua_type(L, n) == LUA_TTABLE && !dlbL_to_array(L, n)) {
    int is_list = lua_rawgeti(L, n, 1) != LUA_TNIL;
    lua_pop(L, 1);
    if (!is_list) n--;
  }
  if (n > DLB_MAX_NDIM)
    dlbL_raise(L, DLB_E_SHAPE, op, "%d inputs make %d-D results (at most %d)", n, n, DLB_MAX_NDIM);
  dlbL_check_option_table(L, n + 1, keys, op);
  xy = dlbL_opt_choice(L, n + 1, "indexing", indexing_names, 0, op) == 0;
  sparse = dlbL_opt_boolean(L, n + 1, "sparse", 0, op);
  copy = dlbL_opt_boolean(L, n + 1, "copy", 1, op);
  lua_settop(L, n);
  for (int i = 1; i <= n; i++) array_arg(L, i, op);
  for (int i = 1; i <= n; i++) shape[i - 1] = dlbL_check_live(L, i, op)->numel;
  if (xy && n >= 2) {
    int64_t t = shape[0];
    shape[0] = shape[1];
    shape[1] = t;
  }
  luaL_checkstack(L, n + 4, op);
  for (int i = 0; i < n; i++) {
    int pos = xy && n >= 2 && i < 2 ? 1 - i : i;
    int64_t own[DLB_MAX_NDIM];
    dlb_array *v = push_flat(L, i + 1, op);
    for (int d = 0; d < n; d++) own[d] = d == pos ? shape[d] : 1;
    check(L, dlb_view_reshape(v, n, own, &err), &err, op);
    if (!sparse) {
      check(L, dlb_view_expand(v, n, shape, &err), &err, op);
      for (int d = 0; d < n; d++)
        if (v->strides[d] == 0 && v->shape[d] > 1) v->readonly = 1; /* as a:expand */
    }
    if (copy) copy_top(L, v, op);
  }
  return n;
}

/* --- shape --------------------------------------------------------------------- */

/* a:flatten(): a 1-D contiguous copy. */
static int construct_flatten(lua_State *L) {
  const char *op = "Array:flatten";
  dlb_array *a, *c;
  dlb_error err;
  int64_t n;
  dlbL_check_nargs(L, 1, op);
  dlbL_check_live(L, 1, op);
  a = dlbL_push_result(L, 1, 0, &c, op);
  n = a->numel;
  check(L, dlb_array_clone(c, a, a->dtype, &err), &err, op);
  check(L, dlb_view_reshape(c, 1, &n, &err), &err, op);
  return 1;
}

/* a:ravel(): 1-D, a view when the strides allow one, else a copy. */
static int construct_ravel(lua_State *L) {
  dlbL_check_nargs(L, 1, "Array:ravel");
  dlbL_check_live(L, 1, "Array:ravel");
  push_flat(L, 1, "Array:ravel");
  return 1;
}

/* a:item(), a:item(i) (row-major, 1-based, negative from the end),
 * a:item(i, j, ...): one element as a Lua value. */
static int construct_item(lua_State *L) {
  const char *op = "Array:item";
  dlb_array *a = dlbL_check_live(L, 1, op);
  int nidx = lua_gettop(L) - 1;
  int64_t index[DLB_MAX_NDIM];
  dlb_scalar v;
  dlb_error err;
  dlbL_check_nargs(L, 1 + (a->ndim > 1 ? a->ndim : 1), op);
  if (nidx == 0) {
    if (a->numel != 1)
      dlbL_raise_hint(L, DLB_E_SHAPE, op, dlbL_usage(op),
                      "a:item() reads a one-element array; this one has %lld elements",
                      (long long)a->numel);
    for (int d = 0; d < a->ndim; d++) index[d] = 0;
  } else if (nidx == 1) {
    int64_t flat = dlbL_check_index(L, 2, a->numel, op);
    for (int d = a->ndim - 1; d >= 0; d--) {
      index[d] = flat % a->shape[d];
      flat /= a->shape[d];
    }
  } else if (nidx == a->ndim) {
    for (int d = 0; d < a->ndim; d++) index[d] = dlbL_check_index(L, d + 2, a->shape[d], op);
  } else {
    dlbL_raise(L, DLB_E_ARGUMENT, op, "a:item takes no index, one flat index or %d indices, got %d",
               a->ndim, nidx);
  }
  check(L, dlb_array_get(a, index, &v, &err), &err, op);
  dlbL_push_scalar(L, &v);
  return 1;
}

#define DIMS_HINT "dims is a dim or a list of dims such as {1, 2} (1 the first, -1 the last)"

/* The dims named at idx (nil: every dim; a dim; a list of dims) into dims;
 * returns how many. ARGUMENT for a dim listed twice. */
static int dims_arg(lua_State *L, int idx, int ndim, int *dims, const char *op) {
  int n = 0;
  uint64_t seen = 0;
  if (lua_isnoneornil(L, idx)) {
    for (int d = 0; d < ndim; d++) dims[d] = d;
    return ndim;
  }
  if (lua_type(L, idx) == LUA_TNUMBER) {
    dims[0] = dlbL_check_dim(L, idx, ndim, op);
    return 1;
  }
  if (lua_type(L, idx) != LUA_TTABLE)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "dims must be a dim, a list of dims or nil, got %s",
               luaL_typename(L, idx));
  if (dlbL_check_list(L, idx, "dims", DIMS_HINT, op) > ndim)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, "list each dimension once",
                    "%zu dims listed for a %d-D array", (size_t)lua_rawlen(L, idx), ndim);
  for (int k = 1; k <= (int)lua_rawlen(L, idx); k++) {
    lua_rawgeti(L, idx, k);
    dims[n] = dlbL_check_dim(L, -1, ndim, op);
    lua_pop(L, 1);
    if (seen >> dims[n] & 1)
      dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                      "list each dimension once (-1 and ndim name the "
                      "same one)",
                      "dimension %d is listed twice", dims[n] + 1);
    seen |= UINT64_C(1) << dims[n++];
  }
  return n;
}

/* dl.flip(a, dims): a view with the dims reversed (NumPy's flip). */
static int construct_flip(lua_State *L) {
  const char *op = "dl.flip";
  int dims[DLB_MAX_NDIM], n;
  dlb_array *a, *v;
  dlb_error err;
  dlbL_check_nargs(L, 2, op);
  a = array_arg(L, 1, op);
  lua_settop(L, 2);
  n = dims_arg(L, 2, a->ndim, dims, op);
  v = dlbL_pin(L, 1, op);
  for (int k = 0; k < n; k++) {
    int64_t e = v->shape[dims[k]];
    if (e > 1) check(L, dlb_view_slice(v, dims[k], e - 1, e, -1, &err), &err, op);
  }
  return 1;
}

/* Integers from the value at idx (an integer, or a list of them) into out
 * (at most max); returns how many. hint: what the argument looks like. */
static int64_t integers_arg(lua_State *L, int idx, int64_t *out, int64_t max, const char *what,
                            const char *hint, const char *op) {
  int64_t n;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    out[0] = integer_at(L, idx, what, op);
    return 1;
  }
  if (lua_type(L, idx) != LUA_TTABLE || dlbL_to_array(L, idx))
    dlbL_raise(L, DLB_E_ARGUMENT, op,
               "%s: an integer or a list of integers "
               "expected, got %s",
               what, dlbL_to_array(L, idx) ? "an array" : luaL_typename(L, idx));
  n = (int64_t)dlbL_check_list(L, idx, what, hint, op);
  if (n > max)
    dlbL_raise(L, DLB_E_SHAPE, op, "%s: %lld entries, at most %lld", what, (long long)n,
               (long long)max);
  for (int64_t k = 0; k < n; k++) {
    lua_rawgeti(L, idx, (lua_Integer)k + 1);
    out[k] = integer_at(L, -1, what, op);
    lua_pop(L, 1);
  }
  return n;
}

/* dl.tile(a, reps): NumPy's tile. */
static int construct_tile(lua_State *L) {
  const char *op = "dl.tile";
  int64_t reps[DLB_MAX_NDIM], shape[DLB_MAX_NDIM];
  int nreps, nd;
  dlb_array *a, *r;
  dlb_error err;
  dlbL_check_nargs(L, 2, op);
  a = array_arg(L, 1, op);
  if (lua_isnoneornil(L, 2)) dlbL_raise(L, DLB_E_ARGUMENT, op, "dl.tile needs reps");
  nreps = (int)integers_arg(L, 2, reps, DLB_MAX_NDIM, "reps",
                            "reps is an integer or a list of integers >= 0 such as {2, 3}: "
                            "dl.tile(a, {2, 3})",
                            op);
  a = dlbL_check_live(L, 1, op); /* reading a list of reps may allocate */
  nd = a->ndim > nreps ? a->ndim : nreps;
  for (int i = 0; i < nd; i++) { /* for the reservation: errors are the core's */
    int ia = i - (nd - a->ndim), ir = i - (nd - nreps);
    int64_t rep = ir >= 0 ? (reps[ir] > 0 ? reps[ir] : 0) : 1;
    if (__builtin_mul_overflow(ia >= 0 ? a->shape[ia] : 1, rep, &shape[i])) shape[i] = INT64_MAX;
  }
  r = dlbL_push_new(L, count_of(nd, shape), dlb_array_itemsize(a), op);
  a = dlbL_check_live(L, 1, op);
  check(L, dlb_tile(a, nreps, reps, r, dlbL_state(L)->cpu, &err), &err, op);
  return 1;
}

#define REPEATS_HINT                                                                               \
  "repeats is a count or a list of counts such as {1, 2, 3}, one per element along dim"

/* dl.repeat_elements(a, repeats, dim): NumPy's repeat (a flattened without
 * dim). Protected: the counts go in a Lua allocation. */
static int repeat_unprotected(lua_State *L) {
  const char *op = "dl.repeat_elements";
  dlb_array *a, *r, *counts_array;
  int dim = 0;
  int64_t ncounts = 1, *counts;
  dlb_error err;
  if (lua_isnil(L, 3)) { /* no dim: a flattened */
    push_flat(L, 1, op);
    lua_replace(L, 1);
  }
  a = dlbL_check_live(L, 1, op);
  if (!lua_isnil(L, 3)) dim = dlbL_check_dim(L, 3, a->ndim, op);
  if ((counts_array = dlbL_to_array(L, 2)) != NULL) {
    dlb_kind k;
    counts_array = dlbL_check_live(L, 2, op);
    k = dlb_dtype_get(counts_array->dtype)->kind;
    if (counts_array->ndim > 1 || (k != DLB_KIND_INT && k != DLB_KIND_UINT))
      dlbL_raise(L, DLB_E_ARGUMENT, op,
                 "repeats as an array is 1-D of an integer dtype, got %d-D %s", counts_array->ndim,
                 dlb_dtype_get(counts_array->dtype)->name);
    ncounts = counts_array->numel;
  } else if (lua_type(L, 2) == LUA_TTABLE) {
    ncounts = (int64_t)dlbL_check_list(L, 2, "repeats", REPEATS_HINT, op);
  }
  counts = lua_newuserdatauv(L, (size_t)(ncounts ? ncounts : 1) * sizeof *counts, 0); /* 4 */
  if (counts_array) {
    counts_array = dlbL_check_live(L, 2, op); /* the allocation may have run finalizers */
    if (counts_array->numel != ncounts)
      dlbL_raise(L, DLB_E_ARGUMENT, op, "repeats changed during the call");
    check(L, dlb_array_read_into(counts_array, counts, DLB_INT64, &err), &err, op);
  } else {
    ncounts = integers_arg(L, 2, counts, ncounts, "repeats", REPEATS_HINT, op);
  }
  a = dlbL_check_live(L, 1, op);
  /* for the reservation: errors are the core's */
  r = dlbL_push_new(L, dlb_repeat_numel(a, dim, ncounts, counts), dlb_array_itemsize(a), op);
  a = dlbL_check_live(L, 1, op);
  check(L, dlb_repeat(a, dim, ncounts, counts, r, dlbL_state(L)->cpu, &err), &err, op);
  return 1;
}

static int construct_repeat_elements(lua_State *L) {
  const char *op = "dl.repeat_elements";
  dlbL_check_nargs(L, 3, op);
  array_arg(L, 1, op);
  if (lua_isnoneornil(L, 2)) dlbL_raise(L, DLB_E_ARGUMENT, op, "dl.repeat_elements needs repeats");
  lua_settop(L, 3);
  return dlbL_call_protected(L, repeat_unprotected, op);
}

/* dl.roll(a, shift, dims): NumPy's roll. */
static int construct_roll(lua_State *L) {
  const char *op = "dl.roll";
  int64_t shift[DLB_MAX_NDIM], per_dim[DLB_MAX_NDIM] = {0}, nshift, count;
  int dims[DLB_MAX_NDIM], ndims;
  dlb_array *a, *r;
  dlb_error err;
  int flat;
  dlbL_check_nargs(L, 3, op);
  a = array_arg(L, 1, op);
  if (lua_isnoneornil(L, 2)) dlbL_raise(L, DLB_E_ARGUMENT, op, "dl.roll needs a shift");
  lua_settop(L, 3);
  flat = lua_isnil(L, 3);
  nshift = integers_arg(L, 2, shift, DLB_MAX_NDIM, "shift",
                        "shift is an integer or a list of integers such as {1, -2}, one per "
                        "dim: dl.roll(a, {1, -2}, {1, 2})",
                        op);
  if (flat) {
    dims[0] = 0;
    ndims = 1;
  } else if (lua_type(L, 3) == LUA_TTABLE) { /* a list may name a dim twice (the shifts add) */
    ndims = (int)integers_arg(L, 3, per_dim, DLB_MAX_NDIM, "dims",
                              "dims is a dim or a list of dims such as {1, 2}, the third "
                              "argument itself (no options table): dl.roll(a, -6, -1)",
                              op);
    int andim = dlbL_check_live(L, 1, op)->ndim; /* after the lists' allocations */
    for (int k = 0; k < ndims; k++) {
      dlbL_push_int64(L, per_dim[k]);
      dims[k] = dlbL_check_dim(L, -1, andim, op);
      lua_pop(L, 1);
    }
    memset(per_dim, 0, sizeof per_dim);
  } else {
    dims[0] = dlbL_check_dim(L, 3, dlbL_check_live(L, 1, op)->ndim, op);
    ndims = 1;
  }
  a = dlbL_check_live(L, 1, op); /* reading the lists may have allocated */
  if (nshift != ndims && nshift != 1 && ndims != 1)
    dlbL_raise_hint(L, DLB_E_SHAPE, op, "give one shift per dim, or one shift or one dim for all",
                    "%lld shifts for %d dims", (long long)nshift, ndims);
  /* shifts and dims broadcast together, as NumPy's: an empty list rolls nothing */
  count = nshift == 1 ? ndims : nshift;
  for (int64_t k = 0; k < count; k++) {
    int d = dims[ndims == 1 ? 0 : k];
    int64_t s = shift[nshift == 1 ? 0 : k], n;
    if (flat) n = a->numel;
    else n = a->shape[d];
    if (n > 0) per_dim[d] = (per_dim[d] + s % n) % n; /* no overflow: both below n in magnitude */
  }
  if (flat) { /* a flattened (v is private: finalizers cannot reach it), rolled, reshaped */
    int ndim = a->ndim;
    int64_t shape[DLB_MAX_NDIM];
    dlb_array *v;
    memcpy(shape, a->shape, sizeof shape);
    v = push_flat(L, 1, op);
    r = dlbL_push_new(L, v->numel, dlb_array_itemsize(v), op);
    check(L, dlb_roll(v, per_dim, r, dlbL_state(L)->cpu, &err), &err, op);
    check(L, dlb_view_reshape(r, ndim, shape, &err), &err, op);
    return 1;
  }
  r = dlbL_push_new(L, a->numel, dlb_array_itemsize(a), op);
  a = dlbL_check_live(L, 1, op);
  check(L, dlb_roll(a, per_dim, r, dlbL_state(L)->cpu, &err), &err, op);
  return 1;
}

#define PAD_WIDTHS_HINT                                                                            \
  "widths is n (every side), {before, after} (every dim) or one {before, after} per dim: "         \
  "dl.pad(a, {{1, 1}, {0, 2}})"

/* A width pair from the list at idx ({n} or {before, after}). */
static void width_pair(lua_State *L, int idx, int64_t *pair, const char *op) {
  size_t n = (size_t)dlbL_check_list(L, idx, "a pair of widths", PAD_WIDTHS_HINT, op);
  if (n != 1 && n != 2)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, PAD_WIDTHS_HINT,
                    "a pair of widths has 1 or 2 entries, got %zu", n);
  for (size_t k = 0; k < 2; k++) {
    lua_rawgeti(L, idx, (lua_Integer)(k < n ? k : 0) + 1);
    pair[k] = integer_at(L, -1, "a width", op);
    lua_pop(L, 1);
  }
}

/* NumPy's pad_width forms, dims in Lua order, into widths[ndim][2]. */
static void widths_arg(lua_State *L, int idx, int ndim, int64_t (*widths)[2], const char *op) {
  int64_t pair[2];
  size_t n;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    pair[0] = pair[1] = integer_at(L, idx, "a width", op);
    for (int d = 0; d < ndim; d++) widths[d][0] = pair[0], widths[d][1] = pair[1];
    return;
  }
  if (lua_type(L, idx) != LUA_TTABLE || dlbL_to_array(L, idx))
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, PAD_WIDTHS_HINT,
                    "widths: a number or a table "
                    "expected, got %s",
                    dlbL_to_array(L, idx) ? "an array" : luaL_typename(L, idx));
  n = (size_t)dlbL_check_list(L, idx, "widths", PAD_WIDTHS_HINT, op);
  if (lua_rawgeti(L, idx, 1) != LUA_TTABLE) { /* {n} or {before, after} for every dim */
    lua_pop(L, 1);
    width_pair(L, idx, pair, op);
    for (int d = 0; d < ndim; d++) widths[d][0] = pair[0], widths[d][1] = pair[1];
    return;
  }
  lua_pop(L, 1);
  if (n != 1 && n != (size_t)ndim)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, PAD_WIDTHS_HINT,
                    "%zu pairs of widths for a %d-D array (one, or one per dim)", n, ndim);
  for (int d = 0; d < ndim; d++) {
    if (lua_rawgeti(L, idx, n == 1 ? 1 : d + 1) != LUA_TTABLE)
      dlbL_raise_hint(L, DLB_E_ARGUMENT, op, PAD_WIDTHS_HINT,
                      "pair %d of widths is a %s, not a "
                      "table",
                      d + 1, luaL_typename(L, -1));
    width_pair(L, lua_gettop(L), widths[d], op);
    lua_pop(L, 1);
  }
}

/* dl.pad(a, widths, {mode =, value =}): NumPy's pad. */
static int construct_pad(lua_State *L) {
  static const char *const keys[] = {"mode", "value", NULL};
  static const char *const modes[] = {"constant", "edge", "reflect", "symmetric", "wrap", NULL};
  const char *op = "dl.pad";
  int64_t widths[DLB_MAX_NDIM][2], shape[DLB_MAX_NDIM];
  dlb_scalar value = {.kind = DLB_SCALAR_INT, .v.i = 0};
  dlb_array *a, *r;
  dlb_error err;
  int mode;
  dlbL_check_nargs(L, 3, op);
  a = array_arg(L, 1, op);
  if (lua_isnoneornil(L, 2))
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, PAD_WIDTHS_HINT, "dl.pad needs widths");
  lua_settop(L, 3);
  widths_arg(L, 2, a->ndim, widths, op);
  dlbL_check_option_table(L, 3, keys, op);
  mode = dlbL_opt_choice(L, 3, "mode", modes, 0, op);
  if (dlbL_opt_get(L, 3, "value") != LUA_TNIL) {
    if (mode != DLB_PAD_CONSTANT)
      dlbL_raise(L, DLB_E_ARGUMENT, op, "option value is for mode \"constant\" only");
    dlbL_to_scalar(L, -1, &value, op);
  }
  lua_pop(L, 1);
  a = dlbL_check_live(L, 1, op);
  for (int d = 0; d < a->ndim; d++)
    if (__builtin_add_overflow(a->shape[d], widths[d][0] > 0 ? widths[d][0] : 0, &shape[d]) ||
        __builtin_add_overflow(shape[d], widths[d][1] > 0 ? widths[d][1] : 0, &shape[d]))
      shape[d] = INT64_MAX;
  r = dlbL_push_new(L, count_of(a->ndim, shape), dlb_array_itemsize(a), op);
  a = dlbL_check_live(L, 1, op);
  check(L,
        dlb_pad(a, (const int64_t(*)[2])widths, (dlb_pad_mode)mode, &value, r, dlbL_state(L)->cpu,
                &err),
        &err, op);
  return 1;
}

/* dl.convolve(a, v, {mode =}): NumPy's convolve of two 1-D arrays. */
static int construct_convolve(lua_State *L) {
  static const char *const keys[] = {"mode", NULL};
  static const char *const modes[] = {"full", "same", "valid", NULL};
  const char *op = "dl.convolve";
  dlb_array *a, *v, *r;
  dlb_error err;
  int mode;
  int64_t n;
  dlbL_check_nargs(L, 3, op);
  if (lua_isnoneornil(L, 1) || lua_isnoneornil(L, 2))
    dlbL_raise(L, DLB_E_ARGUMENT, op, "dl.convolve needs two arrays");
  lua_settop(L, 3);
  array_arg(L, 1, op);
  array_arg(L, 2, op);
  dlbL_check_option_table(L, 3, keys, op);
  mode = dlbL_opt_choice(L, 3, "mode", modes, 0, op);
  a = dlbL_check_live(L, 1, op);
  v = dlbL_check_live(L, 2, op);
  n = a->numel > v->numel ? a->numel : v->numel;
  r = dlbL_push_new(L, mode == DLB_CONVOLVE_FULL ? a->numel + v->numel : n,
                    dlb_dtype_get(dlb_promote_types(a->dtype, v->dtype))->itemsize, op);
  a = dlbL_check_live(L, 1, op);
  v = dlbL_check_live(L, 2, op);
  check(L, dlb_convolve(a, v, (dlb_convolve_mode)mode, r, dlbL_state(L)->cpu, &err), &err, op);
  return 1;
}

/* --- comparisons ----------------------------------------------------------------- */

/* The operand at idx: an Array (live), a number, a boolean, {re =, im =},
 * or nested tables (made into an array in place). */
static void operand_arg(lua_State *L, int idx, dlb_operand *o, const char *op) {
  o->array = NULL;
  if (dlbL_to_array(L, idx)) {
    o->array = dlbL_check_live(L, idx, op);
  } else if (lua_type(L, idx) == LUA_TNUMBER || lua_type(L, idx) == LUA_TBOOLEAN ||
             (lua_type(L, idx) == LUA_TTABLE && dlbL_is_complex(L, idx))) {
    dlbL_to_scalar(L, idx, &o->scalar, op);
  } else if (lua_type(L, idx) == LUA_TTABLE) {
    o->array = array_arg(L, idx, op);
  } else {
    dlbL_raise(L, DLB_E_ARGUMENT, op,
               "argument #%d: an array, a number or nested tables expected, got %s", idx,
               luaL_typename(L, idx));
  }
}

/* isclose of the operands at 1 and 2 with the options at 3: pushes the
 * bool array. */
static dlb_array *push_isclose(lua_State *L, const char *op) {
  static const char *const keys[] = {"rtol", "atol", "equal_nan", NULL};
  dlb_operand x, y;
  double rtol, atol;
  int equal_nan;
  dlb_array *r;
  dlb_error err;
  int64_t numel = 1;
  dlbL_check_nargs(L, 3, op);
  if (lua_isnoneornil(L, 1) || lua_isnoneornil(L, 2))
    dlbL_raise(L, DLB_E_ARGUMENT, op, "%s needs two operands", op);
  lua_settop(L, 3);
  dlbL_check_option_table(L, 3, keys, op);
  rtol = dlbL_opt_number(L, 3, "rtol", 1e-5, op);
  atol = dlbL_opt_number(L, 3, "atol", 1e-8, op);
  equal_nan = dlbL_opt_boolean(L, 3, "equal_nan", 0, op);
  operand_arg(L, 1, &x, op);
  operand_arg(L, 2, &y, op);
  if (x.array) x.array = dlbL_check_live(L, 1, op); /* reading y may have allocated */
  if (x.array) numel = x.array->numel;
  if (y.array && y.array->numel > numel) numel = y.array->numel;
  /* the bool result and, at most, three float64 temporaries live at a time */
  r = dlbL_push_new(L, numel, 1 + 3 * sizeof(double), op);
  if (x.array) x.array = dlbL_check_live(L, 1, op); /* fetched again */
  if (y.array) y.array = dlbL_check_live(L, 2, op);
  check(L, dlb_isclose(&x, &y, rtol, atol, equal_nan, r, dlbL_state(L)->cpu, &err), &err, op);
  return r;
}

/* dl.isclose(a, b, opts): NumPy's isclose, a bool array. */
static int construct_isclose(lua_State *L) {
  push_isclose(L, "dl.isclose");
  return 1;
}

/* dl.allclose(a, b, opts): whether every element is close (a boolean). */
static int construct_allclose(lua_State *L) {
  dlb_array *r = push_isclose(L, "dl.allclose");
  dlb_error err;
  int all;
  check(L, dlb_all_true(r, dlbL_state(L)->cpu, &all, &err), &err, "dl.allclose");
  dlb_array_release(r);
  lua_pushboolean(L, all);
  return 1;
}

/* dl.array_equal(a, b, {equal_nan =}): same shape and elements (a boolean). */
static int construct_array_equal(lua_State *L) {
  static const char *const keys[] = {"equal_nan", NULL};
  const char *op = "dl.array_equal";
  int equal_nan, equal;
  dlb_error err;
  dlbL_check_nargs(L, 3, op);
  if (lua_isnoneornil(L, 1) || lua_isnoneornil(L, 2))
    dlbL_raise(L, DLB_E_ARGUMENT, op, "dl.array_equal needs two arrays");
  lua_settop(L, 3);
  dlbL_check_option_table(L, 3, keys, op);
  equal_nan = dlbL_opt_boolean(L, 3, "equal_nan", 0, op);
  array_arg(L, 1, op);
  array_arg(L, 2, op);
  dlbL_reserve(L, dlbL_check_live(L, 1, op)->numel, 3); /* the bool temporaries */
  check(L,
        dlb_array_equal(dlbL_check_live(L, 1, op), dlbL_check_live(L, 2, op), equal_nan, &equal,
                        dlbL_state(L)->cpu, &err),
        &err, op);
  lua_pushboolean(L, equal);
  return 1;
}

const luaL_Reg dlbL_construct_methods[] = {{"flatten", construct_flatten},
                                           {"ravel", construct_ravel},
                                           {"item", construct_item},
                                           {NULL, NULL}};

const luaL_Reg dlbL_construct_functions[] = {{"eye", construct_eye},
                                             {"identity", construct_identity},
                                             {"zeros_like", construct_zeros_like},
                                             {"ones_like", construct_ones_like},
                                             {"empty_like", construct_empty_like},
                                             {"full_like", construct_full_like},
                                             {"logspace", construct_logspace},
                                             {"meshgrid", construct_meshgrid},
                                             {"tile", construct_tile},
                                             {"repeat_elements", construct_repeat_elements},
                                             {"roll", construct_roll},
                                             {"flip", construct_flip},
                                             {"pad", construct_pad},
                                             {"convolve", construct_convolve},
                                             {"isclose", construct_isclose},
                                             {"allclose", construct_allclose},
                                             {"array_equal", construct_array_equal},
                                             {NULL, NULL}};
