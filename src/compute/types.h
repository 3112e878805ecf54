/* types.h -- which dtype an operation computes in: NumPy's promotion rules,
 * with Lua numbers as NEP 50 "weak" scalars. No Lua here. */
#ifndef DLB_COMPUTE_TYPES_H
#define DLB_COMPUTE_TYPES_H

#include "../core/array.h"

/* Whether every value of from is exactly a value of to (NumPy's "safe"
 * casting; int64 -> float64 counts as safe there, and here). */
int dlb_can_cast_safely(dlb_dtype from, dlb_dtype to);

/* Whether a result of from may be written into to (NumPy's "same_kind":
 * safe, or towards a kind at least as general: bool < uint < int < float <
 * complex, so float64 -> float32 and uint8 -> int8 are fine, float -> int is not). */
int dlb_can_cast_same_kind(dlb_dtype from, dlb_dtype to);

/* The smallest dtype both a and b cast to safely (np.promote_types;
 * bfloat16 with float16 gives float32, as in PyTorch). */
dlb_dtype dlb_promote_types(dlb_dtype a, dlb_dtype b);

/* One input of an operation: an array, or a Lua number (a weak scalar). */
typedef struct dlb_operand {
  const dlb_array *array; /* NULL: the operand is scalar */
  dlb_scalar scalar;
} dlb_operand;

/*
 * The common dtype of n operands (NEP 50): arrays promote as
 * dlb_promote_types; a scalar only contributes its kind. An integer scalar
 * keeps an int/uint/float/complex array's dtype (bool arrays become int64);
 * a float scalar keeps a float/complex dtype (int and bool become float64);
 * a complex scalar keeps complex, makes float16/bfloat16/float32 complex64
 * and anything else complex128; a boolean scalar keeps any dtype. With no
 * array at all, the scalars decide: bool, int64, float64 or complex128.
 * Does not check that the scalars fit (dlb_scalar_store does, strictly).
 */
dlb_dtype dlb_result_type(int n, const dlb_operand *in);

/* dtype of a scalar when it stands alone (bool, int64, float64, complex128;
 * uint64 for an integer above INT64_MAX). */
dlb_dtype dlb_scalar_dtype(const dlb_scalar *v);

/* The dtype NumPy's float functions (sqrt, exp, true division's result for
 * integer arguments aside) compute integers in: bool, int8, uint8 -> float16;
 * int16, uint16 -> float32; wider integers -> float64; floats and complex
 * are kept. */
dlb_dtype dlb_float_type_for(dlb_dtype t);

/* The dtype kernels compute in for elements of t: float16 and bfloat16
 * compute in float32 (rounded once when stored), every other dtype in itself. */
static inline dlb_dtype dlb_compute_type(dlb_dtype t) {
  return t == DLB_FLOAT16 || t == DLB_BFLOAT16 ? DLB_FLOAT32 : t;
}

#endif
