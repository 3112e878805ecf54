/* test_array.c -- arrays on the cpu backend (array.c, copy.c): allocation,
 * sharing, every view operation checked element by element, bounds checks,
 * strided and overlapping copies, casts, fills, clones, host reads and
 * writes, element access. */
#define _POSIX_C_SOURCE 200809L /* fork, waitpid */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/array.h"
#include "core/copy.h"
#include "core/shape.h"
#define FIXTURES_CPU
#include "fixtures.h"

#define P(e) ((int64_t)1 << (e))

/* ------------------------------------------------------------------------ */
/* Helpers */

/* Element values 100i + 10j + k of the base array A. */
static int64_t aval(int64_t i, int64_t j, int64_t k) { return 100 * i + 10 * j + k; }

/* A: int32 (2,3,4) holding aval; written through the host pointer. */
static dlb_array make_A(void) {
  const int64_t shape[] = {2, 3, 4};
  dlb_array a = alloc(DLB_INT32, 3, shape);
  int32_t *p = (int32_t *)dlb_array_host_data(&a);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) p[i * 12 + j * 4 + k] = (int32_t)aval(i, j, k);
  return a;
}

/* A 1-D int32 array 0..n-1. */
static dlb_array make_iota(int64_t n) { return iota(1, &n); }

static int same_geometry(const dlb_array *a, const dlb_array *b) {
  if (a->ndim != b->ndim || a->offset != b->offset || a->numel != b->numel ||
      a->dtype != b->dtype || a->buffer != b->buffer)
    return 0;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d] || a->strides[d] != b->strides[d]) return 0;
  return 1;
}

static int next_index(int ndim, const int64_t *shape, int64_t *idx) {
  for (int d = ndim - 1; d >= 0; d--) {
    if (++idx[d] < shape[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}

/* Checks v's shape, numel and bounds, every element (row-major) through
 * dlb_array_get and again through dlb_array_read_into, and that indices
 * just outside each dim are INDEX. */
#define CHECK_ELEMS(v, want, n) check_elems((v), (want), (n), __LINE__)
static void check_elems(const dlb_array *v, const int64_t *want, int64_t n, int line) {
  int64_t idx[DLB_MAX_NDIM] = {0}, count = 1;
  int bad = 0;
  for (int d = 0; d < v->ndim; d++) count *= v->shape[d];
  if (count != n || v->numel != n) {
    fprintf(stderr, "line %d: %lld elements (numel %lld), want %lld\n", line, (long long)count,
            (long long)v->numel, (long long)n);
    CHECK(count == n && v->numel == n);
    return;
  }
  if (dlb_array_check_bounds(v, &err) != DLB_OK) {
    fprintf(stderr, "line %d: check_bounds: %s\n", line, err.message);
    CHECK(0);
    return;
  }
  for (int64_t k = 0; k < n; k++) {
    dlb_scalar s;
    dlb_status st = dlb_array_get(v, idx, &s, &err);
    if ((st != DLB_OK || scalar_int(&s) != want[k]) && !bad) {
      fprintf(stderr, "line %d: element %lld: status %d, got %lld, want %lld\n", line, (long long)k,
              (int)st, st == DLB_OK ? (long long)scalar_int(&s) : 0LL, (long long)want[k]);
      bad = 1;
    }
    next_index(v->ndim, v->shape, idx);
  }
  CHECK(!bad);
  if (n > 0) {
    int64_t *got = calloc((size_t)n, sizeof *got);
    CHECK_EQ_INT(dlb_array_read_into(v, got, DLB_INT64, &err), DLB_OK);
    if (memcmp(got, want, (size_t)n * sizeof *got) != 0) {
      fprintf(stderr, "line %d: read_into differs from get\n", line);
      CHECK(0);
    }
    free(got);
  }
  for (int d = 0; d < v->ndim; d++) {
    dlb_scalar s;
    memset(idx, 0, sizeof idx);
    idx[d] = v->shape[d];
    CHECK_EQ_INT(dlb_array_get(v, idx, &s, &err), DLB_E_INDEX);
    idx[d] = -1;
    CHECK_EQ_INT(dlb_array_get(v, idx, &s, &err), DLB_E_INDEX);
  }
}

/* ------------------------------------------------------------------------ */

static void test_allocate(void) {
  size_t cpu_refs = atomic_load(&cpu->refs);
  {
    const int64_t shape[] = {2, 3};
    dlb_array a = alloc(DLB_INT16, 2, shape);
    CHECK(a.buffer != NULL);
    CHECK_EQ_INT(atomic_load(&a.buffer->refs), 1);
    CHECK_EQ_INT(atomic_load(&cpu->refs), cpu_refs + 1);
    CHECK(a.buffer->backend == cpu);
    CHECK_EQ_INT(a.buffer->nbytes, 12);
    CHECK(a.buffer->host != NULL);
    CHECK_EQ_INT((uintptr_t)a.buffer->host % 64, 0);
    CHECK_EQ_INT(a.dtype, DLB_INT16);
    CHECK_EQ_INT(a.ndim, 2);
    CHECK_EQ_INT(a.numel, 6);
    CHECK_EQ_INT(a.offset, 0);
    CHECK_EQ_INT(a.readonly, 0);
    CHECK_EQ_INT(a.shape[0], 2);
    CHECK_EQ_INT(a.shape[1], 3);
    CHECK_EQ_INT(a.strides[0], 3);
    CHECK_EQ_INT(a.strides[1], 1);
    CHECK(dlb_array_is_contiguous(&a));
    const int64_t zeros[6] = {0};
    CHECK_ELEMS(&a, zeros, 6);
    dlb_array_release(&a);
    CHECK(a.buffer == NULL);
    CHECK_EQ_INT(atomic_load(&cpu->refs), cpu_refs);
  }
  { /* 0-D */
    dlb_array a = alloc(DLB_FLOAT64, 0, no_dims);
    CHECK_EQ_INT(a.numel, 1);
    CHECK_EQ_INT(a.buffer->nbytes, 8);
    const int64_t want[] = {0};
    CHECK_ELEMS(&a, want, 1);
    dlb_array_release(&a);
  }
  { /* size 0: no memory at all */
    const int64_t shape[] = {3, 0};
    dlb_array a = alloc(DLB_FLOAT32, 2, shape);
    CHECK(a.buffer != NULL);
    CHECK_EQ_INT(a.numel, 0);
    CHECK_EQ_INT(a.buffer->nbytes, 0);
    CHECK(a.buffer->handle == NULL);
    CHECK(dlb_array_host_data(&a) == NULL);
    CHECK_ELEMS(&a, NULL, 0);
    dlb_scalar s = s_int(1);
    int64_t idx[2] = {0, 0};
    CHECK_EQ_INT(dlb_array_get(&a, idx, &s, &err), DLB_E_INDEX);
    CHECK_EQ_INT(dlb_array_set(&a, idx, &s, &err), DLB_E_INDEX);
    CHECK_EQ_INT(dlb_array_fill(&a, &s, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_read_into(&a, NULL, DLB_INT64, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_write_from(&a, NULL, DLB_INT64, &err), DLB_OK);
    dlb_array c;
    CHECK_EQ_INT(dlb_array_clone(&c, &a, DLB_INT8, &err), DLB_OK);
    CHECK_EQ_INT(c.numel, 0);
    dlb_array_release(&c);
    dlb_array_release(&a);
  }
  { /* large zeroed blocks come from calloc: still aligned and zero */
    const int64_t shape[] = {P(18) + 3};
    dlb_array a = alloc(DLB_FLOAT64, 1, shape);
    const double *p = (const double *)dlb_array_host_data(&a);
    int nonzero = 0;
    CHECK(p != NULL);
    CHECK_EQ_INT((uintptr_t)p % 64, 0);
    for (int64_t k = 0; p && k < shape[0]; k++) nonzero |= p[k] != 0.0;
    CHECK(!nonzero);
    dlb_array_release(&a);
  }
  { /* not zeroed: still usable */
    const int64_t shape[] = {5};
    dlb_array a;
    CHECK_EQ_INT(dlb_array_allocate(&a, cpu, 0, DLB_COMPLEX128, 1, shape, 0, &err), DLB_OK);
    CHECK_EQ_INT(a.buffer->nbytes, 80);
    dlb_array_release(&a);
  }
  { /* failures leave out released */
    dlb_array a;
    int64_t big[DLB_MAX_NDIM + 1];
    const int64_t neg[] = {2, -1}, over[] = {P(62), 4}, toolarge[] = {P(60)};
    for (int d = 0; d <= DLB_MAX_NDIM; d++) big[d] = 1;
    memset(&a, 0xff, sizeof a);
    CHECK_EQ_INT(dlb_array_allocate(&a, cpu, 0, DLB_INT8, 2, neg, 0, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(err.code, DLB_E_SHAPE);
    CHECK(a.buffer == NULL);
    dlb_array_release(&a);
    memset(&a, 0xff, sizeof a);
    CHECK_EQ_INT(dlb_array_allocate(&a, cpu, 0, DLB_INT8, DLB_MAX_NDIM + 1, big, 0, &err),
                 DLB_E_SHAPE);
    CHECK(a.buffer == NULL);
    CHECK_EQ_INT(dlb_array_allocate(&a, cpu, 0, DLB_INT8, DLB_MAX_NDIM, big, 0, &err), DLB_OK);
    CHECK_EQ_INT(a.numel, 1);
    dlb_array_release(&a);
    memset(&a, 0xff, sizeof a);
    CHECK_EQ_INT(dlb_array_allocate(&a, cpu, 0, DLB_INT8, 2, over, 0, &err), DLB_E_SHAPE);
    CHECK(a.buffer == NULL);
    memset(&a, 0xff, sizeof a);
    CHECK_EQ_INT(dlb_array_allocate(&a, cpu, 0, DLB_FLOAT64, 1, toolarge, 0, &err), DLB_E_SHAPE);
    CHECK(a.buffer == NULL);
    CHECK_EQ_INT(atomic_load(&cpu->refs), cpu_refs);
  }
  { /* more bytes than any machine has: OUT_OF_MEMORY from the cpu backend */
    const int64_t shape[] = {P(62)};
    dlb_array a;
    memset(&a, 0xff, sizeof a);
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(dlb_array_allocate(&a, cpu, 0, DLB_UINT8, 1, shape, 0, &err), DLB_E_OUT_OF_MEMORY);
    CHECK_EQ_INT(err.code, DLB_E_OUT_OF_MEMORY);
    CHECK_EQ_STR(err.backend, "cpu");
    CHECK(a.buffer == NULL);
    CHECK_EQ_INT(dlb_array_allocate(&a, cpu, 0, DLB_UINT8, 1, shape, 1, &err), DLB_E_OUT_OF_MEMORY);
    CHECK(a.buffer == NULL);
    CHECK_EQ_INT(atomic_load(&cpu->refs), cpu_refs);
  }
}

static void test_share_release(void) {
  dlb_array a = make_A(), s1, s2, none;
  dlb_buffer *buf = a.buffer;
  CHECK_EQ_INT(atomic_load(&buf->refs), 1);
  dlb_array_share(&s1, &a);
  CHECK_EQ_INT(atomic_load(&buf->refs), 2);
  CHECK(same_geometry(&s1, &a));
  dlb_view_select(&s1, 0, 1, &err);
  dlb_array_share(&s2, &s1); /* a share of a view keeps the view */
  CHECK_EQ_INT(atomic_load(&buf->refs), 3);
  CHECK(same_geometry(&s2, &s1));
  CHECK_EQ_INT(s2.readonly, 0);
  dlb_array_release(&s1);
  CHECK(s1.buffer == NULL);
  CHECK_EQ_INT(atomic_load(&buf->refs), 2);
  dlb_array_release(&s1); /* idempotent */
  CHECK_EQ_INT(atomic_load(&buf->refs), 2);
  dlb_array_share(&none, &s1); /* a share of a released array is released */
  CHECK(none.buffer == NULL);
  CHECK_EQ_INT(atomic_load(&buf->refs), 2);
  dlb_array_release(&none);
  a.readonly = 1;
  dlb_array_share(&s1, &a);
  CHECK_EQ_INT(s1.readonly, 1);
  CHECK_EQ_INT(atomic_load(&buf->refs), 3);
  dlb_array_release(&a); /* the original goes first; views keep the memory */
  CHECK_EQ_INT(atomic_load(&buf->refs), 2);
  {
    int64_t want[12];
    int n = 0;
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) want[n++] = aval(1, j, k);
    CHECK_ELEMS(&s2, want, 12);
  }
  dlb_array_release(&s2);
  CHECK_EQ_INT(atomic_load(&buf->refs), 1);
  dlb_array_release(&s1); /* frees: ASan would catch a leak or a double free */
}

/* ------------------------------------------------------------------------ */
/* Views */

static void test_select(void) {
  dlb_array A = make_A(), v;
  int64_t want[24];
  int n;

  v = view_of(&A);
  CHECK_EQ_INT(dlb_view_select(&v, 1, 2, &err), DLB_OK);
  CHECK_EQ_INT(v.ndim, 2);
  n = 0;
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 4; k++) want[n++] = aval(i, 2, k);
  CHECK_ELEMS(&v, want, n);
  dlb_array_release(&v);

  v = view_of(&A);
  CHECK_EQ_INT(dlb_view_select(&v, 0, 1, &err), DLB_OK);
  CHECK_EQ_INT(dlb_view_select(&v, 1, 3, &err), DLB_OK);
  n = 0;
  for (int j = 0; j < 3; j++) want[n++] = aval(1, j, 3);
  CHECK_ELEMS(&v, want, n);
  CHECK_EQ_INT(dlb_view_select(&v, 0, 2, &err), DLB_OK); /* down to 0-D */
  CHECK_EQ_INT(v.ndim, 0);
  want[0] = aval(1, 2, 3);
  CHECK_ELEMS(&v, want, 1);
  CHECK_EQ_INT(v.offset, (size_t)(12 + 8 + 3) * 4);
  CHECK_EQ_INT(dlb_view_select(&v, 0, 0, &err), DLB_E_INDEX); /* nothing left */
  dlb_array_release(&v);

  v = view_of(&A); /* the last dim */
  CHECK_EQ_INT(dlb_view_select(&v, 2, 0, &err), DLB_OK);
  n = 0;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) want[n++] = aval(i, j, 0);
  CHECK_ELEMS(&v, want, n);
  dlb_array_release(&v);

  v = view_of(&A); /* of a reversed slice */
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 3, 4, -1, &err), DLB_OK);
  CHECK_EQ_INT(dlb_view_select(&v, 2, 0, &err), DLB_OK);
  n = 0;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) want[n++] = aval(i, j, 3);
  CHECK_ELEMS(&v, want, n);
  dlb_array_release(&v);

  v = view_of(&A); /* failures leave the view as it was */
  memset(&err, 0, sizeof err);
  CHECK_EQ_INT(dlb_view_select(&v, 0, 2, &err), DLB_E_INDEX);
  CHECK_EQ_INT(err.code, DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_select(&v, 0, -1, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_select(&v, 1, 3, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_select(&v, 3, 0, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_select(&v, -1, 0, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_select(&v, 0, INT64_MIN, &err), DLB_E_INDEX);
  CHECK(same_geometry(&v, &A));
  dlb_array_release(&v);
  dlb_array_release(&A);
}

static void test_slice(void) {
  dlb_array A = make_A(), v;
  int64_t want[24];
  int n;

  v = view_of(&A);
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 1, 2, 2, &err), DLB_OK);
  n = 0;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int t = 0; t < 2; t++) want[n++] = aval(i, j, 1 + 2 * t);
  CHECK_ELEMS(&v, want, n);
  CHECK(!dlb_array_is_contiguous(&v));
  dlb_array_release(&v);

  v = view_of(&A); /* reversed */
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 3, 4, -1, &err), DLB_OK);
  n = 0;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int t = 0; t < 4; t++) want[n++] = aval(i, j, 3 - t);
  CHECK_ELEMS(&v, want, n);
  /* and then every other one of the reversed: k = 3, 1 */
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 0, 2, 2, &err), DLB_OK);
  n = 0;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int t = 0; t < 2; t++) want[n++] = aval(i, j, 3 - 2 * t);
  CHECK_ELEMS(&v, want, n);
  dlb_array_release(&v);

  v = view_of(&A); /* negative step of 2 on the middle dim: j = 2, 0 */
  CHECK_EQ_INT(dlb_view_slice(&v, 1, 2, 2, -2, &err), DLB_OK);
  CHECK_EQ_INT(dlb_view_slice(&v, 0, 1, 2, -1, &err), DLB_OK);
  n = 0;
  for (int i = 0; i < 2; i++)
    for (int t = 0; t < 2; t++)
      for (int k = 0; k < 4; k++) want[n++] = aval(1 - i, 2 - 2 * t, k);
  CHECK_ELEMS(&v, want, n);
  dlb_array_release(&v);

  v = view_of(&A); /* count 1 with a step beyond the extent */
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 2, 1, 5, &err), DLB_OK);
  CHECK_EQ_INT(dlb_view_slice(&v, 1, 1, 1, -100, &err), DLB_OK);
  want[0] = aval(0, 1, 2);
  want[1] = aval(1, 1, 2);
  CHECK_ELEMS(&v, want, 2);
  dlb_array_release(&v);

  v = view_of(&A); /* count 1 with a huge step: only start is used */
  CHECK_EQ_INT(dlb_view_slice(&v, 0, 1, 1, INT64_MAX, &err), DLB_OK);
  CHECK_EQ_INT(dlb_view_slice(&v, 1, 2, 1, INT64_MIN, &err), DLB_OK);
  n = 0;
  for (int k = 0; k < 4; k++) want[n++] = aval(1, 2, k);
  if (v.ndim == 3 && v.shape[0] == 1 && v.shape[1] == 1) CHECK_ELEMS(&v, want, n);
  dlb_array_release(&v);

  v = view_of(&A); /* count 0 */
  CHECK_EQ_INT(dlb_view_slice(&v, 1, 0, 0, 1, &err), DLB_OK);
  CHECK_EQ_INT(v.shape[1], 0);
  CHECK_EQ_INT(v.numel, 0);
  CHECK_ELEMS(&v, want, 0);
  CHECK_EQ_INT(dlb_view_slice(&v, 1, 0, 0, -3, &err), DLB_OK); /* of an empty dim */
  CHECK_EQ_INT(dlb_view_select(&v, 1, 0, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_slice(&v, 1, 0, 1, 1, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 1, 2, 1, &err), DLB_OK); /* other dims still slice */
  CHECK_EQ_INT(v.numel, 0);
  CHECK_EQ_INT(v.shape[2], 2);
  dlb_array_release(&v);
  v = view_of(&A); /* count 0 at the end (start == extent) and from far away */
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 4, 0, 1, &err), DLB_OK);
  CHECK_EQ_INT(v.numel, 0);
  CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_OK);
  dlb_array_release(&v);
  v = view_of(&A);
  CHECK_EQ_INT(dlb_view_slice(&v, 0, 99, 0, -1, &err), DLB_OK);
  CHECK_EQ_INT(v.numel, 0);
  CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_OK);
  dlb_array_release(&v);

  v = view_of(&A); /* failures leave the view as it was */
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 0, 2, 0, &err), DLB_E_ARGUMENT);
  CHECK_EQ_INT(err.code, DLB_E_ARGUMENT);
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 0, -1, 1, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 4, 1, 1, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_slice(&v, 2, -1, 1, 1, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 2, 2, 2, &err), DLB_E_INDEX);  /* last = 4 */
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 1, 3, -1, &err), DLB_E_INDEX); /* last = -1 */
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 0, 5, 1, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 0, INT64_MAX, 2, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 3, INT64_MAX, -1, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_slice(&v, 2, 0, 2, INT64_MAX, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_slice(&v, 3, 0, 1, 1, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_slice(&v, -1, 0, 1, 1, &err), DLB_E_INDEX);
  CHECK(same_geometry(&v, &A));
  dlb_array_release(&v);
  dlb_array_release(&A);
}

static void test_permute(void) {
  dlb_array A = make_A(), v;
  int64_t want[24];
  int n;

  v = view_of(&A);
  {
    const int perm[] = {2, 0, 1};
    CHECK_EQ_INT(dlb_view_permute(&v, perm, &err), DLB_OK);
  }
  CHECK_EQ_INT(v.shape[0], 4);
  CHECK_EQ_INT(v.shape[1], 2);
  CHECK_EQ_INT(v.shape[2], 3);
  n = 0;
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++) want[n++] = aval(i, j, k);
  CHECK_ELEMS(&v, want, n);
  CHECK(!dlb_array_is_contiguous(&v));
  { /* and back */
    const int inv[] = {1, 2, 0};
    CHECK_EQ_INT(dlb_view_permute(&v, inv, &err), DLB_OK);
    CHECK(same_geometry(&v, &A));
  }
  { /* the identity */
    const int id[] = {0, 1, 2};
    CHECK_EQ_INT(dlb_view_permute(&v, id, &err), DLB_OK);
    CHECK(same_geometry(&v, &A));
  }
  { /* not permutations: nothing changes */
    const int p1[] = {0, 0, 1}, p2[] = {0, 1, 3}, p3[] = {-1, 0, 1}, p4[] = {2, 1, 1},
              p5[] = {1, 2, 1};
    CHECK_EQ_INT(dlb_view_permute(&v, p1, &err), DLB_E_INDEX);
    CHECK_EQ_INT(err.code, DLB_E_INDEX);
    CHECK_EQ_INT(dlb_view_permute(&v, p2, &err), DLB_E_INDEX);
    CHECK_EQ_INT(dlb_view_permute(&v, p3, &err), DLB_E_INDEX);
    CHECK_EQ_INT(dlb_view_permute(&v, p4, &err), DLB_E_INDEX);
    CHECK_EQ_INT(dlb_view_permute(&v, p5, &err), DLB_E_INDEX);
    CHECK(same_geometry(&v, &A));
  }
  { /* a permuted slice */
    const int perm[] = {1, 2, 0};
    CHECK_EQ_INT(dlb_view_slice(&v, 2, 3, 2, -2, &err), DLB_OK); /* k = 3, 1 */
    CHECK_EQ_INT(dlb_view_permute(&v, perm, &err), DLB_OK);
    n = 0;
    for (int j = 0; j < 3; j++)
      for (int t = 0; t < 2; t++)
        for (int i = 0; i < 2; i++) want[n++] = aval(i, j, 3 - 2 * t);
    CHECK_ELEMS(&v, want, n);
  }
  dlb_array_release(&v);
  { /* 0-D: the empty permutation */
    dlb_array s = alloc(DLB_INT8, 0, no_dims);
    const int none[1] = {0};
    CHECK_EQ_INT(dlb_view_permute(&s, none, &err), DLB_OK);
    CHECK_EQ_INT(s.ndim, 0);
    dlb_array_release(&s);
  }
  dlb_array_release(&A);
}

static void test_expand(void) {
  const int64_t bshape[] = {3, 1};
  dlb_array B = alloc(DLB_INT32, 2, bshape), v;
  int64_t want[64];
  int n;
  for (int j = 0; j < 3; j++) {
    int64_t idx[] = {j, 0};
    dlb_scalar s = s_int(10 * j + 7);
    CHECK_EQ_INT(dlb_array_set(&B, idx, &s, &err), DLB_OK);
  }

  v = view_of(&B); /* a new leading dim and the extent-1 dim */
  {
    const int64_t shape[] = {2, 3, 4};
    CHECK_EQ_INT(dlb_view_expand(&v, 3, shape, &err), DLB_OK);
  }
  CHECK_EQ_INT(v.ndim, 3);
  CHECK_EQ_INT(v.strides[0], 0);
  CHECK_EQ_INT(v.strides[2], 0);
  n = 0;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) want[n++] = 10 * j + 7;
  CHECK_ELEMS(&v, want, n);
  CHECK(!dlb_array_is_contiguous(&v));
  dlb_array_release(&v);

  v = view_of(&B); /* -1 keeps a dim */
  {
    const int64_t shape[] = {-1, 5};
    CHECK_EQ_INT(dlb_view_expand(&v, 2, shape, &err), DLB_OK);
  }
  n = 0;
  for (int j = 0; j < 3; j++)
    for (int k = 0; k < 5; k++) want[n++] = 10 * j + 7;
  CHECK_ELEMS(&v, want, n);
  dlb_array_release(&v);

  v = view_of(&B); /* -1 on every existing dim, same extents: no change */
  {
    const int64_t shape[] = {-1, -1}, same[] = {3, 1};
    CHECK_EQ_INT(dlb_view_expand(&v, 2, shape, &err), DLB_OK);
    CHECK(same_geometry(&v, &B));
    CHECK_EQ_INT(dlb_view_expand(&v, 2, same, &err), DLB_OK);
    CHECK(same_geometry(&v, &B));
  }
  dlb_array_release(&v);

  v = view_of(&B); /* to zero extents */
  {
    const int64_t shape[] = {3, 0}, lead0[] = {0, 3, 1}, back[] = {4, 3, 0};
    CHECK_EQ_INT(dlb_view_expand(&v, 2, shape, &err), DLB_OK);
    CHECK_EQ_INT(v.numel, 0);
    CHECK_ELEMS(&v, want, 0);
    dlb_array_release(&v);
    v = view_of(&B);
    CHECK_EQ_INT(dlb_view_expand(&v, 3, lead0, &err), DLB_OK);
    CHECK_EQ_INT(v.numel, 0);
    CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_OK);
    dlb_array_release(&v);
    v = view_of(&B);
    CHECK_EQ_INT(dlb_view_expand(&v, 3, back, &err), DLB_OK);
    CHECK_EQ_INT(v.numel, 0);
  }
  dlb_array_release(&v);

  v = view_of(&B); /* to 32 dims */
  {
    int64_t shape[DLB_MAX_NDIM + 1];
    for (int d = 0; d <= DLB_MAX_NDIM; d++) shape[d] = 1;
    shape[DLB_MAX_NDIM - 2] = 3;
    shape[DLB_MAX_NDIM - 1] = 2;
    CHECK_EQ_INT(dlb_view_expand(&v, DLB_MAX_NDIM + 1, shape, &err), DLB_E_SHAPE);
    CHECK(same_geometry(&v, &B));
    CHECK_EQ_INT(dlb_view_expand(&v, DLB_MAX_NDIM, shape, &err), DLB_OK);
    CHECK_EQ_INT(v.ndim, DLB_MAX_NDIM);
    CHECK_EQ_INT(v.numel, 6);
    n = 0;
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 2; k++) want[n++] = 10 * j + 7;
    CHECK_ELEMS(&v, want, n);
  }
  dlb_array_release(&v);

  v = view_of(&B); /* failures leave the view as it was */
  {
    const int64_t lead_neg[] = {-1, 3, 4}, not1[] = {4, 4}, fewer[] = {3}, neg[] = {3, -2},
                  neg_lead[] = {-2, 3, 1}, over[] = {P(62), 3, 4}, zero_from3[] = {0, 1};
    CHECK_EQ_INT(dlb_view_expand(&v, 3, lead_neg, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(err.code, DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_view_expand(&v, 2, not1, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_view_expand(&v, 1, fewer, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_view_expand(&v, 0, fewer, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_view_expand(&v, -1, fewer, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_view_expand(&v, 2, neg, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_view_expand(&v, 3, neg_lead, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_view_expand(&v, 3, over, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_view_expand(&v, 2, zero_from3, &err), DLB_E_SHAPE); /* 3 -> 0 */
    CHECK(same_geometry(&v, &B));
  }
  dlb_array_release(&v);
  dlb_array_release(&B);
}

static void test_squeeze_unsqueeze(void) {
  dlb_array A = make_A(), v;
  int64_t want[24];
  int n = 0;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) want[n++] = aval(i, j, k);

  v = view_of(&A); /* (2,3,4) -> (1,2,1,3,4,1) */
  CHECK_EQ_INT(dlb_view_unsqueeze(&v, 0, &err), DLB_OK);
  CHECK_EQ_INT(dlb_view_unsqueeze(&v, 2, &err), DLB_OK);
  CHECK_EQ_INT(dlb_view_unsqueeze(&v, 5, &err), DLB_OK); /* at the end */
  CHECK_EQ_INT(v.ndim, 6);
  {
    const int64_t shape[] = {1, 2, 1, 3, 4, 1};
    for (int d = 0; d < 6; d++) CHECK_EQ_INT(v.shape[d], shape[d]);
  }
  CHECK(dlb_array_is_contiguous(&v));
  CHECK_ELEMS(&v, want, 24);
  CHECK_EQ_INT(dlb_view_unsqueeze(&v, -1, &err), DLB_E_INDEX);
  CHECK_EQ_INT(err.code, DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_unsqueeze(&v, 7, &err), DLB_E_INDEX);
  CHECK_EQ_INT(v.ndim, 6);

  /* squeeze one */
  CHECK_EQ_INT(dlb_view_squeeze(&v, 2, &err), DLB_OK);
  CHECK_EQ_INT(v.ndim, 5);
  CHECK_EQ_INT(v.shape[2], 3);
  CHECK_ELEMS(&v, want, 24);
  CHECK_EQ_INT(dlb_view_squeeze(&v, 1, &err), DLB_E_SHAPE); /* extent 2 */
  CHECK_EQ_INT(err.code, DLB_E_SHAPE);
  CHECK_EQ_INT(dlb_view_squeeze(&v, 5, &err), DLB_E_INDEX);
  CHECK_EQ_INT(v.ndim, 5);
  CHECK_EQ_INT(dlb_view_squeeze(&v, 4, &err), DLB_OK); /* the last one */
  CHECK_EQ_INT(v.ndim, 4);
  /* squeeze all */
  CHECK_EQ_INT(dlb_view_unsqueeze(&v, 3, &err), DLB_OK);
  CHECK_EQ_INT(dlb_view_squeeze(&v, -1, &err), DLB_OK);
  CHECK(same_geometry(&v, &A));
  CHECK_EQ_INT(dlb_view_squeeze(&v, -1, &err), DLB_OK); /* nothing to squeeze */
  CHECK(same_geometry(&v, &A));
  dlb_array_release(&v);

  v = view_of(&A); /* unsqueeze a transposed view */
  {
    const int perm[] = {2, 1, 0};
    CHECK_EQ_INT(dlb_view_permute(&v, perm, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_unsqueeze(&v, 1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_unsqueeze(&v, 4, &err), DLB_OK);
    int64_t wt[24];
    int m = 0;
    for (int k = 0; k < 4; k++)
      for (int j = 0; j < 3; j++)
        for (int i = 0; i < 2; i++) wt[m++] = aval(i, j, k);
    CHECK_ELEMS(&v, wt, 24);
    CHECK_EQ_INT(dlb_view_squeeze(&v, -1, &err), DLB_OK);
    CHECK_EQ_INT(v.ndim, 3);
    CHECK_ELEMS(&v, wt, 24);
  }
  dlb_array_release(&v);

  { /* squeeze all of (1,1): 0-D */
    const int64_t shape[] = {1, 1};
    dlb_array s = alloc(DLB_INT16, 2, shape);
    int64_t idx[2] = {0, 0};
    dlb_scalar x = s_int(-5);
    CHECK_EQ_INT(dlb_array_set(&s, idx, &x, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_squeeze(&s, -1, &err), DLB_OK);
    CHECK_EQ_INT(s.ndim, 0);
    const int64_t w[] = {-5};
    CHECK_ELEMS(&s, w, 1);
    /* up to the 32-dim limit */
    for (int d = 0; d < DLB_MAX_NDIM; d++)
      CHECK_EQ_INT(dlb_view_unsqueeze(&s, d % 2 ? s.ndim : 0, &err), DLB_OK);
    CHECK_EQ_INT(s.ndim, DLB_MAX_NDIM);
    CHECK(dlb_array_is_contiguous(&s));
    CHECK_ELEMS(&s, w, 1);
    CHECK_EQ_INT(dlb_view_unsqueeze(&s, 0, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(err.code, DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_view_unsqueeze(&s, DLB_MAX_NDIM, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(s.ndim, DLB_MAX_NDIM);
    CHECK_EQ_INT(dlb_view_squeeze(&s, 17, &err), DLB_OK);
    CHECK_EQ_INT(s.ndim, DLB_MAX_NDIM - 1);
    CHECK_EQ_INT(dlb_view_squeeze(&s, -1, &err), DLB_OK);
    CHECK_EQ_INT(s.ndim, 0);
    CHECK_ELEMS(&s, w, 1);
    dlb_array_release(&s);
  }
  dlb_array_release(&A);
}

static void test_reshape(void) {
  dlb_array A = make_A(), v;
  int64_t flat[24], want[24];
  int n = 0;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) flat[n++] = aval(i, j, k);

  { /* contiguous: every shape of 24 elements */
    static const struct {
      int ndim;
      int64_t shape[4];
    } shapes[] = {{1, {24}},         {2, {6, 4}},    {2, {4, 6}},
                  {2, {2, 12}},      {3, {3, 2, 4}}, {3, {1, 24, 1}},
                  {4, {2, 2, 2, 3}}, {2, {24, 1}},   {4, {1, 1, 1, 24}}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
      v = view_of(&A);
      CHECK_EQ_INT(dlb_view_reshape(&v, shapes[c].ndim, shapes[c].shape, &err), DLB_OK);
      CHECK_EQ_INT(v.ndim, shapes[c].ndim);
      CHECK(dlb_array_is_contiguous(&v));
      CHECK_ELEMS(&v, flat, 24);
      dlb_array_release(&v);
    }
  }

  v = view_of(&A); /* transposed: flattening needs a copy */
  {
    const int perm[] = {2, 1, 0};
    const int64_t s24[] = {24}, s6x4[] = {6, 4}, split[] = {2, 2, 3, 2};
    CHECK_EQ_INT(dlb_view_permute(&v, perm, &err), DLB_OK);
    dlb_array before = v;
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(dlb_view_reshape(&v, 1, s24, &err), DLB_E_COPY_REQUIRED);
    CHECK_EQ_INT(err.code, DLB_E_COPY_REQUIRED);
    CHECK_EQ_INT(dlb_view_reshape(&v, 2, s6x4, &err), DLB_E_COPY_REQUIRED);
    CHECK(same_geometry(&v, &before));
    /* but splitting a dim is a view: (4,3,2) -> (2,2,3,2) */
    CHECK_EQ_INT(dlb_view_reshape(&v, 4, split, &err), DLB_OK);
    n = 0;
    for (int k1 = 0; k1 < 2; k1++)
      for (int k2 = 0; k2 < 2; k2++)
        for (int j = 0; j < 3; j++)
          for (int i = 0; i < 2; i++) want[n++] = aval(i, j, 2 * k1 + k2);
    CHECK_ELEMS(&v, want, n);
  }
  dlb_array_release(&v);

  v = view_of(&A); /* reversed flat view reshaped */
  {
    const int64_t s24[] = {24}, s4x6[] = {4, 6};
    CHECK_EQ_INT(dlb_view_reshape(&v, 1, s24, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_slice(&v, 0, 23, 24, -1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_reshape(&v, 2, s4x6, &err), DLB_OK);
    for (int k = 0; k < 24; k++) want[k] = flat[23 - k];
    CHECK_ELEMS(&v, want, 24);
  }
  dlb_array_release(&v);

  v = view_of(&A); /* the first two of each row of 4: rows no longer merge */
  {
    const int64_t s12[] = {12}, s2x6[] = {2, 6}, s6x2[] = {6, 2};
    CHECK_EQ_INT(dlb_view_slice(&v, 2, 0, 2, 1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_reshape(&v, 1, s12, &err), DLB_E_COPY_REQUIRED);
    CHECK_EQ_INT(dlb_view_reshape(&v, 2, s2x6, &err), DLB_E_COPY_REQUIRED);
    CHECK_EQ_INT(dlb_view_reshape(&v, 2, s6x2, &err), DLB_OK); /* (2,3) merge */
    n = 0;
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        for (int t = 0; t < 2; t++) want[n++] = aval(i, j, t);
    CHECK_ELEMS(&v, want, n);
  }
  dlb_array_release(&v);

  v = view_of(&A); /* every other element: evenly spaced, so it flattens */
  {
    const int64_t s12[] = {12};
    CHECK_EQ_INT(dlb_view_slice(&v, 2, 0, 2, 2, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_reshape(&v, 1, s12, &err), DLB_OK);
    CHECK_EQ_INT(v.strides[0], 2);
    for (int k = 0; k < 12; k++) want[k] = flat[2 * k];
    CHECK_ELEMS(&v, want, 12);
  }
  dlb_array_release(&v);

  v = view_of(&A); /* failures */
  {
    const int64_t s25[] = {5, 5}, neg[] = {-1, 24}, negneg[] = {-2, -12}, zero[] = {0, 24};
    int64_t big[DLB_MAX_NDIM + 1];
    for (int d = 0; d <= DLB_MAX_NDIM; d++) big[d] = 1;
    big[0] = 24;
    CHECK_EQ_INT(dlb_view_reshape(&v, 2, s25, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(err.code, DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_view_reshape(&v, 2, neg, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_view_reshape(&v, 2, negneg, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_view_reshape(&v, 2, zero, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_view_reshape(&v, DLB_MAX_NDIM + 1, big, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_view_reshape(&v, 0, no_dims, &err), DLB_E_SHAPE);
    CHECK(same_geometry(&v, &A));
    CHECK_EQ_INT(dlb_view_reshape(&v, DLB_MAX_NDIM, big, &err), DLB_OK);
    CHECK_ELEMS(&v, flat, 24);
  }
  dlb_array_release(&v);

  { /* 0-D <-> (1,1,1), and size 0 */
    dlb_array s = alloc(DLB_INT64, 0, no_dims);
    const int64_t ones[] = {1, 1, 1}, z[] = {3, 0, 5}, z2[] = {0};
    CHECK_EQ_INT(dlb_view_reshape(&s, 3, ones, &err), DLB_OK);
    CHECK_EQ_INT(s.ndim, 3);
    CHECK_EQ_INT(dlb_view_reshape(&s, 0, no_dims, &err), DLB_OK);
    CHECK_EQ_INT(s.ndim, 0);
    dlb_array_release(&s);
    const int64_t e[] = {0, 4};
    s = alloc(DLB_INT64, 2, e);
    CHECK_EQ_INT(dlb_view_reshape(&s, 3, z, &err), DLB_OK);
    CHECK_EQ_INT(s.numel, 0);
    CHECK_EQ_INT(dlb_array_check_bounds(&s, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_reshape(&s, 1, z2, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_reshape(&s, 1, ones, &err), DLB_E_SHAPE);
    dlb_array_release(&s);
  }
  dlb_array_release(&A);
}

/* ------------------------------------------------------------------------ */
/* Bounds */

static void test_check_bounds(void) {
  dlb_array A = make_A(), v; /* 96 bytes */
  CHECK_EQ_INT(dlb_array_check_bounds(&A, &err), DLB_OK);

  v = view_of(&A); /* the last element as a 0-D view */
  v.ndim = 0;
  v.numel = 1;
  v.offset = 92;
  CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_OK);
  v.offset = 93; /* straddles the end */
  CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
  CHECK_EQ_INT(err.code, DLB_E_SHAPE);
  v.offset = 96;
  CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
  v.offset = SIZE_MAX;
  CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
  dlb_array_release(&v);

  v = view_of(&A); /* strides that run past the end */
  v.strides[2] = 2;
  CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
  v.strides[2] = 1;
  v.offset = 4;
  CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
  v.offset = 0;
  v.shape[0] = 3;
  v.numel = 36;
  CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
  dlb_array_release(&v);

  v = view_of(&A); /* negative strides need an offset */
  {
    const int64_t s24[] = {24};
    CHECK_EQ_INT(dlb_view_reshape(&v, 1, s24, &err), DLB_OK);
    v.strides[0] = -1;
    CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
    v.offset = 23 * 4;
    CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_OK);
    v.offset = 22 * 4;
    CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
    v.offset = 23 * 4;
    v.strides[0] = -2;
    v.shape[0] = 12;
    v.numel = 12;
    CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_OK);
    v.shape[0] = 13;
    v.numel = 13;
    CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
    /* stride 0 reaches one element however long */
    v.strides[0] = 0;
    v.shape[0] = INT64_MAX;
    v.numel = INT64_MAX;
    CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_OK);
    /* strides whose reach overflows, or whose bytes overflow */
    v.offset = 0;
    v.shape[0] = 3;
    v.numel = 3;
    v.strides[0] = INT64_MAX;
    CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
    v.strides[0] = INT64_MIN / 2;
    CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
    v.shape[0] = 2;
    v.numel = 2;
    v.strides[0] = INT64_MAX / 2;
    CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
    v.strides[0] = P(61);
    CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE); /* 2^63 bytes */
    /* size 0 reaches nothing, wherever it points */
    v.shape[0] = 0;
    v.numel = 0;
    v.offset = 1000;
    CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_OK);
  }
  dlb_array_release(&v);
  dlb_array_release(&A);
}

/* An offset next to INT64_MAX: the check must say SHAPE, with no signed
 * overflow on the way (run in a child: UBSan aborts on one). */
static void bounds_huge_offset_child(void) {
  dlb_array A = make_A(), v = view_of(&A);
  v.ndim = 0;
  v.numel = 1;
  v.offset = (size_t)INT64_MAX;
  CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
  v.offset = (size_t)INT64_MAX - 2;
  CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
  v.offset = (size_t)INT64_MAX + 1;
  CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_E_SHAPE);
  dlb_array_release(&v);
  dlb_array_release(&A);
}

static void test_check_bounds_huge_offset(void) { CHECK(run_isolated(bounds_huge_offset_child)); }

/* Extreme indices and dims are INDEX errors, with no signed overflow while
 * the message is formatted (run in a child: UBSan aborts on one). */
static void extreme_index_child(void) {
  dlb_array A = make_A(), v = view_of(&A);
  dlb_scalar x = s_int(1);
  const int64_t hi[3] = {INT64_MAX, 0, 0}, hi2[3] = {0, 0, INT64_MAX};
  CHECK_EQ_INT(dlb_view_select(&v, 0, INT64_MAX, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_array_get(&A, hi, &x, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_array_get(&A, hi2, &x, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_array_set(&A, hi, &x, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_select(&v, INT32_MAX, 0, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_slice(&v, INT32_MAX, 0, 1, 1, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_squeeze(&v, INT32_MAX, &err), DLB_E_INDEX);
  CHECK_EQ_INT(dlb_view_unsqueeze(&v, INT32_MAX, &err), DLB_E_INDEX);
  CHECK(same_geometry(&v, &A));
  dlb_array_release(&v);
  dlb_array_release(&A);
}

static void test_extreme_indices(void) { CHECK(run_isolated(extreme_index_child)); }

/* ------------------------------------------------------------------------ */
/* Copies */

static void test_copy_into(void) {
  dlb_array A = make_A();
  int64_t flat[24], want[24];
  int n = 0;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) flat[n++] = aval(i, j, k);

  { /* into a transposed float64 destination */
    const int64_t shape[] = {4, 3, 2};
    const int perm[] = {2, 1, 0};
    dlb_array D = alloc(DLB_FLOAT64, 3, shape), dt = view_of(&D);
    CHECK_EQ_INT(dlb_view_permute(&dt, perm, &err), DLB_OK); /* (2,3,4) view of (4,3,2) */
    CHECK_EQ_INT(dlb_array_copy_into(&dt, &A, &err), DLB_OK);
    CHECK_ELEMS(&dt, flat, 24);
    n = 0;
    for (int k = 0; k < 4; k++)
      for (int j = 0; j < 3; j++)
        for (int i = 0; i < 2; i++) want[n++] = aval(i, j, k);
    CHECK_ELEMS(&D, want, 24);
    /* and back, from a strided reversed source into a strided int16 destination */
    const int64_t s2[] = {2, 3, 2};
    dlb_array E = alloc(DLB_INT16, 3, s2), src = view_of(&dt);
    CHECK_EQ_INT(dlb_view_slice(&src, 2, 3, 2, -2, &err), DLB_OK); /* k = 3, 1 */
    CHECK_EQ_INT(dlb_array_copy_into(&E, &src, &err), DLB_OK);
    n = 0;
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        for (int t = 0; t < 2; t++) want[n++] = aval(i, j, 3 - 2 * t);
    CHECK_ELEMS(&E, want, n);
    dlb_array_release(&src);
    dlb_array_release(&E);
    dlb_array_release(&dt);
    dlb_array_release(&D);
  }

  { /* casts: float64 -> int16 truncates, int32 -> uint8 wraps, -> bool is != 0 */
    const int64_t s[] = {5};
    dlb_array F = alloc(DLB_FLOAT64, 1, s), I = alloc(DLB_INT16, 1, s);
    const double fv[] = {-1.5, 2.7, -0.0, 300.0, -32768.0};
    CHECK_EQ_INT(dlb_array_write_from(&F, fv, DLB_FLOAT64, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_copy_into(&I, &F, &err), DLB_OK);
    const int64_t wi[] = {-1, 2, 0, 300, -32768};
    CHECK_ELEMS(&I, wi, 5);
    dlb_array U = alloc(DLB_UINT8, 1, s), Bo = alloc(DLB_BOOL, 1, s);
    CHECK_EQ_INT(dlb_array_copy_into(&U, &I, &err), DLB_OK);
    const int64_t wu[] = {255, 2, 0, 44, 0};
    CHECK_ELEMS(&U, wu, 5);
    CHECK_EQ_INT(dlb_array_copy_into(&Bo, &U, &err), DLB_OK);
    const int64_t wb[] = {1, 1, 0, 1, 0};
    CHECK_ELEMS(&Bo, wb, 5);
    /* NaN cannot become an integer */
    const double nan_v[] = {1.0, NAN, 3.0, 4.0, 5.0};
    CHECK_EQ_INT(dlb_array_write_from(&F, nan_v, DLB_FLOAT64, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_copy_into(&I, &F, &err), DLB_E_VALUE);
    CHECK_EQ_INT(err.code, DLB_E_VALUE);
    dlb_array_release(&Bo);
    dlb_array_release(&U);
    dlb_array_release(&I);
    dlb_array_release(&F);
  }

  { /* shape mismatches */
    const int64_t s432[] = {4, 3, 2}, s24[] = {24}, s1234[] = {1, 2, 3, 4}, s134[] = {1, 3, 4};
    dlb_array X = alloc(DLB_INT32, 3, s432), Y = alloc(DLB_INT32, 1, s24),
              Z = alloc(DLB_INT32, 4, s1234), W = alloc(DLB_INT32, 3, s134);
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(dlb_array_copy_into(&X, &A, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(err.code, DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_array_copy_into(&Y, &A, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_array_copy_into(&Z, &A, &err), DLB_E_SHAPE);
    CHECK_EQ_INT(dlb_array_copy_into(&A, &W, &err), DLB_E_SHAPE); /* no broadcasting */
    CHECK_ELEMS(&A, flat, 24);
    dlb_array_release(&W);
    dlb_array_release(&Z);
    dlb_array_release(&Y);
    dlb_array_release(&X);
  }

  { /* read-only destinations, by flag on the array or on the buffer */
    const int64_t s[] = {2, 3, 4};
    dlb_array R = alloc(DLB_INT32, 3, s), r2;
    const int64_t zeros[24] = {0};
    R.readonly = 1;
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(dlb_array_copy_into(&R, &A, &err), DLB_E_READ_ONLY);
    CHECK_EQ_INT(err.code, DLB_E_READ_ONLY);
    CHECK_ELEMS(&R, zeros, 24);
    CHECK_EQ_INT(dlb_array_copy_into(&A, &R, &err), DLB_OK); /* a read-only source is fine */
    CHECK_ELEMS(&A, zeros, 24);
    dlb_array_share(&r2, &R);
    r2.readonly = 0;
    R.buffer->readonly = 1;
    CHECK_EQ_INT(dlb_array_copy_into(&r2, &A, &err), DLB_E_READ_ONLY);
    R.buffer->readonly = 0;
    dlb_array_release(&r2);
    dlb_array_release(&R);
  }
  dlb_array_release(&A);
}

static void test_copy_overlap(void) {
  int64_t want[16];
  { /* a reversed view of itself into itself */
    dlb_array a = make_iota(10), r = view_of(&a);
    CHECK_EQ_INT(dlb_view_slice(&r, 0, 9, 10, -1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_copy_into(&a, &r, &err), DLB_OK);
    for (int k = 0; k < 10; k++) want[k] = 9 - k;
    CHECK_ELEMS(&a, want, 10);
    /* and the reverse into the original again */
    CHECK_EQ_INT(dlb_array_copy_into(&r, &a, &err), DLB_OK);
    CHECK_ELEMS(&r, want, 10);
    for (int k = 0; k < 10; k++) want[k] = k;
    CHECK_ELEMS(&a, want, 10);
    dlb_array_release(&r);
    dlb_array_release(&a);
  }
  { /* shifts by one, both ways: every read happens before any write */
    dlb_array a = make_iota(10), d = view_of(&a), s = view_of(&a);
    CHECK_EQ_INT(dlb_view_slice(&d, 0, 1, 9, 1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_slice(&s, 0, 0, 9, 1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_copy_into(&d, &s, &err), DLB_OK);
    const int64_t w1[] = {0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
    CHECK_ELEMS(&a, w1, 10);
    CHECK_EQ_INT(dlb_array_copy_into(&s, &d, &err), DLB_OK);
    const int64_t w2[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 8};
    CHECK_ELEMS(&a, w2, 10);
    dlb_array_release(&s);
    dlb_array_release(&d);
    dlb_array_release(&a);
  }
  { /* interleaved: odds into evens, reversed */
    dlb_array a = make_iota(10), d = view_of(&a), s = view_of(&a);
    CHECK_EQ_INT(dlb_view_slice(&d, 0, 0, 5, 2, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_slice(&s, 0, 9, 5, -2, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_copy_into(&d, &s, &err), DLB_OK);
    const int64_t w[] = {9, 1, 7, 3, 5, 5, 3, 7, 1, 9};
    CHECK_ELEMS(&a, w, 10);
    dlb_array_release(&s);
    dlb_array_release(&d);
    dlb_array_release(&a);
  }
  { /* a square transposed in place */
    const int64_t sh[] = {3, 3};
    const int perm[] = {1, 0};
    dlb_array b = make_iota(9), t;
    CHECK_EQ_INT(dlb_view_reshape(&b, 2, sh, &err), DLB_OK);
    t = view_of(&b);
    CHECK_EQ_INT(dlb_view_permute(&t, perm, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_copy_into(&b, &t, &err), DLB_OK);
    const int64_t w[] = {0, 3, 6, 1, 4, 7, 2, 5, 8};
    CHECK_ELEMS(&b, w, 9);
    dlb_array_release(&t);
    dlb_array_release(&b);
  }
  { /* the same view: nothing changes; and a broadcast source into itself */
    dlb_array a = make_iota(6), s = view_of(&a);
    CHECK_EQ_INT(dlb_array_copy_into(&a, &a, &err), DLB_OK);
    for (int k = 0; k < 6; k++) want[k] = k;
    CHECK_ELEMS(&a, want, 6);
    const int64_t six[] = {6};
    CHECK_EQ_INT(dlb_view_slice(&s, 0, 4, 1, 1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_expand(&s, 1, six, &err), DLB_OK); /* a[4] six times */
    CHECK_EQ_INT(dlb_array_copy_into(&a, &s, &err), DLB_OK);
    for (int k = 0; k < 6; k++) want[k] = 4;
    CHECK_ELEMS(&a, want, 6);
    dlb_array_release(&s);
    dlb_array_release(&a);
  }
  { /* disjoint parts of one buffer: no temporary needed, same result */
    dlb_array a = make_iota(10), d = view_of(&a), s = view_of(&a);
    CHECK_EQ_INT(dlb_view_slice(&d, 0, 0, 5, 1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_slice(&s, 0, 9, 5, -1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_copy_into(&d, &s, &err), DLB_OK);
    const int64_t w[] = {9, 8, 7, 6, 5, 5, 6, 7, 8, 9};
    CHECK_ELEMS(&a, w, 10);
    dlb_array_release(&s);
    dlb_array_release(&d);
    dlb_array_release(&a);
  }
}

/* Random strided views of one buffer copied into each other (overlapping
 * or not) and into other buffers with casts, against brute force. */

/* A random in-bounds view of base (1-D, n elements) with the given shape;
 * 0 if none fits. distinct: no two elements may share memory. */
static int random_view(dlb_array *v, const dlb_array *base, int ndim, const int64_t *shape,
                       int distinct) {
  int64_t n = base->shape[0];
  for (int attempt = 0; attempt < 50; attempt++) {
    int64_t lo = 0, hi = 0, off;
    dlb_array_share(v, base);
    v->ndim = ndim;
    v->numel = 1;
    for (int d = 0; d < ndim; d++) {
      v->shape[d] = shape[d];
      v->strides[d] = rnd(11) - 5;
      v->numel *= shape[d];
      if (shape[d] > 1 && v->strides[d] > 0) hi += (shape[d] - 1) * v->strides[d];
      if (shape[d] > 1 && v->strides[d] < 0) lo += (shape[d] - 1) * v->strides[d];
    }
    if (hi - lo < n) {
      off = -lo + rnd(n - (hi - lo));
      v->offset = (size_t)off * dlb_array_itemsize(v);
      int ok = 1;
      if (distinct) {
        char *seen = calloc((size_t)n, 1);
        int64_t idx[DLB_MAX_NDIM] = {0};
        for (int64_t k = 0; k < v->numel && ok; k++) {
          int64_t e = off;
          for (int d = 0; d < ndim; d++) e += idx[d] * v->strides[d];
          ok = !seen[e]++;
          next_index(ndim, v->shape, idx);
        }
        free(seen);
      }
      if (ok) return 1;
    }
    dlb_array_release(v);
  }
  return 0;
}

static void test_copy_random(void) {
  const int64_t n = 64;
  int done = 0, bad = 0;
  for (int iter = 0; iter < 3000 && !bad; iter++) {
    dlb_array base = make_iota(n), other, src, dst;
    int64_t shape[3], snap[64], idx[DLB_MAX_NDIM] = {0};
    int ndim = 1 + (int)rnd(3);
    int same_buffer = iter % 3 != 0;
    for (int d = 0; d < ndim; d++) shape[d] = 1 + rnd(4);
    if (!random_view(&src, &base, ndim, shape, 0)) {
      dlb_array_release(&base);
      continue;
    }
    if (same_buffer) {
      other = view_of(&base);
    } else {
      const dlb_dtype types[] = {DLB_FLOAT64, DLB_INT16, DLB_INT64, DLB_FLOAT32};
      dlb_array tmp = make_iota(n);
      CHECK_EQ_INT(dlb_array_clone(&other, &tmp, types[rnd(4)], &err), DLB_OK);
      dlb_array_release(&tmp);
    }
    if (!random_view(&dst, &other, ndim, shape, 1)) {
      dlb_array_release(&src);
      dlb_array_release(&other);
      dlb_array_release(&base);
      continue;
    }
    /* expected: dst's elements get src's old values, the rest of dst's
     * buffer keeps its old values */
    int64_t before[64], after[64], want[64];
    CHECK_EQ_INT(dlb_array_read_into(&other, before, DLB_INT64, &err), DLB_OK);
    for (int64_t k = 0; k < src.numel; k++) {
      dlb_scalar x;
      CHECK_EQ_INT(dlb_array_get(&src, idx, &x, &err), DLB_OK);
      snap[k] = scalar_int(&x);
      next_index(ndim, shape, idx);
    }
    memcpy(want, before, sizeof want);
    memset(idx, 0, sizeof idx);
    for (int64_t k = 0; k < dst.numel; k++) {
      int64_t e = (int64_t)(dst.offset / dlb_array_itemsize(&dst));
      for (int d = 0; d < ndim; d++) e += idx[d] * dst.strides[d];
      want[e] = snap[k];
      next_index(ndim, shape, idx);
    }
    CHECK_EQ_INT(dlb_array_copy_into(&dst, &src, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_read_into(&other, after, DLB_INT64, &err), DLB_OK);
    if (memcmp(after, want, sizeof want) != 0) {
      fprintf(stderr, "  copy_into: wrong result, %s buffer, ndim %d, src strides",
              same_buffer ? "same" : "other", ndim);
      for (int d = 0; d < ndim; d++) fprintf(stderr, " %lld", (long long)src.strides[d]);
      fprintf(stderr, ", dst strides");
      for (int d = 0; d < ndim; d++) fprintf(stderr, " %lld", (long long)dst.strides[d]);
      fprintf(stderr, "\n");
      bad = 1;
    }
    done++;
    dlb_array_release(&dst);
    dlb_array_release(&src);
    dlb_array_release(&other);
    dlb_array_release(&base);
  }
  CHECK(!bad);
  CHECK(done > 1000);
}

/* Transposed copies (the tiled kernels) of every element size, over sizes
 * around the block and tile edges, with a batch dim, an offset source, and
 * the source reversed along either dim (the blocked path takes a reversed j,
 * the element-by-element one a reversed i): every destination byte is the
 * source byte it should be. */
static void test_copy_transposed(void) {
  static const dlb_dtype types[] = {DLB_UINT8, DLB_INT16, DLB_FLOAT32, DLB_FLOAT64, DLB_COMPLEX128};
  static const int64_t sizes[] = {1, 7, 8, 15, 16, 17, 33, 127, 128, 129, 200};
  const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
  int bad = 0, done = 0;
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    for (int a = 0; a < nsizes; a++) {
      for (int b = 0; b < nsizes; b++) {
        const int64_t n0 = sizes[a], n1 = sizes[b], batch = (a + b) % 3 == 0 ? 2 : 1;
        const int reverse = (a + 2 * b + (int)t) % 3; /* 0: none, 1: along j, 2: along i */
        /* src: (batch, n1 + 1, n0), whose [:, 1:, :] transposed is (batch, n0, n1) */
        const int64_t sshape[] = {batch, n1 + 1, n0}, dshape[] = {batch, n0, n1};
        const int perm[] = {0, 2, 1};
        dlb_array src = alloc(types[t], 3, sshape), dst = alloc(types[t], 3, dshape);
        dlb_array v = view_of(&src);
        const size_t item = dlb_array_itemsize(&src);
        unsigned char *s = (unsigned char *)dlb_array_host_data(&src);
        unsigned char *d = (unsigned char *)dlb_array_host_data(&dst);
        for (int64_t k = 0; k < src.numel * (int64_t)item; k++)
          s[k] = (unsigned char)(k * 7 + k / 251);
        CHECK_EQ_INT(dlb_view_slice(&v, 1, 1, n1, 1, &err), DLB_OK);
        CHECK_EQ_INT(dlb_view_permute(&v, perm, &err), DLB_OK);
        if (reverse == 1) CHECK_EQ_INT(dlb_view_slice(&v, 2, n1 - 1, n1, -1, &err), DLB_OK);
        if (reverse == 2) CHECK_EQ_INT(dlb_view_slice(&v, 1, n0 - 1, n0, -1, &err), DLB_OK);
        CHECK_EQ_INT(dlb_array_copy_into(&dst, &v, &err), DLB_OK);
        for (int64_t p = 0; p < batch; p++)
          for (int64_t i = 0; i < n0; i++)
            for (int64_t j = 0; j < n1; j++) {
              const int64_t si = reverse == 2 ? n0 - 1 - i : i, sj = reverse == 1 ? n1 - 1 - j : j;
              const unsigned char *want = s + (((p * (n1 + 1) + sj + 1) * n0) + si) * (int64_t)item;
              const unsigned char *got = d + (((p * n0 + i) * n1) + j) * (int64_t)item;
              if (memcmp(got, want, item) != 0 && bad++ < 5)
                fprintf(stderr,
                        "  transposed copy: item %zu, %lld x %lld, reverse %d, element (%lld, "
                        "%lld, %lld)\n",
                        item, (long long)n0, (long long)n1, reverse, (long long)p, (long long)i,
                        (long long)j);
            }
        done++;
        dlb_array_release(&v);
        dlb_array_release(&dst);
        dlb_array_release(&src);
      }
    }
  }
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(done, 5 * 11 * 11);
}

static void test_fill(void) {
  { /* a reversed strided view: only its elements change */
    dlb_array a = make_iota(10), v = view_of(&a);
    dlb_scalar x = s_int(77);
    CHECK_EQ_INT(dlb_view_slice(&v, 0, 8, 4, -2, &err), DLB_OK); /* 8, 6, 4, 2 */
    CHECK_EQ_INT(dlb_array_fill(&v, &x, &err), DLB_OK);
    const int64_t w[] = {0, 1, 77, 3, 77, 5, 77, 7, 77, 9};
    CHECK_ELEMS(&a, w, 10);
    dlb_array_release(&v);
    dlb_array_release(&a);
  }
  { /* a transposed float32 view, with a float */
    const int64_t sh[] = {3, 4};
    const int perm[] = {1, 0};
    dlb_array f = alloc(DLB_FLOAT32, 2, sh), t = view_of(&f), col = view_of(&f);
    dlb_scalar x = s_float(2.5);
    CHECK_EQ_INT(dlb_view_permute(&t, perm, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_fill(&t, &x, &err), DLB_OK);
    float out[12];
    CHECK_EQ_INT(dlb_array_read_into(&f, out, DLB_FLOAT32, &err), DLB_OK);
    int ok = 1;
    for (int k = 0; k < 12; k++) ok &= out[k] == 2.5f;
    CHECK(ok);
    /* one column */
    x = s_int(-3);
    CHECK_EQ_INT(dlb_view_select(&col, 1, 2, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_fill(&col, &x, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_read_into(&f, out, DLB_FLOAT32, &err), DLB_OK);
    ok = 1;
    for (int k = 0; k < 12; k++) ok &= out[k] == (k % 4 == 2 ? -3.0f : 2.5f);
    CHECK(ok);
    dlb_array_release(&col);
    dlb_array_release(&t);
    dlb_array_release(&f);
  }
  { /* values the dtype cannot hold: VALUE, nothing written */
    const int64_t sh[] = {4};
    dlb_array i8 = alloc(DLB_INT8, 1, sh), i32 = alloc(DLB_INT32, 1, sh),
              b = alloc(DLB_BOOL, 1, sh), u8 = alloc(DLB_UINT8, 1, sh),
              f32 = alloc(DLB_FLOAT32, 1, sh);
    const int64_t zeros[4] = {0};
    dlb_scalar x = s_int(300);
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(dlb_array_fill(&i8, &x, &err), DLB_E_VALUE);
    CHECK_EQ_INT(err.code, DLB_E_VALUE);
    CHECK_ELEMS(&i8, zeros, 4);
    x = s_float(1.5);
    CHECK_EQ_INT(dlb_array_fill(&i32, &x, &err), DLB_E_VALUE);
    CHECK_ELEMS(&i32, zeros, 4);
    x = s_int(2);
    CHECK_EQ_INT(dlb_array_fill(&b, &x, &err), DLB_E_VALUE);
    x = s_int(-1);
    CHECK_EQ_INT(dlb_array_fill(&u8, &x, &err), DLB_E_VALUE);
    CHECK_ELEMS(&u8, zeros, 4);
    x.kind = DLB_SCALAR_COMPLEX;
    x.v.c.re = 1.0;
    x.v.c.im = 1.0;
    CHECK_EQ_INT(dlb_array_fill(&f32, &x, &err), DLB_E_VALUE);
    x = s_float(1e300);
    CHECK_EQ_INT(dlb_array_fill(&f32, &x, &err), DLB_E_VALUE);
    CHECK_ELEMS(&f32, zeros, 4);
    /* read-only */
    x = s_int(1);
    i32.readonly = 1;
    CHECK_EQ_INT(dlb_array_fill(&i32, &x, &err), DLB_E_READ_ONLY);
    CHECK_EQ_INT(err.code, DLB_E_READ_ONLY);
    i32.readonly = 0;
    CHECK_ELEMS(&i32, zeros, 4);
    /* a size-0 view and a broadcast view */
    dlb_array e = view_of(&i32), one = view_of(&i32);
    CHECK_EQ_INT(dlb_view_slice(&e, 0, 0, 0, 1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_fill(&e, &x, &err), DLB_OK);
    CHECK_ELEMS(&i32, zeros, 4);
    const int64_t five[] = {2, 5};
    CHECK_EQ_INT(dlb_view_slice(&one, 0, 3, 1, 1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_expand(&one, 2, five, &err), DLB_OK);
    x = s_int(9);
    CHECK_EQ_INT(dlb_array_fill(&one, &x, &err), DLB_OK);
    const int64_t w[] = {0, 0, 0, 9};
    CHECK_ELEMS(&i32, w, 4);
    dlb_array_release(&one);
    dlb_array_release(&e);
    dlb_array_release(&f32);
    dlb_array_release(&u8);
    dlb_array_release(&b);
    dlb_array_release(&i32);
    dlb_array_release(&i8);
  }
}

static void test_clone(void) {
  dlb_array A = make_A(), t = view_of(&A), c;
  const int perm[] = {2, 0, 1};
  int64_t want[24];
  int n = 0;
  CHECK_EQ_INT(dlb_view_permute(&t, perm, &err), DLB_OK);
  CHECK_EQ_INT(dlb_view_slice(&t, 0, 3, 4, -1, &err), DLB_OK);
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++) want[n++] = aval(i, j, 3 - k);
  t.readonly = 1;
  CHECK_EQ_INT(dlb_array_clone(&c, &t, DLB_FLOAT64, &err), DLB_OK);
  CHECK(c.buffer != A.buffer);
  CHECK_EQ_INT(atomic_load(&c.buffer->refs), 1);
  CHECK_EQ_INT(c.dtype, DLB_FLOAT64);
  CHECK_EQ_INT(c.readonly, 0);
  CHECK_EQ_INT(c.offset, 0);
  CHECK_EQ_INT(c.ndim, 3);
  CHECK(dlb_array_is_contiguous(&c));
  CHECK_EQ_INT(c.buffer->nbytes, 24 * 8);
  CHECK_ELEMS(&c, want, 24);
  { /* independent of the source */
    int64_t idx[] = {0, 0, 0};
    dlb_scalar x = s_int(-1);
    CHECK_EQ_INT(dlb_array_set(&c, idx, &x, &err), DLB_OK);
    CHECK_ELEMS(&t, want, 24);
  }
  dlb_array_release(&c);
  CHECK_EQ_INT(dlb_array_clone(&c, &t, DLB_INT32, &err), DLB_OK); /* same dtype */
  CHECK_ELEMS(&c, want, 24);
  dlb_array_release(&c);
  { /* a cast that fails: nothing is left behind */
    const int64_t s[] = {2};
    const double v[] = {1.0, INFINITY};
    dlb_array f = alloc(DLB_FLOAT64, 1, s);
    CHECK_EQ_INT(dlb_array_write_from(&f, v, DLB_FLOAT64, &err), DLB_OK);
    memset(&c, 0xff, sizeof c);
    CHECK_EQ_INT(dlb_array_clone(&c, &f, DLB_INT64, &err), DLB_E_VALUE);
    CHECK(c.buffer == NULL);
    dlb_array_release(&f);
  }
  dlb_array_release(&t);
  dlb_array_release(&A);
}

static void test_read_write(void) {
  dlb_array A = make_A(), v = view_of(&A);
  const int perm[] = {1, 2, 0};
  int64_t want[24];
  int n = 0;
  CHECK_EQ_INT(dlb_view_permute(&v, perm, &err), DLB_OK);      /* (3,4,2) */
  CHECK_EQ_INT(dlb_view_slice(&v, 1, 3, 2, -3, &err), DLB_OK); /* k = 3, 0 */
  for (int j = 0; j < 3; j++)
    for (int t = 0; t < 2; t++)
      for (int i = 0; i < 2; i++) want[n++] = aval(i, j, 3 - 3 * t);

  { /* read with casts */
    double d[12];
    int8_t b[12];
    uint16_t h[12];
    CHECK_EQ_INT(dlb_array_read_into(&v, d, DLB_FLOAT64, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_read_into(&v, b, DLB_INT8, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_read_into(&v, h, DLB_FLOAT16, &err), DLB_OK);
    int ok = 1;
    for (int k = 0; k < 12; k++)
      ok &= d[k] == (double)want[k] && b[k] == (int8_t)want[k] &&
            dlb_float16_to_double(h[k]) == (double)want[k];
    CHECK(ok);
  }
  { /* read a broadcast view */
    dlb_array e = view_of(&A);
    const int64_t sh[] = {2, 2, 3, 4};
    int32_t out[48];
    CHECK_EQ_INT(dlb_view_expand(&e, 4, sh, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_read_into(&e, out, DLB_INT32, &err), DLB_OK);
    int ok = 1;
    for (int k = 0; k < 48; k++) ok &= out[k] == (int32_t)aval((k % 24) / 12, (k % 12) / 4, k % 4);
    CHECK(ok);
    dlb_array_release(&e);
  }
  { /* write into the strided view from doubles; the rest of A is untouched */
    double src[12];
    int64_t base[24];
    for (int k = 0; k < 12; k++) src[k] = 1000.0 + k;
    CHECK_EQ_INT(dlb_array_write_from(&v, src, DLB_FLOAT64, &err), DLB_OK);
    n = 0;
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 4; k++) base[n++] = aval(i, j, k);
    /* v[j][t][i] is A[i][j][3-3t] and came from src[j*4 + t*2 + i] */
    for (int j = 0; j < 3; j++)
      for (int t = 0; t < 2; t++)
        for (int i = 0; i < 2; i++) base[i * 12 + j * 4 + (3 - 3 * t)] = 1000 + j * 4 + t * 2 + i;
    CHECK_ELEMS(&A, base, 24);
    for (int k = 0; k < 12; k++) want[k] = 1000 + k;
    CHECK_ELEMS(&v, want, 12);
    /* from int8 and from bool */
    int8_t s8[12];
    for (int k = 0; k < 12; k++) s8[k] = (int8_t)(-k);
    CHECK_EQ_INT(dlb_array_write_from(&v, s8, DLB_INT8, &err), DLB_OK);
    for (int k = 0; k < 12; k++) want[k] = -k;
    CHECK_ELEMS(&v, want, 12);
    uint8_t sb[12];
    for (int k = 0; k < 12; k++) sb[k] = (uint8_t)(k % 3 == 0);
    CHECK_EQ_INT(dlb_array_write_from(&v, sb, DLB_BOOL, &err), DLB_OK);
    for (int k = 0; k < 12; k++) want[k] = k % 3 == 0;
    CHECK_ELEMS(&v, want, 12);
    /* a value no integer holds */
    src[5] = NAN;
    CHECK_EQ_INT(dlb_array_write_from(&v, src, DLB_FLOAT64, &err), DLB_E_VALUE);
    CHECK_EQ_INT(err.code, DLB_E_VALUE);
    /* read-only */
    v.readonly = 1;
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(dlb_array_write_from(&v, s8, DLB_INT8, &err), DLB_E_READ_ONLY);
    CHECK_EQ_INT(err.code, DLB_E_READ_ONLY);
    v.readonly = 0;
  }
  dlb_array_release(&v);
  dlb_array_release(&A);
}

static void test_get_set(void) {
  dlb_array A = make_A(), v = view_of(&A);
  dlb_scalar x;
  int64_t idx[3] = {1, 2, 3};
  CHECK_EQ_INT(dlb_array_get(&A, idx, &x, &err), DLB_OK);
  CHECK_EQ_INT(x.kind, DLB_SCALAR_INT);
  CHECK_EQ_INT(x.v.i, 123);
  { /* out of range in each dim, either side */
    const int64_t bad[][3] = {{2, 0, 0}, {-1, 0, 0}, {0, 3, 0},         {0, -1, 0},
                              {0, 0, 4}, {0, 0, -1}, {INT64_MIN, 0, 0}, {0, 0, INT64_MIN}};
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
      memset(&err, 0, sizeof err);
      CHECK_EQ_INT(dlb_array_get(&A, bad[c], &x, &err), DLB_E_INDEX);
      CHECK_EQ_INT(err.code, DLB_E_INDEX);
      x = s_int(5);
      CHECK_EQ_INT(dlb_array_set(&A, bad[c], &x, &err), DLB_E_INDEX);
    }
  }
  { /* set through a view writes the shared buffer */
    const int perm[] = {2, 1, 0};
    int64_t vi[3] = {3, 2, 1};
    CHECK_EQ_INT(dlb_view_permute(&v, perm, &err), DLB_OK);
    x = s_int(-42);
    CHECK_EQ_INT(dlb_array_set(&v, vi, &x, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_get(&A, idx, &x, &err), DLB_OK);
    CHECK_EQ_INT(x.v.i, -42);
    /* strict stores */
    x = s_float(0.5);
    CHECK_EQ_INT(dlb_array_set(&v, vi, &x, &err), DLB_E_VALUE);
    x = s_int(INT64_C(1) << 40);
    CHECK_EQ_INT(dlb_array_set(&v, vi, &x, &err), DLB_E_VALUE);
    CHECK_EQ_INT(dlb_array_get(&A, idx, &x, &err), DLB_OK);
    CHECK_EQ_INT(x.v.i, -42);
    x = s_float(7.0);
    CHECK_EQ_INT(dlb_array_set(&v, vi, &x, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_get(&A, idx, &x, &err), DLB_OK);
    CHECK_EQ_INT(x.v.i, 7);
    /* read-only */
    v.readonly = 1;
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(dlb_array_set(&v, vi, &x, &err), DLB_E_READ_ONLY);
    CHECK_EQ_INT(err.code, DLB_E_READ_ONLY);
    CHECK_EQ_INT(dlb_array_get(&v, vi, &x, &err), DLB_OK); /* reads are fine */
  }
  { /* uint64 above INT64_MAX loads as UINT */
    const int64_t s[] = {1};
    dlb_array u = alloc(DLB_UINT64, 1, s);
    int64_t i0[] = {0};
    x.kind = DLB_SCALAR_UINT;
    x.v.u = UINT64_MAX;
    CHECK_EQ_INT(dlb_array_set(&u, i0, &x, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_get(&u, i0, &x, &err), DLB_OK);
    CHECK_EQ_INT(x.kind, DLB_SCALAR_UINT);
    CHECK(x.v.u == UINT64_MAX);
    dlb_array_release(&u);
  }
  dlb_array_release(&v);
  dlb_array_release(&A);
}

int main(void) {
  if (!cpu_open()) return 1;
  test_allocate();
  test_share_release();
  test_select();
  test_slice();
  test_permute();
  test_expand();
  test_squeeze_unsqueeze();
  test_reshape();
  test_check_bounds();
  test_check_bounds_huge_offset();
  test_extreme_indices();
  test_copy_into();
  test_copy_overlap();
  test_copy_random();
  test_copy_transposed();
  test_fill();
  test_clone();
  test_read_write();
  test_get_set();
  cpu_close(); /* every buffer was freed */
  return check_done("test_array");
}
