/* loops_math.c -- kernels of the float functions (sqrt, exp, log, sin, ...,
 * atan2), rounding (floor, ceil, trunc, round), abs, sign and the
 * predicates (isnan, isinf, isfinite). No Lua here.
 *
 * Three families:
 *   - plain C loops, one C expression per (op, dtype), with contiguous and
 *     stride-0 branches that GCC vectorises; built per x86-64 level
 *     (DLB_KERNEL_CLONES) where wider vectors help;
 *   - the transcendental functions of float32/float64 through SLEEF's
 *     1.0-ulp vector functions (AVX-512F or AVX2+FMA, picked at run time;
 *     libm where neither exists or off x86-64). They run over contiguous
 *     runs; strided operands go through small buffers, so a value's result
 *     never depends on the layout it came in;
 *   - complex functions, element by element through C99 <complex.h>, with
 *     NumPy's formulas (npymath) for the ones C99 lacks.
 *
 * Element access is by memcpy: operands need no alignment. The output may be
 * exactly the input (in place), never a partial overlap (loops.h).
 */
#include <complex.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/dtype.h"
#include "loops.h"

/*
 * Which SLEEF vector paths are built. GCC passes vector arguments the way
 * each function's own target says, so functions marked target("avx512f")
 * call SLEEF's AVX-512 functions correctly from a file built for plain
 * x86-64. Clang passes them the way the whole file's target says (in memory
 * without -mavx): there a path is built only when the file is compiled for
 * its vector unit, and the others fall back to libm.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DLB_MATH_AVX2 1
#define DLB_MATH_AVX512 1
#elif defined(__x86_64__) && defined(__clang__)
#if defined(__AVX2__) && defined(__FMA__)
#define DLB_MATH_AVX2 1
#endif
#if defined(__AVX512F__)
#define DLB_MATH_AVX512 1
#endif
#endif
#ifndef DLB_MATH_AVX2
#define DLB_MATH_AVX2 0
#endif
#ifndef DLB_MATH_AVX512
#define DLB_MATH_AVX512 0
#endif
#if DLB_MATH_AVX2 || DLB_MATH_AVX512
#include <immintrin.h> /* SLEEF's functions are declared below */
#endif

/* Constants of NumPy's complex formulas (npy_math.h), spelled out: strict
 * C11 hides M_LN2 and friends. */
#define LN2 0.693147180559945309417232121458176568
#define LOG2E 1.442695040888963407359924681001892137
#define LOG10E 0.434294481903251827651128918916605082

typedef float complex cfloat;
typedef double complex cdouble;

/* re + im*i, exact for inf and NaN parts (C11's CMPLXF, which glibc hides
 * from clang). */
static inline cfloat make_c64(float re, float im) {
  const float parts[2] = {re, im};
  cfloat z;
  memcpy(&z, parts, sizeof z);
  return z;
}
static inline cdouble make_c128(double re, double im) {
  const double parts[2] = {re, im};
  cdouble z;
  memcpy(&z, parts, sizeof z);
  return z;
}

/* ------------------------------------------------------------------------ */
/* Plain element loops */

/* Names built by the template math_loop.h. */
#define MATH_CAT_(a, b) a##b
#define MATH_CAT(a, b) MATH_CAT_(a, b)

/* The loop of every pair of types a kernel below uses (math_loop.h). */
#define IT float
#define OT float
#include "math_loop.h"
#define IT float
#define OT uint8_t
#include "math_loop.h"
#define IT double
#define OT double
#include "math_loop.h"
#define IT double
#define OT uint8_t
#include "math_loop.h"
#define IT int8_t
#define OT int8_t
#include "math_loop.h"
#define IT int16_t
#define OT int16_t
#include "math_loop.h"
#define IT int32_t
#define OT int32_t
#include "math_loop.h"
#define IT int64_t
#define OT int64_t
#include "math_loop.h"
#define IT uint8_t
#define OT uint8_t
#include "math_loop.h"
#define IT uint16_t
#define OT uint16_t
#include "math_loop.h"
#define IT uint32_t
#define OT uint32_t
#include "math_loop.h"
#define IT uint64_t
#define OT uint64_t
#include "math_loop.h"
#define IT cfloat
#define OT cfloat
#include "math_loop.h"
#define IT cfloat
#define OT float
#include "math_loop.h"
#define IT cfloat
#define OT uint8_t
#include "math_loop.h"
#define IT cdouble
#define OT cdouble
#include "math_loop.h"
#define IT cdouble
#define OT double
#include "math_loop.h"
#define IT cdouble
#define OT uint8_t
#include "math_loop.h"

/* Defines the kernel NAME: out[i] = EXPR of x = in[i], input IT, output OT,
 * through the loop of its types. ATTR is DLB_KERNEL_CLONES where wider
 * vectors pay, else empty. */
#define UNARY_KERNEL(ATTR, NAME, IT, OT, EXPR)                                                     \
  static inline OT NAME##_op(IT x) { return EXPR; }                                                \
  ATTR static int NAME(char **data, const int64_t *steps, int64_t n, void *aux) {                  \
    (void)aux;                                                                                     \
    return MATH_CAT(unary_math_loop_, MATH_CAT(IT, MATH_CAT(_to_, OT)))(data, steps, n,            \
                                                                        NAME##_op);                \
  }

/* Copies an element of SIZE bytes from in to out: the rounding functions of
 * integers, abs of bool and unsigned integers. */
#define COPY_KERNEL(SIZE)                                                                          \
  static int copy_loop_##SIZE(char **data, const int64_t *steps, int64_t n, void *aux) {           \
    char *out = data[0];                                                                           \
    const char *in = data[1];                                                                      \
    (void)aux;                                                                                     \
    if (steps[0] == SIZE && steps[1] == SIZE) {                                                    \
      if (out != in) memmove(out, in, (size_t)n *SIZE);                                            \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++) memmove(out + i * steps[0], in + i * steps[1], SIZE);        \
    }                                                                                              \
    return 0;                                                                                      \
  }
COPY_KERNEL(1)
COPY_KERNEL(2)
COPY_KERNEL(4)
COPY_KERNEL(8)

/* Writes the bool VALUE n times: the predicates of integers and bool. */
#define FILL_KERNEL(NAME, VALUE)                                                                   \
  static int NAME(char **data, const int64_t *steps, int64_t n, void *aux) {                       \
    const uint8_t v = VALUE;                                                                       \
    (void)aux;                                                                                     \
    if (steps[0] == 1) {                                                                           \
      memset(data[0], v, (size_t)n);                                                               \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++) data[0][i * steps[0]] = (char)v;                             \
    }                                                                                              \
    return 0;                                                                                      \
  }
FILL_KERNEL(fill_false, 0)
FILL_KERNEL(fill_true, 1)

/*
 * floor, ceil and trunc from rint (round half to even) and one correction:
 * GCC vectorises rint but not floor, ceil or trunc while math may trap (the
 * quiet comparisons isgreater/isless keep it that way). Exact for every
 * input: rint(x) is an integer within 1/2 of x, and stepping it by 1 is
 * exact; the result takes x's sign (floor(-0.5) is -1, ceil(-0.5) and
 * trunc(-0.5) are -0.0, as C's); NaN and inf go through.
 */
#define ROUNDING_FROM_RINT(T, SFX, F)                                                              \
  static inline T floor_##SFX##_value(T x) {                                                       \
    const T r = rint##F(x);                                                                        \
    return copysign##F(r - (T)isgreater(r, x), x);                                                 \
  }                                                                                                \
  static inline T ceil_##SFX##_value(T x) {                                                        \
    const T r = rint##F(x);                                                                        \
    return copysign##F(r + (T)isless(r, x), x);                                                    \
  }                                                                                                \
  static inline T trunc_##SFX##_value(T x) {                                                       \
    const T r = rint##F(x);                                                                        \
    return copysign##F(r - copysign##F((T)isgreater(fabs##F(r), fabs##F(x)), x), x);               \
  }
ROUNDING_FROM_RINT(float, f32, f)
ROUNDING_FROM_RINT(double, f64, )

/* The real float loops, for float (suffix f32) and double (f64). */
#define REAL_FLOAT_KERNELS(T, SFX, F)                                                              \
  UNARY_KERNEL(DLB_KERNEL_CLONES, sqrt_##SFX, T, T, sqrt##F(x))                                    \
  UNARY_KERNEL(DLB_KERNEL_CLONES, floor_##SFX, T, T, floor_##SFX##_value(x))                       \
  UNARY_KERNEL(DLB_KERNEL_CLONES, ceil_##SFX, T, T, ceil_##SFX##_value(x))                         \
  UNARY_KERNEL(DLB_KERNEL_CLONES, trunc_##SFX, T, T, trunc_##SFX##_value(x))                       \
  UNARY_KERNEL(DLB_KERNEL_CLONES, round_##SFX, T, T, rint##F(x))                                   \
  UNARY_KERNEL(DLB_KERNEL_CLONES, abs_##SFX, T, T, fabs##F(x))                                     \
  UNARY_KERNEL(DLB_KERNEL_CLONES, sign_##SFX, T, T,                                                \
               x > 0    ? (T)1                                                                     \
               : x < 0  ? (T)-1                                                                    \
               : x == 0 ? (T)0                                                                     \
                        : x)                                                                       \
  UNARY_KERNEL(DLB_KERNEL_CLONES, isnan_##SFX, T, uint8_t, (uint8_t)(x != x))                      \
  UNARY_KERNEL(DLB_KERNEL_CLONES, isinf_##SFX, T, uint8_t, (uint8_t)(fabs##F(x) == (T)INFINITY))   \
  UNARY_KERNEL(DLB_KERNEL_CLONES, isfinite_##SFX, T, uint8_t, (uint8_t)(fabs##F(x) < (T)INFINITY))
REAL_FLOAT_KERNELS(float, f32, f)
REAL_FLOAT_KERNELS(double, f64, )

/* abs and sign of the integers: abs wraps (abs(INT8_MIN) == INT8_MIN, as
 * NumPy), computed in the unsigned type so that nothing overflows. */
#define SIGNED_KERNELS(T, U, SFX)                                                                  \
  UNARY_KERNEL(DLB_KERNEL_CLONES, abs_##SFX, T, T, (T)(x < 0 ? (U)(0u - (U)x) : (U)x))             \
  UNARY_KERNEL(DLB_KERNEL_CLONES, sign_##SFX, T, T, (T)((x > 0) - (x < 0)))
SIGNED_KERNELS(int8_t, uint8_t, i8)
SIGNED_KERNELS(int16_t, uint16_t, i16)
SIGNED_KERNELS(int32_t, uint32_t, i32)
SIGNED_KERNELS(int64_t, uint64_t, i64)
#define UNSIGNED_KERNELS(T, SFX) UNARY_KERNEL(DLB_KERNEL_CLONES, sign_##SFX, T, T, (T)(x != 0))
UNSIGNED_KERNELS(uint8_t, u8)
UNSIGNED_KERNELS(uint16_t, u16)
UNSIGNED_KERNELS(uint32_t, u32)
UNSIGNED_KERNELS(uint64_t, u64)

/* ------------------------------------------------------------------------ */
/* Complex functions (NumPy's npymath: C99 where C99 has the function) */

/* sign(z) = z / |z|, 0 for 0 (NumPy 2; NumPy 1.x gave sign(z.real) + 0j);
 * NaN for a NaN part or both parts infinite; one infinite part gives the unit
 * vector along it. */
#define COMPLEX_SIGN(CT, T, F, MK)                                                                 \
  static CT csign_##F(CT z) {                                                                      \
    const T re = creal##F(z), im = cimag##F(z), r = hypot##F(re, im);                              \
    if (isnan(r)) return MK((T)NAN, (T)NAN);                                                       \
    if (isinf(r)) {                                                                                \
      if (isinf(re) && isinf(im)) return MK((T)NAN, (T)NAN);                                       \
      if (isinf(re)) return MK(re > 0 ? (T)1 : (T)-1, (T)0);                                       \
      return MK((T)0, im > 0 ? (T)1 : (T)-1);                                                      \
    }                                                                                              \
    if (r == 0) return MK((T)0, (T)0);                                                             \
    return MK(re / r, im / r);                                                                     \
  }

/* exp2, expm1, log2, log10 and log1p of complex numbers, as npymath's
 * nc_exp2, nc_expm1, nc_log2, nc_log10 and nc_log1p compute them. */
#define COMPLEX_HELPERS(CT, T, F, MK)                                                              \
  static CT cexp2_##F(CT z) { return cexp##F(MK(creal##F(z) * (T)LN2, cimag##F(z) * (T)LN2)); }    \
  static CT cexpm1_##F(CT z) {                                                                     \
    const T re = creal##F(z), im = cimag##F(z), a = sin##F(im / 2);                                \
    return MK(expm1##F(re) * cos##F(im) - 2 * a * a, exp##F(re) * sin##F(im));                     \
  }                                                                                                \
  static CT clog2_##F(CT z) {                                                                      \
    const CT l = clog##F(z);                                                                       \
    return MK(creal##F(l) * (T)LOG2E, cimag##F(l) * (T)LOG2E);                                     \
  }                                                                                                \
  static CT clog10_##F(CT z) {                                                                     \
    const CT l = clog##F(z);                                                                       \
    return MK(creal##F(l) * (T)LOG10E, cimag##F(l) * (T)LOG10E);                                   \
  }                                                                                                \
  static CT clog1p_##F(CT z) {                                                                     \
    const T re = creal##F(z) + 1, im = cimag##F(z);                                                \
    return MK(log##F(hypot##F(re, im)), atan2##F(im, re));                                         \
  }                                                                                                \
  COMPLEX_SIGN(CT, T, F, MK)

COMPLEX_HELPERS(cfloat, float, f, make_c64)
COMPLEX_HELPERS(cdouble, double, , make_c128)

/* Every complex kernel of one complex type (suffix c64 or c128). */
#define COMPLEX_KERNELS(CT, T, SFX, F, MK)                                                         \
  UNARY_KERNEL(, sqrt_##SFX, CT, CT, csqrt##F(x))                                                  \
  UNARY_KERNEL(, exp_##SFX, CT, CT, cexp##F(x))                                                    \
  UNARY_KERNEL(, exp2_##SFX, CT, CT, cexp2_##F(x))                                                 \
  UNARY_KERNEL(, expm1_##SFX, CT, CT, cexpm1_##F(x))                                               \
  UNARY_KERNEL(, log_##SFX, CT, CT, clog##F(x))                                                    \
  UNARY_KERNEL(, log2_##SFX, CT, CT, clog2_##F(x))                                                 \
  UNARY_KERNEL(, log10_##SFX, CT, CT, clog10_##F(x))                                               \
  UNARY_KERNEL(, log1p_##SFX, CT, CT, clog1p_##F(x))                                               \
  UNARY_KERNEL(, sin_##SFX, CT, CT, csin##F(x))                                                    \
  UNARY_KERNEL(, cos_##SFX, CT, CT, ccos##F(x))                                                    \
  UNARY_KERNEL(, tan_##SFX, CT, CT, ctan##F(x))                                                    \
  UNARY_KERNEL(, asin_##SFX, CT, CT, casin##F(x))                                                  \
  UNARY_KERNEL(, acos_##SFX, CT, CT, cacos##F(x))                                                  \
  UNARY_KERNEL(, atan_##SFX, CT, CT, catan##F(x))                                                  \
  UNARY_KERNEL(, sinh_##SFX, CT, CT, csinh##F(x))                                                  \
  UNARY_KERNEL(, cosh_##SFX, CT, CT, ccosh##F(x))                                                  \
  UNARY_KERNEL(, tanh_##SFX, CT, CT, ctanh##F(x))                                                  \
  UNARY_KERNEL(, round_##SFX, CT, CT, MK(rint##F(creal##F(x)), rint##F(cimag##F(x))))              \
  UNARY_KERNEL(, abs_##SFX, CT, T, hypot##F(creal##F(x), cimag##F(x)))                             \
  UNARY_KERNEL(, sign_##SFX, CT, CT, csign_##F(x))                                                 \
  UNARY_KERNEL(, isnan_##SFX, CT, uint8_t, (uint8_t)(isnan(creal##F(x)) || isnan(cimag##F(x))))    \
  UNARY_KERNEL(, isinf_##SFX, CT, uint8_t, (uint8_t)(isinf(creal##F(x)) || isinf(cimag##F(x))))    \
  UNARY_KERNEL(, isfinite_##SFX, CT, uint8_t,                                                      \
               (uint8_t)(isfinite(creal##F(x)) && isfinite(cimag##F(x))))
COMPLEX_KERNELS(cfloat, float, c64, f, make_c64)
COMPLEX_KERNELS(cdouble, double, c128, , make_c128)

/* ------------------------------------------------------------------------ */
/* Transcendental functions of float32/float64: SLEEF vectors or libm */

/*
 * The functions that go through SLEEF, as X(OP, name, BOUND32, BOUND64, U32,
 * U64): beyond |x| > BOUND SLEEF's function is not accurate (sinh and cosh
 * give inf before the result overflows; log1p gives inf above 1e38 and
 * 1e307, SLEEF's LOG1P_BOUND) and libm computes those elements. U32 and U64
 * are the accuracy of the vector function for float32 and float64: u10 (1
 * ulp), or u35 (3.5 ulp) where NumPy 1.24's own function on AVX-512 is
 * SVML's 4-ulp one (measured: float64 sin 3.2 ulp) and SLEEF's u35 is 2-3x
 * the speed of its u10: float32 tanh, float64 sin and cos.
 */
#define NO_BOUND INFINITY
/* clang-format off */
#define SLEEF_FUNCTIONS(X)                          \
  X(EXP, exp, NO_BOUND, NO_BOUND, u10, u10)         \
  X(EXP2, exp2, NO_BOUND, NO_BOUND, u10, u10)       \
  X(EXPM1, expm1, NO_BOUND, NO_BOUND, u10, u10)     \
  X(LOG, log, NO_BOUND, NO_BOUND, u10, u10)         \
  X(LOG2, log2, NO_BOUND, NO_BOUND, u10, u10)       \
  X(LOG10, log10, NO_BOUND, NO_BOUND, u10, u10)     \
  X(LOG1P, log1p, 1e38f, 1e307, u10, u10)           \
  X(SIN, sin, NO_BOUND, NO_BOUND, u10, u35)         \
  X(COS, cos, NO_BOUND, NO_BOUND, u10, u35)         \
  X(TAN, tan, NO_BOUND, NO_BOUND, u10, u10)         \
  X(ASIN, asin, NO_BOUND, NO_BOUND, u10, u10)       \
  X(ACOS, acos, NO_BOUND, NO_BOUND, u10, u10)       \
  X(ATAN, atan, NO_BOUND, NO_BOUND, u10, u10)       \
  X(SINH, sinh, 88.5f, 709.0, u10, u10)             \
  X(COSH, cosh, 88.5f, 709.0, u10, u10)             \
  X(TANH, tanh, NO_BOUND, NO_BOUND, u35, u10)
/* clang-format on */

/* SLEEF's functions of two arguments, f(y, x) as in libm: (OP, FN). One row
 * adds a function at every level. */
#define SLEEF_BINARY_FUNCTIONS(X) X(ATAN2, atan2)

/* The vector unit the SLEEF kernels use. */
enum { LEVEL_SCALAR, LEVEL_AVX2, LEVEL_AVX512, LEVEL_COUNT };

/* A function over n contiguous elements (dst may be src); n >= 1. */
typedef void (*array_fn)(char *dst, const char *src, int64_t n);
typedef void (*array_fn2)(char *dst, const char *y, const char *x, int64_t n);

/* libm, one element at a time: no vector unit, or not x86-64. */
#define SCALAR_ARRAY_FNS(OP, FN, B32, B64, U32, U64)                                               \
  static void FN##_f32_scalar(char *dst, const char *src, int64_t n) {                             \
    for (int64_t i = 0; i < n; i++) {                                                              \
      float x;                                                                                     \
      memcpy(&x, src + 4 * i, 4);                                                                  \
      x = FN##f(x);                                                                                \
      memcpy(dst + 4 * i, &x, 4);                                                                  \
    }                                                                                              \
  }                                                                                                \
  static void FN##_f64_scalar(char *dst, const char *src, int64_t n) {                             \
    for (int64_t i = 0; i < n; i++) {                                                              \
      double x;                                                                                    \
      memcpy(&x, src + 8 * i, 8);                                                                  \
      x = FN(x);                                                                                   \
      memcpy(dst + 8 * i, &x, 8);                                                                  \
    }                                                                                              \
  }
SLEEF_FUNCTIONS(SCALAR_ARRAY_FNS)

/* A function of two arguments through libm, one element at a time. */
static void binary_f32_scalar(char *dst, const char *y, const char *x, int64_t n,
                              float (*f)(float, float)) {
  for (int64_t i = 0; i < n; i++) {
    float a, b;
    memcpy(&a, y + 4 * i, 4);
    memcpy(&b, x + 4 * i, 4);
    a = f(a, b);
    memcpy(dst + 4 * i, &a, 4);
  }
}
static void binary_f64_scalar(char *dst, const char *y, const char *x, int64_t n,
                              double (*f)(double, double)) {
  for (int64_t i = 0; i < n; i++) {
    double a, b;
    memcpy(&a, y + 8 * i, 8);
    memcpy(&b, x + 8 * i, 8);
    a = f(a, b);
    memcpy(dst + 8 * i, &a, 8);
  }
}
#define SCALAR_BINARY_FNS(OP, FN)                                                                  \
  static void FN##_f32_scalar(char *d, const char *y, const char *x, int64_t n) {                  \
    binary_f32_scalar(d, y, x, n, FN##f);                                                          \
  }                                                                                                \
  static void FN##_f64_scalar(char *d, const char *y, const char *x, int64_t n) {                  \
    binary_f64_scalar(d, y, x, n, FN);                                                             \
  }
SLEEF_BINARY_FUNCTIONS(SCALAR_BINARY_FNS)

/* Recomputes with libm the lanes of x (those in m) that lie beyond SLEEF's
 * accurate range, |x| > bound; their results are at dst. */
#define REDO_BEYOND(ATTR, NAME, T, VT, MASK, LANES, ABS_GT)                                        \
  ATTR static inline void NAME(char *dst, VT x, MASK m, T bound, T (*libm)(T)) {                   \
    const unsigned big = (unsigned)(ABS_GT) & (unsigned)m;                                         \
    if (big != 0) {                                                                                \
      T xs[LANES];                                                                                 \
      memcpy(xs, &x, sizeof xs);                                                                   \
      for (int l = 0; l < LANES; l++) {                                                            \
        if ((big >> l) & 1u) {                                                                     \
          const T r = libm(xs[l]);                                                                 \
          memcpy(dst + l * (int)sizeof(T), &r, sizeof r);                                          \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }

/* SLEEF's vector functions (libsleef). <sleef.h> declares them only when the
 * whole file is compiled for AVX2 or AVX-512, and clang refuses our marked
 * redeclarations of its unmarked ones: declared here instead, marked with
 * the target of the functions that call them (clang requires that too). */
#if DLB_MATH_AVX512
#define AVX512 __attribute__((target("avx512f")))
#define DECLARE_SLEEF_AVX512(OP, FN, B32, B64, U32, U64)                                           \
  AVX512 __m512 Sleef_##FN##f16_##U32##avx512f(__m512);                                            \
  AVX512 __m512d Sleef_##FN##d8_##U64##avx512f(__m512d);
SLEEF_FUNCTIONS(DECLARE_SLEEF_AVX512)
#define DECLARE_SLEEF2_AVX512(OP, FN)                                                              \
  AVX512 __m512 Sleef_##FN##f16_u10avx512f(__m512, __m512);                                        \
  AVX512 __m512d Sleef_##FN##d8_u10avx512f(__m512d, __m512d);
SLEEF_BINARY_FUNCTIONS(DECLARE_SLEEF2_AVX512)
REDO_BEYOND(AVX512, redo_f32_avx512, float, __m512, __mmask16, 16,
            _mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(bound), _CMP_GT_OQ))
REDO_BEYOND(AVX512, redo_f64_avx512, double, __m512d, __mmask8, 8,
            _mm512_cmp_pd_mask(_mm512_abs_pd(x), _mm512_set1_pd(bound), _CMP_GT_OQ))

/* AVX-512F: 16 floats or 8 doubles a step, the tail through a masked load
 * and store (the masked-off lanes compute f(0) and are not written). */
#define AVX512_ARRAY_FNS(OP, FN, B32, B64, U32, U64)                                               \
  AVX512 static void FN##_f32_avx512(char *dst, const char *src, int64_t n) {                      \
    for (int64_t i = 0; i < n; i += 16) {                                                          \
      const int full = n - i >= 16;                                                                \
      const __mmask16 m = full ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1u);            \
      const __m512 x =                                                                             \
          full ? _mm512_loadu_ps(src + 4 * i) : _mm512_maskz_loadu_ps(m, src + 4 * i);             \
      _mm512_mask_storeu_ps(dst + 4 * i, m, Sleef_##FN##f16_##U32##avx512f(x));                    \
      if (B32 < NO_BOUND) redo_f32_avx512(dst + 4 * i, x, m, B32, FN##f);                          \
    }                                                                                              \
  }                                                                                                \
  AVX512 static void FN##_f64_avx512(char *dst, const char *src, int64_t n) {                      \
    for (int64_t i = 0; i < n; i += 8) {                                                           \
      const int full = n - i >= 8;                                                                 \
      const __mmask8 m = full ? (__mmask8)0xFF : (__mmask8)((1u << (n - i)) - 1u);                 \
      const __m512d x =                                                                            \
          full ? _mm512_loadu_pd(src + 8 * i) : _mm512_maskz_loadu_pd(m, src + 8 * i);             \
      _mm512_mask_storeu_pd(dst + 8 * i, m, Sleef_##FN##d8_##U64##avx512f(x));                     \
      if (B64 < NO_BOUND) redo_f64_avx512(dst + 8 * i, x, m, B64, FN);                             \
    }                                                                                              \
  }
SLEEF_FUNCTIONS(AVX512_ARRAY_FNS)

/* A function of two arguments, 16 floats or 8 doubles a step, the tail
 * through masked loads and a masked store. (SLEEF's functions are calls
 * into libsleef either way: passing one costs nothing.) */
AVX512 static void binary_f32_avx512(char *dst, const char *y, const char *x, int64_t n,
                                     __m512 (*f)(__m512, __m512)) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + 4 * i, f(_mm512_loadu_ps(y + 4 * i), _mm512_loadu_ps(x + 4 * i)));
  if (i < n) {
    const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
    const __m512 r = f(_mm512_maskz_loadu_ps(m, y + 4 * i), _mm512_maskz_loadu_ps(m, x + 4 * i));
    _mm512_mask_storeu_ps(dst + 4 * i, m, r);
  }
}
AVX512 static void binary_f64_avx512(char *dst, const char *y, const char *x, int64_t n,
                                     __m512d (*f)(__m512d, __m512d)) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm512_storeu_pd(dst + 8 * i, f(_mm512_loadu_pd(y + 8 * i), _mm512_loadu_pd(x + 8 * i)));
  if (i < n) {
    const __mmask8 m = (__mmask8)((1u << (n - i)) - 1u);
    const __m512d r = f(_mm512_maskz_loadu_pd(m, y + 8 * i), _mm512_maskz_loadu_pd(m, x + 8 * i));
    _mm512_mask_storeu_pd(dst + 8 * i, m, r);
  }
}
#define AVX512_BINARY_FNS(OP, FN)                                                                  \
  AVX512 static void FN##_f32_avx512(char *d, const char *y, const char *x, int64_t n) {           \
    binary_f32_avx512(d, y, x, n, Sleef_##FN##f16_u10avx512f);                                     \
  }                                                                                                \
  AVX512 static void FN##_f64_avx512(char *d, const char *y, const char *x, int64_t n) {           \
    binary_f64_avx512(d, y, x, n, Sleef_##FN##d8_u10avx512f);                                      \
  }
SLEEF_BINARY_FUNCTIONS(AVX512_BINARY_FNS)
#endif /* DLB_MATH_AVX512 */

#if DLB_MATH_AVX2
#define AVX2 __attribute__((target("avx2,fma")))
#define DECLARE_SLEEF_AVX2(OP, FN, B32, B64, U32, U64)                                             \
  AVX2 __m256 Sleef_##FN##f8_##U32##avx2(__m256);                                                  \
  AVX2 __m256d Sleef_##FN##d4_##U64##avx2(__m256d);
SLEEF_FUNCTIONS(DECLARE_SLEEF_AVX2)
#define DECLARE_SLEEF2_AVX2(OP, FN)                                                                \
  AVX2 __m256 Sleef_##FN##f8_u10avx2(__m256, __m256);                                              \
  AVX2 __m256d Sleef_##FN##d4_u10avx2(__m256d, __m256d);
SLEEF_BINARY_FUNCTIONS(DECLARE_SLEEF2_AVX2)
REDO_BEYOND(AVX2, redo_f32_avx2, float, __m256, unsigned, 8,
            _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x),
                                             _mm256_set1_ps(bound), _CMP_GT_OQ)))
REDO_BEYOND(AVX2, redo_f64_avx2, double, __m256d, unsigned, 4,
            _mm256_movemask_pd(_mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), x),
                                             _mm256_set1_pd(bound), _CMP_GT_OQ)))

/* AVX2+FMA: 8 floats or 4 doubles a step, the tail through a zeroed buffer. */
#define AVX2_ARRAY_FN(FN, T, SFX, LANES, VT, LOAD, STORE, SLEEF, LIBM, BOUND, REDO)                \
  AVX2 static void FN##_##SFX##_avx2(char *dst, const char *src, int64_t n) {                      \
    for (int64_t i = 0; i < n; i += LANES) {                                                       \
      const int lanes = n - i >= LANES ? LANES : (int)(n - i);                                     \
      char *d = dst + i * (int64_t)sizeof(T);                                                      \
      const char *s = src + i * (int64_t)sizeof(T);                                                \
      T tail[LANES] = {0};                                                                         \
      VT x;                                                                                        \
      if (lanes == LANES) { /* unaligned loads and stores */                                       \
        x = LOAD((const T *)(const void *)s);                                                      \
        STORE((T *)(void *)d, SLEEF(x));                                                           \
      } else {                                                                                     \
        memcpy(tail, s, (size_t)lanes * sizeof(T));                                                \
        x = LOAD(tail);                                                                            \
        STORE(tail, SLEEF(x));                                                                     \
        memcpy(d, tail, (size_t)lanes * sizeof(T));                                                \
      }                                                                                            \
      if (BOUND < NO_BOUND) REDO(d, x, (1u << lanes) - 1u, BOUND, LIBM);                           \
    }                                                                                              \
  }
#define AVX2_ARRAY_FNS(OP, FN, B32, B64, U32, U64)                                                 \
  AVX2_ARRAY_FN(FN, float, f32, 8, __m256, _mm256_loadu_ps, _mm256_storeu_ps,                      \
                Sleef_##FN##f8_##U32##avx2, FN##f, B32, redo_f32_avx2)                             \
  AVX2_ARRAY_FN(FN, double, f64, 4, __m256d, _mm256_loadu_pd, _mm256_storeu_pd,                    \
                Sleef_##FN##d4_##U64##avx2, FN, B64, redo_f64_avx2)
SLEEF_FUNCTIONS(AVX2_ARRAY_FNS)

/* A function of two arguments, 8 floats or 4 doubles a step, through
 * buffers (the tail zero-padded). */
AVX2 static void binary_f32_avx2(char *dst, const char *y, const char *x, int64_t n,
                                 __m256 (*f)(__m256, __m256)) {
  float ty[8] = {0}, tx[8] = {0};
  for (int64_t i = 0; i < n; i += 8) {
    const size_t bytes = (size_t)(n - i < 8 ? n - i : 8) * 4;
    memcpy(ty, y + 4 * i, bytes);
    memcpy(tx, x + 4 * i, bytes);
    _mm256_storeu_ps(ty, f(_mm256_loadu_ps(ty), _mm256_loadu_ps(tx)));
    memcpy(dst + 4 * i, ty, bytes);
  }
}
AVX2 static void binary_f64_avx2(char *dst, const char *y, const char *x, int64_t n,
                                 __m256d (*f)(__m256d, __m256d)) {
  double ty[4] = {0}, tx[4] = {0};
  for (int64_t i = 0; i < n; i += 4) {
    const size_t bytes = (size_t)(n - i < 4 ? n - i : 4) * 8;
    memcpy(ty, y + 8 * i, bytes);
    memcpy(tx, x + 8 * i, bytes);
    _mm256_storeu_pd(ty, f(_mm256_loadu_pd(ty), _mm256_loadu_pd(tx)));
    memcpy(dst + 8 * i, ty, bytes);
  }
}
#define AVX2_BINARY_FNS(OP, FN)                                                                    \
  AVX2 static void FN##_f32_avx2(char *d, const char *y, const char *x, int64_t n) {               \
    binary_f32_avx2(d, y, x, n, Sleef_##FN##f8_u10avx2);                                           \
  }                                                                                                \
  AVX2 static void FN##_f64_avx2(char *d, const char *y, const char *x, int64_t n) {               \
    binary_f64_avx2(d, y, x, n, Sleef_##FN##d4_u10avx2);                                           \
  }
SLEEF_BINARY_FUNCTIONS(AVX2_BINARY_FNS)
#endif /* DLB_MATH_AVX2 */

/* Elements a buffered step of a strided operand holds (4 KiB of doubles). */
#define CHUNK 512

/* Copies n elements of size item between strided places. */
static void move_strided(char *dst, int64_t dst_step, const char *src, int64_t src_step, int64_t n,
                         size_t item) {
  for (int64_t i = 0; i < n; i++) memcpy(dst + i * dst_step, src + i * src_step, item);
}

/* Runs fn over a unary kernel's operands: straight through when both are
 * contiguous, once for a stride-0 input, else CHUNK elements at a time
 * through buffers. */
static int run_unary(char **data, const int64_t *steps, int64_t n, size_t item, array_fn fn) {
  char *out = data[0];
  const char *in = data[1];
  const int64_t isize = (int64_t)item;
  if (n <= 0) return 0;
  if (steps[0] == isize && steps[1] == isize) {
    fn(out, in, n);
  } else if (steps[1] == 0) {
    _Alignas(16) char one[16];
    fn(one, in, 1);
    move_strided(out, steps[0], one, 0, n, item);
  } else {
    _Alignas(64) char buf[CHUNK * 8];
    for (int64_t pos = 0; pos < n; pos += CHUNK) {
      const int64_t m = n - pos < CHUNK ? n - pos : CHUNK;
      move_strided(buf, isize, in + pos * steps[1], steps[1], m, item);
      fn(buf, buf, m);
      move_strided(out + pos * steps[0], steps[0], buf, isize, m, item);
    }
  }
  return 0;
}

/* Runs fn over a binary kernel's operands (data[1] = y, data[2] = x): straight through
 * when all are contiguous, else CHUNK elements at a time through buffers
 * (a contiguous operand is used in place). */
static int run_binary(char **data, const int64_t *steps, int64_t n, size_t item, array_fn2 fn) {
  const int64_t isize = (int64_t)item;
  if (n <= 0) return 0;
  if (steps[0] == isize && steps[1] == isize && steps[2] == isize) {
    fn(data[0], data[1], data[2], n);
    return 0;
  }
  _Alignas(64) char out_buf[CHUNK * 8], y_buf[CHUNK * 8], x_buf[CHUNK * 8];
  for (int64_t pos = 0; pos < n; pos += CHUNK) {
    const int64_t m = n - pos < CHUNK ? n - pos : CHUNK;
    char *out = data[0] + pos * steps[0];
    const char *y = data[1] + pos * steps[1], *x = data[2] + pos * steps[2];
    char *dst = steps[0] == isize ? out : out_buf;
    if (steps[1] != isize) {
      move_strided(y_buf, isize, y, steps[1], m, item);
      y = y_buf;
    }
    if (steps[2] != isize) {
      move_strided(x_buf, isize, x, steps[2], m, item);
      x = x_buf;
    }
    fn(dst, y, x, m);
    if (dst != out) move_strided(out, steps[0], dst, isize, m, item);
  }
  return 0;
}

/* The kernels of one SLEEF function at one level: f##_f32_LEVEL_loop. */
#define SLEEF_KERNELS_AT(LEVEL, f)                                                                 \
  static int f##_f32_##LEVEL##_loop(char **data, const int64_t *steps, int64_t n, void *aux) {     \
    (void)aux;                                                                                     \
    return run_unary(data, steps, n, 4, f##_f32_##LEVEL);                                          \
  }                                                                                                \
  static int f##_f64_##LEVEL##_loop(char **data, const int64_t *steps, int64_t n, void *aux) {     \
    (void)aux;                                                                                     \
    return run_unary(data, steps, n, 8, f##_f64_##LEVEL);                                          \
  }
#define SCALAR_KERNELS(OP, f, ...) SLEEF_KERNELS_AT(scalar, f)
SLEEF_FUNCTIONS(SCALAR_KERNELS)
#if DLB_MATH_AVX512
#define AVX512_KERNELS(OP, f, ...) SLEEF_KERNELS_AT(avx512, f)
SLEEF_FUNCTIONS(AVX512_KERNELS)
#endif
#if DLB_MATH_AVX2
#define AVX2_KERNELS(OP, f, ...) SLEEF_KERNELS_AT(avx2, f)
SLEEF_FUNCTIONS(AVX2_KERNELS)
#endif

#define BINARY_KERNELS_AT(LEVEL, f)                                                                \
  static int f##_f32_##LEVEL##_loop(char **data, const int64_t *steps, int64_t n, void *aux) {     \
    (void)aux;                                                                                     \
    return run_binary(data, steps, n, 4, f##_f32_##LEVEL);                                         \
  }                                                                                                \
  static int f##_f64_##LEVEL##_loop(char **data, const int64_t *steps, int64_t n, void *aux) {     \
    (void)aux;                                                                                     \
    return run_binary(data, steps, n, 8, f##_f64_##LEVEL);                                         \
  }
#define SCALAR_BINARY_KERNELS(OP, f) BINARY_KERNELS_AT(scalar, f)
SLEEF_BINARY_FUNCTIONS(SCALAR_BINARY_KERNELS)
#if DLB_MATH_AVX512
#define AVX512_BINARY_KERNELS(OP, f) BINARY_KERNELS_AT(avx512, f)
SLEEF_BINARY_FUNCTIONS(AVX512_BINARY_KERNELS)
#endif
#if DLB_MATH_AVX2
#define AVX2_BINARY_KERNELS(OP, f) BINARY_KERNELS_AT(avx2, f)
SLEEF_BINARY_FUNCTIONS(AVX2_BINARY_KERNELS)
#endif

/* The SLEEF-backed kernels by level and op: [level][op][0 float32, 1 float64]. */
#define TABLE_ROW(LEVEL, OP, f) [DLB_OP_##OP] = {f##_f32_##LEVEL##_loop, f##_f64_##LEVEL##_loop},
#define SCALAR_ROW(OP, f, ...) TABLE_ROW(scalar, OP, f)
#define AVX2_ROW(OP, f, ...) TABLE_ROW(avx2, OP, f)
#define AVX512_ROW(OP, f, ...) TABLE_ROW(avx512, OP, f)
static const dlb_loop sleef_loops[LEVEL_COUNT][DLB_OP_COUNT][2] = {
    [LEVEL_SCALAR] = {SLEEF_FUNCTIONS(SCALAR_ROW) SLEEF_BINARY_FUNCTIONS(SCALAR_ROW)},
#if DLB_MATH_AVX2
    [LEVEL_AVX2] = {SLEEF_FUNCTIONS(AVX2_ROW) SLEEF_BINARY_FUNCTIONS(AVX2_ROW)},
#endif
#if DLB_MATH_AVX512
    [LEVEL_AVX512] = {SLEEF_FUNCTIONS(AVX512_ROW) SLEEF_BINARY_FUNCTIONS(AVX512_ROW)},
#endif
};

/* The best level this CPU runs and this build has, capped by the environment
 * variable DLBRIDGE_MATH_SIMD ("avx2" or "none"; for tests and for comparing
 * results). Worked out once; a race only repeats the work. */
static int simd_level(void) {
  static atomic_int cached = -1;
  int level = atomic_load_explicit(&cached, memory_order_relaxed);
  if (level >= 0) return level;
  level = LEVEL_SCALAR;
#if DLB_MATH_AVX2
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) level = LEVEL_AVX2;
#endif
#if DLB_MATH_AVX512
  if (__builtin_cpu_supports("avx512f")) level = LEVEL_AVX512;
#endif
  const char *cap = getenv("DLBRIDGE_MATH_SIMD");
  if (cap != NULL) {
    if (strcmp(cap, "none") == 0) level = LEVEL_SCALAR;
    else if (strcmp(cap, "avx2") == 0 && level > LEVEL_AVX2) level = LEVEL_AVX2;
  }
  atomic_store_explicit(&cached, level, memory_order_relaxed);
  return level;
}

/* ------------------------------------------------------------------------ */
/* Selection */

/* The kernels by operation and loop dtype, but for the float32 and float64
 * ones of SLEEF's functions (sleef_loops, by vector unit): what
 * DLB_ELEMENTWISE_OPS declares for the operations of this file, and no
 * more (tests/c/test_ops.c checks both tables). Integers round to
 * themselves (an element copy) and are never NaN or infinite (a fill). */
#define COPY_SIGNED                                                                                \
  [DLB_INT8] = copy_loop_1, [DLB_INT16] = copy_loop_2, [DLB_INT32] = copy_loop_4,                  \
  [DLB_INT64] = copy_loop_8
#define COPY_UNSIGNED                                                                              \
  [DLB_UINT8] = copy_loop_1, [DLB_UINT16] = copy_loop_2, [DLB_UINT32] = copy_loop_4,               \
  [DLB_UINT64] = copy_loop_8
#define COPY_INTEGRAL [DLB_BOOL] = copy_loop_1, COPY_SIGNED, COPY_UNSIGNED
#define FILL_INTEGRAL(k)                                                                           \
  [DLB_BOOL] = k, [DLB_INT8] = k, [DLB_INT16] = k, [DLB_INT32] = k, [DLB_INT64] = k,               \
  [DLB_UINT8] = k, [DLB_UINT16] = k, [DLB_UINT32] = k, [DLB_UINT64] = k
#define COMPLEX_ROW(OP, f, ...) [DLB_OP_##OP] = {DLB_ROW_C(f)},
static const dlb_loop kernels[DLB_OP_COUNT][DLB_DTYPE_COUNT] = {
    SLEEF_FUNCTIONS(COMPLEX_ROW)[DLB_OP_SQRT] = {DLB_ROW_F(sqrt), DLB_ROW_C(sqrt)},
    [DLB_OP_FLOOR] = {COPY_INTEGRAL, DLB_ROW_F(floor)},
    [DLB_OP_CEIL] = {COPY_INTEGRAL, DLB_ROW_F(ceil)},
    [DLB_OP_TRUNC] = {COPY_INTEGRAL, DLB_ROW_F(trunc)},
    [DLB_OP_ROUND] = {COPY_INTEGRAL, DLB_ROW_F(round), DLB_ROW_C(round)},
    [DLB_OP_ABS] = {[DLB_BOOL] = copy_loop_1,
                    [DLB_INT8] = abs_i8,
                    [DLB_INT16] = abs_i16,
                    [DLB_INT32] = abs_i32,
                    [DLB_INT64] = abs_i64,
                    COPY_UNSIGNED,
                    DLB_ROW_F(abs),
                    DLB_ROW_C(abs)},
    [DLB_OP_SIGN] = {DLB_ROW_I(sign), DLB_ROW_F(sign), DLB_ROW_C(sign)},
    [DLB_OP_ISNAN] = {FILL_INTEGRAL(fill_false), DLB_ROW_F(isnan), DLB_ROW_C(isnan)},
    [DLB_OP_ISINF] = {FILL_INTEGRAL(fill_false), DLB_ROW_F(isinf), DLB_ROW_C(isinf)},
    [DLB_OP_ISFINITE] = {FILL_INTEGRAL(fill_true), DLB_ROW_F(isfinite), DLB_ROW_C(isfinite)},
};
#undef COMPLEX_ROW
#undef FILL_INTEGRAL
#undef COPY_INTEGRAL
#undef COPY_UNSIGNED
#undef COPY_SIGNED

dlb_loop dlb_math_loop(dlb_op op, dlb_dtype type) {
  if ((unsigned)op >= DLB_OP_COUNT || (unsigned)type >= DLB_DTYPE_COUNT) return NULL;
  if ((type == DLB_FLOAT32 || type == DLB_FLOAT64) && sleef_loops[LEVEL_SCALAR][op][0])
    return sleef_loops[simd_level()][op][type == DLB_FLOAT64];
  return kernels[op][type];
}
