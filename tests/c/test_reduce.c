/* test_reduce.c -- reductions (compute/reduce.h): float sums against a plain
 * port of NumPy's pairwise summation (bit for bit), every layout against a
 * plain index walk, empty arrays, NaN, dtypes, `out`, and misuse codes. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#define FIXTURES_CPU
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "compute/reduce.h"
#include "core/copy.h"
#include "fixtures.h"

/* --- a reference: NumPy 1.24's float sum, written as plainly as there ---- */

static float numpy_pairwise_f32(const float *a, int64_t n, int64_t stride) {
  if (n < 8) {
    float res = 0;
    for (int64_t i = 0; i < n; i++) res += a[i * stride];
    return res;
  }
  if (n <= 128) {
    float r[8], res;
    int64_t i;
    for (int l = 0; l < 8; l++) r[l] = a[l * stride];
    for (i = 8; i < n - (n % 8); i += 8)
      for (int l = 0; l < 8; l++) r[l] += a[(i + l) * stride];
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) res += a[i * stride];
    return res;
  }
  int64_t n2 = n / 2 - (n / 2) % 8;
  return numpy_pairwise_f32(a, n2, stride) + numpy_pairwise_f32(a + n2 * stride, n - n2, stride);
}

static double numpy_pairwise_f64(const double *a, int64_t n) {
  if (n < 8) {
    double res = 0;
    for (int64_t i = 0; i < n; i++) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8], res;
    int64_t i;
    for (int l = 0; l < 8; l++) r[l] = a[l];
    for (i = 8; i < n - (n % 8); i += 8)
      for (int l = 0; l < 8; l++) r[l] += a[i + l];
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) res += a[i];
    return res;
  }
  int64_t n2 = n / 2 - (n / 2) % 8;
  return numpy_pairwise_f64(a, n2) + numpy_pairwise_f64(a + n2, n - n2);
}

/* np.sum of a contiguous run: from 0, pairwise pieces of 8192 added in order. */
static float numpy_sum_f32(const float *a, int64_t n, int64_t stride) {
  float s = 0;
  for (int64_t i = 0; i < n; i += 8192)
    s += numpy_pairwise_f32(a + i * stride, n - i < 8192 ? n - i : 8192, stride);
  return s;
}

static double numpy_sum_f64(const double *a, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i += 8192) s += numpy_pairwise_f64(a + i, n - i < 8192 ? n - i : 8192);
  return s;
}

/* A float in [-1, 1) with few bits, and sometimes a much larger one. */
static double random_value(void) {
  double x = (double)rnd(1 << 20) / (1 << 19) - 1.0;
  return rnd(16) == 0 ? x * 1e6 : x;
}

static dlb_reduce_options all_dims(void) {
  dlb_reduce_options o;
  memset(&o, 0, sizeof o);
  o.dims = DLB_REDUCE_ALL_DIMS;
  return o;
}

static dlb_reduce_options dims(uint64_t mask) {
  dlb_reduce_options o = all_dims();
  o.dims = mask;
  return o;
}

/* The single value of a reduction (ops whose result is one element). */
static dlb_scalar value_of(dlb_reduce_op op, const dlb_array *a, const dlb_reduce_options *o) {
  dlb_scalar v;
  memset(&v, 0, sizeof v);
  CHECK_EQ_INT(dlb_reduce_value(op, a, o, cpu, &v, &err), DLB_OK);
  return v;
}

/* --- pairwise sums --------------------------------------------------------- */

static void test_pairwise_bits(void) {
  static const int64_t lengths[] = {1,   5,    7,    8,    9,    100,  127,  128,   129,  136,
                                    250, 1000, 3000, 8191, 8192, 8193, 9000, 20000, 65537};
  for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++) {
    int64_t n = lengths[k];
    dlb_array f = alloc(DLB_FLOAT32, 1, &n), d = alloc(DLB_FLOAT64, 1, &n);
    float *pf = (float *)dlb_array_host_data(&f);
    double *pd = (double *)dlb_array_host_data(&d);
    dlb_reduce_options o = all_dims();
    dlb_scalar s;
    for (int64_t i = 0; i < n; i++) {
      pd[i] = random_value();
      pf[i] = (float)random_value();
    }
    s = value_of(DLB_REDUCE_SUM, &f, &o);
    CHECK((float)s.v.f == numpy_sum_f32(pf, n, 1));
    s = value_of(DLB_REDUCE_SUM, &d, &o);
    CHECK(s.v.f == numpy_sum_f64(pd, n));
    /* mean: the same sum, divided in float32 */
    s = value_of(DLB_REDUCE_MEAN, &f, &o);
    CHECK((float)s.v.f == numpy_sum_f32(pf, n, 1) / (float)n);
    dlb_array_release(&f);
    dlb_array_release(&d);
  }
}

/* Rows: along the contiguous dim, each row is NumPy's run; along the outer
 * dim, whole rows are added in order. */
static void test_rows(void) {
  const int64_t shape[2] = {7, 3001};
  dlb_array a = alloc(DLB_FLOAT32, 2, shape), r = {0}, c = {0};
  float *p = (float *)dlb_array_host_data(&a);
  dlb_reduce_options o = dims(2);
  for (int64_t i = 0; i < a.numel; i++) p[i] = (float)random_value();
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &a, &o, &r, cpu, &err), DLB_OK);
  CHECK_EQ_INT(r.ndim, 1);
  CHECK_EQ_INT(r.shape[0], 7);
  for (int i = 0; i < 7; i++)
    CHECK(((float *)dlb_array_host_data(&r))[i] == numpy_sum_f32(p + i * 3001, 3001, 1));
  o = dims(1);
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &a, &o, &c, cpu, &err), DLB_OK);
  CHECK_EQ_INT(c.shape[0], 3001);
  for (int j = 0; j < 3001; j += 97) {
    float s = 0;
    for (int i = 0; i < 7; i++) s += p[i * 3001 + j];
    CHECK(((float *)dlb_array_host_data(&c))[j] == s);
  }
  dlb_array_release(&r);
  dlb_array_release(&c);
  /* Transposed: dim 1 is now the contiguous one. */
  {
    dlb_array t = view_of(&a), tr = {0};
    const int perm[2] = {1, 0};
    CHECK_EQ_INT(dlb_view_permute(&t, perm, &err), DLB_OK);
    o = dims(1);
    CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &t, &o, &tr, cpu, &err), DLB_OK);
    for (int i = 0; i < 7; i++)
      CHECK(((float *)dlb_array_host_data(&tr))[i] == numpy_sum_f32(p + i * 3001, 3001, 1));
    dlb_array_release(&tr);
    dlb_array_release(&t);
  }
  dlb_array_release(&a);
}

/* One dim of more than one element (the backend walks it without the
 * iterator): every length around a block, contiguous, stepped, reversed
 * and behind an extent-1 dim; sums bit for bit as NumPy's walk in memory
 * order (a reversed run flipped first), the others against plain loops. */
static void check_line(const dlb_array *v, const float *first, int64_t n, int64_t step) {
  dlb_reduce_options o = all_dims();
  float lo = 0, hi = 0;
  int64_t at_max = 0, nonzero = 0;
  for (int64_t i = 0; i < n; i++) {
    float x = first[i * step];
    if (i == 0 || x > hi) {
      hi = x;
      at_max = i;
    }
    if (i == 0 || x < lo) lo = x;
    nonzero += x != 0;
  }
  /* memory order: a reversed run from its far end */
  float want =
      step < 0 ? numpy_sum_f32(first + (n - 1) * step, n, -step) : numpy_sum_f32(first, n, step);
  CHECK((float)value_of(DLB_REDUCE_SUM, v, &o).v.f == want);
  CHECK_EQ_INT(value_of(DLB_REDUCE_COUNT_NONZERO, v, &o).v.i, nonzero);
  if (n == 0) {
    dlb_scalar s;
    CHECK_EQ_INT(dlb_reduce_value(DLB_REDUCE_MAX, v, &o, cpu, &s, &err), DLB_E_VALUE);
    return;
  }
  CHECK((float)value_of(DLB_REDUCE_MEAN, v, &o).v.f == want / (float)n);
  CHECK((float)value_of(DLB_REDUCE_MAX, v, &o).v.f == hi);
  CHECK((float)value_of(DLB_REDUCE_MIN, v, &o).v.f == lo);
  CHECK_EQ_INT(value_of(DLB_REDUCE_ARGMAX, v, &o).v.i, at_max);
}

static void test_lines(void) {
  static const int64_t lengths[] = {0, 1, 2, 7, 8, 9, 127, 128, 129, 8193, 70001};
  for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++) {
    int64_t n = lengths[k], whole = 3 * n;
    dlb_array a = alloc(DLB_FLOAT32, 1, &whole);
    float *p = (float *)dlb_array_host_data(&a);
    for (int64_t i = 0; i < whole; i++) p[i] = rnd(8) == 0 ? 0.0f : (float)random_value();
    {
      dlb_array v = view_of(&a); /* contiguous */
      CHECK_EQ_INT(dlb_view_slice(&v, 0, 0, n, 1, &err), DLB_OK);
      check_line(&v, p, n, 1);
      dlb_array_release(&v);
    }
    {
      dlb_array v = view_of(&a); /* every third */
      CHECK_EQ_INT(dlb_view_slice(&v, 0, 1, n, 3, &err), DLB_OK);
      check_line(&v, p + 1, n, 3);
      dlb_array_release(&v);
    }
    for (int64_t step = -1; n > 0 && step >= -2; step--) { /* reversed */
      dlb_array v = view_of(&a);
      CHECK_EQ_INT(dlb_view_slice(&v, 0, whole - 1, n, step, &err), DLB_OK);
      check_line(&v, p + whole - 1, n, step);
      dlb_array_release(&v);
    }
    {
      dlb_array v = view_of(&a); /* (1, n) and (n, 1) */
      CHECK_EQ_INT(dlb_view_slice(&v, 0, 0, n, 1, &err), DLB_OK);
      CHECK_EQ_INT(dlb_view_unsqueeze(&v, 0, &err), DLB_OK);
      check_line(&v, p, n, 1);
      CHECK_EQ_INT(dlb_view_squeeze(&v, 0, &err), DLB_OK);
      CHECK_EQ_INT(dlb_view_unsqueeze(&v, 1, &err), DLB_OK);
      check_line(&v, p, n, 1);
      if (n > 0) { /* over the extent-1 dim: each element its own sum */
        dlb_array r = {0};
        dlb_reduce_options o = dims(2);
        CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &v, &o, &r, cpu, &err), DLB_OK);
        CHECK_EQ_INT(r.numel, n);
        CHECK(memcmp(dlb_array_host_data(&r), p, (size_t)n * sizeof(float)) == 0);
        dlb_array_release(&r);
      }
      dlb_array_release(&v);
    }
    dlb_array_release(&a);
  }
}

/* Row sums of odd widths: each row's runs (8,192 and the rest, whose
 * blocks the kernel keeps apart) pairwise as NumPy's, float32 and float64. */
static void test_odd_rows(void) {
  static const int64_t widths[] = {9, 127, 129, 1809, 3001, 8193, 10007, 16385};
  for (size_t k = 0; k < sizeof widths / sizeof *widths; k++) {
    const int64_t shape[2] = {5, widths[k]}, w = widths[k];
    dlb_array f = alloc(DLB_FLOAT32, 2, shape), d = alloc(DLB_FLOAT64, 2, shape);
    dlb_array rf = {0}, rd = {0};
    float *pf = (float *)dlb_array_host_data(&f);
    double *pd = (double *)dlb_array_host_data(&d);
    dlb_reduce_options o = dims(2);
    for (int64_t i = 0; i < f.numel; i++) {
      pf[i] = (float)random_value();
      pd[i] = random_value();
    }
    CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &f, &o, &rf, cpu, &err), DLB_OK);
    CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &d, &o, &rd, cpu, &err), DLB_OK);
    for (int64_t i = 0; i < 5; i++) {
      CHECK(((float *)dlb_array_host_data(&rf))[i] == numpy_sum_f32(pf + i * w, w, 1));
      CHECK(((double *)dlb_array_host_data(&rd))[i] == numpy_sum_f64(pd + i * w, w));
    }
    dlb_array_release(&rf);
    dlb_array_release(&rd);
    dlb_array_release(&f);
    dlb_array_release(&d);
  }
}

static void test_exact_ones(void) {
  int64_t n = 10000000;
  dlb_array a = alloc(DLB_FLOAT32, 1, &n);
  float *p = (float *)dlb_array_host_data(&a);
  dlb_reduce_options o = all_dims();
  for (int64_t i = 0; i < n; i++) p[i] = 1.0f;
  CHECK(value_of(DLB_REDUCE_SUM, &a, &o).v.f == 1e7);
  CHECK(value_of(DLB_REDUCE_MEAN, &a, &o).v.f == 1.0);
  dlb_array_release(&a);
}

/* --- every layout against a plain walk ------------------------------------- */

/* The int32 element at a flat row-major position of the view v. */
static int32_t element(const dlb_array *v, int64_t flat) {
  int64_t off = 0;
  for (int d = v->ndim - 1; d >= 0; d--) {
    off += (flat % v->shape[d]) * v->strides[d];
    flat /= v->shape[d];
  }
  return ((const int32_t *)dlb_array_host_data(v))[off];
}

/* A random view of base: permuted, reversed, stepped, expanded. */
static dlb_array random_view(const dlb_array *base) {
  dlb_array v = view_of(base);
  int perm[4] = {0, 1, 2, 3};
  for (int d = v.ndim - 1; d > 0; d--) {
    int e = (int)rnd(d + 1), t = perm[d];
    perm[d] = perm[e];
    perm[e] = t;
  }
  CHECK_EQ_INT(dlb_view_permute(&v, perm, &err), DLB_OK);
  for (int d = 0; d < v.ndim; d++) {
    if (v.shape[d] > 1 && rnd(4) == 0)
      CHECK_EQ_INT(dlb_view_slice(&v, d, v.shape[d] - 1, v.shape[d], -1, &err), DLB_OK);
    else if (v.shape[d] > 2 && rnd(4) == 0)
      CHECK_EQ_INT(dlb_view_slice(&v, d, 0, (v.shape[d] + 1) / 2, 2, &err), DLB_OK);
  }
  if (v.ndim < 4 && rnd(4) == 0) { /* a broadcast leading dim */
    int64_t shape[4];
    shape[0] = 1 + rnd(3);
    CHECK_EQ_INT(dlb_view_unsqueeze(&v, 0, &err), DLB_OK);
    for (int d = 1; d < v.ndim; d++) shape[d] = -1;
    CHECK_EQ_INT(dlb_view_expand(&v, v.ndim, shape, &err), DLB_OK);
  }
  return v;
}

/* Checks sum, max, argmin/argmax, count_nonzero and all of view v over the
 * dims in mask against a walk of its elements. */
static void check_layout(const dlb_array *v, uint64_t mask) {
  dlb_reduce_options o = dims(mask);
  dlb_array sum = {0}, max = {0}, count = {0}, all = {0}, argmax = {0};
  int single = __builtin_popcountll(mask) == 1;
  int64_t kept = 1, index[4] = {0};
  for (int d = 0; d < v->ndim; d++)
    if (!(mask >> d & 1)) kept *= v->shape[d];
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, v, &o, &sum, cpu, &err), DLB_OK);
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_COUNT_NONZERO, v, &o, &count, cpu, &err), DLB_OK);
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_ALL, v, &o, &all, cpu, &err), DLB_OK);
  CHECK_EQ_INT(sum.dtype, DLB_INT64);
  CHECK_EQ_INT(sum.numel, kept);
  if (v->numel > 0) {
    CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_MAX, v, &o, &max, cpu, &err), DLB_OK);
    if (single) CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_ARGMAX, v, &o, &argmax, cpu, &err), DLB_OK);
  }
  /* The reference: one pass over every element, row-major. */
  {
    int64_t *want_sum = calloc((size_t)kept + 1, 8), *want_count = calloc((size_t)kept + 1, 8);
    int32_t *want_max = calloc((size_t)kept + 1, 4);
    int64_t *want_arg = calloc((size_t)kept + 1, 8), *seen = calloc((size_t)kept + 1, 8);
    for (int64_t e = 0; e < v->numel; e++) {
      int64_t out = 0, along = 0;
      int32_t x = element(v, e);
      for (int d = 0; d < v->ndim; d++) {
        if (mask >> d & 1) along = index[d];
        else out = out * v->shape[d] + index[d];
      }
      want_sum[out] += x;
      want_count[out] += x != 0;
      if (!seen[out]++ || x > want_max[out]) {
        want_max[out] = x;
        want_arg[out] = along;
      }
      for (int d = v->ndim - 1; d >= 0 && ++index[d] == v->shape[d]; d--) index[d] = 0;
    }
    for (int64_t k = 0; k < kept; k++) {
      CHECK_EQ_INT(((int64_t *)dlb_array_host_data(&sum))[k], want_sum[k]);
      CHECK_EQ_INT(((int64_t *)dlb_array_host_data(&count))[k], want_count[k]);
      CHECK_EQ_INT(((uint8_t *)dlb_array_host_data(&all))[k],
                   want_count[k] == v->numel / (kept ? kept : 1));
      if (max.buffer) CHECK_EQ_INT(((int32_t *)dlb_array_host_data(&max))[k], want_max[k]);
      if (argmax.buffer) CHECK_EQ_INT(((int64_t *)dlb_array_host_data(&argmax))[k], want_arg[k]);
    }
    free(want_sum);
    free(want_count);
    free(want_max);
    free(want_arg);
    free(seen);
  }
  dlb_array_release(&sum);
  dlb_array_release(&max);
  dlb_array_release(&count);
  dlb_array_release(&all);
  dlb_array_release(&argmax);
}

static void test_layouts(void) {
  for (int round = 0; round < 400; round++) {
    int ndim = 1 + (int)rnd(3);
    int64_t shape[3];
    dlb_array base, v;
    for (int d = 0; d < ndim; d++) shape[d] = rnd(25) == 0 ? 0 : 1 + rnd(round < 300 ? 6 : 40);
    base = alloc(DLB_INT32, ndim, shape);
    for (int64_t i = 0; i < base.numel; i++) /* small values: ties and zeros */
      ((int32_t *)dlb_array_host_data(&base))[i] = (int32_t)rnd(9) - 3;
    v = random_view(&base);
    check_layout(&v, (UINT64_C(1) << v.ndim) - 1);
    check_layout(&v, UINT64_C(1) << rnd(v.ndim));
    if (v.ndim > 1) check_layout(&v, rnd((int64_t)1 << v.ndim));
    dlb_array_release(&v);
    dlb_array_release(&base);
  }
}

/* argmax over every dim of a view whose row-major order is not its memory
 * order: the flat row-major index. */
static void test_flat_argmax(void) {
  const int64_t shape[2] = {3, 4};
  dlb_array a = iota(2, shape), t = view_of(&a);
  const int perm[2] = {1, 0};
  dlb_reduce_options o = all_dims();
  o.index_base = 1;
  CHECK_EQ_INT(dlb_view_permute(&t, perm, &err), DLB_OK); /* t[i][j] = 4 * j + i */
  ((int32_t *)dlb_array_host_data(&a))[6] = 100;          /* t[2][1]: flat 2 * 3 + 1 */
  CHECK_EQ_INT(value_of(DLB_REDUCE_ARGMAX, &t, &o).v.i, 8);
  CHECK_EQ_INT(value_of(DLB_REDUCE_ARGMIN, &t, &o).v.i, 1);
  dlb_array_release(&t);
  dlb_array_release(&a);
}

/* --- empty arrays, NaN, dtypes ---------------------------------------------- */

static void test_empty(void) {
  const int64_t zero = 0, rows_empty[2] = {3, 0}, no_rows[2] = {0, 3};
  dlb_array e = alloc(DLB_FLOAT64, 1, &zero), r = alloc(DLB_FLOAT32, 2, rows_empty);
  dlb_array n = alloc(DLB_INT32, 2, no_rows), out = {0};
  dlb_reduce_options o = all_dims(), d1 = dims(2);
  CHECK(value_of(DLB_REDUCE_SUM, &e, &o).v.f == 0.0);
  CHECK(value_of(DLB_REDUCE_PROD, &e, &o).v.f == 1.0);
  CHECK(isnan(value_of(DLB_REDUCE_MEAN, &e, &o).v.f));
  CHECK(isnan(value_of(DLB_REDUCE_VAR, &e, &o).v.f));
  CHECK_EQ_INT(value_of(DLB_REDUCE_ALL, &e, &o).v.b, 1);
  CHECK_EQ_INT(value_of(DLB_REDUCE_ANY, &e, &o).v.b, 0);
  CHECK_EQ_INT(value_of(DLB_REDUCE_COUNT_NONZERO, &e, &o).v.i, 0);
  {
    dlb_scalar v;
    CHECK_EQ_INT(dlb_reduce_value(DLB_REDUCE_MAX, &e, &o, cpu, &v, &err), DLB_E_VALUE);
    CHECK_EQ_INT(dlb_reduce_value(DLB_REDUCE_ARGMIN, &e, &o, cpu, &v, &err), DLB_E_VALUE);
  }
  /* (3, 0) reduced along its empty dim: three empty reductions. */
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_MIN, &r, &d1, &out, cpu, &err), DLB_E_VALUE);
  CHECK(out.buffer == NULL);
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &r, &d1, &out, cpu, &err), DLB_OK);
  CHECK_EQ_INT(out.numel, 3);
  CHECK(((float *)dlb_array_host_data(&out))[2] == 0.0f);
  dlb_array_release(&out);
  /* (0, 3) along dim 2: no result element at all, so no error. */
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_MAX, &n, &d1, &out, cpu, &err), DLB_OK);
  CHECK_EQ_INT(out.numel, 0);
  CHECK_EQ_INT(out.shape[0], 0);
  dlb_array_release(&out);
  dlb_array_release(&e);
  dlb_array_release(&r);
  dlb_array_release(&n);
}

static void test_nan(void) {
  const int64_t shape[2] = {3, 300};
  dlb_array a = alloc(DLB_FLOAT64, 2, shape), m = {0}, am = {0};
  double *p = (double *)dlb_array_host_data(&a);
  dlb_reduce_options o = all_dims(), d0 = dims(1), d1 = dims(2);
  for (int64_t i = 0; i < a.numel; i++) p[i] = (double)(i % 17);
  CHECK(value_of(DLB_REDUCE_MAX, &a, &o).v.f == 16.0);
  CHECK_EQ_INT(value_of(DLB_REDUCE_ARGMAX, &a, &o).v.i, 16); /* the first 16 */
  p[400] = NAN;
  p[700] = NAN;
  CHECK(isnan(value_of(DLB_REDUCE_MAX, &a, &o).v.f));
  CHECK(isnan(value_of(DLB_REDUCE_MIN, &a, &o).v.f));
  CHECK_EQ_INT(value_of(DLB_REDUCE_ARGMAX, &a, &o).v.i, 400);
  CHECK_EQ_INT(value_of(DLB_REDUCE_ARGMIN, &a, &o).v.i, 400);
  CHECK_EQ_INT(value_of(DLB_REDUCE_ANY, &a, &o).v.b, 1);
  /* Along dim 1 (rows of 300 against each other): column 100 has the NaN. */
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_MAX, &a, &d0, &m, cpu, &err), DLB_OK);
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_ARGMIN, &a, &d0, &am, cpu, &err), DLB_OK);
  CHECK(isnan(((double *)dlb_array_host_data(&m))[100]));
  {
    double want = 0;
    for (int i = 0; i < 3; i++) want = p[i * 300 + 99] > want ? p[i * 300 + 99] : want;
    CHECK(((double *)dlb_array_host_data(&m))[99] == want);
  }
  CHECK_EQ_INT(((int64_t *)dlb_array_host_data(&am))[100], 1);
  dlb_array_release(&m);
  dlb_array_release(&am);
  /* Along dim 2: rows 1 and 2 have a NaN at columns 100 and 100. */
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_ARGMAX, &a, &d1, &am, cpu, &err), DLB_OK);
  CHECK_EQ_INT(((int64_t *)dlb_array_host_data(&am))[0], 16);
  CHECK_EQ_INT(((int64_t *)dlb_array_host_data(&am))[1], 100);
  CHECK_EQ_INT(((int64_t *)dlb_array_host_data(&am))[2], 100);
  dlb_array_release(&am);
  dlb_array_release(&a);
}

static void test_result_types(void) {
  static const struct {
    dlb_reduce_op op;
    dlb_dtype in, want;
  } rows[] = {
      {DLB_REDUCE_SUM, DLB_BOOL, DLB_INT64},
      {DLB_REDUCE_SUM, DLB_INT8, DLB_INT64},
      {DLB_REDUCE_SUM, DLB_UINT16, DLB_UINT64},
      {DLB_REDUCE_SUM, DLB_FLOAT16, DLB_FLOAT16},
      {DLB_REDUCE_PROD, DLB_UINT8, DLB_UINT64},
      {DLB_REDUCE_SUM, DLB_COMPLEX64, DLB_COMPLEX64},
      {DLB_REDUCE_MEAN, DLB_INT32, DLB_FLOAT64},
      {DLB_REDUCE_MEAN, DLB_FLOAT32, DLB_FLOAT32},
      {DLB_REDUCE_MEAN, DLB_BFLOAT16, DLB_BFLOAT16},
      {DLB_REDUCE_STD, DLB_COMPLEX64, DLB_FLOAT32},
      {DLB_REDUCE_VAR, DLB_UINT8, DLB_FLOAT64},
      {DLB_REDUCE_MAX, DLB_BOOL, DLB_BOOL},
      {DLB_REDUCE_MIN, DLB_UINT32, DLB_UINT32},
      {DLB_REDUCE_ARGMAX, DLB_FLOAT16, DLB_INT64},
      {DLB_REDUCE_ALL, DLB_FLOAT64, DLB_BOOL},
      {DLB_REDUCE_COUNT_NONZERO, DLB_INT8, DLB_INT64},
  };
  dlb_reduce_options o = all_dims();
  dlb_dtype t;
  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
    CHECK_EQ_INT(dlb_reduce_result_type(rows[k].op, rows[k].in, &o, &t, &err), DLB_OK);
    CHECK_EQ_INT(t, rows[k].want);
  }
  CHECK_EQ_INT(dlb_reduce_result_type(DLB_REDUCE_MAX, DLB_COMPLEX128, &o, &t, &err), DLB_E_DTYPE);
  CHECK_EQ_INT(dlb_reduce_result_type(DLB_REDUCE_ARGMIN, DLB_COMPLEX64, &o, &t, &err), DLB_E_DTYPE);
  o.has_dtype = 1;
  o.dtype = DLB_FLOAT32;
  CHECK_EQ_INT(dlb_reduce_result_type(DLB_REDUCE_SUM, DLB_INT8, &o, &t, &err), DLB_OK);
  CHECK_EQ_INT(t, DLB_FLOAT32);
  CHECK_EQ_INT(dlb_reduce_result_type(DLB_REDUCE_MAX, DLB_INT8, &o, &t, &err), DLB_E_ARGUMENT);
  o.dtype = DLB_INT32;
  CHECK_EQ_INT(dlb_reduce_result_type(DLB_REDUCE_MEAN, DLB_INT8, &o, &t, &err), DLB_E_DTYPE);
}

/* Integer sums wrap; narrower result dtypes wrap again; float16 accumulates
 * in float32 (3000 ones stay 3000, where float16 steps would stall at 2048). */
static void test_integers_and_halves(void) {
  const int64_t two = 2, many = 3000;
  dlb_array a = alloc(DLB_INT64, 1, &two), h = alloc(DLB_FLOAT16, 1, &many);
  int64_t *p = (int64_t *)dlb_array_host_data(&a);
  uint16_t *q = (uint16_t *)dlb_array_host_data(&h);
  dlb_reduce_options o = all_dims();
  p[0] = INT64_MAX;
  p[1] = 1;
  CHECK_EQ_INT(value_of(DLB_REDUCE_SUM, &a, &o).v.i, INT64_MIN);
  p[0] = 200;
  p[1] = 100;
  o.has_dtype = 1;
  o.dtype = DLB_INT8;
  CHECK_EQ_INT(value_of(DLB_REDUCE_SUM, &a, &o).v.i, 44); /* 300 mod 256 */
  o = all_dims();
  for (int64_t i = 0; i < many; i++) q[i] = dlb_float16_from_double(1.0);
  CHECK(value_of(DLB_REDUCE_SUM, &h, &o).v.f == 3000.0);
  CHECK(value_of(DLB_REDUCE_MEAN, &h, &o).v.f == 1.0);
  dlb_array_release(&a);
  dlb_array_release(&h);
}

/* ddof: n - ddof <= 0 divides by 0 (inf, or NaN for a zero sum). */
static void test_ddof(void) {
  const int64_t four = 4;
  dlb_array a = alloc(DLB_FLOAT64, 1, &four);
  double *p = (double *)dlb_array_host_data(&a);
  dlb_reduce_options o = all_dims();
  p[0] = 1;
  p[1] = 2;
  p[2] = 3;
  p[3] = 4;
  CHECK(value_of(DLB_REDUCE_VAR, &a, &o).v.f == 1.25);
  o.ddof = 1;
  CHECK(fabs(value_of(DLB_REDUCE_STD, &a, &o).v.f - sqrt(5.0 / 3.0)) < 1e-15);
  o.ddof = 4;
  CHECK(isinf(value_of(DLB_REDUCE_VAR, &a, &o).v.f));
  o.ddof = 9;
  CHECK(isinf(value_of(DLB_REDUCE_VAR, &a, &o).v.f));
  p[1] = p[2] = p[3] = 1;
  o.ddof = 4;
  CHECK(isnan(value_of(DLB_REDUCE_VAR, &a, &o).v.f));
  dlb_array_release(&a);
}

/* --- out, and misuse ---------------------------------------------------------- */

static void test_out(void) {
  const int64_t shape[2] = {2, 3}, three = 3, two = 2;
  dlb_array a = iota(2, shape), f = alloc(DLB_FLOAT64, 1, &three);
  dlb_array small = alloc(DLB_INT64, 1, &two);
  dlb_array i8 = alloc(DLB_INT8, 1, &three), same = view_of(&a);
  dlb_reduce_options o = dims(1);
  /* int64 sums into a float64 out (same_kind). */
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &a, &o, &f, cpu, &err), DLB_OK);
  CHECK(((double *)dlb_array_host_data(&f))[2] == 2.0 + 5.0);
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &a, &o, &small, cpu, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_MEAN, &a, &o, &i8, cpu, &err), DLB_E_DTYPE);
  /* out may be the input itself: the result goes through a temporary. */
  {
    dlb_array row = view_of(&a);
    CHECK_EQ_INT(dlb_view_select(&row, 0, 0, &err), DLB_OK); /* a[1, :] as (3,) */
    CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_MAX, &same, &o, &row, cpu, &err), DLB_OK);
    CHECK_EQ_INT(((int32_t *)dlb_array_host_data(&a))[0], 3);
    CHECK_EQ_INT(((int32_t *)dlb_array_host_data(&a))[2], 5);
    dlb_array_release(&row);
  }
  dlb_array_release(&same);
  dlb_array_release(&a);
  dlb_array_release(&f);
  dlb_array_release(&small);
  dlb_array_release(&i8);
}

static void test_misuse(void) {
  const int64_t shape[2] = {2, 3};
  dlb_array a = iota(2, shape), c = alloc(DLB_COMPLEX64, 2, shape), r = {0}, dead = iota(2, shape);
  dlb_reduce_options o = dims(4); /* dim 3 of a 2-D array */
  dlb_scalar v;
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &a, &o, &r, cpu, &err), DLB_E_INDEX);
  o = dims(3);
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_ARGMAX, &a, &o, &r, cpu, &err), DLB_E_ARGUMENT);
  o = all_dims();
  CHECK_EQ_INT(dlb_reduce_value(DLB_REDUCE_MAX, &c, &o, cpu, &v, &err), DLB_E_DTYPE);
  o = dims(1);
  CHECK_EQ_INT(dlb_reduce_value(DLB_REDUCE_SUM, &a, &o, cpu, &v, &err), DLB_E_SHAPE);
  dlb_array_release(&dead);
  o = all_dims();
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &dead, &o, &r, cpu, &err), DLB_E_DELETED);
  CHECK(r.buffer == NULL);
  /* Memory the host cannot address: UNSUPPORTED, with the device_put hint. */
  {
    dlb_backend_ops ops = opaque_ops("opaque");
    dlb_backend *opaque;
    dlb_array x = {0};
    CHECK_EQ_INT(dlb_backend_create(&ops, NULL, &opaque, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_allocate(&x, opaque, 0, DLB_FLOAT32, 2, shape, 1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &x, &o, &r, cpu, &err), DLB_E_UNSUPPORTED);
    CHECK(strstr(err.hint, "device_put") != NULL);
    dlb_array_release(&x);
    dlb_backend_release(opaque);
  }
  dlb_array_release(&a);
  dlb_array_release(&c);
}

int main(void) {
  if (!cpu_open()) return 1;
  test_pairwise_bits();
  test_rows();
  test_lines();
  test_odd_rows();
  test_exact_ones();
  test_layouts();
  test_flat_argmax();
  test_empty();
  test_nan();
  test_result_types();
  test_integers_and_halves();
  test_ddof();
  test_out();
  test_misuse();
  cpu_close();
  return check_done("test_reduce");
}
