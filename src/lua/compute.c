/* compute.c -- element-wise operations from Lua: the operators of Array's
 * metatable, dl.add and friends, a:eq(b) and friends, a:sqrt() and friends.
 * All of them are one call of dlb_elementwise (src/compute/elementwise.h). */
#include <stdio.h>
#include <string.h>
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
  case LUA_TBOOLEAN:
    dlbL_to_scalar(L, idx, &o->scalar, op);
    return;
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

#define OUT_HINT \
  "the one option is out, an array that receives the result: dl.add(x, y, {out = z})"

/* The `out` array of the options table at idx (nil or {out = array}), or NULL. */
static dlb_array *check_out_option(lua_State *L, int idx, const char *op) {
  dlb_array *out = NULL;
  if (lua_isnoneornil(L, idx)) return NULL;
  if (!lua_istable(L, idx))
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, OUT_HINT, "argument #%d: options table expected, got %s",
                    idx, luaL_typename(L, idx));
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING || strcmp(lua_tostring(L, -2), "out") != 0)
      dlbL_raise_hint(L, DLB_E_ARGUMENT, op, OUT_HINT, "unknown option '%.40s' (known: out)",
                      dlbL_key_name(L, -2));
    if (!(out = dlbL_to_array(L, -1)))
      dlbL_raise_hint(L, DLB_E_ARGUMENT, op, OUT_HINT, "out must be a dlbridge.Array, got %s",
                      luaL_typename(L, -1));
    /* a released out would read as "allocate one" to the core */
    if (!out->buffer) dlbL_raise(L, DLB_E_DELETED, op, "the out array was deleted");
    lua_pop(L, 1);
  }
  return out;
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

/* How the element-wise function name ("dl.add") of nin operands is called. */
static const char *usage(char *buf, size_t size, const char *name, int nin, int has_options) {
  static const char *const operands[] = {"", "x", "x, y", "x, y, z"};
  static const char *const method_args[] = {"", "opts", "y, opts", "y, z, opts"};
  const char *short_name = strncmp(name, "dl.", 3) == 0 ? name + 3 : name;
  if (!has_options)
    snprintf(buf, size, "an operator takes arrays, numbers or booleans: a + 1, a * b");
  else if (strcmp(name, "dl.where") == 0)
    snprintf(buf, size, "dl.where(cond, x, y, opts): x where cond is nonzero, else y; "
                        "opts = {out = array}");
  else if (strcmp(name, "dl.clip") == 0)
    snprintf(buf, size, "dl.clip(a, lo, hi, opts) or a:clip(lo, hi, opts): a nil bound leaves "
                        "that side open; opts = {out = array}");
  else
    snprintf(buf, size, "dl.%s(%s, opts) or x:%s(%s); opts = {out = array}", short_name,
             operands[nin], short_name, method_args[nin]);
  return buf;
}

/* op over the nin operands at 1..nin, with options at nin + 1 when
 * has_options: returns the result (a new array, or out). */
static int elementwise(lua_State *L, dlb_op op, const char *name, int has_options) {
  const dlb_op_info *info = dlb_op_get(op);
  int nin = info->nin, top = lua_gettop(L);
  dlb_operand in[3];
  dlb_array *out = NULL, *result;
  dlb_backend *cpu = dlbL_state(L)->cpu;
  dlb_elementwise_plan plan;
  dlb_status st;
  dlb_error err;
  if (top < nin) {
    char hint[160];
    dlbL_raise_hint(L, DLB_E_ARGUMENT, name, usage(hint, sizeof hint, name, nin, has_options),
                    "%s takes %d operand%s, got %d", name, nin, nin > 1 ? "s" : "", top);
  }
  if (top > nin + has_options) {
    char hint[160];
    dlbL_extra_argument(L, nin + has_options, name,
                        usage(hint, sizeof hint, name, nin, has_options));
  }
  lua_settop(L, nin + 1);
  if (has_options) out = check_out_option(L, nin + 1, name);
  for (int k = 0; k < nin; k++) check_operand(L, k + 1, &in[k], name);
  if (out) { /* checked again: converting an operand may have run a finalizer */
    if (!out->buffer) dlbL_raise(L, DLB_E_DELETED, name, "the out array was deleted");
    if (dlb_elementwise(op, in, out, cpu, &err) != DLB_OK) dlbL_raise_error(L, &err, name);
    lua_getfield(L, nin + 1, "out");
    return 1;
  }
  if (dlb_elementwise_prepare(op, in, cpu, &plan, &err) != DLB_OK) dlbL_raise_error(L, &err, name);
  reserve_result(L, &plan);
  result = dlbL_push_empty(L, name);
  st = dlb_elementwise_run(&plan, result, cpu, &err);
  if (st == DLB_E_OUT_OF_MEMORY) { /* small results skip reserve_result: collect, try again */
    dlbL_reserve(L, plan.numel, dlb_dtype_get(plan.types.result)->itemsize);
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
  char hint[160];
  if (lua_gettop(L) > 4)
    dlbL_extra_argument(L, 4, "dl.clip", usage(hint, sizeof hint, "dl.clip", 3, 1));
  lua_settop(L, 4);
  has_lo = !lua_isnil(L, 2);
  has_hi = !lua_isnil(L, 3);
  if (has_lo && has_hi) return elementwise(L, DLB_OP_CLIP, "dl.clip", 1);
  if (!has_lo && !has_hi)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "dl.clip", usage(hint, sizeof hint, "dl.clip", 3, 1),
                    "dl.clip needs a lower or an upper bound");
  lua_remove(L, has_lo ? 3 : 2); /* (a, bound, opts) */
  return elementwise(L, has_lo ? DLB_OP_MAXIMUM : DLB_OP_MINIMUM, "dl.clip", 1);
}

/* dl.NAME(operands..., opts), which a:NAME(operands..., opts) is too. */
static inline int function(lua_State *L, dlb_op op, const char *name) {
  return op == DLB_OP_CLIP ? clip(L) : elementwise(L, op, name, 1);
}

/* fn_ID: the C function of each operation of DLB_ELEMENTWISE_OPS (dlbridge.h). */
#define FUNCTION(ID, name, nin, cls, loops, lua, form) \
  static int fn_##ID(lua_State *L) { return function(L, DLB_OP_##ID, "dl." #lua); }
DLB_ELEMENTWISE_OPS(FUNCTION)
#undef FUNCTION

/* --- operators ------------------------------------------------------------ */

#define OPERATOR(mname, OP) \
  static int mm_##mname(lua_State *L) { return elementwise(L, OP, "Array:__" #mname, 0); }

OPERATOR(add, DLB_OP_ADD)
OPERATOR(sub, DLB_OP_SUBTRACT)
OPERATOR(mul, DLB_OP_MULTIPLY)
OPERATOR(div, DLB_OP_DIVIDE)
OPERATOR(idiv, DLB_OP_FLOOR_DIVIDE)
OPERATOR(mod, DLB_OP_MOD)
OPERATOR(pow, DLB_OP_POWER)
OPERATOR(band, DLB_OP_BITWISE_AND)
OPERATOR(bor, DLB_OP_BITWISE_OR)
OPERATOR(bxor, DLB_OP_BITWISE_XOR)
OPERATOR(shl, DLB_OP_LEFT_SHIFT)
OPERATOR(shr, DLB_OP_RIGHT_SHIFT)

/* Unary operators get their operand twice (Lua's convention): drop one. */
static int mm_unm(lua_State *L) {
  lua_settop(L, 1);
  return elementwise(L, DLB_OP_NEGATIVE, "Array:__unm", 0);
}

static int mm_bnot(lua_State *L) {
  lua_settop(L, 1);
  return elementwise(L, DLB_OP_BITWISE_NOT, "Array:__bnot", 0);
}

/* a < b would give one boolean: point to the element-wise methods. */
static int mm_compare(lua_State *L) {
  return dlbL_raise_hint(L, DLB_E_ARGUMENT, "Array:__lt",
                         "a:lt(b) compares element-wise; dl.all(a:lt(b)) tells whether every "
                         "element is smaller",
                         "arrays do not compare with < or <=: use a:lt(b), a:le(b), a:gt(b), "
                         "a:ge(b) (element-wise, giving a bool array)");
}

const luaL_Reg dlbL_compute_metamethods[] = {
    {"__add", mm_add},   {"__sub", mm_sub},   {"__mul", mm_mul},         {"__div", mm_div},
    {"__idiv", mm_idiv}, {"__mod", mm_mod},   {"__pow", mm_pow},         {"__unm", mm_unm},
    {"__band", mm_band}, {"__bor", mm_bor},   {"__bxor", mm_bxor},       {"__shl", mm_shl},
    {"__shr", mm_shr},   {"__bnot", mm_bnot}, {"__lt", mm_compare},      {"__le", mm_compare},
    {NULL, NULL}};

/* The same C functions serve dl.lua(a, ...) and a:lua(...), for each row of
 * DLB_ELEMENTWISE_OPS (a:lua where its form is method), and a few more
 * names: NumPy's where they differ from Lua's (subtract, multiply, divide,
 * power, negative) and NumPy's invert; methods add the short comparison
 * names (a:eq(b) is dl.equal(a, b)). tests/c/capi_ops.c checks them. */
#define FUNCTION_NAME(ID, name, nin, cls, loops, lua, form) {#lua, fn_##ID},
#define METHOD_NAME(ID, name, nin, cls, loops, lua, form) METHOD_##form(ID, lua)
#define METHOD_method(ID, lua) {#lua, fn_##ID},
#define METHOD_function(ID, lua)
#define ALIASES                                                                         \
  {"subtract", fn_SUBTRACT}, {"multiply", fn_MULTIPLY}, {"divide", fn_DIVIDE},          \
      {"power", fn_POWER}, {"negative", fn_NEGATIVE}, {"invert", fn_BITWISE_NOT}

const luaL_Reg dlbL_compute_functions[] = {DLB_ELEMENTWISE_OPS(FUNCTION_NAME) ALIASES,
                                           {NULL, NULL}};

const luaL_Reg dlbL_compute_methods[] = {
    DLB_ELEMENTWISE_OPS(METHOD_NAME) ALIASES, {"eq", fn_EQUAL}, {"ne", fn_NOT_EQUAL},
    {"lt", fn_LESS}, {"le", fn_LESS_EQUAL}, {"gt", fn_GREATER}, {"ge", fn_GREATER_EQUAL},
    {NULL, NULL}};
#undef ALIASES
#undef METHOD_function
#undef METHOD_method
#undef METHOD_NAME
#undef FUNCTION_NAME
