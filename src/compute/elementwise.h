/* elementwise.h -- element-wise operations (NumPy's ufuncs): how each
 * operation of DLB_ELEMENTWISE_OPS (dlbridge.h, which also defines the
 * dlb_op ids) picks its dtypes, and the one driver that runs them with
 * broadcasting, casting, `out` arrays and overlap handling. No Lua here. */
#ifndef DLB_COMPUTE_ELEMENTWISE_H
#define DLB_COMPUTE_ELEMENTWISE_H

#include "../dlbridge.h"
#include "operands.h"

/* How an operation chooses its dtypes from the common dtype C of its inputs. */
typedef enum dlb_op_class {
  DLB_CLASS_ARITHMETIC,  /* result C; bool: see elementwise.c */
  DLB_CLASS_TRUE_DIVIDE, /* result C, or float64 for bool and integer C */
  DLB_CLASS_COMPARISON,  /* computes in C, result bool */
  DLB_CLASS_BITWISE,     /* bool and integer C only; result C */
  DLB_CLASS_LOGICAL,     /* inputs as bool (x ~= 0), result bool */
  DLB_CLASS_FLOAT_MATH,  /* result dlb_float_type_for(C) */
  DLB_CLASS_ROUNDING,    /* result C (integers come back unchanged) */
  DLB_CLASS_PREDICATE,   /* isnan and friends: result bool */
  DLB_CLASS_WHERE        /* cond as bool; result the common dtype of x and y */
} dlb_op_class;

/* An operation's row of DLB_ELEMENTWISE_OPS, as the driver reads it. */
typedef struct dlb_op_info {
  const char *name; /* NumPy's name: "add", "floor_divide", "where" */
  int nin;          /* 1, 2 or 3 */
  dlb_op_class cls;
} dlb_op_info;

/* The row of op (a valid id). */
const dlb_op_info *dlb_op_get(dlb_op op);

/* The dtypes one call runs with: the kernel sees inputs of in[k] and writes
 * loop_out; the result array has dtype result (cast from loop_out when they
 * differ, as float16 results computed in float32 are). */
typedef struct dlb_op_types {
  dlb_dtype in[3];
  dlb_dtype loop_out;
  dlb_dtype result;
} dlb_op_types;

/* Picks the dtypes of op over in[0..nin-1] (NEP 50 promotion, then the
 * op's class); DLB_E_DTYPE when op has no loop for them (bitwise on floats,
 * ordering complex numbers, subtracting booleans). */
dlb_status dlb_op_resolve(dlb_op op, const dlb_operand *in, dlb_op_types *types, dlb_error *err);

/* What dlb_elementwise_prepare works out before anything is allocated: the
 * dtypes, the device, the result's shape and the scalars in loop dtypes. */
typedef struct dlb_elementwise_plan {
  dlb_op op;
  dlb_operand in[3];
  dlb_op_types types;
  dlb_placement where;
  int ndim;
  int64_t shape[DLB_MAX_NDIM];
  int64_t numel;
  int keep_order; /* a new result takes the operands' memory order (NumPy's
                     order 'K': dlb_shape_keep_order_strides), not C order;
                     0 from dlb_elementwise_prepare */
  _Alignas(16) unsigned char scalars[3][16];
} dlb_elementwise_plan;

/* Checks the operands and works out the plan of op over them (the errors
 * of dlb_elementwise that come before allocation). */
dlb_status dlb_elementwise_prepare(dlb_op op, const dlb_operand *in, dlb_backend *cpu,
                                   dlb_elementwise_plan *plan, dlb_error *err);

/* Runs a plan into out, as dlb_elementwise does (a new result in the
 * operands' memory order when plan->keep_order is set). The operands are checked
 * live again: code run between the two calls (a collection) may have
 * deleted them. */
dlb_status dlb_elementwise_run(const dlb_elementwise_plan *plan, dlb_array *out, dlb_backend *cpu,
                               dlb_error *err);

/*
 * Runs op element-wise over in[0..nin-1] (arrays and scalars, broadcast
 * together). When out->buffer is NULL a new contiguous result is allocated
 * on the operands' device (cpu when there is none) into *out; otherwise
 * *out is written (checked as dlb_check_out; it may be an input: in place;
 * inputs that partly overlap it are copied first). A scalar that does not
 * fit the common dtype is DLB_E_VALUE (comparisons excepted: they are exact).
 * On failure a newly allocated *out is released; a given one may be partly
 * written.
 */
dlb_status dlb_elementwise(dlb_op op, const dlb_operand *in, dlb_array *out, dlb_backend *cpu,
                           dlb_error *err);

#endif
