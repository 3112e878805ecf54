/* vecmath.c -- dl.cross, dl.outer, dl.norm, dl.einsum and dl.interp. The
 * work is in src/compute/vecmath.c and einsum.c; here the arguments are
 * read and the result pushed: a 0-d result as a Lua value, as NumPy
 * returns a scalar. */
#include <math.h>
#include <string.h>
#include "../compute/einsum.h"
#include "../compute/vecmath.h"
#include "internal.h"

/* Pushes the result r (now owned by the userdata ud, on the stack top):
 * a 0-d one is replaced by its value. */
static void push_result(lua_State *L, dlb_array *ud, const dlb_array *r) {
  *ud = *r;
  if (ud->ndim == 0 && ud->buffer && ud->buffer->host) {
    dlb_scalar v;
    dlb_scalar_load(ud->dtype, dlb_array_host_data(ud), &v);
    dlb_array_release(ud);
    lua_pop(L, 1);
    dlbL_push_scalar(L, &v);
  }
}

/* The operands at 1..n: Arrays, or numbers and nested tables made into
 * (float64 for numbers) arrays in their place. */
static void operands(lua_State *L, int first, int n, const char *op) {
  for (int k = first; k < first + n; k++) {
    if (lua_isnoneornil(L, k))
      dlbL_raise(L, DLB_E_ARGUMENT, op, "argument #%d: an array expected, got %s", k,
                 luaL_typename(L, k));
    dlbL_check_array_like(L, k, 0, DLB_FLOAT64, op);
  }
}

/* Bytes to make room for: the operands' together (the results are of that order). */
static void reserve_like(lua_State *L, int first, int n, const char *op) {
  int64_t total = 0;
  for (int k = first; k < first + n; k++) {
    dlb_array *a = dlbL_check_live(L, k, op);
    int64_t bytes = a->numel * (int64_t)dlb_array_itemsize(a);
    if (__builtin_add_overflow(total, bytes, &total)) total = INT64_MAX;
  }
  dlbL_reserve(L, total, 1);
}

typedef dlb_status (*binary_fn)(const dlb_array *, const dlb_array *, dlb_array *, dlb_backend *,
                                dlb_error *);

/* f(a, b) with a and b at 1 and 2: pushes the new result. */
static int binary(lua_State *L, binary_fn f, const char *op) {
  dlb_array *ud, r;
  dlb_error err;
  dlbL_check_nargs(L, 2, op);
  lua_settop(L, 2);
  operands(L, 1, 2, op);
  ud = dlbL_push_empty(L, op);
  reserve_like(L, 1, 2, op);
  if (f(dlbL_check_live(L, 1, op), dlbL_check_live(L, 2, op), &r, dlbL_state(L)->cpu, &err) !=
      DLB_OK)
    dlbL_raise_error(L, &err, op);
  push_result(L, ud, &r);
  return 1;
}

/* dl.cross(a, b): np.cross along the last dim. */
static int vecmath_cross(lua_State *L) { return binary(L, dlb_cross, "dl.cross"); }

/* dl.outer(a, b): np.outer. */
static int vecmath_outer(lua_State *L) { return binary(L, dlb_outer, "dl.outer"); }

/* norm's ord at idx of the options table: a number or "fro" / "nuc". */
static void norm_ord(lua_State *L, int idx, dlb_norm_args *x, const char *op) {
  int t = dlbL_opt_get(L, idx, "ord");
  if (t == LUA_TNUMBER) {
    x->kind = DLB_NORM_NUMBER;
    x->p = (double)lua_tonumber(L, -1);
  } else if (t == LUA_TSTRING) {
    const char *s = lua_tostring(L, -1);
    if (strcmp(s, "fro") == 0 || strcmp(s, "f") == 0) x->kind = DLB_NORM_FRO;
    else if (strcmp(s, "nuc") == 0) x->kind = DLB_NORM_NUC;
    else
      dlbL_raise_hint(L, DLB_E_VALUE, op, "ord is a number (math.huge for inf), \"fro\" or \"nuc\"",
                      "invalid norm order \"%s\"", s);
  } else if (t != LUA_TNIL) {
    dlbL_raise(L, DLB_E_ARGUMENT, op, "option ord must be a number, \"fro\" or \"nuc\", got %s",
               luaL_typename(L, -1));
  }
  lua_pop(L, 1);
}

/* norm's dim at idx of the options table: a dim or a list of one or two. */
static void norm_dims(lua_State *L, int idx, int ndim, dlb_norm_args *x, const char *op) {
  int t = dlbL_opt_get(L, idx, "dim"), top = lua_gettop(L);
  lua_Integer n;
  if (t == LUA_TNUMBER) {
    x->ndims = 1;
    x->dims[0] = dlbL_check_dim(L, top, ndim, op);
  } else if (t == LUA_TTABLE) {
    n = dlbL_check_list(L, top, "option dim", "a dim or a list of two: {1, 2}", op);
    if (n < 1 || n > 2)
      dlbL_raise_hint(L, DLB_E_VALUE, op, "a vector norm takes one dim, a matrix norm two",
                      "improper number of dimensions to norm: %d", (int)n);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_rawgeti(L, top, i);
      x->dims[i - 1] = dlbL_check_dim(L, -1, ndim, op);
      lua_pop(L, 1);
    }
    x->ndims = (int)n;
  } else if (t != LUA_TNIL) {
    dlbL_raise(L, DLB_E_ARGUMENT, op, "option dim must be a dim or a list of dims, got %s",
               luaL_typename(L, top));
  }
  lua_settop(L, top - 1);
}

/* The start of a call of nargs arguments whose first count are operands
 * and whose last is an options table of keys (or nil): whether it is one. */
static int start_call(lua_State *L, int nargs, int count, const char *const keys[],
                      const char *op) {
  dlbL_check_nargs(L, nargs, op);
  lua_settop(L, nargs);
  operands(L, 1, count, op);
  return dlbL_check_option_table(L, nargs, keys, op);
}

/* dl.norm(a, opts): np.linalg.norm; opts = {ord =, dim =, keepdims =}. */
static int vecmath_norm(lua_State *L) {
  static const char *const keys[] = {"ord", "dim", "keepdims", NULL};
  const char *op = "dl.norm";
  dlb_norm_args x;
  dlb_array *ud, r;
  dlb_error err;
  memset(&x, 0, sizeof x);
  if (start_call(L, 2, 1, keys, op)) {
    int ndim = dlbL_check_live(L, 1, op)->ndim;
    norm_ord(L, 2, &x, op);
    norm_dims(L, 2, ndim, &x, op);
    x.keepdims = dlbL_opt_boolean(L, 2, "keepdims", 0, op);
  }
  ud = dlbL_push_empty(L, op);
  reserve_like(L, 1, 1, op);
  x.a = dlbL_check_live(L, 1, op);
  if (dlb_norm(&x, &r, dlbL_state(L)->cpu, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  push_result(L, ud, &r);
  return 1;
}

/* dl.einsum(subscripts, a, ...): np.einsum. */
static int vecmath_einsum(lua_State *L) {
  const char *op = "dl.einsum";
  const dlb_array *ops[DLB_EINSUM_MAX_OPERANDS];
  int n = lua_gettop(L) - 1;
  dlb_array *ud, r;
  dlb_error err;
  const char *subscripts;
  if (lua_type(L, 1) != LUA_TSTRING)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "argument #1 must be the subscripts string, got %s",
               luaL_typename(L, 1));
  if (n < 1) dlbL_raise(L, DLB_E_ARGUMENT, op, "no operands: dl.einsum(\"ij,jk->ik\", a, b)");
  if (n > DLB_EINSUM_MAX_OPERANDS)
    dlbL_raise_hint(L, DLB_E_VALUE, op, "combine some operands first",
                    "%d operands: einsum takes at most %d", n, DLB_EINSUM_MAX_OPERANDS);
  if (strlen(lua_tostring(L, 1)) != lua_rawlen(L, 1))
    dlbL_raise_hint(L, DLB_E_VALUE, op, "subscripts such as \"ij,jk->ik\"",
                    "the subscripts string holds a NUL byte");
  operands(L, 2, n, op);
  ud = dlbL_push_empty(L, op);
  reserve_like(L, 2, n, op);
  for (int k = 0; k < n; k++) ops[k] = dlbL_check_live(L, 2 + k, op);
  subscripts = lua_tostring(L, 1); /* still the string at 1: nothing replaced it */
  if (dlb_einsum(subscripts, n, ops, &r, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  push_result(L, ud, &r);
  return 1;
}

/* interp's left, right or period at idx of the options table. */
static int interp_number(lua_State *L, int idx, const char *key, double *v, const char *op) {
  int t = dlbL_opt_get(L, idx, key);
  if (t != LUA_TNIL && t != LUA_TNUMBER)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "option %s must be a number, got %s", key,
               luaL_typename(L, -1));
  if (t == LUA_TNUMBER) *v = (double)lua_tonumber(L, -1);
  lua_pop(L, 1);
  return t == LUA_TNUMBER;
}

/* dl.interp(x, xp, fp, opts): np.interp; opts = {left =, right =, period =}. */
static int vecmath_interp(lua_State *L) {
  static const char *const keys[] = {"left", "right", "period", NULL};
  const char *op = "dl.interp";
  dlb_interp_args x;
  dlb_array *ud, r;
  dlb_error err;
  memset(&x, 0, sizeof x);
  if (start_call(L, 4, 3, keys, op)) {
    x.has_left = interp_number(L, 4, "left", &x.left, op);
    x.has_right = interp_number(L, 4, "right", &x.right, op);
    x.has_period = interp_number(L, 4, "period", &x.period, op);
  }
  ud = dlbL_push_empty(L, op);
  dlbL_reserve(L, dlbL_check_live(L, 1, op)->numel, 8);
  x.x = dlbL_check_live(L, 1, op);
  x.xp = dlbL_check_live(L, 2, op);
  x.fp = dlbL_check_live(L, 3, op);
  if (dlb_interp(&x, &r, dlbL_state(L)->cpu, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  push_result(L, ud, &r);
  return 1;
}

const luaL_Reg dlbL_vecmath_functions[] = {{"cross", vecmath_cross},   {"outer", vecmath_outer},
                                           {"norm", vecmath_norm},     {"einsum", vecmath_einsum},
                                           {"interp", vecmath_interp}, {NULL, NULL}};
