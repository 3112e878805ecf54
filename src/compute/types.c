/* types.c -- NumPy's dtype promotion, with NEP 50's weak Lua scalars. */
#include <pthread.h>
#include "types.h"

/* Value bits of an integer dtype's range, with the sign: int8 = 7 + sign. */
static int int_bits(dlb_dtype t) { return (int)dlb_dtype_get(t)->itemsize * 8; }

/* Mantissa bits (with the implicit one) of a real float dtype, or of a
 * complex dtype's parts. */
static int mantissa_bits(dlb_dtype t) {
  switch (t) {
    case DLB_FLOAT16: return 11;
    case DLB_BFLOAT16: return 8;
    case DLB_FLOAT32:
    case DLB_COMPLEX64: return 24;
    default: return 53;
  }
}

/* Exponent range rank of a float dtype (bfloat16 and float32 share one). */
static int exponent_rank(dlb_dtype t) {
  switch (t) {
    case DLB_FLOAT16: return 0;
    case DLB_BFLOAT16:
    case DLB_FLOAT32:
    case DLB_COMPLEX64: return 1;
    default: return 2;
  }
}

int dlb_can_cast_safely(dlb_dtype from, dlb_dtype to) {
  dlb_kind f = dlb_dtype_get(from)->kind, k = dlb_dtype_get(to)->kind;
  if (from == to || f == DLB_KIND_BOOL) return 1;
  switch (f) {
    case DLB_KIND_INT:
      if (k == DLB_KIND_INT) return int_bits(to) >= int_bits(from);
      if (k == DLB_KIND_UINT || k == DLB_KIND_BOOL) return 0;
      /* NumPy: int8 -> float16, int16 -> float32, int32/int64 -> float64 */
      return int_bits(from) <= 8    ? 1
             : int_bits(from) <= 16 ? mantissa_bits(to) >= 24
                                    : mantissa_bits(to) >= 53;
    case DLB_KIND_UINT:
      if (k == DLB_KIND_UINT) return int_bits(to) >= int_bits(from);
      if (k == DLB_KIND_INT) return int_bits(to) > int_bits(from);
      if (k == DLB_KIND_BOOL) return 0;
      return int_bits(from) <= 8    ? 1
             : int_bits(from) <= 16 ? mantissa_bits(to) >= 24
                                    : mantissa_bits(to) >= 53;
    case DLB_KIND_FLOAT:
      if (k != DLB_KIND_FLOAT && k != DLB_KIND_COMPLEX) return 0;
      return mantissa_bits(to) >= mantissa_bits(from) && exponent_rank(to) >= exponent_rank(from);
    case DLB_KIND_COMPLEX:
      return k == DLB_KIND_COMPLEX && dlb_dtype_get(to)->itemsize >= dlb_dtype_get(from)->itemsize;
    default: return 0;
  }
}

/* bool < uint < int < float < complex: same_kind allows a move up or across. */
static int kind_rank(dlb_dtype t) {
  switch (dlb_dtype_get(t)->kind) {
    case DLB_KIND_BOOL: return 0;
    case DLB_KIND_UINT: return 1;
    case DLB_KIND_INT: return 2;
    case DLB_KIND_FLOAT: return 3;
    default: return 4;
  }
}

int dlb_can_cast_same_kind(dlb_dtype from, dlb_dtype to) {
  return dlb_can_cast_safely(from, to) || kind_rank(to) >= kind_rank(from);
}

/* The order promotion searches: the first dtype both cast to wins. */
static const dlb_dtype promotion_order[] = {DLB_BOOL,    DLB_INT8,      DLB_UINT8,     DLB_INT16,
                                            DLB_UINT16,  DLB_INT32,     DLB_UINT32,    DLB_INT64,
                                            DLB_UINT64,  DLB_FLOAT16,   DLB_BFLOAT16,  DLB_FLOAT32,
                                            DLB_FLOAT64, DLB_COMPLEX64, DLB_COMPLEX128};

static dlb_dtype promote_by_search(dlb_dtype a, dlb_dtype b) {
  for (size_t i = 0; i < sizeof promotion_order / sizeof promotion_order[0]; i++) {
    dlb_dtype t = promotion_order[i];
    if (dlb_can_cast_safely(a, t) && dlb_can_cast_safely(b, t)) return t;
  }
  return DLB_COMPLEX128; /* not reached: everything casts to complex128 */
}

/* The search above for every pair, made once: promotion runs on every
 * operation, and the search was a fifth of a small operation's time. */
static unsigned char promotion_table[DLB_DTYPE_COUNT][DLB_DTYPE_COUNT];
static pthread_once_t promotion_once = PTHREAD_ONCE_INIT;

static void fill_promotion_table(void) {
  for (int a = 0; a < DLB_DTYPE_COUNT; a++)
    for (int b = 0; b < DLB_DTYPE_COUNT; b++)
      promotion_table[a][b] = (unsigned char)promote_by_search((dlb_dtype)a, (dlb_dtype)b);
}

dlb_dtype dlb_promote_types(dlb_dtype a, dlb_dtype b) {
  pthread_once(&promotion_once, fill_promotion_table);
  return (dlb_dtype)promotion_table[a][b];
}

dlb_dtype dlb_scalar_dtype(const dlb_scalar *v) {
  switch (v->kind) {
    case DLB_SCALAR_BOOL: return DLB_BOOL;
    case DLB_SCALAR_INT: return DLB_INT64;
    case DLB_SCALAR_UINT: return DLB_UINT64;
    case DLB_SCALAR_FLOAT: return DLB_FLOAT64;
    default: return DLB_COMPLEX128;
  }
}

/* The dtype a weak scalar of kind s makes of an array dtype t (NEP 50). */
static dlb_dtype weak_promote(dlb_dtype t, dlb_scalar_kind s) {
  dlb_kind k = dlb_dtype_get(t)->kind;
  switch (s) {
    case DLB_SCALAR_BOOL: return t;
    case DLB_SCALAR_INT:
    case DLB_SCALAR_UINT: return k == DLB_KIND_BOOL ? DLB_INT64 : t;
    case DLB_SCALAR_FLOAT: return k == DLB_KIND_FLOAT || k == DLB_KIND_COMPLEX ? t : DLB_FLOAT64;
    default:
      if (k == DLB_KIND_COMPLEX) return t;
      return t == DLB_FLOAT16 || t == DLB_BFLOAT16 || t == DLB_FLOAT32 ? DLB_COMPLEX64
                                                                       : DLB_COMPLEX128;
  }
}

dlb_dtype dlb_result_type(int n, const dlb_operand *in) {
  int have_array = 0;
  dlb_dtype t = DLB_BOOL;
  for (int k = 0; k < n; k++) {
    if (!in[k].array) continue;
    t = have_array ? dlb_promote_types(t, in[k].array->dtype) : in[k].array->dtype;
    have_array = 1;
  }
  if (!have_array) { /* scalars alone: the widest kind among them */
    t = DLB_BOOL;
    for (int k = 0; k < n; k++) t = dlb_promote_types(t, dlb_scalar_dtype(&in[k].scalar));
    return t;
  }
  for (int k = 0; k < n; k++)
    if (!in[k].array) t = weak_promote(t, in[k].scalar.kind);
  return t;
}

dlb_dtype dlb_float_type_for(dlb_dtype t) {
  switch (t) {
    case DLB_BOOL:
    case DLB_INT8:
    case DLB_UINT8: return DLB_FLOAT16;
    case DLB_INT16:
    case DLB_UINT16: return DLB_FLOAT32;
    case DLB_INT32:
    case DLB_UINT32:
    case DLB_INT64:
    case DLB_UINT64: return DLB_FLOAT64;
    default: return t;
  }
}
