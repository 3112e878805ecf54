/* dtype.c -- the dtype table, float16/bfloat16 rounding, and scalar store,
 * load and cast (the cast loops are the cpu backend's: backends/cpu/casts.c). */
#include "dtype.h"

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

/* Indexed by DLDataType.code, then log2(bits / 8); -1 where none exists. */
const signed char dlb_dtype_by_dl[7][5] = {
    /* Int      */ {DLB_INT8, DLB_INT16, DLB_INT32, DLB_INT64, -1},
    /* UInt     */ {DLB_UINT8, DLB_UINT16, DLB_UINT32, DLB_UINT64, -1},
    /* Float    */ {-1, DLB_FLOAT16, DLB_FLOAT32, DLB_FLOAT64, -1},
    /* Opaque   */ {-1, -1, -1, -1, -1},
    /* Bfloat   */ {-1, DLB_BFLOAT16, -1, -1, -1},
    /* Complex  */ {-1, -1, -1, DLB_COMPLEX64, DLB_COMPLEX128},
    /* Bool     */ {DLB_BOOL, -1, -1, -1, -1},
};

int dlb_dtype_from_dl(DLDataType type, dlb_dtype *out) {
  const signed char(*by_code)[5] = dlb_dtype_by_dl;
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
  if (e == 31) bits = sign | (UINT64_C(0x7ff) << 52) | (m << 42) | (m ? UINT64_C(1) << 51 : 0);
  else bits = sign | ((uint64_t)(e - 15 + 1023) << 52) | (m << 42);
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
    default: memcpy(dst, &u, 8); break;
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
    case DLB_SCALAR_INT:
      d = dt == DLB_FLOAT64 ? (double)s->v.i : dlb_int64_to_double_odd(s->v.i);
      break;
    case DLB_SCALAR_UINT:
      d = dt == DLB_FLOAT64 ? (double)s->v.u : dlb_uint64_to_double_odd(s->v.u);
      break;
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
    default: memcpy(dst, &d, 8); return d;
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
    case DLB_SCALAR_INT:
      return dt == DLB_COMPLEX128 ? (double)s->v.i : dlb_int64_to_double_odd(s->v.i);
    case DLB_SCALAR_UINT:
      return dt == DLB_COMPLEX128 ? (double)s->v.u : dlb_uint64_to_double_odd(s->v.u);
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
      if (is_signed) ok = u <= (UINT64_C(1) << (bits - 1)) - 1;
      else ok = bits == 64 || u < (UINT64_C(1) << bits);
      break;
    case DLB_SCALAR_COMPLEX:
      if (v->v.c.im != 0.0) {
        fmt_scalar(text, sizeof text, v);
        return dlb_fail(err, DLB_E_VALUE,
                        "%s has a nonzero imaginary part and cannot be stored in %s", text,
                        info->name);
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
#define LOAD_INT(T)                                                                                \
  {                                                                                                \
    T x;                                                                                           \
    memcpy(&x, src, sizeof x);                                                                     \
    out->kind = DLB_SCALAR_INT;                                                                    \
    out->v.i = (int64_t)x;                                                                         \
    return;                                                                                        \
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
/* Scalar cast (the cast loops' reference, and their error messages).      */

static dlb_status cast_fail(dlb_error *err, double bad, dlb_dtype dst_type) {
  char text[48];
  fmt_double(text, sizeof text, bad);
  return dlb_fail(err, DLB_E_VALUE, "cannot cast %s to %s", text, dlb_dtype_table[dst_type].name);
}

dlb_status dlb_scalar_cast(dlb_dtype dt, void *dst, const dlb_scalar *s, dlb_error *err) {
  if ((unsigned)dt >= DLB_DTYPE_COUNT)
    return dlb_fail(err, DLB_E_DTYPE, "invalid dtype %d", (int)dt);
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
      if (s->kind == DLB_SCALAR_COMPLEX) write_complex(dt, dst, s->v.c.re, s->v.c.im);
      else write_complex(dt, dst, real_for_complex(dt, s), 0.0);
      return DLB_OK;
  }
}
