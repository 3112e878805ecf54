/* scan.c -- scans, differences and counts (scan.h): dtypes, shapes and
 * checks, then the scan and count calls to the kernels of the input's
 * memory (the host's: backends/cpu/scan.c); diff is element-wise. */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/tensor.h"
#include "../core/work.h"
#include "elementwise.h"
#include "reduce.h"
#include "scan.h"

static dlb_kind kind_of(dlb_dtype t) { return dlb_dtype_get(t)->kind; }

/* --- scans ------------------------------------------------------------------ */

dlb_dtype dlb_scan_result_type(dlb_dtype in, const dlb_scan_options *o) {
  if (o->has_dtype) return o->dtype;
  switch (kind_of(in)) {
    case DLB_KIND_BOOL:
    case DLB_KIND_INT: return DLB_INT64;
    case DLB_KIND_UINT: return DLB_UINT64;
    default: return in;
  }
}

static dlb_status run_scan(int op, const dlb_array *a, int dim, const dlb_array *out,
                           const char *name, dlb_error *err) {
  const dlb_array *arrays[2] = {a, out};
  dlb_kernel_site site;
  dlb_scan_call c;
  dlb_status st;
  if (out->numel == 0) return DLB_OK;
  if ((st = dlb_kernel_site_open(arrays, 2, &site, err)) != DLB_OK) return st;
  memset(&c, 0, sizeof c);
  c.op = op;
  c.dim = dim;
  dlb_tensor_of(a, &c.in);
  dlb_tensor_of(out, &c.out);
  c.queue = site.queue;
  st = site.kernels->scan(site.ctx, &c);
  return dlb_kernel_site_end(&site, st, &c.error, name, arrays, 2, err);
}

static dlb_status scan_into(int op, const dlb_array *a, const dlb_scan_options *o, dlb_array *out,
                            dlb_backend *cpu, dlb_error *err) {
  const char *name = op == DLB_SCAN_PROD ? "cumprod" : "cumsum";
  const dlb_array *arrays[1] = {a};
  dlb_placement where;
  dlb_dtype result = dlb_scan_result_type(a->dtype, o);
  dlb_array tmp = {0};
  dlb_status st;
  if ((st = dlb_check_arrays_for(1, arrays, cpu, offsetof(dlb_kernels, scan), &where, name, err)) !=
      DLB_OK)
    return st;
  if ((unsigned)result >= DLB_DTYPE_COUNT)
    return dlb_fail(err, DLB_E_DTYPE, "%s: invalid dtype", name);
  if (a->ndim > 0 && (o->dim < 0 || o->dim >= a->ndim))
    return dlb_fail(err, DLB_E_INDEX, "%s: dim %d out of range for a %d-D array", name, o->dim + 1,
                    a->ndim);
  if (out->buffer == NULL) {
    st = dlb_array_allocate(out, where.backend, where.device_id, result, a->ndim, a->shape, 0, err);
    if (st == DLB_OK && (st = run_scan(op, a, o->dim, out, name, err)) != DLB_OK)
      dlb_array_release(out);
    return st;
  }
  if ((st = dlb_check_out(out, result, a->ndim, a->shape, &where, name, err)) != DLB_OK) return st;
  if (out->dtype == result && (!dlb_arrays_overlap(out, a) || dlb_arrays_same_layout(out, a)))
    return run_scan(op, a, o->dim, out, name, err);
  st = dlb_array_allocate(&tmp, where.backend, where.device_id, result, a->ndim, a->shape, 0, err);
  if (st == DLB_OK) st = run_scan(op, a, o->dim, &tmp, name, err);
  if (st == DLB_OK) st = dlb_array_copy_into(out, &tmp, err);
  dlb_array_release(&tmp);
  return st;
}

dlb_status dlb_scan(int op, const dlb_array *a, const dlb_scan_options *o, dlb_array *out,
                    dlb_backend *cpu, dlb_error *err) {
  const char *name = op == DLB_SCAN_PROD ? "cumprod" : "cumsum";
  int fresh = out->buffer == NULL;
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(a), a->numel, name, err);
  if (st != DLB_OK) return st;
  st = dlb_work_end(&w, scan_into(op, a, o, out, cpu, err), name, err);
  if (st != DLB_OK && fresh) dlb_array_release(out);
  return st;
}

/* --- diff ------------------------------------------------------------------- */

dlb_status dlb_diff(const dlb_array *a, int64_t n, int dim, dlb_array *out, dlb_backend *cpu,
                    dlb_error *err) {
  dlb_array cur;
  dlb_status st = DLB_OK;
  if (n < 0) {
    dlb_fail(err, DLB_E_VALUE, "diff: order must be non-negative but got %lld", (long long)n);
    dlb_error_hint(err, "n is how many times to difference: 1 (the default) or more");
    return DLB_E_VALUE;
  }
  if (dim < 0 || dim >= a->ndim)
    return dlb_fail(err, DLB_E_INDEX, "diff: dim %d out of range for a %d-D array", dim + 1,
                    a->ndim);
  dlb_array_share(&cur, a);
  for (int64_t i = 0; i < n && st == DLB_OK; i++) {
    int64_t len = cur.shape[dim], m = len > 0 ? len - 1 : 0;
    dlb_array hi, lo, next = {0};
    dlb_operand in[2];
    dlb_array_share(&hi, &cur);
    dlb_array_share(&lo, &cur);
    st = dlb_view_slice(&hi, dim, len > 0 ? 1 : 0, m, 1, err);
    if (st == DLB_OK) st = dlb_view_slice(&lo, dim, 0, m, 1, err);
    in[0].array = &hi;
    in[1].array = &lo;
    if (st == DLB_OK)
      st = dlb_elementwise(a->dtype == DLB_BOOL ? DLB_OP_NOT_EQUAL : DLB_OP_SUBTRACT, in, &next,
                           cpu, err);
    dlb_array_release(&hi);
    dlb_array_release(&lo);
    dlb_array_release(&cur);
    cur = next;
    if (m == 0) break; /* nothing left to difference */
  }
  if (st != DLB_OK) {
    dlb_array_release(&cur);
    return st;
  }
  *out = cur;
  return DLB_OK;
}

/* --- counts ----------------------------------------------------------------- */

static dlb_status run_count(const dlb_array *in, const dlb_array *weights, const dlb_array *edges,
                            int uniform, const dlb_array *counts, const char *op, dlb_error *err) {
  const dlb_array *arrays[4] = {in, weights, edges, counts};
  dlb_kernel_site site;
  dlb_count_call c;
  dlb_status st;
  if ((st = dlb_kernel_site_open(arrays, 4, &site, err)) != DLB_OK) return st;
  memset(&c, 0, sizeof c);
  dlb_tensor_of(in, &c.in);
  if (weights) dlb_tensor_of(weights, &c.weights);
  c.has_weights = weights != NULL;
  if (edges) dlb_tensor_of(edges, &c.edges);
  c.uniform = uniform;
  dlb_tensor_of(counts, &c.counts);
  c.queue = site.queue;
  st = site.kernels->count(site.ctx, &c);
  return dlb_kernel_site_end(&site, st, &c.error, op, arrays, 4, err);
}

/* The weights as float64, after checking they have x's shape. */
static dlb_status weights_of(const dlb_array *w, const dlb_array *x, dlb_array *out, const char *op,
                             dlb_error *err) {
  int same = w->ndim == x->ndim;
  for (int d = 0; same && d < x->ndim; d++) same = w->shape[d] == x->shape[d];
  if (!same) {
    dlb_fail(err, DLB_E_SHAPE, "%s: the weights and the data do not have the same shape", op);
    dlb_error_hint(err, "give one weight per element: weights of the data's shape");
    return DLB_E_SHAPE;
  }
  if (kind_of(w->dtype) == DLB_KIND_COMPLEX)
    return dlb_fail(err, DLB_E_DTYPE, "%s: weights must be real, got %s", op,
                    dlb_dtype_get(w->dtype)->name);
  return dlb_array_as_dtype(w, DLB_FLOAT64, out, err);
}

/* The min or max of a as a double (a is not empty). */
static dlb_status extreme(dlb_reduce_op op, const dlb_array *a, dlb_backend *cpu, double *out,
                          dlb_error *err) {
  dlb_reduce_options o;
  dlb_scalar v;
  dlb_status st;
  memset(&o, 0, sizeof o);
  o.dims = DLB_REDUCE_ALL_DIMS;
  if ((st = dlb_reduce_value(op, a, &o, cpu, &v, err)) != DLB_OK) return st;
  *out = v.kind == DLB_SCALAR_INT    ? (double)v.v.i
         : v.kind == DLB_SCALAR_UINT ? (double)v.v.u
         : v.kind == DLB_SCALAR_BOOL ? (double)v.v.b
                                     : v.v.f;
  return DLB_OK;
}

static dlb_status bincount_into(const dlb_array *x, const dlb_array *weights, int64_t minlength,
                                dlb_array *counts, dlb_backend *cpu, dlb_error *err) {
  const char *op = "bincount";
  const dlb_array *arrays[2] = {x, weights};
  dlb_placement where;
  dlb_array w = {0};
  int64_t nbins = minlength;
  dlb_dtype t = x->dtype;
  dlb_status st;
  if ((st = dlb_check_arrays_for(weights ? 2 : 1, arrays, cpu, offsetof(dlb_kernels, count), &where,
                                 op, err)) != DLB_OK)
    return st;
  if (x->ndim != 1) {
    dlb_fail(err, DLB_E_SHAPE, "bincount: x must be 1-D, got %d-D", x->ndim);
    dlb_error_hint(err, "flatten it first: dl.bincount(x:reshape{-1})");
    return DLB_E_SHAPE;
  }
  if (!(kind_of(t) == DLB_KIND_BOOL || kind_of(t) == DLB_KIND_INT ||
        (kind_of(t) == DLB_KIND_UINT && t != DLB_UINT64))) {
    dlb_fail(err, DLB_E_DTYPE, "bincount: x must hold integers that fit int64, got %s",
             dlb_dtype_get(t)->name);
    dlb_error_hint(err, "convert it first, e.g. x:astype(\"int64\")");
    return DLB_E_DTYPE;
  }
  if (minlength < 0) {
    dlb_fail(err, DLB_E_VALUE, "bincount: minlength must be non-negative, got %lld",
             (long long)minlength);
    dlb_error_hint(err, "minlength is the least number of bins: 0 or more");
    return DLB_E_VALUE;
  }
  if (x->numel > 0) { /* (the kernel refuses negative elements as it counts) */
    double hi;
    if ((st = extreme(DLB_REDUCE_MAX, x, cpu, &hi, err)) != DLB_OK) return st;
    if (hi >= 9.2e18) return dlb_fail(err, DLB_E_SHAPE, "bincount: %.0f bins are too many", hi + 1);
    if (hi >= 0 && (int64_t)hi + 1 > nbins) nbins = (int64_t)hi + 1;
  }
  if (weights && (st = weights_of(weights, x, &w, op, err)) != DLB_OK) return st;
  /* (NumPy gives int64 zeros for an empty x, weights or not) */
  st = dlb_array_allocate(counts, where.backend, where.device_id,
                          weights && x->numel > 0 ? DLB_FLOAT64 : DLB_INT64, 1, &nbins, 1, err);
  if (st == DLB_OK && x->numel > 0 &&
      (st = run_count(x, weights ? &w : NULL, NULL, 0, counts, op, err)) != DLB_OK)
    dlb_array_release(counts);
  dlb_array_release(&w);
  return st;
}

dlb_status dlb_bincount(const dlb_array *x, const dlb_array *weights, int64_t minlength,
                        dlb_array *counts, dlb_backend *cpu, dlb_error *err) {
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(x), x->numel, "bincount", err);
  if (st != DLB_OK) return st;
  return dlb_work_end(&w, bincount_into(x, weights, minlength, counts, cpu, err), "bincount", err);
}

/* The dtype the bins of data of dtype t live in: its float dtype, or float64. */
static dlb_dtype bin_type(dlb_dtype t) { return kind_of(t) == DLB_KIND_FLOAT ? t : DLB_FLOAT64; }

/* Edges pass between their array and the host this many at a time,
 * through a buffer on the stack: the script chooses how many edges there
 * are, so nothing is allocated by their count outside the arrays (which
 * are charged to the state's account before they exist). */
#define EDGE_CHUNK 4096

/* The budget of the call's state: its work's (NULL: a core caller with none). */
static dlb_budget *call_budget(void) {
  dlb_work *w = dlb_work_current();
  return w ? w->budget : NULL;
}

/* k edges done: DLB_E_INTERRUPTED once a look saw the host's interrupt
 * (the work's end says so, naming the histogram). */
static dlb_status edges_done(int64_t k) {
  return dlb_work_tick(dlb_work_current(), k) ? DLB_E_INTERRUPTED : DLB_OK;
}

/* Elements start..start+k-1 of the 1-D array e from or into chunk (float64). */
static dlb_status edges_part(const dlb_array *e, int64_t start, int64_t k, double *chunk, int write,
                             dlb_error *err) {
  dlb_array part;
  dlb_status st;
  dlb_array_share(&part, e);
  st = dlb_view_slice(&part, 0, start, k, 1, err);
  if (st == DLB_OK)
    st = write ? dlb_array_write_from(&part, chunk, DLB_FLOAT64, err)
               : dlb_array_read_into(&part, chunk, DLB_FLOAT64, err);
  dlb_array_release(&part);
  /* (the interrupt, seen by the part's own work: the histogram's) */
  if (st == DLB_E_INTERRUPTED && dlb_work_raised(call_budget()))
    return dlb_work_interrupted("histogram", err);
  return st;
}

/* NumPy's linspace(first, last, nbins + 1), computed in double, into edges
 * (new, dtype, on where). histogram_into checked that nbins + 1 edges of 8
 * bytes have a size; the array is allocated (charged) before any work. */
static dlb_status linspace_edges(double first, double last, int64_t nbins, dlb_dtype dtype,
                                 const dlb_placement *where, dlb_array *edges, dlb_error *err) {
  int64_t n = nbins + 1;
  double chunk[EDGE_CHUNK], step = (last - first) / (double)nbins;
  dlb_status st = dlb_array_allocate(edges, where->backend, where->device_id, dtype, 1, &n, 0, err);
  if (st != DLB_OK) return st;
  st = dlb_work_admit(call_budget(), n, "histogram", err);
  for (int64_t i = 0; st == DLB_OK && i < n; i += EDGE_CHUNK) {
    int64_t k = n - i < EDGE_CHUNK ? n - i : EDGE_CHUNK;
    for (int64_t j = 0; j < k; j++)
      chunk[j] = i + j == nbins ? last : (double)(i + j) * step + first;
    if ((st = edges_part(edges, i, k, chunk, 1, err)) == DLB_OK) st = edges_done(k);
  }
  if (st != DLB_OK) dlb_array_release(edges);
  return st;
}

/* The range of evenly spaced bins: the option's, or the data's. */
static dlb_status bin_range(const dlb_array *a, const dlb_histogram_options *o, dlb_backend *cpu,
                            double *first, double *last, dlb_error *err) {
  dlb_status st;
  if (o->has_range) {
    *first = o->lo, *last = o->hi;
    if (!(isfinite(*first) && isfinite(*last)))
      return dlb_fail(err, DLB_E_VALUE, "histogram: the range [%g, %g] is not finite", *first,
                      *last);
    if (*first > *last) {
      dlb_fail(err, DLB_E_VALUE, "histogram: max must be larger than min in range ([%g, %g])",
               *first, *last);
      dlb_error_hint(err, "range = {lo, hi} with lo <= hi");
      return DLB_E_VALUE;
    }
  } else if (a->numel == 0) {
    *first = 0, *last = 1;
  } else {
    if ((st = extreme(DLB_REDUCE_MIN, a, cpu, first, err)) != DLB_OK ||
        (st = extreme(DLB_REDUCE_MAX, a, cpu, last, err)) != DLB_OK)
      return st;
    if (!(isfinite(*first) && isfinite(*last))) {
      dlb_fail(err, DLB_E_VALUE, "histogram: autodetected range of [%g, %g] is not finite", *first,
               *last);
      dlb_error_hint(err, "give range = {lo, hi}: NaN and infinite values then fall outside");
      return DLB_E_VALUE;
    }
  }
  if (*first == *last) *first -= 0.5, *last += 0.5;
  return DLB_OK;
}

/* Whether e can be a histogram's edges: 1-D, real, two or more. */
static dlb_status check_edges_shape(const dlb_array *e, dlb_error *err) {
  if (e->ndim == 1 && e->shape[0] >= 2 && kind_of(e->dtype) != DLB_KIND_COMPLEX) return DLB_OK;
  dlb_fail(err, DLB_E_VALUE,
           "histogram: bins must be a count or a 1-D real array of two or more edges");
  dlb_error_hint(err, "bins = 10 (evenly spaced), or bins = dl.array{0, 1, 5, 10}");
  return DLB_E_VALUE;
}

/* Given edges (shape checked) as the histogram's, of dtype, checked
 * ascending as float64 a chunk at a time (e may be a view of a few
 * elements standing for billions: nothing is sized by its extent). */
static dlb_status given_edges(const dlb_array *e, dlb_dtype dtype, dlb_array *out, dlb_error *err) {
  int64_t n = e->shape[0];
  double chunk[EDGE_CHUNK], prev = 0;
  dlb_status st = dlb_work_admit(call_budget(), n, "histogram", err);
  for (int64_t i = 0; st == DLB_OK && i < n; i += EDGE_CHUNK) {
    int64_t k = n - i < EDGE_CHUNK ? n - i : EDGE_CHUNK;
    if ((st = edges_part(e, i, k, chunk, 0, err)) != DLB_OK) break;
    for (int64_t j = 0; j < k; j++) {
      if (i + j > 0 && !(prev <= chunk[j])) {
        st = dlb_fail(err, DLB_E_VALUE, "histogram: bins must increase monotonically (edge %lld)",
                      (long long)(i + j + 1));
        break;
      }
      prev = chunk[j];
    }
    if (st == DLB_OK) st = edges_done(k);
  }
  if (st == DLB_OK) st = dlb_array_as_dtype(e, dtype, out, err);
  return st;
}

static dlb_status histogram_into(const dlb_array *a, const dlb_histogram_options *o,
                                 dlb_array *counts, dlb_array *edges, dlb_backend *cpu,
                                 dlb_error *err) {
  const char *op = "histogram";
  const dlb_array *arrays[3] = {a, o->weights, o->edges};
  dlb_placement where;
  dlb_array data = {0}, w = {0}, e = {0};
  dlb_dtype bt;
  int64_t nbins;
  double first = 0, last = 0;
  dlb_status st;
  if ((st = dlb_check_arrays_for(1 + (o->weights != NULL), arrays, cpu,
                                 offsetof(dlb_kernels, count), &where, op, err)) != DLB_OK)
    return st;
  if (kind_of(a->dtype) == DLB_KIND_COMPLEX)
    return dlb_fail(err, DLB_E_DTYPE, "histogram: complex data has no order to bin by");
  bt = bin_type(a->dtype);
  if (o->edges) {
    const dlb_array *both[2] = {a, o->edges};
    if ((st = dlb_check_arrays_for(2, both, cpu, DLB_ANY_MEMORY, &where, op, err)) != DLB_OK ||
        (st = check_edges_shape(o->edges, err)) != DLB_OK)
      return st;
    bt = bin_type(dlb_promote_types(bt, bin_type(o->edges->dtype)));
    nbins = o->edges->shape[0] - 1;
  } else {
    if (o->bins < 1) {
      dlb_fail(err, DLB_E_VALUE, "histogram: bins must be positive, got %lld", (long long)o->bins);
      dlb_error_hint(err, "bins is the number of evenly spaced bins: 1 or more");
      return DLB_E_VALUE;
    }
    if (o->bins > (INT64_MAX - 1) / 8) { /* bins + 1 edges of 8 bytes: more than any memory */
      dlb_fail(err, DLB_E_OUT_OF_MEMORY, "histogram: no memory for the %llu edges of %lld bins",
               (unsigned long long)o->bins + 1, (long long)o->bins);
      dlb_error_hint(err, "ask for fewer bins");
      return DLB_E_OUT_OF_MEMORY;
    }
    nbins = o->bins;
    if ((st = bin_range(a, o, cpu, &first, &last, err)) != DLB_OK) return st;
  }
  /* The counts first: as many as the bins (a script's choice), charged to
   * the state's account before they exist, so bins that do not fit under
   * the host's memory limit are refused before any work on the edges. */
  if ((st = dlb_array_allocate(counts, where.backend, where.device_id,
                               o->weights ? DLB_FLOAT64 : DLB_INT64, 1, &nbins, 1, err)) != DLB_OK)
    return st;
  st = o->edges ? given_edges(o->edges, bt, &e, err)
                : linspace_edges(first, last, nbins, bt, &where, &e, err);
  if (st != DLB_OK) {
    dlb_array_release(counts);
    return st;
  }
  st = dlb_array_as_dtype(a, bt, &data, err);
  if (st == DLB_OK && o->weights) st = weights_of(o->weights, a, &w, op, err);
  if (st == DLB_OK && a->numel > 0)
    st = run_count(&data, o->weights ? &w : NULL, &e, o->edges == NULL, counts, op, err);
  if (st == DLB_OK && o->weights && o->weights->dtype != DLB_FLOAT64) {
    dlb_array cast = {0};
    if ((st = dlb_array_clone(&cast, counts, o->weights->dtype, err)) == DLB_OK) {
      dlb_array_release(counts);
      *counts = cast;
    }
  }
  dlb_array_release(&data);
  dlb_array_release(&w);
  if (st == DLB_OK) {
    *edges = e;
    return DLB_OK;
  }
  dlb_array_release(&e);
  dlb_array_release(counts);
  return st;
}

dlb_status dlb_histogram(const dlb_array *a, const dlb_histogram_options *o, dlb_array *counts,
                         dlb_array *edges, dlb_backend *cpu, dlb_error *err) {
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(a), a->numel, "histogram", err);
  if (st != DLB_OK) return st;
  return dlb_work_end(&w, histogram_into(a, o, counts, edges, cpu, err), "histogram", err);
}
