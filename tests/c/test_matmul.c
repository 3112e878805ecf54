/* test_matmul.c -- dlb_matmul and dlb_dot against a
 * naive reference loop over random data: every dtype, the kernel cases
 * (gemm, gemv, dot, the plain loops), and operand layouts (transposed,
 * strided, reversed, expanded, misaligned), batch broadcasting, 1-D and
 * zero-size cases, `out`, and the errors. */
#define _POSIX_C_SOURCE 200809L
#define FIXTURES_CPU
#include <math.h>
#include "compute/matmul.h"
#include "fixtures.h"
#include "operands.h"

static const char *layout_name[] = {"contiguous", "transposed", "step2", "reversed", "expanded"};

/* ------------------------------------------------------------------------ */
/* The reference: a naive loop in double precision (floats) or wrapping
 * 64-bit arithmetic (integers), one result element at a time. */

/* The relative tolerance of a result of dtype t. */
static double tolerance(dlb_dtype t) {
  switch (t) {
    case DLB_FLOAT16: return 2e-3;
    case DLB_BFLOAT16: return 1.6e-2;
    case DLB_FLOAT32:
    case DLB_COMPLEX64: return 2e-6;
    default: return 1e-13;
  }
}

/* Where result index r takes its operands: a[ai...] and b[bi...] with the
 * summed index k at position ka of ai and kb of bi. */
typedef struct mapping {
  int64_t ai[DLB_MAX_NDIM], bi[DLB_MAX_NDIM];
  int ka, kb;
} mapping;

/* matmul's mapping for result index r. */
static void map_matmul(const dlb_array *a, const dlb_array *b, const dlb_array *r,
                       const int64_t *idx, mapping *m) {
  int a_vec = a->ndim == 1, b_vec = b->ndim == 1;
  int nbatch = r->ndim - !a_vec - !b_vec;
  int64_t i = a_vec ? 0 : idx[nbatch], j = b_vec ? 0 : idx[r->ndim - 1];
  int na = a->ndim - 2 > 0 ? a->ndim - 2 : 0, nb = b->ndim - 2 > 0 ? b->ndim - 2 : 0;
  for (int d = 0; d < na; d++) m->ai[d] = a->shape[d] == 1 ? 0 : idx[nbatch - na + d];
  for (int d = 0; d < nb; d++) m->bi[d] = b->shape[d] == 1 ? 0 : idx[nbatch - nb + d];
  if (a_vec) {
    m->ka = 0;
  } else {
    m->ai[na] = i;
    m->ka = na + 1;
  }
  if (b_vec) {
    m->kb = 0;
  } else {
    m->kb = nb;
    m->bi[nb + 1] = j;
  }
}

/* dot's mapping: r = (P..., Q..., [N]). */
static void map_dot(const dlb_array *a, const dlb_array *b, const dlb_array *r, const int64_t *idx,
                    mapping *m) {
  int np = a->ndim - 1, nq = b->ndim == 1 ? 0 : b->ndim - 2;
  for (int d = 0; d < np; d++) m->ai[d] = idx[d];
  m->ka = np;
  for (int d = 0; d < nq; d++) m->bi[d] = idx[np + d];
  m->kb = nq;
  if (b->ndim > 1) m->bi[nq + 1] = idx[r->ndim - 1];
}

/* Compares every element of r with the reference product of a and b. */
static int check_against_reference(const dlb_array *a, const dlb_array *b, const dlb_array *r,
                                   int is_dot, const char *what) {
  int64_t idx[DLB_MAX_NDIM] = {0}, k = a->shape[a->ndim - 1];
  dlb_kind kind = dlb_dtype_get(r->dtype)->kind;
  int bits = (int)dlb_dtype_get(r->dtype)->itemsize * 8, bad = 0;
  uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  for (int64_t e = 0; e < r->numel && !bad; e++) {
    mapping m;
    double re = 0, im = 0, scale = 0;
    uint64_t u = 0;
    value got;
    (is_dot ? map_dot : map_matmul)(a, b, r, idx, &m);
    for (int64_t p = 0; p < k; p++) {
      value x, y;
      m.ai[m.ka] = p;
      m.bi[m.kb] = p;
      x = load(a, m.ai);
      y = load(b, m.bi);
      re += x.re * y.re - x.im * y.im;
      im += x.re * y.im + x.im * y.re;
      scale += hypot(x.re, x.im) * hypot(y.re, y.im);
      u = kind == DLB_KIND_BOOL ? (u | (x.u && y.u)) : u + x.u * y.u;
    }
    got = load(r, idx);
    if (kind == DLB_KIND_FLOAT || kind == DLB_KIND_COMPLEX) {
      double tol = tolerance(r->dtype) * (scale + 1e-30) + 1e-30;
      if (fabs(got.re - re) > tol || fabs(got.im - im) > tol) bad = 1;
      if (bad)
        fprintf(stderr, "  %s: element %lld: got %.9g%+.9gi, want %.9g%+.9gi\n", what, (long long)e,
                got.re, got.im, re, im);
    } else if ((got.u & mask) != (u & mask)) {
      bad = 1;
      fprintf(stderr, "  %s: element %lld: got %llu, want %llu\n", what, (long long)e,
              (unsigned long long)(got.u & mask), (unsigned long long)(u & mask));
    }
    for (int d = r->ndim - 1; d >= 0 && ++idx[d] == r->shape[d]; d--) idx[d] = 0;
  }
  CHECK(!bad);
  return !bad;
}

/* Shapes as text for messages. */
static void describe(char *out, size_t size, const dlb_array *a, const dlb_array *b,
                     const char *extra) {
  size_t len = (size_t)snprintf(out, size, "%s/%s (", dlb_dtype_get(a->dtype)->name,
                                dlb_dtype_get(b->dtype)->name);
  for (int d = 0; d < a->ndim; d++)
    len += (size_t)snprintf(out + len, size - len, " %lld", (long long)a->shape[d]);
  len += (size_t)snprintf(out + len, size - len, ") x (");
  for (int d = 0; d < b->ndim; d++)
    len += (size_t)snprintf(out + len, size - len, " %lld", (long long)b->shape[d]);
  snprintf(out + len, size - len, ") %s", extra);
}

/* matmul(a, b) into a new array: its dtype and shape, then every element. */
static void check_matmul(const dlb_array *a, const dlb_array *b, const char *extra) {
  dlb_array r = {0};
  char what[256];
  describe(what, sizeof what, a, b, extra);
  if (dlb_matmul(a, b, DLB_MATMUL_PROMOTE, &r, cpu, &err) != DLB_OK) {
    fprintf(stderr, "  %s: %s\n", what, err.message);
    CHECK(0);
    return;
  }
  CHECK_EQ_INT(r.dtype, dlb_promote_types(a->dtype, b->dtype));
  check_against_reference(a, b, &r, 0, what);
  dlb_array_release(&r);
}

/* ------------------------------------------------------------------------ */
/* matmul */

static const dlb_dtype all_dtypes[] = {DLB_BOOL,    DLB_INT8,      DLB_INT16,     DLB_INT32,
                                       DLB_INT64,   DLB_UINT8,     DLB_UINT16,    DLB_UINT32,
                                       DLB_UINT64,  DLB_FLOAT16,   DLB_BFLOAT16,  DLB_FLOAT32,
                                       DLB_FLOAT64, DLB_COMPLEX64, DLB_COMPLEX128};

/* Each dtype, each kernel case (gemm, gemv either way, dot), each layout of
 * either operand. */
static void test_dtypes_and_layouts(void) {
  /* {M, K, N}: gemm, matrix x column, row x matrix, row x column, and sizes
   * past the loops' blocks (129 > BLOCK_K). */
  static const int64_t sizes[][3] = {{3, 4, 5}, {4, 3, 1}, {1, 5, 3}, {1, 6, 1}, {5, 129, 7}};
  for (size_t t = 0; t < sizeof all_dtypes / sizeof all_dtypes[0]; t++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int la = 0; la < LAYOUT_COUNT; la++)
        for (int lb = 0; lb < LAYOUT_COUNT; lb++) {
          int64_t sa[2] = {sizes[s][0], sizes[s][1]}, sb[2] = {sizes[s][1], sizes[s][2]};
          dlb_array a = make(all_dtypes[t], 2, sa, (layout)la);
          dlb_array b = make(all_dtypes[t], 2, sb, (layout)lb);
          char extra[64];
          snprintf(extra, sizeof extra, "%s x %s", layout_name[la], layout_name[lb]);
          check_matmul(&a, &b, extra);
          dlb_array_release(&a);
          dlb_array_release(&b);
        }
}

/* Mixed dtypes promote (int8 x uint8 -> int16, int32 x float32 -> float64,
 * float16 x bfloat16 -> float32, float32 x complex128 -> complex128). */
static void test_mixed_dtypes(void) {
  static const dlb_dtype pairs[][2] = {{DLB_INT8, DLB_UINT8},       {DLB_INT32, DLB_FLOAT32},
                                       {DLB_FLOAT16, DLB_BFLOAT16}, {DLB_FLOAT32, DLB_COMPLEX128},
                                       {DLB_BOOL, DLB_INT16},       {DLB_UINT64, DLB_INT64}};
  int64_t sa[2] = {4, 6}, sb[2] = {6, 3};
  for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
    for (int lay = 0; lay < LAYOUT_COUNT; lay++) {
      dlb_array a = make(pairs[p][0], 2, sa, (layout)lay);
      dlb_array b = make(pairs[p][1], 2, sb, CONTIGUOUS);
      check_matmul(&a, &b, layout_name[lay]);
      dlb_array_release(&a);
      dlb_array_release(&b);
    }
}

/* 1-D operands: the added dim is not in the result. */
static void test_vectors(void) {
  static const dlb_dtype types[] = {DLB_FLOAT32, DLB_FLOAT64, DLB_COMPLEX128, DLB_INT32};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
    for (int lay = 0; lay < LAYOUT_COUNT; lay++) {
      int64_t v[1] = {5}, m[2] = {5, 3}, mt[2] = {4, 5}, batch[3] = {2, 5, 3};
      dlb_array x = make(types[t], 1, v, (layout)lay), y = make(types[t], 1, v, CONTIGUOUS);
      dlb_array mat = make(types[t], 2, m, (layout)lay), matl = make(types[t], 2, mt, (layout)lay);
      dlb_array stack = make(types[t], 3, batch, (layout)lay);
      dlb_array r = {0};
      check_matmul(&x, &y, layout_name[lay]);     /* () */
      check_matmul(&x, &mat, layout_name[lay]);   /* (3) */
      check_matmul(&matl, &x, layout_name[lay]);  /* (4) */
      check_matmul(&x, &stack, layout_name[lay]); /* (2, 3) */
      CHECK_EQ_INT(dlb_matmul(&x, &y, DLB_MATMUL_PROMOTE, &r, cpu, &err), DLB_OK);
      CHECK_EQ_INT(r.ndim, 0);
      dlb_array_release(&r);
      CHECK_EQ_INT(dlb_matmul(&x, &stack, DLB_MATMUL_PROMOTE, &r, cpu, &err), DLB_OK);
      CHECK_EQ_INT(r.ndim, 2);
      CHECK_EQ_INT(r.shape[0], 2);
      CHECK_EQ_INT(r.shape[1], 3);
      dlb_array_release(&r);
      dlb_array_release(&x);
      dlb_array_release(&y);
      dlb_array_release(&mat);
      dlb_array_release(&matl);
      dlb_array_release(&stack);
    }
}

/* Batch dims broadcast: (2, 1, 3, 4) x (5, 4, 2) -> (2, 5, 3, 2), in every layout. */
static void test_batch_broadcast(void) {
  static const dlb_dtype types[] = {DLB_FLOAT32, DLB_FLOAT64, DLB_COMPLEX64, DLB_INT64, DLB_BOOL};
  int64_t sa[4] = {2, 1, 3, 4}, sb[3] = {5, 4, 2};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
    for (int lay = 0; lay < LAYOUT_COUNT; lay++) {
      dlb_array a = make(types[t], 4, sa, (layout)lay), b = make(types[t], 3, sb, (layout)lay);
      dlb_array r = {0};
      check_matmul(&a, &b, layout_name[lay]);
      CHECK_EQ_INT(dlb_matmul(&a, &b, DLB_MATMUL_PROMOTE, &r, cpu, &err), DLB_OK);
      CHECK_EQ_INT(r.ndim, 4);
      CHECK(r.shape[0] == 2 && r.shape[1] == 5 && r.shape[2] == 3 && r.shape[3] == 2);
      dlb_array_release(&r);
      dlb_array_release(&a);
      dlb_array_release(&b);
    }
}

/* An operand expanded along a batch dim (stride 0) is used as it is. */
static void test_expanded_batch(void) {
  int64_t one[3] = {1, 3, 4}, many[3] = {6, 3, 4}, sb[3] = {6, 4, 2};
  dlb_array base = make(DLB_FLOAT64, 3, one, TRANSPOSED), a = view_of(&base);
  dlb_array b = make(DLB_FLOAT64, 3, sb, CONTIGUOUS);
  CHECK_EQ_INT(dlb_view_expand(&a, 3, many, &err), DLB_OK);
  check_matmul(&a, &b, "a expanded along its batch dim");
  dlb_array_release(&base);
  dlb_array_release(&a);
  dlb_array_release(&b);
}

/* Zero extents: an empty result, or zeros when K is 0. */
static void test_zero_size(void) {
  static const dlb_dtype types[] = {DLB_FLOAT32, DLB_COMPLEX128, DLB_INT16, DLB_BOOL, DLB_FLOAT16};
  static const int64_t cases[][6] = {
      /* a (3 dims), b (3 dims) */
      {2, 0, 4, 2, 4, 3}, /* M = 0 */
      {2, 3, 0, 2, 0, 4}, /* K = 0: zeros */
      {2, 3, 4, 2, 4, 0}, /* N = 0 */
      {0, 3, 4, 1, 4, 2}, /* an empty batch */
  };
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      dlb_array a = make(types[t], 3, cases[c], CONTIGUOUS);
      dlb_array b = make(types[t], 3, cases[c] + 3, CONTIGUOUS);
      dlb_array r = {0};
      CHECK_EQ_INT(dlb_matmul(&a, &b, DLB_MATMUL_PROMOTE, &r, cpu, &err), DLB_OK);
      CHECK_EQ_INT(r.ndim, 3);
      CHECK_EQ_INT(r.shape[0], cases[c][0] ? 2 : 0);
      CHECK_EQ_INT(r.shape[1], cases[c][1]);
      CHECK_EQ_INT(r.shape[2], cases[c][5]);
      check_against_reference(&a, &b, &r, 0, "zero-size");
      dlb_array_release(&r);
      dlb_array_release(&a);
      dlb_array_release(&b);
    }
}

/* Data not aligned for its dtype is copied before CBLAS or a loop reads it. */
static void test_misaligned(void) {
  static const dlb_dtype types[] = {DLB_FLOAT32, DLB_FLOAT64, DLB_COMPLEX128, DLB_INT32};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    size_t item = dlb_dtype_get(types[t])->itemsize;
    int64_t bytes[1] = {(int64_t)(12 * item + 1)}, sb[2] = {4, 2}, sc[2] = {2, 3};
    dlb_array raw = alloc(DLB_UINT8, 1, bytes), good = make(types[t], 2, sb, CONTIGUOUS);
    dlb_array left = make(types[t], 2, sc, CONTIGUOUS);
    dlb_array a = raw, b = good;
    /* a: (3, 4) of dtype at byte 1 of the buffer, its bytes copied from good-like data. */
    a.dtype = types[t];
    a.offset = 1;
    a.ndim = 2;
    a.shape[0] = 3, a.shape[1] = 4;
    a.strides[0] = 4, a.strides[1] = 1;
    a.numel = 12;
    fill_random(&a);
    check_matmul(&a, &b, "misaligned a");
    check_matmul(&left, &a, "misaligned b");
    dlb_array_release(&left);
    dlb_array_release(&raw);
    dlb_array_release(&good);
  }
}

/* Sizes beyond CBLAS's int run the plain loops (the limit lowered here). */
static void test_loop_fallback(void) {
  static const dlb_dtype types[] = {DLB_FLOAT32, DLB_FLOAT64, DLB_COMPLEX64, DLB_COMPLEX128};
  int64_t old = dlb_matmul_set_blas_limit(4);
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
    for (int lay = 0; lay < LAYOUT_COUNT; lay++) {
      int64_t sa[3] = {2, 6, 7}, sb[2] = {7, 5};
      dlb_array a = make(types[t], 3, sa, (layout)lay), b = make(types[t], 2, sb, (layout)lay);
      check_matmul(&a, &b, "plain loop for floats");
      dlb_array_release(&a);
      dlb_array_release(&b);
    }
  CHECK_EQ_INT(dlb_matmul_set_blas_limit(old), 4);
}

/* Integers wrap (NumPy): int8 100*100 + 100*100 = 20000 = 32 (mod 256). */
static void test_integer_wrap(void) {
  int64_t sa[2] = {1, 2}, sb[2] = {2, 1};
  dlb_array a = alloc(DLB_INT8, 2, sa), b = alloc(DLB_INT8, 2, sb), r = {0};
  dlb_scalar v = s_int(100), got;
  int64_t zero[2] = {0, 0};
  CHECK_EQ_INT(dlb_array_fill(&a, &v, &err), DLB_OK);
  CHECK_EQ_INT(dlb_array_fill(&b, &v, &err), DLB_OK);
  CHECK_EQ_INT(dlb_matmul(&a, &b, DLB_MATMUL_PROMOTE, &r, cpu, &err), DLB_OK);
  CHECK_EQ_INT(dlb_array_get(&r, zero, &got, &err), DLB_OK);
  CHECK_EQ_INT(got.v.i, 32);
  dlb_array_release(&r);
  /* With dtype int32 the inputs are cast and nothing wraps. */
  CHECK_EQ_INT(dlb_matmul(&a, &b, DLB_INT32, &r, cpu, &err), DLB_OK);
  CHECK_EQ_INT(r.dtype, DLB_INT32);
  CHECK_EQ_INT(dlb_array_get(&r, zero, &got, &err), DLB_OK);
  CHECK_EQ_INT(got.v.i, 20000);
  dlb_array_release(&r);
  dlb_array_release(&a);
  dlb_array_release(&b);
}

/* ------------------------------------------------------------------------ */
/* out */

/* out in other dtypes and layouts, and out overlapping an input. */
static void test_out(void) {
  int64_t sa[2] = {4, 4}, sb[2] = {4, 4};
  dlb_array a = make(DLB_FLOAT64, 2, sa, CONTIGUOUS), b = make(DLB_FLOAT64, 2, sb, TRANSPOSED);
  dlb_array want = {0}, a_copy = {0};
  CHECK_EQ_INT(dlb_matmul(&a, &b, DLB_MATMUL_PROMOTE, &want, cpu, &err), DLB_OK);
  for (int lay = 0; lay < LAYOUT_COUNT; lay++) {
    if (lay == EXPANDED) continue; /* an expanded out overlaps itself */
    dlb_array out = make(lay % 2 ? DLB_FLOAT32 : DLB_FLOAT64, 2, sa, (layout)lay);
    CHECK_EQ_INT(dlb_matmul(&a, &b, DLB_MATMUL_PROMOTE, &out, cpu, &err), DLB_OK);
    check_against_reference(&a, &b, &out, 0, layout_name[lay]);
    dlb_array_release(&out);
  }
  /* out = a: as if a had been copied first (NumPy). */
  CHECK_EQ_INT(dlb_array_clone(&a_copy, &a, a.dtype, &err), DLB_OK);
  CHECK_EQ_INT(dlb_matmul(&a, &b, DLB_MATMUL_PROMOTE, &a, cpu, &err), DLB_OK);
  check_against_reference(&a_copy, &b, &a, 0, "out = a");
  dlb_array_release(&a_copy);
  /* out = b, where b is a transposed view of its buffer. */
  CHECK_EQ_INT(dlb_array_clone(&a_copy, &b, b.dtype, &err), DLB_OK);
  CHECK_EQ_INT(dlb_matmul(&a, &b, DLB_MATMUL_PROMOTE, &b, cpu, &err), DLB_OK);
  check_against_reference(&a, &a_copy, &b, 0, "out = b");
  dlb_array_release(&a_copy);
  dlb_array_release(&want);
  dlb_array_release(&a);
  dlb_array_release(&b);
}

/* Errors of out: read-only, wrong shape, a dtype the result cannot go into. */
static void test_out_errors(void) {
  int64_t s[2] = {2, 2}, s3[2] = {2, 3};
  dlb_array a = make(DLB_FLOAT64, 2, s, CONTIGUOUS), out = make(DLB_FLOAT64, 2, s, CONTIGUOUS);
  dlb_array wrong = make(DLB_FLOAT64, 2, s3, CONTIGUOUS), ints = make(DLB_INT64, 2, s, CONTIGUOUS);
  dlb_array ro = view_of(&out);
  dlb_scalar before, after;
  int64_t zero[2] = {0, 0};
  ro.readonly = 1;
  CHECK_EQ_INT(dlb_array_get(&out, zero, &before, &err), DLB_OK);
  CHECK_EQ_INT(dlb_matmul(&a, &a, DLB_MATMUL_PROMOTE, &ro, cpu, &err), DLB_E_READ_ONLY);
  CHECK_EQ_INT(dlb_array_get(&out, zero, &after, &err), DLB_OK);
  CHECK(before.v.f == after.v.f);
  CHECK_EQ_INT(dlb_matmul(&a, &a, DLB_MATMUL_PROMOTE, &wrong, cpu, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(dlb_matmul(&a, &a, DLB_MATMUL_PROMOTE, &ints, cpu, &err), DLB_E_DTYPE);
  dlb_array_release(&ro);
  dlb_array_release(&a);
  dlb_array_release(&out);
  dlb_array_release(&wrong);
  dlb_array_release(&ints);
}

/* ------------------------------------------------------------------------ */
/* Errors */

static void test_errors(void) {
  int64_t s23[2] = {2, 3}, s24[2] = {2, 4}, s3[1] = {3}, b1[3] = {2, 3, 3}, b2[3] = {3, 3, 3};
  dlb_array a = make(DLB_FLOAT64, 2, s23, CONTIGUOUS), b = make(DLB_FLOAT64, 2, s24, CONTIGUOUS);
  dlb_array scalar = alloc(DLB_FLOAT64, 0, NULL), v = make(DLB_FLOAT64, 1, s3, CONTIGUOUS);
  dlb_array x = make(DLB_FLOAT64, 3, b1, CONTIGUOUS), y = make(DLB_FLOAT64, 3, b2, CONTIGUOUS);
  dlb_array r = {0}, dead = view_of(&a);
  /* K differs: both shapes in the message. */
  CHECK_EQ_INT(dlb_matmul(&a, &b, DLB_MATMUL_PROMOTE, &r, cpu, &err), DLB_E_SHAPE);
  CHECK(strstr(err.message, "(2, 3)") && strstr(err.message, "(2, 4)"));
  CHECK(r.buffer == NULL);
  /* 0-d operands. */
  CHECK_EQ_INT(dlb_matmul(&scalar, &a, DLB_MATMUL_PROMOTE, &r, cpu, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(dlb_matmul(&v, &scalar, DLB_MATMUL_PROMOTE, &r, cpu, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(dlb_dot(&scalar, &v, &r, cpu, &err), DLB_E_SHAPE);
  /* Batch dims that do not broadcast (2 against 3). */
  CHECK_EQ_INT(dlb_matmul(&x, &y, DLB_MATMUL_PROMOTE, &r, cpu, &err), DLB_E_SHAPE);
  /* A dtype an input does not cast to under same_kind. */
  CHECK_EQ_INT(dlb_matmul(&v, &v, DLB_INT64, &r, cpu, &err), DLB_E_DTYPE);
  /* A deleted operand. */
  dlb_array_release(&dead);
  CHECK_EQ_INT(dlb_matmul(&dead, &v, DLB_MATMUL_PROMOTE, &r, cpu, &err), DLB_E_DELETED);
  CHECK_EQ_INT(dlb_dot(&v, &dead, &r, cpu, &err), DLB_E_DELETED);
  CHECK(r.buffer == NULL);
  dlb_array_release(&a);
  dlb_array_release(&b);
  dlb_array_release(&scalar);
  dlb_array_release(&v);
  dlb_array_release(&x);
  dlb_array_release(&y);
}

/* Memory the host cannot address: matmul is UNSUPPORTED with a device_put
 * hint; joins copy there. */
static void test_unsupported_backend(void) {
  dlb_backend_ops ops = opaque_ops("opaque");
  dlb_backend *opaque;
  dlb_array a, b = {0}, r = {0};
  int64_t s[2] = {2, 2};
  CHECK_EQ_INT(dlb_backend_create(&ops, NULL, &opaque, &err), DLB_OK);
  CHECK_EQ_INT(dlb_array_allocate(&a, opaque, 0, DLB_FLOAT32, 2, s, 1, &err), DLB_OK);
  CHECK_EQ_INT(dlb_matmul(&a, &a, DLB_MATMUL_PROMOTE, &r, cpu, &err), DLB_E_UNSUPPORTED);
  CHECK(err.hint && strstr(err.hint, "device_put"));
  b = alloc(DLB_FLOAT32, 2, s);
  /* Mixed devices: ARGUMENT. */
  CHECK_EQ_INT(dlb_matmul(&b, &a, DLB_MATMUL_PROMOTE, &r, cpu, &err), DLB_E_ARGUMENT);
  dlb_array_release(&a);
  dlb_array_release(&b);
  dlb_backend_release(opaque);
}

/* ------------------------------------------------------------------------ */
/* dot */

static void check_dot(const dlb_array *a, const dlb_array *b, int ndim, const char *extra) {
  dlb_array r = {0};
  char what[256];
  describe(what, sizeof what, a, b, extra);
  if (dlb_dot(a, b, &r, cpu, &err) != DLB_OK) {
    fprintf(stderr, "  dot %s: %s\n", what, err.message);
    CHECK(0);
    return;
  }
  CHECK_EQ_INT(r.ndim, ndim);
  check_against_reference(a, b, &r, 1, what);
  dlb_array_release(&r);
}

/* dot of N-D operands: (2, 3, 4) . (5, 4, 6) -> (2, 3, 5, 6), in every layout;
 * and the 1-D and 2-D cases, which are matmul's. */
static void test_dot(void) {
  static const dlb_dtype types[] = {DLB_FLOAT32, DLB_FLOAT64, DLB_COMPLEX128, DLB_INT32,
                                    DLB_FLOAT16};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
    for (int lay = 0; lay < LAYOUT_COUNT; lay++) {
      int64_t sa[3] = {2, 3, 4}, sb[3] = {5, 4, 6}, v4[1] = {4}, m[2] = {3, 4}, m2[2] = {4, 2};
      dlb_array a = make(types[t], 3, sa, (layout)lay), b = make(types[t], 3, sb, (layout)lay);
      dlb_array v = make(types[t], 1, v4, (layout)lay), mat = make(types[t], 2, m, (layout)lay);
      dlb_array mat2 = make(types[t], 2, m2, (layout)lay);
      check_dot(&a, &b, 4, layout_name[lay]);
      check_dot(&a, &v, 2, layout_name[lay]); /* (2, 3) */
      check_dot(&v, &b, 2, layout_name[lay]); /* (5, 6) */
      check_dot(&v, &v, 0, layout_name[lay]); /* () */
      check_dot(&mat, &mat2, 2, layout_name[lay]);
      check_dot(&mat, &b, 3, layout_name[lay]); /* (3, 5, 6) */
      dlb_array_release(&a);
      dlb_array_release(&b);
      dlb_array_release(&v);
      dlb_array_release(&mat);
      dlb_array_release(&mat2);
    }
}

int main(void) {
  if (!cpu_open()) return 1;
  test_dtypes_and_layouts();
  test_mixed_dtypes();
  test_vectors();
  test_batch_broadcast();
  test_expanded_batch();
  test_zero_size();
  test_misaligned();
  test_loop_fallback();
  test_integer_wrap();
  test_out();
  test_out_errors();
  test_errors();
  test_unsupported_backend();
  test_dot();
  cpu_close();
  return check_done("test_matmul");
}
