/* test_dtype.c -- dtype table, float16/bfloat16 rounding, scalar store/load, casts. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/dtype.h"
#include "backends/cpu/half_runs.h"
#include "fixtures.h"

static double dbl(uint64_t bits) {
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

static uint64_t bits_of(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

/* ------------------------------------------------------------------------ */

static void test_table(void) {
  static const char *const names[DLB_DTYPE_COUNT] = {
      "bool",   "int8",    "int16",    "int32",   "int64",   "uint8",     "uint16",    "uint32",
      "uint64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"};
  static const size_t sizes[DLB_DTYPE_COUNT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  static const int codes[DLB_DTYPE_COUNT] = {6, 0, 0, 0, 0, 1, 1, 1, 1, 2, 4, 2, 2, 5, 5};
  static const int bits[DLB_DTYPE_COUNT] = {8,  8,  16, 32, 64, 8,  16, 32,
                                            64, 16, 16, 32, 64, 64, 128};
  for (int t = 0; t < DLB_DTYPE_COUNT; t++) {
    const dlb_dtype_info *info = dlb_dtype_get((dlb_dtype)t);
    CHECK_EQ_STR(info->name, names[t]);
    CHECK_EQ_INT(info->itemsize, sizes[t]);
    CHECK_EQ_INT(info->dl_code, codes[t]);
    CHECK_EQ_INT(info->dl_bits, bits[t]);
    dlb_dtype out = DLB_DTYPE_COUNT;
    CHECK_EQ_INT(dlb_dtype_from_name(names[t], strlen(names[t]), &out), 0);
    CHECK_EQ_INT(out, t);
    /* not NUL-terminated: the name followed by junk, with len */
    char buf[32];
    snprintf(buf, sizeof buf, "%sXYZ", names[t]);
    out = DLB_DTYPE_COUNT;
    CHECK_EQ_INT(dlb_dtype_from_name(buf, strlen(names[t]), &out), 0);
    CHECK_EQ_INT(out, t);
    CHECK_EQ_INT(dlb_dtype_from_name(buf, strlen(names[t]) + 1, &out), -1);

    DLDataType dl = dlb_dtype_to_dl((dlb_dtype)t);
    CHECK_EQ_INT(dl.code, codes[t]);
    CHECK_EQ_INT(dl.bits, bits[t]);
    CHECK_EQ_INT(dl.lanes, 1);
    out = DLB_DTYPE_COUNT;
    CHECK_EQ_INT(dlb_dtype_from_dl(dl, &out), 0);
    CHECK_EQ_INT(out, t);
    dl.lanes = 4;
    CHECK_EQ_INT(dlb_dtype_from_dl(dl, &out), -1);
    dl.lanes = 0;
    CHECK_EQ_INT(dlb_dtype_from_dl(dl, &out), -1);
  }
  CHECK_EQ_INT(dlb_dtype_get(DLB_BOOL)->kind, DLB_KIND_BOOL);
  CHECK_EQ_INT(dlb_dtype_get(DLB_INT32)->kind, DLB_KIND_INT);
  CHECK_EQ_INT(dlb_dtype_get(DLB_UINT32)->kind, DLB_KIND_UINT);
  CHECK_EQ_INT(dlb_dtype_get(DLB_BFLOAT16)->kind, DLB_KIND_FLOAT);
  CHECK_EQ_INT(dlb_dtype_get(DLB_COMPLEX64)->kind, DLB_KIND_COMPLEX);

  dlb_dtype out = DLB_INT8;
  const char *bad[] = {"",       "float",  "int",  "Int64",  "float64 ", "complex",
                       "double", "int128", "uint", "bfloat", "boolean"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK_EQ_INT(dlb_dtype_from_name(bad[i], strlen(bad[i]), &out), -1);
  CHECK_EQ_INT(dlb_dtype_from_name("int6", 4, &out), -1);
  CHECK_EQ_INT(out, DLB_INT8); /* untouched */

  DLDataType dl = {kDLFloat, 8, 1};
  CHECK_EQ_INT(dlb_dtype_from_dl(dl, &out), -1);
  dl.code = kDLUInt;
  dl.bits = 1;
  CHECK_EQ_INT(dlb_dtype_from_dl(dl, &out), -1);
  dl.code = kDLBool;
  dl.bits = 1;
  CHECK_EQ_INT(dlb_dtype_from_dl(dl, &out), -1);
  dl.code = kDLOpaqueHandle;
  dl.bits = 64;
  CHECK_EQ_INT(dlb_dtype_from_dl(dl, &out), -1);
  dl.code = kDLComplex;
  dl.bits = 32;
  CHECK_EQ_INT(dlb_dtype_from_dl(dl, &out), -1);
}

/* ------------------------------------------------------------------------ */

/* The float16 reference: the compiler's _Float16 (GCC; clang only from 15 on
 * x86-64), else an exact one: |x| scaled by its float16 ulp, 2^q, rounds to an
 * integer r, ties to even (nearbyint, default rounding mode); the bits are then
 * ((q + 25) << 10) + r - 1024, r < 1024 (subnormal) only when q is -24. */
#ifdef __FLT16_MANT_DIG__
static uint16_t ref_f16(double x) {
  volatile double vx = x;
  _Float16 h = (_Float16)vx;
  uint16_t b;
  memcpy(&b, &h, 2);
  return b;
}

static double ref_f16_to_double(uint16_t bits) {
  _Float16 g;
  memcpy(&g, &bits, 2);
  return (double)g;
}
#else
static uint16_t ref_f16(double x) {
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double ax = fabs(x), r;
  int e, q;
  if (isnan(x)) return sign | 0x7e00;
  if (ax >= 65520.0) return sign | 0x7c00; /* 65504 + half an ulp and up */
  if (ax == 0) return sign;
  frexp(ax, &e); /* ax in [2^(e-1), 2^e) */
  q = e - 11 < -24 ? -24 : e - 11;
  r = nearbyint(ldexp(ax, -q)); /* ldexp is exact here */
  return (uint16_t)(sign | (((q + 25) << 10) + (int)r - 1024));
}

static double ref_f16_to_double(uint16_t bits) {
  int e = bits >> 10 & 31, m = bits & 1023;
  double v = e == 31 ? INFINITY : e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
  return bits & 0x8000 ? -v : v;
}
#endif

static int f16_is_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); }

static int f16_failures;

static void check_f16(double x) {
  uint16_t got = dlb_float16_from_double(x), want = ref_f16(x);
  int ok = f16_is_nan(want) ? f16_is_nan(got) && (got & 0x8000) == (want & 0x8000) : got == want;
  if (!ok && f16_failures++ < 10) fprintf(stderr, "float16(%a) = %04x, want %04x\n", x, got, want);
  CHECK(ok);
}

static void test_float16(void) {
  /* every pattern round-trips */
  int bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    double d = dlb_float16_to_double((uint16_t)h);
    uint16_t back = dlb_float16_from_double(d);
    if (f16_is_nan((uint16_t)h)) {
      if (!isnan(d) || !f16_is_nan(back) || (back & 0x8000) != (h & 0x8000)) bad++;
    } else if (back != h) {
      bad++;
    }
    /* and to_double agrees with the reference's widening */
    if (!f16_is_nan((uint16_t)h) && bits_of(ref_f16_to_double((uint16_t)h)) != bits_of(d)) bad++;
  }
  CHECK_EQ_INT(bad, 0);

  /* exact values */
  CHECK_EQ_INT(dlb_float16_from_double(1.0), 0x3c00);
  CHECK_EQ_INT(dlb_float16_from_double(-2.0), 0xc000);
  CHECK_EQ_INT(dlb_float16_from_double(65504.0), 0x7bff);
  CHECK_EQ_INT(dlb_float16_from_double(65519.99), 0x7bff);
  CHECK_EQ_INT(dlb_float16_from_double(65520.0), 0x7c00);
  CHECK_EQ_INT(dlb_float16_from_double(-65520.0), 0xfc00);
  CHECK_EQ_INT(dlb_float16_from_double(1e300), 0x7c00);
  CHECK_EQ_INT(dlb_float16_from_double(INFINITY), 0x7c00);
  CHECK_EQ_INT(dlb_float16_from_double(-INFINITY), 0xfc00);
  CHECK_EQ_INT(dlb_float16_from_double(0x1p-24), 0x0001);
  CHECK_EQ_INT(dlb_float16_from_double(0x1p-25), 0x0000);
  CHECK_EQ_INT(dlb_float16_from_double(-0x1p-25), 0x8000);
  CHECK_EQ_INT(dlb_float16_from_double(0x1p-25 + 0x1p-60), 0x0001);
  CHECK_EQ_INT(dlb_float16_from_double(0x1.8p-24), 0x0002);         /* tie 1.5 -> 2 (even) */
  CHECK_EQ_INT(dlb_float16_from_double(0x1p-14), 0x0400);           /* smallest normal */
  CHECK_EQ_INT(dlb_float16_from_double(0x1p-14 - 0x1p-25), 0x0400); /* rounds up to normal */
  CHECK_EQ_INT(dlb_float16_from_double(0.0), 0x0000);
  CHECK_EQ_INT(dlb_float16_from_double(-0.0), 0x8000);
  CHECK_EQ_INT(dlb_float16_from_double(1e-300), 0x0000);
  CHECK_EQ_INT(dlb_float16_from_double(-4.9e-324), 0x8000);
  CHECK_EQ_INT(dlb_float16_from_double(1.0 + 0x1p-11), 0x3c00);           /* tie -> even */
  CHECK_EQ_INT(dlb_float16_from_double(1.0 + 3 * 0x1p-11), 0x3c02);       /* tie -> even */
  CHECK_EQ_INT(dlb_float16_from_double(1.0 + 0x1p-11 + 0x1p-40), 0x3c01); /* not via float */
  CHECK_EQ_INT(dlb_float16_from_double(1.0 + 0x1p-11 + 0x1p-52), 0x3c01);
  CHECK(f16_is_nan(dlb_float16_from_double(NAN)));
  CHECK_EQ_INT(dlb_float16_from_double(-NAN) & 0x8000, 0x8000);
  CHECK(isnan(dlb_float16_to_double(0x7e00)));
  CHECK(isnan(dlb_float16_to_double(0x7c01)));
  CHECK(dlb_float16_to_double(0x8000) == 0.0 && signbit(dlb_float16_to_double(0x8000)));
  CHECK(dlb_float16_to_double(0x0001) == 0x1p-24);
  CHECK(dlb_float16_to_double(0x7bff) == 65504.0);

  /* edge cases against the reference: every tie and its neighbours, both signs */
  for (uint32_t h = 0; h < 0x7c00; h++) {
    double a = dlb_float16_to_double((uint16_t)h);
    double b = dlb_float16_to_double((uint16_t)(h + 1)); /* 0x7c00 is inf: 65520 tie */
    double mid = h + 1 == 0x7c00 ? 65520.0 : (a + b) / 2;
    double cands[] = {mid, nextafter(mid, 0), nextafter(mid, INFINITY), a, nextafter(a, INFINITY)};
    for (size_t i = 0; i < 5; i++) {
      check_f16(cands[i]);
      check_f16(-cands[i]);
    }
  }
  const double edges[] = {0.0,          -0.0,
                          65504.0,      65520.0,
                          65519.999999, 0x1p-24,
                          0x1p-25,      0x1p-25 * (1 + 0x1p-52),
                          0x1p-26,      0x1p16,
                          1e300,        -1e300,
                          INFINITY,     -INFINITY,
                          NAN,          -NAN,
                          4.9e-324,     2.2250738585072014e-308};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) check_f16(edges[i]);

  /* random doubles: anywhere, in half range, and near ties with sticky bits */
  for (int i = 0; i < 1000000; i++) {
    uint64_t r = rng();
    double x;
    switch (i & 3) {
      case 0: x = dbl(r); break;
      case 1: { /* exponent in [-30, 17] */
        uint64_t e = (uint64_t)(1023 - 30 + (int)((r >> 52) % 48));
        x = dbl((r & 0x800fffffffffffffull) | (e << 52));
        break;
      }
      case 2: { /* a half tie pattern plus a random low perturbation */
        uint64_t e = (uint64_t)(1023 - 26 + (int)((r >> 52) % 44));
        uint64_t m = (r & 0xffc0000000000ull) | (1ull << 41); /* tie bit below the 10 bits */
        if (r & 1) m |= (rng() & ((1ull << 41) - 1)) >> (r >> 1 & 31);
        if (r & 2) m -= 1;
        x = dbl(((r & 1ull << 63)) | (e << 52) | (m & 0xfffffffffffffull));
        break;
      }
      default: x = (double)(int64_t)(r % 200000) - 100000.0 + (double)(rng() % 1024) / 1024.0;
    }
    check_f16(x);
  }
}

/* ------------------------------------------------------------------------ */

/* The classic reference: RNE from float32 bits (exact for float32 inputs). */
static uint16_t bf16_ref_from_float(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffff)) return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

/* An independent exact reference for doubles in the normal bfloat16 range:
 * truncate to 8 significant bits, compare the remainder with half an ulp. */
static uint16_t bf16_ref_normal(double x) {
  double ax = fabs(x);
  int e;
  frexp(ax, &e); /* ax in [2^(e-1), 2^e) */
  double ulp = ldexp(1.0, e - 1 - 7);
  double lo = floor(ax / ulp) * ulp; /* exact: power-of-two scaling */
  double rem = ax - lo;              /* exact */
  double r = lo;
  if (rem > ulp / 2 || (rem == ulp / 2 && fmod(lo / ulp, 2.0) == 1.0)) r = lo + ulp;
  float f = (float)r; /* r has <= 8 significant bits (or is 2^128 -> inf) */
  if (r >= 0x1p128) f = INFINITY;
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u >> 16) | (x < 0 ? 0x8000 : 0));
}

static void test_bfloat16(void) {
  int bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    double d = dlb_bfloat16_to_double((uint16_t)h);
    uint16_t back = dlb_bfloat16_from_double(d);
    int nan = (h & 0x7f80) == 0x7f80 && (h & 0x7f);
    if (nan) {
      if (!isnan(d) || (back & 0x7f80) != 0x7f80 || !(back & 0x7f) ||
          (back & 0x8000) != (h & 0x8000))
        bad++;
    } else {
      if (back != h) bad++;
      uint32_t fb = h << 16;
      float f;
      memcpy(&f, &fb, 4);
      if ((double)f != d && !(d == 0 && f == 0)) bad++;
    }
  }
  CHECK_EQ_INT(bad, 0);

  CHECK_EQ_INT(dlb_bfloat16_from_double(1.0), 0x3f80);
  CHECK_EQ_INT(dlb_bfloat16_from_double(1.0 + 0x1p-8), 0x3f80);           /* tie -> even */
  CHECK_EQ_INT(dlb_bfloat16_from_double(1.0 + 3 * 0x1p-8), 0x3f82);       /* tie -> even (up) */
  CHECK_EQ_INT(dlb_bfloat16_from_double(1.0 + 0x1p-8 + 0x1p-40), 0x3f81); /* not via float */
  CHECK_EQ_INT(dlb_bfloat16_from_double(1.0 + 0x1p-8 + 0x1p-52), 0x3f81);
  CHECK_EQ_INT(dlb_bfloat16_from_double(1.0 + 0x1p-8 - 0x1p-52), 0x3f80);
  CHECK_EQ_INT(dlb_bfloat16_from_double(-1.0 - 0x1p-8 - 0x1p-40), 0xbf81);
  CHECK_EQ_INT(dlb_bfloat16_from_double(3.0e38), 0x7f62);
  CHECK_EQ_INT(dlb_bfloat16_from_double(0x1.fep127), 0x7f7f); /* max */
  CHECK_EQ_INT(dlb_bfloat16_from_double(0x1.ffp127), 0x7f80); /* tie -> inf */
  CHECK_EQ_INT(dlb_bfloat16_from_double(0x1.fefffffffffffp127), 0x7f7f);
  CHECK_EQ_INT(dlb_bfloat16_from_double(1e300), 0x7f80);
  CHECK_EQ_INT(dlb_bfloat16_from_double(-1e300), 0xff80);
  CHECK_EQ_INT(dlb_bfloat16_from_double(INFINITY), 0x7f80);
  CHECK_EQ_INT(dlb_bfloat16_from_double(0x1p-133), 0x0001); /* smallest subnormal */
  CHECK_EQ_INT(dlb_bfloat16_from_double(0x1p-134), 0x0000); /* tie -> 0 */
  CHECK_EQ_INT(dlb_bfloat16_from_double(0x1p-134 + 0x1p-180), 0x0001);
  CHECK_EQ_INT(dlb_bfloat16_from_double(-0.0), 0x8000);
  CHECK_EQ_INT(dlb_bfloat16_from_double(1e-300), 0x0000);
  uint16_t n = dlb_bfloat16_from_double(NAN);
  CHECK((n & 0x7f80) == 0x7f80 && (n & 0x7f));
  CHECK_EQ_INT(dlb_bfloat16_from_double(-NAN) & 0x8000, 0x8000);

  /* float32 inputs: the bit trick is exact */
  int mism = 0;
  for (int i = 0; i < 1000000; i++) {
    uint32_t u = (uint32_t)rng();
    if (i & 1) u = (u & 0xffff0000u) | 0x8000u | (i & 2 ? 0 : (u & 0xff)); /* ties and near */
    float f;
    memcpy(&f, &u, 4);
    uint16_t got = dlb_bfloat16_from_double((double)f), want = bf16_ref_from_float(f);
    if (isnan(f)) {
      if ((got & 0x7fc0) != 0x7fc0 || (got & 0x8000) != (want & 0x8000)) mism++;
    } else if (got != want) {
      if (mism++ < 10) fprintf(stderr, "bfloat16(%a) = %04x, want %04x\n", (double)f, got, want);
    }
  }
  CHECK_EQ_INT(mism, 0);

  /* doubles that are not float32: the exact reference */
  mism = 0;
  for (int i = 0; i < 1000000; i++) {
    uint64_t r = rng();
    uint64_t e = (uint64_t)(1023 - 126 + (int)((r >> 52) % 254)); /* normal bf16 exponents */
    uint64_t m = r & 0xfffffffffffffull;
    if (i & 1) { /* tie bit below the 7 stored bits, sticky bits sometimes */
      m = (m & 0xfe00000000000ull) | (1ull << 44);
      if (i & 2) m |= 1ull << (r % 44);
      if (i & 4) m -= 1;
    }
    double x = dbl((r & 1ull << 63) | (e << 52) | m);
    uint16_t got = dlb_bfloat16_from_double(x), want = bf16_ref_normal(x);
    if (got != want && mism++ < 10)
      fprintf(stderr, "bfloat16(%a) = %04x, want %04x\n", x, got, want);
  }
  CHECK_EQ_INT(mism, 0);
}

/* ------------------------------------------------------------------------ */

static dlb_status store(dlb_dtype t, dlb_scalar v, unsigned char *buf, dlb_error *err) {
  return dlb_scalar_store(t, buf, &v, err);
}

/* Stores v into t and loads it back. */
static dlb_scalar roundtrip(dlb_dtype t, dlb_scalar v, dlb_status *st) {
  unsigned char buf[17];
  dlb_error err;
  dlb_scalar out;
  memset(&out, 0, sizeof out);
  *st = dlb_scalar_store(t, buf + 1, &v, &err); /* unaligned on purpose */
  if (*st == DLB_OK) dlb_scalar_load(t, buf + 1, &out);
  return out;
}

#define CHECK_VALUE_ERR(T_, V_, M_)                                                                \
  do {                                                                                             \
    unsigned char buf_[16];                                                                        \
    dlb_error err_;                                                                                \
    memset(&err_, 0, sizeof err_);                                                                 \
    memset(buf_, 0xab, sizeof buf_);                                                               \
    CHECK_EQ_INT(store(T_, V_, buf_, &err_), DLB_E_VALUE);                                         \
    CHECK_EQ_INT(err_.code, DLB_E_VALUE);                                                          \
    if (M_) CHECK_EQ_STR(err_.message, (const char *)(M_));                                        \
    CHECK_EQ_INT(buf_[0], 0xab);                                                                   \
  } while (0)

#define CHECK_INT_RT(T_, V_, W_)                                                                   \
  do {                                                                                             \
    dlb_status st_;                                                                                \
    dlb_scalar o_ = roundtrip(T_, V_, &st_);                                                       \
    CHECK_EQ_INT(st_, DLB_OK);                                                                     \
    CHECK_EQ_INT(o_.kind, DLB_SCALAR_INT);                                                         \
    CHECK_EQ_INT(o_.v.i, W_);                                                                      \
  } while (0)

#define CHECK_FLOAT_RT(T_, V_, W_)                                                                 \
  do {                                                                                             \
    dlb_status st_;                                                                                \
    dlb_scalar o_ = roundtrip(T_, V_, &st_);                                                       \
    CHECK_EQ_INT(st_, DLB_OK);                                                                     \
    CHECK_EQ_INT(o_.kind, DLB_SCALAR_FLOAT);                                                       \
    CHECK(o_.v.f == (W_));                                                                         \
  } while (0)

static void test_scalar(void) {
  dlb_status st;
  dlb_scalar o;
  const char *null_msg = NULL;

  /* integers round-trip at their bounds */
  static const dlb_dtype ints[] = {DLB_INT8,  DLB_INT16,  DLB_INT32, DLB_INT64,
                                   DLB_UINT8, DLB_UINT16, DLB_UINT32};
  static const int64_t lo[] = {-128, -32768, -2147483647 - 1, INT64_MIN, 0, 0, 0};
  static const int64_t hi[] = {127, 32767, 2147483647, INT64_MAX, 255, 65535, 4294967295};
  for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
    CHECK_INT_RT(ints[k], s_int(lo[k]), lo[k]);
    CHECK_INT_RT(ints[k], s_int(hi[k]), hi[k]);
    CHECK_INT_RT(ints[k], s_int(7), 7);
    CHECK_INT_RT(ints[k], s_bool(1), 1);
    CHECK_INT_RT(ints[k], s_bool(0), 0);
    CHECK_INT_RT(ints[k], s_float(42.0), 42);
    CHECK_INT_RT(ints[k], s_float(-0.0), 0);
    CHECK_INT_RT(ints[k], s_complex(5.0, 0.0), 5);
    CHECK_INT_RT(ints[k], s_uint(9), 9);
    CHECK_VALUE_ERR(ints[k], s_float(2.5), null_msg);
    CHECK_VALUE_ERR(ints[k], s_float(NAN), null_msg);
    CHECK_VALUE_ERR(ints[k], s_float(INFINITY), null_msg);
    CHECK_VALUE_ERR(ints[k], s_complex(1.0, 2.0), null_msg);
    if (lo[k] > INT64_MIN) CHECK_VALUE_ERR(ints[k], s_int(lo[k] - 1), null_msg);
    if (hi[k] < INT64_MAX) {
      CHECK_VALUE_ERR(ints[k], s_int(hi[k] + 1), null_msg);
      CHECK_VALUE_ERR(ints[k], s_float((double)hi[k] + 1), null_msg);
      CHECK_INT_RT(ints[k], s_float((double)hi[k]), hi[k]);
    }
    CHECK_INT_RT(ints[k], s_float((double)lo[k]), lo[k]);
    if (lo[k] > INT64_MIN) CHECK_VALUE_ERR(ints[k], s_float((double)lo[k] - 1), null_msg);
    CHECK_VALUE_ERR(ints[k], s_uint(UINT64_MAX), null_msg);
  }
  CHECK_VALUE_ERR(DLB_UINT8, s_int(300), "300 does not fit in uint8");
  CHECK_VALUE_ERR(DLB_UINT8, s_int(-1), "-1 does not fit in uint8");
  CHECK_VALUE_ERR(DLB_UINT8, s_float(300.0), "300 does not fit in uint8");
  CHECK_VALUE_ERR(DLB_INT32, s_float(2.5), "2.5 is not an integer (int32)");
  CHECK_VALUE_ERR(DLB_INT64, s_float(NAN), "nan cannot be stored in int64");
  CHECK_VALUE_ERR(DLB_INT64, s_float(INFINITY), "inf cannot be stored in int64");
  CHECK_VALUE_ERR(DLB_INT64, s_float(-INFINITY), "-inf cannot be stored in int64");
  CHECK_VALUE_ERR(DLB_INT64, s_float(0x1p63), "9223372036854775808 does not fit in int64");
  CHECK_VALUE_ERR(DLB_INT64, s_uint(UINT64_C(1) << 63),
                  "9223372036854775808 does not fit in int64");
  CHECK_VALUE_ERR(DLB_UINT64, s_float(0x1p64), null_msg);
  CHECK_VALUE_ERR(DLB_UINT64, s_int(-1), null_msg);
  CHECK_VALUE_ERR(DLB_UINT64, s_float(-1.0), null_msg);
  CHECK_VALUE_ERR(DLB_INT32, s_complex(1.0, 2.0), null_msg);
  CHECK_VALUE_ERR(DLB_INT32, s_complex(2.5, 0.0), "2.5 is not an integer (int32)");
  CHECK_INT_RT(DLB_INT64, s_float(-0x1p63), INT64_MIN);
  CHECK_INT_RT(DLB_INT64, s_int(INT64_MAX), INT64_MAX);
  CHECK_INT_RT(DLB_INT64, s_float(0x1p63 - 1024), INT64_MAX - 1023);
  /* uint64 */
  o = roundtrip(DLB_UINT64, s_uint(UINT64_MAX), &st);
  CHECK_EQ_INT(st, DLB_OK);
  CHECK_EQ_INT(o.kind, DLB_SCALAR_UINT);
  CHECK(o.v.u == UINT64_MAX);
  o = roundtrip(DLB_UINT64, s_float(0x1p64 - 2048), &st);
  CHECK_EQ_INT(st, DLB_OK);
  CHECK_EQ_INT(o.kind, DLB_SCALAR_UINT);
  CHECK(o.v.u == UINT64_MAX - 2047);
  CHECK_INT_RT(DLB_UINT64, s_int(INT64_MAX), INT64_MAX);
  CHECK_INT_RT(DLB_UINT64, s_uint((uint64_t)INT64_MAX), INT64_MAX);

  /* bool */
  for (int b = 0; b < 2; b++) {
    dlb_scalar in[] = {s_bool(b), s_int(b), s_uint((uint64_t)b), s_float(b), s_complex(b, 0)};
    for (size_t k = 0; k < 5; k++) {
      o = roundtrip(DLB_BOOL, in[k], &st);
      CHECK_EQ_INT(st, DLB_OK);
      CHECK_EQ_INT(o.kind, DLB_SCALAR_BOOL);
      CHECK_EQ_INT(o.v.b, b);
    }
  }
  o = roundtrip(DLB_BOOL, s_float(-0.0), &st);
  CHECK_EQ_INT(st, DLB_OK);
  CHECK_EQ_INT(o.v.b, 0);
  CHECK_VALUE_ERR(DLB_BOOL, s_int(2), null_msg);
  CHECK_VALUE_ERR(DLB_BOOL, s_int(-1), null_msg);
  CHECK_VALUE_ERR(DLB_BOOL, s_float(0.5), null_msg);
  CHECK_VALUE_ERR(DLB_BOOL, s_float(NAN), null_msg);
  CHECK_VALUE_ERR(DLB_BOOL, s_complex(1, 1), null_msg);
  CHECK_VALUE_ERR(DLB_BOOL, s_uint(UINT64_MAX), null_msg);

  /* floats */
  static const dlb_dtype floats[] = {DLB_FLOAT16, DLB_BFLOAT16, DLB_FLOAT32, DLB_FLOAT64};
  for (size_t k = 0; k < 4; k++) {
    dlb_dtype t = floats[k];
    CHECK_FLOAT_RT(t, s_float(1.5), 1.5);
    CHECK_FLOAT_RT(t, s_float(-2.0), -2.0);
    CHECK_FLOAT_RT(t, s_int(-3), -3.0);
    if (t != DLB_FLOAT16) CHECK_FLOAT_RT(t, s_uint(UINT64_C(1) << 63), 0x1p63);
    CHECK_FLOAT_RT(t, s_bool(1), 1.0);
    CHECK_FLOAT_RT(t, s_complex(0.25, 0.0), 0.25);
    CHECK_FLOAT_RT(t, s_float(INFINITY), INFINITY);
    CHECK_FLOAT_RT(t, s_float(-INFINITY), -INFINITY);
    o = roundtrip(t, s_float(NAN), &st);
    CHECK_EQ_INT(st, DLB_OK);
    CHECK(isnan(o.v.f));
    o = roundtrip(t, s_float(-0.0), &st);
    CHECK(o.v.f == 0 && signbit(o.v.f));
    CHECK_VALUE_ERR(t, s_complex(1.0, 2.0), null_msg);
    CHECK_VALUE_ERR(t, s_complex(1.0, NAN), null_msg);
  }
  /* s_uint(2^63) into float16 is a finite value that overflows: must be an error */
  CHECK_VALUE_ERR(DLB_FLOAT16, s_uint(UINT64_C(1) << 63), "9223372036854775808 overflows float16");
  CHECK_VALUE_ERR(DLB_FLOAT32, s_float(1e300), "1e+300 overflows float32");
  CHECK_VALUE_ERR(DLB_FLOAT32, s_float(-1e300), "-1e+300 overflows float32");
  CHECK_VALUE_ERR(DLB_FLOAT16, s_float(65520.0), "65520 overflows float16");
  CHECK_VALUE_ERR(DLB_FLOAT16, s_int(100000), "100000 overflows float16");
  CHECK_VALUE_ERR(DLB_BFLOAT16, s_float(1e39), "1e+39 overflows bfloat16");
  CHECK_VALUE_ERR(DLB_FLOAT64, s_complex(1.0, 2.0),
                  "(1+2j) has a nonzero imaginary part and cannot be stored in float64");
  CHECK_FLOAT_RT(DLB_FLOAT64, s_complex(1.0, 0.0), 1.0);
  CHECK_FLOAT_RT(DLB_FLOAT16, s_float(65504.0), 65504.0);
  CHECK_FLOAT_RT(DLB_FLOAT16, s_float(65519.0), 65504.0);
  CHECK_FLOAT_RT(DLB_FLOAT32, s_float(0.1), (double)0.1f);
  CHECK_FLOAT_RT(DLB_FLOAT32, s_float(3.4028235e38), (double)3.4028235e38f);
  CHECK_VALUE_ERR(DLB_FLOAT32, s_float(3.4028235677973366e38),
                  null_msg); /* FLT_MAX + ulp/2: tie -> inf */
  CHECK_FLOAT_RT(DLB_FLOAT64, s_int(INT64_MAX), 0x1p63);
  CHECK_FLOAT_RT(DLB_FLOAT64, s_int((INT64_C(1) << 53) + 1), 0x1p53); /* tie -> even */
  CHECK_FLOAT_RT(DLB_FLOAT64, s_uint(UINT64_MAX), 0x1p64);
  /* int64 -> float32 / bfloat16 rounds once, not via double */
  CHECK_FLOAT_RT(DLB_FLOAT32, s_int((INT64_C(1) << 62) + (INT64_C(1) << 38) + 1), 0x1p62 + 0x1p39);
  CHECK_FLOAT_RT(DLB_BFLOAT16, s_int((INT64_C(1) << 62) + (INT64_C(1) << 54) + 1), 0x1p62 + 0x1p55);
  CHECK_FLOAT_RT(DLB_BFLOAT16, s_int(-((INT64_C(1) << 62) + (INT64_C(1) << 54) + 1)),
                 -(0x1p62 + 0x1p55));
  CHECK_FLOAT_RT(DLB_BFLOAT16, s_uint((UINT64_C(1) << 63) + (UINT64_C(1) << 55) + 1),
                 0x1p63 + 0x1p56);
  CHECK_FLOAT_RT(DLB_FLOAT16, s_int(2049), 2048.0);
  CHECK_FLOAT_RT(DLB_FLOAT16, s_int(2051), 2052.0);
  CHECK_FLOAT_RT(DLB_FLOAT32, s_int(INT64_MIN), -0x1p63);
  CHECK_FLOAT_RT(DLB_BFLOAT16, s_int(INT64_MIN), -0x1p63);

  /* complex */
  o = roundtrip(DLB_COMPLEX128, s_complex(1.5, -2.25), &st);
  CHECK_EQ_INT(st, DLB_OK);
  CHECK_EQ_INT(o.kind, DLB_SCALAR_COMPLEX);
  CHECK(o.v.c.re == 1.5 && o.v.c.im == -2.25);
  o = roundtrip(DLB_COMPLEX64, s_complex(0.1, 1e-3), &st);
  CHECK_EQ_INT(st, DLB_OK);
  CHECK(o.v.c.re == (double)0.1f && o.v.c.im == (double)1e-3f);
  o = roundtrip(DLB_COMPLEX64, s_int(7), &st);
  CHECK(st == DLB_OK && o.kind == DLB_SCALAR_COMPLEX && o.v.c.re == 7.0 && o.v.c.im == 0.0);
  o = roundtrip(DLB_COMPLEX128, s_bool(1), &st);
  CHECK(st == DLB_OK && o.v.c.re == 1.0 && o.v.c.im == 0.0);
  o = roundtrip(DLB_COMPLEX128, s_uint(UINT64_MAX), &st);
  CHECK(st == DLB_OK && o.v.c.re == 0x1p64);
  o = roundtrip(DLB_COMPLEX64, s_complex(INFINITY, NAN), &st);
  CHECK(st == DLB_OK && isinf(o.v.c.re) && isnan(o.v.c.im));
  CHECK_VALUE_ERR(DLB_COMPLEX64, s_complex(1.0, 1e300), null_msg);
  CHECK_VALUE_ERR(DLB_COMPLEX64, s_float(1e300), "1e+300 overflows complex64");
  o = roundtrip(DLB_COMPLEX128, s_complex(1e300, -1e300), &st);
  CHECK(st == DLB_OK && o.v.c.re == 1e300 && o.v.c.im == -1e300);

  /* load: uint64 kinds, and every dtype from raw bytes */
  {
    uint64_t u = (uint64_t)INT64_MAX;
    dlb_scalar_load(DLB_UINT64, &u, &o);
    CHECK_EQ_INT(o.kind, DLB_SCALAR_INT);
    u++;
    dlb_scalar_load(DLB_UINT64, &u, &o);
    CHECK_EQ_INT(o.kind, DLB_SCALAR_UINT);
    CHECK(o.v.u == UINT64_C(1) << 63);
    uint8_t b = 2;
    dlb_scalar_load(DLB_BOOL, &b, &o);
    CHECK(o.kind == DLB_SCALAR_BOOL && o.v.b == 1);
    int8_t i8 = -5;
    dlb_scalar_load(DLB_INT8, &i8, &o);
    CHECK(o.kind == DLB_SCALAR_INT && o.v.i == -5);
    uint32_t u32 = 4000000000u;
    dlb_scalar_load(DLB_UINT32, &u32, &o);
    CHECK(o.kind == DLB_SCALAR_INT && o.v.i == 4000000000);
    uint16_t h = 0x3555;
    dlb_scalar_load(DLB_FLOAT16, &h, &o);
    CHECK(o.kind == DLB_SCALAR_FLOAT && o.v.f == dlb_float16_to_double(0x3555));
    h = 0x3f81;
    dlb_scalar_load(DLB_BFLOAT16, &h, &o);
    CHECK(o.kind == DLB_SCALAR_FLOAT && o.v.f == 1.0 + 0x1p-7);
  }

  /* error with err == NULL is fine */
  {
    unsigned char buf[8];
    dlb_scalar v = s_int(300);
    CHECK_EQ_INT(dlb_scalar_store(DLB_UINT8, buf, &v, NULL), DLB_E_VALUE);
  }
}

/* ------------------------------------------------------------------------ */

static void test_cast(void) {
  dlb_error err;
  memset(&err, 0, sizeof err);

  { /* wraparound */
    int64_t s[] = {300, -1, 256, -129, INT64_MIN};
    uint8_t d8[5];
    CHECK_EQ_INT(dlb_cast(DLB_UINT8, d8, 1, DLB_INT64, s, 8, 5, &err), DLB_OK);
    CHECK_EQ_INT(d8[0], 44);
    CHECK_EQ_INT(d8[1], 255);
    CHECK_EQ_INT(d8[2], 0);
    CHECK_EQ_INT(d8[3], 127);
    CHECK_EQ_INT(d8[4], 0);
    uint16_t d16[5];
    CHECK_EQ_INT(dlb_cast(DLB_UINT16, d16, 2, DLB_INT64, s, 8, 5, &err), DLB_OK);
    CHECK_EQ_INT(d16[1], 65535);
    int8_t di8[5];
    CHECK_EQ_INT(dlb_cast(DLB_INT8, di8, 1, DLB_INT64, s, 8, 5, &err), DLB_OK);
    CHECK_EQ_INT(di8[0], 44);
    CHECK_EQ_INT(di8[1], -1);
    CHECK_EQ_INT(di8[3], 127);
    uint64_t u64[2] = {UINT64_MAX, UINT64_C(1) << 63};
    int64_t i64[2];
    CHECK_EQ_INT(dlb_cast(DLB_INT64, i64, 8, DLB_UINT64, u64, 8, 2, &err), DLB_OK);
    CHECK_EQ_INT(i64[0], -1);
    CHECK(i64[1] == INT64_MIN);
    int32_t i32[2];
    CHECK_EQ_INT(dlb_cast(DLB_INT32, i32, 4, DLB_UINT64, u64, 8, 2, &err), DLB_OK);
    CHECK_EQ_INT(i32[0], -1);
    CHECK_EQ_INT(i32[1], 0);
    int8_t n8[2] = {-1, -128};
    uint64_t w[2];
    CHECK_EQ_INT(dlb_cast(DLB_UINT64, w, 8, DLB_INT8, n8, 1, 2, &err), DLB_OK);
    CHECK(w[0] == UINT64_MAX && w[1] == UINT64_MAX - 127);
  }
  { /* float -> int truncates; bad values fail */
    double s[] = {-2.7, 2.7, -0.5, 1e9};
    int32_t d[4];
    CHECK_EQ_INT(dlb_cast(DLB_INT32, d, 4, DLB_FLOAT64, s, 8, 4, &err), DLB_OK);
    CHECK_EQ_INT(d[0], -2);
    CHECK_EQ_INT(d[1], 2);
    CHECK_EQ_INT(d[2], 0);
    CHECK_EQ_INT(d[3], 1000000000);
    double bad[] = {1.0, NAN};
    CHECK_EQ_INT(dlb_cast(DLB_INT32, d, 4, DLB_FLOAT64, bad, 8, 2, &err), DLB_E_VALUE);
    CHECK_EQ_INT(err.code, DLB_E_VALUE);
    CHECK_EQ_STR(err.message, "cannot cast nan to int32");
    CHECK_EQ_INT(d[0], 1); /* elements before the bad one were written */
    double big = 1e10;
    CHECK_EQ_INT(dlb_cast(DLB_INT32, d, 4, DLB_FLOAT64, &big, 8, 1, &err), DLB_E_VALUE);
    CHECK_EQ_STR(err.message, "cannot cast 10000000000 to int32");
    double inf = -INFINITY;
    int64_t d64;
    CHECK_EQ_INT(dlb_cast(DLB_INT64, &d64, 8, DLB_FLOAT64, &inf, 8, 1, &err), DLB_E_VALUE);
    CHECK_EQ_STR(err.message, "cannot cast -inf to int64");
    double edge[] = {-0x1p63, 0x1p63 - 1024, -9.9};
    int64_t e64[3];
    CHECK_EQ_INT(dlb_cast(DLB_INT64, e64, 8, DLB_FLOAT64, edge, 8, 3, &err), DLB_OK);
    CHECK(e64[0] == INT64_MIN && e64[1] == INT64_MAX - 1023 && e64[2] == -9);
    double over = 0x1p63;
    CHECK_EQ_INT(dlb_cast(DLB_INT64, &d64, 8, DLB_FLOAT64, &over, 8, 1, &err), DLB_E_VALUE);
    uint8_t u8;
    double m1 = -1.0, m05 = -0.99, b255 = 255.9, b256 = 256.0, i8lo = -128.9;
    CHECK_EQ_INT(dlb_cast(DLB_UINT8, &u8, 1, DLB_FLOAT64, &m1, 8, 1, &err), DLB_E_VALUE);
    CHECK_EQ_INT(dlb_cast(DLB_UINT8, &u8, 1, DLB_FLOAT64, &m05, 8, 1, &err), DLB_OK);
    CHECK_EQ_INT(u8, 0);
    CHECK_EQ_INT(dlb_cast(DLB_UINT8, &u8, 1, DLB_FLOAT64, &b255, 8, 1, &err), DLB_OK);
    CHECK_EQ_INT(u8, 255);
    CHECK_EQ_INT(dlb_cast(DLB_UINT8, &u8, 1, DLB_FLOAT64, &b256, 8, 1, &err), DLB_E_VALUE);
    int8_t i8;
    CHECK_EQ_INT(dlb_cast(DLB_INT8, &i8, 1, DLB_FLOAT64, &i8lo, 8, 1, &err), DLB_OK);
    CHECK_EQ_INT(i8, -128);
    float fs[] = {3.9f, -3.9f, 4294967296.0f};
    uint32_t u32[3];
    CHECK_EQ_INT(dlb_cast(DLB_UINT32, u32, 4, DLB_FLOAT32, fs, 4, 2, &err), DLB_E_VALUE);
    CHECK_EQ_INT(u32[0], 3);
    CHECK_EQ_INT(dlb_cast(DLB_UINT32, u32, 4, DLB_FLOAT32, fs + 2, 4, 1, &err), DLB_E_VALUE);
    uint64_t u64;
    double u64max = 0x1p64 - 2048;
    CHECK_EQ_INT(dlb_cast(DLB_UINT64, &u64, 8, DLB_FLOAT64, &u64max, 8, 1, &err), DLB_OK);
    CHECK(u64 == UINT64_MAX - 2047);
    /* float16 (generic path) */
    uint16_t h[2] = {0x4170 /* 2.71875 */, 0x7e00 /* nan */};
    int16_t i16[2];
    CHECK_EQ_INT(dlb_cast(DLB_INT16, i16, 2, DLB_FLOAT16, h, 2, 1, &err), DLB_OK);
    CHECK_EQ_INT(i16[0], 2);
    CHECK_EQ_INT(dlb_cast(DLB_INT16, i16, 2, DLB_FLOAT16, h, 2, 2, &err), DLB_E_VALUE);
    CHECK_EQ_STR(err.message, "cannot cast nan to int16");
  }
  { /* float narrowing: overflow to inf, no error; rounding */
    double s[] = {1e300, -1e300, 0.1, NAN};
    float f[4];
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT32, f, 4, DLB_FLOAT64, s, 8, 4, &err), DLB_OK);
    CHECK(isinf(f[0]) && f[0] > 0);
    CHECK(isinf(f[1]) && f[1] < 0);
    CHECK(f[2] == 0.1f);
    CHECK(isnan(f[3]));
    uint16_t h[4];
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT16, h, 2, DLB_FLOAT64, s, 8, 4, &err), DLB_OK);
    CHECK_EQ_INT(h[0], 0x7c00);
    CHECK_EQ_INT(h[1], 0xfc00);
    CHECK_EQ_INT(h[2], dlb_float16_from_double(0.1));
    CHECK(f16_is_nan(h[3]));
    CHECK_EQ_INT(dlb_cast(DLB_BFLOAT16, h, 2, DLB_FLOAT32, f, 4, 3, &err), DLB_OK);
    CHECK_EQ_INT(h[0], 0x7f80);
    CHECK_EQ_INT(h[2], dlb_bfloat16_from_double((double)0.1f));
    uint16_t fh[2] = {0x3c00, 0x7bff};
    uint16_t bh[2];
    CHECK_EQ_INT(dlb_cast(DLB_BFLOAT16, bh, 2, DLB_FLOAT16, fh, 2, 2, &err), DLB_OK);
    CHECK_EQ_INT(bh[0], 0x3f80);
    CHECK_EQ_INT(bh[1], dlb_bfloat16_from_double(65504.0));
    double back[2];
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT64, back, 8, DLB_BFLOAT16, bh, 2, 2, &err), DLB_OK);
    CHECK(back[0] == 1.0 && back[1] == 65536.0);
    float fb[2];
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT32, fb, 4, DLB_FLOAT16, fh, 2, 2, &err), DLB_OK);
    CHECK(fb[0] == 1.0f && fb[1] == 65504.0f);
    double big = 1e5;
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT16, h, 2, DLB_FLOAT64, &big, 8, 1, &err), DLB_OK);
    CHECK_EQ_INT(h[0], 0x7c00);
  }
  { /* int -> float */
    int64_t s[] = {INT64_MAX, (INT64_C(1) << 53) + 1, -3,
                   (INT64_C(1) << 62) + (INT64_C(1) << 38) + 1};
    double d[4];
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT64, d, 8, DLB_INT64, s, 8, 4, &err), DLB_OK);
    CHECK(d[0] == 0x1p63 && d[1] == 0x1p53 && d[2] == -3.0);
    float f[4];
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT32, f, 4, DLB_INT64, s, 8, 4, &err), DLB_OK);
    CHECK(f[3] == 0x1p62f + 0x1p39f);
    uint64_t u[3] = {UINT64_MAX, (UINT64_C(1) << 63) + (UINT64_C(1) << 39) + 1,
                     (UINT64_C(1) << 63) + (UINT64_C(1) << 55) + 1};
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT64, d, 8, DLB_UINT64, u, 8, 3, &err), DLB_OK);
    CHECK(d[0] == 0x1p64);
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT32, f, 4, DLB_UINT64, u, 8, 3, &err), DLB_OK);
    CHECK(f[0] == 0x1p64f && f[1] == 0x1p63f + 0x1p40f);
    uint16_t h[3];
    CHECK_EQ_INT(dlb_cast(DLB_BFLOAT16, h, 2, DLB_UINT64, u, 8, 3, &err), DLB_OK);
    CHECK_EQ_INT(h[2], dlb_bfloat16_from_double(0x1p63 + 0x1p56));
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT16, h, 2, DLB_UINT64, u, 8, 1, &err), DLB_OK);
    CHECK_EQ_INT(h[0], 0x7c00); /* overflow in a cast is inf, not an error */
    int32_t i32[2] = {2049, -2051};
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT16, h, 2, DLB_INT32, i32, 4, 2, &err), DLB_OK);
    CHECK(dlb_float16_to_double(h[0]) == 2048.0 && dlb_float16_to_double(h[1]) == -2052.0);
  }
  { /* complex */
    double c[4] = {1.5, 2.5, -0.0, 0.0};
    double d[2];
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT64, d, 8, DLB_COMPLEX128, c, 16, 2, &err), DLB_OK);
    CHECK(d[0] == 1.5 && d[1] == 0.0);
    int32_t i[2];
    CHECK_EQ_INT(dlb_cast(DLB_INT32, i, 4, DLB_COMPLEX128, c, 16, 2, &err), DLB_OK);
    CHECK(i[0] == 1 && i[1] == 0);
    uint8_t b[2];
    CHECK_EQ_INT(dlb_cast(DLB_BOOL, b, 1, DLB_COMPLEX128, c, 16, 2, &err), DLB_OK);
    CHECK(b[0] == 1 && b[1] == 0);
    double c2[2] = {0.0, 3.0};
    CHECK_EQ_INT(dlb_cast(DLB_BOOL, b, 1, DLB_COMPLEX128, c2, 16, 1, &err), DLB_OK);
    CHECK_EQ_INT(b[0], 1);
    float c64[4];
    CHECK_EQ_INT(dlb_cast(DLB_COMPLEX64, c64, 8, DLB_COMPLEX128, c, 16, 2, &err), DLB_OK);
    CHECK(c64[0] == 1.5f && c64[1] == 2.5f && c64[2] == 0.0f && signbit(c64[2]));
    double c128[4];
    CHECK_EQ_INT(dlb_cast(DLB_COMPLEX128, c128, 16, DLB_COMPLEX64, c64, 8, 2, &err), DLB_OK);
    CHECK(c128[0] == 1.5 && c128[1] == 2.5);
    int64_t iv[2] = {7, -8};
    CHECK_EQ_INT(dlb_cast(DLB_COMPLEX64, c64, 8, DLB_INT64, iv, 8, 2, &err), DLB_OK);
    CHECK(c64[0] == 7.0f && c64[1] == 0.0f && c64[2] == -8.0f && c64[3] == 0.0f);
    uint16_t h[2];
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT16, h, 2, DLB_COMPLEX64, c64, 8, 2, &err), DLB_OK);
    CHECK(h[0] == 0x4700 && h[1] == 0xc800);
    double cn[2] = {NAN, 0.0};
    int64_t x;
    CHECK_EQ_INT(dlb_cast(DLB_INT64, &x, 8, DLB_COMPLEX128, cn, 16, 1, &err), DLB_E_VALUE);
  }
  { /* long complex runs (the vectorised loops): the real parts, truncated to
     * each integer type and rounded to the other float type; an out-of-range
     * real part deep in the run fails naming it; a huge imaginary part does not */
    enum { RUN = 1001 };
    static double c128[2 * RUN], c128_every_other[4 * RUN];
    static float c64[2 * RUN];
    static const dlb_dtype ints[] = {DLB_INT8,  DLB_UINT8,  DLB_INT16, DLB_UINT16,
                                     DLB_INT32, DLB_UINT32, DLB_INT64, DLB_UINT64};
    int64_t out[RUN];
    for (int k = 0; k < RUN; k++) {
      c128[2 * k] = (double)(k % 120) + 0.75;
      c128[2 * k + 1] = k % 3 ? 1e300 : -0.0;
      c64[2 * k] = (float)(k % 120) + 0.25f;
      c64[2 * k + 1] = -1e30f;
    }
    for (size_t t = 0; t < sizeof ints / sizeof ints[0]; t++) {
      const size_t item = dlb_dtype_get(ints[t])->itemsize;
      int wrong = 0;
      for (int src = 0; src < 2; src++) {
        CHECK_EQ_INT(dlb_cast(ints[t], out, (ptrdiff_t)item, src ? DLB_COMPLEX64 : DLB_COMPLEX128,
                              src ? (const void *)c64 : (const void *)c128, src ? 8 : 16, RUN,
                              &err),
                     DLB_OK);
        for (int k = 0; k < RUN; k++) {
          uint64_t got = 0;
          memcpy(&got, (const char *)out + (size_t)k * item, item);
          wrong += got != (uint64_t)(k % 120);
        }
      }
      CHECK_EQ_INT(wrong, 0);
    }
    /* boundaries: a fraction past the last value truncates into range */
    static const struct {
      dlb_dtype to;
      double re;
      int64_t want;
    } edge[] = {{DLB_INT8, -0.75, 0},
                {DLB_INT8, 127.9, 127},
                {DLB_INT8, -128.9, -128},
                {DLB_UINT8, 255.9, 255},
                {DLB_UINT8, -0.9, 0},
                {DLB_INT16, -32768.9, -32768},
                {DLB_INT32, -2147483648.5, INT32_MIN},
                {DLB_INT32, 2147483647.9, INT32_MAX}};
    for (size_t e = 0; e < sizeof edge / sizeof edge[0]; e++) {
      const size_t item = dlb_dtype_get(edge[e].to)->itemsize;
      int64_t got = 0;
      c128[2 * 600] = edge[e].re;
      CHECK_EQ_INT(dlb_cast(edge[e].to, out, (ptrdiff_t)item, DLB_COMPLEX128, c128, 16, RUN, &err),
                   DLB_OK);
      memcpy(&got, (const char *)out + 600 * item, item);
      if (item < 8 && dlb_dtype_get(edge[e].to)->kind == DLB_KIND_INT && got >> (8 * item - 1))
        got -= (int64_t)1 << (8 * item); /* sign-extend */
      CHECK(got == edge[e].want);
      got = 0; /* and from float64, one element */
      CHECK_EQ_INT(
          dlb_cast(edge[e].to, &got, (ptrdiff_t)item, DLB_FLOAT64, &edge[e].re, 8, 1, &err),
          DLB_OK);
      if (item < 8 && dlb_dtype_get(edge[e].to)->kind == DLB_KIND_INT && got >> (8 * item - 1))
        got -= (int64_t)1 << (8 * item);
      CHECK(got == edge[e].want);
    }
    c128[2 * 600] = (double)(600 % 120) + 0.75;
    {
      double below = -2147483649.0;
      float f_min = -2147483648.0f;
      int32_t i32;
      CHECK_EQ_INT(dlb_cast(DLB_INT32, &i32, 4, DLB_FLOAT64, &below, 8, 1, &err), DLB_E_VALUE);
      CHECK_EQ_INT(dlb_cast(DLB_INT32, &i32, 4, DLB_FLOAT32, &f_min, 4, 1, &err), DLB_OK);
      CHECK(i32 == INT32_MIN);
    }
    /* the first bad real part is named, not a later or larger one */
    c128[2 * 777] = 128.0;
    c128[2 * 900] = -500.0;
    CHECK_EQ_INT(dlb_cast(DLB_INT8, out, 1, DLB_COMPLEX128, c128, 16, RUN, &err), DLB_E_VALUE);
    CHECK_EQ_STR(err.message, "cannot cast 128 to int8");
    c128[2 * 900] = (double)(900 % 120) + 0.75;
    c64[2 * 500] = -1.0f;
    CHECK_EQ_INT(dlb_cast(DLB_UINT16, out, 2, DLB_COMPLEX64, c64, 8, RUN, &err), DLB_E_VALUE);
    CHECK_EQ_STR(err.message, "cannot cast -1 to uint16");
    float f32[RUN];
    double f64[RUN];
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT32, f32, 4, DLB_COMPLEX128, c128, 16, RUN, &err), DLB_OK);
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT64, f64, 8, DLB_COMPLEX64, c64, 8, RUN, &err), DLB_OK);
    CHECK(f32[3] == 3.75f && f32[777] == 128.0f && f64[3] == 3.25 && f64[500] == -1.0);
    {
      int wrong = 0;
      double f64_same[RUN];
      float f32_same[RUN];
      CHECK_EQ_INT(dlb_cast(DLB_FLOAT64, f64_same, 8, DLB_COMPLEX128, c128, 16, RUN, &err), DLB_OK);
      CHECK_EQ_INT(dlb_cast(DLB_FLOAT32, f32_same, 4, DLB_COMPLEX64, c64, 8, RUN, &err), DLB_OK);
      for (int k = 0; k < RUN; k++)
        wrong += f64_same[k] != c128[2 * k] || f32_same[k] != c64[2 * k] ||
                 f32[k] != (float)c128[2 * k] || f64[k] != (double)c64[2 * k];
      CHECK_EQ_INT(wrong, 0);
    }
    /* every other complex element into a contiguous run, both ways */
    for (int k = 0; k < 4 * RUN; k++) c128_every_other[k] = k;
    float c64_out[2 * RUN];
    CHECK_EQ_INT(
        dlb_cast(DLB_COMPLEX64, c64_out, 8, DLB_COMPLEX128, c128_every_other, 32, RUN, &err),
        DLB_OK);
    CHECK(c64_out[0] == 0.0f && c64_out[1] == 1.0f && c64_out[2 * 1000] == 4000.0f &&
          c64_out[2 * 1000 + 1] == 4001.0f);
    CHECK_EQ_INT(dlb_cast(DLB_COMPLEX128, c128, 16, DLB_COMPLEX64, c64_out, 16, RUN / 2, &err),
                 DLB_OK);
    CHECK(c128[0] == 0.0 && c128[1] == 1.0 && c128[2] == 8.0 && c128[3] == 9.0 &&
          c128[2 * 499] == 499.0 * 8 && c128[2 * 499 + 1] == 499.0 * 8 + 1);
  }
  { /* to and from bool */
    double s[] = {0.0, -0.0, 0.5, NAN, -3.0};
    uint8_t b[5];
    CHECK_EQ_INT(dlb_cast(DLB_BOOL, b, 1, DLB_FLOAT64, s, 8, 5, &err), DLB_OK);
    CHECK(b[0] == 0 && b[1] == 0 && b[2] == 1 && b[3] == 1 && b[4] == 1);
    int16_t i[3] = {0, 256, -1};
    CHECK_EQ_INT(dlb_cast(DLB_BOOL, b, 1, DLB_INT16, i, 2, 3, &err), DLB_OK);
    CHECK(b[0] == 0 && b[1] == 1 && b[2] == 1);
    uint8_t bs[3] = {1, 0, 7};
    double d[3];
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT64, d, 8, DLB_BOOL, bs, 1, 3, &err), DLB_OK);
    CHECK(d[0] == 1.0 && d[1] == 0.0 && d[2] == 1.0);
    int64_t l[3];
    CHECK_EQ_INT(dlb_cast(DLB_INT64, l, 8, DLB_BOOL, bs, 1, 3, &err), DLB_OK);
    CHECK(l[0] == 1 && l[1] == 0 && l[2] == 1);
    double c[6];
    CHECK_EQ_INT(dlb_cast(DLB_COMPLEX128, c, 16, DLB_BOOL, bs, 1, 3, &err), DLB_OK);
    CHECK(c[0] == 1.0 && c[1] == 0.0 && c[2] == 0.0);
  }
  { /* strides: strided, negative, zero, unaligned, n = 0 */
    double s[6] = {1.5, -1, 2.5, -1, 3.5, -1};
    int32_t d[3];
    CHECK_EQ_INT(dlb_cast(DLB_INT32, d, 4, DLB_FLOAT64, s, 16, 3, &err), DLB_OK);
    CHECK(d[0] == 1 && d[1] == 2 && d[2] == 3);
    CHECK_EQ_INT(dlb_cast(DLB_INT32, d, 4, DLB_FLOAT64, s + 4, -16, 3, &err), DLB_OK);
    CHECK(d[0] == 3 && d[1] == 2 && d[2] == 1);
    int64_t r[3];
    CHECK_EQ_INT(dlb_cast(DLB_INT64, r + 2, -8, DLB_FLOAT64, s, 16, 3, &err), DLB_OK);
    CHECK(r[0] == 3 && r[1] == 2 && r[2] == 1);
    CHECK_EQ_INT(dlb_cast(DLB_INT32, d, 4, DLB_FLOAT64, s + 2, 0, 3, &err), DLB_OK);
    CHECK(d[0] == 2 && d[1] == 2 && d[2] == 2);
    /* same dtype, strided and reversed */
    double out[3];
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT64, out + 2, -8, DLB_FLOAT64, s, 16, 3, &err), DLB_OK);
    CHECK(out[0] == 3.5 && out[1] == 2.5 && out[2] == 1.5);
    double c[4] = {1, 2, 3, 4}, cr[4];
    CHECK_EQ_INT(dlb_cast(DLB_COMPLEX128, cr + 2, -16, DLB_COMPLEX128, c, 16, 2, &err), DLB_OK);
    CHECK(cr[0] == 3 && cr[1] == 4 && cr[2] == 1 && cr[3] == 2);
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT64, out, 8, DLB_FLOAT64, s, 8, 3, &err), DLB_OK);
    CHECK(out[0] == 1.5 && out[1] == -1 && out[2] == 2.5);
    /* unaligned buffers */
    unsigned char ub[1 + 8 * 4], ud[1 + 8 * 4];
    double vals[4] = {1.0, -2.0, 3.0, 1e300};
    memcpy(ub + 1, vals, sizeof vals);
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT32, ud + 1, 4, DLB_FLOAT64, ub + 1, 8, 4, &err), DLB_OK);
    float fv[4];
    memcpy(fv, ud + 1, sizeof fv);
    CHECK(fv[0] == 1.0f && fv[1] == -2.0f && fv[2] == 3.0f && isinf(fv[3]));
    CHECK_EQ_INT(dlb_cast(DLB_INT64, ud + 1, 8, DLB_FLOAT64, ub + 1, 8, 3, &err), DLB_OK);
    int64_t iv[2];
    memcpy(iv, ud + 1, sizeof iv);
    CHECK(iv[0] == 1 && iv[1] == -2);
    /* n = 0 touches nothing (NULL pointers are fine) */
    CHECK_EQ_INT(dlb_cast(DLB_INT8, NULL, 1, DLB_FLOAT64, NULL, 8, 0, &err), DLB_OK);
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT64, NULL, 8, DLB_FLOAT64, NULL, 8, 0, &err), DLB_OK);
  }
  { /* every pair of dtypes agrees with a scalar round trip of small values */
    int bad = 0;
    for (int st = 0; st < DLB_DTYPE_COUNT; st++) {
      for (int dt = 0; dt < DLB_DTYPE_COUNT; dt++) {
        for (int v = 0; v <= 5; v++) {
          unsigned char sbuf[16], dbuf[16];
          dlb_scalar in = s_int(v), out;
          if (st == DLB_BOOL) in = s_bool(v & 1);
          if (dlb_scalar_store((dlb_dtype)st, sbuf, &in, NULL) != DLB_OK) {
            bad++;
            continue;
          }
          if (dlb_cast((dlb_dtype)dt, dbuf, 16, (dlb_dtype)st, sbuf, 16, 1, NULL) != DLB_OK) {
            bad++;
            continue;
          }
          dlb_scalar_load((dlb_dtype)dt, dbuf, &out);
          double want = st == DLB_BOOL ? (v & 1) : v;
          if (dt == DLB_BOOL) want = want != 0;
          double got = out.kind == DLB_SCALAR_INT       ? (double)out.v.i
                       : out.kind == DLB_SCALAR_BOOL    ? out.v.b
                       : out.kind == DLB_SCALAR_FLOAT   ? out.v.f
                       : out.kind == DLB_SCALAR_COMPLEX ? out.v.c.re
                                                        : -1;
          if (got != want) {
            if (bad++ < 10)
              fprintf(stderr, "cast %s -> %s of %d gave %g\n", dlb_dtype_get((dlb_dtype)st)->name,
                      dlb_dtype_get((dlb_dtype)dt)->name, v, got);
          }
        }
      }
    }
    CHECK_EQ_INT(bad, 0);
  }
  { /* int -> int: every src/dst pair against uint64 arithmetic */
    static const dlb_dtype it[] = {DLB_INT8,  DLB_INT16,  DLB_INT32,  DLB_INT64,
                                   DLB_UINT8, DLB_UINT16, DLB_UINT32, DLB_UINT64};
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
      dlb_dtype st = it[rng() % 8], dt = it[rng() % 8];
      uint64_t raw = rng();
      unsigned char sbuf[8], dbuf[8];
      memcpy(sbuf, &raw, 8); /* little endian: the low bytes are the value */
      dlb_scalar in;
      dlb_scalar_load(st, sbuf, &in);
      uint64_t v = in.kind == DLB_SCALAR_UINT ? in.v.u : (uint64_t)in.v.i;
      if (dlb_cast(dt, dbuf, 8, st, sbuf, 8, 1, NULL) != DLB_OK) {
        bad++;
        continue;
      }
      uint64_t got = 0;
      memcpy(&got, dbuf, dlb_dtype_get(dt)->itemsize);
      size_t bits = dlb_dtype_get(dt)->itemsize * 8;
      uint64_t want = bits == 64 ? v : v & ((UINT64_C(1) << bits) - 1);
      if (got != want) bad++;
    }
    CHECK_EQ_INT(bad, 0);
  }
}

/* ------------------------------------------------------------------------ */

/* Casts to and from float16 over whole runs (F16C where the CPU has it,
 * float64 through round-to-odd float32) give what the one-element
 * conversion gives, for every source dtype, at any alignment. */
/* A double with a random sign and a float16-ish magnitude, often on or next
 * to a rounding tie (the cases a double rounding would get wrong). */
static double random_half_edge(void) {
  uint64_t r = rng();
  double base = dlb_float16_to_double((uint16_t)(r & 0xffff));
  double ulp = ldexp(1.0, (int)((r >> 16) % 40) - 35);
  switch ((r >> 24) % 6) {
    case 0: return dbl(rng()); /* any bits at all */
    case 1: return base;
    case 2: return base + ulp;
    case 3: return base - ulp;
    case 4: return -(ldexp(1.0, -25) * (double)((r >> 32) % 7)); /* subnormal ties */
    default: return base + ldexp(base, -11) + ldexp(base, -40);  /* just past a tie */
  }
}

static int same_half(uint16_t got, uint16_t want) {
  return f16_is_nan(want) ? f16_is_nan(got) && (got & 0x8000) == (want & 0x8000) : got == want;
}

/* What one element of type t at p becomes in float16, the slow way. */
static uint16_t half_of(dlb_dtype t, const void *p) {
  dlb_scalar v;
  dlb_scalar_load(t, p, &v);
  if (v.kind == DLB_SCALAR_FLOAT) return dlb_float16_from_double(v.v.f);
  if (v.kind == DLB_SCALAR_INT) /* beyond 2^53 double rounds, but float16 is inf long before */
    return dlb_float16_from_double((double)v.v.i);
  return dlb_float16_from_double((double)v.v.u);
}

static void test_half_runs(void) {
  enum { N = 4099 }; /* not a multiple of the chunk or vector widths */
  static double d64[N];
  static float f32[N];
  static int64_t i64[N];
  static uint64_t u64[N];
  static int32_t i32[N];
  static unsigned char out[N * 2 + 1], in[N * 8 + 1];
  dlb_error err;
  int bad = 0;
  memset(&err, 0, sizeof err);
  for (int round = 0; round < 50; round++) {
    for (int k = 0; k < N; k++) {
      d64[k] = random_half_edge();
      f32[k] = (float)random_half_edge();
      i64[k] = (int64_t)rng() >> (rng() % 64);
      u64[k] = rng() >> (rng() % 64);
      i32[k] = (int32_t)(rng() >> (32 + rng() % 32));
    }
    d64[0] = 0x1p-25 + 0x1p-60;
    d64[1] = 1.0 + 0x1p-11 + 0x1p-40;
    d64[2] = 65520.0;
    d64[3] = 1e300;
    d64[4] = NAN;
    d64[5] = -0.0;
    d64[6] = 65519.99;
    {
      const struct {
        dlb_dtype type;
        const void *data;
        size_t item;
      } srcs[] = {{DLB_FLOAT64, d64, 8},
                  {DLB_FLOAT32, f32, 4},
                  {DLB_INT64, i64, 8},
                  {DLB_UINT64, u64, 8},
                  {DLB_INT32, i32, 4}};
      for (size_t s = 0; s < sizeof srcs / sizeof srcs[0]; s++) {
        const int shift = round % 2; /* odd addresses every other round */
        memcpy(in + shift, srcs[s].data, N * srcs[s].item);
        CHECK_EQ_INT(dlb_cast(DLB_FLOAT16, out + shift, 2, srcs[s].type, in + shift,
                              (ptrdiff_t)srcs[s].item, N, &err),
                     DLB_OK);
        for (int k = 0; k < N; k++) {
          uint16_t got, want = half_of(srcs[s].type, (const char *)srcs[s].data + k * srcs[s].item);
          memcpy(&got, out + shift + 2 * k, 2);
          if (!same_half(got, want) && bad++ < 10)
            fprintf(stderr, "half run from %s [%d]: %04x, want %04x\n",
                    dlb_dtype_get(srcs[s].type)->name, k, got, want);
        }
      }
    }
  }
  { /* strided runs, short (converted one by one) and long (buffered) */
    static double sd[80];
    static uint16_t sh[80], back16[80];
    static float sf[80];
    for (int n = 1; n <= 40; n++) {
      for (int k = 0; k < 80; k++) sd[k] = random_half_edge();
      memset(sh, 0xff, sizeof sh);
      CHECK_EQ_INT(dlb_cast(DLB_FLOAT16, sh, 4, DLB_FLOAT64, sd, 16, (size_t)n, &err), DLB_OK);
      CHECK_EQ_INT(dlb_cast(DLB_FLOAT32, sf, 8, DLB_FLOAT16, sh, 4, (size_t)n, &err), DLB_OK);
      CHECK_EQ_INT(dlb_cast(DLB_FLOAT16, back16, 4, DLB_FLOAT32, sf, 8, (size_t)n, &err), DLB_OK);
      for (int k = 0; k < n; k++) {
        uint16_t want = dlb_float16_from_double(sd[2 * k]);
        if ((!same_half(sh[2 * k], want) || !same_half(back16[2 * k], want)) && bad++ < 10)
          fprintf(stderr, "strided half run of %d [%d]: %04x %04x, want %04x\n", n, k, sh[2 * k],
                  back16[2 * k], want);
        if (sh[2 * k + 1] != 0xffff && bad++ < 10) /* the gaps are left alone */
          fprintf(stderr, "strided half run of %d wrote a gap at %d\n", n, 2 * k + 1);
      }
    }
  }
  { /* the portable runs (what CPUs without F16C run) agree with the dispatched ones */
    static uint16_t all[65536], h1[65536], h2[65536];
    static float f1[65536], f2[65536], fs[4096];
    for (uint32_t k = 0; k < 65536; k++) all[k] = (uint16_t)k;
    dlb_half_to_float_run(f1, all, 65536);
    dlb_half_to_float_run_portable(f2, all, 65536);
    for (uint32_t k = 0; k < 65536; k++)
      if (memcmp(&f1[k], &f2[k], 4) != 0 && !(isnan(f1[k]) && isnan(f2[k])) && bad++ < 10)
        fprintf(stderr, "portable half %04x widened to %a, F16C path %a\n", (unsigned)k, f2[k],
                f1[k]);
    for (int k = 0; k < 4096; k++) fs[k] = (float)random_half_edge();
    dlb_half_from_float_run(h1, fs, 4096);
    dlb_half_from_float_run_portable(h2, fs, 4096);
    for (int k = 0; k < 4096; k++)
      if (!same_half(h1[k], h2[k]) && bad++ < 10)
        fprintf(stderr, "float %a: portable %04x, F16C path %04x\n", fs[k], h2[k], h1[k]);
  }
  { /* every float16 pattern to float32 and float64, exactly */
    static uint16_t h[65536];
    static float wide32[65536];
    static double wide64[65536];
    for (uint32_t k = 0; k < 65536; k++) h[k] = (uint16_t)k;
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT32, wide32, 4, DLB_FLOAT16, h, 2, 65536, &err), DLB_OK);
    CHECK_EQ_INT(dlb_cast(DLB_FLOAT64, wide64, 8, DLB_FLOAT16, h, 2, 65536, &err), DLB_OK);
    for (uint32_t k = 0; k < 65536; k++) {
      double want = dlb_float16_to_double((uint16_t)k);
      int ok = isnan(want) ? isnan(wide32[k]) && isnan(wide64[k])
                           : bits_of((double)wide32[k]) == bits_of(want) &&
                                 bits_of(wide64[k]) == bits_of(want);
      if (!ok && bad++ < 10) fprintf(stderr, "half %04x widened wrong\n", (unsigned)k);
    }
    { /* to integers (truncated; out of range, inf and NaN are errors) and complex */
      static int32_t to_i32[65536];
      static int8_t to_i8[65536];
      static float c64[2 * 65536];
      static uint16_t finite[65536];
      size_t nfinite = 0;
      for (uint32_t k = 0; k < 65536; k++)
        if (isfinite(dlb_float16_to_double((uint16_t)k))) finite[nfinite++] = (uint16_t)k;
      CHECK_EQ_INT(dlb_cast(DLB_INT32, to_i32, 4, DLB_FLOAT16, finite, 2, nfinite, &err), DLB_OK);
      CHECK_EQ_INT(dlb_cast(DLB_COMPLEX64, c64, 8, DLB_FLOAT16, h, 2, 65536, &err), DLB_OK);
      for (size_t k = 0; k < nfinite; k++)
        if (to_i32[k] != (int32_t)dlb_float16_to_double(finite[k]) && bad++ < 10)
          fprintf(stderr, "half %04x to int32: %d\n", (unsigned)finite[k], (int)to_i32[k]);
      for (uint32_t k = 0; k < 65536; k++) {
        double want = dlb_float16_to_double((uint16_t)k);
        int ok = c64[2 * k + 1] == 0.0f &&
                 (isnan(want) ? isnan(c64[2 * k]) : (double)c64[2 * k] == want);
        if (!ok && bad++ < 10) fprintf(stderr, "half %04x to complex64 wrong\n", (unsigned)k);
      }
      /* 0x5800 is 128: past int8, found after 2000 good elements */
      for (int k = 0; k < 3000; k++) h[k] = k == 2000 ? 0x5800 : 0x3c00;
      CHECK_EQ_INT(dlb_cast(DLB_INT8, to_i8, 1, DLB_FLOAT16, h, 2, 3000, &err), DLB_E_VALUE);
      CHECK_EQ_STR(err.message, "cannot cast 128 to int8");
      h[2000] = 0x7e00; /* NaN */
      CHECK_EQ_INT(dlb_cast(DLB_INT32, to_i32, 4, DLB_FLOAT16, h, 2, 3000, &err), DLB_E_VALUE);
      h[2000] = 0x57f0; /* 127 */
      CHECK_EQ_INT(dlb_cast(DLB_INT8, to_i8, 1, DLB_FLOAT16, h, 2, 3000, &err), DLB_OK);
      CHECK_EQ_INT(to_i8[2000], 127);
      CHECK_EQ_INT(to_i8[2999], 1);
    }
  }
  CHECK_EQ_INT(bad, 0);
}

int main(void) {
  test_table();
  test_float16();
  test_bfloat16();
  test_scalar();
  test_cast();
  test_half_runs();
  return check_done("test_dtype");
}
