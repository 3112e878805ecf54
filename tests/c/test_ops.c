/* test_ops.c -- the list of element-wise operations (DLB_ELEMENTWISE_OPS,
 * dlbridge.h) against what is derived from it: the dlb_op ids in the order
 * of the rows, and that order frozen (it is the ABI); the driver's table
 * (dlb_op_get: name, inputs, class); and the cpu kernels, one file's table
 * per operation, with a kernel for exactly the loop dtypes the row
 * declares. The Lua names are checked by capi_ops.c. */
#include <string.h>
#include "backends/cpu/loops.h"
#include "compute/elementwise.h"
#include "core/dtype.h"
#include "check.h"
#include "loops_column.h"

/* The ids as first published: rows are only ever appended. */
static const char *const abi_order[] = {
    "add",         "subtract",    "multiply",    "divide",      "floor_divide", "mod",
    "power",       "maximum",     "minimum",     "atan2",       "bitwise_and",  "bitwise_or",
    "bitwise_xor", "left_shift",  "right_shift", "logical_and", "logical_or",   "logical_xor",
    "equal",       "not_equal",   "less",        "less_equal",  "greater",      "greater_equal",
    "negative",    "bitwise_not", "logical_not", "abs",         "sign",         "sqrt",
    "exp",         "exp2",        "expm1",       "log",         "log2",         "log10",
    "log1p",       "sin",         "cos",         "tan",         "asin",         "acos",
    "atan",        "sinh",        "cosh",        "tanh",        "floor",        "ceil",
    "trunc",       "round",       "isnan",       "isinf",       "isfinite",     "where",
    "clip"};

/* One row of the list, as the test reads it. */
typedef struct row {
  dlb_op id;
  const char *id_name, *name, *loops, *lua;
  int nin;
  dlb_op_class cls;
} row;

#define ROW(ID, name, nin, cls, loops, lua, form)                                                  \
  {DLB_OP_##ID, #ID, #name, #loops, #lua, nin, DLB_CLASS_##cls},
static const row rows[] = {DLB_ELEMENTWISE_OPS(ROW)};
#undef ROW
enum { ROW_COUNT = sizeof rows / sizeof rows[0] };

static void test_ids_follow_the_rows(void) {
  CHECK_EQ_INT(ROW_COUNT, DLB_OP_COUNT);
  for (int k = 0; k < ROW_COUNT; k++) CHECK_EQ_INT(rows[k].id, k);
}

static void test_abi_order_is_kept(void) {
  const int published = (int)(sizeof abi_order / sizeof abi_order[0]);
  CHECK(ROW_COUNT >= published);
  for (int k = 0; k < published && k < ROW_COUNT; k++) CHECK_EQ_STR(rows[k].name, abi_order[k]);
}

static void test_names_are_unique(void) {
  for (int j = 0; j < ROW_COUNT; j++)
    for (int k = j + 1; k < ROW_COUNT; k++) {
      CHECK(strcmp(rows[j].name, rows[k].name) != 0);
      CHECK(strcmp(rows[j].lua, rows[k].lua) != 0);
    }
}

static void test_op_table_matches(void) {
  for (int k = 0; k < ROW_COUNT; k++) {
    const dlb_op_info *info = dlb_op_get(rows[k].id);
    CHECK_EQ_STR(info->name, rows[k].name);
    CHECK_EQ_INT(info->nin, rows[k].nin);
    CHECK_EQ_INT(info->cls, rows[k].cls);
    CHECK(rows[k].nin >= 1 && rows[k].nin <= 3);
  }
}

/* Each operation has its kernels in one file, for its loop dtypes only. */
static void test_kernels_as_declared(void) {
  for (int k = 0; k < ROW_COUNT; k++) {
    const long long declared = loop_dtypes(rows[k].loops);
    int in_arith = 0, in_math = 0;
    CHECK(declared > 0);
    for (int t = 0; t < DLB_DTYPE_COUNT; t++) {
      const int arith = dlb_arith_loop(rows[k].id, (dlb_dtype)t) != NULL;
      const int math = dlb_math_loop(rows[k].id, (dlb_dtype)t) != NULL;
      const int want = declared > 0 && (declared >> t & 1);
      if (arith + math != want)
        fprintf(stderr, "  %s over %s: %s\n", rows[k].id_name, dlb_dtype_get((dlb_dtype)t)->name,
                want ? "no kernel, although the list declares one"
                     : "a kernel the list does not declare");
      CHECK_EQ_INT(arith + math, want);
      in_arith |= arith;
      in_math |= math;
    }
    if (in_arith && in_math) fprintf(stderr, "  %s has kernels in both files\n", rows[k].id_name);
    CHECK(!(in_arith && in_math));
  }
}

static void test_lookups_outside_the_tables(void) {
  CHECK(dlb_arith_loop(DLB_OP_COUNT, DLB_INT32) == NULL);
  CHECK(dlb_math_loop(DLB_OP_COUNT, DLB_FLOAT32) == NULL);
  CHECK(dlb_arith_loop(DLB_OP_ADD, DLB_DTYPE_COUNT) == NULL);
  CHECK(dlb_math_loop(DLB_OP_SQRT, DLB_DTYPE_COUNT) == NULL);
  CHECK(dlb_arith_loop(DLB_OP_WHERE, DLB_DTYPE_COUNT) == NULL);
}

int main(void) {
  test_ids_follow_the_rows();
  test_abi_order_is_kept();
  test_names_are_unique();
  test_op_table_matches();
  test_kernels_as_declared();
  test_lookups_outside_the_tables();
  return check_done("test_ops");
}
