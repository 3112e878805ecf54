/* convert.c -- Lua values <-> elements, and argument checks shared by the binding. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

int dlbL_is_complex(lua_State *L, int idx) {
  int top = lua_gettop(L), found;
  if (lua_type(L, idx) != LUA_TTABLE) return 0;
  idx = lua_absindex(L, idx);
  /* Raw reads: a value's metamethods never run inside a conversion. */
  lua_pushliteral(L, "re");
  found = lua_rawget(L, idx) != LUA_TNIL;
  if (!found) {
    lua_pushliteral(L, "im");
    found = lua_rawget(L, idx) != LUA_TNIL;
  }
  lua_settop(L, top);
  return found;
}

/* The number field k of the complex table at idx, or a VALUE error. */
static double complex_part(lua_State *L, int idx, const char *k, const char *op) {
  int isnum;
  double x;
  lua_pushstring(L, k);
  lua_rawget(L, idx);
  x = lua_tonumberx(L, -1, &isnum);
  if (!isnum && !lua_isnil(L, -1))
    dlbL_raise(L, DLB_E_VALUE, op, "complex part '%s' must be a number, got %s", k,
               luaL_typename(L, -1));
  lua_pop(L, 1);
  return isnum ? x : 0.0;
}

void dlbL_to_scalar(lua_State *L, int idx, dlb_scalar *out, const char *op) {
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
      if (dlbL_isinteger(L, idx)) {
        out->kind = DLB_SCALAR_INT;
        out->v.i = (int64_t)dlbL_tointeger(L, idx);
      } else {
        out->kind = DLB_SCALAR_FLOAT;
        out->v.f = (double)lua_tonumber(L, idx);
      }
      return;
    case LUA_TBOOLEAN:
      out->kind = DLB_SCALAR_BOOL;
      out->v.b = lua_toboolean(L, idx);
      return;
    case LUA_TTABLE:
      if (dlbL_is_complex(L, idx)) {
        idx = lua_absindex(L, idx);
        out->kind = DLB_SCALAR_COMPLEX;
        out->v.c.re = complex_part(L, idx, "re", op);
        out->v.c.im = complex_part(L, idx, "im", op);
        return;
      }
      break;
    default:
      if (dlbL_cdata_integer(L, idx, out)) return; /* LuaJIT: 1LL */
      break;
  }
  dlbL_raise(L, DLB_E_VALUE, op, "expected an element value (number, boolean, {re=, im=}), got %s",
             luaL_typename(L, idx));
}

/* complex_table(re, im): {re = re, im = im} (run in protected mode). */
static int complex_table(lua_State *L) {
  lua_createtable(L, 0, 2);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "re");
  lua_pushvalue(L, 2);
  lua_setfield(L, -2, "im");
  return 1;
}

void dlbL_push_scalar(lua_State *L, const dlb_scalar *v) {
  switch (v->kind) {
    case DLB_SCALAR_BOOL: lua_pushboolean(L, v->v.b); break;
    case DLB_SCALAR_INT: dlbL_push_int64(L, v->v.i); break;
    case DLB_SCALAR_UINT: dlbL_push_uint64(L, v->v.u); break;
    case DLB_SCALAR_FLOAT: lua_pushnumber(L, (lua_Number)v->v.f); break;
    case DLB_SCALAR_COMPLEX: {
      int extra = dlbL_push_callee(L, complex_table);
      lua_pushnumber(L, v->v.c.re);
      lua_pushnumber(L, v->v.c.im);
      dlbL_pcall(L, 2 + extra, 1, "dlbridge");
    } break;
  }
}

dlb_dtype dlbL_check_dtype(lua_State *L, int idx, const char *op) {
  size_t len;
  const char *name;
  dlb_dtype dtype;
  if (lua_type(L, idx) != LUA_TSTRING)
    dlbL_raise(L, DLB_E_DTYPE, op, "a dtype is a string such as \"float32\", got %s",
               luaL_typename(L, idx));
  name = lua_tolstring(L, idx, &len);
  if (dlb_dtype_from_name(name, len, &dtype) != 0)
    dlbL_raise(L, DLB_E_DTYPE, op, "unknown dtype \"%.40s\"", name);
  return dtype;
}

/* An integer-valued number at idx; ok is 0 for floats with a fraction, NaN, inf. */
static int64_t integer_at(lua_State *L, int idx, int *ok) {
  int isint;
  lua_Integer n = dlbL_tointegerx(L, idx, &isint);
  *ok = isint && lua_type(L, idx) == LUA_TNUMBER;
  return (int64_t)n;
}

#define LIST_HINT "a list is a table with keys 1..n and no holes, such as {1, 2}"

/* Raises ARGUMENT for the table at idx, which is no list: got says what it
 * holds instead. */
static void not_a_list(lua_State *L, const char *what, const char *hint, const char *op,
                       const char *got) __attribute__((noreturn));
static void not_a_list(lua_State *L, const char *what, const char *hint, const char *op,
                       const char *got) {
  dlbL_raise_hint(L, DLB_E_ARGUMENT, op, hint ? hint : LIST_HINT,
                  "%s must be a list (keys 1..n, no holes), got a table with %s", what, got);
}

/* The first i in 1..n where the table at idx has no value (raw). */
static lua_Integer first_hole(lua_State *L, int idx, lua_Integer n) {
  lua_Integer i = 1;
  for (; i <= n; i++) {
    int t = lua_rawgeti(L, idx, i);
    lua_pop(L, 1);
    if (t == LUA_TNIL) break;
  }
  return i;
}

int dlbL_has_n_keys(lua_State *L, int idx, lua_Integer n) {
  lua_Integer count = 0;
  idx = lua_absindex(L, idx);
  luaL_checkstack(L, 2, "list");
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    if (++count > n) {
      lua_pop(L, 1);
      return 0;
    }
  }
  return count == n;
}

lua_Integer dlbL_list_length(lua_State *L, int idx) {
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
  /* One quick pass: n keys, and t[1..n] all set. */
  return dlbL_has_n_keys(L, idx, n) && first_hole(L, idx, n) > n ? n : -1;
}

lua_Integer dlbL_check_list(lua_State *L, int idx, const char *what, const char *hint,
                            const char *op) {
  lua_Integer n, count = 0;
  char got[96];
  idx = lua_absindex(L, idx);
  if ((n = dlbL_list_length(L, idx)) >= 0) return n;
  n = (lua_Integer)lua_rawlen(L, idx);
  luaL_checkstack(L, 3, "list");
  /* Which key is wrong: n is a border (t[n] set, t[n + 1] nil), so the keys
   * are exactly 1..n when every key lies in 1..n and there are n of them. */
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    int isint = dlbL_isinteger(L, -2);
    lua_Integer k = isint ? dlbL_tointeger(L, -2) : 0;
    lua_pop(L, 1);
    if (isint && k >= 1 && k <= n) {
      count++;
      continue;
    }
    if (isint && k < 1) snprintf(got, sizeof got, "the key %lld (lists start at 1)", (long long)k);
    else if (isint)
      snprintf(got, sizeof got, "a hole at %lld (before the key %lld)",
               (long long)first_hole(L, idx, k), (long long)k);
    else if (lua_type(L, -1) == LUA_TSTRING)
      snprintf(got, sizeof got, "the key \"%.40s\"", lua_tostring(L, -1));
    else if (lua_type(L, -1) == LUA_TNUMBER)
      snprintf(got, sizeof got, "the key %g", (double)lua_tonumber(L, -1));
    else snprintf(got, sizeof got, "a %s key", luaL_typename(L, -1));
    not_a_list(L, what, hint, op, got);
  }
  if (count != n) {
    snprintf(got, sizeof got, "a hole at %lld", (long long)first_hole(L, idx, n));
    not_a_list(L, what, hint, op, got);
  }
  return n;
}

/* How the shape-taking function op is called, as an ARGUMENT hint: the
 * table form and the integers form (or one integer, for dl.full, whose
 * shape is followed by a value), with options last for dl.* functions. */
static const char *shape_hint(const char *op, char *buf, size_t size) {
  char call[48];
  int method = strncmp(op, "Array:", 6) == 0;
  snprintf(call, sizeof call, "%s%s", method ? "a:" : "", method ? op + 6 : op);
  if (strcmp(op, "dl.full") == 0)
    snprintf(buf, size,
             "a shape is a table of integers, e.g. dl.full({2, 3}, 7), or one "
             "integer, e.g. dl.full(5, 7)");
  else if (strcmp(op, "dl.frombytes") == 0)
    snprintf(buf, size,
             "a shape is a table of integers, e.g. dl.frombytes(s, \"uint8\", {2, 3}), "
             "or integers, e.g. dl.frombytes(s, \"uint8\", 2, 3)");
  else
    snprintf(buf, size,
             "a shape is a table of integers, e.g. %s{2, 3}, or integers, e.g. "
             "%s(2, 3)%s%s%s",
             call, call, method ? "" : "; options follow in their own table: ", method ? "" : call,
             method ? "" : "(2, 3, {dtype = \"int32\"})");
  return buf;
}

/* Raises ARGUMENT for a shape argument, with shape_hint. */
static void bad_shape_argument(lua_State *L, const char *op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
static void bad_shape_argument(lua_State *L, const char *op, const char *fmt, ...) {
  char hint[320], message[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  dlbL_raise_hint(L, DLB_E_ARGUMENT, op, shape_hint(op, hint, sizeof hint), "%s", message);
}

/* One shape entry: an integer >= 0, or -1 when allowed. */
static int64_t shape_entry(lua_State *L, int idx, int dim, int allow_minus_one, const char *op) {
  int ok;
  int64_t n;
  if (lua_type(L, idx) != LUA_TNUMBER)
    bad_shape_argument(L, op, "shape entry %d must be an integer, got %s", dim,
                       luaL_typename(L, idx));
  n = integer_at(L, idx, &ok);
  if (!ok) dlbL_raise(L, DLB_E_SHAPE, op, "shape entry %d is not an integer", dim);
  if (n < 0 && !(n == -1 && allow_minus_one))
    dlbL_raise(L, DLB_E_SHAPE, op, "shape entry %d is negative (%lld)", dim, (long long)n);
  return n;
}

/* The shape table at idx. */
static int shape_table(lua_State *L, int idx, int64_t *shape, int allow_minus_one, const char *op) {
  char hint[320];
  /* Every key must be one of 1..n: {2, dtype = "int32"} is a misplaced option.
   * The hint is written only for the error. */
  lua_Integer n = dlbL_list_length(L, idx);
  if (n < 0) n = dlbL_check_list(L, idx, "a shape table", shape_hint(op, hint, sizeof hint), op);
  if (n > DLB_MAX_NDIM)
    dlbL_raise(L, DLB_E_SHAPE, op, "%lld dimensions (at most %d)", (long long)n, DLB_MAX_NDIM);
  for (int d = 0; d < (int)n; d++) {
    lua_rawgeti(L, idx, d + 1);
    shape[d] = shape_entry(L, -1, d + 1, allow_minus_one, op);
    lua_pop(L, 1);
  }
  return (int)n;
}

int dlbL_check_shape(lua_State *L, int idx, int64_t *shape, int allow_minus_one, const char *op) {
  if (lua_type(L, idx) == LUA_TNUMBER) {
    shape[0] = shape_entry(L, idx, 1, allow_minus_one, op);
    return 1;
  }
  if (lua_type(L, idx) != LUA_TTABLE)
    bad_shape_argument(L, op,
                       "argument #%d: a shape (a table of integers or one integer) "
                       "expected, got %s",
                       idx, luaL_typename(L, idx));
  return shape_table(L, lua_absindex(L, idx), shape, allow_minus_one, op);
}

int dlbL_check_shape_args(lua_State *L, int idx, int64_t *shape, int allow_minus_one, int *next,
                          const char *op) {
  int ndim = 0, top = lua_gettop(L);
  if (lua_type(L, idx) == LUA_TTABLE) {
    ndim = shape_table(L, idx, shape, allow_minus_one, op);
    if (!next) dlbL_check_nargs(L, idx, op);
    else *next = idx + 1;
    return ndim;
  }
  if (lua_type(L, idx) != LUA_TNUMBER)
    bad_shape_argument(L, op,
                       "argument #%d: a shape (a table of integers, or integers) "
                       "expected, got %s",
                       idx, luaL_typename(L, idx));
  for (; idx + ndim <= top && lua_type(L, idx + ndim) == LUA_TNUMBER; ndim++) {
    if (ndim == DLB_MAX_NDIM)
      dlbL_raise(L, DLB_E_SHAPE, op, "more than %d dimensions", DLB_MAX_NDIM);
    shape[ndim] = shape_entry(L, idx + ndim, ndim + 1, allow_minus_one, op);
  }
  /* Nothing may follow the shape: whatever does is one more entry gone wrong. */
  if (!next && idx + ndim <= top)
    bad_shape_argument(L, op, "shape entry %d must be an integer, got %s", ndim + 1,
                       luaL_typename(L, idx + ndim));
  if (next) *next = idx + ndim;
  return ndim;
}

void dlbL_check_options_after_shape(lua_State *L, int idx, dlbL_options *opts, const char *op) {
  if (!lua_isnoneornil(L, idx) && lua_type(L, idx) != LUA_TTABLE)
    bad_shape_argument(L, op, "argument #%d: an options table expected after the shape, got %s",
                       idx, luaL_typename(L, idx));
  dlbL_check_options(L, idx, opts, op);
}

int dlbL_check_dim(lua_State *L, int idx, int ndim, const char *op) {
  int ok;
  int64_t d;
  if (lua_type(L, idx) != LUA_TNUMBER)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                    "a dimension is an integer, 1 the first and -1 the last: a:sum(-1)",
                    "a dimension is an integer, got %s", luaL_typename(L, idx));
  d = dlbL_tointegerx(L, idx, &ok); /* a number (checked above) */
  if (!ok) dlbL_raise(L, DLB_E_INDEX, op, "a dimension must be an integer");
  if (d < 0) d += ndim + 1;
  if (d < 1 || d > ndim)
    dlbL_raise(L, DLB_E_INDEX, op, "dimension %lld out of range for a %d-D array",
               (long long)integer_at(L, idx, &ok), ndim);
  return (int)(d - 1);
}

int64_t dlbL_check_index(lua_State *L, int idx, int64_t extent, const char *op) {
  int ok;
  int64_t i, given;
  if (lua_type(L, idx) != LUA_TNUMBER)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                    "an index is an integer, 1 the first and -1 the last: a[1], a:get(-1, 2)",
                    "an index is an integer, got %s", luaL_typename(L, idx));
  given = i = dlbL_tointegerx(L, idx, &ok); /* a number (checked above) */
  if (!ok) dlbL_raise(L, DLB_E_INDEX, op, "an index must be an integer");
  /* -1 is the last element; written so that nothing overflows for any extent. */
  if (i < 0 && i >= -extent) i = extent + i + 1;
  if (i < 1 || i > extent) {
    if (given == 0) dlbL_raise(L, DLB_E_INDEX, op, "index 0: indices are 1-based");
    dlbL_raise(L, DLB_E_INDEX, op, "index %lld out of range for extent %lld", (long long)given,
               (long long)extent);
  }
  return i - 1;
}

void dlbL_check_device(lua_State *L, int idx, dlbL_options *opts, const char *op) {
  size_t len;
  dlb_error err;
  const char *name;
  if (lua_type(L, idx) != LUA_TSTRING)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                    "a device is a string: \"cpu\", or \"name:id\" such as \"cpu:0\"; "
                    "dl.backends() lists the backends",
                    "device must be a string such as \"cpu\", got %s", luaL_typename(L, idx));
  name = lua_tolstring(L, idx, &len);
  if (dlb_registry_parse_device(dlbL_state(L)->registry, name, len, &opts->backend,
                                &opts->device_id, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
}
