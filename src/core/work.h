/* work.h -- the host's bounds on the work of one call: an interrupt it can
 * raise from any thread or a signal handler, and a limit on the elements a
 * call may visit (both held by the state's budget, budget.h).
 *
 * A call that may run long (element-wise operations, reductions, products,
 * casts, copies and fills, joins, tobytes, totable, file writes) brackets
 * its work with dlb_work_begin and dlb_work_end. Begin refuses at once, with
 * DLB_E_INTERRUPTED, a call while the interrupt is raised or one that would
 * visit more elements than the work limit. Between the two, the work is
 * the thread's current one: the iterator (iter.h) and the loops outside it
 * count what they do with dlb_work_tick and look at the interrupt every
 * DLB_WORK_CHECK_EVERY elements; once raised, the walk stops and end turns
 * the call's status into DLB_E_INTERRUPTED. What the call wrote so far
 * stays (an `out` array may hold a partial result); every array stays
 * consistent. Nesting is allowed (a call that copies on the way); work of
 * a core caller with no budget (C tests) is never stopped. */
#ifndef DLB_CORE_WORK_H
#define DLB_CORE_WORK_H

#include <stdint.h>
#include "array.h"
#include "budget.h"

/* How many elements pass between two looks at the interrupt: a look is one
 * atomic load, under 1% of the cheapest loop's time at this spacing. */
#define DLB_WORK_CHECK_EVERY ((int64_t)1 << 16)

typedef struct dlb_work {
  dlb_budget *budget;     /* whose interrupt and limit apply; NULL: none */
  int64_t since_check;    /* elements since the last look */
  int interrupted;        /* a look saw the interrupt */
  struct dlb_work *outer; /* the work this one runs inside, restored by end */
} dlb_work;

/* Begins the work of op in the state of budget (NULL: nothing is bounded),
 * visiting `elements` elements. Fails with DLB_E_INTERRUPTED when the
 * interrupt is raised or elements passes the work limit (then there is
 * nothing to end). */
dlb_status dlb_work_begin(dlb_work *w, dlb_budget *budget, int64_t elements, const char *op,
                          dlb_error *err);
/* begin's checks alone, for loops that must not become the thread's work
 * because they can leave by a longjmp (the binding's loops that make Lua
 * values): DLB_E_INTERRUPTED as begin fails. Such loops look at
 * dlb_work_raised every DLB_WORK_CHECK_EVERY elements themselves. */
dlb_status dlb_work_admit(dlb_budget *budget, int64_t elements, const char *op, dlb_error *err);
/* Whether budget's interrupt is raised (NULL: never). */
int dlb_work_raised(const dlb_budget *budget);
/* The error of work that saw the interrupt. */
dlb_status dlb_work_interrupted(const char *op, dlb_error *err);
/* Ends w (restoring the thread's outer work) and returns st, or
 * DLB_E_INTERRUPTED naming op when a look saw the interrupt. */
dlb_status dlb_work_end(dlb_work *w, dlb_status st, const char *op, dlb_error *err);
/* The thread's current work, or NULL. */
dlb_work *dlb_work_current(void);
/* Looks at the interrupt now; 1 when the work must stop. */
int dlb_work_poll(dlb_work *w);
/* Tests only (never set by a host): called by every look at the interrupt,
 * before it looks, with w->since_check still the elements counted since the
 * last one; a test counts the looks or raises the interrupt at one
 * (tests/c/test_work_looks.c). NULL: nothing is called. */
extern void (*dlb_work_poll_hook)(dlb_work *w);

/* Counts n elements done by the current work w (NULL: nothing); 1 when the
 * work must stop. */
static inline int dlb_work_tick(dlb_work *w, int64_t n) {
  if (!w) return 0;
  if ((w->since_check += n) < DLB_WORK_CHECK_EVERY) return w->interrupted;
  return dlb_work_poll(w);
}

/* The budget of a's state (its buffer's backend's), or NULL. */
dlb_budget *dlb_array_budget(const dlb_array *a);

#endif
