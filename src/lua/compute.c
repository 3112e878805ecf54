/* compute.c -- element-wise operations from Lua: the operators of Array's
 * metatable, dl.add and friends, a:eq(b) and friends, a:sqrt() and friends.
 * All of them are one call of dlb_elementwise (src/compute/elementwise.h). */
#include "../compute/elementwise.h"
#include "internal.h"

/* Reads the operand at idx: an Array (live), a Lua number or boolean, a
 * complex scalar {re=, im=}, or nested tables (made into an array in place,
 * as dl.array would: not a weak scalar). */
static void check_operand(lua_State *L, int idx, dlb_operand *o, const char *op) {
  dlb_array *a = dlbL_to_array(L, idx);
  o->array = NULL;
  if (a) {
    if (!a->buffer) dlbL_raise(L, DLB_E_DELETED, op, "argument #%d: the array was deleted", idx);
    o->array = a;
    return;
  }
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
    case LUA_TBOOLEAN: dlbL_to_scalar(L, idx, &o->scalar, op); return;
    case LUA_TTABLE:
      if (dlbL_is_complex(L, idx)) {
        dlbL_to_scalar(L, idx, &o->scalar, op);
        return;
      }
      dlbL_array_from_lua(L, idx, 0, DLB_FLOAT64, op);
      lua_replace(L, idx);
      o->array = dlbL_to_array(L, idx);
      return;
    default:
      dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                      "an operand is an array, a number, a boolean, {re =, im =} or nested tables "
                      "of numbers",
                      "argument #%d: dlbridge.Array or number expected, got %s", idx,
                      luaL_typename(L, idx));
  }
}

/* Fetches the array operands at 1..nin again when a record was given back
 * or moved since *epoch: an allocation (converting an operand, making the
 * result) may have run a finalizer (records.c). */
static void refetch(lua_State *L, const dlb_lua_state *state, size_t *epoch, dlb_operand *in,
                    int nin) {
  if (dlbL_records_epoch(state) == *epoch) return;
  *epoch = dlbL_records_epoch(state);
  for (int k = 0; k < nin; k++)
    if (in[k].array) in[k].array = dlbL_to_array(L, k + 1);
}

/* Makes room for a result of nbytes: collects garbage when the memory limit
 * would refuse it, and paces the collector by the result's size (the step
 * is taken by dlbL_push_empty, before the result exists). Finalizers may
 * run: dlb_elementwise_run checks the operands again. */
static void reserve_result(lua_State *L, const dlb_elementwise_plan *plan) {
  size_t itemsize = dlb_dtype_get(plan->types.result)->itemsize;
  if ((uint64_t)plan->numel * itemsize < 1024) return; /* a GC step would be 0 KB */
  dlbL_reserve(L, plan->numel, itemsize);
}

/* op over the nin operands at 1..nin, with options at nin + 1 when
 * has_options: returns the result (a new array, or out). */
static int elementwise(lua_State *L, dlb_op op, const char *name, int has_options) {
  static const char *const out_keys[] = {"out", NULL};
  const dlb_op_info *info = dlb_op_get(op);
  int nin = info->nin, top = lua_gettop(L);
  dlb_operand in[3];
  dlb_array *out = NULL, *result;
  dlb_lua_state *state = dlbL_state(L);
  dlb_backend *cpu = state->cpu;
  size_t epoch = dlbL_records_epoch(state);
  dlb_elementwise_plan plan;
  dlb_status st;
  dlb_error err;
  if (top < nin)
    dlbL_raise(L, DLB_E_ARGUMENT, name, "%s takes %d operand%s, got %d", name, nin,
               nin > 1 ? "s" : "", top);
  dlbL_check_nargs(L, nin + has_options, name);
  lua_settop(L, nin + 1);
  if (has_options && dlbL_check_option_table(L, nin + 1, out_keys, name))
    out = dlbL_opt_array(L, nin + 1, "out", name); /* pushed at nin + 2 */
  for (int k = 0; k < nin; k++) check_operand(L, k + 1, &in[k], name);
  if (out) { /* checked again: converting an operand may have run a finalizer */
    out = dlbL_to_array(L, nin + 2);
    refetch(L, state, &epoch, in, nin);
    if (!out->buffer) dlbL_raise(L, DLB_E_DELETED, name, "the out array was deleted");
    if (dlb_elementwise(op, in, out, cpu, &err) != DLB_OK) dlbL_raise_error(L, &err, name);
    lua_settop(L, nin + 2);
    return 1;
  }
  refetch(L, state, &epoch, in, nin);
  if (dlb_elementwise_prepare(op, in, cpu, &plan, &err) != DLB_OK) dlbL_raise_error(L, &err, name);
  plan.keep_order = 1; /* NumPy's results: M:T() + 1 is laid out as M:T() */
  reserve_result(L, &plan);
  result = dlbL_push_empty(L, name);
  refetch(L, state, &epoch, plan.in, nin);
  st = dlb_elementwise_run(&plan, result, cpu, &err);
  if (st == DLB_E_OUT_OF_MEMORY) { /* small results skip reserve_result: collect, try again */
    dlbL_reserve(L, plan.numel, dlb_dtype_get(plan.types.result)->itemsize);
    refetch(L, state, &epoch, plan.in, nin);
    st = dlb_elementwise_run(&plan, result, cpu, &err);
  }
  if (st != DLB_OK) dlbL_raise_error(L, &err, name);
  return 1;
}

/* dl.clip(a, lo, hi, opts): minimum(maximum(a, lo), hi) in one pass, with
 * the dtype and broadcast shape of all three (NumPy's clip); a nil bound is
 * left out (maximum or minimum alone); both nil raise ARGUMENT. */
static int clip(lua_State *L) {
  int has_lo, has_hi;
  dlbL_check_nargs(L, 4, "dl.clip");
  lua_settop(L, 4);
  has_lo = !lua_isnil(L, 2);
  has_hi = !lua_isnil(L, 3);
  if (has_lo && has_hi) return elementwise(L, DLB_OP_CLIP, "dl.clip", 1);
  if (!has_lo && !has_hi)
    dlbL_raise(L, DLB_E_ARGUMENT, "dl.clip", "dl.clip needs a lower or an upper bound");
  lua_remove(L, has_lo ? 3 : 2); /* (a, bound, opts) */
  return elementwise(L, has_lo ? DLB_OP_MAXIMUM : DLB_OP_MINIMUM, "dl.clip", 1);
}

/* dl.NAME(operands..., opts), which a:NAME(operands..., opts) is too. */
static inline int function(lua_State *L, dlb_op op, const char *name) {
  return op == DLB_OP_CLIP ? clip(L) : elementwise(L, op, name, 1);
}

/* compute_LUA: the C function of each operation of DLB_ELEMENTWISE_OPS
 * (dlbridge.h), named by its Lua name. */
#define FUNCTION(ID, name, nin, cls, loops, lua, form)                                             \
  static int compute_##lua(lua_State *L) { return function(L, DLB_OP_##ID, "dl." #lua); }
DLB_ELEMENTWISE_OPS(FUNCTION)
#undef FUNCTION

/* --- operators ------------------------------------------------------------ */

/* compute_op_MM: Array's __MM for each row of DLBL_OPERATORS (compute_MM
 * would take the name of dl.MM's function where both exist). A unary
 * operator gets its operand twice (Lua's convention): one is dropped. */
#define OPERATOR(mm, ID, nin)                                                                      \
  static int compute_op_##mm(lua_State *L) {                                                       \
    lua_settop(L, nin);                                                                            \
    return elementwise(L, DLB_OP_##ID, "Array:__" #mm, 0);                                         \
  }
DLBL_OPERATORS(OPERATOR)
#undef OPERATOR

/* a < b would give one boolean: point to the element-wise methods (__lt
 * and __le). */
static int compute_op_lt(lua_State *L) {
  return dlbL_raise_hint(L, DLB_E_ARGUMENT, "Array:__lt",
                         "a:lt(b) compares element-wise; dl.all(a:lt(b)) tells whether every "
                         "element is smaller",
                         "arrays do not compare with < or <=: use a:lt(b), a:le(b), a:gt(b), "
                         "a:ge(b) (element-wise, giving a bool array)");
}

#define OPERATOR_NAME(mm, ID, nin) {"__" #mm, compute_op_##mm},
const luaL_Reg dlbL_compute_metamethods[] = {
    DLBL_OPERATORS(OPERATOR_NAME){"__lt", compute_op_lt}, {"__le", compute_op_lt}, {NULL, NULL}};
#undef OPERATOR_NAME

/* The same C functions serve dl.lua(a, ...) and a:lua(...), for each row of
 * DLB_ELEMENTWISE_OPS (a:lua where its form is method), and a few more
 * names: NumPy's where they differ from Lua's (subtract, multiply, divide,
 * power, negative) and NumPy's invert; methods add the short comparison
 * names (a:eq(b) is dl.equal(a, b)). tests/c/capi_ops.c checks them. */
#define FUNCTION_NAME(ID, name, nin, cls, loops, lua, form) {#lua, compute_##lua},
#define METHOD_NAME(ID, name, nin, cls, loops, lua, form) METHOD_##form(lua)
#define METHOD_method(lua) {#lua, compute_##lua},
#define METHOD_function(lua)
#define ALIASES                                                                                    \
  {"subtract", compute_sub}, {"multiply", compute_mul}, {"divide", compute_div},                   \
      {"power", compute_pow}, {"negative", compute_neg}, {                                         \
    "invert", compute_bitwise_not                                                                  \
  }

const luaL_Reg dlbL_compute_functions[] = {DLB_ELEMENTWISE_OPS(FUNCTION_NAME) ALIASES,
                                           {NULL, NULL}};

const luaL_Reg dlbL_compute_methods[] = {DLB_ELEMENTWISE_OPS(METHOD_NAME) ALIASES,
                                         {"eq", compute_equal},
                                         {"ne", compute_not_equal},
                                         {"lt", compute_less},
                                         {"le", compute_less_equal},
                                         {"gt", compute_greater},
                                         {"ge", compute_greater_equal},
                                         {NULL, NULL}};
#undef ALIASES
#undef METHOD_function
#undef METHOD_method
#undef METHOD_NAME
#undef FUNCTION_NAME
