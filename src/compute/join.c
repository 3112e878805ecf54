/* join.c -- concat and stack: check the shapes, allocate the result, copy
 * each array into its slice of it. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/shape.h"
#include "../core/work.h"
#include "join.h"

/* SHAPE: array k (0-based) does not fit with the first. */
static dlb_status mismatch(const char *op, int64_t k, const dlb_array *first, const dlb_array *a,
                           const char *rule, dlb_error *err) {
  char sa[160], sf[160];
  dlb_shape_text(a->ndim, a->shape, sa, sizeof sa);
  dlb_shape_text(first->ndim, first->shape, sf, sizeof sf);
  dlb_fail(err, DLB_E_SHAPE, "%s: array %lld has shape %s where array 1 has %s (%s)", op,
           dlb_one_based(k), sa, sf, rule);
  dlb_error_hint(err, strcmp(op, "stack") == 0
                          ? "stack joins arrays of one shape along a new dim"
                          : "concat joins arrays whose extents differ only along the joined dim");
  return DLB_E_SHAPE;
}

dlb_status dlb_join_result(int stack, int64_t n, const dlb_array *const *arrays, int dim,
                           dlb_dtype *dtype, int *ndim, int64_t *shape, dlb_error *err) {
  const char *op = stack ? "stack" : "concat";
  const dlb_array *first;
  int nd;
  if (n < 1 || n > INT_MAX) {
    dlb_fail(err, DLB_E_ARGUMENT, "%s: needs 1 to %d arrays, got %lld", op, INT_MAX, (long long)n);
    dlb_error_hint(err, "the list holds at least one array (more than INT_MAX: join in parts)");
    return DLB_E_ARGUMENT;
  }
  for (int64_t k = 0; k < n; k++)
    if (!arrays[k]->buffer)
      return dlb_fail(err, DLB_E_DELETED, "%s: array %lld was deleted", op, dlb_one_based(k));
  first = arrays[0];
  nd = first->ndim;
  if (!stack && nd == 0) {
    dlb_fail(err, DLB_E_SHAPE, "concat: 0-d arrays have no dim to join along");
    dlb_error_hint(err, "dl.stack joins 0-d arrays into a 1-D array");
    return DLB_E_SHAPE;
  }
  if (stack && nd + 1 > DLB_MAX_NDIM)
    return dlb_fail(err, DLB_E_SHAPE, "stack: the result would have %d dims (at most %d)", nd + 1,
                    DLB_MAX_NDIM);
  if (dim < 0 || dim > (stack ? nd : nd - 1))
    return dlb_fail(err, DLB_E_INDEX, "%s: dimension %lld out of range for %d-D arrays", op,
                    dlb_one_based(dim), nd);
  *dtype = first->dtype;
  for (int d = 0; d < nd; d++) shape[d] = first->shape[d];
  for (int64_t k = 1; k < n; k++) {
    const dlb_array *a = arrays[k];
    if (a->ndim != nd)
      return mismatch(
          op, k, first, a,
          stack ? "all must have the same shape" : "all must have the same number of dims", err);
    for (int d = 0; d < nd; d++) {
      if (!stack && d == dim) {
        if (__builtin_add_overflow(shape[d], a->shape[d], &shape[d]))
          return dlb_fail(err, DLB_E_SHAPE, "concat: the joined extent overflows");
      } else if (a->shape[d] != first->shape[d]) {
        char rule[64];
        snprintf(rule, sizeof rule, "only dim %d may differ", dim + 1);
        return mismatch(op, k, first, a, stack ? "all must have the same shape" : rule, err);
      }
    }
    *dtype = dlb_promote_types(*dtype, a->dtype);
  }
  if (stack) {
    for (int d = nd; d > dim; d--) shape[d] = shape[d - 1];
    shape[dim] = n;
    nd++;
  }
  *ndim = nd;
  return DLB_OK;
}

/* Checks that the n arrays share one device (*where): joins are copies,
 * which every backend can do. */
static dlb_status check_devices(int64_t n, const dlb_array *const *arrays, dlb_backend *cpu,
                                dlb_placement *where, const char *op, dlb_error *err) {
  /* Not charged: a script's n is the length of a list of arrays it already
   * holds in Lua's heap (a userdata each, which Lua's allocator bounds), and
   * this list is 32 bytes an array for the call's duration. */
  dlb_operand *in = malloc((size_t)n * sizeof *in);
  dlb_status st;
  if (!in)
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "%s: no memory for %lld operands", op, (long long)n);
  for (int64_t k = 0; k < n; k++) in[k].array = arrays[k];
  st = dlb_check_operands_for((int)n, in, cpu, DLB_ANY_MEMORY, where, op, err);
  free(in);
  return st;
}

/* concat (stack 0) or stack (stack 1). */
static dlb_status join(int stack, int64_t n, const dlb_array *const *arrays, int dim,
                       dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  const char *op = stack ? "stack" : "concat";
  dlb_placement where;
  dlb_dtype dtype;
  int ndim;
  int64_t shape[DLB_MAX_NDIM], offset = 0, numel = 1;
  dlb_status st;
  dlb_work w;
  out->buffer = NULL;
  if ((st = dlb_join_result(stack, n, arrays, dim, &dtype, &ndim, shape, err)) != DLB_OK ||
      (st = check_devices(n, arrays, cpu, &where, op, err)) != DLB_OK)
    return st;
  for (int d = 0; d < ndim; d++)
    if (__builtin_mul_overflow(numel, shape[d], &numel)) numel = INT64_MAX;
  if ((st = dlb_work_begin(&w, where.backend->budget, numel, op, err)) != DLB_OK) return st;
  if ((st = dlb_array_allocate(out, where.backend, where.device_id, dtype, ndim, shape, 0, err)) !=
      DLB_OK)
    return dlb_work_end(&w, st, op, err);
  for (int64_t k = 0; k < n && st == DLB_OK; k++) {
    dlb_array part = *out; /* borrowed: a view of the result, which outlives it */
    if (stack) {
      st = dlb_view_select(&part, dim, k, err);
    } else {
      st = dlb_view_slice(&part, dim, offset, arrays[k]->shape[dim], 1, err);
      offset += arrays[k]->shape[dim];
    }
    if (st == DLB_OK && part.numel > 0) st = dlb_array_copy_into(&part, arrays[k], err);
  }
  st = dlb_work_end(&w, st, op, err);
  if (st != DLB_OK) dlb_array_release(out);
  return st;
}

dlb_status dlb_concat(int64_t n, const dlb_array *const *arrays, int dim, dlb_array *out,
                      dlb_backend *cpu, dlb_error *err) {
  return join(0, n, arrays, dim, out, cpu, err);
}

dlb_status dlb_stack(int64_t n, const dlb_array *const *arrays, int dim, dlb_array *out,
                     dlb_backend *cpu, dlb_error *err) {
  return join(1, n, arrays, dim, out, cpu, err);
}
