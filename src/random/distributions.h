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

/* NumPy's random_interval: uniform on [0, max] by masked rejection, 32-bit
 * draws while max fits in 32 bits (shuffle and permutation draw with it). */
uint64_t dlb_random_interval(dlb_pcg64 *g, uint64_t max);

#endif
