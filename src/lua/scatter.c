/* scatter.c -- grouped updates from Lua (semantics: src/compute/scatter.h):
 * dl.scatter_add(a, idx, values, opts), scatter_mul, scatter_max and
 * scatter_min, NumPy's ufunc.at. idx is 1-based (negative from the end);
 * opts nil or {dim = d} (default 1). a is written in place and returned. */
#include "../compute/scatter.h"
#include "internal.h"

static int scatter(lua_State *L, int op, const char *name) {
  static const char *const keys[] = {"dim", NULL};
  dlb_array *a = dlbL_check_live(L, 1, name), *index, *values;
  dlb_error err;
  int dim = 0;
  dlbL_check_nargs(L, 4, name);
  lua_settop(L, 4);
  dlbL_check_array_like(L, 2, 1, DLB_INT64, name);
  dlbL_check_array_like(L, 3, 1, dlbL_check_live(L, 1, name)->dtype, name);
  if (dlbL_check_option_table(L, 4, keys, name)) {
    a = dlbL_check_live(L, 1, name);
    dim = dlbL_opt_dim(L, 4, "dim", a->ndim > 0 ? a->ndim : 1, 0, name);
  }
  a = dlbL_check_live(L, 1, name); /* (finalizers may have run) */
  index = dlbL_check_live(L, 2, name);
  values = dlbL_check_live(L, 3, name);
  if (dlb_scatter(op, a, index, values, dim, 1, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, name);
  lua_settop(L, 1);
  return 1;
}

static int scatter_add(lua_State *L) { return scatter(L, DLB_SCATTER_ADD, "dl.scatter_add"); }
static int scatter_mul(lua_State *L) { return scatter(L, DLB_SCATTER_MULTIPLY, "dl.scatter_mul"); }
static int scatter_max(lua_State *L) { return scatter(L, DLB_SCATTER_MAXIMUM, "dl.scatter_max"); }
static int scatter_min(lua_State *L) { return scatter(L, DLB_SCATTER_MINIMUM, "dl.scatter_min"); }

const luaL_Reg dlbL_scatter_functions[] = {{"scatter_add", scatter_add},
                                           {"scatter_mul", scatter_mul},
                                           {"scatter_max", scatter_max},
                                           {"scatter_min", scatter_min},
                                           {NULL, NULL}};
