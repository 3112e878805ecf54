/* sort.c -- ordering (sort.h): shapes, dtypes and checks, then the sort and
 * search calls to the kernels of the input's memory (the host's:
 * backends/cpu/sort.c). unique is a sort that marks runs, then a mask, a
 * count, a scan and a scatter: kernels every backend with sorting has (the
 * first index of each value is the sort's position at each run start). */
#include <stddef.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/tensor.h"
#include "../core/work.h"
#include "elementwise.h"
#include "reduce.h"
#include "scan.h"
#include "select.h"
#include "sort.h"

/* One sort call: the tensors want names are new arrays of a's shape with
 * extent k along dim. */
static dlb_status run_sort(const dlb_array *a, const dlb_sort_options *o, int64_t k, int want,
                           const dlb_array *values, const dlb_array *indices, const dlb_array *runs,
                           const char *op, dlb_error *err) {
  const dlb_array *arrays[4] = {a, values, indices, runs};
  dlb_kernel_site site;
  dlb_sort_call c;
  dlb_status st;
  if ((st = dlb_kernel_site_open(arrays, 4, &site, err)) != DLB_OK) return st;
  memset(&c, 0, sizeof c);
  dlb_tensor_of(a, &c.in);
  c.dim = o->dim;
  c.descending = o->descending;
  c.stable = o->stable;
  c.want = want;
  c.k = k;
  if (values) dlb_tensor_of(values, &c.values);
  if (indices) dlb_tensor_of(indices, &c.indices);
  if (runs) dlb_tensor_of(runs, &c.runs);
  c.index_base = o->index_base;
  c.queue = site.queue;
  st = site.kernels->sort(site.ctx, &c);
  return dlb_kernel_site_end(&site, st, &c.error, op, arrays, 4, err);
}

static dlb_status sort_into(const dlb_array *a, const dlb_sort_options *o, dlb_array *values,
                            dlb_array *indices, dlb_backend *cpu, dlb_error *err) {
  const char *op = o->k >= 0 ? "topk" : "sort";
  const dlb_array *arrays[1] = {a};
  dlb_placement where;
  int64_t shape[DLB_MAX_NDIM], n, k;
  dlb_status st;
  if ((st = dlb_check_arrays_for(1, arrays, cpu, offsetof(dlb_kernels, sort), &where, op, err)) !=
      DLB_OK)
    return st;
  if (o->dim < 0 || o->dim >= a->ndim) {
    dlb_fail(err, DLB_E_INDEX, "%s: dim %d out of range for a %d-D array", op, o->dim + 1, a->ndim);
    dlb_error_hint(err, a->ndim ? "dims are 1-based; -1 is the last"
                                : "a 0-d array has no dim "
                                  "to sort along: sort a:reshape{1}");
    return DLB_E_INDEX;
  }
  n = a->shape[o->dim];
  k = o->k < 0 ? n : o->k;
  if (k > n) {
    dlb_fail(err, DLB_E_VALUE, "topk: k = %lld is larger than dim %d's extent %lld", (long long)k,
             o->dim + 1, (long long)n);
    dlb_error_hint(err, "k is at most the extent of the dim it selects along");
    return DLB_E_VALUE;
  }
  memcpy(shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
  shape[o->dim] = k;
  if (values && (st = dlb_array_allocate(values, where.backend, where.device_id, a->dtype, a->ndim,
                                         shape, 0, err)) != DLB_OK)
    return st;
  if (indices && (st = dlb_array_allocate(indices, where.backend, where.device_id, DLB_INT64,
                                          a->ndim, shape, 0, err)) != DLB_OK)
    goto fail;
  if ((values ? values->numel : indices ? indices->numel : 0) == 0) return DLB_OK;
  st = run_sort(a, o, k, (values ? DLB_SORT_VALUES : 0) | (indices ? DLB_SORT_INDICES : 0), values,
                indices, NULL, op, err);
  if (st == DLB_OK) return DLB_OK;
fail:
  if (values) dlb_array_release(values);
  if (indices) dlb_array_release(indices);
  return st;
}

dlb_status dlb_sort(const dlb_array *a, const dlb_sort_options *o, dlb_array *values,
                    dlb_array *indices, dlb_backend *cpu, dlb_error *err) {
  const char *op = o->k >= 0 ? "topk" : "sort";
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(a), a->numel, op, err);
  if (st != DLB_OK) return st;
  st = dlb_work_end(&w, sort_into(a, o, values, indices, cpu, err), op, err);
  if (st != DLB_OK) {
    if (values) dlb_array_release(values);
    if (indices) dlb_array_release(indices);
  }
  return st;
}

/* --- unique ----------------------------------------------------------------- */

/* counts[i] = starts[i + 1] - starts[i], the last one n - starts[last]. */
static dlb_status run_lengths(const dlb_array *starts, int64_t n, dlb_array *counts,
                              dlb_backend *cpu, dlb_error *err) {
  int64_t m = starts->shape[0];
  dlb_array ends = {0}, head, tail;
  dlb_scalar total = {DLB_SCALAR_INT, {.i = n}};
  dlb_operand in[2];
  dlb_status st = dlb_array_allocate(&ends, starts->buffer->backend, starts->buffer->device_id,
                                     DLB_INT64, 1, &m, 0, err);
  if (st != DLB_OK) return st;
  dlb_array_share(&head, &ends);
  dlb_array_share(&tail, starts);
  st = dlb_view_slice(&head, 0, 0, m - 1, 1, err);
  if (st == DLB_OK) st = dlb_view_slice(&tail, 0, 1, m - 1, 1, err);
  if (st == DLB_OK) st = dlb_array_copy_into(&head, &tail, err);
  dlb_array_release(&head);
  dlb_array_release(&tail);
  dlb_array_share(&head, &ends);
  if (st == DLB_OK) st = dlb_view_slice(&head, 0, m - 1, 1, 1, err);
  if (st == DLB_OK) st = dlb_array_fill(&head, &total, err);
  dlb_array_release(&head);
  in[0].array = &ends;
  in[1].array = starts;
  if (st == DLB_OK) st = dlb_elementwise(DLB_OP_SUBTRACT, in, counts, cpu, err);
  dlb_array_release(&ends);
  return st;
}

/* inverse[perm[j]] = the run of sorted element j (cumsum of the run starts),
 * from base. */
static dlb_status inverse_of(const dlb_array *runs, const dlb_array *perm, int64_t base,
                             dlb_array *inverse, dlb_backend *cpu, dlb_error *err) {
  dlb_array run_of = {0};
  dlb_scan_options so = {0, 1, DLB_INT64};
  int64_t n = runs->shape[0];
  dlb_status st = dlb_scan(DLB_SCAN_SUM, runs, &so, &run_of, cpu, err);
  if (st != DLB_OK) return st;
  if (base != 1) { /* the scan counts from 1 */
    dlb_operand in[2];
    dlb_array shifted = {0};
    in[0].array = &run_of;
    in[1].array = NULL;
    in[1].scalar.kind = DLB_SCALAR_INT;
    in[1].scalar.v.i = base - 1;
    st = dlb_elementwise(DLB_OP_ADD, in, &shifted, cpu, err);
    dlb_array_release(&run_of);
    if (st != DLB_OK) return st;
    run_of = shifted;
  }
  st = dlb_array_allocate(inverse, runs->buffer->backend, runs->buffer->device_id, DLB_INT64, 1, &n,
                          0, err);
  if (st == DLB_OK) st = dlb_put_along(inverse, perm, &run_of, 0, 0, cpu, err);
  dlb_array_release(&run_of);
  return st;
}

/* Each NaN of sorted starts a run of its own too (NumPy's equal_nan = False). */
static dlb_status split_nans(const dlb_array *sorted, dlb_array *runs, dlb_backend *cpu,
                             dlb_error *err) {
  dlb_kind kind = dlb_dtype_get(sorted->dtype)->kind;
  dlb_array nans = {0};
  dlb_operand in[2];
  dlb_status st;
  if (kind != DLB_KIND_FLOAT && kind != DLB_KIND_COMPLEX) return DLB_OK;
  in[0].array = sorted;
  if ((st = dlb_elementwise(DLB_OP_ISNAN, in, &nans, cpu, err)) != DLB_OK) return st;
  in[0].array = runs;
  in[1].array = &nans;
  st = dlb_elementwise(DLB_OP_LOGICAL_OR, in, runs, cpu, err); /* in place */
  dlb_array_release(&nans);
  return st;
}

/* index = perm[the run starts] + base: the first element of each run (the
 * sort is stable). */
static dlb_status first_of_runs(const dlb_array *runs, const dlb_array *perm, int64_t base,
                                dlb_array *index, dlb_backend *cpu, dlb_error *err) {
  dlb_array firsts = {0};
  dlb_operand in[2];
  dlb_status st = dlb_mask_select(perm, runs, base ? &firsts : index, cpu, err);
  if (st != DLB_OK || !base) return st;
  in[0].array = &firsts;
  in[1].array = NULL;
  in[1].scalar.kind = DLB_SCALAR_INT;
  in[1].scalar.v.i = base;
  st = dlb_elementwise(DLB_OP_ADD, in, index, cpu, err);
  dlb_array_release(&firsts);
  return st;
}

static dlb_status unique_into(const dlb_array *a, const dlb_unique_options *uo, dlb_array *values,
                              dlb_array *index, dlb_array *inverse, dlb_array *counts,
                              dlb_backend *cpu, dlb_error *err) {
  const char *op = "unique";
  const dlb_array *arrays[1] = {a};
  dlb_placement where;
  dlb_array flat = {0}, sorted = {0}, runs = {0}, perm = {0}, starts = {0};
  dlb_sort_options o = {0, 0, 1, -1, 0};
  int64_t n = a->numel, m;
  int want_perm = index || inverse;
  dlb_status st;
  if ((st = dlb_check_arrays_for(1, arrays, cpu, offsetof(dlb_kernels, sort), &where, op, err)) !=
      DLB_OK)
    return st;
  if ((st = dlb_flatten(a, &flat, err)) != DLB_OK) return st;
  st = dlb_array_allocate(&sorted, where.backend, where.device_id, a->dtype, 1, &n, 0, err);
  if (st == DLB_OK)
    st = dlb_array_allocate(&runs, where.backend, where.device_id, DLB_BOOL, 1, &n, 0, err);
  if (st == DLB_OK && want_perm)
    st = dlb_array_allocate(&perm, where.backend, where.device_id, DLB_INT64, 1, &n, 0, err);
  if (st == DLB_OK && n > 0)
    st =
        run_sort(&flat, &o, n, DLB_SORT_VALUES | DLB_SORT_RUNS | (want_perm ? DLB_SORT_INDICES : 0),
                 &sorted, want_perm ? &perm : NULL, &runs, op, err);
  if (st == DLB_OK && n > 0 && !uo->equal_nan) st = split_nans(&sorted, &runs, cpu, err);
  if (st == DLB_OK) st = dlb_mask_select(&sorted, &runs, values, cpu, err);
  if (st == DLB_OK && index) st = first_of_runs(&runs, &perm, uo->index_base, index, cpu, err);
  if (st == DLB_OK && counts) {
    m = values->shape[0];
    st = dlb_argwhere(&runs, 0, &starts, cpu, err);
    if (st == DLB_OK) st = dlb_view_reshape(&starts, 1, &m, err);
    if (st == DLB_OK && m > 0) st = run_lengths(&starts, n, counts, cpu, err);
    if (st == DLB_OK && m == 0)
      st = dlb_array_allocate(counts, where.backend, where.device_id, DLB_INT64, 1, &m, 0, err);
  }
  if (st == DLB_OK && inverse) st = inverse_of(&runs, &perm, uo->index_base, inverse, cpu, err);
  dlb_array_release(&flat);
  dlb_array_release(&sorted);
  dlb_array_release(&runs);
  dlb_array_release(&perm);
  dlb_array_release(&starts);
  return st;
}

dlb_status dlb_unique(const dlb_array *a, const dlb_unique_options *o, dlb_array *values,
                      dlb_array *index, dlb_array *inverse, dlb_array *counts, dlb_backend *cpu,
                      dlb_error *err) {
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(a), a->numel, "unique", err);
  if (st != DLB_OK) return st;
  st = dlb_work_end(&w, unique_into(a, o, values, index, inverse, counts, cpu, err), "unique", err);
  if (st != DLB_OK) {
    dlb_array_release(values);
    if (index) dlb_array_release(index);
    if (inverse) dlb_array_release(inverse);
    if (counts) dlb_array_release(counts);
  }
  return st;
}

/* --- searchsorted --------------------------------------------------------------- */

static dlb_status search_into(const dlb_array *sorted, const dlb_array *values, int right,
                              int64_t base, dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  const char *op = "searchsorted";
  const dlb_array *arrays[2] = {sorted, values};
  dlb_placement where;
  dlb_array s = {0}, v = {0};
  dlb_kernel_site site;
  dlb_search_call c;
  dlb_dtype common;
  dlb_status st;
  if ((st = dlb_check_arrays_for(2, arrays, cpu, offsetof(dlb_kernels, search), &where, op, err)) !=
      DLB_OK)
    return st;
  if (sorted->ndim != 1) {
    dlb_fail(err, DLB_E_SHAPE, "searchsorted: the sorted array must be 1-D, got %d-D",
             sorted->ndim);
    dlb_error_hint(err, "search a row at a time, or flatten it first with a:reshape{-1}");
    return DLB_E_SHAPE;
  }
  common = dlb_promote_types(sorted->dtype, values->dtype);
  if ((st = dlb_array_allocate(out, where.backend, where.device_id, DLB_INT64, values->ndim,
                               values->shape, 0, err)) != DLB_OK)
    return st;
  if (out->numel == 0) return DLB_OK;
  st = dlb_array_as_dtype(sorted, common, &s, err);
  if (st == DLB_OK) st = dlb_array_as_dtype(values, common, &v, err);
  if (st == DLB_OK) {
    const dlb_array *used[3] = {&s, &v, out};
    if ((st = dlb_kernel_site_open(used, 3, &site, err)) == DLB_OK) {
      memset(&c, 0, sizeof c);
      dlb_tensor_of(&s, &c.sorted);
      dlb_tensor_of(&v, &c.values);
      dlb_tensor_of(out, &c.out);
      c.right = right;
      c.index_base = base;
      c.queue = site.queue;
      if ((st = site.kernels->search(site.ctx, &c)) != DLB_OK)
        st = dlb_kernel_failed(sorted, st, &c.error, op, err);
      else st = dlb_kernel_site_close(&site, used, 3, err);
    }
  }
  dlb_array_release(&s);
  dlb_array_release(&v);
  if (st != DLB_OK) dlb_array_release(out);
  return st;
}

dlb_status dlb_searchsorted(const dlb_array *sorted, const dlb_array *values, int right,
                            int64_t base, dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(sorted), values->numel, "searchsorted", err);
  if (st != DLB_OK) return st;
  st = dlb_work_end(&w, search_into(sorted, values, right, base, out, cpu, err), "searchsorted",
                    err);
  if (st != DLB_OK) dlb_array_release(out); /* interrupted: the result goes */
  return st;
}
