/* budget.c -- the memory budget of one lua_State. */
#include <stdint.h>
#include <stdlib.h>
#include "budget.h"
#include "invariant.h"

dlb_budget *dlb_budget_new(void) {
  dlb_budget *b = malloc(sizeof *b);
  if (!b) return NULL;
  atomic_init(&b->refs, 1);
  atomic_init(&b->in_use, 0);
  atomic_init(&b->peak, 0);
  atomic_init(&b->limit, 0);
  atomic_init(&b->held, 0);
  atomic_init(&b->interrupt, 0);
  atomic_init(&b->work_limit, 0);
  b->emptied = NULL;
  b->emptied_arg = NULL;
  return b;
}

void dlb_budget_retain(dlb_budget *budget) {
  atomic_fetch_add_explicit(&budget->refs, 1, memory_order_relaxed);
}

void dlb_budget_release(dlb_budget *budget) {
  if (budget && atomic_fetch_sub_explicit(&budget->refs, 1, memory_order_acq_rel) == 1)
    free(budget);
}

/* Whether used + nbytes passes limit (0: none) or reaches the open flag. */
static int exceeds(size_t used, size_t nbytes, size_t limit) {
  return nbytes >= DLB_BUDGET_OPEN - used || (limit && used + nbytes > limit);
}

void dlb_budget_open(dlb_budget *budget, void (*emptied)(void *arg), void *arg) {
  DLB_ASSERT(!budget->emptied && atomic_load_explicit(&budget->in_use, memory_order_relaxed) == 0);
  budget->emptied = emptied;
  budget->emptied_arg = arg;
  atomic_store_explicit(&budget->in_use, DLB_BUDGET_OPEN, memory_order_release);
}

/* The word fell from old by amount: when that emptied it, the last of the
 * state and its charges has ended, here and only here (the acquire orders
 * emptied after every earlier use). Otherwise the budget may be gone. */
static void taken(dlb_budget *budget, size_t old, size_t amount) {
  if (old == amount && budget->emptied) budget->emptied(budget->emptied_arg);
}

void dlb_budget_close(dlb_budget *budget) {
  if (!budget || !budget->emptied) return;
  taken(budget,
        atomic_fetch_sub_explicit(&budget->in_use, DLB_BUDGET_OPEN, memory_order_acq_rel),
        DLB_BUDGET_OPEN);
}

size_t dlb_budget_in_use(const dlb_budget *budget) {
  return atomic_load_explicit(&budget->in_use, memory_order_relaxed) & ~DLB_BUDGET_OPEN;
}

void dlb_budget_hold(dlb_budget *budget, size_t nbytes) {
  if (budget) atomic_fetch_add_explicit(&budget->held, nbytes, memory_order_relaxed);
}

void dlb_budget_unhold(dlb_budget *budget, size_t nbytes) {
  DLB_ASSERT(!budget || atomic_load_explicit(&budget->held, memory_order_relaxed) >= nbytes);
  if (budget) atomic_fetch_sub_explicit(&budget->held, nbytes, memory_order_relaxed);
}

int dlb_budget_would_exceed(dlb_budget *budget, size_t nbytes) {
  size_t limit = atomic_load_explicit(&budget->limit, memory_order_relaxed);
  return limit && exceeds(dlb_budget_in_use(budget), nbytes, limit);
}

dlb_status dlb_budget_charge(dlb_budget *budget, size_t nbytes, dlb_error *err) {
  size_t word = atomic_load_explicit(&budget->in_use, memory_order_relaxed), used, limit, peak;
  do {
    used = word & ~DLB_BUDGET_OPEN;
    limit = atomic_load_explicit(&budget->limit, memory_order_relaxed);
    if (exceeds(used, nbytes, limit)) {
      dlb_fail(err, DLB_E_OUT_OF_MEMORY,
               "the memory limit of %zu bytes is reached: %zu bytes in use, %zu more asked for",
               limit, used, nbytes);
      dlb_error_hint(err, "the host limits this state's memory (dlb_set_memory_limit): delete "
                          "arrays you no longer need (a:delete()) or use smaller ones");
      return DLB_E_OUT_OF_MEMORY;
    }
  } while (!atomic_compare_exchange_weak_explicit(&budget->in_use, &word, word + nbytes,
                                                  memory_order_relaxed, memory_order_relaxed));
  /* Raise the peak to what this charge reached (another thread may race it higher). */
  peak = atomic_load_explicit(&budget->peak, memory_order_relaxed);
  while (used + nbytes > peak &&
         !atomic_compare_exchange_weak_explicit(&budget->peak, &peak, used + nbytes,
                                                memory_order_relaxed, memory_order_relaxed)) {
  }
  return DLB_OK;
}

void dlb_budget_refund(dlb_budget *budget, size_t nbytes) {
  /* Every refund matches an earlier charge: in_use never wraps. */
  DLB_ASSERT(dlb_budget_in_use(budget) >= nbytes);
  if (nbytes) /* 0 would take nothing: it must not end an emptied budget again */
    taken(budget, atomic_fetch_sub_explicit(&budget->in_use, nbytes, memory_order_acq_rel), nbytes);
}
