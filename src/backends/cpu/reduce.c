/* reduce.c -- the host's reductions (the cpu kernels' reduce entry): one
 * walk of the input in memory order into accumulators shaped like the
 * result; the two passes of std/var; argmin/argmax by search along a dim or
 * by rows; beside them the nan-functions' counts of numbers. The core
 * planned the call (compute/reduce.c states the semantics); here it only
 * runs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../../compute/reduce.h"
#include "../../core/array.h"
#include "../../core/work.h"
#include "casts.h"
#include "cpu.h"
#include "reduce_loops.h"

static dlb_dtype real_of(dlb_dtype t) {
  return t == DLB_COMPLEX64 ? DLB_FLOAT32 : t == DLB_COMPLEX128 ? DLB_FLOAT64 : t;
}

/* Whether elements of dtype t can be NaN (float and complex dtypes): where
 * they cannot, a nan-function is the reduction without "nan". */
static int may_hold_nan(dlb_dtype t) {
  dlb_kind k = dlb_dtype_get(t)->kind;
  return k == DLB_KIND_FLOAT || k == DLB_KIND_COMPLEX;
}

/* The dtype of a tensor the core made. */
static dlb_dtype dtype_of(DLDataType t) { return dlb_dtype_of_dl(t); }

/* The dtypes one reduction runs with: elements of the input are converted
 * to loop_in (when it differs), folded into accumulators of acc, and the
 * accumulators converted to result at the end. */
typedef struct reduce_types {
  dlb_dtype result, loop_in, acc;
} reduce_types;

/* --- the plan: a reduction's geometry -------------------------------------- */

/* Elements over the input's dims: data and byte strides; an operand shaped
 * like the result has stride 0 along the reduced dims. */
typedef struct strided {
  char *data;
  dlb_dtype dtype;
  int64_t strides[DLB_MAX_NDIM];
} strided;

typedef struct plan {
  dlb_reduce_op op;
  reduce_types t;
  int ndim;
  int64_t shape[DLB_MAX_NDIM];
  uint64_t mask;     /* the reduced dims */
  int64_t count;     /* elements folded into each result element */
  int64_t out_numel; /* result elements */
  strided in;
  double ddof;
  int64_t index_base;
  dlb_backend *cpu; /* temporaries */
  int misaligned;   /* the input's elements are not aligned for C loads: read through casts */
} plan;

static int reduced(const plan *p, int d) { return (int)(p->mask >> d & 1); }

/* |x| of a byte stride (strides of reachable elements are far from INT64_MIN). */
static int64_t magnitude(int64_t x) { return x < 0 ? -x : x; }

/* Whether every element of x is aligned for C loads of its size (up to 8). */
static int elements_aligned(const strided *x, int ndim, int64_t itemsize) {
  uint64_t mask = (uint64_t)(itemsize > 8 ? 8 : itemsize) - 1, bits = (uintptr_t)x->data;
  for (int d = 0; d < ndim; d++) bits |= (uint64_t)x->strides[d];
  return (bits & mask) == 0;
}

/* The plan of a kernel call (the core planned and checked it). */
static void plan_of_call(const dlb_reduce_call *c, dlb_backend *scratch, plan *p) {
  int64_t itemsize;
  memset(p, 0, sizeof *p);
  p->op = (dlb_reduce_op)c->op;
  p->cpu = scratch;
  p->ddof = c->ddof;
  p->index_base = c->index_base;
  p->t.result = dtype_of(c->out.dtype);
  p->t.loop_in = dtype_of(c->loop_in);
  p->t.acc = dtype_of(c->acc);
  p->mask = c->dims;
  p->ndim = c->in.ndim;
  p->in.data = c->in.data;
  p->in.dtype = dtype_of(c->in.dtype);
  itemsize = (int64_t)dlb_dtype_get(p->in.dtype)->itemsize;
  p->count = 1;
  p->out_numel = 1;
  for (int d = 0; d < p->ndim; d++) {
    int64_t e = c->in.shape[d];
    p->shape[d] = e;
    if (reduced(p, d))
      p->count = e == 0 || p->count == 0 ? 0 : p->count > INT64_MAX / e ? INT64_MAX : p->count * e;
    else p->out_numel *= e; /* the result's elements: allocated, so they fit */
  }
  for (int d = 0; d < p->ndim; d++)
    /* Strides of reachable elements fit in bytes; those of extent-1 dims
     * and of size-0 arrays reach nothing and may be anything: 0. */
    p->in.strides[d] =
        p->count > 0 && p->out_numel > 0 && p->shape[d] > 1 ? c->in.strides[d] * itemsize : 0;
  p->misaligned = !elements_aligned(&p->in, p->ndim, itemsize);
}

/* --- walking ------------------------------------------------------------- */

/* walk over at most one dim d (-1: none) of n > 0 elements, without the
 * iterator (small calls spent half their time setting one up): what
 * dlb_iter_run does there, the dim flipped where operand order walks it
 * backwards and cut into the same pieces between looks at the interrupt. */
static int walk_line(int nop, strided *const *ops, int order, int d, int64_t n, dlb_loop loop,
                     void *aux) {
  char *data[DLB_ITER_MAX];
  int64_t steps[DLB_ITER_MAX];
  dlb_work *work = dlb_work_current();
  int flip = d >= 0 && ops[order]->strides[d] < 0;
  for (int k = 0; k < nop; k++) {
    steps[k] = d >= 0 ? ops[k]->strides[d] : 0;
    /* (n - 1) * step: the offset of an element the operand holds */
    data[k] = flip ? ops[k]->data + (n - 1) * steps[k] : ops[k]->data;
    if (flip) steps[k] = -steps[k];
  }
  if (!work || d < 0) return loop(data, steps, n, aux);
  while (n > 0) { /* pieces from the run's start, as the iterator's */
    int64_t m = n < DLB_WORK_CHECK_EVERY ? n : DLB_WORK_CHECK_EVERY;
    int st = loop(data, steps, m, aux);
    if (st) return st;
    if (dlb_work_tick(work, m)) return DLB_ITER_STOPPED;
    n -= m;
    for (int k = 0; n > 0 && k < nop; k++) data[k] += m * steps[k];
  }
  return 0;
}

/* A walk's loop over the runs of a dim it leaves out: each of a call's n
 * elements starts a run of m, steps[k] bytes apart in operand k, handed
 * to loop one run a call. */
typedef struct runs {
  dlb_loop loop;
  void *aux;
  int nop;
  int64_t m, steps[DLB_ITER_MAX];
} runs;

static int each_run(char **data, const int64_t *steps, int64_t n, void *aux) {
  const runs *r = (const runs *)aux;
  char *at[DLB_ITER_MAX];
  for (int64_t j = 0; j < n; j++) {
    int st;
    for (int k = 0; k < r->nop; k++) at[k] = data[k] + j * steps[k];
    if ((st = r->loop(at, r->steps, r->m, r->aux)) != 0) return st;
  }
  return 0;
}

/* Runs loop over nop operands (out_space: over the result's elements only,
 * the reduced dims at index 0), dims ordered by operand order's strides;
 * a fold (swap_inner) may pass the short-runs kernel of its loop. */
static int walk_runs(const plan *p, int nop, strided *const *ops, int out_space, int order,
                     dlb_loop loop, void *aux, int swap_inner, dlb_loop short_runs) {
  int64_t shape[DLB_MAX_NDIM];
  char *data[DLB_ITER_MAX];
  const int64_t *strides[DLB_ITER_MAX];
  dlb_iter it;
  int line = -1, lines = 0; /* the dims of more than one element: the last, and how many */
  for (int d = 0; d < p->ndim; d++) {
    shape[d] = out_space && reduced(p, d) ? 1 : p->shape[d];
    if (shape[d] != 1) {
      line = d;
      lines += shape[d] == 0 ? DLB_MAX_NDIM : 1; /* nothing to visit: the iterator's case */
    }
  }
  if (lines <= 1) return walk_line(nop, ops, order, line, line >= 0 ? shape[line] : 1, loop, aux);
  for (int k = 0; k < nop; k++) {
    data[k] = ops[k]->data;
    strides[k] = ops[k]->strides;
  }
  dlb_iter_init_order(&it, nop, p->ndim, shape, data, strides, order);
  if (swap_inner && it.ndim >= 2) {
    /* Few elements in the inner dim make many short kernel calls: put a
     * longer dim of the other kind there. A kept dim moves inside a lone
     * reduced dim of fewer than 8 only: rows then add in the order of
     * NumPy's n < 8 loop, the same bits. */
    int inner = it.ndim - 1, inner_kept = it.strides[0][inner] != 0, pick = -1;
    for (int d = inner - 1; d >= 0 && pick < 0; d--)
      if ((it.strides[0][d] != 0) != inner_kept && it.shape[d] > it.shape[inner]) pick = d;
    if (pick >= 0 &&
        (inner_kept ? it.shape[inner] < 16 : it.shape[inner] < 8 && it.shape[inner] == p->count)) {
      int64_t e = it.shape[pick];
      int64_t s[DLB_ITER_MAX];
      for (int k = 0; k < nop; k++) s[k] = it.strides[k][pick];
      for (int d = pick; d < inner; d++) {
        it.shape[d] = it.shape[d + 1];
        for (int k = 0; k < nop; k++) it.strides[k][d] = it.strides[k][d + 1];
      }
      it.shape[inner] = e;
      for (int k = 0; k < nop; k++) it.strides[k][inner] = s[k];
    } else if (pick >= 0 && !inner_kept && it.shape[inner] < 8) {
      /* Short reduced runs beside a longer kept dim (a 2x2 block mean:
       * runs of 2) that do not move: the walk leaves their dim out and
       * each call covers a run per element of the next dim, in the same
       * order as before (the same bits). */
      runs r = {loop, aux, nop, it.shape[inner], {0}};
      dlb_short_runs sr = {it.shape[inner], it.strides[1][inner]};
      for (int k = 0; k < nop; k++) r.steps[k] = it.strides[k][inner];
      it.ndim--;
      return short_runs && nop == 2 && r.steps[0] == 0 ? dlb_iter_run(&it, short_runs, &sr)
                                                       : dlb_iter_run(&it, each_run, &r);
    }
  }
  return dlb_iter_run(&it, loop, aux);
}

static int walk(const plan *p, int nop, strided *const *ops, int out_space, int order,
                dlb_loop loop, void *aux, int swap_inner) {
  return walk_runs(p, nop, ops, out_space, order, loop, aux, swap_inner, NULL);
}

/* A temporary shaped like the result (out_shaped) or the input, its dims
 * laid out in the input's memory order (so walks in that order stream). */
static dlb_status temporary(const plan *p, dlb_dtype dtype, int out_shaped, dlb_array *mem,
                            strided *v, dlb_error *err) {
  int order[DLB_MAX_NDIM], n = 0;
  int64_t numel = 1, step = (int64_t)dlb_dtype_get(dtype)->itemsize;
  for (int d = 0; d < p->ndim; d++) {
    int64_t e = out_shaped && reduced(p, d) ? 1 : p->shape[d];
    v->strides[d] = 0;
    if (e == 1) continue;
    numel *= e; /* no overflow: at most the input's element count */
    order[n++] = d;
  }
  /* Stable sort of the dims by the input's |stride|, largest first. */
  for (int i = 1; i < n; i++)
    for (int j = i;
         j > 0 && magnitude(p->in.strides[order[j - 1]]) < magnitude(p->in.strides[order[j]]);
         j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int i = n - 1; i >= 0; i--) {
    v->strides[order[i]] = step;
    if (__builtin_mul_overflow(step, p->shape[order[i]], &step))
      return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "%s: a temporary of %lld elements does not fit",
                      dlb_reduce_name(p->op), (long long)numel);
  }
  dlb_status st = dlb_array_allocate(mem, p->cpu, 0, dtype, 1, &numel, 0, err);
  if (st != DLB_OK) return st;
  v->data = dlb_array_host_data(mem);
  v->dtype = dtype;
  return DLB_OK;
}

/* --- element runs: conversion, fills, finishing -------------------------- */

/* A fold kernel over inputs converted first, a run of DLB_REDUCE_RUN at a
 * time, into scratch (NumPy's buffered reductions). */
typedef struct converted {
  dlb_loop kernel;
  dlb_pairwise_layout *layout;
  dlb_dtype from, to;
  dlb_dtype
      via; /* a float16/bfloat16 dtype option: elements become it first, else DLB_DTYPE_COUNT */
  char *scratch;
  char *scratch_via; /* capacity elements of via */
  int64_t capacity;  /* elements of scratch: DLB_REDUCE_RUN, or fewer for fewer inputs */
  dlb_status status;
  dlb_error *err;
  dlb_cast_plan into_via, into_loop; /* from -> via, and via (else from) -> to */
} converted;

static int fold_converted(char **data, const int64_t *steps, int64_t n, void *aux) {
  converted *c = aux;
  int64_t size = (int64_t)dlb_dtype_get(c->to)->itemsize;
  for (int64_t i = 0; i < n; i += c->capacity) {
    int64_t m = n - i < c->capacity ? n - i : c->capacity;
    char *run[2] = {steps[0] ? data[0] + i * steps[0] : data[0], c->scratch};
    int64_t run_steps[2] = {steps[0], size};
    if (c->via != DLB_DTYPE_COUNT) {
      ptrdiff_t via_size = (ptrdiff_t)dlb_dtype_get(c->via)->itemsize;
      c->status = dlb_cast_plan_run(&c->into_via, c->scratch_via, via_size, data[1] + i * steps[1],
                                    (ptrdiff_t)steps[1], (size_t)m, c->err);
      if (c->status == DLB_OK)
        c->status = dlb_cast_plan_run(&c->into_loop, c->scratch, (ptrdiff_t)size, c->scratch_via,
                                      via_size, (size_t)m, c->err);
    } else {
      c->status = dlb_cast_plan_run(&c->into_loop, c->scratch, (ptrdiff_t)size,
                                    data[1] + i * steps[1], (ptrdiff_t)steps[1], (size_t)m, c->err);
    }
    if (c->status != DLB_OK) return 1;
    c->kernel(run, run_steps, m, c->layout);
  }
  return 0;
}

/* Copies (casting) operand 1 into operand 0. */
typedef struct cast_pair {
  dlb_dtype to, from;
  dlb_status status;
  dlb_error *err;
  dlb_cast_plan loop;
} cast_pair;

static int cast_run(char **data, const int64_t *steps, int64_t n, void *aux) {
  cast_pair *c = aux;
  c->status = dlb_cast_plan_run(&c->loop, data[0], (ptrdiff_t)steps[0], data[1],
                                (ptrdiff_t)steps[1], (size_t)n, c->err);
  return c->status != DLB_OK;
}

/* Runs cast_run over nop = 2 operands; the status of the cast. */
static dlb_status convert(const plan *p, strided *to, strided *from, int out_space,
                          dlb_error *err) {
  strided *ops[2] = {to, from};
  cast_pair c = {to->dtype, from->dtype, DLB_OK, err, dlb_cast_plan_for(to->dtype, from->dtype)};
  walk(p, 2, ops, out_space, 0, cast_run, &c, 0);
  return c.status;
}

/* Every element of operand 0 becomes the element in bytes. */
typedef struct fill_value {
  unsigned char bytes[16];
  size_t size;
} fill_value;

/* n copies of the value of type UT, step bytes apart from p. */
#define FILL_AS(UT, p, step, n, bytes)                                                             \
  do {                                                                                             \
    UT x_;                                                                                         \
    memcpy(&x_, (bytes), sizeof x_);                                                               \
    for (int64_t i_ = 0; i_ < (n); i_++) memcpy((p) + i_ * (step), &x_, sizeof x_);                \
  } while (0)

static int fill_run(char **data, const int64_t *steps, int64_t n, void *aux) {
  const fill_value *v = aux;
  switch (v->size) { /* sizes the compiler sees: stores, not a memcpy call each */
    case 1: FILL_AS(uint8_t, data[0], steps[0], n, v->bytes); break;
    case 2: FILL_AS(uint16_t, data[0], steps[0], n, v->bytes); break;
    case 4: FILL_AS(uint32_t, data[0], steps[0], n, v->bytes); break;
    case 8: FILL_AS(uint64_t, data[0], steps[0], n, v->bytes); break;
    default:
      for (int64_t i = 0; i < n; i++) memcpy(data[0] + i * steps[0], v->bytes, v->size);
  }
  return 0;
}
#undef FILL_AS

/* How accumulators become results: divided by a count, square-rooted. */
typedef struct finish {
  dlb_dtype dtype; /* float32, float64, complex64, complex128 */
  double divisor;
  int root;
} finish;

static int finish_run(char **data, const int64_t *steps, int64_t n, void *aux) {
  const finish *f = aux;
  const int64_t step = steps[0];
  switch (f->dtype) { /* a loop each: the dtype is the call's, not the element's */
    case DLB_FLOAT32: {
      const float d = (float)f->divisor;
      for (int64_t i = 0; i < n; i++) {
        float *x = (float *)(data[0] + i * step);
        *x = f->root ? sqrtf(*x / d) : *x / d;
      }
      break;
    }
    case DLB_COMPLEX64: { /* NumPy's complex division by (divisor + 0i) */
      const float rat = 0.0f / (float)f->divisor, scale = 1.0f / (float)f->divisor;
      for (int64_t i = 0; i < n; i++) {
        float *x = (float *)(data[0] + i * step), re = x[0], im = x[1];
        x[0] = (re + im * rat) * scale;
        x[1] = (im - re * rat) * scale;
      }
      break;
    }
    case DLB_FLOAT64:
      for (int64_t i = 0; i < n; i++) {
        double *x = (double *)(data[0] + i * step);
        *x = f->root ? sqrt(*x / f->divisor) : *x / f->divisor;
      }
      break;
    default: {
      const double rat = 0.0 / f->divisor, scale = 1.0 / f->divisor;
      for (int64_t i = 0; i < n; i++) {
        double *x = (double *)(data[0] + i * step), re = x[0], im = x[1];
        x[0] = (re + im * rat) * scale;
        x[1] = (im - re * rat) * scale;
      }
      break;
    }
  }
  return 0;
}

/* How accumulators become results when each has its own count (int64,
 * operand 1; the nan-functions): acc / (count - ddof), in double (complex:
 * complex128) as NumPy divides a float or complex by an integer, rounded
 * to the accumulators' dtype; NaN where count - ddof <= 0 when
 * bad_is_nan (nanvar); square-rooted in that dtype when root (nanstd). */
typedef struct count_finish {
  dlb_dtype dtype; /* float32, float64, complex64, complex128 */
  double ddof;
  int root, bad_is_nan;
} count_finish;

/* NumPy's complex division of (*re, *im) by (d + 0i). */
static void complex_by_real(double *re, double *im, double d) {
  if (d == 0) {
    *re = *re / fabs(d);
    *im = *im / fabs(d);
  } else {
    double rat = 0.0 / d, scale = 1.0 / (d + 0.0 * rat), r = *re, i = *im;
    *re = (r + i * rat) * scale;
    *im = (i - r * rat) * scale;
  }
}

static int count_finish_run(char **data, const int64_t *steps, int64_t n, void *aux) {
  const count_finish *f = aux;
  for (int64_t i = 0; i < n; i++) {
    char *e = data[0] + i * steps[0];
    double d = (double)*(const int64_t *)(data[1] + i * steps[1]) - f->ddof;
    int bad = f->bad_is_nan && !(d > 0);
    switch (f->dtype) {
      case DLB_FLOAT32: {
        float *x = (float *)e;
        *x = bad ? NAN : (float)((double)*x / d);
        if (f->root) *x = sqrtf(*x);
        break;
      }
      case DLB_FLOAT64: {
        double *x = (double *)e;
        *x = bad ? NAN : *x / d;
        if (f->root) *x = sqrt(*x);
        break;
      }
      case DLB_COMPLEX64: {
        float *x = (float *)e;
        double re = x[0], im = x[1];
        complex_by_real(&re, &im, d);
        x[0] = (float)re;
        x[1] = (float)im;
        break;
      }
      default: complex_by_real((double *)e, (double *)e + 1, d); break;
    }
  }
  return 0;
}

/* NaN elements of operand 0 become value (as NumPy's _replace_nan): a
 * float32 or float64 one, or a complex one with a NaN part (value + 0i). */
typedef struct nan_fill {
  dlb_dtype dtype; /* float32, float64, complex64, complex128 */
  double value;
} nan_fill;

static int replace_nan_run(char **data, const int64_t *steps, int64_t n, void *aux) {
  const nan_fill *f = aux;
  for (int64_t i = 0; i < n; i++) {
    char *e = data[0] + i * steps[0];
    switch (f->dtype) {
      case DLB_FLOAT32: {
        float *x = (float *)e;
        if (*x != *x) *x = (float)f->value;
        break;
      }
      case DLB_FLOAT64: {
        double *x = (double *)e;
        if (*x != *x) *x = f->value;
        break;
      }
      case DLB_COMPLEX64: {
        float *x = (float *)e;
        if (x[0] != x[0] || x[1] != x[1]) x[0] = (float)f->value, x[1] = 0;
        break;
      }
      default: {
        double *x = (double *)e;
        if (x[0] != x[0] || x[1] != x[1]) x[0] = f->value, x[1] = 0;
        break;
      }
    }
  }
  return 0;
}

/* The identity a fold of op starts from (its row's: zero or one), as one
 * accumulator of dtype acc. */
static void identity_of(dlb_reduce_op op, dlb_dtype acc, fill_value *v) {
  dlb_scalar one = {.kind = DLB_SCALAR_INT, .v.i = 1}, zero = {.kind = DLB_SCALAR_INT, .v.i = 0};
  int is_one = dlb_reduce_get(op)->identity == DLB_REDUCE_IDENTITY_ONE;
  memset(v, 0, sizeof *v);
  v->size = dlb_dtype_get(acc)->itemsize;
  dlb_scalar_store(acc, v->bytes, is_one ? &one : &zero, NULL); /* 0 and 1 fit every dtype */
}

/* --- folds ------------------------------------------------------------------ */

/*
 * Folds the input `in` (elements of in->dtype) into accumulators acc
 * (strides 0 along the reduced dims) with kernel, a fold kernel for
 * loop_in inputs, starting from start, or from the first element where
 * start is NULL (min, max). op names the reduction in errors.
 */
static dlb_status fold_with(const plan *p, dlb_reduce_op op, dlb_loop kernel,
                            const fill_value *start, strided *in, dlb_dtype loop_in, dlb_dtype via,
                            strided *acc, dlb_error *err) {
  strided *ops[2] = {acc, in};
  int64_t numel = p->count * p->out_numel; /* no overflow: both nonzero here, a's size */
  dlb_pairwise_layout layout;
  converted conv = {kernel,
                    &layout,
                    in->dtype,
                    loop_in,
                    via,
                    NULL,
                    NULL,
                    0,
                    DLB_OK,
                    err,
                    dlb_cast_plan_for(via, in->dtype),
                    dlb_cast_plan_for(loop_in, via != DLB_DTYPE_COUNT ? via : in->dtype)};
  dlb_pairwise_layout_init(&layout);
  if (!kernel)
    return dlb_fail(err, DLB_E_DTYPE, "%s: no kernel for %s", dlb_reduce_name(op),
                    dlb_dtype_get(loop_in)->name);
  if (!start) {
    dlb_status st = convert(p, acc, in, 1, err); /* the first element */
    if (st != DLB_OK) return st;
  } else {
    walk(p, 1, ops, 1, 0, fill_run, (void *)start, 0);
  }
  if (p->count == 0) return DLB_OK;
  if (loop_in == in->dtype && via == DLB_DTYPE_COUNT &&
      elements_aligned(in, p->ndim, (int64_t)dlb_dtype_get(in->dtype)->itemsize)) {
    /* (count_numbers folds under nanmean's op with a kernel of its own) */
    dlb_loop short_runs =
        kernel == dlb_reduce_fold_loop(op, loop_in) ? dlb_reduce_short_runs_loop(op, loop_in) : NULL;
    walk_runs(p, 2, ops, 0, 1, kernel, &layout, 1, short_runs);
    return DLB_OK;
  }
  conv.capacity = numel < DLB_REDUCE_RUN ? numel : DLB_REDUCE_RUN;
  conv.scratch = malloc((size_t)conv.capacity * dlb_dtype_get(loop_in)->itemsize);
  if (via != DLB_DTYPE_COUNT)
    conv.scratch_via = malloc((size_t)conv.capacity * dlb_dtype_get(via)->itemsize);
  if (!conv.scratch || (via != DLB_DTYPE_COUNT && !conv.scratch_via)) {
    free(conv.scratch);
    free(conv.scratch_via);
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "%s: no memory for a buffer", dlb_reduce_name(op));
  }
  walk(p, 2, ops, 0, 1, fold_converted, &conv, 1);
  free(conv.scratch);
  free(conv.scratch_via);
  return conv.status;
}

/* fold_with op's kernel for loop_in inputs, from op's identity, or from
 * the first element where it has none (min, max). */
static dlb_status fold(const plan *p, dlb_reduce_op op, strided *in, dlb_dtype loop_in,
                       dlb_dtype via, strided *acc, dlb_error *err) {
  fill_value v;
  identity_of(op, acc->dtype, &v);
  return fold_with(p, op, dlb_reduce_fold_loop(op, loop_in),
                   dlb_reduce_get(op)->identity == DLB_REDUCE_IDENTITY_NONE ? NULL : &v, in,
                   loop_in, via, acc, err);
}

/* Counts the elements of x that are not NaN (read as dlb_compute_type of
 * their dtype) into new int64 accumulators *cnt (memory: *mem). */
static dlb_status count_numbers(const plan *p, strided *x, dlb_array *mem, strided *cnt,
                                dlb_error *err) {
  const fill_value zero = {{0}, 8};
  dlb_dtype t = dlb_compute_type(x->dtype);
  dlb_status st = temporary(p, DLB_INT64, 1, mem, cnt, err);
  if (st != DLB_OK) return st;
  return fold_with(p, p->op, dlb_reduce_count_numbers_loop(t), &zero, x, t, DLB_DTYPE_COUNT, cnt,
                   err);
}

/* Divides each accumulator of acc by its count in cnt as f says. */
static void finish_by_counts(const plan *p, strided *acc, strided *cnt, count_finish *f) {
  strided *ops[2] = {acc, cnt};
  walk(p, 2, ops, 1, 0, count_finish_run, f, 0);
}

/* Converts the accumulators into the result's elements. */
static dlb_status store(const plan *p, strided *acc, strided *out, dlb_error *err) {
  return convert(p, out, acc, 1, err);
}

/* Accumulators for out: out itself when it has their dtype, else a temporary. */
static dlb_status accumulators(const plan *p, dlb_dtype dtype, strided *out, dlb_array *mem,
                               strided *acc, dlb_error *err) {
  if (out->dtype == dtype) {
    *acc = *out;
    return DLB_OK;
  }
  return temporary(p, dtype, 1, mem, acc, err);
}

/* The dtype elements of dtype in become before they are combined, when
 * that is not the computing dtype: a float16/bfloat16 result dtype (a dtype
 * option) rounds each element to it first, as NumPy's astype would; else
 * DLB_DTYPE_COUNT (none). */
static dlb_dtype half_via(const plan *p, dlb_dtype in) {
  dlb_dtype r = p->t.result;
  return (r == DLB_FLOAT16 || r == DLB_BFLOAT16) && in != r ? r : DLB_DTYPE_COUNT;
}

/* A nan-function's complex input folded in a real dtype (a real dtype
 * option), whose conversion drops the imaginary parts: *in becomes a copy
 * (memory: *mem) with the numbers that have a NaN part replaced by op's
 * identity first, as NumPy replaces them before it converts. Any other
 * call: nothing. */
static dlb_status cleaned_complex(const plan *p, dlb_array *mem, strided *in, dlb_error *err) {
  nan_fill f = {in->dtype, dlb_reduce_get(p->op)->identity == DLB_REDUCE_IDENTITY_ONE};
  strided *ops[1] = {in};
  strided from = *in;
  dlb_status st;
  if (!dlb_reduce_get(p->op)->skips_nan || dlb_dtype_get(in->dtype)->kind != DLB_KIND_COMPLEX ||
      dlb_dtype_get(p->t.loop_in)->kind == DLB_KIND_COMPLEX)
    return DLB_OK;
  if ((st = temporary(p, in->dtype, 0, mem, in, err)) != DLB_OK) return st;
  convert(p, in, &from, 0, err); /* the same dtype: cannot fail */
  walk(p, 1, ops, 0, 0, replace_nan_run, &f, 0);
  return DLB_OK;
}

/* The reductions that fold (sum, prod, mean, min, max, all, any,
 * count_nonzero) into out; mean then divides by the count. */
static dlb_status run_fold(const plan *p, strided *out, dlb_error *err) {
  dlb_array mem = {0}, copy = {0};
  strided acc, in = p->in;
  dlb_status st = cleaned_complex(p, &copy, &in, err);
  if (st == DLB_OK) st = accumulators(p, p->t.acc, out, &mem, &acc, err);
  if (st == DLB_OK) st = fold(p, p->op, &in, p->t.loop_in, half_via(p, in.dtype), &acc, err);
  if (st == DLB_OK && dlb_reduce_get(p->op)->rule == DLB_REDUCE_RULE_MEAN) {
    finish f = {acc.dtype, (double)p->count, 0};
    strided *ops[1] = {&acc};
    walk(p, 1, ops, 1, 0, finish_run, &f, 0);
  }
  if (st == DLB_OK && acc.data != out->data) st = store(p, &acc, out, err);
  dlb_array_release(&mem);
  dlb_array_release(&copy);
  return st;
}

/* nanmean of float and complex input: nansum's fold, over the count of
 * the elements that are not NaN (NaN where there is none). */
static dlb_status run_nanmean(const plan *p, strided *out, dlb_error *err) {
  dlb_array mem = {0}, counts = {0}, copy = {0};
  strided acc, cnt, in = p->in, summed = p->in;
  dlb_status st = cleaned_complex(p, &copy, &summed, err);
  if (st == DLB_OK) st = accumulators(p, p->t.acc, out, &mem, &acc, err);
  if (st == DLB_OK) st = fold(p, p->op, &summed, p->t.loop_in, half_via(p, in.dtype), &acc, err);
  if (st == DLB_OK) st = count_numbers(p, &in, &counts, &cnt, err);
  if (st == DLB_OK) {
    count_finish f = {acc.dtype, 0, 0, 0};
    finish_by_counts(p, &acc, &cnt, &f);
    if (acc.data != out->data) st = store(p, &acc, out, err);
  }
  dlb_array_release(&mem);
  dlb_array_release(&counts);
  dlb_array_release(&copy);
  return st;
}

/*
 * std and var, as NumPy's _var: the mean (in t, the computing dtype), then
 * the sum of |x - mean|^2 (t's real dtype) over a temporary laid out as the
 * input, divided by max(n - ddof, 0); std takes the square root. nanstd
 * and nanvar of float and complex input, as NumPy's nanvar: the mean of the
 * elements that are not NaN (nansum over their count), a NaN's deviation
 * 0, the sum divided by count - ddof, NaN where that is <= 0.
 */
static dlb_status run_var(const plan *p, strided *out, dlb_error *err) {
  dlb_dtype t = p->t.acc, r = real_of(t);
  dlb_array xs = {0}, means = {0}, devs = {0}, sums = {0}, counts = {0};
  strided x = p->in, mean, dev, sum, cnt;
  dlb_status st = DLB_OK;
  const int skip = dlb_reduce_get(p->op)->skips_nan && may_hold_nan(p->in.dtype);
  const int root = p->op == DLB_REDUCE_STD || p->op == DLB_REDUCE_NANSTD;
  const dlb_dtype via = half_via(p, p->in.dtype);
  /* The input converted once (both passes read it): to t, or rounded to a
   * float16/bfloat16 dtype option first even where t is its own dtype
   * (float32 input, dtype = "float16"). */
  if (x.dtype != t || p->misaligned || via != DLB_DTYPE_COUNT) {
    strided in = p->in, half;
    dlb_array halves = {0};
    if (via != DLB_DTYPE_COUNT) { /* rounded to the float16 dtype option first */
      st = temporary(p, via, 0, &halves, &half, err);
      if (st == DLB_OK) st = convert(p, &half, &in, 0, err);
      in = half;
    }
    if (st == DLB_OK) st = temporary(p, t, 0, &xs, &x, err);
    if (st == DLB_OK) st = convert(p, &x, &in, 0, err);
    dlb_array_release(&halves);
  }
  if (st == DLB_OK) st = temporary(p, t, 1, &means, &mean, err);
  if (st == DLB_OK)
    st = fold(p, skip ? DLB_REDUCE_NANSUM : DLB_REDUCE_SUM, &x, t, DLB_DTYPE_COUNT, &mean, err);
  if (st == DLB_OK && skip) st = count_numbers(p, &x, &counts, &cnt, err);
  if (st == DLB_OK) {
    finish f = {t, (double)p->count, 0};
    count_finish by_count = {t, 0, 0, 0};
    strided *ops[1] = {&mean};
    if (skip) finish_by_counts(p, &mean, &cnt, &by_count);
    else walk(p, 1, ops, 1, 0, finish_run, &f, 0);
    if (xs.buffer && r == t) { /* squares in place of the converted input */
      dev = x;
    } else {
      st = temporary(p, r, 0, &devs, &dev, err);
    }
  }
  if (st == DLB_OK) {
    strided *ops[3] = {&dev, &x, &mean};
    walk(p, 3, ops, 0, 0, dlb_reduce_deviation_loop(t, skip), NULL, 0);
    st = accumulators(p, r, out, &sums, &sum, err);
  }
  if (st == DLB_OK) st = fold(p, DLB_REDUCE_SUM, &dev, r, DLB_DTYPE_COUNT, &sum, err);
  if (st == DLB_OK) {
    double n = (double)p->count - p->ddof;
    finish f = {r, n > 0 ? n : 0, root};
    count_finish by_count = {r, p->ddof, root, 1};
    strided *ops[1] = {&sum};
    if (skip) finish_by_counts(p, &sum, &cnt, &by_count);
    else walk(p, 1, ops, 1, 0, finish_run, &f, 0);
    if (sum.data != out->data) st = store(p, &sum, out, err);
  }
  dlb_array_release(&xs);
  dlb_array_release(&means);
  dlb_array_release(&devs);
  dlb_array_release(&sums);
  dlb_array_release(&counts);
  return st;
}

/* --- argmin, argmax -------------------------------------------------------- */

/* Whether op looks for the largest element (argmax, nanargmax). */
static int arg_is_max(dlb_reduce_op op) {
  return op == DLB_REDUCE_ARGMAX || op == DLB_REDUCE_NANARGMAX;
}

/* dlb_reduce_arg_search inside a bounded call (work.h): in pieces of
 * ARG_PIECE, each piece's best against the best so far by the same search
 * over the two (the first wins ties, a NaN wins as NumPy's). Pieces are
 * long: each restarts the search's best, and a search walks every block
 * that beats its best (about 1 ms of int8 a piece). */
#define ARG_PIECE (DLB_WORK_CHECK_EVERY * 64)

static int64_t arg_search_bounded(int is_max, dlb_dtype t, const char *data, int64_t n,
                                  int64_t stride) {
  dlb_work *work = dlb_work_current();
  size_t item = dlb_dtype_get(t)->itemsize;
  union {
    unsigned char bytes[32];
    double align;
  } pair;
  int64_t best = 0;
  if (!work || n <= ARG_PIECE) return dlb_reduce_arg_search(is_max, t, data, n, stride);
  for (int64_t i = 0; i < n; i += ARG_PIECE) {
    int64_t m = n - i < ARG_PIECE ? n - i : ARG_PIECE;
    int64_t j = i + dlb_reduce_arg_search(is_max, t, data + i * stride, m, stride);
    memcpy(pair.bytes, data + best * stride, item);
    memcpy(pair.bytes + item, data + j * stride, item);
    if (i == 0 || dlb_reduce_arg_search(is_max, t, (const char *)pair.bytes, 2, (int64_t)item) == 1)
      best = j;
    if (dlb_work_tick(work, m)) break;
  }
  return best;
}

/* Searches along the reduced dim for each result element (operand 0: the
 * int64 indices; operand 1: the input at index 0 of that dim). */
typedef struct arg_along {
  int is_max;
  dlb_dtype dtype;
  int64_t count, stride, base;
} arg_along;

static int arg_along_run(char **data, const int64_t *steps, int64_t n, void *aux) {
  const arg_along *a = aux;
  dlb_work *work = dlb_work_current();
  for (int64_t i = 0; i < n; i++) {
    *(int64_t *)(data[0] + i * steps[0]) =
        a->base +
        arg_search_bounded(a->is_max, a->dtype, data[1] + i * steps[1], a->count, a->stride);
    if (work && work->interrupted) return DLB_ITER_STOPPED;
  }
  return 0;
}

/* Whether the input's elements in row-major order are one run, *stride
 * bytes apart (each dim's stride a whole run of the next), needing no copy. */
static int flat_run(const plan *p, const strided *x, int64_t *stride) {
  int last = -1;
  *stride = (int64_t)dlb_dtype_get(x->dtype)->itemsize;
  for (int d = 0; d < p->ndim; d++) {
    if (p->shape[d] == 1) continue;
    if (last >= 0 && x->strides[last] != x->strides[d] * p->shape[d]) return 0;
    last = d;
  }
  if (last >= 0) *stride = x->strides[last];
  return 1;
}

/* argmin/argmax over every dim: the flat row-major index. */
static dlb_status arg_flat(const plan *p, strided *x, strided *out, dlb_error *err) {
  int64_t stride = 0;
  dlb_array copy = {0};
  strided c;
  if (!flat_run(p, x, &stride)) { /* a row-major copy first, as NumPy does */
    int64_t step = (int64_t)dlb_dtype_get(x->dtype)->itemsize, numel = p->count;
    dlb_status st;
    for (int d = p->ndim - 1; d >= 0; d--) {
      c.strides[d] = step;
      step *= p->shape[d]; /* the copy's size: allocated below, hence no overflow */
    }
    st = dlb_array_allocate(&copy, p->cpu, 0, x->dtype, 1, &numel, 0, err);
    if (st != DLB_OK) return st;
    c.data = dlb_array_host_data(&copy);
    c.dtype = x->dtype;
    convert(p, &c, x, 0, err); /* the same dtype: cannot fail */
    x = &c;
    stride = (int64_t)dlb_dtype_get(x->dtype)->itemsize;
  }
  *(int64_t *)out->data =
      p->index_base + arg_search_bounded(arg_is_max(p->op), x->dtype, x->data, p->count, stride);
  dlb_array_release(&copy);
  return DLB_OK;
}

/* argmin/argmax along an outer dim d: rows of the input against a row of
 * the best values so far (vectorised across the result). */
static dlb_status arg_rows(const plan *p, int d, strided *x, strided *out, dlb_error *err) {
  dlb_array mem = {0};
  strided best, row = *x;
  strided *ops[3] = {&best, out, &row};
  fill_value v = {{0}, 8};
  dlb_loop update = dlb_reduce_arg_update_loop(arg_is_max(p->op), x->dtype);
  dlb_status st = temporary(p, x->dtype, 1, &mem, &best, err);
  if (st != DLB_OK) return st;
  memcpy(v.bytes, &p->index_base, 8);
  convert(p, &best, &row, 1, err); /* row 0 is the best so far (same dtype: cannot fail) */
  walk(p, 1, ops + 1, 1, 0, fill_run, &v, 0);
  for (int64_t k = 1; k < p->count; k++) {
    int64_t index = p->index_base + k;
    row.data = x->data + k * x->strides[d];
    if (walk(p, 3, ops, 1, 0, update, &index, 0) == DLB_ITER_STOPPED) break;
  }
  dlb_array_release(&mem);
  return DLB_OK;
}

/* Whether any int64 of operand 0 is 0 (aux: an int, set then). */
static int any_zero_run(char **data, const int64_t *steps, int64_t n, void *aux) {
  for (int64_t i = 0; i < n; i++)
    if (*(const int64_t *)(data[0] + i * steps[0]) == 0) *(int *)aux = 1;
  return 0;
}

/* nanargmin/nanargmax: x (a copy of the input) with its NaNs as +inf/-inf,
 * after a check that no slice holds NaNs only (DLB_E_VALUE, NumPy's
 * ValueError). */
static dlb_status replace_nans(const plan *p, strided *x, dlb_error *err) {
  dlb_array counts = {0};
  strided cnt;
  strided *ops[1] = {&cnt};
  nan_fill fill = {x->dtype, arg_is_max(p->op) ? -INFINITY : INFINITY};
  int all_nan = 0;
  dlb_status st = count_numbers(p, x, &counts, &cnt, err);
  if (st == DLB_OK) walk(p, 1, ops, 1, 0, any_zero_run, &all_nan, 0);
  dlb_array_release(&counts);
  if (st != DLB_OK) return st;
  if (all_nan) {
    dlb_fail(err, DLB_E_VALUE, "%s: All-NaN slice encountered", dlb_reduce_name(p->op));
    dlb_error_hint(err, "a slice of NaNs only has no index; nanmax/nanmin give NaN there, or "
                        "test dl.isnan(a):all(dim) first");
    return DLB_E_VALUE;
  }
  ops[0] = x;
  walk(p, 1, ops, 0, 0, replace_nan_run, &fill, 0);
  return DLB_OK;
}

static dlb_status run_arg(const plan *p, strided *out, dlb_error *err) {
  dlb_array mem = {0};
  strided x = p->in;
  dlb_status st = DLB_OK;
  int d = 0;
  const int skip = dlb_reduce_get(p->op)->skips_nan && may_hold_nan(p->t.loop_in);
  /* A copy: float16, bfloat16 as float32; aligned; or its NaNs replaced. */
  if (x.dtype != p->t.loop_in || p->misaligned || skip) {
    strided in = p->in;
    st = temporary(p, p->t.loop_in, 0, &mem, &x, err);
    if (st != DLB_OK) return st;
    convert(p, &x, &in, 0, err); /* to float32 or the same: cannot fail */
    if (skip && (st = replace_nans(p, &x, err)) != DLB_OK) {
      dlb_array_release(&mem);
      return st;
    }
  }
  if (x.dtype == DLB_BOOL) x.dtype = DLB_UINT8; /* the same bytes, ordered alike */
  if (__builtin_popcountll(p->mask) != 1) {
    st = arg_flat(p, &x, out, err);
  } else {
    int64_t smallest = INT64_MAX;
    while (!reduced(p, d)) d++;
    for (int e = 0; e < p->ndim; e++)
      if (e != d && p->shape[e] > 1 && magnitude(x.strides[e]) < smallest)
        smallest = magnitude(x.strides[e]);
    if (magnitude(x.strides[d]) <= smallest) { /* the dim is the innermost: search along it */
      arg_along a = {arg_is_max(p->op), x.dtype, p->count, x.strides[d], p->index_base};
      strided *ops[2] = {out, &x};
      walk(p, 2, ops, 1, 1, arg_along_run, &a, 0);
    } else {
      st = arg_rows(p, d, &x, out, err);
    }
  }
  dlb_array_release(&mem);
  return st;
}

/* --- entry points ------------------------------------------------------------ */

/* p's reduction, by its row's rule. */
static dlb_status run(const plan *p, strided *out, dlb_error *err) {
  if (p->out_numel == 0) return DLB_OK;
  switch (dlb_reduce_get(p->op)->rule) {
    case DLB_REDUCE_RULE_ARG: return run_arg(p, out, err);
    case DLB_REDUCE_RULE_SPREAD: return run_var(p, out, err);
    case DLB_REDUCE_RULE_MEAN:
      if (dlb_reduce_get(p->op)->skips_nan && may_hold_nan(p->in.dtype))
        return run_nanmean(p, out, err);
      return run_fold(p, out, err);
    default: return run_fold(p, out, err);
  }
}

/* The kernel: the core's call as a plan, run with temporaries on the
 * state's cpu backend (ctx) or, for host memory of another backend, on a
 * scratch backend of the process. */
dlb_status dlb_cpu_reduce(void *ctx, dlb_reduce_call *call) {
  plan p;
  strided out;
  dlb_error err;
  dlb_status st;
  if ((unsigned)call->op >= DLB_REDUCE_OP_COUNT) return DLB_E_UNSUPPORTED; /* no row: no plan */
  plan_of_call(call, ctx ? (dlb_backend *)ctx : dlb_cpu_scratch_backend(), &p);
  out.data = call->out.data;
  out.dtype = dtype_of(call->out.dtype);
  for (int d = 0; d < p.ndim; d++)
    out.strides[d] = reduced(&p, d) || call->out.shape[d] == 1
                         ? 0
                         : call->out.strides[d] * (int64_t)dlb_dtype_get(out.dtype)->itemsize;
  if ((st = run(&p, &out, &err)) != DLB_OK) dlb_kernel_error_from(&call->error, &err);
  return st;
}
