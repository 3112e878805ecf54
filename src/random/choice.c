/* choice.c -- NumPy's Generator.choice routes (choice.h): ports of the
 * sampling part of Generator.choice and of _shuffle_int in
 * numpy/random/_generator.pyx and of kahan_sum in _common.pyx (NumPy
 * 1.24.2, BSD: NUMPY_LICENSE beside this file). */
#include "choice.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../core/invariant.h"
#include "../core/pages.h"
#include "../core/work.h"
#include "distributions.h"

/* Doubles drawn at a time before their indices are searched. */
#define DRAWS 1024

double dlb_kahan_sum(const double *p, int64_t n) {
  double c = 0.0, y, t, sum;
  if (n <= 0) return 0.0;
  sum = p[0];
  for (int64_t i = 1; i < n; i++) {
    y = p[i] - c;
    t = sum + y;
    c = (t - sum) - y;
    sum = t;
  }
  return sum;
}

dlb_choice_p_problem dlb_choice_check_p(const double *p, int64_t n, double atol) {
  double sum = dlb_kahan_sum(p, n);
  if (sum != sum) return DLB_CHOICE_P_NAN;
  for (int64_t i = 0; i < n; i++)
    if (p[i] < 0) return DLB_CHOICE_P_NEGATIVE;
  if (fabs(sum - 1.) > atol) return DLB_CHOICE_P_SUM;
  return DLB_CHOICE_P_OK;
}

int64_t dlb_choice_count_positive(const double *p, int64_t n) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) k += p[i] > 0;
  return k;
}

int dlb_choice_uses_tail(int64_t pop, int64_t size, int shuffle) {
  return pop > 10000 && size > pop / (shuffle ? 50 : 20);
}

/* Scratch memory of nbytes, charged to budget (NULL: not counted) before
 * it is allocated; NULL with err set when refused. */
static void *scratch_new(dlb_budget *budget, size_t nbytes, dlb_error *err) {
  void *p;
  if (budget && dlb_budget_charge(budget, nbytes, err) != DLB_OK) return NULL;
  if (!(p = malloc(nbytes ? nbytes : 1))) {
    if (budget) dlb_budget_refund(budget, nbytes);
    dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for %zu bytes of choice's scratch", nbytes);
  } else if (nbytes >= DLB_HUGEPAGE_BYTES) {
    dlb_advise_huge_pages(p, nbytes); /* the tail shuffle swaps at random over all of it */
  }
  return p;
}

static void scratch_free(dlb_budget *budget, void *p, size_t nbytes) {
  free(p);
  if (budget && p) dlb_budget_refund(budget, nbytes);
}

/* nbytes = n * item, or 0 with err set when that passes SIZE_MAX. */
static size_t bytes_of(int64_t n, size_t item, dlb_error *err) {
  if (n < 0 || (uint64_t)n > SIZE_MAX / item) {
    dlb_fail(err, DLB_E_OUT_OF_MEMORY, "choice's scratch of %lld elements is too large",
             (long long)n);
    return 0;
  }
  return (size_t)n * item;
}

/* NumPy's cdf = p.cumsum(); cdf /= cdf[-1] (a sequential sum). */
static void make_cdf(const double *p, int64_t n, double *cdf) {
  double sum = 0.0, last;
  for (int64_t i = 0; i < n; i++) cdf[i] = sum += p[i];
  last = cdf[n - 1];
  for (int64_t i = 0; i < n; i++) cdf[i] /= last;
}

/* searchsorted(cdf, x, side = right) on the non-decreasing cdf: how many
 * elements are <= x (< n: x < 1 == cdf[n - 1]). */
static inline int64_t search_right(const double *cdf, int64_t n, double x) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (cdf[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  DLB_ASSERT(lo < n);
  return lo;
}

/* a + b, at most INT64_MAX (a, b >= 0): a count of work. */
static int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

/* Ends work w with st, giving g back its state when the call failed. */
static dlb_status finish(dlb_work *w, dlb_status st, dlb_pcg64 *g, const dlb_pcg64 *saved,
                         const char *op, dlb_error *err) {
  if ((st = dlb_work_end(w, st, op, err)) != DLB_OK) *g = *saved;
  return st;
}

dlb_status dlb_choice_p(dlb_pcg64 *g, const double *p, int64_t n, int64_t *out, int64_t size,
                        dlb_budget *budget, const char *op, dlb_error *err) {
  dlb_work w;
  dlb_pcg64 saved = *g;
  double *cdf, x[DRAWS];
  size_t nbytes = bytes_of(n, sizeof(double), err);
  dlb_status st;
  DLB_ASSERT(n > 0 || size == 0);
  if (size == 0) return DLB_OK; /* NumPy draws random(0): nothing */
  if (!nbytes) return DLB_E_OUT_OF_MEMORY;
  if ((st = dlb_work_begin(&w, budget, sat_add(n, size), op, err)) != DLB_OK) return st;
  if (!(cdf = scratch_new(budget, nbytes, err))) return finish(&w, err->code, g, &saved, op, err);
  make_cdf(p, n, cdf);
  dlb_work_tick(&w, n);
  for (int64_t done = 0; done < size && !w.interrupted; done += DRAWS) {
    int64_t k = size - done < DRAWS ? size - done : DRAWS;
    dlb_random_fill(g, x, k);
    for (int64_t i = 0; i < k; i++) out[done + i] = search_right(cdf, n, x[i]);
    dlb_work_tick(&w, k);
  }
  scratch_free(budget, cdf, nbytes);
  return finish(&w, DLB_OK, g, &saved, op, err);
}

/* One round of choice with p without replacement: want draws, each
 * searched in the cdf of pc; an index seen for the first time (its pc is
 * still > 0: a found index cannot be hit) is appended at out[*found] and
 * its pc zeroed (NumPy zeroes the found ones before the next round's cdf;
 * the same). Returns 1 when the work must stop. */
static int unique_round(dlb_pcg64 *g, double *pc, double *cdf, int64_t n, int64_t *out,
                        int64_t *found, int64_t want, dlb_work *w) {
  double x[DRAWS];
  make_cdf(pc, n, cdf);
  if (dlb_work_tick(w, n)) return 1;
  for (int64_t done = 0; done < want; done += DRAWS) {
    int64_t k = want - done < DRAWS ? want - done : DRAWS;
    dlb_random_fill(g, x, k);
    for (int64_t i = 0; i < k; i++) {
      int64_t idx = search_right(cdf, n, x[i]);
      if (pc[idx] != 0) {
        pc[idx] = 0;
        out[(*found)++] = idx;
      }
    }
    if (dlb_work_tick(w, k)) return 1;
  }
  return 0;
}

dlb_status dlb_choice_p_unique(dlb_pcg64 *g, const double *p, int64_t n, int64_t *out, int64_t size,
                               dlb_budget *budget, const char *op, dlb_error *err) {
  dlb_work w;
  dlb_pcg64 saved = *g;
  double *pc;
  size_t nbytes = bytes_of(n, 2 * sizeof(double), err);
  int64_t found = 0;
  dlb_status st;
  DLB_ASSERT(size <= dlb_choice_count_positive(p, n));
  if (size == 0) return DLB_OK;
  if (!nbytes) return DLB_E_OUT_OF_MEMORY;
  if ((st = dlb_work_begin(&w, budget, sat_add(n, size), op, err)) != DLB_OK) return st;
  if (!(pc = scratch_new(budget, nbytes, err))) return finish(&w, err->code, g, &saved, op, err);
  memcpy(pc, p, (size_t)n * sizeof(double));
  /* each round finds at least its first draw's index: at most size rounds */
  while (found < size)
    if (unique_round(g, pc, pc + n, n, out, &found, size - found, &w)) break;
  scratch_free(budget, pc, nbytes);
  return finish(&w, DLB_OK, g, &saved, op, err);
}

/* NumPy's _shuffle_int(n, first, data): for i = n-1 down to first, swap
 * data[i] with data[random_bounded_uint64(0, i)]. 1 when the work must stop. */
static int shuffle_int(dlb_pcg64 *g, int64_t n, int64_t first, int64_t *data, dlb_work *w) {
  for (int64_t i = n - 1; i >= first; i--) {
    int64_t j = (int64_t)dlb_bounded64_one(g, (uint64_t)i), t = data[j];
    data[j] = data[i];
    data[i] = t;
    if (dlb_work_tick(w, 1)) return 1;
  }
  return 0;
}

/* NumPy's tail shuffle: arange(pop) shuffled from the end down to
 * max(pop - size, 1); its last size elements. */
static dlb_status unique_tail(dlb_pcg64 *g, int64_t pop, int64_t size, int64_t *out, dlb_work *w,
                              dlb_budget *budget, dlb_error *err) {
  size_t nbytes = bytes_of(pop, sizeof(int64_t), err);
  int64_t *idx;
  if (!nbytes) return DLB_E_OUT_OF_MEMORY;
  if (!(idx = scratch_new(budget, nbytes, err))) return err->code;
  for (int64_t i = 0; i < pop; i++) idx[i] = i;
  if (!dlb_work_tick(w, pop) && !shuffle_int(g, pop, pop - size > 1 ? pop - size : 1, idx, w))
    memcpy(out, idx + (pop - size), (size_t)size * sizeof(int64_t));
  scratch_free(budget, idx, nbytes);
  return DLB_OK;
}

/* NumPy's Floyd sampling: for j = pop-size .. pop-1, val uniform on
 * [0, j]; val if not taken yet, else j; the taken set an open-addressing
 * hash of 2^k slots (the smallest mask >= 1.2 * size), probed linearly. */
static dlb_status unique_floyd(dlb_pcg64 *g, int64_t pop, int64_t size, int shuffle, int64_t *out,
                               dlb_work *w, dlb_budget *budget, dlb_error *err) {
  uint64_t mask = dlb_all_ones_mask((uint64_t)(1.2 * (double)size)), *set;
  size_t nbytes;
  if (!(nbytes = bytes_of((int64_t)(mask + 1), sizeof(uint64_t), err))) return DLB_E_OUT_OF_MEMORY;
  if (!(set = scratch_new(budget, nbytes, err))) return err->code;
  memset(set, 0xff, nbytes);
  for (int64_t j = pop - size; j < pop; j++) {
    uint64_t val = dlb_bounded64_one(g, (uint64_t)j), loc = val & mask;
    while (set[loc] != UINT64_MAX && set[loc] != val) loc = (loc + 1) & mask;
    if (set[loc] == UINT64_MAX) { /* val not in the set */
      set[loc] = val;
      out[j - pop + size] = (int64_t)val;
    } else { /* insert j instead */
      loc = (uint64_t)j & mask;
      while (set[loc] != UINT64_MAX) loc = (loc + 1) & mask;
      set[loc] = (uint64_t)j;
      out[j - pop + size] = j;
    }
    if (dlb_work_tick(w, 1)) break;
  }
  scratch_free(budget, set, nbytes);
  if (shuffle && !w->interrupted) shuffle_int(g, size, 1, out, w);
  return DLB_OK;
}

dlb_status dlb_choice_unique(dlb_pcg64 *g, int64_t pop, int64_t size, int shuffle, int64_t *out,
                             dlb_budget *budget, const char *op, dlb_error *err) {
  dlb_work w;
  dlb_pcg64 saved = *g;
  int tail = dlb_choice_uses_tail(pop, size, shuffle);
  dlb_status st;
  DLB_ASSERT(0 <= size && size <= pop);
  if ((st = dlb_work_begin(&w, budget, tail ? sat_add(pop, pop) : sat_add(size, size), op, err)) !=
      DLB_OK)
    return st;
  st = tail ? unique_tail(g, pop, size, out, &w, budget, err)
            : unique_floyd(g, pop, size, shuffle, out, &w, budget, err);
  return finish(&w, st, g, &saved, op, err);
}
