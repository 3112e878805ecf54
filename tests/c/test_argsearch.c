/* test_argsearch.c -- the argmin/argmax kernels (backends/cpu/reduce_loops.h)
 * against a plain element-by-element reference: every dtype they take,
 * lengths 1..300 and long runs crossing their blocks, contiguous, strided,
 * reversed and stride-0 input, ties placed on the kernels' block, chunk and
 * lane boundaries, NaN anywhere (in ascending runs too), -0.0 beside +0.0,
 * the integer extremes; and the row updates of argmin/argmax along an
 * outer dim. The elements between strided ones are poison (what would win
 * if it were read). A seed other than the default: ARGSEARCH_SEED=n. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "backends/cpu/reduce_loops.h"
#include "fixtures.h"

/* How a run's values are drawn. */
typedef enum { FEW, WIDE, ASCENDING, EQUAL, ZEROS, KINDS } kind;
static const char *kind_names[] = {"few", "wide", "ascending", "equal", "zeros"};

/* The kernels' boundaries for elements of `size` bytes (reduce_loops.c:
 * blocks of 4096 bytes, chunks of 64 elements, lanes of 128 bytes (four
 * 256-bit vectors; one-byte elements: 64 lanes), runs shorter than 64 or
 * 128 walked), each with its neighbours. */
static int64_t boundary(int64_t size, int64_t n) {
  const int64_t block = 4096 / size, lanes = (size == 1 ? 64 : 128) / size;
  const int64_t at[] = {0,         1,         63,        64,        65,           127,
                        128,       129,       lanes - 1, lanes,     lanes + 1,    2 * lanes - 1,
                        2 * lanes, block - 1, block,     block + 1, 2 * block,    2 * block - 1,
                        n - 2,     n - 1,     n / 2,     lanes / 2, 3 * lanes + 1};
  int64_t i = at[rnd((int64_t)(sizeof at / sizeof at[0]))];
  return i < 0 || i >= n ? rnd(n) : i;
}

/*
 * For each dtype NAME (elements T, dtype DT, extremes LO and HI, FLOATING
 * 1 for floats): the reference search, a value of a kind, and the checks
 * of one run (test_NAME) of n elements `step` elements apart (negative:
 * the run goes backwards through memory).
 */
#define TYPE_TESTS(NAME, T, DT, LO, HI, FLOATING)                                                  \
  static int64_t reference_##NAME(int is_max, const T *x, int64_t n, int64_t step) {               \
    T best = x[0];                                                                                 \
    int64_t at = 0;                                                                                \
    if (best != best) return 0;                                                                    \
    for (int64_t i = 1; i < n; i++) {                                                              \
      T v = x[i * step];                                                                           \
      if (v != v) return i;                                                                        \
      if (is_max ? v > best : v < best) {                                                          \
        best = v;                                                                                  \
        at = i;                                                                                    \
      }                                                                                            \
    }                                                                                              \
    return at;                                                                                     \
  }                                                                                                \
  static T value_##NAME(kind k, int64_t i, int64_t n) {                                            \
    switch (k) {                                                                                   \
      case FEW: return (T)(rnd(5) + (LO < 0 ? -2 : 0));                                            \
      case ASCENDING: /* ties for long runs of integers */                                         \
        return FLOATING ? (T)(i - n / 2) / 8 : (T)((double)i / (double)n * 200 - (LO < 0) * 100);  \
      case EQUAL: return (T)3;                                                                     \
      case ZEROS: return FLOATING && rnd(2) ? (T)-0.0 : (T)0;                                      \
      default:                                                                                     \
        switch (rnd(16)) {                                                                         \
          case 0: return LO;                                                                       \
          case 1: return HI;                                                                       \
          default: {                                                                               \
            uint64_t bits = rng();                                                                 \
            T v;                                                                                   \
            if (FLOATING) return (T)((double)(int64_t)bits * 0x1p-40);                             \
            memcpy(&v, &bits, sizeof v);                                                           \
            return v;                                                                              \
          }                                                                                        \
        }                                                                                          \
    }                                                                                              \
  }                                                                                                \
  static void test_##NAME(int64_t n, int64_t step, kind k, int nans, int ties) {                   \
    const int64_t gap = step < 0 ? -step : step, size = (int64_t)sizeof(T);                        \
    T *v = malloc((size_t)n * sizeof(T)), *mem = malloc((size_t)(n * gap) * sizeof(T));            \
    T *x = step < 0 ? mem + (n - 1) * gap : mem;                                                   \
    if (n < 1 || !v || !mem) { /* the reference reads x[0] */                                      \
      CHECK(n >= 1 && v != NULL && mem != NULL);                                                   \
      free(v);                                                                                     \
      free(mem);                                                                                   \
      return;                                                                                      \
    }                                                                                              \
    for (int64_t i = 0; i < n; i++) v[i] = value_##NAME(k, i, n);                                  \
    for (int t = 0; ties && t < 2; t++) { /* the extremes, twice each, on boundaries */            \
      v[boundary(size, n)] = FLOATING ? (T)INFINITY : HI;                                          \
      v[boundary(size, n)] = FLOATING ? (T)-INFINITY : LO;                                         \
    }                                                                                              \
    for (int t = 0; FLOATING && t < nans; t++) v[boundary(size, n)] = (T)NAN;                      \
    for (int is_max = 0; is_max < 2; is_max++) {                                                   \
      int64_t got, want = reference_##NAME(is_max, v, n, 1);                                       \
      for (int64_t i = 0; i < n * gap; i++) mem[i] = FLOATING ? (T)NAN : is_max ? HI : LO;         \
      for (int64_t i = 0; i < n; i++) x[i * step] = v[i];                                          \
      got = dlb_reduce_arg_search(is_max, DT, (const char *)x, n, step * size);                    \
      if (got != want)                                                                             \
        fprintf(stderr, "%s %s: n %lld, step %lld, %s, %d NaN, ties %d\n", #NAME,                  \
                is_max ? "argmax" : "argmin", (long long)n, (long long)step, kind_names[k], nans,  \
                ties);                                                                             \
      CHECK_EQ_INT(got, want);                                                                     \
    }                                                                                              \
    free(v);                                                                                       \
    free(mem);                                                                                     \
  }

TYPE_TESTS(int8, int8_t, DLB_INT8, INT8_MIN, INT8_MAX, 0)
TYPE_TESTS(int16, int16_t, DLB_INT16, INT16_MIN, INT16_MAX, 0)
TYPE_TESTS(int32, int32_t, DLB_INT32, INT32_MIN, INT32_MAX, 0)
TYPE_TESTS(int64, int64_t, DLB_INT64, INT64_MIN, INT64_MAX, 0)
TYPE_TESTS(uint8, uint8_t, DLB_UINT8, 0, UINT8_MAX, 0)
TYPE_TESTS(uint16, uint16_t, DLB_UINT16, 0, UINT16_MAX, 0)
TYPE_TESTS(uint32, uint32_t, DLB_UINT32, 0, UINT32_MAX, 0)
TYPE_TESTS(uint64, uint64_t, DLB_UINT64, 0, UINT64_MAX, 0)
TYPE_TESTS(float32, float, DLB_FLOAT32, -FLT_MAX, FLT_MAX, 1)
TYPE_TESTS(float64, double, DLB_FLOAT64, -DBL_MAX, DBL_MAX, 1)
#undef TYPE_TESTS

typedef void (*run_test)(int64_t n, int64_t step, kind k, int nans, int ties);
static const run_test runs[] = {test_int8,   test_int16,  test_int32,  test_int64,   test_uint8,
                                test_uint16, test_uint32, test_uint64, test_float32, test_float64};
#define RUNS ((int)(sizeof runs / sizeof runs[0]))

/* One run of each dtype for every kind, with and without NaN and ties. */
static void each_case(int64_t n, int64_t step) {
  for (int t = 0; t < RUNS; t++)
    for (int k = 0; k < KINDS; k++) {
      runs[t](n, step, (kind)k, 0, 0);
      runs[t](n, step, (kind)k, 0, 1);
      runs[t](n, step, (kind)k, 1 + (int)rnd(3), (int)rnd(2));
    }
}

static void test_short_runs(void) {
  static const int64_t steps[] = {1, 2, 3, -1, -2};
  for (int64_t n = 1; n <= 300; n++)
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) each_case(n, steps[s]);
}

/* Runs crossing blocks of every element size (4096 one-byte elements a
 * block, 512 eight-byte ones). */
static void test_long_runs(void) {
  static const int64_t lengths[] = {511,  512,  513,  1023, 1024, 1025,  2049,  4095,
                                    4096, 4097, 8191, 8192, 8193, 12289, 20000, 100003};
  static const int64_t steps[] = {1, 2, -1, 5};
  for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) each_case(lengths[i], steps[s]);
}

/* Ascending runs (each block beats the last, each lane its own extreme)
 * with a NaN at every index of the first lanes and around a block edge,
 * alone and after another: the first NaN's index, argmin and argmax. */
static void test_nan_in_ascending(void) {
  enum { N = 1100, FAR = 1030 };
  static float f[N];
  static double d[N];
  for (int64_t at = 0; at < N; at = at < 70 ? at + 1 : at < 1020 ? at + 95 : at + 3) {
    for (int64_t i = 0; i < N; i++) {
      f[i] = (float)i;
      d[i] = (double)i;
    }
    f[at] = NAN;
    d[at] = NAN;
    for (int is_max = 0; is_max < 2; is_max++) {
      CHECK_EQ_INT(dlb_reduce_arg_search(is_max, DLB_FLOAT32, (const char *)f, N, 4), at);
      CHECK_EQ_INT(dlb_reduce_arg_search(is_max, DLB_FLOAT64, (const char *)d, N, 8), at);
    }
    if (at < FAR) { /* a second NaN further on changes nothing */
      f[FAR] = NAN;
      d[FAR] = NAN;
      CHECK_EQ_INT(dlb_reduce_arg_search(1, DLB_FLOAT32, (const char *)f, N, 4), at);
      CHECK_EQ_INT(dlb_reduce_arg_search(1, DLB_FLOAT64, (const char *)d, N, 8), at);
    }
  }
  for (int64_t i = 0; i < N; i++) d[i] = (double)i; /* no NaN: the last, or the first */
  CHECK_EQ_INT(dlb_reduce_arg_search(1, DLB_FLOAT64, (const char *)d, N, 8), N - 1);
  CHECK_EQ_INT(dlb_reduce_arg_search(0, DLB_FLOAT64, (const char *)d, N, 8), 0);
}

/* -0.0 and +0.0 are equal: the first of them wins either way. */
static void test_signed_zeros(void) {
  const float f[] = {-0.0f, 0.0f, -0.0f};
  double d[300];
  CHECK_EQ_INT(dlb_reduce_arg_search(1, DLB_FLOAT32, (const char *)f, 3, 4), 0);
  CHECK_EQ_INT(dlb_reduce_arg_search(0, DLB_FLOAT32, (const char *)f, 3, 4), 0);
  CHECK_EQ_INT(dlb_reduce_arg_search(1, DLB_FLOAT32, (const char *)(f + 1), 2, 4), 0);
  for (int i = 0; i < 300; i++) d[i] = i < 200 ? -1.0 : i % 2 ? 0.0 : -0.0;
  CHECK_EQ_INT(dlb_reduce_arg_search(1, DLB_FLOAT64, (const char *)d, 300, 8), 200);
  for (int i = 0; i < 300; i++) d[i] = i < 201 ? 1.0 : i % 2 ? 0.0 : -0.0;
  CHECK_EQ_INT(dlb_reduce_arg_search(0, DLB_FLOAT64, (const char *)d, 300, 8), 201);
}

/* bool elements are searched as uint8; stride 0 is one element n times. */
static void test_bool_and_stride0(void) {
  uint8_t b[5000] = {0};
  float nan = NAN, one = 1;
  b[4097] = b[4999] = 1;
  CHECK_EQ_INT(dlb_reduce_arg_search(1, DLB_BOOL, (const char *)b, 5000, 1), 4097);
  CHECK_EQ_INT(dlb_reduce_arg_search(0, DLB_BOOL, (const char *)b, 5000, 1), 0);
  CHECK_EQ_INT(dlb_reduce_arg_search(1, DLB_FLOAT32, (const char *)&nan, INT64_MAX, 0), 0);
  CHECK_EQ_INT(dlb_reduce_arg_search(0, DLB_FLOAT32, (const char *)&one, INT64_MAX, 0), 0);
}

/* The row updates (argmin/argmax along an outer dim) of rows x[k] of w
 * columns against a reference walking each column. */
static void test_row_updates(void) {
  enum { ROWS = 40, W = 37 };
  double x[ROWS][W], best[W], want_best[W];
  int64_t index[W], want[W];
  for (int is_max = 0; is_max < 2; is_max++) {
    dlb_loop update = dlb_reduce_arg_update_loop(is_max, DLB_FLOAT64);
    for (int k = 0; k < ROWS; k++)
      for (int j = 0; j < W; j++)
        x[k][j] = rnd(13) == 0 ? NAN : rnd(9) == 0 ? -0.0 : (double)rnd(4);
    for (int j = 0; j < W; j++) {
      best[j] = want_best[j] = x[0][j];
      index[j] = want[j] = 0;
    }
    for (int64_t k = 1; k < ROWS; k++) {
      char *data[3] = {(char *)best, (char *)index, (char *)x[k]};
      const int64_t steps[3] = {8, 8, 8};
      CHECK_EQ_INT(update(data, steps, W, &k), 0);
      for (int j = 0; j < W; j++) {
        double v = x[k][j], b = want_best[j];
        if (b == b && (v != v || (is_max ? v > b : v < b))) {
          want_best[j] = v;
          want[j] = k;
        }
      }
    }
    for (int j = 0; j < W; j++) CHECK_EQ_INT(index[j], want[j]);
  }
}

int main(void) {
  const char *seed = getenv("ARGSEARCH_SEED");
  if (seed) rng_state = strtoull(seed, NULL, 10) | 1;
  test_short_runs();
  test_long_runs();
  test_nan_in_ascending();
  test_signed_zeros();
  test_bool_and_stride0();
  test_row_updates();
  return check_done("test_argsearch");
}
