/* work.c -- the host's bounds on the work of one call. */
#include <stdatomic.h>
#include "buffer.h"
#include "work.h"

static _Thread_local dlb_work *current;

dlb_budget *dlb_array_budget(const dlb_array *a) {
  if (!a || !a->buffer || !a->buffer->backend) return NULL;
  return a->buffer->backend->budget;
}

dlb_work *dlb_work_current(void) { return current; }

int dlb_work_raised(const dlb_budget *b) {
  return b && atomic_load_explicit(&b->interrupt, memory_order_relaxed) != 0;
}

dlb_status dlb_work_interrupted(const char *op, dlb_error *err) {
  dlb_fail(err, DLB_E_INTERRUPTED, "%s: the host interrupted dlbridge's work", op);
  dlb_error_hint(err, "the host stops long work (dlb_interrupt) until it clears the interrupt; "
                      "an out array may hold a partial result");
  return DLB_E_INTERRUPTED;
}

dlb_status dlb_work_admit(dlb_budget *b, int64_t elements, const char *op, dlb_error *err) {
  int64_t limit;
  if (!b) return DLB_OK;
  if (dlb_work_raised(b)) return dlb_work_interrupted(op, err);
  limit = atomic_load_explicit(&b->work_limit, memory_order_relaxed);
  if (limit > 0 && elements > limit) {
    dlb_fail(err, DLB_E_INTERRUPTED,
             "%s would visit %lld elements, more than the %lld the host allows one call", op,
             (long long)elements, (long long)limit);
    dlb_error_hint(err, "the host bounds the work of one call (dlb_set_work_limit): work on "
                        "smaller arrays, or in parts");
    return DLB_E_INTERRUPTED;
  }
  return DLB_OK;
}

dlb_status dlb_work_begin(dlb_work *w, dlb_budget *b, int64_t elements, const char *op,
                          dlb_error *err) {
  dlb_status st = dlb_work_admit(b, elements, op, err);
  if (st != DLB_OK) return st;
  w->budget = b;
  w->since_check = 0;
  w->interrupted = 0;
  w->outer = current;
  current = w;
  return DLB_OK;
}

void (*dlb_work_poll_hook)(dlb_work *w);

int dlb_work_poll(dlb_work *w) {
  if (dlb_work_poll_hook) dlb_work_poll_hook(w);
  w->since_check = 0;
  if (dlb_work_raised(w->budget)) w->interrupted = 1;
  return w->interrupted;
}

dlb_status dlb_work_end(dlb_work *w, dlb_status st, const char *op, dlb_error *err) {
  current = w->outer;
  if (w->interrupted) return dlb_work_interrupted(op, err);
  return st;
}
