/* distributions.h -- NumPy's Generator samplers on PCG64, bit for bit
 * (numpy/random/src/distributions/distributions.c of NumPy 1.24): each fill
 * writes n values exactly as the same call of np.random.Generator would,
 * drawing the same bits in the same order. A call that NumPy makes as one
 * fill may be split into several fills here (to look at the interrupt
 * between them): the narrow integer fills carry their 32-bit buffer in a
 * dlb_bits that the caller zeroes once per NumPy call. */
#ifndef DLB_RANDOM_DISTRIBUTIONS_H
#define DLB_RANDOM_DISTRIBUTIONS_H

#include <stdint.h>
#include "pcg64.h"

/* random(): [0, 1), 53 bits; the float32 one, 24 bits of a 32-bit draw. */
void dlb_random_fill(dlb_pcg64 *g, double *out, int64_t n);
void dlb_random_fill_f(dlb_pcg64 *g, float *out, int64_t n);
/* uniform(lo, hi): lo + (hi - lo) * random() (range = hi - lo, finite). */
void dlb_uniform_fill(dlb_pcg64 *g, double lo, double range, double *out, int64_t n);
/* standard_normal(): NumPy's 256-layer ziggurat (float64: 52-bit magnitude,
 * sign and layer from one 64-bit draw; float32: from one 32-bit draw). */
void dlb_standard_normal_fill(dlb_pcg64 *g, double *out, int64_t n);
void dlb_standard_normal_fill_f(dlb_pcg64 *g, float *out, int64_t n);
/* normal(loc, scale): loc + scale * standard_normal(). */
void dlb_normal_fill(dlb_pcg64 *g, double loc, double scale, double *out, int64_t n);

/* exponential(scale): scale * NumPy's exponential ziggurat (256 layers;
 * layer and magnitude from one 64-bit draw). */
void dlb_exponential_fill(dlb_pcg64 *g, double scale, double *out, int64_t n);
/* gamma(shape, scale): scale * NumPy's random_standard_gamma (shape 1: the
 * exponential; 0: no draw; below 1: Johnk's rejection; above 1 (and NaN):
 * Marsaglia and Tsang's on the ziggurat normal). shape >= 0 or NaN. */
void dlb_gamma_fill(dlb_pcg64 *g, double shape, double scale, double *out, int64_t n);
/* beta(a, b): Johnk's algorithm when a <= 1 and b <= 1, else
 * Ga / (Ga + Gb) of two standard gammas (NumPy's random_beta). a, b > 0 or
 * NaN. Johnk's loop looks at the current work (work.h) every 2^16
 * rejections: once it must stop, the draw is NaN and the call must fail. */
void dlb_beta_fill(dlb_pcg64 *g, double a, double b, double *out, int64_t n);
/* poisson(lam): NumPy's random_poisson (0: no draw; below 10: products of
 * uniforms; from 10: Hoermann's PTRS). 0 <= lam <= DLB_POISSON_LAM_MAX. */
void dlb_poisson_fill(dlb_pcg64 *g, double lam, int64_t *out, int64_t n);
/* NumPy's POISSON_LAM_MAX: int64's max less 10 of its square roots, as a
 * double (PTRS draws stay inside int64 below it). */
#define DLB_POISSON_LAM_MAX ((double)INT64_MAX - sqrt((double)INT64_MAX) * 10) /* needs math.h */
/* binomial(n, p): NumPy's random_binomial (n == 0 or p == 0: no draw;
 * inversion while min(p, 1 - p) * n <= 30, else BTPE; p > 0.5 draws n
 * less the draw for 1 - p). n >= 0, 0 <= p <= 1. */
void dlb_binomial_fill(dlb_pcg64 *g, int64_t n, double p, int64_t *out, int64_t cnt);

/* The 32-bit buffer of the 8- and 16-bit (and bool) integer draws. */
typedef struct dlb_bits {
  int count;
  uint32_t buf;
} dlb_bits;

/* integers(): uniform on the closed range [off, off + rng] (wrapping), by
 * Lemire's method; the 64-bit fill takes the 32-bit path when rng fits in
 * 32 bits, as NumPy's random_bounded_uint64_fill does. */
void dlb_bounded64_fill(dlb_pcg64 *g, uint64_t off, uint64_t rng, uint64_t *out, int64_t n);
void dlb_bounded32_fill(dlb_pcg64 *g, uint32_t off, uint32_t rng, uint32_t *out, int64_t n);
void dlb_bounded16_fill(dlb_pcg64 *g, uint16_t off, uint16_t rng, uint16_t *out, int64_t n,
                        dlb_bits *bits);
void dlb_bounded8_fill(dlb_pcg64 *g, uint8_t off, uint8_t rng, uint8_t *out, int64_t n,
                       dlb_bits *bits);
void dlb_bounded_bool_fill(dlb_pcg64 *g, uint8_t off, uint8_t rng, uint8_t *out, int64_t n,
                           dlb_bits *bits);

/* NumPy's random_bounded_uint64(g, 0, rng, 0, 0): one draw uniform on
 * [0, rng] by Lemire's method (32-bit while rng fits), as choice's Floyd
 * sampling and its shuffles draw. */
uint64_t dlb_bounded64_one(dlb_pcg64 *g, uint64_t rng);

/* NumPy's random_interval: uniform on [0, max] by masked rejection, 32-bit
 * draws while max fits in 32 bits (shuffle and permutation draw with it). */
uint64_t dlb_random_interval(dlb_pcg64 *g, uint64_t max);

/* The smallest all-ones mask (2^k - 1) at or above x. */
static inline uint64_t dlb_all_ones_mask(uint64_t x) {
  x |= x >> 1;
  x |= x >> 2;
  x |= x >> 4;
  x |= x >> 8;
  x |= x >> 16;
  x |= x >> 32;
  return x;
}

#endif
