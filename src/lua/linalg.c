/* linalg.c -- matmul and joining (placeholder lists). */
#include "internal.h"

const luaL_Reg dlbL_linalg_methods[] = {{NULL, NULL}};
const luaL_Reg dlbL_linalg_functions[] = {{NULL, NULL}};
