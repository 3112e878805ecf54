/* elementwise.c -- the driver of element-wise operations: dtype resolution,
 * broadcasting, the result array, overlap, and the (buffered) kernel walk. */
#include <stdlib.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/work.h"
#include "device_kernels.h"
#include "../backends/cpu/loops.h"

static const dlb_op_info op_table[DLB_OP_COUNT] = {
    [DLB_OP_ADD] = {"add", 2, DLB_CLASS_ARITHMETIC},
    [DLB_OP_SUBTRACT] = {"subtract", 2, DLB_CLASS_ARITHMETIC},
    [DLB_OP_MULTIPLY] = {"multiply", 2, DLB_CLASS_ARITHMETIC},
    [DLB_OP_DIVIDE] = {"divide", 2, DLB_CLASS_TRUE_DIVIDE},
    [DLB_OP_FLOOR_DIVIDE] = {"floor_divide", 2, DLB_CLASS_ARITHMETIC},
    [DLB_OP_MOD] = {"mod", 2, DLB_CLASS_ARITHMETIC},
    [DLB_OP_POWER] = {"power", 2, DLB_CLASS_ARITHMETIC},
    [DLB_OP_MAXIMUM] = {"maximum", 2, DLB_CLASS_ARITHMETIC},
    [DLB_OP_MINIMUM] = {"minimum", 2, DLB_CLASS_ARITHMETIC},
    [DLB_OP_ATAN2] = {"atan2", 2, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_BITWISE_AND] = {"bitwise_and", 2, DLB_CLASS_BITWISE},
    [DLB_OP_BITWISE_OR] = {"bitwise_or", 2, DLB_CLASS_BITWISE},
    [DLB_OP_BITWISE_XOR] = {"bitwise_xor", 2, DLB_CLASS_BITWISE},
    [DLB_OP_LEFT_SHIFT] = {"left_shift", 2, DLB_CLASS_BITWISE},
    [DLB_OP_RIGHT_SHIFT] = {"right_shift", 2, DLB_CLASS_BITWISE},
    [DLB_OP_LOGICAL_AND] = {"logical_and", 2, DLB_CLASS_LOGICAL},
    [DLB_OP_LOGICAL_OR] = {"logical_or", 2, DLB_CLASS_LOGICAL},
    [DLB_OP_LOGICAL_XOR] = {"logical_xor", 2, DLB_CLASS_LOGICAL},
    [DLB_OP_EQUAL] = {"equal", 2, DLB_CLASS_COMPARISON},
    [DLB_OP_NOT_EQUAL] = {"not_equal", 2, DLB_CLASS_COMPARISON},
    [DLB_OP_LESS] = {"less", 2, DLB_CLASS_COMPARISON},
    [DLB_OP_LESS_EQUAL] = {"less_equal", 2, DLB_CLASS_COMPARISON},
    [DLB_OP_GREATER] = {"greater", 2, DLB_CLASS_COMPARISON},
    [DLB_OP_GREATER_EQUAL] = {"greater_equal", 2, DLB_CLASS_COMPARISON},
    [DLB_OP_NEGATIVE] = {"negative", 1, DLB_CLASS_ARITHMETIC},
    [DLB_OP_BITWISE_NOT] = {"bitwise_not", 1, DLB_CLASS_BITWISE},
    [DLB_OP_LOGICAL_NOT] = {"logical_not", 1, DLB_CLASS_LOGICAL},
    [DLB_OP_ABS] = {"abs", 1, DLB_CLASS_ARITHMETIC},
    [DLB_OP_SIGN] = {"sign", 1, DLB_CLASS_ARITHMETIC},
    [DLB_OP_SQRT] = {"sqrt", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_EXP] = {"exp", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_EXP2] = {"exp2", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_EXPM1] = {"expm1", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_LOG] = {"log", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_LOG2] = {"log2", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_LOG10] = {"log10", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_LOG1P] = {"log1p", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_SIN] = {"sin", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_COS] = {"cos", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_TAN] = {"tan", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_ASIN] = {"asin", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_ACOS] = {"acos", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_ATAN] = {"atan", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_SINH] = {"sinh", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_COSH] = {"cosh", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_TANH] = {"tanh", 1, DLB_CLASS_FLOAT_MATH},
    [DLB_OP_FLOOR] = {"floor", 1, DLB_CLASS_ROUNDING},
    [DLB_OP_CEIL] = {"ceil", 1, DLB_CLASS_ROUNDING},
    [DLB_OP_TRUNC] = {"trunc", 1, DLB_CLASS_ROUNDING},
    [DLB_OP_ROUND] = {"round", 1, DLB_CLASS_ROUNDING},
    [DLB_OP_ISNAN] = {"isnan", 1, DLB_CLASS_PREDICATE},
    [DLB_OP_ISINF] = {"isinf", 1, DLB_CLASS_PREDICATE},
    [DLB_OP_ISFINITE] = {"isfinite", 1, DLB_CLASS_PREDICATE},
    [DLB_OP_WHERE] = {"where", 3, DLB_CLASS_WHERE},
    [DLB_OP_CLIP] = {"clip", 3, DLB_CLASS_ARITHMETIC}, /* minimum(maximum(a, lo), hi) */
};

const dlb_op_info *dlb_op_get(dlb_op op) { return &op_table[op]; }

static const char *dtype_name(dlb_dtype t) { return dlb_dtype_get(t)->name; }

static int is_complex(dlb_dtype t) { return dlb_dtype_get(t)->kind == DLB_KIND_COMPLEX; }

/* The kernel for op over loop dtype t, from whichever table has it. */
static dlb_loop find_kernel(dlb_op op, dlb_dtype t) {
  dlb_loop k = dlb_arith_loop(op, t);
  return k ? k : dlb_math_loop(op, t);
}

/* Fills types for an operation computing in loop dtype `loop` with inputs
 * cast to in_type, kernel output loop_out and result dtype result. */
static void set_types(dlb_op_types *types, int nin, dlb_dtype in_type, dlb_dtype loop_out,
                      dlb_dtype result) {
  for (int k = 0; k < nin; k++) types->in[k] = in_type;
  for (int k = nin; k < 3; k++) types->in[k] = in_type;
  types->loop_out = loop_out;
  types->result = result;
}

static dlb_status no_loop(const char *name, dlb_dtype t, const char *why, dlb_error *err) {
  return dlb_fail(err, DLB_E_DTYPE, "%s is not defined for %s%s", name, dtype_name(t), why);
}

dlb_status dlb_op_resolve(dlb_op op, const dlb_operand *in, dlb_op_types *types, dlb_error *err) {
  const dlb_op_info *info = &op_table[op];
  dlb_dtype c = info->cls == DLB_CLASS_WHERE ? dlb_result_type(2, in + 1)
                                             : dlb_result_type(info->nin, in);
  dlb_kind kind = dlb_dtype_get(c)->kind;
  dlb_dtype loop = dlb_compute_type(c);
  switch (info->cls) {
  case DLB_CLASS_ARITHMETIC:
    if (kind == DLB_KIND_BOOL) {
      if (op == DLB_OP_SUBTRACT || op == DLB_OP_NEGATIVE)
        return no_loop(info->name, c, " (use logical_xor / logical_not)", err);
      if (op == DLB_OP_SIGN) return no_loop(info->name, c, "", err);
      if (op == DLB_OP_FLOOR_DIVIDE || op == DLB_OP_MOD || op == DLB_OP_POWER) {
        set_types(types, info->nin, DLB_INT8, DLB_INT8, DLB_INT8); /* NumPy: bool -> int8 loop */
        break;
      }
    }
    if (kind == DLB_KIND_COMPLEX &&
        (op == DLB_OP_FLOOR_DIVIDE || op == DLB_OP_MOD || op == DLB_OP_MAXIMUM ||
         op == DLB_OP_MINIMUM || op == DLB_OP_CLIP))
      return no_loop(info->name, c, " (complex numbers are not ordered)", err);
    if (op == DLB_OP_ABS && kind == DLB_KIND_COMPLEX) { /* |z| is real */
      dlb_dtype real = c == DLB_COMPLEX64 ? DLB_FLOAT32 : DLB_FLOAT64;
      set_types(types, 1, c, real, real);
      break;
    }
    set_types(types, info->nin, loop, loop, c);
    break;
  case DLB_CLASS_TRUE_DIVIDE:
    if (kind != DLB_KIND_FLOAT && kind != DLB_KIND_COMPLEX) c = DLB_FLOAT64;
    set_types(types, info->nin, dlb_compute_type(c), dlb_compute_type(c), c);
    break;
  case DLB_CLASS_COMPARISON:
    if (kind == DLB_KIND_COMPLEX && op != DLB_OP_EQUAL && op != DLB_OP_NOT_EQUAL)
      return no_loop(info->name, c, " (complex numbers are not ordered)", err);
    set_types(types, info->nin, loop, DLB_BOOL, DLB_BOOL);
    break;
  case DLB_CLASS_BITWISE:
    if (kind != DLB_KIND_BOOL && kind != DLB_KIND_INT && kind != DLB_KIND_UINT)
      return no_loop(info->name, c, " (integers and bool only)", err);
    if (kind == DLB_KIND_BOOL && (op == DLB_OP_LEFT_SHIFT || op == DLB_OP_RIGHT_SHIFT))
      c = DLB_INT8;
    set_types(types, info->nin, c, c, c);
    break;
  case DLB_CLASS_LOGICAL:
    set_types(types, info->nin, DLB_BOOL, DLB_BOOL, DLB_BOOL);
    break;
  case DLB_CLASS_FLOAT_MATH:
    c = dlb_float_type_for(c);
    if (op == DLB_OP_ATAN2 && is_complex(c)) return no_loop(info->name, c, "", err);
    set_types(types, info->nin, dlb_compute_type(c), dlb_compute_type(c), c);
    break;
  case DLB_CLASS_ROUNDING:
    set_types(types, 1, loop, loop, c);
    break;
  case DLB_CLASS_PREDICATE:
    set_types(types, 1, loop, DLB_BOOL, DLB_BOOL);
    break;
  case DLB_CLASS_WHERE:
    types->in[0] = DLB_BOOL;
    types->in[1] = types->in[2] = c;
    types->loop_out = types->result = c;
    break;
  }
  if (!find_kernel(op, info->cls == DLB_CLASS_WHERE ? types->in[1] : types->in[0]))
    return no_loop(info->name, c, "", err);
  return DLB_OK;
}

/* --- scalars -------------------------------------------------------------- */

/* Stores v into dst as loop dtype, checked to fit the common dtype first. */
static dlb_status store_scalar(dlb_dtype common, dlb_dtype loop, const dlb_scalar *v, void *dst,
                               dlb_error *err) {
  _Alignas(16) unsigned char tmp[16];
  dlb_status st = dlb_scalar_store(common, tmp, v, err);
  if (st != DLB_OK) return st;
  return dlb_cast(loop, dst, 0, common, tmp, 0, 1, err);
}

/* A scalar as a condition: nonzero is true. */
static unsigned char scalar_truth(const dlb_scalar *v) {
  switch (v->kind) {
  case DLB_SCALAR_BOOL: return v->v.b != 0;
  case DLB_SCALAR_INT: return v->v.i != 0;
  case DLB_SCALAR_UINT: return v->v.u != 0;
  case DLB_SCALAR_FLOAT: return v->v.f != 0;
  default: return v->v.c.re != 0 || v->v.c.im != 0;
  }
}

/* --- the buffered walk ---------------------------------------------------- */

#define CHUNK 1024 /* elements per buffered step (NumPy: 8192) */

/* State of a walk whose operands need casting (or aligning) around the kernel. */
typedef struct buffered {
  dlb_loop kernel;
  int nop;
  dlb_dtype actual[4], loop[4]; /* operand 0 is the output */
  int cast[4];
  char *scratch[4];
  dlb_error *err;
  dlb_status status; /* a failed cast */
} buffered;

static int buffered_loop(char **data, const int64_t *steps, int64_t n, void *aux) {
  buffered *b = aux;
  char *ptr[4];
  int64_t step[4];
  for (int64_t done = 0; done < n;) {
    int64_t m = n - done < CHUNK ? n - done : CHUNK;
    for (int k = 1; k < b->nop; k++) {
      const char *src = data[k] + done * steps[k];
      if (!b->cast[k]) {
        ptr[k] = (char *)src;
        step[k] = steps[k];
        continue;
      }
      /* A stride-0 operand is cast once. */
      int64_t count = steps[k] == 0 ? 1 : m;
      size_t isz = dlb_dtype_get(b->loop[k])->itemsize;
      if ((b->status = dlb_cast(b->loop[k], b->scratch[k], (ptrdiff_t)isz, b->actual[k], src,
                                (ptrdiff_t)steps[k], (size_t)count, b->err)) != DLB_OK)
        return -1;
      ptr[k] = b->scratch[k];
      step[k] = steps[k] == 0 ? 0 : (int64_t)isz;
    }
    if (b->cast[0]) {
      ptr[0] = b->scratch[0];
      step[0] = (int64_t)dlb_dtype_get(b->loop[0])->itemsize;
    } else {
      ptr[0] = data[0] + done * steps[0];
      step[0] = steps[0];
    }
    int st = b->kernel(ptr, step, m, NULL);
    if (st) return st;
    if (b->cast[0] &&
        (b->status = dlb_cast(b->actual[0], data[0] + done * steps[0], (ptrdiff_t)steps[0],
                              b->loop[0], b->scratch[0], (ptrdiff_t)step[0], (size_t)m,
                              b->err)) != DLB_OK)
      return -1;
    done += m;
  }
  return 0;
}

/* Whether elements of t at p with byte strides can be read as C objects. */
static int aligned(dlb_dtype t, const char *p, int ndim, const int64_t *strides) {
  size_t isz = dlb_dtype_get(t)->itemsize;
  /* Item sizes are powers of two: a mask, not divisions (perf: half of this
   * function's time in a 10-element a + b went to the divides). */
  uint64_t mask = (isz > 8 ? 8 : isz) - 1, bits = (uintptr_t)p;
  for (int d = 0; d < ndim; d++) bits |= (uint64_t)strides[d];
  return (bits & mask) == 0;
}

/* Turns a kernel's error code into a status. */
static dlb_status kernel_failed(int code, const char *name, dlb_error *err) {
  if (code == DLB_ITER_STOPPED) return DLB_OK; /* the host's interrupt: dlb_work_end says so */
  if (code == DLB_LOOP_NEGATIVE_POWER)
    return dlb_fail(err, DLB_E_VALUE, "%s: integers to negative integer powers are not allowed",
                    name);
  return dlb_fail(err, DLB_E_VALUE, "%s failed", name);
}

/* --- the driver ----------------------------------------------------------- */

/* Resolves dtypes and stores the scalar operands into scalars[k] (loop
 * dtype). Comparisons with a scalar outside the common dtype's range
 * compare exactly in int64 or float64 instead of failing. */
static dlb_status prepare(dlb_op op, const dlb_operand *in, dlb_op_types *types,
                          unsigned char (*scalars)[16], dlb_error *err) {
  const dlb_op_info *info = &op_table[op];
  dlb_dtype common;
  dlb_status st = dlb_op_resolve(op, in, types, err);
  int scalars_given = 0;
  if (st != DLB_OK) return st;
  for (int k = 0; k < info->nin; k++) scalars_given |= !in[k].array;
  if (!scalars_given) return DLB_OK; /* nothing to store (the common case of arrays) */
  common = info->cls == DLB_CLASS_WHERE ? dlb_result_type(2, in + 1)
                                        : dlb_result_type(info->nin, in);
  if (info->cls == DLB_CLASS_TRUE_DIVIDE || info->cls == DLB_CLASS_FLOAT_MATH) common = types->result;
  for (int k = 0; k < info->nin; k++) {
    dlb_dtype c = common;
    if (in[k].array) continue;
    if (info->cls == DLB_CLASS_WHERE && k == 0) {
      scalars[k][0] = scalar_truth(&in[k].scalar);
      continue;
    }
    if (info->cls == DLB_CLASS_LOGICAL) c = dlb_scalar_dtype(&in[k].scalar);
    st = store_scalar(c, types->in[k], &in[k].scalar, scalars[k], err);
    if (st == DLB_E_VALUE && info->cls == DLB_CLASS_COMPARISON &&
        in[k].scalar.kind != DLB_SCALAR_COMPLEX) {
      /* exact: int64 holds every integer dtype but uint64 and every Lua integer */
      dlb_dtype wide = in[k].scalar.kind == DLB_SCALAR_INT && common != DLB_UINT64 &&
                               dlb_dtype_get(common)->kind != DLB_KIND_FLOAT
                           ? DLB_INT64
                           : DLB_FLOAT64;
      for (int j = 0; j < info->nin; j++) types->in[j] = wide;
      for (int j = 0; j < info->nin; j++)
        if (!in[j].array &&
            (st = store_scalar(dlb_scalar_dtype(&in[j].scalar), wide, &in[j].scalar, scalars[j],
                               err)) != DLB_OK)
          return st;
      return DLB_OK;
    }
    if (st != DLB_OK) return st;
  }
  return DLB_OK;
}

/* The walk itself over out and the (prepared) inputs. */
static dlb_status run(dlb_op op, const dlb_array *const *arrays, unsigned char (*scalars)[16],
                      const dlb_op_types *types, dlb_array *out, dlb_error *err) {
  const dlb_op_info *info = &op_table[op];
  int nop = info->nin + 1, ndim = out->ndim, need_buffer = 0;
  int64_t stride_store[4][DLB_MAX_NDIM];
  const int64_t *strides[4];
  char *data[4];
  buffered b;
  dlb_iter it;
  int code;
  memset(&b, 0, sizeof b);
  b.kernel = find_kernel(op, info->cls == DLB_CLASS_WHERE ? types->in[1] : types->in[0]);
  b.nop = nop;
  b.err = err;
  b.actual[0] = out->dtype;
  b.loop[0] = types->loop_out;
  dlb_broadcast_strides(out, ndim, out->shape, stride_store[0]);
  data[0] = dlb_array_host_data(out);
  for (int k = 0; k < info->nin; k++) {
    if (arrays[k]) {
      b.actual[k + 1] = arrays[k]->dtype;
      dlb_broadcast_strides(arrays[k], ndim, out->shape, stride_store[k + 1]);
      data[k + 1] = dlb_array_host_data(arrays[k]);
    } else {
      b.actual[k + 1] = types->in[k];
      memset(stride_store[k + 1], 0, (size_t)ndim * sizeof stride_store[k + 1][0]);
      data[k + 1] = (char *)scalars[k];
    }
    b.loop[k + 1] = types->in[k];
  }
  for (int k = 0; k < nop; k++) {
    strides[k] = stride_store[k];
    b.cast[k] = b.actual[k] != b.loop[k] || !aligned(b.actual[k], data[k], ndim, strides[k]);
    need_buffer |= b.cast[k];
  }
  if (!need_buffer && ndim <= 1) { /* one run: no iterator to set up (small arrays' case) */
    int64_t steps[4];
    for (int k = 0; k < nop; k++) steps[k] = ndim ? strides[k][0] : 0;
    code = ndim && out->shape[0] == 0 ? 0 : b.kernel(data, steps, ndim ? out->shape[0] : 1, NULL);
    return code ? kernel_failed(code, info->name, err) : DLB_OK;
  }
  dlb_iter_init(&it, nop, ndim, out->shape, data, strides);
  if (!need_buffer) {
    code = dlb_iter_run(&it, b.kernel, NULL);
    return code ? kernel_failed(code, info->name, err) : DLB_OK;
  }
  for (int k = 0; k < nop; k++) {
    if (!b.cast[k]) continue;
    b.scratch[k] = malloc(CHUNK * dlb_dtype_get(b.loop[k])->itemsize);
    if (!b.scratch[k]) {
      for (int j = 0; j < k; j++) free(b.scratch[j]);
      return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "%s: no memory for a cast buffer", info->name);
    }
  }
  code = dlb_iter_run(&it, buffered_loop, &b);
  for (int k = 0; k < nop; k++) free(b.scratch[k]);
  if (code == -1) return b.status;
  return code ? kernel_failed(code, info->name, err) : DLB_OK;
}

dlb_status dlb_elementwise_prepare(dlb_op op, const dlb_operand *in, dlb_backend *cpu,
                                   dlb_elementwise_plan *plan, dlb_error *err) {
  const dlb_op_info *info;
  dlb_status st;
  if ((unsigned)op >= DLB_OP_COUNT) {
    dlb_fail(err, DLB_E_ARGUMENT, "unknown operation %d", (int)op);
    dlb_error_hint(err, "op is one of the DLB_OP_* values of elementwise.h");
    return DLB_E_ARGUMENT;
  }
  info = &op_table[op];
  plan->op = op;
  for (int k = 0; k < info->nin; k++) plan->in[k] = in[k];
  if ((st = dlb_check_operands_for_elementwise(info->nin, in, cpu, &plan->where,
                                               &plan->on_device, info->name, err)) != DLB_OK ||
      (st = prepare(op, in, &plan->types, plan->scalars, err)) != DLB_OK ||
      (st = dlb_broadcast_shapes(info->nin, in, &plan->ndim, plan->shape, info->name, err)) !=
          DLB_OK)
    return st;
  plan->numel = 1;
  for (int d = 0; d < plan->ndim; d++) /* each operand's count fits: so does their broadcast */
    if (__builtin_mul_overflow(plan->numel, plan->shape[d], &plan->numel))
      return dlb_fail(err, DLB_E_SHAPE, "%s: the result has too many elements", info->name);
  return DLB_OK;
}

/* dlb_elementwise_run once the operands are checked and the work begun. */
static dlb_status run_planned(const dlb_elementwise_plan *plan, dlb_array *out,
                              dlb_placement where, int on_device, dlb_error *err) {
  const dlb_op_info *info = &op_table[plan->op];
  const dlb_array *arrays[3] = {NULL, NULL, NULL};
  dlb_array copies[3];
  int allocated = 0;
  dlb_status st = DLB_OK;
  for (int k = 0; k < 3; k++) copies[k].buffer = NULL; /* released: nothing to free */
  if (on_device) { /* the device backend's own kernel (device_kernels.h) */
    if (out->buffer && (st = dlb_check_device_out(out, plan->types.result, plan->ndim, plan->shape,
                                                  &where, info->name, err)) != DLB_OK)
      return st;
    return where.backend->kernels->elementwise(where.backend, plan, out, err);
  }
  if (!out->buffer) {
    st = dlb_array_allocate(out, where.backend, where.device_id, plan->types.result, plan->ndim,
                            plan->shape, 0, err);
    if (st != DLB_OK) return st;
    allocated = 1;
  } else if ((st = dlb_check_out(out, plan->types.result, plan->ndim, plan->shape, &where,
                                 info->name, err)) != DLB_OK) {
    return st;
  }
  for (int k = 0; k < info->nin; k++) {
    arrays[k] = plan->in[k].array;
    /* An input out partly overlaps is read from a copy (NumPy: as if copied). */
    if (arrays[k] && !allocated && dlb_arrays_overlap(out, arrays[k]) &&
        !dlb_arrays_same_layout(out, arrays[k])) {
      if ((st = dlb_array_clone(&copies[k], arrays[k], arrays[k]->dtype, err)) != DLB_OK) break;
      arrays[k] = &copies[k];
    }
  }
  if (st == DLB_OK && plan->numel == 0) {
    /* nothing to compute: a size-0 result (whose strides may be unbounded) */
  } else if (st == DLB_OK && !allocated && out->dtype != plan->types.result &&
      plan->types.result != plan->types.loop_out) {
    /* A float16 result computed in float32 goes into an out of a third
     * dtype: rounded to float16 first, as NumPy computes the result dtype
     * and then casts. */
    dlb_array tmp;
    tmp.buffer = NULL;
    st = dlb_array_allocate(&tmp, where.backend, where.device_id, plan->types.result, plan->ndim,
                            plan->shape, 0, err);
    if (st == DLB_OK)
      st = run(plan->op, arrays, (unsigned char(*)[16])plan->scalars, &plan->types, &tmp, err);
    if (st == DLB_OK) st = dlb_array_copy_into(out, &tmp, err);
    dlb_array_release(&tmp);
  } else if (st == DLB_OK) {
    st = run(plan->op, arrays, (unsigned char(*)[16])plan->scalars, &plan->types, out, err);
  }
  for (int k = 0; k < 3; k++) dlb_array_release(&copies[k]);
  if (st != DLB_OK && allocated) dlb_array_release(out);
  return st;
}

dlb_status dlb_elementwise_run(const dlb_elementwise_plan *plan, dlb_array *out, dlb_backend *cpu,
                               dlb_error *err) {
  const dlb_op_info *info = &op_table[plan->op];
  dlb_placement where;
  int on_device;
  dlb_status st;
  dlb_work w;
  if ((st = dlb_check_operands_for_elementwise(info->nin, plan->in, cpu, &where, &on_device,
                                               info->name, err)) != DLB_OK ||
      (st = dlb_work_begin(&w, where.backend->budget, plan->numel, info->name, err)) != DLB_OK)
    return st;
  return dlb_work_end(&w, run_planned(plan, out, where, on_device, err), info->name, err);
}

dlb_status dlb_elementwise(dlb_op op, const dlb_operand *in, dlb_array *out, dlb_backend *cpu,
                           dlb_error *err) {
  dlb_elementwise_plan plan;
  dlb_status st = dlb_elementwise_prepare(op, in, cpu, &plan, err);
  return st != DLB_OK ? st : dlb_elementwise_run(&plan, out, cpu, err);
}
