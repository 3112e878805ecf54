/* test_mask.c -- boolean masks (a[mask], a[mask] = v), argwhere and
 * bincount on the host's kernels (backends/cpu/select.c, scan.c) against
 * plain element-by-element references.
 *
 * The mask kernel reads a mask 64 bytes at a time and picks by the bits
 * of each word, one by one where few are true and with no branch where
 * many are; argwhere lists positions a chunk (4096) at a time; bincount
 * counts pieces of 65536 elements into four side-by-side counts when the
 * bins are few (1024 or fewer). So: masks of lengths around 64, 4096 and
 * past 65536, true values on the edges of the words and in the last
 * element, sparse, dense and all-true masks, bytes other than 1 for true,
 * strided, reversed and expanded (stride 0) masks, masks of the first dims
 * picking blocks (contiguous or not), every element size; elements of
 * every dtype for argwhere (-0 is zero, NaN is not); every integer dtype
 * for bincount, strided, with few and many bins and a negative element
 * anywhere. Then the looks at the interrupt of long masks, argwhere and
 * bincount (work.h's test hook), as test_work_looks.c checks other long
 * kernels. A seed other than the default: MASK_SEED=n. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#define FIXTURES_CPU
#include <math.h>
#include "compute/scan.h"
#include "compute/select.h"
#include "core/array.h"
#include "core/backend.h"
#include "core/budget.h"
#include "core/copy.h"
#include "core/dtype.h"
#include "core/work.h"
#include "fixtures.h"

/* --- elements ------------------------------------------------------------ */

static void unravel(int64_t k, int ndim, const int64_t *shape, int64_t *index) {
  for (int d = ndim - 1; d >= 0; d--) {
    index[d] = shape[d] ? k % shape[d] : 0;
    k = shape[d] ? k / shape[d] : 0;
  }
}

/* The host address of a's element at index (its first ndim entries). */
static char *at(const dlb_array *a, const int64_t *index) {
  char *p = dlb_array_host_data(a);
  for (int d = 0; d < a->ndim; d++) p += index[d] * a->strides[d] * (int64_t)dlb_array_itemsize(a);
  return p;
}

/* Element k (row-major) of a contiguous a gets bytes that tell it from
 * every other (the low bytes of k * 2654435761 + salt, never NaN: the
 * 16-byte elements are two doubles). */
static void fill_distinct(dlb_array *a, uint64_t salt) {
  size_t item = dlb_array_itemsize(a);
  char *p = dlb_array_host_data(a);
  for (int64_t k = 0; k < a->numel; k++) {
    uint64_t v = (uint64_t)k * 2654435761u + salt;
    if (item == 16) {
      double two[2] = {(double)k + (double)salt, -(double)k};
      memcpy(p + (size_t)k * 16, two, 16);
    } else {
      memcpy(p + (size_t)k * item, &v, item);
    }
  }
}

/* The dtype of element size `size` the mask tests use (any: they compare
 * bytes). */
static dlb_dtype of_size(int size) {
  switch (size) {
    case 1: return DLB_UINT8;
    case 2: return DLB_INT16;
    case 4: return DLB_UINT32;
    case 8: return DLB_INT64;
    default: return DLB_COMPLEX128;
  }
}

/* --- masks --------------------------------------------------------------- */

typedef enum { NONE, ALL, SPARSE, EDGES, LAST, HALF, MOST, PATTERNS } pattern;
static const char *pattern_names[] = {"none", "all", "sparse", "edges", "last", "half", "most"};

/* A mask byte: 0, or true as 1 mostly, sometimes another nonzero byte. */
static uint8_t truth(int on) {
  static const uint8_t others[] = {2, 0x80, 0xFF, 0x7F};
  if (!on) return 0;
  return rnd(8) ? 1 : others[rnd(4)];
}

static int on_at(pattern p, int64_t i, int64_t n) {
  switch (p) {
    case NONE: return 0;
    case ALL: return 1;
    case SPARSE: return rnd(200) == 0;
    case EDGES: return i % 64 == 0 || i % 64 == 63 || i == n - 1 || i % 4096 == 4095;
    case LAST: return i == n - 1;
    case HALF: return rnd(2) == 0;
    default: return rnd(10) != 0;
  }
}

/* A contiguous bool array of the given shape drawn from p. */
static dlb_array mask_of(pattern p, int ndim, const int64_t *shape) {
  dlb_array m = alloc(DLB_BOOL, ndim, shape);
  uint8_t *b = (uint8_t *)dlb_array_host_data(&m);
  for (int64_t i = 0; i < m.numel; i++) b[i] = truth(on_at(p, i, m.numel));
  return m;
}

/* Checks a[mask], a[mask] = values (one per pick) and a[mask] = one value
 * against the references; what names the case in messages. */
static void check_mask(const char *what, const dlb_array *a, const dlb_array *mask) {
  size_t item = dlb_array_itemsize(a);
  int64_t index[DLB_MAX_NDIM], picks = 0, count = 0, j = 0;
  dlb_array out = {0}, copy = {0}, values, one;
  int bad = 0;
  dlb_status st;
  for (int64_t k = 0; k < a->numel; k++) {
    unravel(k, a->ndim, a->shape, index);
    picks += *at(mask, index) != 0;
  }
  /* read */
  st = dlb_mask_select(a, mask, &out, cpu, &err);
  CHECK_EQ_INT(st, DLB_OK);
  if (st != DLB_OK) {
    fprintf(stderr, "%s: %s\n", what, err.message);
    return;
  }
  CHECK_EQ_INT(out.numel, picks);
  for (int64_t k = 0; k < a->numel && out.numel == picks; k++) {
    unravel(k, a->ndim, a->shape, index);
    if (!*at(mask, index)) continue;
    if (memcmp(dlb_array_host_data(&out) + j * (int64_t)item, at(a, index), item)) bad++;
    j++;
  }
  if (bad) fprintf(stderr, "%s: a[mask] has %d elements wrong\n", what, bad);
  CHECK_EQ_INT(bad, 0);
  /* write one value per pick */
  CHECK_EQ_INT(dlb_array_clone(&copy, a, a->dtype, &err), DLB_OK);
  values = alloc(a->dtype, out.ndim, out.shape);
  fill_distinct(&values, 77);
  CHECK_EQ_INT(dlb_mask_assign(&copy, mask, &values, cpu, &err), DLB_OK);
  bad = 0;
  j = 0;
  for (int64_t k = 0; k < a->numel; k++) {
    unravel(k, a->ndim, a->shape, index);
    if (*at(mask, index)) {
      count++;
      if (memcmp(at(&copy, index), dlb_array_host_data(&values) + j++ * (int64_t)item, item)) bad++;
    } else if (memcmp(at(&copy, index), at(a, index), item)) {
      bad++;
    }
  }
  if (bad) fprintf(stderr, "%s: a[mask] = values left %d elements wrong\n", what, bad);
  CHECK_EQ_INT(bad, 0);
  /* write one value for all */
  one = alloc(a->dtype, 1, &(int64_t){1});
  fill_distinct(&one, 991);
  CHECK_EQ_INT(dlb_mask_assign(&copy, mask, &one, cpu, &err), DLB_OK);
  bad = 0;
  j = 0;
  for (int64_t k = 0; k < a->numel; k++) {
    unravel(k, a->ndim, a->shape, index);
    if (*at(mask, index)) {
      if (memcmp(at(&copy, index), dlb_array_host_data(&one), item)) bad++;
    } else if (memcmp(at(&copy, index), at(a, index), item)) {
      bad++;
    }
  }
  if (bad) fprintf(stderr, "%s: a[mask] = v left %d elements wrong\n", what, bad);
  CHECK_EQ_INT(bad, 0);
  dlb_array_release(&one);
  dlb_array_release(&values);
  dlb_array_release(&copy);
  dlb_array_release(&out);
}

/* 1-D masks of every length near the kernels' edges, every pattern, every
 * element size; the mask's bytes other than 1 count as true. */
static void test_lengths(void) {
  const int64_t lengths[] = {1, 2, 63, 64, 65, 127, 128, 129, 200, 4095, 4096, 4097, 70001};
  const int sizes[] = {1, 2, 4, 8, 16};
  char what[160];
  for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
    for (int p = 0; p < PATTERNS; p++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int64_t n = lengths[l];
        dlb_array a = alloc(of_size(sizes[s]), 1, &n), m = mask_of((pattern)p, 1, &n);
        fill_distinct(&a, 5);
        snprintf(what, sizeof what, "1-D, %lld elements of %d bytes, %s", (long long)n, sizes[s],
                 pattern_names[p]);
        check_mask(what, &a, &m);
        dlb_array_release(&m);
        dlb_array_release(&a);
      }
}

/* Masks that are views: every other element of a longer mask, reversed,
 * one element expanded (all or nothing), and a column expanded along the
 * rows of a 2-D array (the mask's own stride 0). */
static void test_mask_views(void) {
  const int64_t lengths[] = {1, 64, 65, 4097, 9000};
  char what[160];
  for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
    for (int p = 0; p < PATTERNS; p++) {
      int64_t n = lengths[l], twice = 2 * n, rc[2] = {n, 5};
      dlb_array a = alloc(DLB_FLOAT32, 1, &n), wide = mask_of((pattern)p, 1, &twice);
      dlb_array every_other = view_of(&wide), reversed, single, expanded, col, cols, a2;
      fill_distinct(&a, 1);
      CHECK_EQ_INT(dlb_view_slice(&every_other, 0, 1, n, 2, &err), DLB_OK);
      snprintf(what, sizeof what, "every other element of a mask, %lld, %s", (long long)n,
               pattern_names[p]);
      check_mask(what, &a, &every_other);
      reversed = view_of(&wide);
      CHECK_EQ_INT(dlb_view_slice(&reversed, 0, twice - 1, n, -1, &err), DLB_OK);
      snprintf(what, sizeof what, "a reversed mask, %lld, %s", (long long)n, pattern_names[p]);
      check_mask(what, &a, &reversed);
      single = view_of(&wide);
      CHECK_EQ_INT(dlb_view_slice(&single, 0, twice - 1, 1, 1, &err), DLB_OK);
      expanded = view_of(&single);
      CHECK_EQ_INT(dlb_view_expand(&expanded, 1, &n, &err), DLB_OK);
      snprintf(what, sizeof what, "one mask element expanded, %lld, %s", (long long)n,
               pattern_names[p]);
      check_mask(what, &a, &expanded);
      /* a (n, 1) column expanded to (n, 5) over a (n, 5) array */
      col = view_of(&every_other);
      CHECK_EQ_INT(dlb_view_unsqueeze(&col, 1, &err), DLB_OK);
      cols = view_of(&col);
      CHECK_EQ_INT(dlb_view_expand(&cols, 2, rc, &err), DLB_OK);
      a2 = alloc(DLB_INT16, 2, rc);
      fill_distinct(&a2, 3);
      snprintf(what, sizeof what, "a column expanded over rows, %lld, %s", (long long)n,
               pattern_names[p]);
      check_mask(what, &a2, &cols);
      dlb_array_release(&a2);
      dlb_array_release(&cols);
      dlb_array_release(&col);
      dlb_array_release(&expanded);
      dlb_array_release(&single);
      dlb_array_release(&reversed);
      dlb_array_release(&every_other);
      dlb_array_release(&wide);
      dlb_array_release(&a);
    }
}

/* Masks of the first dims: each pick a block of the dims after them (a run
 * of contiguous elements, or not one: a transposed array), 2-D masks over
 * 2-D and 3-D arrays (the dims they share merged), and empty arrays. */
static void test_blocks(void) {
  const int sizes[] = {1, 2, 4, 8, 16};
  char what[160];
  for (int p = 0; p < PATTERNS; p++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      dlb_dtype t = of_size(sizes[s]);
      int64_t n = 1000, n3[2] = {n, 3}, n25[3] = {n, 2, 5}, rc[2] = {37, 70}, rc3[3] = {37, 70, 3};
      int64_t tn[2] = {3, n};
      int perm[2] = {1, 0};
      dlb_array m = mask_of((pattern)p, 1, &n), m2 = mask_of((pattern)p, 2, rc);
      dlb_array a3 = alloc(t, 2, n3), a25 = alloc(t, 3, n25), tall = alloc(t, 2, tn), at2;
      dlb_array b2 = alloc(t, 2, rc), b3 = alloc(t, 3, rc3), sliced;
      fill_distinct(&a3, 11);
      fill_distinct(&a25, 12);
      fill_distinct(&tall, 13);
      fill_distinct(&b2, 14);
      fill_distinct(&b3, 15);
      snprintf(what, sizeof what, "(n) mask over (n, 3), %d bytes, %s", sizes[s], pattern_names[p]);
      check_mask(what, &a3, &m);
      snprintf(what, sizeof what, "(n) mask over (n, 2, 5), %d bytes, %s", sizes[s],
               pattern_names[p]);
      check_mask(what, &a25, &m);
      at2 = view_of(&tall); /* (n, 3), strides (1, n): blocks not one run */
      CHECK_EQ_INT(dlb_view_permute(&at2, perm, &err), DLB_OK);
      snprintf(what, sizeof what, "(n) mask over a transposed (n, 3), %d bytes, %s", sizes[s],
               pattern_names[p]);
      check_mask(what, &at2, &m);
      snprintf(what, sizeof what, "2-D mask over 2-D, %d bytes, %s", sizes[s], pattern_names[p]);
      check_mask(what, &b2, &m2);
      snprintf(what, sizeof what, "2-D mask over 3-D, %d bytes, %s", sizes[s], pattern_names[p]);
      check_mask(what, &b3, &m2);
      sliced = view_of(&b3); /* rows 1, 3, 5, ...: the dims cannot merge */
      CHECK_EQ_INT(dlb_view_slice(&sliced, 1, 0, 35, 2, &err), DLB_OK);
      {
        dlb_array ms = view_of(&m2);
        CHECK_EQ_INT(dlb_view_slice(&ms, 1, 1, 35, 2, &err), DLB_OK);
        snprintf(what, sizeof what, "2-D strided mask over strided 3-D, %d bytes, %s", sizes[s],
                 pattern_names[p]);
        check_mask(what, &sliced, &ms);
        dlb_array_release(&ms);
      }
      dlb_array_release(&sliced);
      dlb_array_release(&at2);
      dlb_array_release(&b3);
      dlb_array_release(&b2);
      dlb_array_release(&tall);
      dlb_array_release(&a25);
      dlb_array_release(&a3);
      dlb_array_release(&m2);
      dlb_array_release(&m);
    }
  {
    int64_t zero = 0, z3[2] = {0, 3}, three0[2] = {3, 0};
    dlb_array a = alloc(DLB_FLOAT32, 1, &zero), m = alloc(DLB_BOOL, 1, &zero);
    dlb_array b = alloc(DLB_FLOAT32, 2, z3), c = alloc(DLB_FLOAT32, 2, three0);
    dlb_array m3 = mask_of(ALL, 1, (int64_t[]){3});
    check_mask("empty", &a, &m);
    check_mask("(0, 3) by an empty mask", &b, &m);
    check_mask("(3, 0) by a true mask", &c, &m3);
    dlb_array_release(&m3);
    dlb_array_release(&c);
    dlb_array_release(&b);
    dlb_array_release(&m);
    dlb_array_release(&a);
  }
}

/* --- argwhere ------------------------------------------------------------ */

/* Whether the element at p of dtype t is nonzero (by its bits: NaN is,
 * -0 is not). */
static int nonzero_ref(dlb_dtype t, const char *p) {
  size_t item = dlb_dtype_get(t)->itemsize;
  if (t == DLB_FLOAT16 || t == DLB_BFLOAT16) {
    uint16_t v;
    memcpy(&v, p, 2);
    return (v & 0x7FFF) != 0;
  }
  if (t == DLB_FLOAT32 || t == DLB_COMPLEX64) {
    float f[2] = {0, 0};
    memcpy(f, p, item);
    return f[0] != 0 || f[1] != 0 || isnan(f[0]) || isnan(f[1]);
  }
  if (t == DLB_FLOAT64 || t == DLB_COMPLEX128) {
    double f[2] = {0, 0};
    memcpy(f, p, item);
    return f[0] != 0 || f[1] != 0 || isnan(f[0]) || isnan(f[1]);
  }
  for (size_t b = 0; b < item; b++)
    if (p[b]) return 1;
  return 0;
}

/* Random elements of a contiguous a, nonzero with probability about
 * 1/density: zeros of both signs, NaN, small values, stray bits. */
static void fill_sparse(dlb_array *a, int density) {
  dlb_dtype t = a->dtype;
  size_t item = dlb_array_itemsize(a);
  char *p = dlb_array_host_data(a);
  for (int64_t k = 0; k < a->numel; k++) {
    char *e = p + (size_t)k * item;
    int on = rnd(density) == 0;
    memset(e, 0, item);
    if (!on) { /* zero, -0 where the dtype has one */
      if (rnd(2) && (t == DLB_FLOAT16 || t == DLB_BFLOAT16)) e[1] = (char)0x80;
      if (rnd(2) && (t == DLB_FLOAT32 || t == DLB_COMPLEX64)) e[3] = (char)0x80;
      if (rnd(2) && t == DLB_COMPLEX64) e[7] = (char)0x80;
      if (rnd(2) && (t == DLB_FLOAT64 || t == DLB_COMPLEX128)) e[7] = (char)0x80;
      if (rnd(2) && t == DLB_COMPLEX128) e[15] = (char)0x80;
      continue;
    }
    if (t == DLB_FLOAT32 && rnd(4) == 0) {
      float f = NAN;
      memcpy(e, &f, 4);
    } else if (t == DLB_BOOL) {
      e[0] = (char)truth(1);
    } else {
      e[rnd((int64_t)item)] = (char)(1 + rnd(255));
    }
  }
}

/* argwhere of a (any geometry) against the reference, from base. */
static void check_argwhere(const char *what, const dlb_array *a, int64_t base) {
  int64_t index[DLB_MAX_NDIM], row = 0;
  dlb_array out = {0};
  int bad = 0;
  dlb_status st = dlb_argwhere(a, base, &out, cpu, &err);
  CHECK_EQ_INT(st, DLB_OK);
  if (st != DLB_OK) {
    fprintf(stderr, "%s: %s\n", what, err.message);
    return;
  }
  for (int64_t k = 0; k < a->numel; k++) {
    unravel(k, a->ndim, a->shape, index);
    if (!nonzero_ref(a->dtype, at(a, index))) continue;
    if (row < out.shape[0])
      for (int d = 0; d < a->ndim; d++) {
        int64_t v;
        memcpy(&v, dlb_array_host_data(&out) + (row * a->ndim + d) * 8, 8);
        bad += v != index[d] + base;
      }
    row++;
  }
  if (bad || row != out.shape[0])
    fprintf(stderr, "%s: %d indices wrong, %lld rows for %lld\n", what, bad,
            (long long)out.shape[0], (long long)row);
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(out.shape[0], row);
  CHECK_EQ_INT(out.ndim, 2);
  CHECK_EQ_INT(out.shape[1], a->ndim);
  dlb_array_release(&out);
}

static void test_argwhere(void) {
  const dlb_dtype types[] = {DLB_BOOL,     DLB_INT8,      DLB_UINT16,    DLB_FLOAT16,
                             DLB_BFLOAT16, DLB_INT32,     DLB_FLOAT32,   DLB_FLOAT64,
                             DLB_UINT64,   DLB_COMPLEX64, DLB_COMPLEX128};
  const int64_t lengths[] = {1, 63, 64, 65, 4095, 4096, 4097, 70001};
  const int densities[] = {1, 2, 200, 100000};
  char what[160];
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    const char *name = dlb_dtype_get(types[t])->name;
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
      for (size_t d = 0; d < sizeof densities / sizeof densities[0]; d++) {
        int64_t n = lengths[l];
        dlb_array a = alloc(types[t], 1, &n);
        fill_sparse(&a, densities[d]);
        snprintf(what, sizeof what, "argwhere 1-D %s, %lld, 1 in %d", name, (long long)n,
                 densities[d]);
        check_argwhere(what, &a, 1);
        dlb_array_release(&a);
      }
    {
      int64_t s3[3] = {7, 33, 70}, s2[2] = {129, 70};
      int perm[3] = {2, 0, 1};
      dlb_array a3 = alloc(types[t], 3, s3), b = alloc(types[t], 2, s2), p, q;
      fill_sparse(&a3, 3);
      fill_sparse(&b, 50);
      snprintf(what, sizeof what, "argwhere 3-D %s", name);
      check_argwhere(what, &a3, 1);
      check_argwhere(what, &a3, 0);
      p = view_of(&a3);
      CHECK_EQ_INT(dlb_view_permute(&p, perm, &err), DLB_OK);
      snprintf(what, sizeof what, "argwhere of a permuted 3-D %s", name);
      check_argwhere(what, &p, 1);
      q = view_of(&b);
      CHECK_EQ_INT(dlb_view_slice(&q, 1, 69, 35, -2, &err), DLB_OK);
      snprintf(what, sizeof what, "argwhere of a reversed strided 2-D %s", name);
      check_argwhere(what, &q, 1);
      dlb_array_release(&q);
      dlb_array_release(&p);
      dlb_array_release(&b);
      dlb_array_release(&a3);
    }
  }
  {
    int64_t zero = 0, z2[2] = {4, 0};
    dlb_array e = alloc(DLB_BOOL, 1, &zero), e2 = alloc(DLB_FLOAT32, 2, z2);
    dlb_array s = alloc(DLB_FLOAT64, 0, NULL);
    check_argwhere("argwhere of nothing", &e, 1);
    check_argwhere("argwhere of (4, 0)", &e2, 1);
    *(double *)(void *)dlb_array_host_data(&s) = 2.5;
    check_argwhere("argwhere of a 0-D array", &s, 1);
    dlb_array_release(&s);
    dlb_array_release(&e2);
    dlb_array_release(&e);
  }
}

/* --- bincount ------------------------------------------------------------ */

/* Element k of a contiguous integer array a set to v. */
static void set_int(dlb_array *a, int64_t k, int64_t v) {
  size_t item = dlb_array_itemsize(a);
  if (a->dtype == DLB_BOOL) v = v != 0;
  memcpy(dlb_array_host_data(a) + (size_t)k * item, &v, item); /* (little-endian) */
}

/* bincount of x (1-D, any stride) against counts made here. */
static void check_bincount(const char *what, const dlb_array *x) {
  int64_t most = -1, index[1];
  int64_t *want;
  dlb_array counts = {0};
  int bad = 0;
  dlb_status st;
  for (int64_t k = 0; k < x->numel; k++) {
    index[0] = k;
    int64_t v = dlb_cpu_load_int64(x->dtype, at(x, index));
    if (v > most) most = v;
  }
  want = calloc((size_t)(most + 1 > 0 ? most + 1 : 1), sizeof *want);
  for (int64_t k = 0; k < x->numel; k++) {
    index[0] = k;
    want[dlb_cpu_load_int64(x->dtype, at(x, index))]++;
  }
  st = dlb_bincount(x, NULL, 0, &counts, cpu, &err);
  CHECK_EQ_INT(st, DLB_OK);
  if (st == DLB_OK) {
    CHECK_EQ_INT(counts.numel, most + 1);
    for (int64_t b = 0; b <= most && counts.numel == most + 1; b++)
      bad += ((int64_t *)(void *)dlb_array_host_data(&counts))[b] != want[b];
    if (bad) fprintf(stderr, "%s: %d counts wrong\n", what, bad);
    CHECK_EQ_INT(bad, 0);
  } else {
    fprintf(stderr, "%s: %s\n", what, err.message);
  }
  free(want);
  dlb_array_release(&counts);
}

static void test_bincount(void) {
  const dlb_dtype types[] = {DLB_BOOL,  DLB_INT8,  DLB_INT16,  DLB_INT32,
                             DLB_INT64, DLB_UINT8, DLB_UINT16, DLB_UINT32};
  const int64_t lengths[] = {1, 3, 4, 5, 4096, 65535, 65536, 65537, 200003};
  const int64_t bins[] = {1, 7, 1000, 1024, 1025, 30000};
  char what[160];
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    const dlb_dtype_info *info = dlb_dtype_get(types[t]);
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
      for (size_t b = 0; b < sizeof bins / sizeof bins[0]; b++) {
        int64_t n = lengths[l], nb = bins[b], three = 3 * n;
        dlb_array x, wide, strided;
        if (types[t] == DLB_BOOL && nb > 2) continue;
        if (info->itemsize == 1 && nb > 127) continue;
        if (info->itemsize == 2 && nb > 30000) continue;
        x = alloc(types[t], 1, &n);
        for (int64_t k = 0; k < n; k++) set_int(&x, k, rnd(nb) == 0 ? nb - 1 : rnd(nb));
        snprintf(what, sizeof what, "bincount %s, %lld elements, bins < %lld", info->name,
                 (long long)n, (long long)nb);
        check_bincount(what, &x);
        for (int64_t k = 0; k < n; k++) set_int(&x, k, k % 5 == 4 ? 0 : nb - 1); /* runs */
        check_bincount(what, &x);
        wide = alloc(types[t], 1, &three);
        for (int64_t k = 0; k < three; k++) set_int(&wide, k, k % 3 == 1 ? rnd(nb) : -1);
        if (info->kind == DLB_KIND_UINT || types[t] == DLB_BOOL)
          for (int64_t k = 0; k < three; k++)
            if (k % 3 != 1) set_int(&wide, k, nb + 100); /* (poison, never counted) */
        strided = view_of(&wide);
        CHECK_EQ_INT(dlb_view_slice(&strided, 0, 1, n, 3, &err), DLB_OK);
        snprintf(what, sizeof what, "bincount of every third %s, %lld elements, bins < %lld",
                 info->name, (long long)n, (long long)nb);
        check_bincount(what, &strided);
        dlb_array_release(&strided);
        dlb_array_release(&wide);
        dlb_array_release(&x);
      }
  }
  /* a negative element anywhere fails the call with VALUE */
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    const int64_t where[] = {0, 3, 4, 1000, 65535, 65536, 99999};
    if (dlb_dtype_get(types[t])->kind != DLB_KIND_INT) continue;
    for (size_t w = 0; w < sizeof where / sizeof where[0]; w++) {
      int64_t n = 100000;
      dlb_array x = alloc(types[t], 1, &n), counts = {0};
      for (int64_t k = 0; k < n; k++) set_int(&x, k, k % 100);
      set_int(&x, where[w], -3);
      CHECK_EQ_INT(dlb_bincount(&x, NULL, 0, &counts, cpu, &err), DLB_E_VALUE);
      CHECK(strstr(err.message, "negative") != NULL);
      CHECK(counts.buffer == NULL);
      dlb_array_release(&x);
    }
  }
}

/* --- looks at the interrupt ---------------------------------------------- */

#define EVERY DLB_WORK_CHECK_EVERY
#define LONG ((int64_t)1 << 22)

static dlb_budget *budget;

static struct { int64_t looks, most, raise_at, after; } seen;

static void on_look(dlb_work *w) {
  if (w->outer) return;
  if (seen.raise_at && seen.looks >= seen.raise_at) seen.after++;
  seen.looks++;
  if (w->since_check > seen.most) seen.most = w->since_check;
  if (seen.looks == seen.raise_at) atomic_store(&budget->interrupt, 1);
}

static void watch(int64_t raise_at) {
  memset(&seen, 0, sizeof seen);
  seen.raise_at = raise_at;
  atomic_store(&budget->interrupt, 0);
}

typedef struct long_case {
  int op; /* 0 a[mask], 1 a[mask] = v, 2 argwhere, 3 bincount */
  const dlb_array *a, *mask, *value;
} long_case;

static dlb_status run_case(const long_case *c) {
  dlb_array out = {0}, copy = {0};
  dlb_status st;
  switch (c->op) {
    case 0: st = dlb_mask_select(c->a, c->mask, &out, cpu, &err); break;
    case 1:
      st = dlb_array_clone(&copy, c->a, c->a->dtype, &err);
      if (st == DLB_OK) st = dlb_mask_assign(&copy, c->mask, c->value, cpu, &err);
      dlb_array_release(&copy);
      break;
    case 2: st = dlb_argwhere(c->a, 1, &out, cpu, &err); break;
    default: st = dlb_bincount(c->a, NULL, 0, &out, cpu, &err); break;
  }
  dlb_array_release(&out);
  return st;
}

/* The call looks at least min_looks times, counting at most `most`
 * elements between two looks; interrupted at its third look it fails
 * INTERRUPTED after one more look at most, leaving no buffer behind. */
static void check_looks(const char *what, const long_case *c, int64_t min_looks, int64_t most) {
  size_t buffers = atomic_load(&cpu->refs);
  dlb_status st;
  watch(0);
  st = run_case(c);
  if (st != DLB_OK || seen.looks < min_looks || seen.most > most)
    fprintf(stderr, "%s: status %d, %lld looks (want >= %lld), at most %lld between two\n", what,
            (int)st, (long long)seen.looks, (long long)min_looks, (long long)seen.most);
  CHECK_EQ_INT(st, DLB_OK);
  CHECK(seen.looks >= min_looks);
  CHECK(seen.most <= most);
  watch(3);
  st = run_case(c);
  CHECK_EQ_INT(st, DLB_E_INTERRUPTED);
  CHECK(seen.after <= 1);
  watch(0);
  CHECK_EQ_INT(atomic_load(&cpu->refs), buffers);
}

static void test_looks(void) {
  int64_t n = LONG, rows[2] = {64, 1 << 16}, sixty_four = 64;
  dlb_array a = alloc(DLB_FLOAT32, 1, &n), sparse = mask_of(SPARSE, 1, &n);
  dlb_array dense = mask_of(HALF, 1, &n), one = alloc(DLB_FLOAT32, 1, &(int64_t){1});
  dlb_array wide = alloc(DLB_UINT8, 2, rows), first = mask_of(HALF, 1, &sixty_four);
  dlb_array ints = alloc(DLB_INT32, 1, &n);
  fill_distinct(&a, 0);
  fill_distinct(&one, 0);
  for (int64_t k = 0; k < n; k++) set_int(&ints, k, k % 1000);
  ((uint8_t *)dlb_array_host_data(&first))[0] = 1;
  ((uint8_t *)dlb_array_host_data(&first))[1] = 1;
  ((uint8_t *)dlb_array_host_data(&first))[2] = 1;
  check_looks("a[mask], a sparse mask of 4 Mi", &(long_case){0, &a, &sparse, NULL}, n / EVERY,
              2 * EVERY);
  check_looks("a[mask], a dense mask of 4 Mi", &(long_case){0, &a, &dense, NULL}, n / EVERY,
              2 * EVERY);
  check_looks("a[mask] = v, a sparse mask of 4 Mi", &(long_case){1, &a, &sparse, &one}, n / EVERY,
              2 * EVERY);
  check_looks("a[mask] = v, a dense mask of 4 Mi", &(long_case){1, &a, &dense, &one}, n / EVERY,
              2 * EVERY);
  /* rows of 2^16 elements picked by a mask of 64: a look after each */
  check_looks("a[mask] of rows, a (64) mask", &(long_case){0, &wide, &first, NULL}, 30, 2 * EVERY);
  check_looks("argwhere of a dense mask of 4 Mi", &(long_case){2, &dense, NULL, NULL}, n / EVERY,
              2 * EVERY);
  check_looks("bincount of 4 Mi int32", &(long_case){3, &ints, NULL, NULL}, n / EVERY, 2 * EVERY);
  dlb_array_release(&ints);
  dlb_array_release(&first);
  dlb_array_release(&wide);
  dlb_array_release(&one);
  dlb_array_release(&dense);
  dlb_array_release(&sparse);
  dlb_array_release(&a);
}

int main(void) {
  const char *seed = getenv("MASK_SEED");
  if (seed) rng_state = strtoull(seed, NULL, 10) | 1;
  if (!cpu_open()) return 1;
  test_lengths();
  test_mask_views();
  test_blocks();
  test_argwhere();
  test_bincount();
  budget = dlb_budget_new();
  CHECK(budget != NULL);
  if (!budget) return 1;
  dlb_backend_set_budget(cpu, budget);
  dlb_work_poll_hook = on_look;
  test_looks();
  dlb_work_poll_hook = NULL;
  cpu_close();
  dlb_budget_release(budget);
  return check_done("test_mask");
}
