/* discrete.c -- NumPy's Poisson and binomial samplers (see distributions.h),
 * ports of random_poisson (multiplication below lam 10, Hoermann's PTRS
 * from 10 on), random_loggam, and random_binomial (inversion while
 * min(p, 1 - p) * n <= 30, else Kachitvichyanukul and Schmeiser's BTPE) of
 * numpy/random/src/distributions/distributions.c (NumPy 1.24.2), every
 * expression in NumPy's order and precision. NumPy's C has two kinds of
 * undefined behaviour here that x86-64 (where NumPy's numbers come from)
 * defines: a double outside int64's range cast to int64 gives INT64_MIN,
 * and int64 sums wrap; i64_of and wrap_add spell those out. */
#include <math.h>
#include "distributions.h"

/* (int64_t)floor-ed double as x86-64's cvttsd2si: INT64_MIN for NaN and
 * for values outside [-2^63, 2^63). */
static inline int64_t i64_of(double v) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return INT64_MIN;
  return (int64_t)v;
}

/* a + b in int64, wrapping as two's complement. */
static inline int64_t wrap_add(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* NumPy's random_loggam: log(gamma(x)) by SPECFUN's series (x > 0). */
static double loggam(double x) {
  static const double a[10] = {
      8.333333333333333e-02, -2.777777777777778e-03, 7.936507936507937e-04, -5.952380952380952e-04,
      8.417508417508418e-04, -1.917526917526918e-03, 6.410256410256410e-03, -2.955065359477124e-02,
      1.796443723688307e-01, -1.39243221690590e+00};
  double x0, x2, lg2pi, gl, gl0;
  int64_t k, n;
  if ((x == 1.0) || (x == 2.0)) return 0.0;
  n = x < 7.0 ? (int64_t)(7 - x) : 0;
  x0 = x + (double)n;
  x2 = (1.0 / x0) * (1.0 / x0);
  lg2pi = 1.8378770664093453e+00; /* log(2 * M_PI) */
  gl0 = a[9];
  for (k = 8; k >= 0; k--) {
    gl0 *= x2;
    gl0 += a[k];
  }
  gl = gl0 / x0 + 0.5 * lg2pi + (x0 - 0.5) * log(x0) - x0;
  if (x < 7.0) {
    for (k = 1; k <= n; k++) {
      gl -= log(x0 - 1.0);
      x0 -= 1.0;
    }
  }
  return gl;
}

/* NumPy's random_poisson_mult (0 < lam < 10): uniforms multiplied until
 * their product falls to exp(-lam) or below. */
static int64_t poisson_mult(dlb_pcg64 *g, double enlam) {
  int64_t X = 0;
  double prod = 1.0;
  for (;;) {
    prod *= dlb_pcg64_next_double(g);
    if (prod > enlam) X += 1;
    else return X;
  }
}

/* The constants of NumPy's random_poisson_ptrs for one lam. */
typedef struct ptrs {
  double lam, slam, loglam, a, b, invalpha, vr;
} ptrs;

static ptrs ptrs_of(double lam) {
  ptrs c;
  c.lam = lam;
  c.slam = sqrt(lam);
  c.loglam = log(lam);
  c.b = 0.931 + 2.53 * c.slam;
  c.a = -0.059 + 0.02483 * c.b;
  c.invalpha = 1.1239 + 1.1328 / (c.b - 3.4);
  c.vr = 0.9277 - 3.6224 / (c.b - 2);
  return c;
}

/* NumPy's random_poisson_ptrs (lam >= 10): transformed rejection, two
 * uniforms a try, accepted over 90% of the time. */
static int64_t poisson_ptrs(dlb_pcg64 *g, const ptrs *c) {
  for (;;) {
    double U = dlb_pcg64_next_double(g) - 0.5, V = dlb_pcg64_next_double(g);
    double us = 0.5 - fabs(U);
    int64_t k = i64_of(floor((2 * c->a / us + c->b) * U + c->lam + 0.43));
    if ((us >= 0.07) && (V <= c->vr)) return k;
    if ((k < 0) || ((us < 0.013) && (V > us))) continue;
    /* log(V) == log(0.0) ok here; if U == 0.0 so that us == 0.0, log is
     * ok since it always returns (NumPy's notes) */
    if ((log(V) + log(c->invalpha) - log(c->a / (us * us) + c->b)) <=
        (-c->lam + (double)k * c->loglam - loggam((double)wrap_add(k, 1))))
      return k;
  }
}

void dlb_poisson_fill(dlb_pcg64 *g, double lam, int64_t *out, int64_t n) {
  int64_t i;
  if (lam >= 10) {
    ptrs c = ptrs_of(lam);
    for (i = 0; i < n; i++) out[i] = poisson_ptrs(g, &c);
  } else if (lam == 0) {
    for (i = 0; i < n; i++) out[i] = 0;
  } else {
    double enlam = exp(-lam);
    for (i = 0; i < n; i++) out[i] = poisson_mult(g, enlam);
  }
}

/* --- binomial --- */

/* The constants of one (n, p) (NumPy's binomial_t, which NumPy keeps
 * between calls; they depend on n and p alone, so computing them once per
 * fill gives the same numbers). p here is min(p, 1 - p) as NumPy passes it. */
typedef struct binomial {
  int64_t n, m, bound;
  double p, r, q, fm, p1, xm, xl, xr, c, laml, lamr, p2, p3, p4, qn, np;
} binomial;

static void inversion_init(binomial *b, int64_t n, double p) {
  b->n = n;
  b->p = p;
  b->q = 1.0 - p;
  b->qn = exp((double)n * log(b->q));
  b->np = (double)n * p;
  /* NumPy's MIN(n, np + 10.0 * sqrt(np * q + 1)), compared and cast as double */
  {
    double t = b->np + 10.0 * sqrt(b->np * b->q + 1);
    b->bound = i64_of((double)n < t ? (double)n : t);
  }
}

/* NumPy's random_binomial_inversion. */
static int64_t binomial_inversion(dlb_pcg64 *g, const binomial *b) {
  int64_t X = 0;
  double px = b->qn, U = dlb_pcg64_next_double(g);
  while (U > px) {
    X++;
    if (X > b->bound) {
      X = 0;
      px = b->qn;
      U = dlb_pcg64_next_double(g);
    } else {
      U -= px;
      px = ((double)wrap_add(b->n - X, 1) * b->p * px) / ((double)X * b->q);
    }
  }
  return X;
}

static void btpe_init(binomial *b, int64_t n, double p) {
  double a;
  b->n = n;
  b->p = p;
  b->r = p < 1.0 - p ? p : 1.0 - p; /* MIN(p, 1.0 - p) */
  b->q = 1.0 - b->r;
  b->fm = (double)n * b->r + b->r;
  b->m = i64_of(floor(b->fm));
  b->p1 = floor(2.195 * sqrt((double)n * b->r * b->q) - 4.6 * b->q) + 0.5;
  b->xm = (double)b->m + 0.5;
  b->xl = b->xm - b->p1;
  b->xr = b->xm + b->p1;
  b->c = 0.134 + 20.5 / (15.3 + (double)b->m);
  a = (b->fm - b->xl) / (b->fm - b->xl * b->r);
  b->laml = a * (1.0 + a / 2.0);
  a = (b->xr - b->fm) / (b->xr * b->q);
  b->lamr = a * (1.0 + a / 2.0);
  b->p2 = b->p1 * (1.0 + 2.0 * b->c);
  b->p3 = b->p2 + b->c / b->laml;
  b->p4 = b->p3 + b->c / b->lamr;
}

/* Step 52 of BTPE: the squeeze and the final test in log space, for y far
 * from the mode; 1 to accept y. */
static int btpe_accept_far(const binomial *b, int64_t y, int64_t k, double v, double nrq) {
  const int64_t n = b->n, m = b->m;
  const double r = b->r, q = b->q, xm = b->xm;
  double rho, t, A, x1, x2, f1, f2, z, z2, w, w2, kd = (double)k;
  rho = (kd / (nrq)) * ((kd * (kd / 3.0 + 0.625) + 0.16666666666666666) / nrq + 0.5);
  t = (double)(int64_t)(0 - (uint64_t)k * (uint64_t)k) / (2 * nrq); /* NumPy: -k * k in int64 */
  A = log(v);                                                       /* log(0.0) ok here */
  if (A < (t - rho)) return 1;
  if (A > (t + rho)) return 0;
  x1 = (double)wrap_add(y, 1);
  f1 = (double)wrap_add(m, 1);
  z = (double)wrap_add(wrap_add(n, 1), -m);
  w = (double)wrap_add(n - y, 1);
  x2 = x1 * x1;
  f2 = f1 * f1;
  z2 = z * z;
  w2 = w * w;
  return !(A > (xm * log(f1 / x1) + ((double)(n - m) + 0.5) * log(z / w) +
                (double)(y - m) * log(w * r / (x1 * q)) +
                (13680. - (462. - (132. - (99. - 140. / f2) / f2) / f2) / f2) / f1 / 166320. +
                (13680. - (462. - (132. - (99. - 140. / z2) / z2) / z2) / z2) / z / 166320. +
                (13680. - (462. - (132. - (99. - 140. / x2) / x2) / x2) / x2) / x1 / 166320. +
                (13680. - (462. - (132. - (99. - 140. / w2) / w2) / w2) / w2) / w / 166320.));
}

/* Step 50 of BTPE: y accepted or not by the recursive ratio of
 * probabilities from the mode (y near it), else by step 52. */
static int btpe_accept(const binomial *b, int64_t y, double v) {
  const int64_t m = b->m;
  double nrq = (double)b->n * b->r * b->q, s, a, F;
  int64_t k = y - m < 0 ? -(y - m) : y - m; /* llabs */
  if ((k > 20) && ((double)k < ((nrq) / 2.0 - 1))) return btpe_accept_far(b, y, k, v, nrq);
  s = b->r / b->q;
  a = s * (double)wrap_add(b->n, 1);
  F = 1.0;
  if (m < y) {
    for (int64_t i = m + 1; i <= y; i++) F *= (a / (double)i - s);
  } else if (m > y) {
    for (int64_t i = y + 1; i <= m; i++) F /= (a / (double)i - s);
  }
  return !(v > F);
}

/* NumPy's random_binomial_btpe, its goto steps as one loop: each pass is
 * Step10 (two uniforms) and the region u falls in. NumPy's Step60 (y = n -
 * y for p > 0.5) never applies: random_binomial passes min(p, 1 - p). */
static int64_t binomial_btpe(dlb_pcg64 *g, const binomial *b) {
  for (;;) {
    double u = dlb_pcg64_next_double(g) * b->p4, v = dlb_pcg64_next_double(g), x;
    int64_t y;
    if (!(u > b->p1)) return i64_of(floor(b->xm - b->p1 * v + u)); /* the triangle */
    if (!(u > b->p2)) {                                            /* the parallelograms */
      x = b->xl + (u - b->p1) / b->c;
      v = v * b->c + 1.0 - fabs((double)b->m - x + 0.5) / b->p1;
      if (v > 1.0) continue;
      y = i64_of(floor(x));
    } else if (!(u > b->p3)) { /* the left tail */
      y = i64_of(floor(b->xl + log(v) / b->laml));
      if ((y < 0) || (v == 0.0)) continue; /* NumPy rejects v == 0 after the cast */
      v = v * (u - b->p2) * b->laml;
    } else { /* the right tail */
      y = i64_of(floor(b->xr - log(v) / b->lamr));
      if ((y > b->n) || (v == 0.0)) continue;
      v = v * (u - b->p3) * b->lamr;
    }
    if (btpe_accept(b, y, v)) return y;
  }
}

void dlb_binomial_fill(dlb_pcg64 *g, int64_t n, double p, int64_t *out, int64_t cnt) {
  binomial b;
  int64_t i;
  double pp = p <= 0.5 ? p : 1.0 - p; /* NumPy's q = 1.0 - p for p > 0.5 */
  int flip = !(p <= 0.5);
  if ((n == 0) || (p == 0.0f)) {
    for (i = 0; i < cnt; i++) out[i] = 0;
    return;
  }
  if (pp * (double)n <= 30.0) {
    inversion_init(&b, n, pp);
    for (i = 0; i < cnt; i++) {
      int64_t x = binomial_inversion(g, &b);
      out[i] = flip ? n - x : x;
    }
  } else {
    btpe_init(&b, n, pp);
    for (i = 0; i < cnt; i++) {
      int64_t x = binomial_btpe(g, &b);
      out[i] = flip ? n - x : x;
    }
  }
}
