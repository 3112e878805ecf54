/* test_work_looks.c -- the long kernels a script can size look at the
 * host's interrupt often, counted in looks rather than seconds.
 *
 * A call must see dlb_interrupt soon however its elements fall into lanes:
 * a sort of one long 1-D lane, a search of many values, a product of large
 * matrices. work.h's test hook (dlb_work_poll_hook) sees every look at the
 * interrupt: this test counts the looks of a call's own work, the most
 * elements (multiply-adds for products) counted between two of them, and
 * raises the interrupt at the third look. A kernel that loops a whole lane
 * (or a whole product) between looks makes one look where these checks
 * want one every DLB_WORK_CHECK_EVERY elements, and finishes where the
 * raised interrupt should have stopped it. Nothing here is timed.
 *
 * The products cut into pieces (backends/cpu/matmul.c) are checked against
 * plain references too: parts along K add up to the whole. Short casts,
 * which skip the iterator, still count their elements. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#define FIXTURES_CPU
#include <math.h>
#include "compute/matmul.h"
#include "compute/scatter.h"
#include "compute/sets.h"
#include "compute/sort.h"
#include "core/array.h"
#include "core/backend.h"
#include "core/budget.h"
#include "core/dtype.h"
#include "core/host.h"
#include "core/work.h"
#include "fixtures.h"

#define EVERY DLB_WORK_CHECK_EVERY
#define LONG ((int64_t)1 << 22) /* one lane of 4 Mi elements: 64 looks at least */
/* The most a sorting kernel counts between two looks: a stretch, plus one
 * vqsort piece (2^18 keys) at most. */
#define SORT_MOST (8 * EVERY)
/* The most multiply-adds of a product between two looks: one piece
 * (matmul.c's PIECE_COST, 2^27 units of 1/64 ns, at one unit each). */
#define PRODUCT_SHIFT 27
#define PRODUCT_MOST (((int64_t)1 << PRODUCT_SHIFT) + EVERY)

static dlb_budget *budget;

/* What the hook saw of the call's own work (the outermost one: calls made
 * on the way, a copy say, have their own). */
static struct {
  int64_t looks;    /* looks at the interrupt */
  int64_t most;     /* the most elements counted between two looks */
  int64_t raise_at; /* the look that raises the interrupt; 0: none */
  int64_t after;    /* looks after that one */
  int nested_too;   /* count the looks of calls made on the way too (calls planned
                       from others: isin, lexsort) */
} seen;

static void on_look(dlb_work *w) {
  if (w->outer && !seen.nested_too) return;
  if (seen.raise_at && seen.looks >= seen.raise_at) seen.after++;
  seen.looks++;
  if (w->since_check > seen.most) seen.most = w->since_check;
  if (seen.looks == seen.raise_at) atomic_store(&budget->interrupt, 1);
}

static void watch(int64_t raise_at) {
  int nested_too = seen.nested_too;
  memset(&seen, 0, sizeof seen);
  seen.nested_too = nested_too;
  seen.raise_at = raise_at;
  atomic_store(&budget->interrupt, 0);
}

/* One call under test: runs it and releases what it made (OK or not). */
typedef dlb_status (*call_fn)(const void *arg);

/* The call runs to its end looking at least min_looks times, counting at
 * most `most` between two looks; with the interrupt raised at its third
 * look it fails INTERRUPTED, looks no more than once after that, and
 * leaves no buffer behind. */
static void check_looks(const char *what, call_fn call, const void *arg, int64_t min_looks,
                        int64_t most) {
  size_t buffers = atomic_load(&cpu->refs); /* the backend's: one per live buffer */
  dlb_status st;
  watch(0);
  st = call(arg);
  if (st != DLB_OK || seen.looks < min_looks || seen.most > most)
    fprintf(stderr,
            "%s: status %d, %lld looks (want >= %lld), at most %lld between two "
            "(want <= %lld)\n",
            what, (int)st, (long long)seen.looks, (long long)min_looks, (long long)seen.most,
            (long long)most);
  CHECK_EQ_INT(st, DLB_OK);
  CHECK(seen.looks >= min_looks);
  CHECK(seen.most <= most);
  watch(3);
  st = call(arg);
  if (st != DLB_E_INTERRUPTED || seen.after > 1)
    fprintf(stderr, "%s, interrupted at look 3: status %d, %lld looks after\n", what, (int)st,
            (long long)seen.after);
  CHECK_EQ_INT(st, DLB_E_INTERRUPTED);
  CHECK(seen.after <= 1);
  watch(0);
  /* Interrupted, the call freed what it made (its result included). */
  if (atomic_load(&cpu->refs) != buffers) fprintf(stderr, "%s: a buffer was left\n", what);
  CHECK_EQ_INT(atomic_load(&cpu->refs), buffers);
}

/* --- arrays -------------------------------------------------------------- */

/* n random elements of dtype t: few distinct values (few = 1: ties, zeros
 * of both signs among the floats) or many. */
static dlb_array random_array(dlb_dtype t, int64_t n, int few) {
  dlb_array a = alloc(t, 1, &n);
  char *p = dlb_array_host_data(&a);
  size_t item = dlb_dtype_get(t)->itemsize;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = rng();
    if (few) r %= 50;
    switch (t) {
      case DLB_FLOAT32: {
        float f = few ? (r < 10 ? (r & 1 ? -0.0f : 0.0f) : (float)r - 25) : (float)(r >> 40) / 7;
        memcpy(p + i * 4, &f, 4);
        break;
      }
      case DLB_FLOAT64: {
        double d = few ? (r < 10 ? (r & 1 ? -0.0 : 0.0) : (double)r - 25) : (double)(r >> 11) / 3;
        memcpy(p + i * 8, &d, 8);
        break;
      }
      case DLB_COMPLEX64: {
        float c[2] = {(float)(r % 7), (float)((r >> 8) % 5)};
        memcpy(p + i * 8, c, 8);
        break;
      }
      default: memcpy(p + (size_t)i * item, &r, item); break; /* integers: their low bytes */
    }
  }
  return a;
}

/* --- sorting ------------------------------------------------------------- */

typedef struct sort_case {
  const dlb_array *a;
  dlb_sort_options o;
  int values, indices;
} sort_case;

static dlb_status run_sort(const void *arg) {
  const sort_case *c = arg;
  dlb_array values = {0}, indices = {0};
  dlb_status st =
      dlb_sort(c->a, &c->o, c->values ? &values : NULL, c->indices ? &indices : NULL, cpu, &err);
  if (st == DLB_OK) {
    dlb_array_release(&values);
    dlb_array_release(&indices);
  }
  return st;
}

static void check_sort(const char *what, const dlb_array *a, int descending, int stable, int64_t k,
                       int values, int indices) {
  sort_case c = {a, {0, descending, stable, k, 0}, values, indices};
  check_looks(what, run_sort, &c, a->numel / EVERY, SORT_MOST);
}

static dlb_status run_unique(const void *arg) {
  dlb_array values = {0}, index = {0}, inverse = {0}, counts = {0};
  dlb_unique_options o = {1, 0};
  dlb_status st = dlb_unique(arg, &o, &values, &index, &inverse, &counts, cpu, &err);
  if (st == DLB_OK) {
    dlb_array_release(&values);
    dlb_array_release(&index);
    dlb_array_release(&inverse);
    dlb_array_release(&counts);
  }
  return st;
}

typedef struct isin_case {
  const dlb_array *a, *test;
} isin_case;

static dlb_status run_isin(const void *arg) {
  const isin_case *c = arg;
  dlb_array out = {0};
  dlb_status st = dlb_isin(c->a, c->test, 0, &out, cpu, &err);
  if (st == DLB_OK) dlb_array_release(&out);
  return st;
}

static dlb_status run_lexsort(const void *arg) {
  dlb_array out = {0};
  dlb_status st = dlb_lexsort(arg, 2, 1, &out, cpu, &err);
  if (st == DLB_OK) dlb_array_release(&out);
  return st;
}

typedef struct search_case {
  const dlb_array *sorted, *values;
} search_case;

static dlb_status run_search(const void *arg) {
  const search_case *c = arg;
  dlb_array out = {0};
  dlb_status st = dlb_searchsorted(c->sorted, c->values, 0, 1, &out, cpu, &err);
  if (st == DLB_OK) dlb_array_release(&out);
  return st;
}

/* Sorting one long lane (a 1-D array) looks at the interrupt every stretch
 * of it, in every way it sorts: values alone (Highway's vqsort in pieces,
 * or keys already in order), with positions (the radix sort, by its top
 * digit first or by the low digits alone), stable with both zeros, top-k
 * with many picks (a heap), complex numbers; unique (a sort that marks
 * runs); searchsorted of many values (blocks of binary searches); isin
 * and lexsort (plans of those). */
static void test_long_lanes(void) {
  dlb_array f32 = random_array(DLB_FLOAT32, LONG, 0);
  dlb_array f64 = random_array(DLB_FLOAT64, LONG, 1);
  dlb_array i32 = random_array(DLB_INT32, LONG, 0);
  dlb_array i8 = random_array(DLB_INT8, LONG, 0);
  dlb_array c64 = random_array(DLB_COMPLEX64, LONG / 4, 0);
  dlb_array zeros = alloc(DLB_FLOAT32, 1, &(int64_t){1}), same, sorted, probes;
  int64_t n_sorted = 100000;
  check_sort("sort float32 (values)", &f32, 0, 0, -1, 1, 0);
  check_sort("sort float64, stable, both zeros", &f64, 0, 1, -1, 1, 0);
  check_sort("argsort int32", &i32, 0, 0, -1, 0, 1);
  check_sort("argsort int8, descending", &i8, 1, 0, -1, 1, 1);
  check_sort("argsort float64, stable, descending", &f64, 1, 1, -1, 0, 1);
  check_sort("topk float32, k = n / 8", &f32, 1, 0, LONG / 8, 1, 1);
  check_sort("topk int32, k = 5", &i32, 1, 0, 5, 1, 1);
  check_sort("sort complex64", &c64, 0, 0, -1, 1, 1);
  /* Keys in order already: gathered and written back, nothing sorted. */
  memset(dlb_array_host_data(&zeros), 0, 4);
  dlb_array_share(&same, &zeros);
  CHECK_EQ_INT(dlb_view_expand(&same, 1, &(int64_t){LONG}, &err), DLB_OK);
  check_sort("sort of equal float32 (an expanded view)", &same, 0, 0, -1, 1, 0);
  check_looks("unique float64 with inverse and counts", run_unique, &f64, LONG / EVERY, SORT_MOST);
  /* searchsorted: 4 Mi values (one element expanded) into 1e5 sorted ones. */
  sorted = alloc(DLB_FLOAT32, 1, &n_sorted);
  for (int64_t i = 0; i < n_sorted; i++) ((float *)dlb_array_host_data(&sorted))[i] = (float)i;
  dlb_array_share(&probes, &zeros);
  CHECK_EQ_INT(dlb_view_expand(&probes, 1, &(int64_t){LONG}, &err), DLB_OK);
  check_looks("searchsorted of 4 Mi values", run_search, &(search_case){&sorted, &probes},
              LONG / EVERY, SORT_MOST);
  /* isin and lexsort are plans of sorts, searches and gathers, each its
   * own work inside theirs: their looks count. */
  seen.nested_too = 1;
  check_looks("isin of 4 Mi values among 1e5", run_isin, &(isin_case){&f64, &sorted}, LONG / EVERY,
              SORT_MOST);
  {
    const dlb_array *keys[2] = {&i32, &f32};
    check_looks("lexsort by two keys of 4 Mi", run_lexsort, keys, 2 * LONG / EVERY, SORT_MOST);
  }
  seen.nested_too = 0;
  dlb_array_release(&probes);
  dlb_array_release(&sorted);
  dlb_array_release(&same);
  dlb_array_release(&zeros);
  dlb_array_release(&c64);
  dlb_array_release(&i8);
  dlb_array_release(&i32);
  dlb_array_release(&f64);
  dlb_array_release(&f32);
}

/* --- grouped updates ---------------------------------------------------- */

typedef struct scatter_case {
  dlb_array *a;
  const dlb_array *index, *values;
  int dim;
} scatter_case;

static dlb_status run_scatter(const void *arg) {
  const scatter_case *c = arg;
  return dlb_scatter(DLB_SCATTER_ADD, c->a, c->index, c->values, c->dim, 1, cpu, &err);
}

/* scatter_add looks while it checks the indices and while it updates: 4 Mi
 * updates into 1e3 bins as one lane, and along dim 2 of a (64, 1000) array
 * (64 lanes of 64 Ki updates each). */
static void test_scatter(void) {
  int64_t bins = 1000, shape2[2] = {64, 1000};
  dlb_array index = alloc(DLB_INT64, 1, &(int64_t){LONG});
  dlb_array values = random_array(DLB_FLOAT64, LONG, 1), flat = alloc(DLB_FLOAT64, 1, &bins);
  dlb_array rows = alloc(DLB_FLOAT64, 2, shape2), short_index, row_values;
  int64_t *ix = (int64_t *)(void *)dlb_array_host_data(&index);
  int64_t vshape[2] = {64, LONG / 64};
  for (int64_t i = 0; i < LONG; i++) ix[i] = 1 + (int64_t)(rng() % (uint64_t)bins);
  memset(dlb_array_host_data(&flat), 0, (size_t)bins * 8);
  memset(dlb_array_host_data(&rows), 0, (size_t)(64 * bins) * 8);
  check_looks("scatter_add of 4 Mi into 1e3 bins", run_scatter,
              &(scatter_case){&flat, &index, &values, 0}, LONG / EVERY, 2 * EVERY);
  dlb_array_share(&short_index, &index);
  CHECK_EQ_INT(dlb_view_slice(&short_index, 0, 0, LONG / 64, 1, &err), DLB_OK);
  dlb_array_share(&row_values, &values);
  CHECK_EQ_INT(dlb_view_reshape(&row_values, 2, vshape, &err), DLB_OK);
  check_looks("scatter_add along dim 2 of (64, 1000)", run_scatter,
              &(scatter_case){&rows, &short_index, &row_values, 1}, LONG / EVERY, 2 * EVERY);
  dlb_array_release(&row_values);
  dlb_array_release(&short_index);
  dlb_array_release(&rows);
  dlb_array_release(&flat);
  dlb_array_release(&values);
  dlb_array_release(&index);
}

/* --- products ------------------------------------------------------------ */

typedef struct product_case {
  const dlb_array *a, *b;
  int dot;
} product_case;

static dlb_status run_product(const void *arg) {
  const product_case *c = arg;
  dlb_array out = {0};
  dlb_status st = c->dot ? dlb_dot(c->a, c->b, &out, cpu, &err)
                         : dlb_matmul(c->a, c->b, DLB_MATMUL_PROMOTE, &out, cpu, &err);
  if (st == DLB_OK) dlb_array_release(&out);
  return st;
}

/* Element i of a contiguous float32, float64, int32 or int64 array, as a double. */
static double element(const dlb_array *a, int64_t i) {
  const char *p = dlb_array_host_data(a);
  switch (a->dtype) {
    case DLB_FLOAT32: return ((const float *)(const void *)p)[i];
    case DLB_FLOAT64: return ((const double *)(const void *)p)[i];
    case DLB_INT32: return ((const int32_t *)(const void *)p)[i];
    default: return (double)((const int64_t *)(const void *)p)[i];
  }
}

/* A rows x cols matrix of small random integers (-9..9) of dtype t (float32,
 * float64, int32 or int64). */
static dlb_array matrix(dlb_dtype t, int64_t rows, int64_t cols) {
  int64_t shape[2] = {rows, cols};
  dlb_array a = alloc(t, 2, shape);
  char *p = dlb_array_host_data(&a);
  for (int64_t i = 0; i < rows * cols; i++) {
    int v = (int)rnd(19) - 9;
    switch (t) {
      case DLB_FLOAT32: ((float *)(void *)p)[i] = (float)v; break;
      case DLB_FLOAT64: ((double *)(void *)p)[i] = v; break;
      case DLB_INT32: ((int32_t *)(void *)p)[i] = v; break;
      default: ((int64_t *)(void *)p)[i] = v; break;
    }
  }
  return a;
}

/* A product looks at the interrupt after each piece of about 2^27
 * multiply-adds (fewer where each costs more): BLAS's GEMM by blocks of
 * rows, columns and K, the loops by their own blocks; a dot of two views
 * of 2^40 elements (the loops: past CBLAS's int) stops at the raised
 * interrupt after three pieces. */
static void test_products(void) {
  dlb_array a32 = matrix(DLB_FLOAT32, 1024, 1024), i64 = matrix(DLB_INT64, 512, 512);
  dlb_array one = alloc(DLB_FLOAT64, 1, &(int64_t){1}), huge;
  check_looks("matmul float32 1024^3", run_product, &(product_case){&a32, &a32, 0},
              ((int64_t)1 << 30) >> PRODUCT_SHIFT, PRODUCT_MOST);
  check_looks("matmul int64 512^3 (the loops)", run_product, &(product_case){&i64, &i64, 0},
              ((int64_t)1 << 27) >> 25, PRODUCT_MOST);
  ((double *)dlb_array_host_data(&one))[0] = 1;
  dlb_array_share(&huge, &one);
  CHECK_EQ_INT(dlb_view_expand(&huge, 1, &(int64_t){(int64_t)1 << 40}, &err), DLB_OK);
  watch(3);
  CHECK_EQ_INT(run_product(&(product_case){&huge, &huge, 1}), DLB_E_INTERRUPTED);
  CHECK(seen.after <= 1);
  CHECK(seen.most <= PRODUCT_MOST);
  watch(0);
  dlb_array_release(&huge);
  dlb_array_release(&one);
  dlb_array_release(&i64);
  dlb_array_release(&a32);
}

/* Element (i, j) of the product of a (m x k) and b (k x n), both
 * contiguous, as doubles (small integers: exact). */
static double reference(const dlb_array *a, const dlb_array *b, int64_t i, int64_t j) {
  double s = 0;
  int64_t k = a->shape[1], n = b->shape[1];
  for (int64_t p = 0; p < k; p++) s += element(a, i * k + p) * element(b, p * n + j);
  return s;
}

/* The pieces add up to the whole: products that split along K (GEMM, GEMV
 * both ways, the loops) give the plain sums (small integers as floats: the
 * sums are exact whatever their order). */
static void test_pieces_add_up(void) {
  struct {
    dlb_dtype t;
    int64_t m, k, n;
  } cases[] = {
      {DLB_FLOAT64, 300, 1500, 200}, /* GEMM: K in parts of 512 */
      {DLB_FLOAT32, 2, 3000000, 1},  /* GEMV, a matrix times a column */
      {DLB_FLOAT32, 1, 3000000, 2},  /* GEMV, a row times a matrix */
      {DLB_INT32, 700, 300, 900},    /* the loops: blocks of K and of rows */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    dlb_array a = matrix(cases[c].t, cases[c].m, cases[c].k);
    dlb_array b = matrix(cases[c].t, cases[c].k, cases[c].n), out = {0};
    int bad = 0;
    CHECK_EQ_INT(dlb_matmul(&a, &b, DLB_MATMUL_PROMOTE, &out, cpu, &err), DLB_OK);
    for (int t = 0; t < 40 && out.buffer; t++) { /* (the m x n result: contiguous) */
      int64_t i = rnd(cases[c].m), j = rnd(cases[c].n);
      if (element(&out, i * cases[c].n + j) != reference(&a, &b, i, j)) bad++;
    }
    if (bad) fprintf(stderr, "pieces of case %zu: %d elements differ\n", c, bad);
    CHECK_EQ_INT(bad, 0);
    dlb_array_release(&out);
    dlb_array_release(&b);
    dlb_array_release(&a);
  }
}

/* --- short casts --------------------------------------------------------- */

/* A walk of many short casts (as the boxes of a staged copy, or rows read
 * one at a time, are) within one call's work: each cast counts its
 * elements as the iterator would, though a run this short skips it. */
static dlb_status run_short_casts(const void *arg) {
  const int64_t count = *(const int64_t *)arg, n = 10;
  const int64_t dst_step = (int64_t)sizeof(double), src_step = (int64_t)sizeof(float);
  float src[10] = {0};
  double dst[10];
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, budget, count * n, "short casts", &err);
  if (st != DLB_OK) return st;
  for (int64_t k = 0; k < count && st == DLB_OK && !w.interrupted; k++)
    st = dlb_host.cast_strided(DLB_FLOAT64, (char *)dst, &dst_step, DLB_FLOAT32,
                               (const char *)src, &src_step, 1, &n, &err);
  return dlb_work_end(&w, st, "short casts", &err);
}

/* 2^17 casts of 10 elements: a look every DLB_WORK_CHECK_EVERY of them. */
static void test_short_casts(void) {
  int64_t count = (int64_t)1 << 17;
  check_looks("short casts", run_short_casts, &count, count * 10 / (EVERY + 10), EVERY + 10);
}

int main(void) {
  if (!cpu_open_budgeted(&budget)) return 1;
  dlb_work_poll_hook = on_look;
  test_long_lanes();
  test_scatter();
  test_products();
  test_pieces_add_up();
  test_short_casts();
  dlb_work_poll_hook = NULL;
  cpu_close_budgeted(budget);
  return check_done("test_work_looks");
}
