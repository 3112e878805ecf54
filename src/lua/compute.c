/* compute.c -- operators and element-wise functions (placeholder lists). */
#include "internal.h"

const luaL_Reg dlbL_compute_metamethods[] = {{NULL, NULL}};
const luaL_Reg dlbL_compute_methods[] = {{NULL, NULL}};
const luaL_Reg dlbL_compute_functions[] = {{NULL, NULL}};
