/* iter.c -- walking several operands of one shape together. */
#include "invariant.h"
#include "iter.h"
#include "work.h"

/* |x| of a stride (INT64_MIN cannot occur: strides of reached elements fit). */
static int64_t magnitude(int64_t x) { return x < 0 ? -x : x; }

/* p + offset bytes. Through an integer: an operand that reaches no memory
 * (size 0 in a dim another operand lacks, as matmul's K = 0) may be NULL,
 * and NULL plus an offset is undefined in C even when never read. */
static char *offset_pointer(char *p, int64_t offset) {
  return (char *)((uintptr_t)p + (uintptr_t)offset);
}

/* Swaps dims a and b of every operand. */
static void swap_dims(dlb_iter *it, int a, int b) {
  int64_t t = it->shape[a];
  it->shape[a] = it->shape[b];
  it->shape[b] = t;
  for (int k = 0; k < it->nop; k++) {
    t = it->strides[k][a];
    it->strides[k][a] = it->strides[k][b];
    it->strides[k][b] = t;
  }
}

/* Whether dim inner can merge into dim outer in every operand: one step of
 * outer is a whole run of inner. */
static int mergeable(const dlb_iter *it, int outer, int inner) {
  for (int k = 0; k < it->nop; k++) {
    int64_t span;
    if (__builtin_mul_overflow(it->strides[k][inner], it->shape[inner], &span) ||
        span != it->strides[k][outer])
      return 0;
  }
  return 1;
}

void dlb_iter_init(dlb_iter *it, int nop, int ndim, const int64_t *shape, char *const *data,
                   const int64_t *const *strides) {
  dlb_iter_init_order(it, nop, ndim, shape, data, strides, 0);
}

void dlb_iter_init_order(dlb_iter *it, int nop, int ndim, const int64_t *shape, char *const *data,
                         const int64_t *const *strides, int order) {
  int n = 0;
  DLB_ASSERT(nop >= 1 && nop <= DLB_ITER_MAX && order >= 0 && order < nop);
  DLB_ASSERT(ndim >= 0 && ndim <= DLB_MAX_NDIM);
  it->nop = nop;
  for (int k = 0; k < nop; k++) it->data[k] = data[k];
  for (int d = 0; d < ndim; d++)
    if (shape[d] == 0) { /* nothing to visit: one empty dim */
      it->ndim = 1;
      it->shape[0] = 0;
      for (int k = 0; k < nop; k++) it->strides[k][0] = 0;
      return;
    }
  for (int d = 0; d < ndim; d++) { /* extent-1 dims go */
    if (shape[d] == 1) continue;
    it->shape[n] = shape[d];
    for (int k = 0; k < nop; k++) it->strides[k][n] = strides[k][d];
    n++;
  }
  it->ndim = n;
  /* Flip dims operand `order` walks backwards: start at their far end. */
  for (int d = 0; d < n; d++) {
    if (it->strides[order][d] >= 0) continue;
    for (int k = 0; k < nop; k++) {
      it->data[k] = offset_pointer(it->data[k], (it->shape[d] - 1) * it->strides[k][d]);
      it->strides[k][d] = -it->strides[k][d];
    }
  }
  /* Order by operand `order`'s strides, largest outermost (stable insertion
   * sort: ties, such as broadcast dims, keep their order). */
  for (int d = 1; d < n; d++)
    for (int e = d;
         e > 0 && magnitude(it->strides[order][e - 1]) < magnitude(it->strides[order][e]); e--)
      swap_dims(it, e - 1, e);
  /* Merge neighbours contiguous in every operand. */
  int out = 0;
  for (int d = 0; d < n; d++) {
    if (out > 0 && mergeable(it, out - 1, d)) {
      it->shape[out - 1] *= it->shape[d];
      for (int k = 0; k < nop; k++) it->strides[k][out - 1] = it->strides[k][d];
      continue;
    }
    it->shape[out] = it->shape[d];
    for (int k = 0; k < nop; k++) it->strides[k][out] = it->strides[k][d];
    out++;
  }
  it->ndim = out;
}

int dlb_iter_empty(const dlb_iter *it) { return it->ndim == 1 && it->shape[0] == 0; }

int dlb_iter_each(const dlb_iter *it, int inner, int (*body)(char **data, void *aux), void *aux) {
  int64_t index[DLB_MAX_NDIM] = {0};
  int outer = it->ndim - inner;
  char *data[DLB_ITER_MAX];
  if (dlb_iter_empty(it)) return 0;
  for (;;) {
    int st;
    for (int k = 0; k < it->nop; k++) {
      int64_t offset = 0;
      for (int d = 0; d < outer; d++) offset += index[d] * it->strides[k][d];
      data[k] = offset_pointer(it->data[k], offset);
    }
    if ((st = body(data, aux)) != 0) return st;
    int d = outer - 1; /* the odometer over the outer dims */
    while (d >= 0 && ++index[d] == it->shape[d]) index[d--] = 0;
    if (d < 0) return 0;
  }
}

/* dlb_iter_run's body: the loop over the inner dim. */
typedef struct run_ctx {
  const dlb_iter *it;
  dlb_loop loop;
  void *aux;
  dlb_work *work; /* the thread's current work: counted, and stopped when interrupted */
} run_ctx;

/* The loop over n elements from data, in pieces of DLB_WORK_CHECK_EVERY
 * with a look at the interrupt between them. Pieces start at multiples of
 * DLB_WORK_CHECK_EVERY from the run's start, so a kernel that blocks its
 * run (pairwise sums: DLB_REDUCE_RUN divides it) computes as in one piece. */
static int run_pieces(const run_ctx *r, char **data, const int64_t *steps, int64_t n) {
  char *p[DLB_ITER_MAX];
  int nop = r->it->nop;
  for (int k = 0; k < nop; k++) p[k] = data[k];
  while (n > 0) {
    int64_t m = n < DLB_WORK_CHECK_EVERY ? n : DLB_WORK_CHECK_EVERY;
    int st = r->loop(p, steps, m, r->aux);
    if (st) return st;
    if (dlb_work_tick(r->work, m)) return DLB_ITER_STOPPED;
    n -= m;
    if (n > 0)
      for (int k = 0; k < nop; k++) p[k] = offset_pointer(p[k], m * steps[k]);
  }
  return 0;
}

static int run_inner(char **data, void *aux) {
  const run_ctx *r = aux;
  const dlb_iter *it = r->it;
  int64_t steps[DLB_ITER_MAX];
  if (it->ndim == 0) {
    for (int k = 0; k < it->nop; k++) steps[k] = 0;
    return r->loop(data, steps, 1, r->aux);
  }
  for (int k = 0; k < it->nop; k++) steps[k] = it->strides[k][it->ndim - 1];
  if (!r->work) return r->loop(data, steps, it->shape[it->ndim - 1], r->aux);
  return run_pieces(r, data, steps, it->shape[it->ndim - 1]);
}

int dlb_iter_run(const dlb_iter *it, dlb_loop loop, void *aux) {
  run_ctx r = {it, loop, aux, dlb_work_current()};
  return dlb_iter_each(it, it->ndim > 0 ? 1 : 0, run_inner, &r);
}
