/* loops_arith.c -- the kernels of arithmetic, comparisons, bitwise and
 * logical operations, and where: one C expression per (operation, dtype),
 * expanded into a loop with contiguous and stride-0 branches that the
 * compiler vectorises (NumPy's BINARY_LOOP_FAST, fast_loop_macros.h). */
#include <math.h>
#include <string.h>
#include "loops.h"
#include "element_types.h"

/* The integer macros below serve signed and unsigned types alike: "b < 0"
 * is always false for the unsigned ones, and that is intended. */
#pragma GCC diagnostic ignored "-Wtype-limits"
#ifdef __clang__
#pragma clang diagnostic ignored "-Wtautological-compare"
#pragma clang diagnostic ignored "-Wtautological-unsigned-zero-compare"
#endif

/* --- loop shapes --------------------------------------------------------- */

/* Names built by the template files (arith_*.h). */
#define ARITH_CAT_(a, b) a##b
#define ARITH_CAT(a, b) ARITH_CAT_(a, b)

/* A two-input kernel name(out, a, b): out = EXPR over a and b of type TI,
 * and a one-input one name(out, a): out = EXPR over a. EXPR becomes the
 * operation name_element, which the loop of its types (arith_loop.h, below)
 * runs over the elements. */
#define BINARY_KERNEL(name, TI, TO, EXPR)                                                          \
  static inline TO name##_element(const TI a, const TI b) { return (EXPR); }                       \
  DLB_KERNEL_CLONES static int name(char **data, const int64_t *steps, int64_t n, void *aux) {     \
    (void)aux;                                                                                     \
    return ARITH_CAT(binary_loop_, ARITH_CAT(TI, ARITH_CAT(_to_, TO)))(data, steps, n,             \
                                                                       name##_element);            \
  }
#define UNARY_KERNEL(name, TI, TO, EXPR)                                                           \
  static inline TO name##_element(const TI a) { return (EXPR); }                                   \
  DLB_KERNEL_CLONES static int name(char **data, const int64_t *steps, int64_t n, void *aux) {     \
    (void)aux;                                                                                     \
    return ARITH_CAT(unary_loop_, ARITH_CAT(TI, ARITH_CAT(_to_, TO)))(data, steps, n,              \
                                                                      name##_element);             \
  }

/* The loops of every element type (arith_loops.h), and bool's own. */
#define T int8_t
#include "arith_loops.h"
#define T int16_t
#include "arith_loops.h"
#define T int32_t
#include "arith_loops.h"
#define T int64_t
#include "arith_loops.h"
#define T uint8_t
#include "arith_loops.h"
#define T uint16_t
#include "arith_loops.h"
#define T uint32_t
#include "arith_loops.h"
#define T uint64_t
#include "arith_loops.h"
#define T float
#include "arith_loops.h"
#define T double
#include "arith_loops.h"
#define T complex64
#include "arith_loops.h"
#define T complex128
#include "arith_loops.h"
#define TI dlb_bool8
#define TO dlb_bool8
#include "arith_loop.h"

/* A kernel whose body is a statement over one element (for operations that
 * can fail or branch too much for an expression): BODY reads a (and b) and
 * sets o, or returns an error code. */
#define BINARY_STATEMENT_KERNEL(name, TI, TO, BODY)                                                \
  static int name(char **data, const int64_t *steps, int64_t n, void *aux) {                       \
    char *po = data[0], *pa = data[1], *pb = data[2];                                              \
    (void)aux;                                                                                     \
    for (int64_t i = 0; i < n; i++, po += steps[0], pa += steps[1], pb += steps[2]) {              \
      const TI a = *(const TI *)pa, b = *(const TI *)pb;                                           \
      TO o;                                                                                        \
      BODY;                                                                                        \
      *(TO *)po = o;                                                                               \
    }                                                                                              \
    return 0;                                                                                      \
  }

/* --- integer helpers (no signed overflow: wrap through the unsigned type) --- */

/* "* 1u" makes the arithmetic unsigned int (or wider) even for 8- and 16-bit
 * types, which C would otherwise promote to int, where 65535 * 65535 overflows. */
#define WRAP(T, U, a, op, b) ((T)((U)(a)*1u op(U)(b)))

/* Python's floor division and modulo on integers; b == 0 gives 0 and
 * MIN // -1 gives MIN (wrapped), as NumPy. */
#define INT_DIVMOD_HELPERS(T, U, MIN)                                                              \
  static inline T floor_div_##T(T a, T b) {                                                        \
    if (b == 0) return 0;                                                                          \
    if (b == -1) return (T)(0 - (U)a);                                                             \
    T q = a / b;                                                                                   \
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;                                                 \
    return q;                                                                                      \
  }                                                                                                \
  static inline T floor_mod_##T(T a, T b) {                                                        \
    if (b == 0 || b == -1) return 0;                                                               \
    T r = a % b;                                                                                   \
    if (r != 0 && ((r < 0) != (b < 0))) r += b;                                                    \
    return r;                                                                                      \
  }

#define UINT_DIVMOD_HELPERS(T)                                                                     \
  static inline T floor_div_##T(T a, T b) { return b == 0 ? 0 : (T)(a / b); }                      \
  static inline T floor_mod_##T(T a, T b) { return b == 0 ? 0 : (T)(a % b); }

INT_DIVMOD_HELPERS(int8_t, uint8_t, INT8_MIN)
INT_DIVMOD_HELPERS(int16_t, uint16_t, INT16_MIN)
INT_DIVMOD_HELPERS(int32_t, uint32_t, INT32_MIN)
INT_DIVMOD_HELPERS(int64_t, uint64_t, INT64_MIN)
UINT_DIVMOD_HELPERS(uint8_t)
UINT_DIVMOD_HELPERS(uint16_t)
UINT_DIVMOD_HELPERS(uint32_t)
UINT_DIVMOD_HELPERS(uint64_t)

/* a ** b by squaring, wrapping; a negative b is an error for signed types. */
#define INT_POWER_HELPER(T, U)                                                                     \
  static inline int power_##T(T a, T b, T *out) {                                                  \
    U result = 1, base = (U)a;                                                                     \
    if (b < 0) return DLB_LOOP_NEGATIVE_POWER;                                                     \
    for (uint64_t e = (uint64_t)b; e; e >>= 1) {                                                   \
      if (e & 1) result = (U)(result * 1u * base);                                                 \
      base = (U)(base * 1u * base);                                                                \
    }                                                                                              \
    *out = (T)result;                                                                              \
    return 0;                                                                                      \
  }

INT_POWER_HELPER(int8_t, uint8_t)
INT_POWER_HELPER(int16_t, uint16_t)
INT_POWER_HELPER(int32_t, uint32_t)
INT_POWER_HELPER(int64_t, uint64_t)
INT_POWER_HELPER(uint8_t, uint8_t)
INT_POWER_HELPER(uint16_t, uint16_t)
INT_POWER_HELPER(uint32_t, uint32_t)
INT_POWER_HELPER(uint64_t, uint64_t)

/* NumPy's shifts: a shift by the width or more (or a negative one, seen as
 * huge) gives 0, or -1 for a negative signed value shifted right. */
#define SHIFT_HELPERS(T, U)                                                                        \
  static inline T shift_left_##T(T a, T b) {                                                       \
    return (U)b < sizeof(T) * 8 ? (T)((U)a * 1u << (U)b) : 0;                                      \
  }                                                                                                \
  static inline T shift_right_##T(T a, T b) {                                                      \
    return (U)b < sizeof(T) * 8 ? (T)(a >> (U)b) : (T)(a < 0 ? (T)-1 : 0);                         \
  }

SHIFT_HELPERS(int8_t, uint8_t)
SHIFT_HELPERS(int16_t, uint16_t)
SHIFT_HELPERS(int32_t, uint32_t)
SHIFT_HELPERS(int64_t, uint64_t)
SHIFT_HELPERS(uint8_t, uint8_t)
SHIFT_HELPERS(uint16_t, uint16_t)
SHIFT_HELPERS(uint32_t, uint32_t)
SHIFT_HELPERS(uint64_t, uint64_t)

/* --- float helpers (NumPy's npy_divmod) --------------------------------- */

/* floor_mod_T and floor_div_T (arith_float.h). */
#define T float
#define FMOD fmodf
#define FLOOR floorf
#define COPYSIGN copysignf
#include "arith_float.h"
#define T double
#define FMOD fmod
#define FLOOR floor
#define COPYSIGN copysign
#include "arith_float.h"

/* maximum/minimum propagate NaN (np.maximum, not np.fmax). */
#define FMAX(a, b) ((a) >= (b) || (a) != (a) ? (a) : (b))
#define FMIN(a, b) ((a) <= (b) || (a) != (a) ? (a) : (b))

/* --- complex helpers ---------------------------------------------------- */

#include <complex.h>
/* cadd_C, csub_C, cmul_C, cdiv_C, cneg_C, ceq_C, cne_C and cpow_C
 * (arith_complex.h). */
#define C complex64
#define R float
#define FABS fabsf
#define CPOW cpowf
#define CTYPE float complex
#include "arith_complex.h"
#define C complex128
#define R double
#define FABS fabs
#define CPOW cpow
#define CTYPE double complex
#include "arith_complex.h"

/* --- the kernels ---------------------------------------------------------- */

/* Every integer dtype: (T, unsigned twin, the kernels' suffix: loops.h). */
#define FOR_INTS(X)                                                                                \
  X(int8_t, uint8_t, i8)                                                                           \
  X(int16_t, uint16_t, i16)                                                                        \
  X(int32_t, uint32_t, i32)                                                                        \
  X(int64_t, uint64_t, i64)                                                                        \
  X(uint8_t, uint8_t, u8) X(uint16_t, uint16_t, u16) X(uint32_t, uint32_t, u32)                    \
      X(uint64_t, uint64_t, u64)

/* The six comparisons of a real type T (kernels' suffix S). */
#define COMPARISON_KERNELS(T, S)                                                                   \
  BINARY_KERNEL(equal_##S, T, dlb_bool8, a == b)                                                   \
  BINARY_KERNEL(not_equal_##S, T, dlb_bool8, a != b)                                               \
  BINARY_KERNEL(less_##S, T, dlb_bool8, a < b)                                                     \
  BINARY_KERNEL(less_equal_##S, T, dlb_bool8, a <= b)                                              \
  BINARY_KERNEL(greater_##S, T, dlb_bool8, a > b)                                                  \
  BINARY_KERNEL(greater_equal_##S, T, dlb_bool8, a >= b)

#define INT_KERNELS(T, U, S)                                                                       \
  BINARY_KERNEL(add_##S, T, T, WRAP(T, U, a, +, b))                                                \
  BINARY_KERNEL(subtract_##S, T, T, WRAP(T, U, a, -, b))                                           \
  BINARY_KERNEL(multiply_##S, T, T, WRAP(T, U, a, *, b))                                           \
  BINARY_KERNEL(maximum_##S, T, T, a > b ? a : b)                                                  \
  BINARY_KERNEL(minimum_##S, T, T, a < b ? a : b)                                                  \
  BINARY_KERNEL(bitwise_and_##S, T, T, (T)(a & b))                                                 \
  BINARY_KERNEL(bitwise_or_##S, T, T, (T)(a | b))                                                  \
  BINARY_KERNEL(bitwise_xor_##S, T, T, (T)(a ^ b))                                                 \
  BINARY_KERNEL(left_shift_##S, T, T, shift_left_##T(a, b))                                        \
  BINARY_KERNEL(right_shift_##S, T, T, shift_right_##T(a, b))                                      \
  BINARY_KERNEL(floor_divide_##S, T, T, floor_div_##T(a, b))                                       \
  BINARY_KERNEL(mod_##S, T, T, floor_mod_##T(a, b))                                                \
  BINARY_STATEMENT_KERNEL(power_##S, T, T, {                                                       \
    int st_ = power_##T(a, b, &o);                                                                 \
    if (st_) return st_;                                                                           \
  })                                                                                               \
  COMPARISON_KERNELS(T, S)                                                                         \
  UNARY_KERNEL(negative_##S, T, T, (T)(0 - (U)a))                                                  \
  UNARY_KERNEL(bitwise_not_##S, T, T, (T)~a)

FOR_INTS(INT_KERNELS)

#define FLOAT_KERNELS(T, S, POW)                                                                   \
  BINARY_KERNEL(add_##S, T, T, a + b)                                                              \
  BINARY_KERNEL(subtract_##S, T, T, a - b)                                                         \
  BINARY_KERNEL(multiply_##S, T, T, a *b)                                                          \
  BINARY_KERNEL(divide_##S, T, T, a / b)                                                           \
  BINARY_KERNEL(maximum_##S, T, T, FMAX(a, b))                                                     \
  BINARY_KERNEL(minimum_##S, T, T, FMIN(a, b))                                                     \
  BINARY_KERNEL(floor_divide_##S, T, T, floor_div_##T(a, b))                                       \
  BINARY_KERNEL(mod_##S, T, T, floor_mod_##T(a, b))                                                \
  BINARY_KERNEL(power_##S, T, T, POW(a, b))                                                        \
  COMPARISON_KERNELS(T, S)                                                                         \
  UNARY_KERNEL(negative_##S, T, T, -a)

FLOAT_KERNELS(float, f32, powf)
FLOAT_KERNELS(double, f64, pow)

#define COMPLEX_KERNELS(C, S)                                                                      \
  BINARY_KERNEL(add_##S, C, C, cadd_##C(a, b))                                                     \
  BINARY_KERNEL(subtract_##S, C, C, csub_##C(a, b))                                                \
  BINARY_KERNEL(multiply_##S, C, C, cmul_##C(a, b))                                                \
  BINARY_KERNEL(divide_##S, C, C, cdiv_##C(a, b))                                                  \
  BINARY_KERNEL(power_##S, C, C, cpow_##C(a, b))                                                   \
  BINARY_KERNEL(equal_##S, C, dlb_bool8, ceq_##C(a, b))                                            \
  BINARY_KERNEL(not_equal_##S, C, dlb_bool8, cne_##C(a, b))                                        \
  UNARY_KERNEL(negative_##S, C, C, cneg_##C(a))

COMPLEX_KERNELS(complex64, c64)
COMPLEX_KERNELS(complex128, c128)

/* bool: + is or, * is and (NumPy), comparisons on 0/1. */
BINARY_KERNEL(or_bool, dlb_bool8, dlb_bool8, (dlb_bool8)((a | b) != 0))
BINARY_KERNEL(and_bool, dlb_bool8, dlb_bool8, (dlb_bool8)((a & b) != 0))
BINARY_KERNEL(xor_bool, dlb_bool8, dlb_bool8, (dlb_bool8)((a != 0) != (b != 0)))
BINARY_KERNEL(logical_and_bool, dlb_bool8, dlb_bool8, (dlb_bool8)(a != 0 && b != 0))
BINARY_KERNEL(logical_or_bool, dlb_bool8, dlb_bool8, (dlb_bool8)(a != 0 || b != 0))
BINARY_KERNEL(equal_bool, dlb_bool8, dlb_bool8, (dlb_bool8)((a != 0) == (b != 0)))
BINARY_KERNEL(not_equal_bool, dlb_bool8, dlb_bool8, (dlb_bool8)((a != 0) != (b != 0)))
BINARY_KERNEL(less_bool, dlb_bool8, dlb_bool8, (dlb_bool8)((a != 0) < (b != 0)))
BINARY_KERNEL(less_equal_bool, dlb_bool8, dlb_bool8, (dlb_bool8)((a != 0) <= (b != 0)))
BINARY_KERNEL(greater_bool, dlb_bool8, dlb_bool8, (dlb_bool8)((a != 0) > (b != 0)))
BINARY_KERNEL(greater_equal_bool, dlb_bool8, dlb_bool8, (dlb_bool8)((a != 0) >= (b != 0)))
UNARY_KERNEL(logical_not_bool, dlb_bool8, dlb_bool8, (dlb_bool8)(a == 0))

/* where(cond, x, y) moves whole elements: one kernel per element size
 * (arith_where.h). */
#define NAME where_1
#define T uint8_t
#include "arith_where.h"
#define NAME where_2
#define T uint16_t
#include "arith_where.h"
#define NAME where_4
#define T uint32_t
#include "arith_where.h"
#define NAME where_8
#define T uint64_t
#include "arith_where.h"
#define NAME where_16
#define T complex128
#include "arith_where.h"

/* clip(a, lo, hi) = minimum(maximum(a, lo), hi), NaN propagating as those do
 * (arith_clip.h), with the MAX and MIN of each dtype. */
#define IMAX(a, b) ((a) > (b) ? (a) : (b))
#define IMIN(a, b) ((a) < (b) ? (a) : (b))
#define BMAX(a, b) ((dlb_bool8)(((a) | (b)) != 0))
#define BMIN(a, b) ((dlb_bool8)(((a) & (b)) != 0))
#define NAME clip_bool
#define T dlb_bool8
#define MAX BMAX
#define MIN BMIN
#include "arith_clip.h"
#define NAME clip_i8
#define T int8_t
#define MAX IMAX
#define MIN IMIN
#include "arith_clip.h"
#define NAME clip_i16
#define T int16_t
#define MAX IMAX
#define MIN IMIN
#include "arith_clip.h"
#define NAME clip_i32
#define T int32_t
#define MAX IMAX
#define MIN IMIN
#include "arith_clip.h"
#define NAME clip_i64
#define T int64_t
#define MAX IMAX
#define MIN IMIN
#include "arith_clip.h"
#define NAME clip_u8
#define T uint8_t
#define MAX IMAX
#define MIN IMIN
#include "arith_clip.h"
#define NAME clip_u16
#define T uint16_t
#define MAX IMAX
#define MIN IMIN
#include "arith_clip.h"
#define NAME clip_u32
#define T uint32_t
#define MAX IMAX
#define MIN IMIN
#include "arith_clip.h"
#define NAME clip_u64
#define T uint64_t
#define MAX IMAX
#define MIN IMIN
#include "arith_clip.h"
#define NAME clip_f32
#define T float
#define MAX FMAX
#define MIN FMIN
#include "arith_clip.h"
#define NAME clip_f64
#define T double
#define MAX FMAX
#define MIN FMIN
#include "arith_clip.h"

/* --- lookup ------------------------------------------------------------- */

/* The kernels by operation and loop dtype (where's go by element size):
 * what DLB_ELEMENTWISE_OPS declares for the operations of this file, and no
 * more (tests/c/test_ops.c checks both tables). */
static const dlb_loop kernels[DLB_OP_COUNT][DLB_DTYPE_COUNT] = {
    [DLB_OP_ADD] = {[DLB_BOOL] = or_bool, DLB_ROW_I(add), DLB_ROW_F(add), DLB_ROW_C(add)},
    [DLB_OP_SUBTRACT] = {DLB_ROW_I(subtract), DLB_ROW_F(subtract), DLB_ROW_C(subtract)},
    [DLB_OP_MULTIPLY] = {[DLB_BOOL] = and_bool,
                         DLB_ROW_I(multiply),
                         DLB_ROW_F(multiply),
                         DLB_ROW_C(multiply)},
    [DLB_OP_DIVIDE] = {DLB_ROW_F(divide), DLB_ROW_C(divide)},
    [DLB_OP_FLOOR_DIVIDE] = {DLB_ROW_I(floor_divide), DLB_ROW_F(floor_divide)},
    [DLB_OP_MOD] = {DLB_ROW_I(mod), DLB_ROW_F(mod)},
    [DLB_OP_POWER] = {DLB_ROW_I(power), DLB_ROW_F(power), DLB_ROW_C(power)},
    [DLB_OP_MAXIMUM] = {[DLB_BOOL] = or_bool, DLB_ROW_I(maximum), DLB_ROW_F(maximum)},
    [DLB_OP_MINIMUM] = {[DLB_BOOL] = and_bool, DLB_ROW_I(minimum), DLB_ROW_F(minimum)},
    [DLB_OP_BITWISE_AND] = {[DLB_BOOL] = and_bool, DLB_ROW_I(bitwise_and)},
    [DLB_OP_BITWISE_OR] = {[DLB_BOOL] = or_bool, DLB_ROW_I(bitwise_or)},
    [DLB_OP_BITWISE_XOR] = {[DLB_BOOL] = xor_bool, DLB_ROW_I(bitwise_xor)},
    [DLB_OP_LEFT_SHIFT] = {DLB_ROW_I(left_shift)},
    [DLB_OP_RIGHT_SHIFT] = {DLB_ROW_I(right_shift)},
    [DLB_OP_LOGICAL_AND] = {DLB_ROW_B(logical_and)},
    [DLB_OP_LOGICAL_OR] = {DLB_ROW_B(logical_or)},
    [DLB_OP_LOGICAL_XOR] = {[DLB_BOOL] = xor_bool},
    [DLB_OP_EQUAL] = {DLB_ROW_B(equal), DLB_ROW_I(equal), DLB_ROW_F(equal), DLB_ROW_C(equal)},
    [DLB_OP_NOT_EQUAL] = {DLB_ROW_B(not_equal), DLB_ROW_I(not_equal), DLB_ROW_F(not_equal),
                          DLB_ROW_C(not_equal)},
    [DLB_OP_LESS] = {DLB_ROW_B(less), DLB_ROW_I(less), DLB_ROW_F(less)},
    [DLB_OP_LESS_EQUAL] = {DLB_ROW_B(less_equal), DLB_ROW_I(less_equal), DLB_ROW_F(less_equal)},
    [DLB_OP_GREATER] = {DLB_ROW_B(greater), DLB_ROW_I(greater), DLB_ROW_F(greater)},
    [DLB_OP_GREATER_EQUAL] = {DLB_ROW_B(greater_equal), DLB_ROW_I(greater_equal),
                              DLB_ROW_F(greater_equal)},
    [DLB_OP_NEGATIVE] = {DLB_ROW_I(negative), DLB_ROW_F(negative), DLB_ROW_C(negative)},
    [DLB_OP_BITWISE_NOT] = {[DLB_BOOL] = logical_not_bool, DLB_ROW_I(bitwise_not)},
    [DLB_OP_LOGICAL_NOT] = {DLB_ROW_B(logical_not)},
    [DLB_OP_CLIP] = {DLB_ROW_B(clip), DLB_ROW_I(clip), DLB_ROW_F(clip)},
};

dlb_loop dlb_arith_loop(dlb_op op, dlb_dtype type) {
  if ((unsigned)op >= DLB_OP_COUNT || (unsigned)type >= DLB_DTYPE_COUNT) return NULL;
  if (op == DLB_OP_WHERE) {
    switch (dlb_dtype_get(type)->itemsize) {
      case 1: return where_1;
      case 2: return where_2;
      case 4: return where_4;
      case 8: return where_8;
      default: return where_16;
    }
  }
  return kernels[op][type];
}
