/* test_shape.c -- checked shape arithmetic (shape.c): element counts, byte
 * sizes, row-major strides, contiguity, reach, and no-copy reshape strides
 * against a brute-force oracle. */
#define _POSIX_C_SOURCE 200809L /* fork, waitpid */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/shape.h"
#include "fixtures.h"

#define P(e) ((int64_t)1 << (e))

/* ------------------------------------------------------------------------ */

static dlb_status numel_of(int ndim, const int64_t *shape, int64_t *n, dlb_error *err) {
  *n = -12345;
  memset(err, 0, sizeof *err);
  return dlb_shape_numel(ndim, shape, n, err);
}

static void test_numel(void) {
  dlb_error err;
  int64_t n;
  int64_t big[DLB_MAX_NDIM + 1];

  CHECK_EQ_INT(numel_of(0, NULL, &n, &err), DLB_OK);
  CHECK_EQ_INT(n, 1);
  {
    const int64_t s[] = {2, 3, 4};
    CHECK_EQ_INT(numel_of(3, s, &n, &err), DLB_OK);
    CHECK_EQ_INT(n, 24);
  }
  {
    const int64_t s[] = {2, 0, 3};
    CHECK_EQ_INT(numel_of(3, s, &n, &err), DLB_OK);
    CHECK_EQ_INT(n, 0);
  }
  { /* negative extents, wherever they are */
    const int64_t s1[] = {-1}, s2[] = {3, -2}, s3[] = {0, -1}, s4[] = {INT64_MIN, 2};
    CHECK_EQ_INT(numel_of(1, s1, &n, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(err.code, DLB_E_SHAPE);
    CHECK(err.message[0] != '\0');
    CHECK_EQ_INT(n, -12345); /* untouched on failure */
    CHECK_EQ_INT(numel_of(2, s2, &n, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(numel_of(2, s3, &n, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(numel_of(2, s4, &n, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_shape_numel(1, s1, &n, NULL), DLB_E_SHAPE); /* err may be NULL */
  }
  /* ndim in [0, 32] */
  for (int d = 0; d <= DLB_MAX_NDIM; d++) big[d] = 1;
  CHECK_EQ_INT(numel_of(DLB_MAX_NDIM, big, &n, &err), DLB_OK);
  CHECK_EQ_INT(n, 1);
  CHECK_EQ_INT(numel_of(DLB_MAX_NDIM + 1, big, &n, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(err.code, DLB_E_SHAPE);
  CHECK_EQ_INT(numel_of(-1, big, &n, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(numel_of(1000, big, &n, &err), DLB_E_SHAPE);
  for (int d = 0; d <= DLB_MAX_NDIM; d++) big[d] = 2;
  CHECK_EQ_INT(numel_of(DLB_MAX_NDIM, big, &n, &err), DLB_OK);
  CHECK_EQ_INT(n, P(32));
  /* overflow of int64 */
  {
    const int64_t ok1[] = {INT64_MAX}, ok2[] = {3037000499, 3037000499}, ok3[] = {P(62), 1, 1},
                  ok4[] = {INT64_MAX, 1};
    const int64_t bad1[] = {INT64_MAX, 2}, bad2[] = {P(32), P(31)}, bad3[] = {P(31), P(31), 2},
                  bad4[] = {3037000500, 3037000500}, bad5[] = {2, 2, P(61)},
                  bad6[] = {P(40), P(40), P(40), 1};
    CHECK_EQ_INT(numel_of(1, ok1, &n, &err), DLB_OK);
    CHECK_EQ_INT(n, INT64_MAX);
    CHECK_EQ_INT(numel_of(2, ok2, &n, &err), DLB_OK);
    CHECK_EQ_INT(n, (int64_t)3037000499 * 3037000499);
    CHECK_EQ_INT(numel_of(3, ok3, &n, &err), DLB_OK);
    CHECK_EQ_INT(n, P(62));
    CHECK_EQ_INT(numel_of(2, ok4, &n, &err), DLB_OK);
    CHECK_EQ_INT(n, INT64_MAX);
    CHECK_EQ_INT(numel_of(2, bad1, &n, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(err.code, DLB_E_SHAPE);
    CHECK_EQ_INT(numel_of(2, bad2, &n, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(numel_of(3, bad3, &n, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(numel_of(2, bad4, &n, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(numel_of(3, bad5, &n, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(numel_of(4, bad6, &n, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(n, -12345);
  }
  { /* A zero extent with nonzero extents that fit: count 0 (NumPy too). */
    const int64_t s1[] = {INT64_MAX, 0}, s2[] = {0, INT64_MAX}, s3[] = {P(31), 0, P(31)};
    CHECK_EQ_INT(numel_of(2, s1, &n, &err), DLB_OK);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(numel_of(2, s2, &n, &err), DLB_OK);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(numel_of(3, s3, &n, &err), DLB_OK);
    CHECK_EQ_INT(n, 0);
  }
  { /* A zero extent after nonzero extents whose product overflows. The
     * product is 0, but no row-major strides exist for such a shape (see
     * test_accepted_shapes_have_strides), and NumPy rejects it ("array is
     * too big": it multiplies the nonzero extents only). Must be SHAPE. */
    const int64_t s1[] = {P(40), P(40), 0}, s2[] = {P(40), P(40), P(40), 0},
                  s3[] = {INT64_MAX, INT64_MAX, 0}, s4[] = {0, INT64_MAX, 2};
    CHECK_EQ_INT(numel_of(3, s1, &n, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(numel_of(4, s2, &n, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(numel_of(3, s3, &n, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(numel_of(3, s4, &n, &err), DLB_E_SHAPE);
    /* a negative extent is SHAPE even after a zero */
    const int64_t s5[] = {0, 5, -1};
    CHECK_EQ_INT(numel_of(3, s5, &n, &err), DLB_E_SHAPE);
  }
}

/* Every shape that dlb_shape_numel accepts must have row-major strides that
 * fit int64 and that dlb_shape_contiguous_strides computes without signed
 * overflow ("only called on shapes whose numel was checked"). Run in a
 * child: under UBSan an overflow aborts. */
static void accepted_shapes_child(void) {
  static const struct {
    int ndim;
    int64_t shape[4];
  } cases[] = {
      {3, {P(40), P(40), 0}},
      {4, {P(40), P(40), P(40), 0}},
      {3, {0, INT64_MAX, INT64_MAX}},
      {2, {INT64_MAX, 0}},
      {2, {0, INT64_MAX}},
      {1, {INT64_MAX}},
      {3, {P(31), 0, P(31)}},
      {2, {3037000499, 3037000499}},
      {4, {P(20), P(20), P(20), 8}},
      {4, {P(62), 1, 0, 1}},
      {3, {2, P(62), 0}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int64_t n, want[4], got[4], s = 1;
    int overflow = 0;
    int ndim = cases[c].ndim;
    const int64_t *shape = cases[c].shape;
    if (dlb_shape_numel(ndim, shape, &n, NULL) != DLB_OK) continue;
    for (int d = ndim - 1; d >= 0; d--) {
      want[d] = s;
      if (d > 0 && shape[d] > 1 && __builtin_mul_overflow(s, shape[d], &s)) overflow = 1;
    }
    if (overflow) {
      fprintf(stderr, "  numel accepted shape #%zu, whose row-major strides overflow int64\n", c);
      CHECK(!overflow);
      continue;
    }
    dlb_shape_contiguous_strides(ndim, shape, got);
    for (int d = 0; d < ndim; d++)
      if (shape[d] > 1) CHECK_EQ_INT(got[d], want[d]);
  }
}

static void test_accepted_shapes_have_strides(void) { CHECK(run_isolated(accepted_shapes_child)); }

static void test_nbytes(void) {
  dlb_error err;
  size_t nb;
  memset(&err, 0, sizeof err);
  nb = 999;
  CHECK_EQ_INT(dlb_shape_nbytes(0, 8, &nb, &err), DLB_OK);
  CHECK_EQ_INT(nb, 0);
  CHECK_EQ_INT(dlb_shape_nbytes(10, 4, &nb, &err), DLB_OK);
  CHECK_EQ_INT(nb, 40);
  CHECK_EQ_INT(dlb_shape_nbytes(7, 16, &nb, &err), DLB_OK);
  CHECK_EQ_INT(nb, 112);
  CHECK_EQ_INT(dlb_shape_nbytes(PTRDIFF_MAX, 1, &nb, &err), DLB_OK);
  CHECK(nb == (size_t)PTRDIFF_MAX);
  CHECK_EQ_INT(dlb_shape_nbytes(PTRDIFF_MAX / 8, 8, &nb, &err), DLB_OK);
  CHECK(nb == (size_t)(PTRDIFF_MAX / 8) * 8);
  CHECK_EQ_INT(dlb_shape_nbytes(P(60), 4, &nb, &err), DLB_OK);
  CHECK(nb == (size_t)P(62));
  nb = 999;
  CHECK_EQ_INT(dlb_shape_nbytes(PTRDIFF_MAX / 8 + 1, 8, &nb, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(err.code, DLB_E_SHAPE);
  CHECK_EQ_INT(nb, 999);
  CHECK_EQ_INT(dlb_shape_nbytes(PTRDIFF_MAX, 2, &nb, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(dlb_shape_nbytes(P(62), 2, &nb, &err), DLB_E_SHAPE); /* exactly 2^63 */
  CHECK_EQ_INT(dlb_shape_nbytes(P(61), 4, &nb, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(dlb_shape_nbytes(P(61), 16, &nb, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(dlb_shape_nbytes(INT64_MAX, 16, &nb, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(dlb_shape_nbytes(-1, 1, &nb, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(dlb_shape_nbytes(INT64_MIN, 8, &nb, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(nb, 999);
  CHECK_EQ_INT(dlb_shape_nbytes(-1, 1, &nb, NULL), DLB_E_SHAPE);
}

static void test_contiguous_strides(void) {
  int64_t st[8];
  {
    const int64_t s[] = {2, 3, 4};
    dlb_shape_contiguous_strides(3, s, st);
    CHECK_EQ_INT(st[0], 12);
    CHECK_EQ_INT(st[1], 4);
    CHECK_EQ_INT(st[2], 1);
    CHECK(dlb_shape_is_contiguous(3, s, st));
  }
  {
    const int64_t s[] = {5};
    dlb_shape_contiguous_strides(1, s, st);
    CHECK_EQ_INT(st[0], 1);
  }
  dlb_shape_contiguous_strides(0, NULL, st); /* nothing to write */
  CHECK(dlb_shape_is_contiguous(0, NULL, NULL));
  { /* extent-1 dims: any stride is right; the others are exact */
    const int64_t s[] = {2, 1, 3, 1};
    dlb_shape_contiguous_strides(4, s, st);
    CHECK_EQ_INT(st[0], 3);
    CHECK_EQ_INT(st[2], 1);
    CHECK(dlb_shape_is_contiguous(4, s, st));
  }
  { /* zero extents count as 1 for the strides (as NumPy) */
    const int64_t s[] = {2, 0, 3};
    dlb_shape_contiguous_strides(3, s, st);
    CHECK_EQ_INT(st[0], 3);
    CHECK_EQ_INT(st[1], 3);
    CHECK_EQ_INT(st[2], 1);
    CHECK(dlb_shape_is_contiguous(3, s, st));
  }
  { /* 32 dims of 2 */
    int64_t s[DLB_MAX_NDIM], t[DLB_MAX_NDIM];
    for (int d = 0; d < DLB_MAX_NDIM; d++) s[d] = 2;
    dlb_shape_contiguous_strides(DLB_MAX_NDIM, s, t);
    for (int d = 0; d < DLB_MAX_NDIM; d++) CHECK_EQ_INT(t[d], P(DLB_MAX_NDIM - 1 - d));
  }
}

static void test_is_contiguous(void) {
  {
    const int64_t s[] = {2, 3}, a[] = {3, 1}, b[] = {1, 2}, c[] = {3, -1}, d[] = {-3, 1},
                  e[] = {0, 1}, f[] = {3, 0}, g[] = {4, 1}, h[] = {6, 2};
    CHECK_EQ_INT(dlb_shape_is_contiguous(2, s, a), 1);
    CHECK_EQ_INT(dlb_shape_is_contiguous(2, s, b), 0);
    CHECK_EQ_INT(dlb_shape_is_contiguous(2, s, c), 0);
    CHECK_EQ_INT(dlb_shape_is_contiguous(2, s, d), 0);
    CHECK_EQ_INT(dlb_shape_is_contiguous(2, s, e), 0);
    CHECK_EQ_INT(dlb_shape_is_contiguous(2, s, f), 0);
    CHECK_EQ_INT(dlb_shape_is_contiguous(2, s, g), 0); /* padded rows */
    CHECK_EQ_INT(dlb_shape_is_contiguous(2, s, h), 0);
  }
  { /* strides of extent-1 dims are ignored, whatever they are */
    const int64_t s[] = {2, 1, 3, 1}, a[] = {3, 999, 1, -7}, b[] = {3, 0, 1, INT64_MIN},
                  c[] = {3, 3, 2, 1};
    CHECK_EQ_INT(dlb_shape_is_contiguous(4, s, a), 1);
    CHECK_EQ_INT(dlb_shape_is_contiguous(4, s, b), 1);
    CHECK_EQ_INT(dlb_shape_is_contiguous(4, s, c), 0);
    const int64_t ones[] = {1, 1, 1}, w[] = {-5, 0, 123};
    CHECK_EQ_INT(dlb_shape_is_contiguous(3, ones, w), 1);
  }
  { /* size 0: contiguous whatever the strides */
    const int64_t s[] = {2, 0, 3}, a[] = {0, -1, 7}, b[] = {INT64_MAX, INT64_MIN, 0};
    CHECK_EQ_INT(dlb_shape_is_contiguous(3, s, a), 1);
    CHECK_EQ_INT(dlb_shape_is_contiguous(3, s, b), 1);
    const int64_t z[] = {0}, zs[] = {5};
    CHECK_EQ_INT(dlb_shape_is_contiguous(1, z, zs), 1);
  }
  { /* 1-D */
    const int64_t s[] = {3}, a[] = {1}, b[] = {-1}, c[] = {0}, d[] = {2};
    CHECK_EQ_INT(dlb_shape_is_contiguous(1, s, a), 1);
    CHECK_EQ_INT(dlb_shape_is_contiguous(1, s, b), 0);
    CHECK_EQ_INT(dlb_shape_is_contiguous(1, s, c), 0);
    CHECK_EQ_INT(dlb_shape_is_contiguous(1, s, d), 0);
  }
}

static dlb_status reach_of(int ndim, const int64_t *shape, const int64_t *strides, int64_t *lo,
                           int64_t *hi) {
  dlb_error err;
  memset(&err, 0, sizeof err);
  *lo = *hi = -777;
  dlb_status st = dlb_shape_reach(ndim, shape, strides, lo, hi, &err);
  if (st != DLB_OK) CHECK_EQ_INT(err.code, st);
  return st;
}

static void test_reach(void) {
  int64_t lo, hi;
  CHECK_EQ_INT(reach_of(0, NULL, NULL, &lo, &hi), DLB_OK);
  CHECK_EQ_INT(lo, 0);
  CHECK_EQ_INT(hi, 0);
  {
    const int64_t s[] = {3, 4}, a[] = {4, 1}, b[] = {-4, 1}, c[] = {-4, -1}, d[] = {0, 1},
                  e[] = {0, 0}, f[] = {1, 4};
    CHECK_EQ_INT(reach_of(2, s, a, &lo, &hi), DLB_OK);
    CHECK_EQ_INT(lo, 0);
    CHECK_EQ_INT(hi, 11);
    CHECK_EQ_INT(reach_of(2, s, b, &lo, &hi), DLB_OK);
    CHECK_EQ_INT(lo, -8);
    CHECK_EQ_INT(hi, 3);
    CHECK_EQ_INT(reach_of(2, s, c, &lo, &hi), DLB_OK);
    CHECK_EQ_INT(lo, -11);
    CHECK_EQ_INT(hi, 0);
    CHECK_EQ_INT(reach_of(2, s, d, &lo, &hi), DLB_OK);
    CHECK_EQ_INT(lo, 0);
    CHECK_EQ_INT(hi, 3);
    CHECK_EQ_INT(reach_of(2, s, e, &lo, &hi), DLB_OK);
    CHECK_EQ_INT(lo, 0);
    CHECK_EQ_INT(hi, 0);
    CHECK_EQ_INT(reach_of(2, s, f, &lo, &hi), DLB_OK);
    CHECK_EQ_INT(lo, 0);
    CHECK_EQ_INT(hi, 14);
  }
  { /* size 0: both 0, even with absurd strides */
    const int64_t s[] = {5, 0, 7}, a[] = {INT64_MAX, INT64_MIN, INT64_MAX};
    CHECK_EQ_INT(reach_of(3, s, a, &lo, &hi), DLB_OK);
    CHECK_EQ_INT(lo, 0);
    CHECK_EQ_INT(hi, 0);
  }
  { /* extent 1 never moves, whatever its stride */
    const int64_t s[] = {1, 2}, a[] = {INT64_MIN, 3};
    CHECK_EQ_INT(reach_of(2, s, a, &lo, &hi), DLB_OK);
    CHECK_EQ_INT(lo, 0);
    CHECK_EQ_INT(hi, 3);
  }
  { /* the edges of int64 */
    const int64_t s2[] = {2}, s3[] = {3}, s22[] = {2, 2};
    const int64_t mx[] = {INT64_MAX}, mn[] = {INT64_MIN}, half[] = {P(62)};
    const int64_t mx1[] = {INT64_MAX, 1}, mn1[] = {INT64_MIN, -1}, mxmn[] = {INT64_MAX, INT64_MIN};
    CHECK_EQ_INT(reach_of(1, s2, mx, &lo, &hi), DLB_OK);
    CHECK_EQ_INT(lo, 0);
    CHECK_EQ_INT(hi, INT64_MAX);
    CHECK_EQ_INT(reach_of(1, s2, mn, &lo, &hi), DLB_OK);
    CHECK_EQ_INT(lo, INT64_MIN);
    CHECK_EQ_INT(hi, 0);
    CHECK_EQ_INT(reach_of(1, s3, mx, &lo, &hi), DLB_E_SHAPE); /* 2 * stride */
    CHECK_EQ_INT(reach_of(1, s3, mn, &lo, &hi), DLB_E_SHAPE);
    CHECK_EQ_INT(reach_of(1, s3, half, &lo, &hi), DLB_E_SHAPE); /* exactly 2^63 */
    CHECK_EQ_INT(reach_of(2, s22, mx1, &lo, &hi), DLB_E_SHAPE); /* the sum */
    CHECK_EQ_INT(reach_of(2, s22, mn1, &lo, &hi), DLB_E_SHAPE);
    CHECK_EQ_INT(reach_of(2, s22, mxmn, &lo, &hi), DLB_OK); /* one up, one down */
    CHECK_EQ_INT(lo, INT64_MIN);
    CHECK_EQ_INT(hi, INT64_MAX);
    const int64_t bigshape[] = {INT64_MAX}, one[] = {1}, two[] = {2};
    CHECK_EQ_INT(reach_of(1, bigshape, one, &lo, &hi), DLB_OK);
    CHECK_EQ_INT(hi, INT64_MAX - 1);
    CHECK_EQ_INT(reach_of(1, bigshape, two, &lo, &hi), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_shape_reach(1, s3, mx, &lo, &hi, NULL), DLB_E_SHAPE);
  }
}

/* ------------------------------------------------------------------------ */
/* Random geometries and the brute-force oracle. */

#define GMAX 8

typedef struct geom {
  int ndim;
  int64_t shape[GMAX];
  int64_t strides[GMAX];
} geom;

static int64_t numel_bf(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  return n;
}

/* Element offsets, relative to element 0...0, in row-major order. */
static int64_t offsets(int ndim, const int64_t *shape, const int64_t *strides, int64_t *out) {
  int64_t n = numel_bf(ndim, shape), idx[GMAX] = {0};
  for (int64_t k = 0; k < n; k++) {
    int64_t off = 0;
    for (int d = 0; d < ndim; d++) off += idx[d] * strides[d];
    out[k] = off;
    for (int d = ndim - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return n;
}

static void random_geometry(geom *g) {
  int64_t s = 1;
  g->ndim = (int)rnd(5);
  for (int d = 0; d < g->ndim; d++) g->shape[d] = rnd(40) == 0 ? 0 : 1 + rnd(4);
  for (int d = g->ndim - 1; d >= 0; d--) {
    g->strides[d] = s;
    s *= g->shape[d] > 1 ? g->shape[d] : 1;
  }
  for (int ops = (int)rnd(5); ops > 0; ops--) {
    int d = g->ndim ? (int)rnd(g->ndim) : 0;
    switch (rnd(6)) {
      case 0: /* permute */
        for (int i = g->ndim - 1; i > 0; i--) {
          int j = (int)rnd(i + 1);
          int64_t t = g->shape[i];
          g->shape[i] = g->shape[j];
          g->shape[j] = t;
          t = g->strides[i];
          g->strides[i] = g->strides[j];
          g->strides[j] = t;
        }
        break;
      case 1: /* slice with a step */
      case 2: {
        if (!g->ndim || g->shape[d] == 0) break;
        int64_t e = g->shape[d], step = (1 + rnd(3)) * (rnd(2) ? 1 : -1);
        int64_t start = rnd(e);
        int64_t maxc = step > 0 ? (e - 1 - start) / step + 1 : start / -step + 1;
        int64_t count = 1 + rnd(maxc);
        g->shape[d] = count;
        if (count > 1) g->strides[d] *= step;
        break;
      }
      case 3: /* broadcast an extent-1 dim */
        if (g->ndim && g->shape[d] == 1) {
          g->shape[d] = 2 + rnd(2);
          g->strides[d] = 0;
        }
        break;
      case 4: /* insert an extent-1 dim with a junk stride */
        if (g->ndim < 6) {
          int at = (int)rnd(g->ndim + 1);
          memmove(g->shape + at + 1, g->shape + at, (size_t)(g->ndim - at) * sizeof g->shape[0]);
          memmove(g->strides + at + 1, g->strides + at,
                  (size_t)(g->ndim - at) * sizeof g->strides[0]);
          g->shape[at] = 1;
          g->strides[at] = rnd(101) - 50;
          g->ndim++;
        }
        break;
      default: /* junk strides on every extent-1 dim */
        for (int i = 0; i < g->ndim; i++)
          if (g->shape[i] == 1) g->strides[i] = rnd(1001) - 500;
        break;
    }
  }
}

/* A random shape with n elements: n's prime factors spread over up to 4
 * dims, plus a few extent-1 dims (or a zero extent when n == 0). */
static int random_shape(int64_t n, int64_t *shape) {
  int ndim = 0;
  if (n == 0) {
    ndim = 1 + (int)rnd(4);
    for (int d = 0; d < ndim; d++) shape[d] = rnd(4);
    shape[rnd(ndim)] = 0;
    return ndim;
  }
  int slots = (int)rnd(5);
  if (slots == 0 && n > 1) slots = 1;
  for (int d = 0; d < slots; d++) shape[d] = 1;
  int64_t m = n;
  for (int64_t p = 2; m > 1; p++)
    while (m % p == 0) {
      shape[rnd(slots)] *= p;
      m /= p;
    }
  ndim = slots;
  for (int ones = (int)rnd(3); ones > 0; ones--) {
    int at = (int)rnd(ndim + 1);
    memmove(shape + at + 1, shape + at, (size_t)(ndim - at) * sizeof shape[0]);
    shape[at] = 1;
    ndim++;
  }
  return ndim;
}

static int64_t seq_old[1 << 14], seq_new[1 << 14];

static void test_random_geometries(void) {
  long views = 0, noncontig_views = 0, possible_missed = 0, trials = 0;
  for (int iter = 0; iter < 20000; iter++) {
    geom g;
    random_geometry(&g);
    int64_t n = offsets(g.ndim, g.shape, g.strides, seq_old);
    int contiguous = 1;
    int64_t mn = 0, mx = 0;
    for (int64_t k = 0; k < n; k++) {
      if (seq_old[k] != k) contiguous = 0;
      if (seq_old[k] < mn) mn = seq_old[k];
      if (seq_old[k] > mx) mx = seq_old[k];
    }

    /* numel, contiguity and reach against brute force */
    int64_t cnt, lo, hi;
    CHECK_EQ_INT(dlb_shape_numel(g.ndim, g.shape, &cnt, NULL), DLB_OK);
    CHECK_EQ_INT(cnt, n);
    if (dlb_shape_is_contiguous(g.ndim, g.shape, g.strides) != contiguous) {
      CHECK_EQ_INT(dlb_shape_is_contiguous(g.ndim, g.shape, g.strides), contiguous);
      break;
    }
    CHECK_EQ_INT(dlb_shape_reach(g.ndim, g.shape, g.strides, &lo, &hi, NULL), DLB_OK);
    if (lo != mn || hi != mx) {
      CHECK_EQ_INT(lo, mn);
      CHECK_EQ_INT(hi, mx);
      break;
    }

    /* reshape: whenever it says yes, the new strides address the same
     * elements in the same order; contiguous input always gives yes */
    for (int t = 0; t < 4; t++) {
      int64_t ns[GMAX + 4], nst[DLB_MAX_NDIM];
      int nd = random_shape(n, ns);
      for (int d = 0; d < DLB_MAX_NDIM; d++) nst[d] = INT64_MIN; /* poison */
      int r = dlb_shape_reshape_strides(g.ndim, g.shape, g.strides, nd, ns, nst);
      trials++;
      /* The exact oracle: a view exists iff the strides read off the unit
       * steps of each new dim reproduce the sequence. */
      int64_t cand[GMAX + 4], step = 1;
      for (int d = nd - 1; d >= 0; d--) {
        cand[d] = (ns[d] > 1 && n > 0) ? seq_old[step] - seq_old[0] : 0;
        step *= ns[d] > 1 ? ns[d] : 1;
      }
      offsets(nd, ns, cand, seq_new);
      int possible = n == 0 || memcmp(seq_new, seq_old, (size_t)n * sizeof seq_old[0]) == 0;
      if (r) {
        int ok = 1;
        for (int d = 0; d < nd; d++)
          if (ns[d] > 1 && nst[d] == INT64_MIN) ok = 0; /* left unset */
        if (ok) {
          offsets(nd, ns, nst, seq_new);
          ok = n == 0 || memcmp(seq_new, seq_old, (size_t)n * sizeof seq_old[0]) == 0;
        }
        if (!ok) {
          fprintf(stderr, "  reshape gave wrong strides: old shape/strides");
          for (int d = 0; d < g.ndim; d++)
            fprintf(stderr, " %lld/%lld", (long long)g.shape[d], (long long)g.strides[d]);
          fprintf(stderr, " -> new");
          for (int d = 0; d < nd; d++)
            fprintf(stderr, " %lld/%lld", (long long)ns[d], (long long)nst[d]);
          fprintf(stderr, "\n");
          CHECK(ok);
          return;
        }
        views++;
        if (!contiguous) noncontig_views++;
        if (contiguous && n > 0) CHECK(dlb_shape_is_contiguous(nd, ns, nst));
      } else {
        if (contiguous) {
          fprintf(stderr, "  reshape refused a contiguous input (ndim %d, numel %lld)\n", g.ndim,
                  (long long)n);
          CHECK(!contiguous);
          return;
        }
        CHECK(n > 0); /* size 0 always reshapes */
        if (possible) possible_missed++;
      }
    }
  }
  CHECK(views > 0 && noncontig_views > 0);
  printf("reshape oracle: %ld trials, %ld views (%ld of non-contiguous input), "
         "%ld possible views refused (informational)\n",
         trials, views, noncontig_views, possible_missed);
}

/* Fixed reshape cases with known strides. */
static void test_reshape_known(void) {
  int64_t st[8];
  { /* transpose of a 4x3: (3,4) strides (1,3) */
    const int64_t s[] = {3, 4}, t[] = {1, 3};
    const int64_t flat[] = {12}, split[] = {3, 2, 2}, bad[] = {4, 3}, ok13[] = {3, 1, 4};
    CHECK_EQ_INT(dlb_shape_reshape_strides(2, s, t, 1, flat, st), 0);
    CHECK_EQ_INT(dlb_shape_reshape_strides(2, s, t, 2, bad, st), 0);
    CHECK_EQ_INT(dlb_shape_reshape_strides(2, s, t, 3, split, st), 1);
    CHECK_EQ_INT(st[0], 1);
    CHECK_EQ_INT(st[1], 6);
    CHECK_EQ_INT(st[2], 3);
    CHECK_EQ_INT(dlb_shape_reshape_strides(2, s, t, 3, ok13, st), 1);
    CHECK_EQ_INT(st[0], 1);
    CHECK_EQ_INT(st[2], 3);
  }
  { /* every other element, and reversed */
    const int64_t s[] = {4}, t2[] = {2}, tm[] = {-1}, ns[] = {2, 2};
    CHECK_EQ_INT(dlb_shape_reshape_strides(1, s, t2, 2, ns, st), 1);
    CHECK_EQ_INT(st[0], 4);
    CHECK_EQ_INT(st[1], 2);
    CHECK_EQ_INT(dlb_shape_reshape_strides(1, s, tm, 2, ns, st), 1);
    CHECK_EQ_INT(st[0], -2);
    CHECK_EQ_INT(st[1], -1);
  }
  { /* broadcast dims */
    const int64_t s[] = {2, 2}, t01[] = {0, 1}, t00[] = {0, 0}, flat[] = {4};
    CHECK_EQ_INT(dlb_shape_reshape_strides(2, s, t01, 1, flat, st), 0);
    CHECK_EQ_INT(dlb_shape_reshape_strides(2, s, t00, 1, flat, st), 1);
    CHECK_EQ_INT(st[0], 0);
  }
  { /* to and from 0-D and all-ones */
    const int64_t one[] = {1, 1, 1}, junk[] = {7, -3, 0};
    CHECK_EQ_INT(dlb_shape_reshape_strides(3, one, junk, 0, NULL, st), 1);
    CHECK_EQ_INT(dlb_shape_reshape_strides(0, NULL, NULL, 3, one, st), 1);
  }
  { /* contiguous 32-D <-> 1-D */
    int64_t s[DLB_MAX_NDIM], t[DLB_MAX_NDIM], got[DLB_MAX_NDIM], back[DLB_MAX_NDIM];
    const int64_t flat[] = {P(32)};
    for (int d = 0; d < DLB_MAX_NDIM; d++) s[d] = 2;
    dlb_shape_contiguous_strides(DLB_MAX_NDIM, s, t);
    CHECK_EQ_INT(dlb_shape_reshape_strides(DLB_MAX_NDIM, s, t, 1, flat, got), 1);
    CHECK_EQ_INT(got[0], 1);
    CHECK_EQ_INT(dlb_shape_reshape_strides(1, flat, got, DLB_MAX_NDIM, s, back), 1);
    for (int d = 0; d < DLB_MAX_NDIM; d++) CHECK_EQ_INT(back[d], t[d]);
  }
}

int main(void) {
  rng_state = 0x2545f4914f6cdd1dull; /* this file's seed */
  test_numel();
  test_accepted_shapes_have_strides();
  test_nbytes();
  test_contiguous_strides();
  test_is_contiguous();
  test_reach();
  test_reshape_known();
  test_random_geometries();
  return check_done("test_shape");
}
