/* generator.h -- NumPy's Generator over arrays: the loops behind dl.random
 * (src/lua/random.c is their binding). A draw fills an array with one of
 * the samplers of distributions.h; a shuffle reorders an array along its
 * first dim with NumPy's random_interval, bit for bit.
 *
 * Both are bounded work (work.h) over the elements they visit: refused
 * before anything is drawn when the work limit does not allow them or the
 * interrupt is raised, stopped between chunks of DLB_WORK_CHECK_EVERY
 * elements once the interrupt is seen. A call that fails so leaves the
 * generator as it was before the call (it consumed nothing, its kept half
 * of a 32-bit draw included); the array may hold a partial result. No Lua
 * here. */
#ifndef DLB_RANDOM_GENERATOR_H
#define DLB_RANDOM_GENERATOR_H

#include "../core/array.h"
#include "../core/budget.h"
#include "distributions.h"
#include "pcg64.h"

typedef enum dlb_draw_kind {
  DLB_DRAW_RANDOM,   /* random(): float64 or float32 */
  DLB_DRAW_NORMAL,   /* standard_normal() (float64 or float32), or normal(a, b) */
  DLB_DRAW_UNIFORM,  /* uniform: a + b * random(), float64 */
  DLB_DRAW_INTEGERS, /* integers on the closed range [off, off + rng]: an integer dtype or bool */
  DLB_DRAW_EXPONENTIAL, /* a * standard exponential, float64 */
  DLB_DRAW_GAMMA,       /* gamma of shape a, scale b, float64 */
  DLB_DRAW_BETA,        /* beta(a, b), float64 */
  DLB_DRAW_POISSON,     /* poisson(a), int64 */
  DLB_DRAW_BINOMIAL     /* binomial(count, a), int64 */
} dlb_draw_kind;

/* What one NumPy call draws. Zero-initialised, then kind, dtype and the
 * parameters of the kind: bits must start zeroed for each NumPy call. */
typedef struct dlb_draw {
  dlb_draw_kind kind;
  dlb_dtype dtype;
  int standard;      /* DLB_DRAW_NORMAL: standard_normal (no a + b *) */
  double a, b;       /* normal: loc, scale; uniform: low, high - low; the others' parameters */
  int64_t count;     /* binomial: the number of trials n */
  uint64_t off, rng; /* integers */
  dlb_bits bits;     /* the 32-bit buffer of the 8- and 16-bit integer draws */
} dlb_draw;

/* Writes the next n draws of d at out (n elements of d->dtype): one chunk,
 * unbounded (a scalar draw, or a part of dlb_draw_into). */
void dlb_draw_fill(dlb_pcg64 *g, dlb_draw *d, void *out, int64_t n);

/* One draw of d at out, as bounded work of op (NumPy's scalar draw): a
 * draw whose rejections never end (beta's, see distributions.h) stops at
 * the interrupt. A failed draw leaves g as it was. */
dlb_status dlb_draw_one(dlb_pcg64 *g, dlb_draw *d, void *out, dlb_budget *budget, const char *op,
                        dlb_error *err);

/* Fills the contiguous host array a (of d->dtype, all of it) with draws of
 * d, as bounded work of op in budget's state (NULL: unbounded). */
dlb_status dlb_draw_into(dlb_pcg64 *g, dlb_draw *d, const dlb_array *a, dlb_budget *budget,
                         const char *op, dlb_error *err);

/* NumPy's Generator.shuffle of a along dim 0 (a: host memory, writable,
 * ndim >= 1, any strides): for i = n-1 .. 1, row i is swapped with row
 * random_interval(i). Size 0 is a no-op. Bounded as dlb_draw_into. */
dlb_status dlb_shuffle(dlb_pcg64 *g, const dlb_array *a, dlb_budget *budget, const char *op,
                       dlb_error *err);

#endif
