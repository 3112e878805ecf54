/* half_runs.c -- float16 <-> float32 over contiguous runs (see half_runs.h). */
#include "half_runs.h"
#include <stdatomic.h>
#include <string.h>
#include "../../core/dtype.h"

/* One element each way, portably (memcpy: the runs need not be aligned). */
static void from_float_one(char *dst, const char *src) {
  float f;
  uint16_t h;
  memcpy(&f, src, sizeof f);
  h = dlb_float16_from_double((double)f);
  memcpy(dst, &h, sizeof h);
}

static void to_float_one(char *dst, const char *src) {
  uint16_t h;
  float f;
  memcpy(&h, src, sizeof h);
  f = (float)dlb_float16_to_double(h);
  memcpy(dst, &f, sizeof f);
}

void dlb_half_from_float_run_portable(void *dst, const void *src, size_t n) {
  for (size_t k = 0; k < n; k++) from_float_one((char *)dst + 2 * k, (const char *)src + 4 * k);
}

void dlb_half_to_float_run_portable(void *dst, const void *src, size_t n) {
  for (size_t k = 0; k < n; k++) to_float_one((char *)dst + 4 * k, (const char *)src + 2 * k);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define HALF_F16C 1

__attribute__((target("avx,f16c"))) static void from_float_f16c(char *dst, const char *src,
                                                                size_t n) {
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps((const float *)(const void *)(src + 4 * k)),
                                _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128((__m128i *)(void *)(dst + 2 * k), h);
  }
  for (; k < n; k++) from_float_one(dst + 2 * k, src + 4 * k);
}

__attribute__((target("avx,f16c"))) static void to_float_f16c(char *dst, const char *src,
                                                              size_t n) {
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(src + 2 * k));
    _mm256_storeu_ps((float *)(void *)(dst + 4 * k), _mm256_cvtph_ps(h));
  }
  for (; k < n; k++) to_float_one(dst + 4 * k, src + 2 * k);
}

/* CPUID: F16C and AVX, and the OS saving the YMM registers (XGETBV), which
 * clang 14's __builtin_cpu_supports cannot ask about F16C. */
static int cpu_has_f16c(void) {
  unsigned a, b, c, d, lo, hi;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  if (!(c & bit_F16C) || !(c & bit_AVX) || !(c & bit_OSXSAVE)) return 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  (void)hi;
  return (lo & 6) == 6; /* XMM and YMM state */
}

/* Whether this CPU converts halves in hardware (asked once; threads that
 * race only ask twice). */
static int has_f16c(void) {
  static atomic_int known = -1;
  int k = atomic_load_explicit(&known, memory_order_relaxed);
  if (k < 0) {
    k = cpu_has_f16c();
    atomic_store_explicit(&known, k, memory_order_relaxed);
  }
  return k;
}
#endif

void dlb_half_from_float_run(void *dst, const void *src, size_t n) {
#ifdef HALF_F16C
  if (has_f16c()) {
    from_float_f16c(dst, src, n);
    return;
  }
#endif
  dlb_half_from_float_run_portable(dst, src, n);
}

void dlb_half_to_float_run(void *dst, const void *src, size_t n) {
#ifdef HALF_F16C
  if (has_f16c()) {
    to_float_f16c(dst, src, n);
    return;
  }
#endif
  dlb_half_to_float_run_portable(dst, src, n);
}

/* Unaligned views of the runs (a cast's operands need not be aligned). */
typedef double loose_double __attribute__((aligned(1), may_alias));
typedef uint32_t loose_u32 __attribute__((aligned(1), may_alias));

/* Cloned per CPU level: plain x86-64 has no vector double -> float here. */
DLB_KERNEL_CLONES void dlb_float_round_odd_run(void *dst, const void *src, size_t n) {
  const loose_double *s = src;
  loose_u32 *d = dst;
  /* Branch-free, so it vectorises: round to nearest, step back toward zero
   * where that went away from zero, then mark inexact results odd. NaN stays
   * as it is, overflow becomes FLT_MAX with the bit set (so a float16
   * rounding of it still overflows), underflow the smallest subnormal (which
   * still rounds to a float16 zero). */
  for (size_t k = 0; k < n; k++) {
    const double x = s[k];
    const float f = (float)x;
    const double back = (double)f;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    const uint32_t inexact = (back != x) & (x == x); /* NaN: kept as is */
    const uint32_t away = ((back > x) == (x > 0.0)) & inexact & (x != 0.0);
    d[k] = (bits - away) | inexact;
  }
}
