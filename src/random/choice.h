/* choice.h -- NumPy's Generator.choice (numpy/random/_generator.pyx of
 * NumPy 1.24.2) over host memory: the index draws of its four routes, bit
 * for bit. With replacement and no p, choice is integers(0, n) (dlb_draw);
 * the other three are here:
 *
 *   with p, replacement:    cdf = cumsum(p) / its last; the indices are
 *                           searchsorted(cdf, random(size), side = right)
 *   with p, no replacement: rounds of that over p with the found indices'
 *                           p zeroed, keeping each round's new indices in
 *                           order of first appearance
 *   no p, no replacement:   Floyd's sampling with NumPy's hash set (then,
 *                           with shuffle, a shuffle of the result), or, for
 *                           a population above 10,000 of which more than a
 *                           50th (20th without shuffle) is taken, the tail
 *                           of a partial Fisher-Yates shuffle of arange(n)
 *
 * Each is bounded work (work.h) of op in budget's state (NULL: unbounded):
 * refused before anything is drawn when the work limit does not allow it or
 * the interrupt is raised, stopped once the interrupt is seen; a call that
 * fails leaves the generator as it was. The scratch memory a route needs
 * (choice_scratch_bytes) is charged to budget before it is allocated, and
 * given back before the call returns. No Lua here. */
#ifndef DLB_RANDOM_CHOICE_H
#define DLB_RANDOM_CHOICE_H

#include "../core/budget.h"
#include "../core/error.h"
#include "pcg64.h"

/* What is wrong with probabilities p[0..n) for NumPy's checks, in NumPy's
 * order: their Kahan sum is NaN, one is negative, or the sum is more than
 * atol from 1 (NumPy's atol: sqrt of float64's epsilon, or of p's own
 * float dtype's when that is larger). */
typedef enum dlb_choice_p_problem {
  DLB_CHOICE_P_OK,
  DLB_CHOICE_P_NAN,
  DLB_CHOICE_P_NEGATIVE,
  DLB_CHOICE_P_SUM
} dlb_choice_p_problem;

dlb_choice_p_problem dlb_choice_check_p(const double *p, int64_t n, double atol);

/* NumPy's kahan_sum (_common.pyx): 0 for n <= 0. */
double dlb_kahan_sum(const double *p, int64_t n);

/* How many of p[0..n) are > 0. */
int64_t dlb_choice_count_positive(const double *p, int64_t n);

/* Whether choice without p and without replacement takes the tail-shuffle
 * route for size of pop (else Floyd's). */
int dlb_choice_uses_tail(int64_t pop, int64_t size, int shuffle);

/* out[0..size) = indices into p[0..n) (checked: DLB_CHOICE_P_OK), drawn
 * with replacement. */
dlb_status dlb_choice_p(dlb_pcg64 *g, const double *p, int64_t n, int64_t *out, int64_t size,
                        dlb_budget *budget, const char *op, dlb_error *err);

/* out[0..size) = size distinct indices into p[0..n) (checked, with at
 * least size of them > 0), drawn without replacement. */
dlb_status dlb_choice_p_unique(dlb_pcg64 *g, const double *p, int64_t n, int64_t *out, int64_t size,
                               dlb_budget *budget, const char *op, dlb_error *err);

/* out[0..size) = size distinct integers of [0, pop) (0 <= size <= pop),
 * NumPy's route for pop, size and shuffle. */
dlb_status dlb_choice_unique(dlb_pcg64 *g, int64_t pop, int64_t size, int shuffle, int64_t *out,
                             dlb_budget *budget, const char *op, dlb_error *err);

#endif
