/* reduce.c -- reductions: a:sum(), dl.sum(a), ... (placeholder lists). */
#include "internal.h"

const luaL_Reg dlbL_reduce_methods[] = {{NULL, NULL}};
const luaL_Reg dlbL_reduce_functions[] = {{NULL, NULL}};
