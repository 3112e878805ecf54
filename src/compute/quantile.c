/* quantile.c -- order statistics (quantile.h): the plan (dims, dtypes,
 * shapes, the ranks each q wants), then one slice at a time: its elements
 * copied into scratch of a working type, the wanted ranks selected there
 * (select_kth.h), and each q's value computed from them as NumPy 1.24's
 * _quantile, _lerp and _median do. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/event.h"
#include "../core/shape.h"
#include "../core/work.h"
#include "quantile.h"
#include "reduce.h"
#include "select_kth.h"

DLB_DEFINE_SELECT(select_i64, int64_t)
DLB_DEFINE_SELECT(select_u64, uint64_t)
DLB_DEFINE_SELECT(select_f32, float)
DLB_DEFINE_SELECT(select_f64, double)

/* The type a slice is copied into: order-preserving and exact for every
 * dtype that maps to it. */
typedef enum work_type { WORK_I64, WORK_U64, WORK_F32, WORK_F64 } work_type;

static work_type work_type_of(dlb_dtype t) {
  switch (dlb_dtype_get(t)->kind) {
    case DLB_KIND_UINT: return WORK_U64;
    case DLB_KIND_FLOAT: return t == DLB_FLOAT64 ? WORK_F64 : WORK_F32;
    default: return WORK_I64; /* bool and signed integers */
  }
}

static size_t work_size(work_type w) { return w == WORK_F32 ? 4 : 8; }

const char *dlb_quantile_name(const dlb_quantile_options *o) {
  if (o->method == DLB_QUANTILE_MEDIAN) return o->skip_nan ? "nanmedian" : "median";
  if (o->percentile) return o->skip_nan ? "nanpercentile" : "percentile";
  return o->skip_nan ? "nanquantile" : "quantile";
}

/* --- planning --------------------------------------------------------------- */

static int interpolates(dlb_quantile_method m) {
  return m == DLB_QUANTILE_LINEAR || m == DLB_QUANTILE_MIDPOINT;
}

static dlb_status result_dtype(const dlb_array *a, const dlb_quantile_options *o, dlb_dtype *dtype,
                               const char *op, dlb_error *err) {
  dlb_kind kind = dlb_dtype_get(a->dtype)->kind;
  if (kind == DLB_KIND_COMPLEX) {
    dlb_fail(err, DLB_E_DTYPE, "%s: %s elements have no order here", op,
             dlb_dtype_get(a->dtype)->name);
    dlb_error_hint(err, "take the quantiles of the real part, or of the magnitude: dl.abs(a)");
    return DLB_E_DTYPE;
  }
  if (o->method == DLB_QUANTILE_MEDIAN) {
    *dtype = kind == DLB_KIND_FLOAT ? a->dtype : DLB_FLOAT64;
    return DLB_OK;
  }
  if (!interpolates(o->method)) {
    *dtype = a->dtype;
    return DLB_OK;
  }
  if (kind == DLB_KIND_BOOL) {
    dlb_fail(err, DLB_E_DTYPE, "%s: method \"%s\" cannot interpolate between booleans", op,
             o->method == DLB_QUANTILE_LINEAR ? "linear" : "midpoint");
    dlb_error_hint(err, "use method \"lower\", \"higher\" or \"nearest\", or a:astype(\"int8\")");
    return DLB_E_DTYPE;
  }
  *dtype = DLB_FLOAT64;
  return DLB_OK;
}

dlb_status dlb_quantile_result(const dlb_array *a, const dlb_array *q,
                               const dlb_quantile_options *o, dlb_dtype *dtype, int *ndim,
                               int64_t *shape, dlb_error *err) {
  const char *op = dlb_quantile_name(o);
  uint64_t dims = o->dims == DLB_REDUCE_ALL_DIMS ? (UINT64_C(1) << a->ndim) - 1 : o->dims;
  int nd = 0;
  dlb_status st;
  if (a->ndim < 64 && dims >> a->ndim) {
    dlb_fail(err, DLB_E_INDEX, "%s: dim %d is out of range for a %d-D array", op,
             64 - __builtin_clzll(dims), a->ndim);
    return DLB_E_INDEX;
  }
  if ((st = result_dtype(a, o, dtype, op, err)) != DLB_OK) return st;
  if (q && q->ndim + a->ndim > DLB_MAX_NDIM) {
    dlb_fail(err, DLB_E_SHAPE, "%s: q's %d dims and a's %d make more than %d", op, q->ndim, a->ndim,
             DLB_MAX_NDIM);
    return DLB_E_SHAPE;
  }
  for (int d = 0; q && d < q->ndim; d++) shape[nd++] = q->shape[d];
  for (int d = 0; d < a->ndim; d++)
    if (!(dims >> d & 1)) shape[nd++] = a->shape[d];
    else if (o->keepdims) shape[nd++] = 1;
  *ndim = nd;
  return DLB_OK;
}

/* What one q wants of a slice of m elements (m >= 1): the value at rank
 * lo, or (interpolating) lo and hi mixed by t, NumPy's _lerp weight. */
typedef struct q_plan {
  int64_t lo, hi;
  double t;
} q_plan;

/* NumPy 1.24's indexes and gamma for q (in [0, 1]) by method. */
static q_plan plan_one(double q, int64_t m, dlb_quantile_method method) {
  double v = (double)(m - 1) * q, below;
  q_plan p = {0, 0, 0.0};
  switch (method) {
    case DLB_QUANTILE_LOWER: p.lo = p.hi = (int64_t)floor(v); return p;
    case DLB_QUANTILE_HIGHER: p.lo = p.hi = (int64_t)ceil(v); return p;
    case DLB_QUANTILE_NEAREST: p.lo = p.hi = (int64_t)nearbyint(v); return p;
    case DLB_QUANTILE_MEDIAN:
      p.hi = m / 2;
      p.lo = m % 2 ? p.hi : p.hi - 1;
      return p;
    case DLB_QUANTILE_MIDPOINT: v = 0.5 * (floor(v) + ceil(v)); break;
    default: break;
  }
  below = floor(v);
  if (v >= (double)(m - 1)) { /* NumPy's index -1 for both; gamma counts from it */
    p.lo = p.hi = m - 1;
    below = -1.0;
  } else {
    p.lo = (int64_t)below;
    p.hi = p.lo + 1;
  }
  p.t = v - below;
  if (method == DLB_QUANTILE_MIDPOINT) p.t = fmod(v, 1.0) == 0.0 ? 0.0 : 0.5;
  return p;
}

/* The state of one call. */
typedef struct qctx {
  const dlb_array *a;
  const dlb_quantile_options *o;
  const char *op;
  dlb_dtype result;
  work_type wt;
  int64_t nq, slices; /* q's count (1 for median), slices in the result */
  const double *q;    /* nq fractions in [0, 1] (NULL for median) */
  q_plan *plans;      /* nq, for slices of plan_m elements */
  int64_t *ranks;     /* the distinct ranks they want, sorted */
  int64_t nranks, plan_m;
  int rdims; /* the reduced dims, the one of smallest stride last */
  int64_t rshape[DLB_MAX_NDIM], rstride[DLB_MAX_NDIM]; /* byte strides */
  dlb_work *w;                                         /* the call's work (dlb_work_current) */
  dlb_error *err;
} qctx;

static int compare_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* c->plans and c->ranks for slices of m >= 1 elements. */
static void plan_slices(qctx *c, int64_t m) {
  int64_t n = 0;
  if (c->plan_m == m) return;
  for (int64_t j = 0; j < c->nq; j++) {
    q_plan p = plan_one(c->q ? c->q[j] : 0.5, m, c->o->method);
    c->plans[j] = p;
    c->ranks[n++] = p.lo;
    if (p.hi != p.lo) c->ranks[n++] = p.hi;
  }
  qsort(c->ranks, (size_t)n, sizeof *c->ranks, compare_i64);
  c->nranks = 0;
  for (int64_t i = 0; i < n; i++)
    if (c->nranks == 0 || c->ranks[c->nranks - 1] != c->ranks[i])
      c->ranks[c->nranks++] = c->ranks[i];
  c->plan_m = m;
}

/* --- copying a slice -------------------------------------------------------- */

/* One row of the slice (count elements at byte stride from p) converted
 * into dst from index at; NaNs are left out when skip, else counted into
 * *nans. Returns the new index. */
#define COPY_ROW(SRC_T, CONV)                                                                      \
  for (int64_t i = 0; i < count; i++) dst[at++] = CONV(*(const SRC_T *)(p + i * stride))
#define AS_IS(x) (x)

static int64_t copy_ints(const char *p, int64_t stride, int64_t count, dlb_dtype t, int64_t *dst,
                         int64_t at) {
  switch (t) {
    case DLB_BOOL: COPY_ROW(uint8_t, AS_IS); break;
    case DLB_INT8: COPY_ROW(int8_t, AS_IS); break;
    case DLB_INT16: COPY_ROW(int16_t, AS_IS); break;
    case DLB_INT32: COPY_ROW(int32_t, AS_IS); break;
    default: COPY_ROW(int64_t, AS_IS); break;
  }
  return at;
}

static int64_t copy_uints(const char *p, int64_t stride, int64_t count, dlb_dtype t, uint64_t *dst,
                          int64_t at) {
  switch (t) {
    case DLB_UINT8: COPY_ROW(uint8_t, AS_IS); break;
    case DLB_UINT16: COPY_ROW(uint16_t, AS_IS); break;
    case DLB_UINT32: COPY_ROW(uint32_t, AS_IS); break;
    default: COPY_ROW(uint64_t, AS_IS); break;
  }
  return at;
}

static float half_to_float(uint16_t h) { return (float)dlb_float16_to_double(h); }
static float bfloat_to_float(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Float rows: the NaN test is x != x; skip keeps the others packed. */
#define COPY_FLOAT_ROW(SRC_T, CONV)                                                                \
  do {                                                                                             \
    if (skip) {                                                                                    \
      for (int64_t i = 0; i < count; i++) {                                                        \
        float_t_ x = CONV(*(const SRC_T *)(p + i * stride));                                       \
        dst[at] = x;                                                                               \
        at += x == x;                                                                              \
      }                                                                                            \
    } else {                                                                                       \
      int64_t bad = 0;                                                                             \
      for (int64_t i = 0; i < count; i++) {                                                        \
        float_t_ x = CONV(*(const SRC_T *)(p + i * stride));                                       \
        dst[at + i] = x;                                                                           \
        bad += x != x;                                                                             \
      }                                                                                            \
      at += count;                                                                                 \
      *nans += bad;                                                                                \
    }                                                                                              \
  } while (0)

static int64_t copy_f32(const char *p, int64_t stride, int64_t count, dlb_dtype t, float *dst,
                        int64_t at, int skip, int64_t *nans) {
  typedef float float_t_;
  switch (t) {
    case DLB_FLOAT16: COPY_FLOAT_ROW(uint16_t, half_to_float); break;
    case DLB_BFLOAT16: COPY_FLOAT_ROW(uint16_t, bfloat_to_float); break;
    default: COPY_FLOAT_ROW(float, AS_IS); break;
  }
  return at;
}

static int64_t copy_f64(const char *p, int64_t stride, int64_t count, double *dst, int64_t at,
                        int skip, int64_t *nans) {
  typedef double float_t_;
  COPY_FLOAT_ROW(double, AS_IS);
  return at;
}

/* count elements at byte stride from p into scratch from index at, as
 * copy_slice copies them; returns the new index. */
static int64_t copy_row(const qctx *c, const char *p, int64_t stride, int64_t count, void *scratch,
                        int64_t at, int64_t *nans) {
  switch (c->wt) {
    case WORK_I64: return copy_ints(p, stride, count, c->a->dtype, scratch, at);
    case WORK_U64: return copy_uints(p, stride, count, c->a->dtype, scratch, at);
    case WORK_F32:
      return copy_f32(p, stride, count, c->a->dtype, scratch, at, c->o->skip_nan, nans);
    default: return copy_f64(p, stride, count, scratch, at, c->o->skip_nan, nans);
  }
}

/* The slice at base into scratch: its element count (NaNs left out when
 * skipping), the NaNs seen into *nans. Ticks the work every
 * DLB_WORK_CHECK_EVERY elements at most; -1 when it must stop. */
static int64_t copy_slice(const qctx *c, const char *base, void *scratch, int64_t *nans) {
  int inner = c->rdims - 1;
  int64_t idx[DLB_MAX_NDIM], at = 0;
  int64_t count = inner >= 0 ? c->rshape[inner] : 1, stride = inner >= 0 ? c->rstride[inner] : 0;
  const char *p = base;
  for (int d = 0; d < inner; d++) idx[d] = 0;
  *nans = 0;
  for (;;) {
    for (int64_t done = 0; done < count; done += DLB_WORK_CHECK_EVERY) {
      int64_t piece = count - done < DLB_WORK_CHECK_EVERY ? count - done : DLB_WORK_CHECK_EVERY;
      at = copy_row(c, p + done * stride, stride, piece, scratch, at, nans);
      if (dlb_work_tick(c->w, piece)) return -1;
    }
    int d = inner - 1; /* the odometer over the outer reduced dims */
    for (; d >= 0; d--) {
      p += c->rstride[d];
      if (++idx[d] < c->rshape[d]) break;
      p -= c->rstride[d] * c->rshape[d];
      idx[d] = 0;
    }
    if (d < 0) return at;
  }
}

/* --- values ------------------------------------------------------------------- */

/* b - a in the input's dtype, as NumPy subtracts (integers wrap to their
 * width, float16 and bfloat16 round), as a double. */
static double diff_in_dtype(dlb_dtype t, double fa, double fb, uint64_t ua, uint64_t ub) {
  switch (t) {
    case DLB_INT8: return (double)(int8_t)(uint8_t)(ub - ua);
    case DLB_INT16: return (double)(int16_t)(uint16_t)(ub - ua);
    case DLB_INT32: return (double)(int32_t)(uint32_t)(ub - ua);
    case DLB_INT64: return (double)(int64_t)(ub - ua);
    case DLB_UINT8:
    case DLB_UINT16:
    case DLB_UINT32:
    case DLB_UINT64: return (double)(ub - ua); /* b >= a: no wrap */
    case DLB_FLOAT16: return dlb_float16_to_double(dlb_float16_from_double((float)fb - (float)fa));
    case DLB_BFLOAT16:
      return dlb_bfloat16_to_double(dlb_bfloat16_from_double((float)fb - (float)fa));
    case DLB_FLOAT32: return (float)fb - (float)fa;
    default: return fb - fa;
  }
}

/* NumPy's _lerp(a, b, t) with d = b - a already in the input's dtype. */
static double lerp(double a, double b, double d, double t) {
  return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}

/* The element at rank r of the selected scratch: as a double (fa), and its
 * bits as an integer (ua) for the integer work types. */
static void element(const qctx *c, const void *s, int64_t r, double *fa, uint64_t *ua) {
  switch (c->wt) {
    case WORK_I64:
      *ua = (uint64_t)((const int64_t *)s)[r];
      *fa = (double)((const int64_t *)s)[r];
      break;
    case WORK_U64:
      *ua = ((const uint64_t *)s)[r];
      *fa = (double)*ua;
      break;
    case WORK_F32: *fa = ((const float *)s)[r]; break;
    case WORK_F64: *fa = ((const double *)s)[r]; break;
  }
}

/* np.mean of the two middle values a <= b of an even count. */
static double mean_of_two(dlb_dtype t, double a, double b) {
  switch (t) {
    case DLB_FLOAT16:
    case DLB_BFLOAT16:
    case DLB_FLOAT32: return ((float)a + (float)b) / 2.0f; /* float16: np.mean's float32 */
    default: return (a + b) / 2.0;
  }
}

static void store_value(dlb_dtype t, char *dst, double f, uint64_t u) {
  switch (t) {
    case DLB_BOOL:
    case DLB_INT8:
    case DLB_UINT8: *(uint8_t *)dst = (uint8_t)u; break;
    case DLB_INT16:
    case DLB_UINT16: *(uint16_t *)dst = (uint16_t)u; break;
    case DLB_INT32:
    case DLB_UINT32: *(uint32_t *)dst = (uint32_t)u; break;
    case DLB_INT64:
    case DLB_UINT64: *(uint64_t *)dst = u; break;
    case DLB_FLOAT16: *(uint16_t *)dst = dlb_float16_from_double(f); break;
    case DLB_BFLOAT16: *(uint16_t *)dst = dlb_bfloat16_from_double(f); break;
    case DLB_FLOAT32: *(float *)dst = (float)f; break;
    default: *(double *)dst = f; break;
  }
}

/* Result element j of slice k: out[j * slices + k]. */
static char *result_at(const qctx *c, char *out, int64_t j, int64_t k) {
  return out + (size_t)(j * c->slices + k) * dlb_dtype_get(c->result)->itemsize;
}

static void store_nan(const qctx *c, char *out, int64_t k) {
  for (int64_t j = 0; j < c->nq; j++) store_value(c->result, result_at(c, out, j, k), NAN, 0);
}

/* Selects the ranks in the m elements of scratch and writes slice k's
 * values. */
static void slice_values(qctx *c, void *s, int64_t m, char *out, int64_t k) {
  plan_slices(c, m);
  switch (c->wt) {
    case WORK_I64: select_i64_select(s, 0, m, c->ranks, c->nranks); break;
    case WORK_U64: select_u64_select(s, 0, m, c->ranks, c->nranks); break;
    case WORK_F32: select_f32_select(s, 0, m, c->ranks, c->nranks); break;
    case WORK_F64: select_f64_select(s, 0, m, c->ranks, c->nranks); break;
  }
  for (int64_t j = 0; j < c->nq; j++) {
    const q_plan *p = &c->plans[j];
    double fa = 0, fb = 0, f;
    uint64_t ua = 0, ub = 0;
    element(c, s, p->lo, &fa, &ua);
    element(c, s, p->hi, &fb, &ub);
    if (c->o->method == DLB_QUANTILE_MEDIAN)
      f = p->lo == p->hi ? fa : mean_of_two(c->a->dtype, fa, fb);
    else if (interpolates(c->o->method))
      f = lerp(fa, fb, diff_in_dtype(c->a->dtype, fa, fb, ua, ub), p->t);
    else f = fa;
    store_value(c->result, result_at(c, out, j, k), f, ua);
  }
}

/* --- the walk ------------------------------------------------------------------ */

/* The reduced dims into c (byte strides), ordered so that the one of
 * smallest stride is walked innermost; kept dims into kshape/kstride. */
static int split_dims(qctx *c, uint64_t dims, int64_t *kshape, int64_t *kstride) {
  const dlb_array *a = c->a;
  int64_t item = (int64_t)dlb_array_itemsize(a);
  int nk = 0;
  c->rdims = 0;
  for (int d = 0; d < a->ndim; d++) {
    int64_t s = a->strides[d] * item;
    if (dims >> d & 1) {
      int i = c->rdims++;
      for (; i > 0 && llabs(c->rstride[i - 1]) < llabs(s); i--) {
        c->rshape[i] = c->rshape[i - 1];
        c->rstride[i] = c->rstride[i - 1];
      }
      c->rshape[i] = a->shape[d];
      c->rstride[i] = s;
    } else {
      kshape[nk] = a->shape[d];
      kstride[nk++] = s;
    }
  }
  return nk;
}

/* Every slice into out (host memory of the result dtype, contiguous). */
static dlb_status walk(qctx *c, uint64_t dims, void *scratch, char *out) {
  int64_t kshape[DLB_MAX_NDIM], kstride[DLB_MAX_NDIM], kidx[DLB_MAX_NDIM] = {0};
  int nk = split_dims(c, dims, kshape, kstride);
  const char *base = dlb_array_host_data(c->a);
  for (int64_t k = 0; k < c->slices; k++) {
    int64_t nans, m = copy_slice(c, base, scratch, &nans);
    if (m < 0) return DLB_OK; /* interrupted: the work's end says so */
    if (nans > 0 || m == 0) store_nan(c, out, k);
    else slice_values(c, scratch, m, out, k);
    if (dlb_work_tick(c->w, m)) return DLB_OK; /* the selection's work */
    for (int d = nk - 1; d >= 0; d--) {
      base += kstride[d];
      if (++kidx[d] < kshape[d]) break;
      base -= kstride[d] * kshape[d];
      kidx[d] = 0;
    }
  }
  return DLB_OK;
}

/* --- checks and scratch ------------------------------------------------------- */

static dlb_status host_memory(const dlb_array *x, const char *op, dlb_error *err) {
  if (x->buffer->host || x->buffer->nbytes == 0) return dlb_buffer_sync_host(x->buffer, err);
  dlb_fail(err, DLB_E_UNSUPPORTED, "%s: the host cannot address the memory of %s:%d", op,
           x->buffer->backend ? x->buffer->backend->name : "?", x->buffer->device_id);
  dlb_error_hint(err, "order statistics run on the host: dl.device_put(a, \"cpu\") first");
  return DLB_E_UNSUPPORTED;
}

/* q's values (as float64, divided by 100 for percentiles) into qs; VALUE
 * for one outside the range. */
static dlb_status read_q(const dlb_array *q, const dlb_quantile_options *o, double *qs,
                         const char *op, dlb_error *err) {
  dlb_status st = dlb_array_read_into(q, qs, DLB_FLOAT64, err);
  if (st != DLB_OK) return st;
  for (int64_t j = 0; j < q->numel; j++) {
    if (o->percentile) qs[j] /= 100.0;
    if (!(qs[j] >= 0.0 && qs[j] <= 1.0)) {
      dlb_fail(err, DLB_E_VALUE, "%s: %s must be in the range [0, %s]", op,
               o->percentile ? "percentiles" : "quantiles", o->percentile ? "100" : "1");
      dlb_error_hint(err, o->percentile ? "q is in percent: 95 for the 95th percentile"
                                        : "q is a fraction: 0.95, or use dl.percentile(a, 95)");
      return DLB_E_VALUE;
    }
  }
  return DLB_OK;
}

/* A cpu scratch array of count elements of itemsize bytes (at least one). */
static dlb_status scratch(dlb_backend *cpu, int64_t count, size_t itemsize, dlb_array *out,
                          dlb_error *err) {
  int64_t n = count > 0 ? count : 1;
  return dlb_array_allocate(out, cpu, 0, itemsize == 4 ? DLB_FLOAT32 : DLB_FLOAT64, 1, &n, 0, err);
}

/* The empty-slice rule (quantile.h) once the slices are known to be empty. */
static dlb_status empty_slices(const qctx *c, char *out) {
  if (c->o->method == DLB_QUANTILE_MEDIAN ||
      (c->o->skip_nan && dlb_dtype_get(c->result)->kind == DLB_KIND_FLOAT)) {
    for (int64_t k = 0; k < c->slices; k++) store_nan(c, out, k);
    return DLB_OK;
  }
  dlb_fail(c->err, DLB_E_INDEX, "%s of an empty slice: there is no element to take", c->op);
  dlb_error_hint(c->err, c->o->skip_nan ? "an integer result cannot be NaN: check the extent first"
                                        : "NumPy 1.24 raises IndexError here; check the extent "
                                          "first, or use the nan- form for NaN");
  return DLB_E_INDEX;
}

static dlb_status compute(qctx *c, const dlb_array *q, uint64_t dims, int64_t n, dlb_array *res,
                          dlb_backend *cpu) {
  dlb_array qv = {0}, plans = {0}, ranks = {0}, slice = {0};
  int64_t plan_words, rank_words; /* 8-byte words: a q_plan is 3 (lo, hi, t), ranks 2 a q */
  char *out = dlb_array_host_data(res);
  dlb_status st = DLB_OK;
  if (q && ((st = scratch(cpu, c->nq, 8, &qv, c->err)) != DLB_OK ||
            (st = read_q(q, c->o, (double *)dlb_array_host_data(&qv), c->op, c->err)) != DLB_OK))
    goto done;
  c->q = q ? (const double *)dlb_array_host_data(&qv) : NULL;
  c->w = dlb_work_current();
  if (res->numel == 0) goto done;
  if (n == 0) {
    st = empty_slices(c, out);
    goto done;
  }
  if (__builtin_mul_overflow(c->nq, (int64_t)(sizeof(q_plan) / 8), &plan_words) ||
      __builtin_mul_overflow(c->nq, 2, &rank_words)) {
    st = dlb_fail(c->err, DLB_E_SHAPE, "%s: %lld q's are too many", c->op, (long long)c->nq);
    goto done;
  }
  if ((st = scratch(cpu, plan_words, 8, &plans, c->err)) != DLB_OK ||
      (st = scratch(cpu, rank_words, 8, &ranks, c->err)) != DLB_OK ||
      (st = scratch(cpu, n, work_size(c->wt), &slice, c->err)) != DLB_OK)
    goto done;
  c->plans = (q_plan *)dlb_array_host_data(&plans);
  c->ranks = (int64_t *)dlb_array_host_data(&ranks);
  st = walk(c, dims, dlb_array_host_data(&slice), out);
done:
  dlb_array_release(&qv);
  dlb_array_release(&plans);
  dlb_array_release(&ranks);
  dlb_array_release(&slice);
  return st;
}

static dlb_status quantile_into(const dlb_array *a, const dlb_array *q,
                                const dlb_quantile_options *o, dlb_array *out, dlb_backend *cpu,
                                dlb_error *err) {
  const char *op = dlb_quantile_name(o);
  const dlb_array *arrays[2] = {a, q};
  qctx c;
  dlb_placement where;
  dlb_array res = {0};
  int64_t shape[DLB_MAX_NDIM], n = 1;
  int ndim;
  uint64_t dims;
  dlb_status st;
  memset(&c, 0, sizeof c);
  if ((st = dlb_check_arrays_for(q ? 2 : 1, arrays, cpu, DLB_ANY_MEMORY, &where, op, err)) !=
          DLB_OK ||
      (st = dlb_quantile_result(a, q, o, &c.result, &ndim, shape, err)) != DLB_OK ||
      (st = host_memory(a, op, err)) != DLB_OK || (q && (st = host_memory(q, op, err)) != DLB_OK))
    return st;
  dims = o->dims == DLB_REDUCE_ALL_DIMS ? (UINT64_C(1) << a->ndim) - 1 : o->dims;
  for (int d = 0; d < a->ndim; d++)
    if (dims >> d & 1) n *= a->shape[d]; /* no overflow: at most a's numel, or 0 */
  c.a = a;
  c.o = o;
  c.op = op;
  c.wt = work_type_of(a->dtype);
  c.nq = q ? q->numel : 1;
  c.plan_m = -1;
  c.err = err;
  if ((st = dlb_array_allocate(&res, cpu, 0, c.result, ndim, shape, 0, err)) != DLB_OK) return st;
  c.slices = c.nq ? res.numel / c.nq : 0;
  if ((st = compute(&c, q, dims, n, &res, cpu)) != DLB_OK) {
    dlb_array_release(&res);
    return st;
  }
  if (where.backend == cpu) {
    *out = res;
    return DLB_OK;
  }
  st = dlb_array_allocate(out, where.backend, where.device_id, c.result, ndim, shape, 0, err);
  if (st == DLB_OK && (st = dlb_array_copy_into(out, &res, err)) != DLB_OK) dlb_array_release(out);
  dlb_array_release(&res);
  return st;
}

dlb_status dlb_quantile(const dlb_array *a, const dlb_array *q, const dlb_quantile_options *o,
                        dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  const char *op = dlb_quantile_name(o);
  int64_t elements = a->numel;
  dlb_work w;
  dlb_status st;
  out->buffer = NULL;
  if (q && __builtin_add_overflow(elements, q->numel, &elements)) elements = INT64_MAX;
  if ((st = dlb_work_begin(&w, dlb_array_budget(a), elements, op, err)) != DLB_OK) return st;
  st = dlb_work_end(&w, quantile_into(a, q, o, out, cpu, err), op, err);
  if (st != DLB_OK) dlb_array_release(out);
  return st;
}
