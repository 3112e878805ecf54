/* loops_arith.c -- placeholder */
#include "loops.h"
dlb_loop dlb_arith_loop(dlb_op op, dlb_dtype type) { (void)op; (void)type; return NULL; }
