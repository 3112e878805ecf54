/* test_quantile.c -- the order statistics' selection and bounds
 * (src/compute/select_kth.h, src/compute/quantile.h).
 *
 * The selection puts the right element at each wanted rank, nothing larger
 * before it, nothing smaller after it, on inputs made to hurt quickselects
 * (sorted, reversed, all equal, few values, organ pipes, sawteeth) at
 * lengths about the insertion-sort and sampling thresholds; the heapsort
 * fallback sorts. Through dlb_quantile: the work limit refuses, the
 * interrupt stops a long 1-D slice within a few looks (the copy looks every
 * DLB_WORK_CHECK_EVERY elements), the budget refuses the slice's scratch,
 * and nothing is left charged or allocated. tests/oracle/quantile_* compare
 * the values with NumPy. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#define FIXTURES_CPU
#include "compute/quantile.h"
#include "compute/reduce.h"
#include "compute/select_kth.h"
#include "core/budget.h"
#include "core/work.h"
#include "fixtures.h"

DLB_DEFINE_SELECT(sel, int64_t)

static dlb_budget *budget;
static int64_t looks, raise_at; /* the look that raises the interrupt; 0: none */

static void on_look(dlb_work *w) {
  if (w->outer) return;
  if (++looks == raise_at) atomic_store(&budget->interrupt, 1);
}

static void watch(int64_t at) {
  looks = 0;
  raise_at = at;
  atomic_store(&budget->interrupt, 0);
}

enum { RANDOM, SORTED, REVERSED, EQUAL, FEW, ORGAN, SAW, PATTERNS };

static void fill(int64_t *v, int64_t n, int pattern) {
  for (int64_t i = 0; i < n; i++) {
    switch (pattern) {
      case RANDOM: v[i] = (int64_t)(rng() >> 1); break;
      case SORTED: v[i] = i; break;
      case REVERSED: v[i] = n - i; break;
      case EQUAL: v[i] = 7; break;
      case FEW: v[i] = rnd(3); break;
      case ORGAN: v[i] = i < n / 2 ? i : n - i; break;
      default: v[i] = i % 17; break;
    }
  }
}

static int compare(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* v (selected at the sorted distinct ranks) against sorted. */
static int selected_right(const int64_t *v, const int64_t *sorted, int64_t n, const int64_t *ranks,
                          int64_t nranks) {
  int64_t from = 0;
  for (int64_t r = 0; r < nranks; r++) {
    int64_t k = ranks[r];
    if (v[k] != sorted[k]) return 0;
    for (int64_t i = from; i < k; i++)
      if (v[i] > v[k]) return 0;
    for (int64_t i = k + 1; i < n; i++)
      if (v[i] < v[k]) return 0;
    from = k + 1;
  }
  return 1;
}

static void test_selection(void) {
  static const int64_t lengths[] = {1, 2, 3, 15, 16, 17, 18, 40, 599, 600, 601, 602, 5000, 100003};
  int64_t most = 100003, bad = 0;
  int64_t *v = malloc(sizeof *v * (size_t)most), *sorted = malloc(sizeof *v * (size_t)most);
  if (!v || !sorted) return;
  for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++) {
    int64_t n = lengths[l];
    for (int pattern = 0; pattern < PATTERNS; pattern++) {
      for (int trial = 0; trial < 6; trial++) {
        int64_t ranks[8], nranks = 0;
        int64_t wanted[8] = {0, n - 1, n / 2, (n - 1) / 2, rnd(n), rnd(n), rnd(n), n / 20};
        int count = trial < 4 ? 1 : 8;
        int first = trial < 4 ? trial : 0;
        for (int i = 0; i < count; i++) ranks[i] = wanted[first + i];
        qsort(ranks, (size_t)count, sizeof *ranks, compare);
        for (int i = 0; i < count; i++)
          if (nranks == 0 || ranks[nranks - 1] != ranks[i]) ranks[nranks++] = ranks[i];
        fill(v, n, pattern);
        memcpy(sorted, v, sizeof *v * (size_t)n);
        qsort(sorted, (size_t)n, sizeof *v, compare);
        sel_select(v, 0, n, ranks, nranks);
        if (!selected_right(v, sorted, n, ranks, nranks)) {
          if (!bad)
            fprintf(stderr, "selection wrong: n %lld, pattern %d, trial %d\n", (long long)n,
                    pattern, trial);
          bad++;
        }
      }
    }
  }
  CHECK_EQ_INT(bad, 0);
  for (int pattern = 0; pattern < PATTERNS; pattern++) { /* the depth limit's fallback */
    int64_t n = 5000;
    fill(v, n, pattern);
    memcpy(sorted, v, sizeof *v * (size_t)n);
    qsort(sorted, (size_t)n, sizeof *v, compare);
    sel_heapsort(v, 0, n);
    CHECK(memcmp(v, sorted, sizeof *v * (size_t)n) == 0);
  }
  free(v);
  free(sorted);
}

/* A float64 array 0 .. n-1, reversed. */
static dlb_array descending(int64_t n) {
  dlb_array a = alloc(DLB_FLOAT64, 1, &n);
  double *p = (double *)(void *)dlb_array_host_data(&a);
  for (int64_t i = 0; i < n; i++) p[i] = (double)(n - 1 - i);
  return a;
}

static void test_bounds(void) {
  int64_t n = (int64_t)1 << 22, nq = 3;
  dlb_array a = descending(n), q = alloc(DLB_FLOAT64, 1, &nq), out;
  dlb_quantile_options o = {DLB_REDUCE_ALL_DIMS, 0, DLB_QUANTILE_LINEAR, 0, 0};
  double *qs = (double *)(void *)dlb_array_host_data(&q);
  size_t in_use = atomic_load(&budget->in_use);
  qs[0] = 0.0;
  qs[1] = 0.5;
  qs[2] = 1.0;
  watch(0);
  CHECK_EQ_INT(dlb_quantile(&a, &q, &o, &out, cpu, &err), DLB_OK);
  if (out.buffer) {
    const double *r = (const double *)(void *)dlb_array_host_data(&out);
    CHECK(r[0] == 0.0 && r[1] == (double)(n - 1) / 2 && r[2] == (double)(n - 1));
    dlb_array_release(&out);
  }
  CHECK(looks >= n / DLB_WORK_CHECK_EVERY); /* the copy looks as it goes */
  CHECK(atomic_load(&budget->in_use) == in_use);

  atomic_store(&budget->work_limit, n - 1); /* refused before anything is read */
  CHECK_EQ_INT(dlb_quantile(&a, &q, &o, &out, cpu, &err), DLB_E_INTERRUPTED);
  CHECK(out.buffer == NULL);
  atomic_store(&budget->work_limit, 0);

  watch(3); /* stopped inside the one slice's copy */
  CHECK_EQ_INT(dlb_quantile(&a, &q, &o, &out, cpu, &err), DLB_E_INTERRUPTED);
  CHECK(out.buffer == NULL);
  CHECK(looks <= 4);
  watch(0);
  CHECK(atomic_load(&budget->in_use) == in_use);

  atomic_store(&budget->limit, in_use + 1000); /* the slice's 32 MiB of scratch is refused */
  o.method = DLB_QUANTILE_MEDIAN;
  CHECK_EQ_INT(dlb_quantile(&a, NULL, &o, &out, cpu, &err), DLB_E_OUT_OF_MEMORY);
  CHECK(out.buffer == NULL);
  atomic_store(&budget->limit, 0);
  CHECK(atomic_load(&budget->in_use) == in_use);

  qs[1] = 1.5; /* q outside [0, 1] */
  o.method = DLB_QUANTILE_LINEAR;
  CHECK_EQ_INT(dlb_quantile(&a, &q, &o, &out, cpu, &err), DLB_E_VALUE);
  CHECK(atomic_load(&budget->in_use) == in_use);
  dlb_array_release(&q);
  dlb_array_release(&a);
}

int main(void) {
  if (!cpu_open_budgeted(&budget)) return 1;
  dlb_work_poll_hook = on_look;
  test_selection();
  test_bounds();
  dlb_work_poll_hook = NULL;
  cpu_close_budgeted(budget);
  return check_done("test_quantile");
}
