/* test_loops_math.c -- the math kernels (backends/cpu/loops_math.c) called
 * directly: which (op, dtype) pairs have one; values against libm in long
 * double (the transcendental functions within 1 ulp, libm's own 2 ulps on
 * the path without vectors), rounding and predicates exactly, special values
 * (NaN, inf, -0, INT_MIN, halves), and every layout (strided, negative,
 * stride-0, in place, unaligned; lengths 1, 7, 33, 1000 for the vector
 * tails) giving the same bits as the contiguous run. The vector paths below
 * the CPU's best run again in child processes (DLBRIDGE_MATH_SIMD). */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid; setenv */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "backends/cpu/loops.h"
#include "compute/elementwise.h"
#include "core/dtype.h"
#include "fixtures.h"

#define MAXN 1000
static const int64_t lengths[] = {1, 7, 33, MAXN};

/* The largest error (ulps) a transcendental function may show: SLEEF's
 * bound, or glibc's where the kernels fall back to libm (child "none"). */
static double ulp_bound = 1.0;
static const char *level_name = "native";

/* Which SLEEF paths this build has (as loops_math.c decides: clang builds
 * only those the file is compiled for). */
#if defined(__x86_64__) && (!defined(__clang__) || (defined(__AVX2__) && defined(__FMA__)))
#define HAS_AVX2_PATH 1
#else
#define HAS_AVX2_PATH 0
#endif
#if defined(__x86_64__) && (!defined(__clang__) || defined(__AVX512F__))
#define HAS_AVX512_PATH 1
#else
#define HAS_AVX512_PATH 0
#endif

/* The bound of the path the kernels take here: SLEEF's 1 ulp, or libm's 2
 * (no path for this CPU in this build; or capped to "none"). */
static double bound_for(int allow_avx512, int allow_avx2) {
#if defined(__x86_64__)
  if (HAS_AVX512_PATH && allow_avx512 && __builtin_cpu_supports("avx512f")) return 1.0;
  if (HAS_AVX2_PATH && allow_avx2 && __builtin_cpu_supports("avx2") &&
      __builtin_cpu_supports("fma"))
    return 1.0;
#endif
  (void)allow_avx512;
  (void)allow_avx2;
  return 2.0;
}

static size_t item(dlb_dtype t) { return dlb_dtype_get(t)->itemsize; }

/* Runs a unary kernel over n elements. */
static void call1(dlb_loop k, void *out, int64_t out_step, const void *in, int64_t in_step,
                  int64_t n) {
  char *data[2] = {(char *)out, (char *)(uintptr_t)in};
  int64_t steps[2] = {out_step, in_step};
  CHECK_EQ_INT(k(data, steps, n, NULL), 0);
}

/* Runs a binary kernel (atan2: a = y, b = x). */
static void call2(dlb_loop k, void *out, int64_t out_step, const void *a, int64_t a_step,
                  const void *b, int64_t b_step, int64_t n) {
  char *data[3] = {(char *)out, (char *)(uintptr_t)a, (char *)(uintptr_t)b};
  int64_t steps[3] = {out_step, a_step, b_step};
  CHECK_EQ_INT(k(data, steps, n, NULL), 0);
}

/* A random double in [lo, hi] (hi - lo may overflow: not computed). */
static double uniform(double lo, double hi) {
  const double r = (double)(rng() >> 11) / 9007199254740992.0;
  return lo * (1 - r) + hi * r;
}

/* Whether got is want, bit for bit in value (NaN matches NaN). */
static int same_value(double got, double want) {
  if (isnan(want)) return isnan(got);
  return got == want && signbit(got) == signbit(want);
}

/* ------------------------------------------------------------------------ */
/* Which kernels exist */

static dlb_dtype result_type(dlb_op op, dlb_dtype t) {
  if (op == DLB_OP_ISNAN || op == DLB_OP_ISINF || op == DLB_OP_ISFINITE) return DLB_BOOL;
  if (op == DLB_OP_ABS && t == DLB_COMPLEX64) return DLB_FLOAT32;
  if (op == DLB_OP_ABS && t == DLB_COMPLEX128) return DLB_FLOAT64;
  return t;
}

static int is_float_function(dlb_op op) { return op >= DLB_OP_SQRT && op <= DLB_OP_TANH; }

static void test_selection(void) {
  for (int op = 0; op < DLB_OP_COUNT; op++) {
    for (int t = 0; t < DLB_DTYPE_COUNT; t++) {
      const dlb_kind kind = dlb_dtype_get((dlb_dtype)t)->kind;
      const int half = t == DLB_FLOAT16 || t == DLB_BFLOAT16;
      const int real = t == DLB_FLOAT32 || t == DLB_FLOAT64, is_complex = kind == DLB_KIND_COMPLEX;
      int expect;
      if (half) expect = 0;
      else if (is_float_function((dlb_op)op)) expect = real || is_complex;
      else if (op == DLB_OP_ATAN2) expect = real;
      else if (op == DLB_OP_FLOOR || op == DLB_OP_CEIL || op == DLB_OP_TRUNC) expect = !is_complex;
      else if (op == DLB_OP_ROUND || op == DLB_OP_ABS || op == DLB_OP_ISNAN || op == DLB_OP_ISINF ||
               op == DLB_OP_ISFINITE)
        expect = 1;
      else if (op == DLB_OP_SIGN) expect = t != DLB_BOOL;
      else expect = 0; /* arithmetic, comparisons, bitwise, logical, where: loops_arith.c */
      if ((dlb_math_loop((dlb_op)op, (dlb_dtype)t) != NULL) != expect) {
        CHECK(!"dlb_math_loop: a kernel where none should be, or none where one should");
        fprintf(stderr, "  op %s, dtype %s\n", dlb_op_get((dlb_op)op)->name,
                dlb_dtype_get((dlb_dtype)t)->name);
      }
    }
  }
  CHECK(dlb_math_loop(DLB_OP_SQRT, DLB_DTYPE_COUNT) == NULL);
  CHECK(dlb_math_loop(DLB_OP_COUNT, DLB_FLOAT32) == NULL);
}

/* ------------------------------------------------------------------------ */
/* Transcendental functions against long double libm */

/* The error of got against the exact ref in ulps of float (is_float) or
 * double; 0 for an exact special value, INFINITY for a wrong one. */
static double ulp_error(long double got, long double ref, int is_float) {
  const int mant = is_float ? 23 : 52, emin = is_float ? -126 : -1022;
  const long double rounded = is_float ? (long double)(float)ref : (long double)(double)ref;
  if (isnan(ref)) return isnan(got) ? 0 : INFINITY;
  if (isinf(rounded)) return got == rounded ? 0 : INFINITY;
  if (ref == 0) return got == 0 && signbit(got) == signbit(ref) ? 0 : INFINITY;
  if (!isfinite(got)) return INFINITY;
  int e = ilogbl(ref);
  if (e < emin) e = emin;
  return (double)(fabsl(got - ref) / ldexpl(1.0L, e - mant));
}

typedef long double (*ref_fn)(long double);
typedef struct math_case {
  dlb_op op;
  ref_fn ref;
  double lo, hi;     /* float64 inputs */
  double lo32, hi32; /* float32 inputs */
} math_case;

static const math_case math_cases[] = {
    {DLB_OP_EXP, expl, -745, 709.7, -104, 88.7},
    {DLB_OP_EXP2, exp2l, -1075, 1023.9, -150, 127.9},
    {DLB_OP_EXPM1, expm1l, -60, 709.7, -30, 88.7},
    {DLB_OP_LOG, logl, 0, 1e308, 0, 3e38},
    {DLB_OP_LOG2, log2l, 0, 1e308, 0, 3e38},
    {DLB_OP_LOG10, log10l, 0, 1e308, 0, 3e38},
    {DLB_OP_LOG1P, log1pl, -1, 1e308, -1, 3e38},
    {DLB_OP_SIN, sinl, -1e6, 1e6, -1e5, 1e5},
    {DLB_OP_COS, cosl, -1e6, 1e6, -1e5, 1e5},
    {DLB_OP_TAN, tanl, -1e6, 1e6, -1e5, 1e5},
    {DLB_OP_ASIN, asinl, -1, 1, -1, 1},
    {DLB_OP_ACOS, acosl, -1, 1, -1, 1},
    {DLB_OP_ATAN, atanl, -1e308, 1e308, -3e38, 3e38},
    {DLB_OP_SINH, sinhl, -710, 710, -89, 89},
    {DLB_OP_COSH, coshl, -710, 710, -89, 89},
    {DLB_OP_TANH, tanhl, -1e308, 1e308, -3e38, 3e38},
    {DLB_OP_SQRT, sqrtl, 0, 1e308, 0, 3e38},
};

/* Values every function meets: specials, extremes, subnormals. */
static const double specials[] = {
    NAN,
    -NAN,
    INFINITY,
    -INFINITY,
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    10.0,
    100.0,
    -100.0,
    1e-40,
    -1e-40,
    5e-324,
    -5e-324,
    1e-300,
    -1e-300,
    3.4e38,
    -3.4e38,
    1e300,
    -1e300,
    DBL_MAX,
    -DBL_MAX,
    1e22,
    -1e22,
    3.14159265358979,
    1.5707963267948966,
    710.0,
    -746.0,
    89.0,
    -104.0,
    0.9999999,
    -0.9999999,
    1e-8,
    -1e-8,
};
#define NSPECIAL (sizeof specials / sizeof specials[0])

/* n inputs in [lo, hi]: half uniform, half with log-uniform magnitudes (so
 * tiny values are met), then the specials. */
static int64_t make_inputs(double *x, double lo, double hi) {
  int64_t n = 0;
  const double top = fmax(fabs(lo), fabs(hi));
  while (n < MAXN - (int64_t)NSPECIAL) {
    double v = (n & 1) ? uniform(lo, hi) : pow(10.0, uniform(-40, log10(top)));
    if ((n & 1) == 0 && lo < 0 && (rng() & 1)) v = -v;
    if (v >= lo && v <= hi) x[n++] = v;
  }
  for (size_t k = 0; k < NSPECIAL; k++) x[n++] = specials[k];
  return n;
}

/* One function over float32 or float64 inputs: the largest error. */
static void check_function(const math_case *c, dlb_dtype type) {
  static double x[MAXN];
  static char in[MAXN * 8], out[MAXN * 8];
  const int is_float = type == DLB_FLOAT32;
  dlb_loop k = dlb_math_loop(c->op, type);
  const int64_t n = make_inputs(x, is_float ? c->lo32 : c->lo, is_float ? c->hi32 : c->hi);
  double worst = 0;
  int64_t worst_at = 0;
  CHECK(k != NULL);
  if (k == NULL) return;
  for (int64_t i = 0; i < n; i++) {
    if (is_float) {
      const float f = (float)x[i];
      memcpy(in + 4 * i, &f, 4);
    } else {
      memcpy(in + 8 * i, &x[i], 8);
    }
  }
  call1(k, out, (int64_t)item(type), in, (int64_t)item(type), n);
  for (int64_t i = 0; i < n; i++) {
    long double arg, got;
    double e;
    if (is_float) {
      float a, g;
      memcpy(&a, in + 4 * i, 4);
      memcpy(&g, out + 4 * i, 4);
      arg = a;
      got = g;
    } else {
      double a, g;
      memcpy(&a, in + 8 * i, 8);
      memcpy(&g, out + 8 * i, 8);
      arg = a;
      got = g;
    }
    e = ulp_error(got, c->ref(arg), is_float);
    if (!(e <= worst)) {
      worst = e;
      worst_at = i;
    }
  }
  {
    /* sqrt is correctly rounded on every path; float32 tanh and float64
     * sin and cos are SLEEF's 3.5-ulp functions (loops_math.c's
     * SLEEF_FUNCTIONS) */
    const int u35 = is_float ? c->op == DLB_OP_TANH : c->op == DLB_OP_SIN || c->op == DLB_OP_COS;
    const double bound = c->op == DLB_OP_SQRT ? 0.5 : u35 ? fmax(ulp_bound, 3.5) : ulp_bound;
    CHECK(worst <= bound + 1e-3);
    if (!(worst <= bound + 1e-3))
      fprintf(stderr, "  %s %s (%s): %.3g ulps at x = %.17g\n", dlb_op_get(c->op)->name,
              dlb_dtype_get(type)->name, level_name, worst,
              is_float ? (double)(float)x[worst_at] : x[worst_at]);
  }
}

static void test_functions(void) {
  for (size_t k = 0; k < sizeof math_cases / sizeof math_cases[0]; k++) {
    check_function(&math_cases[k], DLB_FLOAT32);
    check_function(&math_cases[k], DLB_FLOAT64);
  }
}

/* atan2 over random and special pairs, each quadrant, signed zeros. */
static void test_atan2(void) {
  static float yf[MAXN], xf[MAXN], of[MAXN];
  static double yd[MAXN], xd[MAXN], od[MAXN];
  double worst32 = 0, worst64 = 0;
  int64_t n = 0;
  for (size_t a = 0; a < 12; a++) /* the specials paired with each other */
    for (size_t b = 0; b < 12; b++, n++) {
      yd[n] = specials[a];
      xd[n] = specials[b];
    }
  for (; n < MAXN; n++) {
    yd[n] = uniform(-10, 10) * pow(10.0, uniform(-20, 20));
    xd[n] = uniform(-10, 10) * pow(10.0, uniform(-20, 20));
  }
  for (int64_t i = 0; i < n; i++) {
    yf[i] = (float)yd[i];
    xf[i] = (float)xd[i];
  }
  call2(dlb_math_loop(DLB_OP_ATAN2, DLB_FLOAT32), of, 4, yf, 4, xf, 4, n);
  call2(dlb_math_loop(DLB_OP_ATAN2, DLB_FLOAT64), od, 8, yd, 8, xd, 8, n);
  for (int64_t i = 0; i < n; i++) {
    worst32 = fmax(worst32, ulp_error(of[i], atan2l(yf[i], xf[i]), 1));
    worst64 = fmax(worst64, ulp_error(od[i], atan2l(yd[i], xd[i]), 0));
  }
  CHECK(worst32 <= ulp_bound + 1e-3);
  CHECK(worst64 <= ulp_bound + 1e-3);
  /* exact values C99 fixes */
  {
    const double y[] = {0.0, -0.0, 0.0, -0.0, 1.0, -1.0, INFINITY, INFINITY, NAN};
    const double x[] = {0.0, 0.0, -0.0, -0.0, INFINITY, -INFINITY, INFINITY, -INFINITY, 1.0};
    double o[9];
    call2(dlb_math_loop(DLB_OP_ATAN2, DLB_FLOAT64), o, 8, y, 8, x, 8, 9);
    for (int i = 0; i < 9; i++) {
      const double want = atan2(y[i], x[i]);
      CHECK(same_value(o[i], want));
      if (!same_value(o[i], want))
        fprintf(stderr, "  atan2(%g, %g) = %g, not %g (%s)\n", y[i], x[i], o[i], want, level_name);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Rounding, abs, sign and the predicates of floats: exact */

/* Inputs for the exact float kernels: halves, integers, fractions near
 * them, the largest non-integers, and the specials. */
static int64_t rounding_inputs(double *x, int is_float) {
  static const double fixed[] = {0.5,
                                 1.5,
                                 2.5,
                                 -0.5,
                                 -1.5,
                                 -2.5,
                                 0.49999997,
                                 -0.49999997,
                                 0.7,
                                 -0.7,
                                 0.3,
                                 -0.3,
                                 8388607.5,
                                 -8388607.5,
                                 8388608.0,
                                 4503599627370495.5,
                                 -4503599627370495.5,
                                 4503599627370496.0,
                                 9007199254740993.0,
                                 1e-310,
                                 -1e-310};
  int64_t n = 0;
  for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++) x[n++] = fixed[k];
  for (size_t k = 0; k < NSPECIAL; k++) x[n++] = specials[k];
  while (n < MAXN) {
    if (n % 3 == 0) /* -10, -9.5, ..., 10 */
      x[n++] = (double)rnd(41) / 2 - 10;
    else x[n++] = uniform(-20, 20) * pow(2.0, uniform(-30, is_float ? 30 : 60));
  }
  return n;
}

/* The reference of an exact float op in double (exact for float inputs too). */
static double exact_reference(dlb_op op, double x) {
  switch (op) {
    case DLB_OP_FLOOR: return floor(x);
    case DLB_OP_CEIL: return ceil(x);
    case DLB_OP_TRUNC: return trunc(x);
    case DLB_OP_ROUND: return nearbyint(x);
    case DLB_OP_ABS: return fabs(x);
    case DLB_OP_SIGN: return isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
    case DLB_OP_ISNAN: return isnan(x) ? 1 : 0;
    case DLB_OP_ISINF: return isinf(x) ? 1 : 0;
    default: return isfinite(x) ? 1 : 0; /* ISFINITE */
  }
}

static void test_exact_float_ops(void) {
  static const dlb_op ops[] = {DLB_OP_FLOOR, DLB_OP_CEIL,  DLB_OP_TRUNC, DLB_OP_ROUND,   DLB_OP_ABS,
                               DLB_OP_SIGN,  DLB_OP_ISNAN, DLB_OP_ISINF, DLB_OP_ISFINITE};
  static double x[MAXN];
  static char in[MAXN * 8], out[MAXN * 8];
  for (int is_float = 0; is_float <= 1; is_float++) {
    const dlb_dtype type = is_float ? DLB_FLOAT32 : DLB_FLOAT64;
    const int64_t n = rounding_inputs(x, is_float);
    for (int64_t i = 0; i < n; i++) {
      if (is_float) {
        const float f = (float)x[i];
        memcpy(in + 4 * i, &f, 4);
        x[i] = f;
      } else {
        memcpy(in + 8 * i, &x[i], 8);
      }
    }
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
      const dlb_dtype rt = result_type(ops[k], type);
      int bad = 0;
      call1(dlb_math_loop(ops[k], type), out, (int64_t)item(rt), in, (int64_t)item(type), n);
      for (int64_t i = 0; i < n && !bad; i++) {
        double got;
        if (rt == DLB_BOOL) {
          got = (unsigned char)out[i];
        } else if (is_float) {
          float g;
          memcpy(&g, out + 4 * i, 4);
          got = g;
        } else {
          memcpy(&got, out + 8 * i, 8);
        }
        if (!same_value(got, exact_reference(ops[k], x[i]))) {
          bad = 1;
          fprintf(stderr, "  %s %s of %.17g gave %.17g\n", dlb_op_get(ops[k])->name,
                  dlb_dtype_get(type)->name, x[i], got);
        }
      }
      CHECK(!bad);
    }
  }
}

/* The cases the issue names: round half to even, sign of NaN and zeros. */
static void test_named_cases(void) {
  const double x[] = {0.5, 1.5, 2.5, -2.5, -0.5, 3.5, -0.0};
  const double rounded[] = {0.0, 2.0, 2.0, -2.0, -0.0, 4.0, -0.0};
  double o[7];
  float xf[7], of[7];
  call1(dlb_math_loop(DLB_OP_ROUND, DLB_FLOAT64), o, 8, x, 8, 7);
  for (int i = 0; i < 7; i++) CHECK(same_value(o[i], rounded[i]));
  for (int i = 0; i < 7; i++) xf[i] = (float)x[i];
  call1(dlb_math_loop(DLB_OP_ROUND, DLB_FLOAT32), of, 4, xf, 4, 7);
  for (int i = 0; i < 7; i++) CHECK(same_value(of[i], rounded[i]));
  {
    const double s[] = {NAN, -0.0, 0.0, -3.0, INFINITY, -INFINITY, 1e-320};
    const double want[] = {NAN, 0.0, 0.0, -1.0, 1.0, -1.0, 1.0};
    call1(dlb_math_loop(DLB_OP_SIGN, DLB_FLOAT64), o, 8, s, 8, 7);
    for (int i = 0; i < 7; i++) CHECK(same_value(o[i], want[i]));
  }
  {
    const double s[] = {-0.0, -0.5, -0.7, 0.7, -INFINITY, NAN};
    double f[6], c[6], t[6];
    call1(dlb_math_loop(DLB_OP_FLOOR, DLB_FLOAT64), f, 8, s, 8, 6);
    call1(dlb_math_loop(DLB_OP_CEIL, DLB_FLOAT64), c, 8, s, 8, 6);
    call1(dlb_math_loop(DLB_OP_TRUNC, DLB_FLOAT64), t, 8, s, 8, 6);
    CHECK(same_value(f[0], -0.0) && same_value(f[1], -1.0) && same_value(f[2], -1.0));
    CHECK(same_value(f[3], 0.0) && same_value(f[4], -INFINITY) && isnan(f[5]));
    CHECK(same_value(c[0], -0.0) && same_value(c[1], -0.0) && same_value(c[2], -0.0));
    CHECK(same_value(c[3], 1.0) && same_value(c[4], -INFINITY) && isnan(c[5]));
    CHECK(same_value(t[1], -0.0) && same_value(t[2], -0.0) && same_value(t[3], 0.0));
  }
  {
    /* special values of the functions, as C99 Annex F */
    const double s[] = {0.0, -1.0, INFINITY, -0.0};
    double l[4], e[4], r[4], sn[4];
    call1(dlb_math_loop(DLB_OP_LOG, DLB_FLOAT64), l, 8, s, 8, 4);
    call1(dlb_math_loop(DLB_OP_EXP, DLB_FLOAT64), e, 8, s, 8, 4);
    call1(dlb_math_loop(DLB_OP_SQRT, DLB_FLOAT64), r, 8, s, 8, 4);
    call1(dlb_math_loop(DLB_OP_SIN, DLB_FLOAT64), sn, 8, s, 8, 4);
    CHECK(l[0] == -INFINITY && isnan(l[1]) && l[2] == INFINITY && l[3] == -INFINITY);
    CHECK(e[0] == 1 && same_value(e[1], exp(-1.0)) && e[2] == INFINITY && e[3] == 1);
    CHECK(r[0] == 0 && isnan(r[1]) && r[2] == INFINITY && same_value(r[3], -0.0));
    CHECK(same_value(sn[0], 0.0) && same_value(sn[3], -0.0) && isnan(sn[2]));
  }
}

/* ------------------------------------------------------------------------ */
/* Integers and bool */

static int64_t load_int(dlb_dtype t, const char *p) {
  switch (t) {
    case DLB_BOOL:
    case DLB_UINT8: return *(const uint8_t *)p;
    case DLB_INT8: return *(const int8_t *)p;
    case DLB_INT16: {
      int16_t v;
      memcpy(&v, p, 2);
      return v;
    }
    case DLB_UINT16: {
      uint16_t v;
      memcpy(&v, p, 2);
      return v;
    }
    case DLB_INT32: {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    case DLB_UINT32: {
      uint32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      memcpy(&v, p, 8);
      return v;
    } /* int64, uint64 (bits) */
  }
}

/* Stores the low bits of v (two's complement) as an element of t. */
static void store_int(dlb_dtype t, char *p, int64_t v) {
  const uint64_t u = (uint64_t)v;
  const size_t size = item(t);
  for (size_t b = 0; b < size; b++) p[b] = (char)(u >> (8 * b)); /* little-endian */
}

static void test_integers(void) {
  static char in[MAXN * 8], out[MAXN * 8];
  for (int t = DLB_BOOL; t <= DLB_UINT64; t++) {
    const dlb_dtype type = (dlb_dtype)t;
    const dlb_kind kind = dlb_dtype_get(type)->kind;
    const size_t size = item(type);
    const int bits = (int)size * 8;
    const int64_t n = 200;
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t v = (int64_t)rng();
      if (type == DLB_BOOL) v = i & 1;
      else if (i < 6) { /* MIN, MIN + 1, -1, 0, 1, MAX of the type */
        const int64_t min = kind == DLB_KIND_INT ? (int64_t)((uint64_t)-1 << (bits - 1)) : 0;
        const int64_t max = (int64_t)((uint64_t)-1 >> (64 - bits + (kind == DLB_KIND_INT)));
        const int64_t specials6[6] = {min, min + 1, -1, 0, 1, max};
        v = specials6[i];
      }
      store_int(type, in + (size_t)i * size, v);
    }
    for (int op = DLB_OP_ABS; op <= DLB_OP_ISFINITE; op++) {
      dlb_loop k = dlb_math_loop((dlb_op)op, type);
      const dlb_dtype rt = result_type((dlb_op)op, type);
      if (k == NULL) continue; /* float functions: cast by the driver; sign of bool */
      call1(k, out, (int64_t)item(rt), in, (int64_t)size, n);
      for (int64_t i = 0; i < n; i++) {
        const int64_t x = load_int(type, in + (size_t)i * size);
        const int64_t got = load_int(rt, out + (size_t)i * item(rt));
        const int is_signed = kind == DLB_KIND_INT;
        int64_t want;
        switch (op) {
          case DLB_OP_ABS:
            want = x;
            if (is_signed && x < 0) { /* wraps: abs(MIN) is MIN */
              char tmp[8];
              store_int(type, tmp, (int64_t)(0u - (uint64_t)x));
              want = load_int(type, tmp);
            }
            break;
          case DLB_OP_SIGN:
            want = is_signed ? (x > 0) - (x < 0) : x != 0;
            if (!is_signed && x != 0) want = 1;
            break;
          case DLB_OP_ISNAN:
          case DLB_OP_ISINF: want = 0; break;
          case DLB_OP_ISFINITE: want = 1; break;
          default: want = x; /* floor, ceil, trunc, round: unchanged */
        }
        if (got != want && !bad) {
          bad = 1;
          fprintf(stderr, "  %s %s of %lld gave %lld, not %lld\n", dlb_op_get((dlb_op)op)->name,
                  dlb_dtype_get(type)->name, (long long)x, (long long)got, (long long)want);
        }
      }
    }
    CHECK(!bad);
  }
  {
    const int32_t x[4] = {INT32_MIN, -5, 0, INT32_MAX};
    int32_t o[4];
    call1(dlb_math_loop(DLB_OP_ABS, DLB_INT32), o, 4, x, 4, 4);
    CHECK(o[0] == INT32_MIN && o[1] == 5 && o[2] == 0 && o[3] == INT32_MAX);
    call1(dlb_math_loop(DLB_OP_SIGN, DLB_INT32), o, 4, x, 4, 4);
    CHECK(o[0] == -1 && o[1] == -1 && o[2] == 0 && o[3] == 1);
  }
}

/* ------------------------------------------------------------------------ */
/* Complex numbers */

typedef long double complex (*cref_fn)(long double complex);
#define LN2L 0.693147180559945309417232121458L
#define LN10L 2.302585092994045684017991454684L
static long double complex ref_exp2(long double complex z) { return cexpl(z * LN2L); }
static long double complex ref_expm1(long double complex z) { return cexpl(z) - 1; }
static long double complex ref_log2(long double complex z) { return clogl(z) / LN2L; }
static long double complex ref_log10(long double complex z) { return clogl(z) / LN10L; }
static long double complex ref_log1p(long double complex z) { return clogl(1 + z); }

static const struct {
  dlb_op op;
  cref_fn ref;
} complex_cases[] = {
    {DLB_OP_SQRT, csqrtl},     {DLB_OP_EXP, cexpl},       {DLB_OP_EXP2, ref_exp2},
    {DLB_OP_EXPM1, ref_expm1}, {DLB_OP_LOG, clogl},       {DLB_OP_LOG2, ref_log2},
    {DLB_OP_LOG10, ref_log10}, {DLB_OP_LOG1P, ref_log1p}, {DLB_OP_SIN, csinl},
    {DLB_OP_COS, ccosl},       {DLB_OP_TAN, ctanl},       {DLB_OP_ASIN, casinl},
    {DLB_OP_ACOS, cacosl},     {DLB_OP_ATAN, catanl},     {DLB_OP_SINH, csinhl},
    {DLB_OP_COSH, ccoshl},     {DLB_OP_TANH, ctanhl},
};

/* The complex functions away from their branch cuts and poles, within a
 * few ulps of the result's magnitude. */
static void test_complex_functions(void) {
  enum { N = 200 };
  static double zin[2 * N], zout[2 * N];
  static float fin[2 * N], fout[2 * N];
  for (int i = 0; i < N; i++) {
    const double mag = pow(10.0, uniform(-2, 0.6)), arg = uniform(-3.1, 3.1);
    zin[2 * i] = mag * cos(arg);
    zin[2 * i + 1] = mag * sin(arg);
    fin[2 * i] = (float)zin[2 * i];
    fin[2 * i + 1] = (float)zin[2 * i + 1];
  }
  for (size_t k = 0; k < sizeof complex_cases / sizeof complex_cases[0]; k++) {
    double worst64 = 0, worst32 = 0;
    call1(dlb_math_loop(complex_cases[k].op, DLB_COMPLEX128), zout, 16, zin, 16, N);
    call1(dlb_math_loop(complex_cases[k].op, DLB_COMPLEX64), fout, 8, fin, 8, N);
    for (int i = 0; i < N; i++) {
      const cref_fn ref = complex_cases[k].ref;
      const long double complex r64 = ref(zin[2 * i] + zin[2 * i + 1] * (long double complex)I);
      const long double complex r32 = ref(fin[2 * i] + fin[2 * i + 1] * (long double complex)I);
      const long double complex g64 = zout[2 * i] + zout[2 * i + 1] * (long double complex)I;
      const long double complex g32 = fout[2 * i] + fout[2 * i + 1] * (long double complex)I;
      /* NumPy's expm1 and log1p formulas lose the relative accuracy near 0
       * (1 + z is rounded first): there the error is absolute */
      const dlb_op op = complex_cases[k].op;
      const int absolute = op == DLB_OP_EXPM1 || op == DLB_OP_LOG1P;
      const long double scale64 = absolute ? fmaxl(cabsl(r64), 1) : cabsl(r64);
      const long double scale32 = absolute ? fmaxl(cabsl(r32), 1) : cabsl(r32);
      worst64 = fmax(worst64, (double)(cabsl(g64 - r64) / scale64 / DBL_EPSILON));
      worst32 = fmax(worst32, (double)(cabsl(g32 - r32) / scale32 / FLT_EPSILON));
    }
    CHECK(worst64 <= 8);
    CHECK(worst32 <= 8);
    if (worst64 > 8 || worst32 > 8)
      fprintf(stderr, "  complex %s: %.3g / %.3g eps\n", dlb_op_get(complex_cases[k].op)->name,
              worst64, worst32);
  }
}

/* abs, sign, round and the predicates of complex numbers. */
static void test_complex_exact(void) {
  const double z[] = {3,        4,        0,        0,    -0.0,  0,     INFINITY, 0,
                      1,        NAN,      INFINITY, NAN,  -3,    4,     0,        -INFINITY,
                      INFINITY, INFINITY, 2.5,      -1.5, 1e308, 1e308, NAN,      INFINITY};
  enum { N = 12 };
  double a[N], s[2 * N], r[2 * N];
  char isn[N], isi[N], isf[N];
  float zf[2 * N], af[N];
  call1(dlb_math_loop(DLB_OP_ABS, DLB_COMPLEX128), a, 8, z, 16, N);
  call1(dlb_math_loop(DLB_OP_SIGN, DLB_COMPLEX128), s, 16, z, 16, N);
  call1(dlb_math_loop(DLB_OP_ROUND, DLB_COMPLEX128), r, 16, z, 16, N);
  call1(dlb_math_loop(DLB_OP_ISNAN, DLB_COMPLEX128), isn, 1, z, 16, N);
  call1(dlb_math_loop(DLB_OP_ISINF, DLB_COMPLEX128), isi, 1, z, 16, N);
  call1(dlb_math_loop(DLB_OP_ISFINITE, DLB_COMPLEX128), isf, 1, z, 16, N);
  for (int i = 0; i < N; i++) {
    const double re = z[2 * i], im = z[2 * i + 1];
    CHECK(same_value(a[i], hypot(re, im)));
    CHECK(same_value(r[2 * i], nearbyint(re)) && same_value(r[2 * i + 1], nearbyint(im)));
    CHECK(isn[i] == (isnan(re) || isnan(im)));
    CHECK(isi[i] == (isinf(re) || isinf(im)));
    CHECK(isf[i] == (isfinite(re) && isfinite(im)));
  }
  CHECK(a[0] == 5 && a[3] == INFINITY && a[5] == INFINITY && a[10] > 1.4e308);
  /* sign = z / |z| (NumPy 2) */
  CHECK(s[0] == 0.6 && s[1] == 0.8);
  CHECK(s[2] == 0 && s[3] == 0 && s[4] == 0 && s[5] == 0);
  CHECK(s[6] == 1 && s[7] == 0);     /* inf + 0j */
  CHECK(isnan(s[8]) && isnan(s[9])); /* 1 + nan j */
  CHECK(s[10] == 1 && s[11] == 0);   /* inf + nan j: |z| = inf */
  CHECK(s[12] == -0.6 && s[13] == 0.8);
  CHECK(s[14] == 0 && s[15] == -1);                                          /* -inf j */
  CHECK(isnan(s[16]) && isnan(s[17]));                                       /* inf + inf j */
  CHECK(fabs(s[20] - sqrt(0.5)) < 3e-16 && fabs(s[21] - sqrt(0.5)) < 3e-16); /* no overflow */
  CHECK(s[22] == 0 && s[23] == 1);                                           /* nan + inf j */
  CHECK(r[18] == 2 && r[19] == -2); /* round half to even, both parts */
  for (int i = 0; i < 2 * N; i++) zf[i] = (float)z[i];
  call1(dlb_math_loop(DLB_OP_ABS, DLB_COMPLEX64), af, 4, zf, 8, N);
  /* (1e308 is inf as a float) */
  CHECK(af[0] == 5 && af[10] == INFINITY && af[5] == INFINITY && isnan(af[4]));
  {
    /* complex log of 0 and sqrt of -1 */
    const double w[4] = {0, 0, -1, 0};
    double o[4];
    call1(dlb_math_loop(DLB_OP_LOG, DLB_COMPLEX128), o, 16, w, 16, 2);
    CHECK(o[0] == -INFINITY && o[1] == 0);
    call1(dlb_math_loop(DLB_OP_SQRT, DLB_COMPLEX128), o, 16, w, 16, 2);
    CHECK(o[2] == 0 && o[3] == 1);
  }
}

/* ------------------------------------------------------------------------ */
/* Layouts: every kernel gives the contiguous run's bits in every layout */

/* n elements of t for the layout tests: ordinary values, a few specials. */
static void fill_values(dlb_dtype t, char *p, int64_t n) {
  const dlb_kind kind = dlb_dtype_get(t)->kind;
  for (int64_t i = 0; i < n; i++) {
    char *e = p + (size_t)i * item(t);
    double v = uniform(-3, 3);
    if (i % 11 == 5) v = (i % 2) ? NAN : -INFINITY;
    if (kind == DLB_KIND_BOOL) {
      store_int(t, e, (int64_t)(rng() & 1));
    } else if (kind == DLB_KIND_INT || kind == DLB_KIND_UINT) {
      store_int(t, e, (int64_t)rng());
    } else if (t == DLB_FLOAT32 || t == DLB_COMPLEX64) {
      const float f[2] = {(float)v, (float)uniform(-3, 3)};
      memcpy(e, f, item(t));
    } else {
      const double d[2] = {v, uniform(-3, 3)};
      memcpy(e, d, item(t));
    }
  }
}

static int layout_failures;
/* got[i * got_step] == want[i] (size bytes each; want_step 0: want[0] for all). */
static void expect_same_at(const char *what, dlb_op op, dlb_dtype t, int64_t n, const char *got,
                           int64_t got_step, const char *want, int64_t want_step, size_t size) {
  for (int64_t i = 0; i < n; i++) {
    if (memcmp(got + i * got_step, want + i * want_step, size) != 0) {
      if (layout_failures++ < 20)
        fprintf(stderr, "  %s %s, n = %lld, %s: element %lld differs\n", dlb_op_get(op)->name,
                dlb_dtype_get(t)->name, (long long)n, what, (long long)i);
      return;
    }
  }
}
static void expect_same(const char *what, dlb_op op, dlb_dtype t, int64_t n, const char *got,
                        int64_t got_step, const char *want, size_t size) {
  expect_same_at(what, op, t, n, got, got_step, want, (int64_t)size, size);
}

/* One unary kernel in every layout against its contiguous run. */
static void check_unary_layouts(dlb_op op, dlb_dtype t) {
  enum { PAD = 3 * MAXN * 16 + 64 };
  static char in[PAD], ref[MAXN * 16], buf[PAD], work[PAD];
  dlb_loop k = dlb_math_loop(op, t);
  const dlb_dtype rt = result_type(op, t);
  const int64_t is = (int64_t)item(t), os = (int64_t)item(rt);
  for (size_t L = 0; L < sizeof lengths / sizeof lengths[0]; L++) {
    const int64_t n = lengths[L];
    fill_values(t, in, n);
    call1(k, ref, os, in, is, n);
    /* input every second element, output every third */
    for (int64_t i = 0; i < n; i++) memcpy(work + i * 2 * is, in + i * is, (size_t)is);
    call1(k, buf, 3 * os, work, 2 * is, n);
    expect_same("strided", op, t, n, buf, 3 * os, ref, (size_t)os);
    /* input walked backwards: out[i] = f(in[n - 1 - i]) */
    for (int64_t i = 0; i < n; i++) memcpy(work + (n - 1 - i) * is, in + i * is, (size_t)is);
    call1(k, buf, os, work + (n - 1) * is, -is, n);
    expect_same("negative input stride", op, t, n, buf, os, ref, (size_t)os);
    /* output written backwards */
    call1(k, buf + (n - 1) * os, -os, in, is, n);
    expect_same("negative output stride", op, t, n, buf + (n - 1) * os, -os, ref, (size_t)os);
    /* one input for all: out[i] = f(in[0]) */
    call1(k, buf, os, in, 0, n);
    expect_same_at("stride-0 input", op, t, n, buf, os, ref, 0, (size_t)os);
    /* unaligned operands */
    memcpy(work + 1, in, (size_t)(n * is));
    call1(k, buf + 3, os, work + 1, is, n);
    expect_same("unaligned", op, t, n, buf + 3, os, ref, (size_t)os);
    if (rt == t) {
      /* in place, contiguous and with stride -2 */
      memcpy(work, in, (size_t)(n * is));
      call1(k, work, is, work, is, n);
      expect_same("in place", op, t, n, work, is, ref, (size_t)os);
      char *last = work + 2 * (n - 1) * is; /* element 0, walked with stride -2 */
      for (int64_t i = 0; i < n; i++) memcpy(last - 2 * i * is, in + i * is, (size_t)is);
      call1(k, last, -2 * is, last, -2 * is, n);
      expect_same("in place, stride -2", op, t, n, last, -2 * is, ref, (size_t)os);
    }
  }
}

/* atan2 with each operand in each layout, and in place on either input. */
static void check_atan2_layouts(dlb_dtype t) {
  static char y[MAXN * 8], x[MAXN * 8], ref[MAXN * 8], buf[3 * MAXN * 8 + 64], ys[3 * MAXN * 8],
      xs[3 * MAXN * 8], tmp[MAXN * 8];
  dlb_loop k = dlb_math_loop(DLB_OP_ATAN2, t);
  const int64_t s = (int64_t)item(t);
  for (size_t L = 0; L < sizeof lengths / sizeof lengths[0]; L++) {
    const int64_t n = lengths[L];
    fill_values(t, y, n);
    fill_values(t, x, n);
    call2(k, ref, s, y, s, x, s, n);
    for (int64_t i = 0; i < n; i++) {
      memcpy(ys + 3 * i * s, y + i * s, (size_t)s);
      memcpy(xs + (n - 1 - i) * s, x + i * s, (size_t)s);
    }
    call2(k, buf, 2 * s, ys, 3 * s, xs + (n - 1) * s, -s, n);
    expect_same("atan2 y strided, x backwards", DLB_OP_ATAN2, t, n, buf, 2 * s, ref, (size_t)s);
    call2(k, buf + 1, s, y, s, xs + (n - 1) * s, -s, n);
    expect_same("atan2 unaligned output", DLB_OP_ATAN2, t, n, buf + 1, s, ref, (size_t)s);
    memcpy(tmp, y, (size_t)(n * s));
    call2(k, tmp, s, tmp, s, x, s, n);
    expect_same("atan2 in place on y", DLB_OP_ATAN2, t, n, tmp, s, ref, (size_t)s);
    memcpy(tmp, x, (size_t)(n * s));
    call2(k, tmp, s, y, s, tmp, s, n);
    expect_same("atan2 in place on x", DLB_OP_ATAN2, t, n, tmp, s, ref, (size_t)s);
    /* stride-0 operands: y[0] against every x, every y against x[0] */
    call2(k, buf, s, y, 0, x, s, n);
    for (int64_t i = 0; i < n; i++) memcpy(tmp + i * s, y, (size_t)s);
    call2(k, ref, s, tmp, s, x, s, n);
    expect_same("atan2 stride-0 y", DLB_OP_ATAN2, t, n, buf, s, ref, (size_t)s);
    call2(k, buf, s, y, s, x, 0, n);
    for (int64_t i = 0; i < n; i++) memcpy(tmp + i * s, x, (size_t)s);
    call2(k, ref, s, y, s, tmp, s, n);
    expect_same("atan2 stride-0 x", DLB_OP_ATAN2, t, n, buf, s, ref, (size_t)s);
  }
}

static void test_layouts(void) {
  layout_failures = 0;
  for (int op = 0; op < DLB_OP_COUNT; op++) {
    for (int t = 0; t < DLB_DTYPE_COUNT; t++) {
      if (op == DLB_OP_ATAN2 || dlb_math_loop((dlb_op)op, (dlb_dtype)t) == NULL) continue;
      check_unary_layouts((dlb_op)op, (dlb_dtype)t);
    }
  }
  check_atan2_layouts(DLB_FLOAT32);
  check_atan2_layouts(DLB_FLOAT64);
  CHECK_EQ_INT(layout_failures, 0);
}

/* ------------------------------------------------------------------------ */

/* The float32/float64 functions at a lower vector level, in a child. */
static const char *child_level;
static void run_at_level(void) {
  setenv("DLBRIDGE_MATH_SIMD", child_level, 1);
  level_name = child_level;
  ulp_bound = strcmp(child_level, "none") == 0 ? bound_for(0, 0) : bound_for(0, 1);
  test_functions();
  test_atan2();
  test_named_cases();
  test_layouts();
}

int main(void) {
  /* first, while no kernel has been picked (the choice is made once) */
  child_level = "avx2";
  CHECK(run_isolated(run_at_level));
  child_level = "none";
  CHECK(run_isolated(run_at_level));

  ulp_bound = bound_for(1, 1);
  test_selection();
  test_functions();
  test_atan2();
  test_exact_float_ops();
  test_named_cases();
  test_integers();
  test_complex_functions();
  test_complex_exact();
  test_layouts();
  return check_done("test_loops_math");
}
