/* elementwise.c -- the planning of element-wise operations: dtype
 * resolution, scalars, broadcasting, the result array and overlap; the
 * call then goes to the kernels of the operands' memory
 * (dlb_kernels.elementwise; the host's walk is backends/cpu/elementwise.c). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/host.h"
#include "../core/shape.h"
#include "../core/tensor.h"
#include "../core/work.h"
#include "elementwise.h"

#define OP_INFO(ID, name, nin, cls, ...) [DLB_OP_##ID] = {#name, nin, DLB_CLASS_##cls},
static const dlb_op_info op_table[DLB_OP_COUNT] = {DLB_ELEMENTWISE_OPS(OP_INFO)};
#undef OP_INFO

const dlb_op_info *dlb_op_get(dlb_op op) { return &op_table[op]; }

/* Each operation's loop dtypes: its loops column ("BIFC"), one letter per
 * family of dtypes. They define which dtypes an operation takes, on every
 * device; the host's loops are exactly these (tests/c/test_ops.c). */
#define OP_LOOPS(ID, name, nin, cls, loops, ...) [DLB_OP_##ID] = #loops,
static const char *const op_loops[DLB_OP_COUNT] = {DLB_ELEMENTWISE_OPS(OP_LOOPS)};
#undef OP_LOOPS

/* The letter of a loops column that stands for a dtype's family. */
static const char loop_letter[DLB_DTYPE_COUNT] = {
    [DLB_BOOL] = 'B',    [DLB_INT8] = 'I',      [DLB_INT16] = 'I',     [DLB_INT32] = 'I',
    [DLB_INT64] = 'I',   [DLB_UINT8] = 'I',     [DLB_UINT16] = 'I',    [DLB_UINT32] = 'I',
    [DLB_UINT64] = 'I',  [DLB_FLOAT16] = 'H',   [DLB_BFLOAT16] = 'H',  [DLB_FLOAT32] = 'F',
    [DLB_FLOAT64] = 'F', [DLB_COMPLEX64] = 'C', [DLB_COMPLEX128] = 'C'};

/* Whether op has a loop for inputs of loop dtype t. */
static int has_loop(dlb_op op, dlb_dtype t) {
  for (const char *c = op_loops[op]; *c; c++)
    if (*c == loop_letter[t]) return 1;
  return 0;
}

static const char *dtype_name(dlb_dtype t) { return dlb_dtype_get(t)->name; }

static int is_complex(dlb_dtype t) { return dlb_dtype_get(t)->kind == DLB_KIND_COMPLEX; }

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
  dlb_dtype c =
      info->cls == DLB_CLASS_WHERE ? dlb_result_type(2, in + 1) : dlb_result_type(info->nin, in);
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
    case DLB_CLASS_LOGICAL: set_types(types, info->nin, DLB_BOOL, DLB_BOOL, DLB_BOOL); break;
    case DLB_CLASS_FLOAT_MATH:
      c = dlb_float_type_for(c);
      if (op == DLB_OP_ATAN2 && is_complex(c)) return no_loop(info->name, c, "", err);
      set_types(types, info->nin, dlb_compute_type(c), dlb_compute_type(c), c);
      break;
    case DLB_CLASS_ROUNDING: set_types(types, 1, loop, loop, c); break;
    case DLB_CLASS_PREDICATE: set_types(types, 1, loop, DLB_BOOL, DLB_BOOL); break;
    case DLB_CLASS_WHERE:
      types->in[0] = DLB_BOOL;
      types->in[1] = types->in[2] = c;
      types->loop_out = types->result = c;
      break;
  }
  if (!has_loop(op, info->cls == DLB_CLASS_WHERE ? types->in[1] : types->in[0]))
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
  return dlb_host.cast(loop, dst, 0, common, tmp, 0, 1, err);
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
  common =
      info->cls == DLB_CLASS_WHERE ? dlb_result_type(2, in + 1) : dlb_result_type(info->nin, in);
  if (info->cls == DLB_CLASS_TRUE_DIVIDE || info->cls == DLB_CLASS_FLOAT_MATH)
    common = types->result;
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
        if (!in[j].array && (st = store_scalar(dlb_scalar_dtype(&in[j].scalar), wide, &in[j].scalar,
                                               scalars[j], err)) != DLB_OK)
          return st;
      return DLB_OK;
    }
    if (st != DLB_OK) return st;
  }
  return DLB_OK;
}

/* Runs the planned operation over arrays (NULL: scalar k) into out, a
 * checked array of the plan's shape, through the kernels of out's memory. */
static dlb_status dispatch(const dlb_elementwise_plan *plan, const dlb_array *const *arrays,
                           dlb_array *out, dlb_error *err) {
  const dlb_op_info *info = &op_table[plan->op];
  const dlb_array *sites[4] = {out, arrays[0], arrays[1], arrays[2]};
  int64_t strides[3][DLB_MAX_NDIM];
  dlb_elementwise_call call;
  dlb_kernel_site site;
  dlb_status st;
  if ((st = dlb_kernel_site_open(sites, 4, &site, err)) != DLB_OK) return st;
  call.op = (int32_t)plan->op;
  call.nin = info->nin;
  dlb_tensor_of(out, &call.out);
  for (int k = 0; k < info->nin; k++) {
    call.is_scalar[k] = !arrays[k];
    call.loop_in[k] = dlb_dtype_to_dl(plan->types.in[k]);
    if (arrays[k]) {
      dlb_tensor_of(arrays[k], &call.in[k]);
      dlb_broadcast_strides(arrays[k], out->ndim, out->shape, strides[k]);
      call.in[k].ndim = out->ndim;
      call.in[k].shape = out->shape;
      call.in[k].strides = strides[k];
    } else {
      memset(&call.in[k], 0, sizeof call.in[k]);
      call.in[k].dtype = call.loop_in[k];
      memcpy(call.scalar[k], plan->scalars[k], sizeof call.scalar[k]);
    }
  }
  call.loop_out = dlb_dtype_to_dl(plan->types.loop_out);
  call.queue = site.queue;
  call.error.message[0] = 0; /* the rest of the message is the kernel's to write */
  call.error.hint = NULL;
  st = site.kernels->elementwise(site.ctx, &call);
  return dlb_kernel_site_end(&site, st, &call.error, info->name, sites, 4, err);
}

dlb_status dlb_elementwise_prepare(dlb_op op, const dlb_operand *in, dlb_backend *cpu,
                                   dlb_elementwise_plan *plan, dlb_error *err) {
  const dlb_op_info *info;
  dlb_status st;
  if ((unsigned)op >= DLB_OP_COUNT) {
    dlb_fail(err, DLB_E_ARGUMENT, "unknown operation %d", (int)op);
    dlb_error_hint(err, "op is one of the DLB_OP_* values of dlbridge.h");
    return DLB_E_ARGUMENT;
  }
  info = &op_table[op];
  plan->op = op;
  plan->keep_order = 0;
  for (int k = 0; k < info->nin; k++) plan->in[k] = in[k];
  if ((st = dlb_check_operands_for(info->nin, in, cpu, offsetof(dlb_kernels, elementwise),
                                   &plan->where, info->name, err)) != DLB_OK ||
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

/* Lays a new result out in the memory order of the plan's arrays (the
 * same bytes: only the strides change). */
static void keep_order(const dlb_elementwise_plan *plan, dlb_array *out) {
  int64_t strides[3][DLB_MAX_NDIM];
  const int64_t *of[3];
  int n = 0;
  for (int k = 0; k < op_table[plan->op].nin; k++)
    if (plan->in[k].array) {
      dlb_broadcast_strides(plan->in[k].array, plan->ndim, plan->shape, strides[n]);
      of[n] = strides[n], n++;
    }
  dlb_shape_keep_order_strides(plan->ndim, plan->shape, n, of, out->strides);
}

/* dlb_elementwise_run once the operands are checked and the work begun. */
static dlb_status run_planned(const dlb_elementwise_plan *plan, dlb_array *out, dlb_placement where,
                              dlb_error *err) {
  const dlb_op_info *info = &op_table[plan->op];
  const dlb_array *arrays[3] = {NULL, NULL, NULL};
  dlb_array copies[3];
  int allocated = 0;
  dlb_status st = DLB_OK;
  for (int k = 0; k < 3; k++) copies[k].buffer = NULL; /* released: nothing to free */
  if (!out->buffer) {
    st = dlb_array_allocate(out, where.backend, where.device_id, plan->types.result, plan->ndim,
                            plan->shape, 0, err);
    if (st != DLB_OK) return st;
    allocated = 1;
    if (plan->keep_order && plan->ndim > 1 && plan->numel > 0) keep_order(plan, out);
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
    if (st == DLB_OK) st = dispatch(plan, arrays, &tmp, err);
    if (st == DLB_OK) st = dlb_array_copy_into(out, &tmp, err);
    dlb_array_release(&tmp);
  } else if (st == DLB_OK) {
    st = dispatch(plan, arrays, out, err);
  }
  for (int k = 0; k < 3; k++) dlb_array_release(&copies[k]);
  if (st != DLB_OK && allocated) dlb_array_release(out);
  return st;
}

dlb_status dlb_elementwise_run(const dlb_elementwise_plan *plan, dlb_array *out, dlb_backend *cpu,
                               dlb_error *err) {
  const dlb_op_info *info = &op_table[plan->op];
  dlb_placement where;
  dlb_status st;
  dlb_work w;
  if ((st = dlb_check_operands_for(info->nin, plan->in, cpu, offsetof(dlb_kernels, elementwise),
                                   &where, info->name, err)) != DLB_OK ||
      (st = dlb_work_begin(&w, where.backend->budget, plan->numel, info->name, err)) != DLB_OK)
    return st;
  return dlb_work_end(&w, run_planned(plan, out, where, err), info->name, err);
}

dlb_status dlb_elementwise(dlb_op op, const dlb_operand *in, dlb_array *out, dlb_backend *cpu,
                           dlb_error *err) {
  dlb_elementwise_plan plan;
  dlb_status st = dlb_elementwise_prepare(op, in, cpu, &plan, err);
  return st != DLB_OK ? st : dlb_elementwise_run(&plan, out, cpu, err);
}
