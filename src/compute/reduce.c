/* reduce.c -- reductions (reduce.h): dtypes, shapes, checks and the
 * result, then the work handed to the kernels of the input's memory
 * (the host's: backends/cpu/reduce.c). */
#include <stddef.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/tensor.h"
#include "../core/work.h"
#include "reduce.h"

#define REDUCE_INFO(ID, name, rule, identity, loops, dtype, ddof, nan)                             \
  [DLB_REDUCE_##                                                                                   \
      ID] = {#name, DLB_REDUCE_RULE_##rule, DLB_REDUCE_IDENTITY_##identity, dtype, ddof, nan},
static const dlb_reduce_info reduce_table[DLB_REDUCE_OP_COUNT] = {DLB_REDUCE_OPS(REDUCE_INFO)};
#undef REDUCE_INFO

const dlb_reduce_info *dlb_reduce_get(dlb_reduce_op op) { return &reduce_table[op]; }

const char *dlb_reduce_name(dlb_reduce_op op) {
  return (unsigned)op < DLB_REDUCE_OP_COUNT ? reduce_table[op].name : "reduce";
}

/* --- dtypes ------------------------------------------------------------- */

static dlb_kind kind_of(dlb_dtype t) { return dlb_dtype_get(t)->kind; }

/* bool, int and uint: the dtypes that sum to 64-bit integers. */
static int integral(dlb_dtype t) {
  dlb_kind k = kind_of(t);
  return k == DLB_KIND_BOOL || k == DLB_KIND_INT || k == DLB_KIND_UINT;
}

static dlb_dtype real_of(dlb_dtype t) {
  return t == DLB_COMPLEX64 ? DLB_FLOAT32 : t == DLB_COMPLEX128 ? DLB_FLOAT64 : t;
}

/* The dtypes one reduction runs with: elements of the input are converted
 * to loop_in (when it differs), folded into accumulators of acc, and the
 * accumulators converted to result at the end. */
typedef struct reduce_types {
  dlb_dtype result, loop_in, acc;
} reduce_types;

/* The rule of a valid op. */
static dlb_reduce_rule rule_of(dlb_reduce_op op) { return reduce_table[op].rule; }

/* Any op: dlb_reduce_result_shape takes one unchecked. */
static int is_arg(dlb_reduce_op op) {
  return (unsigned)op < DLB_REDUCE_OP_COUNT && rule_of(op) == DLB_REDUCE_RULE_ARG;
}

/* The dtype mean, std and var give (*result) and compute in (*t): a
 * float or complex dtype option, else float64 for bool and integers, else
 * the input's own dtype; std and var give its real dtype and compute
 * complex input in the complex dtype of that precision. float16 and
 * bfloat16 compute in float32. */
static dlb_status moment_types(dlb_reduce_op op, dlb_dtype in, const dlb_reduce_options *o,
                               dlb_dtype *result, dlb_dtype *t, dlb_error *err) {
  dlb_dtype m = integral(in) ? DLB_FLOAT64 : in;
  if (o->has_dtype) {
    if (integral(o->dtype))
      return dlb_fail(err, DLB_E_DTYPE,
                      "%s: the dtype option must be a float or complex dtype, "
                      "got %s",
                      dlb_reduce_name(op), dlb_dtype_get(o->dtype)->name);
    m = o->dtype;
  }
  *t = dlb_compute_type(m);
  *result = m;
  if (rule_of(op) == DLB_REDUCE_RULE_MEAN) return DLB_OK;
  *result = real_of(m);
  if (kind_of(in) == DLB_KIND_COMPLEX)
    *t = real_of(*t) == DLB_FLOAT64 ? DLB_COMPLEX128 : DLB_COMPLEX64;
  return DLB_OK;
}

/* The dtype of a sum or product: the dtype option, else 64-bit integers
 * for bool and integers, else the input's own. */
static void accumulate_types(dlb_dtype in, const dlb_reduce_options *o, reduce_types *t) {
  t->result = o->has_dtype                   ? o->dtype
              : kind_of(in) == DLB_KIND_UINT ? DLB_UINT64
              : integral(in)                 ? DLB_INT64
                                             : in;
  if (integral(t->result)) {
    t->acc = kind_of(t->result) == DLB_KIND_UINT ? DLB_UINT64 : DLB_INT64;
    /* Integers fold as they are (the wrap to a narrower result comes
     * out the same at the end); other inputs become the result first. */
    t->loop_in = integral(in) && t->result != DLB_BOOL ? in : t->result;
  } else {
    t->acc = t->loop_in = dlb_compute_type(t->result);
  }
}

/* The dtypes of op over in by its row's rule and options (reduce.h). */
static dlb_status resolve_types(dlb_reduce_op op, dlb_dtype in, const dlb_reduce_options *o,
                                reduce_types *t, dlb_error *err) {
  const char *name = dlb_reduce_name(op);
  dlb_dtype m = DLB_FLOAT64;
  if ((unsigned)op >= DLB_REDUCE_OP_COUNT) {
    dlb_fail(err, DLB_E_ARGUMENT, "unknown reduction %d", (int)op);
    dlb_error_hint(err, "op is one of the DLB_REDUCE_* values of dlbridge.h");
    return DLB_E_ARGUMENT;
  }
  if (o->has_dtype && (unsigned)o->dtype >= DLB_DTYPE_COUNT)
    return dlb_fail(err, DLB_E_DTYPE, "%s: invalid dtype", name);
  if (o->has_dtype && !reduce_table[op].takes_dtype) {
    dlb_fail(err, DLB_E_ARGUMENT, "%s takes no dtype option", name);
    dlb_error_hint(err, "dtype is an option of sum, prod, mean, std, var and their nan-variants; "
                        "convert first with a:astype(dtype)");
    return DLB_E_ARGUMENT;
  }
  switch (rule_of(op)) {
    case DLB_REDUCE_RULE_ACCUMULATE: accumulate_types(in, o, t); break;
    case DLB_REDUCE_RULE_MEAN:
    case DLB_REDUCE_RULE_SPREAD:
      if (moment_types(op, in, o, &t->result, &m, err) != DLB_OK) return DLB_E_DTYPE;
      t->acc = t->loop_in = m;
      break;
    case DLB_REDUCE_RULE_EXTREME:
    case DLB_REDUCE_RULE_ARG:
      if (kind_of(in) == DLB_KIND_COMPLEX) {
        dlb_fail(err, DLB_E_DTYPE, "%s: complex numbers have no order", name);
        dlb_error_hint(err, "reduce the real part, the imaginary part or the magnitude instead");
        return DLB_E_DTYPE;
      }
      t->loop_in = t->acc = dlb_compute_type(in);
      t->result = is_arg(op) ? DLB_INT64 : in;
      break;
    case DLB_REDUCE_RULE_TRUTH:
      t->result = t->acc = DLB_BOOL;
      t->loop_in = in;
      break;
    case DLB_REDUCE_RULE_TALLY:
      t->result = t->acc = DLB_INT64;
      t->loop_in = in;
      break;
  }
  return DLB_OK;
}

dlb_status dlb_reduce_result_type(dlb_reduce_op op, dlb_dtype in, const dlb_reduce_options *o,
                                  dlb_dtype *result, dlb_error *err) {
  reduce_types t = {DLB_BOOL, DLB_BOOL, DLB_BOOL};
  dlb_status st;
  if ((unsigned)in >= DLB_DTYPE_COUNT) return dlb_fail(err, DLB_E_DTYPE, "invalid dtype");
  if ((st = resolve_types(op, in, o, &t, err)) == DLB_OK) *result = t.result;
  return st;
}

/* --- shapes ------------------------------------------------------------ */

/* The reduced dims of an ndim array as bits below ndim. */
static dlb_status reduced_dims(dlb_reduce_op op, int ndim, const dlb_reduce_options *o,
                               uint64_t *mask, dlb_error *err) {
  uint64_t all = ndim >= 64 ? UINT64_MAX : (UINT64_C(1) << ndim) - 1;
  if (o->dims == DLB_REDUCE_ALL_DIMS) {
    *mask = all;
    return DLB_OK;
  }
  if (o->dims & ~all) {
    int d = __builtin_ctzll(o->dims & ~all);
    return dlb_fail(err, DLB_E_INDEX, "%s: dimension %d out of range for a %d-D array",
                    dlb_reduce_name(op), d + 1, ndim);
  }
  if (is_arg(op) && __builtin_popcountll(o->dims) != 1) {
    dlb_fail(err, DLB_E_ARGUMENT, "%s: reduces one dim, or all of them (no dim given)",
             dlb_reduce_name(op));
    dlb_error_hint(err, "argmin and argmax take one dim, a:argmax(2), or none: the index into "
                        "the flattened array");
    return DLB_E_ARGUMENT;
  }
  *mask = o->dims;
  return DLB_OK;
}

dlb_status dlb_reduce_result_shape(dlb_reduce_op op, const dlb_array *a,
                                   const dlb_reduce_options *o, int *ndim, int64_t *shape,
                                   dlb_error *err) {
  uint64_t mask;
  int n = 0;
  dlb_status st = reduced_dims(op, a->ndim, o, &mask, err);
  if (st != DLB_OK) return st;
  for (int d = 0; d < a->ndim; d++) {
    if (!(mask >> d & 1)) shape[n++] = a->shape[d];
    else if (o->keepdims) shape[n++] = 1;
  }
  *ndim = n;
  return DLB_OK;
}

/* --- planning and dispatch ------------------------------------------------ */

/* What the core works out before a reduction runs. */
typedef struct reduce_plan {
  dlb_reduce_op op;
  reduce_types t;
  uint64_t mask;
  int64_t count;     /* elements folded into each result element (INT64_MAX: too many) */
  int64_t out_numel; /* result elements */
} reduce_plan;

/* The product of the reduced (of_reduced) or kept extents of a into *n;
 * 0 when it overflows (and no extent is 0). */
static int extent_product(const dlb_array *a, uint64_t mask, int of_reduced, int64_t *n) {
  int64_t r = 1;
  int overflow = 0;
  for (int d = 0; d < a->ndim; d++) {
    if ((int)(mask >> d & 1) != of_reduced) continue;
    if (a->shape[d] == 0) {
      *n = 0;
      return 1;
    }
    if (__builtin_mul_overflow(r, a->shape[d], &r)) overflow = 1;
  }
  *n = r;
  return !overflow;
}

static dlb_status plan_reduce(dlb_reduce_op op, const dlb_array *a, const dlb_reduce_options *o,
                              reduce_plan *p, dlb_error *err) {
  const char *name = dlb_reduce_name(op);
  dlb_status st = resolve_types(op, a->dtype, o, &p->t, err);
  p->op = op;
  if (st == DLB_OK) st = reduced_dims(op, a->ndim, o, &p->mask, err);
  if (st != DLB_OK) return st;
  /* A size-0 array may have other extents whose product overflows. */
  if (!extent_product(a, p->mask, 1, &p->count)) p->count = INT64_MAX; /* only with no result */
  if (!extent_product(a, p->mask, 0, &p->out_numel))
    return dlb_fail(err, DLB_E_SHAPE, "%s: the result would have too many elements", name);
  if (p->count == 0 && reduce_table[op].identity == DLB_REDUCE_IDENTITY_NONE) {
    if (is_arg(op))
      return dlb_fail(err, DLB_E_VALUE, "%s: attempt to get %s of an empty sequence", name, name);
    dlb_fail(err, DLB_E_VALUE, "%s: zero-size reduction: %s has no identity", name, name);
    dlb_error_hint(err, "an empty array has no minimum or maximum; check its size first");
    return DLB_E_VALUE;
  }
  return DLB_OK;
}

/* The result r (keepdims or not) seen over a's dims: extent 1 and stride 0
 * along the reduced ones, into shape[] and strides[]. */
static void result_over_input(const reduce_plan *p, const dlb_array *a, const dlb_array *r,
                              int keepdims, int64_t *shape, int64_t *strides) {
  int k = 0;
  for (int d = 0; d < a->ndim; d++) {
    if (p->mask >> d & 1) {
      shape[d] = 1;
      strides[d] = 0;
      if (keepdims) k++;
    } else {
      shape[d] = a->shape[d];
      strides[d] = r->strides[k++];
    }
  }
}

/* Runs the reduction of a into result (dtype p->t.result, on a's device,
 * not overlapping a) through the kernels of a's memory. */
static dlb_status run_reduce(const reduce_plan *p, const dlb_array *a, const dlb_reduce_options *o,
                             const dlb_array *result, int keepdims, void *host_element,
                             dlb_error *err) {
  int64_t shape[DLB_MAX_NDIM], strides[DLB_MAX_NDIM];
  dlb_reduce_call call;
  dlb_kernel_site site;
  dlb_status st;
  const dlb_array *arrays[2] = {a, result};
  if (p->out_numel == 0) return DLB_OK;
  if ((st = dlb_kernel_site_open(arrays, result ? 2 : 1, &site, err)) != DLB_OK) return st;
  call.op = (int32_t)p->op;
  dlb_tensor_of(a, &call.in);
  call.dims = p->mask;
  if (result) {
    dlb_tensor_of(result, &call.out);
    result_over_input(p, a, result, keepdims, shape, strides);
  } else { /* one element in host memory */
    call.out.handle = NULL;
    call.out.device_id = 0;
    call.out.offset = 0;
    call.out.data = host_element;
    call.out.dtype = dlb_dtype_to_dl(p->t.result);
    for (int d = 0; d < a->ndim; d++) shape[d] = 1, strides[d] = 0;
  }
  call.out.ndim = a->ndim;
  call.out.shape = shape;
  call.out.strides = strides;
  call.acc = dlb_dtype_to_dl(p->t.acc);
  call.loop_in = dlb_dtype_to_dl(p->t.loop_in);
  call.ddof = o->ddof;
  call.index_base = o->index_base;
  call.queue = site.queue;
  call.error.message[0] = 0; /* the rest of the message is the kernel's to write */
  call.error.hint = NULL;
  st = site.kernels->reduce(site.ctx, &call);
  return dlb_kernel_site_end(&site, st, &call.error, dlb_reduce_name(p->op), arrays, result ? 2 : 1,
                             err);
}

static dlb_status check_operand(dlb_reduce_op op, const dlb_array *a, dlb_backend *cpu,
                                dlb_placement *where, dlb_error *err) {
  dlb_operand in = {a, {0}};
  return dlb_check_operands_for(1, &in, cpu, offsetof(dlb_kernels, reduce), where,
                                dlb_reduce_name(op), err);
}

static dlb_status reduce_into(dlb_reduce_op op, const dlb_array *a, const dlb_reduce_options *o,
                              dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  const char *name = dlb_reduce_name(op);
  dlb_placement where;
  reduce_plan p;
  int ndim, fresh = out->buffer == NULL;
  int64_t shape[DLB_MAX_NDIM];
  dlb_array tmp = {0};
  dlb_status st;
  if ((st = check_operand(op, a, cpu, &where, err)) != DLB_OK) return st;
  if ((st = plan_reduce(op, a, o, &p, err)) != DLB_OK) return st;
  dlb_reduce_result_shape(op, a, o, &ndim, shape, NULL);
  if (fresh) {
    st = dlb_array_allocate(out, where.backend, where.device_id, p.t.result, ndim, shape, 0, err);
    if (st != DLB_OK) return st;
    if ((st = run_reduce(&p, a, o, out, o->keepdims, NULL, err)) != DLB_OK) dlb_array_release(out);
    return st;
  }
  if ((st = dlb_check_out(out, p.t.result, ndim, shape, &where, name, err)) != DLB_OK) return st;
  if (out->dtype == p.t.result && !dlb_arrays_overlap(out, a))
    return run_reduce(&p, a, o, out, o->keepdims, NULL, err);
  /* Another dtype, or memory the input shares: a new result copied over. */
  st = dlb_array_allocate(&tmp, where.backend, where.device_id, p.t.result, ndim, shape, 0, err);
  if (st == DLB_OK) st = run_reduce(&p, a, o, &tmp, o->keepdims, NULL, err);
  if (st == DLB_OK) st = dlb_array_copy_into(out, &tmp, err);
  dlb_array_release(&tmp);
  return st;
}

static dlb_status reduce_value(dlb_reduce_op op, const dlb_array *a, const dlb_reduce_options *o,
                               dlb_backend *cpu, dlb_scalar *value, dlb_error *err) {
  dlb_placement where;
  reduce_plan p;
  union {
    unsigned char bytes[16];
    double align;
  } element;
  dlb_status st;
  if ((st = check_operand(op, a, cpu, &where, err)) != DLB_OK) return st;
  if ((st = plan_reduce(op, a, o, &p, err)) != DLB_OK) return st;
  if (p.out_numel != 1)
    return dlb_fail(err, DLB_E_SHAPE, "%s: the result has %lld elements, not one",
                    dlb_reduce_name(op), (long long)p.out_numel);
  memset(&element, 0, sizeof element);
  if (a->buffer->host || !a->buffer->backend || a->numel == 0) {
    /* The host computes: the result goes straight into element. */
    if ((st = run_reduce(&p, a, o, NULL, 0, element.bytes, err)) != DLB_OK) return st;
  } else { /* a device: a 0-d result there, read back */
    dlb_array r = {0};
    int64_t none[1] = {0};
    if ((st = dlb_array_allocate(&r, where.backend, where.device_id, p.t.result, 0, none, 0,
                                 err)) != DLB_OK)
      return st;
    st = run_reduce(&p, a, o, &r, 0, NULL, err);
    if (st == DLB_OK) st = dlb_array_read_into(&r, element.bytes, p.t.result, err);
    dlb_array_release(&r);
    if (st != DLB_OK) return st;
  }
  dlb_scalar_load(p.t.result, element.bytes, value);
  return DLB_OK;
}

/* The public entry points: each one call of bounded work (work.h) over the
 * input's elements. An interrupted call leaves a fresh result released. */
dlb_status dlb_reduce(dlb_reduce_op op, const dlb_array *a, const dlb_reduce_options *o,
                      dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  const char *name = dlb_reduce_name(op);
  int fresh = out->buffer == NULL;
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(a), a->numel, name, err);
  if (st != DLB_OK) return st;
  st = dlb_work_end(&w, reduce_into(op, a, o, out, cpu, err), name, err);
  if (st != DLB_OK && fresh) dlb_array_release(out);
  return st;
}

dlb_status dlb_reduce_value(dlb_reduce_op op, const dlb_array *a, const dlb_reduce_options *o,
                            dlb_backend *cpu, dlb_scalar *value, dlb_error *err) {
  const char *name = dlb_reduce_name(op);
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(a), a->numel, name, err);
  if (st != DLB_OK) return st;
  return dlb_work_end(&w, reduce_value(op, a, o, cpu, value, err), name, err);
}
