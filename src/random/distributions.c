/* distributions.c -- NumPy's Generator samplers (see distributions.h).
 *
 * Every expression that decides a value is NumPy's, in its order and
 * precision. The build is ISO C (-std=c11), where GCC fuses no multiply
 * and add into an FMA (NumPy's x86-64 build has none either): a GNU-mode
 * build with FMA enabled could change the last bit of normal(), uniform()
 * and the ziggurat's rare branch. The fast loops only avoid NumPy's
 * function-pointer call per draw. */
#include "distributions.h"
#include <math.h>
#include "../core/work.h"
#include "ziggurat_exp_tables.h"
#include "ziggurat_tables.h"

/* Interleaved lanes of the float64 uniform fill: lane k holds the state of
 * output i + k and jumps LANES outputs at a time (one multiply-add by the
 * jump constants), so that the 128-bit multiplies of neighbouring outputs
 * do not wait on each other. The outputs are the same as one at a time. */
#define LANES 4

/* out[i] = (next64 >> 11) * 2^-53 for n outputs, LANES at a time. */
void dlb_random_fill(dlb_pcg64 *g, double *out, int64_t n) {
  int64_t i = 0;
  if (n >= 4 * LANES) {
    dlb_u128 mult, add, s[LANES], last = g->state;
    dlb_pcg64_jump_constants(LANES, g->inc, &mult, &add);
    s[0] = g->state * DLB_PCG64_MULT + g->inc;
    for (int k = 1; k < LANES; k++) s[k] = s[k - 1] * DLB_PCG64_MULT + g->inc;
    for (; i + LANES <= n; i += LANES) {
      for (int k = 0; k < LANES; k++) {
        uint64_t x = (uint64_t)(s[k] >> 64) ^ (uint64_t)s[k];
        unsigned rot = (unsigned)(s[k] >> 122);
        x = (x >> rot) | (x << ((64 - rot) & 63));
        out[i + k] = (double)(x >> 11) * (1.0 / 9007199254740992.0);
      }
      last = s[LANES - 1]; /* the state of the last output drawn */
      for (int k = 0; k < LANES; k++) s[k] = s[k] * mult + add;
    }
    g->state = last;
  }
  for (; i < n; i++) out[i] = dlb_pcg64_next_double(g);
}

void dlb_random_fill_f(dlb_pcg64 *g, float *out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = dlb_pcg64_next_float(g);
}

void dlb_uniform_fill(dlb_pcg64 *g, double lo, double range, double *out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = lo + range * dlb_pcg64_next_double(g);
}

/* The rare part of the float64 ziggurat (NumPy's code after the first
 * test): the tail beyond r (idx 0) or the wedge test; *again is 1 when
 * the draw is rejected and the caller draws again. */
__attribute__((noinline)) static double normal_slow(dlb_pcg64 *g, int idx, uint64_t rabs, double x,
                                                    int *again) {
  *again = 0;
  if (idx == 0) {
    for (;;) {
      double xx = -DLB_ZIG_NOR_INV_R * log1p(-dlb_pcg64_next_double(g));
      double yy = -log1p(-dlb_pcg64_next_double(g));
      if (yy + yy > xx * xx)
        return ((rabs >> 8) & 0x1) ? -(DLB_ZIG_NOR_R + xx) : DLB_ZIG_NOR_R + xx;
    }
  }
  if (((dlb_zig_fi_double[idx - 1] - dlb_zig_fi_double[idx]) * dlb_pcg64_next_double(g) +
       dlb_zig_fi_double[idx]) < exp(-0.5 * x * x))
    return x;
  *again = 1;
  return 0.0;
}

/* One float64 standard normal (NumPy's random_standard_normal). */
static inline double standard_normal(dlb_pcg64 *g) {
  for (;;) {
    uint64_t r = dlb_pcg64_next64(g);
    int idx = (int)(r & 0xff), again;
    uint64_t rabs;
    double x;
    r >>= 8;
    rabs = (r >> 1) & UINT64_C(0x000fffffffffffff);
    x = (double)rabs * dlb_zig_wi_double[idx];
    if (r & 0x1) x = -x;
    if (rabs < dlb_zig_ki_double[idx]) return x;
    x = normal_slow(g, idx, rabs, x, &again);
    if (!again) return x;
  }
}

void dlb_standard_normal_fill(dlb_pcg64 *g, double *out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = standard_normal(g);
}

void dlb_normal_fill(dlb_pcg64 *g, double loc, double scale, double *out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = loc + scale * standard_normal(g);
}

/* The rare part of the float32 ziggurat, as normal_slow. */
__attribute__((noinline)) static float normal_slow_f(dlb_pcg64 *g, int idx, uint32_t rabs, float x,
                                                     int *again) {
  *again = 0;
  if (idx == 0) {
    for (;;) {
      float xx = -(float)DLB_ZIG_NOR_INV_R * log1pf(-dlb_pcg64_next_float(g));
      float yy = -log1pf(-dlb_pcg64_next_float(g));
      if (yy + yy > xx * xx)
        return ((rabs >> 8) & 0x1) ? -((float)DLB_ZIG_NOR_R + xx) : (float)DLB_ZIG_NOR_R + xx;
    }
  }
  if (((dlb_zig_fi_float[idx - 1] - dlb_zig_fi_float[idx]) * dlb_pcg64_next_float(g) +
       dlb_zig_fi_float[idx]) < exp(-0.5 * x * x))
    return x;
  *again = 1;
  return 0.0f;
}

/* One float32 standard normal (NumPy's random_standard_normal_f). */
static inline float standard_normal_f(dlb_pcg64 *g) {
  for (;;) {
    uint32_t r = dlb_pcg64_next32(g);
    int idx = (int)(r & 0xff), again;
    uint32_t rabs = (r >> 9) & 0x0007fffff;
    float x = (float)rabs * dlb_zig_wi_float[idx];
    if ((r >> 8) & 0x1) x = -x;
    if (rabs < dlb_zig_ki_float[idx]) return x;
    x = normal_slow_f(g, idx, rabs, x, &again);
    if (!again) return x;
  }
}

void dlb_standard_normal_fill_f(dlb_pcg64 *g, float *out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = standard_normal_f(g);
}

/* --- exponential, gamma, beta (NumPy's random_standard_exponential,
 * random_standard_gamma, random_beta) --- */

/* The rare part of the exponential ziggurat (NumPy's
 * standard_exponential_unlikely): the tail beyond r (idx 0) or the wedge
 * test; *again is 1 when the draw is rejected (NumPy then calls
 * random_standard_exponential again: the caller loops). */
__attribute__((noinline)) static double exponential_slow(dlb_pcg64 *g, int idx, double x,
                                                         int *again) {
  *again = 0;
  if (idx == 0) return DLB_ZIG_EXP_R - log1p(-dlb_pcg64_next_double(g));
  if ((dlb_zig_fe_double[idx - 1] - dlb_zig_fe_double[idx]) * dlb_pcg64_next_double(g) +
          dlb_zig_fe_double[idx] <
      exp(-x))
    return x;
  *again = 1;
  return 0.0;
}

/* One standard exponential (NumPy's random_standard_exponential): layer
 * and 53-bit magnitude from one 64-bit draw, its low 3 bits unused. */
static inline double standard_exponential(dlb_pcg64 *g) {
  for (;;) {
    uint64_t ri = dlb_pcg64_next64(g) >> 3;
    int idx = (int)(ri & 0xff), again;
    double x;
    ri >>= 8;
    x = (double)ri * dlb_zig_we_double[idx];
    if (ri < dlb_zig_ke_double[idx]) return x;
    x = exponential_slow(g, idx, x, &again);
    if (!again) return x;
  }
}

void dlb_exponential_fill(dlb_pcg64 *g, double scale, double *out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = scale * standard_exponential(g);
}

/* NumPy's random_standard_gamma for 0 < shape < 1 (Johnk's rejection as
 * NumPy has it): U <= 1 - shape takes U^(1/shape), else the tail. */
static double gamma_small(dlb_pcg64 *g, double shape) {
  for (;;) {
    double U = dlb_pcg64_next_double(g), V = standard_exponential(g), X, Y;
    if (U <= 1.0 - shape) {
      X = pow(U, 1. / shape);
      if (X <= V) return X;
    } else {
      Y = -log((1 - U) / shape);
      X = pow(1.0 - shape + shape * Y, 1. / shape);
      if (X <= (V + Y)) return X;
    }
  }
}

/* NumPy's random_standard_gamma for shape > 1 (and NaN): Marsaglia and
 * Tsang's squeeze on a standard normal; b and c as NumPy computes them. */
static double gamma_large(dlb_pcg64 *g, double b, double c) {
  for (;;) {
    double X, V, U;
    do {
      X = standard_normal(g);
      V = 1.0 + c * X;
    } while (V <= 0.0);
    V = V * V * V;
    U = dlb_pcg64_next_double(g);
    if (U < 1.0 - 0.0331 * (X * X) * (X * X)) return (b * V);
    if (log(U) < 0.5 * X * X + b * (1. - V + log(V))) return (b * V); /* log(0.0) ok here */
  }
}

void dlb_gamma_fill(dlb_pcg64 *g, double shape, double scale, double *out, int64_t n) {
  int64_t i;
  if (shape == 1.0) {
    for (i = 0; i < n; i++) out[i] = scale * standard_exponential(g);
  } else if (shape == 0.0) {
    for (i = 0; i < n; i++) out[i] = scale * 0.0; /* no draw: NumPy's 0.0 times scale */
  } else if (shape < 1.0) {
    for (i = 0; i < n; i++) out[i] = scale * gamma_small(g, shape);
  } else {
    double b = shape - 1. / 3., c = 1. / sqrt(9 * b);
    for (i = 0; i < n; i++) out[i] = scale * gamma_large(g, b, c);
  }
}

/* NumPy's random_standard_gamma(shape), any shape >= 0 (or NaN). */
static double standard_gamma(dlb_pcg64 *g, double shape) {
  if (shape == 1.0) return standard_exponential(g);
  if (shape == 0.0) return 0.0;
  if (shape < 1.0) return gamma_small(g, shape);
  return gamma_large(g, shape - 1. / 3., 1. / sqrt(9 * (shape - 1. / 3.)));
}

/* Johnk's algorithm of NumPy's random_beta (a <= 1 and b <= 1). For tiny
 * a and b nearly every pair is rejected (both powers underflow to 0; below
 * about 1e-18 every one, and NumPy's loop never ends): every 2^16
 * rejections count as that much work of the thread's current call
 * (work.h), so the host's interrupt stops it; the value returned then is
 * NaN, and the call fails (its draws are discarded). */
static double beta_johnk(dlb_pcg64 *g, double a, double b) {
  uint64_t tries = 0;
  for (;;) {
    double U = dlb_pcg64_next_double(g), V = dlb_pcg64_next_double(g);
    double X = pow(U, 1.0 / a), Y = pow(V, 1.0 / b), XpY = X + Y;
    if ((XpY <= 1.0) && (XpY > 0.0)) {
      /* NumPy's log-space branch for X + Y == 0 cannot be reached after
       * XpY > 0 (it is kept there; the value is the same here) */
      return X / XpY;
    }
    if ((++tries & 0xffff) == 0 && dlb_work_tick(dlb_work_current(), DLB_WORK_CHECK_EVERY))
      return NAN;
  }
}

void dlb_beta_fill(dlb_pcg64 *g, double a, double b, double *out, int64_t n) {
  int64_t i;
  if ((a <= 1.0) && (b <= 1.0)) {
    for (i = 0; i < n; i++) out[i] = beta_johnk(g, a, b);
  } else {
    for (i = 0; i < n; i++) {
      double Ga = standard_gamma(g, a), Gb = standard_gamma(g, b);
      out[i] = Ga / (Ga + Gb);
    }
  }
}

/* --- bounded integers (NumPy's Lemire paths) --- */

static inline uint64_t lemire64(dlb_pcg64 *g, uint64_t rng) {
  const uint64_t rng_excl = rng + 1;
  dlb_u128 m = (dlb_u128)dlb_pcg64_next64(g) * rng_excl;
  uint64_t leftover = (uint64_t)m;
  if (leftover < rng_excl) {
    const uint64_t threshold = (UINT64_MAX - rng) % rng_excl;
    while (leftover < threshold) {
      m = (dlb_u128)dlb_pcg64_next64(g) * rng_excl;
      leftover = (uint64_t)m;
    }
  }
  return (uint64_t)(m >> 64);
}

static inline uint32_t lemire32(dlb_pcg64 *g, uint32_t rng) {
  const uint32_t rng_excl = rng + 1;
  uint64_t m = (uint64_t)dlb_pcg64_next32(g) * rng_excl;
  uint32_t leftover = (uint32_t)m;
  if (leftover < rng_excl) {
    const uint32_t threshold = (UINT32_MAX - rng) % rng_excl;
    while (leftover < threshold) {
      m = (uint64_t)dlb_pcg64_next32(g) * rng_excl;
      leftover = (uint32_t)m;
    }
  }
  return (uint32_t)(m >> 32);
}

/* 16 bits from the buffer, refilled from a 32-bit draw every 2 (low first). */
static inline uint16_t buffered16(dlb_pcg64 *g, dlb_bits *b) {
  if (!b->count) {
    b->buf = dlb_pcg64_next32(g);
    b->count = 1;
  } else {
    b->buf >>= 16;
    b->count -= 1;
  }
  return (uint16_t)b->buf;
}

/* 8 bits from the buffer, refilled every 4. */
static inline uint8_t buffered8(dlb_pcg64 *g, dlb_bits *b) {
  if (!b->count) {
    b->buf = dlb_pcg64_next32(g);
    b->count = 3;
  } else {
    b->buf >>= 8;
    b->count -= 1;
  }
  return (uint8_t)b->buf;
}

static inline uint16_t lemire16(dlb_pcg64 *g, uint16_t rng, dlb_bits *b) {
  const uint16_t rng_excl = (uint16_t)(rng + 1);
  uint32_t m = (uint32_t)buffered16(g, b) * rng_excl;
  uint16_t leftover = (uint16_t)m;
  if (leftover < rng_excl) {
    const uint16_t threshold = (uint16_t)((UINT16_MAX - rng) % rng_excl);
    while (leftover < threshold) {
      m = (uint32_t)buffered16(g, b) * rng_excl;
      leftover = (uint16_t)m;
    }
  }
  return (uint16_t)(m >> 16);
}

static inline uint8_t lemire8(dlb_pcg64 *g, uint8_t rng, dlb_bits *b) {
  const uint8_t rng_excl = (uint8_t)(rng + 1);
  uint16_t m = (uint16_t)(buffered8(g, b) * rng_excl);
  uint8_t leftover = (uint8_t)m;
  if (leftover < rng_excl) {
    const uint8_t threshold = (uint8_t)((UINT8_MAX - rng) % rng_excl);
    while (leftover < threshold) {
      m = (uint16_t)(buffered8(g, b) * rng_excl);
      leftover = (uint8_t)m;
    }
  }
  return (uint8_t)(m >> 8);
}

void dlb_bounded64_fill(dlb_pcg64 *g, uint64_t off, uint64_t rng, uint64_t *out, int64_t n) {
  int64_t i;
  if (rng == 0) {
    for (i = 0; i < n; i++) out[i] = off;
  } else if (rng == UINT32_MAX) {
    for (i = 0; i < n; i++) out[i] = off + dlb_pcg64_next32(g);
  } else if (rng < UINT32_MAX) {
    for (i = 0; i < n; i++) out[i] = off + lemire32(g, (uint32_t)rng);
  } else if (rng == UINT64_MAX) {
    for (i = 0; i < n; i++) out[i] = off + dlb_pcg64_next64(g);
  } else {
    for (i = 0; i < n; i++) out[i] = off + lemire64(g, rng);
  }
}

void dlb_bounded32_fill(dlb_pcg64 *g, uint32_t off, uint32_t rng, uint32_t *out, int64_t n) {
  int64_t i;
  if (rng == 0) {
    for (i = 0; i < n; i++) out[i] = off;
  } else if (rng == UINT32_MAX) {
    for (i = 0; i < n; i++) out[i] = off + dlb_pcg64_next32(g);
  } else {
    for (i = 0; i < n; i++) out[i] = off + lemire32(g, rng);
  }
}

void dlb_bounded16_fill(dlb_pcg64 *g, uint16_t off, uint16_t rng, uint16_t *out, int64_t n,
                        dlb_bits *bits) {
  int64_t i;
  if (rng == 0) {
    for (i = 0; i < n; i++) out[i] = off;
  } else if (rng == UINT16_MAX) {
    for (i = 0; i < n; i++) out[i] = (uint16_t)(off + buffered16(g, bits));
  } else {
    for (i = 0; i < n; i++) out[i] = (uint16_t)(off + lemire16(g, rng, bits));
  }
}

void dlb_bounded8_fill(dlb_pcg64 *g, uint8_t off, uint8_t rng, uint8_t *out, int64_t n,
                       dlb_bits *bits) {
  int64_t i;
  if (rng == 0) {
    for (i = 0; i < n; i++) out[i] = off;
  } else if (rng == UINT8_MAX) {
    for (i = 0; i < n; i++) out[i] = (uint8_t)(off + buffered8(g, bits));
  } else {
    for (i = 0; i < n; i++) out[i] = (uint8_t)(off + lemire8(g, rng, bits));
  }
}

/* NumPy's buffered_bounded_bool: one bit a draw, 32 from each 32-bit draw
 * (the offset is used only when the range is 0). */
void dlb_bounded_bool_fill(dlb_pcg64 *g, uint8_t off, uint8_t rng, uint8_t *out, int64_t n,
                           dlb_bits *bits) {
  for (int64_t i = 0; i < n; i++) {
    if (rng == 0) {
      out[i] = off;
      continue;
    }
    if (!bits->count) {
      bits->buf = dlb_pcg64_next32(g);
      bits->count = 31;
    } else {
      bits->buf >>= 1;
      bits->count -= 1;
    }
    out[i] = (bits->buf & 1) != 0;
  }
}

uint64_t dlb_bounded64_one(dlb_pcg64 *g, uint64_t rng) {
  if (rng == 0) return 0;
  if (rng == UINT32_MAX) return dlb_pcg64_next32(g);
  if (rng < UINT32_MAX) return lemire32(g, (uint32_t)rng);
  if (rng == UINT64_MAX) return dlb_pcg64_next64(g);
  return lemire64(g, rng);
}

uint64_t dlb_random_interval(dlb_pcg64 *g, uint64_t max) {
  uint64_t mask = dlb_all_ones_mask(max), value;
  if (max == 0) return 0;
  if (max <= UINT32_MAX) {
    while ((value = (dlb_pcg64_next32(g) & mask)) > max) {
    }
  } else {
    while ((value = (dlb_pcg64_next64(g) & mask)) > max) {
    }
  }
  return value;
}
