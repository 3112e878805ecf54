/* dtype.c -- the dtype table, float16/bfloat16 rounding, scalar store/load
 * and element casts (NumPy astype semantics, checked where NumPy is undefined). */
#include "dtype.h"
#include "../backends/cpu/half_runs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The table, in enum order.                                                */

const dlb_dtype_info dlb_dtype_table[DLB_DTYPE_COUNT] = {
    [DLB_BOOL] = {"bool", 1, DLB_KIND_BOOL, kDLBool, 8},
    [DLB_INT8] = {"int8", 1, DLB_KIND_INT, kDLInt, 8},
    [DLB_INT16] = {"int16", 2, DLB_KIND_INT, kDLInt, 16},
    [DLB_INT32] = {"int32", 4, DLB_KIND_INT, kDLInt, 32},
    [DLB_INT64] = {"int64", 8, DLB_KIND_INT, kDLInt, 64},
    [DLB_UINT8] = {"uint8", 1, DLB_KIND_UINT, kDLUInt, 8},
    [DLB_UINT16] = {"uint16", 2, DLB_KIND_UINT, kDLUInt, 16},
    [DLB_UINT32] = {"uint32", 4, DLB_KIND_UINT, kDLUInt, 32},
    [DLB_UINT64] = {"uint64", 8, DLB_KIND_UINT, kDLUInt, 64},
    [DLB_FLOAT16] = {"float16", 2, DLB_KIND_FLOAT, kDLFloat, 16},
    [DLB_BFLOAT16] = {"bfloat16", 2, DLB_KIND_FLOAT, kDLBfloat, 16},
    [DLB_FLOAT32] = {"float32", 4, DLB_KIND_FLOAT, kDLFloat, 32},
    [DLB_FLOAT64] = {"float64", 8, DLB_KIND_FLOAT, kDLFloat, 64},
    [DLB_COMPLEX64] = {"complex64", 8, DLB_KIND_COMPLEX, kDLComplex, 64},
    [DLB_COMPLEX128] = {"complex128", 16, DLB_KIND_COMPLEX, kDLComplex, 128},
};


int dlb_dtype_from_name(const char *name, size_t len, dlb_dtype *out) {
  if (!name) return -1;
  for (int t = 0; t < DLB_DTYPE_COUNT; t++) {
    const char *n = dlb_dtype_table[t].name;
    if (strlen(n) == len && memcmp(n, name, len) == 0) {
      if (out) *out = (dlb_dtype)t;
      return 0;
    }
  }
  return -1;
}

int dlb_dtype_from_dl(DLDataType type, dlb_dtype *out) {
  /* Indexed by DLDataType.code, then log2(bits / 8); -1 where none exists. */
  static const signed char by_code[7][5] = {
      /* Int      */ {DLB_INT8, DLB_INT16, DLB_INT32, DLB_INT64, -1},
      /* UInt     */ {DLB_UINT8, DLB_UINT16, DLB_UINT32, DLB_UINT64, -1},
      /* Float    */ {-1, DLB_FLOAT16, DLB_FLOAT32, DLB_FLOAT64, -1},
      /* Opaque   */ {-1, -1, -1, -1, -1},
      /* Bfloat   */ {-1, DLB_BFLOAT16, -1, -1, -1},
      /* Complex  */ {-1, -1, -1, DLB_COMPLEX64, DLB_COMPLEX128},
      /* Bool     */ {DLB_BOOL, -1, -1, -1, -1},
  };
  int size;
  switch (type.bits) {
  case 8: size = 0; break;
  case 16: size = 1; break;
  case 32: size = 2; break;
  case 64: size = 3; break;
  case 128: size = 4; break;
  default: return -1;
  }
  if (type.lanes != 1 || type.code > 6 || by_code[type.code][size] < 0) return -1;
  if (out) *out = (dlb_dtype)by_code[type.code][size];
  return 0;
}

DLDataType dlb_dtype_to_dl(dlb_dtype dtype) {
  DLDataType t;
  t.code = dlb_dtype_table[dtype].dl_code;
  t.bits = dlb_dtype_table[dtype].dl_bits;
  t.lanes = 1;
  return t;
}

/* ------------------------------------------------------------------------ */
/* float16 / bfloat16.                                                      */
/* Hand-written: no Debian C library rounds double -> binary16/bfloat16     */
/* directly (going through float would round twice).                        */

/* Rounds x to nearest even in a binary format with p stored mantissa bits,
 * exponents emin..emax (bias 1 - emin), a sign bit at 15. */
static uint16_t small_from_double(double x, int p, int emin, int emax) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  const uint32_t sign = (uint32_t)(bits >> 48) & 0x8000u;
  const int e = (int)((bits >> 52) & 0x7ff);
  const uint64_t m = bits & ((UINT64_C(1) << 52) - 1);
  const uint32_t inf = (uint32_t)(emax - emin + 2) << p;
  if (e == 0x7ff) {
    if (m == 0) return (uint16_t)(sign | inf);
    /* NaN: quiet, keep the sign and the top payload bits. */
    return (uint16_t)(sign | inf | (1u << (p - 1)) | (uint32_t)(m >> (52 - p)));
  }
  if (e == 0) return (uint16_t)sign; /* zero or a double subnormal: far below */
  const int E = e - 1023;
  if (E > emax) return (uint16_t)(sign | inf);
  if (E < emin - p - 1) return (uint16_t)sign; /* below half the smallest subnormal */
  const uint64_t M = m | (UINT64_C(1) << 52);
  const int q = (E < emin ? emin : E) - p; /* exponent of the result's last bit */
  const int shift = q - (E - 52);          /* 52 - p .. 53 */
  uint64_t r = M >> shift;
  const uint64_t rem = M & ((UINT64_C(1) << shift) - 1);
  const uint64_t halfway = UINT64_C(1) << (shift - 1);
  if (rem > halfway || (rem == halfway && (r & 1))) r++;
  /* Normal: r carries the implicit bit, so adding it bumps the exponent
   * field by one; a carry out of the mantissa lands on the next binade
   * (or inf) by itself. Subnormal: r is the field. */
  uint32_t out = (uint32_t)r;
  if (E >= emin) out += (uint32_t)(E - emin) << p;
  return (uint16_t)(sign | out);
}

uint16_t dlb_float16_from_double(double x) { return small_from_double(x, 10, -14, 15); }

uint16_t dlb_bfloat16_from_double(double x) { return small_from_double(x, 7, -126, 127); }

double dlb_float16_to_double(uint16_t h) {
  const uint64_t sign = (uint64_t)(h >> 15) << 63;
  const unsigned e = (h >> 10) & 0x1f;
  const uint64_t m = h & 0x3ff;
  uint64_t bits;
  double d;
  if (e == 0) {
    d = (double)m * 0x1p-24;
    return sign ? -d : d;
  }
  if (e == 31)
    bits = sign | (UINT64_C(0x7ff) << 52) | (m << 42) | (m ? UINT64_C(1) << 51 : 0);
  else
    bits = sign | ((uint64_t)(e - 15 + 1023) << 52) | (m << 42);
  memcpy(&d, &bits, sizeof d);
  return d;
}

double dlb_bfloat16_to_double(uint16_t b) {
  if ((b & 0x7f80) == 0x7f80 && (b & 0x7f)) {
    const uint64_t bits = ((uint64_t)(b >> 15) << 63) | (UINT64_C(0x7ff) << 52) |
                          ((uint64_t)(b & 0x7f) << 45) | (UINT64_C(1) << 51);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
  }
  const uint32_t fb = (uint32_t)b << 16;
  float f;
  memcpy(&f, &fb, sizeof f);
  return (double)f;
}

/* ------------------------------------------------------------------------ */
/* Helpers.                                                                 */

/* The integer u as a double rounded to odd (sticky last bit): rounding that
 * double again to 24 bits or fewer gives the correctly rounded result. */
static double u64_to_double_odd(uint64_t u) {
  if (u < (UINT64_C(1) << 53)) return (double)u;
  const int k = 11 - __builtin_clzll(u); /* bits to drop to keep 53 */
  uint64_t t = u >> k;
  if (u & ((UINT64_C(1) << k) - 1)) t |= 1;
  return ldexp((double)t, k);
}

static double i64_to_double_odd(int64_t i) {
  if (i >= 0) return u64_to_double_odd((uint64_t)i);
  return -u64_to_double_odd(UINT64_C(0) - (uint64_t)i);
}

static void put_u64_bits(void *dst, size_t size, uint64_t u) {
  switch (size) {
  case 1: {
    uint8_t x = (uint8_t)u;
    memcpy(dst, &x, 1);
    break;
  }
  case 2: {
    uint16_t x = (uint16_t)u;
    memcpy(dst, &x, 2);
    break;
  }
  case 4: {
    uint32_t x = (uint32_t)u;
    memcpy(dst, &x, 4);
    break;
  }
  default:
    memcpy(dst, &u, 8);
    break;
  }
}

/* Whether the float d, truncated toward zero, fits the integer dtype (false
 * for NaN and inf). All bounds are exact doubles. */
static int float_fits_int(dlb_dtype dt, double d) {
  switch (dt) {
  case DLB_INT8: return d > -129.0 && d < 128.0;
  case DLB_INT16: return d > -32769.0 && d < 32768.0;
  case DLB_INT32: return d > -2147483649.0 && d < 2147483648.0;
  case DLB_INT64: return d >= -0x1p63 && d < 0x1p63;
  case DLB_UINT8: return d > -1.0 && d < 256.0;
  case DLB_UINT16: return d > -1.0 && d < 65536.0;
  case DLB_UINT32: return d > -1.0 && d < 4294967296.0;
  case DLB_UINT64: return d > -1.0 && d < 0x1p64;
  default: return 0;
  }
}

/* The bits of float d (which float_fits_int accepted), truncated. */
static uint64_t float_to_int_bits(dlb_dtype dt, double d) {
  if (dlb_dtype_table[dt].kind == DLB_KIND_INT) return (uint64_t)(int64_t)d;
  return (uint64_t)d;
}

/* Text for d in messages: integers below 1e20 in plain digits, otherwise
 * the shortest "%g" that reads back as d. */
static void fmt_double(char *buf, size_t size, double d) {
  if (isnan(d)) {
    snprintf(buf, size, "nan");
    return;
  }
  if (isinf(d)) {
    snprintf(buf, size, d < 0 ? "-inf" : "inf");
    return;
  }
  if (d == trunc(d) && fabs(d) < 1e20) { /* integral: plain digits */
    snprintf(buf, size, "%.0f", d);
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, size, "%.*g", prec, d);
    if (strtod(buf, NULL) == d) return;
  }
}

static void fmt_scalar(char *buf, size_t size, const dlb_scalar *s) {
  switch (s->kind) {
  case DLB_SCALAR_BOOL: snprintf(buf, size, "%s", s->v.b ? "true" : "false"); break;
  case DLB_SCALAR_INT: snprintf(buf, size, "%lld", (long long)s->v.i); break;
  case DLB_SCALAR_UINT: snprintf(buf, size, "%llu", (unsigned long long)s->v.u); break;
  case DLB_SCALAR_FLOAT: fmt_double(buf, size, s->v.f); break;
  case DLB_SCALAR_COMPLEX: {
    char re[40], im[40];
    fmt_double(re, sizeof re, s->v.c.re);
    fmt_double(im, sizeof im, s->v.c.im);
    snprintf(buf, size, "(%s%s%sj)", re, (im[0] == '-') ? "" : "+", im);
    break;
  }
  default: snprintf(buf, size, "?"); break;
  }
}

/* Writes a real value (kind BOOL/INT/UINT/FLOAT, never COMPLEX) into a float
 * dtype, rounding to nearest even; returns the stored value as a double. */
static double write_real_float(dlb_dtype dt, void *dst, const dlb_scalar *s) {
  double d; /* exact, or rounded to odd for targets narrower than double */
  switch (s->kind) {
  case DLB_SCALAR_BOOL: d = s->v.b ? 1.0 : 0.0; break;
  case DLB_SCALAR_INT: d = dt == DLB_FLOAT64 ? (double)s->v.i : i64_to_double_odd(s->v.i); break;
  case DLB_SCALAR_UINT: d = dt == DLB_FLOAT64 ? (double)s->v.u : u64_to_double_odd(s->v.u); break;
  default: d = s->v.f; break;
  }
  switch (dt) {
  case DLB_FLOAT16: {
    uint16_t h = dlb_float16_from_double(d);
    memcpy(dst, &h, 2);
    return dlb_float16_to_double(h);
  }
  case DLB_BFLOAT16: {
    uint16_t h = dlb_bfloat16_from_double(d);
    memcpy(dst, &h, 2);
    return dlb_bfloat16_to_double(h);
  }
  case DLB_FLOAT32: {
    float f = (float)d;
    memcpy(dst, &f, 4);
    return (double)f;
  }
  default:
    memcpy(dst, &d, 8);
    return d;
  }
}

/* Writes a complex value into a complex dtype; returns nonzero if a finite
 * part became infinite. */
static int write_complex(dlb_dtype dt, void *dst, double re, double im) {
  if (dt == DLB_COMPLEX64) {
    float p[2] = {(float)re, (float)im};
    memcpy(dst, p, sizeof p);
    return (isinf(p[0]) && isfinite(re)) || (isinf(p[1]) && isfinite(im));
  }
  double p[2] = {re, im};
  memcpy(dst, p, sizeof p);
  return 0;
}

/* A real scalar as a double fit for the complex dtype dt. */
static double real_for_complex(dlb_dtype dt, const dlb_scalar *s) {
  switch (s->kind) {
  case DLB_SCALAR_BOOL: return s->v.b ? 1.0 : 0.0;
  case DLB_SCALAR_INT: return dt == DLB_COMPLEX128 ? (double)s->v.i : i64_to_double_odd(s->v.i);
  case DLB_SCALAR_UINT: return dt == DLB_COMPLEX128 ? (double)s->v.u : u64_to_double_odd(s->v.u);
  default: return s->v.f;
  }
}

/* ------------------------------------------------------------------------ */
/* Scalar store / load.                                                     */

static dlb_status store_int(dlb_dtype dtype, void *dst, const dlb_scalar *v, dlb_error *err) {
  const dlb_dtype_info *info = &dlb_dtype_table[dtype];
  const int is_signed = info->kind == DLB_KIND_INT;
  const unsigned bits = info->dl_bits;
  char text[96];
  uint64_t u = 0;
  int ok = 1;
  double f;
  switch (v->kind) {
  case DLB_SCALAR_BOOL: u = v->v.b ? 1 : 0; break;
  case DLB_SCALAR_INT: {
    const int64_t i = v->v.i;
    if (is_signed) {
      if (bits < 64) {
        const int64_t hi = (INT64_C(1) << (bits - 1)) - 1;
        ok = i >= -hi - 1 && i <= hi;
      }
    } else {
      ok = i >= 0 && (bits == 64 || (uint64_t)i < (UINT64_C(1) << bits));
    }
    u = (uint64_t)i;
    break;
  }
  case DLB_SCALAR_UINT:
    u = v->v.u;
    if (is_signed)
      ok = u <= (UINT64_C(1) << (bits - 1)) - 1;
    else
      ok = bits == 64 || u < (UINT64_C(1) << bits);
    break;
  case DLB_SCALAR_COMPLEX:
    if (v->v.c.im != 0.0) {
      fmt_scalar(text, sizeof text, v);
      return dlb_fail(err, DLB_E_VALUE, "%s has a nonzero imaginary part and cannot be stored in %s",
                      text, info->name);
    }
    f = v->v.c.re;
    goto real;
  case DLB_SCALAR_FLOAT:
    f = v->v.f;
  real:
    if (!isfinite(f)) {
      fmt_double(text, sizeof text, f);
      return dlb_fail(err, DLB_E_VALUE, "%s cannot be stored in %s", text, info->name);
    }
    if (f != trunc(f)) {
      fmt_double(text, sizeof text, f);
      return dlb_fail(err, DLB_E_VALUE, "%s is not an integer (%s)", text, info->name);
    }
    if (!float_fits_int(dtype, f)) {
      fmt_double(text, sizeof text, f);
      return dlb_fail(err, DLB_E_VALUE, "%s does not fit in %s", text, info->name);
    }
    u = float_to_int_bits(dtype, f);
    break;
  default: return dlb_fail(err, DLB_E_VALUE, "bad scalar kind %d", (int)v->kind);
  }
  if (!ok) {
    fmt_scalar(text, sizeof text, v);
    return dlb_fail(err, DLB_E_VALUE, "%s does not fit in %s", text, info->name);
  }
  put_u64_bits(dst, info->itemsize, u);
  return DLB_OK;
}

static dlb_status store_bool(void *dst, const dlb_scalar *v, dlb_error *err) {
  int b = -1;
  switch (v->kind) {
  case DLB_SCALAR_BOOL: b = v->v.b ? 1 : 0; break;
  case DLB_SCALAR_INT:
    if (v->v.i == 0 || v->v.i == 1) b = (int)v->v.i;
    break;
  case DLB_SCALAR_UINT:
    if (v->v.u == 0 || v->v.u == 1) b = (int)v->v.u;
    break;
  case DLB_SCALAR_FLOAT:
    if (v->v.f == 0.0 || v->v.f == 1.0) b = v->v.f == 1.0;
    break;
  case DLB_SCALAR_COMPLEX:
    if (v->v.c.im == 0.0 && (v->v.c.re == 0.0 || v->v.c.re == 1.0)) b = v->v.c.re == 1.0;
    break;
  default: break;
  }
  if (b < 0) {
    char text[96];
    fmt_scalar(text, sizeof text, v);
    return dlb_fail(err, DLB_E_VALUE, "%s cannot be stored in bool (only true, false, 0 and 1)",
                    text);
  }
  const uint8_t x = (uint8_t)b;
  memcpy(dst, &x, 1);
  return DLB_OK;
}

dlb_status dlb_scalar_store(dlb_dtype dtype, void *dst, const dlb_scalar *v, dlb_error *err) {
  if ((unsigned)dtype >= DLB_DTYPE_COUNT)
    return dlb_fail(err, DLB_E_DTYPE, "invalid dtype %d", (int)dtype);
  const dlb_dtype_info *info = &dlb_dtype_table[dtype];
  char text[96];
  switch (info->kind) {
  case DLB_KIND_BOOL: return store_bool(dst, v, err);
  case DLB_KIND_INT:
  case DLB_KIND_UINT: return store_int(dtype, dst, v, err);
  case DLB_KIND_FLOAT: {
    dlb_scalar real = *v;
    if (v->kind == DLB_SCALAR_COMPLEX) {
      if (v->v.c.im != 0.0) {
        fmt_scalar(text, sizeof text, v);
        return dlb_fail(err, DLB_E_VALUE,
                        "%s has a nonzero imaginary part and cannot be stored in %s", text,
                        info->name);
      }
      real.kind = DLB_SCALAR_FLOAT;
      real.v.f = v->v.c.re;
    } else if (v->kind > DLB_SCALAR_COMPLEX) {
      return dlb_fail(err, DLB_E_VALUE, "bad scalar kind %d", (int)v->kind);
    }
    /* Round into a temporary first: a failed store leaves dst untouched. */
    unsigned char tmp[8];
    const double got = write_real_float(dtype, tmp, &real);
    if (isinf(got) && !(real.kind == DLB_SCALAR_FLOAT && isinf(real.v.f))) {
      fmt_scalar(text, sizeof text, &real);
      return dlb_fail(err, DLB_E_VALUE, "%s overflows %s", text, info->name);
    }
    memcpy(dst, tmp, info->itemsize);
    return DLB_OK;
  }
  case DLB_KIND_COMPLEX: {
    double re, im = 0.0;
    if (v->kind == DLB_SCALAR_COMPLEX) {
      re = v->v.c.re;
      im = v->v.c.im;
    } else if (v->kind > DLB_SCALAR_COMPLEX) {
      return dlb_fail(err, DLB_E_VALUE, "bad scalar kind %d", (int)v->kind);
    } else {
      re = real_for_complex(dtype, v);
    }
    unsigned char tmp[16];
    if (write_complex(dtype, tmp, re, im)) {
      fmt_scalar(text, sizeof text, v);
      return dlb_fail(err, DLB_E_VALUE, "%s overflows %s", text, info->name);
    }
    memcpy(dst, tmp, info->itemsize);
    return DLB_OK;
  }
  }
  return dlb_fail(err, DLB_E_DTYPE, "invalid dtype %d", (int)dtype);
}

void dlb_scalar_load(dlb_dtype dtype, const void *src, dlb_scalar *out) {
  switch (dtype) {
  case DLB_BOOL: {
    uint8_t x;
    memcpy(&x, src, 1);
    out->kind = DLB_SCALAR_BOOL;
    out->v.b = x != 0;
    return;
  }
#define LOAD_INT(T)          \
  {                          \
    T x;                     \
    memcpy(&x, src, sizeof x); \
    out->kind = DLB_SCALAR_INT; \
    out->v.i = (int64_t)x;   \
    return;                  \
  }
  case DLB_INT8: LOAD_INT(int8_t)
  case DLB_INT16: LOAD_INT(int16_t)
  case DLB_INT32: LOAD_INT(int32_t)
  case DLB_INT64: LOAD_INT(int64_t)
  case DLB_UINT8: LOAD_INT(uint8_t)
  case DLB_UINT16: LOAD_INT(uint16_t)
  case DLB_UINT32: LOAD_INT(uint32_t)
#undef LOAD_INT
  case DLB_UINT64: {
    uint64_t x;
    memcpy(&x, src, 8);
    if (x > (uint64_t)INT64_MAX) {
      out->kind = DLB_SCALAR_UINT;
      out->v.u = x;
    } else {
      out->kind = DLB_SCALAR_INT;
      out->v.i = (int64_t)x;
    }
    return;
  }
  case DLB_FLOAT16:
  case DLB_BFLOAT16: {
    uint16_t h;
    memcpy(&h, src, 2);
    out->kind = DLB_SCALAR_FLOAT;
    out->v.f = dtype == DLB_FLOAT16 ? dlb_float16_to_double(h) : dlb_bfloat16_to_double(h);
    return;
  }
  case DLB_FLOAT32: {
    float f;
    memcpy(&f, src, 4);
    out->kind = DLB_SCALAR_FLOAT;
    out->v.f = (double)f;
    return;
  }
  case DLB_FLOAT64:
    out->kind = DLB_SCALAR_FLOAT;
    memcpy(&out->v.f, src, 8);
    return;
  case DLB_COMPLEX64: {
    float p[2];
    memcpy(p, src, sizeof p);
    out->kind = DLB_SCALAR_COMPLEX;
    out->v.c.re = (double)p[0];
    out->v.c.im = (double)p[1];
    return;
  }
  case DLB_COMPLEX128: {
    double p[2];
    memcpy(p, src, sizeof p);
    out->kind = DLB_SCALAR_COMPLEX;
    out->v.c.re = p[0];
    out->v.c.im = p[1];
    return;
  }
  default:
    out->kind = DLB_SCALAR_INT;
    out->v.i = 0;
    return;
  }
}

/* ------------------------------------------------------------------------ */
/* Casts.                                                                   */

static dlb_status cast_fail(dlb_error *err, double bad, dlb_dtype dst_type) {
  char text[48];
  fmt_double(text, sizeof text, bad);
  return dlb_fail(err, DLB_E_VALUE, "cannot cast %s to %s", text, dlb_dtype_table[dst_type].name);
}

/* One element with cast semantics, from a loaded scalar. */
static dlb_status cast_store(dlb_dtype dt, void *dst, const dlb_scalar *s, dlb_error *err) {
  const dlb_dtype_info *info = &dlb_dtype_table[dt];
  switch (info->kind) {
  case DLB_KIND_BOOL: {
    int b;
    switch (s->kind) {
    case DLB_SCALAR_BOOL: b = s->v.b != 0; break;
    case DLB_SCALAR_INT: b = s->v.i != 0; break;
    case DLB_SCALAR_UINT: b = s->v.u != 0; break;
    case DLB_SCALAR_FLOAT: b = s->v.f != 0.0; break;
    default: b = s->v.c.re != 0.0 || s->v.c.im != 0.0; break;
    }
    const uint8_t x = (uint8_t)b;
    memcpy(dst, &x, 1);
    return DLB_OK;
  }
  case DLB_KIND_INT:
  case DLB_KIND_UINT: {
    uint64_t u;
    switch (s->kind) {
    case DLB_SCALAR_BOOL: u = s->v.b != 0; break;
    case DLB_SCALAR_INT: u = (uint64_t)s->v.i; break;
    case DLB_SCALAR_UINT: u = s->v.u; break;
    default: {
      const double f = s->kind == DLB_SCALAR_FLOAT ? s->v.f : s->v.c.re;
      if (!float_fits_int(dt, f)) return cast_fail(err, f, dt);
      u = float_to_int_bits(dt, f);
      break;
    }
    }
    put_u64_bits(dst, info->itemsize, u);
    return DLB_OK;
  }
  case DLB_KIND_FLOAT: {
    if (s->kind == DLB_SCALAR_COMPLEX) {
      dlb_scalar r;
      r.kind = DLB_SCALAR_FLOAT;
      r.v.f = s->v.c.re;
      write_real_float(dt, dst, &r);
    } else {
      write_real_float(dt, dst, s);
    }
    return DLB_OK;
  }
  default:
    if (s->kind == DLB_SCALAR_COMPLEX)
      write_complex(dt, dst, s->v.c.re, s->v.c.im);
    else
      write_complex(dt, dst, real_for_complex(dt, s), 0.0);
    return DLB_OK;
  }
}

/* A loop over n elements: loads s (type ST) at each source element, runs BODY
 * which sets d (type DT), stores d. BODY may `break` to stop early. Addresses
 * come from k * stride so that no pointer ever leaves the arrays. */
#define CAST_LOOP(ST, DT, BODY)                                     \
  do {                                                              \
    const char *sb_ = (const char *)src;                            \
    char *db_ = (char *)dst;                                        \
    if (src_stride == sizeof(ST) && dst_stride == sizeof(DT)) {     \
      /* contiguous: constant strides, which the compiler vectorises */ \
      for (k = 0; k < n; k++) {                                     \
        ST s;                                                       \
        DT d;                                                       \
        memcpy(&s, sb_ + k * sizeof(ST), sizeof s);                 \
        BODY;                                                       \
        memcpy(db_ + k * sizeof(DT), &d, sizeof d);                 \
      }                                                             \
    } else if (src_stride == 0 && dst_stride == sizeof(DT)) {       \
      /* one value into a contiguous run (fill, broadcast) */       \
      for (k = 0; k < n; k++) {                                     \
        ST s;                                                       \
        DT d;                                                       \
        memcpy(&s, sb_, sizeof s);                                  \
        BODY;                                                       \
        memcpy(db_ + k * sizeof(DT), &d, sizeof d);                 \
      }                                                             \
    } else {                                                        \
      for (k = 0; k < n; k++) {                                     \
        ST s;                                                       \
        DT d;                                                       \
        memcpy(&s, sb_ + (ptrdiff_t)k * src_stride, sizeof s);      \
        BODY;                                                       \
        memcpy(db_ + (ptrdiff_t)k * dst_stride, &d, sizeof d);      \
      }                                                             \
    }                                                               \
  } while (0)

/* CAST_LOOP's body over every other source element into a contiguous run. */
#define EVERY_OTHER_LOOP(ST, DT, BODY)                              \
  do {                                                              \
    const char *sb_ = (const char *)src;                            \
    char *db_ = (char *)dst;                                        \
    for (k = 0; k < n; k++) {                                       \
      ST s;                                                         \
      DT d;                                                         \
      memcpy(&s, sb_ + 2 * k * sizeof(ST), sizeof s);               \
      BODY;                                                         \
      memcpy(db_ + k * sizeof(DT), &d, sizeof d);                   \
    }                                                               \
  } while (0)

/* A same-dtype copy between strided runs, four elements an iteration (the
 * loads of a gather then overlap: twice the speed of one at a time). The
 * offsets are integers, so no pointer is formed past either run's ends. */
#define STRIDED_COPY(T)                                                      \
  do {                                                                      \
    const char *sb_ = (const char *)src;                                    \
    char *db_ = (char *)dst;                                                \
    ptrdiff_t so_ = 0, do_ = 0;                                             \
    T a_, b_, c_, e_;                                                       \
    for (k = 0; k + 4 <= n; k += 4) {                                       \
      memcpy(&a_, sb_ + so_, sizeof(T));                                    \
      memcpy(&b_, sb_ + so_ + src_stride, sizeof(T));                       \
      memcpy(&c_, sb_ + so_ + 2 * src_stride, sizeof(T));                   \
      memcpy(&e_, sb_ + so_ + 3 * src_stride, sizeof(T));                   \
      memcpy(db_ + do_, &a_, sizeof(T));                                    \
      memcpy(db_ + do_ + dst_stride, &b_, sizeof(T));                       \
      memcpy(db_ + do_ + 2 * dst_stride, &c_, sizeof(T));                   \
      memcpy(db_ + do_ + 3 * dst_stride, &e_, sizeof(T));                   \
      so_ += 4 * src_stride;                                                \
      do_ += 4 * dst_stride;                                                \
    }                                                                       \
    for (; k < n; k++, so_ += src_stride, do_ += dst_stride) {              \
      memcpy(&a_, sb_ + so_, sizeof(T));                                    \
      memcpy(db_ + do_, &a_, sizeof(T));                                    \
    }                                                                       \
  } while (0)

/* int -> int: the low bits of the value (wraps modulo 2^bits). */
#define INT_TO_INT(ST)                                               \
  switch (dinfo->itemsize) {                                         \
  case 1: CAST_LOOP(ST, uint8_t, d = (uint8_t)s); break;             \
  case 2: CAST_LOOP(ST, uint16_t, d = (uint16_t)s); break;           \
  case 4: CAST_LOOP(ST, uint32_t, d = (uint32_t)s); break;           \
  default: CAST_LOOP(ST, uint64_t, d = (uint64_t)s); break;          \
  }                                                                  \
  return DLB_OK

/* int -> float32/float64: C's conversion rounds to nearest even. */
#define INT_TO_FLOAT(ST)                                             \
  if (dst_type == DLB_FLOAT64)                                       \
    CAST_LOOP(ST, double, d = (double)s);                            \
  else                                                               \
    CAST_LOOP(ST, float, d = (float)s);                              \
  return DLB_OK

/* float -> int, checked against the target's range without a branch (the
 * loop vectorises; an element out of range stores 0), converting through VIA
 * (int32 where it holds the target: what the vector units convert, then
 * pack; else double). If any element did not fit, a second pass finds the
 * first for the error, with k at it. FITS is exact in the source's type.
 * LOOP is CAST_LOOP or EVERY_OTHER_LOOP. */
#define FLOAT_TO_INT_CASE(DTYPE, DT, ST, FITS, VIA, LOOP)                        \
  case DTYPE: {                                                                  \
    int all_fit_ = 1;                                                            \
    LOOP(ST, DT, {                                                               \
      const int fits_ = (FITS);                                                  \
      all_fit_ &= fits_;                                                         \
      d = (DT)(VIA)(fits_ ? s : (ST)0);                                          \
    });                                                                          \
    if (!all_fit_)                                                               \
      for (k = 0; k < n; k++) {                                                  \
        ST s;                                                                    \
        memcpy(&s, (const char *)src + (ptrdiff_t)k * src_stride, sizeof s);     \
        if (!float_fits_int(DTYPE, (double)s)) {                                 \
          bad = (double)s;                                                       \
          break;                                                                 \
        }                                                                        \
      }                                                                          \
    break;                                                                       \
  }

/* Bounds exclusive at both ends, exact in float and double. */
#define IN_OPEN(LO, HI) ((s > (LO)) & (s < (HI)))
#define FITS_DOUBLE(DTYPE) float_fits_int(DTYPE, (double)s)
/* (-2^31 - 1, 2^31): what truncates into int32. In float, -2^31 - 1 rounds
 * to -2^31 (and no float lies between them), hence the second test. */
#define FITS_INT32(ST) \
  (((s > (ST)-2147483649.0) | (s == (ST)-2147483648.0)) & (s < (ST)2147483648.0))

#define FLOAT_TO_INT(ST, LOOP)                                                        \
  switch (dst_type) {                                                                  \
    FLOAT_TO_INT_CASE(DLB_INT8, int8_t, ST, IN_OPEN(-129, 128), int32_t, LOOP);        \
    FLOAT_TO_INT_CASE(DLB_INT16, int16_t, ST, IN_OPEN(-32769, 32768), int32_t, LOOP);  \
    FLOAT_TO_INT_CASE(DLB_UINT8, uint8_t, ST, IN_OPEN(-1, 256), int32_t, LOOP);        \
    FLOAT_TO_INT_CASE(DLB_UINT16, uint16_t, ST, IN_OPEN(-1, 65536), int32_t, LOOP);    \
    FLOAT_TO_INT_CASE(DLB_INT32, int32_t, ST, FITS_INT32(ST), int32_t, LOOP);          \
    FLOAT_TO_INT_CASE(DLB_INT64, int64_t, ST, FITS_DOUBLE(DLB_INT64), double, LOOP);   \
    FLOAT_TO_INT_CASE(DLB_UINT32, uint32_t, ST, FITS_DOUBLE(DLB_UINT32), double, LOOP); \
    FLOAT_TO_INT_CASE(DLB_UINT64, uint64_t, ST, FITS_DOUBLE(DLB_UINT64), double, LOOP); \
  default:                                                                             \
    return dlb_fail(err, DLB_E_UNSUPPORTED, "no float to integer loop for %s",         \
                    dlb_dtype_table[dst_type].name);                                   \
  }                                                                                    \
  if (k < n) return cast_fail(err, bad, dst_type);                                     \
  return DLB_OK

typedef struct { float re, im; } cast_c64;
typedef struct { double re, im; } cast_c128;

/* A complex64 element as one 64-bit word (re, then im = 0), and its real
 * part back: the float's bits zero-extended (little-endian: re is the low
 * half), which the vectoriser turns into one widening move where it leaves a
 * two-float struct scalar. */
static inline uint64_t c64_bits(float re) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint32_t bits;
  memcpy(&bits, &re, sizeof bits);
  return bits;
#else
  cast_c64 c = {re, 0.0f};
  uint64_t w;
  memcpy(&w, &c, sizeof w);
  return w;
#endif
}

static inline float c64_real(uint64_t w) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint32_t bits = (uint32_t)w; /* re is the low half */
  float re;
  memcpy(&re, &bits, sizeof re);
  return re;
#else
  cast_c64 c;
  memcpy(&c, &w, sizeof c);
  return c.re;
#endif
}

/* Whether a complex64 (as one word) or a complex128 (as two) is nonzero:
 * either part's bits other than the sign (NaN counts, -0 does not). Integer
 * tests vectorise where the float struct's || does not. */
#define C64_NONZERO(w) (((w) & UINT64_C(0x7fffffff7fffffff)) != 0)
#define C128_NONZERO(lo, hi) ((((lo) | (hi)) << 1) != 0)

/* real -> complex128 (two doubles stored apart, which vectorises where a
 * 16-byte struct store does not); CONV reads s of type ST. */
#define TO_C128_LOOP(ST, CONV)                                                    \
  do {                                                                            \
    if (src_stride == sizeof(ST) && dst_stride == 16) {                           \
      const char *sb_ = (const char *)src;                                        \
      char *db_ = (char *)dst;                                                    \
      for (k = 0; k < n; k++) {                                                   \
        ST s;                                                                     \
        double re_, im_ = 0.0;                                                    \
        memcpy(&s, sb_ + k * sizeof(ST), sizeof s);                               \
        re_ = (double)(CONV);                                                     \
        memcpy(db_ + 16 * k, &re_, sizeof re_);                                   \
        memcpy(db_ + 16 * k + 8, &im_, sizeof im_);                               \
      }                                                                           \
    } else {                                                                      \
      CAST_LOOP(ST, cast_c128, d.re = (double)(CONV); d.im = 0.0);                \
    }                                                                             \
  } while (0)

/* The pairs the main switch of dlb_cast does not type (bool, complex,
 * float16 and bfloat16 with integers), as typed loops: each element is
 * converted as cast_store would. DLB_E_VALUE (and *at set to the element)
 * for a float out of an integer's range; DLB_E_UNSUPPORTED (*at = SIZE_MAX)
 * for a pair it leaves to the scalar loop. */
/* n elements of sz bytes between strided runs (a same-dtype cast that is
 * not contiguous, and the gathers and scatters of cast_buffered). Out of
 * line: inside dlb_cast, whose size has nothing to do with this loop, the
 * register allocator spilled its pointers (stride-2 int32 -> uint32 went
 * 0.25 -> 0.33 ms when unrelated cases grew). */
DLB_KERNEL_CLONES static void strided_copy(size_t sz, void *dst, ptrdiff_t dst_stride,
                                           const void *src, ptrdiff_t src_stride, size_t n) {
  typedef struct { uint64_t lo, hi; } bytes16;
  size_t k;
  switch (sz) {
  case 1: STRIDED_COPY(uint8_t); break;
  case 2: STRIDED_COPY(uint16_t); break;
  case 4: STRIDED_COPY(uint32_t); break;
  case 8: STRIDED_COPY(uint64_t); break;
  default: STRIDED_COPY(bytes16); break;
  }
}

DLB_KERNEL_CLONES static dlb_status cast_typed(dlb_dtype dst_type, void *dst, ptrdiff_t dst_stride, dlb_dtype src_type,
                             const void *src, ptrdiff_t src_stride, size_t n, dlb_error *err,
                             size_t *at) {
  size_t k = 0;
  double bad = 0.0;
  const dlb_kind dk = dlb_dtype_table[dst_type].kind, sk = dlb_dtype_table[src_type].kind;
  *at = SIZE_MAX;
  /* x -> bool: x != 0 (NaN is true; complex: either part). */
  if (dk == DLB_KIND_BOOL) {
    switch (src_type) {
    case DLB_BOOL: case DLB_INT8: case DLB_UINT8: CAST_LOOP(uint8_t, uint8_t, d = s != 0); return DLB_OK;
    case DLB_INT16: case DLB_UINT16: CAST_LOOP(uint16_t, uint8_t, d = s != 0); return DLB_OK;
    case DLB_INT32: case DLB_UINT32: CAST_LOOP(uint32_t, uint8_t, d = s != 0); return DLB_OK;
    case DLB_INT64: case DLB_UINT64: CAST_LOOP(uint64_t, uint8_t, d = s != 0); return DLB_OK;
    case DLB_FLOAT16: case DLB_BFLOAT16: CAST_LOOP(uint16_t, uint8_t, d = (s & 0x7fff) != 0); return DLB_OK;
    case DLB_FLOAT32: CAST_LOOP(float, uint8_t, d = s != 0.0f); return DLB_OK;
    case DLB_FLOAT64: CAST_LOOP(double, uint8_t, d = s != 0.0); return DLB_OK;
    case DLB_COMPLEX64: CAST_LOOP(uint64_t, uint8_t, d = C64_NONZERO(s)); return DLB_OK;
    default: CAST_LOOP(cast_c128, uint8_t, uint64_t lo_; uint64_t hi_; memcpy(&lo_, &s.re, 8);
                       memcpy(&hi_, &s.im, 8); d = C128_NONZERO(lo_, hi_));
      return DLB_OK;
    }
  }
  /* bool -> x: 0 or 1. */
  if (sk == DLB_KIND_BOOL) {
    switch (dst_type) {
    case DLB_INT8: case DLB_UINT8: CAST_LOOP(uint8_t, uint8_t, d = s != 0); return DLB_OK;
    case DLB_INT16: case DLB_UINT16: CAST_LOOP(uint8_t, uint16_t, d = s != 0); return DLB_OK;
    case DLB_INT32: case DLB_UINT32: CAST_LOOP(uint8_t, uint32_t, d = s != 0); return DLB_OK;
    case DLB_INT64: case DLB_UINT64: CAST_LOOP(uint8_t, uint64_t, d = s != 0); return DLB_OK;
    case DLB_FLOAT16: CAST_LOOP(uint8_t, uint16_t, d = s ? 0x3c00 : 0); return DLB_OK;
    case DLB_BFLOAT16: CAST_LOOP(uint8_t, uint16_t, d = s ? 0x3f80 : 0); return DLB_OK;
    case DLB_FLOAT32: CAST_LOOP(uint8_t, float, d = s != 0); return DLB_OK;
    case DLB_FLOAT64: CAST_LOOP(uint8_t, double, d = s != 0); return DLB_OK;
    case DLB_COMPLEX64: CAST_LOOP(uint8_t, uint64_t, d = c64_bits(s != 0)); return DLB_OK;
    default: TO_C128_LOOP(uint8_t, s != 0); return DLB_OK;
    }
  }
  /* real -> complex: the real part, imaginary 0 (float16/bfloat16 via double). */
  if ((dk == DLB_KIND_COMPLEX) && sk != DLB_KIND_COMPLEX) {
#define TO_COMPLEX(ST, CONV)                                                              \
  if (dst_type == DLB_COMPLEX64)                                                          \
    CAST_LOOP(ST, uint64_t, d = c64_bits((float)(CONV)));                                 \
  else                                                                                    \
    TO_C128_LOOP(ST, CONV);                                                               \
  return DLB_OK
    switch (src_type) {
    case DLB_INT8: TO_COMPLEX(int8_t, s);
    case DLB_INT16: TO_COMPLEX(int16_t, s);
    case DLB_INT32: TO_COMPLEX(int32_t, s);
    case DLB_INT64: TO_COMPLEX(int64_t, s);
    case DLB_UINT8: TO_COMPLEX(uint8_t, s);
    case DLB_UINT16: TO_COMPLEX(uint16_t, s);
    case DLB_UINT32: TO_COMPLEX(uint32_t, s);
    case DLB_UINT64: TO_COMPLEX(uint64_t, s);
    case DLB_FLOAT16: TO_COMPLEX(uint16_t, dlb_float16_to_double(s));
    case DLB_BFLOAT16: TO_COMPLEX(uint16_t, dlb_bfloat16_to_double(s));
    case DLB_FLOAT32: TO_COMPLEX(float, s);
    default: TO_COMPLEX(double, s);
    }
#undef TO_COMPLEX
  }
  /* complex64 -> float32 and complex128 -> float64: the real part (the
   * contiguous runs have cast_real_parts). */
  if (src_type == DLB_COMPLEX64 && dst_type == DLB_FLOAT32) {
    CAST_LOOP(uint64_t, float, d = c64_real(s));
    return DLB_OK;
  }
  if (src_type == DLB_COMPLEX128 && dst_type == DLB_FLOAT64) {
    CAST_LOOP(cast_c128, double, d = s.re);
    return DLB_OK;
  }
  /* int -> float16/bfloat16: through double, rounded once there (every
   * integer that can round to a finite half is exact in double). */
  if ((sk == DLB_KIND_INT || sk == DLB_KIND_UINT) &&
      (dst_type == DLB_FLOAT16 || dst_type == DLB_BFLOAT16)) {
    uint16_t (*from)(double) = dst_type == DLB_FLOAT16 ? dlb_float16_from_double : dlb_bfloat16_from_double;
    switch (src_type) {
    case DLB_INT8: CAST_LOOP(int8_t, uint16_t, d = from((double)s)); return DLB_OK;
    case DLB_INT16: CAST_LOOP(int16_t, uint16_t, d = from((double)s)); return DLB_OK;
    case DLB_INT32: CAST_LOOP(int32_t, uint16_t, d = from((double)s)); return DLB_OK;
    case DLB_UINT8: CAST_LOOP(uint8_t, uint16_t, d = from((double)s)); return DLB_OK;
    case DLB_UINT16: CAST_LOOP(uint16_t, uint16_t, d = from((double)s)); return DLB_OK;
    case DLB_UINT32: CAST_LOOP(uint32_t, uint16_t, d = from((double)s)); return DLB_OK;
    default: break;
    }
    /* 64-bit to float16: beyond 2^53 (where double rounds) the result is inf
     * either way. To bfloat16 the scalar path rounds those exactly. */
    if (dst_type == DLB_FLOAT16) {
      if (src_type == DLB_INT64)
        CAST_LOOP(int64_t, uint16_t, d = from((double)s));
      else
        CAST_LOOP(uint64_t, uint16_t, d = from((double)s));
      return DLB_OK;
    }
  }
  /* float16/bfloat16 -> int: through double (exact), range-checked. */
  if ((src_type == DLB_FLOAT16 || src_type == DLB_BFLOAT16) && (dk == DLB_KIND_INT || dk == DLB_KIND_UINT)) {
    double (*to)(uint16_t) = src_type == DLB_FLOAT16 ? dlb_float16_to_double : dlb_bfloat16_to_double;
#define HALF_TO_INT(DTYPE, DT)                                                        \
  case DTYPE:                                                                         \
    CAST_LOOP(uint16_t, DT, double v_ = to(s); if (!float_fits_int(DTYPE, v_)) {      \
      bad = v_;                                                                       \
      break;                                                                          \
    } d = (DT)v_);                                                                    \
    break
    switch (dst_type) {
      HALF_TO_INT(DLB_INT8, int8_t);
      HALF_TO_INT(DLB_INT16, int16_t);
      HALF_TO_INT(DLB_INT32, int32_t);
      HALF_TO_INT(DLB_INT64, int64_t);
      HALF_TO_INT(DLB_UINT8, uint8_t);
      HALF_TO_INT(DLB_UINT16, uint16_t);
      HALF_TO_INT(DLB_UINT32, uint32_t);
      HALF_TO_INT(DLB_UINT64, uint64_t);
    default: return DLB_E_UNSUPPORTED;
    }
#undef HALF_TO_INT
    if (k < n) {
      *at = k;
      return cast_fail(err, bad, dst_type);
    }
    return DLB_OK;
  }
  return DLB_E_UNSUPPORTED;
}

static dlb_status cast_buffered(dlb_dtype dst_type, void *dst, ptrdiff_t dst_stride,
                                dlb_dtype src_type, const void *src, ptrdiff_t src_stride, size_t n,
                                dlb_error *err);

/* n contiguous integers, float32 or float64 at src -> float16 at dst, a
 * float32 chunk at a time. Integers reach float32 exactly up to 2^24, and
 * every larger one is past float16's range either way (so inf from both);
 * float64 is rounded to odd first, so that float16 rounds it only once. */
static dlb_status half_from_run(void *dst, dlb_dtype src_type, const void *src, size_t n) {
  _Alignas(64) float chunk_buf[1024];
  const size_t sitem = dlb_dtype_table[src_type].itemsize, chunk = 1024;
  if (src_type == DLB_FLOAT32) {
    dlb_half_from_float_run(dst, src, n);
    return DLB_OK;
  }
  for (size_t pos = 0; pos < n; pos += chunk) {
    const size_t m = n - pos < chunk ? n - pos : chunk;
    const char *s = (const char *)src + pos * sitem;
    if (src_type == DLB_FLOAT64)
      dlb_float_round_odd_run(chunk_buf, s, m);
    else
      dlb_cast(DLB_FLOAT32, chunk_buf, 4, src_type, s, (ptrdiff_t)sitem, m, NULL);
    dlb_half_from_float_run((char *)dst + 2 * pos, chunk_buf, m);
  }
  return DLB_OK;
}

/* n contiguous float16 at src -> dst_type at dst, through float32 (which
 * holds every float16 exactly, so the result is what a direct conversion
 * gives, range errors included). */
static dlb_status half_to_run(dlb_dtype dst_type, void *dst, const void *src, size_t n,
                              dlb_error *err) {
  _Alignas(64) float chunk_buf[1024];
  const size_t chunk = 1024, ditem = dlb_dtype_table[dst_type].itemsize;
  if (dst_type == DLB_FLOAT32) {
    dlb_half_to_float_run(dst, src, n);
    return DLB_OK;
  }
  for (size_t pos = 0; pos < n; pos += chunk) {
    const size_t m = n - pos < chunk ? n - pos : chunk;
    dlb_status st;
    dlb_half_to_float_run(chunk_buf, (const char *)src + 2 * pos, m);
    st = dlb_cast(dst_type, (char *)dst + ditem * pos, (ptrdiff_t)ditem, DLB_FLOAT32, chunk_buf, 4,
                  m, err);
    if (st != DLB_OK) return st;
  }
  return DLB_OK;
}

/* n contiguous complex at src -> their real parts as dst_type (an integer,
 * float32 or float64) at dst, contiguous: every other float of the
 * complex's type, read in place. Out of its own function so that dlb_cast,
 * called once a chunk by the buffered casts, stays small. */
DLB_KERNEL_CLONES static dlb_status cast_real_parts(dlb_dtype dst_type, void *dst, dlb_dtype src_type,
                                                    const void *src, size_t n, dlb_error *err) {
  size_t k = 0;
  double bad = 0.0;
  if (dst_type == DLB_FLOAT32 && src_type == DLB_COMPLEX128) {
    EVERY_OTHER_LOOP(double, float, d = (float)s);
    return DLB_OK;
  }
  if (dst_type == DLB_FLOAT64 && src_type == DLB_COMPLEX64) {
    EVERY_OTHER_LOOP(float, double, d = (double)s);
    return DLB_OK;
  }
  if (dst_type == DLB_FLOAT64) { /* complex128 -> float64 */
    EVERY_OTHER_LOOP(double, double, d = s);
    return DLB_OK;
  }
  if (dst_type == DLB_FLOAT32) { /* complex64 -> float32 */
    EVERY_OTHER_LOOP(float, float, d = s);
    return DLB_OK;
  }
  {
    const ptrdiff_t src_stride = (ptrdiff_t)dlb_dtype_table[src_type].itemsize; /* for the error pass */
    if (src_type == DLB_COMPLEX128) {
      FLOAT_TO_INT(double, EVERY_OTHER_LOOP);
    } else {
      FLOAT_TO_INT(float, EVERY_OTHER_LOOP);
    }
  }
}

DLB_KERNEL_CLONES dlb_status dlb_cast(dlb_dtype dst_type, void *dst, ptrdiff_t dst_stride, dlb_dtype src_type,
                    const void *src, ptrdiff_t src_stride, size_t n, dlb_error *err) {
  if ((unsigned)dst_type >= DLB_DTYPE_COUNT || (unsigned)src_type >= DLB_DTYPE_COUNT)
    return dlb_fail(err, DLB_E_DTYPE, "invalid dtype in cast");
  if (n == 0) return DLB_OK;
  const dlb_dtype_info *dinfo = &dlb_dtype_table[dst_type];
  const dlb_dtype_info *sinfo = &dlb_dtype_table[src_type];
  size_t k = 0;
  double bad = 0.0;

  /* Same dtype: bytes. */
  if (dst_type == src_type) {
    const size_t sz = dinfo->itemsize;
    if (src_stride == (ptrdiff_t)sz && dst_stride == (ptrdiff_t)sz) {
      memmove(dst, src, n * sz);
      return DLB_OK;
    }
    typedef struct { uint64_t lo, hi; } bytes16;
    if (src_stride == 0) { /* one value repeated (fill): the vectorised loop */
      switch (sz) {
      case 1: CAST_LOOP(uint8_t, uint8_t, d = s); break;
      case 2: CAST_LOOP(uint16_t, uint16_t, d = s); break;
      case 4: CAST_LOOP(uint32_t, uint32_t, d = s); break;
      case 8: CAST_LOOP(uint64_t, uint64_t, d = s); break;
      default: CAST_LOOP(bytes16, bytes16, d = s); break;
      }
      return DLB_OK;
    }
    strided_copy(sz, dst, dst_stride, src, src_stride, n);
    return DLB_OK;
  }

  /* Strided complex -> real (but bool, which reads both parts): the real
   * parts are a strided run of the complex's own float type, read in place. */
  if (sinfo->kind == DLB_KIND_COMPLEX && dinfo->kind != DLB_KIND_COMPLEX &&
      dinfo->kind != DLB_KIND_BOOL && src_stride != (ptrdiff_t)sinfo->itemsize)
    return dlb_cast(dst_type, dst, dst_stride, src_type == DLB_COMPLEX64 ? DLB_FLOAT32 : DLB_FLOAT64,
                    src, src_stride, n, err);

  /* Contiguous complex -> integer, float32 or float64: the real parts read
   * in place, in one pass. */
  if (sinfo->kind == DLB_KIND_COMPLEX && src_stride == (ptrdiff_t)sinfo->itemsize &&
      dst_stride == (ptrdiff_t)dinfo->itemsize && dinfo->kind != DLB_KIND_BOOL &&
      dinfo->kind != DLB_KIND_COMPLEX && dst_type != DLB_FLOAT16 && dst_type != DLB_BFLOAT16)
    return cast_real_parts(dst_type, dst, src_type, src, n, err);

  /* Strided runs of a cast: gathered into contiguous chunks (a plain copy),
   * cast there by the contiguous loops, scattered back (NumPy's buffering). */
  if (n > 16 && (src_stride != (ptrdiff_t)sinfo->itemsize || dst_stride != (ptrdiff_t)dinfo->itemsize) &&
      !(sinfo->kind == DLB_KIND_COMPLEX &&
        (dinfo->kind == DLB_KIND_COMPLEX || dinfo->kind == DLB_KIND_BOOL)))
    return cast_buffered(dst_type, dst, dst_stride, src_type, src, src_stride, n, err);

  const int s_int = sinfo->kind == DLB_KIND_INT || sinfo->kind == DLB_KIND_UINT;
  const int d_int = dinfo->kind == DLB_KIND_INT || dinfo->kind == DLB_KIND_UINT;

  /* float16 from and to the other types (bfloat16 and bool aside), contiguous:
   * through float32 runs. */
  const int contiguous = src_stride == (ptrdiff_t)sinfo->itemsize && dst_stride == (ptrdiff_t)dinfo->itemsize;
  if (contiguous && dst_type == DLB_FLOAT16 &&
      (s_int || src_type == DLB_FLOAT32 || src_type == DLB_FLOAT64))
    return half_from_run(dst, src_type, src, n);
  if (contiguous && src_type == DLB_FLOAT16 && dst_type != DLB_BFLOAT16 &&
      dinfo->kind != DLB_KIND_BOOL)
    return half_to_run(dst_type, dst, src, n, err);

  /* Integer sources. */
  if (s_int && (d_int || dst_type == DLB_FLOAT64 || dst_type == DLB_FLOAT32)) {
    if (d_int) {
      switch (src_type) {
      case DLB_INT8: INT_TO_INT(int8_t);
      case DLB_INT16: INT_TO_INT(int16_t);
      case DLB_INT32: INT_TO_INT(int32_t);
      case DLB_INT64: INT_TO_INT(int64_t);
      case DLB_UINT8: INT_TO_INT(uint8_t);
      case DLB_UINT16: INT_TO_INT(uint16_t);
      case DLB_UINT32: INT_TO_INT(uint32_t);
      default: INT_TO_INT(uint64_t);
      }
    }
    switch (src_type) {
    case DLB_INT8: INT_TO_FLOAT(int8_t);
    case DLB_INT16: INT_TO_FLOAT(int16_t);
    case DLB_INT32: INT_TO_FLOAT(int32_t);
    case DLB_INT64: INT_TO_FLOAT(int64_t);
    case DLB_UINT8: INT_TO_FLOAT(uint8_t);
    case DLB_UINT16: INT_TO_FLOAT(uint16_t);
    case DLB_UINT32: INT_TO_FLOAT(uint32_t);
    default: INT_TO_FLOAT(uint64_t);
    }
  }

  /* float32/float64 sources. */
  if (src_type == DLB_FLOAT64 || src_type == DLB_FLOAT32) {
    if (d_int) {
      if (src_type == DLB_FLOAT64) {
        FLOAT_TO_INT(double, CAST_LOOP);
      } else {
        FLOAT_TO_INT(float, CAST_LOOP);
      }
    }
    if (src_type == DLB_FLOAT64 && dst_type == DLB_FLOAT32) {
      CAST_LOOP(double, float, d = (float)s);
      return DLB_OK;
    }
    if (src_type == DLB_FLOAT32 && dst_type == DLB_FLOAT64) {
      CAST_LOOP(float, double, d = (double)s);
      return DLB_OK;
    }
  }

  /* float -> float (every float widens exactly to double, then rounds once). */
  if (sinfo->kind == DLB_KIND_FLOAT && dinfo->kind == DLB_KIND_FLOAT) {
    switch (src_type) {
    case DLB_FLOAT16:
      if (dst_type == DLB_BFLOAT16) {
        CAST_LOOP(uint16_t, uint16_t, d = dlb_bfloat16_from_double(dlb_float16_to_double(s)));
      } else if (dst_type == DLB_FLOAT32) {
        CAST_LOOP(uint16_t, float, d = (float)dlb_float16_to_double(s));
      } else {
        CAST_LOOP(uint16_t, double, d = dlb_float16_to_double(s));
      }
      return DLB_OK;
    case DLB_BFLOAT16:
      if (dst_type == DLB_FLOAT16) {
        CAST_LOOP(uint16_t, uint16_t, d = dlb_float16_from_double(dlb_bfloat16_to_double(s)));
      } else if (dst_type == DLB_FLOAT32) {
        CAST_LOOP(uint16_t, float, d = (float)dlb_bfloat16_to_double(s));
      } else {
        CAST_LOOP(uint16_t, double, d = dlb_bfloat16_to_double(s));
      }
      return DLB_OK;
    case DLB_FLOAT32:
      if (dst_type == DLB_FLOAT16)
        CAST_LOOP(float, uint16_t, d = dlb_float16_from_double((double)s));
      else
        CAST_LOOP(float, uint16_t, d = dlb_bfloat16_from_double((double)s));
      return DLB_OK;
    default:
      if (dst_type == DLB_FLOAT16)
        CAST_LOOP(double, uint16_t, d = dlb_float16_from_double(s));
      else
        CAST_LOOP(double, uint16_t, d = dlb_bfloat16_from_double(s));
      return DLB_OK;
    }
  }

  /* complex -> complex. Every other element (a[::2] into a new array) has
   * a loop of its own: a constant stride vectorises, a variable one does not. */
  if (src_type == DLB_COMPLEX128 && dst_type == DLB_COMPLEX64) {
    if (src_stride == 2 * 16 && dst_stride == 8)
      EVERY_OTHER_LOOP(cast_c128, cast_c64, d.re = (float)s.re; d.im = (float)s.im);
    else
      CAST_LOOP(cast_c128, cast_c64, d.re = (float)s.re; d.im = (float)s.im);
    return DLB_OK;
  }
  if (src_type == DLB_COMPLEX64 && dst_type == DLB_COMPLEX128) {
    if (src_stride == 2 * 8 && dst_stride == 16)
      EVERY_OTHER_LOOP(cast_c64, cast_c128, d.re = (double)s.re; d.im = (double)s.im);
    else
      CAST_LOOP(cast_c64, cast_c128, d.re = (double)s.re; d.im = (double)s.im);
    return DLB_OK;
  }

  if (cast_typed(dst_type, dst, dst_stride, src_type, src, src_stride, n, err, &k) == DLB_OK)
    return DLB_OK;
  if (k < n && k != SIZE_MAX) return DLB_E_VALUE; /* cast_typed reported it */

  /* complex -> any other real: its real part (exact in the complex's own
   * float type), then that float's typed loop, a chunk at a time. */
  if (sinfo->kind == DLB_KIND_COMPLEX && dinfo->kind != DLB_KIND_COMPLEX) {
    const dlb_dtype mid = src_type == DLB_COMPLEX64 ? DLB_FLOAT32 : DLB_FLOAT64;
    const size_t mid_item = dlb_dtype_table[mid].itemsize;
    double chunk_buf[512];
    const size_t chunk = sizeof chunk_buf / mid_item;
    for (size_t pos = 0; pos < n; pos += chunk) {
      const size_t m = n - pos < chunk ? n - pos : chunk;
      dlb_status st = dlb_cast(mid, chunk_buf, (ptrdiff_t)mid_item, src_type,
                               (const char *)src + (ptrdiff_t)pos * src_stride, src_stride, m, err);
      if (st == DLB_OK)
        st = dlb_cast(dst_type, (char *)dst + (ptrdiff_t)pos * dst_stride, dst_stride, mid, chunk_buf,
                      (ptrdiff_t)mid_item, m, err);
      if (st != DLB_OK) return st;
    }
    return DLB_OK;
  }

  /* Everything else, one scalar at a time. */
  for (k = 0; k < n; k++) {
    dlb_scalar s;
    dlb_scalar_load(src_type, (const char *)src + (ptrdiff_t)k * src_stride, &s);
    dlb_status st = cast_store(dst_type, (char *)dst + (ptrdiff_t)k * dst_stride, &s, err);
    if (st != DLB_OK) return st;
  }
  return DLB_OK;
}

/* dlb_cast of strided runs through contiguous chunks on the stack. */
static dlb_status cast_buffered(dlb_dtype dst_type, void *dst, ptrdiff_t dst_stride,
                                dlb_dtype src_type, const void *src, ptrdiff_t src_stride, size_t n,
                                dlb_error *err) {
  const size_t sitem = dlb_dtype_table[src_type].itemsize, ditem = dlb_dtype_table[dst_type].itemsize;
  _Alignas(64) unsigned char sbuf[4096], dbuf[4096];
  const size_t chunk = sizeof sbuf / (sitem > ditem ? sitem : ditem);
  for (size_t pos = 0; pos < n; pos += chunk) {
    const size_t m = n - pos < chunk ? n - pos : chunk;
    const char *s = (const char *)src + (ptrdiff_t)pos * src_stride;
    char *d = (char *)dst + (ptrdiff_t)pos * dst_stride;
    char *out = dst_stride == (ptrdiff_t)ditem ? d : (char *)dbuf;
    dlb_status st;
    if (src_stride != (ptrdiff_t)sitem) {
      if (src_stride == 0) /* broadcast: one value, repeated */
        dlb_cast(src_type, sbuf, (ptrdiff_t)sitem, src_type, s, 0, m, NULL);
      else
        strided_copy(sitem, sbuf, (ptrdiff_t)sitem, s, src_stride, m);
      s = (const char *)sbuf;
    }
    if ((st = dlb_cast(dst_type, out, (ptrdiff_t)ditem, src_type, s, (ptrdiff_t)sitem, m, err)) != DLB_OK)
      return st;
    if (out != d) strided_copy(ditem, d, dst_stride, dbuf, (ptrdiff_t)ditem, m);
  }
  return DLB_OK;
}
