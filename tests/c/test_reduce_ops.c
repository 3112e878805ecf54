/* test_reduce_ops.c -- the list of reductions (DLB_REDUCE_OPS, dlbridge.h)
 * against what is derived from it: the dlb_reduce_op ids in the order of
 * the rows, and that order frozen (it is the ABI); the core's table
 * (dlb_reduce_get); the core keeping each row's columns (the dtype and ddof
 * options honoured exactly where declared, an empty reduction failing
 * exactly without an identity and giving it otherwise); and the cpu
 * kernels, for exactly the loop dtypes the row declares, with every dtype
 * the core resolves running. The Lua functions come from the same rows by
 * the same macro (src/lua/reduce.c; spec/arguments_spec.lua calls each). */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#define FIXTURES_CPU
#include <math.h>
#include <string.h>
#include "backends/cpu/reduce_loops.h"
#include "compute/reduce.h"
#include "core/dtype.h"
#include "fixtures.h"
#include "loops_column.h"

/* The ids as first published: rows are only ever appended. */
static const char *const abi_order[] = {"sum",    "prod", "mean", "min",           "max", "argmin",
                                        "argmax", "all",  "any",  "count_nonzero", "std", "var"};

/* One row of the list, as the test reads it. */
typedef struct row {
  dlb_reduce_op id;
  const char *id_name, *name, *loops;
  dlb_reduce_rule rule;
  dlb_reduce_identity identity;
  int dtype, ddof, nan;
} row;

#define ROW(ID, name, rule, identity, loops, dtype, ddof, nan)                                     \
  {DLB_REDUCE_##ID, #ID,  #name, #loops, DLB_REDUCE_RULE_##rule, DLB_REDUCE_IDENTITY_##identity,   \
   dtype,           ddof, nan},
static const row rows[] = {DLB_REDUCE_OPS(ROW)};
#undef ROW
enum { ROW_COUNT = sizeof rows / sizeof rows[0] };

static dlb_reduce_options all_dims(void) {
  dlb_reduce_options o;
  memset(&o, 0, sizeof o);
  o.dims = DLB_REDUCE_ALL_DIMS;
  return o;
}

/* A 1-D array of dtype holding 1, 0, 1, 1 (any dtype holds them). */
static dlb_array ones_and_a_zero(dlb_dtype dtype) {
  const int64_t n = 4;
  dlb_array a = alloc(dtype, 1, &n);
  char *p = dlb_array_host_data(&a);
  size_t size = dlb_dtype_get(dtype)->itemsize;
  for (int k = 0; k < 4; k++) {
    dlb_scalar v = {.kind = DLB_SCALAR_INT, .v.i = k != 1};
    CHECK_EQ_INT(dlb_scalar_store(dtype, p + (size_t)k * size, &v, &err), DLB_OK);
  }
  return a;
}

/* A real scalar (bool, integer, float) as a double. */
static double real_value(const dlb_scalar *v) {
  return v->kind == DLB_SCALAR_BOOL ? v->v.b : v->kind == DLB_SCALAR_INT ? (double)v->v.i : v->v.f;
}

static void test_ids_follow_the_rows(void) {
  CHECK_EQ_INT(ROW_COUNT, DLB_REDUCE_OP_COUNT);
  for (int k = 0; k < ROW_COUNT; k++) CHECK_EQ_INT(rows[k].id, k);
}

static void test_abi_order_is_kept(void) {
  const int published = (int)(sizeof abi_order / sizeof abi_order[0]);
  CHECK(ROW_COUNT >= published);
  for (int k = 0; k < published && k < ROW_COUNT; k++) CHECK_EQ_STR(rows[k].name, abi_order[k]);
}

static void test_names_are_unique(void) {
  for (int j = 0; j < ROW_COUNT; j++)
    for (int k = j + 1; k < ROW_COUNT; k++) CHECK(strcmp(rows[j].name, rows[k].name) != 0);
}

static void test_table_matches(void) {
  for (int k = 0; k < ROW_COUNT; k++) {
    const dlb_reduce_info *info = dlb_reduce_get(rows[k].id);
    CHECK_EQ_STR(info->name, rows[k].name);
    CHECK_EQ_STR(dlb_reduce_name(rows[k].id), rows[k].name);
    CHECK_EQ_INT(info->rule, rows[k].rule);
    CHECK_EQ_INT(info->identity, rows[k].identity);
    CHECK_EQ_INT(info->takes_dtype, rows[k].dtype);
    CHECK_EQ_INT(info->takes_ddof, rows[k].ddof);
    CHECK_EQ_INT(info->skips_nan, rows[k].nan);
    CHECK(rows[k].dtype == 0 || rows[k].dtype == 1);
    CHECK(rows[k].ddof == 0 || rows[k].ddof == 1);
  }
  CHECK_EQ_STR(dlb_reduce_name(DLB_REDUCE_OP_COUNT), "reduce");
}

/* A nan-function's row is that of the reduction without "nan" (its name
 * minus the prefix, listed before it) but for the nan column. */
static void test_nan_rows_follow_their_reductions(void) {
  int nan_rows = 0;
  for (int k = 0; k < ROW_COUNT; k++) {
    const row *r = &rows[k], *plain = NULL;
    CHECK(r->nan == 0 || r->nan == 1);
    if (!r->nan) continue;
    nan_rows++;
    CHECK(strncmp(r->name, "nan", 3) == 0);
    for (int j = 0; j < k; j++)
      if (strcmp(rows[j].name, r->name + 3) == 0) plain = &rows[j];
    CHECK(plain != NULL);
    if (!plain) continue;
    CHECK_EQ_INT(plain->nan, 0);
    CHECK_EQ_INT(plain->rule, r->rule);
    CHECK_EQ_INT(plain->identity, r->identity);
    CHECK_EQ_STR(plain->loops, r->loops);
    CHECK_EQ_INT(plain->dtype, r->dtype);
    CHECK_EQ_INT(plain->ddof, r->ddof);
  }
  CHECK_EQ_INT(nan_rows, 9);
}

/* A nan-function gives what its reduction gives over the same elements
 * without the NaNs (1, 0, 1, 1 here, or a NaN only: see
 * test_empty_reductions). */
static void test_nan_rows_leave_nans_out(void) {
  const int64_t n = 6;
  dlb_array a = alloc(DLB_FLOAT64, 1, &n), b = ones_and_a_zero(DLB_FLOAT64);
  double *x = (double *)dlb_array_host_data(&a);
  const double values[6] = {NAN, 1, 0, NAN, 1, 1};
  memcpy(x, values, sizeof values);
  for (int k = 0; k < ROW_COUNT; k++) {
    const row *r = &rows[k];
    dlb_reduce_options o = all_dims();
    dlb_scalar got, want;
    int is_arg = r->rule == DLB_REDUCE_RULE_ARG;
    if (!r->nan) continue;
    CHECK_EQ_INT(dlb_reduce_value(r->id, &a, &o, cpu, &got, &err), DLB_OK);
    CHECK_EQ_INT(dlb_reduce_value(r->id, &b, &o, cpu, &want, &err), DLB_OK);
    if (is_arg) { /* indices into a: 1, 2, 4, 5 hold b's 0, 1, 2, 3 */
      static const int64_t of_b[4] = {1, 2, 4, 5};
      CHECK(want.v.i >= 0 && want.v.i < 4);
      if (want.v.i >= 0 && want.v.i < 4) CHECK_EQ_INT(got.v.i, of_b[want.v.i]);
    } else {
      CHECK(fabs(real_value(&got) - real_value(&want)) < 1e-12);
    }
  }
  dlb_array_release(&a);
  dlb_array_release(&b);
}

/* nansum's pairwise sum is sum's over a copy with the NaNs as 0, bit for
 * bit, past a run of 8192 and in every lane of a block (NaNs at every
 * 7th element); nanmean divides it by the count of the others. */
static void test_nansum_is_the_sum_of_a_cleaned_copy(void) {
  const int64_t n = 20011;
  dlb_array a = alloc(DLB_FLOAT32, 1, &n), clean = alloc(DLB_FLOAT32, 1, &n);
  float *x = (float *)dlb_array_host_data(&a), *y = (float *)dlb_array_host_data(&clean);
  dlb_reduce_options o = all_dims();
  dlb_scalar got, want, mean;
  int64_t numbers = 0;
  for (int64_t k = 0; k < n; k++) {
    y[k] = (float)((double)(k % 1013) * 0.37 - 150.0) / 7.0f;
    x[k] = k % 7 == 3 ? NAN : y[k];
    if (k % 7 == 3) y[k] = 0;
    else numbers++;
  }
  CHECK_EQ_INT(dlb_reduce_value(DLB_REDUCE_NANSUM, &a, &o, cpu, &got, &err), DLB_OK);
  CHECK_EQ_INT(dlb_reduce_value(DLB_REDUCE_SUM, &clean, &o, cpu, &want, &err), DLB_OK);
  CHECK(got.v.f == want.v.f);
  CHECK_EQ_INT(dlb_reduce_value(DLB_REDUCE_NANMEAN, &a, &o, cpu, &mean, &err), DLB_OK);
  CHECK(mean.v.f == (double)(float)(want.v.f / (double)numbers));
  dlb_array_release(&a);
  dlb_array_release(&clean);
}

/* Folds that order elements (min, max and their indices) start from the
 * first one and have no identity; the others start from their identity
 * (from the first element, a sum would count it twice). */
static void test_identity_fits_the_rule(void) {
  for (int k = 0; k < ROW_COUNT; k++) {
    const dlb_reduce_rule rule = rows[k].rule;
    const int orders = rule == DLB_REDUCE_RULE_EXTREME || rule == DLB_REDUCE_RULE_ARG;
    CHECK_EQ_INT(rows[k].identity == DLB_REDUCE_IDENTITY_NONE, orders);
  }
}

/* Whether the cpu has the kernel a row of this rule computes in for dtype
 * t: argmin/argmax's row updates (both directions), std/var's deviations,
 * else the fold. */
static int has_kernel(const row *r, dlb_dtype t) {
  switch (r->rule) {
    case DLB_REDUCE_RULE_ARG: {
      const int max = dlb_reduce_arg_update_loop(1, t) != NULL;
      CHECK_EQ_INT(dlb_reduce_arg_update_loop(0, t) != NULL, max);
      return max;
    }
    case DLB_REDUCE_RULE_SPREAD: {
      const int plain = dlb_reduce_deviation_loop(t, 0) != NULL;
      CHECK_EQ_INT(dlb_reduce_deviation_loop(t, 1) != NULL, plain);
      if (r->nan) CHECK_EQ_INT(dlb_reduce_count_numbers_loop(t) != NULL, plain);
      return plain;
    }
    default: return dlb_reduce_fold_loop(r->id, t) != NULL;
  }
}

/* Each reduction has kernels for its loop dtypes only; those that do not
 * fold have no fold kernels. */
static void test_kernels_as_declared(void) {
  for (int k = 0; k < ROW_COUNT; k++) {
    const row *r = &rows[k];
    const long long declared = loop_dtypes(r->loops);
    const int folds = r->rule != DLB_REDUCE_RULE_ARG && r->rule != DLB_REDUCE_RULE_SPREAD;
    CHECK(declared > 0);
    for (int t = 0; t < DLB_DTYPE_COUNT; t++) {
      const int want = declared > 0 && (declared >> t & 1), got = has_kernel(r, (dlb_dtype)t);
      if (got != want)
        fprintf(stderr, "  %s over %s: %s\n", r->id_name, dlb_dtype_get((dlb_dtype)t)->name,
                want ? "no kernel, although the list declares one"
                     : "a kernel the list does not declare");
      CHECK_EQ_INT(got, want);
      if (!folds) CHECK(dlb_reduce_fold_loop(r->id, (dlb_dtype)t) == NULL);
    }
  }
  CHECK(dlb_reduce_fold_loop(DLB_REDUCE_OP_COUNT, DLB_FLOAT64) == NULL);
  CHECK(dlb_reduce_fold_loop(DLB_REDUCE_SUM, DLB_DTYPE_COUNT) == NULL);
}

/* r over a of dtype t with options o: when the core gives it a result
 * dtype it runs (the kernels cover the dtypes the core computes in) and
 * gives that dtype; otherwise it refuses the dtype (DLB_E_DTYPE). */
static void check_runs(const row *r, dlb_dtype t, const dlb_reduce_options *o) {
  dlb_array a = ones_and_a_zero(t);
  dlb_dtype result = DLB_DTYPE_COUNT;
  dlb_scalar v;
  dlb_status st = dlb_reduce_result_type(r->id, t, o, &result, &err);
  if (st == DLB_OK) {
    dlb_array out = {0};
    st = dlb_reduce(r->id, &a, o, &out, cpu, &err);
    if (st != DLB_OK)
      fprintf(stderr, "  %s over %s%s%s: %s\n", r->id_name, dlb_dtype_get(t)->name,
              o->has_dtype ? " into " : "", o->has_dtype ? dlb_dtype_get(o->dtype)->name : "",
              err.message);
    CHECK_EQ_INT(st, DLB_OK);
    if (st == DLB_OK) CHECK_EQ_INT(out.dtype, result);
    dlb_array_release(&out);
    CHECK_EQ_INT(dlb_reduce_value(r->id, &a, o, cpu, &v, &err), DLB_OK);
  } else {
    CHECK_EQ_INT(st, DLB_E_DTYPE);
    CHECK_EQ_INT(dlb_reduce_value(r->id, &a, o, cpu, &v, &err), DLB_E_DTYPE);
  }
  dlb_array_release(&a);
}

static void test_every_resolved_dtype_runs(void) {
  for (int k = 0; k < ROW_COUNT; k++)
    for (int t = 0; t < DLB_DTYPE_COUNT; t++) {
      dlb_reduce_options o = all_dims();
      check_runs(&rows[k], (dlb_dtype)t, &o);
      for (int d = 0; rows[k].dtype && d < DLB_DTYPE_COUNT; d++) {
        o.has_dtype = 1;
        o.dtype = (dlb_dtype)d;
        check_runs(&rows[k], (dlb_dtype)t, &o);
      }
    }
}

/* The dtype option: taken (and setting the result's dtype) exactly where
 * the row says, refused with DLB_E_ARGUMENT elsewhere. */
static void test_dtype_option(void) {
  for (int k = 0; k < ROW_COUNT; k++) {
    dlb_reduce_options o = all_dims();
    dlb_dtype result = DLB_DTYPE_COUNT;
    o.has_dtype = 1;
    o.dtype = DLB_FLOAT64;
    if (rows[k].dtype) {
      CHECK_EQ_INT(dlb_reduce_result_type(rows[k].id, DLB_FLOAT32, &o, &result, &err), DLB_OK);
      CHECK_EQ_INT(result, DLB_FLOAT64);
    } else {
      CHECK_EQ_INT(dlb_reduce_result_type(rows[k].id, DLB_FLOAT32, &o, &result, &err),
                   DLB_E_ARGUMENT);
    }
  }
}

/* The ddof option changes the result exactly where the row takes it. */
static void test_ddof_option(void) {
  dlb_array a = ones_and_a_zero(DLB_FLOAT64);
  for (int k = 0; k < ROW_COUNT; k++) {
    dlb_reduce_options o = all_dims();
    dlb_scalar plain, with_ddof;
    if (dlb_reduce_value(rows[k].id, &a, &o, cpu, &plain, &err) != DLB_OK) {
      CHECK(0);
      continue;
    }
    o.ddof = 1;
    CHECK_EQ_INT(dlb_reduce_value(rows[k].id, &a, &o, cpu, &with_ddof, &err), DLB_OK);
    CHECK_EQ_INT(plain.kind, with_ddof.kind);
    CHECK_EQ_INT(real_value(&plain) != real_value(&with_ddof), rows[k].ddof);
  }
  dlb_array_release(&a);
}

/* An empty reduction fails exactly where the row has no identity (NumPy's
 * ValueError); otherwise it gives the identity (mean, std and var: NaN, the
 * identity over a count of 0). */
static void test_empty_reductions(void) {
  const int64_t none = 0;
  dlb_array e = alloc(DLB_FLOAT64, 1, &none);
  for (int k = 0; k < ROW_COUNT; k++) {
    const row *r = &rows[k];
    dlb_reduce_options o = all_dims();
    dlb_scalar v;
    dlb_status st = dlb_reduce_value(r->id, &e, &o, cpu, &v, &err);
    if (r->identity == DLB_REDUCE_IDENTITY_NONE) {
      CHECK_EQ_INT(st, DLB_E_VALUE);
      continue;
    }
    CHECK_EQ_INT(st, DLB_OK);
    if (st != DLB_OK) continue;
    if (r->rule == DLB_REDUCE_RULE_MEAN || r->rule == DLB_REDUCE_RULE_SPREAD) {
      CHECK(v.kind == DLB_SCALAR_FLOAT && isnan(v.v.f));
    } else {
      CHECK(real_value(&v) == (r->identity == DLB_REDUCE_IDENTITY_ONE ? 1.0 : 0.0));
    }
  }
  dlb_array_release(&e);
}

/* A slice of NaNs only: nanargmin and nanargmax fail (NumPy's ValueError
 * "All-NaN slice encountered"); nansum gives 0, nanprod 1, the others NaN. */
static void test_nan_slices(void) {
  const int64_t n = 3;
  dlb_array a = alloc(DLB_FLOAT32, 1, &n);
  float *x = (float *)dlb_array_host_data(&a);
  for (int k = 0; k < 3; k++) x[k] = NAN;
  for (int k = 0; k < ROW_COUNT; k++) {
    const row *r = &rows[k];
    dlb_reduce_options o = all_dims();
    dlb_scalar v;
    dlb_status st;
    if (!r->nan) continue;
    st = dlb_reduce_value(r->id, &a, &o, cpu, &v, &err);
    if (r->rule == DLB_REDUCE_RULE_ARG) {
      CHECK_EQ_INT(st, DLB_E_VALUE);
      continue;
    }
    CHECK_EQ_INT(st, DLB_OK);
    if (st != DLB_OK) continue;
    if (r->rule == DLB_REDUCE_RULE_ACCUMULATE)
      CHECK(real_value(&v) == (r->identity == DLB_REDUCE_IDENTITY_ONE ? 1.0 : 0.0));
    else CHECK(v.kind == DLB_SCALAR_FLOAT && isnan(v.v.f));
  }
  dlb_array_release(&a);
}

int main(void) {
  if (!cpu_open()) return 1;
  test_ids_follow_the_rows();
  test_abi_order_is_kept();
  test_names_are_unique();
  test_table_matches();
  test_nan_rows_follow_their_reductions();
  test_nan_rows_leave_nans_out();
  test_nansum_is_the_sum_of_a_cleaned_copy();
  test_identity_fits_the_rule();
  test_kernels_as_declared();
  test_every_resolved_dtype_runs();
  test_dtype_option();
  test_ddof_option();
  test_empty_reductions();
  test_nan_slices();
  cpu_close();
  return check_done("test_reduce_ops");
}
