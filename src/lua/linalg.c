/* linalg.c -- matrix products (dl.matmul, dl.dot, a:T()), joining
 * (dl.concat, dl.stack) and dl.linalg (solve, inv, det, ...). The work is
 * in src/compute/matmul.c, join.c and linalg.c. */
#include <limits.h>
#include <math.h>
#include "../compute/join.h"
#include "../compute/linalg.h"
#include "../compute/matmul.h"
#include "internal.h"

/* Stack slot of matmul's out array (nil when none); the options table
 * holds it too, but Lua code run during the call could change the table. */
#define OUT_SLOT 4

/* Reads matmul's options at idx (nil or a table): dtype, and out (copied
 * to OUT_SLOT). */
static void matmul_options(lua_State *L, int idx, dlb_dtype *dtype, const char *op) {
  static const char *const keys[] = {"dtype", "out", NULL};
  *dtype = DLB_MATMUL_PROMOTE;
  if (!dlbL_check_option_table(L, idx, keys, op)) return;
  dlbL_opt_dtype(L, idx, "dtype", dtype, op);
  if (dlbL_opt_array(L, idx, "out", op)) lua_replace(L, OUT_SLOT);
}

/* Element count of a result shape (checked again when it is allocated). */
static int64_t shape_numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++)
    if (__builtin_mul_overflow(n, shape[d], &n)) return INT64_MAX;
  return n;
}

/* matmul(a, b, opts) or dot(a, b): pushes the new result (or returns out). */
static int product(lua_State *L, int is_dot, const char *op) {
  dlb_lua_state *state = dlbL_state(L);
  dlb_array *a, *b, *out = NULL, *result;
  dlb_dtype dtype = DLB_MATMUL_PROMOTE, result_type;
  int64_t shape[DLB_MAX_NDIM];
  int ndim;
  dlb_error err;
  dlb_status st;
  dlbL_check_nargs(L, is_dot ? 2 : 3, op);
  lua_settop(L, OUT_SLOT);
  lua_pushnil(L);
  lua_replace(L, OUT_SLOT);
  dlbL_check_array(L, 1, op);
  dlbL_check_array(L, 2, op);
  if (!is_dot) matmul_options(L, 3, &dtype, op);
  /* Lua code may have run (options, finalizers): check everything from here. */
  a = dlbL_check_live(L, 1, op);
  b = dlbL_check_live(L, 2, op);
  if (dlb_matmul_result(is_dot, a, b, dtype, &result_type, &ndim, shape, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  if (!lua_isnil(L, OUT_SLOT)) {
    out = dlbL_to_array(L, OUT_SLOT);
    if (!out->buffer) dlbL_raise(L, DLB_E_DELETED, op, "the out array was deleted");
    if (dlb_matmul(a, b, dtype, out, state->cpu, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
    lua_settop(L, OUT_SLOT);
    return 1;
  }
  result = dlbL_push_new(L, shape_numel(ndim, shape), dlb_dtype_get(result_type)->itemsize, op);
  a = dlbL_check_live(L, 1, op); /* finalizers may have deleted them */
  b = dlbL_check_live(L, 2, op);
  st = is_dot ? dlb_dot(a, b, result, state->cpu, &err)
              : dlb_matmul(a, b, dtype, result, state->cpu, &err);
  if (st != DLB_OK) dlbL_raise_error(L, &err, op);
  return 1;
}

/* dl.matmul(a, b, opts) and a:matmul(b, opts): NumPy's matmul. */
static int linalg_matmul(lua_State *L) { return product(L, 0, "dl.matmul"); }
static int linalg_matmul_method(lua_State *L) { return product(L, 0, "Array:matmul"); }

/* dl.dot(a, b) and a:dot(b): NumPy's dot. */
static int linalg_dot(lua_State *L) { return product(L, 1, "dl.dot"); }
static int linalg_dot_method(lua_State *L) { return product(L, 1, "Array:dot"); }

/* a:T(): a view with the dims reversed (NumPy's a.T). */
static int linalg_T(lua_State *L) {
  dlb_array *v;
  dlbL_check_nargs(L, 1, "Array:T");
  v = dlbL_pin(L, 1, "Array:T");
  int perm[DLB_MAX_NDIM];
  dlb_error err;
  for (int d = 0; d < v->ndim; d++) perm[d] = v->ndim - 1 - d;
  if (dlb_view_permute(v, perm, &err) != DLB_OK) dlbL_raise_error(L, &err, "Array:T");
  return 1;
}

/* The array at position k of the list at index 1, or NULL. */
static dlb_array *list_array(lua_State *L, lua_Integer k) {
  dlb_array *a;
  lua_rawgeti(L, 1, k);
  a = dlbL_to_array(L, -1);
  lua_pop(L, 1); /* the list still holds it */
  return a;
}

/* Checks that the list at index 1 holds n >= 1 arrays; returns n. The
 * hint of an error is op's usage line. */
static lua_Integer check_list(lua_State *L, const char *op) {
  lua_Integer n;
  if (lua_type(L, 1) != LUA_TTABLE) {
    if (dlbL_to_array(L, 1))
      dlbL_raise(L, DLB_E_ARGUMENT, op,
                 "takes a list of arrays, got an array: write %s({a, b}, dim)", op);
    dlbL_raise(L, DLB_E_ARGUMENT, op, "takes a list of arrays, got %s", luaL_typename(L, 1));
  }
  if ((n = dlbL_list_length(L, 1)) < 0) /* the usage line only for the error */
    n = dlbL_check_list(L, 1, "the arrays to join", dlbL_usage(op), op);
  if (n == 0) dlbL_raise(L, DLB_E_ARGUMENT, op, "the list of arrays is empty");
  if (n > INT_MAX)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, "join fewer arrays at once, then join the results",
                    "more than %d arrays", INT_MAX);
  for (lua_Integer k = 1; k <= n; k++) {
    if (list_array(L, k)) continue;
    lua_rawgeti(L, 1, k);
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                    "every element of the list is a dlbridge.Array: dl.array(t) makes one from a "
                    "table",
                    "element %lld of the list is a %s, not a dlbridge.Array", (long long)k,
                    luaL_typename(L, -1));
  }
  return n;
}

#define LIST_CHANGED_HINT                                                                          \
  "a finalizer changed the list while the arrays were joined: pass a list no finalizer touches"

/* Fills arrays[0..n-1] from the list; ARGUMENT when it changed meanwhile. */
static void read_list(lua_State *L, lua_Integer n, const dlb_array **arrays, const char *op) {
  if ((lua_Integer)lua_rawlen(L, 1) != n)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, LIST_CHANGED_HINT,
                    "the list of arrays changed during the call");
  for (lua_Integer k = 1; k <= n; k++)
    if (!(arrays[k - 1] = list_array(L, k)))
      dlbL_raise_hint(L, DLB_E_ARGUMENT, op, LIST_CHANGED_HINT,
                      "the list of arrays changed during the call");
}

/* concat or stack of the list at 1 along the dim at 2 (default 1). Runs in
 * protected mode (the scratch list of pointers is a Lua allocation). */
static int join(lua_State *L, int stack, const char *op) {
  dlb_lua_state *state = dlbL_state(L);
  lua_Integer n = check_list(L, op);
  const dlb_array **arrays, *first = list_array(L, 1);
  dlb_array *result;
  dlb_dtype dtype;
  int64_t shape[DLB_MAX_NDIM];
  int dim = 0, ndim;
  dlb_error err;
  dlb_status st;
  if (!first->buffer) dlbL_raise(L, DLB_E_DELETED, op, "array 1 of the list was deleted");
  /* 0-d arrays cannot concat: the core says so (SHAPE) whatever the dim. */
  if (!lua_isnoneornil(L, 2) && first->ndim + stack > 0)
    dim = dlbL_check_dim(L, 2, first->ndim + stack, op);
  lua_settop(L, 2);
  arrays = lua_newuserdatauv(L, (size_t)n * sizeof *arrays, 0);
  read_list(L, n, arrays, op); /* the allocation may have run finalizers */
  if (dlb_join_result(stack, n, arrays, dim, &dtype, &ndim, shape, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  result = dlbL_push_new(L, shape_numel(ndim, shape), dlb_dtype_get(dtype)->itemsize, op);
  read_list(L, n, arrays, op); /* no Lua code runs from here to the copy */
  st = stack ? dlb_stack(n, arrays, dim, result, state->cpu, &err)
             : dlb_concat(n, arrays, dim, result, state->cpu, &err);
  if (st != DLB_OK) dlbL_raise_error(L, &err, op);
  return 1;
}

static int concat_unprotected(lua_State *L) { return join(L, 0, "dl.concat"); }
static int stack_unprotected(lua_State *L) { return join(L, 1, "dl.stack"); }

/* dl.concat(list, dim): the arrays joined along an existing dim. */
static int linalg_concat(lua_State *L) {
  dlbL_check_nargs(L, 2, "dl.concat");
  return dlbL_call_protected(L, concat_unprotected, "dl.concat");
}

/* dl.stack(list, dim): the arrays joined along a new dim at position dim. */
static int linalg_stack(lua_State *L) {
  dlbL_check_nargs(L, 2, "dl.stack");
  return dlbL_call_protected(L, stack_unprotected, "dl.stack");
}

const luaL_Reg dlbL_linalg_methods[] = {
    {"matmul", linalg_matmul_method}, {"dot", linalg_dot_method}, {"T", linalg_T}, {NULL, NULL}};

const luaL_Reg dlbL_linalg_functions[] = {{"matmul", linalg_matmul},
                                          {"dot", linalg_dot},
                                          {"concat", linalg_concat},
                                          {"stack", linalg_stack},
                                          {NULL, NULL}};

/* --- dl.linalg ----------------------------------------------------------------- */

/* Pushes the value of the 0-d host array r (float32 or float64) as a number. */
static void push_value(lua_State *L, const dlb_array *r) {
  const char *p = dlb_array_host_data(r);
  lua_pushnumber(L, r->dtype == DLB_FLOAT32 ? (lua_Number) * (const float *)p
                                            : (lua_Number) * (const double *)p);
}

/* Runs x with its operands at 1 (and 2), options read: pushes the results
 * (det and slogdet of one matrix as numbers, lstsq's rank as an integer). */
static int linalg_run(lua_State *L, dlb_linalg_args *x, const char *op) {
  int two = x->op == DLB_LINALG_SOLVE || x->op == DLB_LINALG_LSTSQ, first;
  dlb_array *ud[DLB_LINALG_MAX_RESULTS], results[DLB_LINALG_MAX_RESULTS];
  dlb_linalg_plan plan;
  int64_t rank = 0;
  dlb_error err;
  x->a = dlbL_check_live(L, 1, op);
  x->b = two ? dlbL_check_live(L, 2, op) : NULL;
  if (dlb_linalg_plan_of(x, &plan, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  first = lua_gettop(L) + 1;
  for (int r = 0; r < plan.nresults; r++) ud[r] = dlbL_push_empty(L, op);
  dlbL_reserve(L, plan.nbytes, 1);
  x->a = dlbL_check_live(L, 1, op); /* finalizers may have deleted them */
  x->b = two ? dlbL_check_live(L, 2, op) : NULL;
  if (dlb_linalg(x, results, &rank, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  for (int r = 0; r < plan.nresults; r++) *ud[r] = results[r]; /* the userdata own them now */
  if (plan.ndim[0] == 0) { /* det, slogdet of one matrix: numbers, as NumPy's scalars */
    for (int r = 0; r < plan.nresults; r++) {
      push_value(L, ud[r]);
      lua_replace(L, first + r);
      dlb_array_release(ud[r]);
    }
  }
  if (x->op == DLB_LINALG_LSTSQ) {
    lua_pushvalue(L, first + 2); /* x, residuals, rank, s */
    lua_pushinteger(L, (lua_Integer)rank);
    lua_replace(L, first + 2);
  }
  return plan.nresults + (x->op == DLB_LINALG_LSTSQ);
}

/* Operand idx: an Array, or numbers or nested tables made into one. */
static void operand_at(lua_State *L, int idx, const char *op) {
  if (lua_isnoneornil(L, idx))
    dlbL_raise(L, DLB_E_ARGUMENT, op, "argument #%d: an array expected, got %s", idx,
               luaL_typename(L, idx));
  dlbL_check_array_like(L, idx, 0, DLB_FLOAT64, op);
}

/* f(a) or f(a, b), then an options table at nops + 1 with keys. */
static int linalg_begin(lua_State *L, int nops, const char *const *keys, const char *op) {
  int has;
  dlbL_check_nargs(L, nops + (keys ? 1 : 0), op);
  lua_settop(L, nops + 1);
  for (int k = 1; k <= nops; k++) operand_at(L, k, op);
  has = keys ? dlbL_check_option_table(L, nops + 1, keys, op) : 0;
  return has;
}

/* dl.linalg.<name>(a[, b]): the functions without options. */
static int run_plain(lua_State *L, dlb_linalg_op id, int nops, const char *op) {
  dlb_linalg_args x = {.op = id};
  linalg_begin(L, nops, NULL, op);
  return linalg_run(L, &x, op);
}

static int linalg_solve(lua_State *L) {
  return run_plain(L, DLB_LINALG_SOLVE, 2, "dl.linalg.solve");
}
static int linalg_inv(lua_State *L) { return run_plain(L, DLB_LINALG_INV, 1, "dl.linalg.inv"); }
static int linalg_det(lua_State *L) { return run_plain(L, DLB_LINALG_DET, 1, "dl.linalg.det"); }
static int linalg_slogdet(lua_State *L) {
  return run_plain(L, DLB_LINALG_SLOGDET, 1, "dl.linalg.slogdet");
}
static int linalg_cholesky(lua_State *L) {
  return run_plain(L, DLB_LINALG_CHOLESKY, 1, "dl.linalg.cholesky");
}

static int linalg_eigh(lua_State *L) {
  static const char *const keys[] = {"UPLO", NULL}, *const uplo[] = {"L", "U", NULL};
  const char *op = "dl.linalg.eigh";
  dlb_linalg_args x = {.op = DLB_LINALG_EIGH};
  if (linalg_begin(L, 1, keys, op)) x.upper = dlbL_opt_choice(L, 2, "UPLO", uplo, 0, op);
  return linalg_run(L, &x, op);
}

static int linalg_svd(lua_State *L) {
  static const char *const keys[] = {"full_matrices", "compute_uv", NULL};
  const char *op = "dl.linalg.svd";
  dlb_linalg_args x = {.op = DLB_LINALG_SVD};
  linalg_begin(L, 1, keys, op);
  x.full_matrices = dlbL_opt_boolean(L, 2, "full_matrices", 1, op);
  x.compute_uv = dlbL_opt_boolean(L, 2, "compute_uv", 1, op);
  return linalg_run(L, &x, op);
}

static int linalg_qr(lua_State *L) {
  static const char *const keys[] = {"mode", NULL}, *const modes[] = {"reduced", "complete", "r",
                                                                      NULL};
  const char *op = "dl.linalg.qr";
  dlb_linalg_args x = {.op = DLB_LINALG_QR};
  if (linalg_begin(L, 1, keys, op))
    x.mode = (dlb_qr_mode)dlbL_opt_choice(L, 2, "mode", modes, DLB_QR_REDUCED, op);
  return linalg_run(L, &x, op);
}

static int linalg_lstsq(lua_State *L) {
  static const char *const keys[] = {"rcond", NULL};
  const char *op = "dl.linalg.lstsq";
  dlb_linalg_args x = {.op = DLB_LINALG_LSTSQ};
  x.rcond = NAN;
  if (linalg_begin(L, 2, keys, op)) x.rcond = dlbL_opt_number(L, 3, "rcond", NAN, op);
  return linalg_run(L, &x, op);
}

static const luaL_Reg linalg_sub_functions[] = {
    {"solve", linalg_solve},       {"inv", linalg_inv},
    {"det", linalg_det},           {"slogdet", linalg_slogdet},
    {"cholesky", linalg_cholesky}, {"eigh", linalg_eigh},
    {"svd", linalg_svd},           {"qr", linalg_qr},
    {"lstsq", linalg_lstsq},       {NULL, NULL}};

/* dl.linalg: shared by every script of the state, so read-only (as dl.random). */
void dlbL_open_linalg(lua_State *L, int module) {
  lua_createtable(L, 0, 9);
  lua_pushvalue(L, module + 1);
  lua_pushvalue(L, module + 2);
  lua_pushvalue(L, module + 3);
  luaL_setfuncs(L, linalg_sub_functions, DLB_NUPVALUES);
  dlbL_push_readonly(L, -1, "dl.linalg");
  lua_setfield(L, module, "linalg");
  lua_pop(L, 1);
}
