/* construct.c -- eye, tile, repeat, roll, pad (views of the result and
 * copies into them), the sequences arange, linspace and logspace and
 * frombytes (host loops), convolve (one host loop) and isclose /
 * array_equal (element-wise operations): construct.h. */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/shape.h"
#include "../core/work.h"
#include "blas.h"
#include "construct.h"
#include "elementwise.h"
#include "reduce.h"

/* --- shared ---------------------------------------------------------------- */

/* The device of a (checked live; any memory, as copies take). */
static dlb_status placement(const dlb_array *a, dlb_backend *cpu, dlb_placement *where,
                            const char *op, dlb_error *err) {
  dlb_operand in = {a, {0}};
  return dlb_check_operands_for(1, &in, cpu, DLB_ANY_MEMORY, where, op, err);
}

/* Fills a new result (all of it, numel > 0) from ctx. */
typedef dlb_status (*fill_fn)(dlb_array *out, const void *ctx, dlb_error *err);

/* Allocates *out (dtype, shape) on where and runs f into it, as one bounded
 * work over `work` elements (< 0: the result's); releases it on failure. */
static dlb_status make(dlb_placement where, dlb_dtype dtype, int ndim, const int64_t *shape,
                       int64_t work, const char *op, fill_fn f, const void *ctx, dlb_array *out,
                       dlb_error *err) {
  int64_t numel;
  dlb_work w;
  dlb_status st;
  if ((st = dlb_shape_numel(ndim, shape, &numel, err)) != DLB_OK) return st;
  if ((st = dlb_work_begin(&w, where.backend->budget, work < 0 ? numel : work, op, err)) != DLB_OK)
    return st;
  st = dlb_array_allocate(out, where.backend, where.device_id, dtype, ndim, shape, 0, err);
  if (st == DLB_OK && numel > 0) st = f(out, ctx, err);
  st = dlb_work_end(&w, st, op, err);
  if (st != DLB_OK) dlb_array_release(out);
  return st;
}

/* v (a borrowed view) narrowed to count elements of dim from start by step. */
static dlb_array part(const dlb_array *v, int dim, int64_t start, int64_t count, int64_t step) {
  dlb_array p = *v;
  if (dlb_view_slice(&p, dim, start, count, step, NULL) != DLB_OK) p.numel = -1;
  return p;
}

/* v with dim (of extent 1) broadcast to count (stride 0): a borrowed view. */
static dlb_array stretched(const dlb_array *v, int dim, int64_t count) {
  dlb_array p = *v;
  p.shape[dim] = count;
  p.strides[dim] = 0;
  p.numel = count == 0 ? 0 : v->numel / (v->shape[dim] ? v->shape[dim] : 1) * count;
  return p;
}

/* dst = src for two borrowed views (an empty one copies nothing). */
static dlb_status copy(dlb_array dst, const dlb_array *src, dlb_error *err) {
  if (dst.numel < 0 || src->numel < 0) return dlb_fail(err, DLB_E_INDEX, "internal: bad view");
  return dst.numel == 0 ? DLB_OK : dlb_array_copy_into(&dst, src, err);
}

/* c = a * b, or DLB_E_SHAPE naming op. */
static dlb_status mul_extent(int64_t a, int64_t b, int64_t *c, const char *op, dlb_error *err) {
  if (!__builtin_mul_overflow(a, b, c)) return DLB_OK;
  dlb_fail(err, DLB_E_SHAPE, "%s: an extent of the result overflows int64", op);
  dlb_error_hint(err, "the result could never fit in memory: use smaller repetitions");
  return DLB_E_SHAPE;
}

/* VALUE for a negative count (a repetition, a width) with a hint. */
static dlb_status negative(const char *op, const char *what, int64_t k, int64_t v, dlb_error *err) {
  dlb_fail(err, DLB_E_VALUE, "%s: %s %lld is negative (%lld)", op, what, dlb_one_based(k),
           (long long)v);
  dlb_error_hint(err, "counts, repetitions and widths are integers >= 0");
  return DLB_E_VALUE;
}

/* --- eye ------------------------------------------------------------------- */

typedef struct eye_ctx {
  int64_t n, m, k;
} eye_ctx;

/* Zeros, then the diagonal (a strided 1-D view) filled with one. */
static dlb_status eye_fill(dlb_array *out, const void *ctx, dlb_error *err) {
  const eye_ctx *c = ctx;
  dlb_scalar zero = {.kind = DLB_SCALAR_INT, .v.i = 0}, one = {.kind = DLB_SCALAR_INT, .v.i = 1};
  int64_t flat = out->numel, start, count;
  dlb_array diag = *out;
  dlb_status st = dlb_array_fill(out, &zero, err);
  if (st != DLB_OK) return st;
  if (c->k >= 0) {
    start = c->k;
    count = c->k >= c->m ? 0 : (c->m - c->k < c->n ? c->m - c->k : c->n);
  } else {
    start = c->k <= -c->n ? 0 : -c->k * c->m;
    count = c->k <= -c->n ? 0 : (c->n + c->k < c->m ? c->n + c->k : c->m);
  }
  if (count == 0) return DLB_OK;
  if ((st = dlb_view_reshape(&diag, 1, &flat, err)) != DLB_OK) return st;
  if ((st = dlb_view_slice(&diag, 0, start, count, c->m + 1, err)) != DLB_OK) return st;
  return dlb_array_fill(&diag, &one, err);
}

dlb_status dlb_eye(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype, int64_t n,
                   int64_t m, int64_t k, dlb_error *err) {
  int64_t shape[2] = {n, m};
  eye_ctx c = {n, m, k};
  dlb_placement where = {backend, device_id};
  out->buffer = NULL;
  if (n < 0 || m < 0) {
    dlb_fail(err, DLB_E_SHAPE, "eye: the extents must be >= 0, got %lld x %lld", (long long)n,
             (long long)m);
    dlb_error_hint(err, "dl.eye(n, m): n rows and m columns, integers >= 0");
    return DLB_E_SHAPE;
  }
  return make(where, dtype, 2, shape, -1, "eye", eye_fill, &c, out, err);
}

/* --- sequences ------------------------------------------------------------- */

typedef enum seq_kind { SEQ_ARANGE_INT, SEQ_ARANGE_FLOAT, SEQ_LINSPACE, SEQ_LOGSPACE } seq_kind;

typedef struct seq_ctx {
  seq_kind kind;
  int64_t istart, istep; /* SEQ_ARANGE_INT */
  double start, stop, step, base;
  int endpoint; /* SEQ_LOGSPACE */
  dlb_backend *cpu;
} seq_ctx;

/* Element i of the sequence c of n elements (all kinds but SEQ_ARANGE_INT):
 * the formulas the binding used before the fills moved here, to the bit. */
static inline double seq_float(const seq_ctx *c, int64_t i, int64_t n) {
  switch (c->kind) {
    case SEQ_ARANGE_FLOAT: return c->start + (double)i * c->step;
    case SEQ_LINSPACE: return i == n - 1 && n > 1 ? c->stop : c->start + (double)i * c->step;
    default: {
      double y = c->endpoint && n > 1 && i == n - 1 ? c->stop
                 : c->endpoint && n == 1            ? c->start
                                                    : c->start + (double)i * c->step;
      return pow(c->base, y);
    }
  }
}

/* start + i * step in int64, wrapping (never: the caller's n keeps it in
 * range) rather than undefined. */
static inline int64_t seq_int(const seq_ctx *c, int64_t i) {
  return (int64_t)((uint64_t)c->istart + (uint64_t)i * (uint64_t)c->istep);
}

/* Elements [i0, i1) of c (n in all) into p, host memory of dtype: float64
 * and int64 directly, other dtypes through the strict dlb_scalar_store. */
static dlb_status seq_part(char *p, dlb_dtype dtype, const seq_ctx *c, int64_t i0, int64_t i1,
                           int64_t n, dlb_error *err) {
  size_t item = dlb_dtype_get(dtype)->itemsize;
  dlb_status st;
  if (c->kind == SEQ_ARANGE_INT && dtype == DLB_INT64) {
    int64_t *q = (int64_t *)(void *)p;
    for (int64_t i = i0; i < i1; i++) q[i] = seq_int(c, i);
  } else if (c->kind == SEQ_ARANGE_INT) {
    for (int64_t i = i0; i < i1; i++) {
      dlb_scalar v = {.kind = DLB_SCALAR_INT, .v.i = seq_int(c, i)};
      if ((st = dlb_scalar_store(dtype, p + i * (int64_t)item, &v, err)) != DLB_OK) return st;
    }
  } else if (dtype == DLB_FLOAT64) {
    double *q = (double *)(void *)p;
    for (int64_t i = i0; i < i1; i++) q[i] = seq_float(c, i, n);
  } else {
    for (int64_t i = i0; i < i1; i++) {
      dlb_scalar v = {.kind = DLB_SCALAR_FLOAT, .v.f = seq_float(c, i, n)};
      if ((st = dlb_scalar_store(dtype, p + i * (int64_t)item, &v, err)) != DLB_OK) return st;
    }
  }
  return DLB_OK;
}

/* All n elements of c into the host array a, a part of DLB_WORK_CHECK_EVERY
 * elements at a time; stops early when the work is interrupted (its end
 * says so). */
static dlb_status seq_run(dlb_array *a, const seq_ctx *c, dlb_error *err) {
  dlb_work *w = dlb_work_current();
  char *p = dlb_array_host_data(a);
  int64_t n = a->numel;
  dlb_status st = DLB_OK;
  for (int64_t i0 = 0; i0 < n && st == DLB_OK; i0 += DLB_WORK_CHECK_EVERY) {
    int64_t i1 = n - i0 > DLB_WORK_CHECK_EVERY ? i0 + DLB_WORK_CHECK_EVERY : n;
    st = seq_part(p, a->dtype, c, i0, i1, n, err);
    if (dlb_work_tick(w, i1 - i0)) break;
  }
  return st;
}

/* Fills the result: directly when it is cpu memory of the dtype the
 * sequence is computed in, else through a cpu array copied (logspace: cast)
 * into it. */
static dlb_status seq_fill(dlb_array *out, const void *ctx, dlb_error *err) {
  const seq_ctx *c = ctx;
  dlb_dtype made = c->kind == SEQ_LOGSPACE ? DLB_FLOAT64 : out->dtype;
  dlb_array tmp = {0};
  dlb_work *w;
  dlb_status st;
  if (out->buffer->backend == c->cpu && dlb_array_host_data(out) && out->dtype == made)
    return seq_run(out, c, err);
  if ((st = dlb_array_allocate(&tmp, c->cpu, 0, made, 1, &out->numel, 0, err)) != DLB_OK) return st;
  st = seq_run(&tmp, c, err);
  w = dlb_work_current();
  if (st == DLB_OK && !(w && w->interrupted)) st = dlb_array_copy_into(out, &tmp, err);
  dlb_array_release(&tmp);
  return st;
}

/* The sequence c of n elements of dtype on (backend, device_id) into *out. */
static dlb_status sequence(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype,
                           int64_t n, seq_ctx *c, dlb_backend *cpu, const char *op,
                           dlb_error *err) {
  dlb_placement where = {backend, device_id};
  out->buffer = NULL;
  if (n < 0) {
    dlb_fail(err, DLB_E_SHAPE, "%s: %lld elements", op, (long long)n);
    dlb_error_hint(err, "the element count is an integer >= 0");
    return DLB_E_SHAPE;
  }
  c->cpu = cpu;
  return make(where, dtype, 1, &n, -1, op, seq_fill, c, out, err);
}

dlb_status dlb_arange_int(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype,
                          int64_t start, int64_t step, int64_t n, dlb_backend *cpu,
                          dlb_error *err) {
  seq_ctx c = {.kind = SEQ_ARANGE_INT, .istart = start, .istep = step};
  return sequence(out, backend, device_id, dtype, n, &c, cpu, "arange", err);
}

dlb_status dlb_arange_float(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype,
                            double start, double step, int64_t n, dlb_backend *cpu,
                            dlb_error *err) {
  seq_ctx c = {.kind = SEQ_ARANGE_FLOAT, .start = start, .step = step};
  return sequence(out, backend, device_id, dtype, n, &c, cpu, "arange", err);
}

dlb_status dlb_linspace(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype,
                        double start, double stop, int64_t n, dlb_backend *cpu, dlb_error *err) {
  seq_ctx c = {.kind = SEQ_LINSPACE, .start = start, .stop = stop};
  c.step = n > 1 ? (stop - start) / (double)(n - 1) : 0.0;
  return sequence(out, backend, device_id, dtype, n, &c, cpu, "linspace", err);
}

dlb_status dlb_logspace(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype,
                        double start, double stop, int64_t n, int endpoint, double base,
                        dlb_backend *cpu, dlb_error *err) {
  seq_ctx c = {
      .kind = SEQ_LOGSPACE, .start = start, .stop = stop, .base = base, .endpoint = endpoint};
  c.step = (stop - start) / (double)(endpoint ? n - 1 : n);
  return sequence(out, backend, device_id, dtype, n, &c, cpu, "logspace", err);
}

/* --- frombytes ---------------------------------------------------------------- */

typedef struct bytes_ctx {
  const unsigned char *bytes;
} bytes_ctx;

/* The bool check (a part of DLB_WORK_CHECK_EVERY bytes at a time), then
 * the bytes written into the result. */
static dlb_status bytes_fill(dlb_array *out, const void *ctx, dlb_error *err) {
  const unsigned char *s = ((const bytes_ctx *)ctx)->bytes;
  int64_t n = out->numel;
  dlb_work *w = dlb_work_current();
  if (out->dtype == DLB_BOOL) {
    for (int64_t k0 = 0; k0 < n; k0 += DLB_WORK_CHECK_EVERY) {
      int64_t k1 = n - k0 > DLB_WORK_CHECK_EVERY ? k0 + DLB_WORK_CHECK_EVERY : n;
      for (int64_t k = k0; k < k1; k++)
        if (s[k] > 1)
          return dlb_fail(err, DLB_E_VALUE, "frombytes: byte %lld is %u, not a bool (0 or 1)",
                          (long long)k + 1, (unsigned)s[k]);
      if (dlb_work_tick(w, k1 - k0)) return DLB_OK; /* the work's end says so */
    }
  }
  return dlb_array_write_from(out, s, out->dtype, err);
}

dlb_status dlb_frombytes(dlb_array *out, dlb_backend *backend, int device_id, dlb_dtype dtype,
                         int ndim, const int64_t *shape, const void *bytes, dlb_error *err) {
  dlb_placement where = {backend, device_id};
  bytes_ctx c = {bytes};
  out->buffer = NULL;
  return make(where, dtype, ndim, shape, -1, "frombytes", bytes_fill, &c, out, err);
}

/* --- tile ------------------------------------------------------------------ */

typedef struct tile_ctx {
  const dlb_array *src; /* a with leading extent-1 dims, as many dims as the result */
  const int64_t *reps;
} tile_ctx;

/* Tiling as one copy: the result viewed with each tiled dim split in two
 * (repeat, extent), the source broadcast along the repeats. Returns 0 when
 * that needs more than DLB_MAX_NDIM dims. */
static int tile_view(const dlb_array *out, const tile_ctx *c, dlb_array *dst, dlb_array *src) {
  int nd = 0;
  *dst = *out;
  *src = *c->src;
  for (int i = 0; i < out->ndim; i++) {
    int64_t r = c->reps[i], s = c->src->shape[i], stride = out->strides[i];
    int split = r > 1 && s > 1;
    if (nd + 1 + split > DLB_MAX_NDIM) return 0;
    if (split || r > 1) { /* the repeats: stride 0 in the source */
      dst->shape[nd] = src->shape[nd] = r;
      dst->strides[nd] = split ? s * stride : stride;
      src->strides[nd++] = 0;
    }
    if (split || r <= 1) {
      dst->shape[nd] = src->shape[nd] = s;
      dst->strides[nd] = stride;
      src->strides[nd++] = c->src->strides[i];
    }
  }
  dst->ndim = src->ndim = nd;
  src->numel = dst->numel;
  return 1;
}

/* The source into the result's corner, then each tiled dim doubled in
 * place, copy by copy: for results of too many dims for tile_view. */
static dlb_status tile_doubling(dlb_array *out, const tile_ctx *c, dlb_error *err) {
  dlb_array corner = *out;
  dlb_status st;
  for (int i = 0; i < out->ndim; i++) corner = part(&corner, i, 0, c->src->shape[i], 1);
  if ((st = copy(corner, c->src, err)) != DLB_OK) return st;
  for (int i = 0; i < out->ndim; i++) {
    dlb_array region = *out;
    int64_t s = c->src->shape[i], total = out->shape[i];
    for (int j = i + 1; j < out->ndim; j++) region = part(&region, j, 0, c->src->shape[j], 1);
    for (int64_t f = s; f < total && st == DLB_OK; f += f < total - f ? f : total - f) {
      int64_t n = f < total - f ? f : total - f;
      dlb_array from = part(&region, i, 0, n, 1);
      st = copy(part(&region, i, f, n, 1), &from, err);
    }
    if (st != DLB_OK) return st;
  }
  return DLB_OK;
}

static dlb_status tile_fill(dlb_array *out, const void *ctx, dlb_error *err) {
  dlb_array dst, src;
  if (tile_view(out, ctx, &dst, &src)) return dlb_array_copy_into(&dst, &src, err);
  return tile_doubling(out, ctx, err);
}

dlb_status dlb_tile(const dlb_array *a, int nreps, const int64_t *reps, dlb_array *out,
                    dlb_backend *cpu, dlb_error *err) {
  int nd = a->ndim > nreps ? a->ndim : nreps;
  int64_t r[DLB_MAX_NDIM], shape[DLB_MAX_NDIM];
  dlb_array src;
  dlb_placement where;
  tile_ctx c = {&src, r};
  dlb_status st;
  out->buffer = NULL;
  if ((st = placement(a, cpu, &where, "tile", err)) != DLB_OK) return st;
  if (nreps < 0 || nreps > DLB_MAX_NDIM) {
    dlb_fail(err, DLB_E_SHAPE, "tile: %d repetitions for at most %d dims", nreps, DLB_MAX_NDIM);
    dlb_error_hint(err, "give at most one repetition per dim of the result (32 dims at most)");
    return DLB_E_SHAPE;
  }
  src = *a;
  for (int i = 0; i < nd; i++) {
    int from_a = i - (nd - a->ndim), from_r = i - (nd - nreps);
    src.shape[i] = from_a >= 0 ? a->shape[from_a] : 1;
    src.strides[i] = from_a >= 0 ? a->strides[from_a] : 0;
    r[i] = from_r >= 0 ? reps[from_r] : 1;
    if (r[i] < 0) return negative("tile", "repetition", from_r, r[i], err);
    if ((st = mul_extent(src.shape[i], r[i], &shape[i], "tile", err)) != DLB_OK) return st;
  }
  src.ndim = nd;
  return make(where, a->dtype, nd, shape, -1, "tile", tile_fill, &c, out, err);
}

/* --- repeat ---------------------------------------------------------------- */

typedef struct repeat_ctx {
  const dlb_array *a;
  int dim;
  int64_t ncounts;
  const int64_t *counts;
} repeat_ctx;

static dlb_status repeat_fill(dlb_array *out, const void *ctx, dlb_error *err) {
  const repeat_ctx *c = ctx;
  const dlb_array *a = c->a;
  int d = c->dim;
  int64_t pos = 0;
  dlb_status st = DLB_OK;
  if (c->ncounts == 1 && a->ndim < DLB_MAX_NDIM) {
    /* One copy: the result's dim split into (extent, count), the source
     * broadcast along the counts. */
    dlb_array dst = *out, src = *a;
    int64_t r = c->counts[0];
    for (int k = a->ndim; k > d + 1; k--) {
      dst.shape[k] = dst.shape[k - 1], dst.strides[k] = dst.strides[k - 1];
      src.shape[k] = src.shape[k - 1], src.strides[k] = src.strides[k - 1];
    }
    dst.shape[d] = src.shape[d] = a->shape[d];
    dst.strides[d] = out->strides[d] * r;
    dst.shape[d + 1] = src.shape[d + 1] = r;
    dst.strides[d + 1] = out->strides[d];
    src.strides[d + 1] = 0;
    dst.ndim = src.ndim = a->ndim + 1;
    src.numel = dst.numel;
    return dlb_array_copy_into(&dst, &src, err);
  }
  for (int64_t i = 0; i < a->shape[d] && st == DLB_OK; i++) {
    int64_t n = c->counts[c->ncounts == 1 ? 0 : i];
    dlb_array one = part(a, d, i, 1, 1), from = stretched(&one, d, n);
    st = copy(part(out, d, pos, n, 1), &from, err);
    pos += n;
  }
  return st;
}

dlb_status dlb_repeat(const dlb_array *a, int dim, int64_t ncounts, const int64_t *counts,
                      dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  int64_t shape[DLB_MAX_NDIM], total = 0;
  dlb_placement where;
  repeat_ctx c = {a, dim, ncounts, counts};
  dlb_status st;
  out->buffer = NULL;
  if ((st = placement(a, cpu, &where, "repeat", err)) != DLB_OK) return st;
  if (dim < 0 || dim >= a->ndim)
    return dlb_fail(err, DLB_E_INDEX, "repeat: dimension %lld out of range for a %d-D array",
                    dlb_one_based(dim), a->ndim);
  if (ncounts != 1 && ncounts != a->shape[dim]) {
    dlb_fail(err, DLB_E_SHAPE, "repeat: %lld counts for %lld elements along dim %d",
             (long long)ncounts, (long long)a->shape[dim], dim + 1);
    dlb_error_hint(err, "give one count for every element along the dim, or one count for all");
    return DLB_E_SHAPE;
  }
  for (int64_t i = 0; i < ncounts; i++) {
    if (counts[i] < 0) return negative("repeat", "count", i, counts[i], err);
    if (ncounts > 1 && __builtin_add_overflow(total, counts[i], &total))
      return dlb_fail(err, DLB_E_SHAPE, "repeat: the repeated extent overflows int64");
  }
  if (ncounts == 1 && (st = mul_extent(a->shape[dim], counts[0], &total, "repeat", err)) != DLB_OK)
    return st;
  memcpy(shape, a->shape, (size_t)a->ndim * sizeof *shape);
  shape[dim] = total;
  return make(where, a->dtype, a->ndim, shape, -1, "repeat", repeat_fill, &c, out, err);
}

int64_t dlb_repeat_numel(const dlb_array *a, int dim, int64_t ncounts, const int64_t *counts) {
  int64_t total = 0, numel;
  for (int64_t i = 0; i < ncounts; i++)
    if (counts[i] > 0 && __builtin_add_overflow(total, counts[i], &total)) total = INT64_MAX;
  if (ncounts == 1 && __builtin_mul_overflow(total, a->shape[dim], &total)) total = INT64_MAX;
  if (a->shape[dim] == 0) return 0;
  if (__builtin_mul_overflow(a->numel / a->shape[dim], total, &numel)) return INT64_MAX;
  return numel;
}

/* --- roll ------------------------------------------------------------------ */

typedef struct roll_ctx {
  const dlb_array *a;
  int64_t shift[DLB_MAX_NDIM]; /* in [0, extent) */
} roll_ctx;

/* Each rolled dim splits into two blocks that trade places: 2^k copies. */
static dlb_status roll_fill(dlb_array *out, const void *ctx, dlb_error *err) {
  const roll_ctx *c = ctx;
  int dims[DLB_MAX_NDIM], k = 0;
  dlb_status st = DLB_OK;
  for (int d = 0; d < out->ndim; d++)
    if (c->shift[d] != 0) dims[k++] = d;
  for (uint64_t mask = 0; mask < (UINT64_C(1) << k) && st == DLB_OK; mask++) {
    dlb_array dst = *out, src = *c->a;
    for (int j = 0; j < k; j++) {
      int d = dims[j];
      int64_t n = out->shape[d], s = c->shift[d];
      if (mask >> j & 1) { /* the tail of the source to the head */
        dst = part(&dst, d, 0, s, 1);
        src = part(&src, d, n - s, s, 1);
      } else {
        dst = part(&dst, d, s, n - s, 1);
        src = part(&src, d, 0, n - s, 1);
      }
    }
    st = copy(dst, &src, err);
  }
  return st;
}

dlb_status dlb_roll(const dlb_array *a, const int64_t *shifts, dlb_array *out, dlb_backend *cpu,
                    dlb_error *err) {
  dlb_placement where;
  roll_ctx c;
  dlb_status st;
  out->buffer = NULL;
  if ((st = placement(a, cpu, &where, "roll", err)) != DLB_OK) return st;
  c.a = a;
  for (int d = 0; d < a->ndim; d++) {
    int64_t n = a->shape[d], s = n > 0 ? shifts[d] % n : 0;
    c.shift[d] = s < 0 ? s + n : s;
  }
  return make(where, a->dtype, a->ndim, a->shape, -1, "roll", roll_fill, &c, out, err);
}

/* --- pad ------------------------------------------------------------------- */

typedef struct pad_ctx {
  const dlb_array *a;
  const int64_t (*widths)[2];
  dlb_pad_mode mode;
  const dlb_scalar *value;
} pad_ctx;

/* The edge elements of dim d of roi (whose extent is before + n + after)
 * stretched over its pad areas. */
static dlb_status pad_edge(const dlb_array *roi, int d, int64_t before, int64_t after,
                           dlb_error *err) {
  int64_t n = roi->shape[d] - before - after;
  dlb_array first = part(roi, d, before, 1, 1), last = part(roi, d, before + n - 1, 1, 1);
  dlb_array from = stretched(&first, d, before);
  dlb_status st = copy(part(roi, d, 0, before, 1), &from, err);
  if (st != DLB_OK) return st;
  from = stretched(&last, d, after);
  return copy(part(roi, d, before + n, after, 1), &from, err);
}

/* NumPy's _set_reflect_both: one round of mirroring into the pad areas
 * (each at most the width of what is already filled); updates the widths
 * still to fill. */
static dlb_status pad_reflect_round(const dlb_array *roi, int d, int include_edge, int64_t *before,
                                    int64_t *after, dlb_error *err) {
  int64_t total = roi->shape[d], eo = include_edge ? 1 : 0;
  int64_t old = total - *before - *after - (include_edge ? 0 : 1);
  dlb_status st = DLB_OK;
  if (*before > 0) {
    int64_t chunk = old < *before ? old : *before, first = *before - eo + chunk;
    dlb_array from = part(roi, d, first, chunk, -1);
    st = copy(part(roi, d, *before - chunk, chunk, 1), &from, err);
    *before -= chunk;
  }
  if (st == DLB_OK && *after > 0) {
    int64_t chunk = old < *after ? old : *after, first = total - *after + eo - 2;
    dlb_array from = part(roi, d, first, chunk, -1);
    st = copy(part(roi, d, total - *after, chunk, 1), &from, err);
    *after -= chunk;
  }
  return st;
}

/* NumPy's _set_wrap_both: one round of the period copied into the pad areas. */
static dlb_status pad_wrap_round(const dlb_array *roi, int d, int64_t *before, int64_t *after,
                                 dlb_error *err) {
  int64_t total = roi->shape[d], lp = *before, rp = *after, period = total - rp - lp;
  dlb_status st = DLB_OK;
  *before = *after = 0;
  if (lp > 0) {
    int64_t chunk = period < lp ? period : lp;
    dlb_array from = part(roi, d, total - rp - chunk, chunk, 1);
    st = copy(part(roi, d, lp - chunk, chunk, 1), &from, err);
    if (lp > period) *before = lp - period;
  }
  if (st == DLB_OK && rp > 0) {
    int64_t chunk = period < rp ? period : rp;
    dlb_array from = part(roi, d, lp, chunk, 1);
    st = copy(part(roi, d, total - rp, chunk, 1), &from, err);
    if (rp > period) *after = rp - period;
  }
  return st;
}

/* The source into the centre, then dim by dim (as NumPy: earlier dims'
 * pad areas are filled by then, later dims' not yet) the pad areas. */
static dlb_status pad_fill(dlb_array *out, const void *ctx, dlb_error *err) {
  const pad_ctx *c = ctx;
  const dlb_array *a = c->a;
  dlb_array centre = *out;
  dlb_status st = DLB_OK;
  if (c->mode == DLB_PAD_CONSTANT && (st = dlb_array_fill(out, c->value, err)) != DLB_OK) return st;
  for (int d = 0; d < a->ndim; d++) centre = part(&centre, d, c->widths[d][0], a->shape[d], 1);
  if ((st = copy(centre, a, err)) != DLB_OK || c->mode == DLB_PAD_CONSTANT) return st;
  for (int d = 0; d < a->ndim && st == DLB_OK; d++) {
    int64_t before = c->widths[d][0], after = c->widths[d][1];
    dlb_array roi = *out;
    if (before == 0 && after == 0) continue;
    for (int j = d + 1; j < a->ndim; j++) roi = part(&roi, j, c->widths[j][0], a->shape[j], 1);
    if (c->mode == DLB_PAD_EDGE || (c->mode != DLB_PAD_WRAP && a->shape[d] == 1)) {
      st = pad_edge(&roi, d, before, after, err); /* NumPy: a single element reflects as edge */
    } else if (c->mode == DLB_PAD_WRAP) {
      while (st == DLB_OK && (before > 0 || after > 0))
        st = pad_wrap_round(&roi, d, &before, &after, err);
    } else {
      while (st == DLB_OK && (before > 0 || after > 0))
        st = pad_reflect_round(&roi, d, c->mode == DLB_PAD_SYMMETRIC, &before, &after, err);
    }
  }
  return st;
}

dlb_status dlb_pad(const dlb_array *a, const int64_t (*widths)[2], dlb_pad_mode mode,
                   const dlb_scalar *value, dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  int64_t shape[DLB_MAX_NDIM];
  dlb_placement where;
  pad_ctx c = {a, widths, mode, value};
  unsigned char tmp[16];
  dlb_status st;
  out->buffer = NULL;
  if ((st = placement(a, cpu, &where, "pad", err)) != DLB_OK) return st;
  if (mode == DLB_PAD_CONSTANT && (st = dlb_scalar_store(a->dtype, tmp, value, err)) != DLB_OK)
    return st;
  for (int d = 0; d < a->ndim; d++) {
    if (widths[d][0] < 0 || widths[d][1] < 0)
      return negative("pad", "the width of dim", d, widths[d][0] < 0 ? widths[d][0] : widths[d][1],
                      err);
    if (mode != DLB_PAD_CONSTANT && a->shape[d] == 0 && (widths[d][0] || widths[d][1])) {
      dlb_fail(err, DLB_E_VALUE, "pad: cannot extend the empty dim %d in this mode", d + 1);
      dlb_error_hint(err, "only mode \"constant\" pads a dim of extent 0");
      return DLB_E_VALUE;
    }
    if (__builtin_add_overflow(a->shape[d], widths[d][0], &shape[d]) ||
        __builtin_add_overflow(shape[d], widths[d][1], &shape[d])) {
      dlb_fail(err, DLB_E_SHAPE, "pad: the padded extent of dim %d overflows int64", d + 1);
      dlb_error_hint(err, "the result could never fit in memory: use smaller widths");
      return DLB_E_SHAPE;
    }
  }
  return make(where, a->dtype, a->ndim, shape, -1, "pad", pad_fill, &c, out, err);
}

/* --- convolve -------------------------------------------------------------- */

/* The dtype products are summed in for a result dtype. */
static dlb_dtype accumulator(dlb_dtype t) {
  switch (dlb_dtype_get(t)->kind) {
    case DLB_KIND_FLOAT: return DLB_FLOAT64;
    case DLB_KIND_COMPLEX: return DLB_COMPLEX128;
    default: return DLB_UINT64; /* wraps as every narrower integer does; bool: a count */
  }
}

typedef struct conv_ctx {
  const dlb_array *x, *y; /* x the longer (n >= m) */
  int64_t first;          /* the first index of the full convolution kept */
  dlb_backend *cpu;
} conv_ctx;

/* One output of the convolution: out index j sums x[i] * y[j - i], with ys
 * y reversed (ys[m - 1 - j + i] is y[j - i]), over the i where both exist. */
#define CONV_BOUNDS(j)                                                                             \
  int64_t lo = (j) - (m - 1) > 0 ? (j) - (m - 1) : 0;                                              \
  int64_t hi = (j) < n - 1 ? (j) : n - 1;                                                          \
  const int64_t off = m - 1 - (j)

/* sum x[i] * y[i], i < n, with four partial sums (the loop vectorises). */
static double dot_loop(const double *x, const double *y, int64_t n) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += x[i] * y[i];
    s1 += x[i + 1] * y[i + 1];
    s2 += x[i + 2] * y[i + 2];
    s3 += x[i + 3] * y[i + 3];
  }
  for (; i < n; i++) s0 += x[i] * y[i];
  return (s0 + s1) + (s2 + s3);
}

/* The kept outputs into r (host, acc dtype) from x and reversed y; stops
 * early when the work is interrupted. Each output is one dot product:
 * BLAS's ddot / zdotu (as NumPy's correlate) when a BLAS is loaded, else
 * dlbridge's loop (complex: the plain formula, as zdotu, not C's Annex G
 * product). */
static void conv_run(dlb_dtype acc, const void *xp, const void *yp, void *rp, int64_t n, int64_t m,
                     int64_t len, int64_t first) {
  dlb_work *w = dlb_work_current();
  const dlb_blas *blas = acc == DLB_UINT64 || m > INT_MAX ? NULL : dlb_blas_get();
  for (int64_t k = 0; k < len && !dlb_work_tick(w, m); k++) {
    int64_t j = first + k;
    CONV_BOUNDS(j);
    int64_t count = hi - lo + 1;
    if (acc == DLB_FLOAT64) {
      const double *xs = (const double *)xp + lo, *ys = (const double *)yp + off + lo;
      ((double *)rp)[k] = blas ? blas->ddot((int)count, xs, 1, ys, 1) : dot_loop(xs, ys, count);
    } else if (acc == DLB_COMPLEX128) {
      const double *xs = (const double *)xp + 2 * lo, *ys = (const double *)yp + 2 * (off + lo);
      double re = 0.0, im = 0.0, *out = (double *)rp + 2 * k;
      if (blas) {
        blas->zdotu_sub((int)count, xs, 1, ys, 1, out);
        continue;
      }
      for (int64_t i = 0; i < count; i++) {
        double a = xs[2 * i], b = xs[2 * i + 1], c = ys[2 * i], d = ys[2 * i + 1];
        re += a * c - b * d;
        im += a * d + b * c;
      }
      out[0] = re;
      out[1] = im;
    } else {
      const uint64_t *xs = xp, *ys = yp;
      uint64_t s = 0;
      for (int64_t i = lo; i <= hi; i++) s += xs[i] * ys[off + i];
      ((uint64_t *)rp)[k] = s;
    }
  }
}

static dlb_status conv_fill(dlb_array *out, const void *ctx, dlb_error *err) {
  const conv_ctx *c = ctx;
  dlb_dtype acc = accumulator(out->dtype);
  int64_t n = c->x->numel, m = c->y->numel, len = out->numel;
  dlb_array xs = {0}, ys = {0}, r = {0}, yrev;
  dlb_status st;
  if ((st = dlb_array_allocate(&xs, c->cpu, 0, acc, 1, &n, 0, err)) != DLB_OK ||
      (st = dlb_array_allocate(&ys, c->cpu, 0, acc, 1, &m, 0, err)) != DLB_OK ||
      (st = dlb_array_allocate(&r, c->cpu, 0, acc, 1, &len, 0, err)) != DLB_OK)
    goto done;
  {
    dlb_array x = *c->x, y = *c->y;
    /* 0-d operands are one-element 1-D ones */
    x.ndim = y.ndim = 1;
    x.shape[0] = n, y.shape[0] = m;
    if (c->x->ndim == 0) x.strides[0] = 1;
    if (c->y->ndim == 0) y.strides[0] = 1;
    yrev = part(&y, 0, m - 1, m, -1);
    if ((st = dlb_array_copy_into(&xs, &x, err)) != DLB_OK ||
        (st = dlb_array_copy_into(&ys, &yrev, err)) != DLB_OK)
      goto done;
  }
  conv_run(acc, dlb_array_host_data(&xs), dlb_array_host_data(&ys), dlb_array_host_data(&r), n, m,
           len, c->first);
  if (dlb_work_current() && dlb_work_current()->interrupted)
    st = DLB_E_INTERRUPTED; /* dlb_work_end says so */
  else st = dlb_array_copy_into(out, &r, err);
done:
  dlb_array_release(&xs);
  dlb_array_release(&ys);
  dlb_array_release(&r);
  return st;
}

dlb_status dlb_convolve(const dlb_array *a, const dlb_array *v, dlb_convolve_mode mode,
                        dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  dlb_operand in[2] = {{a, {0}}, {v, {0}}};
  dlb_placement where;
  conv_ctx c = {a, v, 0, cpu};
  int64_t n, m, len, macs;
  dlb_status st;
  out->buffer = NULL;
  if ((st = dlb_check_operands_for(2, in, cpu, DLB_ANY_MEMORY, &where, "convolve", err)) != DLB_OK)
    return st;
  for (int k = 0; k < 2; k++) {
    const dlb_array *x = k ? v : a;
    if (x->ndim > 1) {
      dlb_fail(err, DLB_E_SHAPE, "convolve: argument %d is %d-D, not 1-D", k + 1, x->ndim);
      dlb_error_hint(err, "convolve takes 1-D arrays: a:ravel() flattens one");
      return DLB_E_SHAPE;
    }
    if (x->numel == 0) {
      dlb_fail(err, DLB_E_VALUE, "convolve: argument %d is empty", k + 1);
      dlb_error_hint(err, "both arrays need at least one element");
      return DLB_E_VALUE;
    }
    if ((st = dlb_check_host_memory(x, "convolve", err)) != DLB_OK) return st;
  }
  if (v->numel > a->numel) c.x = v, c.y = a;
  n = c.x->numel;
  m = c.y->numel;
  switch (mode) {
    case DLB_CONVOLVE_FULL: len = n + m - 1; break; /* no overflow: both fit in memory */
    case DLB_CONVOLVE_SAME: len = n, c.first = (m - 1) / 2; break;
    default: len = n - m + 1, c.first = m - 1; break;
  }
  /* the work is the multiply-adds (as matmul's): n * m at most */
  return make(where, dlb_promote_types(a->dtype, v->dtype), 1, &len,
              __builtin_mul_overflow(n, m, &macs) ? INT64_MAX : macs, "convolve", conv_fill, &c,
              out, err);
}

/* --- comparisons ----------------------------------------------------------- */

static dlb_operand array_operand(const dlb_array *a) {
  dlb_operand o = {a, {0}};
  return o;
}

static dlb_operand float_operand(double x) {
  dlb_operand o = {NULL, {.kind = DLB_SCALAR_FLOAT, .v.f = x}};
  return o;
}

/* *out = op over the operands (a new array). */
static dlb_status run_op(dlb_op op, dlb_operand x, dlb_operand y, dlb_operand z, dlb_array *out,
                         dlb_backend *cpu, dlb_error *err) {
  dlb_operand in[3] = {x, y, z};
  out->buffer = NULL;
  return dlb_elementwise(op, in, out, cpu, err);
}

/* As run_op for arrays, releasing x and y (temporaries) afterwards. */
static dlb_status run_and_drop(dlb_op op, dlb_array *x, dlb_array *y, dlb_array *out,
                               dlb_backend *cpu, dlb_error *err) {
  dlb_status st = run_op(op, array_operand(x), y ? array_operand(y) : array_operand(x),
                         array_operand(x), out, cpu, err);
  dlb_array_release(x);
  if (y) dlb_array_release(y);
  return st;
}

/* Whether a dtype is bool or an integer. */
static int integral(dlb_dtype t) {
  dlb_kind k = dlb_dtype_get(t)->kind;
  return k == DLB_KIND_BOOL || k == DLB_KIND_INT || k == DLB_KIND_UINT;
}

/* The steps of isclose, each a temporary released as soon as it is used. */
static dlb_status isclose_steps(dlb_operand x, dlb_operand y, double rtol, double atol,
                                int equal_nan, dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  dlb_array t[8];
  dlb_operand none = {NULL, {0}};
  dlb_status st;
  for (int k = 0; k < 8; k++) t[k].buffer = NULL;
  /* within = |x - y| <= atol + rtol * |y| */
  if ((st = run_op(DLB_OP_SUBTRACT, x, y, none, &t[0], cpu, err)) != DLB_OK ||
      (st = run_and_drop(DLB_OP_ABS, &t[0], NULL, &t[1], cpu, err)) != DLB_OK ||
      (st = run_op(DLB_OP_ABS, y, none, none, &t[2], cpu, err)) != DLB_OK ||
      (st = run_op(DLB_OP_MULTIPLY, array_operand(&t[2]), float_operand(rtol), none, &t[3], cpu,
                   err)) != DLB_OK)
    goto done;
  dlb_array_release(&t[2]);
  if ((st = run_op(DLB_OP_ADD, array_operand(&t[3]), float_operand(atol), none, &t[2], cpu, err)) !=
      DLB_OK)
    goto done;
  dlb_array_release(&t[3]);
  if ((st = run_and_drop(DLB_OP_LESS_EQUAL, &t[1], &t[2], &t[0], cpu, err)) != DLB_OK) goto done;
  /* where(isfinite(x) & isfinite(y), within, x == y) */
  if ((st = run_op(DLB_OP_ISFINITE, x, none, none, &t[1], cpu, err)) != DLB_OK ||
      (st = run_op(DLB_OP_ISFINITE, y, none, none, &t[2], cpu, err)) != DLB_OK ||
      (st = run_and_drop(DLB_OP_LOGICAL_AND, &t[1], &t[2], &t[3], cpu, err)) != DLB_OK ||
      (st = run_op(DLB_OP_EQUAL, x, y, none, &t[4], cpu, err)) != DLB_OK ||
      (st = run_op(DLB_OP_WHERE, array_operand(&t[3]), array_operand(&t[0]), array_operand(&t[4]),
                   equal_nan ? &t[5] : out, cpu, err)) != DLB_OK ||
      !equal_nan)
    goto done;
  /* | isnan(x) & isnan(y) */
  if ((st = run_op(DLB_OP_ISNAN, x, none, none, &t[1], cpu, err)) != DLB_OK ||
      (st = run_op(DLB_OP_ISNAN, y, none, none, &t[2], cpu, err)) != DLB_OK ||
      (st = run_and_drop(DLB_OP_LOGICAL_AND, &t[1], &t[2], &t[6], cpu, err)) != DLB_OK)
    goto done;
  st = run_op(DLB_OP_LOGICAL_OR, array_operand(&t[5]), array_operand(&t[6]), none, out, cpu, err);
done:
  for (int k = 0; k < 8; k++) dlb_array_release(&t[k]);
  return st;
}

dlb_status dlb_isclose(const dlb_operand *a, const dlb_operand *b, double rtol, double atol,
                       int equal_nan, dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  dlb_operand in[2] = {*a, *b}, y = *b;
  dlb_placement where;
  dlb_array inexact = {0};
  int64_t shape[DLB_MAX_NDIM];
  int ndim;
  dlb_status st;
  out->buffer = NULL;
  /* the errors that come before any temporary */
  if ((st = dlb_check_operands_for(2, in, cpu, offsetof(dlb_kernels, elementwise), &where,
                                   "isclose", err)) != DLB_OK ||
      (st = dlb_broadcast_shapes(2, in, &ndim, shape, "isclose", err)) != DLB_OK)
    return st;
  /* b made inexact first (NumPy: result_type(b, 1.0)), so that |b| and
   * a - b cannot overflow an integer dtype. */
  if (y.array && integral(y.array->dtype)) {
    if ((st = dlb_array_clone(&inexact, y.array, DLB_FLOAT64, err)) != DLB_OK) return st;
    y.array = &inexact;
  } else if (!y.array && y.scalar.kind != DLB_SCALAR_FLOAT && y.scalar.kind != DLB_SCALAR_COMPLEX) {
    dlb_scalar s = y.scalar;
    y.scalar.kind = DLB_SCALAR_FLOAT;
    y.scalar.v.f = s.kind == DLB_SCALAR_BOOL   ? (double)s.v.b
                   : s.kind == DLB_SCALAR_UINT ? (double)s.v.u
                                               : (double)s.v.i;
  }
  st = isclose_steps(*a, y, rtol, atol, equal_nan, out, cpu, err);
  dlb_array_release(&inexact);
  return st;
}

dlb_status dlb_all_true(const dlb_array *a, dlb_backend *cpu, int *result, dlb_error *err) {
  dlb_reduce_options o;
  dlb_scalar v;
  dlb_status st;
  memset(&o, 0, sizeof o);
  o.dims = DLB_REDUCE_ALL_DIMS;
  if ((st = dlb_reduce_value(DLB_REDUCE_ALL, a, &o, cpu, &v, err)) != DLB_OK) return st;
  *result = v.v.b != 0;
  return DLB_OK;
}

dlb_status dlb_array_equal(const dlb_array *a, const dlb_array *b, int equal_nan, int *equal,
                           dlb_backend *cpu, dlb_error *err) {
  dlb_operand x = array_operand(a), y = array_operand(b), none = {NULL, {0}};
  dlb_array t[5];
  dlb_status st;
  *equal = 0;
  if (!a->buffer || !b->buffer)
    return dlb_fail(err, DLB_E_DELETED, "array_equal: argument %d was deleted", a->buffer ? 2 : 1);
  if (!dlb_shape_equal(a->ndim, a->shape, b->ndim, b->shape)) {
    dlb_operand in[2] = {x, y};
    dlb_placement where; /* the devices are checked all the same */
    return dlb_check_operands_for(2, in, cpu, offsetof(dlb_kernels, elementwise), &where,
                                  "array_equal", err);
  }
  for (int k = 0; k < 5; k++) t[k].buffer = NULL;
  st = run_op(DLB_OP_EQUAL, x, y, none, &t[0], cpu, err);
  if (st == DLB_OK && equal_nan &&
      (st = run_op(DLB_OP_ISNAN, x, none, none, &t[1], cpu, err)) == DLB_OK &&
      (st = run_op(DLB_OP_ISNAN, y, none, none, &t[2], cpu, err)) == DLB_OK &&
      (st = run_and_drop(DLB_OP_LOGICAL_AND, &t[1], &t[2], &t[3], cpu, err)) == DLB_OK)
    st = run_and_drop(DLB_OP_LOGICAL_OR, &t[0], &t[3], &t[4], cpu, err);
  if (st == DLB_OK) st = dlb_all_true(equal_nan ? &t[4] : &t[0], cpu, equal, err);
  for (int k = 0; k < 5; k++) dlb_array_release(&t[k]);
  return st;
}
