/* create.c -- module functions that make new arrays. */
#include <math.h>
#include <string.h>
#include "../compute/construct.h"
#include "../core/shape.h"
#include "internal.h"

/* Replaces the cpu array on top of the stack by a copy on opts' device
 * (nothing to do when that is the cpu). */
static void move_to_target(lua_State *L, const dlbL_options *opts, const char *op) {
  dlb_array *src = dlbL_to_array(L, -1), *dst;
  dlb_error err;
  if (src->buffer->backend == opts->backend && src->buffer->device_id == opts->device_id) return;
  dst = dlbL_push_empty(L, op);
  src = dlbL_to_array(L, -2); /* fetched again after an allocation (records.c) */
  dlbL_reserve(L, src->numel, dlb_array_itemsize(src));
  src = dlbL_to_array(L, -2);
  if (dlb_array_clone_to(dst, src, opts->backend, opts->device_id, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  dlb_array_release(src);
  lua_remove(L, -2);
}

/* Fills a with v or raises (VALUE for a value the dtype cannot hold). */
static void fill_or_raise(lua_State *L, dlb_array *a, const dlb_scalar *v, const char *op) {
  dlb_error err;
  if (dlb_array_fill(a, v, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
}

/* dl.zeros(shape, opts) / dl.empty(shape, opts) / dl.ones(shape, opts);
 * the shape is one table or integers: dl.zeros{2, 3}, dl.zeros(2, 3, opts). */
static int make_filled(lua_State *L, int zeroed, int one, const char *op) {
  int64_t shape[DLB_MAX_NDIM];
  dlbL_options opts;
  int next, ndim = dlbL_check_shape_args(L, 1, shape, 0, &next, op);
  dlb_array *a;
  dlbL_check_options_after_shape(L, next, &opts, op);
  dlbL_check_nargs(L, next, op);
  a = dlbL_push_allocated(L, &opts, opts.dtype, ndim, shape, zeroed, op);
  if (one) {
    dlb_scalar v = {.kind = DLB_SCALAR_INT, .v.i = 1};
    fill_or_raise(L, a, &v, op);
  }
  return 1;
}

static int create_zeros(lua_State *L) { return make_filled(L, 1, 0, "dl.zeros"); }
static int create_ones(lua_State *L) { return make_filled(L, 0, 1, "dl.ones"); }
static int create_empty(lua_State *L) { return make_filled(L, 0, 0, "dl.empty"); }

/* The dtype NumPy infers for one scalar. */
static dlb_dtype dtype_of_scalar(const dlb_scalar *v) {
  switch (v->kind) {
    case DLB_SCALAR_BOOL: return DLB_BOOL;
    case DLB_SCALAR_INT: return DLB_INT64;
    case DLB_SCALAR_UINT: return DLB_UINT64;
    case DLB_SCALAR_COMPLEX: return DLB_COMPLEX128;
    default: return DLB_FLOAT64;
  }
}

/* dl.full(shape, value, opts): dtype inferred from value unless given. The
 * shape is one table or one integer (the value follows it, so dl.full(2, 3, 7)
 * cannot mean shape {2, 3}). */
static int create_full(lua_State *L) {
  int64_t shape[DLB_MAX_NDIM];
  dlbL_options opts;
  dlb_scalar v;
  int ndim = dlbL_check_shape(L, 1, shape, 0, "dl.full");
  dlb_array *a;
  dlbL_to_scalar(L, 2, &v, "dl.full");
  if (!lua_isnoneornil(L, 3) && lua_type(L, 3) != LUA_TTABLE)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "dl.full",
                    "dl.full(shape, value, opts): a shape of several dimensions is one table, "
                    "dl.full({2, 3}, 7); options are a table, {dtype = \"int32\"}",
                    "argument #3: an options table expected, got %s", luaL_typename(L, 3));
  dlbL_check_options(L, 3, &opts, "dl.full");
  dlbL_check_nargs(L, 3, "dl.full");
  a = dlbL_push_allocated(L, &opts, opts.has_dtype ? opts.dtype : dtype_of_scalar(&v), ndim, shape,
                          0, "dl.full");
  fill_or_raise(L, a, &v, "dl.full");
  return 1;
}

/* dl.array(data, opts): nested tables, a scalar, or another array (copied). */
static int array_unprotected(lua_State *L) {
  dlbL_options opts;
  dlb_array *src;
  dlb_error err;
  if (lua_isnoneornil(L, 1))
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "dl.array",
                    "data is nested tables, e.g. dl.array{{1, 2}, {3, 4}}, a number, or an array",
                    "dl.array(data, opts) needs data");
  dlbL_check_options(L, 2, &opts, "dl.array");
  src = dlbL_to_array(L, 1);
  if (src) {
    int64_t shape[DLB_MAX_NDIM];
    int ndim = src->ndim;
    dlb_array *c;
    if (!src->buffer) dlbL_raise(L, DLB_E_DELETED, "dl.array", "the source array was deleted");
    memcpy(shape, src->shape, (size_t)ndim * sizeof *shape);
    c = dlbL_push_allocated(L, &opts, opts.has_dtype ? opts.dtype : src->dtype, ndim, shape, 0,
                            "dl.array");
    src = dlbL_to_array(L, 1);
    if (!src->buffer) /* a finalizer run by the allocation deleted it */
      dlbL_raise(L, DLB_E_DELETED, "dl.array", "the source array was deleted");
    if (dlb_array_copy_into(c, src, &err) != DLB_OK) dlbL_raise_error(L, &err, "dl.array");
    return 1;
  }
  dlbL_array_from_lua(L, 1, opts.has_dtype, opts.dtype, "dl.array");
  move_to_target(L, &opts, "dl.array");
  return 1;
}

/* Protected: walking the tables allocates (a memory error becomes OUT_OF_MEMORY). */
static int create_array(lua_State *L) {
  dlbL_check_nargs(L, 2, "dl.array");
  return dlbL_call_protected(L, array_unprotected, "dl.array");
}

/* Collects the leading number arguments of arange/linspace and the options
 * table after them; returns how many numbers there were. */
static int number_args(lua_State *L, int max, const char *op) {
  int n = 0, top = lua_gettop(L);
  while (n < top && lua_type(L, n + 1) == LUA_TNUMBER) n++;
  if (n == 0)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "argument #1: a number expected, got %s",
               luaL_typename(L, 1));
  if (n > max) dlbL_extra_argument(L, max, op);
  if (top > n && !lua_istable(L, n + 1) && !lua_isnil(L, n + 1))
    dlbL_raise(L, DLB_E_ARGUMENT, op, "argument #%d: a number or an options table expected, got %s",
               n + 1, luaL_typename(L, n + 1));
  dlbL_check_nargs(L, n + 1, op);
  return n;
}

#define STEP_HINT "the step is a non-zero number; a negative one counts down: dl.arange(5, 0, -1)"

/* A finite number argument or a VALUE error. */
static double finite_arg(lua_State *L, int idx, const char *op) {
  double x = (double)lua_tonumber(L, idx);
  if (!isfinite(x)) dlbL_raise(L, DLB_E_VALUE, op, "argument %d must be finite", idx);
  return x;
}

/* Pushes the empty result of a sequence of n elements of dtype on opts'
 * device and makes room for it (twice over on another device: it is
 * computed in a cpu array copied over). The fill is the compute layer's
 * (src/compute/construct.c), bounded by the host's work limit and
 * interrupt. */
static dlb_array *push_sequence(lua_State *L, const dlbL_options *opts, dlb_dtype dtype, int64_t n,
                                const char *op) {
  dlb_array *a = dlbL_push_empty(L, op);
  size_t item = dlb_dtype_get(dtype)->itemsize;
  dlbL_reserve(L, n, opts->backend == dlbL_state(L)->cpu ? item : 2 * item);
  return a;
}

/* Raises the error of a sequence fill that failed. */
static void check_fill(lua_State *L, dlb_status st, const dlb_error *err, const char *op) {
  if (st != DLB_OK) dlbL_raise_error(L, err, op);
}

/* dl.arange(stop), (start, stop), (start, stop, step), each + opts:
 * start, start+step, ... below stop (half-open, as NumPy). Integer arguments
 * give int64, any float gives float64, unless opts.dtype says otherwise. */
static int create_arange(lua_State *L) {
  int n = number_args(L, 3, "dl.arange"), all_int = 1;
  dlbL_options opts;
  int64_t count = 0;
  dlb_array *a;
  dlb_dtype dtype;
  dlb_error err;
  for (int k = 1; k <= n; k++) all_int = all_int && dlbL_isinteger(L, k);
  dlbL_check_options(L, n + 1, &opts, "dl.arange");
  if (all_int) {
    int64_t start = n >= 2 ? (int64_t)dlbL_tointeger(L, 1) : 0;
    int64_t stop = dlbL_tointeger(L, n >= 2 ? 2 : 1);
    int64_t step = n == 3 ? (int64_t)dlbL_tointeger(L, 3) : 1, span;
    if (step == 0)
      dlbL_raise_hint(L, DLB_E_ARGUMENT, "dl.arange", STEP_HINT, "the step cannot be 0");
    if (__builtin_sub_overflow(stop, start, &span))
      dlbL_raise(L, DLB_E_SHAPE, "dl.arange", "the range overflows int64");
    if ((span > 0 && step > 0) || (span < 0 && step < 0)) {
      /* ceil(span / step) on magnitudes: INT64_MIN / -1 would trap. */
      uint64_t uspan = span > 0 ? (uint64_t)span : -(uint64_t)span;
      uint64_t ustep = step > 0 ? (uint64_t)step : -(uint64_t)step;
      uint64_t ucount = (uspan - 1) / ustep + 1;
      if (ucount > (uint64_t)INT64_MAX)
        dlbL_raise(L, DLB_E_SHAPE, "dl.arange", "the range has too many elements");
      count = (int64_t)ucount;
    }
    dtype = opts.has_dtype ? opts.dtype : DLB_INT64;
    a = push_sequence(L, &opts, dtype, count, "dl.arange");
    check_fill(L,
               dlb_arange_int(a, opts.backend, opts.device_id, dtype, start, step, count,
                              dlbL_state(L)->cpu, &err),
               &err, "dl.arange");
  } else {
    double start = n >= 2 ? finite_arg(L, 1, "dl.arange") : 0.0;
    double stop = finite_arg(L, n >= 2 ? 2 : 1, "dl.arange");
    double step = n == 3 ? finite_arg(L, 3, "dl.arange") : 1.0;
    double c;
    if (step == 0)
      dlbL_raise_hint(L, DLB_E_ARGUMENT, "dl.arange", STEP_HINT, "the step cannot be 0");
    c = ceil((stop - start) / step);
    if (!(c < 9.0e18)) dlbL_raise(L, DLB_E_SHAPE, "dl.arange", "the range has too many elements");
    count = c > 0 ? (int64_t)c : 0;
    dtype = opts.has_dtype ? opts.dtype : DLB_FLOAT64;
    a = push_sequence(L, &opts, dtype, count, "dl.arange");
    check_fill(L,
               dlb_arange_float(a, opts.backend, opts.device_id, dtype, start, step, count,
                                dlbL_state(L)->cpu, &err),
               &err, "dl.arange");
  }
  return 1;
}

/* dl.linspace(start, stop, num = 50, opts): num evenly spaced values from
 * start to stop inclusive, float64 unless opts.dtype says otherwise. */
static int create_linspace(lua_State *L) {
  int n = number_args(L, 3, "dl.linspace"), isint;
  dlbL_options opts;
  double start, stop;
  int64_t num = 50;
  dlb_array *a;
  dlb_dtype dtype;
  dlb_error err;
  if (n < 2)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "dl.linspace",
                    "dl.linspace(0, 1, 5) is 0, 0.25, 0.5, 0.75, 1: start and stop, then the count",
                    "dl.linspace(start, stop, num) needs start and stop");
  start = finite_arg(L, 1, "dl.linspace");
  stop = finite_arg(L, 2, "dl.linspace");
  if (n == 3) {
    num = (int64_t)dlbL_tointegerx(L, 3, &isint);
    if (!isint || num < 0) dlbL_raise(L, DLB_E_SHAPE, "dl.linspace", "num must be an integer >= 0");
  }
  dlbL_check_options(L, n + 1, &opts, "dl.linspace");
  dtype = opts.has_dtype ? opts.dtype : DLB_FLOAT64;
  a = push_sequence(L, &opts, dtype, num, "dl.linspace");
  check_fill(L,
             dlb_linspace(a, opts.backend, opts.device_id, dtype, start, stop, num,
                          dlbL_state(L)->cpu, &err),
             &err, "dl.linspace");
  return 1;
}

/* dl.frombytes(s, dtype, shape, opts): a copy of raw bytes (row-major); the
 * shape is one table, integers, or nil (as many elements as s holds). */
static int create_frombytes(lua_State *L) {
  size_t len;
  const char *s;
  int64_t shape[DLB_MAX_NDIM], numel;
  int ndim = 1;
  dlb_dtype dtype;
  size_t item;
  dlb_array *a;
  dlbL_options opts;
  dlb_error err;
  int next = 4;
  if (lua_type(L, 1) != LUA_TSTRING)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "dl.frombytes",
                    "s is a string of raw bytes, such as a:tobytes() or a file's contents "
                    "(io.open(path, \"rb\"):read(\"a\"))",
                    "dl.frombytes(s, dtype, shape) takes a string, got %s", luaL_typename(L, 1));
  s = lua_tolstring(L, 1, &len);
  dtype = dlbL_check_dtype(L, 2, "dl.frombytes");
  item = dlb_dtype_get(dtype)->itemsize;
  if (lua_isnoneornil(L, 3)) {
    if (len % item != 0)
      dlbL_raise(L, DLB_E_SHAPE, "dl.frombytes", "%zu bytes are not a whole number of %s elements",
                 len, dlb_dtype_get(dtype)->name);
    shape[0] = (int64_t)(len / item);
  } else {
    ndim = dlbL_check_shape_args(L, 3, shape, 0, &next, "dl.frombytes");
  }
  if (!lua_isnoneornil(L, next) && lua_type(L, next) != LUA_TTABLE)
    dlbL_check_options_after_shape(L, next, &opts, "dl.frombytes");
  dlbL_check_nargs(L, next, "dl.frombytes");
  if (dlb_shape_numel(ndim, shape, &numel, &err) != DLB_OK)
    dlbL_raise_error(L, &err, "dl.frombytes");
  if ((uint64_t)numel != len / item || len % item != 0)
    dlbL_raise(L, DLB_E_SHAPE, "dl.frombytes", "%zu bytes do not hold %lld %s elements", len,
               (long long)numel, dlb_dtype_get(dtype)->name);
  dlbL_check_options(L, next, &opts, "dl.frombytes");
  if (opts.has_dtype) /* the dtype is the second argument: a second one would be ignored */
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "dl.frombytes",
                    "the dtype is the second argument, dl.frombytes(s, \"int16\", shape); "
                    "opts takes only device",
                    "dl.frombytes takes its dtype as argument #2, not in opts");
  a = dlbL_push_new(L, numel, item, "dl.frombytes");
  /* s stays on the stack (argument #1) while the bytes are copied; a bool
   * element is the byte 0 or 1, checked by the fill */
  if (dlb_frombytes(a, opts.backend, opts.device_id, dtype, ndim, shape, s, &err) != DLB_OK)
    dlbL_raise_error(L, &err, "dl.frombytes");
  return 1;
}

const luaL_Reg dlbL_create_functions[] = {
    {"array", create_array},       {"zeros", create_zeros},         {"ones", create_ones},
    {"empty", create_empty},       {"full", create_full},           {"arange", create_arange},
    {"linspace", create_linspace}, {"frombytes", create_frombytes}, {NULL, NULL}};
