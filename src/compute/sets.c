/* sets.c -- isin and lexsort (sets.h), planned from the kernels every
 * backend with sorting has: sort, search, take, put and element-wise ones.
 *
 * isin sorts the test values once, finds where each element of a would go
 * among them (a binary search: n log m for n elements and m test values)
 * and compares the test value there with the element: it is in the set
 * exactly when that one == it, since the values equal to it sort together
 * and first at that place (dlbridge.h's order: -0 with +0). Integer test
 * values of a small range go to a table of flags instead, as NumPy's
 * (isin_by_table).
 *
 * lexsort is a stable argsort by each key from the least significant one,
 * each later key read in the order of the keys before it: NumPy's own way,
 * with linear-time radix sorts on the host. */
#include <stddef.h>
#include "../core/copy.h"
#include "../core/shape.h"
#include "../core/work.h"
#include "elementwise.h"
#include "select.h"
#include "sets.h"
#include "sort.h"
#include "types.h"

/* --- isin --------------------------------------------------------------------- */

/* The test values flattened, in common's dtype, sorted (1-D, new). */
static dlb_status sorted_tests(const dlb_array *test, dlb_dtype common, dlb_array *sorted,
                               dlb_backend *cpu, dlb_error *err) {
  dlb_array flat = {0}, cast = {0};
  dlb_sort_options o = {0, 0, 0, -1, 0};
  dlb_status st = dlb_flatten(test, &flat, err);
  if (st == DLB_OK) st = dlb_array_as_dtype(&flat, common, &cast, err);
  if (st == DLB_OK) st = dlb_sort(&cast, &o, sorted, NULL, cpu, err);
  dlb_array_release(&flat);
  dlb_array_release(&cast);
  return st;
}

/* sorted (m > 0 elements) and its last element once more (new, m + 1):
 * every insertion point, 0 to m, picks a test value. */
static dlb_status with_last_twice(const dlb_array *sorted, dlb_array *out, dlb_error *err) {
  int64_t m = sorted->shape[0], n = m + 1;
  dlb_array part = {0}, last = {0};
  dlb_status st = dlb_array_allocate(out, sorted->buffer->backend, sorted->buffer->device_id,
                                     sorted->dtype, 1, &n, 0, err);
  if (st != DLB_OK) return st;
  dlb_array_share(&part, out);
  dlb_array_share(&last, sorted);
  st = dlb_view_slice(&part, 0, 0, m, 1, err);
  if (st == DLB_OK) st = dlb_array_copy_into(&part, sorted, err);
  if (st == DLB_OK) st = dlb_view_slice(&last, 0, m - 1, 1, 1, err);
  dlb_array_release(&part);
  dlb_array_share(&part, out);
  if (st == DLB_OK) st = dlb_view_slice(&part, 0, m, 1, 1, err);
  if (st == DLB_OK) st = dlb_array_copy_into(&part, &last, err);
  dlb_array_release(&part);
  dlb_array_release(&last);
  if (st != DLB_OK) dlb_array_release(out);
  return st;
}

/* out = (sorted[at] == a), or != when invert: at is where each element of
 * a goes in sorted (from 0); sorted ends in its last element twice, which
 * is unequal to an element that goes after it. */
static dlb_status compare_found(const dlb_array *a, const dlb_array *sorted, const dlb_array *at,
                                int invert, dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  dlb_operand in[2];
  dlb_array found = {0};
  dlb_status st;
  if ((st = dlb_take(sorted, at, 0, 0, &found, cpu, err)) != DLB_OK) return st;
  in[0].array = &found;
  in[1].array = a;
  st = dlb_elementwise(invert ? DLB_OP_NOT_EQUAL : DLB_OP_EQUAL, in, out, cpu, err);
  dlb_array_release(&found);
  return st;
}

/* --- isin of integers of a small range ------------------------------------------ */

/* NumPy's "table" kind, for an integer common dtype whose test values span
 * at most 6 (n + m) values (NumPy's bound): a table of flags over [base,
 * top], one below the smallest test value lo and one above the largest hi
 * where the dtype has them, set at the test values (inverted: cleared); an
 * element's answer is the flag of clip(x, base, top) - base, the end slots
 * answering for everything outside [lo, hi]. Three linear passes over a
 * (a clip, a subtraction, a gather) instead of a binary search each. The
 * arithmetic is in 64 bits (uint64 for uint64, else int64): narrower
 * integers would wrap. */

static int integer_dtype(dlb_dtype t) {
  dlb_kind kind = dlb_dtype_get(t)->kind;
  return kind == DLB_KIND_INT || kind == DLB_KIND_UINT;
}

/* An integer scalar's value modulo 2^64, and back (as uint64 when unsigned). */
static uint64_t bits_of(const dlb_scalar *v) {
  return v->kind == DLB_SCALAR_UINT ? v->v.u : (uint64_t)v->v.i;
}

static dlb_scalar scalar_of(uint64_t bits, int is_unsigned) {
  dlb_scalar v;
  if (is_unsigned && bits > (uint64_t)INT64_MAX) {
    v.kind = DLB_SCALAR_UINT;
    v.v.u = bits;
  } else {
    v.kind = DLB_SCALAR_INT;
    v.v.i = (int64_t)bits;
  }
  return v;
}

/* table (new, bool, count) = !invert at tests - base, invert elsewhere. */
static dlb_status flag_table(const dlb_array *tests, const dlb_scalar *base, int64_t count,
                             int invert, dlb_array *table, dlb_backend *cpu, dlb_error *err) {
  dlb_scalar rest = {DLB_SCALAR_BOOL, {.b = invert}}, hit = {DLB_SCALAR_BOOL, {.b = !invert}};
  dlb_array offsets = {0}, flag = {0};
  dlb_operand in[2];
  dlb_status st = dlb_array_allocate(table, tests->buffer->backend, tests->buffer->device_id,
                                     DLB_BOOL, 1, &count, 0, err);
  if (st == DLB_OK) st = dlb_array_fill(table, &rest, err);
  if (st == DLB_OK)
    st = dlb_array_allocate(&flag, tests->buffer->backend, tests->buffer->device_id, DLB_BOOL, 0,
                            NULL, 0, err);
  if (st == DLB_OK) st = dlb_array_fill(&flag, &hit, err);
  in[0].array = tests;
  in[1].array = NULL;
  in[1].scalar = *base;
  if (st == DLB_OK) st = dlb_elementwise(DLB_OP_SUBTRACT, in, &offsets, cpu, err);
  if (st == DLB_OK) st = dlb_put_along(table, &offsets, &flag, 0, 0, cpu, err);
  dlb_array_release(&offsets);
  dlb_array_release(&flag);
  return st;
}

/* out = table[clip(a, base, top) - base]. */
static dlb_status look_up(const dlb_array *a, const dlb_array *table, const dlb_scalar *base,
                          const dlb_scalar *top, dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  dlb_array offsets = {0};
  dlb_operand in[3];
  dlb_status st;
  in[0].array = a;
  in[1].array = in[2].array = NULL;
  in[1].scalar = *base;
  in[2].scalar = *top;
  if ((st = dlb_elementwise(DLB_OP_CLIP, in, &offsets, cpu, err)) != DLB_OK) return st;
  in[0].array = &offsets;
  st = dlb_elementwise(DLB_OP_SUBTRACT, in, &offsets, cpu, err); /* in place */
  if (st == DLB_OK) st = dlb_take(table, &offsets, 0, 0, out, cpu, err);
  dlb_array_release(&offsets);
  return st;
}

/* isin by a table where the test values (tests: sorted, 1-D, m > 0, of the
 * common dtype, an integer one) span few values; *done 0 (nothing written)
 * otherwise. */
static dlb_status isin_by_table(const dlb_array *a, const dlb_array *tests, int invert,
                                dlb_array *out, int *done, dlb_backend *cpu, dlb_error *err) {
  int64_t first = 0, last = tests->numel - 1;
  dlb_dtype wide = tests->dtype == DLB_UINT64 ? DLB_UINT64 : DLB_INT64;
  int is_unsigned = wide == DLB_UINT64;
  uint64_t lo, hi, base, top, most;
  dlb_scalar v, base_value, top_value;
  dlb_array table = {0}, wide_tests = {0}, wide_a = {0};
  dlb_status st;
  *done = 0;
  if (!integer_dtype(tests->dtype)) return DLB_OK;
  if ((st = dlb_array_get(tests, &first, &v, err)) != DLB_OK) return st;
  lo = bits_of(&v);
  if ((st = dlb_array_get(tests, &last, &v, err)) != DLB_OK) return st;
  hi = bits_of(&v);
  most = 6 * ((uint64_t)a->numel + (uint64_t)tests->numel); /* (each below 2^62) */
  if (hi - lo >= most) return DLB_OK; /* (hi - lo: exact modulo 2^64, as hi >= lo) */
  /* One slot more on each side, where the dtype has a value there. */
  base = lo == (is_unsigned ? 0 : (uint64_t)INT64_MIN) ? lo : lo - 1;
  top = hi == (is_unsigned ? UINT64_MAX : (uint64_t)INT64_MAX) ? hi : hi + 1;
  base_value = scalar_of(base, is_unsigned);
  top_value = scalar_of(top, is_unsigned);
  *done = 1;
  st = dlb_array_as_dtype(tests, wide, &wide_tests, err);
  if (st == DLB_OK) st = dlb_array_as_dtype(a, wide, &wide_a, err);
  if (st == DLB_OK)
    st = flag_table(&wide_tests, &base_value, (int64_t)(top - base) + 1, invert, &table, cpu, err);
  if (st == DLB_OK) st = look_up(&wide_a, &table, &base_value, &top_value, out, cpu, err);
  dlb_array_release(&table);
  dlb_array_release(&wide_tests);
  dlb_array_release(&wide_a);
  return st;
}

static dlb_status isin_into(const dlb_array *a, const dlb_array *test, int invert, dlb_array *out,
                            dlb_backend *cpu, dlb_error *err) {
  const char *op = "isin";
  const dlb_array *arrays[2] = {a, test};
  dlb_placement where;
  dlb_dtype common = dlb_promote_types(a->dtype, test->dtype);
  dlb_array sorted = {0}, padded = {0}, cast = {0}, at = {0};
  int by_table = 0;
  dlb_status st;
  if ((st = dlb_check_arrays_for(2, arrays, cpu, offsetof(dlb_kernels, sort), &where, op, err)) !=
          DLB_OK ||
      (st = dlb_check_arrays_for(2, arrays, cpu, offsetof(dlb_kernels, search), &where, op, err)) !=
          DLB_OK)
    return st;
  if (a->numel == 0 || test->numel == 0) { /* nothing to compare: all out (or all in, inverted) */
    dlb_scalar none = {DLB_SCALAR_BOOL, {.b = invert}};
    st = dlb_array_allocate(out, where.backend, where.device_id, DLB_BOOL, a->ndim, a->shape, 0,
                            err);
    if (st == DLB_OK && out->numel > 0 && (st = dlb_array_fill(out, &none, err)) != DLB_OK)
      dlb_array_release(out);
    return st;
  }
  st = sorted_tests(test, common, &sorted, cpu, err);
  if (st == DLB_OK) st = dlb_array_as_dtype(a, common, &cast, err);
  if (st == DLB_OK) st = isin_by_table(&cast, &sorted, invert, out, &by_table, cpu, err);
  if (st == DLB_OK && !by_table) st = dlb_searchsorted(&sorted, &cast, 0, 0, &at, cpu, err);
  if (st == DLB_OK && !by_table) st = with_last_twice(&sorted, &padded, err);
  if (st == DLB_OK && !by_table) st = compare_found(&cast, &padded, &at, invert, out, cpu, err);
  dlb_array_release(&sorted);
  dlb_array_release(&padded);
  dlb_array_release(&cast);
  dlb_array_release(&at);
  return st;
}

dlb_status dlb_isin(const dlb_array *a, const dlb_array *test, int invert, dlb_array *out,
                    dlb_backend *cpu, dlb_error *err) {
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(a), a->numel, "isin", err);
  if (st != DLB_OK) return st;
  st = dlb_work_end(&w, isin_into(a, test, invert, out, cpu, err), "isin", err);
  if (st != DLB_OK) dlb_array_release(out); /* interrupted: the result goes */
  return st;
}

/* --- lexsort ------------------------------------------------------------------ */

/* Where the keys are: a list of arrays, or the sub-arrays of a stack. */
typedef struct key_source {
  const dlb_array *const *list;
  const dlb_array *stack;
  int count;
} key_source;

/* Key i of src as a new reference in *key. */
static dlb_status key_at(const key_source *src, int i, dlb_array *key, dlb_error *err) {
  if (src->list) {
    dlb_array_share(key, src->list[i]);
    return DLB_OK;
  }
  dlb_status st;
  dlb_array_share(key, src->stack);
  if ((st = dlb_view_select(key, 0, i, err)) != DLB_OK) dlb_array_release(key);
  return st;
}

/* The keys' checks: at least one, one shape of at least one dim. */
static dlb_status check_keys(const key_source *src, int64_t *numel, dlb_backend *cpu,
                             dlb_error *err) {
  const char *op = "lexsort";
  dlb_array first = {0}, key = {0};
  dlb_status st;
  if (src->count < 1) {
    dlb_fail(err, DLB_E_VALUE, "lexsort: no keys to sort by");
    dlb_error_hint(err, "give one key or more: dl.lexsort{names, scores}");
    return DLB_E_VALUE;
  }
  if ((st = key_at(src, 0, &first, err)) != DLB_OK) return st;
  if (first.ndim == 0) {
    dlb_array_release(&first);
    dlb_fail(err, DLB_E_SHAPE, "lexsort: the keys are 0-d: there is no dim to sort along");
    dlb_error_hint(err, "each key is an array of at least one dim (sorted along its last)");
    return DLB_E_SHAPE;
  }
  *numel = first.numel;
  for (int i = 0; i < src->count && st == DLB_OK; i++) {
    const dlb_array *arrays[1] = {&key};
    dlb_placement where;
    if ((st = key_at(src, i, &key, err)) != DLB_OK) break;
    if (!dlb_shape_equal(key.ndim, key.shape, first.ndim, first.shape)) {
      st = dlb_fail(err, DLB_E_SHAPE, "lexsort: key %d's shape differs from key 1's", i + 1);
      dlb_error_hint(err, "every key has the same shape (one value per row for each key)");
    } else {
      st = dlb_check_arrays_for(1, arrays, cpu, offsetof(dlb_kernels, sort), &where, op, err);
    }
    dlb_array_release(&key);
  }
  dlb_array_release(&first);
  return st;
}

/* perm = perm[argsort(key[perm])] along dim, stably: the order by key, ties
 * in perm's order. perm counts from 0. */
static dlb_status refine(dlb_array *perm, const dlb_array *key, int dim, dlb_backend *cpu,
                         dlb_error *err) {
  dlb_sort_options o = {dim, 0, 1, -1, 0};
  dlb_array gathered = {0}, order = {0}, next = {0};
  dlb_status st = dlb_take_along(key, perm, dim, 0, &gathered, cpu, err);
  if (st == DLB_OK) st = dlb_sort(&gathered, &o, NULL, &order, cpu, err);
  if (st == DLB_OK) st = dlb_take_along(perm, &order, dim, 0, &next, cpu, err);
  dlb_array_release(&gathered);
  dlb_array_release(&order);
  if (st != DLB_OK) return st;
  dlb_array_release(perm);
  *perm = next;
  return DLB_OK;
}

static dlb_status lexsort_into(const key_source *src, int64_t base, dlb_array *out,
                               dlb_backend *cpu, dlb_error *err) {
  dlb_array key = {0}, perm = {0};
  dlb_sort_options o = {0, 0, 1, -1, 0};
  dlb_operand in[2];
  dlb_status st;
  if ((st = key_at(src, 0, &key, err)) != DLB_OK) return st;
  o.dim = key.ndim - 1;
  o.index_base = src->count == 1 ? base : 0;
  st = dlb_sort(&key, &o, NULL, src->count == 1 ? out : &perm, cpu, err);
  dlb_array_release(&key);
  if (src->count == 1 || st != DLB_OK) return st;
  for (int i = 1; i < src->count && st == DLB_OK; i++) {
    if ((st = key_at(src, i, &key, err)) != DLB_OK) break;
    st = refine(&perm, &key, o.dim, cpu, err);
    dlb_array_release(&key);
  }
  in[0].array = &perm;
  in[1].array = NULL;
  in[1].scalar.kind = DLB_SCALAR_INT;
  in[1].scalar.v.i = base;
  if (st == DLB_OK) st = dlb_elementwise(DLB_OP_ADD, in, out, cpu, err);
  dlb_array_release(&perm);
  return st;
}

static dlb_status lexsort_run(const key_source *src, int64_t base, dlb_array *out, dlb_backend *cpu,
                              dlb_error *err) {
  int64_t numel = 0;
  dlb_work w;
  dlb_status st = check_keys(src, &numel, cpu, err);
  if (st != DLB_OK) return st;
  numel = numel > INT64_MAX / src->count ? INT64_MAX : numel * src->count;
  if ((st = dlb_work_begin(&w, dlb_array_budget(src->list ? src->list[0] : src->stack), numel,
                           "lexsort", err)) != DLB_OK)
    return st;
  st = dlb_work_end(&w, lexsort_into(src, base, out, cpu, err), "lexsort", err);
  if (st != DLB_OK) dlb_array_release(out);
  return st;
}

dlb_status dlb_lexsort(const dlb_array *const *keys, int nkeys, int64_t index_base, dlb_array *out,
                       dlb_backend *cpu, dlb_error *err) {
  key_source src = {keys, NULL, nkeys};
  return lexsort_run(&src, index_base, out, cpu, err);
}

dlb_status dlb_lexsort_stacked(const dlb_array *stack, int64_t index_base, dlb_array *out,
                               dlb_backend *cpu, dlb_error *err) {
  key_source src = {NULL, stack, 0};
  if (stack->ndim < 2)
    return dlb_fail(err, DLB_E_SHAPE, "lexsort: a stack of keys has at least 2 dims, got %d",
                    stack->ndim);
  if (stack->shape[0] > 0x7fffffff)
    return dlb_fail(err, DLB_E_VALUE, "lexsort: %lld keys are too many",
                    (long long)stack->shape[0]);
  src.count = (int)stack->shape[0];
  return lexsort_run(&src, index_base, out, cpu, err);
}
