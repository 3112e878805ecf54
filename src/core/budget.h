/* budget.h -- the memory budget of one lua_State: bytes in use, peak, limit.
 *
 * Every buffer allocated on (or imported into) a backend of a state is
 * charged to that state's budget until the buffer is freed, on whatever
 * thread and however late (after lua_close too): the budget is refcounted
 * and every backend of the state holds a reference. All counters are
 * atomic; a charge either fits under the limit and is counted, or fails
 * with nothing counted.
 *
 * An open budget (dlb_budget_open) also keeps something alive for its
 * charges: while the state is open or any charged byte is out, in one
 * atomic word, so that the last of the two to end (dlb_budget_close, or the
 * refund that empties a closed budget, on any thread) and only it calls
 * emptied. The state's cpu backend lives by this instead of a reference
 * per buffer: two locked instructions fewer for every temporary array.
 */
#ifndef DLB_CORE_BUDGET_H
#define DLB_CORE_BUDGET_H

#include <stdatomic.h>
#include <stddef.h>
#include "error.h"

typedef struct dlb_budget {
  atomic_size_t refs;
  /* Bytes charged and not yet refunded, plus DLB_BUDGET_OPEN while open:
   * read it with dlb_budget_in_use. */
  atomic_size_t in_use;
  atomic_size_t peak;   /* the highest in_use so far */
  atomic_size_t limit;  /* 0: no limit */
  /* Bytes of the host's own memory that arrays wrap (dlb_push_external):
   * counted for the collector's pacing and dl.memory(), never charged, so
   * never refused: that memory is the host's, not the script's. */
  atomic_size_t held;
  /* The host's bounds on work (work.h): set from any thread or a signal
   * handler, read by the loops of every call of the state. */
  atomic_int interrupt;            /* nonzero: stop, until the host clears it */
  atomic_int_least64_t work_limit; /* elements one call may visit; 0: no limit */
  void (*emptied)(void *arg); /* set by dlb_budget_open, else NULL */
  void *emptied_arg;
} dlb_budget;

/* The flag of in_use that an open budget carries; bytes stay below it. */
#define DLB_BUDGET_OPEN ((size_t)1 << (sizeof(size_t) * 8 - 1))

/* A new budget with no limit and one reference, or NULL when out of memory. */
dlb_budget *dlb_budget_new(void);
void dlb_budget_retain(dlb_budget *budget);
/* Drops a reference; the last one frees it. NULL is fine. */
void dlb_budget_release(dlb_budget *budget);

/* Opens the budget, once, before any charge: emptied(arg) runs once, when
 * the budget is closed and holds no charge (see above). */
void dlb_budget_open(dlb_budget *budget, void (*emptied)(void *arg), void *arg);
/* Closes an open budget (the state ends); a budget never opened: nothing. */
void dlb_budget_close(dlb_budget *budget);
/* Bytes charged and not yet refunded. */
size_t dlb_budget_in_use(const dlb_budget *budget);
/* Counts nbytes more, or fails with DLB_E_OUT_OF_MEMORY (message and hint
 * name the limit and the bytes in use) when that would pass the limit. */
dlb_status dlb_budget_charge(dlb_budget *budget, size_t nbytes, dlb_error *err);
/* Gives back bytes an earlier charge counted. Any thread; the refund that
 * empties a closed budget runs its emptied (which may free the budget). */
void dlb_budget_refund(dlb_budget *budget, size_t nbytes);
/* Counts (hold) and uncounts (unhold) the host's own memory: never refused,
 * not in in_use. Any thread; NULL is fine. */
void dlb_budget_hold(dlb_budget *budget, size_t nbytes);
void dlb_budget_unhold(dlb_budget *budget, size_t nbytes);
/* Whether a charge of nbytes would fail now (a hint to collect garbage first). */
int dlb_budget_would_exceed(dlb_budget *budget, size_t nbytes);

#endif
