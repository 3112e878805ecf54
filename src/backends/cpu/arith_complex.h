/* arith_complex.h -- a template: the operations on the complex type C of
 * real parts R (FABS: their absolute value), as functions of elements:
 * cadd_C, csub_C, cmul_C, cdiv_C, cneg_C, ceq_C, cne_C and cpow_C (through
 * CPOW of the C99 complex type CTYPE). loops_arith.c #defines C, R, FABS,
 * CPOW and CTYPE and includes this file once per complex type; it #undefs
 * them at its end. A file, not a macro, so that a debugger and a profiler
 * see its lines. No include guard. */

#define CMUL ARITH_CAT(cmul_, C)
#define CDIV ARITH_CAT(cdiv_, C)

static inline C ARITH_CAT(cadd_, C)(C a, C b) { return (C){a.re + b.re, a.im + b.im}; }
static inline C ARITH_CAT(csub_, C)(C a, C b) { return (C){a.re - b.re, a.im - b.im}; }
static inline C CMUL(C a, C b) { return (C){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
/* Smith's division, as NumPy's. */
static inline C CDIV(C a, C b) {
  R abs_br = FABS(b.re), abs_bi = FABS(b.im);
  if (abs_br >= abs_bi) {
    if (abs_br == 0 && abs_bi == 0) return (C){a.re / abs_br, a.im / abs_bi};
    R rat = b.im / b.re, scl = (R)1.0 / (b.re + b.im * rat);
    return (C){(a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl};
  } else {
    R rat = b.re / b.im, scl = (R)1.0 / (b.im + b.re * rat);
    return (C){(a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl};
  }
}
static inline C ARITH_CAT(cneg_, C)(C a) { return (C){-a.re, -a.im}; }
static inline dlb_bool8 ARITH_CAT(ceq_, C)(C a, C b) { return a.re == b.re && a.im == b.im; }
static inline dlb_bool8 ARITH_CAT(cne_, C)(C a, C b) { return !(a.re == b.re && a.im == b.im); }

/* Complex power as NumPy's npy_cpow: z ** 0 is 1; 0 ** b is 0 for a real
 * positive b, else nan; integer exponents below 100 in magnitude multiply
 * (exact where the products are); anything else goes to C99's CPOW. A C
 * complex has the layout of two reals (C11 6.2.5), as C does: memcpy
 * converts. */
static inline C ARITH_CAT(cpow_, C)(C a, C b) {
  const C one = {1, 0};
  if (b.re == 0 && b.im == 0) return one;
  if (a.re == 0 && a.im == 0) {
    if (b.re > 0 && b.im == 0) return (C){0, 0};
    return (C){(R)NAN, (R)NAN};
  }
  if (b.im == 0 && b.re > -100 && b.re < 100 && b.re == (R)(int)b.re) {
    int n = (int)b.re;
    C p = a, r = one;
    if (n == 1) return a;
    if (n == 2) return CMUL(a, a);
    if (n == 3) return CMUL(a, CMUL(a, a));
    for (int m = n < 0 ? -n : n;;) {
      if (m & 1) r = CMUL(r, p);
      m >>= 1;
      if (!m) break;
      p = CMUL(p, p);
    }
    return n < 0 ? CDIV(one, r) : r;
  }
  {
    CTYPE x, y, z;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    z = CPOW(x, y);
    memcpy(&a, &z, sizeof a);
    return a;
  }
}

#undef CMUL
#undef CDIV
#undef C
#undef R
#undef FABS
#undef CPOW
#undef CTYPE
